// libFuzzer target for the .X loader. Whatever the bytes, load_xfile_memory must return a value or
// an error with a message, in both modes, without a sanitizer report, within libFuzzer's time and
// memory limits (.ci/run: -max_len of 1 MB, so that decompression amplification is reachable); and
// a value must keep every promise xfile.hpp makes (indices in range, layouts sized, clips valid,
// vertex data and bind poses finite, warnings bounded). A broken promise traps.
//
// Built by .ci/run with clang (-DKEYBLEND_BUILD_FUZZ=ON), seeded with tests/data and
// KEYBLEND_DATA_DIR, run for a bounded time under AddressSanitizer and UndefinedBehaviorSanitizer.
#include <keyblend/io/xfile.hpp>

#include "fuzz.hpp"

#include <cstddef>
#include <cstdint>

namespace {

using kbfuzz::require;

void check(const keyblend::io::xfile& x, const keyblend::io::load_options& options) {
    const keyblend::skeleton& s = x.skeleton;
    for (std::size_t j = 0; j < s.size(); ++j) {
        require(s.parent(j) < static_cast<keyblend::joint_index>(j));
        require(keyblend::is_finite(s.bind_model()[j]));
    }
    require(x.warnings.size() <= options.max_warnings);
    for (const keyblend::io::load_warning& w : x.warnings)
        require(!w.message.empty() && w.message.size() < 2000); // names as bounded excerpts
    require(s.size() <= x.contents.frames);
    require(x.meshes.size() <= x.contents.meshes);
    require(x.animation_sets.size() == x.contents.animation_sets);
    for (const keyblend::io::xfile_mesh& m : x.meshes) {
        const std::size_t n = m.positions.size();
        for (const glm::vec3& p : m.positions) require(keyblend::is_finite(p));
        for (const glm::vec3& v : m.normal_values) require(keyblend::is_finite(v));
        for (const glm::vec2& t : m.texcoords) require(keyblend::is_finite(t.x) && keyblend::is_finite(t.y));
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
        kbfuzz::check_skin(m.skin, n, s);
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
    // The default limits, but for a decompressed size that keeps each run quick: inputs up to
    // -max_len can still inflate to 16 MB of amplified objects.
    keyblend::io::load_options options;
    options.max_decompressed_bytes = std::size_t{16} << 20;
    kbfuzz::each_mode(
        options, [&](const keyblend::io::load_options& o) { return keyblend::io::load_xfile_memory(data, size, o, "fuzz"); },
        check);
    return 0;
}
