#include <keyblend/player.hpp>

#include "helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::bit_equal;
using kbtest::max_abs_diff;

namespace {

skeleton biped() { return kbtest::biped(3); }

// A set that turns `joints` through five random rotations over `length` ticks (keys every
// length / 4), and moves the odd ones.
clip make_set(const char* name, const std::vector<std::size_t>& joints, float length, std::uint32_t seed,
              wrap_mode wrap = wrap_mode::loop) {
    kbtest::rng rng(seed);
    clip c;
    c.name = name;
    c.wrap = wrap;
    for (std::size_t j : joints) {
        channel ch;
        ch.joint = j;
        for (int k = 0; k <= (length > 0.0f ? 4 : 0); ++k)
            ch.rotation.push_back(length * float(k) / 4.0f, rng.rotation());
        if (j % 2 && length > 0.0f) {
            ch.translation.push_back(0.0f, rng.vec3(-1, 1));
            ch.translation.push_back(length, rng.vec3(-1, 1));
        }
        c.channels.push_back(ch);
    }
    c.duration = last_key_time(c);
    return c;
}

struct fixture {
    skeleton s = biped();
    std::vector<clip> sets = {make_set("Walk", {1, 2, 3, 4}, 1000.0f, 1),
                              make_set("Shoot", {6, 7, 8, 9}, 400.0f, 2),
                              make_set("Stand", {0, 1, 2, 3, 4, 5}, 0.0f, 3),
                              make_set("Wave", {6, 7}, 600.0f, 4, wrap_mode::clamp),
                              make_set("", {5}, 100.0f, 5)};
    player p = player::create(s, sets).value();

    // A set's local matrices at `time` (ticks, as given) in the TRS pipeline.
    std::vector<glm::mat4> trs_local(std::size_t set, float time) const {
        sampling_context ctx;
        local_pose pose;
        REQUIRE(sample_clip(sets[set], s, time, ctx, pose));
        std::vector<glm::mat4> m;
        to_local_matrices(pose, m);
        return m;
    }
};

float worst_diff(const std::vector<glm::mat4>& a, const std::vector<glm::mat4>& b) {
    REQUIRE(a.size() == b.size());
    float worst = 0.0f;
    for (std::size_t j = 0; j < a.size(); ++j) worst = std::max(worst, max_abs_diff(a[j], b[j]));
    return worst;
}

} // namespace

TEST_CASE("player: sets are found by name ignoring case, nullptr is the first set") {
    fixture f;
    CHECK(f.p.find("Walk").value() == 0);
    CHECK(f.p.find("wALK").value() == 0);
    CHECK(f.p.find("SHOOT").value() == 1);
    CHECK(f.p.find(nullptr).value() == 0);
    CHECK(f.p.find("").value() == 4); // an unnamed set, as in tiny.x
    const result<std::size_t> missing = f.p.find("Run");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == errc::not_found);
    CHECK(missing.error().message.find("'Run'") != std::string::npos);
    CHECK(missing.error().message.find("'Walk', 'Shoot', 'Stand', 'Wave', ''") != std::string::npos);
    SUBCASE("an exact match wins over a case-insensitive one") {
        std::vector<clip> two = {make_set("walk", {1}, 10.0f, 6), make_set("Walk", {2}, 10.0f, 7)};
        const player q = player::create(f.s, two).value();
        CHECK(q.find("Walk").value() == 1);
        CHECK(q.find("WALK").value() == 0);
    }
    SUBCASE("a player without sets says so") {
        const std::vector<clip> none;
        const player q = player::create(f.s, none).value();
        CHECK(q.find(nullptr).error().code == errc::empty);
    }
    CHECK(equal_ignore_case("Bip01_L_Thigh", "bip01_l_thigh"));
    CHECK_FALSE(equal_ignore_case("abc", "abd"));
    CHECK_FALSE(equal_ignore_case("abc", "abcd"));
}

