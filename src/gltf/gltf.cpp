// keyblend::gltf: the glTF 2.0 loader (see include/keyblend/gltf.hpp and docs/gltf.md).
//
// SPDX-License-Identifier: MIT
//
// The order of work: the container (GLB chunks or JSON text), the JSON (simdjson's DOM: an
// iterative parser whose depth is bounded), buffers and buffer views (each checked against the
// bytes that hold it), accessors (each checked against its buffer view before anything reads it),
// nodes (children lists into one parent array, with cycles and second parents found by iterative
// walks), the skeleton, skins, mesh instances of the scene (each primitive decoded once, copied
// per instance), animations. Every element count that sizes an allocation is first proven by the
// bytes of the file that hold the elements, or bounded by a load_options limit.
#include <keyblend/gltf.hpp>

#include "draco.hpp"

#include <keyblend/io/impl/source.hpp>

#include <keyblend/impl/simd/cpu.hpp>

#if KEYBLEND_CPU_X86 && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define KEYBLEND_GLTF_MMAP 1
#endif

namespace keyblend {
namespace gltf {
inline namespace KEYBLEND_IO_GLM_LAYOUT {
namespace {

namespace dom = simdjson::dom;
using io::load_warning;
using io::warning_action;

constexpr std::size_t npos = static_cast<std::size_t>(-1);

/// A rotation (node or key) whose length differs from 1 by more than float rounding of a unit
/// quaternion but at most key_traits<glm::quat>::unit_tolerance was written with few digits: it is
/// normalised (a note says so), since glTF rotations are unit quaternions and keyblend's matrices
/// of a non-unit quaternion scale. Past the tolerance it is a problem (strict: an error).
constexpr float unit_rounding = 1e-6f;

constexpr std::uint32_t glb_magic = 0x46546C67u; // "glTF"
constexpr std::uint32_t chunk_json = 0x4E4F534Au; // "JSON"
constexpr std::uint32_t chunk_bin = 0x004E4942u;  // "BIN\0"

enum component_type : unsigned {
    byte_type = 5120,
    unsigned_byte_type = 5121,
    short_type = 5122,
    unsigned_short_type = 5123,
    unsigned_int_type = 5125,
    float_type = 5126,
};

constexpr unsigned component_size(unsigned type) {
    switch (type) {
    case byte_type:
    case unsigned_byte_type: return 1;
    case short_type:
    case unsigned_short_type: return 2;
    case unsigned_int_type:
    case float_type: return 4;
    default: return 0;
    }
}

std::uint32_t read_u32(const unsigned char* p) {
    return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

/// Component `p` of type `type` as a float, normalized integers as the specification maps them.
inline float read_float(const unsigned char* p, unsigned type, bool normalized) {
    switch (type) {
    case float_type: {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    case byte_type: {
        const float v = static_cast<float>(static_cast<std::int8_t>(p[0]));
        return normalized ? std::max(v / 127.0f, -1.0f) : v;
    }
    case unsigned_byte_type: {
        const float v = static_cast<float>(p[0]);
        return normalized ? v / 255.0f : v;
    }
    case short_type: {
        const float v = static_cast<float>(static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] | p[1] << 8)));
        return normalized ? std::max(v / 32767.0f, -1.0f) : v;
    }
    case unsigned_short_type: {
        const float v = static_cast<float>(p[0] | p[1] << 8);
        return normalized ? v / 65535.0f : v;
    }
    case unsigned_int_type: return static_cast<float>(read_u32(p));
    default: return 0.0f;
    }
}

/// Component `p` as an unsigned integer (indices, joint indices); floats and signed values that
/// are not whole and non-negative give npos-like 0xffffffff.
inline std::uint32_t read_uint(const unsigned char* p, unsigned type) {
    switch (type) {
    case unsigned_byte_type: return p[0];
    case unsigned_short_type: return std::uint32_t(p[0] | p[1] << 8);
    case unsigned_int_type: return read_u32(p);
    case byte_type: return static_cast<std::int8_t>(p[0]) < 0 ? 0xffffffffu : p[0];
    case short_type: {
        const auto v = static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] | p[1] << 8));
        return v < 0 ? 0xffffffffu : static_cast<std::uint32_t>(v);
    }
    case float_type: {
        const float f = read_float(p, float_type, false);
        return f >= 0.0f && f < 4294967295.0f && f == std::floor(f) ? static_cast<std::uint32_t>(f) : 0xffffffffu;
    }
    default: return 0xffffffffu;
    }
}

/// A name or string from the file for a message: at most 64 characters, control characters and
/// quotes escaped.
std::string excerpt(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size() && i < 64; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (s.size() > 64) out += "...";
    return out;
}

/// A place in the file for a message, built only when a message needs it: a string already made,
/// or a function that makes it (valid during the call it is passed to).
class place {
public:
    place(const std::string& text) : text_(&text) {}
    place(const char* text) : chars_(text) {}
    template <class F, class = std::enable_if_t<std::is_invocable_r_v<std::string, const F&>>>
    place(const F& make) : make_([](const void* f) { return (*static_cast<const F*>(f))(); }), context_(&make) {}
    std::string str() const { return text_ ? *text_ : chars_ ? std::string(chars_) : make_(context_); }

private:
    const std::string* text_ = nullptr;
    const char* chars_ = nullptr;
    std::string (*make_)(const void*) = nullptr;
    const void* context_ = nullptr;
};

std::string at(const std::string& base, std::size_t i) { return base + "/" + std::to_string(i); }
std::string at(const std::string& base, const char* key) { return base + "/" + key; }

struct buffer_info {
    const unsigned char* data = nullptr;
    std::size_t size = 0;
    std::vector<unsigned char> owned;
    bool valid = false;
};

struct view_info {
    std::size_t buffer = npos, offset = 0, length = 0, stride = 0;
    bool valid = false;
};

struct accessor_info {
    bool valid = false;
    std::size_t view = npos, offset = 0, count = 0;
    unsigned type = 0;        ///< component type
    unsigned size = 0;        ///< bytes per component
    unsigned components = 0;  ///< per element (16 for MAT4)
    unsigned rows = 1;        ///< components per column (matrices), else = components
    std::size_t column_stride = 0;
    std::size_t element_size = 0;
    std::size_t stride = 0;   ///< bytes between elements in the view
    bool normalized = false;
    std::string_view type_name;
    std::size_t sparse_count = 0;
    std::size_t sparse_index_view = npos, sparse_index_offset = 0, sparse_value_view = npos, sparse_value_offset = 0;
    unsigned sparse_index_type = 0;

    std::size_t component_offset(unsigned c) const { return (c / rows) * column_stride + (c % rows) * size; }
};

struct node_info {
    std::string name;
    std::vector<std::size_t> children;
    std::size_t mesh = npos, skin = npos;
    glm::mat4 local = glm::mat4(1.0f);
    bool has_matrix = false;
    std::vector<float> weights;
    bool has_weights = false;
};

struct skin_info {
    bool valid = false;
    std::vector<std::size_t> joints; ///< node indices
    std::vector<glm::mat4> inverse_binds;
};

/// A primitive decoded once, copied into each instance.
struct primitive_data {
    bool decoded = false, usable = false;
    gltf::mesh_instance mesh;
    /// Influences as skin-joint indices (bones are the instance's skin's joints).
    bool has_influences = false;
    std::uint32_t largest_joint = 0;
    std::size_t uses = 0;
};

struct mesh_info {
    std::string name;
    std::size_t target_count = 0;
    std::vector<float> weights;
    std::vector<std::string> target_names;
    std::vector<primitive_data> primitives;
    std::vector<dom::element> primitive_json;
};

class loader {
public:
    loader(const io::load_options& options, std::string_view source, std::string base_directory)
        : options_(options), source_(source), base_directory_(std::move(base_directory)) {}

    bool load(const unsigned char* data, std::size_t size, model& out);
    const error& failure() const { return error_; }

private:
    // --- reporting ------------------------------------------------------------------------------
    bool strict() const { return options_.mode == io::parse_mode::strict; }
    bool fail(errc code, const std::string& where, const std::string& what, std::size_t index = error::no_index) {
        if (!failed_) {
            failed_ = true;
            error_ = error{code, source_ + ": " + (where.empty() ? "" : where + ": ") + what, index};
        }
        return false;
    }
    /// Something lenient mode repairs or drops: an error in strict mode, a warning otherwise.
    bool problem(errc code, const std::string& where, const std::string& what, warning_action action,
                 std::size_t index = error::no_index) {
        if (strict()) return fail(code, where, what, index);
        return warn(code, where, what, action, index);
    }
    /// A warning in both modes (what keyblend does not import, keyblend's own limits).
    bool warn(errc code, const std::string& where, const std::string& what, warning_action action,
              std::size_t index = error::no_index) {
        if (failed_) return false;
        if (out_->warnings.size() >= options_.max_warnings)
            return fail(errc::parse_error, "",
                        "more than load_options::max_warnings (" + std::to_string(options_.max_warnings) +
                            ") problems: not a damaged glTF file");
        load_warning w;
        w.code = code;
        w.message = source_ + ": " + (where.empty() ? "" : where + ": ") + what;
        w.index = index;
        w.action = action;
        out_->warnings.push_back(std::move(w));
        return true;
    }
    /// A kind of content keyblend does not import: one warning per kind, naming the first place
    /// and counting the others (flushed at the end of the load).
    void not_imported(const std::string& what, const std::string& where) {
        auto [it, inserted] = not_imported_.try_emplace(what, where, 0);
        ++it->second.second;
        (void)inserted;
    }
    bool limit(const char* name, std::size_t value, std::size_t count, const std::string& what) {
        return fail(errc::unsupported, "",
                    what + " (" + std::to_string(count) + ") exceed load_options::" + name + " (" +
                        std::to_string(value) + ")");
    }

    // --- JSON helpers ---------------------------------------------------------------------------
    /// The member `key` of `object`, or nothing.
    /// (The first member of that name, as simdjson's at_key, with the names compared inline: most
    /// are a few bytes, and a library memcmp per candidate of the same length cost more.)
    static bool member(dom::object object, const char* key, dom::element& out) {
        const std::string_view k(key);
        for (auto it = object.begin(), end = object.end(); it != end; ++it) {
            if (it.key_length() != k.size()) continue;
            const char* name = it.key_c_str();
            std::size_t i = 0;
            while (i < k.size() && name[i] == k[i]) ++i;
            if (i == k.size()) {
                out = it.value();
                return true;
            }
        }
        return false;
    }
    /// obj[key] as an array (absent: false, no report; wrong type: reported as a problem).
    bool array_member(dom::object object, const char* key, const place& where, dom::array& out) {
        dom::element e;
        if (!member(object, key, e)) return false;
        if (e.get(out) != simdjson::SUCCESS) {
            problem(errc::parse_error, at(where.str(), key), "expected an array; ignored", warning_action::dropped);
            return false;
        }
        return true;
    }
    bool object_member(dom::object object, const char* key, const place& where, dom::object& out) {
        dom::element e;
        if (!member(object, key, e)) return false;
        if (e.get(out) != simdjson::SUCCESS) {
            problem(errc::parse_error, at(where.str(), key), "expected an object; ignored", warning_action::dropped);
            return false;
        }
        return true;
    }
    /// obj[key] as an index < count: the index, or npos when absent (silently) or invalid (reported).
    std::size_t index_member(dom::object object, const char* key, const place& where, std::size_t count,
                             const char* what) {
        dom::element e;
        if (!member(object, key, e)) return npos;
        std::uint64_t v = 0;
        if (e.get(v) != simdjson::SUCCESS) {
            problem(errc::parse_error, at(where.str(), key), "expected a non-negative integer; ignored",
                    warning_action::dropped);
            return npos;
        }
        if (v >= count) {
            problem(errc::out_of_range, at(where.str(), key),
                    std::to_string(v) + " is not the index of one of the " + std::to_string(count) + " " + what +
                        "; ignored",
                    warning_action::dropped, static_cast<std::size_t>(v));
            return npos;
        }
        return static_cast<std::size_t>(v);
    }
    /// obj[key] as an unsigned integer; `fallback` when absent or invalid (reported).
    std::size_t size_member(dom::object object, const char* key, const place& where, std::size_t fallback,
                            bool& bad) {
        dom::element e;
        bad = false;
        if (!member(object, key, e)) return fallback;
        // (At most 2^53, JSON's exact integers, and below npos: a 32-bit build refuses what it
        // cannot hold rather than wrap it.)
        constexpr std::uint64_t most =
            std::min<std::uint64_t>(std::uint64_t{1} << 53, std::uint64_t{std::numeric_limits<std::size_t>::max()} - 1);
        std::uint64_t v = 0;
        if (e.get(v) != simdjson::SUCCESS || v > most) {
            bad = true;
            problem(errc::parse_error, at(where.str(), key),
                    "expected a non-negative integer (at most " + std::to_string(most) + ")", warning_action::dropped);
            return fallback;
        }
        return static_cast<std::size_t>(v);
    }
    std::string string_member(dom::object object, const char* key) {
        dom::element e;
        std::string_view s;
        if (!member(object, key, e) || e.get(s) != simdjson::SUCCESS) return {};
        return std::string(s);
    }
    /// obj[key] as `n` finite numbers; false when absent; reported when malformed.
    bool numbers_member(dom::object object, const char* key, const place& where, std::size_t n, float* out) {
        dom::array a;
        if (!array_member(object, key, where, a)) return false;
        if (a.size() != n) {
            problem(errc::size_mismatch, at(where.str(), key),
                    "expected " + std::to_string(n) + " numbers, found " + std::to_string(a.size()) + "; ignored",
                    warning_action::dropped);
            return false;
        }
        std::size_t i = 0;
        for (dom::element e : a) {
            double d = 0.0;
            if (e.get(d) != simdjson::SUCCESS || !is_finite(static_cast<float>(d))) {
                problem(errc::non_finite, at(at(where.str(), key), i), "expected a finite number; ignored",
                        warning_action::dropped);
                return false;
            }
            out[i++] = static_cast<float>(d);
        }
        return true;
    }
    /// `e` as an object; otherwise a problem at `where` saying what lenient mode does ("expected an
    /// object; <what>"), and false.
    bool object_at(dom::element e, const std::string& where, const char* what, warning_action action, dom::object& out) {
        if (e.get(out) == simdjson::SUCCESS) return true;
        problem(errc::parse_error, where, std::string("expected an object; ") + what, action);
        return false;
    }
    /// The elements of a top-level array (absent: none), at most max_objects.
    bool top_array(dom::object root, const char* key, std::vector<dom::element>& out) {
        dom::array a;
        if (!array_member(root, key, "", a)) return ok();
        if (a.size() > options_.max_objects - std::min(objects_, options_.max_objects))
            return limit("max_objects", options_.max_objects, objects_ + a.size(), "objects");
        objects_ += a.size();
        out.reserve(a.size());
        for (dom::element e : a) out.push_back(e);
        return true;
    }
    bool ok() const { return !failed_; }

    // --- the parts ------------------------------------------------------------------------------
    bool container(const unsigned char* data, std::size_t size);
    bool asset(dom::object root);
    bool extensions(dom::object root);
    bool buffers(dom::object root);
    bool read_external(const std::string& uri, const std::string& where, std::size_t length, buffer_info& b);
    bool views(dom::object root);
    bool accessors(dom::object root);
    bool check_accessor(dom::object a, const std::string& where, accessor_info& info);
    bool nodes(dom::object root);
    bool hierarchy();
    bool skeleton();
    bool skins(dom::object root);
    bool meshes(dom::object root);
    bool materials(dom::object root);
    std::shared_ptr<const io::embedded_image> embedded_image(dom::object image, std::size_t index);
    bool scene(dom::object root);
    bool instances();
    bool decode_primitive(std::size_t m, std::size_t p);
    bool instance(std::size_t node, std::size_t m, std::size_t p, std::size_t skin_index);
    bool animations(dom::object root);
    bool animation(dom::object a, std::size_t index);
    void report_unused(dom::object root);

