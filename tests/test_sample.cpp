#include <keyblend/sample.hpp>

#include "helpers.hpp"

#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

using namespace keyblend;
using kbtest::bit_equal;
using kbtest::max_abs_diff;

namespace {

// The four matrix keys of the classic timed key-frame example (docs/classic.md; 16 floats each,
// D3D memory order, which is the same transform as a glm::mat4 holding them: docs/conventions.md).
struct classic_key {
    std::uint32_t time;
    float m[16];
};
const classic_key timed_example_keys[4] = {
    {0, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}},
    {400, {0.000796f, 1, 0, 0, -1, 0.000796f, 0, 0, 0, 0, 1, 0, 50, 0, 0, 1}},
    {800, {-0.999999f, 0.001593f, 0, 0, -0.001593f, -0.999999f, 0, 0, 0, 0, 1, 0, 25, 25, 0, 1}},
    {1200, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}},
};

matrix_track<std::uint32_t> timed_example_track(interpolation mode = interpolation::linear) {
    matrix_track<std::uint32_t> t(mode);
    for (const classic_key& k : timed_example_keys) t.push_back(k.time, glm::make_mat4(k.m));
    return t;
}

// The classic matrix-key sampling (docs/classic.md: linear scan for the last key at or before
// Time, Key2 = next or same, scalar = (Time - T1) / max(T2 - T1, 1), lerp = (K2 - K1) * s + K1),
// with the division done in float, as the example's program does.
glm::mat4 classic_matrix_sample(const matrix_track<std::uint32_t>& t, std::uint32_t time) {
    std::uint32_t key1 = 0;
    for (std::uint32_t i = 0; i < t.size(); ++i)
        if (time >= t.time(i)) key1 = i;
    const std::uint32_t key2 = key1 >= t.size() - 1 ? key1 : key1 + 1;
    std::uint32_t diff = t.time(key2) - t.time(key1);
    if (!diff) diff = 1;
    const float scalar = float(time - t.time(key1)) / float(diff);
    glm::mat4 m = t.value(key2) - t.value(key1);
    m *= scalar;
    m += t.value(key1);
    return m;
}

// The blended animation collection's Blend(): bound Time to the set's length (docs/classic.md).
std::uint32_t classic_blend_time(std::uint32_t time, std::uint32_t length, bool loop) {
    if (time > length) time = loop ? time % (length + 1) : length;
    return time;
}

// The animated object class (docs/classic.md): a matrix track's update with per-key deltas, and
// the animation set's time rule.
glm::mat4 classic_object_matrix(const matrix_track<std::uint32_t>& t, std::uint32_t time, bool smooth) {
    std::uint32_t k = 0;
    for (std::uint32_t i = 0; i < t.size(); ++i) {
        if (t.time(i) <= time)
            k = i;
        else
            break;
    }
    if (k == t.size() - 1 || !smooth) return t.value(k);
    const glm::mat4 inter = (t.value(k + 1) - t.value(k)) / float(t.time(k + 1) - t.time(k));
    return t.value(k) + inter * float(time - t.time(k));
}
glm::mat4 classic_object_set_update(const matrix_track<std::uint32_t>& t, std::uint32_t length,
                                 std::uint32_t time, bool loop, bool smooth) {
    if (length == 0) return classic_object_matrix(t, 0, false);
    if (time >= length && !loop) return classic_object_matrix(t, time, false);
    return classic_object_matrix(t, time % length, smooth);
}

template <class Time>
Time as_time(double v) {
    return static_cast<Time>(v);
}

} // namespace

