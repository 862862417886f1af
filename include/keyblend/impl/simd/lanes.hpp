// keyblend — the lane types every kernel is written against: V::width floats in a register, one
// joint or vertex per lane. Internal: namespace keyblend::impl::lanes.
//
// SPDX-License-Identifier: MIT
//
// - lanes::f1   one float. Always compiled: the scalar reference path, and what
//               KEYBLEND_NO_INTRINSICS selects.
// - lanes::f4   SSE2 (x86-64 baseline), __m128; or NEON (AArch64), float32x4_t.
// - lanes::f8   AVX2 + FMA, __m256.
// - lanes::f16  AVX-512 (F, VL, BW, DQ), __m512, masks in __mmask16.
// (impl/simd/isa.hpp says which a file compiles.) `lanes::native` is the widest type whose width
// divides pose_lane_block: what the pose kernels (sampling, blending, local-to-model) run on.
// `lanes::widest` is the widest one the compiler targets. The operations have the same semantics
// in every type: `max(a, b)` is `a > b ? a : b` (so a NaN in either gives b, as maxps does),
// `select(m, a, b)` takes a where m is set. `fmadd(a, b, c)` is a * b + c, fused where the target
// has fused multiply-adds (so results and f1's may differ in the last bit; the tests compare within
// a tolerance). Everything here is in the inline namespace KEYBLEND_ISA (see isa.hpp).
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SIMD_LANES_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SIMD_LANES_HPP)
#undef KEYBLEND_PASS_GUARD_SIMD_LANES_HPP
#else
#define KEYBLEND_PASS_GUARD_SIMD_LANES_HPP
#endif

#include "aligned.hpp"
#include "isa.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

