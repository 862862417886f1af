// keyblend — the one reader of .X data objects, over either lexer (xfile_lexers.hpp). Included by
// xfile.impl.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
//
// The reader knows the layouts of the standard templates it uses and reads their values in order,
// as one stream of numbers (see xfile.hpp). It records what it reads in a `document`: frames,
// meshes and sets as the file gives them, names unresolved. Resolving names (SkinWeights and
// Animations to frames) and building keyblend's types happens afterwards (xfile.impl.hpp), once
// every frame is known: a SkinWeights may name a frame that comes later in the file.
#pragma once

#include "xfile_lexers.hpp"

#include <glm/gtc/type_ptr.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace keyblend {
namespace io {
namespace impl {

/// Nesting deeper than this is refused (the reader recurses once per level).
inline constexpr std::size_t max_nesting = 256;
/// Lenient mode gives up after this many warnings: the input is not a damaged .X file.
inline constexpr std::size_t max_warnings = 1000;

inline constexpr std::size_t no_frame = static_cast<std::size_t>(-1);

struct frame_record {
    std::string name;
    std::string guid; // lowercase 8-4-4-4-12, or empty
    joint_index parent = no_parent;
    glm::mat4 bind = glm::mat4(1.0f);
    bool has_matrix = false;
    std::size_t offset = 0; // where the Frame starts, for messages
};

struct skin_record {
    std::string frame;
    std::vector<std::uint32_t> vertices;
    std::vector<float> weights;
    glm::mat4 offset_matrix = glm::mat4(1.0f);
    std::size_t offset = 0;
};

struct mesh_record {
    xfile_mesh mesh;
    std::size_t frame = no_frame; // the enclosing Frame's index, or no_frame
    std::vector<std::uint32_t> face_sizes;
    std::vector<skin_record> skins;
    std::size_t offset = 0;
};

struct animation_record {
    std::string name;
    std::string target;      // the referenced frame's name, or empty when referenced by GUID
    std::string target_guid; // the reference's GUID, or empty
    bool has_target = false;
    std::size_t target_offset = 0;
    channel tracks;
    animation_options options;
    std::array<bool, 4> has_kind{}; // rotation, scale, position, matrix
    std::size_t offset = 0;
};

struct set_record {
    std::string name;
    std::vector<animation_record> animations;
    std::size_t ticks_objects_before = 0; // AnimTicksPerSecond objects met before this set
    std::size_t offset = 0;
};

struct ticks_record {
    std::uint32_t value = 0;
    std::size_t offset = 0;
};

struct named_material {
    std::string name;
    std::string guid;
    xfile_material material;
};

/// What the reader found, before names are resolved.
struct document {
    std::vector<frame_record> frames;
    std::vector<mesh_record> meshes;
    std::vector<set_record> sets;
    std::vector<ticks_record> ticks;
    std::vector<named_material> materials; // top-level, for `{ Name }` references
    std::vector<error> warnings;
};

inline bool same_bits(const glm::vec3& a, const glm::vec3& b) {
    const float x[3] = {a.x, a.y, a.z}, y[3] = {b.x, b.y, b.z};
    return std::memcmp(x, y, sizeof x) == 0;
}

/// A data object's header: `Type [name] { [<GUID>]`.
struct object_header {
    std::string_view type;
    std::string_view name;
    std::string guid; // lowercase 8-4-4-4-12, or empty
    std::size_t offset = 0;
};

/// A reference `{ [Name] [<GUID>] }`: to an object by name, or by GUID when it has no name.
struct reference_to {
    std::string_view name;
    std::string guid;
    std::size_t offset = 0;

    /// "'Name'", or "<GUID>" for a reference by GUID alone.
    std::string label() const {
        return name.empty() ? "<" + guid + ">" : "'" + std::string(name) + "'";
    }
};

template <class Lexer>
class reader {
public:
    reader(Lexer& lex, const xfile_options& options, std::string_view source, document& doc)
        : lex_(lex), lenient_(options.mode == parse_mode::lenient), source_(source), doc_(doc) {}

    /// Reads the whole stream. False with error() set on failure.
    bool run() {
        for (;;) {
            if (too_many_) return false;
            const token t = lex_.peek();
            if (t == token::end) return true;
            if (top_level_item(t)) continue;
            if (!lenient_ || too_many_) return false;
            warn(std::move(error_));
            if (fatal_) return !too_many_; // the rest cannot be read: keep what came before
            if (!lex_.skip_token() || !lex_.skip_to_depth(0)) return true;
            if (too_many_) return false;
        }
    }

