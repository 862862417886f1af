// keyblend — 8-lane skinning (AVX2 + FMA, and AVX-512 with EVEX encodings): lane_ops<f8>.
// Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_LANES_AVX2_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_LANES_AVX2_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_LANES_AVX2_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_LANES_AVX2_HPP
#endif

#include "lanes_sse.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

// ---------------------------------------------------------------------------------------------
// f8: AVX2 + FMA.
// ---------------------------------------------------------------------------------------------
#if KEYBLEND_SIMD_AVX2

/// The first stored weight of each of the 8 vertices from v (packed, K stored weights each).
template <int K>
KEYBLEND_FORCE_INLINE f8 first_weights(const lbs_args& a, std::size_t v) {
    const float* w = reinterpret_cast<const float*>(a.weights) + v * K;
    if constexpr (K == 1) {
        return f8::load(w);
    } else {
        // (Eight scalar loads: only groups of one joint take them.)
        return {_mm256_setr_ps(w[0], w[K], w[2 * K], w[3 * K], w[4 * K], w[5 * K], w[6 * K], w[7 * K])};
    }
}

template <>
struct lane_ops<f8> {
    using V = f8;

    template <class Index>
    static std::size_t guard(const lbs_args& a, bool fast) { return simd_guard<Index>(a, fast, V::width); }

    /// Blends vertices v .. v + 7, four at a time (so the live registers fit AVX2's sixteen), each
    /// four partly transposed (transpose3 within lanes): ua / ub hold columns 0|1 / 2|3 of
    /// vertices 4h .. 4h + 3, ua[h][r] = row r of column 0 (low lane) and column 1 (high lane).
    template <int K, class Index, group_mode Mode, int B = K>
    KEYBLEND_FORCE_INLINE static void blend_group(const lbs_args& a, std::size_t v, __m256 (&ua)[2][3],
                                                 __m256 (&ub)[2][3]) {
        __m256 sa[4], sb[4];
        for_each_vertex<8, K, Index, Mode>(
            a, v, [&](auto n, const std::uint32_t* off, const unsigned char* wp) KEYBLEND_LAMBDA_INLINE {
                constexpr int i = decltype(n)::value % 4, h = decltype(n)::value / 4;
                V c[2];
                blend_matrix<V, B, Index, implied_of(Mode)>(a, v + std::size_t(n), off, wp, c);
                sa[i] = c[0].v;
                sb[i] = c[1].v;
                if constexpr (i == 3) {
                    transpose3(sa, ua[h][0], ua[h][1], ua[h][2]);
                    transpose3(sb, ub[h][0], ub[h][1], ub[h][2]);
                }
            });
    }

    /// False (and nothing blended) when a packed-mode group holds an index outside the palette.
    /// B: the first B of the K slots are blended (slots_used).
    template <int K, class Index, group_mode Mode, int B = K>
    KEYBLEND_FORCE_INLINE static bool blend(const lbs_args& a, std::size_t v, V (&m)[12]) {
        if constexpr (K > 0)
            if (!group_joints_ok<8, K, Index, Mode>(a, v)) return false;
        if constexpr (B == 1 && packed(Mode)) {
            std::uint32_t offset;
            if (one_joint<8, K, Index>(a, v, offset)) {
                // Each element of the matrix broadcast (a load, no shuffle); with a stored weight
                // blended (group_mode::packed), times the group's 8 first weights: w * M, as the
                // blend. (B == 1 < K only with stored weights: slots_used.)
                const float* p = matrix_at(a, offset);
                V w = V::set1(1.0f);
                if constexpr (implied_of(Mode) == 0) w = first_weights<K>(a, v);
                unroll<12>([&](auto e) KEYBLEND_LAMBDA_INLINE {
                    m[e] = V{_mm256_broadcast_ss(p + 4 * (e / 3) + e % 3)};
                    if constexpr (implied_of(Mode) == 0) m[e] = w * m[e];
                });
                return true;
            }
        }
        __m256 ua[2][3], ub[2][3];
        blend_group<K, Index, Mode, B>(a, v, ua, ub);
        for (int r = 0; r < 3; ++r) {
            m[r].v = _mm256_permute2f128_ps(ua[0][r], ua[1][r], 0x20);     // column 0
            m[3 + r].v = _mm256_permute2f128_ps(ua[0][r], ua[1][r], 0x31); // column 1
            m[6 + r].v = _mm256_permute2f128_ps(ub[0][r], ub[1][r], 0x20); // column 2
            m[9 + r].v = _mm256_permute2f128_ps(ub[0][r], ub[1][r], 0x31); // translation
        }
        return true;
    }

