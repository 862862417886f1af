// keyblend — definitions for skin.hpp. Included at the bottom of skin.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "skin_simd.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#if KEYBLEND_SKIN_X86 && defined(_MSC_VER)
#include <intrin.h> // __cpuid (MSVC and clang-cl); GCC and Clang take inline assembly, not <cpuid.h>,
                    // whose __cpuid macro breaks <intrin.h> and the Windows headers included after it
#endif

// ---------------------------------------------------------------------------------------------
// The kernels: skin_kernels.hpp once per instruction set, each in a namespace of its own (see
// skin_isa.hpp). Static build: the widest the compiler targets, with the narrower lane types
// beside it (the tests compare them). KEYBLEND_RUNTIME_DISPATCH: SSE2 at the file's own flags,
// AVX2 + FMA + BMI2 and AVX-512 through target attributes.
// ---------------------------------------------------------------------------------------------
#if !KEYBLEND_SKIN_DISPATCH
#define KEYBLEND_SKIN_REGION KEYBLEND_SKIN_CAT3(kernels_, KEYBLEND_SKIN_STATIC_LANES, KEYBLEND_SKIN_CAT3(_, KEYBLEND_SKIN_LEVEL, ))
#define KEYBLEND_SKIN_R_SSE2 (KEYBLEND_SKIN_STATIC_LANES_NUMBER >= 1)
#define KEYBLEND_SKIN_R_AVX2 (KEYBLEND_SKIN_STATIC_LANES_NUMBER >= 2)
#define KEYBLEND_SKIN_R_AVX512 (KEYBLEND_SKIN_STATIC_LANES_NUMBER >= 3)
#if defined(__FMA__)
#define KEYBLEND_SKIN_R_FMA 1
#else
#define KEYBLEND_SKIN_R_FMA 0
#endif
#include "skin_kernels.hpp"
namespace keyblend { namespace impl { namespace skin { namespace kernels_static = KEYBLEND_SKIN_REGION; } } }
#undef KEYBLEND_SKIN_REGION
#undef KEYBLEND_SKIN_R_SSE2
#undef KEYBLEND_SKIN_R_AVX2
#undef KEYBLEND_SKIN_R_AVX512
#undef KEYBLEND_SKIN_R_FMA
#else
// SSE2 (and the scalar reference), at the file's flags.
#define KEYBLEND_SKIN_REGION KEYBLEND_SKIN_CAT3(kernels_dispatch_sse2_, KEYBLEND_SKIN_LEVEL, )
#define KEYBLEND_SKIN_R_SSE2 1
#define KEYBLEND_SKIN_R_AVX2 0
#define KEYBLEND_SKIN_R_AVX512 0
#if defined(__FMA__)
#define KEYBLEND_SKIN_R_FMA 1
#else
#define KEYBLEND_SKIN_R_FMA 0
#endif
#include "skin_kernels.hpp"
namespace keyblend { namespace impl { namespace skin { namespace kernels_sse2 = KEYBLEND_SKIN_REGION; } } }
#undef KEYBLEND_SKIN_REGION
#undef KEYBLEND_SKIN_R_FMA
// AVX2 + FMA (+ BMI2, which the joint extraction uses).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,bmi,bmi2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2")
#endif
#if KEYBLEND_SKIN_LEVEL_NUMBER >= 4
#define KEYBLEND_SKIN_REGION kernels_dispatch_avx2_v4
#else
#define KEYBLEND_SKIN_REGION kernels_dispatch_avx2_v3
#endif
#undef KEYBLEND_SKIN_R_AVX2
#define KEYBLEND_SKIN_R_AVX2 1
#define KEYBLEND_SKIN_R_FMA 1
#include "skin_kernels.hpp"
namespace keyblend { namespace impl { namespace skin { namespace kernels_avx2 = KEYBLEND_SKIN_REGION; } } }
#undef KEYBLEND_SKIN_REGION
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
// AVX-512 F/VL/BW/DQ.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2")
#endif
#define KEYBLEND_SKIN_REGION kernels_dispatch_avx512_v4
#undef KEYBLEND_SKIN_R_AVX512
#define KEYBLEND_SKIN_R_AVX512 1
#include "skin_kernels.hpp"
namespace keyblend { namespace impl { namespace skin { namespace kernels_avx512 = KEYBLEND_SKIN_REGION; } } }
#undef KEYBLEND_SKIN_REGION
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#undef KEYBLEND_SKIN_R_SSE2
#undef KEYBLEND_SKIN_R_AVX2
#undef KEYBLEND_SKIN_R_AVX512
#undef KEYBLEND_SKIN_R_FMA
#endif

