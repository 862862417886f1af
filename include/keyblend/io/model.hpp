// keyblend — what every loader produces and how every loader reports bad input: the mesh, skin,
// morph-target and material types, the options policy (strict or lenient, with limits), and
// warnings for what a load repaired or dropped. The .X loader (io/xfile.hpp), the glTF loader
// (gltf.hpp) and the BVH reader (bvh.hpp) all fill these types; skeletons and clips are the core's
// (skeleton.hpp, clip.hpp).
//
// SPDX-License-Identifier: MIT
//
// One policy for bad input, in every loader:
// - parse_mode::lenient (the default) loads what can be interpreted: what has an obvious repair is
//   repaired, what cannot be interpreted is dropped, and each case is a load_warning naming the
//   place (line and column, byte offset, or JSON pointer) and what was done;
// - parse_mode::strict fails on the first problem lenient mode would repair or drop.
// In both modes nothing a file holds can make a loader crash, read out of bounds, or work or
// allocate out of proportion to the file's size: every count is checked against what the input
// can hold before anything is allocated for it, and load_options' limits end a load with
// errc::unsupported naming the limit.
#pragma once

#include "../clip.hpp"
#include "../error.hpp"
#include "../skeleton.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// The inline namespace of the compiled loaders' functions, named after the GLM memory layout they
// were compiled for (GLM_FORCE_DEFAULT_ALIGNED_GENTYPES, GLM_FORCE_QUAT_DATA_WXYZ): a program
// compiled with another layout than a loader library fails to link instead of reading vectors at
// the wrong offsets.
#if GLM_CONFIG_ALIGNED_GENTYPES == GLM_ENABLE && defined(GLM_FORCE_DEFAULT_ALIGNED_GENTYPES)
#if defined(GLM_FORCE_QUAT_DATA_WXYZ)
#define KEYBLEND_IO_GLM_LAYOUT glm_aligned_wxyz
#else
#define KEYBLEND_IO_GLM_LAYOUT glm_aligned_xyzw
#endif
#else
#if defined(GLM_FORCE_QUAT_DATA_WXYZ)
#define KEYBLEND_IO_GLM_LAYOUT glm_packed_wxyz
#else
#define KEYBLEND_IO_GLM_LAYOUT glm_packed_xyzw
#endif
#endif

