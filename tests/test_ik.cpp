#include <keyblend/ik.hpp>

#include "helpers.hpp"
#include "job_helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::local_to_model;
using kbtest::max_abs_diff;

namespace {

// pelvis > thigh > twist > knee > ankle > toe, and pelvis > spine > neck > head. The leg chain is
// thigh (start), knee (mid, with `twist` between them), ankle (end); the knee is bent in the bind
// pose unless `straight`. Bone lengths 0.45 (thigh to knee) and 0.42 (knee to ankle), or
// `zero_thigh` makes the first bone zero.
skeleton body(bool straight = false, bool zero_thigh = false) {
    const auto at = [](glm::vec3 t, glm::quat r = glm::identity<glm::quat>()) { return to_matrix(transform{t, r, glm::vec3(1)}); };
    const glm::quat knee_bend = straight ? glm::identity<glm::quat>() : glm::angleAxis(-0.4f, glm::vec3(1, 0, 0));
    return skeleton::from_parents({{"pelvis", -1, at({0, 1, 0}, glm::angleAxis(0.2f, glm::vec3(0, 1, 0)))},
                                   {"thigh", 0, at({0.1f, -0.05f, 0}, glm::angleAxis(0.2f, glm::vec3(1, 0, 0)))},
                                   {"twist", 1, at({0, zero_thigh ? 0.0f : -0.2f, 0}, glm::angleAxis(0.3f, glm::vec3(0, 1, 0)))},
                                   {"knee", 2, at({0, zero_thigh ? 0.0f : -0.25f, 0}, knee_bend)},
                                   {"ankle", 3, at({0, -0.42f, 0}, glm::angleAxis(0.3f, glm::vec3(1, 0, 0)))},
                                   {"toe", 4, at({0, -0.05f, 0.12f})},
                                   {"spine", 0, at({0, 0.3f, 0})},
                                   {"neck", 6, at({0, 0.4f, 0.02f}, glm::angleAxis(0.1f, glm::vec3(1, 0, 0)))},
                                   {"head", 7, at({0, 0.1f, 0}, glm::angleAxis(-0.2f, glm::vec3(0, 0, 1)))}})
        .value();
}
constexpr std::size_t thigh = 1, twist = 2, knee = 3, ankle = 4, neck = 7, head = 8;

// The bind pose with every joint turned a little at random (the knee bends more).
local_pose random_pose(const skeleton& s, kbtest::rng& rng) {
    local_pose p(s);
    for (std::size_t j = 0; j < s.size(); ++j) {
        transform t = p.get(j);
        const float angle = j == knee ? rng.uniform(-1.2f, -0.2f) : rng.uniform(-0.4f, 0.4f);
        const glm::vec3 axis = j == knee ? glm::vec3(1, 0, 0) : glm::normalize(rng.vec3(-1, 1) + glm::vec3(0.01f));
        t.rotation = t.rotation * glm::angleAxis(angle, axis);
        p.set(j, t);
    }
    return p;
}

// Where the character stands: turned, uniformly scaled (2.5) and moved; or mirrored.
glm::mat4 world(bool mirrored = false) {
    return to_matrix(transform{{3, 0.5f, -2}, glm::angleAxis(0.8f, glm::normalize(glm::vec3(0.3f, 1, 0.1f))),
                               mirrored ? glm::vec3(-2.5f, 2.5f, 2.5f) : glm::vec3(2.5f)});
}

struct leg_fixture {
    skeleton s;
    local_pose pose;
    glm::mat4 root;
    std::vector<glm::mat4> model;

    explicit leg_fixture(skeleton sk, glm::mat4 r = world()) : s(std::move(sk)), pose(s), root(r) { update(); }
    void update() { local_to_model(s, pose, model, root); }
    glm::vec3 at(std::size_t j) const { return glm::vec3(model[j][3]); }
    float l1() const { return glm::length(at(knee) - at(thigh)); }
    float l2() const { return glm::length(at(ankle) - at(knee)); }
    ik_buffers buffers() { return {&s, model, &pose}; }
    two_bone_ik_job leg(glm::vec3 target) {
        two_bone_ik_job job;
        static_cast<ik_buffers&>(job) = buffers();
        job.start_joint = thigh;
        job.mid_joint = knee;
        job.end_joint = ankle;
        job.target = target;
        return job;
    }
    aim_ik_job aim(glm::vec3 target) {
        aim_ik_job job;
        static_cast<ik_buffers&>(job) = buffers();
        job.joint = head;
        job.target = target;
        job.forward = glm::vec3(0, 0, 1);
        job.up = glm::vec3(0, 1, 0);
        return job;
    }
};

glm::vec3 random_direction(kbtest::rng& rng) {
    glm::vec3 v;
    do v = rng.vec3(-1, 1);
    while (glm::length(v) < 0.1f || glm::length(v) > 1.0f);
    return glm::normalize(v);
}

// The part of v across the unit direction d.
glm::vec3 across(glm::vec3 v, glm::vec3 d) { return v - glm::dot(v, d) * d; }

double angle_between(glm::vec3 a, glm::vec3 b) {
    return std::atan2(double(glm::length(glm::cross(a, b))), double(glm::dot(a, b)));
}

bool same_pose(const local_pose& a, const local_pose& b) {
    for (std::size_t j = 0; j < a.size(); ++j)
        if (!kbtest::bit_equal_transform(a.get(j), b.get(j))) return false;
    return true;
}

bool finite_pose(const local_pose& p) {
    for (std::size_t j = 0; j < p.size(); ++j)
        if (!is_finite(p.get(j).rotation)) return false;
    return true;
}

} // namespace

