// .X loading throughput, in MB of file per second, against assimp on the same files in the same
// run:
//
//   load/<file>/assimp     aiImportFile(path, 0) + aiReleaseImport: assimp's X importer with no
//                          post-processing (the reference)
//   load/<file>/keyblend   keyblend::io::load_xfile(path): skeleton, meshes, skins and clips,
//                          validated
//
// Both read the file from the path (the page cache, after the first iteration). Files, from
// ../shared/data/x: tiny.x (1.48 MB of text), Testwuson.X (0.84 MB of text) and
// wall_with_pillars.x (0.51 MB of MSZIP-compressed binary, 2.85 MB inflated; MB/s counts the
// compressed bytes).
#include <keyblend/io/xfile.hpp>

#include "bench_main.hpp"

#include <assimp/cimport.h>
#include <assimp/scene.h>

#include <filesystem>
#include <string>

namespace {

const char* const files[] = {
    "directx-sdk-legacy-samples/tiny.x",
    "assimp/Testwuson.X",
    "directx-sdk-legacy-samples/wall_with_pillars.x",
};

std::string data_path(const char* file) { return std::string(KEYBLEND_DATA_DIR) + "/" + file; }

/// The file's size, or 0 (and the case skipped) when the data folder is absent.
std::uintmax_t size_or_skip(benchmark::State& state, const std::string& path) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) state.SkipWithError((path + " not found (../shared/data/x is absent)").c_str());
    return ec ? 0 : size;
}

void set_rate(benchmark::State& state, std::uintmax_t bytes) {
    state.counters["MB/s"] = benchmark::Counter(double(state.iterations()) * double(bytes) / 1e6,
                                                benchmark::Counter::kIsRate);
}

void bm_assimp(benchmark::State& state, const char* file) {
    const std::string path = data_path(file);
    const std::uintmax_t bytes = size_or_skip(state, path);
    if (bytes == 0) return;
    for (auto _ : state) {
        const aiScene* scene = aiImportFile(path.c_str(), 0);
        if (scene == nullptr) {
            state.SkipWithError(aiGetErrorString());
            return;
        }
        benchmark::DoNotOptimize(scene->mNumMeshes);
        aiReleaseImport(scene);
    }
    set_rate(state, bytes);
}

void bm_keyblend(benchmark::State& state, const char* file) {
    const std::string path = data_path(file);
    const std::uintmax_t bytes = size_or_skip(state, path);
    if (bytes == 0) return;
    for (auto _ : state) {
        const keyblend::result<keyblend::io::xfile> x = keyblend::io::load_xfile(path);
        if (!x) {
            state.SkipWithError(x.error().message.c_str());
            return;
        }
        benchmark::DoNotOptimize(x->meshes.data());
    }
    set_rate(state, bytes);
}

} // namespace

int main(int argc, char** argv) {
    for (const char* file : files) {
        const std::string name = std::filesystem::path(file).filename().string();
        benchmark::RegisterBenchmark(("load/" + name + "/assimp").c_str(), bm_assimp, file)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("load/" + name + "/keyblend").c_str(), bm_keyblend, file)
            ->Unit(benchmark::kMillisecond);
    }
    return kbbench::run(argc, argv, [](const std::string& name) {
        return name.substr(0, name.rfind('/') + 1) + "assimp";
    });
}
