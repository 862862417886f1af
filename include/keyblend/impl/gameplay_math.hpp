// keyblend — rotation helpers shared by root motion (motion.hpp) and IK (ik.hpp). Internal.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "../math.hpp"

#include <cmath>

namespace keyblend {
namespace impl {

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
/// identity-like (w, 0), renormalised): the same angle about another axis.
inline glm::quat with_axis(const glm::quat& q, const glm::vec3& axis) {
    const float len = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    const float axis_len = glm::length(axis);
    if (!(len > 0.0f) || !(axis_len > 0.0f)) return glm::identity<glm::quat>();
    const glm::vec3 v = axis * (len / axis_len);
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
inline glm::quat in_frame(const glm::quat& q, const glm::mat3& a) {
    const glm::vec3 v(q.x, q.y, q.z);
    const glm::vec3 local(glm::dot(glm::cross(a[1], a[2]), v), glm::dot(glm::cross(a[2], a[0]), v),
                          glm::dot(glm::cross(a[0], a[1]), v));
    return with_axis(q, local);
}

/// The shortest rotation taking the direction of `from` to the direction of `to` (any lengths). For
/// opposite directions, half a turn about an axis perpendicular to `from`; the identity when either
/// is zero.
inline glm::quat rotation_between(const glm::vec3& from, const glm::vec3& to) {
    const float norms = std::sqrt(glm::dot(from, from) * glm::dot(to, to));
    if (!(norms > 0.0f)) return glm::identity<glm::quat>();
    const float w = norms + glm::dot(from, to);
    if (w <= 1e-6f * norms) {
        // Opposite: any axis perpendicular to `from`.
        const glm::vec3 a = std::fabs(from.x) > std::fabs(from.z) ? glm::vec3(-from.y, from.x, 0.0f)
                                                                    : glm::vec3(0.0f, -from.z, from.y);
        return keyblend::normalize_or_identity(make_quat(0.0f, a.x, a.y, a.z));
    }
    const glm::vec3 v = glm::cross(from, to);
    return keyblend::normalize_or_identity(make_quat(w, v.x, v.y, v.z));
}

/// Rotation by `angle` radians about the unit `axis` (angleAxis, members set by name).
inline glm::quat axis_angle(const glm::vec3& axis, float angle) {
    const float s = std::sin(0.5f * angle);
    return make_quat(std::cos(0.5f * angle), axis.x * s, axis.y * s, axis.z * s);
}

} // namespace impl
} // namespace keyblend