namespace keyblend {
namespace impl {

KEYBLEND_ISA_NS {

/// The kernels of this pass (impl/simd/target.hpp).
inline constexpr simd_isa compiled_isa =
#if KEYBLEND_SIMD_AVX512
    simd_isa::avx512;
#elif KEYBLEND_SIMD_AVX2
    simd_isa::avx2;
#elif KEYBLEND_SIMD_SSE2
    simd_isa::sse2;
#elif KEYBLEND_SIMD_NEON
    simd_isa::neon;
#else
    simd_isa::scalar;
#endif

namespace lanes {

// ---------------------------------------------------------------------------------------------
// f1: the scalar reference.
// ---------------------------------------------------------------------------------------------
struct m1 {
    bool v;
};
struct f1 {
    static constexpr std::size_t width = 1;
    using mask = m1;
    float v;
    static f1 load(const float* p) { return {*p}; }
    /// The first min(count, width) floats at p, zeros above; reads nothing past them.
    static f1 load_first(const float* p, std::size_t count) { return {count ? *p : 0.0f}; }
    static f1 set1(float x) { return {x}; }
    /// The mask whose lane i is set where bit i of `b` is.
    static m1 from_bits(unsigned b) { return {(b & 1u) != 0}; }
    void store(float* p) const { *p = v; }
};
inline f1 operator+(f1 a, f1 b) { return {a.v + b.v}; }
inline f1 operator-(f1 a, f1 b) { return {a.v - b.v}; }
inline f1 operator*(f1 a, f1 b) { return {a.v * b.v}; }
inline f1 operator/(f1 a, f1 b) { return {a.v / b.v}; }
inline f1 operator-(f1 a) { return {-a.v}; }
inline f1 fmadd(f1 a, f1 b, f1 c) { return {a.v * b.v + c.v}; }
inline f1 min(f1 a, f1 b) { return {a.v < b.v ? a.v : b.v}; }
inline f1 max(f1 a, f1 b) { return {a.v > b.v ? a.v : b.v}; }
inline f1 sqrt(f1 a) { return {std::sqrt(a.v)}; }
/// 1 / sqrt(a) for a finite a > 0 (other values: unspecified). Exact on f1, and on f4 / f8 without
/// AVX-512 VL (a square root and a division); elsewhere the 14-bit estimate and one Newton step,
/// within 2 ulp of 1 / sqrt(a), several times shorter a dependency chain.
inline f1 rsqrt(f1 a) { return {1.0f / std::sqrt(a.v)}; }
inline m1 operator<(f1 a, f1 b) { return {a.v < b.v}; }
inline m1 operator<=(f1 a, f1 b) { return {a.v <= b.v}; }
inline m1 operator>(f1 a, f1 b) { return {a.v > b.v}; }
inline m1 operator>=(f1 a, f1 b) { return {a.v >= b.v}; }
inline m1 operator==(f1 a, f1 b) { return {a.v == b.v}; }
inline m1 operator!=(f1 a, f1 b) { return {a.v != b.v}; }
inline m1 operator&(m1 a, m1 b) { return {a.v && b.v}; }
inline m1 operator|(m1 a, m1 b) { return {a.v || b.v}; }
inline m1 operator!(m1 a) { return {!a.v}; }
inline f1 select(m1 m, f1 a, f1 b) { return m.v ? a : b; }
/// Bit i set when lane i of the mask is set.
inline unsigned bits(m1 m) { return m.v ? 1u : 0u; }
inline bool all_true(m1 m) { return m.v; }
/// a with its sign flipped where the sign bit of s is set (s may be -0).
inline f1 flip_sign(f1 a, f1 s) { return {std::signbit(s.v) ? -a.v : a.v}; }

// ---------------------------------------------------------------------------------------------
// f4: SSE2.
// ---------------------------------------------------------------------------------------------
#if KEYBLEND_SIMD_SSE2
struct m4 {
    __m128 v;
};
struct f4 {
    static constexpr std::size_t width = 4;
    using mask = m4;
    __m128 v;
    static f4 load(const float* p) { return {_mm_loadu_ps(p)}; }
    static f4 load_first(const float* p, std::size_t count) {
        if (count >= width) return load(p);
        alignas(16) float v[width] = {};
        for (std::size_t k = 0; k < count; ++k) v[k] = p[k];
        return {_mm_load_ps(v)};
    }
    static f4 set1(float x) { return {_mm_set1_ps(x)}; }
    static m4 from_bits(unsigned b) {
        const __m128i bit = _mm_setr_epi32(1, 2, 4, 8);
        const __m128i v = _mm_and_si128(_mm_set1_epi32(static_cast<int>(b)), bit);
        return {_mm_castsi128_ps(_mm_cmpeq_epi32(v, bit))};
    }
    void store(float* p) const { _mm_storeu_ps(p, v); }
};
inline f4 operator+(f4 a, f4 b) { return {_mm_add_ps(a.v, b.v)}; }
inline f4 operator-(f4 a, f4 b) { return {_mm_sub_ps(a.v, b.v)}; }
inline f4 operator*(f4 a, f4 b) { return {_mm_mul_ps(a.v, b.v)}; }
inline f4 operator/(f4 a, f4 b) { return {_mm_div_ps(a.v, b.v)}; }
inline f4 operator-(f4 a) { return {_mm_xor_ps(a.v, _mm_set1_ps(-0.0f))}; }
inline f4 fmadd(f4 a, f4 b, f4 c) {
#if KEYBLEND_SIMD_FMA
    return {_mm_fmadd_ps(a.v, b.v, c.v)};
#else
    return {_mm_add_ps(_mm_mul_ps(a.v, b.v), c.v)};
#endif
}
inline f4 min(f4 a, f4 b) { return {_mm_min_ps(a.v, b.v)}; }
inline f4 max(f4 a, f4 b) { return {_mm_max_ps(a.v, b.v)}; }
inline f4 sqrt(f4 a) { return {_mm_sqrt_ps(a.v)}; }
inline f4 rsqrt(f4 a) {
#if KEYBLEND_SIMD_AVX512
    const __m128 y = _mm_rsqrt14_ps(a.v);
    const __m128 hy = _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(0.5f), a.v), y);
    return {_mm_mul_ps(y, _mm_fnmadd_ps(hy, y, _mm_set1_ps(1.5f)))};
#else
    return {_mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(a.v))};
#endif
}
inline m4 operator<(f4 a, f4 b) { return {_mm_cmplt_ps(a.v, b.v)}; }
inline m4 operator<=(f4 a, f4 b) { return {_mm_cmple_ps(a.v, b.v)}; }
inline m4 operator>(f4 a, f4 b) { return {_mm_cmpgt_ps(a.v, b.v)}; }
inline m4 operator>=(f4 a, f4 b) { return {_mm_cmpge_ps(a.v, b.v)}; }
inline m4 operator==(f4 a, f4 b) { return {_mm_cmpeq_ps(a.v, b.v)}; }
inline m4 operator!=(f4 a, f4 b) { return {_mm_cmpneq_ps(a.v, b.v)}; }
inline m4 operator&(m4 a, m4 b) { return {_mm_and_ps(a.v, b.v)}; }
inline m4 operator|(m4 a, m4 b) { return {_mm_or_ps(a.v, b.v)}; }
inline m4 operator!(m4 a) { return {_mm_xor_ps(a.v, _mm_castsi128_ps(_mm_set1_epi32(-1)))}; }
inline f4 select(m4 m, f4 a, f4 b) {
    return {_mm_or_ps(_mm_and_ps(m.v, a.v), _mm_andnot_ps(m.v, b.v))};
}
inline unsigned bits(m4 m) { return static_cast<unsigned>(_mm_movemask_ps(m.v)); }
inline bool all_true(m4 m) { return bits(m) == 0xFu; }
inline f4 flip_sign(f4 a, f4 s) {
    return {_mm_xor_ps(a.v, _mm_and_ps(s.v, _mm_set1_ps(-0.0f)))};
}
#endif

// ---------------------------------------------------------------------------------------------
// f4: NEON (AArch64), with fused multiply-adds. The same semantics as the SSE2 f4: min and max
// are the compare-and-select that minps and maxps are (NEON's fmin and fmax give NaN when either
// operand is NaN), rsqrt is exact (NEON's estimate has 8 bits, and two Newton steps do not
// bring it within 2 ulp).
// ---------------------------------------------------------------------------------------------
#if KEYBLEND_SIMD_NEON
struct m4 {
    uint32x4_t v;
};
struct f4 {
    static constexpr std::size_t width = 4;
    using mask = m4;
    float32x4_t v;
    static f4 load(const float* p) { return {vld1q_f32(p)}; }
    static f4 load_first(const float* p, std::size_t count) {
        if (count >= width) return load(p);
        alignas(16) float v[width] = {};
        for (std::size_t k = 0; k < count; ++k) v[k] = p[k];
        return {vld1q_f32(v)};
    }
    static f4 set1(float x) { return {vdupq_n_f32(x)}; }
    static m4 from_bits(unsigned b) {
        alignas(16) static constexpr std::uint32_t bit[4] = {1, 2, 4, 8};
        return {vtstq_u32(vdupq_n_u32(b), vld1q_u32(bit))};
    }
    void store(float* p) const { vst1q_f32(p, v); }
};
inline f4 operator+(f4 a, f4 b) { return {vaddq_f32(a.v, b.v)}; }
inline f4 operator-(f4 a, f4 b) { return {vsubq_f32(a.v, b.v)}; }
inline f4 operator*(f4 a, f4 b) { return {vmulq_f32(a.v, b.v)}; }
inline f4 operator/(f4 a, f4 b) { return {vdivq_f32(a.v, b.v)}; }
inline f4 operator-(f4 a) { return {vnegq_f32(a.v)}; }
inline f4 fmadd(f4 a, f4 b, f4 c) { return {vfmaq_f32(c.v, a.v, b.v)}; }
inline f4 min(f4 a, f4 b) { return {vbslq_f32(vcltq_f32(a.v, b.v), a.v, b.v)}; }
inline f4 max(f4 a, f4 b) { return {vbslq_f32(vcgtq_f32(a.v, b.v), a.v, b.v)}; }
inline f4 sqrt(f4 a) { return {vsqrtq_f32(a.v)}; }
inline f4 rsqrt(f4 a) { return {vdivq_f32(vdupq_n_f32(1.0f), vsqrtq_f32(a.v))}; }
inline m4 operator<(f4 a, f4 b) { return {vcltq_f32(a.v, b.v)}; }
inline m4 operator<=(f4 a, f4 b) { return {vcleq_f32(a.v, b.v)}; }
inline m4 operator>(f4 a, f4 b) { return {vcgtq_f32(a.v, b.v)}; }
inline m4 operator>=(f4 a, f4 b) { return {vcgeq_f32(a.v, b.v)}; }
inline m4 operator==(f4 a, f4 b) { return {vceqq_f32(a.v, b.v)}; }
inline m4 operator!=(f4 a, f4 b) { return {vmvnq_u32(vceqq_f32(a.v, b.v))}; }
inline m4 operator&(m4 a, m4 b) { return {vandq_u32(a.v, b.v)}; }
inline m4 operator|(m4 a, m4 b) { return {vorrq_u32(a.v, b.v)}; }
inline m4 operator!(m4 a) { return {vmvnq_u32(a.v)}; }
inline f4 select(m4 m, f4 a, f4 b) { return {vbslq_f32(m.v, a.v, b.v)}; }
inline unsigned bits(m4 m) {
    alignas(16) static constexpr std::uint32_t bit[4] = {1, 2, 4, 8};
    return vaddvq_u32(vandq_u32(m.v, vld1q_u32(bit)));
}
inline bool all_true(m4 m) { return vminvq_u32(m.v) != 0; }
inline f4 flip_sign(f4 a, f4 s) {
    const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(s.v), vdupq_n_u32(0x80000000u));
    return {vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(a.v), sign))};
}
#endif

