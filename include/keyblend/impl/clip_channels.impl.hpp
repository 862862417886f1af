// keyblend — definitions for clip.hpp's user channels and events, and their validation. Included at
// the bottom of clip.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace keyblend {
namespace impl {

template <class Value>
status validate_user_channels(const clip& c, const std::vector<user_channel<Value>>& channels,
                              const char* kind) {
    for (std::size_t i = 0; i < channels.size(); ++i) {
        const user_channel<Value>& ch = channels[i];
        const std::string label = clip_label(c) + " " + kind + " channel " + std::to_string(i) +
                                   " '" + ch.name + "'";
        for (std::size_t j = 0; j < i; ++j)
            if (channels[j].name == ch.name)
                return make_error(errc::duplicate,
                                  label + ": the name is already used by channel " + std::to_string(j), i);
        if (status st = validate_track(ch.keys); !st)
            return make_error(st.error().code, label + ": " + st.error().message, i);
    }
    return {};
}

/// validate_clip's checks of the user channels, events and motion track.
inline status validate_clip_extras(const clip& c) {
    if (status st = validate_user_channels(c, c.float_channels, "float"); !st) return st;
    if (status st = validate_user_channels(c, c.vector_channels, "vector"); !st) return st;
    for (std::size_t i = 0; i < c.events.size(); ++i) {
        const clip_event& e = c.events[i];
        const std::string label = clip_label(c) + " event " + std::to_string(i) + " '" + e.name + "'";
        if (!is_finite(e.time))
            return make_error(errc::non_finite, label + ": time is not finite", i);
        if (e.time < 0.0f || e.time > c.duration)
            return make_error(errc::out_of_range,
                              label + ": time " + float_to_string(e.time) + " is outside the clip [0, " +
                                  float_to_string(c.duration) + "]",
                              i);
        if (i > 0 && e.time < c.events[i - 1].time)
            return make_error(errc::unsorted,
                              label + ": time " + float_to_string(e.time) + " is before event " +
                                  std::to_string(i - 1) + "'s time " + float_to_string(c.events[i - 1].time),
                              i);
    }
    const char* which[] = {"translation", "rotation"};
    status st;
    const auto check = [&](const auto& tr, std::size_t k) {
        if (!st || tr.empty()) return;
        if (status bad = validate_track(tr); !bad)
            st = make_error(bad.error().code,
                            clip_label(c) + " motion " + which[k] + ": " + bad.error().message, k);
    };
    check(c.motion.translation, 0);
    check(c.motion.rotation, 1);
    return st;
}

/// The occurrences of a clip's events on an unwrapped playback timeline, block by block: block k
/// holds event i at `time_i + k * period` (only block 0 when the clip does not repeat). Within a
/// block the events are sorted, so those inside an interval are a contiguous range.
class event_blocks {
public:
    event_blocks(const clip& c, double lo, bool lo_closed, double hi, bool hi_closed)
        : c_(c), lo_(lo), hi_(hi), lo_closed_(lo_closed), hi_closed_(hi_closed) {
        const double duration = static_cast<double>(c.duration);
        periodic_ = c.wrap != wrap_mode::clamp && is_finite(duration) && duration > 0.0;
        period_ = c.wrap == wrap_mode::loop_inclusive ? duration + 1.0 : duration;
        if (!periodic_) {
            first_ = last_ = 0.0;
            return;
        }
        // Every block that can hold an occurrence in [lo, hi] (one more each side for rounding).
        first_ = std::floor((lo - duration) / period_) - 1.0;
        last_ = std::floor(hi / period_) + 1.0;
    }

    double first() const { return first_; }
    double last() const { return last_; }

    double at(std::size_t i, double k) const {
        const double t = static_cast<double>(c_.events[i].time);
        return periodic_ ? t + k * period_ : t;
    }
    bool after_lo(double u) const { return lo_closed_ ? u >= lo_ : u > lo_; }
    bool before_hi(double u) const { return hi_closed_ ? u <= hi_ : u < hi_; }

