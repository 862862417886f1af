#include <keyblend/clip.hpp>

#include "helpers.hpp"
#include "job_helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::sample_clip;
using kbtest::sample_local_matrices;
using kbtest::bit_equal;
using kbtest::max_abs_diff;

namespace {

glm::mat4 trs(glm::vec3 t, glm::quat r, glm::vec3 s) { return to_matrix(transform{t, r, s}); }

// root > hip > leg, with non-trivial bind poses (translation, rotation and scale).
skeleton three_joints() {
    const glm::quat r = glm::angleAxis(0.3f, glm::normalize(glm::vec3(1, 2, 3)));
    return skeleton::from_parents({{"root", -1, trs({0, 1, 0}, r, {1, 1, 1})},
                                   {"hip", 0, trs({1, 2, 3}, glm::conjugate(r), {2, 2, 2})},
                                   {"leg", 1, trs({0, -1, 0}, r, {1, 0.5f, 1})}})
        .value();
}

// The classic matrix-key sampling (docs/classic.md): the last key at or
// before Time, the next one (or the same at the end), scalar = (Time - T1) / max(T2 - T1, 1), and
// matDiff = (K2 - K1) * scalar + K1.
glm::mat4 classic_matrix_sample(const matrix_track<float>& t, std::uint32_t time) {
    std::uint32_t key1 = 0;
    for (std::uint32_t i = 0; i < t.size(); ++i)
        if (float(time) >= t.time(i)) key1 = i;
    const std::uint32_t key2 = key1 >= t.size() - 1 ? key1 : key1 + 1;
    std::uint32_t diff = std::uint32_t(t.time(key2)) - std::uint32_t(t.time(key1));
    if (!diff) diff = 1;
    const float scalar = float(time - std::uint32_t(t.time(key1))) / float(diff);
    glm::mat4 m = t.value(key2) - t.value(key1);
    m *= scalar;
    m += t.value(key1);
    return m;
}

// The classic timed key-frame example's four matrix keys (D3D memory order = the same glm::mat4).
matrix_track<float> timed_example_keys() {
    const float keys[4][16] = {
        {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
        {0.000796f, 1, 0, 0, -1, 0.000796f, 0, 0, 0, 0, 1, 0, 50, 0, 0, 1},
        {-0.999999f, 0.001593f, 0, 0, -0.001593f, -0.999999f, 0, 0, 0, 0, 1, 0, 25, 25, 0, 1},
        {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
    };
    matrix_track<float> t;
    for (int i = 0; i < 4; ++i) t.push_back(float(400 * i), glm::make_mat4(keys[i]));
    return t;
}

} // namespace

TEST_CASE("a valid clip validates: first and last key times span every track") {
    const skeleton s = three_joints();
    clip c;
    c.name = "Walk";
    channel a;
    a.joint = 2;
    a.rotation.push_back(10.0f, glm::identity<glm::quat>());
    a.rotation.push_back(20.0f, glm::angleAxis(1.0f, glm::vec3(0, 0, 1)));
    a.translation.push_back(5.0f, glm::vec3(1));
    channel b;
    b.joint = 0;
    b.matrix = timed_example_keys();
    c.channels = {a, b};
    c.duration = last_key_time(c);
    CHECK(validate_clip(c, s));
    CHECK(last_key_time(c) == 1200.0f);
    CHECK(first_key_time(c) == 0.0f);
    CHECK(last_key_time(clip{}) == 0.0f);
    CHECK(first_key_time(clip{}) == 0.0f);
    // A channel with no keys at all is allowed: every component comes from the bind pose.
    c.channels.push_back(channel{});
    c.channels.back().joint = 1;
    CHECK(validate_clip(c, s));
}

TEST_CASE("validate_clip names the clip, the channel, the joint and the key") {
    const skeleton s = three_joints();
    clip c;
    c.name = "Run";
    channel good;
    good.joint = 0;
    good.rotation.push_back(0.0f, glm::identity<glm::quat>());
    c.channels.push_back(good);

    SUBCASE("duration") {
        c.duration = NAN;
        CHECK(validate_clip(c, s).error().code == errc::non_finite);
        c.duration = -1.0f;
        const status st = validate_clip(c, s);
        CHECK(st.error().code == errc::invalid_argument);
        CHECK(st.error().message == "clip 'Run': duration -1 is negative");
        CHECK(st.error().index == error::no_index);
    }
    SUBCASE("ticks per second") {
        c.ticks_per_second = 0.0f;
        CHECK(validate_clip(c, s).error().code == errc::invalid_argument);
        c.ticks_per_second = INFINITY;
        CHECK(validate_clip(c, s).error().code == errc::non_finite);
    }
    SUBCASE("joint out of range") {
        channel bad;
        bad.joint = 3;
        c.channels.push_back(bad);
        const status st = validate_clip(c, s);
        CHECK(st.error().code == errc::out_of_range);
        CHECK(st.error().index == 1);
        CHECK(st.error().message == "clip 'Run' channel 1 (joint 3): joint is out of range (3 joints)");
    }
    SUBCASE("two channels on one joint") {
        c.channels.push_back(good);
        const status st = validate_clip(c, s);
        CHECK(st.error().code == errc::duplicate);
        CHECK(st.error().message.find("channel 1 (joint 0 'root'): joint already animated by channel 0") !=
              std::string::npos);
    }
    SUBCASE("matrix and TRS tracks in one channel") {
        c.channels[0].matrix.push_back(0.0f, glm::mat4(1));
        CHECK(validate_clip(c, s).error().code == errc::invalid_argument);
    }
    SUBCASE("a bad key names the track and the key") {
        channel bad;
        bad.joint = 1;
        bad.translation = {{0.0f, glm::vec3(0)}, {2.0f, glm::vec3(1)}, {1.0f, glm::vec3(2)}};
        c.channels.push_back(bad);
        const status st = validate_clip(c, s);
        CHECK(st.error().code == errc::unsorted);
        CHECK(st.error().index == 1);
        CHECK(st.error().message.find("clip 'Run' channel 1 (joint 1 'hip'): translation vec3 track key 2") == 0);
    }
    SUBCASE("a non-unit rotation key") {
        c.channels[0].rotation.push_back(1.0f, make_quat(2, 0, 0, 0));
        const status st = validate_clip(c, s);
        CHECK(st.error().code == errc::not_normalized);
        CHECK(st.error().message.find("rotation quat track key 1") != std::string::npos);
    }
    SUBCASE("a NaN matrix key") {
        channel bad;
        bad.joint = 2;
        glm::mat4 m(1.0f);
        m[1][1] = NAN;
        bad.matrix.push_back(0.0f, m);
        c.channels.push_back(bad);
        CHECK(validate_clip(c, s).error().code == errc::non_finite);
    }
    SUBCASE("an interpolation mode that does not apply") {
        c.channels[0].translation = position_track<float>({{0.0f, glm::vec3(1)}}, interpolation::nlerp);
        CHECK(validate_clip(c, s).error().code == errc::unsupported);
    }
}

TEST_CASE("clip_time wraps by the clip's policy, exactly for large tick counts") {
    clip c;
    c.duration = 4960.0f;
    c.wrap = wrap_mode::loop_inclusive; // the classic blended collection: Time % (Length + 1)
    for (std::uint32_t t : {0u, 4960u, 4961u, 123456789u, 4294967295u})
        CHECK(clip_time(c, t) == float(t % 4961u));
    c.wrap = wrap_mode::clamp;
    CHECK(clip_time(c, 99999.0) == 4960.0f);
    CHECK(clip_time(c, -3.0) == 0.0f);
    c.wrap = wrap_mode::loop;
    CHECK(clip_time(c, 4960.0) == 0.0f);
    CHECK(clip_time(c, 4961.25) == 1.25f);
}

TEST_CASE("a component without a track comes from the bind pose, never the identity") {
    const skeleton s = three_joints();
    const transform bind = s.bind_transforms()[1];
    channel ch;
    ch.joint = 1;
    const glm::quat q = glm::angleAxis(1.0f, glm::vec3(0, 1, 0));
    ch.rotation.push_back(0.0f, q);
    const glm::mat4 m = sample_channel_matrix(ch, 0.0f, bind, s.bind_local()[1]);
    CHECK(max_abs_diff(m, to_matrix(transform{bind.translation, q, bind.scale})) < 1e-6f);
    CHECK(glm::length(glm::vec3(m[0])) == doctest::Approx(2.0f)); // the bind scale, not 1
    CHECK(glm::vec3(m[3]) == glm::vec3(1, 2, 3));                 // the bind translation

    channel only_scale;
    only_scale.scale.push_back(0.0f, glm::vec3(3));
    const glm::mat4 k = sample_channel_matrix(only_scale, 0.0f, bind, s.bind_local()[1]);
    CHECK(glm::vec3(k[3]) == glm::vec3(1, 2, 3));
    CHECK(kbtest::rotation_angle(quat_from_rotation(glm::mat3(k) / 3.0f), bind.rotation) < 1e-5);

    // No keys at all: the bind matrix bit for bit.
    CHECK(bit_equal(sample_channel_matrix(channel{}, 7.0f, bind, s.bind_local()[1]), s.bind_local()[1]));
}

TEST_CASE("matrix channels sample element-wise, exactly as the classic code does") {
    const matrix_track<float> t = timed_example_keys();
    channel ch;
    ch.matrix = t;
    for (std::uint32_t time = 0; time <= 1300; time += 7) {
        const glm::mat4 ours = sample_channel_matrix(ch, float(time), transform{}, glm::mat4(1));
        const glm::mat4 classic = classic_matrix_sample(t, time);
        CHECK(max_abs_diff(ours, classic) <= 1e-5f);
        if (time % 400 == 0 && time <= 1200) CHECK(bit_equal(ours, t.value(time / 400)));
    }
    // Mid-way between 90 degree keys the element-wise lerp shrinks the axes (the classic code's flaw, kept).
    const glm::mat4 mid = sample_channel_matrix(ch, 200.0f, transform{}, glm::mat4(1));
    CHECK(glm::length(glm::vec3(mid[0])) == doctest::Approx(0.7071).epsilon(1e-3));
}

TEST_CASE("fractional ticks are exact: a key pair at integer ticks sampled at 1234.25") {
    channel ch;
    ch.translation = {{1000.0f, glm::vec3(0.0f)}, {2000.0f, glm::vec3(1000.0f, 0.0f, -4000.0f)}};
    const glm::mat4 m = sample_channel_matrix(ch, 1234.25f, transform{}, glm::mat4(1));
    CHECK(m[3][0] == 234.25f);
    CHECK(m[3][2] == -937.0f);
    // Integer ticks are exact far beyond a DWORD millisecond minute: 2^24 - 1 is representable.
    CHECK(float(16777215u) == 16777215.0f);
    CHECK(max_exact_tick == 16777216.0f);
}

TEST_CASE("ends clamp per track: NaN samples the first keys") {
    channel ch;
    ch.translation = {{10.0f, glm::vec3(1)}, {20.0f, glm::vec3(2)}};
    ch.scale = {{0.0f, glm::vec3(3)}, {50.0f, glm::vec3(5)}};
    const auto at = [&](float t) { return sample_channel_matrix(ch, t, transform{}, glm::mat4(1)); };
    CHECK(glm::vec3(at(0.0f)[3]) == glm::vec3(1));   // before translation's first key
    CHECK(glm::vec3(at(30.0f)[3]) == glm::vec3(2));  // after its last
    CHECK(at(30.0f)[0][0] == doctest::Approx(3.0f + 2.0f * 30.0f / 50.0f));
    CHECK(glm::vec3(at(NAN)[3]) == glm::vec3(1));
    CHECK(at(NAN)[0][0] == 3.0f);
    CHECK(glm::vec3(at(INFINITY)[3]) == glm::vec3(2));
}

TEST_CASE("sample_local_matrices: bind matrices for joints without a channel, bit for bit") {
    const skeleton s = three_joints();
    clip c;
    channel ch;
    ch.joint = 2;
    ch.rotation = {{0.0f, glm::identity<glm::quat>()}, {10.0f, glm::angleAxis(1.0f, glm::vec3(1, 0, 0))}};
    c.channels.push_back(ch);
    std::vector<glm::mat4> local(1, glm::mat4(NAN)); // garbage in, resized and overwritten
    REQUIRE(sample_local_matrices(c, s, 5.0f, local));
    REQUIRE(local.size() == 3);
    CHECK(bit_equal(local[0], s.bind_local()[0]));
    CHECK(bit_equal(local[1], s.bind_local()[1]));
    CHECK(max_abs_diff(local[2], sample_channel_matrix(ch, 5.0f, s.bind_transforms()[2], s.bind_local()[2])) == 0.0f);
}

TEST_CASE("sample_local_matrices reports a channel whose joint is out of range, and writes the rest") {
    const skeleton s = three_joints();
    clip c;
    c.name = "x";
    channel bad;
    bad.joint = 9;
    bad.translation.push_back(0.0f, glm::vec3(5));
    channel good;
    good.joint = 1;
    good.translation.push_back(0.0f, glm::vec3(7));
    c.channels = {bad, good};
    std::vector<glm::mat4> local;
    const status st = sample_local_matrices(c, s, 0.0f, local);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::out_of_range);
    CHECK(st.error().index == 0);
    REQUIRE(local.size() == 3);
    CHECK(glm::vec3(local[1][3]) == glm::vec3(7));
}

// ---------------------------------------------------------------------------------------------
// sample_clip: a whole clip into a local_pose, through a sampling_context
// ---------------------------------------------------------------------------------------------

namespace {

// 13 joints (a block of 8 and a partial one) with every kind of channel:
//   j0 T+R+S at independent key times   j1 R only (slerp)     j2 R only, nlerp
//   j3 T only, step                     j4 no channel         j5 matrix keys
//   j6 S only, one key                  j7 T+R, keys after 0  j8 matrix keys, step
//   j9..j12 T+R+S (the partial block)   and j10 has no channel
struct sample_fixture {
    skeleton s = kbtest::random_skeleton(13, 99);
    clip c;

