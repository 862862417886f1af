// keyblend — the classic "animation collection" facade: named sets played, blended and crossfaded
// on one skeleton, with the hierarchy, attachments and bounds. What the classic
// cBlendedAnimationCollection and OBJECT classes do, on top of clip / blend / pose.
//
// SPDX-License-Identifier: MIT
//
// Two ways to pose the skeleton, as in classic Direct3D 9 code (docs/classic.md):
//
// - The blended collection (blending-skeletal-animations.txt), exactly: reset(), then blend(name,
//   time, loop, weight) for each set — each adds (its local matrix - the bind matrix) * weight to
//   the joints it animates, in matrix space — then update_hierarchy(). Sets that drive different
//   joints (walk on the legs, shoot on the arms) combine perfectly; sets that drive the same joint
//   add their differences element-wise, as the classic code does (see blend.hpp for what that does to a
//   bone, and blend_job for the rigid alternative).
//
// - Playing one set (animated-object-class.zh.txt): set_animation(name, start), then
//   update_animation(time) each frame, is_complete(time) to know when a non-looping set has ended;
//   plus fade_to(name, time, duration) for a crossfade the classic code did not have. Playing samples in
//   TRS space (sampling_job, per-set sampling contexts) and crossfades with a blend_job, so bones
//   stay rigid during a fade; matrix-keyed sets are therefore interpolated decomposed here, where
//   blend() lerps them element-wise as the classic code does (both agree at key times).
//
// A player holds one character's state: its local and model matrices, the current set and fade,
// and scratch poses sized once. It references the skeleton and clips it was created with (they
// must outlive it and stay where they are), so many players can share one set of assets. Nothing
// allocates per frame once every set has been sampled once (and, for events, once the most events
// one update reports has been reached).
//
// Each update_animation also reports what a game needs beside the pose, from every playing set
// and blended with the same weights as the pose: the root motion between the last update and this
// one (root_motion(): move the character by it), the events the playhead passed (events()), and
// the clips' float and vector user channels at this time (float_channel_values(), ...).
#pragma once

#include "blend.hpp"
#include "clip.hpp"
#include "error.hpp"
#include "motion.hpp"
#include "pose.hpp"
#include "skeleton.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace keyblend {

/// True when a and b are equal ignoring ASCII case (the classic stricmp).
inline bool equal_ignore_case(std::string_view a, std::string_view b) noexcept;

/// An axis-aligned box and a sphere about the model-space origin that hold every joint's origin.
struct joint_bounds {
    glm::vec3 min{0.0f};
    glm::vec3 max{0.0f};
    /// The largest distance of a joint from the origin of model space.
    float radius = 0.0f;
};

/// An event a playing set passed during the last update (player::events).
struct played_event {
    /// The set (an index into player::clips()) and the event (into that clip's events).
    std::size_t set = 0;
    std::size_t event = 0;
    /// The event's name (the clip's string).
    std::string_view name;
    /// When it was passed, on the player's clock: the set's start time plus the event's time on the
    /// set's unwrapped timeline (passed_events).
    double time = 0.0;
    /// The set's weight in this update's blend: 1 playing alone, 1 - f and f during a crossfade at
    /// progress f; 0 for a set whose fade-out ended during this update.
    float weight = 0.0f;
};

class player {
public:
    /// A player for `clips` on `s`. Every clip must pass validate_clip(clip, s): the first that
    /// does not is reported (its error, prefixed with the clip's index). `s` and `clips` are
    /// referenced, not copied. Starts in the bind pose with no current set.
    static result<player> create(const skeleton& s, const std::vector<clip>& clips);

    const keyblend::skeleton& skeleton() const noexcept { return *skeleton_; }
    const std::vector<clip>& clips() const noexcept { return *clips_; }

    /// The classic set lookup. `name == nullptr`: the first set. Otherwise the set with exactly this
    /// name, else the first whose name equals it ignoring ASCII case. "" finds an unnamed set.
    /// errc::not_found (the message quotes the name and lists the sets), errc::empty when there are
    /// no sets.
    result<std::size_t> find(const char* name) const;

    // --- The blended collection -------------------------------------------------------------

    /// The classic Reset: every local matrix back to the bind pose (skeleton::bind_local).
    void reset();

