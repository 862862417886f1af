// Tests for keyblend/package.hpp: what goes in comes out (skeleton, compressed clips sampling
// bit for bit as the clips compressed alone, meshes in skinning_job's layout), and every class of
// damaged or hostile package is rejected with the place named: truncation at every byte, every
// count, offset and size field set huge and just out of range, a wrong checksum, a wrong version,
// misaligned and overlapping sections, parents out of order, deep hierarchies.
#include <keyblend/package.hpp>
#include <keyblend/skin.hpp>

#include "compress_helpers.hpp"
#include "helpers.hpp"

#ifdef KEYBLEND_TEST_IO
#include <keyblend/io/xfile.hpp>

#include <glm/gtc/matrix_transform.hpp>
#endif

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace keyblend;
using kbtest::bit_equal;
using kbtest::local_to_model;
using kbtest::sample_clip;

namespace {

skeleton small_skeleton(bool morph = true) {
    std::vector<joint_desc> in = {
        {"root", no_parent, to_matrix(transform{glm::vec3(0, 1, 0), glm::identity<glm::quat>(), glm::vec3(1)})},
        {"spine", 0, to_matrix(transform{glm::vec3(0, 0.5f, 0), glm::angleAxis(0.2f, glm::vec3(1, 0, 0)), glm::vec3(1)})},
        {"head", 1, to_matrix(transform{glm::vec3(0, 0.4f, 0), glm::identity<glm::quat>(), glm::vec3(1)})},
        {"arm", 1, to_matrix(transform{glm::vec3(0.3f, 0.3f, 0), glm::angleAxis(-0.5f, glm::vec3(0, 0, 1)), glm::vec3(1)})},
        {"hand", 3, to_matrix(transform{glm::vec3(0.4f, 0, 0), glm::identity<glm::quat>(), glm::vec3(1)})},
    };
    if (morph) in[2].morph_weights = {0.0f, 0.25f};
    return skeleton::from_parents(in).value();
}

clip small_clip(const skeleton& s, const std::string& name, float phase) {
    clip c;
    c.name = name;
    c.ticks_per_second = 30.0f;
    c.duration = 30.0f;
    for (std::size_t j = 0; j < s.size(); ++j) {
        channel ch;
        ch.joint = j;
        for (float t = 0.0f; t <= c.duration; t += 1.0f)
            ch.rotation.push_back(t, s.bind_transforms()[j].rotation * glm::angleAxis(0.5f * std::sin(t / 5.0f + phase + float(j)), glm::vec3(0, 0, 1)));
        if (j == 0)
            for (float t = 0.0f; t <= c.duration; t += 1.0f) ch.translation.push_back(t, glm::vec3(t / 10.0f, 1.0f, 0.0f));
        if (s.morph_weight_count(j)) {
            ch.morph_weights.resize(s.morph_weight_count(j));
            for (float t = 0.0f; t <= c.duration; t += 1.0f) ch.morph_weights[0].push_back(t, t / 30.0f);
        }
        c.channels.push_back(ch);
    }
    c.events = {{15.0f, "step"}};
    return c;
}

/// A mesh with every attribute, a skin of k = 3 and `bones` bones, two materials and a morph target.
io::mesh full_mesh(const skeleton& s, std::size_t bones, std::size_t vertices = 40) {
    io::mesh m;
    m.name = "body";
    m.joint = 1;
    kbtest::rng r(3);
    for (std::size_t v = 0; v < vertices; ++v) {
        m.positions.push_back(r.vec3(-1, 1));
        m.normals.push_back(glm::normalize(r.vec3(-1, 1) + glm::vec3(0, 0, 3)));
        m.tangents.push_back(glm::vec4(1, 0, 0, v % 2 ? 1.0f : -1.0f));
        m.texcoords.push_back(glm::vec2(r.uniform(0, 1), r.uniform(0, 1)));
    }
    for (std::size_t t = 0; t + 2 < vertices; ++t) {
        m.indices.push_back(std::uint32_t(t));
        m.indices.push_back(std::uint32_t(t + 1));
        m.indices.push_back(std::uint32_t(t + 2));
        m.triangle_materials.push_back(std::uint32_t(t % 2));
    }
    m.materials = {{"skin", glm::vec4(1, 0.8f, 0.7f, 1), 5.0f, glm::vec3(0.1f), glm::vec3(0), "skin.png", nullptr},
                   {"cloth", glm::vec4(0.2f, 0.2f, 0.8f, 1), 0.0f, glm::vec3(0), glm::vec3(0.1f), "", nullptr}};
    for (std::size_t b = 0; b < bones; ++b)
        m.skin.bones.push_back({"bone" + std::to_string(b), b % s.size(), s.inverse_bind_model()[b % s.size()]});
    m.skin.influences_per_vertex = 3;
    for (std::size_t v = 0; v < vertices; ++v)
        for (std::size_t k = 0; k < 3; ++k) {
            m.skin.bone_indices.push_back(std::uint16_t((v * 7 + k * 13) % bones));
            m.skin.weights.push_back(k == 0 ? 0.5f : 0.25f);
        }
    io::morph_target smile;
    smile.name = "smile";
    smile.positions.assign(vertices, glm::vec3(0, 0.01f, 0));
    smile.normals.assign(vertices, glm::vec3(0));
    m.morph_targets.push_back(smile);
    return m;
}

std::vector<unsigned char> make_package(const skeleton& s, const std::vector<const clip*>& clips,
                                        const std::vector<const io::mesh*>& meshes) {
    package_contents in;
    in.skeleton = &s;
    in.clips = clips;
    in.meshes = meshes;
    in.settings.precision = 1e-4f;
    in.settings.shell_distance = 0.05f;
    result<std::vector<unsigned char>> bytes = write_package(in);
    REQUIRE_MESSAGE(bytes, (bytes ? std::string() : bytes.error().message));
    return std::move(*bytes);
}

/// Refreshes the checksum after a test changed bytes on purpose (so that the checks after it see
/// the change).
void reseal(std::vector<unsigned char>& b) {
    if (b.size() < 20) return;
    const std::uint32_t sum = crc32c(b.data() + 20, b.size() - 20);
    std::memcpy(b.data() + 16, &sum, 4);
}

template <class T>
T get(const std::vector<unsigned char>& b, std::size_t at) {
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    return v;
}
template <class T>
void put(std::vector<unsigned char>& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof v);
}

