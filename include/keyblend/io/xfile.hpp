// keyblend — the DirectX .X loader: text, binary and MSZIP-compressed files with 32- or 64-bit
// floats, from a path or a memory buffer, into keyblend's own types (skeleton, meshes with skins,
// clips).
//
// SPDX-License-Identifier: MIT
//
// Depends on keyblend's core and on zlib (for the compressed encodings): link `keyblend::io`.
//
// How it reads. One reader of data objects (Frame, Mesh, SkinWeights, AnimationSet, ...) runs over
// one token stream. The encodings only differ in how tokens are produced: text is split on white
// space and `; , { }`; binary is read as little-endian tokens; `tzip`/`bzip` are inflated first
// (MSZIP through zlib) and then read as text/binary. The reader knows the standard templates'
// layouts and reads each data object's values as one stream of numbers, which is what binary files
// need (consecutive lists may be merged) and what makes text separators carry no meaning: counts in
// the data (nVertices, nKeys, nValues, ...) decide the structure, and data that disagrees with its
// counts is reported. Templates, and data objects this loader does not use, are skipped with their
// nesting. Nothing is interpreted twice and nothing allocates per token. References (`{ Name }`,
// `{ Name <GUID> }`, `{ <GUID> }`) resolve by name, or by GUID when they give no name (an object's
// GUID is the one right after its '{'), in text and binary alike.
//
// Conventions (REFERENCE.md §1/§3): FrameTransformMatrix, SkinWeights.matrixOffset and matrix keys
// load straight into glm::mat4 (make_mat4, no transpose); rotation keys are stored w, x, y, z and
// are conjugated into GLM's convention (`make_quat(w, -x, -y, -z)`), so that a bind-pose key
// reproduces its frame's matrix.
//
// Bad input. Every problem is reported with what was expected and where: `line L, column C` in a
// text file, `byte offset N` in a binary one, `byte offset N of the decompressed data` in a
// compressed one (with the line and column for compressed text). parse_mode::strict (the default)
// fails on the first problem; parse_mode::lenient drops the broken part (the innermost data object
// that is malformed, a SkinWeights entry whose vertex index is out of range, a bone or animation
// naming a frame that does not exist, ...), records a warning and goes on. Nothing a file contains
// can make the loader crash, read out of bounds or allocate more than a small multiple of the
// file's size.
#pragma once

