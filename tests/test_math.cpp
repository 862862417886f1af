#include <keyblend/math.hpp>

#include "helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <cmath>

using namespace keyblend;
using kbtest::bit_equal;
using kbtest::max_abs_diff;

namespace {

glm::mat4 reference_trs(const glm::vec3& t, const glm::quat& r, const glm::vec3& s) {
    return glm::translate(glm::mat4(1.0f), t) * glm::mat4_cast(r) * glm::scale(glm::mat4(1.0f), s);
}

bool no_nan(const transform& t) {
    return is_finite(t.translation) && is_finite(t.rotation) && is_finite(t.scale);
}

bool is_unit(const glm::quat& q, float tol = 1e-6f) {
    return std::fabs(std::sqrt(quat_dot(q, q)) - 1.0f) <= tol;
}

glm::quat axis_angle(float radians, glm::vec3 axis) {
    return glm::angleAxis(radians, glm::normalize(axis));
}

// Double-precision slerp along the short path: the reference.
struct dquat {
    double w, x, y, z;
};
dquat reference_slerp(const glm::quat& a, const glm::quat& b, double t) {
    double bw = b.w, bx = b.x, by = b.y, bz = b.z;
    const double d = double(a.w) * bw + double(a.x) * bx + double(a.y) * by + double(a.z) * bz;
    if (d < 0) bw = -bw, bx = -bx, by = -by, bz = -bz;
    const double dw = a.w - bw, dx = a.x - bx, dy = a.y - by, dz = a.z - bz;
    const double sw = a.w + bw, sx = a.x + bx, sy = a.y + by, sz = a.z + bz;
    const double theta = 2.0 * std::atan2(std::sqrt(dw * dw + dx * dx + dy * dy + dz * dz),
                                          std::sqrt(sw * sw + sx * sx + sy * sy + sz * sz));
    double wa = 1.0 - t, wb = t;
    if (theta > 1e-12) {
        wa = std::sin((1.0 - t) * theta) / std::sin(theta);
        wb = std::sin(t * theta) / std::sin(theta);
    }
    dquat r{wa * a.w + wb * bw, wa * a.x + wb * bx, wa * a.y + wb * by, wa * a.z + wb * bz};
    const double n = std::sqrt(r.w * r.w + r.x * r.x + r.y * r.y + r.z * r.z);
    return {r.w / n, r.x / n, r.y / n, r.z / n};
}
double diff(const glm::quat& q, const dquat& r) {
    return std::max(std::max(std::fabs(q.w - r.w), std::fabs(q.x - r.x)),
                    std::max(std::fabs(q.y - r.y), std::fabs(q.z - r.z)));
}

} // namespace

TEST_CASE("make_quat sets components by name") {
    const glm::quat q = make_quat(0.5f, 0.1f, 0.2f, 0.3f);
    CHECK(q.w == 0.5f);
    CHECK(q.x == 0.1f);
    CHECK(q.y == 0.2f);
    CHECK(q.z == 0.3f);
}

TEST_CASE("transform defaults to identity and converts to T*R*S") {
    CHECK(to_matrix(transform{}) == glm::mat4(1.0f));
    CHECK(to_matrix(transform::identity()) == glm::mat4(1.0f));

    kbtest::rng rng(1);
    for (int i = 0; i < 200; ++i) {
        transform t;
        t.translation = rng.vec3(-10, 10);
        t.rotation = rng.rotation();
        t.scale = rng.vec3(0.1f, 3.0f);
        CHECK(max_abs_diff(to_matrix(t), reference_trs(t.translation, t.rotation, t.scale)) < 1e-5f);
    }
}

TEST_CASE("to_transform inverts to_matrix for rotation, translation and positive scale") {
    kbtest::rng rng(2);
    for (int i = 0; i < 500; ++i) {
        transform t;
        t.translation = rng.vec3(-10, 10);
        t.rotation = rng.rotation();
        t.scale = rng.vec3(0.05f, 4.0f);
        const glm::mat4 m = to_matrix(t);
        const transform back = to_transform(m);
        CHECK(back.translation == t.translation); // copied, exact
        CHECK(max_abs_diff(back.scale, t.scale) < 1e-5f);
        CHECK(kbtest::rotation_angle(back.rotation, t.rotation) < 1e-3);
        CHECK(back.rotation.w >= 0.0f);
        CHECK(is_unit(back.rotation));
        CHECK(max_abs_diff(to_matrix(back), m) < 2e-5f * 4.0f);
    }
}

