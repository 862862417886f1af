// keyblend — definitions for io/xfile.hpp. Included at the bottom of xfile.hpp; do not include
// directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "xfile_mszip.hpp"
#include "xfile_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

namespace keyblend {
namespace io {

inline const char* to_string(xfile_format f) {
    switch (f) {
    case xfile_format::text: return "txt";
    case xfile_format::binary: return "bin";
    case xfile_format::compressed_text: return "tzip";
    case xfile_format::compressed_binary: return "bzip";
    }
    return "unknown";
}

inline key_counts count_keys(const clip& c) {
    key_counts k;
    for (const channel& ch : c.channels) {
        k.rotation += ch.rotation.size();
        k.scale += ch.scale.size();
        k.position += ch.translation.size();
        k.matrix += ch.matrix.size();
    }
    return k;
}

namespace impl {

/// Turns a document into keyblend's types, resolving names. `located(offset, what)` formats a
/// message at a place in the file (the reader's format).
template <class Located>
class assembler {
public:
    assembler(document& doc, bool lenient, const Located& located)
        : doc_(doc), lenient_(lenient), located_(located) {}

    result<xfile> run(xfile out) {
        warnings_ = std::move(doc_.warnings);
        if (!build_skeleton(out.skeleton)) return failure_;
        out.meshes.reserve(doc_.meshes.size());
        for (mesh_record& r : doc_.meshes) {
            out.meshes.push_back(std::move(r.mesh));
            xfile_mesh& m = out.meshes.back();
            m.joint = r.frame == no_frame ? no_joint : out.skeleton.joint_of_source()[r.frame];
            if (!build_skin(r, out.skeleton, m)) return failure_;
        }
        out.animation_sets.reserve(doc_.sets.size());
        channel_of_joint_.assign(out.skeleton.size(), error::no_index);
        for (set_record& s : doc_.sets) {
            out.animation_sets.emplace_back();
            if (!build_set(s, out.skeleton, out.animation_sets.back())) return failure_;
        }
        if (warnings_.size() > max_warnings) return too_many();
        out.warnings = std::move(warnings_);
        return out;
    }

private:
    /// Strict: records the failure and returns false. Lenient: records a warning, returns true.
    bool problem(errc code, std::size_t offset, const std::string& what,
                 std::size_t index = error::no_index) {
        error e = keyblend::impl::make_error(code, located_(offset, what), index);
        if (!lenient_) {
            failure_ = std::move(e);
            return false;
        }
        if (warnings_.size() >= max_warnings) {
            failure_ = too_many();
            return false;
        }
        warnings_.push_back(std::move(e));
        return true;
    }

    /// A lossy but valid case, in either mode (counted against max_warnings at the end).
    void warn(errc code, std::size_t offset, const std::string& what) {
        warnings_.push_back(keyblend::impl::make_error(code, located_(offset, what)));
    }

    error too_many() const {
        return keyblend::impl::make_error(
            errc::parse_error,
            located_(0, "more than " + std::to_string(max_warnings) +
                            " problems; giving up (this is not a damaged .X file)"));
    }

    bool build_skeleton(skeleton& out) {
        const std::vector<frame_record>& frames = doc_.frames;
        std::vector<joint_desc> joints(frames.size());
        std::unordered_set<std::string_view> used;
        for (const frame_record& f : frames)
            if (!f.name.empty()) used.insert(f.name);
        std::vector<std::string> generated; // keeps the generated names alive for `used`
        generated.reserve(frames.size());
        for (std::size_t i = 0; i < frames.size(); ++i) {
            joints[i].parent = frames[i].parent;
            joints[i].bind_local = frames[i].bind;
            if (!frames[i].name.empty()) {
                joints[i].name = frames[i].name;
                continue;
            }
            const std::string base = "unnamed_frame_" + std::to_string(i);
            std::string name = base;
            for (unsigned k = 2; used.count(name); ++k) name = base + "_" + std::to_string(k);
            generated.push_back(name);
            used.insert(generated.back());
            joints[i].name = std::move(name);
        }
        result<skeleton> built = skeleton::from_parents(joints);
        if (!built && built.error().code == errc::duplicate && lenient_) {
            const error& e = built.error();
            warn(errc::duplicate, frames[e.index].offset,
                 "frame names repeat (" + e.message +
                     "); later frames are renamed name#2, name#3, ...");
            skeleton_options rename;
            rename.duplicates = duplicate_names::rename;
            built = skeleton::from_parents(joints, rename);
        }
        if (!built) {
            const error& e = built.error();
            const std::size_t at = e.index < frames.size() ? frames[e.index].offset : 0;
            failure_ = keyblend::impl::make_error(e.code, located_(at, e.message), e.index);
            return false;
        }
        out = std::move(*built);
        return true;
    }

