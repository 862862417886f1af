// keyblend::gltf: the glTF 2.0 writer (see include/keyblend/gltf.hpp and docs/gltf.md, "Writing
// glTF").
//
// SPDX-License-Identifier: MIT
//
// The order of work: the model's size (what errors are measured against), the nodes (joints, a
// common root when one is needed, mesh nodes), meshes with their skins and materials, animations;
// each part appends its binary data to one buffer (every view 4-byte aligned, one accessor per
// view) and its JSON to one text. Everything the source's handedness changes goes through mirror
// functions (mirror_matrix, mirror_point, mirror_rotation), so that a left-handed source is
// mirrored in one way everywhere. Nothing recurses: the skeleton is parent-first.
#include <keyblend/gltf.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace keyblend {
namespace gltf {
inline namespace KEYBLEND_IO_GLM_LAYOUT {
namespace {

using io::load_warning;
using io::warning_action;

constexpr unsigned gl_unsigned_byte = 5121, gl_unsigned_short = 5123, gl_unsigned_int = 5125, gl_float = 5126;
constexpr unsigned target_array_buffer = 34962, target_element_array_buffer = 34963;

// ---------------------------------------------------------------------------------------------
// JSON text
// ---------------------------------------------------------------------------------------------

/// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        std::uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            n = 1;
            cp = c & 0x1fu;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            cp = c & 0x0fu;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            cp = c & 0x07u;
        } else {
            return false;
        }
        if (s.size() - i <= n) return false;
        for (std::size_t k = 1; k <= n; ++k) {
            const unsigned char d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xc0u) != 0x80u) return false;
            cp = cp << 6 | (d & 0x3fu);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        i += n + 1;
    }
    return true;
}

/// True for the characters a URI path segment holds as they are (RFC 3986's unreserved).
bool is_unreserved(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

/// A URI path segment: unreserved characters as they are, every other byte percent-encoded.
std::string uri_segment(std::string_view s) {
    std::string out;
    for (const char ch : s) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (is_unreserved(c)) {
            out += ch;
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

/// `s` read as Latin-1, in UTF-8.
std::string latin1_to_utf8(std::string_view s) {
    std::string out;
    for (const char ch : s) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (c < 0x80) {
            out += ch;
        } else {
            out += static_cast<char>(0xc0 | c >> 6);
            out += static_cast<char>(0x80 | (c & 0x3f));
        }
    }
    return out;
}

/// A float as the shortest of "%.9g", which reads back as the same float (through float or
/// double).
void append_float(std::string& out, float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    out += buf;
}

/// A float's exact value as a decimal (for accessor min and max, which the glTF validator compares
/// with the data exactly): "%.17g" of the float widened to double reads back as that double.
void append_exact(std::string& out, float v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
    out += buf;
}

/// JSON text built value by value: commas and keys are placed by the writer, strings escaped.
class json_text {
public:
    json_text& begin_object() { return open('{'); }
    json_text& end_object() { return close('}'); }
    json_text& begin_array() { return open('['); }
    json_text& end_array() { return close(']'); }
    json_text& key(std::string_view k) {
        separate();
        append_string(k);
        text_ += ':';
        after_key_ = true;
        return *this;
    }
    /// A string that is valid UTF-8 (callers check names with utf8_name first).
    json_text& string(std::string_view s) {
        separate();
        append_string(s);
        return *this;
    }
    json_text& number(std::size_t v) {
        separate();
        text_ += std::to_string(v);
        return *this;
    }
    json_text& number(float v) {
        separate();
        append_float(text_, v);
        return *this;
    }
    json_text& exact(float v) {
        separate();
        append_exact(text_, v);
        return *this;
    }
    json_text& floats(const float* v, std::size_t n) {
        begin_array();
        for (std::size_t i = 0; i < n; ++i) number(v[i]);
        return end_array();
    }
    json_text& raw(std::string_view s) {
        separate();
        text_ += s;
        return *this;
    }
    const std::string& str() const { return text_; }

private:
    json_text& open(char c) {
        separate();
        text_ += c;
        first_.push_back(true);
        return *this;
    }
    json_text& close(char c) {
        text_ += c;
        first_.pop_back();
        return *this;
    }
    void separate() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (first_.empty()) return;
        if (!first_.back()) text_ += ',';
        first_.back() = false;
    }
    void append_string(std::string_view s) {
        text_ += '"';
        for (const char ch : s) {
            const unsigned char c = static_cast<unsigned char>(ch);
            if (c == '"' || c == '\\') {
                text_ += '\\';
                text_ += ch;
            } else if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                text_ += buf;
            } else {
                text_ += ch;
            }
        }
        text_ += '"';
    }

    std::string text_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

// ---------------------------------------------------------------------------------------------
// Mirroring (write_options::source) and decomposition
// ---------------------------------------------------------------------------------------------

/// M * X * M with M = diag(1, 1, -1, 1): the elements in row 2 or column 2 (not both) change sign.
glm::mat4 mirror_matrix(glm::mat4 m) {
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r)
            if ((c == 2) != (r == 2)) m[c][r] = -m[c][r];
    return m;
}
glm::vec3 mirror_point(const glm::vec3& p) { return glm::vec3(p.x, p.y, -p.z); }
/// The rotation M * R * M: a rotation about axis a by angle t becomes one about M a by -t.
glm::quat mirror_rotation(const glm::quat& q) { return make_quat(q.w, -q.x, -q.y, q.z); }

/// The largest change of a point within `size` of the origin between the two affine maps: the
/// largest element difference of the 3x3 parts times size times 3 (a bound on the row sums), plus
/// the translation difference.
double matrix_error(const glm::mat4& a, const glm::mat4& b, double size) {
    double linear = 0.0;
    for (int c = 0; c < 3; ++c)
        for (int r = 0; r < 3; ++r) linear = std::max(linear, std::fabs(double(a[c][r]) - double(b[c][r])));
    const glm::dvec3 t = glm::dvec3(a[3]) - glm::dvec3(b[3]);
    return 3.0 * linear * size + std::sqrt(glm::dot(t, t));
}

/// A decomposition for glTF: to_transform's, its rotation renormalised in double (the validator
/// checks unit length) with w >= 0.
transform decompose(const glm::mat4& m) {
    transform t = to_transform(m);
    const glm::dvec4 q(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w);
    const double n = std::sqrt(glm::dot(q, q));
    if (n > 0.0 && std::isfinite(n)) {
        const glm::dvec4 u = q / n * (q.w < 0.0 ? -1.0 : 1.0);
        t.rotation = make_quat(float(u.w), float(u.x), float(u.y), float(u.z));
    } else {
        t.rotation = glm::identity<glm::quat>();
    }
    return t;
}

// ---------------------------------------------------------------------------------------------
// The writer's state
// ---------------------------------------------------------------------------------------------

struct view_record {
    std::size_t offset = 0, length = 0;
    unsigned target = 0;
};

struct accessor_record {
    std::size_t view = 0, count = 0;
    unsigned component_type = gl_float;
    const char* type = "SCALAR";
    std::vector<float> min, max; // written when not empty (exact)
};

struct node_record {
    std::string name;
    transform local{};
    bool has_transform = false;
    std::vector<std::size_t> children;
    std::size_t mesh = static_cast<std::size_t>(-1), skin = static_cast<std::size_t>(-1);
};

/// Embedded images ordered by what they hold (media type, then bytes), so that equal images
/// from separate sources (two loaded files, say) are one image in the output.
struct image_content_less {
    bool operator()(const io::embedded_image* a, const io::embedded_image* b) const {
        return std::tie(a->mime_type, a->bytes) < std::tie(b->mime_type, b->bytes);
    }
};

