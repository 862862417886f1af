// keyblend — the instruction set of a pass of kernels (impl/simd/isa.hpp): KEYBLEND_SIMD_*,
// KEYBLEND_SIMD_LEVEL, KEYBLEND_ISA and KEYBLEND_ISA_NS. Internal.
//
// SPDX-License-Identifier: MIT
//
// No include guard: isa.hpp includes this once for the file's own flags (the native pass, whose
// namespace is inline: keyblend::impl::lanes::f8 names its lanes), and the compiled kernels include
// it again before each other pass, with KEYBLEND_PASS_SIMD saying which instruction set (0 scalar,
// 1 SSE2, 2 AVX2 + FMA, 3 AVX-512, 4 NEON) inside a region of functions compiled for it; such a
// pass's namespace is not inline, so that names stay unambiguous.
#undef KEYBLEND_SIMD_X86
#undef KEYBLEND_SIMD_SSE2
#undef KEYBLEND_SIMD_AVX2
#undef KEYBLEND_SIMD_AVX512
#undef KEYBLEND_SIMD_NEON
#undef KEYBLEND_SIMD_FMA
#undef KEYBLEND_SIMD_F4
#undef KEYBLEND_SIMD_LEVEL
#undef KEYBLEND_ISA
#undef KEYBLEND_ISA_NS

#if defined(KEYBLEND_PASS_SIMD)
#define KEYBLEND_SIMD_X86 (KEYBLEND_PASS_SIMD >= 1 && KEYBLEND_PASS_SIMD <= 3)
#define KEYBLEND_SIMD_SSE2 (KEYBLEND_PASS_SIMD >= 1 && KEYBLEND_PASS_SIMD <= 3)
#define KEYBLEND_SIMD_AVX2 (KEYBLEND_PASS_SIMD == 2 || KEYBLEND_PASS_SIMD == 3)
#define KEYBLEND_SIMD_AVX512 (KEYBLEND_PASS_SIMD == 3)
#define KEYBLEND_SIMD_NEON (KEYBLEND_PASS_SIMD == 4)
#define KEYBLEND_SIMD_FMA (KEYBLEND_PASS_SIMD >= 2)
#if KEYBLEND_PASS_SIMD == 3
#define KEYBLEND_SIMD_LEVEL v4
#elif KEYBLEND_PASS_SIMD == 2
#define KEYBLEND_SIMD_LEVEL v3
#elif KEYBLEND_PASS_SIMD == 4
#define KEYBLEND_SIMD_LEVEL a64
#else
#define KEYBLEND_SIMD_LEVEL v1
#endif
#else
#if !defined(KEYBLEND_NO_INTRINSICS) && (defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86))
#define KEYBLEND_SIMD_X86 1
#else
#define KEYBLEND_SIMD_X86 0
#endif

#if KEYBLEND_SIMD_X86 && defined(__AVX2__) && defined(__FMA__)
#define KEYBLEND_SIMD_AVX2 1
#else
#define KEYBLEND_SIMD_AVX2 0
#endif
#if KEYBLEND_SIMD_AVX2 && defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && \
    defined(__AVX512DQ__) && !defined(KEYBLEND_NO_AVX512)
#define KEYBLEND_SIMD_AVX512 1
#else
#define KEYBLEND_SIMD_AVX512 0
#endif
#if KEYBLEND_SIMD_X86 && (KEYBLEND_SIMD_AVX2 || defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2))
#define KEYBLEND_SIMD_SSE2 1
#else
#define KEYBLEND_SIMD_SSE2 0
#endif
#if !defined(KEYBLEND_NO_INTRINSICS) && (defined(__aarch64__) || defined(_M_ARM64)) && \
    (defined(__ARM_NEON) || defined(_M_ARM64))
#define KEYBLEND_SIMD_NEON 1
#else
#define KEYBLEND_SIMD_NEON 0
#endif
#if (KEYBLEND_SIMD_X86 && defined(__FMA__)) || KEYBLEND_SIMD_NEON
#define KEYBLEND_SIMD_FMA 1
#else
#define KEYBLEND_SIMD_FMA 0
#endif

// The level the compiler targets, which decides the encodings compiled code may use (AVX2 lanes
// compiled for an AVX-512 target may use EVEX encodings): the x86-64 micro-architecture levels.
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
#define KEYBLEND_SIMD_LEVEL v4
#elif defined(__AVX2__) && defined(__FMA__)
#define KEYBLEND_SIMD_LEVEL v3
#elif defined(__SSE4_2__) || defined(__AVX__)
#define KEYBLEND_SIMD_LEVEL v2
#elif defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define KEYBLEND_SIMD_LEVEL v1
#elif defined(__aarch64__) || defined(_M_ARM64)
#define KEYBLEND_SIMD_LEVEL a64
#else
#define KEYBLEND_SIMD_LEVEL other
#endif


#endif

// 4-float lanes (lanes::f4): SSE2's or NEON's.
#define KEYBLEND_SIMD_F4 (KEYBLEND_SIMD_SSE2 || KEYBLEND_SIMD_NEON)

#if KEYBLEND_SIMD_AVX512
#define KEYBLEND_ISA KEYBLEND_SIMD_CAT3(avx512, _, KEYBLEND_SIMD_LEVEL)
#elif KEYBLEND_SIMD_AVX2
#define KEYBLEND_ISA KEYBLEND_SIMD_CAT3(avx2, _, KEYBLEND_SIMD_LEVEL)
#elif KEYBLEND_SIMD_SSE2
#define KEYBLEND_ISA KEYBLEND_SIMD_CAT3(sse2, _, KEYBLEND_SIMD_LEVEL)
#elif KEYBLEND_SIMD_NEON
#define KEYBLEND_ISA KEYBLEND_SIMD_CAT3(neon, _, KEYBLEND_SIMD_LEVEL)
#else
#define KEYBLEND_ISA KEYBLEND_SIMD_CAT3(scalar, _, KEYBLEND_SIMD_LEVEL)
#endif

#if defined(KEYBLEND_PASS_SIMD)
#define KEYBLEND_ISA_NS namespace KEYBLEND_ISA
#else
#define KEYBLEND_ISA_NS inline namespace KEYBLEND_ISA
#endif