TEST_CASE("player: creation validates every set and names the bad one") {
    const skeleton s = biped();
    std::vector<clip> sets = {make_set("Walk", {1}, 100.0f, 1), make_set("Broken", {2}, 100.0f, 2)};
    sets[1].channels[0].rotation.value(2) = make_quat(NAN, 0, 0, 0);
    const result<player> p = player::create(s, sets);
    REQUIRE_FALSE(p);
    CHECK(p.error().code == errc::non_finite);
    CHECK(p.error().index == 1);
    CHECK(p.error().message.find("set 1") != std::string::npos);
    CHECK(p.error().message.find("'Broken'") != std::string::npos);
}

TEST_CASE("player: the seed's scenario, Walk on the legs and Shoot on the arms at weight 1") {
    fixture f;
    for (double t : {0.0, 125.0, 399.0, 400.0, 733.5, 1000.0}) {
        f.p.reset();
        REQUIRE(f.p.blend("Walk", t, true, 1.0f));
        REQUIRE(f.p.blend("Shoot", t, true, 1.0f));
        f.p.update_hierarchy();
        std::vector<glm::mat4> walk, shoot;
        REQUIRE(sample_local_matrices(f.sets[0], f.s, float(wrap_time(t, 1000.0, wrap_mode::loop_inclusive)), walk));
        REQUIRE(sample_local_matrices(f.sets[1], f.s, float(wrap_time(t, 400.0, wrap_mode::loop_inclusive)), shoot));
        for (std::size_t j : {1u, 2u, 3u, 4u}) CHECK(max_abs_diff(f.p.local()[j], walk[j]) < 1e-6f);
        for (std::size_t j : {6u, 7u, 8u, 9u}) CHECK(max_abs_diff(f.p.local()[j], shoot[j]) < 1e-6f);
        for (std::size_t j : {0u, 5u}) CHECK(bit_equal(f.p.local()[j], f.s.bind_local()[j]));
        std::vector<glm::mat4> model;
        local_to_model(f.s, f.p.local(), model);
        CHECK(worst_diff(model, f.p.model()) == 0.0f);
    }
}

TEST_CASE("player: Blend's time rule, Time % (Length + 1) when looping, the last frame otherwise") {
    fixture f;
    const auto blended = [&](double t, bool loop) {
        f.p.reset();
        REQUIRE(f.p.blend("Shoot", t, loop, 1.0f));
        return f.p.local();
    };
    const auto at = [&](float t) {
        std::vector<glm::mat4> m;
        REQUIRE(sample_local_matrices(f.sets[1], f.s, t, m));
        return m;
    };
    // Shoot is 400 ticks long: looping, tick 401 is tick 0 and 1000 is 1000 % 401 = 198.
    CHECK(worst_diff(blended(401, true), at(0)) < 1e-6f);
    CHECK(worst_diff(blended(1000, true), at(198)) < 1e-6f);
    CHECK(worst_diff(blended(400, true), at(400)) < 1e-6f);
    // Not looping: anything past the end is the last frame.
    CHECK(worst_diff(blended(1000, false), at(400)) < 1e-6f);
    CHECK(worst_diff(blended(250, false), at(250)) < 1e-6f);
    // Bad input changes nothing.
    f.p.reset();
    const std::vector<glm::mat4> before = f.p.local();
    CHECK(f.p.blend("Shoot", NAN, true, 1.0f).error().code == errc::non_finite);
    CHECK(f.p.blend("Shoot", 10.0, true, NAN).error().code == errc::non_finite);
    CHECK(f.p.blend("Jump", 10.0, true, 1.0f).error().code == errc::not_found);
    CHECK(worst_diff(f.p.local(), before) == 0.0f);
}

