// The shared .X files for the compression benchmarks (bench_compress, and the ACL and ozz
// comparisons): Testwuson.X, BCN_Epileptic.X and tiny.x from KEYBLEND_DATA_DIR, each clip
// compressed at 0.01 cm-eq with virtual vertices at 3 cm-eq (1 cm-eq = the bind-pose skinned
// mesh's largest extent / 180), as `keyblend pack` does by default; the character as a package;
// the times a benchmark samples, and the sampling loop and counters every sampling case shares.
#pragma once

#include <keyblend/compress.hpp>
#include <keyblend/io/xfile.hpp>
#include <keyblend/package.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace kbbench {

struct clip_case {
    const keyblend::clip* plain = nullptr;
    keyblend::compressed_clip compressed;
    std::size_t plain_bytes = 0;
    double error_cm = 0.0;
};

struct file_case {
    std::string name;
    std::vector<unsigned char> bytes; // the .X file
    std::unique_ptr<keyblend::io::xfile> x;
    double cm = 1.0;
    keyblend::compression_settings settings;
    std::vector<clip_case> clips;
    std::vector<unsigned char> package;
};

inline double mesh_height(const keyblend::io::xfile& x) {
    glm::dvec3 lo(1e300), hi(-1e300);
    for (const keyblend::io::xfile_mesh& m : x.meshes) {
        const std::size_t k = m.skin.influences_per_vertex;
        if (!k) continue;
        for (std::size_t v = 0; v < m.positions.size(); ++v) {
            glm::dvec3 p(0.0);
            for (std::size_t i = 0; i < k; ++i) {
                const keyblend::io::skin_bone& b = m.skin.bones[m.skin.bone_indices[v * k + i]];
                p += double(m.skin.weights[v * k + i]) *
                     glm::dvec3(x.skeleton.bind_model()[b.joint] * b.offset * glm::vec4(m.positions[v], 1.0f));
            }
            lo = glm::min(lo, p);
            hi = glm::max(hi, p);
        }
    }
    const glm::dvec3 e = hi - lo;
    return std::max(e.x, std::max(e.y, e.z));
}

inline std::vector<file_case>& files() {
    static std::vector<file_case> all = [] {
        std::vector<file_case> out;
        for (const char* path : {"assimp/Testwuson.X", "assimp/BCN_Epileptic.X", "directx-sdk-legacy-samples/tiny.x"}) {
            const std::string full = std::string(KEYBLEND_DATA_DIR) + "/" + path;
            std::ifstream in(full, std::ios::binary);
            if (!in) {
                std::fprintf(stderr, "bench_compress: %s not found (put ../shared beside the checkout)\n", full.c_str());
                continue;
            }
            file_case f;
            f.name = full.substr(full.rfind('/') + 1);
            f.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
            keyblend::result<keyblend::io::xfile> x = keyblend::io::load_xfile_memory(f.bytes.data(), f.bytes.size());
            if (!x) {
                std::fprintf(stderr, "bench_compress: %s\n", x.error().message.c_str());
                continue;
            }
            f.x = std::make_unique<keyblend::io::xfile>(std::move(*x));
            const double height = mesh_height(*f.x);
            f.cm = height / 180.0;
            f.settings = keyblend::compression_settings::for_height(float(height));
            keyblend::package_contents contents;
            contents.skeleton = &f.x->skeleton;
            contents.settings = f.settings;
            for (const keyblend::io::xfile_mesh& m : f.x->meshes) contents.meshes.push_back(&m);
            for (const keyblend::io::xfile_animation_set& set : f.x->animation_sets) {
                contents.clips.push_back(&set.clip);
                if (!(set.clip.duration > 0.0f)) continue;
                clip_case c;
                c.plain = &set.clip;
                keyblend::compress_job job;
                job.input = &set.clip;
                job.skeleton = &f.x->skeleton;
                job.settings = f.settings;
                job.output = &c.compressed;
                keyblend::compression_report report;
                job.report = &report;
                if (!job.run()) continue;
                c.plain_bytes = report.stats.source_key_bytes;
                const keyblend::result<keyblend::error_measurement> e =
                    keyblend::measure_error(set.clip, c.compressed, f.x->skeleton, f.settings.shell_distance);
                c.error_cm = e ? e->max_error / f.cm : -1.0;
                f.clips.push_back(std::move(c));
            }
            keyblend::result<std::vector<unsigned char>> p = keyblend::write_package(contents);
            if (p) f.package = std::move(*p);
            out.push_back(std::move(f));
        }
        return out;
    }();
    return all;
}

