// Puts a mesh into a pose on the CPU, for the demo and the `keyblend render` tool: a skinned mesh
// through its palette (model[bone.joint] * bone.offset) and a skinning_job, a rigid mesh by its
// joint's model matrix. Works with the meshes of both loaders (io::xfile_mesh, assimp::mesh), which
// share the member names used here. Not part of the library.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <keyblend/skin.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace examples {

/// A mesh's vertices in one pose, and the palette that put them there. Sized on first use.
struct posed_mesh {
    std::vector<glm::mat4> palette;
    std::vector<glm::vec3> positions, normals;
};

/// Poses `mesh` with the joints' model matrices. With `check`, the skinning job is validated
/// first and a problem (weights that do not sum to 1, ...) is written to `*check` (empty when
/// none), without stopping. Fails when the palette cannot be built or the job cannot run.
template <class Mesh>
keyblend::status pose_mesh(const Mesh& mesh, const std::vector<glm::mat4>& joint_model,
                           posed_mesh& out, std::string* check = nullptr) {
    out.positions.resize(mesh.positions.size());
    out.normals.resize(mesh.normals.size());
    if (!mesh.is_skinned()) {
        // A rigid mesh follows its joint (a mesh under no joint stays where it is).
        const glm::mat4 m = mesh.joint < joint_model.size() ? joint_model[mesh.joint] : glm::mat4(1.0f);
        const glm::mat3 n = glm::transpose(glm::inverse(glm::mat3(m)));
        for (std::size_t v = 0; v < mesh.positions.size(); ++v)
            out.positions[v] = glm::vec3(m * glm::vec4(mesh.positions[v], 1.0f));
        for (std::size_t v = 0; v < mesh.normals.size(); ++v) out.normals[v] = n * mesh.normals[v];
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
    job.in_positions = keyblend::make_span(mesh.positions);
    job.out_positions = keyblend::make_span(out.positions);
    if (!mesh.normals.empty()) {
        job.in_normals = keyblend::make_span(mesh.normals);
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
