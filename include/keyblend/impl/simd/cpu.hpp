// keyblend — what the CPU runs: CPUID on x86, and the instruction sets of simd_isa it supports.
// Internal: used by the compiled kernels' runtime choice (src/kernels) and the tuning table.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "../simd/isa.hpp"

#if KEYBLEND_SIMD_X86 && defined(_MSC_VER)
#include <intrin.h> // __cpuid (MSVC and clang-cl); GCC and Clang take inline assembly, not <cpuid.h>,
                    // whose __cpuid macro breaks <intrin.h> and the Windows headers included after it
#endif

namespace keyblend {
namespace impl {
namespace cpu {

/// The family of a CPU from CPUID leaf 1's eax: the base family, plus the extended one when the
/// base is 0Fh.
constexpr unsigned family(unsigned eax) {
    return ((eax >> 8) & 0xFu) == 0xFu ? 0xFu + ((eax >> 20) & 0xFFu) : (eax >> 8) & 0xFu;
}

#if (defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)) && \
    (defined(_MSC_VER) || defined(__GNUC__) || defined(__clang__))
#define KEYBLEND_CPU_X86 1
/// CPUID leaf `leaf`, subleaf `sub`: eax, ebx, ecx, edx.
inline void cpuid(unsigned leaf, unsigned sub, unsigned (&r)[4]) {
#if defined(_MSC_VER)
    int x[4];
    __cpuidex(x, int(leaf), int(sub));
    for (int i = 0; i < 4; ++i) r[i] = unsigned(x[i]);
#else
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
#endif
}

/// XCR0: which register states the operating system saves (AVX: bits 1-2; AVX-512: 5-7).
inline unsigned long long xgetbv0() {
#if defined(_MSC_VER)
    return _xgetbv(0);
#else
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0u));
    return (static_cast<unsigned long long>(hi) << 32) | lo;
#endif
}
#else
#define KEYBLEND_CPU_X86 0
#endif

/// True when this CPU (and the operating system) runs the kernels of `isa`. The scalar ones run
/// everywhere; SSE2 on every x86-64 CPU; NEON on every AArch64 one.
inline bool runs(simd_isa isa) {
    switch (isa) {
    case simd_isa::scalar: return true;
    case simd_isa::neon:
#if defined(__aarch64__) || defined(_M_ARM64)
        return true;
#else
        return false;
#endif
    default: break;
    }
#if KEYBLEND_CPU_X86
    unsigned r[4];
    cpuid(0, 0, r);
    const unsigned max_leaf = r[0];
    cpuid(1, 0, r);
    const bool sse2 = (r[3] >> 26) & 1u, fma = (r[2] >> 12) & 1u, osxsave = (r[2] >> 27) & 1u;
    if (isa == simd_isa::sse2) return sse2;
    if (!osxsave || max_leaf < 7) return false;
    const unsigned long long xcr0 = xgetbv0();
    if ((xcr0 & 0x6u) != 0x6u) return false; // the OS does not save the vector registers
    cpuid(7, 0, r);
    const bool avx2 = (r[1] >> 5) & 1u, bmi2 = (r[1] >> 8) & 1u;
    const bool avx2_level = avx2 && fma && bmi2;
    if (isa == simd_isa::avx2) return avx2_level;
    const bool f = (r[1] >> 16) & 1u, dq = (r[1] >> 17) & 1u, bw = (r[1] >> 30) & 1u, vl = (r[1] >> 31) & 1u;
    return isa == simd_isa::avx512 && avx2_level && f && dq && bw && vl && (xcr0 & 0xE0u) == 0xE0u;
#else
    return false;
#endif
}

/// Whether a CPU runs each 512-bit floating-point operation whole, from its CPUID vendor string
/// (leaf 0's ebx, edx, ecx) and leaf 1's eax: Intel's do (every Intel CPU with AVX-512 issues it as
/// one operation), and AMD's from family 1Ah (Zen 5). AMD family 19h (Zen 4) runs each as two
/// 256-bit halves; other vendors are not known, so false.
constexpr bool full_width_512(unsigned ebx, unsigned edx, unsigned ecx, unsigned leaf1_eax) {
    const bool intel = ebx == 0x756e6547u && edx == 0x49656e69u && ecx == 0x6c65746eu; // "GenuineIntel"
    const bool amd = ebx == 0x68747541u && edx == 0x69746e65u && ecx == 0x444d4163u;   // "AuthenticAMD"
    return intel || (amd && family(leaf1_eax) >= 0x1Au);
}

/// full_width_512 for this CPU; false off x86.
inline bool full_width_512() {
#if KEYBLEND_CPU_X86
    unsigned r[4], leaf1[4] = {0, 0, 0, 0};
    cpuid(0, 0, r);
    if (r[0] >= 1) cpuid(1, 0, leaf1);
    return full_width_512(r[1], r[3], r[2], leaf1[0]);
#else
    return false;
#endif
}

} // namespace cpu
} // namespace impl
} // namespace keyblend
