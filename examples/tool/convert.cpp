// keyblend convert: any input the tool reads (.X, glTF, BVH, a package, assimp's formats) into glTF
// 2.0 through gltf::write, one file or many, with a summary per file of what was converted,
// repaired and dropped, by the loader and by the writer.
//
// SPDX-License-Identifier: MIT
#include "keyblend_tool.hpp"
#include "image.hpp"

#include <png.h>

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tool {
#ifdef KEYBLEND_TOOL_GLTF
namespace {

/// The input's file name without its folder and extension.
std::string stem_of(const std::string& path) {
    const std::size_t slash = path.find_last_of("/\\");
    std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
    const std::size_t dot = name.rfind('.');
    return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

/// The loader's warnings with what each did (assimp's and a package's carry no action: "warning").
struct warning_line {
    const char* kind;
    std::string message;
};
std::vector<warning_line> loader_warnings(const model& m) {
    std::vector<warning_line> out;
    const auto add = [&](const std::vector<keyblend::io::load_warning>& ws) {
        for (const keyblend::io::load_warning& w : ws) out.push_back({keyblend::io::to_string(w.action), w.message});
    };
    if (m.x) add(m.x->warnings);
    else if (m.b) add(m.b->warnings);
    else if (m.g) add(m.g->warnings);
    else
        for (const keyblend::error& e : m.warnings) out.push_back({"warning", e.message});
    return out;
}

/// A decoded texture as a PNG file's bytes (RGB when every pixel is opaque), through libpng.
bool encode_png(const rgba_image& image, std::vector<unsigned char>& out, std::string& why) {
    std::vector<unsigned char> rgb;
    const unsigned char* pixels = image.pixels.data();
    if (image.opaque) {
        rgb.resize(image.pixels.size() / 4 * 3);
        for (std::size_t i = 0, n = image.pixels.size() / 4; i < n; ++i)
            std::memcpy(&rgb[3 * i], &image.pixels[4 * i], 3);
        pixels = rgb.data();
    }
    png_image png{};
    png.version = PNG_IMAGE_VERSION;
    png.width = image.width;
    png.height = image.height;
    png.format = image.opaque ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
    png_alloc_size_t size = 0;
    if (png_image_write_get_memory_size(png, size, 0, pixels, 0, nullptr)) {
        out.resize(size);
        if (png_image_write_to_memory(&png, out.data(), &size, 0, pixels, 0, nullptr)) {
            out.resize(size);
            return true;
        }
    }
    why = png.message;
    png_image_free(&png);
    return false;
}

/// The largest texture file convert embeds.
constexpr std::uintmax_t max_texture_bytes = std::uintmax_t{1} << 30;

/// The texture files the meshes name, looked for beside the model by io::texture_path_segments.
/// PNG and JPEG ones go into a .glb (`glb`: one file) as they are, a .gltf refers to them by URI;
/// DDS, BMP and TGA ones, which glTF's core cannot hold, go into either converted to PNG
/// (image.hpp; a .gltf's into its buffer). The meshes using an image are copied into `own`
/// with it set. A note for each texture, saying what became of it; one that is missing, of
/// another type or not decoded stays a URI.
void find_textures(const std::string& model_file, bool glb, std::vector<const keyblend::io::mesh*>& meshes,
                   std::vector<keyblend::io::mesh>& own, std::vector<warning_line>& notes) {
    namespace fs = std::filesystem;
    using image = std::shared_ptr<const keyblend::io::embedded_image>;
    const char* container = glb ? "the .glb" : "the .gltf";
    const char* holder = glb ? "the .glb" : "the .gltf's buffer";
    std::map<std::string, image> seen;
    const auto look_up = [&](const std::string& name) -> image {
        if (const auto found = seen.find(name); found != seen.end()) return found->second;
        image& result = seen[name];
        fs::path path = fs::path(model_file).parent_path();
        for (const std::string& part : keyblend::io::texture_path_segments(name)) path /= part;
        path = path.lexically_normal();
        const std::string shown = "'" + name + "' (" + path.string() + ")";
        const auto keep_uri = [&](const std::string& why) {
            notes.push_back({"note", shown + ": " + why + "; " + container + " refers to it by URI"});
            return result;
        };
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) return keep_uri(fs::exists(path, ec) ? "not a file" : "no such file");
        const std::uintmax_t size = fs::file_size(path, ec);
        if (ec) return keep_uri("its size cannot be read");
        std::ifstream in(path, std::ios::binary);
        if (!in) return keep_uri("cannot be opened");
        unsigned char head[8] = {};
        in.read(reinterpret_cast<char*>(head), sizeof head);
        const char* type = keyblend::io::image_type_of(head, static_cast<std::size_t>(in.gcount()));
        if (type && !glb) return result;
        if (size > max_texture_bytes) return keep_uri("larger than " + std::to_string(max_texture_bytes >> 20) + " MiB");
        std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
        in.clear();
        in.seekg(0);
        in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
        if (static_cast<std::uintmax_t>(in.gcount()) != size) return keep_uri("cannot be read");
        auto made = std::make_shared<keyblend::io::embedded_image>();
        std::string what;
        if (type) {
            made->mime_type = type;
            made->bytes = std::move(bytes);
        } else {
            // DDS, BMP and TGA (told by their first bytes; a TGA, which has none, by its name or footer).
            std::string ext = path.extension().string();
            for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            rgba_image decoded;
            std::string why;
            if (!decode_image(bytes.data(), bytes.size(), ext == ".tga", decoded, why))
                return keep_uri("not converted to PNG: " + why + " (viewers may not show it)");
            if (!encode_png(decoded, made->bytes, why)) return keep_uri("its PNG could not be written: " + why);
            made->mime_type = "image/png";
            what = "a " + decoded.kind + ", " + std::to_string(decoded.width) + " x " +
                   std::to_string(decoded.height) + ", converted to ";
        }
        notes.push_back({"note", shown + ": " + what + std::to_string(made->bytes.size()) + " bytes of " +
                                     made->mime_type + ", embedded in " + holder});
        result = std::move(made);
        return result;
    };
    own.reserve(meshes.size()); // (the pointers to its meshes stay valid)
    for (const keyblend::io::mesh*& m : meshes) {
        keyblend::io::mesh* copy = nullptr;
        for (std::size_t i = 0; i < m->materials.size(); ++i) {
            const keyblend::io::material& x = m->materials[i];
            if (x.texture_file.empty() || x.texture_image) continue;
            const image found = look_up(x.texture_file);
            if (!found) continue;
            if (!copy) copy = &own.emplace_back(*m);
            copy->materials[i].texture_image = found;
        }
        if (copy) m = copy;
    }
}

/// Converts o.file into o.out: the command run_isolated runs for one input.
int convert_one(const options& o) {
    const std::unique_ptr<model> m = load_model(o);
    if (!m) {
        std::printf("%s: failed (not read)\n", o.file.c_str());
        return exit_file;
    }
    keyblend::gltf::asset a;
    a.skeleton = m->skeleton;
    std::vector<keyblend::io::mesh> copies;
    a.meshes = io_meshes(*m, copies);
    a.clips = m->clips;
    keyblend::gltf::write_options wo;
    wo.mode = o.strict ? keyblend::io::parse_mode::strict : keyblend::io::parse_mode::lenient;
    const bool left = o.handedness ? *o.handedness == "left" : is_left_handed(*m);
    wo.source = left ? keyblend::gltf::handedness::left : keyblend::gltf::handedness::right;
    const std::string& out = o.out;
    const bool gltf = out.size() >= 5 && (out.substr(out.size() - 5) == ".gltf" || out.substr(out.size() - 5) == ".GLTF");
    std::vector<keyblend::io::mesh> with_images;
    std::vector<warning_line> texture_notes;
    find_textures(o.file, !gltf, a.meshes, with_images, texture_notes);
    const keyblend::result<keyblend::gltf::write_report> r =
        keyblend::gltf::write(out, a, gltf ? keyblend::gltf::container::gltf : keyblend::gltf::container::glb, wo);
    if (!r) {
        std::fprintf(stderr, "keyblend: %s: %s\n", o.file.c_str(), r.error().message.c_str());
        std::printf("%s: failed (not written): %s\n", o.file.c_str(), r.error().message.c_str());
        return exit_file;
    }
    const std::vector<warning_line> loaded = loader_warnings(*m);
    std::size_t repaired = 0, dropped = 0, notes = 0;
    const auto count = [&](const char* kind) {
        const std::string k = kind;
        repaired += k == "repaired";
        dropped += k == "dropped";
        notes += k == "note" || k == "warning";
    };
    for (const warning_line& w : loaded) count(w.kind);
    for (const warning_line& w : texture_notes) count(w.kind);
    for (const keyblend::io::load_warning& w : r->warnings) count(keyblend::io::to_string(w.action));
    std::printf("%s -> %s: converted (%s): %zu nodes, %zu meshes (%zu primitives), %zu skins, %zu materials, "
                "%zu animations (%zu channels, %zu keys); %zu repaired, %zu dropped, %zu notes\n",
                o.file.c_str(), out.c_str(), left ? "mirrored from left-handed" : "right-handed, as it is", r->nodes,
                r->meshes, r->primitives, r->skins, r->materials, r->animations, r->channels, r->keys, repaired, dropped,
                notes);
    for (const warning_line& w : loaded) std::printf("  load %s: %s\n", w.kind, w.message.c_str());
    for (const warning_line& w : texture_notes) std::printf("  texture %s: %s\n", w.kind, w.message.c_str());
    for (const keyblend::io::load_warning& w : r->warnings)
        std::printf("  write %s: %s\n", keyblend::io::to_string(w.action), w.message.c_str());
    std::fflush(stdout);
    return exit_ok;
}

} // namespace

int convert(const options& o) {
    const bool progress = o.progress || isatty(fileno(stderr));
    std::size_t failed = 0;
    std::set<std::string> written;
    for (std::size_t i = 0; i < o.inputs.size(); ++i) {
        options one = o;
        one.file = o.inputs[i];
        one.out = o.out_dir.empty() ? o.out : o.out_dir + "/" + stem_of(one.file) + "." + o.format;
        if (progress) std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, o.inputs.size(), one.file.c_str());
        // Two inputs of one name would write one file: the later one fails instead.
        if (!written.insert(one.out).second) {
            std::fprintf(stderr, "keyblend: %s: %s is written already from another input\n", one.file.c_str(),
                         one.out.c_str());
            std::printf("%s: failed (not written): %s is written already from another input\n", one.file.c_str(),
                        one.out.c_str());
            ++failed;
            continue;
        }
        const int code = reads_with_assimp(one) ? run_isolated(one, convert_one) : convert_one(one);
        if (code != exit_ok) ++failed;
    }
    std::printf("%zu converted, %zu failed\n", o.inputs.size() - failed, failed);
    return failed ? exit_file : exit_ok;
}
#else
int convert(const options&) {
    std::fprintf(stderr, "keyblend: this keyblend was built without keyblend::gltf (simdjson), which convert needs\n");
    return exit_file;
}
#endif

} // namespace tool
