#include <keyblend/motion.hpp>

#include "helpers.hpp"
#include "job_helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::sample_clip;
using kbtest::local_to_model;
using kbtest::max_abs_diff;

namespace {

const glm::vec3 up_axis(0.0f, 1.0f, 0.0f);

// world > hips > (thigh_l > shin_l), (thigh_r > shin_r). `parent_bind` places `world`, so the root
// of the motion (hips) sits under a rotated, scaled or mirrored frame, as in .X files.
skeleton walker(const glm::mat4& parent_bind = glm::mat4(1.0f)) {
    const glm::mat4 hips = to_matrix(transform{{0.2f, 1.0f, -0.3f}, glm::angleAxis(0.3f, glm::vec3(0, 1, 0)), glm::vec3(1)});
    const glm::mat4 thigh = glm::translate(glm::mat4(1.0f), glm::vec3(0.15f, -0.1f, 0.0f));
    const glm::mat4 shin = glm::translate(glm::mat4(1.0f), glm::vec3(0.0f, -0.45f, 0.0f));
    return skeleton::from_parents({{"world", -1, parent_bind},
                                   {"hips", 0, hips},
                                   {"thigh_l", 1, thigh},
                                   {"shin_l", 2, shin},
                                   {"thigh_r", 1, glm::translate(glm::mat4(1.0f), glm::vec3(-0.15f, -0.1f, 0.0f))},
                                   {"shin_r", 4, shin}})
        .value();
}

// A walk of `duration` ticks: the hips travel `distance` along the parent's +z while bobbing and
// swaying, turn by `turn` radians about the parent's +y, lean; the legs swing. Keys every 50 ticks
// on the hips, every 40 on the legs (so the clip has key times the root does not).
clip walk(float duration = 1000.0f, float distance = 3.0f, float turn = 0.6f, wrap_mode wrap = wrap_mode::loop) {
    clip c;
    c.name = "Walk";
    c.wrap = wrap;
    channel hips;
    hips.joint = 1;
    for (float t = 0.0f; t <= duration; t += 50.0f) {
        const float u = t / duration, phase = 6.2831853f * u;
        hips.translation.push_back(t, glm::vec3(0.2f + 0.05f * std::sin(phase), 1.0f + 0.04f * std::cos(2 * phase),
                                                -0.3f + distance * u));
        hips.rotation.push_back(t, glm::angleAxis(0.3f + turn * u, glm::vec3(0, 1, 0)) *
                                       glm::angleAxis(0.1f * std::sin(phase), glm::vec3(1, 0, 0)));
    }
    c.channels.push_back(hips);
    for (std::size_t j : {2u, 3u, 4u, 5u}) {
        channel leg;
        leg.joint = j;
        for (float t = 0.0f; t <= duration; t += 40.0f)
            leg.rotation.push_back(t, glm::angleAxis(0.5f * std::sin(6.2831853f * t / duration + float(j)), glm::vec3(1, 0, 0)));
        c.channels.push_back(leg);
    }
    c.duration = duration;
    return c;
}

std::vector<glm::mat4> model_at(const clip& c, const skeleton& s, float t, const glm::mat4& root = glm::mat4(1.0f)) {
    sampling_context ctx;
    local_pose pose;
    REQUIRE(sample_clip(c, s, t, ctx, pose));
    std::vector<glm::mat4> model;
    local_to_model(s, pose, model, root);
    return model;
}

// The largest difference over the motion root (joint 1) and its descendants. (The static frames
// above it, here `world`, are placed by the motion too: they move with the character.)
float worst(const std::vector<glm::mat4>& a, const std::vector<glm::mat4>& b) {
    REQUIRE(a.size() == b.size());
    float w = 0.0f;
    for (std::size_t j = 1; j < a.size(); ++j) w = std::max(w, max_abs_diff(a[j], b[j]));
    return w;
}

float distance(const rigid_transform& a, const rigid_transform& b) {
    return std::max(max_abs_diff(a.translation, b.translation), float(kbtest::rotation_angle(a.rotation, b.rotation)));
}

bool same(const rigid_transform& a, const rigid_transform& b) {
    return kbtest::bit_equal(a.translation, b.translation) && kbtest::bit_equal(a.rotation, b.rotation);
}

// The angle of q's rotation about the unit axis (its swing-twist twist).
double twist_angle(const glm::quat& q, const glm::vec3& axis) {
    const double along = double(q.x) * axis.x + double(q.y) * axis.y + double(q.z) * axis.z;
    return 2.0 * std::atan2(std::fabs(along), std::fabs(double(q.w)));
}

} // namespace

