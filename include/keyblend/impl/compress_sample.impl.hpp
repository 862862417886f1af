// keyblend — sampling compressed clips (compress.hpp): the context's binding, decoding one sample
// from its bits, and interpolating two decoded samples over lanes. Included at the bottom of
// compress.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
//
// How it is fast. A context keeps two decoded samples in the pose's own layout (ten padded float
// streams each, as local_pose): the components the clip does not store or stores once are written
// there when the context binds, and decoding a sample overwrites only the varying ones. A frame
// finds the two samples around its time; when the context holds them (forward playback between
// two samples) it only interpolates, when it holds one (forward playback crossing a sample) it
// decodes one, when it holds neither (random access) it decodes both, in one pass when they share
// a segment. Decoding a sample takes its segment's table (kept for 2 to 16 segments; built from the
// segment's metadata, 16 or 8 components at a time: widths, the prefix sum of the widths that
// places each component in the record, masks, biases, scales), then every component: a 4-byte
// gather at its bit's byte, a shift, a mask and a multiply-add, 16 or 8 at a time; then the
// rotations' dropped components, 16 or 8 at a time; then the components are copied to their joints.
// Interpolation is one pass over every joint, all components, on the pose kernels' lane types:
// translation and scale lerp, rotation nlerp, each lane's step flag zeroing its alpha.
#pragma once

#include "compress_lanes.hpp"
#include "simd/quat.hpp"

#include <cstring>

namespace keyblend {
namespace impl {

struct compressed_sampler {
    using context = compressed_sampling_context;
    static constexpr unsigned stream_count = local_pose::stream_count;

    static std::size_t sample_floats(const context& c) { return stream_count * c.capacity_ + c.weight_capacity_; }
    /// Arrays in component (or track) order are this long, so that whole 16-lane vectors and
    /// their tails stay inside them.
    static std::size_t padded_length(std::size_t n) { return (n + 15) / 16 * 16 + 16; }

    /// What sampling `clip` with `s` requires of them: a clip, compressed for that skeleton.
    static status check(const compressed_clip& clip, const skeleton& s) {
        if (clip.empty())
            return make_error(errc::invalid_argument, "compressed_sampling_job: the compressed clip is empty");
        const cc::clip_layout& l = clip.layout_;
        if (l.h.joint_count != s.size() || l.h.morph_weight_total != s.morph_weight_total() ||
            l.h.skeleton_hash != skeleton_fingerprint(s))
            return make_error(errc::size_mismatch,
                              "compressed clip '" + std::string(clip.name()) + "' was compressed for another skeleton (" +
                                  std::to_string(l.h.joint_count) + " joints, " + std::to_string(l.h.morph_weight_total) +
                                  " morph weights; this one has " + std::to_string(s.size()) + " and " +
                                  std::to_string(s.morph_weight_total()) +
                                  (l.h.joint_count == s.size() && l.h.morph_weight_total == s.morph_weight_total()
                                       ? ", and differs in parents, names, bind pose or morph weights)"
                                       : ")"));
        return {};
    }