TEST_CASE("two_bone_ik_job: reachable targets are reached within 1e-5 of the chain's length") {
    kbtest::rng rng(21);
    for (bool mirrored : {false, true})
        for (int hinge = 0; hinge < 3; ++hinge) { // derived, given perpendicular, given oblique
            CAPTURE(mirrored);
            CAPTURE(hinge);
            int reached_count = 0;
            for (int trial = 0; trial < 300; ++trial) {
                leg_fixture f(body(), world(mirrored));
                f.pose = random_pose(f.s, rng);
                f.update();
                const float l1 = f.l1(), l2 = f.l2(), chain = l1 + l2, shortest = std::fabs(l1 - l2);
                // Anywhere in reach, and often near full extension or near fully folded, where
                // the hinge angle is most sensitive.
                const int where = trial % 4;
                const float d = where == 0   ? rng.uniform(0.995f, 0.99999f) * chain
                                : where == 1 ? shortest + rng.uniform(1e-4f, 5e-3f) * chain
                                             : rng.uniform(shortest + 0.02f * chain, 0.999f * chain);
                two_bone_ik_job job = f.leg(f.at(thigh) + d * random_direction(rng));
                job.pole_vector = rng.vec3(-1, 1);
                if (hinge == 1) job.mid_axis = glm::vec3(1, 0, 0); // the knee's bend axis in its frame
                if (hinge == 2) job.mid_axis = glm::vec3(1, 0.3f, -0.2f);
                bool reached = false;
                job.reached = &reached;
                REQUIRE(job.run());
                f.update();
                CHECK(finite_pose(f.pose));
                // The bones keep their lengths.
                CHECK(std::fabs(f.l1() - l1) < 1e-5f * chain);
                CHECK(std::fabs(f.l2() - l2) < 1e-5f * chain);
                // The derived hinge is perpendicular to the bones. The knee's x axis is only nearly
                // so (the twist joint turns at random) and the third is oblique: their range is
                // narrower (near full extension or fully folded they cannot reach, and say so).
                if (hinge == 0) CHECK(reached);
                if (reached) {
                    ++reached_count;
                    CHECK(glm::length(f.at(ankle) - job.target) <= 1e-5f * chain);
                }
            }
            CHECK(reached_count > (hinge == 0 ? 299 : 100));
        }
}

TEST_CASE("two_bone_ik_job: unreachable targets extend the chain straight toward them, or fold it") {
    kbtest::rng rng(22);
    for (int trial = 0; trial < 100; ++trial) {
        leg_fixture f(body());
        f.pose = random_pose(f.s, rng);
        f.update();
        const float l1 = f.l1(), l2 = f.l2(), chain = l1 + l2;
        const bool far = trial % 2 == 0;
        const glm::vec3 dir = random_direction(rng);
        two_bone_ik_job job = f.leg(f.at(thigh) + (far ? rng.uniform(1.01f, 3.0f) * chain : 0.5f * std::fabs(l1 - l2)) * dir);
        job.pole_vector = rng.vec3(-1, 1);
        bool reached = true;
        job.reached = &reached;
        REQUIRE(job.run());
        f.update();
        CHECK_FALSE(reached);
        const glm::vec3 end = f.at(ankle) - f.at(thigh);
        CHECK(std::fabs(glm::length(end) - (far ? chain : std::fabs(l1 - l2))) < 2e-5f * chain);
        CHECK(angle_between(end, dir) < 1e-3); // (folded, |end| is 0.03 of a metre: angles are coarse)
        if (far) {
            CHECK(angle_between(end, dir) < 2e-5);
            CHECK(angle_between(f.at(knee) - f.at(thigh), dir) < 2e-5); // straight: the knee on the line
        }
    }
}

TEST_CASE("two_bone_ik_job: the pole vector chooses the bend plane: zero keeps the chain's plane") {
    leg_fixture f(body());
    const glm::vec3 a = f.at(thigh);
    const float chain = f.l1() + f.l2();
    const glm::vec3 down(0, -1, 0);
    for (glm::vec3 pole : {glm::vec3(0, 0, 1), glm::vec3(0, 0, -1), glm::vec3(1, 0, 0), glm::vec3(-1, 0.5f, 0.3f)}) {
        CAPTURE(pole);
        f.pose = local_pose(f.s);
        f.update();
        two_bone_ik_job job = f.leg(a + 0.8f * chain * down);
        job.pole_vector = pole;
        REQUIRE(job.run());
        f.update();
        CHECK(glm::length(f.at(ankle) - job.target) < 1e-5f * chain);
        // The knee is off the hip-ankle line on the pole's side.
        const glm::vec3 knee_off = across(f.at(knee) - a, down);
        CHECK(angle_between(knee_off, across(pole, down)) < 1e-4);
    }
    SUBCASE("zero pole: the bend plane does not turn") {
        kbtest::rng rng(4);
        f.pose = random_pose(f.s, rng);
        f.update();
        const glm::vec3 hip = f.at(thigh);
        const glm::vec3 normal = glm::normalize(glm::cross(f.at(knee) - hip, f.at(ankle) - f.at(knee)));
        // A target in the chain's plane, nearer than the ankle is now.
        const glm::vec3 in_plane = glm::normalize(across(f.at(ankle) - hip, normal)) * 0.7f * chain;
        REQUIRE(f.leg(hip + in_plane).run());
        f.update();
        const glm::vec3 after = glm::normalize(glm::cross(f.at(knee) - hip, f.at(ankle) - f.at(knee)));
        CHECK(angle_between(after, normal) < 1e-4);
    }
    SUBCASE("a straight chain bends toward the pole (no mid_axis), and anyway without NaN") {
        leg_fixture g(body(true));
        const float l = g.l1() + g.l2();
        REQUIRE(angle_between(g.at(knee) - g.at(thigh), g.at(ankle) - g.at(knee)) < 1e-6);
        two_bone_ik_job job = g.leg(g.at(thigh) + 0.7f * l * down);
        job.pole_vector = glm::vec3(0, 0, 1);
        bool reached = false;
        job.reached = &reached;
        REQUIRE(job.run());
        g.update();
        CHECK(reached);
        CHECK(glm::length(g.at(ankle) - job.target) < 1e-5f * l);
        CHECK(angle_between(across(g.at(knee) - g.at(thigh), down), glm::vec3(0, 0, 1)) < 1e-4);
        g.pose = local_pose(g.s);
        g.update();
        job.pole_vector = glm::vec3(0.0f);
        REQUIRE(job.run());
        g.update();
        CHECK(finite_pose(g.pose));
        CHECK(glm::length(g.at(ankle) - job.target) < 1e-5f * l);
    }
}

TEST_CASE("two_bone_ik_job: weight 0 changes nothing: a weight between moves part way") {
    kbtest::rng rng(23);
    leg_fixture f(body());
    f.pose = random_pose(f.s, rng);
    f.update();
    const local_pose before = f.pose;
    const float chain = f.l1() + f.l2();
    two_bone_ik_job job = f.leg(f.at(thigh) + 0.6f * chain * glm::vec3(0.3f, -0.9f, 0.2f));
    job.weight = 0.0f;
    bool reached = false;
    job.reached = &reached;
    REQUIRE(job.run());
    CHECK(same_pose(f.pose, before));
    CHECK(reached); // still says whether the full correction would reach it
    const float distance_before = glm::length(f.at(ankle) - job.target);
    job.weight = 0.5f;
    REQUIRE(job.run());
    f.update();
    const float distance_half = glm::length(f.at(ankle) - job.target);
    CHECK(distance_half < 0.9f * distance_before);
    CHECK(distance_half > 1e-3f);
}

