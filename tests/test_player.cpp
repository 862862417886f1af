#include <keyblend/player.hpp>

#include "helpers.hpp"
#include "job_helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::sample_clip;
using kbtest::local_to_model;
using kbtest::sample_local_matrices;
using kbtest::bit_equal;
using kbtest::max_abs_diff;
using kbtest::product_matches;

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
        std::vector<glm::mat4> m = kbtest::local_matrices(pose);
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

TEST_CASE("player: the classic scenario, Walk on the legs and Shoot on the arms at weight 1") {
    fixture f;
    for (double t : {0.0, 125.0, 399.0, 400.0, 733.5, 1000.0}) {
        f.p.reset();
        REQUIRE(f.p.blend("Walk", t, wrap_mode::loop_inclusive, 1.0f));
        REQUIRE(f.p.blend("Shoot", t, wrap_mode::loop_inclusive, 1.0f));
        f.p.update_hierarchy();
        std::vector<glm::mat4> walk, shoot;
        REQUIRE(sample_local_matrices(f.sets[0], f.s, float(wrap_time(t, 1000.0, wrap_mode::loop_inclusive)), walk));
        REQUIRE(sample_local_matrices(f.sets[1], f.s, float(wrap_time(t, 400.0, wrap_mode::loop_inclusive)), shoot));
        for (std::size_t j : {1u, 2u, 3u, 4u}) CHECK(max_abs_diff(f.p.local()[j], walk[j]) < 1e-6f);
        for (std::size_t j : {6u, 7u, 8u, 9u}) CHECK(max_abs_diff(f.p.local()[j], shoot[j]) < 1e-6f);
        for (std::size_t j : {0u, 5u}) CHECK(bit_equal(f.p.local()[j], f.s.bind_local()[j]));
        std::vector<glm::mat4> model;
        local_to_model(f.s, f.p.local(), model);
        // (The player's products run in the kernels' instruction set, which may contract them
        // into FMAs where this file does not: a 32-bit SSE2 build's, against AVX2 kernels.)
        REQUIRE(model.size() == f.p.model().size());
        for (std::size_t j = 0; j < model.size(); ++j) CHECK(product_matches(f.p.model()[j], model[j]));
    }
}

TEST_CASE("player: Blend's time rule, Time % (Length + 1) when looping, the last frame otherwise") {
    fixture f;
    const auto blended = [&](double t, bool loop) {
        f.p.reset();
        REQUIRE(f.p.blend("Shoot", t, loop ? wrap_mode::loop_inclusive : wrap_mode::clamp, 1.0f));
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
    CHECK(f.p.blend("Shoot", NAN, wrap_mode::loop_inclusive, 1.0f).error().code == errc::non_finite);
    CHECK(f.p.blend("Shoot", 10.0, wrap_mode::loop_inclusive, NAN).error().code == errc::non_finite);
    CHECK(f.p.blend("Jump", 10.0, wrap_mode::loop_inclusive, 1.0f).error().code == errc::not_found);
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
        // Walk loops with period 1000 (the classic object class's time % length).
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
        job.layers = span<const blend_layer>(layers, 2);
        job.threshold = 0.0f;
        job.output = &mid;
        REQUIRE(job.run());
        std::vector<glm::mat4> expect = kbtest::local_matrices(mid);
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
    CHECK(product_matches(f.p.attachment("hand_r", sword, world).value(), expect));
    CHECK(product_matches(f.p.attachment(hand, sword, world), expect));
    CHECK(product_matches(f.p.attachment(nullptr, sword).value(), f.p.model()[0] * sword));
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
        REQUIRE(f.p.blend("Walk", t, wrap_mode::loop_inclusive, 1.0f));
        REQUIRE(f.p.blend("shoot", t, wrap_mode::loop_inclusive, 0.5f));
        f.p.update_hierarchy();
    }
    CHECK(kbtest::allocation_count() == before);
}

// ---------------------------------------------------------------------------------------------
// Root motion, events and user channels
// ---------------------------------------------------------------------------------------------

