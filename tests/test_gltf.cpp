// keyblend::gltf: files this test writes (gltf_builder.hpp: every interpolation, sparse, normalized
// and quantized components, byteStride, several skins, a mesh instanced twice, morph targets, each
// hostile input class) and the shared glTF files, checked against an evaluator written from the
// glTF 2.0 specification alone (spec_gltf): every joint's model matrix, every morph weight and
// every skinned, morphed vertex, at times on keys, between keys, before the first and after the
// last, through the SIMD sampling path (sample_clip) and the scalar one (sample_track).
#include "gltf_builder.hpp"
#include "helpers.hpp"
#include "job_helpers.hpp"

#include <keyblend/clip.hpp>
#include <keyblend/gltf.hpp>
#include <keyblend/morph.hpp>
#include <keyblend/pose.hpp>
#include <keyblend/skin.hpp>

#ifdef KEYBLEND_TEST_DRACO
#include <draco/compression/encode.h>
#include <draco/mesh/triangle_soup_mesh_builder.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::contains;
using kbtest::local_to_model;
using kbtest::sample_clip;
using kbtest::sample_local_matrices;
using kbtest::gltf_builder;
using kbtest::ojson;
using kbtest::spec_gltf;

namespace {

std::vector<unsigned char> bytes_of(const std::string& s) { return std::vector<unsigned char>(s.begin(), s.end()); }

std::vector<unsigned char> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

result<gltf::model> load_bytes(const std::vector<unsigned char>& b, io::parse_mode mode = io::parse_mode::lenient) {
    io::load_options o;
    o.mode = mode;
    return gltf::load_memory(b.data(), b.size(), o, "test.gltf");
}

bool has_warning(const gltf::model& m, const std::string& part) {
    for (const io::load_warning& w : m.warnings)
        if (contains(w.message, part)) return true;
    return false;
}

// --- keyblend's side: a pose, the morph weights, the morphed and skinned vertices ---------------

/// The morph targets of a mesh as morph_job streams (glue between io::mesh and the job).
std::vector<morph_target_streams> target_streams(const io::mesh& m) {
    std::vector<morph_target_streams> out;
    for (const io::morph_target& t : m.morph_targets) {
        morph_target_streams s;
        if (!t.positions.empty()) s.positions = make_span(t.positions);
        if (!t.normals.empty()) s.normals = make_span(t.normals);
        if (!t.tangents.empty()) s.tangents = make_span(t.tangents);
        out.push_back(s);
    }
    return out;
}

/// A mesh instance in a pose: morphed by its joint's weights, then skinned (or placed by its joint).
std::vector<glm::vec3> posed_vertices(const gltf::mesh_instance& m, const skeleton& s, span<const float> weights,
                                      const std::vector<glm::mat4>& model) {
    std::vector<glm::vec3> morphed(m.positions.size());
    const std::vector<morph_target_streams> streams = target_streams(m);
    morph_job mj;
    mj.targets = streams;
    mj.weights = weights.subspan(s.morph_weight_offset(m.joint), s.morph_weight_count(m.joint));
    mj.in_positions = make_span(m.positions);
    mj.out_positions = make_span(morphed);
    REQUIRE(mj.validate());
    REQUIRE(mj.run());
    std::vector<glm::vec3> out(m.positions.size());
    if (!m.is_skinned()) {
        for (std::size_t v = 0; v < out.size(); ++v) out[v] = glm::vec3(model[m.joint] * glm::vec4(morphed[v], 1.0f));
        return out;
    }
    return kbtest::skinned_positions(m, morphed, model);
}

/// The times to check an animation at: before the first key, on every key, between keys (three
/// places), just before each key (a cut's left side), after the last.
std::vector<double> check_times(const spec_gltf& g, std::size_t a) {
    std::set<double> keys;
    for (const ojson& s : g.doc["animations"][a]["samplers"])
        for (double t : g.accessor(s["input"])) keys.insert(t);
    std::vector<double> k(keys.begin(), keys.end()), out;
    out.push_back(k.front() - 0.25);
    for (std::size_t i = 0; i < k.size(); ++i) {
        out.push_back(k[i]);
        if (i + 1 < k.size()) {
            const double d = k[i + 1] - k[i];
            for (double f : {0.21, 0.5, 0.93}) out.push_back(k[i] + f * d);
            out.push_back(static_cast<double>(std::nextafter(static_cast<float>(k[i + 1]), -1e30f)));
        }
    }
    out.push_back(k.back() + 0.5);
    return out;
}

struct tolerances {
    double rotation_scale = 1e-5; // upper 3x3 of model matrices (relative to their size, at least 1)
    double translation = 1e-6;    // of the model's size
    double vertex = 1e-5;         // of the model's size
    double weight = 1e-6;
};

/// With KEYBLEND_GLTF_SEEDS set to a folder, the files the tests build are written there too: the
/// glTF fuzzer's seeds (.ci/run).
void save_seed(const std::vector<unsigned char>& bytes) {
    const char* folder = std::getenv("KEYBLEND_GLTF_SEEDS");
    if (!folder || bytes.size() > (std::size_t{1} << 20)) return;
    static int count = 0;
    std::ofstream(std::string(folder) + "/seed_" + std::to_string(count++) + ".gltf", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

/// Every model matrix, morph weight and vertex of `bytes` (loaded by keyblend) against the
/// specification's evaluation, for every animation (or the rest pose) at check_times.
void check_against_spec(const std::vector<unsigned char>& bytes, const std::string& directory = "",
                        const tolerances& tol = {}) {
    save_seed(bytes);
    const spec_gltf g(bytes, directory);
    io::load_options o;
    o.mode = io::parse_mode::strict;
    result<gltf::model> r = gltf::load_memory(bytes.data(), bytes.size(), o, "checked", directory);
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    const gltf::model& m = *r;
    const skeleton& s = m.skeleton;
    const std::size_t nodes = g.doc.value("nodes", ojson::array()).size();
    REQUIRE(s.size() == nodes);

    // The model's size: the extent of its joints and vertices at rest.
    glm::dvec3 lo(1e30), hi(-1e30);
    {
        const auto rest = g.rest();
        const auto global = g.global(rest);
        for (const auto& gm : global) lo = glm::min(lo, glm::dvec3(gm[3])), hi = glm::max(hi, glm::dvec3(gm[3]));
        for (const gltf::mesh_instance& mi : m.meshes)
            for (const glm::dvec3& v : g.vertices(mi.node_index, mi.primitive_index, rest, global))
                lo = glm::min(lo, v), hi = glm::max(hi, v);
    }
    const double size = std::max(1.0, glm::length(hi - lo));
    CAPTURE(size);

    const auto compare = [&](const std::vector<spec_gltf::node_state>& expected_state, const std::vector<glm::mat4>& model,
                             span<const float> weights, bool vertices) {
        const std::vector<glm::dmat4> expected = g.global(expected_state);
        for (std::size_t n = 0; n < nodes; ++n) {
            CAPTURE(n);
            const glm::mat4& got = model[m.joint_of_node[n]];
            double rs = 0.0, scale = 1.0;
            for (int c = 0; c < 3; ++c) {
                scale = std::max(scale, glm::length(glm::dvec3(expected[n][c])));
                for (int e = 0; e < 3; ++e) rs = std::max(rs, std::fabs(double(got[c][e]) - expected[n][c][e]));
            }
            CHECK(rs <= tol.rotation_scale * scale);
            CHECK(glm::length(glm::dvec3(got[3]) - glm::dvec3(expected[n][3])) <= tol.translation * size);
            const std::size_t j = m.joint_of_node[n];
            REQUIRE(s.morph_weight_count(j) == expected_state[n].weights.size());
            for (std::size_t i = 0; i < expected_state[n].weights.size(); ++i)
                CHECK(std::fabs(double(weights[s.morph_weight_offset(j) + i]) - expected_state[n].weights[i]) <= tol.weight);
        }
        if (!vertices) return;
        for (const gltf::mesh_instance& mi : m.meshes) {
            CAPTURE(mi.node_index);
            const std::vector<glm::vec3> got = posed_vertices(mi, s, weights, model);
            const std::vector<glm::dvec3> want = g.vertices(mi.node_index, mi.primitive_index, expected_state, expected);
            REQUIRE(got.size() == want.size());
            double worst = 0.0;
            for (std::size_t v = 0; v < got.size(); ++v) worst = std::max(worst, glm::length(glm::dvec3(got[v]) - want[v]));
            CHECK(worst <= tol.vertex * size);
        }
    };

    if (m.animations.empty()) {
        local_pose pose;
        reset_to_bind(s, pose);
        std::vector<glm::mat4> model;
        local_to_model(s, pose, model);
        compare(g.rest(), model, pose.morph_weights(), true);
        return;
    }
    for (const gltf::animation& a : m.animations) {
        CAPTURE(a.index);
        const clip& c = a.clip;
        REQUIRE(validate_clip(c, s));
        CHECK(c.ticks_per_second == 1.0f);
        sampling_context ctx;
        local_pose pose;
        std::vector<glm::mat4> model, local, scalar_model;
        std::vector<float> scalar_weights(s.morph_weight_total());
        for (double t : check_times(g, a.index)) {
            CAPTURE(t);
            const auto expected = g.pose(a.index, t);
            // SIMD path: sample_clip, local_to_model.
            REQUIRE(sample_clip(c, s, static_cast<float>(t), ctx, pose));
            local_to_model(s, pose, model);
            compare(expected, model, pose.morph_weights(), true);
            // Scalar path: sample_track per component (sample_local_matrices), weights by sample_track.
            REQUIRE(sample_local_matrices(c, s, static_cast<float>(t), local));
            local_to_model(s, local, scalar_model);
            scalar_weights = s.bind_morph_weights();
            for (const channel& ch : c.channels)
                for (std::size_t i = 0; i < ch.morph_weights.size(); ++i)
                    if (!ch.morph_weights[i].empty())
                        scalar_weights[s.morph_weight_offset(ch.joint) + i] =
                            sample_track(ch.morph_weights[i], static_cast<float>(t));
            compare(expected, scalar_model, scalar_weights, false);
        }
    }
}

// --- a character written by the builder -----------------------------------------------------

struct character_options {
    std::string interpolation = "LINEAR";
    bool quantized = false;   // KHR_mesh_quantization: SHORT positions, normalized BYTE normals, ...
    bool interleaved = false; // POSITION and NORMAL in one view with byteStride
    bool cut = false;         // a repeated key time
};

/// A small skinned, morphing character:
///   node 0 root > 1 hip > 2 knee > 3 foot > 6 (a rigid triangle placed by the foot);
///   node 4: the leg mesh with skin 0 (hip, knee, foot; inverse bind matrices) and its own weights;
///   node 5: the same mesh with skin 1 (foot, knee, hip; no inverse bind matrices: identity);
///   node 7: the triangle again, outside the scene (a joint; its mesh not instanced).
/// The leg mesh has 2 morph targets (one sparse), mesh weights, NORMAL and TEXCOORD_0; one
/// animation keys hip rotation, knee translation and scale, foot rotation and node 4's weights
/// with `interpolation`.
gltf_builder character(const character_options& o) {
    gltf_builder b;
    const bool cubic = o.interpolation == "CUBICSPLINE";
    kbtest::rng r(7);
    // The leg: 6 rings of 2 vertices along y.
    std::vector<float> pos, nrm, uv, joints, weights;
    std::vector<std::uint16_t> indices;
    const std::size_t rings = 6, n = rings * 2;
    for (std::size_t i = 0; i < rings; ++i)
        for (int side = 0; side < 2; ++side) {
            pos.insert(pos.end(), {side ? 0.25f : -0.25f, 0.5f * float(i), 0.125f * float(side)});
            const glm::vec3 nv = glm::normalize(glm::vec3(side ? 1.0f : -1.0f, 0.2f, 0.1f));
            nrm.insert(nrm.end(), {nv.x, nv.y, nv.z});
            uv.insert(uv.end(), {float(side), float(i) / float(rings - 1)});
            const float j0 = float(std::min<std::size_t>(i / 2, 2)), j1 = i / 2 >= 2 ? 1.0f : float(i / 2 + 1);
            joints.insert(joints.end(), {j0, j1, 0, 0});
            const float w = i % 2 ? 0.6f : 1.0f;
            weights.insert(weights.end(), {w, 1.0f - w, 0.0f, 0.0f});
            if (w == 1.0f) joints[joints.size() - 3] = 0.0f; // (no joint where the weight is 0)
        }
    for (std::uint16_t i = 0; i + 1u < rings; ++i) {
        const std::uint16_t a = std::uint16_t(2 * i);
        indices.insert(indices.end(), {a, std::uint16_t(a + 1), std::uint16_t(a + 2), std::uint16_t(a + 1),
                                       std::uint16_t(a + 3), std::uint16_t(a + 2)});
    }
    ojson attributes;
    if (o.quantized) {
        b.doc["extensionsUsed"] = {"KHR_mesh_quantization"};
        b.doc["extensionsRequired"] = {"KHR_mesh_quantization"};
        std::vector<float> qpos, qnrm;
        for (float p : pos) qpos.push_back(std::round(p * 8.0f)); // SHORT, not normalized: positions in 1/8 units
        for (float& p : pos) p = std::round(p * 8.0f);
        for (float v : nrm) qnrm.push_back(std::round(v * 127.0f));
        attributes["POSITION"] = b.add_accessor(qpos, kbtest::gl_short, "VEC3", false, 8);
        attributes["NORMAL"] = b.add_accessor(qnrm, kbtest::gl_byte, "VEC3", true, 4);
        std::vector<float> quv;
        for (float v : uv) quv.push_back(std::round(v * 65535.0f));
        attributes["TEXCOORD_0"] = b.add_accessor(quv, kbtest::gl_unsigned_short, "VEC2", true);
        std::vector<float> qw;
        for (float w : weights) qw.push_back(std::round(w * 255.0f));
        attributes["WEIGHTS_0"] = b.add_accessor(qw, kbtest::gl_unsigned_byte, "VEC4", true);
    } else if (o.interleaved) {
        std::vector<unsigned char> bytes(n * 24);
        for (std::size_t v = 0; v < n; ++v) {
            std::memcpy(bytes.data() + v * 24, &pos[3 * v], 12);
            std::memcpy(bytes.data() + v * 24 + 12, &nrm[3 * v], 12);
        }
        const std::size_t view = b.add_view(bytes, 24);
        ojson position = {{"bufferView", view}, {"componentType", 5126}, {"count", n}, {"type", "VEC3"}};
        gltf_builder::bounds(position, pos, 3, kbtest::gl_float);
        attributes["POSITION"] = b.add("accessors", position);
        attributes["NORMAL"] = b.add("accessors", {{"bufferView", view}, {"byteOffset", 12}, {"componentType", 5126},
                                                   {"count", n}, {"type", "VEC3"}});
        attributes["TEXCOORD_0"] = b.floats(uv, "VEC2");
        attributes["WEIGHTS_0"] = b.floats(weights, "VEC4");
    } else {
        attributes["POSITION"] = b.floats(pos, "VEC3");
        attributes["NORMAL"] = b.floats(nrm, "VEC3");
        attributes["TEXCOORD_0"] = b.floats(uv, "VEC2");
        attributes["WEIGHTS_0"] = b.floats(weights, "VEC4");
    }
    attributes["JOINTS_0"] = b.add_accessor(joints, kbtest::gl_unsigned_byte, "VEC4");
    // Targets: 0 moves every vertex (dense), 1 only vertices 3 and 8 (sparse over zeros).
    std::vector<float> d0;
    for (std::size_t v = 0; v < n; ++v) d0.insert(d0.end(), {0.1f * float(v % 3), 0.0f, -0.05f});
    ojson t0 = {{"POSITION", b.floats(d0, "VEC3")}};
    ojson t1 = {{"POSITION", b.sparse({}, n, "VEC3", {3, 8}, kbtest::gl_unsigned_short, {0.0f, 0.5f, 0.25f, -0.5f, 0.0f, 1.0f})}};
    const std::size_t leg_indices = b.add_accessor(indices, kbtest::gl_unsigned_short, "SCALAR");
    const ojson leg = {{"attributes", attributes}, {"indices", leg_indices}, {"targets", ojson::array({t0, t1})}};
    b.add("meshes", {{"name", "leg"},
                     {"primitives", ojson::array({leg})},
                     {"weights", {0.5, 0.25}},
                     {"extras", {{"targetNames", {"bulge", "kink"}}}}});
    const std::size_t tri = b.floats({0, 0, 0, 1, 0, 0, 0, 1, 0}, "VEC3");
    const ojson triangle = {{"attributes", {{"POSITION", tri}}}};
    b.add("meshes", {{"name", "triangle"}, {"primitives", ojson::array({triangle})}});

    // Nodes and bind pose.
    const float s = o.quantized ? 8.0f : 1.0f; // (quantized positions are in 1/8 units: bones too)
    b.add("nodes", {{"name", "root"}, {"translation", {0.5, 0.0, 0.0}}, {"children", {1, 4, 5}}});
    b.add("nodes", {{"name", "hip"}, {"translation", {0.0, 0.0, 0.0}}, {"rotation", {0, 0, 0.0998334, 0.9950042}}, {"children", {2}}});
    b.add("nodes", {{"name", "knee"}, {"translation", {0.0, 1.0 * s, 0.0}}, {"children", {3}}});
    b.add("nodes", {{"name", "foot"}, {"translation", {0.0, 1.0 * s, 0.0}}, {"children", {6}}});
    b.add("nodes", {{"name", "leg_a"}, {"mesh", 0}, {"skin", 0}, {"weights", {0.3, 0.1}}});
    b.add("nodes", {{"name", "leg_b"}, {"mesh", 0}, {"skin", 1}});
    b.add("nodes", {{"name", "toe"}, {"mesh", 1}, {"matrix", {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0.25, 0, 1}}});
    b.add("nodes", {{"name", "outside"}, {"mesh", 1}});
    b.add("scenes", {{"nodes", {0}}});
    b.doc["scene"] = 0;
    // Skin 0: inverse bind matrices of hip (identity at rest: its rotation aside), knee, foot.
    std::vector<float> ibm;
    const glm::mat4 hip = glm::translate(glm::mat4(1.0f), glm::vec3(0.5f, 0, 0)) *
                          glm::mat4_cast(glm::quat(0.9950042f, 0, 0, 0.0998334f));
    const glm::mat4 knee = hip * glm::translate(glm::mat4(1.0f), glm::vec3(0, 1.0f * s, 0));
    const glm::mat4 foot = knee * glm::translate(glm::mat4(1.0f), glm::vec3(0, 1.0f * s, 0));
    for (const glm::mat4& m : {hip, knee, foot}) {
        const glm::mat4 inv = glm::inverse(m);
        for (int c = 0; c < 4; ++c)
            for (int e = 0; e < 4; ++e) ibm.push_back(inv[c][e]);
    }
    b.add("skins", {{"joints", {1, 2, 3}}, {"inverseBindMatrices", b.floats(ibm, "MAT4")}});
    b.add("skins", {{"joints", {3, 2, 1}}});

    // The animation: key times 0, 0.5, 1 (with a cut: 0, 0.5, 0.5, 1), values per key.
    std::vector<float> times = o.cut ? std::vector<float>{0.0f, 0.5f, 0.5f, 1.0f} : std::vector<float>{0.0f, 0.5f, 1.0f};
    const std::size_t keys = times.size();
    const std::size_t input = b.floats(times, "SCALAR");
    const auto output = [&](std::size_t components, auto make) {
        std::vector<float> v;
        for (std::size_t k = 0; k < keys; ++k) {
            const std::vector<float> value = make(k);
            if (cubic) {
                for (std::size_t c = 0; c < components; ++c) v.push_back(r.uniform(-1.0f, 1.0f)); // in-tangent
                v.insert(v.end(), value.begin(), value.end());
                for (std::size_t c = 0; c < components; ++c) v.push_back(r.uniform(-1.0f, 1.0f)); // out-tangent
            } else {
                v.insert(v.end(), value.begin(), value.end());
            }
        }
        return v;
    };
    const auto rotation = [&](std::size_t) {
        const glm::quat q = r.rotation();
        return std::vector<float>{q.x, q.y, q.z, q.w};
    };
    const std::string type_of[] = {"SCALAR", "VEC3", "VEC4"};
    ojson samplers = ojson::array(), channels = ojson::array();
    const auto animate = [&](std::size_t node, const char* path, std::size_t components, const std::vector<float>& values,
                             const std::string& type) {
        samplers.push_back({{"input", input}, {"output", b.floats(values, type)}, {"interpolation", o.interpolation}});
        channels.push_back({{"sampler", samplers.size() - 1}, {"target", {{"node", node}, {"path", path}}}});
        (void)components;
    };
    animate(1, "rotation", 4, output(4, rotation), "VEC4");
    animate(2, "translation", 3, output(3, [&](std::size_t) { return std::vector<float>{r.uniform(-0.3f, 0.3f), s * r.uniform(0.8f, 1.2f), 0.0f}; }), "VEC3");
    animate(2, "scale", 3, output(3, [&](std::size_t) { return std::vector<float>{r.uniform(0.8f, 1.2f), r.uniform(0.8f, 1.2f), 1.0f}; }), "VEC3");
    animate(3, "rotation", 4, output(4, rotation), "VEC4");
    {
        // weights: 2 per key (targets), tangents per target too.
        std::vector<float> v;
        for (std::size_t k = 0; k < keys; ++k) {
            if (cubic) v.insert(v.end(), {r.uniform(-1, 1), r.uniform(-1, 1)});
            v.insert(v.end(), {r.uniform(0, 1), r.uniform(0, 1)});
            if (cubic) v.insert(v.end(), {r.uniform(-1, 1), r.uniform(-1, 1)});
        }
        animate(4, "weights", 1, v, "SCALAR");
    }
    b.add("animations", {{"name", "walk"}, {"samplers", samplers}, {"channels", channels}});
    (void)type_of;
    return b;
}

} // namespace

TEST_CASE("glTF: every interpolation of a built character against the specification (.gltf and .glb)") {
    for (const char* mode : {"STEP", "LINEAR", "CUBICSPLINE"})
        for (bool cut : {false, true}) {
            const std::string interpolation = mode;
            CAPTURE(interpolation);
            CAPTURE(cut);
            character_options o;
            o.interpolation = mode;
            o.cut = cut;
            gltf_builder b = character(o);
            check_against_spec(bytes_of(b.gltf_text()));
            gltf_builder b2 = character(o);
            check_against_spec(b2.glb());
        }
}

TEST_CASE("glTF: quantized attributes, byteStride, sparse targets, normalized weights against the specification") {
    for (const char* mode : {"LINEAR", "CUBICSPLINE"}) {
        const std::string interpolation = mode;
        CAPTURE(interpolation);
        character_options q;
        q.interpolation = mode;
        q.quantized = true;
        gltf_builder b = character(q);
        check_against_spec(b.glb());
        character_options i;
        i.interpolation = mode;
        i.interleaved = true;
        gltf_builder b2 = character(i);
        check_against_spec(bytes_of(b2.gltf_text()));
    }
}

TEST_CASE("glTF: the character's structure: instances, skins, morph weights, names, what is not imported") {
    gltf_builder b = character({});
    const auto r = load_bytes(b.glb());
    REQUIRE(r);
    const gltf::model& m = *r;
    CHECK(m.binary);
    CHECK(m.skeleton.size() == 8);
    // The leg twice (two skins), the toe triangle once: node 7 is outside the scene.
    REQUIRE(m.meshes.size() == 3);
    std::vector<std::size_t> nodes;
    for (const auto& mi : m.meshes) nodes.push_back(mi.node_index);
    std::sort(nodes.begin(), nodes.end());
    CHECK(nodes == std::vector<std::size_t>{4, 5, 6});
    CHECK(has_warning(m, "outside scene 0"));
    for (const auto& mi : m.meshes) {
        CHECK(mi.joint == m.joint_of_node[mi.node_index]);
        if (mi.node_index == 6) {
            CHECK_FALSE(mi.is_skinned());
            continue;
        }
        CHECK(mi.name == "leg");
        REQUIRE(mi.skin.bones.size() == 3);
        CHECK(mi.morph_targets.size() == 2);
        CHECK(mi.morph_targets[1].name == "kink");
        CHECK(mi.texcoords.size() == 12);
        if (mi.node_index == 5) {
            // Skin 1 has no inverseBindMatrices: identity (the specification says so).
            CHECK(mi.skin_index == 1);
            CHECK(mi.skin.bones[0].name == "foot");
            for (const auto& bone : mi.skin.bones) CHECK(bone.offset == glm::mat4(1.0f));
        } else {
            CHECK(mi.skin.bones[0].name == "hip");
            CHECK(mi.skin.bones[0].offset != glm::mat4(1.0f));
        }
    }
    // Default morph weights: node 4's own, node 5's from the mesh.
    const skeleton& s = m.skeleton;
    CHECK(s.morph_weight_count(m.joint_of_node[4]) == 2);
    CHECK(s.bind_morph_weights()[s.morph_weight_offset(m.joint_of_node[4])] == 0.3f);
    CHECK(s.bind_morph_weights()[s.morph_weight_offset(m.joint_of_node[5]) + 1] == 0.25f);
    // The clip: seconds, times exact, one channel per animated node.
    REQUIRE(m.animations.size() == 1);
    const clip& c = m.animations[0].clip;
    CHECK(c.name == "walk");
    CHECK(c.duration == 1.0f);
    CHECK(c.channels.size() == 4);
}

TEST_CASE("glTF: a 35-second clip keyed in milliseconds keeps its float key times exactly") {
    gltf_builder b;
    std::vector<float> times, values;
    for (int ms = 0; ms <= 35000; ms += 7) {
        times.push_back(static_cast<float>(ms) / 1000.0f);
        values.insert(values.end(), {float(ms % 13), 0.0f, 0.0f});
    }
    b.add("nodes", {{"name", "n"}});
    const std::size_t in = b.floats(times, "SCALAR"), out = b.floats(values, "VEC3");
    const ojson sampler = {{"input", in}, {"output", out}};
    const ojson channel = {{"sampler", 0}, {"target", {{"node", 0}, {"path", "translation"}}}};
    b.add("animations", {{"samplers", ojson::array({sampler})}, {"channels", ojson::array({channel})}});
    const auto r = load_bytes(b.glb(), io::parse_mode::strict);
    REQUIRE(r);
    const position_track<float>& t = r->animations.at(0).clip.channels.at(0).translation;
    REQUIRE(t.size() == times.size());
    for (std::size_t k = 0; k < times.size(); ++k) REQUIRE(kbtest::bit_equal(t.time(k), times[k]));
}

TEST_CASE("glTF: .gltf with an external .bin file, and load_memory refuses external buffers without a folder") {
    gltf_builder b = character({});
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "keyblend_gltf_test";
    std::filesystem::create_directories(dir);
    b.set_buffer("leg%20data.bin");
    {
        std::ofstream((dir / "leg data.bin").string(), std::ios::binary).write(reinterpret_cast<const char*>(b.bin.data()),
                                                                               std::streamsize(b.bin.size()));
        std::ofstream((dir / "leg.gltf").string()) << b.doc.dump();
    }
    const auto r = gltf::load((dir / "leg.gltf").string());
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    CHECK(r->meshes.size() == 3);
    check_against_spec(read_file((dir / "leg.gltf").string()), dir.string());
    const std::string text = b.doc.dump();
    const auto m = gltf::load_memory(text.data(), text.size());
    REQUIRE_FALSE(m);
    CHECK(m.error().code == errc::io_error);
    CHECK(contains(m.error().message, "/buffers/0/uri"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("glTF: base colour images in a buffer view or a data: URI are imported once and shared, broken ones dropped") {
    const std::vector<unsigned char> png = {0x89, 'P', 'N', 'G', 13, 10, 26, 10, 1, 2, 3, 4, 5};
    const std::vector<unsigned char> jpeg = {0xFF, 0xD8, 0xFF, 0xE0, 9, 8, 7, 0xFF, 0xD9};
    gltf_builder b = character({});
    const std::size_t view = b.add_view(png);
    b.doc["images"] = ojson::array({
        {{"bufferView", view}, {"mimeType", "image/png"}},                  // 0: in the buffer
        {{"uri", "data:image/jpeg;base64," + kbtest::base64_encode(jpeg)}}, // 1: in the JSON
        {{"bufferView", view}},                                             // 2: no mimeType
        {{"uri", "data:image/png,not base64"}},                             // 3
        {{"uri", "skins/leg.png"}},                                         // 4: a file
        {{"bufferView", view}, {"mimeType", "image/png"}}});                // 5: no material uses it
    // Materials 0 and 1 share image 0; material k > 1 uses image k - 1; primitive k has material k.
    const std::size_t sources[] = {0, 0, 1, 2, 3, 4};
    ojson& primitives = b.doc["meshes"][0]["primitives"];
    const ojson primitive = primitives[0];
    primitives = ojson::array();
    for (std::size_t k = 0; k < 6; ++k) {
        b.add("textures", {{"source", sources[k]}});
        b.add("materials", {{"pbrMetallicRoughness", {{"baseColorTexture", {{"index", k}}}}}});
        ojson p = primitive;
        p["material"] = k;
        primitives.push_back(p);
    }
    for (const bool binary : {true, false}) {
        CAPTURE(binary);
        const auto m = load_bytes(binary ? b.glb() : bytes_of(b.gltf_text()));
        REQUIRE_MESSAGE(m, (m ? "" : m.error().message));
        std::vector<const io::material*> material(6, nullptr);
        for (const gltf::mesh_instance& i : m->meshes)
            if (i.mesh_index == 0 && !i.materials.empty()) material[i.primitive_index] = &i.materials[0];
        for (const io::material* x : material) REQUIRE(x != nullptr);
        REQUIRE(material[0]->texture_image);
        CHECK(material[0]->texture_image->mime_type == "image/png");
        CHECK(material[0]->texture_image->bytes == png);
        CHECK(material[0]->texture_file == "image 0");
        CHECK(material[1]->texture_image == material[0]->texture_image); // one copy, shared
        REQUIRE(material[2]->texture_image);
        CHECK(material[2]->texture_image->mime_type == "image/jpeg");
        CHECK(material[2]->texture_image->bytes == jpeg);
        CHECK(material[2]->texture_file == "image 1");
        // Dropped with a warning naming the place: no image, the name kept.
        CHECK_FALSE(material[3]->texture_image);
        CHECK(material[3]->texture_file == "image 2");
        CHECK(has_warning(*m, "/images/2/mimeType: missing (required with a bufferView); image not imported"));
        CHECK_FALSE(material[4]->texture_image);
        CHECK(has_warning(*m, "/images/3/uri: not a base64 data: URI; image not imported"));
        // A file: its URI, as before.
        CHECK_FALSE(material[5]->texture_image);
        CHECK(material[5]->texture_file == "skins/leg.png");
        CHECK(has_warning(*m, "images no material uses as its base colour texture"));
        // Strict mode refuses the broken images.
        CHECK_FALSE(load_bytes(binary ? b.glb() : bytes_of(b.gltf_text()), io::parse_mode::strict));
    }
}

TEST_CASE("glTF write in this build's GLM layout: vec3 attributes packed, three-component bounds") {
    // (Under GLM_FORCE_DEFAULT_ALIGNED_GENTYPES a glm::vec3 is 16 bytes; its padding is not data.)
    std::vector<joint_desc> joints(1);
    joints[0].name = "root";
    const skeleton s = skeleton::from_parents(joints).value();
    io::mesh m;
    m.name = "triangle";
    m.joint = 0;
    m.positions = {{0, 0, 0}, {1, 2, 3}, {-4, 5, -6}};
    m.normals = {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}};
    m.indices = {0, 1, 2};
    gltf::asset a;
    a.skeleton = &s;
    a.meshes = {&m};
    gltf::write_options o;
    o.source = gltf::handedness::right;
    std::vector<unsigned char> text, bin;
    REQUIRE(gltf::write_memory(a, gltf::container::gltf, text, bin, o));
    const ojson doc = ojson::parse(text.begin(), text.end());
    const ojson& attributes = doc["meshes"][0]["primitives"][0]["attributes"];
    const ojson& position = doc["accessors"][attributes["POSITION"].get<std::size_t>()];
    CHECK(position["count"] == 3);
    CHECK(position["min"] == ojson::array({-4.0, 0.0, -6.0}));
    CHECK(position["max"] == ojson::array({1.0, 5.0, 3.0}));
    CHECK(doc["accessors"][attributes["NORMAL"].get<std::size_t>()]["count"] == 3);
    CHECK(doc["bufferViews"][position["bufferView"].get<std::size_t>()]["byteLength"] == 36);
    std::vector<unsigned char> glb, none;
    REQUIRE(gltf::write_memory(a, gltf::container::glb, glb, none, o));
    const auto back = load_bytes(glb, io::parse_mode::strict);
    REQUIRE_MESSAGE(back, (back ? "" : back.error().message));
    REQUIRE(back->meshes.size() == 1);
    CHECK(back->meshes[0].positions == m.positions);
    CHECK(back->meshes[0].normals == m.normals);
}

TEST_CASE("glTF: a path or an external buffer that is not a file to read: an error naming it, not a crash") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "keyblend_gltf_unreadable";
    std::filesystem::create_directories(dir / "folder.gltf");
    std::filesystem::create_directories(dir / "folder.bin");
    // (A folder opens and reports an endless size on some systems: nothing may be allocated for it.)
    for (const std::filesystem::path& p : {dir / "folder.gltf", dir / "missing.gltf"}) {
        CAPTURE(p.string());
        const auto r = gltf::load(p.string());
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::io_error);
        CHECK(r.error().message.rfind(p.string() + ": cannot ", 0) == 0);
    }
    // A buffer whose uri names a folder or nothing, declaring far more bytes than any file has.
    for (const char* uri : {"folder.bin", "missing.bin"}) {
        CAPTURE(uri);
        gltf_builder b = character({});
        b.set_buffer(uri);
        b.doc["buffers"][0]["byteLength"] = std::uint64_t(1) << 50;
        std::ofstream((dir / "leg.gltf").string()) << b.doc.dump();
        const auto r = gltf::load((dir / "leg.gltf").string());
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::io_error);
        CHECK(contains(r.error().message, "/buffers/0/uri"));
        CHECK(contains(r.error().message, std::string("external buffer '") + (dir / uri).string() + "': cannot "));
    }
    std::filesystem::remove_all(dir);
}

// --- hostile files --------------------------------------------------------------------------

namespace {

/// A small valid file with a morphing node and a skin, as JSON to edit.
gltf_builder morph_file() {
    gltf_builder b;
    const std::size_t pos = b.floats({0, 0, 0, 1, 0, 0, 0, 1, 0}, "VEC3");
    const std::size_t d = b.floats({0, 0, 1, 0, 0, 1, 0, 0, 1}, "VEC3");
    const ojson target = {{"POSITION", d}};
    const ojson primitive = {{"attributes", {{"POSITION", pos}}}, {"targets", ojson::array({target})}};
    b.add("meshes", {{"primitives", ojson::array({primitive})}});
    b.add("nodes", {{"name", "cube"}, {"mesh", 0}});
    const std::size_t in = b.floats({0.0f, 1.0f}, "SCALAR"), out = b.floats({0.0f, 1.0f}, "SCALAR");
    const ojson sampler = {{"input", in}, {"output", out}};
    const ojson channel = {{"sampler", 0}, {"target", {{"node", 0}, {"path", "weights"}}}};
    b.add("animations", {{"samplers", ojson::array({sampler})}, {"channels", ojson::array({channel})}});
    return b;
}

/// Expects strict mode to fail naming `place` (with `code`), and lenient mode to load with a
/// warning naming it; returns the lenient model.
gltf::model strict_fails_lenient_warns(const std::vector<unsigned char>& file, errc code, const std::string& place) {
    save_seed(file);
    const auto strict = load_bytes(file, io::parse_mode::strict);
    REQUIRE_FALSE(strict);
    CHECK(strict.error().code == code);
    CHECK_MESSAGE(contains(strict.error().message, place), strict.error().message);
    const auto lenient = load_bytes(file);
    REQUIRE_MESSAGE(lenient, (lenient ? "" : lenient.error().message));
    CHECK(has_warning(*lenient, place));
    for (const auto& a : lenient->animations) CHECK(validate_clip(a.clip, lenient->skeleton));
    return *lenient;
}

} // namespace

/// The influences the loader must give a vertex: its pairs with a positive weight and a joint
/// below 65536, by decreasing weight, equal weights in file order (written here as a stable sort).
std::vector<std::pair<std::uint32_t, float>> expected_influences(const std::vector<float>& joints,
                                                                const std::vector<float>& weights, std::size_t sets,
                                                                std::size_t v) {
    std::vector<std::pair<std::uint32_t, float>> kept;
    for (std::size_t s = 0; s < sets; ++s)
        for (std::size_t c = 0; c < 4; ++c) {
            const float w = weights[(s * 12 + v) * 4 + c];
            const float j = joints[(s * 12 + v) * 4 + c];
            if (w > 0.0f && j < 65536.0f) kept.emplace_back(static_cast<std::uint32_t>(j), w);
        }
    std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return kept;
}

/// Both instances of the leg (mesh 0, instanced by two skins) hold expected_influences for each
/// of its `vertices` vertices, at the width of the vertex with the most.
void check_leg_influences(const gltf::model& m, const std::vector<float>& joints, const std::vector<float>& weights,
                          std::size_t sets, std::size_t vertices) {
    std::size_t most = 0;
    for (std::size_t v = 0; v < vertices; ++v) most = std::max(most, expected_influences(joints, weights, sets, v).size());
    std::size_t checked = 0;
    for (const auto& mi : m.meshes) {
        if (mi.mesh_index != 0) continue;
        const io::mesh_skin& skin = mi.skin;
        REQUIRE(skin.influences_per_vertex == most);
        for (std::size_t v = 0; v < vertices; ++v) {
            CAPTURE(v);
            const auto want = expected_influences(joints, weights, sets, v);
            for (std::size_t i = 0; i < most; ++i) {
                const std::uint32_t joint = i < want.size() ? want[i].first : 0u;
                const float weight = i < want.size() ? want[i].second : 0.0f;
                CHECK(skin.bone_indices[v * most + i] == joint);
                CHECK(skin.weights[v * most + i] == weight);
            }
        }
        ++checked;
    }
    CHECK(checked == 2); // (the leg, instanced by two skins)
}

/// The character with its leg's influences replaced: `sets` JOINTS_n / WEIGHTS_n pairs from
/// `joints` and `weights` (set s, vertex v, slot c at (s * 12 + v) * 4 + c), joints stored as
/// `joint_type`.
gltf_builder character_with_influences(const std::vector<float>& joints, const std::vector<float>& weights,
                                       std::size_t sets, kbtest::gl_type joint_type) {
    gltf_builder b = character({});
    ojson& attributes = b.doc["meshes"][0]["primitives"][0]["attributes"];
    for (std::size_t s = 0; s < sets; ++s) {
        attributes["JOINTS_" + std::to_string(s)] =
            b.add_accessor(std::vector<float>(joints.begin() + s * 48, joints.begin() + (s + 1) * 48), joint_type, "VEC4");
        attributes["WEIGHTS_" + std::to_string(s)] =
            b.floats(std::vector<float>(weights.begin() + s * 48, weights.begin() + (s + 1) * 48), "VEC4");
    }
    return b;
}

TEST_CASE("glTF: influences from one, two and three JOINTS/WEIGHTS sets: by decreasing weight, ties in file order") {
    // 12 vertices (the character's leg); per set, 4 joints and 4 weights a vertex, with ties, zeros
    // anywhere, and weights already in order or reversed.
    kbtest::rng r(11);
    for (std::size_t sets = 1; sets <= 3; ++sets) {
        CAPTURE(sets);
        std::vector<float> joints(sets * 12 * 4), weights(sets * 12 * 4);
        for (std::size_t i = 0; i < joints.size(); ++i) {
            joints[i] = static_cast<float>(r.integer(0, 2));
            const float choices[] = {0.0f, 0.0f, 0.125f, 0.25f, 0.25f, 0.5f, 0.375f};
            weights[i] = choices[r.integer(0, 6)];
        }
        // Vertex 0: one influence in the last slot; vertex 1: all four equal; vertex 2: increasing.
        for (std::size_t c = 0; c < 4; ++c) {
            weights[0 * 4 + c] = c == 3 ? 1.0f : 0.0f;
            weights[1 * 4 + c] = 0.25f;
            weights[2 * 4 + c] = 0.1f * static_cast<float>(c + 1);
        }
        // (At most 8 influences a vertex: more is another test's case.)
        for (std::size_t v = 0; v < 12; ++v) {
            std::size_t positive = 0;
            for (std::size_t s = 0; s < sets; ++s)
                for (std::size_t c = 0; c < 4; ++c) {
                    float& w = weights[(s * 12 + v) * 4 + c];
                    if (w > 0.0f && ++positive > 8) w = 0.0f;
                }
        }
        gltf_builder b = character_with_influences(joints, weights, sets, kbtest::gl_unsigned_byte);
        const auto m = load_bytes(b.glb(), io::parse_mode::lenient);
        REQUIRE_MESSAGE(m, (m ? "" : m.error().message));
        check_leg_influences(*m, joints, weights, sets, 12);
    }
}

TEST_CASE("glTF: more than 8 influences keep the 8 largest at the vertex's former sum, finite even near FLT_MAX") {
    // Three sets (12 slots a vertex) on the leg's 12 vertices: vertex 0 has 10 influences of
    // 0.1, vertex 1 nine of 3e38 (whose sums overflow a float, and inf / inf is NaN), the others
    // one of 1.
    std::vector<float> joints(3 * 12 * 4, 0.0f), weights(3 * 12 * 4, 0.0f);
    const auto slot = [](std::size_t v, std::size_t i) { return ((i / 4) * 12 + v) * 4 + i % 4; };
    for (std::size_t v = 0; v < 12; ++v) weights[slot(v, 0)] = 1.0f;
    for (std::size_t i = 0; i < 10; ++i) {
        joints[slot(0, i)] = static_cast<float>(i % 3);
        weights[slot(0, i)] = 0.1f;
    }
    for (std::size_t i = 0; i < 9; ++i) {
        joints[slot(1, i)] = static_cast<float>(i % 3);
        weights[slot(1, i)] = 3e38f;
    }
    gltf_builder b = character_with_influences(joints, weights, 3, kbtest::gl_unsigned_byte);
    const auto m = load_bytes(b.glb(), io::parse_mode::lenient);
    REQUIRE_MESSAGE(m, (m ? "" : m.error().message));
    CHECK(has_warning(*m, "2 vertices have more than 8 influences"));
    const auto leg = std::find_if(m->meshes.begin(), m->meshes.end(), [](const auto& mi) { return mi.mesh_index == 0; });
    REQUIRE(leg != m->meshes.end());
    const io::mesh_skin& k = leg->skin;
    REQUIRE(k.influences_per_vertex == 8);
    double sum = 0.0;
    for (std::size_t i = 0; i < 8; ++i) sum += static_cast<double>(k.weights[i]);
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
    // 9 x 3e38 over 8 of them is 3.375e38 each: within a float, and so written.
    for (std::size_t i = 8; i < 16; ++i) CHECK(k.weights[i] == doctest::Approx(3.375e38).epsilon(1e-6));
    for (float w : k.weights) CHECK(is_finite(w));
}

TEST_CASE("glTF: influences of a primitive whose vertex count is not a multiple of four or eight, clean and damaged") {
    // (The loader orders groups of four or eight vertices at once, the last vertices one at a
    // time; damage anywhere sends every vertex down the one-at-a-time path, which names it.)
    kbtest::rng r(5);
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{6}, std::size_t{103}}) {
        CAPTURE(n);
        std::vector<float> pos(3 * n), joints(4 * n), weights(4 * n);
        for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<float>(i % 7);
        for (std::size_t i = 0; i < joints.size(); ++i) {
            joints[i] = static_cast<float>(r.integer(0, 2));
            // (Sums of these are exact in any order: the count of vertices off 1 is too.)
            const float choices[] = {0.0f, 0.125f, 0.25f, 0.25f, 0.5f, 0.375f, 1.0f};
            weights[i] = choices[r.integer(0, 6)];
        }
        enum class damage { none, negative_weight_in_last_vertex, joint_past_65535_in_vertex_1 };
        for (damage d : {damage::none, damage::negative_weight_in_last_vertex, damage::joint_past_65535_in_vertex_1}) {
            CAPTURE(static_cast<int>(d));
            std::vector<float> j = joints, w = weights;
            std::size_t bad_vertex = 0;
            if (d == damage::negative_weight_in_last_vertex) {
                bad_vertex = n - 1;
                w[4 * bad_vertex + 2] = -0.5f;
            } else if (d == damage::joint_past_65535_in_vertex_1) {
                if (n < 2) continue;
                bad_vertex = 1;
                j[4 * bad_vertex + 1] = 70000.0f;
                w[4 * bad_vertex + 1] = 0.25f;
            }
            gltf_builder b = character({});
            ojson& mesh = b.doc["meshes"][0];
            mesh.erase("weights");
            mesh.erase("extras");
            const ojson attributes = {{"POSITION", b.floats(pos, "VEC3")},
                                      {"JOINTS_0", b.add_accessor(j, kbtest::gl_unsigned_int, "VEC4")},
                                      {"WEIGHTS_0", b.floats(w, "VEC4")}};
            mesh["primitives"][0] = {{"attributes", attributes}};
            const auto m = load_bytes(b.glb(), io::parse_mode::lenient);
            REQUIRE_MESSAGE(m, (m ? "" : m.error().message));
            const std::string first = "(first in vertex " + std::to_string(bad_vertex) + ")";
            CHECK(has_warning(*m, "negative or NaN weights " + first) == (d == damage::negative_weight_in_last_vertex));
            CHECK(has_warning(*m, "joint indices that are no joint " + first) == (d == damage::joint_past_65535_in_vertex_1));
            std::size_t off_sum = 0;
            for (std::size_t v = 0; v < n; ++v) {
                const auto want = expected_influences(j, w, 1, v);
                float sum = 0.0f;
                for (const auto& p : want) sum += p.second;
                off_sum += sum != 1.0f;
            }
            CHECK(has_warning(*m, "attributes: " + std::to_string(off_sum) + " vertices' weights do not sum to 1") ==
                  (off_sum != 0));
            check_leg_influences(*m, j, w, 1, n);
        }
    }
}