namespace keyblend {

namespace impl {
namespace skin {
inline namespace KEYBLEND_SKIN_ABI {
/// palette_job's checks.
inline status check_palette(const palette_job& job) {
    const std::size_t n = job.bones.size();
    if ((n && !job.bones.data()) || (job.model.size() && !job.model.data()) || (job.output.size() && !job.output.data()))
        return make_error(errc::invalid_argument, "palette_job: a span has null data but a size other than 0");
    if (job.output.size() < n)
        return make_error(errc::size_mismatch, "palette_job: " + std::to_string(n) + " bones but room for " +
                                                   std::to_string(job.output.size()) + " palette matrices");
    for (std::size_t b = 0; b < n; ++b)
        if (job.bones[b].joint >= job.model.size())
            return make_error(errc::out_of_range,
                              "palette_job: bone " + std::to_string(b) + " '" + job.bones[b].name + "': joint " +
                                  std::to_string(job.bones[b].joint) + " is outside the pose (" +
                                  std::to_string(job.model.size()) + " joints)",
                              b);
    return {};
}

/// out = a * b for 4x4 matrices (any, not only affine): column c of the product is a's columns
/// weighted by column c of b, summed left to right as glm's operator* does. With SSE each column
/// is four broadcasts, four multiplies and three adds on a's columns held in registers, 3-4 times
/// faster than GLM's scalar product (glm's own SIMD path needs GLM_FORCE_INTRINSICS); with AVX2
/// two columns at a time: a's columns in both halves of a register, b's two columns loaded as one
/// and their elements spread by in-lane shuffles (37 products: 105 -> 92 ns on Zen 4). The
/// results equal `a * b` within float rounding (the compiler may contract either into FMAs).
inline void multiply_mat4(const glm::mat4& a, const glm::mat4& b, glm::mat4& out) {
#if KEYBLEND_SKIN_STATIC_LANES_NUMBER >= 2
    const float* pa = &a[0][0];
    const float* pb = &b[0][0];
    float* po = &out[0][0];
    const auto both = [pa](int c) { return _mm256_broadcast_ps(reinterpret_cast<const __m128*>(pa + 4 * c)); };
    const __m256 a0 = both(0), a1 = both(1), a2 = both(2), a3 = both(3);
    for (int c = 0; c < 4; c += 2) {
        const __m256 col = _mm256_loadu_ps(pb + 4 * c); // columns c and c + 1
        __m256 r = _mm256_add_ps(_mm256_mul_ps(a0, _mm256_permute_ps(col, 0x00)),
                                 _mm256_mul_ps(a1, _mm256_permute_ps(col, 0x55)));
        r = _mm256_add_ps(r, _mm256_mul_ps(a2, _mm256_permute_ps(col, 0xAA)));
        r = _mm256_add_ps(r, _mm256_mul_ps(a3, _mm256_permute_ps(col, 0xFF)));
        _mm256_storeu_ps(po + 4 * c, r);
    }
#elif KEYBLEND_SKIN_STATIC_LANES_NUMBER >= 1
    const float* pa = &a[0][0];
    const float* pb = &b[0][0];
    float* po = &out[0][0];
    const __m128 a0 = _mm_loadu_ps(pa), a1 = _mm_loadu_ps(pa + 4), a2 = _mm_loadu_ps(pa + 8),
                 a3 = _mm_loadu_ps(pa + 12);
    for (int c = 0; c < 4; ++c) {
        const float* col = pb + 4 * c;
        __m128 r = _mm_add_ps(_mm_mul_ps(a0, _mm_set1_ps(col[0])), _mm_mul_ps(a1, _mm_set1_ps(col[1])));
        r = _mm_add_ps(r, _mm_mul_ps(a2, _mm_set1_ps(col[2])));
        r = _mm_add_ps(r, _mm_mul_ps(a3, _mm_set1_ps(col[3])));
        _mm_storeu_ps(po + 4 * c, r);
    }
#else
    out = a * b;
#endif
}

/// The palette products, the job's checks made.
inline void fill_palette(const palette_job& job) {
    for (std::size_t b = 0; b < job.bones.size(); ++b)
        multiply_mat4(job.model[job.bones[b].joint], job.bones[b].offset, job.output[b]);
}
} // namespace KEYBLEND_SKIN_ABI
} // namespace skin
} // namespace impl


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
// Palette
// ---------------------------------------------------------------------------------------------

inline status palette_job::validate() const { return impl::skin::check_palette(*this); }

inline status palette_job::run() const {
    if (status st = impl::skin::check_palette(*this); !st) return st;
    impl::skin::fill_palette(*this);
    return {};
}

// ---------------------------------------------------------------------------------------------
// Checks shared by the jobs
// ---------------------------------------------------------------------------------------------

namespace impl {
namespace skin {
inline namespace KEYBLEND_SKIN_ABI {

/// One span of a job, type-erased for the checks.
struct span_info {
    const char* name = "";
    std::uintptr_t data = 0;
    std::size_t size = 0;
    std::size_t stride = 0;
    std::size_t cs = 0;
    std::size_t components = 1;
    std::size_t element = 1; ///< bytes of one component
    bool given = false;

    /// Bytes from an element's first component to the end of its last.
    std::size_t footprint() const { return (components - 1) * cs + element; }
    std::uintptr_t end() const {
        return size == 0 ? data : data + (size - 1) * stride + footprint();
    }
};

template <class T>
span_info info(const char* name, const strided_span<T>& s, std::size_t components) {
    span_info i;
    i.name = name;
    i.data = reinterpret_cast<std::uintptr_t>(s.data);
    i.size = s.size;
    i.stride = s.stride;
    i.cs = s.component_stride;
    i.components = components;
    i.element = sizeof(T);
    i.given = !s.empty();
    return i;
}

/// Null data, size, alignment, and strides that make elements or components overlap.
/// What is wrong with a span, if anything: the checks alone, cheap (run() makes them on every
/// call; a split mesh's small jobs would otherwise spend much of their time building results).
enum class span_fault : unsigned char { none, null_data, size, misaligned, components_overlap, vertices_overlap };

inline span_fault fault_of(const span_info& s, std::size_t n, std::size_t alignment) {
    if (!s.given) return span_fault::none;
    if (!s.data) return span_fault::null_data;
    if (s.size != n) return span_fault::size;
    // (alignment: the element size, 1, 2 or 4 bytes)
    if ((s.data | s.stride | s.cs) & (alignment - 1)) return span_fault::misaligned;
    if (s.components > 1 && s.cs < s.element) return span_fault::components_overlap;
    if (n > 1) {
        const bool interleaved = s.stride >= s.footprint();
        const bool planar = s.components > 1 && s.stride >= s.element && s.cs >= (n - 1) * s.stride + s.element;
        if (!interleaved && !planar) return span_fault::vertices_overlap;
    }
    return span_fault::none;
}

/// Null data, size, alignment, and strides that make elements or components overlap.
inline status check_span(const span_info& s, std::size_t n, std::size_t alignment) {
    const std::string name(s.name);
    switch (fault_of(s, n, alignment)) {
    case span_fault::none: return {};
    case span_fault::null_data:
        return make_error(errc::invalid_argument, name + ": null data for " + std::to_string(s.size) + " elements");
    case span_fault::size:
        return make_error(errc::size_mismatch, name + " has " + std::to_string(s.size) + " elements, the mesh " +
                                                   std::to_string(n) + " vertices (in_positions.size)");
    case span_fault::misaligned:
        return make_error(errc::invalid_argument, name + ": data, stride or component stride not a multiple of " +
                                                      std::to_string(alignment) + " bytes (misaligned)");
    case span_fault::components_overlap:
        return make_error(errc::invalid_argument, name + ": component stride " + std::to_string(s.cs) +
                                                      " is too small: components overlap (" +
                                                      std::to_string(s.element) + " bytes each)");
    case span_fault::vertices_overlap:
        return make_error(errc::invalid_argument, name + ": stride " + std::to_string(s.stride) +
                                                      " is too small: vertices overlap (one spans " +
                                                      std::to_string(s.footprint()) + " bytes)");
    }
    return {};
}

/// True when an output may write bytes that `x` reads or writes. Byte-disjoint fields of one
/// interleaved buffer (same stride, element footprints apart) do not overlap.
inline bool overlaps(const span_info& out, const span_info& x) {
    if (!out.given || !x.given || out.size == 0 || x.size == 0) return false;
    if (out.end() <= x.data || x.end() <= out.data) return false;
    const std::size_t s = out.stride;
    if (s == 0 || x.stride != s || out.footprint() > s || x.footprint() > s) return true;
    // Both periodic with period s: compare the footprints' positions within one period.
    const std::size_t r = out.data <= x.data ? (x.data - out.data) % s : (s - (out.data - x.data) % s) % s;
    return r < out.footprint() || r + x.footprint() > s;
}

inline bool same_stream(const span_info& a, const span_info& b) {
    return a.data == b.data && a.stride == b.stride && a.cs == b.cs && a.size == b.size;
}

/// A job's nine spans (in_positions, out_positions, in_normals, out_normals, in_tangents,
/// out_tangents, joints, weights, influence_counts), for the checks.
template <class Index>
KEYBLEND_SKIN_INLINE void span_infos(const skinning_streams<Index>& j, span_info (&out)[9]) {
    const std::size_t k = j.influences;
    const std::size_t stored = j.last == last_weight::implied ? k - 1 : k;
    out[0] = info("in_positions", j.in_positions, 3);
    out[1] = info("out_positions", j.out_positions, 3);
    out[2] = info("in_normals", j.in_normals, 3);
    out[3] = info("out_normals", j.out_normals, 3);
    out[4] = info("in_tangents", j.in_tangents, 4);
    out[5] = info("out_tangents", j.out_tangents, 4);
    out[6] = info("joints", j.joints, k);
    out[7] = info("weights", j.weights, stored ? stored : 1);
    out[8] = info("influence_counts", j.influence_counts, 1);
}

/// The exact aliasing test for the pairs whose byte ranges meet (bit x of meets[i]: output 2i + 1
/// against span x, x = 9 the palette), which tells byte-disjoint fields of one interleaved buffer
/// apart; the error names the first pair that truly overlaps. Out of line: rare (in-place jobs,
/// interleaved buffers), and its messages would otherwise weigh on every run()'s code.
template <class Index>
KEYBLEND_SKIN_NOINLINE status alias_fault(const skinning_streams<Index>& j, const void* palette,
                                          std::size_t palette_size, std::size_t palette_element,
                                          const unsigned (&meets)[3]) {
    span_info spans[9];
    span_infos(j, spans);
    span_info pal;
    pal.name = "palette";
    pal.data = reinterpret_cast<std::uintptr_t>(palette);
    pal.size = palette_size;
    pal.stride = pal.element = palette_element;
    pal.given = true;
    for (int i = 0; i < 3; ++i) {
        const int o = 2 * i + 1;
        const span_info& out_span = spans[o];
        for (int x = 0; x < 10; ++x) {
            if (!(meets[i] >> x & 1u)) continue;
            const span_info& other = x < 9 ? spans[x] : pal;
            if (x == o - 1 && same_stream(out_span, other)) continue; // in place
            if (!overlaps(out_span, other)) continue;
            if (x == 9)
                return make_error(errc::invalid_argument, std::string(out_span.name) + " overlaps the palette");
            return make_error(errc::invalid_argument,
                              std::string(out_span.name) + " overlaps " + other.name +
                                  (x == o - 1 ? " without being the same stream (in-place "
                                                "skinning needs the same data and strides)"
                                              : ""));
        }
    }
    return {};
}

/// A job's spans, checked (O(1)), with its resolved range.
struct checked {
    std::size_t n = 0;
    std::size_t begin = 0;
    std::size_t end = 0;
    bool streaming = false;
};

template <class Index>
status check_streams(const skinning_streams<Index>& j, const void* palette, std::size_t palette_size,
                     std::size_t palette_element, checked& out) {
    const std::size_t k = j.influences;
    if (k == 0)
        return make_error(errc::invalid_argument, "influences is 0: every vertex needs at least one");
    if (k > max_influences)
        return make_error(errc::invalid_argument, "influences is " + std::to_string(k) +
                                                      ", more than max_influences (8)");
    if (!palette || palette_size == 0)
        return make_error(errc::invalid_argument, "the palette is empty");
    const std::size_t n = j.in_positions.size; // 0 when not given: nothing to skin
    if (n > 0 && j.out_positions.empty())
        return make_error(errc::invalid_argument, "out_positions: required");
    if (j.in_normals.empty() != j.out_normals.empty())
        return make_error(errc::size_mismatch, "normals given on one side only (in_normals and "
                                               "out_normals go together)");
    if (j.in_tangents.empty() != j.out_tangents.empty())
        return make_error(errc::size_mismatch, "tangents given on one side only (in_tangents and "
                                               "out_tangents go together)");
    const std::size_t stored = j.last == last_weight::implied ? k - 1 : k;
    if (j.joints.empty() && n > 0)
        return make_error(errc::invalid_argument, "joints: required");
    if (stored > 0 && j.weights.empty() && n > 0)
        return make_error(errc::invalid_argument,
                          "weights: required (" + std::to_string(stored) + " per vertex)");
    if (stored == 0 && !j.weights.empty())
        return make_error(errc::size_mismatch,
                          "weights given for one influence with last_weight::implied (none are read)");

    // Each span's checks and byte range, inline: run() makes these checks on every call (a mesh
    // split into small jobs pays them per job), so nothing is built for the messages unless a
    // check fails. Aliasing: outputs against everything else (inputs, the other outputs, the
    // palette); only byte ranges that meet take the exact test.
    constexpr int count = 10; // the 9 spans (span_infos' order), then the palette
    std::uintptr_t lo[count], hi[count];
    unsigned used = 1u << 9;
    const auto fine = [&](int x, const auto& span, std::size_t components) {
        const span_info i = info("", span, components);
        lo[x] = i.data;
        hi[x] = i.end();
        used |= unsigned(i.given && i.size != 0) << x;
        return fault_of(i, n, i.element) == span_fault::none;
    };
    const bool all_fine = fine(0, j.in_positions, 3) && fine(1, j.out_positions, 3) && fine(2, j.in_normals, 3) &&
                          fine(3, j.out_normals, 3) && fine(4, j.in_tangents, 4) && fine(5, j.out_tangents, 4) &&
                          fine(6, j.joints, k) && fine(7, j.weights, stored ? stored : 1) &&
                          fine(8, j.influence_counts, 1);
    if (!all_fine) {
        span_info spans[9];
        span_infos(j, spans);
        for (const span_info& s : spans)
            if (fault_of(s, n, s.element) != span_fault::none) return check_span(s, n, s.element);
    }
    lo[9] = reinterpret_cast<std::uintptr_t>(palette);
    hi[9] = lo[9] + palette_size * palette_element;
    unsigned meets[3] = {0, 0, 0}, any = 0;
    for (int i = 0; i < 3; ++i) {
        const int o = 2 * i + 1;
        if (!(used >> o & 1u)) continue;
        unsigned m = 0;
        for (int x = 0; x < count; ++x) m |= unsigned(lo[x] < hi[o] && lo[o] < hi[x]) << x;
        // Not itself, not an unused span, not an output before it (that pair was checked then).
        meets[i] = m & used & ~(1u << o) & ~(0x2Au & ((1u << o) - 1));
        any |= meets[i];
    }
    if (any)
        if (status st = alias_fault(j, palette, palette_size, palette_element, meets); !st) return st;

    out.n = n;
    out.begin = j.range.begin;
    out.end = j.range.end == vertex_range::all ? n : j.range.end;
    if (out.end > n || out.begin > out.end)
        return make_error(errc::invalid_argument,
                          "range [" + std::to_string(j.range.begin) + ", " +
                              (j.range.end == vertex_range::all ? std::string("all")
                                                                : std::to_string(j.range.end)) +
                              ") is not within the mesh's " + std::to_string(n) + " vertices");
    std::size_t bytes = 12;
    if (!j.out_normals.empty()) bytes += 12;
    if (!j.out_tangents.empty()) bytes += 16;
    out.streaming = j.stores == store_policy::streaming ||
                    (j.stores == store_policy::automatic &&
                     (out.end - out.begin) * bytes >= streaming_store_threshold);
    return {};
}

inline in_stream make_in(const strided_span<const float>& s, std::size_t components) {
    in_stream r;
    r.data = reinterpret_cast<const unsigned char*>(s.data);
    r.stride = s.stride;
    r.cs = s.component_stride;
    r.kind = classify(s.stride, s.component_stride, components);
    return r;
}

inline out_stream make_out(const strided_span<float>& s, std::size_t components, bool streaming) {
    out_stream r;
    r.data = reinterpret_cast<unsigned char*>(s.data);
    r.stride = s.stride;
    r.cs = s.component_stride;
    r.kind = classify(s.stride, s.component_stride, components);
    r.streaming = streaming && r.kind == layout::packed && r.data; // alignment: run_lbs
    return r;
}

/// The family of a CPU from CPUID leaf 1's eax: the base family, plus the extended one when the
/// base is 0Fh.
constexpr unsigned cpuid_family(unsigned eax) {
    return ((eax >> 8) & 0xFu) == 0xFu ? 0xFu + ((eax >> 20) & 0xFFu) : (eax >> 8) & 0xFu;
}

/// CPUID leaf `leaf` (subleaf 0): eax, ebx, ecx, edx. x86 only.
#if KEYBLEND_SKIN_X86 && (defined(_MSC_VER) || defined(__GNUC__) || defined(__clang__))
inline void cpuid(unsigned leaf, unsigned (&r)[4]) {
#if defined(_MSC_VER)
    int x[4];
    __cpuidex(x, int(leaf), 0);
    for (int i = 0; i < 4; ++i) r[i] = unsigned(x[i]);
#else
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(0u));
#endif
}
#endif

/// True on AMD family 1Ah (Zen 5) and later, whose 512-bit floating-point operations run at full
/// width on the parts measured (an EPYC of model 02h); Zen 4 (family 19h) runs each as two
/// 256-bit halves. (Zen 5's mobile parts, whose AVX-512 is said to run on 256-bit paths, are
/// included unmeasured: KEYBLEND_SKIN_QUADS overrides.)
inline bool cpu_full_width_512() {
#if KEYBLEND_SKIN_X86 && (defined(_MSC_VER) || defined(__GNUC__) || defined(__clang__))
    unsigned r[4];
    cpuid(0, r);
    const bool amd = r[1] == 0x68747541u && r[3] == 0x69746e65u && r[2] == 0x444d4163u; // "AuthenticAMD"
    if (!amd || r[0] < 1) return false;
    cpuid(1, r);
    return cpuid_family(r[0]) >= 0x1Au;
#else
    return false;
#endif
}

/// Whether the AVX-512 kernels skin 2 to 4 slots (packed streams, no tangents) as quads of one
/// vertex per 128-bit lane, each vertex's matrix blended whole in one 512-bit register (aos_group),
/// rather than as eight lanes of floats: 1 yes, 0 no, -1 not decided yet. Decided at the first
/// run() from the CPU, unless the environment variable KEYBLEND_SKIN_QUADS is "0" or "1": quads
/// where 512-bit operations are known to run at full width (Zen 5: 17-25% faster at 2 and 4
/// influences), eight lanes elsewhere (measured on Zen 4, which splits each 512-bit operation in
/// two: 0-4% more time with quads, before their loads and stores lost their masks). Both give the
/// same values (the same bits, up to the sign of a zero where slots of weight 0 are left out).
/// Tests store 0 or 1 to compare the two.
inline std::atomic<int> quads_choice{-1};

inline bool prefer_quads() {
    int q = quads_choice.load(std::memory_order_relaxed);
    if (q < 0) {
        q = cpu_full_width_512() ? 1 : 0;
        if (const char* env = std::getenv("KEYBLEND_SKIN_QUADS"))
            if ((env[0] == '0' || env[0] == '1') && env[1] == '\0') q = env[0] - '0';
        int expected = -1; // a test's choice in between wins
        quads_choice.compare_exchange_strong(expected, q, std::memory_order_relaxed);
        q = quads_choice.load(std::memory_order_relaxed);
    }
    return q == 1;
}

template <class Index>
lbs_args make_args(const skinning_streams<Index>& j, const float* palette, std::size_t palette_size,
                   bool inverse_transpose, const checked& c) {
    lbs_args a;
    a.palette = palette;
    a.last_bone = palette_size - 1;
    a.k = j.influences;
    a.implied = j.last == last_weight::implied;
    a.inverse_transpose = inverse_transpose;
    a.joints = reinterpret_cast<const unsigned char*>(j.joints.data);
    a.joint_stride = j.joints.stride;
    a.joint_cs = j.joints.component_stride;
    if (j.weights.data) {
        a.weights = reinterpret_cast<const unsigned char*>(j.weights.data);
        a.weight_stride = j.weights.stride;
        a.weight_cs = j.weights.component_stride;
    } else { // one implied weight: never read, but the SIMD paths load something
        a.weights = reinterpret_cast<const unsigned char*>(no_weights);
        a.weight_stride = 0;
        a.weight_cs = sizeof(float);
    }
    if (!j.influence_counts.empty()) {
        a.counts = j.influence_counts.data;
        a.count_stride = j.influence_counts.stride;
    }
    a.pos = make_in(j.in_positions, 3);
    a.out_pos = make_out(j.out_positions, 3, c.streaming);
    if (!j.in_normals.empty()) {
        a.nrm = make_in(j.in_normals, 3);
        a.out_nrm = make_out(j.out_normals, 3, c.streaming);
    }
    if (!j.in_tangents.empty()) {
        a.tan = make_in(j.in_tangents, 4);
        a.out_tan = make_out(j.out_tangents, 4, false);
    }
    const auto packed = [](layout in, layout out, const void* data) {
        return !data || (in == layout::packed && out == layout::packed);
    };
    a.simple = !inverse_transpose && packed(a.pos.kind, a.out_pos.kind, a.pos.data) &&
               packed(a.nrm.kind, a.out_nrm.kind, a.nrm.data) && packed(a.tan.kind, a.out_tan.kind, a.tan.data);
    a.scaled = a.simple;
    // Groups whose last slots are all weight 0 (the loader's layout, for a mesh whose vertices
    // mostly have fewer influences than its k) skip them. Whether to look, per group, is decided
    // from 8 vertices spread over the whole mesh (finding out costs a group K more loads, and
    // the kernel choosing among K blends is slower: 5-8% with every slot used, Zen 4): the same
    // for every range, split and kernel of the mesh.
    const std::size_t n = j.in_positions.size;
    if (!a.implied && a.k >= 2 && a.k <= 4 && n >= 8) {
        bool zero = false; // a local: a store to `a` in the loop costs each step a store-forward
        for (std::size_t i = 0; i < 8; ++i) zero |= stored_weight(a, i * (n / 8), a.k - 1) == 0.0f;
        a.skip_zero_slots = zero;
    }
    a.quads = a.k >= 2 && a.k <= 4 && a.simple && prefer_quads();
    return a;
}

/// The per-vertex checks of validate() over [begin, end).
template <class Index>
status check_influences(const lbs_args& a, std::size_t begin, std::size_t end,
                        std::size_t palette_size, float tolerance) {
    for (std::size_t v = begin; v < end; ++v) {
        // (Messages are built only on failure: this loop runs over every vertex of a mesh.)
        const auto where = [v] { return "vertex " + std::to_string(v); };
        std::size_t c = a.k;
        if (a.counts) {
            c = a.counts[v * a.count_stride];
            if (c == 0)
                return make_error(errc::invalid_argument, where() + ": zero influences (count 0)", v);
            if (c > a.k)
                return make_error(errc::invalid_argument,
                                  where() + ": influence count " + std::to_string(c) +
                                      " is more than the " + std::to_string(a.k) + " slots",
                                  v);
        }
        float sum = 0.0f;
        for (std::size_t i = 0; i < c; ++i) {
            const auto slot = [&] { return where() + ", influence " + std::to_string(i); };
            const std::size_t jnt = raw_joint<Index>(a, v, i);
            if (jnt >= palette_size)
                return make_error(errc::out_of_range,
                                  slot() + ": joint index " + std::to_string(jnt) +
                                      " is outside the palette (" + std::to_string(palette_size) +
                                      " matrices)",
                                  v);
            if (a.implied && i + 1 == c) break;
            const float w = stored_weight(a, v, i);
            if (!is_finite(w))
                return make_error(errc::non_finite, slot() + ": weight is " + float_to_string(w), v);
            sum += w;
        }
        // Slots past the count: never read one by one, but the SIMD paths blend a block's largest
        // count, so their weights must be zero (compact_influences writes them so).
        for (std::size_t i = c; i < a.k && !a.implied; ++i) {
            const float w = stored_weight(a, v, i);
            if (w != 0.0f)
                return make_error(errc::invalid_argument,
                                  where() + ", influence " + std::to_string(i) + ": weight " + float_to_string(w) +
                                      " in a slot past the vertex's count (" + std::to_string(c) +
                                      "); unused slots must hold weight 0",
                                  v);
        }
        if (a.implied) {
            if (1.0f - sum < -tolerance)
                return make_error(errc::not_normalized,
                                  where() + ": stored weights sum to " + float_to_string(sum) +
                                      ", so the implied last weight would be " +
                                      float_to_string(1.0f - sum),
                                  v);
        } else if (!(std::fabs(sum - 1.0f) <= tolerance)) {
            return make_error(errc::not_normalized,
                              where() + ": weights sum to " + float_to_string(sum) + ", not 1 (tolerance " +
                                  float_to_string(tolerance) + ")",
                              v);
        }
    }
    return {};
}

// ---------------------------------------------------------------------------------------------
// Choosing the kernels
// ---------------------------------------------------------------------------------------------

/// run()'s and validate()'s default template argument: its type (in this file's ABI namespace)
/// makes each file's `job.run()` an instantiation of its own.
struct abi_tag {};

/// What the kernels of a run know at compile time: K slots (0: any), Implied (-1: the job says),
/// Streams (1 positions | 2 normals | 4 tangents; -1: the job says).
template <class Config>
struct config_traits {
    static constexpr int k = 0, implied = -1, streams = -1;
};
template <std::size_t K, skinned_streams S, last_weight L>
struct config_traits<fixed_skinning<K, S, L>> {
    static constexpr int k = int(K), implied = L == last_weight::implied ? 1 : 0, streams = int(S);
};

/// A fixed_skinning run's job must be what the configuration says.
template <class Config, class Index>
status check_config(const skinning_streams<Index>& j) {
    using t = config_traits<Config>;
    if constexpr (t::k > 0) {
        const auto wrong = [](const std::string& what) {
            return make_error(errc::invalid_argument,
                              "fixed_skinning<" + std::to_string(t::k) + ", " + to_string(skinned_streams(t::streams)) +
                                  (t::implied ? ", implied" : ", stored") + ">: " + what);
        };
        if (j.influences != std::size_t(t::k))
            return wrong("the job has " + std::to_string(j.influences) + " influences");
        if ((j.last == last_weight::implied) != (t::implied == 1))
            return wrong(std::string("the job's last weight is ") +
                         (j.last == last_weight::implied ? "implied" : "stored"));
        if (!j.in_normals.empty() != ((t::streams & 2) != 0))
            return wrong(j.in_normals.empty() ? "the job has no normals" : "the job has normals");
        if (!j.in_tangents.empty() != ((t::streams & 4) != 0))
            return wrong(j.in_tangents.empty() ? "the job has no tangents" : "the job has tangents");
        if (!j.influence_counts.empty() && t::implied == 1)
            return wrong("influence_counts with an implied last weight (use run() for that combination)");
    }
    return {};
}

#if KEYBLEND_SKIN_DISPATCH
/// True when the CPU runs the kernels of `isa` (SSE2 and scalar: this program runs at all).
inline bool cpu_runs(simd_isa isa) {
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                      __builtin_cpu_supports("bmi2");
    switch (isa) {
    case simd_isa::scalar:
    case simd_isa::sse2: return true;
    case simd_isa::avx2: return avx2;
    case simd_isa::avx512:
        return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
    }
    return false;
}

/// The kernels run() uses (a simd_isa), -1 until the first use.
inline std::atomic<int> chosen_isa{-1};

/// The widest kernels the CPU runs, or KEYBLEND_SKIN_ISA's when it names kernels the CPU runs.
inline simd_isa choose_isa() {
    simd_isa isa = simd_isa::sse2;
    for (simd_isa wider : {simd_isa::avx2, simd_isa::avx512})
        if (cpu_runs(wider)) isa = wider;
    if (const char* env = std::getenv("KEYBLEND_SKIN_ISA")) {
        for (simd_isa x : {simd_isa::scalar, simd_isa::sse2, simd_isa::avx2, simd_isa::avx512})
            if (std::string(env) == to_string(x) && cpu_runs(x)) isa = x;
    }
    int expected = -1; // a force_skinning_isa in between wins
    chosen_isa.compare_exchange_strong(expected, int(isa), std::memory_order_relaxed);
    return simd_isa(chosen_isa.load(std::memory_order_relaxed));
}

inline simd_isa active_isa() {
    const int c = chosen_isa.load(std::memory_order_relaxed);
    return c >= 0 ? simd_isa(c) : choose_isa();
}

inline bool isa_available(simd_isa isa) { return cpu_runs(isa); }
#else
constexpr simd_isa active_isa() { return kernels_static::isa; }

/// A static build runs its widest kernels and the scalar reference (only those are compiled; a
/// dispatch build has the others).
constexpr bool isa_available(simd_isa isa) { return isa == simd_isa::scalar || isa == kernels_static::isa; }
#endif

/// Runs a checked job's range on the kernels of `isa` (which isa_available). The lane type
/// decides everything else.
template <class Index, int K, int Implied, int Streams>
void run_kernels(simd_isa isa, const lbs_args& a, std::size_t begin, std::size_t end, std::size_t n,
                 std::size_t palette_size) {
#if KEYBLEND_SKIN_DISPATCH
    switch (isa) {
    case simd_isa::avx512:
        return kernels_avx512::run_job<kernels_avx512::widest, Index, K, Implied, Streams>(a, begin, end, n, palette_size);
    case simd_isa::avx2:
        return kernels_avx2::run_job<kernels_avx2::f8, Index, K, Implied, Streams>(a, begin, end, n, palette_size);
    case simd_isa::sse2:
        return kernels_sse2::run_job<kernels_sse2::f4, Index, K, Implied, Streams>(a, begin, end, n, palette_size);
    case simd_isa::scalar:
        return kernels_sse2::run_job<kernels_sse2::f1, Index, K, Implied, Streams>(a, begin, end, n, palette_size);
    }
#else
    (void)isa;
    kernels_static::run_job<kernels_static::widest, Index, K, Implied, Streams>(a, begin, end, n, palette_size);
#endif
}

/// Where run()'s first SIMD group starts (skin_parallel's chunks start there too).
inline std::size_t first_group_of(const lbs_args& a, std::size_t begin) {
#if KEYBLEND_SKIN_DISPATCH
    switch (active_isa()) {
    case simd_isa::avx512: return kernels_avx512::first_group<kernels_avx512::widest>(a, begin);
    case simd_isa::avx2: return kernels_avx2::first_group<kernels_avx2::f8>(a, begin);
    case simd_isa::sse2: return kernels_sse2::first_group<kernels_sse2::f4>(a, begin);
    case simd_isa::scalar: return begin;
    }
    return begin;
#else
    return kernels_static::first_group<kernels_static::widest>(a, begin);
#endif
}

/// Runs a linear-blend job with the kernels of `isa` (tests compare them): in a static build its
/// widest or the scalar ones, with dispatch any kernels the CPU runs. Errors as run(), and
/// errc::unsupported for kernels this build or CPU does not have.
template <class Index>
status run_linear_with(simd_isa isa, const skinning_job<Index>& j) {
    checked c;
    if (status st = check_streams(j, j.palette.data(), j.palette.size(), sizeof(glm::mat4), c); !st) return st;
    if (!isa_available(isa))
        return make_error(errc::unsupported, std::string("no ") + to_string(isa) + " kernels here");
    if (c.begin == c.end) return {};
    const lbs_args a = make_args(j, reinterpret_cast<const float*>(j.palette.data()), j.palette.size(),
                                 j.normals == normal_transform::inverse_transpose, c);
#if KEYBLEND_SKIN_DISPATCH
    run_kernels<Index, 0, -1, -1>(isa, a, c.begin, c.end, c.n, j.palette.size());
#else
    namespace ks = kernels_static;
    if (isa == simd_isa::scalar)
        ks::run_job<ks::f1, Index>(a, c.begin, c.end, c.n, j.palette.size());
    else
        ks::run_job<ks::widest, Index>(a, c.begin, c.end, c.n, j.palette.size());
#endif
    return {};
}

// ---------------------------------------------------------------------------------------------
// Dual-quaternion skinning (scalar)
// ---------------------------------------------------------------------------------------------

/// `q v q*` for a unit quaternion q.
inline glm::vec3 rotate(const glm::quat& q, const glm::vec3& v) {
    const glm::vec3 r(q.x, q.y, q.z);
    return v + 2.0f * glm::cross(r, glm::cross(r, v) + q.w * v);
}

/// cofactor(A) n / det(A), or cofactor(A) n when det(A) == 0 (see normal_transform).
inline glm::vec3 inverse_transpose_times(const glm::mat3& a, const glm::vec3& n) {
    const glm::vec3 k0 = glm::cross(a[1], a[2]), k1 = glm::cross(a[2], a[0]), k2 = glm::cross(a[0], a[1]);
    const float det = glm::dot(a[0], k0);
    const glm::vec3 r = n.x * k0 + n.y * k1 + n.z * k2;
    return det == 0.0f ? r : r * (1.0f / det);
}

template <class Index>
void run_dqs(const lbs_args& a, const dq_bone* palette, std::size_t begin, std::size_t end) {
    for (std::size_t v = begin; v < end; ++v) {
        std::size_t joint[8];
        float weight[8];
        const std::size_t c = read_influences<Index>(a, v, joint, weight);
        glm::mat3 s(0.0f);
        glm::vec4 real(0.0f), dual(0.0f);
        const glm::quat& pivot = palette[joint[0]].rigid.real;
        for (std::size_t i = 0; i < c; ++i) {
            const dq_bone& b = palette[joint[i]];
            // Antipodality: q and -q are the same rotation; blend each in the pivot's hemisphere.
            const float w = quat_dot(b.rigid.real, pivot) < 0.0f ? -weight[i] : weight[i];
            real += w * glm::vec4(b.rigid.real.x, b.rigid.real.y, b.rigid.real.z, b.rigid.real.w);
            dual += w * glm::vec4(b.rigid.dual.x, b.rigid.dual.y, b.rigid.dual.z, b.rigid.dual.w);
            s += weight[i] * b.scale;
        }
        const float len = std::sqrt(glm::dot(real, real));
        glm::quat r = glm::identity<glm::quat>();
        glm::vec3 t(0.0f);
        if (is_finite(len) && len > 0.0f) {
            real /= len;
            dual /= len;
            r = make_quat(real.w, real.x, real.y, real.z);
            // Translation of the normalised blend (Kavan et al. 2008, eq. for c0 + eps c_eps).
            const glm::vec3 r3(real), d3(dual);
            t = 2.0f * (real.w * d3 - dual.w * r3 + glm::cross(r3, d3));
        }
        const glm::vec3 p(*a.pos.at(v, 0), *a.pos.at(v, 1), *a.pos.at(v, 2));
        const glm::vec3 op = rotate(r, s * p) + t;
        glm::vec3 on(0.0f);
        bool normals = a.nrm.data != nullptr;
        if (normals) {
            const glm::vec3 n(*a.nrm.at(v, 0), *a.nrm.at(v, 1), *a.nrm.at(v, 2));
            on = rotate(r, a.inverse_transpose ? inverse_transpose_times(s, n) : s * n);
        }
        glm::vec4 ot(0.0f);
        if (a.tan.data) {
            const glm::vec3 tv(*a.tan.at(v, 0), *a.tan.at(v, 1), *a.tan.at(v, 2));
            ot = glm::vec4(rotate(r, s * tv), *a.tan.at(v, 3));
        }
        // Every input of the vertex is read before anything is written (in-place streams).
        for (int i = 0; i < 3; ++i) *a.out_pos.at(v, std::size_t(i)) = op[i];
        if (normals)
            for (int i = 0; i < 3; ++i) *a.out_nrm.at(v, std::size_t(i)) = on[i];
        if (a.tan.data)
            for (int i = 0; i < 4; ++i) *a.out_tan.at(v, std::size_t(i)) = ot[i];
    }
}

template <class Job>
struct job_traits;

template <class Index>
struct job_traits<skinning_job<Index>> {
    static status check(const skinning_job<Index>& j, checked& c) {
        return check_streams(j, j.palette.data(), j.palette.size(), sizeof(glm::mat4), c);
    }
    /// Where run()'s first SIMD group starts in the checked job (see group_start).
    static std::size_t first_group(const skinning_job<Index>& j, const checked& c) {
        return first_group_of(make_args(j, reinterpret_cast<const float*>(j.palette.data()), j.palette.size(), false, c), c.begin);
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
    static status check(const dual_quaternion_skinning_job<Index>& j, checked& c) {
        return check_streams(j, j.palette.data(), j.palette.size(), sizeof(dq_bone), c);
    }
    static std::size_t first_group(const dual_quaternion_skinning_job<Index>&, const checked& c) {
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

} // namespace KEYBLEND_SKIN_ABI
} // namespace skin
} // namespace impl

// ---------------------------------------------------------------------------------------------
// Jobs
// ---------------------------------------------------------------------------------------------

template <class JointIndex>
template <class Abi>
status skinning_job<JointIndex>::validate() const {
    impl::skin::checked c;
    if (status st = impl::skin::check_streams(*this, palette.data(), palette.size(), sizeof(glm::mat4), c); !st)
        return st;
    for (std::size_t b = 0; b < palette.size(); ++b)
        if (!is_finite(palette[b]))
            return impl::make_error(errc::non_finite,
                                    "palette matrix " + std::to_string(b) + " is not finite", b);
    const impl::skin::lbs_args a = impl::skin::make_args(*this, reinterpret_cast<const float*>(palette.data()), palette.size(), false, c);
    return impl::skin::check_influences<JointIndex>(a, c.begin, c.end, palette.size(),
                                                    this->weight_tolerance);
}

template <class JointIndex>
template <class Config, class Abi>
status skinning_job<JointIndex>::run() const {
    using traits = impl::skin::config_traits<Config>;
    impl::skin::checked c;
    if (status st = impl::skin::check_streams(*this, palette.data(), palette.size(), sizeof(glm::mat4), c); !st)
        return st;
    if (status st = impl::skin::check_config<Config>(*this); !st) return st;
    if (c.begin == c.end) return {};
    const impl::skin::lbs_args a = impl::skin::make_args(*this, reinterpret_cast<const float*>(palette.data()), palette.size(),
                                                         normals == normal_transform::inverse_transpose, c);
    impl::skin::run_kernels<JointIndex, traits::k, traits::implied, traits::streams>(
        impl::skin::active_isa(), a, c.begin, c.end, c.n, palette.size());
    return {};
}

template <class JointIndex>
template <class Abi>
status dual_quaternion_skinning_job<JointIndex>::validate() const {
    impl::skin::checked c;
    if (status st = impl::skin::check_streams(*this, palette.data(), palette.size(), sizeof(dq_bone), c); !st)
        return st;
    for (std::size_t b = 0; b < palette.size(); ++b) {
        const dq_bone& e = palette[b];
        if (!is_finite(e.rigid.real) || !is_finite(e.rigid.dual) || !is_finite(e.scale[0]) ||
            !is_finite(e.scale[1]) || !is_finite(e.scale[2]))
            return impl::make_error(errc::non_finite,
                                    "palette entry " + std::to_string(b) + " is not finite", b);
    }
    const impl::skin::lbs_args a = impl::skin::make_args(*this, nullptr, palette.size(), false, c);
    return impl::skin::check_influences<JointIndex>(a, c.begin, c.end, palette.size(),
                                                    this->weight_tolerance);
}

template <class JointIndex>
template <class Abi>
status dual_quaternion_skinning_job<JointIndex>::run() const {
    impl::skin::checked c;
    if (status st = impl::skin::check_streams(*this, palette.data(), palette.size(), sizeof(dq_bone), c); !st)
        return st;
    const impl::skin::lbs_args a = impl::skin::make_args(
        *this, nullptr, palette.size(), normals == normal_transform::inverse_transpose, c);
    impl::skin::run_dqs<JointIndex>(a, palette.data(), c.begin, c.end);
    return {};
}

inline namespace KEYBLEND_SKIN_ABI {

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

template <class Config, class Job, class Executor>
status skin_parallel(const Job& job, std::size_t task_count, Executor&& executor) {
    impl::skin::checked c;
    if (status st = impl::skin::job_traits<Job>::check(job, c); !st) return st;
    if (task_count == 0) task_count = 1;
    // Chunks of whole 64-vertex blocks from where the whole job's first SIMD group would start
    // (the first chunk also takes the few vertices before it): each chunk then starts a group
    // where the whole job would, so every vertex takes the same path, and gives the same bits,
    // whatever the number of tasks; and neighbouring chunks' packed outputs meet on cache-line
    // boundaries (64 * 12 bytes) when they are aligned where the groups start.
    const std::size_t total = c.end - c.begin;
    std::size_t chunk = (total + task_count - 1) / task_count;
    chunk = (chunk + 63) / 64 * 64;
    if (status st = impl::skin::job_traits<Job>::template check_config<Config>(job); !st) return st;
    Job base = job;
    base.stores = c.streaming ? store_policy::streaming : store_policy::cached;
    const std::size_t first = std::min(c.end, impl::skin::job_traits<Job>::first_group(base, c));
    const auto task = [&base, &c, chunk, first](std::size_t i) {
        Job part = base;
        const std::size_t b = i == 0 ? c.begin : std::min(c.end, first + i * chunk);
        part.range = vertex_range{b, std::min(c.end, first + (i + 1) * chunk)};
        // Cannot fail: the whole job passed the same checks.
        const status st = impl::skin::job_traits<Job>::template run<Config>(part);
        KEYBLEND_ASSERT(st.has_value(), "skin_parallel: a chunk failed after the job passed");
        (void)st;
    };
    executor(task_count, task);
    return {};
}

// ---------------------------------------------------------------------------------------------
// Preparing influences
// ---------------------------------------------------------------------------------------------

} // namespace KEYBLEND_SKIN_ABI

namespace impl {
namespace skin {
inline namespace KEYBLEND_SKIN_ABI {
inline status check_prepare_span(const span_info& s, std::size_t n) {
    if (!s.given && n > 0) return make_error(errc::invalid_argument, std::string(s.name) + ": required");
    return check_span(s, n, s.element);
}
} // namespace KEYBLEND_SKIN_ABI
} // namespace skin
} // namespace impl

inline namespace KEYBLEND_SKIN_ABI {

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

} // namespace KEYBLEND_SKIN_ABI

// ---------------------------------------------------------------------------------------------
// Instruction sets
// ---------------------------------------------------------------------------------------------

inline const char* to_string(simd_isa isa) {
    switch (isa) {
    case simd_isa::scalar: return "scalar";
    case simd_isa::sse2: return "sse2";
    case simd_isa::avx2: return "avx2";
    case simd_isa::avx512: return "avx512";
    }
    return "?";
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

inline namespace KEYBLEND_SKIN_ABI {

inline simd_isa skinning_isa() { return impl::skin::active_isa(); }

inline bool skinning_isa_supported(simd_isa isa) {
#if KEYBLEND_SKIN_DISPATCH
    return impl::skin::cpu_runs(isa);
#else
    return isa == impl::skin::active_isa();
#endif
}

inline status force_skinning_isa(simd_isa isa) {
#if KEYBLEND_SKIN_DISPATCH
    if (!impl::skin::cpu_runs(isa))
        return impl::make_error(errc::unsupported, std::string("force_skinning_isa: this CPU does not run the ") +
                                                       to_string(isa) + " kernels");
    impl::skin::chosen_isa.store(int(isa), std::memory_order_relaxed);
    return {};
#else
    if (isa == impl::skin::active_isa()) return {};
    return impl::make_error(errc::unsupported,
                            std::string("force_skinning_isa: this file is built with the ") +
                                to_string(impl::skin::active_isa()) + " kernels only, not " + to_string(isa) +
                                " (define KEYBLEND_RUNTIME_DISPATCH for a choice at run time)");
#endif
}

} // namespace KEYBLEND_SKIN_ABI

} // namespace keyblend
