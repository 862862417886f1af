// keyblend's IK jobs against ozz-animation's, on the same problems, in one run:
//
//   ik/two_bone/keyblend  two_bone_ik_job: validate, solve, write the two corrected local
//                         rotations into the local_pose (renormalised)
//   ik/two_bone/ozz       IKTwoBoneJob::Run (validate, solve, the two corrections), then each
//                         correction multiplied into its joint's local rotation
//                         (SimdQuaternion, as ozz's samples apply them)
//   ik/aim/keyblend       aim_ik_job, the same way
//   ik/aim/ozz            IKAimJob::Run and the correction multiplied in
//   ik/.../keyblend_batch two_bone_ik_batch_job / aim_ik_batch_job: the 64 problems as one batch
//                         of 64 chains per iteration, on the widest lanes (rate: chains per second)
//
// Same inputs on both sides: the problems of bench_gameplay (a leg and a head on a small biped,
// 64 poses, a quarter of the leg targets out of reach), the knee's hinge axis given (ozz needs it),
// no soften, weight 1. Before timing, the program applies each side's corrections to the same
// poses and prints how close each gets to the targets in reach.
#include <keyblend/keyblend.hpp>

#include "bench_main.hpp"
#include "gameplay_problems.hpp"

#include <ozz/animation/runtime/ik_aim_job.h>
#include <ozz/animation/runtime/ik_two_bone_job.h>
#include <ozz/base/maths/simd_math.h>
#include <ozz/base/maths/simd_quaternion.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using kbbench::ik_problem;
namespace om = ozz::math;

constexpr std::size_t problem_count = 64;

om::Float4x4 to_ozz(const glm::mat4& m) {
    om::Float4x4 out;
    for (int c = 0; c < 4; ++c) out.cols[c] = om::simd_float4::Load(m[c].x, m[c].y, m[c].z, m[c].w);
    return out;
}
om::SimdFloat4 to_ozz(const glm::vec3& v, float w) { return om::simd_float4::Load(v.x, v.y, v.z, w); }
om::SimdQuaternion to_ozz(const glm::quat& q) { return {om::simd_float4::Load(q.x, q.y, q.z, q.w)}; }
glm::quat to_glm(const om::SimdQuaternion& q) {
    float f[4];
    om::StorePtrU(q.xyzw, f);
    return keyblend::make_quat(f[3], f[0], f[1], f[2]);
}

// A problem in ozz's types: the joints' model matrices, target, pole, and the local rotations the
// corrections are multiplied into.
struct ozz_problem {
    om::Float4x4 start, mid, end;
    om::SimdFloat4 target, pole;
    om::SimdQuaternion local[2];
};

std::vector<ozz_problem> ozz_problems(const std::vector<ik_problem>& in, bool leg) {
    std::vector<ozz_problem> out;
    for (const ik_problem& p : in) {
        ozz_problem o;
        const std::size_t j0 = leg ? kbbench::thigh : kbbench::head;
        o.start = to_ozz(p.model[j0]);
        o.mid = to_ozz(p.model[leg ? kbbench::knee : j0]);
        o.end = to_ozz(p.model[leg ? kbbench::ankle : j0]);
        o.target = to_ozz(p.target, 1.0f);
        o.pole = to_ozz(p.pole, 0.0f);
        o.local[0] = to_ozz(p.pose.get(j0).rotation);
        o.local[1] = to_ozz(p.pose.get(leg ? kbbench::knee : j0).rotation);
        out.push_back(o);
    }
    return out;
}

const std::vector<ik_problem>& problems(bool leg) {
    static const std::vector<ik_problem> legs = kbbench::ik_problems(problem_count, true);
    static const std::vector<ik_problem> heads = kbbench::ik_problems(problem_count, false);
    return leg ? legs : heads;
}

// ozz's mid_axis opens the joint where keyblend's bends it.
const om::SimdFloat4 ozz_knee_axis = to_ozz(-kbbench::knee_axis, 0.0f);

void ozz_two_bone(ozz_problem& p, bool* reached) {
    ozz::animation::IKTwoBoneJob job;
    job.target = p.target;
    job.pole_vector = p.pole;
    job.mid_axis = ozz_knee_axis;
    job.start_joint = &p.start;
    job.mid_joint = &p.mid;
    job.end_joint = &p.end;
    om::SimdQuaternion correction[2];
    job.start_joint_correction = &correction[0];
    job.mid_joint_correction = &correction[1];
    job.reached = reached;
    if (!job.Run()) std::abort();
    p.local[0] = p.local[0] * correction[0];
    p.local[1] = p.local[1] * correction[1];
}

void ozz_aim(ozz_problem& p, bool* reached) {
    ozz::animation::IKAimJob job;
    job.target = p.target;
    job.forward = to_ozz(kbbench::head_forward, 0.0f);
    job.up = to_ozz(kbbench::head_up, 0.0f);
    job.pole_vector = p.pole;
    job.joint = &p.start;
    om::SimdQuaternion correction;
    job.joint_correction = &correction;
    job.reached = reached;
    if (!job.Run()) std::abort();
    p.local[0] = p.local[0] * correction;
}

