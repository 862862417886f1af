// keyblend's main demo: the whole classic pipeline on a real model, without a GPU.
//
//   load a rigged .X model -> play its animation sets (crossfading from one to the next) ->
//   hierarchy -> skinning palette -> skin every mesh on the CPU -> draw the frames into one PNG
//
// Usage: keyblend_demo [FILE.x | --builtin] [--frames N] [--size PIXELS] [--out FILE.png] [--strict]
//
// FILE defaults to the DirectX SDK's tiny.x in the test data folder (KEYBLEND_DEFAULT_MODEL, set by
// the build); without it (or with --builtin) the demo builds a model in code (a tube bending on
// four bones), so it runs anywhere. The loader repairs what has an obvious repair and drops what it
// cannot read, and the demo prints each warning; --strict makes the first such problem an error
// instead. The picture goes to keyblend_demo.png beside the executable unless --out says
// otherwise. It prints what it loaded and what each stage of a frame cost.
#include <keyblend/io/xfile.hpp>
#include <keyblend/keyblend.hpp>
#include <keyblend/skin.hpp>

#include "posed_mesh.hpp"
#include "raster.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// A model built in code: a tube along +y, skinned to a chain of four bones, with one clip that
// bends the chain back and forth. What the demo shows when there is no .X file to load.
keyblend::io::xfile make_tube() {
    keyblend::io::xfile f;
    std::vector<keyblend::joint_desc> joints;
    for (int b = 0; b < 4; ++b)
        joints.push_back({"bone" + std::to_string(b), b - 1,
                          glm::translate(glm::mat4(1.0f), glm::vec3(0.0f, b == 0 ? 0.0f : 1.0f, 0.0f))});
    f.skeleton = keyblend::skeleton::from_parents(joints).value();

    keyblend::io::xfile_mesh m;
    m.name = "tube";
    constexpr int rings = 33, sides = 16;
    for (int r = 0; r < rings; ++r)
        for (int s = 0; s < sides; ++s) {
            const float a = 6.2831853f * float(s) / sides, y = 4.0f * float(r) / (rings - 1);
            m.positions.emplace_back(0.3f * std::cos(a), y, 0.3f * std::sin(a));
            m.normals.emplace_back(std::cos(a), 0.0f, std::sin(a));
        }
    for (int r = 0; r + 1 < rings; ++r)
        for (int s = 0; s < sides; ++s) {
            const std::uint32_t a = std::uint32_t(r * sides + s), b = std::uint32_t(r * sides + (s + 1) % sides);
            m.indices.insert(m.indices.end(), {a, b + sides, b, a, a + sides, b + sides});
        }
    m.face_count = m.indices.size() / 3;
    keyblend::io::mesh_skin& skin = m.skin;
    skin.influences_per_vertex = 2;
    for (int b = 0; b < 4; ++b) // offset: model space -> the bone's bind space
        skin.bones.push_back({"bone" + std::to_string(b), std::size_t(b),
                              glm::inverse(f.skeleton.bind_model()[std::size_t(b)])});
    for (const glm::vec3& p : m.positions) {
        // Each vertex between the two nearest bone origins, weighted by distance.
        const float y = std::min(std::max(p.y - 0.5f, 0.0f), 2.999f);
        const int b = int(y);
        const float t = y - float(b);
        skin.bone_indices.insert(skin.bone_indices.end(), {std::uint16_t(b), std::uint16_t(b + 1)});
        skin.weights.insert(skin.weights.end(), {1.0f - t, t});
    }
    f.meshes.push_back(std::move(m));

    keyblend::io::xfile_animation_set set;
    set.clip.name = "Bend";
    set.clip.ticks_per_second = 4800.0f;
    for (std::size_t b = 1; b < 4; ++b) {
        keyblend::channel ch;
        ch.joint = b;
        for (int k = 0; k <= 8; ++k) {
            const float angle = 0.45f * std::sin(6.2831853f * float(k) / 8.0f + float(b));
            ch.rotation.push_back(float(k) * 600.0f, glm::angleAxis(angle, glm::vec3(0, 0, 1)));
        }
        set.clip.channels.push_back(ch);
    }
    set.clip.duration = keyblend::last_key_time(set.clip);
    f.animation_sets.push_back(std::move(set));
    return f;
}

