// keyblend — definitions for skin.hpp. Included at the bottom of skin.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
//
// The skinning implementation, one concern a file (impl/skin/): streams.hpp (the job flattened,
// stream layouts), checks.hpp (what run() and validate() check), palette.hpp, dual_quaternion.hpp,
// and the kernels: lanes.hpp (moves between streams and lanes, scalar), joints.hpp (joint indices
// and weights), lanes_sse.hpp, lanes_avx2.hpp, kernel.hpp (one group), quads_avx512.hpp, run.hpp
// (ranges, layouts, entry points), entry.hpp (the jobs' run()).
#pragma once

#include "skin/checks.hpp"
#include "skin/palette.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#if KEYBLEND_KERNELS_HERE
#include "skin/entry.hpp"
#endif
#if defined(KEYBLEND_KERNELS_LIBRARY)
#include "kernels_api.hpp"
#endif

namespace keyblend {

// ---------------------------------------------------------------------------------------------
// Spans
// ---------------------------------------------------------------------------------------------

inline strided_span<const float> make_span(const std::vector<glm::vec3>& v) {
    return {v.empty() ? nullptr : &v[0].x, v.size(), sizeof(glm::vec3), sizeof(float)};
}
inline strided_span<float> make_span(std::vector<glm::vec3>& v) {
    return {v.empty() ? nullptr : &v[0].x, v.size(), sizeof(glm::vec3), sizeof(float)};
}
inline strided_span<const float> make_span(const std::vector<glm::vec4>& v) {
    return {v.empty() ? nullptr : &v[0].x, v.size(), sizeof(glm::vec4), sizeof(float)};
}
inline strided_span<float> make_span(std::vector<glm::vec4>& v) {
    return {v.empty() ? nullptr : &v[0].x, v.size(), sizeof(glm::vec4), sizeof(float)};
}
template <class T>
strided_span<const T> make_span(const std::vector<T>& v, std::size_t per_element) {
    KEYBLEND_ASSERT(per_element > 0, "make_span: per_element is 0");
    if (per_element == 0 || v.empty()) return {};
    return {v.data(), v.size() / per_element, per_element * sizeof(T), sizeof(T)};
}
template <class T>
strided_span<T> make_span(std::vector<T>& v, std::size_t per_element) {
    KEYBLEND_ASSERT(per_element > 0, "make_span: per_element is 0");
    if (per_element == 0 || v.empty()) return {};
    return {v.data(), v.size() / per_element, per_element * sizeof(T), sizeof(T)};
}
template <class S, class T>
strided_span<const T> member_span(const std::vector<S>& v, T S::*member) {
    if (v.empty()) return {};
    return {&(v[0].*member), v.size(), sizeof(S), sizeof(T)};
}

// ---------------------------------------------------------------------------------------------
// The jobs' entry points: the kernels compiled into this file, or the compiled kernels' (keyblend::kernels)
// ---------------------------------------------------------------------------------------------

namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

template <class Index>
status validate_linear_on(const skinning_job<Index>& j, const glm::mat4* palette, std::size_t palette_size) {
    checked c;
    if (status st = check_streams(j, palette, palette_size, sizeof(glm::mat4), c); !st) return st;
    for (std::size_t b = 0; b < palette_size; ++b)
        if (!is_finite(palette[b]))
            return make_error(errc::non_finite, "palette matrix " + std::to_string(b) + " is not finite", b);
    const lbs_args a = make_args(j, reinterpret_cast<const float*>(palette), palette_size, false, c);
    return check_influences<Index>(a, c.begin, c.end, palette_size, j.weight_tolerance);
}

template <class Index>
status validate_linear(const skinning_job<Index>& j) {
    if (!fused(j)) return validate_linear_on(j, j.palette.data(), j.palette.size());
    // The palette run() would compute (the products of this file's kernels: finite here is finite
    // there, the products differing at most in rounding).
    fused_palette palette;
    palette_job p;
    if (status st = check_fused(j, palette, p); !st) return st;
    fill_palette(p);
    return validate_linear_on(j, palette.data(), j.bones.size());
}

template <class Index>
status validate_dual_quaternion(const dual_quaternion_skinning_job<Index>& j) {
    checked c;
    if (status st = check_streams(j, j.palette.data(), j.palette.size(), sizeof(dq_bone), c); !st) return st;
    for (std::size_t b = 0; b < j.palette.size(); ++b) {
        const dq_bone& e = j.palette[b];
        if (!is_finite(e.rigid.real) || !is_finite(e.rigid.dual) || !is_finite(e.scale[0]) ||
            !is_finite(e.scale[1]) || !is_finite(e.scale[2]))
            return make_error(errc::non_finite, "palette entry " + std::to_string(b) + " is not finite", b);
    }
    const lbs_args a = make_args(j, nullptr, j.palette.size(), false, c);
    return check_influences<Index>(a, c.begin, c.end, j.palette.size(), j.weight_tolerance);
}

} // namespace skin
} // namespace KEYBLEND_ISA