    static status bind(context& c, const compressed_clip& clip, const skeleton& s) {
        const cc::clip_layout& l = clip.layout_;
        if (status st = check(clip, s); !st) return st;
        c.data_ = clip.data_;
        c.skeleton_ = &s;
        c.layout_ = l;
        c.joints_ = s.size();
        c.padded_ = (s.size() + pose_lane_block - 1) / pose_lane_block * pose_lane_block;
        c.capacity_ = aligned_stream_length(c.padded_);
        c.weights_ = s.morph_weight_total();
        c.weight_capacity_ = aligned_stream_length(c.weights_);
        const std::size_t floats = sample_floats(c);
        for (aligned_floats& buffer : c.samples_) buffer = allocate_aligned_floats(std::max<std::size_t>(floats, 16));
        c.steps_ = allocate_aligned_floats(std::max<std::size_t>(3 * c.capacity_ + c.weight_capacity_, 16));
        c.sample_of_[0] = c.sample_of_[1] = -1;
        for (std::vector<std::int32_t>& joints : c.track_joint_) joints.clear();

        // The components that do not vary, in both samples; the tracks that do, and step flags.
        float* first = c.samples_[0].get();
        float* steps = c.steps_.get();
        const std::size_t cap = c.capacity_;
        const unsigned char* constants = c.data_ + l.h.off_constants;
        std::size_t next_constant = 0;
        const auto constant = [&] { return cc::read<float>(constants + 4 * next_constant++); };
        // (One read per statement: the order of a call's arguments is unspecified.)
        const auto vector = [&] {
            const float x = constant(), y = constant(), z = constant();
            return glm::vec3(x, y, z);
        };
        for (std::size_t j = 0; j < cap; ++j) {
            transform value; // padding lanes: the identity
            std::uint16_t kinds = 0;
            if (j < s.size()) {
                value = s.bind_transforms()[j];
                kinds = cc::joint_kinds(l, c.data_, j);
            }
            const unsigned kind_of[3] = {kinds & 3u, (kinds >> 2) & 3u, (kinds >> 4) & 3u};
            if (kind_of[0] == cc::kind_constant) value.translation = vector();
            if (kind_of[1] == cc::kind_constant) {
                const float x = constant(), y = constant(), z = constant(), w = constant();
                value.rotation = make_quat(w, x, y, z);
            }
            if (kind_of[2] == cc::kind_constant) value.scale = vector();
            for (unsigned g = 0; g < 3; ++g) {
                if (kind_of[g] == cc::kind_varying) c.track_joint_[g].push_back(static_cast<std::int32_t>(j));
                // Only varying components interpolate: the others hold their value bit for bit.
                steps[g * cap + j] = kind_of[g] == cc::kind_varying && !((kinds >> (6 + g)) & 1u) ? 1.0f : 0.0f;
            }
            const float v[stream_count] = {value.translation.x, value.translation.y, value.translation.z,
                                           value.rotation.x,    value.rotation.y,    value.rotation.z,
                                           value.rotation.w,    value.scale.x,       value.scale.y,
                                           value.scale.z};
            for (unsigned k = 0; k < stream_count; ++k) first[k * cap + j] = v[k];
        }
        float* weights = first + stream_count * cap;
        for (std::size_t w = 0; w < c.weight_capacity_; ++w) {
            float value = 0.0f;
            float step = 0.0f;
            if (w < c.weights_) {
                const unsigned char k = c.data_[l.h.off_weight_kinds + w];
                value = s.bind_morph_weights()[w];
                if ((k & 3u) == cc::kind_constant) value = constant();
                if ((k & 3u) == cc::kind_varying) {
                    c.track_joint_[3].push_back(static_cast<std::int32_t>(w));
                    step = (k >> 2) & 1u ? 0.0f : 1.0f;
                }
            }
            weights[w] = value;
            steps[3 * cap + w] = step;
        }
        std::memcpy(c.samples_[1].get(), first, floats * sizeof(float));
        for (unsigned g = 0; g < 3; ++g) {
            c.lane_mask_[g].assign(cap / 8 + 2, 0);
            c.lane_start_[g].assign(cap / 8 + 2, 0);
            std::int32_t seen = 0;
            std::size_t next = 0;
            for (std::size_t b = 0; b < cap / 8 + 2; ++b) {
                c.lane_start_[g][b] = seen;
                for (; next < c.track_joint_[g].size() && std::size_t(c.track_joint_[g][next]) < 8 * (b + 1); ++next, ++seen)
                    c.lane_mask_[g][b] = static_cast<unsigned char>(c.lane_mask_[g][b] | (1u << (c.track_joint_[g][next] % 8)));
            }
        }

        // The clip ranges, for the tables.
        const std::size_t components = padded_length(l.components);
        const std::uint32_t nr = l.h.varying[cc::group_rotation];
        const std::size_t rotations = padded_length(nr);
        c.range_min_ = allocate_aligned_floats(components);
        c.range_ext_ = allocate_aligned_floats(components);
        c.range_level_.assign(components, 0);
        std::fill(c.range_min_.get(), c.range_min_.get() + components, 0.0f);
        std::fill(c.range_ext_.get(), c.range_ext_.get() + components, 0.0f);
        c.rotation_min_ = allocate_aligned_floats(4 * rotations);
        c.rotation_ext_ = allocate_aligned_floats(4 * rotations);
        c.rotation_level_.assign(4 * rotations, 0);
        std::fill(c.rotation_min_.get(), c.rotation_min_.get() + 4 * rotations, 0.0f);
        std::fill(c.rotation_ext_.get(), c.rotation_ext_.get() + 4 * rotations, 0.0f);
        for (unsigned g = 0; g < 4; ++g) {
            const std::uint32_t n = l.h.varying[g];
            for (std::uint32_t i = 0; i < n; ++i)
                for (unsigned k = 0; k < (g == cc::group_rotation ? 4u : cc::group_components(g)); ++k) {
                    const cc::clip_range r = cc::read_clip_range(l, c.data_, g, i, k);
                    const std::size_t at = g == cc::group_rotation ? k * rotations + i : l.component_base[g] + k * n + i;
                    float* mins = g == cc::group_rotation ? c.rotation_min_.get() : c.range_min_.get();
                    float* exts = g == cc::group_rotation ? c.rotation_ext_.get() : c.range_ext_.get();
                    std::int32_t* levels = g == cc::group_rotation ? c.rotation_level_.data() : c.range_level_.data();
                    mins[at] = r.min;
                    exts[at] = r.extent;
                    levels[at] = r.exponent;
                }
        }
        const std::size_t tracks = padded_length(l.tracks);
        // Tables for as many segments as fit in 64 KB (2 to 16; a table is ~16 bytes a component).
        const std::size_t table_bytes = 16 * components + 4 * rotations + 8 * tracks;
        const std::size_t wanted = std::min<std::size_t>({16, std::max<std::size_t>(l.h.segment_count, 2),
                                                          std::max<std::size_t>(2, (64u << 10) / table_bytes)});
        c.tables_.resize(wanted);
        for (context::segment_table& t : c.tables_) {
            t.segment = -1;
            t.record_bits = 0;
            t.scale = allocate_aligned_floats(components);
            t.bias = allocate_aligned_floats(components);
            t.drop_f = allocate_aligned_floats(rotations);
            std::fill(t.scale.get(), t.scale.get() + components, 0.0f);
            std::fill(t.bias.get(), t.bias.get() + components, 0.0f);
            std::fill(t.drop_f.get(), t.drop_f.get() + rotations, 3.0f);
            t.offset.assign(components, 0);
            t.mask.assign(components, 0);
            t.drop.assign(rotations, 3);
            t.top.assign(tracks, 0);
            t.track_width.assign(tracks, 0);
        }
        c.next_table_ = 0;
        c.compact_ = allocate_aligned_floats(2 * components);
        std::fill(c.compact_.get(), c.compact_.get() + 2 * components, 0.0f);
        c.rotations_ = allocate_aligned_floats(8 * rotations);
        std::fill(c.rotations_.get(), c.rotations_.get() + 8 * rotations, 0.0f);
        return {};
    }

