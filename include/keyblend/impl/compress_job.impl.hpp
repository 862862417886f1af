// keyblend — compress_job (compress.hpp): sampling the source, choosing what to store and in how
// many bits, and writing the compressed clip. Included by impl/compress_sample.impl.hpp; do not
// include directly.
//
// SPDX-License-Identifier: MIT
//
// The steps, in order:
// 1. The timeline: spans between discontinuities (cuts, step keys off the key grid), each
//    sampled uniformly at the key rate (or resample_rate), both ends included (a span's last
//    sample is the value just before the next span starts).
// 2. The reference: sampling_job at every sample, and at every check time (samples, midpoints,
//    every 1 / check_rate s, the end) the model matrices, from which each joint's lever (how far
//    its children's virtual vertices reach) and its parent's scale follow. Spans whose plain
//    interpolation of the samples misses the reference by more than half the precision are
//    sampled twice as densely (up to max_sample_rate), and everything is redone.
// 3. Kinds: a component within 1/256 of the precision (times its lever) of the bind pose
//    throughout is not stored; within that of one value, stored once; else varying.
// 4. Per segment length (16 and 32 samples): rotations' dropped components and signs per
//    segment, clip ranges, segment ranges, then per segment the widths: first an estimate from
//    the levers, raised along the worst joint's chain until the measured model-space error of
//    every check time the segment touches is within 0.99 of each joint's precision, then lowered
//    one bit at a time, track by track, for as long as it stays so (each trial recomputes only
//    the changed joint's sub-tree). Morph weights alone, in weight units.
// 5. The bytes; then the check of the clip as the sampler reads it (scalar path) at every check
//    time, raising the worst joint's chain where that check (rounding apart from the search's)
//    fails. The smaller of the segment lengths is kept.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace keyblend {
namespace impl {

struct compressor {
    const clip& c;
    const skeleton& s;
    const compression_settings& settings;
    const local_pose* base;
    std::size_t J = 0, W = 0;
    float precision = 0.0f, shell = 0.0f, weight_precision = 0.0f, end = 0.0f, tps = 1.0f;
    std::vector<float> prec, shell_of, subtree_prec;
    std::vector<transform> base_of;
    std::vector<std::string> notes;

    // Kinds: per joint and group (translation, rotation, scale), per weight.
    std::vector<unsigned char> kind[4], step[4];
    std::vector<transform> constant_of;
    std::vector<float> constant_weight;

    // The timeline and the reference.
    std::vector<cc::span_record> spans;
    std::vector<float> sample_time;
    std::vector<transform> raw; // [g * J + j]
    std::vector<float> raw_w;   // [g * W + w]
    std::vector<float> check_time;
    std::vector<cc::sample_position> check_pos;
    std::vector<glm::mat4> ref_model; // [check * J + j]
    std::vector<float> ref_w;         // [check * W + w]
    std::vector<float> lever, parent_scale, min_scale;
    bool rate_capped = false;
    bool size_capped = false; // refinement stopped at the format's samples or memory_limit
    std::uint64_t timeline_samples = 0; // build_spans' total, in 64 bits (many long spans pass 2^32)

    compressor(const clip& cl, const skeleton& sk, const compression_settings& st)
        : c(cl), s(sk), settings(st), base(st.additive_base), J(sk.size()), W(sk.morph_weight_total()) {}

    // ------------------------------------------------------------------------------------------
    // Settings
    // ------------------------------------------------------------------------------------------

    static float skeleton_height(const skeleton& sk) {
        if (sk.empty()) return 1.0f;
        glm::vec3 lo(INFINITY), hi(-INFINITY);
        for (const glm::mat4& m : sk.bind_model()) {
            lo = glm::min(lo, glm::vec3(m[3]));
            hi = glm::max(hi, glm::vec3(m[3]));
        }
        const glm::vec3 e = hi - lo;
        const float h = std::max(e.x, std::max(e.y, e.z));
        return is_finite(h) && h > 0.0f ? h : 1.0f;
    }

    void resolve() {
        const float h = skeleton_height(s);
        precision = settings.precision > 0.0f ? settings.precision : h / 18000.0f;
        shell = settings.shell_distance > 0.0f ? settings.shell_distance : h / 60.0f;
        weight_precision = settings.weight_precision;
        tps = c.ticks_per_second;
        prec.assign(J, precision);
        shell_of.assign(J, shell);
        for (std::size_t j = 0; j < J; ++j) {
            if (j < settings.joint_precision.size() && settings.joint_precision[j] > 0.0f) prec[j] = settings.joint_precision[j];
            if (j < settings.joint_shell.size() && settings.joint_shell[j] > 0.0f) shell_of[j] = settings.joint_shell[j];
        }
        subtree_prec = prec;
        for (std::size_t j = J; j-- > 0;)
            if (s.parent(j) >= 0) {
                float& p = subtree_prec[static_cast<std::size_t>(s.parent(j))];
                p = std::min(p, subtree_prec[j]);
            }
        base_of.assign(J, transform{});
        if (base)
            for (std::size_t j = 0; j < J; ++j) base_of[j] = base->get(j);
    }

    glm::mat4 local_matrix(std::size_t j, const transform& t) const {
        return model_builder::local_matrix(t, base ? &base_of[j] : nullptr);
    }

    /// Model matrices of a pose (local transforms [J]) into `model` [J].
    void model_of(const transform* local, glm::mat4* model) const {
        for (std::size_t j = 0; j < J; ++j) {
            const glm::mat4 m = local_matrix(j, local[j]);
            const joint_index p = s.parent(j);
            model[j] = p < 0 ? m : model[static_cast<std::size_t>(p)] * m;
        }
    }

    static double vv(const glm::mat4& a, const glm::mat4& b, float d) {
        const glm::dvec3 dt = glm::dvec3(a[3]) - glm::dvec3(b[3]);
        double worst = 0.0;
        for (int k = 0; k < 3; ++k)
            worst = std::max(worst, glm::length(dt + static_cast<double>(d) * (glm::dvec3(a[k]) - glm::dvec3(b[k]))));
        return worst;
    }

    // ------------------------------------------------------------------------------------------
    // 1. The timeline
    // ------------------------------------------------------------------------------------------

    template <class F>
    void for_each_key_track(F&& f) const {
        for (const channel& ch : c.channels) {
            f(ch.translation.times(), ch.translation.mode());
            f(ch.rotation.times(), ch.rotation.mode());
            f(ch.scale.times(), ch.scale.mode());
            f(ch.matrix.times(), ch.matrix.mode());
            for (const float_track<float>& w : ch.morph_weights) f(w.times(), w.mode());
        }
    }

    /// Whether span i's end is a discontinuity (its last sample is the value just before it, and
    /// the next span starts with a sample of its own) or not (the next span starts with it).
    std::vector<unsigned char> jump_after;

    /// The key grid's interval in ticks, or 0 when the keys lie on no grid of at most
    /// max_sample_rate: whole ticks (their gcd), or float times that are all multiples of their
    /// smallest spacing (seconds as ticks, as glTF writes them).
    float key_grid(const std::vector<float>& keys) const {
        bool whole = std::floor(end) == end && end <= max_exact_tick;
        std::uint64_t g = static_cast<std::uint64_t>(end);
        for (float t : keys) {
            if (!(t >= 0.0f) || t > max_exact_tick || std::floor(t) != t) whole = false;
            else g = std::gcd(g, static_cast<std::uint64_t>(t));
        }
        const double max_rate = static_cast<double>(settings.max_sample_rate);
        if (whole && g > 0) return static_cast<double>(tps) / static_cast<double>(g) <= max_rate ? static_cast<float>(g) : 0.0f;
        std::vector<float> sorted = keys;
        sorted.push_back(0.0f);
        sorted.push_back(end);
        std::sort(sorted.begin(), sorted.end());
        sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
        double d = std::numeric_limits<double>::infinity();
        for (std::size_t i = 1; i < sorted.size(); ++i) d = std::min(d, static_cast<double>(sorted[i]) - static_cast<double>(sorted[i - 1]));
        if (!(d > 0.0) || static_cast<double>(tps) / d > max_rate) return 0.0f;
        for (float t : sorted) {
            const double k = static_cast<double>(t) / d;
            if (std::fabs(k - std::nearbyint(k)) > 1e-3) return 0.0f;
        }
        return static_cast<float>(d);
    }

