// keyblend — definitions for compress.hpp: compressed_clip, the timeline of samples, the error
// metric. Included at the bottom of compress.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "compress_validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace keyblend {
namespace impl {

struct compressed_access {
    static result<compressed_clip> make(const unsigned char* p, std::size_t n, bool copy_bytes) {
        compressed_clip out;
        if (copy_bytes && p != nullptr) {
            out.owned_.resize((n + 15) / 16);
            if (n) std::memcpy(out.owned_.data(), p, n);
            p = reinterpret_cast<const unsigned char*>(out.owned_.data());
        }
        if (!copy_bytes && p != nullptr && reinterpret_cast<std::uintptr_t>(p) % 4 != 0)
            return make_error(errc::invalid_argument, "compressed clip: the bytes are not 4-byte aligned");
        result<cc::clip_layout> l = cc::validate_blob(p, n);
        if (!l) return l.error();
        out.layout_ = *l;
        out.data_ = p;
        out.size_ = n;
        return out;
    }
    /// A view of bytes validate_blob accepted before (a package's clips, checked when the package
    /// was opened): the header read and the layout derived, nothing checked again.
    static compressed_clip view_validated(const unsigned char* p, std::size_t n) {
        compressed_clip out;
        std::memcpy(&out.layout_.h, p, sizeof out.layout_.h);
        cc::derive_layout(out.layout_);
        out.data_ = p;
        out.size_ = n;
        return out;
    }
    static const cc::clip_layout& layout(const compressed_clip& c) { return c.layout_; }
};

/// A fingerprint of everything about a skeleton that a compressed clip depends on: joint count,
/// parents, names, bind-pose matrices (bit for bit) and morph weights. A clip compressed for one
/// skeleton samples only with a skeleton of the same fingerprint.
inline std::uint32_t skeleton_fingerprint(const skeleton& s) {
    cc::hasher f;
    f.value(static_cast<std::uint64_t>(s.size()));
    for (std::size_t j = 0; j < s.size(); ++j) {
        f.value(static_cast<std::int32_t>(s.parent(j)));
        f.value(static_cast<std::uint64_t>(s.name(j).size()));
        f.bytes(s.name(j).data(), s.name(j).size());
        const glm::mat4& m = s.bind_local()[j];
        for (int col = 0; col < 4; ++col) {
            const float v[4] = {m[col].x, m[col].y, m[col].z, m[col].w};
            f.bytes(v, sizeof v);
        }
        f.value(static_cast<std::uint64_t>(s.morph_weight_count(j)));
    }
    for (float w : s.bind_morph_weights()) f.value(w);
    return f.h;
}

namespace cc {

/// Where a time falls among the samples: the two samples around it (equal at an end, at a single
/// sample, or at exactly the last sample of the clip) and the fraction of the way from the first
/// to the second. The one definition the sampler and the compressor use.
struct sample_position {
    std::uint32_t g0 = 0, g1 = 0;
    float alpha = 0.0f;
};

/// `span_at(i)` gives span record i of `count` (>= 1), contiguous as validate_blob requires.
template <class SpanAt>
inline sample_position locate_sample(const SpanAt& span_at, std::uint32_t count, float t) {
    span_record r = span_at(0u);
    if (is_nan(t) || !(t > r.start)) return {r.first, r.first, 0.0f};
    if (count > 1) {
        // The last span whose start is <= t.
        std::uint32_t lo = 0, hi = count;
        while (hi - lo > 1) {
            const std::uint32_t mid = lo + (hi - lo) / 2;
            if (span_at(mid).start <= t) lo = mid;
            else hi = mid;
        }
        if (lo != 0) r = span_at(lo);
    }
    if (r.count == 1) return {r.first, r.first, 0.0f};
    const float dt = (r.end - r.start) / static_cast<float>(r.count - 1);
    const float u = (t - r.start) / dt;
    const float last = static_cast<float>(r.count - 1);
    if (!(u < last)) return {r.first + r.count - 1, r.first + r.count - 1, 0.0f};
    const float k = std::floor(u);
    std::uint32_t ki = k > 0.0f ? static_cast<std::uint32_t>(k) : 0u;
    if (ki > r.count - 2) ki = r.count - 2;
    const float alpha = std::min(std::max(u - static_cast<float>(ki), 0.0f), 1.0f);
    return {r.first + ki, r.first + ki + 1, alpha};
}

/// A rotation from its three kept components (in component order, skipping `drop`): the dropped
/// one is sqrt(1 - the others' squares); where rounding puts the kept ones outside the unit
/// sphere they are scaled back onto it and the dropped one is 0. The scalar reference of the
/// sampler's reconstruction.
inline glm::quat rebuild_rotation(float a, float b, float c, unsigned drop) {
    const float s2 = a * a + b * b + c * c;
    if (s2 > 1.0f) {
        const float inv = 1.0f / std::sqrt(s2);
        a *= inv;
        b *= inv;
        c *= inv;
    }
    const float d = complete_quaternion(a, b, c);
    float q[4];
    const float kept[3] = {a, b, c};
    for (unsigned k = 0, i = 0; i < 4; ++i) q[i] = i == drop ? d : kept[k++];
    return make_quat(q[3], q[0], q[1], q[2]);
}

inline float component(const glm::quat& q, unsigned i) { return i == 0 ? q.x : i == 1 ? q.y : i == 2 ? q.z : q.w; }
inline float component(const glm::vec3& v, unsigned i) { return i == 0 ? v.x : i == 1 ? v.y : v.z; }

} // namespace cc

/// Model matrices from local transforms, one joint after the other (parents first), in the
/// scalar arithmetic the compressor measures with.
struct model_builder {
    static glm::mat4 local_matrix(const transform& t, const transform* base) {
        if (!base) return to_matrix(t);
        transform x;
        x.translation = base->translation + t.translation;
        x.rotation = base->rotation * t.rotation;
        x.scale = base->scale * t.scale;
        return to_matrix(x);
    }
};

/// Builds a plain clip's extras from a compressed clip's (compressed_clip::extras).
struct extras_builder {
    clip& c;
    template <class Value>
    static void fill(track<Value, float>& t, const cc::extras_track& e, unsigned dims) {
        using cc::read;
        t = track<Value, float>(static_cast<interpolation>(e.mode));
        const auto value = [&](const unsigned char* base, std::uint32_t k) {
            float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (unsigned d = 0; d < dims; ++d) v[d] = read<float>(base + 4ull * (std::uint64_t(k) * dims + d));
            if constexpr (std::is_same_v<Value, float>) return v[0];
            else if constexpr (std::is_same_v<Value, glm::vec3>) return glm::vec3(v[0], v[1], v[2]);
            else return make_quat(v[3], v[0], v[1], v[2]);
        };
        t.reserve(e.count);
        for (std::uint32_t k = 0; k < e.count; ++k) {
            const float time = read<float>(e.times + 4ull * k);
            if (e.in_tangents) t.push_back(time, value(e.in_tangents, k), value(e.values, k), value(e.out_tangents, k));
            else t.push_back(time, value(e.values, k));
        }
    }
    bool user_channel(bool scalar, std::string_view name, const cc::extras_track& t) {
        if (scalar) {
            c.float_channels.push_back({std::string(name), {}});
            fill(c.float_channels.back().keys, t, 1);
        } else {
            c.vector_channels.push_back({std::string(name), {}});
            fill(c.vector_channels.back().keys, t, 3);
        }
        return true;
    }
    bool event(float time, std::string_view name) {
        c.events.push_back({time, std::string(name)});
        return true;
    }
    bool motion(unsigned k, const cc::extras_track& t) {
        if (k == 0) fill(c.motion.translation, t, 3);
        else fill(c.motion.rotation, t, 4);
        return true;
    }
};

} // namespace impl