namespace {

// A straight walk on the biped: the pelvis (the skeleton's root) travels `distance` along +z over
// `length` ticks at a constant speed, bobbing; the thighs swing. Root motion extracted
// (horizontal, yaw). Events and a float channel "contact" as given.
clip locomotion(const skeleton& s, const char* name, float length, float distance,
                const std::vector<clip_event>& events = {}) {
    clip c;
    c.name = name;
    channel pelvis;
    pelvis.joint = 0;
    const transform bind = s.bind_transforms()[0];
    for (int k = 0; k <= 8; ++k) {
        const float u = float(k) / 8.0f;
        pelvis.translation.push_back(length * u, bind.translation + glm::vec3(0.0f, 0.05f * std::sin(12.566f * u), distance * u));
        pelvis.rotation.push_back(length * u, bind.rotation);
    }
    c.channels.push_back(pelvis);
    channel thigh;
    thigh.joint = 1;
    for (int k = 0; k <= 4; ++k)
        thigh.rotation.push_back(length * float(k) / 4.0f, glm::angleAxis(0.5f * std::sin(1.5708f * float(k)), glm::vec3(1, 0, 0)));
    c.channels.push_back(thigh);
    c.float_channels.push_back({"contact", float_track<float>{{0.0f, 1.0f}, {length / 2, 0.0f}, {length, 1.0f}}});
    c.events = events;
    c.duration = length;
    root_motion_options o;
    o.joint = 0;
    REQUIRE(extract_root_motion(c, s, o));
    return c;
}

struct locomotion_fixture {
    skeleton s = kbtest::biped(7);
    std::vector<clip> sets;
    locomotion_fixture() {
        sets.push_back(locomotion(s, "Walk", 1000.0f, 3.0f, {{0.0f, "left"}, {500.0f, "right"}, {1000.0f, "end"}}));
        sets.push_back(locomotion(s, "Run", 500.0f, 8.0f, {{100.0f, "left"}, {350.0f, "right"}}));
        sets.back().float_channels.push_back({"blink", float_track<float>{{0.0f, 0.25f}, {500.0f, 0.75f}}});
    }
};

} // namespace

TEST_CASE("player: root motion over 10 loops accumulates exactly 10 times the clip's travel") {
    locomotion_fixture f;
    player p = player::create(f.s, f.sets).value();
    CHECK(kbtest::bit_equal(p.root_motion().translation, glm::vec3(0.0f)));
    REQUIRE(p.set_animation("Walk", 100.0));
    kbtest::rng rng(3);
    rigid_transform placement;
    double t = 100.0;
    REQUIRE(p.update_animation(t));
    CHECK(kbtest::bit_equal(p.root_motion().translation, glm::vec3(0.0f)));
    while (t < 10100.0) {
        t = std::min(10100.0, t + (rng.integer(0, 20) == 0 ? 1000.0 : double(rng.uniform(5.0f, 40.0f))));
        REQUIRE(p.update_animation(t));
        placement = compose(placement, p.root_motion());
    }
    CHECK(max_abs_diff(placement.translation, glm::vec3(0, 0, 30)) < 1e-5f * 30.0f);
    CHECK(max_abs_diff(placement.rotation, glm::identity<glm::quat>()) < 1e-6f);
    // Backward, the character walks back.
    while (t > 100.0) {
        t = std::max(100.0, t - double(rng.uniform(5.0f, 700.0f)));
        REQUIRE(p.update_animation(t));
        placement = compose(placement, p.root_motion());
    }
    CHECK(max_abs_diff(placement.translation, glm::vec3(0.0f)) < 2e-5f * 30.0f);
}

TEST_CASE("player: a crossfade accumulates the blended displacement") {
    locomotion_fixture f;
    player p = player::create(f.s, f.sets).value();
    REQUIRE(p.set_animation("Walk", 0.0));
    REQUIRE(p.update_animation(0.0));
    REQUIRE(p.fade_to("Run", 300.0, 2000.0));
    // Walk moves 3 per 1000 ticks, Run 8 per 500, both at constant speed: each update moves the
    // character by ((1 - f) * 0.003 + f * 0.016) * dt, f the fade's progress at the update's end.
    double t = 0.0, expect = 0.0;
    rigid_transform placement;
    bool run_started = false;
    while (t < 3000.0) {
        const double next = t + 16.0;
        REQUIRE(p.update_animation(next));
        const double f_now = std::clamp((next - 300.0) / 2000.0, 0.0, 1.0);
        // Run steps from its start (tick 300) on its first update, then from the last update.
        const double run_dt = next < 300.0 ? 0.0 : (run_started ? next - t : next - 300.0);
        run_started |= next >= 300.0;
        const double walk_dt = next - t;
        const double walk_w = next - 300.0 >= 2000.0 ? 0.0 : 1.0 - f_now;
        expect += walk_w * 0.003 * walk_dt + f_now * 0.016 * run_dt;
        placement = compose(placement, p.root_motion());
        t = next;
    }
    CHECK(placement.translation.z == doctest::Approx(expect).epsilon(1e-5));
    CHECK(std::fabs(placement.translation.x) < 1e-5f);
    CHECK_FALSE(p.fading());
    CHECK(p.current() == 1);
}

