// The `keyblend` command-line tool, run as a user runs it: its JSON is checked against the loader,
// the test files' known contents and the sampling rules; its usage errors against its exit codes.
#include <keyblend/bvh.hpp>
#include <keyblend/clip.hpp>
#include <keyblend/io/xfile.hpp>
#ifdef KEYBLEND_TOOL_GLTF
#include <keyblend/gltf.hpp>
#endif

#include "helpers.hpp"

#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

using json = nlohmann::json;
using namespace keyblend;
using kbtest::contains;

// The tool is built as this file is: under AddressSanitizer, its assimp process has no
// address-space limit, and a crash there is caught by the sanitizer first.
#if defined(__SANITIZE_ADDRESS__)
#define KEYBLEND_TOOL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KEYBLEND_TOOL_SANITIZED 1
#endif
#endif

namespace {

struct run_result {
    int exit_code = -1;
    std::string out; // stdout, or stdout and stderr with merge_stderr
};

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

run_result run(const std::vector<std::string>& args, bool merge_stderr = false) {
    std::string command = quote(KEYBLEND_TOOL);
    for (const std::string& a : args) command += " " + quote(a);
    command += merge_stderr ? " 2>&1" : " 2>/dev/null";
    run_result r;
    std::FILE* p = popen(command.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

json run_json(const std::vector<std::string>& args) {
    const run_result r = run(args);
    REQUIRE_MESSAGE(r.exit_code == 0, r.out);
    return json::parse(r.out);
}

std::set<std::string> keys_of(const json& j) {
    std::set<std::string> k;
    for (auto it = j.begin(); it != j.end(); ++it) k.insert(it.key());
    return k;
}

glm::mat4 matrix_of(const json& a) {
    REQUIRE(a.is_array());
    REQUIRE(a.size() == 16);
    glm::mat4 m;
    for (int i = 0; i < 16; ++i) m[i / 4][i % 4] = a[static_cast<std::size_t>(i)].get<float>();
    return m;
}

const char* const all_files[] = {
    "assimp/BCN_Epileptic.X",
    "assimp/Testwuson.X",
    "assimp/anim_test.x",
    "assimp/test_cube_text.x",
    "assimp/test_cube_binary.x",
    "assimp/test_cube_compressed.x",
    "directx-sdk-legacy-samples/tiny.x",
    "directx-sdk-legacy-samples/wall_with_pillars.x",
    "directx-sdk-legacy-samples/sphere.x",
    "directx-sdk-legacy-samples/shapes1.x",
};

} // namespace

TEST_CASE("info --json: exactly the documented keys, with the loader's figures") {
    for (const char* file : all_files) {
        CAPTURE(file);
        const auto path = kbtest::data_file(file);
        if (!path) return;
        // The default load: anim_test.x's bones naming missing frames are dropped, and listed.
        const json j = run_json({"info", *path, "--json"});
        const result<io::xfile> x = io::load_xfile(*path);
        REQUIRE(x);
        CHECK(keys_of(j) == std::set<std::string>{"format", "float_size", "frames", "meshes",
                                                  "contents", "repaired", "dropped", "notes",
                                                  "animation_sets"});
        const io::xfile_contents& w = x->contents;
        CHECK(j["contents"] == json{{"frames", w.frames},
                                    {"meshes", w.meshes},
                                    {"materials", w.materials},
                                    {"skin_weights", w.skin_weights},
                                    {"animation_sets", w.animation_sets},
                                    {"animations", w.animations},
                                    {"animation_keys", w.animation_keys},
                                    {"keys", w.keys}});
        std::size_t listed = 0;
        for (const char* kind : {"repaired", "dropped", "notes"}) {
            REQUIRE(j[kind].is_array());
            listed += j[kind].size();
        }
        CHECK(listed == x->warnings.size());
        for (const io::load_warning& m : x->warnings) {
            const char* kind = m.action == io::warning_action::repaired  ? "repaired"
                               : m.action == io::warning_action::dropped ? "dropped"
                                                                         : "notes";
            CHECK(std::find(j[kind].begin(), j[kind].end(), m.message) != j[kind].end());
        }
        CHECK(j["format"] == io::to_string(x->format));
        CHECK(j["float_size"] == 32);
        CHECK(j["frames"] == x->skeleton.size());
        REQUIRE(j["meshes"].size() == x->meshes.size());
        for (std::size_t i = 0; i < x->meshes.size(); ++i) {
            const json& m = j["meshes"][i];
            CHECK(keys_of(m) == std::set<std::string>{"name", "vertices", "faces", "bones"});
            CHECK(m["name"] == x->meshes[i].name);
            CHECK(m["vertices"] == x->meshes[i].positions.size());
            CHECK(m["faces"] == x->meshes[i].face_count);
            CHECK(m["bones"] == x->meshes[i].skin.bones.size());
        }
        REQUIRE(j["animation_sets"].size() == x->animation_sets.size());
        for (std::size_t i = 0; i < x->animation_sets.size(); ++i) {
            const json& s = j["animation_sets"][i];
            const clip& c = x->animation_sets[i].clip;
            CHECK(keys_of(s) == std::set<std::string>{"name", "ticks_per_second", "tracks", "keys",
                                                      "first_tick", "last_tick"});
            CHECK(keys_of(s["keys"]) ==
                  std::set<std::string>{"rotation", "scale", "position", "matrix"});
            CHECK(s["name"] == c.name);
            if (c.ticks_per_second_is_default)
                CHECK(s["ticks_per_second"].is_null());
            else
                CHECK(s["ticks_per_second"] == static_cast<int>(c.ticks_per_second));
            CHECK(s["tracks"] == c.channels.size());
            const io::key_counts k = io::count_keys(c);
            CHECK(s["keys"]["rotation"] == k.rotation);
            CHECK(s["keys"]["scale"] == k.scale);
            CHECK(s["keys"]["position"] == k.position);
            CHECK(s["keys"]["matrix"] == k.matrix);
            if (k.rotation + k.scale + k.position + k.matrix == 0) {
                CHECK(s["first_tick"].is_null());
                CHECK(s["last_tick"].is_null());
            } else {
                CHECK(s["first_tick"] == first_key_time(c));
                CHECK(s["last_tick"] == last_key_time(c));
            }
        }
    }
}

TEST_CASE("info --json on real files: their known figures") {
    const auto tiny = kbtest::data_file("directx-sdk-legacy-samples/tiny.x");
    const auto wall = kbtest::data_file("directx-sdk-legacy-samples/wall_with_pillars.x");
    if (!tiny || !wall) return;
    const json t = run_json({"info", *tiny, "--json"});
    CHECK(t["format"] == "txt");
    CHECK(t["frames"] == 48);
    CHECK(t["meshes"][0] == json{{"name", ""}, {"vertices", 4432}, {"faces", 6841}, {"bones", 35}});
    CHECK(t["animation_sets"][0] ==
          json{{"name", ""},
               {"ticks_per_second", nullptr},
               {"tracks", 47},
               {"keys", {{"rotation", 0}, {"scale", 0}, {"position", 0}, {"matrix", 2794}}},
               {"first_tick", 0},
               {"last_tick", 4960}});
    const json w = run_json({"info", *wall, "--json"});
    CHECK(w["format"] == "bzip");
    CHECK(w["frames"] == 18);
    CHECK(w["meshes"].size() == 12);
    CHECK(w["animation_sets"][0]["ticks_per_second"] == 30);
    CHECK(w["animation_sets"][0]["keys"]["rotation"] == 176);
}

TEST_CASE(
    "pose --set: one entry per frame, parents first, local = the set, model = parent * local") {
    const auto path = kbtest::data_file("assimp/Testwuson.X");
    if (!path) return;
    const result<io::xfile> x = io::load_xfile(*path);
    REQUIRE(x);
    const skeleton& s = x->skeleton;
    // Wuson_Bind at tick 0 is the bind pose: each local matrix is the frame's FrameTransformMatrix.
    const json j = run_json({"pose", *path, "--tick", "0", "--set", "Wuson_Bind", "--json"});
    CHECK(keys_of(j) == std::set<std::string>{"joints"});
    const json& joints = j["joints"];
    REQUIRE(joints.size() == s.size());
    std::vector<glm::mat4> model;
    for (std::size_t i = 0; i < joints.size(); ++i) {
        const json& e = joints[i];
        CAPTURE(s.name(i));
        CHECK(keys_of(e) == std::set<std::string>{"name", "parent", "local", "model"});
        CHECK(e["name"] == s.name(i));
        const int parent = e["parent"].get<int>();
        CHECK(parent == s.parent(i));
        CHECK(parent < static_cast<int>(i));
        const glm::mat4 local = matrix_of(e["local"]);
        model.push_back(matrix_of(e["model"]));
        CHECK(kbtest::max_abs_diff(local, s.bind_local()[i]) <= 1e-5f);
        const glm::mat4 expected =
            parent < 0 ? local : model[static_cast<std::size_t>(parent)] * local;
        CHECK(kbtest::max_abs_diff(model.back(), expected) <= 1e-5f);
    }
}

TEST_CASE("pose: matrix keys element-wise between the two keys around a fractional tick") {
    const auto path = kbtest::data_file("directx-sdk-legacy-samples/tiny.x");
    if (!path) return;
    const result<io::xfile> x = io::load_xfile(*path);
    REQUIRE(x);
    const float tick = 1234.25f;
    const json j = run_json({"pose", *path, "--tick", "1234.25", "--set", "", "--json"});
    std::size_t checked = 0;
    for (const channel& ch : x->animation_sets.at(0).clip.channels) {
        const matrix_track<float>& m = ch.matrix;
        std::size_t k = 0;
        while (k + 1 < m.size() && m.time(k + 1) <= tick) ++k;
        glm::mat4 expected = m.value(k);
        if (k + 1 < m.size() && m.time(k) <= tick) {
            const float t = (tick - m.time(k)) / (m.time(k + 1) - m.time(k));
            expected = m.value(k) + (m.value(k + 1) - m.value(k)) * t;
        }
        CAPTURE(x->skeleton.name(ch.joint));
        CHECK(kbtest::max_abs_diff(matrix_of(j["joints"][ch.joint]["local"]), expected) <= 1e-4f);
        ++checked;
    }
    CHECK(checked == 47);
}

TEST_CASE("pose --blend: the additive difference against the bind pose, per set") {
    const auto path = kbtest::data_file("assimp/Testwuson.X");
    if (!path) return;
    const json set = run_json({"pose", *path, "--tick", "1000", "--set", "Wuson_Run", "--json"});
    // One set at weight 1 on the bind pose is that set (bind + (M - bind)), names found without
    // regard to case.
    const json one =
        run_json({"pose", *path, "--tick", "1000", "--blend", "wuson_run:1", "--json"});
    // Weight 0 changes nothing: the bind pose.
    const json none =
        run_json({"pose", *path, "--tick", "1000", "--blend", "Wuson_Run:0", "--json"});
    const json bind = run_json({"pose", *path, "--tick", "0", "--set", "Wuson_Bind", "--json"});
    // Two sets at half weight: bind + (run - bind) / 2 + (walk - bind) / 2.
    const json half = run_json({"pose", *path, "--tick", "1000", "--blend", "Wuson_Run:0.5",
                                "--blend", "WUSON_WALK:0.5", "--json"});
    const json walk = run_json({"pose", *path, "--tick", "1000", "--set", "Wuson_Walk", "--json"});
    const result<io::xfile> x = io::load_xfile(*path);
    REQUIRE(x);
    for (std::size_t i = 0; i < x->skeleton.size(); ++i) {
        CAPTURE(x->skeleton.name(i));
        const glm::mat4 b = x->skeleton.bind_local()[i];
        const glm::mat4 r = matrix_of(set["joints"][i]["local"]);
        const glm::mat4 w = matrix_of(walk["joints"][i]["local"]);
        CHECK(kbtest::max_abs_diff(matrix_of(one["joints"][i]["local"]), r) <= 1e-6f);
        CHECK(kbtest::max_abs_diff(matrix_of(one["joints"][i]["model"]),
                                   matrix_of(set["joints"][i]["model"])) <= 1e-5f);
        CHECK(matrix_of(none["joints"][i]["local"]) == b);
        CHECK(kbtest::max_abs_diff(matrix_of(bind["joints"][i]["local"]), b) <= 1e-5f);
        const glm::mat4 expected = b + (r - b) * 0.5f + (w - b) * 0.5f;
        CHECK(kbtest::max_abs_diff(matrix_of(half["joints"][i]["local"]), expected) <= 1e-5f);
    }
}

TEST_CASE("pose --time: seconds times the set's ticks per second") {
    const auto path = kbtest::data_file("assimp/Testwuson.X");
    if (!path) return;
    const json by_time = run_json({"pose", *path, "--time", "0.5", "--set", "Wuson_Run", "--json"});
    const json by_tick =
        run_json({"pose", *path, "--tick", "2400", "--set", "Wuson_Run", "--json"});
    CHECK(by_time == by_tick);
}

TEST_CASE("text output: the hierarchy, the meshes and the sets, and a pose per joint") {
    const auto path = kbtest::data_file("assimp/Testwuson.X");
    if (!path) return;
    const run_result info = run({"info", *path});
    REQUIRE(info.exit_code == 0);
    CHECK(contains(info.out, "xof 0303, txt, 32-bit floats"));
    CHECK(contains(info.out, "frames: 39"));
    CHECK(contains(
        info.out,
        "'mesh_Wuson' under 'Wuson': 3205 vertices, 3732 faces, 37 bones, at most 4 influences"));
    CHECK(contains(info.out, "'Wuson_Walk': 4800 ticks per second, 39 tracks, keys: 3357 rotation, "
                             "39 scale, 39 position, 0 matrix; ticks 0 to 17280"));
    const run_result pose = run({"pose", *path, "--tick", "10", "--set", "Wuson_Walk"});
    REQUIRE(pose.exit_code == 0);
    CHECK(contains(pose.out, "0 Wuson (parent -1)\n  local "));
}

TEST_CASE("usage errors exit with 2 and say what is wrong, unreadable files and outputs with 1") {
    const auto path = kbtest::data_file("assimp/Testwuson.X");
    if (!path) return;
    struct bad {
        std::vector<std::string> args;
        int code;
        std::string part;
    };
    const bad cases[] = {
        {{}, 2, "keyblend: no command"},
        {{"explode"}, 2, "unknown command 'explode'"},
        {{"info"}, 2, "info needs a FILE"},
        {{"info", *path, "--bogus"}, 2, "unknown option '--bogus' for info"},
        {{"info", *path, "--tick", "3"}, 2, "unknown option '--tick' for info"},
        {{"pose", *path, "--set", "Wuson_Run"}, 2, "pose needs --tick T or --time SECONDS"},
        {{"pose", *path, "--tick", "3"}, 2, "pose needs either --set NAME or one or more --blend"},
        {{"pose", *path, "--tick", "3", "--set", "Wuson_Run", "--blend", "Wuson_Walk:1"},
         2,
         "either --set NAME or"},
        {{"pose", *path, "--tick", "abc", "--set", "Wuson_Run"},
         2,
         "--tick takes a finite number, not 'abc'"},
        {{"pose", *path, "--tick", "inf", "--set", "Wuson_Run"}, 2, "--tick takes a finite number"},
        {{"pose", *path, "--tick", "3", "--tick", "4", "--set", "Wuson_Run"},
         2,
         "give one --tick or --time"},
        {{"pose", *path, "--tick"}, 2, "--tick needs a value"},
        {{"pose", *path, "--tick", "3", "--blend", "Wuson_Run"},
         2,
         "--blend takes NAME:WEIGHT, not 'Wuson_Run'"},
        {{"pose", *path, "--tick", "3", "--blend", "Wuson_Run:x"},
         2,
         "the weight is not a finite number"},
        {{"pose", *path, "--tick", "3", "--set", "Nope"},
         2,
         "no animation set named 'Nope' in " + *path +
             "; its sets are: 'Wuson_Run', 'Wuson_Walk', 'Wuson_Bind'"},
        // NAME:WEIGHT splits at the last colon.
        {{"pose", *path, "--tick", "3", "--blend", "a:b:0.5"}, 2, "no animation set named 'a:b'"},
        {{"info", *path, *path}, 2, "unexpected argument"},
        // convert
        {{"convert", *path}, 2, "convert needs either -o OUT or --out-dir DIR"},
        {{"convert", *path, "-o", "a.glb", "--out-dir", "d"}, 2, "convert needs either -o OUT or --out-dir DIR"},
        {{"convert", *path, *path, "-o", "a.glb"}, 2, "-o names one output: give --out-dir DIR for several FILEs"},
        {{"convert", *path, "-o", "a.fbx"}, 2, "-o names a .glb or a .gltf file, not 'a.fbx'"},
        {{"convert", *path, "--out-dir", "d", "--format", "obj"}, 2, "--format takes glb or gltf, not 'obj'"},
        {{"convert", *path, "-o", "a.glb", "--handedness", "up"}, 2, "--handedness takes left or right, not 'up'"},
        {{"info", "/nonexistent/keyblend.x"}, 1, "keyblend: /nonexistent/keyblend.x: cannot open: "},
        // render
        {{"render", *path}, 2, "render needs --out FILE.png or FILE.gif"},
        {{"render", *path, "--out", "x.bmp"}, 2, "--out names a .png (contact sheet) or a .gif (animation), not 'x.bmp'"},
        {{"render", *path, "--out", "x.png", "--size", "10x10"}, 2, "--size takes WxH, each from 32 to 4096 pixels, not '10x10'"},
        {{"render", *path, "--out", "x.png", "--size", "100"}, 2, "--size takes WxH"},
        {{"render", *path, "--out", "x.png", "--frames", "0"}, 2, "--frames takes a whole number from 1 to 1000"},
        {{"render", *path, "--out", "x.png", "--frames", "2.5"}, 2, "--frames takes a whole number"},
        {{"render", *path, "--out", "x.png", "--from", "2", "--to", "1"}, 2, "--to must not be before --from"},
        {{"render", *path, "--out", "x.png", "--from", "nan"}, 2, "--from takes a finite number"},
        {{"render", *path, "--out", "x.png", "--set", "Wuson_Run", "--blend", "Wuson_Walk:1"}, 2, "not both"},
        {{"render", *path, "--out", "x.png", "--json"}, 2, "unknown option '--json' for render"},
        {{"render", *path, "--out", "x.png", "--tick", "3"}, 2, "unknown option '--tick' for render"},
        {{"render", *path, "--out", "x.png", "--set", "Nope"}, 2, "no animation set named 'Nope'"},
        {{"info", *path, "--importer", "gl"}, 2, "--importer takes keyblend or assimp, not 'gl'"},
        {{"render", *path, "--frames", "2", "--out", "/nonexistent/dir/x.png"}, 1, "keyblend: cannot write /nonexistent/dir/x.png"},
    };
    for (const bad& b : cases) {
        std::string joined;
        for (const std::string& a : b.args) joined += a + " ";
        CAPTURE(joined);
        const run_result r = run(b.args, true);
        CAPTURE(r.out);
        CHECK(r.exit_code == b.code);
        CHECK(contains(r.out, b.part));
        if (b.code == 2 && b.part.rfind("no animation set", 0) != 0)
            CHECK(contains(r.out, "usage:"));
    }
    const run_result help = run({"--help"});
    CHECK(help.exit_code == 0);
    CHECK(contains(
        help.out,
        "exit codes: 0 done, 1 the file cannot be read or is malformed, 2 wrong command line"));
}

TEST_CASE("a damaged file loads by default, info saying what was dropped: --strict refuses it") {
    const auto path = kbtest::data_file("assimp/malformed_skinweights_oob.x");
    if (!path) return;
    const run_result strict = run({"info", *path, "--json", "--strict"}, true);
    CHECK(strict.exit_code == 1);
    CHECK(contains(strict.out,
                   "line 244, column 5: SkinWeights: vertexIndices[23] = 1000000 is out of range"));
    CHECK(contains(strict.out, "without --strict"));
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"info", *path, "--json"},
          std::vector<std::string>{"info", *path, "--json", "--lenient"}}) { // 0.1's option
        const run_result lenient = run(args);
        CHECK(lenient.exit_code == 0);
        const json j = json::parse(lenient.out);
        CHECK(j["meshes"][0]["bones"] == 1);
        REQUIRE(j["dropped"].size() == 1);
        CHECK(contains(j["dropped"][0].get<std::string>(),
                       "vertexIndices[23] = 1000000 is out of range"));
    }
    const run_result text = run({"info", *path}, true);
    CHECK(text.exit_code == 0);
    CHECK(contains(text.out, "repaired: 0\ndropped: 1\n  "));
    CHECK(contains(text.out, "1000000"));
    CHECK_FALSE(contains(text.out, "keyblend: warning: ")); // info lists them once, in its report
    // pose says them on stderr.
    const run_result pose = run({"pose", *path, "--tick", "0", "--blend", ":0"}, true);
    CHECK(contains(pose.out, "keyblend: warning: "));
}

