// keyblend — clips: a named animation (the classic "animation set") as per-joint channels of keyed
// tracks, with a duration, ticks per second and a loop policy; validation against a skeleton; and
// sampling a whole clip at one time.
//
// SPDX-License-Identifier: MIT
//
// Time. A clip's key times, its duration and every time passed to its sampling functions are in
// the clip's own *ticks*, stored as float. Seconds are ticks / ticks_per_second. This keeps .X
// files exact: their key times are integer ticks, and every integer up to 2^24 = 16,777,216
// (`max_exact_tick`; 58 minutes at 4800 ticks per second) is a float, as are fractional ticks like
// 1234.25 (any multiple of 1/2^k that fits in 24 significant bits). Interpolation factors are
// `(t - t0) / (t1 - t0)` computed in float, as `sample_track` does.
//
// Missing components. A channel may key any of rotation, translation and scale (or a matrix). A
// component without a track comes from the joint's *bind pose* (skeleton::bind_transforms), never
// from the identity; a joint without a channel keeps its bind pose (skeleton::bind_local, exactly).
//
// Two ways to sample a clip. `sample_local_matrices` gives each joint's local *matrix* exactly as
// the classic pipeline computes it (matrix keys lerped element-wise); it is the reference the
// keyblend tool prints. `sampling_job` fills a `local_pose` (TRS and morph weights) for the TRS
// pipeline: blending, local-to-model, skinning. It keeps one `sampling_context` per playing
// instance, so that sequential playback touches each key once and a frame costs a few vector
// instructions per joint.
//
// Ends. Each track clamps on its own: before its first key it holds the first, after its last key
// the last (sample.hpp). Looping is the caller's choice of time: wrap it with `clip_time` (the
// clip's wrap_mode) or `wrap_time` before sampling.
#pragma once

#include "error.hpp"
#include "pose.hpp"
#include "sample.hpp"
#include "skeleton.hpp"
#include "track.hpp"
#include "impl/clip_sample_state.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace keyblend {

namespace impl {
struct sampling_access;
} // namespace impl

/// D3DX's customary ticks per second, used when a file does not say (tiny.x has no
/// AnimTicksPerSecond).
inline constexpr float default_ticks_per_second = 4800.0f;

/// The largest tick count up to which every integer tick is exact in a clip's float times (2^24).
inline constexpr float max_exact_tick = 16777216.0f;

/// The keyed tracks of one joint in one clip (the classic per-frame animation of a set). Times in ticks.
///
/// Either any of rotation / translation / scale (local = T * R * S, missing components from the
/// bind pose), or a matrix track (the whole local matrix; .X key types 3 and 4). A channel with
/// both is rejected by validate_clip; sampled anyway, its matrix track wins (the animated-object
/// classic animated object applies matrix keys last, over the others).
///
/// Interpolation follows each track's mode (track.hpp): rotation slerp (short path) or nlerp,
/// vectors lerp, matrices element-wise (D3DX's and the classic code's way) or decomposed, or step.
struct channel {
    /// The animated joint: an index into the skeleton (joint order, see skeleton.hpp).
    std::size_t joint = 0;
    rotation_track<float> rotation;
    /// Position keys (.X key type 2).
    position_track<float> translation;
    scale_track<float> scale;
    matrix_track<float> matrix;
    /// The joint's morph weights (glTF's `weights` path): none, or one track per morph weight of
    /// the joint (skeleton::morph_weight_count), each in its own interpolation mode. A weight
    /// without a track keeps the bind pose's (skeleton::bind_morph_weights).
    std::vector<float_track<float>> morph_weights{};

    bool has_matrix() const noexcept { return !matrix.empty(); }
    bool has_trs() const noexcept {
        return !rotation.empty() || !translation.empty() || !scale.empty();
    }
};

/// A named keyed value of a clip that is not a joint's transform: a float (a blend-shape weight, a
/// foot-contact curve, an IK weight) or a vector (a look-at offset, a colour). Its keys are in the
/// clip's ticks, like the joint tracks, and it is sampled at the pose's time (sample_user_channels;
/// the player samples and blends them with the pose). validate_clip requires at least one key and
/// a name no other channel of the same kind in the clip has.
template <class Value>
struct user_channel {
    std::string name;
    track<Value, float> keys;
};
using float_channel = user_channel<float>;
using vector_channel = user_channel<glm::vec3>;

