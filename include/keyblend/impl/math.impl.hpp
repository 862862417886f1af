// keyblend — definitions for math.hpp. Included at the bottom of math.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>

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

inline bool is_finite(float v) { return std::isfinite(v); }
inline bool is_finite(const glm::vec3& v) {
    return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}
inline bool is_finite(const glm::vec4& v) {
    return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z) && std::isfinite(v.w);
}
inline bool is_finite(const glm::quat& q) {
    return std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z);
}
inline bool is_finite(const glm::mat4& m) {
    return is_finite(m[0]) && is_finite(m[1]) && is_finite(m[2]) && is_finite(m[3]);
}

inline glm::quat normalize_or_identity(const glm::quat& q) {
    const float len = std::sqrt(quat_dot(q, q));
    if (!(len > 0.0f) || !std::isfinite(len)) return glm::identity<glm::quat>();
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

inline glm::quat nlerp(const glm::quat& a, const glm::quat& b, float t) {
    if (t == 0.0f) return a;
    if (t == 1.0f) return b;
    const float s = quat_dot(a, b) < 0.0f ? -1.0f : 1.0f;
    return normalize_or_identity(make_quat(a.w + (s * b.w - a.w) * t, a.x + (s * b.x - a.x) * t,
                                           a.y + (s * b.y - a.y) * t, a.z + (s * b.z - a.z) * t));
}

namespace impl {

/// sin and cos of x in [0, π/2], by their Taylor series to x^13 / x^14 (truncation error below
/// 1e-9 on that range; float rounding dominates). Branch-free and several times cheaper than libm.
inline void sin_cos_quarter_turn(float x, float& sin_x, float& cos_x) {
    // Estrin's scheme: the powers are computed once and the terms in pairs, so the dependency
    // chain is 4 multiplies deep instead of Horner's 7.
    const float x2 = x * x;
    const float x4 = x2 * x2;
    const float x8 = x4 * x4;
    const float s01 = 1.0f - x2 * (1.0f / 6);
    const float s23 = 1.0f / 120 - x2 * (1.0f / 5040);
    const float s45 = 1.0f / 362880 - x2 * (1.0f / 39916800);
    const float s6 = 1.0f / 6227020800.0f;
    sin_x = x * ((s01 + x4 * s23) + x8 * (s45 + x4 * s6));
    const float c01 = 1.0f - x2 * 0.5f;
    const float c23 = 1.0f / 24 - x2 * (1.0f / 720);
    const float c45 = 1.0f / 40320 - x2 * (1.0f / 3628800);
    const float c67 = 1.0f / 479001600.0f - x2 * (1.0f / 87178291200.0f);
    cos_x = (c01 + x4 * c23) + x8 * (c45 + x4 * c67);
}

/// asin(x) for x in [0, 1], to about 1 ulp: Cephes' single-precision minimax polynomial on
/// [0, 0.5] and asin(x) = π/2 − 2 asin(√((1 − x) / 2)) above.
inline float asin_unit(float x) {
    const bool high = x > 0.5f;
    const float z = high ? 0.5f * (1.0f - x) : x * x;
    const float r = high ? std::sqrt(z) : x;
    const float p = ((((4.2163199048e-2f * z + 2.4181311049e-2f) * z + 4.5470025998e-2f) * z +
                      7.4953002686e-2f) * z + 1.6666752422e-1f) * z * r + r;
    return high ? 1.57079632679489661923f - 2.0f * p : p;
}

} // namespace impl

inline glm::quat slerp(const glm::quat& a, const glm::quat& b, float t) {
    if (t == 0.0f) return a;
    if (t == 1.0f) return b;
    float d = quat_dot(a, b);
    const float s = d < 0.0f ? -1.0f : 1.0f;
    d *= s; // cos θ, θ in [0, π/2] after the short-path flip
    const glm::quat c = make_quat(s * b.w, s * b.x, s * b.y, s * b.z);
    const glm::quat diff = make_quat(a.w - c.w, a.x - c.x, a.y - c.y, a.z - c.z);
    const glm::quat sum = make_quat(a.w + c.w, a.x + c.x, a.y + c.y, a.z + c.z);
    // For unit a, c at angle θ: |a - c| = 2 sin(θ/2) and |a + c| = 2 cos(θ/2), so
    // θ = 2 asin(|a - c| / 2) (full precision for small θ, unlike acos(d)) and
    // sin θ = |a - c| |a + c| / 2 (no cancellation either).
    const float chord2 = quat_dot(diff, diff);
    const float chord = std::sqrt(chord2);
    const float theta = 2.0f * impl::asin_unit(std::min(0.5f * chord, 1.0f));
    if (!(theta > 1e-6f)) return nlerp(a, c, t);
    const float sin_theta = 0.5f * std::sqrt(chord2 * quat_dot(sum, sum));
    // sin((1 - t)θ) = sin θ cos tθ - cos θ sin tθ: one sin/cos pair instead of three sines.
    // t θ stays in [0, π/2] for t in [0, 1]; outside, clamp (slerp does not extrapolate).
    float sin_t, cos_t;
    impl::sin_cos_quarter_turn(std::min(std::max(t, 0.0f), 1.0f) * theta, sin_t, cos_t);
    const float wc = sin_t / sin_theta;
    const float wa = cos_t - d * wc;
    const glm::quat r = make_quat(wa * a.w + wc * c.w, wa * a.x + wc * c.x, wa * a.y + wc * c.y,
                                  wa * a.z + wc * c.z);
    // For unit inputs r is unit up to rounding (and up to the input's own error for inputs within
    // the validation tolerance), so two Newton steps for 1/sqrt(|r|^2) from 1 renormalise it to
    // float precision without a square root or a division (the error after them is ~(|r|^2-1)^4).
    const float n2 = quat_dot(r, r);
    float inv = 1.5f - 0.5f * n2;
    inv *= 1.5f - 0.5f * n2 * inv * inv;
    return make_quat(r.w * inv, r.x * inv, r.y * inv, r.z * inv);
}

template <class V>
V lerp(const V& a, const V& b, float t) {
    if (t == 0.0f) return a;
    return a + (b - a) * t;
}

} // namespace keyblend
