// keyblend — the command-line tool: what a model file holds, the pose of its skeleton at a time,
// and pictures of it moving.
//
//   keyblend info FILE [--json] [--strict] [--importer keyblend|assimp] [assimp limits]
//   keyblend pose FILE (--tick T | --time SECONDS) (--set NAME | --blend NAME:WEIGHT ...)
//                 [--json [--vertices]] [--strict] [--importer keyblend|assimp] [assimp limits]
//   keyblend render FILE [--set NAME | --blend NAME:WEIGHT ...] [--from T0] [--to T1]
//                   [--frames N] [--size WxH] [--bones] [--strict] [--importer ...] --out FILE
//   keyblend pack FILE -o OUT [--precision P] [--shell S] [--strict] [--importer ...]
//   keyblend convert FILE... (-o OUT.glb|OUT.gltf | --out-dir DIR [--format glb|gltf])
//                    [--handedness left|right] [--progress] [--strict] [--importer ...]
//   assimp limits: [--max-memory MIB] [--max-seconds S]
//
// .X, BVH, .gltf and .glb files go through keyblend's own loaders, every other format (and these
// with --importer assimp) through assimp (keyblend/assimp.hpp) when the tool is built with it, in a
// process of its own with limits (isolate.cpp): assimp's importers are not hardened.
// Packages (keyblend pack's output) are read in place (pack.cpp).
//
// Exit codes: 0 done; 1 the file cannot be read or is malformed (or the output cannot be written;
// for convert: any input failed, the others still written);
// 2 the command line is wrong (including a set name the file does not have).
//
// Copy this into a project: it needs keyblend::io, keyblend::gltf, nlohmann-json, libpng, giflib,
// stb_easy_font and (for other formats) keyblend::assimp.
#include "keyblend_tool.hpp"
#include "../posed_mesh.hpp"

#include <glm/gtc/type_ptr.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

using tool::exit_file;
using tool::exit_ok;
using tool::exit_usage;
using tool::options;
using tool::usage_error;

