// The crowd of bench_crowd (see bench/bench_crowd.cpp) run by keyblend and by ozz-animation 0.16 in
// the same process, on the same data: the model loaded by keyblend's .X loader, converted to ozz's
// runtime skeleton and animations (every key kept; ozz quantizes them), the same characters (times,
// weights), each frame: 3 SamplingJobs, a 3-layer BlendingJob, LocalToModelJob, the palette
// (model * offset per bone) and a SkinningJob of the mesh's positions and normals (ozz's weight
// layout: k - 1 weights, the last implied); keyblend's frame computes the palette in its skinning
// job (skinning_job::bones), ozz has no such job. keyblend plays the sets as the loader gives them
// (slerp); ozz interpolates rotations by nlerp. stage/sample_nlerp is the like-for-like sampling:
// keyblend's copies of the clips with nlerp rotation tracks.
//
//   crowd/<model>/frame/<N>/{1_thread,2_threads}[/ozz]   keyblend, and ozz after it
//   crowd/<model>/frame_packed_normals/<N>/{1_thread,2_threads}
//                                                        keyblend's frame writing its normals
//                                                        packed (out_normals_packed, 4 bytes, not
//                                                        12), beside ozz's frame (float normals)
//   crowd/<model>/stage/<stage>[/ozz]                    one stage for 64 characters, one thread
//   crowd/<model>/stage/sample_nlerp[/ozz]               sampling, both by nlerp
//   crowd/<model>/stage/palette_skin[/ozz]               keyblend's palette fused into its skinning
//                                                        job; ozz's palette then its SkinningJob
//   crowd/<model>/stage/local_to_model_palette[/ozz]     keyblend's local-to-model job computing the
//                                                        palette too; ozz's LocalToModelJob then
//                                                        its palette
//   crowd/machine/read, crowd/machine/write              one thread's memory bandwidth (bytes/s),
//                                                        beside keyblend's frames' output bytes/s
//
// Each ozz case is printed beside the keyblend case of the same name: the ratio is keyblend / ozz.
// Built only when KEYBLEND_OZZ_SOURCE_DIR names ozz's sources (bench/ozz/CMakeLists.txt).
#include "../crowd.hpp"
#include "ozz_convert.hpp"

#include "ozz/animation/offline/animation_builder.h"
#include "ozz/animation/offline/raw_animation.h"
#include "ozz/animation/offline/raw_skeleton.h"
#include "ozz/animation/offline/skeleton_builder.h"
#include "ozz/animation/runtime/animation.h"
#include "ozz/animation/runtime/blending_job.h"
#include "ozz/animation/runtime/local_to_model_job.h"
#include "ozz/animation/runtime/sampling_job.h"
#include "ozz/animation/runtime/skeleton.h"
#include "ozz/base/containers/vector.h"
#include "ozz/base/maths/simd_math.h"
#include "ozz/base/maths/soa_transform.h"
#include "ozz/base/memory/unique_ptr.h"
#include "ozz/base/span.h"
#include "ozz/geometry/runtime/skinning_job.h"

#include <cstdio>
#include <cstdlib>

namespace {

using namespace kbcrowd;
namespace oa = ozz::animation;
namespace oo = ozz::animation::offline;
namespace om = ozz::math;

// ---------------------------------------------------------------------------------------------
// The model in ozz's form
// ---------------------------------------------------------------------------------------------

struct ozz_model {
    ozz::unique_ptr<oa::Skeleton> skeleton;
    std::vector<int> ozz_of_joint;                  // keyblend joint -> ozz joint
    std::vector<ozz::unique_ptr<oa::Animation>> animations;
    std::vector<int> bone_joint;                    // ozz joint per bone
    ozz::vector<om::Float4x4> bone_offset;
    std::vector<float> weights;                     // n x (k - 1)
};

om::Float4x4 to_ozz(const glm::mat4& m) {
    om::Float4x4 out;
    for (int c = 0; c < 4; ++c) out.cols[c] = om::simd_float4::Load(m[c][0], m[c][1], m[c][2], m[c][3]);
    return out;
}

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "bench_crowd_ozz: %s\n", what);
    std::exit(1);
}

