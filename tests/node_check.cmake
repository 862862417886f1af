# A test that runs a node script on the glTF files the write tests wrote: SCRIPT (run by NODE) on
# every file of DIR matching PATTERNS (globs separated by commas), with the npm package PACKAGE it needs;
# CHECKS says what it checks, for the messages. No such file (the data folder absent): skipped; the
# package absent: skipped, or failed under KEYBLEND_REQUIRE_DATA=1 (CI).
set(files)
string(REPLACE "," ";" PATTERNS "${PATTERNS}")
foreach(pattern IN LISTS PATTERNS)
  file(GLOB matched "${DIR}/${pattern}")
  list(APPEND files ${matched})
endforeach()
if(NOT files)
  set(MESSAGE "no glTF file in ${DIR} (the .X data folder is absent, or the write tests did not run)")
  include(${CMAKE_CURRENT_LIST_DIR}/skip_or_fail.cmake)
  return()
endif()
execute_process(COMMAND ${NODE} -e "try{require('${PACKAGE}')}catch(e){require(require('child_process').execSync('npm root -g').toString().trim()+'/${PACKAGE}')}"
                RESULT_VARIABLE missing OUTPUT_QUIET ERROR_QUIET)
if(missing)
  set(MESSAGE "the npm package ${PACKAGE} is not installed (npm install -g ${PACKAGE}), so ${CHECKS} was not checked")
  include(${CMAKE_CURRENT_LIST_DIR}/skip_or_fail.cmake)
  return()
endif()
list(SORT files)
execute_process(COMMAND ${NODE} ${SCRIPT} ${files} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CHECKS}: failed (above)")
endif()