/// Materials ordered by everything the writer puts out for them (an embedded image by its
/// content), so that equal ones are written once.
struct material_key {
    io::material m;
    bool operator<(const material_key& o) const {
        // Colours by their bits: a strict order even with NaN (which the .X loader can pass on).
        const auto key = [](const io::material& x) {
            std::array<std::uint32_t, 11> c{};
            const float f[11] = {x.diffuse.x,  x.diffuse.y,  x.diffuse.z,  x.diffuse.w,  x.power,      x.specular.x,
                                 x.specular.y, x.specular.z, x.emissive.x, x.emissive.y, x.emissive.z};
            std::memcpy(c.data(), f, sizeof f);
            return std::make_tuple(std::cref(x.name), c, std::cref(x.texture_file));
        };
        if (key(m) < key(o.m)) return true;
        if (key(o.m) < key(m)) return false;
        const io::embedded_image *a = m.texture_image.get(), *b = o.m.texture_image.get();
        if (!a || !b) return !a && b;
        return image_content_less{}(a, b);
    }
};

constexpr std::size_t none = static_cast<std::size_t>(-1);

/// An image: a URI, or bytes in a buffer view with their media type.
struct image_record {
    std::string uri;
    std::size_t view = none;
    std::string mime_type;
};

/// A measurement for a message: three significant digits (`digits` for other numbers).
std::string number_text(double v, int digits = 3) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

class writer {
public:
    writer(const asset& a, const write_options& o) : a_(a), o_(o), mirror_(o.source == handedness::left) {}

    status run(std::string_view bin_uri, container format);

    write_report report;
    json_text json;
    std::vector<unsigned char> bin;

private:
    // Problems: a warning in lenient mode, the error in strict mode (status holds it then).
    status problem(warning_action action, errc code, std::string message, std::size_t index = error::no_index) {
        if (o_.mode == io::parse_mode::strict && action != warning_action::note)
            return error{code, std::move(message), index};
        load_warning w;
        w.code = code;
        w.message = std::move(message);
        w.index = index;
        w.action = action;
        report.warnings.push_back(std::move(w));
        return {};
    }
    void note(std::string message) {
        load_warning w;
        w.code = errc::invalid_argument;
        w.message = std::move(message);
        w.action = warning_action::note;
        report.warnings.push_back(std::move(w));
    }

    std::string utf8_name(const std::string& name, const std::string& what, status& st);
    std::string unique_name(std::string name);

    std::size_t add_view(const void* data, std::size_t bytes, unsigned target);
    std::size_t add_accessor(accessor_record r);
    template <class T>
    std::size_t add_data(const std::vector<T>& values, unsigned component_type, const char* type, unsigned target,
                         bool with_bounds = false);

    double model_size() const;
    status add_nodes();
    status add_mesh(std::size_t index);
    status add_skin(const io::mesh& m, const std::string& where, std::vector<std::uint32_t>& joints_of_vertex,
                    std::vector<float>& weights_of_vertex, std::size_t& sets, std::size_t& skin_index);
    std::size_t material_index(const io::material& m, status& st, const std::string& where);
    status add_clip(std::size_t index);
    void write_json(std::string_view bin_uri, container format);

    const asset& a_;
    const write_options& o_;
    const bool mirror_;
    double size_ = 1.0;

    std::vector<view_record> views_;
    std::vector<accessor_record> accessors_;
    std::vector<node_record> nodes_;
    std::set<std::string> names_;
    std::vector<std::size_t> scene_roots_;
    std::size_t root_node_ = none; // the common root, when one was added
    std::vector<std::size_t> joint_node_; // joint -> node (node j = joint j)
    std::vector<std::string> meshes_json_, skins_json_, animations_json_;
    std::map<material_key, std::size_t> material_of_;
    std::vector<std::string> materials_json_;
    std::map<std::string, std::size_t> image_of_;                     // by URI
    std::map<const io::embedded_image*, std::size_t, image_content_less> embedded_image_of_; // by content
    std::vector<image_record> images_;
};

std::string writer::utf8_name(const std::string& name, const std::string& what, status& st) {
    if (is_utf8(name)) return name;
    std::string fixed = latin1_to_utf8(name);
    if (st) st = problem(warning_action::repaired, errc::invalid_argument,
                         what + ": the name is not UTF-8; its bytes are read as Latin-1 ('" + fixed + "')");
    return fixed;
}

std::string writer::unique_name(std::string name) {
    if (names_.insert(name).second) return name;
    for (std::size_t k = 2;; ++k) {
        std::string n = name + "#" + std::to_string(k);
        if (names_.insert(n).second) return n;
    }
}

std::size_t writer::add_view(const void* data, std::size_t bytes, unsigned target) {
    while (bin.size() % 4) bin.push_back(0);
    view_record v;
    v.offset = bin.size();
    v.length = bytes;
    v.target = target;
    const auto* p = static_cast<const unsigned char*>(data);
    bin.insert(bin.end(), p, p + bytes);
    views_.push_back(v);
    return views_.size() - 1;
}

std::size_t writer::add_accessor(accessor_record r) {
    accessors_.push_back(std::move(r));
    return accessors_.size() - 1;
}

/// One view and one accessor for `values` (floats, glm vectors or matrices of floats, or unsigned
/// integers), `with_bounds`: min and max per component (POSITION, animation inputs). A glm vector
/// with padding (glm::vec3 is 16 bytes under GLM_FORCE_DEFAULT_ALIGNED_GENTYPES) is written as
/// its components, packed.
template <class T>
std::size_t writer::add_data(const std::vector<T>& values, unsigned component_type, const char* type,
                             unsigned target, bool with_bounds) {
    const std::string_view t(type);
    const std::size_t components = t == "SCALAR" ? 1 : t == "VEC2" ? 2 : t == "VEC3" ? 3 : t == "VEC4" ? 4 : 16;
    accessor_record r;
    r.component_type = component_type;
    r.type = type;
    if constexpr (std::is_integral<T>::value) {
        r.view = add_view(values.data(), values.size() * sizeof(T), target);
        r.count = values.size() / components;
    } else {
        static_assert(sizeof(T) % sizeof(float) == 0, "floats, or glm types of floats");
        constexpr std::size_t stored = sizeof(T) / sizeof(float); // floats per value
        // One float per value (a flat array), or one element per value, perhaps with padding.
        r.count = stored == 1 ? values.size() / components : values.size();
        const std::size_t used = stored == 1 ? 1 : components;     // floats of each value written
        std::vector<float> packed;
        const float* floats = nullptr;
        if (used == stored) {
            floats = reinterpret_cast<const float*>(values.data());
        } else {
            packed.resize(values.size() * used);
            for (std::size_t i = 0; i < values.size(); ++i) std::memcpy(&packed[i * used], &values[i], used * sizeof(float));
            floats = packed.data();
        }
        r.view = add_view(floats, r.count * components * sizeof(float), target);
        if (with_bounds && r.count > 0) {
            r.min.assign(components, 0.0f);
            r.max.assign(components, 0.0f);
            for (std::size_t i = 0; i < r.count; ++i)
                for (std::size_t k = 0; k < components; ++k) {
                    const float c = floats[i * components + k];
                    if (i == 0 || c < r.min[k]) r.min[k] = c;
                    if (i == 0 || c > r.max[k]) r.max[k] = c;
                }
        }
    }
    return add_accessor(std::move(r));
}

double writer::model_size() const {
    const skeleton& s = *a_.skeleton;
    glm::dvec3 lo(std::numeric_limits<double>::infinity()), hi(-std::numeric_limits<double>::infinity());
    const auto add = [&](const glm::vec3& p) {
        if (!is_finite(p)) return;
        lo = glm::min(lo, glm::dvec3(p));
        hi = glm::max(hi, glm::dvec3(p));
    };
    for (const glm::mat4& m : s.bind_model()) add(glm::vec3(m[3]));
    for (const io::mesh* m : a_.meshes) {
        const bool rigid = !m->is_skinned() && m->joint < s.size();
        for (const glm::vec3& p : m->positions) add(rigid ? glm::vec3(s.bind_model()[m->joint] * glm::vec4(p, 1.0f)) : p);
    }
    const glm::dvec3 e = hi - lo;
    const double size = std::max(e.x, std::max(e.y, e.z));
    return std::isfinite(size) && size > 0.0 ? size : 1.0;
}

