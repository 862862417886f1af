// Test helpers for glTF: a builder that writes explicit glTF files (JSON text + one binary buffer,
// as .gltf with a data: URI, as .gltf with an external .bin, or as .glb), and an evaluator of
// glTF files written from the glTF 2.0 specification alone, in double precision (accessors, node
// transforms, the three interpolations, morphing and skinning), which the loader's results are
// compared with.
#pragma once

#include <keyblend/math.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kbtest {

using ojson = nlohmann::ordered_json;

enum gl_type : unsigned {
    gl_byte = 5120,
    gl_unsigned_byte = 5121,
    gl_short = 5122,
    gl_unsigned_short = 5123,
    gl_unsigned_int = 5125,
    gl_float = 5126,
};

inline unsigned gl_size(unsigned type) {
    return type == gl_byte || type == gl_unsigned_byte ? 1 : type == gl_short || type == gl_unsigned_short ? 2 : 4;
}

inline unsigned type_components(const std::string& type) {
    static const std::map<std::string, unsigned> n = {{"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4},
                                                      {"MAT2", 4},   {"MAT3", 9}, {"MAT4", 16}};
    return n.at(type);
}

inline std::string base64_encode(const std::vector<unsigned char>& bytes) {
    static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const unsigned v = unsigned(bytes[i]) << 16 | unsigned(bytes[i + 1]) << 8 | bytes[i + 2];
        out += a[v >> 18 & 63], out += a[v >> 12 & 63], out += a[v >> 6 & 63], out += a[v & 63];
    }
    if (i + 1 == bytes.size()) {
        const unsigned v = unsigned(bytes[i]) << 16;
        out += a[v >> 18 & 63], out += a[v >> 12 & 63], out += "==";
    } else if (i + 2 == bytes.size()) {
        const unsigned v = unsigned(bytes[i]) << 16 | unsigned(bytes[i + 1]) << 8;
        out += a[v >> 18 & 63], out += a[v >> 12 & 63], out += a[v >> 6 & 63], out += '=';
    }
    return out;
}

/// Writes a glTF file piece by piece: every accessor, view and node explicit.
struct gltf_builder {
    ojson doc;
    std::vector<unsigned char> bin;

    gltf_builder() { doc["asset"] = {{"version", "2.0"}}; }

