// keyblend — the skinning kernels put together: per influence count and layout mode, the range
// split into groups (and the few vertices before the first aligned group and after the last
// through a stack copy), and the entry points the skinning job calls. Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_RUN_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_RUN_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_RUN_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_RUN_HPP
#endif

#include "quads_avx512.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

template <class V, int K, class Index, group_mode Mode, int Streams>
void lbs_kernel(const lbs_args& args, std::size_t begin, std::size_t end);

/// A group whose joints are not all within the palette (invalid data, which validate() reports):
/// skinned by the scalar kernel, which clamps, out of line so that the kernels' loops stay lean.
template <class V, class Index>
KEYBLEND_COLD void lbs_group_clamped(const lbs_args& a, std::size_t v) {
    lbs_kernel<f1, 0, Index, group_mode::general, -1>(a, v, v + V::width);
}

/// Skins [begin, end), V::width vertices per step. Preconditions: (end - begin) % V::width == 0,
/// no group reaches the vertices lane_ops<V>::guard excludes; for K > 0, fast_path(a), no counts,
/// and Mode allowed by mode_for<K>(a); the streams given are those Streams names (when >= 0).
/// Each mode is its own function: with several group variants in one loop body compilers run out
/// of integer registers.
template <class V, int K, class Index, group_mode Mode, int Streams>
void lbs_kernel(const lbs_args& args, std::size_t begin, std::size_t end) {
    using ops = lane_ops<V>;
    // A local copy: the compiler then knows the output stores cannot change it, and keeps the
    // pointers and strides in registers instead of reloading them for every vertex.
    const lbs_args a = args;
    std::size_t v = begin;
#if KEYBLEND_SIMD_AVX512
    if constexpr (V::width == 8 && K <= 4 && packed(Mode) && !(Streams >= 0 && has_tangents(Streams))) {
        if (a.simple && !a.tan.data && !a.out_pos.streaming && !a.out_nrm.streaming && (K == 1 || a.quads)) {
            const auto quads = [&](auto words) KEYBLEND_LAMBDA_INLINE {
                for (; v < end; v += V::width) {
                    if (group_joints_ok<8, K, Index, Mode>(a, v))
                        aos_group<K, Index, Mode, Streams, decltype(words)::value>(a, v);
                    else
                        lbs_group_clamped<V, Index>(a, v);
                }
            };
            if (a.out_nrm.kind == layout::words)
                quads(std::true_type{});
            else
                quads(std::false_type{});
            return;
        }
    }
    if constexpr (K == 1 && V::width == 8) {
        // One influence (no blend: the matrices are loaded and transposed), two groups a step,
        // both loaded before either is transformed: a group's chain from its joint loads to its
        // stores is long next to its work, and the core then has the other group's to overlap
        // (with 2 or more influences the blends fill the core, and two groups' registers no
        // longer fit in 32).
        for (; v + 2 * V::width <= end; v += 2 * V::width) {
            V m0[12], m1[12];
            const bool ok0 = ops::template blend<K, Index, Mode>(a, v, m0);
            const bool ok1 = ops::template blend<K, Index, Mode>(a, v + V::width, m1);
            if (!ok0 || !ok1) {
                // Invalid joints in either (rare): both groups the one-group way below.
                break;
            }
            transform_any_mode<V, Mode, Streams>(a, v, m0);
            transform_any_mode<V, Mode, Streams>(a, v + V::width, m1);
        }
    }
#endif
#if KEYBLEND_SIMD_AVX2
    if constexpr (V::width == 8 && K >= 2 && K <= 4 && Mode == group_mode::packed) {
        if (a.skip_zero_slots) {
            // Each group blends the slots its vertices use (slots_used): 0 * M added to a sum
            // changes nothing but, at most, the sign of a zero.
            for (; v < end; v += V::width) {
                const int used = slots_used<K>(a, v);
                V m[12];
                bool ok = false;
                unroll<K>([&](auto i) KEYBLEND_LAMBDA_INLINE {
                    if (used == i + 1) ok = ops::template blend<K, Index, Mode, i + 1>(a, v, m);
                });
                if (ok)
                    transform_any_mode<V, Mode, Streams>(a, v, m);
                else
                    lbs_group_clamped<V, Index>(a, v);
            }
            return;
        }
    }
#endif
    for (; v < end; v += V::width) {
        // m[3c + r]: column c, row r of each lane's blended matrix (c = 3: translation).
        V m[12];
        if (!ops::template blend<K, Index, Mode>(a, v, m)) {
            lbs_group_clamped<V, Index>(a, v);
            continue;
        }
        transform_any_mode<V, Mode, Streams>(a, v, m);
    }
}