/// A named marker at a time of a clip (a footstep, a sound or effect cue): D3DX's callback keys.
/// Reported once each time playback passes it (passed_events; the player reports them each update).
struct clip_event {
    /// Ticks, in [0, duration].
    float time = 0.0f;
    std::string name;
};

/// Where a clip's root moves, in model space, when its root motion has been extracted
/// (extract_root_motion in motion.hpp): the root joint's model-space placement at each key time,
/// as a translation and a rotation track in ticks. Empty tracks mean no motion (the identity).
struct motion_track {
    position_track<float> translation;
    rotation_track<float> rotation;

    bool empty() const noexcept { return translation.empty() && rotation.empty(); }
};

/// A named clip: a classic animation set.
struct clip {
    /// Found by name in a player (case-insensitively there). May be empty (tiny.x's set is unnamed).
    std::string name;
    /// Length in ticks: the time of the last frame. Wrapping uses it (see clip_time); keys after it
    /// are kept but only reached by times past it. Loaders set it to the last key time (the classic
    /// set length); `last_key_time` computes that.
    float duration = 0.0f;
    /// Ticks per second, > 0. Seconds = ticks / ticks_per_second.
    float ticks_per_second = default_ticks_per_second;
    /// True when the source gave no rate and ticks_per_second is default_ticks_per_second by
    /// default, not by the file (a loader sets it; code-built clips leave it false).
    bool ticks_per_second_is_default = false;
    /// How clip_time maps a time outside [0, duration].
    wrap_mode wrap = wrap_mode::loop;
    /// At most one channel per joint (validate_clip checks). Order does not matter.
    std::vector<channel> channels;
    /// Named float and vector channels (unique names per kind; see user_channel).
    std::vector<float_channel> float_channels;
    std::vector<vector_channel> vector_channels;
    /// Events in time order (equal times keep their order here; see passed_events).
    std::vector<clip_event> events;
    /// The root motion taken out of the channels by extract_root_motion; empty otherwise.
    motion_track motion;
};

/// The latest key time over every track of the clip; 0 for a clip without keys.
inline float last_key_time(const clip& c);
/// The earliest key time over every track of the clip; 0 for a clip without keys.
inline float first_key_time(const clip& c);

/// `wrap_time(ticks, c.duration, c.wrap)`, as float ticks ready for sampling. Takes double so that
/// a large running tick count (classic code accumulates elapsed milliseconds in a DWORD) wraps exactly.
inline float clip_time(const clip& c, double ticks);

/// Checks a clip against the skeleton it will animate and reports the first problem. The message
/// names the clip, the channel (its index, joint index and joint name) and, for a bad key, the track
/// and key index; error::index is the channel index (no_index for clip-level errors).
/// - errc::non_finite: duration or ticks_per_second NaN or infinite;
/// - errc::invalid_argument: duration < 0, ticks_per_second <= 0, a channel with both a matrix
///   track and rotation/translation/scale tracks;
/// - errc::size_mismatch: a channel with morph weight tracks whose number is not the joint's
///   morph_weight_count (an empty track among them stands for the bind pose's weight);
/// - errc::out_of_range: a channel's joint >= skeleton.size();
/// - errc::duplicate: two channels for the same joint;
/// - every error of validate_track (empty tracks are allowed: a missing component): NaN or
///   infinite key times or values, unsorted or repeated times, non-unit rotations, an interpolation
///   mode that does not apply to the track's value type.
/// Then the clip's other data, each error naming the user channel, event or motion track
/// (error::index is its index):
/// - user channels: errc::empty for one without keys, errc::duplicate for a name used twice in
///   float_channels (or twice in vector_channels), and validate_track's errors for its keys;
/// - events: errc::non_finite for a NaN or infinite time, errc::out_of_range for a time outside
///   [0, duration], errc::unsorted for an event earlier than the one before it;
/// - the motion track: validate_track's errors for each of its tracks that has keys.
inline status validate_clip(const clip& c, const skeleton& s);

/// One channel's local matrix at `time` (ticks; NaN samples the first keys):
/// - a matrix track: sample_track in its mode (linear: element-wise, exactly the classic lerp);
/// - otherwise, when the channel has rotation/translation/scale tracks: `to_matrix(T * R * S)` of
///   the sampled components, each missing one taken from `bind`;
/// - a channel with no keys at all: `bind_local`, exactly.
inline glm::mat4 sample_channel_matrix(const channel& ch, float time, const transform& bind,
                                       const glm::mat4& bind_local);