/// Opens `b` as a package (copied to its own aligned memory of exactly its size); on success,
/// uses every view, so that a sanitizer sees any read outside the bytes. Returns whether it opened.
bool try_open(const std::vector<unsigned char>& b, std::string* message = nullptr) {
    const result<package_file> f = package_file::copy(b.data(), b.size());
    if (!f) {
        CHECK(f.error().message.rfind("package: ", 0) == 0);
        if (message) *message = f.error().message;
        return false;
    }
    const package& p = f->contents();
    for (std::size_t j = 0; j < p.joint_count(); ++j) (void)p.joint_name(j);
    const result<skeleton> s = p.make_skeleton();
    for (std::size_t i = 0; i < p.clip_count(); ++i) {
        const compressed_clip c = p.clip(i);
        CHECK_FALSE(c.empty());
        if (s) {
            compressed_sampling_context ctx;
            local_pose pose;
            CHECK(sample_clip(c, *s, 7.0f, ctx, pose));
        }
    }
    for (std::size_t i = 0; i < p.mesh_count(); ++i) (void)p.mesh(i).to_mesh();
    return true;
}

} // namespace

TEST_CASE("package: crc32c is CRC-32C (the standard check values)") {
    CHECK(crc32c("123456789", 9) == 0xE3069283u);
    CHECK(crc32c("", 0) == 0u);
    const std::string a(1000, 'a');
    CHECK(crc32c(a.data(), 1000) == crc32c(a.data() + 3, 997, crc32c(a.data(), 3)));
}

