// keyblend — definitions for sampling_job and sampling_context (clip.hpp). Included at the bottom
// of clip.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <cstring>
#include <string>

namespace keyblend {
namespace impl {

/// What the sampler reaches of a context.
struct sampling_access {
    static sampling_state& state(sampling_context& c) { return c.state_; }
};

} // namespace impl

namespace impl {
inline sampling_state& sampling_state::operator=(const sampling_state& other) {
    if (this == &other) return *this;
    clip_ = other.clip_;
    skeleton_ = other.skeleton_;
    channels_ = other.channels_;
    channel_count_ = other.channel_count_;
    joint_count_ = other.joint_count_;
    padded_ = other.padded_;
    capacity_ = other.capacity_;
    stream_floats_ = other.stream_floats_;
    bad_channel_ = other.bad_channel_;
    channel_of_joint_ = other.channel_of_joint_;
    cursors_ = other.cursors_;
    tracks_ = other.tracks_;
    matrix_ = other.matrix_;
    shared_ = other.shared_;
    shared_cursors_ = other.shared_cursors_;
    shared_second_ = other.shared_second_;
    shared_take_ = other.shared_take_;
    shared_group_ = other.shared_group_;
    shared_found_ = other.shared_found_;
    settled_ = other.settled_;
    subset_ = other.subset_;
    subset_at_ = other.subset_at_;
    subset_keys_ = other.subset_keys_;
    morph_cursors_ = other.morph_cursors_;
    cubic_ = other.cubic_;
    streams_.reset();
    if (other.streams_) {
        const std::size_t n = stream_floats_;
        streams_ = allocate_aligned_floats(n);
        std::memcpy(streams_.get(), other.streams_.get(), n * sizeof(float));
    }
    return *this;
}
} // namespace impl

namespace impl {
/// The error of a sampling job missing a member: the first missing one named (out of line: the
/// check runs every frame, the error never in a working program).
KEYBLEND_COLD inline status missing_sampling_member(bool clip, bool skeleton, bool context, const char* job_name) {
    return make_error(errc::invalid_argument, std::string(job_name) + ": no " +
                                                  (!clip       ? "clip"
                                                   : !skeleton ? "skeleton"
                                                   : !context  ? "sampling context"
                                                               : "output pose"));
}

/// The null checks of a sampling job's members (sampling_job, compressed_sampling_job: the same
/// members).
template <class Job>
status check_sampling_members(const Job& job, const char* job_name) {
    if (job.clip && job.skeleton && job.context && job.output) return {};
    return missing_sampling_member(job.clip != nullptr, job.skeleton != nullptr, job.context != nullptr, job_name);
}
inline status check_job(const sampling_job& job) { return check_sampling_members(job, "sampling_job"); }
} // namespace impl

inline status sampling_job::validate() const {
    if (status st = impl::check_job(*this); !st) return st;
    return validate_clip(*clip, *skeleton);
}

} // namespace keyblend

#if KEYBLEND_KERNELS_HERE
#include "clip_kernels.hpp"
#endif
#if !defined(KEYBLEND_KERNELS_LIBRARY)
inline keyblend::status keyblend::sampling_job::run() const { return impl::run_job(*this); }
#endif
