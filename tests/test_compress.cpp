// Tests for keyblend/compress.hpp: the error bound on clips built to be hard and on the shared .X
// files, what is stored exactly (bind pose, constants), discontinuities, the sampling paths
// (scalar, SSE2, AVX2, AVX-512; forward and random access), and the checks of compress_job,
// compressed_sampling_job and compressed_clip::view.
#include <keyblend/compress.hpp>

#include "compress_helpers.hpp"
#include "helpers.hpp"

#ifdef KEYBLEND_TEST_IO
#include <keyblend/io/xfile.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::bit_equal;
using kbtest::local_to_model;
using kbtest::sample_clip;

namespace {

constexpr float tps = 4800.0f;
constexpr float frame = 160.0f; // 30 Hz in ticks

/// A chain of n joints, each `length` along x from its parent (the root at `origin`), bound with a
/// small rotation each.
skeleton chain(std::size_t n, float length, glm::vec3 origin = glm::vec3(0.0f),
               const std::vector<std::vector<float>>& morph = {}) {
    std::vector<joint_desc> in(n);
    for (std::size_t j = 0; j < n; ++j) {
        in[j].name = "j" + std::to_string(j);
        in[j].parent = j == 0 ? no_parent : static_cast<joint_index>(j - 1);
        const glm::quat r = glm::angleAxis(0.05f * float(j % 5), glm::normalize(glm::vec3(1, 2, 3)));
        in[j].bind_local = to_matrix(transform{j == 0 ? origin : glm::vec3(length, 0, 0), r, glm::vec3(1)});
        if (j < morph.size()) in[j].morph_weights = morph[j];
    }
    return skeleton::from_parents(in).value();
}

/// Keys every `step` ticks over [0, duration] of f(t) for each joint's rotation / translation.
template <class F>
rotation_track<float> rotation_keys(float duration, float step, F f, interpolation mode = interpolation::linear) {
    rotation_track<float> t(mode);
    for (float time = 0.0f; time <= duration + 0.5f; time += step) t.push_back(time, f(time));
    return t;
}
template <class F>
position_track<float> vector_keys(float duration, float step, F f, interpolation mode = interpolation::linear) {
    position_track<float> t(mode);
    for (float time = 0.0f; time <= duration + 0.5f; time += step) t.push_back(time, f(time));
    return t;
}

/// An empty clip `frames` frames long at 30 Hz, in ticks of 1/4800 s.
clip frames_long(int frames) {
    clip c;
    c.ticks_per_second = tps;
    c.duration = float(frames) * frame;
    return c;
}

compressed_clip compress(const clip& c, const skeleton& s, const compression_settings& st,
                         compression_report* report = nullptr) {
    compressed_clip out;
    compress_job job;
    job.input = &c;
    job.skeleton = &s;
    job.settings = st;
    job.output = &out;
    job.report = report;
    const status ok = job.run();
    REQUIRE_MESSAGE(ok, (ok ? std::string() : ok.error().message));
    return out;
}

/// The error of `cc` against `c` at `times` (ticks), as compress_job measures it.
double error_at(const clip& c, const compressed_clip& cc, const skeleton& s, float shell, const std::vector<float>& times,
                const local_pose* base = nullptr) {
    sampling_context a;
    compressed_sampling_context b;
    local_pose pa, pb;
    std::vector<glm::mat4> ma(s.size()), mb(s.size());
    double worst = 0.0;
    for (float t : times) {
        REQUIRE(sample_clip(c, s, t, a, pa));
        REQUIRE(sample_clip(cc, s, t, b, pb));
        const auto models = [&](const local_pose& p, std::vector<glm::mat4>& m) {
            for (std::size_t j = 0; j < s.size(); ++j) {
                const transform bj = base ? base->get(j) : transform{};
                const glm::mat4 l = impl::model_builder::local_matrix(p.get(j), base ? &bj : nullptr);
                m[j] = s.parent(j) < 0 ? l : m[std::size_t(s.parent(j))] * l;
            }
        };
        models(pa, ma);
        models(pb, mb);
        worst = std::max(worst, virtual_vertex_error(ma.data(), mb.data(), s.size(), shell));
    }
    return worst;
}

/// What the SIMD paths' errors may differ from the scalar one's the compressor checks by: float
/// rounding at the model's size (a few units in the last place of its largest distance from the
/// origin, the bind pose's joints plus the shell), not a fraction of the precision: a long chain's
/// far vertices round at ten units where its bound is 1e-4.
double rounding_at_size(const skeleton& s, float shell) {
    double extent = 0.0;
    for (std::size_t j = 0; j < s.size(); ++j) extent = std::max(extent, double(glm::length(glm::vec3(s.bind_model()[j][3]))));
    return 8.0 * double(std::numeric_limits<float>::epsilon()) * (extent + double(shell));
}

/// Compresses and checks the bound: the report's, measure_error's at 60 Hz, and the errors at
/// `extra` times; returns the compressed clip.
compressed_clip compress_within(const clip& c, const skeleton& s, const compression_settings& st,
                                const std::vector<float>& extra = {}, compression_report* out_report = nullptr) {
    compression_report report;
    compressed_clip cc = compress(c, s, st, &report);
    CHECK_MESSAGE(report.stats.bound_met, "largest error " << report.stats.max_error << " (precision " << report.stats.precision << ")");
    CHECK(report.stats.max_error <= report.stats.precision);
    CHECK(cc.stats().bound_met);
    CHECK(cc.stats().max_error == report.stats.max_error);
    const result<error_measurement> m =
        measure_error(c, cc, s, report.stats.shell_distance, 60.0f, {}, st.additive_base);
    REQUIRE(m);
    // The SIMD paths differ from the scalar one the compressor checks by rounding.
    const double within = double(report.stats.precision) * 1.001 + rounding_at_size(s, report.stats.shell_distance);
    CHECK(m->max_error <= within);
    CHECK(m->max_weight_error <= double(report.stats.weight_precision) * 1.001);
    if (!extra.empty()) CHECK(error_at(c, cc, s, report.stats.shell_distance, extra, st.additive_base) <= within);
    if (out_report) *out_report = report;
    return cc;
}

compression_settings bound(float precision, float shell) {
    compression_settings st;
    st.precision = precision;
    st.shell_distance = shell;
    return st;
}

} // namespace

