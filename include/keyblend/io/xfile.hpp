// keyblend — the DirectX .X loader: text, binary and MSZIP-compressed files with 32- or 64-bit
// floats, from a path or a memory buffer, into keyblend's own types (skeleton, meshes with skins,
// clips).
//
// SPDX-License-Identifier: MIT
//
// Building it. The loader needs an inflate library for compressed files (ISA-L or zlib), and that
// library's header must not reach the files that use the loader. So the loader is compiled once:
// - CMake: link `keyblend::io`, a small compiled library (ISA-L's inflate when CMake finds it,
//   zlib's otherwise). It defines KEYBLEND_IO_LIBRARY for its users: this header then only
//   declares, and a file that includes it sees neither <zlib.h> nor ISA-L's header.
// - Without CMake: compile with KEYBLEND_IO_LIBRARY defined everywhere, and in exactly one .cpp
//   `#define KEYBLEND_IO_IMPLEMENTATION` before including this header; link zlib (-lz), or define
//   KEYBLEND_IO_ISAL there too and link ISA-L (-lisal).
// - Neither macro: everything is defined inline in every file that includes this header, as in
//   keyblend's other headers, with zlib (link -lz); those files then see <zlib.h>.
// Use one way per program. The functions live in an inline namespace named after the GLM memory
// layout they were compiled for (GLM_FORCE_DEFAULT_ALIGNED_GENTYPES, GLM_FORCE_QUAT_DATA_WXYZ),
// so a program compiled with another layout than the library fails to link instead of reading
// vectors at the wrong offsets.
//
// How it reads. One reader of data objects (Frame, Mesh, SkinWeights, AnimationSet, ...) runs over
// one token stream. The encodings only differ in how tokens are produced: text is split on white
// space and `; , { }`; binary is read as little-endian tokens; `tzip`/`bzip` are inflated first
// (MSZIP) and then read as text/binary. The reader knows the standard templates' layouts and reads
// each data object's values as one stream of numbers, which is what binary files need (consecutive
// lists may be merged) and what makes text separators carry no meaning: counts in the data
// (nVertices, nKeys, nValues, ...) decide the structure, and data that disagrees with its counts
// is reported. Templates, and data objects this loader does not use, are skipped with their
// nesting. References (`{ Name }`, `{ Name <GUID> }`, `{ <GUID> }`) resolve by name, or by GUID
// when they give no name (an object's GUID is the one right after its '{'), in text and binary.
//
// Conventions (REFERENCE.md §1/§3): FrameTransformMatrix, SkinWeights.matrixOffset and matrix keys
// load straight into glm::mat4 (make_mat4, no transpose); rotation keys are stored w, x, y, z and
// are conjugated into GLM's convention (`make_quat(w, -x, -y, -z)`), so that a bind-pose key
// reproduces its frame's matrix.
//
// Bad input. The default, parse_mode::lenient, loads what D3DX and assimp load: it repairs what
// has an obvious repair (a rotation key that is not unit length is normalised, keys out of time
// order are sorted, NaN vertex data is zeroed, ...), drops what cannot be interpreted (a malformed
// object, a bone naming a frame that does not exist, ...) and says so in xfile::warnings, each
// warning naming the place and what was done. parse_mode::strict, for validation pipelines, fails
// on the first such problem instead. Every message names the place: `line L, column C` in a text
// file, `byte offset N` in a binary one, `byte offset N of the decompressed data` in a compressed
// one (with the line and column for compressed text); names from the file appear as bounded,
// escaped excerpts.
//
// Bounded work. Nothing a file contains can make the loader crash or read out of bounds, and no
// file can make it allocate or work out of proportion to its (decompressed) size: every count is
// checked against what the rest of the input can hold before anything is allocated for it, every
// step is near-linear (hash lookups for names and GUIDs, a line index for positions, O(n log n)
// sorts), and load_options' limits (decompressed bytes, data objects, joints, meshes, vertices,
// keys, warnings) end the load with an error naming the limit.
#pragma once