TEST_CASE("package: every CRC-32C path this build compiles equals the tables, at every length, offset and start") {
    // Lengths around each path's block sizes (8-byte words, 64- and 256-byte folds, three streams of
    // 4 KB), at unaligned offsets, from random starting registers.
    std::mt19937 random(7);
    std::vector<unsigned char> bytes(3 * 4096 * 2 + 1000);
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(random());
    std::vector<std::size_t> lengths;
    for (std::size_t n = 0; n <= 1100; ++n) lengths.push_back(n);
    for (std::size_t n : {3 * 4096 - 1, 3 * 4096, 3 * 4096 + 1, 3 * 4096 + 255, 3 * 4096 + 320, 6 * 4096 + 77})
        lengths.push_back(n);
    for (std::size_t n : lengths) {
        const std::size_t offset = n % 13;
        const unsigned char* p = bytes.data() + offset;
        const std::uint32_t start = static_cast<std::uint32_t>(random());
        const std::uint32_t expected = impl::cc::crc32c_tables(p, n, start);
        CHECK(~crc32c(p, n, ~start) == expected);
#if KEYBLEND_CRC_SSE42
        CHECK(impl::cc::crc32c_streams(p, n, start) == expected);
#endif
#if KEYBLEND_CRC_FOLD512
        CHECK(impl::cc::crc32c_fold512(p, n, start) == expected);
#endif
    }
}

