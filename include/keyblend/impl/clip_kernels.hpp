// keyblend — the clip sampler (sampling_job, clip.hpp): the key intervals a sampling_context caches,
// refreshed where the time left them and interpolated a lane block of joints at a time. Internal;
// included by clip.impl.hpp, or by the compiled kernels (keyblend/kernels.hpp).
//
// SPDX-License-Identifier: MIT
//
// How it is fast. For every joint and component (translation, rotation, scale) the context caches
// the key interval [lo, hi) around the last time sampled, with its two key values and the time
// step dt (0 where the value is constant: before the first key, after the last, step mode, no
// track). A frame checks, eight joints at a time, that the new time is still inside each cached
// interval; only the (few) components whose interval was left go back to their track, through a
// cursor, so forward playback touches each key once; lanes keyed at the same times refresh
// together, a block at a time, with one key search per frame for all the blocks and components
// that share those times (the common export: every track baked at the same frames). Then every
// component is interpolated from the cache with the lane kernels, eight joints at a time,
// straight into the pose's streams. The
// interval's alpha is `(t - lo) * (1 / (hi - lo))`, which differs from locate_keys' quotient by at
// most an ulp, so the results are sample_track's to float rounding (and exactly its keys at key
// times, where alpha is 0).
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_CLIP_KERNELS_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_CLIP_KERNELS_HPP)
#undef KEYBLEND_PASS_GUARD_CLIP_KERNELS_HPP
#else
#define KEYBLEND_PASS_GUARD_CLIP_KERNELS_HPP
#endif

#include "simd/quat.hpp"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {

struct clip_sampler {
    /// sample() below on a context's state (the tests run each lane path this way).
    template <class Wide, class Narrow = Wide>
    static status sample(const clip& cl, const skeleton& s, float time, sampling_context& c, local_pose& out) {
        return sample<Wide, Narrow>(cl, s, time, sampling_access::state(c), out);
    }
    enum component : unsigned { translation = 0, rotation = 1, scale = 2 };
    // Streams per component: lo, hi, 1 / (hi - lo) or 0, value 0 (dim floats), value 1 (dim floats).
    static constexpr unsigned dims[3] = {3, 4, 3};
    static constexpr unsigned base[3] = {0, 9, 20};
    // One more stream: 1 where the joint's rotation track interpolates by nlerp, 0 where by
    // slerp (or from matrix keys), -1 where the rotation never interpolates (no track, padding):
    // alpha is 0 there, where both interpolators give the first value, so either serves.
    static constexpr unsigned nlerp_stream = 29;
    // Cubic splines (only in a context whose clip has some, sampling_context::cubic_): per
    // component, 1 where the joint's track is a cubic spline, else 0; then per component the
    // interval's tangents m0 = out-tangent(first) * (hi - lo) and m1 = in-tangent(second) *
    // (hi - lo), dim floats each.
    static constexpr unsigned cubic_stream = 30;
    static constexpr unsigned tangent_base[3] = {33, 39, 47};
    static constexpr unsigned stream_count = sampling_state::stream_count;

    static float* stream(sampling_state& c, unsigned i) {
        return c.streams_.get() + static_cast<std::size_t>(i) * c.capacity_;
    }
    static const float* stream(const sampling_state& c, unsigned i) {
        return c.streams_.get() + static_cast<std::size_t>(i) * c.capacity_;
    }

    static void components(const glm::vec3& v, float* out) {
        out[0] = v.x;
        out[1] = v.y;
        out[2] = v.z;
    }
    static void components(const glm::quat& q, float* out) { // stream order x, y, z, w
        out[0] = q.x;
        out[1] = q.y;
        out[2] = q.z;
        out[3] = q.w;
    }

    template <unsigned Comp>
    static KEYBLEND_FORCE_INLINE void set_interval(sampling_state& c, std::size_t j, float lo,
                                                   float hi, float dt, const float* v0,
                                                   const float* v1) {
        float* p = c.streams_.get() + std::size_t(base[Comp]) * c.capacity_ + j;
        const std::size_t cap = c.capacity_;
        p[0] = lo;
        p[cap] = hi;
        p[2 * cap] = dt;
        for (unsigned k = 0; k < dims[Comp]; ++k) {
            p[(3 + k) * cap] = v0[k];
            p[(3 + dims[Comp] + k) * cap] = v1[k];
        }
    }
    static void set_interval(sampling_state& c, unsigned comp, std::size_t j, float lo, float hi,
                             float dt, const float* v0, const float* v1) {
        if (comp == translation) set_interval<translation>(c, j, lo, hi, dt, v0, v1);
        else if (comp == rotation) set_interval<rotation>(c, j, lo, hi, dt, v0, v1);
        else set_interval<scale>(c, j, lo, hi, dt, v0, v1);
    }

    template <unsigned Comp>
    static void set_tangents(sampling_state& c, std::size_t j, const float* m0, const float* m1) {
        float* p = c.streams_.get() + std::size_t(tangent_base[Comp]) * c.capacity_ + j;
        const std::size_t cap = c.capacity_;
        for (unsigned k = 0; k < dims[Comp]; ++k) {
            p[k * cap] = m0[k];
            p[(dims[Comp] + k) * cap] = m1[k];
        }
    }

    /// A value that holds at every time.
    static void set_constant(sampling_state& c, unsigned comp, std::size_t j, const float* v) {
        set_interval(c, comp, j, -INFINITY, INFINITY, 0.0f, v, v);
    }

