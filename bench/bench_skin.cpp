// Linear-blend skinning: keyblend::skinning_job against the plain scalar GLM loop, in the .X
// loader's layout (std::vector<glm::vec3> positions and normals, std::vector<glm::vec4> tangents,
// k std::uint16_t bone indices and k float weights per vertex), a 64-bone palette.
//
//   skin/<attributes>/<k>/<vertices>             keyblend, one thread
//   skin/<attributes>/<k>/<vertices>/2           keyblend, two threads (a persistent pool through
//                                                skin_parallel's executor overload)
//   skin/<attributes>/<k>/<vertices>[/2]/avx2    where run() takes the AVX-512 kernels: the AVX2
//                                                kernels, for comparison
// The kernels run() uses are printed first (and in the context). bench_skin_kernels is this
// program built for baseline x86-64 against keyblend::kernels (the compiled kernels, chosen at run
// time): run both to see what the run-time choice costs against the compile-time one.
//   skin/<attributes>/<k>/<vertices>/reference   the plain loop: blend glm::mat4s, multiply
//   skin/tiny.x/pos+nrm/2/4432[/avx2|/reference] tiny.x's skinned body as the .X loader gives it
//                                                (4432 vertices, 35 bones, 2 influences), posed
//                                                at its first frame (a generated mesh of that
//                                                size, named skin/tiny_sized_generated/..., when
//                                                the test data is absent)
//   bound/pos+nrm/4/<vertices>/<stores>[/2]      no arithmetic: reads the bytes a 4-influence
//                                                position + normal job reads and writes what it
//                                                writes, with cached or non-temporal (stream)
//                                                stores - the memory bound in vertices/s,
//                                                measured in the same run
//
// attributes: pos, pos+nrm, pos+nrm+tan. Each case reports Mvertices/s; the 2-thread cases are
// compared with the one-thread reference.
#include <keyblend/io/xfile.hpp>
#include <keyblend/keyblend.hpp>
#include <keyblend/skin.hpp>

#include "bench_main.hpp"
#include "spin_pool.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace {

using kbbench::spin_pool;

/// A skinned mesh in the layout io/xfile.hpp gives (influences_per_vertex, bone_indices and
/// weights vertex_count x k, positions/normals as glm::vec3) plus tangents and a palette.
struct loaded_mesh {
    std::size_t influences_per_vertex = 0;
    std::vector<glm::vec3> positions, normals;
    std::vector<glm::vec4> tangents;
    std::vector<std::uint16_t> bone_indices;
    std::vector<float> weights;
    std::vector<glm::mat4> palette;
    std::size_t size() const { return positions.size(); }
};

loaded_mesh generated_mesh(std::size_t n, std::size_t k, std::size_t bones, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f), w(0.05f, 1.0f);
    std::uniform_int_distribution<int> bone(0, int(bones) - 1);
    loaded_mesh m;
    m.influences_per_vertex = k;
    for (std::size_t b = 0; b < bones; ++b) {
        const glm::vec3 axis = glm::normalize(glm::vec3(u(rng), u(rng), u(rng)) + glm::vec3(1e-3f));
        m.palette.push_back(glm::rotate(glm::translate(glm::mat4(1.0f), 3.0f * glm::vec3(u(rng), u(rng), u(rng))),
                                        u(rng), axis));
    }
    m.positions.resize(n);
    m.normals.resize(n);
    m.tangents.resize(n);
    m.bone_indices.resize(n * k);
    m.weights.resize(n * k);
    for (std::size_t v = 0; v < n; ++v) {
        m.positions[v] = 5.0f * glm::vec3(u(rng), u(rng), u(rng));
        m.normals[v] = glm::normalize(glm::vec3(u(rng), u(rng), u(rng)) + glm::vec3(1e-3f));
        m.tangents[v] = glm::vec4(glm::normalize(glm::vec3(u(rng), u(rng), u(rng)) + glm::vec3(1e-3f)), 1.0f);
        float sum = 0.0f;
        for (std::size_t i = 0; i < k; ++i) sum += (m.weights[v * k + i] = w(rng));
        for (std::size_t i = 0; i < k; ++i) {
            m.weights[v * k + i] /= sum;
            m.bone_indices[v * k + i] = std::uint16_t(bone(rng));
        }
    }
    return m;
}