ozz_model make_ozz_model() {
    const model& m = the_model();
    const keyblend::skeleton& s = m.skeleton;
    ozz_model o;
    o.skeleton = kbozz::make_skeleton(s, o.ozz_of_joint);
    if (!o.skeleton) fail("SkeletonBuilder failed");
    for (int v : o.ozz_of_joint)
        if (v < 0) fail("joint names do not match (duplicate or empty names)");

    for (const keyblend::clip& c : m.clips) {
        const oo::RawAnimation a = kbozz::raw_animation(s, c, o.ozz_of_joint);
        if (!a.Validate()) fail("a RawAnimation does not validate");
        o.animations.push_back(oo::AnimationBuilder()(a));
        if (!o.animations.back()) fail("AnimationBuilder failed");
    }
    for (const keyblend::skin_bone& b : m.bones) {
        o.bone_joint.push_back(o.ozz_of_joint[b.joint]);
        o.bone_offset.push_back(to_ozz(b.offset));
    }
    const std::size_t k = m.influences;
    for (std::size_t v = 0; v < m.positions.size(); ++v)
        for (std::size_t i = 0; i + 1 < k; ++i) o.weights.push_back(m.weights[v * k + i]);
    return o;
}

const ozz_model& the_ozz_model() {
    static const ozz_model o = make_ozz_model();
    return o;
}

// ---------------------------------------------------------------------------------------------
// An ozz character: the same time and weights as keyblend's character of the same index
// ---------------------------------------------------------------------------------------------

struct ozz_character {
    double time = 0.0;
    float weights[3] = {};
    oa::SamplingJob::Context contexts[3];
    ozz::vector<om::SoaTransform> sampled[3], pose;
    ozz::vector<om::Float4x4> models, palette;
    std::vector<glm::vec3> positions, normals;
};

std::vector<std::unique_ptr<ozz_character>> make_ozz_crowd(std::size_t count) {
    const model& m = the_model();
    const ozz_model& o = the_ozz_model();
    const auto keyblend_crowd = make_crowd(count); // the same times and weights
    const std::size_t soa = std::size_t(o.skeleton->num_soa_joints());
    std::vector<std::unique_ptr<ozz_character>> crowd;
    for (std::size_t i = 0; i < count; ++i) {
        auto c = std::make_unique<ozz_character>();
        c->time = keyblend_crowd[i]->time;
        for (int l = 0; l < 3; ++l) {
            c->weights[l] = keyblend_crowd[i]->weights[l];
            c->contexts[l].Resize(o.skeleton->num_joints());
            c->sampled[l].resize(soa);
        }
        c->pose.resize(soa);
        c->models.resize(std::size_t(o.skeleton->num_joints()));
        c->palette.resize(o.bone_joint.size());
        c->positions.resize(m.positions.size());
        c->normals.resize(m.normals.size());
        crowd.push_back(std::move(c));
    }
    return crowd;
}

bool ozz_sample(ozz_character& c, double dt) {
    const ozz_model& o = the_ozz_model();
    c.time += dt;
    bool ok = true;
    for (int l = 0; l < 3; ++l) {
        const oa::Animation& a = *o.animations[std::size_t(l) % o.animations.size()];
        const double d = double(a.duration());
        oa::SamplingJob job;
        job.animation = &a;
        job.context = &c.contexts[l];
        job.ratio = d > 0.0 ? float(std::fmod(c.time + 0.37 * l, d) / d) : 0.0f;
        job.output = ozz::make_span(c.sampled[l]);
        ok &= job.Run();
    }
    return ok;
}

bool ozz_blend(ozz_character& c) {
    const ozz_model& o = the_ozz_model();
    oa::BlendingJob::Layer layers[3];
    for (int l = 0; l < 3; ++l) {
        layers[l].weight = c.weights[l];
        layers[l].transform = ozz::make_span(c.sampled[l]);
    }
    oa::BlendingJob job;
    job.layers = layers;
    job.rest_pose = o.skeleton->joint_rest_poses();
    job.output = ozz::make_span(c.pose);
    return job.Run();
}

bool ozz_hierarchy(ozz_character& c) {
    oa::LocalToModelJob job;
    job.skeleton = the_ozz_model().skeleton.get();
    job.input = ozz::make_span(c.pose);
    job.output = ozz::make_span(c.models);
    return job.Run();
}

bool ozz_palette(ozz_character& c) {
    const ozz_model& o = the_ozz_model();
    for (std::size_t b = 0; b < o.bone_joint.size(); ++b)
        c.palette[b] = c.models[std::size_t(o.bone_joint[b])] * o.bone_offset[b];
    return true;
}

