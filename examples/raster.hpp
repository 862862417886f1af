// A small software rasterizer for keyblend's examples and the `keyblend render` tool: enough to look
// at a skinned mesh or a skeleton without a GPU (depth-buffered, Lambert-shaded triangles, lines
// and dots, text labels through stb_easy_font), written as an 8-bit RGB PNG through libpng. Copy
// it along with an example; it is not part of the library. Needs libpng (Debian: libpng-dev) and,
// for labels, stb_easy_font.h (Debian: libstb-dev).
//
// SPDX-License-Identifier: MIT
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>
#include <png.h>
#include <stb/stb_easy_font.h>

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
        : width_(width), height_(height), rgb_(std::size_t(width) * std::size_t(height) * 3),
          depth_(std::size_t(width) * std::size_t(height), std::numeric_limits<float>::infinity()) {
        for (std::size_t i = 0; i < depth_.size(); ++i) put(i, background);
    }

    int width() const { return width_; }
    int height() const { return height_; }
    /// Row-major RGB bytes, top row first.
    const std::vector<std::uint8_t>& rgb() const { return rgb_; }

    /// Where a point in normalised device coordinates (x, y in [-1, 1], y up) lands, in pixels.
    glm::vec2 to_pixels(const glm::vec3& ndc) const {
        return glm::vec2((ndc.x * 0.5f + 0.5f) * float(width_), (0.5f - ndc.y * 0.5f) * float(height_));
    }

    /// Draws a triangle whose corners are in normalised device coordinates (z smaller is nearer),
    /// each corner with a colour; colours are interpolated, depth tested.
    void triangle(const glm::vec3 ndc[3], const glm::vec3 color[3]) {
        glm::vec2 p[3];
        for (int i = 0; i < 3; ++i) p[i] = to_pixels(ndc[i]);
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
                const std::size_t i = index(x, y);
                if (!(z < depth_[i])) continue;
                depth_[i] = z;
                put(i, w0 * color[0] + w1 * color[1] + w2 * color[2]);
            }
    }

    /// A disc of `radius` pixels around an NDC point. With `depth_test`, pixels behind what is
    /// drawn stay (and the disc writes its depth); without, it is drawn over everything.
    void disc(const glm::vec3& ndc, float radius, glm::vec3 color, bool depth_test) {
        const glm::vec2 c = to_pixels(ndc);
        const int x0 = std::max(0, int(std::floor(c.x - radius))), x1 = std::min(width_ - 1, int(std::ceil(c.x + radius)));
        const int y0 = std::max(0, int(std::floor(c.y - radius))), y1 = std::min(height_ - 1, int(std::ceil(c.y + radius)));
        for (int y = y0; y <= y1; ++y)
            for (int x = x0; x <= x1; ++x) {
                const glm::vec2 d = glm::vec2(float(x) + 0.5f, float(y) + 0.5f) - c;
                if (glm::dot(d, d) > radius * radius) continue;
                const std::size_t i = index(x, y);
                if (depth_test) {
                    if (!(ndc.z < depth_[i])) continue;
                    depth_[i] = ndc.z;
                }
                put(i, color);
            }
    }

    /// A line `width` pixels wide between two NDC points (round ends), depth interpolated.
    void line(const glm::vec3& a, const glm::vec3& b, float width, glm::vec3 color, bool depth_test) {
        const float length = glm::length(to_pixels(b) - to_pixels(a));
        const int steps = std::max(1, std::min(100000, int(std::ceil(length / std::max(0.5f, width * 0.35f)))));
        for (int s = 0; s <= steps; ++s) disc(glm::mix(a, b, float(s) / float(steps)), width * 0.5f, color, depth_test);
    }

    /// ASCII text with its top-left corner at pixel (x, y), each font pixel `scale` pixels wide,
    /// on a translucent dark box so it reads on any background.
    void text(int x, int y, const std::string& s, glm::vec3 color, int scale = 1) {
        std::vector<char> chars(s.begin(), s.end());
        chars.push_back('\0');
        std::vector<float> quads(chars.size() * 300); // stb_easy_font: ~270 bytes a character
        const int count = stb_easy_font_print(0.0f, 0.0f, chars.data(), nullptr, quads.data(),
                                              int(quads.size() * sizeof(float)));
        const int w = stb_easy_font_width(chars.data()) * scale, h = stb_easy_font_height(chars.data()) * scale;
        fill(x - scale, y - scale, w + 2 * scale, h + scale, glm::vec3(0.0f), 0.55f);
        for (int q = 0; q < count; ++q) { // 4 vertices of x, y, z, colour (4 floats each)
            const float* v = quads.data() + q * 16;
            const float qx0 = std::min(v[0], v[8]), qy0 = std::min(v[1], v[9]);
            const float qx1 = std::max(v[0], v[8]), qy1 = std::max(v[1], v[9]);
            fill(x + int(qx0) * scale, y + int(qy0) * scale, int(qx1 - qx0) * scale, int(qy1 - qy0) * scale, color, 1.0f);
        }
    }

    /// Copies `src` into this image with its top-left corner at (x0, y0), clipped to this image.
    void paste(const image& src, int x0, int y0) {
        for (int y = 0; y < src.height_; ++y)
            for (int x = 0; x < src.width_; ++x) {
                const int tx = x0 + x, ty = y0 + y;
                if (tx < 0 || ty < 0 || tx >= width_ || ty >= height_) continue;
                for (std::size_t k = 0; k < 3; ++k)
                    rgb_[index(tx, ty) * 3 + k] = src.rgb_[src.index(x, y) * 3 + k];
            }
    }

    /// Writes the image as an 8-bit RGB PNG (libpng). False with `error` set when it cannot.
    bool write_png(const std::string& path, std::string& error) const {
        png_image out{};
        out.version = PNG_IMAGE_VERSION;
        out.width = png_uint_32(width_);
        out.height = png_uint_32(height_);
        out.format = PNG_FORMAT_RGB;
        if (png_image_write_to_file(&out, path.c_str(), 0, rgb_.data(), 0, nullptr)) return true;
        error = out.message;
        return false;
    }