    bool build_skin(const mesh_record& r, const skeleton& s, xfile_mesh& m) {
        mesh_skin& skin = m.skin;
        const std::size_t vertex_count = m.positions.size();
        const std::string mesh_label = "Mesh '" + m.name + "'";
        // Bones: SkinWeights whose frame exists.
        std::vector<const skin_record*> kept;
        std::vector<float> lost; // per vertex, weight of dropped bones
        for (const skin_record& w : r.skins) {
            const std::size_t joint = s.index_of(w.frame);
            if (joint < s.size()) {
                if (kept.size() == std::numeric_limits<std::uint16_t>::max() + std::size_t{1}) {
                    failure_ = keyblend::impl::make_error(
                        errc::unsupported,
                        located_(w.offset, mesh_label + " has more than 65536 bones"));
                    return false;
                }
                kept.push_back(&w);
                skin.bones.push_back({w.frame, joint, w.offset_matrix});
                continue;
            }
            if (!problem(errc::not_found, w.offset,
                         mesh_label + ": SkinWeights names frame '" + w.frame +
                             "', which does not exist" +
                             (lenient_ ? "; the bone is dropped with its " +
                                             std::to_string(w.vertices.size()) + " weights"
                                       : std::string())))
                return false;
            lost.resize(vertex_count, 0.0f);
            for (std::size_t i = 0; i < w.vertices.size(); ++i) lost[w.vertices[i]] += w.weights[i];
        }
        if (kept.empty()) return true;

        // Influences grouped by vertex (counting sort), then the fixed-width layout. A weight of 0
        // changes nothing in a linear blend: it takes no slot.
        struct influence {
            float weight;
            std::uint16_t bone;
        };
        std::vector<std::size_t> first(vertex_count + 1, 0);
        for (const skin_record* w : kept)
            for (std::size_t i = 0; i < w->vertices.size(); ++i)
                first[w->vertices[i] + 1] += w->weights[i] != 0.0f;
        std::size_t widest = 0;
        for (std::size_t v = 0; v < vertex_count; ++v) {
            widest = std::max(widest, first[v + 1]);
            first[v + 1] += first[v];
        }
        std::vector<influence> all(first[vertex_count]);
        {
            std::vector<std::size_t> next(first.begin(), first.end() - 1);
            for (std::size_t b = 0; b < kept.size(); ++b)
                for (std::size_t i = 0; i < kept[b]->vertices.size(); ++i)
                    if (kept[b]->weights[i] != 0.0f)
                        all[next[kept[b]->vertices[i]]++] = {kept[b]->weights[i],
                                                             static_cast<std::uint16_t>(b)};
        }
        const std::size_t k = std::min(widest, max_influences_per_vertex);
        skin.influences_per_vertex = k;
        skin.bone_indices.assign(vertex_count * k, 0);
        skin.weights.assign(vertex_count * k, 0.0f);
        std::size_t too_many = 0, without = 0;
        for (std::size_t v = 0; v < vertex_count; ++v) {
            influence* begin = all.data() + first[v];
            influence* end = all.data() + first[v + 1];
            // Insertion sort, by decreasing weight, keeping SkinWeights order among equal weights.
            for (influence* i = begin + (begin != end); i < end; ++i)
                for (influence* j = i; j > begin && j[-1].weight < j[0].weight; --j)
                    std::swap(j[-1], j[0]);
            const std::size_t n = static_cast<std::size_t>(end - begin);
            const std::size_t used = std::min(n, k);
            const bool lost_some = !lost.empty() && lost[v] != 0.0f;
            double total = lost_some ? lost[v] : 0.0, kept_sum = 0.0;
            for (std::size_t i = 0; i < n; ++i) (i < used ? kept_sum : total) += begin[i].weight;
            total += kept_sum;
            float scale = 1.0f;
            if ((n > k || lost_some) && kept_sum != 0.0)
                scale = static_cast<float>(total / kept_sum);
            too_many += n > k;
            without += used == 0;
            for (std::size_t i = 0; i < used; ++i) {
                skin.bone_indices[v * k + i] = begin[i].bone;
                skin.weights[v * k + i] = begin[i].weight * scale;
            }
        }
        if (too_many > 0)
            warn(errc::unsupported, r.offset,
                 mesh_label + ": " + std::to_string(too_many) + " vertices have more than " +
                     std::to_string(max_influences_per_vertex) +
                     " influences; the largest are kept, rescaled to the same sum");
        if (without > 0)
            warn(errc::empty, r.offset,
                 mesh_label + ": " + std::to_string(without) +
                     " vertices have no bone influence (all weights 0: they skin to the origin)");
        return true;
    }