    /// The spans: between discontinuities on a key grid; otherwise between every two key times
    /// (where nothing jumps, neighbouring spans share their boundary's sample). `refine` gives
    /// each span's sample count when the timeline is being refined.
    void build_spans(const std::vector<std::uint32_t>* refine) {
        end = std::max(c.duration, last_key_time(c));
        std::vector<float> keys, cuts, step_keys;
        for_each_key_track([&](const std::vector<float>& times, interpolation mode) {
            for (std::size_t k = 0; k < times.size(); ++k) {
                keys.push_back(times[k]);
                if (k > 0 && times[k - 1] == times[k]) cuts.push_back(times[k]);
            }
            if (mode == interpolation::step) step_keys.insert(step_keys.end(), times.begin(), times.end());
        });
        const float grid = key_grid(keys);
        struct boundary {
            float t;
            bool jump;
        };
        // On a grid only cuts break it (step keys are samples there, and step components hold
        // theirs); off a grid every key bounds a span, step keys and cuts as jumps.
        std::vector<boundary> bounds = {{0.0f, false}, {end, false}};
        for (float t : cuts) bounds.push_back({t, true});
        if (grid == 0.0f) {
            for (float t : step_keys) bounds.push_back({t, true});
            for (float t : keys) bounds.push_back({t, false});
        }
        std::sort(bounds.begin(), bounds.end(), [](const boundary& a, const boundary& b) { return a.t < b.t; });
        std::vector<boundary> merged;
        for (const boundary& b : bounds) {
            if (b.t < 0.0f || b.t > end) continue;
            if (!merged.empty() && merged.back().t == b.t) merged.back().jump = merged.back().jump || b.jump;
            else merged.push_back(b);
        }
        const bool jump_at_end = end > 0.0f && merged.back().jump;
        merged.back().jump = false;
        spans.clear();
        jump_after.clear();
        std::uint32_t next = 0;
        timeline_samples = 1;
        if (end <= 0.0f) {
            spans.push_back({0.0f, 0.0f, 0, 1});
            jump_after.push_back(0);
            return;
        }
        const float dt = grid != 0.0f ? grid : INFINITY;
        for (std::size_t i = 0; i + 1 < merged.size(); ++i) {
            const double steps = std::ceil(static_cast<double>(merged[i + 1].t - merged[i].t) / static_cast<double>(dt) - 1e-3);
            std::uint32_t n = static_cast<std::uint32_t>(std::max(1.0, std::min(steps, 1e7))) + 1;
            if (refine && spans.size() < refine->size()) n = std::max(n, (*refine)[spans.size()]);
            const bool shared = i > 0 && !merged[i].jump;
            const std::uint32_t first = shared ? next - 1 : next;
            timeline_samples = static_cast<std::uint64_t>(first) + n;
            if (timeline_samples > cc::max_samples) return; // (refused: check_size)
            spans.push_back({merged[i].t, merged[i + 1].t, first, n});
            jump_after.push_back(merged[i + 1].jump || (i + 2 == merged.size() && jump_at_end) ? 1 : 0);
            next = first + n;
        }
        if (jump_at_end) {
            spans.push_back({end, end, next, 1});
            jump_after.push_back(0);
            ++timeline_samples;
        }
    }

    /// About the memory a timeline of `samples` samples takes: per sample the reference pose and
    /// weights and the plans' values (about as much again), per error check (every sample and
    /// midpoint, and check_rate a second) its model matrices and weights. In double: an estimate
    /// that cannot overflow.
    double work_bytes(std::uint64_t samples) const {
        const double per_sample = 2.0 * (double(J) * sizeof(transform) + double(W) * sizeof(float)) + 64.0;
        const double per_check = double(J) * sizeof(glm::mat4) + double(W) * sizeof(float) + 64.0;
        const double checks = 2.0 * double(samples) + double(end) * double(settings.check_rate) /
                                                          double(c.ticks_per_second) + 2.0;
        return double(samples) * per_sample + checks * per_check;
    }

    /// compress_job::validate's refusal of a clip too long for the format or for
    /// settings.memory_limit, before any of it is sampled.
    status check_size() {
        build_spans(nullptr);
        if (timeline_samples > cc::max_samples)
            return make_error(errc::unsupported, "compress_job: the clip's timeline needs more than the " +
                                                     std::to_string(cc::max_samples) +
                                                     " samples a compressed clip holds: split the clip");
        const double bytes = work_bytes(timeline_samples);
        if (!(bytes <= static_cast<double>(settings.memory_limit)))
            return make_error(errc::unsupported,
                              "compress_job: compressing the clip would take about " +
                                  float_to_string(static_cast<float>(bytes / 1048576.0), 6) + " MB (" +
                                  std::to_string(timeline_samples) + " samples of " + std::to_string(J) +
                                  " joints, checked " + float_to_string(settings.check_rate, 4) +
                                  " times a second), more than memory_limit (" +
                                  std::to_string(settings.memory_limit) + " bytes): split the clip");
        return {};
    }

    float sample_time_of(std::size_t span, std::uint32_t k) const {
        const cc::span_record& r = spans[span];
        if (r.count == 1) return r.start;
        if (k + 1 == r.count) return jump_after[span] ? std::nextafter(r.end, -INFINITY) : r.end;
        const float dt = (r.end - r.start) / static_cast<float>(r.count - 1);
        return r.start + static_cast<float>(k) * dt;
    }

    cc::sample_position locate(float t) const {
        return cc::locate_sample([&](std::uint32_t i) { return spans[i]; }, static_cast<std::uint32_t>(spans.size()), t);
    }

    // ------------------------------------------------------------------------------------------
    // 2. The reference
    // ------------------------------------------------------------------------------------------

    void sample_reference() {
        sampling_context ctx;
        local_pose pose;
        // (compress_job::run validated the clip: the job cannot fail.)
        sampling_job source{&c, &s, 0.0f, &ctx, &pose};
        const std::uint32_t n = spans.back().first + spans.back().count;
        sample_time.resize(n);
        raw.resize(std::size_t(n) * J);
        raw_w.resize(std::size_t(n) * W);
        for (std::size_t i = 0; i < spans.size(); ++i)
            for (std::uint32_t k = 0; k < spans[i].count; ++k) {
                const std::uint32_t g = spans[i].first + k;
                if (k == 0 && i > 0 && g < spans[i - 1].first + spans[i - 1].count) continue; // (shared)
                sample_time[g] = sample_time_of(i, k);
                source.time = sample_time[g];
                (void)source.run();
                for (std::size_t j = 0; j < J; ++j) raw[g * J + j] = pose.get(j);
                for (std::size_t w = 0; w < W; ++w) raw_w[g * W + w] = pose.morph_weights()[w];
            }
        // Rotations continuous in sign, sample to sample.
        for (std::size_t j = 0; j < J; ++j)
            for (std::uint32_t g = 1; g < n; ++g) {
                glm::quat& q = raw[g * J + j].rotation;
                if (quat_dot(raw[(g - 1) * J + j].rotation, q) < 0.0f) q = make_quat(-q.w, -q.x, -q.y, -q.z);
            }

        std::vector<float> times;
        for (std::size_t i = 0; i < spans.size(); ++i) {
            const cc::span_record& r = spans[i];
            const float dt = r.count > 1 ? (r.end - r.start) / static_cast<float>(r.count - 1) : 0.0f;
            for (std::uint32_t k = 0; k < r.count; ++k) {
                if (k + 1 < r.count || i + 1 == spans.size()) times.push_back(k + 1 == r.count ? r.end : r.start + static_cast<float>(k) * dt);
                if (k + 1 < r.count) times.push_back(r.start + (static_cast<float>(k) + 0.5f) * dt);
            }
        }
        const double every = static_cast<double>(tps) / static_cast<double>(settings.check_rate);
        for (std::size_t i = 0; static_cast<double>(i) * every < static_cast<double>(end); ++i)
            times.push_back(static_cast<float>(static_cast<double>(i) * every));
        times.push_back(end);
        std::sort(times.begin(), times.end());
        times.erase(std::unique(times.begin(), times.end()), times.end());
        check_time = times;
        check_pos.resize(times.size());
        ref_model.resize(times.size() * J);
        ref_w.resize(times.size() * W);
        std::vector<transform> local(J);
        for (std::size_t i = 0; i < times.size(); ++i) {
            check_pos[i] = locate(times[i]);
            source.time = times[i];
            (void)source.run();
            for (std::size_t j = 0; j < J; ++j) local[j] = pose.get(j);
            model_of(local.data(), ref_model.data() + i * J);
            for (std::size_t w = 0; w < W; ++w) ref_w[i * W + w] = pose.morph_weights()[w];
        }

        // Levers: how far the virtual vertices of a joint's sub-tree reach from it.
        lever.assign(J, 0.0f);
        parent_scale.assign(J, 1.0f);
        min_scale.assign(J, INFINITY);
        std::vector<float> reach(J);
        for (std::size_t i = 0; i < times.size(); ++i) {
            const glm::mat4* m = ref_model.data() + i * J;
            const auto column_max = [&](std::size_t j) {
                return std::max(glm::length(glm::vec3(m[j][0])), std::max(glm::length(glm::vec3(m[j][1])), glm::length(glm::vec3(m[j][2]))));
            };
            for (std::size_t j = J; j-- > 0;) reach[j] = shell_of[j] * column_max(j);
            for (std::size_t j = J; j-- > 0;) {
                lever[j] = std::max(lever[j], reach[j]);
                const joint_index p = s.parent(j);
                if (p < 0) continue;
                const std::size_t pj = static_cast<std::size_t>(p);
                reach[pj] = std::max(reach[pj], reach[j] + glm::length(glm::vec3(m[j][3]) - glm::vec3(m[pj][3])));
                parent_scale[j] = std::max(parent_scale[j], column_max(pj));
            }
        }
        for (std::uint32_t g = 0; g < n; ++g)
            for (std::size_t j = 0; j < J; ++j) {
                const glm::vec3 sc = glm::abs(raw[g * J + j].scale);
                min_scale[j] = std::min(min_scale[j], std::min(sc.x, std::min(sc.y, sc.z)));
            }
    }

    // ------------------------------------------------------------------------------------------
    // Interpolating decoded samples, as the sampler does (scalar reference).
    // ------------------------------------------------------------------------------------------

    static float lerp1(float a, float b, float t) { return t == 0.0f ? a : a + (b - a) * t; }