    static bool is_bound(const context& c, const compressed_clip& clip, const skeleton& s) {
        return c.data_ == clip.data_ && c.data_ != nullptr && c.skeleton_ == &s && c.joints_ == s.size() &&
               c.weights_ == s.morph_weight_total() && c.layout_.h.size == clip.layout_.h.size;
    }

    /// The clip range of component k of track i of group g (rotation: kept component k under the
    /// lanes' dropped components): level, extent, minimum.
    template <class L>
    static KEYBLEND_FORCE_INLINE void clip_range(const context& c, unsigned g, unsigned k, std::uint32_t i,
                                                 typename L::iv drop, typename L::iv& level, typename L::fv& extent,
                                                 typename L::fv& minimum) {
        const cc::clip_layout& l = c.layout_;
        if (g != cc::group_rotation) {
            const std::size_t at = l.component_base[g] + k * l.h.varying[g] + i;
            level = L::load_i(c.range_level_.data() + at);
            extent = L::load_f(c.range_ext_.get() + at);
            minimum = L::load_f(c.range_min_.get() + at);
            return;
        }
        // Kept component k is k where k < drop, else k + 1.
        const std::size_t stride = padded_length(l.h.varying[cc::group_rotation]);
        const std::size_t at = k * stride + i;
        const typename L::mv next = L::at_most(drop, static_cast<std::int32_t>(k));
        level = L::select(next, L::load_i(c.rotation_level_.data() + at + stride), L::load_i(c.rotation_level_.data() + at));
        extent = L::fselect(next, L::load_f(c.rotation_ext_.get() + at + stride), L::load_f(c.rotation_ext_.get() + at));
        minimum = L::fselect(next, L::load_f(c.rotation_min_.get() + at + stride), L::load_f(c.rotation_min_.get() + at));
    }

