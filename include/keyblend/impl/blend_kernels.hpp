// keyblend — the blending kernels (blend_job and make_additive, blend.hpp): the weighted layers,
// the rest pose under the threshold and the additive layers, a lane block of joints at a time.
// Internal; included by blend.impl.hpp, or by the compiled kernels (keyblend/kernels.hpp).
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_BLEND_KERNELS_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_BLEND_KERNELS_HPP)
#undef KEYBLEND_PASS_GUARD_BLEND_KERNELS_HPP
#else
#define KEYBLEND_PASS_GUARD_BLEND_KERNELS_HPP
#endif

#include "simd/quat.hpp"

#include <algorithm>

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {

/// V::width joints of a local_pose in registers.
template <class V>
struct trs_lanes {
    V t[3];
    quat_lanes<V> r;
    V s[3];
};

/// Where lanes [i, ...) of a pose's streams are: stream s at base + s * stride. Taken once, before
/// any store: a SIMD store may alias anything, so a pose's pointer and stride read after one would
/// be read again from memory. F is float or const float.
template <class F>
struct pose_lanes_at {
    F* base;
    std::size_t stride;
    F* operator[](local_pose::stream s) const { return base + static_cast<std::size_t>(s) * stride; }
};

template <class Pose>
KEYBLEND_FORCE_INLINE auto lanes_at(Pose& p, std::size_t i) {
    using F = std::remove_pointer_t<decltype(p.data(local_pose::translation_x))>;
    F* first = p.data(local_pose::translation_x);
    return pose_lanes_at<F>{first + i, static_cast<std::size_t>(p.data(local_pose::translation_y) - first)};
}

template <class V>
KEYBLEND_FORCE_INLINE trs_lanes<V> load_trs(pose_lanes_at<const float> at) {
    using S = local_pose;
    return {{V::load(at[S::translation_x]), V::load(at[S::translation_y]), V::load(at[S::translation_z])},
            {V::load(at[S::rotation_w]), V::load(at[S::rotation_x]), V::load(at[S::rotation_y]),
             V::load(at[S::rotation_z])},
            {V::load(at[S::scale_x]), V::load(at[S::scale_y]), V::load(at[S::scale_z])}};
}

template <class V>
KEYBLEND_FORCE_INLINE trs_lanes<V> load_trs(const local_pose& p, std::size_t i) {
    return load_trs<V>(lanes_at(p, i));
}

template <class V>
KEYBLEND_FORCE_INLINE void store_trs(const trs_lanes<V>& v, pose_lanes_at<float> at) {
    using S = local_pose;
    v.t[0].store(at[S::translation_x]);
    v.t[1].store(at[S::translation_y]);
    v.t[2].store(at[S::translation_z]);
    v.r.w.store(at[S::rotation_w]);
    v.r.x.store(at[S::rotation_x]);
    v.r.y.store(at[S::rotation_y]);
    v.r.z.store(at[S::rotation_z]);
    v.s[0].store(at[S::scale_x]);
    v.s[1].store(at[S::scale_y]);
    v.s[2].store(at[S::scale_z]);
}

template <class V>
KEYBLEND_FORCE_INLINE void store_trs(const trs_lanes<V>& v, local_pose& p, std::size_t i) {
    store_trs(v, lanes_at(p, i));
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
KEYBLEND_FORCE_INLINE V load_joint_weights(span<const float> weights, std::size_t i) {
    if (weights.empty()) return V::set1(1.0f);
    return V::load_first(weights.data() + i, weights.size() > i ? weights.size() - i : 0);
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

/// Adds layer `p` with weights `w` to the sums `acc`, its rotation on the hemisphere of the sum so
/// far (the short path).
template <class V>
KEYBLEND_FORCE_INLINE void add_layer(trs_lanes<V>& acc, const trs_lanes<V>& p, V w) {
    using lanes::fmadd;
    for (int c = 0; c < 3; ++c) {
        acc.t[c] = fmadd(p.t[c], w, acc.t[c]);
        acc.s[c] = fmadd(p.s[c], w, acc.s[c]);
    }
    const V wq = lanes::select(dot(acc.r, p.r) < V::set1(0.0f), -w, w);
    acc.r = {fmadd(p.r.w, wq, acc.r.w), fmadd(p.r.x, wq, acc.r.x), fmadd(p.r.y, wq, acc.r.y),
             fmadd(p.r.z, wq, acc.r.z)};
}

/// The additive layers on top of `out`, lanes [i, i + V::width).
template <class V>
void apply_additive_layers(const blend_job& job, std::size_t i, trs_lanes<V>& out) {
    using lanes::select;
    const V zero = V::set1(0.0f), one = V::set1(1.0f);
    for (std::size_t l = 0; l < job.additive_layers.size(); ++l) {
        const additive_layer& layer = job.additive_layers[l];
        if (layer.weight == 0.0f) continue;
        const V w = V::set1(layer.weight) * load_joint_weights<V>(layer.joint_weights, i);
        const trs_lanes<V> p = load_trs<V>(*layer.pose, i);
        const trs_lanes<V> d = layer.reference ? additive_difference(p, load_trs<V>(*layer.reference, i)) : p;
        // A negative weight applies the inverse of the |w| part of the difference.
        const typename V::mask subtract = w < zero;
        const V a = select(subtract, -w, w);
        trs_lanes<V> applied;
        for (int c = 0; c < 3; ++c) {
            applied.t[c] = out.t[c] + d.t[c] * w;
            const V part = one + (d.s[c] - one) * a;
            // (A zero partial scale cannot be divided out: the scale is left as it was.)
            applied.s[c] = select(subtract, select(part == zero, out.s[c], out.s[c] / part), out.s[c] * part);
        }
        const quat_lanes<V> part = nlerp(quat_lanes<V>::identity(), d.r, a);
        applied.r = multiply(out.r, select(subtract, conjugate(part), part));
        out = select(w == zero, out, applied);
    }
}

/// What a blend's weights are, found once per run: the first layer with a weight, and whether
/// any weighted layer has joint weights. Without them the total weight is the same for every
/// joint (the sum of the layers' weights in layer order, as the lanes would add it) and is
/// computed once, with its reciprocal and the rest pose's weight.
struct blend_setup {
    std::size_t first = 0;
    bool masked = false;
    float total = 0.0f, inv_total = 0.0f, rest_weight = 0.0f;
};

inline blend_setup setup_blend(const blend_job& job) {
    blend_setup b;
    while (b.first < job.layers.size() && job.layers[b.first].weight == 0.0f) ++b.first;
    for (std::size_t l = b.first; l < job.layers.size(); ++l) {
        const blend_layer& layer = job.layers[l];
        if (layer.weight == 0.0f) continue;
        b.masked |= !layer.joint_weights.empty();
        b.total = l == b.first ? layer.weight : b.total + layer.weight;
    }
    b.rest_weight = std::max(job.threshold - b.total, 0.0f);
    b.inv_total = 1.0f / (b.rest_weight > 0.0f ? b.total + b.rest_weight : b.total);
    return b;
}

/// Joints [i, i + V::width) of the blend, whose first layer of non-zero weight is b.first (<
/// layer_count): the weighted layers summed in registers, the rest pose where their total is
/// below the threshold, normalisation, the additive layers, written to the output. Every input of
/// these joints is read before the output is written (so the output may alias one).
template <class V, bool Additive>
KEYBLEND_FORCE_INLINE void blend_lanes(const blend_job& job, const blend_setup& b, std::size_t i) {
    const pose_lanes_at<float> out_at = lanes_at(*job.output, i);
    const std::size_t n = job.output->size();
    using lanes::fmadd;
    using lanes::max;
    using lanes::select;
    const V zero = V::set1(0.0f), one = V::set1(1.0f);
    // The first layer: added to zero sums (so a -0 becomes +0, as later layers' sums do), its
    // rotation taken as it is.
    trs_lanes<V> acc;
    V total;
    {
        const blend_layer& layer = job.layers[b.first];
        const V w = V::set1(layer.weight) * load_joint_weights<V>(layer.joint_weights, i);
        const trs_lanes<V> p = load_trs<V>(*layer.pose, i);
        for (int c = 0; c < 3; ++c) {
            acc.t[c] = fmadd(p.t[c], w, zero);
            acc.s[c] = fmadd(p.s[c], w, zero);
        }
        acc.r = {fmadd(p.r.w, w, zero), fmadd(p.r.x, w, zero), fmadd(p.r.y, w, zero), fmadd(p.r.z, w, zero)};
        total = w;
    }
    for (std::size_t l = b.first + 1; l < job.layers.size(); ++l) {
        const blend_layer& layer = job.layers[l];
        if (layer.weight == 0.0f) continue;
        const V w = V::set1(layer.weight) * load_joint_weights<V>(layer.joint_weights, i);
        add_layer(acc, load_trs<V>(*layer.pose, i), w);
        total = total + w;
    }
    trs_lanes<V> out;
    typename V::mask none{};
    V inv_total;
    if (b.masked) {
        none = total == zero;
        const V rest_weight = max(V::set1(job.threshold) - total, zero);
        // (Skipped when no lane needs it: adding rest * 0 would turn a -0 of the layers into +0.)
        if (lanes::bits(rest_weight > zero)) {
            add_layer(acc, load_trs<V>(*job.rest_pose, i), rest_weight);
            total = total + rest_weight;
        }
        inv_total = one / total;
    } else {
        // The same arithmetic on the same numbers, done once (the total is > 0: the first layer's
        // weight is).
        if (b.rest_weight > 0.0f) add_layer(acc, load_trs<V>(*job.rest_pose, i), V::set1(b.rest_weight));
        inv_total = V::set1(b.inv_total);
    }
    for (int c = 0; c < 3; ++c) {
        out.t[c] = acc.t[c] * inv_total;
        out.s[c] = acc.s[c] * inv_total;
    }
    out.r = normalize_or_identity(acc.r);
    // Where the total is 0 (every layer masked out), the rest pose bit for bit.
    if (b.masked && lanes::bits(none)) out = select(none, load_trs<V>(*job.rest_pose, i), out);
    if constexpr (Additive) apply_additive_layers(job, i, out);
    // The padding lanes stay the identity, whatever the arithmetic made of them.
    if (i + V::width > n) {
        const trs_lanes<V> identity{{zero, zero, zero}, quat_lanes<V>::identity(), {one, one, one}};
        out = select(lanes::lanes_below<V>(i, n), out, identity);
    }
    store_trs(out, out_at);
}

/// Joints [i, i + V::width) when no layer has a weight: the rest pose, then the additive layers.
template <class V>
void rest_lanes(const blend_job& job, std::size_t i) {
    trs_lanes<V> out = load_trs<V>(*job.rest_pose, i);
    if (job.additive_layers.size()) apply_additive_layers(job, i, out);
    store_trs(out, *job.output, i);
}

/// The blend over Wide lanes (the widest the compiler targets) with a Narrow tail; the scalar
/// reference is run_blend<lanes::f1>.
/// The morph weights of a blend (blend_job step 4): scalar, they are few.
inline void blend_morph_weights(const blend_job& job) {
    const local_pose& rest = *job.rest_pose;
    const span<const float> r = rest.morph_weights();
    const span<const std::uint32_t> joint = rest.morph_weight_joints();
    float* out = job.output->morph_weights().data();
    const auto joint_weight = [&](span<const float> weights, std::size_t i) {
        return weights.empty() || i >= joint.size() ? 1.0f : weights[joint[i]];
    };
    for (std::size_t i = 0; i < r.size(); ++i) {
        float total = 0.0f, sum = 0.0f;
        for (const blend_layer& layer : job.layers) {
            const float w = layer.weight * joint_weight(layer.joint_weights, i);
            if (w == 0.0f) continue;
            sum += w * layer.pose->morph_weights()[i];
            total += w;
        }
        float value = r[i];
        if (total != 0.0f) {
            if (total < job.threshold) {
                sum += (job.threshold - total) * r[i];
                total = job.threshold;
            }
            value = sum / total;
        }
        for (const additive_layer& layer : job.additive_layers) {
            const float a = layer.weight * joint_weight(layer.joint_weights, i);
            if (a == 0.0f) continue;
            const float d = layer.pose->morph_weights()[i] - (layer.reference ? layer.reference->morph_weights()[i] : 0.0f);
            value += d * a;
        }
        out[i] = value;
    }
}

template <class Wide, class Narrow = Wide>
status run_blend(const blend_job& job) {
    if (status st = check_job(job); !st) return st;
    job.output->resize(job.rest_pose->size());
    job.output->set_morph_layout(*job.rest_pose);
    if (!job.rest_pose->morph_weights().empty()) blend_morph_weights(job);
    const blend_setup b = setup_blend(job);
    const std::size_t padded = job.output->padded_size();
    if (b.first == job.layers.size()) {
        lanes::for_each_lanes<Wide, Narrow>(0, padded, [&](auto lane, std::size_t i) {
            rest_lanes<decltype(lane)>(job, i);
        });
        return {};
    }
    // (Two instantiations: the additive layers' call would otherwise keep every result in memory.)
    if (job.additive_layers.size())
        lanes::for_each_lanes<Wide, Narrow>(0, padded, [&](auto lane, std::size_t i) KEYBLEND_LAMBDA_INLINE {
            blend_lanes<decltype(lane), true>(job, b, i);
        });
    else
        lanes::for_each_lanes<Wide, Narrow>(0, padded, [&](auto lane, std::size_t i) KEYBLEND_LAMBDA_INLINE {
            blend_lanes<decltype(lane), false>(job, b, i);
        });
    return {};
}

/// blend_job::run.
inline status run_job(const blend_job& job) { return run_blend<lanes::widest, lanes::native>(job); }

/// make_additive.
inline status make_additive(const local_pose& pose, const local_pose& reference, local_pose& delta) {
    if (pose.size() != reference.size())
        return make_error(errc::size_mismatch,
                                "make_additive: pose has " + std::to_string(pose.size()) +
                                    " joints, reference " + std::to_string(reference.size()));
    using V = lanes::native;
    delta.resize(pose.size());
    for (std::size_t i = 0; i < pose.padded_size(); i += V::width)
        store_trs(additive_difference(load_trs<V>(pose, i), load_trs<V>(reference, i)),
                        delta, i);
    return {};
}

} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_BLEND_KERNELS_HPP