    /// The joint an Animation's reference names: by name, or by GUID when it gives none; sk.size()
    /// when there is no such frame.
    std::size_t find_frame(const animation_record& a, const skeleton& sk) const {
        if (!a.target.empty() || a.target_guid.empty()) return sk.index_of(a.target);
        for (std::size_t f = 0; f < doc_.frames.size(); ++f)
            if (doc_.frames[f].guid == a.target_guid) return sk.joint_of_source()[f];
        return sk.size();
    }

    bool build_set(set_record& s, const skeleton& sk, xfile_animation_set& out) {
        clip& c = out.clip;
        c.name = s.name;
        if (doc_.ticks.empty()) {
            c.ticks_per_second = default_ticks_per_second;
            c.ticks_per_second_is_default = true;
        } else {
            const std::size_t t = s.ticks_objects_before > 0 ? s.ticks_objects_before - 1 : 0;
            c.ticks_per_second = static_cast<float>(doc_.ticks[t].value);
        }
        const std::string set_label = "AnimationSet '" + s.name + "'";
        std::vector<std::size_t> offsets;
        // Which channel animates each joint: all no_index between sets (a failure ends the load).
        std::vector<std::size_t>& channel_of_joint = channel_of_joint_;
        for (animation_record& a : s.animations) {
            const std::string label = set_label + ", Animation '" + a.name + "'";
            if (!a.has_target) {
                if (!problem(errc::invalid_argument, a.offset,
                             label + " has no { Frame } reference" + (lenient_ ? "; dropped" : "")))
                    return false;
                continue;
            }
            const std::size_t joint = find_frame(a, sk);
            const std::string target =
                a.target.empty() ? "<" + a.target_guid + ">" : "'" + a.target + "'";
            if (joint >= sk.size()) {
                if (!problem(errc::not_found, a.target_offset,
                             label + " animates frame " + target + ", which does not exist" +
                                 (lenient_ ? "; dropped" : "")))
                    return false;
                continue;
            }
            if (channel_of_joint[joint] != error::no_index) {
                if (!problem(errc::duplicate, a.offset,
                             label + " animates frame " + target +
                                 ", which an earlier Animation of the set animates" +
                                 (lenient_ ? "; dropped" : "")))
                    return false;
                continue;
            }
            channel_of_joint[joint] = c.channels.size();
            a.tracks.joint = joint;
            c.channels.push_back(std::move(a.tracks));
            out.animation_names.push_back(std::move(a.name));
            out.options.push_back(a.options);
            offsets.push_back(a.offset);
        }
        for (const channel& ch : c.channels) channel_of_joint[ch.joint] = error::no_index;
        c.duration = last_key_time(c);
        for (status st = validate_clip(c, sk); !st; st = validate_clip(c, sk)) {
            const error& e = st.error();
            if (e.index >= c.channels.size()) { // not about one channel: cannot be dropped
                failure_ = keyblend::impl::make_error(e.code, located_(s.offset, e.message));
                return false;
            }
            if (!problem(e.code, offsets[e.index],
                         e.message + (lenient_ ? "; the Animation is dropped" : std::string()),
                         e.index))
                return false;
            c.channels.erase(c.channels.begin() + static_cast<std::ptrdiff_t>(e.index));
            out.animation_names.erase(out.animation_names.begin() +
                                      static_cast<std::ptrdiff_t>(e.index));
            out.options.erase(out.options.begin() + static_cast<std::ptrdiff_t>(e.index));
            offsets.erase(offsets.begin() + static_cast<std::ptrdiff_t>(e.index));
            c.duration = last_key_time(c);
        }
        return true;
    }

