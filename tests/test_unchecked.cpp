// Built without KEYBLEND_ENABLE_ASSERTS (its own executable, so no inline function is compiled
// twice with different assertion settings): what broken preconditions do in a release build.
#include <keyblend/sample.hpp>

#include "helpers.hpp"

using namespace keyblend;

TEST_CASE("release build: sampling an empty track returns the value type's identity") {
    CHECK(sample_track(track<glm::vec3>{}, 1.0f) == glm::vec3(0.0f));
    CHECK(kbtest::bit_equal(sample_track(track<glm::quat>{}, 1.0f), glm::identity<glm::quat>()));
    CHECK(sample_track(track<glm::mat4, int>{}, 3) == glm::mat4(1.0f));
    track_cursor c;
    CHECK(sample_track(track<float>{}, 1.0f, c) == 0.0f);
}

TEST_CASE("release build: an interval from another (longer) track stays in bounds") {
    track<float> t{{0.f, 1.f}, {1.f, 2.f}};
    CHECK(interpolate_keys(t, key_interval{7, 8, 0.5f}) == 2.0f);
}