TEST_CASE("player: playing one set from a start time, looping or not, and completion") {
    fixture f;
    CHECK(f.p.is_complete(0.0)); // no set
    CHECK(f.p.current() == f.sets.size());
    REQUIRE(f.p.update_animation(50.0));
    CHECK(worst_diff(f.p.local(), f.s.bind_local()) < 1e-6f); // no set: the bind pose
    REQUIRE(f.p.set_animation("walk", 100.0));
    CHECK(f.p.current() == 0);
    for (double t : {100.0, 350.0, 1100.0, 1350.25, 2600.0}) {
        REQUIRE(f.p.update_animation(t));
        // Walk loops with period 1000 (the object seed's time % length).
        CHECK(worst_diff(f.p.local(), f.trs_local(0, float(std::fmod(t - 100.0, 1000.0)))) < 1e-6f);
    }
    CHECK_FALSE(f.p.is_complete(1099.0));
    CHECK(f.p.is_complete(1100.0));
    // Wave clamps: past its end it holds the last frame.
    REQUIRE(f.p.set_animation("Wave", 0.0));
    REQUIRE(f.p.update_animation(5000.0));
    CHECK(worst_diff(f.p.local(), f.trs_local(3, 600.0f)) < 1e-6f);
    // Stand has length 0: its first frame at every time, and it is always complete.
    REQUIRE(f.p.set_animation("Stand", 0.0));
    for (double t : {0.0, 1.0, 77.0}) {
        REQUIRE(f.p.update_animation(t));
        CHECK(worst_diff(f.p.local(), f.trs_local(2, 0.0f)) < 1e-6f);
        CHECK(f.p.is_complete(t));
    }
    // reset_animation restarts the clock.
    REQUIRE(f.p.set_animation("Walk", 0.0));
    f.p.reset_animation(500.0);
    REQUIRE(f.p.update_animation(600.0));
    CHECK(worst_diff(f.p.local(), f.trs_local(0, 100.0f)) < 1e-6f);
    // Model matrices follow, with the root transform.
    const glm::mat4 root = glm::translate(glm::mat4(1.0f), glm::vec3(5, 0, -2));
    REQUIRE(f.p.update_animation(600.0, root));
    std::vector<glm::mat4> model;
    local_to_model(f.s, f.p.local(), model, root);
    CHECK(worst_diff(model, f.p.model()) < 1e-5f);
    // A missing set or a bad time changes nothing.
    CHECK(f.p.set_animation("Jump").error().code == errc::not_found);
    CHECK(f.p.set_animation("Walk", INFINITY).error().code == errc::non_finite);
    CHECK(f.p.update_animation(NAN).error().code == errc::non_finite);
    CHECK(f.p.current() == 0);
}

TEST_CASE("player: a crossfade hands over linearly and keeps the bones rigid") {
    fixture f;
    REQUIRE(f.p.set_animation("Walk", 0.0));
    REQUIRE(f.p.fade_to("Stand", 200.0, 100.0));
    CHECK(f.p.fading());
    // Completion is the target's: Stand (length 0) from tick 200.
    CHECK_FALSE(f.p.is_complete(199.0));
    CHECK(f.p.is_complete(200.0));
    // At the start of the fade: Walk alone.
    REQUIRE(f.p.update_animation(200.0));
    CHECK(worst_diff(f.p.local(), f.trs_local(0, 200.0f)) < 1e-6f);
    // Half-way: the two sets blended 50/50 in TRS space.
    REQUIRE(f.p.update_animation(250.0));
    {
        sampling_context a, b;
        local_pose pa, pb, mid;
        REQUIRE(sample_clip(f.sets[0], f.s, 250.0f, a, pa));
        REQUIRE(sample_clip(f.sets[2], f.s, 0.0f, b, pb));
        const local_pose rest(f.s);
        const blend_layer layers[] = {{&pa, 0.5f}, {&pb, 0.5f}};
        blend_job job;
        job.rest_pose = &rest;
        job.layers = layers;
        job.layer_count = 2;
        job.threshold = 0.0f;
        job.output = &mid;
        REQUIRE(job.run());
        std::vector<glm::mat4> expect;
        to_local_matrices(mid, expect);
        CHECK(worst_diff(f.p.local(), expect) < 1e-6f);
        for (const glm::mat4& m : f.p.local())
            for (int c = 0; c < 3; ++c) CHECK(std::fabs(glm::length(glm::vec3(m[c])) - 1.0f) < 1e-5f);
    }
    // At the end the target is the current set.
    REQUIRE(f.p.update_animation(300.0));
    CHECK_FALSE(f.p.fading());
    CHECK(f.p.current() == 2);
    CHECK(worst_diff(f.p.local(), f.trs_local(2, 0.0f)) < 1e-6f);
    // Without a current set, or with no duration, a fade is a switch.
    REQUIRE(f.p.fade_to("Shoot", 0.0, 0.0));
    CHECK_FALSE(f.p.fading());
    CHECK(f.p.current() == 1);
    CHECK(f.p.fade_to("Shoot", 0.0, NAN).error().code == errc::non_finite);
    CHECK(f.p.fade_to("Nope", 0.0, 10.0).error().code == errc::not_found);
    CHECK(f.p.current() == 1);
}

