// keyblend::gltf::write: glTF files written from code-built assets, checked in their JSON against
// the documented mapping (the mirror, the winding, influences, repairs), and every animated .X file
// of KEYBLEND_DATA_DIR written, read back with gltf::load and compared with the source under the
// mirror: joint model matrices at every key and between keys, and skinned vertices.
#include "helpers.hpp"
#include "job_helpers.hpp"

#include <keyblend/gltf.hpp>
#include <keyblend/io/xfile.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace keyblend;
using json = nlohmann::json;

namespace {

const glm::mat4 mirror_z = glm::scale(glm::mat4(1.0f), glm::vec3(1.0f, 1.0f, -1.0f));

/// Writes `a` as .gltf into memory and returns its JSON (and the report).
json write_json(const gltf::asset& a, gltf::write_report& report, const gltf::write_options& o = {}) {
    std::vector<unsigned char> text, bin;
    result<gltf::write_report> r = gltf::write_memory(a, gltf::container::gltf, text, bin, o);
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    report = *r;
    return json::parse(std::string(text.begin(), text.end()));
}

/// Writes `a` as GLB and reads it back with keyblend's loader.
gltf::model round_trip(const gltf::asset& a, gltf::write_report* report = nullptr, const gltf::write_options& o = {}) {
    std::vector<unsigned char> glb, bin;
    result<gltf::write_report> r = gltf::write_memory(a, gltf::container::glb, glb, bin, o);
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    if (report) *report = *r;
    CHECK(bin.empty());
    result<gltf::model> g = gltf::load_memory(glb.data(), glb.size());
    REQUIRE_MESSAGE(g, (g ? "" : g.error().message));
    return std::move(*g);
}

bool has_warning(const gltf::write_report& r, io::warning_action action, const std::string& text) {
    return std::any_of(r.warnings.begin(), r.warnings.end(), [&](const io::load_warning& w) {
        return w.action == action && w.message.find(text) != std::string::npos;
    });
}

/// A two-joint skeleton: a root, and a child rotated and moved off every axis.
skeleton two_joints() {
    std::vector<joint_desc> j(2);
    j[0].name = "hips";
    j[0].bind_local = glm::translate(glm::mat4(1.0f), glm::vec3(1.0f, 2.0f, 3.0f));
    j[1].name = "";
    j[1].parent = 0;
    transform t;
    t.translation = glm::vec3(0.5f, -1.0f, 2.0f);
    t.rotation = glm::normalize(make_quat(0.9f, 0.1f, 0.3f, -0.2f));
    t.scale = glm::vec3(1.0f, 2.0f, 0.5f);
    j[1].bind_local = to_matrix(t);
    return skeleton::from_parents(j).value();
}


} // namespace

TEST_CASE("gltf write: the mirror of a left-handed source, and joint names") {
    const skeleton s = two_joints();
    gltf::asset a;
    a.skeleton = &s;
    gltf::write_report report;
    const json left = write_json(a, report);
    const json& nodes = left["nodes"];
    REQUIRE(nodes.size() == 2);
    CHECK(nodes[0]["name"] == "hips");
    CHECK(nodes[1]["name"] == "joint_1"); // unnamed: a stable name from its index
    CHECK(nodes[0]["children"] == json::array({1}));
    CHECK(left["scenes"][0]["nodes"] == json::array({0}));
    // Translations (x, y, -z); rotations (-x, -y, z, w).
    CHECK(nodes[0]["translation"][2].get<float>() == -3.0f);
    const transform t = s.bind_transforms()[1];
    const json& r = nodes[1]["rotation"];
    CHECK(r[0].get<float>() == doctest::Approx(-t.rotation.x).epsilon(1e-6));
    CHECK(r[1].get<float>() == doctest::Approx(-t.rotation.y).epsilon(1e-6));
    CHECK(r[2].get<float>() == doctest::Approx(t.rotation.z).epsilon(1e-6));
    CHECK(r[3].get<float>() == doctest::Approx(t.rotation.w).epsilon(1e-6));
    CHECK(nodes[1]["translation"][2].get<float>() == -2.0f);
    // A right-handed source is written as it is.
    gltf::write_options right;
    right.source = gltf::handedness::right;
    const json same = write_json(a, report, right);
    CHECK(same["nodes"][0]["translation"][2].get<float>() == 3.0f);
    CHECK(same["nodes"][1]["rotation"][0].get<float>() == doctest::Approx(t.rotation.x).epsilon(1e-6));
    // Read back: every model matrix is M * source * M.
    const gltf::model g = round_trip(a);
    REQUIRE(g.skeleton.size() == 2);
    for (std::size_t j = 0; j < 2; ++j)
        CHECK(kbtest::max_abs_diff(g.skeleton.bind_model()[j], mirror_z * s.bind_model()[j] * mirror_z) < 1e-5f);
}

