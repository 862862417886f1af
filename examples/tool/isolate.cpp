// keyblend — the tool's assimp imports in a process of their own: assimp's importers are not
// hardened (keyblend/assimp.hpp says which of them crash on which input), so on POSIX systems a
// command whose file assimp reads runs in a child process with a memory limit (RLIMIT_AS) and a
// time limit on the import. A crash, an assertion, or an exhausted limit there ends the child,
// not the tool: the tool reports it, naming the file and the importer, and exits with 1.
//
// How: fork; the child lowers its address-space limit, imports (load_model), tells the parent
// through a pipe that the import is done (or that memory ran out), restores the limit and runs
// the command, printing as the tool always does; the parent waits for that word within the time
// limit, then for the child, and exits as it did. Elsewhere (Windows) the command runs in the
// tool's own process.
//
// SPDX-License-Identifier: MIT
#include "keyblend_tool.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#define KEYBLEND_TOOL_ISOLATE 1
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#endif

// Under AddressSanitizer the process reserves terabytes of address space for its shadow memory
// at start, so an address-space limit would fail every allocation: the child then runs with the
// time limit only (ASan's own max_allocation_size_mb bounds single allocations).
#if defined(__SANITIZE_ADDRESS__)
#define KEYBLEND_TOOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KEYBLEND_TOOL_ASAN 1
#endif
#endif

namespace tool {

#ifdef KEYBLEND_TOOL_ISOLATE
namespace {

// The child's end of the pipe (-1 in the parent, and when nothing is isolated), and the address-
// space limit it had before the import's.
int report_fd = -1;
rlimit saved_limit{};
bool limited = false;

void report(char word) {
    if (report_fd < 0) return;
    ssize_t n;
    do {
        n = ::write(report_fd, &word, 1);
    } while (n < 0 && errno == EINTR);
}

/// operator new failed under the limit: say so before bad_alloc is thrown (assimp may catch it
/// and fail with its own message, or the child may end on it).
void out_of_memory() {
    report('M');
    std::set_new_handler(nullptr); // operator new now throws std::bad_alloc
}

const char* signal_name(int s) {
    switch (s) {
    case SIGSEGV: return "SIGSEGV, a bad memory access or a stack overflow";
    case SIGABRT: return "SIGABRT, an assertion failed or the process aborted";
    case SIGBUS: return "SIGBUS, a bad memory access";
    case SIGFPE: return "SIGFPE, an arithmetic error such as a division by zero";
    case SIGILL: return "SIGILL, an illegal instruction";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU, the processor time limit";
    default: return "a signal";
    }
}

double seconds_since(const timespec& start) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return double(now.tv_sec - start.tv_sec) + double(now.tv_nsec - start.tv_nsec) * 1e-9;
}

} // namespace

void import_done() {
    if (limited) setrlimit(RLIMIT_AS, &saved_limit);
    limited = false;
    std::set_new_handler(nullptr);
    report('L');
    if (report_fd >= 0) ::close(report_fd);
    report_fd = -1;
}

int run_isolated(const options& o, int (*command)(const options&)) {
    const std::string who = "keyblend: " + o.file + ": assimp's importer";
    int fds[2];
    if (pipe(fds) != 0) {
        std::fprintf(stderr, "%s could not be started in a process of its own: %s\n", who.c_str(), std::strerror(errno));
        return exit_file;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    timespec start{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    const pid_t child = fork();
    if (child < 0) {
        std::fprintf(stderr, "%s could not be started in a process of its own: %s\n", who.c_str(), std::strerror(errno));
        ::close(fds[0]);
        ::close(fds[1]);
        return exit_file;
    }
    if (child == 0) {
        ::close(fds[0]);
        report_fd = fds[1];
#ifndef KEYBLEND_TOOL_ASAN
        if (getrlimit(RLIMIT_AS, &saved_limit) == 0) {
            rlimit lower = saved_limit;
            const rlim_t bytes = rlim_t(o.max_memory_mib) << 20;
            if (lower.rlim_cur == RLIM_INFINITY || lower.rlim_cur > bytes) lower.rlim_cur = bytes;
            limited = setrlimit(RLIMIT_AS, &lower) == 0;
        }
#endif
        std::set_new_handler(out_of_memory);
        const int code = command(o);
        import_done(); // (when the command failed before the import was done)
        std::fflush(stdout);
        std::fflush(stderr);
        _exit(code);
    }
    ::close(fds[1]);
    // The child's words until the import is done (or the child ends): 'M' memory ran out, 'L' done.
    bool done = false, out_of_memory_seen = false, timed_out = false;
    for (;;) {
        const double left = double(o.max_seconds) - seconds_since(start);
        if (left <= 0.0) {
            timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int ready = poll(&p, 1, static_cast<int>(left * 1000.0) + 1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) continue; // (the loop checks the time)
        char word = 0;
        const ssize_t n = ::read(fds[0], &word, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break; // the child ended, or closed its end
        if (word == 'M') out_of_memory_seen = true;
        if (word == 'L') {
            done = true;
            break;
        }
    }
    ::close(fds[0]);
    if (timed_out) kill(child, SIGKILL);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
        std::fprintf(stderr, "%s did not finish within %g s (--max-seconds): stopped\n", who.c_str(), o.max_seconds);
        return exit_file;
    }
    if (WIFEXITED(status)) {
        // (assimp catches std::bad_alloc and fails with a message of its own, which may not say it.)
        if (WEXITSTATUS(status) != exit_ok && out_of_memory_seen)
            std::fprintf(stderr, "%s ran out of memory (--max-memory %zu MiB)\n", who.c_str(), o.max_memory_mib);
        return WEXITSTATUS(status);
    }
    const int s = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (done)
        std::fprintf(stderr, "keyblend: %s: the command ended on signal %d (%s) after assimp's import\n", o.file.c_str(),
                     s, signal_name(s));
    else if (out_of_memory_seen)
        std::fprintf(stderr, "%s ran out of memory (--max-memory %zu MiB) and ended on signal %d (%s)\n", who.c_str(),
                     o.max_memory_mib, s, signal_name(s));
    else
        std::fprintf(stderr, "%s crashed: signal %d (%s); the file is damaged or something assimp cannot read\n",
                     who.c_str(), s, signal_name(s));
    return exit_file;
}

#else // no fork: the command runs in the tool's own process

void import_done() {}

int run_isolated(const options& o, int (*command)(const options&)) { return command(o); }

#endif

} // namespace tool
