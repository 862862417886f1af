// keyblend — MSZIP inflation for the `tzip` / `bzip` .X encodings, through ISA-L (when
// KEYBLEND_IO_ISAL is defined) or zlib. Included by xfile.impl.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
//
// Layout (docs/xfile.md, checked on real compressed files): the 16-byte
// header, a uint32 with the total uncompressed size (header included), then blocks of
// uint16 uncompressed size, uint16 compressed size (counting the 2 signature bytes), the bytes
// 'CK' and one complete raw deflate stream. Each block inflates with the previous block's output
// as its preset dictionary, so blocks inflate one after the other.
#pragma once

#if defined(KEYBLEND_IO_ISAL)
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace keyblend {
namespace io {
inline namespace KEYBLEND_IO_GLM_LAYOUT {
namespace impl {

/// The inflated bytes: in memory of its own, which is not zeroed (inflate writes every byte), or
/// in a caller's vector, which only grows (its new bytes are zeroed once) and so costs neither
/// allocation nor page faults when reused. `size()` is how much holds data; finish() trims a
/// caller's vector to that.
class byte_buffer {
public:
    byte_buffer() = default;
    explicit byte_buffer(std::vector<unsigned char>& storage) : vector_(&storage) {}

    const unsigned char* data() const noexcept { return vector_ ? vector_->data() : own_.get(); }
    unsigned char* data() noexcept { return vector_ ? vector_->data() : own_.get(); }
    std::size_t size() const noexcept { return size_; }

    void reserve(std::size_t n) {
        if (n <= capacity()) return;
        if (vector_ != nullptr) {
            vector_->resize(n);
            return;
        }
        std::unique_ptr<unsigned char[]> bigger(new unsigned char[n]);
        if (size_ > 0) std::memcpy(bigger.get(), own_.get(), size_);
        own_ = std::move(bigger);
        own_capacity_ = n;
    }
    /// Adds n bytes (unspecified values) at the end and returns them.
    unsigned char* grow(std::size_t n) {
        if (n > capacity() - size_) reserve(std::max(size_ + n, 2 * capacity()));
        unsigned char* p = data() + size_;
        size_ += n;
        return p;
    }
    void shrink(std::size_t n) noexcept { size_ = std::min(size_, n); }
    void append(const unsigned char* p, std::size_t n) {
        if (n > 0) std::memcpy(grow(n), p, n);
    }
    /// A caller's vector holds exactly the data.
    void finish() {
        if (vector_ != nullptr) vector_->resize(size_);
    }

private:
    std::size_t capacity() const noexcept { return vector_ ? vector_->size() : own_capacity_; }

    std::vector<unsigned char>* vector_ = nullptr;
    std::unique_ptr<unsigned char[]> own_;
    std::size_t own_capacity_ = 0;
    std::size_t size_ = 0;
};

/// How one raw deflate stream inflated into exactly the bytes given for it.
enum class inflate_outcome {
    ok,        ///< it filled the output exactly and ended
    too_long,  ///< it holds more than the output
    too_short, ///< it ended before filling the output
    corrupt,   ///< invalid data, or the input ended inside the stream
};

#if defined(KEYBLEND_IO_ISAL)

/// Raw deflate through ISA-L's igzip (isal_inflate with isal_inflate_set_dict).
class raw_inflater {
public:
    static constexpr const char* name = "ISA-L";

    raw_inflater() : state_(new inflate_state) { isal_inflate_init(state_.get()); }

    /// Inflates `in` (one whole raw deflate stream) into `out`, with `dict` as preset dictionary.
    /// `produced` is how many bytes it wrote; `why` says what was wrong when not ok.
    inflate_outcome run(const unsigned char* in, std::size_t in_size, const unsigned char* dict,
                        std::size_t dict_size, unsigned char* out, std::size_t out_size,
                        std::size_t& produced, std::string& why) {
        inflate_state& s = *state_;
        isal_inflate_reset(&s);
        // isal_inflate_set_dict only reads the dictionary; its parameter is not const.
        if (dict_size > 0 &&
            isal_inflate_set_dict(&s, const_cast<unsigned char*>(dict),
                                  static_cast<std::uint32_t>(dict_size)) != ISAL_DECOMP_OK) {
            why = "ISA-L refused the previous block as dictionary";
            return inflate_outcome::corrupt;
        }
        s.next_in = const_cast<unsigned char*>(in); // read only
        s.avail_in = static_cast<std::uint32_t>(in_size);
        s.next_out = out;
        s.avail_out = static_cast<std::uint32_t>(out_size);
        const int rc = isal_inflate(&s);
        produced = out_size - s.avail_out;
        if (rc != ISAL_DECOMP_OK) {
            why = rc == ISAL_INVALID_BLOCK      ? "invalid block"
                  : rc == ISAL_INVALID_SYMBOL   ? "invalid symbol"
                  : rc == ISAL_INVALID_LOOKBACK ? "invalid distance"
                                                : "error " + std::to_string(rc);
            return inflate_outcome::corrupt;
        }
        if (s.block_state == ISAL_BLOCK_FINISH)
            return produced == out_size ? inflate_outcome::ok : inflate_outcome::too_short;
        if (s.avail_out == 0) return inflate_outcome::too_long;
        why = "the stream ends before its last block";
        return inflate_outcome::corrupt;
    }

private:
    std::unique_ptr<inflate_state> state_;
};

#else

/// Raw deflate through zlib (inflate with inflateSetDictionary).
class raw_inflater {
public:
    static constexpr const char* name = "zlib";

    raw_inflater() { started_ = inflateInit2(&zs_, -MAX_WBITS) == Z_OK; }
    ~raw_inflater() {
        if (started_) inflateEnd(&zs_);
    }
    raw_inflater(const raw_inflater&) = delete;
    raw_inflater& operator=(const raw_inflater&) = delete;

    /// As the ISA-L version above.
    inflate_outcome run(const unsigned char* in, std::size_t in_size, const unsigned char* dict,
                        std::size_t dict_size, unsigned char* out, std::size_t out_size,
                        std::size_t& produced, std::string& why) {
        produced = 0;
        if (!started_) {
            why = "zlib could not start inflating";
            return inflate_outcome::corrupt;
        }
        inflateReset(&zs_);
        if (dict_size > 0 && inflateSetDictionary(&zs_, dict, static_cast<uInt>(dict_size)) != Z_OK) {
            why = "zlib refused the previous block as dictionary";
            return inflate_outcome::corrupt;
        }
        zs_.next_in = const_cast<Bytef*>(in); // zlib only reads next_in
        zs_.avail_in = static_cast<uInt>(in_size);
        zs_.next_out = out;
        zs_.avail_out = static_cast<uInt>(out_size);
        const int rc = inflate(&zs_, Z_FINISH);
        produced = out_size - zs_.avail_out;
        if (rc == Z_STREAM_END)
            return produced == out_size ? inflate_outcome::ok : inflate_outcome::too_short;
        if (rc == Z_BUF_ERROR && zs_.avail_out == 0) return inflate_outcome::too_long;
        why = zs_.msg != nullptr ? std::string(zs_.msg) : "the stream ends before its last block";
        return inflate_outcome::corrupt;
    }

private:
    z_stream zs_{};
    bool started_ = false;
};

#endif

/// The name of the inflate library this loader was built with: "ISA-L" or "zlib".
inline const char* inflate_library() noexcept { return raw_inflater::name; }

/// Inflates a compressed .X file (`file`, `size`: the whole file). `out` receives the 16 header
/// bytes followed by the inflated data, so an offset in `out` is an offset in the decompressed
/// stream. Nothing is allocated from the sizes the file announces beyond a small multiple of its
/// own size: the total is checked against `limit` (load_options::max_decompressed_bytes) and
/// against the blocks as they inflate. Returns an empty string on success; otherwise what went
/// wrong, starting with "byte offset N: " (an offset in the compressed file), with `out` holding
/// the blocks that inflated before the problem. `over_limit` tells a limit from a corrupt file.
inline std::string inflate_mszip(const unsigned char* file, std::size_t size, std::size_t limit,
                                 byte_buffer& out, bool& over_limit) {
    over_limit = false;
    const auto u16 = [file](std::size_t p) {
        return static_cast<std::uint32_t>(file[p] | (file[p + 1] << 8));
    };
    const auto at = [](std::size_t p) { return "byte offset " + std::to_string(p) + ": "; };

    out.shrink(0);
    out.append(file, std::min<std::size_t>(size, 16));
    if (size < 20)
        return at(std::min<std::size_t>(size, 16)) +
               "expected the uncompressed size (4 bytes), found the end of the file";
    const std::size_t total = u16(16) | (std::size_t{u16(18)} << 16);
    if (total < 16)
        return at(16) + "the uncompressed size " + std::to_string(total) +
               " is smaller than the 16-byte header";
    if (total > limit) {
        over_limit = true;
        return at(16) + "the file inflates to " + std::to_string(total) +
               " bytes, more than load_options::max_decompressed_bytes (" + std::to_string(limit) +
               ")";
    }
    // Deflate rarely gains more than 32:1 on real data; beyond that the buffer grows as the
    // blocks prove they hold more.
    out.reserve(std::min(total, size / 2 * 64 + 65536));

    raw_inflater inflater;
    std::string problem, why;
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
        const std::size_t start = out.size();
        unsigned char* dest = out.grow(raw);
        std::size_t produced = 0;
        const inflate_outcome r = inflater.run(file + p + 6, packed - 2, out.data() + previous,
                                               previous_size, dest, raw, produced, why);
        if (r != inflate_outcome::ok) {
            out.shrink(start);
            if (r == inflate_outcome::too_short)
                problem = at(p) + name + "inflates to " + std::to_string(produced) +
                          " bytes, its header says " + std::to_string(raw);
            else if (r == inflate_outcome::too_long)
                problem = at(p) + name + "inflates to more than the " + std::to_string(raw) +
                          " bytes its header says";
            else
                problem = at(p + 6) + name + "corrupt deflate data (" + inflater.name + ": " +
                          why + ")";
            break;
        }
        previous = start;
        previous_size = raw;
        p += 4 + packed;
    }
    if (problem.empty() && out.size() != total)
        problem = at(p) + "the blocks inflate to " + std::to_string(out.size()) +
                  " bytes (header included), the header says " + std::to_string(total);
    return problem;
}

} // namespace impl
} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace io
} // namespace keyblend