TEST_CASE("gltf write: a skinned mesh: winding, bounds, influences in sets of four, repairs") {
    const skeleton s = two_joints();
    io::mesh m;
    m.name = "body";
    m.joint = 0;
    m.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
    m.normals = {{0, 0, 2}, {0, 0, 1}, {0, 0, 1}, {0, 0, 0}, {0, 1, 0}};
    m.texcoords = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0.5f, 0.5f}};
    m.indices = {0, 1, 2, 0, 2, 3, 1, 2, 9}; // the last triangle points past the vertices
    m.materials.resize(1);
    m.materials[0].name = "skin";
    m.materials[0].diffuse = glm::vec4(0.5f, 0.25f, 2.0f, 1.0f); // blue beyond 1: clamped
    m.materials[0].texture_file = "textures\\\\skin 1.bmp";
    m.triangle_materials = {0, 0, 0};
    // Five bones, the last two on one joint with the same offset (merged into one skin joint).
    const std::size_t k = 6;
    m.skin.influences_per_vertex = k;
    for (std::size_t b = 0; b < 5; ++b) m.skin.bones.push_back({"b" + std::to_string(b), b % 2, s.inverse_bind_model()[b % 2]});
    m.skin.bones.push_back({"missing", 7, glm::mat4(1.0f)}); // a joint the skeleton lacks: dropped
    m.skin.bone_indices.assign(5 * k, 0);
    m.skin.weights.assign(5 * k, 0.0f);
    // Vertex 0: six influences (0.3 on a missing bone); vertex 1: weights summing to 0.5;
    // vertex 2: none (follows the mesh's joint); vertex 3: two influences on one joint.
    const std::uint16_t b0[k] = {0, 1, 2, 3, 4, 5};
    const float w0[k] = {0.2f, 0.15f, 0.1f, 0.1f, 0.15f, 0.3f};
    for (std::size_t i = 0; i < k; ++i) {
        m.skin.bone_indices[i] = b0[i];
        m.skin.weights[i] = w0[i];
    }
    m.skin.bone_indices[k] = 1;
    m.skin.weights[k] = 0.5f;
    m.skin.bone_indices[3 * k] = 0;
    m.skin.weights[3 * k] = 0.5f;
    m.skin.bone_indices[3 * k + 1] = 2; // joint 0 again, same offset
    m.skin.weights[3 * k + 1] = 0.5f;
    m.skin.bone_indices[4 * k] = 1;
    m.skin.weights[4 * k] = 1.0f;

    gltf::asset a;
    a.skeleton = &s;
    a.meshes = {&m};
    gltf::write_report report;
    const json j = write_json(a, report);
    const json& prim = j["meshes"][0]["primitives"][0];
    CHECK(prim["attributes"].contains("JOINTS_0"));
    CHECK(prim["attributes"].contains("WEIGHTS_0"));
    CHECK_FALSE(prim["attributes"].contains("JOINTS_1")); // after merging, at most 2 joints per vertex
    const json& pos = j["accessors"][prim["attributes"]["POSITION"].get<std::size_t>()];
    CHECK(pos["min"] == json::array({0.0, 0.0, -1.0})); // mirrored
    CHECK(pos["max"] == json::array({1.0, 1.0, 0.0}));
    CHECK(j["skins"][0]["joints"].size() == 2);
    CHECK(j["images"][0]["uri"] == "textures/skin%201.bmp");
    CHECK(j["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"][2].get<float>() == 1.0f);
    // The skinned mesh's node is a root without transforms.
    const std::size_t mesh_node = j["nodes"].size() - 1;
    CHECK(j["nodes"][mesh_node]["skin"] == 0);
    CHECK_FALSE(j["nodes"][mesh_node].contains("translation"));
    CHECK(std::find(j["scenes"][0]["nodes"].begin(), j["scenes"][0]["nodes"].end(), mesh_node) !=
          j["scenes"][0]["nodes"].end());
    using io::warning_action;
    CHECK(has_warning(report, warning_action::dropped, "bone 5 'missing'"));
    CHECK(has_warning(report, warning_action::repaired, "1 vertices have no influence"));
    CHECK(has_warning(report, warning_action::repaired, "scaled to sum to 1"));
    CHECK(has_warning(report, warning_action::repaired, "name a joint the vertex already has"));
    CHECK(has_warning(report, warning_action::dropped, "1 triangles have a vertex index past"));
    CHECK(has_warning(report, warning_action::repaired, "clamped"));
    CHECK(has_warning(report, warning_action::repaired, "written as the URI 'textures/skin%201.bmp'"));
    CHECK(has_warning(report, warning_action::note, "normals are zero"));

    // Read back: triangles wound the other way, weights normalised, the skin's palette mirrored.
    const gltf::model g = round_trip(a);
    REQUIRE(g.meshes.size() == 1);
    const gltf::mesh_instance& gm = g.meshes[0];
    CHECK(gm.indices == std::vector<std::uint32_t>{0, 2, 1, 0, 3, 2});
    REQUIRE(gm.positions.size() == 5);
    CHECK(gm.positions[3] == glm::vec3(0, 0, -1));
    CHECK(gm.normals[0] == glm::vec3(0, 0, -1)); // normalised, mirrored
    const std::size_t gk = gm.skin.influences_per_vertex;
    REQUIRE(gk >= 2);
    for (std::size_t v = 0; v < 5; ++v) {
        float sum = 0.0f;
        for (std::size_t i = 0; i < gk; ++i) sum += gm.skin.weights[v * gk + i];
        CHECK(sum == doctest::Approx(1.0f).epsilon(1e-6));
    }
    // Vertex 0: 0.2 + 0.1 + 0.15 on joint 0 and 0.15 + 0.1 on joint 1, of 0.7: 0.45 / 0.7 on joint 0.
    CHECK(gm.skin.weights[0] == doctest::Approx(0.45f / 0.7f).epsilon(1e-6));
    // Vertex 2 follows joint 0 (the mesh's joint): its skinned bind position is where it was.
    std::vector<glm::mat4> palette;
    for (const skin_bone& b : gm.skin.bones) palette.push_back(g.skeleton.bind_model()[b.joint] * b.offset);
    glm::vec3 p2(0.0f);
    for (std::size_t i = 0; i < gk; ++i)
        p2 += gm.skin.weights[2 * gk + i] * glm::vec3(palette[gm.skin.bone_indices[2 * gk + i]] * glm::vec4(gm.positions[2], 1.0f));
    CHECK(kbtest::max_abs_diff(p2, glm::vec3(0, 1, 0)) < 1e-5f);

    // Strict mode fails on the first repair, naming it.
    gltf::write_options strict;
    strict.mode = io::parse_mode::strict;
    std::vector<unsigned char> out, bin;
    const result<gltf::write_report> r = gltf::write_memory(a, gltf::container::glb, out, bin, strict);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("mesh 0 'body'") != std::string::npos);
}

