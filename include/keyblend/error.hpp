// keyblend — error reporting: one result type for loaders and validators, one assertion macro for
// preconditions inside hot loops.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

// KEYBLEND_NO_EXCEPTIONS: defined when the compiler has exceptions switched off (-fno-exceptions,
// MSVC without /EHsc), or by a program that wants the no-exception behaviour anyway. keyblend
// itself never needs exceptions: loaders and validators report bad input in a `result`. Only two
// things throw when exceptions exist, and call the fatal handler instead without them (see
// set_fatal_handler): `result::value()` on a result holding an error, and a failed KEYBLEND_ASSERT
// in a build with KEYBLEND_ENABLE_ASSERTS. Define it the same way in every file of a program.
#if !defined(KEYBLEND_NO_EXCEPTIONS) &&                                                            \
    !(defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND))
#define KEYBLEND_NO_EXCEPTIONS
#endif

namespace keyblend {

/// What went wrong, as a value a program can branch on. The `error::message` says it for people.
enum class errc {
    invalid_argument,    ///< a parameter is outside its documented domain
    empty,               ///< a track, clip, skeleton or buffer that must hold data holds none
    unsorted,            ///< key times go backwards
    duplicate,           ///< two keys share a time, or two joints share a name
    non_finite,          ///< NaN or infinity in a time, value, weight or matrix
    not_normalized,      ///< a quaternion or weight set that must be unit/sum to one is not
    out_of_range,        ///< an index (joint, parent, vertex, key) points outside its array
    size_mismatch,       ///< two arrays that must have the same length do not
    cycle,               ///< a parent chain loops
    not_found,           ///< a name (clip, joint, frame) does not exist
    parse_error,         ///< a file is malformed (message says what was expected and where)
    unsupported,         ///< well-formed input this library does not handle
    io_error,            ///< reading a file failed
    device_error,        ///< a graphics API call failed (the message names the call and its code)
};

/// A failure: a code and a message that names the place (file, line:column or byte offset, joint or
/// key index). `index` repeats the key/joint/vertex index named in the message when there is one.
struct error {
    static constexpr std::size_t no_index = static_cast<std::size_t>(-1);

    errc code = errc::invalid_argument;
    std::string message;
    std::size_t index = no_index;
};

/// Thrown by `result::value()` on a result that holds an error (when exceptions are on; see
/// KEYBLEND_NO_EXCEPTIONS). Never thrown by the library on its own.
class bad_result_access : public std::runtime_error {
public:
    explicit bad_result_access(const keyblend::error& e) : std::runtime_error(e.message), error_(e) {}
    const keyblend::error& error() const noexcept { return error_; }

private:
    keyblend::error error_;
};

/// Called, in a build without exceptions, when a program uses the value of a result that holds an
/// error or when a KEYBLEND_ASSERT fails (with KEYBLEND_ENABLE_ASSERTS); `e` says what (for an
/// assertion: errc::invalid_argument, and "file:line: message (condition)"). Both are bugs in the
/// calling program, so keyblend does not continue: when the handler returns, std::abort() follows.
/// A handler may log, break into a debugger, or leave by longjmp or by ending the process.
using fatal_handler = void (*)(const error& e);

/// Installs `handler` (nullptr restores the default, which writes "keyblend: <message>" to stderr)
/// and returns the previous one. Thread-safe; the handler is process-wide.
inline fatal_handler set_fatal_handler(fatal_handler handler) noexcept;

namespace impl {
inline std::atomic<fatal_handler>& fatal_handler_slot() noexcept {
    static std::atomic<fatal_handler> slot{nullptr};
    return slot;
}

/// Reports `e` through the fatal handler and aborts.
[[noreturn]] inline void fatal(const error& e) noexcept {
    if (fatal_handler h = fatal_handler_slot().load()) {
        h(e);
    } else {
        std::fputs("keyblend: ", stderr);
        std::fputs(e.message.c_str(), stderr);
        std::fputc('\n', stderr);
        std::fflush(stderr);
    }
    std::abort();
}

[[noreturn]] inline void bad_access(const error& e) {
#if defined(KEYBLEND_NO_EXCEPTIONS)
    fatal(e);
#else
    throw bad_result_access(e);
#endif
}
} // namespace impl

inline fatal_handler set_fatal_handler(fatal_handler handler) noexcept {
    return impl::fatal_handler_slot().exchange(handler);
}

/// A value or an error. Loaders and validators return it; nothing in keyblend throws on bad data.
///
///     auto r = keyblend::io::load_xfile("tiny.x");
///     if (!r) { std::cerr << r.error().message << '\n'; return 1; }
///     use(*r);
template <class T>
class [[nodiscard]] result {
public:
    using value_type = T;

