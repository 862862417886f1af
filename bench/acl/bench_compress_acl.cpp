// keyblend's compressed clips beside ACL's (the Animation Compression Library, 2.1) on the same
// clips of the shared .X files, in the same run: built only when KEYBLEND_ACL_SOURCE_DIR names
// ACL's sources (see bench/acl/CMakeLists.txt). Never by default, never in CI.
//
//   compress_acl/<file>/<set>/sample/<random|forward>/<keyblend|acl>
//       a whole local pose per iteration, each library into its own pose (keyblend: local_pose,
//       from compressed_clip; ACL: decompress_tracks into an array of rtm::qvvf); counters:
//       bytes (ACL: compressed_tracks::get_size()) and error_cm_eq (virtual vertices at 3 cm-eq
//       against keyblend's full-precision sampling, every 1/60 s and at the end).
//   compress_acl/<file>/<set>/compress/<keyblend|acl>    one whole compression
//
// ACL is given what it is made for: the clip sampled uniformly at its key rate (ticks per second
// / the gcd of the key times when that is at most 240 Hz, else 60 Hz), its default settings
// (acl::get_default_compression_settings, qvvf_transform_error_metric) at the same precision
// and shell distance, and each joint's bind pose as its default sub-track values (what keyblend
// leaves out of a clip), which its track writer hands back. The ratio table compares keyblend's
// rate with ACL's.
#include "../bench_main.hpp"
#include "../compress_data.hpp"

#include <acl/compression/compress.h>
#include <acl/compression/track_array.h>
#include <acl/compression/transform_error_metrics.h>
#include <acl/core/ansi_allocator.h>
#include <acl/decompression/decompress.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

using kbbench::clip_case;
using kbbench::file_case;

rtm::qvvf to_qvv(const keyblend::transform& x) {
    return rtm::qvv_set(rtm::quat_set(x.rotation.x, x.rotation.y, x.rotation.z, x.rotation.w),
                        rtm::vector_set(x.translation.x, x.translation.y, x.translation.z, 0.0f),
                        rtm::vector_set(x.scale.x, x.scale.y, x.scale.z, 0.0f));
}

keyblend::transform from_qvv(const rtm::qvvf& q) {
    keyblend::transform x;
    x.translation = glm::vec3(rtm::vector_get_x(q.translation), rtm::vector_get_y(q.translation), rtm::vector_get_z(q.translation));
    x.rotation = keyblend::make_quat(rtm::quat_get_w(q.rotation), rtm::quat_get_x(q.rotation), rtm::quat_get_y(q.rotation),
                                     rtm::quat_get_z(q.rotation));
    x.scale = glm::vec3(rtm::vector_get_x(q.scale), rtm::vector_get_y(q.scale), rtm::vector_get_z(q.scale));
    return x;
}

/// ACL's writer into an rtm::qvvf array, with the bind pose as the default sub-tracks.
struct bind_writer final : public acl::track_writer {
    rtm::qvvf* out = nullptr;
    const rtm::qvvf* defaults = nullptr;
    static constexpr acl::default_sub_track_mode get_default_rotation_mode() { return acl::default_sub_track_mode::variable; }
    static constexpr acl::default_sub_track_mode get_default_translation_mode() { return acl::default_sub_track_mode::variable; }
    static constexpr acl::default_sub_track_mode get_default_scale_mode() { return acl::default_sub_track_mode::variable; }
    rtm::quatf RTM_SIMD_CALL get_variable_default_rotation(uint32_t i) const { return defaults[i].rotation; }
    rtm::vector4f RTM_SIMD_CALL get_variable_default_translation(uint32_t i) const { return defaults[i].translation; }
    rtm::vector4f RTM_SIMD_CALL get_variable_default_scale(uint32_t i) const { return defaults[i].scale; }
    void RTM_SIMD_CALL write_rotation(uint32_t i, rtm::quatf_arg0 q) { out[i].rotation = q; }
    void RTM_SIMD_CALL write_translation(uint32_t i, rtm::vector4f_arg0 t) { out[i].translation = t; }
    void RTM_SIMD_CALL write_scale(uint32_t i, rtm::vector4f_arg0 s) { out[i].scale = s; }
};