status writer::add_nodes() {
    const skeleton& s = *a_.skeleton;
    status st;
    nodes_.resize(s.size());
    joint_node_.resize(s.size());
    // Joint names first, so that they keep their names whatever other nodes are called.
    for (std::size_t j = 0; j < s.size(); ++j) {
        std::string name = s.name(j).empty() ? "joint_" + std::to_string(j) : s.name(j);
        name = utf8_name(name, "joint " + std::to_string(j), st);
        if (!st) return st;
        nodes_[j].name = unique_name(name);
        joint_node_[j] = j;
    }
    double worst = 0.0;
    std::size_t worst_joint = 0;
    for (std::size_t j = 0; j < s.size(); ++j) {
        const glm::mat4 local = mirror_ ? mirror_matrix(s.bind_local()[j]) : s.bind_local()[j];
        nodes_[j].local = decompose(local);
        nodes_[j].has_transform = true;
        const double e = matrix_error(to_matrix(nodes_[j].local), local, size_);
        if (e > worst) {
            worst = e;
            worst_joint = j;
        }
        if (s.parent(j) >= 0) nodes_[std::size_t(s.parent(j))].children.push_back(j);
    }
    report.largest_error = std::max(report.largest_error, worst);
    if (worst > o_.tolerance * size_)
        if (!(st = problem(warning_action::repaired, errc::invalid_argument,
                           "joint " + std::to_string(worst_joint) + " '" + nodes_[worst_joint].name +
                               "': its bind matrix has shear, which a glTF node's translation / rotation / scale cannot "
                               "hold; it is written as its decomposition (the largest error of a bind matrix: " +
                               number_text(worst) + ", " + number_text(worst / size_) + " of the model's size)",
                           worst_joint)))
            return st;

    // A common root above the skeleton's roots: when a skin's joints could span several roots (glTF
    // wants a common root), or a mesh needs a joint that never moves (a skinned mesh without a
    // joint whose vertices have no influence).
    std::size_t roots = 0;
    for (std::size_t j = 0; j < s.size(); ++j) roots += s.parent(j) < 0;
    bool skinned = false, needs_fixed_joint = false;
    for (const io::mesh* m : a_.meshes) {
        if (!m->is_skinned()) continue;
        skinned = true;
        if (m->joint >= s.size()) needs_fixed_joint = true;
    }
    if ((roots > 1 && skinned) || needs_fixed_joint) {
        node_record r;
        r.name = unique_name("root");
        for (std::size_t j = 0; j < s.size(); ++j)
            if (s.parent(j) < 0) r.children.push_back(j);
        nodes_.push_back(std::move(r));
        root_node_ = nodes_.size() - 1;
        scene_roots_.push_back(root_node_);
    } else {
        for (std::size_t j = 0; j < s.size(); ++j)
            if (s.parent(j) < 0) scene_roots_.push_back(j);
    }
    return {};
}

std::size_t writer::material_index(const io::material& given, status& st, const std::string& where) {
    const auto found = material_of_.find(material_key{given});
    if (found != material_of_.end()) return found->second;
    io::material m = given;
    const std::size_t index = materials_json_.size();
    material_of_.emplace(material_key{given}, index);
    const auto clamp_colour = [&](float* c, std::size_t n, const char* what) {
        bool clamped = false;
        for (std::size_t i = 0; i < n; ++i) {
            const float v = is_finite(c[i]) ? std::clamp(c[i], 0.0f, 1.0f) : 0.0f;
            clamped = clamped || v != c[i];
            c[i] = v;
        }
        if (clamped && st)
            st = problem(warning_action::repaired, errc::out_of_range,
                         where + ": material '" + m.name + "': its " + what +
                             " has components outside [0, 1], which glTF's colour factors cannot hold; they are clamped");
    };
    float diffuse[4] = {m.diffuse.x, m.diffuse.y, m.diffuse.z, m.diffuse.w};
    float emissive[3] = {m.emissive.x, m.emissive.y, m.emissive.z};
    clamp_colour(diffuse, 4, "diffuse colour");
    clamp_colour(emissive, 3, "emissive colour");
    json_text j;
    j.begin_object();
    if (!m.name.empty()) j.key("name").string(utf8_name(m.name, where + ": material", st));
    j.key("pbrMetallicRoughness").begin_object();
    j.key("baseColorFactor").floats(diffuse, 4);
    // A .X material is a diffuse (Lambert) surface with a Phong highlight: not a metal, rough.
    j.key("metallicFactor").number(0.0f).key("roughnessFactor").number(1.0f);
    if (m.texture_image) {
        // An image the source embeds: its bytes in the buffer, when glTF's core can hold its type.
        const io::embedded_image& image = *m.texture_image;
        if (image.bytes.empty() || (image.mime_type != "image/png" && image.mime_type != "image/jpeg")) {
            if (st)
                st = problem(warning_action::dropped, errc::unsupported,
                             where + ": material '" + m.name + "': its texture image " +
                                 (image.bytes.empty() ? std::string("is empty")
                                                      : "is of type '" + image.mime_type +
                                                            "', which glTF holds only as PNG or JPEG") +
                                 "; the texture is left out");
        } else {
            auto [it, added] = embedded_image_of_.emplace(&image, images_.size());
            if (added) {
                image_record r;
                r.view = add_view(image.bytes.data(), image.bytes.size(), 0);
                r.mime_type = image.mime_type;
                images_.push_back(std::move(r));
            }
            j.key("baseColorTexture").begin_object().key("index").number(it->second).end_object();
        }
    } else if (!m.texture_file.empty()) {
        std::string uri;
        std::string file = utf8_name(m.texture_file, where + ": material '" + m.name + "': texture file", st);
        // A relative URI of the name's folders and file name, reserved characters percent-encoded.
        const std::vector<std::string> parts = io::texture_path_segments(file);
        for (std::size_t i = 0; i < parts.size(); ++i) uri += (i ? "/" : "") + uri_segment(parts[i]);
        if (uri != file && st)
            st = problem(warning_action::repaired, errc::invalid_argument,
                         where + ": material '" + m.name + "': texture file '" + file + "' is written as the URI '" +
                             uri + "'");
        if (!uri.empty()) {
            auto [it, added] = image_of_.emplace(uri, images_.size());
            if (added) images_.push_back(image_record{uri, none, {}});
            j.key("baseColorTexture").begin_object().key("index").number(it->second).end_object();
        }
    }
    j.end_object();
    if (m.emissive != glm::vec3(0.0f)) j.key("emissiveFactor").floats(emissive, 3);
    if (diffuse[3] < 1.0f) j.key("alphaMode").string("BLEND");
    // What glTF's core material has no place for, kept as extras.
    j.key("extras").begin_object();
    const float specular[3] = {m.specular.x, m.specular.y, m.specular.z};
    if (is_finite(m.specular) && is_finite(m.power)) {
        j.key("specular").floats(specular, 3);
        j.key("power").number(m.power);
    }
    j.end_object();
    j.end_object();
    materials_json_.push_back(j.str());
    return index;
}