TEST_CASE("to_transform: rotations of 180 degrees and the identity") {
    for (glm::vec3 axis : {glm::vec3(1, 0, 0), glm::vec3(0, 1, 0), glm::vec3(0, 0, 1),
                           glm::vec3(1, 1, 0), glm::vec3(1, -2, 3)}) {
        const glm::quat q = axis_angle(3.14159265f, axis);
        const transform back = to_transform(glm::mat4_cast(q));
        CHECK(kbtest::rotation_angle(back.rotation, q) < 1e-3);
        CHECK(max_abs_diff(back.scale, glm::vec3(1.0f)) < 1e-6f);
    }
    const transform id = to_transform(glm::mat4(1.0f));
    CHECK(bit_equal(id.rotation, glm::identity<glm::quat>()));
    CHECK(id.scale == glm::vec3(1.0f));
    CHECK(id.translation == glm::vec3(0.0f));
}

TEST_CASE("to_transform: a negative determinant (mirroring) negates scale.x, rotation stays proper") {
    SUBCASE("plain mirror in x") {
        const glm::mat4 m = glm::scale(glm::mat4(1.0f), glm::vec3(-1, 1, 1));
        const transform t = to_transform(m);
        CHECK(t.scale == glm::vec3(-1, 1, 1));
        CHECK(kbtest::rotation_angle(t.rotation, glm::identity<glm::quat>()) < 1e-6);
        CHECK(max_abs_diff(to_matrix(t), m) < 1e-6f);
    }
    SUBCASE("mirror in y or z becomes mirror in x plus a half turn; the matrix is reproduced") {
        for (glm::vec3 s : {glm::vec3(1, -2, 1), glm::vec3(2, 1, -0.5f), glm::vec3(-1, -1, -1)}) {
            const glm::mat4 m = reference_trs(glm::vec3(1, 2, 3), axis_angle(0.7f, glm::vec3(1, 2, 0)), s);
            const transform t = to_transform(m);
            CHECK(no_nan(t));
            CHECK(t.scale.x < 0.0f);
            CHECK(t.scale.y > 0.0f);
            CHECK(t.scale.z > 0.0f);
            CHECK(is_unit(t.rotation));
            CHECK(glm::determinant(glm::mat3_cast(t.rotation)) == doctest::Approx(1.0f).epsilon(1e-5));
            CHECK(max_abs_diff(to_matrix(t), m) < 1e-5f);
        }
    }
}

TEST_CASE("to_transform: zero scale gives zero, never NaN, and the matrix is reproduced") {
    const glm::quat r = axis_angle(0.9f, glm::vec3(0.3f, 1, -0.2f));
    for (glm::vec3 s : {glm::vec3(0, 1, 2), glm::vec3(1, 0, 2), glm::vec3(1, 2, 0),
                        glm::vec3(0, 0, 3), glm::vec3(0, 3, 0), glm::vec3(3, 0, 0),
                        glm::vec3(0, 0, 0)}) {
        CAPTURE(s);
        const glm::mat4 m = reference_trs(glm::vec3(4, 5, 6), r, s);
        const transform t = to_transform(m);
        CHECK(no_nan(t));
        CHECK(is_unit(t.rotation));
        CHECK(max_abs_diff(glm::abs(t.scale), s) < 1e-6f);
        CHECK(max_abs_diff(to_matrix(t), m) < 1e-5f);
        CHECK(t.translation == glm::vec3(4, 5, 6));
    }
    SUBCASE("the all-zero matrix") {
        const transform t = to_transform(glm::mat4(0.0f));
        CHECK(bit_equal(t.rotation, glm::identity<glm::quat>()));
        CHECK(t.scale == glm::vec3(0.0f));
        CHECK(t.translation == glm::vec3(0.0f));
    }
    SUBCASE("tiny scale keeps its rotation") {
        const glm::mat4 m = reference_trs(glm::vec3(0), r, glm::vec3(1e-6f));
        const transform t = to_transform(m);
        CHECK(kbtest::rotation_angle(t.rotation, r) < 1e-3);
        CHECK(max_abs_diff(t.scale, glm::vec3(1e-6f)) < 1e-10f);
    }
}

