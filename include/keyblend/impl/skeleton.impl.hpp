// keyblend — definitions for skeleton.hpp. Included at the bottom of skeleton.hpp; do not include
// directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace keyblend {
namespace impl {

/// local_to_model's SIMD path works through windows of this many joints (the local matrices of a
/// window are computed first, on the stack: 6 KB).
inline constexpr std::size_t model_window_joints = 128;

/// Where local_to_model splits a window [begin, end) of joints into two runs that do not depend on
/// each other: the joints before `first` are computed first, then [first, middle) and [middle,
/// end), whose parents are in their own run or before `first`. `middle` is the end of one of the
/// sub-trees that follow one another from `first` (a joint after the sub-tree of `first` is not a
/// descendant of it: its parent is before `first` or after the boundary). Of all such splits, the
/// one whose shorter run is longest: the runs' joints go in pairs, one of each, and a pair's
/// products overlap where one joint's wait for its parent's would not. (The first joint whose
/// sub-tree ends inside the window would split a file whose scene root frame comes before the
/// armature into that frame and everything else.)
/// middle == first == end when no split pairs any joints.
struct model_split {
    std::size_t first, middle;
};

struct model_schedule {
    static model_split split(const skeleton& s, std::size_t begin, std::size_t end) {
        model_split best{end, end};
        std::size_t paired = 0; // the shorter run's length with `best`
        // (No split from a later `first` can pair more than half of what follows it.)
        for (std::size_t first = begin; first < end && (end - first) / 2 > paired; ++first) {
            const std::size_t target = first + (end - first) / 2;
            const auto distance = [target](std::size_t x) { return x > target ? x - target : target - x; };
            std::size_t middle = end;
            for (std::size_t c = first; c < end;) {
                c = std::min(s.subtree_end(c), end);
                if (c < end && (middle == end || distance(c) < distance(middle))) middle = c;
            }
            const std::size_t m = std::min(middle - first, end - middle);
            if (middle < end && m > paired) {
                paired = m;
                best = {first, middle};
            }
        }
        return best;
    }

    /// The split of window `w` of the whole skeleton, computed when the skeleton was built.
    static model_split full_range(const skeleton& s, std::size_t w) {
        return {s.schedule_.runs[2 * w], s.schedule_.runs[2 * w + 1]};
    }

    static constexpr std::size_t slots = 4;
    /// An entry of a step of `steps` is a joint, decoded as below with what the kernel needs
    /// ready, or this: no joint in this slot.
    static constexpr std::uint32_t no_joint = 0xFFFFFFFFu;
    /// Bits 0-12 of an entry: where the joint's local rows are in the steps' buffer of a window
    /// (`rows_offset`).
    static constexpr std::uint32_t rows_bits = 0x1FFFu;
    /// Bits 13-19: the joint's place in its window.
    static constexpr unsigned joint_shift = 13;
    /// Flag of an entry: the joint's parent was computed in the step before, by the slot in the
    /// two bits above `slot_shift`, and is still in that slot's register.
    static constexpr std::uint32_t parent_in_slot = 0x80000000u;
    static constexpr unsigned slot_shift = 29;
    /// The steps' buffer of a window (model_window_steps): rows x, y and z of the local matrices
    /// by blocks of 16 joints, joint j of a block in slot (j % 4) * 4 + j / 4 (where a block's
    /// in-lane 4x4 transposes put it).
    using window_rows = float[model_window_joints / 16][3][16][4];
    /// From one of a joint's rows in window_rows to the next, in floats.
    static constexpr std::size_t row_stride = 16 * 4;
    /// Where row x of the joint at `place` in its window is in window_rows, in bytes.
    static constexpr std::uint32_t rows_offset(std::size_t place) {
        return static_cast<std::uint32_t>((place / 16 * 3 * row_stride + ((place & 3) * 4 + (place >> 2 & 3)) * 4) *
                                          sizeof(float));
    }
    /// The joint an entry of the window that starts at joint `first` names.
    static std::size_t entry_joint(std::uint32_t entry, std::size_t first) {
        return first + (entry >> joint_shift & (model_window_joints - 1));
    }