TEST_CASE("two_bone_ik_job: the soft limit makes the end approach full extension smoothly") {
    leg_fixture f(body());
    const float chain = f.l1() + f.l2();
    const glm::vec3 a = f.at(thigh), dir = glm::normalize(glm::vec3(0.1f, -1, 0.2f));
    float last = 0.0f;
    for (float ratio = 0.80f; ratio < 1.5f; ratio += 0.01f) {
        CAPTURE(ratio);
        f.pose = local_pose(f.s);
        f.update();
        two_bone_ik_job job = f.leg(a + ratio * chain * dir);
        job.soften = 0.9f;
        bool reached = false;
        job.reached = &reached;
        REQUIRE(job.run());
        f.update();
        const float reach = glm::length(f.at(ankle) - a) / chain;
        CHECK(reached == (ratio <= 0.9f));
        if (ratio <= 0.9f) CHECK(reach == doctest::Approx(ratio).epsilon(1e-5));
        else CHECK(reach < ratio);
        CHECK(reach < 1.0f);
        CHECK(reach > last); // still moving out (continuously, with the target)
        if (last > 0.0f) CHECK(reach - last < 0.0101f);
        last = reach;
    }
    CHECK(last > 0.99f);
}

TEST_CASE("two_bone_ik_job: degenerate chains and targets give a documented result, never NaN") {
    SUBCASE("a zero-length bone leaves the pose unchanged") {
        leg_fixture f(body(false, true));
        const local_pose before = f.pose;
        two_bone_ik_job job = f.leg(f.at(thigh) + glm::vec3(0.1f, -0.3f, 0.0f));
        job.pole_vector = glm::vec3(0, 0, 1);
        bool reached = true;
        job.reached = &reached;
        REQUIRE(job.run());
        CHECK(same_pose(f.pose, before));
        CHECK_FALSE(reached);
    }
    SUBCASE("a target at the start joint folds the chain") {
        leg_fixture f(body());
        const float l1 = f.l1(), l2 = f.l2();
        two_bone_ik_job job = f.leg(f.at(thigh));
        job.pole_vector = glm::vec3(0, 0, 1);
        REQUIRE(job.run());
        f.update();
        CHECK(finite_pose(f.pose));
        CHECK(std::fabs(glm::length(f.at(ankle) - f.at(thigh)) - std::fabs(l1 - l2)) < 2e-5f * (l1 + l2));
    }
    SUBCASE("a pole along the target line: no turn about it, no NaN") {
        leg_fixture f(body());
        const glm::vec3 dir(0, -1, 0);
        two_bone_ik_job job = f.leg(f.at(thigh) + 0.5f * dir);
        job.pole_vector = dir;
        REQUIRE(job.run());
        f.update();
        CHECK(finite_pose(f.pose));
        CHECK(glm::length(f.at(ankle) - job.target) < 1e-5f * 2.5f);
    }
}

TEST_CASE("two_bone_ik_job: validate() names every bad input, and run() then changes nothing") {
    leg_fixture f(body());
    const local_pose before = f.pose;
    // `set_up`: a check only validate() makes (run() gives a finite result instead).
    const auto fails = [&](two_bone_ik_job job, errc code, const char* words, bool set_up = false) {
        const status v = job.validate();
        REQUIRE_FALSE(v);
        CHECK(v.error().code == code);
        CHECK(v.error().message.find(words) != std::string::npos);
        CHECK(v.error().message.find("two_bone_ik_job") != std::string::npos);
        if (set_up) {
            f.pose = before;
            CHECK(job.run());
            CHECK(finite_pose(f.pose));
            f.pose = before;
            return;
        }
        const status r = job.run();
        REQUIRE_FALSE(r);
        CHECK(r.error().code == code);
        CHECK(r.error().message == v.error().message);
        CHECK(same_pose(f.pose, before));
    };
    const two_bone_ik_job good = f.leg(glm::vec3(0.0f));
    REQUIRE(good.validate());
    two_bone_ik_job j = good;
    j.target.y = NAN;
    fails(j, errc::non_finite, "target");
    j = good;
    j.pole_vector.x = INFINITY;
    fails(j, errc::non_finite, "pole vector");
    j = good;
    j.mid_axis.z = NAN;
    fails(j, errc::non_finite, "mid axis");
    j = good;
    j.weight = NAN;
    fails(j, errc::non_finite, "weight");
    j.weight = 1.5f;
    fails(j, errc::invalid_argument, "weight 1.5");
    j.weight = -0.1f;
    fails(j, errc::invalid_argument, "outside [0, 1]");
    j = good;
    j.soften = 2.0f;
    fails(j, errc::invalid_argument, "soften");
    j = good;
    j.end_joint = 99;
    fails(j, errc::out_of_range, "end joint 99");
    j = good;
    j.start_joint = knee;
    j.mid_joint = thigh;
    fails(j, errc::invalid_argument, "not a chain", true);
    j = good;
    j.end_joint = head; // not below the knee
    fails(j, errc::invalid_argument, "'head'", true);
    j = good;
    j.mid_joint = thigh;
    fails(j, errc::invalid_argument, "not a chain", true);
    j = good;
    j.model = span<const glm::mat4>(f.model.data(), 3);
    fails(j, errc::size_mismatch, "3 model matrices");
    j = good;
    j.skeleton = nullptr;
    fails(j, errc::invalid_argument, "skeleton is null");
    j = good;
    j.pose = nullptr;
    fails(j, errc::invalid_argument, "pose is null");
    local_pose small(3);
    j = good;
    j.pose = &small;
    fails(j, errc::size_mismatch, "the pose has 3 joints");
    std::vector<glm::mat4> broken = f.model;
    broken[knee][1][1] = NAN;
    j = good;
    j.model = broken;
    fails(j, errc::non_finite, "mid joint 3 'knee'");
    local_pose nan_pose = f.pose;
    transform t = nan_pose.get(thigh);
    t.rotation.x = NAN;
    nan_pose.set(thigh, t);
    j = good;
    j.pose = &nan_pose;
    fails(j, errc::non_finite, "start joint 1 'thigh': local rotation");
    // The end joint's local rotation is neither read nor written: only validate() checks it.
    nan_pose = f.pose;
    t = nan_pose.get(ankle);
    t.rotation.w = INFINITY;
    nan_pose.set(ankle, t);
    j.pose = &nan_pose;
    CHECK(j.validate().error().message.find("end joint 4 'ankle': local rotation") != std::string::npos);
    CHECK(j.run());
}

