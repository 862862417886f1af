// keyblend — which instruction sets the jobs' kernels run on, and compiling them once.
//
// SPDX-License-Identifier: MIT
//
// Every kernel (sampling, blending, local-to-model, the palette, morphing, skinning, batched IK)
// is written once against the lane types of impl/simd/lanes.hpp and exists for the scalar
// reference, SSE2, AVX2 + FMA, AVX-512 (F/VL/BW/DQ) and NEON. Two ways to build them:
//
// 1. Header-only (the default). Each file that runs a job compiles the kernels for the flags it is
//    compiled with: -march=native gets the widest the machine has, no -m flag the x86-64 baseline
//    (SSE2), KEYBLEND_NO_INTRINSICS the scalar reference, KEYBLEND_NO_AVX512 at most AVX2. Files
//    compiled with different flags may be linked into one program: the kernels and the jobs'
//    run() are named after their instruction set (impl/simd/isa.hpp), so each file runs its own.
//    (keyblend's other inline code, and GLM's, is not: compile the files that include keyblend
//    with the same flags, except for the kernels, or use 2.)
//
// 2. Compiled once, chosen at run time. Define KEYBLEND_KERNELS_LIBRARY in every file (CMake:
//    link `keyblend::kernels`, which defines it for you): the jobs' run() are then only declared,
//    and a file that runs a job compiles about as fast as one that only includes keyblend.hpp.
//    Their definitions come from either
//    - the `keyblend::kernels` library, which compiles the kernels once per instruction set of the
//      target (x86-64: SSE2, AVX2 + FMA, AVX-512; AArch64: NEON) and, at the first run(), picks
//      the widest the CPU runs (the environment variable KEYBLEND_ISA = scalar, sse2, avx2,
//      avx512 or neon names another, when the CPU runs it); or
//    - one file of yours that defines KEYBLEND_KERNELS_IMPLEMENTATION before it includes any
//      keyblend header, and includes keyblend/kernels.hpp (or keyblend.hpp): the same kernels,
//      compiled in that file (a pass per instruction set, with GCC or Clang on x86-64; its own
//      flags' and the scalar reference elsewhere), chosen at run time as the library does.
#pragma once

#include "error.hpp"
#include "impl/simd/lanes.hpp"

namespace keyblend {

// simd_isa and to_string(simd_isa) are in impl/simd/isa.hpp.

/// The kernels the jobs run: header-only, those of this file's flags (a constant); compiled once,
/// the widest the CPU runs unless KEYBLEND_ISA or force_kernel_isa chose others, decided at the
/// first call of this function or of a job's run(). Thread-safe.
KEYBLEND_KERNEL_FUNCTION simd_isa kernel_isa();

/// True when run() can use the kernels of `isa`: header-only, for kernel_isa() only; compiled
/// once, for every instruction set the library has kernels for and the CPU runs.
KEYBLEND_KERNEL_FUNCTION bool kernel_isa_supported(simd_isa isa);

/// Makes the jobs' run() use the kernels of `isa` from now on (tests and benchmarks compare
/// kernels this way). errc::unsupported, and nothing changed, when kernel_isa_supported(isa) is
/// false.
KEYBLEND_KERNEL_FUNCTION status force_kernel_isa(simd_isa isa);


#if !defined(KEYBLEND_KERNELS_LIBRARY)
KEYBLEND_KERNEL_FUNCTION simd_isa kernel_isa() { return impl::compiled_isa; }
KEYBLEND_KERNEL_FUNCTION bool kernel_isa_supported(simd_isa isa) { return isa == impl::compiled_isa; }
KEYBLEND_KERNEL_FUNCTION status force_kernel_isa(simd_isa isa) {
    if (isa == impl::compiled_isa) return {};
    return impl::make_error(errc::unsupported, std::string("force_kernel_isa: this file is compiled with the ") +
                                                   to_string(impl::compiled_isa) + " kernels only, not " +
                                                   to_string(isa) +
                                                   " (the compiled kernels, keyblend::kernels, choose at run time)");
}
#endif

} // namespace keyblend

// KEYBLEND_KERNELS_IMPLEMENTATION: this file defines the jobs' run() for the whole program, with
// the kernels of its own flags.
#if defined(KEYBLEND_KERNELS_IMPLEMENTATION)
#include "impl/kernels_implementation.hpp"
#endif
