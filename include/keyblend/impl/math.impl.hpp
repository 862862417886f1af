// keyblend — definitions for math.hpp. Included at the bottom of math.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "simd/quat.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace keyblend {

inline glm::quat make_quat(float w, float x, float y, float z) {
    glm::quat q = glm::identity<glm::quat>();
    q.w = w;
    q.x = x;
    q.y = y;
    q.z = z;
    return q;
}

inline float quat_dot(const glm::quat& a, const glm::quat& b) {
    // A tree, not a chain: half the latency, and the same result in every build.
    return (a.w * b.w + a.x * b.x) + (a.y * b.y + a.z * b.z);
}

inline bool is_finite(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x7f800000u) != 0x7f800000u;
}
inline bool is_finite(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x7ff0000000000000u) != 0x7ff0000000000000u;
}
inline bool is_nan(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x7fffffffu) > 0x7f800000u;
}
inline bool is_nan(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
}
inline bool is_finite(const glm::vec3& v) { return is_finite(v.x) && is_finite(v.y) && is_finite(v.z); }
inline bool is_finite(const glm::vec4& v) {
    return is_finite(v.x) && is_finite(v.y) && is_finite(v.z) && is_finite(v.w);
}
inline bool is_finite(const glm::quat& q) {
    return is_finite(q.w) && is_finite(q.x) && is_finite(q.y) && is_finite(q.z);
}
inline bool is_finite(const glm::mat4& m) {
    return is_finite(m[0]) && is_finite(m[1]) && is_finite(m[2]) && is_finite(m[3]);
}

inline glm::quat normalize_or_identity(const glm::quat& q) {
    const float len = std::sqrt(quat_dot(q, q));
    if (!is_finite(len) || !(len > 0.0f)) return glm::identity<glm::quat>();
    const float inv = 1.0f / len;
    return make_quat(q.w * inv, q.x * inv, q.y * inv, q.z * inv);
}

inline glm::mat4 to_matrix(const transform& t) {
    // R * S scales column i of the rotation matrix by scale[i]; T sets column 3.
    const glm::mat3 r = glm::mat3_cast(t.rotation);
    glm::mat4 m(1.0f);
    m[0] = glm::vec4(r[0] * t.scale.x, 0.0f);
    m[1] = glm::vec4(r[1] * t.scale.y, 0.0f);
    m[2] = glm::vec4(r[2] * t.scale.z, 0.0f);
    m[3] = glm::vec4(t.translation, 1.0f);
    return m;
}

inline glm::quat quat_from_rotation(const glm::mat3& r) {
    // m(row, col) = r[col][row].
    const float m00 = r[0][0], m11 = r[1][1], m22 = r[2][2];
    const float m01 = r[1][0], m10 = r[0][1];
    const float m02 = r[2][0], m20 = r[0][2];
    const float m12 = r[2][1], m21 = r[1][2];
    const float trace = m00 + m11 + m22;
    // The branch with the largest diagonal term divides by the largest s: no cancellation.
    // Arguments are clamped so that a matrix that is not quite a rotation cannot reach sqrt(<0).
    constexpr float tiny = 1e-30f;
    float w, x, y, z;
    if (trace > 0.0f) {
        const float s = 2.0f * std::sqrt(std::max(trace + 1.0f, tiny));
        w = 0.25f * s;
        x = (m21 - m12) / s;
        y = (m02 - m20) / s;
        z = (m10 - m01) / s;
    } else if (m00 > m11 && m00 > m22) {
        const float s = 2.0f * std::sqrt(std::max(1.0f + m00 - m11 - m22, tiny));
        w = (m21 - m12) / s;
        x = 0.25f * s;
        y = (m01 + m10) / s;
        z = (m02 + m20) / s;
    } else if (m11 > m22) {
        const float s = 2.0f * std::sqrt(std::max(1.0f + m11 - m00 - m22, tiny));
        w = (m02 - m20) / s;
        x = (m01 + m10) / s;
        y = 0.25f * s;
        z = (m12 + m21) / s;
    } else {
        const float s = 2.0f * std::sqrt(std::max(1.0f + m22 - m00 - m11, tiny));
        w = (m10 - m01) / s;
        x = (m02 + m20) / s;
        y = (m12 + m21) / s;
        z = 0.25f * s;
    }
    if (w < 0.0f) {
        w = -w;
        x = -x;
        y = -y;
        z = -z;
    }
    return normalize_or_identity(make_quat(w, x, y, z));
}

