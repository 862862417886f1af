#include <keyblend/error.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#define KBTEST_HAVE_FORK 1
#endif

using namespace keyblend;

TEST_CASE("result holds a value or an error") {
    result<int> ok = 7;
    CHECK(ok.has_value());
    CHECK(static_cast<bool>(ok));
    CHECK(*ok == 7);
    CHECK(ok.value() == 7);

    result<int> bad = error{errc::not_found, "no clip named 'Run'", 3};
    CHECK_FALSE(bad.has_value());
    CHECK(bad.error().code == errc::not_found);
    CHECK(bad.error().index == 3);
    CHECK(bad.error().message == "no clip named 'Run'");
#if !defined(KEYBLEND_NO_EXCEPTIONS)
    CHECK_THROWS_AS(bad.value(), bad_result_access);
    try {
        (void)bad.value();
    } catch (const bad_result_access& e) {
        CHECK(std::string(e.what()) == "no clip named 'Run'");
        CHECK(e.error().code == errc::not_found);
    }
#endif
}

TEST_CASE("result moves its value out") {
    result<std::string> r = std::string(100, 'x');
    std::string s = std::move(r).value();
    CHECK(s.size() == 100);
}

TEST_CASE("status is success or an error") {
    status ok;
    CHECK(ok.has_value());
    ok.value(); // returns: nothing to report
    status bad = impl::make_error(errc::unsorted, "key 2 is before key 1", 2);
    CHECK_FALSE(bad);
    CHECK(bad.error().code == errc::unsorted);
    CHECK(bad.error().index == 2);
#if !defined(KEYBLEND_NO_EXCEPTIONS)
    CHECK_THROWS_AS(bad.value(), bad_result_access);
#endif
    CHECK(impl::make_error(errc::empty, "x").index == error::no_index);
}

TEST_CASE("status copies, moves and assigns its error, and success is one pointer") {
    static_assert(sizeof(status) == sizeof(void*), "run() returns success every frame: it stays one pointer");
    const status bad = impl::make_error(errc::out_of_range, "bone 3 'hand': joint 40 is outside the pose", 3);
    status copy = bad; // a deep copy: both hold the error
    CHECK_FALSE(copy);
    CHECK_FALSE(bad);
    CHECK(copy.error().message == bad.error().message);
    CHECK(&copy.error() != &bad.error());
    CHECK(copy.error().index == 3);

    status moved = std::move(copy);
    CHECK_FALSE(moved);
    CHECK(moved.error().code == errc::out_of_range);

    status ok;
    moved = ok; // copy-assigning success clears the error
    CHECK(moved);
    moved = bad;
    CHECK_FALSE(moved);
    CHECK(moved.error().message == "bone 3 'hand': joint 40 is outside the pose");
    const status& same = moved;
    moved = same; // self-assignment keeps it
    CHECK_FALSE(moved);
    CHECK(moved.error().index == 3);
    moved = status{};
    CHECK(moved.has_value());
}

TEST_CASE("float_to_string prints enough digits to tell floats apart") {
    CHECK(impl::float_to_string(0.1f) == "0.100000001");
    CHECK(impl::float_to_string(1.0f) == "1");
    CHECK(impl::float_to_string(0.70710678f, 6) == "0.707107");
    CHECK(impl::float_to_string(1e300) == "1e+300");
}

#if !defined(KEYBLEND_NO_EXCEPTIONS)
TEST_CASE("KEYBLEND_ASSERT throws assertion_failure when asserts are enabled (as in the tests)") {
    CHECK_NOTHROW(KEYBLEND_ASSERT(1 + 1 == 2, "arithmetic"));
    CHECK_THROWS_AS(KEYBLEND_ASSERT(1 + 1 == 3, "arithmetic"), assertion_failure);
    try {
        KEYBLEND_ASSERT(false, "the message");
    } catch (const assertion_failure& e) {
        CHECK(std::string(e.what()).find("the message") != std::string::npos);
        CHECK(std::string(e.what()).find("test_error.cpp") != std::string::npos);
    }
}
#endif