TEST_CASE("glTF hostile: NaN and negative weights, joint indices past 65535, in one and three sets") {
    for (std::size_t sets : {std::size_t{1}, std::size_t{3}}) {
        CAPTURE(sets);
        std::vector<float> joints(sets * 48, 0.0f), weights(sets * 48, 0.0f);
        for (std::size_t v = 0; v < 12; ++v) {
            joints[v * 4] = 1.0f;
            weights[v * 4] = 1.0f;
        }
        SUBCASE("NaN weights: replaced by 0") {
            weights[(sets - 1) * 48 + 7 * 4 + 3] = std::nanf(""); // vertex 7
            gltf_builder b = character_with_influences(joints, weights, sets, kbtest::gl_unsigned_byte);
            const std::string place = "/meshes/0/primitives/0/attributes/WEIGHTS_" + std::to_string(sets - 1);
            const gltf::model m = strict_fails_lenient_warns(b.glb(), errc::non_finite, place);
            CHECK(has_warning(m, "1 NaN or infinite values (first in vertex 7) replaced by 0"));
            for (const auto& mi : m.meshes)
                if (mi.mesh_index == 0) {
                    REQUIRE(mi.skin.influences_per_vertex == 1);
                    for (std::size_t v = 0; v < 12; ++v) CHECK(mi.skin.weights[v] == 1.0f);
                }
        }
        SUBCASE("negative weights: ignored") {
            weights[5 * 4 + 1] = -0.5f;                     // vertex 5
            weights[(sets - 1) * 48 + 7 * 4 + 3] = -0.25f;  // vertex 7
            gltf_builder b = character_with_influences(joints, weights, sets, kbtest::gl_unsigned_byte);
            const gltf::model m = strict_fails_lenient_warns(b.glb(), errc::invalid_argument, "/meshes/0/primitives/0/attributes");
            CHECK(has_warning(m, "2 negative or NaN weights (first in vertex 5) ignored"));
            for (const auto& mi : m.meshes)
                if (mi.mesh_index == 0) {
                    REQUIRE(mi.skin.influences_per_vertex == 1);
                    for (std::size_t v = 0; v < 12; ++v) CHECK(mi.skin.weights[v] == 1.0f);
                }
        }
        SUBCASE("joint indices past 65535: ignored") {
            joints[(sets - 1) * 48 + 9 * 4 + 2] = 70000.0f; // vertex 9
            weights[(sets - 1) * 48 + 9 * 4 + 2] = 0.5f;
            joints[(sets - 1) * 48 + 10 * 4 + 2] = 70000.0f; // vertex 10, weight 0: no influence, no report
            gltf_builder b = character_with_influences(joints, weights, sets, kbtest::gl_unsigned_int);
            const gltf::model m = strict_fails_lenient_warns(b.glb(), errc::out_of_range, "/meshes/0/primitives/0/attributes");
            CHECK(has_warning(m, "1 joint indices that are no joint (first in vertex 9)"));
            for (const auto& mi : m.meshes)
                if (mi.mesh_index == 0) {
                    REQUIRE(mi.skin.influences_per_vertex == 1);
                    for (std::size_t v = 0; v < 12; ++v) CHECK(mi.skin.bone_indices[v] == 1);
                }
        }
    }
}

