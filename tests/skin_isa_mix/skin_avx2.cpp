// Compiled with the flags of tests/CMakeLists.txt's skin_isa_mix (avx2).
#include "skin_one.hpp"

mix_result skin_avx2() { return skin_one(); }