    transform interpolate(const transform& a, const transform& b, float alpha, std::size_t j) const {
        const float at = step[0][j] ? 0.0f : alpha, ar = step[1][j] ? 0.0f : alpha, as = step[2][j] ? 0.0f : alpha;
        transform t;
        t.translation = glm::vec3(lerp1(a.translation.x, b.translation.x, at), lerp1(a.translation.y, b.translation.y, at),
                                  lerp1(a.translation.z, b.translation.z, at));
        t.rotation = keyblend::nlerp(a.rotation, b.rotation, ar);
        t.scale = glm::vec3(lerp1(a.scale.x, b.scale.x, as), lerp1(a.scale.y, b.scale.y, as), lerp1(a.scale.z, b.scale.z, as));
        return t;
    }

    /// Per span, the largest error ratio of the raw samples' interpolation at the check times.
    std::vector<float> raw_interpolation_ratio() const {
        std::vector<float> worst(spans.size(), 0.0f);
        std::vector<transform> local(J);
        std::vector<glm::mat4> model(J);
        std::size_t span = 0;
        for (std::size_t i = 0; i < check_time.size(); ++i) {
            const cc::sample_position& p = check_pos[i];
            while (span + 1 < spans.size() && p.g0 >= spans[span + 1].first) ++span;
            for (std::size_t j = 0; j < J; ++j) local[j] = interpolate(raw[p.g0 * J + j], raw[p.g1 * J + j], p.alpha, j);
            model_of(local.data(), model.data());
            for (std::size_t j = 0; j < J; ++j)
                worst[span] = std::max(worst[span], static_cast<float>(vv(ref_model[i * J + j], model[j], shell_of[j]) / static_cast<double>(prec[j])));
            for (std::size_t w = 0; w < W; ++w) {
                const float v = lerp1(raw_w[p.g0 * W + w], raw_w[p.g1 * W + w], step[3][w] ? 0.0f : p.alpha);
                worst[span] = std::max(worst[span], std::fabs(v - ref_w[i * W + w]) / weight_precision);
            }
        }
        return worst;
    }

    void build_steps() {
        for (unsigned g = 0; g < 3; ++g) step[g].assign(J, 0);
        step[3].assign(W, 0);
        for (const channel& ch : c.channels) {
            if (ch.joint >= J) continue;
            if (ch.has_matrix()) {
                if (ch.matrix.mode() == interpolation::step) step[0][ch.joint] = step[1][ch.joint] = step[2][ch.joint] = 1;
            } else {
                step[0][ch.joint] = !ch.translation.empty() && ch.translation.mode() == interpolation::step;
                step[1][ch.joint] = !ch.rotation.empty() && ch.rotation.mode() == interpolation::step;
                step[2][ch.joint] = !ch.scale.empty() && ch.scale.mode() == interpolation::step;
            }
            const std::size_t at = s.morph_weight_offset(ch.joint);
            for (std::size_t k = 0; k < ch.morph_weights.size() && k < s.morph_weight_count(ch.joint); ++k)
                step[3][at + k] = !ch.morph_weights[k].empty() && ch.morph_weights[k].mode() == interpolation::step;
        }
    }

    /// Steps 1 and 2, refining spans whose samples cannot follow the source.
    void build_timeline() {
        build_steps();
        std::vector<std::uint32_t> counts;
        build_spans(nullptr);
        for (int round = 0;; ++round) {
            sample_reference();
            if (round == 8) break;
            const std::vector<float> worst = raw_interpolation_ratio();
            counts.clear();
            bool refined = false;
            for (std::size_t i = 0; i < spans.size(); ++i) {
                std::uint32_t n = spans[i].count;
                if (worst[i] > 0.5f && n > 1) {
                    const double rate = static_cast<double>(2 * (n - 1)) * static_cast<double>(tps) /
                                        static_cast<double>(spans[i].end - spans[i].start);
                    if (rate <= static_cast<double>(settings.max_sample_rate) * 1.0001 && n < cc::max_samples / 4) {
                        n = 2 * (n - 1) + 1;
                        refined = true;
                    } else {
                        rate_capped = true;
                    }
                }
                counts.push_back(n);
            }
            if (!refined) break;
            // (Refinement stays within what validate() accepted the timeline for: the format's
            // samples and the memory limit. The counts' sum bounds the samples.)
            std::uint64_t planned = 0;
            for (std::uint32_t n : counts) planned += n;
            if (planned > cc::max_samples || !(work_bytes(planned) <= static_cast<double>(settings.memory_limit))) {
                size_capped = true;
                break;
            }
            build_spans(&counts);
        }
    }

    // ------------------------------------------------------------------------------------------
    // 3. Kinds
    // ------------------------------------------------------------------------------------------

    static float angle(const glm::quat& a, const glm::quat& b) {
        const glm::vec4 p(a.x, a.y, a.z, a.w), q0(b.x, b.y, b.z, b.w);
        const glm::vec4 q = glm::dot(p, q0) < 0.0f ? -q0 : q0;
        return 2.0f * std::atan2(glm::length(p - q), glm::length(p + q));
    }

    void classify() {
        const std::size_t n = sample_time.size();
        for (unsigned g = 0; g < 4; ++g) kind[g].assign(g == 3 ? W : J, cc::kind_varying);
        constant_of.assign(J, transform{});
        constant_weight.assign(W, 0.0f);
        for (std::size_t j = 0; j < J; ++j) {
            const float tol = subtree_prec[j] / 256.0f;
            const transform& bind = s.bind_transforms()[j];
            transform& k = constant_of[j];
            // Translation and scale: the middle of each component's range.
            glm::vec3 lo[2] = {glm::vec3(INFINITY), glm::vec3(INFINITY)}, hi[2] = {glm::vec3(-INFINITY), glm::vec3(-INFINITY)};
            glm::vec4 mean(0.0f);
            float bind_dev[3] = {0.0f, 0.0f, 0.0f};
            for (std::size_t g = 0; g < n; ++g) {
                const transform& t = raw[g * J + j];
                lo[0] = glm::min(lo[0], t.translation);
                hi[0] = glm::max(hi[0], t.translation);
                lo[1] = glm::min(lo[1], t.scale);
                hi[1] = glm::max(hi[1], t.scale);
                const glm::vec4 q(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w);
                mean += glm::dot(q, mean) < 0.0f ? -q : q;
                bind_dev[0] = std::max(bind_dev[0], glm::length(t.translation - bind.translation));
                bind_dev[1] = std::max(bind_dev[1], angle(t.rotation, bind.rotation));
                bind_dev[2] = std::max(bind_dev[2], glm::length(t.scale - bind.scale));
            }
            // A component that is the same in every sample keeps that value exactly; others the
            // middle of their range (the rotations' mean direction).
            bool same[3] = {true, true, true};
            for (std::size_t g = 1; g < n; ++g) {
                const transform& t = raw[g * J + j];
                same[0] = same[0] && t.translation == raw[j].translation;
                same[1] = same[1] && t.rotation == raw[j].rotation;
                same[2] = same[2] && t.scale == raw[j].scale;
            }
            k.translation = same[0] && n ? raw[j].translation : (lo[0] + hi[0]) * 0.5f;
            k.scale = same[2] && n ? raw[j].scale : (lo[1] + hi[1]) * 0.5f;
            const float mean_len = glm::length(mean);
            k.rotation = same[1] && n    ? raw[j].rotation
                         : mean_len > 0.0f ? make_quat(mean.w / mean_len, mean.x / mean_len, mean.y / mean_len, mean.z / mean_len)
                                           : bind.rotation;
            float dev[3] = {0.0f, 0.0f, 0.0f};
            for (std::size_t g = 0; g < n; ++g) {
                const transform& t = raw[g * J + j];
                dev[0] = std::max(dev[0], glm::length(t.translation - k.translation));
                dev[1] = std::max(dev[1], angle(t.rotation, k.rotation));
                dev[2] = std::max(dev[2], glm::length(t.scale - k.scale));
            }
            const float scale_lever = lever[j] / std::max(min_scale[j], 1e-6f);
            const float weight[3] = {parent_scale[j], lever[j], scale_lever};
            for (unsigned g = 0; g < 3; ++g) {
                if (bind_dev[g] * weight[g] <= tol) kind[g][j] = cc::kind_default;
                else if (same[g] || dev[g] * weight[g] <= tol) kind[g][j] = cc::kind_constant;
            }
        }
        for (std::size_t w = 0; w < W; ++w) {
            const float tol = weight_precision / 256.0f;
            float lo = INFINITY, hi = -INFINITY, bind_dev = 0.0f;
            for (std::size_t g = 0; g < n; ++g) {
                const float v = raw_w[g * W + w];
                lo = std::min(lo, v);
                hi = std::max(hi, v);
                bind_dev = std::max(bind_dev, std::fabs(v - s.bind_morph_weights()[w]));
            }
            if (bind_dev <= tol) kind[3][w] = cc::kind_default;
            else if ((hi - lo) * 0.5f <= tol) {
                kind[3][w] = cc::kind_constant;
                constant_weight[w] = lo == hi ? lo : (lo + hi) * 0.5f;
            }
        }
        for (unsigned g = 0; g < 4; ++g)
            for (std::size_t j = 0; j < step[g].size(); ++j)
                if (kind[g][j] != cc::kind_varying) step[g][j] = 0;
    }

    // ------------------------------------------------------------------------------------------
    // 4. A plan for one segment length
    // ------------------------------------------------------------------------------------------

