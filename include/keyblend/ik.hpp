// keyblend — inverse kinematics on a posed skeleton: a two-bone job (hip–knee–ankle,
// shoulder–elbow–wrist) and an aim job (a head, an eye, a gun pointing a given axis at a target).
//
// SPDX-License-Identifier: MIT
//
// Both run after the pose is sampled and blended and its model matrices computed, and correct the
// local rotations of the joints they move, in place; then the sub-tree below is brought up to
// date. A frame that plants a foot:
//
//     keyblend::two_bone_ik_job leg;                 // after the local-to-model job (root: world)
//     leg.skeleton = &skeleton;
//     leg.model = model;
//     leg.pose = &pose;
//     leg.start_joint = thigh;  leg.mid_joint = knee;  leg.end_joint = ankle;
//     leg.target = foot_on_ground;                   // in the space of `model` (here: world)
//     leg.pole_vector = character_forward;           // the knee points this way
//     leg.weight = foot_contact;                     // from a float channel of the clip, say
//     if (auto st = leg.run(); !st) report(st.error());
//     hierarchy.from = thigh;                        // the local_to_model_job again, for the leg
//     hierarchy.run();
//
// Like the other jobs, they hold no state, allocate nothing, read and write only the caller's
// buffers, and check their inputs in validate(), which run() calls first.
//
// Space. `target` and `pole_vector` are in the space of the model matrices given (model space, or
// world space when local_to_model_job had a root transform). The corrections are computed in that
// space from the joints' positions and turned into each joint's own frame through its model
// matrix, which is exact when the joints' model matrices are a rotation times a uniform scale
// (mirrored ones included), the case of every rig seen in .X files; under non-uniform scale the
// result is the nearest rotation and the target is reached approximately. A corrected local
// rotation is `rotation * correction` (the correction turns the joint in its own frame, before
// its scale, so local scales should be uniform too).
#pragma once

#include "error.hpp"
#include "math.hpp"
#include "pose.hpp"
#include "skeleton.hpp"

#include <cstddef>

namespace keyblend {

/// What an IK job reads and corrects: a posed skeleton (both jobs derive from it).
struct ik_buffers {
    /// The skeleton the pose and the model matrices belong to.
    const keyblend::skeleton* skeleton = nullptr;
    /// The model matrices of `pose` (local_to_model_job of it): skeleton->size() of them (or more).
    /// Only the joints the job moves are read. The job does not update them: run a
    /// local_to_model_job with `from` = the first joint it moved after it.
    span<const glm::mat4> model;
    /// The pose to correct: the local rotations of the joints the job moves are rewritten,
    /// nothing else is touched.
    local_pose* pose = nullptr;
};

/// Two-bone IK: turns the start and middle joints of a chain so that its end joint reaches
/// `target`, the middle joint bending like a hinge and the chain's plane turned toward the pole.
///
/// The chain: `start_joint` must be an ancestor of `mid_joint` and `mid_joint` of `end_joint`
/// (not necessarily their parents: joints in between keep their local transforms). The bones are
/// start-to-mid and mid-to-end, of lengths L1 and L2, as the model matrices place them.
///
/// The solution, for a target at distance d from the start joint:
/// - reachable (|L1 - L2| <= d <= L1 + L2, and within the hinge's range): the end joint is at
///   the target, to float rounding (within 1e-5 of the chain's length);
/// - too far: the chain is straight, pointing at the target; too near: folded as far as the
///   hinge allows, pointing at it. `reached` says which;
/// - the middle joint turns about its hinge axis only (`mid_axis`), by the angle that gives the
///   start-to-end distance (exact for any hinge axis, perpendicular to the bones or not); the
///   start joint then turns the chain onto the target and about the start-to-target line, so that
///   the middle joint lies on the side the pole vector points to.
///
/// Degenerate input gives a documented result, never NaN: a bone shorter than 1e-6 of the chain
/// (zero-length bones, or a zero scale) leaves the pose unchanged (reached: false); a target at
/// the start joint (within 1e-6 of the chain's length) folds the chain along its current
/// start-to-end direction; a pole vector that is zero or parallel to the start-to-target line
/// keeps the plane the chain has (no turn about that line); a straight chain without `mid_axis`
/// bends toward the pole vector (or about an arbitrary axis perpendicular to the first bone, if
/// there is no pole either). NaN and other invalid input is reported by validate().
struct two_bone_ik_job : ik_buffers {
    /// The chain (see above); the job rewrites the local rotations of the start and middle joints.
    std::size_t start_joint = 0;
    std::size_t mid_joint = 0;
    std::size_t end_joint = 0;

