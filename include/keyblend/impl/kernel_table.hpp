// keyblend — the kernels of one instruction set as a table of entry points: what the compiled
// kernels choose between at run time (impl/kernels_implementation.hpp). Internal.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "simd/isa.hpp"

#include <cstddef>
#include <cstdint>

namespace keyblend {

class local_pose;
struct sampling_job;
struct blend_job;
struct local_to_model_job;
struct palette_job;
struct morph_job;
struct two_bone_ik_batch_job;
struct aim_ik_batch_job;
template <class JointIndex>
struct skinning_job;
template <class JointIndex>
struct dual_quaternion_skinning_job;
template <class T>
class result;
using status = result<void>;

namespace impl {

struct kernel_table {
    simd_isa isa;
    status (*sample)(const sampling_job&);
    status (*blend)(const blend_job&);
    status (*additive)(const local_pose&, const local_pose&, local_pose&);
    status (*hierarchy)(const local_to_model_job&);
    status (*palette)(const palette_job&);
    status (*morph)(const morph_job&);
    status (*two_bone_ik)(const two_bone_ik_batch_job&);
    status (*aim_ik)(const aim_ik_batch_job&);
    status (*skin16)(const skinning_job<std::uint16_t>&);
    status (*skin8)(const skinning_job<std::uint8_t>&);
    status (*dual_quaternion16)(const dual_quaternion_skinning_job<std::uint16_t>&);
    status (*dual_quaternion8)(const dual_quaternion_skinning_job<std::uint8_t>&);
    std::size_t (*first_group16)(const skinning_job<std::uint16_t>&, std::size_t);
    std::size_t (*first_group8)(const skinning_job<std::uint8_t>&, std::size_t);
};

} // namespace impl
} // namespace keyblend