    /// A second way through a window [begin, end), for AVX-512, where a joint's product is one
    /// 512-bit register (4 multiply-adds, but its chain is a cross-lane shuffle longer than the
    /// 128-bit product's): steps of up to `slots` joints that do not depend on each other. Each
    /// slot takes, of the joints whose parent is done, the one with the longest chain below it
    /// (list scheduling by the critical path: at most the tree's depth plus joints / slots
    /// steps). A parent done the step before is read from its slot's register (from memory, the
    /// product would wait for the store); one done earlier, from memory. `begin` is a window's
    /// first joint (a multiple of model_window_joints), `end` at most a window further. Appends
    /// the steps (`slots` entries each) to `out`; returns their number.
    static std::size_t steps(const skeleton& s, std::size_t begin, std::size_t end, std::vector<std::uint32_t>& out) {
        static_assert(rows_offset(model_window_joints - 1) <= rows_bits, "the buffer's offsets fit");
        static_assert(rows_bits == (1u << joint_shift) - 1u, "the offsets end where the places start");
        static_assert((model_window_joints & (model_window_joints - 1)) == 0 &&
                          model_window_joints << joint_shift <= 1u << slot_shift,
                      "the places are whole bits and fit");
        KEYBLEND_ASSERT(begin % model_window_joints == 0 && end - begin <= model_window_joints,
                        "model_schedule::steps: one window");
        const std::size_t n = end - begin;
        std::vector<std::uint32_t> height(n, 1); // joints on the longest chain from j down, in the window
        for (std::size_t j = end; j-- > begin + 1;) {
            const joint_index p = s.parent(j);
            if (p >= 0 && static_cast<std::size_t>(p) >= begin)
                height[static_cast<std::size_t>(p) - begin] =
                    std::max(height[static_cast<std::size_t>(p) - begin], height[j - begin] + 1);
        }
        // Ready joints (parent done or outside the window), with the step and slot that did their
        // parent (step -2: outside the window). The next is the tallest, of equals the one that
        // became ready first: a heap of (height, ~arrival), the joint of each arrival beside it.
        std::vector<std::uint64_t> ready;
        std::vector<std::uint32_t> arrived; // joint by arrival
        const auto make_ready = [&](std::size_t j) {
            ready.push_back(std::uint64_t(height[j - begin]) << 32 | (0xFFFFFFFFu - static_cast<std::uint32_t>(arrived.size())));
            arrived.push_back(static_cast<std::uint32_t>(j));
            std::push_heap(ready.begin(), ready.end());
        };
        std::vector<std::ptrdiff_t> parent_step(n, -2);
        std::vector<std::uint32_t> parent_slot(n, 0);
        for (std::size_t j = begin; j < end; ++j) {
            const joint_index p = s.parent(j);
            if (p < 0 || static_cast<std::size_t>(p) < begin) make_ready(j);
        }
        std::size_t done = 0, count = 0;
        for (std::ptrdiff_t step = 0; done < n; ++step, ++count) {
            std::size_t chosen[slots];
            for (std::size_t r = 0; r < slots; ++r) {
                if (ready.empty()) {
                    chosen[r] = no_joint;
                    out.push_back(no_joint);
                    continue;
                }
                std::pop_heap(ready.begin(), ready.end());
                const std::size_t j = arrived[0xFFFFFFFFu - static_cast<std::uint32_t>(ready.back())];
                ready.pop_back();
                chosen[r] = j;
                const bool in_register = parent_step[j - begin] == step - 1;
                out.push_back(rows_offset(j - begin) | static_cast<std::uint32_t>(j - begin) << joint_shift |
                              (in_register ? parent_in_slot | parent_slot[j - begin] << slot_shift : 0u));
            }
            for (std::size_t r = 0; r < slots; ++r) {
                if (chosen[r] == no_joint) continue;
                ++done;
                for (std::size_t c = chosen[r] + 1; c < std::min(end, s.subtree_end(chosen[r])); c = s.subtree_end(c)) {
                    make_ready(c);
                    parent_step[c - begin] = step;
                    parent_slot[c - begin] = static_cast<std::uint32_t>(r);
                }
            }
        }
        return count;
    }