    /// Reads accessor `a` as elements of `components` values (checking its type has as many),
    /// converted by `convert(pointer_to_component, component_type, normalized)`. `max_count`
    /// bounds an accessor without buffer view (whose count no bytes prove). False, reported at
    /// `use` (and the accessor), when it cannot be read.
    template <class T, class Convert>
    bool read_accessor(std::size_t a, unsigned components, std::size_t max_count, const place& use,
                       std::vector<T>& out, Convert convert);
    bool read_floats(std::size_t a, unsigned components, std::size_t max_count, const place& use,
                     std::vector<float>& out) {
        return read_accessor<float>(a, components, max_count, use, out,
                                    [](const unsigned char* p, unsigned t, bool n) { return read_float(p, t, n); });
    }
    bool read_uints(std::size_t a, unsigned components, std::size_t max_count, const place& use,
                    std::vector<std::uint32_t>& out) {
        return read_accessor<std::uint32_t>(a, components, max_count, use, out,
                                            [](const unsigned char* p, unsigned t, bool) { return read_uint(p, t); });
    }
    /// Reads a vertex attribute of `vertices` elements of `components` floats; zeroes NaN and
    /// infinities (lenient) with a warning.
    bool vertex_attribute(std::size_t a, unsigned components, std::size_t vertices, const place& use,
                          std::vector<float>& out);

    template <class Value>
    bool build_track(const float* times, std::size_t keys, const std::vector<float>& values, std::size_t components,
                     std::size_t stride, std::size_t offset, interpolation mode, const place& where,
                     track<Value, float>& out);

    const io::load_options& options_;
    std::string source_;
    std::string base_directory_;
    model* out_ = nullptr;
    error error_;
    bool failed_ = false;
    std::size_t objects_ = 0;
    std::size_t keys_ = 0;
    std::size_t vertices_ = 0;
    std::map<std::string, std::pair<std::string, std::size_t>> not_imported_;

    const unsigned char* json_ = nullptr;
    std::size_t json_size_ = 0;
    const unsigned char* bin_ = nullptr;
    std::size_t bin_size_ = 0;
    bool has_bin_ = false;
    dom::parser own_parser_; ///< for a JSON document too large for the thread's parser

    std::vector<buffer_info> buffers_;
    std::vector<view_info> views_;
    std::vector<accessor_info> accessors_;
    std::vector<node_info> nodes_;
    std::vector<std::size_t> parent_;
    std::vector<std::size_t> order_; ///< nodes parents first
    std::vector<std::size_t> channel_of_joint_; ///< an animation's channel of each joint (npos: none yet)
    std::vector<glm::mat4> bind_model_;
    std::vector<skin_info> skins_;
    std::vector<mesh_info> meshes_;
    std::vector<io::material> materials_;
    std::vector<dom::element> skin_json_, mesh_json_, node_json_, animation_json_, scene_json_;
    bool draco_used_ = false;
};

// -----------------------------------------------------------------------------------------------
// The container and the JSON
// -----------------------------------------------------------------------------------------------

bool loader::container(const unsigned char* data, std::size_t size) {
    if (size >= 4 && read_u32(data) == glb_magic) {
        out_->binary = true;
        if (size < 12)
            return fail(errc::parse_error, "byte offset 0",
                        "a GLB header is 12 bytes, the file has " + std::to_string(size));
        const std::uint32_t version = read_u32(data + 4);
        if (version != 2)
            return fail(errc::unsupported, "byte offset 4", "GLB version " + std::to_string(version) + " (keyblend reads 2)");
        std::size_t length = read_u32(data + 8);
        if (length > size)
            return fail(errc::parse_error, "byte offset 8",
                        "the GLB header says the file has " + std::to_string(length) + " bytes, it has " +
                            std::to_string(size) + " (truncated)");
        if (length < size) {
            if (!problem(errc::parse_error, "byte offset 8",
                         "the GLB header says the file has " + std::to_string(length) + " bytes, it has " +
                             std::to_string(size) + "; the bytes past it are ignored",
                         warning_action::dropped))
                return false;
        }
        std::size_t offset = 12;
        std::size_t chunk = 0;
        while (offset < length) {
            if (length - offset < 8)
                return fail(errc::parse_error, "byte offset " + std::to_string(offset),
                            "a chunk header is 8 bytes, " + std::to_string(length - offset) + " are left");
            const std::size_t chunk_length = read_u32(data + offset);
            const std::uint32_t type = read_u32(data + offset + 4);
            if (chunk_length > length - offset - 8)
                return fail(errc::parse_error, "byte offset " + std::to_string(offset),
                            "chunk " + std::to_string(chunk) + " claims " + std::to_string(chunk_length) +
                                " bytes, " + std::to_string(length - offset - 8) + " are left");
            const unsigned char* body = data + offset + 8;
            if (chunk == 0) {
                if (type != chunk_json)
                    return fail(errc::parse_error, "byte offset " + std::to_string(offset + 4),
                                "the first chunk of a GLB file must be JSON");
                json_ = body;
                json_size_ = chunk_length;
            } else if (chunk == 1 && type == chunk_bin) {
                bin_ = body;
                bin_size_ = chunk_length;
                has_bin_ = true;
            } else {
                if (!warn(errc::unsupported, "byte offset " + std::to_string(offset),
                          "chunk " + std::to_string(chunk) + " of type 0x" + [&] {
                              char hex[12];
                              std::snprintf(hex, sizeof hex, "%08x", type);
                              return std::string(hex);
                          }() + " is not imported",
                          warning_action::dropped))
                    return false;
            }
            offset += 8 + chunk_length;
            ++chunk;
        }
        if (chunk == 0) return fail(errc::parse_error, "byte offset 12", "the GLB file has no JSON chunk");
    } else {
        json_ = data;
        json_size_ = size;
    }
    return true;
}

bool loader::asset(dom::object root) {
    dom::object a;
    if (!object_member(root, "asset", "", a)) {
        return ok() && problem(errc::parse_error, "/asset", "missing; read as glTF 2.0", warning_action::repaired);
    }
    const std::string version = string_member(a, "version");
    const std::string minimum = string_member(a, "minVersion");
    const std::string& v = minimum.empty() ? version : minimum;
    if (v.empty())
        return problem(errc::parse_error, "/asset/version", "missing; read as glTF 2.0", warning_action::repaired);
    if (v.size() < 2 || v[0] != '2' || v[1] != '.')
        return fail(errc::unsupported, minimum.empty() ? "/asset/version" : "/asset/minVersion",
                    "glTF version '" + excerpt(v) + "' (keyblend reads 2.x)");
    return true;
}

bool loader::extensions(dom::object root) {
    const auto supported = [&](std::string_view name) {
        return name == "KHR_mesh_quantization" ||
               (name == "KHR_draco_mesh_compression" && detail::draco_available());
    };
    dom::array required;
    if (array_member(root, "extensionsRequired", "", required)) {
        std::size_t i = 0;
        for (dom::element e : required) {
            std::string_view name;
            if (e.get(name) == simdjson::SUCCESS && !supported(name))
                return fail(errc::unsupported, at("/extensionsRequired", i),
                            "the file requires extension '" + excerpt(name) + "', which keyblend does not implement" +
                                (name == "KHR_draco_mesh_compression" ? " (built without Draco: KEYBLEND_GLTF_DRACO)" : ""));
            ++i;
        }
    }
    dom::array used;
    if (array_member(root, "extensionsUsed", "", used)) {
        std::size_t i = 0;
        for (dom::element e : used) {
            std::string_view name;
            if (e.get(name) == simdjson::SUCCESS && !supported(name))
                if (!warn(errc::unsupported, at("/extensionsUsed", i),
                          "extension '" + excerpt(name) + "' is not imported (what it adds is ignored)",
                          warning_action::dropped))
                    return false;
            ++i;
        }
    }
    return ok();
}

// -----------------------------------------------------------------------------------------------
// Buffers, buffer views, accessors
// -----------------------------------------------------------------------------------------------

bool base64_decode(std::string_view text, std::vector<unsigned char>& out) {
    out.clear();
    out.reserve(text.size() / 4 * 3 + 3);
    unsigned bits = 0, value = 0;
    std::size_t padding = 0;
    for (char ch : text) {
        unsigned d;
        if (ch >= 'A' && ch <= 'Z') d = unsigned(ch - 'A');
        else if (ch >= 'a' && ch <= 'z') d = unsigned(ch - 'a') + 26;
        else if (ch >= '0' && ch <= '9') d = unsigned(ch - '0') + 52;
        else if (ch == '+' || ch == '-') d = 62;
        else if (ch == '/' || ch == '_') d = 63;
        else if (ch == '=') { ++padding; continue; }
        else if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') continue;
        else return false;
        if (padding) return false;
        value = (value << 6 | d) & 0xffffffu;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<unsigned char>(value >> bits & 0xffu));
        }
    }
    return true;
}

/// The bytes of a `data:[<media type>][;base64],<data>` URI into `out`, and its media type (empty
/// when it names none); false when the URI is not base64.
bool decode_data_uri(std::string_view uri, std::vector<unsigned char>& out, std::string& media_type) {
    const std::size_t comma = uri.find(',');
    if (comma == std::string_view::npos) return false;
    const std::string_view header = uri.substr(5, comma - 5);
    if (header.find(";base64") == std::string_view::npos || !base64_decode(uri.substr(comma + 1), out)) return false;
    media_type = std::string(header.substr(0, header.find(';')));
    return true;
}

