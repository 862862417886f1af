// keyblend — skin_parallel on std::threads: the convenience overload for programs without a job
// system. Not included by keyblend.hpp (so that no file pays for <thread> unless it asks); link
// Threads::Threads (CMake: find_package(Threads) + target_link_libraries(... Threads::Threads)).
//
// SPDX-License-Identifier: MIT
#pragma once

#include "skin.hpp"

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace keyblend {
inline namespace KEYBLEND_BUILD_NS {

/// skin_parallel (skin.hpp) on `thread_count` std::threads: the calling thread runs the first
/// chunk and spawns thread_count - 1 threads for the others (created and joined in this call: for
/// meshes of ~50k vertices and more; smaller ones gain more from a persistent pool through the
/// executor overload). thread_count 0 is taken as std::thread::hardware_concurrency() (at least
/// 1). Same checks, chunks and results as the executor overload; Config as skinning_job::run.
template <class Config = any_skinning, class Job>
status skin_parallel(const Job& job, std::size_t thread_count = 0) {
    if (thread_count == 0) thread_count = std::max(1u, std::thread::hardware_concurrency());
    return skin_parallel<Config>(job, thread_count, [](std::size_t count, const auto& task) {
        std::vector<std::thread> threads;
        threads.reserve(count - 1);
        for (std::size_t i = 1; i < count; ++i) threads.emplace_back(task, i);
        task(std::size_t(0));
        for (std::thread& t : threads) t.join();
    });
}

} // namespace KEYBLEND_BUILD_NS
} // namespace keyblend