#include "../clip.hpp"
#include "../error.hpp"
#include "../skeleton.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace keyblend {
namespace io {

/// The encoding named in a file's 16-byte header.
enum class xfile_format : unsigned char {
    text,              ///< `txt `
    binary,            ///< `bin `
    compressed_text,   ///< `tzip`: MSZIP-compressed text
    compressed_binary, ///< `bzip`: MSZIP-compressed binary
};

/// The header's four-letter name without padding: "txt", "bin", "tzip" or "bzip".
inline const char* to_string(xfile_format f);

/// What the loader does with a malformed part of a file.
enum class parse_mode : unsigned char {
    /// The first problem fails the load with an error naming it and its place. The default: a file
    /// that loads in strict mode holds exactly what it says.
    strict,
    /// A broken part is dropped and reported in xfile::warnings; the rest loads. What is dropped:
    /// - a data object whose contents are malformed (bad number, wrong count, unexpected token):
    ///   the object and its children (a Frame keeps what was read before the problem);
    /// - a SkinWeights entry whose vertex index is out of range: that entry only;
    /// - a SkinWeights naming a frame that does not exist: that bone (see mesh_skin);
    /// - an AnimationKey whose key type its Animation already has: that AnimationKey;
    /// - an Animation naming a missing frame, naming none, animating a frame another Animation of
    ///   the same set animates, or whose keys fail validate_clip (unsorted or repeated times,
    ///   non-unit rotations, NaN): that Animation;
    /// - an AnimTicksPerSecond of 0: ignored;
    /// - two frames with the same name: the later ones are renamed (duplicate_names::rename);
    /// - a file that ends inside an object: the innermost unfinished object (enclosing Frames keep
    ///   what they had). Problems the reader cannot step over (an unknown binary token, a corrupt
    ///   compressed block) end the file there, as a truncation does.
    /// After 1000 warnings the load fails (errc::parse_error): the input is not a damaged .X file.
    lenient,
};

struct xfile_options {
    parse_mode mode = parse_mode::strict;
};

/// A Material data object (with its TextureFilename).
struct xfile_material {
    /// The data object's name; empty when unnamed.
    std::string name;
    /// faceColor: red, green, blue, alpha.
    glm::vec4 face_color{1.0f};
    float power = 0.0f;
    glm::vec3 specular{0.0f};
    glm::vec3 emissive{0.0f};
    /// The TextureFilename (or TextureFileName) string exactly as written between the quotes (a
    /// `\\` stays two characters); empty when the material has none.
    std::string texture_file;
};

/// An XSkinMeshHeader, as written. `present` is false when the mesh has none.
struct skin_mesh_header {
    bool present = false;
    std::uint16_t max_weights_per_vertex = 0;
    std::uint16_t max_weights_per_face = 0;
    std::uint16_t bone_count = 0;
};

/// One SkinWeights object: a bone of a skinned mesh.
struct skin_bone {
    /// transformNodeName: the frame this bone follows.
    std::string name;
    /// That frame's joint index in xfile::skeleton.
    std::size_t joint = 0;
    /// matrixOffset (make_mat4, no transpose): mesh space to the bone's bind space. The skinning
    /// matrix of the bone is `model[joint] * offset`.
    glm::mat4 offset = glm::mat4(1.0f);
};

/// The most influences per vertex a mesh_skin holds.
inline constexpr std::size_t max_influences_per_vertex = 8;

/// A mesh's skin: bones and per-vertex influences in a fixed-width layout that a skinning kernel
/// reads through strided spans. With k = influences_per_vertex and n vertices:
///
///     palette[b] = model[bones[b].joint] * bones[b].offset
///     skinned(v) = sum over i < k of weights[v*k + i] * palette[bone_indices[v*k + i]] *
///     position(v)
///
/// - An influence is a (bone, vertex, weight) entry of a SkinWeights with a weight other than 0
///   (a zero weight changes nothing and takes no slot). k is the largest number of influences any
///   vertex has (not XSkinMeshHeader's figure), capped at max_influences_per_vertex; 0 when the
///   mesh has no bones.
/// - A vertex's influences are sorted by decreasing weight (ties: SkinWeights order). Unused slots
///   hold weight 0 and bone index 0.
/// - Weights are as in the file (a sane file's sum to 1 per vertex; they are not renormalised),
///   except when some of a vertex's influences are dropped — more than 8 (the 8 largest are kept,
///   with a warning), or bones dropped in lenient mode: the kept ones are then scaled to sum to
///   what all of the vertex's weights summed to. A vertex no kept bone influences has all weights
///   0, which skins it to the origin, as D3DX does (a warning counts such vertices).
/// - A vertex listed twice for one bone gets two influences (their effect adds up, as in D3DX).
struct mesh_skin {
    skin_mesh_header header;
    /// One per SkinWeights kept, in file order. Empty: the mesh is not skinned.
    std::vector<skin_bone> bones;
    std::size_t influences_per_vertex = 0;
    /// vertex_count * influences_per_vertex indices into `bones`.
    std::vector<std::uint16_t> bone_indices;
    /// vertex_count * influences_per_vertex weights.
    std::vector<float> weights;
};

/// The joint index of a mesh that hangs under no frame (a top-level Mesh).
inline constexpr std::size_t no_joint = static_cast<std::size_t>(-1);

/// A Mesh data object with its normals, texture coordinates, materials and skin.
struct xfile_mesh {
    /// The data object's name; empty when unnamed (tiny.x's mesh is).
    std::string name;
    /// The joint (frame) whose model matrix places this mesh, or no_joint for a top-level mesh.
    std::size_t joint = no_joint;

    /// The vertices, in file order.
    std::vector<glm::vec3> positions;
    /// Faces as written: how many polygons the file has.
    std::size_t face_count = 0;
    /// Triangles: 3 vertex indices each (all < positions.size()). A polygon of n corners becomes
    /// the n - 2 triangles of a fan from its first corner, in the file's winding.
    std::vector<std::uint32_t> indices;
    /// For each triangle, the index of the polygon (face) it comes from.
    std::vector<std::uint32_t> triangle_faces;

    /// One normal per vertex, or empty when the mesh has no MeshNormals. The file indexes normals
    /// per face corner; a vertex gets the normal of its first corner (in face order), and (0, 0, 0)
    /// when no face uses it. When some vertex is given different normals at different corners (hard
    /// edges the exporter did not split), normals_per_vertex_exact is false, a warning says so, and
    /// normal_values / normal_indices hold the exact data.
    std::vector<glm::vec3> normals;
    bool normals_per_vertex_exact = true;
    /// MeshNormals as written: the normals, and for each triangle corner (parallel to `indices`)
    /// the index of its normal in normal_values. Empty without MeshNormals.
    std::vector<glm::vec3> normal_values;
    std::vector<std::uint32_t> normal_indices;

    /// One (u, v) per vertex, or empty when the mesh has no MeshTextureCoords.
    std::vector<glm::vec2> texcoords;

    /// MeshMaterialList: the materials, and for each triangle the index of its material
    /// (< materials.size()). Both empty without a MeshMaterialList. When the list gives fewer face
    /// indices than faces, the remaining faces use its last index (as D3DX and assimp do).
    std::vector<xfile_material> materials;
    std::vector<std::uint32_t> triangle_materials;

    mesh_skin skin;

