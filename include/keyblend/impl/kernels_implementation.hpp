// keyblend — the compiled kernels: the jobs' run() for a program built with
// KEYBLEND_KERNELS_LIBRARY, defined in the one file that defines KEYBLEND_KERNELS_IMPLEMENTATION
// before including keyblend/kernels.hpp (the keyblend::kernels library is such a file,
// src/kernels/kernels.cpp). Internal.
//
// SPDX-License-Identifier: MIT
//
// The kernels are compiled once per instruction set, in passes (impl/simd/target.hpp): the file's
// own flags (the native pass), then the scalar reference, and, with GCC or Clang on x86-64, AVX2 +
// FMA and AVX-512 in regions of functions compiled for them (#pragma GCC target / clang attribute)
// where the file's flags do not already include them. Each pass is a namespace of its own and one
// table of entry points (impl/kernel_table.hpp); the first call of a run() picks the table of the
// widest instruction set the CPU runs (or KEYBLEND_ISA's).
#pragma once

#if !defined(KEYBLEND_KERNELS_LIBRARY)
#error "KEYBLEND_KERNELS_IMPLEMENTATION needs KEYBLEND_KERNELS_LIBRARY, in every file of the program"
#endif

#include "simd/cpu.hpp"

// The native pass.
#include "kernel_entries.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

// The scalar reference, unless the native pass is scalar already.
#if KEYBLEND_SIMD_SSE2 || KEYBLEND_SIMD_NEON
#define KEYBLEND_PASS_TOGGLE
#define KEYBLEND_PASS_SIMD 0
#include "simd/target.hpp"
#include "kernel_entries.hpp"
namespace keyblend::impl {
inline const kernel_table& table_scalar() { return KEYBLEND_ISA::table(); }
} // namespace keyblend::impl
#undef KEYBLEND_PASS_SIMD
#define KEYBLEND_KERNELS_PASSED_SCALAR 1
#endif

// AVX2 + FMA and AVX-512 where the compiler can target them per function.
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(KEYBLEND_NO_INTRINSICS) && !defined(KEYBLEND_KERNELS_NO_PASSES)
#undef KEYBLEND_SIMD_NATIVE_AVX2
#if defined(__AVX2__) && defined(__FMA__)
#define KEYBLEND_SIMD_NATIVE_AVX2 1
#else
#define KEYBLEND_SIMD_NATIVE_AVX2 0
#endif
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
#define KEYBLEND_SIMD_NATIVE_AVX512 1
#else
#define KEYBLEND_SIMD_NATIVE_AVX512 0
#endif

#if !KEYBLEND_SIMD_NATIVE_AVX2
#if defined(KEYBLEND_PASS_TOGGLE)
#undef KEYBLEND_PASS_TOGGLE
#else
#define KEYBLEND_PASS_TOGGLE
#endif
#define KEYBLEND_PASS_SIMD 2
#include "simd/target.hpp"
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,bmi,bmi2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2")
#endif
#include "kernel_entries.hpp"
namespace keyblend::impl {
inline const kernel_table& table_avx2() { return KEYBLEND_ISA::table(); }
} // namespace keyblend::impl
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#undef KEYBLEND_PASS_SIMD
#define KEYBLEND_KERNELS_PASSED_AVX2 1
#endif

#if !KEYBLEND_SIMD_NATIVE_AVX512 && !defined(KEYBLEND_NO_AVX512)
#if defined(KEYBLEND_PASS_TOGGLE)
#undef KEYBLEND_PASS_TOGGLE
#else
#define KEYBLEND_PASS_TOGGLE
#endif
#define KEYBLEND_PASS_SIMD 3
#include "simd/target.hpp"
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2")
#endif
#include "kernel_entries.hpp"
namespace keyblend::impl {
inline const kernel_table& table_avx512() { return KEYBLEND_ISA::table(); }
} // namespace keyblend::impl
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#undef KEYBLEND_PASS_SIMD
#define KEYBLEND_KERNELS_PASSED_AVX512 1
#endif
#endif