/// The generic cases' meshes, made once per (k, vertices).
const loaded_mesh& mesh_for(std::size_t k, std::size_t n) {
    static std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<loaded_mesh>> cache;
    auto& slot = cache[{k, n}];
    if (!slot) slot = std::make_unique<loaded_mesh>(generated_mesh(n, k, 64, std::uint32_t(k * 7 + n)));
    return *slot;
}

/// tiny.x's skinned body, as the loader gives it (4432 vertices, 35 bones, 2 influences), with the
/// palette of its first animation frame (build_palette over the mesh's bones). Without the test
/// data (KEYBLEND_DATA_DIR), a generated mesh of the same size stands in (and the case name says
/// so).
struct tiny_mesh {
    loaded_mesh mesh;
    bool real = false;
};

const tiny_mesh& tiny_body() {
    static const tiny_mesh t = [] {
        tiny_mesh out;
        auto file = keyblend::io::load_xfile(std::string(KEYBLEND_DATA_DIR) + "/directx-sdk-legacy-samples/tiny.x");
        if (!file || file->meshes.empty() || !file->meshes[0].is_skinned() || file->animation_sets.empty()) {
            out.mesh = generated_mesh(4432, 2, 35, 4432);
            return out;
        }
        const keyblend::io::xfile_mesh& m = file->meshes[0];
        out.mesh.influences_per_vertex = m.skin.influences_per_vertex;
        out.mesh.positions = m.positions;
        out.mesh.normals = m.normals;
        out.mesh.tangents.assign(m.positions.size(), glm::vec4(1.0f, 0.0f, 0.0f, 1.0f));
        out.mesh.bone_indices = m.skin.bone_indices;
        out.mesh.weights = m.skin.weights;
        std::vector<glm::mat4> local(file->skeleton.size()), model(file->skeleton.size());
        if (!keyblend::sample_local_matrices(file->animation_sets[0].clip, file->skeleton, 0.0f, local)) return out;
        keyblend::local_to_model_job hierarchy;
        hierarchy.skeleton = &file->skeleton;
        hierarchy.input_matrices = local;
        hierarchy.output = model;
        out.mesh.palette.resize(m.skin.bones.size());
        keyblend::palette_job matrices;
        matrices.model = model;
        matrices.bones = m.skin.bones;
        matrices.output = out.mesh.palette;
        if (!hierarchy.run() || !matrices.run()) return out;
        out.real = true;
        return out;
    }();
    return t;
}

enum attributes : unsigned { pos = 1, nrm = 2, tan = 4 };

struct outputs {
    std::vector<glm::vec3> positions, normals;
    std::vector<glm::vec4> tangents;
    explicit outputs(std::size_t n) : positions(n), normals(n), tangents(n) {}
};

keyblend::skinning_job<> make_job(const loaded_mesh& m, outputs& o, unsigned attrs) {
    keyblend::skinning_job<> job;
    job.influences = m.influences_per_vertex;
    job.joints = keyblend::make_span(m.bone_indices, m.influences_per_vertex);
    job.weights = keyblend::make_span(m.weights, m.influences_per_vertex);
    job.in_positions = keyblend::make_span(m.positions);
    job.out_positions = keyblend::make_span(o.positions);
    if (attrs & nrm) {
        job.in_normals = keyblend::make_span(m.normals);
        job.out_normals = keyblend::make_span(o.normals);
    }
    if (attrs & tan) {
        job.in_tangents = keyblend::make_span(m.tangents);
        job.out_tangents = keyblend::make_span(o.tangents);
    }
    job.palette = {m.palette.data(), m.palette.size()};
    return job;
}

void set_rate(benchmark::State& state, std::size_t vertices) {
    state.counters["Mvertices/s"] = benchmark::Counter(double(state.iterations()) * double(vertices) * 1e-6,
                                                       benchmark::Counter::kIsRate);
}

