#include <keyblend/io/xfile.hpp>

#include "helpers.hpp"
#include "job_helpers.hpp"

#include <zlib.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::contains;
using kbtest::sample_local_matrices;
using io::parse_mode;
using kbtest::max_abs_diff;

namespace {

// ---------------------------------------------------------------------------------------------
// A hand-written file with every construct the loader reads, and what it must give.
// ---------------------------------------------------------------------------------------------

/// tests/data/sample.x: hand-written for these tests (and a fuzzing seed), with every construct
/// the loader reads, once.
const std::string& sample_text() {
    static const std::string text = [] {
        std::ifstream in(std::string(KEYBLEND_TESTS_DIR) + "/data/sample.x", std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }();
    REQUIRE_MESSAGE(text.size() > 16, "tests/data/sample.x is missing");
    return text;
}

/// Splits .X text into tokens the way the format does (for the converter below).
std::vector<std::string> text_tokens(const std::string& text) {
    std::vector<std::string> out;
    std::size_t i = 16;
    while (i < text.size()) {
        const char c = text[i];
        if (std::isspace(static_cast<unsigned char>(c)) || c == ';' || c == ',') {
            ++i;
        } else if (c == '#' || (c == '/' && i + 1 < text.size() && text[i + 1] == '/')) {
            i = text.find('\n', i);
            if (i == std::string::npos) i = text.size();
        } else if (c == '{' || c == '}') {
            out.emplace_back(1, c);
            ++i;
        } else if (c == '"' || c == '<') {
            const std::size_t e = text.find(c == '"' ? '"' : '>', i + 1);
            out.push_back(text.substr(i, e + 1 - i));
            i = e + 1;
        } else {
            std::size_t e = i;
            while (e < text.size() && !std::isspace(static_cast<unsigned char>(text[e])) &&
                   std::string(";,{}\"").find(text[e]) == std::string::npos)
                ++e;
            out.push_back(text.substr(i, e - i));
            i = e;
        }
    }
    return out;
}

void put16(std::string& s, unsigned v) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& s, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

/// The same file in the binary encoding, written the way exporters do: names and strings as
/// NAME / STRING (+ a separator token), braces, GUIDs, and runs of numbers merged into one
/// INTEGER_LIST or FLOAT_LIST per run of the same kind (a number with '.' or '#' is a float), of
/// at most `max_run` values (a longer run is split into several lists).
std::string to_binary(const std::string& text, unsigned float_bytes,
                      std::size_t max_run = static_cast<std::size_t>(-1)) {
    std::string out = "xof 0303bin ";
    out += float_bytes == 8 ? "0064" : "0032";
    const std::vector<std::string> tokens = text_tokens(text);
    std::vector<std::string> run;
    bool run_float = false;
    const auto flush = [&] {
        if (run.empty()) return;
        put16(out, run_float ? 7 : 6);
        put32(out, static_cast<std::uint32_t>(run.size()));
        for (const std::string& n : run) {
            if (!run_float) {
                put32(out, static_cast<std::uint32_t>(std::stoul(n)));
                continue;
            }
            const double d =
                n.find('#') != std::string::npos ? std::nan("") : std::strtod(n.c_str(), nullptr);
            if (float_bytes == 8) {
                char b[8];
                std::memcpy(b, &d, 8);
                out.append(b, 8);
            } else {
                const float f = static_cast<float>(d);
                char b[4];
                std::memcpy(b, &f, 4);
                out.append(b, 4);
            }
        }
        run.clear();
    };
    for (const std::string& t : tokens) {
        const char c = t[0];
        const bool number = std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
        if (number) {
            const bool is_float = t.find_first_of(".#") != std::string::npos;
            if (!run.empty() && (is_float != run_float || run.size() == max_run)) flush();
            run_float = is_float;
            run.push_back(t);
            continue;
        }
        flush();
        if (t == "{") {
            put16(out, 10);
        } else if (t == "}") {
            put16(out, 11);
        } else if (t == "[...]") {
            for (unsigned id : {14u, 18u, 18u, 18u, 15u}) put16(out, id);
        } else if (t == "template") {
            put16(out, 31);
        } else if (c == '<') { // a Windows GUID: uint32, uint16, uint16 little-endian, 8 bytes
            std::string hex;
            for (char h : t)
                if (std::isxdigit(static_cast<unsigned char>(h))) hex += h;
            REQUIRE(hex.size() == 32);
            const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
            char bytes[16];
            for (std::size_t i = 0; i < 16; ++i)
                bytes[order[i]] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
            put16(out, 5);
            out.append(bytes, 16);
        } else if (c == '"') {
            put16(out, 2);
            put32(out, static_cast<std::uint32_t>(t.size() - 2));
            out += t.substr(1, t.size() - 2);
            put16(out, 20); // the STRING's terminator: a separator token
        } else {
            put16(out, 1);
            put32(out, static_cast<std::uint32_t>(t.size()));
            out += t;
        }
    }
    flush();
    return out;
}

/// One MSZIP block: its 6-byte header and `chunk` deflated with `dictionary` (the previous
/// block's data) as preset dictionary.
std::string mszip_block(const std::string& chunk, const std::string& dictionary) {
    z_stream z{};
    REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    if (!dictionary.empty())
        deflateSetDictionary(&z, reinterpret_cast<const Bytef*>(dictionary.data()),
                             static_cast<uInt>(dictionary.size()));
    std::string packed(deflateBound(&z, static_cast<uLong>(chunk.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(chunk.data()));
    z.avail_in = static_cast<uInt>(chunk.size());
    z.next_out = reinterpret_cast<Bytef*>(packed.data());
    z.avail_out = static_cast<uInt>(packed.size());
    REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
    packed.resize(z.total_out);
    deflateEnd(&z);
    std::string out;
    put16(out, static_cast<unsigned>(chunk.size()));
    put16(out, static_cast<unsigned>(packed.size() + 2));
    return out + "CK" + packed;
}

/// The compressed header for an uncompressed one: tzip for txt, bzip for bin, then the size.
std::string mszip_header(const std::string& plain_header, std::size_t total) {
    std::string out = plain_header.substr(0, 16);
    out.replace(8, 4, plain_header.compare(8, 4, "txt ") == 0 ? "tzip" : "bzip");
    put32(out, static_cast<std::uint32_t>(total));
    return out;
}

/// MSZIP-compresses a whole .X file (header included) into tzip / bzip, in blocks of `block`
/// bytes, each deflated with the previous block as preset dictionary.
std::string to_mszip(const std::string& plain, std::size_t block = 32768) {
    std::string out = mszip_header(plain, plain.size());
    std::string previous;
    for (std::size_t p = 16; p < plain.size(); p += block) {
        const std::string chunk = plain.substr(p, block);
        out += mszip_block(chunk, previous);
        previous = chunk;
    }
    return out;
}

/// A tzip file whose data is `first` then `count` copies of `block` (each at most 32768 bytes),
/// announcing `announced` bytes (0: the true size). Deflated three times, however large it
/// inflates: from the third block on, every block is the same bytes.
std::string mszip_repeating(const std::string& first, const std::string& block, std::size_t count,
                            std::size_t announced = 0) {
    const std::size_t total = 16 + first.size() + count * block.size();
    std::string out = mszip_header("xof 0303txt 0032", announced ? announced : total);
    out += mszip_block(first, "");
    if (count == 0) return out;
    out += mszip_block(block, first);
    if (count == 1) return out;
    const std::string same = mszip_block(block, block);
    for (std::size_t i = 1; i < count; ++i) out += same;
    return out;
}

result<io::xfile> load(const std::string& bytes, parse_mode mode = parse_mode::strict,
                       const char* name = "sample.x") {
    return io::load_xfile_memory(bytes.data(), bytes.size(), {mode}, name);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// The same floats, bit for bit (NaN equal to NaN), member by member (whatever GLM's layout).
bool same_bits(float a, float b) { return kbtest::bit_equal(a, b); }
bool same_bits(const glm::vec2& a, const glm::vec2& b) {
    return same_bits(a.x, b.x) && same_bits(a.y, b.y);
}
bool same_bits(const glm::vec3& a, const glm::vec3& b) {
    return same_bits(a.x, b.x) && same_bits(a.y, b.y) && same_bits(a.z, b.z);
}
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!same_bits(a[i], b[i])) return false;
    return true;
}

/// Bit-for-bit the same content (NaN equal to NaN), apart from format and float size.
void check_same(const io::xfile& a, const io::xfile& b) {
    REQUIRE(a.skeleton.size() == b.skeleton.size());
    CHECK(a.skeleton.names() == b.skeleton.names());
    CHECK(a.skeleton.parents() == b.skeleton.parents());
    for (std::size_t j = 0; j < a.skeleton.size(); ++j)
        CHECK(kbtest::bit_equal(a.skeleton.bind_local()[j], b.skeleton.bind_local()[j]));
    REQUIRE(a.meshes.size() == b.meshes.size());
    for (std::size_t i = 0; i < a.meshes.size(); ++i) {
        const io::xfile_mesh& m = a.meshes[i];
        const io::xfile_mesh& n = b.meshes[i];
        CHECK(m.name == n.name);
        CHECK(m.joint == n.joint);
        CHECK(m.face_count == n.face_count);
        CHECK(m.indices == n.indices);
        CHECK(m.triangle_faces == n.triangle_faces);
        CHECK(m.normal_indices == n.normal_indices);
        CHECK(m.triangle_materials == n.triangle_materials);
        CHECK(m.materials.size() == n.materials.size());
        CHECK(m.skin.bone_indices == n.skin.bone_indices);
        CHECK(m.skin.influences_per_vertex == n.skin.influences_per_vertex);
        CHECK(m.skin_header.present == n.skin_header.present);
        CHECK(m.skin_header.max_weights_per_vertex == n.skin_header.max_weights_per_vertex);
        CHECK(m.skin_header.max_weights_per_face == n.skin_header.max_weights_per_face);
        CHECK(m.skin_header.bone_count == n.skin_header.bone_count);
        REQUIRE(m.positions.size() == n.positions.size());
        REQUIRE(m.normals.size() == n.normals.size());
        REQUIRE(m.texcoords.size() == n.texcoords.size());
        REQUIRE(m.skin.weights.size() == n.skin.weights.size());
        REQUIRE(m.skin.bones.size() == n.skin.bones.size());
        CHECK(same_bits(m.positions, n.positions));
        CHECK(same_bits(m.normals, n.normals));
        CHECK(same_bits(m.texcoords, n.texcoords));
        CHECK(same_bits(m.skin.weights, n.skin.weights));
        for (std::size_t k = 0; k < m.skin.bones.size(); ++k) {
            CHECK(m.skin.bones[k].name == n.skin.bones[k].name);
            CHECK(m.skin.bones[k].joint == n.skin.bones[k].joint);
            CHECK(kbtest::bit_equal(m.skin.bones[k].offset, n.skin.bones[k].offset));
        }
        for (std::size_t k = 0; k < m.materials.size(); ++k) {
            CHECK(m.materials[k].name == n.materials[k].name);
            CHECK(m.materials[k].texture_file == n.materials[k].texture_file);
            CHECK(kbtest::bit_equal(m.materials[k].diffuse, n.materials[k].diffuse));
        }
    }
    REQUIRE(a.animation_sets.size() == b.animation_sets.size());
    for (std::size_t i = 0; i < a.animation_sets.size(); ++i) {
        const clip& c = a.animation_sets[i].clip;
        const clip& d = b.animation_sets[i].clip;
        CHECK(c.name == d.name);
        CHECK(c.duration == d.duration);
        CHECK(c.ticks_per_second == d.ticks_per_second);
        CHECK(c.ticks_per_second_is_default == d.ticks_per_second_is_default);
        REQUIRE(c.channels.size() == d.channels.size());
        for (std::size_t k = 0; k < c.channels.size(); ++k) {
            const channel& x = c.channels[k];
            const channel& y = d.channels[k];
            CHECK(x.joint == y.joint);
            CHECK(x.rotation.times() == y.rotation.times());
            CHECK(x.translation.times() == y.translation.times());
            CHECK(x.scale.times() == y.scale.times());
            CHECK(x.matrix.times() == y.matrix.times());
            for (std::size_t q = 0; q < x.rotation.size() && q < y.rotation.size(); ++q)
                CHECK(kbtest::bit_equal(x.rotation.value(q), y.rotation.value(q)));
            for (std::size_t q = 0; q < x.matrix.size() && q < y.matrix.size(); ++q)
                CHECK(kbtest::bit_equal(x.matrix.value(q), y.matrix.value(q)));
        }
    }
}

glm::mat4 translation(float x, float y, float z) {
    glm::mat4 m(1.0f);
    m[3] = glm::vec4(x, y, z, 1.0f);
    return m;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The hand-written file
// ---------------------------------------------------------------------------------------------

TEST_CASE("the hand-written file loads with every value in place") {
    const result<io::xfile> r = load(sample_text());
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    const io::xfile& x = *r;
    CHECK(x.format == io::xfile_format::text);
    CHECK(x.float_bits == 32);
    CHECK(x.version == 303);
    CHECK(x.warnings.empty());
    // The same in the default (lenient) mode: nothing to repair.
    const result<io::xfile> lenient = io::load_xfile_memory(sample_text().data(), sample_text().size());
    REQUIRE(lenient);
    CHECK(lenient->warnings.empty());

    SUBCASE("contents: the data objects as written") {
        const io::xfile_contents& c = x.contents;
        CHECK(c.frames == 4);
        CHECK(c.meshes == 1);
        CHECK(c.materials == 2); // the top-level Shared and the inline Own
        CHECK(c.skin_weights == 2);
        CHECK(c.animation_sets == 2);
        CHECK(c.animations == 3);
        CHECK(c.animation_keys == 5);
        CHECK(c.keys == 8);
    }

    SUBCASE("frames become joints in file order; the unnamed one gets a generated name") {
        const skeleton& s = x.skeleton;
        REQUIRE(s.size() == 4);
        CHECK(s.names() == std::vector<std::string>{"Root", "unnamed_frame_1", "Arm", "Leg"});
        CHECK(s.parents() == std::vector<joint_index>{-1, 0, 0, 0});
        CHECK(s.bind_local()[0] == translation(1, 2, 3));
        // Loaded as written (make_mat4): the first four floats are the first column.
        CHECK(s.bind_local()[1][0] == glm::vec4(0, 1, 0, 0));
        CHECK(s.bind_local()[1][1] == glm::vec4(-1, 0, 0, 0));
        CHECK(s.bind_local()[2][3] == glm::vec4(0, 0, 1, 1));
        CHECK(s.bind_local()[3] == glm::mat4(1.0f)); // no FrameTransformMatrix
        for (std::size_t j = 0; j < s.size(); ++j) CHECK(s.joint_of_source()[j] == j);
    }

    SUBCASE("the mesh: polygons fanned into triangles, normals, texture coordinates") {
        REQUIRE(x.meshes.size() == 1);
        const io::xfile_mesh& m = x.meshes[0];
        CHECK(m.name == "Body");
        CHECK(m.joint == 2);
        REQUIRE(m.positions.size() == 5);
        CHECK(m.positions[4] == glm::vec3(0.5f, 2.0f, 0.0f));
        CHECK(m.face_count == 2);
        CHECK(m.indices == std::vector<std::uint32_t>{0, 1, 2, 0, 2, 3, 3, 2, 4});
        CHECK(m.triangle_faces == std::vector<std::uint32_t>{0, 0, 1});
        REQUIRE(m.normal_values.size() == 2);
        CHECK(m.normal_values[1] == glm::vec3(0, 0, -1));
        CHECK(m.normal_indices == std::vector<std::uint32_t>{0, 0, 0, 0, 0, 0, 0, 0, 1});
        REQUIRE(m.normals.size() == 5);
        CHECK(m.normals_per_vertex_exact);
        CHECK(m.normals[0] == glm::vec3(0, 0, 1));
        CHECK(m.normals[4] == glm::vec3(0, 0, -1));
        REQUIRE(m.texcoords.size() == 5);
        CHECK(m.texcoords[4] == glm::vec2(0.5f, 2.0f));
    }

    SUBCASE("materials: a reference to a top-level material and an inline one, per triangle") {
        const io::xfile_mesh& m = x.meshes.at(0);
        REQUIRE(m.materials.size() == 2);
        CHECK(m.materials[0].name == "Shared");
        CHECK(m.materials[0].texture_file == "shared.png");
        CHECK(m.materials[0].diffuse == glm::vec4(0.5f, 0.25f, 1.0f, 1.0f));
        CHECK(m.materials[0].power == 8.0f);
        CHECK(m.materials[0].specular == glm::vec3(0.1f, 0.2f, 0.3f));
        CHECK(m.materials[1].name == "Own");
        CHECK(m.materials[1].texture_file.empty());
        CHECK(m.triangle_materials == std::vector<std::uint32_t>{1, 1, 0});
    }

    SUBCASE("the skin: fixed-width influences sorted by weight, header kept") {
        const io::mesh_skin& k = x.meshes.at(0).skin;
        CHECK(x.meshes.at(0).skin_header.present);
        CHECK(x.meshes.at(0).skin_header.max_weights_per_vertex == 2);
        CHECK(x.meshes.at(0).skin_header.max_weights_per_face == 4);
        CHECK(x.meshes.at(0).skin_header.bone_count == 2);
        REQUIRE(k.bones.size() == 2);
        CHECK(k.bones[0].name == "Root");
        CHECK(k.bones[0].joint == 0);
        CHECK(k.bones[0].offset == translation(-1, -2, -3));
        CHECK(k.bones[1].joint == 2);
        REQUIRE(k.influences_per_vertex == 2);
        // vertex 0: Root 1; 1: Arm .75, Root .25; 2, 3: Arm 1; 4: Root .5, Arm .5 (a tie keeps
        // SkinWeights order).
        CHECK(k.bone_indices == std::vector<std::uint16_t>{0, 0, 1, 0, 1, 0, 1, 0, 0, 1});
        CHECK(k.weights ==
              std::vector<float>{1.0f, 0.0f, 0.75f, 0.25f, 1.0f, 0.0f, 1.0f, 0.0f, 0.5f, 0.5f});
        // The palette contract: model * offset is the identity in the bind pose for bone 0.
        CHECK(x.skeleton.bind_model()[k.bones[0].joint] * k.bones[0].offset == glm::mat4(1.0f));
    }

    SUBCASE("sets: tracks per Animation, rotations conjugated, ticks per second in force") {
        REQUIRE(x.animation_sets.size() == 2);
        const io::xfile_animation_set& walk = x.animation_sets[0];
        const clip& c = walk.clip;
        CHECK(c.name == "Walk");
        CHECK(c.ticks_per_second == 30.0f);
        CHECK_FALSE(c.ticks_per_second_is_default);
        CHECK(c.duration == 20.0f);
        REQUIRE(c.channels.size() == 3);
        CHECK(walk.animation_names == std::vector<std::string>{"", "Named", ""});
        CHECK(c.channels[0].joint == 0);
        CHECK(c.channels[1].joint == 2);
        CHECK(c.channels[2].joint == 3);
        const channel& root = c.channels[0];
        REQUIRE(root.rotation.size() == 2);
        CHECK(root.rotation.times() == std::vector<float>{0.0f, 10.0f});
        // Stored w, x, y, z = (0.7071068, 0, 0, 0.7071068): GLM's quaternion is the conjugate.
        CHECK(max_abs_diff(root.rotation.value(0),
                           make_quat(0.7071068f, 0.0f, 0.0f, -0.7071068f)) == 0.0f);
        CHECK(root.translation.value(1) == glm::vec3(2, 2, 3));
        CHECK(root.scale.times() == std::vector<float>{5.0f});
        CHECK(root.scale.value(0) == glm::vec3(1, 1, 2));
        REQUIRE(walk.options.size() == 3);
        CHECK(walk.options[0].present);
        CHECK(walk.options[0].open_closed == 0);
        CHECK(walk.options[0].position_quality == 1);
        CHECK_FALSE(walk.options[1].present);
        // Key types 4 and 3 are both matrix keys, loaded as written.
        REQUIRE(c.channels[1].matrix.size() == 2);
        CHECK(c.channels[1].matrix.value(1)[3] == glm::vec4(5, 0, 0, 1));
        CHECK(c.channels[2].matrix.value(0) == translation(0, 0, 4));
        const io::key_counts k = io::count_keys(c);
        CHECK(k.rotation == 2);
        CHECK(k.position == 2);
        CHECK(k.scale == 1);
        CHECK(k.matrix == 3);
        CHECK(validate_clip(c, x.skeleton));

        const clip& empty = x.animation_sets[1].clip;
        CHECK(empty.name.empty());
        CHECK(empty.channels.empty());
        CHECK(empty.duration == 0.0f);
        CHECK(empty.ticks_per_second == 60.0f); // the AnimTicksPerSecond before it
    }

    SUBCASE("a rotation key turns the way the frame matrices of the same file do") {
        // Exporters store the conjugate of the frame's rotation (docs/xfile.md): the key
        // (w, x, y, z) = (cos 45, 0, 0, sin 45) belongs to a frame matrix that turns x into -y, and
        // so does the loaded quaternion.
        const glm::quat q = x.animation_sets[0].clip.channels[0].rotation.value(0);
        const glm::mat3 turn = glm::mat3_cast(q);
        CHECK(max_abs_diff(glm::vec3(turn[0]), glm::vec3(0, -1, 0)) < 1e-6f);
    }
}

TEST_CASE("the same file in binary, 64-bit binary, tzip and bzip gives the same result") {
    const result<io::xfile> text = load(sample_text());
    REQUIRE(text);
    const std::string bin32 = to_binary(sample_text(), 4);
    const std::string bin64 = to_binary(sample_text(), 8);
    struct variant {
        const char* name;
        std::string bytes;
        io::xfile_format format;
        unsigned bits;
    };
    const variant variants[] = {
        {"bin 0032", bin32, io::xfile_format::binary, 32},
        {"bin 0064", bin64, io::xfile_format::binary, 64},
        {"tzip", to_mszip(sample_text()), io::xfile_format::compressed_text, 32},
        {"tzip, 100-byte blocks", to_mszip(sample_text(), 100), io::xfile_format::compressed_text,
         32},
        {"bzip", to_mszip(bin32), io::xfile_format::compressed_binary, 32},
        {"bzip 0064, 64-byte blocks", to_mszip(bin64, 64), io::xfile_format::compressed_binary, 64},
    };
    for (const variant& v : variants) {
        CAPTURE(v.name);
        const result<io::xfile> r = load(v.bytes);
        REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
        CHECK(r->format == v.format);
        CHECK(r->float_bits == v.bits);
        CHECK(r->warnings.empty());
        check_same(*text, *r);
    }
}

TEST_CASE("binary number runs split into lists anywhere (mid-face, mid-vector) load the same") {
    const result<io::xfile> text = load(sample_text());
    REQUIRE(text);
    for (std::size_t max_run : {1u, 2u, 3u, 4u, 5u, 7u, 11u}) {
        CAPTURE(max_run);
        const result<io::xfile> r = load(to_binary(sample_text(), 4, max_run));
        REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
        check_same(*text, *r);
    }
}

TEST_CASE("binary faces: each problem is reported as in text, at its byte offset") {
    // Binary face lists are read in bulk; a face that is not valid is left to the value-by-value
    // reader, which reports it. Text and binary must agree on the code, the index and the words.
    struct bad {
        const char* what;
        std::string body;
        errc code;
        std::string message_part;
        std::size_t index;
    };
    const std::string v3 = "Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; ";
    const bad cases[] = {
        {"the second face's last index out of range", v3 + "2; 3;0,1,2;, 3;0,1,9;; }",
         errc::parse_error, "Mesh: face 1, corner 2: vertex index 9 is out of range (nVertices 3)", 9},
        {"a face with two corners after a good one", v3 + "2; 3;0,1,2;, 2;0,1;; MeshTextureCoords { 3; 0.0;0.0;, 1.0;0.0;, 0.0;1.0;; } }",
         errc::parse_error,
         "face 1 has 2 corners; a face needs 3 or more", 1},
        {"a face count larger than its faces", v3 + "3; 3;0,1,2;, 3;0,1,2;; }", errc::parse_error,
         "expected nFaceVertexIndices (an integer), found '}'", error::no_index},
        {"a normal index out of range",
         v3 + "1; 3;0,1,2;; MeshNormals { 1; 0.0;0.0;1.0;; 1; 3;0,0,4;; } }", errc::parse_error,
         "face 0, corner 2: normal index 4 is out of range (nNormals 1)", 4},
        {"a normal face with other corners than its face",
         v3 + "2; 3;0,1,2;, 3;2,1,0;; MeshNormals { 1; 0.0;0.0;1.0;; 2; 3;0,0,0;, 4;0,0,0,0;; } }",
         errc::parse_error, "face normal 1 has 4 corners, the face has 3", 1},
    };
    for (const bad& b : cases) {
        CAPTURE(b.what);
        const std::string text = "xof 0303txt 0032\n" + b.body;
        const result<io::xfile> t = load(text);
        REQUIRE_FALSE(t);
        CAPTURE(t.error().message);
        CHECK(contains(t.error().message, b.message_part));
        CHECK(t.error().code == b.code);
        CHECK(t.error().index == b.index);
        for (std::size_t max_run : {static_cast<std::size_t>(-1), std::size_t{3}}) {
            CAPTURE(max_run);
            const result<io::xfile> r = load(to_binary(text, 4, max_run));
            REQUIRE_FALSE(r);
            CAPTURE(r.error().message);
            CHECK(contains(r.error().message, "byte offset "));
            CHECK(r.error().code == b.code);
            CHECK(r.error().index == b.index);
            if (b.index != error::no_index) CHECK(contains(r.error().message, b.message_part));
        }
    }
}

TEST_CASE("a file with no data objects is an empty, valid file") {
    for (const char* header : {"xof 0302txt 0064", "xof 0303txt 0032\n// nothing\n"}) {
        const result<io::xfile> r = load(header);
        REQUIRE(r);
        CHECK(r->skeleton.empty());
        CHECK(r->meshes.empty());
        CHECK(r->animation_sets.empty());
    }
    const result<io::xfile> r = load("xof 0302txt 0064");
    CHECK(r->version == 302);
    CHECK(r->float_bits == 64);
}

TEST_CASE(
    "quirks: a reference with a GUID, several AnimTicksPerSecond, a top-level mesh, fewer face "
    "material indices than faces, MSVC NaN/infinity spellings") {
    const std::string text = R"(xof 0303txt 0032
AnimationSet First { Animation { { F <3d82ab46-62da-11cf-ab39-0020af71e433> } AnimationKey { 2; 1; 3;3;1.0,2.0,3.0;;; } } }
AnimTicksPerSecond { 25; }
Frame F { }
AnimTicksPerSecond { 50; }
AnimationSet Second { Animation { AnimationKey { 1; 1; 0;3;1.0,1.0,1.0;;; } { F <3d82ab46-62da-11cf-ab39-0020af71e433> } } }
Mesh { 4; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 1.#INF00;1.0;0.0;, -1.#QNAN0;+1.5;0.0;;
       2; 3;0,1,2;, 3;0,2,3;;
       MeshMaterialList { 2; 1; 1;; Material { 1.0;1.0;1.0;1.0;; 0.0; 0.0;0.0;0.0;; 0.0;0.0;0.0;;
                                               TextureFileName { "a\\b.png"; } }
                                    Material { 1.0;1.0;1.0;1.0;; 0.0; 0.0;0.0;0.0;; 0.0;0.0;0.0;; } } }
)";
    // MSVC's spellings are read as infinity and NaN: strict mode refuses them in a vertex,
    // lenient mode (the default) zeroes those vertices and says so.
    const result<io::xfile> strict = load(text);
    REQUIRE_FALSE(strict);
    CHECK(strict.error().code == errc::non_finite);
    CHECK(strict.error().index == 2);
    CHECK(contains(strict.error().message, "line 7, column 8: Mesh: vertex 2 has NaN or infinity"));
    const result<io::xfile> r = load(text, parse_mode::lenient);
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    REQUIRE(r->warnings.size() == 1);
    CHECK(r->warnings[0].action == io::warning_action::repaired);
    CHECK(r->warnings[0].code == errc::non_finite);
    CHECK(contains(r->warnings[0].message, "vertex 2 has NaN or infinity; set to (0, 0, 0) (2 such "
                                           "problems here; the first is named)"));
    REQUIRE(r->animation_sets.size() == 2);
    // A set with no AnimTicksPerSecond before it takes the file's first one.
    CHECK(r->animation_sets[0].clip.ticks_per_second == 25.0f);
    CHECK(r->animation_sets[1].clip.ticks_per_second == 50.0f);
    CHECK(r->animation_sets[0].clip.channels.at(0).translation.value(0) == glm::vec3(1, 2, 3));
    CHECK(r->animation_sets[1].clip.channels.at(0).joint == 0);
    REQUIRE(r->meshes.size() == 1);
    const io::xfile_mesh& m = r->meshes[0];
    CHECK(m.joint == io::no_joint);
    CHECK(m.positions[2] == glm::vec3(0.0f));
    CHECK(m.positions[3] == glm::vec3(0.0f));
    CHECK(m.positions[1] == glm::vec3(1.0f, 0.0f, 0.0f));
    CHECK(m.triangle_materials == std::vector<std::uint32_t>{1, 1});
    CHECK(m.materials.at(0).texture_file == "a\\\\b.png"); // as written
}

TEST_CASE("references by GUID alone resolve to the frame or material with that GUID") {
    const std::string text = R"(xof 0303txt 0032
Material ByGuid { <11111111-2222-3333-4444-555555555555> 1.0;0.5;0.25;1.0;; 0.0; 0.0;0.0;0.0;; 0.0;0.0;0.0;; }
Frame Plain { }
Frame Tagged { <0A0B0C0D-0000-1111-2222-FEDCBA987654> }
Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;;
  MeshMaterialList { 1; 1; 0;; { <11111111-2222-3333-4444-555555555555> } } }
AnimationSet S { Animation { { <0a0b0c0d-0000-1111-2222-fedcba987654> } AnimationKey { 2; 1; 0;3;1.0,2.0,3.0;;; } } }
)";
    for (const std::string& bytes : {text, to_binary(text, 4)}) {
        const result<io::xfile> r = load(bytes);
        REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
        CHECK(r->animation_sets.at(0).clip.channels.at(0).joint == 1); // "Tagged", case aside
        REQUIRE(r->meshes.at(0).materials.size() == 1);
        CHECK(r->meshes[0].materials[0].name == "ByGuid");
    }
    const std::string unknown = R"(xof 0303txt 0032
Frame F { }
AnimationSet S { Animation { { <00000000-0000-0000-0000-000000000000> } } }
)";
    const result<io::xfile> r = load(unknown);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::not_found);
    CHECK(contains(r.error().message,
                   "animates frame <00000000-0000-0000-0000-000000000000>, which does not exist"));
}