private:
    std::size_t index(int x, int y) const { return std::size_t(y) * std::size_t(width_) + std::size_t(x); }
    static float edge(glm::vec2 a, glm::vec2 b, glm::vec2 c) {
        return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    }
    void put(std::size_t i, glm::vec3 c) {
        for (std::size_t k = 0; k < 3; ++k)
            rgb_[i * 3 + k] = std::uint8_t(std::lround(std::clamp(c[int(k)], 0.0f, 1.0f) * 255.0f));
    }
    /// Blends `color` over a rectangle with `opacity`, clipped to the image.
    void fill(int x0, int y0, int w, int h, glm::vec3 color, float opacity) {
        for (int y = std::max(0, y0); y < std::min(height_, y0 + h); ++y)
            for (int x = std::max(0, x0); x < std::min(width_, x0 + w); ++x) {
                const std::size_t i = index(x, y);
                const glm::vec3 old(rgb_[i * 3] / 255.0f, rgb_[i * 3 + 1] / 255.0f, rgb_[i * 3 + 2] / 255.0f);
                put(i, glm::mix(old, color, opacity));
            }
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
        const float half = std::max(0.55f * std::max((hi.x - lo.x) / aspect, hi.y - lo.y), 1e-6f);
        const float depth = std::max(hi.z - lo.z, 1e-6f);
        return glm::vec3((v.x - center.x) / (half * aspect), (v.y - center.y) / half, (hi.z - v.z) / depth);
    }
};

/// A fixed camera framing every point given (all frames of an animation): looking from the side,
/// with y up as in Direct3D unless the points are flat in y (then the larger of x and z is up),
/// along the thinner of the two other axes, turned by `yaw` degrees about the up axis and tilted
/// down by `pitch` degrees. Without points it frames the unit cube.
inline camera frame_points(const std::vector<glm::vec3>& points, float yaw = 0.0f, float pitch = 0.0f) {
    glm::vec3 lo(std::numeric_limits<float>::infinity()), hi(-std::numeric_limits<float>::infinity());
    for (const glm::vec3& p : points) {
        lo = glm::min(lo, p);
        hi = glm::max(hi, p);
    }
    if (!(lo.x <= hi.x)) lo = hi = glm::vec3(0.0f);
    const glm::vec3 extent = hi - lo;
    int up = 1;
    if (extent.y < 0.3f * std::max(extent.x, extent.z)) up = extent.x > extent.z ? 0 : 2;
    const int a = (up + 1) % 3, b = (up + 2) % 3;
    const int depth = extent[a] < extent[b] ? a : b;
    glm::vec3 forward(0.0f), upward(0.0f);
    forward[depth] = 1.0f;
    upward[up] = 1.0f;
    forward = glm::vec3(glm::rotate(glm::mat4(1.0f), glm::radians(yaw), upward) * glm::vec4(forward, 0.0f));
    const glm::vec3 side = glm::normalize(glm::cross(upward, forward));
    forward = glm::vec3(glm::rotate(glm::mat4(1.0f), glm::radians(pitch), side) * glm::vec4(forward, 0.0f));
    camera cam;
    const glm::vec3 center = 0.5f * (lo + hi);
    cam.view = glm::lookAt(center + forward, center, upward);
    cam.lo = glm::vec3(std::numeric_limits<float>::infinity());
    cam.hi = glm::vec3(-std::numeric_limits<float>::infinity());
    for (const glm::vec3& p : points) {
        const glm::vec3 v(cam.view * glm::vec4(p, 1.0f));
        cam.lo = glm::min(cam.lo, v);
        cam.hi = glm::max(cam.hi, v);
    }
    if (points.empty()) {
        cam.lo = glm::vec3(-1.0f);
        cam.hi = glm::vec3(1.0f);
    }
    return cam;
}

/// Draws an indexed triangle mesh with per-vertex normals (world space), Lambert-lit from the
/// camera's upper left, in `base` colour. Triangles are drawn from both sides; a vertex without a
/// normal is lit at half strength.
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