    // shared: every track with more than one key is keyed at the same times (as exporters bake
    // them), which the sampler refreshes block by block, searching the keys once for all the
    // blocks and components keyed alike. two_sets: joints 8 and up at other common times (other
    // key counts), so that two such groups share a frame.
    explicit sample_fixture(bool shared = false, bool two_sets = false) {
        kbtest::rng rng(5);
        std::vector<float> common, other;
        for (int k = 0; k < 9; ++k) common.push_back(float(k) * 25.0f);
        for (int k = 0; k < 12; ++k) other.push_back(5.0f + float(k) * 17.0f);
        std::size_t joint_now = 0;
        const auto times = [&](int n, float start) {
            if (shared) return two_sets && joint_now >= 8 ? other : common;
            std::vector<float> t;
            float at = start;
            for (int k = 0; k < n; ++k) {
                t.push_back(at);
                at += rng.uniform(5.0f, 60.0f);
            }
            return t;
        };
        const auto add = [&](std::size_t joint, bool t, bool r, bool sc, int keys, float start) {
            channel ch;
            ch.joint = joint;
            joint_now = joint;
            if (t)
                for (float k : times(keys, start)) ch.translation.push_back(k, rng.vec3(-2, 2));
            if (r)
                for (float k : times(keys + 1, start)) ch.rotation.push_back(k, rng.rotation());
            if (sc)
                for (float k : times(keys + 2, start)) ch.scale.push_back(k, rng.vec3(0.5f, 2));
            c.channels.push_back(ch);
            return c.channels.size() - 1;
        };
        add(0, true, true, true, 6, 0);
        add(1, false, true, false, 5, 0);
        c.channels[add(2, false, true, false, 5, 10)].rotation.set_mode(interpolation::nlerp);
        c.channels[add(3, true, false, false, 5, 0)].translation.set_mode(interpolation::step);
        for (std::size_t j : {5u, 8u}) {
            channel ch;
            ch.joint = j;
            joint_now = j;
            for (float k : times(5, 0)) ch.matrix.push_back(k, to_matrix(kbtest::random_transform(rng)));
            if (j == 8) ch.matrix.set_mode(interpolation::step);
            c.channels.push_back(ch);
        }
        channel one;
        one.joint = 6;
        one.scale.push_back(40.0f, glm::vec3(2, 3, 4));
        c.channels.push_back(one);
        add(7, true, true, false, 4, 30);
        for (std::size_t j : {9u, 11u, 12u}) add(j, true, true, true, 7, 0);
        c.duration = last_key_time(c);
        REQUIRE(validate_clip(c, s));
    }