    /// The steps of window `w` of the whole skeleton (`slots` entries each), or none where the two
    /// runs are expected to be faster.
    static std::pair<const std::uint32_t*, std::size_t> full_range_steps(const skeleton& s, std::size_t w) {
        const std::uint32_t first = s.schedule_.steps_at[w], last = s.schedule_.steps_at[w + 1];
        return {s.schedule_.steps.data() + first, (last - first) / slots};
    }

    static void build(skeleton& s) {
        s.schedule_.runs.clear();
        s.schedule_.steps.clear();
        s.schedule_.steps_at.assign(1, 0);
        for (std::size_t w = 0; w < s.size(); w += model_window_joints) {
            const std::size_t end = std::min(s.size(), w + model_window_joints);
            const model_split m = split(s, w, end);
            s.schedule_.runs.push_back(static_cast<std::uint32_t>(m.first));
            s.schedule_.runs.push_back(static_cast<std::uint32_t>(m.middle));
            // The cost model of the tuning table (impl/simd/tuning.hpp), in cycles: in the two
            // runs a joint's product waits 11 for its parent's, a pair of joints takes 12 (the
            // multipliers' throughput); a step takes 14 (the chain, with a shuffle).
            const std::size_t at = s.schedule_.steps.size();
            const std::size_t n = steps(s, w, end, s.schedule_.steps);
            const std::size_t pairs = std::min(m.middle - m.first, end - m.middle);
            const std::size_t two_runs = 11 * (m.first - w) + 12 * pairs + 11 * (end - m.first - 2 * pairs);
            if (14 * n >= two_runs) s.schedule_.steps.resize(at);
            s.schedule_.steps_at.push_back(static_cast<std::uint32_t>(s.schedule_.steps.size()));
        }
    }
};

inline std::string quoted_joint(const char* kind, std::size_t index, const std::string& name) {
    return std::string(kind) + " " + std::to_string(index) + " '" + name + "'";
}

/// Builds a skeleton from joints already in pre-order. Everything here is validated except names.
struct skeleton_builder {
    // Inputs in joint order.
    std::vector<std::string> names;
    std::vector<joint_index> parents;
    std::vector<glm::mat4> bind;
    std::vector<std::vector<float>> morph; // per joint; empty when no joint has morph weights
    std::vector<std::size_t> source_of_joint;
    std::size_t source_count = 0;
    const char* kind = "joint"; // "joint" or "frame", for messages

    /// Room for `n` joints from `n` inputs of this kind.
    skeleton_builder(std::size_t n, const char* what) : source_count(n), kind(what) {
        names.reserve(n);
        parents.reserve(n);
        bind.reserve(n);
        source_of_joint.reserve(n);
    }