    /// Segment `seg`'s decoding table (impl/compress_format.hpp's for_each_code, L::width
    /// components at a time), into `t`. Vectors run past the end of a group into the next one's
    /// entries, which are written after them (groups, and within a rotation or vector group its
    /// components, in component order); the tails past the last are cleared.
    template <class L>
    static void build_table(const context& c, std::uint32_t seg, context::segment_table& t) {
        using iv = typename L::iv;
        using fv = typename L::fv;
        const cc::clip_layout& l = c.layout_;
        const unsigned char* meta = c.data_ + l.h.off_meta + std::size_t(seg) * l.meta_stride;
        const unsigned char* mins = meta + l.tracks;
        const unsigned char* exts = mins + l.components;
        const iv none = L::set_i(-1000), one = L::set_i(1), zero = L::set_i(0);
        // Per track: its width, its dropped component, the largest level of its live components.
        for (unsigned g = 0; g < 4; ++g) {
            const std::uint32_t n = l.h.varying[g];
            for (std::uint32_t i = 0; i < n; i += L::width) {
                const iv code = L::load_u8(meta + l.track_base[g] + i);
                const iv drop = L::band(L::srl(code, 5), L::set_i(3));
                if (g == cc::group_rotation) {
                    L::store_i(t.drop.data() + i, drop);
                    L::store_f(t.drop_f.get() + i, L::to_f(drop));
                }
                iv top = none;
                for (unsigned k = 0; k < cc::group_components(g); ++k) {
                    const iv e = L::load_u8(exts + l.component_base[g] + k * n + i);
                    iv level;
                    fv extent, minimum;
                    clip_range<L>(c, g, k, i, drop, level, extent, minimum);
                    const typename L::mv live = L::mand(L::mnot(L::is_zero(e)), L::fpositive(extent));
                    top = L::max(top, L::select(live, L::add(level, L::log2(L::max(e, one))), none));
                }
                L::store_i(t.track_width.data() + l.track_base[g] + i, L::band(code, L::set_i(31)));
                L::store_i(t.top.data() + l.track_base[g] + i, top);
            }
        }
        // Per component: width, bias, scale.
        const fv unit = L::set_f(cc::byte_unit);
        const float* reciprocals = cc::width_reciprocals();
        for (unsigned g = 0; g < 4; ++g) {
            const std::uint32_t n = l.h.varying[g];
            for (unsigned k = 0; k < cc::group_components(g); ++k)
                for (std::uint32_t i = 0; i < n; i += L::width) {
                    const std::size_t comp = l.component_base[g] + k * n + i;
                    const iv drop = g == cc::group_rotation ? L::load_i(t.drop.data() + i) : L::set_i(3);
                    const iv e = L::load_u8(exts + comp), m = L::load_u8(mins + comp);
                    iv level;
                    fv extent, minimum;
                    clip_range<L>(c, g, k, i, drop, level, extent, minimum);
                    const typename L::mv live = L::mand(L::mnot(L::is_zero(e)), L::fpositive(extent));
                    const iv w = L::load_i(t.track_width.data() + l.track_base[g] + i);
                    const iv top = L::load_i(t.top.data() + l.track_base[g] + i);
                    const iv own = L::add(level, L::log2(L::max(e, one)));
                    const iv width = L::select(live, L::max(zero, L::sub(w, L::sub(top, own))), zero);
                    const fv bias = L::fadd(minimum, L::fmul(extent, L::fmul(L::to_f(m), unit)));
                    const fv range = L::fmul(extent, L::fmul(L::to_f(e), unit));
                    const fv scale = L::fmul(range, L::lookup32(reciprocals, L::band(width, L::set_i(31))));
                    L::store_i(t.offset.data() + comp, width);
                    L::store_f(t.bias.get() + comp, bias);
                    L::store_f(t.scale.get() + comp, scale);
                }
        }
        // Bit offsets: the prefix sum of the widths (lanes past the last component sum garbage
        // that flows only forward, and is cleared below); masks.
        std::int32_t at = 0;
        for (std::uint32_t k = 0; k < l.components; k += L::width) {
            const iv width = L::load_i(t.offset.data() + k);
            const iv inclusive = L::scan(width);
            L::store_i(t.offset.data() + k, L::add(L::sub(inclusive, width), L::set_i(at)));
            L::store_i(t.mask.data() + k, L::sub(L::sllv(one, L::band(width, L::set_i(31))), one));
            at += L::last(inclusive);
        }
        // (The record: where the last component starts, plus its width; `at` summed the tails.)
        at = l.components ? t.offset[l.components - 1] + static_cast<std::int32_t>(ilog2_plus1(t.mask[l.components - 1])) : 0;
        const std::size_t tail = std::min(t.offset.size(), std::size_t(l.components) + 16);
        for (std::size_t k = l.components; k < tail; ++k) {
            t.offset[k] = 0;
            t.mask[k] = 0;
            t.bias[k] = 0.0f;
            t.scale[k] = 0.0f;
        }
        t.record_bits = static_cast<std::uint32_t>(at);
        t.segment = seg;
    }

