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
// decodes one. Decoding reads every varying component of the sample's record: in component order
// the bit offsets are a prefix sum of the widths, computed once per segment (two segments'
// tables are kept), so a component costs a 4-byte load, a shift, a mask and a multiply-add, 16 or
// 8 at a time with AVX-512 / AVX2 gathers. Interpolation is one pass over every joint, all
// components, with the pose kernels' lane types: translation and scale lerp, rotation nlerp, each
// lane's step flag zeroing its alpha.
#pragma once

#include "quat_lanes.hpp"

#include <cstring>

namespace keyblend {
namespace impl {

struct compressed_sampler {
    using context = compressed_sampling_context;
    static constexpr unsigned stream_count = local_pose::stream_count;

    static std::size_t sample_floats(const context& c) { return stream_count * c.capacity_ + c.weight_capacity_; }
    static std::size_t compact_length(std::size_t n) { return (n + 15) / 16 * 16 + 16; }

    static status bind(context& c, const compressed_clip& clip, const skeleton& s) {
        const cc::clip_layout& l = clip.layout_;
        if (l.h.joint_count != s.size() || l.h.morph_weight_total != s.morph_weight_total() ||
            l.h.skeleton_hash != skeleton_fingerprint(s))
            return make_error(errc::size_mismatch,
                              "compressed clip '" + std::string(clip.name()) + "' was compressed for another skeleton (" +
                                  std::to_string(l.h.joint_count) + " joints, " + std::to_string(l.h.morph_weight_total) +
                                  " morph weights; this one has " + std::to_string(s.size()) + " and " +
                                  std::to_string(s.morph_weight_total()) +
                                  (l.h.joint_count == s.size() ? ", and differs in parents, names or bind pose)" : ")"));
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
        for (unsigned g = 0; g < 3; ++g) c.lane_track_[g].assign(c.padded_, -1);
        c.lane_track_[3].assign(c.weights_, -1);

        // The components that do not vary, in both samples; the lanes that do, and step flags.
        float* first = c.samples_[0].get();
        float* steps = c.steps_.get();
        const std::size_t cap = c.capacity_;
        const unsigned char* constants = c.data_ + l.h.off_constants;
        std::size_t next_constant = 0;
        const auto constant = [&] { return cc::read<float>(constants + 4 * next_constant++); };
        std::int32_t next_track[4] = {0, 0, 0, 0};
        for (std::size_t j = 0; j < c.padded_; ++j) {
            transform value; // padding lanes: the identity
            std::uint16_t kinds = 0;
            if (j < s.size()) {
                value = s.bind_transforms()[j];
                kinds = cc::joint_kinds(l, c.data_, j);
            }
            const unsigned t_kind = kinds & 3u, r_kind = (kinds >> 2) & 3u, s_kind = (kinds >> 4) & 3u;
            // (One read per statement: the order of a call's arguments is unspecified.)
            const auto vector = [&] {
                const float x = constant(), y = constant(), z = constant();
                return glm::vec3(x, y, z);
            };
            if (t_kind == cc::kind_constant) value.translation = vector();
            if (r_kind == cc::kind_constant) {
                const float x = constant(), y = constant(), z = constant(), w = constant();
                value.rotation = make_quat(w, x, y, z);
            }
            if (s_kind == cc::kind_constant) value.scale = vector();
            const unsigned kind_of[3] = {t_kind, r_kind, s_kind};
            for (unsigned g = 0; g < 3; ++g) {
                if (kind_of[g] == cc::kind_varying) c.lane_track_[g][j] = next_track[g]++;
                steps[g * cap + j] = (kinds >> (6 + g)) & 1u ? 0.0f : 1.0f;
            }
            const float v[stream_count] = {value.translation.x, value.translation.y, value.translation.z,
                                           value.rotation.x,    value.rotation.y,    value.rotation.z,
                                           value.rotation.w,    value.scale.x,       value.scale.y,
                                           value.scale.z};
            for (unsigned k = 0; k < stream_count; ++k) first[k * cap + j] = v[k];
        }
        for (std::size_t j = c.padded_; j < cap; ++j) { // (stream tails: never read, kept defined)
            for (unsigned k = 0; k < stream_count; ++k) first[k * cap + j] = 0.0f;
            for (unsigned g = 0; g < 3; ++g) steps[g * cap + j] = 1.0f;
        }
        float* weights = first + stream_count * cap;
        for (std::size_t w = 0; w < c.weight_capacity_; ++w) {
            float value = 0.0f;
            float step = 1.0f;
            if (w < c.weights_) {
                const unsigned char k = c.data_[l.h.off_weight_kinds + w];
                value = s.bind_morph_weights()[w];
                if ((k & 3u) == cc::kind_constant) value = constant();
                if ((k & 3u) == cc::kind_varying) c.lane_track_[3][w] = next_track[3]++;
                if ((k >> 2) & 1u) step = 0.0f;
            }
            weights[w] = value;
            steps[3 * cap + w] = step;
        }
        std::memcpy(c.samples_[1].get(), first, floats * sizeof(float));

        const std::size_t components = compact_length(l.components);
        for (context::segment_table& t : c.tables_) {
            t.segment = -1;
            t.scale = allocate_aligned_floats(components);
            t.bias = allocate_aligned_floats(components);
            t.offset.assign(components, 0);
            t.mask.assign(components, 0);
            t.drop.assign(compact_length(l.h.varying[cc::group_rotation]), 3);
            std::fill(t.scale.get(), t.scale.get() + components, 0.0f);
            std::fill(t.bias.get(), t.bias.get() + components, 0.0f);
        }
        c.next_table_ = 0;
        c.compact_ = allocate_aligned_floats(components);
        std::fill(c.compact_.get(), c.compact_.get() + components, 0.0f);
        const std::size_t rotations = compact_length(l.h.varying[cc::group_rotation]);
        c.rotations_ = allocate_aligned_floats(4 * rotations);
        std::fill(c.rotations_.get(), c.rotations_.get() + 4 * rotations, 0.0f);
        return {};
    }

