# Reports a part that could not be tested on this machine (MESSAGE): as skipped (KEYBLEND-SKIP), or
# as a failure when KEYBLEND_REQUIRE_DATA=1 requires every data test to run (CI).
if("$ENV{KEYBLEND_REQUIRE_DATA}" STREQUAL "1")
  message(FATAL_ERROR "${MESSAGE} (KEYBLEND_REQUIRE_DATA=1 requires it)")
endif()
message("KEYBLEND-SKIP: ${MESSAGE}; test skipped")
