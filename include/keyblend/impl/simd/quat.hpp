// keyblend — quaternion arithmetic over lane types: V::width quaternions at a time, one per lane,
// as four component registers. Internal: namespace keyblend::impl::KEYBLEND_ISA.
//
// SPDX-License-Identifier: MIT
//
// These are the one implementation of nlerp and slerp: keyblend::nlerp / keyblend::slerp
// (math.hpp) are these functions on lanes::f1, and the pose kernels (clip sampling, blending) run
// them on lanes::native. Every operation is written in the same order for every lane type, so the
// scalar and SIMD results differ only by FMA contraction (see lanes.hpp).
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SIMD_QUAT_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SIMD_QUAT_HPP)
#undef KEYBLEND_PASS_GUARD_SIMD_QUAT_HPP
#else
#define KEYBLEND_PASS_GUARD_SIMD_QUAT_HPP
#endif

#include "lanes.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {

/// Four lanes registers: the w, x, y, z components of V::width quaternions.
template <class V>
struct quat_lanes {
    V w, x, y, z;

    static quat_lanes identity() {
        return {V::set1(1.0f), V::set1(0.0f), V::set1(0.0f), V::set1(0.0f)};
    }
};

template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> select(typename V::mask m, const quat_lanes<V>& a, const quat_lanes<V>& b) {
    using lanes::select;
    return {select(m, a.w, b.w), select(m, a.x, b.x), select(m, a.y, b.y), select(m, a.z, b.z)};
}

/// (a.w b.w + a.x b.x) + (a.y b.y + a.z b.z): a tree, as keyblend::quat_dot.
template <class V>
KEYBLEND_FORCE_INLINE V dot(const quat_lanes<V>& a, const quat_lanes<V>& b) {
    return (a.w * b.w + a.x * b.x) + (a.y * b.y + a.z * b.z);
}

template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> scale(const quat_lanes<V>& q, V s) {
    return {q.w * s, q.x * s, q.y * s, q.z * s};
}

/// The Hamilton product a * b (apply b, then a), as glm's quaternion operator*.
template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> multiply(const quat_lanes<V>& a, const quat_lanes<V>& b) {
    return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y + a.y * b.w + a.z * b.x - a.x * b.z,
            a.w * b.z + a.z * b.w + a.x * b.y - a.y * b.x};
}

template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> conjugate(const quat_lanes<V>& q) {
    return {q.w, -q.x, -q.y, -q.z};
}

/// q / |q|, and the identity where |q| is zero or not finite (keyblend::normalize_or_identity;
/// the same on f1, within 2 ulp where lanes::rsqrt estimates).
template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> normalize_or_identity(const quat_lanes<V>& q) {
    const V d = dot(q, q);
    const typename V::mask good = (d > V::set1(0.0f)) & (d < V::set1(INFINITY));
    return select(good, scale(q, lanes::rsqrt(d)), quat_lanes<V>::identity());
}

/// keyblend::nlerp, lane by lane: `a` where t == 0, `b` where t == 1, otherwise the normalised
/// short-path lerp.
template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> nlerp(const quat_lanes<V>& a, const quat_lanes<V>& b, V t) {
    using lanes::select;
    const V s = select(dot(a, b) < V::set1(0.0f), V::set1(-1.0f), V::set1(1.0f));
    const quat_lanes<V> r = normalize_or_identity(quat_lanes<V>{
        a.w + (s * b.w - a.w) * t, a.x + (s * b.x - a.x) * t, a.y + (s * b.y - a.y) * t,
        a.z + (s * b.z - a.z) * t});
    return select(t == V::set1(0.0f), a, select(t == V::set1(1.0f), b, r));
}

/// sin and cos of x in [0, π/2], by their Taylor series to x^13 / x^14 (truncation error below
/// 1e-9 on that range; float rounding dominates). Branch-free and several times cheaper than libm.
template <class V>
KEYBLEND_FORCE_INLINE void sin_cos_quarter_turn(V x, V& sin_x, V& cos_x) {
    // Estrin's scheme: the powers are computed once and the terms in pairs, so the dependency
    // chain is 4 multiplies deep instead of Horner's 7.
    const V x2 = x * x;
    const V x4 = x2 * x2;
    const V x8 = x4 * x4;
    const V s01 = V::set1(1.0f) - x2 * V::set1(1.0f / 6);
    const V s23 = V::set1(1.0f / 120) - x2 * V::set1(1.0f / 5040);
    const V s45 = V::set1(1.0f / 362880) - x2 * V::set1(1.0f / 39916800);
    const V s6 = V::set1(1.0f / 6227020800.0f);
    sin_x = x * ((s01 + x4 * s23) + x8 * (s45 + x4 * s6));
    const V c01 = V::set1(1.0f) - x2 * V::set1(0.5f);
    const V c23 = V::set1(1.0f / 24) - x2 * V::set1(1.0f / 720);
    const V c45 = V::set1(1.0f / 40320) - x2 * V::set1(1.0f / 3628800);
    const V c67 = V::set1(1.0f / 479001600.0f) - x2 * V::set1(1.0f / 87178291200.0f);
    cos_x = (c01 + x4 * c23) + x8 * (c45 + x4 * c67);
}

