// The crowd benchmark's model, characters and stages (bench_crowd.cpp, and bench/ozz's crowd
// that runs the same work with ozz-animation beside it). See bench_crowd.cpp.
#pragma once

#include <keyblend/io/xfile.hpp>
#include <keyblend/keyblend.hpp>
#include <keyblend/skin.hpp>

#include "bench_main.hpp"
#include "spin_pool.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace kbcrowd {

// ---------------------------------------------------------------------------------------------
// The model: a skeleton, 3 playing sets, a skinned mesh
// ---------------------------------------------------------------------------------------------

struct model {
    std::string name;
    keyblend::skeleton skeleton;
    std::vector<keyblend::clip> clips;           // at least one; the frame plays 3 (reused when fewer)
    std::vector<keyblend::clip> nlerp_clips;     // the same, rotations interpolated by nlerp
    std::vector<glm::vec3> positions, normals;   // the skinned mesh
    std::size_t influences = 0;                  // k slots per vertex
    std::vector<std::uint16_t> bone_indices;     // n x k
    std::vector<float> weights;                  // n x k
    std::vector<keyblend::skin_bone> bones;
};

inline keyblend::transform random_transform(std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const glm::quat q = glm::normalize(keyblend::make_quat(u(rng), u(rng), u(rng), u(rng)) +
                                       keyblend::make_quat(1.0f, 0.0f, 0.0f, 0.0f));
    return {glm::vec3(u(rng), u(rng), u(rng)) * 0.3f, q, glm::vec3(1.0f)};
}

// Testwuson's sizes: 39 joints in chains, sets of ~1 s and ~3.6 s with rotation keys at 30 Hz,
// 3205 vertices with 4 influence slots over 37 bones.
inline model generated_model() {
    std::mt19937 rng(77);
    model m;
    m.name = "generated";
    std::vector<keyblend::joint_desc> joints(39);
    for (std::size_t j = 0; j < joints.size(); ++j) {
        joints[j].name = "joint" + std::to_string(j);
        joints[j].parent = j == 0 ? -1 : (j % 7 == 0 ? keyblend::joint_index(j / 3) : keyblend::joint_index(j - 1));
        joints[j].bind_local = keyblend::to_matrix(random_transform(rng));
    }
    m.skeleton = keyblend::skeleton::from_parents(joints).value();
    for (float seconds : {0.97f, 3.6f}) {
        keyblend::clip c;
        c.name = seconds < 1.0f ? "run" : "walk";
        for (std::size_t j = 0; j < joints.size(); ++j) {
            keyblend::channel ch;
            ch.joint = j;
            for (float t = 0.0f; t <= seconds * 4800.0f; t += 160.0f)
                ch.rotation.push_back(t, random_transform(rng).rotation);
            c.channels.push_back(std::move(ch));
        }
        c.duration = keyblend::last_key_time(c);
        m.clips.push_back(std::move(c));
    }
    const std::size_t n = 3205, k = 4, bones = 37;
    std::uniform_real_distribution<float> u(-1.0f, 1.0f), w(0.05f, 1.0f);
    std::uniform_int_distribution<int> bone(0, int(bones) - 1);
    m.influences = k;
    for (std::size_t b = 0; b < bones; ++b) {
        m.bones.push_back({"", b + 1, m.skeleton.inverse_bind_model()[b + 1]});
    }
    for (std::size_t v = 0; v < n; ++v) {
        m.positions.push_back(glm::vec3(u(rng), u(rng), u(rng)));
        m.normals.push_back(glm::normalize(glm::vec3(u(rng), u(rng), u(rng)) + glm::vec3(1e-3f)));
        float sum = 0.0f, ws[k];
        for (std::size_t i = 0; i < k; ++i) sum += ws[i] = w(rng);
        for (std::size_t i = 0; i < k; ++i) {
            m.bone_indices.push_back(std::uint16_t(bone(rng)));
            m.weights.push_back(ws[i] / sum);
        }
    }
    return m;
}