namespace {

using json = nlohmann::ordered_json;

const char* const usage_text =
    "usage:\n"
    "  keyblend info FILE [--json] [--strict] [--importer keyblend|assimp]\n"
    "  keyblend pose FILE (--tick T | --time SECONDS) (--set NAME | --blend NAME:WEIGHT ...)\n"
    "                [--json [--vertices]] [--strict] [--importer keyblend|assimp]\n"
    "  keyblend render FILE [--set NAME | --blend NAME:WEIGHT ...] [--from T0] [--to T1]\n"
    "                  [--frames N] [--size WxH] [--bones] [--progress] [--strict]\n"
    "                  [--importer keyblend|assimp] --out FILE.png|FILE.gif\n"
    "  keyblend pack FILE -o OUT [--precision P] [--shell S] [--strict] [--importer keyblend|assimp]\n"
    "  keyblend convert FILE... (-o OUT.glb|OUT.gltf | --out-dir DIR [--format glb|gltf])\n"
    "                   [--handedness left|right] [--progress] [--strict] [--importer keyblend|assimp]\n"
    "  each also takes [--max-memory MIB] [--max-seconds S] for assimp's imports\n"
    "\n"
    "info   format, float size, frames and hierarchy, meshes, animation sets; for .X and BVH\n"
    "       files what the file holds as written, and what the load repaired or dropped\n"
    "pose   every frame's local and model matrix (16 floats, GLM column-major = D3DX memory\n"
    "       order) at tick T of one set (--set), or of the bind pose plus each set's weighted\n"
    "       difference from it (--blend, repeatable; the classic additive blend). --time takes\n"
    "       seconds instead, converted with each set's ticks per second. NAME is matched\n"
    "       without regard to case and may be empty; NAME:WEIGHT splits at the last ':'.\n"
    "       --vertices (with --json) adds every mesh instance: its name, the joint that places\n"
    "       it, its morph weights and its morphed, skinned vertices in model space.\n"
    "render samples (and blends) the sets as pose does, skins the meshes on the CPU and draws\n"
    "       them from a fixed camera framed on the whole animation: a .png contact sheet of N\n"
    "       frames (default 8) from T0 to T1 seconds, each labelled with its time, or a looping\n"
    "       .gif of N frames (default 20 a second) played at the animation's speed. T0 and T1\n"
    "       default to the first key and the end of the set (the longest, with --blend); times\n"
    "       past the end wrap as the set does. Without --set or --blend, the first set (or the\n"
    "       bind pose). --size is one frame's size (default 256x256); --bones draws the\n"
    "       skeleton over the mesh; files without a mesh (BVH) draw their skeleton.\n"
    "pack   compresses the sets and writes them with the skeleton and the meshes into one package\n"
    "       file, which every command reads like any other input: each set's largest error\n"
    "       (virtual vertices at S from every joint, against the file's own sampling, checked at\n"
    "       every sample and every 1/60 s) at most P. P and S are in model units; they default\n"
    "       to 0.01 cm and 3 cm of a model 1.8 m tall (its bind-pose skinned mesh's largest\n"
    "       extent, or its joints', taken as 180 cm). Prints each set's sizes and error; exit 1\n"
    "       when a set could not be kept within P\n"
    "convert writes each FILE as glTF 2.0 (docs/gltf.md, \"Writing glTF\"): -o names the output of\n"
    "       one FILE (.glb, or .gltf with a .bin beside it); --out-dir writes DIR/NAME.glb (or\n"
    "       .gltf with --format gltf) for each. .X files are left-handed and written mirrored\n"
    "       (z negated, triangles wound the other way) so that they look the same in glTF\n"
    "       viewers; other inputs are taken as right-handed (--handedness overrides). Prints a\n"
    "       line per file (what was written; how many problems the load and the write repaired\n"
    "       or dropped, each listed) and a progress line per file on a terminal (--progress:\n"
    "       always); exit 1 when any file failed, the others still written\n"
    "--json      print JSON instead of text\n"
    "--strict    refuse a file with any problem the default load repairs or drops (the first\n"
    "            problem is the error); without it, a damaged file loads as far as it can be\n"
    "            read, as D3DX and assimp load it (info lists what was repaired or dropped;\n"
    "            pose and render print the warnings on stderr)\n"
    "--importer  keyblend (.X, .bvh, .gltf and .glb files: the default) or assimp (every other\n"
    "            format; for those too, to compare)\n"
    "--max-memory, --max-seconds\n"
    "            assimp's importers are not hardened: a file assimp reads is imported in a\n"
    "            process of its own, with this much address space (default 1024 MiB) and time\n"
    "            for the import (default 10 s); a crash or an exhausted limit there is reported,\n"
    "            exit 1\n"
    "\n"
    "exit codes: 0 done, 1 the file cannot be read or is malformed, 2 wrong command line\n";

std::optional<double> parse_number(std::string_view s) {
    double v = 0.0;
    const char* first = s.data();
    if (!s.empty() && s[0] == '+') ++first;
    const std::from_chars_result r = std::from_chars(first, s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

/// The float as the shortest decimal that reads back as the same float, so JSON shows 0.1, not
/// 0.10000000149011612.
double tidy(float f) {
    char buf[32];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, f);
    double d = f;
    std::from_chars(buf, r.ptr, d);
    return d;
}

json matrix_json(const glm::mat4& m) {
    json a = json::array();
    const float* p = glm::value_ptr(m);
    for (int i = 0; i < 16; ++i) a.push_back(tidy(p[i]));
    return a;
}

/// A tick count as JSON: an integer when it is one (.X ticks are), else a number.
json tick_json(float t) {
    if (t == std::floor(t) && std::fabs(t) < 9.0e15f) return static_cast<long long>(t);
    return tidy(t);
}

bool same_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

options parse_command_line(int argc, char** argv) {
    options o;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) throw usage_error{"no command"};
    o.command = args[0];
    if (o.command != "info" && o.command != "pose" && o.command != "render" && o.command != "pack" &&
        o.command != "convert")
        throw usage_error{"unknown command '" + o.command + "' (info, pose, render, pack or convert)"};
    const bool posing = o.command == "pose" || o.command == "render";
    const auto value_of = [&](std::size_t& i) -> const std::string& {
        if (i + 1 >= args.size()) throw usage_error{args[i] + " needs a value"};
        return args[++i];
    };
    const auto number_of = [&](std::size_t& i) {
        const std::string& a = args[i];
        const std::string& v = value_of(i);
        const std::optional<double> n = parse_number(v);
        if (!n) throw usage_error{a + " takes a finite number, not '" + v + "'"};
        return *n;
    };
    bool importer_given = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--json" && o.command != "render") {
            o.json = true;
        } else if (a == "--vertices" && o.command == "pose") {
            o.vertices = true;
        } else if (a == "--strict") {
            o.strict = true;
        } else if (a == "--lenient") {
            // keyblend 0.1's option for what is now the default: accepted, changes nothing.
        } else if (a == "--importer") {
            const std::string& v = value_of(i);
            if (importer_given) throw usage_error{"give one --importer"};
            importer_given = true;
            if (v == "keyblend") o.from = tool::importer::keyblend;
            else if (v == "assimp") o.from = tool::importer::assimp;
            else throw usage_error{"--importer takes keyblend or assimp, not '" + v + "'"};
        } else if (a == "--max-memory") {
            const double n = number_of(i);
            if (n != std::floor(n) || n < 64 || n > 1048576)
                throw usage_error{"--max-memory takes MiB, a whole number from 64 to 1048576, not '" + args[i] + "'"};
            o.max_memory_mib = static_cast<std::size_t>(n);
        } else if (a == "--max-seconds") {
            const double n = number_of(i);
            if (!(n > 0.0) || n > 86400.0)
                throw usage_error{"--max-seconds takes seconds, more than 0 and at most 86400, not '" + args[i] + "'"};
            o.max_seconds = n;
        } else if (o.command == "pose" && (a == "--tick" || a == "--time")) {
            const double n = number_of(i);
            if (o.tick || o.seconds) throw usage_error{"give one --tick or --time"};
            (a == "--tick" ? o.tick : o.seconds) = n;
        } else if (posing && a == "--set") {
            if (o.set) throw usage_error{"give one --set"};
            o.set = value_of(i);
        } else if (posing && a == "--blend") {
            const std::string& v = value_of(i);
            const std::size_t colon = v.rfind(':');
            if (colon == std::string::npos)
                throw usage_error{"--blend takes NAME:WEIGHT, not '" + v + "'"};
            const std::optional<double> w = parse_number(std::string_view(v).substr(colon + 1));
            if (!w) throw usage_error{"--blend " + v + ": the weight is not a finite number"};
            o.blend.emplace_back(v.substr(0, colon), static_cast<float>(*w));
        } else if (o.command == "render" && (a == "--from" || a == "--to")) {
            std::optional<double>& t = a == "--from" ? o.from_seconds : o.to_seconds;
            if (t) throw usage_error{"give one " + a};
            t = number_of(i);
        } else if (o.command == "render" && a == "--frames") {
            const double n = number_of(i);
            if (o.frames) throw usage_error{"give one --frames"};
            if (n != std::floor(n) || n < 1 || n > 1000)
                throw usage_error{"--frames takes a whole number from 1 to 1000, not '" + args[i] + "'"};
            o.frames = static_cast<int>(n);
        } else if (o.command == "render" && a == "--size") {
            const std::string& v = value_of(i);
            const std::size_t x = v.find('x');
            const std::optional<double> w = x == std::string::npos ? std::nullopt : parse_number(v.substr(0, x));
            const std::optional<double> h = x == std::string::npos ? std::nullopt : parse_number(v.substr(x + 1));
            if (!w || !h || *w != std::floor(*w) || *h != std::floor(*h) || *w < 32 || *h < 32 ||
                *w > 4096 || *h > 4096)
                throw usage_error{"--size takes WxH, each from 32 to 4096 pixels, not '" + v + "'"};
            o.width = static_cast<int>(*w);
            o.height = static_cast<int>(*h);
        } else if (o.command == "render" && a == "--bones") {
            o.bones = true;
        } else if ((o.command == "render" || o.command == "convert") && a == "--progress") {
            o.progress = true;
        } else if ((o.command == "render" && a == "--out") ||
                   ((o.command == "pack" || o.command == "convert") && (a == "-o" || a == "--out"))) {
            if (!o.out.empty()) throw usage_error{"give one " + a};
            o.out = value_of(i);
        } else if (o.command == "pack" && (a == "--precision" || a == "--shell")) {
            std::optional<double>& v = a == "--precision" ? o.precision : o.shell;
            if (v) throw usage_error{"give one " + a};
            v = number_of(i);
            if (!(*v > 0.0) || *v > 3.0e38) throw usage_error{a + " takes a length > 0 (model units), not '" + args[i] + "'"};
        } else if (o.command == "convert" && a == "--out-dir") {
            if (!o.out_dir.empty()) throw usage_error{"give one --out-dir"};
            o.out_dir = value_of(i);
        } else if (o.command == "convert" && a == "--format") {
            o.format = value_of(i);
            if (o.format != "glb" && o.format != "gltf") throw usage_error{"--format takes glb or gltf, not '" + o.format + "'"};
        } else if (o.command == "convert" && a == "--handedness") {
            if (o.handedness) throw usage_error{"give one --handedness"};
            o.handedness = value_of(i);
            if (*o.handedness != "left" && *o.handedness != "right")
                throw usage_error{"--handedness takes left or right, not '" + *o.handedness + "'"};
        } else if (a.size() > 1 && a[0] == '-') {
            throw usage_error{"unknown option '" + a + "' for " + o.command};
        } else if (o.command == "convert") {
            o.inputs.push_back(a);
            if (o.file.empty()) o.file = a;
        } else if (o.file.empty()) {
            o.file = a;
        } else {
            throw usage_error{"unexpected argument '" + a + "'"};
        }
    }
    if (o.file.empty()) throw usage_error{o.command + " needs a FILE"};
    if (o.command == "pack" && o.out.empty()) throw usage_error{"pack needs -o OUT"};
    if (o.command == "convert") {
        if (o.out.empty() == o.out_dir.empty()) throw usage_error{"convert needs either -o OUT or --out-dir DIR"};
        if (!o.out.empty()) {
            if (o.inputs.size() > 1) throw usage_error{"-o names one output: give --out-dir DIR for several FILEs"};
            const std::string ext = tool::extension_of(o.out);
            if (ext != "glb" && ext != "gltf")
                throw usage_error{"-o names a .glb or a .gltf file, not '" + o.out + "'"};
        }
    }
    if (o.command == "pose") {
        if (!o.tick && !o.seconds) throw usage_error{"pose needs --tick T or --time SECONDS"};
        if (o.vertices && !o.json) throw usage_error{"--vertices goes with --json"};
        if (o.set.has_value() == !o.blend.empty())
            throw usage_error{"pose needs either --set NAME or one or more --blend NAME:WEIGHT"};
    }
    if (o.command == "render") {
        if (o.set && !o.blend.empty()) throw usage_error{"render takes --set NAME or --blend NAME:WEIGHT, not both"};
        if (o.out.empty()) throw usage_error{"render needs --out FILE.png or FILE.gif"};
        const std::string ext = tool::extension_of(o.out);
        if (ext != "png" && ext != "gif")
            throw usage_error{"--out names a .png (contact sheet) or a .gif (animation), not '" + o.out + "'"};
        if (o.from_seconds && o.to_seconds && *o.to_seconds < *o.from_seconds)
            throw usage_error{"--to must not be before --from"};
    }
    return o;
}

