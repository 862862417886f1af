// keyblend — the skinning palette (palette_job, skin.hpp): its checks and the 4x4 products.
// Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_PALETTE_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_PALETTE_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_PALETTE_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_PALETTE_HPP
#endif

#include "../palette_checks.hpp"
#include "../palette_kernels.hpp"

#include <string>

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

/// palette_job's checks.
inline status check_palette(const palette_job& job) {
    return check_palette_inputs("palette_job", job.model.data(), job.model.size(), job.bones, job.output);
}

/// A skinning job that gives its palette's inputs (model and bones) instead of the palette.
template <class Index>
bool fused(const skinning_job<Index>& j) {
    return j.model.size() != 0 || j.bones.size() != 0;
}

/// Room for a fused skinning job's palette on the stack: max_fused_bones matrices, 64-byte aligned.
/// Floats, so that no glm::mat4 constructor runs (under GLM_FORCE_CTOR_INIT, 16 KB of stores).
struct fused_palette {
    alignas(64) float storage[max_fused_bones * 16];
    glm::mat4* data() { return reinterpret_cast<glm::mat4*>(storage); }
};

/// A fused skinning job's palette checks: the form, then palette_job's, which `out` is made for
/// (its output `buffer`).
template <class Index>
status check_fused(const skinning_job<Index>& j, fused_palette& buffer, palette_job& out) {
    if (!j.palette.empty())
        return make_error(errc::invalid_argument, "a palette and bones both given: give the palette, or the "
                                                  "model matrices and bones to compute it from");
    if (j.bones.size() > max_fused_bones)
        return make_error(errc::size_mismatch, std::to_string(j.bones.size()) +
                                                   " bones: a skinning job computes a palette of at most " +
                                                   std::to_string(max_fused_bones) +
                                                   " (max_fused_bones); run palette_job for more");
    out.model = j.model;
    out.bones = j.bones;
    out.output = span<glm::mat4>(buffer.data(), j.bones.size());
    return check_palette(out);
}

/// The palette products, the job's checks made.
inline void fill_palette(const palette_job& job) {
    palette_products(job.model.data(), job.bones.data(), job.bones.size(), job.output.data());
}

/// palette_job::run.
inline status run_palette(const palette_job& job) {
    if (status st = check_palette(job); !st) return st;
    fill_palette(job);
    return {};
}

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_PALETTE_HPP
