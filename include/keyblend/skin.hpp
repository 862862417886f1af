// keyblend — skinning: the matrix palette, linear-blend skinning (scalar reference + SSE2/AVX2/
// AVX-512 kernels) and dual-quaternion skinning, over caller-owned strided vertex streams.
//
// SPDX-License-Identifier: MIT
//
// The pipeline's last stage. A skinned mesh has bones; bone b is attached to a skeleton joint and
// has an offset matrix (the .X SkinWeights' matrixOffset, the inverse of the joint's bind model
// matrix as the mesh was bound). Per frame:
//
//     palette[b] = model[joint_of_bone[b]] * offset[b]               palette_job
//     v' = sum over the vertex's influences i of weight_i * palette[joint_i] * v    skinning_job
//
// which is the classic UpdateSkinnedMesh, written vertex-major (each vertex blends its matrices
// once) instead of bone-major (each bone adds its weighted transform to every vertex it moves).
// The two give the same result to float rounding; the tests check it.
//
// Vertex data stays where the caller keeps it. A `strided_span` says where: vertex i's component
// c is at byte offset `i * stride + c * component_stride`. So one type describes
//   - separate arrays, one per attribute (std::vector<glm::vec3>): stride = sizeof(glm::vec3);
//   - an interleaved vertex buffer (AoS): data = &buffer[0].normal.x, stride = sizeof(vertex);
//   - planar arrays (SoA, x[n] then y[n] then z[n] in one allocation): stride = sizeof(float),
//     component_stride = n * sizeof(float);
// and the joint indices and weights the same way (the .X loader's `bone_indices` / `weights`,
// k per vertex: `make_span(v, k)`). Nothing is converted or copied: the kernels read the caller's
// layout directly, with fast paths for packed, interleaved and planar streams.
#pragma once

#include "error.hpp"
#include "impl/simd/isa.hpp"
#include "math.hpp"
#include "skeleton.hpp"
#include "span.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace keyblend {

/// The x, y, z components of each vector (works whatever sizeof(glm::vec3) is, so also under
/// GLM_FORCE_DEFAULT_ALIGNED_GENTYPES). The vector must not be resized while the span is used.
inline strided_span<const float> make_span(const std::vector<glm::vec3>& v);
inline strided_span<float> make_span(std::vector<glm::vec3>& v);
/// The x, y, z, w components of each vector (tangents: w is the handedness sign).
inline strided_span<const float> make_span(const std::vector<glm::vec4>& v);
inline strided_span<float> make_span(std::vector<glm::vec4>& v);
/// `v` as `v.size() / per_element` elements of `per_element` consecutive values: the loaders'
/// bone_indices and weights (vertex_count x k). Precondition: per_element > 0.
template <class T>
strided_span<const T> make_span(const std::vector<T>& v, std::size_t per_element);
template <class T>
strided_span<T> make_span(std::vector<T>& v, std::size_t per_element);
/// One member of each element of an array of structs: `member_span(bones, &skin_bone::joint)`.
template <class S, class T>
strided_span<const T> member_span(const std::vector<S>& v, T S::*member);

// ---------------------------------------------------------------------------------------------
// Palette
// ---------------------------------------------------------------------------------------------

/// The skinning matrices of one frame: `output[b] = model[bones[b].joint] * bones[b].offset` for
/// every bone b (GLM's product: the offset matrix is applied first, taking a bind-pose vertex into
/// the joint's bind space; the joint's model matrix then places it), into caller memory (a
/// std::vector, a mapped GPU constant buffer). Matrices of `output` past bones.size() are not
/// touched. Any 4x4 matrices (not only affine ones); the product is computed with the widest
/// vector instructions the build targets, in GLM's order of operations, and equals GLM's `model *
/// offset` within float rounding (not always bit for bit: either may be contracted into fused
/// multiply-adds).
///
/// The job contract (docs/jobs.md). Errors (the message names the bone; error::index is the bone),
/// the same from validate() and run() (the checks are O(bones)), nothing written on an error:
/// - errc::invalid_argument: a span with null data but a size other than 0;
/// - errc::size_mismatch: output smaller than bones;
/// - errc::out_of_range: a bone's joint >= model.size().
struct palette_job {
    /// The model matrices of the pose (local_to_model_job's output).
    span<const glm::mat4> model;
    /// The mesh's bones (a loader's mesh_skin::bones).
    span<const skin_bone> bones;
    span<glm::mat4> output;

