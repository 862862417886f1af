// keyblend — root motion: taking a character's travel out of a clip (once, at load or bake time)
// and reading it back as displacements between two playback times (every frame).
//
// SPDX-License-Identifier: MIT
//
// A walk clip, as authored, moves its root joint forward. A game wants the character's own
// transform to carry that travel (so it collides, turns and follows paths), and the clip to walk
// on the spot. extract_root_motion splits the root joint's animation in two:
//
//     original root, model space  =  motion(t)  *  in-place root(t)
//
// `motion(t)` (clip::motion, a translation and a rotation track in model space) is the part the
// options select: the root's horizontal travel, its turning about the up axis, or all of either;
// the clip keeps the rest (the bobbing, the hip sway, the lean). At run time the game asks for the
// displacement between the last update's time and this one, which follows the clip's wrap mode
// (several loops in one step, backward playback), and moves the character by it:
//
//     keyblend::motion_cursor cursor;                       // one per playing instance
//     const keyblend::rigid_transform step = keyblend::motion_between(walk, last_ticks, ticks, cursor);
//     character = keyblend::compose(character, step);       // the character's placement in the world
//     const glm::mat4 world = keyblend::to_matrix(character);
//     hierarchy.input = &in_place_pose;  hierarchy.root = &world;
//     hierarchy.run();                                      // (a local_to_model_job)
//
// Drawn with the in-place pose under `character`, the result is the original animation, placed
// where the character has got to. The player does this for every playing set and blends the
// displacements with the sets' weights (player::root_motion).
#pragma once

#include "clip.hpp"
#include "error.hpp"
#include "math.hpp"
#include "sample.hpp"
#include "skeleton.hpp"

#include <cstddef>

namespace keyblend {

namespace impl {
struct motion_access;
} // namespace impl

/// A rigid motion: rotate, then translate (a point x goes to `rotation * x + translation`). A root
/// displacement, or a character's placement in the world. Default-constructed: the identity.
struct rigid_transform {
    glm::vec3 translation{0.0f};
    glm::quat rotation = glm::identity<glm::quat>();
};

/// `a * b` as motions: b first, then a (`to_matrix(compose(a, b)) == to_matrix(a) * to_matrix(b)`
/// to rounding). To move a character placed at `placement` by a displacement expressed in its own
/// frame (what motion_between returns): `placement = compose(placement, displacement)`. The
/// rotation is renormalised, so long chains of compositions stay rigid.
inline rigid_transform compose(const rigid_transform& a, const rigid_transform& b);

/// The inverse motion: compose(r, inverse(r)) is the identity, to rounding.
inline rigid_transform inverse(const rigid_transform& r);

/// The matrix `T * R`.
inline glm::mat4 to_matrix(const rigid_transform& r);

/// Which part of the root joint's translation becomes motion.
enum class motion_translation : unsigned char {
    /// None: the clip keeps all of it (a character that only turns).
    none,
    /// The part perpendicular to `up` (walking on the ground): the clip keeps the height (the
    /// bobbing of a walk, a jump's rise and fall).
    horizontal,
    /// All of it (climbing, swimming, flying): the root stays at the reference position.
    all,
};

/// Which part of the root joint's rotation becomes motion.
enum class motion_rotation : unsigned char {
    /// None: the character's heading does not change with the clip.
    none,
    /// The turn about `up`: the twist of the swing-twist decomposition of the root's rotation
    /// relative to the reference (the rotation about `up` whose removal leaves a rotation with no
    /// component about `up`). The clip keeps the lean and the roll. Where the root is turned
    /// exactly 180 degrees about a horizontal axis the twist is undefined and taken as none.
    yaw,
    /// All of it: the root keeps the reference orientation.
    all,
};

/// What the clip keeps in place: the root is held at this position and orientation, in the parts
/// the options extract.
enum class motion_reference : unsigned char {
    /// The root joint's bind pose (skeleton::bind_transforms): every clip of a skeleton is held
    /// at the same place, whatever its first frame.
    bind_pose,
    /// The clip's own pose at time 0.
    first_frame,
};

struct root_motion_options {
    /// The joint whose travel is the character's: the hips or a dedicated root. Its ancestors must
    /// not be animated by the clip and their bind pose must be a similarity (rotation, uniform
    /// scale, translation, possibly mirrored): the motion is expressed in model space through it.
    std::size_t joint = 0;
    motion_translation translation = motion_translation::horizontal;
    motion_rotation rotation = motion_rotation::yaw;
    motion_reference reference = motion_reference::bind_pose;
    /// The up direction in model space (any length but zero): +y, Direct3D's and .X files' usual
    /// up. Defines "horizontal" and "yaw".
    glm::vec3 up{0.0f, 1.0f, 0.0f};
};

/// Takes the root motion out of `c` into `c.motion`, and leaves the rest in the root's channel.
///
/// At every time at which the clip has a key (on any joint), with P the bind model matrix of the
/// root's parent (the identity for a skeleton root) and L the root's local transform:
/// `P * L_original(t) == to_matrix(motion(t)) * P * L_in_place(t)`, to float rounding, so the
/// in-place clip posed under the motion is the original animation at every key (between keys the
/// two are interpolated separately and differ by interpolation error only), for the root and every
/// joint below it. (The static frames above the root are placed by the motion like the rest of the
/// character: they move with it.) Concretely, in the
/// parent's space, with (p, q) the root's translation and rotation and (p_ref, q_ref) the
/// reference's: the motion's rotation m is the selected part of `q * conjugate(q_ref)` and its
/// translation the selected part of `p - m * p_ref`; the clip keeps `conjugate(m) * q` and
/// `conjugate(m) * (p - translation)`. So, for example with horizontal + yaw, the in-place root
/// stays at the reference's horizontal position and heading, and keeps its height, lean and roll.
///
/// The root's channel is rewritten with translation and rotation keys at every key time of the
/// clip (its scale track is kept; a matrix channel is first split into translation, rotation and
/// scale keys, which sampling_job interpolates the same way); each keeps its track's interpolation
/// mode (linear when the track was absent). The motion tracks are keyed at the same times,
/// translation lerped, rotation slerped. A clip that does not animate the root's translation or
/// rotation is left as it is, with no motion (empty tracks: the identity).
///
/// Errors (the clip is then unchanged):
/// - validate_clip's errors;
/// - errc::out_of_range: options.joint >= s.size();
/// - errc::non_finite / errc::invalid_argument: a NaN, infinite or zero `up`;
/// - errc::invalid_argument: the clip already has motion (extract from the original);
/// - errc::unsupported: the clip animates an ancestor of the root (the message names it), or the
///   ancestors' bind pose is not a similarity (non-uniform scale or shear).
inline status extract_root_motion(clip& c, const skeleton& s, const root_motion_options& options = {});

/// The clip's motion at `time` (ticks, used as given; ends clamp as sample_track's do): the root's
/// model-space placement that extract_root_motion took out. The identity for a clip without
/// motion (an empty track stands for the identity).
inline rigid_transform sample_motion(const clip& c, float time);

/// The per-instance state of reading one clip's motion: key cursors, the clip's placements at
/// its start and end, and the last placement sampled (the next update usually starts there).
/// Binds itself to the clip of the first motion_between call and rebinds for another clip object;
/// after changing a bound clip's motion or duration in place, call reset().
class motion_cursor {
public:
    void reset() noexcept { clip_ = nullptr; }

private:
    friend struct impl::motion_access;

