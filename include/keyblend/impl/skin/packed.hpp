// keyblend — packed outputs: skinned normals and tangents normalised and packed into 10:10:10:2
// signed-normalized words (out_normals_packed, out_tangents_packed; layout::words), in the lanes
// the kernels transform them in, and stored as words: the floats never reach memory.
// Internal: namespace keyblend::impl::skin.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_PACKED_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_PACKED_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_PACKED_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_PACKED_HPP
#endif

#include "lanes.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

/// Squared lengths within which a vector is normalised directly; others are first scaled by their
/// longest component (no overflow or underflow in the length).
inline constexpr float packing_direct_min = 1e-30f, packing_direct_max = 1e30f;

/// snorm10_biased for a group in which some vector's squared length is outside the direct range:
/// those scaled first so that their longest component is 1 (the length then within [1, sqrt 3]);
/// the others as snorm10_biased does them. (Out of line: rare, and kept out of the kernels' loops.)
template <class V>
KEYBLEND_COLD void snorm10_biased_scaled(V& x, V& y, V& z, V length2, typename V::mask direct) {
    const V longest = max(max(max(x, -x), max(y, -y)), max(z, -z));
    const V r = V::set1(1.0f) / longest;
    x = select(direct, x, x * r);
    y = select(direct, y, y * r);
    z = select(direct, z, z * r);
    length2 = select(direct, length2, x * x + y * y + z * z);
    const auto usable = direct | ((length2 >= V::set1(0.5f)) & (length2 <= V::set1(4.0f)));
    const V s = V::set1(511.0f) * rsqrt(select(usable, length2, V::set1(1.0f)));
    const V bias = V::set1(12582912.0f);
    x = select(usable, fmadd(x, s, bias), bias);
    y = select(usable, fmadd(y, s, bias), bias);
    z = select(usable, fmadd(z, s, bias), bias);
}

/// A vector's 10-bit components, biased: normalised, times 511, and rounded to the nearest
/// integer (ties to even) by adding 1.5 * 2^23, whose sum's low mantissa bits are then the integer
/// in two's complement (|c * 511| stays below 511.5, so no clamp is needed). Zero, non-finite, or
/// below 2^-128 in every component (the reciprocal of the longest would overflow): 0, 0, 0.
template <class V>
KEYBLEND_FORCE_INLINE void snorm10_biased(V& x, V& y, V& z) {
    const V length2 = x * x + y * y + z * z;
    const auto direct = (length2 >= V::set1(packing_direct_min)) & (length2 <= V::set1(packing_direct_max));
    if (!all_true(direct)) return snorm10_biased_scaled(x, y, z, length2, direct);
    const V s = V::set1(511.0f) * rsqrt(length2);
    const V bias = V::set1(12582912.0f);
    x = fmadd(x, s, bias);
    y = fmadd(y, s, bias);
    z = fmadd(z, s, bias);
}

/// The words of V::width vertices from biased components (snorm10_biased; w: 1.5 * 2^23 plus 0,
/// 1 or -1), to `out`: x | y << 10 | z << 20 | w << 30, each field its low bits.
KEYBLEND_FORCE_INLINE void store_words(f1 x, f1 y, f1 z, f1 w, std::uint32_t* out) {
    std::uint32_t b[4];
    std::memcpy(&b[0], &x.v, 4);
    std::memcpy(&b[1], &y.v, 4);
    std::memcpy(&b[2], &z.v, 4);
    std::memcpy(&b[3], &w.v, 4);
    *out = (b[0] & 0x3FFu) | (b[1] & 0x3FFu) << 10 | (b[2] & 0x3FFu) << 20 | b[3] << 30;
}
#if KEYBLEND_SIMD_SSE2
KEYBLEND_FORCE_INLINE void store_words(f4 x, f4 y, f4 z, f4 w, std::uint32_t* out) {
    const __m128i m = _mm_set1_epi32(0x3FF);
    const __m128i bx = _mm_and_si128(_mm_castps_si128(x.v), m);
    const __m128i by = _mm_slli_epi32(_mm_and_si128(_mm_castps_si128(y.v), m), 10);
    const __m128i bz = _mm_slli_epi32(_mm_and_si128(_mm_castps_si128(z.v), m), 20);
    const __m128i bw = _mm_slli_epi32(_mm_castps_si128(w.v), 30);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_or_si128(_mm_or_si128(bx, by), _mm_or_si128(bz, bw)));
}
#endif
#if KEYBLEND_SIMD_NEON
KEYBLEND_FORCE_INLINE void store_words(f4 x, f4 y, f4 z, f4 w, std::uint32_t* out) {
    const uint32x4_t m = vdupq_n_u32(0x3FFu);
    const uint32x4_t bx = vandq_u32(vreinterpretq_u32_f32(x.v), m);
    const uint32x4_t by = vshlq_n_u32(vandq_u32(vreinterpretq_u32_f32(y.v), m), 10);
    const uint32x4_t bz = vshlq_n_u32(vandq_u32(vreinterpretq_u32_f32(z.v), m), 20);
    const uint32x4_t bw = vshlq_n_u32(vreinterpretq_u32_f32(w.v), 30);
    vst1q_u32(out, vorrq_u32(vorrq_u32(bx, by), vorrq_u32(bz, bw)));
}
#endif
#if KEYBLEND_SIMD_AVX2
KEYBLEND_FORCE_INLINE void store_words(f8 x, f8 y, f8 z, f8 w, std::uint32_t* out) {
    const __m256i m = _mm256_set1_epi32(0x3FF);
    const __m256i bx = _mm256_and_si256(_mm256_castps_si256(x.v), m);
    const __m256i by = _mm256_slli_epi32(_mm256_and_si256(_mm256_castps_si256(y.v), m), 10);
    const __m256i bz = _mm256_slli_epi32(_mm256_and_si256(_mm256_castps_si256(z.v), m), 20);
    const __m256i bw = _mm256_slli_epi32(_mm256_castps_si256(w.v), 30);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                        _mm256_or_si256(_mm256_or_si256(bx, by), _mm256_or_si256(bz, bw)));
}
#endif

/// Stores the V::width vectors (x, y, z) from vertex v as words (layout::words): normalised and
/// packed, bits 30-31 from `w` (a tangent's w: -1 where w < 0, 1 elsewhere) when Tangent, else 0.
template <bool Tangent, class V>
KEYBLEND_FORCE_INLINE void store_packed(const out_stream& s, std::size_t v, V x, V y, V z, V w = V{}) {
    const V bias = V::set1(12582912.0f);
    if constexpr (Tangent)
        w = select(w < V::set1(0.0f), V::set1(-1.0f), V::set1(1.0f)) + bias;
    else
        w = bias;
    snorm10_biased(x, y, z);
    unsigned char* to = s.data + v * s.stride;
    if (s.stride == sizeof(std::uint32_t)) {
        store_words(x, y, z, w, reinterpret_cast<std::uint32_t*>(to));
    } else {
        std::uint32_t words[V::width];
        store_words(x, y, z, w, words);
        for (std::size_t l = 0; l < V::width; ++l) std::memcpy(to + l * s.stride, &words[l], sizeof(std::uint32_t));
    }
}

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_PACKED_HPP
