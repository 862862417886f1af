// .X and glTF loading throughput, in MB of file per second, against assimp on the same files in
// the same run:
//
//   load/<file>/assimp     aiImportFile(path, 0) + aiReleaseImport: assimp's X or glTF 2 importer
//                          with no post-processing (the reference)
//   load/<file>/keyblend   keyblend::io::load_xfile(path) or keyblend::gltf::load(path): skeleton,
//                          meshes, skins and clips, validated
//   load/<file>/inflate    compressed files: keyblend::io::decompress_xfile on the file's bytes in
//                          memory into a vector kept across iterations (MSZIP through ISA-L or
//                          zlib, whichever the build uses)
//   load/<file>/parse      compressed files: load_xfile_memory on those inflated bytes: the rest
//                          of the load
//
// Both whole loads read the file from the path (the page cache, after the first iteration). Files
// from the test data (KEYBLEND_DATA_DIR): tiny.x (1.48 MB of text), Testwuson.X (0.84 MB of text),
// wall_with_pillars.x (0.51 MB of MSZIP-compressed binary, 2.85 MB inflated; MB/s counts the
// compressed bytes). The program is built twice: bench_load links keyblend::io (ISA-L's inflate
// when CMake found it), bench_load_zlib compiles the loader in with zlib's.
#include <keyblend/io/xfile.hpp>
#ifdef KEYBLEND_BENCH_GLTF
#include <keyblend/gltf.hpp>
#endif

#include "bench_main.hpp"

#include <assimp/cimport.h>
#include <assimp/scene.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

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
    if (ec) state.SkipWithError((path + " not found (the test data folder is absent)").c_str());
    return ec ? 0 : size;
}

std::vector<unsigned char> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<unsigned char>(std::istreambuf_iterator<char>(in),
                                      std::istreambuf_iterator<char>());
}

void set_rate(benchmark::State& state, std::uintmax_t bytes) {
    state.counters["MB/s"] = benchmark::Counter(double(state.iterations()) * double(bytes) / 1e6,
                                                benchmark::Counter::kIsRate);
}

void bm_assimp(benchmark::State& state, const std::string& path) {
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

/// The two halves of loading a compressed file: inflating it, and reading what it inflates to.
void bm_inflate(benchmark::State& state, const char* file) {
    const std::string path = data_path(file);
    const std::uintmax_t bytes = size_or_skip(state, path);
    if (bytes == 0) return;
    const std::vector<unsigned char> zipped = read_bytes(path);
    std::vector<unsigned char> inflated;
    for (auto _ : state) {
        const keyblend::status st = keyblend::io::decompress_xfile(zipped.data(), zipped.size(), inflated);
        if (!st) {
            state.SkipWithError(st.error().message.c_str());
            return;
        }
        benchmark::DoNotOptimize(inflated.data());
    }
    set_rate(state, bytes);
}

void bm_parse(benchmark::State& state, const char* file) {
    const std::string path = data_path(file);
    const std::uintmax_t bytes = size_or_skip(state, path);
    if (bytes == 0) return;
    const std::vector<unsigned char> zipped = read_bytes(path);
    std::vector<unsigned char> inflated;
    if (const keyblend::status st =
            keyblend::io::decompress_xfile(zipped.data(), zipped.size(), inflated);
        !st) {
        state.SkipWithError(st.error().message.c_str());
        return;
    }
    for (auto _ : state) {
        const auto x = keyblend::io::load_xfile_memory(inflated.data(), inflated.size());
        if (!x) {
            state.SkipWithError(x.error().message.c_str());
            return;
        }
        benchmark::DoNotOptimize(x->meshes.data());
    }
    set_rate(state, bytes); // the compressed size, as the whole load's rate
}

} // namespace

#ifdef KEYBLEND_BENCH_GLTF
// glTF: keyblend::gltf::load (skeleton, mesh instances with skins and morph targets, clips) against
// assimp's glTF 2 importer on the same file (issue 27 asks for 5x on a CesiumMan-class character).
const char* const gltf_files[] = {
    "khronos/CesiumMan.glb",
    "khronos/RiggedSimple.glb",
    "khronos/AnimatedMorphCube.glb",
    "simple_skin.gltf",
};

void bm_gltf(benchmark::State& state, const std::string& path) {
    const std::uintmax_t bytes = size_or_skip(state, path);
    if (bytes == 0) return;
    for (auto _ : state) {
        const keyblend::result<keyblend::gltf::model> g = keyblend::gltf::load(path);
        if (!g) {
            state.SkipWithError(g.error().message.c_str());
            return;
        }
        benchmark::DoNotOptimize(g->meshes.data());
    }
    set_rate(state, bytes);
}
#endif

int main(int argc, char** argv) {
#ifdef KEYBLEND_BENCH_GLTF
    for (const char* file : gltf_files) {
        const std::string path = std::string(KEYBLEND_FORMATS_DIR) + "/" + file;
        const std::string base = "load/" + std::filesystem::path(file).filename().string() + "/";
        benchmark::RegisterBenchmark((base + "assimp").c_str(), bm_assimp, path)->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark((base + "keyblend").c_str(), bm_gltf, path)->Unit(benchmark::kMillisecond);
    }
#endif
    for (const char* file : files) {
        const std::string name = std::filesystem::path(file).filename().string();
        const std::string base = "load/" + name + "/";
        benchmark::RegisterBenchmark((base + "assimp").c_str(), bm_assimp, data_path(file))
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark((base + "keyblend").c_str(), bm_keyblend, file)
            ->Unit(benchmark::kMillisecond);
        const std::vector<unsigned char> head = read_bytes(data_path(file));
        if (head.size() >= 12 && (std::string(head.begin() + 8, head.begin() + 12) == "tzip" ||
                                  std::string(head.begin() + 8, head.begin() + 12) == "bzip")) {
            benchmark::RegisterBenchmark((base + "inflate").c_str(), bm_inflate, file)
                ->Unit(benchmark::kMillisecond);
            benchmark::RegisterBenchmark((base + "parse").c_str(), bm_parse, file)
                ->Unit(benchmark::kMillisecond);
        }
    }
    std::printf("compressed files inflate with %s\n", KEYBLEND_BENCH_INFLATE);
    // Whole loads against assimp's; the halves of a compressed load (times in the table above)
    // against the whole keyblend load: time(whole) / time(half).
    return kbbench::run(argc, argv, [](const std::string& name) {
        const std::string base = name.substr(0, name.rfind('/') + 1);
        const std::string what = name.substr(base.size());
        return what == "inflate" || what == "parse" ? base + "keyblend" : base + "assimp";
    });
}
