// The compiled kernels (keyblend::kernels, KEYBLEND_KERNELS_LIBRARY): every job runs on the kernels
// chosen at run time, and each instruction set's results equal the scalar reference's within the
// tolerance the header-only tests hold each lane path to. ctest runs this file once per
// instruction set (KEYBLEND_ISA), beside test_skin.cpp.
#include <keyblend/keyblend.hpp>

#include "helpers.hpp"

#include <doctest/doctest.h>

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace keyblend;

#if !defined(KEYBLEND_KERNELS_LIBRARY)
#error "test_kernels.cpp is built with the compiled kernels"
#endif

namespace {

/// A clip of every kind of track on a random skeleton, as the sampling tests build them.
struct frame_inputs {
    skeleton s = kbtest::random_skeleton(37, 3);
    clip c;
    frame_inputs() {
        kbtest::rng rng(8);
        for (std::size_t j = 0; j < s.size(); j += 2) {
            channel ch;
            ch.joint = j;
            for (int k = 0; k < 6; ++k) {
                const float t = float(k) * 10.0f + float(j % 3);
                ch.translation.push_back(t, rng.vec3(-1, 1));
                ch.rotation.push_back(t, rng.rotation());
                ch.scale.push_back(t, rng.vec3(0.5f, 1.5f));
            }
            if (j % 4 == 0) ch.rotation.set_mode(interpolation::nlerp);
            c.channels.push_back(ch);
        }
        c.duration = last_key_time(c);
        REQUIRE(validate_clip(c, s));
    }
};

/// One frame through every job, on the kernels chosen now: the model matrices and palette.
std::vector<glm::mat4> run_frame(const frame_inputs& in, float time) {
    sampling_context ctx;
    local_pose sampled, blended, delta;
    sampling_job sample{&in.c, &in.s, time, &ctx, &sampled};
    REQUIRE(sample.run());
    const local_pose rest(in.s);
    REQUIRE(make_additive(sampled, rest, delta));
    const std::vector<float> mask(in.s.size(), 0.5f);
    const blend_layer layers[] = {{&sampled, 0.7f}, {&rest, 0.3f, mask}};
    const additive_layer adds[] = {{&delta, nullptr, 0.25f}};
    blend_job blend;
    blend.rest_pose = &rest;
    blend.layers = layers;
    blend.additive_layers = adds;
    blend.output = &blended;
    REQUIRE(blend.run());
    std::vector<glm::mat4> model(in.s.size()), palette(in.s.size());
    local_to_model_job hierarchy;
    hierarchy.skeleton = &in.s;
    hierarchy.input = &blended;
    hierarchy.output = model;
    REQUIRE(hierarchy.run());
    std::vector<skin_bone> bones;
    for (std::size_t j = 0; j < in.s.size(); ++j) bones.push_back({"", j, in.s.inverse_bind_model()[j]});
    palette_job matrices;
    matrices.model = model;
    matrices.bones = bones;
    matrices.output = palette;
    REQUIRE(matrices.run());
    model.insert(model.end(), palette.begin(), palette.end());
    return model;
}

} // namespace

TEST_CASE("compiled kernels: every job runs on the chosen instruction set, within the scalar reference's tolerance") {
    const simd_isa chosen = kernel_isa();
    MESSAGE("the compiled kernels run " << std::string(to_string(chosen)));
    REQUIRE(kernel_isa_supported(chosen));
    CHECK(kernel_isa_supported(simd_isa::scalar));
    const frame_inputs in;
    for (float t : {0.0f, 3.25f, 17.5f, 49.0f, 60.0f}) {
        REQUIRE(force_kernel_isa(simd_isa::scalar));
        const std::vector<glm::mat4> reference = run_frame(in, t);
        REQUIRE(force_kernel_isa(chosen));
        const std::vector<glm::mat4> got = run_frame(in, t);
        float worst = 0.0f;
        for (std::size_t i = 0; i < got.size(); ++i)
            worst = std::max(worst, kbtest::max_abs_diff(got[i], reference[i]) /
                                        std::max(1.0f, kbtest::max_abs_diff(reference[i], glm::mat4(0.0f))));
        CAPTURE(t);
        CHECK(worst < 2e-5f);
    }
    // Kernels the library does not have, or the CPU does not run, cannot be forced.
    for (simd_isa isa : {simd_isa::sse2, simd_isa::avx2, simd_isa::avx512, simd_isa::neon})
        if (!kernel_isa_supported(isa)) CHECK(force_kernel_isa(isa).error().code == errc::unsupported);
    REQUIRE(force_kernel_isa(chosen));
}

