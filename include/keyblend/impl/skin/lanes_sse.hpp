// keyblend — 4-lane skinning (SSE2): shuffles and transposes (shared with the 8-lane kernels, which
// use them within 128-bit lanes), lane_ops<f4>. The matrix blend is matrix_blend.hpp's. Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_LANES_SSE_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_LANES_SSE_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_LANES_SSE_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_LANES_SSE_HPP
#endif

#include "matrix_blend.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

// ---------------------------------------------------------------------------------------------
// f4: SSE2 (FMA when the compiler targets it).
// ---------------------------------------------------------------------------------------------
#if KEYBLEND_SIMD_SSE2

// In-lane shuffles under one name for __m128 (SSE2) and __m256 (AVX2, AVX-512), so that the
// transposes below, which work within 128-bit lanes, are written once for both.
KEYBLEND_FORCE_INLINE __m128 unpacklo(__m128 a, __m128 b) { return _mm_unpacklo_ps(a, b); }
KEYBLEND_FORCE_INLINE __m128 unpackhi(__m128 a, __m128 b) { return _mm_unpackhi_ps(a, b); }
template <int Imm>
KEYBLEND_FORCE_INLINE __m128 shuffle(__m128 a, __m128 b) { return _mm_shuffle_ps(a, b, Imm); }
#if KEYBLEND_SIMD_AVX2
KEYBLEND_FORCE_INLINE __m256 unpacklo(__m256 a, __m256 b) { return _mm256_unpacklo_ps(a, b); }
KEYBLEND_FORCE_INLINE __m256 unpackhi(__m256 a, __m256 b) { return _mm256_unpackhi_ps(a, b); }
template <int Imm>
KEYBLEND_FORCE_INLINE __m256 shuffle(__m256 a, __m256 b) { return _mm256_shuffle_ps(a, b, Imm); }
#endif

/// In each 128-bit lane: rows of 4 floats r[0..3] -> x, y, z of the four rows (the w row dropped).
template <class R>
KEYBLEND_FORCE_INLINE void transpose3(const R (&r)[4], R& x, R& y, R& z) {
    const R t0 = unpacklo(r[0], r[1]), t1 = unpacklo(r[2], r[3]);
    const R t2 = unpackhi(r[0], r[1]), t3 = unpackhi(r[2], r[3]);
    x = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(t0, t1);
    y = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(t0, t1);
    z = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(t2, t3);
}

/// In each 128-bit lane: rows r[0..3] <-> x, y, z, w of the four rows (its own inverse).
template <class R>
KEYBLEND_FORCE_INLINE void transpose4(R (&r)[4]) {
    const R t0 = unpacklo(r[0], r[1]), t1 = unpacklo(r[2], r[3]);
    const R t2 = unpackhi(r[0], r[1]), t3 = unpackhi(r[2], r[3]);
    r[0] = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(t0, t1);
    r[1] = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(t0, t1);
    r[2] = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(t2, t3);
    r[3] = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(t2, t3);
}

/// In each 128-bit lane: x, y, z of four rows -> the rows, each x y z z (stores write 12 bytes).
template <class R>
KEYBLEND_FORCE_INLINE void rows_of(R x, R y, R z, R (&r)[4]) {
    const R xy01 = unpacklo(x, y), xy23 = unpackhi(x, y);
    const R zz01 = unpacklo(z, z), zz23 = unpackhi(z, z);
    r[0] = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(xy01, zz01);
    r[1] = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(xy01, zz01);
    r[2] = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(xy23, zz23);
    r[3] = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(xy23, zz23);
}

template <>
struct lane_ops<f4> {
    using V = f4;

    template <class Index>
    static std::size_t guard(const lbs_args& a, bool fast) { return simd_guard<Index>(a, fast, V::width); }

    /// False (and nothing blended) when a packed-mode group holds an index outside the palette.
    template <int K, class Index, group_mode Mode>
    KEYBLEND_FORCE_INLINE static bool blend(const lbs_args& a, std::size_t v, V (&m)[12]) {
        V c[4][4]; // c[i][q]: column q of vertex v + i
        if (!blend_vertices<4, V, K, Index, Mode>(a, v, c)) return false;
        unroll<4>([&](auto q) KEYBLEND_LAMBDA_INLINE {
            const __m128 r[4] = {c[0][q].v, c[1][q].v, c[2][q].v, c[3][q].v};
            transpose3(r, m[3 * q].v, m[3 * q + 1].v, m[3 * q + 2].v);
        });
        return true;
    }