    // What sample_clip must give: sample_track per component, the bind pose where nothing is keyed,
    // matrix keys decomposed.
    transform expected(std::size_t j, float time) const {
        transform t = s.bind_transforms()[j];
        for (const channel& ch : c.channels) {
            if (ch.joint != j) continue;
            if (ch.has_matrix()) {
                matrix_track<float> m = ch.matrix;
                if (m.mode() != interpolation::step) m.set_mode(interpolation::decomposed);
                const key_interval k = locate_keys(m, time);
                const transform a = to_transform(m.value(k.first)), b = to_transform(m.value(k.second));
                if (k.alpha == 0.0f || m.mode() == interpolation::step) return a;
                return transform{lerp(a.translation, b.translation, k.alpha),
                                 slerp(a.rotation, b.rotation, k.alpha), lerp(a.scale, b.scale, k.alpha)};
            }
            if (!ch.translation.empty()) t.translation = sample_track(ch.translation, time);
            if (!ch.rotation.empty()) t.rotation = sample_track(ch.rotation, time);
            if (!ch.scale.empty()) t.scale = sample_track(ch.scale, time);
        }
        return t;
    }

    std::vector<float> key_times() const {
        std::vector<float> out;
        for (const channel& ch : c.channels) {
            for (float t : ch.translation.times()) out.push_back(t);
            for (float t : ch.rotation.times()) out.push_back(t);
            for (float t : ch.scale.times()) out.push_back(t);
            for (float t : ch.matrix.times()) out.push_back(t);
        }
        return out;
    }
};

template <class V>
status sample_with(const sample_fixture& f, float time, sampling_context& ctx, local_pose& out) {
    return impl::clip_sampler::sample<V>(f.c, f.s, time, ctx, out);
}

// Checks one lane path over a playback order: equal to the reference within `tolerance`, and bit
// for bit at key times.
template <class V>
void check_playback(const sample_fixture& f, const std::vector<float>& times) {
    sampling_context ctx;
    local_pose out;
    const std::vector<float> keys = f.key_times();
    float worst = 0.0f;
    for (float time : times) {
        REQUIRE(sample_with<V>(f, time, ctx, out));
        REQUIRE(out.size() == f.s.size());
        for (std::size_t j = 0; j < f.s.size(); ++j) {
            const transform want = f.expected(j, time);
            const transform got = out.get(j);
            worst = std::max(worst, kbtest::max_abs_diff(got, want));
            // At a key time, the components keyed there are the key's values, bit for bit.
            if (std::find(keys.begin(), keys.end(), time) != keys.end()) {
                for (const channel& ch : f.c.channels) {
                    if (ch.joint != j || ch.has_matrix()) continue;
                    const auto at_key = [&](const auto& tr) {
                        return std::find(tr.times().begin(), tr.times().end(), time) != tr.times().end();
                    };
                    if (at_key(ch.translation)) CHECK(bit_equal(got.translation, want.translation));
                    if (at_key(ch.rotation)) CHECK(bit_equal(got.rotation, want.rotation));
                    if (at_key(ch.scale)) CHECK(bit_equal(got.scale, want.scale));
                }
            }
        }
        CHECK(kbtest::padding_is_identity(out));
    }
    CHECK(worst < 2e-6f);
}

template <class V>
void check_every_playback(const sample_fixture& f) {
    std::vector<float> forward, exact = f.key_times();
    for (float t = -10.0f; t < f.c.duration + 20.0f; t += 1.0f / 3.0f) forward.push_back(t);
    std::vector<float> backward(forward.rbegin(), forward.rend());
    std::vector<float> jumps;
    kbtest::rng rng(17);
    for (int i = 0; i < 300; ++i) jumps.push_back(rng.uniform(-5.0f, f.c.duration + 5.0f));
    std::sort(exact.begin(), exact.end());
    SUBCASE("forward") { check_playback<V>(f, forward); }
    SUBCASE("backward") { check_playback<V>(f, backward); }
    SUBCASE("random jumps") { check_playback<V>(f, jumps); }
    SUBCASE("exactly at every key, in order") { check_playback<V>(f, exact); }
}

// check_every_playback on the scalar, 4-lane (SSE2 or NEON, when built) and native lane paths.
void check_lane_paths(const sample_fixture& f) {
    SUBCASE("scalar") { check_every_playback<impl::lanes::f1>(f); }
#if KEYBLEND_SIMD_F4
    SUBCASE("4 lanes") { check_every_playback<impl::lanes::f4>(f); }
#endif
    SUBCASE("native") { check_every_playback<impl::lanes::native>(f); }
}

// sample_clip (the widest lanes) through ctx at each of `times`: every joint the reference's.
template <class Times>
void check_public(const sample_fixture& f, const Times& times, sampling_context& ctx) {
    local_pose out;
    for (float t : times) {
        REQUIRE(sample_clip(f.c, f.s, t, ctx, out));
        for (std::size_t j = 0; j < f.s.size(); ++j)
            CHECK(kbtest::max_abs_diff(out.get(j), f.expected(j, t)) < 2e-6f);
    }
}

} // namespace

TEST_CASE("sample_clip equals sample_track per component: scalar reference path") {
    const sample_fixture f;
    check_every_playback<impl::lanes::f1>(f);
}

#if KEYBLEND_SIMD_F4
TEST_CASE("sample_clip equals sample_track per component: 4-lane path (SSE2 or NEON)") {
    const sample_fixture f;
    check_every_playback<impl::lanes::f4>(f);
}
#endif

TEST_CASE("sample_clip equals sample_track per component: joints keyed at shared times") {
    const sample_fixture f(true);
    check_lane_paths(f);
}

TEST_CASE("sample_clip equals sample_track per component: two sets of shared key times") {
    const sample_fixture f(true, true);
    check_lane_paths(f);
    SUBCASE("the same time twice, then on: the second sample reuses the first's search") {
        sampling_context ctx;
        check_public(f, std::vector<float>{30.0f, 30.0f, 31.0f, 60.0f, 60.0f, 10.0f}, ctx);
    }
}

TEST_CASE("sample_clip equals sample_track per component: tracks keyed at some of the shared times") {
    // An exporter's key reduction: tracks of blocks keyed alike miss some of the keys (the first,
    // the last, a run, every other one). Those lanes are refreshed with their block, from its one
    // search, each with its own interval; results as sample_track's, bit for bit at key times.
    sample_fixture f(true);
    const auto drop = [](auto& tr, auto keep) {
        std::decay_t<decltype(tr)> kept;
        kept.set_mode(tr.mode());
        for (std::size_t k = 0; k < tr.size(); ++k)
            if (keep(k, tr.size())) kept.push_back(tr.time(k), tr.value(k));
        tr = std::move(kept);
    };
    for (channel& ch : f.c.channels) {
        if (ch.joint == 1) // block 0's rotations: joints 0 and 7 keep every key
            drop(ch.rotation, [](std::size_t k, std::size_t n) { return k != 0 && k != 3 && k != 4 && k + 1 != n; });
        if (ch.joint == 11) // block 1: joints 9, 11, 12
            drop(ch.rotation, [](std::size_t k, std::size_t n) { return k + 1 != n; });
        if (ch.joint == 12) {
            drop(ch.translation, [](std::size_t k, std::size_t) { return k != 0; });
            drop(ch.scale, [](std::size_t k, std::size_t) { return k % 2 == 0; });
        }
    }
    f.c.duration = last_key_time(f.c);
    REQUIRE(validate_clip(f.c, f.s));
    check_lane_paths(f);
    SUBCASE("the widest lanes") {
        std::vector<float> times;
        for (float t = -3.0f; t < f.c.duration + 5.0f; t += 0.75f) times.push_back(t);
        sampling_context ctx;
        check_public(f, times, ctx);
    }
    SUBCASE("a subset lane's track changed under the bound context stays in bounds") {
        sampling_context ctx;
        local_pose out;
        REQUIRE(sample_clip(f.c, f.s, 10.0f, ctx, out));
        // Without reset(): joint 1's rotation (a subset lane) loses all but two keys, joint 11's
        // gains one past the end. Results unspecified, reads in bounds (ASan checks).
        for (channel& ch : f.c.channels) {
            if (ch.joint == 1) drop(ch.rotation, [](std::size_t k, std::size_t) { return k < 2; });
            if (ch.joint == 11) ch.rotation.push_back(1000.0f, glm::identity<glm::quat>());
        }
        for (float t = -5.0f; t < 400.0f; t += 7.0f) CHECK(sample_clip(f.c, f.s, t, ctx, out));
        for (float t = 400.0f; t > -5.0f; t -= 11.0f) CHECK(sample_clip(f.c, f.s, t, ctx, out));
        ctx.reset();
        check_public(f, std::vector<float>{3.0f, 150.0f, 999.0f}, ctx);
    }
}

TEST_CASE("sample_clip: a shared-key block whose tracks change under a bound context stays in bounds") {
    sample_fixture f(true);
    sampling_context ctx;
    local_pose out;
    REQUIRE(sample_clip(f.c, f.s, 10.0f, ctx, out));
    // Without reset(): one track loses keys, another gains some. Results are unspecified, but
    // every read stays inside the tracks (ASan checks) and every value is one of the keys'.
    f.c.channels[0].rotation.clear();
    f.c.channels[0].rotation.push_back(0.0f, glm::identity<glm::quat>());
    f.c.channels[1].rotation.push_back(1000.0f, glm::identity<glm::quat>());
    for (float t = 0.0f; t < 400.0f; t += 7.0f) CHECK(sample_clip(f.c, f.s, t, ctx, out));
    ctx.reset();
    check_public(f, std::vector<float>{3.0f, 150.0f}, ctx);
}

template <class Wide, class Narrow>
status sample_wide(const sample_fixture& f, float time, sampling_context& ctx, local_pose& out) {
    return impl::clip_sampler::sample<Wide, Narrow>(f.c, f.s, time, ctx, out);
}

TEST_CASE("sample_clip equals sample_track per component: native path, and the widest (what sample_clip uses)") {
    const sample_fixture f;
    check_every_playback<impl::lanes::native>(f);
    SUBCASE("the widest lanes with a native tail equal the native path") {
        sampling_context a, b;
        local_pose pa, pb;
        for (float t = -3.0f; t < f.c.duration + 5.0f; t += 0.75f) {
            REQUIRE(sample_with<impl::lanes::native>(f, t, a, pa));
            REQUIRE((sample_wide<impl::lanes::widest, impl::lanes::native>(f, t, b, pb)));
            for (std::size_t j = 0; j < f.s.size(); ++j)
                CHECK(kbtest::max_abs_diff(pa.get(j), pb.get(j)) < 1e-6f);
            CHECK(kbtest::padding_is_identity(pb));
        }
    }
    SUBCASE("and the public function is that path") {
        sampling_context a, b;
        local_pose pa, pb;
        for (float t : {0.0f, 17.5f, 100.25f}) {
            REQUIRE(sample_clip(f.c, f.s, t, a, pa));
            REQUIRE((impl::clip_sampler::sample<impl::lanes::widest, impl::lanes::native>(f.c, f.s, t, b, pb)));
            for (std::size_t j = 0; j < f.s.size(); ++j)
                CHECK(kbtest::bit_equal_transform(pa.get(j), pb.get(j)));
        }
    }
}

TEST_CASE("sample_clip: the bind pose where nothing is keyed, bit for bit") {
    const sample_fixture f;
    sampling_context ctx;
    local_pose out;
    REQUIRE(sample_clip(f.c, f.s, 25.0f, ctx, out));
    // j4 and j10 have no channel; j1 keys only rotation, j3 only translation, j6 only scale.
    for (std::size_t j : {4u, 10u}) CHECK(kbtest::bit_equal_transform(out.get(j), f.s.bind_transforms()[j]));
    CHECK(bit_equal(out.get(1).translation, f.s.bind_transforms()[1].translation));
    CHECK(bit_equal(out.get(1).scale, f.s.bind_transforms()[1].scale));
    CHECK(bit_equal(out.get(3).rotation, f.s.bind_transforms()[3].rotation));
    CHECK(bit_equal(out.get(6).rotation, f.s.bind_transforms()[6].rotation));
    CHECK(bit_equal(out.get(6).scale, glm::vec3(2, 3, 4))); // one key: held at every time
}

TEST_CASE("sample_clip: NaN samples the first keys, infinities the ends") {
    const sample_fixture f;
    sampling_context ctx;
    local_pose nan_pose, first_pose, inf_pose, last_pose;
    REQUIRE(sample_clip(f.c, f.s, NAN, ctx, nan_pose));
    REQUIRE(sample_clip(f.c, f.s, -1e30f, ctx, first_pose));
    REQUIRE(sample_clip(f.c, f.s, INFINITY, ctx, inf_pose));
    REQUIRE(sample_clip(f.c, f.s, 1e30f, ctx, last_pose));
    for (std::size_t j = 0; j < f.s.size(); ++j) {
        CHECK(kbtest::bit_equal_transform(nan_pose.get(j), first_pose.get(j)));
        CHECK(kbtest::bit_equal_transform(inf_pose.get(j), last_pose.get(j)));
        CHECK(is_finite(nan_pose.get(j).rotation));
    }
    REQUIRE(sample_clip(f.c, f.s, -INFINITY, ctx, inf_pose));
    for (std::size_t j = 0; j < f.s.size(); ++j)
        CHECK(kbtest::bit_equal_transform(inf_pose.get(j), first_pose.get(j)));
}

TEST_CASE("sampling contexts: many instances of one clip, rebinding, copies") {
    const sample_fixture f;
    sample_fixture other;
    other.c.channels.resize(3);
    sampling_context a, b;
    local_pose pa, pb, fresh;
    // Two instances at different times, interleaved, each equal to a fresh context's result.
    for (int frame = 0; frame < 40; ++frame) {
        const float ta = float(frame) * 3.0f, tb = 200.0f - float(frame) * 5.0f;
        REQUIRE(sample_clip(f.c, f.s, ta, a, pa));
        REQUIRE(sample_clip(f.c, f.s, tb, b, pb));
        sampling_context once;
        REQUIRE(sample_clip(f.c, f.s, tb, once, fresh));
        for (std::size_t j = 0; j < f.s.size(); ++j) CHECK(kbtest::bit_equal_transform(pb.get(j), fresh.get(j)));
    }
    CHECK(a.bound_clip() == &f.c);
    // Given another clip, a context rebinds.
    REQUIRE(sample_clip(other.c, other.s, 50.0f, a, pa));
    CHECK(a.bound_clip() == &other.c);
    for (std::size_t j = 0; j < other.s.size(); ++j)
        CHECK(kbtest::max_abs_diff(pa.get(j), other.expected(j, 50.0f)) < 2e-6f);
    // A copy carries on where its original was.
    sampling_context copy = a;
    REQUIRE(sample_clip(other.c, other.s, 51.0f, copy, pb));
    REQUIRE(sample_clip(other.c, other.s, 51.0f, a, pa));
    for (std::size_t j = 0; j < other.s.size(); ++j) CHECK(kbtest::bit_equal_transform(pa.get(j), pb.get(j)));
    // reset() forgets the binding.
    a.reset();
    CHECK(a.bound_clip() == nullptr);
}

TEST_CASE("sample_clip does not allocate once the context is bound and the pose sized") {
    const sample_fixture f;
    sampling_context ctx;
    local_pose out;
    REQUIRE(sample_clip(f.c, f.s, 0.0f, ctx, out));
    const std::size_t before = kbtest::allocation_count();
    for (float t = 0.0f; t < 400.0f; t += 0.7f) REQUIRE(sample_clip(f.c, f.s, t, ctx, out));
    CHECK(kbtest::allocation_count() == before);
}

TEST_CASE("sample_clip reports a channel whose joint is out of range, and writes the rest") {
    sample_fixture f;
    channel stray;
    stray.joint = 40;
    stray.rotation.push_back(0.0f, glm::angleAxis(1.0f, glm::vec3(0, 0, 1)));
    f.c.channels.insert(f.c.channels.begin() + 1, stray);
    sampling_context ctx;
    local_pose out;
    const status st = sample_clip(f.c, f.s, 20.0f, ctx, out);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::out_of_range);
    CHECK(st.error().index == 1);
    CHECK(st.error().message.find("joint 40") != std::string::npos);
    for (std::size_t j = 0; j < f.s.size(); ++j)
        CHECK(kbtest::max_abs_diff(out.get(j), f.expected(j, 20.0f)) < 2e-6f);
}