TEST_CASE("glTF hostile: a weights channel whose sampler input has count 0") {
    gltf_builder b = morph_file();
    const std::size_t input = b.doc["animations"][0]["samplers"][0]["input"];
    b.doc["accessors"][input]["count"] = 0;
    const gltf::model m = strict_fails_lenient_warns(b.glb(), errc::empty, "/accessors/" + std::to_string(input) + "/count");
    REQUIRE(m.animations.size() == 1);
    CHECK(m.animations[0].clip.channels.empty());
}

TEST_CASE("glTF hostile: an accessor count past 2^53, JSON's largest exact integer") {
    gltf_builder b = morph_file();
    const std::size_t input = b.doc["animations"][0]["samplers"][0]["input"];
    b.doc["accessors"][input]["count"] = std::uint64_t{9007199254740993u};
    const gltf::model m = strict_fails_lenient_warns(b.glb(), errc::parse_error, "/accessors/" + std::to_string(input) + "/count");
    const auto lenient = load_bytes(b.glb());
    REQUIRE(lenient);
    CHECK(has_warning(*lenient, "at most"));
    CHECK(m.animations.at(0).clip.channels.empty());
}

TEST_CASE("glTF hostile: float key times declared with a byte component type") {
    gltf_builder b = morph_file();
    const std::size_t input = b.doc["animations"][0]["samplers"][0]["input"];
    b.doc["accessors"][input]["componentType"] = 5121;
    const gltf::model m =
        strict_fails_lenient_warns(b.glb(), errc::parse_error, "/accessors/" + std::to_string(input) + "/componentType");
    CHECK(m.animations.at(0).clip.channels.empty());
}

