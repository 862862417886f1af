// keyblend — the command-line tool: what a .X file holds, and the pose of its skeleton at a tick.
//
//   keyblend info FILE [--json] [--strict]
//   keyblend pose FILE (--tick T | --time SECONDS) (--set NAME | --blend NAME:WEIGHT ...)
//                 [--json] [--strict]
//
// Exit codes: 0 done; 1 the file cannot be read or is malformed; 2 the command line is wrong
// (including a set name the file does not have).
//
// Copy this into a project: it needs keyblend::io and nlohmann-json.
#include <keyblend/blend.hpp>
#include <keyblend/clip.hpp>
#include <keyblend/io/xfile.hpp>
#include <keyblend/pose.hpp>

#include <glm/gtc/type_ptr.hpp>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace {

using json = nlohmann::ordered_json;

constexpr int exit_ok = 0;
constexpr int exit_file = 1;
constexpr int exit_usage = 2;

const char* const usage_text =
    "usage:\n"
    "  keyblend info FILE [--json] [--strict]\n"
    "  keyblend pose FILE (--tick T | --time SECONDS) (--set NAME | --blend NAME:WEIGHT ...)\n"
    "                [--json] [--strict]\n"
    "\n"
    "info   format, float size, frames and hierarchy, meshes, animation sets; the data objects\n"
    "       as the file writes them, and what the load repaired or dropped\n"
    "pose   every frame's local and model matrix (16 floats, GLM column-major = D3DX memory\n"
    "       order) at tick T of one set (--set), or of the bind pose plus each set's weighted\n"
    "       difference from it (--blend, repeatable; the seeds' additive blend). --time takes\n"
    "       seconds instead, converted with each set's ticks per second. NAME is matched\n"
    "       without regard to case and may be empty; NAME:WEIGHT splits at the last ':'.\n"
    "--json     print JSON instead of text\n"
    "--strict   refuse a file with any problem the default load repairs or drops (the first\n"
    "           problem is the error); without it, a damaged file loads as far as it can be\n"
    "           read, as D3DX and assimp load it (pose: the warnings on stderr)\n"
    "\n"
    "exit codes: 0 done, 1 the file cannot be read or is malformed, 2 wrong command line\n";

/// Thrown for a wrong command line; main prints it with the usage and exits with 2.
struct usage_error {
    std::string message;
};

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

/// The set named `name` (without regard to case, as the seeds find sets), or a usage error that
/// lists the file's sets.
const keyblend::io::xfile_animation_set&
find_set(const keyblend::io::xfile& x, const std::string& name, const std::string& path) {
    for (const keyblend::io::xfile_animation_set& s : x.animation_sets)
        if (same_ignoring_case(s.clip.name, name)) return s;
    std::string sets;
    for (const keyblend::io::xfile_animation_set& s : x.animation_sets)
        sets += (sets.empty() ? "'" : ", '") + s.clip.name + "'";
    throw usage_error{"no animation set named '" + name + "' in " + path +
                      "; its sets are: " + (sets.empty() ? "(none)" : sets)};
}

struct options {
    std::string command, file;
    bool json = false;
    bool strict = false;
    std::optional<double> tick, seconds;
    std::optional<std::string> set;
    std::vector<std::pair<std::string, float>> blend;
};

