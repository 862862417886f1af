// keyblend — the skeleton: joints in parent-first order, names, bind pose, lookup by name.
//
// SPDX-License-Identifier: MIT
//
// Joint order. A skeleton stores its joints in depth-first pre-order: every joint comes after its
// parent, and the descendants of joint j are exactly the joints j + 1 .. subtree_end(j) - 1. Children
// keep the order they were given in (parent array: increasing input index; frame tree: the
// first-child / next-sibling chain), and so do roots. Input that is already in pre-order (a .X
// file's frames in file order, a D3DXFRAME tree) keeps its order: the mapping is the identity.
// Whatever the input order, `joint_of_source()` / `source_of_joint()` map between input indices
// and joint indices.
//
// Bind pose. Each joint has a bind ("original", the classic matOriginal) local matrix, relative to
// its parent, kept exactly as given. From it the skeleton derives the bind model matrices
// (`bind_model[j] = bind_model[parent] * bind_local[j]`, roots `bind_local`), their inverses, and the
// bind pose as translation/rotation/scale (`to_transform`, which drops shear; see math.hpp).
#pragma once

#include "error.hpp"
#include "math.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace keyblend {

namespace impl {
struct skeleton_builder;
struct model_schedule;
/// How local-to-model walks this skeleton (impl::model_schedule, computed when it is built): two
/// independent runs per window of joints, and the wide kernels' steps where they are faster.
struct model_schedule_data {
    std::vector<std::uint32_t> runs;     // per window: the first joint of each of its two runs
    std::vector<std::uint32_t> steps;    // steps of up to 4 independent joints, window after window
    std::vector<std::uint32_t> steps_at; // window w's steps: [steps_at[w], steps_at[w + 1])
};
} // namespace impl

/// A parent index: the index of the parent joint, or `no_parent` for a root.
using joint_index = std::int32_t;
inline constexpr joint_index no_parent = -1;

/// One joint as a loader or program describes it, for `skeleton::from_parents`.
struct joint_desc {
    std::string name;
    /// Index of the parent *in the same input array*, or no_parent (-1) for a root.
    joint_index parent = no_parent;
    /// Bind pose relative to the parent (the .X FrameTransformMatrix, loaded with make_mat4).
    glm::mat4 bind_local = glm::mat4(1.0f);
    /// The joint's morph weights in the bind pose: one per morph target of the meshes it holds
    /// (glTF: the node's `weights`, else its mesh's), empty for a joint without morph targets.
    /// Clips animate them like translation, rotation and scale (channel::morph_weights).
    std::vector<float> morph_weights{};
};

/// One frame of a first-child / next-sibling tree (the D3DXFRAME shape), for
/// `skeleton::from_frame_tree`. Links are indices into the same array, or -1 for none.
struct frame_desc {
    std::string name;
    glm::mat4 bind_local = glm::mat4(1.0f);
    joint_index first_child = -1;
    joint_index next_sibling = -1;
};

/// One bone of a skinned mesh: the joint it follows, and the matrix that takes the mesh's vertices
/// into that joint's bind space. The bone's skinning matrix is `model[joint] * offset` (palette_job).
struct skin_bone {
    /// The joint's name (.X: the SkinWeights' transformNodeName).
    std::string name{};
    /// The joint index in the skeleton.
    std::size_t joint = 0;
    /// Mesh space to the bone's bind space: the inverse of the joint's model matrix when the mesh
    /// was bound (.X matrixOffset; glTF inverseBindMatrices).
    glm::mat4 offset = glm::mat4(1.0f);
};

/// What building a skeleton does when two joints share a name.
enum class duplicate_names : unsigned char {
    /// The build fails with errc::duplicate, naming both joints (by input index). The default:
    /// a name that means two joints makes name lookup (SkinWeights, animation targets) ambiguous.
    reject,
    /// The first joint (in input order) keeps the name; each later one is renamed `name#2`,
    /// `name#3`, ..., taking the smallest number that makes a name used by no other joint.
    rename,
};

struct skeleton_options {
    duplicate_names duplicates = duplicate_names::reject;
};

/// Joints in parent-first (depth-first pre-order) order with names, parents and the bind pose.
///
/// Build one with `from_parents` or `from_frame_tree`, which validate the input and return an
/// error naming the joint on failure. A built skeleton is immutable and always valid; copying it
/// copies its arrays. A default-constructed skeleton has no joints (so does one built from an
/// empty list: a file with no frames is not an error).
class skeleton {
public:
    skeleton() = default;

    /// Builds a skeleton from joints in any order, each naming its parent by input index.
    ///
    /// Errors (the message names the joint by input index and name; error::index is that input
    /// index):
    /// - errc::out_of_range: a parent index < -1 or >= the number of joints;
    /// - errc::cycle: a parent chain that never reaches a root (a joint that is its own parent,
    ///   or a loop; the message lists the loop);
    /// - errc::non_finite also for a NaN or infinite morph weight;
    /// - errc::duplicate: two joints with the same name, under duplicate_names::reject (the empty
    ///   name is a name like any other: two unnamed joints are duplicates);
    /// - errc::non_finite: a bind matrix with NaN or infinity;
    /// - errc::invalid_argument: more joints than joint_index can count.
    static result<skeleton> from_parents(const std::vector<joint_desc>& joints,
                                         const skeleton_options& options = {});