    /// One of the context's tables (the tests build tables into it with each lane type).
    static context::segment_table& table_slot(context& c, unsigned i) { return c.tables_[i % c.tables_.size()]; }

    /// The width w of a mask 2^w - 1.
    static unsigned ilog2_plus1(std::int32_t mask) { return static_cast<unsigned>(cc::ilog2(static_cast<std::uint32_t>(mask)) + 1); }

    /// The decoding table of segment `seg`, built into one of the context's tables (the one
    /// written longest ago) when none holds it.
    template <class L>
    static const context::segment_table& table(context& c, std::uint32_t seg) {
        for (const context::segment_table& t : c.tables_)
            if (t.segment == static_cast<std::int64_t>(seg)) return t;
        context::segment_table& t = c.tables_[c.next_table_];
        c.next_table_ = (c.next_table_ + 1) % static_cast<unsigned>(c.tables_.size());
        build_table<L>(c, seg, t);
        return t;
    }

    /// Decodes global samples g[0..N) of one segment into sample buffers b[0..N), with the
    /// decoder's lanes for V. Two samples share one pass: the table's entries and the lane masks
    /// are read once, and the two records' gathers are independent.
    template <class V, std::size_t N>
    static void decode(context& c, const std::uint32_t (&g)[N], const unsigned (&b)[N]) {
        using L = typename clanes::for_lanes<V>::type;
        const cc::clip_layout& l = c.layout_;
        const std::uint32_t seg = g[0] / l.h.segment_length;
        const context::segment_table& t = table<L>(c, seg);
        const unsigned char* data =
            c.data_ + l.h.off_data + cc::read<std::uint32_t>(c.data_ + l.h.off_segments + 4ull * seg);
        const std::size_t components = padded_length(l.components);
        const std::uint32_t nr = l.h.varying[cc::group_rotation];
        const std::size_t stride = padded_length(nr);
        float* compact[N];
        float* rot[N];
        typename L::iv first[N];
        for (std::size_t n = 0; n < N; ++n) {
            // (< 2^31: validated)
            first[n] = L::set_i(static_cast<std::int32_t>((g[n] - seg * l.h.segment_length) * t.record_bits));
            compact[n] = c.compact_.get() + n * components;
            rot[n] = c.rotations_.get() + n * 4 * stride;
        }

        // Every component: its code's bits, dequantized.
        const typename L::iv seven = L::set_i(7);
        for (std::uint32_t k = 0; k < l.components; k += L::width) {
            const typename L::iv offset = L::load_i(t.offset.data() + k), mask = L::load_i(t.mask.data() + k);
            const typename L::fv scale = L::load_f(t.scale.get() + k), bias = L::load_f(t.bias.get() + k);
            for (std::size_t n = 0; n < N; ++n) {
                const typename L::iv bit = L::add(offset, first[n]);
                const typename L::iv word = L::gather_words(data, L::srl(bit, 3));
                const typename L::iv q = L::band(L::srlv(word, L::band(bit, seven)), mask);
                L::store_f(compact[n] + k, L::dequantize(q, scale, bias));
            }
        }

        // Rotations: the dropped component rebuilt, then x, y, z, w.
        const std::size_t kept = l.component_base[cc::group_rotation];
        for (std::size_t n = 0; n < N; ++n)
            for (std::uint32_t i = 0; i < nr; i += V::width)
                rebuild<V>(compact[n] + kept + i, compact[n] + kept + nr + i, compact[n] + kept + 2 * nr + i,
                           t.drop_f.get() + i, rot[n] + i, stride);

        // Into the samples' pose layout.
        const std::size_t cap = c.capacity_;
        for (unsigned grp = 0; grp < 3; ++grp) {
            const std::vector<std::int32_t>& joints = c.track_joint_[grp];
            const std::size_t count = joints.size();
            const unsigned dims = grp == cc::group_rotation ? 4u : 3u;
            const unsigned stream0 = grp == cc::group_translation ? 0u : grp == cc::group_rotation ? 3u : 7u;
            const std::size_t from_stride = grp == cc::group_rotation ? stride : count;
            for (unsigned k = 0; k < dims; ++k) {
                float* to[N];
                const float* src[N];
                for (std::size_t n = 0; n < N; ++n) {
                    to[n] = c.samples_[b[n]].get() + (stream0 + k) * cap;
                    src[n] = (grp == cc::group_rotation ? rot[n] : compact[n] + l.component_base[grp]) + k * from_stride;
                }
                if constexpr (L::width == 1) {
                    for (std::size_t i = 0; i < count; ++i)
                        for (std::size_t n = 0; n < N; ++n) to[n][joints[i]] = src[n][i];
                } else {
                    // (Whole vectors to the stream's capacity, a multiple of 16; masks past the
                    // joints are 0. A source vector may read into the next stream: never used.)
                    const unsigned char* masks = c.lane_mask_[grp].data();
                    const std::int32_t* starts = c.lane_start_[grp].data();
                    for (std::size_t i = 0; i < cap; i += L::width) {
                        const std::size_t block = i / 8;
                        const unsigned mask = L::width == 16 ? masks[block] | unsigned(masks[block + 1]) << 8 : masks[block];
                        if (mask)
                            for (std::size_t n = 0; n < N; ++n) L::expand(to[n] + i, src[n] + starts[block], mask);
                    }
                }
            }
        }
        const std::vector<std::int32_t>& which = c.track_joint_[3];
        for (std::size_t n = 0; n < N; ++n) {
            float* weights = c.samples_[b[n]].get() + stream_count * cap;
            const float* decoded_weights = compact[n] + l.component_base[cc::group_weight];
            for (std::size_t i = 0; i < which.size(); ++i) weights[which[i]] = decoded_weights[i];
            c.sample_of_[b[n]] = g[n];
        }
    }