namespace impl {
/// A unit vector perpendicular to unit vector v.
inline glm::vec3 any_perpendicular(const glm::vec3& v) {
    const glm::vec3 a = glm::abs(v);
    // Cross with the world axis least aligned with v.
    const glm::vec3 axis = (a.x <= a.y && a.x <= a.z) ? glm::vec3(1.0f, 0.0f, 0.0f)
                           : (a.y <= a.z)             ? glm::vec3(0.0f, 1.0f, 0.0f)
                                                      : glm::vec3(0.0f, 0.0f, 1.0f);
    return glm::normalize(glm::cross(v, axis));
}
} // namespace impl

inline transform to_transform(const glm::mat4& m) {
    transform out;
    out.translation = glm::vec3(m[3]);

    glm::vec3 column[3] = {glm::vec3(m[0]), glm::vec3(m[1]), glm::vec3(m[2])};
    const float length[3] = {glm::length(column[0]), glm::length(column[1]),
                             glm::length(column[2])};
    const float det = glm::dot(glm::cross(column[0], column[1]), column[2]);
    const float mirror = det < 0.0f ? -1.0f : 1.0f;
    column[0] *= mirror;
    out.scale = glm::vec3(length[0] * mirror, length[1], length[2]);

    // Gram–Schmidt in x, y, z order; a column with no direction left is filled in afterwards.
    constexpr float min_length = 1e-8f;
    constexpr float min_relative = 1e-6f;
    glm::vec3 axis[3] = {glm::vec3(0.0f), glm::vec3(0.0f), glm::vec3(0.0f)};
    bool known[3] = {false, false, false};
    for (int i = 0; i < 3; ++i) {
        glm::vec3 v = column[i];
        for (int j = 0; j < i; ++j)
            if (known[j]) v -= glm::dot(v, axis[j]) * axis[j];
        const float len = glm::length(v);
        if (len > min_length && len > min_relative * length[i]) {
            axis[i] = v / len;
            known[i] = true;
        }
    }
    const int count = int(known[0]) + int(known[1]) + int(known[2]);
    if (count == 0) {
        out.rotation = glm::identity<glm::quat>();
        return out;
    }
    if (count == 1) {
        const int k = known[0] ? 0 : known[1] ? 1 : 2;
        axis[(k + 1) % 3] = impl::any_perpendicular(axis[k]);
        axis[(k + 2) % 3] = glm::cross(axis[k], axis[(k + 1) % 3]);
    } else {
        // Two or three known: rebuild the last unknown (or z) as the right-handed cross product,
        // which also keeps the basis proper when the columns were (nearly) coplanar.
        const int missing = !known[0] ? 0 : !known[1] ? 1 : 2;
        axis[missing] = glm::cross(axis[(missing + 1) % 3], axis[(missing + 2) % 3]);
    }
    out.rotation = quat_from_rotation(glm::mat3(axis[0], axis[1], axis[2]));
    return out;
}

namespace impl {
inline quat_lanes<lanes::f1> to_lanes(const glm::quat& q) { return {{q.w}, {q.x}, {q.y}, {q.z}}; }
inline glm::quat from_lanes(const quat_lanes<lanes::f1>& q) { return make_quat(q.w.v, q.x.v, q.y.v, q.z.v); }
} // namespace impl

// The scalar interpolators are the lane kernels on one lane (impl/simd/quat.hpp): one
// implementation, so the SIMD pose kernels and these agree to FMA contraction.
inline glm::quat nlerp(const glm::quat& a, const glm::quat& b, float t) {
    return impl::from_lanes(impl::nlerp(impl::to_lanes(a), impl::to_lanes(b), impl::lanes::f1{t}));
}

inline glm::quat slerp(const glm::quat& a, const glm::quat& b, float t) {
    return impl::from_lanes(impl::slerp(impl::to_lanes(a), impl::to_lanes(b), impl::lanes::f1{t}));
}

template <class V>
V lerp(const V& a, const V& b, float t) {
    if (t == 0.0f) return a;
    return a + (b - a) * t;
}

} // namespace keyblend
