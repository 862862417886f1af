// keyblend — definitions for blend.hpp. Included at the bottom of blend.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

namespace keyblend {

inline status blend_matrix_additive(const clip& c, const skeleton& s, float time, float weight,
                                    span<glm::mat4> local) {
    if (!is_finite(weight))
        return impl::make_error(errc::non_finite,
                                "clip '" + c.name + "': blend weight is NaN or infinite");
    if (local.size() < s.size())
        return impl::make_error(errc::size_mismatch,
                                "clip '" + c.name + "': local pose has " + std::to_string(local.size()) +
                                    " matrices for " + std::to_string(s.size()) + " joints");
    status out;
    for (std::size_t i = 0; i < c.channels.size(); ++i) {
        const channel& ch = c.channels[i];
        if (ch.joint >= s.size()) {
            if (out)
                out = impl::make_error(errc::out_of_range,
                                       "clip '" + c.name + "' channel " + std::to_string(i) + " (joint " +
                                           std::to_string(ch.joint) + "): joint is out of range (" +
                                           std::to_string(s.size()) + " joints); channel skipped",
                                       i);
            continue;
        }
        if (weight == 0.0f) continue;
        const glm::mat4& bind = s.bind_local()[ch.joint];
        const glm::mat4 m = sample_channel_matrix(ch, time, s.bind_transforms()[ch.joint], bind);
        // The classic code: matDiff = matAnimation - matOriginal; matDiff *= Blend;
        // Transformation += matDiff.
        glm::mat4& target = local[ch.joint];
        for (int col = 0; col < 4; ++col)
            for (int row = 0; row < 4; ++row)
                target[col][row] += (m[col][row] - bind[col][row]) * weight;
    }
    return out;
}

} // namespace keyblend

// ---------------------------------------------------------------------------------------------
// TRS blending
// ---------------------------------------------------------------------------------------------