TEST_CASE("gltf write: embedded texture images go into the buffer once, PNG and JPEG only") {
    const skeleton s = two_joints();
    const auto png = std::make_shared<io::embedded_image>();
    png->mime_type = "image/png";
    png->bytes = {0x89, 'P', 'N', 'G', 13, 10, 26, 10, 7};
    const auto webp = std::make_shared<io::embedded_image>();
    webp->mime_type = "image/webp";
    webp->bytes = {'R', 'I', 'F', 'F', 1, 2};
    io::mesh m;
    m.name = "plate";
    m.joint = 0;
    m.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
    m.texcoords = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    m.indices = {0, 1, 2, 1, 3, 2, 0, 1, 3, 0, 2, 3, 1, 2, 3};
    // Two materials share the PNG (its file name says nothing: the bytes are written); the third's
    // WebP cannot be written without an extension; the fourth names a file; the fifth's image is
    // empty. The sixth holds a separate copy of the PNG (from another file, say): the same image;
    // the seventh is the first with such a copy: the same material.
    m.materials.resize(7);
    for (std::size_t i = 0; i < 6; ++i) m.materials[i].name = "m" + std::to_string(i);
    m.materials[0].texture_image = m.materials[1].texture_image = png;
    m.materials[0].texture_file = m.materials[1].texture_file = "image 0";
    m.materials[1].diffuse.x = 0.5f;
    m.materials[2].texture_image = webp;
    m.materials[2].texture_file = "image 1";
    m.materials[3].texture_file = "leg.png";
    m.materials[4].texture_image = std::make_shared<io::embedded_image>();
    m.materials[4].texture_file = "image 2";
    m.materials[5].texture_image = std::make_shared<io::embedded_image>(*png);
    m.materials[6] = m.materials[0];
    m.materials[6].texture_image = std::make_shared<io::embedded_image>(*png);
    m.triangle_materials = {0, 1, 2, 5, 6};
    io::mesh other = m;
    other.name = "plate 2";
    other.indices.resize(9);
    other.triangle_materials = {3, 4, 3};
    gltf::asset a;
    a.skeleton = &s;
    a.meshes = {&m, &other};
    gltf::write_report report;
    const json j = write_json(a, report);
    REQUIRE(j["images"].size() == 2);
    CHECK(report.images == 2);
    CHECK(j["materials"].size() == 6);
    const json& image = j["images"][0];
    CHECK(image["mimeType"] == "image/png");
    CHECK_FALSE(image.contains("uri"));
    const json& view = j["bufferViews"][image["bufferView"].get<std::size_t>()];
    CHECK(view["byteLength"] == png->bytes.size());
    CHECK_FALSE(view.contains("target"));
    CHECK(j["images"][1]["uri"] == "leg.png");
    CHECK(has_warning(report, io::warning_action::dropped,
                      "material 'm2': its texture image is of type 'image/webp', which glTF holds only as PNG or JPEG"));
    CHECK(has_warning(report, io::warning_action::dropped, "material 'm4': its texture image is empty; the texture is left out"));
    // Read back: the same bytes, one copy shared by both materials.
    const gltf::model g = round_trip(a);
    std::vector<const io::material*> by_name(6, nullptr);
    for (const gltf::mesh_instance& i : g.meshes)
        for (const io::material& x : i.materials) by_name[std::size_t(x.name[1] - '0')] = &x;
    for (const io::material* x : by_name) REQUIRE(x != nullptr);
    REQUIRE(by_name[0]->texture_image);
    CHECK(by_name[0]->texture_image->mime_type == "image/png");
    CHECK(by_name[0]->texture_image->bytes == png->bytes);
    CHECK(by_name[1]->texture_image == by_name[0]->texture_image);
    CHECK(by_name[5]->texture_image == by_name[0]->texture_image);
    CHECK_FALSE(by_name[2]->texture_image);
    CHECK(by_name[2]->texture_file.empty());
    CHECK_FALSE(by_name[3]->texture_image);
    CHECK(by_name[3]->texture_file == "leg.png");
    CHECK_FALSE(by_name[4]->texture_image);
    CHECK(by_name[4]->texture_file.empty());
}

