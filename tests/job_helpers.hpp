// Tests' shorthand for running a job in one call (the tests of the jobs themselves use the jobs).
#pragma once

#include <keyblend/clip.hpp>
#include <keyblend/pose.hpp>
#include <keyblend/skin.hpp>

#include <doctest/doctest.h>

#include <vector>

namespace kbtest {

/// A sampling_job, run.
inline keyblend::status sample_clip(const keyblend::clip& c, const keyblend::skeleton& s, float time,
                                    keyblend::sampling_context& context, keyblend::local_pose& out) {
    keyblend::sampling_job job;
    job.clip = &c;
    job.skeleton = &s;
    job.time = time;
    job.context = &context;
    job.output = &out;
    return job.run();
}

/// A local_to_model_job over the whole skeleton into `model` (sized to the skeleton first).
inline void local_to_model(const keyblend::skeleton& s, const keyblend::local_pose& local, std::vector<glm::mat4>& model,
                           const glm::mat4& root = glm::mat4(1.0f)) {
    model.resize(s.size());
    keyblend::local_to_model_job job;
    job.skeleton = &s;
    job.input = &local;
    job.root = &root;
    job.output = model;
    REQUIRE(job.run());
}
inline void local_to_model(const keyblend::skeleton& s, const std::vector<glm::mat4>& local,
                           std::vector<glm::mat4>& model, const glm::mat4& root = glm::mat4(1.0f)) {
    model.resize(s.size());
    keyblend::local_to_model_job job;
    job.skeleton = &s;
    job.input_matrices = local;
    job.root = &root;
    job.output = model;
    REQUIRE(job.run());
}

/// The sub-tree of `joint` again, its parent's model matrix taken from `model`.
inline void local_to_model_subtree(const keyblend::skeleton& s, std::size_t joint, const keyblend::local_pose& local,
                                   std::vector<glm::mat4>& model) {
    model.resize(s.size());
    keyblend::local_to_model_job job;
    job.skeleton = &s;
    job.input = &local;
    job.from = joint;
    job.output = model;
    REQUIRE(job.run());
}

/// sample_local_matrices into `local`, sized to the skeleton first.
inline keyblend::status sample_local_matrices(const keyblend::clip& c, const keyblend::skeleton& s, float time,
                                             std::vector<glm::mat4>& local) {
    local.resize(s.size());
    return keyblend::sample_local_matrices(c, s, time, local);
}

/// to_local_matrices into a new vector.
inline std::vector<glm::mat4> local_matrices(const keyblend::local_pose& pose) {
    std::vector<glm::mat4> m(pose.size());
    REQUIRE(keyblend::to_local_matrices(pose, m));
    return m;
}

/// The bind local matrices into `local`, sized to the skeleton first.
inline void reset_to_bind(const keyblend::skeleton& s, std::vector<glm::mat4>& local) {
    local.resize(s.size());
    REQUIRE(keyblend::reset_to_bind(s, keyblend::span<glm::mat4>(local)));
}

/// `positions` (a loaded mesh's, or morphed ones) skinned by the mesh's skin (an io::mesh, an .X
/// mesh or a glTF mesh instance) under model matrices: a palette_job, then a skinning_job.
template <class Mesh>
std::vector<glm::vec3> skinned_positions(const Mesh& m, const std::vector<glm::vec3>& positions,
                                         const std::vector<glm::mat4>& model,
                                         float weight_tolerance = keyblend::skinning_job<std::uint16_t>{}.weight_tolerance) {
    std::vector<glm::mat4> palette(m.skin.bones.size());
    keyblend::palette_job pj;
    pj.model = model;
    pj.bones = m.skin.bones;
    pj.output = palette;
    REQUIRE(pj.run());
    std::vector<glm::vec3> out(positions.size());
    keyblend::skinning_job<std::uint16_t> job;
    job.influences = m.skin.influences_per_vertex;
    job.joints = keyblend::make_span(m.skin.bone_indices, m.skin.influences_per_vertex);
    job.weights = keyblend::make_span(m.skin.weights, m.skin.influences_per_vertex);
    job.in_positions = keyblend::make_span(positions);
    job.out_positions = keyblend::make_span(out);
    job.palette = palette;
    job.weight_tolerance = weight_tolerance;
    REQUIRE(job.run());
    return out;
}

} // namespace kbtest