/// Joints deeper than this print at this indentation with their depth as a number, so that the
/// text stays proportional to the number of joints whatever the depth.
constexpr std::size_t max_indented_depth = 32;

void print_hierarchy(const keyblend::skeleton& s) {
    std::vector<std::size_t> depth(s.size(), 0);
    for (std::size_t j = 0; j < s.size(); ++j) {
        if (s.parent(j) >= 0) depth[j] = depth[static_cast<std::size_t>(s.parent(j))] + 1;
        const std::size_t indent = std::min(depth[j], max_indented_depth);
        std::printf("  %*s", static_cast<int>(2 * indent), "");
        if (depth[j] > max_indented_depth) std::printf("[depth %zu] ", depth[j]);
        std::printf("%s\n", s.name(j).c_str());
    }
}

/// An animation set in `info --json`: the same keys for every importer.
json clip_json(const keyblend::clip& c) {
    const keyblend::io::key_counts k = keyblend::io::count_keys(c);
    const bool keyed = k.rotation + k.scale + k.position + k.matrix > 0;
    return {{"name", c.name},
            {"ticks_per_second", c.ticks_per_second_is_default ? json(nullptr) : tick_json(c.ticks_per_second)},
            {"tracks", c.channels.size()},
            {"keys", {{"rotation", k.rotation}, {"scale", k.scale}, {"position", k.position}, {"matrix", k.matrix}}},
            {"first_tick", keyed ? tick_json(keyblend::first_key_time(c)) : json(nullptr)},
            {"last_tick", keyed ? tick_json(keyblend::last_key_time(c)) : json(nullptr)}};
}

