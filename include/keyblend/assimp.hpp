// keyblend — the assimp adapter: any file the Open Asset Import Library reads (glTF, FBX, Collada,
// BVH, MD5, .X, ...) into keyblend's own types: a skeleton, one clip per animation, skinned meshes.
//
// SPDX-License-Identifier: MIT
//
// Optional: only a program that includes this header compiles it. It needs assimp 5 (Debian's
// libassimp-dev) and keyblend's .X loader (link `keyblend::assimp`, which brings assimp and
// keyblend::io; zlib is a dependency of assimp already). Nothing in keyblend includes it.
//
// What comes out (`scene`), and how it maps assimp's data:
// - skeleton: one joint per aiNode, depth-first from the root node (children in assimp's order), so
//   joint 0 is assimp's root node. Bind local matrix = the node's mTransformation. Every node is a
//   joint, also those holding meshes, cameras or lights: assimp does not say which nodes are bones,
//   and bones, channels and meshes name nodes. Nodes with the same name (assimp allows them) are
//   renamed `name#2`, ... (duplicate_names::rename) with a warning; bones and channels naming such
//   a name bind to the first of them, as assimp's own aiNode::FindNode does.
// - clips: one per aiAnimation, in order (see `animation`). Node channels become keyblend channels
//   (position keys -> translation, rotation -> rotation, scaling -> scale; linear interpolation,
//   rotations by short-path slerp, as assimp's own evaluator does). Mesh and morph channels
//   (vertex animation) are not skeletal animation: they are counted in the animation and reported.
// - meshes: one per (node, aiMesh) reference, in depth-first node order; aiMeshes no node references
//   come last with joint `no_joint`. Triangles only (points and lines are dropped, see
//   load_scene). Skinned meshes get their bones and a fixed-width influence layout (`mesh_skin`).
//
// Conventions (math.hpp). aiMatrix4x4 is row-major with column vectors (translation in a4, b4, c4):
// the same transform as GLM's column-major matrix with column vectors, so element (row r, column c)
// goes to `m[c][r]`. aiQuaternion is (w, x, y, z) with the same rotation convention as GLM:
// `make_quat(w, x, y, z)`, no conjugation. assimp's own coordinate system is right-handed; its .X
// importer mirrors .X files (left-handed) into it by negating z (`S * M * S`, S = diag(1, 1, -1), on
// every matrix and key, `-z` on positions and normals, and reversed triangle winding), so a .X file
// loaded here is the mirror image of the same file loaded by io::load_xfile (tests/test_assimp.cpp
// checks that exactly).
//
// Which importers are hardened. keyblend's own loaders — the .X loader (io/xfile.hpp), the glTF
// loader (gltf.hpp), the BVH reader (bvh.hpp) and the package reader (package.hpp) — are written
// for hostile input: bounded time and memory, no recursion on the input's depth, every problem an
// error or a documented repair, and each is fuzzed (libFuzzer with AddressSanitizer and
// UndefinedBehaviorSanitizer, in CI). assimp's importers are not: Debian's assimp 5.2.5 crashes
// (stack overflow, failed assertion, division by zero, bad memory access), exhausts memory or
// time, or quietly returns a wrong scene on files that are damaged on purpose — FBX models that
// are their own parent or each other's, FBX skin clusters indexing past the vertices, glTF skins
// without inverse bind matrices, glTF or BVH hierarchies tens of thousands of levels deep, GLB
// chunks claiming gigabytes. Nothing in this header can make an import of a hostile file safe:
// a program that opens files it does not trust runs load_scene where a crash cannot take it down
// (a child process with limits: the keyblend tool does so, examples/tool/isolate.cpp), and
// prefers keyblend's own loaders for the formats they read.
//
// What the adapter checks of the scene assimp hands it, before using any of it (so that a scene
// assimp builds wrongly is rejected, or repaired with a warning, and never read out of bounds):
// indices against the arrays they index (node -> mesh, face -> vertex, bone weight -> vertex,
// mesh -> material), arrays that are null while their count is not, the node hierarchy
// (walked without recursion, at most options::max_joints nodes, each node once: a node that is
// its own child or linked twice is a cycle), every value finite (positions, matrices, weights,
// keys, times), key times in order, rotation keys not zero, a rate that is 0 (unknown) or a
// normal positive float, names that exist (bones, channels), and options' limits on nodes,
// meshes, vertices, keys and warnings. What it cannot check: that an array holds as many elements
// as its count says (C++ cannot see an array's length); assimp's own importers are trusted there.
//
// Bad data. Problems are reported as by keyblend's own loaders, with one policy (io/model.hpp):
// options.mode = io::parse_mode::lenient (the default) drops the broken part, records a warning
// and goes on (see each struct for what is dropped); io::parse_mode::strict fails on the first
// with an error naming the place (mesh, bone, vertex, animation, channel, key). Lossy but valid
// cases (influences beyond the limit, renormalised weights, non-unit rotation keys, ignored mesh
// channels, ...) are warnings in both modes.
#pragma once

