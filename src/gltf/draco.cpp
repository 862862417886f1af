// keyblend::gltf: KHR_draco_mesh_compression through Draco (compiled when CMake finds it; without
// it, draco_none.cpp says so and the loader refuses the extension by name).
//
// SPDX-License-Identifier: MIT
#include "draco.hpp"

#include <draco/compression/decode.h>
#include <draco/mesh/mesh.h>

#include <memory>

namespace keyblend {
namespace gltf {
namespace detail {

bool draco_available() { return true; }

bool decode_draco(const unsigned char* data, std::size_t size, std::size_t max_points, std::size_t max_faces,
                  std::vector<draco_request>& requests, std::vector<std::uint32_t>& indices,
                  std::size_t& points, std::string& error) {
    draco::DecoderBuffer buffer;
    buffer.Init(reinterpret_cast<const char*>(data), size);
    auto type = draco::Decoder::GetEncodedGeometryType(&buffer);
    if (!type.ok()) {
        error = "not a Draco stream (" + type.status().error_msg_string() + ")";
        return false;
    }
    if (type.value() != draco::TRIANGULAR_MESH) {
        error = "the Draco stream is not a triangle mesh";
        return false;
    }
    draco::Decoder decoder;
    auto decoded = decoder.DecodeMeshFromBuffer(&buffer);
    if (!decoded.ok()) {
        error = "Draco could not decode it (" + decoded.status().error_msg_string() + ")";
        return false;
    }
    const std::unique_ptr<draco::Mesh> mesh = std::move(decoded).value();
    points = mesh->num_points();
    const std::size_t faces = mesh->num_faces();
    if (points > max_points || faces > max_faces) {
        error = "the Draco mesh has " + std::to_string(points) + " points and " + std::to_string(faces) +
                " faces, more than the limits allow (" + std::to_string(max_points) + ", " +
                std::to_string(max_faces) + ")";
        return false;
    }
    indices.resize(faces * 3);
    for (draco::FaceIndex f(0); f < mesh->num_faces(); ++f)
        for (std::size_t c = 0; c < 3; ++c) indices[f.value() * 3 + c] = mesh->face(f)[c].value();
    for (draco_request& r : requests) {
        const draco::PointAttribute* a = mesh->GetAttributeByUniqueId(static_cast<std::uint32_t>(r.unique_id));
        r.found = a != nullptr;
        if (!a) continue;
        r.values.assign(points * r.components, 0.0f);
        for (draco::PointIndex p(0); p < mesh->num_points(); ++p)
            if (!a->ConvertValue<float>(a->mapped_index(p), static_cast<std::int8_t>(r.components),
                                        r.values.data() + p.value() * r.components)) {
                error = "Draco attribute " + std::to_string(r.unique_id) + " cannot be converted to " +
                        std::to_string(r.components) + " floats";
                return false;
            }
    }
    return true;
}

} // namespace detail
} // namespace gltf
} // namespace keyblend
