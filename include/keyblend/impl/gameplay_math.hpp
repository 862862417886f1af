// keyblend — rotation helpers shared by root motion (motion.hpp) and IK (ik.hpp). Internal.
//
// The IK jobs run them a few dozen times per solve: they are written out on scalars and forced
// inline (GCC otherwise leaves GLM's quaternion operators as calls inside the solvers), and they
// need no trigonometry.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "../math.hpp"
#include "simd/lanes.hpp"

#include <algorithm>
#include <cmath>

namespace keyblend {
namespace impl {

/// a * b (b first), members by name.
KEYBLEND_FORCE_INLINE glm::quat qmul(const glm::quat& a, const glm::quat& b) {
    return make_quat(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                     a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}

/// v turned by the unit quaternion q: v + 2w (u x v) + 2 u x (u x v).
KEYBLEND_FORCE_INLINE glm::vec3 qrotate(const glm::quat& q, const glm::vec3& v) {
    const glm::vec3 u(q.x, q.y, q.z);
    const glm::vec3 t = 2.0f * glm::cross(u, v);
    return v + q.w * t + glm::cross(u, t);
}

/// q / |q|, or the identity for a zero (or non-finite) q.
KEYBLEND_FORCE_INLINE glm::quat qnormalize(const glm::quat& q) {
    const float n2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
    if (!(n2 > 0.0f) || !is_finite(n2)) return glm::identity<glm::quat>();
    const float inv = 1.0f / std::sqrt(n2);
    return make_quat(q.w * inv, q.x * inv, q.y * inv, q.z * inv);
}

/// q / |q| for a q that is unit up to rounding (a product of unit quaternions): one Newton step,
/// 1 / sqrt(n2) ~ (3 - n2) / 2, exact to float precision for |n2 - 1| < 1e-4; otherwise qnormalize.
KEYBLEND_FORCE_INLINE glm::quat qrenormalize(const glm::quat& q) {
    const float n2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
    if (!(std::fabs(n2 - 1.0f) < 1e-4f)) return qnormalize(q);
    const float inv = 1.5f - 0.5f * n2;
    return make_quat(q.w * inv, q.x * inv, q.y * inv, q.z * inv);
}

/// The rotation about the unit axis `axis` in q (the twist of q's swing-twist decomposition), or
/// the identity where it is undefined (q turns 180 degrees about an axis perpendicular to `axis`).
inline glm::quat twist_about(const glm::quat& q, const glm::vec3& axis) {
    const float along = q.x * axis.x + q.y * axis.y + q.z * axis.z;
    const float len = std::sqrt(q.w * q.w + along * along);
    if (!(len > 1e-6f)) return glm::identity<glm::quat>();
    return make_quat(q.w / len, along * axis.x / len, along * axis.y / len, along * axis.z / len);
}

/// `q` flipped onto the hemisphere of `reference` (the same rotation, dot >= 0).
inline glm::quat same_hemisphere(const glm::quat& q, const glm::quat& reference) {
    return quat_dot(q, reference) < 0.0f ? -q : q;
}

/// The quaternion (w, v) with its vector part turned to `axis` (any length; zero gives the
/// identity): the same angle about another axis.
KEYBLEND_FORCE_INLINE glm::quat with_axis(const glm::quat& q, const glm::vec3& axis) {
    const float len2 = q.x * q.x + q.y * q.y + q.z * q.z, axis_len2 = glm::dot(axis, axis);
    if (!(len2 > 0.0f) || !(axis_len2 > 0.0f)) return glm::identity<glm::quat>();
    const glm::vec3 v = axis * std::sqrt(len2 / axis_len2);
    return make_quat(q.w, v.x, v.y, v.z);
}

/// The rotation `a * R(q) * a^-1` for a 3x3 matrix `a` that is a similarity (a rotation times a
/// uniform scale, possibly mirrored): q expressed in the frame `a` maps *to*.
inline glm::quat conjugate_by(const glm::quat& q, const glm::mat3& a) {
    const glm::vec3 image = a * glm::vec3(q.x, q.y, q.z);
    return with_axis(q, glm::determinant(a) < 0.0f ? -image : image);
}

/// The rotation `a^-1 * R(q) * a`: a rotation given in the space `a` maps to (model space, for a
/// joint's model matrix), expressed in the frame of `a` (the joint's own). Computed with the
/// adjugate of `a` (the axis goes to adj(a) * axis), so it needs no division and is right for
/// mirrored frames; exact for similarities, the nearest such rotation otherwise.
KEYBLEND_FORCE_INLINE glm::quat in_frame(const glm::quat& q, const glm::mat3& a) {
    const glm::vec3 v(q.x, q.y, q.z);
    const glm::vec3 local(glm::dot(glm::cross(a[1], a[2]), v), glm::dot(glm::cross(a[2], a[0]), v),
                          glm::dot(glm::cross(a[0], a[1]), v));
    return with_axis(q, local);
}

/// The shortest rotation taking the direction of `from` to the direction of `to` (any lengths). For
/// opposite directions, half a turn about an axis perpendicular to `from`; the identity when either
/// is zero. Precise at every angle: the half-angle quaternion (|f||t| + f.t, f x t) loses the
/// angle to cancellation as the vectors turn opposite, so beyond a right angle the same rotation
/// is formed as (|f x t|, (|f||t| - f.t) (f x t) / |f x t|).
KEYBLEND_FORCE_INLINE glm::quat rotation_between(const glm::vec3& from, const glm::vec3& to) {
    const float norms = std::sqrt(glm::dot(from, from) * glm::dot(to, to));
    if (!(norms > 0.0f)) return glm::identity<glm::quat>();
    const float d = glm::dot(from, to);
    const glm::vec3 v = glm::cross(from, to);
    if (d >= 0.0f) return qnormalize(make_quat(norms + d, v.x, v.y, v.z));
    const float sine = std::sqrt(glm::dot(v, v));
    if (!(sine > 1e-6f * norms)) {
        // Opposite: any axis perpendicular to `from`.
        const glm::vec3 a = std::fabs(from.x) > std::fabs(from.z) ? glm::vec3(-from.y, from.x, 0.0f)
                                                                    : glm::vec3(0.0f, -from.z, from.y);
        return qnormalize(make_quat(0.0f, a.x, a.y, a.z));
    }
    const glm::vec3 axis = v * ((norms - d) / sine);
    return qnormalize(make_quat(sine, axis.x, axis.y, axis.z));
}

/// The rotation about the unit `axis` by the angle t whose cosine and sine are proportional to `c`
/// and `s` (c = k cos t, s = k sin t for some k > 0): no trigonometry, since (k + c, s * axis) is
/// that rotation's quaternion up to length (its half angle), or equally, and without cancellation
/// when the angle is beyond a right angle, (s, (k - c) * axis). The identity where c and s are
/// both 0.
KEYBLEND_FORCE_INLINE glm::quat turn_about(const glm::vec3& axis, float c, float s) {
    const float k = std::sqrt(c * c + s * s);
    if (!(k > 0.0f)) return glm::identity<glm::quat>();
    if (c >= 0.0f) return qnormalize(make_quat(k + c, s * axis.x, s * axis.y, s * axis.z));
    const float m = k - c;
    return qnormalize(make_quat(s, m * axis.x, m * axis.y, m * axis.z));
}

} // namespace impl
} // namespace keyblend
