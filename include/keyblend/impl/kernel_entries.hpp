// keyblend — every kernel of one instruction set (KEYBLEND_ISA), as one table of entry points:
// what the compiled kernels choose between (impl/kernels_implementation.hpp). Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_KERNEL_ENTRIES_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_KERNEL_ENTRIES_HPP)
#undef KEYBLEND_PASS_GUARD_KERNEL_ENTRIES_HPP
#else
#define KEYBLEND_PASS_GUARD_KERNEL_ENTRIES_HPP
#endif

#include "../keyblend.hpp"
#include "clip_kernels.hpp"
#include "blend_kernels.hpp"
#include "pose_kernels.hpp"
#include "morph_kernels.hpp"
#include "ik_kernels.hpp"
#include "kernel_table.hpp"
#include "skin/entry.hpp"

#include <cstddef>
#include <cstdint>

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {

struct kernel_entries {
    static constexpr simd_isa isa = compiled_isa;
    static status sample(const sampling_job& j) { return run_job(j); }
    static status blend(const blend_job& j) { return run_job(j); }
    static status additive(const local_pose& pose, const local_pose& reference, local_pose& delta) {
        return impl::KEYBLEND_ISA::make_additive(pose, reference, delta);
    }
    static status hierarchy(const local_to_model_job& j) { return run_job(j); }
    static status palette(const palette_job& j) { return skin::run_palette(j); }
    static status morph(const morph_job& j) { return run_job(j); }
    static status two_bone_ik(const two_bone_ik_batch_job& j) { return run_job(j); }
    static status aim_ik(const aim_ik_batch_job& j) { return run_job(j); }
    template <class Index>
    static status skin(const skinning_job<Index>& j) {
        return skin::run_linear<any_skinning>(j);
    }
    template <class Index>
    static status dual_quaternion(const dual_quaternion_skinning_job<Index>& j) {
        return skin::run_dual_quaternion(j);
    }
    template <class Index>
    static std::size_t first_group(const skinning_job<Index>& j, std::size_t begin) {
        skin::checked c;
        return skin::check_streams(j, j.palette.data(), j.palette.size(), sizeof(glm::mat4), c)
                   ? skin::first_group_of(j, c)
                   : begin;
    }
};

/// This pass's kernels as a table.
inline const kernel_table& table() {
    using e = kernel_entries;
    static const kernel_table t = {e::isa,
                                   &e::sample,
                                   &e::blend,
                                   &e::additive,
                                   &e::hierarchy,
                                   &e::palette,
                                   &e::morph,
                                   &e::two_bone_ik,
                                   &e::aim_ik,
                                   &e::skin<std::uint16_t>,
                                   &e::skin<std::uint8_t>,
                                   &e::dual_quaternion<std::uint16_t>,
                                   &e::dual_quaternion<std::uint8_t>,
                                   &e::first_group<std::uint16_t>,
                                   &e::first_group<std::uint8_t>};
    return t;
}

} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_KERNEL_ENTRIES_HPP
