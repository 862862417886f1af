#include <keyblend/key.hpp>

#include "helpers.hpp"

#include <cstring>

using namespace keyblend;
using kbtest::bit_equal;
using kbtest::max_abs_diff;

TEST_CASE("key holds a time and a value") {
    key<glm::vec3, std::uint32_t> k{400u, glm::vec3(1, 2, 3)};
    CHECK(k.time == 400u);
    CHECK(k.value == glm::vec3(1, 2, 3));
}

TEST_CASE("interpolation modes have names") {
    CHECK(std::strcmp(to_string(interpolation::step), "step") == 0);
    CHECK(std::strcmp(to_string(interpolation::linear), "linear") == 0);
    CHECK(std::strcmp(to_string(interpolation::nlerp), "nlerp") == 0);
    CHECK(std::strcmp(to_string(interpolation::decomposed), "decomposed") == 0);
}

TEST_CASE("which modes apply to which value types") {
    CHECK(key_traits<float>::supports(interpolation::linear));
    CHECK_FALSE(key_traits<float>::supports(interpolation::nlerp));
    CHECK_FALSE(key_traits<glm::vec3>::supports(interpolation::decomposed));
    CHECK(key_traits<glm::quat>::supports(interpolation::nlerp));
    CHECK_FALSE(key_traits<glm::quat>::supports(interpolation::decomposed));
    CHECK(key_traits<glm::mat4>::supports(interpolation::decomposed));
    CHECK_FALSE(key_traits<glm::mat4>::supports(interpolation::nlerp));
}

TEST_CASE("identity per value type") {
    CHECK(key_traits<float>::identity() == 0.0f);
    CHECK(key_traits<glm::vec3>::identity() == glm::vec3(0.0f));
    CHECK(bit_equal(key_traits<glm::quat>::identity(), glm::identity<glm::quat>()));
    CHECK(key_traits<glm::mat4>::identity() == glm::mat4(1.0f));
}

TEST_CASE("vectors and floats lerp: step holds the earlier value") {
    using vt = key_traits<glm::vec3>;
    const glm::vec3 a(0, 0, 0), b(10, 20, 30);
    CHECK(vt::interpolate(a, b, 0.25f, interpolation::linear) == glm::vec3(2.5f, 5.0f, 7.5f));
    CHECK(vt::interpolate(a, b, 0.99f, interpolation::step) == a);
    CHECK(key_traits<float>::interpolate(1.0f, 2.0f, 0.5f, interpolation::linear) == 1.5f);
    CHECK(key_traits<float>::interpolate(1.0f, 2.0f, 0.5f, interpolation::step) == 1.0f);
}

TEST_CASE("quaternions slerp (linear) or nlerp, both on the short path") {
    using qt = key_traits<glm::quat>;
    const glm::quat a = glm::identity<glm::quat>();
    const glm::quat b = -glm::angleAxis(glm::radians(120.0f), glm::vec3(0, 1, 0));
    const glm::quat s = qt::interpolate(a, b, 0.25f, interpolation::linear);
    const glm::quat n = qt::interpolate(a, b, 0.25f, interpolation::nlerp);
    CHECK(kbtest::rotation_angle(s, a) == doctest::Approx(glm::radians(30.0f)).epsilon(1e-4));
    // nlerp's angle at t = 0.25 is not 30 degrees, but it is on the same arc and short.
    CHECK(kbtest::rotation_angle(n, a) < glm::radians(30.0f));
    CHECK(kbtest::rotation_angle(n, a) > glm::radians(20.0f));
    CHECK(bit_equal(qt::interpolate(a, b, 0.7f, interpolation::step), a));
    CHECK(bit_equal(qt::interpolate(a, b, 0.0f, interpolation::linear), a));
}

TEST_CASE("matrices: element-wise lerp shrinks a bone between rotations, decomposed keeps it rigid") {
    using mt = key_traits<glm::mat4>;
    glm::mat4 a(1.0f);
    a[3] = glm::vec4(1, 2, 3, 1);
    glm::mat4 b = glm::mat4_cast(glm::angleAxis(glm::radians(90.0f), glm::vec3(0, 0, 1)));
    b[3] = glm::vec4(3, 2, 1, 1);

    const glm::mat4 e = mt::interpolate(a, b, 0.5f, interpolation::linear);
    CHECK(glm::length(glm::vec3(e[0])) == doctest::Approx(std::sqrt(0.5f))); // the D3DX behaviour
    CHECK(e[3] == glm::vec4(2, 2, 2, 1));

    const glm::mat4 d = mt::interpolate(a, b, 0.5f, interpolation::decomposed);
    for (int c = 0; c < 3; ++c) CHECK(glm::length(glm::vec3(d[c])) == doctest::Approx(1.0f).epsilon(1e-6));
    CHECK(std::fabs(glm::dot(glm::vec3(d[0]), glm::vec3(d[1]))) < 1e-6f);
    CHECK(max_abs_diff(glm::vec3(d[0]), glm::normalize(glm::vec3(1, 1, 0))) < 1e-6f);
    CHECK(d[3] == glm::vec4(2, 2, 2, 1));

    CHECK(bit_equal(mt::interpolate(a, b, 0.0f, interpolation::decomposed), a));
    CHECK(bit_equal(mt::interpolate(a, b, 0.6f, interpolation::step), a));
    SUBCASE("decomposed interpolates scale too") {
        glm::mat4 s2(2.0f);
        s2[3][3] = 1.0f;
        const glm::mat4 m = mt::interpolate(glm::mat4(1.0f), s2, 0.5f, interpolation::decomposed);
        CHECK(max_abs_diff(m, glm::mat4(glm::vec4(1.5f, 0, 0, 0), glm::vec4(0, 1.5f, 0, 0),
                                        glm::vec4(0, 0, 1.5f, 0), glm::vec4(0, 0, 0, 1))) < 1e-6f);
    }
}

TEST_CASE("finiteness per value type") {
    CHECK(key_traits<glm::vec3>::is_valid(glm::vec3(1)));
    CHECK_FALSE(key_traits<glm::vec3>::is_valid(glm::vec3(NAN)));
    CHECK_FALSE(key_traits<float>::is_valid(INFINITY));
    CHECK_FALSE(key_traits<glm::quat>::is_valid(make_quat(NAN, 0, 0, 0)));
    CHECK_FALSE(key_traits<glm::mat4>::is_valid(glm::mat4(NAN)));
}
