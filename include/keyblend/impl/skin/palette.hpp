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

#include "../simd/lanes.hpp"

#include <string>

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

/// Which of palette_job's checks fails first, in the order its contract lists them.
enum class palette_fault : unsigned char { none, null_span, short_output, joint_outside };

/// The checks, each once. The pass over the bones has no early exit (it runs every frame and
/// almost never fails); palette_error finds which bone failed.
inline palette_fault first_fault(const palette_job& job) {
    const std::size_t n = job.bones.size(), joints = job.model.size();
    const skin_bone* bones = job.bones.data();
    if ((n && !bones) || (joints && !job.model.data()) || (job.output.size() && !job.output.data()))
        return palette_fault::null_span;
    if (job.output.size() < n) return palette_fault::short_output;
    bool inside = true;
    for (std::size_t b = 0; b < n; ++b) inside &= bones[b].joint < joints;
    return inside ? palette_fault::none : palette_fault::joint_outside;
}

/// palette_job's error for `fault` (not none): the message, and for a joint outside the pose the
/// first bone that has one.
KEYBLEND_COLD inline status palette_error(const palette_job& job, palette_fault fault) {
    const std::size_t n = job.bones.size();
    if (fault == palette_fault::null_span)
        return make_error(errc::invalid_argument, "palette_job: a span has null data but a size other than 0");
    if (fault == palette_fault::short_output)
        return make_error(errc::size_mismatch, "palette_job: " + std::to_string(n) + " bones but room for " +
                                                   std::to_string(job.output.size()) + " palette matrices");
    std::size_t b = 0;
    while (b < n && job.bones[b].joint < job.model.size()) ++b;
    return make_error(errc::out_of_range,
                      "palette_job: bone " + std::to_string(b) + " '" + job.bones[b].name + "': joint " +
                          std::to_string(job.bones[b].joint) + " is outside the pose (" +
                          std::to_string(job.model.size()) + " joints)",
                      b);
}

/// palette_job's checks.
inline status check_palette(const palette_job& job) {
    const palette_fault fault = first_fault(job);
    return fault == palette_fault::none ? status{} : palette_error(job, fault);
}

/// A skinning job that gives its palette's inputs (model and bones) instead of the palette.
template <class Index>
bool fused(const skinning_job<Index>& j) {
    return j.model.size() != 0 || j.bones.size() != 0;
}

/// A fused skinning job's palette checks: the form, then palette_job's, which `out` is made for
/// (its output `buffer`, room for max_fused_bones matrices).
template <class Index>
status check_fused(const skinning_job<Index>& j, glm::mat4* buffer, palette_job& out) {
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
    out.output = span<glm::mat4>(buffer, j.bones.size());
    return check_palette(out);
}

/// out = a * b for 4x4 matrices (any, not only affine): column c of the product is a's columns
/// weighted by column c of b, summed left to right as glm's operator* does. With 4-float lanes
/// (SSE2, NEON) each column is four broadcasts, four multiplies and three adds on a's columns
/// held in registers; with AVX2 two columns at a time: a's columns in both halves of a register,
/// b's two columns loaded as one and their elements spread by in-lane shuffles; with AVX-512 all
/// four columns at once, the same way (14 instructions a product, against AVX2's 24). The results
/// equal `a * b` within float rounding (the compiler may contract either into fused
/// multiply-adds).
inline void multiply_mat4(const glm::mat4& a, const glm::mat4& b, glm::mat4& out) {
#if KEYBLEND_SIMD_AVX512
    const float* pa = &a[0][0];
    const auto every = [pa](int c) {
        return _mm512_maskz_broadcast_f32x4(0xFFFF, _mm_loadu_ps(pa + 4 * c));
    };
    const __m512 col = _mm512_loadu_ps(&b[0][0]); // b's four columns, one a lane
    __m512 r = _mm512_add_ps(_mm512_mul_ps(every(0), _mm512_maskz_permute_ps(0xFFFF, col, 0x00)),
                             _mm512_mul_ps(every(1), _mm512_maskz_permute_ps(0xFFFF, col, 0x55)));
    r = _mm512_add_ps(r, _mm512_mul_ps(every(2), _mm512_maskz_permute_ps(0xFFFF, col, 0xAA)));
    r = _mm512_add_ps(r, _mm512_mul_ps(every(3), _mm512_maskz_permute_ps(0xFFFF, col, 0xFF)));
    _mm512_storeu_ps(&out[0][0], r);
#elif KEYBLEND_SIMD_AVX2
    const float* pa = &a[0][0];
    const float* pb = &b[0][0];
    float* po = &out[0][0];
    const auto both = [pa](int c) { return _mm256_broadcast_ps(reinterpret_cast<const __m128*>(pa + 4 * c)); };
    const __m256 a0 = both(0), a1 = both(1), a2 = both(2), a3 = both(3);
    for (int c = 0; c < 4; c += 2) {
        const __m256 col = _mm256_loadu_ps(pb + 4 * c); // columns c and c + 1
        __m256 r = _mm256_add_ps(_mm256_mul_ps(a0, _mm256_permute_ps(col, 0x00)),
                                 _mm256_mul_ps(a1, _mm256_permute_ps(col, 0x55)));
        r = _mm256_add_ps(r, _mm256_mul_ps(a2, _mm256_permute_ps(col, 0xAA)));
        r = _mm256_add_ps(r, _mm256_mul_ps(a3, _mm256_permute_ps(col, 0xFF)));
        _mm256_storeu_ps(po + 4 * c, r);
    }
#elif KEYBLEND_SIMD_F4
    using lanes::f4;
    const float* pa = &a[0][0];
    const float* pb = &b[0][0];
    float* po = &out[0][0];
    const f4 a0 = f4::load(pa), a1 = f4::load(pa + 4), a2 = f4::load(pa + 8), a3 = f4::load(pa + 12);
    for (int c = 0; c < 4; ++c) {
        const float* col = pb + 4 * c;
        f4 r = a0 * f4::set1(col[0]) + a1 * f4::set1(col[1]);
        r = r + a2 * f4::set1(col[2]);
        r = r + a3 * f4::set1(col[3]);
        r.store(po + 4 * c);
    }
#else
    out = a * b;
#endif
}

/// The palette products, the job's checks made.
/// The spans are read once: the products' stores (through intrinsics, which may alias anything)
/// would otherwise make the compiler reload them for every bone. One out-of-line copy: palette_job
/// and a fused skinning job then get the same bits (inlined into each, the compiler could contract
/// the products' multiplies and adds into fused multiply-adds differently).
KEYBLEND_NOINLINE inline void fill_palette(const palette_job& job) {
    const glm::mat4* model = job.model.data();
    const skin_bone* bones = job.bones.data();
    glm::mat4* out = job.output.data();
    const std::size_t n = job.bones.size();
    for (std::size_t b = 0; b < n; ++b) multiply_mat4(model[bones[b].joint], bones[b].offset, out[b]);
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
