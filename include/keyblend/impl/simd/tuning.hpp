// keyblend — the choices the kernels make per CPU rather than per instruction set, in one table,
// each with its reason. Internal.
//
// SPDX-License-Identifier: MIT
//
// | choice | where | chosen when | why |
// |---|---|---|---|
// | skinning 2-4 slots as quads (`prefer_quads`) | AVX-512 skinning kernels, packed streams without tangents | the CPU runs 512-bit operations at full width (Intel; AMD from family 1Ah, Zen 5); KEYBLEND_SKIN_QUADS=0/1 overrides | a quad blends each vertex's matrix whole in one 512-bit register: 17-25% faster at 2 and 4 influences on Zen 5, 22% and 56% at 2 and 4 influences on an Intel Xeon of family 6 model 207; on Zen 4, which splits each 512-bit operation in two, eight lanes of floats are as fast or faster (0-4%) |
// | local-to-model steps of up to 4 joints (`model_schedule::steps`) | AVX-512 local-to-model | decided per skeleton when it is built, by a cost model: where the steps take fewer cycles than the two runs (14 per step against 11 per joint on the longer run) | the steps issue one 512-bit product for up to four independent joints; chains of one joint each gain nothing |
// | 8 lanes, not 16, for AVX-512 skinning (`skin::widest`, impl/skin/lanes.hpp) | AVX-512 skinning kernels | always | 16 lanes need one more transpose stage and cross-lane permutes for packed xyz; measured 4-43% slower on Zen 4 |
// | one-slot groups as quads | AVX-512 skinning kernels, packed streams without tangents | always | one palette matrix per vertex, no blend: two quads skip the transpose into lanes of floats (bench_skin, 1624 vertices, positions and normals, Zen 4: 4-9% less time than 8 lanes) |
// | quads blend one slot or all K, not each quad's last used slot | AVX-512 quads with unused slots | always | blending up to each quad's last used slot saves more time on meshes like Testwuson's but inlines another blend per count (57% more compile time for a fixed_skinning<4> file) |
// | quads' streams by two overlapping exact 512-bit accesses, not masked ones | AVX-512 quads | always | masked 512-bit accesses of each quad's 48 bytes varied from 15% slower to 12% faster than eight lanes between benchmarks on Zen 5; exact accesses are steadily faster |
// | two one-slot groups per step, both loaded first | 8-lane skinning, one influence | always | a group's chain from joint loads to stores is long next to its work; a second group overlaps it (5% on Zen 4). With 2 or more slots the blends fill the core and two groups' registers do not fit in 32 |
// | skip a group's zero-weight trailing slots (`skip_zero_slots`) | 8-lane kernels, loader's layout, 2-4 stored slots | per mesh, from 8 vertices spread over it: any with its last slot at weight 0 | skipping costs each group K more loads and a choice among K blends (5-8% slower with every slot used, Zen 4); meshes with unused slots gain (Testwuson's 4 slots: 15% less time) |
// | per-vertex counts by blocks of 64 vertices | skinning with influence_counts | always | per group of 8, scattered counts made many short runs of the strided kernels (20% slower than ignoring the counts); by 64, scattered counts cost what all k cost and clustered ones gain (~10% on a tiny.x-like mix) |
// | aligned palette copy (`palette_copy_limit`) | AVX2 and AVX-512 skinning | palette of at most 128 matrices not aligned to the register, at least 4 vertices per matrix | a misaligned 32-byte palette load straddles a cache line one time in two (~10% slower), every 64-byte one does; copying 128 matrices costs about 50 vertices |
// | align the outputs rather than the inputs | AVX2 and AVX-512 skinning | where streams are 16 bytes apart modulo 32 | a store that straddles cache lines costs more than a load (8% on Zen 4, AVX-512, 1624 vertices) |
// | non-temporal stores only 32 bytes at a time | AVX2 and AVX-512 skinning; never SSE2 | streaming stores | split into 16-byte stores they ran at half the speed of ordinary stores |
// | streaming stores from 8 MiB of output (`streaming_store_threshold`) | AVX2 and AVX-512 skinning | output of a job (vertices x bytes written) at or above the threshold | output larger than the caches bypasses them; below, the next stage reads it from cache |
#pragma once

#include "cpu.hpp"

#include <atomic>
#include <cstdlib>

namespace keyblend {
namespace impl {
namespace tuning {

/// Whether the AVX-512 skinning kernels take 2 to 4 slots as quads (see the table above): 1 yes,
/// 0 no, -1 not decided yet. Decided at the first use from the CPU, unless the environment
/// variable KEYBLEND_SKIN_QUADS is "0" or "1". Both give the same values (the same bits, up to the
/// sign of a zero where slots of weight 0 are left out). Tests store 0 or 1 to compare the two.
inline std::atomic<int> quads_choice{-1};

inline bool prefer_quads() {
    int q = quads_choice.load(std::memory_order_relaxed);
    if (q < 0) {
        q = cpu::full_width_512() ? 1 : 0;
        if (const char* env = std::getenv("KEYBLEND_SKIN_QUADS"))
            if ((env[0] == '0' || env[0] == '1') && env[1] == '\0') q = env[0] - '0';
        int expected = -1; // a test's choice in between wins
        quads_choice.compare_exchange_strong(expected, q, std::memory_order_relaxed);
        q = quads_choice.load(std::memory_order_relaxed);
    }
    return q == 1;
}

} // namespace tuning
} // namespace impl
} // namespace keyblend