    result<skeleton> finish(const skeleton_options& options) {
        const std::size_t n = parents.size();
        // Names: duplicates are found in input order, so messages and renaming follow the caller's
        // numbering, not ours.
        std::vector<std::size_t> joint_of_source(source_count, 0);
        for (std::size_t j = 0; j < n; ++j) joint_of_source[source_of_joint[j]] = j;
        // The joints by name, which the skeleton keeps for find(); equal neighbours there are the
        // only sign of a duplicate, so the search below runs only when there is one.
        std::vector<joint_index> by_name(n);
        const auto sort_by_name = [&] {
            std::iota(by_name.begin(), by_name.end(), joint_index(0));
            std::sort(by_name.begin(), by_name.end(), [&](joint_index a, joint_index b) {
                return names[static_cast<std::size_t>(a)] < names[static_cast<std::size_t>(b)];
            });
        };
        sort_by_name();
        if (std::adjacent_find(by_name.begin(), by_name.end(), [&](joint_index a, joint_index b) {
                return names[static_cast<std::size_t>(a)] == names[static_cast<std::size_t>(b)];
            }) != by_name.end()) {
            std::unordered_map<std::string_view, std::size_t> first_use; // name -> source index
            first_use.reserve(n);
            std::vector<std::size_t> duplicated; // source indices needing a new name
            for (std::size_t s = 0; s < source_count; ++s) {
                const std::string& nm = names[joint_of_source[s]];
                const auto [it, inserted] = first_use.emplace(nm, s);
                if (inserted) continue;
                if (options.duplicates == duplicate_names::reject)
                    return make_error(errc::duplicate,
                                      quoted_joint(kind, s, nm) + ": same name as " + kind + " " +
                                          std::to_string(it->second),
                                      s);
                duplicated.push_back(s);
            }
            if (!duplicated.empty()) {
                std::unordered_set<std::string> used(names.begin(), names.end());
                std::unordered_map<std::string, unsigned> next_number;
                for (std::size_t s : duplicated) {
                    std::string& nm = names[joint_of_source[s]];
                    unsigned& k = next_number.emplace(nm, 2u).first->second;
                    std::string candidate;
                    do {
                        candidate = nm + "#" + std::to_string(k++);
                    } while (used.count(candidate));
                    used.insert(candidate);
                    nm = std::move(candidate);
                }
                sort_by_name();
            }
        }

        skeleton out;
        out.names_ = std::move(names);
        out.parents_ = std::move(parents);
        out.bind_local_ = std::move(bind);
        out.source_of_joint_ = std::move(source_of_joint);
        out.joint_of_source_ = std::move(joint_of_source);
        if (!morph.empty()) {
            out.morph_offsets_.resize(n + 1, 0);
            for (std::size_t j = 0; j < n; ++j) {
                out.morph_offsets_[j + 1] = out.morph_offsets_[j] + morph[j].size();
                out.bind_morph_weights_.insert(out.bind_morph_weights_.end(), morph[j].begin(), morph[j].end());
            }
        }

        // Sub-tree sizes, children before parents (reverse pre-order).
        std::vector<joint_index> size(n, 1);
        for (std::size_t j = n; j-- > 0;) {
            const joint_index p = out.parents_[j];
            if (p >= 0) size[static_cast<std::size_t>(p)] += size[j];
        }
        out.subtree_end_.resize(n);
        for (std::size_t j = 0; j < n; ++j)
            out.subtree_end_[j] = static_cast<joint_index>(j) + size[j];

        out.bind_transforms_.resize(n);
        out.bind_model_.resize(n);
        out.inverse_bind_model_.resize(n);
        // (Each loop's joints are independent of one another, or only along the parent chain: kept
        // apart, the processor overlaps the square roots and divisions of several joints.)
        for (std::size_t j = 0; j < n; ++j) out.bind_transforms_[j] = to_transform(out.bind_local_[j]);
        for (std::size_t j = 0; j < n; ++j) {
            const joint_index p = out.parents_[j];
            out.bind_model_[j] = p < 0 ? out.bind_local_[j]
                                       : out.bind_model_[static_cast<std::size_t>(p)] * out.bind_local_[j];
            const glm::mat4 inv = glm::inverse(out.bind_model_[j]);
            out.inverse_bind_model_[j] =
                is_finite(inv) && is_finite(out.bind_model_[j]) && glm::determinant(out.bind_model_[j]) != 0.0f
                    ? inv
                    : glm::mat4(1.0f);
        }

        model_schedule::build(out);
        out.by_name_ = std::move(by_name);
        return out;
    }
};

inline status check_joint_count(std::size_t n, const char* kind) {
    if (n > static_cast<std::size_t>(std::numeric_limits<joint_index>::max() - 1))
        return make_error(errc::invalid_argument,
                          std::string("too many ") + kind + "s: " + std::to_string(n));
    return {};
}

} // namespace impl