// The plain reference: what a programmer writes first with GLM.
void skin_reference(const loaded_mesh& m, outputs& o, unsigned attrs) {
    const std::size_t k = m.influences_per_vertex;
    for (std::size_t v = 0; v < m.size(); ++v) {
        glm::mat4 b = m.palette[m.bone_indices[v * k]] * m.weights[v * k];
        for (std::size_t i = 1; i < k; ++i) b += m.palette[m.bone_indices[v * k + i]] * m.weights[v * k + i];
        o.positions[v] = glm::vec3(b * glm::vec4(m.positions[v], 1.0f));
        if (attrs & nrm) o.normals[v] = glm::mat3(b) * m.normals[v];
        if (attrs & tan) o.tangents[v] = glm::vec4(glm::mat3(b) * glm::vec3(m.tangents[v]), m.tangents[v].w);
    }
}

/// One job on the given kernels: header-only, the library's internal entry point for a chosen
/// instruction set (as the tests call it); with the compiled kernels, run() after bm_keyblend has
/// forced that choice (force_kernel_isa) for the whole case.
bool run_linear_with(keyblend::simd_isa isa, const keyblend::skinning_job<>& job) {
#if defined(KEYBLEND_KERNELS_LIBRARY)
    return keyblend::kernel_isa() == isa && job.run().has_value();
#else
    return keyblend::impl::skin::run_linear_with(isa, job).has_value();
#endif
}

/// With the compiled kernels, the AVX2 ones for the lifetime of a case, then the CPU's choice again.
struct forced_isa {
    explicit forced_isa(bool on) : restore(keyblend::kernel_isa()), active(on) {
#if defined(KEYBLEND_KERNELS_LIBRARY)
        if (active) (void)keyblend::force_kernel_isa(keyblend::simd_isa::avx2);
#endif
    }
    ~forced_isa() {
#if defined(KEYBLEND_KERNELS_LIBRARY)
        if (active) (void)keyblend::force_kernel_isa(restore);
#endif
    }
    forced_isa(const forced_isa&) = delete;
    forced_isa& operator=(const forced_isa&) = delete;
    keyblend::simd_isa restore;
    bool active;
};

/// What a build without AVX-512 runs (the AVX2 kernels), for the /avx2 cases where run() takes the
/// AVX-512 kernels, in the chunks and with the store policy skin_parallel would use.
void run_avx2(const keyblend::skinning_job<>& job, std::size_t threads, spin_pool* pool) {
    constexpr keyblend::simd_isa avx2 = keyblend::simd_isa::avx2;
    if (threads == 1) {
        (void)run_linear_with(avx2, job);
        return;
    }
    const std::size_t n = job.in_positions.size;
    const std::size_t bytes = 12 + (job.out_normals.empty() ? 0 : 12) + (job.out_tangents.empty() ? 0 : 16);
    keyblend::skinning_job<> base = job;
    base.stores = n * bytes >= keyblend::streaming_store_threshold ? keyblend::store_policy::streaming
                                                                    : keyblend::store_policy::cached;
    const std::size_t chunk = ((n + threads - 1) / threads + 63) / 64 * 64;
    (*pool)(threads, [&](std::size_t i) {
        keyblend::skinning_job<> part = base;
        part.range = keyblend::vertex_range{std::min(n, i * chunk), std::min(n, (i + 1) * chunk)};
        (void)run_linear_with(avx2, part);
    });
}

/// keyblend on `threads` threads; with `avx2`, the AVX2 kernel of an AVX-512 build.
void bm_keyblend(benchmark::State& state, const loaded_mesh* fixed, unsigned attrs, std::size_t k,
                 std::size_t n, std::size_t threads, bool avx2) {
    const loaded_mesh& m = fixed ? *fixed : mesh_for(k, n);
    outputs o(m.size());
    const keyblend::skinning_job<> job = make_job(m, o, attrs);
    if (!job.validate()) {
        state.SkipWithError("invalid job");
        return;
    }
    spin_pool pool(threads - 1);
    const forced_isa forced(avx2);
    if (avx2) {
        for (auto _ : state) {
            run_avx2(job, threads, &pool);
            benchmark::ClobberMemory();
        }
    } else if (threads == 1) {
        for (auto _ : state) {
            (void)job.run();
            benchmark::ClobberMemory();
        }
    } else {
        for (auto _ : state) {
            (void)keyblend::skin_parallel(job, threads, [&](std::size_t count, const auto& task) {
                pool(count, std::function<void(std::size_t)>(std::cref(task)));
            });
            benchmark::ClobberMemory();
        }
    }
    set_rate(state, m.size());
}

