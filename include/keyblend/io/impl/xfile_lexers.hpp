// keyblend — the two token producers of the .X loader: text and binary. Included by
// xfile.impl.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
//
// Both lexers present the same interface to the one reader (xfile_reader.hpp), so the reader is
// written once and instantiated for each:
//
//   token peek()                 kind of the next token (separators and comments skipped; never
//                                consumes a token). In binary, an open INTEGER_LIST/FLOAT_LIST
//                                yields `number` until its values are used up.
//   std::size_t offset()         where the next token starts (call after peek)
//   std::size_t last_offset()    where the last value read by read_* started
//   std::size_t depth()          braces opened and not yet closed
//   void take_brace()            consumes the '{' or '}' that peek() returned
//   bool read_name(sv&)          NAME / identifier
//   bool read_string(sv&)        STRING / "..." (contents without quotes)
//   bool skip_guid()             GUID / <...>
//   bool read_guid(std::string&) GUID as lowercase text 8-4-4-4-12 (binary bytes are formatted)
//   bool read_uint(uint32&)      one integer value
//   bool read_float(float&)      one float value (64-bit floats are converted)
//   std::size_t read_uints(uint32*, n) / read_floats(float*, n)
//                                up to n values; returns how many were read (all n, or fewer when
//                                the next token is not one of them: it is then left unread)
//   std::size_t uint_run(const unsigned char*& p)
//                                binary: opens the next INTEGER_LIST if none is open and returns
//                                how many of its integers are left, p at the first (little-endian
//                                uint32s); text: 0 (the caller reads value by value)
//   std::size_t float_run(const unsigned char*& p)
//                                the same for the 32-bit floats of a FLOAT_LIST (0 in text and for
//                                64-bit floats, which are read value by value)
//   void skip_run(k)             consumes k of the values a run returned
//   bool skip_token()            any one token (a whole list in binary); false at the end
//   bool skip_to_depth(d)        consumes tokens until depth() == d; false if the input ends first
//   std::string describe()       the next token, for "found ..." in messages
//   std::string where(offset)    "line L, column C" / "byte offset N" (+ "of the decompressed
//   data") std::size_t max_values_left() an upper bound on how many values the rest of the input
//   holds
//
// Every read_* returns false without consuming anything when the next token is not of the kind
// asked for (or is malformed, truncated or out of range); the reader then reports
// "expected ..., found <describe()>" at offset().
#pragma once

