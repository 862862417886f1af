// keyblend — what the skinning jobs' run() do where the kernels are compiled into the file: the
// checks, then the kernels of this file's instruction set (KEYBLEND_ISA). Internal; included by
// skin.impl.hpp, or by the compiled kernels (keyblend/kernels.hpp).
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_ENTRY_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_ENTRY_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_ENTRY_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_ENTRY_HPP
#endif

#include "dual_quaternion.hpp"
#include "palette.hpp"
#include "run.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

/// skinning_job::run<Config>() with this palette (the job's, or computed by run_fused).
template <class Config, class Index>
status run_linear_on(const skinning_job<Index>& j, const glm::mat4* palette, std::size_t palette_size) {
    using traits = config_traits<Config>;
    checked c;
    if (status st = check_streams(j, palette, palette_size, sizeof(glm::mat4), c); !st) return st;
    if (status st = check_config<Config>(j); !st) return st;
    if (c.begin == c.end) return {};
    const lbs_args a = make_args(j, reinterpret_cast<const float*>(palette), palette_size,
                                 j.normals == normal_transform::inverse_transpose, c);
    run_job<widest, Index, traits::k, traits::implied, traits::streams>(a, c.begin, c.end, c.n, palette_size);
    return {};
}

/// skinning_job::run<Config>() of a fused job: the palette computed into an aligned stack buffer
/// (this frame's only when the job is fused), then skinned from there.
template <class Config, class Index>
KEYBLEND_NOINLINE status run_fused(const skinning_job<Index>& j) {
    fused_palette palette;
    palette_job p;
    if (status st = check_fused(j, palette, p); !st) return st;
    fill_palette(p);
    return run_linear_on<Config>(j, palette.data(), j.bones.size());
}

/// skinning_job::run<Config>().
template <class Config, class Index>
status run_linear(const skinning_job<Index>& j) {
    if (fused(j)) return run_fused<Config>(j);
    return run_linear_on<Config>(j, j.palette.data(), j.palette.size());
}

/// dual_quaternion_skinning_job::run().
template <class Index>
status run_dual_quaternion(const dual_quaternion_skinning_job<Index>& j) {
    checked c;
    if (status st = check_streams(j, j.palette.data(), j.palette.size(), sizeof(dq_bone), c); !st) return st;
    const lbs_args a = make_args(j, nullptr, j.palette.size(), j.normals == normal_transform::inverse_transpose, c);
    run_dqs<Index>(a, j.palette.data(), c.begin, c.end);
    return {};
}

/// Where run()'s first SIMD group starts in a checked job (skin_parallel's chunks start there).
template <class Index>
std::size_t first_group_of(const skinning_job<Index>& j, const checked& c) {
    return first_group<widest>(make_args(j, reinterpret_cast<const float*>(j.palette.data()), j.palette.size(), false, c),
                               c.begin);
}

/// Runs a linear-blend job with the scalar reference kernels or this file's own (tests compare
/// them). Errors as run(), and errc::unsupported for other kernels.
template <class Index>
status run_linear_with(simd_isa which, const skinning_job<Index>& j) {
    checked c;
    if (status st = check_streams(j, j.palette.data(), j.palette.size(), sizeof(glm::mat4), c); !st) return st;
    if (which != simd_isa::scalar && which != isa)
        return make_error(errc::unsupported, std::string("no ") + to_string(which) + " kernels here");
    if (c.begin == c.end) return {};
    const lbs_args a = make_args(j, reinterpret_cast<const float*>(j.palette.data()), j.palette.size(),
                                 j.normals == normal_transform::inverse_transpose, c);
    if (which == simd_isa::scalar)
        run_job<f1, Index>(a, c.begin, c.end, c.n, j.palette.size());
    else
        run_job<widest, Index>(a, c.begin, c.end, c.n, j.palette.size());
    return {};
}

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_ENTRY_HPP
