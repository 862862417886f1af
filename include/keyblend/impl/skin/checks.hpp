// keyblend — the skinning jobs' checks (what run() checks in O(1), what validate() checks per
// vertex), the job flattened for the kernels (lbs_args), and the fixed configurations. Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_CHECKS_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_CHECKS_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_CHECKS_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_CHECKS_HPP
#endif

#include "../simd/tuning.hpp"
#include "streams.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

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
    return a.data == b.data && a.stride == b.stride && a.cs == b.cs && a.size == b.size &&
           a.components == b.components && a.element == b.element;
}

/// The normals' or tangents' output: the packed one when it is given, else the float one.
template <class Index>
KEYBLEND_FORCE_INLINE span_info normal_output(const skinning_streams<Index>& j) {
    return j.out_normals_packed.empty() ? info("out_normals", j.out_normals, 3)
                                        : info("out_normals_packed", j.out_normals_packed, 1);
}
template <class Index>
KEYBLEND_FORCE_INLINE span_info tangent_output(const skinning_streams<Index>& j) {
    return j.out_tangents_packed.empty() ? info("out_tangents", j.out_tangents, 4)
                                         : info("out_tangents_packed", j.out_tangents_packed, 1);
}

/// A job's nine spans (in_positions, out_positions, in_normals, the normals' output, in_tangents,
/// the tangents' output, joints, weights, influence_counts), for the checks.
template <class Index>
KEYBLEND_FORCE_INLINE void span_infos(const skinning_streams<Index>& j, span_info (&out)[9]) {
    const std::size_t k = j.influences;
    const std::size_t stored = j.last == last_weight::implied ? k - 1 : k;
    out[0] = info("in_positions", j.in_positions, 3);
    out[1] = info("out_positions", j.out_positions, 3);
    out[2] = info("in_normals", j.in_normals, 3);
    out[3] = normal_output(j);
    out[4] = info("in_tangents", j.in_tangents, 4);
    out[5] = tangent_output(j);
    out[6] = info("joints", j.joints, k);
    out[7] = info("weights", j.weights, stored ? stored : 1);
    out[8] = info("influence_counts", j.influence_counts, 1);
}

/// The exact aliasing test for the pairs whose byte ranges meet (bit x of meets[i]: output 2i + 1
/// against span x, x = 9 the palette), which tells byte-disjoint fields of one interleaved buffer
/// apart; the error names the first pair that truly overlaps. Out of line: rare (in-place jobs,
/// interleaved buffers), and its messages would otherwise weigh on every run()'s code.
template <class Index>
KEYBLEND_NOINLINE status alias_fault(const skinning_streams<Index>& j, const void* palette,
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
    if (!j.out_normals.empty() && !j.out_normals_packed.empty())
        return make_error(errc::invalid_argument, "out_normals and out_normals_packed both given (one or the other)");
    if (!j.out_tangents.empty() && !j.out_tangents_packed.empty())
        return make_error(errc::invalid_argument,
                          "out_tangents and out_tangents_packed both given (one or the other)");
    if (j.in_normals.empty() != (j.out_normals.empty() && j.out_normals_packed.empty()))
        return make_error(errc::size_mismatch, "normals given on one side only (in_normals and "
                                               "out_normals or out_normals_packed go together)");
    if (j.in_tangents.empty() != (j.out_tangents.empty() && j.out_tangents_packed.empty()))
        return make_error(errc::size_mismatch, "tangents given on one side only (in_tangents and "
                                               "out_tangents or out_tangents_packed go together)");
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
    const auto fine_info = [&](int x, const span_info& i) {
        lo[x] = i.data;
        hi[x] = i.end();
        used |= unsigned(i.given && i.size != 0) << x;
        return fault_of(i, n, i.element) == span_fault::none;
    };
    const auto fine = [&](int x, const auto& span, std::size_t components) {
        return fine_info(x, info("", span, components));
    };
    const bool all_fine = fine(0, j.in_positions, 3) && fine(1, j.out_positions, 3) && fine(2, j.in_normals, 3) &&
                          fine_info(3, normal_output(j)) && fine(4, j.in_tangents, 4) &&
                          fine_info(5, tangent_output(j)) &&
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
    if (!j.in_normals.empty()) bytes += j.out_normals_packed.empty() ? 12u : 4u;
    if (!j.in_tangents.empty()) bytes += j.out_tangents_packed.empty() ? 16u : 4u;
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

/// An output of 10:10:10:2 words (out_normals_packed, out_tangents_packed).
inline out_stream make_words_out(const strided_span<std::uint32_t>& s) {
    out_stream r;
    r.data = reinterpret_cast<unsigned char*>(s.data);
    r.stride = s.stride;
    r.cs = sizeof(std::uint32_t);
    r.kind = layout::words;
    return r;
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
        a.out_nrm = j.out_normals_packed.empty() ? make_out(j.out_normals, 3, c.streaming)
                                                 : make_words_out(j.out_normals_packed);
    }
    if (!j.in_tangents.empty()) {
        a.tan = make_in(j.in_tangents, 4);
        a.out_tan = j.out_tangents_packed.empty() ? make_out(j.out_tangents, 4, false)
                                                  : make_words_out(j.out_tangents_packed);
    }
    const auto packed = [](layout in, layout out, const void* data) {
        return !data || (in == layout::packed && (out == layout::packed || out == layout::words));
    };
    a.simple = !inverse_transpose && packed(a.pos.kind, a.out_pos.kind, a.pos.data) &&
               packed(a.nrm.kind, a.out_nrm.kind, a.nrm.data) && packed(a.tan.kind, a.out_tan.kind, a.tan.data);
    a.scaled = a.simple;
    // Groups whose last slots are all weight 0 (the loader's layout, for a mesh whose vertices
    // mostly have fewer influences than its k) skip them. Whether to look, per group, is decided
    // from 8 vertices spread over the whole mesh (finding out costs a group K more loads and a
    // choice among K blends; see the tuning table): the same for every range, split and kernel
    // of the mesh.
    const std::size_t n = j.in_positions.size;
    if (!a.implied && a.k >= 2 && a.k <= 4 && n >= 8) {
        bool zero = false; // a local: a store to `a` in the loop costs each step a store-forward
        for (std::size_t i = 0; i < 8; ++i) zero |= stored_weight(a, i * (n / 8), a.k - 1) == 0.0f;
        a.skip_zero_slots = zero;
    }
    a.quads = a.k >= 2 && a.k <= 4 && a.simple && tuning::prefer_quads();
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

inline status check_prepare_span(const span_info& s, std::size_t n) {
    if (!s.given && n > 0) return make_error(errc::invalid_argument, std::string(s.name) + ": required");
    return check_span(s, n, s.element);
}

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_CHECKS_HPP