TEST_CASE("glTF hostile: node.skin = 99") {
    gltf_builder b = character({});
    b.doc["nodes"][4]["skin"] = 99;
    const gltf::model m = strict_fails_lenient_warns(b.glb(), errc::out_of_range, "/nodes/4/skin");
    for (const auto& mi : m.meshes)
        if (mi.node_index == 4) CHECK_FALSE(mi.is_skinned());
}

TEST_CASE("glTF hostile: an inverse-bind-matrix accessor shorter than the skin") {
    gltf_builder b = character({});
    const std::size_t a = b.doc["skins"][0]["inverseBindMatrices"];
    b.doc["accessors"][a]["count"] = 2;
    const gltf::model m = strict_fails_lenient_warns(b.glb(), errc::size_mismatch, "/skins/0/inverseBindMatrices");
    // Repaired: the missing one is the inverse of its joint's bind-pose model matrix.
    for (const auto& mi : m.meshes)
        if (mi.node_index == 4) {
            const std::size_t foot = m.joint_of_node[3];
            CHECK(kbtest::max_abs_diff(mi.skin.bones[2].offset, glm::inverse(m.skeleton.bind_model()[foot])) <= 1e-6f);
        }
}

TEST_CASE("glTF hostile: node cycles (own child, each other's child, two parents)") {
    SUBCASE("a node its own child") {
        gltf_builder b = character({});
        b.doc["nodes"][2]["children"] = {3, 2};
        const gltf::model m = strict_fails_lenient_warns(b.glb(), errc::cycle, "/nodes/2/children/1");
        CHECK(m.skeleton.size() == 8);
    }
    SUBCASE("two nodes each other's child") {
        gltf_builder b;
        b.add("nodes", {{"name", "a"}, {"children", {1}}});
        b.add("nodes", {{"name", "b"}, {"children", {0}}});
        const gltf::model m = strict_fails_lenient_warns(bytes_of(b.gltf_text()), errc::cycle, "its own ancestor");
        CHECK(m.skeleton.size() == 2);
    }
    SUBCASE("a node with two parents") {
        gltf_builder b = character({});
        b.doc["nodes"][0]["children"] = {1, 4, 5, 3};
        // (Links are taken in node order: node 0's comes first, node 2's is the second parent.)
        const gltf::model m = strict_fails_lenient_warns(b.glb(), errc::cycle, "/nodes/2/children/0");
        CHECK(m.skeleton.parent(m.joint_of_node[3]) == static_cast<joint_index>(m.joint_of_node[0]));
    }
}