TEST_CASE("sample_clip on invalid tracks stays in bounds (unsorted, NaN keys, emptied in place)") {
    sample_fixture f;
    f.c.channels[0].translation.value(2) = glm::vec3(NAN);
    channel& r = f.c.channels[1];
    std::swap(r.rotation.value(0), r.rotation.value(3));
    rotation_track<float> shuffled;
    for (std::size_t k = r.rotation.size(); k-- > 0;) shuffled.push_back(r.rotation.time(k), r.rotation.value(k));
    r.rotation = shuffled; // times descending
    sampling_context ctx;
    local_pose out;
    for (float t = -5.0f; t < 300.0f; t += 2.5f) CHECK(sample_clip(f.c, f.s, t, ctx, out));
    // Tracks emptied under a bound context: the bind pose, not stale keys or a crash.
    for (channel& ch : f.c.channels) {
        ch.translation.clear();
        ch.rotation.clear();
        ch.scale.clear();
        ch.matrix.clear();
    }
    ctx.reset();
    REQUIRE(sample_clip(f.c, f.s, 10.0f, ctx, out));
    for (std::size_t j = 0; j < f.s.size(); ++j)
        CHECK(kbtest::bit_equal_transform(out.get(j), f.s.bind_transforms()[j]));
}

// ---------------------------------------------------------------------------------------------
// User channels and events
// ---------------------------------------------------------------------------------------------