namespace skin_entry {
inline namespace KEYBLEND_BUILD_NS {

#if defined(KEYBLEND_KERNELS_LIBRARY)
template <class Config, class Index>
status run_entry(const skinning_job<Index>& j) {
    if (status st = skin::check_config<Config>(j); !st) return st; // (fixed configurations: the same kernels)
    return kernels_api::run(j);
}
template <class Index>
status run_entry_dq(const dual_quaternion_skinning_job<Index>& j) {
    return kernels_api::run(j);
}
template <class Index>
std::size_t first_group_entry(const skinning_job<Index>& j, const skin::checked& c) {
    return kernels_api::first_group(j, c.begin);
}
#else
template <class Config, class Index>
status run_entry(const skinning_job<Index>& j) {
    return skin::run_linear<Config>(j);
}
template <class Index>
status run_entry_dq(const dual_quaternion_skinning_job<Index>& j) {
    return skin::run_dual_quaternion(j);
}
template <class Index>
std::size_t first_group_entry(const skinning_job<Index>& j, const skin::checked& c) {
    return skin::first_group_of(j, c);
}
#endif

template <class Job>
struct job_traits;

template <class Index>
struct job_traits<skinning_job<Index>> {
    static constexpr bool fuses = true; // the palette may be computed by the job
    static status check(const skinning_job<Index>& j, skin::checked& c) {
        return skin::check_streams(j, j.palette.data(), j.palette.size(), sizeof(glm::mat4), c);
    }
    /// Where run()'s first SIMD group starts in the checked job (see group_start).
    static std::size_t first_group(const skinning_job<Index>& j, const skin::checked& c) {
        return first_group_entry(j, c);
    }
    template <class Config>
    static status check_config(const skinning_job<Index>& j) {
        return skin::check_config<Config>(j);
    }
    template <class Config>
    static status run(const skinning_job<Index>& j) {
        return j.template run<Config>();
    }
};

template <class Index>
struct job_traits<dual_quaternion_skinning_job<Index>> {
    static constexpr bool fuses = false;
    static status check(const dual_quaternion_skinning_job<Index>& j, skin::checked& c) {
        return skin::check_streams(j, j.palette.data(), j.palette.size(), sizeof(dq_bone), c);
    }
    static std::size_t first_group(const dual_quaternion_skinning_job<Index>&, const skin::checked& c) {
        return c.begin; // one vertex at a time
    }
    template <class Config>
    static status check_config(const dual_quaternion_skinning_job<Index>&) {
        static_assert(std::is_same_v<Config, any_skinning>, "dual-quaternion jobs take no fixed_skinning");
        return {};
    }
    template <class Config>
    static status run(const dual_quaternion_skinning_job<Index>& j) {
        return j.run();
    }
};

/// skin_parallel of a fused skinning job: the palette computed once, by palette_job::run() (the
/// kernels a fused run() computes it with), into an aligned buffer the tasks then share.
template <class Config, class Index, class Executor>
status skin_parallel_fused(const skinning_job<Index>& job, std::size_t task_count, Executor&& executor) {
    skin::fused_palette palette;
    palette_job p;
    if (status st = skin::check_fused(job, palette, p); !st) return st;
    if (status st = p.run(); !st) return st;
    skinning_job<Index> base = job;
    base.palette = span<const glm::mat4>(palette.data(), job.bones.size());
    base.model = {};
    base.bones = {};
    return keyblend::skin_parallel<Config>(base, task_count, std::forward<Executor>(executor));
}

} // namespace KEYBLEND_BUILD_NS
} // namespace skin_entry
} // namespace impl

// ---------------------------------------------------------------------------------------------
// Palette
// ---------------------------------------------------------------------------------------------

inline status palette_job::validate() const { return impl::skin::check_palette(*this); }

#if !defined(KEYBLEND_KERNELS_LIBRARY)
inline status palette_job::run() const { return impl::skin::run_palette(*this); }
#endif

inline dual_quaternion make_dual_quaternion(const glm::quat& rotation, const glm::vec3& translation) {
    dual_quaternion d;
    d.real = rotation;
    // dual = 0.5 * (0, t) * real.
    const glm::quat t = make_quat(0.0f, translation.x, translation.y, translation.z) * rotation;
    d.dual = make_quat(0.5f * t.w, 0.5f * t.x, 0.5f * t.y, 0.5f * t.z);
    return d;
}

inline void build_dual_quaternion_palette(const std::vector<glm::mat4>& palette,
                                          std::vector<dq_bone>& out) {
    out.resize(palette.size());
    for (std::size_t b = 0; b < palette.size(); ++b) {
        const glm::mat4& m = palette[b];
        const glm::quat r = to_transform(m).rotation;
        out[b].rigid = make_dual_quaternion(r, glm::vec3(m[3]));
        out[b].scale = glm::transpose(glm::mat3_cast(r)) * glm::mat3(m);
    }
}

// ---------------------------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------------------------