TEST_CASE("glTF hostile: a node chain 20,000 deep loads, 1,000,000 deep fails on max_joints or loads when allowed") {
    const auto chain = [](std::size_t n) {
        std::string s = "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"nodes\":[";
        for (std::size_t i = 0; i < n; ++i) {
            s += i + 1 < n ? "{\"translation\":[0,1,0],\"children\":[" + std::to_string(i + 1) + "]}," : "{}";
        }
        return s + "]}";
    };
    {
        const std::string text = chain(20000);
        const auto r = gltf::load_memory(text.data(), text.size());
        REQUIRE(r);
        CHECK(r->skeleton.size() == 20000);
        CHECK(r->skeleton.bind_model().back()[3].y == 19999.0f);
    }
    const std::string text = chain(1000000);
    const auto start = std::chrono::steady_clock::now();
    const auto refused = gltf::load_memory(text.data(), text.size());
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == errc::unsupported);
    CHECK(contains(refused.error().message, "load_options::max_")); // (max_objects: the nodes array)
    io::load_options o;
    o.max_joints = 2000000;
    o.max_objects = 4000000;
#if defined(__SANITIZE_ADDRESS__) || defined(KEYBLEND_TEST_SANITIZED)
    // (A sanitizer build loads a 200,000-deep chain: the same code paths, in its time budget.)
    const std::string loaded_text = chain(200000);
