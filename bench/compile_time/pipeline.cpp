// Compile-time probe: a whole frame of one character as an engine file writes it - load a .X
// file, sample three clips, blend them, local-to-model, build the palette, skin positions and
// normals through the general run(). pipeline_configured.cpp compiles this file with the
// skinning configuration stated at compile time (KEYBLEND_PROBE_RUN).
#include <keyblend/io/xfile.hpp>
#include <keyblend/keyblend.hpp>

#include <cstdint>
#include <string>
#include <vector>

keyblend::status probe(const std::string& path, float ticks, std::vector<glm::vec3>& out_positions,
                       std::vector<glm::vec3>& out_normals) {
    auto file = keyblend::io::load_xfile(path);
    if (!file) return keyblend::status(file.error());
    const keyblend::skeleton& skeleton = file->skeleton;
    if (file->animation_sets.empty() || file->meshes.empty()) return {};
    keyblend::sampling_context contexts[3];
    keyblend::local_pose poses[3], pose;
    const keyblend::local_pose bind(skeleton);
    keyblend::blend_layer layers[3];
    for (int i = 0; i < 3; ++i) {
        const keyblend::clip& c = file->animation_sets[std::size_t(i) % file->animation_sets.size()].clip;
        keyblend::sampling_job sampling;
        sampling.clip = &c;
        sampling.skeleton = &skeleton;
        sampling.time = keyblend::clip_time(c, ticks);
        sampling.context = &contexts[i];
        sampling.output = &poses[i];
        if (auto st = sampling.run(); !st) return st;
        layers[i] = {&poses[i], 1.0f / 3.0f};
    }
    keyblend::blend_job blend;
    blend.rest_pose = &bind;
    blend.layers = layers;
    blend.output = &pose;
    if (auto st = blend.run(); !st) return st;
    const keyblend::io::xfile_mesh& mesh = file->meshes[0];
    std::vector<glm::mat4> model(skeleton.size()), palette(mesh.skin.bones.size());
    keyblend::local_to_model_job hierarchy;
    hierarchy.skeleton = &skeleton;
    hierarchy.input = &pose;
    hierarchy.output = model;
    if (auto st = hierarchy.run(); !st) return st;
    keyblend::palette_job matrices;
    matrices.model = model;
    matrices.bones = mesh.skin.bones;
    matrices.output = palette;
    if (auto st = matrices.run(); !st) return st;
    const std::size_t k = mesh.skin.influences_per_vertex;
    out_positions.resize(mesh.positions.size());
    out_normals.resize(mesh.positions.size());
    keyblend::skinning_job<std::uint16_t> job;
    job.influences = k;
    job.joints = keyblend::make_span(mesh.skin.bone_indices, k);
    job.weights = keyblend::make_span(mesh.skin.weights, k);
    job.in_positions = keyblend::make_span(mesh.positions);
    job.out_positions = keyblend::make_span(out_positions);
    job.in_normals = keyblend::make_span(mesh.normals);
    job.out_normals = keyblend::make_span(out_normals);
    job.palette = palette;
#if defined(KEYBLEND_PROBE_RUN)
    if (k != 4) return {};
    return job.KEYBLEND_PROBE_RUN();
#else
    return job.run();
#endif
}
