// The compiled kernels (keyblend::kernels, KEYBLEND_KERNELS_LIBRARY): every job runs on the kernels
// chosen at run time, and each instruction set's results equal the scalar reference's within the
// tolerance the header-only tests hold each lane path to. ctest runs this file once per
// instruction set (KEYBLEND_ISA), beside test_skin.cpp.
#include <keyblend/keyblend.hpp>

#include "helpers.hpp"

#include <doctest/doctest.h>

#include <glm/gtc/quaternion.hpp>

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