    status validate() const;
    KEYBLEND_JOB_ABI status run() const;
};

// ---------------------------------------------------------------------------------------------
// Linear-blend skinning
// ---------------------------------------------------------------------------------------------

/// The most influences (joint, weight pairs) per vertex a skinning job accepts.
inline constexpr std::size_t max_influences = 8;

/// The most bones a skinning job computes its palette for (skinning_job::bones: the palette fused
/// into the job). Every joint an 8-bit index can name; larger rigs run palette_job.
inline constexpr std::size_t max_fused_bones = 256;

/// How normals are transformed.
enum class normal_transform : unsigned char {
    /// By the upper 3x3 of the blended palette matrix, like a direction. Correct (up to length)
    /// when every palette matrix is a rotation times a uniform scale, which is what most rigs
    /// have; the cheapest. Normals are not renormalised.
    palette,
    /// By the inverse-transpose of the upper 3x3 of the blended matrix, A: `n' = A^-T n`, computed
    /// as `cofactor(A) n / det(A)`. Use it when the palette has non-uniform scale (or shear): it
    /// keeps normals perpendicular to the skinned surface where `palette` tilts them. For one
    /// influence this is the bone's own inverse-transpose. When det(A) is 0 (a bone scaled to
    /// nothing) the result is `cofactor(A) n` (the limit direction, not divided). Not
    /// renormalised.
    inverse_transpose,
};

/// Where the last weight of each vertex comes from.
enum class last_weight : unsigned char {
    /// Every influence has its weight in `weights` (k per vertex): the .X / D3DX layout.
    stored,
    /// The last influence's weight is not stored: it is 1 - (sum of the others), and `weights`
    /// holds k - 1 per vertex (none when k == 1), as ozz-animation stores them. Weights then
    /// always sum to one.
    implied,
};

/// What a job does with output that is larger than the caches.
enum class store_policy : unsigned char {
    /// `streaming` when the job's output (vertices in the range x bytes written per vertex) is at
    /// least `streaming_store_threshold` bytes, `cached` otherwise.
    automatic,
    /// Ordinary stores: the output stays in the caches for whoever reads it next.
    cached,
    /// Non-temporal stores where the output layout allows it, ordinary stores elsewhere: output
    /// bypasses the caches, saving the memory read that an ordinary store of an uncached line
    /// costs. Best for meshes larger than the last-level cache. AVX2 and AVX-512 paths only, for
    /// packed xyz position and normal arrays (std::vector<glm::vec3>) that reach register alignment
    /// (32 bytes for AVX2, 64 for AVX-512) at the same vertex: the first few (at most 7, or 15)
    /// vertices of the range are skinned by the scalar path so that every store is a whole aligned
    /// register.
    streaming,
};

/// store_policy::automatic switches to streaming stores from this many output bytes (1M vertices
/// of position + normal write 24 MB; 100k write 2.4 MB, which stays cached).
inline constexpr std::size_t streaming_store_threshold = std::size_t(8) << 20;


/// The inputs and outputs every skinning job shares: what to skin and where to write it.
///
/// The vertex count n is `in_positions.size`. Every stream given must have exactly n elements.
/// Components are floats, except `joints` (JointIndex: std::uint8_t or std::uint16_t) and
/// `influence_counts` (std::uint8_t).
///
/// Aliasing: an output may be the very same stream as the input of the same attribute (same
/// data, stride and component stride: in-place skinning of a vertex buffer), and outputs may
/// interleave with each other and with inputs (byte-disjoint fields of one vertex buffer).
/// Any other overlap between an output and another stream is rejected.
template <class JointIndex>
struct skinning_streams {
    static_assert(std::is_same_v<JointIndex, std::uint8_t> || std::is_same_v<JointIndex, std::uint16_t>,
                  "joint indices are std::uint8_t or std::uint16_t");
    using joint_index_type = JointIndex;

