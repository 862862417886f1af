# run(<command> <args...>): execute_process that fails the calling script (cmake -P) with the
# command line and its exit code when the command fails. Included by the test driver scripts.
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGV}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
endfunction()
