// keyblend — definitions for assimp.hpp. Included at the bottom of assimp.hpp; do not include
// directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "read_file.hpp"

#include <assimp/DefaultLogger.hpp>
#include <assimp/Importer.hpp>
#include <assimp/LogStream.hpp>
#include <assimp/config.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace keyblend {
namespace assimp {

inline const char* to_string(end_behaviour b) {
    switch (b) {
    case end_behaviour::default_pose: return "default";
    case end_behaviour::constant: return "constant";
    case end_behaviour::linear: return "linear";
    case end_behaviour::repeat: return "repeat";
    case end_behaviour::mixed: return "mixed";
    }
    return "unknown";
}

inline unsigned post_processing() {
    return aiProcess_Triangulate | aiProcess_SortByPType | aiProcess_JoinIdenticalVertices |
           aiProcess_GenSmoothNormals | aiProcess_ValidateDataStructure;
}

namespace impl {

using keyblend::impl::make_error;
using vector_track = track<glm::vec3, float>;

inline std::string to_std(const aiString& s) {
    return std::string(s.data, std::min<std::size_t>(s.length, sizeof s.data - 1));
}

/// aiMatrix4x4 (row-major, column vectors) to glm::mat4 (column-major, column vectors).
inline glm::mat4 to_glm(const aiMatrix4x4& a) {
    glm::mat4 m;
    for (unsigned r = 0; r < 4; ++r)
        for (unsigned c = 0; c < 4; ++c)
            m[static_cast<glm::length_t>(c)][static_cast<glm::length_t>(r)] = a[r][c];
    return m;
}

inline glm::vec3 to_glm(const aiVector3D& v) { return glm::vec3(v.x, v.y, v.z); }

inline end_behaviour behaviour_of(aiAnimBehaviour b) {
    switch (b) {
    case aiAnimBehaviour_CONSTANT: return end_behaviour::constant;
    case aiAnimBehaviour_LINEAR: return end_behaviour::linear;
    case aiAnimBehaviour_REPEAT: return end_behaviour::repeat;
    default: return end_behaviour::default_pose;
    }
}

inline std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

/// Builds a scene from an aiScene, one part after the other; problems go through problem().
class converter {
public:
    converter(const aiScene& in, const options& opts, const std::string& source)
        : in_(in), opts_(opts), source_(source), lenient_(opts.mode == io::parse_mode::lenient) {}

    result<scene> run() {
        if (!in_.mRootNode)
            return make_error(errc::empty, source_ + ": the scene has no root node");
        if (!arrays_present(in_.mMeshes, in_.mNumMeshes, "the scene's mMeshes") ||
            !arrays_present(in_.mMaterials, in_.mNumMaterials, "the scene's mMaterials") ||
            !arrays_present(in_.mAnimations, in_.mNumAnimations, "the scene's mAnimations"))
            return failure_;
        const bool ok = build_skeleton() && (build_materials(), build_meshes()) && build_animations();
        if (too_many_warnings_)
            return make_error(errc::parse_error, source_ + ": more than " + std::to_string(opts_.max_warnings) +
                                                     " problems (options::max_warnings); giving up");
        if (!ok) return failure_;
        out_.warnings = std::move(warnings_);
        return std::move(out_);
    }

private:
    /// Strict: records the failure and returns false. Lenient: records a warning, returns true.
    bool problem(errc code, const std::string& what, std::size_t index = error::no_index) {
        error e = make_error(code, source_ + ": " + what, index);
        if (!lenient_) {
            failure_ = std::move(e);
            return false;
        }
        return record(std::move(e));
    }
    /// A lossy but valid case, in either mode.
    void warn(errc code, const std::string& what, std::size_t index = error::no_index) {
        record(make_error(code, source_ + ": " + what, index));
    }
    /// Keeps a warning; past options::max_warnings the conversion stops (false), and run() says so.
    bool record(error e) {
        if (warnings_.size() >= opts_.max_warnings) {
            too_many_warnings_ = true;
            failure_ = make_error(errc::parse_error, source_ + ": too many problems");
            return false;
        }
        warnings_.push_back(std::move(e));
        return true;
    }

    /// An array that is null while its count is not: strict fails; lenient reads it as empty
    /// (the callers read null arrays as empty), with a warning.
    bool arrays_present(const void* array, unsigned count, const std::string& what) {
        if (array || count == 0) return true;
        return problem(errc::size_mismatch, what + " counts " + std::to_string(count) +
                                                " and is null" + (lenient_ ? "; read as empty" : ""));
    }

    /// Counts `add` more against an options limit; false (errc::unsupported, naming the limit)
    /// past it.
    bool within(std::size_t& used, std::size_t add, std::size_t limit, const char* option, const char* what) {
        if (add <= limit && used <= limit - add) {
            used += add;
            return true;
        }
        return fail(errc::unsupported, std::string("the scene has more ") + what + " than options::" + option +
                                           " (" + std::to_string(limit) + ") allows");
    }

    // --- skeleton -------------------------------------------------------------------------------