/// The packed mode's kernel: for one slot, 8 wide, with the job's streams simple (lbs_args::scaled),
/// group_mode::packed_scaled.
template <class V, int K, class Index, int Streams>
void lbs_packed(const lbs_args& a, std::size_t begin, std::size_t end) {
    if constexpr (K == 1 && V::width == 8) {
        if (a.scaled) {
            lbs_kernel<V, K, Index, group_mode::packed_scaled, Streams>(a, begin, end);
            return;
        }
    }
    lbs_kernel<V, K, Index, group_mode::packed, Streams>(a, begin, end);
}

/// The fast path's kernel for this job's layout (chosen once per run). Implied: -1 when the job
/// says, else whether a fixed_skinning run's last weight is implied (the job was checked to agree).
/// The general run() (Implied and Streams -1) has no strided kernels for more than 4 slots: such
/// jobs take the dynamic kernel. Vertex buffers hold at most 4 influences per vertex (D3D's
/// UBYTE4 indices), and four kernels fewer are a tenth of the general run()'s compile time.
template <class V, int K, class Index, int Implied, int Streams>
void lbs_modes(const lbs_args& a, std::size_t begin, std::size_t end) {
    const group_mode mode = mode_for<K, Index>(a);
    if (Implied != 1 && mode == group_mode::packed)
        lbs_packed<V, K, Index, Streams>(a, begin, end);
    else if (Implied != 0 && mode == group_mode::packed_implied)
        lbs_kernel<V, K, Index, group_mode::packed_implied, Streams>(a, begin, end);
    else if constexpr (K > 4 && Implied < 0 && Streams < 0)
        lbs_kernel<V, 0, Index, group_mode::general, -1>(a, begin, end);
    else
        lbs_kernel<V, K, Index, group_mode::strided, Streams>(a, begin, end);
}

template <class V, class Index>
void lbs_slots(const lbs_args& a, std::size_t k, std::size_t begin, std::size_t end) {
    switch (k) {
    case 1: lbs_modes<V, 1, Index, -1, -1>(a, begin, end); break;
    case 2: lbs_modes<V, 2, Index, -1, -1>(a, begin, end); break;
    case 3: lbs_modes<V, 3, Index, -1, -1>(a, begin, end); break;
    case 4: lbs_modes<V, 4, Index, -1, -1>(a, begin, end); break;
    case 5: lbs_modes<V, 5, Index, -1, -1>(a, begin, end); break;
    case 6: lbs_modes<V, 6, Index, -1, -1>(a, begin, end); break;
    case 7: lbs_modes<V, 7, Index, -1, -1>(a, begin, end); break;
    case 8: lbs_modes<V, 8, Index, -1, -1>(a, begin, end); break;
    default: lbs_kernel<V, 0, Index, group_mode::general, -1>(a, begin, end); break;
    }
}

/// Per-vertex counts on the fast path: each block of 64 vertices blends as many slots as its
/// largest count (the slots past a vertex's count hold weight 0), and runs of blocks with the same
/// largest count share one kernel call. Meshes whose vertices come sorted or clustered by count
/// then blend few zero weights; where counts are scattered, a block costs what its busiest vertex
/// costs, as without counts (why blocks of 64: the tuning table).
template <class V, class Index>
void lbs_counted(const lbs_args& a, std::size_t begin, std::size_t end) {
    constexpr std::size_t block = 64; // a multiple of every lane width
    lbs_args b = a;
    b.counts = nullptr;
    const auto largest = [&a, end](std::size_t v) {
        std::size_t m = 1;
        const std::size_t stop = v + block < end ? v + block : end;
        for (std::size_t i = v; i < stop; ++i) {
            const std::size_t c = a.counts[i * a.count_stride];
            m = c > m ? c : m;
        }
        return m < a.k ? m : a.k;
    };
    std::size_t run = begin;
    std::size_t slots = begin < end ? largest(begin) : 0;
    for (std::size_t v = begin + block; v < end + block; v += block) {
        const std::size_t at = v < end ? v : end;
        const std::size_t next = v < end ? largest(v) : 0;
        if (next == slots) continue;
        lbs_slots<V, Index>(b, slots, run, at);
        run = at;
        slots = next;
    }
}