TEST_CASE("two_bone_ik_job: a joint between start and middle keeps its local transform") {
    kbtest::rng rng(24);
    leg_fixture f(body());
    f.pose = random_pose(f.s, rng);
    f.update();
    const transform twist_before = f.pose.get(twist);
    const float chain = f.l1() + f.l2();
    two_bone_ik_job job = f.leg(f.at(thigh) + 0.75f * chain * glm::normalize(glm::vec3(0.2f, -1, 0.4f)));
    REQUIRE(job.run());
    f.update();
    CHECK(kbtest::bit_equal_transform(f.pose.get(twist), twist_before));
    CHECK(glm::length(f.at(ankle) - job.target) < 1e-5f * chain);
}

TEST_CASE("aim_ik_job: the forward axis points at the target, the up axis toward the pole") {
    kbtest::rng rng(31);
    for (bool mirrored : {false, true}) {
        int checked = 0;
        for (int trial = 0; trial < 200; ++trial) {
            leg_fixture f(body(), world(mirrored));
            f.pose = random_pose(f.s, rng);
            f.update();
            const glm::vec3 o = f.at(head);
            aim_ik_job job = f.aim(o + rng.uniform(0.5f, 5.0f) * random_direction(rng));
            job.pole_vector = random_direction(rng);
            const bool with_offset = trial % 2 == 1;
            if (with_offset) job.offset = glm::vec3(0.1f, 0.05f, 0.02f);
            bool reached = false;
            job.reached = &reached;
            REQUIRE(job.run());
            REQUIRE(reached);
            f.update();
            const glm::mat3 frame(f.model[head]);
            const glm::vec3 forward = glm::normalize(frame * job.forward), origin = o + frame * job.offset;
            const glm::vec3 to_target = job.target - origin;
            // The ray from the offset point along forward goes through the target.
            CHECK(glm::length(across(to_target, forward)) < 2e-5f * glm::length(job.target - o));
            CHECK(glm::dot(to_target, forward) > 0.0f);
            const glm::vec3 dir = glm::normalize(job.target - o);
            const glm::vec3 pole_across = across(job.pole_vector, dir);
            if (!with_offset && glm::length(pole_across) > 0.2f) {
                ++checked;
                CHECK(angle_between(across(frame * job.up, dir), pole_across) < 1e-4);
            }
        }
        CHECK(checked > 50);
    }
}

TEST_CASE("aim_ik_job: weight, and targets that cannot be aimed at") {
    kbtest::rng rng(32);
    leg_fixture f(body());
    f.pose = random_pose(f.s, rng);
    f.update();
    const local_pose before = f.pose;
    const glm::vec3 o = f.at(head);
    aim_ik_job job = f.aim(o + glm::vec3(2, 1, -1));
    bool reached = false;
    job.reached = &reached;
    job.weight = 0.0f;
    REQUIRE(job.run());
    CHECK(same_pose(f.pose, before));
    CHECK(reached);
    const double angle_before = angle_between(glm::mat3(f.model[head]) * job.forward, job.target - o);
    job.weight = 0.5f;
    REQUIRE(job.run());
    f.update();
    const double angle_half = angle_between(glm::mat3(f.model[head]) * job.forward, job.target - o);
    CHECK(angle_half < 0.75 * angle_before);
    CHECK(angle_half > 0.25 * angle_before);
    SUBCASE("a target at the joint, or inside the offset's circle: unchanged, not reached") {
        f.pose = before;
        f.update();
        job = f.aim(f.at(head));
        job.reached = &reached;
        REQUIRE(job.run());
        CHECK_FALSE(reached);
        CHECK(same_pose(f.pose, before));
        job = f.aim(f.at(head) + glm::vec3(0.01f, 0, 0));
        job.offset = glm::vec3(0.5f, 0, 0); // the ray passes 0.5 from the joint
        job.reached = &reached;
        REQUIRE(job.run());
        CHECK_FALSE(reached);
        CHECK(same_pose(f.pose, before));
    }
    SUBCASE("a zero or parallel pole keeps the roll: the shortest rotation aims the joint") {
        for (glm::vec3 pole : {glm::vec3(0.0f), glm::vec3(2, 1, -1)}) {
            f.pose = before;
            f.update();
            job = f.aim(o + glm::vec3(2, 1, -1));
            job.pole_vector = pole;
            REQUIRE(job.run());
            CHECK(finite_pose(f.pose));
            const glm::mat3 old_frame(f.model[head]);
            f.update();
            const glm::mat3 new_frame(f.model[head]);
            const glm::vec3 axis = glm::cross(old_frame * job.forward, new_frame * job.forward);
            // The turn is about the axis perpendicular to both forward directions.
            const glm::quat turn = quat_from_rotation(glm::mat3(glm::normalize(new_frame[0]), glm::normalize(new_frame[1]), glm::normalize(new_frame[2])) *
                                                      glm::transpose(glm::mat3(glm::normalize(old_frame[0]), glm::normalize(old_frame[1]), glm::normalize(old_frame[2]))));
            CHECK(angle_between(glm::vec3(turn.x, turn.y, turn.z), axis) < 1e-3);
        }
    }
    SUBCASE("validate") {
        f.pose = before;
        f.update();
        aim_ik_job j = f.aim(o + glm::vec3(1, 0, 0));
        j.forward = glm::vec3(0.0f);
        CHECK(j.validate().error().code == errc::invalid_argument);
        CHECK(j.validate().error().message.find("forward axis is zero") != std::string::npos);
        // (A set-up's check: run() leaves the pose unchanged instead.)
        bool aimed = true;
        j.reached = &aimed;
        CHECK(j.run());
        CHECK_FALSE(aimed);
        CHECK(same_pose(f.pose, before));
        j.forward = glm::vec3(0, 0, 1);
        j.offset.x = NAN;
        CHECK(j.validate().error().code == errc::non_finite);
        CHECK(j.run().error().message == j.validate().error().message);
        j.offset.x = 0.0f;
        j.joint = 40;
        CHECK(j.validate().error().code == errc::out_of_range);
        j.joint = neck;
        j.weight = 2.0f;
        CHECK(j.validate().error().code == errc::invalid_argument);
        CHECK(j.run().error().message.find("aim_ik_job") != std::string::npos);
        CHECK(same_pose(f.pose, before));
    }
}