TEST_CASE("info: anim_test.x's four SkinWeights as written, the two naming missing frames dropped, "
          "their vertices kept with the mesh's frame") {
    const auto path = kbtest::data_file("assimp/anim_test.x");
    if (!path) return;
    const run_result r = run({"info", *path});
    REQUIRE(r.exit_code == 0);
    CAPTURE(r.out);
    CHECK(contains(r.out, "'pCylinderShape1' under 'pCylinder1': 1720 vertices, 840 faces, 3 bones"));
    CHECK(contains(r.out, "as written: 4 frames, 1 meshes, 1 materials, 4 SkinWeights, 1 animation "
                          "sets, 4 Animations with 12 AnimationKeys, 288 keys\n"));
    CHECK(contains(r.out, "dropped: 2\n"));
    CHECK(contains(r.out, "SkinWeights names frame 'joint3', which does not exist; the bone is "
                          "dropped"));
    CHECK(contains(r.out, "SkinWeights names frame 'joint4', which does not exist"));
    CHECK(contains(r.out, "repaired: 1\n"));
    CHECK(contains(r.out, "20 vertices lost their only influences with a dropped bone; they follow "
                          "the mesh's frame 'pCylinder1'"));
    CHECK(contains(r.out, "notes: 0\n"));
}

TEST_CASE("pose: a pose that is not finite fails, naming the first joint where it overflows") {
    // Every value is finite; the products are not: 3e38 * 3e38 overflows float.
    const std::string path =
        (std::filesystem::temp_directory_path() / "keyblend_tool_overflow.x").string();
    {
        std::ofstream f(path, std::ios::binary);
        f << "xof 0303txt 0032\nFrame Root { Frame Arm { Frame Hand { } } }\n"
             "AnimationSet Grow { Animation { { Root } AnimationKey { 1; 1; 0;3;3e38,1.0,1.0;;; } }\n"
             "  Animation { { Arm } AnimationKey { 1; 1; 0;3;3e38,1.0,1.0;;; } } }\n";
        REQUIRE(f.good());
    }
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"pose", path, "--tick", "0", "--set", "Grow"},
          std::vector<std::string>{"pose", path, "--tick", "0", "--set", "Grow", "--json"},
          std::vector<std::string>{"pose", path, "--time", "0", "--blend", "Grow:1"}}) {
        const run_result r = run(args, true);
        CAPTURE(r.out);
        CHECK(r.exit_code == 1);
        CHECK(contains(r.out, "the pose is not finite: joint 1 'Arm': its model matrix has NaN or "
                              "infinity"));
        CHECK_FALSE(contains(r.out, "\"joints\""));
    }
    // The bind pose of the same skeleton is finite: info and the bind pose are fine.
    CHECK(run({"info", path}).exit_code == 0);
    std::filesystem::remove(path);
}