TEST_CASE("compress: rotations near w = 0 keep the bound (a component is dropped per segment, never w alone)") {
    // Half-turns and more about tilted axes: w crosses 0 (where dropping w, ACL's way, loses the
    // most), on a long lever.
    const skeleton s = chain(4, 1.0f);
    clip c = frames_long(60);
    for (std::size_t j = 0; j < 4; ++j) {
        channel ch;
        ch.joint = j;
        const glm::vec3 axis = glm::normalize(glm::vec3(0.2f * float(j), 1.0f, 0.3f));
        ch.rotation = rotation_keys(c.duration, frame, [&](float t) {
            return glm::angleAxis(glm::pi<float>() - 0.3f + 0.6f * t / c.duration + 0.1f * float(j), axis);
        });
        c.channels.push_back(ch);
    }
    compression_report r;
    const compressed_clip cc = compress_within(c, s, bound(1e-4f, 0.05f), {}, &r);
    CHECK(r.varying_tracks >= 4);
    CHECK(cc.size() < r.stats.source_key_bytes);
}

TEST_CASE("compress: large translations far from the origin keep the bound") {
#if defined(__FAST_MATH__)
    // compress.hpp: the compression's bound assumes IEEE arithmetic; under -ffast-math's
    // reassociation these inputs miss it (sampling compressed clips is unaffected).
    MESSAGE("skipped under -ffast-math: compress_job's bound needs IEEE arithmetic");
    return;
#endif
    const skeleton s = chain(3, 1.0f, glm::vec3(1.0e4f, -2.0e4f, 5.0e3f));
    clip c = frames_long(90);
    channel root;
    root.joint = 0;
    root.translation = vector_keys(c.duration, frame, [&](float t) {
        const float u = t / c.duration;
        return glm::vec3(1.0e4f + 300.0f * std::sin(6.0f * u), -2.0e4f + 50.0f * u, 5.0e3f + 20.0f * std::cos(9.0f * u));
    });
    c.channels.push_back(root);
    channel arm;
    arm.joint = 1;
    arm.rotation = rotation_keys(c.duration, frame, [&](float t) { return glm::angleAxis(2.0f * t / c.duration, glm::vec3(0, 0, 1)); });
    c.channels.push_back(arm);
    compress_within(c, s, bound(1e-3f, 0.1f));
}

TEST_CASE("compress: a long chain, where every joint's error adds up, keeps the bound") {
    const std::size_t n = 40;
    const skeleton s = chain(n, 0.25f);
    clip c = frames_long(45);
    for (std::size_t j = 0; j < n; ++j) {
        channel ch;
        ch.joint = j;
        ch.rotation = rotation_keys(c.duration, frame, [&](float t) {
            const float u = t / c.duration;
            return glm::angleAxis(0.2f * std::sin(3.0f * u + 0.3f * float(j)), glm::normalize(glm::vec3(0.3f, 1.0f, float(j % 3))));
        });
        c.channels.push_back(ch);
    }
    compress_within(c, s, bound(1e-4f, 0.03f));
}

TEST_CASE("compress: scales near zero, negative and mirrored keep the bound") {
    const skeleton s = chain(4, 1.0f);
    clip c = frames_long(60);
    channel a;
    a.joint = 1;
    a.scale = vector_keys(c.duration, frame, [&](float t) {
        const float u = t / c.duration;
        return glm::vec3(1.0f - 0.999f * u, 1.0f, 1.0f - 0.5f * u);
    });
    c.channels.push_back(a);
    channel b;
    b.joint = 2;
    b.scale = vector_keys(c.duration, frame, [&](float t) {
        const float u = t / c.duration;
        return glm::vec3(-1.0f, 1.0f + u, -0.5f - u); // mirrored, and negative on two axes
    });
    b.rotation = rotation_keys(c.duration, frame, [&](float t) { return glm::angleAxis(t / c.duration, glm::vec3(0, 1, 0)); });
    c.channels.push_back(b);
    compress_within(c, s, bound(1e-4f, 0.05f));
}

TEST_CASE("compress: bind-pose components are not stored and come back exactly - constant ones are stored once, exactly") {
    const skeleton s = chain(5, 1.0f);
    clip c = frames_long(30);
    // joint 0: no channel; joint 1: every key at the bind pose; joint 2: one constant value (not
    // the bind pose) keyed every frame; joint 3: varying rotation, constant translation.
    const transform bind1 = s.bind_transforms()[1];
    channel b;
    b.joint = 1;
    b.rotation = rotation_keys(c.duration, frame, [&](float) { return bind1.rotation; });
    b.translation = vector_keys(c.duration, frame, [&](float) { return bind1.translation; });
    c.channels.push_back(b);
    const glm::quat q2 = glm::angleAxis(1.0f, glm::normalize(glm::vec3(1, 1, 0)));
    channel k;
    k.joint = 2;
    k.rotation = rotation_keys(c.duration, frame, [&](float) { return q2; });
    k.scale = vector_keys(c.duration, frame, [&](float) { return glm::vec3(1.5f, 2.0f, 0.5f); });
    c.channels.push_back(k);
    channel v;
    v.joint = 3;
    v.rotation = rotation_keys(c.duration, frame, [&](float t) { return glm::angleAxis(t / c.duration, glm::vec3(1, 0, 0)); });
    v.translation = vector_keys(c.duration, frame, [&](float) { return glm::vec3(0.25f, -2.0f, 3.0f); });
    c.channels.push_back(v);
    compression_report r;
    const compressed_clip cc = compress_within(c, s, bound(1e-4f, 0.05f), {}, &r);
    CHECK(r.varying_tracks == 1);
    CHECK(r.constant_tracks == 3); // joint 2's rotation and scale, joint 3's translation
    CHECK(r.default_tracks == 3 * 5 - 4);
    compressed_sampling_context ctx;
    local_pose p;
    for (float t : {0.0f, 700.0f, 2345.5f, c.duration}) {
        REQUIRE(sample_clip(cc, s, t, ctx, p));
        CHECK(bit_equal(p.get(0), s.bind_transforms()[0]));
        CHECK(bit_equal(p.get(1), s.bind_transforms()[1]));
        CHECK(bit_equal(p.get(4), s.bind_transforms()[4]));
        CHECK(bit_equal(p.get(2).rotation, q2));
        CHECK(bit_equal(p.get(2).scale, glm::vec3(1.5f, 2.0f, 0.5f)));
        CHECK(bit_equal(p.get(2).translation, s.bind_transforms()[2].translation));
        CHECK(bit_equal(p.get(3).translation, glm::vec3(0.25f, -2.0f, 3.0f)));
    }
    CHECK(kbtest::padding_is_identity(p));
}

