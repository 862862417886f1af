// The whole pipeline on every .X file the tests know, printed as numbers, so that builds in other
// configurations (GLM settings, -ffast-math, no exceptions, another compiler or instruction set)
// can be compared with the default build (tests/CMakeLists.txt, KEYBLEND_TEST_CONFIGS).
//
//     pipeline_digest <out.txt>                       write the digest
//     pipeline_digest <out.txt> --compare <ref.txt> [--tolerance T]
//                                                     write it, then compare with a reference
//
// For each file (tests/data/sample.x, and KEYBLEND_DATA_DIR's files when present): the load's
// outcome (the error message, or the counts); for each animation set at five times: sample_clip ->
// local_to_model (model matrices), sample_local_matrices (the classic matrices), a 50/50 blend_job of
// the set with the next one, and every skinned mesh skinned with the blended pose's palette
// (positions and normals of up to 64 vertices spread over the mesh, and their sums). Comparison:
// the same lines and words, and numbers equal within a tolerance (2e-5 unless --tolerance) x the
// line's largest magnitude (at least 1): the configurations differ in rounding only (SIMD matrix
// products with GLM_FORCE_INTRINSICS, -ffast-math's contractions and reassociations).
#include <keyblend/io/xfile.hpp>
#include <keyblend/keyblend.hpp>
#include <keyblend/skin.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct digest {
    std::ostringstream out;

    void line(const std::string& label, const float* v, std::size_t n) {
        out << label;
        char text[32];
        for (std::size_t i = 0; i < n; ++i) {
            std::snprintf(text, sizeof text, " %.9g", static_cast<double>(v[i]));
            out << text;
        }
        out << '\n';
    }
    void mat(const std::string& label, const glm::mat4& m) {
        float v[16];
        for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 4; ++r) v[c * 4 + r] = m[c][r];
        line(label, v, 16);
    }
    void vec(const std::string& label, const glm::vec3& p) {
        const float v[3] = {p.x, p.y, p.z};
        line(label, v, 3);
    }
};

/// Skins every skinned mesh of `file` with the palette of `model`, into the digest.
void skin_meshes(digest& d, const keyblend::io::xfile& file, const std::vector<glm::mat4>& model,
                 const std::string& at) {
    std::vector<glm::mat4> palette;
    for (std::size_t m = 0; m < file.meshes.size(); ++m) {
        const keyblend::io::xfile_mesh& mesh = file.meshes[m];
        if (!mesh.is_skinned()) continue;
        const std::string mesh_at = at + " mesh " + std::to_string(m);
        palette.resize(mesh.skin.bones.size());
        keyblend::palette_job matrices;
        matrices.model = model;
        matrices.bones = mesh.skin.bones;
        matrices.output = palette;
        if (!matrices.run()) {
            d.out << mesh_at << " palette failed\n";
            continue;
        }
        const std::size_t n = mesh.positions.size(), k = mesh.skin.influences_per_vertex;
        std::vector<glm::vec3> positions(n), normals(mesh.normals.size());
        keyblend::skinning_job<std::uint16_t> skin;
        skin.influences = k;
        skin.joints = keyblend::make_span(mesh.skin.bone_indices, k);
        skin.weights = keyblend::make_span(mesh.skin.weights, k);
        skin.in_positions = keyblend::make_span(mesh.positions);
        skin.out_positions = keyblend::make_span(positions);
        if (!mesh.normals.empty()) {
            skin.in_normals = keyblend::make_span(mesh.normals);
            skin.out_normals = keyblend::make_span(normals);
        }
        skin.palette = palette;
        if (auto st = skin.run(); !st) {
            d.out << mesh_at << " skin failed: " << st.error().message << '\n';
            continue;
        }
        glm::vec3 sum(0.0f), normal_sum(0.0f);
        for (std::size_t v = 0; v < n; ++v) sum += positions[v];
        for (const glm::vec3& nv : normals) normal_sum += nv;
        d.vec(mesh_at + " position_sum", sum / static_cast<float>(std::max<std::size_t>(n, 1)));
        d.vec(mesh_at + " normal_sum", normal_sum / static_cast<float>(std::max<std::size_t>(n, 1)));
        const std::size_t step_v = std::max<std::size_t>(1, n / 64);
        for (std::size_t v = 0; v < n; v += step_v) {
            d.vec(mesh_at + " position " + std::to_string(v), positions[v]);
            if (!normals.empty()) d.vec(mesh_at + " normal " + std::to_string(v), normals[v]);
        }
    }
}

