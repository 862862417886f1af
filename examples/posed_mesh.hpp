// Puts a mesh into a pose on the CPU, for the demo and the `keyblend render` tool: its morph
// targets first (a morph_job, when it has targets and is given their weights), then a skinned mesh
// through its palette (model[bone.joint] * bone.offset) and a skinning_job, a rigid mesh by its
// joint's model matrix. Works with the meshes of both loaders (io::xfile_mesh, assimp::mesh), which
// share the member names used here. Not part of the library.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <keyblend/morph.hpp>
#include <keyblend/skin.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace examples {

/// A mesh's vertices in one pose, and the palette that put them there. Sized on first use.
struct posed_mesh {
    std::vector<glm::mat4> palette;
    std::vector<glm::vec3> positions, normals;
    std::vector<glm::vec3> morphed_positions, morphed_normals; // (with morph targets)
    std::vector<keyblend::morph_target_streams> targets;
};

template <class Mesh, class = void>
struct has_morph_targets : std::false_type {};
template <class Mesh>
struct has_morph_targets<Mesh, std::void_t<decltype(std::declval<const Mesh&>().morph_targets)>> : std::true_type {};

/// Morphs the mesh's positions and normals by `weights` (one per target) into out.morphed_*;
/// returns false, doing nothing, when the mesh has no targets or the weights do not match them.
template <class Mesh>
bool morph_mesh(const Mesh& mesh, keyblend::span<const float> weights, posed_mesh& out) {
    if constexpr (!has_morph_targets<Mesh>::value) {
        return false;
    } else {
        if (mesh.morph_targets.empty() || weights.size() != mesh.morph_targets.size()) return false;
        out.targets.clear();
        for (const auto& t : mesh.morph_targets) {
            keyblend::morph_target_streams s;
            if (!t.positions.empty()) s.positions = keyblend::make_span(t.positions);
            if (!t.normals.empty()) s.normals = keyblend::make_span(t.normals);
            out.targets.push_back(s);
        }
        out.morphed_positions.resize(mesh.positions.size());
        out.morphed_normals.resize(mesh.normals.size());
        keyblend::morph_job job;
        job.targets = out.targets;
        job.weights = weights;
        job.in_positions = keyblend::make_span(mesh.positions);
        job.out_positions = keyblend::make_span(out.morphed_positions);
        if (!mesh.normals.empty()) {
            job.in_normals = keyblend::make_span(mesh.normals);
            job.out_normals = keyblend::make_span(out.morphed_normals);
        }
        return static_cast<bool>(job.run());
    }
}

/// Poses `mesh` with the joints' model matrices, after morphing it by `morph_weights` (one per
/// morph target; ignored when empty). With `check`, the skinning job is validated
/// first and a problem (weights that do not sum to 1, ...) is written to `*check` (empty when
/// none), without stopping. Fails when the palette cannot be built or the job cannot run.
template <class Mesh>
keyblend::status pose_mesh(const Mesh& mesh, const std::vector<glm::mat4>& joint_model,
                           posed_mesh& out, std::string* check = nullptr,
                           keyblend::span<const float> morph_weights = {}) {
    out.positions.resize(mesh.positions.size());
    out.normals.resize(mesh.normals.size());
    const bool morphed = morph_mesh(mesh, morph_weights, out);
    const std::vector<glm::vec3>& positions = morphed ? out.morphed_positions : mesh.positions;
    const std::vector<glm::vec3>& normals = morphed ? out.morphed_normals : mesh.normals;
    if (!mesh.is_skinned()) {
        // A rigid mesh follows its joint (a mesh under no joint stays where it is).
        const glm::mat4 m = mesh.joint < joint_model.size() ? joint_model[mesh.joint] : glm::mat4(1.0f);
        const glm::mat3 n = glm::transpose(glm::inverse(glm::mat3(m)));
        for (std::size_t v = 0; v < positions.size(); ++v)
            out.positions[v] = glm::vec3(m * glm::vec4(positions[v], 1.0f));
        for (std::size_t v = 0; v < normals.size(); ++v) out.normals[v] = n * normals[v];
        return {};
    }
    const auto& skin = mesh.skin;
    out.palette.resize(skin.bones.size());
    keyblend::palette_job palette;
    palette.model = joint_model;
    palette.bones = skin.bones;
    palette.output = out.palette;
    if (keyblend::status st = palette.run(); !st) return st;
    keyblend::skinning_job<std::uint16_t> job;
    job.influences = skin.influences_per_vertex;
    job.joints = keyblend::make_span(skin.bone_indices, skin.influences_per_vertex);
    job.weights = keyblend::make_span(skin.weights, skin.influences_per_vertex);
    job.in_positions = keyblend::make_span(positions);
    job.out_positions = keyblend::make_span(out.positions);
    if (!normals.empty()) {
        job.in_normals = keyblend::make_span(normals);
        job.out_normals = keyblend::make_span(out.normals);
    }
    job.palette = out.palette;
    job.weight_tolerance = 1e-2f; // exporters round weights
    if (check) {
        const keyblend::status valid = job.validate();
        *check = valid ? std::string() : valid.error().message;
    }
    return job.run();
}

} // namespace examples