// ================================================================================================
// Other formats (assimp) and `keyblend render`
// ================================================================================================

#include <gif_lib.h>
#include <png.h>

#include <filesystem>
#ifdef KEYBLEND_TOOL_ASSIMP
#include <keyblend/assimp.hpp>
#endif

namespace {

/// An RGB picture read back from a PNG or one frame of a GIF.
struct picture {
    int width = 0, height = 0;
    std::vector<unsigned char> rgb;

    glm::vec3 at(int x, int y) const {
        const std::size_t i = (std::size_t(y) * std::size_t(width) + std::size_t(x)) * 3;
        return glm::vec3(rgb[i], rgb[i + 1], rgb[i + 2]);
    }
    /// The part (x, y, w, h) as its own picture.
    picture crop(int x0, int y0, int w, int h) const {
        picture p;
        p.width = w;
        p.height = h;
        for (int y = y0; y < y0 + h; ++y)
            for (int x = x0; x < x0 + w; ++x) {
                const glm::vec3 c = at(x, y);
                p.rgb.insert(p.rgb.end(), {static_cast<unsigned char>(c.r), static_cast<unsigned char>(c.g),
                                           static_cast<unsigned char>(c.b)});
            }
        return p;
    }
    /// Pixels that differ from the top-left pixel (the background) by more than a few levels.
    std::size_t drawn() const {
        const glm::vec3 background = at(0, 0);
        std::size_t n = 0;
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) n += glm::length(at(x, y) - background) > 8.0f;
        return n;
    }
};

std::size_t differing_pixels(const picture& a, const picture& b) {
    REQUIRE(a.width == b.width);
    REQUIRE(a.height == b.height);
    std::size_t n = 0;
    for (int y = 0; y < a.height; ++y)
        for (int x = 0; x < a.width; ++x) n += glm::length(a.at(x, y) - b.at(x, y)) > 8.0f;
    return n;
}

picture read_png(const std::string& path) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    REQUIRE_MESSAGE(png_image_begin_read_from_file(&image, path.c_str()), image.message);
    image.format = PNG_FORMAT_RGB;
    picture p;
    p.width = int(image.width);
    p.height = int(image.height);
    p.rgb.resize(PNG_IMAGE_SIZE(image));
    REQUIRE(png_image_finish_read(&image, nullptr, p.rgb.data(), 0, nullptr));
    return p;
}

struct gif_animation {
    std::vector<picture> frames;
    std::vector<int> delays; // hundredths of a second
    bool loops = false;
};

gif_animation read_gif(const std::string& path) {
    int code = 0;
    GifFileType* gif = DGifOpenFileName(path.c_str(), &code);
    REQUIRE_MESSAGE(gif != nullptr, GifErrorString(code));
    REQUIRE(DGifSlurp(gif) == GIF_OK);
    gif_animation a;
    for (int i = 0; i < gif->ImageCount; ++i) {
        const SavedImage& frame = gif->SavedImages[i];
        const ColorMapObject* map = frame.ImageDesc.ColorMap ? frame.ImageDesc.ColorMap : gif->SColorMap;
        REQUIRE(map != nullptr);
        picture p;
        p.width = frame.ImageDesc.Width;
        p.height = frame.ImageDesc.Height;
        for (int k = 0; k < p.width * p.height; ++k) {
            const GifColorType c = map->Colors[frame.RasterBits[k]];
            p.rgb.insert(p.rgb.end(), {c.Red, c.Green, c.Blue});
        }
        a.frames.push_back(std::move(p));
        GraphicsControlBlock gcb{};
        a.delays.push_back(DGifSavedExtensionToGCB(gif, i, &gcb) == GIF_OK ? gcb.DelayTime : -1);
    }
    // The loop extension comes before the first image: DGifSlurp keeps it with that image.
    const SavedImage& first = gif->SavedImages[0];
    for (int e = 0; e + 1 < first.ExtensionBlockCount; ++e) {
        const ExtensionBlock& b = first.ExtensionBlocks[e];
        const ExtensionBlock& data = first.ExtensionBlocks[e + 1];
        if (b.Function == APPLICATION_EXT_FUNC_CODE && b.ByteCount == 11 &&
            std::string(reinterpret_cast<const char*>(b.Bytes), 11) == "NETSCAPE2.0" && data.ByteCount == 3 &&
            data.Bytes[0] == 1 && data.Bytes[1] == 0 && data.Bytes[2] == 0)
            a.loops = true; // sub-block 1, loop count 0: for ever
    }
    DGifCloseFile(gif, &code);
    return a;
}