    /// 16 bytes of each of eight vertices: vertex i in the low lane of r[i], i + 4 in the high lane.
    KEYBLEND_FORCE_INLINE static void load_rows(const in_stream& s, std::size_t v, __m256 (&r)[4]) {
        const unsigned char* lo = s.data + v * s.stride;
        const unsigned char* hi = lo + 4 * s.stride;
        unroll<4>([&](auto i) KEYBLEND_LAMBDA_INLINE {
            r[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(reinterpret_cast<const float*>(lo))),
                                        _mm_loadu_ps(reinterpret_cast<const float*>(hi)), 1);
            lo += s.stride;
            hi += s.stride;
        });
    }

    KEYBLEND_FORCE_INLINE static void load3(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
        switch (s.kind) {
        case layout::packed: {
            const float* p = s.at(v);
            const __m256 l0 = _mm256_loadu_ps(p), l1 = _mm256_loadu_ps(p + 8);
            const __m256 l2 = _mm256_loadu_ps(p + 16);
            // Lanes: m03 = vertices 0,1 | 4,5 (x0 y0 z0 x1 | x4 y4 z4 x5), m14 = (y1 z1 x2 y2 |
            // y5 z5 x6 y6), m25 = (z2 x3 y3 z3 | z6 x7 y7 z7); then the SSE shuffles per lane.
            const __m256 m03 = _mm256_blend_ps(l0, l1, 0xF0);
            const __m256 m14 = _mm256_permute2f128_ps(l0, l2, 0x21);
            const __m256 m25 = _mm256_blend_ps(l1, l2, 0xF0);
            const __m256 xy = _mm256_shuffle_ps(m14, m25, _MM_SHUFFLE(2, 1, 3, 2));
            const __m256 yz = _mm256_shuffle_ps(m03, m14, _MM_SHUFFLE(1, 0, 2, 1));
            x.v = _mm256_shuffle_ps(m03, xy, _MM_SHUFFLE(2, 0, 3, 0));
            y.v = _mm256_shuffle_ps(yz, xy, _MM_SHUFFLE(3, 1, 2, 0));
            z.v = _mm256_shuffle_ps(yz, m25, _MM_SHUFFLE(3, 0, 3, 1));
            return;
        }
        case layout::interleaved: {
            __m256 r[4];
            load_rows(s, v, r);
            transpose3(r, x.v, y.v, z.v);
            return;
        }
        default: return; // planar and general streams: load_xyz
        }
    }

    KEYBLEND_FORCE_INLINE static void load4(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
        __m256 r[4];
        load_rows(s, v, r);
        transpose4(r);
        x.v = r[0];
        y.v = r[1];
        z.v = r[2];
        w.v = r[3];
    }

    /// Non-temporal stores only 32 bytes at a time, 32-byte aligned (run_lbs arranges it; why not
    /// 16 bytes: the tuning table).
    KEYBLEND_FORCE_INLINE static void put(const out_stream& s, float* p, __m256 r) {
        if (s.streaming)
            _mm256_stream_ps(p, r);
        else
            _mm256_storeu_ps(p, r);
    }

    KEYBLEND_FORCE_INLINE static void store3(const out_stream& s, std::size_t v, V x, V y, V z) {
        switch (s.kind) {
        case layout::packed: {
            // The inverse of load3's packed case.
            const __m256 rxy = _mm256_shuffle_ps(x.v, y.v, _MM_SHUFFLE(2, 0, 2, 0));
            const __m256 ryz = _mm256_shuffle_ps(y.v, z.v, _MM_SHUFFLE(3, 1, 3, 1));
            const __m256 rzx = _mm256_shuffle_ps(z.v, x.v, _MM_SHUFFLE(3, 1, 2, 0));
            const __m256 r03 = _mm256_shuffle_ps(rxy, rzx, _MM_SHUFFLE(2, 0, 2, 0));
            const __m256 r14 = _mm256_shuffle_ps(ryz, rxy, _MM_SHUFFLE(3, 1, 2, 0));
            const __m256 r25 = _mm256_shuffle_ps(rzx, ryz, _MM_SHUFFLE(3, 1, 3, 1));
            float* p = s.at(v);
            put(s, p, _mm256_permute2f128_ps(r03, r14, 0x20));
            put(s, p + 8, _mm256_blend_ps(r25, r03, 0xF0));
            put(s, p + 16, _mm256_permute2f128_ps(r14, r25, 0x31));
            return;
        }
        case layout::interleaved: {
            // Exactly 12 bytes per vertex: what follows xyz in the caller's buffer is not ours.
            __m256 r[4];
            rows_of(x.v, y.v, z.v, r);
            unsigned char* p = s.data + v * s.stride;
            unsigned char* q = p + 4 * s.stride;
            unroll<4>([&](auto i) KEYBLEND_LAMBDA_INLINE {
                const __m128 lo = _mm256_castps256_ps128(r[i]), hi = _mm256_extractf128_ps(r[i], 1);
                _mm_storel_pi(reinterpret_cast<__m64*>(p), lo);
                _mm_store_ss(reinterpret_cast<float*>(p) + 2, _mm_movehl_ps(lo, lo));
                _mm_storel_pi(reinterpret_cast<__m64*>(q), hi);
                _mm_store_ss(reinterpret_cast<float*>(q) + 2, _mm_movehl_ps(hi, hi));
                p += s.stride;
                q += s.stride;
            });
            return;
        }
        default: return; // planar and general streams: store_xyz
        }
    }

    KEYBLEND_FORCE_INLINE static void store4(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
        __m256 r[4] = {x.v, y.v, z.v, w.v};
        transpose4(r);
        unsigned char* p = s.data + v * s.stride;
        unsigned char* q = p + 4 * s.stride;
        unroll<4>([&](auto i) KEYBLEND_LAMBDA_INLINE {
            _mm_storeu_ps(reinterpret_cast<float*>(p), _mm256_castps256_ps128(r[i]));
            _mm_storeu_ps(reinterpret_cast<float*>(q), _mm256_extractf128_ps(r[i], 1));
            p += s.stride;
            q += s.stride;
        });
    }
};
#endif

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_LANES_AVX2_HPP