std::string percent_decode(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto hex = [](char c) -> int {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        };
        if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

bool loader::read_external(const std::string& uri, const std::string& where, std::size_t length, buffer_info& b) {
    if (base_directory_.empty())
        return fail(errc::io_error, where,
                    "external buffer '" + excerpt(uri) + "' cannot be read: no base directory (load_memory)");
    const std::string path = base_directory_ + "/" + percent_decode(uri);
    // No more than the buffer's byteLength is read (a shorter file: buffers() reports it).
    std::size_t n = 0;
    const status read = keyblend::impl::read_file(
        path, "external buffer '" + excerpt(path) + "'", length,
        [&b](std::size_t size) {
            b.owned.resize(size);
            return b.owned.data();
        },
        n);
    return read ? true : fail(errc::io_error, where, read.error().message);
}

bool loader::buffers(dom::object root) {
    std::vector<dom::element> list;
    if (!top_array(root, "buffers", list)) return false;
    out_->contents.buffers = list.size();
    buffers_.resize(list.size());
    for (std::size_t i = 0; i < list.size() && ok(); ++i) {
        const std::string where = at("/buffers", i);
        buffer_info& b = buffers_[i];
        dom::object o;
        if (!object_at(list[i], where, "buffer ignored", warning_action::dropped, o)) continue;
        bool bad = false;
        const std::size_t length = size_member(o, "byteLength", where, npos, bad);
        if (length == npos) {
            if (!bad) problem(errc::parse_error, at(where, "byteLength"), "missing; buffer ignored", warning_action::dropped);
            continue;
        }
        dom::element uri_element;
        std::string_view uri;
        if (!member(o, "uri", uri_element)) {
            if (i != 0 || !has_bin_) {
                problem(errc::parse_error, at(where, "uri"),
                        out_->binary ? "missing, and only buffer 0 may be the GLB's binary chunk; buffer ignored"
                                     : "missing; buffer ignored",
                        warning_action::dropped);
                continue;
            }
            b.data = bin_;
            b.size = bin_size_;
        } else if (uri_element.get(uri) != simdjson::SUCCESS) {
            problem(errc::parse_error, at(where, "uri"), "expected a string; buffer ignored", warning_action::dropped);
            continue;
        } else if (uri.substr(0, 5) == "data:") {
            std::string media_type;
            if (!decode_data_uri(uri, b.owned, media_type)) {
                problem(errc::parse_error, at(where, "uri"), "not a base64 data: URI; buffer ignored",
                        warning_action::dropped);
                continue;
            }
            b.data = b.owned.data();
            b.size = b.owned.size();
        } else {
            if (!read_external(std::string(uri), at(where, "uri"), length, b)) return false;
            b.data = b.owned.data();
            b.size = b.owned.size();
        }
        if (b.size < length) {
            if (!problem(errc::size_mismatch, at(where, "byteLength"),
                         std::to_string(length) + " bytes declared, " + std::to_string(b.size) +
                             " present; views past them are unusable",
                         warning_action::dropped))
                return false;
        } else {
            b.size = length; // (a GLB chunk may be padded past byteLength)
        }
        b.valid = true;
    }
    return ok();
}

bool loader::views(dom::object root) {
    std::vector<dom::element> list;
    if (!top_array(root, "bufferViews", list)) return false;
    views_.resize(list.size());
    for (std::size_t i = 0; i < list.size() && ok(); ++i) {
        const std::string where = at("/bufferViews", i);
        view_info& v = views_[i];
        dom::object o;
        if (!object_at(list[i], where, "view ignored", warning_action::dropped, o)) continue;
        v.buffer = index_member(o, "buffer", where, buffers_.size(), "buffers");
        bool bad = false;
        v.offset = size_member(o, "byteOffset", where, 0, bad);
        if (bad) continue;
        v.length = size_member(o, "byteLength", where, npos, bad);
        if (bad) continue;
        v.stride = size_member(o, "byteStride", where, 0, bad);
        if (bad) continue;
        if (v.buffer == npos || v.length == npos) {
            dom::element given;
            if (ok() && v.buffer == npos && !member(o, "buffer", given))
                problem(errc::parse_error, at(where, "buffer"), "missing; view ignored", warning_action::dropped);
            if (ok() && v.length == npos)
                problem(errc::parse_error, at(where, "byteLength"), "missing; view ignored", warning_action::dropped);
            continue;
        }
        const buffer_info& b = buffers_[v.buffer];
        if (!b.valid) {
            problem(errc::out_of_range, at(where, "buffer"), "buffer " + std::to_string(v.buffer) + " is unusable; view ignored",
                    warning_action::dropped);
            continue;
        }
        if (v.offset > b.size || v.length > b.size - v.offset) {
            problem(errc::out_of_range, where,
                    "bytes [" + std::to_string(v.offset) + ", " + std::to_string(v.offset) + " + " +
                        std::to_string(v.length) + ") are outside buffer " + std::to_string(v.buffer) + " (" +
                        std::to_string(b.size) + " bytes); view ignored",
                    warning_action::dropped);
            continue;
        }
        if (v.stride != 0 && (v.stride < 4 || v.stride > 252 || v.stride % 4 != 0)) {
            if (!problem(errc::invalid_argument, at(where, "byteStride"),
                         std::to_string(v.stride) + " is not a multiple of 4 in [4, 252]" +
                             (v.stride == 0 ? "" : "; read as given"),
                         warning_action::note))
                return false;
        }
        v.valid = true;
    }
    return ok();
}

bool loader::check_accessor(dom::object o, const std::string& where, accessor_info& a) {
    bool bad = false;
    a.view = index_member(o, "bufferView", where, views_.size(), "buffer views");
    if (!ok()) return false;
    dom::element view_element;
    if (a.view == npos && member(o, "bufferView", view_element)) return false; // reported
    a.offset = size_member(o, "byteOffset", where, 0, bad);
    if (bad) return false;
    a.count = size_member(o, "count", where, npos, bad);
    if (bad) return false;
    if (a.count == npos) return problem(errc::parse_error, at(where, "count"), "missing; accessor unusable", warning_action::dropped) && false;
    if (a.count == 0)
        return problem(errc::empty, at(where, "count"), "0 (an accessor holds at least one element); accessor unusable",
                       warning_action::dropped) && false;
    const std::size_t type_value = size_member(o, "componentType", where, 0, bad);
    if (bad) return false;
    a.type = static_cast<unsigned>(std::min<std::size_t>(type_value, 0xffffu));
    a.size = component_size(a.type);
    if (a.size == 0)
        return problem(errc::parse_error, at(where, "componentType"),
                       std::to_string(type_value) + " is not a component type; accessor unusable", warning_action::dropped) &&
               false;
    dom::element e;
    std::string_view type_name;
    if (!member(o, "type", e) || e.get(type_name) != simdjson::SUCCESS)
        return problem(errc::parse_error, at(where, "type"), "missing or not a string; accessor unusable",
                       warning_action::dropped) && false;
    a.type_name = type_name;
    if (type_name == "SCALAR") a.components = 1;
    else if (type_name == "VEC2") a.components = 2;
    else if (type_name == "VEC3") a.components = 3;
    else if (type_name == "VEC4") a.components = 4;
    else if (type_name == "MAT2") a.components = 4, a.rows = 2;
    else if (type_name == "MAT3") a.components = 9, a.rows = 3;
    else if (type_name == "MAT4") a.components = 16, a.rows = 4;
    else
        return problem(errc::parse_error, at(where, "type"), "'" + excerpt(type_name) + "' is not an accessor type; accessor unusable",
                       warning_action::dropped) && false;
    if (a.rows == 1) {
        a.rows = a.components;
        a.column_stride = std::size_t{a.components} * a.size;
        a.element_size = a.column_stride;
    } else {
        // Matrix columns start on 4-byte boundaries (MAT2 of bytes, MAT3 of bytes or shorts are padded).
        a.column_stride = (std::size_t{a.rows} * a.size + 3) / 4 * 4;
        a.element_size = a.column_stride * (a.components / a.rows);
    }
    if (member(o, "normalized", e)) {
        bool n = false;
        if (e.get(n) != simdjson::SUCCESS)
            return problem(errc::parse_error, at(where, "normalized"), "expected true or false; accessor unusable",
                           warning_action::dropped) && false;
        a.normalized = n;
        if (n && (a.type == float_type || a.type == unsigned_int_type))
            if (!problem(errc::invalid_argument, at(where, "normalized"),
                         "true for a float or unsigned int accessor; read as not normalized", warning_action::repaired))
                return false;
        if (a.type == float_type || a.type == unsigned_int_type) a.normalized = false;
    }
    if (a.view != npos) {
        const view_info& v = views_[a.view];
        if (!v.valid)
            return problem(errc::out_of_range, at(where, "bufferView"), "buffer view " + std::to_string(a.view) + " is unusable; accessor unusable",
                           warning_action::dropped) && false;
        a.stride = v.stride ? v.stride : a.element_size;
        if (a.stride < a.element_size)
            return problem(errc::invalid_argument, at(at("/bufferViews", a.view), "byteStride"),
                           std::to_string(a.stride) + " is less than the " + std::to_string(a.element_size) +
                               " bytes of an element of accessor " + where + "; accessor unusable",
                           warning_action::dropped) && false;
        // The elements must lie inside the view: offset + (count - 1) * stride + element <= length.
        const std::size_t length = v.length;
        if (a.offset > length || (length - a.offset) < a.element_size ||
            (a.count - 1) > (length - a.offset - a.element_size) / a.stride)
            return problem(errc::out_of_range, at(where, "count"),
                           std::to_string(a.count) + " elements of " + std::to_string(a.element_size) + " bytes every " +
                               std::to_string(a.stride) + " from byte " + std::to_string(a.offset) +
                               " do not fit buffer view " + std::to_string(a.view) + " (" + std::to_string(length) +
                               " bytes); accessor unusable",
                           warning_action::dropped) && false;
        if ((a.offset + v.offset) % a.size != 0 || a.stride % a.size != 0)
            if (!problem(errc::invalid_argument, at(where, "byteOffset"),
                         "elements not aligned to their " + std::to_string(a.size) + "-byte components; read as given",
                         warning_action::note))
                return false;
    }
    dom::object sparse;
    if (object_member(o, "sparse", where, sparse)) {
        const std::string sw = at(where, "sparse");
        a.sparse_count = size_member(sparse, "count", sw, npos, bad);
        if (bad || a.sparse_count == npos || a.sparse_count == 0 || a.sparse_count > a.count)
            return problem(errc::out_of_range, at(sw, "count"),
                           "missing, 0, or more than the accessor's " + std::to_string(a.count) + " elements; accessor unusable",
                           warning_action::dropped) && false;
        dom::object indices, values;
        if (!object_member(sparse, "indices", sw, indices) || !object_member(sparse, "values", sw, values))
            return ok() && problem(errc::parse_error, sw, "indices or values missing; accessor unusable", warning_action::dropped) && false;
        const std::string iw = at(sw, "indices"), vw = at(sw, "values");
        a.sparse_index_view = index_member(indices, "bufferView", iw, views_.size(), "buffer views");
        a.sparse_index_offset = size_member(indices, "byteOffset", iw, 0, bad);
        const std::size_t index_type = size_member(indices, "componentType", iw, 0, bad);
        a.sparse_index_type = static_cast<unsigned>(std::min<std::size_t>(index_type, 0xffffu));
        a.sparse_value_view = index_member(values, "bufferView", vw, views_.size(), "buffer views");
        a.sparse_value_offset = size_member(values, "byteOffset", vw, 0, bad);
        if (!ok()) return false;
        if (a.sparse_index_type != unsigned_byte_type && a.sparse_index_type != unsigned_short_type &&
            a.sparse_index_type != unsigned_int_type)
            return problem(errc::parse_error, at(iw, "componentType"), "not an unsigned integer type; accessor unusable",
                           warning_action::dropped) && false;
        const auto fits = [&](std::size_t view, std::size_t offset, std::size_t bytes) {
            if (view == npos || !views_[view].valid) return false;
            const std::size_t length = views_[view].length;
            return offset <= length && a.sparse_count <= (length - offset) / bytes;
        };
        if (!fits(a.sparse_index_view, a.sparse_index_offset, component_size(a.sparse_index_type)))
            return problem(errc::out_of_range, iw, std::to_string(a.sparse_count) + " indices do not fit their buffer view; accessor unusable",
                           warning_action::dropped) && false;
        if (!fits(a.sparse_value_view, a.sparse_value_offset, a.element_size))
            return problem(errc::out_of_range, vw, std::to_string(a.sparse_count) + " values do not fit their buffer view; accessor unusable",
                           warning_action::dropped) && false;
    }
    return ok();
}

bool loader::accessors(dom::object root) {
    std::vector<dom::element> list;
    if (!top_array(root, "accessors", list)) return false;
    out_->contents.accessors = list.size();
    accessors_.resize(list.size());
    for (std::size_t i = 0; i < list.size() && ok(); ++i) {
        dom::object o;
        const std::string where = at("/accessors", i);
        if (list[i].get(o) != simdjson::SUCCESS) {
            problem(errc::parse_error, where, "expected an object; accessor unusable", warning_action::dropped);
            continue;
        }
        accessors_[i].valid = check_accessor(o, where, accessors_[i]);
    }
    return ok();
}

template <class T, class Convert>
bool loader::read_accessor(std::size_t index, unsigned components, std::size_t max_count, const place& use,
                           std::vector<T>& out, Convert convert) {
    const auto where = [&] { return at("/accessors", index); };
    if (index >= accessors_.size() || !accessors_[index].valid)
        return problem(errc::out_of_range, use.str(),
                       index >= accessors_.size() ? "no accessor " + std::to_string(index) + "; ignored"
                                                  : "accessor " + std::to_string(index) + " is unusable; ignored",
                       warning_action::dropped) && false;
    const accessor_info& a = accessors_[index];
    if (a.components != components)
        return problem(errc::size_mismatch, use.str(),
                       "accessor " + std::to_string(index) + " is " + std::string(a.type_name) + ", " +
                           std::to_string(components) + " components expected; ignored",
                       warning_action::dropped) && false;
    if (a.view == npos && a.count > max_count)
        return problem(errc::out_of_range, at(where(), "count"),
                       std::to_string(a.count) + " elements without a buffer view exceed the limit of " +
                           std::to_string(max_count) + "; ignored",
                       warning_action::dropped) && false;
    out.resize(a.count * components);
    if (a.view == npos) {
        std::fill(out.begin(), out.end(), T{});
    } else {
        const view_info& v = views_[a.view];
        const unsigned char* base = buffers_[v.buffer].data + v.offset + a.offset;
        bool copied = false;
        if constexpr (std::is_same_v<T, float>) {
            if (a.type == float_type && a.element_size == components * 4u) {
                if (a.stride == a.element_size)
                    std::memcpy(out.data(), base, a.count * a.element_size);
                else
                    for (std::size_t e = 0; e < a.count; ++e)
                        std::memcpy(out.data() + e * components, base + e * a.stride, a.element_size);
                copied = true;
            }
        }
        if (!copied) {
            std::size_t offsets[16];
            for (unsigned c = 0; c < components; ++c) offsets[c] = a.component_offset(c);
            T* o = out.data();
            // Components one after another (no matrix column padding, no gap between elements):
            // one flat loop the compiler vectorises.
            const bool packed = a.element_size == std::size_t{components} * a.size && a.stride == a.element_size;
            // One loop per component type, so that the conversion is resolved outside it.
            const auto each = [&](auto type) {
                if (packed) {
                    constexpr std::size_t size = component_size(decltype(type)::value);
                    const std::size_t n = a.count * components;
                    if (a.normalized)
                        for (std::size_t i = 0; i < n; ++i) o[i] = convert(base + i * size, type.value, true);
                    else
                        for (std::size_t i = 0; i < n; ++i) o[i] = convert(base + i * size, type.value, false);
                    return;
                }
                for (std::size_t e = 0; e < a.count; ++e, base += a.stride)
                    for (unsigned c = 0; c < components; ++c) *o++ = convert(base + offsets[c], type.value, a.normalized);
            };
            switch (a.type) {
            case byte_type: each(std::integral_constant<unsigned, byte_type>{}); break;
            case unsigned_byte_type: each(std::integral_constant<unsigned, unsigned_byte_type>{}); break;
            case short_type: each(std::integral_constant<unsigned, short_type>{}); break;
            case unsigned_short_type: each(std::integral_constant<unsigned, unsigned_short_type>{}); break;
            case unsigned_int_type: each(std::integral_constant<unsigned, unsigned_int_type>{}); break;
            default: each(std::integral_constant<unsigned, float_type>{}); break;
            }
        }
    }
    if (a.sparse_count) {
        const view_info& iv = views_[a.sparse_index_view];
        const view_info& vv = views_[a.sparse_value_view];
        const unsigned char* indices = buffers_[iv.buffer].data + iv.offset + a.sparse_index_offset;
        const unsigned char* values = buffers_[vv.buffer].data + vv.offset + a.sparse_value_offset;
        const unsigned index_size = component_size(a.sparse_index_type);
        std::size_t previous = 0;
        for (std::size_t k = 0; k < a.sparse_count; ++k) {
            const std::size_t i = read_uint(indices + k * index_size, a.sparse_index_type);
            if (i >= a.count || (k > 0 && i <= previous))
                return problem(errc::out_of_range, at(at(where(), "sparse"), "indices"),
                               "index " + std::to_string(k) + " (" + std::to_string(i) +
                                   ") is out of range or not above the one before it; accessor ignored",
                               warning_action::dropped, k) && false;
            previous = i;
            for (unsigned c = 0; c < components; ++c)
                out[i * components + c] = convert(values + k * a.element_size + a.component_offset(c), a.type, a.normalized);
        }
    }
    return true;
}

bool loader::vertex_attribute(std::size_t a, unsigned components, std::size_t vertices, const place& use,
                              std::vector<float>& out) {
    if (!read_floats(a, components, options_.max_vertices, use, out)) return false;
    if (out.size() != vertices * components)
        return problem(errc::size_mismatch, use.str(),
                       "accessor " + std::to_string(a) + " has " + std::to_string(out.size() / components) +
                           " elements, the primitive " + std::to_string(vertices) + " vertices; ignored",
                       warning_action::dropped) && false;
    if (accessors_[a].type != float_type) return true; // (integers convert to finite floats)
    // (A branchless test of the exponent bits first: all ones for NaN and infinities.)
    // (In eight lanes, which compilers vectorise as more than one chain of ORs.)
    std::uint32_t lanes[8] = {};
    const auto exponent_ones = [&out](std::size_t i) {
        std::uint32_t bits;
        std::memcpy(&bits, &out[i], 4);
        return static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    };
    std::size_t e = 0;
    for (; e + 8 <= out.size(); e += 8)
        for (std::size_t l = 0; l < 8; ++l) lanes[l] |= exponent_ones(e + l);
    for (; e < out.size(); ++e) lanes[0] |= exponent_ones(e);
    std::uint32_t special = 0;
    for (std::uint32_t l : lanes) special |= l;
    std::size_t bad = 0, first = 0;
    if (special)
        for (std::size_t i = 0; i < out.size(); ++i)
            if (!is_finite(out[i])) {
                if (!bad++) first = i / components;
                out[i] = 0.0f;
            }
    if (bad)
        return problem(errc::non_finite, use.str(),
                       std::to_string(bad) + " NaN or infinite values (first in vertex " + std::to_string(first) +
                           ") replaced by 0",
                       warning_action::repaired, first);
    return true;
}

// -----------------------------------------------------------------------------------------------
// Nodes, the hierarchy, the skeleton
// -----------------------------------------------------------------------------------------------

bool loader::nodes(dom::object root) {
    if (!top_array(root, "nodes", node_json_)) return false;
    const std::size_t n = node_json_.size();
    out_->contents.nodes = n;
    if (n > options_.max_joints) return limit("max_joints", options_.max_joints, n, "nodes");
    nodes_.resize(n);
    for (std::size_t i = 0; i < n && ok(); ++i) {
        const std::string where = at("/nodes", i);
        node_info& node = nodes_[i];
        dom::object o;
        if (!object_at(node_json_[i], where, "read as an empty node", warning_action::repaired, o)) continue;
        node.name = string_member(o, "name");
        dom::array children;
        if (array_member(o, "children", where, children)) {
            node.children.reserve(children.size());
            std::size_t c = 0;
            for (dom::element e : children) {
                std::uint64_t v = 0;
                if (e.get(v) != simdjson::SUCCESS || v >= n) {
                    problem(errc::out_of_range, at(at(where, "children"), c), "not the index of a node; ignored",
                            warning_action::dropped, c);
                } else {
                    node.children.push_back(static_cast<std::size_t>(v));
                }
                ++c;
            }
        }
        node.mesh = index_member(o, "mesh", where, mesh_json_.size(), "meshes");
        node.skin = index_member(o, "skin", where, skin_json_.size(), "skins");
        dom::element e;
        if (member(o, "camera", e)) not_imported("cameras", at(where, "camera"));
        dom::object ext;
        if (object_member(o, "extensions", where, ext))
            for (auto field : ext) not_imported("node extension " + excerpt(field.key), at(at(where, "extensions"), std::string(field.key).c_str()));
        float m[16];
        if (numbers_member(o, "matrix", where, 16, m)) {
            node.has_matrix = true;
            for (int c = 0; c < 4; ++c)
                for (int r = 0; r < 4; ++r) node.local[c][r] = m[c * 4 + r];
        }
        float t[3] = {0, 0, 0}, q[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
        const bool has_t = numbers_member(o, "translation", where, 3, t);
        bool has_r = numbers_member(o, "rotation", where, 4, q);
        const bool has_s = numbers_member(o, "scale", where, 3, s);
        if (!ok()) return false;
        if (has_r) {
            // (in double: a float sum of squares of large components overflows)
            const glm::dvec4 dq(q[0], q[1], q[2], q[3]);
            const double exact = std::sqrt(glm::dot(dq, dq));
            const auto length = static_cast<float>(exact);
            if (std::fabs(length - 1.0f) > unit_rounding && std::fabs(length - 1.0f) <= key_traits<glm::quat>::unit_tolerance) {
                if (!warn(errc::not_normalized, at(where, "rotation"),
                          "length " + impl::float_to_string(length) + " (within 1e-3 of 1) normalised", warning_action::note))
                    return false;
                for (float& c : q) c /= length;
            } else if (std::fabs(length - 1.0f) > key_traits<glm::quat>::unit_tolerance) {
                if (!problem(errc::not_normalized, at(where, "rotation"),
                             "length " + impl::float_to_string(length) +
                                 (length > 0.0f ? " normalised" : " is no rotation: the identity is used"),
                             warning_action::repaired))
                    return false;
                if (exact > 0.0)
                    for (float& c : q) c = static_cast<float>(static_cast<double>(c) / exact);
                else
                    q[0] = q[1] = q[2] = 0.0f, q[3] = 1.0f;
            }
        }
        if (node.has_matrix && (has_t || has_r || has_s)) {
            if (!problem(errc::invalid_argument, where, "both a matrix and translation/rotation/scale; the matrix is used",
                         warning_action::dropped))
                return false;
        } else if (!node.has_matrix) {
            transform tr;
            tr.translation = glm::vec3(t[0], t[1], t[2]);
            tr.rotation = make_quat(q[3], q[0], q[1], q[2]);
            tr.scale = glm::vec3(s[0], s[1], s[2]);
            node.local = to_matrix(tr);
        }
        dom::array weights;
        if (array_member(o, "weights", where, weights)) {
            node.has_weights = true;
            for (dom::element w : weights) {
                double d = 0.0;
                if (w.get(d) != simdjson::SUCCESS || !is_finite(static_cast<float>(d))) {
                    problem(errc::non_finite, at(where, "weights"), "not all finite numbers; ignored", warning_action::dropped);
                    node.has_weights = false;
                    node.weights.clear();
                    break;
                }
                node.weights.push_back(static_cast<float>(d));
            }
        }
    }
    return ok();
}

bool loader::hierarchy() {
    const std::size_t n = nodes_.size();
    parent_.assign(n, npos);
    for (std::size_t p = 0; p < n && ok(); ++p) {
        for (std::size_t k = 0; k < nodes_[p].children.size(); ++k) {
            const std::size_t c = nodes_[p].children[k];
            const auto where = [&] { return at(at(at("/nodes", p), "children"), k); };
            if (c == p) {
                problem(errc::cycle, where(), "node " + std::to_string(p) + " is its own child; link ignored",
                        warning_action::dropped, p);
            } else if (parent_[c] != npos) {
                problem(errc::cycle, where(),
                        "node " + std::to_string(c) + " is already a child of node " + std::to_string(parent_[c]) +
                            " (a node has one parent); link ignored",
                        warning_action::dropped, c);
            } else {
                parent_[c] = p;
            }
            if (!ok()) return false;
        }
    }
    // Loops among parent links (a node its own ancestor): walk up from each node, marking the walk;
    // meeting the current walk is a loop, which is cut at the node where it was met. O(n) in all.
    std::vector<std::size_t> walk_of(n, npos);
    for (std::size_t start = 0; start < n; ++start) {
        std::size_t j = start;
        while (j != npos && walk_of[j] == npos) {
            walk_of[j] = start;
            j = parent_[j];
        }
        if (j != npos && walk_of[j] == start) {
            if (!problem(errc::cycle, at("/nodes", parent_[j]),
                         "node " + std::to_string(j) + " is its own ancestor (a loop of children links); its link to parent " +
                             std::to_string(parent_[j]) + " is ignored",
                         warning_action::dropped, j))
                return false;
            parent_[j] = npos;
        }
    }
    // Parents-first order (an iterative pre-order walk) and the bind-pose model matrices, whose
    // products must stay finite.
    std::vector<std::size_t> first(n + 1, 0), child(n);
    for (std::size_t i = 0; i < n; ++i)
        if (parent_[i] != npos) ++first[parent_[i] + 1];
    for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
    {
        std::vector<std::size_t> fill(first.begin(), first.end() - 1);
        for (std::size_t i = 0; i < n; ++i)
            if (parent_[i] != npos) child[fill[parent_[i]]++] = i;
    }
    order_.clear();
    order_.reserve(n);
    std::vector<std::size_t> stack;
    for (std::size_t r = n; r-- > 0;)
        if (parent_[r] == npos) stack.push_back(r);
    while (!stack.empty()) {
        const std::size_t i = stack.back();
        stack.pop_back();
        order_.push_back(i);
        for (std::size_t c = first[i + 1]; c-- > first[i];) stack.push_back(child[c]);
    }
    bind_model_.assign(n, glm::mat4(1.0f));
    for (std::size_t i : order_) {
        const glm::mat4 parent = parent_[i] == npos ? glm::mat4(1.0f) : bind_model_[parent_[i]];
        glm::mat4 model = parent * nodes_[i].local;
        if (!is_finite(model)) {
            if (!problem(errc::non_finite, at("/nodes", i),
                         "its bind-pose transform, or its product with its parents', is not finite; the identity is used",
                         warning_action::repaired, i))
                return false;
            nodes_[i].local = glm::mat4(1.0f);
            model = parent;
        }
        bind_model_[i] = model;
    }
    return ok();
}

bool loader::skeleton() {
    const std::size_t n = nodes_.size();
    std::vector<joint_desc> joints(n);
    for (std::size_t i = 0; i < n; ++i) {
        joint_desc& d = joints[i];
        d.name = nodes_[i].name.empty() ? "node_" + std::to_string(i) : nodes_[i].name;
        d.parent = parent_[i] == npos ? no_parent : static_cast<joint_index>(parent_[i]);
        d.bind_local = nodes_[i].local;
        // Morph weights: one per target of the node's mesh; node.weights, else mesh.weights, else 0.
        const std::size_t m = nodes_[i].mesh;
        const std::size_t targets = m == npos ? 0 : meshes_[m].target_count;
        if (targets == 0) {
            if (nodes_[i].has_weights && !nodes_[i].weights.empty())
                if (!problem(errc::size_mismatch, at(at("/nodes", i), "weights"),
                             "weights on a node without morph targets; ignored", warning_action::dropped))
                    return false;
            continue;
        }
        const std::vector<float>* source = &meshes_[m].weights;
        std::string where = at(at("/meshes", m), "weights");
        if (nodes_[i].has_weights) {
            source = &nodes_[i].weights;
            where = at(at("/nodes", i), "weights");
        }
        d.morph_weights.assign(targets, 0.0f);
        if (!source->empty() && source->size() != targets)
            if (!problem(errc::size_mismatch, where,
                         std::to_string(source->size()) + " weights for " + std::to_string(targets) +
                             " morph targets; the missing ones are 0, extra ones ignored",
                         warning_action::repaired))
                return false;
        std::copy_n(source->begin(), std::min(source->size(), targets), d.morph_weights.begin());
    }
    skeleton_options so;
    so.duplicates = duplicate_names::rename;
    result<keyblend::skeleton> s = keyblend::skeleton::from_parents(joints, so);
    if (!s) return fail(s.error().code, "/nodes", s.error().message, s.error().index);
    out_->skeleton = std::move(*s);
    out_->joint_of_node = out_->skeleton.joint_of_source();
    return true;
}

// -----------------------------------------------------------------------------------------------
// Skins, materials, meshes
// -----------------------------------------------------------------------------------------------

bool loader::skins(dom::object root) {
    out_->contents.skins = skin_json_.size();
    skins_.resize(skin_json_.size());
    for (std::size_t i = 0; i < skin_json_.size() && ok(); ++i) {
        const std::string where = at("/skins", i);
        skin_info& s = skins_[i];
        dom::object o;
        if (!object_at(skin_json_[i], where, "skin ignored", warning_action::dropped, o)) continue;
        dom::array joints;
        if (!array_member(o, "joints", where, joints)) {
            if (ok()) problem(errc::parse_error, at(where, "joints"), "missing; skin ignored", warning_action::dropped);
            continue;
        }
        if (joints.size() == 0) {
            problem(errc::empty, at(where, "joints"), "no joints; skin ignored", warning_action::dropped);
            continue;
        }
        if (joints.size() > 65536)
            return fail(errc::unsupported, at(where, "joints"),
                        std::to_string(joints.size()) + " joints (keyblend's bone indices are 16-bit: at most 65536)");
        bool usable = true;
        std::size_t k = 0;
        for (dom::element e : joints) {
            std::uint64_t v = 0;
            if (e.get(v) != simdjson::SUCCESS || v >= nodes_.size()) {
                problem(errc::out_of_range, at(at(where, "joints"), k), "not the index of a node; skin ignored",
                        warning_action::dropped, k);
                usable = false;
                break;
            }
            s.joints.push_back(static_cast<std::size_t>(v));
            ++k;
        }
        if (!usable) continue;
        s.inverse_binds.assign(s.joints.size(), glm::mat4(1.0f));
        dom::element ibm;
        if (member(o, "inverseBindMatrices", ibm)) {
            const std::size_t a = index_member(o, "inverseBindMatrices", where, accessors_.size(), "accessors");
            std::vector<float> m;
            std::size_t have = 0;
            if (a != npos && read_floats(a, 16, options_.max_joints, at(where, "inverseBindMatrices"), m)) have = m.size() / 16;
            if (!ok()) return false;
            for (std::size_t j = 0; j < std::min(have, s.joints.size()); ++j)
                for (int c = 0; c < 4; ++c)
                    for (int r = 0; r < 4; ++r) s.inverse_binds[j][c][r] = m[j * 16 + std::size_t(c) * 4 + std::size_t(r)];
            if (have < s.joints.size()) {
                if (!problem(errc::size_mismatch, at(where, "inverseBindMatrices"),
                             std::to_string(have) + " inverse bind matrices for " + std::to_string(s.joints.size()) +
                                 " joints; the missing ones are the inverses of their joints' bind-pose model matrices",
                             warning_action::repaired, have))
                    return false;
                for (std::size_t j = have; j < s.joints.size(); ++j) {
                    const glm::mat4& model = bind_model_[s.joints[j]];
                    s.inverse_binds[j] = glm::determinant(model) != 0.0f ? glm::inverse(model) : glm::mat4(1.0f);
                    if (!is_finite(s.inverse_binds[j])) s.inverse_binds[j] = glm::mat4(1.0f);
                }
            }
            for (std::size_t j = 0; j < have && j < s.joints.size(); ++j)
                if (!is_finite(s.inverse_binds[j])) {
                    if (!problem(errc::non_finite, at(where, "inverseBindMatrices"),
                                 "inverse bind matrix " + std::to_string(j) + " is not finite; the identity is used",
                                 warning_action::repaired, j))
                        return false;
                    s.inverse_binds[j] = glm::mat4(1.0f);
                }
        }
        s.valid = true;
    }
    (void)root;
    return ok();
}

bool loader::materials(dom::object root) {
    std::vector<dom::element> list, textures, images;
    if (!top_array(root, "materials", list) || !top_array(root, "textures", textures) || !top_array(root, "images", images))
        return false;
    out_->contents.materials = list.size();
    out_->contents.images = images.size();
    // Each image read once, however many materials use it (and shared by them).
    std::vector<std::shared_ptr<const io::embedded_image>> embedded(images.size());
    std::vector<bool> used(images.size(), false);
    materials_.resize(list.size());
    for (std::size_t i = 0; i < list.size() && ok(); ++i) {
        const std::string where = at("/materials", i);
        io::material& m = materials_[i];
        dom::object o;
        if (!object_at(list[i], where, "default material used", warning_action::repaired, o)) continue;
        m.name = string_member(o, "name");
        dom::object pbr;
        if (object_member(o, "pbrMetallicRoughness", where, pbr)) {
            const std::string pw = at(where, "pbrMetallicRoughness");
            float c[4];
            if (numbers_member(pbr, "baseColorFactor", pw, 4, c)) m.diffuse = glm::vec4(c[0], c[1], c[2], c[3]);
            dom::object texture;
            if (object_member(pbr, "baseColorTexture", pw, texture)) {
                const std::size_t t = index_member(texture, "index", at(pw, "baseColorTexture"), textures.size(), "textures");
                dom::object to;
                if (t != npos && textures[t].get(to) == simdjson::SUCCESS) {
                    const std::size_t image = index_member(to, "source", at("/textures", t), images.size(), "images");
                    dom::object io_;
                    if (image != npos && images[image].get(io_) == simdjson::SUCCESS) {
                        m.texture_file = string_member(io_, "uri");
                        if (m.texture_file.empty() || m.texture_file.substr(0, 5) == "data:") {
                            m.texture_file = "image " + std::to_string(image);
                            if (!used[image]) embedded[image] = embedded_image(io_, image);
                            m.texture_image = embedded[image];
                        }
                        used[image] = true;
                    }
                }
            }
        }
        float e[3];
        if (numbers_member(o, "emissiveFactor", where, 3, e)) m.emissive = glm::vec3(e[0], e[1], e[2]);
    }
    for (std::size_t i = 0; i < images.size(); ++i)
        if (!used[i]) not_imported("images no material uses as its base colour texture", at("/images", i));
    return ok();
}

std::shared_ptr<const io::embedded_image> loader::embedded_image(dom::object o, std::size_t index) {
    const std::string where = at("/images", index);
    auto image = std::make_shared<io::embedded_image>();
    const std::string uri = string_member(o, "uri");
    image->mime_type = string_member(o, "mimeType");
    if (!uri.empty()) { // a data: URI (the caller passes no other)
        std::string media_type;
        if (!decode_data_uri(uri, image->bytes, media_type)) {
            problem(errc::parse_error, at(where, "uri"), "not a base64 data: URI; image not imported",
                    warning_action::dropped);
            return nullptr;
        }
        if (!media_type.empty()) image->mime_type = media_type;
    } else {
        const std::size_t view = index_member(o, "bufferView", where, views_.size(), "bufferViews");
        dom::element given;
        if (view == npos) {
            if (ok() && !member(o, "bufferView", given))
                problem(errc::parse_error, where, "neither a uri nor a bufferView; image not imported",
                        warning_action::dropped);
            return nullptr;
        }
        if (!views_[view].valid) {
            problem(errc::out_of_range, at(where, "bufferView"),
                    "view " + std::to_string(view) + " is unusable; image not imported", warning_action::dropped);
            return nullptr;
        }
        if (image->mime_type.empty()) {
            problem(errc::parse_error, at(where, "mimeType"), "missing (required with a bufferView); image not imported",
                    warning_action::dropped);
            return nullptr;
        }
        const view_info& v = views_[view];
        const unsigned char* bytes = buffers_[v.buffer].data + v.offset;
        image->bytes.assign(bytes, bytes + v.length);
    }
    return image;
}

bool loader::meshes(dom::object root) {
    (void)root;
    out_->contents.meshes = mesh_json_.size();
    meshes_.resize(mesh_json_.size());
    for (std::size_t i = 0; i < mesh_json_.size() && ok(); ++i) {
        const std::string where = at("/meshes", i);
        mesh_info& m = meshes_[i];
        dom::object o;
        if (!object_at(mesh_json_[i], where, "mesh ignored", warning_action::dropped, o)) continue;
        m.name = string_member(o, "name");
        dom::array primitives;
        if (!array_member(o, "primitives", where, primitives)) {
            if (ok()) problem(errc::parse_error, at(where, "primitives"), "missing; mesh ignored", warning_action::dropped);
            continue;
        }
        if (primitives.size() > options_.max_objects - std::min(objects_, options_.max_objects))
            return limit("max_objects", options_.max_objects, objects_ + primitives.size(), "objects");
        objects_ += primitives.size();
        out_->contents.primitives += primitives.size();
        for (dom::element p : primitives) m.primitive_json.push_back(p);
        m.primitives.resize(m.primitive_json.size());
        // The morph target count: primitive 0's (every primitive must have as many).
        dom::object p0;
        dom::array targets;
        if (!m.primitive_json.empty() && m.primitive_json[0].get(p0) == simdjson::SUCCESS &&
            array_member(p0, "targets", at(at(where, "primitives"), std::size_t{0}), targets))
            m.target_count = targets.size();
        dom::array weights;
        if (array_member(o, "weights", where, weights)) {
            for (dom::element w : weights) {
                double d = 0.0;
                if (w.get(d) != simdjson::SUCCESS || !is_finite(static_cast<float>(d))) {
                    problem(errc::non_finite, at(where, "weights"), "not all finite numbers; ignored", warning_action::dropped);
                    m.weights.clear();
                    break;
                }
                m.weights.push_back(static_cast<float>(d));
            }
        }
        dom::object extras;
        dom::array names;
        if (object_member(o, "extras", where, extras) && array_member(extras, "targetNames", at(where, "extras"), names))
            for (dom::element e : names) {
                std::string_view s;
                m.target_names.emplace_back(e.get(s) == simdjson::SUCCESS ? s : std::string_view());
            }
    }
    return ok();
}

/// How many floats a GLM vector holds (its length(), a constant expression in every GLM setting).
template <class V>
struct components_of;
template <glm::length_t L, class T, glm::qualifier Q>
struct components_of<glm::vec<L, T, Q>> : std::integral_constant<std::size_t, static_cast<std::size_t>(L)> {};

/// The influences of a vertex, sorted by decreasing weight (stable), capped at 8.
struct influence {
    std::uint32_t joint;
    float weight;
};

/// The largest of `n` values (in eight lanes, which compilers vectorise).
std::uint32_t largest_of(const std::uint32_t* v, std::size_t n) {
    std::uint32_t lane[8] = {};
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (std::size_t j = 0; j < 8; ++j) lane[j] = v[i + j] > lane[j] ? v[i + j] : lane[j];
    std::uint32_t largest = 0;
    for (; i < n; ++i) largest = v[i] > largest ? v[i] : largest;
    for (std::uint32_t x : lane) largest = x > largest ? x : largest;
    return largest;
}

/// What ordering a primitive's influences found, for its warnings.
struct influence_tally {
    std::size_t most = 0; ///< the most influences a vertex keeps
    std::size_t bad_weight = 0, bad_joint = 0, off_sum = 0, first_bad = 0;
    std::uint32_t largest_joint = 0;
};

/// One or two sets of four (the usual case): each vertex's kept pairs (a positive weight, a joint
/// below 65536) by decreasing weight, equal weights in file order, written `Slots` per vertex
/// (0 / 0.0f after the last). Each slot is one 64-bit key: the weight's bits (positive floats
/// order as their bits do; 0 for a pair not kept), the slot's place in file order, the joint;
/// keys are ordered by a sorting network of selections, without a branch or a store to a computed
/// place, so that compilers run several vertices at once in vector registers (with AVX2, 4 a
/// register; SSE2 has no 64-bit compare, and there it runs about as one vertex at a time does).
template <std::size_t Slots>
inline void order_influences_pass(const float* const* weight_sets, const std::uint32_t* const* joint_sets,
                                 std::size_t vertices, std::uint16_t* bones, float* weights, influence_tally& t) {
    std::uint32_t largest = t.largest_joint, most = 0, bad_weights = 0, bad_joints = 0, off_sum = 0;
    // (The sets' arrays indexed by slot / 4: GCC 12 with -fsanitize=undefined miscompiled
    // `(s < 4 ? j0 : j1)[i]` here, reading 0.)
    const float* const w[2] = {weight_sets[0], weight_sets[Slots / 4 - 1]};
    const std::uint32_t* const j[2] = {joint_sets[0], joint_sets[Slots / 4 - 1]};
    for (std::size_t v = 0; v < vertices; ++v) {
        std::int64_t key[Slots];
        std::uint32_t used = 0;
        for (std::size_t s = 0; s < Slots; ++s) {
            std::uint32_t bits;
            std::memcpy(&bits, w[s / 4] + 4 * v + s % 4, 4);
            const std::uint32_t index = j[s / 4][4 * v + s % 4];
            // Above 0 is [1, 0x7f800000] (NaN are above); not 0 is any bit but the sign.
            const std::uint32_t positive = static_cast<std::uint32_t>(bits - 1u < 0x7f800000u);
            const std::uint32_t joint_ok = static_cast<std::uint32_t>(index < 65536u);
            const std::uint32_t keep = 0u - (positive & joint_ok);
            key[s] = static_cast<std::int64_t>(std::uint64_t{bits & keep} << 20 | std::uint64_t{15 - s} << 16 |
                                               (index & keep & 0xffffu));
            used += keep & 1u;
            bad_weights += static_cast<std::uint32_t>((bits & 0x7fffffffu) != 0) & (positive ^ 1u);
            bad_joints += positive & (joint_ok ^ 1u);
        }
        const auto order = [&key](std::size_t a, std::size_t b) {
            const std::int64_t x = key[a], y = key[b];
            key[a] = x > y ? x : y;
            key[b] = x > y ? y : x;
        };
        if constexpr (Slots == 4) {
            order(0, 1), order(2, 3), order(0, 2), order(1, 3), order(1, 2);
        } else {
            order(0, 2), order(1, 3), order(4, 6), order(5, 7), order(0, 4), order(1, 5), order(2, 6);
            order(3, 7), order(0, 1), order(2, 3), order(4, 5), order(6, 7), order(2, 4), order(3, 5);
            order(1, 4), order(3, 6), order(1, 2), order(3, 4), order(5, 6);
        }
        float sum = 0.0f;
        for (std::size_t p = 0; p < Slots; ++p) {
            const auto joint = static_cast<std::uint32_t>(key[p]) & 0xffffu;
            const auto bits = static_cast<std::uint32_t>(static_cast<std::uint64_t>(key[p]) >> 20);
            float weight;
            std::memcpy(&weight, &bits, 4);
            bones[v * Slots + p] = static_cast<std::uint16_t>(joint);
            weights[v * Slots + p] = weight;
            sum += weight;
            largest = joint > largest ? joint : largest;
        }
        most = used > most ? used : most;
        off_sum += static_cast<std::uint32_t>(std::fabs(sum - 1.0f) > 1e-3f);
    }
    if (bad_weights | bad_joints) {
        // For the warnings, the first vertex with a bad weight, else the first with a bad joint (a
        // second pass, only on damaged data).
        std::size_t first_weight = npos, first_joint = npos;
        for (std::size_t v = 0; v < vertices && first_weight == npos; ++v)
            for (std::size_t s = 0; s < Slots; ++s) {
                std::uint32_t bits;
                std::memcpy(&bits, w[s / 4] + 4 * v + s % 4, 4);
                const bool positive = bits - 1u < 0x7f800000u;
                if ((bits & 0x7fffffffu) != 0 && !positive && first_weight == npos) first_weight = v;
                if (positive && j[s / 4][4 * v + s % 4] >= 65536u && first_joint == npos) first_joint = v;
            }
        t.first_bad = first_weight != npos ? first_weight : first_joint;
        t.bad_weight = bad_weights;
        t.bad_joint = bad_joints;
    }
    t.most = std::max<std::size_t>(t.most, most);
    t.off_sum += off_sum;
    t.largest_joint = largest;
}

#if KEYBLEND_CPU_X86 && (defined(__GNUC__) || defined(__clang__))
#define KEYBLEND_GLTF_AVX2_INFLUENCES 1

#define KEYBLEND_GLTF_AVX2 __attribute__((target("avx2,fma,bmi2"), always_inline)) inline

/// Rows (a vertex's four values) to columns (a slot's four vertices), and back: the same swap.
KEYBLEND_GLTF_AVX2 void transpose(__m128i& a, __m128i& b, __m128i& c, __m128i& d) {
    const __m128i ab0 = _mm_unpacklo_epi32(a, b), cd0 = _mm_unpacklo_epi32(c, d);
    const __m128i ab1 = _mm_unpackhi_epi32(a, b), cd1 = _mm_unpackhi_epi32(c, d);
    a = _mm_unpacklo_epi64(ab0, cd0), b = _mm_unpackhi_epi64(ab0, cd0);
    c = _mm_unpacklo_epi64(ab1, cd1), d = _mm_unpackhi_epi64(ab1, cd1);
}

/// The larger keys to `a`, the smaller to `b` (signed 64-bit lanes).
KEYBLEND_GLTF_AVX2 void order_keys(__m256i& a, __m256i& b) {
    const __m256i x = a, y = b, greater = _mm256_cmpgt_epi64(x, y);
    a = _mm256_blendv_epi8(y, x, greater);
    b = _mm256_blendv_epi8(x, y, greater);
}

/// order_influences_pass<4> written out for AVX2, four vertices at a time: the vertices' rows of
/// four slots turned into a register of four 64-bit keys per slot, the same sorting network, and
/// the sorted keys turned back into rows (which compilers otherwise store one value at a time).
/// Orders the whole groups of four and returns how many vertices that is, or 0 (having written
/// nothing that counts) when a vertex has a bad weight or joint, for the portable pass to report.
__attribute__((target("avx2,fma,bmi2"))) std::size_t order_four_avx2(const float* weight_data,
                                                                      const std::uint32_t* joint_data,
                                                                      std::size_t vertices, std::uint16_t* bones,
                                                                      float* weights, influence_tally& t) {
    const std::size_t groups = vertices / 4 * 4;
    const __m128i sign = _mm_set1_epi32(static_cast<int>(0x80000000u));
    const __m128i positive_below = _mm_set1_epi32(static_cast<int>(0x7f800000u ^ 0x80000000u));
    const __m128i one = _mm_set1_epi32(1), low16 = _mm_set1_epi32(0xffff), magnitude = _mm_set1_epi32(0x7fffffff);
    const __m128i zero = _mm_setzero_si128();
    const __m256i compact = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m128 abs_mask = _mm_castsi128_ps(magnitude), unit = _mm_set1_ps(1.0f), off_limit = _mm_set1_ps(1e-3f);
    __m128i most = zero, largest = _mm_set1_epi32(static_cast<int>(t.largest_joint)), bad = zero, off = zero;
    for (std::size_t v = 0; v < groups; v += 4) {
        __m128i w[4], j[4];
        for (std::size_t r = 0; r < 4; ++r) {
            w[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(weight_data + 4 * (v + r)));
            j[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(joint_data + 4 * (v + r)));
        }
        transpose(w[0], w[1], w[2], w[3]);
        transpose(j[0], j[1], j[2], j[3]);
        __m256i key[4];
        __m128i used = zero;
        for (int s = 0; s < 4; ++s) {
            // As the portable pass: kept is a weight in (0, +inf] with a joint below 65536.
            const __m128i positive =
                _mm_cmpgt_epi32(positive_below, _mm_xor_si128(_mm_sub_epi32(w[s], one), sign));
            const __m128i joint_ok = _mm_cmpeq_epi32(_mm_srli_epi32(j[s], 16), zero);
            const __m128i keep = _mm_and_si128(positive, joint_ok);
            const __m128i nonzero = _mm_xor_si128(_mm_cmpeq_epi32(_mm_and_si128(w[s], magnitude), zero),
                                                  _mm_set1_epi32(-1));
            bad = _mm_or_si128(bad, _mm_or_si128(_mm_andnot_si128(positive, nonzero), _mm_andnot_si128(joint_ok, positive)));
            used = _mm_sub_epi32(used, keep);
            const __m128i low = _mm_or_si128(_mm_and_si128(j[s], _mm_and_si128(keep, low16)), _mm_set1_epi32((15 - s) << 16));
            key[s] = _mm256_or_si256(_mm256_slli_epi64(_mm256_cvtepu32_epi64(_mm_and_si128(w[s], keep)), 20),
                                     _mm256_cvtepu32_epi64(low));
        }
        order_keys(key[0], key[1]), order_keys(key[2], key[3]), order_keys(key[0], key[2]);
        order_keys(key[1], key[3]), order_keys(key[1], key[2]);
        // Each key as (weight bits, joint) in its 64 bits, then a slot's four weights and four joints.
        __m128 sum = _mm_setzero_ps();
        for (int p = 0; p < 4; ++p) {
            const __m256i pair = _mm256_or_si256(_mm256_srli_epi64(key[p], 20),
                                                 _mm256_slli_epi64(_mm256_and_si256(key[p], _mm256_set1_epi64x(0xffff)), 32));
            const __m256i split = _mm256_permutevar8x32_epi32(pair, compact);
            w[p] = _mm256_castsi256_si128(split);
            j[p] = _mm256_extracti128_si256(split, 1);
            sum = _mm_add_ps(sum, _mm_castsi128_ps(w[p]));
            largest = _mm_max_epu32(largest, j[p]);
        }
        off = _mm_sub_epi32(off, _mm_castps_si128(_mm_cmpgt_ps(_mm_and_ps(_mm_sub_ps(sum, unit), abs_mask), off_limit)));
        most = _mm_max_epu32(most, used);
        transpose(w[0], w[1], w[2], w[3]);
        transpose(j[0], j[1], j[2], j[3]);
        for (std::size_t r = 0; r < 4; ++r) _mm_storeu_si128(reinterpret_cast<__m128i*>(weights + 4 * (v + r)), w[r]);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(bones + 4 * v), _mm_packus_epi32(j[0], j[1]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(bones + 4 * v + 8), _mm_packus_epi32(j[2], j[3]));
    }
    if (!_mm_testz_si128(bad, bad)) return 0;
    std::uint32_t lanes[4];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), most);
    t.most = std::max<std::size_t>(t.most, *std::max_element(lanes, lanes + 4));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), largest);
    t.largest_joint = *std::max_element(lanes, lanes + 4);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), off);
    t.off_sum += std::size_t{lanes[0]} + lanes[1] + lanes[2] + lanes[3];
    return groups;
}

