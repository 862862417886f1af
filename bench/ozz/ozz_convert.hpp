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

/// Every key of the clip as ozz's raw tracks (seconds), matrix keys split into T, R, S.
inline oo::RawAnimation raw_animation(const keyblend::skeleton& s, const keyblend::clip& c, const std::vector<int>& ozz_of_joint) {
    const double tps = double(c.ticks_per_second);
    oo::RawAnimation a;
    a.duration = float(double(c.duration) / tps);
    a.tracks.resize(s.size());
    std::vector<const keyblend::channel*> of_joint(s.size(), nullptr);
    for (const keyblend::channel& ch : c.channels) of_joint[ch.joint] = &ch;
    const auto sec = [&](float ticks) { return float(double(ticks) / tps); };
    for (std::size_t j = 0; j < s.size(); ++j) {
        oo::RawAnimation::JointTrack& tr = a.tracks[std::size_t(ozz_of_joint[j])];
        const keyblend::transform& b = s.bind_transforms()[j];
        const keyblend::channel* ch = of_joint[j];
        keyblend::position_track<float> t = ch ? ch->translation : keyblend::position_track<float>();
        keyblend::rotation_track<float> r = ch ? ch->rotation : keyblend::rotation_track<float>();
        keyblend::scale_track<float> sc = ch ? ch->scale : keyblend::scale_track<float>();
        if (ch && ch->has_matrix())
            for (std::size_t k = 0; k < ch->matrix.size(); ++k) {
                const keyblend::transform x = keyblend::to_transform(ch->matrix.value(k));
                t.push_back(ch->matrix.time(k), x.translation);
                r.push_back(ch->matrix.time(k), x.rotation);
                sc.push_back(ch->matrix.time(k), x.scale);
            }
        if (t.empty()) t.push_back(0.0f, b.translation);
        if (r.empty()) r.push_back(0.0f, b.rotation);
        if (sc.empty()) sc.push_back(0.0f, b.scale);
        for (std::size_t k = 0; k < t.size(); ++k)
            tr.translations.push_back({sec(t.time(k)), om::Float3(t.value(k).x, t.value(k).y, t.value(k).z)});
        for (std::size_t k = 0; k < r.size(); ++k)
            tr.rotations.push_back({sec(r.time(k)), om::Quaternion(r.value(k).x, r.value(k).y, r.value(k).z, r.value(k).w)});
        for (std::size_t k = 0; k < sc.size(); ++k)
            tr.scales.push_back({sec(sc.time(k)), om::Float3(sc.value(k).x, sc.value(k).y, sc.value(k).z)});
    }
    return a;
}

} // namespace kbozz
