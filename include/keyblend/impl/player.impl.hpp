// keyblend — definitions for player.hpp. Included at the bottom of player.hpp; do not include
// directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

namespace keyblend {

inline bool equal_ignore_case(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; };
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

inline result<player> player::create(const keyblend::skeleton& s, const std::vector<clip>& clips) {
    for (std::size_t i = 0; i < clips.size(); ++i)
        if (status st = validate_clip(clips[i], s); !st)
            return impl::make_error(st.error().code,
                                    "player: set " + std::to_string(i) + ": " + st.error().message, i);
    player p;
    p.skeleton_ = &s;
    p.clips_ = &clips;
    p.contexts_.resize(clips.size());
    p.current_ = clips.size();
    reset_to_bind(s, p.rest_);
    p.pose_.resize(s.size());
    p.target_pose_.resize(s.size());
    p.reset();
    p.update_hierarchy();
    return p;
}

inline result<std::size_t> player::find(const char* name) const {
    const std::vector<clip>& sets = *clips_;
    if (sets.empty()) return impl::make_error(errc::empty, "player: there are no animation sets");
    if (!name) return std::size_t{0};
    const std::string_view wanted(name);
    for (std::size_t i = 0; i < sets.size(); ++i)
        if (sets[i].name == wanted) return i;
    for (std::size_t i = 0; i < sets.size(); ++i)
        if (equal_ignore_case(sets[i].name, wanted)) return i;
    std::string known;
    for (const clip& c : sets) known += (known.empty() ? "'" : ", '") + c.name + "'";
    return impl::make_error(errc::not_found,
                            "player: no animation set named '" + std::string(wanted) + "' (sets: " + known + ")");
}

inline void player::reset() { reset_to_bind(*skeleton_, local_); }

inline status player::blend(const char* name, double time, bool loop, float weight) {
    const result<std::size_t> set = find(name);
    if (!set) return set.error();
    if (!is_finite(time))
        return impl::make_error(errc::non_finite, "player::blend: time is NaN or infinite");
    const clip& c = (*clips_)[*set];
    const double t = wrap_time(time, double(c.duration), loop ? wrap_mode::loop_inclusive : wrap_mode::clamp);
    return blend_matrix_additive(c, *skeleton_, static_cast<float>(t), weight, local_);
}

inline void player::update_hierarchy(const glm::mat4& root) { local_to_model(*skeleton_, local_, model_, root); }

inline status player::set_animation(const char* name, double start_time) {
    const result<std::size_t> set = find(name);
    if (!set) return set.error();
    if (!is_finite(start_time))
        return impl::make_error(errc::non_finite, "player::set_animation: start time is NaN or infinite");
    current_ = *set;
    start_ = start_time;
    target_ = no_set_;
    return {};
}

inline void player::reset_animation(double start_time) {
    if (!is_finite(start_time)) return;
    start_ = start_time;
    if (target_ != no_set_) target_start_ = start_time;
}

inline status player::fade_to(const char* name, double time, double duration) {
    if (!is_finite(duration))
        return impl::make_error(errc::non_finite, "player::fade_to: duration is NaN or infinite");
    if (current_ >= clips_->size() || duration <= 0.0) return set_animation(name, time);
    const result<std::size_t> set = find(name);
    if (!set) return set.error();
    if (!is_finite(time))
        return impl::make_error(errc::non_finite, "player::fade_to: time is NaN or infinite");
    target_ = *set;
    target_start_ = time;
    fade_duration_ = duration;
    return {};
}

inline status player::sample_set(std::size_t set, double time, local_pose& out) {
    const clip& c = (*clips_)[set];
    return sample_clip(c, *skeleton_, clip_time(c, time), contexts_[set], out);
}

inline status player::update_animation(double time, const glm::mat4& root) {
    if (!is_finite(time))
        return impl::make_error(errc::non_finite, "player::update_animation: time is NaN or infinite");
    if (target_ != no_set_ && time - target_start_ >= fade_duration_) {
        // The fade is over: the target is the current set.
        current_ = target_;
        start_ = target_start_;
        target_ = no_set_;
    }
    status st;
    if (current_ >= clips_->size()) {
        pose_ = rest_;
    } else {
        st = sample_set(current_, time - start_, pose_);
        if (st && target_ != no_set_) {
            st = sample_set(target_, time - target_start_, target_pose_);
            const float f = static_cast<float>(std::clamp((time - target_start_) / fade_duration_, 0.0, 1.0));
            const blend_layer layers[] = {{&pose_, 1.0f - f}, {&target_pose_, f}};
            blend_job job;
            job.rest_pose = &rest_;
            job.layers = layers;
            job.layer_count = 2;
            job.threshold = 0.0f;
            job.output = &pose_;
            if (st) st = job.run();
        }
    }
    to_local_matrices(pose_, local_);
    local_to_model(*skeleton_, pose_, model_, root);
    return st;
}

inline bool player::is_complete(double time) const noexcept {
    const std::size_t set = target_ != no_set_ ? target_ : current_;
    if (set >= clips_->size()) return true;
    const double start = target_ != no_set_ ? target_start_ : start_;
    return time - start >= double((*clips_)[set].duration);
}

inline glm::mat4 player::attachment(std::size_t joint, const glm::mat4& object_local,
                                    const glm::mat4& owner_world) const {
    KEYBLEND_ASSERT(joint < model_.size(), "player::attachment: joint out of range");
    if (joint >= model_.size()) return owner_world * object_local;
    return owner_world * model_[joint] * object_local;
}

inline result<glm::mat4> player::attachment(const char* joint_name, const glm::mat4& object_local,
                                            const glm::mat4& owner_world) const {
    if (!joint_name) {
        if (skeleton_->empty())
            return impl::make_error(errc::not_found, "player::attachment: the skeleton has no joints");
        return attachment(std::size_t{0}, object_local, owner_world);
    }
    const result<std::size_t> j = skeleton_->find(joint_name);
    if (!j) return j.error();
    return attachment(*j, object_local, owner_world);
}

inline joint_bounds player::bounds() const noexcept {
    joint_bounds b;
    if (model_.empty()) return b;
    b.min = b.max = glm::vec3(model_[0][3]);
    float r2 = 0.0f;
    for (const glm::mat4& m : model_) {
        const glm::vec3 p(m[3]);
        b.min = glm::min(b.min, p);
        b.max = glm::max(b.max, p);
        r2 = std::max(r2, glm::dot(p, p));
    }
    b.radius = std::sqrt(r2);
    return b;
}

} // namespace keyblend