    struct plan {
        std::uint32_t length = 16, segments = 0;
        std::vector<std::uint32_t> tracks[4]; // the joint (weight) of each varying track
        cc::clip_layout layout{};
        std::vector<unsigned char> ranges;   // the clip ranges, serialized (layout.h.off_ranges = 0)
        std::vector<unsigned char> meta;     // segments * meta_stride
        std::vector<std::uint32_t> q;        // samples * components
        std::vector<glm::quat> rotation;     // [g * varying rotations + i]: signs per segment
        std::vector<transform> decoded;      // [g * J + j]
        std::vector<float> decoded_w;        // [g * W + w]
    };

    std::uint32_t samples() const { return static_cast<std::uint32_t>(sample_time.size()); }

    float value_of(const plan& p, unsigned g, std::uint32_t i, unsigned k, std::uint32_t sample) const {
        const std::uint32_t who = p.tracks[g][i];
        switch (g) {
        case cc::group_translation: return cc::component(raw[std::size_t(sample) * J + who].translation, k);
        case cc::group_rotation: return cc::component(p.rotation[std::size_t(sample) * p.tracks[1].size() + i], k);
        case cc::group_scale: return cc::component(raw[std::size_t(sample) * J + who].scale, k);
        default: return raw_w[std::size_t(sample) * W + who];
        }
    }