inline namespace KEYBLEND_BUILD_NS {

template <class Config, class Job, class Executor>
status skin_parallel(const Job& job, std::size_t task_count, Executor&& executor) {
    if constexpr (impl::skin_entry::job_traits<Job>::fuses)
        if (impl::skin::fused(job))
            return impl::skin_entry::skin_parallel_fused<Config>(job, task_count, std::forward<Executor>(executor));
    impl::skin::checked c;
    if (status st = impl::skin_entry::job_traits<Job>::check(job, c); !st) return st;
    if (task_count == 0) task_count = 1;
    // Chunks of whole 64-vertex blocks from where the whole job's first SIMD group would start
    // (the first chunk also takes the few vertices before it): each chunk then starts a group
    // where the whole job would, so every vertex takes the same path, and gives the same bits,
    // whatever the number of tasks; and neighbouring chunks' packed outputs meet on cache-line
    // boundaries (64 * 12 bytes) when they are aligned where the groups start.
    const std::size_t total = c.end - c.begin;
    std::size_t chunk = (total + task_count - 1) / task_count;
    chunk = (chunk + 63) / 64 * 64;
    if (status st = impl::skin_entry::job_traits<Job>::template check_config<Config>(job); !st) return st;
    Job base = job;
    base.stores = c.streaming ? store_policy::streaming : store_policy::cached;
    const std::size_t first = std::min(c.end, impl::skin_entry::job_traits<Job>::first_group(base, c));
    const auto task = [&base, &c, chunk, first](std::size_t i) {
        Job part = base;
        const std::size_t b = i == 0 ? c.begin : std::min(c.end, first + i * chunk);
        part.range = vertex_range{b, std::min(c.end, first + (i + 1) * chunk)};
        // Cannot fail: the whole job passed the same checks.
        const status st = impl::skin_entry::job_traits<Job>::template run<Config>(part);
        KEYBLEND_ASSERT(st.has_value(), "skin_parallel: a chunk failed after the job passed");
        (void)st;
    };
    executor(task_count, task);
    return {};
}

} // namespace KEYBLEND_BUILD_NS

// ---------------------------------------------------------------------------------------------
// Preparing influences
// ---------------------------------------------------------------------------------------------


template <class JointIndex>
status compact_influences(std::size_t k, strided_span<JointIndex> joints, strided_span<float> weights,
                          strided_span<std::uint8_t> counts, std::size_t* max_count) {
    if (k == 0 || k > max_influences)
        return impl::make_error(errc::invalid_argument,
                                "compact_influences: k is " + std::to_string(k) + " (1 to 8)");
    const std::size_t n = joints.size;
    for (const impl::skin::span_info& s :
         {impl::skin::info("joints", joints, k), impl::skin::info("weights", weights, k),
          impl::skin::info("influence_counts", counts, 1)})
        if (status st = impl::skin::check_prepare_span(s, n); !st) return st;
    status out;
    std::size_t largest = 0;
    for (std::size_t v = 0; v < n; ++v) {
        std::size_t used = 0;
        for (std::size_t i = 0; i < k; ++i) {
            if (weights(v, i) == 0.0f) continue;
            const JointIndex j = joints(v, i);
            const float w = weights(v, i);
            joints(v, used) = j;
            weights(v, used) = w;
            ++used;
        }
        if (used == 0) {
            if (out)
                out = impl::make_error(errc::not_normalized,
                                       "vertex " + std::to_string(v) + ": every weight is zero", v);
            used = 1; // keeps its first joint, weight 0
        }
        for (std::size_t i = used; i < k; ++i) {
            joints(v, i) = JointIndex(0);
            weights(v, i) = 0.0f;
        }
        counts(v) = static_cast<std::uint8_t>(used);
        largest = std::max(largest, used);
    }
    if (max_count) *max_count = largest;
    return out;
}

inline status normalize_weights(std::size_t k, strided_span<float> weights,
                                strided_span<const std::uint8_t> counts) {
    if (k == 0 || k > max_influences)
        return impl::make_error(errc::invalid_argument,
                                "normalize_weights: k is " + std::to_string(k) + " (1 to 8)");
    const std::size_t n = weights.size;
    if (status st = impl::skin::check_prepare_span(impl::skin::info("weights", weights, k), n); !st)
        return st;
    if (status st = impl::skin::check_span(impl::skin::info("influence_counts", counts, 1), n, 1); !st)
        return st;
    status out;
    for (std::size_t v = 0; v < n; ++v) {
        const std::size_t c = counts.empty() ? k : std::min<std::size_t>(counts(v), k);
        float sum = 0.0f;
        for (std::size_t i = 0; i < c; ++i) sum += weights(v, i);
        if (!is_finite(sum) || sum == 0.0f) {
            if (out)
                out = impl::make_error(errc::not_normalized,
                                       "vertex " + std::to_string(v) + ": weights sum to " +
                                           impl::float_to_string(sum) + " and cannot be normalised",
                                       v);
            continue;
        }
        const float inv = 1.0f / sum;
        for (std::size_t i = 0; i < c; ++i) weights(v, i) *= inv;
    }
    return out;
}

inline const char* to_string(skinned_streams s) {
    switch (s) {
    case skinned_streams::positions: return "positions";
    case skinned_streams::positions_normals: return "positions_normals";
    case skinned_streams::positions_tangents: return "positions_tangents";
    case skinned_streams::positions_normals_tangents: return "positions_normals_tangents";
    }
    return "?";
}

} // namespace keyblend