// ---------------------------------------------------------------------------------------------
// f8: AVX2 + FMA.
// ---------------------------------------------------------------------------------------------
#if KEYBLEND_SIMD_AVX2
struct m8 {
    __m256 v;
};
struct f8 {
    static constexpr std::size_t width = 8;
    using mask = m8;
    __m256 v;
    static f8 load(const float* p) { return {_mm256_loadu_ps(p)}; }
    static f8 load_first(const float* p, std::size_t count) {
        if (count >= width) return load(p);
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lane);
        return {_mm256_maskload_ps(p, m)}; // (masked-out lanes are not read)
    }
    static f8 set1(float x) { return {_mm256_set1_ps(x)}; }
    static m8 from_bits(unsigned b) {
        const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        const __m256i v = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(b)), bit);
        return {_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, bit))};
    }
    void store(float* p) const { _mm256_storeu_ps(p, v); }
};
inline f8 operator+(f8 a, f8 b) { return {_mm256_add_ps(a.v, b.v)}; }
inline f8 operator-(f8 a, f8 b) { return {_mm256_sub_ps(a.v, b.v)}; }
inline f8 operator*(f8 a, f8 b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline f8 operator/(f8 a, f8 b) { return {_mm256_div_ps(a.v, b.v)}; }
inline f8 operator-(f8 a) { return {_mm256_xor_ps(a.v, _mm256_set1_ps(-0.0f))}; }
inline f8 fmadd(f8 a, f8 b, f8 c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline f8 min(f8 a, f8 b) { return {_mm256_min_ps(a.v, b.v)}; }
inline f8 max(f8 a, f8 b) { return {_mm256_max_ps(a.v, b.v)}; }
inline f8 sqrt(f8 a) { return {_mm256_sqrt_ps(a.v)}; }
inline f8 rsqrt(f8 a) {
#if KEYBLEND_SIMD_AVX512
    const __m256 y = _mm256_rsqrt14_ps(a.v);
    const __m256 hy = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), a.v), y);
    return {_mm256_mul_ps(y, _mm256_fnmadd_ps(hy, y, _mm256_set1_ps(1.5f)))};
