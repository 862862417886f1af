// keyblend — the integer-and-float lanes the compressed-clip decoder runs on: a segment's decoding
// table (widths, bit offsets, masks, biases, scales) from its metadata bytes, and a record's
// components from their bits. Internal: namespace keyblend::impl::clanes. Included by
// impl/compress_sample.impl.hpp.
//
// SPDX-License-Identifier: MIT
//
// Three lane types, chosen from the SIMD layer's (impl/simd/lanes.hpp) by `for_lanes<V>`:
// - s1   one lane, plain C++: the scalar reference (lanes::f1, and lanes::f4: SSE2 has neither
//        variable shifts nor gathers);
// - a8   AVX2: 8 lanes, __m256i / __m256, _mm256_i32gather_epi32 for the records' words;
// - a16  AVX-512 (F, VL, BW, DQ): 16 lanes, mask registers. (Some operations through their
//        all-lanes maskz forms, the same instructions: GCC 12's plain forms start from an undefined
//        register, which -Wmaybe-uninitialized reports once inlined.)
// Every lane type computes the same integers (widths, offsets, masks, codes) and the same
// floats up to FMA contraction (a16 and a8 fuse `q * scale + bias`).
#pragma once

#include "simd/lanes.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace keyblend {
namespace impl {
namespace clanes {

struct s1 {
    static constexpr unsigned width = 1;
    using iv = std::int32_t;
    using fv = float;
    using mv = bool;
    static iv load_u8(const unsigned char* p) { return *p; }
    static iv load_i(const std::int32_t* p) { return *p; }
    static fv load_f(const float* p) { return *p; }
    static void store_i(std::int32_t* p, iv v) { *p = v; }
    static void store_f(float* p, fv v) { *p = v; }
    static iv set_i(std::int32_t v) { return v; }
    static fv set_f(float v) { return v; }
    static iv band(iv a, iv b) { return a & b; }
    static iv srl(iv a, int n) { return static_cast<iv>(static_cast<std::uint32_t>(a) >> n); }
    static iv srlv(iv a, iv n) { return static_cast<iv>(static_cast<std::uint32_t>(a) >> n); }
    static iv sllv(iv a, iv n) { return static_cast<iv>(static_cast<std::uint32_t>(a) << n); }
    static iv add(iv a, iv b) { return a + b; }
    static iv sub(iv a, iv b) { return a - b; }
    static iv max(iv a, iv b) { return a > b ? a : b; }
    static fv to_f(iv a) { return static_cast<float>(a); }
    static fv fadd(fv a, fv b) { return a + b; }
    static fv fmul(fv a, fv b) { return a * b; }
    static fv fdiv(fv a, fv b) { return a / b; }
    /// floor(log2(a)) for 0 < a < 2^24 (the exponent of its float).
    static iv log2(iv a) {
        const float f = static_cast<float>(a);
        std::uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        return static_cast<iv>((bits >> 23) & 0xffu) - 127;
    }
    static mv is_zero(iv a) { return a == 0; }
    static mv fpositive(fv a) { return a > 0.0f; }
    static mv mand(mv a, mv b) { return a && b; }
    static mv mnot(mv a) { return !a; }
    static iv select(mv m, iv a, iv b) { return m ? a : b; }
    static fv fselect(mv m, fv a, fv b) { return m ? a : b; }
    static mv is(iv a, std::int32_t b) { return a == b; }
    static mv at_most(iv a, std::int32_t b) { return a <= b; }
    /// The 4-byte little-endian word at each lane's byte offset from `base`.
    static iv gather_words(const unsigned char* base, iv byte) {
        std::uint32_t w;
        std::memcpy(&w, base + static_cast<std::uint32_t>(byte), sizeof w);
        return static_cast<iv>(w);
    }
    /// q * scale + bias.
    static fv dequantize(iv q, fv scale, fv bias) { return bias + static_cast<float>(q) * scale; }
    /// Lane i of the result: the sum of lanes 0 to i; and the last lane.
    static iv scan(iv a) { return a; }
    static std::int32_t last(iv a) { return a; }
    /// table[a] (a in [0, 32)).
    static fv lookup32(const float* table, iv a) { return table[a]; }
};

#if KEYBLEND_SIMD_AVX2
struct a8 {
    static constexpr unsigned width = 8;
    using iv = __m256i;
    using fv = __m256;
    using mv = __m256i;
    static iv load_u8(const unsigned char* p) {
        std::uint64_t b;
        std::memcpy(&b, p, sizeof b);
        return _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(b)));
    }
    static iv load_i(const std::int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
    static fv load_f(const float* p) { return _mm256_loadu_ps(p); }
    static void store_i(std::int32_t* p, iv v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
    static void store_f(float* p, fv v) { _mm256_storeu_ps(p, v); }
    static iv set_i(std::int32_t v) { return _mm256_set1_epi32(v); }
    static fv set_f(float v) { return _mm256_set1_ps(v); }
    static iv band(iv a, iv b) { return _mm256_and_si256(a, b); }
    static iv srl(iv a, int n) { return _mm256_srli_epi32(a, n); }
    static iv srlv(iv a, iv n) { return _mm256_srlv_epi32(a, n); }
    static iv sllv(iv a, iv n) { return _mm256_sllv_epi32(a, n); }
    static iv add(iv a, iv b) { return _mm256_add_epi32(a, b); }
    static iv sub(iv a, iv b) { return _mm256_sub_epi32(a, b); }
    static iv max(iv a, iv b) { return _mm256_max_epi32(a, b); }
    static fv to_f(iv a) { return _mm256_cvtepi32_ps(a); }
    static fv fadd(fv a, fv b) { return _mm256_add_ps(a, b); }
    static fv fmul(fv a, fv b) { return _mm256_mul_ps(a, b); }
    static fv fdiv(fv a, fv b) { return _mm256_div_ps(a, b); }
    static iv log2(iv a) {
        const __m256i bits = _mm256_castps_si256(_mm256_cvtepi32_ps(a));
        return _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
    }
    static mv is_zero(iv a) { return _mm256_cmpeq_epi32(a, _mm256_setzero_si256()); }
    static mv fpositive(fv a) { return _mm256_castps_si256(_mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_GT_OQ)); }
    static mv mand(mv a, mv b) { return _mm256_and_si256(a, b); }
    static mv mnot(mv a) { return _mm256_xor_si256(a, _mm256_set1_epi32(-1)); }
    static iv select(mv m, iv a, iv b) { return _mm256_blendv_epi8(b, a, m); }
    static fv fselect(mv m, fv a, fv b) { return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m)); }
    static mv is(iv a, std::int32_t b) { return _mm256_cmpeq_epi32(a, _mm256_set1_epi32(b)); }
    static mv at_most(iv a, std::int32_t b) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(b + 1), a); }
    static iv gather_words(const unsigned char* base, iv byte) {
        return _mm256_i32gather_epi32(reinterpret_cast<const int*>(base), byte, 1);
    }
    static fv dequantize(iv q, fv scale, fv bias) { return _mm256_fmadd_ps(_mm256_cvtepi32_ps(q), scale, bias); }
    static iv scan(iv a) {
        a = _mm256_add_epi32(a, _mm256_slli_si256(a, 4)); // within each 128-bit half
        a = _mm256_add_epi32(a, _mm256_slli_si256(a, 8));
        const __m256i low_last = _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(0, 0, 0, 0, 3, 3, 3, 3));
        return _mm256_add_epi32(a, _mm256_blend_epi32(_mm256_setzero_si256(), low_last, 0xf0));
    }
    static std::int32_t last(iv a) { return _mm256_extract_epi32(a, 7); }
    static fv lookup32(const float* table, iv a) { return _mm256_i32gather_ps(table, a, 4); }
    /// The lanes of to[0, 8) set in `mask` take src[0], src[1], ... in order; the others stay.
    static void expand(float* to, const float* src, unsigned mask) {
        struct table {
            std::int32_t index[256][8];
            table() : index{} {
                for (unsigned m = 0; m < 256; ++m)
                    for (unsigned lane = 0, k = 0; lane < 8; ++lane)
                        if ((m >> lane) & 1u) index[m][lane] = static_cast<std::int32_t>(k++);
            }
        };
        static const table t;
        const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        const __m256i set = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(mask)), bit), bit);
        const __m256 v = _mm256_permutevar8x32_ps(_mm256_loadu_ps(src), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.index[mask & 255u])));
        _mm256_storeu_ps(to, _mm256_blendv_ps(_mm256_loadu_ps(to), v, _mm256_castsi256_ps(set)));
    }
};
#endif