std::string out_path(const std::string& name) {
    std::filesystem::create_directories(KEYBLEND_TOOL_OUT);
    const std::string path = std::string(KEYBLEND_TOOL_OUT) + "/" + name;
    std::filesystem::remove(path);
    return path;
}

std::optional<std::string> formats_file(const std::string& name) {
    return kbtest::shared_data_file(KEYBLEND_FORMATS_DIR, name);
}

} // namespace

TEST_CASE("info / pose on a BVH file: keyblend's reader by default, its figures and warnings") {
    const auto path = formats_file("01_01.bvh");
    if (!path) return;
    const result<io::bvh> b = io::load_bvh(*path);
    REQUIRE(b);
    const json j = run_json({"info", *path, "--json"});
    CHECK(keys_of(j) == std::set<std::string>{"format", "frames", "meshes", "contents", "repaired", "dropped",
                                              "notes", "animation_sets"});
    CHECK(j["format"] == "bvh");
    CHECK(j["frames"] == 38);
    CHECK(j["meshes"].empty());
    CHECK(j["contents"] == json{{"joints", 31}, {"end_sites", 7}, {"channels", 96}, {"frames", 2752},
                                {"declared_frames", 2752}, {"frame_time", 0.0083333}});
    CHECK(j["animation_sets"][0]["name"] == "Motion");
    CHECK(j["animation_sets"][0]["tracks"] == 31);
    CHECK(j["animation_sets"][0]["keys"]["rotation"] == 31 * 2752);
    CHECK(j["animation_sets"][0]["keys"]["position"] == 2752);
    CHECK(j["animation_sets"][0]["last_tick"] == 2751);
    // pose: the reader's clip sampled at frame 100, parents first.
    const json p = run_json({"pose", *path, "--tick", "100", "--set", "Motion", "--json"});
    REQUIRE(p["joints"].size() == 38);
    std::vector<glm::mat4> local(b->skeleton.size());
    REQUIRE(sample_local_matrices(b->clip, b->skeleton, 100.0f, local));
    for (std::size_t i = 0; i < 38; ++i) {
        CHECK(p["joints"][i]["name"] == b->skeleton.name(i));
        CHECK(kbtest::max_abs_diff(matrix_of(p["joints"][i]["local"]), local[i]) <= 1e-5f);
    }
    const run_result text = run({"info", *path});
    REQUIRE(text.exit_code == 0);
    CHECK(contains(text.out, "01_01.bvh: BVH, 31 joints and 7 End Sites, 96 channels; 2752 frames of 0.0083333 s\n"));
    CHECK(contains(text.out, "              EndSite_LeftToeBase\n"));
    CHECK(contains(text.out, "'Motion': 120 ticks (frames) per second, 31 tracks"));

    // A damaged file: the default load repairs it and info lists what it did; --strict refuses it.
    std::ifstream in(*path, std::ios::binary);
    std::string damaged((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    damaged.replace(damaged.find("Frames: 2752"), 12, "Frames: 4294967295");
    damaged.replace(damaged.find("Frame Time: .0083333"), 20, "Frame Time: nan");
    const std::string broken = out_path("broken.bvh");
    std::ofstream(broken, std::ios::binary) << damaged;
    const json l = run_json({"info", broken, "--json"});
    CHECK(l["contents"]["frames"] == 2752);
    CHECK(l["contents"]["declared_frames"] == 4294967295u);
    CHECK(l["animation_sets"][0]["ticks_per_second"].is_null()); // the default rate
    REQUIRE(l["repaired"].size() == 2);
    CHECK(contains(l["repaired"][0].get<std::string>(), "line 187, column 13: the frame time 'nan' is not finite"));
    CHECK(contains(l["repaired"][1].get<std::string>(), "the file holds 2752 frame rows, and 'Frames:' says 4294967295"));
    const run_result strict = run({"pose", broken, "--tick", "1", "--set", "Motion", "--strict"}, true);
    CHECK(strict.exit_code == 1);
    CHECK(contains(strict.out, "broken.bvh: line 187, column 13: the frame time 'nan' is not finite"));
    const run_result pose = run({"pose", broken, "--tick", "1", "--set", "Motion"}, true);
    CHECK(pose.exit_code == 0);
    CHECK(contains(pose.out, "keyblend: warning: "));
    // Not a BVH file at all, though named one: keyblend's reader says so, exit 1.
    const std::string junk = out_path("junk.bvh");
    std::ofstream(junk, std::ios::binary) << "PK\x03\x04 zip";
    const run_result j2 = run({"info", junk}, true);
    CHECK(j2.exit_code == 1);
    CHECK(contains(j2.out, "junk.bvh: line 1, column 1: not a BVH file: expected HIERARCHY, found 'PK\\x03\\x04'"));
}

TEST_CASE("info: the text of a hierarchy 15,000 joints deep stays proportional to its joints") {
    // Indentation stops at 32 levels; deeper joints say their depth. (Each line is then at most
    // 2 + 64 + 16 characters beside the name.)
    for (const char* kind : {"x", "bvh"}) {
        CAPTURE(kind);
        const std::size_t n = 15000;
        std::string text;
        if (std::string(kind) == "x") {
            text = "xof 0303txt 0032\n";
            for (std::size_t i = 0; i < n; ++i) text += "Frame f" + std::to_string(i) + " {\n";
            text.append(n, '}');
        } else {
            text = "HIERARCHY\n";
            for (std::size_t i = 0; i < n; ++i) text += (i ? "JOINT f" : "ROOT f") + std::to_string(i) + " { OFFSET 0 1 0 CHANNELS 0\n";
            text.append(n, '}');
            text += "\nMOTION\nFrames: 0\nFrame Time: 0.1\n";
        }
        const std::string path = out_path(std::string("deep.") + kind);
        std::ofstream(path, std::ios::binary) << text;
        const run_result r = run({"info", path});
        REQUIRE_MESSAGE(r.exit_code == 0, r.out.substr(0, 500));
        CHECK(r.out.size() < n * 90);
        CHECK(contains(r.out, "\n" + std::string(66, ' ') + "[depth 14999] f14999\n"));
        CHECK(contains(r.out, "\n" + std::string(66, ' ') + "f32\n"));
    }
}

TEST_CASE("render: a PNG contact sheet of N labelled frames that move") {
    const auto path = kbtest::data_file("directx-sdk-legacy-samples/tiny.x");
    if (!path) return;
    const std::string png = out_path("tiny.png");
    const run_result r = run({"render", *path, "--frames", "6", "--size", "120x100", "--out", png});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out);
    // What it did and how long each stage took.
    CHECK(contains(r.out, "read by keyblend): 48 joints, 1 meshes (4432 vertices)"));
    CHECK(contains(r.out, "6 frames from 0.000 s to 1.033 s")); // 4960 ticks at 4800/s
    for (const char* stage : {"load ", "framing ", "pose ", "skin ", "draw ", "encode "}) CHECK(contains(r.out, stage));
    CHECK(contains(r.out, "wrote " + png + ": 480x214 PNG contact sheet, 6 frames of 120x100 in a 4 x 2 grid"));
    const picture sheet = read_png(png);
    REQUIRE(sheet.width == 480);
    REQUIRE(sheet.height == 214); // 14 pixels of caption, 2 rows of 100
    std::vector<picture> frames;
    for (int f = 0; f < 6; ++f) frames.push_back(sheet.crop((f % 4) * 120, 14 + (f / 4) * 100, 120, 100));
    for (int f = 0; f < 6; ++f) {
        CAPTURE(f);
        // Not blank: the body covers a good part of the frame (and the label a little). (Seen from
        // the side Direct3D shows: a .X file is drawn mirrored into the right-handed camera.)
        CHECK(frames[std::size_t(f)].drawn() > 1200);
        // The time label, bottom left: light text on a dark box.
        const picture label = frames[std::size_t(f)].crop(2, 86, 40, 12);
        std::size_t light = 0;
        for (int y = 0; y < label.height; ++y)
            for (int x = 0; x < label.width; ++x) light += label.at(x, y).r > 200.0f;
        CHECK(light > 10);
    }
    // Tiny walks: consecutive frames differ; the first and the last (0 and 4960 ticks, the same
    // keys) are the same pose.
    for (int f = 1; f < 6; ++f) CHECK(differing_pixels(frames[std::size_t(f - 1)], frames[std::size_t(f)]) > 200);
    const picture first = frames[0].crop(0, 0, 120, 80), last = frames[5].crop(0, 0, 120, 80); // without labels
    CHECK(differing_pixels(first, last) < 30);

    // --bones draws over the mesh.
    const std::string bones = out_path("tiny_bones.png");
    REQUIRE(run({"render", *path, "--frames", "6", "--size", "120x100", "--bones", "--out", bones}).exit_code == 0);
    CHECK(differing_pixels(read_png(bones), sheet) > 300);
}

TEST_CASE("render: a looping GIF at the animation's speed, --progress, --from and --to, a static model") {
    const auto path = kbtest::data_file("assimp/Testwuson.X");
    const auto cube = kbtest::data_file("assimp/test_cube_text.x");
    if (!path || !cube) return;
    const std::string gif = out_path("wuson.gif");
    // Wuson_Run: 4640 ticks at 4800/s = 0.967 s; 20 frames a second by default.
    const run_result r = run({"render", *path, "--set", "wuson_run", "--size", "64x48", "--out", gif, "--progress"}, true);
    REQUIRE_MESSAGE(r.exit_code == 0, r.out);
    CHECK(contains(r.out, "19 frames from 0.000 s to 0.967 s"));
    CHECK(contains(r.out, "keyblend: drawing frame 19/19"));
    CHECK(contains(r.out, "64x48 GIF of 19 frames, 50 ms each, looping"));
    const gif_animation a = read_gif(gif);
    REQUIRE(a.frames.size() == 19);
    CHECK(a.loops);
    for (std::size_t f = 0; f < a.frames.size(); ++f) {
        CAPTURE(f);
        CHECK(a.frames[f].width == 64);
        CHECK(a.delays[f] == 5);
        CHECK(a.frames[f].drawn() > 300);
        if (f) CHECK(differing_pixels(a.frames[f - 1], a.frames[f]) > 20);
    }
    // A range and a frame count of one's own: 0.25 s to 0.75 s in 5 frames of 0.1 s.
    const run_result range = run({"render", *path, "--set", "Wuson_Run", "--from", "0.25", "--to", "0.75", "--frames",
                                  "5", "--size", "64x48", "--out", gif});
    REQUIRE_MESSAGE(range.exit_code == 0, range.out);
    CHECK(contains(range.out, "5 frames from 0.250 s to 0.750 s"));
    CHECK(read_gif(gif).delays == std::vector<int>{10, 10, 10, 10, 10});
    // No animation: the bind pose, one frame.
    const std::string still = out_path("cube.gif");
    const run_result c = run({"render", *cube, "--size", "64x64", "--out", still});
    REQUIRE_MESSAGE(c.exit_code == 0, c.out);
    CHECK(contains(c.out, "no animation set: the bind pose"));
    CHECK(contains(c.out, "1 frame at 0.000 s"));
    CHECK(contains(c.out, "64x64 GIF of 1 frame\n"));
    const gif_animation s = read_gif(still);
    REQUIRE(s.frames.size() == 1);
    CHECK(s.frames[0].drawn() > 1000);
    // The extension in any case names the format: a .Gif is a GIF, not a PNG under that name.
    const std::string mixed = out_path("cube.Gif");
    const run_result m = run({"render", *cube, "--size", "64x64", "--out", mixed});
    REQUIRE_MESSAGE(m.exit_code == 0, m.out);
    CHECK(contains(m.out, "64x64 GIF of 1 frame\n"));
    CHECK(read_gif(mixed).frames.size() == 1);
    // The same still as a contact sheet: the count and the grid said as they are.
    const run_result p = run({"render", *cube, "--size", "64x64", "--out", out_path("cube.png")});
    REQUIRE_MESSAGE(p.exit_code == 0, p.out);
    CHECK(contains(p.out, "PNG contact sheet, 1 frame of 64x64 in a 1 x 1 grid\n"));
}

#ifdef KEYBLEND_TOOL_ASSIMP

TEST_CASE("info / pose on files assimp reads: the adapter's figures, the same JSON shape") {
    for (const char* name : {"simple_skin.gltf", "quad_skin.glb", "animation_with_skeleton.fbx", "01_01.bvh"}) {
        CAPTURE(name);
        const auto path = formats_file(name);
        if (!path) return;
        const json j = run_json({"info", *path, "--json", "--importer", "assimp"}); // (glTF: keyblend's by default)
        const result<assimp::scene> a = assimp::load_scene(*path);
        REQUIRE(a);
        CHECK(keys_of(j) == std::set<std::string>{"importer", "format", "frames", "meshes", "animation_sets"});
        CHECK(j["importer"] == "assimp");
        CHECK(j["format"] == std::string(name).substr(std::string(name).rfind('.') + 1));
        CHECK(j["frames"] == a->skeleton.size());
        REQUIRE(j["meshes"].size() == a->meshes.size());
        for (std::size_t i = 0; i < a->meshes.size(); ++i) {
            CHECK(j["meshes"][i]["vertices"] == a->meshes[i].positions.size());
            CHECK(j["meshes"][i]["faces"] == a->meshes[i].indices.size() / 3);
            CHECK(j["meshes"][i]["bones"] == a->meshes[i].skin.bones.size());
        }
        REQUIRE(j["animation_sets"].size() == a->animations.size());
        for (std::size_t i = 0; i < a->animations.size(); ++i) {
            const clip& c = a->animations[i].clip;
            CHECK(keys_of(j["animation_sets"][i]) == std::set<std::string>{"name", "ticks_per_second", "tracks", "keys",
                                                                           "first_tick", "last_tick"});
            CHECK(j["animation_sets"][i]["name"] == c.name);
            CHECK(j["animation_sets"][i]["tracks"] == c.channels.size());
            CHECK(j["animation_sets"][i]["last_tick"] == last_key_time(c));
        }
    }
    const auto bvh = formats_file("01_01.bvh");
    if (!bvh) return;
    // pose: the BVH's 38 nodes at frame 100 (tick 100 at 120 ticks per second).
    const json p = run_json({"pose", *bvh, "--time", "0.8333333333", "--set", "Motion", "--json", "--importer", "assimp"});
    const json q = run_json({"pose", *bvh, "--tick", "100", "--set", "motion", "--json", "--importer", "assimp"});
    REQUIRE(p["joints"].size() == 38);
    for (std::size_t i = 0; i < 38; ++i)
        CHECK(kbtest::max_abs_diff(matrix_of(p["joints"][i]["model"]), matrix_of(q["joints"][i]["model"])) <= 1e-3f);
    // The same pose as keyblend's BVH reader gives, joint by joint.
    const json k = run_json({"pose", *bvh, "--tick", "100", "--set", "motion", "--json"});
    REQUIRE(k["joints"].size() == 38);
    for (std::size_t i = 0; i < 38; ++i) {
        CHECK(k["joints"][i]["name"] == q["joints"][i]["name"]);
        CHECK(kbtest::max_abs_diff(matrix_of(k["joints"][i]["model"]), matrix_of(q["joints"][i]["model"])) <= 1e-3f);
    }
    const run_result text = run({"info", *bvh, "--importer", "assimp"});
    CHECK(contains(text.out, "01_01.bvh: bvh, read by assimp"));
    CHECK(contains(text.out, "meshes: 0"));
    CHECK(contains(text.out, "'Motion': 120 ticks per second, 31 tracks"));
}

#ifdef KEYBLEND_TOOL_GLTF
TEST_CASE("glTF files: keyblend's own loader by default, pose --json --vertices, render draws morph targets") {
    const auto cesium = formats_file("khronos/CesiumMan.glb");
    const auto cube = formats_file("khronos/AnimatedMorphCube.glb");
    if (!cesium || !cube) return;
    const json info = run_json({"info", *cesium, "--json"});
    CHECK(info["format"] == "glb");
    CHECK(info["frames"] == 22);
    REQUIRE(info["meshes"].size() == 1);
    CHECK(info["meshes"][0]["vertices"] == 3273);
    CHECK(info["meshes"][0]["bones"] == 19);
    CHECK(info["animation_sets"][0]["last_tick"] == 2);
    CHECK(run_json({"info", *cesium, "--json", "--importer", "assimp"})["importer"] == "assimp");
    // pose --vertices: each mesh instance, the joint placing it, its weights, its posed vertices.
    const json p = run_json({"pose", *cesium, "--time", "0.75", "--set", "animation_0", "--json", "--vertices"});
    REQUIRE(p["meshes"].size() == 1);
    CHECK(p["meshes"][0]["name"] == "Cesium_Man");
    CHECK(p["meshes"][0]["vertices"].size() == 3273);
    CHECK(p["meshes"][0]["morph_weights"].empty());
    const json q = run_json({"pose", *cube, "--time", "1.3", "--set", "Square", "--json", "--vertices"});
    REQUIRE(q["meshes"].size() == 1);
    CHECK(q["meshes"][0]["joint"] == "AnimatedMorphCube");
    REQUIRE(q["meshes"][0]["morph_weights"].size() == 2);
    CHECK(q["meshes"][0]["morph_weights"][0].get<double>() > 0.5);
    const run_result usage = run({"pose", *cube, "--time", "1", "--set", "Square", "--vertices"}, true);
    CHECK(usage.exit_code == 2);
    // render: the cube's morph targets move it between frames.
    const std::string gif = out_path("morph_cube.gif");
    const run_result g = run({"render", *cube, "--frames", "3", "--size", "64x64", "--out", gif});
    REQUIRE_MESSAGE(g.exit_code == 0, g.out);
    const gif_animation a = read_gif(gif);
    REQUIRE(a.frames.size() == 3);
    CHECK(differing_pixels(a.frames[0], a.frames[1]) > 10);
}
#endif

TEST_CASE("--importer assimp on a .X file: the same pose as keyblend's loader, mirrored in z") {
    const auto path = kbtest::data_file("assimp/Testwuson.X");
    const auto oob = kbtest::data_file("assimp/malformed_skinweights_oob.x");
    if (!path || !oob) return;
    const json k = run_json({"pose", *path, "--tick", "1000", "--set", "Wuson_Walk", "--json"});
    const json a = run_json({"pose", *path, "--tick", "1000", "--set", "Wuson_Walk", "--json", "--importer", "assimp"});
    const json info = run_json({"info", *path, "--json", "--importer", "assimp"});
    CHECK(info["importer"] == "assimp");
    CHECK(info["frames"] == 40); // assimp's $dummy_root above the two root frames
    std::map<std::string, glm::mat4> by_name;
    for (const json& e : a["joints"]) by_name[e["name"]] = matrix_of(e["model"]);
    const glm::mat4 s = glm::scale(glm::mat4(1.0f), glm::vec3(1, 1, -1));
    REQUIRE(k["joints"].size() == 39);
    for (const json& e : k["joints"]) {
        CAPTURE(e["name"].get<std::string>());
        REQUIRE(by_name.count(e["name"]));
        const glm::mat4 mirrored = s * by_name[e["name"]] * s;
        CHECK(kbtest::max_abs_diff(matrix_of(e["model"]), mirrored) <= 2e-3f); // Wuson is ~100 units
    }
    // assimp 5.2.5 would crash on this file: the adapter checks it first.
    const run_result r = run({"info", *oob, "--importer", "assimp"}, true);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.out, "not handed to assimp"));
}