bool ozz_skin(ozz_character& c) {
    const model& m = the_model();
    const ozz_model& o = the_ozz_model();
    const std::size_t k = m.influences;
    ozz::geometry::SkinningJob job;
    job.vertex_count = int(m.positions.size());
    job.influences_count = int(k);
    job.joint_matrices = ozz::make_span(c.palette);
    job.joint_indices = ozz::span<const std::uint16_t>(m.bone_indices.data(), m.bone_indices.size());
    job.joint_indices_stride = sizeof(std::uint16_t) * k;
    if (k > 1) {
        job.joint_weights = ozz::span<const float>(o.weights.data(), o.weights.size());
        job.joint_weights_stride = sizeof(float) * (k - 1);
    }
    job.in_positions = ozz::span<const float>(&m.positions[0].x, m.positions.size() * 3);
    job.in_positions_stride = sizeof(float) * 3;
    job.out_positions = ozz::span<float>(&c.positions[0].x, c.positions.size() * 3);
    job.out_positions_stride = sizeof(float) * 3;
    job.in_normals = ozz::span<const float>(&m.normals[0].x, m.normals.size() * 3);
    job.in_normals_stride = sizeof(float) * 3;
    job.out_normals = ozz::span<float>(&c.normals[0].x, c.normals.size() * 3);
    job.out_normals_stride = sizeof(float) * 3;
    return job.Run();
}

bool ozz_frame(ozz_character& c, double dt) {
    return ozz_sample(c, dt) & ozz_blend(c) & ozz_hierarchy(c) & ozz_palette(c) & ozz_skin(c);
}

void bm_ozz_frame(benchmark::State& state, std::size_t count, int threads) {
    auto crowd = make_ozz_crowd(count);
    frame_loop(state, count, threads, [&](std::size_t i) { return ozz_frame(*crowd[i], frame_dt); });
}

void bm_ozz_stage(benchmark::State& state, int stage) {
    auto crowd = make_ozz_crowd(stage_crowd);
    for (auto& c : crowd) (void)ozz_frame(*c, frame_dt);
    bool ok = true;
    for (auto _ : state) {
        for (auto& c : crowd) {
            switch (stage) {
            case 0: ok &= ozz_sample(*c, frame_dt); break;
            case 1: ok &= ozz_blend(*c); break;
            case 2: ok &= ozz_hierarchy(*c); break;
            case 3: ok &= ozz_palette(*c); break;
            case 4: ok &= ozz_skin(*c); break;
            case 5: ok &= ozz_palette(*c) & ozz_skin(*c); break;
            default: ok &= ozz_hierarchy(*c) & ozz_palette(*c); break;
            }
        }
        benchmark::ClobberMemory();
    }
    if (!ok) state.SkipWithError("a stage failed");
    set_rate(state, double(stage_crowd));
}

void register_all() {
    static_assert(sizeof(glm::vec3) == 3 * sizeof(float), "the ozz crowd reads glm::vec3 arrays as floats");
    const std::string prefix = "crowd/" + the_model().name + "/";
    for (std::size_t n : crowd_sizes) {
        for (int threads : {1, 2}) {
            const std::string name = prefix + "frame/" + std::to_string(n) + (threads == 1 ? "/1_thread" : "/2_threads");
            benchmark::RegisterBenchmark(name.c_str(), bm_frame, n, threads, normals::floats)->UseRealTime();
            benchmark::RegisterBenchmark((name + "/ozz").c_str(), bm_ozz_frame, n, threads)->UseRealTime();
        }
        for (int threads : {1, 2}) {
            const std::string name = prefix + "frame_packed_normals/" + std::to_string(n) +
                                     (threads == 1 ? "/1_thread" : "/2_threads");
            benchmark::RegisterBenchmark(name.c_str(), bm_frame, n, threads, normals::packed)->UseRealTime();
        }
    }
    for (int s = 0; s < int(stage_count + fused_stage_count); ++s) {
        benchmark::RegisterBenchmark((prefix + "stage/" + stage_names[s]).c_str(), bm_stage, s, rotations::as_loaded);
        benchmark::RegisterBenchmark((prefix + "stage/" + stage_names[s] + "/ozz").c_str(), bm_ozz_stage, s);
    }
    benchmark::RegisterBenchmark((prefix + "stage/sample_nlerp").c_str(), bm_stage, 0, rotations::nlerp);
    benchmark::RegisterBenchmark((prefix + "stage/sample_nlerp/ozz").c_str(), bm_ozz_stage, 0);
    register_bandwidth();
}

} // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    // keyblend's case against ozz's of the same name: the ratio is keyblend / ozz.
    kbbench::ratio_reporter reporter([](const std::string& name) {
        const std::string plain = without_real_time(name);
        if (plain.size() > 4 && plain.compare(plain.size() - 4, 4, "/ozz") == 0) return std::string();
        std::string ozz = plain;
        const std::string packed = "/frame_packed_normals/";
        if (const std::size_t at = ozz.find(packed); at != std::string::npos) ozz.replace(at, packed.size(), "/frame/");
        return ozz + "/ozz" + (plain == name ? "" : "/real_time");
    });
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