#if KEYBLEND_SIMD_AVX512
struct a16 {
    static constexpr unsigned width = 16;
    using iv = __m512i;
    using fv = __m512;
    using mv = __mmask16;
    static iv load_u8(const unsigned char* p) {
        return _mm512_maskz_cvtepu8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static iv load_i(const std::int32_t* p) { return _mm512_loadu_si512(p); }
    static fv load_f(const float* p) { return _mm512_loadu_ps(p); }
    static void store_i(std::int32_t* p, iv v) { _mm512_storeu_si512(p, v); }
    static void store_f(float* p, fv v) { _mm512_storeu_ps(p, v); }
    static iv set_i(std::int32_t v) { return _mm512_set1_epi32(v); }
    static fv set_f(float v) { return _mm512_set1_ps(v); }
    static iv band(iv a, iv b) { return _mm512_and_si512(a, b); }
    static iv srl(iv a, int n) { return _mm512_maskz_srli_epi32(0xffff, a, static_cast<unsigned>(n)); }
    static iv srlv(iv a, iv n) { return _mm512_maskz_srlv_epi32(0xffff, a, n); }
    static iv sllv(iv a, iv n) { return _mm512_maskz_sllv_epi32(0xffff, a, n); }
    static iv add(iv a, iv b) { return _mm512_add_epi32(a, b); }
    static iv sub(iv a, iv b) { return _mm512_sub_epi32(a, b); }
    static iv max(iv a, iv b) { return _mm512_maskz_max_epi32(0xffff, a, b); }
    static fv to_f(iv a) { return _mm512_maskz_cvtepi32_ps(0xffff, a); }
    static fv fadd(fv a, fv b) { return _mm512_add_ps(a, b); }
    static fv fmul(fv a, fv b) { return _mm512_mul_ps(a, b); }
    static fv fdiv(fv a, fv b) { return _mm512_div_ps(a, b); }
    static iv log2(iv a) {
        const __m512i bits = _mm512_castps_si512(to_f(a));
        return _mm512_sub_epi32(srl(bits, 23), _mm512_set1_epi32(127));
    }
    static mv is_zero(iv a) { return _mm512_cmpeq_epi32_mask(a, _mm512_setzero_si512()); }
    static mv fpositive(fv a) { return _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_GT_OQ); }
    static mv mand(mv a, mv b) { return static_cast<mv>(a & b); }
    static mv mnot(mv a) { return static_cast<mv>(~a); }
    static iv select(mv m, iv a, iv b) { return _mm512_mask_blend_epi32(m, b, a); }
    static fv fselect(mv m, fv a, fv b) { return _mm512_mask_blend_ps(m, b, a); }
    static mv is(iv a, std::int32_t b) { return _mm512_cmpeq_epi32_mask(a, _mm512_set1_epi32(b)); }
    static mv at_most(iv a, std::int32_t b) { return _mm512_cmple_epi32_mask(a, _mm512_set1_epi32(b)); }
    // (GCC's unoptimised build expands the gather as a macro that converts the mask to a signed
    // short, which -Wsign-conversion reports; the value is all lanes either way.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-conversion"
#endif
    static iv gather_words(const unsigned char* base, iv byte) {
        return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), 0xffff, byte, base, 1);
    }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    static fv dequantize(iv q, fv scale, fv bias) { return _mm512_fmadd_ps(to_f(q), scale, bias); }
    static iv scan(iv a) {
        const __m512i z = _mm512_setzero_si512();
        a = _mm512_add_epi32(a, _mm512_maskz_alignr_epi32(0xffff, a, z, 15)); // lanes up by 1, 2, 4, 8
        a = _mm512_add_epi32(a, _mm512_maskz_alignr_epi32(0xffff, a, z, 14));
        a = _mm512_add_epi32(a, _mm512_maskz_alignr_epi32(0xffff, a, z, 12));
        return _mm512_add_epi32(a, _mm512_maskz_alignr_epi32(0xffff, a, z, 8));
    }
    static std::int32_t last(iv a) {
        alignas(64) std::int32_t v[16];
        _mm512_store_si512(v, a);
        return v[15];
    }
    static fv lookup32(const float* table, iv a) {
        return _mm512_permutex2var_ps(_mm512_loadu_ps(table), a, _mm512_loadu_ps(table + 16));
    }
    /// The lanes of to[0, 16) set in `mask` take src[0], src[1], ... in order; the others stay.
    static void expand(float* to, const float* src, unsigned mask) {
        _mm512_storeu_ps(to, _mm512_mask_expand_ps(_mm512_loadu_ps(to), static_cast<__mmask16>(mask), _mm512_loadu_ps(src)));
    }
};
#endif

/// The decoder's lanes for a pose lane type.
template <class V>
struct for_lanes {
    using type = s1;
};
#if KEYBLEND_SIMD_AVX2
template <>
struct for_lanes<lanes::f8> {
    using type = a8;
};
#endif
#if KEYBLEND_SIMD_AVX512
template <>
struct for_lanes<lanes::f16> {
    using type = a16;
};
#endif

} // namespace clanes
} // namespace impl
} // namespace keyblend
