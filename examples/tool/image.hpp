// keyblend convert's texture decoder: DDS, BMP and TGA files, the textures of .X-era models, which
// glTF's core cannot hold, decoded to 8-bit RGBA so that convert can embed them as PNG. Bad input
// of any kind is an error with its reason, never a crash; memory is bounded by the file's size.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tool {

/// The widest and tallest image decoded (Direct3D 11's largest texture).
constexpr std::uint32_t max_image_side = 16384;

/// An image decoded to 8-bit RGBA, rows top to bottom.
struct rgba_image {
    std::uint32_t width = 0, height = 0;
    /// width * height * 4 bytes: red, green, blue, alpha.
    std::vector<unsigned char> pixels;
    /// What was decoded, for messages: "DDS (DXT1)", "BMP (8-bit, palette)", "TGA (RLE, 32-bit)".
    std::string kind;
    /// Every alpha is 255.
    bool opaque = true;
};

/// Decodes a DDS (DXT1, DXT3, DXT5, BC4 and BC5 unsigned and signed, and uncompressed 8 to 32-bit RGB(A) and luminance; the top
/// mip level of the first surface, as the legacy headers and the DX10 one give them), a BMP
/// (1, 4, 8-bit palette, RLE8 and RLE4 included; 16, 24, 32-bit, bit fields included) or, when
/// `maybe_tga` (TGA files have no signature: the caller says so by the name), a TGA
/// (colour-mapped, true colour and grey, raw or RLE). False with `why` set for anything else: another type, one of
/// these it does not decode, a header that does not fit the file, or a side past max_image_side.
bool decode_image(const unsigned char* bytes, std::size_t size, bool maybe_tga, rgba_image& out, std::string& why);

} // namespace tool
