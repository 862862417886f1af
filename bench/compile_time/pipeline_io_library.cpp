// Compile-time probe: pipeline_configured.cpp as a CMake project compiles it when it links
// keyblend::io (the README's way): KEYBLEND_IO_LIBRARY is defined, so xfile.hpp only declares the
// loader, which is compiled once, in the library, not in this file.
#define KEYBLEND_IO_LIBRARY
#include "pipeline_configured.cpp"
