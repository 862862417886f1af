// Gameplay jobs against plain GLM references measured in the same run:
//
//   ik/two_bone/...       two_bone_ik_job (validate + solve + the corrected local rotations
//                         written into the pose) vs. the textbook version: law of cosines with
//                         acos, glm::rotation onto the target, a pole twist by acos, corrections
//                         taken into each joint's frame through quat_cast of its model matrix
//   ik/aim/...            aim_ik_job vs. glm::rotation of the forward axis onto the target plus
//                         the same pole twist
//   ik/.../keyblend_batch two_bone_ik_batch_job / aim_ik_batch_job: the same 64 problems as one
//                         batch of 64 chains (64 characters) per iteration, on the widest lanes
//   motion/accumulate/... one 60 Hz update of a looping walk's root motion: motion_between with a
//                         cursor, composed into the character's placement, vs. sampling the motion
//                         tracks at both times (std::upper_bound + glm::mix / glm::slerp), the
//                         wrap handled by hand, and the step applied as glm::mat4 products
//
// Rates: solves/s and updates/s, single-threaded. Each case cycles through 64 problems (poses,
// targets, poles; a quarter of the leg targets out of reach). Before timing, the program checks
// that both sides of each IK case reach the targets that are in reach.
#define GLM_ENABLE_EXPERIMENTAL
#include <keyblend/keyblend.hpp>

#include "bench_main.hpp"
#include "gameplay_problems.hpp"
#include "reference.hpp"

#include <glm/gtx/quaternion.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

using kbbench::ik_problem;

constexpr std::size_t problem_count = 64; // (their data stays in cache, as one character's would)

const std::vector<ik_problem>& leg_problems() {
    static const std::vector<ik_problem> p = kbbench::ik_problems(problem_count, true);
    return p;
}
const std::vector<ik_problem>& head_problems() {
    static const std::vector<ik_problem> p = kbbench::ik_problems(problem_count, false);
    return p;
}

// --- The plain references ---------------------------------------------------------------------

glm::quat rotation_of(const glm::mat4& m) {
    return glm::quat_cast(glm::mat3(glm::normalize(glm::vec3(m[0])), glm::normalize(glm::vec3(m[1])),
                                    glm::normalize(glm::vec3(m[2]))));
}

// The angle about `axis` that turns `from` (across the axis) to `to`.
float twist_angle(glm::vec3 from, glm::vec3 to, glm::vec3 axis) {
    from = glm::normalize(from - glm::dot(from, axis) * axis);
    to = glm::normalize(to - glm::dot(to, axis) * axis);
    const float angle = std::acos(glm::clamp(glm::dot(from, to), -1.0f, 1.0f));
    return glm::dot(glm::cross(from, to), axis) < 0.0f ? -angle : angle;
}

void reference_two_bone(const glm::mat4* model, glm::vec3 target, glm::vec3 pole, glm::quat& start_local, glm::quat& mid_local) {
    using kbbench::thigh;
    using kbbench::knee;
    using kbbench::ankle;
    const glm::vec3 a(model[thigh][3]), b(model[knee][3]), c(model[ankle][3]);
    const float l1 = glm::distance(a, b), l2 = glm::distance(b, c);
    const float d = glm::clamp(glm::distance(a, target), std::fabs(l1 - l2), l1 + l2);
    // The middle joint's angle now and the one that puts the end at distance d.
    const float now = std::acos(glm::clamp(glm::dot(glm::normalize(a - b), glm::normalize(c - b)), -1.0f, 1.0f));
    const float want = std::acos(glm::clamp((l1 * l1 + l2 * l2 - d * d) / (2.0f * l1 * l2), -1.0f, 1.0f));
    const glm::vec3 hinge = glm::normalize(glm::cross(b - a, c - b));
    const glm::quat bend = glm::angleAxis(now - want, hinge);
    const glm::vec3 dir = glm::normalize(target - a);
    const glm::quat onto = glm::rotation(glm::normalize(b + bend * (c - b) - a), dir);
    const glm::quat start = glm::angleAxis(twist_angle(onto * (b - a), pole, dir), dir) * onto;
    const glm::quat rs = rotation_of(model[thigh]), rm = rotation_of(model[knee]);
    start_local = glm::normalize(start_local * (glm::inverse(rs) * start * rs));
    mid_local = glm::normalize(mid_local * (glm::inverse(rm) * bend * rm));
}

