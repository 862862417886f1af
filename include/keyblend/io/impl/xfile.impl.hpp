// keyblend — definitions for io/xfile.hpp. Included at the bottom of xfile.hpp when the loader is
// compiled in that file (see xfile.hpp: KEYBLEND_IO_IMPLEMENTATION, or neither macro); do not
// include directly.
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
#include <memory>
#include <string>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace keyblend {
namespace io {
inline namespace KEYBLEND_IO_GLM_LAYOUT {

KEYBLEND_IO_FUNCTION const char* to_string(xfile_format f) {
    switch (f) {
    case xfile_format::text: return "txt";
    case xfile_format::binary: return "bin";
    case xfile_format::compressed_text: return "tzip";
    case xfile_format::compressed_binary: return "bzip";
    }
    return "unknown";
}

KEYBLEND_IO_FUNCTION key_counts count_keys(const clip& c) {
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
/// message at a place in the file (the reader's format). Every step is linear in the document
/// (hash lookups, one pass per mesh and set) but the name lookups (O(log frames) each).
template <class Located>
class assembler {
public:
    assembler(document& doc, const load_options& options, const Located& located)
        : doc_(doc), options_(options), lenient_(options.mode == parse_mode::lenient),
          located_(located) {}

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
        out.contents = doc_.contents;
        out.warnings = std::move(warnings_);
        return out;
    }

private:
    /// Adds a warning; false (with failure_ set) past load_options::max_warnings.
    bool warn(warning_action action, errc code, std::size_t offset, const std::string& what,
              std::size_t index = error::no_index) {
        if (warnings_.size() >= options_.max_warnings) {
            failure_ = keyblend::impl::make_error(
                errc::parse_error,
                located_(0, "more than " + std::to_string(options_.max_warnings) +
                                " problems (load_options::max_warnings); giving up (this is not "
                                "a damaged .X file)"));
            return false;
        }
        load_warning w;
        w.code = code;
        w.message = located_(offset, what);
        w.index = index;
        w.action = action;
        warnings_.push_back(std::move(w));
        return true;
    }

    /// A problem in the file. Strict mode: records the failure and returns false. Lenient mode:
    /// a warning whose message ends with `consequence`.
    bool problem(errc code, std::size_t offset, const std::string& what, warning_action action,
                 const std::string& consequence, std::size_t index = error::no_index) {
        if (!lenient_) {
            failure_ = keyblend::impl::make_error(code, located_(offset, what), index);
            return false;
        }
        return warn(action, code, offset, what + "; " + consequence, index);
    }

    bool build_skeleton(skeleton& out) {
        std::vector<frame_record>& frames = doc_.frames;
        // Bind-pose model matrices, parents first (file order): a FrameTransformMatrix whose
        // product with its parents' overflows would give NaN palettes and poses.
        {
            std::vector<glm::mat4> model(frames.size());
            for (std::size_t f = 0; f < frames.size(); ++f) {
                const joint_index p = frames[f].parent;
                const glm::mat4 parent = p < 0 ? glm::mat4(1.0f) : model[static_cast<std::size_t>(p)];
                glm::mat4 m = p < 0 ? frames[f].bind : parent * frames[f].bind;
                if (!is_finite(m)) {
                    if (!problem(errc::non_finite, frames[f].offset,
                                 "Frame " + quoted_excerpt(frames[f].name) +
                                     ": its FrameTransformMatrix times its parents' matrices "
                                     "overflows (the bind-pose model matrix is not finite)",
                                 warning_action::repaired,
                                 "the frame's matrix is replaced by the identity", f))
                        return false;
                    frames[f].bind = glm::mat4(1.0f);
                    m = parent;
                }
                model[f] = m;
            }
        }
        std::vector<joint_desc> joints(frames.size());
        std::unordered_set<std::string_view> named; // the names the file gives
        named.reserve(frames.size());
        for (const frame_record& f : frames)
            if (!f.name.empty()) named.insert(f.name);
        std::unordered_set<std::string> generated;
        for (std::size_t i = 0; i < frames.size(); ++i) {
            joints[i].parent = frames[i].parent;
            joints[i].bind_local = frames[i].bind;
            if (!frames[i].name.empty()) {
                joints[i].name = frames[i].name;
                continue;
            }
            const std::string base = "unnamed_frame_" + std::to_string(i);
            std::string name = base;
            for (unsigned k = 2; named.count(name) || generated.count(name); ++k)
                name = base + "_" + std::to_string(k);
            generated.insert(name);
            joints[i].name = std::move(name);
        }
        // Repeated names: strict mode fails at the first; lenient mode renames, with one warning.
        std::size_t repeats = 0, first_repeat = 0, first_original = 0;
        {
            std::unordered_map<std::string_view, std::size_t> first_with;
            first_with.reserve(joints.size());
            for (std::size_t i = 0; i < joints.size(); ++i) {
                const auto [it, inserted] = first_with.emplace(joints[i].name, i);
                if (inserted) continue;
                if (repeats++ == 0) {
                    first_repeat = i;
                    first_original = it->second;
                }
                if (!lenient_) break;
            }
        }
        if (repeats > 0) {
            const std::string what = "frame " + std::to_string(first_repeat) + " " +
                                     quoted_excerpt(joints[first_repeat].name) + ": same name as frame " +
                                     std::to_string(first_original);
            if (!problem(errc::duplicate, frames[first_repeat].offset, what,
                         warning_action::repaired,
                         std::to_string(repeats) +
                             " frames repeat an earlier frame's name: they are renamed name#2, "
                             "name#3, ...",
                         first_repeat))
                return false;
        }
        skeleton_options naming;
        naming.duplicates = repeats > 0 ? duplicate_names::rename : duplicate_names::reject;
        result<skeleton> built = skeleton::from_parents(joints, naming);
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
        const std::string mesh_label = "Mesh " + quoted_excerpt(m.name);
        // Bones: SkinWeights whose frame exists. A missing frame's weights are removed; `lost`
        // keeps, per vertex, what they weighed.
        constexpr std::size_t no_bone = static_cast<std::size_t>(-1);
        std::vector<const skin_record*> kept;
        std::vector<float> lost;
        for (const skin_record& w : r.skins) {
            const result<std::size_t> found = s.find(w.frame);
            const std::size_t joint = found ? *found : s.size();
            if (joint < s.size()) {
                if (kept.size() == std::numeric_limits<std::uint16_t>::max() + std::size_t{1}) {
                    failure_ = keyblend::impl::make_error(
                        errc::unsupported,
                        located_(w.offset, mesh_label + " has more than 65536 bones"));
                    return false;
                }
                kept.push_back(&w);
                skin.bones.push_back({w.frame, joint,
                                      w.offset_finite ? w.offset_matrix
                                                      : s.inverse_bind_model()[joint]});
                continue;
            }
            if (!problem(errc::not_found, w.offset,
                         mesh_label + ": SkinWeights names frame " + quoted_excerpt(w.frame) +
                             ", which does not exist",
                         warning_action::dropped,
                         "the bone is dropped: its " + std::to_string(w.vertices.size()) +
                             " weights are removed and each of those vertices' other weights "
                             "rescaled to the sum the vertex had"))
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
        // Vertices that lost every influence with a dropped bone stay with the mesh's own frame:
        // a bone for that frame, with its inverse bind-pose model matrix as offset, so that they
        // keep their bind position and follow the frame (a top-level mesh has none to follow).
        std::size_t follow = no_bone;
        if (!lost.empty() && m.joint != no_joint)
            for (std::size_t v = 0; v < vertex_count && follow == no_bone; ++v)
                if (first[v + 1] == first[v] && lost[v] != 0.0f) {
                    if (skin.bones.size() > std::numeric_limits<std::uint16_t>::max()) break;
                    follow = skin.bones.size();
                    skin.bones.push_back({s.name(m.joint), m.joint, s.inverse_bind_model()[m.joint]});
                }
        const std::size_t k =
            std::max(std::min(widest, max_influences_per_vertex), std::size_t{follow != no_bone});
        skin.influences_per_vertex = k;
        skin.bone_indices.assign(vertex_count * k, 0);
        skin.weights.assign(vertex_count * k, 0.0f);
        // Largest weight first; equal weights in SkinWeights order (bone index order).
        const auto heavier = [](const influence& a, const influence& b) {
            return a.weight > b.weight || (a.weight == b.weight && a.bone < b.bone);
        };
        std::size_t too_many = 0, without = 0, stranded = 0, off_one = 0;
        for (std::size_t v = 0; v < vertex_count; ++v) {
            influence* begin = all.data() + first[v];
            influence* end = all.data() + first[v + 1];
            const std::size_t n = static_cast<std::size_t>(end - begin);
            const std::size_t used = std::min(n, k);
            // Only the `used` largest are ordered: O(n log k) for a vertex with n influences;
            // the usual handful by insertion.
            if (n <= max_influences_per_vertex) {
                for (influence* i = begin + (begin != end); i < end; ++i)
                    for (influence* j = i; j > begin && heavier(j[0], j[-1]); --j)
                        std::swap(j[-1], j[0]);
            } else {
                std::partial_sort(begin, begin + used, end, heavier);
            }
            const bool lost_some = !lost.empty() && lost[v] != 0.0f;
            double total = lost_some ? static_cast<double>(lost[v]) : 0.0, kept_sum = 0.0;
            for (std::size_t i = 0; i < n; ++i)
                (i < used ? kept_sum : total) += static_cast<double>(begin[i].weight);
            total += kept_sum;
            double scale = 1.0;
            if ((n > k || lost_some) && kept_sum != 0.0) scale = total / kept_sum;
            too_many += n > k;
            if (used == 0 && lost_some && follow != no_bone) {
                skin.bone_indices[v * k] = static_cast<std::uint16_t>(follow);
                skin.weights[v * k] = lost[v];
                ++stranded;
                continue;
            }
            without += used == 0;
            double sum = 0.0;
            for (std::size_t i = 0; i < used; ++i) {
                skin.bone_indices[v * k + i] = begin[i].bone;
                skin.weights[v * k + i] = rescaled_weight(begin[i].weight, scale);
                sum += static_cast<double>(skin.weights[v * k + i]);
            }
            off_one += used > 0 && std::fabs(sum - 1.0) > 1e-3;
        }
        if (too_many > 0 &&
            !warn(warning_action::dropped, errc::unsupported, r.offset,
                  mesh_label + ": " + std::to_string(too_many) + " vertices have more than " +
                      std::to_string(max_influences_per_vertex) +
                      " influences; the largest are kept, rescaled to the same sum"))
            return false;
        if (stranded > 0 &&
            !warn(warning_action::repaired, errc::not_found, r.offset,
                  mesh_label + ": " + std::to_string(stranded) +
                      " vertices lost their only influences with a dropped bone; they follow "
                      "the mesh's frame " +
                      quoted_excerpt(s.name(m.joint)) + " (a bone added for it)"))
            return false;
        if (without > 0 &&
            !warn(warning_action::note, errc::empty, r.offset,
                  mesh_label + ": " + std::to_string(without) +
                      " vertices have no bone influence (all weights 0: they skin to the origin)"))
            return false;
        if (off_one > 0 &&
            !warn(warning_action::note, errc::not_normalized, r.offset,
                  mesh_label + ": " + std::to_string(off_one) +
                      " vertices have weights that do not sum to 1 (kept as written)"))
            return false;
        return true;
    }

    /// The joint an Animation's reference names: by name, or by GUID when it gives none (the
    /// first frame with that GUID); sk.size() when there is no such frame.
    std::size_t find_frame(const animation_record& a, const skeleton& sk) {
        if (!a.target.empty() || a.target_guid.empty()) {
            const result<std::size_t> found = sk.find(a.target);
            return found ? *found : sk.size();
        }
        if (!frames_by_guid_built_) {
            for (std::size_t f = 0; f < doc_.frames.size(); ++f)
                if (!doc_.frames[f].guid.empty()) frame_by_guid_.emplace(doc_.frames[f].guid, f);
            frames_by_guid_built_ = true;
        }
        const auto it = frame_by_guid_.find(a.target_guid);
        return it == frame_by_guid_.end() ? sk.size() : sk.joint_of_source()[it->second];
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
        // Built only for a message: a set name may be long.
        const auto label = [&](const animation_record& a) {
            return "AnimationSet " + quoted_excerpt(s.name) + ", Animation " + quoted_excerpt(a.name);
        };
        // Which channel animates each joint: all no_index between sets (a failure ends the load).
        std::vector<std::size_t>& channel_of_joint = channel_of_joint_;
        for (animation_record& a : s.animations) {
            if (!a.has_target) {
                if (!problem(errc::invalid_argument, a.offset,
                             label(a) + " has no { Frame } reference", warning_action::dropped,
                             "the Animation is dropped"))
                    return false;
                continue;
            }
            const std::size_t joint = find_frame(a, sk);
            const auto target = [&] {
                if (!a.target.empty()) return quoted_excerpt(a.target);
                std::string g = "<";
                append_excerpt(g, a.target_guid, 64);
                return g + ">";
            };
            if (joint >= sk.size()) {
                if (!problem(errc::not_found, a.target_offset,
                             label(a) + " animates frame " + target() + ", which does not exist",
                             warning_action::dropped, "the Animation is dropped"))
                    return false;
                continue;
            }
            channel& keys = a.tracks;
            if (keys.has_matrix() && keys.has_trs()) {
                if (!problem(errc::invalid_argument, a.offset,
                             label(a) + " has matrix keys and rotation, scale or position keys",
                             warning_action::dropped,
                             "the rotation, scale and position keys are dropped (sampling uses "
                             "the matrix keys)"))
                    return false;
                keys.rotation.clear();
                keys.scale.clear();
                keys.translation.clear();
            }
            if (channel_of_joint[joint] == error::no_index) {
                channel_of_joint[joint] = c.channels.size();
                keys.joint = joint;
                c.channels.push_back(std::move(keys));
                out.animation_names.push_back(std::move(a.name));
                out.options.push_back(a.options);
                continue;
            }
            // A second Animation of the frame: what the first lacks is merged into its channel.
            channel& into = c.channels[channel_of_joint[joint]];
            std::string merged, dropped;
            const auto take = [&](auto& from, auto& to, const char* kind, bool allowed) {
                if (from.empty()) return;
                std::string& list = allowed && to.empty() ? merged : dropped;
                list += (list.empty() ? "" : ", ") + std::string(kind);
                if (allowed && to.empty()) to = std::move(from);
            };
            take(keys.rotation, into.rotation, "rotation", !into.has_matrix());
            take(keys.scale, into.scale, "scale", !into.has_matrix());
            take(keys.translation, into.translation, "position", !into.has_matrix());
            take(keys.matrix, into.matrix, "matrix", !into.has_trs() && into.matrix.empty());
            std::string consequence =
                merged.empty() ? std::string() : "its " + merged + " keys are merged into that "
                                                                   "Animation's channel";
            if (!dropped.empty())
                consequence += (consequence.empty() ? "its " : "; its ") + dropped +
                               " keys are dropped (the earlier Animation's are kept)";
            if (consequence.empty()) consequence = "it has no keys: nothing is lost";
            if (!problem(errc::duplicate, a.offset,
                         label(a) + " animates frame " + target() +
                             ", which an earlier Animation of the set animates",
                         dropped.empty() ? warning_action::repaired : warning_action::dropped,
                         consequence))
                return false;
        }
        for (const channel& ch : c.channels) channel_of_joint[ch.joint] = error::no_index;
        c.duration = last_key_time(c);
        return true;
    }

    document& doc_;
    const load_options& options_;
    bool lenient_;
    const Located& located_;
    std::vector<load_warning> warnings_;
    std::vector<std::size_t> channel_of_joint_; // per joint: the channel animating it in this set
    std::unordered_map<std::string_view, std::size_t> frame_by_guid_;
    bool frames_by_guid_built_ = false;
    error failure_;
};

template <class Lexer>
result<xfile> read_and_assemble(Lexer& lex, xfile out, const load_options& options,
                                std::string_view source, std::vector<load_warning> warnings) {
    document doc;
    doc.warnings = std::move(warnings);
    reader<Lexer> r(lex, options, source, doc);
    if (!r.run()) return r.failure();
    const auto located = [&r](std::size_t offset, std::string_view what) {
        return r.message(offset, what);
    };
    return assembler<decltype(located)>(doc, options, located).run(std::move(out));
}

/// The 16-byte header: version, encoding and float size into `out`, or the error.
inline status read_header(const unsigned char* bytes, std::size_t size, const std::string& source,
                          xfile& out) {
    const auto at = [&](std::size_t offset, errc code, const std::string& what) {
        return keyblend::impl::make_error(code, source + ": byte offset " + std::to_string(offset) +
                                                    ": " + what);
    };
    if (size < 16 || bytes == nullptr || std::memcmp(bytes, "xof ", 4) != 0) {
        std::string found = "the end of the file";
        if (bytes != nullptr && size > 0) {
            found = "'";
            append_excerpt(found,
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
        std::string found;
        append_excerpt(found, header.substr(offset, 4), 4);
        return at(offset, errc::unsupported,
                  std::string(name) + " '" + found + "' (" + choices + " expected)");
    };
    if (version < 0) return unsupported(4, "version", "0302 or 0303");
    if (format < 0) return unsupported(8, "format", "txt, bin, tzip or bzip");
    if (floats < 0) return unsupported(12, "float size", "0032 or 0064");
    out.version = version == 0 ? 302 : 303;
    out.format = static_cast<xfile_format>(format); // in the enum's order
    out.float_bits = floats == 0 ? 32 : 64;
    return {};
}

inline bool is_compressed(xfile_format f) {
    return f == xfile_format::compressed_text || f == xfile_format::compressed_binary;
}

} // namespace impl

KEYBLEND_IO_FUNCTION result<xfile> load_xfile_memory(const void* data, std::size_t size,
                                                     const load_options& options,
                                                     std::string_view source_name) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    const std::string source(source_name);
    xfile out;
    if (status st = impl::read_header(bytes, size, source, out); !st) return st.error();
    const bool text =
        out.format == xfile_format::text || out.format == xfile_format::compressed_text;
    impl::byte_buffer inflated;
    std::vector<load_warning> warnings;
    const unsigned char* doc = bytes;
    std::size_t doc_size = size;
    if (impl::is_compressed(out.format)) {
        bool over_limit = false;
        const std::string problem =
            impl::inflate_mszip(bytes, size, options.max_decompressed_bytes, inflated, over_limit);
        if (!problem.empty()) {
            error e = keyblend::impl::make_error(over_limit ? errc::unsupported : errc::parse_error,
                                                 source + ": " + problem);
            if (over_limit || options.mode == parse_mode::strict) return e;
            load_warning w;
            static_cast<error&>(w) = std::move(e);
            w.message += "; what inflated before it is read";
            w.action = warning_action::dropped;
            warnings.push_back(std::move(w));
        }
        doc = inflated.data();
        doc_size = inflated.size();
    }
    if (text) {
        impl::text_lexer lex(reinterpret_cast<const char*>(doc), doc_size, 16,
                             impl::is_compressed(out.format));
        return impl::read_and_assemble(lex, std::move(out), options, source, std::move(warnings));
    }
    impl::binary_lexer lex(doc, doc_size, 16, out.float_bits / 8, impl::is_compressed(out.format));
    return impl::read_and_assemble(lex, std::move(out), options, source, std::move(warnings));
}

KEYBLEND_IO_FUNCTION status decompress_xfile(const void* data, std::size_t size,
                                             std::vector<unsigned char>& out,
                                             const load_options& options,
                                             std::string_view source_name) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    const std::string source(source_name);
    xfile header;
    out.clear();
    if (status st = impl::read_header(bytes, size, source, header); !st) return st;
    if (!impl::is_compressed(header.format))
        return keyblend::impl::make_error(
            errc::invalid_argument, source + ": byte offset 8: the file is not compressed (format " +
                                        to_string(header.format) + ", not tzip or bzip)");
    impl::byte_buffer inflated(out);
    bool over_limit = false;
    const std::string problem =
        impl::inflate_mszip(bytes, size, options.max_decompressed_bytes, inflated, over_limit);
    inflated.finish();
    if (!problem.empty()) {
        out.clear();
        return keyblend::impl::make_error(over_limit ? errc::unsupported : errc::parse_error,
                                          source + ": " + problem);
    }
    std::memcpy(out.data() + 8, header.format == xfile_format::compressed_text ? "txt " : "bin ",
                4);
    return {};
}

KEYBLEND_IO_FUNCTION result<xfile> load_xfile(const std::string& path,
                                              const load_options& options) {
    std::unique_ptr<unsigned char[]> bytes;
    std::size_t n = 0;
    if (status read = impl::read_whole_file(path, bytes, n); !read) return read.error();
    return load_xfile_memory(bytes.get(), n, options, path);
}

} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace io
} // namespace keyblend
