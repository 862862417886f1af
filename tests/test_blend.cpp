#include <keyblend/blend.hpp>

#include "helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::bit_equal;
using kbtest::max_abs_diff;

namespace {

glm::mat4 trs(glm::vec3 t, glm::quat r, glm::vec3 s) { return to_matrix(transform{t, r, s}); }

// pelvis > (thigh_l > shin_l), (thigh_r > shin_r), spine > (arm_l > hand_l), (arm_r > hand_r)
skeleton biped() {
    kbtest::rng rng(21);
    const char* names[] = {"pelvis", "thigh_l", "shin_l", "thigh_r", "shin_r", "spine",
                           "arm_l",  "hand_l",  "arm_r",  "hand_r"};
    const joint_index parents[] = {-1, 0, 1, 0, 3, 0, 5, 6, 5, 8};
    std::vector<joint_desc> in;
    for (int i = 0; i < 10; ++i) {
        glm::mat4 m = trs(rng.vec3(-1, 1), rng.rotation(), glm::vec3(1));
        m[1][2] = -0.0f; // a negative zero, as .X files write "-0.000000"
        in.push_back({names[i], parents[i], m});
    }
    return skeleton::from_parents(in).value();
}

clip rotating_clip(const skeleton& s, const std::vector<std::size_t>& joints, std::uint32_t seed) {
    kbtest::rng rng(seed);
    clip c;
    for (std::size_t j : joints) {
        channel ch;
        ch.joint = j;
        for (int k = 0; k <= 4; ++k) ch.rotation.push_back(float(k * 100), rng.rotation());
        if (j % 2) ch.translation.push_back(0.0f, rng.vec3(-1, 1));
        c.channels.push_back(ch);
    }
    c.duration = last_key_time(c);
    REQUIRE(validate_clip(c, s));
    return c;
}

} // namespace

TEST_CASE("matrix additive: weight 0 leaves the bind pose bit-exact") {
    const skeleton s = biped();
    clip c = rotating_clip(s, {1, 2, 6}, 1);
    // Even a poisoned key cannot leak through a zero weight.
    c.channels[0].rotation.value(0) = make_quat(NAN, 0, 0, 0);
    std::vector<glm::mat4> local;
    reset_to_bind(s, local);
    REQUIRE(blend_matrix_additive(c, s, 150.0f, 0.0f, local));
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(local[j], s.bind_local()[j]));
}

TEST_CASE("matrix additive: one set at weight 1 reproduces that set's pose") {
    const skeleton s = biped();
    const clip c = rotating_clip(s, {1, 2, 3, 4}, 2);
    for (float t : {0.0f, 37.5f, 100.0f, 333.25f, 400.0f, 999.0f}) {
        std::vector<glm::mat4> local, expect;
        reset_to_bind(s, local);
        REQUIRE(blend_matrix_additive(c, s, t, 1.0f, local));
        REQUIRE(sample_local_matrices(c, s, t, expect));
        for (std::size_t j = 0; j < s.size(); ++j) CHECK(max_abs_diff(local[j], expect[j]) < 1e-6f);
        // Joints the set does not animate stay bit-exact.
        for (std::size_t j : {0u, 5u, 6u, 7u, 8u, 9u}) CHECK(bit_equal(local[j], s.bind_local()[j]));
    }
}