namespace {

/// A triangle whose vertex 0 has one influence of each of ten bones B0 .. B9, of `weights` (as
/// the file writes them).
std::string ten_influences(const std::vector<std::string>& weights) {
    std::string text = "xof 0303txt 0032\n";
    for (int b = 0; b < 10; ++b) text += "Frame B" + std::to_string(b) + " { }\n";
    text += "Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;;\n";
    for (std::size_t b = 0; b < weights.size(); ++b)
        text += " SkinWeights { \"B" + std::to_string(b) + "\"; 1; 0; " + weights[b] +
                "; 1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0;; }\n";
    return text + "}\n";
}

} // namespace

TEST_CASE(
    "more than 8 influences: the 8 largest are kept, rescaled to the same sum, with a warning") {
    const result<io::xfile> r =
        load(ten_influences({"0.02", "0.2", "0.1", "0.05", "0.03", "0.15", "0.12", "0.13", "0.1", "0.1"}));
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    const io::mesh_skin& k = r->meshes.at(0).skin;
    REQUIRE(k.influences_per_vertex == 8);
    // Largest first: B1 .2, B5 .15, B7 .13, B6 .12, then the .1 ties in SkinWeights order B2, B8,
    // B9, then B3 .05. B4 (.03) and B0 (.02) are dropped; the rest are scaled by 1 / 0.95.
    CHECK(std::vector<std::uint16_t>(k.bone_indices.begin(), k.bone_indices.begin() + 8) ==
          std::vector<std::uint16_t>{1, 5, 7, 6, 2, 8, 9, 3});
    float sum = 0.0f;
    for (int i = 0; i < 8; ++i) sum += k.weights[static_cast<std::size_t>(i)];
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
    CHECK(k.weights[0] == doctest::Approx(0.2 / 0.95).epsilon(1e-6));
    // Vertices 1 and 2 have no influence.
    for (std::size_t i = 8; i < 24; ++i) CHECK(k.weights[i] == 0.0f);
    REQUIRE(r->warnings.size() == 2);
    CHECK(contains(r->warnings[0].message, "1 vertices have more than 8 influences"));
    CHECK(contains(r->warnings[1].message, "2 vertices have no bone influence"));
}