#else
    const std::string& loaded_text = text;
#endif
    const auto loaded = gltf::load_memory(loaded_text.data(), loaded_text.size(), o);
    REQUIRE(loaded);
    CHECK(loaded->skeleton.size() == (loaded_text.size() == text.size() ? 1000000u : 200000u));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
}

TEST_CASE("glTF hostile: a 24-byte GLB whose JSON chunk claims 2 or 4 GB") {
    for (std::uint32_t claim : {0x80000000u, 0xFFFFFFFFu}) {
        std::vector<unsigned char> f;
        const auto u32 = [&](std::uint32_t v) {
            for (int i = 0; i < 4; ++i) f.push_back(static_cast<unsigned char>(v >> (8 * i)));
        };
        u32(0x46546C67u), u32(2), u32(24), u32(claim), u32(0x4E4F534Au);
        f.insert(f.end(), {'{', '}', ' ', ' '});
        REQUIRE(f.size() == 24);
        for (io::parse_mode mode : {io::parse_mode::strict, io::parse_mode::lenient}) {
            const auto r = load_bytes(f, mode);
            REQUIRE_FALSE(r);
            CHECK(r.error().code == errc::parse_error);
            CHECK(contains(r.error().message, "byte offset 12"));
            CHECK(contains(r.error().message, std::to_string(claim)));
        }
    }
}