namespace keyblend {
namespace impl {

/// "blend_job: blend layer 2" / "blend_job: additive layer 0" (built only when reporting).
inline std::string layer_label(std::size_t index, std::size_t layer_count) {
    return index < layer_count ? "blend_job: blend layer " + std::to_string(index)
                               : "blend_job: additive layer " + std::to_string(index - layer_count);
}

/// Checks one layer (weighted or additive) of a job; allocates only to report an error.
inline status check_layer(const blend_job& job, std::size_t l) {
    const bool additive = l >= job.layers.size();
    const std::size_t a = l - job.layers.size();
    const local_pose* pose = additive ? job.additive_layers[a].pose : job.layers[l].pose;
    const local_pose* reference = additive ? job.additive_layers[a].reference : nullptr;
    const float weight = additive ? job.additive_layers[a].weight : job.layers[l].weight;
    const span<const float> joint_weights =
        additive ? job.additive_layers[a].joint_weights : job.layers[l].joint_weights;
    const std::size_t n = job.rest_pose->size();
    const auto fail = [&](errc code, const std::string& what) {
        return make_error(code, layer_label(l, job.layers.size()) + ": " + what, l);
    };
    if (!is_finite(weight)) return fail(errc::non_finite, "weight is NaN or infinite");
    if (!additive && weight < 0.0f)
        return fail(errc::invalid_argument, "weight " + std::to_string(weight) + " is negative");
    for (const auto& [p, role] : {std::pair<const local_pose*, const char*>{pose, "pose"},
                                  {reference, "reference"}}) {
        if (!p && p == pose) return fail(errc::invalid_argument, "pose is null");
        if (p && p->size() != n)
            return fail(errc::size_mismatch, std::string(role) + " has " + std::to_string(p->size()) +
                                                 " joints, the rest pose " + std::to_string(n));
        if (p && p->morph_weights().size() != job.rest_pose->morph_weights().size())
            return fail(errc::size_mismatch, std::string(role) + " has " + std::to_string(p->morph_weights().size()) +
                                                 " morph weights, the rest pose " +
                                                 std::to_string(job.rest_pose->morph_weights().size()));
    }
    if (joint_weights.empty()) return {};
    if (joint_weights.size() != n)
        return fail(errc::size_mismatch, std::to_string(joint_weights.size()) + " joint weights for " +
                                             std::to_string(n) + " joints");
    for (std::size_t j = 0; j < n; ++j) {
        const float v = joint_weights[j];
        if (is_finite(v) && v >= 0.0f) continue;
        return fail(is_finite(v) ? errc::invalid_argument : errc::non_finite,
                    "joint " + std::to_string(j) + " weight " + std::to_string(v) +
                        (is_finite(v) ? " is negative" : " is not finite"));
    }
    return {};
}

} // namespace impl

namespace impl {
/// True when `weights` is empty (not given), or holds n values, each finite and >= 0.
inline bool joint_weights_ok(span<const float> weights, std::size_t n) {
    if (weights.empty()) return true;
    if (weights.size() != n) return false;
    bool ok = true;
    for (float v : weights) ok &= is_finite(v) & (v >= 0.0f); // (no branch: the loop vectorises)
    return ok;
}

/// The whole of blend_job::validate's checks, answering only yes or no (every frame's path; the
/// report is built only when this says no).
inline bool blend_job_ok(const blend_job& job) {
    if (!job.rest_pose || !job.output || !is_finite(job.threshold) || job.threshold < 0.0f ||
        (!job.layers.data() && job.layers.size()) || (!job.additive_layers.data() && job.additive_layers.size()))
        return false;
    const std::size_t n = job.rest_pose->size();
    const std::size_t m = job.rest_pose->morph_weights().size();
    const auto sized = [&](const local_pose* p) {
        return p->size() == n && p->morph_weights().size() == m;
    };
    bool ok = true;
    for (std::size_t l = 0; l < job.layers.size(); ++l) {
        const blend_layer& layer = job.layers[l];
        ok &= layer.pose && sized(layer.pose) && is_finite(layer.weight) && layer.weight >= 0.0f &&
              joint_weights_ok(layer.joint_weights, n);
    }
    for (std::size_t l = 0; l < job.additive_layers.size(); ++l) {
        const additive_layer& layer = job.additive_layers[l];
        ok &= layer.pose && sized(layer.pose) && (!layer.reference || sized(layer.reference)) &&
              is_finite(layer.weight) && joint_weights_ok(layer.joint_weights, n);
    }
    return ok;
}
} // namespace impl

inline status blend_job::validate() const {
    if (impl::blend_job_ok(*this)) return {};
    if (!rest_pose) return impl::make_error(errc::invalid_argument, "blend_job: rest_pose is null");
    if (!output) return impl::make_error(errc::invalid_argument, "blend_job: output is null");
    if (!is_finite(threshold))
        return impl::make_error(errc::non_finite, "blend_job: threshold is NaN or infinite");
    if (threshold < 0.0f)
        return impl::make_error(errc::invalid_argument, "blend_job: threshold is negative");
    if ((!layers.data() && layers.size()) || (!additive_layers.data() && additive_layers.size()))
        return impl::make_error(errc::invalid_argument,
                                "blend_job: a layer span has null data but a size other than 0");
    for (std::size_t l = 0; l < layers.size() + additive_layers.size(); ++l)
        if (status st = impl::check_layer(*this, l); !st) return st;
    return {};
}

} // namespace keyblend

#if KEYBLEND_KERNELS_HERE
#include "blend_kernels.hpp"
#endif

namespace keyblend {

#if !defined(KEYBLEND_KERNELS_LIBRARY)
inline status blend_job::run() const { return impl::run_job(*this); }

KEYBLEND_KERNEL_FUNCTION status make_additive(const local_pose& pose, const local_pose& reference, local_pose& delta) {
    return impl::make_additive(pose, reference, delta);
}
#endif

} // namespace keyblend
