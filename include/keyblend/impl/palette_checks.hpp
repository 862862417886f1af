// keyblend — the skinning palette's checks (model[bones[b].joint] * bones[b].offset), shared by the
// jobs that compute it: palette_job, local_to_model_job with a palette, a fused skinning_job.
// Internal.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "../error.hpp"
#include "../skeleton.hpp"
#include "../span.hpp"
#include "simd/isa.hpp"

#include <algorithm>
#include <string>

namespace keyblend {
namespace impl {

/// Which of the palette's checks fails first, in the order the jobs' contracts list them.
enum class palette_fault : unsigned char { none, null_span, short_output, joint_outside };

/// The checks of a palette of `bones` over `joints` model matrices (at `model`) into `output`,
/// each once. The pass over the bones has no early exit (it runs every frame and almost never
/// fails) and keeps four running maxima of the joints, so that four loads are in flight: the
/// bones are a joint, a matrix and a name each, one or two cache lines apart, and one running
/// flag would make each comparison wait for the one before. palette_error finds which bone failed.
inline palette_fault first_palette_fault(const glm::mat4* model, std::size_t joints, span<const skin_bone> bones,
                                         span<glm::mat4> output) {
    const std::size_t n = bones.size();
    const skin_bone* b = bones.data();
    if ((n && !b) || (joints && !model) || (output.size() && !output.data())) return palette_fault::null_span;
    if (output.size() < n) return palette_fault::short_output;
    if (n == 0) return palette_fault::none;
    std::size_t m[4] = {b[0].joint, b[0].joint, b[0].joint, b[0].joint};
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (std::size_t k = 0; k < 4; ++k) m[k] = std::max(m[k], b[i + k].joint);
    for (; i < n; ++i) m[0] = std::max(m[0], b[i].joint);
    return std::max(std::max(m[0], m[1]), std::max(m[2], m[3])) < joints ? palette_fault::none
                                                                         : palette_fault::joint_outside;
}

/// The error of `fault` (not none) for job `what`: the message, and for a joint outside the pose
/// the first bone that has one (error::index).
KEYBLEND_COLD inline status palette_error(const char* what, std::size_t joints, span<const skin_bone> bones,
                                          std::size_t output_size, palette_fault fault) {
    const std::size_t n = bones.size();
    const std::string job = what;
    if (fault == palette_fault::null_span)
        return make_error(errc::invalid_argument, job + ": a span has null data but a size other than 0");
    if (fault == palette_fault::short_output)
        return make_error(errc::size_mismatch, job + ": " + std::to_string(n) + " bones but room for " +
                                                   std::to_string(output_size) + " palette matrices");
    std::size_t b = 0;
    while (b < n && bones[b].joint < joints) ++b;
    return make_error(errc::out_of_range,
                      job + ": bone " + std::to_string(b) + " '" + bones[b].name + "': joint " +
                          std::to_string(bones[b].joint) + " is outside the pose (" + std::to_string(joints) +
                          " joints)",
                      b);
}

/// The palette's checks for job `what`: no error, or palette_error's for the first that fails.
inline status check_palette_inputs(const char* what, const glm::mat4* model, std::size_t joints,
                                   span<const skin_bone> bones, span<glm::mat4> output) {
    const palette_fault fault = first_palette_fault(model, joints, bones, output);
    return fault == palette_fault::none ? status{} : palette_error(what, joints, bones, output.size(), fault);
}

} // namespace impl
} // namespace keyblend