TEST_CASE("more than 8 influences of weights near FLT_MAX: rescaled weights held to the largest float") {
    // Ten weights of 3e38: the 8 kept, scaled by 10 / 8, would be 3.75e38, past FLT_MAX: held
    // there, not infinite.
    const result<io::xfile> r = load(ten_influences(std::vector<std::string>(10, "3e38")));
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    const io::mesh_skin& k = r->meshes.at(0).skin;
    REQUIRE(k.influences_per_vertex == 8);
    for (std::size_t i = 0; i < 8; ++i) CHECK(k.weights[i] == FLT_MAX);
    CHECK(contains(r->warnings.at(0).message, "1 vertices have more than 8 influences"));
}

TEST_CASE(
    "normals that differ between the corners of one vertex: the first is kept, with a warning") {
    const std::string text = R"(xof 0303txt 0032
Mesh Hard { 4; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 1.0;1.0;0.0;, 0.0;1.0;0.0;; 2; 3;0,1,2;, 3;0,2,3;;
  MeshNormals { 2; 0.0;0.0;1.0;, 0.0;1.0;0.0;; 2; 3;0,0,0;, 3;1,1,1;; } }
)";
    const result<io::xfile> r = load(text);
    REQUIRE(r);
    const io::xfile_mesh& m = r->meshes.at(0);
    CHECK_FALSE(m.normals_per_vertex_exact);
    CHECK(m.normals[0] == glm::vec3(0, 0, 1));
    CHECK(m.normals[3] == glm::vec3(0, 1, 0));
    CHECK(m.normal_indices == std::vector<std::uint32_t>{0, 0, 0, 1, 1, 1});
    REQUIRE(r->warnings.size() == 1);
    CHECK(contains(r->warnings[0].message, "2 face corners"));
    CHECK(contains(r->warnings[0].message, "Mesh 'Hard'"));
}

// ---------------------------------------------------------------------------------------------
// Bad input: what was expected, and where
// ---------------------------------------------------------------------------------------------

TEST_CASE("a text error names the file, line and column, the object, what was expected and what "
          "was found") {
    const result<io::xfile> r =
        load("xof 0303txt 0032\nFrame A {\n  FrameTransformMatrix { 1.0, x; } }\n");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::parse_error);
    CHECK(r.error().message == "sample.x: line 3, column 31: FrameTransformMatrix: expected "
                               "frameMatrix (a number), found 'x'");
}

TEST_CASE("a binary error names the byte offset") {
    // header 16 + NAME Frame 11 + NAME A 7 + '{' 2 + NAME FrameTransformMatrix 26 + '{' 2 +
    // FLOAT_LIST of two 14 = 78: the '}' where the third float should be.
    const result<io::xfile> r =
        load(to_binary("xof 0303txt 0032\nFrame A { FrameTransformMatrix { 1.0, 2.0; } }", 4));
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "sample.x: byte offset 78: FrameTransformMatrix: expected "
                               "frameMatrix (a number), found '}'");
}

TEST_CASE("malformed text: each problem is reported with its kind, place and index") {
    struct bad {
        const char* what;
        std::string body; // after the header line
        errc code;
        std::string message_part;
        std::size_t index = error::no_index;
    };
    const std::string frame_a = "Frame A { }\n";
    const std::string identity16 =
        "1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0";
    const std::string mesh3 =
        "Mesh M { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;;\n";
    const bad cases[] = {
        {"fewer keys than nKeys",
         frame_a + "AnimationSet S { Animation { { A } AnimationKey { 2; 3; 0;3;0.0,0.0,0.0;;, "
                   "1;3;0.0,0.0,0.0;;; } } }",
         errc::parse_error,
         "line 3, column 95: AnimationKey: expected a key time (an integer), found '}'"},
        {"more keys than nKeys",
         frame_a + "AnimationSet S { Animation { { A } AnimationKey { 2; 1; 0;3;0.0,0.0,0.0;;, "
                   "1;3;0.0,0.0,0.0;;; } } }",
         errc::parse_error,
         "AnimationKey: expected '}' (more values than the counts before them declare), found '1'"},
        {"a key with the wrong number of values",
         frame_a +
             "AnimationSet S { Animation { { A } AnimationKey { 0; 1; 0;3;1.0,0.0,0.0;;; } } }",
         errc::parse_error, "rotation key 0 has 3 values, keyType 0 has 4", 0},
        {"an unknown key type",
         frame_a +
             "AnimationSet S { Animation { { A } AnimationKey { 7; 1; 0;3;1.0,0.0,0.0;;; } } }",
         errc::parse_error, "unknown keyType 7"},
        {"a key type twice",
         frame_a + "AnimationSet S { Animation { { A } AnimationKey { 2; 1; 0;3;0.0,0.0,0.0;;; } "
                   "AnimationKey { 2; 1; 5;3;0.0,0.0,0.0;;; } } }",
         errc::duplicate, "a second position AnimationKey in one Animation"},
        {"an animation of a missing frame",
         frame_a + "AnimationSet S { Animation Anim { { Nope } AnimationKey { 2; 1; "
                   "0;3;0.0,0.0,0.0;;; } } }",
         errc::not_found,
         "line 3, column 35: AnimationSet 'S', Animation 'Anim' animates frame 'Nope', which does "
         "not exist"},
        {"an animation without a frame",
         frame_a + "AnimationSet S { Animation { AnimationKey { 2; 1; 0;3;0.0,0.0,0.0;;; } } }",
         errc::invalid_argument, "has no { Frame } reference"},
        {"two animations of one frame",
         frame_a + "AnimationSet S { Animation { { A } } Animation Again { { A } } }",
         errc::duplicate,
         "Animation 'Again' animates frame 'A', which an earlier Animation of the set animates"},
        {"unsorted key times",
         frame_a + "AnimationSet S { Animation { { A } AnimationKey { 2; 2; 5;3;0.0,0.0,0.0;;, "
                   "3;3;0.0,0.0,0.0;;; } } }",
         errc::unsorted,
         "line 3, column 36: AnimationKey: position key 1: time 3 is before the time 5 of an "
         "earlier key",
         1},
        {"a non-unit rotation key",
         frame_a +
             "AnimationSet S { Animation { { A } AnimationKey { 0; 1; 0;4;2.0,0.0,0.0,0.0;;; } } }",
         errc::not_normalized, "rotation key 0 (tick 0) is not unit length (|q| = 2)", 0},
        {"a zero rotation key",
         frame_a +
             "AnimationSet S { Animation { { A } AnimationKey { 0; 1; 0;4;0.0,0.0,0.0,0.0;;; } } }",
         errc::non_finite,
         "rotation key 0 (tick 0) is not a rotation (a zero, NaN or infinite quaternion)", 0},
        {"a NaN scale key",
         frame_a +
             "AnimationSet S { Animation { { A } AnimationKey { 1; 1; 0;3;1.#QNAN0,1.0,1.0;;; } } }",
         errc::non_finite, "scale key 0 (tick 0) has NaN or infinity", 0},
        {"matrix and position keys in one Animation",
         frame_a + "AnimationSet S { Animation { { A } AnimationKey { 2; 1; 0;3;0.0,0.0,0.0;;; } "
                   "AnimationKey { 4; 1; 0;16;" + identity16 + ";;; } } }",
         errc::invalid_argument,
         "Animation '' has matrix keys and rotation, scale or position keys"},
        {"a NaN normal",
         mesh3 + "MeshNormals { 1; 0.0;1.#QNAN0;1.0;; 1; 3;0,0,0;; } }", errc::non_finite,
         "MeshNormals: normal 0 has NaN or infinity", 0},
        {"an infinite texture coordinate",
         mesh3 + "MeshTextureCoords { 3; 0.0;0.0;, 1.#INF00;0.0;, 0.0;1.0;; } }", errc::non_finite,
         "MeshTextureCoords: texture coordinate 1 has NaN or infinity", 1},
        {"a NaN material colour",
         mesh3 + "MeshMaterialList { 1; 1; 0;; Material { 1.0;-1.#IND00;1.0;1.0;; 0.0; "
                 "0.0;0.0;0.0;; 0.0;0.0;0.0;; } } }",
         errc::non_finite, "Material: a colour or the power has NaN or infinity"},
        {"a NaN matrixOffset",
         frame_a + mesh3 + "SkinWeights { \"A\"; 1; 0; 1.0; 1.#QNAN0" + identity16.substr(3) +
             ";; } }",
         errc::non_finite, "SkinWeights: matrixOffset has NaN or infinity (bone 'A')"},
        {"a NaN weight",
         frame_a + mesh3 + "SkinWeights { \"A\"; 2; 0, 1; 1.0, 1.#QNAN0; " + identity16 +
             ";; } }",
         errc::non_finite, "SkinWeights: weights[1] is not finite (bone 'A')", 1},
        {"a bind pose that overflows",
         "Frame A { FrameTransformMatrix { 3e38,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,"
         "0.0,0.0,0.0,1.0;; } Frame B { FrameTransformMatrix { 3e38,0.0,0.0,0.0,0.0,1.0,0.0,0.0,"
         "0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0;; } } }",
         errc::non_finite,
         "Frame 'B': its FrameTransformMatrix times its parents' matrices overflows",
         1},
        {"a float beyond float's range",
         "Frame A { FrameTransformMatrix { 1e39,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,"
         "0.0,0.0,0.0,1.0;; } }",
         errc::non_finite, "FrameTransformMatrix: the matrix has NaN or infinity"},
        {"zero ticks per second", "AnimTicksPerSecond { 0; }", errc::invalid_argument,
         "AnimTicksPerSecond: 0 ticks per second"},
        {"two frames with one name", "Frame A { Frame B { } }\nFrame B { }", errc::duplicate,
         "line 3, column 1: frame 2 'B': same name as frame 1", 2},
        {"a bone naming a missing frame",
         mesh3 + "SkinWeights { \"Nope\"; 1; 0; 1.0; " + identity16 + ";; } }", errc::not_found,
         "line 3, column 1: Mesh 'M': SkinWeights names frame 'Nope', which does not exist"},
        {"a SkinWeights vertex index out of range",
         frame_a + mesh3 + "SkinWeights { \"A\"; 2; 0, 7; 0.5, 0.5; " + identity16 + ";; } }",
         errc::parse_error,
         "line 4, column 26: SkinWeights: vertexIndices[1] = 7 is out of range (the mesh has 3 "
         "vertices; bone 'A')",
         7},
        {"a SkinWeights count larger than its data",
         frame_a + mesh3 + "SkinWeights { \"A\"; 3; 0, 1; 0.5, 0.5; " + identity16 + ";; } }",
         errc::parse_error,
         "line 4, column 29: SkinWeights: expected a vertex index (an integer), found '0.5'"},
        {"a face vertex index out of range",
         "Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,9;; }", errc::parse_error,
         "line 2, column 56: Mesh: face 0, corner 2: vertex index 9 is out of range (nVertices 3)",
         9},
        {"a face with two corners",
         "Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 2;0,1;; }", errc::parse_error,
         "face 0 has 2 corners; a face needs 3 or more", 0},
        {"a missing material", mesh3 + "MeshMaterialList { 1; 1; 0;; { Nope } } }", errc::not_found,
         "no Material 'Nope' comes before this reference"},
        {"fewer materials than nMaterials",
         mesh3 + "MeshMaterialList { 2; 1; 1;; Material { 1.0;1.0;1.0;1.0;; 0.0; 0.0;0.0;0.0;; "
                 "0.0;0.0;0.0;; } } }",
         errc::parse_error, "nMaterials is 2 but 1 materials follow"},
        {"a material index out of range", mesh3 + "MeshMaterialList { 1; 1; 3;; } }",
         errc::parse_error, "face 0: material index 3 is out of range (nMaterials 1)", 3},
        {"texture coordinates for another vertex count",
         mesh3 + "MeshTextureCoords { 2; 0.0;0.0;, 1.0;1.0;; } }", errc::parse_error,
         "nTextureCoords is 2, the mesh has 3 vertices"},
        {"face normals for another face count",
         mesh3 + "MeshNormals { 1; 0.0;0.0;1.0;; 2; 3;0,0,0;, 3;0,0,0;; } }", errc::parse_error,
         "nFaceNormals is 2, the mesh has 1 faces"},
        {"a count larger than the file", "Mesh { 4000000000; 0.0; }", errc::parse_error,
         "nVertices is 4000000000, more than the rest of the file can hold"},
        {"an integer beyond 32 bits", "AnimTicksPerSecond { 4294967296; }", errc::parse_error,
         "expected AnimTicksPerSecond (an integer), found '4294967296'"},
        {"a WORD beyond 16 bits", mesh3 + "XSkinMeshHeader { 70000; 1; 1; } }", errc::parse_error,
         "nMaxSkinWeightsPerVertex is 70000, more than a WORD holds"},
        {"a malformed number", "Frame A { FrameTransformMatrix { 1.0.0, 0.0; } }",
         errc::parse_error, "expected frameMatrix (a number), found '1.0.0'"},
        {"a string that never ends", mesh3 + "SkinWeights { \"A; 1; 0; 1.0; } }", errc::parse_error,
         "expected transformNodeName (a string), found a string that never ends"},
        {"a missing brace", "Frame A B { }", errc::parse_error,
         "line 2, column 9: expected '{' after 'Frame', found 'B'"},
        {"a stray brace", "}", errc::parse_error,
         "line 2, column 1: expected a template or a data object, found '}'"},
        {"a truncated object", "Frame A { Frame B { }", errc::parse_error,
         "Frame 'A': expected a nested data object, a reference or '}', found the end of the file"},
        {"a NaN frame matrix",
         "Frame A { FrameTransformMatrix { "
         "1.#QNAN0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0;; } }",
         errc::non_finite, "FrameTransformMatrix: the matrix has NaN or infinity"},
        {"a second FrameTransformMatrix",
         "Frame A { FrameTransformMatrix { " + identity16 + ";; } FrameTransformMatrix { " +
             identity16 + ";; } }",
         errc::duplicate, "the frame already has a FrameTransformMatrix"},
    };
    for (const bad& b : cases) {
        CAPTURE(b.what);
        const result<io::xfile> r = load("xof 0303txt 0032\n" + b.body);
        REQUIRE_FALSE(r);
        CAPTURE(r.error().message);
        CHECK(r.error().code == b.code);
        CHECK(contains(r.error().message, "sample.x: line "));
        CHECK(contains(r.error().message, b.message_part));
        CHECK(r.error().index == b.index);
    }
}

TEST_CASE("Frames nested a million deep: no recursion, bounded by load_options::max_joints" *
          doctest::test_suite("deep")) {
    std::string text = "xof 0303txt 0032\n";
    const std::size_t n = 1000000;
    text.reserve(n * 8 + 64);
    for (std::size_t i = 0; i < n; ++i) text += "Frame{";
    text += "FrameTransformMatrix{1,0,0,0,0,1,0,0,0,0,1,0,0,2,0,1;;}";
    text.append(n, '}');
    // The default limit refuses it in either mode, naming the limit.
    for (parse_mode mode : {parse_mode::strict, parse_mode::lenient}) {
        const result<io::xfile> r = load(text, mode);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::unsupported);
        CHECK(contains(r.error().message, "line 2, column 393217: the file has more frames than load_options::max_joints (65536) allows"));
    }
    io::load_options o;
    o.max_joints = n;
    o.max_objects = n + 1;
    o.mode = parse_mode::strict;
    const result<io::xfile> r = io::load_xfile_memory(text.data(), text.size(), o, "sample.x");
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(r->skeleton.size() == n);
    CHECK(r->skeleton.parent(n - 1) == joint_index(n - 2));
    CHECK(r->skeleton.bind_model()[n - 1][3] == glm::vec4(0.0f, 2.0f, 0.0f, 1.0f));
    CHECK(r->warnings.empty());
    // Cut short inside the deepest of 60,000 frames: lenient mode keeps the frames, strict mode
    // fails.
    std::string cut = "xof 0303txt 0032\n";
    for (int i = 0; i < 60000; ++i) cut += "Frame{";
    cut.append(30000, '}');
    const result<io::xfile> l = load(cut, parse_mode::lenient);
    REQUIRE(l);
    CHECK(l->skeleton.size() == 60000);
    CHECK(l->warnings.size() == 1);
    CHECK_FALSE(load(cut, parse_mode::strict));
    // A frame that fails inside a deep chain drops the rest of that frame only.
    std::string broken = "xof 0303txt 0032\n";
    for (int i = 0; i < 1000; ++i) broken += "Frame f" + std::to_string(i) + "{";
    broken += "5 Frame lost{}"; // a number where a frame's body has objects: the frame fails there
    for (int i = 0; i < 1000; ++i) broken += "}";
    broken += "Frame after{}";
    const result<io::xfile> b = load(broken, parse_mode::lenient);
    REQUIRE(b);
    CHECK(b->skeleton.size() == 1001);
    CHECK(b->skeleton.name(999) == "f999");
    CHECK(b->skeleton.name(1000) == "after");
    REQUIRE(b->warnings.size() == 1);
    CHECK(contains(b->warnings[0].message, "Frame 'f999'"));
    CHECK(contains(b->warnings[0].message, "the rest of the Frame is skipped"));
}