    const error& failure() const { return error_; }

    /// A message in this reader's format, for problems found after reading (unresolved names).
    std::string message(std::size_t offset, std::string_view what) const {
        std::string m(source_);
        m += ": ";
        m += lex_.where(offset);
        m += ": ";
        m += what;
        return m;
    }

private:
    // --- errors -------------------------------------------------------------------------------

    /// Records an error at `offset` in the current object's context; returns false.
    bool fail(errc code, std::size_t offset, std::string_view what,
              std::size_t index = error::no_index) {
        std::string m(source_);
        m += ": ";
        m += lex_.where(offset);
        m += ": ";
        if (!type_.empty()) {
            m += type_;
            if (!name_.empty()) {
                m += " '";
                append_excerpt(m, name_, 80);
                m += "'";
            }
            m += ": ";
        }
        m += what;
        error_ = keyblend::impl::make_error(code, std::move(m), index);
        return false;
    }

    /// "expected <what>, found <next token>" at the next token; the end of the input, or a token
    /// the lexer cannot step over, makes the error fatal (nothing after it can be read).
    bool expected(std::string_view what) {
        const token t = lex_.peek();
        fatal_ = t == token::end || t == token::invalid;
        std::string m = "expected ";
        m += what;
        m += ", found ";
        m += lex_.describe();
        return fail(errc::parse_error, lex_.offset(), m);
    }

    /// In lenient mode records a warning and returns true (false once there are too many); in
    /// strict mode fails.
    bool problem(errc code, std::size_t offset, std::string_view what,
                 std::size_t index = error::no_index) {
        fail(code, offset, what, index);
        if (!lenient_) return false;
        warn(std::move(error_));
        return !too_many_;
    }

    void warn(error e) {
        if (doc_.warnings.size() >= max_warnings) {
            too_many_ = true;
            error_ = keyblend::impl::make_error(
                errc::parse_error, std::string(source_) + ": more than " +
                                       std::to_string(max_warnings) +
                                       " problems; giving up (this is not a damaged .X file)");
            return;
        }
        doc_.warnings.push_back(std::move(e));
    }

    /// Runs `parse` for an object whose '{' was just read. In lenient mode, a failure that is not
    /// fatal drops the object: the rest of it is skipped and a warning recorded.
    template <class F>
    bool nested(const object_header& h, F&& parse) {
        const std::string_view saved_type = type_, saved_name = name_;
        type_ = h.type;
        name_ = h.name;
        const std::size_t depth = lex_.depth();
        bool ok = parse();
        if (!ok && lenient_ && !fatal_ && !too_many_) {
            warn(std::move(error_));
            ok = !too_many_;
            if (ok && !lex_.skip_to_depth(depth - 1))
                ok = expected("'}' closing the dropped object");
        }
        type_ = saved_type;
        name_ = saved_name;
        return ok;
    }

    // --- values -------------------------------------------------------------------------------

    bool uint(std::uint32_t& v, const char* what) {
        if (lex_.read_uint(v)) return true;
        return expected(std::string(what) + " (an integer)");
    }

    /// A count, refused when the rest of the input cannot hold `per_item` values per item.
    bool count(std::uint32_t& n, const char* what, std::size_t per_item) {
        if (!uint(n, what)) return false;
        if (per_item > 0 && n > lex_.max_values_left() / per_item)
            return fail(errc::parse_error, lex_.last_offset(),
                        std::string(what) + " is " + std::to_string(n) +
                            ", more than the rest of the file can hold");
        return true;
    }

    bool word(std::uint16_t& v, const char* what) {
        std::uint32_t x = 0;
        if (!uint(x, what)) return false;
        if (x > 0xffffu)
            return fail(errc::parse_error, lex_.last_offset(),
                        std::string(what) + " is " + std::to_string(x) +
                            ", more than a WORD holds");
        v = static_cast<std::uint16_t>(x);
        return true;
    }

    bool real(float& v, const char* what) {
        if (lex_.read_float(v)) return true;
        return expected(std::string(what) + " (a number)");
    }

    bool reals(float* v, std::size_t n, const char* what) {
        if (lex_.read_floats(v, n) == n) return true;
        return expected(std::string(what) + " (a number)");
    }

    /// n vectors of N floats, read as one run of floats (binary lists are copied in bulk).
    template <int N, class Vec>
    bool vectors(std::vector<Vec>& out, std::size_t n, const char* what) {
        // Straight into the vectors' floats (GLM's vecN are N packed floats, as value_ptr uses).
        static_assert(sizeof(Vec) == N * sizeof(float), "packed float vectors");
        out.resize(n);
        return n == 0 || reals(glm::value_ptr(out[0]), n * N, what);
    }