#define KEYBLEND_GLTF_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,bmi2")))

/// As the AVX2 order_keys: AVX-512 has 64-bit max and min.
KEYBLEND_GLTF_AVX512_TARGET __attribute__((always_inline)) inline void order_keys(__m512i& a, __m512i& b) {
    const __m512i x = a, y = b;
    a = _mm512_maskz_max_epi64(0xFF, x, y);
    b = _mm512_maskz_min_epi64(0xFF, x, y);
}

/// order_four_avx2's work eight vertices at a time in AVX-512 registers: a slot's eight keys
/// gathered from the rows by one two-register permute, ordered by 64-bit max and min, and put back
/// into rows by permutes (and, for the joints, a narrowing store). The same result and return.
KEYBLEND_GLTF_AVX512_TARGET std::size_t order_eight_avx512(const float* weight_data, const std::uint32_t* joint_data,
                                                      std::size_t vertices, std::uint16_t* bones, float* weights,
                                                      influence_tally& t) {
    // (Every 512-bit operation that has one in its maskz form with all lanes, as in the kernels:
    // GCC 12's plain forms start from an undefined register, which -Wmaybe-uninitialized reports.)
    const std::size_t groups = vertices / 8 * 8;
    // Slot s of vertices 0..7 from two registers of four vertices' rows, in 64-bit lanes (the odd
    // dwords zeroed by the mask).
    __m512i slot_index[4];
    for (int s = 0; s < 4; ++s)
        slot_index[s] = _mm512_setr_epi32(s, 0, 4 + s, 0, 8 + s, 0, 12 + s, 0, 16 + s, 0, 20 + s, 0, 24 + s, 0, 28 + s, 0);
    // Sorted keys back to rows: pairs of slots first (vertex v's slots p, p + 1 at dwords 2v, 2v + 1),
    // then the two pairs of each vertex side by side.
    const __m512i pair_index = _mm512_setr_epi32(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
    const __m512i rows_low = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
    const __m512i rows_high = _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
    const __m512i one = _mm512_set1_epi64(1), positive_below = _mm512_set1_epi64(0x7f800000);
    const __m512i joint_limit = _mm512_set1_epi64(65536), magnitude = _mm512_set1_epi64(0x7fffffff);
    const __m256 unit = _mm256_set1_ps(1.0f), off_limit = _mm256_set1_ps(1e-3f);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m512i most = _mm512_setzero_si512(), largest = _mm512_set1_epi64(t.largest_joint);
    std::uint32_t bad = 0;
    std::size_t off = 0;
    for (std::size_t v = 0; v < groups; v += 8) {
        const __m512i w0 = _mm512_loadu_si512(weight_data + 4 * v), w1 = _mm512_loadu_si512(weight_data + 4 * v + 16);
        const __m512i j0 = _mm512_loadu_si512(joint_data + 4 * v), j1 = _mm512_loadu_si512(joint_data + 4 * v + 16);
        __m512i key[4], used = _mm512_setzero_si512();
        for (int s = 0; s < 4; ++s) {
            const __m512i w = _mm512_maskz_permutex2var_epi32(0x5555, w0, slot_index[s], w1);
            const __m512i j = _mm512_maskz_permutex2var_epi32(0x5555, j0, slot_index[s], j1);
            const __mmask8 positive = _mm512_cmplt_epu64_mask(_mm512_sub_epi64(w, one), positive_below);
            const __mmask8 joint_ok = _mm512_cmplt_epu64_mask(j, joint_limit);
            const __mmask8 keep = positive & joint_ok;
            const __mmask8 nonzero = _mm512_test_epi64_mask(w, magnitude);
            bad |= (nonzero & ~positive) | (positive & ~joint_ok);
            used = _mm512_mask_add_epi64(used, keep, used, one);
            largest = _mm512_mask_max_epu64(largest, keep, largest, j);
            key[s] = _mm512_ternarylogic_epi64(_mm512_maskz_slli_epi64(keep, w, 20), _mm512_set1_epi64((15 - s) << 16),
                                               _mm512_maskz_mov_epi64(keep, j), 0xfe);
        }
        order_keys(key[0], key[1]), order_keys(key[2], key[3]), order_keys(key[0], key[2]);
        order_keys(key[1], key[3]), order_keys(key[1], key[2]);
        most = _mm512_maskz_max_epu64(0xFF, most, used);
        __m512i bits[4];
        __m256 sum = _mm256_setzero_ps();
        for (int p = 0; p < 4; ++p) {
            bits[p] = _mm512_maskz_srli_epi64(0xFF, key[p], 20);
            sum = _mm256_add_ps(sum, _mm256_castsi256_ps(_mm512_maskz_cvtepi64_epi32(0xFF, bits[p])));
        }
        off += static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(
            _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_sub_ps(sum, unit), abs_mask), off_limit, _CMP_GT_OQ)))));
        const __m512i w01 = _mm512_maskz_permutex2var_epi32(0xFFFF, bits[0], pair_index, bits[1]);
        const __m512i w23 = _mm512_maskz_permutex2var_epi32(0xFFFF, bits[2], pair_index, bits[3]);
        _mm512_storeu_si512(weights + 4 * v, _mm512_maskz_permutex2var_epi32(0xFFFF, w01, rows_low, w23));
        _mm512_storeu_si512(weights + 4 * v + 16, _mm512_maskz_permutex2var_epi32(0xFFFF, w01, rows_high, w23));
        const __m512i j01 = _mm512_maskz_permutex2var_epi32(0xFFFF, key[0], pair_index, key[1]);
        const __m512i j23 = _mm512_maskz_permutex2var_epi32(0xFFFF, key[2], pair_index, key[3]);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(bones + 4 * v),
                            _mm512_maskz_cvtepi32_epi16(0xFFFF, _mm512_maskz_permutex2var_epi32(0xFFFF, j01, rows_low, j23)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(bones + 4 * v + 16),
                            _mm512_maskz_cvtepi32_epi16(0xFFFF, _mm512_maskz_permutex2var_epi32(0xFFFF, j01, rows_high, j23)));
    }
    if (bad) return 0;
    std::uint64_t lanes[8];
    _mm512_storeu_si512(lanes, most);
    t.most = std::max(t.most, static_cast<std::size_t>(*std::max_element(lanes, lanes + 8)));
    _mm512_storeu_si512(lanes, largest);
    t.largest_joint = static_cast<std::uint32_t>(*std::max_element(lanes, lanes + 8));
    t.off_sum += off;
    return groups;
}