/// The clip's local matrix for every joint at `time` (ticks, used as given: wrap it first for
/// looping): joints without a channel get their bind_local exactly, animated joints
/// sample_channel_matrix, into `local[0, s.size())`. This is what the `keyblend pose --set` tool
/// prints, before local-to-model.
///
/// errc::size_mismatch, and nothing written, when `local` has fewer than s.size() matrices. A
/// channel whose joint is out of range is skipped and reported (errc::out_of_range, after the other
/// joints are written); with several channels on one joint, the last one wins. Validate the clip
/// once (validate_clip) to rule both out.
inline status sample_local_matrices(const clip& c, const skeleton& s, float time, span<glm::mat4> local);

/// The per-instance state of sampling one clip: for every joint and component, the key interval
/// around the last time sampled (its two keys, as values) and a cursor into the track. One context
/// per playing instance: many characters can play one clip at different times, each with its own
/// context, while the clip and skeleton are shared and never written.
///
/// A context binds itself to a (clip, skeleton) pair on the first sampling_job::run with them, and
/// rebinds (clearing its state) when it is given a different clip or skeleton object, or
/// one whose channel array moved or changed size, or whose joint count changed. Binding allocates;
/// sampling a bound context does not. After changing a bound clip's channels or keys in place, call
/// reset() on the contexts bound to it: until then their results are unspecified (but
/// memory-safe: the context reads tracks through the clip's current channel array, and their
/// current sizes).
class sampling_context {
public:
    sampling_context() = default;

    /// Forgets the binding; the next sampling_job::run rebinds.
    void reset() noexcept {
        state_.clip_ = nullptr;
        state_.skeleton_ = nullptr;
    }

    /// The clip this context is bound to, or nullptr.
    const clip* bound_clip() const noexcept { return state_.clip_; }

private:
    friend struct impl::sampling_access;
    impl::sampling_state state_;
};

/// Samples every joint of a clip at one time into a local pose (translation, rotation, scale and
/// morph weights), through the caller's sampling_context. The job contract (docs/jobs.md): inputs
/// and caller-owned outputs, validate() names the first bad element, run() checks what keeps it
/// inside memory and writes nothing when that fails.
///
/// Per joint, per component, the result at `time` (ticks, used as given: wrap it first with
/// clip_time for looping):
/// - a channel's rotation / translation / scale / morph weight track: the track's value at `time`
///   as sample_track computes it (same keys, same interpolation in the track's mode; ends clamp;
///   repeated key times are a cut), to float rounding: the interpolation factor is the time offset
///   times the reciprocal of the key interval, where sample_track divides (an ulp apart). At a
///   key's exact time, that key's value bit for bit. The SIMD paths equal the scalar one
///   (KEYBLEND_NO_INTRINSICS) to float rounding.
/// - a component without a track, and every component of a joint without a channel: the bind
///   pose (skeleton::bind_transforms, bind_morph_weights), exactly.
/// - a matrix channel: both keys around `time` split into translation / rotation / scale
///   (to_transform) and interpolated as such (lerp, slerp, lerp), i.e. the track's
///   interpolation::decomposed, whatever its mode says (step stays step): a TRS pose cannot hold
///   the sheared matrices of an element-wise lerp. At a key's time the result is that key's TRS.
/// - NaN time samples the first keys (as sample_track does).
///
/// `output` is resized to skeleton->size() joints and skeleton->morph_weight_total() morph
/// weights (no allocation once it has them). Binding the context to a new clip or skeleton
/// allocates; sampling a bound context does not.
///
/// Errors:
/// - run: errc::invalid_argument for a null clip, skeleton, context or output (nothing written).
///   A channel whose joint is >= skeleton->size() is skipped and reported (errc::out_of_range,
///   after every other joint is written); with several channels on one joint the last wins.
/// - validate, also: every error of validate_clip(*clip, *skeleton). A clip that passes it never
///   makes run() fail.
struct sampling_job {
    const keyblend::clip* clip = nullptr;
    const keyblend::skeleton* skeleton = nullptr;
    /// Ticks of the clip.
    float time = 0.0f;
    /// One per playing instance (a character playing a clip); bound on first use.
    sampling_context* context = nullptr;
    local_pose* output = nullptr;