    /// The n indices of face f into face_, each below `limit`. An index out of range is reported
    /// at the face's corner count, naming the corner.
    bool face(std::uint32_t n, std::size_t limit, std::uint32_t f, const char* what,
              const char* limit_name) {
        const std::size_t at = lex_.last_offset();
        face_.resize(n);
        if (lex_.read_uints(face_.data(), n) != n)
            return expected(std::string("a ") + what + " (an integer)");
        for (std::uint32_t c = 0; c < n; ++c)
            if (face_[c] >= limit)
                return fail(errc::parse_error, at,
                            "face " + std::to_string(f) + ", corner " + std::to_string(c) + ": " +
                                what + " " + std::to_string(face_[c]) + " is out of range (" +
                                limit_name + " " + std::to_string(limit) + ")",
                            face_[c]);
        return true;
    }

    /// Binary files: as many whole faces as the open (or next) INTEGER_LIST holds from face f on,
    /// each a corner count n with valid(f, n) and n indices below `limit`, handed to
    /// on_face(f, face_.data(), n) and consumed; f advances past them. Stops, consuming nothing
    /// of it, at a face that is not whole in the list or not valid, for the value-by-value path
    /// to read (and report). Returns whether it read any: never in text, where values are parsed
    /// one at a time anyway.
    template <class Valid, class OnFace>
    bool bulk_faces(std::uint32_t& f, std::uint32_t face_count, std::size_t limit, Valid&& valid,
                    OnFace&& on_face) {
        const unsigned char* p = nullptr;
        const std::size_t available = lex_.uint_run(p);
        std::size_t used = 0;
        while (f < face_count && used < available) {
            const std::uint32_t n = load_le32(p + 4 * used);
            if (!valid(f, n) || n > available - used - 1) break;
            if (face_.size() < n) face_.resize(n);
            bool in_range = true;
            for (std::uint32_t c = 0; c < n; ++c) {
                face_[c] = load_le32(p + 4 * (used + 1 + c));
                in_range &= face_[c] < limit;
            }
            if (!in_range) break;
            on_face(f, face_.data(), n);
            used += 1 + std::size_t{n};
            ++f;
        }
        lex_.skip_uints(used);
        return used > 0;
    }

    bool vec3(glm::vec3& v, const char* what) {
        return real(v.x, what) && real(v.y, what) && real(v.z, what);
    }

    bool matrix(glm::mat4& m, const char* what) {
        float v[16];
        if (!reals(v, 16, what)) return false;
        m = glm::make_mat4(v);
        return true;
    }

    bool string(std::string_view& s, const char* what) {
        if (lex_.read_string(s)) return true;
        return expected(std::string(what) + " (a string)");
    }

    // --- structure ----------------------------------------------------------------------------

    /// `Type [name] { [<GUID>]`. Precondition: peek() is a name.
    bool header(object_header& h) {
        h.offset = lex_.offset();
        if (!lex_.read_name(h.type)) return expected("a data object");
        h.name = {};
        if (lex_.peek() == token::name && !lex_.read_name(h.name))
            return expected("an object name");
        if (lex_.peek() != token::open_brace)
            return expected("'{' after '" + std::string(h.type) + "'");
        lex_.take_brace();
        if (lex_.depth() > max_nesting)
            return fail(errc::parse_error, h.offset,
                        "data objects nested more than " + std::to_string(max_nesting) + " deep");
        h.guid.clear();
        if (lex_.peek() == token::guid && !lex_.read_guid(h.guid)) return expected("a GUID");
        return true;
    }

    /// `{ [Name] [<GUID>] }`. Precondition: peek() is '{'.
    bool reference(reference_to& r) {
        r.offset = lex_.offset();
        lex_.take_brace();
        r.name = {};
        r.guid.clear();
        if (lex_.peek() == token::name && !lex_.read_name(r.name)) return expected("a name");
        if (lex_.peek() == token::guid && !lex_.read_guid(r.guid)) return expected("a GUID");
        if (lex_.peek() != token::close_brace) return expected("'}' closing the reference");
        lex_.take_brace();
        return true;
    }