TEST_CASE("player: the in-place pose under the accumulated root motion is the original, at every key") {
    locomotion_fixture f;
    clip original = f.sets[0];
    // The original: the extracted walk with its motion put back into the pelvis.
    original.motion = motion_track{};
    for (std::size_t k = 0; k < original.channels[0].translation.size(); ++k) {
        const float tk = original.channels[0].translation.time(k);
        original.channels[0].translation.value(k) += sample_motion(f.sets[0], tk).translation;
    }
    player p = player::create(f.s, f.sets).value();
    REQUIRE(p.set_animation("Walk", 0.0));
    rigid_transform placement = sample_motion(f.sets[0], 0.0f);
    for (int loop = 0; loop < 3; ++loop)
        for (int k = 0; k < 8; ++k) {
            const double t = 1000.0 * loop + 125.0 * k;
            REQUIRE(p.update_animation(t));
            placement = compose(placement, p.root_motion());
            REQUIRE(p.update_animation(t, to_matrix(placement)));
            sampling_context ctx;
            local_pose pose;
            REQUIRE(sample_clip(original, f.s, float(125.0 * k), ctx, pose));
            std::vector<glm::mat4> want;
            local_to_model(f.s, pose, want, glm::translate(glm::mat4(1.0f), glm::vec3(0, 0, 3.0f * float(loop))));
            CHECK(worst_diff(p.model(), want) < 2e-5f);
        }
}

TEST_CASE("player: events are reported once each, in order, across loops and backward playback") {
    locomotion_fixture f;
    player p = player::create(f.s, f.sets).value();
    REQUIRE(p.set_animation("walk", 100.0));
    kbtest::rng rng(9);
    std::vector<played_event> all;
    double t = 100.0, last = t;
    for (int i = 0; i < 600; ++i) { // about 10 loops, some steps landing on events
        REQUIRE(p.update_animation(t));
        for (const played_event& e : p.events()) {
            CHECK(e.set == 0);
            CHECK(e.weight == 1.0f);
            CHECK(e.name == f.sets[0].events[e.event].name);
            all.push_back(e);
        }
        last = t;
        t += rng.integer(0, 4) == 0 ? double(rng.integer(1, 60)) : double(rng.uniform(0.5f, 40.0f));
    }
    // Every occurrence from the start (the event at 0 too) to the last update, once, in order.
    REQUIRE_FALSE(all.empty());
    CHECK(all.front().name == "left");
    CHECK(all.front().time == 100.0);
    std::vector<passed_event> every;
    passed_events(f.sets[0], 0.0, last - 100.0, event_range::include_from, every);
    REQUIRE(all.size() == every.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
        CHECK(all[i].event == every[i].event);
        CHECK(all[i].time == every[i].time + 100.0);
    }
    CHECK(all.size() >= 30);
    SUBCASE("backward") {
        REQUIRE(p.update_animation(5100.0)); // to a known time
        std::vector<played_event> back;
        for (double u = 5100.0; u > 100.0;) {
            u = std::max(100.0, u - double(rng.uniform(1.0f, 90.0f)));
            REQUIRE(p.update_animation(u));
            for (std::size_t i = 1; i < p.events().size(); ++i) CHECK(p.events()[i].time <= p.events()[i - 1].time);
            back.insert(back.end(), p.events().begin(), p.events().end());
        }
        std::vector<passed_event> want;
        passed_events(f.sets[0], 5000.0, 0.0, event_range::exclude_from, want);
        REQUIRE(back.size() == want.size());
        for (std::size_t i = 0; i < back.size(); ++i) {
            CHECK(back[i].event == want[i].event);
            CHECK(back[i].time == want[i].time + 100.0);
        }
    }
    SUBCASE("a limit on one update's events") {
        p.set_event_limit(10);
        REQUIRE(p.update_animation(last + 1000.0 * 1000.0)); // a thousand loops in one step
        CHECK(p.events().size() == 10);
        CHECK(p.events_dropped() == 3 * 1000 - 10);
        CHECK(p.events()[0].time > last);
    }
}

