// keyblend's skeleton and clips in ozz-animation's offline forms, for the benchmarks that run
// keyblend and ozz side by side (bench/ozz). Joints are matched by name.
#pragma once

#include <keyblend/keyblend.hpp>

#include "ozz/animation/offline/raw_animation.h"
#include "ozz/animation/offline/raw_skeleton.h"
#include "ozz/animation/offline/skeleton_builder.h"
#include "ozz/animation/runtime/skeleton.h"
#include "ozz/base/memory/unique_ptr.h"

#include <string>
#include <vector>

namespace kbozz {

namespace oo = ozz::animation::offline;
namespace om = ozz::math;

inline oo::RawSkeleton::Joint raw_joint(const keyblend::skeleton& s, const std::vector<std::vector<std::size_t>>& children,
                                        std::size_t j) {
    oo::RawSkeleton::Joint out;
    out.name = s.name(j).c_str();
    const keyblend::transform& b = s.bind_transforms()[j];
    out.transform.translation = om::Float3(b.translation.x, b.translation.y, b.translation.z);
    out.transform.rotation = om::Quaternion(b.rotation.x, b.rotation.y, b.rotation.z, b.rotation.w);
    out.transform.scale = om::Float3(b.scale.x, b.scale.y, b.scale.z);
    for (std::size_t c : children[j]) out.children.push_back(raw_joint(s, children, c));
    return out;
}

/// ozz's skeleton of `s`, and for each keyblend joint its ozz joint (-1 when a name does not
/// match: duplicate or empty names). Null when ozz refuses the skeleton.
inline ozz::unique_ptr<ozz::animation::Skeleton> make_skeleton(const keyblend::skeleton& s, std::vector<int>& ozz_of_joint) {
    std::vector<std::vector<std::size_t>> children(s.size());
    oo::RawSkeleton raw;
    for (std::size_t j = 0; j < s.size(); ++j)
        if (s.parent(j) >= 0) children[std::size_t(s.parent(j))].push_back(j);
    for (std::size_t j = 0; j < s.size(); ++j)
        if (s.parent(j) < 0) raw.roots.push_back(raw_joint(s, children, j));
    if (!raw.Validate()) return nullptr;
    ozz::unique_ptr<ozz::animation::Skeleton> out = oo::SkeletonBuilder()(raw);
    ozz_of_joint.assign(s.size(), -1);
    if (!out) return out;
    const auto names = out->joint_names();
    for (std::size_t j = 0; j < s.size(); ++j)
        for (std::size_t k = 0; k < names.size(); ++k)
            if (s.name(j) == names[k]) ozz_of_joint[j] = int(k);
    return out;
}

} // namespace kbozz