    bool build_skeleton() {
        // Depth-first pre-order without recursion (a hostile file may nest deeply); children in
        // assimp's order. A node reached twice (a scene built by hand can link one node from two
        // parents, or in a loop; ValidateDataStructure rules it out for load_scene) is taken once.
        std::vector<std::pair<const aiNode*, joint_index>> stack{{in_.mRootNode, no_parent}};
        std::vector<joint_desc> joints;
        std::unordered_set<const aiNode*> seen;
        while (!stack.empty()) {
            const auto [node, parent] = stack.back();
            stack.pop_back();
            if (!seen.insert(node).second) {
                if (!problem(errc::cycle, "node " + in_quotes(to_std(node->mName)) +
                                              " is linked more than once (a cycle, or two parents)" +
                                              (lenient_ ? "; only its first place is kept" : "")))
                    return false;
                continue;
            }
            if (joints.size() >= static_cast<std::size_t>(std::numeric_limits<joint_index>::max()))
                return fail(errc::invalid_argument, "more nodes than a skeleton can hold");
            if (!within(nodes_used_, 1, opts_.max_joints, "max_joints", "nodes")) return false;
            const joint_index self = static_cast<joint_index>(joints.size());
            joints.push_back({to_std(node->mName), parent, to_glm(node->mTransformation)});
            if (!is_finite(joints.back().bind_local)) {
                if (!problem(errc::non_finite, "node " + in_quotes(joints.back().name) +
                                                   ": mTransformation has NaN or infinity" +
                                                   (lenient_ ? "; the node keeps the identity" : "")))
                    return false;
                joints.back().bind_local = glm::mat4(1.0f);
            }
            nodes_.push_back(node);
            if (!arrays_present(node->mChildren, node->mNumChildren,
                                "node " + in_quotes(joints.back().name) + "'s mChildren"))
                return false;
            if (node->mChildren)
                for (unsigned c = node->mNumChildren; c-- > 0;)
                    if (node->mChildren[c]) stack.emplace_back(node->mChildren[c], self);
        }
        result<skeleton> built = skeleton::from_parents(joints);
        if (!built && built.error().code == errc::duplicate) {
            warn(errc::duplicate, "node names repeat (" + built.error().message +
                                      "); later nodes are renamed name#2, name#3, ..., and bones "
                                      "and channels naming them follow the first");
            skeleton_options rename;
            rename.duplicates = duplicate_names::rename;
            built = skeleton::from_parents(joints, rename);
        }
        if (!built) {
            const error& e = built.error();
            return fail(e.code, "node " + (e.index < joints.size() ? in_quotes(joints[e.index].name)
                                                                   : std::string("?")) +
                                    ": " + e.message);
        }
        out_.skeleton = std::move(*built);
        return true;
    }

    bool fail(errc code, const std::string& what) {
        failure_ = make_error(code, source_ + ": " + what);
        return false;
    }

    // --- materials ------------------------------------------------------------------------------

    void build_materials() {
        for (unsigned i = 0; i < in_.mNumMaterials && in_.mMaterials; ++i) {
            material m;
            const aiMaterial* a = in_.mMaterials[i];
            if (a) {
                aiString s;
                if (aiGetMaterialString(a, AI_MATKEY_NAME, &s) == aiReturn_SUCCESS) m.name = to_std(s);
                aiColor4D c;
                if (aiGetMaterialColor(a, AI_MATKEY_COLOR_DIFFUSE, &c) == aiReturn_SUCCESS)
                    m.diffuse = finite_or(glm::vec4(c.r, c.g, c.b, 1.0f), m.diffuse);
                float opacity = 1.0f;
                if (aiGetMaterialFloat(a, AI_MATKEY_OPACITY, &opacity) == aiReturn_SUCCESS &&
                    is_finite(opacity))
                    m.diffuse.a = opacity;
                if (aiGetMaterialColor(a, AI_MATKEY_COLOR_SPECULAR, &c) == aiReturn_SUCCESS)
                    m.specular = finite_or(glm::vec3(c.r, c.g, c.b), m.specular);
                if (aiGetMaterialColor(a, AI_MATKEY_COLOR_EMISSIVE, &c) == aiReturn_SUCCESS)
                    m.emissive = finite_or(glm::vec3(c.r, c.g, c.b), m.emissive);
                float shininess = 0.0f;
                if (aiGetMaterialFloat(a, AI_MATKEY_SHININESS, &shininess) == aiReturn_SUCCESS &&
                    is_finite(shininess))
                    m.shininess = shininess;
                if (aiGetMaterialTextureCount(a, aiTextureType_DIFFUSE) > 0 &&
                    aiGetMaterialTexture(a, aiTextureType_DIFFUSE, 0, &s, nullptr, nullptr, nullptr,
                                         nullptr, nullptr, nullptr) == aiReturn_SUCCESS) {
                    m.texture_file = to_std(s);
                    m.texture_image = embedded_texture(m.texture_file, i);
                }
            }
            out_.materials.push_back(std::move(m));
        }
    }