TEST_CASE("package: the skeleton, the clips and the meshes come back - clips sample as compressed alone, bit for bit") {
    const skeleton s = small_skeleton();
    const clip walk = small_clip(s, "walk", 0.0f), wave = small_clip(s, "wave", 1.0f);
    const io::mesh narrow = full_mesh(s, 5), wide = full_mesh(s, 300);
    std::vector<compression_report> reports;
    package_contents in;
    in.skeleton = &s;
    in.clips = {&walk, &wave};
    in.meshes = {&narrow, &wide};
    in.settings.precision = 1e-4f;
    in.settings.shell_distance = 0.05f;
    in.reports = &reports;
    const result<std::vector<unsigned char>> bytes = write_package(in);
    REQUIRE(bytes);
    REQUIRE(reports.size() == 2);
    CHECK(reports[0].stats.bound_met);
    const result<package_file> file = package_file::copy(bytes->data(), bytes->size());
    REQUIRE_MESSAGE(file, (file ? std::string() : file.error().message));
    const package& p = file->contents();
    CHECK(p.size() == bytes->size());
    REQUIRE(p.joint_count() == s.size());
    for (std::size_t j = 0; j < s.size(); ++j) {
        CHECK(p.joint_name(j) == s.name(j));
        CHECK(p.parents()[j] == s.parent(j));
        CHECK(bit_equal(p.bind_local()[j], s.bind_local()[j]));
    }
    const result<skeleton> rebuilt = p.make_skeleton();
    REQUIRE(rebuilt);
    CHECK(impl::skeleton_fingerprint(*rebuilt) == impl::skeleton_fingerprint(s));
    CHECK(rebuilt->bind_morph_weights() == s.bind_morph_weights());

    REQUIRE(p.clip_count() == 2);
    CHECK(p.find_clip("wave") == 1);
    CHECK(p.find_clip("run") == 2);
    const clip* sources[] = {&walk, &wave};
    for (std::size_t i = 0; i < 2; ++i) {
        const compressed_clip in_package = p.clip(i);
        CHECK(!in_package.owns_bytes());
        compressed_clip alone;
        compress_job job;
        job.input = sources[i];
        job.skeleton = &s;
        job.settings = in.settings;
        job.output = &alone;
        REQUIRE(job.run());
        REQUIRE(alone.size() == in_package.size());
        CHECK(std::memcmp(alone.data(), in_package.data(), alone.size()) == 0);
        CHECK(in_package.extras().events.size() == 1);
        compressed_sampling_context a, b;
        local_pose pa, pb;
        for (float t = 0.0f; t <= 30.0f; t += 0.7f) {
            REQUIRE(sample_clip(in_package, *rebuilt, t, a, pa));
            REQUIRE(sample_clip(alone, s, t, b, pb));
            for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(pa.get(j), pb.get(j)));
            for (std::size_t w = 0; w < pa.morph_weights().size(); ++w) CHECK(bit_equal(pa.morph_weights()[w], pb.morph_weights()[w]));
        }
    }

    REQUIRE(p.mesh_count() == 2);
    const io::mesh* meshes[] = {&narrow, &wide};
    for (std::size_t i = 0; i < 2; ++i) {
        const package_mesh m = p.mesh(i);
        const io::mesh& src = *meshes[i];
        CHECK(m.name == src.name);
        CHECK(m.joint == src.joint);
        CHECK(m.vertex_count == src.positions.size());
        CHECK(m.positions.stride == 12);
        CHECK(reinterpret_cast<std::uintptr_t>(m.positions.data) % 16 == 0);
        CHECK(bool(m.joints8.data) == (src.skin.bones.size() <= 256));
        CHECK(bool(m.joints16.data) == (src.skin.bones.size() > 256));
        const io::mesh back = m.to_mesh();
        CHECK(back.positions == src.positions);
        CHECK(back.normals == src.normals);
        CHECK(back.tangents == src.tangents);
        CHECK(back.texcoords == src.texcoords);
        CHECK(back.indices == src.indices);
        CHECK(back.triangle_materials == src.triangle_materials);
        REQUIRE(back.materials.size() == 2);
        CHECK(back.materials[0].texture_file == "skin.png");
        CHECK(back.materials[0].diffuse == src.materials[0].diffuse);
        CHECK(back.skin.bone_indices == src.skin.bone_indices);
        CHECK(back.skin.weights == src.skin.weights);
        REQUIRE(back.skin.bones.size() == src.skin.bones.size());
        CHECK(back.skin.bones.back().name == src.skin.bones.back().name);
        CHECK(bit_equal(back.skin.bones.back().offset, src.skin.bones.back().offset));
        REQUIRE(back.morph_targets.size() == 1);
        CHECK(back.morph_targets[0].name == "smile");
        CHECK(back.morph_targets[0].positions == src.morph_targets[0].positions);
        CHECK(back.morph_targets[0].tangents.empty());

        // Skinned straight from the package's views, as from the source's arrays.
        std::vector<glm::mat4> model(s.size()), palette_a(m.bone_count), palette_b(src.skin.bones.size());
        local_pose pose(s);
        local_to_model(s, pose, model);
        const std::vector<skin_bone> bones = m.skin_bones();
        REQUIRE(bones.size() == src.skin.bones.size());
        for (std::size_t b = 0; b < bones.size(); ++b) {
            CHECK(bones[b].name == src.skin.bones[b].name);
            CHECK(bones[b].joint == src.skin.bones[b].joint);
            CHECK(bit_equal(bones[b].offset, src.skin.bones[b].offset));
        }
        REQUIRE(palette_job{model, bones, palette_a}.run());
        REQUIRE(palette_job{model, src.skin.bones, palette_b}.run());
        std::vector<glm::vec3> out_a(src.positions.size()), out_b(src.positions.size());
        const auto skin_from_package = [&](auto joints) {
            skinning_job<std::remove_const_t<std::remove_pointer_t<decltype(joints.data)>>> job;
            job.influences = m.influences;
            job.joints = joints;
            job.weights = m.weights;
            job.in_positions = m.positions;
            job.out_positions = make_span(out_a);
            job.palette = palette_a;
            REQUIRE(job.validate());
            REQUIRE(job.run());
        };
        if (m.joints8.data) skin_from_package(m.joints8);
        else skin_from_package(m.joints16);
        skinning_job<std::uint16_t> ref;
        ref.influences = 3;
        ref.joints = make_span(src.skin.bone_indices, 3);
        ref.weights = make_span(src.skin.weights, 3);
        ref.in_positions = make_span(src.positions);
        ref.out_positions = make_span(out_b);
        ref.palette = palette_b;
        REQUIRE(ref.run());
        for (std::size_t v = 0; v < out_a.size(); ++v) CHECK(kbtest::max_abs_diff(out_a[v], out_b[v]) <= 1e-6f);
    }
}

