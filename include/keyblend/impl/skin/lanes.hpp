// keyblend — the skinning kernels' moves between vertex streams and lanes, one lane type at a time
// (lane_ops), starting with the scalar reference (f1). Internal: namespace keyblend::impl::skin.
//
// How a group of V::width vertices is skinned (8 lanes for AVX2 and AVX-512, 4 for SSE2 and NEON,
// 1 for the scalar reference): kernel.hpp and run.hpp put these pieces together.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_LANES_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_LANES_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_LANES_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_LANES_HPP
#endif

#include "../simd/isa.hpp"
#include "../simd/lanes.hpp"
#include "streams.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

// The lane types of impl/simd/lanes.hpp; the skinning kernels use 8 lanes at most (see the
// tuning table), so `widest` here is f8 on AVX-512 too.
using lanes::f1;
#if KEYBLEND_SIMD_F4
using lanes::f4;
#endif
#if KEYBLEND_SIMD_AVX2
using lanes::f8;
#endif
#if KEYBLEND_SIMD_AVX512
/// One 4x4 matrix per register: only for blending a vertex's matrices (blend_matrix) on the
/// AVX-512 quad path (aos_group).
using lanes::f16;
#endif

#if KEYBLEND_SIMD_AVX512
using widest = f8;
inline constexpr simd_isa isa = simd_isa::avx512;
#elif KEYBLEND_SIMD_AVX2
using widest = f8;
inline constexpr simd_isa isa = simd_isa::avx2;
#elif KEYBLEND_SIMD_SSE2
using widest = f4;
inline constexpr simd_isa isa = simd_isa::sse2;
#elif KEYBLEND_SIMD_NEON
using widest = f4;
inline constexpr simd_isa isa = simd_isa::neon;
#else
using widest = f1;
inline constexpr simd_isa isa = simd_isa::scalar;
#endif

/// Calls f(std::integral_constant<int, I>{}) for I = 0 .. N-1, unrolled: compilers do not unroll
/// the blend's loops on their own, and then keep the blended matrices in memory, not registers.
template <class F, int... I>
KEYBLEND_FORCE_INLINE void unroll_impl(F&& f, std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
KEYBLEND_FORCE_INLINE void unroll(F&& f) {
    unroll_impl(f, std::make_integer_sequence<int, N>{});
}

/// C lane vectors, returned by value (so that no caller's lanes have their address taken: they
/// would then live in memory on every path, not only the rare one).
template <class V, std::size_t C>
struct lane_array {
    V c[C];
};

/// Planar streams (each component an array): one plain load or store per component, in any
/// lane type.
template <class V, std::size_t C>
KEYBLEND_FORCE_INLINE lane_array<V, C> load_planar(const in_stream& s, std::size_t v) {
    lane_array<V, C> r;
    for (std::size_t i = 0; i < C; ++i) r.c[i] = V::load(s.at(v, i));
    return r;
}
template <class V, class... Lanes>
KEYBLEND_FORCE_INLINE void store_planar(const out_stream& s, std::size_t v, Lanes... c) {
    std::size_t i = 0;
    (c.store(s.at(v, i++)), ...);
}

/// Element-by-element moves for layouts without a fast path (out of line: rare, and kept out of
/// the kernel's loop body).
template <class V, std::size_t C>
KEYBLEND_COLD lane_array<V, C> load_general(const in_stream& s, std::size_t v) {
    alignas(64) float t[C][V::width];
    for (std::size_t i = 0; i < V::width; ++i)
        for (std::size_t k = 0; k < C; ++k) t[k][i] = *s.at(v + i, k);
    lane_array<V, C> r;
    for (std::size_t k = 0; k < C; ++k) r.c[k] = V::load(t[k]);
    return r;
}
/// (The lanes by value: in registers, where the caller has them.)
template <class V, class... Lanes>
KEYBLEND_COLD void store_general(const out_stream& s, std::size_t v, V first, Lanes... rest) {
    constexpr std::size_t C = 1 + sizeof...(Lanes);
    const V c[C] = {first, rest...};
    alignas(64) float t[C][V::width];
    for (std::size_t k = 0; k < C; ++k) c[k].store(t[k]);
    for (std::size_t i = 0; i < V::width; ++i)
        for (std::size_t k = 0; k < C; ++k) *s.at(v + i, k) = t[k][i];
}

template <class V>
struct lane_ops;

// ---------------------------------------------------------------------------------------------
// f1: one vertex at a time. The reference.
// ---------------------------------------------------------------------------------------------

template <>
struct lane_ops<f1> {
    using V = f1;

    /// Vertices at the end of the mesh this lane type cannot process (it reads exactly).
    static std::size_t guard(const lbs_args&, bool) { return 0; }

    template <int K, class Index, group_mode>
    KEYBLEND_FORCE_INLINE static bool blend(const lbs_args& a, std::size_t v, V (&m)[12]) {
        std::size_t joint[8];
        float weight[8];
        const std::size_t c = read_influences<Index>(a, v, joint, weight);
        float r[12] = {};
        for (std::size_t i = 0; i < c; ++i) {
            const float* p = a.palette + 16 * joint[i];
            const float w = weight[i];
            for (int col = 0; col < 4; ++col)
                for (int row = 0; row < 3; ++row) r[3 * col + row] += w * p[4 * col + row];
        }
        for (int e = 0; e < 12; ++e) m[e] = V{r[e]};
        return true;
    }

    KEYBLEND_FORCE_INLINE static void load3(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
        x = V{*s.at(v, 0)};
        y = V{*s.at(v, 1)};
        z = V{*s.at(v, 2)};
    }
    KEYBLEND_FORCE_INLINE static void load4(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
        load3(s, v, x, y, z);
        w = V{*s.at(v, 3)};
    }
    KEYBLEND_FORCE_INLINE static void store3(const out_stream& s, std::size_t v, V x, V y, V z) {
        *s.at(v, 0) = x.v;
        *s.at(v, 1) = y.v;
        *s.at(v, 2) = z.v;
    }
    KEYBLEND_FORCE_INLINE static void store4(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
        store3(s, v, x, y, z);
        *s.at(v, 3) = w.v;
    }
};

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_LANES_HPP