TEST_CASE("matrix additive: exactly the seed's arithmetic, weights used as given") {
    const skeleton s = biped();
    const clip a = rotating_clip(s, {1, 2, 6}, 3);
    const clip b = rotating_clip(s, {2, 6, 7}, 4);
    for (float wa : {0.25f, 1.0f, -0.5f, 2.0f})
        for (float wb : {0.75f, 0.5f}) {
            std::vector<glm::mat4> local;
            reset_to_bind(s, local);
            REQUIRE(blend_matrix_additive(a, s, 120.0f, wa, local));
            REQUIRE(blend_matrix_additive(b, s, 120.0f, wb, local));
            // The seed, transcribed: Transformation = matOriginal; for each set, for each animation,
            // matDiff = matAnimation - matOriginal; matDiff *= Blend; Transformation += matDiff.
            std::vector<glm::mat4> seed = s.bind_local();
            for (const auto& [c, w] : {std::pair<const clip*, float>{&a, wa}, {&b, wb}})
                for (const channel& ch : c->channels) {
                    glm::mat4 diff = sample_channel_matrix(ch, 120.0f, s.bind_transforms()[ch.joint],
                                                           s.bind_local()[ch.joint]) -
                                     s.bind_local()[ch.joint];
                    diff *= w;
                    seed[ch.joint] += diff;
                }
            for (std::size_t j = 0; j < s.size(); ++j) CHECK(max_abs_diff(local[j], seed[j]) < 1e-6f);
        }
}

TEST_CASE("matrix additive: bad weights and sizes are reported and change nothing") {
    const skeleton s = biped();
    const clip c = rotating_clip(s, {1}, 5);
    std::vector<glm::mat4> local;
    reset_to_bind(s, local);
    for (float w : {NAN, INFINITY, -INFINITY}) {
        const status st = blend_matrix_additive(c, s, 0.0f, w, local);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::non_finite);
    }
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(local[j], s.bind_local()[j]));
    std::vector<glm::mat4> small(3, glm::mat4(1));
    const status st = blend_matrix_additive(c, s, 0.0f, 1.0f, small);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::size_mismatch);
    CHECK(small == std::vector<glm::mat4>(3, glm::mat4(1)));
}

TEST_CASE("matrix additive: a channel out of range is reported, the others applied") {
    const skeleton s = biped();
    clip c = rotating_clip(s, {1}, 6);
    channel bad;
    bad.joint = 10;
    bad.translation.push_back(0.0f, glm::vec3(1));
    c.channels.insert(c.channels.begin(), bad);
    std::vector<glm::mat4> local;
    reset_to_bind(s, local);
    const status st = blend_matrix_additive(c, s, 50.0f, 1.0f, local);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::out_of_range);
    CHECK(st.error().index == 0);
    CHECK_FALSE(bit_equal(local[1], s.bind_local()[1]));
}

TEST_CASE("the seed's scenario: Walk on the legs and Shoot on the arms, both at weight 1") {
    const skeleton s = biped();
    const clip walk = rotating_clip(s, {1, 2, 3, 4}, 7);
    const clip shoot = rotating_clip(s, {6, 7, 8, 9}, 8);
    for (float t : {0.0f, 50.0f, 250.5f, 400.0f}) {
        std::vector<glm::mat4> local, model, walk_local, shoot_local;
        reset_to_bind(s, local);
        REQUIRE(blend_matrix_additive(walk, s, t, 1.0f, local));
        REQUIRE(blend_matrix_additive(shoot, s, t, 1.0f, local));
        local_to_model(s, local, model);
        REQUIRE(sample_local_matrices(walk, s, t, walk_local));
        REQUIRE(sample_local_matrices(shoot, s, t, shoot_local));
        for (std::size_t j : {1u, 2u, 3u, 4u}) CHECK(max_abs_diff(local[j], walk_local[j]) < 1e-6f);
        for (std::size_t j : {6u, 7u, 8u, 9u}) CHECK(max_abs_diff(local[j], shoot_local[j]) < 1e-6f);
        for (std::size_t j : {0u, 5u}) CHECK(bit_equal(local[j], s.bind_local()[j]));
        // And in model space each limb is where its own set puts it.
        std::vector<glm::mat4> walk_model, shoot_model;
        local_to_model(s, walk_local, walk_model);
        local_to_model(s, shoot_local, shoot_model);
        for (std::size_t j : {1u, 2u, 3u, 4u}) CHECK(max_abs_diff(model[j], walk_model[j]) < 1e-5f);
        for (std::size_t j : {6u, 7u, 8u, 9u}) CHECK(max_abs_diff(model[j], shoot_model[j]) < 1e-5f);
    }
}
