// keyblend — what a sampling_context holds (clip.hpp): the caches of the clip sampler
// (impl/clip_sample.impl.hpp), which reads and writes them. Internal.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "../sample.hpp"
#include "simd/aligned.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace keyblend {

struct clip;
class skeleton;
struct channel;

namespace impl {

/// The state of one playing instance of a clip: per joint and component (translation, rotation,
/// scale) the key interval around the last time sampled, as float streams (see
/// clip_sampler::stream_count for their layout), and the cursors and key-sharing groups that make
/// a frame touch only the intervals it left.
struct sampling_state {
    sampling_state() = default;
    sampling_state(const sampling_state& other) { *this = other; }
    sampling_state& operator=(const sampling_state& other);
    sampling_state(sampling_state&&) noexcept = default;
    sampling_state& operator=(sampling_state&&) noexcept = default;

    /// The float streams the sampler keeps per joint (clip_sampler in impl/clip_kernels.hpp says
    /// what each holds).
    static constexpr unsigned stream_count = 53;

    const clip* clip_ = nullptr;
    const skeleton* skeleton_ = nullptr;
    const channel* channels_ = nullptr; // the clip's channel array when bound
    std::size_t channel_count_ = 0;
    std::size_t joint_count_ = 0;
    std::size_t padded_ = 0;
    std::size_t capacity_ = 0;                  // floats per stream
    std::size_t stream_floats_ = 0;             // floats allocated in streams_ (the tangent
                                                // streams only for a clip with cubic splines)
    std::size_t bad_channel_ = static_cast<std::size_t>(-1); // first channel whose joint is out of range
    aligned_floats streams_;                    // the interval caches, clip_sampler::stream
    std::vector<std::int32_t> channel_of_joint_; // -1: no channel
    std::vector<const void*> tracks_;           // 3 per joint (T, R, S): the track sampled, or null
    std::vector<std::uint8_t> matrix_;          // per joint: 1 when tracks_ are its matrix track
    std::vector<std::uint8_t> shared_;          // per block of 8 joints x (T, R, S): lanes keyed alike
    std::vector<std::size_t> shared_cursors_;   // per block x (T, R, S): their common cursor
    std::vector<std::size_t> shared_second_;    // per block x (T, R, S): key index cached as value 1
    std::vector<std::uint8_t> shared_take_;     // per block x (T, R, S): the lanes that cached it
    std::vector<std::uint32_t> shared_group_;   // per block x (T, R, S): the first such slot keyed at
                                                // the same times (itself if none): they search once
    struct found_keys {                         // a group's last search: its time and result
        bool searched;                          // (a flag, not a NaN time: -ffast-math folds NaN tests)
        float time, lo, hi, inv;
        std::size_t first, second;
    };
    std::vector<found_keys> shared_found_;      // per block x (T, R, S), used at group leads
    std::vector<std::uint8_t> settled_;         // per block x (T, R, S): 1 when every lane's interval
                                                // holds at every time (the bind pose, or one key)
    std::vector<std::uint8_t> subset_;          // per block x (T, R, S): lanes keyed at some of the
                                                // shared lanes' times (keys dropped by an exporter)
    std::vector<std::uint32_t> subset_at_;      // 3 per joint (T, R, S): where its subset_keys_ start
    std::vector<std::uint32_t> subset_keys_;    // per subset lane: n (the shared lanes' key count
                                                // at bind), then for x = 0 .. n its keys among their
                                                // first x
    std::vector<std::size_t> cursors_;          // 3 per joint (T, R, S): a track_cursor's index
    std::vector<track_cursor> morph_cursors_;   // per morph weight of the skeleton
    bool cubic_ = false;                        // some T/R/S track is a cubic spline: tangent streams
};

} // namespace impl
} // namespace keyblend