#include "clip.hpp"
#include "error.hpp"
#include "io/xfile.hpp"
#include "skeleton.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct aiScene;

namespace keyblend {
namespace assimp {

/// The joint index of a mesh no node references.
inline constexpr std::size_t no_joint = io::no_joint;

/// The most influences per vertex a mesh_skin may keep (options::max_influences' upper bound).
inline constexpr std::size_t max_influences_per_vertex = io::max_influences_per_vertex;

/// aiAnimBehaviour: what an animation channel does outside its keys, as assimp reports it.
enum class end_behaviour : unsigned char {
    default_pose, ///< aiAnimBehaviour_DEFAULT: the node's own transform (what most importers set)
    constant,     ///< aiAnimBehaviour_CONSTANT: the nearest key
    linear,       ///< aiAnimBehaviour_LINEAR: extrapolated from the two nearest keys
    repeat,       ///< aiAnimBehaviour_REPEAT: the keys repeat
    mixed,        ///< the channels of one animation disagree
};

/// "default", "constant", "linear", "repeat" or "mixed".
inline const char* to_string(end_behaviour b);

/// How a scene is converted: io::load_options (the policy every loader of keyblend shares: mode,
/// lenient by default — the broken part is dropped, with a warning — or strict, the first problem
/// fails the load; and the limits: max_joints (nodes), max_meshes (meshes placed by nodes, and
/// meshes no node places), max_vertices (of all those meshes), max_keys (of all node channels),
/// max_warnings, each exceeded failing the load with errc::unsupported, or errc::parse_error for
/// warnings, naming the limit), and the adapter's own choices below.
struct options : io::load_options {
    /// Influences kept per vertex, 1 to max_influences_per_vertex (others: errc::invalid_argument).
    /// A vertex with more keeps its largest ones; the rest are dropped and reported (see
    /// influence_report). 4 is what GPU skinning and most engines use.
    std::size_t max_influences = 4;
    /// Ticks per second of an animation whose mTicksPerSecond is 0 (assimp's "unknown": .X files
    /// without AnimTicksPerSecond, some Collada files) or not finite. The default is D3DX's 4800,
    /// what io::load_xfile uses, so both importers time a .X file alike. Must be > 0 and finite.
    float default_ticks_per_second = keyblend::default_ticks_per_second;
    /// The clip wrap mode for animations whose channels all say aiAnimBehaviour_DEFAULT (see
    /// animation::wrap_from_file).
    wrap_mode default_wrap = wrap_mode::loop;
    /// load_scene only: before handing a .X file to assimp, read it with io::load_xfile (lenient)
    /// and refuse it when keyblend's parser finds it malformed (errc::parse_error). assimp 5.2.5's
    /// .X importer has no bounds checks: a SkinWeights vertex index out of range crashes it.
    /// Costs one more parse of .X files (keyblend's parser is the faster of the two).
    bool check_xfiles = true;
    /// load_scene only: assimp's own warnings and errors during the import become warnings of
    /// the scene, prefixed "assimp: " (assimp reports there what it drops: "FBX: encountered mesh
    /// with no vertices", "polygon vertex index out of range", ...). assimp's logger is
    /// process-wide: load_scene installs one for the import only when none is installed, and
    /// removes it after, so this is not for two threads importing at once.
    bool assimp_messages = false;
};

/// Who kept which influences, per skinned mesh.
struct influence_report {
    /// The most influences (weights other than 0) any vertex had before the limit.
    std::size_t most_influences = 0;
    /// Vertices that had more than options::max_influences influences: their smallest were dropped.
    std::size_t vertices_over_limit = 0;
    /// The largest weight dropped from one vertex (after the vertex's weights were normalised to
    /// sum to 1), and that vertex (error::no_index when none was dropped).
    float largest_dropped_weight = 0.0f;
    std::size_t largest_dropped_vertex = error::no_index;
    /// Vertices whose weights did not sum to 1 (within 1e-3) before renormalisation.
    std::size_t vertices_renormalised = 0;
    /// Vertices of a skinned mesh that no bone influences: their weights are all 0, which skins
    /// them to the origin (as D3DX does; reported as a warning).
    std::size_t vertices_without_influence = 0;
    /// Vertices (lenient mode) whose every influence was a dropped bone: rather than go to the
    /// origin they follow the mesh's own node, through one more bone for that node (offset: its
    /// inverse bind-pose model matrix), as io::load_xfile does (reported as a warning).
    std::size_t vertices_following_node = 0;
};

/// A bone: an aiBone of a mesh, as the .X loader's bones (io::skin_bone): `name` is aiBone::mName
/// (the node it follows), `joint` that node's joint in scene::skeleton, `offset` the
/// mOffsetMatrix (mesh space to the bone's bind space). The skinning matrix of the bone is
/// `model[joint] * offset` (skin.hpp's palette_job), applied to the mesh's own vertices; the
/// model matrix of the node holding a skinned mesh is not applied (as in glTF and D3DX).
using skin_bone = io::skin_bone;

/// A mesh's skin, in the layout io::mesh_skin has and skinning_job reads. With k =
/// influences_per_vertex and n vertices:
///
///     palette[b] = model[bones[b].joint] * bones[b].offset
///     skinned(v) = sum over i < k of weights[v*k + i] * palette[bone_indices[v*k + i]] * position(v)
///
/// - An influence is an aiVertexWeight with a weight other than 0. A vertex's influences are sorted
///   by decreasing weight (ties: bone order), at most options::max_influences are kept, and the
///   kept ones are scaled to sum to 1. k is the most any vertex keeps; unused slots hold weight 0
///   and bone index 0. What was dropped or rescaled is counted in `report` (and warned about).
/// - Bad weights: a vertex index out of range, a negative, NaN or infinite weight: strict fails
///   (errc::out_of_range / errc::non_finite / errc::invalid_argument, naming mesh, bone and entry);
///   lenient drops that entry. A bone naming no node: errc::not_found / the bone is dropped.
struct mesh_skin {
    std::vector<skin_bone> bones;
    std::size_t influences_per_vertex = 0;
    std::vector<std::uint16_t> bone_indices;
    std::vector<float> weights;
    influence_report report;
};

/// An aiMaterial's basic colours and its first diffuse texture.
struct material {
    std::string name;
    /// AI_MATKEY_COLOR_DIFFUSE (red, green, blue; alpha from AI_MATKEY_OPACITY), white when absent.
    glm::vec4 diffuse{1.0f};
    glm::vec3 specular{0.0f};
    glm::vec3 emissive{0.0f};
    /// AI_MATKEY_SHININESS, 0 when absent.
    float shininess = 0.0f;
    /// The first diffuse texture's path as the file gives it; empty when none. Embedded textures
    /// (glTF, FBX) are named `*0`, `*1`, ... as assimp names them.
    std::string texture_file;
    /// That texture's image when the file embeds it encoded (aiTexture with mHeight 0): its bytes,
    /// and "image/png" or "image/jpeg" by its first bytes (another type: "image/" and assimp's
    /// format hint). Shared by the materials using it; null for a file outside, and for raw texels
    /// (not imported; a warning).
    std::shared_ptr<const io::embedded_image> texture_image;
};

/// One mesh placed by one node.
struct mesh {
    /// aiMesh::mName (may be empty).
    std::string name;
    /// The joint of the node that references this mesh; no_joint when no node does.
    std::size_t joint = no_joint;
    /// The index of the aiMesh in aiScene::mMeshes.
    std::size_t source_index = 0;
    /// Index into scene::materials (aiMesh::mMaterialIndex); materials.size() when out of range.
    std::size_t material = 0;

