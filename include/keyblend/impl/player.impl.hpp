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
    p.motion_cursors_.resize(clips.size());
    p.current_ = clips.size();
    // One value per distinct channel name; each set maps its channels to those.
    const auto slots = [](const auto& channels, std::vector<std::string>& names, std::vector<std::size_t>& out) {
        for (const auto& ch : channels) {
            const std::size_t found = std::size_t(std::find(names.begin(), names.end(), ch.name) - names.begin());
            if (found == names.size()) names.push_back(ch.name);
            out.push_back(found);
        }
    };
    p.float_slots_.resize(clips.size());
    p.vector_slots_.resize(clips.size());
    for (std::size_t i = 0; i < clips.size(); ++i) {
        slots(clips[i].float_channels, p.float_names_, p.float_slots_[i]);
        slots(clips[i].vector_channels, p.vector_names_, p.vector_slots_[i]);
    }
    p.float_values_.assign(p.float_names_.size(), 0.0f);
    p.float_weights_.assign(p.float_names_.size(), 0.0f);
    p.vector_values_.assign(p.vector_names_.size(), glm::vec3(0.0f));
    p.vector_weights_.assign(p.vector_names_.size(), 0.0f);
    reset_to_bind(s, p.rest_);
    p.pose_ = p.rest_;
    p.target_pose_ = p.rest_;
    p.local_.resize(s.size());
    p.model_.resize(s.size());
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

inline void player::reset() { (void)reset_to_bind(*skeleton_, local_); }

inline status player::blend(const char* name, double time, wrap_mode wrap, float weight) {
    const result<std::size_t> set = find(name);
    if (!set) return set.error();
    if (!is_finite(time))
        return impl::make_error(errc::non_finite, "player::blend: time is NaN or infinite");
    const clip& c = (*clips_)[*set];
    const double t = wrap_time(time, double(c.duration), wrap);
    return blend_matrix_additive(c, *skeleton_, static_cast<float>(t), weight, local_);
}

inline void player::update_hierarchy(const glm::mat4& root) {
    local_to_model_job job;
    job.skeleton = skeleton_;
    job.input_matrices = local_;
    job.root = &root;
    job.output = model_;
    (void)job.run(); // (sized at creation: cannot fail)
}

inline status player::set_animation(const char* name, double start_time) {
    const result<std::size_t> set = find(name);
    if (!set) return set.error();
    if (!is_finite(start_time))
        return impl::make_error(errc::non_finite, "player::set_animation: start time is NaN or infinite");
    current_ = *set;
    start_ = start_time;
    current_step_ = step_state{};
    target_ = no_set_;
    return {};
}

inline void player::reset_animation(double start_time) {
    if (!is_finite(start_time)) return;
    start_ = start_time;
    current_step_ = step_state{};
    if (target_ != no_set_) {
        target_start_ = start_time;
        target_step_ = step_state{};
    }
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
    target_step_ = step_state{};
    fade_duration_ = duration;
    return {};
}

inline status player::sample_set(std::size_t set, double time, local_pose& out) {
    const clip& c = (*clips_)[set];
    sampling_job job;
    job.clip = &c;
    job.skeleton = skeleton_;
    job.time = clip_time(c, time);
    job.context = &contexts_[set];
    job.output = &out;
    return job.run();
}

inline void player::step_set(std::size_t set, double start, double local, float weight, step_state& state,
                             rigid_transform& motion, std::vector<played_event>& events) {
    const clip& c = (*clips_)[set];
    const double from = state.fresh ? 0.0 : state.last;
    const event_range range = state.fresh ? event_range::include_from : event_range::exclude_from;
    motion = motion_between(c, from, local, motion_cursors_[set]);
    if (!c.events.empty()) {
        if (passed_.size() < passed_.capacity() || passed_.empty()) passed_.resize(std::max<std::size_t>(passed_.capacity(), 16));
        std::size_t total = passed_events(c, from, local, range, passed_.data(), passed_.size());
        if (total > passed_.size() && passed_.size() < event_limit_) {
            passed_.resize(std::min(total, event_limit_));
            total = passed_events(c, from, local, range, passed_.data(), passed_.size());
        }
        const std::size_t n = std::min({total, passed_.size(), event_limit_});
        events_dropped_ += total - n;
        for (std::size_t i = 0; i < n; ++i) {
            const passed_event& e = passed_[i];
            events.push_back({set, e.event, c.events[e.event].name, start + e.time, weight});
        }
    }
    state.last = local;
    state.fresh = false;
}