TEST_CASE("header problems") {
    struct bad {
        std::string bytes;
        errc code;
        const char* part;
    };
    const bad cases[] = {
        {"", errc::parse_error, "sample.x: byte offset 0: expected the 16-byte .X header"},
        {"xof 0303txt", errc::parse_error, "found 'xof 0303txt'"},
        {"GIF89a..........", errc::parse_error, "found 'GIF89a..........'"},
        {"xof 0304txt 0032", errc::unsupported, "byte offset 4: version '0304'"},
        {"xof 0303xml 0032", errc::unsupported, "byte offset 8: format 'xml '"},
        {"xof 0303txt 0016", errc::unsupported, "byte offset 12: float size '0016'"},
    };
    for (const bad& b : cases) {
        CAPTURE(b.bytes);
        for (parse_mode mode : {parse_mode::strict, parse_mode::lenient}) {
            const result<io::xfile> r = load(b.bytes, mode);
            REQUIRE_FALSE(r);
            CHECK(r.error().code == b.code);
            CHECK(contains(r.error().message, b.part));
        }
    }
    // A compressed file cut inside its size field: an error, or in lenient mode an empty file.
    const result<io::xfile> cut = load("xof 0303tzip0032\x10");
    REQUIRE_FALSE(cut);
    CHECK(contains(cut.error().message, "sample.x: byte offset 16: expected the uncompressed size "
                                        "(4 bytes), found the end of the file"));
    const result<io::xfile> lenient = load("xof 0303tzip0032\x10", parse_mode::lenient);
    REQUIRE(lenient);
    CHECK(lenient->skeleton.empty());
    CHECK(lenient->warnings.size() == 1);
}

TEST_CASE("malformed binary: wrong value kinds, unknown and truncated tokens") {
    SUBCASE("a float where an integer belongs") {
        const result<io::xfile> r =
            load(to_binary("xof 0303txt 0032\nAnimTicksPerSecond { 30.0; }", 4));
        REQUIRE_FALSE(r);
        CHECK(contains(r.error().message, "byte offset 42: AnimTicksPerSecond: expected "
                                          "AnimTicksPerSecond (an integer), found a FLOAT_LIST"));
    }
    SUBCASE("an unknown token id") {
        std::string bytes = to_binary("xof 0303txt 0032\nFrame A { }", 4);
        bytes.insert(bytes.size() - 2, std::string("\x63\x00", 2));
        const result<io::xfile> r = load(bytes);
        REQUIRE_FALSE(r);
        CHECK(contains(r.error().message,
                       "byte offset 36: Frame 'A': expected a nested data object, "
                       "a reference or '}', found an unknown token id 99"));
        const result<io::xfile> lenient = load(bytes, parse_mode::lenient);
        REQUIRE(lenient); // the reader cannot step over it: the file ends there
        CHECK(lenient->skeleton.size() == 1);
        CHECK(lenient->warnings.size() == 1);
    }
    SUBCASE("a list longer than the file") {
        std::string bytes = to_binary("xof 0303txt 0032\nAnimTicksPerSecond { 30; }", 4);
        bytes.resize(bytes.size() - 2 - 4); // drop the '}' and the value
        bytes[bytes.size() - 4] = '\x09';   // the list claims 9 values
        const result<io::xfile> r = load(bytes);
        REQUIRE_FALSE(r);
        CHECK(contains(r.error().message,
                       "found an INTEGER_LIST of 9 values that the file is too short for"));
    }
}

TEST_CASE("malformed compressed data: the byte offset in the file, or in the decompressed data") {
    const std::string good = to_mszip(sample_text(), 300);
    REQUIRE(load(good));
    SUBCASE("a bad block signature") {
        std::string bytes = good;
        bytes[24] = 'X';
        const result<io::xfile> r = load(bytes);
        REQUIRE_FALSE(r);
        CHECK(r.error().message ==
              "sample.x: byte offset 24: block 0: expected the block signature 'CK'");
    }
    SUBCASE("an uncompressed size that the blocks do not fill") {
        std::string bytes = good;
        bytes[16] = static_cast<char>(bytes[16] + 1);
        const result<io::xfile> r = load(bytes);
        REQUIRE_FALSE(r);
        CHECK(contains(r.error().message, "bytes (header included), the header says"));
    }
    SUBCASE("corrupt deflate data: strict fails, lenient reads what inflated before it") {
        std::string bytes = good;
        const std::size_t second_block = 20 + 4 + static_cast<unsigned char>(bytes[22]) +
                                         256 * static_cast<unsigned char>(bytes[23]);
        for (std::size_t i = second_block + 6; i < second_block + 40; ++i) bytes[i] = '\xff';
        const result<io::xfile> r = load(bytes);
        REQUIRE_FALSE(r);
        CHECK(contains(r.error().message, "sample.x: byte offset " +
                                              std::to_string(second_block + 6) + ": block 1: "));
        const result<io::xfile> lenient = load(bytes, parse_mode::lenient);
        REQUIRE(lenient);
        CHECK(contains(lenient->warnings.at(0).message, "block 1: "));
    }
    SUBCASE("a parse error in compressed text names the decompressed offset, line and column") {
        const result<io::xfile> r =
            load(to_mszip("xof 0303txt 0032\nFrame A {\n  FrameTransformMatrix { 1.0, x; } }\n"));
        REQUIRE_FALSE(r);
        CHECK(r.error().message == "sample.x: byte offset 57 of the decompressed data (line 3, "
                                   "column 31): FrameTransformMatrix: "
                                   "expected frameMatrix (a number), found 'x'");
    }
}

TEST_CASE("lenient mode drops the broken part, keeps the rest and says what it dropped") {
    SUBCASE("a malformed nested object") {
        const std::string text = R"(xof 0303txt 0032
Frame A { Mesh M { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;;
  MeshTextureCoords { 3; 0.0;0.0;, bad;1.0;, 0.0;1.0;; }
  MeshNormals { 1; 0.0;0.0;1.0;; 1; 3;0,0,0;; } } }
AnimationSet S { Animation { { A } AnimationKey { 2; 2; 0;3;0.0,0.0,0.0;;; }
                             AnimationKey { 1; 1; 0;3;1.0,1.0,1.0;;; } } }
)";
        REQUIRE_FALSE(load(text));
        const result<io::xfile> r = load(text, parse_mode::lenient);
        REQUIRE(r);
        REQUIRE(r->meshes.size() == 1);
        CHECK(r->meshes[0].texcoords.empty());   // dropped
        CHECK(r->meshes[0].normals.size() == 3); // the sibling after it is read
        const clip& c = r->animation_sets.at(0).clip;
        REQUIRE(c.channels.size() == 1);
        CHECK(c.channels[0].translation.empty()); // the broken AnimationKey is dropped
        CHECK(c.channels[0].scale.size() == 1);
        REQUIRE(r->warnings.size() == 2);
        CHECK(contains(r->warnings[0].message, "line 3, column 36: MeshTextureCoords: expected a "
                                               "texture coordinate (a number), found 'bad'"));
        CHECK(contains(r->warnings[1].message,
                       "AnimationKey: expected a key time (an integer), found '}'"));
    }
    SUBCASE("names that resolve to nothing, duplicates, zero ticks per second") {
        const std::string text = R"(xof 0303txt 0032
AnimTicksPerSecond { 0; }
Frame A { Frame B { } } Frame B { }
Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;;
  SkinWeights { "Nope"; 1; 0; 1.0; 1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0;; }
  SkinWeights { "A"; 3; 0, 1, 2; 0.5, 1.0, 1.0; 1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0;; } }
AnimationSet S { Animation { { Nope } } Animation { } Animation { { A } } Animation { { A } }
                 Animation { { B } AnimationKey { 2; 2; 5;3;0.0,0.0,0.0;;, 1;3;0.0,0.0,0.0;;; } } }
)";
        const result<io::xfile> r = load(text, parse_mode::lenient);
        REQUIRE(r);
        CHECK(r->skeleton.names() == std::vector<std::string>{"A", "B", "B#2"});
        const io::mesh_skin& k = r->meshes.at(0).skin;
        REQUIRE(k.bones.size() == 1);
        // Vertex 0 lost its "Nope" weight (1.0): its 0.5 for A is rescaled to the sum it had, 1.5.
        CHECK(k.weights == std::vector<float>{1.5f, 1.0f, 1.0f});
        const clip& c = r->animation_sets.at(0).clip;
        CHECK(c.ticks_per_second_is_default);
        REQUIRE(c.channels.size() == 2);
        CHECK(c.channels[0].joint == 0);
        CHECK(c.channels[1].joint == 1); // its keys sorted
        CHECK(c.channels[1].translation.times() == std::vector<float>{1.0f, 5.0f});
        CHECK(validate_clip(c, r->skeleton));
        using io::warning_action;
        const struct {
            const char* part;
            warning_action action;
        } expected[] = {
            // The reader's, in file order...
            {"AnimTicksPerSecond: 0 ticks per second; ignored", warning_action::dropped},
            {"AnimationKey: position key 1: time 1 is before the time 5 of an earlier key; the "
             "keys are sorted by time",
             warning_action::repaired},
            // ... then those found once every frame is known.
            {"frame 2 'B': same name as frame 1; 1 frames repeat an earlier frame's name: they are "
             "renamed name#2, name#3, ...",
             warning_action::repaired},
            {"SkinWeights names frame 'Nope', which does not exist; the bone is dropped: its 1 "
             "weights are removed",
             warning_action::dropped},
            {"Mesh '': 1 vertices have weights that do not sum to 1 (kept as written)",
             warning_action::note},
            {"Animation '' animates frame 'Nope', which does not exist; the Animation is dropped",
             warning_action::dropped},
            {"Animation '' has no { Frame } reference; the Animation is dropped",
             warning_action::dropped},
            {"animates frame 'A', which an earlier Animation of the set animates; it has no keys: "
             "nothing is lost",
             warning_action::repaired},
        };
        REQUIRE(r->warnings.size() == std::size(expected));
        for (std::size_t i = 0; i < std::size(expected); ++i) {
            CAPTURE(r->warnings[i].message);
            CHECK(contains(r->warnings[i].message, expected[i].part));
            CHECK(r->warnings[i].action == expected[i].action);
            CHECK(contains(r->warnings[i].message, "sample.x: line "));
        }
    }
    SUBCASE("a truncated file keeps what was complete") {
        const std::string text =
            "xof 0303txt 0032\nFrame A { Frame B { } Frame C { FrameTransformMatrix { 1.0, 0.0,";
        const result<io::xfile> r = load(text, parse_mode::lenient);
        REQUIRE(r);
        CHECK(r->skeleton.names() == std::vector<std::string>{"A", "B", "C"});
        CHECK(r->skeleton.bind_local()[2] == glm::mat4(1.0f)); // the unfinished matrix is dropped
        REQUIRE(r->warnings.size() == 1);
        CHECK(contains(r->warnings[0].message, "found the end of the file"));
    }
    SUBCASE("garbage is not a damaged file: lenient mode gives up after 1000 problems") {
        std::string text = "xof 0303txt 0032\n";
        for (int i = 0; i < 1200; ++i) text += "1 ";
        const result<io::xfile> r = load(text, parse_mode::lenient);
        REQUIRE_FALSE(r);
        CHECK(contains(r.error().message, "more than 1000 problems (load_options::max_warnings)"));
        // Many problems of one kind in one object make one warning: 1200 bad entries of one
        // SkinWeights load, and say how many there were.
        std::string weights =
            "xof 0303txt 0032\nFrame A { }\nMesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, "
            "0.0;1.0;0.0;; 1; 3;0,1,2;; SkinWeights { \"A\"; 1200; ";
        for (int i = 0; i < 1200; ++i) weights += "7, ";
        for (int i = 0; i < 1200; ++i) weights += "1.0, ";
        weights += "1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0;; } }";
        const result<io::xfile> w = load(weights, parse_mode::lenient);
        REQUIRE(w);
        REQUIRE(w->warnings.size() == 2);
        CHECK(contains(w->warnings[0].message, "vertexIndices[0] = 7 is out of range"));
        CHECK(contains(w->warnings[0].message, "(1200 such problems here; the first is named)"));
        CHECK(contains(w->warnings[1].message, "3 vertices have no bone influence"));
        // Animations found wrong only once every frame is known each make a warning.
        std::string sets = "xof 0303txt 0032\nAnimationSet {";
        for (int i = 0; i < 1200; ++i) sets += " Animation { { Nope } }";
        const result<io::xfile> a = load(sets + " }", parse_mode::lenient);
        REQUIRE_FALSE(a);
        CHECK(contains(a.error().message, "more than 1000 problems"));
        // The limit is an option.
        io::load_options few;
        few.max_warnings = 10;
        const std::string all = sets + " }";
        const result<io::xfile> b = io::load_xfile_memory(all.data(), all.size(), few, "few.x");
        REQUIRE_FALSE(b);
        CHECK(contains(b.error().message, "few.x: "));
        CHECK(contains(b.error().message, "more than 10 problems (load_options::max_warnings)"));
    }
}

TEST_CASE("load_xfile: files that cannot be read") {
    const result<io::xfile> missing = io::load_xfile("/nonexistent/keyblend/file.x");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == errc::io_error);
    CHECK(contains(missing.error().message, "/nonexistent/keyblend/file.x: cannot open: "));
    const result<io::xfile> folder = io::load_xfile(".");
    REQUIRE_FALSE(folder);
    CHECK(folder.error().code == errc::io_error);
    CHECK(folder.error().message.rfind(".: cannot ", 0) == 0);
}

// ---------------------------------------------------------------------------------------------
// Real files (KEYBLEND_DATA_DIR): each file's known contents, counted independently of keyblend
// ---------------------------------------------------------------------------------------------

namespace {

struct expected_mesh {
    std::size_t vertices, faces, bones, influences;
    unsigned header_max_per_vertex; // XSkinMeshHeader, 0 when absent
};
struct expected_set {
    const char* name;
    float ticks_per_second; // 0: absent from the file
    std::size_t tracks, rotation, scale, position, matrix;
    float first, last;
};
struct expected_file {
    const char* path;
    io::xfile_format format;
    parse_mode mode; // lenient for the file whose bones name missing frames
    std::size_t frames, roots, depth;
    std::vector<expected_mesh> meshes;
    std::vector<expected_set> sets;
};

const std::vector<expected_file>& data_table() {
    using F = io::xfile_format;
    static const std::vector<expected_file> table = {
        {"assimp/BCN_Epileptic.X",
         F::text,
         parse_mode::strict,
         57,
         4,
         12,
         {{1170, 1966, 24, 3, 4}, {1196, 2036, 20, 3, 4}, {648, 1124, 10, 3, 3}},
         {{"Epileptisch", 4800, 57, 1621, 57, 156, 0, 0, 15840}}},
        {"assimp/Testwuson.X",
         F::text,
         parse_mode::strict,
         39,
         2,
         10,
         {{3205, 3732, 37, 4, 4}},
         {{"Wuson_Run", 4800, 39, 906, 39, 68, 0, 0, 4640},
          {"Wuson_Walk", 4800, 39, 3357, 39, 39, 0, 0, 17280},
          {"Wuson_Bind", 4800, 39, 39, 39, 39, 0, 0, 0}}},
        // Four SkinWeights, two of which name frames that do not exist: lenient drops them.
        {"assimp/anim_test.x",
         F::text,
         parse_mode::lenient,
         4,
         3,
         1,
         {{1720, 840, 3, 2, 4}}, // joint1, joint2, and pCylinder1 for the vertices joint3/4 had
         {{"cylinder_test", 24, 4, 96, 96, 96, 0, 1, 24}}},
        {"assimp/test_cube_text.x", F::text, parse_mode::strict, 2, 1, 1, {{24, 12, 1, 1, 1}}, {}},
        {"assimp/test_cube_binary.x",
         F::binary,
         parse_mode::strict,
         2,
         1,
         1,
         {{24, 12, 1, 1, 1}},
         {}},
        {"assimp/test_cube_compressed.x",
         F::compressed_binary,
         parse_mode::strict,
         2,
         1,
         1,
         {{24, 12, 1, 1, 1}},
         {}},
        {"directx-sdk-legacy-samples/tiny.x",
         F::text,
         parse_mode::strict,
         48,
         1,
         16,
         {{4432, 6841, 35, 2, 2}},
         {{"", 0, 47, 0, 0, 0, 2794, 0, 4960}}},
        {"directx-sdk-legacy-samples/wall_with_pillars.x",
         F::compressed_binary,
         parse_mode::strict,
         18,
         0,
         0,
         std::vector<expected_mesh>(12, expected_mesh{0, 0, 0, 0, 0}),
         {{"Default", 30, 16, 176, 176, 176, 0, 0, 10}}},
        {"directx-sdk-legacy-samples/sphere.x",
         F::text,
         parse_mode::strict,
         2,
         0,
         0,
         {{2307, 2304, 0, 0, 0}},
         {{"AnimationSet_sphere", 0, 1, 61, 61, 61, 0, 0, 60}}},
        {"directx-sdk-legacy-samples/shapes1.x",
         F::text,
         parse_mode::strict,
         8,
         0,
         0,
         {{0, 0, 0, 0, 0}},
         {{"", 0, 0, 0, 0, 0, 0, 0, 0}}},
    };
    return table;
}

std::size_t depth_of(const skeleton& s) {
    std::size_t deepest = 0;
    std::vector<std::size_t> depth(s.size());
    for (std::size_t j = 0; j < s.size(); ++j) {
        depth[j] = s.parent(j) < 0 ? 0 : depth[static_cast<std::size_t>(s.parent(j))] + 1;
        deepest = std::max(deepest, depth[j]);
    }
    return deepest;
}

} // namespace