TEST_CASE("rigid_transform: compose, inverse and to_matrix agree with matrices") {
    kbtest::rng rng(3);
    for (int i = 0; i < 50; ++i) {
        const rigid_transform a{rng.vec3(-5, 5), rng.rotation()}, b{rng.vec3(-5, 5), rng.rotation()};
        CHECK(max_abs_diff(to_matrix(compose(a, b)), to_matrix(a) * to_matrix(b)) < 1e-5f);
        CHECK(max_abs_diff(to_matrix(inverse(a)), glm::inverse(to_matrix(a))) < 1e-5f);
        CHECK(distance(compose(a, inverse(a)), rigid_transform{}) < 1e-5f);
        CHECK(max_abs_diff(to_matrix(a), to_matrix(transform{a.translation, a.rotation, glm::vec3(1)})) < 1e-6f);
    }
}

TEST_CASE("extract_root_motion: the in-place clip under the motion is the original at every key") {
    // The motion root under frames placed in every way a .X file places them.
    const glm::quat tilt = glm::angleAxis(-1.5707963f, glm::vec3(1, 0, 0)); // a Z-up file made Y-up
    const std::pair<const char*, glm::mat4> parents[] = {
        {"identity", glm::mat4(1.0f)},
        {"rotated, scaled, moved", to_matrix(transform{{1, 2, 3}, tilt, glm::vec3(2.5f)})},
        {"mirrored", to_matrix(transform{{0, 0.5f, 0}, glm::angleAxis(0.4f, glm::vec3(0, 1, 0)), glm::vec3(-1, 1, 1)})},
    };
    for (const auto& entry : parents) {
        // (Named copies, not structured bindings: clang 14 lets no lambda, CAPTURE's included,
        // refer to a binding.)
        const char* const what = entry.first;
        const glm::mat4& parent = entry.second;
        for (motion_translation mt : {motion_translation::none, motion_translation::horizontal, motion_translation::all})
            for (motion_rotation mr : {motion_rotation::none, motion_rotation::yaw, motion_rotation::all})
                for (motion_reference ref : {motion_reference::bind_pose, motion_reference::first_frame}) {
                    CAPTURE(what);
                    CAPTURE(int(mt));
                    CAPTURE(int(mr));
                    CAPTURE(int(ref));
                    const skeleton s = walker(parent);
                    const clip original = walk();
                    clip c = original;
                    root_motion_options o;
                    o.joint = 1;
                    o.translation = mt;
                    o.rotation = mr;
                    o.reference = ref;
                    REQUIRE(extract_root_motion(c, s, o));
                    REQUIRE(validate_clip(c, s));
                    // Keyed at every key time of the clip: every 50 ticks (hips) and 40 (legs).
                    CHECK(c.motion.translation.size() == 21 + 26 - 6);
                    CHECK(c.channels[0].translation.size() == c.motion.translation.size());
                    const glm::vec3 bind_root = glm::vec3(s.bind_model()[1][3]);
                    const glm::quat bind_rotation = to_transform(s.bind_model()[1]).rotation;
                    const std::vector<glm::mat4> first = model_at(original, s, 0.0f);
                    for (float t : impl::clip_key_times(original)) {
                        const std::vector<glm::mat4> want = model_at(original, s, t);
                        const rigid_transform m = sample_motion(c, t);
                        const std::vector<glm::mat4> in_place = model_at(c, s, t);
                        CHECK(worst(model_at(c, s, t, to_matrix(m)), want) < 3e-5f);
                        // What moved: horizontal travel and turning about up only, when asked.
                        const glm::vec3 root = glm::vec3(in_place[1][3]);
                        const glm::vec3 ref_root = ref == motion_reference::bind_pose ? bind_root : glm::vec3(first[1][3]);
                        if (mt == motion_translation::horizontal) {
                            if (mr != motion_rotation::all) { // (all: tilted by the motion's rotation)
                                CHECK(std::fabs(glm::dot(m.translation, up_axis)) < 2e-5f);
                                CHECK(std::fabs(root.y - want[1][3].y) < 2e-5f); // keeps its height
                                CHECK(std::fabs(root.x - ref_root.x) < 2e-5f);   // and stays in place
                                CHECK(std::fabs(root.z - ref_root.z) < 2e-5f);
                            }
                        }
                        if (mt == motion_translation::all && mr != motion_rotation::all)
                            CHECK(max_abs_diff(root, ref_root) < 2e-5f);
                        if (mt == motion_translation::none && mr == motion_rotation::none)
                            CHECK(distance(m, rigid_transform{}) < 1e-5f);
                        if (mr == motion_rotation::yaw) {
                            // The motion turns about up; the clip keeps no turn about up.
                            CHECK(twist_angle(m.rotation, up_axis) == doctest::Approx(kbtest::rotation_angle(m.rotation, glm::identity<glm::quat>())).epsilon(1e-4));
                            const glm::quat ref_q = ref == motion_reference::bind_pose ? bind_rotation : to_transform(first[1]).rotation;
                            const glm::quat turned = to_transform(in_place[1]).rotation * glm::conjugate(ref_q);
                            CHECK(twist_angle(turned, up_axis) < 1e-4);
                        }
                    }
                    if (ref == motion_reference::first_frame && mt != motion_translation::none)
                        CHECK(distance(sample_motion(c, 0.0f), rigid_transform{}) < 2e-5f);
                }
    }
}

