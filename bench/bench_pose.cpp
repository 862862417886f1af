// The per-frame pose pipeline on a 67-joint character (ozz-animation's reference size), each stage
// against a plain GLM reference measured in the same run:
//
//   clip/sample/forward_{slerp,nlerp}/...      a whole clip sampled at 60 Hz (T, R, S tracks on
//                                              every joint, all keyed at 30 Hz, so every other
//                                              frame crosses a key on every track): sample_clip
//                                              with a context vs. std::upper_bound + glm::slerp
//                                              (or normalised glm::lerp) / glm::mix; rotation
//                                              tracks in slerp (the default) or nlerp mode
//   blend/2_layers/...  blend/3_layers/...     weighted layers: blend_job vs. a loop over
//                                              transforms (weighted sums, hemisphere, normalise)
//   blend/masked_additive/...                  2 layers with per-joint weights + 1 additive layer
//   local_to_model/...                         local_to_model vs. parent * T * R * S with GLM
//   frame/{slerp,nlerp}/...                    a character's frame: 4 clips sampled, 3-layer
//                                              blend (one layer masked), 1 additive layer,
//                                              local_to_model; reported as characters/s
//
// Rates are joints/s (characters/s for frame/); single-threaded, so per core.
#include <keyblend/keyblend.hpp>

#include "bench_main.hpp"
#include "reference.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <random>
#include <vector>

namespace {

using kbbench::ref_key;
using kbbench::reference_sample;

constexpr std::size_t joint_count = 67;
constexpr float ticks_per_second = 4800.0f;
constexpr float frame_ticks = ticks_per_second / 60.0f;

std::mt19937& rng() {
    static std::mt19937 r(2024);
    return r;
}
float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng()); }
glm::quat random_rotation() {
    return glm::normalize(keyblend::make_quat(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)));
}
keyblend::transform random_transform() {
    return {glm::vec3(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)), random_rotation(),
            glm::vec3(uniform(0.9f, 1.1f))};
}

const keyblend::skeleton& the_skeleton() {
    static const keyblend::skeleton s = [] {
        std::vector<keyblend::joint_desc> in(joint_count);
        for (std::size_t j = 0; j < joint_count; ++j) {
            in[j].name = "joint" + std::to_string(j);
            in[j].parent = j == 0 ? -1 : keyblend::joint_index(std::uniform_int_distribution<std::size_t>(0, j - 1)(rng()));
            in[j].bind_local = keyblend::to_matrix(random_transform());
        }
        return keyblend::skeleton::from_parents(in).value();
    }();
    return s;
}