    /// V::width rotations from their kept components a, b, c and dropped component `drop` (as
    /// floats): cc::rebuild_rotation, lane by lane, into streams x, y, z, w `stride` apart.
    template <class V>
    static KEYBLEND_FORCE_INLINE void rebuild(const float* pa, const float* pb, const float* pc, const float* pdrop,
                                              float* out, std::size_t stride) {
        using lanes::select;
        const V one = V::set1(1.0f), zero = V::set1(0.0f);
        V a = V::load(pa), b = V::load(pb), c = V::load(pc);
        const V s2 = a * a + b * b + c * c;
        const typename V::mask outside = s2 > one;
        const V inv = select(outside, one / lanes::sqrt(s2), one);
        a = a * inv;
        b = b * inv;
        c = c * inv;
        const V d = lanes::sqrt(lanes::max(one - (a * a + b * b + c * c), zero));
        const V drop = V::load(pdrop);
        const typename V::mask d0 = drop == zero, d1 = drop == one, d2 = drop == V::set1(2.0f), d3 = drop == V::set1(3.0f);
        select(d0, d, a).store(out);
        select(d0, a, select(d1, d, b)).store(out + stride);
        select(d0 | d1, b, select(d2, d, c)).store(out + 2 * stride);
        select(d3, d, c).store(out + 3 * stride);
    }