inline compressed_clip& compressed_clip::operator=(const compressed_clip& other) {
    if (this == &other) return *this;
    layout_ = other.layout_;
    size_ = other.size_;
    if (other.owns_bytes()) {
        owned_ = other.owned_;
        data_ = reinterpret_cast<const unsigned char*>(owned_.data());
    } else {
        owned_.clear();
        data_ = other.data_;
    }
    return *this;
}

inline compressed_clip& compressed_clip::operator=(compressed_clip&& other) noexcept {
    if (this == &other) return *this;
    layout_ = other.layout_;
    size_ = other.size_;
    const bool owning = other.owns_bytes();
    owned_ = std::move(other.owned_);
    data_ = owning ? reinterpret_cast<const unsigned char*>(owned_.data()) : other.data_;
    other.owned_.clear();
    other.data_ = nullptr;
    other.size_ = 0;
    other.layout_ = {};
    return *this;
}

inline result<compressed_clip> compressed_clip::view(const void* data, std::size_t size) {
    return impl::compressed_access::make(static_cast<const unsigned char*>(data), size, false);
}

inline result<compressed_clip> compressed_clip::copy(const void* data, std::size_t size) {
    return impl::compressed_access::make(static_cast<const unsigned char*>(data), size, true);
}

inline std::string_view compressed_clip::name() const {
    if (!data_) return {};
    return std::string_view(reinterpret_cast<const char*>(data_ + layout_.h.off_name), layout_.h.name_size);
}