void run_pipeline(digest& d, const std::string& path, const std::string& name) {
    keyblend::io::load_options options;
    auto file = keyblend::io::load_xfile(path, options);
    if (!file) {
        // The message names the file by its path: keep only what follows it.
        const std::string& m = file.error().message;
        d.out << name << " error " << m.substr(std::min(m.size(), path.size())) << '\n';
        return;
    }
    const keyblend::skeleton& s = file->skeleton;
    d.out << name << " joints " << s.size() << " meshes " << file->meshes.size() << " sets "
          << file->animation_sets.size() << '\n';
    const std::size_t sets = file->animation_sets.size();
    std::vector<keyblend::sampling_context> contexts(sets);
    keyblend::local_pose a, b, blended;
    const keyblend::local_pose bind(s);
    std::vector<glm::mat4> model(s.size()), local(s.size());
    // Each stage is a job; the digest runs them as a program would.
    const auto hierarchy = [&](const keyblend::local_pose* pose) {
        keyblend::local_to_model_job job;
        job.skeleton = &s;
        job.input = pose;
        if (!pose) job.input_matrices = s.bind_local();
        job.output = model;
        return job.run();
    };
    const auto sample = [&](const keyblend::clip& c, float t, keyblend::sampling_context& context, keyblend::local_pose& out) {
        keyblend::sampling_job job;
        job.clip = &c;
        job.skeleton = &s;
        job.time = t;
        job.context = &context;
        job.output = &out;
        return job.run();
    };
    if (!hierarchy(nullptr)) d.out << name << " hierarchy failed\n";
    for (std::size_t j = 0; j < s.size(); ++j) d.mat(name + " bind model " + std::to_string(j), model[j]);
    skin_meshes(d, *file, model, name + " bind");
    for (std::size_t set = 0; set < sets; ++set) {
        const keyblend::clip& c = file->animation_sets[set].clip;
        const keyblend::clip& next = file->animation_sets[(set + 1) % sets].clip;
        for (int step = 0; step < 5; ++step) {
            const float t = c.duration * static_cast<float>(step) / 4.0f;
            const std::string at = name + " set " + std::to_string(set) + " t " + std::to_string(step);
            if (!sample(c, t, contexts[set], a)) d.out << at << " sample_clip failed\n";
            if (!hierarchy(&a)) d.out << at << " hierarchy failed\n";
            for (std::size_t j = 0; j < s.size(); ++j) d.mat(at + " model " + std::to_string(j), model[j]);
            if (!keyblend::sample_local_matrices(c, s, t, local)) d.out << at << " sample_local failed\n";
            for (std::size_t j = 0; j < s.size(); ++j) d.mat(at + " local " + std::to_string(j), local[j]);

            keyblend::sampling_context next_context;
            if (!sample(next, next.duration * 0.5f, next_context, b))
                d.out << at << " sample_clip (next) failed\n";
            const keyblend::blend_layer layers[] = {{&a, 0.5f}, {&b, 0.5f}};
            keyblend::blend_job job;
            job.rest_pose = &bind;
            job.layers = layers;
            job.output = &blended;
            if (!job.run()) d.out << at << " blend failed\n";
            if (!hierarchy(&blended)) d.out << at << " hierarchy failed\n";
            for (std::size_t j = 0; j < s.size(); ++j) d.mat(at + " blended " + std::to_string(j), model[j]);

            skin_meshes(d, *file, model, at);
        }
    }
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

bool parse_float(const std::string& w, double& v) {
    char* end = nullptr;
    v = std::strtod(w.c_str(), &end);
    return end && *end == '\0' && end != w.c_str();
}

/// Compares two digests; prints the first differences. True when they agree.
bool compare(const std::string& ours, const std::string& reference, double tolerance) {
    const std::vector<std::string> a = split_lines(ours), b = split_lines(reference);
    if (a.size() != b.size())
        std::printf("line counts differ: %zu here, %zu in the reference\n", a.size(), b.size());
    std::size_t differences = 0;
    double worst = 0.0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        std::istringstream wa(a[i]), wb(b[i]);
        std::vector<std::string> x, y;
        for (std::string w; wa >> w;) x.push_back(w);
        for (std::string w; wb >> w;) y.push_back(w);
        bool same = x.size() == y.size();
        // The line's scale: its largest number (a model matrix's translation is the model's size,
        // which its other columns' rounding follows), at least 1.
        double scale = 1.0;
        for (std::size_t w = 0; same && w < x.size(); ++w) {
            double p, q;
            if (parse_float(x[w], p) && parse_float(y[w], q))
                scale = std::max(scale, std::max(std::fabs(p), std::fabs(q)));
        }
        for (std::size_t w = 0; same && w < x.size(); ++w) {
            double p, q;
            if (x[w] == y[w]) {
                // the same text: equal (also "nan" and "nan", which as numbers never are)
            } else if (parse_float(x[w], p) && parse_float(y[w], q)) {
                const double e = std::fabs(p - q) / scale;
                if (!(e <= tolerance)) same = false; // NaN never matches
                worst = std::max(worst, e);
            } else {
                same = x[w] == y[w];
            }
        }
        if (!same && ++differences <= 10)
            std::printf("line %zu differs:\n  here:      %s\n  reference: %s\n", i + 1, a[i].c_str(),
                        b[i].c_str());
    }
    std::printf("%zu lines compared, %zu differ (tolerance %.3g); largest relative difference %.3g\n",
                std::min(a.size(), b.size()), differences, tolerance, worst);
    return differences == 0 && a.size() == b.size();
}

} // namespace