    status validate() const;
    KEYBLEND_JOB_ABI status run() const;
};

// ---------------------------------------------------------------------------------------------
// User channels and events
// ---------------------------------------------------------------------------------------------

/// Samples every channel of `channels` (a clip's float_channels or vector_channels) at `time`
/// (ticks, used as given, as for sampling_job: wrap it first with clip_time for looping; ends clamp
/// and NaN samples the first key, as sample_track does): out[i] is channels[i]'s value, in the
/// track's interpolation (linear or step). A channel without keys gives 0 (validate_clip rejects
/// it). `count` must equal channels.size(): otherwise errc::size_mismatch and nothing is written.
/// Binary search per channel (O(log keys)); never allocates.
template <class Value>
status sample_user_channels(const std::vector<user_channel<Value>>& channels, float time, Value* out,
                            std::size_t count);
/// As above into a vector, resized to channels.size() (no allocation once it has that size).
template <class Value>
void sample_user_channels(const std::vector<user_channel<Value>>& channels, float time,
                          std::vector<Value>& out);

/// The index of the channel named exactly `name` (case-sensitive), or channels.size() when none is.
template <class Value>
std::size_t find_user_channel(const std::vector<user_channel<Value>>& channels,
                              std::string_view name) noexcept;

/// Which events exactly at the start of an interval of playback passed_events reports.
enum class event_range : unsigned char {
    /// Forward (from < to): the events in (from, to]; backward (to < from): in [to, from). An event
    /// exactly at `from` belongs to the interval that ended there, so consecutive intervals in
    /// either direction (t0 to t1, t1 to t2, ...) report every event they pass once, none twice.
    exclude_from,
    /// [from, to] forward, [to, from] backward: also the events exactly at `from`. For the first
    /// interval after playback starts, so that an event at the start is reported (the player uses
    /// it for a set's first update).
    include_from,
};

/// One occurrence of an event, found by passed_events.
struct passed_event {
    /// Index into clip::events.
    std::size_t event = 0;
    /// The playback time at which it is passed, on the unwrapped timeline of `from` and `to`: the
    /// event's time plus a whole number of periods.
    double time = 0.0;
};

/// The events of `c` that playback passes going from time `from` to time `to`.
///
/// `from` and `to` are playback times in ticks since the clip started, *not* wrapped: they may be
/// beyond the clip's end or negative, and `to < from` is backward playback. Where events occur on
/// that timeline depends on the clip's wrap mode, as clip_time maps those times to poses:
/// - wrap_mode::loop: the clip repeats with period `duration`; an event at time e occurs at
///   e + k * duration for every integer k (an event at 0 and one at `duration` both occur at each
///   wrap, in that order going forward);
/// - wrap_mode::loop_inclusive: the same with period duration + 1 tick (the classic
///   `Time % (Length + 1)`);
/// - wrap_mode::clamp, and every clip whose duration is 0 (or not finite and positive): each event
///   occurs once, at its own time.
///
/// Reported: the occurrences inside the interval (see event_range for its ends), in playback order
/// (increasing time forward, decreasing backward; events at equal times in clip::events order
/// forward, reversed backward), each once however many loops the interval spans. from == to
/// reports only, with include_from, the events exactly there. A NaN or infinite `from` or `to`
/// reports nothing.
///
/// The first min(total, capacity) occurrences are written to `out` (which may be null when
/// capacity is 0); the return value is the total, so a caller can size a buffer with a first call
/// at capacity 0. O(log events + written); never allocates. The events are assumed sorted by time
/// (validate_clip checks); unsorted events are reported in an unspecified order, each occurrence
/// at most once.
inline std::size_t passed_events(const clip& c, double from, double to, event_range range,
                                 passed_event* out, std::size_t capacity);
/// As above, replacing the contents of `out` with every occurrence. (A jump over n loops reports
/// every event n times: bound the interval, or use the buffer overload, when times can jump.)
inline void passed_events(const clip& c, double from, double to, event_range range,
                          std::vector<passed_event>& out);

} // namespace keyblend

#include "impl/clip.impl.hpp"
#include "impl/clip_channels.impl.hpp"
#include "impl/clip_sample.impl.hpp"
