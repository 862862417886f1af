// keyblend — the one reader of .X data objects, over either lexer (xfile_lexers.hpp). Included by
// xfile.impl.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
//
// The reader knows the layouts of the standard templates it uses and reads their values in order,
// as one stream of numbers (see xfile.hpp). It records what it reads in a `document`: frames,
// meshes and sets as the file gives them, names unresolved; values that need no name (vertex data,
// keys) are checked and, in lenient mode, repaired here, where their place is known. Resolving
// names (SkinWeights and Animations to frames) and building keyblend's types happens afterwards
// (xfile.impl.hpp), once every frame is known: a SkinWeights may name a frame that comes later.
#pragma once

#include "xfile_lexers.hpp"

#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace keyblend {
namespace io {
inline namespace KEYBLEND_IO_GLM_LAYOUT {
namespace impl {

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
    bool offset_finite = true; // false: lenient mode replaces it (xfile.impl.hpp)
    std::size_t offset = 0;
};

struct mesh_record {
    xfile_mesh mesh;
    std::size_t frame = no_frame; // the enclosing Frame's index, or no_frame
    std::vector<std::uint32_t> face_sizes;
    std::vector<bool> face_dropped; // empty, or per face: it makes no triangle (lenient mode)
    std::vector<skin_record> skins;
    std::size_t offset = 0;

    bool makes_triangles(std::uint32_t f) const {
        return face_sizes[f] >= 3 && (face_dropped.empty() || !face_dropped[f]);
    }
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

/// What the reader found, before names are resolved.
struct document {
    std::vector<frame_record> frames;
    std::vector<mesh_record> meshes;
    std::vector<set_record> sets;
    std::vector<ticks_record> ticks;
    std::vector<io::material> materials; // top-level, for `{ Name }` references
    // The latest top-level Material with each name / GUID: an index into `materials`.
    std::unordered_map<std::string, std::size_t> material_by_name, material_by_guid;
    std::vector<load_warning> warnings;
    xfile_contents contents;
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

    /// "'Name'", or "<GUID>" for a reference by GUID alone (both as bounded excerpts).
    std::string label() const {
        if (!name.empty()) return quoted_excerpt(name);
        std::string out = "<";
        append_excerpt(out, guid, 64);
        return out + ">";
    }
};

template <class Lexer>
class reader {
public:
    reader(Lexer& lex, const load_options& options, std::string_view source, document& doc)
        : lex_(lex), options_(options), lenient_(options.mode == parse_mode::lenient),
          source_(source), doc_(doc) {}

    /// Reads the whole stream. False with failure() set on failure.
    bool run() {
        for (;;) {
            if (halted_) return false;
            const token t = lex_.peek();
            if (t == token::end) break;
            if (top_level_item(t)) continue;
            if (halted_ || !lenient_) return false;
            if (!warn(dropped(std::move(error_), "the object is dropped"))) return false;
            if (fatal_) break; // the rest cannot be read: keep what came before
            if (!lex_.skip_token() || !lex_.skip_to_depth(0)) break;
        }
        return settle(frame_references_, warning_action::dropped,
                      "references inside frames are ignored (instancing is not supported)") &&
               !halted_;
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
    // --- errors and warnings ------------------------------------------------------------------

    /// "<source>: <place>: <Type 'name'>: <what>" for the object being read.
    std::string located(std::size_t offset, std::string_view what) const {
        std::string m(source_);
        m += ": ";
        m += lex_.where(offset);
        m += ": ";
        if (!type_.empty()) {
            append_excerpt(m, type_, 64);
            if (!name_.empty()) {
                m += " ";
                m += quoted_excerpt(name_);
            }
            m += ": ";
        }
        m += what;
        return m;
    }

    /// Records an error at `offset` in the current object's context; returns false.
    bool fail(errc code, std::size_t offset, std::string_view what,
              std::size_t index = error::no_index) {
        error_ = keyblend::impl::make_error(code, located(offset, what), index);
        return false;
    }

    /// Ends the load, in either mode (a limit, or too many warnings); returns false.
    bool halt(error e) {
        error_ = std::move(e);
        halted_ = true;
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

    static load_warning dropped(error e, std::string_view consequence) {
        load_warning w;
        static_cast<error&>(w) = std::move(e);
        w.message += "; ";
        w.message += consequence;
        w.action = warning_action::dropped;
        return w;
    }

    /// Adds a warning; false (and the load ends) past load_options::max_warnings.
    bool warn(load_warning w) {
        if (doc_.warnings.size() >= options_.max_warnings)
            return halt(keyblend::impl::make_error(
                errc::parse_error, std::string(source_) + ": more than " +
                                       std::to_string(options_.max_warnings) +
                                       " problems (load_options::max_warnings); giving up (this "
                                       "is not a damaged .X file)"));
        doc_.warnings.push_back(std::move(w));
        return true;
    }

    bool warn(warning_action action, errc code, std::size_t offset, std::string_view what) {
        load_warning w;
        w.code = code;
        w.message = message(offset, what);
        w.action = action;
        return warn(std::move(w));
    }

    /// A problem in the file. Strict mode: fails. Lenient mode: a warning with `action`, its
    /// message ending with `consequence`; false only when that is one warning too many.
    bool problem(errc code, std::size_t offset, std::string_view what, warning_action action,
                 std::string_view consequence, std::size_t index = error::no_index) {
        fail(code, offset, what, index);
        if (!lenient_) return false;
        load_warning w;
        static_cast<error&>(w) = std::move(error_);
        w.message += "; ";
        w.message += consequence;
        w.action = action;
        return warn(std::move(w));
    }

    /// One problem of a kind that may repeat within an object. Strict mode: fails, with `what()`.
    /// Lenient mode: counted in `t` (only the first one's message is built); settle() reports.
    template <class What>
    bool flag(tally& t, errc code, std::size_t offset, std::size_t index, What&& what) {
        if (!lenient_) return fail(code, offset, what(), index);
        if (t.count++ == 0) {
            t.first.code = code;
            t.first.message = located(offset, what());
            t.first.index = index;
        }
        return true;
    }

    /// Something keyblend does not keep, counted in `t` in either mode (a limitation of keyblend,
    /// not a problem of the file); settle() reports it.
    template <class What>
    void note(tally& t, errc code, std::size_t offset, What&& what) {
        if (t.count++ > 0) return;
        t.first.code = code;
        t.first.message = located(offset, what());
    }

    /// Reports a tally as one warning; false only when that is one warning too many.
    bool settle(tally& t, warning_action action, std::string_view consequence) {
        return t.count == 0 || warn(t.take(action, consequence));
    }

    /// Counts `add` more of something against a load_options limit; false (the load ends) past it.
    bool within(std::size_t& used, std::size_t add, std::size_t limit, const char* option,
                const char* what, std::size_t offset) {
        if (add <= limit && used <= limit - add) {
            used += add;
            return true;
        }
        return halt(keyblend::impl::make_error(
            errc::unsupported, message(offset, std::string("the file has more ") + what +
                                                   " than load_options::" + option + " (" +
                                                   std::to_string(limit) + ") allows")));
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
        if (!ok && lenient_ && !fatal_ && !halted_) {
            ok = warn(dropped(std::move(error_), h.type == "Frame"
                                                     ? "the rest of the Frame is skipped"
                                                     : "the object is dropped"));
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

    /// n vectors of N floats, as one run of floats: member by member into the vectors, whatever
    /// GLM's layout (no array of vectors is taken for floats). Binary 32-bit float lists are read
    /// in place, whole vectors at a time; other values (text, 64-bit floats, a vector split
    /// across lists) through a small buffer. A vector with NaN or infinity becomes zero after
    /// `on_non_finite(i)` (which fails in strict mode).
    template <int N, class Vec, class OnNonFinite>
    bool vectors(std::vector<Vec>& out, std::size_t n, const char* what,
                 OnNonFinite&& on_non_finite) {
        static_assert(N == 2 || N == 3, "vec2 or vec3");
        constexpr std::size_t chunk = 512;
        float buffer[chunk * N];
        out.resize(n);
        std::size_t done = 0;
        // Sets the next m vectors from the m * N floats `value(i)` gives.
        const auto fill = [&](std::size_t m, auto&& value) {
            // Finite unless the exponent is all ones: adding 1 to the exponent then carries into
            // the sign bit. Integer arithmetic only, which compilers vectorise (is_finite's
            // branch per value would not be).
            std::uint32_t carries = 0;
            for (std::size_t i = 0; i < m * N; ++i) {
                std::uint32_t bits;
                const float f = value(i);
                std::memcpy(&bits, &f, 4);
                carries |= (bits & 0x7f800000u) + 0x00800000u;
            }
            const bool all_finite = (carries & 0x80000000u) == 0;
            Vec* o = out.data() + done;
            for (std::size_t k = 0; k < m; ++k) {
                o[k].x = value(k * N);
                o[k].y = value(k * N + 1);
                if constexpr (N == 3) o[k].z = value(k * N + 2);
            }
            done += m;
            if (all_finite) return true;
            for (std::size_t k = done - m; k < done; ++k) {
                bool finite = is_finite(out[k].x) && is_finite(out[k].y);
                if constexpr (N == 3) finite = finite && is_finite(out[k].z);
                if (finite) continue;
                if (!on_non_finite(k)) return false;
                out[k] = Vec(0.0f);
            }
            return true;
        };
        while (done < n) {
            const unsigned char* p = nullptr;
            const std::size_t whole = std::min(lex_.float_run(p) / N, n - done);
            if (whole > 0) {
                const bool ok = fill(whole, [p](std::size_t i) {
                    float f;
                    std::memcpy(&f, p + 4 * i, 4); // little-endian, as the file
                    return f;
                });
                lex_.skip_run(whole * N);
                if (!ok) return false;
                continue;
            }
            const std::size_t m = std::min(chunk, n - done);
            if (!reals(buffer, m * N, what) ||
                !fill(m, [&buffer](std::size_t i) { return buffer[i]; }))
                return false;
        }
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
        lex_.skip_run(used);
        return used > 0;
    }

    /// The corner count and indices of one face into face_ (value by value). `at` is where the
    /// count was read.
    bool face(std::uint32_t& n, std::size_t& at, const char* what) {
        if (!count(n, "nFaceVertexIndices", 1)) return false;
        at = lex_.last_offset();
        if (face_.size() < n) face_.resize(n); // proven by the count
        if (lex_.read_uints(face_.data(), n) != n)
            return expected(std::string("a ") + what + " (an integer)");
        return true;
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
            return expected("'{' after " + quoted_excerpt(h.type));
        lex_.take_brace();
        if (!within(objects_, 1, options_.max_objects, "max_objects",
                    "data objects and Material references", h.offset))
            return false;
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

    /// One item of an object's body: a nested object (given to `child`, which returns false on
    /// failure), a reference (given to `ref` with its offset), or the closing '}' (consumed, and
    /// `closed` set). False on failure.
    template <class Child, class Ref>
    bool body_item(Child&& child, Ref&& ref, bool& closed) {
        closed = false;
        switch (lex_.peek()) {
        case token::close_brace: lex_.take_brace(); closed = true; return true;
        case token::open_brace: {
            reference_to r;
            return reference(r) && ref(r);
        }
        case token::name: {
            object_header h;
            return header(h) && child(h);
        }
        case token::number:
        case token::string:
            return expected("'}' (more values than the counts before them declare)");
        default: return expected("a nested data object, a reference or '}'");
        }
    }

    /// The rest of an object, up to and including the closing '}' (see body_item).
    template <class Child, class Ref>
    bool body(Child&& child, Ref&& ref) {
        for (bool closed = false; !closed;)
            if (!body_item(child, ref, closed)) return false;
        return true;
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
        if (h.type == "Frame") return frame(h, no_parent);
        if (h.type == "Mesh") return nested(h, [&] { return mesh(h, no_frame); });
        if (h.type == "Material")
            return nested(h, [&] {
                io::material m;
                if (!material(h, m)) return false;
                const std::size_t index = doc_.materials.size();
                doc_.materials.push_back(std::move(m));
                if (!h.name.empty()) doc_.material_by_name[std::string(h.name)] = index;
                if (!h.guid.empty()) doc_.material_by_guid[h.guid] = index;
                return true;
            });
        if (h.type == "AnimationSet") return nested(h, [&] { return animation_set(h); });
        if (h.type == "AnimTicksPerSecond") return nested(h, [&] { return ticks_per_second(h); });
        return skip_object();
    }

    /// A Frame whose '{' was just read, and every Frame nested in it, through an explicit stack of
    /// open frames: Frames nest as deep as load_options::max_joints allows, at no cost in call
    /// depth. A failure inside a frame is handled as nested() handles one for its object: in
    /// lenient mode (unless the input cannot be read on, or the load is halted), a warning, the
    /// rest of that frame skipped, and its parent goes on; otherwise false.
    bool frame(const object_header& top, joint_index parent) {
        struct open_frame {
            object_header header;
            std::size_t index = 0; // in doc_.frames
            std::size_t depth = 0; // the lexer's depth inside its '{'
        };
        std::vector<open_frame> open;
        const std::string_view saved_type = type_, saved_name = name_;
        // Records a frame whose '{' was just read, as the innermost open one.
        const auto enter = [&](const object_header& h, joint_index p) {
            open.push_back({h, 0, lex_.depth()});
            type_ = h.type;
            name_ = h.name;
            if (!within(frames_, 1, options_.max_joints, "max_joints", "frames", h.offset))
                return false;
            if (doc_.frames.size() >= static_cast<std::size_t>(std::numeric_limits<joint_index>::max()))
                return fail(errc::unsupported, h.offset, "too many frames");
            ++doc_.contents.frames;
            open.back().index = doc_.frames.size();
            doc_.frames.push_back({std::string(h.name), h.guid, p, glm::mat4(1.0f), false, h.offset});
            return true;
        };
        bool ok = enter(top, parent);
        while (!open.empty()) {
            if (!ok) {
                if (!lenient_ || fatal_ || halted_) break;
                ok = warn(dropped(std::move(error_), "the rest of the Frame is skipped"));
                if (ok && !lex_.skip_to_depth(open.back().depth - 1))
                    ok = expected("'}' closing the dropped object");
                open.pop_back(); // (a failure now is the parent's: fatal or halted, it ends the load)
                continue;
            }
            // One item of the innermost open frame's body.
            const std::size_t index = open.back().index;
            type_ = open.back().header.type;
            name_ = open.back().header.name;
            bool closed = false;
            ok = body_item(
                [&](const object_header& c) {
                    if (c.type == "Frame") return enter(c, static_cast<joint_index>(index));
                    if (c.type == "FrameTransformMatrix")
                        return nested(c, [&] { return frame_transform(c, index); });
                    if (c.type == "Mesh") return nested(c, [&] { return mesh(c, index); });
                    return skip_object();
                },
                [&](const reference_to& ref) {
                    // D3DX would instance the referenced object here; keyblend does not.
                    note(frame_references_, errc::unsupported, ref.offset,
                         [&] { return "the reference to " + ref.label() + " is ignored"; });
                    return true;
                },
                closed);
            if (ok && closed) open.pop_back();
        }
        type_ = saved_type;
        name_ = saved_name;
        return ok && open.empty();
    }

    bool frame_transform(const object_header& h, std::size_t index) {
        frame_record& f = doc_.frames[index];
        if (f.has_matrix)
            return fail(errc::duplicate, h.offset, "the frame already has a FrameTransformMatrix");
        glm::mat4 m;
        if (!matrix(m, "frameMatrix")) return false;
        const std::size_t at = lex_.last_offset();
        if (!end()) return false;
        if (!is_finite(m))
            return problem(errc::non_finite, at, "the matrix has NaN or infinity",
                           warning_action::repaired, "the frame keeps the identity");
        f.bind = m;
        f.has_matrix = true;
        return true;
    }

    bool mesh(const object_header& h, std::size_t frame) {
        if (!within(meshes_, 1, options_.max_meshes, "max_meshes", "Mesh objects", h.offset))
            return false;
        ++doc_.contents.meshes;
        mesh_record r;
        r.mesh.name = std::string(h.name);
        r.frame = frame;
        r.offset = h.offset;
        std::uint32_t vertex_count = 0, face_count = 0;
        if (!count(vertex_count, "nVertices", 3)) return false;
        const std::size_t vertices_at = lex_.last_offset();
        if (!within(vertices_, vertex_count, options_.max_vertices, "max_vertices", "vertices",
                    vertices_at))
            return false;
        tally non_finite;
        if (!vectors<3>(r.mesh.positions, vertex_count, "a vertex coordinate", [&](std::size_t i) {
                return flag(non_finite, errc::non_finite, vertices_at, i, [&] {
                    return "vertex " + std::to_string(i) + " has NaN or infinity";
                });
            }))
            return false;
        if (!settle(non_finite, warning_action::repaired, "set to (0, 0, 0)")) return false;
        if (!count(face_count, "nFaces", 1)) return false;
        r.mesh.face_count = face_count;
        // Each face takes at least 4 values to make a triangle: what is worth reserving.
        const std::size_t likely = std::min<std::size_t>(face_count, lex_.max_values_left() / 4);
        r.face_sizes.reserve(likely);
        r.mesh.indices.reserve(likely * 3);
        r.mesh.triangle_faces.reserve(likely);
        const auto add_face = [&r](std::uint32_t f, const std::uint32_t* corner, std::uint32_t n) {
            r.face_sizes.push_back(n);
            if (!r.makes_triangles(f)) return;
            for (std::uint32_t c = 2; c < n; ++c) {
                r.mesh.indices.push_back(corner[0]);
                r.mesh.indices.push_back(corner[c - 1]);
                r.mesh.indices.push_back(corner[c]);
                r.mesh.triangle_faces.push_back(f);
            }
        };
        tally bad_faces;
        for (std::uint32_t f = 0; f < face_count;) {
            if (bulk_faces(
                    f, face_count, vertex_count,
                    [](std::uint32_t, std::uint32_t n) { return n >= 3; }, add_face))
                continue;
            std::uint32_t n = 0;
            std::size_t at = 0;
            if (!face(n, at, "vertex index")) return false;
            std::uint32_t bad = n;
            for (std::uint32_t c = 0; c < n && bad == n; ++c)
                if (face_[c] >= vertex_count) bad = c;
            if (n < 3 || bad < n) {
                const bool ok =
                    n < 3 ? flag(bad_faces, errc::parse_error, at, f,
                                 [&] {
                                     return "face " + std::to_string(f) + " has " +
                                            std::to_string(n) + " corners; a face needs 3 or more";
                                 })
                          : flag(bad_faces, errc::parse_error, at, face_[bad], [&] {
                                return "face " + std::to_string(f) + ", corner " +
                                       std::to_string(bad) + ": vertex index " +
                                       std::to_string(face_[bad]) +
                                       " is out of range (nVertices " +
                                       std::to_string(vertex_count) + ")";
                            });
                if (!ok) return false;
                r.face_dropped.resize(face_count, false);
                r.face_dropped[f] = true;
            }
            add_face(f, face_.data(), n);
            ++f;
        }
        if (!settle(bad_faces, warning_action::dropped, "the face makes no triangle")) return false;
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
        const std::size_t values_at = lex_.last_offset();
        std::vector<glm::vec3> values;
        tally non_finite;
        if (!vectors<3>(values, normal_count, "a normal coordinate", [&](std::size_t i) {
                return flag(non_finite, errc::non_finite, values_at, i, [&] {
                    return "normal " + std::to_string(i) + " has NaN or infinity";
                });
            }))
            return false;
        if (!count(face_count, "nFaceNormals", 1)) return false;
        if (face_count != r.face_sizes.size())
            return fail(errc::parse_error, lex_.last_offset(),
                        "nFaceNormals is " + std::to_string(face_count) + ", the mesh has " +
                            std::to_string(r.face_sizes.size()) + " faces");
        std::vector<std::uint32_t> corners;
        corners.reserve(m.indices.size());
        const auto add_face = [&](std::uint32_t f, const std::uint32_t* corner, std::uint32_t n) {
            if (!r.makes_triangles(f)) return;
            for (std::uint32_t c = 2; c < n; ++c) {
                corners.push_back(corner[0]);
                corners.push_back(corner[c - 1]);
                corners.push_back(corner[c]);
            }
        };
        const auto same_corners = [&r](std::uint32_t f, std::uint32_t n) {
            return n == r.face_sizes[f];
        };
        for (std::uint32_t f = 0; f < face_count;) {
            if (bulk_faces(f, face_count, normal_count, same_corners, add_face)) continue;
            std::uint32_t n = 0;
            std::size_t at = 0;
            if (!face(n, at, "normal index")) return false;
            if (n != r.face_sizes[f])
                return fail(errc::parse_error, at,
                            "face normal " + std::to_string(f) + " has " + std::to_string(n) +
                                " corners, the face has " + std::to_string(r.face_sizes[f]),
                            f);
            for (std::uint32_t c = 0; c < n; ++c)
                if (face_[c] >= normal_count)
                    return fail(errc::parse_error, at,
                                "face " + std::to_string(f) + ", corner " + std::to_string(c) +
                                    ": normal index " + std::to_string(face_[c]) +
                                    " is out of range (nNormals " + std::to_string(normal_count) +
                                    ")",
                                face_[c]);
            add_face(f, face_.data(), n);
            ++f;
        }
        if (!end()) return false;
        if (!settle(non_finite, warning_action::repaired, "set to (0, 0, 0)")) return false;
        // Per-vertex normals from the corners: a vertex takes its first corner's normal.
        constexpr std::uint32_t unassigned = std::numeric_limits<std::uint32_t>::max();
        std::vector<std::uint32_t> first(m.positions.size(), unassigned);
        std::size_t conflicts = 0;
        for (std::size_t i = 0; i < corners.size(); ++i) {
            std::uint32_t& given = first[m.indices[i]];
            if (given == unassigned)
                given = corners[i];
            else if (given != corners[i] && !same_bits(values[given], values[corners[i]]))
                ++conflicts;
        }
        m.normals.assign(m.positions.size(), glm::vec3(0.0f));
        for (std::size_t v = 0; v < first.size(); ++v)
            if (first[v] != unassigned) m.normals[v] = values[first[v]];
        m.normals_per_vertex_exact = conflicts == 0;
        m.normal_values = std::move(values);
        m.normal_indices = std::move(corners);
        if (conflicts > 0)
            return warn(warning_action::note, errc::unsupported, r.offset,
                        "Mesh " + quoted_excerpt(m.name) + ": " + std::to_string(conflicts) +
                            " face corners give their vertex a different normal than its first "
                            "corner; normals holds the first, normal_values and normal_indices "
                            "the exact data");
        return true;
    }

    bool texcoords(mesh_record& r) {
        std::uint32_t n = 0;
        if (!count(n, "nTextureCoords", 2)) return false;
        const std::size_t values_at = lex_.last_offset();
        if (n != r.mesh.positions.size())
            return fail(errc::parse_error, values_at,
                        "nTextureCoords is " + std::to_string(n) + ", the mesh has " +
                            std::to_string(r.mesh.positions.size()) + " vertices");
        std::vector<glm::vec2> uv;
        tally non_finite;
        if (!vectors<2>(uv, n, "a texture coordinate", [&](std::size_t i) {
                return flag(non_finite, errc::non_finite, values_at, i, [&] {
                    return "texture coordinate " + std::to_string(i) + " has NaN or infinity";
                });
            }))
            return false;
        if (!end()) return false;
        if (!settle(non_finite, warning_action::repaired, "set to (0, 0)")) return false;
        r.mesh.texcoords = std::move(uv);
        return true;
    }

    bool material_list(const object_header& h, mesh_record& r) {
        xfile_mesh& m = r.mesh;
        std::uint32_t material_count = 0, index_count = 0;
        // nMaterials sizes nothing (materials are counted as they come): it needs no proof.
        if (!uint(material_count, "nMaterials")) return false;
        if (!count(index_count, "nFaceIndexes", 1)) return false;
        const std::size_t indexes_at = lex_.last_offset(); // bad indexes are reported here
        const std::size_t faces = r.face_sizes.size();
        std::vector<std::uint32_t> face_material(std::max<std::size_t>(faces, index_count), 0);
        if (lex_.read_uints(face_material.data(), index_count) != index_count)
            return expected("a face material index (an integer)");
        if (index_count > faces) {
            if (!problem(errc::parse_error, indexes_at,
                         "nFaceIndexes is " + std::to_string(index_count) + ", the mesh has " +
                             std::to_string(faces) + " faces",
                         warning_action::dropped, "the extra indexes are ignored"))
                return false;
            face_material.resize(faces);
            index_count = static_cast<std::uint32_t>(faces);
        }
        // Faces the list gives no index: the last index (D3DX, assimp).
        for (std::size_t f = index_count; f < faces && index_count > 0; ++f)
            face_material[f] = face_material[index_count - 1];
        tally out_of_range;
        for (std::uint32_t f = 0; f < index_count; ++f) {
            if (face_material[f] < material_count) continue;
            if (!flag(out_of_range, errc::parse_error, indexes_at, face_material[f], [&] {
                    return "face " + std::to_string(f) + ": material index " +
                           std::to_string(face_material[f]) + " is out of range (nMaterials " +
                           std::to_string(material_count) + ")";
                }))
                return false;
        }
        if (!settle(out_of_range, warning_action::repaired, "the face uses a default material"))
            return false;
        std::vector<io::material> materials;
        if (!body(
                [&](const object_header& c) {
                    if (c.type != "Material") return skip_object();
                    return nested(c, [&] {
                        io::material mat;
                        if (!material(c, mat)) return false;
                        materials.push_back(std::move(mat));
                        return true;
                    });
                },
                [&](const reference_to& ref) { return material_reference(ref, materials); }))
            return false;
        if (materials.size() != material_count &&
            !problem(errc::parse_error, h.offset,
                     "nMaterials is " + std::to_string(material_count) + " but " +
                         std::to_string(materials.size()) + " materials follow",
                     warning_action::repaired,
                     materials.size() < material_count
                         ? "faces that use a missing one use a default material"
                         : "all of them are kept"))
            return false;
        // Faces whose material the list does not hold (an index past nMaterials, or past the
        // materials that follow) use one default material, appended: never nMaterials of them.
        const std::size_t held = std::min<std::size_t>(materials.size(), material_count);
        bool fallback = false;
        for (std::size_t f = 0; f < faces && (material_count > 0 || index_count > 0); ++f)
            if (face_material[f] >= held) {
                face_material[f] = static_cast<std::uint32_t>(materials.size());
                fallback = true;
            }
        if (fallback) materials.emplace_back();
        m.materials = std::move(materials);
        m.triangle_materials.clear();
        if (!m.materials.empty()) {
            m.triangle_materials.reserve(m.triangle_faces.size());
            for (std::uint32_t f : m.triangle_faces)
                m.triangle_materials.push_back(face_material[f]);
        }
        return true;
    }

    /// `{ Name }` in a MeshMaterialList: a copy of the latest top-level Material before it with
    /// that name (or GUID).
    bool material_reference(const reference_to& ref, std::vector<material>& materials) {
        // Each reference makes a material of the result, as a Material object does: a file of
        // `{ M }` may not make more of them than of objects.
        if (!within(objects_, 1, options_.max_objects, "max_objects",
                    "data objects and Material references", ref.offset))
            return false;
        const auto& index = ref.name.empty() ? doc_.material_by_guid : doc_.material_by_name;
        const auto it = index.find(ref.name.empty() ? ref.guid : std::string(ref.name));
        if (it == index.end()) {
            if (!problem(errc::not_found, ref.offset,
                         "no Material " + ref.label() + " comes before this reference",
                         warning_action::repaired, "a default material is used"))
                return false;
            materials.emplace_back();
            materials.back().name = std::string(ref.name);
            return true;
        }
        const io::material& source = doc_.materials[it->second];
        // A reference by GUID copies a name it does not spell: all the copies together may not
        // hold more bytes than the file (else a small file could fill the memory).
        copied_ += source.name.size() + source.texture_file.size();
        if (copied_ > lex_.size())
            return halt(keyblend::impl::make_error(
                errc::unsupported,
                message(ref.offset, "Material references copy more bytes of names than the "
                                    "whole file holds (" +
                                        std::to_string(lex_.size()) +
                                        "); this is not a real .X file")));
        materials.push_back(source);
        return true;
    }

    bool material(const object_header& h, io::material& m) {
        ++doc_.contents.materials;
        m.name = std::string(h.name);
        if (!real(m.diffuse.r, "faceColor") || !real(m.diffuse.g, "faceColor") ||
            !real(m.diffuse.b, "faceColor") || !real(m.diffuse.a, "faceColor") ||
            !real(m.power, "power") || !vec3(m.specular, "specularColor") ||
            !vec3(m.emissive, "emissiveColor"))
            return false;
        const std::size_t at = lex_.last_offset();
        if (!is_finite(m.diffuse) || !is_finite(m.power) || !is_finite(m.specular) ||
            !is_finite(m.emissive)) {
            if (!problem(errc::non_finite, at, "a colour or the power has NaN or infinity",
                         warning_action::repaired,
                         "faceColor becomes white, the others 0, where they are not finite"))
                return false;
            if (!is_finite(m.diffuse)) m.diffuse = glm::vec4(1.0f);
            if (!is_finite(m.power)) m.power = 0.0f;
            if (!is_finite(m.specular)) m.specular = glm::vec3(0.0f);
            if (!is_finite(m.emissive)) m.emissive = glm::vec3(0.0f);
        }
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
        r.mesh.skin_header = s;
        return true;
    }

    bool skin_weights(const object_header& h, mesh_record& r) {
        ++doc_.contents.skin_weights;
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
        tally out_of_range, non_finite;
        for (std::uint32_t i = 0; i < n; ++i) {
            if (!uint(s.vertices[i], "a vertex index")) return false;
            if (s.vertices[i] < vertex_count) continue;
            if (!flag(out_of_range, errc::parse_error, lex_.last_offset(), s.vertices[i], [&] {
                    return "vertexIndices[" + std::to_string(i) + "] = " +
                           std::to_string(s.vertices[i]) + " is out of range (the mesh has " +
                           std::to_string(vertex_count) + " vertices; bone " + quoted_excerpt(s.frame) +
                           ")";
                }))
                return false;
            drop.resize(n, false);
            drop[i] = true;
        }
        const std::size_t weights_at = lex_.offset();
        if (!reals(s.weights.data(), n, "a weight")) return false;
        for (std::uint32_t i = 0; i < n; ++i) {
            if (is_finite(s.weights[i])) continue;
            if (!flag(non_finite, errc::non_finite, weights_at, i, [&] {
                    return "weights[" + std::to_string(i) + "] is not finite (bone " +
                           quoted_excerpt(s.frame) + ")";
                }))
                return false;
            drop.resize(n, false);
            drop[i] = true;
        }
        if (!matrix(s.offset_matrix, "matrixOffset")) return false;
        const std::size_t matrix_at = lex_.last_offset();
        if (!end()) return false;
        if (!settle(out_of_range, warning_action::dropped, "that weight is dropped") ||
            !settle(non_finite, warning_action::dropped, "that weight is dropped"))
            return false;
        if (!is_finite(s.offset_matrix)) {
            if (!problem(errc::non_finite, matrix_at,
                         "matrixOffset has NaN or infinity (bone " + quoted_excerpt(s.frame) + ")",
                         warning_action::repaired,
                         "it is replaced by the inverse of the bone's bind-pose model matrix"))
                return false;
            s.offset_finite = false;
        }
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
            return problem(errc::invalid_argument, h.offset, "0 ticks per second",
                           warning_action::dropped, "ignored");
        doc_.ticks.push_back({v, h.offset});
        return true;
    }

    bool animation_set(const object_header& h) {
        ++doc_.contents.animation_sets;
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
        ++doc_.contents.animations;
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
                                       "a second frame reference (" + ref.label() + ")",
                                       warning_action::dropped, "ignored");
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
        ++doc_.contents.animation_keys;
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
        if (!within(keys_, n, options_.max_keys, "max_keys", "animation keys", lex_.last_offset()))
            return false;
        channel ch; // the keys go into a.tracks once the whole AnimationKey has been read
        switch (kind) {
        case 0: ch.rotation.reserve(n); break;
        case 1: ch.scale.reserve(n); break;
        case 2: ch.translation.reserve(n); break;
        default: ch.matrix.reserve(n); break;
        }
        float v[16];
        bool warned = false;
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
                if (!warn(warning_action::repaired, errc::unsupported, lex_.last_offset(),
                          "key time " + std::to_string(time) +
                              " is past 2^24 ticks and is rounded to a float"))
                    return false;
            }
            switch (kind) {
            case 0: ch.rotation.push_back(t, make_quat(v[0], -v[1], -v[2], -v[3])); break;
            case 1: ch.scale.push_back(t, glm::vec3(v[0], v[1], v[2])); break;
            case 2: ch.translation.push_back(t, glm::vec3(v[0], v[1], v[2])); break;
            default: ch.matrix.push_back(t, glm::make_mat4(v)); break;
            }
        }
        if (!end()) return false;
        doc_.contents.keys += n;
        bool ok = true;
        switch (kind) {
        case 0: ok = checked_keys(ch.rotation, kinds[kind], h.offset, a.tracks.rotation); break;
        case 1: ok = checked_keys(ch.scale, kinds[kind], h.offset, a.tracks.scale); break;
        case 2: ok = checked_keys(ch.translation, kinds[kind], h.offset, a.tracks.translation); break;
        default: ok = checked_keys(ch.matrix, kinds[kind], h.offset, a.tracks.matrix); break;
        }
        a.has_kind[kind] = true;
        return ok;
    }

    /// The keys of one AnimationKey, checked in key order. Strict mode fails at the first
    /// problem. Lenient mode repairs: a rotation more than the tolerance away from unit length is
    /// normalised; a key with NaN or infinity (or a zero quaternion) is dropped; keys out of time
    /// order are sorted (stably). Keys sharing a time are kept in file order, in either mode: a
    /// cut (sample.hpp). `out` receives the keys (a valid track, possibly empty).
    template <class Value>
    bool checked_keys(track<Value, float>& in, const char* kind, std::size_t at,
                      track<Value, float>& out) {
        constexpr bool rotation = std::is_same<Value, glm::quat>::value;
        const std::size_t n = in.size();
        const auto tick = [&](std::size_t i) {
            return " (tick " + keyblend::impl::float_to_string(in.time(i)) + ")";
        };
        tally bad, not_unit, unsorted;
        float shortest = std::numeric_limits<float>::max(), longest = 0.0f;
        std::vector<std::uint32_t> kept; // lenient mode: indices of the keys kept, when not all
        bool all_kept = true, in_order = true;
        float latest = 0.0f; // the latest time of a key kept so far
        bool any = false;
        for (std::size_t i = 0; i < n; ++i) {
            Value& value = in.value(i);
            bool keep = is_finite(value);
            float length = 1.0f;
            if constexpr (rotation) {
                if (keep) {
                    length = std::sqrt(quat_dot(value, value));
                    keep = length > 0.0f && is_finite(length);
                }
            }
            if (!keep) {
                if (!flag(bad, errc::non_finite, at, i, [&] {
                        return std::string(kind) + " key " + std::to_string(i) + tick(i) +
                               (rotation ? " is not a rotation (a zero, NaN or infinite quaternion)"
                                         : " has NaN or infinity");
                    }))
                    return false;
                if (all_kept) {
                    kept.resize(i);
                    std::iota(kept.begin(), kept.end(), 0u);
                    all_kept = false;
                }
                continue;
            }
            if constexpr (rotation) {
                if (std::fabs(length - 1.0f) > key_traits<glm::quat>::unit_tolerance) {
                    if (!flag(not_unit, errc::not_normalized, at, i, [&] {
                            return std::string(kind) + " key " + std::to_string(i) + tick(i) +
                                   " is not unit length (|q| = " +
                                   keyblend::impl::float_to_string(length, 6) + ")";
                        }))
                        return false;
                    shortest = std::min(shortest, length);
                    longest = std::max(longest, length);
                    const float inverse = 1.0f / length;
                    value = make_quat(value.w * inverse, value.x * inverse, value.y * inverse,
                                      value.z * inverse);
                }
            }
            const float t = in.time(i);
            if (any && t < latest) {
                in_order = false;
                if (!flag(unsorted, errc::unsorted, at, i, [&] {
                        return std::string(kind) + " key " + std::to_string(i) + ": time " +
                               keyblend::impl::float_to_string(t) + " is before the time " +
                               keyblend::impl::float_to_string(latest) + " of an earlier key";
                    }))
                    return false;
            }
            latest = any ? std::max(latest, t) : t;
            any = true;
            if (!all_kept) kept.push_back(static_cast<std::uint32_t>(i));
        }
        if (!settle(bad, warning_action::dropped, "the key is dropped")) return false;
        if (not_unit.count > 0) {
            const std::string range =
                not_unit.count > 1 ? " (|q| from " + keyblend::impl::float_to_string(shortest, 6) +
                                         " to " + keyblend::impl::float_to_string(longest, 6) + ")"
                                   : std::string();
            if (!settle(not_unit, warning_action::repaired, "normalised" + range)) return false;
        }
        if (all_kept && in_order) {
            out = std::move(in);
            return true;
        }
        if (all_kept) {
            kept.resize(n);
            std::iota(kept.begin(), kept.end(), 0u);
        }
        if (!in_order) {
            std::stable_sort(kept.begin(), kept.end(), [&](std::uint32_t a, std::uint32_t b) {
                return in.time(a) < in.time(b);
            });
            if (!settle(unsorted, warning_action::repaired, "the keys are sorted by time"))
                return false;
        }
        out = track<Value, float>(in.mode());
        out.reserve(kept.size());
        for (std::uint32_t i : kept) out.push_back(in.time(i), in.value(i));
        return true;
    }

    Lexer& lex_;
    const load_options& options_;
    std::vector<std::uint32_t> face_; // scratch for face()
    bool lenient_;
    std::string_view source_;
    document& doc_;
    error error_;
    bool fatal_ = false;  // the error leaves nothing readable after it
    bool halted_ = false; // a limit was exceeded: the load fails in either mode
    std::string_view type_; // the object being read, for messages
    std::string_view name_;
    tally frame_references_; // `{ Name }` inside Frames, for one warning at the end
    // Counted against load_options' limits.
    std::size_t objects_ = 0, frames_ = 0, meshes_ = 0, vertices_ = 0, keys_ = 0, copied_ = 0;
};

} // namespace impl
} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace io
} // namespace keyblend
