// keyblend pack, and packages as input: `pack` compresses a model's clips and writes them with
// its skeleton and meshes into one package file (keyblend/package.hpp); `info`, `pose` and
// `render` read packages as they read any other input (the loader dispatches on the package's
// magic), sampling their clips straight from the compressed bytes.
//
// SPDX-License-Identifier: MIT
#include "keyblend_tool.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

namespace tool {
namespace {

using json = nlohmann::ordered_json;

/// A mesh of another importer (assimp) as an io::mesh: the members they share, copied, and its
/// material (one of `materials`, the importer's) on every triangle.
template <class Mesh, class Material>
keyblend::io::mesh to_io_mesh(const Mesh& m, const std::vector<Material>& materials) {
    keyblend::io::mesh out;
    if (m.material < materials.size()) {
        const Material& from = materials[m.material];
        keyblend::io::material& to = out.materials.emplace_back();
        to.name = from.name;
        to.diffuse = from.diffuse;
        to.specular = from.specular;
        to.emissive = from.emissive;
        to.power = from.shininess;
        to.texture_image = from.texture_image;
        // (An embedded texture not imported, `*N`, names no file.)
        if (from.texture_image || from.texture_file.rfind('*', 0) != 0) to.texture_file = from.texture_file;
        out.triangle_materials.assign(m.indices.size() / 3, 0);
    }
    out.name = m.name;
    out.joint = m.joint;
    out.positions = m.positions;
    out.normals = m.normals;
    out.texcoords = m.texcoords;
    out.indices = m.indices;
    out.skin.bones = m.skin.bones;
    out.skin.influences_per_vertex = m.skin.influences_per_vertex;
    out.skin.bone_indices = m.skin.bone_indices;
    out.skin.weights = m.skin.weights;
    return out;
}

/// Seconds with their ticks, for messages.
double seconds(float ticks, float ticks_per_second) { return double(ticks) / double(ticks_per_second); }

} // namespace

std::vector<const keyblend::io::mesh*> io_meshes(const model& m, std::vector<keyblend::io::mesh>& copies) {
    // The loaders' io::meshes as they are; others copied (reserved: their addresses stay).
    std::vector<const keyblend::io::mesh*> meshes;
    copies.clear();
    copies.reserve(m.mesh_count());
    m.for_each_mesh([&](const auto& mesh) {
        if constexpr (std::is_base_of_v<keyblend::io::mesh, std::decay_t<decltype(mesh)>>) {
            meshes.push_back(&mesh);
        } else {
#ifdef KEYBLEND_TOOL_ASSIMP // (the only loader whose meshes are not io::meshes)
            copies.push_back(to_io_mesh(mesh, m.a->materials));
            meshes.push_back(&copies.back());
#endif
        }
    });
    return meshes;
}

double model_height(const model& m) {
    const keyblend::skeleton& s = *m.skeleton;
    glm::dvec3 lo(INFINITY), hi(-INFINITY);
    bool any = false;
    m.for_each_mesh([&](const auto& mesh) {
        const auto& k = mesh.skin;
        if (k.bones.empty() || k.influences_per_vertex == 0) return;
        std::vector<glm::mat4> palette;
        for (const auto& b : k.bones) palette.push_back(b.joint < s.size() ? s.bind_model()[b.joint] * b.offset : glm::mat4(1.0f));
        const std::size_t n = k.influences_per_vertex;
        for (std::size_t v = 0; v < mesh.positions.size(); ++v) {
            glm::dvec3 p(0.0);
            for (std::size_t i = 0; i < n; ++i) {
                const float w = k.weights[v * n + i];
                if (w == 0.0f || k.bone_indices[v * n + i] >= palette.size()) continue;
                p += double(w) * glm::dvec3(palette[k.bone_indices[v * n + i]] * glm::vec4(mesh.positions[v], 1.0f));
            }
            lo = glm::min(lo, p);
            hi = glm::max(hi, p);
            any = true;
        }
    });
    if (!any)
        for (const glm::mat4& b : s.bind_model()) {
            lo = glm::min(lo, glm::dvec3(b[3]));
            hi = glm::max(hi, glm::dvec3(b[3]));
            any = true;
        }
    const glm::dvec3 e = hi - lo;
    const double h = any ? std::max(e.x, std::max(e.y, e.z)) : 0.0;
    return std::isfinite(h) && h > 0.0 ? h : 1.0;
}

bool has_package_magic(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    unsigned char head[4] = {};
    const bool yes = std::fread(head, 1, 4, f) == 4 && std::memcmp(head, "KBPK", 4) == 0;
    std::fclose(f);
    return yes;
}

std::unique_ptr<model> load_package(const options& o) {
    keyblend::result<keyblend::package_file> file = keyblend::package_file::read(o.file);
    if (!file) {
        std::fprintf(stderr, "keyblend: %s\n", file.error().message.c_str());
        return nullptr;
    }
    auto m = std::make_unique<model>();
    m->path = o.file;
    m->package = std::make_unique<keyblend::package_file>(std::move(*file));
    const keyblend::package& p = m->package->contents();
    keyblend::result<keyblend::skeleton> s = p.make_skeleton();
    if (!s) {
        std::fprintf(stderr, "keyblend: %s: %s\n", o.file.c_str(), s.error().message.c_str());
        return nullptr;
    }
    m->package_skeleton = std::make_unique<keyblend::skeleton>(std::move(*s));
    m->skeleton = m->package_skeleton.get();
    for (std::size_t i = 0; i < p.clip_count(); ++i) {
        m->compressed.push_back(p.clip(i));
        m->package_clips.push_back(m->compressed.back().extras());
    }
    for (const keyblend::clip& c : m->package_clips) m->clips.push_back(&c);
    for (std::size_t i = 0; i < p.mesh_count(); ++i) m->package_meshes.push_back(p.mesh(i).to_mesh());
    return m;
}

const keyblend::compressed_clip* compressed_of(const model& m, const keyblend::clip& c) {
    for (std::size_t i = 0; i < m.package_clips.size(); ++i)
        if (&m.package_clips[i] == &c) return &m.compressed[i];
    return nullptr;
}

keyblend::status compressed_local_matrices(const keyblend::compressed_clip& c, const keyblend::skeleton& s, float tick,
                                           float weight, bool blend, std::vector<glm::mat4>& local) {
    keyblend::compressed_sampling_context ctx;
    keyblend::local_pose pose;
    if (keyblend::status st = keyblend::compressed_sampling_job{&c, &s, tick, &ctx, &pose}.run(); !st) return st;
    std::vector<glm::mat4> sampled(s.size());
    if (keyblend::status st = keyblend::to_local_matrices(pose, sampled); !st) return st;
    if (!blend) {
        // Joints the clip does not store keep their bind matrix exactly, as sample_local_matrices
        // gives them (a TRS pose rounds it).
        local.resize(s.size());
        for (std::size_t j = 0; j < s.size(); ++j) local[j] = c.animates(j) ? sampled[j] : s.bind_local()[j];
        return {};
    }
    // blend_matrix_additive's rule: (M - bind) * weight added to the joints the clip animates.
    if (weight == 0.0f) return {};
    if (!keyblend::is_finite(weight)) return keyblend::error{keyblend::errc::non_finite, "--blend weight is not finite"};
    for (std::size_t j = 0; j < s.size(); ++j)
        if (c.animates(j)) local[j] += (sampled[j] - s.bind_local()[j]) * weight;
    return {};
}

int pack(const options& o, const model& m) {
    if (m.package) {
        std::fprintf(stderr, "keyblend: %s is a package already (its clips are compressed; pack the source file)\n",
                     o.file.c_str());
        return exit_file;
    }
    const double height = model_height(m);
    keyblend::compression_settings settings = keyblend::compression_settings::for_height(float(height));
    if (o.precision) settings.precision = float(*o.precision);
    if (o.shell) settings.shell_distance = float(*o.shell);
    keyblend::package_contents in;
    in.skeleton = m.skeleton;
    in.clips = m.clips;
    in.settings = settings;
    std::vector<keyblend::compression_report> reports;
    in.reports = &reports;
    std::vector<keyblend::io::mesh> copies;
    in.meshes = io_meshes(m, copies);
    const keyblend::result<std::vector<unsigned char>> bytes = keyblend::write_package(in);
    if (!bytes) {
        std::fprintf(stderr, "keyblend: %s: %s\n", o.file.c_str(), bytes.error().message.c_str());
        return exit_file;
    }
    std::FILE* f = std::fopen(o.out.c_str(), "wb");
    const bool written = f && std::fwrite(bytes->data(), 1, bytes->size(), f) == bytes->size();
    if (f && std::fclose(f) != 0) f = nullptr;
    if (!written || !f) {
        std::fprintf(stderr, "keyblend: %s: cannot write the package\n", o.out.c_str());
        return exit_file;
    }
    const double cm = height / 180.0;
    std::printf("%s: %zu bytes; %zu joints, %zu clips, %zu meshes; height %g units (1 cm-eq = %g units): precision "
                "%g units (%g cm-eq), shell %g units (%g cm-eq)\n",
                o.out.c_str(), bytes->size(), m.skeleton->size(), m.clips.size(), in.meshes.size(), height, cm,
                double(settings.precision), double(settings.precision) / cm, double(settings.shell_distance),
                double(settings.shell_distance) / cm);
    bool all_met = true;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const keyblend::compression_report& r = reports[i];
        all_met = all_met && r.stats.bound_met;
        std::printf("  '%s': %zu -> %zu bytes, largest error %.4g units (%.4g cm-eq)%s\n", m.clips[i]->name.c_str(),
                    r.stats.source_key_bytes, r.bytes, double(r.stats.max_error), double(r.stats.max_error) / cm,
                    r.stats.bound_met ? "" : ": over the bound");
        for (const std::string& note : r.notes) std::printf("    %s\n", note.c_str());
    }
    return all_met ? exit_ok : exit_file;
}