TEST_CASE("compress: a cut (two keys at one time) stays a jump, and step tracks hold their keys") {
#if defined(__FAST_MATH__)
    // compress.hpp: the compression's bound assumes IEEE arithmetic; under -ffast-math's
    // reassociation these inputs miss it (sampling compressed clips is unaffected).
    MESSAGE("skipped under -ffast-math: compress_job's bound needs IEEE arithmetic");
    return;
#endif
    const skeleton s = chain(3, 1.0f);
    clip c = frames_long(40);
    channel ch;
    ch.joint = 1;
    // Keys every frame, with a cut at frame 17 (a different pose from there on).
    const float cut = 17 * frame;
    for (float t = 0.0f; t <= c.duration; t += frame) {
        const float u = t / c.duration;
        if (t == cut) ch.rotation.push_back(t, glm::angleAxis(0.3f + u, glm::vec3(0, 0, 1)));
        ch.rotation.push_back(t, glm::angleAxis(t >= cut ? 2.0f - u : 0.3f + u, glm::vec3(0, 0, 1)));
    }
    REQUIRE(validate_track(ch.rotation));
    c.channels.push_back(ch);
    channel st;
    st.joint = 2;
    st.translation = position_track<float>(interpolation::step);
    for (float t = 0.0f; t <= c.duration; t += 4 * frame) st.translation.push_back(t, glm::vec3(1.0f + t / 1000.0f, 0, 0));
    c.channels.push_back(st);
    const std::vector<float> near_cut = {cut - 40.0f, cut - 1.0f, cut - 0.01f, cut, cut + 0.01f, cut + 1.0f, cut + 40.0f,
                                         4 * frame - 0.5f, 4 * frame, 8 * frame - 1.0f, 8 * frame + 1.0f};
    const compressed_clip cc = compress_within(c, s, bound(1e-4f, 0.05f), near_cut);
    // The jump itself: just before the cut and at it, the rotations differ as the source's do.
    compressed_sampling_context ctx;
    local_pose before, at;
    REQUIRE(sample_clip(cc, s, cut - 0.01f, ctx, before));
    REQUIRE(sample_clip(cc, s, cut, ctx, at));
    // (0.725 rad about z before, 1.575 after: the source's jump.)
    CHECK(kbtest::rotation_angle(before.get(1).rotation, at.get(1).rotation) == doctest::Approx(0.85).epsilon(1e-3));
}

TEST_CASE("compress: cubic splines and keys off any grid are resampled densely enough to keep the bound") {
    const skeleton s = chain(3, 1.0f);
    clip c;
    c.ticks_per_second = 1.0f; // seconds as ticks, keys at irregular times
    c.duration = 2.0f;
    channel ch;
    ch.joint = 1;
    ch.translation = position_track<float>(interpolation::cubic_spline);
    ch.rotation = rotation_track<float>(interpolation::cubic_spline);
    const float times[] = {0.0f, 0.37f, 0.81f, 1.3f, 2.0f};
    for (float t : times) {
        ch.translation.push_back(t, glm::vec3(3.0f, -1.0f, 0.5f), glm::vec3(std::sin(3.0f * t), t * t, 0.2f), glm::vec3(-2.0f, 0.5f, 1.0f));
        const glm::quat q = glm::angleAxis(1.5f * t, glm::normalize(glm::vec3(1, 1, 0)));
        ch.rotation.push_back(t, make_quat(0.1f, 0.3f, -0.2f, 0.1f), q, make_quat(-0.1f, 0.2f, 0.1f, -0.3f));
    }
    REQUIRE(validate_clip(c, s));
    c.channels.push_back(ch);
    channel lin;
    lin.joint = 2;
    for (float t : {0.0f, 0.123f, 0.5f, 1.777f, 1.9f}) lin.rotation.push_back(t, glm::angleAxis(t, glm::vec3(0, 1, 0)));
    c.channels.push_back(lin);
    compression_settings st = bound(1e-4f, 0.05f);
    compression_report r;
    // These curves bend hard between keys (in- and out-tangents differ): at the default
    // max_sample_rate the samples cannot follow them within the bound, and the report says so.
    compress(c, s, st, &r);
    CHECK_FALSE(r.stats.bound_met);
    REQUIRE(r.notes.size() == 2);
    CHECK(r.notes[0].find("max_sample_rate") != std::string::npos);
    CHECK(r.notes[1].find("not met") != std::string::npos);
    st.max_sample_rate = 1000.0f;
    compressed_clip cc = compress_within(c, s, st, {}, &r);
    CHECK(r.stats.samples > 2 * 60); // more than 60 Hz where the curves need it
    // Between the checked times the error is an interpolation's: close to the bound, not far over.
    std::vector<float> fine;
    for (int i = 0; i <= 2000; ++i) fine.push_back(c.duration * float(i) / 2000.0f);
    CHECK(error_at(c, cc, s, 0.05f, fine) <= 1.5 * 1e-4);
}

TEST_CASE("compress: one-key and zero-length clips") {
    const skeleton s = chain(3, 1.0f);
    SUBCASE("no keys, zero length") {
        clip c;
        const compressed_clip cc = compress_within(c, s, bound(1e-4f, 0.05f));
        compressed_sampling_context ctx;
        local_pose p;
        for (float t : {-1.0f, 0.0f, 10.0f, NAN}) {
            REQUIRE(sample_clip(cc, s, t, ctx, p));
            for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(p.get(j), s.bind_transforms()[j]));
        }
        CHECK(cc.stats().samples == 1);
    }
    SUBCASE("one key each, zero length") {
        clip c;
        channel ch;
        ch.joint = 1;
        ch.rotation.push_back(0.0f, glm::angleAxis(0.5f, glm::vec3(0, 1, 0)));
        ch.translation.push_back(0.0f, glm::vec3(1, 2, 3));
        c.channels.push_back(ch);
        const compressed_clip cc = compress_within(c, s, bound(1e-4f, 0.05f));
        compressed_sampling_context ctx;
        local_pose p;
        REQUIRE(sample_clip(cc, s, 5.0f, ctx, p));
        CHECK(bit_equal(p.get(1).rotation, glm::angleAxis(0.5f, glm::vec3(0, 1, 0))));
        CHECK(bit_equal(p.get(1).translation, glm::vec3(1, 2, 3)));
    }
    SUBCASE("one key, a duration") {
        clip c;
        c.duration = 100.0f;
        channel ch;
        ch.joint = 2;
        ch.rotation.push_back(50.0f, glm::angleAxis(0.5f, glm::vec3(0, 0, 1)));
        c.channels.push_back(ch);
        compress_within(c, s, bound(1e-4f, 0.05f));
    }
}