/// The loader's warnings by what was done, as `info` lists them.
const std::pair<const char*, keyblend::io::warning_action> warning_kinds[] = {
    {"repaired", keyblend::io::warning_action::repaired},
    {"dropped", keyblend::io::warning_action::dropped},
    {"notes", keyblend::io::warning_action::note},
};

/// The loader's warnings in `info --json`: one array per kind.
void warnings_json(json& out, const std::vector<keyblend::io::load_warning>& warnings) {
    for (const auto& [key, action] : warning_kinds) {
        out[key] = json::array();
        for (const keyblend::io::load_warning& m : warnings)
            if (m.action == action) out[key].push_back(m.message);
    }
}

/// The loader's warnings in `info`'s text: a count and the messages per kind.
void print_warnings(const std::vector<keyblend::io::load_warning>& warnings) {
    for (const auto& [key, action] : warning_kinds) {
        std::size_t n = 0;
        for (const keyblend::io::load_warning& m : warnings) n += m.action == action;
        std::printf("%s: %zu\n", key, n);
        for (const keyblend::io::load_warning& m : warnings)
            if (m.action == action) std::printf("  %s\n", m.message.c_str());
    }
}

/// info for a file keyblend's .X loader read: the .X header's facts and the loader's figures.
int info_xfile(const options& o, const keyblend::io::xfile& x) {
    if (o.json) {
        json out;
        out["format"] = keyblend::io::to_string(x.format);
        out["float_size"] = x.float_bits;
        out["frames"] = x.skeleton.size();
        out["meshes"] = json::array();
        for (const keyblend::io::xfile_mesh& m : x.meshes)
            out["meshes"].push_back({{"name", m.name},
                                     {"vertices", m.positions.size()},
                                     {"faces", m.face_count},
                                     {"bones", m.skin.bones.size()}});
        const keyblend::io::xfile_contents& w = x.contents;
        out["contents"] = {{"frames", w.frames},
                           {"meshes", w.meshes},
                           {"materials", w.materials},
                           {"skin_weights", w.skin_weights},
                           {"animation_sets", w.animation_sets},
                           {"animations", w.animations},
                           {"animation_keys", w.animation_keys},
                           {"keys", w.keys}};
        warnings_json(out, x.warnings);
        out["animation_sets"] = json::array();
        for (const keyblend::io::xfile_animation_set& s : x.animation_sets)
            out["animation_sets"].push_back(clip_json(s.clip));
        std::cout << out.dump(2) << '\n';
        return exit_ok;
    }
    std::printf("%s: xof %04u, %s, %u-bit floats\n", o.file.c_str(), x.version,
                keyblend::io::to_string(x.format), x.float_bits);
    std::printf("frames: %zu\n", x.skeleton.size());
    print_hierarchy(x.skeleton);
    std::printf("meshes: %zu\n", x.meshes.size());
    for (const keyblend::io::xfile_mesh& m : x.meshes)
        std::printf(
            "  '%s' under %s: %zu vertices, %zu faces, %zu bones, at most %zu influences per "
            "vertex\n",
            m.name.c_str(),
            m.joint == keyblend::io::no_joint ? "no frame"
                                              : ("'" + x.skeleton.name(m.joint) + "'").c_str(),
            m.positions.size(), m.face_count, m.skin.bones.size(), m.skin.influences_per_vertex);
    std::printf("animation sets: %zu\n", x.animation_sets.size());
    for (const keyblend::io::xfile_animation_set& s : x.animation_sets) {
        const keyblend::clip& c = s.clip;
        const keyblend::io::key_counts k = keyblend::io::count_keys(c);
        std::printf("  '%s': %g ticks per second%s, %zu tracks, keys: %zu rotation, %zu scale, %zu "
                    "position, %zu matrix; ticks %g to %g\n",
                    c.name.c_str(), double(c.ticks_per_second),
                    c.ticks_per_second_is_default ? " (none in the file: the default)" : "",
                    c.channels.size(), k.rotation, k.scale, k.position, k.matrix,
                    double(keyblend::first_key_time(c)), double(keyblend::last_key_time(c)));
    }
    const keyblend::io::xfile_contents& w = x.contents;
    std::printf("as written: %zu frames, %zu meshes, %zu materials, %zu SkinWeights, %zu animation "
                "sets, %zu Animations with %zu AnimationKeys, %zu keys\n",
                w.frames, w.meshes, w.materials, w.skin_weights, w.animation_sets, w.animations,
                w.animation_keys, w.keys);
    print_warnings(x.warnings);
    return exit_ok;
}

