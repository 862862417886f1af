// keyblend — AVX-512 skinning by quads: one vertex per 128-bit lane, each vertex's matrix blended
// whole in one 512-bit register. Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_QUADS_AVX512_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_QUADS_AVX512_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_QUADS_AVX512_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_QUADS_AVX512_HPP
#endif

#include "kernel.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

#if KEYBLEND_SIMD_AVX512
/// The 8 vertices from v of a job whose streams are simple (lbs_args::simple) without tangents,
/// as two quads of one vertex per 128-bit lane (array of structures): the AVX-512 kernels' way for
/// one slot, and for 2 to 4 with lbs_args::quads. Each vertex's matrix is blended in one 512-bit
/// register (blend_matrix<f16>: for one slot, the palette matrix; K slots, one 512-bit FMA each);
/// a quad's four matrices are transposed by 128-bit blocks into its columns c0..c3 (vertex i's
/// column in lane i); its coordinates are broadcast within lanes, and the columns take them by
/// FMA. No transpose into lanes of floats and no packed-xyz shuffles: 18 512-bit shuffles a quad.
/// When quads are used (one slot always, 2 to 4 slots per tuning::prefer_quads, 5 to 8 never)
/// and why: impl/simd/tuning.hpp. The FMAs are those of blend_matrix and
/// transform_simple in the same order, so every vertex's bits are the 8-lane kernel's (tests
/// compare them).
// 512-bit shuffles in their all-lanes maskz forms, the same instructions: GCC 12's plain forms
// start from _mm512_undefined_ps, which -Wmaybe-uninitialized reports once inlined.
template <int Imm>
KEYBLEND_FORCE_INLINE __m512 in_lanes(__m512 x) { return _mm512_maskz_permute_ps(0xFFFF, x, Imm); }
template <int Imm>
KEYBLEND_FORCE_INLINE __m512 blocks(__m512 x, __m512 y) { return _mm512_maskz_shuffle_f32x4(0xFFFF, x, y, Imm); }
KEYBLEND_FORCE_INLINE __m512 permute(__m512i index, __m512 x) { return _mm512_maskz_permutexvar_ps(0xFFFF, index, x); }
/// The 4 floats at p in every 128-bit block.
KEYBLEND_FORCE_INLINE __m512 every_block(const float* p) { return _mm512_maskz_broadcast_f32x4(0xFFFF, _mm_loadu_ps(p)); }

/// True when the 4 vertices from u (packed, K stored weights each) use only their first slot:
/// the others are all weight 0 (a NaN is not 0), read in one masked load of the quad's 4K weights.
template <int K>
KEYBLEND_FORCE_INLINE bool quad_one_slot(const lbs_args& a, std::size_t u) {
    static_assert(K >= 2 && K <= 4, "2 to 4 slots");
    const float* w = reinterpret_cast<const float*>(a.weights) + u * K;
    constexpr __mmask16 quad = __mmask16((1u << (4 * K)) - 1);
    constexpr __mmask16 firsts = __mmask16(1u | (1u << K) | (1u << (2 * K)) | (1u << (3 * K)));
    return _mm512_mask_cmp_ps_mask(__mmask16(quad & ~firsts), _mm512_maskz_loadu_ps(quad, w), _mm512_setzero_ps(),
                                   _CMP_NEQ_UQ) == 0;
}

/// A quad's four 512-bit matrices transposed by 128-bit blocks into its columns: c[j] = column j
/// of the four vertices, vertex i's in lane i.
KEYBLEND_FORCE_INLINE void quad_transpose(const __m512 (&m)[4], __m512 (&c)[4]) {
    const __m512 t0 = blocks<0x44>(m[0], m[1]); // a0 a1 b0 b1
    const __m512 t1 = blocks<0xEE>(m[0], m[1]); // a2 a3 b2 b3
    const __m512 t2 = blocks<0x44>(m[2], m[3]);
    const __m512 t3 = blocks<0xEE>(m[2], m[3]);
    c[0] = blocks<0x88>(t0, t2); // a0 b0 c0 d0
    c[1] = blocks<0xDD>(t0, t2);
    c[2] = blocks<0x88>(t1, t3);
    c[3] = blocks<0xDD>(t1, t3);
}