options parse_command_line(int argc, char** argv) {
    options o;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) throw usage_error{"no command"};
    o.command = args[0];
    if (o.command != "info" && o.command != "pose")
        throw usage_error{"unknown command '" + o.command + "' (info or pose)"};
    const auto value_of = [&](std::size_t& i) -> const std::string& {
        if (i + 1 >= args.size()) throw usage_error{args[i] + " needs a value"};
        return args[++i];
    };
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--json") {
            o.json = true;
        } else if (a == "--strict") {
            o.strict = true;
        } else if (a == "--lenient") {
            // keyblend 0.1's option for what is now the default: accepted, changes nothing.
        } else if (o.command == "pose" && (a == "--tick" || a == "--time")) {
            const std::string& v = value_of(i);
            const std::optional<double> n = parse_number(v);
            if (!n) throw usage_error{a + " takes a finite number, not '" + v + "'"};
            if (o.tick || o.seconds) throw usage_error{"give one --tick or --time"};
            (a == "--tick" ? o.tick : o.seconds) = *n;
        } else if (o.command == "pose" && a == "--set") {
            if (o.set) throw usage_error{"give one --set"};
            o.set = value_of(i);
        } else if (o.command == "pose" && a == "--blend") {
            const std::string& v = value_of(i);
            const std::size_t colon = v.rfind(':');
            if (colon == std::string::npos)
                throw usage_error{"--blend takes NAME:WEIGHT, not '" + v + "'"};
            const std::optional<double> w = parse_number(std::string_view(v).substr(colon + 1));
            if (!w) throw usage_error{"--blend " + v + ": the weight is not a finite number"};
            o.blend.emplace_back(v.substr(0, colon), static_cast<float>(*w));
        } else if (a.size() > 1 && a[0] == '-') {
            throw usage_error{"unknown option '" + a + "' for " + o.command};
        } else if (o.file.empty()) {
            o.file = a;
        } else {
            throw usage_error{"unexpected argument '" + a + "'"};
        }
    }
    if (o.file.empty()) throw usage_error{o.command + " needs a FILE"};
    if (o.command == "pose") {
        if (!o.tick && !o.seconds) throw usage_error{"pose needs --tick T or --time SECONDS"};
        if (o.set.has_value() == !o.blend.empty())
            throw usage_error{"pose needs either --set NAME or one or more --blend NAME:WEIGHT"};
    }
    return o;
}

void print_hierarchy(const keyblend::skeleton& s) {
    std::vector<std::size_t> depth(s.size(), 0);
    for (std::size_t j = 0; j < s.size(); ++j) {
        if (s.parent(j) >= 0) depth[j] = depth[static_cast<std::size_t>(s.parent(j))] + 1;
        std::printf("  %*s%s\n", static_cast<int>(2 * depth[j]), "", s.name(j).c_str());
    }
}

/// The loader's warnings by what was done, as `info` lists them.
const std::pair<const char*, keyblend::io::warning_action> warning_kinds[] = {
    {"repaired", keyblend::io::warning_action::repaired},
    {"dropped", keyblend::io::warning_action::dropped},
    {"notes", keyblend::io::warning_action::note},
};

int info(const options& o, const keyblend::io::xfile& x) {
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
        for (const auto& [key, action] : warning_kinds) {
            out[key] = json::array();
            for (const keyblend::io::load_warning& m : x.warnings)
                if (m.action == action) out[key].push_back(m.message);
        }
        out["animation_sets"] = json::array();
        for (const keyblend::io::xfile_animation_set& s : x.animation_sets) {
            const keyblend::clip& c = s.clip;
            const keyblend::io::key_counts k = keyblend::io::count_keys(c);
            const bool keyed = k.rotation + k.scale + k.position + k.matrix > 0;
            out["animation_sets"].push_back(
                {{"name", c.name},
                 {"ticks_per_second",
                  c.ticks_per_second_is_default ? json(nullptr) : tick_json(c.ticks_per_second)},
                 {"tracks", c.channels.size()},
                 {"keys",
                  {{"rotation", k.rotation},
                   {"scale", k.scale},
                   {"position", k.position},
                   {"matrix", k.matrix}}},
                 {"first_tick", keyed ? tick_json(keyblend::first_key_time(c)) : json(nullptr)},
                 {"last_tick", keyed ? tick_json(keyblend::last_key_time(c)) : json(nullptr)}});
        }
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
    for (const auto& [key, action] : warning_kinds) {
        std::size_t n = 0;
        for (const keyblend::io::load_warning& m : x.warnings) n += m.action == action;
        std::printf("%s: %zu\n", key, n);
        for (const keyblend::io::load_warning& m : x.warnings)
            if (m.action == action) std::printf("  %s\n", m.message.c_str());
    }
    return exit_ok;
}

