// Compiled with the flags of tests/CMakeLists.txt's skin_isa_mix (dispatch).
#include "skin_one.hpp"

mix_result skin_dispatch() { return skin_one(); }
