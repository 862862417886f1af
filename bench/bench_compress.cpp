// Compressed clips on the shared .X files (KEYBLEND_DATA_DIR): Testwuson.X, BCN_Epileptic.X and
// tiny.x, every clip compressed at 0.01 cm-eq with virtual vertices at 3 cm-eq (1 cm-eq = the
// model's bind-pose skinned mesh's largest extent / 180), as `keyblend pack` does by default.
//
//   compress/<file>/<set>/sample/<random|forward>/<plain|compressed>
//       a whole local pose per iteration: the plain clip (sampling_job, its keys) or the
//       compressed one (compressed_sampling_job); random times uniform over the clip, or
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
#include "bench_main.hpp"
#include "compress_data.hpp"

#include <string>

namespace {

using kbbench::clip_case;
using kbbench::file_case;
using kbbench::files;
using kbbench::set_rate;
using kbbench::times;

void bm_plain(benchmark::State& state, const file_case* f, const clip_case* c, bool forward) {
    keyblend::sampling_context context;
    keyblend::local_pose pose;
    kbbench::sample_poses(state, keyblend::sampling_job{c->plain, &f->x->skeleton, 0.0f, &context, &pose},
                          times(*c->plain, forward), c->plain_bytes, 0.0);
}

void bm_compressed(benchmark::State& state, const file_case* f, const clip_case* c, bool forward) {
    kbbench::sample_compressed(state, *f, *c, forward);
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