TEST_CASE("assimp runs in a process of its own: a crash, exhausted memory or time is exit 1, named") {
    // A BVH file 25,000 joints deep: keyblend's reader loads it; assimp 5.2.5's recursion overflows
    // the stack (SIGSEGV), in its own process.
    std::string deep = "HIERARCHY\n";
    for (int i = 0; i < 25000; ++i) deep += (i ? "JOINT j" : "ROOT j") + std::to_string(i) + " { OFFSET 0 1 0 CHANNELS 0\n";
    deep.append(25000, '}');
    deep += "\nMOTION\nFrames: 0\nFrame Time: 0.1\n";
    const std::string bvh = out_path("deep25k.bvh");
    std::ofstream(bvh, std::ios::binary) << deep;
    CHECK(run({"info", bvh}).exit_code == 0);
    const run_result crash = run({"info", bvh, "--importer", "assimp"}, true);
    CHECK(crash.exit_code == 1);
#if defined(KEYBLEND_TOOL_SANITIZED)
    // (AddressSanitizer catches the overflow first and reports it; then GCC's runtime aborts, a
    // signal the tool names, and clang's exits with 1.)
    CHECK_MESSAGE((contains(crash.out, "keyblend: " + bvh + ": assimp's importer crashed: signal ") ||
                   contains(crash.out, "AddressSanitizer: stack-overflow")),
                  crash.out.substr(0, 2000));
#else
    CHECK(contains(crash.out, "keyblend: " + bvh + ": assimp's importer crashed: signal 11 (SIGSEGV"));
#endif
    // A 24-byte GLB whose JSON chunk claims 2 GB: the allocation fails under the memory limit, and
    // with more memory allowed, the import overruns a short time limit.
    const std::string glb = out_path("claim.glb");
    std::ofstream(glb, std::ios::binary) << std::string("glTF\x02\0\0\0\x18\0\0\0\0\0\0\x80JSON{}  ", 24);
    // (keyblend's own glTF loader, the default for .glb, refuses the claim without allocating it.)
    const run_result own = run({"info", glb}, true);
    CHECK(own.exit_code == 1);
    CHECK(contains(own.out, "keyblend: " + glb));
    const run_result memory = run({"info", glb, "--importer", "assimp", "--max-memory", "512"}, true);
    CHECK(memory.exit_code == 1);
#if !defined(KEYBLEND_TOOL_SANITIZED) // (a sanitized tool has no address-space limit: see examples/tool/isolate.cpp)
    CHECK(contains(memory.out, "keyblend: " + glb + ": assimp's importer ran out of memory (--max-memory 512 MiB)"));
#endif
    const run_result time = run({"info", glb, "--importer", "assimp", "--max-memory", "8192", "--max-seconds", "0.05"}, true);
    CHECK(time.exit_code == 1);
    CHECK(contains(time.out, "keyblend: " + glb + ": assimp's importer did not finish within 0.05 s (--max-seconds): stopped"));
    // The limits on the command line.
    CHECK(run({"info", glb, "--max-memory", "10"}).exit_code == 2);
    CHECK(run({"info", glb, "--max-seconds", "0"}).exit_code == 2);
}

