# The gltf_validator test: tests/validate_gltf.js (NODE, SCRIPT) on every .glb and .gltf file in DIR.
# No such file (the data folder absent): skipped; the validator package absent: skipped, or failed
# under KEYBLEND_REQUIRE_DATA=1 (CI).
file(GLOB files "${DIR}/*.glb" "${DIR}/*.gltf")
if(NOT files)
  set(MESSAGE "no glTF file in ${DIR} (the .X data folder is absent, or the write tests did not run)")
  include(${CMAKE_CURRENT_LIST_DIR}/skip_or_fail.cmake)
  return()
endif()
execute_process(COMMAND ${NODE} -e "try{require('gltf-validator')}catch(e){require(require('child_process').execSync('npm root -g').toString().trim()+'/gltf-validator')}"
                RESULT_VARIABLE missing OUTPUT_QUIET ERROR_QUIET)
if(missing)
  set(MESSAGE "the npm package gltf-validator is not installed (npm install -g gltf-validator), so the written glTF files were not validated")
  include(${CMAKE_CURRENT_LIST_DIR}/skip_or_fail.cmake)
  return()
endif()
list(SORT files)
execute_process(COMMAND ${NODE} ${SCRIPT} ${files} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the glTF validator found errors or warnings (above)")
endif()