    /// The rest of an object: nested objects (given to `child`, which returns false on failure),
    /// references (given to `ref` with their offset), up to and including the closing '}'.
    template <class Child, class Ref>
    bool body(Child&& child, Ref&& ref) {
        for (;;) {
            switch (lex_.peek()) {
            case token::close_brace: lex_.take_brace(); return true;
            case token::open_brace: {
                reference_to r;
                if (!reference(r) || !ref(r)) return false;
                break;
            }
            case token::name: {
                object_header h;
                if (!header(h) || !child(h)) return false;
                break;
            }
            case token::number:
            case token::string:
                return expected("'}' (more values than the counts before them declare)");
            default: return expected("a nested data object, a reference or '}'");
            }
        }
    }

    /// Skips an object whose '{' was just read.
    bool skip_object() {
        if (lex_.skip_to_depth(lex_.depth() - 1)) return true;
        return expected("'}' closing the object");
    }

    /// The end of an object without children of interest: any nested object or reference is
    /// skipped (closed templates have none; unknown extensions may).
    bool end() {
        return body([&](const object_header&) { return skip_object(); },
                    [](const reference_to&) { return true; });
    }

    // --- data objects -------------------------------------------------------------------------

    bool top_level_item(token t) {
        if (t == token::template_kw) {
            std::string_view ignored;
            lex_.skip_token(); // the keyword
            if (!lex_.read_name(ignored)) return expected("a template name");
            if (lex_.peek() != token::open_brace) return expected("'{' opening the template");
            lex_.take_brace();
            return skip_object();
        }
        if (t == token::open_brace) { // a top-level reference means nothing to a loader
            reference_to ignored;
            return reference(ignored);
        }
        if (t != token::name) return expected("a template or a data object");
        object_header h;
        if (!header(h)) return false;
        if (h.type == "Frame") return nested(h, [&] { return frame(h, no_parent); });
        if (h.type == "Mesh") return nested(h, [&] { return mesh(h, no_frame); });
        if (h.type == "Material")
            return nested(h, [&] {
                xfile_material m;
                if (!material(h, m)) return false;
                doc_.materials.push_back({std::string(h.name), h.guid, std::move(m)});
                return true;
            });
        if (h.type == "AnimationSet") return nested(h, [&] { return animation_set(h); });
        if (h.type == "AnimTicksPerSecond") return nested(h, [&] { return ticks_per_second(h); });
        return skip_object();
    }

    bool frame(const object_header& h, joint_index parent) {
        if (doc_.frames.size() >= static_cast<std::size_t>(std::numeric_limits<joint_index>::max()))
            return fail(errc::parse_error, h.offset, "too many frames");
        const auto index = static_cast<joint_index>(doc_.frames.size());
        doc_.frames.push_back(
            {std::string(h.name), h.guid, parent, glm::mat4(1.0f), false, h.offset});
        return body(
            [&](const object_header& c) {
                if (c.type == "FrameTransformMatrix")
                    return nested(
                        c, [&] { return frame_transform(c, static_cast<std::size_t>(index)); });
                if (c.type == "Frame") return nested(c, [&] { return frame(c, index); });
                if (c.type == "Mesh")
                    return nested(c, [&] { return mesh(c, static_cast<std::size_t>(index)); });
                return skip_object();
            },
            [&](const reference_to& ref) {
                // D3DX would instance the referenced object here; keyblend does not.
                warn(keyblend::impl::make_error(
                    errc::unsupported,
                    message(ref.offset, "Frame '" + std::string(h.name) + "': the reference to " +
                                            ref.label() +
                                            " is ignored (instancing is not supported)")));
                return !too_many_;
            });
    }

    bool frame_transform(const object_header& h, std::size_t index) {
        frame_record& f = doc_.frames[index];
        if (f.has_matrix)
            return fail(errc::duplicate, h.offset, "the frame already has a FrameTransformMatrix");
        glm::mat4 m;
        if (!matrix(m, "frameMatrix")) return false;
        if (!is_finite(m))
            return fail(errc::non_finite, lex_.last_offset(), "the matrix has NaN or infinity");
        if (!end()) return false;
        f.bind = m;
        f.has_matrix = true;
        return true;
    }

