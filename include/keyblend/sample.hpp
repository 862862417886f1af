// keyblend — sampling: time wrapping, key search (binary search or cursor), interpolation.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "track.hpp"

#include <cstddef>

namespace keyblend {

/// What happens to a time outside a clip's [0, length].
///
/// Every mode maps a zero (or negative, or non-finite) length to time 0, so a zero-length clip
/// shows its first frame (the classic rule for a set whose keys are all at time 0). A NaN time maps
/// to 0. Times already inside the range come back unchanged, bit for bit.
enum class wrap_mode : unsigned char {
    /// t < 0 becomes 0; t > length becomes length (the last key holds). The classic `Loop == FALSE`.
    clamp,
    /// Period `length`: t becomes t mod length, in [0, length); t == length shows the first
    /// frame. Negative times wrap backwards (-1 becomes length - 1). Infinite times become 0.
    /// This is the classic animated object's `time % m_time_length`, and what float seconds want.
    loop,
    /// Period `length + 1`: t becomes t mod (length + 1), in [0, length]; with integer ticks every
    /// tick from 0 to length is shown once, the last one holding the last key. This is the
    /// classic animation collection's `Time % (Length + 1)` (and the classic timed keyframes'
    /// `elapsed %= (last + 1)`), exactly. With floating time the period is length + 1 time unit,
    /// and times in (length, length + 1) clamp to the last key when sampled.
    loop_inclusive,
};

/// Maps `time` into a clip of `length` according to `mode` (see wrap_mode). For integer Time,
/// the arithmetic is exact integer modulo; for floating Time, std::fmod.
template <class Time>
Time wrap_time(Time time, Time length, wrap_mode mode);

/// The two keys around a time and where the time lies between them.
///
/// `first` is the last key whose time is <= the query (0 when the query is before the first key),
/// `second` is first + 1, or first itself at either end, and `alpha` in [0, 1] is
/// `(t - time[first]) / (time[second] - time[first])`, 0 when first == second.
struct key_interval {
    std::size_t first = 0;
    std::size_t second = 0;
    float alpha = 0.0f;
};

/// Remembers where the last search ended, so that searching again near that time costs O(1): one
/// cursor per track per playing instance (it holds no pointer to the track, so many characters
/// can share a track, each with its own cursor). Playback in either direction is O(1) amortised;
/// a jump of more than a few keys falls back to binary search (O(log n)). A cursor gives exactly
/// the binary search's result on a valid track. It may be reused on a different track after
/// reset(), and stays memory-safe even without it.
class track_cursor {
public:
    void reset() noexcept { index_ = 0; }
    /// The `first` key index of the last search.
    std::size_t index() const noexcept { return index_; }

private:
    template <class Time, class Query>
    friend key_interval locate_keys(const Time* times, std::size_t count, Query time,
                                    track_cursor& cursor);
    std::size_t index_ = 0;
};

/// Finds the keys around `time` in `times[0, count)` (sorted ascending) by binary search.
///
/// - Before the first key (or NaN): {0, 0, 0}. At or after the last key: {n-1, n-1, 0}.
/// - At exactly a key's time: that key with alpha 0.
/// - Repeated times are a cut (the classic key search, `if (Time >= Key[i].Time) Key1 = i`): at
///   and after the repeated time the *last* key with that time holds (and interpolates toward the
///   key after it), while a time just before it interpolates toward the *first* of them. So a track
///   can jump: keys (0, a), (1, b), (1, c), (2, d) give a -> b over [0, 1), then c -> d over [1, 2).
/// - count == 0: {0, 0, 0}; the caller must not read a key.
/// - Unsorted times: stays in bounds and returns some pair with alpha in [0, 1].
///
/// `Query` may differ from `Time`: an integer-tick track can be sampled at a fractional tick
/// (`double`). Mixed types compare and divide in double; float/float and same-integer types
/// compare exactly in their own type.
template <class Time, class Query>
key_interval locate_keys(const Time* times, std::size_t count, Query time);

/// As above, starting from (and updating) a cursor. Same result as the binary search.
template <class Time, class Query>
key_interval locate_keys(const Time* times, std::size_t count, Query time, track_cursor& cursor);

template <class Value, class Time, class Query>
key_interval locate_keys(const track<Value, Time>& t, Query time) {
    return locate_keys(t.times().data(), t.size(), time);
}
template <class Value, class Time, class Query>
key_interval locate_keys(const track<Value, Time>& t, Query time, track_cursor& cursor) {
    return locate_keys(t.times().data(), t.size(), time, cursor);
}

/// The track's value for an interval found by locate_keys: `value(first)` bit for bit when
/// alpha == 0 (or in step mode), otherwise key_traits<Value>::interpolate in the track's mode.
/// An empty track gives key_traits<Value>::identity() (asserted in debug builds).
template <class Value, class Time>
Value interpolate_keys(const track<Value, Time>& t, const key_interval& k);

/// The track's value at `time`: locate_keys + interpolate_keys. Times outside the keys clamp to
/// the first / last key (wrap the time first with wrap_time for looping). At exactly a key's time
/// the result is that key's value, bit for bit.
template <class Value, class Time, class Query>
Value sample_track(const track<Value, Time>& t, Query time) {
    return interpolate_keys(t, locate_keys(t, time));
}

/// As above, with a cursor for O(1) sequential playback. Identical results.
template <class Value, class Time, class Query>
Value sample_track(const track<Value, Time>& t, Query time, track_cursor& cursor) {
    return interpolate_keys(t, locate_keys(t, time, cursor));
}

} // namespace keyblend

#include "impl/sample.impl.hpp"