inline model load_model() {
#if defined(KEYBLEND_DATA_DIR)
    const std::string path = std::string(KEYBLEND_DATA_DIR) + "/assimp/Testwuson.X";
    if (auto file = keyblend::io::load_xfile(path)) {
        model m;
        m.name = "Testwuson";
        m.skeleton = file->skeleton;
        for (const keyblend::io::xfile_animation_set& set : file->animation_sets)
            if (set.clip.duration > 0.0f) m.clips.push_back(set.clip);
        for (const keyblend::io::xfile_mesh& mesh : file->meshes) {
            if (!mesh.is_skinned() || mesh.normals.size() != mesh.positions.size()) continue;
            m.positions = mesh.positions;
            m.normals = mesh.normals;
            m.influences = mesh.skin.influences_per_vertex;
            m.bone_indices = mesh.skin.bone_indices;
            m.weights = mesh.skin.weights;
            for (const keyblend::io::skin_bone& b : mesh.skin.bones) {
                m.bones.push_back(b);
            }
            break;
        }
        if (!m.clips.empty() && !m.positions.empty()) return m;
    }
    std::fprintf(stderr, "bench_crowd: %s not found or not usable: a generated character instead\n", path.c_str());
#endif
    return generated_model();
}

inline model with_nlerp_clips(model m) {
    m.nlerp_clips = m.clips;
    for (keyblend::clip& c : m.nlerp_clips)
        for (keyblend::channel& ch : c.channels) ch.rotation.set_mode(keyblend::interpolation::nlerp);
    return m;
}

inline const model& the_model() {
    static const model m = with_nlerp_clips(load_model());
    return m;
}

/// How the characters' clips interpolate rotations: as the model's file says (slerp for .X), or
/// by nlerp (ozz-animation's only interpolation: the like-for-like comparison).
enum class rotations { as_loaded, nlerp };

// ---------------------------------------------------------------------------------------------
// A character: its own time, weights and buffers
// ---------------------------------------------------------------------------------------------

struct character {
    double time = 0.0; // seconds
    float weights[3] = {0.5f, 0.3f, 0.2f};
    keyblend::sampling_context contexts[3];
    keyblend::local_pose sampled[3], pose;
    std::vector<glm::mat4> model_matrices, palette;
    std::vector<glm::vec3> positions, normals;
    std::vector<std::uint32_t> packed_normals; // normals::packed: the frame's normals, 10:10:10:2
    // The jobs of a frame, set up once: only the sampling times change.
    keyblend::sampling_job sampling[3];
    keyblend::local_to_model_job hierarchy;
    keyblend::palette_job matrices;
    keyblend::skinning_job<std::uint16_t> skin;
    // The palette and the skinning in one job (skinning_job::bones): what a frame runs.
    keyblend::skinning_job<std::uint16_t> palette_skin;
    // The model matrices and the palette in one job (local_to_model_job::bones).
    keyblend::local_to_model_job hierarchy_palette;
};

inline const keyblend::clip& clip_of(int layer, rotations r = rotations::as_loaded) {
    const model& m = the_model();
    const std::vector<keyblend::clip>& clips = r == rotations::nlerp ? m.nlerp_clips : m.clips;
    return clips[std::size_t(layer) % clips.size()];
}

/// How a frame writes its skinned normals: floats (xyz, 12 bytes) or packed (out_normals_packed,
/// 4 bytes).
enum class normals { floats, packed };