namespace {

// A clip of `duration` ticks with events at the given times (named e0, e1, ...), no channels.
clip event_clip(float duration, std::vector<float> times, wrap_mode wrap = wrap_mode::loop) {
    clip c;
    c.name = "Steps";
    c.duration = duration;
    c.wrap = wrap;
    for (std::size_t i = 0; i < times.size(); ++i) c.events.push_back({times[i], "e" + std::to_string(i)});
    return c;
}

// Every occurrence (event index, unwrapped time) with time in [lo, hi], by brute force: each event
// at time + k * period for every k in a generous range, or once for a clip that does not repeat.
std::vector<passed_event> occurrences(const clip& c, double lo, double hi) {
    const bool periodic = c.wrap != wrap_mode::clamp && c.duration > 0.0f;
    const double period = double(c.duration) + (c.wrap == wrap_mode::loop_inclusive ? 1.0 : 0.0);
    std::vector<passed_event> out;
    const long k0 = periodic ? long(std::floor(lo / period)) - 2 : 0;
    const long k1 = periodic ? long(std::floor(hi / period)) + 2 : 0;
    for (long k = k0; k <= k1; ++k)
        for (std::size_t i = 0; i < c.events.size(); ++i) {
            const double u = double(c.events[i].time) + double(k) * (periodic ? period : 0.0);
            if (u >= lo && u <= hi) out.push_back({i, u});
        }
    // Block by block, each in event order, is time order (a block ends at or before the next
    // begins; equal times keep the order playback meets them).
    REQUIRE(std::is_sorted(out.begin(), out.end(), [](const passed_event& a, const passed_event& b) { return a.time < b.time; }));
    return out;
}

// What passed_events must report: the brute-force occurrences inside the interval, in playback order.
std::vector<passed_event> expected_events(const clip& c, double from, double to, event_range range) {
    const bool include = range == event_range::include_from;
    std::vector<passed_event> all = occurrences(c, std::min(from, to), std::max(from, to)), out;
    for (const passed_event& e : all) {
        if (e.time == from && !include) continue;
        // A looping clip's end and its next loop's start are one instant: playback starting there
        // is in the loop it heads into.
        if (e.time == from && c.wrap == wrap_mode::loop && c.duration > 0.0f &&
            c.events[e.event].time == (from <= to ? c.duration : 0.0f))
            continue;
        out.push_back(e);
    }
    if (to < from) std::reverse(out.begin(), out.end());
    return out;
}

bool same_events(const std::vector<passed_event>& a, const std::vector<passed_event>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].event != b[i].event || a[i].time != b[i].time) return false;
    return true;
}

} // namespace

TEST_CASE("validate_clip checks user channels, events and the motion track, naming each") {
    const skeleton s = three_joints();
    clip c = event_clip(100.0f, {0.0f, 50.0f, 100.0f});
    c.float_channels.push_back({"blink", float_track<float>{{0.0f, 0.0f}, {100.0f, 1.0f}}});
    c.vector_channels.push_back({"look", position_track<float>{{0.0f, glm::vec3(1)}}});
    REQUIRE(validate_clip(c, s));

    SUBCASE("a user channel without keys") {
        c.float_channels.push_back({"empty", {}});
        const status st = validate_clip(c, s);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::empty);
        CHECK(st.error().index == 1);
        CHECK(st.error().message.find("float channel 1 'empty'") != std::string::npos);
    }
    SUBCASE("two channels of one kind with one name; the same name in both kinds is fine") {
        c.vector_channels.push_back({"blink", position_track<float>{{0.0f, glm::vec3(0)}}});
        CHECK(validate_clip(c, s));
        c.vector_channels.push_back({"look", position_track<float>{{0.0f, glm::vec3(0)}}});
        const status st = validate_clip(c, s);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::duplicate);
        CHECK(st.error().message.find("vector channel 2 'look'") != std::string::npos);
    }
    SUBCASE("a NaN key in a user channel") {
        c.float_channels[0].keys.value(1) = NAN;
        const status st = validate_clip(c, s);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::non_finite);
        CHECK(st.error().message.find("'blink'") != std::string::npos);
        CHECK(st.error().message.find("key 1") != std::string::npos);
    }
    SUBCASE("an event out of the clip, or NaN, or out of order") {
        c.events[2].time = 100.5f;
        status st = validate_clip(c, s);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::out_of_range);
        CHECK(st.error().index == 2);
        CHECK(st.error().message.find("event 2 'e2'") != std::string::npos);
        c.events[2].time = -1.0f;
        CHECK(validate_clip(c, s).error().code == errc::out_of_range);
        c.events[2].time = NAN;
        CHECK(validate_clip(c, s).error().code == errc::non_finite);
        c.events[2].time = 40.0f;
        st = validate_clip(c, s);
        CHECK(st.error().code == errc::unsorted);
        CHECK(st.error().message.find("before event 1") != std::string::npos);
        c.events[2].time = 50.0f; // equal times are fine
        CHECK(validate_clip(c, s));
    }
    SUBCASE("a motion track with a bad key") {
        c.motion.rotation.push_back(0.0f, make_quat(2, 0, 0, 0));
        const status st = validate_clip(c, s);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::not_normalized);
        CHECK(st.error().message.find("motion rotation") != std::string::npos);
    }
}