/// The skin of mesh `m`: its bones (those whose joint is in the skeleton), each vertex's
/// influences (merged per joint, normalised, zero-influence vertices on the mesh's joint) as
/// `sets` groups of four (joint index into the skin, weight), and the skin's JSON.
status writer::add_skin(const io::mesh& m, const std::string& where, std::vector<std::uint32_t>& joints_out,
                        std::vector<float>& weights_out, std::size_t& sets, std::size_t& skin_index) {
    const skeleton& s = *a_.skeleton;
    const io::mesh_skin& k = m.skin;
    const std::size_t n = m.positions.size(), per = k.influences_per_vertex;
    status st;
    if (k.bone_indices.size() != n * per || k.weights.size() != n * per)
        return problem(warning_action::dropped, errc::size_mismatch,
                       where + ": its skin has " + std::to_string(k.weights.size()) + " weights and " +
                           std::to_string(k.bone_indices.size()) + " bone indices for " + std::to_string(n) +
                           " vertices of " + std::to_string(per) + " influences; the skin is dropped (the mesh is rigid)");
    // Skin joints: one per (node, offset); a second offset on one node gets a node of its own
    // under it (glTF's skin joints are unique).
    std::vector<std::size_t> skin_nodes, skin_sources;
    std::vector<glm::mat4> skin_offsets;
    std::vector<std::size_t> slot_of_bone(k.bones.size(), none);
    const auto slot_for = [&](std::size_t node, const glm::mat4& offset) {
        for (std::size_t i = 0; i < skin_nodes.size(); ++i)
            if (skin_sources[i] == node && skin_offsets[i] == offset) return i;
        std::size_t use = node;
        if (std::find(skin_sources.begin(), skin_sources.end(), node) != skin_sources.end()) {
            node_record helper;
            helper.name = unique_name(nodes_[node].name + "#bone");
            nodes_.push_back(std::move(helper));
            use = nodes_.size() - 1;
            nodes_[node].children.push_back(use);
        }
        skin_nodes.push_back(use);
        skin_sources.push_back(node);
        skin_offsets.push_back(offset);
        return skin_nodes.size() - 1;
    };
    std::size_t dropped_bones = 0;
    std::string first_dropped;
    for (std::size_t b = 0; b < k.bones.size(); ++b) {
        const skin_bone& bone = k.bones[b];
        if (bone.joint >= s.size() || !is_finite(bone.offset)) {
            if (dropped_bones++ == 0) first_dropped = "bone " + std::to_string(b) + " '" + bone.name + "'";
            continue;
        }
        slot_of_bone[b] = slot_for(bone.joint, bone.offset);
    }
    if (dropped_bones)
        if (!(st = problem(warning_action::dropped, errc::out_of_range,
                           where + ": " + first_dropped + (dropped_bones > 1 ? " and " + std::to_string(dropped_bones - 1) + " more" : "") +
                               ": its joint is not in the skeleton (or its offset is not finite); the bone is dropped and its "
                               "weights go to the vertices' other bones")))
            return st;

    // Per vertex: merged, normalised influences.
    std::vector<std::vector<std::pair<std::size_t, double>>> influences(n);
    std::size_t without = 0, renormalised = 0, merged = 0, negative = 0;
    double worst_sum = 0.0;
    std::size_t widest = 0;
    std::size_t fixed_slot = none;
    for (std::size_t v = 0; v < n; ++v) {
        auto& inf = influences[v];
        double sum = 0.0;
        for (std::size_t i = 0; i < per; ++i) {
            const float w = k.weights[v * per + i];
            const std::size_t b = k.bone_indices[v * per + i];
            if (w == 0.0f) continue;
            if (!(w > 0.0f) || !is_finite(w)) {
                ++negative;
                continue;
            }
            if (b >= k.bones.size() || slot_of_bone[b] == none) continue;
            sum += double(w);
            const std::size_t slot = slot_of_bone[b];
            auto same = std::find_if(inf.begin(), inf.end(), [&](const auto& p) { return p.first == slot; });
            if (same != inf.end()) {
                same->second += double(w);
                ++merged;
            } else {
                inf.emplace_back(slot, double(w));
            }
        }
        if (inf.empty()) {
            // The vertex follows its mesh's joint (or, without one, stays where it is).
            if (fixed_slot == none) {
                const bool has_joint = m.joint < s.size();
                const std::size_t node = has_joint ? m.joint : root_node_;
                const glm::mat4 offset = has_joint ? s.inverse_bind_model()[m.joint] : glm::mat4(1.0f);
                fixed_slot = slot_for(node, offset);
            }
            inf.emplace_back(fixed_slot, 1.0);
            ++without;
            continue;
        }
        if (std::fabs(sum - 1.0) > 1e-3) {
            ++renormalised;
            worst_sum = std::max(worst_sum, std::fabs(sum - 1.0));
        }
        for (auto& p : inf) p.second /= sum;
        std::stable_sort(inf.begin(), inf.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
        widest = std::max(widest, inf.size());
    }
    widest = std::max<std::size_t>(widest, 1);
    if (skin_nodes.size() > 65536)
        return error{errc::unsupported, where + ": its skin has " + std::to_string(skin_nodes.size()) +
                                            " joints; glTF's JOINTS_n hold at most 65536", error::no_index};
    if (without)
        if (!(st = problem(warning_action::repaired, errc::empty,
                           where + ": " + std::to_string(without) + " vertices have no influence (they would skin to the "
                               "origin); they follow " + (m.joint < s.size() ? "the mesh's joint '" + s.name(m.joint) + "'" : std::string("the model's root")) +
                               " (a skin joint for it, weight 1)")))
            return st;
    if (renormalised)
        if (!(st = problem(warning_action::repaired, errc::not_normalized,
                           where + ": " + std::to_string(renormalised) + " vertices' weights do not sum to 1 (up to " +
                               number_text(worst_sum) + " away); they are scaled to sum to 1, as glTF requires")))
            return st;
    if (merged)
        if (!(st = problem(warning_action::repaired, errc::duplicate,
                           where + ": " + std::to_string(merged) + " influences name a joint the vertex already has; "
                               "each is added to that one (glTF requires distinct joints per vertex)")))
            return st;
    if (negative)
        if (!(st = problem(warning_action::dropped, errc::out_of_range,
                           where + ": " + std::to_string(negative) + " influences have a negative or non-finite weight; they are dropped")))
            return st;

    sets = (widest + 3) / 4;
    joints_out.assign(n * sets * 4, 0);
    weights_out.assign(n * sets * 4, 0.0f);
    for (std::size_t v = 0; v < n; ++v) {
        const auto& inf = influences[v];
        float* w = &weights_out[v * sets * 4];
        for (std::size_t i = 0; i < inf.size(); ++i) {
            joints_out[v * sets * 4 + i] = static_cast<std::uint32_t>(inf[i].first);
            w[i] = static_cast<float>(inf[i].second);
        }
        // The validator sums in float, component c of every set before component c + 1, and
        // allows 2e-7 per weight: move the rounding into the largest weight.
        for (int iteration = 0; iteration < 4; ++iteration) {
            float sum = 0.0f;
            for (std::size_t c = 0; c < 4; ++c)
                for (std::size_t set = 0; set < sets; ++set) sum += w[set * 4 + c];
            if (sum == 1.0f) break;
            w[0] += 1.0f - sum;
        }
    }
    // Set-major layout for the accessors: set s of vertex v at [s][v].
    {
        std::vector<std::uint32_t> j2(joints_out.size());
        std::vector<float> w2(weights_out.size());
        for (std::size_t v = 0; v < n; ++v)
            for (std::size_t set = 0; set < sets; ++set)
                for (std::size_t c = 0; c < 4; ++c) {
                    j2[(set * n + v) * 4 + c] = joints_out[(v * sets + set) * 4 + c];
                    w2[(set * n + v) * 4 + c] = weights_out[(v * sets + set) * 4 + c];
                }
        joints_out.swap(j2);
        weights_out.swap(w2);
    }

    std::vector<glm::mat4> ibm(skin_offsets.size());
    std::size_t bottom = 0;
    for (std::size_t i = 0; i < ibm.size(); ++i) {
        ibm[i] = mirror_ ? mirror_matrix(skin_offsets[i]) : skin_offsets[i];
        if (ibm[i][0][3] != 0.0f || ibm[i][1][3] != 0.0f || ibm[i][2][3] != 0.0f || ibm[i][3][3] != 1.0f) ++bottom;
        ibm[i][0][3] = ibm[i][1][3] = ibm[i][2][3] = 0.0f;
        ibm[i][3][3] = 1.0f;
    }
    if (bottom) note(where + ": " + std::to_string(bottom) + " bone offsets have a last row other than (0, 0, 0, 1); "
                     "glTF's inverse bind matrices are affine, so it is written as (0, 0, 0, 1) (skinning ignores it)");
    const std::size_t ibm_accessor = add_data(ibm, gl_float, "MAT4", 0);
    json_text j;
    j.begin_object();
    j.key("inverseBindMatrices").number(ibm_accessor);
    j.key("joints").begin_array();
    for (const std::size_t node : skin_nodes) j.number(node);
    j.end_array();
    j.end_object();
    skins_json_.push_back(j.str());
    skin_index = skins_json_.size() - 1;
    return {};
}

status writer::add_mesh(std::size_t index) {
    const io::mesh& m = *a_.meshes[index];
    const skeleton& s = *a_.skeleton;
    std::string where = "mesh " + std::to_string(index) + (m.name.empty() ? std::string() : " '" + m.name + "'");
    status st;
    const std::size_t n = m.positions.size();
    if (n == 0 || m.indices.size() < 3)
        return problem(warning_action::dropped, errc::empty, where + ": it has no vertices or no triangles; it is dropped");

    // Attributes: finite, the right size, mirrored.
    std::size_t repaired = 0;
    const auto finite_or_zero = [&](auto v) {
        using V = decltype(v);
        bool finite = true;
        for (int c = 0; c < V::length(); ++c) finite = finite && is_finite(v[c]);
        if (finite) return v;
        ++repaired;
        return V(0.0f);
    };
    std::vector<glm::vec3> positions(n);
    for (std::size_t i = 0; i < n; ++i) {
        const glm::vec3 p = finite_or_zero(m.positions[i]);
        positions[i] = mirror_ ? mirror_point(p) : p;
    }
    const auto sized = [&](std::size_t count, const char* what) {
        if (count == 0 || count == n) return count == n;
        if (st) st = problem(warning_action::dropped, errc::size_mismatch,
                             where + ": " + std::to_string(count) + " " + what + " for " + std::to_string(n) +
                                 " vertices; they are dropped");
        return false;
    };
    std::vector<glm::vec3> normals;
    std::size_t zero_normals = 0, scaled_normals = 0;
    if (sized(m.normals.size(), "normals")) {
        normals.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const glm::dvec3 d(finite_or_zero(m.normals[i]));
            const double len = std::sqrt(glm::dot(d, d));
            if (!(len > 1e-20)) {
                ++zero_normals;
                normals[i] = glm::vec3(0.0f, 1.0f, 0.0f);
                continue;
            }
            if (std::fabs(len - 1.0) > 1e-3) ++scaled_normals;
            const glm::vec3 u(d / len);
            normals[i] = mirror_ ? mirror_point(u) : u;
        }
    }
    std::vector<glm::vec4> tangents;
    if (sized(m.tangents.size(), "tangents") && !normals.empty()) {
        tangents.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const glm::vec4 t = finite_or_zero(m.tangents[i]);
            glm::dvec3 d(t.x, t.y, t.z);
            const double len = std::sqrt(glm::dot(d, d));
            d = len > 1e-20 ? d / len : glm::dvec3(1.0, 0.0, 0.0);
            glm::vec3 u(d);
            float w = t.w < 0.0f ? -1.0f : 1.0f;
            if (mirror_) {
                u = mirror_point(u);
                w = -w; // a mirror turns the bitangent's cross product around
            }
            tangents[i] = glm::vec4(u, w);
        }
    }
    std::vector<glm::vec2> texcoords;
    if (sized(m.texcoords.size(), "texture coordinates")) {
        texcoords.resize(n);
        for (std::size_t i = 0; i < n; ++i) texcoords[i] = finite_or_zero(m.texcoords[i]);
    }
    if (!st) return st;
    if (repaired)
        if (!(st = problem(warning_action::repaired, errc::non_finite,
                           where + ": " + std::to_string(repaired) + " NaN or infinite vertex values are written as 0")))
            return st;
    if (zero_normals) note(where + ": " + std::to_string(zero_normals) + " normals are zero (vertices no face uses); glTF "
                           "normals are unit vectors, so they are written as +y");
    if (scaled_normals) note(where + ": " + std::to_string(scaled_normals) + " normals are not unit length; they are normalised");

    // Triangles by material, winding reversed by a mirror.
    const std::size_t triangles = m.indices.size() / 3;
    const bool has_materials = !m.materials.empty();
    std::size_t bad_triangles = 0;
    std::vector<std::vector<std::uint32_t>> by_material(has_materials ? m.materials.size() : 1);
    std::size_t bad_material = 0;
    for (std::size_t t = 0; t < triangles; ++t) {
        std::uint32_t c[3] = {m.indices[3 * t], m.indices[3 * t + 1], m.indices[3 * t + 2]};
        if (c[0] >= n || c[1] >= n || c[2] >= n) {
            ++bad_triangles;
            continue;
        }
        std::size_t mat = 0;
        if (has_materials) {
            mat = t < m.triangle_materials.size() ? m.triangle_materials[t] : m.materials.size();
            if (mat >= m.materials.size()) {
                ++bad_material;
                mat = 0;
            }
        }
        if (mirror_) std::swap(c[1], c[2]);
        by_material[mat].insert(by_material[mat].end(), c, c + 3);
    }
    if (m.indices.size() % 3)
        if (!(st = problem(warning_action::dropped, errc::size_mismatch,
                           where + ": " + std::to_string(m.indices.size()) + " indices are not whole triangles; the last " +
                               std::to_string(m.indices.size() % 3) + " are dropped")))
            return st;
    if (bad_triangles)
        if (!(st = problem(warning_action::dropped, errc::out_of_range,
                           where + ": " + std::to_string(bad_triangles) + " triangles have a vertex index past the " +
                               std::to_string(n) + " vertices; they are dropped")))
            return st;
    if (bad_material)
        if (!(st = problem(warning_action::repaired, errc::out_of_range,
                           where + ": " + std::to_string(bad_material) + " triangles have no material or one past its " +
                               std::to_string(m.materials.size()) + " materials; they use material 0")))
            return st;

    // Vertex attributes (shared by the primitives).
    const std::size_t position_accessor = add_data(positions, gl_float, "VEC3", target_array_buffer, true);
    const std::size_t normal_accessor = normals.empty() ? none : add_data(normals, gl_float, "VEC3", target_array_buffer);
    const std::size_t tangent_accessor = tangents.empty() ? none : add_data(tangents, gl_float, "VEC4", target_array_buffer);
    const std::size_t texcoord_accessor =
        texcoords.empty() ? none : add_data(texcoords, gl_float, "VEC2", target_array_buffer);
    std::vector<std::size_t> joints_accessors, weights_accessors;
    std::size_t skin = none;
    if (m.is_skinned()) {
        std::vector<std::uint32_t> joints;
        std::vector<float> weights;
        std::size_t sets = 0;
        if (!(st = add_skin(m, where, joints, weights, sets, skin))) return st;
        if (skin != none) {
            std::uint32_t largest = 0;
            for (const std::uint32_t j : joints) largest = std::max(largest, j);
            for (std::size_t set = 0; set < sets; ++set) {
                const std::size_t from = set * n * 4, to = from + n * 4;
                if (largest < 256) {
                    std::vector<std::uint8_t> j8(joints.begin() + std::ptrdiff_t(from), joints.begin() + std::ptrdiff_t(to));
                    joints_accessors.push_back(add_data(j8, gl_unsigned_byte, "VEC4", target_array_buffer));
                } else {
                    std::vector<std::uint16_t> j16(to - from);
                    for (std::size_t i = from; i < to; ++i) j16[i - from] = static_cast<std::uint16_t>(joints[i]);
                    joints_accessors.push_back(add_data(j16, gl_unsigned_short, "VEC4", target_array_buffer));
                }
                const std::vector<float> w(weights.begin() + std::ptrdiff_t(from), weights.begin() + std::ptrdiff_t(to));
                weights_accessors.push_back(add_data(w, gl_float, "VEC4", target_array_buffer));
            }
        }
    }
    if (!m.morph_targets.empty())
        if (!(st = problem(warning_action::dropped, errc::unsupported,
                           where + ": its " + std::to_string(m.morph_targets.size()) +
                               " morph targets are not written (keyblend's glTF writer does not write morph targets)")))
            return st;

    json_text j;
    j.begin_object();
    if (!m.name.empty()) j.key("name").string(utf8_name(m.name, where, st));
    j.key("primitives").begin_array();
    std::size_t primitives = 0;
    for (std::size_t mat = 0; mat < by_material.size(); ++mat) {
        if (by_material[mat].empty()) continue;
        const std::vector<std::uint32_t>& idx = by_material[mat];
        std::size_t indices_accessor;
        if (n <= 65535) { // (65535 itself is the primitive restart value of 16-bit indices)
            const std::vector<std::uint16_t> i16(idx.begin(), idx.end());
            indices_accessor = add_data(i16, gl_unsigned_short, "SCALAR", target_element_array_buffer);
        } else {
            indices_accessor = add_data(idx, gl_unsigned_int, "SCALAR", target_element_array_buffer);
        }
        j.begin_object();
        j.key("attributes").begin_object();
        j.key("POSITION").number(position_accessor);
        if (normal_accessor != none) j.key("NORMAL").number(normal_accessor);
        if (tangent_accessor != none) j.key("TANGENT").number(tangent_accessor);
        if (texcoord_accessor != none) j.key("TEXCOORD_0").number(texcoord_accessor);
        for (std::size_t set = 0; set < joints_accessors.size(); ++set) {
            j.key("JOINTS_" + std::to_string(set)).number(joints_accessors[set]);
            j.key("WEIGHTS_" + std::to_string(set)).number(weights_accessors[set]);
        }
        j.end_object();
        j.key("indices").number(indices_accessor);
        if (has_materials) {
            // A texture needs texture coordinates (TEXCOORD_0): without them the primitive's
            // material is written without its texture.
            const io::material* used = &m.materials[mat];
            io::material untextured;
            if (texcoord_accessor == none && (!used->texture_file.empty() || used->texture_image)) {
                untextured = *used;
                untextured.texture_file.clear();
                untextured.texture_image.reset();
                if (st)
                    st = problem(warning_action::dropped, errc::invalid_argument,
                                 where + ": material '" + used->name +
                                     "': the mesh has no texture coordinates; its texture is left out here");
                used = &untextured;
            }
            j.key("material").number(material_index(*used, st, where));
        }
        j.key("mode").number(std::size_t{4});
        j.end_object();
        ++primitives;
    }
    j.end_array();
    j.end_object();
    if (!st) return st;
    if (primitives == 0)
        return problem(warning_action::dropped, errc::empty, where + ": no triangle is left; the mesh is dropped");
    meshes_json_.push_back(j.str());
    report.primitives += primitives;

    // The mesh's node: a skinned mesh at the root (glTF ignores its node's transforms), a rigid
    // one under its joint.
    node_record node;
    node.name = unique_name(utf8_name(m.name.empty() ? "mesh_" + std::to_string(index) : m.name, where, st));
    node.mesh = meshes_json_.size() - 1;
    node.skin = skin;
    nodes_.push_back(std::move(node));
    const std::size_t at = nodes_.size() - 1;
    if (skin == none && m.joint < s.size()) nodes_[m.joint].children.push_back(at);
    else scene_roots_.push_back(at);
    return st;
}