    /// k: the number of (joint, weight) slots per vertex, 1 to max_influences.
    std::size_t influences = 0;
    /// k joint indices per vertex (palette entries).
    strided_span<const JointIndex> joints;
    /// k weights per vertex (k - 1 with last_weight::implied; may be empty when k == 1).
    strided_span<const float> weights;
    last_weight last = last_weight::stored;
    /// Optional: per vertex, how many of its k slots are used (1 to k); the used slots come first
    /// and the others hold weight 0 (compact_influences makes both so). Given, each block of 64
    /// vertices blends only as many slots as its busiest vertex uses: a mesh whose vertices are
    /// sorted or clustered by count blends few zero weights; with counts scattered at random it
    /// costs the same as blending all k. Empty: every vertex uses all k. With
    /// last_weight::implied the implied weight is that of the last *used* slot (that combination
    /// takes a slower path).
    strided_span<const std::uint8_t> influence_counts;

    /// Required: xyz per vertex.
    strided_span<const float> in_positions;
    strided_span<float> out_positions;
    /// Optional, both or neither: xyz per vertex.
    strided_span<const float> in_normals;
    strided_span<float> out_normals;
    /// Optional, both or neither: xyzw per vertex; xyz transformed like a direction by the blended
    /// matrix, w (the bitangent sign) copied unchanged.
    strided_span<const float> in_tangents;
    strided_span<float> out_tangents;
    /// Optional, instead of out_normals / out_tangents (a third of the bytes written): each
    /// skinned normal or tangent normalised and packed into one 32-bit word, 10:10:10:2 signed
    /// normalized (Direct3D 9's D3DDECLTYPE_DEC3N, OpenGL's GL_INT_2_10_10_10_REV normalized,
    /// Vulkan's A2B10G10R10_SNORM_PACK32): x in bits 0-9, y in 10-19, z in 20-29, each
    /// round(c * 511) in two's complement (ties to even). Bits 30-31 hold 0 for a normal, the
    /// tangent's w as -1 (w < 0) or 1 (anything else) for a tangent. A vector that is zero,
    /// not finite or below 2^-128 in every component packs as 0 in x, y and z. A component
    /// decodes as max(q / 511, -1), within half a step (1 / 1022) of the normalised float result
    /// plus float rounding, on every kernel. The kernels pack in their lanes (docs/skinning.md
    /// gives the cost).
    strided_span<std::uint32_t> out_normals_packed;
    strided_span<std::uint32_t> out_tangents_packed;

    /// The vertices run() skins; the rest of the outputs is not touched. Split a mesh across
    /// threads by giving each job a disjoint range (skin_parallel does).
    vertex_range range;
    /// Largest accepted |sum of a vertex's weights - 1| (validate; run does not look at weights).
    float weight_tolerance = 1e-3f;
    store_policy stores = store_policy::automatic;
};

/// Which streams a fixed_skinning run skins (positions always).
enum class skinned_streams : unsigned char {
    positions = 1,
    positions_normals = 3,
    positions_tangents = 5,
    positions_normals_tangents = 7,
};
inline const char* to_string(skinned_streams s);

/// skinning_job::run's default configuration: whatever the job says (1 to 8 influences, stored or
/// implied weights, per-vertex counts, any streams), decided at run time. A file that calls it
/// compiles every kernel (per influence count and layout mode, see impl/skin/run.hpp).
struct any_skinning {};

/// A configuration stated at compile time, for files that know it: `job.run<fixed_skinning<4>>()`
/// compiles only the kernels of Influences slots, Streams and Last (about a third of a general
/// run()'s compile time; see bench/compile_time.sh). The job must agree: its
/// influences == Influences, its last weight == Last, normals and tangents given exactly as
/// Streams says; otherwise run() returns errc::invalid_argument naming the difference and skins
/// nothing. Per-vertex influence_counts are accepted with stored weights (the slots past a count
/// hold weight 0, so all Influences slots are blended) and rejected with Last == implied. Results
/// equal the general run()'s bit for bit wherever its kernels are the same: every layout but
/// per-vertex counts, which the general run() uses to blend fewer slots.
template <std::size_t Influences, skinned_streams Streams = skinned_streams::positions_normals,
          last_weight Last = last_weight::stored>
struct fixed_skinning {
    static_assert(Influences >= 1 && Influences <= max_influences, "1 to 8 influences");
};

