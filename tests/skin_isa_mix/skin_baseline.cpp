// Compiled with the flags of tests/CMakeLists.txt's skin_isa_mix (baseline).
#include "skin_one.hpp"

mix_result skin_baseline() { return skin_one(); }