TEST_CASE("render: a skeleton-only file (BVH) draws its skeleton, and every format renders") {
    const auto bvh = formats_file("01_01.bvh");
    if (!bvh) return;
    const std::string png = out_path("bvh.png");
    const run_result r = run({"render", *bvh, "--frames", "4", "--size", "96x96", "--out", png});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out);
    CHECK(contains(r.out, "(BVH, read by keyblend): 38 joints, 0 meshes (0 vertices), no mesh: the skeleton is drawn"));
    const picture sheet = read_png(png);
    std::vector<picture> frames;
    for (int f = 0; f < 4; ++f) frames.push_back(sheet.crop(f * 96, 14, 96, 80)); // above the labels
    for (int f = 0; f < 4; ++f) {
        CHECK(frames[std::size_t(f)].drawn() > 40);
        if (f) CHECK(differing_pixels(frames[std::size_t(f - 1)], frames[std::size_t(f)]) > 40);
    }
    for (const char* name : {"simple_skin.gltf", "quad_skin.glb", "animation_with_skeleton.fbx"}) {
        CAPTURE(name);
        const auto path = formats_file(name);
        if (!path) return;
        const std::string gif = out_path(std::string(name) + ".gif");
        const run_result g = run({"render", *path, "--frames", "3", "--size", "64x64", "--bones", "--out", gif});
        REQUIRE_MESSAGE(g.exit_code == 0, g.out);
        // The first line names the file's format and the importer that read it.
        const bool fbx = std::string(name) == "animation_with_skeleton.fbx";
        CHECK(contains(g.out, fbx ? "(FBX, read by assimp)" : "(glTF 2.0, read by keyblend)"));
        const gif_animation a = read_gif(gif);
        REQUIRE(a.frames.size() == 3);
        CHECK(a.frames[0].drawn() > 200);
        if (std::string(name) != "quad_skin.glb") // (no animation: a still)
            CHECK(differing_pixels(a.frames[0], a.frames[1]) > 10);
    }
}

#endif

namespace {

/// The largest distance between the virtual vertices (at `shell` along each model axis of each
/// joint) of two `pose --json` outputs.
double pose_error(const json& a, const json& b, double shell) {
    REQUIRE(a["joints"].size() == b["joints"].size());
    double worst = 0.0;
    for (std::size_t j = 0; j < a["joints"].size(); ++j) {
        const glm::mat4 x = matrix_of(a["joints"][j]["model"]), y = matrix_of(b["joints"][j]["model"]);
        const glm::dvec3 dt = glm::dvec3(x[3]) - glm::dvec3(y[3]);
        for (int k = 0; k < 3; ++k) worst = std::max(worst, glm::length(dt + shell * (glm::dvec3(x[k]) - glm::dvec3(y[k]))));
    }
    return worst;
}

std::string package_path(const std::string& name) {
    std::filesystem::create_directories(KEYBLEND_TOOL_OUT);
    return std::string(KEYBLEND_TOOL_OUT) + "/" + name + ".kbp";
}

} // namespace