    const clip* clip_ = nullptr;
    track_cursor translation_, rotation_;
    rigid_transform start_, end_;  // the motion at time 0 and at the end of a period
    rigid_transform loop_;         // end * inverse(start): one period's travel, from the start
    bool has_last_ = false;
    float last_time_ = 0.0f;
    rigid_transform last_;
};

/// The displacement of the root between playback times `from` and `to` (ticks since the clip
/// started, *not* wrapped: beyond the end, negative, and `to < from` for backward playback), in
/// the character's frame at `from`: `compose(placement, motion_between(c, from, to))` moves a
/// character from where it is at `from` to where it is at `to`.
///
/// Playback follows the clip's wrap mode, as clip_time maps those times to poses:
/// - wrap_mode::loop / loop_inclusive: the clip repeats with period `duration` (+ 1 tick for
///   loop_inclusive), and each period moves the character by the clip's whole travel, so the
///   displacement over k whole periods is that travel composed k times (translation only: k
///   times the distance, exactly, bar the rounding of one sum), whatever the steps taken; steps
///   backward retrace it (`motion_between(c, b, a)` is `inverse(motion_between(c, a, b))`);
/// - wrap_mode::clamp, and a clip of zero duration: times are clamped to [0, duration] and the
///   character stops at the ends.
///
/// The identity when the clip has no motion, when from == to, and when `from` or `to` is NaN or
/// infinite. The cursor overload samples at most one new placement per call in sequential
/// playback; both give the same result.
inline rigid_transform motion_between(const clip& c, double from, double to);
inline rigid_transform motion_between(const clip& c, double from, double to, motion_cursor& cursor);

/// Blends displacements as blend_job blends poses: the translation is the weighted mean, the
/// rotation the normalised weighted sum of the quaternions (each taken on the hemisphere of the
/// sum so far: for two, nlerp). Weights need not sum to one. A single non-zero weight returns its
/// displacement exactly; all weights zero (or count 0) give the identity.
/// Errors (out untouched): errc::invalid_argument for null arrays with count > 0 or a negative
/// weight, errc::non_finite for a NaN or infinite weight (error::index is the weight's index).
inline status blend_motion(const rigid_transform* motions, const float* weights, std::size_t count,
                           rigid_transform& out);

} // namespace keyblend

#include "impl/motion.impl.hpp"
