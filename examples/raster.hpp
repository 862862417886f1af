// A small software rasterizer and PNG writer for keyblend's examples: enough to look at a skinned
// mesh without a GPU (depth-buffered, Lambert-shaded triangles, written as an 8-bit RGB PNG through
// zlib). Copy it along with an example; it is not part of the library.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <glm/glm.hpp>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace raster {

/// An RGB image with a depth buffer.
class image {
public:
    image(int width, int height, glm::vec3 background = glm::vec3(0.12f, 0.13f, 0.16f))
        : width_(width), height_(height), rgb_(std::size_t(width) * height * 3),
          depth_(std::size_t(width) * height, std::numeric_limits<float>::infinity()) {
        for (std::size_t i = 0; i < depth_.size(); ++i) put(i, background);
    }

    int width() const { return width_; }
    int height() const { return height_; }
    const std::vector<std::uint8_t>& rgb() const { return rgb_; }

    /// Draws a triangle whose corners are in normalised device coordinates (x, y in [-1, 1], y up;
    /// z smaller is nearer), each corner with a colour; colours are interpolated, depth tested.
    void triangle(const glm::vec3 ndc[3], const glm::vec3 color[3]) {
        glm::vec2 p[3];
        for (int i = 0; i < 3; ++i)
            p[i] = glm::vec2((ndc[i].x * 0.5f + 0.5f) * float(width_), (0.5f - ndc[i].y * 0.5f) * float(height_));
        const float area = edge(p[0], p[1], p[2]);
        if (!(std::fabs(area) > 1e-12f)) return;
        const int x0 = std::max(0, int(std::floor(std::min({p[0].x, p[1].x, p[2].x}))));
        const int x1 = std::min(width_ - 1, int(std::ceil(std::max({p[0].x, p[1].x, p[2].x}))));
        const int y0 = std::max(0, int(std::floor(std::min({p[0].y, p[1].y, p[2].y}))));
        const int y1 = std::min(height_ - 1, int(std::ceil(std::max({p[0].y, p[1].y, p[2].y}))));
        for (int y = y0; y <= y1; ++y)
            for (int x = x0; x <= x1; ++x) {
                const glm::vec2 c(float(x) + 0.5f, float(y) + 0.5f);
                const float w0 = edge(p[1], p[2], c) / area, w1 = edge(p[2], p[0], c) / area;
                const float w2 = 1.0f - w0 - w1;
                if (w0 < 0.0f || w1 < 0.0f || w2 < 0.0f) continue;
                const float z = w0 * ndc[0].z + w1 * ndc[1].z + w2 * ndc[2].z;
                const std::size_t i = std::size_t(y) * width_ + x;
                if (!(z < depth_[i])) continue;
                depth_[i] = z;
                put(i, w0 * color[0] + w1 * color[1] + w2 * color[2]);
            }
    }

    /// Copies `src` into this image with its top-left corner at (x0, y0), clipped to this image.
    void paste(const image& src, int x0, int y0) {
        for (int y = 0; y < src.height_; ++y)
            for (int x = 0; x < src.width_; ++x) {
                const int tx = x0 + x, ty = y0 + y;
                if (tx < 0 || ty < 0 || tx >= width_ || ty >= height_) continue;
                for (int k = 0; k < 3; ++k)
                    rgb_[(std::size_t(ty) * width_ + tx) * 3 + k] = src.rgb_[(std::size_t(y) * src.width_ + x) * 3 + k];
            }
    }

