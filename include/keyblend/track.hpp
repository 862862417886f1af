// keyblend — tracks: the keys of one animated value, in time order, and their validation.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "error.hpp"
#include "key.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace keyblend {

/// The keys of one animated value (a joint's rotation, position, scale or matrix, or a float),
/// stored as two parallel arrays (times, values) so that key search reads only times.
///
/// Keys are expected in time order (non-decreasing: two keys at one time are a cut, see
/// locate_keys) with finite values (and unit quaternions); `validate_track` says whether they are.
/// A track is only a container: it does not sort or fix keys behind the caller's back. Sampling an
/// invalid track stays within memory bounds and returns one of its keys or a blend of two (see
/// sample.hpp), but which one is unspecified.
///
/// A track in interpolation::cubic_spline mode also holds an in-tangent and an out-tangent per key
/// (push_back with three values); in every other mode it holds none.
template <class Value, class Time = float>
class track {
    static_assert(std::is_arithmetic<Time>::value, "Time must be an integer or floating type");

public:
    using value_type = Value;
    using time_type = Time;
    using key_type = key<Value, Time>;
    using traits = key_traits<Value>;

    track() = default;
    explicit track(interpolation mode) : mode_(mode) {}
    track(std::initializer_list<key_type> keys, interpolation mode = interpolation::linear)
        : mode_(mode) {
        assign(keys.begin(), keys.end());
    }
    explicit track(const std::vector<key_type>& keys, interpolation mode = interpolation::linear)
        : mode_(mode) {
        assign(keys.begin(), keys.end());
    }

    /// Appends a key (no reordering; validate afterwards).
    void push_back(Time time, const Value& value) {
        times_.push_back(time);
        values_.push_back(value);
    }
    void push_back(const key_type& k) { push_back(k.time, k.value); }
    /// Appends a key of a cubic_spline track with its tangents (value units per time unit).
    void push_back(Time time, const Value& in_tangent, const Value& value, const Value& out_tangent) {
        push_back(time, value);
        in_tangents_.push_back(in_tangent);
        out_tangents_.push_back(out_tangent);
    }
    /// Replaces the keys with key i at times[i] with values[i], taking the vectors over (no
    /// reordering; validate afterwards). The longer vector is cut to the shorter's size. The
    /// tangents are cleared: a cubic_spline track gets its keys with push_back.
    void assign(std::vector<Time> times, std::vector<Value> values) {
        const std::size_t n = std::min(times.size(), values.size());
        times.resize(n);
        values.resize(n);
        times_ = std::move(times);
        values_ = std::move(values);
        in_tangents_.clear();
        out_tangents_.clear();
    }
    void reserve(std::size_t n) {
        times_.reserve(n);
        values_.reserve(n);
        if (mode_ == interpolation::cubic_spline) {
            in_tangents_.reserve(n);
            out_tangents_.reserve(n);
        }
    }
    void clear() {
        times_.clear();
        values_.clear();
        in_tangents_.clear();
        out_tangents_.clear();
    }

    std::size_t size() const noexcept { return times_.size(); }
    bool empty() const noexcept { return times_.empty(); }

    /// Key i. Precondition: i < size().
    key_type operator[](std::size_t i) const { return key_type{times_[i], values_[i]}; }
    Time time(std::size_t i) const { return times_[i]; }
    const Value& value(std::size_t i) const { return values_[i]; }
    Value& value(std::size_t i) { return values_[i]; }

    const std::vector<Time>& times() const noexcept { return times_; }
    const std::vector<Value>& values() const noexcept { return values_; }
    /// The cubic_spline tangents, one per key (empty in the other modes). Key i's in-tangent is
    /// the slope arriving at it, its out-tangent the slope leaving it.
    const std::vector<Value>& in_tangents() const noexcept { return in_tangents_; }
    const std::vector<Value>& out_tangents() const noexcept { return out_tangents_; }
    std::vector<Value>& in_tangents() noexcept { return in_tangents_; }
    std::vector<Value>& out_tangents() noexcept { return out_tangents_; }

    /// Time of the first / last key; Time{} for an empty track.
    Time first_time() const { return times_.empty() ? Time{} : times_.front(); }
    Time last_time() const { return times_.empty() ? Time{} : times_.back(); }

    interpolation mode() const noexcept { return mode_; }
    void set_mode(interpolation mode) noexcept { mode_ = mode; }

private:
    template <class It>
    void assign(It first, It last) {
        for (; first != last; ++first) push_back(first->time, first->value);
    }

    std::vector<Time> times_;
    std::vector<Value> values_;
    std::vector<Value> in_tangents_, out_tangents_;
    interpolation mode_ = interpolation::linear;
};

template <class Time = float>
using float_track = track<float, Time>;
template <class Time = float>
using position_track = track<glm::vec3, Time>;
template <class Time = float>
using scale_track = track<glm::vec3, Time>;
template <class Time = float>
using rotation_track = track<glm::quat, Time>;
template <class Time = float>
using matrix_track = track<glm::mat4, Time>;

/// Checks a track and reports the first problem, naming the key index (`error::index`):
/// - errc::empty: the track has no keys;
/// - errc::unsupported: the interpolation mode does not apply to the value type;
/// - errc::non_finite: a NaN or infinite time or value;
/// - errc::unsorted: a key's time is earlier than the key before it (a key at the same time as
///   the one before it is a cut, and valid);
/// - errc::size_mismatch: a cubic_spline track without one in- and one out-tangent per key, or
///   another mode's track with tangents;
/// - errc::non_finite also for a NaN or infinite tangent;
/// - errc::not_normalized: a rotation key whose length differs from 1 by more than
///   key_traits<glm::quat>::unit_tolerance.
template <class Value, class Time>
status validate_track(const track<Value, Time>& t);

} // namespace keyblend

#include "impl/track.impl.hpp"
