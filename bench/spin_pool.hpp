// A persistent pool of spinning worker threads, for the benchmarks that time work split over
// threads (bench_skin's skin_parallel, the crowds' two halves).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#endif

namespace kbbench {

/// Runs task(0) .. task(count - 1): the caller task 0 (and any beyond the workers), each worker one
/// more. Workers spin on a generation counter between calls, and the caller spins until they are
/// done: a benchmark wants the wake-up off the clock (a parked thread under a hypervisor takes tens
/// of microseconds to run again, in every call; an engine would park them between frames). Both
/// yield after a while, so that a machine with fewer free cores than threads still makes progress.
class spin_pool {
public:
    explicit spin_pool(std::size_t workers) {
        for (std::size_t i = 0; i < workers; ++i)
            threads_.emplace_back([this, i] { loop(i + 1); });
    }
    ~spin_pool() {
        stop_ = true;
        generation_.fetch_add(1);
        for (std::thread& t : threads_) t.join();
    }
    spin_pool(const spin_pool&) = delete;
    spin_pool& operator=(const spin_pool&) = delete;

    void operator()(std::size_t count, const std::function<void(std::size_t)>& task) {
        task_ = &task;
        count_ = count;
        pending_.store(threads_.size());
        generation_.fetch_add(1, std::memory_order_release);
        task(0);
        for (std::size_t i = threads_.size() + 1; i < count; ++i) task(i);
        for (unsigned spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) pause(spins);
    }

private:
    static void pause(unsigned spins) {
        if (spins < 4096) {
#if defined(__SSE2__) || defined(_M_X64)
            _mm_pause();
#endif
        } else {
            std::this_thread::yield();
        }
    }
    void loop(std::size_t index) {
        std::uint64_t seen = 0;
        for (;;) {
            std::uint64_t g;
            for (unsigned spins = 0; (g = generation_.load(std::memory_order_acquire)) == seen; ++spins) pause(spins);
            seen = g;
            if (stop_) return;
            if (index < count_) (*task_)(index);
            pending_.fetch_sub(1, std::memory_order_release);
        }
    }
    std::vector<std::thread> threads_;
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<std::size_t> pending_{0};
    std::atomic<bool> stop_{false};
    const std::function<void(std::size_t)>* task_ = nullptr;
    std::size_t count_ = 0;
};

} // namespace kbbench