    static bool is_bound(const context& c, const compressed_clip& clip, const skeleton& s) {
        return c.data_ == clip.data_ && c.data_ != nullptr && c.skeleton_ == &s && c.joints_ == s.size() &&
               c.weights_ == s.morph_weight_total() && c.layout_.h.size == clip.layout_.h.size;
    }

    /// The decoding table of segment `seg`, built into one of the context's two when neither holds
    /// it.
    static const context::segment_table& table(context& c, std::uint32_t seg) {
        for (const context::segment_table& t : c.tables_)
            if (t.segment == static_cast<std::int64_t>(seg)) return t;
        context::segment_table& t = c.tables_[c.next_table_];
        c.next_table_ ^= 1u;
        const cc::clip_layout& l = c.layout_;
        const unsigned char* meta = c.data_ + l.h.off_meta + std::size_t(seg) * l.meta_stride;
        const std::uint64_t bits = cc::for_each_code(
            l, c.data_, meta,
            [&](std::uint32_t k, const cc::component_code& code) {
                t.offset[k] = code.width; // (the prefix sum follows)
                t.mask[k] = (1u << code.width) - 1u;
                t.bias[k] = code.bias;
                t.scale[k] = code.scale;
            },
            [&](std::uint32_t i, unsigned drop) { t.drop[i] = static_cast<unsigned char>(drop); });
        std::uint32_t at = 0;
        for (std::uint32_t k = 0; k < l.components; ++k) {
            const std::uint32_t width = t.offset[k];
            t.offset[k] = at;
            at += width;
        }
        t.record_bits = static_cast<std::uint32_t>(bits);
        t.segment = seg;
        return t;
    }

    /// Decodes global sample `g` into sample buffer `b`.
    template <class V>
    static void decode(context& c, std::uint32_t g, unsigned b) {
        const cc::clip_layout& l = c.layout_;
        const std::uint32_t seg = g / l.h.segment_length;
        const context::segment_table& t = table(c, seg);
        const std::uint64_t first_bit = std::uint64_t(g - seg * l.h.segment_length) * t.record_bits;
        const unsigned char* data =
            c.data_ + l.h.off_data + cc::read<std::uint32_t>(c.data_ + l.h.off_segments + 4ull * seg);
        float* compact = c.compact_.get();
        decode_components<V>(data, static_cast<std::uint32_t>(first_bit), t, compact, l.components);

        // Rotations: the dropped component rebuilt, then x, y, z, w.
        const std::uint32_t nr = l.h.varying[cc::group_rotation];
        const std::size_t stride = compact_length(nr);
        float* rot = c.rotations_.get();
        const float* kept = compact + l.component_base[cc::group_rotation];
        for (std::uint32_t i = 0; i < nr; ++i) {
            const glm::quat q = cc::rebuild_rotation(kept[i], kept[nr + i], kept[2 * nr + i], t.drop[i]);
            rot[i] = q.x;
            rot[stride + i] = q.y;
            rot[2 * stride + i] = q.z;
            rot[3 * stride + i] = q.w;
        }

        // Into the sample's pose layout.
        float* out = c.samples_[b].get();
        const std::size_t cap = c.capacity_;
        const std::uint32_t nt = l.h.varying[cc::group_translation], ns = l.h.varying[cc::group_scale];
        const float* translations = compact + l.component_base[cc::group_translation];
        const float* scales = compact + l.component_base[cc::group_scale];
        for (std::size_t j = 0; j < c.joints_; ++j) {
            if (const std::int32_t i = c.lane_track_[0][j]; i >= 0)
                for (unsigned k = 0; k < 3; ++k) out[k * cap + j] = translations[k * nt + std::size_t(i)];
            if (const std::int32_t i = c.lane_track_[1][j]; i >= 0)
                for (unsigned k = 0; k < 4; ++k) out[(3 + k) * cap + j] = rot[k * stride + std::size_t(i)];
            if (const std::int32_t i = c.lane_track_[2][j]; i >= 0)
                for (unsigned k = 0; k < 3; ++k) out[(7 + k) * cap + j] = scales[k * ns + std::size_t(i)];
        }
        float* weights = out + stream_count * cap;
        const float* decoded_weights = compact + l.component_base[cc::group_weight];
        for (std::size_t w = 0; w < c.weights_; ++w)
            if (const std::int32_t i = c.lane_track_[3][w]; i >= 0) weights[w] = decoded_weights[i];
        c.sample_of_[b] = g;
    }

