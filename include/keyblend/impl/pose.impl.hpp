// keyblend — definitions for pose.hpp. Included at the bottom of pose.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "palette_checks.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace keyblend {

// ---------------------------------------------------------------------------------------------
// local_pose
// ---------------------------------------------------------------------------------------------

inline local_pose::local_pose(const skeleton& s) { reset_to_bind(s, *this); }

inline local_pose::local_pose(const local_pose& other) { *this = other; }

inline local_pose& local_pose::operator=(const local_pose& other) {
    if (this == &other) return *this;
    if (other.padded_ > capacity_) {
        data_.reset();
        capacity_ = 0;
    }
    if (!data_ && other.padded_ > 0) {
        capacity_ = impl::aligned_stream_length(other.padded_);
        data_ = impl::allocate_aligned_floats(stream_count * capacity_);
    }
    size_ = other.size_;
    padded_ = other.padded_;
    morph_ = other.morph_;
    morph_joints_ = other.morph_joints_;
    for (unsigned s = 0; s < stream_count; ++s)
        if (padded_ > 0)
            std::memcpy(data(stream(s)), other.data(stream(s)), padded_ * sizeof(float));
    return *this;
}

inline void local_pose::fill_identity(std::size_t first, std::size_t last) {
    for (unsigned s = 0; s < stream_count; ++s) {
        const float v = (s == rotation_w || s >= scale_x) ? 1.0f : 0.0f;
        std::fill(data(stream(s)) + first, data(stream(s)) + last, v);
    }
}

inline void local_pose::change_size(std::size_t joint_count) {
    const std::size_t padded = (joint_count + pose_lane_block - 1) / pose_lane_block * pose_lane_block;
    if (padded > capacity_) {
        // Streams are 64-byte aligned: each starts at a multiple of 16 floats.
        const std::size_t capacity = impl::aligned_stream_length(padded);
        impl::aligned_floats fresh = impl::allocate_aligned_floats(stream_count * capacity);
        for (unsigned s = 0; s < stream_count && size_ > 0; ++s)
            std::memcpy(fresh.get() + s * capacity, data(stream(s)), size_ * sizeof(float));
        data_ = std::move(fresh);
        capacity_ = capacity;
    }
    const std::size_t old = size_;
    size_ = joint_count;
    padded_ = padded;
    // New joints are the identity, and so is the padding (also after shrinking).
    fill_identity(std::min(old, joint_count), padded_);
}

inline transform local_pose::get(std::size_t j) const {
    KEYBLEND_ASSERT(j < size_, "local_pose::get: joint out of range");
    if (j >= size_) return transform{};
    transform t;
    t.translation = glm::vec3(data(translation_x)[j], data(translation_y)[j], data(translation_z)[j]);
    t.rotation = make_quat(data(rotation_w)[j], data(rotation_x)[j], data(rotation_y)[j],
                           data(rotation_z)[j]);
    t.scale = glm::vec3(data(scale_x)[j], data(scale_y)[j], data(scale_z)[j]);
    return t;
}

inline void local_pose::set(std::size_t j, const transform& t) {
    KEYBLEND_ASSERT(j < size_, "local_pose::set: joint out of range");
    if (j >= size_) return;
    data(translation_x)[j] = t.translation.x;
    data(translation_y)[j] = t.translation.y;
    data(translation_z)[j] = t.translation.z;
    data(rotation_x)[j] = t.rotation.x;
    data(rotation_y)[j] = t.rotation.y;
    data(rotation_z)[j] = t.rotation.z;
    data(rotation_w)[j] = t.rotation.w;
    data(scale_x)[j] = t.scale.x;
    data(scale_y)[j] = t.scale.y;
    data(scale_z)[j] = t.scale.z;
}

// ---------------------------------------------------------------------------------------------
// Bind pose, conversions
// ---------------------------------------------------------------------------------------------

inline void reset_to_bind(const skeleton& s, local_pose& pose) {
    pose.resize(s.size());
    const std::vector<transform>& bind = s.bind_transforms();
    for (std::size_t j = 0; j < s.size(); ++j) pose.set(j, bind[j]);
    pose.set_morph_layout(s);
    const std::vector<float>& weights = s.bind_morph_weights();
    std::copy(weights.begin(), weights.end(), pose.morph_weights().begin());
}

inline void local_pose::set_morph_layout(const skeleton& s) {
    morph_.resize(s.morph_weight_total(), 0.0f);
    morph_joints_.resize(morph_.size());
    for (std::size_t j = 0; j < s.size(); ++j)
        for (std::size_t k = 0; k < s.morph_weight_count(j); ++k)
            morph_joints_[s.morph_weight_offset(j) + k] = static_cast<std::uint32_t>(j);
}

inline void local_pose::set_morph_layout(const local_pose& other) {
    // Every blend_job::run calls this on its output: the usual case, a layout that already
    // matches (no morph weights at all, or the same ones), costs one comparison, not a copy.
    if (&other == this || morph_joints_ == other.morph_joints_) return;
    morph_.resize(other.morph_.size(), 0.0f);
    morph_joints_ = other.morph_joints_;
}

inline status reset_to_bind(const skeleton& s, span<glm::mat4> local) {
    if (local.size() < s.size())
        return impl::make_error(errc::size_mismatch, "reset_to_bind: room for " + std::to_string(local.size()) +
                                                         " local matrices, the skeleton has " +
                                                         std::to_string(s.size()) + " joints");
    for (std::size_t j = 0; j < s.size(); ++j) local[j] = s.bind_local()[j];
    return {};
}