    /// Writes the image as a PNG (8-bit RGB, one zlib stream). False on an I/O or zlib error.
    bool write_png(const std::string& path) const {
        std::vector<std::uint8_t> raw;
        raw.reserve(rgb_.size() + std::size_t(height_));
        for (int y = 0; y < height_; ++y) {
            raw.push_back(0); // filter: none
            raw.insert(raw.end(), rgb_.begin() + std::ptrdiff_t(y) * width_ * 3,
                       rgb_.begin() + std::ptrdiff_t(y + 1) * width_ * 3);
        }
        uLongf packed_size = compressBound(uLong(raw.size()));
        std::vector<std::uint8_t> packed(packed_size);
        if (compress2(packed.data(), &packed_size, raw.data(), uLong(raw.size()), 6) != Z_OK) return false;
        packed.resize(packed_size);
        std::FILE* f = std::fopen(path.c_str(), "wb");
        if (!f) return false;
        static const std::uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
        bool ok = std::fwrite(signature, 1, 8, f) == 8;
        std::uint8_t header[13];
        be32(header, std::uint32_t(width_));
        be32(header + 4, std::uint32_t(height_));
        header[8] = 8;  // bits per channel
        header[9] = 2;  // RGB
        header[10] = 0; // deflate
        header[11] = 0; // adaptive filtering
        header[12] = 0; // no interlace
        ok = ok && chunk(f, "IHDR", header, 13) && chunk(f, "IDAT", packed.data(), packed.size()) &&
             chunk(f, "IEND", nullptr, 0);
        return std::fclose(f) == 0 && ok;
    }

private:
    static float edge(glm::vec2 a, glm::vec2 b, glm::vec2 c) {
        return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    }
    void put(std::size_t i, glm::vec3 c) {
        for (int k = 0; k < 3; ++k)
            rgb_[i * 3 + k] = std::uint8_t(std::lround(std::clamp(c[k], 0.0f, 1.0f) * 255.0f));
    }
    static void be32(std::uint8_t* p, std::uint32_t v) {
        p[0] = std::uint8_t(v >> 24);
        p[1] = std::uint8_t(v >> 16);
        p[2] = std::uint8_t(v >> 8);
        p[3] = std::uint8_t(v);
    }
    static bool chunk(std::FILE* f, const char* type, const std::uint8_t* data, std::size_t size) {
        std::uint8_t head[8];
        be32(head, std::uint32_t(size));
        for (int i = 0; i < 4; ++i) head[4 + i] = std::uint8_t(type[i]);
        uLong crc = crc32(0L, head + 4, 4);
        if (size) crc = crc32(crc, data, uInt(size));
        std::uint8_t tail[4];
        be32(tail, std::uint32_t(crc));
        return std::fwrite(head, 1, 8, f) == 8 && (size == 0 || std::fwrite(data, 1, size, f) == size) &&
               std::fwrite(tail, 1, 4, f) == 4;
    }

    int width_, height_;
    std::vector<std::uint8_t> rgb_;
    std::vector<float> depth_;
};

/// A camera looking at a box: orthographic along -z of `view`, framing `lo`..`hi` (in view space)
/// with a margin.
struct camera {
    glm::mat4 view{1.0f};
    glm::vec3 lo{-1.0f}, hi{1.0f};

    glm::vec3 to_ndc(const glm::vec3& world, float aspect) const {
        const glm::vec3 v = glm::vec3(view * glm::vec4(world, 1.0f));
        const glm::vec3 center = 0.5f * (lo + hi);
        const float half = 0.55f * std::max((hi.x - lo.x) / aspect, hi.y - lo.y);
        const float depth = std::max(hi.z - lo.z, 1e-6f);
        return glm::vec3((v.x - center.x) / (half * aspect), (v.y - center.y) / half, (hi.z - v.z) / depth);
    }
};

/// Draws an indexed triangle mesh with per-vertex normals (world space), Lambert-lit from the
/// camera's upper left, in `base` colour. Triangles are drawn from both sides.
inline void draw_mesh(image& img, const camera& cam, const std::vector<glm::vec3>& positions,
                      const std::vector<glm::vec3>& normals, const std::vector<std::uint32_t>& indices,
                      glm::vec3 base) {
    const float aspect = float(img.width()) / float(img.height());
    const glm::vec3 light = glm::normalize(glm::vec3(glm::inverse(cam.view) * glm::vec4(-0.4f, 0.6f, 0.7f, 0.0f)));
    for (std::size_t t = 0; t + 2 < indices.size(); t += 3) {
        glm::vec3 ndc[3], color[3];
        bool inside = true;
        for (int k = 0; k < 3; ++k) {
            const std::uint32_t v = indices[t + std::size_t(k)];
            if (v >= positions.size()) {
                inside = false;
                break;
            }
            ndc[k] = cam.to_ndc(positions[v], aspect);
            const glm::vec3 n = v < normals.size() ? normals[v] : glm::vec3(0.0f);
            const float len = glm::length(n);
            const float lambert = len > 0.0f ? std::fabs(glm::dot(n / len, light)) : 0.5f;
            color[k] = base * (0.25f + 0.75f * lambert);
        }
        if (inside) img.triangle(ndc, color);
    }
}

} // namespace raster
