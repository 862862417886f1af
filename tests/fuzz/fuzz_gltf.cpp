// libFuzzer target for the glTF loader, .glb and .gltf inputs alike (the loader tells them apart by
// their bytes). Whatever the bytes, load_memory must return a value or an error with a message, in
// both modes, without a sanitizer report, within libFuzzer's time and memory limits; and a value
// must keep every promise gltf.hpp makes (indices in range, layouts sized, clips valid, vertex data
// and bind poses finite, warnings bounded), and gltf::write_memory must write it (or refuse with a
// message) as a file the loader reads back. A broken promise traps.
//
// Built by .ci/run with clang (-DKEYBLEND_BUILD_FUZZ=ON), seeded with the shared glTF files and
// the files tests/test_gltf.cpp writes (KEYBLEND_GLTF_SEEDS), run for a bounded time under
// AddressSanitizer and UndefinedBehaviorSanitizer.
#include "fuzz.hpp"

#include <keyblend/gltf.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

using kbfuzz::require;

void check(const keyblend::gltf::model& g, const keyblend::io::load_options& options) {
    const keyblend::skeleton& s = g.skeleton;
    require(s.size() == g.contents.nodes);
    require(g.joint_of_node.size() == s.size());
    for (std::size_t j = 0; j < s.size(); ++j) {
        require(s.parent(j) < static_cast<keyblend::joint_index>(j));
        require(keyblend::is_finite(s.bind_model()[j]));
    }
    require(g.warnings.size() <= options.max_warnings);
    for (const keyblend::io::load_warning& w : g.warnings) require(!w.message.empty() && w.message.size() < 2000);
    std::size_t vertices = 0;
    for (const keyblend::gltf::mesh_instance& m : g.meshes) {
        const std::size_t n = m.positions.size();
        vertices += n;
        require(m.joint < s.size() && m.node_index < s.size() && m.joint == g.joint_of_node[m.node_index]);
        for (const glm::vec3& p : m.positions) require(keyblend::is_finite(p));
        for (const glm::vec3& v : m.normals) require(keyblend::is_finite(v));
        for (const glm::vec4& v : m.tangents) require(keyblend::is_finite(v));
        require(m.normals.empty() || m.normals.size() == n);
        require(m.tangents.empty() || m.tangents.size() == n);
        require(m.texcoords.empty() || m.texcoords.size() == n);
        require(m.indices.size() % 3 == 0);
        for (std::uint32_t v : m.indices) require(v < n);
        require(m.triangle_materials.empty() || m.triangle_materials.size() == m.indices.size() / 3);
        for (std::uint32_t t : m.triangle_materials) require(t < m.materials.size());
        kbfuzz::check_skin(m.skin, n, s);
        require(m.morph_targets.empty() || m.morph_targets.size() == s.morph_weight_count(m.joint));
        for (const keyblend::io::morph_target& t : m.morph_targets) {
            require(t.positions.empty() || t.positions.size() == n);
            require(t.normals.empty() || t.normals.size() == n);
            require(t.tangents.empty() || t.tangents.size() == n);
            for (const glm::vec3& d : t.positions) require(keyblend::is_finite(d));
        }
    }
    require(vertices <= options.max_vertices);
    require(g.meshes.size() <= options.max_meshes);
    for (const keyblend::gltf::animation& a : g.animations) {
        require(static_cast<bool>(keyblend::validate_clip(a.clip, s)));
        require(a.clip.duration == std::max(0.0f, keyblend::last_key_time(a.clip)));
        require(a.clip.ticks_per_second == 1.0f);
    }
    // What the loader gives, the writer writes (or refuses with a message), and the loader reads
    // back: the writer sees every shape of model a hostile file can produce.
    keyblend::gltf::asset a;
    a.skeleton = &s;
    for (const keyblend::gltf::mesh_instance& m : g.meshes) a.meshes.push_back(&m);
    for (const keyblend::gltf::animation& x : g.animations) a.clips.push_back(&x.clip);
    keyblend::gltf::write_options w;
    w.source = keyblend::gltf::handedness::right;
    std::vector<unsigned char> glb, bin;
    const auto written = keyblend::gltf::write_memory(a, keyblend::gltf::container::glb, glb, bin, w);
    if (!written) {
        require(!written.error().message.empty());
        return;
    }
    keyblend::io::load_options again = options;
    again.mode = keyblend::io::parse_mode::lenient;
    const auto back = keyblend::gltf::load_memory(glb.data(), glb.size(), again, "written");
    require(static_cast<bool>(back));
    require(back->animations.size() <= g.animations.size());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The default limits, but for vertices and keys that keep each run quick.
    keyblend::io::load_options options;
    options.max_vertices = std::size_t{1} << 20;
    options.max_keys = std::size_t{1} << 20;
    kbfuzz::each_mode(
        options, [&](const keyblend::io::load_options& o) { return keyblend::gltf::load_memory(data, size, o, "fuzz"); },
        check);
    return 0;
}
