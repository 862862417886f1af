// Compile-time probe: the job of skin_general.cpp (uint16_t joints, 4 influences, positions +
// normals) with its configuration stated at compile time: only its kernels are compiled.
#include <keyblend/skin.hpp>

#define KEYBLEND_PROBE_RUN run<keyblend::fixed_skinning<4, keyblend::skinned_streams::positions_normals>>
#include "skin_general.cpp"