TEST_CASE("gltf write: texture names as relative URIs, materials told apart by every colour bit, no texture without texture coordinates") {
    // A texture name's folders and file name (what the URI is made of and the tool looks for).
    using parts = std::vector<std::string>;
    CHECK(io::texture_path_segments("skin.png") == parts{"skin.png"});
    CHECK(io::texture_path_segments("textures\\\\skin.png") == parts{"textures", "skin.png"}); // .X's doubled '\\'
    CHECK(io::texture_path_segments("a/b\\c.jpg") == parts{"a", "b", "c.jpg"});
    CHECK(io::texture_path_segments("../shared/x.png") == parts{"..", "shared", "x.png"});
    CHECK(io::texture_path_segments("C:\\art\\skin.png") == parts{"skin.png"});
    CHECK(io::texture_path_segments("/home/artist/skin.png") == parts{"skin.png"});
    CHECK(io::texture_path_segments("\\\\server\\share\\skin.png") == parts{"skin.png"});
    CHECK(io::texture_path_segments("").empty());
    CHECK(io::texture_path_segments("\\/").empty());

    // Materials equal but for a NaN specular (the .X loader passes one on) and 0.2: two materials,
    // not merged (NaN compares neither less nor greater); equal bits, NaN or not, merge.
    const skeleton s = two_joints();
    io::mesh m;
    m.name = "plate";
    m.joint = 0;
    m.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
    m.texcoords = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    m.indices = {0, 1, 2, 1, 3, 2, 0, 1, 3, 0, 2, 3};
    m.materials.resize(4);
    for (io::material& x : m.materials) x.name = "shiny";
    m.materials[0].specular = glm::vec3(std::numeric_limits<float>::quiet_NaN(), 0.2f, 0.2f);
    m.materials[1].specular = glm::vec3(0.2f);
    m.materials[2] = m.materials[0];
    m.materials[3].specular = glm::vec3(0.2f);
    m.materials[3].texture_file = "C:\\art\\skin 1.png";
    m.triangle_materials = {0, 1, 2, 3};
    // The textured material on a mesh without texture coordinates: written without its texture.
    io::mesh bare = m;
    bare.name = "bare";
    bare.texcoords.clear();
    bare.indices.resize(3);
    bare.triangle_materials = {3};
    gltf::asset a;
    a.skeleton = &s;
    a.meshes = {&m, &bare};
    gltf::write_report report;
    const json j = write_json(a, report);
    REQUIRE(j["materials"].size() == 3); // (the untextured copy is material 1: the same)
    CHECK_FALSE(j["materials"][0]["extras"].contains("specular"));
    CHECK(j["materials"][1]["extras"]["specular"][0] == doctest::Approx(0.2));
    REQUIRE(j["images"].size() == 1);
    CHECK(j["images"][0]["uri"] == "skin%201.png");
    CHECK(has_warning(report, io::warning_action::repaired, "is written as the URI 'skin%201.png'"));
    CHECK(j["materials"][2]["pbrMetallicRoughness"].contains("baseColorTexture"));
    CHECK(j["meshes"][1]["primitives"][0]["material"] == 1);
    CHECK_FALSE(j["materials"][1]["pbrMetallicRoughness"].contains("baseColorTexture"));
    CHECK(has_warning(report, io::warning_action::dropped,
                      "mesh 1 'bare': material 'shiny': the mesh has no texture coordinates; its texture is left out here"));
}

