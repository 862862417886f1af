// keyblend — definitions for blend.hpp. Included at the bottom of blend.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <string>

namespace keyblend {

inline status blend_matrix_additive(const clip& c, const skeleton& s, float time, float weight,
                                    std::vector<glm::mat4>& local) {
    if (!is_finite(weight))
        return impl::make_error(errc::non_finite,
                                "clip '" + c.name + "': blend weight is NaN or infinite");
    if (local.size() != s.size())
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
        // The seed: matDiff = matAnimation - matOriginal; matDiff *= Blend; Transformation += matDiff.
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

#include "quat_lanes.hpp"

namespace keyblend {
namespace impl {

/// V::width joints of a local_pose in registers.
template <class V>
struct trs_lanes {
    V t[3];
    quat_lanes<V> r;
    V s[3];
};

template <class V>
KEYBLEND_FORCE_INLINE trs_lanes<V> load_trs(const local_pose& p, std::size_t i) {
    using S = local_pose;
    return {{V::load(p.data(S::translation_x) + i), V::load(p.data(S::translation_y) + i),
             V::load(p.data(S::translation_z) + i)},
            {V::load(p.data(S::rotation_w) + i), V::load(p.data(S::rotation_x) + i),
             V::load(p.data(S::rotation_y) + i), V::load(p.data(S::rotation_z) + i)},
            {V::load(p.data(S::scale_x) + i), V::load(p.data(S::scale_y) + i),
             V::load(p.data(S::scale_z) + i)}};
}

template <class V>
KEYBLEND_FORCE_INLINE void store_trs(const trs_lanes<V>& v, local_pose& p, std::size_t i) {
    using S = local_pose;
    v.t[0].store(p.data(S::translation_x) + i);
    v.t[1].store(p.data(S::translation_y) + i);
    v.t[2].store(p.data(S::translation_z) + i);
    v.r.w.store(p.data(S::rotation_w) + i);
    v.r.x.store(p.data(S::rotation_x) + i);
    v.r.y.store(p.data(S::rotation_y) + i);
    v.r.z.store(p.data(S::rotation_z) + i);
    v.s[0].store(p.data(S::scale_x) + i);
    v.s[1].store(p.data(S::scale_y) + i);
    v.s[2].store(p.data(S::scale_z) + i);
}

template <class V>
KEYBLEND_FORCE_INLINE trs_lanes<V> select(typename V::mask m, const trs_lanes<V>& a, const trs_lanes<V>& b) {
    using lanes::select;
    trs_lanes<V> out;
    for (int k = 0; k < 3; ++k) {
        out.t[k] = select(m, a.t[k], b.t[k]);
        out.s[k] = select(m, a.s[k], b.s[k]);
    }
    out.r = select(m, a.r, b.r);
    return out;
}

/// Joint weights [i, i + V::width) of a layer: 1 without an array, 0 past its end (padding).
template <class V>
KEYBLEND_FORCE_INLINE V load_joint_weights(const std::vector<float>* weights, std::size_t i) {
    if (!weights) return V::set1(1.0f);
    if (i + V::width <= weights->size()) return V::load(weights->data() + i);
    float tail[V::width] = {};
    for (std::size_t k = 0; i + k < weights->size() && k < V::width; ++k) tail[k] = (*weights)[i + k];
    return V::load(tail);
}

/// pose ⊖ reference (see make_additive).
template <class V>
KEYBLEND_FORCE_INLINE trs_lanes<V> additive_difference(const trs_lanes<V>& pose, const trs_lanes<V>& reference) {
    using lanes::select;
    const V zero = V::set1(0.0f), one = V::set1(1.0f);
    trs_lanes<V> d;
    for (int k = 0; k < 3; ++k) {
        d.t[k] = pose.t[k] - reference.t[k];
        d.s[k] = select(reference.s[k] == zero, one, pose.s[k] / reference.s[k]);
    }
    d.r = multiply(conjugate(reference.r), pose.r);
    return d;
}

template <class V>
KEYBLEND_FORCE_INLINE void blend_lanes(const blend_job& job, std::size_t i) {
    using lanes::max;
    using lanes::select;
    const V zero = V::set1(0.0f), one = V::set1(1.0f);
    trs_lanes<V> acc{{zero, zero, zero}, {zero, zero, zero, zero}, {zero, zero, zero}};
    V total = zero;
    const auto accumulate = [&](const trs_lanes<V>& p, V w) {
        for (int k = 0; k < 3; ++k) {
            acc.t[k] = acc.t[k] + p.t[k] * w;
            acc.s[k] = acc.s[k] + p.s[k] * w;
        }
        const V wq = select(dot(acc.r, p.r) < zero, -w, w);
        acc.r = {acc.r.w + p.r.w * wq, acc.r.x + p.r.x * wq, acc.r.y + p.r.y * wq,
                 acc.r.z + p.r.z * wq};
        total = total + w;
    };
    for (std::size_t l = 0; l < job.layer_count; ++l) {
        const blend_layer& layer = job.layers[l];
        if (layer.weight == 0.0f) continue;
        accumulate(load_trs<V>(*layer.pose, i),
                   V::set1(layer.weight) * load_joint_weights<V>(layer.joint_weights, i));
    }
    const trs_lanes<V> rest = load_trs<V>(*job.rest_pose, i);
    const typename V::mask none = total == zero;
    const V rest_weight = max(V::set1(job.threshold) - total, zero);
    // (Skipped when no lane needs it: adding rest * 0 would turn a -0 of the layers into +0.)
    if (lanes::bits(rest_weight > zero)) accumulate(rest, rest_weight);
    trs_lanes<V> out;
    const V inv_total = one / total;
    for (int k = 0; k < 3; ++k) {
        out.t[k] = acc.t[k] * inv_total;
        out.s[k] = acc.s[k] * inv_total;
    }
    out.r = normalize_or_identity(acc.r);
    out = select(none, rest, out);

    for (std::size_t l = 0; l < job.additive_count; ++l) {
        const additive_layer& layer = job.additive_layers[l];
        if (layer.weight == 0.0f) continue;
        const V w = V::set1(layer.weight) * load_joint_weights<V>(layer.joint_weights, i);
        const trs_lanes<V> p = load_trs<V>(*layer.pose, i);
        const trs_lanes<V> d = layer.reference ? additive_difference(p, load_trs<V>(*layer.reference, i)) : p;
        // A negative weight applies the inverse of the |w| part of the difference.
        const typename V::mask subtract = w < zero;
        const V a = select(subtract, -w, w);
        trs_lanes<V> applied;
        for (int k = 0; k < 3; ++k) {
            applied.t[k] = out.t[k] + d.t[k] * w;
            const V part = one + (d.s[k] - one) * a;
            // (A zero partial scale cannot be divided out: the scale is left as it was.)
            applied.s[k] = select(subtract, select(part == zero, out.s[k], out.s[k] / part), out.s[k] * part);
        }
        const quat_lanes<V> part = nlerp(quat_lanes<V>::identity(), d.r, a);
        applied.r = multiply(out.r, select(subtract, conjugate(part), part));
        out = select(w == zero, out, applied);
    }
    store_trs(out, *job.output, i);
}

/// "blend_job: blend layer 2" / "blend_job: additive layer 0" (built only when reporting).
inline std::string layer_label(std::size_t index, std::size_t layer_count) {
    return index < layer_count ? "blend_job: blend layer " + std::to_string(index)
                               : "blend_job: additive layer " + std::to_string(index - layer_count);
}

/// Checks one layer (weighted or additive) of a job; allocates only to report an error.
inline status check_layer(const blend_job& job, std::size_t l) {
    const bool additive = l >= job.layer_count;
    const std::size_t a = l - job.layer_count;
    const local_pose* pose = additive ? job.additive_layers[a].pose : job.layers[l].pose;
    const local_pose* reference = additive ? job.additive_layers[a].reference : nullptr;
    const float weight = additive ? job.additive_layers[a].weight : job.layers[l].weight;
    const std::vector<float>* joint_weights =
        additive ? job.additive_layers[a].joint_weights : job.layers[l].joint_weights;
    const std::size_t n = job.rest_pose->size();
    const auto fail = [&](errc code, const std::string& what) {
        return make_error(code, layer_label(l, job.layer_count) + ": " + what, l);
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
    }
    if (!joint_weights) return {};
    if (joint_weights->size() != n)
        return fail(errc::size_mismatch, std::to_string(joint_weights->size()) + " joint weights for " +
                                             std::to_string(n) + " joints");
    for (std::size_t j = 0; j < n; ++j) {
        const float v = (*joint_weights)[j];
        if (is_finite(v) && v >= 0.0f) continue;
        return fail(is_finite(v) ? errc::invalid_argument : errc::non_finite,
                    "joint " + std::to_string(j) + " weight " + std::to_string(v) +
                        (is_finite(v) ? " is negative" : " is not finite"));
    }
    return {};
}

} // namespace impl

inline status blend_job::validate() const {
    if (!rest_pose) return impl::make_error(errc::invalid_argument, "blend_job: rest_pose is null");
    if (!output) return impl::make_error(errc::invalid_argument, "blend_job: output is null");
    if (!is_finite(threshold))
        return impl::make_error(errc::non_finite, "blend_job: threshold is NaN or infinite");
    if (threshold < 0.0f)
        return impl::make_error(errc::invalid_argument, "blend_job: threshold is negative");
    if ((!layers && layer_count) || (!additive_layers && additive_count))
        return impl::make_error(errc::invalid_argument,
                                "blend_job: a layer array is null but its count is not 0");
    for (std::size_t l = 0; l < layer_count + additive_count; ++l)
        if (status st = impl::check_layer(*this, l); !st) return st;
    return {};
}

namespace impl {
template <class V>
status run_blend(const blend_job& job) {
    if (status st = job.validate(); !st) return st;
    job.output->resize(job.rest_pose->size());
    for (std::size_t i = 0; i < job.output->padded_size(); i += V::width) blend_lanes<V>(job, i);
    return {};
}
} // namespace impl

inline status blend_job::run() const { return impl::run_blend<impl::lanes::native>(*this); }

inline status make_additive(const local_pose& pose, const local_pose& reference, local_pose& delta) {
    if (pose.size() != reference.size())
        return impl::make_error(errc::size_mismatch,
                                "make_additive: pose has " + std::to_string(pose.size()) +
                                    " joints, reference " + std::to_string(reference.size()));
    using V = impl::lanes::native;
    delta.resize(pose.size());
    for (std::size_t i = 0; i < pose.padded_size(); i += V::width)
        impl::store_trs(impl::additive_difference(impl::load_trs<V>(pose, i), impl::load_trs<V>(reference, i)),
                        delta, i);
    return {};
}

} // namespace keyblend