struct options {
    std::string file;
    std::string out;
    int frames = 8;
    int size = 256;
    bool strict = false;
};

bool parse(int argc, char** argv, options& o) {
    const std::string here = argv[0];
    const std::size_t slash = here.find_last_of('/');
    o.out = (slash == std::string::npos ? std::string() : here.substr(0, slash + 1)) + "keyblend_demo.png";
#ifdef KEYBLEND_DEFAULT_MODEL
    o.file = KEYBLEND_DEFAULT_MODEL;
#endif
    bool file_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--frames" && has_value) o.frames = std::atoi(argv[++i]);
        else if (a == "--size" && has_value) o.size = std::atoi(argv[++i]);
        else if (a == "--out" && has_value) o.out = argv[++i];
        else if (a == "--strict") o.strict = true;
        else if (a == "--builtin" && !file_given) {
            o.file.clear();
            file_given = true;
        }
        else if (a == "--help" || a == "-h" || (a.size() > 1 && a[0] == '-') || file_given) return false;
        else {
            o.file = a;
            file_given = true;
        }
    }
    if (o.frames < 1 || o.frames > 64 || o.size < 32 || o.size > 2048) return false;
    if (!file_given && !o.file.empty()) { // no test data: the tube
        std::FILE* f = std::fopen(o.file.c_str(), "rb");
        if (f) std::fclose(f);
        else o.file.clear();
    }
    return true;
}

using clock_type = std::chrono::steady_clock;
double micros(clock_type::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

} // namespace