TEST_CASE("root motion over 10 loops accumulates exactly 10 times the clip's displacement") {
    const skeleton s = walker();
    root_motion_options o;
    o.joint = 1;
    SUBCASE("straight: translation only") {
        clip c = walk(1000.0f, 3.0f, 0.0f);
        o.rotation = motion_rotation::none;
        REQUIRE(extract_root_motion(c, s, o));
        const glm::vec3 once = sample_motion(c, 1000.0f).translation - sample_motion(c, 0.0f).translation;
        CHECK(std::fabs(once.z - 3.0f) < 1e-5f);
        // In one step, and in many steps of every size (some more than a loop, some landing on a wrap).
        const rigid_transform direct = motion_between(c, 0.0, 10000.0);
        CHECK(max_abs_diff(direct.translation, 10.0f * once) <= 4e-6f); // an ulp of 30
        MESSAGE("10 loops in one step: off 10 x one loop by " << max_abs_diff(direct.translation, 10.0f * once));
        CHECK(kbtest::rotation_angle(direct.rotation, glm::identity<glm::quat>()) < 1e-6);
        kbtest::rng rng(8);
        motion_cursor cursor;
        rigid_transform placement;
        double t = 0.0;
        int steps = 0;
        while (t < 10000.0) {
            const double next = std::min(10000.0, t + (rng.integer(0, 9) == 0 ? 1000.0 * rng.integer(1, 2)
                                                                               : double(rng.uniform(1.0f, 60.0f))));
            placement = compose(placement, motion_between(c, t, next, cursor));
            t = next;
            ++steps;
        }
        CAPTURE(steps);
        CHECK(max_abs_diff(placement.translation, 10.0f * once) < 3e-5f); // 1e-6 of the distance
        MESSAGE("10 loops in " << steps << " steps: off 10 x one loop by " << max_abs_diff(placement.translation, 10.0f * once));
        // Backward over the same 10 loops brings it back.
        while (t > 0.0) {
            const double next = std::max(0.0, t - double(rng.uniform(1.0f, 1500.0f)));
            placement = compose(placement, motion_between(c, t, next, cursor));
            t = next;
        }
        CHECK(max_abs_diff(placement.translation, glm::vec3(0.0f)) < 2e-5f * 30.0f);
    }
    SUBCASE("turning: 10 loops is the loop's displacement composed 10 times") {
        clip c = walk();
        REQUIRE(extract_root_motion(c, s, o));
        const rigid_transform loop = motion_between(c, 0.0, 1000.0);
        CHECK(kbtest::rotation_angle(loop.rotation, glm::identity<glm::quat>()) == doctest::Approx(0.6).epsilon(1e-4));
        rigid_transform ten;
        for (int i = 0; i < 10; ++i) ten = compose(ten, loop);
        CHECK(distance(motion_between(c, 0.0, 10000.0), ten) < 1e-5f * 30.0f);
        motion_cursor cursor;
        rigid_transform placement;
        for (double t = 0.0; t < 10000.0; t += 16.6667)
            placement = compose(placement, motion_between(c, t, std::min(t + 16.6667, 10000.0), cursor));
        CHECK(distance(placement, ten) < 5e-5f * 30.0f);
        // Backward playback retraces it: from b to a is the inverse of from a to b.
        for (double a : {-2500.0, 0.0, 130.0, 999.0, 4321.5})
            for (double b : {-17.0, 0.0, 1000.0, 2000.0, 7777.0}) {
                CAPTURE(a);
                CAPTURE(b);
                CHECK(distance(motion_between(c, b, a), inverse(motion_between(c, a, b))) < 1e-5f * 30.0f);
            }
    }
}