/// One sampler being built: times in seconds, values flattened, its interpolation.
struct sampler_record {
    std::vector<float> times;
    std::vector<float> values; // per key: components (CUBICSPLINE: in-tangent, value, out-tangent)
    std::size_t components = 0;
    const char* interpolation = "LINEAR";
    const char* path = "translation";
    std::size_t node = 0;
};

const char* gltf_interpolation(interpolation mode) {
    switch (mode) {
    case interpolation::step: return "STEP";
    case interpolation::cubic_spline: return "CUBICSPLINE";
    default: return "LINEAR";
    }
}

status writer::add_clip(std::size_t index) {
    const clip& c = *a_.clips[index];
    const skeleton& s = *a_.skeleton;
    std::string where = "clip " + std::to_string(index) + " '" + c.name + "'";
    status st;
    if (status v = validate_clip(c, s); !v)
        return problem(warning_action::dropped, v.error().code,
                       where + ": it is not a valid clip (" + v.error().message + "); it is dropped");
    if (!c.float_channels.empty() || !c.vector_channels.empty() || !c.events.empty() || !c.motion.empty())
        if (!(st = problem(warning_action::dropped, errc::unsupported,
                           where + ": its user channels, events and root motion are not written (glTF animations "
                               "have none)")))
            return st;
    if (c.ticks_per_second_is_default)
        note(where + ": the source gives no ticks per second; " + number_text(double(c.ticks_per_second), 9) +
             " (the default) converts its ticks to seconds");

    const double tps = double(c.ticks_per_second);
    std::vector<sampler_record> samplers;
    std::size_t cut_keys = 0, negative_keys = 0, nlerp_tracks = 0;
    double worst = 0.0, worst_between = 0.0;
    std::string worst_at;

    // Times in seconds, strictly increasing and >= 0 (glTF's rule): the kept keys start at
    // `first_kept` (keys before 0 collapse into one key at 0, whose value the caller samples).
    // Where two keys share a time (a cut, or ticks that float seconds cannot tell apart) the
    // earlier moves one float step earlier, so that at the time itself the later key holds, as
    // keyblend samples a cut.
    const auto convert_times = [&](const std::vector<float>& ticks, std::vector<float>& seconds,
                                   std::size_t& first_kept, bool& starts_at_zero) {
        seconds.clear();
        first_kept = 0;
        starts_at_zero = false;
        while (first_kept < ticks.size() && ticks[first_kept] < 0.0f) ++first_kept;
        if (first_kept > 0) {
            negative_keys += first_kept;
            if (first_kept == ticks.size() || ticks[first_kept] > 0.0f) {
                starts_at_zero = true;
                seconds.push_back(0.0f);
            }
        }
        for (std::size_t i = first_kept; i < ticks.size(); ++i)
            seconds.push_back(static_cast<float>(double(ticks[i]) / tps));
        for (std::size_t i = seconds.size(); i-- > 1;)
            if (!(seconds[i - 1] < seconds[i])) {
                ++cut_keys;
                seconds[i - 1] = std::nextafter(seconds[i], -INFINITY);
            }
        // (Keys crowded at 0 cannot move earlier: they move later instead.)
        if (!seconds.empty() && seconds[0] < 0.0f) {
            seconds[0] = 0.0f;
            for (std::size_t i = 1; i < seconds.size() && !(seconds[i - 1] < seconds[i]); ++i)
                seconds[i] = std::nextafter(seconds[i - 1], INFINITY);
        }
    };

    for (const channel& ch : c.channels) {
        const std::size_t node = joint_node_[ch.joint];
        if (ch.has_matrix()) {
            // Matrix keys: each key's decomposition, as sampling_job interpolates them.
            const matrix_track<float>& mt = ch.matrix;
            std::size_t first = 0;
            bool zero = false;
            std::vector<float> seconds;
            convert_times(mt.times(), seconds, first, zero);
            sampler_record tr, ro, sc;
            tr.path = "translation";
            ro.path = "rotation";
            sc.path = "scale";
            tr.components = sc.components = 3;
            ro.components = 4;
            for (sampler_record* r : {&tr, &ro, &sc}) {
                r->node = node;
                r->times = seconds;
                r->interpolation = mt.mode() == interpolation::step ? "STEP" : "LINEAR";
            }
            glm::quat previous = glm::identity<glm::quat>();
            const auto push = [&](const glm::mat4& source, float tick) {
                const glm::mat4 mm = mirror_ ? mirror_matrix(source) : source;
                const transform t = decompose(mm);
                const double e = matrix_error(to_matrix(t), mm, size_);
                if (e > worst) {
                    worst = e;
                    worst_at = "joint '" + s.name(ch.joint) + "', tick " + number_text(double(tick));
                }
                glm::quat q = t.rotation;
                if (quat_dot(q, previous) < 0.0f) q = make_quat(-q.w, -q.x, -q.y, -q.z);
                previous = q;
                tr.values.insert(tr.values.end(), {t.translation.x, t.translation.y, t.translation.z});
                ro.values.insert(ro.values.end(), {q.x, q.y, q.z, q.w});
                sc.values.insert(sc.values.end(), {t.scale.x, t.scale.y, t.scale.z});
            };
            if (zero) push(sample_track(mt, 0.0f), 0.0f);
            for (std::size_t i = first; i < mt.size(); ++i) push(mt.value(i), mt.time(i));
            // Between keys glTF interpolates the decompositions; element-wise interpolation of
            // the matrices (a linear matrix track's own mode) differs from it mid-way.
            if (mt.mode() == interpolation::linear)
                for (std::size_t i = first; i + 1 < mt.size(); ++i) {
                    if (!(mt.time(i + 1) > mt.time(i))) continue;
                    const glm::mat4 lerped = lerp(mt.value(i), mt.value(i + 1), 0.5f);
                    transform a = to_transform(mt.value(i)), b = to_transform(mt.value(i + 1));
                    transform mid;
                    mid.translation = lerp(a.translation, b.translation, 0.5f);
                    mid.rotation = slerp(a.rotation, b.rotation, 0.5f);
                    mid.scale = lerp(a.scale, b.scale, 0.5f);
                    worst_between = std::max(worst_between, matrix_error(to_matrix(mid), lerped, size_));
                }
            samplers.push_back(std::move(tr));
            samplers.push_back(std::move(ro));
            samplers.push_back(std::move(sc));
            continue;
        }
        // Translation, rotation and scale tracks as they are, in the same mode.
        const auto add_track = [&](const auto& track, const char* path, std::size_t components, auto to_floats) {
            if (track.empty()) return;
            sampler_record r;
            r.node = node;
            r.path = path;
            r.components = components;
            interpolation mode = track.mode();
            if (mode == interpolation::nlerp) {
                ++nlerp_tracks;
                mode = interpolation::linear;
            }
            r.interpolation = gltf_interpolation(mode);
            const bool cubic = mode == interpolation::cubic_spline;
            std::size_t first = 0;
            bool zero = false;
            convert_times(track.times(), r.times, first, zero);
            using value_type = std::decay_t<decltype(track.value(0))>;
            const auto push = [&](const value_type& v, const value_type& in, const value_type& out) {
                // Tangents are per tick; glTF's per second.
                if (cubic) to_floats(in, float(tps), r.values, true);
                to_floats(v, 1.0f, r.values, false);
                if (cubic) to_floats(out, float(tps), r.values, true);
            };
            const value_type zero_tangent = value_type(key_traits<value_type>::identity()) * 0.0f;
            if (zero) push(sample_track(track, 0.0f), zero_tangent, zero_tangent);
            for (std::size_t i = first; i < track.size(); ++i)
                push(track.value(i), cubic ? track.in_tangents()[i] : zero_tangent,
                     cubic ? track.out_tangents()[i] : zero_tangent);
            samplers.push_back(std::move(r));
        };
        const auto vec3_floats = [&](const glm::vec3& v, float scale, std::vector<float>& out, bool) {
            const glm::vec3 m = mirror_ ? mirror_point(v) : v;
            out.insert(out.end(), {m.x * scale, m.y * scale, m.z * scale});
        };
        const auto scale_floats = [&](const glm::vec3& v, float scale, std::vector<float>& out, bool) {
            out.insert(out.end(), {v.x * scale, v.y * scale, v.z * scale});
        };
        const auto quat_floats = [&](const glm::quat& given, float scale, std::vector<float>& out, bool tangent) {
            glm::quat q = mirror_ ? mirror_rotation(given) : given;
            if (!tangent) {
                // Unit to double precision (the validator checks), the sign of the file kept.
                const glm::dvec4 d(q.x, q.y, q.z, q.w);
                const double len = std::sqrt(glm::dot(d, d));
                if (len > 0.0) q = make_quat(float(d.w / len), float(d.x / len), float(d.y / len), float(d.z / len));
            }
            out.insert(out.end(), {q.x * scale, q.y * scale, q.z * scale, q.w * scale});
        };
        add_track(ch.translation, "translation", 3, vec3_floats);
        add_track(ch.rotation, "rotation", 4, quat_floats);
        add_track(ch.scale, "scale", 3, scale_floats);
        bool weights = false;
        for (const float_track<float>& w : ch.morph_weights) weights = weights || !w.empty();
        if (weights)
            if (!(st = problem(warning_action::dropped, errc::unsupported,
                               where + ": the morph weight tracks of joint '" + s.name(ch.joint) +
                                   "' are not written (keyblend's glTF writer does not write morph targets)")))
                return st;
    }
    report.largest_error = std::max(report.largest_error, worst);
    if (worst > o_.tolerance * size_)
        if (!(st = problem(warning_action::repaired, errc::invalid_argument,
                           where + ": matrix keys have shear, which translation / rotation / scale cannot hold; they are "
                               "written as their decompositions (the largest error: " + number_text(worst) + ", " +
                               number_text(worst / size_) + " of the model's size, at " + worst_at + ")")))
            return st;
    if (worst_between > o_.tolerance * size_)
        note(where + ": between its matrix keys glTF interpolates translation, rotation and scale, as keyblend's "
             "sampling_job does; element-wise interpolation of the matrices (sample_local_matrices) differs from "
             "it by up to " + number_text(worst_between) + " (" + number_text(worst_between / size_) +
             " of the model's size) mid-way between keys");
    if (nlerp_tracks) note(where + ": " + std::to_string(nlerp_tracks) + " rotation tracks interpolate by nlerp; glTF's "
                           "LINEAR is slerp (the same at keys, a little different between them)");
    if (cut_keys)
        if (!(st = problem(warning_action::repaired, errc::duplicate,
                           where + ": " + std::to_string(cut_keys) + " keys share a time in seconds with the key before "
                               "(a cut, or ticks that float seconds cannot tell apart); glTF's times increase strictly, "
                               "so the earlier of two is written one float step earlier")))
            return st;
    if (negative_keys)
        if (!(st = problem(warning_action::repaired, errc::out_of_range,
                           where + ": " + std::to_string(negative_keys) + " keys are before time 0, which glTF does not "
                               "allow; each track's keys before 0 are replaced by its value at 0")))
            return st;
    if (samplers.empty())
        return problem(warning_action::dropped, errc::empty, where + ": it has no keys; it is dropped (a glTF "
                                                                     "animation needs a channel)");
    // The clip's length: glTF's is its last key; a clip longer than that holds its last pose.
    float last = 0.0f;
    for (const sampler_record& r : samplers) last = std::max(last, r.times.back());
    const float duration = static_cast<float>(double(c.duration) / tps);
    if (duration > last) {
        sampler_record& r = samplers.front();
        const std::size_t k = r.values.size() / r.times.size();
        std::vector<float> hold(r.values.end() - std::ptrdiff_t(k), r.values.end());
        if (std::string_view(r.interpolation) == "CUBICSPLINE") {
            for (std::size_t i = 0; i < r.components; ++i) hold[i] = hold[2 * r.components + i] = 0.0f;
            // (in- and out-tangent 0: the value holds)
        }
        r.times.push_back(duration);
        r.values.insert(r.values.end(), hold.begin(), hold.end());
    }

    json_text j;
    j.begin_object();
    if (!c.name.empty()) j.key("name").string(utf8_name(c.name, where, st));
    j.key("channels").begin_array();
    for (std::size_t i = 0; i < samplers.size(); ++i)
        j.begin_object()
            .key("sampler")
            .number(i)
            .key("target")
            .begin_object()
            .key("node")
            .number(samplers[i].node)
            .key("path")
            .string(samplers[i].path)
            .end_object()
            .end_object();
    j.end_array();
    j.key("samplers").begin_array();
    for (const sampler_record& r : samplers) {
        const std::size_t input = add_data(r.times, gl_float, "SCALAR", 0, true);
        const std::size_t output = add_data(r.values, gl_float, r.components == 4 ? "VEC4" : "VEC3", 0);
        j.begin_object().key("input").number(input).key("output").number(output);
        j.key("interpolation").string(r.interpolation).end_object();
        report.keys += r.times.size();
    }
    j.end_array();
    j.end_object();
    if (!st) return st;
    animations_json_.push_back(j.str());
    report.channels += samplers.size();
    return {};
}

