// keyblend — glTF 2.0: the loader reads `.gltf` files (JSON, with external `.bin` buffers or
// `data:` URIs) and `.glb` files (binary container), from a path or a memory buffer, into
// keyblend's own types: a skeleton with one joint per node, one io::mesh per mesh instance, one
// clip per animation. The writer (`write`, at the bottom) does the reverse: what any keyblend
// loader produces (a skeleton, io::meshes, clips) into a `.glb`, or a `.gltf` with its `.bin`.
//
// SPDX-License-Identifier: MIT
//
// Building it. The loader is compiled once, into the `keyblend::gltf` library (CMake), with
// simdjson as its JSON parser and, when CMake finds it, Draco for KHR_draco_mesh_compression. This
// header only declares: a file that includes it sees neither library. Link `keyblend::gltf`.
//
// What a file becomes (docs/gltf.md has the whole mapping):
// - skeleton: every node is a joint (also nodes outside the scene: skins and animations may use
//   them), parent-first (skeleton.hpp; `joint_of_node` maps node indices to joints). A joint's
//   bind_local is the node's `matrix`, or T * R * S of its translation / rotation / scale; its
//   morph weights are the node's `weights`, else its mesh's `weights`, else zeros, one per morph
//   target of its mesh. Joint names are the node names (`node_<i>` for an unnamed node; a name
//   used twice is renamed `name#2`, ...).
// - meshes: one io::mesh per primitive of each mesh instance — a node of the scene with a `mesh`
//   — so a mesh used by several nodes or skins gives one io::mesh each. `joint` is the node's
//   joint. A skinned instance (node.skin) has one skin_bone per joint of the skin, in the skin's
//   order, with the skin's inverse bind matrix as offset (the identity when the skin has none,
//   as the specification says): skinned vertices are in the skeleton's model space, the mesh
//   node's own transform not applied, as glTF says.
// - clips: one per animation, times in seconds (ticks_per_second = 1, key times the file's floats
//   unchanged, duration the last key time, or 0 when every key is before 0), one channel per
//   animated node; STEP, LINEAR (rotation:
//   short-path slerp) and CUBICSPLINE (with the file's tangents) map to interpolation::step,
//   linear and cubic_spline. Repeated key times are kept (a cut). `weights` channels become
//   channel::morph_weights, one float track per morph target.
//
// Bad input. As every keyblend loader (io/model.hpp): parse_mode::lenient (the default) repairs
// what has an obvious repair and drops what cannot be interpreted, each with a load_warning naming
// the place as a JSON pointer (`/accessors/12/count`) or a byte offset; parse_mode::strict fails
// on the first such problem. What keyblend does not import (cameras, images other than base colour
// textures, attributes other than POSITION, NORMAL, TANGENT, TEXCOORD_0, JOINTS_n and WEIGHTS_n,
// extensions that do not matter to skinned animation) is a warning naming it in both modes:
// nothing the file holds is lost silently. An `extensionsRequired` entry keyblend does not implement fails the load, naming
// it. Nothing a file holds makes the loader crash, recurse on its depth, read out of bounds, or
// allocate more than the file proves it holds (every count is checked against the bytes that hold
// it first) or than load_options' limits allow.
#pragma once