/// The columns of the quad from u blending the first B of its K slots: cj = column j of the four
/// vertices, vertex i's in lane i.
template <int K, int B, class Index, group_mode Mode>
KEYBLEND_FORCE_INLINE void quad_columns(const lbs_args& a, std::size_t u, __m512 (&c)[4]) {
    if constexpr (B == 1) {
        std::uint32_t offset;
        if (one_joint<4, K, Index>(a, u, offset)) {
            // One joint for the quad: each column broadcast to the four lanes, no transpose (18
            // shuffles a quad -> 10). Unweighted (one slot, implied or scaled afterwards: the palette
            // matrix, as blend_matrix gives it), or times each vertex's first weight (stored: w * M,
            // as blend_matrix's w[0] * M).
            const float* p = matrix_at(a, offset);
            unroll<4>([&](auto j) KEYBLEND_LAMBDA_INLINE { c[j] = every_block(p + 4 * j); });
            if constexpr (implied_of(Mode) == 0) {
                // The quad's 4K weights in one load, each vertex's first spread over its lane.
                static_assert(K <= 4, "a quad's weights in one register");
                const float* w = reinterpret_cast<const float*>(a.weights) + u * K;
                const __m512i first_of = _mm512_setr_epi32(0, 0, 0, 0, K, K, K, K, 2 * K, 2 * K, 2 * K, 2 * K, 3 * K,
                                                           3 * K, 3 * K, 3 * K);
                const __m512 first = permute(first_of, _mm512_maskz_loadu_ps(__mmask16((1u << (4 * K)) - 1), w));
                unroll<4>([&](auto j) KEYBLEND_LAMBDA_INLINE { c[j] = _mm512_mul_ps(first, c[j]); });
            }
            return;
        }
    }
    __m512 m[4];
    for_each_vertex<4, K, Index, Mode>(a, u, [&](auto i, const std::uint32_t* off, const unsigned char* wp) KEYBLEND_LAMBDA_INLINE {
        f16 b[1];
        blend_matrix<f16, B, Index, implied_of(Mode)>(a, u + std::size_t(i), off, wp, b);
        m[i] = b[0].v;
    });
    quad_transpose(m, c);
}