    /// Joints [i, i + V::width): the interpolation of samples a and b at alpha into `out`.
    template <class V>
    static KEYBLEND_FORCE_INLINE void interpolate(const context& c, const float* a, const float* b, float alpha,
                                                  std::size_t i, local_pose& out) {
        using lanes::select;
        const std::size_t cap = c.capacity_;
        const float* steps = c.steps_.get() + i;
        float* const first_out = out.data(local_pose::translation_x);
        const std::size_t out_stride = static_cast<std::size_t>(out.data(local_pose::translation_y) - first_out);
        const V zero = V::set1(0.0f), t = V::set1(alpha);
        const V at[3] = {t * V::load(steps), t * V::load(steps + cap), t * V::load(steps + 2 * cap)};
        // Where no lane of a component interpolates (joints that do not vary, step tracks, a
        // sample's exact time) the first sample is copied, as the interpolation would give it.
        const auto copy_stream = [&](unsigned s) KEYBLEND_LAMBDA_INLINE {
            V::load(a + s * cap + i).store(first_out + i + s * out_stride);
        };
        const auto lerp_stream = [&](unsigned s, V w) KEYBLEND_LAMBDA_INLINE {
            const V va = V::load(a + s * cap + i), vb = V::load(b + s * cap + i);
            select(w == zero, va, va + (vb - va) * w).store(first_out + i + s * out_stride);
        };
        const auto vector_group = [&](unsigned s0, V w) KEYBLEND_LAMBDA_INLINE {
            if (lanes::bits(w != zero)) {
                lerp_stream(s0, w);
                lerp_stream(s0 + 1, w);
                lerp_stream(s0 + 2, w);
            } else {
                copy_stream(s0);
                copy_stream(s0 + 1);
                copy_stream(s0 + 2);
            }
        };
        vector_group(0, at[0]);
        if (lanes::bits(at[1] != zero)) {
            const quat_lanes<V> qa{V::load(a + 6 * cap + i), V::load(a + 3 * cap + i), V::load(a + 4 * cap + i),
                                   V::load(a + 5 * cap + i)};
            const quat_lanes<V> qb{V::load(b + 6 * cap + i), V::load(b + 3 * cap + i), V::load(b + 4 * cap + i),
                                   V::load(b + 5 * cap + i)};
            const quat_lanes<V> q = impl::nlerp(qa, qb, at[1]);
            q.x.store(first_out + i + 3 * out_stride);
            q.y.store(first_out + i + 4 * out_stride);
            q.z.store(first_out + i + 5 * out_stride);
            q.w.store(first_out + i + 6 * out_stride);
        } else {
            for (unsigned s = 3; s < 7; ++s) copy_stream(s);
        }
        vector_group(7, at[2]);
    }

