// keyblend — definitions for motion.hpp. Included at the bottom of motion.hpp; do not include
// directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "gameplay_math.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace keyblend {

inline rigid_transform compose(const rigid_transform& a, const rigid_transform& b) {
    rigid_transform r;
    r.translation = a.translation + a.rotation * b.translation;
    r.rotation = normalize_or_identity(a.rotation * b.rotation);
    return r;
}

inline rigid_transform inverse(const rigid_transform& r) {
    rigid_transform out;
    out.rotation = glm::conjugate(r.rotation);
    out.translation = -(out.rotation * r.translation);
    return out;
}

inline glm::mat4 to_matrix(const rigid_transform& r) {
    glm::mat4 m = glm::mat4_cast(r.rotation);
    m[3] = glm::vec4(r.translation, 1.0f);
    return m;
}

namespace impl {

/// motion_cursor's state, read and written by the functions below only.
struct motion_access {
    static rigid_transform sample(const clip& c, float time, motion_cursor& cur) {
        rigid_transform r;
        if (!c.motion.translation.empty()) r.translation = sample_track(c.motion.translation, time, cur.translation_);
        if (!c.motion.rotation.empty()) r.rotation = sample_track(c.motion.rotation, time, cur.rotation_);
        return r;
    }
    /// The placement at `time`, reusing the last one when the time is the same.
    static rigid_transform at(const clip& c, float time, motion_cursor& cur) {
        if (cur.has_last_ && cur.last_time_ == time) return cur.last_;
        cur.last_ = sample(c, time, cur);
        cur.last_time_ = time;
        cur.has_last_ = true;
        return cur.last_;
    }
    static void bind(const clip& c, float period, motion_cursor& cur) {
        if (cur.clip_ == &c) return;
        cur.clip_ = &c;
        cur.translation_.reset();
        cur.rotation_.reset();
        cur.has_last_ = false;
        cur.start_ = sample(c, 0.0f, cur);
        cur.end_ = sample(c, period, cur);
        cur.loop_ = compose(cur.end_, inverse(cur.start_));
    }
    static const rigid_transform& loop(const motion_cursor& cur) { return cur.loop_; }
};

/// r^n for a whole number n (negative: the inverse's power), by squaring.
inline rigid_transform power(rigid_transform r, double n) {
    if (n < 0.0) {
        r = inverse(r);
        n = -n;
    }
    // (Beyond 2^62 periods the travel has long left float range; stop counting there.)
    std::uint64_t k = static_cast<std::uint64_t>(std::min(n, 4.6e18));
    rigid_transform out;
    bool first = true;
    while (k) {
        if (k & 1u) {
            out = first ? r : compose(out, r);
            first = false;
        }
        k >>= 1u;
        if (k) r = compose(r, r);
    }
    return out;
}

/// A playback time split into a period count and a time within the period [0, period).
inline void split_time(double t, double period, double& k, double& r) {
    k = std::floor(t / period);
    r = t - k * period;
    if (r >= period) { // rounding
        r -= period;
        k += 1.0;
    }
    if (r < 0.0) r = 0.0;
}

} // namespace impl

inline rigid_transform sample_motion(const clip& c, float time) {
    motion_cursor cursor;
    return impl::motion_access::sample(c, time, cursor);
}

inline rigid_transform motion_between(const clip& c, double from, double to, motion_cursor& cursor) {
    if (!is_finite(from) || !is_finite(to) || from == to || c.motion.empty()) return rigid_transform{};
    const double duration = static_cast<double>(c.duration);
    const bool valid_length = is_finite(duration) && duration > 0.0;
    const bool periodic = valid_length && c.wrap != wrap_mode::clamp;
    const double period = c.wrap == wrap_mode::loop_inclusive ? duration + 1.0 : duration;
    impl::motion_access::bind(c, periodic ? static_cast<float>(period) : 0.0f, cursor);
    if (!periodic) {
        const double end = valid_length ? duration : 0.0;
        const float r0 = static_cast<float>(std::min(std::max(from, 0.0), end));
        const float r1 = static_cast<float>(std::min(std::max(to, 0.0), end));
        if (r0 == r1) return rigid_transform{};
        const rigid_transform a = impl::motion_access::at(c, r0, cursor);
        return compose(inverse(a), impl::motion_access::at(c, r1, cursor));
    }
    double k0, r0, k1, r1;
    impl::split_time(from, period, k0, r0);
    impl::split_time(to, period, k1, r1);
    // The placement at (k, r) is loop^k * inverse(start) * motion(r) (loop = end * inverse(start));
    // so from (k0, r0) to (k1, r1): inverse(motion(r0)) * loop^(k1 - k0) * motion(r1), sampling the
    // first placement before the second so that the cursor keeps the later one for the next call.
    const rigid_transform a = impl::motion_access::at(c, static_cast<float>(r0), cursor);
    const rigid_transform b = impl::motion_access::at(c, static_cast<float>(r1), cursor);
    if (k0 == k1) return compose(inverse(a), b);
    return compose(compose(inverse(a), impl::power(impl::motion_access::loop(cursor), k1 - k0)), b);
}

