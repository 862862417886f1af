// Tests' shorthand for running a compressed_sampling_job in one call, beside job_helpers.hpp's
// for sampling_job (the tests of the job itself use the job).
#pragma once

#include <keyblend/compress.hpp>

#include "job_helpers.hpp"

namespace kbtest {

/// A compressed_sampling_job, run.
inline keyblend::status sample_clip(const keyblend::compressed_clip& c, const keyblend::skeleton& s, float time,
                                    keyblend::compressed_sampling_context& context, keyblend::local_pose& out) {
    return keyblend::compressed_sampling_job{&c, &s, time, &context, &out}.run();
}

} // namespace kbtest
