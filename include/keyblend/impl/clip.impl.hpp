// keyblend — definitions for clip.hpp. Included at the bottom of clip.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace keyblend {
namespace impl {

template <class F>
void for_each_track(const channel& ch, F&& f) {
    f(ch.rotation);
    f(ch.translation);
    f(ch.scale);
    f(ch.matrix);
    for (const float_track<float>& w : ch.morph_weights) f(w);
}

inline std::string clip_label(const clip& c) { return "clip '" + c.name + "'"; }

/// validate_clip's checks of the user channels, events and motion (impl/clip_channels.impl.hpp).
inline status validate_clip_extras(const clip& c);

inline std::string channel_label(const clip& c, std::size_t index, const skeleton& s) {
    const std::size_t j = c.channels[index].joint;
    std::string out = clip_label(c) + " channel " + std::to_string(index) + " (joint " +
                      std::to_string(j);
    if (j < s.size()) out += " '" + s.name(j) + "'";
    return out + ")";
}

} // namespace impl

inline float last_key_time(const clip& c) {
    bool any = false;
    float t = 0.0f;
    for (const channel& ch : c.channels)
        impl::for_each_track(ch, [&](const auto& tr) {
            if (tr.empty()) return;
            t = any ? std::max(t, tr.last_time()) : tr.last_time();
            any = true;
        });
    return t;
}

inline float first_key_time(const clip& c) {
    bool any = false;
    float t = 0.0f;
    for (const channel& ch : c.channels)
        impl::for_each_track(ch, [&](const auto& tr) {
            if (tr.empty()) return;
            t = any ? std::min(t, tr.first_time()) : tr.first_time();
            any = true;
        });
    return t;
}

inline float clip_time(const clip& c, double ticks) {
    return static_cast<float>(wrap_time(ticks, static_cast<double>(c.duration), c.wrap));
}

inline status validate_clip(const clip& c, const skeleton& s) {
    if (!is_finite(c.duration))
        return impl::make_error(errc::non_finite, impl::clip_label(c) + ": duration is not finite");
    if (c.duration < 0.0f)
        return impl::make_error(errc::invalid_argument, impl::clip_label(c) + ": duration " +
                                                            impl::float_to_string(c.duration) +
                                                            " is negative");
    if (!is_finite(c.ticks_per_second))
        return impl::make_error(errc::non_finite,
                                impl::clip_label(c) + ": ticks per second is not finite");
    if (!(c.ticks_per_second > 0.0f))
        return impl::make_error(errc::invalid_argument,
                                impl::clip_label(c) + ": ticks per second " +
                                    impl::float_to_string(c.ticks_per_second) + " is not positive");
    std::vector<std::size_t> channel_of_joint(s.size(), error::no_index);
    for (std::size_t i = 0; i < c.channels.size(); ++i) {
        const channel& ch = c.channels[i];
        if (ch.joint >= s.size())
            return impl::make_error(errc::out_of_range,
                                    impl::channel_label(c, i, s) + ": joint is out of range (" +
                                        std::to_string(s.size()) + " joints)",
                                    i);
        if (channel_of_joint[ch.joint] != error::no_index)
            return impl::make_error(errc::duplicate,
                                    impl::channel_label(c, i, s) + ": joint already animated by channel " +
                                        std::to_string(channel_of_joint[ch.joint]),
                                    i);
        channel_of_joint[ch.joint] = i;
        if (ch.has_matrix() && ch.has_trs())
            return impl::make_error(errc::invalid_argument,
                                    impl::channel_label(c, i, s) +
                                        ": has both a matrix track and rotation/translation/scale tracks",
                                    i);
        if (!ch.morph_weights.empty() && ch.morph_weights.size() != s.morph_weight_count(ch.joint))
            return impl::make_error(errc::size_mismatch,
                                    impl::channel_label(c, i, s) + ": " + std::to_string(ch.morph_weights.size()) +
                                        " morph weight tracks, but the joint has " +
                                        std::to_string(s.morph_weight_count(ch.joint)) + " morph weights",
                                    i);
        const char* names[] = {"rotation", "translation", "scale", "matrix"};
        std::size_t which = 0;
        status bad;
        impl::for_each_track(ch, [&](const auto& tr) {
            const std::size_t index = which++;
            if (!bad || tr.empty()) return;
            const std::string kind = index < 4 ? std::string(names[index]) : "morph weight " + std::to_string(index - 4);
            if (status st = validate_track(tr); !st)
                bad = impl::make_error(st.error().code, impl::channel_label(c, i, s) + ": " + kind +
                                                            " " + st.error().message,
                                       i);
        });
        if (!bad) return bad;
    }
    return impl::validate_clip_extras(c);
}

inline glm::mat4 sample_channel_matrix(const channel& ch, float time, const transform& bind,
                                       const glm::mat4& bind_local) {
    if (ch.has_matrix()) return sample_track(ch.matrix, time);
    if (!ch.has_trs()) return bind_local;
    transform t = bind;
    if (!ch.translation.empty()) t.translation = sample_track(ch.translation, time);
    if (!ch.rotation.empty()) t.rotation = sample_track(ch.rotation, time);
    if (!ch.scale.empty()) t.scale = sample_track(ch.scale, time);
    return to_matrix(t);
}

inline status sample_local_matrices(const clip& c, const skeleton& s, float time, span<glm::mat4> local) {
    if (local.size() < s.size())
        return impl::make_error(errc::size_mismatch, "sample_local_matrices: room for " +
                                                         std::to_string(local.size()) + " local matrices, the skeleton has " +
                                                         std::to_string(s.size()) + " joints");
    for (std::size_t j = 0; j < s.size(); ++j) local[j] = s.bind_local()[j];
    status out;
    for (std::size_t i = 0; i < c.channels.size(); ++i) {
        const channel& ch = c.channels[i];
        if (ch.joint >= s.size()) {
            if (out)
                out = impl::make_error(errc::out_of_range,
                                       impl::channel_label(c, i, s) + ": joint is out of range (" +
                                           std::to_string(s.size()) + " joints); channel skipped",
                                       i);
            continue;
        }
        local[ch.joint] =
            sample_channel_matrix(ch, time, s.bind_transforms()[ch.joint], s.bind_local()[ch.joint]);
    }
    return out;
}

} // namespace keyblend
