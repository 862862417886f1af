// keyblend — the batched IK kernels (two_bone_ik_batch_job, aim_ik_batch_job; ik.hpp): V::width
// chains at a time, one per lane, each gathered from its character's model matrices and pose,
// solved by the single jobs' formulas (impl/ik.impl.hpp's solve_two_bone and solve_aim) with every
// branch turned into a select, and scattered back. Internal; included by ik.impl.hpp, or by the
// compiled kernels (keyblend/kernels.hpp).
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_IK_KERNELS_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_IK_KERNELS_HPP)
#undef KEYBLEND_PASS_GUARD_IK_KERNELS_HPP
#else
#define KEYBLEND_PASS_GUARD_IK_KERNELS_HPP
#endif

#include "simd/quat.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace ik_lanes {

using lanes::select;

/// Three lanes registers: x, y, z of V::width vectors.
template <class V>
struct vec3 {
    V x, y, z;
};
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> operator+(const vec3<V>& a, const vec3<V>& b) {
    return {a.x + b.x, a.y + b.y, a.z + b.z};
}
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> operator-(const vec3<V>& a, const vec3<V>& b) {
    return {a.x - b.x, a.y - b.y, a.z - b.z};
}
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> operator-(const vec3<V>& a) {
    return {-a.x, -a.y, -a.z};
}
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> operator*(const vec3<V>& a, V s) {
    return {a.x * s, a.y * s, a.z * s};
}
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> operator*(V s, const vec3<V>& a) {
    return {s * a.x, s * a.y, s * a.z};
}
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> operator/(const vec3<V>& a, V s) {
    return {a.x / s, a.y / s, a.z / s};
}
/// glm::dot's order: (x x' + y y') + z z'.
template <class V>
KEYBLEND_FORCE_INLINE V dot(const vec3<V>& a, const vec3<V>& b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> cross(const vec3<V>& a, const vec3<V>& b) {
    return {a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y};
}
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> select(typename V::mask m, const vec3<V>& a, const vec3<V>& b) {
    return {select(m, a.x, b.x), select(m, a.y, b.y), select(m, a.z, b.z)};
}
template <class V>
KEYBLEND_FORCE_INLINE V abs(V a) {
    return lanes::flip_sign(a, a);
}
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> splat(float x, float y, float z) {
    return {V::set1(x), V::set1(y), V::set1(z)};
}
/// A 3x3 frame (the upper left of a model matrix) times v: column 0 * v.x + column 1 * v.y + ...
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> times(const vec3<V> (&frame)[3], const vec3<V>& v) {
    return frame[0] * v.x + frame[1] * v.y + frame[2] * v.z;
}

// The rotation helpers of impl/gameplay_math.hpp, lane by lane: the same formulas, each branch
// the scalar code takes selected per lane (a lane of the side not taken may be infinite or NaN: it
// is never selected). A side that is rare (a degenerate case) is computed only when a lane takes
// it.

/// True when some lane of `m` is set.
template <class M>
KEYBLEND_FORCE_INLINE bool any(M m) {
    return lanes::bits(m) != 0;
}

/// qrenormalize: one Newton step where |q|^2 is within 1e-4 of 1, else qnormalize.
template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> renormalize(const quat_lanes<V>& q) {
    const V n2 = dot(q, q);
    const quat_lanes<V> r = scale(q, V::set1(1.5f) - V::set1(0.5f) * n2);
    const typename V::mask far = !(abs(n2 - V::set1(1.0f)) < V::set1(1e-4f));
    return any(far) ? select(far, normalize_or_identity(q), r) : r;
}

/// qrotate: v + 2w (u x v) + 2 u x (u x v).
template <class V>
KEYBLEND_FORCE_INLINE vec3<V> rotate(const quat_lanes<V>& q, const vec3<V>& v) {
    const vec3<V> u{q.x, q.y, q.z};
    const vec3<V> t = V::set1(2.0f) * cross(u, v);
    return v + q.w * t + cross(u, t);
}

/// turn_about: the rotation about the unit axis by the angle whose cosine and sine are
/// proportional to c and s.
template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> turn_about(const vec3<V>& axis, V c, V s) {
    const V k = lanes::sqrt(c * c + s * s);
    const typename V::mask acute = c >= V::set1(0.0f);
    const V w = select(acute, k + c, s), m = select(acute, s, k - c);
    const quat_lanes<V> q = normalize_or_identity(quat_lanes<V>{w, m * axis.x, m * axis.y, m * axis.z});
    return select(k > V::set1(0.0f), q, quat_lanes<V>::identity());
}

/// rotation_between: the shortest rotation from the direction of `from` to that of `to`.
template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> rotation_between(const vec3<V>& from, const vec3<V>& to) {
    const V zero = V::set1(0.0f);
    const V norms = lanes::sqrt(dot(from, from) * dot(to, to));
    const V d = dot(from, to);
    const vec3<V> v = cross(from, to);
    quat_lanes<V> q{norms + d, v.x, v.y, v.z};
    const typename V::mask obtuse = !(d >= zero);
    if (any(obtuse)) {
        const V sine = lanes::sqrt(dot(v, v));
        const V along = (norms - d) / sine;
        q = select(obtuse, quat_lanes<V>{sine, v.x * along, v.y * along, v.z * along}, q);
        const typename V::mask opposite = obtuse & (!(sine > V::set1(1e-6f) * norms));
        if (any(opposite)) {
            const vec3<V> across =
                select(abs(from.x) > abs(from.z), vec3<V>{-from.y, from.x, zero}, vec3<V>{zero, -from.z, from.y});
            q = select(opposite, quat_lanes<V>{zero, across.x, across.y, across.z}, q);
        }
    }
    return select(norms > zero, normalize_or_identity(q), quat_lanes<V>::identity());
}

/// in_frame: a rotation of the model matrices' space expressed in a joint's frame (the axis through
/// the frame's adjugate, the angle kept).
template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> in_frame(const quat_lanes<V>& q, const vec3<V> (&a)[3]) {
    const vec3<V> v{q.x, q.y, q.z};
    const vec3<V> local{dot(cross(a[1], a[2]), v), dot(cross(a[2], a[0]), v), dot(cross(a[0], a[1]), v)};
    const V len2 = dot(v, v), axis_len2 = dot(local, local);
    const vec3<V> axis = local * lanes::sqrt(len2 / axis_len2);
    const typename V::mask ok = (len2 > V::set1(0.0f)) & (axis_len2 > V::set1(0.0f));
    return select(ok, quat_lanes<V>{q.w, axis.x, axis.y, axis.z}, quat_lanes<V>::identity());
}

/// correct_rotation's arithmetic: the local rotation `rotation` turned by `correction` (found in
/// the model matrices' space) taken into the joint's `frame`, at `weight`.
template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> corrected(const quat_lanes<V>& rotation, const quat_lanes<V>& correction,
                                              const vec3<V> (&frame)[3], V weight) {
    quat_lanes<V> c = in_frame(correction, frame);
    if (any(weight != V::set1(1.0f))) c = nlerp(quat_lanes<V>::identity(), c, weight);
    return renormalize(multiply(rotation, c));
}

// ---------------------------------------------------------------------------------------------
// Gathering and checking lanes.
// ---------------------------------------------------------------------------------------------

/// Dim (3 or 4) consecutive floats from each of V::width addresses, transposed: out[d] lane l =
/// rows[l][d] (lanes::load_transposed; 16 lanes as two halves of 8).
template <unsigned Dim>
KEYBLEND_FORCE_INLINE void gather(const float* const* rows, lanes::f1* out) {
    lanes::load_transposed<Dim>(rows, out);
}
#if KEYBLEND_SIMD_F4
template <unsigned Dim>
KEYBLEND_FORCE_INLINE void gather(const float* const* rows, lanes::f4* out) {
    lanes::load_transposed<Dim>(rows, out);
}
#endif
#if KEYBLEND_SIMD_AVX2
template <unsigned Dim>
KEYBLEND_FORCE_INLINE void gather(const float* const* rows, lanes::f8* out) {
    lanes::load_transposed<Dim>(rows, out);
}
#endif
#if KEYBLEND_SIMD_AVX512
template <unsigned Dim>
KEYBLEND_FORCE_INLINE void gather(const float* const* rows, lanes::f16* out) {
    lanes::f8 low[Dim], high[Dim];
    lanes::load_transposed<Dim>(rows, low);
    lanes::load_transposed<Dim>(rows + 8, high);
    // (The all-lanes maskz form: GCC 12's plain insert starts from an undefined vector, which
    // -Wuninitialized reports once inlined.)
    for (unsigned d = 0; d < Dim; ++d)
        out[d] = {_mm512_maskz_insertf32x8(0xFFFF, _mm512_castps256_ps512(low[d].v), high[d].v, 1)};
}
#endif

template <class V>
KEYBLEND_FORCE_INLINE vec3<V> gather3(const float* const* rows) {
    V v[3];
    gather<3>(rows, v);
    return {v[0], v[1], v[2]};
}

/// The lanes in which one of the values added is NaN or infinite, decided from the bits (as
/// is_finite, which fast-math keeps).
template <class V>
struct nonfinite_lanes;
template <>
struct nonfinite_lanes<lanes::f1> {
    std::uint32_t bits = 0;
    KEYBLEND_FORCE_INLINE void add(lanes::f1 x) { bits = nonfinite_bits(&x.v, 1, bits); }
    KEYBLEND_FORCE_INLINE lanes::m1 finite() const { return {no_nonfinite(bits)}; }
};
#if KEYBLEND_SIMD_SSE2
template <>
struct nonfinite_lanes<lanes::f4> {
    __m128i bits;
    KEYBLEND_FORCE_INLINE nonfinite_lanes() : bits(_mm_setzero_si128()) {}
    KEYBLEND_FORCE_INLINE void add(lanes::f4 x) {
        const __m128i exponent = _mm_and_si128(_mm_castps_si128(x.v), _mm_set1_epi32(0x7f800000));
        bits = _mm_or_si128(bits, _mm_add_epi32(exponent, _mm_set1_epi32(0x00800000)));
    }
    KEYBLEND_FORCE_INLINE lanes::m4 finite() const {
        return {_mm_castsi128_ps(_mm_cmpgt_epi32(bits, _mm_set1_epi32(-1)))};
    }
};
#endif
#if KEYBLEND_SIMD_NEON
template <>
struct nonfinite_lanes<lanes::f4> {
    uint32x4_t bits;
    KEYBLEND_FORCE_INLINE nonfinite_lanes() : bits(vdupq_n_u32(0)) {}
    KEYBLEND_FORCE_INLINE void add(lanes::f4 x) {
        const uint32x4_t exponent = vandq_u32(vreinterpretq_u32_f32(x.v), vdupq_n_u32(0x7f800000));
        bits = vorrq_u32(bits, vaddq_u32(exponent, vdupq_n_u32(0x00800000)));
    }
    KEYBLEND_FORCE_INLINE lanes::m4 finite() const {
        return {vcgeq_s32(vreinterpretq_s32_u32(bits), vdupq_n_s32(0))};
    }
};
#endif
#if KEYBLEND_SIMD_AVX2
template <>
struct nonfinite_lanes<lanes::f8> {
    // (Constructors written out: a pass's target applies to the functions written in it, not to
    // the ones the compiler declares.)
    __m256i bits;
    KEYBLEND_FORCE_INLINE nonfinite_lanes() : bits(_mm256_setzero_si256()) {}
    KEYBLEND_FORCE_INLINE void add(lanes::f8 x) {
        const __m256i exponent = _mm256_and_si256(_mm256_castps_si256(x.v), _mm256_set1_epi32(0x7f800000));
        bits = _mm256_or_si256(bits, _mm256_add_epi32(exponent, _mm256_set1_epi32(0x00800000)));
    }
    KEYBLEND_FORCE_INLINE lanes::m8 finite() const {
        return {_mm256_castsi256_ps(_mm256_cmpgt_epi32(bits, _mm256_set1_epi32(-1)))};
    }
};
#endif
#if KEYBLEND_SIMD_AVX512
template <>
struct nonfinite_lanes<lanes::f16> {
    __mmask16 bits = 0;
    // (fpclass 0x99: quiet NaN, +infinity, -infinity, signalling NaN.)
    KEYBLEND_FORCE_INLINE void add(lanes::f16 x) { bits = static_cast<__mmask16>(bits | _mm512_fpclass_ps_mask(x.v, 0x99)); }
    KEYBLEND_FORCE_INLINE lanes::m16 finite() const { return {static_cast<__mmask16>(~bits)}; }
};
#endif

template <class V>
KEYBLEND_FORCE_INLINE void add(nonfinite_lanes<V>& n, const vec3<V>& v) {
    n.add(v.x);
    n.add(v.y);
    n.add(v.z);
}
template <class V>
KEYBLEND_FORCE_INLINE void add(nonfinite_lanes<V>& n, const quat_lanes<V>& q) {
    n.add(q.w);
    n.add(q.x);
    n.add(q.y);
    n.add(q.z);
}

/// One joint per lane: its model matrix's frame (columns 0 to 2) and position (column 3), and its
/// local rotation (read from the pose's streams).
template <class V>
struct joint_lanes {
    vec3<V> frame[3];
    vec3<V> position;
    quat_lanes<V> rotation;
};

/// Where a joint's local rotation is: the pose's rotation streams at the joint.
struct rotation_at {
    float* x = nullptr;
    float* y = nullptr;
    float* z = nullptr;
    float* w = nullptr;
};
KEYBLEND_FORCE_INLINE rotation_at rotation_of(local_pose& p, std::size_t j) {
    using S = local_pose;
    return {p.data(S::rotation_x) + j, p.data(S::rotation_y) + j, p.data(S::rotation_z) + j, p.data(S::rotation_w) + j};
}

template <class V>
KEYBLEND_FORCE_INLINE quat_lanes<V> gather_rotations(const rotation_at* at) {
    alignas(64) float q[4][V::width];
    for (std::size_t l = 0; l < V::width; ++l) {
        q[0][l] = *at[l].w;
        q[1][l] = *at[l].x;
        q[2][l] = *at[l].y;
        q[3][l] = *at[l].z;
    }
    return {V::load(q[0]), V::load(q[1]), V::load(q[2]), V::load(q[3])};
}

/// Joint `joints[l]` of model matrices `model[l]` in lane l; `frame`: whether to load columns 0-2.
template <class V>
KEYBLEND_FORCE_INLINE void gather_joint(const glm::mat4* const* model, const std::size_t* joints, bool frame,
                                        joint_lanes<V>& out) {
    const auto load = [&](int c) KEYBLEND_LAMBDA_INLINE {
        const float* rows[V::width];
        for (std::size_t l = 0; l < V::width; ++l) rows[l] = &model[l][joints[l]][c][0];
        V column[4];
        gather<4>(rows, column);
        return vec3<V>{column[0], column[1], column[2]};
    };
    if (frame)
        for (int c = 0; c < 3; ++c) out.frame[c] = load(c);
    out.position = load(3);
}

/// The lanes' scalars (one float per lane from `values[l]`).
template <class V>
KEYBLEND_FORCE_INLINE V gather1(const float* const* values) {
    alignas(64) float v[V::width];
    for (std::size_t l = 0; l < V::width; ++l) v[l] = *values[l];
    return V::load(v);
}

/// Stores lane l of `q` into the rotation streams at[l] for each lane set in `write`.
template <class V>
KEYBLEND_FORCE_INLINE void scatter_rotations(const quat_lanes<V>& q, unsigned write, const rotation_at* at) {
    alignas(64) float out[4][V::width];
    q.w.store(out[0]);
    q.x.store(out[1]);
    q.y.store(out[2]);
    q.z.store(out[3]);
    for (; write; write &= write - 1u) {
        const unsigned l = lanes::lowest_set_bit(write);
        *at[l].w = out[0][l];
        *at[l].x = out[1][l];
        *at[l].y = out[2][l];
        *at[l].z = out[3][l];
    }
}

/// A group's `reached` flags, lanes [0, count).
inline void store_reached(span<bool> reached, std::size_t first, std::size_t count, unsigned bits) {
    if (reached.empty()) return;
    for (std::size_t l = 0; l < count; ++l) reached[first + l] = (bits >> l & 1u) != 0;
}

/// One group of a batch job: chains [first, first + count) in lanes [0, count), the group's last
/// chain repeated in the lanes above (gathered, never written). The chain's character, its pose,
/// its model matrices, its target, pole vector (a zero vector when none is given) and weight (1).
template <class V, class Job>
struct group {
    static constexpr std::size_t W = V::width;
    std::size_t first, count;
    const typename decltype(Job::chains)::element_type* chain[W];
    local_pose* pose[W];
    const glm::mat4* model[W];
    const float* target[W];
    const float* pole[W];
    const float* weight[W];

    group(const Job& job, std::size_t first_chain, std::size_t chains) : first(first_chain), count(chains) {
        static const float zero[3] = {0.0f, 0.0f, 0.0f};
        static const float one = 1.0f;
        for (std::size_t l = 0; l < W; ++l) {
            const std::size_t i = first + std::min(l, count - 1);
            chain[l] = &job.chains[i];
            const ik_buffers& b = job.characters[chain[l]->character];
            pose[l] = b.pose;
            model[l] = b.model.data();
            target[l] = &job.targets[i].x;
            pole[l] = job.pole_vectors.empty() ? zero : &job.pole_vectors[i].x;
            weight[l] = job.weights.empty() ? &one : &job.weights[i];
        }
    }
    unsigned valid() const { return count >= W ? (1u << W) - 1u : (1u << count) - 1u; }
};

// ---------------------------------------------------------------------------------------------
// The solvers.
// ---------------------------------------------------------------------------------------------

/// solve_two_bone on lanes: the rotations about the start and middle joints (model space), and
/// the lanes it moves (`moved`) and reaches.
template <class V>
struct two_bone_result {
    quat_lanes<V> start, mid;
    typename V::mask moved, reached;
};

template <class V>
KEYBLEND_FORCE_INLINE two_bone_result<V> solve_two_bone(const vec3<V>& a, const vec3<V>& b, const vec3<V>& c,
                                                        const vec3<V> (&mid_frame)[3], const vec3<V>& target,
                                                        const vec3<V>& pole, const vec3<V>& mid_axis, V soften) {
    using M = typename V::mask;
    using lanes::max;
    using lanes::min;
    using lanes::sqrt;
    constexpr std::size_t W = V::width;
    const V zero = V::set1(0.0f), one = V::set1(1.0f);
    two_bone_result<V> out;
    const vec3<V> u1 = b - a, u2 = c - b;
    const V l1 = sqrt(dot(u1, u1)), l2 = sqrt(dot(u2, u2)), chain = l1 + l2;
    const V eps = V::set1(1e-6f) * chain;
    out.moved = (l1 > eps) & (l2 > eps);
    const V shortest = abs(l1 - l2);

    // The distance the end should be at, and the direction from the start joint.
    const vec3<V> to_target = target - a;
    const V dt = sqrt(dot(to_target, to_target));
    V d = dt;
    const V soft = soften * chain;
    const M softened = (soften < one) & (dt > soft);
    if (const unsigned lanes_softened = lanes::bits(softened)) {
        // (std::exp in the lanes that soften, as the single job does: rare, and the same bits.)
        const V span = chain - soft;
        alignas(64) float e[W];
        ((soft - dt) / span).store(e);
        for (unsigned m = lanes_softened; m; m &= m - 1u) {
            const unsigned l = lanes::lowest_set_bit(m);
            e[l] = std::exp(e[l]);
        }
        d = select(softened, soft + span * (one - V::load(e)), dt);
    }
    d = min(max(d, shortest), chain);
    vec3<V> dir = to_target * (one / dt);
    const M at_start = !(dt > eps);
    if (any(at_start)) {
        const vec3<V> ce = c - a;
        const V lce = sqrt(dot(ce, ce));
        dir = select(at_start, select(lce > eps, ce / lce, u1 / l1), dir);
    }

    // The hinge, in model space: the given axis through the middle joint's frame (reversed where
    // it is mirrored), or the bones' cross product, or for a straight chain toward the pole or
    // about any axis perpendicular to the first bone.
    const M given = dot(mid_axis, mid_axis) > V::set1(1e-12f);
    const unsigned given_lanes = lanes::bits(given);
    vec3<V> h{zero, zero, zero};
    if (given_lanes) {
        const vec3<V> axis = times(mid_frame, mid_axis);
        const V det = dot(mid_frame[0], cross(mid_frame[1], mid_frame[2]));
        h = select(det < zero, -axis, axis);
    }
    if (given_lanes != (1u << W) - 1u) {
        vec3<V> h_bent = cross(u1, u2);
        const M straight = (!given) & (!(dot(h_bent, h_bent) > V::set1(1e-12f) * (l1 * l1 * l2 * l2)));
        if (any(straight)) {
            const vec3<V> n1 = u1 / l1;
            const vec3<V> h_pole = cross(pole - dot(pole, n1) * n1, n1);
            const V hp2 = dot(h_pole, h_pole);
            const M no_pole = (!(hp2 > V::set1(1e-12f) * dot(pole, pole))) | (!(hp2 > zero));
            const vec3<V> h_any =
                cross(n1, select(abs(n1.x) < V::set1(0.6f), splat<V>(1, 0, 0), splat<V>(0, 1, 0)));
            h_bent = select(straight, select(no_pole, h_any, h_pole), h_bent);
        }
        h = select(given, h, h_bent);
    }
    const V h2 = dot(h, h);
    out.moved = out.moved & (h2 > zero);
    h = h * lanes::rsqrt(h2);

    // The hinge angle phi with |u1 + R(phi) u2| = d (see solve_two_bone).
    const vec3<V> u2_along = dot(h, u2) * h, u2_across = u2 - u2_along, u2_turned = cross(h, u2);
    const V k0 = l1 * l1 + l2 * l2 + V::set1(2.0f) * dot(u1, u2_along);
    const V ca = dot(u1, u2_across), cb = dot(u1, u2_turned);
    const V r = sqrt(ca * ca + cb * cb);
    const M bends = r > V::set1(1e-6f) * l1 * l2;
    const V inv_r = one / r, half_inv_r = V::set1(0.5f) * inv_r;
    const V minus_one = V::set1(-1.0f);
    const V k = select(d >= chain, one,
                       select(d <= shortest, minus_one, min(max((d * d - k0) * half_inv_r, minus_one), one)));
    const V k_target = (dt * dt - k0) * half_inv_r;
    const V k_slack = V::set1(2e-6f) * chain * dt * inv_r;
    const M in_range = bends & (k_target >= minus_one - k_slack) & (k_target <= one + k_slack);
    const V c0 = ca * inv_r, s0 = cb * inv_r, sk = sqrt(max((one - k) * (one + k), zero));
    const V cos_phi = select(bends, c0 * k - s0 * sk, one), sin_phi = select(bends, s0 * k + c0 * sk, zero);
    out.mid = turn_about(h, cos_phi, sin_phi);

    // The chain turned from the start joint: the end onto the target line, then about it toward
    // the pole.
    const vec3<V> end = u1 + rotate(out.mid, u2);
    const quat_lanes<V> onto = rotation_between(end, dir);
    const vec3<V> pole_across = pole - dot(pole, dir) * dir;
    const V pole2 = dot(pole, pole);
    const vec3<V> mid_now = rotate(onto, u1);
    vec3<V> across = mid_now - dot(mid_now, dir) * dir;
    const M straight = !(dot(across, across) > V::set1(1e-12f) * l1 * l1);
    if (any(straight)) {
        // (The side the hinge would bend the middle joint to.)
        vec3<V> across_straight = cross(dir, rotate(onto, h));
        across_straight = across_straight - dot(across_straight, dir) * dir;
        across = select(straight, across_straight, across);
    }
    const M turns = (pole2 > zero) & (dot(pole_across, pole_across) > V::set1(1e-12f) * pole2) &
                    (dot(across, across) > V::set1(1e-12f));
    const quat_lanes<V> turn = select(
        turns, turn_about(dir, dot(across, pole_across), dot(cross(across, pole_across), dir)),
        quat_lanes<V>::identity());
    out.start = renormalize(multiply(turn, onto));
    const V reach = select(soften < one, soft, chain);
    out.reached = out.moved & (dt <= reach * V::set1(1.0f + 1e-6f)) & (dt >= shortest * V::set1(1.0f - 1e-6f)) &
                  in_range;
    return out;
}

/// solve_aim on lanes: the rotation (model space) and the lanes that can aim.
template <class V>
struct aim_result {
    quat_lanes<V> rotation;
    typename V::mask reached;
};

template <class V>
KEYBLEND_FORCE_INLINE aim_result<V> solve_aim(const joint_lanes<V>& joint, const vec3<V>& target,
                                              const vec3<V>& forward, const vec3<V>& up, const vec3<V>& pole,
                                              const vec3<V>& offset) {
    using lanes::sqrt;
    const V zero = V::set1(0.0f);
    aim_result<V> out;
    vec3<V> f = times(joint.frame, forward);
    const V f2 = dot(f, f);
    f = f * lanes::rsqrt(f2);
    const vec3<V> off = times(joint.frame, offset);
    const vec3<V> v = target - joint.position;
    const V d2 = dot(v, v), off2 = dot(off, off);
    const V along = dot(f, off);
    const V across2 = lanes::max(off2 - along * along, zero);
    out.reached = (f2 > zero) & (d2 > zero) & !(d2 <= V::set1(1e-12f) * off2) & !(across2 > d2);
    const vec3<V> g = off + f * (sqrt(d2 - across2) - along);
    const quat_lanes<V> onto = rotation_between(g, v);
    const vec3<V> dir = v / sqrt(d2);
    const vec3<V> up_now = rotate(onto, times(joint.frame, up));
    const vec3<V> up_across = up_now - dot(up_now, dir) * dir;
    const vec3<V> pole_across = pole - dot(pole, dir) * dir;
    const V up2 = dot(up_now, up_now), pole2 = dot(pole, pole);
    const typename V::mask turns = (up2 > zero) & (pole2 > zero) &
                                   (dot(up_across, up_across) > V::set1(1e-12f) * up2) &
                                   (dot(pole_across, pole_across) > V::set1(1e-12f) * pole2);
    const quat_lanes<V> turn = select(
        turns, turn_about(dir, dot(up_across, pole_across), dot(cross(up_across, pole_across), dir)),
        quat_lanes<V>::identity());
    out.rotation = renormalize(multiply(turn, onto));
    return out;
}

template <class V>
void two_bone_group(const two_bone_ik_batch_job& job, std::size_t first, std::size_t count) {
    constexpr std::size_t W = V::width;
    const group<V, two_bone_ik_batch_job> g(job, first, count);
    std::size_t start_joint[W], mid_joint[W], end_joint[W];
    const float *axis[W], *soften[W];
    rotation_at start_at[W] = {}, mid_at[W] = {};
    for (std::size_t l = 0; l < W; ++l) {
        const two_bone_ik_chain& c = *g.chain[l];
        start_joint[l] = c.start_joint;
        mid_joint[l] = c.mid_joint;
        end_joint[l] = c.end_joint;
        axis[l] = &c.mid_axis.x;
        soften[l] = &c.soften;
        start_at[l] = rotation_of(*g.pose[l], c.start_joint);
        mid_at[l] = rotation_of(*g.pose[l], c.mid_joint);
    }
    joint_lanes<V> start, mid, end;
    gather_joint(g.model, start_joint, true, start);
    gather_joint(g.model, mid_joint, true, mid);
    gather_joint(g.model, end_joint, false, end);
    start.rotation = gather_rotations<V>(start_at);
    mid.rotation = gather_rotations<V>(mid_at);
    const vec3<V> mid_axis = gather3<V>(axis);
    const V soften_lanes = gather1<V>(soften), weight = gather1<V>(g.weight);
    nonfinite_lanes<V> inputs;
    for (const joint_lanes<V>* j : {&start, &mid}) {
        for (const vec3<V>& column : j->frame) add(inputs, column);
        add(inputs, j->position);
        add(inputs, j->rotation);
    }
    add(inputs, end.position);
    add(inputs, mid_axis);
    inputs.add(soften_lanes);

    const two_bone_result<V> s = solve_two_bone(start.position, mid.position, end.position, mid.frame,
                                                gather3<V>(g.target), gather3<V>(g.pole), mid_axis, soften_lanes);
    const quat_lanes<V> start_rotation = corrected(start.rotation, s.start, start.frame, weight);
    const quat_lanes<V> mid_rotation = corrected(mid.rotation, s.mid, mid.frame, weight);
    nonfinite_lanes<V> outputs;
    add(outputs, start_rotation);
    add(outputs, mid_rotation);
    const auto finite = inputs.finite() & outputs.finite();
    const unsigned valid = g.valid();
    store_reached(job.reached, first, count, lanes::bits(s.reached & finite) & valid);
    const unsigned write = lanes::bits(s.moved & finite & (weight != V::set1(0.0f))) & valid;
    scatter_rotations(start_rotation, write, start_at);
    scatter_rotations(mid_rotation, write, mid_at);
}

template <class V>
void aim_group(const aim_ik_batch_job& job, std::size_t first, std::size_t count) {
    constexpr std::size_t W = V::width;
    const group<V, aim_ik_batch_job> g(job, first, count);
    std::size_t joint_index[W];
    const float *forward[W], *up[W], *offset[W];
    rotation_at at[W] = {};
    for (std::size_t l = 0; l < W; ++l) {
        const aim_ik_chain& c = *g.chain[l];
        joint_index[l] = c.joint;
        forward[l] = &c.forward.x;
        up[l] = &c.up.x;
        offset[l] = &c.offset.x;
        at[l] = rotation_of(*g.pose[l], c.joint);
    }
    joint_lanes<V> joint;
    gather_joint(g.model, joint_index, true, joint);
    joint.rotation = gather_rotations<V>(at);
    const vec3<V> forward_lanes = gather3<V>(forward), up_lanes = gather3<V>(up), offset_lanes = gather3<V>(offset);
    const V weight = gather1<V>(g.weight);
    nonfinite_lanes<V> inputs;
    for (const vec3<V>& column : joint.frame) add(inputs, column);
    add(inputs, joint.position);
    add(inputs, joint.rotation);
    add(inputs, forward_lanes);
    add(inputs, up_lanes);
    add(inputs, offset_lanes);

    const aim_result<V> s =
        solve_aim(joint, gather3<V>(g.target), forward_lanes, up_lanes, gather3<V>(g.pole), offset_lanes);
    const quat_lanes<V> rotation = corrected(joint.rotation, s.rotation, joint.frame, weight);
    nonfinite_lanes<V> outputs;
    add(outputs, rotation);
    const auto finite = inputs.finite() & outputs.finite();
    const unsigned valid = g.valid();
    const unsigned aimed = lanes::bits(s.reached & finite) & valid;
    store_reached(job.reached, first, count, aimed);
    scatter_rotations(rotation, aimed & lanes::bits(weight != V::set1(0.0f)), at);
}

} // namespace ik_lanes

/// The batch jobs on lanes V (run() uses lanes::widest; the tests compare every lane type), their
/// run() checks made first.
template <class V>
status run_two_bone_batch(const two_bone_ik_batch_job& job) {
    if (status st = check_batch_run(job); !st) return st;
    const std::size_t n = job.chains.size();
    for (std::size_t first = 0; first < n; first += V::width)
        ik_lanes::two_bone_group<V>(job, first, std::min(V::width, n - first));
    return {};
}
template <class V>
status run_aim_batch(const aim_ik_batch_job& job) {
    if (status st = check_batch_run(job); !st) return st;
    const std::size_t n = job.chains.size();
    for (std::size_t first = 0; first < n; first += V::width)
        ik_lanes::aim_group<V>(job, first, std::min(V::width, n - first));
    return {};
}

/// two_bone_ik_batch_job::run and aim_ik_batch_job::run.
inline status run_job(const two_bone_ik_batch_job& job) { return run_two_bone_batch<lanes::widest>(job); }
inline status run_job(const aim_ik_batch_job& job) { return run_aim_batch<lanes::widest>(job); }

} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_IK_KERNELS_HPP
