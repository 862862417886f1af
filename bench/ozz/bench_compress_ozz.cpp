// keyblend's compressed clips beside ozz-animation 0.16's optimised animations on the same clips of
// the shared .X files, in the same run: built only when KEYBLEND_OZZ_SOURCE_DIR names ozz's
// sources (bench/ozz/CMakeLists.txt). Never by default, never in CI.
//
//   compress_ozz/<file>/<set>/sample/<random|forward>/<keyblend|ozz>
//       a whole local pose per iteration (keyblend: local_pose from compressed_clip; ozz:
//       SamplingJob into SoaTransforms, with its context); counters: bytes (ozz:
//       Animation::size()) and error_cm_eq (virtual vertices at 3 cm-eq against keyblend's
//       full-precision sampling, every 1/60 s and at the end).
//
// ozz gets every key of the clip (matrix keys split into translation, rotation and scale, missing
// components as the bind pose), its AnimationOptimizer with its defaults (1 mm at 10 cm) scaled to
// the model as keyblend's bound is (1 mm-eq at 10 cm-eq), then AnimationBuilder. The ratio table
// compares keyblend's rate with ozz's.
#include "../bench_main.hpp"
#include "../compress_data.hpp"
#include "ozz_convert.hpp"

#include "ozz/animation/offline/animation_builder.h"
#include "ozz/animation/offline/animation_optimizer.h"
#include "ozz/animation/runtime/animation.h"
#include "ozz/animation/runtime/sampling_job.h"
#include "ozz/base/maths/soa_transform.h"
#include "ozz/base/span.h"

#include <algorithm>
#include <string>
#include <vector>

namespace {

namespace oa = ozz::animation;
namespace oo = ozz::animation::offline;
namespace om = ozz::math;
using kbbench::clip_case;
using kbbench::file_case;

struct ozz_clip {
    ozz::unique_ptr<oa::Skeleton> skeleton;
    std::vector<int> ozz_of_joint;
    ozz::unique_ptr<oa::Animation> animation;
    double error_cm = 0.0;
};

/// ozz's SoA output as keyblend transforms.
void to_pose(const std::vector<om::SoaTransform>& soa, const std::vector<int>& ozz_of_joint, keyblend::local_pose& out) {
    out.resize(ozz_of_joint.size());
    for (std::size_t j = 0; j < ozz_of_joint.size(); ++j) {
        const std::size_t o = std::size_t(ozz_of_joint[j]), lane = o % 4;
        const om::SoaTransform& x = soa[o / 4];
        float v[10][4];
        const om::SimdFloat4 parts[10] = {x.translation.x, x.translation.y, x.translation.z, x.rotation.x, x.rotation.y,
                                          x.rotation.z,    x.rotation.w,    x.scale.x,       x.scale.y,    x.scale.z};
        for (int k = 0; k < 10; ++k) om::StorePtrU(parts[k], v[k]);
        out.set(j, keyblend::transform{glm::vec3(v[0][lane], v[1][lane], v[2][lane]),
                                       keyblend::make_quat(v[6][lane], v[3][lane], v[4][lane], v[5][lane]),
                                       glm::vec3(v[7][lane], v[8][lane], v[9][lane])});
    }
}

struct ozz_case {
    const file_case* file = nullptr;
    const clip_case* clip = nullptr;
    std::unique_ptr<ozz_clip> ozz;
};

std::vector<ozz_case>& cases() {
    static std::vector<ozz_case> all = [] {
        std::vector<ozz_case> out;
        for (const file_case& f : kbbench::files())
            for (const clip_case& c : f.clips) {
                ozz_case k{&f, &c, std::make_unique<ozz_clip>()};
                ozz_clip& o = *k.ozz;
                const keyblend::skeleton& s = f.x->skeleton;
                o.skeleton = kbozz::make_skeleton(s, o.ozz_of_joint);
                if (!o.skeleton || std::find(o.ozz_of_joint.begin(), o.ozz_of_joint.end(), -1) != o.ozz_of_joint.end()) continue;
                const oo::RawAnimation raw = kbozz::raw_animation(s, *c.plain, o.ozz_of_joint);
                oo::AnimationOptimizer optimizer;
                optimizer.setting = oo::AnimationOptimizer::Setting(float(0.1 * f.cm), float(10.0 * f.cm));
                oo::RawAnimation optimized;
                if (!raw.Validate() || !optimizer(raw, *o.skeleton, &optimized)) continue;
                o.animation = oo::AnimationBuilder()(optimized);
                if (!o.animation) continue;
                oa::SamplingJob::Context ctx(o.skeleton->num_joints());
                std::vector<om::SoaTransform> soa(std::size_t(o.skeleton->num_soa_joints()));
                const double duration = double(c.plain->duration);
                o.error_cm = kbbench::error_cm(f, *c.plain, [&](float tick, keyblend::local_pose& p) {
                    oa::SamplingJob job;
                    job.animation = o.animation.get();
                    job.context = &ctx;
                    job.ratio = duration > 0.0 ? float(double(tick) / duration) : 0.0f;
                    job.output = ozz::make_span(soa);
                    (void)job.Run();
                    to_pose(soa, o.ozz_of_joint, p);
                });
                out.push_back(std::move(k));
            }
        return out;
    }();
    return all;
}

void bm_keyblend(benchmark::State& state, const ozz_case* k, bool forward) {
    kbbench::sample_compressed(state, *k->file, *k->clip, forward);
}

void bm_ozz(benchmark::State& state, const ozz_case* k, bool forward) {
    const std::vector<float> t = kbbench::times(*k->clip->plain, forward);
    const ozz_clip& o = *k->ozz;
    oa::SamplingJob::Context ctx(o.skeleton->num_joints());
    std::vector<om::SoaTransform> soa(std::size_t(o.skeleton->num_soa_joints()));
    const float duration = k->clip->plain->duration;
    std::size_t i = 0;
    for (auto _ : state) {
        oa::SamplingJob job;
        job.animation = o.animation.get();
        job.context = &ctx;
        job.ratio = duration > 0.0f ? t[i++ & 1023] / duration : 0.0f;
        job.output = ozz::make_span(soa);
        benchmark::DoNotOptimize(job.Run());
        benchmark::ClobberMemory();
    }
    kbbench::report_poses(state, o.animation->size(), o.error_cm);
}

} // namespace

int main(int argc, char** argv) {
    for (const ozz_case& k : cases()) {
        const std::string base = "compress_ozz/" + k.file->name + "/" + (k.clip->plain->name.empty() ? "(unnamed)" : k.clip->plain->name);
        for (bool forward : {false, true}) {
            const std::string playback = base + "/sample/" + (forward ? "forward" : "random");
            benchmark::RegisterBenchmark((playback + "/ozz").c_str(), bm_ozz, &k, forward);
            benchmark::RegisterBenchmark((playback + "/keyblend").c_str(), bm_keyblend, &k, forward);
        }
    }
    return kbbench::run(argc, argv, [](const std::string& name) -> std::string {
        const std::size_t slash = name.rfind('/');
        return name.substr(slash + 1) == "keyblend" ? name.substr(0, slash + 1) + "ozz" : std::string();
    });
}
