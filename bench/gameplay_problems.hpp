// The inputs of the gameplay benchmarks (bench_gameplay, and bench/ozz/bench_ozz_gameplay against
// ozz-animation): IK problems on a small biped and a walk with root motion. Deterministic.
#pragma once

#include <keyblend/keyblend.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

namespace kbbench {

/// The model matrices of a pose under `root` (a local_to_model_job), into `model` sized first.
inline void model_matrices(const keyblend::skeleton& s, const keyblend::local_pose& pose, std::vector<glm::mat4>& model,
                           const glm::mat4& root) {
    model.resize(s.size());
    keyblend::local_to_model_job job;
    job.skeleton = &s;
    job.input = &pose;
    job.root = &root;
    job.output = model;
    if (!job.run()) std::abort();
}

// pelvis > thigh > knee > ankle > toe, pelvis > spine > neck > head.
inline constexpr std::size_t thigh = 1, knee = 2, ankle = 3, head = 7;
// The knee's hinge in its own frame (its bind bend is about -x), and the head's axes.
inline const glm::vec3 knee_axis(-1.0f, 0.0f, 0.0f);
inline const glm::vec3 head_forward(0.0f, 0.0f, 1.0f), head_up(0.0f, 1.0f, 0.0f);

inline const keyblend::skeleton& biped() {
    static const keyblend::skeleton s = [] {
        const auto at = [](glm::vec3 t, glm::quat r = glm::identity<glm::quat>()) {
            return keyblend::to_matrix(keyblend::transform{t, r, glm::vec3(1)});
        };
        return keyblend::skeleton::from_parents(
                   {{"pelvis", -1, at({0, 1, 0}, glm::angleAxis(0.2f, glm::vec3(0, 1, 0)))},
                    {"thigh", 0, at({0.1f, -0.05f, 0}, glm::angleAxis(0.2f, glm::vec3(1, 0, 0)))},
                    {"knee", 1, at({0, -0.45f, 0}, glm::angleAxis(-0.4f, glm::vec3(1, 0, 0)))},
                    {"ankle", 2, at({0, -0.42f, 0}, glm::angleAxis(0.3f, glm::vec3(1, 0, 0)))},
                    {"toe", 3, at({0, -0.05f, 0.12f})},
                    {"spine", 0, at({0, 0.3f, 0})},
                    {"neck", 5, at({0, 0.4f, 0.02f}, glm::angleAxis(0.1f, glm::vec3(1, 0, 0)))},
                    {"head", 6, at({0, 0.1f, 0}, glm::angleAxis(-0.2f, glm::vec3(0, 0, 1)))}})
            .value();
    }();
    return s;
}

/// One IK problem: a pose, its model matrices (under a world transform), a target and a pole.
struct ik_problem {
    keyblend::local_pose pose;
    std::vector<glm::mat4> model;
    glm::vec3 target{0.0f}, pole{0.0f};
};

/// `n` problems: random poses (the knee bent forward), the character turned and moved in the
/// world; for the leg, targets at 0.3 to 1.1 of its length from the hip (one in four out of reach),
/// for the head, targets 0.5 to 5 away; poles at random.
inline std::vector<ik_problem> ik_problems(std::size_t n, bool leg) {
    std::mt19937 rng(leg ? 11 : 12);
    const auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
    const auto direction = [&] {
        glm::vec3 v;
        do v = glm::vec3(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
        while (glm::length(v) < 0.1f || glm::length(v) > 1.0f);
        return glm::normalize(v);
    };
    const keyblend::skeleton& s = biped();
    std::vector<ik_problem> out(n);
    for (ik_problem& p : out) {
        p.pose = keyblend::local_pose(s);
        for (std::size_t j = 0; j < s.size(); ++j) {
            keyblend::transform t = p.pose.get(j);
            const float angle = j == knee ? uniform(-1.2f, -0.2f) : uniform(-0.4f, 0.4f);
            t.rotation = t.rotation * glm::angleAxis(angle, j == knee ? glm::vec3(1, 0, 0) : direction());
            p.pose.set(j, t);
        }
        const glm::mat4 world = keyblend::to_matrix(
            keyblend::transform{glm::vec3(uniform(-5, 5), 0, uniform(-5, 5)), glm::angleAxis(uniform(-3, 3), glm::vec3(0, 1, 0)), glm::vec3(1)});
        model_matrices(s, p.pose, p.model, world);
        const glm::vec3 from(p.model[leg ? thigh : head][3]);
        p.target = from + direction() * (leg ? uniform(0.3f, 1.1f) * 0.87f : uniform(0.5f, 5.0f));
        p.pole = direction();
    }
    return out;
}

/// The jobs the benchmarks run on a problem: the leg (thigh, knee, ankle; the knee's hinge given,
/// as ozz needs it) and the head (forward +z, up +y).
inline keyblend::ik_buffers buffers(ik_problem& p) {
    return {&biped(), p.model, &p.pose};
}
inline keyblend::two_bone_ik_job leg_job(ik_problem& p) {
    keyblend::two_bone_ik_job job;
    static_cast<keyblend::ik_buffers&>(job) = buffers(p);
    job.start_joint = thigh;
    job.mid_joint = knee;
    job.end_joint = ankle;
    job.target = p.target;
    job.pole_vector = p.pole;
    job.mid_axis = knee_axis;
    return job;
}
inline keyblend::aim_ik_job head_job(ik_problem& p) {
    keyblend::aim_ik_job job;
    static_cast<keyblend::ik_buffers&>(job) = buffers(p);
    job.joint = head;
    job.target = p.target;
    job.forward = head_forward;
    job.up = head_up;
    job.pole_vector = p.pole;
    return job;
}

/// The problems as one batch (two_bone_ik_batch_job or aim_ik_batch_job): each problem a character
/// with one chain, the leg or the head of leg_job / head_job. The vectors own what the jobs' spans
/// view: keep the batch alive and unmoved while they run.
struct ik_batch {
    std::vector<keyblend::ik_buffers> characters;
    std::vector<keyblend::two_bone_ik_chain> legs;
    std::vector<keyblend::aim_ik_chain> heads;
    std::vector<glm::vec3> targets, poles;

    ik_batch(std::vector<ik_problem>& problems, bool leg) {
        for (std::size_t i = 0; i < problems.size(); ++i) {
            characters.push_back(buffers(problems[i]));
            if (leg) legs.push_back({i, thigh, knee, ankle, knee_axis, 1.0f});
            else heads.push_back({i, head, head_forward, head_up, glm::vec3(0.0f)});
            targets.push_back(problems[i].target);
            poles.push_back(problems[i].pole);
        }
    }
    keyblend::two_bone_ik_batch_job leg_job() const {
        keyblend::two_bone_ik_batch_job job;
        static_cast<keyblend::ik_batch_buffers&>(job) = batch_buffers();
        job.chains = legs;
        return job;
    }
    keyblend::aim_ik_batch_job head_job() const {
        keyblend::aim_ik_batch_job job;
        static_cast<keyblend::ik_batch_buffers&>(job) = batch_buffers();
        job.chains = heads;
        return job;
    }

private:
    keyblend::ik_batch_buffers batch_buffers() const {
        keyblend::ik_batch_buffers b;
        b.characters = characters;
        b.targets = targets;
        b.pole_vectors = poles;
        return b;
    }
};

/// How far the batch job's corrections are from the single jobs' on the same problems: the largest
/// difference of a corrected local rotation's components (what the benchmarks print before timing).
inline double batch_difference(const std::vector<ik_problem>& problems, bool leg) {
    std::vector<ik_problem> singles = problems, batched = problems;
    for (ik_problem& p : singles)
        if (!(leg ? leg_job(p).run() : head_job(p).run())) std::abort();
    const ik_batch batch(batched, leg);
    if (!(leg ? batch.leg_job().run() : batch.head_job().run())) std::abort();
    double worst = 0.0;
    for (std::size_t i = 0; i < problems.size(); ++i)
        for (std::size_t j : {leg ? thigh : head, leg ? knee : head}) {
            const glm::quat a = singles[i].pose.get(j).rotation, b = batched[i].pose.get(j).rotation;
            const float sign = keyblend::quat_dot(a, b) < 0.0f ? -1.0f : 1.0f;
            worst = std::max({worst, double(std::fabs(a.w - sign * b.w)), double(std::fabs(a.x - sign * b.x)),
                              double(std::fabs(a.y - sign * b.y)), double(std::fabs(a.z - sign * b.z))});
        }
    return worst;
}

/// Runs a batch job per iteration and reports solves/s (its chains per second).
template <class Job>
void run_batch(benchmark::State& state, const Job& job) {
    if (!job.validate()) std::abort();
    for (auto _ : state) {
        benchmark::DoNotOptimize(job.run());
        benchmark::ClobberMemory();
    }
    state.counters["solves/s"] =
        benchmark::Counter(double(state.iterations()) * double(job.chains.size()), benchmark::Counter::kIsRate);
}

/// Runs one job per iteration, cycling through `jobs`, and reports solves/s.
template <class Job>
void run_jobs(benchmark::State& state, const std::vector<Job>& jobs) {
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(jobs[i].run());
        i = (i + 1) % jobs.size();
        benchmark::ClobberMemory();
    }
    state.counters["solves/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

/// A one-second walk (4800 ticks, looping) whose root motion travels 1.4 along z while turning
/// 0.3 radians about y, keyed at 30 Hz as an extracted clip is.
inline keyblend::clip motion_clip() {
    keyblend::clip c;
    c.name = "walk";
    c.duration = 4800.0f;
    for (int k = 0; k <= 30; ++k) {
        const float u = float(k) / 30.0f;
        c.motion.translation.push_back(4800.0f * u, glm::vec3(0.05f * std::sin(6.2832f * u), 0.0f, 1.4f * u));
        c.motion.rotation.push_back(4800.0f * u, glm::angleAxis(0.3f * u, glm::vec3(0, 1, 0)));
    }
    return c;
}

} // namespace kbbench
