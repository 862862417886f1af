// keyblend — one group of skinning: attributes moved into lanes, transformed by the blended
// matrices, moved back. Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_KERNEL_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_KERNEL_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_KERNEL_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_KERNEL_HPP
#endif

#include "lanes_avx2.hpp"
#include "lanes_neon.hpp"
#include "packed.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

// ---------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------

// Moving attributes between the caller's layout and lanes: each lane type moves packed and
// interleaved streams its own way; planar and element-by-element streams are the same in all.
template <class V, std::size_t C>
KEYBLEND_FORCE_INLINE lane_array<V, C> load_attribute(const in_stream& s, std::size_t v) {
    lane_array<V, C> r;
    switch (s.kind) {
    case layout::packed:
    case layout::interleaved:
        if constexpr (C == 3)
            lane_ops<V>::load3(s, v, r.c[0], r.c[1], r.c[2]);
        else
            lane_ops<V>::load4(s, v, r.c[0], r.c[1], r.c[2], r.c[3]);
        return r;
    case layout::planar: return load_planar<V, C>(s, v);
    default: return load_general<V, C>(s, v);
    }
}
template <class V>
KEYBLEND_FORCE_INLINE void store_xyz(const out_stream& s, std::size_t v, V x, V y, V z) {
    switch (s.kind) {
    case layout::packed:
    case layout::interleaved: return lane_ops<V>::store3(s, v, x, y, z);
    case layout::planar: return store_planar<V>(s, v, x, y, z);
    case layout::words: return store_packed<false>(s, v, x, y, z);
    default: return store_general(s, v, x, y, z);
    }
}
template <class V>
KEYBLEND_FORCE_INLINE void store_xyzw(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
    switch (s.kind) {
    case layout::packed:
    case layout::interleaved: return lane_ops<V>::store4(s, v, x, y, z, w);
    case layout::planar: return store_planar<V>(s, v, x, y, z, w);
    case layout::words: return store_packed<true>(s, v, x, y, z, w);
    default: return store_general(s, v, x, y, z, w);
    }
}
template <class V>
KEYBLEND_FORCE_INLINE void load_xyz(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
    const lane_array<V, 3> r = load_attribute<V, 3>(s, v);
    x = r.c[0];
    y = r.c[1];
    z = r.c[2];
}
template <class V>
KEYBLEND_FORCE_INLINE void load_xyzw(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
    const lane_array<V, 4> r = load_attribute<V, 4>(s, v);
    x = r.c[0];
    y = r.c[1];
    z = r.c[2];
    w = r.c[3];
}

/// Transforms the V::width vertices from v by their blended matrices m[3c + r] (column c, row r
/// of each lane's matrix; c = 3: translation) and stores them: any layout, any streams.
template <class V>
KEYBLEND_FORCE_INLINE void transform_any(const lbs_args& a, std::size_t v, const V (&m)[12]) {
    V x, y, z, w;
    load_xyz(a.pos, v, x, y, z);
    store_xyz(a.out_pos, v, fmadd(m[0], x, fmadd(m[3], y, fmadd(m[6], z, m[9]))),
              fmadd(m[1], x, fmadd(m[4], y, fmadd(m[7], z, m[10]))),
              fmadd(m[2], x, fmadd(m[5], y, fmadd(m[8], z, m[11]))));
    if (a.nrm.data) {
        load_xyz(a.nrm, v, x, y, z);
        if (a.inverse_transpose) {
            // A^-T n = (n.x (c1 x c2) + n.y (c2 x c0) + n.z (c0 x c1)) / det(A).
            const V k0x = m[4] * m[8] - m[5] * m[7], k0y = m[5] * m[6] - m[3] * m[8],
                    k0z = m[3] * m[7] - m[4] * m[6];
            const V k1x = m[7] * m[2] - m[8] * m[1], k1y = m[8] * m[0] - m[6] * m[2],
                    k1z = m[6] * m[1] - m[7] * m[0];
            const V k2x = m[1] * m[5] - m[2] * m[4], k2y = m[2] * m[3] - m[0] * m[5],
                    k2z = m[0] * m[4] - m[1] * m[3];
            const V det = fmadd(m[0], k0x, fmadd(m[1], k0y, m[2] * k0z));
            const V one = V::set1(1.0f);
            const V inv = select(det == V::set1(0.0f), one, one / det);
            store_xyz(a.out_nrm, v, fmadd(k0x, x, fmadd(k1x, y, k2x * z)) * inv,
                      fmadd(k0y, x, fmadd(k1y, y, k2y * z)) * inv, fmadd(k0z, x, fmadd(k1z, y, k2z * z)) * inv);
        } else {
            store_xyz(a.out_nrm, v, fmadd(m[0], x, fmadd(m[3], y, m[6] * z)), fmadd(m[1], x, fmadd(m[4], y, m[7] * z)),
                      fmadd(m[2], x, fmadd(m[5], y, m[8] * z)));
        }
    }
    if (a.tan.data) {
        load_xyzw(a.tan, v, x, y, z, w);
        store_xyzw(a.out_tan, v, fmadd(m[0], x, fmadd(m[3], y, m[6] * z)), fmadd(m[1], x, fmadd(m[4], y, m[7] * z)),
                   fmadd(m[2], x, fmadd(m[5], y, m[8] * z)), w);
    }
}

