# Builds or runs the Direct3D 9 tests (tests/d3d9) for ctest: cmake -DMODE=... -P run.cmake
#
#   MODE=build    cross-compiles tests/d3d9 with mingw-w64 into WORK_DIR/build
#   MODE=run      runs WORK_DIR/build/keyblend_d3d9_tests.exe under wine inside one xvfb-run,
#                 with TEST_ARGS (doctest filters); MODE=example runs the example for a few frames
#
# Other variables: SOURCE_DIR (keyblend), WORK_DIR, DATA_DIR (KEYBLEND_DATA_DIR), SNIPPETS (the
# guide's Direct3D 9 snippets as one file), HOST_INCLUDES
# (folders holding glm/ and doctest/, separated by |), GENERATOR, TIMEOUT (seconds for the run).
#
# A missing tool (compiler, zlib for mingw-w64, wine, xvfb-run) prints KEYBLEND-SKIP, which ctest
# reports as skipped; with KEYBLEND_REQUIRE_D3D9=1 in the environment (CI) it is a failure instead.
cmake_minimum_required(VERSION 3.16)

function(skip reason)
  if("$ENV{KEYBLEND_REQUIRE_D3D9}" STREQUAL "1")
    message(FATAL_ERROR "KEYBLEND_REQUIRE_D3D9=1, but ${reason}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "KEYBLEND-SKIP: ${reason}; the Direct3D 9 test is skipped")
endfunction()

include("${CMAKE_CURRENT_LIST_DIR}/../run_command.cmake")

set(build_dir "${WORK_DIR}/build")

if(MODE STREQUAL "build")
  find_program(MINGW_CXX x86_64-w64-mingw32-g++-posix)
  if(NOT MINGW_CXX)
    skip("x86_64-w64-mingw32-g++-posix was not found (Debian: g++-mingw-w64-x86-64-posix)")
    return()
  endif()
  file(WRITE "${WORK_DIR}/zlib_probe.cpp" "#include <zlib.h>\n")
  execute_process(COMMAND ${MINGW_CXX} -fsyntax-only "${WORK_DIR}/zlib_probe.cpp" RESULT_VARIABLE rc
                  OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    skip("mingw-w64 has no zlib.h (Debian: libz-mingw-w64-dev)")
    return()
  endif()
  if(IS_DIRECTORY "${DATA_DIR}")
    set(data_dir_wine "Z:${DATA_DIR}")
  else()
    set(data_dir_wine "Z:/nonexistent/keyblend-test-data") # the tests that need it report it missing
  endif()
  run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/d3d9" -B "${build_dir}" -G "${GENERATOR}"
      "-DCMAKE_TOOLCHAIN_FILE=${SOURCE_DIR}/cmake/mingw-w64-x86_64.cmake" -DCMAKE_BUILD_TYPE=Release
      "-DKEYBLEND_SOURCE_DIR=${SOURCE_DIR}" "-DKEYBLEND_HOST_INCLUDES=${HOST_INCLUDES}"
      "-DKEYBLEND_DATA_DIR_WINE=${data_dir_wine}" "-DKEYBLEND_SNIPPETS=${SNIPPETS}")
  run(${CMAKE_COMMAND} --build "${build_dir}" --parallel 2)
  return()
endif()

# MODE=run or MODE=example
foreach(tool wine wineboot wineserver xvfb-run)
  string(MAKE_C_IDENTIFIER "${tool}" var)
  find_program(${var}_path ${tool})
  if(NOT ${var}_path)
    skip("${tool} was not found (Debian: wine wine64 xvfb xauth libgl1-mesa-dri)")
    return()
  endif()
endforeach()
set(exe "${build_dir}/keyblend_d3d9_tests.exe")
if(NOT EXISTS "${exe}")
  skip("${exe} was not built (see the test d3d9_build)")
  return()
endif()

if(MODE STREQUAL "example")
  set(model "${DATA_DIR}/directx-sdk-legacy-samples/tiny.x")
  if(NOT EXISTS "${model}")
    if("$ENV{KEYBLEND_REQUIRE_DATA}" STREQUAL "1")
      message(FATAL_ERROR "required test data is missing: ${model}")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E echo "KEYBLEND-SKIP: ${model} not found; example not run")
    return()
  endif()
  set(command "${build_dir}/d3d9_skinning.exe" "Z:${model}" --frames 30)
else()
  set(command "${exe}" ${TEST_ARGS})
endif()

# One wine prefix per build folder, initialised once (wineboot -i takes a few seconds); every wine
# process of a run inside one X server; the program under `timeout`, so that a hang still ends the
# shell normally and xvfb-run stops its X server; wineserver -k at the end so no wine process
# outlives the test (ctest's RESOURCE_LOCK keeps the runs of one build folder apart).
if(NOT TIMEOUT)
  set(TIMEOUT 300)
endif()
set(prefix "${WORK_DIR}/wineprefix")
string(REPLACE ";" "' '" quoted "${command}")
set(script "if [ ! -f '${prefix}/system.reg' ]; then wineboot -i >/dev/null 2>&1 || true; fi
timeout --kill-after=10 ${TIMEOUT} wine '${quoted}'
rc=$?
wineserver -k >/dev/null 2>&1
exit $rc")
set(env ${CMAKE_COMMAND} -E env "WINEPREFIX=${prefix}" WINEDEBUG=-all "WINEDLLOVERRIDES=mscoree,mshtml=")
string(TIMESTAMP started "%s")
math(EXPR backstop "${TIMEOUT} + 60")
execute_process(
  COMMAND ${env} ${xvfb_run_path} -a -s "-screen 0 1024x768x24" sh -c "${script}"
  WORKING_DIRECTORY "${build_dir}"
  TIMEOUT ${backstop}
  RESULT_VARIABLE rc)
execute_process(COMMAND ${env} ${wineserver_path} -k OUTPUT_QUIET ERROR_QUIET) # after a backstop kill
string(TIMESTAMP finished "%s")
math(EXPR seconds "${finished} - ${started}")
execute_process(COMMAND ${CMAKE_COMMAND} -E echo "wine run: ${seconds} s (exit ${rc})")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the Windows program failed under wine (${rc}): ${command}")
endif()