TEST_CASE("every real file loads and holds its known contents") {
    for (const expected_file& e : data_table()) {
        CAPTURE(e.path);
        const auto path = kbtest::data_file(e.path);
        if (!path) return;
        const result<io::xfile> r = io::load_xfile(*path, {e.mode});
        REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
        const io::xfile& x = *r;
        CHECK(x.format == e.format);
        CHECK(x.float_bits == 32);
        if (e.mode == parse_mode::strict) CHECK(x.warnings.empty());
        CHECK(x.skeleton.size() == e.frames);
        if (e.roots > 0) {
            CHECK(std::count(x.skeleton.parents().begin(), x.skeleton.parents().end(), no_parent) ==
                  static_cast<std::ptrdiff_t>(e.roots));
            CHECK(depth_of(x.skeleton) == e.depth);
        }
        REQUIRE(x.meshes.size() == e.meshes.size());
        for (std::size_t i = 0; i < e.meshes.size(); ++i) {
            const expected_mesh& em = e.meshes[i];
            const io::xfile_mesh& m = x.meshes[i];
            CAPTURE(m.name);
            CHECK(m.joint < x.skeleton.size());
            CHECK(m.indices.size() == 3 * m.triangle_faces.size());
            CHECK(m.normals.size() == m.positions.size());
            CHECK(m.texcoords.size() == m.positions.size());
            for (std::uint32_t v : m.indices) REQUIRE(v < m.positions.size());
            for (std::uint32_t t : m.triangle_materials) REQUIRE(t < m.materials.size());
            const io::mesh_skin& k = m.skin;
            CHECK(k.bone_indices.size() == m.positions.size() * k.influences_per_vertex);
            CHECK(k.weights.size() == m.positions.size() * k.influences_per_vertex);
            for (std::uint16_t b : k.bone_indices)
                REQUIRE(b < std::max<std::size_t>(k.bones.size(), 1));
            for (const io::skin_bone& b : k.bones) CHECK(x.skeleton.name(b.joint) == b.name);
            if (em.vertices == 0) continue; // no per-mesh figures known
            CHECK(m.positions.size() == em.vertices);
            CHECK(m.face_count == em.faces);
            CHECK(k.bones.size() == em.bones);
            CHECK(k.influences_per_vertex == em.influences);
            CHECK(m.skin_header.present == (em.header_max_per_vertex > 0));
            CHECK(m.skin_header.max_weights_per_vertex == em.header_max_per_vertex);
        }
        REQUIRE(x.animation_sets.size() == e.sets.size());
        for (std::size_t i = 0; i < e.sets.size(); ++i) {
            const expected_set& es = e.sets[i];
            const clip& c = x.animation_sets[i].clip;
            CAPTURE(c.name);
            CHECK(c.name == es.name);
            CHECK(c.ticks_per_second_is_default == (es.ticks_per_second == 0));
            CHECK(c.ticks_per_second == (es.ticks_per_second == 0 ? 4800.0f : es.ticks_per_second));
            CHECK(c.channels.size() == es.tracks);
            const io::key_counts k = io::count_keys(c);
            CHECK(k.rotation == es.rotation);
            CHECK(k.scale == es.scale);
            CHECK(k.position == es.position);
            CHECK(k.matrix == es.matrix);
            CHECK(first_key_time(c) == es.first);
            CHECK(last_key_time(c) == es.last);
            CHECK(c.duration == es.last);
            CHECK(validate_clip(c, x.skeleton));
        }
    }
}

TEST_CASE("BCN_Epileptic.X: every Animation keeps its AnimationOptions {1: 0}") {
    const auto path = kbtest::data_file("assimp/BCN_Epileptic.X");
    if (!path) return;
    const result<io::xfile> r = io::load_xfile(*path);
    REQUIRE(r);
    const io::xfile_animation_set& s = r->animation_sets.at(0);
    REQUIRE(s.options.size() == 57);
    for (const io::animation_options& o : s.options) {
        CHECK(o.present);
        CHECK(o.open_closed == 1);
        CHECK(o.position_quality == 0);
    }
}

TEST_CASE(
    "anim_test.x: bones naming missing frames load by default, dropped with a warning naming "
    "them; strict mode refuses them") {
    const auto path = kbtest::data_file("assimp/anim_test.x");
    if (!path) return;
    const result<io::xfile> strict = io::load_xfile(*path, {parse_mode::strict});
    REQUIRE_FALSE(strict);
    CHECK(strict.error().code == errc::not_found);
    CHECK(contains(
        strict.error().message,
        "anim_test.x: line 26538, column 9: Mesh 'pCylinderShape1': SkinWeights names frame "
        "'joint3', which does not exist"));
    const result<io::xfile> lenient = io::load_xfile(*path); // the default
    REQUIRE(lenient);
    const std::vector<io::load_warning>& w = lenient->warnings;
    REQUIRE(w.size() == 3);
    CHECK(contains(w[0].message, "'joint3', which does not exist; the bone is dropped: its 1700 "
                                 "weights are removed"));
    CHECK(w[0].action == io::warning_action::dropped);
    CHECK(contains(w[1].message, "'joint4', which does not exist; the bone is dropped: its 1700 "
                                 "weights are removed"));
    CHECK(contains(w[2].message, "20 vertices lost their only influences with a dropped bone; they "
                                 "follow the mesh's frame 'pCylinder1' (a bone added for it)"));
    CHECK(w[2].action == io::warning_action::repaired);
    CHECK(lenient->contents.skin_weights == 4);
    const io::xfile_mesh& mesh = lenient->meshes.at(0);
    REQUIRE(mesh.skin.bones.size() == 3);
    CHECK(mesh.skin.bones[2].name == "pCylinder1");
    CHECK(mesh.skin.bones[2].joint == mesh.joint);
    // In the bind pose the added bone's palette matrix is the identity: those vertices stay put.
    CHECK(max_abs_diff(lenient->skeleton.bind_model()[mesh.joint] * mesh.skin.bones[2].offset,
                       glm::mat4(1.0f)) < 1e-5f);
    // The kept bones' weights are rescaled to the sum each vertex had: 1 in this file.
    const io::mesh_skin& k = mesh.skin;
    std::size_t unit = 0, following = 0;
    for (std::size_t v = 0; v < mesh.positions.size(); ++v) {
        const float sum = k.weights[2 * v] + k.weights[2 * v + 1];
        unit += std::fabs(sum - 1.0f) < 1e-4f;
        following += k.bone_indices[2 * v] == 2 && k.weights[2 * v + 1] == 0.0f;
    }
    CHECK(unit == 1720);
    CHECK(following == 20);
}

TEST_CASE("malformed_skinweights_oob.x: a clear error, or a lenient warning naming the bad index") {
    const auto path = kbtest::data_file("assimp/malformed_skinweights_oob.x");
    if (!path) return;
    const result<io::xfile> strict = io::load_xfile(*path, {parse_mode::strict});
    REQUIRE_FALSE(strict);
    CHECK(strict.error().code == errc::parse_error);
    CHECK(strict.error().index == 1000000);
    CHECK(contains(strict.error().message, "malformed_skinweights_oob.x: line 244, column 5: "
                                           "SkinWeights: vertexIndices[23] = 1000000 is "
                                           "out of range (the mesh has 24 vertices; bone 'Cube')"));
    const result<io::xfile> lenient = io::load_xfile(*path, {parse_mode::lenient});
    REQUIRE(lenient);
    REQUIRE(lenient->warnings.size() == 2);
    CHECK(lenient->warnings[0].index == 1000000);
    CHECK(contains(lenient->warnings[0].message, "vertexIndices[23] = 1000000 is out of range"));
    CHECK(contains(lenient->warnings[0].message, "that weight is dropped"));
    CHECK(contains(lenient->warnings[1].message, "1 vertices have no bone influence"));
    const io::mesh_skin& k = lenient->meshes.at(0).skin;
    REQUIRE(k.bones.size() == 1);
    CHECK(std::count(k.weights.begin(), k.weights.end(), 1.0f) == 23);
}

TEST_CASE("bind sets sampled at their first tick reproduce every frame's FrameTransformMatrix") {
    // Testwuson.X's Wuson_Bind is the bind pose by name; the other files' sets start from it too.
    // This is what proves the rotation-key conjugation (docs/xfile.md) on real data.
    const struct {
        const char* path;
        const char* set;
        float tick;
        std::size_t frames_keyed;
    } cases[] = {
        {"assimp/Testwuson.X", "Wuson_Bind", 0.0f, 39},
        {"assimp/BCN_Epileptic.X", "Epileptisch", 0.0f, 57},
        {"directx-sdk-legacy-samples/wall_with_pillars.x", "Default", 0.0f, 16},
    };
    const float tolerance = 1e-5f; // measured: 1.7e-6 at most (6-digit decimals in the files)
    for (const auto& e : cases) {
        CAPTURE(e.path);
        const auto path = kbtest::data_file(e.path);
        if (!path) return;
        const result<io::xfile> r = io::load_xfile(*path);
        REQUIRE(r);
        const skeleton& s = r->skeleton;
        const auto set =
            std::find_if(r->animation_sets.begin(), r->animation_sets.end(),
                         [&](const io::xfile_animation_set& a) { return a.clip.name == e.set; });
        REQUIRE(set != r->animation_sets.end());
        CHECK(set->clip.channels.size() == e.frames_keyed);
        std::vector<glm::mat4> local;
        REQUIRE(sample_local_matrices(set->clip, s, e.tick, local));
        for (const channel& ch : set->clip.channels) {
            CAPTURE(s.name(ch.joint));
            CHECK(max_abs_diff(local[ch.joint], s.bind_local()[ch.joint]) <= tolerance);
        }
    }
}

TEST_CASE("every skinned bone: bind-pose model matrix times offset matrix is the identity") {
    // Holds where the frames are the skin's bind pose. Documented exceptions: anim_test.x (joint3
    // and joint4 do not exist; joint2's offset is 0.026 off, an exporter error) and tiny.x, whose
    // FrameTransformMatrix values are a posed state, not the skin's bind pose.
    const float tolerance = 1e-5f; // measured: 2.7e-6 at most; the models are about 1 unit tall
    for (const char* file :
         {"assimp/Testwuson.X", "assimp/BCN_Epileptic.X", "assimp/test_cube_text.x",
          "assimp/test_cube_binary.x", "assimp/test_cube_compressed.x"}) {
        CAPTURE(file);
        const auto path = kbtest::data_file(file);
        if (!path) return;
        const result<io::xfile> r = io::load_xfile(*path);
        REQUIRE(r);
        std::size_t bones = 0;
        for (const io::xfile_mesh& m : r->meshes)
            for (const io::skin_bone& b : m.skin.bones) {
                CAPTURE(b.name);
                CHECK(max_abs_diff(r->skeleton.bind_model()[b.joint] * b.offset, glm::mat4(1.0f)) <=
                      tolerance);
                ++bones;
            }
        CHECK(bones > 0);
    }
}

TEST_CASE("real skins: each vertex's weights sum to 1 and are sorted, unused slots are (0, 0)") {
    for (const char* file :
         {"assimp/Testwuson.X", "assimp/BCN_Epileptic.X", "directx-sdk-legacy-samples/tiny.x"}) {
        CAPTURE(file);
        const auto path = kbtest::data_file(file);
        if (!path) return;
        const result<io::xfile> r = io::load_xfile(*path);
        REQUIRE(r);
        for (const io::xfile_mesh& m : r->meshes) {
            const io::mesh_skin& k = m.skin;
            const std::size_t n = k.influences_per_vertex;
            for (std::size_t v = 0; v < m.positions.size(); ++v) {
                float sum = 0.0f;
                for (std::size_t i = 0; i < n; ++i) {
                    sum += k.weights[v * n + i];
                    if (i > 0) CHECK(k.weights[v * n + i] <= k.weights[v * n + i - 1]);
                    if (k.weights[v * n + i] == 0.0f) CHECK(k.bone_indices[v * n + i] == 0);
                }
                CHECK(std::fabs(sum - 1.0f) <= 1e-5f);
            }
        }
    }
}

TEST_CASE("the real cube: text, binary and compressed hold the same cube") {
    const auto text_path = kbtest::data_file("assimp/test_cube_text.x");
    const auto bin_path = kbtest::data_file("assimp/test_cube_binary.x");
    const auto zip_path = kbtest::data_file("assimp/test_cube_compressed.x");
    if (!text_path || !bin_path || !zip_path) return;
    const result<io::xfile> text = io::load_xfile(*text_path);
    const result<io::xfile> bin = io::load_xfile(*bin_path);
    const result<io::xfile> zip = io::load_xfile(*zip_path);
    REQUIRE(text);
    REQUIRE(bin);
    REQUIRE(zip);
    check_same(*bin, *zip); // the compressed file inflates to the binary one exactly
    // Text holds 6-digit decimals of the binary floats: equal to a float's rounding.
    CHECK(text->skeleton.names() == bin->skeleton.names());
    const io::xfile_mesh& a = text->meshes.at(0);
    const io::xfile_mesh& b = bin->meshes.at(0);
    CHECK(a.indices == b.indices);
    CHECK(a.skin.bone_indices == b.skin.bone_indices);
    CHECK(a.materials.size() == b.materials.size());
    for (std::size_t v = 0; v < a.positions.size(); ++v) {
        CHECK(max_abs_diff(a.positions[v], b.positions[v]) <= 1e-6f);
        CHECK(max_abs_diff(a.normals[v], b.normals[v]) <= 1e-6f);
    }
    for (std::size_t j = 0; j < text->skeleton.size(); ++j)
        CHECK(max_abs_diff(text->skeleton.bind_local()[j], bin->skeleton.bind_local()[j]) <= 1e-6f);
}

// ---------------------------------------------------------------------------------------------
// Truncation and corruption
// ---------------------------------------------------------------------------------------------

namespace {

/// Offsets at which a text file's top-level objects end (and the header's end): a prefix that
/// stops at one of them, plus white space, is a complete shorter file.
std::set<std::size_t> text_boundaries(const std::string& text) {
    std::set<std::size_t> out{16};
    int depth = 0;
    for (std::size_t i = 16; i < text.size(); ++i) {
        if (text[i] == '"')
            i = text.find('"', i + 1);
        else if (text[i] == '{')
            ++depth;
        else if (text[i] == '}' && --depth == 0)
            out.insert(i + 1);
    }
    return out;
}

/// The same for binary: walks the tokens.
std::set<std::size_t> binary_boundaries(const std::string& bytes) {
    std::set<std::size_t> out{16};
    const auto u16 = [&](std::size_t p) {
        return static_cast<unsigned>(static_cast<unsigned char>(bytes[p]) |
                                     (static_cast<unsigned char>(bytes[p + 1]) << 8));
    };
    const auto u32 = [&](std::size_t p) { return u16(p) | (u16(p + 2) << 16); };
    int depth = 0;
    for (std::size_t p = 16; p < bytes.size();) {
        const unsigned id = u16(p);
        p += 2;
        if (id == 1 || id == 2)
            p += 4 + u32(p);
        else if (id == 3)
            p += 4;
        else if (id == 5)
            p += 16;
        else if (id == 6 || id == 7)
            p += 4 + 4 * std::size_t{u32(p)};
        else if (id == 10)
            ++depth;
        else if (id == 11 && --depth == 0)
            out.insert(p);
    }
    return out;
}

bool located(const std::string& message) {
    return contains(message, ": line ") || contains(message, ": byte offset ");
}

} // namespace