TEST_CASE("gltf write: more than four influences make JOINTS_1 and WEIGHTS_1") {
    std::vector<joint_desc> jd(6);
    for (std::size_t j = 0; j < 6; ++j) {
        jd[j].name = "j" + std::to_string(j);
        jd[j].parent = j == 0 ? no_parent : 0;
        jd[j].bind_local = glm::translate(glm::mat4(1.0f), glm::vec3(float(j), 0.0f, 0.0f));
    }
    const skeleton s = skeleton::from_parents(jd).value();
    io::mesh m;
    m.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    m.indices = {0, 1, 2};
    m.skin.influences_per_vertex = 6;
    for (std::size_t b = 0; b < 6; ++b) m.skin.bones.push_back({jd[b].name, b, s.inverse_bind_model()[b]});
    for (std::size_t v = 0; v < 3; ++v)
        for (std::uint16_t i = 0; i < 6; ++i) {
            m.skin.bone_indices.push_back(i);
            m.skin.weights.push_back(float(i + 1) / 21.0f);
        }
    gltf::asset a;
    a.skeleton = &s;
    a.meshes = {&m};
    gltf::write_report report;
    const json j = write_json(a, report);
    const json& attributes = j["meshes"][0]["primitives"][0]["attributes"];
    CHECK(attributes.contains("JOINTS_1"));
    CHECK(attributes.contains("WEIGHTS_1"));
    CHECK(report.warnings.empty());
    const gltf::model g = round_trip(a);
    REQUIRE(g.meshes.size() == 1);
    CHECK(g.meshes[0].skin.influences_per_vertex == 6);
    CHECK(g.meshes[0].skin.weights[0] == doctest::Approx(6.0f / 21.0f).epsilon(1e-6));
}

TEST_CASE("gltf write: clips: seconds, cuts, keys before 0, matrix keys, empty and invalid clips") {
    const skeleton s = two_joints();
    clip c;
    c.name = "walk";
    c.ticks_per_second = 10.0f;
    c.duration = 40.0f;
    channel ch;
    ch.joint = 1;
    ch.translation.push_back(-5.0f, glm::vec3(0, 0, 0));
    ch.translation.push_back(5.0f, glm::vec3(1, 2, 4));
    ch.translation.push_back(10.0f, glm::vec3(2, 2, 2));
    ch.translation.push_back(10.0f, glm::vec3(3, 3, 3)); // a cut
    ch.translation.push_back(20.0f, glm::vec3(4, 4, 4));
    c.channels.push_back(ch);
    channel mc;
    mc.joint = 0;
    transform t0, t1;
    t1.rotation = glm::normalize(make_quat(0.5f, 0.5f, 0.5f, 0.5f));
    t1.scale = glm::vec3(-1.0f, 1.0f, 1.0f); // a mirrored key
    t1.translation = glm::vec3(1, 2, 3);
    mc.matrix.push_back(0.0f, to_matrix(t0));
    mc.matrix.push_back(30.0f, to_matrix(t1));
    c.channels.push_back(mc);
    clip empty;
    empty.name = "empty";
    clip bad = c;
    bad.name = "bad";
    bad.channels[0].joint = 9;

    gltf::asset a;
    a.skeleton = &s;
    a.clips = {&c, &empty, &bad};
    gltf::write_report report;
    const json j = write_json(a, report);
    REQUIRE(j["animations"].size() == 1);
    CHECK(has_warning(report, io::warning_action::dropped, "clip 1 'empty': it has no keys"));
    CHECK(has_warning(report, io::warning_action::dropped, "clip 2 'bad': it is not a valid clip"));
    CHECK(has_warning(report, io::warning_action::repaired, "1 keys share a time"));
    CHECK(has_warning(report, io::warning_action::repaired, "1 keys are before time 0"));
    const json& anim = j["animations"][0];
    CHECK(anim["name"] == "walk");
    CHECK(anim["channels"].size() == 4); // translation; the matrix track's translation, rotation, scale
    const json& input = j["accessors"][anim["samplers"][0]["input"].get<std::size_t>()];
    // 0 (for the keys before), 0.5, 1 less a float step, 1, 2, and 4: the clip's duration (4 s) is
    // past its last key (3 s), so a key holds the last pose there.
    CHECK(input["count"] == 6);
    CHECK(input["min"][0] == 0.0);
    CHECK(input["max"][0] == 4.0);
    const gltf::model g = round_trip(a);
    REQUIRE(g.animations.size() == 1);
    const clip& gc = g.animations[0].clip;
    CHECK(gc.duration == doctest::Approx(4.0f));
    // Poses: at every time the glTF's model matrices are the mirrored source's.
    local_pose sp, gp;
    sampling_context sc, gcx;
    std::vector<glm::mat4> sm, gmm;
    // (Not before 0: the keys there are replaced by the value at 0.)
    for (float tick : {0.0f, 2.5f, 5.0f, 7.5f, 9.99f, 10.0f, 10.01f, 15.0f, 22.0f, 30.0f, 40.0f, 50.0f}) {
        REQUIRE(kbtest::sample_clip(c, s, tick, sc, sp));
        kbtest::local_to_model(s, sp, sm);
        REQUIRE(kbtest::sample_clip(gc, g.skeleton, tick / 10.0f, gcx, gp));
        kbtest::local_to_model(g.skeleton, gp, gmm);
        for (std::size_t jj = 0; jj < 2; ++jj) {
            INFO("tick " << tick << " joint " << jj);
            CHECK(kbtest::max_abs_diff(gmm[jj], mirror_z * sm[jj] * mirror_z) < 1e-5f);
        }
    }
}