/// The bit set of the s in [0, W) at which `stream` is aligned to 4 * W bytes at vertex begin + s
/// (packed streams only; others never count as aligned): with a = (address at begin) / 4 modulo
/// W and the stride in floats c (3 or 4), the s with a + c * s = 0 (modulo W). W is a power of 2.
template <std::size_t W, class Stream>
KEYBLEND_FORCE_INLINE std::uint32_t aligned_at(const Stream& stream, std::size_t begin) {
    if (!stream.data || stream.kind != layout::packed) return 0;
    const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(stream.data) + begin * stream.stride;
    if (address % sizeof(float) != 0) return 0;
    const std::size_t a = (address / sizeof(float)) % W;
    const std::size_t c = stream.stride / sizeof(float);
    std::uint32_t mask = 0;
    if (c % 2 == 1) {
        // c is invertible modulo W: one s, -a / c. (For odd c, c * c = 1 modulo 8, and each
        // Newton step inv * (2 - c * inv) doubles the number of low bits in which inv is exact.)
        std::size_t inv = c;
        for (std::size_t m = 8; m < W; m *= m) inv = inv * (2 - c * inv);
        mask = std::uint32_t(1) << (((W - a) % W) * inv % W);
    } else if (c == 4 && a % 4 == 0) {
        // Every W / 4 vertices from -a / 4.
        const std::size_t period = W / 4, first = ((W - a) % W / 4) % period;
        for (std::size_t s = first; s < W; s += period) mask |= std::uint32_t(1) << s;
    }
    return mask;
}

/// The vertex from `begin` (less than V::width further) at which the SIMD groups start, the
/// vertices before it taking the scalar path. With streaming outputs: where each packed output
/// wanted streaming is aligned to a whole register (32 bytes for AVX2, 64 for AVX-512; a packed
/// xyz stream comes back to the same alignment every V::width vertices), as non-temporal stores
/// require, with streaming turned off for outputs that are not aligned there too or not at all.
/// Otherwise: where the most packed streams are so aligned, outputs counting twice, so that few
/// loads and stores of a group straddle two cache lines (a std::vector<glm::vec3> is only 16-byte
/// aligned). A store that straddles costs more than a load (see the tuning table). Every vertex takes the same arithmetic wherever the groups
/// start, so the choice changes no bits. Only AVX2 and AVX-512 stream or align. The choice depends
/// only on the streams' addresses and on begin modulo V::width (skin_parallel splits on it).
template <class V>
std::size_t group_start(lbs_args& a, std::size_t begin) {
    out_stream* outs[2] = {&a.out_pos, &a.out_nrm};
    if constexpr (V::width < 8) {
        for (out_stream* o : outs) o->streaming = false;
        return begin;
    } else {
        constexpr std::size_t W = V::width;
        const auto lowest = [](std::uint32_t m) {
            std::size_t s = 0;
            while (!(m & 1u)) {
                m >>= 1;
                ++s;
            }
            return s;
        };
        std::uint32_t streaming = 0;
        for (out_stream* o : outs) {
            if (!o->streaming) continue;
            const std::uint32_t m =
                aligned_at<W>(*o, begin) & (streaming ? streaming : ~std::uint32_t(0));
            if (!m) {
                o->streaming = false;
                continue;
            }
            if (!streaming) streaming = std::uint32_t(1) << lowest(m);
        }
        if (streaming) return begin + lowest(streaming);
        const std::uint32_t in[3] = {aligned_at<W>(a.pos, begin), aligned_at<W>(a.nrm, begin),
                                     aligned_at<W>(a.tan, begin)};
        const std::uint32_t out[3] = {aligned_at<W>(a.out_pos, begin), aligned_at<W>(a.out_nrm, begin),
                                      aligned_at<W>(a.out_tan, begin)};
        // The lowest of the starts where the most streams are aligned (outputs counting twice);
        // only starts where at least one is aligned are candidates.
        std::size_t best = 0, most = 0;
        for (std::uint32_t c = in[0] | in[1] | in[2] | out[0] | out[1] | out[2]; c != 0; c &= c - 1) {
            const std::size_t s = lowest(c);
            std::size_t score = 0;
            for (int i = 0; i < 3; ++i) score += (in[i] >> s & 1u) + 2 * (out[i] >> s & 1u);
            if (score > most) {
                most = score;
                best = s;
            }
        }
        return begin + best;
    }
}