void reference_aim(const glm::mat4& m, glm::vec3 target, glm::vec3 pole, glm::quat& local) {
    const glm::quat r = rotation_of(m);
    const glm::vec3 dir = glm::normalize(target - glm::vec3(m[3]));
    const glm::quat onto = glm::rotation(glm::normalize(r * kbbench::head_forward), dir);
    const glm::quat q = glm::angleAxis(twist_angle(onto * (r * kbbench::head_up), pole, dir), dir) * onto;
    local = glm::normalize(local * (glm::inverse(r) * q * r));
}

// --- Checks: both sides reach the targets in reach --------------------------------------------

void check_ik() {
    const keyblend::skeleton& s = kbbench::biped();
    double worst_keyblend = 0.0, worst_reference = 0.0, worst_aim_keyblend = 0.0, worst_aim_reference = 0.0;
    std::vector<glm::mat4> after;
    for (const ik_problem& p : leg_problems()) {
        ik_problem q = p;
        keyblend::local_pose& pose = q.pose;
        keyblend::two_bone_ik_job job = kbbench::leg_job(q);
        job.mid_axis = glm::vec3(0.0f); // (the reference derives the hinge from the bones)
        bool reached = false;
        job.reached = &reached;
        if (!job.run()) std::abort();
        const glm::mat4 root = p.model[0] * glm::inverse(keyblend::to_matrix(p.pose.get(0)));
        kbbench::model_matrices(s, pose, after, root);
        if (!reached) continue;
        worst_keyblend = std::max(worst_keyblend, double(glm::distance(glm::vec3(after[kbbench::ankle][3]), p.target)));
        keyblend::transform ts = p.pose.get(kbbench::thigh), tk = p.pose.get(kbbench::knee);
        reference_two_bone(p.model.data(), p.target, p.pole, ts.rotation, tk.rotation);
        pose = p.pose;
        pose.set(kbbench::thigh, ts);
        pose.set(kbbench::knee, tk);
        kbbench::model_matrices(s, pose, after, root);
        worst_reference = std::max(worst_reference, double(glm::distance(glm::vec3(after[kbbench::ankle][3]), p.target)));
    }
    for (const ik_problem& p : head_problems()) {
        ik_problem q = p;
        keyblend::local_pose& pose = q.pose;
        const keyblend::aim_ik_job job = kbbench::head_job(q);
        if (!job.run()) std::abort();
        const glm::mat4 root = p.model[0] * glm::inverse(keyblend::to_matrix(p.pose.get(0)));
        const auto miss = [&](const keyblend::local_pose& posed) {
            kbbench::model_matrices(s, posed, after, root);
            const glm::vec3 f = glm::normalize(glm::mat3(after[kbbench::head]) * kbbench::head_forward);
            const glm::vec3 to = glm::normalize(p.target - glm::vec3(after[kbbench::head][3]));
            return double(std::atan2(glm::length(glm::cross(f, to)), glm::dot(f, to)));
        };
        worst_aim_keyblend = std::max(worst_aim_keyblend, miss(pose));
        keyblend::transform th = p.pose.get(kbbench::head);
        reference_aim(p.model[kbbench::head], p.target, p.pole, th.rotation);
        pose = p.pose;
        pose.set(kbbench::head, th);
        worst_aim_reference = std::max(worst_aim_reference, miss(pose));
    }
    std::printf("checked: reachable leg targets missed by at most %.2g (keyblend) and %.2g (reference), leg "
                "length 0.87; aim off by at most %.2g and %.2g rad\n",
                worst_keyblend, worst_reference, worst_aim_keyblend, worst_aim_reference);
    std::printf("checked: the batch jobs' rotations within %.2g (legs) and %.2g (heads) of the single jobs'\n",
                kbbench::batch_difference(leg_problems(), true), kbbench::batch_difference(head_problems(), false));
}

// --- Benchmarks -----------------------------------------------------------------------------