inline std::vector<std::unique_ptr<character>> make_crowd(std::size_t count, rotations r = rotations::as_loaded,
                                                          normals written = normals::floats) {
    const model& m = the_model();
    std::mt19937 rng{static_cast<std::uint32_t>(count)};
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<std::unique_ptr<character>> crowd;
    for (std::size_t i = 0; i < count; ++i) {
        auto c = std::make_unique<character>();
        c->time = 10.0 * u(rng);
        const float a = u(rng) + 0.1f, b = u(rng) + 0.1f, d = u(rng) + 0.1f;
        c->weights[0] = a / (a + b + d);
        c->weights[1] = b / (a + b + d);
        c->weights[2] = d / (a + b + d);
        c->pose.resize(m.skeleton.size());
        c->model_matrices.resize(m.skeleton.size());
        c->positions.resize(m.positions.size());
        c->normals.resize(m.normals.size());
        c->palette.resize(m.bones.size());
        keyblend::skinning_job<std::uint16_t>& job = c->skin;
        job.influences = m.influences;
        job.joints = keyblend::make_span(m.bone_indices, m.influences);
        job.weights = keyblend::make_span(m.weights, m.influences);
        job.in_positions = keyblend::make_span(m.positions);
        job.out_positions = keyblend::make_span(c->positions);
        job.in_normals = keyblend::make_span(m.normals);
        job.out_normals = keyblend::make_span(c->normals);
        job.palette = c->palette;
        for (int l = 0; l < 3; ++l) {
            keyblend::sampling_job& sampling = c->sampling[l];
            sampling.clip = &clip_of(l, r);
            sampling.skeleton = &m.skeleton;
            sampling.context = &c->contexts[l];
            sampling.output = &c->sampled[l];
            (void)sampling.run(); // binds once
        }
        c->hierarchy.skeleton = &m.skeleton;
        c->hierarchy.input = &c->pose;
        c->hierarchy.output = c->model_matrices;
        c->matrices.model = c->model_matrices;
        c->matrices.bones = m.bones;
        c->matrices.output = c->palette;
        c->palette_skin = c->skin;
        c->palette_skin.palette = {};
        c->palette_skin.model = c->model_matrices;
        c->palette_skin.bones = m.bones;
        if (written == normals::packed) {
            c->packed_normals.resize(m.normals.size());
            c->palette_skin.out_normals = {};
            c->palette_skin.out_normals_packed = keyblend::make_span(c->packed_normals, 1);
        }
        c->hierarchy_palette = c->hierarchy;
        c->hierarchy_palette.bones = m.bones;
        c->hierarchy_palette.palette = c->palette;
        crowd.push_back(std::move(c));
    }
    if (!crowd.empty()) {
        const character& c = *crowd.front();
        for (const keyblend::status& st : {c.skin.validate(), c.palette_skin.validate(), c.hierarchy_palette.validate()})
            if (!st) {
                std::fprintf(stderr, "bench_crowd: the mesh does not validate: %s\n", st.error().message.c_str());
                std::exit(1);
            }
    }
    return crowd;
}

// The stages of one character's frame; each returns false on an error.
inline bool sample(character& c, double dt) {
    c.time += dt;
    bool ok = true;
    for (int l = 0; l < 3; ++l) {
        const keyblend::clip& cl = *c.sampling[l].clip;
        const double ticks = (c.time + 0.37 * l) * double(cl.ticks_per_second);
        c.sampling[l].time = keyblend::clip_time(cl, ticks);
        ok &= bool(c.sampling[l].run());
    }
    return ok;
}

inline const keyblend::local_pose& rest_pose() {
    static const keyblend::local_pose rest(the_model().skeleton);
    return rest;
}

inline bool blend(character& c) {
    const keyblend::blend_layer layers[3] = {
        {&c.sampled[0], c.weights[0]}, {&c.sampled[1], c.weights[1]}, {&c.sampled[2], c.weights[2]}};
    keyblend::blend_job job;
    job.rest_pose = &rest_pose();
    job.layers = layers;
    job.output = &c.pose;
    return bool(job.run());
}

inline bool hierarchy(character& c) { return bool(c.hierarchy.run()); }

inline bool palette(character& c) { return bool(c.matrices.run()); }

inline bool skin(character& c) { return bool(c.skin.run()); }

inline bool palette_skin(character& c) { return bool(c.palette_skin.run()); }

inline bool hierarchy_palette(character& c) { return bool(c.hierarchy_palette.run()); }

/// A character's frame: the palette computed by the skinning job (the crowd keeps no palette).
inline bool whole_frame(character& c, double dt) { return sample(c, dt) & blend(c) & hierarchy(c) & palette_skin(c); }

inline constexpr double frame_dt = 1.0 / 60.0;

