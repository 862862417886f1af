// keyblend::gltf without Draco: KHR_draco_mesh_compression is refused by name (see draco.cpp).
//
// SPDX-License-Identifier: MIT
#include "draco.hpp"

namespace keyblend {
namespace gltf {
namespace detail {

bool draco_available() { return false; }

bool decode_draco(const unsigned char*, std::size_t, std::size_t, std::size_t, std::vector<draco_request>&,
                  std::vector<std::uint32_t>&, std::size_t&, std::string& error) {
    error = "keyblend::gltf was built without Draco (KEYBLEND_GLTF_DRACO)";
    return false;
}

} // namespace detail
} // namespace gltf
} // namespace keyblend
