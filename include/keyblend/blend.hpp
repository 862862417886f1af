// keyblend — blending poses: the classic additive difference in matrix space, exactly; and (below)
// the blend job, in translation / rotation / scale space, which keeps bones rigid.
//
// SPDX-License-Identifier: MIT
//
// The classic way (docs/classic.md: the animation collection's Blend):
//
//     reset_to_bind(skeleton, local);                        // Reset()
//     blend_matrix_additive(walk, skeleton, t, 1.0f, local);  // Blend("Walk", t, TRUE, 1.0f)
//     blend_matrix_additive(shoot, skeleton, t, 1.0f, local); // Blend("Shoot", t, TRUE, 1.0f)
//     local_to_model_job{&skeleton, nullptr, local, ...}.run(); // UpdateHierarchy()
//
// Each set adds, element by element, `(its sampled matrix - the bind matrix) * weight` to the joints
// it animates. Sets that animate different joints combine perfectly; sets that animate the same
// joint add their differences, which for rotations is not a rotation: two 90-degree turns blended
// half and half give axes 0.707 long (and not orthogonal when the axes differ). The TRS functions
// below blend rotations as rotations.
#pragma once

#include "clip.hpp"
#include "error.hpp"
#include "pose.hpp"
#include "skeleton.hpp"

#include <cstddef>
#include <vector>

namespace keyblend {

/// The classic Blend for one set, exactly: for each channel of `c`, with M its local matrix at `time`
/// (sample_channel_matrix: matrix keys element-wise, T*R*S otherwise, missing components from the
/// bind pose), `local[joint] += (M - bind_local[joint]) * weight`, element-wise. Joints the clip does
/// not animate are untouched. Call reset_to_bind(s, local) once before the first set of a frame,
/// and local_to_model_job after the last.
///
/// - weight == 0 changes nothing, bit for bit (the channel is not even sampled).
/// - A single set at weight 1 on a reset pose reproduces that set's local matrices to float
///   rounding (`bind + (M - bind)`).
/// - Any finite weight is used as given: weights need not sum to one across sets, negative ones
///   subtract, and above one exaggerate (as the classic code does).
/// - A NaN or infinite weight is an error (errc::non_finite) and changes nothing.
/// - `local` must have at least s.size() entries (errc::size_mismatch otherwise, nothing changed); a
///   channel whose joint is out of range is reported (errc::out_of_range) after the others are
///   applied. `time` is in ticks, used as given (see clip_time for looping).
inline status blend_matrix_additive(const clip& c, const skeleton& s, float time, float weight,
                                    span<glm::mat4> local);

// ---------------------------------------------------------------------------------------------
// Blending in translation / rotation / scale space
// ---------------------------------------------------------------------------------------------
//
// A frame in the TRS pipeline:
//
//     walk_sampling.run(); aim_sampling.run(); breathe_sampling.run(); // sampling_jobs
//     const blend_layer layers[] = {{&walk_pose, 1.0f}, {&aim_pose, 1.0f, upper_body_mask}};
//     const additive_layer adds[] = {{&breathe_pose, &breathe_first_frame, 0.5f}};
//     blend_job job;
//     job.rest_pose = &bind_pose;                            // local_pose(s)
//     job.layers = layers;
//     job.additive_layers = adds;
//     job.output = &pose;
//     if (auto st = job.run(); !st) report(st.error());

/// One weighted layer of a blend: a pose, a weight, and optionally a weight per joint.
struct blend_layer {
    const local_pose* pose = nullptr;
    /// Finite and >= 0. 0 switches the layer off (it is then not read).
    float weight = 0.0f;
    /// Optional per-joint weights, multiplied with `weight` (an upper-body mask, say): one finite
    /// value >= 0 per joint (size() == the pose's joint count). Empty: 1 for every joint.
    span<const float> joint_weights{};
};

/// One additive layer: the difference between a pose and a reference pose, applied on top of the
/// blended result with a weight.
struct additive_layer {
    const local_pose* pose = nullptr;
    /// What "no change" looks like for this layer: the bind pose, or the clip's first frame. The
    /// difference is taken per joint as translation pose - reference, rotation
    /// conjugate(reference) * pose, scale pose / reference (1 where the reference scale is 0).
    /// nullptr: `pose` already holds a difference (from make_additive).
    const local_pose* reference = nullptr;
    /// Finite; 1 applies the whole difference, 0 none, values above one exaggerate it, and a
    /// negative weight -a applies the inverse of the a-weighted difference (so +a then -a cancel).
    float weight = 0.0f;
    /// As blend_layer::joint_weights: finite, >= 0, one per joint; empty for 1.
    span<const float> joint_weights{};
};

/// Blends weighted layers of local poses, then applies additive layers: the TRS counterpart of
/// the classic matrix blend, which keeps every bone rigid. The job contract (docs/jobs.md): fill in
/// the inputs, then validate() or run(); the job holds no state and allocates nothing (output is
/// resized once).
///
/// For each joint j, with w_i = layers[i].weight * joint_weights_i[j]:
/// 1. Weighted layers: translation and scale are the weighted means sum(w_i x_i) / sum(w_i);
///    rotation is the normalised weighted sum of the layers' quaternions, each taken on the
///    hemisphere of the sum so far (the short path; for two layers this is nlerp).
/// 2. Rest pose: where the total weight W = sum(w_i) is below `threshold`, the rest pose joins the
///    blend with weight `threshold - W`, so a joint fades into the rest pose as its layers fade
///    out instead of snapping. Where W is exactly 0 (no layers, all weights 0, or masked out) the
///    joint is the rest pose, bit for bit. A single layer with w = 1 at a joint gives that layer's
///    pose there (rotation renormalised).
/// 3. Additive layers, in order, with a_k = weight_k * joint_weights_k[j] and the difference
///    (dT, dR, dS): translation += dT * a_k; rotation = rotation * nlerp(identity, dR, a_k) (the
///    difference is applied in the joint's own frame, on the short path); scale *= 1 + (dS - 1) *
///    a_k. A negative a_k applies the inverse of the |a_k| part: rotation * conjugate(nlerp(identity,
///    dR, |a_k|)), scale / (1 + (dS - 1) |a_k|) (unchanged where that is 0). Where a_k == 0 the
///    joint is left as it was, bit for bit.
/// 4. Morph weights (local_pose::morph_weights, when the rest pose has them): as translation —
///    the weighted mean with the rest pose's joining below the threshold, then each additive
///    layer's difference (pose - reference) times a_k added — with the weights of the joint that
///    owns each morph weight.
///
/// Poses are not checked for NaN (the sampler never produces one from a validated clip): a NaN in
/// an input pose makes that joint's output NaN and no other. The output may be one of the input
/// poses (each joint is read before it is written). The output's padding lanes are the identity.
/// SIMD over the widest lanes the compiler targets (AVX-512: sixteen joints, the last eight of an
/// odd block count eight at a time; AVX2 eight; SSE2 four) unless KEYBLEND_NO_INTRINSICS; equal to
/// the scalar path within 1e-6 (the rotation's normalisation may use a reciprocal square root
/// estimate refined by a Newton step, within 2 ulp).
struct blend_job {
    /// The pose a joint falls back to when its layers' total weight is below the threshold:
    /// usually the bind pose, `local_pose(skeleton)`. Defines the joint count.
    const local_pose* rest_pose = nullptr;
    span<const blend_layer> layers;
    span<const additive_layer> additive_layers;
    /// Finite and >= 0 (0: the rest pose only where the total weight is exactly 0).
    float threshold = 0.1f;
    /// Resized to rest_pose->size().
    local_pose* output = nullptr;