inline bool compressed_clip::animates(std::size_t joint) const {
    if (!data_ || joint >= layout_.h.joint_count) return false;
    return (impl::cc::joint_kinds(layout_, data_, joint) & 0x3fu) != 0;
}

inline compressed_stats compressed_clip::stats() const {
    compressed_stats s;
    const impl::cc::clip_header& h = layout_.h;
    s.precision = h.precision;
    s.shell_distance = h.shell;
    s.weight_precision = h.weight_precision;
    s.max_error = h.max_error;
    s.max_error_joint = h.max_error_joint == 0xffffffffu ? error::no_index : h.max_error_joint;
    s.max_error_time = h.max_error_time;
    s.max_weight_error = h.max_weight_error;
    s.bound_met = (h.flags & impl::cc::flag_bound_met) != 0;
    s.source_key_bytes = h.source_key_bytes;
    s.samples = h.sample_count;
    s.segments = h.segment_count;
    return s;
}

inline clip compressed_clip::extras() const {
    clip out;
    if (!data_) return out;
    out.name = std::string(name());
    out.duration = duration();
    out.ticks_per_second = ticks_per_second();
    out.ticks_per_second_is_default = ticks_per_second_is_default();
    out.wrap = wrap();
    impl::extras_builder b{out};
    impl::cc::walk_extras(data_ + layout_.h.off_extras, layout_.h.extras_size, b);
    return out;
}

inline float clip_time(const compressed_clip& c, double ticks) {
    return static_cast<float>(wrap_time(ticks, static_cast<double>(c.duration()), c.wrap()));
}

inline double virtual_vertex_error(const glm::mat4* a, const glm::mat4* b, std::size_t count, float shell,
                                   std::size_t* joint, span<const float> joint_shell) {
    double worst = 0.0;
    for (std::size_t j = 0; j < count; ++j) {
        const double d = static_cast<double>(j < joint_shell.size() && joint_shell[j] > 0.0f ? joint_shell[j] : shell);
        const glm::dvec3 dt = glm::dvec3(a[j][3]) - glm::dvec3(b[j][3]);
        for (int k = 0; k < 3; ++k) {
            const double len = glm::length(dt + d * (glm::dvec3(a[j][k]) - glm::dvec3(b[j][k])));
            if (len > worst) {
                worst = len;
                if (joint) *joint = j;
            }
        }
    }
    return worst;
}

} // namespace keyblend