inline void player::sample_channels(const std::size_t* sets, const double* local, const float* weights,
                                    std::size_t count) {
    std::fill(float_values_.begin(), float_values_.end(), 0.0f);
    std::fill(float_weights_.begin(), float_weights_.end(), 0.0f);
    std::fill(vector_values_.begin(), vector_values_.end(), glm::vec3(0.0f));
    std::fill(vector_weights_.begin(), vector_weights_.end(), 0.0f);
    for (std::size_t k = 0; k < count; ++k) {
        const float w = weights[k];
        if (!(w > 0.0f)) continue;
        const clip& c = (*clips_)[sets[k]];
        const float t = clip_time(c, local[k]);
        sample_user_channels(c.float_channels, t, float_scratch_);
        for (std::size_t i = 0; i < float_scratch_.size(); ++i) {
            const std::size_t slot = float_slots_[sets[k]][i];
            float_values_[slot] += float_scratch_[i] * w;
            float_weights_[slot] += w;
        }
        sample_user_channels(c.vector_channels, t, vector_scratch_);
        for (std::size_t i = 0; i < vector_scratch_.size(); ++i) {
            const std::size_t slot = vector_slots_[sets[k]][i];
            vector_values_[slot] += vector_scratch_[i] * w;
            vector_weights_[slot] += w;
        }
    }
    // (Weights summing to one, a set playing alone above all, need no division: its value exactly.)
    for (std::size_t i = 0; i < float_values_.size(); ++i)
        if (float_weights_[i] > 0.0f && float_weights_[i] != 1.0f) float_values_[i] /= float_weights_[i];
    for (std::size_t i = 0; i < vector_values_.size(); ++i)
        if (vector_weights_[i] > 0.0f && vector_weights_[i] != 1.0f) vector_values_[i] /= vector_weights_[i];
}

inline status player::update_animation(double time, const glm::mat4& root) {
    if (!is_finite(time))
        return impl::make_error(errc::non_finite, "player::update_animation: time is NaN or infinite");
    root_motion_ = rigid_transform{};
    events_.clear();
    events_dropped_ = 0;
    for (std::vector<played_event>& list : set_events_) list.clear();
    // The sets that step in this update: a set whose fade-out ends now (up to the fade's end, at
    // weight 0), the current set, the fade's target.
    std::size_t sets[3];
    double starts[3], locals[3];
    float weights[3];
    step_state* steps[3];
    step_state ending_step;
    std::size_t count = 0, lists[3];
    if (target_ != no_set_ && time - target_start_ >= fade_duration_) {
        // The fade is over: the target is the current set.
        if (current_ < clips_->size()) {
            ending_step = current_step_;
            sets[count] = current_;
            starts[count] = start_;
            locals[count] = target_start_ + fade_duration_ - start_;
            weights[count] = 0.0f;
            steps[count] = &ending_step;
            lists[count++] = 0;
        }
        current_ = target_;
        start_ = target_start_;
        current_step_ = target_step_;
        target_ = no_set_;
    }
    status st;
    if (current_ >= clips_->size()) {
        pose_ = rest_;
    } else {
        st = sample_set(current_, time - start_, pose_);
        float f = 0.0f;
        if (st && target_ != no_set_) {
            st = sample_set(target_, time - target_start_, target_pose_);
            f = static_cast<float>(std::clamp((time - target_start_) / fade_duration_, 0.0, 1.0));
            const blend_layer layers[] = {{&pose_, 1.0f - f}, {&target_pose_, f}};
            blend_job job;
            job.rest_pose = &rest_;
            job.layers = layers;
            job.threshold = 0.0f;
            job.output = &pose_;
            if (st) st = job.run();
        }
        sets[count] = current_;
        starts[count] = start_;
        locals[count] = time - start_;
        weights[count] = 1.0f - f;
        steps[count] = &current_step_;
        lists[count++] = 1;
        // A fade's target enters its timeline when it starts to count: until an update gives it a
        // weight (its start time may still be ahead), it stays at its start.
        if (target_ != no_set_ && (f > 0.0f || !target_step_.fresh)) {
            sets[count] = target_;
            starts[count] = target_start_;
            locals[count] = time - target_start_;
            weights[count] = f;
            steps[count] = &target_step_;
            lists[count++] = 2;
        }
    }
    // Root motion and events: each set's step, then the blend and the merge in the clock's order.
    const bool forward = !has_time_ || time >= last_time_;
    rigid_transform motions[3];
    for (std::size_t k = 0; k < count; ++k) {
        std::vector<played_event>& list = set_events_[lists[k]];
        const double from = steps[k]->fresh ? 0.0 : steps[k]->last;
        step_set(sets[k], starts[k], locals[k], weights[k], *steps[k], motions[k], list);
        // (A set whose step runs against the clock, one started in the future say: its list
        // reversed, so that every list is in the clock's order for the merge.)
        if ((locals[k] >= from) != forward) std::reverse(list.begin(), list.end());
    }
    static_cast<void>(blend_motion(motions, weights, count, root_motion_)); // weights are in [0, 1]
    const auto earlier = [forward](const played_event& a, const played_event& b) {
        return forward ? a.time < b.time : a.time > b.time;
    };
    merged_.resize(set_events_[0].size() + set_events_[1].size());
    std::merge(set_events_[0].begin(), set_events_[0].end(), set_events_[1].begin(), set_events_[1].end(),
               merged_.begin(), earlier);
    events_.resize(merged_.size() + set_events_[2].size());
    std::merge(merged_.begin(), merged_.end(), set_events_[2].begin(), set_events_[2].end(), events_.begin(), earlier);
    if (events_.size() > event_limit_) {
        events_dropped_ += events_.size() - event_limit_;
        events_.resize(event_limit_);
    }
    sample_channels(sets, locals, weights, count);
    has_time_ = true;
    last_time_ = time;
    (void)to_local_matrices(pose_, local_);
    local_to_model_job job;
    job.skeleton = skeleton_;
    job.input = &pose_;
    job.root = &root;
    job.output = model_;
    (void)job.run(); // (sized at creation: cannot fail)
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
