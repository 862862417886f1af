// keyblend::kernels — the jobs' kernels compiled once per instruction set, chosen at run time
// (keyblend/kernels.hpp).
//
// SPDX-License-Identifier: MIT
#define KEYBLEND_KERNELS_IMPLEMENTATION
#include <keyblend/kernels.hpp>