    bool mesh(const object_header& h, std::size_t frame) {
        mesh_record r;
        r.mesh.name = std::string(h.name);
        r.frame = frame;
        r.offset = h.offset;
        std::uint32_t vertex_count = 0, face_count = 0;
        if (!count(vertex_count, "nVertices", 3)) return false;
        if (!vectors<3>(r.mesh.positions, vertex_count, "a vertex coordinate")) return false;
        if (!count(face_count, "nFaces", 4)) return false;
        r.mesh.face_count = face_count;
        r.face_sizes.reserve(face_count);
        r.mesh.indices.reserve(std::size_t{face_count} * 3);
        r.mesh.triangle_faces.reserve(face_count);
        const auto add_face = [&r](std::uint32_t f, const std::uint32_t* corner, std::uint32_t n) {
            for (std::uint32_t c = 2; c < n; ++c) {
                r.mesh.indices.push_back(corner[0]);
                r.mesh.indices.push_back(corner[c - 1]);
                r.mesh.indices.push_back(corner[c]);
                r.mesh.triangle_faces.push_back(f);
            }
            r.face_sizes.push_back(n);
        };
        for (std::uint32_t f = 0; f < face_count;) {
            if (bulk_faces(f, face_count, vertex_count, [](std::uint32_t, std::uint32_t n) { return n >= 3; },
                           add_face))
                continue;
            std::uint32_t n = 0;
            if (!count(n, "nFaceVertexIndices", 1)) return false;
            if (n < 3)
                return fail(errc::parse_error, lex_.last_offset(),
                            "face " + std::to_string(f) + " has " + std::to_string(n) +
                                " corners; a face needs 3 or more",
                            f);
            if (!face(n, vertex_count, f, "vertex index", "nVertices")) return false;
            add_face(f, face_.data(), n);
            ++f;
        }
        bool has_normals = false, has_texcoords = false, has_materials = false, has_header = false;
        const auto once = [&](bool& seen, const object_header& c) {
            if (!seen) return seen = true;
            return fail(errc::duplicate, c.offset,
                        "a second " + std::string(c.type) + " in one Mesh");
        };
        if (!body(
                [&](const object_header& c) {
                    if (c.type == "MeshNormals")
                        return nested(c, [&] { return once(has_normals, c) && normals(r); });
                    if (c.type == "MeshTextureCoords")
                        return nested(c, [&] { return once(has_texcoords, c) && texcoords(r); });
                    if (c.type == "MeshMaterialList")
                        return nested(
                            c, [&] { return once(has_materials, c) && material_list(c, r); });
                    if (c.type == "XSkinMeshHeader")
                        return nested(c, [&] { return once(has_header, c) && skin_header(r); });
                    if (c.type == "SkinWeights")
                        return nested(c, [&] { return skin_weights(c, r); });
                    return skip_object();
                },
                [](const reference_to&) { return true; }))
            return false;
        doc_.meshes.push_back(std::move(r));
        return true;
    }

    bool normals(mesh_record& r) {
        xfile_mesh& m = r.mesh;
        std::uint32_t normal_count = 0, face_count = 0;
        if (!count(normal_count, "nNormals", 3)) return false;
        std::vector<glm::vec3> values;
        if (!vectors<3>(values, normal_count, "a normal coordinate")) return false;
        if (!count(face_count, "nFaceNormals", 4)) return false;
        if (face_count != r.face_sizes.size())
            return fail(errc::parse_error, lex_.last_offset(),
                        "nFaceNormals is " + std::to_string(face_count) + ", the mesh has " +
                            std::to_string(r.face_sizes.size()) + " faces");
        std::vector<std::uint32_t> corners;
        corners.reserve(m.indices.size());
        const auto add_face = [&corners](std::uint32_t, const std::uint32_t* corner, std::uint32_t n) {
            for (std::uint32_t c = 2; c < n; ++c) {
                corners.push_back(corner[0]);
                corners.push_back(corner[c - 1]);
                corners.push_back(corner[c]);
            }
        };
        const auto same_corners = [&r](std::uint32_t f, std::uint32_t n) { return n == r.face_sizes[f]; };
        for (std::uint32_t f = 0; f < face_count;) {
            if (bulk_faces(f, face_count, normal_count, same_corners, add_face)) continue;
            std::uint32_t n = 0;
            if (!uint(n, "nFaceVertexIndices")) return false;
            if (n != r.face_sizes[f])
                return fail(errc::parse_error, lex_.last_offset(),
                            "face normal " + std::to_string(f) + " has " + std::to_string(n) +
                                " corners, the face has " + std::to_string(r.face_sizes[f]),
                            f);
            if (!face(n, normal_count, f, "normal index", "nNormals")) return false;
            add_face(f, face_.data(), n);
            ++f;
        }
        if (!end()) return false;
        // Per-vertex normals from the corners: a vertex takes its first corner's normal.
        constexpr std::uint32_t unassigned = std::numeric_limits<std::uint32_t>::max();
        std::vector<std::uint32_t> first(m.positions.size(), unassigned);
        std::size_t conflicts = 0;
        for (std::size_t i = 0; i < corners.size(); ++i) {
            std::uint32_t& given = first[m.indices[i]];
            if (given == unassigned)
                given = corners[i];
            else if (given != corners[i] && !same_bits(values[given], values[corners[i]]))
                ++conflicts; // compared by bits, so that a NaN normal equals itself
        }
        m.normals.assign(m.positions.size(), glm::vec3(0.0f));
        for (std::size_t v = 0; v < first.size(); ++v)
            if (first[v] != unassigned) m.normals[v] = values[first[v]];
        m.normals_per_vertex_exact = conflicts == 0;
        m.normal_values = std::move(values);
        m.normal_indices = std::move(corners);
        if (conflicts > 0)
            warn(keyblend::impl::make_error(
                errc::unsupported,
                message(r.offset, "Mesh '" + m.name + "': " + std::to_string(conflicts) +
                                      " face corners give their vertex a different normal than its "
                                      "first corner; normals holds the first, normal_values and "
                                      "normal_indices the exact data")));
        return true;
    }

