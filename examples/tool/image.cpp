// keyblend convert's texture decoder (image.hpp): DDS, BMP and TGA to 8-bit RGBA. Every read
// is checked against the file's size before it is made, and the pixels are allocated only once the
// file is known to hold their data, so memory is bounded by the file (at most 256 times its size,
// for TGA's run-length packets) and time by the pixels.
//
// SPDX-License-Identifier: MIT
#include "image.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace tool {
namespace {

std::uint32_t u16(const unsigned char* p) { return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8; }
std::uint32_t u32(const unsigned char* p) {
    return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}
/// The little-endian value of `count` (1 to 4) bytes.
std::uint32_t uint_of(const unsigned char* p, unsigned count) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < count; ++i) v |= std::uint32_t(p[i]) << (8 * i);
    return v;
}

bool fail(std::string& why, std::string text) {
    why = std::move(text);
    return false;
}

std::string sides(std::uint64_t w, std::uint64_t h) { return std::to_string(w) + " x " + std::to_string(h); }

/// The sides' check, before the size of the data is worked out from them (no product of them can
/// overflow after it).
bool sides_ok(std::uint64_t w, std::uint64_t h, std::string& why) {
    if (w == 0 || h == 0) return fail(why, "it has no pixels (" + sides(w, h) + ")");
    if (w > max_image_side || h > max_image_side)
        return fail(why, "it is " + sides(w, h) + ", larger than " + std::to_string(max_image_side) + " on a side");
    return true;
}

/// Checks the sides and allocates the pixels: called once the file is known to hold them.
bool start(rgba_image& out, std::uint64_t w, std::uint64_t h, std::string& why) {
    if (!sides_ok(w, h, why)) return false;
    out.width = static_cast<std::uint32_t>(w);
    out.height = static_cast<std::uint32_t>(h);
    out.pixels.assign(static_cast<std::size_t>(w * h * 4), 0);
    return true;
}

bool ends_early(std::string& why, const char* what, std::uint64_t need, std::uint64_t have) {
    return fail(why, std::string("the file ends before its ") + what + " (" + std::to_string(need) + " bytes; " +
                         std::to_string(have) + " there)");
}

/// One colour channel of a packed pixel, by its bit mask, scaled to 0..255 (`none` without a mask).
struct channel {
    std::uint32_t mask = 0, max = 0;
    unsigned shift = 0;
    explicit channel(std::uint32_t m) : mask(m) {
        if (!m) return;
        while (!((m >> shift) & 1u)) ++shift;
        max = m >> shift;
    }
    unsigned char operator()(std::uint32_t pixel, unsigned char none) const {
        if (!mask) return none;
        const std::uint32_t v = (pixel & mask) >> shift; // <= max
        return static_cast<unsigned char>((std::uint64_t(v) * 255u + max / 2) / max);
    }
};

struct masks {
    channel r, g, b, a;
    unsigned char none; // a colour channel without a mask: 0 (255 for an alpha-only image)
    void put(std::uint32_t pixel, unsigned char* to) const {
        to[0] = r(pixel, none);
        to[1] = g(pixel, none);
        to[2] = b(pixel, none);
        to[3] = a(pixel, 255);
    }
};

// ---------------------------------------------------------------------------------------------
// DDS
// ---------------------------------------------------------------------------------------------

/// DXT1 to DXT5 (BC1 to BC3), and BC4 and BC5 (one and two channels: red, and red and green, as
/// Direct3D 10 samples them; blue 0, alpha 255), unsigned or signed.
enum class block_codec { bc1, bc2, bc3, bc4, bc4_signed, bc5, bc5_signed };
constexpr const char* codec_names[] = {"DXT1", "DXT3", "DXT5", "BC4", "BC4 signed", "BC5", "BC5 signed"};
constexpr bool eight_byte_blocks(block_codec c) { return c == block_codec::bc1 || c == block_codec::bc4 || c == block_codec::bc4_signed; }

void expand565(std::uint32_t c, unsigned char* to) {
    const std::uint32_t r = (c >> 11) & 31u, g = (c >> 5) & 63u, b = c & 31u;
    to[0] = static_cast<unsigned char>(r << 3 | r >> 2);
    to[1] = static_cast<unsigned char>(g << 2 | g >> 4);
    to[2] = static_cast<unsigned char>(b << 3 | b >> 2);
    to[3] = 255;
}