// A clip of `seconds` with T, R, S keys at 30 Hz on every joint; rotations walk like a real
// joint's (up to ~15 degrees between keys).
keyblend::clip make_clip(float seconds, keyblend::interpolation rotation_mode) {
    keyblend::clip c;
    c.ticks_per_second = ticks_per_second;
    const int keys = int(seconds * 30.0f) + 1;
    for (std::size_t j = 0; j < joint_count; ++j) {
        keyblend::channel ch;
        ch.joint = j;
        glm::quat walk = random_rotation();
        const glm::vec3 origin(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
        for (int k = 0; k < keys; ++k) {
            const float t = float(k) * ticks_per_second / 30.0f;
            walk = glm::normalize(walk * glm::angleAxis(uniform(-0.25f, 0.25f),
                                                        glm::normalize(glm::vec3(uniform(-1, 1), uniform(-1, 1), 1.0f))));
            ch.rotation.push_back(t, walk);
            ch.translation.push_back(t, origin + glm::vec3(uniform(-0.1f, 0.1f)));
            ch.scale.push_back(t, glm::vec3(uniform(0.95f, 1.05f)));
        }
        ch.rotation.set_mode(rotation_mode);
        c.channels.push_back(std::move(ch));
    }
    c.duration = keyblend::last_key_time(c);
    return c;
}

// Four clips with slerp rotation tracks (the default), and the same four with nlerp tracks (what
// ozz-animation always does; cheaper, same end points).
const std::vector<keyblend::clip>& the_clips(keyblend::interpolation mode = keyblend::interpolation::linear) {
    static const auto make = [](keyblend::interpolation m) {
        rng().seed(7);
        return std::vector<keyblend::clip>{make_clip(2.0f, m), make_clip(1.3f, m), make_clip(3.1f, m),
                                           make_clip(0.9f, m)};
    };
    static const std::vector<keyblend::clip> slerp_clips = make(keyblend::interpolation::linear);
    static const std::vector<keyblend::clip> nlerp_clips = make(keyblend::interpolation::nlerp);
    return mode == keyblend::interpolation::nlerp ? nlerp_clips : slerp_clips;
}

// ---------------------------------------------------------------------------------------------
// The plain references: what a programmer writes first with the standard library and GLM.
// ---------------------------------------------------------------------------------------------

struct ref_channel {
    std::vector<ref_key<glm::vec3>> translation, scale;
    std::vector<ref_key<glm::quat>> rotation;
    bool nlerp = false;
};
using ref_clip = std::vector<ref_channel>;

ref_clip to_reference(const keyblend::clip& c) {
    ref_clip out(joint_count);
    for (ref_channel& ch : out) ch.nlerp = c.channels.front().rotation.mode() == keyblend::interpolation::nlerp;
    for (const keyblend::channel& ch : c.channels) {
        for (std::size_t k = 0; k < ch.translation.size(); ++k)
            out[ch.joint].translation.push_back({ch.translation.time(k), ch.translation.value(k)});
        for (std::size_t k = 0; k < ch.rotation.size(); ++k)
            out[ch.joint].rotation.push_back({ch.rotation.time(k), ch.rotation.value(k)});
        for (std::size_t k = 0; k < ch.scale.size(); ++k)
            out[ch.joint].scale.push_back({ch.scale.time(k), ch.scale.value(k)});
    }
    return out;
}

const std::vector<ref_clip>& the_reference_clips(keyblend::interpolation mode = keyblend::interpolation::linear) {
    static const auto make = [](keyblend::interpolation m) {
        std::vector<ref_clip> out;
        for (const keyblend::clip& c : the_clips(m)) out.push_back(to_reference(c));
        return out;
    };
    static const std::vector<ref_clip> slerp_clips = make(keyblend::interpolation::linear);
    static const std::vector<ref_clip> nlerp_clips = make(keyblend::interpolation::nlerp);
    return mode == keyblend::interpolation::nlerp ? nlerp_clips : slerp_clips;
}

void reference_sample_clip(const ref_clip& c, float t, std::vector<keyblend::transform>& pose) {
    const auto mix3 = [](const glm::vec3& a, const glm::vec3& b, float x) { return glm::mix(a, b, x); };
    const auto slerp = [](const glm::quat& a, const glm::quat& b, float x) { return glm::slerp(a, b, x); };
    const auto nlerp = [](const glm::quat& a, const glm::quat& b, float x) {
        return glm::normalize(glm::lerp(a, glm::dot(a, b) < 0.0f ? -b : b, x));
    };
    for (std::size_t j = 0; j < joint_count; ++j) {
        pose[j].translation = reference_sample(c[j].translation, t, mix3);
        pose[j].rotation = c[j].nlerp ? reference_sample(c[j].rotation, t, nlerp)
                                      : reference_sample(c[j].rotation, t, slerp);
        pose[j].scale = reference_sample(c[j].scale, t, mix3);
    }
}

struct ref_layer {
    const std::vector<keyblend::transform>* pose;
    float weight;
    const std::vector<float>* mask;
};

void reference_blend(const std::vector<ref_layer>& layers, const std::vector<keyblend::transform>* additive,
                     float additive_weight, const std::vector<keyblend::transform>& rest,
                     std::vector<keyblend::transform>& out) {
    for (std::size_t j = 0; j < joint_count; ++j) {
        glm::vec3 t(0.0f), s(0.0f);
        glm::quat q(0.0f, 0.0f, 0.0f, 0.0f);
        float total = 0.0f;
        for (const ref_layer& l : layers) {
            const float w = l.weight * (l.mask ? (*l.mask)[j] : 1.0f);
            const keyblend::transform& x = (*l.pose)[j];
            t += x.translation * w;
            s += x.scale * w;
            q = q + x.rotation * (glm::dot(q, x.rotation) < 0.0f ? -w : w);
            total += w;
        }
        if (total < 0.1f) {
            const float w = 0.1f - total;
            t += rest[j].translation * w;
            s += rest[j].scale * w;
            q = q + rest[j].rotation * (glm::dot(q, rest[j].rotation) < 0.0f ? -w : w);
            total += w;
        }
        keyblend::transform r{t / total, glm::normalize(q), s / total};
        if (additive) {
            const keyblend::transform& d = (*additive)[j];
            r.translation += d.translation * additive_weight;
            r.rotation = r.rotation * glm::normalize(glm::mix(glm::identity<glm::quat>(), d.rotation, additive_weight));
            r.scale *= glm::mix(glm::vec3(1.0f), d.scale, additive_weight);
        }
        out[j] = r;
    }
}

void reference_local_to_model(const keyblend::skeleton& s, const std::vector<keyblend::transform>& local,
                              std::vector<glm::mat4>& model) {
    for (std::size_t j = 0; j < joint_count; ++j) {
        const keyblend::transform& x = local[j];
        const glm::mat4 m = glm::translate(glm::mat4(1.0f), x.translation) * glm::mat4_cast(x.rotation) *
                            glm::scale(glm::mat4(1.0f), x.scale);
        const keyblend::joint_index p = s.parent(j);
        model[j] = p < 0 ? m : model[std::size_t(p)] * m;
    }
}

std::vector<keyblend::transform> to_aos(const keyblend::local_pose& p) {
    std::vector<keyblend::transform> out(p.size());
    for (std::size_t j = 0; j < p.size(); ++j) out[j] = p.get(j);
    return out;
}

keyblend::local_pose random_pose() {
    keyblend::local_pose p(joint_count);
    for (std::size_t j = 0; j < joint_count; ++j) p.set(j, random_transform());
    return p;
}

const std::vector<float>& upper_body_mask() {
    static const std::vector<float> m = [] {
        std::vector<float> w(joint_count);
        for (std::size_t j = 0; j < joint_count; ++j) w[j] = j < joint_count / 2 ? 0.0f : j < joint_count * 2 / 3 ? 0.5f : 1.0f;
        return w;
    }();
    return m;
}

void set_rate(benchmark::State& state, double per_iteration, const char* unit) {
    state.counters[unit] = benchmark::Counter(double(state.iterations()) * per_iteration, benchmark::Counter::kIsRate);
}

// ---------------------------------------------------------------------------------------------
// Sampling
// ---------------------------------------------------------------------------------------------

void bm_sample_keyblend(benchmark::State& state, keyblend::interpolation mode) {
    const keyblend::clip& c = the_clips(mode)[0];
    keyblend::sampling_context ctx;
    keyblend::local_pose pose;
    keyblend::sampling_job job;
    job.clip = &c;
    job.skeleton = &the_skeleton();
    job.context = &ctx;
    job.output = &pose;
    double t = 0.0;
    for (auto _ : state) {
        t += frame_ticks;
        job.time = keyblend::clip_time(c, t);
        if (!job.run()) state.SkipWithError("sampling failed");
        benchmark::DoNotOptimize(pose.data(keyblend::local_pose::rotation_w));
        benchmark::ClobberMemory();
    }
    set_rate(state, joint_count, "joints/s");
}

void bm_sample_reference(benchmark::State& state, keyblend::interpolation mode) {
    const keyblend::clip& c = the_clips(mode)[0];
    const ref_clip& r = the_reference_clips(mode)[0];
    std::vector<keyblend::transform> pose(joint_count);
    double t = 0.0;
    for (auto _ : state) {
        t += frame_ticks;
        reference_sample_clip(r, keyblend::clip_time(c, t), pose);
        benchmark::DoNotOptimize(pose.data());
        benchmark::ClobberMemory();
    }
    set_rate(state, joint_count, "joints/s");
}

// ---------------------------------------------------------------------------------------------
// Blending
// ---------------------------------------------------------------------------------------------

struct blend_inputs {
    keyblend::local_pose rest = keyblend::local_pose(the_skeleton());
    keyblend::local_pose layer[3] = {random_pose(), random_pose(), random_pose()};
    keyblend::local_pose additive = random_pose();
    std::vector<keyblend::transform> rest_aos = to_aos(rest);
    std::vector<keyblend::transform> layer_aos[3] = {to_aos(layer[0]), to_aos(layer[1]), to_aos(layer[2])};
    std::vector<keyblend::transform> additive_aos = to_aos(additive);
};

const blend_inputs& the_blend_inputs() {
    static const blend_inputs in;
    return in;
}

// kind: 2 or 3 plain layers; 0: 2 layers with per-joint weights + 1 additive layer.
void bm_blend_keyblend(benchmark::State& state, int kind) {
    const blend_inputs& in = the_blend_inputs();
    const std::vector<float>& mask = upper_body_mask();
    const keyblend::span<const float> masked = kind == 0 ? keyblend::span<const float>(mask) : keyblend::span<const float>();
    const keyblend::blend_layer layers[3] = {{&in.layer[0], 0.5f, masked}, {&in.layer[1], 0.3f, masked},
                                             {&in.layer[2], 0.2f}};
    const keyblend::additive_layer additive{&in.additive, nullptr, 0.6f};
    keyblend::local_pose out(joint_count);
    keyblend::blend_job job;
    job.rest_pose = &in.rest;
    job.layers = {layers, std::size_t(kind == 3 ? 3 : 2)};
    job.additive_layers = {&additive, std::size_t(kind == 0 ? 1 : 0)};
    job.output = &out;
    for (auto _ : state) {
        if (!job.run()) state.SkipWithError("blend failed");
        benchmark::DoNotOptimize(out.data(keyblend::local_pose::rotation_w));
        benchmark::ClobberMemory();
    }
    set_rate(state, joint_count, "joints/s");
}

void bm_blend_reference(benchmark::State& state, int kind) {
    const blend_inputs& in = the_blend_inputs();
    const std::vector<float>& mask = upper_body_mask();
    std::vector<ref_layer> layers = {{&in.layer_aos[0], 0.5f, kind == 0 ? &mask : nullptr},
                                     {&in.layer_aos[1], 0.3f, kind == 0 ? &mask : nullptr}};
    if (kind == 3) layers.push_back({&in.layer_aos[2], 0.2f, nullptr});
    std::vector<keyblend::transform> out(joint_count);
    for (auto _ : state) {
        reference_blend(layers, kind == 0 ? &in.additive_aos : nullptr, 0.6f, in.rest_aos, out);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    set_rate(state, joint_count, "joints/s");
}

// ---------------------------------------------------------------------------------------------
// Local to model
// ---------------------------------------------------------------------------------------------

void bm_local_to_model_keyblend(benchmark::State& state) {
    const keyblend::local_pose& pose = the_blend_inputs().layer[0];
    std::vector<glm::mat4> model(joint_count);
    keyblend::local_to_model_job job;
    job.skeleton = &the_skeleton();
    job.input = &pose;
    job.output = model;
    for (auto _ : state) {
        if (!job.run()) state.SkipWithError("local-to-model failed");
        benchmark::DoNotOptimize(model.data());
        benchmark::ClobberMemory();
    }
    set_rate(state, joint_count, "joints/s");
}

void bm_local_to_model_reference(benchmark::State& state) {
    const std::vector<keyblend::transform>& pose = the_blend_inputs().layer_aos[0];
    std::vector<glm::mat4> model(joint_count);
    for (auto _ : state) {
        reference_local_to_model(the_skeleton(), pose, model);
        benchmark::DoNotOptimize(model.data());
        benchmark::ClobberMemory();
    }
    set_rate(state, joint_count, "joints/s");
}

// ---------------------------------------------------------------------------------------------
// A whole frame: 4 clips sampled, 3-layer blend (one masked), 1 additive layer, local_to_model
// ---------------------------------------------------------------------------------------------

void bm_frame_keyblend(benchmark::State& state, keyblend::interpolation mode) {
    const keyblend::skeleton& s = the_skeleton();
    const std::vector<keyblend::clip>& clips = the_clips(mode);
    const std::vector<float>& mask = upper_body_mask();
    keyblend::sampling_context ctx[4];
    keyblend::local_pose sampled[4], out, reference;
    const keyblend::local_pose rest(s);
    keyblend::sampling_context first;
    keyblend::sampling_job sample[4];
    for (int i = 0; i < 4; ++i) {
        sample[i].clip = &clips[std::size_t(i)];
        sample[i].skeleton = &s;
        sample[i].context = &ctx[i];
        sample[i].output = &sampled[i];
    }
    keyblend::sampling_job first_frame = sample[3]; // the additive clip's first frame
    first_frame.context = &first;
    first_frame.output = &reference;
    (void)first_frame.run();
    const keyblend::blend_layer layers[3] = {{&sampled[0], 0.5f}, {&sampled[1], 0.3f}, {&sampled[2], 0.8f, mask}};
    const keyblend::additive_layer additive{&sampled[3], &reference, 0.5f};
    keyblend::blend_job job;
    job.rest_pose = &rest;
    job.layers = layers;
    job.additive_layers = {&additive, 1};
    job.output = &out;
    std::vector<glm::mat4> model(joint_count);
    keyblend::local_to_model_job hierarchy;
    hierarchy.skeleton = &s;
    hierarchy.input = &out;
    hierarchy.output = model;
    double t = 0.0;
    for (auto _ : state) {
        t += frame_ticks;
        bool ok = true;
        for (int i = 0; i < 4; ++i) {
            sample[i].time = keyblend::clip_time(clips[std::size_t(i)], t);
            ok &= bool(sample[i].run());
        }
        ok &= bool(job.run());
        ok &= bool(hierarchy.run());
        if (!ok) state.SkipWithError("frame failed");
        benchmark::DoNotOptimize(model.data());
        benchmark::ClobberMemory();
    }
    set_rate(state, 1.0, "characters/s");
}

void bm_frame_reference(benchmark::State& state, keyblend::interpolation mode) {
    const keyblend::skeleton& s = the_skeleton();
    const std::vector<keyblend::clip>& clips = the_clips(mode);
    const std::vector<ref_clip>& refs = the_reference_clips(mode);
    const std::vector<float>& mask = upper_body_mask();
    std::vector<keyblend::transform> sampled[4], out(joint_count), additive(joint_count), first(joint_count);
    for (auto& p : sampled) p.resize(joint_count);
    const std::vector<keyblend::transform> rest = to_aos(keyblend::local_pose(s));
    reference_sample_clip(refs[3], 0.0f, first);
    const std::vector<ref_layer> layers = {{&sampled[0], 0.5f, nullptr}, {&sampled[1], 0.3f, nullptr},
                                           {&sampled[2], 0.8f, &mask}};
    std::vector<glm::mat4> model(joint_count);
    double t = 0.0;
    for (auto _ : state) {
        t += frame_ticks;
        for (int i = 0; i < 4; ++i) reference_sample_clip(refs[std::size_t(i)], keyblend::clip_time(clips[std::size_t(i)], t), sampled[i]);
        for (std::size_t j = 0; j < joint_count; ++j) { // the additive difference from the first frame
            additive[j].translation = sampled[3][j].translation - first[j].translation;
            additive[j].rotation = glm::conjugate(first[j].rotation) * sampled[3][j].rotation;
            additive[j].scale = sampled[3][j].scale / first[j].scale;
        }
        reference_blend(layers, &additive, 0.5f, rest, out);
        reference_local_to_model(s, out, model);
        benchmark::DoNotOptimize(model.data());
        benchmark::ClobberMemory();
    }
    set_rate(state, 1.0, "characters/s");
}

} // namespace

using keyblend::interpolation;
BENCHMARK_CAPTURE(bm_sample_reference, slerp, interpolation::linear)->Name("clip/sample/forward_slerp/reference");
BENCHMARK_CAPTURE(bm_sample_keyblend, slerp, interpolation::linear)->Name("clip/sample/forward_slerp/keyblend");
BENCHMARK_CAPTURE(bm_sample_reference, nlerp, interpolation::nlerp)->Name("clip/sample/forward_nlerp/reference");
BENCHMARK_CAPTURE(bm_sample_keyblend, nlerp, interpolation::nlerp)->Name("clip/sample/forward_nlerp/keyblend");
BENCHMARK_CAPTURE(bm_blend_reference, 2, 2)->Name("blend/2_layers/reference");
BENCHMARK_CAPTURE(bm_blend_keyblend, 2, 2)->Name("blend/2_layers/keyblend");
BENCHMARK_CAPTURE(bm_blend_reference, 3, 3)->Name("blend/3_layers/reference");
BENCHMARK_CAPTURE(bm_blend_keyblend, 3, 3)->Name("blend/3_layers/keyblend");
BENCHMARK_CAPTURE(bm_blend_reference, masked_additive, 0)->Name("blend/masked_additive/reference");
BENCHMARK_CAPTURE(bm_blend_keyblend, masked_additive, 0)->Name("blend/masked_additive/keyblend");
BENCHMARK(bm_local_to_model_reference)->Name("local_to_model/reference");
BENCHMARK(bm_local_to_model_keyblend)->Name("local_to_model/keyblend");
BENCHMARK_CAPTURE(bm_frame_reference, slerp, interpolation::linear)->Name("frame/slerp/reference");
BENCHMARK_CAPTURE(bm_frame_keyblend, slerp, interpolation::linear)->Name("frame/slerp/keyblend");
BENCHMARK_CAPTURE(bm_frame_reference, nlerp, interpolation::nlerp)->Name("frame/nlerp/reference");
BENCHMARK_CAPTURE(bm_frame_keyblend, nlerp, interpolation::nlerp)->Name("frame/nlerp/keyblend");

int main(int argc, char** argv) {
    return kbbench::run(argc, argv, [](const std::string& name) {
        return name.substr(0, name.rfind('/') + 1) + "reference";
    });
}