void writer::write_json(std::string_view bin_uri, container format) {
    json_text& j = json;
    j.begin_object();
    j.key("asset").begin_object().key("version").string("2.0");
    j.key("generator").string(is_utf8(o_.generator) ? o_.generator : latin1_to_utf8(o_.generator)).end_object();
    if (!nodes_.empty()) {
        j.key("scene").number(std::size_t{0});
        j.key("scenes").begin_array().begin_object();
        j.key("nodes").begin_array();
        for (const std::size_t r : scene_roots_) j.number(r);
        j.end_array().end_object().end_array();
    }
    if (!nodes_.empty()) {
        j.key("nodes").begin_array();
        for (const node_record& n : nodes_) {
            j.begin_object();
            j.key("name").string(n.name);
            if (!n.children.empty()) {
                j.key("children").begin_array();
                for (const std::size_t c : n.children) j.number(c);
                j.end_array();
            }
            if (n.has_transform) {
                const transform& t = n.local;
                if (t.translation != glm::vec3(0.0f)) {
                    const float v[3] = {t.translation.x, t.translation.y, t.translation.z};
                    j.key("translation").floats(v, 3);
                }
                if (t.rotation.x != 0.0f || t.rotation.y != 0.0f || t.rotation.z != 0.0f || t.rotation.w != 1.0f) {
                    const float v[4] = {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w};
                    j.key("rotation").floats(v, 4);
                }
                if (t.scale != glm::vec3(1.0f)) {
                    const float v[3] = {t.scale.x, t.scale.y, t.scale.z};
                    j.key("scale").floats(v, 3);
                }
            }
            if (n.mesh != none) j.key("mesh").number(n.mesh);
            if (n.skin != none) j.key("skin").number(n.skin);
            j.end_object();
        }
        j.end_array();
    }
    const auto raw_array = [&](const char* name, const std::vector<std::string>& items) {
        if (items.empty()) return;
        j.key(name).begin_array();
        for (const std::string& s : items) j.raw(s);
        j.end_array();
    };
    raw_array("meshes", meshes_json_);
    raw_array("skins", skins_json_);
    raw_array("materials", materials_json_);
    if (!images_.empty()) {
        j.key("textures").begin_array();
        for (std::size_t i = 0; i < images_.size(); ++i) j.begin_object().key("source").number(i).end_object();
        j.end_array();
        j.key("images").begin_array();
        for (const image_record& r : images_) {
            j.begin_object();
            if (r.view == none) j.key("uri").string(r.uri);
            else j.key("bufferView").number(r.view).key("mimeType").string(r.mime_type);
            j.end_object();
        }
        j.end_array();
    }
    raw_array("animations", animations_json_);
    if (!accessors_.empty()) {
        j.key("accessors").begin_array();
        for (const accessor_record& r : accessors_) {
            j.begin_object();
            j.key("bufferView").number(r.view);
            j.key("componentType").number(std::size_t{r.component_type});
            j.key("count").number(r.count);
            j.key("type").string(r.type);
            if (!r.min.empty()) {
                j.key("min").begin_array();
                for (const float v : r.min) j.exact(v);
                j.end_array();
                j.key("max").begin_array();
                for (const float v : r.max) j.exact(v);
                j.end_array();
            }
            j.end_object();
        }
        j.end_array();
        j.key("bufferViews").begin_array();
        for (const view_record& v : views_) {
            j.begin_object().key("buffer").number(std::size_t{0});
            if (v.offset) j.key("byteOffset").number(v.offset);
            j.key("byteLength").number(v.length);
            if (v.target) j.key("target").number(std::size_t{v.target});
            j.end_object();
        }
        j.end_array();
        while (bin.size() % 4) bin.push_back(0);
        j.key("buffers").begin_array().begin_object();
        j.key("byteLength").number(bin.size());
        if (format == container::gltf) {
            j.key("uri").string(uri_segment(bin_uri));
        }
        j.end_object().end_array();
    }
    j.end_object();
}