// Back to the file's own instruction set for what follows.
#include "simd/target.hpp"

namespace keyblend {
namespace impl {
namespace kernels_choice {

/// The table of `isa` when this file compiled its kernels, else null.
inline const kernel_table* table_of(simd_isa isa) {
    if (isa == compiled_isa) return &table(); // (the native pass)
    switch (isa) {
#if defined(KEYBLEND_KERNELS_PASSED_SCALAR)
    case simd_isa::scalar: return &table_scalar();
#endif
#if defined(KEYBLEND_KERNELS_PASSED_AVX2)
    case simd_isa::avx2: return &table_avx2();
#endif
#if defined(KEYBLEND_KERNELS_PASSED_AVX512)
    case simd_isa::avx512: return &table_avx512();
#endif
    default: return nullptr;
    }
}

inline bool usable(simd_isa isa) { return table_of(isa) && cpu::runs(isa); }

inline std::atomic<const kernel_table*> chosen{nullptr};

/// The widest usable kernels, or KEYBLEND_ISA's when it names usable ones.
inline const kernel_table* choose() {
    constexpr simd_isa by_width[] = {simd_isa::scalar, simd_isa::sse2, simd_isa::neon, simd_isa::avx2,
                                     simd_isa::avx512};
    simd_isa best = simd_isa::scalar;
    for (simd_isa isa : by_width)
        if (usable(isa)) best = isa;
    if (const char* env = std::getenv("KEYBLEND_ISA"))
        for (simd_isa isa : by_width)
            if (std::strcmp(env, to_string(isa)) == 0 && usable(isa)) best = isa;
    const kernel_table* expected = nullptr; // a force_kernel_isa in between wins
    chosen.compare_exchange_strong(expected, table_of(best), std::memory_order_acq_rel);
    return chosen.load(std::memory_order_acquire);
}

inline const kernel_table& active() {
    const kernel_table* t = chosen.load(std::memory_order_acquire);
    return t ? *t : *choose();
}

} // namespace kernels_choice
} // namespace impl

using impl::kernels_choice::active;

status sampling_job::run() const { return active().sample(*this); }
status blend_job::run() const { return active().blend(*this); }
status make_additive(const local_pose& pose, const local_pose& reference, local_pose& delta) {
    return active().additive(pose, reference, delta);
}
status local_to_model_job::run() const { return active().hierarchy(*this); }
status palette_job::run() const { return active().palette(*this); }
status morph_job::run() const { return active().morph(*this); }
status two_bone_ik_batch_job::run() const { return active().two_bone_ik(*this); }
status aim_ik_batch_job::run() const { return active().aim_ik(*this); }

simd_isa kernel_isa() { return active().isa; }
bool kernel_isa_supported(simd_isa isa) { return impl::kernels_choice::usable(isa); }
status force_kernel_isa(simd_isa isa) {
    if (!impl::kernels_choice::usable(isa))
        return impl::make_error(errc::unsupported,
                                std::string("force_kernel_isa: ") +
                                    (impl::kernels_choice::table_of(isa) ? "this CPU does not run the "
                                                                         : "keyblend::kernels has no ") +
                                    to_string(isa) + " kernels");
    impl::kernels_choice::chosen.store(impl::kernels_choice::table_of(isa), std::memory_order_release);
    return {};
}

namespace impl {
namespace kernels_api {
status run(const skinning_job<std::uint16_t>& job) { return active().skin16(job); }
status run(const skinning_job<std::uint8_t>& job) { return active().skin8(job); }
status run(const dual_quaternion_skinning_job<std::uint16_t>& job) { return active().dual_quaternion16(job); }
status run(const dual_quaternion_skinning_job<std::uint8_t>& job) { return active().dual_quaternion8(job); }
std::size_t first_group(const skinning_job<std::uint16_t>& job, std::size_t begin) {
    return active().first_group16(job, begin);
}
std::size_t first_group(const skinning_job<std::uint8_t>& job, std::size_t begin) {
    return active().first_group8(job, begin);
}
} // namespace kernels_api
} // namespace impl

} // namespace keyblend
