// keyblend — the float streams the lane kernels work on: 64-byte aligned allocations, and the
// padding of pose streams to a whole number of lane blocks. Internal.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace keyblend {

/// Pose streams are padded to a multiple of this many joints, so every lane type divides them.
inline constexpr std::size_t pose_lane_block = 8;

namespace impl {

/// Float streams for the lane kernels: 64-byte aligned (one cache line, any lane type's alignment).
struct aligned_delete {
    void operator()(float* p) const noexcept { ::operator delete[](p, std::align_val_t(64)); }
};
using aligned_floats = std::unique_ptr<float[], aligned_delete>;

/// `count` uninitialised floats, 64-byte aligned.
inline aligned_floats allocate_aligned_floats(std::size_t count) {
    return aligned_floats(
        static_cast<float*>(::operator new[](count * sizeof(float), std::align_val_t(64))));
}

/// `n` rounded up to a multiple of 16 floats (64 bytes), so streams laid end to end stay aligned.
inline constexpr std::size_t aligned_stream_length(std::size_t n) { return (n + 15) / 16 * 16; }
} // namespace impl
} // namespace keyblend
