// tests/skin_isa_mix: files compiled with different instruction-set flags, linked into one
// program; each reports which skinning kernels its own `job.run()` ran.
#pragma once

#include <cstddef>

/// Called by the kernels on every run (KEYBLEND_SKIN_TEST_HOOK, defined for these files only,
/// before the header is included): the kernels' simd_isa as an int, and their lane width.
void record_kernel(int isa, std::size_t width);
#define KEYBLEND_SKIN_TEST_HOOK(isa, width) ::record_kernel(static_cast<int>(isa), width)

#include <keyblend/kernels.hpp>
#include <keyblend/skin.hpp>

struct mix_result {
    keyblend::simd_isa reported = keyblend::simd_isa::scalar; ///< kernel_isa() in that file
    keyblend::simd_isa ran = keyblend::simd_isa::scalar;      ///< the kernels the hook saw
    std::size_t width = 0;                                     ///< their lane width
    bool ok = false;                                           ///< run() succeeded and skinned right
};