inline result<skeleton> skeleton::from_parents(const std::vector<joint_desc>& joints,
                                               const skeleton_options& options) {
    const std::size_t n = joints.size();
    if (status s = impl::check_joint_count(n, "joint"); !s) return s.error();
    const joint_index count = static_cast<joint_index>(n);
    for (std::size_t i = 0; i < n; ++i) {
        const joint_desc& d = joints[i];
        if (d.parent < no_parent || d.parent >= count)
            return impl::make_error(errc::out_of_range,
                                    impl::quoted_joint("joint", i, d.name) + ": parent " +
                                        std::to_string(d.parent) + " is out of range (" +
                                        std::to_string(n) + " joints; -1 is a root)",
                                    i);
        if (!is_finite(d.bind_local))
            return impl::make_error(errc::non_finite,
                                    impl::quoted_joint("joint", i, d.name) +
                                        ": bind matrix has NaN or infinity",
                                    i);
        for (float w : d.morph_weights)
            if (!is_finite(w))
                return impl::make_error(errc::non_finite,
                                        impl::quoted_joint("joint", i, d.name) +
                                            ": a morph weight is NaN or infinite",
                                        i);
    }
    const bool any_morph = std::any_of(joints.begin(), joints.end(),
                                       [](const joint_desc& d) { return !d.morph_weights.empty(); });

    // Children lists in input order (counting sort by parent), then an iterative pre-order walk.
    std::vector<std::size_t> first(n + 1, 0); // children of p: child[first[p] .. first[p + 1])
    std::size_t roots = 0;
    for (const joint_desc& d : joints) {
        if (d.parent >= 0)
            ++first[static_cast<std::size_t>(d.parent) + 1];
        else
            ++roots;
    }
    for (std::size_t p = 0; p < n; ++p) first[p + 1] += first[p];
    std::vector<std::size_t> child(n - roots + 0);
    {
        std::vector<std::size_t> fill(first.begin(), first.end() - 1);
        for (std::size_t i = 0; i < n; ++i)
            if (joints[i].parent >= 0) child[fill[static_cast<std::size_t>(joints[i].parent)]++] = i;
    }

    impl::skeleton_builder b(n, "joint");
    std::vector<joint_index> joint_of(n, no_parent);
    std::vector<std::size_t> stack;
    for (std::size_t r = n; r-- > 0;)
        if (joints[r].parent < 0) stack.push_back(r); // reversed: roots pop in input order
    while (!stack.empty()) {
        const std::size_t i = stack.back();
        stack.pop_back();
        const joint_index p = joints[i].parent;
        joint_of[i] = static_cast<joint_index>(b.parents.size());
        b.names.push_back(joints[i].name);
        b.parents.push_back(p < 0 ? no_parent : joint_of[static_cast<std::size_t>(p)]);
        b.bind.push_back(joints[i].bind_local);
        if (any_morph) b.morph.push_back(joints[i].morph_weights);
        b.source_of_joint.push_back(i);
        for (std::size_t c = first[i + 1]; c-- > first[i];) stack.push_back(child[c]);
    }

    if (b.parents.size() != n) {
        // Some joints never reached a root: each of them is on, or hangs below, a parent loop.
        std::size_t start = 0;
        while (joint_of[start] != no_parent) ++start;
        std::vector<std::size_t> step_of(n, n); // position in the walk, n = not visited
        std::vector<std::size_t> walk;
        std::size_t i = start;
        while (step_of[i] == n) {
            step_of[i] = walk.size();
            walk.push_back(i);
            i = static_cast<std::size_t>(joints[i].parent);
        }
        // joints[i] is where the walk met itself: the loop is walk[step_of[i]..].
        const std::size_t loop_start = walk[step_of[i]];
        if (joints[loop_start].parent == static_cast<joint_index>(loop_start))
            return impl::make_error(errc::cycle,
                                    impl::quoted_joint("joint", loop_start, joints[loop_start].name) +
                                        " is its own parent",
                                    loop_start);
        std::string chain;
        for (std::size_t k = step_of[i]; k < walk.size(); ++k)
            chain += "'" + joints[walk[k]].name + "' (" + std::to_string(walk[k]) + ") -> ";
        chain += "'" + joints[loop_start].name + "' (" + std::to_string(loop_start) + ")";
        return impl::make_error(errc::cycle,
                                impl::quoted_joint("joint", loop_start, joints[loop_start].name) +
                                    ": parent chain loops: " + chain,
                                loop_start);
    }
    return b.finish(options);
}

