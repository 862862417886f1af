#include <keyblend/error.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace keyblend;

TEST_CASE("result holds a value or an error") {
    result<int> ok = 7;
    CHECK(ok.has_value());
    CHECK(static_cast<bool>(ok));
    CHECK(*ok == 7);
    CHECK(ok.value() == 7);

    result<int> bad = error{errc::not_found, "no clip named 'Run'", 3};
    CHECK_FALSE(bad.has_value());
    CHECK(bad.error().code == errc::not_found);
    CHECK(bad.error().index == 3);
    CHECK(bad.error().message == "no clip named 'Run'");
    CHECK_THROWS_AS(bad.value(), bad_result_access);
    try {
        (void)bad.value();
    } catch (const bad_result_access& e) {
        CHECK(std::string(e.what()) == "no clip named 'Run'");
        CHECK(e.error().code == errc::not_found);
    }
}

TEST_CASE("result moves its value out") {
    result<std::string> r = std::string(100, 'x');
    std::string s = std::move(r).value();
    CHECK(s.size() == 100);
}

TEST_CASE("status is success or an error") {
    status ok;
    CHECK(ok.has_value());
    CHECK_NOTHROW(ok.value());
    status bad = impl::make_error(errc::unsorted, "key 2 is before key 1", 2);
    CHECK_FALSE(bad);
    CHECK(bad.error().code == errc::unsorted);
    CHECK(bad.error().index == 2);
    CHECK_THROWS_AS(bad.value(), bad_result_access);
    CHECK(impl::make_error(errc::empty, "x").index == error::no_index);
}

TEST_CASE("KEYBLEND_ASSERT throws assertion_failure when asserts are enabled (as in the tests)") {
    CHECK_NOTHROW(KEYBLEND_ASSERT(1 + 1 == 2, "arithmetic"));
    CHECK_THROWS_AS(KEYBLEND_ASSERT(1 + 1 == 3, "arithmetic"), assertion_failure);
    try {
        KEYBLEND_ASSERT(false, "the message");
    } catch (const assertion_failure& e) {
        CHECK(std::string(e.what()).find("the message") != std::string::npos);
        CHECK(std::string(e.what()).find("test_error.cpp") != std::string::npos);
    }
}