template <class JointIndex>
struct skinning_job;
template <class JointIndex>
struct dual_quaternion_skinning_job;
struct dq_bone;

namespace impl {
KEYBLEND_ISA_NS {
namespace skin {
// The jobs' entry points (impl/skin.impl.hpp).
template <class Index>
status validate_linear(const skinning_job<Index>& j);
template <class Index>
status validate_dual_quaternion(const dual_quaternion_skinning_job<Index>& j);
} // namespace skin
} // namespace KEYBLEND_ISA
namespace skin_entry {
inline namespace KEYBLEND_BUILD_NS {
template <class Config, class Index>
status run_entry(const skinning_job<Index>& j);
template <class Index>
status run_entry_dq(const dual_quaternion_skinning_job<Index>& j);
} // namespace KEYBLEND_BUILD_NS
} // namespace skin_entry
} // namespace impl

/// Linear-blend skinning (LBS) of positions, normals and tangents with a matrix palette.
///
/// For each vertex v in the range, with its influences (j_i, w_i):
///     M = sum_i w_i * palette[j_i]          (the blended matrix; only its top three rows are used)
///     out_position = M * (p, 1)             (xyz; the projective row is ignored)
///     out_normal   = A * n  or  A^-T * n    (A = upper 3x3 of M; see normal_transform)
///     out_tangent  = (A * t.xyz, t.w)
///
/// `validate()` checks everything, including every vertex's indices and weights (O(n)). `run()`
/// checks only what keeps it inside memory (O(1): sizes, strides, alignment, aliasing) and then
/// skins, so a caller validates a mesh once and runs it every frame. A joint index outside the
/// palette is clamped to the last entry by run() (never read out of bounds), an influence count
/// to [0, k] (on data validate() rejects - a count of 0, a non-zero weight past a vertex's count -
/// the paths may give different results, all inside memory); NaN weights give NaN output.
/// Nothing allocates. SIMD unless KEYBLEND_NO_INTRINSICS: the kernels of kernel_isa()
/// (kernels.hpp), AVX-512 F/VL/BW/DQ or AVX2 + FMA (8 vertices a step) or SSE2 (4); results equal
/// the scalar path within float rounding (1e-5 relative), and the same kernels give the same bits
/// whether compiled into the file or in keyblend::kernels. skin_parallel gives the same bits as
/// run() for any task count.
///
/// Layouts, fastest first: the loaders' layout (k joints and k
/// weights per vertex, one vertex after the other); joints and weights with other strides (a
/// vertex buffer's BLENDINDICES / BLENDWEIGHT fields) take the strided kernels, which check a
/// group's joints first (one vector compare for up to 8 slots per vertex, SWAR compares vertex by
/// vertex beyond); influences with component strides (planar) and per-vertex
/// counts with an implied weight take the dynamic kernel, the slowest. Positions, normals and
/// tangents are fastest as packed arrays (std::vector<glm::vec3>, inlined in the kernels) or
/// planar; interleaved buffers and the inverse-transpose go through an out-of-line transform.
/// With 2 to 4 stored weights in the loader's layout and a mesh whose vertices mostly use fewer
/// slots (the unused ones last, weight 0), the 8-wide kernels blend each group of 8 vertices up
/// to the last slot that one of them uses (decided per mesh from 8 of its vertices): 0 * M left out changes nothing but the sign of a zero result (and a
/// non-finite matrix under weight 0, on data validate() rejects, then gives no NaN).
/// Every vertex of a fast-path job goes through the SIMD kernels (the few before the first
/// aligned group and after the last whole one through a stack copy of one group), so a vertex's
/// bits do not depend on where the range or the buffers start (up to the sign of a zero result
/// where slots are left out, as above). A palette of at most 128 matrices
/// that is not aligned to the register (32 bytes for AVX2, 64 for AVX-512; a
/// std::vector<glm::mat4> is 16-byte aligned) is copied to an aligned 8 KB stack buffer first
/// when the range has at least 4 vertices per matrix: misaligned, the blend's palette loads
/// straddle cache lines.
///
/// The palette fused: instead of `palette`, give `model` and `bones` (palette_job's inputs) and
/// run() computes the palette itself, into a 64-byte aligned buffer on its stack (16 KB), and
/// skins from there: the palette never reaches memory, and there is no palette_job to run, no
/// palette to keep and no copy of a misaligned one. Same products as palette_job (the same
/// kernels), so the same bits as palette_job then skinning_job. Worth it when the range skins many
/// vertices per bone: every run() computes the whole palette (a mesh split into many small jobs
/// pays it per job; skin_parallel computes it once). At most max_fused_bones bones.
template <class JointIndex = std::uint16_t>
struct skinning_job : skinning_streams<JointIndex> {
    /// The skinning matrices (see palette_job). Any 4x4 matrices.
    span<const glm::mat4> palette;
    /// Or, with `palette` empty, what to compute it from: palette[b] = model[bones[b].joint] *
    /// bones[b].offset (palette_job's model and bones; joint indices of the vertices address
    /// bones).
    span<const glm::mat4> model;
    span<const skin_bone> bones;
    normal_transform normals = normal_transform::palette;