    bool texcoords(mesh_record& r) {
        std::uint32_t n = 0;
        if (!count(n, "nTextureCoords", 2)) return false;
        if (n != r.mesh.positions.size())
            return fail(errc::parse_error, lex_.last_offset(),
                        "nTextureCoords is " + std::to_string(n) + ", the mesh has " +
                            std::to_string(r.mesh.positions.size()) + " vertices");
        std::vector<glm::vec2> uv;
        if (!vectors<2>(uv, n, "a texture coordinate") || !end()) return false;
        r.mesh.texcoords = std::move(uv);
        return true;
    }

    bool material_list(const object_header& h, mesh_record& r) {
        xfile_mesh& m = r.mesh;
        std::uint32_t material_count = 0, index_count = 0;
        if (!count(material_count, "nMaterials", 1)) return false;
        if (!count(index_count, "nFaceIndexes", 1)) return false;
        const std::size_t faces = r.face_sizes.size();
        if (index_count > faces)
            return fail(errc::parse_error, lex_.last_offset(),
                        "nFaceIndexes is " + std::to_string(index_count) + ", the mesh has " +
                            std::to_string(faces) + " faces");
        std::vector<std::uint32_t> face_material(faces, 0);
        const std::size_t indexes_at =
            lex_.last_offset(); // nFaceIndexes: bad ones are reported here
        if (lex_.read_uints(face_material.data(), index_count) != index_count)
            return expected("a face material index (an integer)");
        for (std::uint32_t f = 0; f < index_count; ++f) {
            if (face_material[f] >= material_count)
                return fail(errc::parse_error, indexes_at,
                            "face " + std::to_string(f) + ": material index " +
                                std::to_string(face_material[f]) + " is out of range (nMaterials " +
                                std::to_string(material_count) + ")",
                            face_material[f]);
        }
        for (std::size_t f = index_count; f < faces && index_count > 0; ++f)
            face_material[f] = face_material[index_count - 1];
        std::vector<xfile_material> materials;
        if (!body(
                [&](const object_header& c) {
                    if (c.type != "Material") return skip_object();
                    return nested(c, [&] {
                        xfile_material mat;
                        if (!material(c, mat)) return false;
                        materials.push_back(std::move(mat));
                        return true;
                    });
                },
                [&](const reference_to& ref) {
                    // The latest Material before the reference with that name (or GUID).
                    for (auto it = doc_.materials.rbegin(); it != doc_.materials.rend(); ++it)
                        if (ref.name.empty() ? !ref.guid.empty() && it->guid == ref.guid
                                             : it->name == ref.name) {
                            materials.push_back(it->material);
                            return true;
                        }
                    if (!problem(errc::not_found, ref.offset,
                                 "no Material " + ref.label() + " comes before this reference" +
                                     (lenient_ ? "; a default material is used" : "")))
                        return false;
                    materials.emplace_back();
                    materials.back().name = std::string(ref.name);
                    return true;
                }))
            return false;
        if (materials.size() != material_count) {
            if (!problem(errc::parse_error, h.offset,
                         "nMaterials is " + std::to_string(material_count) + " but " +
                             std::to_string(materials.size()) + " materials follow" +
                             (lenient_ ? "; missing ones are default materials" : "")))
                return false;
            if (materials.size() < material_count) materials.resize(material_count);
        }
        m.materials = std::move(materials);
        m.triangle_materials.clear();
        if (material_count > 0) {
            m.triangle_materials.reserve(m.triangle_faces.size());
            for (std::uint32_t f : m.triangle_faces)
                m.triangle_materials.push_back(face_material[f]);
        }
        return true;
    }