    void start_plan(plan& p, std::uint32_t length) const {
        p.length = length;
        const std::uint32_t n = samples();
        p.segments = (n + length - 1) / length;
        for (unsigned g = 0; g < 4; ++g) {
            p.tracks[g].clear();
            for (std::size_t j = 0; j < kind[g].size(); ++j)
                if (kind[g][j] == cc::kind_varying) p.tracks[g].push_back(static_cast<std::uint32_t>(j));
        }
        cc::clip_layout& l = p.layout;
        l = {};
        for (unsigned g = 0; g < 4; ++g) l.h.varying[g] = static_cast<std::uint32_t>(p.tracks[g].size());
        l.h.segment_length = length;
        l.h.segment_count = p.segments;
        l.h.sample_count = n;
        cc::derive_layout(l);

        // Rotations: per segment the component that stays farthest from zero is dropped (and made
        // positive: each sample's sign follows it).
        const std::uint32_t nr = l.h.varying[1];
        p.rotation.resize(std::size_t(n) * nr);
        p.meta.assign(std::size_t(p.segments) * l.meta_stride, 0);
        for (std::uint32_t i = 0; i < nr; ++i) {
            const std::uint32_t j = p.tracks[1][i];
            for (std::uint32_t seg = 0; seg < p.segments; ++seg) {
                const std::uint32_t f = seg * length, e = std::min(n, f + length);
                float least[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
                for (std::uint32_t g = f; g < e; ++g)
                    for (unsigned k = 0; k < 4; ++k) least[k] = std::min(least[k], std::fabs(cc::component(raw[g * J + j].rotation, k)));
                unsigned drop = 3;
                for (unsigned k = 0; k < 4; ++k)
                    if (least[k] > least[drop]) drop = k;
                for (std::uint32_t g = f; g < e; ++g) {
                    glm::quat q = raw[g * J + j].rotation;
                    if (cc::component(q, drop) < 0.0f) q = make_quat(-q.w, -q.x, -q.y, -q.z);
                    p.rotation[std::size_t(g) * nr + i] = q;
                }
                p.meta[std::size_t(seg) * l.meta_stride + l.track_base[1] + i] = static_cast<unsigned char>(drop << 5);
            }
        }

        // Clip ranges.
        p.ranges.assign(24 * l.h.varying[0] + 16 * nr + 24 * l.h.varying[2] + 8 * l.h.varying[3], 0);
        for (unsigned g = 0; g < 4; ++g) {
            const std::uint32_t count = l.h.varying[g];
            for (std::uint32_t i = 0; i < count; ++i) {
                const unsigned dims = g == cc::group_rotation ? 4u : cc::group_components(g);
                for (unsigned k = 0; k < dims; ++k) {
                    float lo = INFINITY, hi = -INFINITY;
                    for (std::uint32_t seg = 0; seg < p.segments; ++seg) {
                        // (A rotation's range is per component x, y, z, w, over the segments that
                        // keep it.)
                        if (g == cc::group_rotation && k == unsigned(p.meta[std::size_t(seg) * l.meta_stride + l.track_base[1] + i] >> 5))
                            continue;
                        const std::uint32_t f = seg * length, e = std::min(n, f + length);
                        for (std::uint32_t smp = f; smp < e; ++smp) {
                            const float v = value_of(p, g, i, k, smp);
                            lo = std::min(lo, v);
                            hi = std::max(hi, v);
                        }
                    }
                    unsigned char* out = p.ranges.data() + l.range_base[g];
                    if (g == cc::group_rotation) {
                        if (!(lo <= hi)) lo = hi = 0.0f;
                        const double m = std::floor((static_cast<double>(lo) + 1.0) * 0.5 * 65535.0);
                        const double top = std::ceil((static_cast<double>(hi) + 1.0) * 0.5 * 65535.0);
                        const std::uint16_t m16 = static_cast<std::uint16_t>(std::min(std::max(m, 0.0), 65535.0));
                        const std::uint16_t t16 = static_cast<std::uint16_t>(std::min(std::max(top, static_cast<double>(m16)), 65535.0));
                        cc::write<std::uint16_t>(out + std::size_t(i) * 16 + k * 4, m16);
                        cc::write<std::uint16_t>(out + std::size_t(i) * 16 + k * 4 + 2, static_cast<std::uint16_t>(t16 - m16));
                    } else {
                        float ext = hi - lo;
                        while (lo + ext < hi) ext = std::nextafter(ext, INFINITY);
                        const std::size_t stride = g == cc::group_weight ? 8 : 24;
                        cc::write<float>(out + std::size_t(i) * stride + k * 8, lo);
                        cc::write<float>(out + std::size_t(i) * stride + k * 8 + 4, ext);
                    }
                }
            }
        }
        p.layout.h.off_ranges = 0;

        // Segment ranges, in 1/255 of the clip range, rounded outward.
        for (std::uint32_t seg = 0; seg < p.segments; ++seg) {
            unsigned char* meta = p.meta.data() + std::size_t(seg) * l.meta_stride;
            const std::uint32_t f = seg * length, e = std::min(n, f + length);
            for (unsigned g = 0; g < 4; ++g) {
                const std::uint32_t count = l.h.varying[g];
                for (std::uint32_t i = 0; i < count; ++i) {
                    const unsigned drop = meta[l.track_base[g] + i] >> 5;
                    for (unsigned k = 0; k < cc::group_components(g); ++k) {
                        const unsigned actual = g == cc::group_rotation ? cc::kept_component(drop, k) : k;
                        const cc::clip_range r = cc::read_clip_range(l, p.ranges.data(), g, i, actual);
                        float lo = INFINITY, hi = -INFINITY;
                        for (std::uint32_t smp = f; smp < e; ++smp) {
                            const float v = value_of(p, g, i, actual, smp);
                            lo = std::min(lo, v);
                            hi = std::max(hi, v);
                        }
                        const std::uint32_t comp = l.component_base[g] + k * count + i;
                        unsigned m = 0, x = 0;
                        if (r.extent > 0.0f) {
                            const double rl = (static_cast<double>(lo) - static_cast<double>(r.min)) / static_cast<double>(r.extent);
                            const double rh = (static_cast<double>(hi) - static_cast<double>(r.min)) / static_cast<double>(r.extent);
                            m = static_cast<unsigned>(std::min(std::max(std::floor(rl * 255.0), 0.0), 255.0));
                            unsigned top = static_cast<unsigned>(std::min(std::max(std::ceil(rh * 255.0), static_cast<double>(m)), 255.0));
                            // The decoded range must hold the values: adjust for rounding.
                            const auto low_of = [&](unsigned mm) { return r.min + r.extent * (static_cast<float>(mm) / 255.0f); };
                            while (m > 0 && low_of(m) > lo) --m;
                            if (top < m + 1) top = std::min(255u, m + 1);
                            if (top == m && m > 0) --m; // (top 255, m 255)
                            while (top < 255 && low_of(m) + r.extent * (static_cast<float>(top - m) / 255.0f) < hi) ++top;
                            x = top - m;
                        }
                        meta[l.tracks + comp] = static_cast<unsigned char>(m);
                        meta[l.tracks + l.components + comp] = static_cast<unsigned char>(x);
                    }
                }
            }
        }
        p.q.assign(std::size_t(n) * l.components, 0);
        // The decoded samples start as the raw ones, non-varying components as stored.
        p.decoded.resize(std::size_t(n) * J);
        p.decoded_w.resize(std::size_t(n) * W);
        for (std::uint32_t g = 0; g < n; ++g) {
            for (std::size_t j = 0; j < J; ++j) {
                transform t = raw[g * J + j];
                const transform& bind = s.bind_transforms()[j];
                if (kind[0][j] == cc::kind_default) t.translation = bind.translation;
                if (kind[0][j] == cc::kind_constant) t.translation = constant_of[j].translation;
                if (kind[1][j] == cc::kind_default) t.rotation = bind.rotation;
                if (kind[1][j] == cc::kind_constant) t.rotation = constant_of[j].rotation;
                if (kind[2][j] == cc::kind_default) t.scale = bind.scale;
                if (kind[2][j] == cc::kind_constant) t.scale = constant_of[j].scale;
                p.decoded[g * J + j] = t;
            }
            for (std::size_t w = 0; w < W; ++w) {
                float v = raw_w[g * W + w];
                if (kind[3][w] == cc::kind_default) v = s.bind_morph_weights()[w];
                if (kind[3][w] == cc::kind_constant) v = constant_weight[w];
                p.decoded_w[g * W + w] = v;
            }
        }
    }

    /// Quantizes segment `seg` of plan `p` with its current widths into p.q and p.decoded.
    /// Only tracks of `group` (4: all) are redone, only `track` of it (npos: all).
    void quantize_segment(plan& p, std::uint32_t seg, unsigned only_group = 4,
                          std::uint32_t only_track = 0xffffffffu) {
        const cc::clip_layout& l = p.layout;
        const unsigned char* meta = p.meta.data() + std::size_t(seg) * l.meta_stride;
        codes_.resize(l.components);
        drops_.resize(l.h.varying[1]);
        cc::for_each_code(
            l, p.ranges.data(), meta, [&](std::uint32_t k, const cc::component_code& code) { codes_[k] = code; },
            [&](std::uint32_t i, unsigned d) { drops_[i] = static_cast<unsigned char>(d); });
        const std::uint32_t f = seg * p.length, e = std::min(samples(), f + p.length);
        for (unsigned g = 0; g < 4; ++g) {
            if (only_group != 4 && g != only_group) continue;
            const std::uint32_t count = l.h.varying[g];
            for (std::uint32_t i = 0; i < count; ++i) {
                if (only_track != 0xffffffffu && i != only_track) continue;
                const std::uint32_t who = p.tracks[g][i];
                for (std::uint32_t smp = f; smp < e; ++smp) {
                    float v[3] = {0.0f, 0.0f, 0.0f};
                    for (unsigned k = 0; k < cc::group_components(g); ++k) {
                        const std::uint32_t comp = l.component_base[g] + k * count + i;
                        const cc::component_code& code = codes_[comp];
                        const unsigned actual = g == cc::group_rotation ? cc::kept_component(drops_[i], k) : k;
                        const float x = value_of(p, g, i, actual, smp);
                        std::uint32_t q = 0;
                        if (code.width && code.scale > 0.0f) {
                            const double r = std::nearbyint((static_cast<double>(x) - static_cast<double>(code.bias)) / static_cast<double>(code.scale));
                            q = static_cast<std::uint32_t>(std::min(std::max(r, 0.0), static_cast<double>((1u << code.width) - 1u)));
                        }
                        p.q[std::size_t(smp) * l.components + comp] = q;
                        v[k] = cc::dequantize(code, q);
                    }
                    if (g == cc::group_weight) {
                        p.decoded_w[std::size_t(smp) * W + who] = v[0];
                        continue;
                    }
                    transform& t = p.decoded[std::size_t(smp) * J + who];
                    if (g == cc::group_translation) t.translation = glm::vec3(v[0], v[1], v[2]);
                    else if (g == cc::group_scale) t.scale = glm::vec3(v[0], v[1], v[2]);
                    else t.rotation = cc::rebuild_rotation(v[0], v[1], v[2], drops_[i]);
                }
            }
        }
    }
    std::vector<cc::component_code> codes_;
    std::vector<unsigned char> drops_;

    // The evaluation window of a segment: the check times whose samples lie in it.
    std::size_t win_first = 0, win_count = 0;
    std::vector<glm::mat4> win_local, win_model;
    std::vector<float> win_ratio;

    transform decoded_at(const plan& p, std::size_t check, std::size_t j) const {
        const cc::sample_position& q = check_pos[check];
        return interpolate(p.decoded[q.g0 * J + j], p.decoded[q.g1 * J + j], q.alpha, j);
    }

    void window_open(const plan& p, std::uint32_t f, std::uint32_t e) {
        win_first = check_time.size();
        win_count = 0;
        for (std::size_t i = 0; i < check_time.size(); ++i) {
            const cc::sample_position& q = check_pos[i];
            const bool in = (q.g0 >= f && q.g0 < e) || (q.g1 >= f && q.g1 < e);
            if (!in) continue;
            if (win_first == check_time.size()) win_first = i;
            win_count = i + 1 - win_first;
        }
        if (win_first == check_time.size()) win_first = 0;
        win_local.resize(win_count * J);
        win_model.resize(win_count * J);
        win_ratio.resize(win_count * J);
        for (std::size_t w = 0; w < win_count; ++w) {
            for (std::size_t j = 0; j < J; ++j) win_local[w * J + j] = local_matrix(j, decoded_at(p, win_first + w, j));
            update_models(w, 0, J);
        }
    }

    void update_models(std::size_t w, std::size_t from, std::size_t to) {
        glm::mat4* model = win_model.data() + w * J;
        const glm::mat4* ref = ref_model.data() + (win_first + w) * J;
        for (std::size_t j = from; j < to; ++j) {
            const joint_index par = s.parent(j);
            model[j] = par < 0 ? win_local[w * J + j] : model[static_cast<std::size_t>(par)] * win_local[w * J + j];
            win_ratio[w * J + j] = static_cast<float>(vv(ref[j], model[j], shell_of[j]) / static_cast<double>(prec[j]));
        }
    }

    float window_worst(std::size_t* joint = nullptr, std::size_t* check = nullptr) const {
        float worst = 0.0f;
        for (std::size_t i = 0; i < win_ratio.size(); ++i)
            if (win_ratio[i] > worst) {
                worst = win_ratio[i];
                if (joint) *joint = i % J;
                if (check) *check = i / J;
            }
        return worst;
    }

    /// Recomputes joint j's sub-tree in the window after j's decoded samples changed; returns
    /// the worst ratio in it. With `backup`, the previous state is saved there first.
    float window_update_joint(const plan& p, std::size_t j, std::vector<glm::mat4>* backup) {
        const std::size_t last = s.subtree_end(j);
        float worst = 0.0f;
        if (backup) backup->clear();
        for (std::size_t w = 0; w < win_count; ++w) {
            if (backup) {
                backup->push_back(win_local[w * J + j]);
                backup->insert(backup->end(), win_model.begin() + std::ptrdiff_t(w * J + j), win_model.begin() + std::ptrdiff_t(w * J + last));
            }
            win_local[w * J + j] = local_matrix(j, decoded_at(p, win_first + w, j));
            update_models(w, j, last);
            for (std::size_t k = j; k < last; ++k) worst = std::max(worst, win_ratio[w * J + k]);
        }
        return worst;
    }

    void window_restore(std::size_t j, const std::vector<glm::mat4>& backup) {
        const std::size_t last = s.subtree_end(j);
        std::size_t at = 0;
        for (std::size_t w = 0; w < win_count; ++w) {
            win_local[w * J + j] = backup[at++];
            const glm::mat4* ref = ref_model.data() + (win_first + w) * J;
            for (std::size_t k = j; k < last; ++k) {
                win_model[w * J + k] = backup[at++];
                win_ratio[w * J + k] = static_cast<float>(vv(ref[k], win_model[w * J + k], shell_of[k]) / static_cast<double>(prec[k]));
            }
        }
    }

    unsigned width_of(const plan& p, std::uint32_t seg, unsigned g, std::uint32_t i) const {
        return p.meta[std::size_t(seg) * p.layout.meta_stride + p.layout.track_base[g] + i] & 31u;
    }
    void set_width(plan& p, std::uint32_t seg, unsigned g, std::uint32_t i, unsigned w) const {
        unsigned char& code = p.meta[std::size_t(seg) * p.layout.meta_stride + p.layout.track_base[g] + i];
        code = static_cast<unsigned char>((code & ~31u) | w);
    }

    /// A first width for a track: its error alone about an eighth of the precision.
    unsigned estimate_width(const plan& p, std::uint32_t seg, unsigned g, std::uint32_t i) const {
        const cc::clip_layout& l = p.layout;
        const unsigned char* meta = p.meta.data() + std::size_t(seg) * l.meta_stride;
        const std::uint32_t count = l.h.varying[g];
        float ext = 0.0f;
        const unsigned drop = meta[l.track_base[g] + i] >> 5;
        for (unsigned k = 0; k < cc::group_components(g); ++k) {
            const std::uint32_t comp = l.component_base[g] + k * count + i;
            const cc::clip_range r = cc::read_clip_range(l, p.ranges.data(), g, i, g == cc::group_rotation ? cc::kept_component(drop, k) : k);
            ext = std::max(ext, r.extent * static_cast<float>(meta[l.tracks + l.components + comp]) / 255.0f);
        }
        if (!(ext > 0.0f)) return 0;
        const std::uint32_t who = p.tracks[g][i];
        float target, gain;
        if (g == cc::group_weight) {
            target = weight_precision * 0.25f;
            gain = 1.0f;
        } else {
            target = subtree_prec[who] * 0.125f;
            gain = g == cc::group_translation ? parent_scale[who] * 1.75f
                   : g == cc::group_rotation  ? lever[who] * 7.0f
                                              : lever[who] / std::max(min_scale[who], 1e-6f) * 1.75f;
        }
        const double bits = std::ceil(std::log2(static_cast<double>(gain) * static_cast<double>(ext) / static_cast<double>(target)) - 1.0);
        return static_cast<unsigned>(std::min(std::max(bits, 0.0), static_cast<double>(cc::max_width)));
    }

    /// Step 4 for one segment: the widths of its tracks.
    void search_segment(plan& p, std::uint32_t seg) {
        const cc::clip_layout& l = p.layout;
        const std::uint32_t f = seg * p.length, e = std::min(samples(), f + p.length);
        constexpr float target = 0.99f;
        for (unsigned g = 0; g < 3; ++g)
            for (std::uint32_t i = 0; i < l.h.varying[g]; ++i) set_width(p, seg, g, i, estimate_width(p, seg, g, i));
        quantize_segment(p, seg);
        window_open(p, f, e);

        // Joints -> their varying tracks, for the chain walks.
        std::vector<std::int32_t> track_of[3];
        for (unsigned g = 0; g < 3; ++g) {
            track_of[g].assign(J, -1);
            for (std::uint32_t i = 0; i < l.h.varying[g]; ++i) track_of[g][p.tracks[g][i]] = static_cast<std::int32_t>(i);
        }
        // Raise along the worst chain until every check passes.
        for (int round = 0; round < 400; ++round) {
            std::size_t worst_joint = 0;
            if (window_worst(&worst_joint) <= target) break;
            bool raised = false;
            for (joint_index j = static_cast<joint_index>(worst_joint); j >= 0; j = s.parent(static_cast<std::size_t>(j)))
                for (unsigned g = 0; g < 3; ++g) {
                    const std::int32_t i = track_of[g][static_cast<std::size_t>(j)];
                    if (i < 0) continue;
                    const unsigned w = width_of(p, seg, g, static_cast<std::uint32_t>(i));
                    if (w < cc::max_width) {
                        set_width(p, seg, g, static_cast<std::uint32_t>(i), w + 1);
                        raised = true;
                    }
                }
            if (!raised) break;
            quantize_segment(p, seg);
            window_open(p, f, e);
        }
        // Then lower, one bit at a time, while every check passes.
        std::vector<glm::mat4> backup;
        std::vector<std::pair<unsigned, std::uint32_t>> order;
        for (unsigned g = 0; g < 3; ++g)
            for (std::uint32_t i = 0; i < l.h.varying[g]; ++i) order.emplace_back(g, i);
        for (int round = 0; round < 32; ++round) {
            std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
                return width_of(p, seg, a.first, a.second) > width_of(p, seg, b.first, b.second);
            });
            bool lowered = false;
            for (const auto& [g, i] : order) {
                const unsigned w = width_of(p, seg, g, i);
                if (w == 0) continue;
                const std::size_t j = p.tracks[g][i];
                set_width(p, seg, g, i, w - 1);
                quantize_segment(p, seg, g, i);
                if (window_update_joint(p, j, &backup) <= target) {
                    lowered = true;
                    continue;
                }
                set_width(p, seg, g, i, w);
                quantize_segment(p, seg, g, i);
                window_restore(j, backup);
            }
            if (!lowered) break;
        }
        search_weights(p, seg);
    }