status writer::run(std::string_view bin_uri, container format) {
    if (!a_.skeleton) return error{errc::invalid_argument, "gltf::write: the asset has no skeleton", error::no_index};
    for (std::size_t i = 0; i < a_.meshes.size(); ++i)
        if (!a_.meshes[i]) return error{errc::invalid_argument, "gltf::write: mesh " + std::to_string(i) + " is null", i};
    for (std::size_t i = 0; i < a_.clips.size(); ++i)
        if (!a_.clips[i]) return error{errc::invalid_argument, "gltf::write: clip " + std::to_string(i) + " is null", i};
    size_ = model_size();
    report.model_size = size_;
    status st;
    if (!(st = add_nodes())) return st;
    for (std::size_t i = 0; i < a_.meshes.size(); ++i)
        if (!(st = add_mesh(i))) return st;
    for (std::size_t i = 0; i < a_.clips.size(); ++i)
        if (!(st = add_clip(i))) return st;
    write_json(bin_uri, format);
    report.nodes = nodes_.size();
    report.meshes = meshes_json_.size();
    report.skins = skins_json_.size();
    report.materials = materials_json_.size();
    report.images = images_.size();
    report.animations = animations_json_.size();
    return {};
}

void append_u32(std::vector<unsigned char>& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

} // namespace