/// info for a file keyblend's BVH reader read: the hierarchy, the channels and the frames.
int info_bvh(const options& o, const keyblend::io::bvh& b) {
    const std::size_t end_sites = static_cast<std::size_t>(
        std::count_if(b.joints.begin(), b.joints.end(), [](const keyblend::io::bvh_joint& j) { return j.end_site; }));
    if (o.json) {
        json out;
        out["format"] = "bvh";
        out["frames"] = b.skeleton.size();
        out["meshes"] = json::array();
        out["contents"] = {{"joints", b.skeleton.size() - end_sites},
                           {"end_sites", end_sites},
                           {"channels", b.columns.size()},
                           {"frames", b.frame_count},
                           {"declared_frames", b.declared_frame_count},
                           {"frame_time", b.frame_time}};
        warnings_json(out, b.warnings);
        out["animation_sets"] = json::array({clip_json(b.clip)});
        std::cout << out.dump(2) << '\n';
        return exit_ok;
    }
    std::printf("%s: BVH, %zu joints and %zu End Sites, %zu channels; %zu frames of %g s%s\n",
                o.file.c_str(), b.skeleton.size() - end_sites, end_sites, b.columns.size(), b.frame_count,
                b.frame_time, b.clip.ticks_per_second_is_default ? " (none in the file: the default)" : "");
    std::printf("frames: %zu\n", b.skeleton.size());
    print_hierarchy(b.skeleton);
    std::printf("meshes: 0\n");
    std::printf("animation sets: 1\n");
    const keyblend::clip& c = b.clip;
    const keyblend::io::key_counts k = keyblend::io::count_keys(c);
    std::printf("  '%s': %g ticks (frames) per second, %zu tracks, keys: %zu rotation, %zu position; "
                "ticks %g to %g\n",
                c.name.c_str(), double(c.ticks_per_second), c.channels.size(), k.rotation, k.position,
                double(keyblend::first_key_time(c)), double(keyblend::last_key_time(c)));
    print_warnings(b.warnings);
    return exit_ok;
}

#ifdef KEYBLEND_TOOL_ASSIMP
/// info for a file assimp read: the same figures (JSON keys as for .X files, with "importer":
/// "assimp" and the file's extension as "format" instead of the .X header's format and float size).
int info_assimp(const options& o, const keyblend::assimp::scene& a) {
    const std::string format = tool::extension_of(o.file);
    if (o.json) {
        json out;
        out["importer"] = "assimp";
        out["format"] = format;
        out["frames"] = a.skeleton.size();
        out["meshes"] = json::array();
        for (const keyblend::assimp::mesh& m : a.meshes)
            out["meshes"].push_back({{"name", m.name},
                                     {"vertices", m.positions.size()},
                                     {"faces", m.indices.size() / 3},
                                     {"bones", m.skin.bones.size()}});
        out["animation_sets"] = json::array();
        for (const keyblend::assimp::animation& an : a.animations) out["animation_sets"].push_back(clip_json(an.clip));
        std::cout << out.dump(2) << '\n';
        return exit_ok;
    }
    std::printf("%s: %s, read by assimp\n", o.file.c_str(), format.c_str());
    std::printf("frames: %zu\n", a.skeleton.size());
    print_hierarchy(a.skeleton);
    std::printf("meshes: %zu\n", a.meshes.size());
    for (const keyblend::assimp::mesh& m : a.meshes) {
        std::printf("  '%s' under %s: %zu vertices, %zu triangles, %zu bones, at most %zu influences per vertex",
                    m.name.c_str(),
                    m.joint == keyblend::assimp::no_joint ? "no frame" : ("'" + a.skeleton.name(m.joint) + "'").c_str(),
                    m.positions.size(), m.indices.size() / 3, m.skin.bones.size(), m.skin.influences_per_vertex);
        if (m.skin.report.vertices_over_limit)
            std::printf(" (%zu vertices had up to %zu)", m.skin.report.vertices_over_limit, m.skin.report.most_influences);
        std::printf("\n");
    }
    std::printf("animation sets: %zu\n", a.animations.size());
    for (const keyblend::assimp::animation& an : a.animations) {
        const keyblend::clip& c = an.clip;
        const keyblend::io::key_counts k = keyblend::io::count_keys(c);
        std::printf("  '%s': %g ticks per second%s, %zu tracks, keys: %zu rotation, %zu scale, %zu "
                    "position; ticks %g to %g, duration %g; after the end: %s (%s)\n",
                    c.name.c_str(), double(c.ticks_per_second),
                    c.ticks_per_second_is_default ? " (none in the file: the default)" : "",
                    c.channels.size(), k.rotation, k.scale, k.position,
                    double(keyblend::first_key_time(c)), double(keyblend::last_key_time(c)), double(c.duration),
                    keyblend::assimp::to_string(an.post_state),
                    c.wrap == keyblend::wrap_mode::clamp ? "clamp" : c.wrap == keyblend::wrap_mode::loop ? "loop" : "loop_inclusive");
    }
    return exit_ok;
}
#endif