    /// Reports the first problem, naming the layer (error::index is the layer index, additive
    /// layers counted after the weighted ones) and, for a joint weight, the joint:
    /// - errc::invalid_argument: a null rest pose, output or layer pose, a layer span with null
    ///   data and a size other than 0, a negative weight, joint weight or threshold;
    /// - errc::non_finite: a NaN or infinite weight, joint weight or threshold;
    /// - errc::size_mismatch: a layer pose, reference pose or joint weight array whose size is not
    ///   the rest pose's joint count, or whose morph weights are not the rest pose's number.
    /// (The checks are O(joints x layers) and cheap: run() makes them all.)
    status validate() const;

    /// validate(), then the blend. On a validation error the output is not touched.
    KEYBLEND_JOB_ABI status run() const;
};

/// The additive difference of `pose` from `reference`, per joint (see additive_layer::reference):
/// translation pose - reference, rotation conjugate(reference) * pose, scale pose / reference (1
/// where the reference scale is 0). Applying it at weight 1 on top of `reference` gives `pose`
/// back (to float rounding). `delta` is resized to pose.size(); it may alias either input.
/// reference.size() != pose.size() is errc::size_mismatch, and `delta` is untouched.
KEYBLEND_KERNEL_FUNCTION status make_additive(const local_pose& pose, const local_pose& reference, local_pose& delta);

} // namespace keyblend

#include "impl/blend.impl.hpp"