TEST_CASE("user channels sample like their tracks, into caller memory") {
    clip c;
    c.float_channels.push_back({"weight", float_track<float>{{0.0f, 0.0f}, {10.0f, 1.0f}, {20.0f, 0.5f}}});
    c.float_channels.push_back({"flag", float_track<float>({{0.0f, 0.0f}, {5.0f, 1.0f}}, interpolation::step)});
    c.vector_channels.push_back({"offset", position_track<float>{{0.0f, glm::vec3(0)}, {10.0f, glm::vec3(1, 2, 3)}}});
    for (float t : {-1.0f, 0.0f, 2.5f, 5.0f, 10.0f, 17.0f, 25.0f}) {
        float f[2] = {-7.0f, -7.0f};
        REQUIRE(sample_user_channels(c.float_channels, t, f, 2));
        CHECK(bit_equal(f[0], sample_track(c.float_channels[0].keys, t)));
        CHECK(bit_equal(f[1], sample_track(c.float_channels[1].keys, t)));
        std::vector<glm::vec3> v;
        sample_user_channels(c.vector_channels, t, v);
        REQUIRE(v.size() == 1);
        CHECK(bit_equal(v[0], sample_track(c.vector_channels[0].keys, t)));
    }
    float one[1] = {-7.0f};
    CHECK(sample_user_channels(c.float_channels, 3.0f, one, 1).error().code == errc::size_mismatch);
    CHECK(one[0] == -7.0f); // nothing written
    c.float_channels[1].keys.clear(); // (validate_clip rejects it) gives 0
    std::vector<float> f;
    sample_user_channels(c.float_channels, 3.0f, f);
    CHECK(f[1] == 0.0f);
    CHECK(find_user_channel(c.float_channels, "flag") == 1);
    CHECK(find_user_channel(c.float_channels, "Flag") == 2);
    CHECK(find_user_channel(c.vector_channels, "offset") == 0);
}

TEST_CASE("passed_events: (from, to] forward, [to, from) backward, in playback order") {
    const clip c = event_clip(100.0f, {0.0f, 20.0f, 20.0f, 70.0f, 100.0f});
    std::vector<passed_event> got;
    passed_events(c, 10.0f, 70.0f, event_range::exclude_from, got);
    REQUIRE(got.size() == 3);
    CHECK(got[0].event == 1);
    CHECK(got[1].event == 2); // equal times: clip order
    CHECK(got[2].event == 3);
    CHECK(got[2].time == 70.0);
    passed_events(c, 70.0f, 10.0f, event_range::exclude_from, got); // backward: 70 was reported already
    REQUIRE(got.size() == 2);
    CHECK(got[0].event == 2); // equal times: reversed
    CHECK(got[1].event == 1);
    passed_events(c, 20.0f, 70.0f, event_range::exclude_from, got);
    CHECK(got.size() == 1);
    SUBCASE("include_from: the events at the start too, e.g. at time 0 when playback starts") {
        // Not the event at the end (100), which is at 0 too, but for the loop before the start.
        passed_events(c, 0.0f, 15.0f, event_range::include_from, got);
        REQUIRE(got.size() == 1);
        CHECK(got[0].event == 0);
        passed_events(c, 0.0f, -15.0f, event_range::include_from, got); // backward: the reverse
        REQUIRE(got.size() == 1);
        CHECK(got[0].event == 4);
        CHECK(got[0].time == 0.0);
        passed_events(c, 200.0f, 215.0f, event_range::include_from, got); // at any loop boundary
        REQUIRE(got.size() == 1);
        CHECK(got[0].event == 0);
        passed_events(c, 0.0f, 15.0f, event_range::exclude_from, got);
        CHECK(got.empty());
        passed_events(c, 20.0f, 20.0f, event_range::include_from, got);
        CHECK(got.size() == 2);
        passed_events(c, 20.0f, 20.0f, event_range::exclude_from, got);
        CHECK(got.empty());
    }
    SUBCASE("looping: across a wrap, the event at the end then the one at the start") {
        passed_events(c, 90.0, 130.0, event_range::exclude_from, got);
        REQUIRE(got.size() == 4);
        CHECK(got[0].event == 4);
        CHECK(got[0].time == 100.0);
        CHECK(got[1].event == 0);
        CHECK(got[1].time == 100.0);
        CHECK(got[2].time == 120.0);
        CHECK(got[3].time == 120.0);
        passed_events(c, 130.0, -230.0, event_range::exclude_from, got); // backward over 3.6 loops
        CHECK(same_events(got, expected_events(c, 130.0, -230.0, event_range::exclude_from)));
        CHECK(got.size() == 3 + 5 * 3 + 2); // 100 120 120 | three whole loops | -200 -230
    }
    SUBCASE("non-finite times report nothing") {
        CHECK(passed_events(c, NAN, 10.0, event_range::include_from, nullptr, 0) == 0);
        CHECK(passed_events(c, 0.0, INFINITY, event_range::include_from, nullptr, 0) == 0);
    }
}

TEST_CASE("passed_events: each wrap mode's timeline, against brute force") {
    kbtest::rng rng(41);
    for (wrap_mode wrap : {wrap_mode::loop, wrap_mode::loop_inclusive, wrap_mode::clamp}) {
        CAPTURE(int(wrap));
        const clip c = event_clip(48.0f, {0.0f, 3.0f, 3.0f, 17.5f, 40.0f, 48.0f}, wrap);
        for (int trial = 0; trial < 400; ++trial) {
            // Integer and half ticks, so that intervals often start or end exactly on an event.
            const double from = 0.5 * rng.integer(-400, 400), to = 0.5 * rng.integer(-400, 400);
            for (event_range range : {event_range::exclude_from, event_range::include_from}) {
                CAPTURE(from);
                CAPTURE(to);
                std::vector<passed_event> got;
                passed_events(c, from, to, range, got);
                CHECK(same_events(got, expected_events(c, from, to, range)));
            }
        }
    }
}

TEST_CASE("passed_events: consecutive updates report every event once, forward and backward, over 10 loops") {
    const clip c = event_clip(30.0f, {0.0f, 7.0f, 7.0f, 29.0f, 30.0f});
    kbtest::rng rng(5);
    for (double direction : {1.0, -1.0}) {
        std::vector<passed_event> all, step;
        double t = 0.0;
        while (std::fabs(t) < 300.0) {
            // Steps from a fraction of a tick to more than a loop; some land exactly on events.
            const double dt = rng.integer(0, 3) == 0 ? double(rng.integer(1, 40)) : double(rng.uniform(0.01f, 45.0f));
            const double next = t + direction * dt;
            // Playback starts at 0: the first update reports the events there too.
            passed_events(c, t, next, t == 0.0 ? event_range::include_from : event_range::exclude_from, step);
            all.insert(all.end(), step.begin(), step.end());
            t = next;
        }
        // Exactly the occurrences between 0 and t, each once, in order.
        CHECK(same_events(all, expected_events(c, 0.0, t, event_range::include_from)));
        CHECK(all.size() >= 10 * c.events.size());
    }
}