template <std::size_t Slots>
__attribute__((target("avx2,fma,bmi2"))) KEYBLEND_NOINLINE void order_influences_avx2(
    const float* const* weight_sets, const std::uint32_t* const* joint_sets, std::size_t vertices, std::uint16_t* bones,
    float* weights, influence_tally& t, bool avx512) {
    std::size_t done = 0;
    if constexpr (Slots == 4)
        done = avx512 ? order_eight_avx512(weight_sets[0], joint_sets[0], vertices, bones, weights, t)
                      : order_four_avx2(weight_sets[0], joint_sets[0], vertices, bones, weights, t);
    const float* const rest_weights[2] = {weight_sets[0] + 4 * done, weight_sets[Slots / 4 - 1] + 4 * done};
    const std::uint32_t* const rest_joints[2] = {joint_sets[0] + 4 * done, joint_sets[Slots / 4 - 1] + 4 * done};
    order_influences_pass<Slots>(rest_weights, rest_joints, vertices - done, bones + Slots * done,
                                 weights + Slots * done, t);
    if (t.bad_weight | t.bad_joint) t.first_bad += done;
}
#endif

/// order_influences_pass with AVX2, or AVX-512 for one set, where the CPU runs it (unless
/// KEYBLEND_ISA names an instruction set below it, as for the kernels).
template <std::size_t Slots>
KEYBLEND_NOINLINE void order_influences(const float* const* weight_sets, const std::uint32_t* const* joint_sets,
                                        std::size_t vertices, std::uint16_t* bones, float* weights, influence_tally& t) {
#if defined(KEYBLEND_GLTF_AVX2_INFLUENCES)
    static const simd_isa isa = [] {
        const char* env = std::getenv("KEYBLEND_ISA");
        const auto named = [env](const char* name) { return env && std::strcmp(env, name) == 0; };
        if (named("scalar") || named("sse2") || !impl::cpu::runs(simd_isa::avx2)) return simd_isa::sse2;
#if defined(KEYBLEND_NO_AVX512)
        return simd_isa::avx2;
#else
        return named("avx2") || !impl::cpu::runs(simd_isa::avx512) ? simd_isa::avx2 : simd_isa::avx512;
#endif
    }();
    if (isa != simd_isa::sse2)
        return order_influences_avx2<Slots>(weight_sets, joint_sets, vertices, bones, weights, t, isa == simd_isa::avx512);
#endif
    order_influences_pass<Slots>(weight_sets, joint_sets, vertices, bones, weights, t);
}