    /// Morph weights: each alone, the smallest width within the weight precision at the segment's
    /// samples (half of it) and check times.
    void search_weights(plan& p, std::uint32_t seg) {
        const cc::clip_layout& l = p.layout;
        const std::uint32_t count = l.h.varying[3];
        const std::uint32_t f = seg * p.length, e = std::min(samples(), f + p.length);
        for (std::uint32_t i = 0; i < count; ++i) {
            const std::uint32_t w = p.tracks[3][i];
            // Quantizes track i at `width` and tells whether it keeps the bound.
            const auto fits = [&](unsigned width) {
                set_width(p, seg, 3, i, width);
                quantize_segment(p, seg, 3, i);
                for (std::uint32_t smp = f; smp < e; ++smp)
                    if (std::fabs(p.decoded_w[std::size_t(smp) * W + w] - raw_w[std::size_t(smp) * W + w]) > 0.5f * weight_precision)
                        return false;
                for (std::size_t k = 0; k < check_time.size(); ++k) {
                    const cc::sample_position& q = check_pos[k];
                    if (!((q.g0 >= f && q.g0 < e) || (q.g1 >= f && q.g1 < e))) continue;
                    const float v = lerp1(p.decoded_w[q.g0 * W + w], p.decoded_w[q.g1 * W + w], step[3][w] ? 0.0f : q.alpha);
                    if (std::fabs(v - ref_w[k * W + w]) > 0.99f * weight_precision) return false;
                }
                return true;
            };
            unsigned width = estimate_width(p, seg, 3, i);
            while (width < cc::max_width && !fits(width)) ++width;
            while (width > 0 && fits(width - 1)) --width; // (the estimate may be high)
            fits(width);
        }
    }

    // ------------------------------------------------------------------------------------------
    // 5. The bytes, and their check
    // ------------------------------------------------------------------------------------------

    struct writer {
        std::vector<unsigned char> bytes;
        std::uint32_t align() {
            while (bytes.size() % 4) bytes.push_back(0);
            return static_cast<std::uint32_t>(bytes.size());
        }
        template <class T>
        void put(T v) {
            const std::size_t at = bytes.size();
            bytes.resize(at + sizeof v);
            cc::write<T>(bytes.data() + at, v);
        }
        void put_bytes(const void* p, std::size_t n) {
            const unsigned char* b = static_cast<const unsigned char*>(p);
            bytes.insert(bytes.end(), b, b + n);
        }
        void put_string(const std::string& str) {
            put(static_cast<std::uint32_t>(str.size()));
            put_bytes(str.data(), str.size());
            align();
        }
        template <class Value>
        void put_track(const track<Value, float>& t) {
            const auto values = [&](const Value& v) {
                if constexpr (std::is_same_v<Value, float>) put(v);
                else if constexpr (std::is_same_v<Value, glm::vec3>) {
                    put(v.x);
                    put(v.y);
                    put(v.z);
                } else {
                    put(v.x);
                    put(v.y);
                    put(v.z);
                    put(v.w);
                }
            };
            const bool cubic = t.mode() == interpolation::cubic_spline && t.in_tangents().size() == t.size() &&
                               t.out_tangents().size() == t.size();
            put(static_cast<std::uint32_t>(cubic || t.mode() != interpolation::cubic_spline ? t.mode() : interpolation::linear));
            put(static_cast<std::uint32_t>(t.size()));
            for (float time : t.times()) put(time);
            for (const Value& v : t.values()) values(v);
            if (cubic) {
                for (const Value& v : t.in_tangents()) values(v);
                for (const Value& v : t.out_tangents()) values(v);
            }
        }
    };

    std::size_t source_key_bytes() const {
        std::size_t bytes = 0;
        for (const channel& ch : c.channels) {
            const auto add = [&](const auto& t, std::size_t value) {
                bytes += t.size() * (sizeof(float) + value * (t.mode() == interpolation::cubic_spline ? 3 : 1));
            };
            add(ch.translation, 12);
            add(ch.rotation, 16);
            add(ch.scale, 12);
            add(ch.matrix, 64);
            for (const float_track<float>& w : ch.morph_weights) add(w, 4);
        }
        return bytes;
    }

