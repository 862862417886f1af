// keyblend — definitions for sample.hpp. Included at the bottom of sample.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace keyblend {
namespace impl {

/// The type two times are compared and subtracted in: the type itself when both are the same,
/// double otherwise (exact for every float, and for integers up to 2^53).
template <class Time, class Query>
using time_calc_t = std::conditional_t<std::is_same<Time, Query>::value, Time, double>;

/// key_time <= query, exactly, in time_calc_t. False when query is NaN.
template <class Time, class Query>
inline bool key_at_or_before(Time key_time, Query query) {
    using calc = time_calc_t<Time, Query>;
    return static_cast<calc>(key_time) <= static_cast<calc>(query);
}

/// Number of keys with time <= query (std::upper_bound), branch-free.
template <class Time, class Query>
inline std::size_t keys_at_or_before(const Time* times, std::size_t count, Query query) {
    if (count == 0) return 0;
    const Time* base = times;
    std::size_t n = count;
    while (n > 1) {
        const std::size_t half = n / 2;
        base = key_at_or_before(base[half], query) ? base + half : base;
        n -= half;
    }
    return static_cast<std::size_t>(base - times) + (key_at_or_before(*base, query) ? 1u : 0u);
}

/// The interval for `after` = number of keys at or before the query.
template <class Time, class Query>
inline key_interval interval_from_count(const Time* times, std::size_t count, Query query,
                                        std::size_t after) {
    if (after == 0) return {0, 0, 0.0f};
    if (after >= count) return {count - 1, count - 1, 0.0f};
    const std::size_t first = after - 1;
    const Time t0 = times[first];
    const Time t1 = times[after];
    using calc = std::conditional_t<std::is_floating_point<time_calc_t<Time, Query>>::value,
                                    time_calc_t<Time, Query>, double>;
    const calc span = static_cast<calc>(t1) - static_cast<calc>(t0);
    float alpha = 0.0f;
    if (span > calc(0)) {
        const calc offset = static_cast<calc>(query) - static_cast<calc>(t0);
        alpha = static_cast<float>(offset / span);
        // Only reachable with unsorted keys or rounding: keep alpha a weight.
        alpha = std::min(std::max(alpha, 0.0f), 1.0f);
    }
    return {first, after, alpha};
}

template <class T>
constexpr bool is_negative(T v) {
    if constexpr (std::is_signed<T>::value)
        return v < T(0);
    else
        return static_cast<void>(v), false;
}

} // namespace impl

template <class Time>
Time wrap_time(Time time, Time length, wrap_mode mode) {
    if constexpr (std::is_floating_point<Time>::value) {
        if (is_nan(time) || !is_finite(length) || !(length > Time(0))) return Time(0);
        if (mode == wrap_mode::clamp) return std::min(std::max(time, Time(0)), length);
        const Time period = mode == wrap_mode::loop_inclusive ? length + Time(1) : length;
        if (time >= Time(0) && time < period) return time;
        if (!is_finite(time)) return Time(0);
        Time r = std::fmod(time, period);
        if (r < Time(0)) r += period;
        return r < period ? r : Time(0); // r + period may round up to period
    } else {
        static_assert(std::is_integral<Time>::value, "Time must be an integer or floating type");
        if (length == Time(0) || impl::is_negative(length)) return Time(0);
        if (mode == wrap_mode::clamp)
            return impl::is_negative(time) ? Time(0) : (time > length ? length : time);
        // length + 1 cannot overflow except at the type's maximum, where the period is the whole
        // non-negative range and every non-negative time is already inside it.
        if (mode == wrap_mode::loop_inclusive && length == std::numeric_limits<Time>::max())
            return impl::is_negative(time) ? Time(time + length + Time(1)) : time;
        const Time period = mode == wrap_mode::loop_inclusive ? Time(length + 1) : length;
        Time r = Time(time % period);
        if (impl::is_negative(r)) r = Time(r + period);
        return r;
    }
}

template <class Time, class Query>
key_interval locate_keys(const Time* times, std::size_t count, Query time) {
    return impl::interval_from_count(times, count, time,
                                     impl::keys_at_or_before(times, count, time));
}

namespace impl {
/// The number of keys at or before `time` (as keys_at_or_before), searched from `index`, the first
/// key of a previous search (the cursor), which is updated. O(1) when the time moved by a few keys
/// in either direction; a longer jump binary-searches the rest. Precondition: count > 0.
template <class Time, class Query>
KEYBLEND_FORCE_INLINE std::size_t keys_at_or_before_from(const Time* times, std::size_t count, Query time,
                                          std::size_t& index) {
    // A walk longer than this many keys is a jump: binary search the rest instead.
    constexpr std::size_t max_steps = 4;
    std::size_t i = std::min(index, count - 1);
    std::size_t after; // number of keys at or before `time`
    if (key_at_or_before(times[i], time)) {
        // Forward: times[i] <= time; advance while the next key is also at or before it.
        std::size_t steps = 0;
        while (i + 1 < count && key_at_or_before(times[i + 1], time) && steps < max_steps) {
            ++i;
            ++steps;
        }
        if (i + 1 < count && key_at_or_before(times[i + 1], time))
            after = i + 1 + keys_at_or_before(times + i + 1, count - i - 1, time);
        else
            after = i + 1;
    } else {
        // Backward: time < times[i]; step back while the previous key is also after it.
        std::size_t steps = 0;
        while (i > 0 && !key_at_or_before(times[i - 1], time) && steps < max_steps) {
            --i;
            ++steps;
        }
        if (i > 0 && !key_at_or_before(times[i - 1], time))
            after = keys_at_or_before(times, i, time);
        else
            after = i;
    }
    index = after > 0 ? after - 1 : 0;
    return after;
}
} // namespace impl

template <class Time, class Query>
key_interval locate_keys(const Time* times, std::size_t count, Query time, track_cursor& cursor) {
    if (count == 0) {
        cursor.index_ = 0;
        return {0, 0, 0.0f};
    }
    const std::size_t after = impl::keys_at_or_before_from(times, count, time, cursor.index_);
    return impl::interval_from_count(times, count, time, after);
}

template <class Value, class Time>
Value interpolate_keys(const track<Value, Time>& t, const key_interval& k) {
    KEYBLEND_ASSERT(!t.empty(), "sampling an empty track");
    if (t.empty()) return key_traits<Value>::identity();
    const std::size_t n = t.size();
    // Intervals from another track: stay in bounds.
    const std::size_t first = std::min(k.first, n - 1);
    const std::size_t second = std::min(k.second, n - 1);
    const Value& a = t.value(first);
    if (k.alpha == 0.0f || first == second || t.mode() == interpolation::step) return a;
    if (t.mode() == interpolation::cubic_spline) {
        if (t.out_tangents().size() != n || t.in_tangents().size() != n) return a; // (invalid)
        const float span = static_cast<float>(static_cast<double>(t.time(second)) - static_cast<double>(t.time(first)));
        return key_traits<Value>::hermite(a, t.out_tangents()[first] * span, t.value(second),
                                          t.in_tangents()[second] * span, k.alpha);
    }
    return key_traits<Value>::interpolate(a, t.value(second), k.alpha, t.mode());
}

} // namespace keyblend