bool loader::decode_primitive(std::size_t mi, std::size_t pi) {
    mesh_info& m = meshes_[mi];
    primitive_data& d = m.primitives[pi];
    d.decoded = true;
    const std::string where = at(at(at("/meshes", mi), "primitives"), pi);
    dom::object o;
    if (m.primitive_json[pi].get(o) != simdjson::SUCCESS)
        return problem(errc::parse_error, where, "expected an object; primitive ignored", warning_action::dropped);
    gltf::mesh_instance& mesh = d.mesh;
    mesh.name = m.name + (m.primitive_json.size() > 1 && pi > 0 ? "#" + std::to_string(pi) : "");
    mesh.mesh_index = mi;
    mesh.primitive_index = pi;

    bool bad = false;
    const std::size_t mode = size_member(o, "mode", where, 4, bad);
    if (bad) return ok();
    if (mode < 4 || mode > 6) {
        not_imported("point and line primitives", at(where, "mode"));
        return true;
    }
    dom::object attributes;
    if (!object_member(o, "attributes", where, attributes)) {
        return ok() && problem(errc::parse_error, at(where, "attributes"), "missing; primitive ignored", warning_action::dropped);
    }
    const std::string aw = at(where, "attributes");
    // Draco: the attributes' data and the indices come from the compressed buffer view.
    dom::object ext, draco;
    const bool has_extensions = object_member(o, "extensions", where, ext);
    bool compressed = has_extensions && object_member(ext, "KHR_draco_mesh_compression", at(where, "extensions"), draco);
    if (compressed && !detail::draco_available()) {
        // (Only where the file does not require it: extensions() refused a required one. The
        // primitive's own accessors are its uncompressed fallback.)
        not_imported("KHR_draco_mesh_compression (built without Draco: the uncompressed accessors are read)",
                     at(at(where, "extensions"), "KHR_draco_mesh_compression"));
        compressed = false;
    }
    std::map<std::string, int> draco_ids;
    std::vector<detail::draco_request> requests;
    std::vector<std::uint32_t> draco_indices;
    std::size_t draco_points = 0;
    if (has_extensions)
        for (auto field : ext)
            if (field.key != "KHR_draco_mesh_compression")
                not_imported("primitive extension " + excerpt(field.key), at(where, "extensions"));
    const auto semantic_components = [](std::string_view name) -> unsigned {
        if (name == "POSITION" || name == "NORMAL") return 3;
        if (name == "TANGENT") return 4;
        if (name == "TEXCOORD_0") return 2;
        if (name.substr(0, 7) == "JOINTS_" || name.substr(0, 8) == "WEIGHTS_") return 4;
        return 0;
    };
    if (compressed) {
        draco_used_ = true;
        const std::string dw = at(at(where, "extensions"), "KHR_draco_mesh_compression");
        const std::size_t view = index_member(draco, "bufferView", dw, views_.size(), "buffer views");
        dom::object ids;
        if (view == npos || !views_[view].valid || !object_member(draco, "attributes", dw, ids))
            return ok() && problem(errc::parse_error, dw, "no usable bufferView or attributes; primitive ignored",
                                   warning_action::dropped);
        for (auto field : ids) {
            std::uint64_t id = 0;
            const unsigned comps = semantic_components(field.key);
            if (field.value.get(id) != simdjson::SUCCESS || id > 0x7fffffff || comps == 0) continue;
            draco_ids[std::string(field.key)] = static_cast<int>(requests.size());
            detail::draco_request r;
            r.unique_id = static_cast<int>(id);
            r.components = comps;
            requests.push_back(std::move(r));
        }
        const view_info& v = views_[view];
        std::string message;
        if (!detail::decode_draco(buffers_[v.buffer].data + v.offset, v.length, options_.max_vertices,
                                  options_.max_vertices, requests, draco_indices, draco_points, message))
            return problem(errc::parse_error, dw, message + "; primitive ignored", warning_action::dropped);
    }

    // POSITION decides the vertex count.
    std::size_t vertices = 0;
    std::vector<float> values;
    const auto attribute = [&](const char* name, unsigned comps, std::vector<float>& out) -> bool {
        const auto w = [&] { return at(aw, name); };
        const std::size_t a = index_member(attributes, name, aw, accessors_.size(), "accessors");
        if (a == npos) return false;
        if (compressed) {
            const auto it = draco_ids.find(name);
            if (it != draco_ids.end() && requests[std::size_t(it->second)].found) {
                out = std::move(requests[std::size_t(it->second)].values);
                if (out.size() != vertices * comps)
                    return problem(errc::size_mismatch, w(), "the Draco attribute has the wrong size; ignored",
                                   warning_action::dropped) && false;
                std::size_t bad_values = 0;
                for (float& f : out)
                    if (!is_finite(f)) f = 0.0f, ++bad_values;
                return bad_values == 0 ||
                       problem(errc::non_finite, w(), std::to_string(bad_values) + " NaN or infinite values replaced by 0",
                               warning_action::repaired);
            }
        }
        return vertex_attribute(a, comps, vertices, w, out);
    };
    {
        const std::size_t a = index_member(attributes, "POSITION", aw, accessors_.size(), "accessors");
        if (a == npos || a >= accessors_.size() || !accessors_[a].valid)
            return ok() && problem(errc::parse_error, at(aw, "POSITION"), "missing or unusable; primitive ignored",
                                   warning_action::dropped);
        vertices = compressed ? draco_points : accessors_[a].count;
    }
    if (vertices > options_.max_vertices) return limit("max_vertices", options_.max_vertices, vertices, "vertices");
    if (!attribute("POSITION", 3, values))
        return ok() && problem(errc::parse_error, at(aw, "POSITION"), "unusable; primitive ignored", warning_action::dropped);
    // (Packed GLM vectors are as many floats as the vertices' components: one copy. Aligned ones,
    // GLM_FORCE_DEFAULT_ALIGNED_GENTYPES, have padding: element by element.)
    const auto take = [&](auto& array) {
        using vector = typename std::decay_t<decltype(array)>::value_type;
        constexpr std::size_t n = components_of<vector>::value;
        array.resize(vertices);
        if constexpr (sizeof(vector) == n * sizeof(float)) {
            std::memcpy(array.data(), values.data(), vertices * sizeof(vector));
        } else {
            for (std::size_t v = 0; v < vertices; ++v)
                for (std::size_t k = 0; k < n; ++k) array[v][static_cast<glm::length_t>(k)] = values[n * v + k];
        }
    };
    take(mesh.positions);
    if (attribute("NORMAL", 3, values)) take(mesh.normals);
    if (attribute("TANGENT", 4, values)) take(mesh.tangents);
    if (attribute("TEXCOORD_0", 2, values)) take(mesh.texcoords);
    if (!ok()) return false;

    // Influences: every JOINTS_n / WEIGHTS_n pair.
    // Joint indices as integers (Draco's as floats, converted; a value that is no index becomes
    // 0xffffffff, which no skin has).
    const auto joint_attribute = [&](const char* name, std::vector<std::uint32_t>& out) -> bool {
        if (compressed) {
            const auto it = draco_ids.find(name);
            if (it != draco_ids.end() && requests[std::size_t(it->second)].found) {
                std::vector<float> f;
                if (!attribute(name, 4, f)) return false;
                out.resize(f.size());
                for (std::size_t i = 0; i < f.size(); ++i)
                    out[i] = f[i] >= 0.0f && f[i] < 65536.0f && f[i] == std::floor(f[i]) ? static_cast<std::uint32_t>(f[i])
                                                                                           : 0xffffffffu;
                return true;
            }
        }
        const auto w = [&] { return at(aw, name); };
        const std::size_t a = index_member(attributes, name, aw, accessors_.size(), "accessors");
        if (a == npos || !read_uints(a, 4, options_.max_vertices, w, out)) return false;
        if (out.size() != vertices * 4)
            return problem(errc::size_mismatch, w(),
                           "accessor " + std::to_string(a) + " has " + std::to_string(out.size() / 4) +
                               " elements, the primitive " + std::to_string(vertices) + " vertices; ignored",
                           warning_action::dropped) && false;
        return true;
    };
    std::vector<std::vector<std::uint32_t>> joint_sets;
    std::vector<std::vector<float>> weight_sets;
    for (unsigned set = 0;; ++set) {
        const std::string jn = "JOINTS_" + std::to_string(set), wn = "WEIGHTS_" + std::to_string(set);
        dom::element je, we;
        const bool has_j = member(attributes, jn.c_str(), je), has_w = member(attributes, wn.c_str(), we);
        if (!has_j && !has_w) break;
        std::vector<std::uint32_t> j;
        std::vector<float> w;
        const bool read_j = has_j && joint_attribute(jn.c_str(), j);
        const bool read_w = has_w && attribute(wn.c_str(), 4, w);
        if (!ok()) return false;
        if (read_j != read_w) {
            if (!problem(errc::parse_error, at(aw, read_j ? wn.c_str() : jn.c_str()),
                         "missing or unusable, so " + (read_j ? jn : wn) + " is ignored", warning_action::dropped))
                return false;
            continue;
        }
        if (!read_j) continue;
        joint_sets.push_back(std::move(j));
        weight_sets.push_back(std::move(w));
    }
    if (!joint_sets.empty()) {
        // Each vertex's influences written at a width of `wide` slots (every influence its sets can
        // hold, at most 8), then narrowed to k, the most any vertex has.
        const std::size_t wide = std::min(io::max_influences_per_vertex, 4 * joint_sets.size());
        std::vector<influence> in;
        std::size_t k = 0, over = 0, bad_joint = 0, bad_weight = 0, off_sum = 0, first_bad = 0;
        io::mesh_skin& skin = mesh.skin;
        skin.bone_indices.assign(vertices * wide, 0);
        skin.weights.assign(vertices * wide, 0.0f);
        in.resize(4 * joint_sets.size());
        std::vector<const std::uint32_t*> joint_data;
        std::vector<const float*> weight_data;
        for (std::size_t s = 0; s < joint_sets.size(); ++s) {
            joint_data.push_back(joint_sets[s].data());
            weight_data.push_back(weight_sets[s].data());
        }
        const std::size_t sets = joint_sets.size();

        if ((sets == 1 && wide == 4) || (sets == 2 && wide == 8)) {
            influence_tally t;
            (sets == 1 ? order_influences<4> : order_influences<8>)(weight_data.data(), joint_data.data(), vertices,
                                                                     skin.bone_indices.data(), skin.weights.data(), t);
            k = t.most, bad_weight = t.bad_weight, bad_joint = t.bad_joint, off_sum = t.off_sum, first_bad = t.first_bad;
            d.largest_joint = t.largest_joint;
        } else {
            for (std::size_t v = 0; v < vertices; ++v) {
                // The pairs with a positive weight and a joint index that is a whole number below 65536,
                // compacted without branches on the data (weights of 0 are common and unpredictable).
                std::size_t used = 0, bad_w = 0, bad_j = 0;
                float sum = 0.0f;
                for (std::size_t s = 0; s < sets; ++s)
                    for (std::size_t c = 0; c < 4; ++c) {
                        const float w = weight_data[s][4 * v + c];
                        const std::uint32_t index = joint_data[s][4 * v + c];
                        const bool positive = w > 0.0f;
                        const bool joint_ok = index < 65536u;
                        in[used] = {index, w};
                        used += static_cast<std::size_t>(positive && joint_ok);
                        sum += positive && joint_ok ? w : 0.0f;
                        bad_w += static_cast<std::size_t>(w != 0.0f && !positive);
                        bad_j += static_cast<std::size_t>(positive && !joint_ok);
                    }
                if (bad_w && !bad_weight) first_bad = v;
                if (bad_j && !bad_joint && !bad_weight) first_bad = v;
                bad_weight += bad_w;
                bad_joint += bad_j;
                // By decreasing weight, equal weights in file order (an insertion sort: a vertex has few).
                for (std::size_t i = 1; i < used; ++i) {
                    const influence x = in[i];
                    std::size_t j = i;
                    for (; j > 0 && in[j - 1].weight < x.weight; --j) in[j] = in[j - 1];
                    in[j] = x;
                }
                off_sum += static_cast<std::size_t>(std::fabs(sum - 1.0f) > 1e-3f);
                if (used > io::max_influences_per_vertex) {
                    ++over;
                    // (In double: the float sums of weights near FLT_MAX overflow, and inf / inf is NaN.)
                    double kept = 0.0, total = 0.0;
                    for (std::size_t i = 0; i < used; ++i)
                        (i < io::max_influences_per_vertex ? kept : total) += static_cast<double>(in[i].weight);
                    total += kept;
                    used = io::max_influences_per_vertex;
                    for (std::size_t i = 0; i < used; ++i) in[i].weight = io::impl::rescaled_weight(in[i].weight, total / kept);
                }
                k = std::max(k, used);
                for (std::size_t i = 0; i < used; ++i) {
                    skin.bone_indices[v * wide + i] = static_cast<std::uint16_t>(in[i].joint);
                    skin.weights[v * wide + i] = in[i].weight;
                    d.largest_joint = std::max(d.largest_joint, in[i].joint);
                }
            }
        }
        if (k < wide) {
            for (std::size_t v = 0; v < vertices; ++v)
                for (std::size_t i = 0; i < k; ++i) {
                    skin.bone_indices[v * k + i] = skin.bone_indices[v * wide + i];
                    skin.weights[v * k + i] = skin.weights[v * wide + i];
                }
            skin.bone_indices.resize(vertices * k);
            skin.weights.resize(vertices * k);
        }
        skin.influences_per_vertex = k;
        d.has_influences = k > 0;
        if (bad_weight &&
            !problem(errc::invalid_argument, aw,
                     std::to_string(bad_weight) + " negative or NaN weights (first in vertex " + std::to_string(first_bad) +
                         ") ignored",
                     warning_action::dropped, first_bad))
            return false;
        if (bad_joint &&
            !problem(errc::out_of_range, aw,
                     std::to_string(bad_joint) + " joint indices that are no joint (first in vertex " +
                         std::to_string(first_bad) + "): their influences are ignored",
                     warning_action::dropped, first_bad))
            return false;
        if (over && !warn(errc::unsupported, aw,
                          std::to_string(over) + " vertices have more than 8 influences: the 8 largest are kept, "
                                                 "rescaled to the vertices' former sums",
                          warning_action::note))
            return false;
        if (off_sum && !warn(errc::not_normalized, aw,
                             std::to_string(off_sum) + " vertices' weights do not sum to 1 (within 1e-3); kept as written",
                             warning_action::note))
            return false;
    }
    for (auto field : attributes) {
        const std::string_view name = field.key;
        if (semantic_components(name) == 0) not_imported("vertex attribute " + excerpt(name), at(aw, std::string(name).c_str()));
    }

    // Indices and the triangles.
    std::vector<std::uint32_t> indices;
    dom::element index_element;
    if (compressed) {
        indices = std::move(draco_indices);
    } else if (member(o, "indices", index_element)) {
        const std::size_t a = index_member(o, "indices", where, accessors_.size(), "accessors");
        if (a == npos || !read_uints(a, 1, 3 * options_.max_vertices, at(where, "indices"), indices))
            return ok() && problem(errc::parse_error, at(where, "indices"), "unusable; primitive ignored", warning_action::dropped);
    } else {
        indices.resize(vertices);
        std::iota(indices.begin(), indices.end(), 0u);
    }
    std::size_t dropped = 0, first_dropped = 0;
    const auto triangle = [&](std::size_t t, std::uint32_t a, std::uint32_t b, std::uint32_t c) {
        if (a >= vertices || b >= vertices || c >= vertices) {
            if (!dropped++) first_dropped = t;
            return;
        }
        mesh.indices.push_back(a);
        mesh.indices.push_back(b);
        mesh.indices.push_back(c);
    };
    const std::size_t n = indices.size();
    if (mode == 4) {
        // Every index in range (one branchless pass): the indices are the triangles as they are.
        const std::uint32_t largest = n < 3 ? 0 : largest_of(indices.data(), n / 3 * 3);
        if (n < 3 || largest < vertices) {
            indices.resize(n / 3 * 3);
            mesh.indices = std::move(indices);
        } else {
            mesh.indices.reserve(n / 3 * 3);
            for (std::size_t t = 0; t + 2 < n; t += 3) triangle(t / 3, indices[t], indices[t + 1], indices[t + 2]);
        }
        if (n % 3)
            if (!problem(errc::size_mismatch, at(where, "indices"),
                         std::to_string(n) + " indices are not whole triangles; the last " + std::to_string(n % 3) + " ignored",
                         warning_action::dropped))
                return false;
    } else if (mode == 5) {
        for (std::size_t i = 0; i + 2 < n; ++i)
            triangle(i, indices[i], indices[i + 1 + i % 2], indices[i + 2 - i % 2]);
    } else {
        for (std::size_t i = 1; i + 1 < n; ++i) triangle(i - 1, indices[i], indices[i + 1], indices[0]);
    }
    if (dropped &&
        !problem(errc::out_of_range, at(where, "indices"),
                 std::to_string(dropped) + " triangles with a vertex index >= " + std::to_string(vertices) + " (first: triangle " +
                     std::to_string(first_dropped) + ") ignored",
                 warning_action::dropped, first_dropped))
        return false;

    // The material.
    const std::size_t material = index_member(o, "material", where, materials_.size(), "materials");
    if (material != npos) {
        mesh.materials.push_back(materials_[material]);
        mesh.triangle_materials.assign(mesh.indices.size() / 3, 0);
    }

    // Morph targets.
    dom::array targets;
    if (array_member(o, "targets", where, targets)) {
        if (targets.size() != m.target_count) {
            if (!problem(errc::size_mismatch, at(where, "targets"),
                         std::to_string(targets.size()) + " morph targets where the mesh's first primitive has " +
                             std::to_string(m.target_count) + "; this primitive's are ignored",
                         warning_action::dropped))
                return false;
        } else {
            std::size_t t = 0;
            mesh.morph_targets.resize(targets.size());
            for (dom::element te : targets) {
                const std::string tw = at(at(where, "targets"), t);
                io::morph_target& target = mesh.morph_targets[t];
                if (t < m.target_names.size()) target.name = m.target_names[t];
                dom::object to;
                if (te.get(to) != simdjson::SUCCESS) {
                    if (!problem(errc::parse_error, tw, "expected an object; target left empty", warning_action::dropped))
                        return false;
                    ++t;
                    continue;
                }
                const auto read3 = [&](const char* name, std::vector<glm::vec3>& out) {
                    const std::size_t a = index_member(to, name, tw, accessors_.size(), "accessors");
                    if (a == npos || !vertex_attribute(a, 3, vertices, at(tw, name), values)) return;
                    out.resize(vertices);
                    for (std::size_t v = 0; v < vertices; ++v) out[v] = glm::vec3(values[3 * v], values[3 * v + 1], values[3 * v + 2]);
                };
                read3("POSITION", target.positions);
                read3("NORMAL", target.normals);
                read3("TANGENT", target.tangents);
                for (auto field : to)
                    if (field.key != "POSITION" && field.key != "NORMAL" && field.key != "TANGENT")
                        not_imported("morph target attribute " + excerpt(field.key), at(tw, std::string(field.key).c_str()));
                if (!ok()) return false;
                ++t;
            }
        }
    }
    d.usable = true;
    return ok();
}