inline rigid_transform motion_between(const clip& c, double from, double to) {
    motion_cursor cursor;
    return motion_between(c, from, to, cursor);
}

inline status blend_motion(const rigid_transform* motions, const float* weights, std::size_t count,
                           rigid_transform& out) {
    if (count && (!motions || !weights))
        return impl::make_error(errc::invalid_argument, "blend_motion: an array is null but the count is not 0");
    std::size_t nonzero = 0, last = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (!is_finite(weights[i]))
            return impl::make_error(errc::non_finite, "blend_motion: weight " + std::to_string(i) + " is NaN or infinite", i);
        if (weights[i] < 0.0f)
            return impl::make_error(errc::invalid_argument,
                                    "blend_motion: weight " + std::to_string(i) + " is negative (" +
                                        impl::float_to_string(weights[i]) + ")",
                                    i);
        if (weights[i] > 0.0f) {
            ++nonzero;
            last = i;
        }
    }
    if (nonzero <= 1) {
        out = nonzero ? motions[last] : rigid_transform{};
        return {};
    }
    glm::vec3 t(0.0f);
    glm::quat q = make_quat(0.0f, 0.0f, 0.0f, 0.0f);
    float total = 0.0f;
    for (std::size_t i = 0; i < count; ++i) {
        const float w = weights[i];
        if (w == 0.0f) continue;
        t += motions[i].translation * w;
        const glm::quat& r = motions[i].rotation;
        const float wq = quat_dot(q, r) < 0.0f ? -w : w;
        q = make_quat(q.w + r.w * wq, q.x + r.x * wq, q.y + r.y * wq, q.z + r.z * wq);
        total += w;
    }
    out.translation = t / total;
    out.rotation = normalize_or_identity(q);
    return {};
}

namespace impl {

/// The label of extract_root_motion's errors.
inline std::string motion_label(const clip& c) { return "extract_root_motion: clip '" + c.name + "'"; }

/// Every key time of the clip's joint channels, sorted, each once.
inline std::vector<float> clip_key_times(const clip& c) {
    std::vector<float> times;
    for (const channel& ch : c.channels)
        for_each_track(ch, [&](const auto& tr) { times.insert(times.end(), tr.times().begin(), tr.times().end()); });
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    return times;
}

/// A matrix channel's keys as translation, rotation and scale keys at the same times.
inline void split_matrix_channel(channel& ch) {
    const interpolation mode = ch.matrix.mode() == interpolation::step ? interpolation::step : interpolation::linear;
    ch.translation = position_track<float>(mode);
    ch.rotation = rotation_track<float>(mode);
    ch.scale = scale_track<float>(mode);
    glm::quat previous = glm::identity<glm::quat>();
    for (std::size_t i = 0; i < ch.matrix.size(); ++i) {
        const transform t = to_transform(ch.matrix.value(i));
        previous = same_hemisphere(t.rotation, previous);
        ch.translation.push_back(ch.matrix.time(i), t.translation);
        ch.rotation.push_back(ch.matrix.time(i), previous);
        ch.scale.push_back(ch.matrix.time(i), t.scale);
    }
    ch.matrix.clear();
}

} // namespace impl