    /// Everything run() checks, and per vertex: every used joint index < palette.size(), every
    /// weight finite, the weights summing to one within weight_tolerance (stored weights; with
    /// last_weight::implied the implied weight must not fall below -weight_tolerance), every
    /// influence count in [1, k] and the weights past it 0; and every palette matrix finite.
    /// Fused (model and bones given), first palette_job's checks (bone b's joint within `model`,
    /// error::index the bone), and the palette it computes must be finite.
    ///
    /// Errors (the message names the vertex and influence, or the stream; error::index is the
    /// vertex, or the palette entry):
    /// - errc::invalid_argument: influences is 0 or > max_influences, a required span missing,
    ///   null data, an influence count of 0 or > k, a non-zero weight past a vertex's count, a range
///   with begin > end or end > n, strides
    ///   too small (elements or components of an element overlap), misaligned data or strides,
    ///   an output overlapping another stream (see skinning_streams), an empty palette, both a
    ///   palette and bones given;
    /// - errc::size_mismatch: a stream whose size is not n, normals or tangents given on one side
    ///   only, weights given for k == 1 implied, more than max_fused_bones bones;
    /// - errc::out_of_range: a joint index >= palette.size();
    /// - errc::non_finite: a NaN or infinite weight or palette matrix;
    /// - errc::not_normalized: weights whose sum is not one (normalize_weights fixes them).
    KEYBLEND_JOB_ABI status validate() const { return impl::skin::validate_linear(*this); }

    /// Skins the vertices of `range`. Returns the O(1) errors of validate (and writes nothing) on
    /// malformed streams, and fused, palette_job's errors (O(bones)); otherwise skins and
    /// succeeds. Config: any_skinning (any job), or a
    /// fixed_skinning the job agrees with (errc::invalid_argument otherwise), which compiles far
    /// fewer kernels (compiled once, keyblend::kernels: the same kernels as any_skinning).
    template <class Config = any_skinning>
    KEYBLEND_JOB_ABI status run() const {
        return impl::skin_entry::run_entry<Config>(*this);
    }
};

/// A unit dual quaternion `real + eps * dual`: the rotation `real` followed by the translation
/// `t = 2 * dual * conjugate(real)` (vector part).
struct dual_quaternion {
    glm::quat real = glm::identity<glm::quat>();
    glm::quat dual = make_quat(0.0f, 0.0f, 0.0f, 0.0f);
};

/// One bone for dual-quaternion skinning: `matrix = translate(t) * rotate(rigid.real) * scale`.
struct dq_bone {
    dual_quaternion rigid;
    glm::mat3 scale = glm::mat3(1.0f);
};

/// Dual-quaternion skinning (DQS): the alternative to linear blending that does not collapse
/// volume where a joint twists or bends far (the "candy wrapper" of LBS).
///
/// Each palette entry is a rigid transform (a unit dual quaternion) plus a 3x3 matrix applied
/// before it (scale and shear, identity for rigid bones): build_dual_quaternion_palette makes
/// them from matrices. Per vertex:
///     S = sum_i w_i * scale[j_i]                    (blended linearly)
///     q = normalize(sum_i w_i * s_i * dq[j_i])      (s_i = +-1: each bone's quaternion taken in the
///                                                    hemisphere of the first influence's)
///     out_position = q applied to (S * p)
///     out_normal   = rotation of q applied to (S * n) or (S^-T * n), per `normals`
///     out_tangent  = (rotation of q applied to (S * t.xyz), t.w)
/// For a single influence, or rigid bones that agree, this equals linear blending. Scalar code
/// (no SIMD path); same checks, clamping and aliasing rules as skinning_job.
template <class JointIndex = std::uint16_t>
struct dual_quaternion_skinning_job : skinning_streams<JointIndex> {
    span<const dq_bone> palette;
    normal_transform normals = normal_transform::palette;

