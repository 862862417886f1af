# The loader under 16-byte GLM vectors gives what it gives under the default layout: each test
# binary writes what it loaded (tests/test_xfile.cpp, "xfile dump") and the two dumps must be equal.
#   cmake -DFIRST=<test binary> -DSECOND=<test binary> -DWORK_DIR=<dir> [-DEMULATOR=<a|b|c>] -P xfile_compare.cmake
# EMULATOR: a cross build's CMAKE_CROSSCOMPILING_EMULATOR, its list separated by '|', that runs
# the test binaries.
cmake_minimum_required(VERSION 3.16)
string(REPLACE "|" ";" EMULATOR "${EMULATOR}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
foreach(which FIRST SECOND)
  set(ENV{KEYBLEND_XFILE_DUMP} "${WORK_DIR}/${which}.txt")
  execute_process(COMMAND ${EMULATOR} "${${which}}" "--test-case=xfile dump*" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK_DIR}/${which}.txt")
    message(FATAL_ERROR "${${which}} did not write its dump (exit ${rc}):\n${out}")
  endif()
endforeach()
file(READ "${WORK_DIR}/FIRST.txt" first)
file(READ "${WORK_DIR}/SECOND.txt" second)
string(LENGTH "${first}" length)
if(length LESS 1000)
  message(FATAL_ERROR "the dump is too short to compare anything:\n${first}")
endif()
if(NOT first STREQUAL second)
  execute_process(COMMAND diff "${WORK_DIR}/FIRST.txt" "${WORK_DIR}/SECOND.txt" OUTPUT_VARIABLE d)
  string(SUBSTRING "${d}" 0 4000 d)
  message(FATAL_ERROR "${SECOND} loads other values than ${FIRST}:\n${d}")
endif()
message(STATUS "equal dumps: ${length} characters (${WORK_DIR})")