TEST_CASE("compress: additive clips are measured on top of their base pose") {
    const skeleton s = chain(4, 1.0f);
    // The base: a pose far from the bind pose (and with a scale), the clip small differences.
    local_pose base(s);
    for (std::size_t j = 0; j < s.size(); ++j) {
        transform t = base.get(j);
        t.rotation = glm::angleAxis(0.7f, glm::vec3(0, 0, 1)) * t.rotation;
        t.scale = glm::vec3(2.0f);
        base.set(j, t);
    }
    clip c = frames_long(30);
    for (std::size_t j = 0; j < s.size(); ++j) {
        channel ch;
        ch.joint = j;
        ch.rotation = rotation_keys(c.duration, frame, [&](float t) { return glm::angleAxis(0.2f * t / c.duration, glm::vec3(0, 1, 0)); });
        ch.translation = vector_keys(c.duration, frame, [&](float t) { return glm::vec3(0.0f, 0.1f * t / c.duration, 0.0f); });
        ch.scale = vector_keys(c.duration, frame, [&](float) { return glm::vec3(1.0f); });
        c.channels.push_back(ch);
    }
    compression_settings st = bound(1e-4f, 0.05f);
    st.additive_base = &base;
    const compressed_clip cc = compress_within(c, s, st, {0.0f, 1234.0f, c.duration});
    CHECK(cc.additive());
    // Measured without the base, the same clip is another clip's error: the base's scale of 2
    // doubles every lever, so the additive compression is finer than one that ignored it.
    compression_report plain;
    compress(c, s, bound(1e-4f, 0.05f), &plain);
    CHECK(plain.stats.bound_met);
}

TEST_CASE("compress: morph weights, step weights and their bound in weight units") {
    const skeleton s = chain(3, 1.0f, glm::vec3(0.0f), {{}, {0.25f, 0.0f, 1.0f}});
    clip c = frames_long(30);
    channel ch;
    ch.joint = 1;
    ch.morph_weights.resize(3);
    for (float t = 0.0f; t <= c.duration; t += frame) ch.morph_weights[0].push_back(t, 0.5f + 0.5f * std::sin(t / 700.0f));
    ch.morph_weights[2] = float_track<float>(interpolation::step);
    for (float t = 0.0f; t <= c.duration; t += 5 * frame) ch.morph_weights[2].push_back(t, t < 2000.0f ? 0.0f : 1.0f);
    c.channels.push_back(ch);
    compression_settings st = bound(1e-4f, 0.05f);
    st.weight_precision = 1e-3f;
    const compressed_clip cc = compress_within(c, s, st, {799.0f, 800.0f, 2399.0f, 2400.0f});
    compressed_sampling_context ctx;
    local_pose p;
    REQUIRE(sample_clip(cc, s, 1000.0f, ctx, p));
    REQUIRE(p.morph_weights().size() == 3);
    CHECK(p.morph_weights()[1] == 0.0f);   // bind, not stored
    CHECK(p.morph_weights()[2] == 0.0f);   // step, before its change
    REQUIRE(sample_clip(cc, s, 2400.0f, ctx, p));
    CHECK(p.morph_weights()[2] == doctest::Approx(1.0f).epsilon(1e-3));
}

TEST_CASE("compress: matrix keys compress as TRS - keys with shear are reported") {
    const skeleton s = chain(3, 1.0f);
    clip c = frames_long(30);
    channel ch;
    ch.joint = 1;
    for (float t = 0.0f; t <= c.duration; t += frame)
        ch.matrix.push_back(t, to_matrix(transform{glm::vec3(1, t / 1000.0f, 0), glm::angleAxis(t / 2000.0f, glm::vec3(0, 0, 1)), glm::vec3(1)}));
    c.channels.push_back(ch);
    compression_report r;
    compress_within(c, s, bound(1e-4f, 0.05f), {}, &r);
    CHECK(r.notes.empty());
    glm::mat4 shear(1.0f);
    shear[1][0] = 0.3f; // y axis leaning along x
    for (std::size_t k = 0; k < c.channels[0].matrix.size(); ++k) c.channels[0].matrix.value(k) = c.channels[0].matrix.value(k) * shear;
    compress_within(c, s, bound(1e-4f, 0.05f), {}, &r);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("shear") != std::string::npos);
    CHECK(r.notes[0].find("'j1'") != std::string::npos);
}

TEST_CASE("compress: per-joint precision and shell distances") {
    const skeleton s = chain(6, 1.0f);
    clip c = frames_long(30);
    for (std::size_t j = 0; j < s.size(); ++j) {
        channel ch;
        ch.joint = j;
        ch.rotation = rotation_keys(c.duration, frame, [&](float t) { return glm::angleAxis(std::sin(t / 900.0f + float(j)), glm::vec3(0, 1, 0)); });
        c.channels.push_back(ch);
    }
    compression_settings coarse = bound(1e-2f, 0.05f);
    compression_settings fine = coarse;
    fine.joint_precision.assign(s.size(), 0.0f);
    fine.joint_precision[5] = 1e-5f; // the leaf much finer: its chain must follow
    fine.joint_shell.assign(s.size(), 0.0f);
    fine.joint_shell[5] = 0.5f;
    compression_report rc, rf;
    const compressed_clip a = compress_within(c, s, coarse, {}, &rc);
    const compressed_clip b = compress(c, s, fine, &rf);
    CHECK(rf.stats.bound_met);
    CHECK(b.size() > a.size());
    // The leaf's own error, at its own shell, within its own precision.
    std::vector<float> shells(s.size(), 0.05f);
    shells[5] = 0.5f;
    const result<error_measurement> m = measure_error(c, b, s, 0.05f, 60.0f, shells);
    REQUIRE(m);
    CHECK(m->checks == static_cast<std::size_t>(std::ceil(c.duration / (tps / 60.0f))) + 1); // (and the end)
    // What measure_error refuses: a shell or rate that is not positive, and a rate that asks for
    // more checks than a compressed clip holds samples (its time stays bounded).
    const auto refuses = [&](float shell, float rate, errc code, const char* word) {
        const result<error_measurement> bad = measure_error(c, b, s, shell, rate);
        REQUIRE_FALSE(bad);
        CHECK(bad.error().code == code);
        CHECK_MESSAGE(bad.error().message.find(word) != std::string::npos, bad.error().message);
    };
    refuses(0.0f, 60.0f, errc::invalid_argument, "shell");
    refuses(0.05f, -1.0f, errc::invalid_argument, "rate");
    refuses(0.05f, NAN, errc::invalid_argument, "rate");
    refuses(0.05f, 1e30f, errc::unsupported, "checks");
    sampling_context x;
    compressed_sampling_context y;
    local_pose px, py;
    std::vector<glm::mat4> lx, ly, mx, my;
    for (float t = 0.0f; t <= c.duration; t += 80.0f) {
        REQUIRE(sample_clip(c, s, t, x, px));
        REQUIRE(sample_clip(b, s, t, y, py));
        local_to_model(s, px, mx);
        local_to_model(s, py, my);
        CHECK(virtual_vertex_error(mx.data() + 5, my.data() + 5, 1, 0.5f) <= 1e-5 * 1.01);
    }
}

