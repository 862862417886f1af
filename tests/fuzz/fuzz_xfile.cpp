// libFuzzer target for the .X loader. Whatever the bytes, load_xfile_memory must return a value or
// an error with a message, in both modes, without a sanitizer report; and a value must keep every
// promise xfile.hpp makes (indices in range, layouts sized, clips valid). A broken promise traps.
//
// Built by .ci/run with clang (-DKEYBLEND_BUILD_FUZZ=ON), seeded with tests/data and
// ../shared/data/x, run for a bounded time under AddressSanitizer and UndefinedBehaviorSanitizer.
#include <keyblend/io/xfile.hpp>

#include <cstddef>
#include <cstdint>

namespace {

void require(bool promise) {
    if (!promise) __builtin_trap();
}

void check(const keyblend::io::xfile& x) {
    const keyblend::skeleton& s = x.skeleton;
    for (std::size_t j = 0; j < s.size(); ++j)
        require(s.parent(j) < static_cast<keyblend::joint_index>(j));
    for (const keyblend::io::xfile_mesh& m : x.meshes) {
        const std::size_t n = m.positions.size();
        require(m.joint == keyblend::io::no_joint || m.joint < s.size());
        require(m.indices.size() == 3 * m.triangle_faces.size());
        for (std::uint32_t v : m.indices) require(v < n);
        for (std::uint32_t f : m.triangle_faces) require(f < m.face_count);
        require(m.normals.empty() || m.normals.size() == n);
        require(m.normal_indices.size() == (m.normals.empty() ? 0 : m.indices.size()));
        for (std::uint32_t i : m.normal_indices) require(i < m.normal_values.size());
        require(m.texcoords.empty() || m.texcoords.size() == n);
        require(m.triangle_materials.empty() ||
                m.triangle_materials.size() == m.triangle_faces.size());
        for (std::uint32_t t : m.triangle_materials) require(t < m.materials.size());
        const keyblend::io::mesh_skin& k = m.skin;
        require(k.influences_per_vertex <= keyblend::io::max_influences_per_vertex);
        require(k.bone_indices.size() == n * k.influences_per_vertex);
        require(k.weights.size() == n * k.influences_per_vertex);
        require(!k.bones.empty() || k.influences_per_vertex == 0);
        for (std::uint16_t b : k.bone_indices) require(b == 0 || b < k.bones.size());
        for (const keyblend::io::skin_bone& b : k.bones)
            require(b.joint < s.size() && s.name(b.joint) == b.name);
    }
    for (const keyblend::io::xfile_animation_set& a : x.animation_sets) {
        require(static_cast<bool>(keyblend::validate_clip(a.clip, s)));
        require(a.animation_names.size() == a.clip.channels.size());
        require(a.options.size() == a.clip.channels.size());
        require(a.clip.duration == keyblend::last_key_time(a.clip));
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    for (keyblend::io::parse_mode mode :
         {keyblend::io::parse_mode::strict, keyblend::io::parse_mode::lenient}) {
        const keyblend::result<keyblend::io::xfile> r =
            keyblend::io::load_xfile_memory(data, size, {mode}, "fuzz");
        if (r)
            check(*r);
        else
            require(!r.error().message.empty());
    }
    return 0;
}