TEST_CASE("accumulated root motion plus the in-place pose is the original at every key, loop after loop") {
    const skeleton s = walker(to_matrix(transform{{1, 0, 2}, glm::angleAxis(0.7f, up_axis), glm::vec3(1.5f)}));
    const clip original = walk();
    clip c = original;
    root_motion_options o;
    o.joint = 1;
    REQUIRE(extract_root_motion(c, s, o));
    const std::vector<float> keys = impl::clip_key_times(original);
    // The character starts where the original's root motion is at time 0; after k loops the
    // original, moved by the loop's displacement k times, is what is drawn.
    rigid_transform placement = sample_motion(c, 0.0f);
    const rigid_transform loop = compose(compose(placement, motion_between(c, 0.0, 1000.0)), inverse(placement));
    motion_cursor cursor;
    double last = 0.0;
    rigid_transform moved;
    for (int k = 0; k < 3; ++k) {
        for (float key : keys) {
            if (key == 1000.0f) continue; // that is time 0 of the next loop
            const double t = 1000.0 * k + key;
            placement = compose(placement, motion_between(c, last, t, cursor));
            last = t;
            const std::vector<glm::mat4> want = model_at(original, s, key, to_matrix(moved));
            CHECK(worst(model_at(c, s, key, to_matrix(placement)), want) < 1e-4f);
        }
        moved = compose(loop, moved);
    }
}

