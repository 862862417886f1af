// keyblend — MSZIP inflation for the `tzip` / `bzip` .X encodings, through zlib. Included by
// xfile.impl.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
//
// Layout (REFERENCE.md §3, checked on test_cube_compressed.x and wall_with_pillars.x): the 16-byte
// header, a uint32 with the total uncompressed size (header included), then blocks of
// uint16 uncompressed size, uint16 compressed size (counting the 2 signature bytes), the bytes
// 'CK' and one complete raw deflate stream. Each block inflates with the previous block's output
// as its preset dictionary.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace keyblend {
namespace io {
namespace impl {

/// Inflates a compressed .X file (`file`, `size`: the whole file). `out` receives the 16 header
/// bytes followed by the inflated data, so an offset in `out` is an offset in the decompressed
/// stream. Returns an empty string on success; otherwise what went wrong, starting with
/// "byte offset N: " (an offset in the compressed file), with `out` holding the blocks that
/// inflated before the problem.
inline std::string inflate_mszip(const unsigned char* file, std::size_t size,
                                 std::vector<char>& out) {
    const auto u16 = [file](std::size_t p) {
        return static_cast<std::uint32_t>(file[p] | (file[p + 1] << 8));
    };
    const auto at = [](std::size_t p) { return "byte offset " + std::to_string(p) + ": "; };

    out.assign(reinterpret_cast<const char*>(file),
               reinterpret_cast<const char*>(file) + std::min<std::size_t>(size, 16));
    if (size < 20)
        return at(std::min<std::size_t>(size, 16)) +
               "expected the uncompressed size (4 bytes), found the end of the file";
    const std::size_t total = u16(16) | (std::size_t{u16(18)} << 16);
    if (total < 16)
        return at(16) + "the uncompressed size " + std::to_string(total) +
               " is smaller than the 16-byte header";
    // No block inflates to more than 65535 bytes, so the input bounds what is worth reserving.
    out.reserve(std::min(total, 16 + (size / 6 + 1) * std::size_t{65535}));

    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return at(20) + "zlib could not start inflating";
    std::string problem;
    std::size_t p = 20;
    std::size_t previous = 0, previous_size = 0; // the last block's output, within `out`
    for (std::size_t block = 0; p < size; ++block) {
        const std::string name = "block " + std::to_string(block) + ": ";
        if (size - p < 6) {
            problem = at(p) + name + "expected a 6-byte block header, found the end of the file";
            break;
        }
        const std::size_t raw = u16(p), packed = u16(p + 2);
        if (file[p + 4] != 'C' || file[p + 5] != 'K') {
            problem = at(p + 4) + name + "expected the block signature 'CK'";
            break;
        }
        if (packed < 2 || packed - 2 > size - p - 6) {
            problem = at(p + 2) + name + "compressed size " + std::to_string(packed) +
                      (packed < 2 ? " is too small to hold the 'CK' signature"
                                  : " runs past the end of the file");
            break;
        }
        if (raw > total - std::min(total, out.size())) {
            problem = at(p) + name + "its " + std::to_string(raw) +
                      " bytes run past the uncompressed size " + std::to_string(total);
            break;
        }
        inflateReset(&zs);
        if (previous_size > 0 &&
            inflateSetDictionary(&zs, reinterpret_cast<const Bytef*>(out.data() + previous),
                                 static_cast<uInt>(previous_size)) != Z_OK) {
            problem = at(p) + name + "zlib refused the previous block as dictionary";
            break;
        }
        const std::size_t start = out.size();
        out.resize(start + raw);
        zs.next_in = const_cast<Bytef*>(file + p + 6);
        zs.avail_in = static_cast<uInt>(packed - 2);
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + start);
        zs.avail_out = static_cast<uInt>(raw);
        const int rc = inflate(&zs, Z_FINISH);
        const std::size_t produced = raw - zs.avail_out;
        if (rc != Z_STREAM_END || produced != raw) {
            out.resize(start);
            if (rc == Z_STREAM_END)
                problem = at(p) + name + "inflates to " + std::to_string(produced) +
                          " bytes, its header says " + std::to_string(raw);
            else if (rc == Z_BUF_ERROR && zs.avail_out == 0)
                problem = at(p) + name + "inflates to more than the " + std::to_string(raw) +
                          " bytes its header says";
            else
                problem = at(p + 6) + name + "corrupt deflate data" +
                          (zs.msg ? std::string(" (zlib: ") + zs.msg + ")" : std::string());
            break;
        }
        previous = start;
        previous_size = raw;
        p += 4 + packed;
    }
    inflateEnd(&zs);
    if (problem.empty() && out.size() != total)
        problem = at(p) + "the blocks inflate to " + std::to_string(out.size()) +
                  " bytes (header included), the header says " + std::to_string(total);
    return problem;
}

} // namespace impl
} // namespace io
} // namespace keyblend
