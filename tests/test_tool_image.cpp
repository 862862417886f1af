// keyblend convert's texture decoder (examples/tool/image.hpp): DDS, BMP and TGA files built byte by
// byte, their pixels worked out by hand from the formats' definitions; and bad input (truncated at
// every length, sides past the limit, palettes and colour maps overrun, types not decoded) an error
// with its reason.
#include "../examples/tool/image.hpp"
#include "helpers.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

using kbtest::contains;

namespace {

using bytes = std::vector<unsigned char>;
using rgba = std::array<unsigned, 4>;

void put16(bytes& b, std::size_t at, std::uint32_t v) {
    if (b.size() < at + 2) b.resize(at + 2);
    b[at] = static_cast<unsigned char>(v);
    b[at + 1] = static_cast<unsigned char>(v >> 8);
}
void put32(bytes& b, std::size_t at, std::uint32_t v) {
    put16(b, at, v & 0xFFFFu);
    put16(b, at + 2, v >> 16);
}
void append(bytes& b, std::initializer_list<unsigned> values) {
    for (unsigned v : values) b.push_back(static_cast<unsigned char>(v));
}

/// A DDS header: `fourcc` (0 for none) or the pixel format's flags, bit count and masks.
bytes dds(std::uint32_t w, std::uint32_t h, const char* fourcc, std::uint32_t flags = 0, std::uint32_t bits = 0,
          std::array<std::uint32_t, 4> m = {}) {
    bytes b(128, 0);
    b[0] = 'D', b[1] = 'D', b[2] = 'S', b[3] = ' ';
    put32(b, 4, 124);
    put32(b, 8, 0x1007); // caps, height, width, pixel format
    put32(b, 12, h);
    put32(b, 16, w);
    put32(b, 76, 32);
    if (fourcc) {
        put32(b, 80, 0x4);
        for (int i = 0; i < 4; ++i) b[84 + i] = static_cast<unsigned char>(fourcc[i]);
    } else {
        put32(b, 80, flags);
        put32(b, 88, bits);
        for (int i = 0; i < 4; ++i) put32(b, 92 + 4 * i, m[i]);
    }
    put32(b, 108, 0x1000);
    return b;
}

/// A BMP with a 40-byte header (or `header` bytes, zero-filled past 40), its pixel data at `data_at`.
bytes bmp(std::int32_t w, std::int32_t h, unsigned bits, std::uint32_t compression = 0, std::uint32_t colours = 0,
          std::uint32_t header = 40) {
    bytes b(14 + header, 0);
    b[0] = 'B', b[1] = 'M';
    put32(b, 14, header);
    put32(b, 18, static_cast<std::uint32_t>(w));
    put32(b, 22, static_cast<std::uint32_t>(h));
    put16(b, 26, 1);
    put16(b, 28, bits);
    put32(b, 30, compression);
    put32(b, 46, colours);
    return b;
}
void finish_bmp(bytes& b, std::size_t data_at) { put32(b, 10, static_cast<std::uint32_t>(data_at)); }

bytes tga(unsigned type, unsigned w, unsigned h, unsigned bits, unsigned descriptor, unsigned map_first = 0,
          unsigned map_length = 0, unsigned map_bits = 0) {
    bytes b(18, 0);
    b[1] = map_length ? 1 : 0;
    b[2] = static_cast<unsigned char>(type);
    put16(b, 3, map_first);
    put16(b, 5, map_length);
    b[7] = static_cast<unsigned char>(map_bits);
    put16(b, 12, w);
    put16(b, 14, h);
    b[16] = static_cast<unsigned char>(bits);
    b[17] = static_cast<unsigned char>(descriptor);
    return b;
}

/// With KEYBLEND_IMAGE_SEEDS set to a folder, the files the tests decode are written there too:
/// the image fuzzer's seeds (.ci/run).
void save_seed(const bytes& b) {
    const char* folder = std::getenv("KEYBLEND_IMAGE_SEEDS");
    if (!folder) return;
    static int count = 0;
    std::ofstream(std::string(folder) + "/seed_" + std::to_string(count++), std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

tool::rgba_image decoded(const bytes& b, bool maybe_tga = false) {
    save_seed(b);
    tool::rgba_image image;
    std::string why;
    const bool ok = tool::decode_image(b.data(), b.size(), maybe_tga, image, why);
    REQUIRE_MESSAGE(ok, why);
    REQUIRE(image.pixels.size() == std::size_t(image.width) * image.height * 4);
    return image;
}

std::string refused(const bytes& b, bool maybe_tga = false) {
    tool::rgba_image image;
    std::string why;
    CHECK_FALSE(tool::decode_image(b.data(), b.size(), maybe_tga, image, why));
    CHECK(image.pixels.empty());
    CHECK_FALSE(why.empty());
    return why;
}

rgba at(const tool::rgba_image& im, std::uint32_t x, std::uint32_t y) {
    const unsigned char* p = &im.pixels[(std::size_t(y) * im.width + x) * 4];
    return {p[0], p[1], p[2], p[3]};
}

/// An interpolated 8-byte block (DXT5's alpha, BC4's red, BC5's red and green): endpoints e0 and
/// e1, then pixel i's 3-bit index i % 8, little-endian.
void interpolated_block(bytes& b, unsigned e0, unsigned e1) {
    append(b, {e0, e1});
    std::uint64_t bits = 0;
    for (unsigned i = 0; i < 16; ++i) bits |= std::uint64_t(i % 8) << (3 * i);
    for (int i = 0; i < 6; ++i) b.push_back(static_cast<unsigned char>(bits >> (8 * i)));
}
/// Its levels, by index: e0 = 255 > e1 = 0, eight levels ((7 - k) 255 + k 0) / 7, rounded; and
/// e0 = 0 <= e1 = 250, six levels, then 0 and 255.
constexpr unsigned levels8[8] = {255, 0, 219, 182, 146, 109, 73, 36};
constexpr unsigned levels6[8] = {0, 250, 50, 100, 150, 200, 0, 255};

/// Every shorter prefix of a good file is refused with a reason (and never read past).
void every_prefix_refused(const bytes& b, bool maybe_tga = false) {
    for (std::size_t n = 0; n < b.size(); ++n) {
        const bytes prefix(b.begin(), b.begin() + std::ptrdiff_t(n));
        tool::rgba_image image;
        std::string why;
        CHECK_FALSE_MESSAGE(tool::decode_image(prefix.data(), prefix.size(), maybe_tga, image, why), n);
    }
}

} // namespace

TEST_CASE("texture decoder: DDS DXT1's four- and three-colour blocks, cropped to the image") {
    // 6 x 3: two blocks, the second's last two columns and the last row past the image.
    bytes b = dds(6, 3, "DXT1");
    // Block 0: red > blue, four colours; pixel i takes index i % 4.
    put16(b, 128, 0xF800);
    put16(b, 130, 0x001F);
    put32(b, 132, 0xE4E4E4E4u); // indices 0, 1, 2, 3 in every row
    // Block 1: blue < red, three colours and transparent black.
    put16(b, 136, 0x001F);
    put16(b, 138, 0xF800);
    put32(b, 140, 0xE4E4E4E4u);
    const tool::rgba_image im = decoded(b);
    CHECK(im.kind == "DDS (DXT1)");
    CHECK(im.width == 6);
    CHECK(im.height == 3);
    for (std::uint32_t y = 0; y < 3; ++y) {
        CHECK(at(im, 0, y) == rgba{255, 0, 0, 255});
        CHECK(at(im, 1, y) == rgba{0, 0, 255, 255});
        CHECK(at(im, 2, y) == rgba{170, 0, 85, 255}); // (2 red + blue) / 3, rounded
        CHECK(at(im, 3, y) == rgba{85, 0, 170, 255});
        CHECK(at(im, 4, y) == rgba{0, 0, 255, 255});
        CHECK(at(im, 5, y) == rgba{255, 0, 0, 255});
    }
    CHECK(im.opaque);
    // Indices 2 and 3 of the three-colour block: the mean, and transparent black.
    put32(b, 140, 0xFFFFAAAAu); // rows 0, 1: index 2; rows 2, 3: index 3
    const tool::rgba_image three = decoded(b);
    CHECK(at(three, 4, 0) == rgba{128, 0, 128, 255});
    CHECK(at(three, 5, 2) == rgba{0, 0, 0, 0});
    CHECK_FALSE(three.opaque);
    every_prefix_refused(b);
}

TEST_CASE("texture decoder: DDS DXT3's explicit alpha and DXT5's interpolated alpha") {
    bytes b3 = dds(4, 4, "DXT3");
    for (int i = 0; i < 8; ++i) b3.push_back(static_cast<unsigned char>((2 * i) | (2 * i + 1) << 4)); // alpha i
    append(b3, {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}); // white (c0 == c1: four colours all the same)
    const tool::rgba_image im3 = decoded(b3);
    CHECK(im3.kind == "DDS (DXT3)");
    for (unsigned i = 0; i < 16; ++i) CHECK(at(im3, i % 4, i / 4) == rgba{255, 255, 255, 17 * i});

    bytes b5 = dds(4, 4, "DXT5");
    interpolated_block(b5, 255, 0); // eight levels
    append(b5, {0x00, 0xF8, 0x00, 0xF8, 0, 0, 0, 0}); // red
    const tool::rgba_image im5 = decoded(b5);
    CHECK(im5.kind == "DDS (DXT5)");
    for (unsigned i = 0; i < 16; ++i) CHECK(at(im5, i % 4, i / 4) == rgba{255, 0, 0, levels8[i % 8]});
    // a0 = 0 <= a1 = 250: six levels, then 0 and 255.
    b5[128] = 0;
    b5[129] = 250;
    const tool::rgba_image six = decoded(b5);
    for (unsigned i = 0; i < 16; ++i) CHECK(at(six, i % 4, i / 4)[3] == levels6[i % 8]);
    every_prefix_refused(b5);
}

TEST_CASE("texture decoder: DDS BC4 and BC5, unsigned and signed, by four-character code and DX10 format") {
    // BC4: red only, as Direct3D samples it (green and blue 0, opaque).
    for (const char* code : {"ATI1", "BC4U"}) {
        bytes b = dds(4, 4, code);
        interpolated_block(b, 255, 0);
        const tool::rgba_image im = decoded(b);
        CHECK(im.kind == "DDS (BC4)");
        for (unsigned i = 0; i < 16; ++i) CHECK(at(im, i % 4, i / 4) == rgba{levels8[i % 8], 0, 0, 255});
        CHECK(im.opaque);
        every_prefix_refused(b);
    }
    // BC5: red, then green.
    bytes b5 = dds(4, 4, "ATI2");
    interpolated_block(b5, 255, 0);
    interpolated_block(b5, 0, 250);
    const tool::rgba_image im5 = decoded(b5);
    CHECK(im5.kind == "DDS (BC5)");
    for (unsigned i = 0; i < 16; ++i) CHECK(at(im5, i % 4, i / 4) == rgba{levels8[i % 8], levels6[i % 8], 0, 255});
    every_prefix_refused(b5);
    // Signed BC4: 127 and -128 (read as -127), eight levels 127 (7 - 2k) / 7 mapped from [-1, 1]:
    // (x / 2 + 1/2) 255, rounded, the same bytes as the unsigned block's.
    bytes s4 = dds(4, 4, "BC4S");
    interpolated_block(s4, 0x7F, 0x80);
    const tool::rgba_image is4 = decoded(s4);
    CHECK(is4.kind == "DDS (BC4 signed)");
    for (unsigned i = 0; i < 16; ++i) CHECK(at(is4, i % 4, i / 4) == rgba{levels8[i % 8], 0, 0, 255});
    // Signed BC5 by its DX10 format (84): green 0 <= 100, six levels (0, 100, 20, 40, 60, 80),
    // then -127 and 127; 0 maps to 127.5, rounded up.
    bytes s5 = dds(4, 4, "DX10");
    s5.resize(148, 0);
    put32(s5, 128, 84);
    put32(s5, 132, 3);
    interpolated_block(s5, 0x7F, 0x80);
    interpolated_block(s5, 0, 100);
    const unsigned signed6[8] = {128, 228, 148, 168, 188, 208, 0, 255};
    const tool::rgba_image is5 = decoded(s5);
    CHECK(is5.kind == "DDS (BC5 signed)");
    for (unsigned i = 0; i < 16; ++i) CHECK(at(is5, i % 4, i / 4) == rgba{levels8[i % 8], signed6[i % 8], 0, 255});
    every_prefix_refused(s5);
    // Unsigned BC4 by its DX10 format (80).
    put32(s5, 128, 80);
    s5.resize(156);
    const tool::rgba_image u4 = decoded(s5);
    CHECK(u4.kind == "DDS (BC4)");
    // (The red block's 0x7F and 0x80 read unsigned: 127 <= 128, six levels; pixel 0 takes e0,
    // pixel 6 the level 0, pixel 7 the level 255.)
    CHECK(at(u4, 0, 0) == rgba{127, 0, 0, 255});
    CHECK(at(u4, 2, 1) == rgba{0, 0, 0, 255});
    CHECK(at(u4, 3, 1) == rgba{255, 0, 0, 255});
}

TEST_CASE("texture decoder: uncompressed DDS by their masks: 24-bit RGB, 16-bit 565, 32-bit ARGB, luminance") {
    bytes rgb = dds(2, 1, nullptr, 0x40, 24, {0xFF0000, 0xFF00, 0xFF, 0});
    append(rgb, {1, 2, 3, 10, 20, 30}); // blue, green, red in memory
    const tool::rgba_image a = decoded(rgb);
    CHECK(a.kind == "DDS (24-bit RGB)");
    CHECK(at(a, 0, 0) == rgba{3, 2, 1, 255});
    CHECK(at(a, 1, 0) == rgba{30, 20, 10, 255});

    bytes r565 = dds(2, 1, nullptr, 0x40, 16, {0xF800, 0x7E0, 0x1F, 0});
    append(r565, {0x00, 0xF8, 0xE0, 0x07}); // red; green
    const tool::rgba_image c = decoded(r565);
    CHECK(at(c, 0, 0) == rgba{255, 0, 0, 255});
    CHECK(at(c, 1, 0) == rgba{0, 255, 0, 255});

    bytes argb = dds(1, 1, nullptr, 0x41, 32, {0xFF0000, 0xFF00, 0xFF, 0xFF000000u});
    append(argb, {40, 50, 60, 70});
    const tool::rgba_image d = decoded(argb);
    CHECK(d.kind == "DDS (32-bit RGBA)");
    CHECK(at(d, 0, 0) == rgba{60, 50, 40, 70});
    CHECK_FALSE(d.opaque);

    bytes grey = dds(1, 1, nullptr, 0x20000, 8, {0xFF, 0, 0, 0});
    grey.push_back(0x80);
    const tool::rgba_image e = decoded(grey);
    CHECK(e.kind == "DDS (8-bit luminance)");
    CHECK(at(e, 0, 0) == rgba{128, 128, 128, 255});
    bytes alpha = dds(1, 1, nullptr, 0x2, 8, {0, 0, 0, 0xFF});
    alpha.push_back(0x40);
    const tool::rgba_image f = decoded(alpha);
    CHECK(f.kind == "DDS (8-bit alpha)");
    CHECK(at(f, 0, 0) == rgba{255, 255, 255, 64});
    every_prefix_refused(argb);
}

TEST_CASE("texture decoder: BMP at 24, 8, 4 and 1 bits, bottom-up and top-down, and 32-bit bit fields") {
    // 24-bit, 3 x 2, bottom-up: rows of 9 bytes padded to 12; the first row in the file is the bottom.
    bytes b = bmp(3, 2, 24);
    finish_bmp(b, b.size());
    append(b, {1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0, 0, 0});
    const tool::rgba_image a = decoded(b);
    CHECK(a.kind == "BMP (24-bit)");
    CHECK(at(a, 0, 1) == rgba{3, 2, 1, 255});
    CHECK(at(a, 2, 1) == rgba{9, 8, 7, 255});
    CHECK(at(a, 0, 0) == rgba{13, 12, 11, 255});
    CHECK(at(a, 2, 0) == rgba{19, 18, 17, 255});
    every_prefix_refused(b);

    // 8-bit, a palette of two (blue, green, red, unused), top-down (negative height).
    bytes p8 = bmp(3, -1, 8, 0, 2);
    append(p8, {10, 20, 30, 0, 40, 50, 60, 0});
    finish_bmp(p8, p8.size());
    append(p8, {1, 0, 1, 0});
    const tool::rgba_image c = decoded(p8);
    CHECK(c.kind == "BMP (8-bit, palette)");
    CHECK(at(c, 0, 0) == rgba{60, 50, 40, 255});
    CHECK(at(c, 1, 0) == rgba{30, 20, 10, 255});
    p8.back() = 0;
    p8[p8.size() - 2] = 2; // the third pixel: colour 2 of 2
    CHECK(contains(refused(p8), "colour 2 is past its palette of 2"));

    // 4-bit (high nibble first) and 1-bit (high bit first), 10 pixels wide.
    bytes p4 = bmp(3, 1, 4, 0, 16);
    for (unsigned i = 0; i < 16; ++i) append(p4, {i, i, i, 0});
    finish_bmp(p4, p4.size());
    append(p4, {0x5A, 0xF0, 0, 0});
    const tool::rgba_image d = decoded(p4);
    CHECK(at(d, 0, 0)[0] == 5);
    CHECK(at(d, 1, 0)[0] == 10);
    CHECK(at(d, 2, 0)[0] == 15);
    bytes p1 = bmp(10, 1, 1);
    append(p1, {0, 0, 0, 0, 255, 255, 255, 0});
    finish_bmp(p1, p1.size());
    append(p1, {0xA0, 0x40, 0, 0}); // 1010 0000 0100 0000
    const tool::rgba_image e = decoded(p1);
    const unsigned expect[10] = {255, 0, 255, 0, 0, 0, 0, 0, 0, 255};
    for (unsigned x = 0; x < 10; ++x) CHECK(at(e, x, 0)[0] == expect[x]);

    // 32-bit bit fields in a V4 header (108 bytes: masks red, green, blue, alpha at 40).
    bytes v4 = bmp(1, 1, 32, 3, 0, 108);
    put32(v4, 54, 0x000000FFu);
    put32(v4, 58, 0x0000FF00u);
    put32(v4, 62, 0x00FF0000u);
    put32(v4, 66, 0xFF000000u);
    finish_bmp(v4, v4.size());
    append(v4, {1, 2, 3, 4});
    CHECK(at(decoded(v4), 0, 0) == rgba{1, 2, 3, 4});
    // JPEG inside a BMP is not decoded, said so.
    CHECK(contains(refused(bmp(1, 1, 24, 4)), "compressed as type 4 (JPEG or PNG)"));
}

TEST_CASE("texture decoder: BMP run-length data, RLE8 and RLE4: runs, literal runs, row ends and jumps") {
    // RLE8, 4 x 3, colours 0, 1, 2; rows from the bottom. Row 0: three of colour 1, one of colour 2,
    // end of row. Row 1: a literal run of 3 (2, 0, 1; padded to 4 bytes), end of row (the fourth
    // pixel never reached). Row 2: a jump 2 to the right, two of colour 0, end of image.
    bytes r8 = bmp(4, 3, 8, 1, 3);
    append(r8, {10, 20, 30, 0, 40, 50, 60, 0, 70, 80, 90, 0});
    finish_bmp(r8, r8.size());
    append(r8, {3, 1, 1, 2, 0, 0, 0, 3, 2, 0, 1, 0, 0, 0, 0, 2, 2, 0, 2, 0, 0, 1});
    const tool::rgba_image a = decoded(r8);
    CHECK(a.kind == "BMP (RLE8, palette)");
    const rgba c0{30, 20, 10, 255}, c1{60, 50, 40, 255}, c2{90, 80, 70, 255}, none{0, 0, 0, 0};
    const rgba want[3][4] = {{none, none, c0, c0}, {c2, c0, c1, none}, {c1, c1, c1, c2}}; // top row first
    for (std::uint32_t y = 0; y < 3; ++y)
        for (std::uint32_t x = 0; x < 4; ++x) CHECK_MESSAGE(at(a, x, y) == want[y][x], x, ", ", y);
    CHECK_FALSE(a.opaque);
    every_prefix_refused(r8);

    // RLE4, 6 x 2, 16 greys. Row 0: a run of 3 alternating 5 and 10, a literal run of 3 (1, 2, 3:
    // 2 bytes), end of row. Row 1: a literal run of 5 (3 bytes, padded to 4), end of image.
    bytes r4 = bmp(6, 2, 4, 2, 16);
    for (unsigned i = 0; i < 16; ++i) append(r4, {i, i, i, 0});
    finish_bmp(r4, r4.size());
    append(r4, {3, 0x5A, 0, 3, 0x12, 0x30, 0, 0, 0, 5, 0x67, 0x89, 0xA0, 0, 0, 1});
    const tool::rgba_image b = decoded(r4);
    CHECK(b.kind == "BMP (RLE4, palette)");
    const unsigned bottom[6] = {5, 10, 5, 1, 2, 3}, top[5] = {6, 7, 8, 9, 10};
    for (std::uint32_t x = 0; x < 6; ++x) CHECK(at(b, x, 1) == rgba{bottom[x], bottom[x], bottom[x], 255});
    for (std::uint32_t x = 0; x < 5; ++x) CHECK(at(b, x, 0) == rgba{top[x], top[x], top[x], 255});
    CHECK(at(b, 5, 0) == none);
    every_prefix_refused(r4);

    // Runs past a row or the image, colours past the palette, and headers RLE does not allow.
    const auto rle8 = [](std::int32_t w, std::int32_t h, std::initializer_list<unsigned> data) {
        bytes f = bmp(w, h, 8, 1, 2);
        append(f, {0, 0, 0, 0, 255, 255, 255, 0});
        finish_bmp(f, f.size());
        append(f, data);
        return f;
    };
    CHECK(contains(refused(rle8(2, 1, {3, 0, 0, 1})), "goes past the end of row 0"));
    CHECK(contains(refused(rle8(2, 1, {0, 3, 1, 1, 1, 0, 0, 1})), "goes past the end of row 0"));
    CHECK(contains(refused(rle8(1, 1, {0, 0, 1, 0, 0, 1})), "goes past its last row"));
    CHECK(contains(refused(rle8(1, 2, {0, 2, 0, 2, 1, 0, 0, 1})), "goes past its last row"));
    CHECK(contains(refused(rle8(1, 1, {1, 5, 0, 1})), "colour 5 is past its palette of 2"));
    CHECK(contains(refused(rle8(2, 1, {2, 1})), "the file ends before its run-length data's end-of-image mark"));
    CHECK(contains(refused(rle8(2, 1, {0, 2, 1})), "the file ends before its run-length data's jump"));
    CHECK(contains(refused(rle8(4, 1, {0, 3, 1, 1})), "the file ends before its run-length data's literal run"));
    CHECK(contains(refused(bmp(1, 1, 4, 1, 2)), "compressed as RLE8 at 4 bits a pixel"));
    CHECK(contains(refused(bmp(1, -1, 8, 1, 2)), "a top-down BMP compressed as RLE"));
    // The largest image in a few bytes fails before any pixel is made.
    CHECK(contains(refused(rle8(16384, 16384, {0, 1})),
                   "run-length data (2 bytes) is too short for 16384 x 16384 pixels"));
}

TEST_CASE("texture decoder: TGA raw and run-length, true colour, grey and colour-mapped, by name or footer") {
    // Type 2, 24-bit, 2 x 2, bottom-up (the descriptor's bit 5 clear).
    bytes t = tga(2, 2, 2, 24, 0);
    append(t, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    CHECK(contains(refused(t), "neither PNG, JPEG, DDS, BMP nor TGA")); // no name, no footer
    const tool::rgba_image a = decoded(t, true);
    CHECK(a.kind == "TGA (24-bit)");
    CHECK(at(a, 0, 1) == rgba{3, 2, 1, 255});
    CHECK(at(a, 1, 0) == rgba{12, 11, 10, 255});
    every_prefix_refused(t, true);
    // The TGA 2.0 footer tells it without the name.
    bytes footed = t;
    footed.resize(footed.size() + 8, 0);
    for (const char c : std::string("TRUEVISION-XFILE.")) footed.push_back(static_cast<unsigned char>(c));
    footed.push_back(0);
    CHECK(at(decoded(footed), 0, 1) == rgba{3, 2, 1, 255});

    // Type 10, 32-bit with 8 alpha bits, 3 x 2, top-down: a run of 4 across the row end, then 2 raw.
    bytes r = tga(10, 3, 2, 32, 0x28);
    append(r, {0x83, 10, 20, 30, 40, 0x01, 1, 2, 3, 4, 5, 6, 7, 8});
    const tool::rgba_image b = decoded(r, true);
    CHECK(b.kind == "TGA (RLE, 32-bit)");
    CHECK(at(b, 0, 0) == rgba{30, 20, 10, 40});
    CHECK(at(b, 0, 1) == rgba{30, 20, 10, 40});
    CHECK(at(b, 1, 1) == rgba{3, 2, 1, 4});
    CHECK(at(b, 2, 1) == rgba{7, 6, 5, 8});
    every_prefix_refused(r, true);
    // Without alpha bits in the descriptor, the fourth byte is not alpha.
    r[17] = 0x20;
    CHECK(decoded(r, true).opaque);

    // Type 3, 8-bit grey, right-to-left (bit 4).
    bytes g = tga(3, 2, 1, 8, 0x10);
    append(g, {10, 200});
    const tool::rgba_image c = decoded(g, true);
    CHECK(at(c, 0, 0) == rgba{200, 200, 200, 255});
    CHECK(at(c, 1, 0) == rgba{10, 10, 10, 255});

    // Type 1, a map of two 24-bit entries starting at index 5.
    bytes m = tga(1, 2, 1, 8, 0, 5, 2, 24);
    append(m, {1, 2, 3, 4, 5, 6, 6, 5});
    const tool::rgba_image d = decoded(m, true);
    CHECK(d.kind == "TGA (8-bit, colour-mapped)");
    CHECK(at(d, 0, 0) == rgba{6, 5, 4, 255});
    CHECK(at(d, 1, 0) == rgba{3, 2, 1, 255});
    m.back() = 7;
    CHECK(contains(refused(m, true), "colour 7 is outside its colour map (5 to 7)"));
}

TEST_CASE("texture decoder: sides past the limit, empty images, overstated sizes and types not decoded") {
    bytes wide = dds(tool::max_image_side + 1, 1, "DXT1");
    wide.resize(wide.size() + 8 * (tool::max_image_side / 4 + 1), 0);
    CHECK(contains(refused(wide), "16385 x 1, larger than 16384 on a side"));
    CHECK(contains(refused(dds(0, 4, "DXT1")), "no pixels (0 x 4)"));
    // A run-length TGA claiming the largest image in a few bytes fails before any pixel is made.
    bytes huge = tga(10, 16384, 16384, 32, 0x28);
    append(huge, {0xFF, 1, 2, 3, 4});
    CHECK(contains(refused(huge, true), "the file ends before its pixels"));
    bytes big_bmp = bmp(16384, -16384, 32);
    finish_bmp(big_bmp, big_bmp.size());
    CHECK(contains(refused(big_bmp), "the file ends before its pixels (1073741878 bytes; 54 there)"));
    CHECK(contains(refused(dds(4, 4, "UYVY")), "compressed as 'UYVY', which convert does not decode"));
    bytes dx10 = dds(4, 4, "DX10");
    dx10.resize(148, 0);
    put32(dx10, 128, 98); // BC7
    put32(dx10, 132, 3);
    CHECK(contains(refused(dx10), "DXGI format 98"));
    bytes bad_header = bmp(1, 1, 24);
    put32(bad_header, 14, 20);
    CHECK(contains(refused(bad_header), "a BMP header of 20 bytes"));
    CHECK(contains(refused(tga(4, 1, 1, 8, 0), true), "image type 4"));
    // A TGA whose image ID runs past the file's end.
    bytes id = tga(3, 1, 1, 8, 0);
    id[0] = 91;
    id.push_back(200);
    CHECK(contains(refused(id, true), "the file ends before its pixels (110 bytes; 19 there)"));
    CHECK(contains(refused(bytes{'G', 'I', 'F', '8'}), "neither PNG, JPEG, DDS, BMP nor TGA"));
}
