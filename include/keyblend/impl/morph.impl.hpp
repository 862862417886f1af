// keyblend — definitions for morph.hpp. Included at the bottom of morph.hpp; do not include
// directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "simd/isa.hpp"

#include <string>

namespace keyblend {
namespace impl {
namespace morph {

/// The attributes a job morphs: its input, output and each target's stream, and how many floats
/// an input element has (3, or 4 for tangents).
struct attribute {
    const char* name;
    const char* in_name;  // "in_" + name
    const char* out_name; // "out_" + name
    strided_span<const float> in;
    strided_span<float> out;
    strided_span<const float> morph_target_streams::*member;
    std::size_t components;
};

inline std::size_t attributes_of(const morph_job& j, attribute (&out)[3]) {
    std::size_t n = 0;
    out[n++] = {"positions", "in_positions", "out_positions", j.in_positions, j.out_positions,
                &morph_target_streams::positions, 3};
    if (!j.in_normals.empty() || !j.out_normals.empty())
        out[n++] = {"normals", "in_normals", "out_normals", j.in_normals, j.out_normals, &morph_target_streams::normals, 3};
    if (!j.in_tangents.empty() || !j.out_tangents.empty())
        out[n++] = {"tangents", "in_tangents", "out_tangents", j.in_tangents, j.out_tangents,
                    &morph_target_streams::tangents, 4};
    return n;
}

inline std::string target_stream_name(std::size_t t, const char* attribute_name) {
    return "targets[" + std::to_string(t) + "]." + attribute_name;
}

/// The O(targets) checks of run(): required streams, sizes, layouts, aliasing, the range.
inline status check(const morph_job& j, std::size_t& begin, std::size_t& end) {
    using skin::check_span;
    using skin::info;
    using skin::overlaps;
    using skin::same_stream;
    using skin::span_info;
    if (j.in_positions.empty() || j.out_positions.empty())
        return make_error(errc::invalid_argument, "morph_job: in_positions and out_positions are required");
    if (j.in_normals.empty() != j.out_normals.empty())
        return make_error(errc::invalid_argument, "morph_job: in_normals and out_normals go together");
    if (j.in_tangents.empty() != j.out_tangents.empty())
        return make_error(errc::invalid_argument, "morph_job: in_tangents and out_tangents go together");
    if (j.weights.size() != j.targets.size())
        return make_error(errc::size_mismatch, "morph_job: " + std::to_string(j.weights.size()) + " weights for " +
                                                   std::to_string(j.targets.size()) + " targets");
    if ((j.targets.size() && !j.targets.data()) || (j.weights.size() && !j.weights.data()))
        return make_error(errc::invalid_argument, "morph_job: targets or weights: null data");
    const std::size_t n = j.in_positions.size;
    attribute a[3];
    const std::size_t count = attributes_of(j, a);
    for (std::size_t i = 0; i < count; ++i) {
        const span_info in = info(a[i].in_name, a[i].in, a[i].components);
        const span_info out = info(a[i].out_name, a[i].out, a[i].components);
        if (status s = check_span(in, n, sizeof(float)); !s) return s;
        if (status s = check_span(out, n, sizeof(float)); !s) return s;
        for (std::size_t t = 0; t < j.targets.size(); ++t) {
            const strided_span<const float>& d = j.targets[t].*(a[i].member);
            if (d.empty()) continue;
            // (The target's name is only spelled out for the message: run() allocates nothing.)
            if (!check_span(info("", d, 3), n, sizeof(float))) {
                const std::string name = target_stream_name(t, a[i].name);
                return check_span(info(name.c_str(), d, 3), n, sizeof(float));
            }
        }
    }
    // Aliasing: each output against every other stream (its own input may be the very same).
    for (std::size_t i = 0; i < count; ++i) {
        const span_info out = info(a[i].name, a[i].out, a[i].components);
        for (std::size_t k = 0; k < count; ++k) {
            const span_info in = info(a[k].name, a[k].in, a[k].components);
            if (k == i && same_stream(out, in)) continue;
            if (overlaps(out, in))
                return make_error(errc::invalid_argument, std::string("morph_job: out_") + a[i].name + " overlaps in_" +
                                                              a[k].name +
                                                              (k == i ? " without being the same stream (morphing in "
                                                                        "place needs the same data and strides)"
                                                                      : ""));
            if (k != i && overlaps(out, info(a[k].name, a[k].out, a[k].components)))
                return make_error(errc::invalid_argument,
                                  std::string("morph_job: out_") + a[i].name + " overlaps out_" + a[k].name);
        }
        for (std::size_t t = 0; t < j.targets.size(); ++t)
            for (std::size_t k = 0; k < 3; ++k) {
                strided_span<const float> morph_target_streams::*members[3] = {
                    &morph_target_streams::positions, &morph_target_streams::normals, &morph_target_streams::tangents};
                if (overlaps(out, info("", j.targets[t].*members[k], 3)))
                    return make_error(errc::invalid_argument, std::string("morph_job: out_") + a[i].name +
                                                                  " overlaps a stream of targets[" + std::to_string(t) + "]",
                                      t);
            }
        span_info w;
        w.data = reinterpret_cast<std::uintptr_t>(j.weights.data());
        w.size = j.weights.size();
        w.stride = w.element = sizeof(float);
        w.given = !j.weights.empty();
        span_info tg;
        tg.data = reinterpret_cast<std::uintptr_t>(j.targets.data());
        tg.size = j.targets.size();
        tg.stride = tg.element = sizeof(morph_target_streams);
        tg.given = !j.targets.empty();
        if (overlaps(out, w) || overlaps(out, tg))
            return make_error(errc::invalid_argument,
                              std::string("morph_job: out_") + a[i].name + " overlaps the weights or the targets");
    }
    begin = j.range.begin;
    end = j.range.end == vertex_range::all ? n : j.range.end;
    if (begin > end || end > n)
        return make_error(errc::invalid_argument, "morph_job: range [" + std::to_string(begin) + ", " +
                                                      std::to_string(end) + ") is not within the " +
                                                      std::to_string(n) + " vertices");
    return {};
}

} // namespace morph
} // namespace impl

inline status morph_job::validate() const {
    std::size_t begin = 0, end = 0;
    if (status s = impl::morph::check(*this, begin, end); !s) return s;
    for (std::size_t t = 0; t < weights.size(); ++t)
        if (!is_finite(weights[t]))
            return impl::make_error(errc::non_finite, "morph_job: weights[" + std::to_string(t) + "] is " +
                                                          impl::float_to_string(weights[t]),
                                    t);
    impl::morph::attribute a[3];
    const std::size_t count = impl::morph::attributes_of(*this, a);
    for (std::size_t i = 0; i < count; ++i)
        for (std::size_t t = 0; t < targets.size(); ++t) {
            const strided_span<const float>& d = targets[t].*(a[i].member);
            if (d.empty() || weights[t] == 0.0f) continue; // (not read)
            for (std::size_t v = begin; v < end; ++v)
                for (std::size_t c = 0; c < 3; ++c)
                    if (!is_finite(d(v, c)))
                        return impl::make_error(errc::non_finite,
                                                "morph_job: " + impl::morph::target_stream_name(t, a[i].name) +
                                                    " of vertex " + std::to_string(v) + " is not finite",
                                                v);
        }
    return {};
}

} // namespace keyblend

#if KEYBLEND_KERNELS_HERE
#include "morph_kernels.hpp"
#endif
#if !defined(KEYBLEND_KERNELS_LIBRARY)
inline keyblend::status keyblend::morph_job::run() const { return impl::run_job(*this); }
#endif