TEST_CASE_TEMPLATE("sampling at a key's exact time returns that key bit for bit", Time, float,
                   double, std::uint32_t, std::int32_t, std::uint16_t) {
    kbtest::rng rng(10);
    track<glm::quat, Time> rot;
    track<glm::vec3, Time> pos;
    track<glm::mat4, Time> mat(interpolation::decomposed);
    for (int i = 0; i < 20; ++i) {
        const Time t = as_time<Time>(i * 7 + (i % 3));
        rot.push_back(t, rng.rotation());
        pos.push_back(t, rng.vec3(-5, 5));
        glm::mat4 m = glm::mat4_cast(rng.rotation());
        m[3] = glm::vec4(rng.vec3(-1, 1), 1);
        mat.push_back(t, m);
    }
    REQUIRE(validate_track(rot));
    track_cursor cursor;
    for (std::size_t i = 0; i < rot.size(); ++i) {
        CHECK(bit_equal(sample_track(rot, rot.time(i)), rot.value(i)));
        CHECK(bit_equal(sample_track(pos, pos.time(i)), pos.value(i)));
        CHECK(bit_equal(sample_track(mat, mat.time(i)), mat.value(i)));
        CHECK(bit_equal(sample_track(rot, rot.time(i), cursor), rot.value(i)));
        const key_interval k = locate_keys(rot, rot.time(i));
        CHECK(k.first == i);
        CHECK(k.alpha == 0.0f);
    }
}

TEST_CASE_TEMPLATE("before the first key the first, after the last the last", Time, float, double,
                   std::uint32_t, std::int32_t) {
    track<glm::vec3, Time> t{{as_time<Time>(10), glm::vec3(1)}, {as_time<Time>(20), glm::vec3(2)},
                             {as_time<Time>(30), glm::vec3(3)}};
    CHECK(sample_track(t, as_time<Time>(0)) == glm::vec3(1));
    CHECK(sample_track(t, as_time<Time>(9)) == glm::vec3(1));
    CHECK(sample_track(t, as_time<Time>(31)) == glm::vec3(3));
    CHECK(sample_track(t, std::numeric_limits<Time>::max()) == glm::vec3(3));
    CHECK(sample_track(t, as_time<Time>(15)) == glm::vec3(1.5f));
    CHECK(sample_track(t, as_time<Time>(25)) == glm::vec3(2.5f));
    const key_interval before = locate_keys(t, as_time<Time>(0));
    CHECK(before.first == 0);
    CHECK(before.second == 0);
    const key_interval after = locate_keys(t, as_time<Time>(99));
    CHECK(after.first == 2);
    CHECK(after.second == 2);
    const key_interval mid = locate_keys(t, as_time<Time>(25));
    CHECK(mid.first == 1);
    CHECK(mid.second == 2);
    CHECK(mid.alpha == 0.5f);
}

TEST_CASE("a single-key track returns that key at every time") {
    track<glm::quat> t{{0.5f, make_quat(0, 1, 0, 0)}};
    for (float time : {-1.0f, 0.0f, 0.5f, 2.0f})
        CHECK(bit_equal(sample_track(t, time), make_quat(0, 1, 0, 0)));
}

TEST_CASE("integer-tick tracks sample at fractional ticks") {
    const matrix_track<std::uint32_t> t = timed_example_track();
    const glm::mat4 m = sample_track(t, 1234.25); // past the end: the last key
    CHECK(m == glm::mat4(1.0f));
    const glm::mat4 q = sample_track(t, 100.5); // between key 0 and key 1
    CHECK(q[3][0] == doctest::Approx(50.0 * 100.5 / 400.0));
    const key_interval k = locate_keys(t, 399.75);
    CHECK(k.first == 0);
    CHECK(k.alpha == doctest::Approx(399.75 / 400.0));
    CHECK(locate_keys(t, 400.0).first == 1);
    CHECK(locate_keys(t, -3.5).first == 0);
}

TEST_CASE("step mode returns the key at or before the time") {
    track<float, int> t({{0, 1.0f}, {10, 2.0f}, {20, 3.0f}}, interpolation::step);
    CHECK(sample_track(t, 0) == 1.0f);
    CHECK(sample_track(t, 9) == 1.0f);
    CHECK(sample_track(t, 10) == 2.0f);
    CHECK(sample_track(t, 19.99) == 2.0f);
    CHECK(sample_track(t, 25) == 3.0f);
}