#else
    return {_mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(a.v))};
#endif
}
inline m8 operator<(f8 a, f8 b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)}; }
inline m8 operator<=(f8 a, f8 b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LE_OQ)}; }
inline m8 operator>(f8 a, f8 b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ)}; }
inline m8 operator>=(f8 a, f8 b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GE_OQ)}; }
inline m8 operator==(f8 a, f8 b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ)}; }
inline m8 operator!=(f8 a, f8 b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_NEQ_UQ)}; }
inline m8 operator&(m8 a, m8 b) { return {_mm256_and_ps(a.v, b.v)}; }
inline m8 operator|(m8 a, m8 b) { return {_mm256_or_ps(a.v, b.v)}; }
inline m8 operator!(m8 a) { return {_mm256_xor_ps(a.v, _mm256_castsi256_ps(_mm256_set1_epi32(-1)))}; }
inline f8 select(m8 m, f8 a, f8 b) { return {_mm256_blendv_ps(b.v, a.v, m.v)}; }
inline unsigned bits(m8 m) { return static_cast<unsigned>(_mm256_movemask_ps(m.v)); }
inline bool all_true(m8 m) { return bits(m) == 0xFFu; }
inline f8 flip_sign(f8 a, f8 s) {
    return {_mm256_xor_ps(a.v, _mm256_and_ps(s.v, _mm256_set1_ps(-0.0f)))};
}
#endif