// --- The batched jobs ------------------------------------------------------------------------------

namespace {

// The single job that solves a batch's chain.
two_bone_ik_job single_job(const ik_buffers& b, const two_bone_ik_chain& c, const glm::vec3& target,
                           const glm::vec3& pole, float weight, bool* reached) {
    two_bone_ik_job job;
    static_cast<ik_buffers&>(job) = b;
    job.start_joint = c.start_joint;
    job.mid_joint = c.mid_joint;
    job.end_joint = c.end_joint;
    job.mid_axis = c.mid_axis;
    job.soften = c.soften;
    job.target = target;
    job.pole_vector = pole;
    job.weight = weight;
    job.reached = reached;
    return job;
}
aim_ik_job single_job(const ik_buffers& b, const aim_ik_chain& c, const glm::vec3& target, const glm::vec3& pole,
                      float weight, bool* reached) {
    aim_ik_job job;
    static_cast<ik_buffers&>(job) = b;
    job.joint = c.joint;
    job.forward = c.forward;
    job.up = c.up;
    job.offset = c.offset;
    job.target = target;
    job.pole_vector = pole;
    job.weight = weight;
    job.reached = reached;
    return job;
}

// Many characters, one leg chain each (or a second chain of one character), with the frame's
// values of the single job's cases: targets anywhere in reach, near full extension, near fully
// folded, out of reach, at the hip; poles at random, zero, or along the target line; the hinge
// derived, given or oblique; soften and weight sometimes. Every third character is mirrored, every
// seventh has a straight leg, every eleventh a zero-length thigh.
struct crowd {
    enum target_kind { in_reach, near_extension, near_fold, out_of_reach, at_start };
    std::vector<leg_fixture> people;
    std::vector<target_kind> kinds;
    std::vector<two_bone_ik_chain> chains;
    std::vector<glm::vec3> targets, poles;
    std::vector<float> weights;

    crowd(std::size_t n, std::uint32_t seed) {
        kbtest::rng rng(seed);
        people.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            people.emplace_back(body(i % 7 == 3, i % 11 == 5), world(i % 3 == 1));
            leg_fixture& f = people.back();
            if (i % 7 != 3) {
                f.pose = random_pose(f.s, rng);
                f.update();
            }
            two_bone_ik_chain c;
            c.character = i;
            c.start_joint = thigh;
            c.mid_joint = knee;
            c.end_joint = ankle;
            if (i % 4 == 1) c.mid_axis = glm::vec3(1, 0, 0);
            if (i % 4 == 2) c.mid_axis = glm::vec3(1, 0.3f, -0.2f);
            if (i % 9 == 4) c.soften = 0.9f;
            chains.push_back(c);
            const float l1 = f.l1(), l2 = f.l2(), chain = l1 + l2, shortest = std::fabs(l1 - l2);
            const target_kind kind = i % 6 == 0   ? near_extension
                                     : i % 6 == 1 ? near_fold
                                     : i % 6 == 2 ? out_of_reach
                                     : i % 10 == 3 ? at_start
                                                   : in_reach;
            kinds.push_back(kind);
            const float d = kind == near_extension ? rng.uniform(0.995f, 0.99999f) * chain
                            : kind == near_fold    ? shortest + rng.uniform(1e-4f, 5e-3f) * chain
                            : kind == out_of_reach ? rng.uniform(1.01f, 3.0f) * chain
                            : kind == at_start     ? 0.0f
                                                   : rng.uniform(shortest + 0.02f * chain, 0.999f * chain);
            const glm::vec3 dir = random_direction(rng);
            targets.push_back(f.at(thigh) + d * dir);
            poles.push_back(i % 8 == 6 ? glm::vec3(0.0f) : i % 8 == 7 ? dir : rng.vec3(-1, 1));
            weights.push_back(i % 10 == 2 ? 0.0f : i % 10 == 7 ? 0.5f : 1.0f);
        }
    }

    std::vector<ik_buffers> characters() {
        std::vector<ik_buffers> out;
        for (leg_fixture& f : people) out.push_back(f.buffers());
        return out;
    }
    std::vector<local_pose> poses() const {
        std::vector<local_pose> out;
        for (const leg_fixture& f : people) out.push_back(f.pose);
        return out;
    }
    /// Poses `p`, and their model matrices.
    void set_poses(const std::vector<local_pose>& p) {
        for (std::size_t i = 0; i < people.size(); ++i) {
            people[i].pose = p[i];
            people[i].update();
        }
    }

    /// Where chain i's end joint is with its character in `pose` (the model matrices are left as
    /// they were).
    glm::vec3 end_of(std::size_t i, const local_pose& pose) const {
        const leg_fixture& f = people[chains[i].character];
        std::vector<glm::mat4> model;
        local_to_model(f.s, pose, model, f.root);
        return glm::vec3(model[chains[i].end_joint][3]);
    }

    /// The single job of chain i.
    two_bone_ik_job single(std::size_t i, bool* reached) {
        return single_job(people[chains[i].character].buffers(), chains[i], targets[i], poles[i], weights[i], reached);
    }
};

// The largest difference between two poses' local rotations (as quaternions, by component, q and
// -q being one rotation).
float rotation_difference(const local_pose& a, const local_pose& b) {
    float worst = 0.0f;
    for (std::size_t j = 0; j < a.size(); ++j) {
        const glm::quat p = a.get(j).rotation, q = impl::same_hemisphere(b.get(j).rotation, p);
        worst = std::max({worst, std::fabs(p.w - q.w), std::fabs(p.x - q.x), std::fabs(p.y - q.y), std::fabs(p.z - q.z)});
    }
    return worst;
}

// The batch on lanes V (0: f1, 1: native, 2: widest, 3: run()).
status run_two_bone_lanes(int lanes, const two_bone_ik_batch_job& job) {
    switch (lanes) {
    case 0: return impl::run_two_bone_batch<impl::lanes::f1>(job);
    case 1: return impl::run_two_bone_batch<impl::lanes::native>(job);
    case 2: return impl::run_two_bone_batch<impl::lanes::widest>(job);
    default: return job.run();
    }
}
status run_aim_lanes(int lanes, const aim_ik_batch_job& job) {
    switch (lanes) {
    case 0: return impl::run_aim_batch<impl::lanes::f1>(job);
    case 1: return impl::run_aim_batch<impl::lanes::native>(job);
    case 2: return impl::run_aim_batch<impl::lanes::widest>(job);
    default: return job.run();
    }
}
const std::string lane_names[] = {"f1", "native", "widest", "run()"};

} // namespace