TEST_CASE("every prefix of a small real file loads (between top-level objects) or fails with a "
          "located error") {
    for (const char* file : {"assimp/test_cube_text.x", "assimp/test_cube_binary.x",
                             "assimp/test_cube_compressed.x"}) {
        CAPTURE(file);
        const auto path = kbtest::data_file(file);
        if (!path) return;
        const std::string bytes = read_file(*path);
        const bool text = bytes.compare(8, 4, "txt ") == 0;
        const std::set<std::size_t> ends = text ? text_boundaries(bytes)
                                           : bytes.compare(8, 4, "bin ") == 0
                                               ? binary_boundaries(bytes)
                                               : std::set<std::size_t>{};
        const result<io::xfile> full = load(bytes);
        REQUIRE(full);
        std::size_t loaded = 0;
        for (std::size_t n = 0; n <= bytes.size(); ++n) {
            CAPTURE(n);
            const std::string prefix = bytes.substr(0, n);
            bool complete = n == bytes.size();
            if (text && n >= 16) { // an object's end followed by white space only
                const std::size_t last = *std::prev(ends.upper_bound(n));
                complete =
                    complete || prefix.find_first_not_of(" \t\r\n", last) == std::string::npos;
            } else if (!text) {
                complete = complete || ends.count(n) > 0;
            }
            const result<io::xfile> r = load(prefix);
            if (complete) {
                REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
                CHECK(r->skeleton.size() <= full->skeleton.size());
                ++loaded;
            } else {
                REQUIRE_FALSE(r);
                CHECK(r.error().code == errc::parse_error);
                CHECK(located(r.error().message));
            }
            // Lenient mode keeps whatever complete objects came before the cut.
            const result<io::xfile> l = load(prefix, parse_mode::lenient);
            if (n >= 16) {
                REQUIRE(l);
                CHECK(l->skeleton.size() <= full->skeleton.size());
            }
        }
        // Each object end (and the bare header) gives at least one complete prefix.
        if (text)
            CHECK(loaded >= ends.size());
        else
            CHECK(loaded == std::max<std::size_t>(ends.size(), 1));
    }
}

TEST_CASE("random byte flips never crash: every load returns a value or a located error") {
    struct input {
        std::string name;
        std::string bytes;
        int rounds;
    };
    std::vector<input> inputs = {
        {"sample text", sample_text(), 400},
        {"sample bin", to_binary(sample_text(), 4), 400},
        {"sample bin 64", to_binary(sample_text(), 8), 200},
        {"sample tzip", to_mszip(sample_text(), 200), 200},
        {"sample bzip", to_mszip(to_binary(sample_text(), 4), 200), 200},
    };
    for (const char* file :
         {"assimp/test_cube_text.x", "assimp/test_cube_binary.x", "assimp/test_cube_compressed.x",
          "assimp/malformed_skinweights_oob.x", "assimp/Testwuson.X",
          "directx-sdk-legacy-samples/tiny.x", "directx-sdk-legacy-samples/wall_with_pillars.x"})
        if (const auto path = kbtest::data_file(file)) {
            const std::string bytes = read_file(*path);
            inputs.push_back({file, bytes, bytes.size() < 10000 ? 300 : 12});
        }
    kbtest::rng rng(2024);
    for (const input& in : inputs) {
        CAPTURE(in.name);
        for (int round = 0; round < in.rounds; ++round) {
            std::string bytes = in.bytes;
            const int flips = rng.integer(1, 8);
            for (int f = 0; f < flips; ++f) {
                // Most flips land in the data; some in the header and the compressed stream's
                // sizes.
                const std::size_t at = round % 5 == 0 ? static_cast<std::size_t>(rng.integer(0, 40))
                                                      : static_cast<std::size_t>(rng.integer(
                                                            0, static_cast<int>(bytes.size()) - 1));
                bytes[std::min(at, bytes.size() - 1)] ^= static_cast<char>(1 << rng.integer(0, 7));
            }
            if (round % 7 == 0)
                bytes.resize(
                    static_cast<std::size_t>(rng.integer(0, static_cast<int>(bytes.size()))));
            for (parse_mode mode : {parse_mode::strict, parse_mode::lenient}) {
                const result<io::xfile> r = load(bytes, mode);
                if (r) {
                    for (const io::xfile_mesh& m : r->meshes) {
                        for (std::uint32_t v : m.indices) REQUIRE(v < m.positions.size());
                        for (std::uint16_t b : m.skin.bone_indices)
                            REQUIRE(b < std::max<std::size_t>(m.skin.bones.size(), 1));
                    }
                    for (const io::xfile_animation_set& s : r->animation_sets)
                        REQUIRE(validate_clip(s.clip, r->skeleton));
                } else {
                    CAPTURE(r.error().message);
                    CHECK(!r.error().message.empty());
                    CHECK((located(r.error().message) ||
                           contains(r.error().message, "more than 1000 problems")));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Lenient mode (the default) repairs what has an obvious repair
// ---------------------------------------------------------------------------------------------

namespace {

const std::string identity16 = "1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0";

/// Loads in the default mode and requires success.
io::xfile load_default(const std::string& text) {
    const result<io::xfile> r = io::load_xfile_memory(text.data(), text.size(), {}, "sample.x");
    REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
    return *r;
}

} // namespace

TEST_CASE("the default mode is lenient, strict is the opt-in") {
    CHECK(io::load_options{}.mode == parse_mode::lenient);
}

TEST_CASE("rotation keys that are not unit length are normalised, with a warning naming them") {
    // The helper bones of a real character had |q| = 0.707 keys: they are rotations all the same.
    const std::string text = "xof 0303txt 0032\nFrame A { Frame B { } }\n"
                             "AnimationSet S { Animation { { B } AnimationKey { 0; 3;\n"
                             "  0;4;0.7071068,0.0,0.0,0.0;;,\n"
                             "  10;4;0.5,0.5,0.0,0.0;;,\n"
                             "  20;4;1.0,0.0,0.0,0.0;;; } } }\n";
    const io::xfile x = load_default(text);
    const clip& c = x.animation_sets.at(0).clip;
    REQUIRE(c.channels.size() == 1);
    const rotation_track<float>& r = c.channels[0].rotation;
    REQUIRE(r.size() == 3);
    CHECK(max_abs_diff(r.value(0), make_quat(1, 0, 0, 0)) < 1e-6f);
    const float h = std::sqrt(0.5f);
    CHECK(max_abs_diff(r.value(1), make_quat(h, -h, 0, 0)) < 1e-6f); // conjugated, then unit
    CHECK(r.value(2) == make_quat(1, 0, 0, 0));                       // a unit key is untouched
    CHECK(validate_clip(c, x.skeleton));
    REQUIRE(x.warnings.size() == 1);
    const io::load_warning& w = x.warnings[0];
    CHECK(w.action == io::warning_action::repaired);
    CHECK(w.code == errc::not_normalized);
    CHECK(w.index == 0);
    CHECK(contains(w.message, "sample.x: line 3, column 36: AnimationKey: rotation key 0 (tick 0) "
                              "is not unit length (|q| = 0.707107); normalised (|q| from 0.707107 "
                              "to 0.707107) (2 such problems here; the first is named)"));
    // Strict mode refuses the first.
    const result<io::xfile> strict = load(text);
    REQUIRE_FALSE(strict);
    CHECK(strict.error().code == errc::not_normalized);
    CHECK(strict.error().index == 0);
}

TEST_CASE("keys: NaN and zero rotations dropped, unsorted keys sorted, repeated times kept as a cut") {
    const std::string text =
        "xof 0303txt 0032\nFrame A { }\nAnimationSet S { Animation { { A }\n"
        " AnimationKey { 0; 4; 0;4;1.0,0.0,0.0,0.0;;, 5;4;0.0,0.0,0.0,0.0;;, "
        "10;4;1.#QNAN0,0.0,0.0,0.0;;, 15;4;0.0,1.0,0.0,0.0;;; }\n"
        " AnimationKey { 2; 5; 30;3;3.0,0.0,0.0;;, 10;3;1.0,0.0,0.0;;, 20;3;2.0,0.0,0.0;;, "
        "10;3;9.0,0.0,0.0;;, 0;3;0.0,0.0,0.0;;; } } }\n";
    const io::xfile x = load_default(text);
    const channel& ch = x.animation_sets.at(0).clip.channels.at(0);
    CHECK(ch.rotation.times() == std::vector<float>{0.0f, 15.0f});
    // Sorted stably: the two keys at tick 10 keep their file order, a cut from (1, 0, 0) to
    // (9, 0, 0) there.
    CHECK(ch.translation.times() == std::vector<float>{0.0f, 10.0f, 10.0f, 20.0f, 30.0f});
    CHECK(ch.translation.value(1) == glm::vec3(1, 0, 0));
    CHECK(ch.translation.value(2) == glm::vec3(9, 0, 0));
    CHECK(ch.translation.value(4) == glm::vec3(3, 0, 0));
    CHECK(sample_track(ch.translation, 9.5f).x == doctest::Approx(0.95f));
    CHECK(sample_track(ch.translation, 10.0f) == glm::vec3(9, 0, 0));
    CHECK(validate_clip(x.animation_sets[0].clip, x.skeleton));
    REQUIRE(x.warnings.size() == 2);
    CHECK(contains(x.warnings[0].message, "rotation key 1 (tick 5) is not a rotation (a zero, NaN "
                                          "or infinite quaternion); the key is dropped (2 such"));
    CHECK(x.warnings[0].action == io::warning_action::dropped);
    CHECK(contains(x.warnings[1].message, "position key 1: time 10 is before the time 30 of an "
                                          "earlier key; the keys are sorted by time"));
    CHECK(x.warnings[1].action == io::warning_action::repaired);
}

TEST_CASE("keys at one time are a cut in both modes: the first is approached, the last holds") {
    const std::string text =
        "xof 0303txt 0032\nFrame A { }\nAnimationSet S { Animation { { A }\n"
        " AnimationKey { 2; 4; 0;3;0.0,0.0,0.0;;, 10;3;1.0,0.0,0.0;;, 10;3;5.0,0.0,0.0;;, "
        "20;3;6.0,0.0,0.0;;; } } }\n";
    for (parse_mode mode : {parse_mode::lenient, parse_mode::strict}) {
        io::load_options o;
        o.mode = mode;
        const auto x = io::load_xfile_memory(text.data(), text.size(), o);
        REQUIRE(x);
        CHECK(x->warnings.empty());
        const channel& ch = x->animation_sets.at(0).clip.channels.at(0);
        CHECK(ch.translation.times() == std::vector<float>{0.0f, 10.0f, 10.0f, 20.0f});
        CHECK(sample_track(ch.translation, 5.0f).x == doctest::Approx(0.5f));
        CHECK(sample_track(ch.translation, 9.999f).x == doctest::Approx(0.9999f));
        CHECK(sample_track(ch.translation, 10.0f).x == 5.0f);
        CHECK(sample_track(ch.translation, 15.0f).x == doctest::Approx(5.5f));
    }
}

TEST_CASE("frame matrices: NaN, or a product with the parents' that overflows, become identity") {
    const std::string text =
        "xof 0303txt 0032\n"
        "Frame A { FrameTransformMatrix { 3e38,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,"
        "0.0,1.0;; }\n"
        "  Frame B { FrameTransformMatrix { 3e38,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,"
        "0.0,0.0,1.0;; } Frame C { } }\n"
        "  Frame D { FrameTransformMatrix { 1.#QNAN0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,"
        "0.0,0.0,0.0,1.0;; } Frame E { } } }\n";
    const io::xfile x = load_default(text);
    const skeleton& s = x.skeleton;
    CHECK(s.names() == std::vector<std::string>{"A", "B", "C", "D", "E"}); // children kept
    CHECK(s.bind_local()[0][0][0] == 3e38f);
    CHECK(s.bind_local()[1] == glm::mat4(1.0f));
    CHECK(s.bind_local()[3] == glm::mat4(1.0f));
    for (const glm::mat4& m : s.bind_model()) CHECK(is_finite(m));
    REQUIRE(x.warnings.size() == 2);
    CHECK(contains(x.warnings[0].message, "FrameTransformMatrix: the matrix has NaN or infinity; "
                                          "the frame keeps the identity"));
    CHECK(contains(x.warnings[1].message, "Frame 'B': its FrameTransformMatrix times its parents' "
                                          "matrices overflows (the bind-pose model matrix is not "
                                          "finite); the frame's matrix is replaced by the identity"));
    CHECK(x.warnings[1].index == 1);
}

TEST_CASE("skins: a NaN matrixOffset becomes the inverse bind-pose model matrix: bad entries go") {
    const std::string text =
        "xof 0303txt 0032\n"
        "Frame A { FrameTransformMatrix { 1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,2.0,3.0,"
        "4.0,1.0;; } }\n"
        "Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;;\n"
        "  SkinWeights { \"A\"; 3; 0, 9, 2; 1.0, 1.0, 1.#QNAN0; 1.#QNAN0" +
        identity16.substr(3) + ";; } }\n";
    const io::xfile x = load_default(text);
    const io::mesh_skin& k = x.meshes.at(0).skin;
    REQUIRE(k.bones.size() == 1);
    CHECK(k.bones[0].offset == translation(-2, -3, -4));
    CHECK(k.weights == std::vector<float>{1.0f, 0.0f, 0.0f});
    REQUIRE(x.warnings.size() == 4);
    CHECK(contains(x.warnings[0].message, "vertexIndices[1] = 9 is out of range"));
    CHECK(contains(x.warnings[1].message, "weights[2] is not finite (bone 'A'); that weight is "
                                          "dropped"));
    CHECK(contains(x.warnings[2].message, "matrixOffset has NaN or infinity (bone 'A'); it is "
                                          "replaced by the inverse of the bone's bind-pose model "
                                          "matrix"));
    CHECK(x.warnings[2].action == io::warning_action::repaired);
    CHECK(contains(x.warnings[3].message, "2 vertices have no bone influence"));
}

TEST_CASE("two Animations of one frame are merged where they do not overlap") {
    const std::string text =
        "xof 0303txt 0032\nFrame A { }\nFrame B { }\n"
        "AnimationSet S {\n"
        " Animation First { { A } AnimationKey { 0; 1; 0;4;1.0,0.0,0.0,0.0;;; } AnimationOptions { 1; 0; } }\n"
        " Animation Second { { A } AnimationKey { 2; 1; 0;3;1.0,2.0,3.0;;; }\n"
        "                    AnimationKey { 0; 1; 0;4;0.0,1.0,0.0,0.0;;; } }\n"
        " Animation Matrix { { A } AnimationKey { 4; 1; 0;16;" + identity16 + ";;; } }\n"
        " Animation Both { { B } AnimationKey { 2; 1; 0;3;1.0,2.0,3.0;;; }\n"
        "                  AnimationKey { 4; 1; 0;16;" + identity16 + ";;; } } }\n";
    const io::xfile x = load_default(text);
    const io::xfile_animation_set& set = x.animation_sets.at(0);
    const clip& c = set.clip;
    REQUIRE(c.channels.size() == 2);
    CHECK(set.animation_names == std::vector<std::string>{"First", "Both"});
    CHECK(set.options.at(0).present);
    const channel& a = c.channels[0];
    CHECK(a.rotation.value(0) == make_quat(1, 0, 0, 0)); // the first Animation's
    CHECK(a.translation.value(0) == glm::vec3(1, 2, 3)); // merged from the second
    CHECK(a.matrix.empty());
    const channel& b = c.channels[1];
    CHECK(b.has_matrix());
    CHECK_FALSE(b.has_trs());
    CHECK(validate_clip(c, x.skeleton));
    REQUIRE(x.warnings.size() == 3);
    CHECK(contains(x.warnings[0].message,
                   "Animation 'Second' animates frame 'A', which an earlier Animation of the set "
                   "animates; its position keys are merged into that Animation's channel; its "
                   "rotation keys are dropped (the earlier Animation's are kept)"));
    CHECK(contains(x.warnings[1].message, "Animation 'Matrix' animates frame 'A', which an earlier "
                                          "Animation of the set animates; its matrix keys are "
                                          "dropped"));
    CHECK(contains(x.warnings[2].message, "Animation 'Both' has matrix keys and rotation, scale or "
                                          "position keys; the rotation, scale and position keys "
                                          "are dropped"));
}

TEST_CASE("faces that make no triangle are dropped alone: normals and materials stay parallel") {
    const std::string text =
        "xof 0303txt 0032\n"
        "Mesh { 4; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 1.0;1.0;0.0;, 0.0;1.0;0.0;;\n"
        "  4; 3;0,1,2;, 2;0,1;, 3;0,2,7;, 3;0,2,3;;\n"
        "  MeshNormals { 1; 0.0;0.0;1.0;; 4; 3;0,0,0;, 2;0,0;, 3;0,0,0;, 3;0,0,0;; }\n"
        "  MeshMaterialList { 3; 6; 0, 1, 1, 2, 0, 0;;\n"
        "    Material { 1.0;0.0;0.0;1.0;; 0.0; 0.0;0.0;0.0;; 0.0;0.0;0.0;; }\n"
        "    Material { 0.0;1.0;0.0;1.0;; 0.0; 0.0;0.0;0.0;; 0.0;0.0;0.0;; }\n"
        "    Material { 0.0;0.0;1.0;1.0;; 0.0; 0.0;0.0;0.0;; 0.0;0.0;0.0;; } } }\n";
    for (const std::string& bytes : {text, to_binary(text, 4)}) {
        const io::xfile x = load_default(bytes);
        const io::xfile_mesh& m = x.meshes.at(0);
        CHECK(m.face_count == 4);
        CHECK(m.indices == std::vector<std::uint32_t>{0, 1, 2, 0, 2, 3});
        CHECK(m.triangle_faces == std::vector<std::uint32_t>{0, 3});
        CHECK(m.normal_indices.size() == m.indices.size());
        CHECK(m.triangle_materials == std::vector<std::uint32_t>{0, 2});
        REQUIRE(x.warnings.size() == 2);
        CHECK(contains(x.warnings[0].message, "face 1 has 2 corners; a face needs 3 or more; the "
                                              "face makes no triangle (2 such problems here"));
        CHECK(contains(x.warnings[1].message, "nFaceIndexes is 6, the mesh has 4 faces; the extra "
                                              "indexes are ignored"));
    }
}

TEST_CASE("binary faces with fewer than 3 corners say so, not that the file is too short") {
    const std::string text =
        "xof 0303txt 0032\nMesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 2;0,1;; }";
    for (const std::string& bytes : {text, to_binary(text, 4), to_binary(text, 8, 2)}) {
        const result<io::xfile> r = load(bytes);
        REQUIRE_FALSE(r);
        CAPTURE(r.error().message);
        CHECK(contains(r.error().message, "face 0 has 2 corners; a face needs 3 or more"));
        CHECK(r.error().index == 0);
    }
}

TEST_CASE("materials: indexes past nMaterials and missing materials use one default material") {
    const std::string text =
        "xof 0303txt 0032\n"
        "Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 2; 3;0,1,2;, 3;0,2,1;;\n"
        "  MeshMaterialList { 3; 2; 0, 5;; Material { 1.0;0.0;0.0;1.0;; 0.0; 0.0;0.0;0.0;; "
        "0.0;0.0;0.0;; } } }\n";
    const io::xfile x = load_default(text);
    const io::xfile_mesh& m = x.meshes.at(0);
    REQUIRE(m.materials.size() == 2);
    CHECK(m.materials[0].diffuse == glm::vec4(1, 0, 0, 1));
    CHECK(m.materials[1].diffuse == glm::vec4(1.0f)); // the default
    CHECK(m.triangle_materials == std::vector<std::uint32_t>{0, 1});
    REQUIRE(x.warnings.size() == 2);
    CHECK(contains(x.warnings[0].message, "face 1: material index 5 is out of range (nMaterials "
                                          "3); the face uses a default material"));
    CHECK(contains(x.warnings[1].message, "nMaterials is 3 but 1 materials follow; faces that use a "
                                          "missing one use a default material"));
}

TEST_CASE("names in messages are bounded excerpts, with NUL and other bytes escaped") {
    std::string name = "bad";
    name += '\0';
    name += "\x01name";
    const std::string text = "xof 0303txt 0032\nFrame " + name + " { }\nMesh { 3; 0.0;0.0;0.0;, "
                             "1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;; SkinWeights { \"" +
                             name + std::string(5000, 'x') + "\"; 1; 0; 1.0; " + identity16 +
                             ";; } }\n";
    const io::xfile x = load_default(text);
    CHECK(x.skeleton.name(0) == name); // the name itself is kept as written
    CHECK_FALSE(x.meshes.at(0).is_skinned()); // its only bone is dropped: a rigid mesh now
    REQUIRE(x.warnings.size() == 1);
    const std::string& m = x.warnings[0].message;
    CAPTURE(m);
    CHECK(m.find('\0') == std::string::npos);
    CHECK(contains(m, "SkinWeights names frame 'bad\\x00\\x01namexxx"));
    CHECK(contains(m, "xxx...'"));
    CHECK(m.size() < 400);
}

// ---------------------------------------------------------------------------------------------
// Limits, and hostile inputs: time and memory stay small
// ---------------------------------------------------------------------------------------------

TEST_CASE("each load_options limit exceeded is an error naming it, in either mode") {
    const struct {
        const char* name;
        std::size_t io::load_options::*limit;
        std::size_t value;
        const char* message;
    } cases[] = {
        {"objects", &io::load_options::max_objects, 20,
         "the file has more data objects and Material references than load_options::max_objects "
         "(20) allows"},
        {"joints", &io::load_options::max_joints, 3,
         "the file has more frames than load_options::max_joints (3) allows"},
        {"meshes", &io::load_options::max_meshes, 0,
         "the file has more Mesh objects than load_options::max_meshes (0) allows"},
        {"vertices", &io::load_options::max_vertices, 4,
         "the file has more vertices than load_options::max_vertices (4) allows"},
        {"keys", &io::load_options::max_keys, 4,
         "the file has more animation keys than load_options::max_keys (4) allows"},
    };
    for (const auto& c : cases)
        for (parse_mode mode : {parse_mode::strict, parse_mode::lenient}) {
            CAPTURE(c.name);
            io::load_options options;
            options.mode = mode;
            options.*c.limit = c.value;
            for (const std::string& bytes : {sample_text(), to_binary(sample_text(), 4)}) {
                const result<io::xfile> r =
                    io::load_xfile_memory(bytes.data(), bytes.size(), options, "sample.x");
                REQUIRE_FALSE(r);
                CAPTURE(r.error().message);
                CHECK(r.error().code == errc::unsupported);
                CHECK(contains(r.error().message, c.message));
                CHECK(located(r.error().message));
            }
        }
    io::load_options options;
    options.max_decompressed_bytes = 1000;
    for (parse_mode mode : {parse_mode::strict, parse_mode::lenient}) {
        options.mode = mode;
        const std::string zipped = to_mszip(sample_text());
        const result<io::xfile> r =
            io::load_xfile_memory(zipped.data(), zipped.size(), options, "sample.x");
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::unsupported);
        CHECK(contains(r.error().message, "sample.x: byte offset 16: the file inflates to " +
                                              std::to_string(sample_text().size()) +
                                              " bytes, more than "
                                              "load_options::max_decompressed_bytes (1000)"));
    }
}

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

/// How many times slower than natively this program runs: KEYBLEND_TEST_SLOWDOWN (1 to 100) when
/// set, as ctest sets it for a cross build's tests, which run under an emulator; else 1.
unsigned slowdown() {
    const char* env = std::getenv("KEYBLEND_TEST_SLOWDOWN");
    const long n = env ? std::strtol(env, nullptr, 10) : 1;
    return n >= 1 && n <= 100 ? static_cast<unsigned>(n) : 1u;
}

/// Runs `load` in a child process whose address space may grow by at most `memory_mb` beyond the
/// parent's (RLIMIT_AS; not under AddressSanitizer, whose shadow memory needs terabytes of it),
/// killed after `seconds` (SIGALRM; ten times that under the sanitizers, times slowdown()). `load` returns whether
/// the outcome was the expected one (it prints what it found otherwise). Returns the wall time
/// when the child exited normally with success, a negative number otherwise.
/// KEYBLEND_TEST_IN_PROCESS=1 runs `load` in this process instead, unbounded (for a debugger).
template <class Load>
double bounded(Load&& load, std::size_t memory_mb, unsigned seconds) {
    std::fflush(nullptr);
    const auto start = std::chrono::steady_clock::now();
    if (std::getenv("KEYBLEND_TEST_IN_PROCESS") != nullptr) {
        const bool ok = load();
        return ok ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                  : -1.0;
    }
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // Whatever happens, this process ends here: not in doctest's handlers, which would carry
        // on with the other tests.
        for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM}) std::signal(sig, SIG_DFL);
        if (!sanitized) {
            long pages = 0;
            if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
                if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
                std::fclose(f);
            }
            const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
                                 (static_cast<rlim_t>(memory_mb) << 20);
            const rlimit l{limit, limit};
            if (pages == 0 || setrlimit(RLIMIT_AS, &l) != 0) _exit(4);
        }
        alarm((sanitized ? seconds * 10 : seconds) * slowdown());
        bool ok = false;
#if !defined(KEYBLEND_NO_EXCEPTIONS)
        try {
            ok = load();
        } catch (const std::exception& e) { // std::bad_alloc past the limit
            std::fprintf(stderr, "hostile.x: %s\n", e.what());
            _exit(5);
        }
#else
        ok = load(); // without exceptions an allocation past the limit aborts: the child fails
#endif
        _exit(ok ? 0 : 3);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const std::string how = WIFSIGNALED(status)
                                    ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                    : "exited with " + std::to_string(WEXITSTATUS(status));
        const std::string what = "the child " + how;
        MESSAGE(what);
        return -1.0;
    }
    return elapsed;
}