    result(const T& value) : state_(std::in_place_index<0>, value) {}
    result(T&& value) : state_(std::in_place_index<0>, std::move(value)) {}
    result(keyblend::error e) : state_(std::in_place_index<1>, std::move(e)) {}

    bool has_value() const noexcept { return state_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    /// The value. When there is none: throws `bad_result_access` (carrying the error), or without
    /// exceptions reports the error through the fatal handler and aborts.
    T& value() & { check(); return std::get<0>(state_); }
    const T& value() const& { check(); return std::get<0>(state_); }
    T&& value() && { check(); return std::get<0>(std::move(state_)); }

    /// Precondition: has_value().
    T& operator*() & { return std::get<0>(state_); }
    const T& operator*() const& { return std::get<0>(state_); }
    T&& operator*() && { return std::get<0>(std::move(state_)); }
    T* operator->() { return &std::get<0>(state_); }
    const T* operator->() const { return &std::get<0>(state_); }

    /// Precondition: !has_value().
    const keyblend::error& error() const { return std::get<1>(state_); }

private:
    void check() const {
        if (!has_value()) impl::bad_access(std::get<1>(state_));
    }
    std::variant<T, keyblend::error> state_;
};

/// Success, or an error: what validators and every job's run() return. Success is one null
/// pointer (run() returns it every frame); the error, when there is one, is held on the heap.
template <>
class [[nodiscard]] result<void> {
public:
    result() noexcept = default;
    result(keyblend::error e) : error_(std::make_unique<keyblend::error>(std::move(e))) {}
    result(const result& other) : error_(copy_of(other)) {}
    result(result&&) noexcept = default;
    result& operator=(const result& other) {
        error_ = copy_of(other); // copied before the old error is freed: self-assignment is safe
        return *this;
    }
    result& operator=(result&&) noexcept = default;

    bool has_value() const noexcept { return !error_; }
    explicit operator bool() const noexcept { return !error_; }
    /// Nothing on success; on an error, what `result<T>::value()` does.
    void value() const {
        if (error_) impl::bad_access(*error_);
    }
    /// Precondition: !has_value().
    const keyblend::error& error() const { return *error_; }

private:
    static std::unique_ptr<keyblend::error> copy_of(const result& r) {
        return r.error_ ? std::make_unique<keyblend::error>(*r.error_) : nullptr;
    }
    std::unique_ptr<keyblend::error> error_;
};

using status = result<void>;

namespace impl {
/// Builds an error; `index` is optional.
inline error make_error(errc code, std::string message, std::size_t index = error::no_index) {
    return error{code, std::move(message), index};
}

/// A float for an error message, with enough digits to tell it from its neighbours.
inline std::string float_to_string(double v, int digits = 9) {
    char text[40];
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    return text;
}
inline std::string float_to_string(float v, int digits = 9) {
    return float_to_string(static_cast<double>(v), digits);
}
} // namespace impl

// ---------------------------------------------------------------------------------------------
// KEYBLEND_ASSERT(condition, message): preconditions inside hot loops.
//
// Compiled out unless KEYBLEND_ENABLE_ASSERTS is defined. Then a failed condition throws
// keyblend::assertion_failure (the tests build this way), or, without exceptions, calls the fatal
// handler (set_fatal_handler) and aborts. A program may instead define KEYBLEND_ASSERT itself,
// before including any keyblend header, to route failures elsewhere. Every function documents what
// it does when its preconditions are broken with asserts compiled out: keyblend never relies on an
// assertion to stay within memory bounds.
// ---------------------------------------------------------------------------------------------

/// Thrown by the default assertion handler when exceptions are on.
class assertion_failure : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

namespace impl {
[[noreturn]] inline void assert_failed(const char* condition, const char* message, const char* file,
                                       int line) {
    std::string what = std::string(file) + ":" + std::to_string(line) + ": " + message + " (" +
                       condition + ")";
#if defined(KEYBLEND_NO_EXCEPTIONS)
    fatal(make_error(errc::invalid_argument, std::move(what)));
#else
    throw assertion_failure(what);
#endif
}
} // namespace impl

} // namespace keyblend

#ifndef KEYBLEND_ASSERT
#if defined(KEYBLEND_ENABLE_ASSERTS)
#define KEYBLEND_ASSERT(condition, message)                                                        \
    ((condition) ? static_cast<void>(0)                                                            \
                 : ::keyblend::impl::assert_failed(#condition, message, __FILE__, __LINE__))
#else
#define KEYBLEND_ASSERT(condition, message) static_cast<void>(0)
#endif
#endif