TEST_CASE("to_transform: shear is dropped as documented (x direction kept, axis lengths kept)") {
    glm::mat4 m(1.0f);
    m[1] = glm::vec4(0.5f, 1.0f, 0.0f, 0.0f); // y axis leans towards x
    m[2] = glm::vec4(0.0f, 0.3f, 2.0f, 0.0f); // z axis leans towards y
    m[3] = glm::vec4(1, 2, 3, 1);
    const transform t = to_transform(m);
    CHECK(no_nan(t));
    CHECK(is_unit(t.rotation));
    CHECK(t.scale.x == doctest::Approx(1.0f));
    CHECK(t.scale.y == doctest::Approx(std::sqrt(1.25f)));
    CHECK(t.scale.z == doctest::Approx(std::sqrt(4.09f)));
    const glm::mat3 r = glm::mat3_cast(t.rotation);
    CHECK(max_abs_diff(glm::vec3(r[0]), glm::vec3(1, 0, 0)) < 1e-6f); // x axis direction kept
    CHECK(max_abs_diff(glm::vec3(r[1]), glm::vec3(0, 1, 0)) < 1e-6f); // y: Gram-Schmidt
    CHECK(t.translation == glm::vec3(1, 2, 3));
    SUBCASE("degenerate: all columns parallel") {
        glm::mat4 p(0.0f);
        p[0] = p[1] = p[2] = glm::vec4(1, 1, 0, 0);
        p[3] = glm::vec4(0, 0, 0, 1);
        const transform tp = to_transform(p);
        CHECK(no_nan(tp));
        CHECK(is_unit(tp.rotation));
        CHECK(max_abs_diff(glm::mat3_cast(tp.rotation)[0], glm::normalize(glm::vec3(1, 1, 0))) < 1e-6f);
    }
}

TEST_CASE("quat_from_rotation matches mat3_cast for random rotations, w >= 0") {
    kbtest::rng rng(3);
    for (int i = 0; i < 1000; ++i) {
        const glm::quat q = rng.rotation();
        const glm::quat back = quat_from_rotation(glm::mat3_cast(q));
        CHECK(back.w >= 0.0f);
        CHECK(is_unit(back));
        CHECK(kbtest::rotation_angle(back, q) < 1e-3);
    }
}

TEST_CASE("normalize_or_identity never returns NaN") {
    CHECK(bit_equal(normalize_or_identity(make_quat(0, 0, 0, 0)), glm::identity<glm::quat>()));
    CHECK(bit_equal(normalize_or_identity(make_quat(NAN, 0, 0, 0)), glm::identity<glm::quat>()));
    CHECK(bit_equal(normalize_or_identity(make_quat(INFINITY, 0, 0, 0)), glm::identity<glm::quat>()));
    const glm::quat q = normalize_or_identity(make_quat(2, 0, 0, 0));
    CHECK(q.w == 1.0f);
}

TEST_CASE("slerp and nlerp are exact at t = 0 and t = 1") {
    kbtest::rng rng(4);
    for (int i = 0; i < 100; ++i) {
        const glm::quat a = rng.rotation();
        glm::quat b = rng.rotation();
        if (i % 2) b = -b; // both hemispheres
        CHECK(bit_equal(slerp(a, b, 0.0f), a));
        CHECK(bit_equal(slerp(a, b, 1.0f), b));
        CHECK(bit_equal(nlerp(a, b, 0.0f), a));
        CHECK(bit_equal(nlerp(a, b, 1.0f), b));
    }
}

TEST_CASE("slerp and nlerp take the short path (glm::mix does not)") {
    const glm::quat a = axis_angle(0.0f, glm::vec3(0, 0, 1));
    const glm::quat b = -axis_angle(glm::radians(20.0f), glm::vec3(0, 0, 1)); // same rotation as +b
    const glm::quat mid_expected = axis_angle(glm::radians(10.0f), glm::vec3(0, 0, 1));
    CHECK(kbtest::rotation_angle(slerp(a, b, 0.5f), mid_expected) < 1e-5);
    CHECK(kbtest::rotation_angle(nlerp(a, b, 0.5f), mid_expected) < 1e-5);
    // The pitfall we avoid: GLM's mix goes the 340-degree way round.
    CHECK(kbtest::rotation_angle(glm::mix(a, b, 0.5f), mid_expected) > 1.0);
}

TEST_CASE("slerp matches a double-precision reference, including nearly equal and opposite pairs") {
    kbtest::rng rng(5);
    double worst = 0.0, worst_unit = 0.0;
    auto check_pair = [&](const glm::quat& a, const glm::quat& b) {
        for (float t : {0.001f, 0.1f, 0.25f, 0.5f, 0.75f, 0.9f, 0.999f}) {
            const glm::quat s = slerp(a, b, t);
            worst = std::max(worst, diff(s, reference_slerp(a, b, t)));
            worst_unit = std::max(worst_unit, double(std::fabs(std::sqrt(quat_dot(s, s)) - 1.0f)));
        }
    };
    for (int i = 0; i < 2000; ++i) check_pair(rng.rotation(), rng.rotation());
    for (float angle : {1e-7f, 1e-6f, 1e-5f, 1e-4f, 1e-3f, 1e-2f}) {
        for (int i = 0; i < 100; ++i) {
            const glm::quat a = rng.rotation();
            const glm::quat d = axis_angle(angle, rng.vec3(-1, 1) + glm::vec3(0.01f));
            check_pair(a, a * d);    // nearly equal
            check_pair(a, -(a * d)); // nearly opposite 4-vectors: the same rotation
        }
    }
    // Nearly opposite rotations (180 degrees apart): the 4-vectors are perpendicular.
    for (int i = 0; i < 100; ++i) {
        const glm::quat a = rng.rotation();
        check_pair(a, a * axis_angle(3.14159f, rng.vec3(-1, 1) + glm::vec3(0.01f)));
    }
    MESSAGE("slerp vs double reference: max component error " << worst << ", max |1 - |q|| "
                                                                << worst_unit);
    CHECK(worst < 1e-6);
    CHECK(worst_unit < 3e-7);
}