// How close each side gets: the corrected rotations put into the pose, then local_to_model.
void check() {
    const keyblend::skeleton& s = kbbench::biped();
    double leg_k = 0.0, leg_o = 0.0, aim_k = 0.0, aim_o = 0.0;
    std::vector<glm::mat4> after;
    for (bool leg : {true, false}) {
        std::vector<ik_problem> mine = problems(leg);
        std::vector<ozz_problem> theirs = ozz_problems(mine, leg);
        for (std::size_t i = 0; i < mine.size(); ++i) {
            const ik_problem& p = problems(leg)[i];
            const glm::mat4 root = p.model[0] * glm::inverse(keyblend::to_matrix(p.pose.get(0)));
            bool reached_k = false, reached_o = false;
            if (leg) {
                keyblend::two_bone_ik_job job = kbbench::leg_job(mine[i]);
                job.reached = &reached_k;
                if (!job.run()) std::abort();
                ozz_two_bone(theirs[i], &reached_o);
            } else {
                keyblend::aim_ik_job job = kbbench::head_job(mine[i]);
                job.reached = &reached_k;
                if (!job.run()) std::abort();
                ozz_aim(theirs[i], &reached_o);
            }
            keyblend::local_pose ozz_pose = p.pose;
            const std::size_t j0 = leg ? kbbench::thigh : kbbench::head;
            keyblend::transform t = ozz_pose.get(j0);
            t.rotation = to_glm(theirs[i].local[0]);
            ozz_pose.set(j0, t);
            if (leg) {
                t = ozz_pose.get(kbbench::knee);
                t.rotation = to_glm(theirs[i].local[1]);
                ozz_pose.set(kbbench::knee, t);
            }
            for (int side = 0; side < 2; ++side) {
                kbbench::model_matrices(s, side == 0 ? mine[i].pose : ozz_pose, after, root);
                double miss;
                if (leg) {
                    if (!reached_k) continue;
                    miss = double(glm::distance(glm::vec3(after[kbbench::ankle][3]), p.target));
                } else {
                    const glm::vec3 f = glm::normalize(glm::mat3(after[kbbench::head]) * kbbench::head_forward);
                    const glm::vec3 to = glm::normalize(p.target - glm::vec3(after[kbbench::head][3]));
                    miss = double(std::atan2(glm::length(glm::cross(f, to)), glm::dot(f, to)));
                }
                double& worst = leg ? (side == 0 ? leg_k : leg_o) : (side == 0 ? aim_k : aim_o);
                worst = std::max(worst, miss);
            }
        }
    }
    std::printf("checked: reachable leg targets missed by at most %.2g (keyblend) and %.2g (ozz), leg length "
                "0.87; aim off by at most %.2g and %.2g rad\n",
                leg_k, leg_o, aim_k, aim_o);
    std::printf("checked: keyblend's batch jobs' rotations within %.2g (legs) and %.2g (heads) of its single jobs'\n",
                kbbench::batch_difference(problems(true), true), kbbench::batch_difference(problems(false), false));
}

void set_rate(benchmark::State& state) {
    state.counters["solves/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

template <class Job, class Make>
void bm_keyblend(benchmark::State& state, bool leg, Make make) {
    std::vector<ik_problem> p = problems(leg);
    std::vector<Job> jobs;
    for (ik_problem& q : p) jobs.push_back(make(q));
    kbbench::run_jobs(state, jobs);
}
void bm_two_bone_keyblend(benchmark::State& state) { bm_keyblend<keyblend::two_bone_ik_job>(state, true, kbbench::leg_job); }
void bm_aim_keyblend(benchmark::State& state) { bm_keyblend<keyblend::aim_ik_job>(state, false, kbbench::head_job); }

void bm_two_bone_batch(benchmark::State& state) {
    std::vector<ik_problem> p = problems(true);
    const kbbench::ik_batch batch(p, true);
    kbbench::run_batch(state, batch.leg_job());
}
void bm_aim_batch(benchmark::State& state) {
    std::vector<ik_problem> p = problems(false);
    const kbbench::ik_batch batch(p, false);
    kbbench::run_batch(state, batch.head_job());
}

template <class Solve>
void bm_ozz(benchmark::State& state, bool leg, Solve solve) {
    std::vector<ozz_problem> p = ozz_problems(problems(leg), leg);
    std::size_t i = 0;
    for (auto _ : state) {
        solve(p[i], nullptr);
        i = (i + 1) % p.size();
        benchmark::ClobberMemory();
    }
    set_rate(state);
}
void bm_two_bone_ozz(benchmark::State& state) { bm_ozz(state, true, ozz_two_bone); }
void bm_aim_ozz(benchmark::State& state) { bm_ozz(state, false, ozz_aim); }

} // namespace

BENCHMARK(bm_two_bone_ozz)->Name("ik/two_bone/ozz");
BENCHMARK(bm_two_bone_keyblend)->Name("ik/two_bone/keyblend");
BENCHMARK(bm_two_bone_batch)->Name("ik/two_bone/keyblend_batch");
BENCHMARK(bm_aim_ozz)->Name("ik/aim/ozz");
BENCHMARK(bm_aim_keyblend)->Name("ik/aim/keyblend");
BENCHMARK(bm_aim_batch)->Name("ik/aim/keyblend_batch");

int main(int argc, char** argv) {
    check();
    // Each keyblend case (single and batched) against ozz's on the same problems.
    return kbbench::run(argc, argv, [](const std::string& name) {
        const std::string base = name.substr(0, name.rfind('/') + 1);
        return name == base + "keyblend" || name == base + "keyblend_batch" ? base + "ozz" : std::string();
    });
}