    /// Where the end joint should be, in the space of `model`.
    glm::vec3 target{0.0f};
    /// A direction in the space of `model` toward which the middle joint (the knee, the elbow)
    /// points: the chain's plane is turned about the start-to-target line so that the middle
    /// joint is on this side of it. Zero (the default): keep the plane the chain is in.
    glm::vec3 pole_vector{0.0f};
    /// The middle joint's hinge, in its own local frame: the axis about which a positive rotation
    /// bends the chain (closes the angle between the two bones); any length. Zero (the default,
    /// and any vector shorter than 1e-6): the axis the chain is bent about now (the cross product
    /// of the bones), so the joint keeps bending the way the animation bends it. Give it when the
    /// chain can be straight.
    glm::vec3 mid_axis{0.0f};
    /// Soft limit, in [0, 1]: the fraction of the chain's length beyond which the end stops
    /// following the target exactly and approaches full extension smoothly instead
    /// (length_soft + (L - length_soft) * (1 - exp(-(d - length_soft) / (L - length_soft))) with
    /// length_soft = soften * L), which avoids the snap of a knee locking straight. 1 (the
    /// default): no softening.
    float soften = 1.0f;
    /// In [0, 1]: how much of the correction is applied (nlerp from no change). 0 changes nothing,
    /// bit for bit.
    float weight = 1.0f;
    /// Optional: set to whether the target is reached by the full (weight 1) correction: within
    /// the chain's reach and the soft limit, and within the hinge's range. Written also when the
    /// weight is 0.
    bool* reached = nullptr;

    /// Reports the first problem (and run() then changes nothing):
    /// - errc::invalid_argument: a null skeleton, model or pose; a weight or soften outside [0, 1];
    ///   joints that are not a chain (start an ancestor of mid, mid of end; the message names them);
    /// - errc::out_of_range: a joint index >= skeleton->size();
    /// - errc::size_mismatch: fewer model matrices than skeleton->size(), or a pose whose joint count is
///   not skeleton->size();
    /// - errc::non_finite: a NaN or infinite target, pole vector, mid axis, weight, soften, or model
    ///   matrix or local rotation of the chain's joints.
    status validate() const;
    /// validate(), then the correction.
    status run() const;
};

/// Aim IK: turns one joint so that a given axis of it points at a target, keeping another axis
/// toward a pole vector.
///
/// After the job (weight 1, target reachable), the ray from the joint's `offset` point along its
/// `forward` axis passes through `target`, and the joint's `up` axis points to the pole vector's
/// side of that ray (it lies in the plane of the ray and the pole vector). Without an offset the
/// forward axis points straight at the target.
///
/// Degenerate input, never NaN: a target at the joint (closer than 1e-6 of the offset's length,
/// or exactly there) or inside the circle the offset ray sweeps (closer to the joint than the
/// offset's distance from the forward line) cannot be aimed at: the pose is unchanged and
/// `reached` false. An up axis or pole vector that is zero, or parallel to the aim direction,
/// keeps the joint's roll about that direction (the shortest rotation aims it). A joint whose
/// model matrix has a zero scale leaves the pose unchanged.
struct aim_ik_job : ik_buffers {
    /// The joint to turn: its local rotation is rewritten.
    std::size_t joint = 0;

    /// The point to aim at, in the space of `model`.
    glm::vec3 target{0.0f};
    /// The joint's axis to point at the target, in its local frame; any length but zero.
    glm::vec3 forward{1.0f, 0.0f, 0.0f};
    /// The joint's axis to keep toward the pole vector, in its local frame; any length. Zero: no
    /// constraint on the roll.
    glm::vec3 up{0.0f, 1.0f, 0.0f};
    /// The direction, in the space of `model`, that `up` should point to. Zero: keep the roll.
    glm::vec3 pole_vector{0.0f, 1.0f, 0.0f};
    /// Where the aiming ray starts, in the joint's local frame (an eye beside the head joint, a
    /// muzzle beside the hand): the ray from this point along `forward` goes through the target.
    glm::vec3 offset{0.0f};
    /// In [0, 1], as in two_bone_ik_job: 0 changes nothing, bit for bit.
    float weight = 1.0f;
    /// Optional: set to whether the target can be aimed at (see above), also when the weight is 0.
    bool* reached = nullptr;

    /// Reports the first problem (and run() then changes nothing): errc::invalid_argument for a
    /// null skeleton, model or pose, a zero forward axis, a weight outside [0, 1];
    /// errc::out_of_range for joint >= skeleton->size(); errc::size_mismatch as two_bone_ik_job;
    /// errc::non_finite for a NaN or infinite vector, weight, or model matrix or local rotation of
    /// the joint.
    status validate() const;
    /// validate(), then the correction.
    status run() const;
};

} // namespace keyblend

#include "impl/ik.impl.hpp"
