// keyblend — what every loader does with its source: read a whole file, and quote what the file
// says in messages without copying more of it than a message needs. Included by the loaders'
// definitions; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "../../error.hpp"
#include "../../impl/read_file.hpp"
#include "../model.hpp" // KEYBLEND_IO_GLM_LAYOUT

#include <algorithm>
#include <cfloat>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>

namespace keyblend {
namespace io {
inline namespace KEYBLEND_IO_GLM_LAYOUT {
namespace impl {

/// Appends at most `limit` characters of `s` (with "..." when cut), for messages; bytes outside
/// printable ASCII (NUL included, which would cut a C string short) become \\xHH.
inline void append_excerpt(std::string& out, std::string_view s, std::size_t limit = 40) {
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            static const char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (s.size() > limit) out += "...";
}

/// "'name'" with at most `limit` characters of the name, escaped (see append_excerpt): names in
/// messages never copy more than that of what the file says.
inline std::string quoted_excerpt(std::string_view s, std::size_t limit = 64) {
    std::string out = "'";
    append_excerpt(out, s, limit);
    out += "'";
    return out;
}

/// Problems of one kind in one place (an object, the frame rows): the first is described, the
/// others counted, so that a broken file gives one warning per place and kind, not one per value.
struct tally {
    std::size_t count = 0;
    load_warning first;

    /// Counts one more; the first one's warning is made (only then) by `describe`.
    template <class Describe>
    void add(Describe&& describe) {
        if (count++ == 0) first = describe();
    }
    /// The warning to report (when count > 0): the first problem's, ending with `consequence` and
    /// the number of the others; the tally starts over.
    load_warning take(warning_action action, std::string_view consequence) {
        load_warning w = std::move(first);
        w.message += "; ";
        w.message += consequence;
        if (count > 1) w.message += " (" + std::to_string(count) + " such problems here; the first is named)";
        w.action = action;
        *this = tally{};
        return w;
    }
};

/// An influence's weight rescaled by `scale` (a vertex's former sum over the sum of the weights it
/// keeps, computed in double), held to the largest float: weights near FLT_MAX are absurd but
/// finite in a file, and the loaders promise finite weights.
inline float rescaled_weight(float weight, double scale) {
    return static_cast<float>(std::min(static_cast<double>(weight) * scale, static_cast<double>(FLT_MAX)));
}

/// The whole file at `path`, in one read (keyblend::impl::read_whole_file): `bytes` (not zeroed:
/// every byte is read) and `size`.
inline status read_whole_file(const std::string& path, std::unique_ptr<unsigned char[]>& bytes,
                              std::size_t& size) {
    return keyblend::impl::read_whole_file(
        path,
        [&bytes](std::size_t n) {
            bytes.reset(new (std::nothrow) unsigned char[n]);
            return bytes.get();
        },
        size);
}

} // namespace impl
} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace io
} // namespace keyblend