TEST_CASE("two_bone_ik_batch_job: each chain as two_bone_ik_job corrects it, on every lane type and batch size") {
    for (std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(8), std::size_t(15), std::size_t(17), std::size_t(40),
                          std::size_t(101)}) {
        crowd c(n, static_cast<std::uint32_t>(40 + n));
        const std::vector<local_pose> before = c.poses();
        // The single jobs, one after the other.
        std::unique_ptr<bool[]> single_reached(new bool[n]);
        for (std::size_t i = 0; i < n; ++i) REQUIRE(c.single(i, &single_reached[i]).run());
        const std::vector<local_pose> expected = c.poses();
        const std::vector<ik_buffers> characters = c.characters();
        std::vector<local_pose> on_f1;
        for (int lanes = 0; lanes < 4; ++lanes) {
            CAPTURE(n);
            CAPTURE(lane_names[lanes]);
            c.set_poses(before);
            std::unique_ptr<bool[]> reached(new bool[n]);
            two_bone_ik_batch_job job;
            job.characters = characters;
            job.chains = c.chains;
            job.targets = c.targets;
            job.pole_vectors = c.poles;
            job.weights = c.weights;
            job.reached = span<bool>(reached.get(), n);
            REQUIRE(job.validate());
            REQUIRE(run_two_bone_lanes(lanes, job));
            float worst = 0.0f, worst_end = 0.0f;
            for (std::size_t i = 0; i < n; ++i) {
                CAPTURE(i);
                leg_fixture& f = c.people[i];
                CHECK(finite_pose(f.pose));
                if (c.weights[i] == 0.0f) CHECK(same_pose(f.pose, before[i])); // bit for bit
                CHECK(reached[i] == single_reached[i]);
                const float rotations = rotation_difference(f.pose, expected[i]);
                const float from_f1 = lanes == 0 ? 0.0f : rotation_difference(f.pose, on_f1[i]);
                f.update();
                const glm::vec3 hip = f.at(thigh), end = f.at(ankle);
                const float l1 = f.l1(), l2 = f.l2(), chain = l1 + l2;
                if (reached[i] && c.weights[i] == 1.0f) CHECK(glm::length(end - c.targets[i]) <= 1e-5f * chain);
                const float ends = glm::length(end - c.end_of(i, expected[i])) / chain;
                if (c.kinds[i] == crowd::at_start) {
                    // Folded along the chain's start-to-end direction (fully, about the derived
                    // hinge), the roll about it left to rounding (in either job): not compared.
                    if (c.weights[i] == 1.0f && c.chains[i].mid_axis == glm::vec3(0.0f))
                        CHECK(std::fabs(glm::length(end - hip) - std::fabs(l1 - l2)) < 2e-5f * chain);
                } else if (c.kinds[i] == crowd::near_fold) {
                    // The hinge angle and the roll about the start-to-target line are
                    // ill-conditioned as the chain folds (in either job, and more so under
                    // fast-math): at weight 1 both put the end at the target, which is compared;
                    // the rotations, and the ends of a part-way correction, are not.
                    if (c.weights[i] == 1.0f) CHECK(ends < 5e-5f);
                } else {
                    worst = std::max(worst, rotations);
                    worst_end = std::max(worst_end, ends);
                    CHECK(from_f1 < 1e-5f); // every lane type as the scalar lanes
                }
            }
            if (lanes == 0) on_f1 = c.poses();
            MESSAGE(lane_names[lanes] << ", " << n << " chains: rotations within " << worst << ", ends within " << worst_end
                                      << " of the chain");
            CHECK(worst < 1e-5f);
            CHECK(worst_end < 2e-6f);
        }
    }
}

TEST_CASE("two_bone_ik_batch_job: several chains of one character, as the single jobs one after the other") {
    kbtest::rng rng(51);
    for (bool mirrored : {false, true}) {
        leg_fixture f(body(), world(mirrored));
        f.pose = random_pose(f.s, rng);
        f.update();
        const local_pose before = f.pose;
        constexpr std::size_t spine = 6;
        // The leg, and spine-neck-head bent toward a point in front (a chain that shares no joint
        // with the leg's, but hangs from the same pelvis).
        const two_bone_ik_chain chains[] = {{0, thigh, knee, ankle, glm::vec3(1, 0, 0), 1.0f},
                                            {0, spine, neck, head, glm::vec3(0.0f), 0.95f}};
        const float leg = f.l1() + f.l2();
        const glm::vec3 targets[] = {f.at(thigh) + 0.8f * leg * glm::normalize(glm::vec3(0.2f, -1, 0.3f)),
                                     f.at(spine) + glm::vec3(0.1f, 0.35f, 0.2f)};
        const glm::vec3 poles[] = {glm::vec3(0, 0, 1), glm::vec3(0, 0, -1)};
        const float weights[] = {1.0f, 0.75f};
        bool reached[2] = {false, false}, single_reached[2] = {false, false};
        const ik_buffers character[] = {f.buffers()};
        for (std::size_t i = 0; i < 2; ++i)
            REQUIRE(single_job(character[0], chains[i], targets[i], poles[i], weights[i], &single_reached[i]).run());
        const local_pose expected = f.pose;
        f.pose = before;
        two_bone_ik_batch_job batch;
        batch.characters = character;
        batch.chains = chains;
        batch.targets = targets;
        batch.pole_vectors = poles;
        batch.weights = weights;
        batch.reached = reached;
        REQUIRE(batch.validate());
        REQUIRE(batch.run());
        CHECK(rotation_difference(f.pose, expected) < 1e-5f);
        CHECK(reached[0] == single_reached[0]);
        CHECK(reached[1] == single_reached[1]);
        CHECK(reached[0]);
        f.update();
        CHECK(glm::length(f.at(ankle) - targets[0]) < 1e-5f * leg);
    }
}