/// The key rate (Hz): ticks per second / gcd of the key times, when they are whole ticks and that
/// is at most 240 Hz; else 60 Hz.
double key_rate(const keyblend::clip& c) {
    std::int64_t g = static_cast<std::int64_t>(c.duration);
    bool whole = std::floor(c.duration) == c.duration;
    for (const keyblend::channel& ch : c.channels)
        for (const std::vector<float>* times :
             {&ch.translation.times(), &ch.rotation.times(), &ch.scale.times(), &ch.matrix.times()})
            for (float t : *times) {
                if (std::floor(t) != t || t < 0.0f) whole = false;
                else g = std::gcd(g, static_cast<std::int64_t>(t));
            }
    const double rate = g > 0 ? double(c.ticks_per_second) / double(g) : 0.0;
    return whole && rate > 0.0 && rate <= 240.0 ? rate : 60.0;
}

struct acl_clip {
    acl::ansi_allocator allocator;
    acl::compressed_tracks* tracks = nullptr;
    std::vector<rtm::qvvf> defaults, pose;
    double error_cm = 0.0;
    ~acl_clip() {
        if (tracks) allocator.deallocate(tracks, tracks->get_size());
    }
};

/// ACL's track list for a clip: sampled at its key rate from keyblend's sampling.
acl::track_array_qvvf acl_input(acl::iallocator& allocator, const file_case& f, const keyblend::clip& c) {
    const keyblend::skeleton& s = f.x->skeleton;
    const double rate = key_rate(c), seconds = double(c.duration) / double(c.ticks_per_second);
    const std::uint32_t samples = static_cast<std::uint32_t>(std::floor(seconds * rate + 1e-6)) + 1;
    acl::track_array_qvvf tracks(allocator, std::uint32_t(s.size()));
    for (std::size_t j = 0; j < s.size(); ++j) {
        acl::track_desc_transformf desc;
        desc.output_index = std::uint32_t(j);
        desc.parent_index = s.parent(j) < 0 ? acl::k_invalid_track_index : std::uint32_t(s.parent(j));
        desc.precision = f.settings.precision;
        desc.shell_distance = f.settings.shell_distance;
        desc.default_value = to_qvv(s.bind_transforms()[j]);
        tracks[std::uint32_t(j)] = acl::track_qvvf::make_reserve(desc, allocator, samples, float(rate));
    }
    keyblend::sampling_context ctx;
    keyblend::local_pose pose;
    keyblend::sampling_job sample{&c, &s, 0.0f, &ctx, &pose};
    for (std::uint32_t i = 0; i < samples; ++i) {
        const double t = std::min(seconds, double(i) / rate);
        sample.time = float(t * double(c.ticks_per_second));
        (void)sample.run();
        for (std::size_t j = 0; j < s.size(); ++j) tracks[std::uint32_t(j)][i] = to_qvv(pose.get(j));
    }
    return tracks;
}

bool compress_acl(const file_case& f, const keyblend::clip& c, acl_clip& out) {
    acl::track_array_qvvf tracks = acl_input(out.allocator, f, c);
    acl::qvvf_transform_error_metric metric;
    acl::compression_settings settings = acl::get_default_compression_settings();
    settings.error_metric = &metric;
    acl::output_stats stats;
    if (out.tracks) out.allocator.deallocate(out.tracks, out.tracks->get_size());
    out.tracks = nullptr;
    return !acl::compress_track_list(out.allocator, tracks, settings, out.tracks, stats).any() && out.tracks;
}

using acl_context = acl::decompression_context<acl::default_transform_decompression_settings>;

void decompress(acl_context& ctx, acl_clip& a, float seconds) {
    ctx.seek(seconds, acl::sample_rounding_policy::none);
    bind_writer w;
    w.out = a.pose.data();
    w.defaults = a.defaults.data();
    ctx.decompress_tracks(w);
}

