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

/// The first of a blend layer's conditions that it breaks, in the order they are reported.
enum class layer_fault : unsigned char {
    none,
    weight_non_finite,
    weight_negative,
    null_pose,
    pose_joints,
    pose_morphs,
    reference_joints,
    reference_morphs,
    joint_weight_count,
    joint_weight_value
};

/// A layer's reference pose: none for a weighted layer.
inline const local_pose* reference_of(const blend_layer&) { return nullptr; }
inline const local_pose* reference_of(const additive_layer& layer) { return layer.reference; }

/// What blend_job checks of a layer (a blend_layer or an additive_layer) against a rest pose of
/// n joints and m morph weights. Allocates nothing; the pass over the joint weights has no early
/// exit (it runs every frame and almost never fails, so it vectorises).
template <class Layer> inline layer_fault check_layer(const Layer& layer, std::size_t n, std::size_t m) {
    using f = layer_fault;
    constexpr bool additive = std::is_same<Layer, additive_layer>::value;
    const local_pose* const reference = reference_of(layer);
    if (!is_finite(layer.weight)) return f::weight_non_finite;
    if (!additive && layer.weight < 0.0f) return f::weight_negative;
    if (!layer.pose) return f::null_pose;
    if (layer.pose->size() != n) return f::pose_joints;
    if (layer.pose->morph_weights().size() != m) return f::pose_morphs;
    if (reference && reference->size() != n) return f::reference_joints;
    if (reference && reference->morph_weights().size() != m) return f::reference_morphs;
    if (layer.joint_weights.empty()) return f::none;
    if (layer.joint_weights.size() != n) return f::joint_weight_count;
    bool ok = true;
    for (float w : layer.joint_weights) ok &= is_finite(w) & (w >= 0.0f);
    return ok ? f::none : f::joint_weight_value;
}

/// The first of blend_job's conditions that a job breaks, in the order they are reported;
/// `layer` when one of its layers breaks one of check_layer's.
enum class blend_fault : unsigned char {
    none,
    null_rest_pose,
    null_output,
    threshold_non_finite,
    threshold_negative,
    null_layer_span,
    layer
};

/// The checks, each once (run's path: nothing is built unless one fails).
inline blend_fault first_fault(const blend_job& job) {
    using f = blend_fault;
    if (!job.rest_pose) return f::null_rest_pose;
    if (!job.output) return f::null_output;
    if (!is_finite(job.threshold)) return f::threshold_non_finite;
    if (job.threshold < 0.0f) return f::threshold_negative;
    if ((!job.layers.data() && job.layers.size()) || (!job.additive_layers.data() && job.additive_layers.size()))
        return f::null_layer_span;
    const std::size_t n = job.rest_pose->size(), m = job.rest_pose->morph_weights().size();
    bool ok = true;
    for (const blend_layer& layer : job.layers) ok &= check_layer(layer, n, m) == layer_fault::none;
    for (const additive_layer& layer : job.additive_layers) ok &= check_layer(layer, n, m) == layer_fault::none;
    return ok ? f::none : f::layer;
}

/// The error naming `fault` (not none) of `layer`, the i-th of its span, whose layers come from
/// `first` on in the job's order (weighted, then additive: error::index), against a rest pose of n
/// joints and m morph weights.
template <class Layer>
KEYBLEND_COLD status layer_error(const Layer& layer, std::size_t i, std::size_t first, std::size_t n, std::size_t m,
                                 layer_fault fault) {
    using f = layer_fault;
    constexpr bool additive = std::is_same<Layer, additive_layer>::value;
    const std::string label = std::string(additive ? "blend_job: additive layer " : "blend_job: blend layer ") +
                              std::to_string(i);
    const auto fail = [&](errc code, const std::string& what) {
        return make_error(code, label + ": " + what, first + i);
    };
    const auto joints = [&](const char* role, const local_pose& p) {
        return fail(errc::size_mismatch, std::string(role) + " has " + std::to_string(p.size()) +
                                             " joints, the rest pose " + std::to_string(n));
    };
    const auto morphs = [&](const char* role, const local_pose& p) {
        return fail(errc::size_mismatch, std::string(role) + " has " + std::to_string(p.morph_weights().size()) +
                                             " morph weights, the rest pose " + std::to_string(m));
    };
    switch (fault) {
    case f::none: return {};
    case f::weight_non_finite: return fail(errc::non_finite, "weight is NaN or infinite");
    case f::weight_negative: return fail(errc::invalid_argument, "weight " + std::to_string(layer.weight) + " is negative");
    case f::null_pose: return fail(errc::invalid_argument, "pose is null");
    case f::pose_joints: return joints("pose", *layer.pose);
    case f::pose_morphs: return morphs("pose", *layer.pose);
    case f::reference_joints: return joints("reference", *reference_of(layer));
    case f::reference_morphs: return morphs("reference", *reference_of(layer));
    case f::joint_weight_count:
        return fail(errc::size_mismatch, std::to_string(layer.joint_weights.size()) + " joint weights for " +
                                             std::to_string(n) + " joints");
    case f::joint_weight_value: break;
    }
    std::size_t j = 0;
    while (j < n && is_finite(layer.joint_weights[j]) && layer.joint_weights[j] >= 0.0f) ++j;
    const float w = layer.joint_weights[j];
    return fail(is_finite(w) ? errc::invalid_argument : errc::non_finite,
                "joint " + std::to_string(j) + " weight " + std::to_string(w) +
                    (is_finite(w) ? " is negative" : " is not finite"));
}

/// blend_job's error for `fault` (not none): the message, and for a layer the first that breaks a
/// condition.
KEYBLEND_COLD inline status blend_error(const blend_job& job, blend_fault fault) {
    using f = blend_fault;
    switch (fault) {
    case f::none: return {};
    case f::null_rest_pose: return make_error(errc::invalid_argument, "blend_job: rest_pose is null");
    case f::null_output: return make_error(errc::invalid_argument, "blend_job: output is null");
    case f::threshold_non_finite: return make_error(errc::non_finite, "blend_job: threshold is NaN or infinite");
    case f::threshold_negative: return make_error(errc::invalid_argument, "blend_job: threshold is negative");
    case f::null_layer_span:
        return make_error(errc::invalid_argument, "blend_job: a layer span has null data but a size other than 0");
    case f::layer: break;
    }
    const std::size_t n = job.rest_pose->size(), m = job.rest_pose->morph_weights().size();
    for (std::size_t i = 0; i < job.layers.size(); ++i)
        if (const layer_fault lf = check_layer(job.layers[i], n, m); lf != layer_fault::none)
            return layer_error(job.layers[i], i, 0, n, m, lf);
    for (std::size_t i = 0; i < job.additive_layers.size(); ++i)
        if (const layer_fault lf = check_layer(job.additive_layers[i], n, m); lf != layer_fault::none)
            return layer_error(job.additive_layers[i], i, job.layers.size(), n, m, lf);
    return {};
}

/// blend_job's checks (validate's and run's).
inline status check_job(const blend_job& job) {
    const blend_fault fault = first_fault(job);
    return fault == blend_fault::none ? status{} : blend_error(job, fault);
}

} // namespace impl

inline status blend_job::validate() const { return impl::check_job(*this); }

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