/// A 4 x 4 block's colours (BC1's 8 bytes; in BC2 and BC3 always the four-colour mode).
void colour_block(const unsigned char* p, bool four_colours, unsigned char (&px)[16][4]) {
    const std::uint32_t c0 = u16(p), c1 = u16(p + 2);
    unsigned char pal[4][4];
    expand565(c0, pal[0]);
    expand565(c1, pal[1]);
    for (unsigned k = 0; k < 3; ++k) {
        if (c0 > c1 || four_colours) {
            pal[2][k] = static_cast<unsigned char>((2u * pal[0][k] + pal[1][k] + 1u) / 3u);
            pal[3][k] = static_cast<unsigned char>((pal[0][k] + 2u * pal[1][k] + 1u) / 3u);
        } else {
            pal[2][k] = static_cast<unsigned char>((pal[0][k] + pal[1][k] + 1u) / 2u);
            pal[3][k] = 0;
        }
    }
    pal[2][3] = 255;
    pal[3][3] = c0 > c1 || four_colours ? 255 : 0; // BC1's three-colour mode: index 3 transparent black
    const std::uint32_t bits = u32(p + 4);
    for (unsigned i = 0; i < 16; ++i) std::memcpy(px[i], pal[(bits >> (2 * i)) & 3u], 4);
}

/// An interpolated 8-byte block's 16 values (BC3's alpha, BC4's red, BC5's red and green): two
/// endpoints and 3-bit indices; eight levels when e0 > e1, else six and the range's ends. Unsigned,
/// the levels rounded to integers. Signed, the endpoints are bytes of -127 to 127 (-128 reads as
/// -127), the ends -127 and 127, and the levels are mapped from [-1, 1] to 0 to 255 (x / 2 + 1/2,
/// rounded), as decoders that write 8-bit unsigned pixels do.
void interpolated_block(const unsigned char* p, bool is_signed, unsigned char (&v)[16]) {
    const auto endpoint = [is_signed](unsigned char b) {
        return is_signed ? std::max(static_cast<int>(static_cast<signed char>(b)), -127) : static_cast<int>(b);
    };
    const int e0 = endpoint(p[0]), e1 = endpoint(p[1]);
    const int steps = e0 > e1 ? 7 : 5;
    // Each level times `steps`.
    int level[8] = {e0 * steps, e1 * steps, 0, 0, 0, 0, (is_signed ? -127 : 0) * steps, (is_signed ? 127 : 255) * steps};
    for (int k = 1; k < steps; ++k) level[k + 1] = (steps - k) * e0 + k * e1;
    unsigned char byte[8];
    for (int k = 0; k < 8; ++k)
        byte[k] = static_cast<unsigned char>(is_signed ? std::lround((double(level[k]) / (127.0 * steps) * 0.5 + 0.5) * 255.0)
                                                       : (level[k] + steps / 2) / steps);
    std::uint64_t bits = 0;
    for (unsigned i = 0; i < 6; ++i) bits |= std::uint64_t(p[2 + i]) << (8 * i);
    for (unsigned i = 0; i < 16; ++i) v[i] = byte[(bits >> (3 * i)) & 7u];
}

bool decode_blocks(const unsigned char* data, std::uint32_t w, std::uint32_t h, block_codec codec, rgba_image& out) {
    const std::size_t block_bytes = eight_byte_blocks(codec) ? 8 : 16;
    const bool is_signed = codec == block_codec::bc4_signed || codec == block_codec::bc5_signed;
    const std::uint32_t bw = (w + 3) / 4, bh = (h + 3) / 4;
    for (std::uint32_t by = 0; by < bh; ++by)
        for (std::uint32_t bx = 0; bx < bw; ++bx) {
            const unsigned char* p = data + (std::size_t(by) * bw + bx) * block_bytes;
            unsigned char px[16][4];
            if (codec == block_codec::bc1) {
                colour_block(p, false, px);
            } else if (codec != block_codec::bc2 && codec != block_codec::bc3) { // BC4, BC5
                const bool two = codec == block_codec::bc5 || codec == block_codec::bc5_signed;
                unsigned char red[16], green[16] = {};
                interpolated_block(p, is_signed, red);
                if (two) interpolated_block(p + 8, is_signed, green);
                for (unsigned i = 0; i < 16; ++i) {
                    px[i][0] = red[i];
                    px[i][1] = green[i];
                    px[i][2] = 0;
                    px[i][3] = 255;
                }
            } else {
                colour_block(p + 8, true, px);
                if (codec == block_codec::bc2) {
                    for (unsigned i = 0; i < 16; ++i)
                        px[i][3] = static_cast<unsigned char>(((p[i / 2] >> (4 * (i % 2))) & 15u) * 17u);
                } else {
                    unsigned char alpha[16];
                    interpolated_block(p, false, alpha);
                    for (unsigned i = 0; i < 16; ++i) px[i][3] = alpha[i];
                }
            }
            for (unsigned i = 0; i < 16; ++i) {
                const std::uint32_t x = bx * 4 + i % 4, y = by * 4 + i / 4;
                if (x < w && y < h) std::memcpy(&out.pixels[(std::size_t(y) * w + x) * 4], px[i], 4);
            }
        }
    return true;
}