TEST_CASE("package: make_skeleton builds what from_parents builds from the same joints, field by field") {
    // Two roots, scaled and rotated bind poses, morph weights on the first joint only or on every
    // joint: the package's skeleton must equal from_parents' in every array, lookup and schedule.
    for (int morph_case = 0; morph_case < 3; ++morph_case) {
        CAPTURE(morph_case);
        std::vector<joint_desc> joints;
        const auto add = [&](const std::string& name, joint_index parent, float angle, float scale) {
            joint_desc d;
            d.name = name;
            d.parent = parent;
            d.bind_local = glm::translate(glm::mat4(1.0f), glm::vec3(0.1f * angle, 1.0f, -0.5f)) *
                           glm::rotate(glm::mat4(1.0f), angle, glm::normalize(glm::vec3(1.0f, angle, 0.5f))) *
                           glm::scale(glm::mat4(1.0f), glm::vec3(scale));
            const std::size_t j = joints.size();
            if (morph_case == 2 || (morph_case == 1 && j == 0)) d.morph_weights = {0.25f * float(j), 1.0f};
            joints.push_back(d);
        };
        add("hips", no_parent, 0.3f, 1.0f);
        add("spine", 0, 0.7f, 1.0f);
        add("left_leg", 0, -1.2f, 2.0f);
        add("left_foot", 2, 2.9f, 1.0f);
        add("neck", 1, 0.1f, 0.5f);
        add("prop", no_parent, 1.9f, 1.0f);
        add("prop_tip", 5, -0.4f, 1.0f);
        const result<skeleton> s = skeleton::from_parents(joints);
        REQUIRE(s);
        const std::vector<unsigned char> bytes = make_package(*s, {}, {});
        const result<package_file> file = package_file::copy(bytes.data(), bytes.size());
        REQUIRE_MESSAGE(file, (file ? std::string() : file.error().message));
        const result<skeleton> r = file->contents().make_skeleton();
        REQUIRE(r);
        REQUIRE(r->size() == s->size());
        CHECK(r->names() == s->names());
        CHECK(r->parents() == s->parents());
        // s is in pre-order already: built from its own order, from_parents keeps it.
        std::vector<std::size_t> identity(s->size());
        std::iota(identity.begin(), identity.end(), std::size_t(0));
        CHECK(r->source_of_joint() == identity);
        CHECK(r->joint_of_source() == identity);
        CHECK(r->bind_morph_weights() == s->bind_morph_weights());
        for (std::size_t j = 0; j < s->size(); ++j) {
            CAPTURE(j);
            CHECK(bit_equal(r->bind_local()[j], s->bind_local()[j]));
            CHECK(kbtest::bit_equal_transform(r->bind_transforms()[j], s->bind_transforms()[j]));
            CHECK(bit_equal(r->bind_model()[j], s->bind_model()[j]));
            CHECK(bit_equal(r->inverse_bind_model()[j], s->inverse_bind_model()[j]));
            CHECK(r->subtree_end(j) == s->subtree_end(j));
            CHECK(r->morph_weight_count(j) == s->morph_weight_count(j));
            CHECK(r->morph_weight_offset(j) == s->morph_weight_offset(j));
            const result<std::size_t> found = r->find(s->name(j));
            REQUIRE(found);
            CHECK(*found == j);
        }
        CHECK_FALSE(r->find("missing"));
        const auto split_r = impl::model_schedule::full_range(*r, 0), split_s = impl::model_schedule::full_range(*s, 0);
        CHECK(split_r.first == split_s.first);
        CHECK(split_r.middle == split_s.middle);
        const auto steps_r = impl::model_schedule::full_range_steps(*r, 0), steps_s = impl::model_schedule::full_range_steps(*s, 0);
        REQUIRE(steps_r.second == steps_s.second);
        CHECK(std::equal(steps_r.first, steps_r.first + 4 * steps_r.second, steps_s.first));
    }
}

TEST_CASE("package: two joints of the same name are refused when the skeleton is made, naming the joint") {
    std::vector<joint_desc> joints(3);
    joints[0].name = "hip_a";
    joints[1].name = "hip_b";
    joints[1].parent = 0;
    joints[2].name = "knee";
    joints[2].parent = 1;
    const result<skeleton> s = skeleton::from_parents(joints);
    REQUIRE(s);
    std::vector<unsigned char> bytes = make_package(*s, {}, {});
    {
        const result<package_file> file = package_file::copy(bytes.data(), bytes.size());
        REQUIRE(file);
        // "hip_b" becomes "hip_a": the checks of view() pass (names are any bytes), the builder's not.
        const std::string_view b = file->contents().joint_name(1);
        REQUIRE(b == "hip_b");
        const std::size_t at = static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(b.data()) - file->contents().data());
        bytes[at + 4] = 'a';
        reseal(bytes);
    }
    const result<package_file> file = package_file::copy(bytes.data(), bytes.size());
    REQUIRE_MESSAGE(file, (file ? std::string() : file.error().message));
    const result<skeleton> r = file->contents().make_skeleton();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::duplicate);
    CHECK(r.error().index == 1);
    CHECK(r.error().message.find("'hip_a'") != std::string::npos);
}