    /// The classic Blend(name, time, loop, weight), in ticks: the time is wrapped by `wrap`
    /// (wrap_time; the classic looping, `time mod (duration + 1)`, is wrap_mode::loop_inclusive, and
    /// its non-looping rule, the duration for any later time, wrap_mode::clamp); then
    /// blend_matrix_additive adds `(sample - bind) * weight` to the joints the set animates. Errors
    /// (nothing changed): the lookup's, errc::non_finite for a NaN or infinite time or weight.
    status blend(const char* name, double time, wrap_mode wrap, float weight = 1.0f);

    /// The classic UpdateHierarchy: model = the hierarchy of local(), under `root`.
    void update_hierarchy(const glm::mat4& root = glm::mat4(1.0f));

    // --- Playing one set ----------------------------------------------------------------------

    /// Makes `name` the current set, started at `start_time` (ticks); ends any fade. On error
    /// (the lookup's; errc::non_finite for a non-finite start) nothing changes.
    status set_animation(const char* name, double start_time = 0.0);
    /// Restarts the current set (and any fade's target) at `start_time`.
    void reset_animation(double start_time = 0.0);
    /// The current set's index, or `clips().size()` when there is none.
    std::size_t current() const noexcept { return current_; }

    /// Starts a crossfade from the current set to `name`, which starts at `time` and takes over
    /// linearly until `time + duration` (ticks); then it is the current set (started at `time`).
    /// Without a current set, or with duration <= 0, it is set_animation(name, time). During the
    /// fade the current set keeps playing on its own clock. Errors as set_animation, plus
    /// errc::non_finite for a non-finite duration.
    status fade_to(const char* name, double time, double duration);
    /// True while a crossfade started by fade_to has not reached its end (as of the last
    /// update_animation).
    bool fading() const noexcept { return target_ != no_set_; }

    /// Poses the skeleton at `time` (ticks): each playing set at clip_time(set, time - its start)
    /// (its wrap mode: loop is the classic animated object's `time % length`, clamp holds the last frame; a
    /// zero-length set shows its first frame), blended by the fade's progress when fading, then
    /// local() and model() (with `root`) are updated. Without a current set: the bind pose.
    /// errc::non_finite for a NaN or infinite time (nothing changes).
    ///
    /// Each playing set also moves on its own timeline from where the last update left it (from
    /// its start, for a set that set_animation, fade_to or reset_animation started since) to
    /// `time - its start`, unwrapped, in either direction: root_motion(), events() and the user
    /// channels report that step (see each). A fade's target joins once its weight is above 0 (its
    /// first step then starts at its start, even if an update came before); a set whose fade-out
    /// ends during the update steps up to the fade's end, at weight 0.
    status update_animation(double time, const glm::mat4& root = glm::mat4(1.0f));

    /// The displacement of the character's root over the last update_animation, in the
    /// character's frame (model space): `placement = compose(placement, root_motion())`. Each
    /// playing set's motion_between over its step, blended (blend_motion) with the weights the
    /// pose used at that time; the identity without a current set, for sets without motion
    /// (extract_root_motion), and before the first update.
    const rigid_transform& root_motion() const noexcept { return root_motion_; }

    /// The events passed by the last update_animation: each playing set's passed_events over its
    /// step (the events at a set's start are reported by its first update), with the set's weight,
    /// all in the order they were passed (by time on the player's clock, forward or backward as
    /// the clock moved; a set's own events in their order; events at equal times in the order of
    /// the set fading out, the current set, the fade's target). Every occurrence is reported once:
    /// a step over n loops reports n times every event, up to the event limit.
    const std::vector<played_event>& events() const noexcept { return events_; }
    /// The most events one update reports (default 65536): a step that passes more (a clock that
    /// jumped by millions of loops) reports the first ones, in order, and counts the rest in
    /// events_dropped(), instead of allocating without bound.
    void set_event_limit(std::size_t limit) noexcept { event_limit_ = limit; }
    /// How many events the last update passed but did not report (see set_event_limit).
    std::size_t events_dropped() const noexcept { return events_dropped_; }

