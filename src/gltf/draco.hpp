// keyblend::gltf internals: decoding a KHR_draco_mesh_compression buffer view with Draco
// (draco.cpp, compiled when CMake finds Draco), in types that do not show Draco's headers.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace keyblend {
namespace gltf {
namespace detail {

/// An attribute the primitive maps to a Draco attribute id, and how many components it wants.
struct draco_request {
    int unique_id = 0;
    unsigned components = 0;
    std::vector<float> values; ///< out: points x components, converted as Draco converts them
    bool found = false;        ///< out: the decoded mesh has the attribute
};

/// Decodes a Draco mesh. Fails (false, `error` saying why) on a corrupt stream, a point cloud, or
/// more than `max_points` points or `max_faces` faces (checked before the attributes are read).
/// `indices` receives 3 per face.
bool decode_draco(const unsigned char* data, std::size_t size, std::size_t max_points, std::size_t max_faces,
                  std::vector<draco_request>& requests, std::vector<std::uint32_t>& indices,
                  std::size_t& points, std::string& error);

/// True when built with Draco.
bool draco_available();

} // namespace detail
} // namespace gltf
} // namespace keyblend