TEST_CASE("compiled kernels: the batched IK jobs on the chosen instruction set, within the scalar reference's tolerance") {
    const simd_isa chosen = kernel_isa();
    const auto at = [](glm::vec3 t, glm::quat r) { return to_matrix(transform{t, r, glm::vec3(1)}); };
    const glm::quat bend = glm::angleAxis(-0.5f, glm::vec3(1, 0, 0));
    const skeleton s = skeleton::from_parents({{"hip", -1, at({0, 1, 0}, glm::identity<glm::quat>())},
                                               {"thigh", 0, at({0.1f, 0, 0}, glm::identity<glm::quat>())},
                                               {"knee", 1, at({0, -0.45f, 0}, bend)},
                                               {"ankle", 2, at({0, -0.42f, 0}, glm::identity<glm::quat>())}})
                           .value();
    // 37 characters (a multiple of no lane width), each a leg posed at random under its own root,
    // a target in comfortable reach of its hip and one in front of its ankle to aim at.
    constexpr std::size_t n = 37;
    kbtest::rng rng(9);
    std::vector<local_pose> poses(n, local_pose(s));
    std::vector<std::vector<glm::mat4>> model(n, std::vector<glm::mat4>(s.size()));
    std::vector<ik_buffers> characters;
    std::vector<two_bone_ik_chain> legs;
    std::vector<aim_ik_chain> feet;
    std::vector<glm::vec3> leg_targets, foot_targets, poles;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 1; j < s.size(); ++j) {
            transform t = poses[i].get(j);
            t.rotation = t.rotation * glm::angleAxis(rng.uniform(-0.3f, 0.3f), glm::normalize(rng.vec3(-1, 1) + glm::vec3(0.01f)));
            poses[i].set(j, t);
        }
        local_to_model_job hierarchy;
        hierarchy.skeleton = &s;
        hierarchy.input = &poses[i];
        const glm::mat4 world = at(rng.vec3(-3, 3), rng.rotation());
        hierarchy.root = &world;
        hierarchy.output = model[i];
        REQUIRE(hierarchy.run());
        characters.push_back({&s, model[i], &poses[i]});
        legs.push_back({i, 1, 2, 3, glm::vec3(0.0f), i % 3 == 0 ? 0.9f : 1.0f});
        feet.push_back({i, 3, glm::vec3(0, 0, 1), glm::vec3(0, 1, 0), glm::vec3(0.0f)});
        glm::vec3 dir = rng.vec3(-1, 1);
        dir = glm::normalize(dir + glm::vec3(0.01f));
        leg_targets.push_back(glm::vec3(model[i][1][3]) + rng.uniform(0.4f, 0.9f) * 0.87f * dir);
        foot_targets.push_back(glm::vec3(model[i][3][3]) + rng.uniform(0.5f, 3.0f) * glm::normalize(rng.vec3(-1, 1) + glm::vec3(0.01f)));
        poles.push_back(rng.vec3(-1, 1));
    }
    two_bone_ik_batch_job leg_job;
    leg_job.characters = characters;
    leg_job.chains = legs;
    leg_job.targets = leg_targets;
    leg_job.pole_vectors = poles;
    aim_ik_batch_job foot_job;
    foot_job.characters = characters;
    foot_job.chains = feet;
    foot_job.targets = foot_targets;
    foot_job.pole_vectors = poles;
    REQUIRE(leg_job.validate());
    REQUIRE(foot_job.validate());
    const std::vector<local_pose> before = poses;
    std::vector<local_pose> results[2];
    const simd_isa isas[] = {simd_isa::scalar, chosen};
    for (int k = 0; k < 2; ++k) {
        REQUIRE(force_kernel_isa(isas[k]));
        poses = before;
        REQUIRE(leg_job.run());
        REQUIRE(foot_job.run()); // (the feet turn after the legs: their rotations are the leg's end's)
        results[k] = poses;
    }
    REQUIRE(force_kernel_isa(chosen));
    float worst = 0.0f;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < s.size(); ++j) {
            const glm::quat a = results[0][i].get(j).rotation, b = results[1][i].get(j).rotation;
            const float sign = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z < 0.0f ? -1.0f : 1.0f;
            worst = std::max({worst, std::fabs(a.w - sign * b.w), std::fabs(a.x - sign * b.x), std::fabs(a.y - sign * b.y),
                              std::fabs(a.z - sign * b.z)});
        }
    MESSAGE(std::string(to_string(chosen)) << " against the scalar kernels: rotations within " << worst);
    CHECK(worst < 1e-5f);
}