#include "clip.hpp"
#include "error.hpp"
#include "io/model.hpp"
#include "skeleton.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace keyblend {
namespace gltf {
inline namespace KEYBLEND_IO_GLM_LAYOUT {

/// One mesh instance: a primitive of a mesh placed by a node of the scene (io::mesh), and where
/// it comes from.
///
/// - name: the mesh's name, with `#<p>` appended for primitive p > 0 of a mesh of several.
/// - joint: the instancing node's joint. Its morph weights drive morph_targets.
/// - positions, normals, tangents, texcoords (TEXCOORD_0): as the accessors give them, converted
///   to float (normalized integers as the specification says: c / 255, max(c / 127, -1), ...;
///   KHR_mesh_quantization's non-normalized integers as their values).
/// - indices: the primitive's triangles (TRIANGLES as given, TRIANGLE_STRIP and TRIANGLE_FAN
///   unrolled with the specification's winding; 0, 1, 2, ... without an indices accessor).
/// - materials: the primitive's material (name, baseColorFactor as diffuse, emissiveFactor as
///   emissive, the base colour texture's image URI as texture_file, or "image N" and its bytes
///   as texture_image when the file embeds it) and every triangle using it;
///   both empty for a primitive without material.
/// - skin: see the top of this file. A vertex's influences are its (JOINTS_n, WEIGHTS_n) pairs
///   whose weight is not 0, sorted by decreasing weight; weights as in the file (not
///   renormalised; a note counts the vertices whose sum is more than 1e-3 from 1).
/// - morph_targets: one per target, its POSITION, NORMAL and TANGENT displacements; names from
///   `mesh.extras.targetNames` when the file gives them.
struct mesh_instance : io::mesh {
    std::size_t node_index = 0;      ///< the node that instances the mesh
    std::size_t mesh_index = 0;      ///< index into the file's meshes
    std::size_t primitive_index = 0; ///< index into the mesh's primitives
    /// Index into the file's skins, or no_skin for a rigid instance.
    std::size_t skin_index = no_skin;
    static constexpr std::size_t no_skin = static_cast<std::size_t>(-1);
};

/// One animation.
struct animation {
    /// The animation as a clip (see the top of this file); it passes validate_clip against
    /// model::skeleton. Named after the animation (`animation_<i>` when unnamed).
    keyblend::clip clip;
    /// The index of the animation in the file.
    std::size_t index = 0;
};

/// What the file holds, counted as written (before anything is repaired or dropped).
struct file_contents {
    std::size_t nodes = 0, meshes = 0, primitives = 0, skins = 0, animations = 0, channels = 0,
                accessors = 0, buffers = 0, materials = 0, cameras = 0, images = 0, scenes = 0;
};

/// Everything a glTF file holds that keyblend uses.
struct model {
    /// True for a `.glb` container, false for JSON.
    bool binary = false;
    /// The default scene (`scene`, else 0) whose nodes are instanced; no_scene when the file has
    /// no scenes (then every root node is).
    std::size_t scene = no_scene;
    static constexpr std::size_t no_scene = static_cast<std::size_t>(-1);

    keyblend::skeleton skeleton;
    /// joint_of_node[n]: node n's joint.
    std::vector<std::size_t> joint_of_node;
    std::vector<mesh_instance> meshes;
    std::vector<animation> animations;
    file_contents contents;
    /// What the load repaired, dropped or did not import (see the top of this file), in the order
    /// found. Many problems of one kind make one warning naming the first and counting the rest.
    std::vector<io::load_warning> warnings;
};

/// Loads a `.gltf` or `.glb` file from `path` (recognised by its contents, not its name). External
/// buffers are read relative to the file's folder.
///
/// Errors (the message starts with the path and names the place):
/// - errc::io_error: the file, or a buffer it refers to, cannot be read;
/// - errc::parse_error: not a glTF file (malformed JSON, a GLB container whose header or chunks
///   disagree with its size), more than max_warnings problems, and in strict mode anything the
///   lenient mode repairs or drops;
/// - errc::unsupported: a glTF version other than 2.x, an `extensionsRequired` entry keyblend does
///   not implement (the message names it; KHR_draco_mesh_compression when keyblend::gltf was built
///   without Draco), a load_options limit exceeded, a skin of more than 65536 joints;
/// - strict mode also errc::out_of_range (an index to nothing), errc::cycle (a node its own
///   ancestor, or a child of two parents), errc::non_finite, errc::unsorted (key times going
///   back), errc::not_normalized (a rotation key more than 1e-3 from unit length),
///   errc::size_mismatch (accessor counts that disagree: an inverse-bind-matrix accessor shorter
///   than its skin, a sampler output not matching its input).
/// In lenient mode only io_error, the container and JSON errors, the version, extensionsRequired,
/// the limits and the 65536 joints fail.
result<model> load(const std::string& path, const io::load_options& options = {});

/// Loads a `.gltf` or `.glb` file from memory. `source_name` starts every message. External
/// buffers (a `uri` that is not a `data:` URI) are read relative to `base_directory`; an empty
/// `base_directory` refuses them (errc::io_error naming the buffer). The memory is only read
/// during the call.
result<model> load_memory(const void* data, std::size_t size, const io::load_options& options = {},
                          std::string_view source_name = "<memory>", const std::string& base_directory = {});

/// True when keyblend::gltf was built with Draco (KHR_draco_mesh_compression is read).
bool has_draco();

/// True when the bytes start like a glTF file: a GLB header (`glTF`), or JSON (an optional UTF-8
/// byte-order mark and white space, then `{`).
bool looks_like_gltf(const void* data, std::size_t size);


// ---------------------------------------------------------------------------------------------
// Writing glTF
// ---------------------------------------------------------------------------------------------

/// What the writer is given: a skeleton, the meshes on it and the clips that animate it, as any
/// keyblend loader produces them (io::xfile's skeleton, meshes and animation sets' clips; a
/// gltf::model's skeleton, meshes and animations' clips; code-built ones). The pointers must stay
/// valid during the call; none may be null.
struct asset {
    const keyblend::skeleton* skeleton = nullptr;
    std::vector<const io::mesh*> meshes{};
    std::vector<const keyblend::clip*> clips{};
};

/// The handedness of the source's coordinates. glTF's are right-handed.
enum class handedness : unsigned char {
    /// Direct3D's and .X files': written mirrored along z (docs/gltf.md, "Writing glTF"): every
    /// matrix X becomes M * X * M with M = diag(1, 1, -1), positions, normals and translations
    /// (x, y, -z), rotations (-x, -y, z, w), and triangles reverse their winding, so that the
    /// model looks the same in a right-handed viewer.
    left,
    /// glTF's and OpenGL's: written as they are.
    right,
};

/// The container: one `.glb` file, or `.gltf` JSON with its binary data in a `.bin` file beside it.
enum class container : unsigned char { glb, gltf };

struct write_options {
    /// The source's handedness: left for .X files (the default), right for glTF, BVH and assimp's.
    handedness source = handedness::left;
    /// lenient (the default): what glTF cannot hold as given is repaired or dropped with a
    /// warning (see write); strict: the first such problem fails the write.
    io::parse_mode mode = io::parse_mode::lenient;
    /// The largest error, as a fraction of the model's size, below which a matrix that
    /// translation / rotation / scale cannot hold exactly (shear) is not reported. Errors are
    /// measured on a joint's local matrix as the distance it moves a point at the model's size.
    double tolerance = 1e-5;
    /// `asset.generator` of the file.
    std::string generator = "keyblend";
};

/// What a write did: counts of what the file holds, and what glTF could not hold as given.
struct write_report {
    std::size_t nodes = 0, meshes = 0, primitives = 0, skins = 0, materials = 0, images = 0, animations = 0,
                channels = 0, keys = 0;
    /// The model's size: the largest extent of its bind pose (joints and mesh vertices), in model
    /// units; errors below are in these units.
    double model_size = 0.0;
    /// The largest error of a matrix written as translation / rotation / scale (a sheared bind
    /// matrix or matrix key), in model units (see write_options::tolerance); 0 when every matrix
    /// decomposes exactly (to float rounding).
    double largest_error = 0.0;
    /// What was repaired or dropped, and notes, in the order found (same type as the loaders').
    std::vector<io::load_warning> warnings;
};

/// Writes an asset as glTF 2.0: into `path` (a `.glb` when `format` is glb; else `path` is the
/// `.gltf` and the binary data goes into the same path with `.bin` in place of its extension).
///
/// What is written (docs/gltf.md, "Writing glTF", has the whole mapping):
/// - one node per joint, parent-first, named after it (an unnamed joint `joint_<j>`; every node
///   name is unique), its translation / rotation / scale the decomposition of its bind_local; a
///   root node `root` above the skeleton's roots when the skeleton has several roots and a skin
///   (a skin's joints need a common root), or a mesh needs a joint that never moves;
/// - one glTF mesh per io::mesh with one primitive per material it uses (POSITION with min and
///   max, NORMAL, TANGENT, TEXCOORD_0; JOINTS_n / WEIGHTS_n, four influences each, as many sets
///   as the mesh needs), on a node of its own: a child of its joint's node for a rigid mesh, a
///   root node with the skin for a skinned one (glTF ignores a skinned mesh node's transforms);
/// - one skin per skinned mesh, its inverse bind matrices the bones' offsets;
/// - materials (diffuse as baseColorFactor, emissive, the texture file as an image URI, or an
///   embedded texture_image as a PNG or JPEG in the buffer, each image written once);
/// - one animation per clip, times in seconds (ticks / ticks_per_second); translation, rotation
///   and scale tracks as they are (step: STEP, linear: LINEAR, cubic_spline: CUBICSPLINE with
///   the tangents in seconds); matrix tracks as translation, rotation and scale tracks of the
///   keys' decompositions, interpolated as sampling_job interpolates them.
///
/// Repaired (lenient mode; strict fails; each a warning naming the place): influences are
/// normalised to sum to 1 (a warning when a vertex's sum was more than 1e-3 away), a vertex of a
/// skinned mesh without influence follows its mesh's joint (a bone added for it), two influences
/// of one vertex on one joint are merged, non-unit normals are normalised (a zero one becomes
/// +y), NaN or infinite vertex data becomes 0, repeated key times (a cut) and key times that
/// collide in float seconds move the earlier key one float step earlier (at the time itself the
/// later key holds, as keyblend samples a cut), keys before time 0 are
/// replaced by the value at 0, texture file names become relative URIs (backslashes become
/// slashes, reserved characters are percent-encoded, an absolute path keeps its file name),
/// names that are not UTF-8 are read as Latin-1. A matrix that translation / rotation / scale
/// cannot hold (shear) is written as its decomposition; the largest error is reported
/// (write_report::largest_error, and a warning when above the tolerance).
/// Dropped with a warning: a clip that fails validate_clip or has no keys, a track in a mode glTF
/// lacks, attributes whose size is not the vertex count, triangles with an index past the
/// vertices, bones whose joint is not in the skeleton (their influences go to the vertex's other
/// bones), morph targets and morph weight tracks, user channels, events, root motion.
///
/// Errors: errc::invalid_argument (a null skeleton, mesh or clip); errc::io_error (a file cannot
/// be written); errc::unsupported (more than 65536 joints in one skin); in strict mode the first
/// repair or drop, with the code of its warning.
result<write_report> write(const std::string& path, const asset& a, container format,
                           const write_options& options = {});

/// Writes an asset into memory: the `.glb` bytes into `out` (format glb; `bin` is left empty), or
/// the `.gltf` JSON into `out` and the binary data into `bin`, the JSON referring to it as
/// `bin_uri` (format gltf). Same contents, repairs and errors as write, except io_error.
result<write_report> write_memory(const asset& a, container format, std::vector<unsigned char>& out,
                                  std::vector<unsigned char>& bin, const write_options& options = {},
                                  std::string_view bin_uri = "model.bin");

} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace gltf
} // namespace keyblend