TEST_CASE("glTF hostile: extensionsRequired naming what keyblend does not implement fails, naming it") {
    gltf_builder b = morph_file();
    b.doc["extensionsRequired"] = {"KHR_texture_basisu"};
    for (io::parse_mode mode : {io::parse_mode::strict, io::parse_mode::lenient}) {
        const auto r = load_bytes(b.glb(), mode);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::unsupported);
        CHECK(contains(r.error().message, "KHR_texture_basisu"));
        CHECK(contains(r.error().message, "/extensionsRequired/0"));
    }
}

TEST_CASE("glTF hostile: truncated and malformed containers, accessors past their views, bad indices") {
    gltf_builder b = character({});
    std::vector<unsigned char> glb = b.glb();
    // Every truncation fails cleanly.
    for (std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{11}, std::size_t{19}, glb.size() / 2, glb.size() - 1}) {
        const std::vector<unsigned char> cut(glb.begin(), glb.begin() + std::ptrdiff_t(n));
        const auto r = load_bytes(cut);
        CHECK_FALSE(r);
    }
    // An accessor reaching past its buffer view.
    gltf_builder c = character({});
    c.doc["accessors"][0]["count"] = 1000;
    strict_fails_lenient_warns(c.glb(), errc::out_of_range, "/accessors/0/count");
    // A triangle index past the vertices.
    gltf_builder d = character({});
    const std::size_t ia = d.doc["meshes"][0]["primitives"][0]["indices"];
    d.doc["accessors"][ia]["componentType"] = 5125; // reads the shorts as 32-bit indices: large values
    d.doc["accessors"][ia]["count"] = 15;
    strict_fails_lenient_warns(d.glb(), errc::out_of_range, "/meshes/0/primitives/0/indices");
}