result<write_report> write_memory(const asset& a, container format, std::vector<unsigned char>& out,
                                  std::vector<unsigned char>& bin, const write_options& options,
                                  std::string_view bin_uri) {
    writer w(a, options);
    if (status st = w.run(bin_uri, format); !st) return st.error();
    out.clear();
    bin.clear();
    std::string text = w.json.str();
    if (format == container::gltf) {
        out.assign(text.begin(), text.end());
        bin = std::move(w.bin);
        return std::move(w.report);
    }
    // GLB: header, the JSON chunk padded with spaces, the BIN chunk padded with zeros.
    while (text.size() % 4) text += ' ';
    const bool has_bin = !w.bin.empty();
    const std::size_t total = 12 + 8 + text.size() + (has_bin ? 8 + w.bin.size() : 0);
    if (total > 0xffffffffu)
        return error{errc::unsupported, "gltf::write: the GLB would be " + std::to_string(total) +
                                            " bytes; a GLB holds at most 4 GB", error::no_index};
    out.reserve(total);
    append_u32(out, 0x46546C67u);
    append_u32(out, 2);
    append_u32(out, static_cast<std::uint32_t>(total));
    append_u32(out, static_cast<std::uint32_t>(text.size()));
    append_u32(out, 0x4E4F534Au);
    out.insert(out.end(), text.begin(), text.end());
    if (has_bin) {
        append_u32(out, static_cast<std::uint32_t>(w.bin.size()));
        append_u32(out, 0x004E4942u);
        out.insert(out.end(), w.bin.begin(), w.bin.end());
    }
    return std::move(w.report);
}

result<write_report> write(const std::string& path, const asset& a, container format, const write_options& options) {
    std::string bin_path;
    std::string bin_name;
    if (format == container::gltf) {
        const std::size_t slash = path.find_last_of("/\\");
        const std::size_t dot = path.rfind('.');
        const std::size_t stem_end = dot != std::string::npos && (slash == std::string::npos || dot > slash) ? dot : path.size();
        bin_path = path.substr(0, stem_end) + ".bin";
        bin_name = bin_path.substr(slash == std::string::npos ? 0 : slash + 1);
    }
    std::vector<unsigned char> out, bin;
    result<write_report> r = write_memory(a, format, out, bin, options, bin_name);
    if (!r) return r;
    const auto save = [&](const std::string& file, const std::vector<unsigned char>& bytes) -> status {
        std::ofstream f(file, std::ios::binary | std::ios::trunc);
        if (f) f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        if (!f || !f.flush()) return error{errc::io_error, file + ": cannot write the file", error::no_index};
        return {};
    };
    if (status st = save(path, out); !st) return st.error();
    if (format == container::gltf && !bin.empty())
        if (status st = save(bin_path, bin); !st) return st.error();
    return r;
}

} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace gltf
} // namespace keyblend