/// The count <= V::width vertices from v (a range's first or last few, or those near the end of
/// the mesh the SIMD loads must not reach) skinned by the SIMD kernel of K slots all the same:
/// copied into packed stack buffers (the unused lanes hold zeros), skinned as one group, copied
/// back. Every vertex of a fast-path job then takes the same arithmetic, so its bits do not
/// depend on where a range or the buffers start, and a job of a few hundred vertices (a mesh
/// split by influence count) does not spend a tenth of its time on the scalar path.
template <class V, int K, class Index, int Implied, int Streams>
KEYBLEND_NOINLINE void lbs_bounce(const lbs_args& a, std::size_t v, std::size_t count) {
    constexpr std::size_t W = V::width;
    constexpr std::size_t over = 16; // the SIMD loads read a little past the last vertex
    alignas(64) float pin[3 * W + over], pout[3 * W + over], nin[3 * W + over], nout[3 * W + over];
    alignas(64) float tin[4 * W + over], tout[4 * W + over];
    alignas(64) Index jb[K * W + 64 / sizeof(Index)];
    alignas(64) float wb[K * W + over];
    const std::size_t stored = a.implied ? std::size_t(K - 1) : std::size_t(K);
    const bool normals = a.nrm.data != nullptr, tangents = a.tan.data != nullptr;
    // The unused lanes (and the over-read past them) hold zeros: joint 0, in every palette.
    std::memset(pin, 0, sizeof pin);
    std::memset(nin, 0, sizeof nin);
    std::memset(tin, 0, sizeof tin);
    std::memset(jb, 0, sizeof jb);
    std::memset(wb, 0, sizeof wb);
    for (std::size_t i = 0; i < count; ++i) {
        for (std::size_t c = 0; c < 3; ++c) pin[3 * i + c] = *a.pos.at(v + i, c);
        if (normals)
            for (std::size_t c = 0; c < 3; ++c) nin[3 * i + c] = *a.nrm.at(v + i, c);
        if (tangents)
            for (std::size_t c = 0; c < 4; ++c) tin[4 * i + c] = *a.tan.at(v + i, c);
        for (std::size_t s = 0; s < std::size_t(K); ++s) jb[std::size_t(K) * i + s] = Index(raw_joint<Index>(a, v + i, s));
        for (std::size_t s = 0; s < stored; ++s) wb[stored * i + s] = stored_weight(a, v + i, s);
    }
    lbs_args b = a;
    b.joints = reinterpret_cast<const unsigned char*>(jb);
    b.joint_stride = K * sizeof(Index);
    b.joint_cs = sizeof(Index);
    if (stored) {
        b.weights = reinterpret_cast<const unsigned char*>(wb);
        b.weight_stride = stored * sizeof(float);
        b.weight_cs = sizeof(float);
    }
    b.counts = nullptr;
    const auto in = [](const float* p, std::size_t components) {
        in_stream s;
        s.data = reinterpret_cast<const unsigned char*>(p);
        s.stride = components * sizeof(float);
        s.cs = sizeof(float);
        s.kind = layout::packed;
        return s;
    };
    const auto out = [](float* p, std::size_t components) {
        out_stream s;
        s.data = reinterpret_cast<unsigned char*>(p);
        s.stride = components * sizeof(float);
        s.cs = sizeof(float);
        s.kind = layout::packed;
        return s;
    };
    b.pos = in(pin, 3);
    b.out_pos = out(pout, 3);
    if (normals) {
        b.nrm = in(nin, 3);
        b.out_nrm = out(nout, 3);
    }
    if (tangents) {
        b.tan = in(tin, 4);
        b.out_tan = out(tout, 4);
    }
    b.simple = !a.inverse_transpose;
    if constexpr (Implied == 1) {
        lbs_kernel<V, K, Index, group_mode::packed_implied, Streams>(b, 0, W);
    } else {
        if (Implied < 0 && a.implied)
            lbs_kernel<V, K, Index, group_mode::packed_implied, Streams>(b, 0, W);
        else
            lbs_packed<V, K, Index, Streams>(b, 0, W);
    }
    // Words (packed outputs) from the group's lanes, as the kernels pack them.
    std::uint32_t nwords[W], twords[W];
    const auto words_of = [](const out_stream& from, std::uint32_t* words) {
        out_stream s = from;
        s.data = reinterpret_cast<unsigned char*>(words);
        s.stride = sizeof(std::uint32_t);
        return s;
    };
    if (normals && a.out_nrm.kind == layout::words) {
        V x = V::set1(0.0f), y = x, z = x; // (assigned by load3; GCC cannot tell for SSE2)
        lane_ops<V>::load3(in(nout, 3), 0, x, y, z);
        store_packed<false>(words_of(a.out_nrm, nwords), 0, x, y, z);
    }
    if (tangents && a.out_tan.kind == layout::words) {
        V x = V::set1(0.0f), y = x, z = x, w = x;
        lane_ops<V>::load4(in(tout, 4), 0, x, y, z, w);
        store_packed<true>(words_of(a.out_tan, twords), 0, x, y, z, w);
    }
    for (std::size_t i = 0; i < count; ++i) {
        for (std::size_t c = 0; c < 3; ++c) *a.out_pos.at(v + i, c) = pout[3 * i + c];
        if (normals && a.out_nrm.kind == layout::words)
            std::memcpy(a.out_nrm.data + (v + i) * a.out_nrm.stride, &nwords[i], sizeof(std::uint32_t));
        else if (normals)
            for (std::size_t c = 0; c < 3; ++c) *a.out_nrm.at(v + i, c) = nout[3 * i + c];
        if (tangents && a.out_tan.kind == layout::words)
            std::memcpy(a.out_tan.data + (v + i) * a.out_tan.stride, &twords[i], sizeof(std::uint32_t));
        else if (tangents)
            for (std::size_t c = 0; c < 4; ++c) *a.out_tan.at(v + i, c) = tout[4 * i + c];
    }
}