TEST_CASE("compress: random access, forward and backward playback give the same poses, bit for bit") {
    const skeleton s = chain(20, 0.5f);
    clip c;
    c.ticks_per_second = tps;
    c.duration = 100 * frame; // several segments
    for (std::size_t j = 0; j < s.size(); ++j) {
        channel ch;
        ch.joint = j;
        ch.rotation = rotation_keys(c.duration, frame, [&](float t) {
            return glm::angleAxis(std::sin(t / 1000.0f + float(j)), glm::normalize(glm::vec3(1, float(j % 4), 2)));
        });
        if (j % 3 == 0) ch.translation = vector_keys(c.duration, frame, [&](float t) { return glm::vec3(t / 3000.0f, 1, float(j)); });
        c.channels.push_back(ch);
    }
    const compressed_clip cc = compress(c, s, bound(1e-4f, 0.05f));
    std::vector<float> times;
    for (float t = 0.0f; t <= c.duration; t += 80.0f) times.push_back(t);
    std::vector<local_pose> forward(times.size()), random(times.size()), backward(times.size());
    compressed_sampling_context f, r, b;
    for (std::size_t i = 0; i < times.size(); ++i) REQUIRE(sample_clip(cc, s, times[i], f, forward[i]));
    for (std::size_t i = times.size(); i-- > 0;) REQUIRE(sample_clip(cc, s, times[i], b, backward[i]));
    kbtest::rng g(7);
    std::vector<std::size_t> order(times.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), g.engine());
    for (std::size_t i : order) {
        compressed_sampling_context fresh; // and a context sampling every time anew
        local_pose once;
        REQUIRE(sample_clip(cc, s, times[i], fresh, once));
        REQUIRE(sample_clip(cc, s, times[i], r, random[i]));
        for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(once.get(j), random[i].get(j)));
    }
    for (std::size_t i = 0; i < times.size(); ++i)
        for (std::size_t j = 0; j < s.size(); ++j) {
            CHECK(bit_equal(forward[i].get(j), random[i].get(j)));
            CHECK(bit_equal(backward[i].get(j), random[i].get(j)));
        }
    // A copied context goes on where the original was.
    compressed_sampling_context copy = f;
    local_pose p1, p2;
    REQUIRE(sample_clip(cc, s, 1234.5f, copy, p1));
    REQUIRE(sample_clip(cc, s, 1234.5f, f, p2));
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(p1.get(j), p2.get(j)));
}

namespace {

/// Samples with one lane type's path into `out`.
template <class Wide, class Narrow = Wide>
void sample_with(const compressed_clip& cc, const skeleton& s, float t, local_pose& out) {
    compressed_sampling_context ctx;
    REQUIRE(impl::compressed_sampler::sample<Wide, Narrow>(cc, s, t, ctx, out));
}

/// Per component within 2e-6 of unit-size values (relative above 1).
bool same_within(const local_pose& a, const local_pose& b) {
    for (unsigned st = 0; st < local_pose::stream_count; ++st)
        for (std::size_t j = 0; j < a.padded_size(); ++j) {
            const float x = a.data(local_pose::stream(st))[j], y = b.data(local_pose::stream(st))[j];
            if (std::fabs(x - y) > 2e-6f * std::max(1.0f, std::fabs(x))) return false;
        }
    for (std::size_t w = 0; w < a.morph_weights().size(); ++w)
        if (std::fabs(a.morph_weights()[w] - b.morph_weights()[w]) > 2e-6f) return false;
    return true;
}

} // namespace

TEST_CASE("compress: every SIMD path equals the scalar one within 2e-6") {
    const skeleton s = chain(37, 0.5f, glm::vec3(100.0f, 0, 0), std::vector<std::vector<float>>(37, std::vector<float>{0.5f}));
    clip c = frames_long(70);
    for (std::size_t j = 0; j < s.size(); ++j) {
        channel ch;
        ch.joint = j;
        ch.rotation = rotation_keys(c.duration, frame, [&](float t) {
            return glm::angleAxis(3.0f * std::sin(t / 900.0f + float(j)), glm::normalize(glm::vec3(1, float(j % 4), 2)));
        });
        if (j % 2) ch.translation = vector_keys(c.duration, frame, [&](float t) { return glm::vec3(t / 300.0f, 1, float(j)); });
        if (j % 5 == 1) ch.scale = vector_keys(c.duration, frame, [&](float t) { return glm::vec3(1.0f + t / 9000.0f, -1.0f, 1.0f); });
        if (j % 4 == 0) {
            ch.morph_weights.resize(1);
            for (float t = 0.0f; t <= c.duration; t += frame) ch.morph_weights[0].push_back(t, std::cos(t / 500.0f));
        }
        c.channels.push_back(ch);
    }
    const compressed_clip cc = compress(c, s, bound(1e-4f, 0.05f));
    for (float t : {0.0f, 100.0f, 1601.0f, 5555.5f, c.duration}) {
        CAPTURE(t);
        local_pose scalar, simd;
        sample_with<impl::lanes::f1>(cc, s, t, scalar);
#if KEYBLEND_SIMD_F4
        sample_with<impl::lanes::f4>(cc, s, t, simd);
        CHECK(same_within(scalar, simd));
#endif
#if KEYBLEND_SIMD_AVX2
        sample_with<impl::lanes::f8>(cc, s, t, simd);
        CHECK(same_within(scalar, simd));
#endif
#if KEYBLEND_SIMD_AVX512
        sample_with<impl::lanes::f16, impl::lanes::f8>(cc, s, t, simd);
        CHECK(same_within(scalar, simd));
#endif
        compressed_sampling_context ctx;
        local_pose native;
        REQUIRE(sample_clip(cc, s, t, ctx, native));
        CHECK(same_within(scalar, native));
        CHECK(kbtest::padding_is_identity(native));
    }
}