/// asin(x) for x in [0, 1], to about 1 ulp: Cephes' single-precision minimax polynomial on
/// [0, 0.5] and asin(x) = π/2 − 2 asin(√((1 − x) / 2)) above.
template <class V>
KEYBLEND_FORCE_INLINE V asin_unit(V x) {
    using lanes::select;
    using lanes::sqrt;
    const typename V::mask high = x > V::set1(0.5f);
    const V z = select(high, V::set1(0.5f) * (V::set1(1.0f) - x), x * x);
    const V r = select(high, sqrt(z), x);
    const V p = ((((V::set1(4.2163199048e-2f) * z + V::set1(2.4181311049e-2f)) * z +
                   V::set1(4.5470025998e-2f)) * z + V::set1(7.4953002686e-2f)) * z +
                 V::set1(1.6666752422e-1f)) * z * r + r;
    return select(high, V::set1(1.57079632679489661923f) - V::set1(2.0f) * p, p);
}

/// keyblend::slerp, lane by lane (see its contract in math.hpp).
template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> slerp(const quat_lanes<V>& a, const quat_lanes<V>& b, V t) {
    using lanes::max;
    using lanes::min;
    using lanes::select;
    using lanes::sqrt;
    const V zero = V::set1(0.0f), one = V::set1(1.0f), half = V::set1(0.5f);
    V d = dot(a, b);
    const V s = select(d < zero, V::set1(-1.0f), one);
    d = d * s; // cos θ, θ in [0, π/2] after the short-path flip
    const quat_lanes<V> c = scale(b, s);
    const quat_lanes<V> diff{a.w - c.w, a.x - c.x, a.y - c.y, a.z - c.z};
    const quat_lanes<V> sum{a.w + c.w, a.x + c.x, a.y + c.y, a.z + c.z};
    // For unit a, c at angle θ: |a - c| = 2 sin(θ/2) and |a + c| = 2 cos(θ/2), so
    // θ = 2 asin(|a - c| / 2) (full precision for small θ, unlike acos(d)) and
    // sin θ = |a - c| |a + c| / 2 (no cancellation either).
    const V chord2 = dot(diff, diff);
    const V chord = sqrt(chord2);
    const V theta = V::set1(2.0f) * asin_unit(min(half * chord, one));
    const V inv_sin_theta = V::set1(2.0f) * lanes::rsqrt(chord2 * dot(sum, sum));
    // sin((1 - t)θ) = sin θ cos tθ - cos θ sin tθ: one sin/cos pair instead of three sines.
    // tθ stays in [0, π/2] for t in [0, 1]; outside, clamp (slerp does not extrapolate).
    V sin_t, cos_t;
    sin_cos_quarter_turn(min(max(t, zero), one) * theta, sin_t, cos_t);
    const V wc = sin_t * inv_sin_theta; // inf or NaN where θ is tiny: those lanes take nlerp below
    const V wa = cos_t - d * wc;
    const quat_lanes<V> r{wa * a.w + wc * c.w, wa * a.x + wc * c.x, wa * a.y + wc * c.y,
                          wa * a.z + wc * c.z};
    // For unit inputs r is unit up to rounding (and up to the input's own error for inputs within
    // the validation tolerance), so two Newton steps for 1/sqrt(|r|^2) from 1 renormalise it to
    // float precision without a square root or a division (the error after them is ~(|r|^2-1)^4).
    const V n2 = dot(r, r);
    V inv = V::set1(1.5f) - half * n2;
    inv = inv * (V::set1(1.5f) - half * n2 * inv * inv);
    quat_lanes<V> out = scale(r, inv);
    // Below an angle of 1e-6 rad slerp and nlerp agree to float precision (and wc above is not
    // finite). Rare: computed only when a lane needs it.
    // (Not where t is 0 or 1 either, whose lanes are a and b below: a constant track, keyed once,
    // has θ = 0 and t = 0 in every frame.)
    const typename V::mask at_end = (t == zero) | (t == one);
    const typename V::mask tiny = !(theta > V::set1(1e-6f));
    if (lanes::bits(tiny & !at_end)) out = select(tiny, nlerp(a, c, t), out);
    return select(t == zero, a, select(t == one, b, out));
}

} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SIMD_QUAT_HPP