    /// The events of block k inside the interval: [begin, end).
    std::pair<std::size_t, std::size_t> range(double k) const {
        const std::size_t n = c_.events.size();
        std::size_t a = 0, b = n;
        while (a < b) { // first i with after_lo
            const std::size_t m = a + (b - a) / 2;
            if (after_lo(at(m, k))) b = m;
            else a = m + 1;
        }
        std::size_t c = a, d = n;
        while (c < d) { // first i (from `a`) that is not before_hi
            const std::size_t m = c + (d - c) / 2;
            if (before_hi(at(m, k))) c = m + 1;
            else d = m;
        }
        return {a, c};
    }
    bool full(double k) const {
        const auto r = range(k);
        return r.first == 0 && r.second == c_.events.size();
    }

private:
    const clip& c_;
    double lo_, hi_;
    bool lo_closed_, hi_closed_;
    bool periodic_ = false;
    double period_ = 0.0;
    double first_ = 0.0, last_ = 0.0;
};

/// n + add, saturating at the largest size_t.
inline std::size_t add_saturated(std::size_t n, double add) {
    const double room = static_cast<double>(std::numeric_limits<std::size_t>::max() - n);
    return add >= room ? std::numeric_limits<std::size_t>::max() : n + static_cast<std::size_t>(add);
}

} // namespace impl

template <class Value>
status sample_user_channels(const std::vector<user_channel<Value>>& channels, float time, Value* out,
                            std::size_t count) {
    if (count != channels.size())
        return impl::make_error(errc::size_mismatch,
                                "sample_user_channels: " + std::to_string(count) + " values for " +
                                    std::to_string(channels.size()) + " channels");
    for (std::size_t i = 0; i < count; ++i) {
        const track<Value, float>& keys = channels[i].keys;
        out[i] = keys.empty() ? key_traits<Value>::identity() : sample_track(keys, time);
    }
    return {};
}

template <class Value>
void sample_user_channels(const std::vector<user_channel<Value>>& channels, float time,
                          std::vector<Value>& out) {
    out.resize(channels.size());
    static_cast<void>(sample_user_channels(channels, time, out.data(), out.size()));
}

template <class Value>
std::size_t find_user_channel(const std::vector<user_channel<Value>>& channels,
                              std::string_view name) noexcept {
    for (std::size_t i = 0; i < channels.size(); ++i)
        if (channels[i].name == name) return i;
    return channels.size();
}

inline std::size_t passed_events(const clip& c, double from, double to, event_range range,
                                 passed_event* out, std::size_t capacity) {
    if (!is_finite(from) || !is_finite(to) || c.events.empty()) return 0;
    const bool include = range == event_range::include_from;
    if (from == to && !include) return 0;
    const bool forward = from <= to;
    // The interval as [lo, hi] with its open or closed ends.
    const impl::event_blocks blocks(c, forward ? from : to, forward ? include : true,
                                    forward ? to : from, forward ? true : include);
    const std::size_t n = c.events.size();
    std::size_t total = 0, written = 0;
    // In wrap_mode::loop a loop's end (an event at `duration`) and the next loop's start (an event
    // at 0) are one instant. Playback that starts there is in the loop it heads into: forward, the
    // events at 0 are at `from`, not those at the end of the loop before; backward, the reverse.
    const bool loop = c.wrap == wrap_mode::loop && is_finite(c.duration) && c.duration > 0.0f;
    const float left_behind = forward ? c.duration : 0.0f;
    const auto emit = [&](std::size_t i, double k) {
        const double u = blocks.at(i, k);
        if (include && loop && u == from && c.events[i].time == left_behind) return;
        if (written < capacity) out[written++] = passed_event{i, u};
        ++total;
    };
    // Blocks in playback order. Whole blocks in the middle are only counted once the output is
    // full, so a jump over many loops costs O(log events + written).
    const double step = forward ? 1.0 : -1.0;
    const double begin = forward ? blocks.first() : blocks.last();
    const double end = forward ? blocks.last() : blocks.first();
    for (double k = begin; forward ? k <= end : k >= end; k += step) {
        if (written == capacity && blocks.full(k) && blocks.at(0, k) != from && blocks.at(n - 1, k) != from) {
            // Every block from here to the last full one is full: count them, then go on from there.
            double last_full = end;
            while (!blocks.full(last_full)) last_full -= step;
            const double whole = std::fabs(last_full - k) + 1.0;
            total = impl::add_saturated(total, whole * static_cast<double>(n));
            k = last_full;
            continue;
        }
        const auto [a, b] = blocks.range(k);
        if (forward)
            for (std::size_t i = a; i < b; ++i) emit(i, k);
        else
            for (std::size_t i = b; i > a; --i) emit(i - 1, k);
    }
    return total;
}

inline void passed_events(const clip& c, double from, double to, event_range range,
                          std::vector<passed_event>& out) {
    out.resize(passed_events(c, from, to, range, nullptr, 0));
    static_cast<void>(passed_events(c, from, to, range, out.data(), out.size()));
}

} // namespace keyblend