/// transform_any out of line: one copy per lane type, whatever the kernel. The blended matrices
/// go through memory, as a copy made here: passed m itself, GCC 12 stores m to the stack in every
/// group, simple or not, before the branch (12 stores a group).
template <class V>
KEYBLEND_NOINLINE void transform_other_copy(const lbs_args& a, std::size_t v, const V (&m)[12]) {
    transform_any(a, v, m);
}
template <class V>
KEYBLEND_FORCE_INLINE void transform_other(const lbs_args& a, std::size_t v, const V (&m)[12]) {
    V copy[12];
    unroll<12>([&](auto i) KEYBLEND_LAMBDA_INLINE { copy[i] = m[i]; });
    transform_other_copy(a, v, copy);
}

/// Streams as a compile-time mask (fixed_skinning): 1 positions, 2 normals, 4 tangents; -1 when
/// only the job knows.
constexpr bool has_normals(int streams) { return streams < 0 || (streams & 2) != 0; }
constexpr bool has_tangents(int streams) { return streams < 0 || (streams & 4) != 0; }

/// transform_any for lbs_args::simple jobs (every stream packed, normals by the palette): the
/// streams' layout made a constant, so that only the packed code is compiled into the kernel
/// (normals and tangents: packed floats, or words).
/// Multiplies by s when Scaled (group_mode::packed_scaled), else returns x.
template <bool Scaled, class V>
KEYBLEND_FORCE_INLINE V scaled(V x, V s) {
    if constexpr (Scaled)
        return x * s;
    else
        return x;
}

template <class V, int Streams, bool Scaled = false>
KEYBLEND_FORCE_INLINE void transform_simple(const lbs_args& a, std::size_t v, const V (&m)[12], V scale = V{}) {
    V x, y, z, w;
    // Packed: the layout and the strides are constants (addresses in one lea, no multiply).
    const auto in = [](in_stream s, std::size_t components) KEYBLEND_LAMBDA_INLINE {
        s.kind = layout::packed;
        s.stride = components * sizeof(float);
        s.cs = sizeof(float);
        return s;
    };
    const auto out = [](out_stream s, std::size_t components) KEYBLEND_LAMBDA_INLINE {
        s.kind = layout::packed;
        s.stride = components * sizeof(float);
        s.cs = sizeof(float);
        return s;
    };
    (void)scale;
    lane_ops<V>::load3(in(a.pos, 3), v, x, y, z);
    lane_ops<V>::store3(out(a.out_pos, 3), v, scaled<Scaled>(fmadd(m[0], x, fmadd(m[3], y, fmadd(m[6], z, m[9]))), scale),
                        scaled<Scaled>(fmadd(m[1], x, fmadd(m[4], y, fmadd(m[7], z, m[10]))), scale),
                        scaled<Scaled>(fmadd(m[2], x, fmadd(m[5], y, fmadd(m[8], z, m[11]))), scale));
    if (has_normals(Streams) && (Streams >= 0 || a.nrm.data)) {
        lane_ops<V>::load3(in(a.nrm, 3), v, x, y, z);
        const V nx = scaled<Scaled>(fmadd(m[0], x, fmadd(m[3], y, m[6] * z)), scale);
        const V ny = scaled<Scaled>(fmadd(m[1], x, fmadd(m[4], y, m[7] * z)), scale);
        const V nz = scaled<Scaled>(fmadd(m[2], x, fmadd(m[5], y, m[8] * z)), scale);
        if (a.out_nrm.kind == layout::words)
            store_packed<false>(a.out_nrm, v, nx, ny, nz);
        else
            lane_ops<V>::store3(out(a.out_nrm, 3), v, nx, ny, nz);
    }
    if (has_tangents(Streams) && (Streams >= 0 || a.tan.data)) {
        lane_ops<V>::load4(in(a.tan, 4), v, x, y, z, w);
        const V tx = scaled<Scaled>(fmadd(m[0], x, fmadd(m[3], y, m[6] * z)), scale);
        const V ty = scaled<Scaled>(fmadd(m[1], x, fmadd(m[4], y, m[7] * z)), scale);
        const V tz = scaled<Scaled>(fmadd(m[2], x, fmadd(m[5], y, m[8] * z)), scale);
        if (a.out_tan.kind == layout::words)
            store_packed<true>(a.out_tan, v, tx, ty, tz, w);
        else
            lane_ops<V>::store4(out(a.out_tan, 4), v, tx, ty, tz, w);
    }
}

template <class V, int Streams>
KEYBLEND_FORCE_INLINE void transform_group(const lbs_args& a, std::size_t v, const V (&m)[12]) {
    if constexpr (V::width == 1) {
        transform_any(a, v, m);
    } else {
        if (a.simple)
            transform_simple<V, Streams>(a, v, m);
        else
            transform_other(a, v, m);
    }
}

/// Transforms and stores the group from v with its blended matrices m, in the kernel's mode.
template <class V, group_mode Mode, int Streams>
KEYBLEND_FORCE_INLINE void transform_any_mode(const lbs_args& a, std::size_t v, const V (&m)[12]) {
    if constexpr (Mode == group_mode::packed_scaled) {
        // w (M v) for (w M) v (the same within rounding): the group's weights in one load. A
        // group whose weights are all 1 (a normalised mesh's one-influence vertices) skips the
        // multiplies, which would change no bit.
        const V w = V::load(reinterpret_cast<const float*>(a.weights) + v);
        if (all_true(w == V::set1(1.0f)))
            transform_simple<V, Streams>(a, v, m);
        else
            transform_simple<V, Streams, true>(a, v, m, w);
    } else {
        transform_group<V, Streams>(a, v, m);
    }
}

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_KERNEL_HPP