namespace keyblend {
namespace io {

/// What a loader does with a part of a file that is wrong (see the top of this file; each loader's
/// header lists its repairs).
enum class parse_mode : unsigned char {
    /// Load everything that can be interpreted; repair or drop the rest, with a warning each.
    lenient,
    /// Fail on the first problem that lenient mode would repair or drop. A file that loads in
    /// strict mode holds exactly what it says. (Warnings about keyblend's own limits, such as more
    /// than max_influences_per_vertex influences, are warnings in both modes.)
    strict,
};

/// How a file is loaded: the mode, and limits that bound the work and memory any input can cost.
/// Each limit exceeded ends the load with errc::unsupported and a message naming it
/// ("load_options::max_joints (65536)"), in either mode. The defaults are far above any real model
/// and far below what exhausts a machine; raise them to load a file that needs more. Every loader
/// takes this one type and reads the limits that apply to its format.
struct load_options {
    parse_mode mode = parse_mode::lenient;
    /// Bytes a compressed file (.X `tzip`/`bzip`, a Draco mesh) may inflate to. The size the file
    /// announces is checked first, then the data as it inflates.
    std::size_t max_decompressed_bytes = std::size_t{256} << 20;
    /// Objects of any kind the format has (.X data objects and material references; glTF nodes,
    /// accessors, buffer views, meshes, primitives, ...).
    std::size_t max_objects = std::size_t{1} << 18;
    /// Joints of the skeleton (.X frames, glTF nodes, BVH joints).
    std::size_t max_joints = 65536;
    /// Meshes (for glTF: mesh instances, one per node or skin using a mesh's primitive).
    std::size_t max_meshes = 65536;
    /// Vertices of all meshes together.
    std::size_t max_vertices = std::size_t{1} << 24;
    /// Animation keys of all tracks together (a BVH frame counts one key per channel).
    std::size_t max_keys = std::size_t{1} << 24;
    /// Warnings; more fail the load: the input is not a damaged file of the format.
    std::size_t max_warnings = 1000;
};

/// What a warning reports was done.
enum class warning_action : unsigned char {
    repaired, ///< a value was replaced by a valid one (the message says by what)
    dropped,  ///< part of the file is left out (the message says which part)
    note,     ///< nothing of the file is lost or changed, but keyblend's result differs from it in
              ///< a way the message describes (per-vertex normals, vertices without influence)
};

/// "repaired", "dropped" or "note".
inline const char* to_string(warning_action a) {
    switch (a) {
    case warning_action::repaired: return "repaired";
    case warning_action::dropped: return "dropped";
    case warning_action::note: return "note";
    }
    return "unknown";
}

/// A problem the load stepped over: an error (code, message naming the place, index) and what was
/// done about it.
struct load_warning : error {
    warning_action action = warning_action::dropped;
};

/// An image a file holds inside itself (glTF: in a buffer view or a data: URI), as stored.
struct embedded_image {
    /// Its media type as the file declares it ("image/png", "image/jpeg", ...).
    std::string mime_type;
    /// The encoded image (a PNG or JPEG file's bytes, ...), not decoded.
    std::vector<unsigned char> bytes;
};

/// "image/png" or "image/jpeg" when `bytes` start as a PNG or JPEG file does (its signature; the
/// first 8 bytes are enough), null for anything else: glTF's core holds these two types only.
inline const char* image_type_of(const unsigned char* bytes, std::size_t size) {
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', 13, 10, 26, 10};
    if (size >= 8 && std::equal(png, png + 8, bytes)) return "image/png";
    if (size >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) return "image/jpeg";
    return nullptr;
}

/// The folders and file name a material's texture_file names, relative to the model's folder:
/// the name split at backslashes (Windows separators, written doubled in .X text) and slashes,
/// empty parts dropped. An absolute name (a leading separator or a drive letter), a path on the
/// artist's machine, gives its file name alone. The glTF writer makes its URI of these; the
/// keyblend tool looks for the file by them.
inline std::vector<std::string> texture_path_segments(const std::string& name) {
    std::vector<std::string> parts;
    std::string part;
    for (const char c : name) {
        if (c == '\\' || c == '/') {
            if (!part.empty()) parts.push_back(std::move(part));
            part.clear();
        } else {
            part += c;
        }
    }
    if (!part.empty()) parts.push_back(std::move(part));
    const bool absolute = !name.empty() && (name[0] == '\\' || name[0] == '/' || (name.size() > 1 && name[1] == ':'));
    if (absolute && !parts.empty()) parts.erase(parts.begin(), parts.end() - 1);
    return parts;
}

/// A surface's colours and texture, as much of a material as skinned-mesh rendering needs.
struct material {
    /// The material's name; empty when unnamed.
    std::string name;
    /// Diffuse (base) colour: red, green, blue, alpha. .X: faceColor; glTF: baseColorFactor.
    glm::vec4 diffuse{1.0f};
    /// Specular exponent (.X `power`); 0 when the format has none.
    float power = 0.0f;
    glm::vec3 specular{0.0f};
    glm::vec3 emissive{0.0f};
    /// The diffuse (base colour) texture's file name or URI as the file writes it (.X: exactly
    /// between the quotes, so a `\\` stays two characters); empty when there is none. For an
    /// image the file embeds, "image N" (its index; glTF) and texture_image holds it.
    std::string texture_file;
    /// The diffuse texture's image when the file embeds it (glTF: a buffer view or a data: URI),
    /// shared by the materials that use it; null when the texture is a file or there is none.
    std::shared_ptr<const embedded_image> texture_image;
};

/// One bone of a skinned mesh (skeleton.hpp): the joint it follows and its offset matrix.
using keyblend::skin_bone;

/// The most influences per vertex a mesh_skin holds.
inline constexpr std::size_t max_influences_per_vertex = 8;

/// A mesh's skin: bones and per-vertex influences in a fixed-width layout that skinning_job reads
/// through strided spans. With k = influences_per_vertex and n vertices:
///
///     palette[b] = model[bones[b].joint] * bones[b].offset
///     skinned(v) = sum over i < k of weights[v*k + i] * palette[bone_indices[v*k + i]] * position(v)
///
/// A vertex's influences are sorted by decreasing weight; unused slots hold weight 0 and bone
/// index 0. k is the most influences any vertex has, capped at max_influences_per_vertex (a vertex
/// with more keeps its largest, rescaled to their former sum, with a warning); 0 when the mesh has
/// no bones. Each loader documents how it fills weights from its format.
struct mesh_skin {
    /// Empty: the mesh is not skinned.
    std::vector<skin_bone> bones;
    std::size_t influences_per_vertex = 0;
    /// vertex_count * influences_per_vertex indices into `bones`.
    std::vector<std::uint16_t> bone_indices;
    /// vertex_count * influences_per_vertex weights.
    std::vector<float> weights;
};

/// A morph target (blend shape): per-vertex displacements added, times the target's weight, to the
/// mesh's own attributes before skinning (morph.hpp). Each array is empty or has one entry per
/// vertex of the mesh.
struct morph_target {
    /// The target's name (glTF: `mesh.extras.targetNames`); may be empty.
    std::string name;
    std::vector<glm::vec3> positions;
    std::vector<glm::vec3> normals;
    /// xyz displacements of the tangents (the handedness sign in w is not morphed).
    std::vector<glm::vec3> tangents;
};

/// The joint index of a mesh that no joint places (a .X top-level Mesh).
inline constexpr std::size_t no_joint = static_cast<std::size_t>(-1);

/// One mesh as every loader gives it: vertices, triangles, materials, skin and morph targets.
struct mesh {
    /// The mesh's name; empty when unnamed.
    std::string name;
    /// The joint whose model matrix places this mesh when it is not skinned, and whose morph
    /// weights (local_pose::weights) drive its morph targets; no_joint for a mesh no joint holds.
    std::size_t joint = no_joint;

    /// The vertices. All finite (lenient mode zeroes NaN and infinities, with a warning).
    std::vector<glm::vec3> positions;
    /// One normal per vertex, or empty.
    std::vector<glm::vec3> normals;
    /// One tangent per vertex (xyz, and the bitangent's handedness sign in w), or empty.
    std::vector<glm::vec4> tangents;
    /// One (u, v) per vertex, or empty.
    std::vector<glm::vec2> texcoords;
    /// Triangles: 3 vertex indices each, all < positions.size(), in the file's winding.
    std::vector<std::uint32_t> indices;

    /// The materials, and for each triangle the index of its material (< materials.size()). Both
    /// empty when the file gives none.
    std::vector<material> materials;
    std::vector<std::uint32_t> triangle_materials;

    mesh_skin skin;
    /// Morph targets (empty: none); their weights are the morph weights of `joint`.
    std::vector<morph_target> morph_targets;

    bool is_skinned() const noexcept { return !skin.bones.empty(); }
};

} // namespace io
} // namespace keyblend