int main(int argc, char** argv) {
    options opt;
    if (!parse(argc, argv, opt)) {
        std::fprintf(stderr, "usage: %s [FILE.x | --builtin] [--frames N (1-64)] [--size PIXELS (32-2048)] "
                             "[--out FILE.png] [--strict]\n", argv[0]);
        return 2;
    }

    // 1. Load.
    keyblend::io::xfile model;
    if (opt.file.empty()) {
        std::printf("using a tube built in code (no .X file given, or --builtin)\n");
        model = make_tube();
    } else {
        keyblend::io::load_options load_options;
        if (opt.strict) load_options.mode = keyblend::io::parse_mode::strict;
        const auto start = clock_type::now();
        auto loaded = keyblend::io::load_xfile(opt.file, load_options);
        if (!loaded) {
            if (opt.strict)
                std::fprintf(stderr, "%s\n(without --strict the loader repairs or drops what it can, with a warning)\n",
                             loaded.error().message.c_str());
            else
                std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
            return 1;
        }
        model = std::move(*loaded);
        std::printf("%s: %s, loaded in %.1f ms\n", opt.file.c_str(), keyblend::io::to_string(model.format),
                    micros(clock_type::now() - start) / 1000.0);
        for (const keyblend::error& w : model.warnings) std::printf("  warning: %s\n", w.message.c_str());
    }
    const keyblend::skeleton& skeleton = model.skeleton;
    std::size_t vertices = 0, triangles = 0;
    for (const auto& m : model.meshes) {
        vertices += m.positions.size();
        triangles += m.indices.size() / 3;
    }
    std::printf("%zu joints, %zu meshes (%zu vertices, %zu triangles), %zu animation sets\n", skeleton.size(),
                model.meshes.size(), vertices, triangles, model.animation_sets.size());

    // 2. The sets, played by a player: the first one, crossfading into the next half-way through.
    std::vector<keyblend::clip> sets;
    for (auto& s : model.animation_sets)
        if (!s.clip.channels.empty()) sets.push_back(s.clip);
    auto created = keyblend::player::create(skeleton, sets);
    if (!created) {
        std::fprintf(stderr, "%s\n", created.error().message.c_str());
        return 1;
    }
    keyblend::player player = std::move(*created);
    double length = 0.0;
    for (const keyblend::clip& c : sets) {
        std::printf("  set '%s': %zu animated joints, %.0f ticks at %.0f ticks/s%s\n", c.name.c_str(),
                    c.channels.size(), double(c.duration), double(c.ticks_per_second),
                    c.ticks_per_second_is_default ? " (the file gives none: D3DX's default)" : "");
        length = std::max(length, double(c.duration));
    }
    if (!sets.empty() && !player.set_animation(nullptr, 0.0)) return 1;
    if (length <= 0.0) length = 1.0;
    const bool fade = sets.size() > 1;

    // 3. Per frame: pose, palette, skin (examples/posed_mesh.hpp). The buffers are sized once.
    using skinned = examples::posed_mesh;
    std::vector<skinned> out(model.meshes.size());
    std::vector<std::vector<skinned>> frames; // every frame's skinned meshes, to frame the camera
    double pose_us = 0, skin_us = 0;
    for (int frame = 0; frame < opt.frames; ++frame) {
        const double t = length * frame / opt.frames;
        auto start = clock_type::now();
        if (fade && frame == opt.frames / 2 && !player.fade_to(sets[1].name.c_str(), t, length / 4))
            return 1;
        if (auto st = player.update_animation(t); !st) {
            std::fprintf(stderr, "%s\n", st.error().message.c_str());
            return 1;
        }
        const std::vector<glm::mat4>& joint_model = player.model();
        auto posed = clock_type::now();
        // (The first frame binds contexts, sizes buffers and validates the skins: not timed.)
        if (frame > 0) pose_us += micros(posed - start);
        for (std::size_t i = 0; i < model.meshes.size(); ++i) {
            std::string check;
            if (auto st = examples::pose_mesh(model.meshes[i], joint_model, out[i], frame == 0 ? &check : nullptr); !st) {
                std::fprintf(stderr, "%s\n", st.error().message.c_str());
                return 1;
            }
            if (!check.empty()) std::printf("  mesh '%s': %s\n", model.meshes[i].name.c_str(), check.c_str());
        }
        if (frame > 0) skin_us += micros(clock_type::now() - posed);

        frames.push_back(out);
    }

    // 4. Draw: a camera that frames every frame, looking at the model from the side (y up, as in
    //    Direct3D, unless the model is flat in y; along the thinner of the other two axes).
    std::vector<glm::vec3> all_points;
    for (const auto& posed_meshes : frames)
        for (const skinned& s : posed_meshes) all_points.insert(all_points.end(), s.positions.begin(), s.positions.end());
    const raster::camera cam = raster::frame_points(all_points);
    const int columns = opt.frames < 4 ? opt.frames : 4, rows = (opt.frames + columns - 1) / columns;
    raster::image sheet(opt.size * columns, opt.size * rows);
    for (int frame = 0; frame < opt.frames; ++frame) {
        raster::image picture(opt.size, opt.size);
        for (std::size_t i = 0; i < model.meshes.size(); ++i)
            raster::draw_mesh(picture, cam, frames[std::size_t(frame)][i].positions, frames[std::size_t(frame)][i].normals,
                              model.meshes[i].indices,
                              model.meshes[i].is_skinned() ? glm::vec3(0.85f, 0.7f, 0.55f) : glm::vec3(0.6f, 0.7f, 0.85f));
        sheet.paste(picture, (frame % columns) * opt.size, (frame / columns) * opt.size);
    }
    if (opt.frames > 1)
        std::printf("per frame after the first: pose (sample, blend, hierarchy) %.1f us, palette + "
                    "skinning %.1f us for %zu vertices (a few frames, not a benchmark: see bench/)\n",
                    pose_us / (opt.frames - 1), skin_us / (opt.frames - 1), vertices);
    if (std::string error; !sheet.write_png(opt.out, error)) {
        std::fprintf(stderr, "cannot write %s: %s\n", opt.out.c_str(), error.c_str());
        return 1;
    }
    std::printf("wrote %s: %d frames over %.0f ticks%s\n", opt.out.c_str(), opt.frames, length,
                fade ? ", crossfading into the next set half-way" : "");
    return 0;
}