TEST_CASE("pack: packages of the shared files, their sets within the bound, read by pose and render") {
    for (const char* file : {"assimp/Testwuson.X", "assimp/BCN_Epileptic.X", "directx-sdk-legacy-samples/tiny.x"}) {
        CAPTURE(file);
        const auto path = kbtest::data_file(file);
        if (!path) return;
        const std::string out = package_path(std::filesystem::path(file).stem().string());
        const run_result packed = run({"pack", *path, "-o", out}, true);
        REQUIRE_MESSAGE(packed.exit_code == 0, packed.out);
        CHECK(contains(packed.out, "0.01 cm-eq"));
        const json info = run_json({"info", out, "--json"});
        CHECK(keys_of(info) == std::set<std::string>{"importer", "format", "bytes", "frames", "meshes", "animation_sets"});
        const result<io::xfile> x = io::load_xfile(*path);
        REQUIRE(x);
        CHECK(info["frames"] == x->skeleton.size());
        CHECK(info["meshes"].size() == x->meshes.size());
        REQUIRE(info["animation_sets"].size() == x->animation_sets.size());
        for (std::size_t i = 0; i < x->animation_sets.size(); ++i) {
            const json& set = info["animation_sets"][i];
            const keyblend::clip& c = x->animation_sets[i].clip;
            CAPTURE(c.name);
            CHECK(set["name"] == c.name);
            CHECK(set["bound_met"] == true);
            CHECK(set["max_error"].get<double>() <= set["precision"].get<double>());
            CHECK(set["bytes"].get<std::size_t>() < set["source_key_bytes"].get<std::size_t>());
            // pose: the package's and the file's, within the bound (at key ticks for matrix keys,
            // which the file's own pose lerps element-wise between keys).
            const double precision = set["precision"].get<double>(), shell = set["shell_distance"].get<double>();
            const bool matrix_keys = io::count_keys(c).matrix > 0;
            const float step = matrix_keys ? c.duration / 4.0f : c.duration / 7.0f + 3.0f;
            for (float t = 0.0f; t <= c.duration; t += std::max(step, 1.0f)) {
                const float tick = matrix_keys ? c.channels[0].matrix.time(std::min<std::size_t>(std::size_t(t / step), c.channels[0].matrix.size() - 1)) : t;
                const std::string ticks = std::to_string(tick);
                const json a = run_json({"pose", out, "--set", c.name, "--tick", ticks, "--json"});
                const json b = run_json({"pose", *path, "--set", c.name, "--tick", ticks, "--json"});
                CAPTURE(tick);
                CHECK(pose_error(a, b, shell) <= precision * 1.001);
            }
        }
        const std::string png = std::string(KEYBLEND_TOOL_OUT) + "/pack_" + std::filesystem::path(file).stem().string() + ".png";
        const run_result drawn = run({"render", out, "--frames", "2", "--size", "64x64", "--out", png}, true);
        CHECK_MESSAGE(drawn.exit_code == 0, drawn.out);
        CHECK(contains(drawn.out, "(keyblend package, read by keyblend)"));
        // Without --set, the first set plays, as for the file itself (the package's plain clips
        // have no channels: its keys are in the compressed clips).
        REQUIRE(!x->animation_sets.empty());
        CHECK(contains(drawn.out, "  set '" + x->animation_sets[0].clip.name + "': "));
        CHECK(!contains(drawn.out, "no animation set"));
        CHECK(std::filesystem::exists(png));
    }
}

#ifdef KEYBLEND_TOOL_GLTF
TEST_CASE("convert: .X files into glTF, read back by the tool as the mirror of the source, a failed input failing the run") {
    const auto wuson = kbtest::data_file("assimp/Testwuson.X");
    const auto broken = kbtest::data_file("assimp/malformed_skinweights_oob.x");
    if (!wuson || !broken) return;
    const std::string dir = std::string(KEYBLEND_TOOL_OUT) + "/convert";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    // Several inputs, one of them missing: the others are written, the exit code is 1.
    const run_result r = run({"convert", *wuson, *broken, "/nonexistent/keyblend.x", "--out-dir", dir, "--format", "gltf"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.out, *wuson + " -> " + dir + "/Testwuson.gltf: converted (mirrored from left-handed): 41 nodes, 1 meshes"));
    CHECK(contains(r.out, "3 animations"));
    // The loader's warnings and the writer's repairs, each listed.
    CHECK(contains(r.out, "load dropped: " + *broken));
    CHECK(contains(r.out, "write repaired: mesh 0 'Cube': 1 vertices have no influence"));
    CHECK(contains(r.out, "/nonexistent/keyblend.x: failed (not read)"));
    CHECK(contains(r.out, "2 converted, 1 failed"));
    CHECK(std::filesystem::exists(dir + "/Testwuson.bin"));
    // Read back by the tool: every joint's model matrix is the mirror of the .X file's.
    const glm::mat4 m = glm::scale(glm::mat4(1.0f), glm::vec3(1.0f, 1.0f, -1.0f));
    const json a = run_json({"pose", *wuson, "--set", "Wuson_Walk", "--time", "0.3", "--json"});
    const json b = run_json({"pose", dir + "/Testwuson.gltf", "--set", "Wuson_Walk", "--time", "0.3", "--json"});
    std::map<std::string, glm::mat4> converted;
    for (const json& j : b["joints"]) converted[j["name"].get<std::string>()] = matrix_of(j["model"]);
    REQUIRE(a["joints"].size() == 39);
    for (const json& j : a["joints"]) {
        const std::string name = j["name"].get<std::string>();
        REQUIRE(converted.count(name) == 1);
        CHECK(kbtest::max_abs_diff(converted[name], m * matrix_of(j["model"]) * m) < 1e-4f);
    }
    // One input, -o: a .glb.
    const run_result one = run({"convert", *wuson, "-o", dir + "/wuson.glb"});
    CHECK(one.exit_code == 0);
    CHECK(contains(one.out, "1 converted, 0 failed"));
    CHECK(run_json({"info", dir + "/wuson.glb", "--json"})["animation_sets"].size() == 3);
    // render draws the .glb as it draws the .X file (a .X file is drawn mirrored into the
    // right-handed camera, the glTF file is mirrored already): the frames, below the caption that
    // names the file, differ only in a few edge pixels.
    std::vector<picture> sheets;
    for (const std::string& input : {*wuson, dir + "/wuson.glb"}) {
        const std::string png = out_path("convert_render_" + std::to_string(sheets.size()) + ".png");
        const run_result drawn = run({"render", input, "--set", "Wuson_Walk", "--frames", "4", "--size", "160x120", "--out", png});
        REQUIRE_MESSAGE(drawn.exit_code == 0, drawn.out);
        const picture sheet = read_png(png);
        sheets.push_back(sheet.crop(0, 14, sheet.width, sheet.height - 14));
    }
    CHECK(sheets[0].drawn() > 4000);
    CHECK(differing_pixels(sheets[0], sheets[1]) < std::size_t(sheets[0].width * sheets[0].height / 200));
}