    /// The whole compressed_sampling_job::run after its null checks, decoding on Wide lanes and
    /// interpolating on Wide lanes with a Narrow tail (the pose's streams are padded to Narrow's
    /// width).
    template <class Wide, class Narrow = Wide>
    static status sample(const compressed_clip& clip, const skeleton& s, float time, context& c, local_pose& out) {
        if (!is_bound(c, clip, s)) // (never for an empty clip: bind's check reports it)
            if (status st = bind(c, clip, s); !st) {
                c.reset();
                return st;
            }
        const cc::clip_layout& l = c.layout_;
        const unsigned char* blob = c.data_;
        const cc::sample_position p = cc::locate_sample(
            [&](std::uint32_t i) { return cc::read_span(l, blob, i); }, l.h.span_count, time);
        // The two samples, decoding only those the context does not hold.
        int have0 = c.sample_of_[0] == p.g0 ? 0 : c.sample_of_[1] == p.g0 ? 1 : -1;
        int have1 = c.sample_of_[0] == p.g1 ? 0 : c.sample_of_[1] == p.g1 ? 1 : -1;
        const std::uint32_t segment_length = l.h.segment_length;
        if (have0 < 0 && have1 < 0 && p.g1 != p.g0 && p.g0 / segment_length == p.g1 / segment_length) {
            have0 = 0;
            have1 = 1;
            decode<Wide>(c, {p.g0, p.g1}, {0u, 1u});
        }
        if (have0 < 0) {
            have0 = have1 == 0 ? 1 : 0;
            decode<Wide>(c, {p.g0}, {static_cast<unsigned>(have0)});
            if (p.g1 == p.g0) have1 = have0;
        }
        if (have1 < 0) {
            have1 = 1 - have0;
            decode<Wide>(c, {p.g1}, {static_cast<unsigned>(have1)});
        }
        const float* a = c.samples_[have0].get();
        const float* b = c.samples_[have1].get();
        out.resize(s.size());
        const float alpha = p.alpha;
        lanes::for_each_lanes<Wide, Narrow>(0, c.padded_, [&](auto lane, std::size_t i) KEYBLEND_LAMBDA_INLINE {
            interpolate<decltype(lane)>(c, a, b, alpha, i, out);
        });
        if (out.morph_weights().size() != c.weights_) out.set_morph_layout(s);
        if (c.weights_) {
            const std::size_t base = stream_count * c.capacity_;
            const float* steps = c.steps_.get() + 3 * c.capacity_;
            const span<float> w = out.morph_weights();
            for (std::size_t k = 0; k < c.weights_; ++k) {
                const float wa = a[base + k], wb = b[base + k], at = alpha * steps[k];
                w[k] = at == 0.0f ? wa : wa + (wb - wa) * at;
            }
        }
        return {};
    }
};

} // namespace impl

inline compressed_sampling_context& compressed_sampling_context::operator=(const compressed_sampling_context& other) {
    if (this == &other) return *this;
    data_ = other.data_;
    skeleton_ = other.skeleton_;
    layout_ = other.layout_;
    joints_ = other.joints_;
    padded_ = other.padded_;
    capacity_ = other.capacity_;
    weights_ = other.weights_;
    weight_capacity_ = other.weight_capacity_;
    const auto copy = [](const impl::aligned_floats& from, std::size_t n) {
        impl::aligned_floats to;
        if (from) {
            to = impl::allocate_aligned_floats(n);
            std::memcpy(to.get(), from.get(), n * sizeof(float));
        }
        return to;
    };
    using sampler = impl::compressed_sampler;
    const std::size_t floats = std::max<std::size_t>(sampler::sample_floats(*this), 16);
    for (unsigned b = 0; b < 2; ++b) {
        samples_[b] = copy(other.samples_[b], floats);
        sample_of_[b] = other.sample_of_[b];
    }
    steps_ = copy(other.steps_, std::max<std::size_t>(3 * capacity_ + weight_capacity_, 16));
    for (unsigned g = 0; g < 4; ++g) track_joint_[g] = other.track_joint_[g];
    for (unsigned g = 0; g < 3; ++g) {
        lane_mask_[g] = other.lane_mask_[g];
        lane_start_[g] = other.lane_start_[g];
    }
    const std::size_t components = sampler::padded_length(layout_.components);
    const std::size_t rotations = sampler::padded_length(layout_.h.varying[impl::cc::group_rotation]);
    range_min_ = copy(other.range_min_, components);
    range_ext_ = copy(other.range_ext_, components);
    range_level_ = other.range_level_;
    rotation_min_ = copy(other.rotation_min_, 4 * rotations);
    rotation_ext_ = copy(other.rotation_ext_, 4 * rotations);
    rotation_level_ = other.rotation_level_;
    tables_.resize(other.tables_.size());
    for (std::size_t t = 0; t < tables_.size(); ++t) {
        tables_[t].segment = other.tables_[t].segment;
        tables_[t].record_bits = other.tables_[t].record_bits;
        tables_[t].scale = copy(other.tables_[t].scale, components);
        tables_[t].bias = copy(other.tables_[t].bias, components);
        tables_[t].drop_f = copy(other.tables_[t].drop_f, rotations);
        tables_[t].offset = other.tables_[t].offset;
        tables_[t].mask = other.tables_[t].mask;
        tables_[t].drop = other.tables_[t].drop;
        tables_[t].top = other.tables_[t].top;
        tables_[t].track_width = other.tables_[t].track_width;
    }
    next_table_ = other.next_table_;
    compact_ = copy(other.compact_, 2 * components);
    rotations_ = copy(other.rotations_, 8 * rotations);
    return *this;
}

namespace impl {
/// The null checks of compressed_sampling_job (validate and run).
inline status check_job(const compressed_sampling_job& job) {
    return check_sampling_members(job, "compressed_sampling_job");
}
} // namespace impl

inline status compressed_sampling_job::validate() const {
    if (status st = impl::check_job(*this); !st) return st;
    return impl::compressed_sampler::check(*clip, *skeleton);
}

inline status compressed_sampling_job::run() const {
    if (status st = impl::check_job(*this); !st) return st;
    return impl::compressed_sampler::sample<impl::lanes::widest, impl::lanes::native>(*clip, *skeleton, time, *context,
                                                                                      *output);
}

} // namespace keyblend

#include "compress_job.impl.hpp"