/// Words: the normals go out as words (layout::words), a constant so that the float kernels
/// carry none of the packing (their loop is chosen once per range).
template <int K, class Index, group_mode Mode, int Streams, bool Words>
KEYBLEND_FORCE_INLINE void aos_group(const lbs_args& a, std::size_t v) {
    // group_mode::packed_scaled: w (M v), each vertex's weight in its lane; skipped when the
    // group's weights are all 1 (as transform_any_mode).
    bool scale = false;
    __m512 weights = _mm512_setzero_ps();
    if constexpr (Mode == group_mode::packed_scaled) {
        weights = _mm512_maskz_loadu_ps(0x00FF, reinterpret_cast<const float*>(a.weights) + v);
        scale = _mm512_mask_cmp_ps_mask(0x00FF, weights, _mm512_set1_ps(1.0f), _CMP_EQ_OQ) != 0x00FF;
    }
    // c[h][j]: column j of quad h's four vertices, vertex i's in lane i.
    __m512 c[2][4];
    unroll<2>([&](auto h) KEYBLEND_LAMBDA_INLINE {
        const std::size_t u = v + 4 * std::size_t(h);
        if constexpr (Mode == group_mode::packed && K >= 2 && K <= 4) {
            // The loader's layout, when the mesh has unused slots (skip_zero_slots): a quad whose
            // vertices use one slot (a rigid part's) blends that
            // slot only, and broadcasts its matrix when the four share its joint; other quads
            // blend all K (see the tuning table).
            if (a.skip_zero_slots && quad_one_slot<K>(a, u)) {
                quad_columns<K, 1, Index, Mode>(a, u, c[h]);
                return;
            }
        }
        quad_columns<K, K, Index, Mode>(a, u, c[h]);
    });
    // A stream's 24 floats of the group in two 512-bit loads (floats 0-15 and 8-23), and back in
    // two 512-bit stores (the second writes floats 8-15 again, with the same values): exactly the
    // group's 96 bytes are read and written, with no masks (see the tuning table). Each quad's 12
    // floats one vertex per lane (x y z z).
    const __m512i in_lo = _mm512_setr_epi32(0, 1, 2, 2, 3, 4, 5, 5, 6, 7, 8, 8, 9, 10, 11, 11);
    const __m512i in_hi = _mm512_setr_epi32(4, 5, 6, 6, 7, 8, 9, 9, 10, 11, 12, 12, 13, 14, 15, 15);
    const __m512i out_lo = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 20);
    const __m512i out_hi = _mm512_setr_epi32(10, 12, 13, 14, 16, 17, 18, 20, 21, 22, 24, 25, 26, 28, 29, 30);
    const auto load = [&](const in_stream& s, __m512 (&q)[2]) KEYBLEND_LAMBDA_INLINE {
        const float* p = reinterpret_cast<const float*>(s.data) + 3 * v;
        q[0] = permute(in_lo, _mm512_loadu_ps(p));
        q[1] = permute(in_hi, _mm512_loadu_ps(p + 8));
    };
    const auto store = [&](const out_stream& s, __m512 (&r)[2], auto words) KEYBLEND_LAMBDA_INLINE {
        if (scale) {
            const __m512i lane_of = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
            r[0] = _mm512_mul_ps(r[0], permute(lane_of, weights));
            r[1] = _mm512_mul_ps(r[1], permute(_mm512_add_epi32(lane_of, _mm512_set1_epi32(4)), weights));
        }
        if constexpr (decltype(words)::value) {
            // Packed normals: the 8 vertices' x, y and z into lanes of floats, packed there.
            const __m512i x_of = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0);
            const auto lanes_of = [&](int component) KEYBLEND_LAMBDA_INLINE {
                const __m512i at = _mm512_add_epi32(x_of, _mm512_set1_epi32(component));
                return f8{_mm512_maskz_extractf32x8_ps(0xFF, _mm512_permutex2var_ps(r[0], at, r[1]), 0)};
            };
            store_packed<false>(s, v, lanes_of(0), lanes_of(1), lanes_of(2));
            return;
        }
        float* p = reinterpret_cast<float*>(s.data) + 3 * v;
        _mm512_storeu_ps(p, _mm512_permutex2var_ps(r[0], out_lo, r[1]));
        _mm512_storeu_ps(p + 8, _mm512_permutex2var_ps(r[0], out_hi, r[1]));
    };
    __m512 q[2], r[2];
    load(a.pos, q);
    unroll<2>([&](auto h) KEYBLEND_LAMBDA_INLINE {
        const __m512 pz = _mm512_fmadd_ps(c[h][2], in_lanes<0xAA>(q[h]), c[h][3]);
        r[h] = _mm512_fmadd_ps(c[h][0], in_lanes<0x00>(q[h]), _mm512_fmadd_ps(c[h][1], in_lanes<0x55>(q[h]), pz));
    });
    store(a.out_pos, r, std::false_type{});
    if (has_normals(Streams) && (Streams >= 0 || a.nrm.data)) {
        load(a.nrm, q);
        unroll<2>([&](auto h) KEYBLEND_LAMBDA_INLINE {
            const __m512 nz = _mm512_mul_ps(c[h][2], in_lanes<0xAA>(q[h]));
            r[h] = _mm512_fmadd_ps(c[h][0], in_lanes<0x00>(q[h]), _mm512_fmadd_ps(c[h][1], in_lanes<0x55>(q[h]), nz));
        });
        store(a.out_nrm, r, std::bool_constant<Words>{});
    }
}
#endif

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_QUADS_AVX512_HPP