TEST_CASE("compress: each segment's decoding table, built in lanes, is the format's") {
    const skeleton s = chain(23, 0.5f);
    clip c = frames_long(50);
    for (std::size_t j = 0; j < s.size(); ++j) {
        channel ch;
        ch.joint = j;
        ch.rotation = rotation_keys(c.duration, frame, [&](float t) { return glm::angleAxis(2.0f * std::sin(t / 800.0f + float(j)), glm::vec3(0, 1, 0)); });
        ch.translation = vector_keys(c.duration, frame, [&](float t) { return glm::vec3(t / float(j + 1), 0.0f, 1.0f); });
        c.channels.push_back(ch);
    }
    const compressed_clip cc = compress(c, s, bound(1e-4f, 0.05f));
    const impl::cc::clip_layout& l = impl::compressed_access::layout(cc);
    REQUIRE(l.h.segment_count > 1);
    for (std::uint32_t seg = 0; seg < l.h.segment_count; ++seg) {
        const unsigned char* meta = cc.data() + l.h.off_meta + std::size_t(seg) * l.meta_stride;
        std::vector<impl::cc::component_code> codes(l.components);
        const std::uint64_t bits = impl::cc::for_each_code(
            l, cc.data(), meta, [&](std::uint32_t k, const impl::cc::component_code& code) { codes[k] = code; },
            [](std::uint32_t, unsigned) {});
        compressed_sampling_context ctx;
        local_pose p;
        REQUIRE(sample_clip(cc, s, 0.0f, ctx, p)); // (binds)
        const auto check = [&](auto lane) {
            using L = decltype(lane);
            auto& t = impl::compressed_sampler::table_slot(ctx, 0);
            impl::compressed_sampler::build_table<L>(ctx, seg, t);
            CHECK(t.record_bits == bits);
            std::uint32_t at = 0;
            for (std::uint32_t k = 0; k < l.components; ++k) {
                CHECK(t.offset[k] == std::int32_t(at));
                CHECK(t.mask[k] == std::int32_t((1u << codes[k].width) - 1u));
#if defined(__FAST_MATH__) // (a division may become a multiplication by the reciprocal)
                CHECK(t.bias[k] == doctest::Approx(codes[k].bias).epsilon(1e-6));
                CHECK(t.scale[k] == doctest::Approx(codes[k].scale).epsilon(1e-6));
#else
                CHECK(t.bias[k] == codes[k].bias);
                CHECK(t.scale[k] == codes[k].scale);
#endif
                at += codes[k].width;
            }
        };
        check(impl::clanes::s1{});
#if KEYBLEND_SIMD_AVX2
        check(impl::clanes::a8{});
#endif
#if KEYBLEND_SIMD_AVX512
        check(impl::clanes::a16{});
#endif
    }
}

TEST_CASE("compress: the compressed clip carries the clip's name, times, user channels, events and root motion") {
    const skeleton s = chain(3, 1.0f);
    clip c;
    c.name = "wave";
    c.ticks_per_second = 30.0f;
    c.ticks_per_second_is_default = true;
    c.duration = 60.0f;
    c.wrap = wrap_mode::loop_inclusive;
    channel ch;
    ch.joint = 1;
    ch.rotation.push_back(0.0f, glm::angleAxis(0.1f, glm::vec3(0, 1, 0)));
    ch.rotation.push_back(60.0f, glm::angleAxis(0.9f, glm::vec3(0, 1, 0)));
    c.channels.push_back(ch);
    c.float_channels.push_back({"contact", float_track<float>({{0.0f, 0.0f}, {30.0f, 1.0f}}, interpolation::step)});
    float_channel spline{"curve", float_track<float>(interpolation::cubic_spline)};
    spline.keys.push_back(0.0f, 0.5f, 1.0f, -0.5f);
    spline.keys.push_back(10.0f, 0.25f, 2.0f, 0.0f);
    c.float_channels.push_back(spline);
    c.vector_channels.push_back({"aim", position_track<float>({{0.0f, glm::vec3(1, 2, 3)}, {45.0f, glm::vec3(-1, 0, 0)}})});
    c.events = {{0.0f, "start"}, {29.5f, "step"}, {60.0f, ""}};
    c.motion.translation.push_back(0.0f, glm::vec3(0.0f));
    c.motion.translation.push_back(60.0f, glm::vec3(2.0f, 0.0f, 0.0f));
    c.motion.rotation.push_back(0.0f, glm::identity<glm::quat>());
    c.motion.rotation.push_back(60.0f, glm::angleAxis(1.0f, glm::vec3(0, 1, 0)));
    REQUIRE(validate_clip(c, s));
    const compressed_clip cc = compress(c, s, bound(1e-4f, 0.05f));
    CHECK(cc.name() == "wave");
    CHECK(cc.duration() == 60.0f);
    CHECK(cc.ticks_per_second() == 30.0f);
    CHECK(cc.ticks_per_second_is_default());
    CHECK(cc.wrap() == wrap_mode::loop_inclusive);
    CHECK(clip_time(cc, 75.0) == clip_time(c, 75.0));
    const clip e = cc.extras();
    CHECK(e.name == c.name);
    CHECK(e.channels.empty());
    REQUIRE(validate_clip(e, s));
    REQUIRE(e.float_channels.size() == 2);
    CHECK(e.float_channels[0].name == "contact");
    CHECK(e.float_channels[0].keys.mode() == interpolation::step);
    CHECK(e.float_channels[0].keys.times() == c.float_channels[0].keys.times());
    CHECK(e.float_channels[0].keys.values() == c.float_channels[0].keys.values());
    CHECK(e.float_channels[1].keys.in_tangents() == c.float_channels[1].keys.in_tangents());
    CHECK(e.float_channels[1].keys.out_tangents() == c.float_channels[1].keys.out_tangents());
    REQUIRE(e.vector_channels.size() == 1);
    CHECK(e.vector_channels[0].keys.values() == c.vector_channels[0].keys.values());
    REQUIRE(e.events.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(e.events[i].name == c.events[i].name);
        CHECK(e.events[i].time == c.events[i].time);
    }
    CHECK(e.motion.translation.values() == c.motion.translation.values());
    CHECK(e.motion.rotation.values() == c.motion.rotation.values());
}

TEST_CASE("compress: the same clip compresses to the same bytes - copies and views share them or own them") {
    const skeleton s = chain(5, 1.0f);
    clip c = frames_long(20);
    channel ch;
    ch.joint = 2;
    ch.rotation = rotation_keys(c.duration, frame, [&](float t) { return glm::angleAxis(t / 1000.0f, glm::vec3(0, 1, 0)); });
    c.channels.push_back(ch);
    const compressed_clip a = compress(c, s, bound(1e-4f, 0.05f));
    const compressed_clip b = compress(c, s, bound(1e-4f, 0.05f));
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size()) == 0);
    CHECK(a.owns_bytes());
    CHECK(a.size() % 16 == 0);
    const compressed_clip copy = a;
    CHECK(copy.owns_bytes());
    CHECK(copy.data() != a.data());
    const result<compressed_clip> view = compressed_clip::view(a.data(), a.size());
    REQUIRE(view);
    CHECK(!view->owns_bytes());
    CHECK(view->data() == a.data());
    compressed_clip moved = compressed_clip(*view);
    CHECK(moved.data() == a.data());
    compressed_clip owner = a;
    const unsigned char* bytes = owner.data();
    compressed_clip taken = std::move(owner);
    CHECK(taken.data() == bytes);
    CHECK(owner.empty());
    compressed_sampling_context ctx;
    local_pose p1, p2;
    REQUIRE(sample_clip(*view, s, 1000.0f, ctx, p1));
    REQUIRE(sample_clip(taken, s, 1000.0f, ctx, p2));
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(p1.get(j), p2.get(j)));
}