bool loader::instance(std::size_t node, std::size_t mi, std::size_t pi, std::size_t skin_index) {
    primitive_data& d = meshes_[mi].primitives[pi];
    if (!d.decoded && !decode_primitive(mi, pi)) return false;
    if (!d.usable) return true;
    const std::size_t n = d.mesh.positions.size();
    if (n > options_.max_vertices - std::min(vertices_, options_.max_vertices))
        return limit("max_vertices", options_.max_vertices, vertices_ + n, "vertices of all mesh instances");
    if (out_->meshes.size() >= options_.max_meshes)
        return limit("max_meshes", options_.max_meshes, out_->meshes.size() + 1, "mesh instances");
    vertices_ += n;
    const std::string where = at("/nodes", node);
    // The last instance of a primitive takes its data; the others copy it.
    if (--d.uses == 0) out_->meshes.push_back(std::move(d.mesh));
    else out_->meshes.push_back(d.mesh);
    mesh_instance& m = out_->meshes.back();
    m.node_index = node;
    m.joint = out_->joint_of_node[node];
    io::mesh_skin& skin = m.skin;
    const bool skinned = skin_index != npos && skins_[skin_index].valid;
    if (skin_index != npos && !skinned)
        if (!problem(errc::invalid_argument, at(where, "skin"), "skin " + std::to_string(skin_index) + " is unusable; the mesh is rigid",
                     warning_action::dropped))
            return false;
    if (skinned && !d.has_influences) {
        if (!problem(errc::parse_error, at(where, "skin"),
                     "mesh " + std::to_string(mi) + " primitive " + std::to_string(pi) +
                         " has no JOINTS_0 / WEIGHTS_0; the mesh is rigid",
                     warning_action::dropped))
            return false;
    } else if (!skinned && d.has_influences && skin_index == npos) {
        if (!warn(errc::invalid_argument, where,
                  "mesh " + std::to_string(mi) + " has joints and weights but the node no skin: the mesh is rigid",
                  warning_action::note))
            return false;
    }
    if (!skinned || !d.has_influences) {
        skin = io::mesh_skin{};
        return ok();
    }
    const skin_info& s = skins_[skin_index];
    m.skin_index = skin_index;
    skin.bones.resize(s.joints.size());
    for (std::size_t b = 0; b < s.joints.size(); ++b) {
        skin.bones[b].joint = out_->joint_of_node[s.joints[b]];
        skin.bones[b].name = out_->skeleton.name(skin.bones[b].joint);
        skin.bones[b].offset = s.inverse_binds[b];
    }
    if (d.largest_joint >= s.joints.size()) {
        // Influences naming joints the skin does not have: dropped (the vertex keeps the others).
        const std::size_t k = skin.influences_per_vertex;
        std::size_t dropped = 0;
        for (std::size_t v = 0; v < n; ++v) {
            std::size_t w = 0;
            for (std::size_t i = 0; i < k; ++i) {
                const std::uint16_t b = skin.bone_indices[v * k + i];
                const float weight = skin.weights[v * k + i];
                skin.bone_indices[v * k + i] = 0;
                skin.weights[v * k + i] = 0.0f;
                if (weight == 0.0f) continue;
                if (b >= s.joints.size()) {
                    ++dropped;
                    continue;
                }
                skin.bone_indices[v * k + w] = b;
                skin.weights[v * k + w] = weight;
                ++w;
            }
        }
        if (!problem(errc::out_of_range, at(at(at(at("/meshes", mi), "primitives"), pi), "attributes"),
                     std::to_string(dropped) + " influences name joints past the " + std::to_string(s.joints.size()) +
                         " of skin " + std::to_string(skin_index) + " (node " + std::to_string(node) + "); ignored",
                     warning_action::dropped))
            return false;
    }
    return ok();
}

bool loader::scene(dom::object root) {
    if (!top_array(root, "scenes", scene_json_)) return false;
    out_->contents.scenes = scene_json_.size();
    if (scene_json_.empty()) return true;
    out_->scene = index_member(root, "scene", "", scene_json_.size(), "scenes");
    if (out_->scene == npos) out_->scene = 0;
    return ok();
}

bool loader::instances() {
    const std::size_t n = nodes_.size();
    std::vector<std::uint8_t> in_scene(n, 0);
    if (out_->scene == model::no_scene) {
        std::fill(in_scene.begin(), in_scene.end(), 1);
    } else {
        const std::string where = at("/scenes", out_->scene);
        dom::object o;
        dom::array roots;
        if (scene_json_[out_->scene].get(o) == simdjson::SUCCESS && array_member(o, "nodes", where, roots)) {
            std::size_t k = 0;
            std::vector<std::size_t> stack;
            for (dom::element e : roots) {
                std::uint64_t v = 0;
                if (e.get(v) != simdjson::SUCCESS || v >= n) {
                    if (!problem(errc::out_of_range, at(at(where, "nodes"), k), "not the index of a node; ignored",
                                 warning_action::dropped, k))
                        return false;
                } else if (parent_[v] != npos && !in_scene[v]) {
                    if (!problem(errc::invalid_argument, at(at(where, "nodes"), k),
                                 "node " + std::to_string(v) + " is not a root (its parent is node " +
                                     std::to_string(parent_[v]) + "); it stays under its parent",
                                 warning_action::note))
                        return false;
                }
                if (v < n && !in_scene[v]) {
                    stack.push_back(static_cast<std::size_t>(v));
                    while (!stack.empty()) {
                        const std::size_t i = stack.back();
                        stack.pop_back();
                        if (in_scene[i]) continue;
                        in_scene[i] = 1;
                        for (std::size_t c : nodes_[i].children)
                            if (parent_[c] == i) stack.push_back(c);
                    }
                }
                ++k;
            }
        }
        if (!ok()) return false;
    }
    // How many instances use each primitive (the last one takes the decoded data).
    for (std::size_t i : order_)
        if (in_scene[i] && nodes_[i].mesh != npos)
            for (primitive_data& p : meshes_[nodes_[i].mesh].primitives) ++p.uses;
    std::size_t outside = 0, first_outside = 0;
    for (std::size_t i : order_) {
        const node_info& node = nodes_[i];
        if (node.mesh == npos) continue;
        if (!in_scene[i]) {
            if (!outside++) first_outside = i;
            continue;
        }
        for (std::size_t p = 0; p < meshes_[node.mesh].primitives.size(); ++p)
            if (!instance(i, node.mesh, p, node.skin)) return false;
    }
    if (outside &&
        !warn(errc::not_found, at("/nodes", first_outside),
              std::to_string(outside) + " nodes with a mesh are outside scene " + std::to_string(out_->scene) +
                  ": they are joints, their meshes are not instanced",
              warning_action::dropped, first_outside))
        return false;
    return ok();
}

// -----------------------------------------------------------------------------------------------
// Animations
// -----------------------------------------------------------------------------------------------

template <class Value>
Value value_from(const float* p);
template <>
float value_from<float>(const float* p) {
    return p[0];
}
template <>
glm::vec3 value_from<glm::vec3>(const float* p) {
    return glm::vec3(p[0], p[1], p[2]);
}
template <>
glm::quat value_from<glm::quat>(const float* p) {
    return make_quat(p[3], p[0], p[1], p[2]);
}

