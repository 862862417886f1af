// keyblend — validation of a compressed clip's bytes (compressed_clip::view / copy, packages).
// Internal; included by impl/compress.impl.hpp.
//
// SPDX-License-Identifier: MIT
//
// Everything the sampler reads is checked here once, in O(size) and without allocating: the
// header's counts against the limits, every section's offset and size against the blob and the
// sections before it, every kind, width and dropped component, every float, every span and
// segment against the data it says it has. After it, sampling cannot read outside the blob or
// loop beyond what the counts say.
#pragma once

#include "compress_format.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace keyblend {
namespace impl {
namespace cc {

/// A byte position of the formats (computed in 64 bits, as their offsets are) as error::index:
/// no_index when it does not fit a std::size_t (a 32-bit build, an offset far past the data).
inline std::size_t byte_index(std::uint64_t at) {
    return at <= static_cast<std::uint64_t>(error::no_index) - 1 ? static_cast<std::size_t>(at) : error::no_index;
}

struct blob_checker {
    const unsigned char* p;
    std::size_t n;

    static error fail(errc code, std::uint64_t at, const std::string& what) {
        return make_error(code, "compressed clip: byte " + std::to_string(at) + ": " + what, byte_index(at));
    }
};

/// Checks `n` bytes at `p` as a compressed clip of this version; the parsed layout on success.
inline result<clip_layout> validate_blob(const unsigned char* p, std::size_t n) {
    using c = blob_checker;
    if (!host_is_little_endian())
        return make_error(errc::unsupported, "compressed clip: keyblend reads compressed clips on little-endian hosts only");
    if (p == nullptr) return c::fail(errc::invalid_argument, 0, "no bytes (null pointer)");
    if (n < sizeof(clip_header))
        return c::fail(errc::parse_error, n, "truncated: " + std::to_string(n) + " bytes, but the header alone takes " +
                                                 std::to_string(sizeof(clip_header)));
    clip_layout l;
    std::memcpy(&l.h, p, sizeof l.h);
    const clip_header& h = l.h;
    if (h.magic != clip_magic) return c::fail(errc::parse_error, offsetof(clip_header, magic), "not a compressed clip (magic)");
    if (h.version != clip_version)
        return c::fail(h.version > clip_version ? errc::unsupported : errc::parse_error, offsetof(clip_header, version),
                       "version " + std::to_string(h.version) + " (this keyblend reads version " +
                           std::to_string(clip_version) + ")");
    if (h.flags & ~std::uint32_t(flag_additive | flag_ticks_default | flag_bound_met))
        return c::fail(errc::parse_error, offsetof(clip_header, flags), "unknown flags");
    if (h.size != n)
        return c::fail(errc::parse_error, offsetof(clip_header, size), "the header says " + std::to_string(h.size) + " bytes, the clip has " +
                                                  std::to_string(n));
    if (n % 16 != 0) return c::fail(errc::parse_error, offsetof(clip_header, size), "size " + std::to_string(n) + " is not a multiple of 16");
    if (h.joint_count > max_joints)
        return c::fail(errc::out_of_range, offsetof(clip_header, joint_count), std::to_string(h.joint_count) + " joints (at most " + std::to_string(max_joints) + ")");
    if (h.morph_weight_total > max_morph_weights)
        return c::fail(errc::out_of_range, offsetof(clip_header, morph_weight_total), std::to_string(h.morph_weight_total) + " morph weights (at most " +
                                                   std::to_string(max_morph_weights) + ")");
    if (h.wrap > 2) return c::fail(errc::parse_error, offsetof(clip_header, wrap), "wrap mode " + std::to_string(h.wrap));
    if (!is_finite(h.duration) || !is_finite(h.ticks_per_second))
        return c::fail(errc::non_finite, offsetof(clip_header, duration), "duration or ticks per second is not finite");
    if (h.duration < 0.0f || !(h.ticks_per_second > 0.0f))
        return c::fail(errc::parse_error, offsetof(clip_header, duration), "negative duration or non-positive ticks per second");
    if (h.sample_count == 0 || h.sample_count > max_samples)
        return c::fail(errc::out_of_range, offsetof(clip_header, sample_count), std::to_string(h.sample_count) + " samples (1 to " + std::to_string(max_samples) + ")");
    if (h.span_count == 0 || h.span_count > h.sample_count)
        return c::fail(errc::parse_error, offsetof(clip_header, span_count), std::to_string(h.span_count) + " spans for " + std::to_string(h.sample_count) + " samples");
    if (h.segment_length == 0 || h.segment_length > max_samples)
        return c::fail(errc::parse_error, offsetof(clip_header, segment_length), "segment length " + std::to_string(h.segment_length));
    if (h.segment_count != (h.sample_count + h.segment_length - 1) / h.segment_length)
        return c::fail(errc::parse_error, offsetof(clip_header, segment_count), std::to_string(h.segment_count) + " segments, but " +
                                                  std::to_string(h.sample_count) + " samples in segments of " +
                                                  std::to_string(h.segment_length) + " make " +
                                                  std::to_string((h.sample_count + h.segment_length - 1) / h.segment_length));
    for (unsigned g = 0; g < 4; ++g) {
        const std::uint32_t limit = g == group_weight ? h.morph_weight_total : h.joint_count;
        if (h.varying[g] > limit || h.constant[g] > limit || h.varying[g] + h.constant[g] > limit)
            return c::fail(errc::parse_error, offsetof(clip_header, varying) + 4 * g, "more varying and constant tracks than the skeleton has");
    }
    derive_layout(l);

    // Sections: in order, aligned, inside the blob.
    const std::uint64_t constants_bytes =
        4ull * (3ull * h.constant[0] + 4ull * h.constant[1] + 3ull * h.constant[2] + h.constant[3]);
    const std::uint64_t range_bytes = 24ull * h.varying[0] + 16ull * h.varying[1] + 24ull * h.varying[2] + 8ull * h.varying[3];
    struct section {
        const char* name;
        std::size_t field;
        std::uint32_t offset;
        std::uint64_t size;
    } sections[] = {
        {"joint kinds", offsetof(clip_header, off_joint_kinds), h.off_joint_kinds, 2ull * h.joint_count},
        {"weight kinds", offsetof(clip_header, off_weight_kinds), h.off_weight_kinds, h.morph_weight_total},
        {"constants", offsetof(clip_header, off_constants), h.off_constants, constants_bytes},
        {"clip ranges", offsetof(clip_header, off_ranges), h.off_ranges, range_bytes},
        {"spans", offsetof(clip_header, off_spans), h.off_spans, 16ull * h.span_count},
        {"segment offsets", offsetof(clip_header, off_segments), h.off_segments, 4ull * (std::uint64_t(h.segment_count) + 1)},
        {"segment metadata", offsetof(clip_header, off_meta), h.off_meta, std::uint64_t(h.segment_count) * l.meta_stride},
        {"data", offsetof(clip_header, off_data), h.off_data, h.data_size},
        {"name", offsetof(clip_header, off_name), h.off_name, h.name_size},
        {"extras", offsetof(clip_header, off_extras), h.off_extras, h.extras_size},
    };
    std::uint64_t end = sizeof(clip_header);
    for (const section& s : sections) {
        if (s.offset % 4 != 0)
            return c::fail(errc::parse_error, s.field, std::string(s.name) + " at " + std::to_string(s.offset) + " is not 4-byte aligned");
        if (s.offset < end)
            return c::fail(errc::parse_error, s.field, std::string(s.name) + " at " + std::to_string(s.offset) +
                                                           " overlaps what comes before it (which ends at " + std::to_string(end) + ")");
        if (s.size > n || s.offset > n - s.size)
            return c::fail(errc::parse_error, s.field, std::string(s.name) + " (" + std::to_string(s.size) + " bytes at " +
                                                           std::to_string(s.offset) + ") runs past the end (" +
                                                           std::to_string(n) + " bytes)");
        end = s.offset + s.size;
    }
    if (h.data_size < data_padding)
        return c::fail(errc::parse_error, offsetof(clip_header, data_size), "data without its " + std::to_string(data_padding) + " bytes of padding");

    // Kinds against the counts.
    std::uint32_t counted[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    for (std::uint32_t j = 0; j < h.joint_count; ++j) {
        const std::uint16_t k = joint_kinds(l, p, j);
        const std::uint64_t at = h.off_joint_kinds + 2ull * j;
        if (k >> 9) return c::fail(errc::parse_error, at, "joint " + std::to_string(j) + ": unknown kind bits");
        for (unsigned g = 0; g < 3; ++g) {
            const unsigned kind = (k >> (2 * g)) & 3u;
            if (kind == 3) return c::fail(errc::parse_error, at, "joint " + std::to_string(j) + ": unknown kind 3");
            if ((k >> (6 + g)) & 1u && kind != kind_varying)
                return c::fail(errc::parse_error, at, "joint " + std::to_string(j) + ": a step component that does not vary");
            if (kind != kind_default) ++counted[kind - 1][g];
        }
    }
    for (std::uint32_t w = 0; w < h.morph_weight_total; ++w) {
        const unsigned char k = p[h.off_weight_kinds + w];
        const unsigned kind = k & 3u;
        if ((k >> 3) || kind == 3 || ((k >> 2) & 1u && kind != kind_varying))
            return c::fail(errc::parse_error, h.off_weight_kinds + w, "morph weight " + std::to_string(w) + ": bad kind");
        if (kind != kind_default) ++counted[kind - 1][3];
    }
    for (unsigned g = 0; g < 4; ++g)
        if (counted[0][g] != h.constant[g] || counted[1][g] != h.varying[g])
            return c::fail(errc::parse_error, offsetof(clip_header, varying), "the kinds do not match the header's track counts");

    // Values.
    const std::uint64_t constant_floats = constants_bytes / 4;
    for (std::uint64_t i = 0; i < constant_floats; ++i)
        if (!is_finite(read<float>(p + h.off_constants + 4 * i)))
            return c::fail(errc::non_finite, h.off_constants + 4 * i, "a constant is not finite");
    for (unsigned g = 0; g < 4; ++g)
        for (std::uint32_t i = 0; i < h.varying[g]; ++i) {
            const std::size_t at = h.off_ranges + l.range_base[g] + i * (g == group_rotation ? 16u : g == group_weight ? 8u : 24u);
            for (unsigned k = 0; k < (g == group_rotation ? 4u : group_components(g)); ++k) {
                if (g == group_rotation) {
                    const std::uint32_t m = read<std::uint16_t>(p + at + 4 * k), e = read<std::uint16_t>(p + at + 4 * k + 2);
                    if (m + e > 65535u) return c::fail(errc::parse_error, at + 4 * k, "a rotation range past 1");
                } else {
                    const float m = read<float>(p + at + 8 * k), e = read<float>(p + at + 8 * k + 4);
                    if (!is_finite(m) || !is_finite(e) || !is_finite(m + e))
                        return c::fail(errc::non_finite, at + 8 * k, "a clip range is not finite");
                    if (e < 0.0f) return c::fail(errc::parse_error, at + 8 * k, "a negative clip range");
                }
            }
        }
    std::uint64_t samples = 0;
    float previous_end = 0.0f;
    for (std::uint32_t s = 0; s < h.span_count; ++s) {
        const span_record r = read_span(l, p, s);
        const std::uint64_t at = h.off_spans + 16ull * s;
        if (!is_finite(r.start) || !is_finite(r.end)) return c::fail(errc::non_finite, at, "a span time is not finite");
        if (r.end < r.start || (s > 0 && r.start != previous_end))
            return c::fail(errc::parse_error, at, "span " + std::to_string(s) + " does not follow the one before it");
        // A span starts after the one before it, or with its last sample (a boundary where nothing
        // jumps).
        const bool shared = s > 0 && std::uint64_t(r.first) + 1 == samples;
        if ((r.first != samples && !shared) || r.count == 0 || r.count > h.sample_count - r.first ||
            (r.count == 1) != (r.start == r.end))
            return c::fail(errc::parse_error, at, "span " + std::to_string(s) + ": bad samples");
        samples = std::uint64_t(r.first) + r.count;
        previous_end = r.end;
    }
    if (samples != h.sample_count) return c::fail(errc::parse_error, h.off_spans, "the spans do not hold every sample");

    // Segments: metadata, then the records each needs.
    const unsigned char* data = p + h.off_data;
    const std::uint64_t records_end = h.data_size - data_padding;
    std::uint32_t previous = 0;
    for (std::uint32_t s = 0; s <= h.segment_count; ++s) {
        const std::uint32_t o = read<std::uint32_t>(p + h.off_segments + 4ull * s);
        if ((s == 0 && o != 0) || o < previous || o > records_end)
            return c::fail(errc::parse_error, h.off_segments + 4ull * s, "segment offset " + std::to_string(o) + " out of order or past the data");
        previous = o;
    }
    (void)data;
    for (std::uint32_t s = 0; s < h.segment_count; ++s) {
        const unsigned char* meta = p + h.off_meta + std::uint64_t(s) * l.meta_stride;
        const std::uint64_t meta_at = h.off_meta + std::uint64_t(s) * l.meta_stride;
        for (unsigned g = 0; g < 4; ++g)
            for (std::uint32_t i = 0; i < h.varying[g]; ++i) {
                const unsigned char code = meta[l.track_base[g] + i];
                if ((code & 31u) > max_width || (code & 0x80u) || (g != group_rotation && (code >> 5)))
                    return c::fail(errc::parse_error, meta_at + l.track_base[g] + i,
                                   "segment " + std::to_string(s) + ": bad width code " + std::to_string(code));
            }
        for (std::uint32_t k = 0; k < l.components; ++k)
            if (unsigned(meta[l.tracks + k]) + meta[l.tracks + l.components + k] > 255u)
                return c::fail(errc::parse_error, meta_at + l.tracks + k, "segment " + std::to_string(s) + ": a range past the clip's");
        const std::uint64_t bits =
            for_each_code<false>(l, p, meta, [](std::uint32_t, const component_code&) {}, [](std::uint32_t, unsigned) {});
        const std::uint64_t count = std::min<std::uint64_t>(h.segment_length, h.sample_count - std::uint64_t(s) * h.segment_length);
        const std::uint32_t from = read<std::uint32_t>(p + h.off_segments + 4ull * s);
        const std::uint32_t to = read<std::uint32_t>(p + h.off_segments + 4ull * (s + 1));
        if ((count * bits + 7) / 8 > to - from || count * bits >= (1ull << 31))
            return c::fail(errc::parse_error, h.off_segments + 4ull * s,
                           "segment " + std::to_string(s) + " needs " + std::to_string((count * bits + 7) / 8) +
                               " bytes of records, it has " + std::to_string(to - from));
    }

    // The report.
    const float report[] = {h.precision, h.shell, h.weight_precision, h.max_error, h.max_error_time, h.max_weight_error};
    for (float v : report)
        if (!is_finite(v)) return c::fail(errc::non_finite, offsetof(clip_header, precision), "a reported bound or error is not finite");
    if (h.max_error_joint != 0xffffffffu && h.max_error_joint >= h.joint_count)
        return c::fail(errc::parse_error, offsetof(clip_header, max_error_joint), "the worst joint is out of range");

    // Extras.
    struct checker {
        float duration;
        bool ok = true;
        bool times(const extras_track& t, unsigned dims, bool unit) const {
            float previous_time = 0.0f;
            for (std::uint32_t k = 0; k < t.count; ++k) {
                const float time = read<float>(t.times + 4ull * k);
                if (!is_finite(time) || (k > 0 && time < previous_time)) return false;
                previous_time = time;
                float len2 = 0.0f;
                for (unsigned d = 0; d < dims; ++d) {
                    const float v = read<float>(t.values + 4ull * (std::uint64_t(k) * dims + d));
                    if (!is_finite(v)) return false;
                    len2 += v * v;
                    if (t.in_tangents &&
                        (!is_finite(read<float>(t.in_tangents + 4ull * (std::uint64_t(k) * dims + d))) ||
                         !is_finite(read<float>(t.out_tangents + 4ull * (std::uint64_t(k) * dims + d)))))
                        return false;
                }
                if (unit && std::fabs(std::sqrt(len2) - 1.0f) > 1e-3f) return false;
            }
            return true;
        }
        bool user_channel(bool scalar, std::string_view, const extras_track& t) const {
            return t.count > 0 && t.mode != static_cast<std::uint32_t>(interpolation::nlerp) &&
                   t.mode != static_cast<std::uint32_t>(interpolation::decomposed) && times(t, scalar ? 1u : 3u, false);
        }
        float last_event = 0.0f;
        bool event(float time, std::string_view) {
            if (!is_finite(time) || time < last_event || time > duration) return false;
            last_event = time;
            return true;
        }
        bool motion(unsigned k, const extras_track& t) const {
            const bool rotation = k == 1;
            if (t.mode == static_cast<std::uint32_t>(interpolation::decomposed) ||
                (!rotation && t.mode == static_cast<std::uint32_t>(interpolation::nlerp)))
                return false;
            return times(t, rotation ? 4u : 3u, rotation);
        }
    } check{h.duration};
    if (!walk_extras(p + h.off_extras, h.extras_size, check))
        return c::fail(errc::parse_error, h.off_extras, "malformed user channels, events or root motion");
    return l;
}

} // namespace cc
} // namespace impl
} // namespace keyblend