void bm_reference(benchmark::State& state, const loaded_mesh* fixed, unsigned attrs, std::size_t k,
                  std::size_t n) {
    const loaded_mesh& m = fixed ? *fixed : mesh_for(k, n);
    outputs o(m.size());
    for (auto _ : state) {
        skin_reference(m, o, attrs);
        benchmark::DoNotOptimize(o.positions.data());
        benchmark::ClobberMemory();
    }
    set_rate(state, m.size());
}

#if defined(__AVX2__)
/// The memory bound of a 4-influence position + normal job in this layout: the same bytes read
/// (12 + 12 + 8 + 16 per vertex) and written (12 + 12), with ordinary or non-temporal stores, no
/// arithmetic to speak of.
void bm_bound(benchmark::State& state, std::size_t n, std::size_t threads, bool streaming) {
    const loaded_mesh& m = mesh_for(4, n);
    // Outputs 32-byte aligned, for the 256-bit non-temporal stores.
    std::vector<float> pbuf(3 * n + 8), nbuf(3 * n + 8);
    float* pa = pbuf.data() + (32 - reinterpret_cast<std::uintptr_t>(pbuf.data()) % 32) % 32 / 4;
    float* na = nbuf.data() + (32 - reinterpret_cast<std::uintptr_t>(nbuf.data()) % 32) % 32 / 4;
    const auto range = [&](std::size_t begin, std::size_t end) {
        const float* p = &m.positions[0].x;
        const float* nm = &m.normals[0].x;
        const float* w = m.weights.data();
        const std::uint16_t* j = m.bone_indices.data();
        for (std::size_t v = begin; v < end; v += 8) {
            const __m256i idx = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(j + 4 * v)),
                                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(j + 4 * v + 16)));
            const __m256 ws = _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(w + 4 * v), _mm256_loadu_ps(w + 4 * v + 8)),
                                            _mm256_add_ps(_mm256_loadu_ps(w + 4 * v + 16), _mm256_loadu_ps(w + 4 * v + 24)));
            const __m256 mix = _mm256_add_ps(ws, _mm256_castsi256_ps(idx));
            for (std::size_t c = 0; c < 24; c += 8) {
                const __m256 a = _mm256_add_ps(_mm256_loadu_ps(p + 3 * v + c), mix);
                const __m256 b = _mm256_add_ps(_mm256_loadu_ps(nm + 3 * v + c), mix);
                if (streaming) {
                    _mm256_stream_ps(pa + 3 * v + c, a);
                    _mm256_stream_ps(na + 3 * v + c, b);
                } else {
                    _mm256_store_ps(pa + 3 * v + c, a);
                    _mm256_store_ps(na + 3 * v + c, b);
                }
            }
        }
    };
    const std::size_t half = n / 2 / 64 * 64;
    if (threads == 1) {
        for (auto _ : state) {
            range(0, n);
            _mm_sfence();
            benchmark::ClobberMemory();
        }
    } else {
        spin_pool pool(1);
        const std::function<void(std::size_t)> task = [&](std::size_t i) {
            i == 0 ? range(0, half) : range(half, n);
            _mm_sfence();
        };
        for (auto _ : state) {
            pool(2, task);
            benchmark::ClobberMemory();
        }
    }
    set_rate(state, n);
}
#endif

const char* attribute_name(unsigned attrs) {
    return attrs == pos ? "pos" : attrs == (pos | nrm) ? "pos+nrm" : "pos+nrm+tan";
}

/// The /avx2 cases exist where run() takes the AVX-512 kernels and the AVX2 ones can run too.
bool has_avx2_cases() {
#if defined(KEYBLEND_KERNELS_LIBRARY)
    return keyblend::kernel_isa() == keyblend::simd_isa::avx512 && keyblend::kernel_isa_supported(keyblend::simd_isa::avx2);
#else
    keyblend::skinning_job<> probe; // an empty job: run_linear_with only says whether it can
    probe.influences = 1;
    const glm::mat4 m(1.0f);
    probe.palette = {&m, 1};
    return keyblend::kernel_isa() == keyblend::simd_isa::avx512 && run_linear_with(keyblend::simd_isa::avx2, probe);
#endif
}

