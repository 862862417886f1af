// keyblend — poses and the hierarchy: local poses (TRS per joint, or a matrix per joint), model
// poses (matrices), reset to the bind pose, and local -> model for the whole skeleton or a sub-tree.
//
// SPDX-License-Identifier: MIT
//
// Three kinds of pose, all indexed by joint (skeleton order):
// - `local_pose`: translation / rotation / scale per joint, relative to the parent. Stored as a
//   structure of arrays (one float stream per component, padded to `pose_lane_block` joints, the
//   padding kept at the identity) so sampling, blending and local_to_model run over 8 joints at a
//   time. Read and write one joint with get / set.
// - local matrices, `std::vector<glm::mat4>`: the seeds' TransformationMatrix per frame. Matrix
//   keys sampled element-wise and the seeds' additive matrix blend live here (they need not be
//   T*R*S: a lerp between two rotations shears).
// - model matrices, `std::vector<glm::mat4>`: the seeds' matCombined, `parent_model * local`.
//
// Functions write into caller-owned buffers: a pointer and a count (a plain array, a mapped GPU
// buffer), or a std::vector as a convenience, resized to the skeleton's size (a no-op after the
// first frame). Nothing allocates once the buffers have their size.
#pragma once

#include "error.hpp"
#include "impl/pose_simd.hpp"
#include "math.hpp"
#include "skeleton.hpp"
#include "span.hpp"

#include <cstddef>
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
    void resize(std::size_t joint_count);

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
    /// Changes the number of morph weights; weights kept keep their values, new ones are 0.
    void resize_morph_weights(std::size_t count) { morph_.resize(count, 0.0f); }

    /// Stream `s`: padded_size() floats (64-byte aligned). Precondition: s < stream_count.
    float* data(stream s) noexcept { return data_.get() + static_cast<std::size_t>(s) * capacity_; }
    const float* data(stream s) const noexcept {
        return data_.get() + static_cast<std::size_t>(s) * capacity_;
    }

private:
    void fill_identity(std::size_t first, std::size_t last);

    impl::aligned_floats data_;
    std::vector<float> morph_;
    std::size_t size_ = 0;
    std::size_t padded_ = 0;
    std::size_t capacity_ = 0; // floats allocated per stream (the stride between streams)
};

/// Sets every joint of `pose` to the skeleton's bind pose (bind_transforms), resizing it to
/// s.size(): the seeds' `Reset`, in TRS form.
inline void reset_to_bind(const skeleton& s, local_pose& pose);

/// Sets `local` to the skeleton's bind local matrices, exactly (resized to s.size()): the seeds'
/// D3DXFRAME_EX::Reset (TransformationMatrix = matOriginal).
inline void reset_to_bind(const skeleton& s, std::vector<glm::mat4>& local);

/// `to_matrix` of every joint, into `local` (resized to pose.size()).
inline void to_local_matrices(const local_pose& pose, std::vector<glm::mat4>& local);

/// The same into caller memory: `count` matrices at `local`, joint j's at local[j]. On an error
/// nothing is written: errc::size_mismatch when count < pose.size(), errc::invalid_argument for a
/// null `local` with joints to write. Matrices past pose.size() are left as they are.
inline status to_local_matrices(const local_pose& pose, glm::mat4* local, std::size_t count);

/// `to_transform` of every matrix, into `pose` (resized to local.size()). Shear is dropped and the
/// bottom row ignored (see to_transform).
inline void to_local_pose(const std::vector<glm::mat4>& local, local_pose& pose);

/// Local to model space for the whole skeleton: the seeds' UpdateHierarchy.
///
/// `model[j] = model[parent(j)] * M(local[j])`, and for a root `root * M(local[j])`, where M is
/// `T * R * S` (to_matrix). Joints are visited parent first (skeleton order), so one pass suffices.
/// `root` places the whole skeleton (an object's world matrix); any 4x4 matrix works, projective
/// ones included. `model` is resized to s.size().
///
/// Precondition: local.size() == s.size() (asserted; otherwise only the first
/// min(local.size(), s.size()) joints are computed and the rest of `model` is left as it was).
/// Rotations should be unit (a non-unit quaternion scales, see to_matrix). SIMD (AVX2 or SSE2)
/// unless KEYBLEND_NO_INTRINSICS; results equal the scalar path to float rounding.
inline void local_to_model(const skeleton& s, const local_pose& local, std::vector<glm::mat4>& model,
                           const glm::mat4& root = glm::mat4(1.0f));