    /// Builds a skeleton from a first-child / next-sibling frame tree. `root` is the first root;
    /// its next_sibling chain are the other roots (as D3DX links top-level frames). Every frame
    /// must be reachable from the root exactly once. An empty array gives an empty skeleton (and
    /// `root` is ignored).
    ///
    /// Errors (naming the frame by array index and name; error::index is that index):
    /// - errc::out_of_range: `root`, a first_child or a next_sibling outside the array (-1 is "none");
    /// - errc::cycle: a frame reached twice (a loop, or a frame linked from two places);
    /// - errc::not_found: a frame not reachable from the root;
    /// - and the duplicate-name / non-finite / size errors of from_parents.
    static result<skeleton> from_frame_tree(const std::vector<frame_desc>& frames,
                                            std::size_t root = 0,
                                            const skeleton_options& options = {});

    /// Number of joints.
    std::size_t size() const noexcept { return parents_.size(); }
    bool empty() const noexcept { return parents_.empty(); }

    /// Joint j's name (after renaming, if duplicate_names::rename renamed it). Precondition: j < size().
    const std::string& name(std::size_t j) const { return names_[j]; }
    /// Joint j's parent: an index < j, or no_parent. Precondition: j < size().
    joint_index parent(std::size_t j) const { return parents_[j]; }
    /// One past the last descendant of j: the sub-tree of j is [j, subtree_end(j)).
    std::size_t subtree_end(std::size_t j) const { return static_cast<std::size_t>(subtree_end_[j]); }

    const std::vector<std::string>& names() const noexcept { return names_; }
    const std::vector<joint_index>& parents() const noexcept { return parents_; }

    /// Bind pose relative to the parent, exactly as given.
    const std::vector<glm::mat4>& bind_local() const noexcept { return bind_local_; }
    /// Bind pose as translation / rotation / scale: `to_transform(bind_local()[j])` (shear dropped,
    /// the bottom row ignored; see to_transform).
    const std::vector<transform>& bind_transforms() const noexcept { return bind_transforms_; }
    /// Bind pose in model space: `bind_model[j] = bind_model[parent(j)] * bind_local[j]`; a root's
    /// is its bind_local. (No root transform: model space is the skeleton's own.)
    const std::vector<glm::mat4>& bind_model() const noexcept { return bind_model_; }
    /// Morph weights (see joint_desc::morph_weights): joint j has morph_weight_count(j) of them,
    /// at [morph_weight_offset(j), morph_weight_offset(j) + morph_weight_count(j)) of a pose's
    /// flat array of morph_weight_total() weights (local_pose::morph_weights). bind_morph_weights()
    /// holds the bind pose's, in that layout.
    std::size_t morph_weight_count(std::size_t j) const {
        return morph_offsets_.empty() ? 0 : morph_offsets_[j + 1] - morph_offsets_[j];
    }
    std::size_t morph_weight_offset(std::size_t j) const { return morph_offsets_.empty() ? 0 : morph_offsets_[j]; }
    std::size_t morph_weight_total() const noexcept { return bind_morph_weights_.size(); }
    const std::vector<float>& bind_morph_weights() const noexcept { return bind_morph_weights_; }

    /// `inverse(bind_model()[j])`: maps model space to joint j's bind space. For a singular bind
    /// model matrix (a zero scale somewhere up the chain) there is no inverse; the entry is then
    /// the identity. (Skinning uses the mesh's own offset matrices when it has them; this is for
    /// code-built skeletons.)
    const std::vector<glm::mat4>& inverse_bind_model() const noexcept { return inverse_bind_model_; }

    /// The joint with exactly this name (case-sensitive, as .X frame references are), or
    /// errc::not_found with a message quoting the name. O(log n), no allocation on success.
    result<std::size_t> find(std::string_view name) const;

    /// For input index i (of from_parents' joints or from_frame_tree's frames): its joint index.
    const std::vector<std::size_t>& joint_of_source() const noexcept { return joint_of_source_; }
    /// For joint j: the input index it was built from.
    const std::vector<std::size_t>& source_of_joint() const noexcept { return source_of_joint_; }

    /// True when `ancestor` is `j` or one of j's ancestors. Preconditions: both < size().
    bool is_in_subtree(std::size_t j, std::size_t ancestor) const noexcept {
        return j >= ancestor && j < subtree_end(ancestor);
    }

private:
    friend struct impl::skeleton_builder;
    friend struct impl::model_schedule;

    std::vector<std::string> names_;
    std::vector<joint_index> parents_;
    std::vector<joint_index> subtree_end_;
    std::vector<glm::mat4> bind_local_;
    std::vector<transform> bind_transforms_;
    std::vector<glm::mat4> bind_model_;
    std::vector<glm::mat4> inverse_bind_model_;
    std::vector<std::size_t> joint_of_source_;
    std::vector<std::size_t> source_of_joint_;
    std::vector<joint_index> by_name_; // joint indices sorted by name, for find()
    std::vector<std::size_t> morph_offsets_; // size() + 1 entries, or none when no joint has weights
    std::vector<float> bind_morph_weights_;
    impl::model_schedule_data schedule_;
};

} // namespace keyblend

#include "impl/skeleton.impl.hpp"