void set_rate(benchmark::State& state, const char* unit) {
    state.counters[unit] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

void bm_two_bone_keyblend(benchmark::State& state) {
    std::vector<ik_problem> problems = leg_problems();
    std::vector<keyblend::two_bone_ik_job> jobs;
    for (ik_problem& p : problems) jobs.push_back(kbbench::leg_job(p));
    kbbench::run_jobs(state, jobs);
}

void bm_two_bone_reference(benchmark::State& state) {
    std::vector<ik_problem> problems = leg_problems();
    std::vector<glm::quat> rotations;
    for (const ik_problem& p : problems) {
        rotations.push_back(p.pose.get(kbbench::thigh).rotation);
        rotations.push_back(p.pose.get(kbbench::knee).rotation);
    }
    std::size_t i = 0;
    for (auto _ : state) {
        const ik_problem& p = problems[i];
        reference_two_bone(p.model.data(), p.target, p.pole, rotations[2 * i], rotations[2 * i + 1]);
        i = (i + 1) % problems.size();
        benchmark::DoNotOptimize(rotations.data());
        benchmark::ClobberMemory();
    }
    set_rate(state, "solves/s");
}

void bm_aim_keyblend(benchmark::State& state) {
    std::vector<ik_problem> problems = head_problems();
    std::vector<keyblend::aim_ik_job> jobs;
    for (ik_problem& p : problems) jobs.push_back(kbbench::head_job(p));
    kbbench::run_jobs(state, jobs);
}

void bm_two_bone_batch(benchmark::State& state) {
    std::vector<ik_problem> problems = leg_problems();
    const kbbench::ik_batch batch(problems, true);
    kbbench::run_batch(state, batch.leg_job());
}

void bm_aim_batch(benchmark::State& state) {
    std::vector<ik_problem> problems = head_problems();
    const kbbench::ik_batch batch(problems, false);
    kbbench::run_batch(state, batch.head_job());
}

void bm_aim_reference(benchmark::State& state) {
    std::vector<ik_problem> problems = head_problems();
    std::vector<glm::quat> rotations;
    for (const ik_problem& p : problems) rotations.push_back(p.pose.get(kbbench::head).rotation);
    std::size_t i = 0;
    for (auto _ : state) {
        const ik_problem& p = problems[i];
        reference_aim(p.model[kbbench::head], p.target, p.pole, rotations[i]);
        i = (i + 1) % problems.size();
        benchmark::DoNotOptimize(rotations.data());
        benchmark::ClobberMemory();
    }
    set_rate(state, "solves/s");
}

constexpr double step_ticks = 80.0; // 60 Hz at 4800 ticks per second

void bm_motion_keyblend(benchmark::State& state) {
    const keyblend::clip c = kbbench::motion_clip();
    keyblend::motion_cursor cursor;
    keyblend::rigid_transform placement;
    double t = 0.0;
    for (auto _ : state) {
        placement = keyblend::compose(placement, keyblend::motion_between(c, t, t + step_ticks, cursor));
        t += step_ticks;
        benchmark::DoNotOptimize(placement);
    }
    set_rate(state, "updates/s");
}

void bm_motion_reference(benchmark::State& state) {
    const keyblend::clip c = kbbench::motion_clip();
    std::vector<kbbench::ref_key<glm::vec3>> translation;
    std::vector<kbbench::ref_key<glm::quat>> rotation;
    for (std::size_t k = 0; k < c.motion.translation.size(); ++k) {
        translation.push_back({c.motion.translation.time(k), c.motion.translation.value(k)});
        rotation.push_back({c.motion.rotation.time(k), c.motion.rotation.value(k)});
    }
    const double length = double(c.duration);
    const auto at = [&](double time) {
        const float t = float(time);
        const glm::vec3 p = kbbench::reference_sample(translation, t, [](glm::vec3 a, glm::vec3 b, float u) { return glm::mix(a, b, u); });
        const glm::quat q = kbbench::reference_sample(rotation, t, [](glm::quat a, glm::quat b, float u) { return glm::slerp(a, b, u); });
        return glm::translate(glm::mat4(1.0f), p) * glm::mat4_cast(q);
    };
    glm::mat4 placement(1.0f);
    double t = 0.0;
    for (auto _ : state) {
        const double next = t + step_ticks;
        const double k0 = std::floor(t / length), k1 = std::floor(next / length);
        const glm::mat4 from = at(t - k0 * length), to = at(next - k1 * length);
        const glm::mat4 step = k0 == k1 ? glm::inverse(from) * to : glm::inverse(from) * at(length) * glm::inverse(at(0.0)) * to;
        placement = placement * step;
        t = next;
        benchmark::DoNotOptimize(placement);
    }
    set_rate(state, "updates/s");
}

} // namespace

BENCHMARK(bm_two_bone_reference)->Name("ik/two_bone/reference");
BENCHMARK(bm_two_bone_keyblend)->Name("ik/two_bone/keyblend");
BENCHMARK(bm_two_bone_batch)->Name("ik/two_bone/keyblend_batch");
BENCHMARK(bm_aim_reference)->Name("ik/aim/reference");
BENCHMARK(bm_aim_keyblend)->Name("ik/aim/keyblend");
BENCHMARK(bm_aim_batch)->Name("ik/aim/keyblend_batch");
BENCHMARK(bm_motion_reference)->Name("motion/accumulate/reference");
BENCHMARK(bm_motion_keyblend)->Name("motion/accumulate/keyblend");

int main(int argc, char** argv) {
    check_ik();
    return kbbench::run(argc, argv, [](const std::string& name) {
        return name.substr(0, name.rfind('/') + 1) + "reference";
    });
}