struct acl_case {
    const file_case* file = nullptr;
    const clip_case* clip = nullptr;
    std::unique_ptr<acl_clip> acl;
};

std::vector<acl_case>& cases() {
    static std::vector<acl_case> all = [] {
        std::vector<acl_case> out;
        for (const file_case& f : kbbench::files())
            for (const clip_case& c : f.clips) {
                acl_case k{&f, &c, std::make_unique<acl_clip>()};
                if (!compress_acl(f, *c.plain, *k.acl)) {
                    std::fprintf(stderr, "bench_compress_acl: ACL could not compress '%s'\n", c.plain->name.c_str());
                    continue;
                }
                const keyblend::skeleton& s = f.x->skeleton;
                for (std::size_t j = 0; j < s.size(); ++j) k.acl->defaults.push_back(to_qvv(s.bind_transforms()[j]));
                k.acl->pose = k.acl->defaults;
                acl_context ctx;
                ctx.initialize(*k.acl->tracks);
                acl_clip& a = *k.acl;
                a.error_cm = kbbench::error_cm(f, *c.plain, [&](float tick, keyblend::local_pose& p) {
                    decompress(ctx, a, tick / c.plain->ticks_per_second);
                    p.resize(s.size());
                    for (std::size_t j = 0; j < s.size(); ++j) p.set(j, from_qvv(a.pose[j]));
                });
                out.push_back(std::move(k));
            }
        return out;
    }();
    return all;
}

void bm_keyblend(benchmark::State& state, const acl_case* k, bool forward) {
    kbbench::sample_compressed(state, *k->file, *k->clip, forward);
}

void bm_acl(benchmark::State& state, const acl_case* k, bool forward) {
    const std::vector<float> t = kbbench::times(*k->clip->plain, forward);
    const float tps = k->clip->plain->ticks_per_second;
    acl_context ctx;
    ctx.initialize(*k->acl->tracks);
    std::size_t i = 0;
    for (auto _ : state) {
        decompress(ctx, *k->acl, t[i++ & 1023] / tps);
        benchmark::DoNotOptimize(k->acl->pose.data());
        benchmark::ClobberMemory();
    }
    kbbench::report_poses(state, k->acl->tracks->get_size(), k->acl->error_cm);
}

void bm_compress_keyblend(benchmark::State& state, const acl_case* k) {
    keyblend::compressed_clip out;
    keyblend::compress_job job;
    job.input = k->clip->plain;
    job.skeleton = &k->file->x->skeleton;
    job.settings = k->file->settings;
    job.output = &out;
    for (auto _ : state) benchmark::DoNotOptimize(job.run());
    kbbench::set_rate(state, "clips/s");
}

void bm_compress_acl(benchmark::State& state, const acl_case* k) {
    acl_clip scratch;
    for (auto _ : state) benchmark::DoNotOptimize(compress_acl(*k->file, *k->clip->plain, scratch));
    kbbench::set_rate(state, "clips/s");
}

} // namespace

int main(int argc, char** argv) {
    for (const acl_case& k : cases()) {
        const std::string base = "compress_acl/" + k.file->name + "/" + (k.clip->plain->name.empty() ? "(unnamed)" : k.clip->plain->name);
        for (bool forward : {false, true}) {
            const std::string playback = base + "/sample/" + (forward ? "forward" : "random");
            benchmark::RegisterBenchmark((playback + "/acl").c_str(), bm_acl, &k, forward);
            benchmark::RegisterBenchmark((playback + "/keyblend").c_str(), bm_keyblend, &k, forward);
        }
        benchmark::RegisterBenchmark((base + "/compress/acl").c_str(), bm_compress_acl, &k)->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark((base + "/compress/keyblend").c_str(), bm_compress_keyblend, &k)->Unit(benchmark::kMillisecond);
    }
    return kbbench::run(argc, argv, [](const std::string& name) -> std::string {
        const std::size_t slash = name.rfind('/');
        return name.substr(slash + 1) == "keyblend" ? name.substr(0, slash + 1) + "acl" : std::string();
    });
}