#ifdef KEYBLEND_TOOL_GLTF
/// info for a file keyblend's glTF loader read: the same figures (JSON keys as for .X files, with
/// "format" gltf or glb), what the file holds as written, and the loader's warnings.
int info_gltf(const options& o, const keyblend::gltf::model& g) {
    const keyblend::gltf::file_contents& w = g.contents;
    if (o.json) {
        json out;
        out["format"] = g.binary ? "glb" : "gltf";
        out["frames"] = g.skeleton.size();
        out["meshes"] = json::array();
        for (const keyblend::gltf::mesh_instance& m : g.meshes)
            out["meshes"].push_back({{"name", m.name},
                                     {"node", m.node_index},
                                     {"vertices", m.positions.size()},
                                     {"faces", m.indices.size() / 3},
                                     {"bones", m.skin.bones.size()},
                                     {"morph_targets", m.morph_targets.size()}});
        out["contents"] = {{"nodes", w.nodes},         {"meshes", w.meshes},   {"primitives", w.primitives},
                           {"skins", w.skins},         {"animations", w.animations}, {"channels", w.channels},
                           {"accessors", w.accessors}, {"materials", w.materials}, {"cameras", w.cameras},
                           {"images", w.images}};
        warnings_json(out, g.warnings);
        out["animation_sets"] = json::array();
        for (const keyblend::gltf::animation& a : g.animations) out["animation_sets"].push_back(clip_json(a.clip));
        std::cout << out.dump(2) << '\n';
        return exit_ok;
    }
    std::printf("%s: glTF 2.0, %s\n", o.file.c_str(), g.binary ? "binary (.glb)" : "JSON (.gltf)");
    std::printf("nodes: %zu\n", g.skeleton.size());
    print_hierarchy(g.skeleton);
    std::printf("mesh instances: %zu\n", g.meshes.size());
    for (const keyblend::gltf::mesh_instance& m : g.meshes)
        std::printf("  '%s' at node '%s': %zu vertices, %zu triangles, %zu bones, at most %zu influences per vertex, "
                    "%zu morph targets\n",
                    m.name.c_str(), g.skeleton.name(m.joint).c_str(), m.positions.size(), m.indices.size() / 3,
                    m.skin.bones.size(), m.skin.influences_per_vertex, m.morph_targets.size());
    std::printf("animations: %zu\n", g.animations.size());
    for (const keyblend::gltf::animation& a : g.animations)
        std::printf("  '%s': %zu animated nodes, seconds %g to %g\n", a.clip.name.c_str(), a.clip.channels.size(),
                    double(keyblend::first_key_time(a.clip)), double(keyblend::last_key_time(a.clip)));
    std::printf("as written: %zu nodes, %zu meshes (%zu primitives), %zu skins, %zu animations with %zu channels, "
                "%zu accessors, %zu materials, %zu cameras, %zu images\n",
                w.nodes, w.meshes, w.primitives, w.skins, w.animations, w.channels, w.accessors, w.materials,
                w.cameras, w.images);
    print_warnings(g.warnings);
    return exit_ok;
}
#endif

int info(const options& o, const tool::model& m) {
    if (m.package) return tool::info_package(o, m);
#ifdef KEYBLEND_TOOL_ASSIMP
    if (m.a) return info_assimp(o, *m.a);
#endif
    if (m.b) return info_bvh(o, *m.b);
#ifdef KEYBLEND_TOOL_GLTF
    if (m.g) return info_gltf(o, *m.g);
#endif
    return info_xfile(o, *m.x);
}

/// `pose --json --vertices`: every mesh instance in the pose, morphed and skinned (posed_mesh.hpp),
/// in model space.
json meshes_json(const tool::model& m, const options& o, const std::vector<glm::mat4>& model) {
    std::vector<float> weights;
    tool::morph_weights(m, o, std::nullopt, false, weights);
    json meshes = json::array();
    examples::posed_mesh posed;
    m.for_each_mesh([&](const auto& mesh) {
        const keyblend::span<const float> w = tool::mesh_morph_weights(m, mesh, weights);
        json entry{{"name", mesh.name},
                   {"joint", mesh.joint < m.skeleton->size() ? json(m.skeleton->name(mesh.joint)) : json(nullptr)},
                   {"morph_weights", json::array()},
                   {"vertices", json::array()}};
        for (float x : w) entry["morph_weights"].push_back(tidy(x));
        if (const keyblend::status st = examples::pose_mesh(mesh, model, posed, nullptr, w); !st) {
            entry["error"] = st.error().message;
        } else {
            for (const glm::vec3& p : posed.positions) entry["vertices"].push_back({tidy(p.x), tidy(p.y), tidy(p.z)});
        }
        meshes.push_back(std::move(entry));
    });
    return meshes;
}

int pose(const options& o, const tool::model& m) {
    const keyblend::skeleton& s = *m.skeleton;
    std::vector<glm::mat4> local, model;
    // The loaders validate every clip against the skeleton, so sampling and blending report
    // nothing here; a failure would still be printed rather than ignored.
    if (const keyblend::status st = tool::local_matrices(m, o, std::nullopt, false, local); !st) {
        std::fprintf(stderr, "keyblend: %s\n", st.error().message.c_str());
        return exit_file;
    }
    tool::model_matrices(s, local, model);
    if (const std::optional<std::string> bad = tool::non_finite_joint(s, local, model)) {
        std::fprintf(stderr, "keyblend: %s: the pose is not finite: %s\n", o.file.c_str(), bad->c_str());
        return exit_file;
    }
    if (o.json) {
        json joints = json::array();
        for (std::size_t j = 0; j < s.size(); ++j)
            joints.push_back({{"name", s.name(j)},
                              {"parent", s.parent(j)},
                              {"local", matrix_json(local[j])},
                              {"model", matrix_json(model[j])}});
        json out{{"joints", std::move(joints)}};
        if (o.vertices) out["meshes"] = meshes_json(m, o, model);
        std::cout << out.dump(2) << '\n';
        return exit_ok;
    }
    for (std::size_t j = 0; j < s.size(); ++j) {
        std::printf("%zu %s (parent %d)\n", j, s.name(j).c_str(), static_cast<int>(s.parent(j)));
        for (const auto& [label, mat] :
             {std::pair<const char*, const glm::mat4*>{"local", &local[j]}, {"model", &model[j]}}) {
            std::printf("  %s", label);
            for (int c = 0; c < 4; ++c)
                std::printf("  %g %g %g %g", double((*mat)[c][0]), double((*mat)[c][1]),
                            double((*mat)[c][2]), double((*mat)[c][3]));
            std::printf("\n");
        }
    }
    return exit_ok;
}

/// Which of keyblend's own loaders reads a file: `x` for a file that starts with an .X header
/// (`xof `), `gltf` for a .glb header or a JSON object naming an asset, `bvh` for one named *.bvh
/// or starting with HIERARCHY (after white space), `other` for the rest; nothing when it cannot be
/// opened (the .X loader then says so, as it always has).
enum class own_format { x, gltf, bvh, other };

