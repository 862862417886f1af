// keyblend — keys and how each value type interpolates.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "math.hpp"

#include <type_traits>

namespace keyblend {

/// One keyframe: a time and the value at that time.
///
/// `Time` is `float` or `double` seconds, or an integer tick count (`std::uint32_t` for the
/// classic DWORD milliseconds and .X ticks). `Value` is one of the types with a `key_traits`
/// specialisation: float, glm::vec3 (position, scale), glm::quat (rotation), glm::mat4 (matrix).
template <class Value, class Time = float>
struct key {
    Time time;
    Value value;
};

/// How a track fills the time between two keys.
enum class interpolation : unsigned char {
    /// Hold the earlier key's value until the next key's time (the classic "non-smooth" sampling).
    step,
    /// float and vec3: `a + (b - a) * t`. quat: short-path slerp. mat4: element-wise
    /// `a + (b - a) * t`, which is what D3DX and the classic code do (a bone between two rotations shrinks
    /// and shears: at 90 degrees apart the mid-way basis vectors are 0.707 long).
    linear,
    /// quat only: short-path normalised lerp. Cheaper than slerp, same end points, angular velocity
    /// not constant. `validate_track` rejects it on other value types, which sample it as linear.
    nlerp,
    /// mat4 only: split both keys into translation/rotation/scale (`to_transform`), lerp translation
    /// and scale, slerp rotation, recompose. A bone keeps its length and stays rigid between two
    /// rotations. `validate_track` rejects it on other value types, which sample it as linear.
    decomposed,
    /// float, vec3 and quat: glTF 2.0's CUBICSPLINE, a cubic Hermite spline through the keys with
    /// an in-tangent and an out-tangent per key (track::in_tangents / out_tangents, in value units
    /// per time unit of the track). Between keys k and k + 1, with d = time(k + 1) - time(k) and
    /// s = (t - time(k)) / d:
    ///     v(s) = (2s^3 - 3s^2 + 1) v_k + d (s^3 - 2s^2 + s) out_k + (-2s^3 + 3s^2) v_k+1
    ///            + d (s^3 - s^2) in_k+1
    /// component by component (for a quaternion its four components, with no short-path flip, and
    /// the result normalised). At a key's time the key's value, bit for bit. `validate_track`
    /// rejects it on mat4 tracks, which sample it as linear.
    cubic_spline,
};

/// Human-readable name of an interpolation mode ("step", "linear", "nlerp", "decomposed",
/// "cubic_spline").
inline const char* to_string(interpolation mode) {
    switch (mode) {
    case interpolation::step: return "step";
    case interpolation::linear: return "linear";
    case interpolation::nlerp: return "nlerp";
    case interpolation::decomposed: return "decomposed";
    case interpolation::cubic_spline: return "cubic_spline";
    }
    return "unknown";
}

/// Per value type: the identity, interpolation, finiteness. Specialised for float, glm::vec3,
/// glm::quat and glm::mat4; a user may specialise it for another type to key it.
///
/// `interpolate(a, b, t, mode)`: t in [0, 1]; t == 0 returns `a` exactly in every mode;
/// `interpolation::step` returns `a` for every t < 1. (cubic_spline goes through `hermite`, which
/// also needs the tangents.)
///
/// `hermite(v0, m0, v1, m1, s)`: the cubic Hermite basis at s in [0, 1] of the values v0, v1 and
/// the tangents m0, m1 already scaled by the key interval (see interpolation::cubic_spline); s == 0
/// returns v0 exactly. Quaternions are normalised after (normalize_or_identity).
template <class Value>
struct key_traits;

namespace impl {
/// The four cubic Hermite basis weights at s: h00, h10, h01, h11.
struct hermite_basis {
    float h00, h10, h01, h11;
    explicit hermite_basis(float s) {
        const float s2 = s * s, s3 = s2 * s;
        h00 = 2.0f * s3 - 3.0f * s2 + 1.0f;
        h10 = s3 - 2.0f * s2 + s;
        h01 = -2.0f * s3 + 3.0f * s2;
        h11 = s3 - s2;
    }
    template <class V>
    V apply(const V& v0, const V& m0, const V& v1, const V& m1) const {
        return v0 * h00 + m0 * h10 + v1 * h01 + m1 * h11;
    }
};
} // namespace impl

template <>
struct key_traits<float> {
    static constexpr const char* name = "float";
    static float identity() { return 0.0f; }
    static bool supports(interpolation mode) {
        return mode == interpolation::step || mode == interpolation::linear ||
               mode == interpolation::cubic_spline;
    }
    static bool is_valid(float v) { return is_finite(v); }
    static float interpolate(float a, float b, float t, interpolation mode) {
        return mode == interpolation::step ? a : lerp(a, b, t);
    }
    static float hermite(float v0, float m0, float v1, float m1, float s) {
        return s == 0.0f ? v0 : impl::hermite_basis(s).apply(v0, m0, v1, m1);
    }
};

template <>
struct key_traits<glm::vec3> {
    static constexpr const char* name = "vec3";
    /// Zero. (For scale tracks the neutral value is one; clips fill missing components from the
    /// bind pose, never from this.)
    static glm::vec3 identity() { return glm::vec3(0.0f); }
    static bool supports(interpolation mode) {
        return mode == interpolation::step || mode == interpolation::linear ||
               mode == interpolation::cubic_spline;
    }
    static bool is_valid(const glm::vec3& v) { return is_finite(v); }
    static glm::vec3 interpolate(const glm::vec3& a, const glm::vec3& b, float t,
                                 interpolation mode) {
        return mode == interpolation::step ? a : lerp(a, b, t);
    }
    static glm::vec3 hermite(const glm::vec3& v0, const glm::vec3& m0, const glm::vec3& v1,
                             const glm::vec3& m1, float s) {
        return s == 0.0f ? v0 : impl::hermite_basis(s).apply(v0, m0, v1, m1);
    }
};

template <>
struct key_traits<glm::quat> {
    static constexpr const char* name = "quat";
    /// Tolerance on |q| - 1 that `validate_track` accepts for rotation keys.
    static constexpr float unit_tolerance = 1e-3f;
    static glm::quat identity() { return glm::identity<glm::quat>(); }
    static bool supports(interpolation mode) { return mode != interpolation::decomposed; }
    static bool is_valid(const glm::quat& q) { return is_finite(q); }
    static glm::quat interpolate(const glm::quat& a, const glm::quat& b, float t,
                                 interpolation mode) {
        switch (mode) {
        case interpolation::step: return a;
        case interpolation::nlerp: return nlerp(a, b, t);
        default: return slerp(a, b, t);
        }
    }
    static glm::quat hermite(const glm::quat& v0, const glm::quat& m0, const glm::quat& v1,
                             const glm::quat& m1, float s) {
        if (s == 0.0f) return v0;
        const impl::hermite_basis h(s);
        return normalize_or_identity(make_quat(h.apply(v0.w, m0.w, v1.w, m1.w), h.apply(v0.x, m0.x, v1.x, m1.x),
                                               h.apply(v0.y, m0.y, v1.y, m1.y), h.apply(v0.z, m0.z, v1.z, m1.z)));
    }
};

template <>
struct key_traits<glm::mat4> {
    static constexpr const char* name = "mat4";
    static glm::mat4 identity() { return glm::mat4(1.0f); }
    static bool supports(interpolation mode) {
        return mode != interpolation::nlerp && mode != interpolation::cubic_spline;
    }
    static bool is_valid(const glm::mat4& m) { return is_finite(m); }
    static glm::mat4 interpolate(const glm::mat4& a, const glm::mat4& b, float t,
                                 interpolation mode) {
        switch (mode) {
        case interpolation::step: return a;
        case interpolation::decomposed: {
            if (t == 0.0f) return a;
            const transform ta = to_transform(a);
            const transform tb = to_transform(b);
            transform r;
            r.translation = lerp(ta.translation, tb.translation, t);
            r.rotation = slerp(ta.rotation, tb.rotation, t);
            r.scale = lerp(ta.scale, tb.scale, t);
            return to_matrix(r);
        }
        default: return lerp(a, b, t);
        }
    }
    /// (cubic_spline does not apply to matrices: validate_track rejects it, and it samples as linear.)
    static glm::mat4 hermite(const glm::mat4& v0, const glm::mat4&, const glm::mat4& v1, const glm::mat4&,
                             float s) {
        return s == 0.0f ? v0 : lerp(v0, v1, s);
    }
};

} // namespace keyblend