    document& doc_;
    bool lenient_;
    const Located& located_;
    std::vector<error> warnings_;
    std::vector<std::size_t> channel_of_joint_; // per joint: the channel animating it in this set
    error failure_;
};

template <class Lexer>
result<xfile> read_and_assemble(Lexer& lex, xfile out, const xfile_options& options,
                                std::string_view source, std::vector<error> warnings) {
    document doc;
    doc.warnings = std::move(warnings);
    reader<Lexer> r(lex, options, source, doc);
    if (!r.run()) return r.failure();
    const auto located = [&r](std::size_t offset, std::string_view what) {
        return r.message(offset, what);
    };
    return assembler<decltype(located)>(doc, options.mode == parse_mode::lenient, located)
        .run(std::move(out));
}

} // namespace impl

inline result<xfile> load_xfile_memory(const void* data, std::size_t size,
                                       const xfile_options& options, std::string_view source_name) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    const std::string source(source_name);
    const auto at = [&](std::size_t offset, errc code, const std::string& what) {
        return keyblend::impl::make_error(code, source + ": byte offset " + std::to_string(offset) +
                                                    ": " + what);
    };
    if (size < 16 || bytes == nullptr || std::memcmp(bytes, "xof ", 4) != 0) {
        std::string found = "the end of the file";
        if (bytes != nullptr && size > 0) {
            found = "'";
            impl::append_excerpt(found,
                                 std::string_view(reinterpret_cast<const char*>(bytes),
                                                  std::min<std::size_t>(size, 16)),
                                 16);
            found += "'";
        }
        return at(0, errc::parse_error,
                  "expected the 16-byte .X header ('xof ', version 0302/0303, format "
                  "txt/bin/tzip/bzip, float size 0032/0064), found " +
                      found);
    }
    // The header's three fields, each one of a few four-letter words.
    const std::string_view header(reinterpret_cast<const char*>(bytes), 16);
    const auto field = [&](std::size_t offset, std::initializer_list<std::string_view> words) {
        int i = 0;
        for (std::string_view w : words) {
            if (header.substr(offset, 4) == w) return i;
            ++i;
        }
        return -1;
    };
    const int version = field(4, {"0302", "0303"});
    const int format = field(8, {"txt ", "bin ", "tzip", "bzip"});
    const int floats = field(12, {"0032", "0064"});
    const auto unsupported = [&](std::size_t offset, const char* name, const char* choices) {
        return at(offset, errc::unsupported,
                  std::string(name) + " '" + std::string(header.substr(offset, 4)) + "' (" +
                      choices + " expected)");
    };
    if (version < 0) return unsupported(4, "version", "0302 or 0303");
    if (format < 0) return unsupported(8, "format", "txt, bin, tzip or bzip");
    if (floats < 0) return unsupported(12, "float size", "0032 or 0064");
    xfile out;
    out.version = version == 0 ? 302 : 303;
    out.format = static_cast<xfile_format>(format); // in the enum's order
    out.float_bits = floats == 0 ? 32 : 64;

    const bool compressed = out.format == xfile_format::compressed_text ||
                            out.format == xfile_format::compressed_binary;
    const bool text =
        out.format == xfile_format::text || out.format == xfile_format::compressed_text;
    std::vector<char> inflated;
    std::vector<error> warnings;
    const unsigned char* doc = bytes;
    std::size_t doc_size = size;
    if (compressed) {
        const std::string problem = impl::inflate_mszip(bytes, size, inflated);
        if (!problem.empty()) {
            error e = keyblend::impl::make_error(errc::parse_error, source + ": " + problem);
            if (options.mode == parse_mode::strict) return e;
            e.message += "; what inflated before it is read";
            warnings.push_back(std::move(e));
        }
        doc = reinterpret_cast<const unsigned char*>(inflated.data());
        doc_size = inflated.size();
    }
    if (text) {
        impl::text_lexer lex(reinterpret_cast<const char*>(doc), doc_size, 16, compressed);
        return impl::read_and_assemble(lex, std::move(out), options, source, std::move(warnings));
    }
    impl::binary_lexer lex(doc, doc_size, 16, out.float_bits / 8, compressed);
    return impl::read_and_assemble(lex, std::move(out), options, source, std::move(warnings));
}

inline result<xfile> load_xfile(const std::string& path, const xfile_options& options) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec)
        return keyblend::impl::make_error(errc::io_error, path + ": cannot read: " + ec.message());
    if (size > std::numeric_limits<std::size_t>::max() / 2)
        return keyblend::impl::make_error(errc::io_error, path + ": too large to read into memory");
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr)
        return keyblend::impl::make_error(errc::io_error,
                                          path + ": cannot open: " + std::strerror(errno));
    std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
    const std::size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), f);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed || got != bytes.size())
        return keyblend::impl::make_error(errc::io_error,
                                          path + ": read " + std::to_string(got) + " of " +
                                              std::to_string(bytes.size()) + " bytes");
    return load_xfile_memory(bytes.data(), bytes.size(), options, path);
}

} // namespace io
} // namespace keyblend