TEST_CASE("two_bone_ik_batch_job: run() checks the frame's values and every index, naming the chain, and then changes nothing") {
    crowd c(20, 61);
    const std::vector<local_pose> before = c.poses();
    const std::vector<ik_buffers> characters = c.characters();
    two_bone_ik_batch_job good;
    good.characters = characters;
    good.chains = c.chains;
    good.targets = c.targets;
    good.pole_vectors = c.poles;
    good.weights = c.weights;
    REQUIRE(good.validate());
    const auto unchanged = [&] {
        for (std::size_t i = 0; i < c.people.size(); ++i)
            if (!same_pose(c.people[i].pose, before[i])) return false;
        return true;
    };
    // Each failure of run() is validate()'s, word for word.
    const auto fails = [&](const two_bone_ik_batch_job& job, errc code, const std::string& words, std::size_t index) {
        const status r = job.run();
        REQUIRE_FALSE(r);
        CHECK(r.error().code == code);
        CHECK(r.error().message.find(words) != std::string::npos);
        CHECK(r.error().message.find("two_bone_ik_batch_job") != std::string::npos);
        CHECK(r.error().index == index);
        CHECK(job.validate().error().message == r.error().message);
        CHECK(unchanged());
    };
    std::vector<glm::vec3> targets = c.targets, poles = c.poles;
    std::vector<float> weights = c.weights;
    two_bone_ik_batch_job j = good;
    targets[13].z = NAN;
    j.targets = targets;
    fails(j, errc::non_finite, "chain 13: target is not finite", 13);
    targets = c.targets;
    poles[19].x = -INFINITY;
    j = good;
    j.pole_vectors = poles;
    fails(j, errc::non_finite, "chain 19: pole vector", 19);
    weights[4] = 1.25f;
    j = good;
    j.weights = weights;
    fails(j, errc::invalid_argument, "chain 4: weight 1.25 is outside [0, 1]", 4);
    weights[4] = NAN;
    fails(j, errc::non_finite, "chain 4: weight is NaN", 4);
    j = good;
    j.targets = span<const glm::vec3>(targets.data(), 19);
    fails(j, errc::size_mismatch, "19 targets for 20 chains", error::no_index);
    j = good;
    j.weights = span<const float>(c.weights.data(), 3);
    fails(j, errc::size_mismatch, "3 weights", error::no_index);
    bool flags[5] = {};
    j = good;
    j.reached = flags;
    fails(j, errc::size_mismatch, "5 reached flags", error::no_index);
    std::vector<two_bone_ik_chain> chains = c.chains;
    chains[7].end_joint = 9;
    j = good;
    j.chains = chains;
    fails(j, errc::out_of_range, "chain 7: end joint 9 is out of range (9 joints)", 7);
    chains = c.chains;
    chains[2].character = 20;
    j.chains = chains;
    fails(j, errc::out_of_range, "chain 2: character 20 is out of range (20 characters)", 2);
    std::vector<ik_buffers> broken = characters;
    broken[5].pose = nullptr;
    j = good;
    j.characters = broken;
    fails(j, errc::invalid_argument, "character 5: pose is null", 5);
    broken = characters;
    broken[6].model = span<const glm::mat4>(broken[6].model.data(), 4);
    j.characters = broken;
    fails(j, errc::size_mismatch, "character 6: 4 model matrices for 9 joints", 6);
    // Empty optional spans: no poles (zero), every weight 1, no flags.
    j = good;
    j.pole_vectors = {};
    j.weights = {};
    CHECK(j.validate());
    CHECK(j.run());
    CHECK_FALSE(unchanged());
    // No chains at all: nothing to do.
    j = two_bone_ik_batch_job{};
    CHECK(j.validate());
    CHECK(j.run());
}

TEST_CASE("two_bone_ik_batch_job: validate() alone checks what a set-up decides, and run() leaves a chain with non-finite values unchanged") {
    crowd c(12, 62);
    const std::vector<local_pose> before = c.poses();
    std::vector<ik_buffers> characters = c.characters();
    two_bone_ik_batch_job good;
    good.characters = characters;
    good.chains = c.chains;
    good.targets = c.targets;
    good.pole_vectors = c.poles;
    REQUIRE(good.validate());
    REQUIRE(good.run());
    const std::vector<local_pose> solved = c.poses();
    const auto validate_fails = [&](const two_bone_ik_batch_job& job, errc code, const std::string& words, std::size_t index) {
        const status v = job.validate();
        REQUIRE_FALSE(v);
        CHECK(v.error().code == code);
        CHECK(v.error().message.find(words) != std::string::npos);
        CHECK(v.error().index == index);
    };
    // The chain's other values, and its joints' model matrices and rotations, each in one chain:
    // run() leaves that chain unchanged (not reached) and solves the others as before.
    for (int what = 0; what < 5; ++what) {
        CAPTURE(what);
        c.set_poses(before);
        std::vector<two_bone_ik_chain> chains = c.chains;
        const std::size_t bad = 9;
        leg_fixture& f = c.people[bad];
        if (what == 0) chains[bad].mid_axis.y = NAN;
        if (what == 1) chains[bad].soften = INFINITY;
        if (what == 2) f.model[knee][2][1] = NAN;
        if (what == 3) f.model[ankle][3][0] = INFINITY;
        if (what == 4) {
            transform t = f.pose.get(thigh);
            t.rotation.z = NAN;
            f.pose.set(thigh, t);
        }
        const local_pose bad_before = f.pose;
        two_bone_ik_batch_job j = good;
        j.chains = chains;
        validate_fails(j, errc::non_finite, "chain 9: ", bad);
        bool reached[12];
        j.reached = reached;
        REQUIRE(j.run());
        CHECK_FALSE(reached[bad]);
        CHECK(same_pose(f.pose, bad_before));
        for (std::size_t i = 0; i < 12; ++i)
            if (i != bad) CHECK(same_pose(c.people[i].pose, solved[i]));
    }
    c.set_poses(before);
    std::vector<two_bone_ik_chain> chains = c.chains;
    two_bone_ik_batch_job j = good;
    j.chains = chains;
    chains[3].mid_joint = head; // not below the thigh
    validate_fails(j, errc::invalid_argument, "chain 3: joints 1 'thigh', 8 'head', 4 'ankle' are not a chain", 3);
    CHECK(j.run()); // (a finite result)
    for (const leg_fixture& f : c.people) CHECK(finite_pose(f.pose));
    chains = c.chains;
    chains[5].soften = -0.5f;
    validate_fails(j, errc::invalid_argument, "chain 5: soften -0.5 is outside [0, 1]", 5);
    chains = c.chains;
    // Two chains correcting one joint of one pose; of two characters sharing a pose too.
    chains.push_back({4, knee, ankle, 5, glm::vec3(0.0f), 1.0f});
    std::vector<glm::vec3> targets = c.targets;
    targets.push_back(glm::vec3(0.0f));
    j.chains = chains;
    j.targets = targets;
    j.pole_vectors = {};
    validate_fails(j, errc::invalid_argument, "chain 12: corrects a joint that chain 4 corrects", 12);
    chains.back().character = 0;
    characters.push_back(characters[4]);
    characters.back().pose = characters[0].pose;
    chains.back().character = characters.size() - 1;
    j.characters = characters;
    validate_fails(j, errc::invalid_argument, "chain 12: corrects a joint that chain 0 corrects", 12);
    chains.back().start_joint = ankle;
    chains.back().mid_joint = 5;
    chains.back().end_joint = 5;
    validate_fails(j, errc::invalid_argument, "not a chain", 12);
}