    /// As skinning_job::validate (palette entries must be finite).
    KEYBLEND_JOB_ABI status validate() const { return impl::skin::validate_dual_quaternion(*this); }
    /// As skinning_job::run (any job: there is no fixed configuration for dual quaternions).
    KEYBLEND_JOB_ABI status run() const { return impl::skin_entry::run_entry_dq(*this); }
};

/// `out[b]` = the decomposition of palette[b]: rotation from to_transform (a proper rotation: a
/// mirroring ends up in `scale`), translation `palette[b][3]`, and `scale = R^T * A` (A the upper
/// 3x3), so that the bone's matrix is reproduced exactly, shear included. The projective row is
/// ignored. `out` is resized to `palette.size()`.
inline void build_dual_quaternion_palette(const std::vector<glm::mat4>& palette,
                                          std::vector<dq_bone>& out);

/// The dual quaternion of a rotation followed by a translation.
inline dual_quaternion make_dual_quaternion(const glm::quat& rotation, const glm::vec3& translation);

// ---------------------------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------------------------

/// Runs `job` (a skinning_job or dual_quaternion_skinning_job) over its range split into
/// `task_count` contiguous chunks (whole blocks of 64 vertices counted from where the job's first
/// SIMD group starts; the first chunk also takes the up to 15 vertices before it, and chunks past
/// the end are empty), through a caller-supplied executor:
/// `executor(task_count, task)` must call `task(i)` once for every i in [0, task_count), on any
/// threads, and return when all have returned (a job system's parallel-for). Checks the job
/// (run()'s O(1) checks) once, before any task runs: on error nothing runs and the error is
/// returned. task_count 0 is taken as 1. A fused job's palette (skinning_job::bones) is computed
/// once, before the tasks, into a buffer on the calling thread's stack that they share.
/// Config: as skinning_job::run (`skin_parallel<fixed_skinning<4>>(job, n, executor)`).
inline namespace KEYBLEND_BUILD_NS {
template <class Config = any_skinning, class Job, class Executor>
status skin_parallel(const Job& job, std::size_t task_count, Executor&& executor);
} // namespace KEYBLEND_BUILD_NS

/// (The same on std::threads: skin_threads.hpp, which this header does not include.)

// ---------------------------------------------------------------------------------------------
// Preparing influences (once per mesh, not per frame)
// ---------------------------------------------------------------------------------------------

/// For a mesh stored with k slots per vertex where unused slots have weight 0 (the .X loader's
/// layout): moves each vertex's non-zero-weight slots to the front (keeping their order; the
/// freed slots get joint 0 and weight 0) and writes how many there are to `counts`, ready for
/// skinning_streams::influence_counts. A vertex whose weights are all zero keeps one slot (count
/// 1, its first joint, weight 0) and is reported.
///
/// Errors: errc::invalid_argument / size_mismatch for unusable spans (as validate), and
/// errc::not_normalized for the first vertex with no non-zero weight (all vertices are still
/// processed). Returns the largest count through `max_count` when given.
template <class JointIndex>
status compact_influences(std::size_t k, strided_span<JointIndex> joints, strided_span<float> weights,
                          strided_span<std::uint8_t> counts, std::size_t* max_count = nullptr);

/// Scales each vertex's k weights (or counts[v] when `counts` is given) so they sum to one: what
/// validate asks for when it reports errc::not_normalized. A vertex whose weights are not finite
/// or sum to zero is left as it is and reported (the first such vertex; all are processed).
inline status normalize_weights(std::size_t k, strided_span<float> weights,
                                strided_span<const std::uint8_t> counts = {});

} // namespace keyblend

#include "impl/skin.impl.hpp"
