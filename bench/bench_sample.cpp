// Keyframe sampling: 100 joints x translation/rotation/scale tracks (300 tracks, 20 to 80 keys
// each, irregularly spaced over 2 s; rotations a random walk of up to ~30 degrees per key),
// sampled into a pose of 100 transforms per iteration.
//
//   sample/<playback>/reference      std::upper_bound over {time, value} keys + glm::slerp/glm::mix
//   sample/<playback>/binary_search  keyblend::sample_track
//   sample/<playback>/cursor         keyblend::sample_track with one track_cursor per track
//
// playback: forward (60 Hz, looping), backward (60 Hz, looping), random (uniform random times).
#include <keyblend/sample.hpp>

#include "bench_main.hpp"
#include "reference.hpp"

#include <algorithm>
#include <random>
#include <vector>

namespace {

using kbbench::ref_key;
using kbbench::reference_sample;

constexpr int joint_count = 100;
constexpr float duration = 2.0f;

struct rig {
    std::vector<keyblend::track<glm::vec3>> translation, scale;
    std::vector<keyblend::track<glm::quat>> rotation;
    std::vector<std::vector<ref_key<glm::vec3>>> ref_translation, ref_scale;
    std::vector<std::vector<ref_key<glm::quat>>> ref_rotation;
};

std::vector<float> key_times(std::mt19937& rng) {
    const int n = std::uniform_int_distribution<int>(20, 80)(rng);
    std::vector<float> t(static_cast<std::size_t>(n));
    std::uniform_real_distribution<float> u(0.0f, duration);
    t[0] = 0.0f;
    for (std::size_t i = 1; i < t.size(); ++i) t[i] = u(rng);
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    t.back() = duration;
    return t;
}

const rig& the_rig() {
    static const rig r = [] {
        rig out;
        std::mt19937 rng(42);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (int j = 0; j < joint_count; ++j) {
            keyblend::track<glm::vec3> t, s;
            keyblend::track<glm::quat> q;
            std::vector<ref_key<glm::vec3>> rt, rs;
            std::vector<ref_key<glm::quat>> rq;
            for (float time : key_times(rng)) {
                const glm::vec3 v(u(rng), u(rng), u(rng));
                t.push_back(time, v);
                rt.push_back({time, v});
            }
            // Rotations walk like a real joint's: up to ~30 degrees between neighbouring keys.
            glm::quat walk = glm::normalize(keyblend::make_quat(u(rng), u(rng), u(rng), u(rng)));
            for (float time : key_times(rng)) {
                const glm::vec3 axis = glm::normalize(glm::vec3(u(rng), u(rng), u(rng)) + glm::vec3(1e-3f));
                walk = glm::normalize(walk * glm::angleAxis(0.5f * u(rng), axis));
                q.push_back(time, walk);
                rq.push_back({time, walk});
            }
            for (float time : key_times(rng)) {
                const glm::vec3 v(1.0f + 0.1f * u(rng));
                s.push_back(time, v);
                rs.push_back({time, v});
            }
            out.translation.push_back(std::move(t));
            out.rotation.push_back(std::move(q));
            out.scale.push_back(std::move(s));
            out.ref_translation.push_back(std::move(rt));
            out.ref_rotation.push_back(std::move(rq));
            out.ref_scale.push_back(std::move(rs));
        }
        return out;
    }();
    return r;
}

enum class playback { forward, backward, random };

struct time_source {
    explicit time_source(playback p) : mode(p) {}
    float next() {
        constexpr float dt = 1.0f / 60.0f;
        switch (mode) {
        case playback::forward: t += dt; break;
        case playback::backward: t -= dt; break;
        case playback::random: return dist(rng);
        }
        return keyblend::wrap_time(t, duration, keyblend::wrap_mode::loop);
    }
    playback mode;
    float t = 0.0f;
    std::mt19937 rng{7};
    std::uniform_real_distribution<float> dist{0.0f, duration};
};

void set_rate(benchmark::State& state) {
    state.counters["tracks/s"] = benchmark::Counter(double(state.iterations()) * 3 * joint_count,
                                                    benchmark::Counter::kIsRate);
}

void bm_reference(benchmark::State& state, playback p) {
    const rig& r = the_rig();
    std::vector<keyblend::transform> pose(joint_count);
    time_source clock(p);
    const auto mix3 = [](const glm::vec3& a, const glm::vec3& b, float t) { return glm::mix(a, b, t); };
    const auto slerp = [](const glm::quat& a, const glm::quat& b, float t) { return glm::slerp(a, b, t); };
    for (auto _ : state) {
        const float t = clock.next();
        for (int j = 0; j < joint_count; ++j) {
            pose[j].translation = reference_sample(r.ref_translation[j], t, mix3);
            pose[j].rotation = reference_sample(r.ref_rotation[j], t, slerp);
            pose[j].scale = reference_sample(r.ref_scale[j], t, mix3);
        }
        benchmark::DoNotOptimize(pose.data());
        benchmark::ClobberMemory();
    }
    set_rate(state);
}

void bm_binary_search(benchmark::State& state, playback p) {
    const rig& r = the_rig();
    std::vector<keyblend::transform> pose(joint_count);
    time_source clock(p);
    for (auto _ : state) {
        const float t = clock.next();
        for (int j = 0; j < joint_count; ++j) {
            pose[j].translation = keyblend::sample_track(r.translation[j], t);
            pose[j].rotation = keyblend::sample_track(r.rotation[j], t);
            pose[j].scale = keyblend::sample_track(r.scale[j], t);
        }
        benchmark::DoNotOptimize(pose.data());
        benchmark::ClobberMemory();
    }
    set_rate(state);
}

void bm_cursor(benchmark::State& state, playback p) {
    const rig& r = the_rig();
    std::vector<keyblend::transform> pose(joint_count);
    std::vector<keyblend::track_cursor> cursors(3 * joint_count);
    time_source clock(p);
    for (auto _ : state) {
        const float t = clock.next();
        for (int j = 0; j < joint_count; ++j) {
            pose[j].translation = keyblend::sample_track(r.translation[j], t, cursors[3 * j]);
            pose[j].rotation = keyblend::sample_track(r.rotation[j], t, cursors[3 * j + 1]);
            pose[j].scale = keyblend::sample_track(r.scale[j], t, cursors[3 * j + 2]);
        }
        benchmark::DoNotOptimize(pose.data());
        benchmark::ClobberMemory();
    }
    set_rate(state);
}

} // namespace

BENCHMARK_CAPTURE(bm_reference, forward, playback::forward)->Name("sample/forward/reference");
BENCHMARK_CAPTURE(bm_binary_search, forward, playback::forward)->Name("sample/forward/binary_search");
BENCHMARK_CAPTURE(bm_cursor, forward, playback::forward)->Name("sample/forward/cursor");
BENCHMARK_CAPTURE(bm_reference, backward, playback::backward)->Name("sample/backward/reference");
BENCHMARK_CAPTURE(bm_binary_search, backward, playback::backward)->Name("sample/backward/binary_search");
BENCHMARK_CAPTURE(bm_cursor, backward, playback::backward)->Name("sample/backward/cursor");
BENCHMARK_CAPTURE(bm_reference, random, playback::random)->Name("sample/random/reference");
BENCHMARK_CAPTURE(bm_binary_search, random, playback::random)->Name("sample/random/binary_search");
BENCHMARK_CAPTURE(bm_cursor, random, playback::random)->Name("sample/random/cursor");

int main(int argc, char** argv) {
    return kbbench::run(argc, argv, [](const std::string& name) {
        return name.substr(0, name.rfind('/') + 1) + "reference";
    });
}
