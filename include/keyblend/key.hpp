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
/// seeds' DWORD milliseconds and .X ticks). `Value` is one of the types with a `key_traits`
/// specialisation: float, glm::vec3 (position, scale), glm::quat (rotation), glm::mat4 (matrix).
template <class Value, class Time = float>
struct key {
    Time time;
    Value value;
};

/// How a track fills the time between two keys.
enum class interpolation : unsigned char {
    /// Hold the earlier key's value until the next key's time (the seeds' "non-smooth" sampling).
    step,
    /// float and vec3: `a + (b - a) * t`. quat: short-path slerp. mat4: element-wise
    /// `a + (b - a) * t`, which is what D3DX and the seeds do (a bone between two rotations shrinks
    /// and shears: at 90 degrees apart the mid-way basis vectors are 0.707 long).
    linear,
    /// quat only: short-path normalised lerp. Cheaper than slerp, same end points, angular velocity
    /// not constant. `validate_track` rejects it on other value types, which sample it as linear.
    nlerp,
    /// mat4 only: split both keys into translation/rotation/scale (`to_transform`), lerp translation
    /// and scale, slerp rotation, recompose. A bone keeps its length and stays rigid between two
    /// rotations. `validate_track` rejects it on other value types, which sample it as linear.
    decomposed,
};

/// Human-readable name of an interpolation mode ("step", "linear", "nlerp", "decomposed").
inline const char* to_string(interpolation mode) {
    switch (mode) {
    case interpolation::step: return "step";
    case interpolation::linear: return "linear";
    case interpolation::nlerp: return "nlerp";
    case interpolation::decomposed: return "decomposed";
    }
    return "unknown";
}

/// Per value type: the identity, interpolation, finiteness. Specialised for float, glm::vec3,
/// glm::quat and glm::mat4; a user may specialise it for another type to key it.
///
/// `interpolate(a, b, t, mode)`: t in [0, 1]; t == 0 returns `a` exactly in every mode;
/// `interpolation::step` returns `a` for every t < 1.
template <class Value>
struct key_traits;

template <>
struct key_traits<float> {
    static constexpr const char* name = "float";
    static float identity() { return 0.0f; }
    static bool supports(interpolation mode) {
        return mode == interpolation::step || mode == interpolation::linear;
    }
    static bool is_valid(float v) { return is_finite(v); }
    static float interpolate(float a, float b, float t, interpolation mode) {
        return mode == interpolation::step ? a : lerp(a, b, t);
    }
};

template <>
struct key_traits<glm::vec3> {
    static constexpr const char* name = "vec3";
    /// Zero. (For scale tracks the neutral value is one; clips fill missing components from the
    /// bind pose, never from this.)
    static glm::vec3 identity() { return glm::vec3(0.0f); }
    static bool supports(interpolation mode) {
        return mode == interpolation::step || mode == interpolation::linear;
    }
    static bool is_valid(const glm::vec3& v) { return is_finite(v); }
    static glm::vec3 interpolate(const glm::vec3& a, const glm::vec3& b, float t,
                                 interpolation mode) {
        return mode == interpolation::step ? a : lerp(a, b, t);
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
};

template <>
struct key_traits<glm::mat4> {
    static constexpr const char* name = "mat4";
    static glm::mat4 identity() { return glm::mat4(1.0f); }
    static bool supports(interpolation mode) { return mode != interpolation::nlerp; }
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
};

} // namespace keyblend