    std::vector<glm::vec3> positions;
    /// One per vertex, or empty when the file has none (load_scene generates smooth normals
    /// where the file has none).
    std::vector<glm::vec3> normals;
    /// Texture channel 0 (u, v), or empty.
    std::vector<glm::vec2> texcoords;
    /// Triangles: 3 vertex indices each, all < positions.size(). Faces that are not triangles
    /// (points, lines, or polygons when the scene was not triangulated) are dropped with a warning.
    std::vector<std::uint32_t> indices;

    mesh_skin skin;

    bool is_skinned() const noexcept { return !skin.bones.empty(); }
};

/// An aiAnimation as a clip.
struct animation {
    /// - name: aiAnimation::mName (may be empty);
    /// - ticks_per_second: mTicksPerSecond, or options::default_ticks_per_second with
    ///   ticks_per_second_is_default set when assimp says 0 (unknown) or gives a non-finite value;
    /// - key times: assimp's (double ticks) as float ticks. They need not start at 0;
    /// - duration: mDuration when it is finite and > 0, else the last key time (a duration past
    ///   the last key is reported: the last keys hold until then);
    /// - wrap: see wrap_from_file;
    /// - channels: one per aiNodeAnim kept. Each track validates (validate_track): strict fails on
    ///   NaN values, unsorted times or a zero rotation; lenient drops that channel. Keys sharing a
    ///   time are kept, a cut (sample.hpp). Rotation keys
    ///   are normalised (warned when one was more than 1e-3 from unit length). A channel naming no
    ///   node, or a second channel for one node: errc::not_found / errc::duplicate, or dropped.
    /// It passes validate_clip against scene::skeleton.
    keyblend::clip clip;
    /// The channels' aiAnimBehaviour before the first key / after the last, when they all agree
    /// (mixed otherwise; default_pose for an animation without channels).
    end_behaviour pre_state = end_behaviour::default_pose;
    end_behaviour post_state = end_behaviour::default_pose;
    /// How clip.wrap was chosen from post_state. keyblend's tracks always hold their first and last
    /// keys outside their range, and a clip wraps as a whole: post_state repeat -> wrap_mode::loop;
    /// constant -> wrap_mode::clamp; linear (extrapolation) -> clamp, with a warning; default_pose
    /// (the node's own transform outside the keys; every importer in Debian's assimp 5.2.5 but the
    /// Collada and MD5 ones leaves this, meaning "not said") -> options::default_wrap; mixed ->
    /// options::default_wrap with a warning. A pre_state other than constant or default_pose is
    /// reported as a warning (the keys' first value holds before them). false when
    /// options::default_wrap was used.
    bool wrap_from_file = false;
    /// aiAnimation::mNumMeshChannels + mNumMorphMeshChannels: vertex animation, not imported.
    std::size_t ignored_mesh_channels = 0;
};

/// Everything the adapter takes from an aiScene.
struct scene {
    keyblend::skeleton skeleton;
    std::vector<mesh> meshes;
    std::vector<material> materials;
    std::vector<animation> animations;
    /// The lossy cases (both modes) and the dropped parts (lenient), each naming its place.
    std::vector<error> warnings;
};

/// Converts an imported aiScene. The scene is only read. `source_name` starts every message (a
/// file name, say).
///
/// Errors (besides those listed with each struct, in strict mode): errc::invalid_argument for bad
/// options; errc::empty for a scene without a root node; errc::unsupported for a mesh with more
/// than 65536 bones, and for an options limit exceeded; errc::parse_error for more than
/// options::max_warnings warnings. Strict mode also fails on: errc::size_mismatch for an array
/// that is null while its count is not (lenient: read as empty); errc::cycle for a node linked
/// more than once (lenient: its first place is kept); errc::non_finite for a node transform with
/// NaN or infinity (lenient: the identity); an animation's mTicksPerSecond that is not 0 and not a
/// normal positive float (NaN, infinite, negative, subnormal: errc::non_finite or
/// errc::invalid_argument; lenient: the default rate, flagged as for 0).
inline result<scene> from_scene(const aiScene& source, const options& opts = {},
                                const std::string& source_name = "<aiScene>");

/// The post-processing load_scene asks of assimp (aiPostProcessSteps), and why each:
/// - aiProcess_Triangulate: skinning and drawing want triangles; polygons become fans.
/// - aiProcess_SortByPType, with points and lines removed (AI_CONFIG_PP_SBP_REMOVE): a mesh of
///   points or lines is nothing a skinned-mesh runtime draws; mixed meshes are split first.
/// - aiProcess_JoinIdenticalVertices: importers like .X and FBX emit one vertex per face corner
///   (tiny.x: 20523 for 4432 real vertices); joining the identical ones (same position, normal,
///   texture coordinates and bone weights) gives back an indexed mesh to skin once per vertex.
/// - aiProcess_GenSmoothNormals: lighting needs normals; generated only where the file has none.
/// - aiProcess_ValidateDataStructure: assimp checks index ranges and counts itself, so a broken
///   file fails with assimp's message instead of reaching the adapter.
/// Not used, on purpose: aiProcess_LimitBoneWeights (the adapter limits influences itself, so it
/// can report what it dropped, options::max_influences); anything that changes the node hierarchy
/// or bakes transforms (PreTransformVertices, OptimizeGraph, Debone, RemoveRedundantMaterials'
/// friends): the nodes are the skeleton; MakeLeftHanded, FlipUVs, FlipWindingOrder: the scene keeps
/// assimp's conventions; FindInvalidData, which silently edits animation keys. The importer is also
/// told AI_CONFIG_IMPORT_NO_SKELETON_MESHES (BVH and MD5 files get no made-up mesh of bone boxes:
/// such files load as a skeleton without meshes) and AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS = false
/// (FBX pivots are folded into one node instead of helper nodes between the bones).
inline unsigned post_processing();

/// Reads `path` with assimp (Assimp::Importer::ReadFile with post_processing()) and converts the
/// result (from_scene). A .X file is first checked with io::load_xfile (options::check_xfiles).
///
/// Errors: the message starts with the path.
/// - errc::io_error: the file cannot be opened;
/// - errc::parse_error: assimp cannot read the file: its message follows ("assimp: ...");
///   with check_xfiles, a .X file keyblend's parser finds malformed (its message follows);
/// - errc::invalid_argument: bad options;
/// - the errors of from_scene.
inline result<scene> load_scene(const std::string& path, const options& opts = {});

} // namespace assimp
} // namespace keyblend

#include "impl/assimp.impl.hpp"
