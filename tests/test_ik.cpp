#include <keyblend/ik.hpp>

#include "helpers.hpp"
#include "job_helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <cmath>
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
    const auto fails = [&](two_bone_ik_job job, errc code, const char* words) {
        const status v = job.validate();
        REQUIRE_FALSE(v);
        CHECK(v.error().code == code);
        CHECK(v.error().message.find(words) != std::string::npos);
        CHECK(v.error().message.find("two_bone_ik_job") != std::string::npos);
        CHECK(job.run().error().code == code);
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
    fails(j, errc::invalid_argument, "not a chain");
    j = good;
    j.end_joint = head; // not below the knee
    fails(j, errc::invalid_argument, "'head'");
    j = good;
    j.mid_joint = thigh;
    fails(j, errc::invalid_argument, "not a chain");
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
    CHECK(j.validate().error().code == errc::non_finite);
    CHECK(j.validate().error().message.find("'thigh'") != std::string::npos);
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
        j.forward = glm::vec3(0, 0, 1);
        j.offset.x = NAN;
        CHECK(j.validate().error().code == errc::non_finite);
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