TEST_CASE("player: attaching an object to a joint, and the bounds of the posed skeleton") {
    fixture f;
    REQUIRE(f.p.set_animation("Shoot", 0.0));
    REQUIRE(f.p.update_animation(123.0));
    const glm::mat4 sword = glm::translate(glm::mat4(1.0f), glm::vec3(0, 0.5f, 0));
    const glm::mat4 world = glm::rotate(glm::mat4(1.0f), 0.7f, glm::vec3(0, 1, 0));
    const std::size_t hand = f.s.find("hand_r").value();
    const glm::mat4 expect = world * f.p.model()[hand] * sword;
    CHECK(max_abs_diff(f.p.attachment("hand_r", sword, world).value(), expect) == 0.0f);
    CHECK(max_abs_diff(f.p.attachment(hand, sword, world), expect) == 0.0f);
    CHECK(max_abs_diff(f.p.attachment(nullptr, sword).value(), f.p.model()[0] * sword) == 0.0f);
    CHECK(f.p.attachment("tail", sword).error().code == errc::not_found);
    // The object follows the hand: a point at the sword's origin is the hand's origin moved
    // 0.5 along the hand's y axis.
    const glm::vec3 tip(expect[3]);
    const glm::vec3 hand_origin(world * f.p.model()[hand][3]);
    CHECK(std::fabs(glm::length(tip - hand_origin) - 0.5f * glm::length(glm::vec3(f.p.model()[hand][1]))) < 1e-5f);

    const joint_bounds b = f.p.bounds();
    float radius = 0.0f;
    for (const glm::mat4& m : f.p.model()) {
        const glm::vec3 p(m[3]);
        for (int k = 0; k < 3; ++k) {
            CHECK(p[k] >= b.min[k]);
            CHECK(p[k] <= b.max[k]);
        }
        radius = std::max(radius, glm::length(p));
    }
    CHECK(b.radius == doctest::Approx(radius));
    for (int k = 0; k < 3; ++k) {
        bool touches_min = false, touches_max = false;
        for (const glm::mat4& m : f.p.model()) {
            touches_min |= m[3][k] == b.min[k];
            touches_max |= m[3][k] == b.max[k];
        }
        CHECK(touches_min);
        CHECK(touches_max);
    }
}

TEST_CASE("player: a frame allocates nothing once every set has played") {
    fixture f;
    REQUIRE(f.p.set_animation("Walk", 0.0));
    REQUIRE(f.p.update_animation(0.0));
    REQUIRE(f.p.fade_to("Shoot", 10.0, 1e9));
    REQUIRE(f.p.update_animation(11.0));
    const std::size_t before = kbtest::allocation_count();
    for (double t = 12.0; t < 3000.0; t += 16.6) {
        REQUIRE(f.p.update_animation(t));
        f.p.reset();
        REQUIRE(f.p.blend("Walk", t, true, 1.0f));
        REQUIRE(f.p.blend("shoot", t, true, 0.5f));
        f.p.update_hierarchy();
    }
    CHECK(kbtest::allocation_count() == before);
}
