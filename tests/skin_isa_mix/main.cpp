// Files compiled for different instruction sets (baseline x86-64, x86-64-v3 = AVX2, x86-64-v4 =
// AVX-512), and one built for the compiled kernels (KEYBLEND_KERNELS_LIBRARY, whose kernels
// kernels.cpp defines), without inlining across calls, linked into this program: each file's
// job.run() must run its own kernels, the compiled ones the widest the CPU runs. Without the
// instruction-set namespaces the linker would keep one copy of run() and of each kernel, and every
// file would run the same ones (an AVX-512 kernel in the baseline file, on some links).
#include <doctest/doctest.h>

#include "record.hpp"

#include <string>

mix_result skin_baseline();
mix_result skin_avx2();
mix_result skin_avx512();
mix_result skin_dispatch();

namespace {
keyblend::simd_isa seen_isa = keyblend::simd_isa::scalar;
std::size_t seen_width = 0;
std::size_t calls = 0;

mix_result run(mix_result (*f)()) {
    calls = 0;
    mix_result r = f();
    r.ran = seen_isa;
    r.width = seen_width;
    CHECK(calls >= 1);
    return r;
}

bool cpu_has_avx2() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
}
bool cpu_has_avx512() {
    return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
}
} // namespace

void record_kernel(int isa, std::size_t width) {
    seen_isa = keyblend::simd_isa(isa);
    seen_width = width;
    ++calls;
}

TEST_CASE("files built for different instruction sets each run their own skinning kernels") {
    using keyblend::simd_isa;
    const mix_result base = run(skin_baseline);
    CHECK(base.ok);
    CHECK(base.reported == simd_isa::sse2);
    CHECK(base.ran == simd_isa::sse2);
    CHECK(base.width == 4);

    const mix_result dispatched = run(skin_dispatch);
    CHECK(dispatched.ok);
    const simd_isa widest = cpu_has_avx512() ? simd_isa::avx512 : cpu_has_avx2() ? simd_isa::avx2 : simd_isa::sse2;
    CHECK(dispatched.reported == widest);
    CHECK(int(dispatched.ran) == int(widest));
    CHECK(dispatched.width == 8);

    if (cpu_has_avx2()) {
        const mix_result avx2 = run(skin_avx2);
        CHECK(avx2.ok);
        CHECK(avx2.reported == simd_isa::avx2);
        CHECK(avx2.ran == simd_isa::avx2);
        CHECK(avx2.width == 8);
    } else {
        MESSAGE("no AVX2 on this CPU: the AVX2 file is linked but not run");
    }
    if (cpu_has_avx512()) {
        const mix_result avx512 = run(skin_avx512);
        CHECK(avx512.ok);
        CHECK(avx512.reported == simd_isa::avx512);
        CHECK(avx512.ran == simd_isa::avx512);
        CHECK(avx512.width == 8); // 8 lanes in AVX-512 registers too (impl/skin/lanes.hpp: widest)
    } else {
        MESSAGE("no AVX-512 on this CPU: the AVX-512 file is linked but not run");
    }
    // And the baseline file again, after the wider ones ran: still its own kernels.
    const mix_result again = run(skin_baseline);
    CHECK(again.ran == simd_isa::sse2);
}
