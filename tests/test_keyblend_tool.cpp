// The `keyblend` command-line tool, run as a user runs it: its JSON is checked against the loader,
// the data README and the sampling rules; its usage errors against its exit codes.
#include <keyblend/io/xfile.hpp>

#include "helpers.hpp"

#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

using json = nlohmann::json;
using namespace keyblend;

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

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
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

TEST_CASE("info --json on files the data README describes: the README's figures") {
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

TEST_CASE("text output: the hierarchy, the meshes and the sets; a pose per joint") {
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

TEST_CASE("usage errors exit with 2 and say what is wrong; unreadable files exit with 1") {
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
        {{"info", "/nonexistent/keyblend.x"}, 1, "keyblend: /nonexistent/keyblend.x: cannot read"},
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

TEST_CASE("a damaged file loads by default, info saying what was dropped; --strict refuses it") {
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