void register_all() {
    for (unsigned attrs : {unsigned(pos), unsigned(pos | nrm), unsigned(pos | nrm | tan)})
        for (std::size_t k : {1u, 2u, 4u, 8u})
            for (std::size_t n : {10000u, 100000u, 1000000u}) {
                const std::string base = std::string("skin/") + attribute_name(attrs) + "/" +
                                         std::to_string(k) + "/" + std::to_string(n);
                benchmark::RegisterBenchmark((base + "/reference").c_str(), bm_reference, nullptr, attrs, k, n)
                    ->UseRealTime();
                for (bool avx2 : {false, true}) {
                    if (avx2 && !has_avx2_cases()) continue;
                    const std::string path = avx2 ? "/avx2" : "";
                    benchmark::RegisterBenchmark((base + path).c_str(), bm_keyblend, nullptr, attrs, k, n,
                                                 std::size_t(1), avx2)
                        ->UseRealTime();
                    benchmark::RegisterBenchmark((base + "/2" + path).c_str(), bm_keyblend, nullptr, attrs, k, n,
                                                 std::size_t(2), avx2)
                        ->UseRealTime();
                }
            }
    const tiny_mesh& t = tiny_body();
    const loaded_mesh* tiny = &t.mesh;
    const std::string tiny_name = std::string(t.real ? "skin/tiny.x" : "skin/tiny_sized_generated") + "/pos+nrm/" +
                                  std::to_string(tiny->influences_per_vertex) + "/" + std::to_string(tiny->size());
    benchmark::RegisterBenchmark((tiny_name + "/reference").c_str(), bm_reference, tiny, unsigned(pos | nrm),
                                 tiny->influences_per_vertex, tiny->size())
        ->UseRealTime();
    for (bool avx2 : {false, true}) {
        if (avx2 && !has_avx2_cases()) continue;
        benchmark::RegisterBenchmark((tiny_name + (avx2 ? "/avx2" : "")).c_str(), bm_keyblend, tiny, unsigned(pos | nrm),
                                     tiny->influences_per_vertex, tiny->size(), std::size_t(1), avx2)
            ->UseRealTime();
    }
#if defined(__AVX2__)
    for (std::size_t n : {100000u, 1000000u})
        for (bool streaming : {false, true}) {
            const std::string base =
                std::string("bound/pos+nrm/4/") + std::to_string(n) + (streaming ? "/stream" : "/cached");
            benchmark::RegisterBenchmark(base.c_str(), bm_bound, n, std::size_t(1), streaming)->UseRealTime();
            benchmark::RegisterBenchmark((base + "/2").c_str(), bm_bound, n, std::size_t(2), streaming)
                ->UseRealTime();
        }
#endif
}

} // namespace

int main(int argc, char** argv) {
#if defined(KEYBLEND_KERNELS_LIBRARY)
    const char* how = "compiled kernels (keyblend::kernels), chosen at run time; KEYBLEND_ISA forces";
#else
    const char* how = "chosen at compile time";
#endif
    std::printf("skinning kernels: %s, %s\n", keyblend::to_string(keyblend::kernel_isa()), how);
    benchmark::AddCustomContext("skinning kernels", keyblend::to_string(keyblend::kernel_isa()));
    register_all();
    return kbbench::run(argc, argv, [](const std::string& full) -> std::string {
        // Every case measures real time (the 2-thread ones must): names end in "/real_time".
        const std::string timing = "/real_time", suffix = "/reference";
        const auto ends_with = [](const std::string& s, const std::string& end) {
            return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
        };
        std::string name = full;
        if (ends_with(name, timing)) name.resize(name.size() - timing.size());
        if (name.compare(0, 5, "skin/") != 0 || ends_with(name, suffix)) return {};
        // skin/<attributes>/<k>/<vertices>[/2][/avx2] -> skin/<attributes>/<k>/<vertices>/reference
        if (ends_with(name, "/avx2")) name.resize(name.size() - 5);
        if (ends_with(name, "/2")) name.resize(name.size() - 2);
        return name + suffix + timing;
    });
}
