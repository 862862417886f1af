// keyblend — the compiled kernels' entry points for the job templates (skinning), declared for
// files built with KEYBLEND_KERNELS_LIBRARY (keyblend/kernels.hpp); the non-template jobs' run()
// are declared in their own headers. Defined by the keyblend::kernels library (src/kernels), or
// by the one file that defines KEYBLEND_KERNELS_IMPLEMENTATION (impl/kernels_implementation.hpp).
// Internal.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>

namespace keyblend {

template <class JointIndex>
struct skinning_job;
template <class JointIndex>
struct dual_quaternion_skinning_job;

namespace impl {
namespace kernels_api {

status run(const skinning_job<std::uint16_t>& job);
status run(const skinning_job<std::uint8_t>& job);
status run(const dual_quaternion_skinning_job<std::uint16_t>& job);
status run(const dual_quaternion_skinning_job<std::uint8_t>& job);
/// Where a checked job's first SIMD group starts (skin_parallel splits there).
std::size_t first_group(const skinning_job<std::uint16_t>& job, std::size_t begin);
std::size_t first_group(const skinning_job<std::uint8_t>& job, std::size_t begin);

} // namespace kernels_api
} // namespace impl
} // namespace keyblend