// --- Draco ------------------------------------------------------------------------------------

#ifdef KEYBLEND_TEST_DRACO
TEST_CASE("glTF: KHR_draco_mesh_compression, encoded here with Draco's encoder") {
    REQUIRE(gltf::has_draco());
    // A grid of triangles.
    std::vector<glm::vec3> corners;
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
            const glm::vec3 a(float(x), float(y), 0.0f), b(float(x + 1), float(y), 0.5f), c(float(x), float(y + 1), 0.25f);
            corners.insert(corners.end(), {a, b, c});
        }
    draco::TriangleSoupMeshBuilder builder;
    builder.Start(int(corners.size() / 3));
    const int attribute = builder.AddAttribute(draco::GeometryAttribute::POSITION, 3, draco::DT_FLOAT32);
    for (std::size_t f = 0; f < corners.size() / 3; ++f)
        builder.SetAttributeValuesForFace(attribute, draco::FaceIndex(std::uint32_t(f)), &corners[3 * f].x,
                                          &corners[3 * f + 1].x, &corners[3 * f + 2].x);
    std::unique_ptr<draco::Mesh> mesh = builder.Finalize();
    REQUIRE(mesh);
    draco::Encoder encoder;
    encoder.SetEncodingMethod(draco::MESH_SEQUENTIAL_ENCODING);
    draco::EncoderBuffer encoded;
    REQUIRE(encoder.EncodeMeshToBuffer(*mesh, &encoded).ok());
    gltf_builder g;
    g.doc["extensionsUsed"] = {"KHR_draco_mesh_compression"};
    g.doc["extensionsRequired"] = {"KHR_draco_mesh_compression"};
    const std::size_t view =
        g.add_view(std::vector<unsigned char>(encoded.data(), encoded.data() + encoded.size()));
    const std::size_t position = g.add("accessors", {{"componentType", 5126}, {"count", mesh->num_points()}, {"type", "VEC3"}});
    const std::size_t indices = g.add("accessors", {{"componentType", 5125}, {"count", corners.size()}, {"type", "SCALAR"}});
    const ojson draco = {{"bufferView", view}, {"attributes", {{"POSITION", mesh->attribute(attribute)->unique_id()}}}};
    const ojson primitive = {{"attributes", {{"POSITION", position}}},
                             {"indices", indices},
                             {"extensions", {{"KHR_draco_mesh_compression", draco}}}};
    g.add("meshes", {{"primitives", ojson::array({primitive})}});
    g.add("nodes", {{"mesh", 0}});
    const auto r = load_bytes(g.glb(), io::parse_mode::strict);
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    REQUIRE(r->meshes.size() == 1);
    const gltf::mesh_instance& m = r->meshes[0];
    // The same triangles, as corner positions in any order.
    std::vector<std::tuple<float, float, float>> got, want;
    for (std::uint32_t i : m.indices) got.emplace_back(m.positions[i].x, m.positions[i].y, m.positions[i].z);
    for (const glm::vec3& c : corners) want.emplace_back(c.x, c.y, c.z);
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    CHECK(got == want);
}
#else
TEST_CASE("glTF: KHR_draco_mesh_compression without Draco is an error naming it") {
    gltf_builder g = morph_file();
    g.doc["extensionsRequired"] = {"KHR_draco_mesh_compression"};
    const auto r = load_bytes(g.glb());
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "KHR_draco_mesh_compression"));
}
#endif

// --- the shared files -----------------------------------------------------------------------

TEST_CASE("glTF shared files: poses, morph weights and skinned vertices against the specification") {
    for (const char* name : {"simple_skin.gltf", "quad_skin.glb", "khronos/CesiumMan.glb", "khronos/RiggedSimple.glb",
                             "khronos/AnimatedMorphCube.glb"}) {
        const std::string file = name;
        CAPTURE(file);
        const auto path = kbtest::formats_file(name);
        if (!path) continue;
        const std::vector<unsigned char> bytes = read_file(*path);
        // (quad_skin.glb has a vertex with 12 influences: keyblend keeps 8, so its vertices are not
        // compared there; its joints are.)
        if (std::string(name) == "quad_skin.glb") {
            const auto r = gltf::load(*path);
            REQUIRE(r);
            CHECK(has_warning(*r, "more than 8 influences"));
            CHECK(has_warning(*r, "COLOR_0"));
            continue;
        }
        check_against_spec(bytes);
    }
}

TEST_CASE("glTF shared files: CesiumMan's structure") {
    const auto path = kbtest::formats_file("khronos/CesiumMan.glb");
    if (!path) return;
    const auto r = gltf::load(*path, io::load_options{io::parse_mode::strict});
    REQUIRE(r);
    CHECK(r->meshes.size() == 1);
    CHECK(r->meshes[0].skin.bones.size() == 19);
    CHECK(r->animations.size() == 1);
    CHECK(r->animations[0].clip.duration == doctest::Approx(2.0));
    CHECK(r->meshes[0].materials.size() == 1);
    // Its texture, a JPEG in the binary chunk, imported whole, and written back the same.
    const io::material& m = r->meshes[0].materials[0];
    REQUIRE(m.texture_image);
    CHECK(m.texture_image->mime_type == "image/jpeg");
    const std::vector<unsigned char>& jpeg = m.texture_image->bytes;
    REQUIRE(jpeg.size() > 4);
    CHECK((jpeg[0] == 0xFF && jpeg[1] == 0xD8 && jpeg[jpeg.size() - 2] == 0xFF && jpeg.back() == 0xD9));
    gltf::asset a;
    a.skeleton = &r->skeleton;
    a.meshes.push_back(&r->meshes[0]);
    const std::string out = (std::filesystem::temp_directory_path() / "keyblend_cesium_copy.glb").string();
    gltf::write_options right_handed;
    right_handed.source = gltf::handedness::right;
    REQUIRE(gltf::write(out, a, gltf::container::glb, right_handed));
    const auto copy = gltf::load(out, io::load_options{io::parse_mode::strict});
    REQUIRE_MESSAGE(copy, (copy ? "" : copy.error().message));
    REQUIRE(copy->meshes.size() == 1);
    REQUIRE(copy->meshes[0].materials.size() == 1);
    REQUIRE(copy->meshes[0].materials[0].texture_image);
    CHECK(copy->meshes[0].materials[0].texture_image->mime_type == "image/jpeg");
    CHECK(copy->meshes[0].materials[0].texture_image->bytes == jpeg);
    std::filesystem::remove(out);
}