    bool is_skinned() const noexcept { return !skin.bones.empty(); }
};

/// An AnimationOptions data object; `present` is false when the Animation has none. The values are
/// kept as written: open_closed 0 = closed (the animation loops), 1 = open; position_quality
/// 0 = spline, 1 = linear. keyblend does not act on them: clips always interpolate linearly, and
/// the caller chooses clip::wrap.
struct animation_options {
    bool present = false;
    std::uint32_t open_closed = 0;
    std::uint32_t position_quality = 0;
};

/// Total keys of each kind in a clip (key types 3 and 4 both count as matrix keys).
struct key_counts {
    std::size_t rotation = 0;
    std::size_t scale = 0;
    std::size_t position = 0;
    std::size_t matrix = 0;
};

/// One AnimationSet.
struct xfile_animation_set {
    /// The set as a clip, one channel per Animation kept, in file order; times in ticks, every
    /// track interpolating linearly (rotations by short-path slerp, matrices element-wise).
    /// - name: the set's name (may be empty);
    /// - duration: the last key time (last_key_time), 0 for a set without keys;
    /// - ticks_per_second: the AnimTicksPerSecond in force — the last one before the set in the
    ///   file, or, when none comes before it, the first one after it; when the file has none,
    ///   default_ticks_per_second (4800) with ticks_per_second_is_default set;
    /// - wrap: the clip default (loop).
    /// It passes validate_clip against xfile::skeleton.
    keyblend::clip clip;
    /// Parallel to clip.channels: each Animation's own name (usually empty) and AnimationOptions.
    std::vector<std::string> animation_names;
    std::vector<animation_options> options;
};

/// Counts the keys of each kind in a clip.
inline key_counts count_keys(const clip& c);

/// Everything a .X file holds that keyblend uses.
struct xfile {
    xfile_format format = xfile_format::text;
    /// 32 or 64: the float size named in the header (keyblend stores floats either way).
    unsigned float_bits = 32;
    /// 302 or 303.
    unsigned version = 303;

    /// The frames, as joints: one joint per Frame data object, in file order (which is
    /// parent-first, so joint i is the i-th Frame of the file: skeleton.joint_of_source() is the
    /// identity). Bind local matrices are the FrameTransformMatrix (the identity for a frame
    /// without one). Unnamed frames are named `unnamed_frame_<i>` (i the joint index, with `_2`,
    /// `_3`, ... appended should the file use that name already).
    keyblend::skeleton skeleton;
    /// Every Mesh data object, in file order.
    std::vector<xfile_mesh> meshes;
    /// Every AnimationSet, in file order.
    std::vector<xfile_animation_set> animation_sets;
    /// Problems the load stepped over: in lenient mode the parts dropped; in both modes the lossy
    /// but valid cases (inexact per-vertex normals, vertices with more than 8 influences or with
    /// none left, references inside frames, key times past max_exact_tick). Each message names the
    /// place; error::index repeats a vertex, key or entry index where the message names one.
    std::vector<error> warnings;
};

/// Loads a .X file from `path` (one read of the whole file).
///
/// Errors (the message starts with the path and names the place, see above):
/// - errc::io_error: the file cannot be opened or read;
/// - errc::unsupported: a header that is an .X header but names a version other than 0302/0303, an
///   encoding other than txt/bin/tzip/bzip, or a float size other than 0032/0064;
/// - errc::parse_error: anything malformed, including a truncated file, a corrupt compressed block,
///   counts that disagree with their data, face or SkinWeights vertex indices out of range
///   (error::index is the bad index), a key with the wrong number of values, an unknown key type;
/// - errc::not_found: a SkinWeights or Animation naming a frame that does not exist, a
///   MeshMaterialList referencing a material that does not exist;
/// - errc::duplicate: two frames with the same name, two Animations of one set animating one frame,
///   two AnimationKeys of one Animation with the same key type;
/// - errc::invalid_argument: an AnimTicksPerSecond of 0, an Animation without a frame reference;
/// - the errors of skeleton::from_parents (non-finite FrameTransformMatrix) and validate_clip
///   (unsorted or repeated key times, non-unit rotation keys, NaN), prefixed with the place.
/// - errc::unsupported also for a mesh with more than 65536 bones (bone indices are 16-bit).
/// In lenient mode only these fail: io_error, a missing or unsupported header, more than 65536
/// bones in a mesh, and more than 1000 problems.
inline result<xfile> load_xfile(const std::string& path, const xfile_options& options = {});

/// Loads a .X file from memory. `source_name` starts every message (a file name, or the default).
/// The buffer is only read during the call. Errors as load_xfile, except io_error.
inline result<xfile> load_xfile_memory(const void* data, std::size_t size,
                                       const xfile_options& options = {},
                                       std::string_view source_name = "<memory>");

} // namespace io
} // namespace keyblend

#include "impl/xfile.impl.hpp"