TEST_CASE("nlerp is normalised and matches the double-precision normalised lerp") {
    kbtest::rng rng(6);
    for (int i = 0; i < 2000; ++i) {
        const glm::quat a = rng.rotation(), b = rng.rotation();
        const float t = rng.uniform(0.0f, 1.0f);
        const glm::quat n = nlerp(a, b, t);
        CHECK(std::fabs(std::sqrt(quat_dot(n, n)) - 1.0f) < 3e-7f);
        double s = quat_dot(a, b) < 0 ? -1.0 : 1.0;
        double w = a.w + (s * b.w - a.w) * t, x = a.x + (s * b.x - a.x) * t;
        double y = a.y + (s * b.y - a.y) * t, z = a.z + (s * b.z - a.z) * t;
        const double len = std::sqrt(w * w + x * x + y * y + z * z);
        CHECK(diff(n, dquat{w / len, x / len, y / len, z / len}) < 1e-6);
    }
}

TEST_CASE("lerp is exact at t = 0 and linear between") {
    const glm::vec3 a(-0.0f, 1.0f, 2.0f), b(4.0f, 5.0f, 6.0f);
    CHECK(bit_equal(lerp(a, b, 0.0f), a)); // keeps -0
    CHECK(lerp(a, b, 0.5f) == glm::vec3(2.0f, 3.0f, 4.0f));
    CHECK(lerp(1.0f, 3.0f, 0.25f) == 1.5f);
}

TEST_CASE("is_finite") {
    CHECK(is_finite(1.0f));
    CHECK_FALSE(is_finite(NAN));
    CHECK_FALSE(is_finite(glm::vec3(0, INFINITY, 0)));
    CHECK_FALSE(is_finite(make_quat(1, 0, NAN, 0)));
    glm::mat4 m(1.0f);
    CHECK(is_finite(m));
    m[2][3] = -INFINITY;
    CHECK_FALSE(is_finite(m));
}

TEST_CASE("is_finite and is_nan decide from the bits (they survive -ffast-math)") {
    // Values made from bit patterns at run time, so no compiler can fold the checks away.
    auto f = [](std::uint32_t bits) { float v; std::memcpy(&v, &bits, sizeof v); return v; };
    auto d = [](std::uint64_t bits) { double v; std::memcpy(&v, &bits, sizeof v); return v; };
    volatile std::uint32_t quiet_nan = 0x7fc00000u, neg_nan = 0xffc00001u, pos_inf = 0x7f800000u,
                           neg_inf = 0xff800000u, max = 0x7f7fffffu, denormal = 0x00000001u,
                           neg_zero = 0x80000000u, signalling = 0x7f800001u;
    CHECK_FALSE(is_finite(f(quiet_nan)));
    CHECK_FALSE(is_finite(f(neg_nan)));
    CHECK_FALSE(is_finite(f(signalling)));
    CHECK_FALSE(is_finite(f(pos_inf)));
    CHECK_FALSE(is_finite(f(neg_inf)));
    CHECK(is_finite(f(max)));
    CHECK(is_finite(f(denormal)));
    CHECK(is_finite(f(neg_zero)));
    CHECK(is_nan(f(quiet_nan)));
    CHECK(is_nan(f(neg_nan)));
    CHECK(is_nan(f(signalling)));
    CHECK_FALSE(is_nan(f(pos_inf)));
    CHECK_FALSE(is_nan(f(neg_inf)));
    CHECK_FALSE(is_nan(f(max)));
    volatile std::uint64_t d_nan = 0x7ff8000000000000u, d_inf = 0xfff0000000000000u,
                           d_max = 0x7fefffffffffffffu;
    CHECK_FALSE(is_finite(d(d_nan)));
    CHECK_FALSE(is_finite(d(d_inf)));
    CHECK(is_finite(d(d_max)));
    CHECK(is_nan(d(d_nan)));
    CHECK_FALSE(is_nan(d(d_inf)));
    // Arithmetic that overflows at run time.
    volatile float big = 3e38f;
    CHECK_FALSE(is_finite(big * 10.0f));
    CHECK_FALSE(is_finite(glm::vec4(1.0f, 2.0f, f(quiet_nan), 0.0f)));
}