TEST_CASE("compress: compress_job::validate names the bad setting - run() leaves the output alone on an error") {
    const skeleton s = chain(3, 1.0f);
    clip c;
    channel ch;
    ch.joint = 1;
    ch.rotation.push_back(0.0f, glm::identity<glm::quat>());
    c.channels.push_back(ch);
    compressed_clip out;
    compress_job job;
    job.input = &c;
    job.skeleton = &s;
    job.output = &out;
    REQUIRE(job.validate());
    const auto fails = [&](errc code, const char* word, std::size_t index = error::no_index) {
        const status st = job.validate();
        REQUIRE_FALSE(st);
        CHECK(st.error().code == code);
        CHECK_MESSAGE(st.error().message.find(word) != std::string::npos, st.error().message);
        CHECK(st.error().index == index);
        CHECK_FALSE(job.run());
        CHECK(out.empty());
    };
    SUBCASE("null pointers") {
        job.input = nullptr;
        fails(errc::invalid_argument, "input");
        job.input = &c;
        job.skeleton = nullptr;
        fails(errc::invalid_argument, "skeleton");
        job.skeleton = &s;
        job.output = nullptr;
        const status st = job.validate();
        CHECK_FALSE(st);
    }
    SUBCASE("bounds") {
        job.settings.precision = -1.0f;
        fails(errc::invalid_argument, "precision");
        job.settings.precision = NAN;
        fails(errc::invalid_argument, "precision");
        job.settings.precision = 0.0f;
        job.settings.shell_distance = INFINITY;
        fails(errc::invalid_argument, "shell_distance");
        job.settings.shell_distance = 0.0f;
        job.settings.weight_precision = 0.0f;
        fails(errc::invalid_argument, "weight_precision");
        job.settings.weight_precision = 1e-3f;
        job.settings.check_rate = 0.5f;
        fails(errc::invalid_argument, "check_rate");
        job.settings.check_rate = 60.0f;
        job.settings.resample_rate = 500.0f;
        fails(errc::invalid_argument, "max_sample_rate");
    }
    SUBCASE("per joint") {
        job.settings.joint_precision = {0.0f, 1.0f};
        fails(errc::size_mismatch, "joint_precision");
        job.settings.joint_precision = {0.0f, -1.0f, 0.0f};
        fails(errc::invalid_argument, "'j1'", 1);
        job.settings.joint_precision.clear();
        job.settings.joint_shell = {0.0f, 0.0f, NAN};
        fails(errc::invalid_argument, "joint_shell[2]", 2);
    }
    SUBCASE("additive base and the clip") {
        local_pose base(2);
        job.settings.additive_base = &base;
        fails(errc::size_mismatch, "additive base");
        job.settings.additive_base = nullptr;
        c.channels[0].joint = 7;
        fails(errc::out_of_range, "joint", 0); // (validate_clip's error: the channel)
    }
    SUBCASE("a clip too long for memory_limit is refused before it is sampled") {
        // Two keys a tick apart in a clip of a billion seconds (a tick a second): sampled on the
        // key grid up to 10^7 samples, and checked 60 times a second, it would take terabytes.
        c.ticks_per_second = 1.0f;
        c.channels[0].rotation.push_back(1.0f, make_quat(0.0f, 1.0f, 0.0f, 0.0f));
        c.duration = 1e9f;
        fails(errc::unsupported, "memory_limit");
        // A short clip under a limit too small for it, and a limit of 0.
        c.duration = 100.0f;
        job.settings.memory_limit = 1000;
        fails(errc::unsupported, "memory_limit");
        job.settings.memory_limit = 0;
        fails(errc::invalid_argument, "memory_limit");
        job.settings.memory_limit = compression_settings{}.memory_limit;
        REQUIRE(job.run());
        CHECK_FALSE(out.empty());
    }
}

TEST_CASE("compress: compressed_sampling_job refuses null inputs, an empty clip and another skeleton, and writes nothing") {
    const skeleton s = chain(3, 1.0f);
    clip c;
    channel ch;
    ch.joint = 1;
    ch.rotation.push_back(0.0f, glm::angleAxis(0.3f, glm::vec3(1, 0, 0)));
    c.channels.push_back(ch);
    const compressed_clip cc = compress(c, s, bound(1e-4f, 0.05f));
    compressed_sampling_context ctx;
    local_pose p(3);
    p.set(0, transform{glm::vec3(9.0f), glm::identity<glm::quat>(), glm::vec3(9.0f)});
    compressed_sampling_job job{&cc, &s, 0.0f, &ctx, &p};
    REQUIRE(job.validate());
    // validate() and run() report the same error, and run() leaves the pose as it was.
    const auto fails = [&](const compressed_sampling_job& bad, errc code, const std::string& names) {
        for (const status& st : {bad.validate(), bad.run()}) {
            REQUIRE_FALSE(st);
            CHECK(st.error().code == code);
            CHECK_MESSAGE(st.error().message.find(names) != std::string::npos, st.error().message);
            CHECK(st.error().index == error::no_index);
        }
        CHECK(p.size() == 3);
        CHECK(p.morph_weights().empty());
        CHECK(p.get(0).translation == glm::vec3(9.0f));
    };
    SUBCASE("null inputs, each named") {
        const auto without = [&](auto member, const std::string& name) {
            compressed_sampling_job bad = job;
            bad.*member = nullptr;
            fails(bad, errc::invalid_argument, "no " + name);
        };
        without(&compressed_sampling_job::clip, "clip");
        without(&compressed_sampling_job::skeleton, "skeleton");
        without(&compressed_sampling_job::context, "sampling context");
        without(&compressed_sampling_job::output, "output pose");
    }
    SUBCASE("an empty clip") {
        const compressed_clip none;
        compressed_sampling_job bad = job;
        bad.clip = &none;
        fails(bad, errc::invalid_argument, "empty");
    }
    SUBCASE("another skeleton: other joint counts, another bind pose, other morph weights") {
        const skeleton others[] = {chain(4, 1.0f), chain(3, 2.0f), chain(3, 1.0f, glm::vec3(0.0f), {{}, {0.5f}})};
        for (const skeleton& other : others) {
            compressed_sampling_job bad = job;
            bad.skeleton = &other;
            fails(bad, errc::size_mismatch, "another skeleton");
        }
    }
    REQUIRE(job.validate()); // and the context binds again to the right one
    REQUIRE(job.run());
    CHECK(bit_equal(p.get(0), s.bind_transforms()[0]));
}