std::optional<own_format> format_of(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return std::nullopt;
    char head[64] = {};
    const std::size_t n = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
    if (n >= 4 && std::memcmp(head, "xof ", 4) == 0) return own_format::x;
#ifdef KEYBLEND_TOOL_GLTF
    if (keyblend::gltf::looks_like_gltf(head, n)) return own_format::gltf;
#endif
    std::string ext = path.size() >= 4 ? path.substr(path.size() - 4) : std::string();
    for (char& c : ext) c = c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
    std::string_view text(head, n);
    while (!text.empty() && std::strchr(" \t\r\n", text.front())) text.remove_prefix(1);
    if (ext == ".bvh" || text.substr(0, 9) == "HIERARCHY") return own_format::bvh;
    return own_format::other;
}

#ifdef KEYBLEND_TOOL_GLTF
/// Loads a .gltf / .glb file with keyblend's glTF loader into `m`.
bool load_gltf(const options& o, keyblend::io::parse_mode mode, tool::model& m, keyblend::error& e) {
    keyblend::io::load_options go;
    go.mode = mode;
    keyblend::result<keyblend::gltf::model> g = keyblend::gltf::load(o.file, go);
    if (!g) {
        e = g.error();
        return false;
    }
    m.g = std::make_unique<keyblend::gltf::model>(std::move(*g));
    m.skeleton = &m.g->skeleton;
    for (const keyblend::gltf::animation& a : m.g->animations) m.clips.push_back(&a.clip);
    m.warnings.assign(m.g->warnings.begin(), m.g->warnings.end());
    return true;
}
#endif

} // namespace