/// lbs_bounce over [begin, end), at most V::width vertices at a time, for k slots.
template <class V, class Index, int K, int Implied, int Streams>
void lbs_bounce_range(const lbs_args& a, std::size_t k, std::size_t begin, std::size_t end) {
    for (std::size_t v = begin; v < end; v += V::width) {
        const std::size_t count = end - v < V::width ? end - v : V::width;
        if constexpr (K > 0) {
            (void)k;
            lbs_bounce<V, K, Index, Implied, Streams>(a, v, count);
        } else {
            switch (k) {
            case 1: lbs_bounce<V, 1, Index, -1, -1>(a, v, count); break;
            case 2: lbs_bounce<V, 2, Index, -1, -1>(a, v, count); break;
            case 3: lbs_bounce<V, 3, Index, -1, -1>(a, v, count); break;
            case 4: lbs_bounce<V, 4, Index, -1, -1>(a, v, count); break;
            case 5: lbs_bounce<V, 5, Index, -1, -1>(a, v, count); break;
            case 6: lbs_bounce<V, 6, Index, -1, -1>(a, v, count); break;
            case 7: lbs_bounce<V, 7, Index, -1, -1>(a, v, count); break;
            default: lbs_bounce<V, 8, Index, -1, -1>(a, v, count); break;
            }
        }
    }
}

