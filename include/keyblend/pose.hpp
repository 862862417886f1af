// keyblend — poses and the hierarchy: local poses (TRS per joint, or a matrix per joint), model
// poses (matrices), reset to the bind pose, and the local-to-model job for the whole skeleton or a
// sub-tree.
//
// SPDX-License-Identifier: MIT
//
// Three kinds of pose, all indexed by joint (skeleton order):
// - `local_pose`: translation / rotation / scale per joint, relative to the parent. Stored as a
//   structure of arrays (one float stream per component, padded to `pose_lane_block` joints, the
//   padding kept at the identity) so sampling, blending and local_to_model run over 8 joints at a
//   time. Read and write one joint with get / set.
// - local matrices, one glm::mat4 per joint: the classic TransformationMatrix per frame. Matrix
//   keys sampled element-wise and the classic additive matrix blend live here (they need not be
//   T*R*S: a lerp between two rotations shears).
// - model matrices, one glm::mat4 per joint: the classic combined matrix, `parent_model * local`.
//
// Matrices go to caller-owned buffers (span.hpp: a std::vector, a plain array, a mapped GPU
// buffer), sized once by the caller; nothing allocates per frame.
#pragma once

#include "error.hpp"
#include "impl/simd/aligned.hpp"
#include "impl/simd/isa.hpp"
#include "math.hpp"
#include "skeleton.hpp"
#include "span.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace keyblend {

/// Translation / rotation / scale per joint (each `T * R * S`), relative to the parent joint.
///
/// Layout: ten float streams (translation x, y, z; rotation x, y, z, w; scale x, y, z), each
/// `padded_size()` long (size() rounded up to a multiple of pose_lane_block), in one 64-byte
/// aligned block. Padding lanes hold the identity transform and are never part of a result; kernels
/// read and write them freely. Copying copies the streams; moving is cheap.
class local_pose {
public:
    /// The component streams, in storage order.
    enum stream : unsigned {
        translation_x, translation_y, translation_z,
        rotation_x, rotation_y, rotation_z, rotation_w,
        scale_x, scale_y, scale_z,
        stream_count
    };

    /// No joints.
    local_pose() = default;
    /// `joint_count` identity transforms.
    explicit local_pose(std::size_t joint_count) { resize(joint_count); }
    /// The skeleton's bind pose (skeleton::bind_transforms).
    explicit local_pose(const skeleton& s);

    local_pose(const local_pose& other);
    local_pose& operator=(const local_pose& other);
    local_pose(local_pose&&) noexcept = default;
    local_pose& operator=(local_pose&&) noexcept = default;

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    /// size() rounded up to a multiple of pose_lane_block: the length of each stream.
    std::size_t padded_size() const noexcept { return padded_; }

    /// Changes the joint count. Joints kept keep their values; new joints are the identity. Allocates
    /// only when the padded size grows beyond what was allocated.
    void resize(std::size_t joint_count) {
        if (joint_count != size_) change_size(joint_count); // (every frame's call: one comparison, inline)
    }

    /// Joint j's transform. Precondition: j < size() (asserted; out of range returns the identity).
    transform get(std::size_t j) const;
    /// Sets joint j's transform. Precondition: j < size() (asserted; out of range does nothing).
    void set(std::size_t j, const transform& t);

    /// The morph weights of every joint that has some (joint j's at
    /// [skeleton::morph_weight_offset(j), + morph_weight_count(j)) ), in the skeleton's layout:
    /// skeleton::morph_weight_total() of them in a pose sampled, blended or reset for that
    /// skeleton; none in a pose built from a joint count.
    span<float> morph_weights() noexcept { return morph_; }
    span<const float> morph_weights() const noexcept { return morph_; }
    /// The joint each morph weight belongs to, parallel to morph_weights().
    span<const std::uint32_t> morph_weight_joints() const noexcept { return morph_joints_; }
    /// Lays the morph weights out as skeleton `s` does (s.morph_weight_total() of them; weights
    /// kept keep their values, new ones are 0). Allocates only when the count grows.
    void set_morph_layout(const skeleton& s);
    /// The same layout as `other`'s.
    void set_morph_layout(const local_pose& other);

    /// Stream `s`: padded_size() floats (64-byte aligned). Precondition: s < stream_count.
    float* data(stream s) noexcept { return data_.get() + static_cast<std::size_t>(s) * capacity_; }
    const float* data(stream s) const noexcept {
        return data_.get() + static_cast<std::size_t>(s) * capacity_;
    }

private:
    void change_size(std::size_t joint_count);
    void fill_identity(std::size_t first, std::size_t last);

    impl::aligned_floats data_;
    std::vector<float> morph_;
    std::vector<std::uint32_t> morph_joints_;
    std::size_t size_ = 0;
    std::size_t padded_ = 0;
    std::size_t capacity_ = 0; // floats allocated per stream (the stride between streams)
};