    bool material(const object_header& h, xfile_material& m) {
        m.name = std::string(h.name);
        if (!real(m.face_color.r, "faceColor") || !real(m.face_color.g, "faceColor") ||
            !real(m.face_color.b, "faceColor") || !real(m.face_color.a, "faceColor") ||
            !real(m.power, "power") || !vec3(m.specular, "specularColor") ||
            !vec3(m.emissive, "emissiveColor"))
            return false;
        return body(
            [&](const object_header& c) {
                if (c.type != "TextureFilename" && c.type != "TextureFileName")
                    return skip_object();
                return nested(c, [&] {
                    std::string_view file;
                    if (!string(file, "filename") || !end()) return false;
                    m.texture_file = std::string(file);
                    return true;
                });
            },
            [](const reference_to&) { return true; });
    }

    bool skin_header(mesh_record& r) {
        skin_mesh_header s;
        if (!word(s.max_weights_per_vertex, "nMaxSkinWeightsPerVertex") ||
            !word(s.max_weights_per_face, "nMaxSkinWeightsPerFace") ||
            !word(s.bone_count, "nBones") || !end())
            return false;
        s.present = true;
        r.mesh.skin.header = s;
        return true;
    }

    bool skin_weights(const object_header& h, mesh_record& r) {
        skin_record s;
        s.offset = h.offset;
        std::string_view frame_name;
        if (!string(frame_name, "transformNodeName")) return false;
        s.frame = std::string(frame_name);
        std::uint32_t n = 0;
        if (!count(n, "nWeights", 2)) return false;
        const std::size_t vertex_count = r.mesh.positions.size();
        s.vertices.resize(n);
        s.weights.resize(n);
        std::vector<bool> drop;
        for (std::uint32_t i = 0; i < n; ++i) {
            if (!uint(s.vertices[i], "a vertex index")) return false;
            if (s.vertices[i] >= vertex_count) {
                if (!problem(errc::parse_error, lex_.last_offset(),
                             "vertexIndices[" + std::to_string(i) + "] = " +
                                 std::to_string(s.vertices[i]) + " is out of range (the mesh has " +
                                 std::to_string(vertex_count) + " vertices; bone '" + s.frame +
                                 "')" + (lenient_ ? "; that weight is dropped" : ""),
                             s.vertices[i]))
                    return false;
                drop.resize(n, false);
                drop[i] = true;
            }
        }
        if (!reals(s.weights.data(), n, "a weight")) return false;
        for (std::uint32_t i = 0; i < n; ++i) {
            if (!is_finite(s.weights[i])) {
                if (!problem(errc::non_finite, h.offset,
                             "weights[" + std::to_string(i) + "] is not finite (bone '" + s.frame +
                                 "')" + (lenient_ ? "; that weight is dropped" : ""),
                             i))
                    return false;
                drop.resize(n, false);
                drop[i] = true;
            }
        }
        if (!matrix(s.offset_matrix, "matrixOffset")) return false;
        if (!is_finite(s.offset_matrix))
            return fail(errc::non_finite, lex_.last_offset(), "matrixOffset has NaN or infinity");
        if (!end()) return false;
        if (!drop.empty()) {
            std::size_t k = 0;
            for (std::size_t i = 0; i < n; ++i)
                if (!drop[i]) {
                    s.vertices[k] = s.vertices[i];
                    s.weights[k] = s.weights[i];
                    ++k;
                }
            s.vertices.resize(k);
            s.weights.resize(k);
        }
        r.skins.push_back(std::move(s));
        return true;
    }

    bool ticks_per_second(const object_header& h) {
        std::uint32_t v = 0;
        if (!uint(v, "AnimTicksPerSecond") || !end()) return false;
        if (v == 0)
            return problem(errc::invalid_argument, h.offset,
                           "0 ticks per second" + std::string(lenient_ ? "; ignored" : ""));
        doc_.ticks.push_back({v, h.offset});
        return true;
    }

    bool animation_set(const object_header& h) {
        const std::size_t index = doc_.sets.size();
        doc_.sets.push_back({std::string(h.name), {}, doc_.ticks.size(), h.offset});
        return body(
            [&](const object_header& c) {
                if (c.type != "Animation") return skip_object();
                return nested(c, [&] { return animation(c, index); });
            },
            [](const reference_to&) { return true; });
    }