TEST_CASE("quaternion tracks slerp or nlerp between keys") {
    const glm::quat a = glm::identity<glm::quat>();
    const glm::quat b = glm::angleAxis(glm::radians(90.0f), glm::vec3(1, 0, 0));
    track<glm::quat> s{{0.0f, a}, {1.0f, b}};
    CHECK(kbtest::rotation_angle(sample_track(s, 0.5f), glm::angleAxis(glm::radians(45.0f),
                                                                         glm::vec3(1, 0, 0))) < 1e-5);
    s.set_mode(interpolation::nlerp);
    CHECK(kbtest::same_computation(sample_track(s, 0.3f), nlerp(a, b, 0.3f)));
}

TEST_CASE("binary search and cursor give identical results: forward, backward and jumps") {
    kbtest::rng rng(11);
    for (int trial = 0; trial < 20; ++trial) {
        track<glm::vec3, float> t;
        float time = rng.uniform(-1.0f, 1.0f);
        const int n = rng.integer(1, 200);
        for (int i = 0; i < n; ++i) {
            t.push_back(time, rng.vec3(-1, 1));
            time += rng.uniform(0.001f, 0.1f);
        }
        REQUIRE(validate_track(t));
        const float lo = t.first_time() - 0.5f, hi = t.last_time() + 0.5f;
        std::vector<float> queries;
        for (float q = lo; q < hi; q += 0.0137f) queries.push_back(q); // forward
        for (float q = hi; q > lo; q -= 0.0093f) queries.push_back(q); // backward
        for (int i = 0; i < 300; ++i) queries.push_back(rng.uniform(lo, hi)); // jumps
        for (std::size_t i = 0; i < t.size(); ++i) queries.push_back(t.time(i)); // exact keys
        queries.push_back(NAN);
        queries.push_back(INFINITY);
        queries.push_back(-INFINITY);
        track_cursor cursor;
        for (float q : queries) {
            const key_interval a = locate_keys(t, q);
            const key_interval b = locate_keys(t, q, cursor);
            CHECK(a.first == b.first);
            CHECK(a.second == b.second);
            CHECK(bit_equal(a.alpha, b.alpha));
            CHECK(cursor.index() == b.first);
            CHECK(a.alpha >= 0.0f);
            CHECK(a.alpha <= 1.0f);
        }
    }
}

TEST_CASE("a cursor can be reset and reused on another track") {
    track<float> a{{0.f, 0.f}, {1.f, 1.f}, {2.f, 2.f}, {3.f, 3.f}};
    track<float> b{{0.f, 10.f}, {1.f, 11.f}};
    track_cursor c;
    CHECK(sample_track(a, 2.5f, c) == 2.5f);
    CHECK(c.index() == 2);
    CHECK(sample_track(b, 0.5f, c) == 10.5f); // index 2 is out of b's range: clamped, no harm
    c.reset();
    CHECK(c.index() == 0);
}

TEST_CASE("NaN and infinite query times") {
    track<float> t{{0.f, 1.f}, {1.f, 2.f}};
    CHECK(sample_track(t, NAN) == 1.0f); // documented: NaN samples the first key
    CHECK(sample_track(t, INFINITY) == 2.0f);
    CHECK(sample_track(t, -INFINITY) == 1.0f);
}

TEST_CASE("sampling an empty track is a precondition failure (asserted in debug builds)") {
    track<glm::vec3> empty;
    CHECK_THROWS_AS(sample_track(empty, 0.0f), assertion_failure);
    const key_interval k = locate_keys(empty, 1.0f);
    CHECK(k.first == 0);
    CHECK(k.second == 0);
    track_cursor c;
    CHECK(locate_keys(empty, 1.0f, c).first == 0);
}