    std::vector<unsigned char> encode(const plan& p, const error_measurement* measured, bool bound_met) const {
        const cc::clip_layout& pl = p.layout;
        writer out;
        cc::clip_header h{};
        out.bytes.resize(sizeof h);
        h.magic = cc::clip_magic;
        h.version = cc::clip_version;
        h.flags = (base ? cc::flag_additive : 0u) | (c.ticks_per_second_is_default ? cc::flag_ticks_default : 0u) |
                  (bound_met ? cc::flag_bound_met : 0u);
        h.joint_count = static_cast<std::uint32_t>(J);
        h.morph_weight_total = static_cast<std::uint32_t>(W);
        h.skeleton_hash = skeleton_fingerprint(s);
        h.wrap = static_cast<std::uint32_t>(c.wrap);
        h.duration = c.duration;
        h.ticks_per_second = c.ticks_per_second;
        h.span_count = static_cast<std::uint32_t>(spans.size());
        h.sample_count = samples();
        h.segment_length = p.length;
        h.segment_count = p.segments;
        for (unsigned g = 0; g < 4; ++g) {
            h.varying[g] = pl.h.varying[g];
            h.constant[g] = static_cast<std::uint32_t>(std::count(kind[g].begin(), kind[g].end(), cc::kind_constant));
        }
        h.off_joint_kinds = out.align();
        for (std::size_t j = 0; j < J; ++j) {
            std::uint16_t k = 0;
            for (unsigned g = 0; g < 3; ++g) k = static_cast<std::uint16_t>(k | (kind[g][j] << (2 * g)) | (step[g][j] << (6 + g)));
            out.put(k);
        }
        h.off_weight_kinds = out.align();
        for (std::size_t w = 0; w < W; ++w) out.put(static_cast<unsigned char>(kind[3][w] | (step[3][w] << 2)));
        h.off_constants = out.align();
        for (std::size_t j = 0; j < J; ++j) {
            const transform& k = constant_of[j];
            if (kind[0][j] == cc::kind_constant) {
                out.put(k.translation.x);
                out.put(k.translation.y);
                out.put(k.translation.z);
            }
            if (kind[1][j] == cc::kind_constant) {
                out.put(k.rotation.x);
                out.put(k.rotation.y);
                out.put(k.rotation.z);
                out.put(k.rotation.w);
            }
            if (kind[2][j] == cc::kind_constant) {
                out.put(k.scale.x);
                out.put(k.scale.y);
                out.put(k.scale.z);
            }
        }
        for (std::size_t w = 0; w < W; ++w)
            if (kind[3][w] == cc::kind_constant) out.put(constant_weight[w]);
        h.off_ranges = out.align();
        out.put_bytes(p.ranges.data(), p.ranges.size());
        h.off_spans = out.align();
        for (const cc::span_record& r : spans) {
            out.put(r.start);
            out.put(r.end);
            out.put(r.first);
            out.put(r.count);
        }
        // Records: per segment, bit-packed.
        std::vector<unsigned char> data;
        std::vector<std::uint32_t> offsets;
        std::vector<unsigned> widths(pl.components);
        for (std::uint32_t seg = 0; seg < p.segments; ++seg) {
            offsets.push_back(static_cast<std::uint32_t>(data.size()));
            const unsigned char* meta = p.meta.data() + std::size_t(seg) * pl.meta_stride;
            const std::uint64_t bits = cc::for_each_code(
                pl, p.ranges.data(), meta, [&](std::uint32_t k, const cc::component_code& code) { widths[k] = code.width; },
                [](std::uint32_t, unsigned) {});
            const std::uint32_t f = seg * p.length, e = std::min(samples(), f + p.length);
            const std::size_t start = data.size();
            data.resize(start + static_cast<std::size_t>((std::uint64_t(e - f) * bits + 7) / 8), 0);
            std::uint64_t bit = 0;
            for (std::uint32_t smp = f; smp < e; ++smp)
                for (std::uint32_t k = 0; k < pl.components; ++k) {
                    const std::uint32_t q = p.q[std::size_t(smp) * pl.components + k];
                    for (unsigned b = 0; b < widths[k]; ++b, ++bit)
                        if ((q >> b) & 1u) {
                            unsigned char& byte = data[start + static_cast<std::size_t>(bit >> 3)]; // (resized above)
                            byte = static_cast<unsigned char>(byte | (1u << (bit & 7u)));
                        }
                }
        }
        offsets.push_back(static_cast<std::uint32_t>(data.size()));
        h.off_segments = out.align();
        for (std::uint32_t o : offsets) out.put(o);
        h.off_meta = out.align();
        out.put_bytes(p.meta.data(), p.meta.size());
        h.off_data = out.align();
        data.resize(data.size() + cc::data_padding, 0);
        h.data_size = static_cast<std::uint32_t>(data.size());
        out.put_bytes(data.data(), data.size());
        h.off_name = out.align();
        h.name_size = static_cast<std::uint32_t>(c.name.size());
        out.put_bytes(c.name.data(), c.name.size());
        h.off_extras = out.align();
        out.put(static_cast<std::uint32_t>(c.float_channels.size()));
        out.put(static_cast<std::uint32_t>(c.vector_channels.size()));
        out.put(static_cast<std::uint32_t>(c.events.size()));
        out.put(static_cast<std::uint32_t>((c.motion.translation.empty() ? 0u : 1u) | (c.motion.rotation.empty() ? 0u : 2u)));
        for (const float_channel& ch : c.float_channels) {
            out.put_string(ch.name);
            out.put_track(ch.keys);
        }
        for (const vector_channel& ch : c.vector_channels) {
            out.put_string(ch.name);
            out.put_track(ch.keys);
        }
        for (const clip_event& ev : c.events) {
            out.put(ev.time);
            out.put_string(ev.name);
        }
        if (!c.motion.translation.empty()) out.put_track(c.motion.translation);
        if (!c.motion.rotation.empty()) out.put_track(c.motion.rotation);
        h.extras_size = static_cast<std::uint32_t>(out.bytes.size() - h.off_extras);
        while (out.bytes.size() % 16) out.bytes.push_back(0);
        h.size = static_cast<std::uint32_t>(out.bytes.size());
        h.precision = precision;
        h.shell = shell;
        h.weight_precision = weight_precision;
        h.max_error_joint = 0xffffffffu;
        if (measured) {
            h.max_error = static_cast<float>(measured->max_error);
            h.max_error_time = measured->time;
            h.max_weight_error = static_cast<float>(measured->max_weight_error);
            if (measured->joint != error::no_index) h.max_error_joint = static_cast<std::uint32_t>(measured->joint);
        }
        h.source_key_bytes = static_cast<std::uint32_t>(std::min<std::size_t>(source_key_bytes(), 0xffffffffu));
        std::memcpy(out.bytes.data(), &h, sizeof h);
        return out.bytes;
    }

    /// The clip as the scalar sampler reads it, at every check time: the worst ratio (error /
    /// precision, the weights' error / weight precision), and where.
    struct verdict {
        float worst_ratio = 0.0f;
        std::size_t check = 0, joint = error::no_index;
        error_measurement measured;
    };
    verdict verify(const std::vector<unsigned char>& bytes) const {
        verdict v;
        const result<compressed_clip> view = compressed_clip::view(bytes.data(), bytes.size());
        if (!view) {
            v.worst_ratio = INFINITY;
            return v;
        }
        compressed_sampling_context ctx;
        local_pose pose;
        std::vector<transform> local(J);
        std::vector<glm::mat4> model(J);
        for (std::size_t i = 0; i < check_time.size(); ++i) {
            (void)compressed_sampler::sample<lanes::f1>(*view, s, check_time[i], ctx, pose);
            for (std::size_t j = 0; j < J; ++j) local[j] = pose.get(j);
            model_of(local.data(), model.data());
            for (std::size_t j = 0; j < J; ++j) {
                const double e = vv(ref_model[i * J + j], model[j], shell_of[j]);
                const float r = static_cast<float>(e / static_cast<double>(prec[j]));
                if (e > v.measured.max_error) {
                    v.measured.max_error = e;
                    v.measured.joint = j;
                    v.measured.time = check_time[i];
                }
                if (r > v.worst_ratio) {
                    v.worst_ratio = r;
                    v.check = i;
                    v.joint = j;
                }
            }
            for (std::size_t w = 0; w < W; ++w) {
                const double e = std::fabs(static_cast<double>(pose.morph_weights()[w]) - static_cast<double>(ref_w[i * W + w]));
                v.measured.max_weight_error = std::max(v.measured.max_weight_error, e);
                const float r = static_cast<float>(e / static_cast<double>(weight_precision));
                if (r > v.worst_ratio) {
                    v.worst_ratio = r;
                    v.check = i;
                    v.joint = error::no_index;
                }
            }
        }
        v.measured.checks = check_time.size();
        return v;
    }

    struct outcome {
        std::vector<unsigned char> bytes;
        verdict checked;
        std::uint32_t length = 0;
        std::size_t segments = 0;
    };

    outcome compress_with(std::uint32_t length) {
        plan p;
        start_plan(p, length);
        for (std::uint32_t seg = 0; seg < p.segments; ++seg) search_segment(p, seg);
        outcome o;
        o.length = length;
        o.segments = p.segments;
        o.bytes = encode(p, nullptr, false);
        o.checked = verify(o.bytes);
        // Rounding the search did not see: raise the worst joint's chain where it fails.
        for (int round = 0; round < 48 && o.checked.worst_ratio > 1.0f && is_finite(o.checked.worst_ratio); ++round) {
            const cc::sample_position& at = check_pos[o.checked.check];
            const std::uint32_t segs[2] = {at.g0 / length, at.g1 / length};
            bool raised = false;
            for (std::uint32_t seg : segs) {
                if (o.checked.joint == error::no_index) {
                    for (std::uint32_t i = 0; i < p.layout.h.varying[3]; ++i) {
                        const unsigned w = width_of(p, seg, 3, i);
                        if (w < cc::max_width) {
                            set_width(p, seg, 3, i, w + 1);
                            raised = true;
                        }
                    }
                } else {
                    for (joint_index j = static_cast<joint_index>(o.checked.joint); j >= 0; j = s.parent(static_cast<std::size_t>(j)))
                        for (unsigned g = 0; g < 3; ++g)
                            for (std::uint32_t i = 0; i < p.layout.h.varying[g]; ++i)
                                if (p.tracks[g][i] == static_cast<std::uint32_t>(j)) {
                                    const unsigned w = width_of(p, seg, g, i);
                                    if (w < cc::max_width) {
                                        set_width(p, seg, g, i, w + 1);
                                        raised = true;
                                    }
                                }
                }
                quantize_segment(p, seg);
                if (segs[1] == segs[0]) break;
            }
            if (!raised) break;
            o.bytes = encode(p, nullptr, false);
            o.checked = verify(o.bytes);
        }
        o.bytes = encode(p, &o.checked.measured, o.checked.worst_ratio <= 1.0f);
        return o;
    }

    void shear_notes() {
        for (const channel& ch : c.channels) {
            if (!ch.has_matrix() || ch.joint >= J) continue;
            float worst = 0.0f;
            for (std::size_t k = 0; k < ch.matrix.size(); ++k) {
                const glm::mat4& m = ch.matrix.value(k);
                const glm::mat4 back = to_matrix(to_transform(m));
                float scale = 0.0f, diff = 0.0f;
                for (int col = 0; col < 3; ++col) {
                    scale = std::max(scale, glm::length(glm::vec3(m[col])));
                    diff = std::max(diff, glm::length(glm::vec3(m[col]) - glm::vec3(back[col])));
                }
                if (scale > 0.0f) worst = std::max(worst, diff / scale);
            }
            if (worst > 1e-4f)
                notes.push_back("joint " + std::to_string(ch.joint) + " '" + s.name(ch.joint) +
                                "': its matrix keys have shear (up to " + float_to_string(worst, 3) +
                                " of the axes' length), which a TRS pose cannot hold: compressed as TRS, as sampling_job "
                                "samples it");
        }
    }

