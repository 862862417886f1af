#include <keyblend/clip.hpp>

#include "helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/type_ptr.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace keyblend;
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

// The seeds' matrix-key sampling, transcribed (blending-skeletal-animations.txt): the last key at or
// before Time, the next one (or the same at the end), scalar = (Time - T1) / max(T2 - T1, 1), and
// matDiff = (K2 - K1) * scalar + K1.
glm::mat4 seed_matrix_sample(const matrix_track<float>& t, std::uint32_t time) {
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

// The timed-keyframe seed's four matrix keys (D3D memory order = the same glm::mat4).
matrix_track<float> seed_keys() {
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

TEST_CASE("a valid clip validates; first and last key times span every track") {
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
    b.matrix = seed_keys();
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
    c.wrap = wrap_mode::loop_inclusive; // the blended-collection seed: Time % (Length + 1)
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

TEST_CASE("matrix channels sample element-wise, exactly as the seeds do") {
    const matrix_track<float> t = seed_keys();
    channel ch;
    ch.matrix = t;
    for (std::uint32_t time = 0; time <= 1300; time += 7) {
        const glm::mat4 ours = sample_channel_matrix(ch, float(time), transform{}, glm::mat4(1));
        const glm::mat4 seed = seed_matrix_sample(t, time);
        CHECK(max_abs_diff(ours, seed) <= 1e-5f);
        if (time % 400 == 0 && time <= 1200) CHECK(bit_equal(ours, t.value(time / 400)));
    }
    // Mid-way between 90 degree keys the element-wise lerp shrinks the axes (the seeds' flaw, kept).
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

TEST_CASE("ends clamp per track; NaN samples the first keys") {
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