    /// The image of the embedded texture `path` names (`*N`, or the file name of one assimp keeps,
    /// as aiScene::GetEmbeddedTexture finds it, null pointers and bad indices checked), each read
    /// once and shared; null for a texture file outside, and, with a warning, for raw texels.
    std::shared_ptr<const io::embedded_image> embedded_texture(const std::string& path, unsigned material) {
        const auto short_name = [](const std::string& name) { return name.substr(name.find_last_of("/\\") + 1); };
        const std::size_t n = in_.mTextures ? in_.mNumTextures : 0;
        std::size_t index = n;
        if (!path.empty() && path[0] == '*') {
            if (path.size() > 1 && path.size() < 12 &&
                std::all_of(path.begin() + 1, path.end(), [](char c) { return c >= '0' && c <= '9'; }))
                index = static_cast<std::size_t>(std::min<unsigned long long>(std::stoull(path.substr(1)), n));
        } else {
            for (std::size_t i = 0; i < n && index == n; ++i)
                if (in_.mTextures[i] && short_name(to_std(in_.mTextures[i]->mFilename)) == short_name(path)) index = i;
        }
        if (index >= n || !in_.mTextures[index]) return nullptr;
        textures_.resize(n);
        embedded& e = textures_[index];
        if (e.image || e.refused) return e.image;
        const aiTexture& t = *in_.mTextures[index];
        if (t.mHeight != 0 || !t.pcData || t.mWidth == 0) {
            e.refused = true;
            warn(errc::unsupported, "material " + std::to_string(material) + ": its texture '" + path + "' is " +
                                        (t.mHeight != 0 ? "embedded as raw texels (" + std::to_string(t.mWidth) + " x " +
                                                              std::to_string(t.mHeight) + ")"
                                                        : std::string("embedded empty")) +
                                        ", which the adapter does not import");
            return nullptr;
        }
        auto image = std::make_shared<io::embedded_image>();
        const auto* bytes = reinterpret_cast<const unsigned char*>(t.pcData);
        image->bytes.assign(bytes, bytes + t.mWidth); // (compressed: mWidth is its size in bytes)
        if (const char* type = io::image_type_of(image->bytes.data(), image->bytes.size())) {
            image->mime_type = type;
        } else {
            // Another type: named by assimp's hint ("dds", "tga", ...) for the writers to refuse.
            std::string hint;
            for (std::size_t k = 0; k < sizeof t.achFormatHint && t.achFormatHint[k]; ++k) {
                const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(t.achFormatHint[k])));
                if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) hint += c;
            }
            image->mime_type = hint.empty() ? "application/octet-stream" : "image/" + hint;
        }
        e.image = std::move(image);
        return e.image;
    }

    template <class V>
    static V finite_or(const V& v, const V& fallback) {
        return is_finite(v) ? v : fallback;
    }

    // --- meshes ---------------------------------------------------------------------------------

    bool build_meshes() {
        const std::size_t count = in_.mMeshes ? in_.mNumMeshes : 0;
        std::vector<bool> referenced(count, false);
        for (std::size_t j = 0; j < nodes_.size(); ++j) {
            const aiNode* node = nodes_[j];
            if (!arrays_present(node->mMeshes, node->mNumMeshes,
                                "node " + in_quotes(out_.skeleton.name(j)) + "'s mMeshes"))
                return false;
            if (!node->mMeshes) continue;
            for (unsigned i = 0; i < node->mNumMeshes; ++i) {
                const unsigned index = node->mMeshes[i];
                if (index >= count) {
                    if (!problem(errc::out_of_range,
                                 "node " + in_quotes(out_.skeleton.name(j)) + " references mesh " +
                                     std::to_string(index) + " of " + std::to_string(count),
                                 index))
                        return false;
                    continue;
                }
                referenced[index] = true;
                if (!build_mesh(index, j)) return false;
            }
        }
        for (std::size_t i = 0; i < count; ++i)
            if (!referenced[i] && !build_mesh(static_cast<unsigned>(i), no_joint)) return false;
        return true;
    }

    bool build_mesh(unsigned index, std::size_t joint) {
        const aiMesh* a = in_.mMeshes[index];
        if (!a) return problem(errc::empty, "mesh " + std::to_string(index) + " is null", index);
        mesh m;
        m.name = to_std(a->mName);
        m.joint = joint;
        m.source_index = index;
        m.material = a->mMaterialIndex < out_.materials.size() ? a->mMaterialIndex
                                                               : out_.materials.size();
        const std::string label = "mesh " + std::to_string(index) + " " + in_quotes(m.name);
        if (!within(meshes_used_, 1, opts_.max_meshes, "max_meshes", "meshes") ||
            !arrays_present(a->mVertices, a->mNumVertices, label + ": mVertices") ||
            !arrays_present(a->mFaces, a->mNumFaces, label + ": mFaces") ||
            !arrays_present(a->mBones, a->mNumBones, label + ": mBones"))
            return false;
        const std::size_t n = a->mVertices ? a->mNumVertices : 0;
        if (!within(vertices_used_, n, opts_.max_vertices, "max_vertices", "vertices")) return false;

        m.positions.resize(n);
        for (std::size_t v = 0; v < n; ++v) {
            m.positions[v] = to_glm(a->mVertices[v]);
            if (!is_finite(m.positions[v]))
                return problem(errc::non_finite,
                               label + ": vertex " + std::to_string(v) +
                                   " has a NaN or infinite position" +
                                   (lenient_ ? "; the mesh is dropped" : ""),
                               v);
        }
        if (a->mNormals) {
            m.normals.resize(n);
            std::size_t bad = 0;
            for (std::size_t v = 0; v < n; ++v) {
                m.normals[v] = to_glm(a->mNormals[v]);
                if (!is_finite(m.normals[v])) {
                    m.normals[v] = glm::vec3(0.0f);
                    ++bad;
                }
            }
            if (bad)
                warn(errc::non_finite, label + ": " + std::to_string(bad) +
                                           " NaN or infinite normals (degenerate triangles) set "
                                           "to (0, 0, 0)");
        }
        if (a->mTextureCoords[0]) {
            m.texcoords.resize(n);
            for (std::size_t v = 0; v < n; ++v) {
                const aiVector3D& t = a->mTextureCoords[0][v];
                m.texcoords[v] = is_finite(to_glm(t)) ? glm::vec2(t.x, t.y) : glm::vec2(0.0f);
            }
        }
        std::size_t not_triangles = 0;
        m.indices.reserve(std::size_t{3} * a->mNumFaces);
        for (std::size_t f = 0; a->mFaces && f < a->mNumFaces; ++f) {
            const aiFace& face = a->mFaces[f];
            if (face.mNumIndices != 3 || !face.mIndices) {
                ++not_triangles;
                continue;
            }
            bool inside = true;
            for (unsigned k = 0; k < 3; ++k)
                if (face.mIndices[k] >= n) {
                    if (!problem(errc::out_of_range,
                                 label + ": face " + std::to_string(f) + " uses vertex " +
                                     std::to_string(face.mIndices[k]) + " of " +
                                     std::to_string(n) +
                                     (lenient_ ? "; the face is dropped" : ""),
                                 f))
                        return false;
                    inside = false;
                    break;
                }
            if (inside) m.indices.insert(m.indices.end(), face.mIndices, face.mIndices + 3);
        }
        if (not_triangles)
            warn(errc::unsupported, label + ": " + std::to_string(not_triangles) +
                                        " faces that are not triangles (points, lines or "
                                        "polygons) are dropped");
        if (!build_skin(*a, label, m)) return false;
        out_.meshes.push_back(std::move(m));
        return true;
    }

    bool build_skin(const aiMesh& a, const std::string& label, mesh& m) {
        if (!a.mBones || a.mNumBones == 0) return true;
        const std::size_t n = m.positions.size();
        struct entry {
            std::uint32_t vertex;
            float weight;
            std::uint16_t bone;
        };
        std::vector<entry> entries;
        // Per vertex, the weight it lost with dropped bones (lenient): a vertex left with none
        // follows the mesh's own node instead of going to the origin, as io::load_xfile does.
        std::vector<float> lost;
        const auto lose = [&](const aiBone& dropped) {
            lost.resize(n, 0.0f);
            for (std::size_t i = 0; dropped.mWeights && i < dropped.mNumWeights; ++i) {
                const aiVertexWeight& w = dropped.mWeights[i];
                if (w.mVertexId < n && is_finite(w.mWeight) && w.mWeight > 0.0f) lost[w.mVertexId] += w.mWeight;
            }
        };
        mesh_skin& skin = m.skin;
        for (unsigned b = 0; b < a.mNumBones; ++b) {
            const aiBone* bone = a.mBones[b];
            if (!bone) {
                if (!problem(errc::empty, label + ": bone " + std::to_string(b) + " is null", b))
                    return false;
                continue;
            }
            const std::string name = to_std(bone->mName);
            const std::string bone_label = label + ", bone " + std::to_string(b) + " " + in_quotes(name);
            if (!arrays_present(bone->mWeights, bone->mNumWeights, bone_label + ": mWeights")) return false;
            const result<std::size_t> found = out_.skeleton.find(name);
            const std::size_t joint = found ? *found : out_.skeleton.size();
            if (joint >= out_.skeleton.size()) {
                if (!problem(errc::not_found,
                             bone_label + " names no node" +
                                 (lenient_ ? "; the bone is dropped with its " +
                                                 std::to_string(bone->mNumWeights) + " weights"
                                           : std::string()),
                             b))
                    return false;
                lose(*bone);
                continue;
            }
            const glm::mat4 offset = to_glm(bone->mOffsetMatrix);
            if (!is_finite(offset)) {
                if (!problem(errc::non_finite,
                             bone_label + ": the offset matrix has NaN or infinity" +
                                 (lenient_ ? "; the bone is dropped" : ""),
                             b))
                    return false;
                lose(*bone);
                continue;
            }
            if (skin.bones.size() > std::numeric_limits<std::uint16_t>::max())
                return fail(errc::unsupported, label + " has more than 65536 bones");
            const auto kept = static_cast<std::uint16_t>(skin.bones.size());
            skin.bones.push_back({name, joint, offset});
            for (std::size_t i = 0; bone->mWeights && i < bone->mNumWeights; ++i) {
                const aiVertexWeight& w = bone->mWeights[i];
                const std::string where = bone_label + ", weight " + std::to_string(i);
                if (w.mVertexId >= n) {
                    if (!problem(errc::out_of_range,
                                 where + ": vertex " + std::to_string(w.mVertexId) + " of " +
                                     std::to_string(n) + (lenient_ ? "; dropped" : ""),
                                 i))
                        return false;
                    continue;
                }
                if (!is_finite(w.mWeight) || w.mWeight < 0.0f) {
                    if (!problem(is_finite(w.mWeight) ? errc::invalid_argument : errc::non_finite,
                                 where + ": weight " + keyblend::impl::float_to_string(w.mWeight) +
                                     " (weights are finite and >= 0)" +
                                     (lenient_ ? "; dropped" : ""),
                                 i))
                        return false;
                    continue;
                }
                if (w.mWeight > 0.0f) entries.push_back({w.mVertexId, w.mWeight, kept});
            }
        }
        // The vertices that lost every influence with a dropped bone: a bone for the mesh's node,
        // with its inverse bind-pose model matrix as offset, keeps them at their bind position and
        // moves them with the node.
        std::vector<bool> influenced(n, false);
        for (const entry& e : entries) influenced[e.vertex] = true;
        std::size_t stranded = 0;
        if (!lost.empty() && m.joint < out_.skeleton.size())
            for (std::size_t v = 0; v < n; ++v)
                if (!influenced[v] && lost[v] > 0.0f) {
                    if (stranded++ == 0) {
                        if (skin.bones.size() > std::numeric_limits<std::uint16_t>::max())
                            return fail(errc::unsupported, label + " has more than 65536 bones");
                        skin.bones.push_back({out_.skeleton.name(m.joint), m.joint,
                                              out_.skeleton.inverse_bind_model()[m.joint]});
                    }
                    entries.push_back({static_cast<std::uint32_t>(v), 1.0f,
                                       static_cast<std::uint16_t>(skin.bones.size() - 1)});
                }
        skin.report.vertices_following_node = stranded;
        if (skin.bones.empty()) return true;

        // Influences grouped by vertex, largest first (ties: bone order), then the fixed layout.
        std::sort(entries.begin(), entries.end(), [](const entry& x, const entry& y) {
            if (x.vertex != y.vertex) return x.vertex < y.vertex;
            if (x.weight != y.weight) return x.weight > y.weight;
            return x.bone < y.bone;
        });
        influence_report& report = skin.report;
        const std::size_t limit = opts_.max_influences;
        std::size_t widest = 0;
        for (std::size_t i = 0, end; i < entries.size(); i = end) {
            for (end = i; end < entries.size() && entries[end].vertex == entries[i].vertex;) ++end;
            report.most_influences = std::max(report.most_influences, end - i);
            widest = std::max(widest, std::min(end - i, limit));
        }
        skin.influences_per_vertex = widest;
        skin.bone_indices.assign(n * widest, 0);
        skin.weights.assign(n * widest, 0.0f);
        influenced.assign(n, false);
        for (std::size_t i = 0, end; i < entries.size(); i = end) {
            for (end = i; end < entries.size() && entries[end].vertex == entries[i].vertex;) ++end;
            const std::size_t v = entries[i].vertex;
            influenced[v] = true;
            double total = 0.0, kept_total = 0.0;
            for (std::size_t k = i; k < end; ++k) {
                total += double(entries[k].weight);
                if (k - i < limit) kept_total += double(entries[k].weight);
            }
            if (std::fabs(total - 1.0) > 1e-3) ++report.vertices_renormalised;
            if (end - i > limit) {
                ++report.vertices_over_limit;
                const float dropped = static_cast<float>(double(entries[i + limit].weight) / total);
                if (dropped > report.largest_dropped_weight) {
                    report.largest_dropped_weight = dropped;
                    report.largest_dropped_vertex = v;
                }
            }
            for (std::size_t k = i; k < end && k - i < limit; ++k) {
                skin.bone_indices[v * widest + (k - i)] = entries[k].bone;
                skin.weights[v * widest + (k - i)] =
                    static_cast<float>(double(entries[k].weight) / kept_total);
            }
        }
        report.vertices_without_influence =
            static_cast<std::size_t>(std::count(influenced.begin(), influenced.end(), false));
        if (report.vertices_over_limit)
            warn(errc::unsupported,
                 label + ": " + std::to_string(report.vertices_over_limit) +
                     " vertices have more than " + std::to_string(limit) +
                     " influences (up to " + std::to_string(report.most_influences) +
                     "); the smallest are dropped and the rest renormalised (largest weight "
                     "dropped: " +
                     keyblend::impl::float_to_string(report.largest_dropped_weight, 4) +
                     " at vertex " + std::to_string(report.largest_dropped_vertex) + ")",
                 report.largest_dropped_vertex);
        if (report.vertices_renormalised)
            warn(errc::not_normalized, label + ": the weights of " +
                                           std::to_string(report.vertices_renormalised) +
                                           " vertices did not sum to 1; they are renormalised");
        if (report.vertices_following_node)
            warn(errc::not_found,
                 label + ": " + std::to_string(report.vertices_following_node) +
                     " vertices lost their only influences with a dropped bone; they follow the "
                     "mesh's node " + in_quotes(out_.skeleton.name(m.joint)) + " (a bone added for it)");
        if (report.vertices_without_influence)
            warn(errc::empty, label + ": " + std::to_string(report.vertices_without_influence) +
                                  " vertices have no bone influence (skinned, they go to the "
                                  "origin)");
        return true;
    }

    // --- animations -----------------------------------------------------------------------------

    bool build_animations() {
        std::vector<std::size_t> channel_of_joint;
        for (unsigned i = 0; in_.mAnimations && i < in_.mNumAnimations; ++i) {
            const aiAnimation* a = in_.mAnimations[i];
            if (!a) {
                if (!problem(errc::empty, "animation " + std::to_string(i) + " is null", i))
                    return false;
                continue;
            }
            animation out;
            clip& c = out.clip;
            c.name = to_std(a->mName);
            const std::string label = "animation " + std::to_string(i) + " " + in_quotes(c.name);
            const double tps = a->mTicksPerSecond;
            // 0 is assimp's "unknown"; anything else must be a rate a float holds as a normal
            // number (an importer computing 1 / 0, or 1 / 1e39, hands on infinity or 1e-39).
            if (is_finite(tps) && tps >= double(std::numeric_limits<float>::min()) &&
                tps <= double(std::numeric_limits<float>::max())) {
                c.ticks_per_second = static_cast<float>(tps);
            } else {
                if (tps != 0.0 &&
                    !problem(is_finite(tps) ? errc::invalid_argument : errc::non_finite,
                             label + ": mTicksPerSecond is " + keyblend::impl::float_to_string(tps) +
                                 " (0 for unknown, or a positive rate)" +
                                 (lenient_ ? "; the default " +
                                                 keyblend::impl::float_to_string(opts_.default_ticks_per_second) +
                                                 " is used"
                                           : ""),
                             i))
                    return false;
                c.ticks_per_second = opts_.default_ticks_per_second;
                c.ticks_per_second_is_default = true;
            }
            if (!arrays_present(a->mChannels, a->mNumChannels, label + ": mChannels")) return false;
            out.ignored_mesh_channels = std::size_t{a->mNumMeshChannels} + a->mNumMorphMeshChannels;
            if (out.ignored_mesh_channels)
                warn(errc::unsupported, label + ": " + std::to_string(out.ignored_mesh_channels) +
                                            " mesh / morph channels (vertex animation) are not "
                                            "imported");
            channel_of_joint.assign(out_.skeleton.size(), error::no_index);
            bool first = true;
            for (unsigned k = 0; a->mChannels && k < a->mNumChannels; ++k) {
                const aiNodeAnim* na = a->mChannels[k];
                if (!na) continue;
                const end_behaviour pre = behaviour_of(na->mPreState);
                const end_behaviour post = behaviour_of(na->mPostState);
                out.pre_state = first || out.pre_state == pre ? pre : end_behaviour::mixed;
                out.post_state = first || out.post_state == post ? post : end_behaviour::mixed;
                first = false;
                if (!build_channel(*na, label + ", channel " + std::to_string(k), k,
                                   channel_of_joint, c))
                    return false;
            }
            c.duration = is_finite(a->mDuration) && a->mDuration > 0.0 && a->mDuration < 3.4e38
                             ? static_cast<float>(a->mDuration)
                             : last_key_time(c);
            // (Valid, but what an importer that lost keys leaves: assimp's BVH importer keeps one
            // frame and a duration of 4294967295 from `Frames: 4294967295` over 20 rows.)
            if (!c.channels.empty() && c.duration > last_key_time(c))
                warn(errc::out_of_range, label + ": mDuration " + keyblend::impl::float_to_string(c.duration) +
                                             " is past the last key (" +
                                             keyblend::impl::float_to_string(last_key_time(c)) +
                                             "): the last keys hold until then");
            choose_wrap(out, label);
            if (status ok = validate_clip(c, out_.skeleton); !ok)
                return fail(ok.error().code, label + ": " + ok.error().message);
            out_.animations.push_back(std::move(out));
        }
        return true;
    }

    void choose_wrap(animation& a, const std::string& label) {
        a.wrap_from_file = true;
        switch (a.post_state) {
        case end_behaviour::repeat: a.clip.wrap = wrap_mode::loop; break;
        case end_behaviour::constant: a.clip.wrap = wrap_mode::clamp; break;
        case end_behaviour::linear:
            a.clip.wrap = wrap_mode::clamp;
            warn(errc::unsupported, label + ": the channels extrapolate after their last key "
                                            "(aiAnimBehaviour_LINEAR); keyblend holds the last "
                                            "key (clamp)");
            break;
        case end_behaviour::mixed:
            warn(errc::unsupported, label + ": the channels disagree on what follows their last "
                                            "key; the clip uses the default wrap mode");
            [[fallthrough]];
        case end_behaviour::default_pose:
            a.clip.wrap = opts_.default_wrap;
            a.wrap_from_file = false;
            break;
        }
        if (a.pre_state != end_behaviour::default_pose && a.pre_state != end_behaviour::constant)
            warn(errc::unsupported, label + ": channels say '" + to_string(a.pre_state) +
                                        "' before their first key; keyblend holds the first key");
    }

    bool build_channel(const aiNodeAnim& na, const std::string& where, std::size_t index,
                       std::vector<std::size_t>& channel_of_joint, clip& c) {
        const std::string node = to_std(na.mNodeName);
        const std::string label = where + " (node " + in_quotes(node) + ")";
        const result<std::size_t> found = out_.skeleton.find(node);
        const std::size_t joint = found ? *found : out_.skeleton.size();
        if (joint >= out_.skeleton.size())
            return problem(errc::not_found,
                           label + " animates a node that does not exist" +
                               (lenient_ ? "; the channel is dropped" : ""),
                           index);
        if (channel_of_joint[joint] != error::no_index)
            return problem(errc::duplicate,
                           label + " animates the node channel " +
                               std::to_string(channel_of_joint[joint]) + " animates" +
                               (lenient_ ? "; the channel is dropped" : ""),
                           index);
        if (!arrays_present(na.mPositionKeys, na.mNumPositionKeys, label + ": mPositionKeys") ||
            !arrays_present(na.mRotationKeys, na.mNumRotationKeys, label + ": mRotationKeys") ||
            !arrays_present(na.mScalingKeys, na.mNumScalingKeys, label + ": mScalingKeys"))
            return false;
        if (!within(keys_used_,
                    std::size_t{na.mPositionKeys ? na.mNumPositionKeys : 0u} +
                        (na.mRotationKeys ? na.mNumRotationKeys : 0u) + (na.mScalingKeys ? na.mNumScalingKeys : 0u),
                    opts_.max_keys, "max_keys", "keys"))
            return false;
        channel ch;
        ch.joint = joint;
        bool ok = true;
        std::size_t not_unit = 0;
        // Appends a key; a bad time drops the channel (lenient) or fails (strict): ok = false.
        const auto add_time = [&](auto& track, double t, const auto& value, const char* kind,
                                  std::size_t k) {
            const float time = static_cast<float>(t);
            const std::string key = label + ", " + kind + " key " + std::to_string(k);
            const char* dropped = lenient_ ? "; the channel is dropped" : "";
            if (!is_finite(t) || !is_finite(time)) {
                problem(errc::non_finite, key + ": time is NaN or infinite" + dropped, k);
                ok = false;
            } else if (!track.empty() && time < track.last_time()) {
                problem(errc::unsorted,
                        key + ": time " + keyblend::impl::float_to_string(time) +
                            " is before the key before it" + dropped,
                        k);
                ok = false;
            } else {
                track.push_back(time, value); // (keys at one time: a cut, see sample.hpp)
            }
        };
        // Position and scaling keys: finite vectors.
        const auto add_vectors = [&](const aiVectorKey* keys, unsigned count, vector_track& track,
                                     const char* kind) {
            for (std::size_t k = 0; keys && k < count && ok; ++k) {
                const glm::vec3 v = to_glm(keys[k].mValue);
                if (is_finite(v)) {
                    add_time(track, keys[k].mTime, v, kind, k);
                    continue;
                }
                problem(errc::non_finite, label + ", " + kind + " key " + std::to_string(k) +
                                              " is NaN or infinite" +
                                              (lenient_ ? "; the channel is dropped" : ""),
                        k);
                ok = false;
            }
        };
        add_vectors(na.mPositionKeys, na.mNumPositionKeys, ch.translation, "position");
        add_vectors(na.mScalingKeys, na.mNumScalingKeys, ch.scale, "scaling");
        for (std::size_t k = 0; na.mRotationKeys && k < na.mNumRotationKeys && ok; ++k) {
            const aiQuaternion& q = na.mRotationKeys[k].mValue;
            const glm::quat r = make_quat(q.w, q.x, q.y, q.z);
            const float length = std::sqrt(quat_dot(r, r));
            if (!is_finite(r) || !(length > 1e-6f) || !is_finite(length)) {
                problem(errc::not_normalized, label + ", rotation key " + std::to_string(k) +
                                                  " is zero, NaN or infinite" +
                                                  (lenient_ ? "; the channel is dropped" : ""),
                        k);
                ok = false;
                break;
            }
            if (std::fabs(length - 1.0f) > key_traits<glm::quat>::unit_tolerance) ++not_unit;
            const float inv = 1.0f / length;
            add_time(ch.rotation, na.mRotationKeys[k].mTime,
                     make_quat(r.w * inv, r.x * inv, r.y * inv, r.z * inv), "rotation", k);
        }
        if (!ok) return lenient_; // strict: failure_ is set; lenient: the warning is recorded
        if (not_unit)
            warn(errc::not_normalized, label + ": " + std::to_string(not_unit) +
                                           " rotation keys were not unit length; normalised");
        if (!ch.has_trs()) return true; // a channel without keys animates nothing
        const double max_time = std::max({double(ch.translation.last_time()),
                                          double(ch.rotation.last_time()),
                                          double(ch.scale.last_time())});
        if (max_time > double(max_exact_tick))
            warn(errc::unsupported, label + ": key times past 2^24 ticks lose precision as float");
        channel_of_joint[joint] = index;
        c.channels.push_back(std::move(ch));
        return true;
    }

    const aiScene& in_;
    const options& opts_;
    const std::string& source_;
    const bool lenient_;
    std::vector<const aiNode*> nodes_; // per joint, its node
    scene out_;
    /// Embedded textures (aiScene::mTextures) as read: the image, or refused (warned about once).
    struct embedded {
        std::shared_ptr<const io::embedded_image> image;
        bool refused = false;
    };
    std::vector<embedded> textures_;
    std::vector<error> warnings_;
    bool too_many_warnings_ = false;
    error failure_;
    // What the options' limits count.
    std::size_t nodes_used_ = 0, meshes_used_ = 0, vertices_used_ = 0, keys_used_ = 0;
};