TEST_CASE("gltf write: bad asset pointers and names that are not UTF-8") {
    const skeleton s = two_joints();
    gltf::asset a;
    std::vector<unsigned char> out, bin;
    result<gltf::write_report> r = gltf::write_memory(a, gltf::container::glb, out, bin);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_argument);
    a.skeleton = &s;
    a.meshes = {nullptr};
    r = gltf::write_memory(a, gltf::container::glb, out, bin);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("mesh 0 is null") != std::string::npos);

    std::vector<joint_desc> jd(1);
    jd[0].name = "caf\xe9"; // Latin-1
    const skeleton latin = skeleton::from_parents(jd).value();
    gltf::asset b;
    b.skeleton = &latin;
    gltf::write_report report;
    const json j = write_json(b, report);
    CHECK(j["nodes"][0]["name"] == "caf\xc3\xa9");
    CHECK(has_warning(report, io::warning_action::repaired, "not UTF-8"));
}

// ---------------------------------------------------------------------------------------------
// The shared .X files
// ---------------------------------------------------------------------------------------------

namespace {

/// Every .X file under KEYBLEND_DATA_DIR, sorted; empty (with the skip message) when it is absent.
std::vector<std::string> shared_x_files() {
    std::vector<std::string> files;
    if (!kbtest::data_file("directx-sdk-legacy-samples/tiny.x")) return files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(KEYBLEND_DATA_DIR)) {
        const std::string ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".x" || ext == ".X")) files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

/// Skinned (or placed) vertex positions of a mesh in model space, in double, the reference
/// the glTF's are compared with: weights normalised and a vertex without influence on its
/// mesh's joint (the writer's documented repairs).
std::vector<glm::dvec3> posed_vertices(const io::mesh& m, const skeleton& s, const std::vector<glm::mat4>& model) {
    std::vector<glm::dvec3> out(m.positions.size());
    const std::size_t k = m.skin.influences_per_vertex;
    for (std::size_t v = 0; v < m.positions.size(); ++v) {
        const glm::dvec4 p(glm::dvec3(m.positions[v]), 1.0);
        glm::dvec3 sum(0.0);
        double total = 0.0;
        if (m.is_skinned())
            for (std::size_t i = 0; i < k; ++i) {
                const double w = m.skin.weights[v * k + i];
                const skin_bone& b = m.skin.bones[m.skin.bone_indices[v * k + i]];
                if (w == 0.0 || b.joint >= s.size()) continue;
                sum += w * glm::dvec3(glm::dmat4(model[b.joint]) * glm::dmat4(b.offset) * p);
                total += w;
            }
        if (total > 0.0) {
            out[v] = sum / total;
        } else if (m.joint < s.size()) {
            const glm::dmat4 place = m.is_skinned() ? glm::dmat4(model[m.joint]) * glm::dmat4(s.inverse_bind_model()[m.joint])
                                                    : glm::dmat4(model[m.joint]);
            out[v] = glm::dvec3(place * p);
        } else {
            out[v] = glm::dvec3(p);
        }
    }
    return out;
}

} // namespace

