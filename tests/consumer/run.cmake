# Builds and runs tests/consumer against keyblend, through add_subdirectory (MODE=subdirectory)
# or through an installed package (MODE=installed: cmake --install into WORK_DIR/prefix first).
cmake_minimum_required(VERSION 3.16)

include("${CMAKE_CURRENT_LIST_DIR}/../run_command.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(args -S "${KEYBLEND_SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build" -G "${CMAKE_GENERATOR}"
         -DKEYBLEND_CONSUMER_MODE=${MODE} -DKEYBLEND_SOURCE_DIR=${KEYBLEND_SOURCE_DIR})
if(MODE STREQUAL "installed")
  run(${CMAKE_COMMAND} --install "${KEYBLEND_BINARY_DIR}" --prefix "${WORK_DIR}/prefix")
  if(NOT EXISTS "${WORK_DIR}/prefix/include/keyblend/keyblend.hpp")
    message(FATAL_ERROR "the install did not put the headers in the prefix")
  endif()
  list(APPEND args "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
endif()
run(${CMAKE_COMMAND} ${args})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
run("${WORK_DIR}/build/consumer_io")
if(EXPECT_ASSIMP) # keyblend::assimp was built: the consumer must find and use it
  run("${WORK_DIR}/build/consumer_assimp")
endif()