/// assimp's warnings and errors during one import (options::assimp_messages): a logger installed
/// for the capture's lifetime when none is installed (assimp's logger is process-wide).
class assimp_messages {
public:
    explicit assimp_messages(bool on) {
        if (!on || !Assimp::DefaultLogger::isNullLogger()) return;
        Assimp::DefaultLogger::create("", Assimp::Logger::NORMAL, 0);
        // (The logger owns and deletes the streams attached to it.)
        Assimp::DefaultLogger::get()->attachStream(new collector(messages_),
                                                   Assimp::Logger::Warn | Assimp::Logger::Err);
        installed_ = true;
    }
    ~assimp_messages() { stop(); }
    assimp_messages(const assimp_messages&) = delete;
    assimp_messages& operator=(const assimp_messages&) = delete;

    /// Removes the logger; the messages stay.
    void stop() {
        if (installed_) Assimp::DefaultLogger::kill();
        installed_ = false;
    }
    /// Each message without assimp's "Warn,  T0: " prefix and line end, at most 1000 of them.
    const std::vector<std::string>& messages() const { return messages_; }

private:
    struct collector : Assimp::LogStream {
        explicit collector(std::vector<std::string>& out) : out_(out) {}
        void write(const char* message) override {
            if (out_.size() >= 1000) return;
            std::string m(message ? message : "");
            const std::size_t colon = m.find(": ");
            if (m.compare(0, 4, "Warn") == 0 || m.compare(0, 5, "Error") == 0)
                if (colon != std::string::npos) m.erase(0, colon + 2);
            while (!m.empty() && (m.back() == '\n' || m.back() == '\r')) m.pop_back();
            out_.push_back(std::move(m));
        }
        std::vector<std::string>& out_;
    };
    std::vector<std::string> messages_;
    bool installed_ = false;
};

