// keyblend — 4-lane skinning on NEON (AArch64): lane_ops<f4>, the moves between vertex streams
// and lanes by NEON's structure loads and stores. Internal.
//
// The matrices are blended as on SSE2 (blend_vertices: one vertex's palette matrices weighted in
// four registers, then transposed into lanes). Packed xyz and xyzw streams need no shuffles
// here: ld3 / ld4 read four vertices and split their components into three or four registers,
// st3 / st4 write them back interleaved, each reading or writing exactly the four vertices' bytes.
// Interleaved streams (a stride longer than the attribute) read 16 bytes per vertex and transpose,
// as SSE2 does, and write each vertex's 12 or 16 bytes with one single-lane structure store
// (st3 / st4 of lane i), never touching what follows them.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_LANES_NEON_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_LANES_NEON_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_LANES_NEON_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_LANES_NEON_HPP
#endif

#include "matrix_blend.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

#if KEYBLEND_SIMD_NEON

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
            float32x4_t r[4] = {c[0][q].v, c[1][q].v, c[2][q].v, c[3][q].v};
            lanes::transpose4(r); // (the w row, r[3], is not used: the compiler drops it)
            m[3 * q].v = r[0];
            m[3 * q + 1].v = r[1];
            m[3 * q + 2].v = r[2];
        });
        return true;
    }

    /// Four rows of 16 bytes from vertex v on, transposed: r[c] = component c of the four.
    KEYBLEND_FORCE_INLINE static void load_rows(const in_stream& s, std::size_t v, float32x4_t (&r)[4]) {
        for (std::size_t i = 0; i < 4; ++i) r[i] = vld1q_f32(s.at(v + i));
        lanes::transpose4(r);
    }

    KEYBLEND_FORCE_INLINE static void load3(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
        switch (s.kind) {
        case layout::packed: {
            const float32x4x3_t t = vld3q_f32(s.at(v));
            x.v = t.val[0];
            y.v = t.val[1];
            z.v = t.val[2];
            return;
        }
        case layout::interleaved: {
            float32x4_t r[4];
            load_rows(s, v, r);
            x.v = r[0];
            y.v = r[1];
            z.v = r[2];
            return;
        }
        default: return; // planar and general streams: load_xyz
        }
    }

    /// Packed or interleaved xyzw streams (the kernels call it for no other layout).
    KEYBLEND_FORCE_INLINE static void load4(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
        if (s.kind == layout::packed) {
            const float32x4x4_t t = vld4q_f32(s.at(v));
            x.v = t.val[0];
            y.v = t.val[1];
            z.v = t.val[2];
            w.v = t.val[3];
            return;
        }
        float32x4_t r[4];
        load_rows(s, v, r);
        x.v = r[0];
        y.v = r[1];
        z.v = r[2];
        w.v = r[3];
    }

    KEYBLEND_FORCE_INLINE static void store3(const out_stream& s, std::size_t v, V x, V y, V z) {
        const float32x4x3_t t = {{x.v, y.v, z.v}};
        switch (s.kind) {
        case layout::packed: vst3q_f32(s.at(v), t); return;
        case layout::interleaved:
            // Exactly 12 bytes per vertex: what follows xyz in the caller's buffer is not ours.
            vst3q_lane_f32(s.at(v), t, 0);
            vst3q_lane_f32(s.at(v + 1), t, 1);
            vst3q_lane_f32(s.at(v + 2), t, 2);
            vst3q_lane_f32(s.at(v + 3), t, 3);
            return;
        default: return; // planar and general streams: store_xyz
        }
    }

    /// Packed or interleaved xyzw streams (the kernels call it for no other layout).
    KEYBLEND_FORCE_INLINE static void store4(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
        const float32x4x4_t t = {{x.v, y.v, z.v, w.v}};
        if (s.kind == layout::packed) {
            vst4q_f32(s.at(v), t);
            return;
        }
        vst4q_lane_f32(s.at(v), t, 0);
        vst4q_lane_f32(s.at(v + 1), t, 1);
        vst4q_lane_f32(s.at(v + 2), t, 2);
        vst4q_lane_f32(s.at(v + 3), t, 3);
    }
};

#endif

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_LANES_NEON_HPP
