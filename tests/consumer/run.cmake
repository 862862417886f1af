# Builds and runs tests/consumer against keyblend in one MODE (see tests/consumer/CMakeLists.txt):
# installed / installed_core install keyblend into WORK_DIR first (installed_core from a
# configure-only build of keyblend without io), and check that asking the package for a component
# it lacks, or one that does not exist, fails with a message saying so; subdirectory and
# vendored_glm build keyblend as a subproject (no build type; subdirectory also configures a Debug
# build), its kernels optimised all the same, and vendored_glm checks that the parent's
# `cmake --install` installs the parent's files and none of keyblend's.
cmake_minimum_required(VERSION 3.16)

include("${CMAKE_CURRENT_LIST_DIR}/../run_command.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(consumer "${KEYBLEND_SOURCE_DIR}/tests/consumer")
set(args -S "${consumer}" -B "${WORK_DIR}/build" -G "${CMAKE_GENERATOR}"
         -DKEYBLEND_CONSUMER_MODE=${MODE} -DKEYBLEND_SOURCE_DIR=${KEYBLEND_SOURCE_DIR}
         -DKEYBLEND_CONSUMER_EXPECT_ASSIMP=${EXPECT_ASSIMP})

# expect_configure_failure(<message regex> <cmake args...>): configuring must fail, saying so.
function(expect_configure_failure expected)
  execute_process(COMMAND ${CMAKE_COMMAND} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "configuring succeeded, but should fail with '${expected}': ${ARGN}")
  endif()
  if(NOT "${out}${err}" MATCHES "${expected}")
    message(FATAL_ERROR "configuring failed without saying '${expected}':\n${out}${err}")
  endif()
  message(STATUS "fails as it should: ${expected}")
endfunction()

if(MODE MATCHES "^installed")
  set(prefix "${WORK_DIR}/prefix")
  if(MODE STREQUAL "installed")
    run(${CMAKE_COMMAND} --install "${KEYBLEND_BINARY_DIR}" --prefix "${prefix}")
  else()
    # Header-only without io: configuring and installing builds nothing.
    run(${CMAKE_COMMAND} -S "${KEYBLEND_SOURCE_DIR}" -B "${WORK_DIR}/keyblend-core" -G "${CMAKE_GENERATOR}"
        -DKEYBLEND_BUILD_IO=OFF -DKEYBLEND_BUILD_GLTF=OFF -DKEYBLEND_BUILD_KERNELS=OFF -DKEYBLEND_BUILD_TESTS=OFF -DKEYBLEND_BUILD_BENCH=OFF
        -DKEYBLEND_BUILD_EXAMPLES=OFF)
    run(${CMAKE_COMMAND} --install "${WORK_DIR}/keyblend-core" --prefix "${prefix}")
  endif()
  if(NOT EXISTS "${prefix}/include/keyblend/keyblend.hpp")
    message(FATAL_ERROR "the install did not put the headers in the prefix")
  endif()
  list(APPEND args "-DCMAKE_PREFIX_PATH=${prefix}")

  # A package asked for a component it does not have, or that does not exist, fails clearly.
  set(probe "${WORK_DIR}/probe")
  file(MAKE_DIRECTORY "${probe}")
  foreach(component nonsense io gltf kernels)
    if(component MATCHES "^(io|gltf|kernels)$" AND MODE STREQUAL "installed")
      continue()
    endif()
    file(WRITE "${probe}/${component}/CMakeLists.txt"
         "cmake_minimum_required(VERSION 3.16)\nproject(probe LANGUAGES CXX)\n"
         "find_package(keyblend CONFIG REQUIRED COMPONENTS ${component})\n")
    if(component MATCHES "^(io|gltf|kernels)$")
      set(expected "component '${component}' was not built into this installation of keyblend")
    else()
      set(expected "unknown component 'nonsense' \\(keyblend's components: kernels, io, assimp")
    endif()
    expect_configure_failure("${expected}" -S "${probe}/${component}" -B "${probe}/${component}/build"
                             -G "${CMAKE_GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}")
  endforeach()
endif()

# kernels_optimised(<build dir>): keyblend::kernels is compiled at -O2 there (configured with
# CMAKE_EXPORT_COMPILE_COMMANDS).
function(kernels_optimised dir)
  file(READ "${dir}/compile_commands.json" commands)
  if(NOT commands MATCHES "\"command\": \"[^\"]* -O2 [^\"]*src/kernels/kernels\\.cpp\"")
    message(FATAL_ERROR "keyblend::kernels is not compiled with -O2 in ${dir}, whose configuration asks for no optimisation level")
  endif()
endfunction()

if(MODE MATCHES "subdirectory|vendored_glm")
  list(APPEND args -DCMAKE_EXPORT_COMPILE_COMMANDS=ON) # (no build type)
endif()
run(${CMAKE_COMMAND} ${args})
if(MODE MATCHES "subdirectory|vendored_glm")
  kernels_optimised("${WORK_DIR}/build")
endif()
if(MODE STREQUAL "subdirectory") # and Debug's default flags, configured only
  run(${CMAKE_COMMAND} ${args} -B "${WORK_DIR}/debug" -DCMAKE_BUILD_TYPE=Debug)
  kernels_optimised("${WORK_DIR}/debug")
endif()
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
if(EXISTS "${WORK_DIR}/build/consumer_kernels")
  run("${WORK_DIR}/build/consumer_kernels")
elseif(NOT MODE STREQUAL "installed_core")
  message(FATAL_ERROR "keyblend::kernels was not there to link")
endif()
if(NOT MODE STREQUAL "installed_core")
  run("${WORK_DIR}/build/consumer_io")
endif()
if(EXISTS "${WORK_DIR}/build/consumer_gltf")
  run("${WORK_DIR}/build/consumer_gltf")
endif()

if(MODE STREQUAL "vendored_glm")
  # The parent's install: its own program, and nothing of keyblend's.
  run(${CMAKE_COMMAND} --install "${WORK_DIR}/build" --prefix "${WORK_DIR}/parent-prefix")
  file(GLOB_RECURSE installed RELATIVE "${WORK_DIR}/parent-prefix" "${WORK_DIR}/parent-prefix/*")
  if(NOT installed STREQUAL "bin/consumer")
    message(FATAL_ERROR "the parent's install holds more than its own program: ${installed}")
  endif()
endif()
if(EXPECT_ASSIMP AND NOT MODE STREQUAL "installed_core")
  run("${WORK_DIR}/build/consumer_assimp")
endif()
