// What keyblend's fuzz targets share: a broken promise traps, each input is loaded in both
// modes, every result checked, and the promises every loader makes about an io::mesh's skin.
#pragma once

#include <keyblend/io/model.hpp>

#include <cstddef>
#include <cstdint>

namespace kbfuzz {

inline void require(bool promise) {
    if (!promise) __builtin_trap();
}

/// Loads the input in strict and in lenient mode (`options` otherwise as given): `load(options)`
/// returns a result; a value must pass `check(value, options)`, an error must have a message of
/// bounded length (names from the file are quoted as bounded excerpts).
template <class Load, class Check>
void each_mode(keyblend::io::load_options options, Load&& load, Check&& check) {
    for (keyblend::io::parse_mode mode : {keyblend::io::parse_mode::strict, keyblend::io::parse_mode::lenient}) {
        options.mode = mode;
        const auto r = load(options);
        if (r)
            check(*r, options);
        else
            require(!r.error().message.empty() && r.error().message.size() < 2000);
    }
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

} // namespace kbfuzz