inline void set_rate(benchmark::State& state, double characters) {
    state.counters["characters/s"] = benchmark::Counter(double(state.iterations()) * characters, benchmark::Counter::kIsRate);
}

/// Times frames of `count` characters, `frame(i)` doing character i's frame (false on an error),
/// on one thread or split over two (the caller and a spinning worker, each half the crowd).
template <class Frame>
void frame_loop(benchmark::State& state, std::size_t count, int threads, Frame frame) {
    std::unique_ptr<kbbench::spin_pool> pool = threads > 1 ? std::make_unique<kbbench::spin_pool>(1) : nullptr;
    std::atomic<bool> ok{true};
    const auto half = [&](std::size_t begin, std::size_t end) {
        bool good = true;
        for (std::size_t i = begin; i < end; ++i) good &= frame(i);
        if (!good) ok = false;
    };
    const std::function<void(std::size_t)> halves = [&](std::size_t i) {
        half(i == 0 ? 0 : count / 2, i == 0 ? count / 2 : count);
    };
    for (auto _ : state) {
        if (pool) (*pool)(2, halves);
        else half(0, count);
        benchmark::ClobberMemory();
    }
    if (!ok) state.SkipWithError("a stage failed");
    set_rate(state, double(count));
}

/// The bytes of skinned mesh (positions and normals) a character's frame writes.
inline double output_bytes(normals written = normals::floats) {
    const model& m = the_model();
    const std::size_t normal_bytes = written == normals::packed ? sizeof(std::uint32_t) : sizeof(glm::vec3);
    return double(m.positions.size() * sizeof(glm::vec3) + m.normals.size() * normal_bytes);
}

inline void bm_frame(benchmark::State& state, std::size_t count, int threads, normals written) {
    auto crowd = make_crowd(count, rotations::as_loaded, written);
    frame_loop(state, count, threads, [&](std::size_t i) { return whole_frame(*crowd[i], frame_dt); });
    state.counters["output bytes/s"] =
        benchmark::Counter(double(state.iterations()) * double(count) * output_bytes(written), benchmark::Counter::kIsRate);
}

/// The machine's memory bandwidth on one thread, for the frames' bytes to be read against: a
/// sequential read (an integer sum, which the compiler vectorises) or write of 256 MB, far more
/// than any cache. The write reads each line first, as the skinning's ordinary stores do.
inline void bm_bandwidth(benchmark::State& state, bool write) {
    std::vector<std::uint64_t> buffer((std::size_t(256) << 20) / sizeof(std::uint64_t), 1);
    std::uint64_t value = 1, sum = 0;
    for (auto _ : state) {
        if (write) std::fill(buffer.begin(), buffer.end(), ++value);
        else
            for (std::uint64_t v : buffer) sum += v;
        benchmark::DoNotOptimize(sum);
        benchmark::ClobberMemory();
    }
    const double bytes = double(buffer.size() * sizeof(std::uint64_t));
    state.counters["bytes/s"] = benchmark::Counter(double(state.iterations()) * bytes, benchmark::Counter::kIsRate);
}

/// crowd/machine/read and crowd/machine/write (bm_bandwidth).
inline void register_bandwidth() {
    benchmark::RegisterBenchmark("crowd/machine/read", bm_bandwidth, false)->UseRealTime();
    benchmark::RegisterBenchmark("crowd/machine/write", bm_bandwidth, true)->UseRealTime();
}

inline constexpr std::size_t stage_crowd = 64;

inline void bm_stage(benchmark::State& state, int stage, rotations r = rotations::as_loaded) {
    auto crowd = make_crowd(stage_crowd, r);
    for (auto& c : crowd) (void)(whole_frame(*c, frame_dt) & palette(*c)); // every buffer filled once
    bool ok = true;
    for (auto _ : state) {
        for (auto& c : crowd) {
            switch (stage) {
            case 0: ok &= sample(*c, frame_dt); break;
            case 1: ok &= blend(*c); break;
            case 2: ok &= hierarchy(*c); break;
            case 3: ok &= palette(*c); break;
            case 4: ok &= skin(*c); break;
            case 5: ok &= palette_skin(*c); break;
            default: ok &= hierarchy_palette(*c); break;
            }
        }
        benchmark::ClobberMemory();
    }
    if (!ok) state.SkipWithError("a stage failed");
    set_rate(state, double(stage_crowd));
}

