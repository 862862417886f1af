// keyblend — which instruction sets the skinning kernels are compiled for in this translation
// unit, and the names that keep kernels of different instruction sets apart at link time.
// Internal; included by skin.hpp.
//
// SPDX-License-Identifier: MIT
//
// The skinning code is header-only: every function is inline, and the linker keeps one copy of
// each. Two files compiled with different -m flags (one for baseline x86-64, one with -mavx2 for an
// engine's own fast path) would then share whichever copy the linker kept, and the baseline file
// could end up running AVX-512 instructions. So everything skinning compiles differently per
// instruction set lives in an inline namespace named after it:
//
// - the kernels, in keyblend::impl::skin::<lanes>_<level>: <lanes> the widest lane type the kernels
//   use (scalar, sse2, avx2, avx512) and <level> what the compiler was told the CPU has (the x86-64
//   micro-architecture levels v1 = baseline, v2 = SSE4.2, v3 = AVX2 + FMA + BMI2, v4 = AVX-512
//   F/BW/DQ/VL; "other" elsewhere), because code for AVX2 lanes compiled for an AVX-512 target may
//   use AVX-512 encodings;
// - the code around them (checks, the jobs' run() and validate(), build_palette, skin_parallel,
//   ...), in KEYBLEND_SKIN_ABI: the kernels' name in a static build, dispatch_<level> with
//   KEYBLEND_RUNTIME_DISPATCH. The jobs are types shared by every file; their run() and validate()
//   are member templates whose default argument is a tag type from that namespace, so each file's
//   `job.run()` is its own instantiation.
//
// KEYBLEND_RUNTIME_DISPATCH (GCC or Clang on x86-64): the file carries three kernel sets — SSE2
// (whatever the file's flags allow), AVX2 + FMA + BMI2 and AVX-512 (F/VL/BW/DQ), the last two through
// function target attributes — and run() picks the widest the CPU supports at first use
// (skin.hpp: skinning_isa, force_skinning_isa, KEYBLEND_SKIN_ISA).
#pragma once

#if !defined(KEYBLEND_NO_INTRINSICS) && \
    (defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86))
#define KEYBLEND_SKIN_X86 1
#else
#define KEYBLEND_SKIN_X86 0
#endif

// The level the compiler targets (decides the encodings compiled code may use).
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
#define KEYBLEND_SKIN_LEVEL v4
#define KEYBLEND_SKIN_LEVEL_NUMBER 4
#elif defined(__AVX2__) && defined(__FMA__)
#define KEYBLEND_SKIN_LEVEL v3
#define KEYBLEND_SKIN_LEVEL_NUMBER 3
#elif defined(__SSE4_2__) || defined(__AVX__)
#define KEYBLEND_SKIN_LEVEL v2
#define KEYBLEND_SKIN_LEVEL_NUMBER 2
#elif defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define KEYBLEND_SKIN_LEVEL v1
#define KEYBLEND_SKIN_LEVEL_NUMBER 1
#else
#define KEYBLEND_SKIN_LEVEL other
#define KEYBLEND_SKIN_LEVEL_NUMBER 0
#endif

// Runtime dispatch needs function target attributes and __builtin_cpu_supports.
#if defined(KEYBLEND_RUNTIME_DISPATCH) && KEYBLEND_SKIN_X86 && (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__x86_64__) || defined(__i386__)) && KEYBLEND_SKIN_LEVEL_NUMBER >= 1
#define KEYBLEND_SKIN_DISPATCH 1
#else
#define KEYBLEND_SKIN_DISPATCH 0
#endif

// The static build's lanes: the widest the compiler targets (number: 0 scalar .. 3 avx512).
#if !KEYBLEND_SKIN_X86
#define KEYBLEND_SKIN_STATIC_LANES scalar
#define KEYBLEND_SKIN_STATIC_LANES_NUMBER 0
#elif defined(__AVX2__) && defined(__FMA__) && KEYBLEND_SKIN_LEVEL_NUMBER == 4 && !defined(KEYBLEND_NO_AVX512)
#define KEYBLEND_SKIN_STATIC_LANES avx512
#define KEYBLEND_SKIN_STATIC_LANES_NUMBER 3
#elif defined(__AVX2__) && defined(__FMA__)
#define KEYBLEND_SKIN_STATIC_LANES avx2
#define KEYBLEND_SKIN_STATIC_LANES_NUMBER 2
#elif KEYBLEND_SKIN_LEVEL_NUMBER >= 1
#define KEYBLEND_SKIN_STATIC_LANES sse2
#define KEYBLEND_SKIN_STATIC_LANES_NUMBER 1
#else
#define KEYBLEND_SKIN_STATIC_LANES scalar
#define KEYBLEND_SKIN_STATIC_LANES_NUMBER 0
#endif

#define KEYBLEND_SKIN_CAT3_(a, b, c) a##b##c
#define KEYBLEND_SKIN_CAT3(a, b, c) KEYBLEND_SKIN_CAT3_(a, b, c)

#if KEYBLEND_SKIN_DISPATCH
#define KEYBLEND_SKIN_ABI KEYBLEND_SKIN_CAT3(dispatch, _, KEYBLEND_SKIN_LEVEL)
#else
#define KEYBLEND_SKIN_ABI KEYBLEND_SKIN_CAT3(KEYBLEND_SKIN_STATIC_LANES, _, KEYBLEND_SKIN_LEVEL)
#endif

// The member functions of jobs whose bodies depend on the instruction sets (run(), validate()):
// named after them too (GCC and Clang's ABI tag), so that each file's calls go to its own.
#define KEYBLEND_SKIN_STR_(x) #x
#define KEYBLEND_SKIN_STR(x) KEYBLEND_SKIN_STR_(x)
#if defined(__GNUC__) || defined(__clang__)
#define KEYBLEND_JOB_ABI [[gnu::abi_tag(KEYBLEND_SKIN_STR(KEYBLEND_SKIN_ABI))]]
#else
#define KEYBLEND_JOB_ABI
#endif

#if KEYBLEND_SKIN_X86
#if KEYBLEND_SKIN_DISPATCH || defined(__AVX__)
#include <immintrin.h>
#else
#include <emmintrin.h>
#endif
#endif