TEST_CASE("gltf write: every shared .X file converts, reads back, and poses as its source under the mirror") {
    const std::vector<std::string> files = shared_x_files();
    if (files.empty()) return;
    std::filesystem::create_directories(KEYBLEND_GLTF_WRITE_DIR);
    double worst_matrix = 0.0, worst_vertex = 0.0;
    std::string worst_matrix_at;
    std::size_t animated = 0, times_checked = 0;
    for (const std::string& file : files) {
        INFO(file);
        result<io::xfile> x = io::load_xfile(file);
        REQUIRE_MESSAGE(x, (x ? "" : x.error().message));
        const skeleton& s = x->skeleton;
        gltf::asset a;
        a.skeleton = &s;
        for (const io::xfile_mesh& m : x->meshes) a.meshes.push_back(&m);
        for (const io::xfile_animation_set& set : x->animation_sets) a.clips.push_back(&set.clip);
        // Both containers; the validator test reads these files.
        const std::string stem = std::string(KEYBLEND_GLTF_WRITE_DIR) + "/" + std::filesystem::path(file).stem().string();
        result<gltf::write_report> w = gltf::write(stem + ".glb", a, gltf::container::glb);
        REQUIRE_MESSAGE(w, (w ? "" : w.error().message));
        REQUIRE(gltf::write(stem + ".gltf", a, gltf::container::gltf));
        for (const char* ext : {".glb", ".gltf"}) {
            result<gltf::model> g = gltf::load(stem + ext);
            REQUIRE_MESSAGE(g, (g ? "" : g.error().message));
            const double size = w->model_size;
            // Joints by name (the glTF has mesh nodes and maybe a root besides).
            std::vector<std::size_t> joint(s.size());
            for (std::size_t j = 0; j < s.size(); ++j) {
                const result<std::size_t> found = g->skeleton.find(s.name(j));
                REQUIRE_MESSAGE(found, s.name(j));
                joint[j] = *found;
            }
            // Clips with keys, in order, are the animations.
            std::vector<const clip*> clips;
            for (const clip* c : a.clips)
                if (last_key_time(*c) > 0.0f || std::any_of(c->channels.begin(), c->channels.end(), [](const channel& ch) {
                        return ch.has_matrix() || ch.has_trs();
                    }))
                    clips.push_back(c);
            REQUIRE(g->animations.size() == clips.size());
            // The source's joint model matrices at a tick (the bind pose without a clip).
            const auto source_model = [&](const clip* c, float tick, std::vector<glm::mat4>& sm) {
                local_pose sp(s);
                sampling_context scx;
                if (c) REQUIRE(kbtest::sample_clip(*c, s, tick, scx, sp));
                kbtest::local_to_model(s, sp, sm);
            };
            // Source meshes kept, in order, against the glTF's instances (one per primitive).
            const auto check_pose = [&](const clip* c, const clip* gc, float tick) {
                local_pose gp(g->skeleton);
                sampling_context gcx;
                std::vector<glm::mat4> sm, gm;
                source_model(c, tick, sm);
                if (c) REQUIRE(kbtest::sample_clip(*gc, g->skeleton, float(double(tick) / double(c->ticks_per_second)), gcx, gp));
                kbtest::local_to_model(g->skeleton, gp, gm);
                for (std::size_t j = 0; j < s.size(); ++j) {
                    const glm::mat4 expect = mirror_z * sm[j] * mirror_z;
                    const glm::mat4& got = gm[joint[j]];
                    for (int col = 0; col < 4; ++col)
                        for (int row = 0; row < 3; ++row) {
                            const double e = std::fabs(double(got[col][row]) - double(expect[col][row])) / (col == 3 ? size : 1.0);
                            if (e > worst_matrix) {
                                worst_matrix = e;
                                worst_matrix_at = file + ", joint '" + s.name(j) + "', tick " + std::to_string(tick) +
                                                  ", element [" + std::to_string(col) + "][" + std::to_string(row) + "]";
                            }
                            if (e > 1e-5) {
                                FAIL_CHECK("joint '" << s.name(j) << "' at tick " << tick << ": element [" << col << "][" << row
                                                     << "] is " << got[col][row] << ", the source's " << expect[col][row]);
                                return;
                            }
                        }
                }
                // Skinned and rigid vertices.
                std::size_t instance = 0;
                for (std::size_t mi = 0; mi < x->meshes.size(); ++mi) {
                    const io::xfile_mesh& m = x->meshes[mi];
                    while (instance < g->meshes.size() && g->meshes[instance].mesh_index < mi) ++instance;
                    REQUIRE(instance < g->meshes.size());
                    const gltf::mesh_instance& gi = g->meshes[instance];
                    REQUIRE(gi.positions.size() == m.positions.size());
                    const std::vector<glm::dvec3> expect = posed_vertices(m, s, sm);
                    const std::vector<glm::dvec3> got = posed_vertices(gi, g->skeleton, gm);
                    for (std::size_t v = 0; v < expect.size(); ++v) {
                        const glm::dvec3 e(expect[v].x, expect[v].y, -expect[v].z);
                        const double d = glm::length(got[v] - e) / size;
                        worst_vertex = std::max(worst_vertex, d);
                        if (d > 1e-5) {
                            FAIL_CHECK("mesh " << mi << " vertex " << v << " at tick " << tick << " is " << d
                                               << " of the model's size from the source's");
                            return;
                        }
                    }
                }
            };
            // For the .glb, the same poses for an independent reader (tests/three_poses.mjs, three.js):
            // the source's mirrored joint model matrices by glTF node, at the bind pose and at up to
            // 40 of each animation's times from 0 to its end, in seconds.
            const bool glb = std::string(ext) == ".glb";
            json reference = {{"model_size", size}, {"poses", json::array()}};
            std::vector<std::size_t> node_of_joint(g->skeleton.size());
            for (std::size_t n = 0; n < g->joint_of_node.size(); ++n) node_of_joint[g->joint_of_node[n]] = n;
            const auto record_pose = [&](const clip* c, long animation, float tick) {
                if (!glb) return;
                std::vector<glm::mat4> sm;
                source_model(c, tick, sm);
                json nodes = json::array(), matrices = json::array();
                for (std::size_t j = 0; j < s.size(); ++j) {
                    const glm::mat4 m = mirror_z * sm[j] * mirror_z;
                    json values = json::array();
                    for (int e = 0; e < 16; ++e) values.push_back(double(m[e / 4][e % 4]));
                    nodes.push_back(node_of_joint[joint[j]]);
                    matrices.push_back(std::move(values));
                }
                reference["poses"].push_back({{"animation", animation},
                                              {"time", c ? double(tick) / double(c->ticks_per_second) : 0.0},
                                              {"nodes", std::move(nodes)},
                                              {"matrices", std::move(matrices)}});
            };
            check_pose(nullptr, nullptr, 0.0f); // the bind pose
            record_pose(nullptr, -1, 0.0f);
            for (std::size_t ci = 0; ci < clips.size(); ++ci) {
                const clip& c = *clips[ci];
                const clip& gc = g->animations[ci].clip;
                if (!c.name.empty()) CHECK(gc.name == c.name);
                // Every key time, the midpoints between them, and times before and after.
                std::set<float> keys;
                for (const channel& ch : c.channels) {
                    for (const float t : ch.matrix.times()) keys.insert(t);
                    for (const float t : ch.rotation.times()) keys.insert(t);
                    for (const float t : ch.translation.times()) keys.insert(t);
                    for (const float t : ch.scale.times()) keys.insert(t);
                }
                std::vector<float> times(keys.begin(), keys.end());
                for (std::size_t i = 0; i + 1 < keys.size(); ++i) times.push_back(0.5f * (times[i] + times[i + 1]));
                times.push_back(times.front() - 1.0f);
                times.push_back(times[keys.size() - 1] + 1.0f);
                // (A long clip is checked at up to 600 of them, spread evenly.)
                std::sort(times.begin(), times.end());
                const std::size_t step = std::max<std::size_t>(1, times.size() / 600);
                for (std::size_t i = 0; i < times.size(); i += step) {
                    check_pose(&c, &gc, times[i]);
                    ++times_checked;
                }
                std::vector<float> recorded;
                const float last = *keys.rbegin();
                std::copy_if(times.begin(), times.end(), std::back_inserter(recorded),
                             [&](float t) { return t >= 0.0f && t <= last; });
                const std::size_t every = std::max<std::size_t>(1, (recorded.size() + 39) / 40);
                for (std::size_t i = 0; i < recorded.size(); i += every) record_pose(&c, long(ci), recorded[i]);
                ++animated;
            }
            if (glb) std::ofstream(stem + ".poses.json") << reference.dump();
        }
    }
    MESSAGE(files.size() << " files, " << animated << " animations (both containers), " << times_checked
                         << " times: largest matrix error " << worst_matrix << " (" << worst_matrix_at << "), largest vertex error " << worst_vertex
                         << " (of the model's size)");
    CHECK(worst_matrix <= 1e-5);
    CHECK(worst_vertex <= 1e-5);
}