    static void set_bind(sampling_state& c, unsigned comp, std::size_t j, const transform& bind) {
        float v[4];
        if (comp == translation) components(bind.translation, v);
        else if (comp == rotation) components(bind.rotation, v);
        else components(bind.scale, v);
        set_constant(c, comp, j, v);
    }

    /// Whether every lane of block `block` (pose_lane_block joints) holds its component `comp` at
    /// every time: an interval of (-inf, +inf), compared by bits (-ffast-math may fold a
    /// comparison with infinity).
    static bool block_constant(const sampling_state& c, unsigned comp, std::size_t block) {
        const float* lo = stream(c, base[comp]) + block * pose_lane_block;
        const float* hi = stream(c, base[comp] + 1) + block * pose_lane_block;
        const std::uint32_t minus_inf = 0xFF800000u, plus_inf = 0x7F800000u;
        for (std::size_t k = 0; k < pose_lane_block; ++k) {
            std::uint32_t a, b;
            std::memcpy(&a, lo + k, sizeof a);
            std::memcpy(&b, hi + k, sizeof b);
            if (a != minus_inf || b != plus_inf) return false;
        }
        return true;
    }

    /// Whether the lanes [i, i + V::width) of component `comp` are all settled (see settled_):
    /// their value is value 0, with no refresh and no interpolation.
    template <class V>
    static KEYBLEND_FORCE_INLINE bool lanes_settled(const sampling_state& c, unsigned comp, std::size_t i) {
        constexpr std::size_t blocks = V::width > pose_lane_block ? V::width / pose_lane_block : 1;
        const std::uint8_t* settled = c.settled_.data() + (i / pose_lane_block) * 3 + comp;
        bool all = true;
        for (std::size_t b = 0; b < blocks; ++b) all &= settled[3 * b] != 0;
        return all;
    }

    /// The keys around `time` (not NaN) in `tr` (not empty), from the cursor: the interval
    /// [lo, hi) in which they hold, dt, and their indices. Same keys as locate_keys.
    template <class Value>
    static void locate(const track<Value, float>& tr, float time, std::size_t& cursor, float& lo,
                       float& hi, float& dt, std::size_t& first, std::size_t& second) {
        const std::size_t after = keys_at_or_before_from(tr.times().data(), tr.size(), time, cursor);
        interval_at(tr, after, lo, hi, dt, first, second);
    }

    /// locate's result from `after`, the number of keys at or before the time.
    template <class Value>
    static KEYBLEND_FORCE_INLINE void interval_at(const track<Value, float>& tr, std::size_t after, float& lo,
                                                  float& hi, float& dt, std::size_t& first, std::size_t& second) {
        const float* times = tr.times().data();
        const std::size_t n = tr.size();
        if (n == 1) { // one key: it holds at every time (the same value on both sides of its time)
            first = second = 0;
            lo = -INFINITY;
            hi = INFINITY;
            dt = 0.0f;
        } else if (after == 0) { // before the first key: it holds until its time
            first = second = 0;
            lo = -INFINITY;
            hi = times[0];
            dt = 0.0f;
        } else if (after >= n) { // at or after the last key: it holds for ever
            first = second = n - 1;
            lo = times[n - 1];
            hi = INFINITY;
            dt = 0.0f;
        } else {
            first = after - 1;
            second = after;
            lo = times[first];
            hi = times[second];
            // The reciprocal of the span, so that a frame multiplies instead of dividing.
            dt = (tr.mode() == interpolation::step || !(hi > lo)) ? 0.0f : 1.0f / (hi - lo);
        }
    }

    template <unsigned Comp, class Value>
    static KEYBLEND_FORCE_INLINE void refresh_track(sampling_state& c, std::size_t j,
                                                    const track<Value, float>& tr, float time,
                                                    const transform& bind) {
        if (tr.empty()) {
            set_bind(c, Comp, j, bind);
            return;
        }
        float lo, hi, dt, v0[4], v1[4];
        std::size_t first, second;
        locate(tr, time, c.cursors_[3 * j + Comp], lo, hi, dt, first, second);
        components(tr.value(first), v0);
        components(tr.value(second), v1);
        set_interval<Comp>(c, j, lo, hi, dt, v0, v1);
        if (tr.mode() == interpolation::cubic_spline && c.cubic_) refresh_tangents<Comp>(c, j, tr, first, second, hi - lo);
    }

    /// A cubic spline's tangents for the interval of keys first, second (out of line, so that
    /// the refresh of the other modes stays small enough to inline).
    template <unsigned Comp, class Value>
    static KEYBLEND_NOINLINE void refresh_tangents(sampling_state& c, std::size_t j, const track<Value, float>& tr,
                                                   std::size_t first, std::size_t second, float span) {
        float m0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, m1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        // (Tangents of a track changed since bind, or invalid, count as zero.)
        if (first != second && tr.out_tangents().size() == tr.size() && tr.in_tangents().size() == tr.size()) {
            components(tr.out_tangents()[first] * span, m0);
            components(tr.in_tangents()[second] * span, m1);
        }
        set_tangents<Comp>(c, j, m0, m1);
    }