/// A computed pose must be finite: a file whose values are each finite can still overflow float
/// when they are multiplied (3e38 scales, matrices far from the origin). Returns an error naming
/// the first joint (parents first) whose local or model matrix holds NaN or infinity, or nothing.
std::optional<std::string> non_finite_joint(const keyblend::skeleton& s,
                                            const std::vector<glm::mat4>& local,
                                            const std::vector<glm::mat4>& model) {
    for (std::size_t j = 0; j < s.size(); ++j) {
        const bool bad_local = !keyblend::is_finite(local[j]);
        if (bad_local || !keyblend::is_finite(model[j]))
            return "joint " + std::to_string(j) + " '" + s.name(j) + "': its " +
                   (bad_local ? "local" : "model") +
                   " matrix has NaN or infinity (the file's values overflow float here)";
    }
    return std::nullopt;
}

/// The tick for a set: --tick as given, or --time seconds times the set's ticks per second.
float tick_for(const options& o, const keyblend::clip& c) {
    return static_cast<float>(o.tick ? *o.tick : *o.seconds * double(c.ticks_per_second));
}

int pose(const options& o, const keyblend::io::xfile& x) {
    const keyblend::skeleton& s = x.skeleton;
    std::vector<glm::mat4> local, model;
    // The loader validates every clip against the skeleton, so sampling and blending report
    // nothing here; a failure would still be printed rather than ignored.
    keyblend::status st;
    if (o.set) {
        const keyblend::clip& c = find_set(x, *o.set, o.file).clip;
        st = keyblend::sample_local_matrices(c, s, tick_for(o, c), local);
    } else {
        keyblend::reset_to_bind(s, local);
        for (const auto& [name, weight] : o.blend) {
            const keyblend::clip& c = find_set(x, name, o.file).clip;
            if (st) st = keyblend::blend_matrix_additive(c, s, tick_for(o, c), weight, local);
        }
    }
    if (!st) {
        std::fprintf(stderr, "keyblend: %s\n", st.error().message.c_str());
        return exit_file;
    }
    keyblend::local_to_model(s, local, model);
    if (const std::optional<std::string> bad = non_finite_joint(s, local, model)) {
        std::fprintf(stderr, "keyblend: %s: the pose is not finite: %s\n", o.file.c_str(),
                     bad->c_str());
        return exit_file;
    }
    if (o.json) {
        json joints = json::array();
        for (std::size_t j = 0; j < s.size(); ++j)
            joints.push_back({{"name", s.name(j)},
                              {"parent", s.parent(j)},
                              {"local", matrix_json(local[j])},
                              {"model", matrix_json(model[j])}});
        std::cout << json{{"joints", std::move(joints)}}.dump(2) << '\n';
        return exit_ok;
    }
    for (std::size_t j = 0; j < s.size(); ++j) {
        std::printf("%zu %s (parent %d)\n", j, s.name(j).c_str(), static_cast<int>(s.parent(j)));
        for (const auto& [label, m] :
             {std::pair<const char*, const glm::mat4*>{"local", &local[j]}, {"model", &model[j]}}) {
            std::printf("  %s", label);
            for (int c = 0; c < 4; ++c)
                std::printf("  %g %g %g %g", double((*m)[c][0]), double((*m)[c][1]),
                            double((*m)[c][2]), double((*m)[c][3]));
            std::printf("\n");
        }
    }
    return exit_ok;
}

} // namespace

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
    keyblend::io::load_options load_options;
    load_options.mode = o.strict ? keyblend::io::parse_mode::strict : keyblend::io::parse_mode::lenient;
    const keyblend::result<keyblend::io::xfile> file =
        keyblend::io::load_xfile(o.file, load_options);
    if (!file) {
        std::fprintf(stderr, "keyblend: %s\n", file.error().message.c_str());
        if (o.strict && file.error().code != keyblend::errc::io_error)
            std::fprintf(stderr, "keyblend: (without --strict, keyblend loads what it can of a "
                                 "damaged file)\n");
        return exit_file;
    }
    if (o.command != "info") // info lists them in its report
        for (const keyblend::io::load_warning& w : file->warnings)
            std::fprintf(stderr, "keyblend: warning: %s\n", w.message.c_str());
    try {
        return o.command == "info" ? info(o, *file) : pose(o, *file);
    } catch (const usage_error& e) {
        std::fprintf(stderr, "keyblend: %s\n", e.message.c_str());
        return exit_usage;
    }
}