int info_package(const options& o, const model& m) {
    const keyblend::package& p = m.package->contents();
    const keyblend::skeleton& s = *m.skeleton;
    const auto joint_name = [&](std::size_t j) { return j < s.size() ? s.name(j) : std::string(); };
    if (o.json) {
        json out;
        out["importer"] = "package";
        out["format"] = "package";
        out["bytes"] = p.size();
        out["frames"] = s.size();
        out["meshes"] = json::array();
        for (const keyblend::io::mesh& mesh : m.package_meshes)
            out["meshes"].push_back({{"name", mesh.name},
                                     {"vertices", mesh.positions.size()},
                                     {"faces", mesh.indices.size() / 3},
                                     {"bones", mesh.skin.bones.size()}});
        out["animation_sets"] = json::array();
        for (const keyblend::compressed_clip& c : m.compressed) {
            const keyblend::compressed_stats st = c.stats();
            out["animation_sets"].push_back(
                {{"name", std::string(c.name())},
                 {"ticks_per_second", c.ticks_per_second_is_default() ? json(nullptr) : json(c.ticks_per_second())},
                 {"duration_ticks", c.duration()},
                 {"bytes", c.size()},
                 {"source_key_bytes", st.source_key_bytes},
                 {"precision", st.precision},
                 {"shell_distance", st.shell_distance},
                 {"max_error", st.max_error},
                 {"max_error_joint", st.max_error_joint == keyblend::error::no_index ? json(nullptr) : json(joint_name(st.max_error_joint))},
                 {"max_error_seconds", seconds(st.max_error_time, c.ticks_per_second())},
                 {"weight_precision", st.weight_precision},
                 {"max_weight_error", st.max_weight_error},
                 {"bound_met", st.bound_met},
                 {"samples", st.samples},
                 {"segments", st.segments}});
        }
        std::cout << out.dump(2) << '\n';
        return exit_ok;
    }
    std::printf("%s: keyblend package, %zu bytes\n", o.file.c_str(), p.size());
    std::printf("frames: %zu\n", s.size());
    std::printf("meshes: %zu\n", m.package_meshes.size());
    for (const keyblend::io::mesh& mesh : m.package_meshes)
        std::printf("  '%s': %zu vertices, %zu triangles, %zu bones, %zu influences per vertex\n", mesh.name.c_str(),
                    mesh.positions.size(), mesh.indices.size() / 3, mesh.skin.bones.size(), mesh.skin.influences_per_vertex);
    std::printf("animation sets: %zu\n", m.compressed.size());
    for (const keyblend::compressed_clip& c : m.compressed) {
        const keyblend::compressed_stats st = c.stats();
        std::printf("  '%s': %g ticks per second, %g ticks; %zu bytes (from %zu of keys), %zu samples; largest error "
                    "%.4g (bound %.4g at shell %.4g)%s, at '%s', %.3f s\n",
                    std::string(c.name()).c_str(), double(c.ticks_per_second()), double(c.duration()), c.size(),
                    st.source_key_bytes, st.samples, double(st.max_error), double(st.precision), double(st.shell_distance),
                    st.bound_met ? "" : " (over the bound)", joint_name(st.max_error_joint).c_str(),
                    seconds(st.max_error_time, c.ticks_per_second()));
    }
    return exit_ok;
}

} // namespace tool