TEST_CASE("package: truncated at every byte, rejected with the place named") {
    const skeleton s = small_skeleton();
    const clip c = small_clip(s, "walk", 0.0f);
    const io::mesh m = full_mesh(s, 5, 6);
    const std::vector<unsigned char> bytes = make_package(s, {&c}, {&m});
    CHECK(try_open(bytes));
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + std::ptrdiff_t(n));
        std::string message;
        CHECK_FALSE(try_open(cut, &message));
        // With the size field and checksum made to agree, the sections themselves are found short.
        if (n >= 64 && n % 16 == 0) {
            put<std::uint64_t>(cut, 8, n);
            reseal(cut);
            CHECK_FALSE(try_open(cut, &message));
            CHECK(message.find("byte") != std::string::npos);
        }
    }
}

TEST_CASE("package: a wrong checksum, a wrong version, misaligned data") {
    const skeleton s = small_skeleton();
    const clip c = small_clip(s, "walk", 0.0f);
    std::vector<unsigned char> bytes = make_package(s, {&c}, {});
    std::string message;
    SUBCASE("checksum") {
        bytes[bytes.size() / 2] ^= 1u;
        const result<package_file> f = package_file::copy(bytes.data(), bytes.size());
        REQUIRE_FALSE(f);
        CHECK(f.error().code == errc::io_error);
        CHECK(f.error().message.find("checksum") != std::string::npos);
    }
    SUBCASE("version") {
        put<std::uint32_t>(bytes, 4, 2);
        reseal(bytes);
        const result<package_file> f = package_file::copy(bytes.data(), bytes.size());
        REQUIRE_FALSE(f);
        CHECK(f.error().code == errc::unsupported);
        put<std::uint32_t>(bytes, 4, 0);
        reseal(bytes);
        CHECK_FALSE(try_open(bytes, &message));
        CHECK(message.find("version") != std::string::npos);
    }
    SUBCASE("misaligned bytes and misaligned sections") {
        std::vector<unsigned char> shifted(bytes.size() + 16);
        std::size_t at = 0;
        while ((reinterpret_cast<std::uintptr_t>(shifted.data() + at) % 16) != 4) ++at;
        std::memcpy(shifted.data() + at, bytes.data(), bytes.size());
        const result<package> p = package::view(shifted.data() + at, bytes.size());
        REQUIRE_FALSE(p);
        CHECK(p.error().message.find("aligned") != std::string::npos);
        const std::uint64_t clip_at = get<std::uint64_t>(bytes, 64 + 32 + 8);
        put<std::uint64_t>(bytes, 64 + 32 + 8, clip_at + 4);
        reseal(bytes);
        CHECK_FALSE(try_open(bytes, &message));
        CHECK(message.find("section 1") != std::string::npos);
        CHECK(message.find("aligned") != std::string::npos);
    }
    SUBCASE("overlapping sections") {
        const std::uint64_t skeleton_at = get<std::uint64_t>(bytes, 64 + 8);
        put<std::uint64_t>(bytes, 64 + 32 + 8, skeleton_at);
        reseal(bytes);
        CHECK_FALSE(try_open(bytes, &message));
        CHECK(message.find("overlaps") != std::string::npos);
    }
    SUBCASE("not a package") {
        bytes[0] = 'x';
        CHECK_FALSE(try_open(bytes, &message));
        CHECK(message.find("magic") != std::string::npos);
    }
}