#include "source.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace keyblend {
namespace io {
inline namespace KEYBLEND_IO_GLM_LAYOUT {
namespace impl {

enum class token : unsigned char {
    end,         ///< no more input
    open_brace,  ///< '{'
    close_brace, ///< '}'
    name,        ///< an identifier: a template or object name, a reference target
    string,      ///< a quoted string (text) or STRING token (binary)
    number,      ///< an integer or float
    guid,        ///< <...> (text) or GUID token (binary)
    template_kw, ///< the `template` keyword
    other,       ///< binary punctuation and type keywords: only met inside templates
    invalid,     ///< a token that cannot be read (truncated, unknown binary token id)
};

/// The little-endian uint32 at p (binary .X numbers and counts), whatever the host's byte order.
inline std::uint32_t load_le32(const unsigned char* p) noexcept {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
           (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

/// A 64-bit float of a binary file as a float: out-of-range values become infinities (the
/// conversion alone would be undefined), NaN stays NaN.
inline float narrow_to_float(double d) noexcept {
    if (is_nan(d)) return std::numeric_limits<float>::quiet_NaN();
    if (d > static_cast<double>(std::numeric_limits<float>::max()))
        return std::numeric_limits<float>::infinity();
    if (d < -static_cast<double>(std::numeric_limits<float>::max()))
        return -std::numeric_limits<float>::infinity();
    return static_cast<float>(d);
}

inline std::string decompressed_suffix(bool decompressed) {
    return decompressed ? " of the decompressed data" : "";
}

// ---------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------

/// Character classes of the text encoding.
enum text_char : unsigned char {
    tc_token = 0, ///< part of a name or number
    tc_space = 1, ///< white space and the separators ';' and ','
    tc_open = 2,
    tc_close = 3,
    tc_quote = 4,
    tc_angle = 5, ///< '<' starts a GUID
    tc_slash = 6, ///< '/': "//" starts a comment
    tc_hash = 7,  ///< '#' starts a comment (at the start of a token)
};

struct text_char_table {
    unsigned char cls[256];
    constexpr text_char_table() : cls{} {
        for (int c : {' ', '\t', '\r', '\n', '\v', '\f', ';', ','}) cls[c] = tc_space;
        cls[static_cast<unsigned char>('{')] = tc_open;
        cls[static_cast<unsigned char>('}')] = tc_close;
        cls[static_cast<unsigned char>('"')] = tc_quote;
        cls[static_cast<unsigned char>('<')] = tc_angle;
        cls[static_cast<unsigned char>('/')] = tc_slash;
        cls[static_cast<unsigned char>('#')] = tc_hash;
    }
    /// White space, separators, braces and quotes end a name or a number.
    constexpr bool ends_token(unsigned char c) const {
        return cls[c] >= tc_space && cls[c] <= tc_quote;
    }
};
inline constexpr text_char_table text_chars{};

/// The fast path of decimal to float. `[-]digits[.digits]` is m * 10^e exactly; when m < 2^53 and
/// |e| <= 22, m and 10^|e| are doubles exactly, so one IEEE multiplication or division gives d, the
/// double nearest the decimal (Clinger's fast path). Rounding d to float then gives the float
/// nearest the decimal — the float from_chars gives — unless d lies exactly halfway between two
/// floats (the decimal may be on either side), which is checked. That covers every number
/// exporters write. Returns where the number ends, or nullptr for anything else (an exponent, 20
/// or more digits, a halfway case, no digits), which from_chars then decides.
inline const char* parse_decimal_exactly(const char* p, const char* end, float& out) {
    static constexpr double powers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const bool negative = p != end && *p == '-';
    p += negative;
    const auto digit = [&] { return p != end && static_cast<unsigned>(*p - '0') < 10; };
    std::uint64_t m = 0;
    const char* const start = p;
    for (; digit(); ++p) m = m * 10 + static_cast<std::uint64_t>(*p - '0');
    std::ptrdiff_t digits = p - start, fraction = 0;
    if (p != end && *p == '.') {
        const char* const point = ++p;
        for (; digit(); ++p) m = m * 10 + static_cast<std::uint64_t>(*p - '0');
        fraction = p - point;
        digits += fraction;
    }
    if (digits == 0 || digits > 19 || m >= (std::uint64_t{1} << 53) || fraction > 22)
        return nullptr;
    if (p != end && (*p == 'e' || *p == 'E')) return nullptr;
    const double d = static_cast<double>(m) / powers[fraction];
    std::uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    // Halfway between two floats: the 29 mantissa bits a float drops are 1000...0. Below float's
    // normal range the dropped bits differ: leave those to from_chars too.
    if ((bits & 0x1fffffffu) == 0x10000000u || (d != 0.0 && d < 0x1p-126)) return nullptr;
    const float v = static_cast<float>(d);
    out = negative ? -v : v;
    return p;
}

struct line_position {
    std::size_t line = 1, column = 1;
};

/// Line and column of any offset in a text, in time independent of the offset: the number of line
/// breaks before every 64 KiB checkpoint and the last break before it, counted once, on the first
/// query. A query then looks at most 64 KiB back. (Messages come in any order: the assembler
/// reports problems found after the whole file was read.)
class line_index {
public:
    line_position locate(const char* text, std::size_t size, std::size_t offset) {
        if (!built_) build(text, size);
        const std::size_t k = offset >> chunk_bits;
        const std::size_t base = k << chunk_bits;
        const char* from = text + base;
        const char* to = text + offset;
        line_position out;
        out.line = checkpoints_[k].breaks + 1 +
                   static_cast<std::size_t>(std::count(from, to, '\n'));
        std::size_t line_start = checkpoints_[k].line_start;
        for (const char* p = to; p != from; --p)
            if (p[-1] == '\n') {
                line_start = static_cast<std::size_t>(p - text);
                break;
            }
        out.column = offset - line_start + 1;
        return out;
    }

private:
    static constexpr unsigned chunk_bits = 16;
    struct checkpoint {
        std::size_t breaks = 0;     // '\n' before the checkpoint
        std::size_t line_start = 0; // the offset after the last of them (0 when none)
    };

    void build(const char* text, std::size_t size) {
        checkpoints_.resize((size >> chunk_bits) + 1);
        checkpoint c;
        for (std::size_t k = 0; k < checkpoints_.size(); ++k) {
            checkpoints_[k] = c;
            const std::size_t begin = k << chunk_bits;
            const std::size_t end = std::min(size, begin + (std::size_t{1} << chunk_bits));
            for (std::size_t p = begin; p < end; ++p)
                if (text[p] == '\n') {
                    ++c.breaks;
                    c.line_start = p + 1;
                }
        }
        built_ = true;
    }

    std::vector<checkpoint> checkpoints_;
    bool built_ = false;
};

class text_lexer {
public:
    /// `data` is the whole file (header included, so that lines and columns count from its
    /// start); reading begins at `start`.
    text_lexer(const char* data, std::size_t size, std::size_t start, bool decompressed)
        : begin_(data), pos_(data + std::min(start, size)), end_(data + size), last_(pos_),
          decompressed_(decompressed) {}

    token peek() {
        skip();
        if (pos_ == end_) return token::end;
        switch (text_chars.cls[static_cast<unsigned char>(*pos_)]) {
        case tc_open: return token::open_brace;
        case tc_close: return token::close_brace;
        case tc_quote: return token::string;
        case tc_angle: return token::guid;
        default: break;
        }
        if (starts_number(*pos_)) return token::number;
        const std::string_view word(pos_, static_cast<std::size_t>(token_end(pos_) - pos_));
        return word == "template" ? token::template_kw : token::name;
    }

    std::size_t offset() const noexcept { return static_cast<std::size_t>(pos_ - begin_); }
    std::size_t last_offset() const noexcept { return static_cast<std::size_t>(last_ - begin_); }
    std::size_t size() const noexcept { return static_cast<std::size_t>(end_ - begin_); }
    std::size_t depth() const noexcept { return depth_; }

    void take_brace() {
        if (*pos_ == '{') {
            ++depth_;
        } else if (depth_ > 0) {
            --depth_;
        }
        ++pos_;
    }

    bool read_name(std::string_view& out) {
        const token t = peek();
        if (t != token::name && t != token::template_kw) return false;
        const char* e = token_end(pos_);
        out = std::string_view(pos_, static_cast<std::size_t>(e - pos_));
        last_ = pos_;
        pos_ = e;
        return true;
    }

    bool read_string(std::string_view& out) {
        if (peek() != token::string) return false;
        const char* close = find(pos_ + 1, '"');
        if (close == end_) return false; // unterminated: describe() says so
        out = std::string_view(pos_ + 1, static_cast<std::size_t>(close - pos_ - 1));
        last_ = pos_;
        pos_ = close + 1;
        return true;
    }

    bool skip_guid() {
        if (peek() != token::guid) return false;
        const char* close = find(pos_ + 1, '>');
        if (close == end_) return false;
        last_ = pos_;
        pos_ = close + 1;
        return true;
    }

    bool read_guid(std::string& out) {
        const char* open = pos_;
        if (!skip_guid()) return false;
        out.clear();
        for (const char* p = open + 1; p + 1 < pos_; ++p)
            if (!text_chars.ends_token(static_cast<unsigned char>(*p)))
                out += static_cast<char>(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        return true;
    }

    bool read_uint(std::uint32_t& out) {
        skip();
        const char* p = pos_;
        if (p != end_ && *p == '+') ++p;
        if (p == end_ || !is_digit(*p)) return false;
        std::uint64_t v = 0;
        for (; p != end_ && is_digit(*p); ++p) {
            v = v * 10 + static_cast<std::uint64_t>(*p - '0');
            if (v > std::numeric_limits<std::uint32_t>::max()) return false;
        }
        if (p != end_ && !text_chars.ends_token(static_cast<unsigned char>(*p))) return false;
        out = static_cast<std::uint32_t>(v);
        last_ = pos_;
        pos_ = p;
        return true;
    }

    bool read_float(float& out) {
        skip();
        const char* p = pos_;
        if (p != end_ && *p == '+') {
            ++p;
            if (p != end_ && *p == '-') return false;
        }
        float v = 0.0f;
        const char* const after = parse_decimal_exactly(p, end_, v);
        if (after != nullptr) {
            p = after;
        } else {
            const std::from_chars_result r = std::from_chars(p, end_, v);
            if (r.ec == std::errc::result_out_of_range) {
                v = out_of_range(p, r.ptr); // as the conversion of a 64-bit binary float does
            } else if (r.ec != std::errc()) {
                return false; // not a number
            }
            p = r.ptr;
        }
        if (p != end_ && *p == '#') {
            // MSVC's printf of a NaN or infinity: -1.#IND00, 1.#QNAN0, 1.#SNAN0, 1.#INF00.
            const std::string_view rest(p, static_cast<std::size_t>(token_end(p) - p));
            if (rest.compare(0, 4, "#INF") == 0)
                v = std::signbit(v) ? -std::numeric_limits<float>::infinity()
                                    : std::numeric_limits<float>::infinity();
            else if (rest.compare(0, 4, "#IND") == 0 || rest.compare(0, 5, "#QNAN") == 0 ||
                     rest.compare(0, 5, "#SNAN") == 0)
                v = std::numeric_limits<float>::quiet_NaN();
            else
                return false;
            p += rest.size();
        }
        if (p != end_ && !text_chars.ends_token(static_cast<unsigned char>(*p))) return false;
        out = v;
        last_ = pos_;
        pos_ = p;
        return true;
    }

    std::size_t read_uints(std::uint32_t* out, std::size_t n) {
        std::size_t i = 0;
        while (i < n && read_uint(out[i])) ++i;
        return i;
    }

    std::size_t uint_run(const unsigned char*&) const noexcept { return 0; }
    std::size_t float_run(const unsigned char*&) const noexcept { return 0; }
    void skip_run(std::size_t) noexcept {}

    std::size_t read_floats(float* out, std::size_t n) {
        std::size_t i = 0;
        while (i < n && read_float(out[i])) ++i;
        return i;
    }

    bool skip_token() {
        std::string_view ignored;
        switch (peek()) {
        case token::end: return false;
        case token::open_brace:
        case token::close_brace: take_brace(); return true;
        case token::string: return read_string(ignored);
        case token::guid: return skip_guid();
        default: pos_ = token_end(pos_); return true;
        }
    }

    bool skip_to_depth(std::size_t target) {
        while (depth_ > target)
            if (!skip_token()) return false;
        return true;
    }

    std::string describe() {
        std::string out;
        switch (peek()) {
        case token::end: return "the end of the file";
        case token::open_brace: return "'{'";
        case token::close_brace: return "'}'";
        case token::string:
            if (find(pos_ + 1, '"') == end_) return "a string that never ends (no closing '\"')";
            out = "the string \"";
            append_excerpt(out, std::string_view(pos_ + 1, static_cast<std::size_t>(
                                                               find(pos_ + 1, '"') - pos_ - 1)));
            return out + "\"";
        case token::guid:
            if (find(pos_ + 1, '>') == end_) return "a GUID that never ends (no closing '>')";
            return "a GUID";
        default:
            out = "'";
            append_excerpt(
                out, std::string_view(pos_, static_cast<std::size_t>(token_end(pos_) - pos_)));
            return out + "'";
        }
    }

    std::string where(std::size_t offset) const {
        offset = std::min(offset, static_cast<std::size_t>(end_ - begin_));
        const line_position lc = lines_.locate(begin_, static_cast<std::size_t>(end_ - begin_), offset);
        const std::string text = "line " + std::to_string(lc.line) + ", column " +
                                 std::to_string(lc.column);
        if (!decompressed_) return text;
        return "byte offset " + std::to_string(offset) + decompressed_suffix(true) + " (" + text +
               ")";
    }

    /// Every value takes at least one character and one separator (but the last).
    std::size_t max_values_left() const noexcept {
        return (static_cast<std::size_t>(end_ - pos_) + 1) / 2;
    }

private:
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }

    /// The float of a decimal in [p, e) beyond float's range: infinity when it is too large,
    /// zero when too small (the sign kept either way).
    static float out_of_range(const char* p, const char* e) {
        double d = 0.0;
        const std::from_chars_result r = std::from_chars(p, e, d);
        if (r.ec == std::errc()) return narrow_to_float(d);
        const bool negative = p != e && *p == '-';
        const char* exponent = std::find_if(p, e, [](char c) { return c == 'e' || c == 'E'; });
        const bool tiny = exponent != e && exponent + 1 != e && exponent[1] == '-';
        const float magnitude = tiny ? 0.0f : std::numeric_limits<float>::infinity();
        return negative ? -magnitude : magnitude;
    }
    static bool starts_number(char c) { return is_digit(c) || c == '-' || c == '+' || c == '.'; }

    const char* find(const char* from, char c) const {
        if (from >= end_) return end_;
        const void* hit = std::memchr(from, c, static_cast<std::size_t>(end_ - from));
        return hit ? static_cast<const char*>(hit) : end_;
    }

    const char* token_end(const char* p) const {
        while (p != end_ && !text_chars.ends_token(static_cast<unsigned char>(*p))) ++p;
        return p;
    }

    /// Skips white space, separators and comments.
    void skip() {
        while (pos_ != end_) {
            const unsigned char c = text_chars.cls[static_cast<unsigned char>(*pos_)];
            if (c == tc_space) {
                ++pos_;
            } else if (c == tc_hash || (c == tc_slash && pos_ + 1 != end_ && pos_[1] == '/')) {
                pos_ = find(pos_, '\n');
            } else {
                return;
            }
        }
    }

    const char* begin_;
    const char* pos_;
    const char* end_;
    const char* last_;
    std::size_t depth_ = 0;
    bool decompressed_;
    mutable line_index lines_; // built on the first where()
};

// ---------------------------------------------------------------------------------------------
// Binary
// ---------------------------------------------------------------------------------------------

/// Binary token ids (docs/xfile.md).
enum binary_token : std::uint16_t {
    bt_name = 1,
    bt_string = 2,
    bt_integer = 3,
    bt_guid = 5,
    bt_integer_list = 6,
    bt_float_list = 7,
    bt_obrace = 10,
    bt_cbrace = 11,
    bt_oparen = 12,
    bt_dot = 18,
    bt_comma = 19,
    bt_semicolon = 20,
    bt_template = 31,
    bt_word = 40,
    bt_array = 52,
};

class binary_lexer {
public:
    /// `data` is the whole file (header included, so that offsets count from its start); reading
    /// begins at `start`. `float_bytes` is 4 or 8.
    binary_lexer(const unsigned char* data, std::size_t size, std::size_t start,
                 unsigned float_bytes, bool decompressed)
        : begin_(data), pos_(data + std::min(start, size)), end_(data + size), last_(pos_),
          float_bytes_(float_bytes), decompressed_(decompressed) {}

    token peek() {
        if (list_left_ > 0) return token::number;
        for (;;) {
            if (left() < 2) return pos_ == end_ ? token::end : token::invalid;
            switch (id()) {
            case bt_comma:
            case bt_semicolon: pos_ += 2; continue;
            case bt_name: return token::name;
            case bt_string: return token::string;
            case bt_integer: return token::number;
            case bt_guid: return token::guid;
            case bt_integer_list:
            case bt_float_list:
                if (left() < 6) return token::invalid;
                if (u32(pos_ + 2) == 0) { // an empty list holds no value: step over it
                    pos_ += 6;
                    continue;
                }
                return token::number;
            case bt_obrace: return token::open_brace;
            case bt_cbrace: return token::close_brace;
            case bt_template: return token::template_kw;
            default:
                if ((id() >= bt_oparen && id() <= bt_dot) || (id() >= bt_word && id() <= bt_array))
                    return token::other;
                return token::invalid;
            }
        }
    }

    std::size_t offset() const noexcept {
        return static_cast<std::size_t>((list_left_ > 0 ? list_ : pos_) - begin_);
    }
    std::size_t size() const noexcept { return static_cast<std::size_t>(end_ - begin_); }
    std::size_t last_offset() const noexcept { return static_cast<std::size_t>(last_ - begin_); }
    std::size_t depth() const noexcept { return depth_; }

    void take_brace() {
        if (id() == bt_obrace) {
            ++depth_;
        } else if (depth_ > 0) {
            --depth_;
        }
        pos_ += 2;
    }

    bool read_name(std::string_view& out) { return peek() == token::name && read_counted(out); }
    bool read_string(std::string_view& out) { return peek() == token::string && read_counted(out); }

    bool skip_guid() {
        if (peek() != token::guid || left() < 18) return false;
        last_ = pos_;
        pos_ += 18;
        return true;
    }

    /// The 16 bytes are a Windows GUID: uint32, uint16, uint16 little-endian, then 8 bytes.
    bool read_guid(std::string& out) {
        if (!skip_guid()) return false;
        static const char hex[] = "0123456789abcdef";
        static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
        out.clear();
        for (int i = 0; i < 16; ++i) {
            if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
            const unsigned char b = last_[2 + order[i]];
            out += hex[b >> 4];
            out += hex[b & 15];
        }
        return true;
    }

    bool read_uint(std::uint32_t& out) {
        if (!open_list(false)) {
            // A single INTEGER token.
            if (list_left_ > 0 || peek() != token::number || id() != bt_integer || left() < 6)
                return false;
            last_ = pos_;
            out = u32(pos_ + 2);
            pos_ += 6;
            return true;
        }
        last_ = list_;
        out = u32(list_);
        list_ += 4;
        --list_left_;
        return true;
    }

    bool read_float(float& out) {
        if (!open_list(true)) return false;
        last_ = list_;
        if (float_bytes_ == 8) {
            double d;
            std::memcpy(&d, list_, 8);
            out = narrow_to_float(d);
            list_ += 8;
        } else {
            std::memcpy(&out, list_, 4);
            list_ += 4;
        }
        --list_left_;
        return true;
    }

    /// Copies runs of values straight out of INTEGER_LISTs.
    std::size_t read_uints(std::uint32_t* out, std::size_t n) {
        std::size_t i = 0;
        while (i < n) {
            if (!open_list(false)) {
                if (!read_uint(out[i])) break; // a single INTEGER token, or nothing to read
                ++i;
                continue;
            }
            const std::size_t run = std::min<std::size_t>(n - i, list_left_);
            last_ = list_ + 4 * (run - 1);
            for (std::size_t k = 0; k < run; ++k) out[i + k] = u32(list_ + 4 * k);
            list_ += 4 * run;
            list_left_ -= static_cast<std::uint32_t>(run);
            i += run;
        }
        return i;
    }

    std::size_t uint_run(const unsigned char*& p) {
        if (!open_list(false)) return 0;
        p = list_;
        return list_left_;
    }

    std::size_t float_run(const unsigned char*& p) {
        if (float_bytes_ != 4 || !open_list(true)) return 0;
        p = list_;
        return list_left_;
    }

    /// Consumes k values of the open list, which uint_run or float_run returned (4 bytes each).
    void skip_run(std::size_t k) noexcept {
        if (k == 0) return;
        last_ = list_ + 4 * (k - 1);
        list_ += 4 * k;
        list_left_ -= static_cast<std::uint32_t>(k);
    }

    /// Copies runs of values straight out of FLOAT_LISTs.
    std::size_t read_floats(float* out, std::size_t n) {
        std::size_t i = 0;
        while (i < n && open_list(true)) {
            const std::size_t run = std::min<std::size_t>(n - i, list_left_);
            last_ = list_ + float_bytes_ * (run - 1);
            if (float_bytes_ == 4) {
                std::memcpy(out + i, list_, 4 * run);
            } else {
                for (std::size_t k = 0; k < run; ++k) {
                    double d;
                    std::memcpy(&d, list_ + 8 * k, 8);
                    out[i + k] = narrow_to_float(d);
                }
            }
            list_ += float_bytes_ * run;
            list_left_ -= static_cast<std::uint32_t>(run);
            i += run;
        }
        return i;
    }

    bool skip_token() {
        if (list_left_ > 0) {
            list_left_ = 0;
            return true;
        }
        std::string_view ignored;
        switch (peek()) {
        case token::end:
        case token::invalid: return false;
        case token::open_brace:
        case token::close_brace: take_brace(); return true;
        case token::name:
        case token::string: return read_counted(ignored);
        case token::guid: return skip_guid();
        case token::number:
            if (id() == bt_integer) {
                if (left() < 6) return false;
                pos_ += 6;
                return true;
            }
            if (!list_fits()) return false;
            pos_ += 6 + std::size_t{u32(pos_ + 2)} * element_bytes(id() == bt_float_list);
            return true;
        default: pos_ += 2; return true;
        }
    }

    bool skip_to_depth(std::size_t target) {
        while (depth_ > target)
            if (!skip_token()) return false;
        return true;
    }

    std::string describe() {
        if (list_left_ > 0)
            return list_float_ ? "a float (in a FLOAT_LIST)" : "an integer (in an INTEGER_LIST)";
        std::string out;
        switch (peek()) {
        case token::end: return "the end of the file";
        case token::invalid:
            if (left() < 2) return "a truncated token (1 byte left)";
            if (id() == bt_integer_list || id() == bt_float_list) return "a truncated list header";
            return "an unknown token id " + std::to_string(id());
        case token::open_brace: return "'{'";
        case token::close_brace: return "'}'";
        case token::template_kw: return "'template'";
        case token::guid: return left() < 18 ? "a truncated GUID" : "a GUID";
        case token::name:
        case token::string: {
            out = peek() == token::name ? "the name '" : "the string \"";
            if (left() < 6 || u32(pos_ + 2) > left() - 6)
                return out.substr(0, out.size() - 2) + " (truncated)";
            append_excerpt(
                out, std::string_view(reinterpret_cast<const char*>(pos_ + 6), u32(pos_ + 2)));
            return out + (peek() == token::name ? "'" : "\"");
        }
        case token::number:
            if (id() == bt_integer) return left() < 6 ? "a truncated INTEGER" : "an INTEGER";
            out = id() == bt_float_list ? "a FLOAT_LIST" : "an INTEGER_LIST";
            if (!list_fits())
                out += " of " + std::to_string(u32(pos_ + 2)) +
                       " values that the file is too short for";
            return out;
        default: return "the template token id " + std::to_string(id());
        }
    }

    std::string where(std::size_t offset) const {
        return "byte offset " + std::to_string(offset) + decompressed_suffix(decompressed_);
    }

    /// Every value takes at least 4 bytes.
    std::size_t max_values_left() const noexcept { return list_left_ + left() / 4; }

private:
    std::size_t left() const noexcept { return static_cast<std::size_t>(end_ - pos_); }
    std::uint16_t id() const noexcept {
        return static_cast<std::uint16_t>(pos_[0] | (pos_[1] << 8));
    }
    static std::uint32_t u32(const unsigned char* p) noexcept { return load_le32(p); }
    std::size_t element_bytes(bool is_float) const noexcept { return is_float ? float_bytes_ : 4; }

    /// Precondition: pos_ is at an INTEGER_LIST or FLOAT_LIST token with a full header.
    bool list_fits() const noexcept {
        if (left() < 6) return false;
        return u32(pos_ + 2) <= (left() - 6) / element_bytes(id() == bt_float_list);
    }

    /// Makes sure a list of the wanted kind is open with a value left. False (consuming nothing)
    /// when the next token is something else, or a list of the other kind, or truncated.
    bool open_list(bool want_float) {
        if (list_left_ > 0) return list_float_ == want_float;
        if (peek() != token::number || id() != (want_float ? bt_float_list : bt_integer_list) ||
            !list_fits())
            return false;
        list_float_ = want_float;
        list_left_ = u32(pos_ + 2);
        list_ = pos_ + 6;
        pos_ = list_ + std::size_t{list_left_} * element_bytes(want_float);
        return true;
    }

    /// NAME or STRING: uint32 length and bytes.
    bool read_counted(std::string_view& out) {
        if (left() < 6 || u32(pos_ + 2) > left() - 6) return false;
        const std::uint32_t n = u32(pos_ + 2);
        out = std::string_view(reinterpret_cast<const char*>(pos_ + 6), n);
        last_ = pos_;
        pos_ += 6 + std::size_t{n};
        return true;
    }

    const unsigned char* begin_;
    const unsigned char* pos_;
    const unsigned char* end_;
    const unsigned char* last_;
    const unsigned char* list_ = nullptr; // next value of the open list
    std::uint32_t list_left_ = 0;         // values left in the open list
    bool list_float_ = false;
    unsigned float_bytes_;
    std::size_t depth_ = 0;
    bool decompressed_;
};

} // namespace impl
} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace io
} // namespace keyblend