inline status check_options(const options& o, const std::string& source) {
    if (o.max_influences < 1 || o.max_influences > max_influences_per_vertex)
        return make_error(errc::invalid_argument,
                          source + ": options.max_influences is " +
                              std::to_string(o.max_influences) + " (1 to " +
                              std::to_string(max_influences_per_vertex) + ")");
    if (!is_finite(o.default_ticks_per_second) || !(o.default_ticks_per_second > 0.0f))
        return make_error(errc::invalid_argument,
                          source + ": options.default_ticks_per_second is " +
                              keyblend::impl::float_to_string(o.default_ticks_per_second) +
                              " (it must be finite and > 0)");
    return {};
}

} // namespace impl

inline result<scene> from_scene(const aiScene& source, const options& opts,
                                const std::string& source_name) {
    if (status ok = impl::check_options(opts, source_name); !ok) return ok.error();
    return impl::converter(source, opts, source_name).run();
}

inline result<scene> load_scene(const std::string& path, const options& opts) {
    if (status ok = impl::check_options(opts, path); !ok) return ok.error();
    // The first bytes, to tell an .X file (and a path that is not a readable file, which assimp
    // would report as an unknown format).
    unsigned char head[4] = {};
    std::size_t got = 0;
    const auto into_head = [&head](std::size_t) { return head; };
    if (status st = keyblend::impl::read_file(path, sizeof head, into_head, got); !st) return st.error();
    const bool is_x = got == sizeof head && std::memcmp(head, "xof ", 4) == 0;
    std::vector<unsigned char> bytes;
    if (is_x && opts.check_xfiles) {
        // The whole file, once: keyblend's parser checks it, assimp reads the same bytes.
        std::size_t size = 0;
        const auto into_bytes = [&bytes](std::size_t n) {
            bytes.resize(n);
            return bytes.data();
        };
        if (status st = keyblend::impl::read_whole_file(path, into_bytes, size); !st) return st.error();
    }

    impl::assimp_messages log(opts.assimp_messages);
    Assimp::Importer importer;
    importer.SetPropertyBool(AI_CONFIG_IMPORT_NO_SKELETON_MESHES, true);
    importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, false);
    importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    const aiScene* s = nullptr;
    if (is_x && opts.check_xfiles) {
        io::load_options xo;
        xo.mode = io::parse_mode::lenient;
        const result<io::xfile> x = io::load_xfile_memory(bytes.data(), bytes.size(), xo, path);
        const error* bad = !x ? &x.error() : nullptr;
        if (x)
            for (const error& w : x->warnings)
                if (w.code == errc::parse_error && !bad) bad = &w;
        if (bad && bad->code != errc::io_error)
            return keyblend::impl::make_error(
                errc::parse_error,
                "not handed to assimp, whose .X importer does not check its input (options::"
                "check_xfiles): keyblend's .X parser finds the file malformed: " +
                    bad->message,
                bad->index);
        s = importer.ReadFileFromMemory(bytes.data(), bytes.size(), 0, "x");
    } else {
        s = importer.ReadFile(path, 0);
    }
    // Post-processing as a second step: a scene without meshes (a BVH file, once
    // AI_CONFIG_IMPORT_NO_SKELETON_MESHES keeps assimp from making one up) is a skeleton, which
    // ValidateDataStructure accepts only when the scene is flagged incomplete. The scene belongs
    // to `importer`, which is not const.
    if (s && s->mNumMeshes == 0)
        const_cast<aiScene*>(s)->mFlags |= AI_SCENE_FLAGS_INCOMPLETE;
    if (s) s = importer.ApplyPostProcessing(post_processing());
    log.stop();
    if (!s)
        return keyblend::impl::make_error(errc::parse_error,
                                          path + ": assimp: " + importer.GetErrorString());
    result<scene> r = from_scene(*s, opts, path);
    if (r)
        for (const std::string& m : log.messages())
            r->warnings.push_back(keyblend::impl::make_error(errc::parse_error, path + ": assimp: " + m));
    return r;
}

} // namespace assimp
} // namespace keyblend