    /// Every component of one record: compact[k] = bias + q * scale.
    template <class V>
    static void decode_components(const unsigned char* data, std::uint32_t first_bit, const context::segment_table& t,
                                  float* compact, std::uint32_t n) {
        for (std::uint32_t k = 0; k < n; ++k) {
            const std::uint32_t bit = first_bit + t.offset[k];
            const std::uint32_t word = cc::read<std::uint32_t>(data + (bit >> 3));
            const std::uint32_t q = (word >> (bit & 7u)) & t.mask[k];
            compact[k] = t.bias[k] + static_cast<float>(q) * t.scale[k];
        }
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
        const auto lerp_stream = [&](unsigned s, V w) KEYBLEND_LAMBDA_INLINE {
            const V va = V::load(a + s * cap + i), vb = V::load(b + s * cap + i);
            select(w == zero, va, va + (vb - va) * w).store(first_out + i + s * out_stride);
        };
        lerp_stream(0, at[0]);
        lerp_stream(1, at[0]);
        lerp_stream(2, at[0]);
        const quat_lanes<V> qa{V::load(a + 6 * cap + i), V::load(a + 3 * cap + i), V::load(a + 4 * cap + i),
                               V::load(a + 5 * cap + i)};
        const quat_lanes<V> qb{V::load(b + 6 * cap + i), V::load(b + 3 * cap + i), V::load(b + 4 * cap + i),
                               V::load(b + 5 * cap + i)};
        const quat_lanes<V> q = impl::nlerp(qa, qb, at[1]);
        q.x.store(first_out + i + 3 * out_stride);
        q.y.store(first_out + i + 4 * out_stride);
        q.z.store(first_out + i + 5 * out_stride);
        q.w.store(first_out + i + 6 * out_stride);
        lerp_stream(7, at[2]);
        lerp_stream(8, at[2]);
        lerp_stream(9, at[2]);
    }

    template <class Wide, class Narrow = Wide>
    static status sample(const compressed_clip& clip, const skeleton& s, float time, context& c, local_pose& out) {
        if (clip.empty()) return make_error(errc::invalid_argument, "sample_clip: the compressed clip is empty");
        if (!is_bound(c, clip, s))
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
        if (have0 < 0) {
            have0 = have1 == 0 ? 1 : 0;
            decode<Narrow>(c, p.g0, static_cast<unsigned>(have0));
            if (p.g1 == p.g0) have1 = have0;
        }
        if (have1 < 0) {
            have1 = 1 - have0;
            decode<Narrow>(c, p.g1, static_cast<unsigned>(have1));
        }
        const float* a = c.samples_[have0].get();
        const float* b = c.samples_[have1].get();
        out.resize(s.size());
        const float alpha = p.alpha;
        lanes::for_each_lanes<Wide, Narrow>(0, c.padded_, [&](auto lane, std::size_t i) KEYBLEND_LAMBDA_INLINE {
            interpolate<decltype(lane)>(c, a, b, alpha, i, out);
        });
        out.resize_morph_weights(c.weights_);
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
    const std::size_t floats = std::max<std::size_t>(impl::compressed_sampler::sample_floats(*this), 16);
    for (unsigned b = 0; b < 2; ++b) {
        samples_[b] = copy(other.samples_[b], floats);
        sample_of_[b] = other.sample_of_[b];
    }
    steps_ = copy(other.steps_, std::max<std::size_t>(3 * capacity_ + weight_capacity_, 16));
    for (unsigned g = 0; g < 4; ++g) lane_track_[g] = other.lane_track_[g];
    const std::size_t components = impl::compressed_sampler::compact_length(layout_.components);
    for (unsigned t = 0; t < 2; ++t) {
        tables_[t].segment = other.tables_[t].segment;
        tables_[t].record_bits = other.tables_[t].record_bits;
        tables_[t].scale = copy(other.tables_[t].scale, components);
        tables_[t].bias = copy(other.tables_[t].bias, components);
        tables_[t].offset = other.tables_[t].offset;
        tables_[t].mask = other.tables_[t].mask;
        tables_[t].drop = other.tables_[t].drop;
    }
    next_table_ = other.next_table_;
    compact_ = copy(other.compact_, components);
    rotations_ = copy(other.rotations_, 4 * impl::compressed_sampler::compact_length(layout_.h.varying[1]));
    return *this;
}

inline status sample_clip(const compressed_clip& c, const skeleton& s, float time,
                          compressed_sampling_context& context, local_pose& out) {
    return impl::compressed_sampler::sample<impl::lanes::widest, impl::lanes::native>(c, s, time, context, out);
}

} // namespace keyblend

#include "compress_job.impl.hpp"