TEST_CASE("unsorted keys: sampling stays in bounds and returns a weight in [0, 1]") {
    track<float, int> t{{0, 0.f}, {50, 5.f}, {10, 1.f}, {40, 4.f}, {20, 2.f}, {20, 7.f}, {5, 9.f}};
    REQUIRE_FALSE(validate_track(t));
    track_cursor c;
    for (int q = -10; q <= 60; ++q) {
        const key_interval a = locate_keys(t, q);
        const key_interval b = locate_keys(t, q, c);
        for (const key_interval& k : {a, b}) {
            CHECK(k.first < t.size());
            CHECK(k.second < t.size());
            CHECK(k.alpha >= 0.0f);
            CHECK(k.alpha <= 1.0f);
        }
        const float v = sample_track(t, q);
        CHECK(v >= 0.0f);
        CHECK(v <= 9.0f);
    }
}

TEST_CASE_TEMPLATE("wrap_time: clamp, loop, loop_inclusive", Time, float, double, std::uint32_t,
                   std::int32_t, std::int64_t) {
    const Time L = as_time<Time>(1200);
    CHECK(wrap_time(as_time<Time>(0), L, wrap_mode::clamp) == as_time<Time>(0));
    CHECK(wrap_time(as_time<Time>(600), L, wrap_mode::clamp) == as_time<Time>(600));
    CHECK(wrap_time(as_time<Time>(1200), L, wrap_mode::clamp) == L);
    CHECK(wrap_time(as_time<Time>(5000), L, wrap_mode::clamp) == L);
    CHECK(wrap_time(as_time<Time>(600), L, wrap_mode::loop) == as_time<Time>(600));
    CHECK(wrap_time(as_time<Time>(1200), L, wrap_mode::loop) == as_time<Time>(0));
    CHECK(wrap_time(as_time<Time>(1300), L, wrap_mode::loop) == as_time<Time>(100));
    CHECK(wrap_time(as_time<Time>(1200), L, wrap_mode::loop_inclusive) == L);
    CHECK(wrap_time(as_time<Time>(1201), L, wrap_mode::loop_inclusive) == as_time<Time>(0));
    CHECK(wrap_time(as_time<Time>(2401), L, wrap_mode::loop_inclusive) == as_time<Time>(1200));
    CHECK(wrap_time(as_time<Time>(2402), L, wrap_mode::loop_inclusive) == as_time<Time>(0));
    for (wrap_mode mode : {wrap_mode::clamp, wrap_mode::loop, wrap_mode::loop_inclusive}) {
        // A zero-length clip shows its first frame.
        CHECK(wrap_time(as_time<Time>(0), as_time<Time>(0), mode) == as_time<Time>(0));
        CHECK(wrap_time(as_time<Time>(77), as_time<Time>(0), mode) == as_time<Time>(0));
    }
    if constexpr (std::is_signed<Time>::value) {
        CHECK(wrap_time(as_time<Time>(-1), L, wrap_mode::clamp) == as_time<Time>(0));
        CHECK(wrap_time(as_time<Time>(-1), L, wrap_mode::loop) == as_time<Time>(1199));
        CHECK(wrap_time(as_time<Time>(-1), L, wrap_mode::loop_inclusive) == as_time<Time>(1200));
        CHECK(wrap_time(as_time<Time>(5), as_time<Time>(-3), wrap_mode::loop) == as_time<Time>(0));
    }
}

