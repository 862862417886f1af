// keyblend — a skinned vertex's matrix blended in registers from its palette matrices and
// weights, for the lane types that hold a whole 4x4 matrix in a few registers (f4: SSE2 and NEON;
// f8; f16), and the walk over a group's joints and weights that feeds it. Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_MATRIX_BLEND_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_MATRIX_BLEND_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_MATRIX_BLEND_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_MATRIX_BLEND_HPP
#endif

#include "joints.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

#if KEYBLEND_SIMD_F4

/// Calls f(i, off, wp) for each of the N vertices of a group from v, with i an
/// std::integral_constant (0 .. N-1), off vertex v + i's K palette offsets (clamped in the general
/// mode) and wp its weights; for K = 0 (the dynamic path) off and wp are null. The walk over the
/// joints and weights that every lane type blending whole matrices per vertex shares.
template <int N, int K, class Index, group_mode Mode, class F>
KEYBLEND_FORCE_INLINE void for_each_vertex(const lbs_args& a, std::size_t v, F&& f) {
    // In the packed modes the strides are constants: the vertices' addresses fold into the loads,
    // leaving integer registers for the palette offsets.
    constexpr int implied = implied_of(Mode);
    constexpr std::size_t js = K * sizeof(Index), ws = (K > 0 ? K - (implied == 1) : 0) * sizeof(float);
    constexpr bool general = !packed(Mode);
    const unsigned char* jp = a.joints + v * (general ? a.joint_stride : js);
    const unsigned char* wp = a.weights + v * (general ? a.weight_stride : ws);
    unroll<N>([&](auto i) KEYBLEND_LAMBDA_INLINE {
        if constexpr (K == 0) {
            f(i, nullptr, nullptr);
        } else if constexpr (general) {
            std::uint32_t off[std::size_t(K)];
            fast_joints<K, Index>(jp, off);
            f(i, off, wp);
            jp += a.joint_stride;
            wp += a.weight_stride;
        } else {
            std::uint32_t off[std::size_t(K)];
            // (Only where the last word's exact read takes more than one load, its bytes not a
            // power of 2: 3, 5, 6 or 7; and the whole words end within the group's joints.)
            constexpr std::size_t tail = js % 8, read = (js + 7) / 8 * 8;
            constexpr bool whole = (tail & (tail - 1)) != 0 && decltype(i)::value * js + read <= N * js;
            fast_joints<K, Index, whole>(jp + i * js, off);
            f(i, off, wp + i * ws);
        }
    });
}

/// 16 bytes at p in every 128-bit lane of a V (a plain load for f4), and lane I of each 128-bit
/// lane of x in all four of its floats: how blend_matrix reads a vertex's weights and broadcasts
/// them.
template <class V>
V broadcast_lanes(const unsigned char* p);
#if KEYBLEND_SIMD_SSE2
template <>
KEYBLEND_FORCE_INLINE f4 broadcast_lanes<f4>(const unsigned char* p) {
    return {_mm_loadu_ps(reinterpret_cast<const float*>(p))};
}
template <int I>
KEYBLEND_FORCE_INLINE f4 lane_of_four(f4 x) { return {_mm_shuffle_ps(x.v, x.v, I * 0x55)}; }
#endif
#if KEYBLEND_SIMD_AVX2
template <>
KEYBLEND_FORCE_INLINE f8 broadcast_lanes<f8>(const unsigned char* p) {
    return {_mm256_broadcast_ps(reinterpret_cast<const __m128*>(p))};
}
template <int I>
KEYBLEND_FORCE_INLINE f8 lane_of_four(f8 x) { return {_mm256_shuffle_ps(x.v, x.v, I * 0x55)}; }
#endif
#if KEYBLEND_SIMD_NEON
template <>
KEYBLEND_FORCE_INLINE f4 broadcast_lanes<f4>(const unsigned char* p) {
    return {vld1q_f32(reinterpret_cast<const float*>(p))};
}
template <int I>
KEYBLEND_FORCE_INLINE f4 lane_of_four(f4 x) { return {vdupq_laneq_f32(x.v, I)}; }
#endif

