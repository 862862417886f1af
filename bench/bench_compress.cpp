// Compressed clips on the shared .X files (KEYBLEND_DATA_DIR): Testwuson.X, BCN_Epileptic.X and
// tiny.x, every clip compressed at 0.01 cm-eq with virtual vertices at 3 cm-eq (1 cm-eq = the
// model's bind-pose skinned mesh's largest extent / 180), as `keyblend pack` does by default.
//
//   compress/<file>/<set>/sample/<random|forward>/<plain|compressed>
//       a whole local pose per iteration: the plain clip (sample_clip, its keys) or the
//       compressed one (sample_clip on compressed_clip); random times uniform over the clip, or
//       forward playback at 60 Hz; one context each. Counters: bytes (the plain clip's key data,
//       or the compressed clip's whole size), error_cm_eq (the largest virtual-vertex error against
//       the plain clip, every 1/60 s and at the end; 0 for the plain clip itself).
//   compress/<file>/<set>/compress     compress_job::run, the whole compression
//   load/<file>/<xfile|package>        the character from memory: load_xfile_memory, or
//                                      package::view (with its checksum) + make_skeleton
//
// The ratio table at the end compares each compressed case with its plain one, and each package
// load with its .X load. Run it on a quiet machine for times; bytes and errors do not depend on
// the machine's load.
#include <keyblend/compress.hpp>
#include <keyblend/io/xfile.hpp>
#include <keyblend/package.hpp>

#include "bench_main.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

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

double mesh_height(const keyblend::io::xfile& x) {
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

std::vector<file_case>& files() {
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
                c.plain_bytes = report.source_key_bytes;
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

std::vector<float> times(const keyblend::clip& c, bool forward) {
    std::vector<float> t(1024);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, c.duration);
    for (std::size_t i = 0; i < t.size(); ++i)
        t[i] = forward ? float(std::fmod(double(i) * double(c.ticks_per_second) / 60.0, double(c.duration))) : u(rng);
    return t;
}

void set_rate(benchmark::State& state, const char* unit) {
    state.counters[unit] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

void bm_plain(benchmark::State& state, const file_case* f, const clip_case* c, bool forward) {
    const std::vector<float> t = times(*c->plain, forward);
    keyblend::sampling_context ctx;
    keyblend::local_pose pose;
    std::size_t i = 0;
    for (auto _ : state) {
        (void)keyblend::sample_clip(*c->plain, f->x->skeleton, t[i++ & 1023], ctx, pose);
        benchmark::DoNotOptimize(pose.data(keyblend::local_pose::rotation_w));
        benchmark::ClobberMemory();
    }
    set_rate(state, "poses/s");
    state.counters["bytes"] = double(c->plain_bytes);
    state.counters["error_cm_eq"] = 0.0;
}

void bm_compressed(benchmark::State& state, const file_case* f, const clip_case* c, bool forward) {
    const std::vector<float> t = times(*c->plain, forward);
    keyblend::compressed_sampling_context ctx;
    keyblend::local_pose pose;
    std::size_t i = 0;
    for (auto _ : state) {
        (void)keyblend::sample_clip(c->compressed, f->x->skeleton, t[i++ & 1023], ctx, pose);
        benchmark::DoNotOptimize(pose.data(keyblend::local_pose::rotation_w));
        benchmark::ClobberMemory();
    }
    set_rate(state, "poses/s");
    state.counters["bytes"] = double(c->compressed.size());
    state.counters["error_cm_eq"] = c->error_cm;
}

void bm_compress(benchmark::State& state, const file_case* f, const clip_case* c) {
    keyblend::compressed_clip out;
    keyblend::compress_job job;
    job.input = c->plain;
    job.skeleton = &f->x->skeleton;
    job.settings = f->settings;
    job.output = &out;
    for (auto _ : state) {
        if (!job.run()) state.SkipWithError("compression failed");
        benchmark::DoNotOptimize(out.data());
    }
    set_rate(state, "clips/s");
}

void bm_load_xfile(benchmark::State& state, const file_case* f) {
    for (auto _ : state) {
        keyblend::result<keyblend::io::xfile> x = keyblend::io::load_xfile_memory(f->bytes.data(), f->bytes.size());
        if (!x) state.SkipWithError("load failed");
        benchmark::DoNotOptimize(x->skeleton.size());
    }
    set_rate(state, "loads/s");
    state.counters["bytes"] = double(f->bytes.size());
}

void bm_load_package(benchmark::State& state, const file_case* f) {
    // (In 16-byte aligned memory, as a file read or mapped into it is.)
    keyblend::result<keyblend::package_file> copy = keyblend::package_file::copy(f->package.data(), f->package.size());
    if (!copy) {
        state.SkipWithError(copy.error().message.c_str());
        return;
    }
    const keyblend::package& p = copy->contents();
    for (auto _ : state) {
        keyblend::result<keyblend::package> view = keyblend::package::view(p.data(), p.size());
        if (!view) state.SkipWithError("open failed");
        keyblend::result<keyblend::skeleton> s = view->make_skeleton();
        benchmark::DoNotOptimize(s->size());
        benchmark::DoNotOptimize(view->clip(0).data());
    }
    set_rate(state, "loads/s");
    state.counters["bytes"] = double(f->package.size());
}

} // namespace

int main(int argc, char** argv) {
    for (const file_case& f : files()) {
        for (const clip_case& c : f.clips) {
            const std::string base = "compress/" + f.name + "/" + (c.plain->name.empty() ? "(unnamed)" : c.plain->name);
            for (bool forward : {false, true}) {
                const std::string playback = base + "/sample/" + (forward ? "forward" : "random");
                benchmark::RegisterBenchmark((playback + "/plain").c_str(), bm_plain, &f, &c, forward);
                benchmark::RegisterBenchmark((playback + "/compressed").c_str(), bm_compressed, &f, &c, forward);
            }
            benchmark::RegisterBenchmark((base + "/compress").c_str(), bm_compress, &f, &c)->Unit(benchmark::kMillisecond);
        }
        benchmark::RegisterBenchmark(("load/" + f.name + "/xfile").c_str(), bm_load_xfile, &f)->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("load/" + f.name + "/package").c_str(), bm_load_package, &f)->Unit(benchmark::kMicrosecond);
    }
    return kbbench::run(argc, argv, [](const std::string& name) -> std::string {
        const std::size_t slash = name.rfind('/');
        const std::string last = name.substr(slash + 1);
        if (last == "compressed") return name.substr(0, slash + 1) + "plain";
        if (last == "package") return name.substr(0, slash + 1) + "xfile";
        return {};
    });
}