inline status to_local_matrices(const local_pose& pose, span<glm::mat4> local) {
    if (local.size() < pose.size())
        return impl::make_error(errc::size_mismatch, "to_local_matrices: room for " + std::to_string(local.size()) +
                                                         " matrices, the pose has " + std::to_string(pose.size()) +
                                                         " joints");
    for (std::size_t j = 0; j < pose.size(); ++j) local[j] = to_matrix(pose.get(j));
    return {};
}

inline void to_local_pose(span<const glm::mat4> local, local_pose& pose) {
    pose.resize(local.size());
    for (std::size_t j = 0; j < local.size(); ++j) pose.set(j, to_transform(local[j]));
}

// ---------------------------------------------------------------------------------------------
// Local to model
// ---------------------------------------------------------------------------------------------

namespace impl {

/// Joints [begin, end) from local matrices, parent first; `begin`'s parent is `*first_parent` when
/// given.
inline void local_to_model_matrices(const skeleton& s, const glm::mat4* local, std::size_t begin,
                                    std::size_t end, const glm::mat4* first_parent, const glm::mat4& root,
                                    glm::mat4* model) {
    for (std::size_t j = begin; j < end; ++j) {
        const joint_index p = s.parent(j);
        const glm::mat4& parent = (j == begin && first_parent) ? *first_parent
                                  : p < 0                      ? root
                                                               : model[static_cast<std::size_t>(p)];
        model[j] = parent * local[j];
    }
}

/// The first of local_to_model_job's O(1) conditions that a job breaks, in the order they are reported.
enum class local_to_model_fault : unsigned char {
    none,
    no_skeleton,
    both_inputs,
    no_input,
    local_size,
    output_size,
    null_output,
    null_input_matrices,
    from_range
};

inline local_to_model_fault first_fault(const local_to_model_job& job) {
    using f = local_to_model_fault;
    if (!job.skeleton) return f::no_skeleton;
    const std::size_t n = job.skeleton->size();
    const bool matrices = job.input_matrices.data() != nullptr || !job.input_matrices.empty();
    if ((job.input != nullptr) == matrices) return matrices ? f::both_inputs : f::no_input;
    if ((job.input ? job.input->size() : job.input_matrices.size()) != n) return f::local_size;
    if (job.output.size() < n) return f::output_size;
    if (n && !job.output.data()) return f::null_output;
    if (n && matrices && !job.input_matrices.data()) return f::null_input_matrices;
    if (job.from != local_to_model_job::all_joints && job.from >= n) return f::from_range;
    return f::none;
}

/// The error naming `fault` in `job` (built only when a check failed).
KEYBLEND_COLD inline status local_to_model_job_error(const local_to_model_job& job, local_to_model_fault fault) {
    using f = local_to_model_fault;
    const std::string what = "local_to_model_job";
    const std::size_t n = job.skeleton ? job.skeleton->size() : 0;
    switch (fault) {
    case f::none: return {};
    case f::no_skeleton: return make_error(errc::invalid_argument, what + ": no skeleton");
    case f::both_inputs: return make_error(errc::invalid_argument, what + ": both input and input_matrices are given");
    case f::no_input: return make_error(errc::invalid_argument, what + ": neither input nor input_matrices is given");
    case f::local_size: {
        const std::size_t local_size = job.input ? job.input->size() : job.input_matrices.size();
        return make_error(errc::size_mismatch, what + ": the local pose has " + std::to_string(local_size) +
                                                   " joints, the skeleton " + std::to_string(n));
    }
    case f::output_size:
        return make_error(errc::size_mismatch, what + ": room for " + std::to_string(job.output.size()) +
                                                   " model matrices, the skeleton has " + std::to_string(n) + " joints");
    case f::null_output: return make_error(errc::invalid_argument, what + ": the model matrices are null");
    case f::null_input_matrices: return make_error(errc::invalid_argument, what + ": the local matrices are null");
    case f::from_range:
        return make_error(errc::out_of_range, what + ": from joint " + std::to_string(job.from) +
                                                  " is out of range (" + std::to_string(n) + " joints)");
    }
    return {};
}

/// local_to_model_job's checks (run's): the conditions inline, the report only when one fails. O(1),
/// and with bones, the palette's over them.
inline status check_job(const local_to_model_job& job) {
    const local_to_model_fault fault = first_fault(job);
    if (fault != local_to_model_fault::none) return local_to_model_job_error(job, fault);
    return check_palette_inputs("local_to_model_job", job.output.data(), job.skeleton->size(), job.bones,
                                job.palette);
}
} // namespace impl

inline status local_to_model_job::validate() const {
    if (status st = impl::check_job(*this); !st) return st;
    for (std::size_t j = 0; j < skeleton->size(); ++j) {
        bool finite = true;
        if (input) {
            const transform t = input->get(j);
            finite = is_finite(t.translation) && is_finite(t.rotation) && is_finite(t.scale);
        } else {
            finite = is_finite(input_matrices[j]);
        }
        if (!finite)
            return impl::make_error(errc::non_finite,
                                    "local_to_model_job: joint " + std::to_string(j) + " '" + skeleton->name(j) +
                                        "': the local " + (input ? "transform" : "matrix") + " has NaN or infinity",
                                    j);
    }
    return {};
}

} // namespace keyblend

#if KEYBLEND_KERNELS_HERE
#include "pose_kernels.hpp"
#endif
#if !defined(KEYBLEND_KERNELS_LIBRARY)
inline keyblend::status keyblend::local_to_model_job::run() const { return impl::run_job(*this); }
#endif