/// One vertex's matrix blended in registers, for the lane types that hold a whole 4x4 matrix in
/// 16 / V::width registers: c[q] = floats q * V::width .. of the blend (column-major). The dynamic
/// path (K = 0) reads vertex v's influences one at a time; the fast path takes its K palette
/// offsets and its weights at wp. Implied: 1 when the last weight is implied, 0 when not, -1 to
/// ask the job.
template <class V, int K, class Index, int Implied>
KEYBLEND_FORCE_INLINE void blend_matrix(const lbs_args& a, std::size_t v, const std::uint32_t* off,
                                       const unsigned char* wp, V (&c)[16 / V::width]) {
    constexpr int parts = int(16 / V::width);
    if constexpr (K == 0) {
        std::size_t joint[8];
        float weight[8];
        const std::size_t n = read_influences<Index>(a, v, joint, weight);
        unroll<parts>([&](auto q) KEYBLEND_LAMBDA_INLINE { c[q] = V::set1(0.0f); });
        for (std::size_t i = 0; i < n; ++i) {
            const float* p = a.palette + 16 * joint[i];
            const V w = V::set1(weight[i]);
            unroll<parts>([&](auto q) KEYBLEND_LAMBDA_INLINE { c[q] = fmadd(w, V::load(p + q * V::width), c[q]); });
        }
    } else {
        (void)v;
        const bool implied = Implied >= 0 ? Implied == 1 : a.implied;
        if constexpr (K == 1 && Implied >= 1) {
            // One influence: the palette matrix itself. Implied, its weight is 1 - 0 (1 * x is x,
            // bit for bit); stored and Implied 2 (group_mode::packed_scaled), the kernel scales
            // the transformed vertices instead: 6 multiplies per 8-vertex group, not 16.
            (void)wp;
            unroll<parts>([&](auto q) KEYBLEND_LAMBDA_INLINE { c[q] = V::load(a.palette + q * V::width + off[0]); });
            return;
        }
        // The weights. 8-wide, up to 3 slots: each a broadcast load of exactly the stored weights,
        // which costs a load but no shuffle (loads are the scarcer resource past 3 slots: two
        // matrix halves per slot). Otherwise one 128-bit load (two for K > 4) in every lane, each
        // weight broadcast by an in-lane shuffle. (weight_read says how many bytes, for
        // simd_guard.)
        V w[std::size_t(K)];
        if constexpr ((V::width == 8 && K <= 3) || V::width == 16) {
            unroll<K>([&](auto i) KEYBLEND_LAMBDA_INLINE {
                float x = 0.0f;
                if constexpr (i + 1 == K && Implied == 1) return; // computed below, not stored
                if (i + 1 < K || !implied) std::memcpy(&x, wp + 4 * i, sizeof x);
                w[i] = V::set1(x);
            });
        } else {
            const V lo = broadcast_lanes<V>(wp);
            V hi = lo;
            if constexpr (K > 4) hi = broadcast_lanes<V>(wp + 16);
            unroll<K>([&](auto i) KEYBLEND_LAMBDA_INLINE {
                w[i] = lane_of_four<i % 4>(i < 4 ? lo : hi);
            });
        }
        if (implied) {
            // 1 - sum of the others, summed in slot order (as read_influences does, from 0: the
            // same bits, since 0 + w differs from w only in the sign of a zero w, and then so
            // does the sum, whose difference from 1 is 1 either way).
            if constexpr (K == 1) {
                w[0] = V::set1(1.0f);
            } else {
                V sum = w[0];
                unroll<K - 2>([&](auto i) KEYBLEND_LAMBDA_INLINE { sum = sum + w[i + 1]; });
                w[K - 1] = V::set1(1.0f) - sum;
            }
        }
        // One base pointer per part, so that each load folds base + offset * 4 into its address.
        unroll<parts>([&](auto q) KEYBLEND_LAMBDA_INLINE {
            const float* base = a.palette + q * V::width;
            c[q] = w[0] * V::load(base + off[0]);
            unroll<K - 1>([&](auto i) KEYBLEND_LAMBDA_INLINE { c[q] = fmadd(w[i + 1], V::load(base + off[i + 1]), c[q]); });
        });
    }
}

/// The blended matrices of the N vertices from v, each whole: c[i][q] = floats q * V::width .. of
/// vertex v + i's (blend_matrix). False (and nothing blended) when a packed-mode group holds an
/// index outside the palette. The lane types of four floats then transpose them into lanes.
template <std::size_t N, class V, int K, class Index, group_mode Mode>
KEYBLEND_FORCE_INLINE bool blend_vertices(const lbs_args& a, std::size_t v, V (&c)[N][16 / V::width]) {
    if constexpr (K > 0)
        if (!group_joints_ok<N, K, Index, Mode>(a, v)) return false;
    for_each_vertex<int(N), K, Index, Mode>(
        a, v, [&](auto i, const std::uint32_t* off, const unsigned char* wp) KEYBLEND_LAMBDA_INLINE {
            blend_matrix<V, K, Index, implied_of(Mode)>(a, v + std::size_t(i), off, wp, c[i]);
        });
    return true;
}

#endif

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_MATRIX_BLEND_HPP