inline status extract_root_motion(clip& c, const skeleton& s, const root_motion_options& o) {
    if (status st = validate_clip(c, s); !st) return st;
    const std::string label = impl::motion_label(c);
    if (o.joint >= s.size())
        return impl::make_error(errc::out_of_range, label + ": root joint " + std::to_string(o.joint) +
                                                        " is out of range (" + std::to_string(s.size()) + " joints)");
    if (!is_finite(o.up)) return impl::make_error(errc::non_finite, label + ": the up vector is not finite");
    if (!(glm::dot(o.up, o.up) > 0.0f))
        return impl::make_error(errc::invalid_argument, label + ": the up vector is zero");
    if (!c.motion.empty())
        return impl::make_error(errc::invalid_argument, label + ": the clip already has root motion");
    const std::size_t root = o.joint;
    for (std::size_t i = 0; i < c.channels.size(); ++i) {
        const channel& ch = c.channels[i];
        if (ch.joint != root && s.is_in_subtree(root, ch.joint) && (ch.has_trs() || ch.has_matrix()))
            return impl::make_error(errc::unsupported,
                                    label + ": joint " + std::to_string(ch.joint) + " '" + s.name(ch.joint) +
                                        "', an ancestor of the root joint '" + s.name(root) +
                                        "', is animated (choose the topmost animated joint as the root)",
                                    i);
    }
    // The parent's bind model matrix, which must be a similarity for the motion to be rigid in
    // model space.
    const joint_index parent = s.parent(root);
    const glm::mat4 p = parent == no_parent ? glm::mat4(1.0f) : s.bind_model()[static_cast<std::size_t>(parent)];
    const glm::mat3 a(p);
    {
        const float l0 = glm::length(a[0]), l1 = glm::length(a[1]), l2 = glm::length(a[2]);
        const float lmax = std::max(l0, std::max(l1, l2)), tol = 1e-4f * lmax;
        if (!(lmax > 0.0f) || std::fabs(l0 - lmax) > tol || std::fabs(l1 - lmax) > tol || std::fabs(l2 - lmax) > tol ||
            std::fabs(glm::dot(a[0], a[1])) > tol * lmax || std::fabs(glm::dot(a[0], a[2])) > tol * lmax ||
            std::fabs(glm::dot(a[1], a[2])) > tol * lmax)
            return impl::make_error(errc::unsupported, label + ": the bind pose above the root joint '" + s.name(root) +
                                                           "' has non-uniform scale or shear");
    }
    std::size_t index = c.channels.size();
    for (std::size_t i = 0; i < c.channels.size(); ++i)
        if (c.channels[i].joint == root) index = i;
    if (index == c.channels.size()) return {};
    channel ch = c.channels[index];
    if (ch.has_matrix()) impl::split_matrix_channel(ch);
    if (ch.translation.empty() && ch.rotation.empty()) return {};

    const transform& bind = s.bind_transforms()[root];
    const auto root_at = [&](float t) {
        transform r = bind;
        if (!ch.translation.empty()) r.translation = sample_track(ch.translation, t);
        if (!ch.rotation.empty()) r.rotation = normalize_or_identity(sample_track(ch.rotation, t));
        return r;
    };
    const transform ref = o.reference == motion_reference::bind_pose ? bind : root_at(0.0f);
    const glm::mat3 a_inverse = glm::inverse(a);
    const glm::vec3 up = glm::normalize(a_inverse * o.up); // in the parent's space
    const auto horizontal = [&](const glm::vec3& v) { return v - glm::dot(v, up) * up; };
    const glm::vec3 origin(p[3]);

    position_track<float> in_t(ch.translation.empty() ? interpolation::linear : ch.translation.mode());
    rotation_track<float> in_r(ch.rotation.empty() ? interpolation::linear : ch.rotation.mode());
    motion_track motion;
    glm::quat last_in = glm::identity<glm::quat>(), last_motion = glm::identity<glm::quat>();
    for (float t : impl::clip_key_times(c)) {
        const transform now = root_at(t);
        // The motion in the parent's space: rotation m, translation d.
        glm::quat m = glm::identity<glm::quat>();
        const glm::quat relative = normalize_or_identity(now.rotation * glm::conjugate(ref.rotation));
        if (o.rotation == motion_rotation::all) m = relative;
        if (o.rotation == motion_rotation::yaw) m = impl::twist_about(relative, up);
        glm::vec3 d(0.0f);
        const glm::vec3 travel = now.translation - m * ref.translation;
        if (o.translation == motion_translation::all) d = travel;
        if (o.translation == motion_translation::horizontal) d = horizontal(travel);
        const glm::quat back = glm::conjugate(m);
        last_in = impl::same_hemisphere(normalize_or_identity(back * now.rotation), last_in);
        in_t.push_back(t, back * (now.translation - d));
        in_r.push_back(t, last_in);
        // The same motion in model space: p * (m, d) * inverse(p).
        const glm::quat model_m = impl::same_hemisphere(normalize_or_identity(impl::conjugate_by(m, a)), last_motion);
        last_motion = model_m;
        motion.translation.push_back(t, a * d + origin - model_m * origin);
        motion.rotation.push_back(t, model_m);
    }
    ch.translation = std::move(in_t);
    ch.rotation = std::move(in_r);
    c.channels[index] = std::move(ch);
    c.motion = std::move(motion);
    return {};
}

} // namespace keyblend