TEST_CASE("compress: a damaged compressed clip is rejected with the place named, or samples inside its bytes") {
    const skeleton s = chain(6, 1.0f, glm::vec3(0.0f), {{}, {0.5f, 0.5f}});
    clip c;
    c.name = "damaged";
    c.ticks_per_second = tps;
    c.duration = 40 * frame;
    for (std::size_t j = 0; j < s.size(); ++j) {
        channel ch;
        ch.joint = j;
        ch.rotation = rotation_keys(c.duration, frame, [&](float t) { return glm::angleAxis(std::sin(t / 700.0f + float(j)), glm::vec3(0, 1, 0)); });
        if (j == 0) ch.translation = vector_keys(c.duration, frame, [&](float t) { return glm::vec3(t, 0, 0); });
        if (j == 1) {
            ch.morph_weights.resize(2);
            for (float t = 0.0f; t <= c.duration; t += frame) ch.morph_weights[0].push_back(t, t / c.duration);
        }
        c.channels.push_back(ch);
    }
    c.events = {{10.0f, "a"}};
    c.float_channels.push_back({"f", float_track<float>({{0.0f, 1.0f}})});
    const compressed_clip good = compress(c, s, bound(1e-4f, 0.05f));
    const std::vector<unsigned char> bytes(good.data(), good.data() + good.size());
    const auto try_bytes = [&](const std::vector<unsigned char>& b) {
        // Copied into 16-byte-aligned memory of exactly its size, so that a sanitizer sees any
        // read past it.
        const result<compressed_clip> r = compressed_clip::copy(b.data(), b.size());
        if (!r) {
            CHECK(!r.error().message.empty());
            CHECK(r.error().message.find("compressed clip") == 0);
            return false;
        }
        compressed_sampling_context ctx;
        local_pose p;
        for (float t : {0.0f, 1000.0f, 3333.0f, c.duration, 1e9f})
            if (!sample_clip(*r, s, t, ctx, p)) break;
        (void)r->extras();
        return true;
    };
    SUBCASE("truncated at every byte") {
        for (std::size_t n = 0; n < bytes.size(); ++n) {
            const std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + std::ptrdiff_t(n));
            CHECK_FALSE(try_bytes(cut));
        }
        CHECK(try_bytes(bytes));
    }
    SUBCASE("every header field huge, just out of range, and off by one") {
        for (std::size_t field = 0; field < sizeof(impl::cc::clip_header) / 4; ++field) {
            std::uint32_t v;
            std::memcpy(&v, bytes.data() + 4 * field, 4);
            for (std::uint32_t changed : {0xffffffffu, 0x7fffffffu, v + 1, v - 1, v + 4, v + 16, std::uint32_t(bytes.size()), 0u}) {
                if (changed == v) continue;
                std::vector<unsigned char> b = bytes;
                std::memcpy(b.data() + 4 * field, &changed, 4);
                CAPTURE(field);
                CAPTURE(changed);
                try_bytes(b); // rejected, or within its bytes (the sanitizer build checks)
            }
        }
    }
    SUBCASE("every byte flipped") {
        for (std::size_t i = 0; i < bytes.size(); ++i) {
            std::vector<unsigned char> b = bytes;
            b[i] = static_cast<unsigned char>(b[i] ^ 0xffu);
            try_bytes(b);
        }
    }
    SUBCASE("named places") {
        std::vector<unsigned char> b = bytes;
        b[0] = 'X';
        result<compressed_clip> r = compressed_clip::view(b.data(), b.size());
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("magic") != std::string::npos);
        b = bytes;
        const std::uint32_t newer = impl::cc::clip_version + 1;
        std::memcpy(b.data() + offsetof(impl::cc::clip_header, version), &newer, 4);
        r = compressed_clip::view(b.data(), b.size());
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::unsupported);
        b = bytes;
        const std::uint32_t misaligned = impl::compressed_access::layout(good).h.off_spans + 2;
        std::memcpy(b.data() + offsetof(impl::cc::clip_header, off_spans), &misaligned, 4);
        r = compressed_clip::view(b.data(), b.size());
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("spans") != std::string::npos);
        CHECK(r.error().message.find("aligned") != std::string::npos);
        b = bytes;
        const std::uint32_t overlap = impl::compressed_access::layout(good).h.off_ranges;
        std::memcpy(b.data() + offsetof(impl::cc::clip_header, off_spans), &overlap, 4);
        r = compressed_clip::view(b.data(), b.size());
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("overlaps") != std::string::npos);
        CHECK_FALSE(compressed_clip::view(bytes.data() + 1, bytes.size() - 1));
    }
}

#ifdef KEYBLEND_TEST_IO
namespace {

/// The height of a model: its bind-pose skinned mesh's largest extent (the joints' when it has no
/// skinned mesh), as `keyblend pack` measures it.
float model_height(const io::xfile& x) {
    glm::vec3 lo(INFINITY), hi(-INFINITY);
    for (const io::xfile_mesh& m : x.meshes) {
        if (!m.is_skinned()) continue;
        const std::size_t k = m.skin.influences_per_vertex;
        for (std::size_t v = 0; v < m.positions.size(); ++v) {
            glm::vec3 p(0.0f);
            for (std::size_t i = 0; i < k; ++i) {
                const io::skin_bone& b = m.skin.bones[m.skin.bone_indices[v * k + i]];
                p += m.skin.weights[v * k + i] * glm::vec3(x.skeleton.bind_model()[b.joint] * b.offset * glm::vec4(m.positions[v], 1.0f));
            }
            lo = glm::min(lo, p);
            hi = glm::max(hi, p);
        }
    }
    const glm::vec3 e = hi - lo;
    return std::max(e.x, std::max(e.y, e.z));
}

} // namespace

TEST_CASE("compress: every clip of the shared .X files within 0.01 cm-eq at 3 cm-eq, smaller than ACL 2.1 makes it") {
    // (The sizes ACL 2.1's default compression makes of these clips at the same bound, with the
    // bind pose as its default values: a ceiling this compression has to stay under.)
    struct file {
        const char* path;
        std::vector<std::size_t> acl_bytes;
    } files[] = {{"assimp/Testwuson.X", {4373, 12824}},
                 {"assimp/BCN_Epileptic.X", {8789}},
                 {"directx-sdk-legacy-samples/tiny.x", {8845}}};
    for (const file& f : files) {
        const std::optional<std::string> path = kbtest::data_file(f.path);
        if (!path) return;
        const result<io::xfile> x = io::load_xfile(*path);
        REQUIRE(x);
        const float height = model_height(*x);
        const float cm = height / 180.0f;
        std::size_t k = 0;
        for (const io::xfile_animation_set& set : x->animation_sets) {
            if (!(set.clip.duration > 0.0f)) continue;
            CAPTURE(f.path);
            CAPTURE(set.clip.name);
            compression_report r;
            const compressed_clip cc = compress_within(set.clip, x->skeleton, compression_settings::for_height(height), {}, &r);
            const result<error_measurement> m = measure_error(set.clip, cc, x->skeleton, 3.0f * cm, 60.0f);
            REQUIRE(m);
            CHECK(m->max_error / double(cm) <= 0.01 * 1.001);
            REQUIRE(k < f.acl_bytes.size());
            CHECK(cc.size() < f.acl_bytes[k++]);
        }
        CHECK(k == f.acl_bytes.size());
    }
}
#endif