// ---------------------------------------------------------------------------------------------
// f16: AVX-512 (F, VL, BW, DQ). Comparisons give mask registers, not vectors.
// ---------------------------------------------------------------------------------------------
#if KEYBLEND_SIMD_AVX512
struct m16 {
    __mmask16 v;
};
struct f16 {
    static constexpr std::size_t width = 16;
    using mask = m16;
    __m512 v;
    static f16 load(const float* p) { return {_mm512_loadu_ps(p)}; }
    static f16 load_first(const float* p, std::size_t count) {
        if (count >= width) return load(p);
        return {_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1u), p)};
    }
    static f16 set1(float x) { return {_mm512_set1_ps(x)}; }
    static m16 from_bits(unsigned b) { return {static_cast<__mmask16>(b)}; }
    void store(float* p) const { _mm512_storeu_ps(p, v); }
};
inline f16 operator+(f16 a, f16 b) { return {_mm512_add_ps(a.v, b.v)}; }
inline f16 operator-(f16 a, f16 b) { return {_mm512_sub_ps(a.v, b.v)}; }
inline f16 operator*(f16 a, f16 b) { return {_mm512_mul_ps(a.v, b.v)}; }
inline f16 operator/(f16 a, f16 b) { return {_mm512_div_ps(a.v, b.v)}; }
inline f16 operator-(f16 a) { return {_mm512_xor_ps(a.v, _mm512_set1_ps(-0.0f))}; }
inline f16 fmadd(f16 a, f16 b, f16 c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
// (min, max, sqrt and rsqrt14 through their all-lanes maskz forms, the same instruction: GCC 12's
// plain forms start from _mm512_undefined_ps, which -Wmaybe-uninitialized reports once inlined.)
inline f16 min(f16 a, f16 b) { return {_mm512_maskz_min_ps(0xffff, a.v, b.v)}; }
inline f16 max(f16 a, f16 b) { return {_mm512_maskz_max_ps(0xffff, a.v, b.v)}; }
inline f16 sqrt(f16 a) { return {_mm512_maskz_sqrt_ps(0xffff, a.v)}; }
inline f16 rsqrt(f16 a) {
    const __m512 y = _mm512_maskz_rsqrt14_ps(0xffff, a.v);
    const __m512 hy = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), a.v), y);
    return {_mm512_mul_ps(y, _mm512_fnmadd_ps(hy, y, _mm512_set1_ps(1.5f)))};
}
inline m16 operator<(f16 a, f16 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; }
inline m16 operator<=(f16 a, f16 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LE_OQ)}; }
inline m16 operator>(f16 a, f16 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)}; }
inline m16 operator>=(f16 a, f16 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GE_OQ)}; }
inline m16 operator==(f16 a, f16 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)}; }
inline m16 operator!=(f16 a, f16 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_NEQ_UQ)}; }
inline m16 operator&(m16 a, m16 b) { return {static_cast<__mmask16>(a.v & b.v)}; }
inline m16 operator|(m16 a, m16 b) { return {static_cast<__mmask16>(a.v | b.v)}; }
inline m16 operator!(m16 a) { return {static_cast<__mmask16>(~a.v)}; }
inline f16 select(m16 m, f16 a, f16 b) { return {_mm512_mask_blend_ps(m.v, b.v, a.v)}; }
inline unsigned bits(m16 m) { return m.v; }
inline bool all_true(m16 m) { return m.v == 0xFFFFu; }
inline f16 flip_sign(f16 a, f16 s) {
    return {_mm512_xor_ps(a.v, _mm512_and_ps(s.v, _mm512_set1_ps(-0.0f)))};
}
#endif

#if KEYBLEND_SIMD_AVX2
using native = f8;
#elif KEYBLEND_SIMD_F4
using native = f4;
#else
using native = f1;
#endif
#if KEYBLEND_SIMD_AVX512
using widest = f16;
#else
using widest = native;
#endif