namespace tool {

bool is_left_handed(const model& m) { return m.x != nullptr; }

std::string extension_of(const std::string& path) {
    const std::size_t dot = path.rfind('.');
    std::string ext = dot == std::string::npos ? std::string() : path.substr(dot + 1);
    for (char& c : ext) c = c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
    return ext;
}

bool reads_with_assimp(const options& o) {
#ifdef KEYBLEND_TOOL_ASSIMP
    return o.from == importer::assimp || (o.from == importer::automatic && format_of(o.file) == own_format::other);
#else
    (void)o;
    return false;
#endif
}

std::unique_ptr<model> load_model(const options& o) {
    if (has_package_magic(o.file)) return load_package(o);
    auto m = std::make_unique<model>();
    m->path = o.file;
    const std::optional<own_format> format = format_of(o.file);
    const bool use_assimp = reads_with_assimp(o);
    const keyblend::io::parse_mode mode = o.strict ? keyblend::io::parse_mode::strict : keyblend::io::parse_mode::lenient;
    const auto failed = [&](const keyblend::error& e) {
        std::fprintf(stderr, "keyblend: %s\n", e.message.c_str());
        if (o.strict && e.code != keyblend::errc::io_error)
            std::fprintf(stderr, "keyblend: (without --strict, keyblend loads what it can of a "
                                 "damaged file)\n");
        return nullptr;
    };
    if (use_assimp) {
#ifdef KEYBLEND_TOOL_ASSIMP
        keyblend::assimp::options ao;
        ao.mode = mode;
        ao.assimp_messages = true; // (the tool imports one file at a time)
        keyblend::result<keyblend::assimp::scene> a = keyblend::assimp::load_scene(o.file, ao);
        import_done();
        if (!a) return failed(a.error());
        m->importer_name = "assimp";
        m->a = std::make_unique<keyblend::assimp::scene>(std::move(*a));
        m->skeleton = &m->a->skeleton;
        for (const keyblend::assimp::animation& an : m->a->animations) m->clips.push_back(&an.clip);
        m->warnings = m->a->warnings;
#else
        return failed(keyblend::error{keyblend::errc::unsupported,
                                      o.file + ": this keyblend was built without assimp: it reads .X files only"});
#endif
    } else if (format == own_format::bvh) {
        keyblend::io::load_options bo;
        bo.mode = mode;
        keyblend::result<keyblend::io::bvh> b = keyblend::io::load_bvh(o.file, bo);
        if (!b) return failed(b.error());
        m->b = std::make_unique<keyblend::io::bvh>(std::move(*b));
        m->skeleton = &m->b->skeleton;
        m->clips.push_back(&m->b->clip);
        m->warnings.assign(m->b->warnings.begin(), m->b->warnings.end());
    } else if (format == own_format::gltf) {
#ifdef KEYBLEND_TOOL_GLTF
        keyblend::error e;
        if (!load_gltf(o, mode, *m, e)) return failed(e);
#endif
    } else {
        keyblend::io::load_options xo;
        xo.mode = mode;
        keyblend::result<keyblend::io::xfile> x = keyblend::io::load_xfile(o.file, xo);
        if (!x) return failed(x.error());
        m->x = std::make_unique<keyblend::io::xfile>(std::move(*x));
        m->skeleton = &m->x->skeleton;
        for (const keyblend::io::xfile_animation_set& set : m->x->animation_sets) m->clips.push_back(&set.clip);
        m->warnings.assign(m->x->warnings.begin(), m->x->warnings.end());
    }
    // (info lists keyblend's loaders' warnings in its report, convert in its summary)
    bool own_loader = m->x || m->b;
#ifdef KEYBLEND_TOOL_GLTF
    own_loader = own_loader || m->g;
#endif
    if ((o.command != "info" || !own_loader) && o.command != "convert")
        for (const keyblend::error& w : m->warnings)
            std::fprintf(stderr, "keyblend: warning: %s\n", w.message.c_str());
    return m;
}

const keyblend::clip& find_clip(const model& m, const std::string& name) {
    for (const keyblend::clip* c : m.clips)
        if (same_ignoring_case(c->name, name)) return *c;
    std::string sets;
    for (const keyblend::clip* c : m.clips) sets += (sets.empty() ? "'" : ", '") + c->name + "'";
    throw usage_error{"no animation set named '" + name + "' in " + m.path +
                          "; its sets are: " + (sets.empty() ? "(none)" : sets)};
}

std::optional<std::string> non_finite_joint(const keyblend::skeleton& s, const std::vector<glm::mat4>& local,
                                            const std::vector<glm::mat4>& model) {
    for (std::size_t j = 0; j < s.size(); ++j) {
        const bool bad_local = !keyblend::is_finite(local[j]);
        if (bad_local || !keyblend::is_finite(model[j]))
            return "joint " + std::to_string(j) + " '" + s.name(j) + "': its " + (bad_local ? "local" : "model") +
                   " matrix has NaN or infinity (the file's values overflow float here)";
    }
    return std::nullopt;
}

float tick_for(const options& o, const keyblend::clip& c) {
    return static_cast<float>(o.tick ? *o.tick : *o.seconds * double(c.ticks_per_second));
}

/// The tick at which a set is sampled: `seconds` (or the options' time) in the clip's ticks,
/// wrapped by its wrap mode with `wrap`.
float sample_tick(const options& o, const keyblend::clip& c, std::optional<double> seconds, bool wrap) {
    const double t = seconds ? *seconds * double(c.ticks_per_second) : double(tick_for(o, c));
    return wrap ? keyblend::clip_time(c, t) : static_cast<float>(t);
}

void morph_weights(const model& m, const options& o, std::optional<double> seconds, bool wrap,
                   std::vector<float>& weights) {
    const keyblend::skeleton& s = *m.skeleton;
    const std::vector<float>& bind = s.bind_morph_weights();
    weights = bind;
    // One set's weights replace the bind weights; --blend adds each set's weighted difference.
    const auto apply = [&](const keyblend::clip& c, float weight, bool additive) {
        const float t = sample_tick(o, c, seconds, wrap);
        for (const keyblend::channel& ch : c.channels)
            for (std::size_t i = 0; i < ch.morph_weights.size() && i < s.morph_weight_count(ch.joint); ++i) {
                if (ch.morph_weights[i].empty()) continue;
                const std::size_t at = s.morph_weight_offset(ch.joint) + i;
                const float v = keyblend::sample_track(ch.morph_weights[i], t);
                weights[at] = additive ? weights[at] + weight * (v - bind[at]) : v;
            }
    };
    if (o.set) return apply(find_clip(m, *o.set), 1.0f, false);
    for (const auto& [name, weight] : o.blend) apply(find_clip(m, name), weight, true);
}

keyblend::status local_matrices(const model& m, const options& o, std::optional<double> seconds,
                                bool wrap, std::vector<glm::mat4>& local) {
    const keyblend::skeleton& s = *m.skeleton;
    local.resize(s.size());
    const auto tick = [&](const keyblend::clip& c) { return sample_tick(o, c, seconds, wrap); };
    if (o.set) {
        const keyblend::clip& c = find_clip(m, *o.set);
        if (const keyblend::compressed_clip* cc = compressed_of(m, c)) return compressed_local_matrices(*cc, s, tick(c), 1.0f, false, local);
        return keyblend::sample_local_matrices(c, s, tick(c), local);
    }
    if (keyblend::status st = keyblend::reset_to_bind(s, local); !st) return st;
    for (const auto& [name, weight] : o.blend) {
        const keyblend::clip& c = find_clip(m, name);
        const keyblend::compressed_clip* cc = compressed_of(m, c);
        if (keyblend::status st = cc ? compressed_local_matrices(*cc, s, tick(c), weight, true, local)
                                     : keyblend::blend_matrix_additive(c, s, tick(c), weight, local);
            !st)
            return st;
    }
    return {};
}

void model_matrices(const keyblend::skeleton& s, const std::vector<glm::mat4>& local, std::vector<glm::mat4>& model) {
    model.resize(s.size());
    keyblend::local_to_model_job hierarchy;
    hierarchy.skeleton = &s;
    hierarchy.input_matrices = local;
    hierarchy.output = model;
    static_cast<void>(hierarchy.run()); // (local_matrices sized `local` for the skeleton)
}

} // namespace tool

/// The command, once the command line is read: the load, then info, pose or render.
int run_command(const options& o) {
    const auto start = std::chrono::steady_clock::now();
    const std::unique_ptr<tool::model> m = tool::load_model(o);
    if (!m) return exit_file;
    const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    try {
        if (o.command == "render") return tool::render(o, *m, load_ms);
        if (o.command == "pack") return tool::pack(o, *m);
        return o.command == "info" ? info(o, *m) : pose(o, *m);
    } catch (const usage_error& e) {
        std::fprintf(stderr, "keyblend: %s\n", e.message.c_str());
        return exit_usage;
    }
}

int main(int argc, char** argv) {
    options o;
    try {
        if (argc == 2 &&
            (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "help")) {
            std::fputs(usage_text, stdout);
            return exit_ok;
        }
        o = parse_command_line(argc, argv);
    } catch (const usage_error& e) {
        std::fprintf(stderr, "keyblend: %s\n\n%s", e.message.c_str(), usage_text);
        return exit_usage;
    }
    if (o.command == "convert") return tool::convert(o); // (each input isolated as it needs)
    return tool::reads_with_assimp(o) ? tool::run_isolated(o, run_command) : run_command(o);
}
