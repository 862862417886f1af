// keyblend — the one place that decides which instruction sets a translation unit's kernels use,
// and the names that keep the kernels of different instruction sets apart. Internal.
//
// SPDX-License-Identifier: MIT
//
// The choice is made at compile time, from the flags the file is compiled with:
//
//   KEYBLEND_SIMD_SSE2    4-float lanes (__m128): the x86-64 baseline
//   KEYBLEND_SIMD_AVX2    8-float lanes (__m256) with FMA: the x86-64-v3 level (AVX2 + FMA + BMI2)
//   KEYBLEND_SIMD_AVX512  16-float lanes (__m512) and mask registers: AVX-512 F + VL + BW + DQ
//   KEYBLEND_SIMD_NEON    4-float lanes (float32x4_t): AArch64 (ARMv8 NEON, fused multiply-add)
//   KEYBLEND_SIMD_FMA     fused multiply-adds (AVX2's FMA3, NEON's vfmaq)
//   KEYBLEND_SIMD_F4      4-float lanes of either kind (SSE2 or NEON): lanes::f4 exists
//
// each 1 or 0. KEYBLEND_NO_INTRINSICS turns them all off (the scalar reference everywhere);
// KEYBLEND_NO_AVX512 stops at AVX2 on an AVX-512 target. Runtime selection is the compiled
// kernels' business (keyblend/kernels.hpp): they compile these headers once per instruction set.
//
// These macros are set by impl/simd/target.hpp, once for the file's own flags, and once more for
// each other instruction set where the compiled kernels build several in one file
// (keyblend/kernels.hpp; a "pass" per instruction set).
//
// KEYBLEND_ISA names the lanes and the level the compiler targets (`avx512_v4`, `avx2_v3`,
// `sse2_v1`, `neon`, `scalar_v1`, ...): everything whose code differs per instruction set — the lane
// types, the kernels, the helpers around them — lives in an inline namespace of that name, so that
// files compiled with different flags in one program each keep their own copies (the linker would
// otherwise keep one, maybe the one with instructions the CPU lacks). Member functions of the jobs
// that run kernels carry the same name as an ABI tag (KEYBLEND_JOB_ABI).
#pragma once

#include <cstddef>

#define KEYBLEND_SIMD_CAT3_(a, b, c) a##b##c
#define KEYBLEND_SIMD_CAT3(a, b, c) KEYBLEND_SIMD_CAT3_(a, b, c)
#define KEYBLEND_SIMD_STR_(x) #x
#define KEYBLEND_SIMD_STR(x) KEYBLEND_SIMD_STR_(x)

// Where the kernels are compiled: into every file (header-only, the default), or, with
// KEYBLEND_KERNELS_LIBRARY (keyblend/kernels.hpp), only into the file that defines
// KEYBLEND_KERNELS_IMPLEMENTATION and into the compiled kernels' own files (KEYBLEND_KERNELS_TABLE).
#if !defined(KEYBLEND_KERNELS_LIBRARY) || defined(KEYBLEND_KERNELS_IMPLEMENTATION) || defined(KEYBLEND_KERNELS_TABLE)
#define KEYBLEND_KERNELS_HERE 1
#else
#define KEYBLEND_KERNELS_HERE 0
#endif

// The jobs' kernel-running member functions: tagged with KEYBLEND_ISA (GCC and Clang), except
// where they are declared only, for the compiled kernels (KEYBLEND_KERNELS_LIBRARY), whose one
// definition chooses the instruction set at run time.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(KEYBLEND_KERNELS_LIBRARY)
#define KEYBLEND_JOB_ABI [[gnu::abi_tag(KEYBLEND_SIMD_STR(KEYBLEND_ISA))]]
#else
#define KEYBLEND_JOB_ABI
#endif
// The inline namespace of code around the kernels whose body depends on how they are built (the
// skinning jobs' entry points, skin_parallel): the instruction set's name where the kernels are
// compiled into each file, another where they are compiled once, so that files built either way
// link into one program without one's copy replacing the other's.
#if defined(KEYBLEND_KERNELS_LIBRARY)
#define KEYBLEND_BUILD_NS compiled_kernels
#else
#define KEYBLEND_BUILD_NS KEYBLEND_ISA
#endif

// The same for a free function that runs kernels (make_additive): inline where the kernels are
// compiled into the file, declared only for the compiled kernels.
#if defined(KEYBLEND_KERNELS_LIBRARY)
#define KEYBLEND_KERNEL_FUNCTION
#else
#define KEYBLEND_KERNEL_FUNCTION KEYBLEND_JOB_ABI inline
#endif

// The lane kernels are small and called in hot loops on values that live in registers: inlining
// them is what keeps those values out of memory. KEYBLEND_LAMBDA_INLINE does the same for a
// lambda (after its parameter list). KEYBLEND_COLD keeps a rarely taken path out of a kernel's
// loop; KEYBLEND_NOINLINE keeps a function one out-of-line copy.
#if defined(__GNUC__) || defined(__clang__)
#define KEYBLEND_FORCE_INLINE inline __attribute__((always_inline))
#define KEYBLEND_LAMBDA_INLINE __attribute__((always_inline))
#define KEYBLEND_COLD __attribute__((noinline, cold))
#define KEYBLEND_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define KEYBLEND_FORCE_INLINE __forceinline
#define KEYBLEND_LAMBDA_INLINE
#define KEYBLEND_COLD __declspec(noinline)
#define KEYBLEND_NOINLINE __declspec(noinline)
#else
#define KEYBLEND_FORCE_INLINE inline
#define KEYBLEND_LAMBDA_INLINE
#define KEYBLEND_COLD
#define KEYBLEND_NOINLINE
#endif

namespace keyblend {

/// The instruction sets the kernels are written for (keyblend/kernels.hpp says how they are
/// chosen).
enum class simd_isa : unsigned char {
    scalar, ///< one lane: the reference (KEYBLEND_NO_INTRINSICS, or a target without the others)
    sse2,   ///< 4 lanes: the x86-64 baseline
    avx2,   ///< 8 lanes: AVX2 + FMA (+ BMI2), the x86-64-v3 level
    avx512, ///< 16 lanes (skinning: 8 lanes in AVX-512 registers): AVX-512 F/VL/BW/DQ
    neon,   ///< 4 lanes: AArch64 NEON with fused multiply-adds
};

/// "scalar", "sse2", "avx2", "avx512", "neon" (the names KEYBLEND_ISA takes).
inline const char* to_string(simd_isa isa) {
    switch (isa) {
    case simd_isa::scalar: return "scalar";
    case simd_isa::sse2: return "sse2";
    case simd_isa::avx2: return "avx2";
    case simd_isa::avx512: return "avx512";
    case simd_isa::neon: return "neon";
    }
    return "?";
}

} // namespace keyblend

// The intrinsics: all of them where the compiled kernels build several instruction sets in one
// file (the compilers declare every intrinsic, each usable in a function targeting its set).
#if !defined(KEYBLEND_NO_INTRINSICS) && (defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86))
#if defined(__AVX__) || (defined(KEYBLEND_KERNELS_LIBRARY) && (defined(__GNUC__) || defined(__clang__)))
#include <immintrin.h>
#else
#include <emmintrin.h>
#endif
#endif
#if !defined(KEYBLEND_NO_INTRINSICS) && (defined(__aarch64__) || defined(_M_ARM64))
#include <arm_neon.h>
#endif

#include "target.hpp"