    outcome run(compression_report* report) {
        resolve();
        shear_notes();
        build_timeline();
        classify();
        outcome best = compress_with(16);
        if (samples() > 16) {
            outcome other = compress_with(32);
            const bool better_bound = other.checked.worst_ratio <= 1.0f && best.checked.worst_ratio > 1.0f;
            const bool same_bound = (other.checked.worst_ratio <= 1.0f) == (best.checked.worst_ratio <= 1.0f);
            if (better_bound || (same_bound && other.bytes.size() < best.bytes.size())) best = std::move(other);
        }
        if (size_capped)
            notes.push_back("the spans were not refined further: more samples would pass the format's " +
                            std::to_string(cc::max_samples) + " or memory_limit");
        if (rate_capped)
            notes.push_back("some span's samples cannot follow the source within half the precision at the largest sample "
                            "rate allowed (max_sample_rate " + float_to_string(settings.max_sample_rate, 4) + " Hz)");
        const bool met = best.checked.worst_ratio <= 1.0f;
        if (!met)
            notes.push_back("the bound is not met: the largest error is " + float_to_string(best.checked.measured.max_error, 4) +
                            " (precision " + float_to_string(precision, 4) + ")" +
                            (best.checked.measured.max_weight_error > static_cast<double>(weight_precision)
                                 ? ", the largest weight error " + float_to_string(best.checked.measured.max_weight_error, 4)
                                 : std::string()));
        if (report) {
            compression_report& r = *report;
            r = compression_report{};
            // (The stats as the clip stores them: one source of truth.)
            r.stats = compressed_clip::view(best.bytes.data(), best.bytes.size())->stats();
            r.bytes = best.bytes.size();
            r.spans = spans.size();
            r.segment_length = best.length;
            const cc::span_record& first = spans.front();
            r.sample_rate = first.count > 1 ? static_cast<float>(first.count - 1) * tps / (first.end - first.start) : 0.0f;
            for (unsigned g = 0; g < 4; ++g)
                for (unsigned char k : kind[g]) {
                    if (k == cc::kind_default) ++r.default_tracks;
                    else if (k == cc::kind_constant) ++r.constant_tracks;
                    else ++r.varying_tracks;
                }
            r.notes = notes;
        }
        return best;
    }
};

} // namespace impl

inline status compress_job::validate() const {
    const auto bad = [](std::string what, std::size_t index = error::no_index) {
        return impl::make_error(errc::invalid_argument, "compress_job: " + what, index);
    };
    if (!input) return bad("no input clip");
    if (!skeleton) return bad("no skeleton");
    if (!output) return bad("no output");
    const compression_settings& st = settings;
    const auto positive = [](float v) { return is_finite(v) && v >= 0.0f; };
    if (!positive(st.precision)) return bad("precision " + impl::float_to_string(st.precision) + " (> 0, or 0 for the default)");
    if (!positive(st.shell_distance))
        return bad("shell_distance " + impl::float_to_string(st.shell_distance) + " (> 0, or 0 for the default)");
    if (!(is_finite(st.weight_precision) && st.weight_precision > 0.0f))
        return bad("weight_precision " + impl::float_to_string(st.weight_precision) + " (> 0)");
    if (!(is_finite(st.check_rate) && st.check_rate >= 1.0f && st.check_rate <= 1000.0f))
        return bad("check_rate " + impl::float_to_string(st.check_rate) + " (1 to 1000)");
    if (!(is_finite(st.resample_rate) && st.resample_rate >= 1.0f))
        return bad("resample_rate " + impl::float_to_string(st.resample_rate) + " (1 to max_sample_rate)");
    if (!(is_finite(st.max_sample_rate) && st.max_sample_rate >= st.resample_rate && st.max_sample_rate <= 1000.0f))
        return bad("max_sample_rate " + impl::float_to_string(st.max_sample_rate) + " (resample_rate to 1000)");
    const std::size_t n = skeleton->size();
    const std::vector<float>* per_joint[2] = {&st.joint_precision, &st.joint_shell};
    const char* names[2] = {"joint_precision", "joint_shell"};
    for (unsigned k = 0; k < 2; ++k) {
        const std::vector<float>& v = *per_joint[k];
        if (!v.empty() && v.size() != n)
            return impl::make_error(errc::size_mismatch, std::string("compress_job: ") + names[k] + " has " +
                                                             std::to_string(v.size()) + " values for " + std::to_string(n) + " joints");
        for (std::size_t j = 0; j < v.size(); ++j)
            if (!positive(v[j]))
                return bad(std::string(names[k]) + "[" + std::to_string(j) + "] ('" + skeleton->name(j) + "') " +
                               impl::float_to_string(v[j]) + " (> 0, or 0 for the clip's)",
                           j);
    }
    if (st.additive_base && st.additive_base->size() != n)
        return impl::make_error(errc::size_mismatch, "compress_job: the additive base has " +
                                                         std::to_string(st.additive_base->size()) + " joints, the skeleton " +
                                                         std::to_string(n));
    if (skeleton->size() > impl::cc::max_joints)
        return impl::make_error(errc::unsupported, "compress_job: more than " + std::to_string(impl::cc::max_joints) + " joints");
    if (!(st.memory_limit > 0))
        return bad("memory_limit 0 (> 0)");
    if (status clip_ok = validate_clip(*input, *skeleton); !clip_ok) return clip_ok;
    impl::compressor plan(*input, *skeleton, st);
    return plan.check_size();
}

inline status compress_job::run() const {
    if (status st = validate(); !st) return st;
    impl::compressor work(*input, *skeleton, settings);
    impl::compressor::outcome o = work.run(report);
    result<compressed_clip> made = compressed_clip::copy(o.bytes.data(), o.bytes.size());
    if (!made) return made.error(); // (a bug: the compressor writes what validation accepts)
    *output = std::move(*made);
    return {};
}

inline result<error_measurement> measure_error(const clip& source, const compressed_clip& compressed, const skeleton& s,
                                               float shell_distance, float rate_hz, span<const float> joint_shell,
                                               const local_pose* additive_base) {
    if (!(is_finite(shell_distance) && shell_distance > 0.0f) || !(is_finite(rate_hz) && rate_hz > 0.0f))
        return impl::make_error(errc::invalid_argument, "measure_error: shell distance and rate must be > 0");
    if (status st = validate_clip(source, s); !st) return st.error();
    error_measurement m;
    sampling_context ref_ctx;
    compressed_sampling_context ctx;
    local_pose a, b;
    sampling_job reference{&source, &s, 0.0f, &ref_ctx, &a};
    compressed_sampling_job sampled{&compressed, &s, 0.0f, &ctx, &b};
    std::vector<glm::mat4> ma(s.size()), mb(s.size());
    const double end = static_cast<double>(std::max(compressed.duration(), 0.0f));
    const double step = static_cast<double>(compressed.ticks_per_second()) / static_cast<double>(rate_hz);
    const double checks = std::floor(end / step) + 2.0; // (the last check is at the end)
    if (!(checks <= static_cast<double>(impl::cc::max_samples)))
        return impl::make_error(errc::unsupported, "measure_error: " + impl::float_to_string(rate_hz) + " Hz over " +
                                                       impl::float_to_string(compressed.duration()) +
                                                       " ticks needs more than " + std::to_string(impl::cc::max_samples) +
                                                       " checks");
    std::vector<transform> base_pose;
    if (additive_base)
        for (std::size_t j = 0; j < s.size(); ++j) base_pose.push_back(additive_base->get(j));
    const auto model_of = [&](const local_pose& p, std::vector<glm::mat4>& out) {
        for (std::size_t j = 0; j < s.size(); ++j) {
            const glm::mat4 l = impl::model_builder::local_matrix(p.get(j), additive_base ? &base_pose[j] : nullptr);
            const joint_index par = s.parent(j);
            out[j] = par < 0 ? l : out[static_cast<std::size_t>(par)] * l;
        }
    };
    for (std::size_t i = 0;; ++i) {
        double t = static_cast<double>(i) * step;
        const bool last = !(t < end);
        if (last) t = end;
        const float tick = static_cast<float>(t);
        reference.time = sampled.time = tick;
        if (status st1 = reference.run(); !st1) return st1.error();
        if (status st2 = sampled.run(); !st2) return st2.error();
        model_of(a, ma);
        model_of(b, mb);
        std::size_t j = error::no_index;
        const double e = virtual_vertex_error(ma.data(), mb.data(), s.size(), shell_distance, &j, joint_shell);
        if (e > m.max_error || m.joint == error::no_index) {
            if (e > m.max_error) m.time = tick;
            m.max_error = std::max(m.max_error, e);
            if (j != error::no_index) m.joint = j;
        }
        for (std::size_t w = 0; w < a.morph_weights().size() && w < b.morph_weights().size(); ++w)
            m.max_weight_error = std::max(m.max_weight_error, std::fabs(static_cast<double>(a.morph_weights()[w]) -
                                                                        static_cast<double>(b.morph_weights()[w])));
        ++m.checks;
        if (last) break;
    }
    return m;
}

} // namespace keyblend