#if defined(KBTEST_HAVE_FORK)
namespace {
struct child_outcome {
    bool aborted = false; // ended by SIGABRT
    std::string output;   // what it wrote to stderr
};

/// `output` without the last line when a user-mode emulator wrote it: qemu-user (ctest's
/// emulator in a cross build) reports a guest killed by a signal on the same stderr, after
/// everything the guest wrote ("qemu: uncaught target signal 6 (Aborted) - core dumped").
std::string without_emulator_report(std::string output) {
    const std::string report = "qemu: uncaught target signal ";
    const std::size_t at = output.rfind(report);
    const bool line_of_its_own = at != std::string::npos && (at == 0 || output[at - 1] == '\n') &&
                                 output.find('\n', at) == output.size() - 1;
    if (line_of_its_own) output.erase(at);
    return output;
}

/// Runs `body` in a child process with stderr captured: the fatal paths end the process.
template <class Body>
child_outcome run_in_child(Body body) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        body();
        _exit(0);
    }
    close(fds[1]);
    child_outcome out;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.output.append(buf, std::size_t(n));
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    out.aborted = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
    if (out.aborted) out.output = without_emulator_report(out.output);
    return out;
}

void custom_handler(const error& e) {
    const std::string line = "custom handler: " + e.message + "\n";
    (void)!write(2, line.data(), line.size());
}
} // namespace

TEST_CASE("the fatal handler reports the error, then the process aborts") {
    SUBCASE("default handler: the message on stderr") {
        const child_outcome o =
            run_in_child([] { impl::fatal(impl::make_error(errc::not_found, "no set 'Run'")); });
        CHECK(o.aborted);
        CHECK(o.output == "keyblend: no set 'Run'\n");
    }
    SUBCASE("a handler that returns is followed by abort; nullptr restores the default") {
        const child_outcome o = run_in_child([] {
            CHECK((set_fatal_handler(custom_handler) == nullptr));
            CHECK((set_fatal_handler(custom_handler) == &custom_handler));
            impl::fatal(impl::make_error(errc::empty, "empty clip"));
        });
        CHECK(o.aborted);
        CHECK(o.output == "custom handler: empty clip\n");
        const child_outcome d = run_in_child([] {
            set_fatal_handler(custom_handler);
            set_fatal_handler(nullptr);
            impl::fatal(impl::make_error(errc::empty, "again"));
        });
        CHECK(d.output == "keyblend: again\n");
    }
#if defined(KEYBLEND_NO_EXCEPTIONS)
    SUBCASE("without exceptions, value() of an error goes to the handler") {
        const child_outcome o = run_in_child([] {
            result<int> bad = error{errc::not_found, "no clip named 'Run'", 3};
            (void)bad.value();
        });
        CHECK(o.aborted);
        CHECK(o.output == "keyblend: no clip named 'Run'\n");
        const child_outcome s = run_in_child([] {
            status bad = impl::make_error(errc::unsorted, "key 2 is before key 1", 2);
            bad.value();
        });
        CHECK(s.aborted);
        CHECK(s.output == "keyblend: key 2 is before key 1\n");
    }
#if defined(KEYBLEND_ENABLE_ASSERTS)
    SUBCASE("without exceptions, a failed KEYBLEND_ASSERT goes to the handler") {
        const child_outcome o = run_in_child([] { KEYBLEND_ASSERT(1 + 1 == 3, "arithmetic"); });
        CHECK(o.aborted);
        CHECK(o.output.find("keyblend: ") == 0);
        CHECK(o.output.find("test_error.cpp") != std::string::npos);
        CHECK(o.output.find("arithmetic (1 + 1 == 3)") != std::string::npos);
    }
#endif
#endif
}
#endif