int main(int argc, char** argv) {
    // The default tolerance suits builds of one compiler and instruction set (GLM settings,
    // -ffast-math, exceptions); another compiler for another instruction set (no FMA contraction,
    // other SIMD kernels) rounds differently through a skeleton's chain of products: CI gives it
    // 1e-4.
    double tolerance = 2e-5;
    const bool usage = argc == 2 || (argc == 4 && std::string(argv[2]) == "--compare") ||
                       (argc == 6 && std::string(argv[2]) == "--compare" && std::string(argv[4]) == "--tolerance" &&
                        (tolerance = std::strtod(argv[5], nullptr)) > 0.0);
    if (!usage) {
        std::fprintf(stderr, "usage: %s <out.txt> [--compare <reference.txt> [--tolerance T]]\n", argv[0]);
        return 2;
    }
    std::printf("sizeof(glm::vec3) = %zu, sizeof(glm::quat) = %zu\n", sizeof(glm::vec3), sizeof(glm::quat));
    digest d;
    run_pipeline(d, std::string(KEYBLEND_TESTS_DIR) + "/data/sample.x", "sample.x");
    const char* files[] = {"directx-sdk-legacy-samples/tiny.x",        "directx-sdk-legacy-samples/wall_with_pillars.x",
                           "directx-sdk-legacy-samples/shapes1.x",     "directx-sdk-legacy-samples/sphere.x",
                           "assimp/Testwuson.X",                       "assimp/BCN_Epileptic.X",
                           "assimp/anim_test.x",                       "assimp/test_cube_binary.x",
                           "assimp/test_cube_compressed.x",            "assimp/test_cube_text.x",
                           "assimp/malformed_skinweights_oob.x"};
    std::size_t found = 0;
    for (const char* f : files) {
        const std::string path = std::string(KEYBLEND_DATA_DIR) + "/" + f;
        if (!std::ifstream(path).good()) continue;
        ++found;
        run_pipeline(d, path, f);
    }
    std::printf("%zu of %zu shared .X files present\n", found, sizeof files / sizeof files[0]);
    const char* require = std::getenv("KEYBLEND_REQUIRE_DATA");
    if (found == 0 && require && std::string(require) == "1") {
        std::fprintf(stderr, "KEYBLEND_REQUIRE_DATA=1 but %s has none of the .X files\n", KEYBLEND_DATA_DIR);
        return 1;
    }
    const std::string text = d.out.str();
    std::ofstream(argv[1]) << text;
    if (argc >= 4) {
        std::ifstream ref(argv[3]);
        if (!ref) {
            std::fprintf(stderr, "cannot read the reference %s\n", argv[3]);
            return 1;
        }
        std::ostringstream r;
        r << ref.rdbuf();
        return compare(text, r.str(), tolerance) ? 0 : 1;
    }
    return 0;
}