    /// The names of every float channel of every set (clip::float_channels), each once, in the order
    /// they first appear in clips() (a name shared by several sets is one channel).
    const std::vector<std::string>& float_channel_names() const noexcept { return float_names_; }
    /// Their values at the last update_animation: each playing set's channel of that name sampled
    /// at the pose's time (clip_time), blended with the set's weight (the weighted mean over the
    /// playing sets that have the channel); 0 where no playing set with a non-zero weight has it.
    const std::vector<float>& float_channel_values() const noexcept { return float_values_; }
    /// The same for the vector channels (clip::vector_channels); zero where none plays.
    const std::vector<std::string>& vector_channel_names() const noexcept { return vector_names_; }
    const std::vector<glm::vec3>& vector_channel_values() const noexcept { return vector_values_; }

    /// The classic Animation_Complete: true when there is no current set, or when
    /// `time - start >= duration` of the current set (the fade's target while fading).
    bool is_complete(double time) const noexcept;

    // --- Results ------------------------------------------------------------------------------

    /// The local matrices (one per joint, skeleton order): the classic TransformationMatrix.
    const std::vector<glm::mat4>& local() const noexcept { return local_; }
    /// The local pose of the last update_animation (translation / rotation / scale), of which
    /// local() holds the matrices there: a copy is where IK and other corrections start (ik.hpp).
    /// (blend() and reset() change local(), not this.)
    const keyblend::local_pose& pose() const noexcept { return pose_; }
    /// The model matrices from the last update_hierarchy / update_animation: matCombined.
    const std::vector<glm::mat4>& model() const noexcept { return model_; }

    /// The classic Attach_To_Object: the world matrix of an object attached to a joint,
    /// `owner_world * model()[joint] * object_local` (owner_world places this player's character;
    /// leave it the identity when model() already includes it as update's root). `joint_name`
    /// nullptr means the first root. errc::not_found for an unknown joint.
    result<glm::mat4> attachment(const char* joint_name, const glm::mat4& object_local,
                                 const glm::mat4& owner_world = glm::mat4(1.0f)) const;
    /// The same by joint index; precondition j < skeleton().size() (asserted; out of range gives
    /// owner_world * object_local).
    glm::mat4 attachment(std::size_t joint, const glm::mat4& object_local,
                         const glm::mat4& owner_world = glm::mat4(1.0f)) const;

    /// Bounds of the joints' origins in model space (from model()). All zero for an empty skeleton.
    joint_bounds bounds() const noexcept;

private:
    static constexpr std::size_t no_set_ = static_cast<std::size_t>(-1);

    /// Where a playing set's own timeline is: the local time of its last update, or its start.
    struct step_state {
        double last = 0.0;
        bool fresh = true; // not updated since it started: the next step starts at 0, inclusive
    };

    player() = default;
    status sample_set(std::size_t set, double time, local_pose& out);
    /// Moves a playing set from its last time to `local` (its time since its start): adds its
    /// motion to `motion` and its events, with `weight`, to `events` (offset to the player's clock
    /// by `start`); then `state` is at `local`.
    void step_set(std::size_t set, double start, double local, float weight, step_state& state,
                  rigid_transform& motion, std::vector<played_event>& events);
    /// The user channels of the playing sets at this update (sets and weights, `count` of them).
    void sample_channels(const std::size_t* sets, const double* local, const float* weights, std::size_t count);

    const keyblend::skeleton* skeleton_ = nullptr;
    const std::vector<clip>* clips_ = nullptr;
    std::vector<glm::mat4> local_, model_;
    std::vector<sampling_context> contexts_; // one per set
    local_pose rest_, pose_, target_pose_;
    std::size_t current_ = no_set_;
    double start_ = 0.0;
    std::size_t target_ = no_set_;
    double target_start_ = 0.0, fade_duration_ = 0.0;

    // Root motion, events and user channels (update_animation).
    std::vector<motion_cursor> motion_cursors_; // one per set
    step_state current_step_, target_step_;
    bool has_time_ = false;
    double last_time_ = 0.0;
    rigid_transform root_motion_;
    std::vector<played_event> events_, set_events_[3], merged_;
    std::vector<passed_event> passed_;
    std::size_t event_limit_ = 65536, events_dropped_ = 0;
    std::vector<std::string> float_names_, vector_names_;
    std::vector<std::vector<std::size_t>> float_slots_, vector_slots_; // per set: channel -> name
    std::vector<float> float_values_, float_weights_, float_scratch_;
    std::vector<glm::vec3> vector_values_, vector_scratch_;
    std::vector<float> vector_weights_;
};

} // namespace keyblend

#include "impl/player.impl.hpp"