/// In a child process (see bounded): loads `bytes` with `options` and checks that the outcome is
/// an error containing `error_part` (or success when it is empty, with at most `max_warnings`
/// warnings).
bool loads_as_expected(const std::string& bytes, const io::load_options& options,
                       const std::string& error_part, std::size_t max_warnings = 1000) {
    const result<io::xfile> r = io::load_xfile_memory(bytes.data(), bytes.size(), options, "hostile.x");
    if (!error_part.empty()) {
        if (!r) {
            if (contains(r.error().message, error_part)) return true;
            std::fprintf(stderr, "hostile.x: expected an error with '%s', got '%s'\n",
                         error_part.c_str(), r.error().message.substr(0, 300).c_str());
        } else {
            std::fprintf(stderr, "hostile.x: loaded; expected an error with '%s'\n",
                         error_part.c_str());
        }
        return false;
    }
    if (!r) {
        std::fprintf(stderr, "hostile.x: %s\n", r.error().message.substr(0, 300).c_str());
        return false;
    }
    std::size_t longest = 0;
    for (const io::load_warning& w : r->warnings) longest = std::max(longest, w.message.size());
    if (r->warnings.size() > max_warnings || longest > 2000) {
        std::fprintf(stderr, "hostile.x: %zu warnings, the longest %zu characters\n",
                     r->warnings.size(), longest);
        return false;
    }
    return true;
}

/// Time in seconds that each hostile input may take in an optimised, unsanitized build (ten
/// times that unoptimised; times slowdown() under an emulator). Each was sized to take from seconds to minutes, or gigabytes, before
/// keyblend bounded them (measured with the loader before: 200k influences 8.4 s, 100k material
/// references 40 s, 20k GUID references 9.3 s, on this project's machine under load).
#if defined(__OPTIMIZE__)
const double quick = 3.0 * slowdown();
#else
const double quick = 30.0 * slowdown();
#endif

} // namespace

TEST_CASE("hostile: compressed files announcing more than they hold allocate nothing for it") {
    const std::string frames(32768 / 8 * 8, ' ');
    SUBCASE("4 GB announced: refused at once, past max_decompressed_bytes") {
        const std::string bytes = mszip_repeating("Frame A { }", frames, 6, 0xfffffff0u);
        const double t = bounded([&] {
            return loads_as_expected(bytes, {}, "the file inflates to 4294967280 bytes, more than "
                                                "load_options::max_decompressed_bytes");
        }, 64, 10);
        CHECK(t >= 0.0);
        if (!sanitized) CHECK(t < quick);
    }
    SUBCASE("250 MB announced, 200 KB there: the buffer grows with what inflates") {
        std::string bytes = mszip_repeating("Frame A { }", frames, 6, 250u << 20);
        bytes += std::string(200000, '\0'); // no block: the rest of the file is not a block
        const double t = bounded([&] {
            return loads_as_expected(bytes, {parse_mode::strict}, "expected the block signature");
        }, 64, 10);
        CHECK(t >= 0.0);
    }
}

TEST_CASE("hostile: decompression amplification stops at a limit, in little memory") {
    // 32768-byte blocks of the same few bytes deflate to almost nothing: 64 MB from ~150 KB.
    const auto repeat = [](const std::string& unit) {
        std::string block;
        while (block.size() + unit.size() <= 32768) block += unit;
        block.resize(32768, ' ');
        return block;
    };
    const std::size_t blocks = 2048; // 64 MB inflated
    const struct {
        const char* what;
        std::string first, unit, error;
    } cases[] = {
        {"empty frames", "", "Frame {}", "load_options::max_joints (65536)"},
        {"empty meshes", "", "Mesh {0;0;}", "load_options::max_meshes (65536)"},
        {"empty animations", "AnimationSet {", "Animation {} ",
         "load_options::max_objects (262144)"},
        {"materials", "", "Material {1;1;1;1;;1;1;1;1;;1;1;1;;}", "load_options::max_objects"},
        {"material references",
         "Material M {1;1;1;1;;1;1;1;1;;1;1;1;;} Mesh {3;0;0;0;,1;0;0;,0;1;0;;1;3;0,1,2;; "
         "MeshMaterialList {1;1;0;;",
         "{ M } ", "load_options::max_objects"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.what);
        const std::string bytes = mszip_repeating(c.first + " ", repeat(c.unit), blocks);
        CHECK(bytes.size() < 400000);
        for (parse_mode mode : {parse_mode::strict, parse_mode::lenient}) {
            const double t = bounded([&] { return loads_as_expected(bytes, {mode}, c.error); },
                                     400, 30);
            CHECK(t >= 0.0);
            if (!sanitized) CHECK(t < quick);
        }
    }
}

TEST_CASE("hostile: one warning per object and kind, with bounded names") {
    // A 2 MB frame name and 1000 references by GUID inside it: once 1000 warnings of 2 MB each.
    std::string text = "xof 0303txt 0032\nFrame " + std::string(2 << 20, 'n') +
                       " { <11111111-2222-3333-4444-555555555555>\n";
    for (int i = 0; i < 1000; ++i) text += "{ <11111111-2222-3333-4444-555555555555> }\n";
    text += "}\n";
    const std::string bytes = to_mszip(text);
    CHECK(bytes.size() < 100000);
    const double t = bounded([&] { return loads_as_expected(bytes, {}, "", 1); }, 128, 20);
    CHECK(t >= 0.0);
    if (!sanitized) CHECK(t < quick);
    const io::xfile x = load_default(bytes);
    REQUIRE(x.warnings.size() == 1);
    CHECK(contains(x.warnings[0].message, "the reference to <11111111-2222-3333-4444-555555555555> "
                                          "is ignored; references inside frames are ignored "
                                          "(instancing is not supported) (1000 such problems"));
    CHECK(x.warnings[0].message.size() < 400);
}

TEST_CASE("hostile: a count nothing follows allocates nothing for it") {
    // Lenient nMaterials = 8000000 with no material after it: once 895 MB of default materials.
    const std::string text =
        "xof 0303txt 0032\nMesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;;\n"
        "  MeshMaterialList { 8000000; 1; 7999999;; } }\n";
    const double t = bounded([&] { return loads_as_expected(text, {}, "", 1); }, 32, 10);
    CHECK(t >= 0.0);
    const io::xfile x = load_default(text);
    CHECK(x.meshes.at(0).materials.size() == 1);
    CHECK(x.meshes[0].triangle_materials == std::vector<std::uint32_t>{0});
}