    /// All three components of a matrix channel, from its keys split into T, R, S.
    static void refresh_matrix(sampling_state& c, std::size_t j, const matrix_track<float>& tr,
                               float time) {
        float lo, hi, dt;
        std::size_t first, second;
        locate(tr, time, c.cursors_[3 * j], lo, hi, dt, first, second);
        const transform a = to_transform(tr.value(first));
        const transform b = second == first ? a : to_transform(tr.value(second));
        float v0[4], v1[4];
        components(a.translation, v0);
        components(b.translation, v1);
        set_interval(c, translation, j, lo, hi, dt, v0, v1);
        components(a.rotation, v0);
        components(b.rotation, v1);
        set_interval(c, rotation, j, lo, hi, dt, v0, v1);
        components(a.scale, v0);
        components(b.scale, v1);
        set_interval(c, scale, j, lo, hi, dt, v0, v1);
    }

    template <unsigned Comp>
    using track_of = std::conditional_t<Comp == rotation, rotation_track<float>, position_track<float>>;

    static const track_of<translation>& component_track(const channel& ch, std::integral_constant<unsigned, translation>) { return ch.translation; }
    static const track_of<rotation>& component_track(const channel& ch, std::integral_constant<unsigned, rotation>) { return ch.rotation; }
    static const track_of<scale>& component_track(const channel& ch, std::integral_constant<unsigned, scale>) { return ch.scale; }

    /// The track a (joint, component) samples, found once at bind time: nullptr for none (the
    /// bind pose), the matrix track for every component of a matrix channel.
    template <unsigned Comp>
    static const void* track_for(const channel& ch) {
        if (ch.has_matrix()) return &ch.matrix;
        const track_of<Comp>& tr = component_track(ch, std::integral_constant<unsigned, Comp>{});
        return tr.empty() ? nullptr : &tr;
    }

    template <unsigned Comp>
    static void refresh(sampling_state& c, const skeleton& s, std::size_t j, float time) {
        if (j >= c.joint_count_) return; // padding: constant, never refreshed
        const void* tr = c.tracks_[3 * j + Comp];
        if (!tr) set_bind(c, Comp, j, s.bind_transforms()[j]);
        else if (c.matrix_[j]) refresh_matrix(c, j, *static_cast<const matrix_track<float>*>(tr), time);
        else refresh_track<Comp>(c, j, *static_cast<const track_of<Comp>*>(tr), time, s.bind_transforms()[j]);
    }

    /// Where x, y, z, w sit in a glm::quat's memory (GLM_FORCE_QUAT_DATA_WXYZ moves w first).
    static unsigned quat_slot(unsigned component) {
        static const glm::quat q = glm::identity<glm::quat>();
        const float* members[4] = {&q.x, &q.y, &q.z, &q.w};
        return static_cast<unsigned>(members[component] - reinterpret_cast<const float*>(&q));
    }

