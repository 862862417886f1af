// keyblend — the skinning palette's products, model[bones[b].joint] * bones[b].offset, for the jobs
// that compute it (palette_job, local_to_model_job with a palette, a fused skinning_job). Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_PALETTE_KERNELS_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_PALETTE_KERNELS_HPP)
#undef KEYBLEND_PASS_GUARD_PALETTE_KERNELS_HPP
#else
#define KEYBLEND_PASS_GUARD_PALETTE_KERNELS_HPP
#endif

#include "../skeleton.hpp"
#include "simd/lanes.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {

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
    __m512 col = _mm512_loadu_ps(&b[0][0]); // b's four columns, one a lane
#if defined(__GNUC__)
    // b loaded once, into a register: GCC would fold the load into each of the four permutes, four
    // 64-byte loads of b where one is needed, each across two cache lines for a skin_bone's offset.
    __asm__("" : "+v"(col));
#endif
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

/// out[b] = model[bones[b].joint] * bones[b].offset for b < n, the joints checked. One out-of-line
/// copy for every job that computes a palette, so all give the same bits (inlined into each, the
/// compiler could contract the products' multiplies and adds into fused multiply-adds
/// differently). The arguments are plain pointers, read once: the products' stores (through
/// intrinsics, which may alias anything) would otherwise make the compiler reload them per bone.
KEYBLEND_NOINLINE inline void palette_products(const glm::mat4* model, const skin_bone* bones, std::size_t n,
                                               glm::mat4* out) {
    for (std::size_t b = 0; b < n; ++b) multiply_mat4(model[bones[b].joint], bones[b].offset, out[b]);
}

} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_PALETTE_KERNELS_HPP