TEST_CASE("motion_between: clamp stops at the ends, loop_inclusive has a period one tick longer") {
    const skeleton s = walker();
    root_motion_options o;
    o.joint = 1;
    clip c = walk(1000.0f, 3.0f, 0.0f, wrap_mode::clamp);
    REQUIRE(extract_root_motion(c, s, o));
    const rigid_transform whole = motion_between(c, 0.0, 1000.0);
    CHECK(std::fabs(whole.translation.z - 3.0f) < 1e-5f);
    CHECK(same(motion_between(c, 0.0, 5000.0), whole));
    CHECK(same(motion_between(c, -300.0, 1000.0), whole));
    CHECK(same(motion_between(c, 1500.0, 9000.0), rigid_transform{}));
    c.wrap = wrap_mode::loop_inclusive;
    // Ticks 1000 to 1001 hold the last frame, then the next loop starts.
    CHECK(distance(motion_between(c, 1000.0, 1000.5), rigid_transform{}) < 1e-6f);
    CHECK(distance(motion_between(c, 0.0, 1001.0), whole) < 1e-5f);
    CHECK(std::fabs(motion_between(c, 0.0, 3003.0).translation.z - 9.0f) < 1e-4f);
    SUBCASE("no motion, equal times, NaN: the identity; a zero-length clip does not move") {
        CHECK(same(motion_between(walk(), 0.0, 500.0), rigid_transform{}));
        CHECK(same(motion_between(c, 10.0, 10.0), rigid_transform{}));
        CHECK(same(motion_between(c, NAN, 10.0), rigid_transform{}));
        CHECK(same(motion_between(c, 0.0, INFINITY), rigid_transform{}));
        clip zero = c;
        zero.duration = 0.0f;
        CHECK(same(motion_between(zero, 0.0, 700.0), rigid_transform{}));
    }
}

TEST_CASE("motion_between: a cursor gives the same results, and does not allocate") {
    const skeleton s = walker();
    clip c = walk();
    root_motion_options o;
    o.joint = 1;
    REQUIRE(extract_root_motion(c, s, o));
    kbtest::rng rng(12);
    motion_cursor cursor;
    static_cast<void>(motion_between(c, 0.0, 1.0, cursor));
    const std::size_t before = kbtest::allocation_count();
    double t = 0.0;
    float worst_diff = 0.0f;
    for (int i = 0; i < 500; ++i) {
        const double next = t + double(rng.uniform(-400.0f, 900.0f));
        const rigid_transform a = motion_between(c, t, next, cursor), b = motion_between(c, t, next);
        worst_diff = std::max(worst_diff, std::max(max_abs_diff(a.translation, b.translation), max_abs_diff(a.rotation, b.rotation)));
        t = next;
    }
    CHECK(kbtest::allocation_count() == before);
    CHECK(worst_diff == 0.0f);
    // Another clip through the same cursor rebinds it.
    clip other = walk(500.0f, 1.0f, 0.0f);
    REQUIRE(extract_root_motion(other, s, o));
    const rigid_transform a = motion_between(other, 0.0, 1000.0, cursor), b = motion_between(other, 0.0, 1000.0);
    CHECK(kbtest::bit_equal(a.translation, b.translation));
    CHECK(kbtest::bit_equal(a.rotation, b.rotation));
}

TEST_CASE("extract_root_motion: a matrix-keyed root, and roots without keys") {
    const skeleton s = walker();
    const clip trs = walk();
    clip c = trs;
    c.channels[0].matrix = matrix_track<float>();
    for (std::size_t k = 0; k < trs.channels[0].rotation.size(); ++k)
        c.channels[0].matrix.push_back(trs.channels[0].rotation.time(k),
                                       to_matrix(transform{trs.channels[0].translation.value(k), trs.channels[0].rotation.value(k), glm::vec3(1)}));
    c.channels[0].rotation.clear();
    c.channels[0].translation.clear();
    root_motion_options o;
    o.joint = 1;
    REQUIRE(extract_root_motion(c, s, o));
    CHECK_FALSE(c.channels[0].has_matrix());
    for (float t : impl::clip_key_times(trs))
        CHECK(worst(model_at(c, s, t, to_matrix(sample_motion(c, t))), model_at(trs, s, t)) < 3e-5f);
    // A root the clip does not animate: nothing to take out.
    clip legs = walk();
    legs.channels.erase(legs.channels.begin());
    const clip before = legs;
    REQUIRE(extract_root_motion(legs, s, o));
    CHECK(legs.motion.empty());
    CHECK(legs.channels.size() == before.channels.size());
}