    /// Appends `value` to the top-level array `name`; returns its index.
    std::size_t add(const char* name, ojson value) {
        doc[name].push_back(std::move(value));
        return doc[name].size() - 1;
    }
    /// Appends bytes to the buffer (4-byte aligned) and a view of them; returns the view index.
    std::size_t add_view(const std::vector<unsigned char>& bytes, std::size_t stride = 0) {
        while (bin.size() % 4) bin.push_back(0);
        ojson v = {{"buffer", 0}, {"byteOffset", bin.size()}, {"byteLength", bytes.size()}};
        if (stride) v["byteStride"] = stride;
        bin.insert(bin.end(), bytes.begin(), bytes.end());
        return add("bufferViews", v);
    }
    /// Values (count * components) encoded as `component_type` (integers: their values; floats:
    /// IEEE), each element padded to `stride` bytes when stride is not 0, matrix columns padded to
    /// 4 bytes as glTF lays them out.
    template <class T>
    static std::vector<unsigned char> encode(const std::vector<T>& values, unsigned component_type, const std::string& type,
                                             std::size_t stride = 0) {
        const unsigned n = type_components(type), size = gl_size(component_type);
        const unsigned rows = type == "MAT2" ? 2 : type == "MAT3" ? 3 : type == "MAT4" ? 4 : n;
        const std::size_t column = (type.rfind("MAT", 0) == 0) ? (rows * size + 3) / 4 * 4 : std::size_t(n) * size;
        const std::size_t element = column * (n / rows);
        const std::size_t step = stride ? stride : element;
        const std::size_t count = values.size() / n;
        std::vector<unsigned char> out(count ? (count - 1) * step + element : 0, 0xCD);
        for (std::size_t e = 0; e < count; ++e)
            for (unsigned c = 0; c < n; ++c) {
                unsigned char* p = out.data() + e * step + (c / rows) * column + (c % rows) * size;
                const T v = values[e * n + c];
                switch (component_type) {
                case gl_float: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
                case gl_byte: { const auto b = static_cast<std::int8_t>(v); std::memcpy(p, &b, 1); break; }
                case gl_unsigned_byte: { const auto b = static_cast<std::uint8_t>(v); std::memcpy(p, &b, 1); break; }
                case gl_short: { const auto b = static_cast<std::int16_t>(v); std::memcpy(p, &b, 2); break; }
                case gl_unsigned_short: { const auto b = static_cast<std::uint16_t>(v); std::memcpy(p, &b, 2); break; }
                default: { const auto b = static_cast<std::uint32_t>(v); std::memcpy(p, &b, 4); break; }
                }
                (void)rows;
            }
        return out;
    }
    /// An accessor over a new view of `values`.
    template <class T>
    std::size_t add_accessor(const std::vector<T>& values, unsigned component_type, const std::string& type,
                             bool normalized = false, std::size_t stride = 0) {
        const std::size_t view = add_view(encode(values, component_type, type, stride), stride);
        ojson a = {{"bufferView", view}, {"componentType", component_type}, {"count", values.size() / type_components(type)},
                   {"type", type}};
        if (normalized) a["normalized"] = true;
        bounds(a, values, type_components(type), component_type);
        return add("accessors", a);
    }
    /// min and max per component, as the validator requires for positions and key times.
    template <class T>
    static void bounds(ojson& a, const std::vector<T>& values, unsigned n, unsigned component_type) {
        if (values.empty()) return;
        ojson lo = ojson::array(), hi = ojson::array();
        for (unsigned c = 0; c < n; ++c) {
            double l = 1e300, h = -1e300;
            for (std::size_t e = c; e < values.size(); e += n) {
                const double v = component_type == gl_float ? double(static_cast<float>(values[e])) : double(values[e]);
                l = std::min(l, v), h = std::max(h, v);
            }
            lo.push_back(l), hi.push_back(h);
        }
        a["min"] = lo, a["max"] = hi;
    }
    std::size_t floats(const std::vector<float>& values, const std::string& type) {
        return add_accessor(values, gl_float, type);
    }
    /// A sparse accessor: `count` elements of `base` (an accessor-less zero array when base is
    /// empty) with the elements at `indices` replaced by `values`.
    std::size_t sparse(const std::vector<float>& base, std::size_t count, const std::string& type,
                       const std::vector<std::uint32_t>& indices, unsigned index_type, const std::vector<float>& values) {
        ojson a = {{"componentType", gl_float}, {"count", count}, {"type", type}};
        if (!base.empty()) a["bufferView"] = add_view(encode(base, gl_float, type));
        std::vector<float> all = base.empty() ? std::vector<float>(count * type_components(type), 0.0f) : base;
        for (std::size_t k = 0; k < indices.size(); ++k)
            for (unsigned c = 0; c < type_components(type); ++c)
                all[indices[k] * type_components(type) + c] = values[k * type_components(type) + c];
        bounds(a, all, type_components(type), gl_float);
        a["sparse"] = {{"count", indices.size()},
                       {"indices", {{"bufferView", add_view(encode(indices, index_type, "SCALAR"))}, {"componentType", index_type}}},
                       {"values", {{"bufferView", add_view(encode(values, gl_float, type))}}}};
        return add("accessors", a);
    }

    /// The buffer entry (for .gltf: a data: URI, or `uri` given; for .glb: none).
    void set_buffer(const std::string& uri) {
        while (bin.size() % 4) bin.push_back(0);
        ojson b = {{"byteLength", bin.size()}};
        if (!uri.empty()) b["uri"] = uri;
        doc["buffers"] = ojson::array({b});
    }
    /// The file as .gltf text with the buffer embedded as a base64 data: URI.
    std::string gltf_text() {
        if (!bin.empty()) set_buffer("data:application/octet-stream;base64," + base64_encode(bin));
        return doc.dump();
    }
    /// The file as .glb bytes (the buffer as its binary chunk).
    std::vector<unsigned char> glb() {
        if (!bin.empty()) set_buffer("");
        std::string json = doc.dump();
        while (json.size() % 4) json += ' ';
        std::vector<unsigned char> out;
        const auto u32 = [&](std::uint32_t v) {
            for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
        };
        const std::size_t total = 12 + 8 + json.size() + (bin.empty() ? 0 : 8 + bin.size());
        u32(0x46546C67u), u32(2), u32(static_cast<std::uint32_t>(total));
        u32(static_cast<std::uint32_t>(json.size())), u32(0x4E4F534Au);
        out.insert(out.end(), json.begin(), json.end());
        if (!bin.empty()) {
            u32(static_cast<std::uint32_t>(bin.size())), u32(0x004E4942u);
            out.insert(out.end(), bin.begin(), bin.end());
        }
        return out;
    }
};