/// Sets every joint of `pose` to the skeleton's bind pose (bind_transforms, and its morph weights),
/// resizing it to s.size(): the classic Reset, in TRS form.
inline void reset_to_bind(const skeleton& s, local_pose& pose);

/// Sets `local[j]` to the skeleton's bind local matrix, exactly, for every joint j: the classic
/// frame Reset (TransformationMatrix = matOriginal). errc::size_mismatch, and nothing written, when
/// `local` has fewer than s.size() matrices; matrices past s.size() are left as they are.
inline status reset_to_bind(const skeleton& s, span<glm::mat4> local);

/// `to_matrix` of every joint into `local[0, pose.size())`. errc::size_mismatch, and nothing
/// written, when `local` is smaller; matrices past pose.size() are left as they are.
inline status to_local_matrices(const local_pose& pose, span<glm::mat4> local);

/// `to_transform` of every matrix, into `pose` (resized to local.size()). Shear is dropped and the
/// bottom row ignored (see to_transform).
inline void to_local_pose(span<const glm::mat4> local, local_pose& pose);

/// Local to model space, the classic UpdateHierarchy: for every joint j (or, with `from`, for the
/// joints of one sub-tree),
///
///     output[j] = output[parent(j)] * M(local j)        and for a root joint: root * M(local j)
///
/// where M(local j) is `T * R * S` of `input` (to_matrix) or the matrix `input_matrices[j]` (GLM's
/// product), whichever is given. Joints are visited parent first (skeleton order), so one pass
/// suffices. `root` places the whole skeleton (an object's world matrix); any 4x4 matrix works,
/// projective ones included.
///
/// Contract (every job's, see docs/jobs.md): the caller owns every buffer; the job holds no state
/// and allocates nothing; validate() checks everything and names the first bad element; run()
/// returns the errors of validate() that keep it inside memory (the checks below marked "run") and
/// writes nothing on an error.
/// - run: errc::invalid_argument for a null skeleton, for neither or both of `input` and
///   `input_matrices` given; errc::size_mismatch when the input does not have skeleton->size()
///   joints or `output` has fewer than skeleton->size() matrices; errc::out_of_range when `from` is
///   neither all_joints nor a joint index.
/// - run, with `bones`: palette_job's errors (errc::invalid_argument for a null span,
///   errc::size_mismatch when `palette` has fewer matrices than `bones`, errc::out_of_range for a
///   bone whose joint is not below skeleton->size(), naming the bone; error::index the bone).
/// - validate, also: errc::non_finite for a NaN or infinite value in the input, naming the joint.
///
/// Results: SIMD over the lane types the build targets, equal to the scalar path
/// (KEYBLEND_NO_INTRINSICS) to float rounding (the tests: within 1e-6 of the matrices' magnitude).
/// Rotations should be unit (a non-unit quaternion scales, see to_matrix). Matrices of `output`
/// past skeleton->size(), and outside the sub-tree with `from`, are left as they are.
struct local_to_model_job {
    /// `from`'s default: every joint.
    static constexpr std::size_t all_joints = static_cast<std::size_t>(-1);

    const keyblend::skeleton* skeleton = nullptr;
    /// The local pose as translation / rotation / scale, or ...
    const local_pose* input = nullptr;
    /// ... as one matrix per joint (the classic matrix path; sampled matrix keys, the additive
    /// matrix blend). Exactly one of the two.
    span<const glm::mat4> input_matrices;
    /// The matrix above every root joint (the character's world matrix), or nullptr for the
    /// identity. Read by run() only.
    const glm::mat4* root = nullptr;
    /// all_joints, or a joint: then only [from, skeleton->subtree_end(from)) is computed, its parent's
    /// model matrix read from output[parent(from)] (which must be current), or `root` when `from` is
    /// a root joint. What a correction of part of a pose needs (IK, then the sub-tree below it).
    std::size_t from = all_joints;
    /// skeleton->size() model matrices or more (a std::vector, a mapped constant buffer).
    span<glm::mat4> output;
    /// Optional: a mesh's bones, and then the skinning palette is computed too, after the model
    /// matrices and while they are in cache: palette[b] = output[bones[b].joint] * bones[b].offset
    /// (palette_job's products with the same kernels, so the same bits as palette_job after this
    /// job). For a caller that needs both, the model matrices (attachments, IK) and the palette (a
    /// GPU skinning constant buffer). With `from`, every bone's matrix is computed: the model
    /// matrices outside the sub-tree must be current. Matrices of `palette` past bones.size() are
    /// not touched.
    span<const skin_bone> bones;
    span<glm::mat4> palette;

    status validate() const;
    KEYBLEND_JOB_ABI status run() const;
};

} // namespace keyblend

#include "impl/pose.impl.hpp"