TEST_CASE("wrap_time with floating time: fractions, NaN, infinities, rounding") {
    CHECK(wrap_time(2.75, 1.0, wrap_mode::loop) == 0.75);
    CHECK(wrap_time(-0.25, 1.0, wrap_mode::loop) == 0.75);
    CHECK(wrap_time(1.5, 1.0, wrap_mode::loop_inclusive) == 1.5);
    CHECK(wrap_time(2.5, 1.0, wrap_mode::loop_inclusive) == 0.5);
    CHECK(wrap_time(0.3f, 1.0f, wrap_mode::loop) == 0.3f); // in range: unchanged, bit for bit
    CHECK(wrap_time(NAN, 1.0f, wrap_mode::clamp) == 0.0f);
    CHECK(wrap_time(NAN, 1.0f, wrap_mode::loop) == 0.0f);
    CHECK(wrap_time(INFINITY, 1.0f, wrap_mode::clamp) == 1.0f);
    CHECK(wrap_time(-INFINITY, 1.0f, wrap_mode::clamp) == 0.0f);
    CHECK(wrap_time(INFINITY, 1.0f, wrap_mode::loop) == 0.0f);
    CHECK(wrap_time(0.5f, NAN, wrap_mode::loop) == 0.0f);
    CHECK(wrap_time(0.5f, INFINITY, wrap_mode::loop) == 0.0f);
    // The result is always in [0, period).
    kbtest::rng rng(12);
    for (int i = 0; i < 10000; ++i) {
        const float t = rng.uniform(-1e6f, 1e6f), l = rng.uniform(1e-3f, 100.0f);
        const float w = wrap_time(t, l, wrap_mode::loop);
        CHECK(w >= 0.0f);
        CHECK(w < l);
    }
    CHECK(wrap_time(-1e-9f, 1.0f, wrap_mode::loop) < 1.0f);
}

TEST_CASE("wrap_time at the integer type's limits") {
    const std::uint32_t max = std::numeric_limits<std::uint32_t>::max();
    CHECK(wrap_time(max, max, wrap_mode::loop_inclusive) == max);
    CHECK(wrap_time(max, max, wrap_mode::loop) == 0u);
    const std::int32_t imax = std::numeric_limits<std::int32_t>::max();
    CHECK(wrap_time(std::int32_t(-1), imax, wrap_mode::loop_inclusive) == imax);
    CHECK(wrap_time(std::numeric_limits<std::int32_t>::min(), imax, wrap_mode::loop_inclusive) == 0);
}

TEST_CASE("classic: the timed key-frame example's four matrix keys") {
    const matrix_track<std::uint32_t> t = timed_example_track();
    REQUIRE(validate_track(t));
    SUBCASE("hand-computed values") {
        const glm::mat4 m60 = sample_track(t, 60u); // key 0 -> key 1, scalar 0.15
        CHECK(m60[0][0] == doctest::Approx(1.0f + (0.000796f - 1.0f) * 0.15f));
        CHECK(m60[0][1] == doctest::Approx(0.15f));
        CHECK(m60[1][0] == doctest::Approx(-0.15f));
        CHECK(max_abs_diff(m60[3], glm::vec4(7.5f, 0, 0, 1)) < 1e-6f);
        CHECK(bit_equal(sample_track(t, 400u), glm::make_mat4(timed_example_keys[1].m)));
        const glm::mat4 m600 = sample_track(t, 600u);
        CHECK(m600[3] == glm::vec4(37.5f, 12.5f, 0, 1));
        const glm::mat4 m1000 = sample_track(t, 1000u);
        CHECK(m1000[3] == glm::vec4(12.5f, 12.5f, 0, 1));
        CHECK(m1000[0][0] == doctest::Approx(0.0000005f).epsilon(0.01));
        CHECK(sample_track(t, 1200u) == glm::mat4(1.0f));
        // The program's `elapsed %= (g_key_frames[3].time + 1)`.
        CHECK(wrap_time(1201u, t.last_time(), wrap_mode::loop_inclusive) == 0u);
        CHECK(wrap_time(1650u, t.last_time(), wrap_mode::loop_inclusive) == 449u);
    }
    SUBCASE("every millisecond of three loops matches the classic sampling") {
        track_cursor c;
        float worst = 0.0f;
        for (std::uint32_t elapsed = 0; elapsed < 3700; ++elapsed) {
            const std::uint32_t time = elapsed % (timed_example_keys[3].time + 1);
            const glm::mat4 expected = classic_matrix_sample(t, time);
            const std::uint32_t ours = wrap_time(elapsed, t.last_time(), wrap_mode::loop_inclusive);
            CHECK(ours == time);
            worst = std::max(worst, max_abs_diff(sample_track(t, ours, c), expected));
        }
        CHECK(worst < 1e-5f);
    }
}