    bool animation(const object_header& h, std::size_t set) {
        animation_record a;
        a.name = std::string(h.name);
        a.offset = h.offset;
        if (!body(
                [&](const object_header& c) {
                    if (c.type == "AnimationKey")
                        return nested(c, [&] { return animation_key(c, a); });
                    if (c.type == "AnimationOptions")
                        return nested(c, [&] {
                            if (a.options.present)
                                return fail(errc::duplicate, c.offset, "a second AnimationOptions");
                            animation_options o;
                            if (!uint(o.open_closed, "openclosed") ||
                                !uint(o.position_quality, "positionquality") || !end())
                                return false;
                            o.present = true;
                            a.options = o;
                            return true;
                        });
                    return skip_object();
                },
                [&](const reference_to& ref) {
                    if (a.has_target)
                        return problem(errc::duplicate, ref.offset,
                                       "a second frame reference (" + ref.label() + ")" +
                                           (lenient_ ? "; ignored" : ""));
                    a.has_target = true;
                    a.target = std::string(ref.name);
                    a.target_guid = ref.guid;
                    a.target_offset = ref.offset;
                    return true;
                }))
            return false;
        doc_.sets[set].animations.push_back(std::move(a));
        return true;
    }

    bool animation_key(const object_header& h, animation_record& a) {
        static const char* const kinds[] = {"rotation", "scale", "position", "matrix"};
        std::uint32_t type = 0, n = 0;
        if (!uint(type, "keyType")) return false;
        if (type > 4)
            return fail(errc::parse_error, lex_.last_offset(),
                        "unknown keyType " + std::to_string(type) +
                            " (0 rotation, 1 scale, 2 position, 3 or 4 matrix)");
        const std::size_t kind = type == 4 ? 3 : type;
        const std::uint32_t values = kind == 0 ? 4 : kind == 3 ? 16 : 3;
        if (a.has_kind[kind])
            return fail(errc::duplicate, h.offset,
                        std::string("a second ") + kinds[kind] + " AnimationKey in one Animation");
        if (!count(n, "nKeys", 2 + values)) return false;
        channel ch; // the keys go into a.tracks once the whole AnimationKey has been read
        bool warned = false;
        switch (kind) {
        case 0: ch.rotation.reserve(n); break;
        case 1: ch.scale.reserve(n); break;
        case 2: ch.translation.reserve(n); break;
        default: ch.matrix.reserve(n); break;
        }
        float v[16];
        for (std::uint32_t k = 0; k < n; ++k) {
            std::uint32_t time = 0, given = 0;
            if (!uint(time, "a key time") || !uint(given, "nValues")) return false;
            if (given != values)
                return fail(errc::parse_error, lex_.last_offset(),
                            std::string(kinds[kind]) + " key " + std::to_string(k) + " has " +
                                std::to_string(given) + " values, keyType " + std::to_string(type) +
                                " has " + std::to_string(values),
                            k);
            if (!reals(v, values, "a key value")) return false;
            const float t = static_cast<float>(time);
            if (t > max_exact_tick && !warned) {
                warned = true;
                warn(keyblend::impl::make_error(
                    errc::unsupported,
                    message(lex_.last_offset(), "key time " + std::to_string(time) +
                                                    " is past 2^24 ticks and "
                                                    "is rounded to a float")));
                if (too_many_) return false;
            }
            switch (kind) {
            case 0: ch.rotation.push_back(t, make_quat(v[0], -v[1], -v[2], -v[3])); break;
            case 1: ch.scale.push_back(t, glm::vec3(v[0], v[1], v[2])); break;
            case 2: ch.translation.push_back(t, glm::vec3(v[0], v[1], v[2])); break;
            default: ch.matrix.push_back(t, glm::make_mat4(v)); break;
            }
        }
        if (!end()) return false;
        switch (kind) {
        case 0: a.tracks.rotation = std::move(ch.rotation); break;
        case 1: a.tracks.scale = std::move(ch.scale); break;
        case 2: a.tracks.translation = std::move(ch.translation); break;
        default: a.tracks.matrix = std::move(ch.matrix); break;
        }
        a.has_kind[kind] = true;
        return true;
    }

    Lexer& lex_;
    std::vector<std::uint32_t> face_; // scratch for face()
    bool lenient_;
    std::string_view source_;
    document& doc_;
    error error_;
    bool fatal_ = false;    // the error leaves nothing readable after it
    bool too_many_ = false; // lenient mode met max_warnings problems
    std::string_view type_; // the object being read, for messages
    std::string_view name_;
};

} // namespace impl
} // namespace io
} // namespace keyblend