TEST_CASE("extract_root_motion: bad input is reported and leaves the clip unchanged") {
    const skeleton s = walker();
    root_motion_options o;
    o.joint = 1;
    const clip original = walk();
    const auto fails = [&](clip c, const skeleton& sk, const root_motion_options& opt, errc code, const char* words) {
        const status st = extract_root_motion(c, sk, opt);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == code);
        CHECK(st.error().message.find(words) != std::string::npos);
        CHECK(c.channels[0].translation.values() == original.channels[0].translation.values());
        CHECK(c.motion.empty() == original.motion.empty());
    };
    SUBCASE("an animated ancestor") {
        clip c = original;
        channel world;
        world.joint = 0;
        world.translation.push_back(0.0f, glm::vec3(1));
        c.channels.push_back(world);
        fails(c, s, o, errc::unsupported, "'world'");
    }
    SUBCASE("a parent with non-uniform scale") {
        const skeleton squashed = walker(glm::scale(glm::mat4(1.0f), glm::vec3(1, 2, 1)));
        fails(original, squashed, o, errc::unsupported, "non-uniform scale");
    }
    SUBCASE("options") {
        root_motion_options bad = o;
        bad.joint = 6;
        fails(original, s, bad, errc::out_of_range, "root joint 6");
        bad = o;
        bad.up = glm::vec3(0.0f);
        fails(original, s, bad, errc::invalid_argument, "up vector is zero");
        bad.up = glm::vec3(0.0f, NAN, 0.0f);
        fails(original, s, bad, errc::non_finite, "up vector");
    }
    SUBCASE("an invalid clip, or one already extracted") {
        clip c = original;
        c.channels[1].rotation.value(3) = make_quat(NAN, 0, 0, 0);
        const status st = extract_root_motion(c, s, o);
        CHECK(st.error().code == errc::non_finite);
        clip twice = original;
        REQUIRE(extract_root_motion(twice, s, o));
        CHECK(extract_root_motion(twice, s, o).error().code == errc::invalid_argument);
    }
}

TEST_CASE("blend_motion blends like poses: weighted mean, nlerp, exact for one weight") {
    const rigid_transform a{{1, 0, 0}, glm::angleAxis(0.2f, up_axis)}, b{{0, 0, 4}, glm::angleAxis(0.6f, up_axis)};
    const rigid_transform m[] = {a, b};
    rigid_transform out;
    const float w[] = {1.0f, 3.0f};
    REQUIRE(blend_motion(m, w, 2, out));
    CHECK(max_abs_diff(out.translation, glm::vec3(0.25f, 0.0f, 3.0f)) < 1e-6f);
    CHECK(max_abs_diff(out.rotation, nlerp(a.rotation, b.rotation, 0.75f)) < 1e-6f);
    const float one[] = {0.0f, 0.5f};
    REQUIRE(blend_motion(m, one, 2, out));
    CHECK(kbtest::bit_equal(out.translation, b.translation));
    CHECK(kbtest::bit_equal(out.rotation, b.rotation));
    const float none[] = {0.0f, 0.0f};
    REQUIRE(blend_motion(m, none, 2, out));
    CHECK(same(out, rigid_transform{}));
    // Opposite hemispheres: q and -q are the same rotation.
    const rigid_transform flipped[] = {a, {b.translation, -b.rotation}};
    REQUIRE(blend_motion(flipped, w, 2, out));
    CHECK(kbtest::rotation_angle(out.rotation, nlerp(a.rotation, b.rotation, 0.75f)) < 1e-6);
    const float negative[] = {1.0f, -1.0f}, nan[] = {NAN, 1.0f};
    out = a;
    CHECK(blend_motion(m, negative, 2, out).error().code == errc::invalid_argument);
    CHECK(blend_motion(m, nan, 2, out).error().code == errc::non_finite);
    CHECK(blend_motion(nullptr, w, 2, out).error().code == errc::invalid_argument);
    CHECK(kbtest::bit_equal(out.translation, a.translation)); // untouched
}