TEST_CASE("convert: textures beside the model into a .glb, DDS, BMP and TGA as PNG into a .gltf too, the rest URIs, each noted") {
    const std::string dir = std::string(KEYBLEND_TOOL_OUT) + "/textures";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir + "/tex");
    const auto write = [](const std::string& path, const std::string& bytes) {
        std::ofstream(path, std::ios::binary) << bytes;
    };
    // One material per triangle: a PNG in a folder (named with .X's doubled backslash), a JPEG
    // named by an absolute path from another machine (found by its file name), a DDS (DXT1, 4 x 4,
    // red: one block, every index 0), a file that is not there, the PNG again, and a DDS too short
    // for its header.
    const std::string png("\x89PNG\r\n\x1a\n-png-", 13), jpeg("\xff\xd8\xff\xe0-jpeg-", 10);
    std::string dds("DDS ", 4);
    dds.resize(128, '\0');
    const auto put32 = [&dds](std::size_t at, std::uint32_t v) {
        for (std::size_t i = 0; i < 4; ++i) dds[at + i] = static_cast<char>((v >> (8 * i)) & 0xFFu);
    };
    put32(4, 124);
    put32(12, 4);
    put32(16, 4);
    put32(76, 32);
    put32(80, 0x4);
    dds.replace(84, 4, "DXT1");
    dds += std::string("\x00\xF8\x00\xF8\0\0\0\0", 8);
    write(dir + "/tex/skin.png", png);
    write(dir + "/photo.jpg", jpeg);
    write(dir + "/skin.dds", dds);
    write(dir + "/bad.dds", "DDS |not an image glTF holds");
    const auto material = [](const char* name, const char* file) {
        return std::string("Material ") + name + " { 1.0;1.0;1.0;1.0;; 0.0; 0.0;0.0;0.0;; 0.0;0.0;0.0;; TextureFilename { \"" +
               file + "\"; } }\n";
    };
    write(dir + "/plate.x", "xof 0303txt 0032\nFrame Root {\n Mesh Plate {\n"
                            "  4; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;, 1.0;1.0;0.0;;\n"
                            "  6; 3;0,1,2;, 3;1,3,2;, 3;0,1,3;, 3;0,3,2;, 3;2,1,0;, 3;1,2,3;;\n"
                            "  MeshTextureCoords { 4; 0.0;0.0;, 1.0;0.0;, 0.0;1.0;, 1.0;1.0;; }\n"
                            "  MeshMaterialList { 6; 6; 0, 1, 2, 3, 4, 5;;\n" +
                                material("A", "tex\\\\skin.png") + material("B", "C:\\\\art\\\\photo.jpg") +
                                material("C", "skin.dds") + material("D", "missing.png") +
                                material("E", "tex/skin.png") + material("F", "bad.dds") + "  }\n }\n}\n");
    const run_result r = run({"convert", dir + "/plate.x", "-o", dir + "/plate.glb"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out);
    CHECK(contains(r.out, "texture note: 'tex\\\\skin.png' (" + dir + "/tex/skin.png): 13 bytes of image/png, embedded in the .glb"));
    CHECK(contains(r.out, "texture note: 'C:\\\\art\\\\photo.jpg' (" + dir + "/photo.jpg): 10 bytes of image/jpeg, embedded in the .glb"));
    CHECK(contains(r.out, "texture note: 'skin.dds' (" + dir + "/skin.dds): a DDS (DXT1), 4 x 4, converted to "));
    CHECK(contains(r.out, "texture note: 'missing.png' (" + dir + "/missing.png): no such file; the .glb refers to it by URI"));
    CHECK(contains(r.out, "texture note: 'bad.dds' (" + dir + "/bad.dds): not converted to PNG: the file ends before its DDS "
                          "header (128 bytes; 28 there) (viewers may not show it); the .glb refers to it by URI"));
    // Read back: the bytes as they were, the PNG one image for both its names, the DDS a PNG of
    // its pixels.
    const result<gltf::model> g = gltf::load(dir + "/plate.glb");
    REQUIRE_MESSAGE(bool(g), (g ? std::string() : g.error().message));
    std::map<std::string, const io::material*> by_name; // (a primitive per material)
    for (const gltf::mesh_instance& m : g->meshes)
        for (const io::material& x : m.materials) by_name[x.name] = &x;
    REQUIRE(by_name.size() == 6);
    REQUIRE(by_name["A"]->texture_image);
    CHECK(by_name["A"]->texture_image->mime_type == "image/png");
    CHECK(by_name["A"]->texture_image->bytes == std::vector<unsigned char>(png.begin(), png.end()));
    CHECK(by_name["E"]->texture_image == by_name["A"]->texture_image);
    REQUIRE(by_name["B"]->texture_image);
    CHECK(by_name["B"]->texture_image->mime_type == "image/jpeg");
    CHECK(by_name["B"]->texture_image->bytes == std::vector<unsigned char>(jpeg.begin(), jpeg.end()));
    REQUIRE(by_name["C"]->texture_image);
    const io::embedded_image& converted = *by_name["C"]->texture_image;
    CHECK(converted.mime_type == "image/png");
    CHECK(contains(r.out, "converted to " + std::to_string(converted.bytes.size()) + " bytes of image/png, embedded in the .glb"));
    png_image read{};
    read.version = PNG_IMAGE_VERSION;
    REQUIRE(png_image_begin_read_from_memory(&read, converted.bytes.data(), converted.bytes.size()));
    CHECK(read.width == 4);
    CHECK(read.height == 4);
    CHECK(read.format == PNG_FORMAT_RGB); // every pixel opaque
    read.format = PNG_FORMAT_RGBA;
    std::vector<unsigned char> pixels(PNG_IMAGE_SIZE(read));
    REQUIRE(png_image_finish_read(&read, nullptr, pixels.data(), 0, nullptr));
    for (std::size_t i = 0; i < 16; ++i)
        CHECK(std::vector<unsigned char>(pixels.begin() + std::ptrdiff_t(4 * i), pixels.begin() + std::ptrdiff_t(4 * i + 4)) ==
              std::vector<unsigned char>{255, 0, 0, 255});
    CHECK_FALSE(by_name["F"]->texture_image);
    CHECK(by_name["F"]->texture_file == "bad.dds");
    CHECK(by_name["D"]->texture_file == "missing.png");
    // A .gltf refers to the PNG and JPEG files by URI; the DDS goes into its buffer as a PNG.
    const run_result t = run({"convert", dir + "/plate.x", "-o", dir + "/plate.gltf"});
    REQUIRE_MESSAGE(t.exit_code == 0, t.out);
    CHECK_FALSE(contains(t.out, "texture note: 'tex")); // (the files that will show: no note)
    CHECK_FALSE(contains(t.out, "texture note: 'C:"));
    CHECK(contains(t.out, "'skin.dds' (" + dir + "/skin.dds): a DDS (DXT1), 4 x 4, converted to " +
                              std::to_string(converted.bytes.size()) + " bytes of image/png, embedded in the .gltf's buffer"));
    CHECK(contains(t.out, "'missing.png' (" + dir + "/missing.png): no such file; the .gltf refers to it by URI"));
    CHECK(contains(t.out, "'bad.dds' (" + dir + "/bad.dds): not converted to PNG: the file ends before its DDS header (128 "
                          "bytes; 28 there) (viewers may not show it); the .gltf refers to it by URI"));
    std::ifstream in(dir + "/plate.gltf");
    const json j = json::parse(in);
    std::set<std::string> uris;
    std::size_t in_buffer = 0;
    for (const json& image : j["images"]) {
        if (image.contains("uri")) uris.insert(image["uri"].get<std::string>());
        else in_buffer += image["mimeType"] == "image/png" && image.contains("bufferView");
    }
    CHECK(uris == std::set<std::string>{"tex/skin.png", "photo.jpg", "missing.png", "bad.dds"});
    CHECK(in_buffer == 1);
    const result<gltf::model> back = gltf::load(dir + "/plate.gltf");
    REQUIRE_MESSAGE(bool(back), (back ? std::string() : back.error().message));
    bool found = false;
    for (const gltf::mesh_instance& m : back->meshes)
        for (const io::material& x : m.materials)
            if (x.name == "C") found = x.texture_image && x.texture_image->bytes == converted.bytes;
    CHECK(found);
}

#ifdef KEYBLEND_TOOL_ASSIMP
TEST_CASE("convert --importer assimp: the materials and the embedded texture come through, as keyblend's loader reads them") {
    const auto cesium = formats_file("khronos/CesiumMan.glb");
    if (!cesium) return;
    const std::string out = out_path("cesium_assimp.glb");
    const run_result r = run({"convert", *cesium, "--importer", "assimp", "-o", out});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out);
    CHECK(contains(r.out, "1 materials"));
    const result<gltf::model> a = gltf::load(*cesium), b = gltf::load(out);
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(a->meshes.size() == 1);
    REQUIRE(b->meshes.size() == 1);
    REQUIRE(a->meshes[0].materials.size() == 1);
    REQUIRE(b->meshes[0].materials.size() == 1);
    const io::material &x = a->meshes[0].materials[0], &y = b->meshes[0].materials[0];
    CHECK(y.name == x.name);
    CHECK(y.diffuse == x.diffuse);
    REQUIRE(x.texture_image);
    REQUIRE(y.texture_image);
    CHECK(y.texture_image->mime_type == "image/jpeg");
    CHECK(y.texture_image->bytes == x.texture_image->bytes);
}
#endif
#endif

TEST_CASE("pack: blending a package's sets matches blending the file's within their bounds") {
    const auto path = kbtest::data_file("assimp/Testwuson.X");
    if (!path) return;
    const std::string out = package_path("wuson_blend");
    REQUIRE(run({"pack", *path, "-o", out}).exit_code == 0);
    const json info = run_json({"info", out, "--json"});
    const double precision = info["animation_sets"][0]["precision"].get<double>();
    const double shell = info["animation_sets"][0]["shell_distance"].get<double>();
    for (const char* tick : {"0", "999.5", "3000"}) {
        const std::vector<std::string> blend = {"--tick", tick, "--blend", "Wuson_Run:0.5", "--blend", "Wuson_Walk:0.5", "--json"};
        std::vector<std::string> a = {"pose", out}, b = {"pose", *path};
        a.insert(a.end(), blend.begin(), blend.end());
        b.insert(b.end(), blend.begin(), blend.end());
        CHECK(pose_error(run_json(a), run_json(b), shell) <= precision * 1.001);
    }
}

TEST_CASE("pack: --precision and --shell, and what it refuses") {
    const auto path = kbtest::data_file("assimp/Testwuson.X");
    if (!path) return;
    const std::string coarse = package_path("wuson_coarse"), fine = package_path("wuson_fine");
    REQUIRE(run({"pack", *path, "-o", coarse, "--precision", "0.01", "--shell", "0.1"}).exit_code == 0);
    REQUIRE(run({"pack", *path, "--out", fine, "--precision", "0.00001"}).exit_code == 0);
    const json c = run_json({"info", coarse, "--json"}), f = run_json({"info", fine, "--json"});
    CHECK(c["animation_sets"][1]["precision"].get<double>() == doctest::Approx(0.01));
    CHECK(c["animation_sets"][1]["shell_distance"].get<double>() == doctest::Approx(0.1));
    CHECK(c["animation_sets"][1]["bytes"].get<std::size_t>() < f["animation_sets"][1]["bytes"].get<std::size_t>());
    CHECK(f["animation_sets"][1]["max_error"].get<double>() <= 0.00001);
    CHECK(run({"pack", *path}).exit_code == 2);                                       // no -o
    CHECK(run({"pack", *path, "-o", fine, "--precision", "0"}).exit_code == 2);       // not > 0
    CHECK(run({"pack", *path, "-o", fine, "--shell", "x"}).exit_code == 2);
    CHECK(run({"info", *path, "--precision", "1"}).exit_code == 2);                   // pack's option
    const run_result again = run({"pack", coarse, "-o", fine}, true);                 // a package already
    CHECK(again.exit_code == 1);
    CHECK(contains(again.out, "package already"));
    // A damaged package: refused with the place named.
    std::ifstream in(coarse, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.resize(bytes.size() / 2);
    const std::string cut = package_path("wuson_cut");
    std::ofstream(cut, std::ios::binary) << bytes;
    const run_result damaged = run({"info", cut}, true);
    CHECK(damaged.exit_code == 1);
    CHECK(contains(damaged.out, "package: header (byte 8)"));
}