template <class Value>
bool loader::build_track(const float* times, std::size_t keys, const std::vector<float>& values, std::size_t components,
                         std::size_t stride, std::size_t offset, interpolation mode, const place& where,
                         track<Value, float>& out) {
    // Key k's value is element (k * stride + offset) of `values` (stride: targets of a weights
    // channel, else 1); a cubic spline's key k has its in-tangent, value and out-tangent at
    // elements 3k, 3k + 1, 3k + 2 (times the stride).
    const bool cubic = mode == interpolation::cubic_spline;
    const auto element = [&](std::size_t e) { return value_from<Value>(values.data() + (e * stride + offset) * components); };
    // The usual track, finite, in order and unit, goes straight in; any other is repaired below.
    {
        // (Every key tested, without stopping at the first bad one: the usual track is clean
        // to its end anyway.)
        bool clean = true;
        for (std::size_t i = 0; i < keys; ++i) {
            const Value v = cubic ? element(3 * i + 1) : element(i);
            bool ok = is_finite(times[i]) && is_finite(v) && (i == 0 || times[i] >= times[i - 1]);
            if (cubic) ok = ok && is_finite(element(3 * i)) && is_finite(element(3 * i + 2));
            if constexpr (std::is_same_v<Value, glm::quat>)
                ok = ok && std::fabs(std::sqrt(glm::dot(v, v)) - 1.0f) <= unit_rounding;
            clean = clean && ok;
        }
        if (clean) {
            out = track<Value, float>(mode);
            if (cubic) {
                out.reserve(keys);
                for (std::size_t i = 0; i < keys; ++i)
                    out.push_back(times[i], element(3 * i), element(3 * i + 1), element(3 * i + 2));
            } else {
                std::vector<Value> v(keys);
                for (std::size_t i = 0; i < keys; ++i) v[i] = element(i);
                out.assign(std::vector<float>(times, times + keys), std::move(v));
            }
            return true;
        }
    }
    struct key_data {
        float time;
        Value in, value, out;
    };
    std::vector<key_data> k;
    k.reserve(keys);
    std::size_t non_finite = 0, first_bad = 0, renormalised = 0, rounded = 0, zero = 0;
    for (std::size_t i = 0; i < keys; ++i) {
        key_data d{times[i], Value{}, cubic ? element(3 * i + 1) : element(i), Value{}};
        if (cubic) {
            d.in = element(3 * i);
            d.out = element(3 * i + 2);
        }
        if (!is_finite(d.time) || !is_finite(d.value) || (cubic && (!is_finite(d.in) || !is_finite(d.out)))) {
            if (!non_finite++) first_bad = i;
            continue;
        }
        if constexpr (std::is_same_v<Value, glm::quat>) {
            // (The length in double: a float dot product of large components overflows.)
            const glm::dvec4 q(d.value.x, d.value.y, d.value.z, d.value.w);
            const double exact = std::sqrt(glm::dot(q, q));
            const auto length = static_cast<float>(exact);
            if (std::fabs(length - 1.0f) > unit_rounding && std::fabs(length - 1.0f) <= key_traits<glm::quat>::unit_tolerance) {
                // Written with few digits: a rotation all the same, made unit (see unit_rounding).
                ++rounded;
                d.value = d.value / length;
            } else if (std::fabs(length - 1.0f) > key_traits<glm::quat>::unit_tolerance) {
                if (!(length > 0.0f)) {
                    ++zero;
                    continue;
                }
                if (!renormalised++ && strict())
                    return fail(errc::not_normalized, where.str(),
                                "rotation key " + std::to_string(i) + " has length " + impl::float_to_string(exact), i);
                const glm::dvec4 u = q / exact;
                d.value = make_quat(static_cast<float>(u.w), static_cast<float>(u.x), static_cast<float>(u.y),
                                    static_cast<float>(u.z));
            }
        }
        k.push_back(d);
    }
    if (non_finite &&
        !problem(errc::non_finite, where.str(),
                 std::to_string(non_finite) + " keys with a NaN or infinite time or value (first: key " +
                     std::to_string(first_bad) + ") dropped",
                 warning_action::dropped, first_bad))
        return false;
    if (zero && !problem(errc::not_normalized, where.str(), std::to_string(zero) + " rotation keys of length 0 dropped",
                         warning_action::dropped))
        return false;
    if (rounded && !warn(errc::not_normalized, where.str(),
                         std::to_string(rounded) + " rotation keys within 1e-3 of unit length normalised",
                         warning_action::note))
        return false;
    if (renormalised && !problem(errc::not_normalized, where.str(),
                                 std::to_string(renormalised) + " rotation keys not of unit length normalised",
                                 warning_action::repaired))
        return false;
    for (std::size_t i = 1; i < k.size(); ++i)
        if (k[i].time < k[i - 1].time) {
            if (!problem(errc::unsorted, where.str(),
                         "key times go back at key " + std::to_string(i) + "; keys sorted by time (equal times keep their order)",
                         warning_action::repaired, i))
                return false;
            std::stable_sort(k.begin(), k.end(), [](const key_data& a, const key_data& b) { return a.time < b.time; });
            break;
        }
    out = track<Value, float>(mode);
    out.reserve(k.size());
    for (const key_data& d : k) {
        if (cubic) out.push_back(d.time, d.in, d.value, d.out);
        else out.push_back(d.time, d.value);
    }
    return true;
}

bool loader::animation(dom::object o, std::size_t index) {
    const std::string where = at("/animations", index);
    gltf::animation made;
    made.index = index;
    clip& c = made.clip;
    c.name = string_member(o, "name");
    if (c.name.empty()) c.name = "animation_" + std::to_string(index);
    c.ticks_per_second = 1.0f;
    c.ticks_per_second_is_default = false;

    struct sampler_info {
        std::size_t input = npos, output = npos;
        interpolation mode = interpolation::linear;
        bool valid = false;
    };
    std::vector<sampler_info> samplers;
    dom::array sampler_list, channel_list;
    if (array_member(o, "samplers", where, sampler_list)) {
        std::size_t i = 0;
        for (dom::element e : sampler_list) {
            const std::size_t sampler_index = i++;
            const auto sw = [&] { return at(at(where, "samplers"), sampler_index); };
            sampler_info s;
            dom::object so;
            if (e.get(so) != simdjson::SUCCESS) {
                problem(errc::parse_error, sw(), "expected an object; sampler ignored", warning_action::dropped);
                samplers.push_back(s);
                continue;
            }
            s.input = index_member(so, "input", sw, accessors_.size(), "accessors");
            s.output = index_member(so, "output", sw, accessors_.size(), "accessors");
            dom::element ie;
            std::string_view mode = "LINEAR";
            if (member(so, "interpolation", ie) && ie.get(mode) != simdjson::SUCCESS) mode = "?";
            if (mode == "LINEAR") s.mode = interpolation::linear;
            else if (mode == "STEP") s.mode = interpolation::step;
            else if (mode == "CUBICSPLINE") s.mode = interpolation::cubic_spline;
            else if (!problem(errc::parse_error, at(sw(), "interpolation"), "'" + excerpt(mode) + "' is not an interpolation; LINEAR is used",
                              warning_action::repaired))
                return false;
            s.valid = s.input != npos && s.output != npos;
            if (!s.valid && ok())
                problem(errc::parse_error, sw(), "input or output missing; sampler ignored", warning_action::dropped);
            samplers.push_back(s);
            if (!ok()) return false;
        }
    }
    // (channel_of_joint_: npos for every joint between animations; reset below for the joints this
    // one animates, so that many animations cost their channels, not the skeleton's size each.)
    if (channel_of_joint_.size() != out_->skeleton.size()) channel_of_joint_.assign(out_->skeleton.size(), npos);
    std::vector<std::size_t>& channel_of_joint = channel_of_joint_;
    std::unordered_map<std::size_t, std::vector<float>> inputs; // accessor -> times
    std::vector<float> values;                                  // (a channel's, reused)
    if (array_member(o, "channels", where, channel_list)) {
        c.channels.reserve(std::min(channel_list.size(), out_->skeleton.size()));
        std::size_t i = 0;
        for (dom::element e : channel_list) {
            const std::size_t channel_index = i++;
            const auto cw = [&] { return at(at(where, "channels"), channel_index); };
            ++out_->contents.channels;
            dom::object co, target;
            if (e.get(co) != simdjson::SUCCESS || !object_member(co, "target", cw, target)) {
                if (!ok() || !problem(errc::parse_error, cw(), "no target object; channel ignored", warning_action::dropped))
                    return false;
                continue;
            }
            const auto tw = [&] { return at(cw(), "target"); };
            const std::string path = string_member(target, "path");
            if (path != "translation" && path != "rotation" && path != "scale" && path != "weights") {
                not_imported("animation target path '" + excerpt(path) + "'", at(tw(), "path"));
                continue;
            }
            dom::element ne;
            if (!member(target, "node", ne)) {
                not_imported("animation channels without a target node (extensions)", tw());
                continue;
            }
            const std::size_t node = index_member(target, "node", tw, nodes_.size(), "nodes");
            const std::size_t s = index_member(co, "sampler", cw, samplers.size(), "samplers");
            if (!ok()) return false;
            if (node == npos || s == npos) {
                if (!problem(errc::parse_error, cw(), "no usable node or sampler; channel ignored", warning_action::dropped)) return false;
                continue;
            }
            const sampler_info& sampler = samplers[s];
            if (!sampler.valid) {
                if (!problem(errc::parse_error, at(cw(), "sampler"), "sampler " + std::to_string(s) + " is unusable; channel ignored",
                             warning_action::dropped))
                    return false;
                continue;
            }
            if (nodes_[node].has_matrix && path != "weights")
                if (!problem(errc::invalid_argument, tw(),
                             "animates node " + std::to_string(node) + ", which has a matrix (glTF forbids it); its "
                             "decomposition is animated",
                             warning_action::note))
                    return false;
            // The key times: one float per key.
            const auto input_where = [&] { return at(at(at(where, "samplers"), s), "input"); };
            const accessor_info* in = sampler.input < accessors_.size() ? &accessors_[sampler.input] : nullptr;
            if (in && in->valid && in->type != float_type) {
                if (!problem(errc::parse_error, at(at("/accessors", sampler.input), "componentType"),
                             "key times (" + input_where() + ") must be floats (5126), not " + std::to_string(in->type) +
                                 "; channel ignored",
                             warning_action::dropped))
                    return false;
                continue;
            }
            auto [it, fresh] = inputs.try_emplace(sampler.input);
            if (fresh && !read_floats(sampler.input, 1, options_.max_keys, input_where, it->second)) {
                inputs.erase(it);
                if (!ok()) return false;
                continue;
            }
            const std::vector<float>& times = it->second;
            const std::size_t keys = times.size();
            if (keys > options_.max_keys - std::min(keys_, options_.max_keys))
                return limit("max_keys", options_.max_keys, keys_ + keys, "keys");
            // The values.
            const std::size_t joint = out_->joint_of_node[node];
            const bool cubic = sampler.mode == interpolation::cubic_spline;
            const std::size_t per_key = cubic ? 3 : 1;
            unsigned components = path == "rotation" ? 4 : path == "weights" ? 1 : 3;
            std::size_t targets = 1;
            if (path == "weights") {
                targets = out_->skeleton.morph_weight_count(joint);
                if (targets == 0) {
                    if (!problem(errc::invalid_argument, tw(),
                                 "weights of node " + std::to_string(node) + ", which has no morph targets; channel ignored",
                                 warning_action::dropped))
                        return false;
                    continue;
                }
            }
            const auto output_where = [&] { return at(at(at(where, "samplers"), s), "output"); };
            if (!read_floats(sampler.output, components, options_.max_keys * 3 * targets, output_where, values)) {
                if (!ok()) return false;
                continue;
            }
            const std::size_t expected = keys * per_key * targets;
            std::size_t usable_keys = keys;
            if (values.size() / components != expected) {
                usable_keys = std::min(keys, values.size() / components / (per_key * targets));
                if (!problem(errc::size_mismatch, output_where(),
                             std::to_string(values.size() / components) + " output elements for " + std::to_string(keys) +
                                 " key times (" + std::to_string(expected) + " expected); " +
                                 std::to_string(usable_keys) + " keys used",
                             warning_action::dropped))
                    return false;
            }
            if (channel_of_joint[joint] == npos) {
                channel_of_joint[joint] = c.channels.size();
                c.channels.emplace_back();
                c.channels.back().joint = joint;
            }
            channel& ch = c.channels[channel_of_joint[joint]];
            const auto taken = [&](bool t) {
                return t && !problem(errc::duplicate, tw(),
                                     "node " + std::to_string(node) + "'s " + path +
                                         " is animated by an earlier channel of this animation; ignored",
                                     warning_action::dropped);
            };
            bool built = true;
            if (path == "translation") {
                if (!ch.translation.empty()) { if (taken(true) || !ok()) return false; continue; }
                built = build_track(times.data(), usable_keys, values, 3, 1, 0, sampler.mode, cw, ch.translation);
            } else if (path == "scale") {
                if (!ch.scale.empty()) { if (taken(true) || !ok()) return false; continue; }
                built = build_track(times.data(), usable_keys, values, 3, 1, 0, sampler.mode, cw, ch.scale);
            } else if (path == "rotation") {
                if (!ch.rotation.empty()) { if (taken(true) || !ok()) return false; continue; }
                built = build_track(times.data(), usable_keys, values, 4, 1, 0, sampler.mode, cw, ch.rotation);
            } else {
                if (!ch.morph_weights.empty()) { if (taken(true) || !ok()) return false; continue; }
                ch.morph_weights.resize(targets);
                for (std::size_t t = 0; t < targets && built; ++t)
                    built = build_track(times.data(), usable_keys, values, 1, targets, t, sampler.mode, cw, ch.morph_weights[t]);
            }
            if (!built) return false;
            keys_ += usable_keys * targets;
        }
    }
    for (const channel& ch : c.channels) channel_of_joint[ch.joint] = npos;
    // (The clip passes validate_clip: every track is built valid above. The fuzz target checks it.)
    // A clip's duration is not negative: keys all before 0 make a clip of duration 0.
    c.duration = std::max(0.0f, last_key_time(c));
    out_->animations.push_back(std::move(made));
    return ok();
}

bool loader::animations(dom::object root) {
    if (!top_array(root, "animations", animation_json_)) return false;
    out_->contents.animations = animation_json_.size();
    for (std::size_t i = 0; i < animation_json_.size() && ok(); ++i) {
        dom::object o;
        if (animation_json_[i].get(o) != simdjson::SUCCESS) {
            problem(errc::parse_error, at("/animations", i), "expected an object; animation ignored", warning_action::dropped);
            continue;
        }
        if (!animation(o, i)) return false;
    }
    return ok();
}

void loader::report_unused(dom::object root) {
    std::vector<dom::element> cameras;
    dom::array a;
    dom::element e;
    if (member(root, "cameras", e) && e.get(a) == simdjson::SUCCESS) {
        out_->contents.cameras = a.size();
        if (a.size()) not_imported("cameras", "/cameras");
    }
    dom::object ext;
    if (member(root, "extensions", e) && e.get(ext) == simdjson::SUCCESS)
        for (auto field : ext) not_imported("extension " + excerpt(field.key) + " (top level)", "/extensions/" + std::string(field.key));
}

bool loader::load(const unsigned char* data, std::size_t size, model& out) {
    out_ = &out;
    if (!container(data, size)) return false;
    dom::element document;
    // The JSON is parsed in place when the bytes after it (a .glb's binary chunk) give the parser
    // the readable padding it needs; otherwise the parser copies it.
    const bool padded = static_cast<std::size_t>(data + size - (json_ + json_size_)) >= simdjson::SIMDJSON_PADDING;
    // Documents up to reused_parser_limit go to the thread's parser, whose buffers (about 14 times
    // the largest document it parsed) stay allocated between loads; larger ones to the loader's own.
    constexpr std::size_t reused_parser_limit = std::size_t{256} << 10;
    static thread_local dom::parser reused_parser;
    dom::parser& parser = json_size_ <= reused_parser_limit ? reused_parser : own_parser_;
    if (const simdjson::error_code e = parser.parse(json_, json_size_, !padded).get(document); e != simdjson::SUCCESS)
        return fail(errc::parse_error, out.binary ? "JSON chunk" : "JSON", std::string("malformed (") + simdjson::error_message(e) + ")");
    dom::object root;
    if (document.get(root) != simdjson::SUCCESS) return fail(errc::parse_error, "JSON", "the document is not an object");
    if (!asset(root) || !extensions(root) || !buffers(root) || !views(root) || !accessors(root)) return false;
    if (!top_array(root, "meshes", mesh_json_) || !top_array(root, "skins", skin_json_)) return false;
    if (!materials(root) || !meshes(root) || !nodes(root) || !hierarchy() || !skeleton() || !skins(root) ||
        !scene(root) || !instances() || !animations(root))
        return false;
    report_unused(root);
    for (const auto& [what, place] : not_imported_)
        if (!warn(errc::unsupported, place.first,
                  what + ": not imported" + (place.second > 1 ? " (" + std::to_string(place.second) + " places)" : ""),
                  warning_action::dropped))
            return false;
    return ok();
}

} // namespace

bool has_draco() { return detail::draco_available(); }

bool looks_like_gltf(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    if (size >= 4 && read_u32(p) == glb_magic) return true;
    std::size_t i = 0;
    if (size >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) i = 3;
    while (i < size && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) ++i;
    return i < size && p[i] == '{';
}

result<model> load_memory(const void* data, std::size_t size, const io::load_options& options, std::string_view source_name,
                          const std::string& base_directory) {
    model out;
    loader l(options, source_name, base_directory);
    if (!data && size) return error{errc::invalid_argument, std::string(source_name) + ": null data", error::no_index};
    static const unsigned char empty = 0;
    if (!l.load(data ? static_cast<const unsigned char*>(data) : &empty, size, out)) return l.failure();
    return out;
}

result<model> load(const std::string& path, const io::load_options& options) {
    const std::size_t slash = path.find_last_of('/');
    const std::string directory = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
#if defined(KEYBLEND_GLTF_MMAP)
    // The file mapped rather than read: nothing is copied, and the pages of what the loader does
    // not use (the images a .glb often carries) are never touched.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        struct stat st;
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
            const auto size = static_cast<std::size_t>(st.st_size);
            void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
            ::close(fd);
            if (mapped != MAP_FAILED) {
                result<model> r = load_memory(mapped, size, options, path, directory);
                ::munmap(mapped, size);
                return r;
            }
        } else {
            ::close(fd);
        }
    }
#endif
    std::unique_ptr<unsigned char[]> bytes;
    std::size_t size = 0;
    if (status st = io::impl::read_whole_file(path, bytes, size); !st) return st.error();
    return load_memory(bytes.get(), size, options, path, directory);
}

} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace gltf
} // namespace keyblend
