// Compiled with the flags of tests/CMakeLists.txt's skin_isa_mix (avx512).
#include "skin_one.hpp"

mix_result skin_avx512() { return skin_one(); }
