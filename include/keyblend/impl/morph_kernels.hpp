// keyblend — the morph kernels (morph_job, morph.hpp): weighted target displacements summed over
// packed xyz streams on the widest lanes, any other layout one vertex at a time. Internal;
// included by morph.impl.hpp, or by the compiled kernels (keyblend/kernels.hpp).
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_MORPH_KERNELS_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_MORPH_KERNELS_HPP)
#undef KEYBLEND_PASS_GUARD_MORPH_KERNELS_HPP
#else
#define KEYBLEND_PASS_GUARD_MORPH_KERNELS_HPP
#endif

#include "simd/lanes.hpp"

#include <cstddef>

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {

template <class S>
inline bool packed_xyz_stream(const strided_span<S>& s) {
    return s.stride == 3 * sizeof(float) && s.component_stride == sizeof(float);
}

/// Morphs one attribute of vertices [begin, end) on lanes V (f1: the scalar reference).
template <class V>
void morph_attribute(const morph_job& j, const morph::attribute& a, std::size_t begin, std::size_t end) {
    using lanes::f1;
    const std::size_t targets = j.targets.size();
    bool flat = a.components == 3 && packed_xyz_stream(a.in) && packed_xyz_stream(a.out);
    for (std::size_t t = 0; t < targets && flat; ++t) {
        const strided_span<const float>& d = j.targets[t].*(a.member);
        if (j.weights[t] != 0.0f && !d.empty()) flat = packed_xyz_stream(d);
    }
    if (flat) {
        // x, y and z of consecutive vertices are consecutive floats in every stream: one flat sum.
        const std::size_t first = 3 * begin, last = 3 * end;
        std::size_t k = first;
        for (; k + V::width <= last; k += V::width) {
            V acc = V::load(a.in.data + k);
            for (std::size_t t = 0; t < targets; ++t) {
                const float w = j.weights[t];
                const float* d = (j.targets[t].*(a.member)).data;
                if (w != 0.0f && d) acc = fmadd(V::set1(w), V::load(d + k), acc);
            }
            acc.store(a.out.data + k);
        }
        for (; k < last; ++k) {
            f1 acc{a.in.data[k]};
            for (std::size_t t = 0; t < targets; ++t) {
                const float w = j.weights[t];
                const float* d = (j.targets[t].*(a.member)).data;
                if (w != 0.0f && d) acc = fmadd(f1{w}, f1{d[k]}, acc);
            }
            a.out.data[k] = acc.v;
        }
        return;
    }
    for (std::size_t v = begin; v < end; ++v) {
        float w3 = 0.0f;
        if (a.components == 4) w3 = a.in(v, 3);
        for (std::size_t c = 0; c < 3; ++c) {
            f1 acc{a.in(v, c)};
            for (std::size_t t = 0; t < targets; ++t) {
                const float w = j.weights[t];
                const strided_span<const float>& d = j.targets[t].*(a.member);
                if (w != 0.0f && !d.empty()) acc = fmadd(f1{w}, f1{d(v, c)}, acc);
            }
            a.out(v, c) = acc.v;
        }
        if (a.components == 4) a.out(v, 3) = w3;
    }
}

/// The job on lanes V (run() uses lanes::widest; the tests compare it with lanes::f1).
template <class V>
status run_morph(const morph_job& j) {
    std::size_t begin = 0, end = 0;
    if (status s = morph::check(j, begin, end); !s) return s;
    morph::attribute a[3];
    const std::size_t count = morph::attributes_of(j, a);
    for (std::size_t i = 0; i < count; ++i) morph_attribute<V>(j, a[i], begin, end);
    return {};
}

/// morph_job::run, its checks made.
inline status run_job(const morph_job& job) { return run_morph<lanes::widest>(job); }

} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_MORPH_KERNELS_HPP
