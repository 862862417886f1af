// keyblend — reading a file into memory in one read, for every reader of files (the loaders, the
// package reader). Internal.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "../error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace keyblend {
namespace impl {

/// The first `limit` bytes of the file at `path` (all of it when shorter), in one read, into the
/// memory `room(n)` returns for them (`room` is called once, n may be 0; it returns nullptr when
/// it cannot allocate n > 0 bytes). `size` is n. Errors (errc::io_error, the message "NAME:
/// REASON", NAME being how the caller names the file): the file cannot be opened, or read (a
/// directory: "cannot read: Is a directory" — the first byte is read before anything is
/// allocated, because a directory opens and reports an endless size on some systems), is larger
/// than half the address space, the memory cannot be allocated, or fewer bytes arrive than its
/// size said.
template <class Room>
status read_file(const std::string& path, const std::string& name, std::uint64_t limit, Room&& room,
                 std::size_t& size) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return make_error(errc::io_error, name + ": cannot open: " + std::strerror(errno));
    const auto fail = [&](const std::string& why) {
        std::fclose(f);
        return status(make_error(errc::io_error, name + ": " + why));
    };
    errno = 0;
    const int first = std::fgetc(f);
    if (first == EOF && std::ferror(f))
        return fail(std::string("cannot read: ") + (errno ? std::strerror(errno) : "read error"));
#if defined(_WIN32)
    const bool seek_end = _fseeki64(f, 0, SEEK_END) == 0;
    const std::int64_t end = seek_end ? _ftelli64(f) : -1;
#else
    const bool seek_end = std::fseek(f, 0, SEEK_END) == 0;
    const std::int64_t end = seek_end ? static_cast<std::int64_t>(std::ftell(f)) : -1;
#endif
    if (end < 0 || std::fseek(f, 0, SEEK_SET) != 0)
        return fail(std::string("cannot read: cannot find its size: ") + std::strerror(errno));
    const std::uint64_t want = std::min<std::uint64_t>(static_cast<std::uint64_t>(end), limit);
    if (want >= std::numeric_limits<std::size_t>::max() / 2) return fail("too large to read into memory");
    const auto n = static_cast<std::size_t>(want);
    unsigned char* bytes = room(n);
    if (bytes == nullptr && n > 0) return fail("cannot allocate " + std::to_string(n) + " bytes to read it");
    const std::size_t got = n == 0 ? 0 : std::fread(bytes, 1, n, f);
    if (got != n)
        return fail("read " + std::to_string(got) + " of " + std::to_string(n) + " bytes" +
                    (std::ferror(f) && errno ? std::string(": ") + std::strerror(errno) : std::string()));
    std::fclose(f);
    size = n;
    return {};
}

/// read_file with the path as the file's name.
template <class Room>
status read_file(const std::string& path, std::uint64_t limit, Room&& room, std::size_t& size) {
    return read_file(path, path, limit, room, size);
}

/// The whole file (read_file without a limit).
template <class Room>
status read_whole_file(const std::string& path, Room&& room, std::size_t& size) {
    return read_file(path, std::numeric_limits<std::uint64_t>::max(), room, size);
}

} // namespace impl
} // namespace keyblend