TEST_CASE("hostile: quadratic paths are near-linear") {
    io::load_options many;
    many.max_warnings = 100000;
    SUBCASE("200k influences on one vertex (once an insertion sort: 16 s)") {
        std::string text = "xof 0303txt 0032\nFrame A { }\nMesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, "
                           "0.0;1.0;0.0;; 1; 3;0,1,2;; SkinWeights { \"A\"; 200000;\n";
        for (int i = 0; i < 200000; ++i) text += "0,";
        for (int i = 0; i < 200000; ++i) text += i % 2 ? "0.5," : "0.25,";
        text += identity16 + ";; } }\n";
        const double t = bounded([&] { return loads_as_expected(text, {}, "", 3); }, 256, 20);
        CHECK(t >= 0.0);
        if (!sanitized) CHECK(t < quick);
    }
    SUBCASE("100k material references against 100k materials (once a search each: 15 s)") {
        std::string text = "xof 0303txt 0032\n";
        for (int i = 0; i < 100000; ++i)
            text += "Material M" + std::to_string(i) + " { 1;1;1;1;; 0; 0;0;0;; 0;0;0;; }\n";
        text += "Mesh { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;;\n"
                "  MeshMaterialList { 100000; 1; 99999;;\n";
        for (int i = 0; i < 100000; ++i) text += "{ M" + std::to_string(99999 - i) + " }\n";
        text += "} }\n";
        const double t = bounded([&] { return loads_as_expected(text, {}, "", 0); }, 512, 20);
        CHECK(t >= 0.0);
        if (!sanitized) CHECK(t < quick);
    }
    SUBCASE("messages jumping back through a 20 MB file (once a recount from the start each)") {
        // Each mesh's notes come after its bones', at the mesh's start: every message before
        // the last one counted lines from the start of the file again.
        std::string text = "xof 0303txt 0032\n";
        std::string vertices;
        for (int i = 0; i < 3000; ++i) vertices += "0.0;0.0;0.0;,\n";
        text += "Frame A { }\n";
        for (int m = 0; m < 500; ++m)
            text += "Mesh { 3000; " + vertices + "; 0; SkinWeights { \"Nope\"; 1; 0; 1.0; " +
                    identity16 + ";; } SkinWeights { \"A\"; 1; 0; 1.0; " + identity16 + ";; } }\n";
        const double t = bounded([&] { return loads_as_expected(text, many, "", 1500); }, 1024, 30);
        CHECK(t >= 0.0);
        if (!sanitized) CHECK(t < quick);
    }
    SUBCASE("an 8 MB set name and 2000 Animations (once a label copied each: 13 s)") {
        std::string text = "xof 0303txt 0032\n";
        for (int i = 0; i < 2000; ++i) text += "Frame F" + std::to_string(i) + " { }\n";
        text += "AnimationSet " + std::string(8 << 20, 's') + " {\n";
        for (int i = 0; i < 2000; ++i)
            text += "Animation { { F" + std::to_string(i) + " } AnimationKey { 2; 1; 0;3;0,0,0;;; } }\n";
        text += "}\n";
        const double t = bounded([&] { return loads_as_expected(text, {}, "", 0); }, 256, 20);
        CHECK(t >= 0.0);
        if (!sanitized) CHECK(t < quick);
    }
    SUBCASE("20k Animations with unsorted keys (once validate_clip restarted each: 96 s)") {
        std::string text = "xof 0303txt 0032\n";
        for (int i = 0; i < 20000; ++i) text += "Frame F" + std::to_string(i) + " { }\n";
        text += "AnimationSet S {\n";
        for (int i = 0; i < 20000; ++i)
            text += "Animation { { F" + std::to_string(i) +
                    " } AnimationKey { 2; 2; 5;3;0,0,0;;, 1;3;0,0,0;;; } }\n";
        text += "}\n";
        const double t = bounded([&] { return loads_as_expected(text, many, "", 20000); }, 512, 30);
        CHECK(t >= 0.0);
        if (!sanitized) CHECK(t < quick);
    }
    SUBCASE("20k references by GUID among 60k frames (once a scan of every frame each)") {
        const auto guid = [](int i) {
            char g[40];
            std::snprintf(g, sizeof g, "<%08x-0000-0000-0000-000000000000>", static_cast<unsigned>(i));
            return std::string(g);
        };
        std::string text = "xof 0303txt 0032\n";
        for (int i = 0; i < 60000; ++i) text += "Frame { " + guid(i) + " }\n";
        text += "AnimationSet S {\n";
        for (int i = 0; i < 20000; ++i)
            text += "Animation { { " + guid(59999 - i) + " } AnimationKey { 2; 1; 0;3;0,0,0;;; } }\n";
        text += "}\n";
        const double t = bounded([&] { return loads_as_expected(text, {}, "", 0); }, 512, 30);
        CHECK(t >= 0.0);
        if (!sanitized) CHECK(t < quick);
        const io::xfile x = load_default(text);
        REQUIRE(x.animation_sets.at(0).clip.channels.size() == 20000);
        CHECK(x.animation_sets[0].clip.channels[0].joint == 59999);
    }
}

// ---------------------------------------------------------------------------------------------
// decompress_xfile
// ---------------------------------------------------------------------------------------------

TEST_CASE("decompress_xfile gives the uncompressed file, which loads the same") {
    std::vector<unsigned char> out(100000, 7); // replaced, its memory reused
    for (const std::string& plain : {sample_text(), to_binary(sample_text(), 4)}) {
        const std::string zipped = to_mszip(plain, 100);
        const status st = io::decompress_xfile(zipped.data(), zipped.size(), out);
        REQUIRE_MESSAGE(st, (st ? "" : st.error().message));
        CHECK(std::string(out.begin(), out.end()) == plain);
    }
    const status plain =
        io::decompress_xfile(sample_text().data(), sample_text().size(), out, {}, "sample.x");
    REQUIRE_FALSE(plain);
    CHECK(plain.error().code == errc::invalid_argument);
    CHECK(contains(plain.error().message, "sample.x: byte offset 8: the file is not compressed"));
    CHECK(out.empty());
    std::string corrupt = to_mszip(sample_text(), 300);
    corrupt[24] = 'X';
    const status bad = io::decompress_xfile(corrupt.data(), corrupt.size(), out);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == errc::parse_error);
    CHECK(out.empty());
    io::load_options small;
    small.max_decompressed_bytes = 100;
    const std::string zipped = to_mszip(sample_text());
    const status big = io::decompress_xfile(zipped.data(), zipped.size(), out, small);
    REQUIRE_FALSE(big);
    CHECK(big.error().code == errc::unsupported);
}

TEST_CASE("the real compressed files inflate to what their uncompressed twins hold") {
    const auto zip = kbtest::data_file("assimp/test_cube_compressed.x");
    const auto bin = kbtest::data_file("assimp/test_cube_binary.x");
    const auto wall = kbtest::data_file("directx-sdk-legacy-samples/wall_with_pillars.x");
    if (!zip || !bin || !wall) return;
    const std::string zipped = read_file(*zip);
    std::vector<unsigned char> out;
    REQUIRE(io::decompress_xfile(zipped.data(), zipped.size(), out));
    CHECK(std::string(out.begin(), out.end()) == read_file(*bin));
    const std::string w = read_file(*wall);
    REQUIRE(io::decompress_xfile(w.data(), w.size(), out));
    CHECK(out.size() == 2852227); // the size its header announces
    const result<io::xfile> a = load(w);
    const result<io::xfile> b = io::load_xfile_memory(out.data(), out.size(), {parse_mode::strict}, "w.x");
    REQUIRE(a);
    REQUIRE(b);
    check_same(*a, *b);
}

// ---------------------------------------------------------------------------------------------
// A dump of everything loaded, for comparing builds (tests/xfile_compare.cmake)
// ---------------------------------------------------------------------------------------------

namespace {

/// Exact values (hexadecimal floats), but -0 prints as 0: with GLM_FORCE_INTRINSICS GLM's SIMD
/// glm::inverse (the offset added for a mesh's frame) gives -0 where the scalar one gives 0.
void dump_floats(std::string& out, const float* v, std::size_t n) {
    char buf[32];
    for (std::size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, " %a", v[i] == 0.0f ? 0.0 : static_cast<double>(v[i]));
        out += buf;
    }
}
void dump(std::string& out, const glm::vec2& v) { const float f[] = {v.x, v.y}; dump_floats(out, f, 2); }
void dump(std::string& out, const glm::vec3& v) { const float f[] = {v.x, v.y, v.z}; dump_floats(out, f, 3); }
void dump(std::string& out, const glm::vec4& v) { const float f[] = {v.x, v.y, v.z, v.w}; dump_floats(out, f, 4); }
void dump(std::string& out, const glm::quat& q) { const float f[] = {q.w, q.x, q.y, q.z}; dump_floats(out, f, 4); }
void dump(std::string& out, const glm::mat4& m) { for (int c = 0; c < 4; ++c) dump(out, m[c]); }
void dump(std::string& out, float f) { dump_floats(out, &f, 1); }
template <class T>
void dump(std::string& out, const char* what, const std::vector<T>& v) {
    out += std::string("\n  ") + what + " " + std::to_string(v.size()) + ":";
    for (const T& x : v) {
        if constexpr (std::is_integral<T>::value)
            out += " " + std::to_string(x);
        else
            dump(out, x);
    }
}
template <class V>
void dump(std::string& out, const char* what, const track<V, float>& t) {
    dump(out, what, t.times());
    dump(out, "  values", t.values());
}

std::string dump(const io::xfile& x) {
    std::string out = std::string("format ") + io::to_string(x.format) + " " +
                      std::to_string(x.float_bits) + " " + std::to_string(x.version);
    const skeleton& s = x.skeleton;
    for (std::size_t j = 0; j < s.size(); ++j) {
        out += "\njoint " + s.name(j) + " " + std::to_string(s.parent(j));
        dump(out, s.bind_local()[j]);
    }
    for (const io::xfile_mesh& m : x.meshes) {
        out += "\nmesh " + m.name + " " + std::to_string(m.joint) + " " + std::to_string(m.face_count);
        dump(out, "positions", m.positions);
        dump(out, "indices", m.indices);
        dump(out, "triangle_faces", m.triangle_faces);
        dump(out, "normals", m.normals);
        dump(out, "normal_values", m.normal_values);
        dump(out, "normal_indices", m.normal_indices);
        dump(out, "texcoords", m.texcoords);
        dump(out, "triangle_materials", m.triangle_materials);
        for (const io::material& mat : m.materials) {
            out += "\n  material " + mat.name + " " + mat.texture_file;
            dump(out, mat.diffuse);
            dump(out, mat.power);
            dump(out, mat.specular);
            dump(out, mat.emissive);
        }
        for (const io::skin_bone& b : m.skin.bones) {
            out += "\n  bone " + b.name + " " + std::to_string(b.joint);
            dump(out, b.offset);
        }
        dump(out, "bone_indices", m.skin.bone_indices);
        dump(out, "weights", m.skin.weights);
    }
    for (const io::xfile_animation_set& a : x.animation_sets) {
        const clip& c = a.clip;
        out += "\nset " + c.name + " " + std::to_string(c.channels.size());
        dump(out, c.duration);
        dump(out, c.ticks_per_second);
        for (const channel& ch : c.channels) {
            out += "\n channel " + std::to_string(ch.joint);
            dump(out, "rotation", ch.rotation);
            dump(out, "translation", ch.translation);
            dump(out, "scale", ch.scale);
            dump(out, "matrix", ch.matrix);
        }
    }
    for (const io::load_warning& w : x.warnings) out += "\nwarning " + w.message;
    return out + "\n";
}

} // namespace

TEST_CASE("xfile dump: every value loaded, for comparing builds (KEYBLEND_XFILE_DUMP=<file>)") {
    std::string out;
    const std::string repairs =
        "xof 0303txt 0032\nFrame A { FrameTransformMatrix { 1.#QNAN0" + identity16.substr(3) +
        ";; } }\nMesh { 3; 0.0;0.0;0.0;, 1.#INF00;0.0;0.0;, 0.0;1.0;0.0;; 2; 3;0,1,2;, 2;0,1;;\n"
        "  MeshNormals { 1; 0.0;0.0;1.0;; 2; 3;0,0,0;, 2;0,0;; } }\n"
        "AnimationSet S { Animation { { A } AnimationKey { 0; 2; 5;4;0.7,0.0,0.0,0.0;;, "
        "0;4;0.0,0.0,0.7,0.0;;; } } }\n";
    for (const std::string& bytes : {sample_text(), to_binary(sample_text(), 4),
                                     to_binary(sample_text(), 8), to_mszip(sample_text(), 200),
                                     repairs}) {
        const result<io::xfile> r = io::load_xfile_memory(bytes.data(), bytes.size());
        REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
        out += dump(*r);
    }
    for (const expected_file& e : data_table())
        if (const auto path = kbtest::data_file(e.path)) {
            const result<io::xfile> r = io::load_xfile(*path);
            REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
            out += "file " + std::string(e.path) + "\n" + dump(*r);
        }
    CHECK(out.size() > 1000);
    CHECK(contains(out, "\nwarning ")); // the repairs are part of what is compared
    if (const char* file = std::getenv("KEYBLEND_XFILE_DUMP")) {
        std::ofstream f(file, std::ios::binary);
        f << out;
        REQUIRE(f.good());
    }
}

TEST_CASE("values beyond float's range become infinities, then are repaired or refused as such") {
    // A 64-bit binary float of 1e300 (and the same decimal in text) is no float: infinity.
    const std::string text = "xof 0303txt 0032\nMesh { 3; 0.0;0.0;0.0;, 1.0e300;0.0;0.0;, "
                             "0.0;-1.0e300;0.0;; 1; 3;0,1,2;; }\n";
    for (const std::string& bytes : {text, to_binary(text, 8), to_binary(text, 4)}) {
        const result<io::xfile> strict = load(bytes);
        REQUIRE_FALSE(strict);
        CHECK(strict.error().code == errc::non_finite);
        CHECK(strict.error().index == 1);
        const io::xfile x = load_default(bytes);
        CHECK(x.meshes.at(0).positions[1] == glm::vec3(0.0f));
        CHECK(x.meshes[0].positions[2] == glm::vec3(0.0f));
        REQUIRE(x.warnings.size() == 1);
        CHECK(contains(x.warnings[0].message, "vertex 1 has NaN or infinity; set to (0, 0, 0)"));
    }
    // Too small for a float: zero, keeping the sign.
    const result<io::xfile> tiny = load("xof 0303txt 0032\nFrame A { FrameTransformMatrix { "
                                        "1.0,1.0e-60,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,"
                                        "0.0,-1.0e-60,1.0;; } }");
    REQUIRE_MESSAGE(tiny, (tiny ? "" : tiny.error().message));
    CHECK(tiny->skeleton.bind_local()[0][0][1] == 0.0f);
    CHECK(tiny->skeleton.bind_local()[0][3][2] == 0.0f);
#if !defined(__FAST_MATH__) // -ffast-math has no signed zeros
    CHECK(std::signbit(tiny->skeleton.bind_local()[0][3][2]));
#endif
}

TEST_CASE("vertices whose only bones name missing frames follow the mesh's own frame") {
    const std::string skin =
        "Mesh M { 3; 0.0;0.0;0.0;, 1.0;0.0;0.0;, 0.0;1.0;0.0;; 1; 3;0,1,2;;\n"
        "  SkinWeights { \"A\"; 1; 0; 1.0; " + identity16 + ";; }\n"
        "  SkinWeights { \"Gone\"; 1; 1; 1.0; " + identity16 + ";; } }\n";
    const std::string framed = "xof 0303txt 0032\nFrame A { }\nFrame F { FrameTransformMatrix { "
                               "1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,5.0,0.0,0.0,1.0;; }\n" +
                               skin + "}\n";
    const io::xfile x = load_default(framed);
    const io::mesh_skin& k = x.meshes.at(0).skin;
    REQUIRE(k.bones.size() == 2);
    CHECK(k.bones[1].name == "F");
    CHECK(k.bones[1].joint == 1);
    CHECK(k.bones[1].offset == translation(-5, 0, 0));
    REQUIRE(k.influences_per_vertex == 1);
    CHECK(k.bone_indices == std::vector<std::uint16_t>{0, 1, 0});
    CHECK(k.weights == std::vector<float>{1.0f, 1.0f, 0.0f});
    REQUIRE(x.warnings.size() == 3);
    CHECK(contains(x.warnings[0].message, "SkinWeights names frame 'Gone', which does not exist"));
    CHECK(contains(x.warnings[1].message, "Mesh 'M': 1 vertices lost their only influences with a "
                                          "dropped bone; they follow the mesh's frame 'F'"));
    CHECK(contains(x.warnings[2].message, "Mesh 'M': 1 vertices have no bone influence"));
    // A top-level mesh has no frame to follow: the vertex has no influence left.
    const io::xfile top = load_default("xof 0303txt 0032\nFrame A { }\n" + skin);
    const io::mesh_skin& t = top.meshes.at(0).skin;
    CHECK(t.bones.size() == 1);
    CHECK(t.weights == std::vector<float>{1.0f, 0.0f, 0.0f});
    REQUIRE(top.warnings.size() == 2);
    CHECK(contains(top.warnings[1].message, "2 vertices have no bone influence"));
}