/// 1024 times (ticks): uniform random over the clip, or forward playback at 60 Hz, looping.
inline std::vector<float> times(const keyblend::clip& c, bool forward) {
    std::vector<float> t(1024);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, c.duration);
    for (std::size_t i = 0; i < t.size(); ++i)
        t[i] = forward ? float(std::fmod(double(i) * double(c.ticks_per_second) / 60.0, double(c.duration))) : u(rng);
    return t;
}

/// The virtual-vertex error (cm-eq) of `sample` against keyblend's plain clip, every 1/60 s and at
/// the end.
template <class Sample>
double error_cm(const file_case& f, const keyblend::clip& c, Sample&& sample) {
    const keyblend::skeleton& s = f.x->skeleton;
    keyblend::sampling_context ref;
    keyblend::local_pose a, b;
    std::vector<glm::mat4> ma(s.size()), mb(s.size());
    keyblend::sampling_job reference{&c, &s, 0.0f, &ref, &a};
    keyblend::local_to_model_job model_a, model_b;
    model_a.skeleton = model_b.skeleton = &s;
    model_a.input = &a;
    model_b.input = &b;
    model_a.output = ma;
    model_b.output = mb;
    double worst = 0.0;
    const double step = double(c.ticks_per_second) / 60.0;
    for (std::size_t i = 0;; ++i) {
        const double t = std::min(double(i) * step, double(c.duration));
        reference.time = float(t);
        (void)reference.run();
        sample(float(t), b);
        (void)model_a.run();
        (void)model_b.run();
        worst = std::max(worst, keyblend::virtual_vertex_error(ma.data(), mb.data(), s.size(), f.settings.shell_distance));
        if (!(t < double(c.duration))) break;
    }
    return worst / f.cm;
}

/// Reports the iterations per second under `unit` (bench_main.hpp's rate counter).
inline void set_rate(benchmark::State& state, const char* unit) {
    state.counters[unit] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

/// What every sampling case reports: poses/s, the clip's bytes and its error (cm-eq).
inline void report_poses(benchmark::State& state, std::size_t bytes, double error_cm) {
    set_rate(state, "poses/s");
    state.counters["bytes"] = double(bytes);
    state.counters["error_cm_eq"] = error_cm;
}

/// One whole pose per iteration from `job` (a sampling_job or a compressed_sampling_job, its clip,
/// skeleton, context and output set) at the 1024 times `t` in turn.
template <class Job>
void sample_poses(benchmark::State& state, Job job, const std::vector<float>& t, std::size_t bytes, double error_cm) {
    std::size_t i = 0;
    for (auto _ : state) {
        job.time = t[i++ & 1023];
        (void)job.run();
        benchmark::DoNotOptimize(job.output->data(keyblend::local_pose::rotation_w));
        benchmark::ClobberMemory();
    }
    report_poses(state, bytes, error_cm);
}

/// sample_poses on the compressed clip of `c`: at random times, or forward at 60 Hz.
inline void sample_compressed(benchmark::State& state, const file_case& f, const clip_case& c, bool forward) {
    keyblend::compressed_sampling_context context;
    keyblend::local_pose pose;
    sample_poses(state, keyblend::compressed_sampling_job{&c.compressed, &f.x->skeleton, 0.0f, &context, &pose},
                 times(*c.plain, forward), c.compressed.size(), c.error_cm);
}

} // namespace kbbench