    /// Refreshes lanes `lanes_mask` of [i, i + V::width), a block whose animated lanes all key
    /// component Comp at the same times (`sampling_context::shared_`): one key search for all of
    /// them, their keys loaded and transposed into the cache a vector at a time. With them the
    /// lanes `subset_lanes`, keyed at some of their times (`sampling_context::subset_`): their
    /// keys from the same search, their intervals their own.
    template <unsigned Comp, class V>
    static void refresh_shared(sampling_state& c, const skeleton& s, std::size_t i, unsigned lanes_mask,
                               unsigned subset_lanes, float time) {
        constexpr unsigned dim = dims[Comp];
        const std::size_t lead_joint = i + lanes::lowest_set_bit(lanes_mask);
        const auto& lead = *static_cast<const track_of<Comp>*>(c.tracks_[3 * lead_joint + Comp]);
        const std::size_t n = lead.size();
        if (n == 0) return; // (changed since bind; the lanes keep their cache until reset())
        // One search per group of blocks and components keyed at the same times (a common export:
        // every track baked at the same frames), its result reused by the rest of the group this
        // frame. (A result past this track's end, from keys changed since bind, is searched anew.)
        const std::size_t slot = (i / pose_lane_block) * 3 + Comp;
        sampling_state::found_keys& found = c.shared_found_[c.shared_group_[slot]];
        if (!found.searched || !(found.time == time) || found.second >= n) {
            locate(lead, time, c.shared_cursors_[c.shared_group_[slot]], found.lo, found.hi, found.inv,
                   found.first, found.second);
            found.time = time;
            found.searched = true;
        }
        const float lo = found.lo, hi = found.hi, inv = found.inv;
        const std::size_t first = found.first, second = found.second;
        static const float unused[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        const float* key0[V::width];
        const float* key1[V::width];
        for (unsigned lane = 0; lane < V::width; ++lane) key0[lane] = key1[lane] = unused;
        unsigned take = 0;
        for (unsigned m = lanes_mask; m; m &= m - 1u) {
            const unsigned lane = lanes::lowest_set_bit(m);
            const std::size_t j = i + lane;
            const auto& values = static_cast<const track_of<Comp>*>(c.tracks_[3 * j + Comp])->values();
            // The keys were checked equal at bind time; a clip changed since (without reset())
            // still stays in bounds: that lane searches its own track.
            if (values.size() != n) {
                refresh<Comp>(c, s, j, time);
                continue;
            }
            key0[lane] = reinterpret_cast<const float*>(values.data() + first);
            key1[lane] = reinterpret_cast<const float*>(values.data() + second);
            take |= 1u << lane;
        }
        // Subset lanes: the number of their keys at or before `time` from the lead's (whose
        // interval lies within theirs), then their interval as locate gives it.
        alignas(64) float lane_lo[V::width], lane_hi[V::width], lane_inv[V::width];
        V::set1(lo).store(lane_lo);
        V::set1(hi).store(lane_hi);
        V::set1(inv).store(lane_inv);
        unsigned own = 0;
        if (subset_lanes) {
            const std::size_t after = first != second ? second : first == 0 ? 0 : n;
            for (unsigned m = subset_lanes; m; m &= m - 1u) {
                const unsigned lane = lanes::lowest_set_bit(m);
                const std::size_t j = i + lane;
                const auto& tr = *static_cast<const track_of<Comp>*>(c.tracks_[3 * j + Comp]);
                const std::uint32_t* keys = c.subset_keys_.data() + c.subset_at_[3 * j + Comp];
                // Changed since bind (without reset()): the lane searches its own track.
                if (keys[0] != n || tr.size() != keys[1 + n]) {
                    refresh<Comp>(c, s, j, time);
                    continue;
                }
                std::size_t f, g;
                interval_at(tr, keys[1 + after], lane_lo[lane], lane_hi[lane], lane_inv[lane], f, g);
                key0[lane] = reinterpret_cast<const float*>(tr.values().data() + f);
                key1[lane] = reinterpret_cast<const float*>(tr.values().data() + g);
                own |= 1u << lane;
            }
            take |= own;
        }
        if (!take) return;
        float* p = c.streams_.get() + std::size_t(base[Comp]) * c.capacity_ + i;
        const std::size_t cap = c.capacity_;
        // Playing forward, the new interval starts where the cached one ended: its first keys are
        // the cached second ones, already transposed, and only the new second keys are loaded.
        const std::size_t block = slot;
        const unsigned shift = static_cast<unsigned>(i % pose_lane_block);
        // (Not with subset lanes: shared_take_ leaves them out, so their take is never the one
        // cached.)
        const bool step_forward = first == c.shared_second_[block] && first != second &&
                                  ((unsigned{c.shared_take_[block]} >> shift) & ((1u << V::width) - 1u)) == take;
        V a[4], b[4];
        if (step_forward) {
            for (unsigned k = 0; k < dim; ++k) a[dim == 4 ? quat_slot(k) : k] = V::load(p + (3 + dim + k) * cap);
        } else {
            lanes::load_transposed<dim>(key0, a);
        }
        lanes::load_transposed<dim>(key1, b);
        // (The subset lanes' value 1 is not key `second`: they are left out of shared_take_.)
        c.shared_second_[block] = second;
        c.shared_take_[block] = static_cast<std::uint8_t>((c.shared_take_[block] & ~(((1u << V::width) - 1u) << shift)) |
                                                          ((take & ~own) << shift));
        const typename V::mask m = V::from_bits(take);
        const bool every_lane = take == (1u << V::width) - 1u;
        const auto put = [&](std::size_t stream_offset, V value) {
            float* q = p + stream_offset * cap;
            if (every_lane) value.store(q);
            else lanes::select(m, value, V::load(q)).store(q);
        };
        if (own) {
            put(0, V::load(lane_lo));
            put(1, V::load(lane_hi));
            put(2, V::load(lane_inv));
        } else {
            put(0, V::set1(lo));
            put(1, V::set1(hi));
            put(2, V::set1(inv));
        }
        for (unsigned k = 0; k < dim; ++k) {
            // Stream k holds component k (x, y, z[, w]); row `row` is where it sits in memory.
            const unsigned row = dim == 4 ? quat_slot(k) : k;
            put(3 + k, a[row]);
            put(3 + dim + k, b[row]);
        }
    }

    /// Refreshes the lanes of [i, i + V::width) whose interval for component Comp does not hold
    /// `t`.
    template <unsigned Comp, class V>
    static KEYBLEND_FORCE_INLINE void refresh_stale(sampling_state& c, const skeleton& s,
                                                    float time, V t, std::size_t i) {
        constexpr unsigned all = (1u << V::width) - 1u;
        const std::size_t slot = (i / pose_lane_block) * 3 + Comp;
        if (c.settled_[slot]) return;
        const V lo = V::load(stream(c, base[Comp]) + i);
        const V hi = V::load(stream(c, base[Comp] + 1) + i);
        unsigned stale = ~lanes::bits((lo <= t) & (t < hi)) & all;
        if (!stale) return;
        const unsigned shift = static_cast<unsigned>(i % pose_lane_block);
        const unsigned shared = (unsigned{c.shared_[slot]} >> shift) & all;
        if (shared && (stale & shared) == shared) {
            const unsigned subset = stale & (unsigned{c.subset_[slot]} >> shift) & all;
            refresh_shared<Comp, V>(c, s, i, shared, subset, time);
            stale &= ~(shared | subset);
        }
        while (stale) {
            const unsigned lane = lanes::lowest_set_bit(stale);
            stale &= stale - 1u;
            refresh<Comp>(c, s, i + lane, time);
        }
        // A block whose lanes are all constant now (one key each, or the bind pose) is done with.
        if (block_constant(c, Comp, i / pose_lane_block)) c.settled_[slot] = 1;
    }

    /// For each block of pose_lane_block joints and component: the largest set of lanes whose
    /// tracks (two keys or more) have the same key times and mode (matrix channels, keyed
    /// separately, never join); 0 when no two lanes agree. (The largest, not the first track's:
    /// an exporter that drops a few keys of one track must not split its block into lanes.)
    template <unsigned Comp>
    static void find_shared_keys(sampling_state& c) {
        for (std::size_t block = 0; block < c.padded_ / pose_lane_block; ++block) {
            const track_of<Comp>* tracks[pose_lane_block] = {};
            for (unsigned lane = 0; lane < pose_lane_block; ++lane) {
                const std::size_t j = block * pose_lane_block + lane;
                if (j >= c.joint_count_ || !c.tracks_[3 * j + Comp] || c.matrix_[j]) continue;
                const auto* tr = static_cast<const track_of<Comp>*>(c.tracks_[3 * j + Comp]);
                // (Cubic splines refresh lane by lane: their tangents are not cached in blocks.)
                if (tr->size() >= 2 && tr->mode() != interpolation::cubic_spline) tracks[lane] = tr;
            }
            unsigned best = 0;
            for (unsigned lead = 0; lead < pose_lane_block; ++lead) {
                if (!tracks[lead]) continue;
                unsigned same = 0;
                for (unsigned lane = lead; lane < pose_lane_block; ++lane)
                    if (tracks[lane] && tracks[lane]->mode() == tracks[lead]->mode() &&
                        tracks[lane]->times() == tracks[lead]->times())
                        same |= 1u << lane;
                if (lanes::set_bit_count(same) > lanes::set_bit_count(best)) best = same;
            }
            const bool several = best & (best - 1u);
            c.shared_[block * 3 + Comp] = static_cast<std::uint8_t>(several ? best : 0u);
        }
    }

    /// For each block and component with shared keys: the other lanes whose tracks (two keys or
    /// more, the same mode) are keyed at some of the shared lanes' times, an exporter's key
    /// reduction (subset_). Their intervals end where the shared lanes' do, so they go stale at
    /// the same times and are refreshed with them, from the shared search: subset_keys_ maps the
    /// number of shared keys at or before a time to the number of the lane's.
    template <unsigned Comp>
    static void find_subset_keys(sampling_state& c) {
        for (std::size_t block = 0; block < c.padded_ / pose_lane_block; ++block) {
            const std::size_t slot = block * 3 + Comp;
            const unsigned shared = c.shared_[slot];
            if (!shared) continue;
            const std::size_t lead_joint = block * pose_lane_block + lanes::lowest_set_bit(shared);
            const auto& lead = *static_cast<const track_of<Comp>*>(c.tracks_[3 * lead_joint + Comp]);
            const std::vector<float>& times = lead.times();
            unsigned subset = 0;
            for (unsigned lane = 0; lane < pose_lane_block; ++lane) {
                const std::size_t j = block * pose_lane_block + lane;
                if ((shared >> lane & 1u) || j >= c.joint_count_ || !c.tracks_[3 * j + Comp] || c.matrix_[j]) continue;
                const auto& tr = *static_cast<const track_of<Comp>*>(c.tracks_[3 * j + Comp]);
                if (tr.size() < 2 || tr.mode() != lead.mode()) continue;
                // Keys at some of the lead's times, in order: a merge, written where it will stay
                // (taken back when the lane has a key of its own). The lead's key count, then for
                // x = 0 .. n how many of the lane's keys are among the lead's first x.
                const std::size_t at = c.subset_keys_.size();
                c.subset_keys_.push_back(static_cast<std::uint32_t>(times.size()));
                c.subset_keys_.push_back(0);
                std::size_t k = 0;
                for (std::size_t x = 0; x < times.size(); ++x) {
                    if (k < tr.size() && tr.times()[k] == times[x]) ++k;
                    c.subset_keys_.push_back(static_cast<std::uint32_t>(k));
                }
                if (k != tr.size()) {
                    c.subset_keys_.resize(at);
                    continue;
                }
                subset |= 1u << lane;
                c.subset_at_[3 * j + Comp] = static_cast<std::uint32_t>(at);
            }
            c.subset_[slot] = static_cast<std::uint8_t>(subset);
        }
    }

    /// The key times and mode of the track that leads slot (block x component) `slot`; times null
    /// for a slot without shared keys.
    static void shared_lead_times(const sampling_state& c, std::size_t slot, unsigned comp,
                                  const std::vector<float>*& times, interpolation& mode) {
        times = nullptr;
        const unsigned m = c.shared_[slot];
        if (!m) return;
        const std::size_t j = (slot / 3) * pose_lane_block + lanes::lowest_set_bit(m);
        const void* tr = c.tracks_[3 * j + comp];
        if (comp == rotation) {
            const auto* r = static_cast<const track_of<rotation>*>(tr);
            times = &r->times();
            mode = r->mode();
        } else {
            const auto* v = static_cast<const track_of<translation>*>(tr);
            times = &v->times();
            mode = v->mode();
        }
    }

    /// shared_group_: each slot with shared keys joins the first slot before it whose lead track
    /// has the same key times and mode.
    static void find_key_groups(sampling_state& c) {
        const std::size_t slots = c.shared_.size();
        c.shared_group_.resize(slots);
        c.shared_found_.assign(slots, sampling_state::found_keys{false, 0.0f, 0.0f, 0.0f, 0.0f, 0, 0});
        std::vector<std::size_t> leads; // the groups' first slots
        for (std::size_t slot = 0; slot < slots; ++slot) {
            c.shared_group_[slot] = static_cast<std::uint32_t>(slot);
            const std::vector<float>* times;
            interpolation mode{};
            shared_lead_times(c, slot, static_cast<unsigned>(slot % 3), times, mode);
            if (!times) continue;
            bool joined = false;
            for (std::size_t g : leads) {
                const std::vector<float>* other;
                interpolation other_mode{};
                shared_lead_times(c, g, static_cast<unsigned>(g % 3), other, other_mode);
                if (other_mode == mode && (other == times || *other == *times)) {
                    c.shared_group_[slot] = static_cast<std::uint32_t>(g);
                    joined = true;
                    break;
                }
            }
            if (!joined) leads.push_back(slot);
        }
    }

    static void bind(sampling_state& c, const clip& cl, const skeleton& s) {
        c.clip_ = &cl;
        c.skeleton_ = &s;
        c.channels_ = cl.channels.data();
        c.channel_count_ = cl.channels.size();
        c.joint_count_ = s.size();
        c.padded_ = (s.size() + pose_lane_block - 1) / pose_lane_block * pose_lane_block;
        c.cubic_ = false;
        for (const channel& ch : cl.channels)
            if (!ch.has_matrix() && (ch.translation.mode() == interpolation::cubic_spline ||
                                     ch.rotation.mode() == interpolation::cubic_spline ||
                                     ch.scale.mode() == interpolation::cubic_spline))
                c.cubic_ = true;
        // The tangent streams only for a clip that has cubic splines (23 of the 53).
        const std::size_t streams = c.cubic_ ? stream_count : cubic_stream;
        if (aligned_stream_length(c.padded_) > c.capacity_ || !c.streams_ || streams * c.capacity_ > c.stream_floats_) {
            c.capacity_ = aligned_stream_length(c.padded_);
            c.stream_floats_ = streams * c.capacity_;
            c.streams_ = allocate_aligned_floats(c.stream_floats_);
        }
        c.bad_channel_ = error::no_index;
        c.channel_of_joint_.assign(s.size(), -1);
        for (std::size_t i = 0; i < cl.channels.size(); ++i) {
            const std::size_t j = cl.channels[i].joint;
            if (j < s.size()) c.channel_of_joint_[j] = static_cast<std::int32_t>(i);
            else if (c.bad_channel_ == error::no_index) c.bad_channel_ = i;
        }
        c.cursors_.assign(3 * s.size(), 0);
        c.tracks_.assign(3 * s.size(), nullptr);
        c.matrix_.assign(s.size(), 0);
        // Morph weights: a cursor per weight track of the channels whose joint has weights.
        c.morph_cursors_.assign(s.morph_weight_total(), track_cursor{});
        const transform identity;
        for (std::size_t j = 0; j < c.padded_; ++j) {
            const std::int32_t index = j < s.size() ? c.channel_of_joint_[j] : -1;
            const transform& rest = j < s.size() ? s.bind_transforms()[j] : identity;
            for (unsigned comp = 0; comp < 3; ++comp) set_bind(c, comp, j, rest);
            stream(c, nlerp_stream)[j] = -1.0f;
            if (c.cubic_)
                for (unsigned comp = 0; comp < 3; ++comp) stream(c, cubic_stream + comp)[j] = 0.0f;
            if (index < 0) continue;
            // An animated joint: an empty interval, so the first sample reads its tracks.
            for (unsigned comp = 0; comp < 3; ++comp) {
                stream(c, base[comp])[j] = INFINITY;
                stream(c, base[comp] + 1)[j] = -INFINITY;
            }
            const channel& ch = cl.channels[static_cast<std::size_t>(index)];
            c.tracks_[3 * j + translation] = track_for<translation>(ch);
            c.tracks_[3 * j + rotation] = track_for<rotation>(ch);
            c.tracks_[3 * j + scale] = track_for<scale>(ch);
            c.matrix_[j] = ch.has_matrix() ? 1 : 0;
            if (ch.has_matrix() || !ch.rotation.empty())
                stream(c, nlerp_stream)[j] = !ch.has_matrix() && ch.rotation.mode() == interpolation::nlerp ? 1.0f : 0.0f;
            if (!ch.has_matrix()) {
                if (!ch.translation.empty() && ch.translation.mode() == interpolation::cubic_spline)
                    stream(c, cubic_stream + translation)[j] = 1.0f;
                if (!ch.rotation.empty() && ch.rotation.mode() == interpolation::cubic_spline)
                    stream(c, cubic_stream + rotation)[j] = 1.0f;
                if (!ch.scale.empty() && ch.scale.mode() == interpolation::cubic_spline)
                    stream(c, cubic_stream + scale)[j] = 1.0f;
            }
        }
        c.shared_.assign(c.padded_ / pose_lane_block * 3, 0);
        c.shared_cursors_.assign(c.padded_ / pose_lane_block * 3, 0);
        c.shared_second_.assign(c.padded_ / pose_lane_block * 3, static_cast<std::size_t>(-1));
        c.shared_take_.assign(c.padded_ / pose_lane_block * 3, 0);
        find_shared_keys<translation>(c);
        find_shared_keys<rotation>(c);
        find_shared_keys<scale>(c);
        find_key_groups(c);
        c.subset_.assign(c.padded_ / pose_lane_block * 3, 0);
        c.subset_at_.assign(3 * c.padded_, 0);
        c.subset_keys_.clear();
        find_subset_keys<translation>(c);
        find_subset_keys<rotation>(c);
        find_subset_keys<scale>(c);
        // Blocks in the bind pose alone are settled now; those with one key after their first
        // refresh (refresh_stale).
        c.settled_.assign(c.padded_ / pose_lane_block * 3, 0);
        for (std::size_t block = 0; block < c.padded_ / pose_lane_block; ++block)
            for (unsigned comp = 0; comp < 3; ++comp)
                c.settled_[block * 3 + comp] = static_cast<std::uint8_t>(block_constant(c, comp, block) ? 1 : 0);
    }

    /// Every joint's morph weights: the bind pose's, and the channels' tracks where they have them
    /// (each sampled as sample_track does, from a cursor).
    static void sample_morph_weights(const clip& cl, const skeleton& s, float time, sampling_state& c,
                                     local_pose& out) {
        const std::vector<float>& bind = s.bind_morph_weights();
        if (out.morph_weights().size() != bind.size()) out.set_morph_layout(s);
        const span<float> w = out.morph_weights();
        std::copy(bind.begin(), bind.end(), w.begin());
        for (const channel& ch : cl.channels) {
            if (ch.morph_weights.empty() || ch.joint >= s.size()) continue;
            const std::size_t at = s.morph_weight_offset(ch.joint);
            const std::size_t n = std::min(ch.morph_weights.size(), s.morph_weight_count(ch.joint));
            for (std::size_t k = 0; k < n; ++k) {
                const float_track<float>& tr = ch.morph_weights[k];
                if (tr.empty()) continue;
                w[at + k] = sample_track(tr, time, c.morph_cursors_[at + k]);
            }
        }
    }

    static bool is_bound(const sampling_state& c, const clip& cl, const skeleton& s) {
        // The channels' address too: the context keeps pointers to their tracks.
        return c.clip_ == &cl && c.skeleton_ == &s && c.channels_ == cl.channels.data() &&
               c.channel_count_ == cl.channels.size() &&
               c.joint_count_ == s.size() && c.streams_;
    }

    /// Joints [i, i + V::width): interpolate the cached intervals at `time` into `out`.
    template <class V, bool Cubic>
    static KEYBLEND_FORCE_INLINE void interpolate_lanes(const sampling_state& c, float time,
                                                       std::size_t i, local_pose& out) {
        using lanes::bits;
        using lanes::select;
        // Every address first: a SIMD store may alias anything, so the context's and the pose's
        // pointers read after one would be read again.
        const float* const cache = c.streams_.get() + i;
        const std::size_t cap = c.capacity_;
        const auto at = [&](unsigned stream_index) { return cache + static_cast<std::size_t>(stream_index) * cap; };
        using S = local_pose;
        float* const first_out = out.data(S::translation_x);
        const std::size_t out_stride = static_cast<std::size_t>(out.data(S::translation_y) - first_out);
        const auto out_at = [&](S::stream s) { return first_out + i + static_cast<std::size_t>(s) * out_stride; };

        // Settled components (every lane constant) are their value 0: its loads alone.
        const bool settled[3] = {lanes_settled<V>(c, translation, i), lanes_settled<V>(c, rotation, i),
                                 lanes_settled<V>(c, scale, i)};

        const V t = V::set1(time), zero = V::set1(0.0f);
        V alpha[3];
        typename V::mask at_key[3];
        for (unsigned comp = 0; comp < 3; ++comp) {
            if (settled[comp]) {
                alpha[comp] = zero;
                at_key[comp] = V::from_bits((1u << V::width) - 1u);
                continue;
            }
            const V lo = V::load(at(base[comp]));
            const V inv_span = V::load(at(base[comp] + 2));
            // (clamp01 maps the NaN of an infinite lo times 0, and rounding, into [0, 1].)
            alpha[comp] = lanes::clamp01(select(inv_span > zero, (t - lo) * inv_span, zero));
            at_key[comp] = alpha[comp] == zero;
        }
        const unsigned r = base[rotation];
        const quat_lanes<V> qa{V::load(at(r + 6)), V::load(at(r + 3)), V::load(at(r + 4)), V::load(at(r + 5))};
        quat_lanes<V> qb = qa;
        quat_lanes<V> q = qa;
        if (!settled[rotation]) {
            qb = {V::load(at(r + 10)), V::load(at(r + 7)), V::load(at(r + 8)), V::load(at(r + 9))};
            // Each interpolator only where some lane uses it (lanes that never interpolate take
            // the one the others use).
            const V mode = V::load(at(nlerp_stream));
            const typename V::mask use_nlerp = mode > zero;
            const unsigned nlerp_lanes = bits(use_nlerp);
            if (!bits(mode == zero)) {
                q = nlerp(qa, qb, alpha[rotation]);
            } else {
                q = slerp(qa, qb, alpha[rotation]);
                if (nlerp_lanes) q = select(use_nlerp, nlerp(qa, qb, alpha[rotation]), q);
            }
        }
        // Cubic splines (a context whose clip has some: Cubic): the Hermite basis at alpha, where
        // some lane of the component uses it (exactly `a` at alpha 0, as the other modes).
        typename V::mask cubic[3];
        unsigned cubic_lanes[3] = {0, 0, 0};
        struct basis {
            V h00, h10, h01, h11;
        } h[3];
        if constexpr (Cubic) {
            for (unsigned comp = 0; comp < 3; ++comp) {
                if (settled[comp]) continue;
                cubic[comp] = (V::load(at(cubic_stream + comp)) != zero) & !at_key[comp];
                cubic_lanes[comp] = bits(cubic[comp]);
                if (!cubic_lanes[comp]) continue;
                const V s1 = alpha[comp], s2 = s1 * s1, s3 = s2 * s1;
                const V two = V::set1(2.0f), three = V::set1(3.0f);
                h[comp] = {two * s3 - three * s2 + V::set1(1.0f), s3 - two * s2 + s1, three * s2 - two * s3, s3 - s2};
            }
            if (cubic_lanes[rotation]) {
                const basis& b = h[rotation];
                const unsigned t0 = tangent_base[rotation], t1 = t0 + 4;
                const auto mix = [&](V a, V m0, V bb, V m1) KEYBLEND_LAMBDA_INLINE {
                    return a * b.h00 + m0 * b.h10 + bb * b.h01 + m1 * b.h11;
                };
                const quat_lanes<V> hq = normalize_or_identity(quat_lanes<V>{
                    mix(qa.w, V::load(at(t0 + 3)), qb.w, V::load(at(t1 + 3))),
                    mix(qa.x, V::load(at(t0)), qb.x, V::load(at(t1))),
                    mix(qa.y, V::load(at(t0 + 1)), qb.y, V::load(at(t1 + 1))),
                    mix(qa.z, V::load(at(t0 + 2)), qb.z, V::load(at(t1 + 2)))});
                q = select(cubic[rotation], hq, q);
            }
        }
        const S::stream vector_out[2][3] = {{S::translation_x, S::translation_y, S::translation_z},
                                            {S::scale_x, S::scale_y, S::scale_z}};
        for (unsigned v = 0; v < 2; ++v) {
            const unsigned comp = v == 0 ? translation : scale;
            for (unsigned k = 0; k < 3; ++k) {
                const V a = V::load(at(base[comp] + 3 + k));
                if (settled[comp]) {
                    a.store(out_at(vector_out[v][k]));
                    continue;
                }
                const V b = V::load(at(base[comp] + 6 + k));
                // keyblend::lerp: exactly `a` at alpha 0.
                V value = select(at_key[comp], a, a + (b - a) * alpha[comp]);
                if (Cubic && cubic_lanes[comp]) {
                    const basis& hb = h[comp];
                    const V m0 = V::load(at(tangent_base[comp] + k));
                    const V m1 = V::load(at(tangent_base[comp] + 3 + k));
                    value = select(cubic[comp], a * hb.h00 + m0 * hb.h10 + b * hb.h01 + m1 * hb.h11, value);
                }
                value.store(out_at(vector_out[v][k]));
            }
        }
        q.x.store(out_at(S::rotation_x));
        q.y.store(out_at(S::rotation_y));
        q.z.store(out_at(S::rotation_z));
        q.w.store(out_at(S::rotation_w));
    }

    /// Refreshes over Narrow lanes (a width that divides pose_lane_block, which the shared-key
    /// masks are per), interpolates over Wide lanes with a Narrow tail.
    template <class Wide, class Narrow = Wide>
    static status sample(const clip& cl, const skeleton& s, float time, sampling_state& c,
                         local_pose& out) {
        using V = Narrow;
        if (!is_bound(c, cl, s)) bind(c, cl, s);
        out.resize(s.size());
        // NaN samples the first keys, as locate_keys does; +inf is clamped so that the open end
        // of the last interval (hi = +inf) still contains it.
        // (Bit tests: under -ffast-math a comparison with infinity may be folded away.)
        if (is_nan(time)) time = -INFINITY;
        else if (!is_finite(time) && time > 0.0f) time = FLT_MAX;
        // Two passes: the scalar refreshes first, then the vector interpolation alone, so that
        // consecutive groups of joints overlap in the out-of-order window.
        const V t = V::set1(time);
        for (std::size_t i = 0; i < c.padded_; i += V::width) {
            refresh_stale<translation>(c, s, time, t, i);
            refresh_stale<rotation>(c, s, time, t, i);
            refresh_stale<scale>(c, s, time, t, i);
        }
        // (A clip without cubic splines gets a pass without their code, which would otherwise hold
        // registers and branches in every group of joints.)
        const auto interpolate = [&](auto cubic) KEYBLEND_LAMBDA_INLINE {
            lanes::for_each_lanes<Wide, Narrow>(0, c.padded_, [&](auto lane, std::size_t i) KEYBLEND_LAMBDA_INLINE {
                interpolate_lanes<decltype(lane), decltype(cubic)::value>(c, time, i, out);
            });
        };
        if (c.cubic_) interpolate(std::true_type{});
        else interpolate(std::false_type{});
        if (s.morph_weight_total() != 0 || !out.morph_weights().empty()) sample_morph_weights(cl, s, time, c, out);
        if (c.bad_channel_ == error::no_index) return {};
        return make_error(errc::out_of_range,
                          "clip '" + cl.name + "' channel " + std::to_string(c.bad_channel_) +
                              " (joint " + std::to_string(cl.channels[c.bad_channel_].joint) +
                              "): joint is out of range (" + std::to_string(s.size()) +
                              " joints); channel skipped",
                          c.bad_channel_);
    }
};

/// sampling_job::run, its checks made.
inline status run_job(const sampling_job& job) {
    if (status st = check_job(job); !st) return st;
    return clip_sampler::sample<lanes::widest, lanes::native>(*job.clip, *job.skeleton, job.time,
                                                              sampling_access::state(*job.context), *job.output);
}

} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_CLIP_KERNELS_HPP
