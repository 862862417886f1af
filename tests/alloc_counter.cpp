// Counts this thread's heap allocations, so tests can prove that a per-frame call allocates
// nothing (kbtest::allocation_count). Replaces the global operator new / delete for the test
// programs only; allocation itself still goes to malloc (and so through the sanitizers).
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
thread_local std::size_t allocations = 0;

void* allocate(std::size_t size, std::size_t alignment) {
    ++allocations;
    if (size == 0) size = 1;
    void* p = nullptr;
    if (alignment <= alignof(std::max_align_t)) p = std::malloc(size);
    else if (posix_memalign(&p, alignment, size) != 0) p = nullptr;
    return p;
}

void* allocate_or_fail(std::size_t size, std::size_t alignment) {
    if (void* p = allocate(size, alignment)) return p;
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    throw std::bad_alloc();
#else
    std::abort(); // what operator new does without exceptions
#endif
}
} // namespace

namespace kbtest {
std::size_t allocation_count() { return allocations; }
} // namespace kbtest

void* operator new(std::size_t size) { return allocate_or_fail(size, 0); }
void* operator new[](std::size_t size) { return allocate_or_fail(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) { return allocate_or_fail(size, std::size_t(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return allocate_or_fail(size, std::size_t(a)); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): left to the runtime, they
// would allocate with its own operator new and be freed here, which ASan reports as a mismatch.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate(size, 0); }
void* operator new[](std::size_t size, const std::nothrow_t& t) noexcept { return operator new(size, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