TEST_CASE("package: package_file::read - a file, a missing file, a folder, an empty or cut file") {
    const skeleton s = small_skeleton();
    const clip c = small_clip(s, "walk", 0.0f);
    const std::vector<unsigned char> bytes = make_package(s, {&c}, {});
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "keyblend_package_read";
    std::filesystem::create_directories(dir / "folder.kbp");
    const auto write = [&](const char* name, std::size_t size) {
        const std::string path = (dir / name).string();
        std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(size));
        return path;
    };
    const result<package_file> whole = package_file::read(write("walk.kbp", bytes.size()));
    REQUIRE_MESSAGE(whole, (whole ? "" : whole.error().message));
    CHECK(whole->contents().clip_count() == 1);
    CHECK(whole->contents().joint_count() == s.size());
    // The path starts every message; the file's own failure follows it.
    const std::string cut = write("cut.kbp", bytes.size() / 2), empty = write("empty.kbp", 0);
    for (const std::string& path : {cut, empty}) {
        CAPTURE(path);
        const result<package_file> f = package_file::read(path);
        REQUIRE_FALSE(f);
        CHECK(f.error().message.rfind(path + ": ", 0) == 0);
    }
    // Neither opens as a file to read whole: an error naming the path, and nothing allocated for
    // the endless size a folder reports on some systems.
    for (const std::filesystem::path& p : {dir / "missing.kbp", dir / "folder.kbp"}) {
        CAPTURE(p.string());
        const result<package_file> f = package_file::read(p.string());
        REQUIRE_FALSE(f);
        CHECK(f.error().code == errc::io_error);
        CHECK(f.error().message.rfind(p.string() + ": cannot ", 0) == 0);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("package: every count, offset and size field huge, just out of range and off by one, rejected or harmless") {
    const skeleton s = small_skeleton();
    const clip c = small_clip(s, "walk", 0.0f);
    const io::mesh m = full_mesh(s, 5, 6);
    const std::vector<unsigned char> bytes = make_package(s, {&c}, {&m});
    // Every 4-byte field of the header, the section table, the skeleton's and the mesh's headers.
    std::vector<std::size_t> fields;
    for (std::size_t at = 0; at < 64 + 3 * 32; at += 4) fields.push_back(at);
    const std::size_t skeleton_at = std::size_t(get<std::uint64_t>(bytes, 64 + 8));
    const std::size_t mesh_at = std::size_t(get<std::uint64_t>(bytes, 64 + 64 + 8));
    for (std::size_t at = 0; at < 64; at += 4) fields.push_back(skeleton_at + at);
    for (std::size_t at = 0; at < 128; at += 4) fields.push_back(mesh_at + at);
    std::size_t rejected = 0, tried = 0;
    for (std::size_t at : fields) {
        const std::uint32_t v = get<std::uint32_t>(bytes, at);
        const std::size_t section_end = bytes.size();
        for (std::uint32_t changed : {0xffffffffu, 0x80000000u, 0x7fffffffu, v + 1, v - 1, v + 16, v + 4, 0u,
                                      std::uint32_t(section_end), std::uint32_t(section_end - skeleton_at)}) {
            if (changed == v || at == 16) continue; // (16: the checksum itself, resealed)
            std::vector<unsigned char> b = bytes;
            put<std::uint32_t>(b, at, changed);
            reseal(b);
            CAPTURE(at);
            CAPTURE(changed);
            ++tried;
            if (!try_open(b)) ++rejected;
        }
    }
    // (A few changes leave a valid package - a mesh's joint changed to another joint, a section's
    // size shrunk into its padding, fewer influences read from inside their array - and are
    // sampled above within the bytes. Everything else is refused.)
    CHECK(rejected > tried * 9 / 10);
}

TEST_CASE("package: parents out of order and deep hierarchies") {
    SUBCASE("a deep chain loads without recursion, in time linear in its joints") {
        std::vector<joint_desc> in(20000);
        for (std::size_t j = 0; j < in.size(); ++j) {
            in[j].name = "j" + std::to_string(j);
            in[j].parent = static_cast<joint_index>(j) - 1;
            in[j].bind_local = to_matrix(transform{glm::vec3(0, 0.001f, 0), glm::identity<glm::quat>(), glm::vec3(1)});
        }
        const skeleton s = skeleton::from_parents(in).value();
        const std::vector<unsigned char> bytes = make_package(s, {}, {});
        const result<package_file> f = package_file::copy(bytes.data(), bytes.size());
        REQUIRE(f);
        CHECK(f->contents().joint_count() == 20000);
        const result<skeleton> back = f->contents().make_skeleton();
        REQUIRE(back);
        CHECK(back->parent(19999) == 19998);
    }
    SUBCASE("a parent not on the path to the joint before (not depth-first)") {
        const skeleton s = small_skeleton(false); // root, spine(0), head(1), arm(1), hand(3)
        std::vector<unsigned char> bytes = make_package(s, {}, {});
        const std::size_t skeleton_at = std::size_t(get<std::uint64_t>(bytes, 64 + 8));
        const std::size_t parents = skeleton_at + get<std::uint32_t>(bytes, skeleton_at + 8);
        put<std::int32_t>(bytes, parents + 4 * 4, 2); // hand under head, after arm: not pre-order
        reseal(bytes);
        std::string message;
        CHECK_FALSE(try_open(bytes, &message));
        CHECK(message.find("joint 4") != std::string::npos);
        put<std::int32_t>(bytes, parents + 4 * 4, 4); // itself
        reseal(bytes);
        CHECK_FALSE(try_open(bytes, &message));
        CHECK(message.find("not an earlier joint") != std::string::npos);
    }
}

TEST_CASE("package: write_package checks its input") {
    const skeleton s = small_skeleton();
    package_contents in;
    CHECK_FALSE(write_package(in));
    in.skeleton = &s;
    io::mesh bad = full_mesh(s, 5, 6);
    bad.indices.push_back(99);
    bad.indices.push_back(0);
    bad.indices.push_back(1);
    bad.triangle_materials.push_back(0);
    in.meshes = {&bad};
    const result<std::vector<unsigned char>> r = write_package(in);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("mesh 0 'body'") != std::string::npos);
    const skeleton other = small_skeleton(false);
    const clip c = small_clip(other, "x", 0.0f);
    compressed_clip cc;
    compress_job job;
    job.input = &c;
    job.skeleton = &other;
    job.output = &cc;
    REQUIRE(job.run());
    in.meshes.clear();
    in.compressed_clips = {&cc};
    const result<std::vector<unsigned char>> r2 = write_package(in);
    REQUIRE_FALSE(r2);
    CHECK(r2.error().code == errc::size_mismatch);
}

