// Compile-time probe: pipeline.cpp (load a .X file, sample three clips, blend them,
// local-to-model, build the palette, skin positions and normals) with the skinning configuration
// stated at compile time: 4 influence slots (the loader's layout), positions + normals.
#include <keyblend/skin.hpp>

#define KEYBLEND_PROBE_RUN run<keyblend::fixed_skinning<4, keyblend::skinned_streams::positions_normals>>
#include "pipeline.cpp"
