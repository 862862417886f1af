// keyblend — definitions for track.hpp. Included at the bottom of track.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace keyblend {
namespace impl {

template <class Time>
bool time_is_finite(Time t) {
    if constexpr (std::is_floating_point<Time>::value)
        return is_finite(t);
    else
        return true;
}

template <class Time>
std::string time_to_string(Time t) {
    if constexpr (std::is_floating_point<Time>::value)
        return float_to_string(t);
    else
        return std::to_string(+t); // integers print as numbers, including 8-bit ones
}

inline bool is_unit(const glm::quat& q, float tolerance) {
    return std::fabs(std::sqrt(quat_dot(q, q)) - 1.0f) <= tolerance;
}

} // namespace impl

template <class Value, class Time>
status validate_track(const track<Value, Time>& t) {
    using traits = key_traits<Value>;
    const std::string kind = std::string(traits::name) + " track";
    if (t.empty()) return impl::make_error(errc::empty, kind + " has no keys");
    if (!traits::supports(t.mode()))
        return impl::make_error(errc::unsupported, std::string("interpolation '") +
                                                       to_string(t.mode()) + "' does not apply to a " +
                                                       kind);
    const bool cubic = t.mode() == interpolation::cubic_spline;
    const std::size_t tangents = cubic ? t.size() : 0;
    if (t.in_tangents().size() != tangents || t.out_tangents().size() != tangents)
        return impl::make_error(errc::size_mismatch,
                                kind + " has " + std::to_string(t.in_tangents().size()) + " in-tangents and " +
                                    std::to_string(t.out_tangents().size()) + " out-tangents for " +
                                    std::to_string(t.size()) + " keys in " + to_string(t.mode()) +
                                    " mode (cubic_spline: one each per key; other modes: none)");
    for (std::size_t i = 0; i < t.size(); ++i) {
        const std::string where = kind + " key " + std::to_string(i);
        if (!impl::time_is_finite(t.time(i)))
            return impl::make_error(errc::non_finite, where + ": time is not finite", i);
        if (!traits::is_valid(t.value(i)))
            return impl::make_error(errc::non_finite, where + ": value has NaN or infinity", i);
        if (i > 0 && t.time(i) < t.time(i - 1))
            return impl::make_error(errc::unsorted,
                                    where + ": time " + impl::time_to_string(t.time(i)) +
                                        " is before key " + std::to_string(i - 1) + "'s time " +
                                        impl::time_to_string(t.time(i - 1)),
                                    i);
        if (cubic && (!traits::is_valid(t.in_tangents()[i]) || !traits::is_valid(t.out_tangents()[i])))
            return impl::make_error(errc::non_finite, where + ": tangent has NaN or infinity", i);
        if constexpr (std::is_same<Value, glm::quat>::value) {
            if (!impl::is_unit(t.value(i), traits::unit_tolerance)) {
                const float len = std::sqrt(quat_dot(t.value(i), t.value(i)));
                return impl::make_error(errc::not_normalized,
                                        where + ": rotation is not unit length (|q| = " +
                                            impl::float_to_string(len, 6) + ")",
                                        i);
            }
        }
    }
    return {};
}

} // namespace keyblend