    KEYBLEND_FORCE_INLINE static void load3(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
        switch (s.kind) {
        case layout::packed: {
            const float* p = s.at(v);
            const __m128 l0 = _mm_loadu_ps(p), l1 = _mm_loadu_ps(p + 4), l2 = _mm_loadu_ps(p + 8);
            // l0 = x0 y0 z0 x1, l1 = y1 z1 x2 y2, l2 = z2 x3 y3 z3
            const __m128 x23 = _mm_shuffle_ps(l1, l2, _MM_SHUFFLE(1, 1, 2, 2)); // x2 x2 x3 x3
            x.v = _mm_shuffle_ps(l0, x23, _MM_SHUFFLE(2, 0, 3, 0));
            const __m128 y01 = _mm_shuffle_ps(l0, l1, _MM_SHUFFLE(0, 0, 1, 1)); // y0 y0 y1 y1
            const __m128 y23 = _mm_shuffle_ps(l1, l2, _MM_SHUFFLE(2, 2, 3, 3)); // y2 y2 y3 y3
            y.v = _mm_shuffle_ps(y01, y23, _MM_SHUFFLE(2, 0, 2, 0));
            const __m128 z01 = _mm_shuffle_ps(l0, l1, _MM_SHUFFLE(1, 1, 2, 2)); // z0 z0 z1 z1
            z.v = _mm_shuffle_ps(z01, l2, _MM_SHUFFLE(3, 0, 2, 0));
            return;
        }
        case layout::interleaved: {
            const __m128 r[4] = {_mm_loadu_ps(s.at(v)), _mm_loadu_ps(s.at(v + 1)), _mm_loadu_ps(s.at(v + 2)),
                                 _mm_loadu_ps(s.at(v + 3))};
            transpose3(r, x.v, y.v, z.v);
            return;
        }
        default: return; // planar and general streams: load_xyz
        }
    }

    KEYBLEND_FORCE_INLINE static void load4(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
        __m128 r[4] = {_mm_loadu_ps(s.at(v)), _mm_loadu_ps(s.at(v + 1)), _mm_loadu_ps(s.at(v + 2)),
                       _mm_loadu_ps(s.at(v + 3))};
        transpose4(r);
        x.v = r[0];
        y.v = r[1];
        z.v = r[2];
        w.v = r[3];
    }

    /// (No non-temporal stores here: see the tuning table.)
    KEYBLEND_FORCE_INLINE static void put(const out_stream&, float* p, __m128 r) { _mm_storeu_ps(p, r); }

    KEYBLEND_FORCE_INLINE static void store3(const out_stream& s, std::size_t v, V x, V y, V z) {
        switch (s.kind) {
        case layout::packed: {
            const __m128 xy01 = _mm_unpacklo_ps(x.v, y.v); // x0 y0 x1 y1
            const __m128 xy23 = _mm_unpackhi_ps(x.v, y.v); // x2 y2 x3 y3
            const __m128 zx01 = _mm_shuffle_ps(z.v, x.v, _MM_SHUFFLE(1, 1, 0, 0)); // z0 z0 x1 x1
            const __m128 yz11 = _mm_shuffle_ps(y.v, z.v, _MM_SHUFFLE(1, 1, 1, 1)); // y1 y1 z1 z1
            const __m128 zx23 = _mm_shuffle_ps(z.v, xy23, _MM_SHUFFLE(2, 2, 2, 2)); // z2 z2 x3 x3
            const __m128 yz33 = _mm_shuffle_ps(xy23, z.v, _MM_SHUFFLE(3, 3, 3, 3)); // y3 y3 z3 z3
            float* p = s.at(v);
            put(s, p, _mm_shuffle_ps(xy01, zx01, _MM_SHUFFLE(3, 0, 1, 0)));     // x0 y0 z0 x1
            put(s, p + 4, _mm_shuffle_ps(yz11, xy23, _MM_SHUFFLE(1, 0, 2, 0))); // y1 z1 x2 y2
            put(s, p + 8, _mm_shuffle_ps(zx23, yz33, _MM_SHUFFLE(2, 0, 2, 0))); // z2 x3 y3 z3
            return;
        }
        case layout::interleaved: {
            // Exactly 12 bytes per vertex: what follows xyz in the caller's buffer is not ours.
            __m128 r[4];
            rows_of(x.v, y.v, z.v, r);
            for (int i = 0; i < 4; ++i) {
                float* p = s.at(v + std::size_t(i));
                _mm_storel_pi(reinterpret_cast<__m64*>(p), r[i]);
                _mm_store_ss(p + 2, _mm_movehl_ps(r[i], r[i]));
            }
            return;
        }
        default: return; // planar and general streams: store_xyz
        }
    }

    KEYBLEND_FORCE_INLINE static void store4(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
        __m128 r[4] = {x.v, y.v, z.v, w.v};
        transpose4(r);
        for (int i = 0; i < 4; ++i) _mm_storeu_ps(s.at(v + std::size_t(i)), r[i]);
    }
};
#endif

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_LANES_SSE_HPP