std::string fourcc_text(std::uint32_t f) {
    std::string s;
    for (unsigned i = 0; i < 4; ++i) {
        const char c = static_cast<char>((f >> (8 * i)) & 0xFFu);
        if (c < 32 || c > 126) return "D3DFORMAT " + std::to_string(f);
        s += c;
    }
    return "'" + s + "'";
}

bool decode_dds(const unsigned char* b, std::size_t size, rgba_image& out, std::string& why) {
    if (size < 128) return ends_early(why, "DDS header", 128, size);
    if (u32(b + 4) != 124 || u32(b + 76) != 32)
        return fail(why, "a DDS file whose header sizes are not 124 and 32 bytes");
    const std::uint32_t h = u32(b + 12), w = u32(b + 16);
    const std::uint32_t flags = u32(b + 80), fourcc = u32(b + 84);
    std::size_t at = 128;
    bool blocks = false;
    block_codec codec = block_codec::bc1;
    std::uint32_t bits = 0, rm = 0, gm = 0, bm = 0, am = 0;
    unsigned char none = 0;
    const auto is = [&](const char* name) { return fourcc == u32(reinterpret_cast<const unsigned char*>(name)); };
    if (flags & 0x4u) { // DDPF_FOURCC
        blocks = true;
        if (is("DXT1")) {
            codec = block_codec::bc1;
        } else if (is("DXT3")) {
            codec = block_codec::bc2;
        } else if (is("DXT5")) {
            codec = block_codec::bc3;
        } else if (is("ATI1") || is("BC4U")) {
            codec = block_codec::bc4;
        } else if (is("BC4S")) {
            codec = block_codec::bc4_signed;
        } else if (is("ATI2") || is("BC5U")) {
            codec = block_codec::bc5;
        } else if (is("BC5S")) {
            codec = block_codec::bc5_signed;
        } else if (is("DX10")) {
            if (size < 148) return ends_early(why, "DDS DX10 header", 148, size);
            at = 148;
            const std::uint32_t dxgi = u32(b + 128);
            if (u32(b + 132) != 3) return fail(why, "a DDS file that is not a 2D texture");
            switch (dxgi) {
            case 71: case 72: codec = block_codec::bc1; break;
            case 74: case 75: codec = block_codec::bc2; break;
            case 77: case 78: codec = block_codec::bc3; break;
            case 79: case 80: codec = block_codec::bc4; break;
            case 81: codec = block_codec::bc4_signed; break;
            case 82: case 83: codec = block_codec::bc5; break;
            case 84: codec = block_codec::bc5_signed; break;
            case 28: case 29: blocks = false; bits = 32; rm = 0xFFu; gm = 0xFF00u; bm = 0xFF0000u; am = 0xFF000000u; break;
            case 87: case 91: blocks = false; bits = 32; rm = 0xFF0000u; gm = 0xFF00u; bm = 0xFFu; am = 0xFF000000u; break;
            case 88: case 93: blocks = false; bits = 32; rm = 0xFF0000u; gm = 0xFF00u; bm = 0xFFu; break;
            default:
                return fail(why, "a DDS file of DXGI format " + std::to_string(dxgi) +
                                     ", which convert does not decode (BC1 to BC5 and 8-bit RGBA it does)");
            }
        } else {
            return fail(why, "a DDS file compressed as " + fourcc_text(fourcc) +
                                 ", which convert does not decode (DXT1, DXT3, DXT5, ATI1, ATI2, BC4U, BC4S, BC5U and BC5S it does)");
        }
    } else if (flags & (0x40u | 0x20000u | 0x2u)) { // DDPF_RGB, DDPF_LUMINANCE, DDPF_ALPHA
        bits = u32(b + 88);
        rm = u32(b + 92);
        gm = u32(b + 96);
        bm = u32(b + 100);
        am = flags & 0x3u ? u32(b + 104) : 0; // DDPF_ALPHAPIXELS, DDPF_ALPHA
        if (flags & 0x20000u) gm = bm = rm;   // luminance: grey
        if (!(flags & (0x40u | 0x20000u))) { // alpha only: white
            rm = gm = bm = 0;
            none = 255;
        }
        if (bits != 8 && bits != 16 && bits != 24 && bits != 32)
            return fail(why, "a DDS file of " + std::to_string(bits) + " bits a pixel, which convert does not decode");
    } else {
        return fail(why, "a DDS file whose pixel format is neither compressed, RGB nor luminance");
    }
    if (!sides_ok(w, h, why)) return false;
    const std::uint64_t need = blocks ? std::uint64_t((w + 3) / 4) * ((h + 3) / 4) * (eight_byte_blocks(codec) ? 8 : 16)
                                      : std::uint64_t(w) * (bits / 8) * h;
    if (size - at < need) return ends_early(why, "pixels", at + need, size);
    if (!start(out, w, h, why)) return false;
    if (blocks) {
        out.kind = std::string("DDS (") + codec_names[static_cast<int>(codec)] + ")";
        return decode_blocks(b + at, w, h, codec, out);
    }
    const char* layout = flags & 0x20000u ? (am ? "luminance and alpha" : "luminance")
                         : none == 255  ? "alpha"
                         : am           ? "RGBA"
                                        : "RGB";
    out.kind = "DDS (" + std::to_string(bits) + "-bit " + layout + ")";
    const masks m{channel(rm), channel(gm), channel(bm), channel(am), none};
    const unsigned bytes = bits / 8;
    for (std::size_t i = 0; i < std::size_t(w) * h; ++i) m.put(uint_of(b + at + i * bytes, bytes), &out.pixels[i * 4]);
    return true;
}