TEST_CASE("passed_events: a small buffer gets the first occurrences and the total: a huge jump is counted, not walked") {
    const clip c = event_clip(10.0f, {1.0f, 2.0f, 5.0f});
    passed_event buf[4];
    CHECK(passed_events(c, 0.0, 35.0, event_range::exclude_from, buf, 4) == 12); // 1 2 5 11 ... 35
    CHECK(buf[3].event == 0);
    CHECK(buf[3].time == 11.0);
    CHECK(passed_events(c, 0.0, 35.0, event_range::exclude_from, nullptr, 0) == 12);
    // A billion loops in one step.
    CHECK(passed_events(c, 0.0, 1e10, event_range::exclude_from, buf, 4) == std::size_t(3e9));
    CHECK(buf[0].time == 1.0);
    CHECK(passed_events(c, 1e10, 0.0, event_range::exclude_from, buf, 2) == std::size_t(3e9));
    CHECK(buf[0].time == 1e10 - 5.0);
}

TEST_CASE("passed_events: a zero-length clip reports its events once, at their time") {
    const clip c = event_clip(0.0f, {0.0f, 0.0f});
    std::vector<passed_event> got;
    passed_events(c, -5.0, 500.0, event_range::exclude_from, got);
    CHECK(got.size() == 2);
    passed_events(c, 0.0, 500.0, event_range::exclude_from, got);
    CHECK(got.empty());
    passed_events(c, 0.0, 500.0, event_range::include_from, got);
    CHECK(got.size() == 2);
}
TEST_CASE("sample_clip: a block whose first track has keys of its own still shares the others' search") {
    // Exporters drop a few keys of some tracks: joint 0's rotation misses two of the common key
    // times, joints 1-7 have them all. The seven share one search (the largest group, not the
    // first track's); every result is sample_track's.
    const skeleton s = kbtest::random_skeleton(8, 41);
    kbtest::rng rng(42);
    clip c;
    for (std::size_t j = 0; j < 8; ++j) {
        channel ch;
        ch.joint = j;
        for (int k = 0; k < 20; ++k)
            if (j != 0 || (k != 5 && k != 11)) ch.rotation.push_back(float(k) * 30.0f, rng.rotation());
        c.channels.push_back(ch);
    }
    c.duration = last_key_time(c);
    REQUIRE(validate_clip(c, s));
    sampling_context ctx;
    local_pose out;
    for (float t = -5.0f; t < c.duration + 10.0f; t += 7.5f) {
        REQUIRE(sample_clip(c, s, t, ctx, out));
        for (std::size_t j = 0; j < 8; ++j)
            CHECK(kbtest::max_abs_diff(out.get(j).rotation, sample_track(c.channels[j].rotation, t)) < 2e-6f);
    }
}

// ---------------------------------------------------------------------------------------------
// Cubic splines, cuts and morph weights through the sampling context
// ---------------------------------------------------------------------------------------------

namespace {

// The same keys as a cubic spline with random tangents.
template <class Value>
track<Value, float> as_cubic(const track<Value, float>& in, kbtest::rng& rng) {
    track<Value, float> out(interpolation::cubic_spline);
    for (std::size_t k = 0; k < in.size(); ++k) {
        Value a, b;
        if constexpr (std::is_same_v<Value, glm::quat>) {
            a = make_quat(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1));
            b = make_quat(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1));
            a = a * 0.02f;
            b = b * 0.02f;
        } else {
            a = rng.vec3(-0.1f, 0.1f);
            b = rng.vec3(-0.1f, 0.1f);
        }
        out.push_back(in.time(k), a, in.value(k), b);
    }
    return out;
}

// A key repeated at the time of key `k` with another value: a cut there.
template <class Value>
void add_cut(track<Value, float>& tr, std::size_t k, const Value& value) {
    track<Value, float> out(tr.mode());
    for (std::size_t i = 0; i < tr.size(); ++i) {
        if (tr.mode() == interpolation::cubic_spline)
            out.push_back(tr.time(i), tr.in_tangents()[i], tr.value(i), tr.out_tangents()[i]);
        else
            out.push_back(tr.time(i), tr.value(i));
        if (i == k) {
            if (tr.mode() == interpolation::cubic_spline)
                out.push_back(tr.time(i), tr.in_tangents()[i], value, tr.out_tangents()[i]);
            else
                out.push_back(tr.time(i), value);
        }
    }
    tr = out;
}

void make_cubic_and_cuts(sample_fixture& f) {
    kbtest::rng rng(41);
    for (channel& ch : f.c.channels) {
        if (ch.has_matrix()) continue;
        if (ch.joint == 0 || ch.joint == 11) ch.translation = as_cubic(ch.translation, rng);
        if (ch.joint == 1 || ch.joint == 11) ch.rotation = as_cubic(ch.rotation, rng);
        if (ch.joint == 9 || ch.joint == 11) ch.scale = as_cubic(ch.scale, rng);
        if (ch.joint == 0) add_cut(ch.translation, 2, rng.vec3(-2, 2));
        if (ch.joint == 12) add_cut(ch.rotation, 3, rng.rotation());
        if (ch.joint == 3) add_cut(ch.translation, 1, rng.vec3(-2, 2)); // (step)
    }
    REQUIRE(validate_clip(f.c, f.s));
}

} // namespace

TEST_CASE("sample_clip: cubic splines and cuts equal sample_track on every lane path") {
    sample_fixture f;
    make_cubic_and_cuts(f);
    check_lane_paths(f);
}

TEST_CASE("sample_clip: cubic splines and cuts among tracks keyed at shared times") {
    sample_fixture f(true, true);
    make_cubic_and_cuts(f);
    check_lane_paths(f);
    sampling_context ctx;
    std::vector<float> times;
    for (float t = -3.0f; t < f.c.duration + 3.0f; t += 0.7f) times.push_back(t);
    check_public(f, times, ctx);
}

TEST_CASE("sampling contexts: one context rebinding between clips with and without cubic splines") {
    // A context bound to a clip without cubic splines holds no tangent streams; rebinding it to
    // one with them must make room for them, and back again keep sampling right.
    const sample_fixture plain;
    sample_fixture cubic;
    make_cubic_and_cuts(cubic);
    sampling_context ctx;
    local_pose out, fresh;
    const auto same_as_fresh = [&](const sample_fixture& f, float t) {
        sampling_context once;
        REQUIRE(sample_clip(f.c, f.s, t, ctx, out));
        REQUIRE(sample_clip(f.c, f.s, t, once, fresh));
        for (std::size_t j = 0; j < f.s.size(); ++j) CHECK(kbtest::bit_equal_transform(out.get(j), fresh.get(j)));
    };
    for (int round = 0; round < 2; ++round) {
        for (float t = 0.0f; t < 200.0f; t += 13.0f) same_as_fresh(plain, t);
        for (float t = 3.0f; t < 200.0f; t += 11.0f) same_as_fresh(cubic, t);
    }
    // A copy of a context bound to cubic splines carries its tangents.
    REQUIRE(sample_clip(cubic.c, cubic.s, 47.0f, ctx, out));
    sampling_context copy = ctx;
    REQUIRE(sample_clip(cubic.c, cubic.s, 48.0f, copy, fresh));
    REQUIRE(sample_clip(cubic.c, cubic.s, 48.0f, ctx, out));
    for (std::size_t j = 0; j < cubic.s.size(); ++j) CHECK(kbtest::bit_equal_transform(out.get(j), fresh.get(j)));
}