/// Below this many SIMD groups a job (without streaming stores) starts its groups where its range
/// starts, instead of first aligning its loads: for a few hundred vertices the partial group the
/// alignment costs is worth more than aligned loads.
inline constexpr std::size_t align_from_groups = 16;

/// True when an output is the very memory of its input (in-place skinning): vertices written cannot
/// be skinned again.
KEYBLEND_FORCE_INLINE bool in_place(const lbs_args& a) {
    return a.out_pos.data == a.pos.data || (a.nrm.data && a.out_nrm.data == a.nrm.data) ||
           (a.tan.data && a.out_tan.data == a.tan.data);
}

/// Skins [begin, end) of a mesh of n vertices with lane type V. K > 0: a fixed_skinning run (K
/// slots, Implied 0 or 1, Streams), whose job was checked to agree; K = 0: any job. On the fast
/// path (fast_path, and no per-vertex counts with an implied weight) every vertex goes through the
/// SIMD kernels; otherwise (influences with component strides, counts with an implied weight) the
/// dynamic SIMD kernel and the scalar one.
///
/// The fast path's partial groups (the vertices before the first aligned group, after the last
/// whole one): out of place, in a range of at least one group, one more group each that overlaps
/// its neighbour, run first (the neighbour then writes the vertices they share, with the slots it
/// blends; every vertex's bits depend only on its own data and slot count). In place (a vertex
/// written cannot be read again) or in shorter ranges, and for the last vertices of the mesh that
/// the loads must not pass (guard), through a stack copy of one group (lbs_bounce), at full K.
template <class V, class Index, int K = 0, int Implied = -1, int Streams = -1>
void run_lbs(const lbs_args& args, std::size_t begin, std::size_t end, std::size_t n) {
    lbs_args a = args;
    if constexpr (V::width == 1) {
        (void)n;
        lbs_kernel<f1, 0, Index, group_mode::general, -1>(a, begin, end);
    } else {
        constexpr std::size_t W = V::width;
        // Groups start where the loads (and non-temporal stores, which must) are aligned; a short
        // job's fast path where its range starts, unless it streams (group_start then says
        // whether it can, and so is not skipped).
        const bool fast = fast_path<Index>(a) && !(a.counts && a.implied);
        const auto start_here = [&] {
            return fast && !a.out_pos.streaming && !a.out_nrm.streaming && end - begin < align_from_groups * W;
        };
        std::size_t start = begin;
        if (!start_here()) {
            start = group_start<V>(a, begin);
            if (start_here()) start = begin;
        }
        start = start < end ? start : end;
        const std::size_t guard = lane_ops<V>::template guard<Index>(a, fast);
        const std::size_t limit = guard >= n ? 0 : n - guard;
        const std::size_t stop = end < limit ? end : limit;
        const std::size_t simd_end = stop > start ? start + (stop - start) / W * W : start;
        if (!fast) {
            lbs_kernel<f1, 0, Index, group_mode::general, -1>(a, begin, start);
            lbs_kernel<V, 0, Index, group_mode::general, -1>(a, start, simd_end);
            lbs_kernel<f1, 0, Index, group_mode::general, -1>(a, simd_end, end);
            return;
        }
        if constexpr (K > 0) {
            // Counts (stored weights only: checked) are not needed: slots past a vertex's count
            // hold weight 0.
            a.counts = nullptr;
        }
        // The partial groups at full K, with ordinary stores (they need not be aligned). (A copy
        // of the arguments only when there are any: a short job's fixed cost.)
        const auto whole_of = [&a] {
            lbs_args whole = a;
            whole.counts = nullptr;
            whole.out_pos.streaming = whole.out_nrm.streaming = false;
            return whole;
        };
        const bool overlap = stop >= begin + W && !in_place(a);
        const auto partial = [&](std::size_t from, std::size_t to, std::size_t group) {
            if (from >= to) return;
            const lbs_args whole = whole_of();
            if constexpr (K > 0) {
                if (overlap)
                    lbs_modes<V, K, Index, Implied, Streams>(whole, group, group + W);
                else
                    lbs_bounce_range<V, Index, K, Implied, Streams>(whole, K, from, to);
            } else {
                if (overlap)
                    lbs_slots<V, Index>(whole, a.k, group, group + W);
                else
                    lbs_bounce_range<V, Index, 0, -1, -1>(whole, a.k, from, to);
            }
        };
        partial(begin, start, begin);
        partial(simd_end, stop, stop >= W ? stop - W : 0);
        if constexpr (K > 0) {
            lbs_modes<V, K, Index, Implied, Streams>(a, start, simd_end);
            if (stop < end) lbs_bounce_range<V, Index, K, Implied, Streams>(whole_of(), K, stop, end);
        } else {
            if (a.counts)
                lbs_counted<V, Index>(a, start, simd_end);
            else
                lbs_slots<V, Index>(a, a.k, start, simd_end);
            if (stop < end) lbs_bounce_range<V, Index, 0, -1, -1>(whole_of(), a.k, stop, end);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Entry points (what skin.impl.hpp calls)
// ---------------------------------------------------------------------------------------------

/// Palettes up to this size that are not aligned to the lane type's loads are copied to an
/// aligned stack buffer.
inline constexpr std::size_t palette_copy_limit = 128;

/// Runs a checked job's range with lane type V (see run_lbs for K, Implied, Streams), the palette
/// as it is. Non-temporal stores are fenced before returning (visible to other threads).
template <class V, class Index, int K = 0, int Implied = -1, int Streams = -1>
void run_range(const lbs_args& args, std::size_t begin, std::size_t end, std::size_t n) {
#if defined(KEYBLEND_SKIN_TEST_HOOK)
    // Tests only (tests/skin_isa_mix.cmake): reports which kernel set and lane width ran.
    KEYBLEND_SKIN_TEST_HOOK(isa, V::width);
#endif
    run_lbs<V, Index, K, Implied, Streams>(args, begin, end, n);
#if KEYBLEND_SIMD_SSE2
    if (args.out_pos.streaming || args.out_nrm.streaming) _mm_sfence();
#endif
}

/// run_range from an aligned stack copy of the palette (its own frame: the buffer is on the stack
/// only when it is used).
template <class V, class Index, int K, int Implied, int Streams>
KEYBLEND_NOINLINE void run_copied(const lbs_args& args, std::size_t begin, std::size_t end, std::size_t n,
                                  std::size_t palette_size) {
    alignas(64) float copy[palette_copy_limit * 16];
    std::memcpy(copy, args.palette, palette_size * 16 * sizeof(float));
    lbs_args a = args;
    a.palette = copy;
    run_range<V, Index, K, Implied, Streams>(a, begin, end, n);
}

/// run_range, first copying a palette of at most palette_copy_limit matrices that is not aligned to
/// V's register (32 bytes for AVX2, 64 for AVX-512; a std::vector<glm::mat4> is only 16-byte
/// aligned) to an aligned stack buffer, when the range has at least 4 vertices per matrix:
/// misaligned, one in two of AVX2's 32-byte palette loads straddles a cache line, and every
/// AVX-512 64-byte one (see the tuning table). (Worth it from a few vertices per matrix: a split
/// mesh's small jobs skip it, and the copy of the arguments.)
template <class V, class Index, int K = 0, int Implied = -1, int Streams = -1>
void run_job(const lbs_args& args, std::size_t begin, std::size_t end, std::size_t n, std::size_t palette_size) {
    constexpr std::size_t alignment = V::width * sizeof(float);
    if (reinterpret_cast<std::uintptr_t>(args.palette) % alignment != 0 && palette_size <= palette_copy_limit &&
        end - begin >= 4 * palette_size)
        run_copied<V, Index, K, Implied, Streams>(args, begin, end, n, palette_size);
    else
        run_range<V, Index, K, Implied, Streams>(args, begin, end, n);
}

/// Where run_job<V> starts its first SIMD group in [begin, ...): skin_parallel splits there.
template <class V>
std::size_t first_group(lbs_args a, std::size_t begin) {
    return group_start<V>(a, begin);
}

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_RUN_HPP