TEST_CASE("player: during a crossfade every playing set's events come with its weight, merged in time") {
    locomotion_fixture f;
    player p = player::create(f.s, f.sets).value();
    REQUIRE(p.set_animation("Walk", 0.0));
    REQUIRE(p.update_animation(0.0));
    CHECK(p.events().size() == 1); // Walk's event at its start
    REQUIRE(p.fade_to("Run", 400.0, 1100.0)); // ends at 1500
    std::size_t from_walk = 0, from_run = 0, at_fade_end = 0;
    double t = 0.0;
    while (t < 2000.0) {
        const double next = t + 37.0;
        REQUIRE(p.update_animation(next));
        const float f_now = float(std::clamp((next - 400.0) / 1100.0, 0.0, 1.0));
        for (std::size_t i = 0; i < p.events().size(); ++i) {
            const played_event& e = p.events()[i];
            if (i) CHECK(e.time >= p.events()[i - 1].time);
            CHECK(e.time > t);
            CHECK(e.time <= next);
            if (e.set == 1) {
                ++from_run;
                CHECK(e.weight == doctest::Approx(next >= 1500.0 ? 1.0f : f_now));
            } else {
                ++from_walk;
                if (next >= 1500.0) {
                    ++at_fade_end; // its last events, up to the fade's end, at weight 0
                    CHECK(e.weight == 0.0f);
                    CHECK(e.time <= 1500.0);
                } else {
                    CHECK(e.weight == doctest::Approx(1.0f - f_now));
                }
            }
        }
        t = next;
    }
    // Walk up to the fade's end, Run from its start (tick 400) on.
    std::vector<passed_event> walk_events, run_events;
    passed_events(f.sets[0], 0.0, 1500.0, event_range::exclude_from, walk_events);
    passed_events(f.sets[1], 0.0, t - 400.0, event_range::include_from, run_events);
    CHECK(from_walk == walk_events.size());
    CHECK(from_run == run_events.size());
    CHECK(at_fade_end == 1); // Walk's "right" at 1500, passed by the update at 1517 that ends the fade
}

TEST_CASE("player: user channels are sampled with the pose and blended by name") {
    locomotion_fixture f;
    player p = player::create(f.s, f.sets).value();
    REQUIRE(p.float_channel_names() == std::vector<std::string>{"contact", "blink"});
    CHECK(p.vector_channel_names().empty());
    REQUIRE(p.set_animation("Walk", 0.0));
    REQUIRE(p.update_animation(1250.0));
    // Walk alone at clip time 250: contact 0.5; blink has no playing set.
    CHECK(p.float_channel_values()[0] == sample_track(f.sets[0].float_channels[0].keys, 250.0f));
    CHECK(p.float_channel_values()[1] == 0.0f);
    REQUIRE(p.fade_to("Run", 1250.0, 100.0));
    REQUIRE(p.update_animation(1275.0)); // f = 0.25; Walk at 275, Run at 25
    const float walk = sample_track(f.sets[0].float_channels[0].keys, 275.0f);
    const float run = sample_track(f.sets[1].float_channels[0].keys, 25.0f);
    CHECK(p.float_channel_values()[0] == doctest::Approx(0.75f * walk + 0.25f * run));
    CHECK(p.float_channel_values()[1] == doctest::Approx(sample_track(f.sets[1].float_channels[1].keys, 25.0f)));
    SUBCASE("vector channels") {
        std::vector<clip> sets = f.sets;
        sets[1].vector_channels.push_back({"look", position_track<float>{{0.0f, glm::vec3(1, 2, 3)}}});
        player q = player::create(f.s, sets).value();
        REQUIRE(q.vector_channel_names() == std::vector<std::string>{"look"});
        REQUIRE(q.set_animation("Run", 0.0));
        REQUIRE(q.update_animation(10.0));
        CHECK(q.vector_channel_values()[0] == glm::vec3(1, 2, 3));
    }
}

TEST_CASE("player: root motion, events and channels allocate nothing per frame once warmed up") {
    locomotion_fixture f;
    player p = player::create(f.s, f.sets).value();
    REQUIRE(p.set_animation("Walk", 0.0));
    for (double t = 0.0; t < 3000.0; t += 16.6) REQUIRE(p.update_animation(t));
    REQUIRE(p.fade_to("Run", 3000.0, 1e9));
    for (double t = 3000.0; t < 6000.0; t += 16.6) REQUIRE(p.update_animation(t));
    const std::size_t before = kbtest::allocation_count();
    std::size_t events = 0;
    for (double t = 6000.0; t < 12000.0; t += 16.6) {
        REQUIRE(p.update_animation(t));
        events += p.events().size();
    }
    CHECK(kbtest::allocation_count() == before);
    CHECK(events > 10);
}

TEST_CASE("player: pose() is the local pose of the last update, the one local() holds as matrices") {
    fixture f;
    REQUIRE(f.p.set_animation("Walk", 0.0));
    REQUIRE(f.p.fade_to("Shoot", 100.0, 300.0));
    REQUIRE(f.p.update_animation(250.0));
    REQUIRE(f.p.pose().size() == f.s.size());
    std::vector<glm::mat4> m = kbtest::local_matrices(f.p.pose());
    CHECK(worst_diff(m, f.p.local()) == 0.0f);
}