inline result<skeleton> skeleton::from_frame_tree(const std::vector<frame_desc>& frames,
                                                  std::size_t root,
                                                  const skeleton_options& options) {
    const std::size_t n = frames.size();
    if (n == 0) return skeleton{};
    if (status s = impl::check_joint_count(n, "frame"); !s) return s.error();
    if (root >= n)
        return impl::make_error(errc::out_of_range,
                                "root frame " + std::to_string(root) + " is out of range (" +
                                    std::to_string(n) + " frames)",
                                root);
    const joint_index count = static_cast<joint_index>(n);
    for (std::size_t i = 0; i < n; ++i) {
        const frame_desc& f = frames[i];
        const auto check_link = [&](joint_index link, const char* what) -> status {
            if (link < -1 || link >= count)
                return impl::make_error(errc::out_of_range,
                                        impl::quoted_joint("frame", i, f.name) + ": " + what + " " +
                                            std::to_string(link) + " is out of range (" +
                                            std::to_string(n) + " frames; -1 is none)",
                                        i);
            return {};
        };
        if (status s = check_link(f.first_child, "first_child"); !s) return s.error();
        if (status s = check_link(f.next_sibling, "next_sibling"); !s) return s.error();
        if (!is_finite(f.bind_local))
            return impl::make_error(errc::non_finite,
                                    impl::quoted_joint("frame", i, f.name) +
                                        ": bind matrix has NaN or infinity",
                                    i);
    }

    impl::skeleton_builder b(n, "frame");
    std::vector<bool> seen(n, false);
    // (frame, parent joint): a frame's sub-tree is walked before its next sibling.
    std::vector<std::pair<std::size_t, joint_index>> stack;
    stack.emplace_back(root, no_parent);
    while (!stack.empty()) {
        const auto [i, parent] = stack.back();
        stack.pop_back();
        if (seen[i])
            return impl::make_error(errc::cycle,
                                    impl::quoted_joint("frame", i, frames[i].name) +
                                        " is reached twice (a link loops, or two frames link to it)",
                                    i);
        seen[i] = true;
        const joint_index self = static_cast<joint_index>(b.parents.size());
        b.names.push_back(frames[i].name);
        b.parents.push_back(parent);
        b.bind.push_back(frames[i].bind_local);
        b.source_of_joint.push_back(i);
        if (frames[i].next_sibling >= 0)
            stack.emplace_back(static_cast<std::size_t>(frames[i].next_sibling), parent);
        if (frames[i].first_child >= 0)
            stack.emplace_back(static_cast<std::size_t>(frames[i].first_child), self);
    }
    for (std::size_t i = 0; i < n; ++i)
        if (!seen[i])
            return impl::make_error(errc::not_found,
                                    impl::quoted_joint("frame", i, frames[i].name) +
                                        " is not reachable from root frame " + std::to_string(root),
                                    i);
    return b.finish(options);
}

inline result<std::size_t> skeleton::find(std::string_view name) const {
    const auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                                     [&](joint_index j, std::string_view key) {
                                         return std::string_view(names_[static_cast<std::size_t>(j)]) < key;
                                     });
    if (it != by_name_.end() && names_[static_cast<std::size_t>(*it)] == name)
        return static_cast<std::size_t>(*it);
    return impl::make_error(errc::not_found, "no joint named '" + std::string(name) + "'");
}

} // namespace keyblend