/// As above from local matrices: `model[j] = model[parent(j)] * local[j]` (roots: `root * local`),
/// with GLM's matrix product. Same size precondition.
inline void local_to_model(const skeleton& s, const std::vector<glm::mat4>& local,
                           std::vector<glm::mat4>& model, const glm::mat4& root = glm::mat4(1.0f));

/// local_to_model into caller memory (a plain array, a mapped constant buffer): `model` points to
/// `model_count` matrices and joint j's goes to model[j]; the results are those of the vector
/// version. Checked first, and on an error nothing is written:
/// - errc::size_mismatch: local.size() != s.size(), or model_count < s.size();
/// - errc::invalid_argument: `model` null while the skeleton has joints.
/// Matrices past s.size() are left as they are. The vector versions above are conveniences that
/// size the vector and do the same.
inline status local_to_model(const skeleton& s, const local_pose& local, glm::mat4* model,
                             std::size_t model_count, const glm::mat4& root = glm::mat4(1.0f));

/// The same from `local_count` local matrices at `local` (errc::size_mismatch when local_count !=
/// s.size(); errc::invalid_argument for a null `local` too).
inline status local_to_model(const skeleton& s, const glm::mat4* local, std::size_t local_count,
                             glm::mat4* model, std::size_t model_count,
                             const glm::mat4& root = glm::mat4(1.0f));

/// Recomputes the model matrices of `joint` and its descendants ([joint, s.subtree_end(joint)))
/// and nothing else, with `parent_model` as the matrix above `joint` (its parent's model matrix, or
/// a root transform): `model[joint] = parent_model * M(local[joint])`. The rest of `model` must
/// already be sized (it is resized to s.size() if not) and is left untouched.
/// Precondition: joint < s.size() (asserted; otherwise nothing is done), sizes as above.
inline void local_to_model_subtree(const skeleton& s, std::size_t joint, const local_pose& local,
                                   const glm::mat4& parent_model, std::vector<glm::mat4>& model);

/// As above, taking the parent's model matrix from `model[parent(joint)]` (which must be current),
/// or the identity when `joint` is a root.
inline void local_to_model_subtree(const skeleton& s, std::size_t joint, const local_pose& local,
                                   std::vector<glm::mat4>& model);

/// The sub-tree version for local matrices.
inline void local_to_model_subtree(const skeleton& s, std::size_t joint,
                                   const std::vector<glm::mat4>& local,
                                   const glm::mat4& parent_model, std::vector<glm::mat4>& model);

/// The sub-tree versions into caller memory (`model_count` matrices at `model`; local matrices:
/// `local_count` at `local`). Errors as local_to_model's pointer versions, plus
/// errc::out_of_range for joint >= s.size(); nothing is written on an error, and only
/// [joint, s.subtree_end(joint)) otherwise.
inline status local_to_model_subtree(const skeleton& s, std::size_t joint, const local_pose& local,
                                     const glm::mat4& parent_model, glm::mat4* model,
                                     std::size_t model_count);
/// Taking the parent's model matrix from model[parent(joint)] (the identity for a root).
inline status local_to_model_subtree(const skeleton& s, std::size_t joint, const local_pose& local,
                                     glm::mat4* model, std::size_t model_count);
inline status local_to_model_subtree(const skeleton& s, std::size_t joint, const glm::mat4* local,
                                     std::size_t local_count, const glm::mat4& parent_model,
                                     glm::mat4* model, std::size_t model_count);

} // namespace keyblend

#include "impl/pose.impl.hpp"
