# FindISAL: the Intel ISA-L library's igzip (Debian: libisal-dev), for keyblend::io's inflate.
#
#   find_package(ISAL)
#
# Defines ISAL_FOUND, ISAL_INCLUDE_DIR, ISAL_LIBRARY and the imported target ISAL::ISAL. Hints:
# ISAL_ROOT (a prefix), or CMAKE_PREFIX_PATH.
find_path(ISAL_INCLUDE_DIR NAMES isa-l/igzip_lib.h HINTS ${ISAL_ROOT} PATH_SUFFIXES include)
find_library(ISAL_LIBRARY NAMES isal HINTS ${ISAL_ROOT} PATH_SUFFIXES lib lib64)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ISAL REQUIRED_VARS ISAL_LIBRARY ISAL_INCLUDE_DIR)
if(ISAL_FOUND AND NOT TARGET ISAL::ISAL)
  add_library(ISAL::ISAL UNKNOWN IMPORTED)
  set_target_properties(ISAL::ISAL PROPERTIES
    IMPORTED_LOCATION "${ISAL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ISAL_INCLUDE_DIR}")
endif()
mark_as_advanced(ISAL_INCLUDE_DIR ISAL_LIBRARY)