TEST_CASE("classic: Blend()'s time rule, Time % (Length + 1) looping, clamp otherwise") {
    // A looping 1000 ms set plays times 0 to 1000 (the code's Time % (Length + 1), not the 0 to
    // 999 its prose promises); without looping a later time shows the last key frame.
    const std::uint32_t length = 1000;
    for (std::uint32_t time : {0u, 999u, 1000u, 1001u, 1500u, 2002u, 123456u}) {
        CHECK(wrap_time(time, length, wrap_mode::loop_inclusive) == classic_blend_time(time, length, true));
        CHECK(wrap_time(time, length, wrap_mode::clamp) == classic_blend_time(time, length, false));
    }
    CHECK(wrap_time(1500u, length, wrap_mode::loop_inclusive) == 499u);
    CHECK(wrap_time(1500u, length, wrap_mode::clamp) == 1000u);
    // The classic 50 ms update loop: 20 calls reach the end, then it holds (Loop = FALSE).
    const matrix_track<std::uint32_t> t = timed_example_track();
    for (std::uint32_t call = 0; call < 40; ++call) {
        const std::uint32_t time = call * 50u;
        const glm::mat4 ours = sample_track(t, wrap_time(time, t.last_time(), wrap_mode::clamp));
        CHECK(max_abs_diff(ours, classic_matrix_sample(t, classic_blend_time(time, 1200, false))) < 1e-5f);
        const glm::mat4 looped = sample_track(t, wrap_time(time, t.last_time(), wrap_mode::loop_inclusive));
        CHECK(max_abs_diff(looped, classic_matrix_sample(t, classic_blend_time(time, 1200, true))) < 1e-5f);
    }
}