/// The stages of a frame (stage_count), then two in one job: the palette and the skinning, the
/// model matrices and the palette.
inline constexpr std::size_t stage_count = 5, fused_stage_count = 2;
inline const char* const stage_names[stage_count + fused_stage_count] = {
    "sample", "blend", "local_to_model", "palette", "skin", "palette_skin", "local_to_model_palette"};
inline const std::size_t crowd_sizes[3] = {16, 64, 256};

/// A case's name without the "/real_time" that UseRealTime() appends.
inline std::string without_real_time(const std::string& name) {
    const std::string suffix = "/real_time";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        return name.substr(0, name.size() - suffix.size());
    return name;
}

// Prints, after the table, the crowd that fits in 16.7 ms on 2 cores and the stages' costs.
class crowd_reporter : public kbbench::ratio_reporter {
public:
    using kbbench::ratio_reporter::ratio_reporter;

    void ReportRuns(const std::vector<Run>& runs) override {
        kbbench::ratio_reporter::ReportRuns(runs);
        for (const Run& run : runs) {
            if (run.error_occurred) continue;
            if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
            for (const char* counter : {"characters/s", "bytes/s"})
                if (const auto it = run.counters.find(counter); it != run.counters.end())
                    rate_[without_real_time(run.run_name.str())] = it->second.value;
        }
    }

    void Finalize() override {
        kbbench::ratio_reporter::Finalize();
        const std::string prefix = "crowd/" + the_model().name + "/";
        std::printf("\n%s: characters in a 60 Hz frame (16.7 ms), whole frame per character "
                    "(sample 3 sets, blend, local_to_model, palette and skin %zu vertices in one job):\n",
                    the_model().name.c_str(), the_model().positions.size());
        for (std::size_t n : crowd_sizes) {
            for (const char* threads : {"1_thread", "2_threads"}) {
                const auto it = rate_.find(prefix + "frame/" + std::to_string(n) + "/" + threads);
                if (it == rate_.end()) continue;
                std::printf("  %4zu characters, %-9s: %7.2f us per character -> %6.0f characters in 16.7 ms; "
                            "mesh written at %5.2f GB/s\n",
                            n, threads, 1e6 / it->second, it->second / 60.0, it->second * output_bytes() / 1e9);
            }
        }
        const auto read = rate_.find("crowd/machine/read"), write = rate_.find("crowd/machine/write");
        if (read != rate_.end() && write != rate_.end())
            std::printf("one thread's memory bandwidth (256 MB): read %.2f GB/s, write %.2f GB/s; a character's frame "
                        "writes %.0f KB of mesh\n",
                        read->second / 1e9, write->second / 1e9, output_bytes() / 1e3);
        bool stages = false;
        for (const char* stage : stage_names) stages = stages || rate_.count(prefix + "stage/" + stage);
        if (!stages) {
            std::fflush(stdout);
            return;
        }
        std::printf("time per character of each stage (one thread, %zu characters):\n", stage_crowd);
        double sum = 0.0;
        for (std::size_t s = 0; s < stage_count; ++s) {
            const auto it = rate_.find(prefix + "stage/" + stage_names[s]);
            if (it == rate_.end()) continue;
            sum += 1e6 / it->second;
            std::printf("  %-22s %7.3f us\n", stage_names[s], 1e6 / it->second);
        }
        std::printf("  %-22s %7.3f us\n", "sum", sum);
        for (std::size_t s = stage_count; s < stage_count + fused_stage_count; ++s)
            if (const auto it = rate_.find(prefix + "stage/" + stage_names[s]); it != rate_.end())
                std::printf("  %-22s %7.3f us (two stages in one job)\n", stage_names[s], 1e6 / it->second);
        std::fflush(stdout);
    }

private:
    std::map<std::string, double> rate_;
};

} // namespace kbcrowd