/// A glTF file read and evaluated from the specification alone, in double precision.
struct spec_gltf {
    ojson doc;
    std::vector<std::vector<unsigned char>> buffers;

    spec_gltf(const std::vector<unsigned char>& bytes, const std::string& directory = "") {
        const auto u32 = [&](std::size_t at) {
            return std::uint32_t(bytes[at]) | std::uint32_t(bytes[at + 1]) << 8 | std::uint32_t(bytes[at + 2]) << 16 |
                   std::uint32_t(bytes[at + 3]) << 24;
        };
        std::vector<unsigned char> chunk;
        if (bytes.size() >= 12 && u32(0) == 0x46546C67u) {
            const std::size_t json_length = u32(12);
            doc = ojson::parse(bytes.begin() + 20, bytes.begin() + 20 + std::ptrdiff_t(json_length));
            const std::size_t at = 20 + json_length;
            if (at + 8 <= bytes.size()) chunk.assign(bytes.begin() + std::ptrdiff_t(at + 8), bytes.begin() + std::ptrdiff_t(at + 8 + u32(at)));
        } else {
            doc = ojson::parse(bytes.begin(), bytes.end());
        }
        for (const auto& b : doc.value("buffers", ojson::array())) {
            if (!b.contains("uri")) {
                buffers.push_back(chunk);
                continue;
            }
            const std::string uri = b["uri"];
            if (uri.rfind("data:", 0) == 0) {
                buffers.push_back(base64_decode(uri.substr(uri.find(',') + 1)));
            } else {
                std::string path = directory + "/";
                for (std::size_t i = 0; i < uri.size(); ++i) // (percent-decoding)
                    if (uri[i] == '%' && i + 2 < uri.size()) path += char(std::stoi(uri.substr(i + 1, 2), nullptr, 16)), i += 2;
                    else path += uri[i];
                std::ifstream in(path, std::ios::binary);
                buffers.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
            }
        }
    }
    static std::vector<unsigned char> base64_decode(const std::string& text) {
        std::vector<unsigned char> out;
        unsigned bits = 0, value = 0;
        for (char ch : text) {
            int d;
            if (ch >= 'A' && ch <= 'Z') d = ch - 'A';
            else if (ch >= 'a' && ch <= 'z') d = ch - 'a' + 26;
            else if (ch >= '0' && ch <= '9') d = ch - '0' + 52;
            else if (ch == '+') d = 62;
            else if (ch == '/') d = 63;
            else continue;
            value = (value << 6) | unsigned(d);
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                out.push_back(static_cast<unsigned char>((value >> bits) & 0xff));
            }
        }
        return out;
    }

    /// One component as the specification converts it (normalized integers: c / 255,
    /// max(c / 127, -1), c / 65535, max(c / 32767, -1)).
    static double component(const unsigned char* p, unsigned type, bool normalized) {
        switch (type) {
        case gl_float: { float f; std::memcpy(&f, p, 4); return f; }
        case gl_byte: { std::int8_t v; std::memcpy(&v, p, 1); return normalized ? std::max(v / 127.0, -1.0) : v; }
        case gl_unsigned_byte: return normalized ? p[0] / 255.0 : p[0];
        case gl_short: { std::int16_t v; std::memcpy(&v, p, 2); return normalized ? std::max(v / 32767.0, -1.0) : v; }
        case gl_unsigned_short: { std::uint16_t v; std::memcpy(&v, p, 2); return normalized ? v / 65535.0 : v; }
        default: { std::uint32_t v; std::memcpy(&v, p, 4); return v; }
        }
    }
    /// Accessor i: count * components doubles (buffer view with byteStride, matrix column
    /// padding, sparse substitution; zeros without a buffer view). Read once, then cached.
    const std::vector<double>& accessor(std::size_t i) const {
        auto found = cache.find(i);
        if (found == cache.end()) found = cache.emplace(i, read_accessor(i)).first;
        return found->second;
    }
    mutable std::map<std::size_t, std::vector<double>> cache;

    std::vector<double> read_accessor(std::size_t i) const {
        const ojson& a = doc["accessors"][i];
        const std::string type = a["type"];
        const unsigned n = type_components(type), ct = a["componentType"], size = gl_size(ct);
        const unsigned rows = type == "MAT2" ? 2 : type == "MAT3" ? 3 : type == "MAT4" ? 4 : n;
        const std::size_t column = type.rfind("MAT", 0) == 0 ? (rows * size + 3) / 4 * 4 : std::size_t(n) * size;
        const std::size_t element = column * (n / rows);
        const std::size_t count = a["count"];
        const bool normalized = a.value("normalized", false);
        std::vector<double> out(count * n, 0.0);
        const auto read = [&](const unsigned char* base, std::size_t e, double* to) {
            for (unsigned c = 0; c < n; ++c) to[c] = component(base + (c / rows) * column + (c % rows) * size, ct, normalized);
            (void)e;
        };
        if (a.contains("bufferView")) {
            const ojson& v = doc["bufferViews"][a["bufferView"].get<std::size_t>()];
            const std::size_t stride = v.value("byteStride", element);
            const unsigned char* base = buffers[v["buffer"]].data() + v.value("byteOffset", std::size_t{0}) +
                                        a.value("byteOffset", std::size_t{0});
            for (std::size_t e = 0; e < count; ++e) read(base + e * stride, e, out.data() + e * n);
        }
        if (a.contains("sparse")) {
            const ojson& s = a["sparse"];
            const ojson& iv = doc["bufferViews"][s["indices"]["bufferView"].get<std::size_t>()];
            const ojson& vv = doc["bufferViews"][s["values"]["bufferView"].get<std::size_t>()];
            const unsigned it = s["indices"]["componentType"];
            const unsigned char* ib = buffers[iv["buffer"]].data() + iv.value("byteOffset", std::size_t{0}) +
                                      s["indices"].value("byteOffset", std::size_t{0});
            const unsigned char* vb = buffers[vv["buffer"]].data() + vv.value("byteOffset", std::size_t{0}) +
                                      s["values"].value("byteOffset", std::size_t{0});
            for (std::size_t k = 0; k < s["count"].get<std::size_t>(); ++k) {
                const auto index = static_cast<std::size_t>(component(ib + k * gl_size(it), it, false));
                read(vb + k * element, index, out.data() + index * n);
            }
        }
        return out;
    }

    struct node_state {
        glm::dvec3 translation{0.0}, scale{1.0};
        glm::dquat rotation{1.0, 0.0, 0.0, 0.0};
        bool has_matrix = false;
        glm::dmat4 matrix{1.0};
        std::vector<double> weights;
        glm::dmat4 local() const {
            if (has_matrix) return matrix;
            return glm::translate(glm::dmat4(1.0), translation) * glm::mat4_cast(rotation) * glm::scale(glm::dmat4(1.0), scale);
        }
    };

    std::size_t target_count(std::size_t mesh) const {
        const ojson& p = doc["meshes"][mesh]["primitives"][0];
        return p.contains("targets") ? p["targets"].size() : 0;
    }

    /// Every node's rest state: TRS or matrix, and default weights (node, else mesh, else 0).
    std::vector<node_state> rest() const {
        std::vector<node_state> s;
        for (const ojson& n : doc.value("nodes", ojson::array())) {
            node_state st;
            if (n.contains("matrix")) {
                st.has_matrix = true;
                for (int e = 0; e < 16; ++e) st.matrix[e / 4][e % 4] = n["matrix"][std::size_t(e)].get<double>();
            }
            if (n.contains("translation")) st.translation = {n["translation"][0], n["translation"][1], n["translation"][2]};
            if (n.contains("scale")) st.scale = {n["scale"][0], n["scale"][1], n["scale"][2]};
            if (n.contains("rotation")) // (a rotation: a unit quaternion, as the specification requires)
                st.rotation = glm::normalize(glm::dquat(n["rotation"][3].get<double>(), n["rotation"][0].get<double>(),
                                                        n["rotation"][1].get<double>(), n["rotation"][2].get<double>()));
            if (n.contains("mesh")) {
                const std::size_t m = n["mesh"];
                st.weights.assign(target_count(m), 0.0);
                const ojson* w = n.contains("weights") ? &n["weights"]
                                 : doc["meshes"][m].contains("weights") ? &doc["meshes"][m]["weights"] : nullptr;
                if (w)
                    for (std::size_t i = 0; i < st.weights.size(); ++i) st.weights[i] = (*w)[i].get<double>();
            }
            s.push_back(st);
        }
        return s;
    }

    static glm::dquat slerp(glm::dquat a, glm::dquat b, double t) {
        // The specification's slerp: the short path (b negated when a . b < 0).
        double d = glm::dot(a, b);
        if (d < 0) b = -b, d = -d;
        if (d > 1.0 - 1e-12) return glm::normalize(a * (1.0 - t) + b * t);
        const double angle = std::acos(d);
        return (a * std::sin((1.0 - t) * angle) + b * std::sin(t * angle)) / std::sin(angle);
    }

    /// Sampler `s` of animation `a` at time t: `n` doubles (per target for weights).
    std::vector<double> sample(const ojson& a, std::size_t s, double t, std::size_t n, bool rotation) const {
        const ojson& sampler = a["samplers"][s];
        const std::vector<double>& times = accessor(sampler["input"]);
        const std::vector<double>& out = accessor(sampler["output"]);
        const std::string mode = sampler.value("interpolation", "LINEAR");
        const bool cubic = mode == "CUBICSPLINE";
        const auto value = [&](std::size_t k, std::size_t part) {
            const std::size_t e = cubic ? 3 * k + part : k;
            std::vector<double> v(out.begin() + std::ptrdiff_t(e * n), out.begin() + std::ptrdiff_t(e * n + n));
            if (rotation && part == 1) { // a key's rotation: a unit quaternion, as the specification requires
                double l = 0;
                for (double x : v) l += x * x;
                for (double& x : v) x /= std::sqrt(l);
            }
            return v;
        };
        const std::size_t keys = times.size();
        std::size_t k = 0;
        while (k + 1 < keys && times[k + 1] <= t) ++k; // the last key whose time <= t
        if (t < times[0]) return value(0, 1);
        if (k + 1 >= keys || mode == "STEP") return value(k, 1);
        const double t0 = times[k], t1 = times[k + 1], td = t1 - t0, u = (t - t0) / td;
        std::vector<double> r(n);
        if (cubic) {
            const std::vector<double> v0 = value(k, 1), b0 = value(k, 2), v1 = value(k + 1, 1), a1 = value(k + 1, 0);
            const double u2 = u * u, u3 = u2 * u;
            for (std::size_t c = 0; c < n; ++c)
                r[c] = (2 * u3 - 3 * u2 + 1) * v0[c] + td * (u3 - 2 * u2 + u) * b0[c] + (-2 * u3 + 3 * u2) * v1[c] +
                       td * (u3 - u2) * a1[c];
            if (rotation) {
                double l = 0;
                for (double x : r) l += x * x;
                for (double& x : r) x /= std::sqrt(l);
            }
            return r;
        }
        const std::vector<double> v0 = value(k, 1), v1 = value(k + 1, 1);
        if (rotation) {
            const glm::dquat q = slerp(glm::dquat(v0[3], v0[0], v0[1], v0[2]), glm::dquat(v1[3], v1[0], v1[1], v1[2]), u);
            return {q.x, q.y, q.z, q.w};
        }
        for (std::size_t c = 0; c < n; ++c) r[c] = v0[c] + (v1[c] - v0[c]) * u;
        return r;
    }

    /// Every node's state at time t of animation `index`.
    std::vector<node_state> pose(std::size_t index, double t) const {
        std::vector<node_state> s = rest();
        const ojson& a = doc["animations"][index];
        for (const ojson& ch : a["channels"]) {
            const std::size_t node = ch["target"]["node"];
            const std::string path = ch["target"]["path"];
            const std::size_t sampler = ch["sampler"];
            node_state& st = s[node];
            if (path == "translation") {
                const auto v = sample(a, sampler, t, 3, false);
                st.translation = {v[0], v[1], v[2]};
            } else if (path == "scale") {
                const auto v = sample(a, sampler, t, 3, false);
                st.scale = {v[0], v[1], v[2]};
            } else if (path == "rotation") {
                const auto v = sample(a, sampler, t, 4, true);
                st.rotation = glm::dquat(v[3], v[0], v[1], v[2]);
            } else if (path == "weights") {
                st.weights = sample(a, sampler, t, st.weights.size(), false);
            }
        }
        return s;
    }

    /// Global transforms: parent * local down the children lists.
    std::vector<glm::dmat4> global(const std::vector<node_state>& s) const {
        const std::size_t n = s.size();
        std::vector<std::size_t> parent(n, std::size_t(-1));
        for (std::size_t i = 0; i < n; ++i)
            for (const auto& c : doc["nodes"][i].value("children", ojson::array())) parent[c.get<std::size_t>()] = i;
        std::vector<glm::dmat4> g(n);
        std::vector<bool> done(n, false);
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<std::size_t> chain;
            for (std::size_t j = i; j != std::size_t(-1) && !done[j]; j = parent[j]) chain.push_back(j);
            for (std::size_t k = chain.size(); k-- > 0;) {
                const std::size_t j = chain[k];
                g[j] = (parent[j] == std::size_t(-1) ? glm::dmat4(1.0) : g[parent[j]]) * s[j].local();
                done[j] = true;
            }
        }
        return g;
    }

    /// The vertices of primitive p of node `node`'s mesh: morphed by the node's weights, then
    /// skinned (sum of w_i * global(joint_i) * inverseBind_i, the node's own transform ignored) or
    /// placed by the node's global transform.
    std::vector<glm::dvec3> vertices(std::size_t node, std::size_t p, const std::vector<node_state>& s,
                                     const std::vector<glm::dmat4>& g) const {
        const ojson& n = doc["nodes"][node];
        const ojson& prim = doc["meshes"][n["mesh"].get<std::size_t>()]["primitives"][p];
        const std::vector<double> pos = accessor(prim["attributes"]["POSITION"]);
        std::vector<glm::dvec3> out(pos.size() / 3);
        for (std::size_t v = 0; v < out.size(); ++v) out[v] = {pos[3 * v], pos[3 * v + 1], pos[3 * v + 2]};
        if (prim.contains("targets"))
            for (std::size_t t = 0; t < prim["targets"].size(); ++t) {
                if (!prim["targets"][t].contains("POSITION")) continue;
                const std::vector<double>& d = accessor(prim["targets"][t]["POSITION"]);
                for (std::size_t v = 0; v < out.size(); ++v)
                    out[v] += s[node].weights[t] * glm::dvec3(d[3 * v], d[3 * v + 1], d[3 * v + 2]);
            }
        if (!n.contains("skin")) {
            for (glm::dvec3& v : out) v = glm::dvec3(g[node] * glm::dvec4(v, 1.0));
            return out;
        }
        const ojson& skin = doc["skins"][n["skin"].get<std::size_t>()];
        std::vector<double> ibm;
        if (skin.contains("inverseBindMatrices")) ibm = accessor(skin["inverseBindMatrices"]);
        std::vector<glm::dmat4> joint_matrix;
        for (std::size_t j = 0; j < skin["joints"].size(); ++j) {
            glm::dmat4 inverse_bind(1.0);
            if (!ibm.empty())
                for (int e = 0; e < 16; ++e) inverse_bind[e / 4][e % 4] = ibm[16 * j + std::size_t(e)];
            joint_matrix.push_back(g[skin["joints"][j].get<std::size_t>()] * inverse_bind);
        }
        std::vector<glm::dvec4> skinned(out.size(), glm::dvec4(0.0));
        for (unsigned set = 0; prim["attributes"].contains("JOINTS_" + std::to_string(set)); ++set) {
            const std::vector<double>& joints = accessor(prim["attributes"]["JOINTS_" + std::to_string(set)]);
            const std::vector<double>& weights = accessor(prim["attributes"]["WEIGHTS_" + std::to_string(set)]);
            for (std::size_t v = 0; v < out.size(); ++v)
                for (std::size_t i = 0; i < 4; ++i)
                    if (weights[4 * v + i] != 0.0)
                        skinned[v] += weights[4 * v + i] *
                                      (joint_matrix[std::size_t(joints[4 * v + i])] * glm::dvec4(out[v], 1.0));
        }
        for (std::size_t v = 0; v < out.size(); ++v) out[v] = glm::dvec3(skinned[v]);
        return out;
    }
};

} // namespace kbtest
