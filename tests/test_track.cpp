#include <keyblend/track.hpp>

#include "helpers.hpp"

#include <cstdint>
#include <string>

using namespace keyblend;

TEST_CASE("a track stores keys in the order given") {
    track<glm::vec3, std::uint32_t> t{{0u, glm::vec3(0)}, {400u, glm::vec3(1)}, {800u, glm::vec3(2)}};
    REQUIRE(t.size() == 3);
    CHECK_FALSE(t.empty());
    CHECK(t.time(1) == 400u);
    CHECK(t.value(2) == glm::vec3(2));
    CHECK(t[1].time == 400u);
    CHECK(t[1].value == glm::vec3(1));
    CHECK(t.first_time() == 0u);
    CHECK(t.last_time() == 800u);
    CHECK(t.mode() == interpolation::linear);
    CHECK(t.times().size() == 3);
    CHECK(t.values().size() == 3);
    t.push_back(1200u, glm::vec3(3));
    t.push_back({1600u, glm::vec3(4)});
    CHECK(t.size() == 5);
    t.set_mode(interpolation::step);
    CHECK(t.mode() == interpolation::step);
    t.clear();
    CHECK(t.empty());
    CHECK(t.first_time() == 0u);
    CHECK(t.last_time() == 0u);

    std::vector<key<float, double>> keys{{0.0, 1.0f}, {0.5, 2.0f}};
    track<float, double> from_vector(keys, interpolation::step);
    CHECK(from_vector.size() == 2);
    CHECK(from_vector.mode() == interpolation::step);
}

TEST_CASE("track::assign replaces the keys, tangents included, with vectors of times and values") {
    track<glm::vec3> t(interpolation::cubic_spline);
    t.push_back(0.0f, glm::vec3(1), glm::vec3(2), glm::vec3(3));
    const std::vector<float> times = {0.5f, 1.0f, 1.0f};
    const std::vector<glm::vec3> values = {glm::vec3(4), glm::vec3(5), glm::vec3(6)};
    t.assign(times, values);
    REQUIRE(t.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(t.time(i) == times[i]);
        CHECK(t.value(i) == values[i]);
    }
    CHECK(t.in_tangents().empty());
    CHECK(t.out_tangents().empty());
    CHECK(t.mode() == interpolation::cubic_spline); // (so validate_track reports the missing tangents)
    CHECK(validate_track(t).error().code == errc::size_mismatch);
    t.set_mode(interpolation::linear);
    CHECK(validate_track(t));
    // Vectors of different sizes: the longer cut to the shorter's size.
    t.assign({0.0f, 1.0f}, values);
    REQUIRE(t.size() == 2);
    CHECK(t.values().size() == 2);
    CHECK(t.value(1) == glm::vec3(5));
    t.assign(times, {});
    CHECK(t.empty());
    CHECK(t.values().empty());
}

TEST_CASE("validate_track accepts a good track of each value type") {
    CHECK(validate_track(track<float>{{0.0f, 1.0f}, {1.0f, 2.0f}}));
    CHECK(validate_track(track<glm::vec3, int>{{-5, glm::vec3(1)}, {5, glm::vec3(2)}}));
    CHECK(validate_track(track<glm::quat, double>({{0.0, glm::identity<glm::quat>()}}, interpolation::nlerp)));
    CHECK(validate_track(track<glm::mat4, std::uint32_t>({{0u, glm::mat4(1)}, {10u, glm::mat4(2)}},
                                                         interpolation::decomposed)));
}

TEST_CASE("validate_track reports each problem with the key index") {
    SUBCASE("empty") {
        const status s = validate_track(track<glm::vec3>{});
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::empty);
        CHECK(s.error().message.find("no keys") != std::string::npos);
    }
    SUBCASE("unsorted") {
        const status s = validate_track(track<float, std::uint32_t>{{0u, 0.f}, {400u, 1.f}, {200u, 2.f}});
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::unsorted);
        CHECK(s.error().index == 2);
        CHECK(s.error().message == "float track key 2: time 200 is before key 1's time 400");
    }
    SUBCASE("a repeated time is a cut, and valid") {
        CHECK(validate_track(track<float>{{0.f, 0.f}, {0.5f, 1.f}, {0.5f, 2.f}}));
    }
    SUBCASE("cubic spline tangents: one in and one out per key, finite; none in other modes") {
        track<float> t(interpolation::cubic_spline);
        t.push_back(0.0f, 0.0f, 1.0f, 0.0f);
        t.push_back(1.0f, 0.0f, 2.0f, 0.0f);
        CHECK(validate_track(t));
        t.push_back(2.0f, 3.0f); // a key without tangents
        status s = validate_track(t);
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::size_mismatch);
        t.clear();
        t.push_back(0.0f, NAN, 1.0f, 0.0f);
        s = validate_track(t);
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::non_finite);
        CHECK(s.error().message.find("tangent") != std::string::npos);
        track<float> linear;
        linear.push_back(0.0f, 0.0f, 1.0f, 0.0f);
        s = validate_track(linear);
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::size_mismatch);
        CHECK_FALSE(validate_track(track<glm::mat4>({{0.0f, glm::mat4(1)}}, interpolation::cubic_spline)));
    }
    SUBCASE("NaN time") {
        const status s = validate_track(track<float>{{0.f, 0.f}, {NAN, 1.f}});
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::non_finite);
        CHECK(s.error().index == 1);
        CHECK(s.error().message.find("time") != std::string::npos);
    }
    SUBCASE("NaN and infinite values") {
        const status s = validate_track(track<glm::vec3>{{0.f, glm::vec3(0)}, {1.f, glm::vec3(0, NAN, 0)}});
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::non_finite);
        CHECK(s.error().index == 1);
        glm::mat4 m(1.0f);
        m[3][0] = INFINITY;
        const status sm = validate_track(track<glm::mat4>{{0.f, m}});
        REQUIRE_FALSE(sm);
        CHECK(sm.error().code == errc::non_finite);
        CHECK(sm.error().index == 0);
    }
    SUBCASE("non-unit quaternion") {
        const status s = validate_track(
            track<glm::quat>{{0.f, glm::identity<glm::quat>()}, {1.f, make_quat(0.9f, 0, 0, 0)}});
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::not_normalized);
        CHECK(s.error().index == 1);
        CHECK(s.error().message.find("0.9") != std::string::npos);
        // Within the documented tolerance is fine (exporters write 6 decimals).
        CHECK(validate_track(track<glm::quat>{{0.f, make_quat(0.9999f, 0, 0, 0)}}));
    }
    SUBCASE("a mode that does not apply to the value type") {
        const status s = validate_track(track<glm::vec3>({{0.f, glm::vec3(0)}}, interpolation::nlerp));
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::unsupported);
        const status m = validate_track(track<glm::quat>({{0.f, glm::identity<glm::quat>()}},
                                                          interpolation::decomposed));
        CHECK(m.error().code == errc::unsupported);
    }
}