// ---------------------------------------------------------------------------------------------
// BMP
// ---------------------------------------------------------------------------------------------

using bmp_palette = std::vector<std::array<unsigned char, 4>>;

/// The i-th colour index of `bits` (1, 4 or 8) packed from p, high bits of a byte first.
unsigned packed_index(const unsigned char* p, std::uint64_t i, unsigned bits) {
    const unsigned per_byte = 8 / bits;
    return (p[i / per_byte] >> (8 - bits * (i % per_byte + 1))) & ((1u << bits) - 1u);
}

/// The palette's colour `index` into `to`, or the reason it has none.
bool palette_colour(const bmp_palette& palette, unsigned index, unsigned char* to, std::string& why) {
    if (index >= palette.size())
        return fail(why, "a BMP pixel's colour " + std::to_string(index) + " is past its palette of " +
                             std::to_string(palette.size()));
    std::memcpy(to, palette[index].data(), 4);
    return true;
}

/// BMP's run-length data (RLE8, or RLE4 at 4 bits a pixel) from `at`, rows bottom-up: pairs of a
/// count and a colour (RLE4: two colours, taken in turn), and after a count of 0 an escape: 0 ends
/// the row, 1 the image, 2 jumps (dx right, dy up: two more bytes), 3 to 255 that many colours as
/// they are (padded to 16 bits). The pixels it jumps over or never reaches stay transparent black.
bool decode_bmp_rle(const unsigned char* b, std::size_t size, std::uint64_t at, unsigned bits,
                    const bmp_palette& palette, rgba_image& out, std::string& why) {
    const std::uint64_t w = out.width, h = out.height;
    std::uint64_t x = 0, y = 0;
    const auto put = [&](unsigned index) {
        if (y >= h) return fail(why, "a BMP's run-length data goes past its last row");
        if (x >= w) return fail(why, "a BMP's run-length data goes past the end of row " + std::to_string(y));
        return palette_colour(palette, index, &out.pixels[((h - 1 - y) * w + x++) * 4], why);
    };
    for (;;) {
        if (size - at < 2) return ends_early(why, "run-length data's end-of-image mark", at + 2, size);
        const unsigned count = b[at], value = b[at + 1];
        at += 2;
        if (count) { // the colour byte b[at - 1] again and again (RLE4: its two colours in turn)
            for (unsigned i = 0; i < count; ++i)
                if (!put(packed_index(b + at - 1, bits == 8 ? 0 : i % 2, bits))) return false;
        } else if (value == 0) {
            x = 0;
            ++y;
        } else if (value == 1) {
            return true;
        } else if (value == 2) {
            if (size - at < 2) return ends_early(why, "run-length data's jump", at + 2, size);
            x += b[at];
            y += b[at + 1];
            at += 2;
        } else {
            const std::uint64_t packed = bits == 8 ? value : (value + 1) / 2, padded = (packed + 1) / 2 * 2;
            if (size - at < padded) return ends_early(why, "run-length data's literal run", at + padded, size);
            for (unsigned i = 0; i < value; ++i)
                if (!put(packed_index(b + at, i, bits))) return false;
            at += padded;
        }
    }
}