/// Loads `Dim` (3 or 4) consecutive floats from each of V::width addresses and transposes them:
/// out[d] lane l = rows[l][d]. Reads exactly Dim floats per address (never past a vec3).
template <unsigned Dim>
inline void load_transposed(const float* const* rows, f1* out) {
    for (unsigned d = 0; d < Dim; ++d) out[d] = {rows[0][d]};
}
#if KEYBLEND_SIMD_SSE2
template <unsigned Dim>
inline __m128 load_row(const float* p) {
    if constexpr (Dim == 4) {
        return _mm_loadu_ps(p);
    } else {
        // x, y from one 8-byte load, z from a 4-byte one: 12 bytes, nothing past the vec3. The
        // 8 bytes go through memcpy: a vec3 in an array is only 4-byte aligned, and _mm_load_sd
        // dereferences a double* (undefined behaviour, which UBSan reports). Same movsd code.
        double x_y;
        std::memcpy(&x_y, p, sizeof x_y);
        const __m128 xy = _mm_castpd_ps(_mm_set_sd(x_y));
        return _mm_movelh_ps(xy, _mm_load_ss(p + 2));
    }
}
template <unsigned Dim>
inline void transpose4(const float* const* rows, __m128* out) {
    __m128 r0 = load_row<Dim>(rows[0]), r1 = load_row<Dim>(rows[1]);
    __m128 r2 = load_row<Dim>(rows[2]), r3 = load_row<Dim>(rows[3]);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    out[0] = r0;
    out[1] = r1;
    out[2] = r2;
    out[3] = r3;
}
template <unsigned Dim>
inline void load_transposed(const float* const* rows, f4* out) {
    __m128 t[4];
    transpose4<Dim>(rows, t);
    for (unsigned d = 0; d < Dim; ++d) out[d] = {t[d]};
}
#endif
#if KEYBLEND_SIMD_NEON
template <unsigned Dim>
inline float32x4_t load_row(const float* p) {
    if constexpr (Dim == 4) return vld1q_f32(p);
    else return vcombine_f32(vld1_f32(p), vld1_dup_f32(p + 2)); // x y z z: 12 bytes read
}
/// r[0..3] <-> their transpose (4x4, in registers).
inline void transpose4(float32x4_t (&r)[4]) {
    const float32x4_t t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]); // 00 10 02 12, 01 11 03 13
    const float32x4_t t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
    const auto lo = [](float32x4_t a, float32x4_t b) {
        return vreinterpretq_f32_f64(vzip1q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)));
    };
    const auto hi = [](float32x4_t a, float32x4_t b) {
        return vreinterpretq_f32_f64(vzip2q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)));
    };
    r[0] = lo(t0, t2);
    r[1] = lo(t1, t3);
    r[2] = hi(t0, t2);
    r[3] = hi(t1, t3);
}
template <unsigned Dim>
inline void load_transposed(const float* const* rows, f4* out) {
    float32x4_t t[4] = {load_row<Dim>(rows[0]), load_row<Dim>(rows[1]), load_row<Dim>(rows[2]),
                        load_row<Dim>(rows[3])};
    transpose4(t);
    for (unsigned d = 0; d < Dim; ++d) out[d] = {t[d]};
}
#endif
#if KEYBLEND_SIMD_AVX2
template <unsigned Dim>
inline void load_transposed(const float* const* rows, f8* out) {
    __m128 lo[4], hi[4];
    transpose4<Dim>(rows, lo);
    transpose4<Dim>(rows + 4, hi);
    for (unsigned d = 0; d < Dim; ++d) out[d] = {_mm256_set_m128(hi[d], lo[d])};
}
#endif

/// Runs `f(Wide{}, i)` for i = begin, begin + Wide::width, ... while a whole Wide vector fits
/// before `end`, then `f(Narrow{}, i)` over the rest: the pose kernels' loop over padded streams,
/// the widest lanes first (f16 over two blocks of pose_lane_block) and a narrower tail. `begin`
/// and `end` are multiples of Narrow::width; with Wide == Narrow it is a plain loop.
template <class Wide, class Narrow, class F>
KEYBLEND_FORCE_INLINE void for_each_lanes(std::size_t begin, std::size_t end, F&& f) {
    std::size_t i = begin;
    for (; i + Wide::width <= end; i += Wide::width) f(Wide{}, i);
    if constexpr (Wide::width != Narrow::width)
        for (; i < end; i += Narrow::width) f(Narrow{}, i);
}

/// The mask of the lanes [i, i + V::width) that are below `n` (all of them when i + width <= n).
template <class V>
KEYBLEND_FORCE_INLINE typename V::mask lanes_below(std::size_t i, std::size_t n) {
    if (i + V::width <= n) return V::from_bits((1u << V::width) - 1u);
    return V::from_bits(i >= n ? 0u : (1u << (n - i)) - 1u);
}

/// The index of the lowest set bit of a non-zero mask from bits().
inline unsigned lowest_set_bit(unsigned m) {
#if defined(__GNUC__) || defined(__clang__)
    return static_cast<unsigned>(__builtin_ctz(m));
#else
    unsigned i = 0;
    while (!(m & 1u)) {
        m >>= 1;
        ++i;
    }
    return i;
#endif
}

/// The number of set bits of m.
inline unsigned set_bit_count(unsigned m) {
    unsigned n = 0;
    for (; m; m &= m - 1u) ++n;
    return n;
}

// Shared helpers over any lane type.
template <class V>
V clamp01(V x) {
    // max first: a NaN x gives 0 (max returns its second operand), then min keeps it.
    return min(max(x, V::set1(0.0f)), V::set1(1.0f));
}

} // namespace lanes

} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SIMD_LANES_HPP