TEST_CASE("classic: the object class's time % length, zero-length sets and stepped keys") {
    const matrix_track<std::uint32_t> smooth = timed_example_track(interpolation::linear);
    const matrix_track<std::uint32_t> stepped = timed_example_track(interpolation::step);
    const std::uint32_t length = smooth.last_time();
    for (std::uint32_t time = 0; time < 4000; time += 7) {
        for (bool loop : {false, true}) {
            const wrap_mode mode = loop ? wrap_mode::loop : wrap_mode::clamp;
            const std::uint32_t wrapped = wrap_time(time, length, mode);
            // Past the end without looping the object class samples "non-smooth": the last key either way.
            CHECK(max_abs_diff(sample_track(smooth, wrapped),
                               classic_object_set_update(smooth, length, time, loop, true)) < 1e-5f);
            CHECK(max_abs_diff(sample_track(stepped, wrapped),
                               classic_object_set_update(stepped, length, time, loop, false)) == 0.0f);
        }
    }
    CHECK(wrap_time(1300u, length, wrap_mode::loop) == 100u);
    CHECK(wrap_time(1200u, length, wrap_mode::loop) == 0u);
    SUBCASE("a zero-length set uses its first key") {
        matrix_track<std::uint32_t> zero;
        zero.push_back(0u, glm::make_mat4(timed_example_keys[1].m));
        for (std::uint32_t time : {0u, 1u, 500u, 99999u}) {
            for (wrap_mode mode : {wrap_mode::clamp, wrap_mode::loop, wrap_mode::loop_inclusive}) {
                const std::uint32_t w = wrap_time(time, zero.last_time(), mode);
                CHECK(w == 0u);
                CHECK(bit_equal(sample_track(zero, w), classic_object_set_update(zero, 0, time, true, true)));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Cubic splines (glTF 2.0's CUBICSPLINE) and cuts (repeated key times)
// ---------------------------------------------------------------------------------------------

namespace {

// glTF 2.0, Appendix C (cubic spline interpolation), written out in double from the
// specification's formula: with t_d = t_{k+1} - t_k and s = (t - t_k) / t_d,
//   p(s) = (2s^3 - 3s^2 + 1) v_k + t_d (s^3 - 2s^2 + s) b_k + (-2s^3 + 3s^2) v_{k+1} + t_d (s^3 - s^2) a_{k+1}
// where b_k is key k's out-tangent and a_{k+1} key k+1's in-tangent.
double spec_hermite(double vk, double bk, double vk1, double ak1, double td, double s) {
    const double s2 = s * s, s3 = s2 * s;
    return (2 * s3 - 3 * s2 + 1) * vk + td * (s3 - 2 * s2 + s) * bk + (-2 * s3 + 3 * s2) * vk1 +
           td * (s3 - s2) * ak1;
}

// The specification's value of a scalar cubic track at t (clamped to the ends; the last key whose
// time is <= t).
double spec_cubic(const track<float>& tr, double t) {
    const std::size_t n = tr.size();
    if (t <= tr.time(0)) return t < tr.time(0) ? tr.value(0) : tr.value(0);
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (t >= tr.time(i)) k = i;
    if (k + 1 >= n) return tr.value(n - 1);
    const double td = double(tr.time(k + 1)) - double(tr.time(k));
    return spec_hermite(tr.value(k), tr.out_tangents()[k], tr.value(k + 1), tr.in_tangents()[k + 1], td,
                        (t - tr.time(k)) / td);
}

} // namespace

TEST_CASE("cubic_spline: a scalar track follows the glTF formula at, between, before and after keys") {
    track<float> tr(interpolation::cubic_spline);
    tr.push_back(0.5f, -3.0f, 1.0f, 2.0f);
    tr.push_back(1.25f, 0.5f, -2.0f, 4.0f);
    tr.push_back(3.0f, 1.0f, 0.25f, -7.0f);
    tr.push_back(3.5f, 2.0f, 3.0f, 0.0f);
    REQUIRE(validate_track(tr));
    for (double t = -1.0; t <= 4.5; t += 1.0 / 64.0) {
        CAPTURE(t);
        CHECK(sample_track(tr, float(t)) == doctest::Approx(spec_cubic(tr, t)).epsilon(1e-6).scale(4));
    }
    for (std::size_t k = 0; k < tr.size(); ++k) CHECK(bit_equal(sample_track(tr, tr.time(k)), tr.value(k)));
}

TEST_CASE("cubic_spline: vec3 and quat tracks, component by component, rotations normalised without a short path") {
    track<glm::vec3> v(interpolation::cubic_spline);
    v.push_back(0.0f, glm::vec3(0), glm::vec3(1, 2, 3), glm::vec3(1, -1, 0.5f));
    v.push_back(2.0f, glm::vec3(-2, 0, 1), glm::vec3(4, 0, -1), glm::vec3(0));
    REQUIRE(validate_track(v));
    for (double t = 0.0; t <= 2.0; t += 0.125) {
        const double s = t / 2.0;
        const glm::vec3 got = sample_track(v, float(t));
        for (int c = 0; c < 3; ++c)
            CHECK(got[c] == doctest::Approx(spec_hermite(v.value(0)[c], v.out_tangents()[0][c], v.value(1)[c],
                                                         v.in_tangents()[1][c], 2.0, s))
                                .epsilon(1e-6));
    }
    // Two rotations more than 180 degrees apart in 4D (dot < 0): the spline interpolates the
    // components as stored, never flipping the second to the first's hemisphere (the
    // specification's rule), then normalises.
    const glm::quat a = glm::angleAxis(0.2f, glm::vec3(0, 1, 0));
    const glm::quat b = -glm::angleAxis(1.3f, glm::vec3(0, 1, 0));
    const glm::quat ta = make_quat(0.1f, 0.2f, -0.3f, 0.4f), tb = make_quat(-0.5f, 0.0f, 0.6f, 0.1f);
    track<glm::quat> q(interpolation::cubic_spline);
    q.push_back(1.0f, ta, a, ta);
    q.push_back(1.5f, tb, b, tb);
    REQUIRE(validate_track(q));
    for (double t = 1.0; t <= 1.5; t += 1.0 / 32.0) {
        const double s = (t - 1.0) / 0.5;
        double w = spec_hermite(a.w, ta.w, b.w, tb.w, 0.5, s), x = spec_hermite(a.x, ta.x, b.x, tb.x, 0.5, s),
               y = spec_hermite(a.y, ta.y, b.y, tb.y, 0.5, s), z = spec_hermite(a.z, ta.z, b.z, tb.z, 0.5, s);
        const double len = std::sqrt(w * w + x * x + y * y + z * z);
        const glm::quat got = sample_track(q, float(t));
        CAPTURE(t);
        CHECK(got.w == doctest::Approx(w / len).epsilon(1e-5));
        CHECK(got.x == doctest::Approx(x / len).epsilon(1e-5));
        CHECK(got.y == doctest::Approx(y / len).epsilon(1e-5));
        CHECK(got.z == doctest::Approx(z / len).epsilon(1e-5));
    }
}

TEST_CASE("cubic_spline: tangents scale with the key interval, in the track's own time unit") {
    // The same curve keyed in seconds and in milliseconds (tangents per millisecond are a
    // thousandth of those per second): the same values at the same instants.
    track<float> seconds(interpolation::cubic_spline), ms(interpolation::cubic_spline);
    seconds.push_back(0.0f, 0.0f, 0.0f, 3.0f);
    seconds.push_back(0.5f, -1.0f, 1.0f, 0.0f);
    ms.push_back(0.0f, 0.0f, 0.0f, 0.003f);
    ms.push_back(500.0f, -0.001f, 1.0f, 0.0f);
    for (float t = 0.0f; t <= 0.5f; t += 0.03125f)
        CHECK(sample_track(seconds, t) == doctest::Approx(sample_track(ms, t * 1000.0f)).epsilon(1e-6));
}

TEST_CASE("repeated key times are a cut: the first is approached, the last holds (binary search and cursor)") {
    const track<float> tr{{0.0f, 0.0f}, {1.0f, 10.0f}, {1.0f, 20.0f}, {1.0f, 30.0f}, {2.0f, 40.0f}};
    REQUIRE(validate_track(tr));
    track_cursor cursor;
    for (float t : {0.0f, 0.5f, 0.999f, 1.0f, 1.5f, 2.0f, 1.0f, 0.75f}) {
        const key_interval k = locate_keys(tr, t), kc = locate_keys(tr, t, cursor);
        CHECK(k.first == kc.first);
        CHECK(k.second == kc.second);
        CHECK(k.alpha == kc.alpha);
    }
    CHECK(sample_track(tr, 0.5f) == doctest::Approx(5.0f));
    CHECK(sample_track(tr, 0.999f) == doctest::Approx(9.99f)); // toward the first key at 1
    CHECK(sample_track(tr, 1.0f) == 30.0f);                    // the last key at 1 holds
    CHECK(sample_track(tr, 1.5f) == doctest::Approx(35.0f));
    const key_interval at = locate_keys(tr, 1.0f);
    CHECK(at.first == 3);
    CHECK(at.alpha == 0.0f);
    // In step mode too, and for a cubic spline (whose value at the cut is the last key's).
    track<float> step = tr;
    step.set_mode(interpolation::step);
    CHECK(sample_track(step, 0.999f) == 0.0f);
    CHECK(sample_track(step, 1.0f) == 30.0f);
    track<float> cubic(interpolation::cubic_spline);
    for (std::size_t k = 0; k < tr.size(); ++k) cubic.push_back(tr.time(k), 0.0f, tr.value(k), 0.0f);
    REQUIRE(validate_track(cubic));
    CHECK(sample_track(cubic, 1.0f) == 30.0f);
    CHECK(sample_track(cubic, 0.5f) == doctest::Approx(5.0f)); // (zero tangents: smoothstep at 0.5)
    CHECK(sample_track(cubic, 1.5f) == doctest::Approx(35.0f));
}
