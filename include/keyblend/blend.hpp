// keyblend — blending poses: the seeds' additive difference in matrix space, exactly; and (below)
// blending in translation / rotation / scale space, which keeps bones rigid.
//
// SPDX-License-Identifier: MIT
//
// The seeds' way (blending-skeletal-animations.txt, cBlendedAnimationCollection::Blend):
//
//     reset_to_bind(skeleton, local);                       // pFrame->Reset()
//     blend_matrix_additive(walk, skeleton, t, 1.0f, local); // Blend("Walk", t, TRUE, 1.0f)
//     blend_matrix_additive(shoot, skeleton, t, 1.0f, local);// Blend("Shoot", t, TRUE, 1.0f)
//     local_to_model(skeleton, local, model);               // pFrame->UpdateHierarchy()
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

/// The seeds' Blend for one set, exactly: for each channel of `c`, with M its local matrix at `time`
/// (sample_channel_matrix: matrix keys element-wise, T*R*S otherwise, missing components from the
/// bind pose), `local[joint] += (M - bind_local[joint]) * weight`, element-wise. Joints the clip does
/// not animate are untouched. Call reset_to_bind(s, local) once before the first set of a frame,
/// and local_to_model after the last.
///
/// - weight == 0 changes nothing, bit for bit (the channel is not even sampled).
/// - A single set at weight 1 on a reset pose reproduces that set's local matrices to float
///   rounding (`bind + (M - bind)`).
/// - Any finite weight is used as given: weights need not sum to one across sets, negative ones
///   subtract, and above one exaggerate (the seed does the same).
/// - A NaN or infinite weight is an error (errc::non_finite) and changes nothing.
/// - `local` must have s.size() entries (errc::size_mismatch otherwise, nothing changed); a
///   channel whose joint is out of range is reported (errc::out_of_range) after the others are
///   applied. `time` is in ticks, used as given (see clip_time for looping).
inline status blend_matrix_additive(const clip& c, const skeleton& s, float time, float weight,
                                    std::vector<glm::mat4>& local);

} // namespace keyblend

#include "impl/blend.impl.hpp"