namespace {

// Blocks of joints whose lanes all hold one value at every time (tracks of one key, or no track)
// settle after their first sample: the sampler neither refreshes nor interpolates them again. 20
// joints (blocks of 8, the last partial): block 0 one-key tracks only (keys at 0 to 45, so samples
// fall before and after them; one rotation by nlerp) and a joint without a channel; block 1
// animated rotations on its even joints among one-key translations and scales; block 2 an
// animated translation (a cubic spline when `cubic`) and another joint without a channel.
sample_fixture constant_blocks_fixture(bool cubic) {
    sample_fixture f; // (its skeleton and clip replaced)
    f.s = kbtest::random_skeleton(20, 31);
    f.c = clip{};
    kbtest::rng rng(8);
    for (std::size_t j = 0; j < 20; ++j) {
        if (j == 3 || j == 17) continue;
        channel ch;
        ch.joint = j;
        const float at = float(j % 4) * 15.0f;
        ch.translation.push_back(at, rng.vec3(-2, 2));
        ch.scale.push_back(at + 5.0f, rng.vec3(0.5f, 2));
        if (j >= 8 && j < 16 && j % 2 == 0) {
            for (int k = 0; k < 6; ++k) ch.rotation.push_back(float(k) * 20.0f, rng.rotation());
        } else {
            ch.rotation.push_back(at, rng.rotation());
        }
        if (j == 5) ch.rotation.set_mode(interpolation::nlerp);
        if (j == 18) {
            ch.translation.clear();
            for (int k = 0; k < 8; ++k) ch.translation.push_back(float(k) * 12.0f, rng.vec3(-2, 2));
            if (cubic) ch.translation = as_cubic(ch.translation, rng);
        }
        f.c.channels.push_back(ch);
    }
    f.c.duration = last_key_time(f.c);
    REQUIRE(validate_clip(f.c, f.s));
    return f;
}

// Every animated rotation by nlerp, beside joints whose rotation never interpolates (no channel,
// a channel without rotation keys, the padding): 21 joints, every fifth without a channel and
// every fifth from the third on without rotation keys. The sampler takes nlerp alone for a block
// whose other lanes never interpolate (alpha 0, where slerp and nlerp both give the key).
sample_fixture nlerp_blocks_fixture() {
    sample_fixture f; // (its skeleton and clip replaced)
    f.s = kbtest::random_skeleton(21, 7);
    f.c = clip{};
    kbtest::rng rng(12);
    for (std::size_t j = 0; j < 21; ++j) {
        if (j % 5 == 4) continue;
        channel ch;
        ch.joint = j;
        for (int k = 0; k < 6; ++k) ch.translation.push_back(float(k) * 20.0f, rng.vec3(-2, 2));
        if (j % 5 != 2) {
            for (int k = 0; k < 7; ++k) ch.rotation.push_back(float(k) * 17.0f, rng.rotation());
            ch.rotation.set_mode(interpolation::nlerp);
        }
        f.c.channels.push_back(ch);
    }
    f.c.duration = last_key_time(f.c);
    REQUIRE(validate_clip(f.c, f.s));
    return f;
}

// check_lane_paths on `f`, then the widest lanes (two blocks a step where the build has them)
// with a native tail and the public function, forward and back again.
void check_blocks(const sample_fixture& f) {
    check_lane_paths(f);
    sampling_context wide, pub;
    local_pose out;
    std::vector<float> times;
    for (float t = -7.0f; t < f.c.duration + 9.0f; t += 0.6f) times.push_back(t);
    for (float t = f.c.duration + 3.0f; t > -4.0f; t -= 1.3f) times.push_back(t);
    for (float t : times) {
        REQUIRE((sample_wide<impl::lanes::widest, impl::lanes::native>(f, t, wide, out)));
        for (std::size_t j = 0; j < f.s.size(); ++j)
            CHECK(kbtest::max_abs_diff(out.get(j), f.expected(j, t)) < 2e-6f);
        CHECK(kbtest::padding_is_identity(out));
    }
    check_public(f, times, pub);
}

} // namespace

TEST_CASE("sample_clip: blocks of constant lanes (one key, or none) equal sample_track on every lane path") {
    check_blocks(constant_blocks_fixture(false));
}

TEST_CASE("sample_clip: blocks of constant lanes beside a cubic spline equal sample_track on every lane path") {
    check_blocks(constant_blocks_fixture(true));
}

TEST_CASE("sample_clip: rotations by nlerp beside joints without rotation keys equal sample_track on every lane path") {
    check_blocks(nlerp_blocks_fixture());
}

TEST_CASE("sample_clip: a settled block whose one-key tracks gain keys samples them after reset()") {
    sample_fixture f = constant_blocks_fixture(false);
    sampling_context ctx;
    local_pose out;
    for (float t : {0.0f, 10.0f, 50.0f}) REQUIRE(sample_clip(f.c, f.s, t, ctx, out));
    // Block 0's lanes are settled now. Without reset(): unspecified values, but every read stays
    // inside the tracks (ASan checks) and every run succeeds.
    kbtest::rng rng(3);
    channel& ch = f.c.channels[1]; // joint 1
    REQUIRE(ch.joint == 1);
    ch.translation.clear();
    ch.rotation.clear();
    for (int k = 0; k < 4; ++k) {
        ch.translation.push_back(float(k) * 10.0f, rng.vec3(-2, 2));
        ch.rotation.push_back(float(k) * 10.0f, rng.rotation());
    }
    f.c.channels[0].scale.clear();
    for (float t = 0.0f; t < 60.0f; t += 3.0f) CHECK(sample_clip(f.c, f.s, t, ctx, out));
    ctx.reset();
    std::vector<float> times;
    for (float t = -2.0f; t < 50.0f; t += 2.5f) times.push_back(t);
    check_public(f, times, ctx);
}

TEST_CASE("sample_clip: morph weights from the channels' tracks, the bind pose's elsewhere") {
    std::vector<joint_desc> joints(3);
    joints[0].name = "root";
    joints[1] = {"face", 0, glm::mat4(1.0f), {0.25f, 0.5f, 0.75f}};
    joints[2] = {"other", 0, glm::mat4(1.0f), {0.125f}};
    const skeleton s = skeleton::from_parents(joints).value();
    REQUIRE(s.morph_weight_total() == 4);
    CHECK(s.morph_weight_offset(1) == 0);
    CHECK(s.morph_weight_count(1) == 3);
    CHECK(s.morph_weight_offset(2) == 3);
    CHECK(s.morph_weight_count(0) == 0);
    clip c;
    channel ch;
    ch.joint = 1;
    ch.morph_weights.resize(3);
    ch.morph_weights[0] = float_track<float>{{0.0f, 0.0f}, {2.0f, 1.0f}};
    ch.morph_weights[2] = float_track<float>({{0.0f, 1.0f}, {1.0f, 0.0f}}, interpolation::step);
    c.channels.push_back(ch);
    c.duration = 2.0f;
    REQUIRE(validate_clip(c, s));
    sampling_context ctx;
    local_pose pose;
    for (float t : {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 0.25f}) {
        REQUIRE(sample_clip(c, s, t, ctx, pose));
        REQUIRE(pose.morph_weights().size() == 4);
        CHECK(pose.morph_weights()[0] == doctest::Approx(std::min(t, 2.0f) / 2.0f));
        CHECK(pose.morph_weights()[1] == 0.5f); // no track: the bind pose's
        CHECK(pose.morph_weights()[2] == (t < 1.0f ? 1.0f : 0.0f));
        CHECK(pose.morph_weights()[3] == 0.125f);
    }
    // A wrong number of weight tracks is reported, naming the channel.
    c.channels[0].morph_weights.resize(2);
    const status st = validate_clip(c, s);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::size_mismatch);
    CHECK(st.error().message.find("morph weight") != std::string::npos);
    // The bind pose carries the weights too.
    const local_pose bind(s);
    REQUIRE(bind.morph_weights().size() == 4);
    CHECK(bind.morph_weights()[1] == 0.5f);
}
