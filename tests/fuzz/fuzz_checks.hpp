// The promises every keyblend loader makes about an io::mesh, checked by the fuzz targets
// (fuzz_xfile.cpp, fuzz_gltf.cpp): a broken promise traps.
#pragma once

#include <keyblend/io/model.hpp>

#include <cstddef>
#include <cstdint>

namespace fuzz {

inline void require(bool promise) {
    if (!promise) __builtin_trap();
}

/// A mesh's skin: layouts sized for its n vertices, indices in range, bones naming their joints.
inline void check_skin(const keyblend::io::mesh_skin& k, std::size_t n, const keyblend::skeleton& s) {
    require(k.influences_per_vertex <= keyblend::io::max_influences_per_vertex);
    require(k.bone_indices.size() == n * k.influences_per_vertex);
    require(k.weights.size() == n * k.influences_per_vertex);
    require(!k.bones.empty() || k.influences_per_vertex == 0);
    for (std::uint16_t b : k.bone_indices) require(b == 0 || b < k.bones.size());
    for (float w : k.weights) require(keyblend::is_finite(w));
    for (const keyblend::io::skin_bone& b : k.bones)
        require(b.joint < s.size() && s.name(b.joint) == b.name && keyblend::is_finite(b.offset));
}

} // namespace fuzz