TEST_CASE("aim_ik_batch_job: each chain as aim_ik_job turns it, on every lane type and batch size") {
    for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(16), std::size_t(23), std::size_t(64)}) {
        kbtest::rng rng(static_cast<std::uint32_t>(70 + n));
        std::vector<leg_fixture> people;
        people.reserve(n);
        std::vector<aim_ik_chain> chains;
        std::vector<glm::vec3> targets, poles;
        std::vector<float> weights;
        for (std::size_t i = 0; i < n; ++i) {
            people.emplace_back(body(), world(i % 3 == 1));
            leg_fixture& f = people.back();
            f.pose = random_pose(f.s, rng);
            f.update();
            aim_ik_chain c;
            c.character = i;
            c.joint = i % 2 ? head : neck;
            c.forward = glm::vec3(0, 0, 1);
            c.up = i % 5 == 4 ? glm::vec3(0.0f) : glm::vec3(0, 1, 0);
            if (i % 4 == 1) c.offset = glm::vec3(0.1f, 0.05f, 0.02f);
            chains.push_back(c);
            const glm::vec3 o = f.at(c.joint);
            // Anywhere around; at the joint; inside the offset's circle.
            const glm::vec3 dir = random_direction(rng);
            targets.push_back(i % 7 == 3 ? o : i % 4 == 1 && i % 3 == 0 ? o + 0.01f * dir : o + rng.uniform(0.5f, 5.0f) * dir);
            poles.push_back(i % 6 == 5 ? glm::vec3(0.0f) : i % 6 == 2 ? dir : random_direction(rng));
            weights.push_back(i % 10 == 2 ? 0.0f : i % 10 == 7 ? 0.5f : 1.0f);
        }
        std::vector<local_pose> before;
        for (const leg_fixture& f : people) before.push_back(f.pose);
        std::unique_ptr<bool[]> single_reached(new bool[n]);
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(single_job(people[i].buffers(), chains[i], targets[i], poles[i], weights[i], &single_reached[i]).run());
        std::vector<local_pose> expected;
        for (const leg_fixture& f : people) expected.push_back(f.pose);
        std::vector<ik_buffers> characters;
        for (leg_fixture& f : people) characters.push_back(f.buffers());
        for (int lanes = 0; lanes < 4; ++lanes) {
            CAPTURE(n);
            CAPTURE(lane_names[lanes]);
            for (std::size_t i = 0; i < n; ++i) people[i].pose = before[i]; // (the model matrices are unchanged)
            std::unique_ptr<bool[]> reached(new bool[n]);
            aim_ik_batch_job job;
            job.characters = characters;
            job.chains = chains;
            job.targets = targets;
            job.pole_vectors = poles;
            job.weights = weights;
            job.reached = span<bool>(reached.get(), n);
            REQUIRE(job.validate());
            REQUIRE(run_aim_lanes(lanes, job));
            float worst = 0.0f;
            for (std::size_t i = 0; i < n; ++i) {
                CAPTURE(i);
                CHECK(finite_pose(people[i].pose));
                CHECK(reached[i] == single_reached[i]);
                if (weights[i] == 0.0f || !reached[i]) CHECK(same_pose(people[i].pose, before[i]));
                worst = std::max(worst, rotation_difference(people[i].pose, expected[i]));
            }
            MESSAGE(lane_names[lanes] << ", " << n << " chains: rotations within " << worst);
            CHECK(worst < 1e-5f);
        }
    }
}

TEST_CASE("aim_ik_batch_job: run() and validate() check as the two-bone batch does") {
    kbtest::rng rng(81);
    leg_fixture f(body());
    f.pose = random_pose(f.s, rng);
    f.update();
    const local_pose before = f.pose;
    const ik_buffers character[] = {f.buffers()};
    aim_ik_chain chains[] = {{0, head, glm::vec3(0, 0, 1), glm::vec3(0, 1, 0), glm::vec3(0.0f)},
                             {0, neck, glm::vec3(1, 0, 0), glm::vec3(0, 1, 0), glm::vec3(0.0f)}};
    glm::vec3 targets[] = {f.at(head) + glm::vec3(1, 0.5f, 2), f.at(neck) + glm::vec3(-2, 0, 1)};
    aim_ik_batch_job job;
    job.characters = character;
    job.chains = chains;
    job.targets = targets;
    REQUIRE(job.validate());
    targets[1].y = NAN;
    CHECK(job.run().error().message == "aim_ik_batch_job: chain 1: target is not finite");
    CHECK(job.run().error().index == 1);
    CHECK(same_pose(f.pose, before));
    targets[1].y = 0.0f;
    chains[0].joint = 9;
    CHECK(job.run().error().code == errc::out_of_range);
    CHECK(same_pose(f.pose, before));
    chains[0].joint = head;
    chains[1].forward = glm::vec3(0.0f);
    CHECK(job.validate().error().message == "aim_ik_batch_job: chain 1: forward axis is zero");
    bool reached[2] = {false, true};
    job.reached = reached;
    REQUIRE(job.run()); // a zero forward axis: that joint unchanged
    CHECK(reached[0]);
    CHECK_FALSE(reached[1]);
    CHECK(kbtest::bit_equal_transform(f.pose.get(neck), before.get(neck)));
    CHECK_FALSE(kbtest::bit_equal_transform(f.pose.get(head), before.get(head)));
    chains[1] = chains[0];
    CHECK(job.validate().error().message == "aim_ik_batch_job: chain 1: corrects a joint that chain 0 corrects (of the same pose)");
}