#ifdef KEYBLEND_TEST_IO
TEST_CASE("package: the shared .X files packed, opened, sampled within the bound of their clips") {
    for (const char* name : {"assimp/Testwuson.X", "assimp/BCN_Epileptic.X", "directx-sdk-legacy-samples/tiny.x"}) {
        const std::optional<std::string> path = kbtest::data_file(name);
        if (!path) return;
        const result<io::xfile> x = io::load_xfile(*path);
        REQUIRE(x);
        package_contents in;
        in.skeleton = &x->skeleton;
        for (const io::xfile_animation_set& set : x->animation_sets) in.clips.push_back(&set.clip);
        for (const io::xfile_mesh& m : x->meshes) in.meshes.push_back(&m);
        const result<std::vector<unsigned char>> bytes = write_package(in);
        REQUIRE(bytes);
        const result<package_file> f = package_file::copy(bytes->data(), bytes->size());
        REQUIRE(f);
        const package& p = f->contents();
        const result<skeleton> s = p.make_skeleton();
        REQUIRE(s);
        REQUIRE(p.clip_count() == x->animation_sets.size());
        for (std::size_t i = 0; i < p.clip_count(); ++i) {
            const compressed_clip c = p.clip(i);
            CHECK(c.name() == x->animation_sets[i].clip.name);
            const result<error_measurement> e = measure_error(x->animation_sets[i].clip, c, *s, c.stats().shell_distance);
            REQUIRE(e);
            CHECK(e->max_error <= double(c.stats().precision) * 1.001);
        }
        REQUIRE(p.mesh_count() == x->meshes.size());
        for (std::size_t i = 0; i < p.mesh_count(); ++i) {
            const io::mesh back = p.mesh(i).to_mesh();
            CHECK(back.positions == x->meshes[i].positions);
            CHECK(back.skin.weights == x->meshes[i].skin.weights);
            CHECK(back.skin.bone_indices == x->meshes[i].skin.bone_indices);
        }
    }
}
#endif