bool decode_bmp(const unsigned char* b, std::size_t size, rgba_image& out, std::string& why) {
    if (size < 18) return ends_early(why, "BMP headers", 18, size);
    const std::uint64_t data_at = u32(b + 10), header = u32(b + 14);
    if (header != 12 && (header < 40 || header > 124))
        return fail(why, "a BMP header of " + std::to_string(header) + " bytes, which BMP does not have");
    if (size < 14 + header) return ends_early(why, "BMP header", 14 + header, size);
    std::int64_t w, h;
    std::uint32_t bits, compression = 0, colours = 0;
    std::uint64_t palette_at = 14 + header, entry = 4;
    if (header == 12) {
        w = u16(b + 18);
        h = u16(b + 20);
        bits = u16(b + 24);
        entry = 3;
    } else {
        w = static_cast<std::int32_t>(u32(b + 18));
        h = static_cast<std::int32_t>(u32(b + 22));
        bits = u16(b + 28);
        compression = u32(b + 30);
        colours = u32(b + 46);
    }
    const bool top_down = h < 0;
    if (h < 0) h = -h;
    if (w < 0) return fail(why, "a BMP of negative width " + std::to_string(w));
    const bool rle = compression == 1 || compression == 2, fields = compression == 3 || compression == 6;
    if (compression != 0 && !rle && !fields)
        return fail(why, "a BMP compressed as type " + std::to_string(compression) +
                             " (JPEG or PNG), which convert does not decode");
    if (bits != 1 && bits != 4 && bits != 8 && bits != 16 && bits != 24 && bits != 32)
        return fail(why, "a BMP of " + std::to_string(bits) + " bits a pixel, which BMP does not have");
    if (rle && bits != (compression == 1 ? 8u : 4u))
        return fail(why, std::string("a BMP compressed as RLE") + (compression == 1 ? "8" : "4") + " at " +
                             std::to_string(bits) + " bits a pixel");
    if (rle && top_down) return fail(why, "a top-down BMP compressed as RLE, which BMP does not allow");
    std::uint32_t rm = 0xFF0000u, gm = 0xFF00u, bm = 0xFFu, am = 0;
    if (bits == 16) rm = 0x7C00u, gm = 0x3E0u, bm = 0x1Fu;
    if (fields) { // bit fields: after a 40-byte header, or in a V4/V5 one
        if (bits != 16 && bits != 32) return fail(why, "a BMP with bit fields at " + std::to_string(bits) + " bits a pixel");
        std::uint64_t at = 14 + 40;
        const std::uint64_t count = compression == 6 || header >= 56 ? 4 : 3;
        if (header == 40) palette_at += 4 * count;
        if (size < at + 4 * count) return ends_early(why, "BMP bit fields", at + 4 * count, size);
        rm = u32(b + at);
        gm = u32(b + at + 4);
        bm = u32(b + at + 8);
        am = count == 4 ? u32(b + at + 12) : 0;
    }
    bmp_palette palette;
    if (bits <= 8) {
        const std::uint64_t most = std::uint64_t{1} << bits;
        const std::uint64_t count = colours ? colours : most;
        if (count > most)
            return fail(why, "a BMP palette of " + std::to_string(count) + " colours for " + std::to_string(bits) + " bits");
        if (size < palette_at + count * entry) return ends_early(why, "BMP palette", palette_at + count * entry, size);
        for (std::uint64_t i = 0; i < count; ++i) {
            const unsigned char* p = b + palette_at + i * entry;
            palette.push_back({p[2], p[1], p[0], 255});
        }
    }
    if (!sides_ok(static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), why)) return false;
    if (rle) {
        // Two bytes make at most 255 pixels: more than 128 a byte needs jumps over most of the
        // image, which no encoder writes to save space; refused before the pixels are made.
        const std::uint64_t pixels = static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h);
        if (data_at > size || pixels > 128 * (size - data_at))
            return fail(why, "a BMP whose run-length data (" + std::to_string(data_at > size ? 0 : size - data_at) +
                                 " bytes) is too short for " +
                                 sides(static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h)) + " pixels");
        if (!start(out, static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), why)) return false;
        out.kind = std::string("BMP (RLE") + (bits == 8 ? "8" : "4") + ", palette)";
        return decode_bmp_rle(b, size, data_at, bits, palette, out, why);
    }
    const std::uint64_t stride = (static_cast<std::uint64_t>(w) * bits + 31) / 32 * 4;
    const std::uint64_t need = stride * static_cast<std::uint64_t>(h);
    if (data_at > size || size - data_at < need) return ends_early(why, "pixels", data_at + need, size);
    if (!start(out, static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), why)) return false;
    out.kind = "BMP (" + std::to_string(bits) + "-bit" + (bits <= 8 ? ", palette)" : ")");
    const masks m{channel(rm), channel(gm), channel(bm), channel(am), 0};
    for (std::uint32_t r = 0; r < out.height; ++r) {
        const unsigned char* row = b + data_at + r * stride;
        unsigned char* to = &out.pixels[std::size_t(top_down ? r : out.height - 1 - r) * out.width * 4];
        for (std::uint32_t x = 0; x < out.width; ++x, to += 4) {
            if (bits > 8) {
                m.put(uint_of(row + std::size_t(x) * (bits / 8), bits / 8), to);
                continue;
            }
            if (!palette_colour(palette, packed_index(row, x, bits), to, why)) return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// TGA
// ---------------------------------------------------------------------------------------------

bool decode_tga(const unsigned char* b, std::size_t size, rgba_image& out, std::string& why) {
    if (size < 18) return ends_early(why, "TGA header", 18, size);
    const unsigned id_length = b[0], map_type = b[1], type = b[2], map_bits = b[7], bits = b[16], descriptor = b[17];
    const std::uint32_t map_first = u16(b + 3), map_length = u16(b + 5), w = u16(b + 12), h = u16(b + 14);
    const unsigned base = type & 7u;
    const bool rle = type & 8u;
    if (type > 11 || (base != 1 && base != 2 && base != 3))
        return fail(why, "a TGA of image type " + std::to_string(type) + ", which convert does not decode");
    if (map_type > 1) return fail(why, "a TGA of colour map type " + std::to_string(map_type));
    if (base == 1 && map_type != 1) return fail(why, "a colour-mapped TGA without a colour map");
    const bool alpha_bits = (descriptor & 15u) != 0;
    std::uint64_t at = 18 + id_length;
    std::vector<std::array<unsigned char, 4>> map;
    // A true-colour value of 15, 16, 24 or 32 bits (the map's entries and type 2's pixels).
    const auto colour = [alpha_bits](const unsigned char* p, unsigned n, unsigned char* to) {
        if (n <= 16) {
            const std::uint32_t v = u16(p);
            const std::uint32_t r = (v >> 10) & 31u, g = (v >> 5) & 31u, bl = v & 31u;
            to[0] = static_cast<unsigned char>(r << 3 | r >> 2);
            to[1] = static_cast<unsigned char>(g << 3 | g >> 2);
            to[2] = static_cast<unsigned char>(bl << 3 | bl >> 2);
            to[3] = n == 16 && alpha_bits && !(v >> 15) ? 0 : 255;
        } else {
            to[0] = p[2];
            to[1] = p[1];
            to[2] = p[0];
            to[3] = n == 32 && alpha_bits ? p[3] : 255;
        }
    };
    const auto truecolour_bits = [](unsigned n) { return n == 15 || n == 16 || n == 24 || n == 32; };
    if (map_type == 1) {
        if (!truecolour_bits(map_bits)) return fail(why, "a TGA colour map of " + std::to_string(map_bits) + "-bit entries");
        const unsigned entry = (map_bits + 7) / 8;
        if (size < at + std::uint64_t(map_length) * entry)
            return ends_early(why, "TGA colour map", at + std::uint64_t(map_length) * entry, size);
        for (std::uint32_t i = 0; i < map_length; ++i) {
            std::array<unsigned char, 4> c{};
            colour(b + at + std::size_t(i) * entry, map_bits, c.data());
            map.push_back(c);
        }
        at += std::uint64_t(map_length) * entry;
    }
    if (base == 1 ? bits != 8 && bits != 16 : base == 2 ? !truecolour_bits(bits) : bits != 8 && bits != 16)
        return fail(why, "a TGA of image type " + std::to_string(type) + " at " + std::to_string(bits) + " bits a pixel");
    if (!sides_ok(w, h, why)) return false;
    const unsigned bytes = (bits + 7) / 8;
    const std::uint64_t pixels = std::uint64_t(w) * h;
    // Raw: every pixel's bytes; run-length: at least a packet (a byte and a pixel) per 128 pixels.
    const std::uint64_t need = rle ? (pixels + 127) / 128 * (1 + bytes) : pixels * bytes;
    if (at > size || size - at < need) return ends_early(why, "pixels", at + need, size);
    if (!start(out, w, h, why)) return false;
    out.kind = std::string("TGA (") + (rle ? "RLE, " : "") + std::to_string(bits) + "-bit" +
               (base == 1 ? ", colour-mapped)" : base == 3 ? ", grey)" : ")");
    std::string bad;
    const auto put = [&](std::uint64_t i, const unsigned char* p) {
        const std::uint64_t row = i / w, col = i % w;
        const std::uint64_t y = descriptor & 0x20u ? row : h - 1 - row;
        const std::uint64_t x = descriptor & 0x10u ? w - 1 - col : col;
        unsigned char* to = &out.pixels[static_cast<std::size_t>((y * w + x) * 4)];
        if (base == 2) {
            colour(p, bits, to);
        } else if (base == 3) {
            to[0] = to[1] = to[2] = p[0];
            to[3] = bytes == 2 ? p[1] : 255;
        } else {
            const std::uint32_t index = bytes == 2 ? u16(p) : p[0];
            if (index < map_first || index - map_first >= map.size()) {
                bad = "a TGA pixel's colour " + std::to_string(index) + " is outside its colour map (" +
                      std::to_string(map_first) + " to " + std::to_string(map_first + map.size()) + ")";
                return false;
            }
            std::memcpy(to, map[index - map_first].data(), 4);
        }
        return true;
    };
    const unsigned char* p = b + at;
    const unsigned char* const end = b + size;
    const auto short_packets = [&](std::uint64_t done) {
        return fail(why, "the file ends after " + std::to_string(done) + " of the TGA's " + std::to_string(pixels) +
                             " pixels");
    };
    for (std::uint64_t i = 0; i < pixels;) {
        if (!rle) {
            if (!put(i++, p)) return fail(why, bad);
            p += bytes;
            continue;
        }
        if (end - p < 1 + std::ptrdiff_t(bytes)) return short_packets(i);
        const unsigned head = *p++;
        const std::uint64_t count = std::min<std::uint64_t>((head & 127u) + 1u, pixels - i);
        if (head & 128u) {
            for (std::uint64_t k = 0; k < count; ++k)
                if (!put(i++, p)) return fail(why, bad);
            p += bytes;
        } else {
            if (std::uint64_t(end - p) < count * bytes) return short_packets(i);
            for (std::uint64_t k = 0; k < count; ++k, p += bytes)
                if (!put(i++, p)) return fail(why, bad);
        }
    }
    return true;
}

bool has_tga_footer(const unsigned char* b, std::size_t size) {
    static const char signature[] = "TRUEVISION-XFILE.";
    return size >= 18 + 26 && std::memcmp(b + size - 18, signature, 18) == 0;
}

} // namespace

bool decode_image(const unsigned char* bytes, std::size_t size, bool maybe_tga, rgba_image& out, std::string& why) {
    out = rgba_image{};
    bool ok;
    if (size >= 4 && std::memcmp(bytes, "DDS ", 4) == 0) ok = decode_dds(bytes, size, out, why);
    else if (size >= 2 && bytes[0] == 'B' && bytes[1] == 'M') ok = decode_bmp(bytes, size, out, why);
    else if (maybe_tga || has_tga_footer(bytes, size)) ok = decode_tga(bytes, size, out, why);
    else return fail(why, "neither PNG, JPEG, DDS, BMP nor TGA");
    if (!ok) {
        out = rgba_image{};
        return false;
    }
    for (std::size_t i = 3; i < out.pixels.size() && out.opaque; i += 4) out.opaque = out.pixels[i] == 255;
    return true;
}

} // namespace tool