#include "../clip.hpp"
#include "../error.hpp"
#include "../skeleton.hpp"
#include "model.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// The loader's functions: defined once (the keyblend::io library, or the file that defines
// KEYBLEND_IO_IMPLEMENTATION), or inline everywhere (neither macro). See the top of this file.
#if defined(KEYBLEND_IO_LIBRARY) || defined(KEYBLEND_IO_IMPLEMENTATION)
#define KEYBLEND_IO_FUNCTION
#else
#define KEYBLEND_IO_FUNCTION inline
#endif


namespace keyblend {
namespace io {
inline namespace KEYBLEND_IO_GLM_LAYOUT {

/// The encoding named in a file's 16-byte header.
enum class xfile_format : unsigned char {
    text,              ///< `txt `
    binary,            ///< `bin `
    compressed_text,   ///< `tzip`: MSZIP-compressed text
    compressed_binary, ///< `bzip`: MSZIP-compressed binary
};

/// The header's four-letter name without padding: "txt", "bin", "tzip" or "bzip".
KEYBLEND_IO_FUNCTION const char* to_string(xfile_format f);

/// The .X loader reads io::load_options (io/model.hpp): its mode, and the limits max_decompressed_bytes
/// (what a `tzip`/`bzip` file may inflate to, header included), max_objects (data objects of any
/// type, and the `{ Material }` references of MeshMaterialLists), max_joints (Frames), max_meshes
/// (Mesh objects), max_vertices, max_keys (keys of all AnimationKeys) and max_warnings.
///
/// What parse_mode::lenient (the default) does with a .X file:
/// - repaired: a rotation key that is not unit length is normalised (only a zero, NaN or infinite
///   quaternion is not a rotation: that key is dropped); keys out of time order are sorted by time
///   (keys sharing a time keep their order: a cut, see sample.hpp); a NaN or infinite vertex
///   position, normal or texture coordinate becomes 0, a material colour its default; a NaN or
///   infinite FrameTransformMatrix, or one whose product with its parents' overflows, becomes the
///   identity; a NaN matrixOffset becomes the inverse of its frame's bind-pose model matrix (what
///   exporters write); an Animation animating a frame an earlier Animation of the set animates is
///   merged into that one's channel (its key types the earlier one lacks are added, the others
///   dropped); a channel with matrix keys and rotation/scale/position keys keeps the matrix keys
///   (sampling would use them); two frames with one name: the later are renamed `name#2`,
///   `name#3`, ...; faces that reference a missing material use a default material; more face
///   material indices than faces: the extra ones are ignored;
/// - dropped: a key with NaN or infinity; a face with fewer than 3 corners or a vertex index out
///   of range (it makes no triangle); a SkinWeights entry whose vertex index is out of range or
///   weight not finite; a SkinWeights naming a frame that does not exist (see mesh_skin); an Animation
///   naming a missing frame or none; an AnimTicksPerSecond of 0; a data object whose contents are
///   malformed (bad number, wrong count, unexpected token): that object and its children (a Frame
///   keeps what was read before the problem); a file that ends inside an object: the unfinished
///   objects (enclosing Frames keep what they had). Problems the reader cannot step over (an
///   unknown binary token, a corrupt compressed block) end the file there, as a truncation does.
/// More than load_options::max_warnings warnings fail the load.

/// An XSkinMeshHeader, as written. `present` is false when the mesh has none.
struct skin_mesh_header {
    bool present = false;
    std::uint16_t max_weights_per_vertex = 0;
    std::uint16_t max_weights_per_face = 0;
    std::uint16_t bone_count = 0;
};

/// A Mesh data object: the common mesh (io/model.hpp) and what only .X files say about it.
///
/// - joint: the frame whose model matrix places the mesh, or no_joint for a top-level mesh.
/// - positions: in file order.
/// - indices: a polygon of n corners becomes the n - 2 triangles of a fan from its first corner,
///   in the file's winding. (Lenient mode: a face with fewer than 3 corners or a vertex index out
///   of range makes no triangle.)
/// - normals: one per vertex, or empty when the mesh has no MeshNormals. The file indexes normals
///   per face corner; a vertex gets the normal of its first corner (in face order), and (0, 0, 0)
///   when no face uses it. When some vertex is given different normals at different corners (hard
///   edges the exporter did not split), normals_per_vertex_exact is false, a note says so, and
///   normal_values / normal_indices hold the exact data.
/// - materials, triangle_materials: the MeshMaterialList. When the list gives fewer face indices
///   than faces, the remaining faces use its last index (as D3DX and assimp do). Lenient mode:
///   when faces reference materials the list does not hold (fewer follow than nMaterials says, or
///   an index past nMaterials), one default material is appended and they use it. A material's
///   `diffuse` is the .X faceColor, `power` its power.
/// - skin: one bone per SkinWeights kept, in file order. An influence is a (bone, vertex, weight)
///   entry of a SkinWeights with a weight other than 0 (a zero weight changes nothing and takes no
///   slot); k is the largest number of influences any vertex has (not XSkinMeshHeader's figure).
///   Weights are as in the file (a sane file's sum to 1 per vertex; they are not renormalised; a
///   note counts the vertices whose weights sum to more than 1e-3 away from 1), except when some
///   of a vertex's influences are dropped — more than 8 (the 8 largest are kept, with a warning),
///   or a SkinWeights
///   naming a frame that does not exist (with a warning naming the bone): the kept ones are then
///   scaled to sum to what all of the vertex's weights summed to. A vertex that had no influence
///   but a missing frame's bone stays with the mesh's own frame: one bone is appended for that
///   frame (named after it, offset = the inverse of its bind-pose model matrix, so the vertex keeps
///   its bind position and follows the frame), with the weight the vertex had. A vertex no bone of the file influences (in
///   the file, or in a top-level mesh) has all weights 0, which skins it to the origin, as D3DX
///   does; a note counts such vertices. A vertex listed twice for one bone gets two influences
///   (their effect adds up, as in D3DX). When every SkinWeights names a missing frame, the mesh
///   becomes rigid.
/// - tangents and morph_targets: always empty (.X meshes have neither).
struct xfile_mesh : mesh {
    /// Faces as written: how many polygons the file has.
    std::size_t face_count = 0;
    /// For each triangle, the index of the polygon (face) it comes from.
    std::vector<std::uint32_t> triangle_faces;
    bool normals_per_vertex_exact = true;
    /// MeshNormals as written: the normals, and for each triangle corner (parallel to `indices`)
    /// the index of its normal in normal_values. Empty without MeshNormals.
    std::vector<glm::vec3> normal_values;
    std::vector<std::uint32_t> normal_indices;
    /// The mesh's XSkinMeshHeader.
    skin_mesh_header skin_header;
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
    /// The set as a clip, one channel per frame an Animation animates, in the order of those
    /// Animations; times in ticks, every track interpolating linearly (rotations by short-path
    /// slerp, matrices element-wise).
    /// - name: the set's name (may be empty);
    /// - duration: the last key time (last_key_time), 0 for a set without keys;
    /// - ticks_per_second: the AnimTicksPerSecond in force — the last one before the set in the
    ///   file, or, when none comes before it, the first one after it; when the file has none,
    ///   default_ticks_per_second (4800) with ticks_per_second_is_default set;
    /// - wrap: the clip default (loop).
    /// It passes validate_clip against xfile::skeleton.
    keyblend::clip clip;
    /// Parallel to clip.channels: each channel's Animation's own name (usually empty) and
    /// AnimationOptions (the first Animation's, when several were merged).
    std::vector<std::string> animation_names;
    std::vector<animation_options> options;
};

/// Counts the keys of each kind in a clip.
KEYBLEND_IO_FUNCTION key_counts count_keys(const clip& c);

/// Data objects as the file writes them, counted before anything is repaired or dropped (objects
/// inside a dropped object are counted as far as they were read).
struct xfile_contents {
    std::size_t frames = 0;
    std::size_t meshes = 0;
    std::size_t materials = 0;      ///< Material objects, top-level and inside MeshMaterialLists
    std::size_t skin_weights = 0;   ///< SkinWeights objects
    std::size_t animation_sets = 0;
    std::size_t animations = 0;     ///< Animation objects
    std::size_t animation_keys = 0; ///< AnimationKey objects
    std::size_t keys = 0;           ///< keys read from AnimationKeys
};

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
    /// What the file holds, as written (for a report beside `warnings`).
    xfile_contents contents;
    /// Problems the load stepped over, in the order found: in lenient mode what was repaired or
    /// dropped; in both modes keyblend's lossy but valid cases (inexact per-vertex normals,
    /// vertices with more than 8 influences or with none, references inside frames, key times past
    /// max_exact_tick). Each message names the place; error::index repeats a vertex, key or entry
    /// index where the message names one. Many problems of one kind in one object make one
    /// warning that names the first and counts the rest.
    std::vector<load_warning> warnings;
};

/// Loads a .X file from `path` (one read of the whole file).
///
/// Errors (the message starts with the path and names the place, see above):
/// - errc::io_error: the file cannot be opened or read;
/// - errc::unsupported: a header that is an .X header but names a version other than 0302/0303, an
///   encoding other than txt/bin/tzip/bzip, or a float size other than 0032/0064; a load_options
///   limit exceeded; a mesh with more than 65536 bones (bone indices are 16-bit);
/// - errc::parse_error: a missing or malformed header; more than max_warnings problems; and in
///   strict mode anything malformed, including a truncated file, a corrupt compressed block,
///   counts that disagree with their data, face or SkinWeights vertex indices out of range
///   (error::index is the bad index), a key with the wrong number of values, an unknown key type;
/// - strict mode also: errc::not_found (a SkinWeights or Animation naming a frame that does not
///   exist, a MeshMaterialList referencing a material that does not exist), errc::duplicate (two
///   frames with the same name, two Animations of one set animating one frame, two AnimationKeys
///   of one Animation with the same key type), errc::invalid_argument (an
///   AnimTicksPerSecond of 0, an Animation without a frame reference, a channel with matrix and
///   other keys), errc::non_finite (NaN or infinity in a vertex, normal, texture coordinate,
///   material, matrix, weight or key, or bind-pose matrices whose product overflows),
///   errc::not_normalized (a rotation key whose length is more than 1e-3 away from 1),
///   errc::unsorted (key times out of order).
/// In lenient mode only io_error, the header errors, the limits and the 65536 bones fail.
KEYBLEND_IO_FUNCTION result<xfile> load_xfile(const std::string& path,
                                              const load_options& options = {});

/// Loads a .X file from memory. `source_name` starts every message (a file name, or the default).
/// The buffer is only read during the call. Errors as load_xfile, except io_error.
KEYBLEND_IO_FUNCTION result<xfile> load_xfile_memory(const void* data, std::size_t size,
                                                     const load_options& options = {},
                                                     std::string_view source_name = "<memory>");

/// Inflates a compressed (`tzip` / `bzip`) .X file in memory into the same file uncompressed, in
/// `out` (replacing what it held; its memory is reused, so a vector kept across calls costs no
/// allocation): the header with `txt ` / `bin ` in place of `tzip` / `bzip`, then the inflated
/// data, which load_xfile_memory reads as it reads the compressed file. Errors (`out` is then
/// empty): errc::invalid_argument for a file that is not a compressed .X file; errc::parse_error
/// for a corrupt or truncated compressed stream (in either mode); errc::unsupported when the data
/// would inflate past options.max_decompressed_bytes (the only option it reads).
KEYBLEND_IO_FUNCTION status decompress_xfile(const void* data, std::size_t size,
                                             std::vector<unsigned char>& out,
                                             const load_options& options = {},
                                             std::string_view source_name = "<memory>");

} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace io
} // namespace keyblend

#if defined(KEYBLEND_IO_IMPLEMENTATION) || !defined(KEYBLEND_IO_LIBRARY)
#include "impl/xfile.impl.hpp"
#endif
