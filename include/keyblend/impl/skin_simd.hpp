// keyblend — the linear-blend skinning kernels: one generic kernel over the lane types of
// pose_simd.hpp, and per lane type the operations that differ (blending a group of vertices'
// matrices, moving vertex attributes between the caller's layout and lanes). Internal:
// namespace keyblend::impl::skin.
//
// SPDX-License-Identifier: MIT
//
// How a group of V::width vertices is skinned (the AVX2 design; SSE2 is the same at width 4):
// 1. Per vertex, its k palette matrices are blended in registers: a 4x4 matrix is two 256-bit
//    halves (columns 0|1 and 2|3), so each influence costs two loads and two FMAs, with no gather
//    (vgatherdps is slow: ~11 cycles on Zen 3). The joint indices of a vertex arrive in one
//    64-bit load and its weights in one 128-bit load broadcast within lanes by shuffles: FP loads
//    (2 per cycle) are what bounds the blend, not FMAs.
// 2. The eight blended matrices are transposed into twelve lane vectors (structure of arrays,
//    one vertex per lane; the projective row is dropped).
// 3. Positions, normals, tangents are moved from the caller's layout into lanes (packed xyz
//    arrays: three 256-bit loads and shuffles; interleaved buffers: one 128-bit load per vertex
//    and a transpose; planar arrays: plain loads; anything else: element by element), transformed
//    eight at a time with FMAs, and moved back the same way.
// The scalar lane type runs the same kernel one vertex at a time: it is the reference, and it
// finishes the vertices a range's SIMD groups leave over.
//
// A NEON lane type would add a lane_ops specialisation (vld1q_f32, vfmaq_f32, vzipq_f32 for the
// transposes) and a group_in_range (vqsubq_u16); the kernel, the modes and the layouts' dispatch
// are shared.
#pragma once

#include "pose_simd.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

// The kernel is one loop body built from many small functions; compilers must inline all of them
// (they otherwise keep the blended matrices in memory around calls), and should not inline the
// element-by-element fallbacks for unusual layouts into it.
// KEYBLEND_SKIN_LAMBDA goes after a lambda's parameter list.
#if defined(__GNUC__) || defined(__clang__)
#define KEYBLEND_SKIN_INLINE inline __attribute__((always_inline))
#define KEYBLEND_SKIN_LAMBDA __attribute__((always_inline))
#define KEYBLEND_SKIN_COLD __attribute__((noinline, cold))
#elif defined(_MSC_VER)
#define KEYBLEND_SKIN_INLINE __forceinline
#define KEYBLEND_SKIN_LAMBDA
#define KEYBLEND_SKIN_COLD __declspec(noinline)
#else
#define KEYBLEND_SKIN_INLINE inline
#define KEYBLEND_SKIN_LAMBDA
#define KEYBLEND_SKIN_COLD
#endif

namespace keyblend {
namespace impl {
namespace skin {

static_assert(sizeof(glm::mat4) == 16 * sizeof(float), "glm::mat4 must be 16 packed floats");

/// Calls f(std::integral_constant<int, I>{}) for I = 0 .. N-1, unrolled: compilers do not unroll
/// the blend's loops on their own, and then keep the blended matrices in memory, not registers.
template <class F, int... I>
KEYBLEND_SKIN_INLINE void unroll_impl(F&& f, std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
KEYBLEND_SKIN_INLINE void unroll(F&& f) {
    unroll_impl(f, std::make_integer_sequence<int, N>{});
}

/// How a float stream is laid out, which decides how the kernels move it in and out of lanes.
enum class layout : unsigned char {
    packed,      ///< components then elements contiguous: stride == components * 4 (vec3 arrays)
    interleaved, ///< components contiguous, elements further apart (AoS vertex buffers)
    planar,      ///< stride == 4: each component an array of its own (SoA)
    general,     ///< anything else: element by element
};

inline layout classify(std::size_t stride, std::size_t component_stride, std::size_t components) {
    if (component_stride == sizeof(float))
        return stride == components * sizeof(float) ? layout::packed : layout::interleaved;
    if (stride == sizeof(float)) return layout::planar;
    return layout::general;
}

struct in_stream {
    const unsigned char* data = nullptr;
    std::size_t stride = 0;
    std::size_t cs = 0;
    layout kind = layout::general;
    const float* at(std::size_t v, std::size_t c = 0) const {
        return reinterpret_cast<const float*>(data + v * stride + c * cs);
    }
};

struct out_stream {
    unsigned char* data = nullptr;
    std::size_t stride = 0;
    std::size_t cs = 0;
    layout kind = layout::general;
    /// Non-temporal stores wanted (packed layout). The AVX2 kernel honours it when the SIMD groups
    /// can start 32-byte aligned (see run_lbs); the other lane types ignore it.
    bool streaming = false;
    float* at(std::size_t v, std::size_t c = 0) const {
        return reinterpret_cast<float*>(data + v * stride + c * cs);
    }
};

/// A validated job, flattened for the kernels.
struct lbs_args {
    const float* palette = nullptr;
    std::size_t last_bone = 0; ///< palette_size - 1: joint indices are clamped to it
    std::size_t k = 0;         ///< slots per vertex
    bool implied = false;      ///< last_weight::implied
    bool inverse_transpose = false;
    const unsigned char* joints = nullptr;
    std::size_t joint_stride = 0, joint_cs = 0;
    const unsigned char* weights = nullptr;
    std::size_t weight_stride = 0, weight_cs = 0;
    const unsigned char* counts = nullptr; ///< null: every vertex uses k slots
    std::size_t count_stride = 0;
    in_stream pos, nrm, tan; ///< nrm.data / tan.data null when not skinned
    out_stream out_pos, out_nrm, out_tan;
};

/// How a SIMD group of the fast path reads its influences.
enum class group_mode {
    general,        ///< runtime strides, every joint index clamped
    strided,        ///< runtime strides; the joints are one array of at most 8 slots per vertex,
                    ///< the group's whole region checked to be within the palette: no clamps
    strided_implied, ///< the same with the last weight implied
    packed,         ///< the loader's layout (K joints, K weights per vertex, vertex after vertex),
                    ///< checked like strided: constant strides, no clamps
    packed_implied, ///< the same with K - 1 weights per vertex (last_weight::implied)
};

// ---------------------------------------------------------------------------------------------
// Reading influences one at a time (scalar path, dynamic counts, validation, DQS)
// ---------------------------------------------------------------------------------------------

/// The number of slots vertex v uses: its count (clamped to k) or k.
inline std::size_t slots_of(const lbs_args& a, std::size_t v) {
    if (!a.counts) return a.k;
    const std::size_t c = a.counts[v * a.count_stride];
    return c < a.k ? c : a.k;
}

template <class Index>
inline std::size_t raw_joint(const lbs_args& a, std::size_t v, std::size_t i) {
    Index j;
    std::memcpy(&j, a.joints + v * a.joint_stride + i * a.joint_cs, sizeof j);
    return j;
}

template <class Index>
inline std::size_t clamped_joint(const lbs_args& a, std::size_t v, std::size_t i) {
    const std::size_t j = raw_joint<Index>(a, v, i);
    return j < a.last_bone ? j : a.last_bone;
}

inline float stored_weight(const lbs_args& a, std::size_t v, std::size_t i) {
    float w;
    std::memcpy(&w, a.weights + v * a.weight_stride + i * a.weight_cs, sizeof w);
    return w;
}

/// Vertex v's influences: clamped joints and weights (the implied one computed as 1 minus the sum
/// of the others, summed in slot order). Returns how many.
template <class Index>
inline std::size_t read_influences(const lbs_args& a, std::size_t v, std::size_t (&joint)[8],
                                   float (&weight)[8]) {
    const std::size_t c = slots_of(a, v);
    float sum = 0.0f;
    for (std::size_t i = 0; i < c; ++i) {
        joint[i] = clamped_joint<Index>(a, v, i);
        weight[i] = (a.implied && i + 1 == c) ? 1.0f - sum : stored_weight(a, v, i);
        sum += weight[i];
    }
    return c;
}

/// How many vertices at the end of a stream a SIMD group must not touch, when it reads `read`
/// bytes from the start of a vertex whose data is `used` bytes long (the over-read lands in the
/// following vertices, which must exist).
inline std::size_t tail_guard(std::size_t read, std::size_t used, std::size_t stride) {
    if (read <= used) return 0;
    return stride == 0 ? static_cast<std::size_t>(-1) / 2 : (read - used + stride - 1) / stride;
}

/// Planar streams (each component an array): one plain load or store per component, in any
/// lane type.
template <class V, std::size_t C>
KEYBLEND_SKIN_INLINE void load_planar(const in_stream& s, std::size_t v, V* (&c)[C]) {
    for (std::size_t i = 0; i < C; ++i) *c[i] = V::load(s.at(v, i));
}
template <class V, std::size_t C>
KEYBLEND_SKIN_INLINE void store_planar(const out_stream& s, std::size_t v, const V (&c)[C]) {
    for (std::size_t i = 0; i < C; ++i) c[i].store(s.at(v, i));
}

/// Element-by-element moves for layouts without a fast path (out of line: rare, and kept out of
/// the kernel's loop body).
template <class V, std::size_t C>
KEYBLEND_SKIN_COLD void load_general(const in_stream& s, std::size_t v, V* (&c)[C]) {
    alignas(32) float t[C][V::width];
    for (std::size_t i = 0; i < V::width; ++i)
        for (std::size_t k = 0; k < C; ++k) t[k][i] = *s.at(v + i, k);
    for (std::size_t k = 0; k < C; ++k) *c[k] = V::load(t[k]);
}
template <class V, std::size_t C>
KEYBLEND_SKIN_COLD void store_general(const out_stream& s, std::size_t v, const V (&c)[C]) {
    alignas(32) float t[C][V::width];
    for (std::size_t k = 0; k < C; ++k) c[k].store(t[k]);
    for (std::size_t i = 0; i < V::width; ++i)
        for (std::size_t k = 0; k < C; ++k) *s.at(v + i, k) = t[k][i];
}

template <class V>
struct lane_ops;

// ---------------------------------------------------------------------------------------------
// f1: one vertex at a time. The reference.
// ---------------------------------------------------------------------------------------------

template <>
struct lane_ops<lanes::f1> {
    using V = lanes::f1;

    /// Vertices at the end of the mesh this lane type cannot process (it reads exactly).
    static std::size_t guard(const lbs_args&, bool) { return 0; }

    template <int K, class Index, group_mode>
    KEYBLEND_SKIN_INLINE static bool blend(const lbs_args& a, std::size_t v, V (&m)[12]) {
        std::size_t joint[8];
        float weight[8];
        const std::size_t c = read_influences<Index>(a, v, joint, weight);
        float r[12] = {};
        for (std::size_t i = 0; i < c; ++i) {
            const float* p = a.palette + 16 * joint[i];
            const float w = weight[i];
            for (int col = 0; col < 4; ++col)
                for (int row = 0; row < 3; ++row) r[3 * col + row] += w * p[4 * col + row];
        }
        for (int e = 0; e < 12; ++e) m[e] = V{r[e]};
        return true;
    }

    KEYBLEND_SKIN_INLINE static void load3(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
        x = V{*s.at(v, 0)};
        y = V{*s.at(v, 1)};
        z = V{*s.at(v, 2)};
    }
    KEYBLEND_SKIN_INLINE static void load4(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
        load3(s, v, x, y, z);
        w = V{*s.at(v, 3)};
    }
    KEYBLEND_SKIN_INLINE static void store3(const out_stream& s, std::size_t v, V x, V y, V z) {
        *s.at(v, 0) = x.v;
        *s.at(v, 1) = y.v;
        *s.at(v, 2) = z.v;
    }
    KEYBLEND_SKIN_INLINE static void store4(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
        store3(s, v, x, y, z);
        *s.at(v, 3) = w.v;
    }
};

// ---------------------------------------------------------------------------------------------
// The fast path (K = k slots, 1 to 8, no per-vertex counts, each vertex's joints and weights
// contiguous). A vertex's joint indices arrive in one or two 64-bit loads and become palette
// offsets in integer registers (clamped unless the group was checked whole); its weights arrive in
// one 128-bit load (two for K > 4) and are broadcast by shuffles.
// ---------------------------------------------------------------------------------------------

/// Stands in for the weights of a job that has none (one influence, implied weight): the kernels
/// then read weights unconditionally, without a test per vertex.
alignas(32) inline constexpr float no_weights[8] = {};

/// Bytes the fast path reads from one vertex's joints when it extracts them vertex by vertex
/// (whole 64-bit words), and from one vertex's weights.
template <class Index>
constexpr std::size_t joint_read(std::size_t k) {
    return 8 * ((k * sizeof(Index) + 7) / 8);
}
constexpr std::size_t weight_read(std::size_t k) { return k <= 4 ? 16 : 32; }

/// True when the job's influences can take the fast path (with per-vertex counts: lbs_counted).
template <class Index>
inline bool fast_path(const lbs_args& a) {
    return a.k >= 1 && a.k <= 8 && a.joint_cs == sizeof(Index) && a.weight_cs == sizeof(float);
}


/// Modes with runtime strides, and what a mode says about the implied weight (1 implied, 0 not,
/// -1 ask the job).
constexpr bool runtime_strides(group_mode m) {
    return m == group_mode::general || m == group_mode::strided || m == group_mode::strided_implied;
}
constexpr int implied_of(group_mode m) {
    return m == group_mode::general ? -1
           : (m == group_mode::strided_implied || m == group_mode::packed_implied) ? 1
                                                                                    : 0;
}
constexpr bool packed(group_mode m) { return m == group_mode::packed || m == group_mode::packed_implied; }

/// True when the joints are one array of at most 8 slots per vertex, so a group's indices are one
/// region group_in_range can check (with the slots between vertices, which must then be within
/// the palette too: compact_influences writes joint 0 there).
template <class Index>
inline bool joints_checkable(const lbs_args& a) {
    return a.joint_cs == sizeof(Index) && a.joint_stride % sizeof(Index) == 0 &&
           a.joint_stride <= 8 * sizeof(Index) && a.joint_stride >= a.k * sizeof(Index);
}

/// The group mode for blending K slots per vertex that a job's layout allows (before its indices
/// are checked).
template <int K, class Index>
inline group_mode mode_for(const lbs_args& a) {
    if (!joints_checkable<Index>(a)) return group_mode::general;
    const std::size_t stored = a.implied ? K - 1 : K;
    if (a.joint_stride == K * sizeof(Index) && a.weight_stride == stored * sizeof(float))
        return a.implied ? group_mode::packed_implied : group_mode::packed;
    return a.implied ? group_mode::strided_implied : group_mode::strided;
}

/// The over-read guard of the SIMD lane types: joints and weights on the fast path, and 16-byte
/// loads of interleaved xyz streams.
template <class Index>
inline std::size_t simd_guard(const lbs_args& a, bool fast) {
    std::size_t g = 0;
    const auto more = [&g](std::size_t x) { g = x > g ? x : g; };
    if (fast) {
        more(tail_guard(joint_read<Index>(a.k), a.k * sizeof(Index), a.joint_stride));
        // group_in_range reads each vertex's whole stride of slots.
        if (joints_checkable<Index>(a)) more(tail_guard(a.joint_stride, a.k * sizeof(Index), a.joint_stride));
        const std::size_t stored = a.implied ? a.k - 1 : a.k;
        if (stored) more(tail_guard(weight_read(a.k), stored * sizeof(float), a.weight_stride));
    }
    if (a.pos.kind == layout::interleaved) more(tail_guard(16, 12, a.pos.stride));
    if (a.nrm.data && a.nrm.kind == layout::interleaved) more(tail_guard(16, 12, a.nrm.stride));
    return g;
}

/// The K joints at p (one vertex's) as offsets into the palette in floats (16 per matrix: a
/// float index folds into the loads' addressing, a byte offset costs an add). Clamped to the
/// palette when Clamp; otherwise the caller has checked them (group_in_range).
template <int K, class Index, bool Clamp = true>
KEYBLEND_SKIN_INLINE void fast_joints(const lbs_args& a, const unsigned char* p, std::uint32_t* offset) {
    constexpr int per_word = 8 / int(sizeof(Index));
    std::uint64_t q[(K + per_word - 1) / per_word];
    std::memcpy(q, p, sizeof q);
    constexpr unsigned bits = 8 * sizeof(Index);
    constexpr std::uint64_t mask = (std::uint64_t(1) << bits) - 1;
    unroll<K>([&](auto i) KEYBLEND_SKIN_LAMBDA {
        const std::size_t j = static_cast<std::size_t>((q[i / per_word] >> (bits * unsigned(i % per_word))) & mask);
        offset[i] = static_cast<std::uint32_t>(16 * (Clamp && j > a.last_bone ? a.last_bone : j));
    });
}

#if defined(KEYBLEND_LANES_SSE2) || defined(KEYBLEND_LANES_AVX2)
/// True when every joint slot of the W vertices from v (their whole region, joints_checkable) is
/// within the palette: the group may then skip per-index clamping. The one check costs a few
/// vector instructions per group; a compare and a conditional move per index cost more than the
/// blend's FMAs. The bytes checked are the bytes the blend reads: outputs never alias the joints.
/// Packed: the region is W * K slots, known at compile time.
template <std::size_t W, int K, class Index, bool Packed>
KEYBLEND_SKIN_INLINE bool group_in_range(const lbs_args& a, std::size_t v) {
    const unsigned char* p = a.joints + v * a.joint_stride;
    const std::size_t bytes = Packed ? W * K * sizeof(Index) : W * a.joint_stride;
    const std::size_t last_value = sizeof(Index) == 2 ? (a.last_bone < 65535 ? a.last_bone : 65535)
                                                      : (a.last_bone < 255 ? a.last_bone : 255);
    const __m128i last = sizeof(Index) == 2 ? _mm_set1_epi16(static_cast<short>(last_value))
                                            : _mm_set1_epi8(static_cast<char>(last_value));
    const auto over = [&last](__m128i x) KEYBLEND_SKIN_LAMBDA {
        return sizeof(Index) == 2 ? _mm_subs_epu16(x, last) : _mm_subs_epu8(x, last);
    };
    __m128i any = _mm_setzero_si128();
    std::size_t i = 0;
    if constexpr (Packed) {
        unroll<int(W * K * sizeof(Index) / 16)>([&](auto c) KEYBLEND_SKIN_LAMBDA {
            any = _mm_or_si128(any, over(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * c))));
        });
        i = W * K * sizeof(Index) / 16 * 16;
    } else {
        for (; i + 16 <= bytes; i += 16)
            any = _mm_or_si128(any, over(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
    }
    if (i + 8 <= bytes) {
        any = _mm_or_si128(any, over(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + i))));
        i += 8;
    }
    bool ok = _mm_movemask_epi8(_mm_cmpeq_epi8(any, _mm_setzero_si128())) == 0xFFFF;
    for (; i < bytes; i += sizeof(Index)) { // a few bytes left over (uint8, odd strides)
        Index j;
        std::memcpy(&j, p + i, sizeof j);
        ok = ok && j <= a.last_bone;
    }
    return ok;
}
#endif

/// The palette matrix at an offset in floats.
KEYBLEND_SKIN_INLINE const float* matrix_at(const lbs_args& a, std::uint32_t offset) {
    return a.palette + offset;
}

// ---------------------------------------------------------------------------------------------
// f4: SSE2 (FMA when the compiler targets it).
// ---------------------------------------------------------------------------------------------
#if defined(KEYBLEND_LANES_SSE2) || defined(KEYBLEND_LANES_AVX2)

/// rows r0..r3 (x y z w each) -> x, y, z of the four (SSE2 transpose without the w row).
KEYBLEND_SKIN_INLINE void transpose3(__m128 r0, __m128 r1, __m128 r2, __m128 r3, __m128& x, __m128& y, __m128& z) {
    const __m128 t0 = _mm_unpacklo_ps(r0, r1), t1 = _mm_unpacklo_ps(r2, r3);
    const __m128 t2 = _mm_unpackhi_ps(r0, r1), t3 = _mm_unpackhi_ps(r2, r3);
    x = _mm_movelh_ps(t0, t1);
    y = _mm_movehl_ps(t1, t0);
    z = _mm_movelh_ps(t2, t3);
}

template <>
struct lane_ops<lanes::f4> {
    using V = lanes::f4;

    template <class Index>
    static std::size_t guard(const lbs_args& a, bool fast) { return simd_guard<Index>(a, fast); }

    /// Columns c[0..3] of vertex v's blended matrix; on the fast path jp / wp point at its joints
    /// and weights.
    /// Implied: 1 when the last weight is implied, 0 when not, -1 to ask the job.
    template <int K, class Index, bool Clamp, int Implied>
    KEYBLEND_SKIN_INLINE static void blend_vertex(const lbs_args& a, std::size_t v, const unsigned char* jp,
                                                  const unsigned char* wp, __m128 (&c)[4]) {
        if constexpr (K == 0) {
            std::size_t joint[8];
            float weight[8];
            const std::size_t n = read_influences<Index>(a, v, joint, weight);
            for (int q = 0; q < 4; ++q) c[q] = _mm_setzero_ps();
            for (std::size_t i = 0; i < n; ++i) {
                const float* p = a.palette + 16 * joint[i];
                const __m128 w = _mm_set1_ps(weight[i]);
                for (int q = 0; q < 4; ++q)
                    c[q] = lanes::fmadd(lanes::f4{w}, lanes::f4{_mm_loadu_ps(p + 4 * q)}, lanes::f4{c[q]}).v;
            }
        } else {
            (void)v;
            std::uint32_t off[K];
            fast_joints<K, Index, Clamp>(a, jp, off);
            __m128 w[K];
            load_weights<K, Implied>(a, wp, w);
            const float* p0 = matrix_at(a, off[0]);
            unroll<4>([&](auto q) KEYBLEND_SKIN_LAMBDA { c[q] = _mm_mul_ps(w[0], _mm_loadu_ps(p0 + 4 * q)); });
            unroll<K - 1>([&](auto i) KEYBLEND_SKIN_LAMBDA {
                const float* p = matrix_at(a, off[i + 1]);
                unroll<4>([&](auto q) KEYBLEND_SKIN_LAMBDA {
                    c[q] = lanes::fmadd(lanes::f4{w[i + 1]}, lanes::f4{_mm_loadu_ps(p + 4 * q)}, lanes::f4{c[q]}).v;
                });
            });
        }
    }

    /// The K weights at wp (one vertex's), each broadcast to a register (the implied one computed).
    template <int K, int Implied>
    KEYBLEND_SKIN_INLINE static void load_weights(const lbs_args& a, const unsigned char* wp, __m128 (&w)[K]) {
        const __m128 lo = _mm_loadu_ps(reinterpret_cast<const float*>(wp));
        __m128 hi = lo;
        if constexpr (K > 4) hi = _mm_loadu_ps(reinterpret_cast<const float*>(wp) + 4);
        unroll<K>([&](auto i) KEYBLEND_SKIN_LAMBDA {
            const __m128 src = i < 4 ? lo : hi;
            w[i] = _mm_shuffle_ps(src, src, (i % 4) * 0x55);
        });
        if (Implied < 0 ? a.implied : Implied == 1) {
            // 1 - sum of the others, summed in slot order (as read_influences does).
            __m128 sum = _mm_setzero_ps();
            unroll<K - 1>([&](auto i) KEYBLEND_SKIN_LAMBDA { sum = _mm_add_ps(sum, w[i]); });
            w[K - 1] = _mm_sub_ps(_mm_set1_ps(1.0f), sum);
        }
    }

    template <int K, class Index, group_mode Mode>
    KEYBLEND_SKIN_INLINE static void blend_group(const lbs_args& a, std::size_t v, __m128 (&c)[4][4]) {
        if constexpr (runtime_strides(Mode)) {
            const unsigned char* jp = a.joints + v * a.joint_stride;
            const unsigned char* wp = a.weights + v * a.weight_stride;
            unroll<4>([&](auto i) KEYBLEND_SKIN_LAMBDA {
                blend_vertex<K, Index, Mode == group_mode::general, implied_of(Mode)>(a, v + std::size_t(i), jp,
                                                                                       wp, c[i]);
                jp += a.joint_stride;
                wp += a.weight_stride;
            });
        } else {
            constexpr int implied = implied_of(Mode);
            constexpr std::size_t js = K * sizeof(Index), ws = (K - implied) * sizeof(float);
            const unsigned char* jp = a.joints + v * js;
            const unsigned char* wp = a.weights + v * ws;
            unroll<4>([&](auto i) KEYBLEND_SKIN_LAMBDA {
                blend_vertex<K, Index, false, implied>(a, v + std::size_t(i), jp + i * js, wp + i * ws, c[i]);
            });
        }
    }

    /// False (and nothing blended) when a packed-mode group holds an index outside the palette.
    template <int K, class Index, group_mode Mode>
    KEYBLEND_SKIN_INLINE static bool blend(const lbs_args& a, std::size_t v, V (&m)[12]) {
        if constexpr (Mode != group_mode::general)
            if (!group_in_range<4, K, Index, packed(Mode)>(a, v)) return false;
        __m128 c[4][4];
        blend_group<K, Index, Mode>(a, v, c);
        unroll<4>([&](auto q) KEYBLEND_SKIN_LAMBDA {
            transpose3(c[0][q], c[1][q], c[2][q], c[3][q], m[3 * q].v, m[3 * q + 1].v, m[3 * q + 2].v);
        });
        return true;
    }

    KEYBLEND_SKIN_INLINE static void load3(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
        switch (s.kind) {
        case layout::packed: {
            const float* p = s.at(v);
            const __m128 l0 = _mm_loadu_ps(p), l1 = _mm_loadu_ps(p + 4), l2 = _mm_loadu_ps(p + 8);
            // l0 = x0 y0 z0 x1, l1 = y1 z1 x2 y2, l2 = z2 x3 y3 z3
            const __m128 x23 = _mm_shuffle_ps(l1, l2, _MM_SHUFFLE(1, 1, 2, 2)); // x2 x2 x3 x3
            x.v = _mm_shuffle_ps(l0, x23, _MM_SHUFFLE(2, 0, 3, 0));
            const __m128 y01 = _mm_shuffle_ps(l0, l1, _MM_SHUFFLE(0, 0, 1, 1)); // y0 y0 y1 y1
            const __m128 y23 = _mm_shuffle_ps(l1, l2, _MM_SHUFFLE(2, 2, 3, 3)); // y2 y2 y3 y3
            y.v = _mm_shuffle_ps(y01, y23, _MM_SHUFFLE(2, 0, 2, 0));
            const __m128 z01 = _mm_shuffle_ps(l0, l1, _MM_SHUFFLE(1, 1, 2, 2)); // z0 z0 z1 z1
            z.v = _mm_shuffle_ps(z01, l2, _MM_SHUFFLE(3, 0, 2, 0));
            return;
        }
        case layout::interleaved:
            transpose3(_mm_loadu_ps(s.at(v)), _mm_loadu_ps(s.at(v + 1)), _mm_loadu_ps(s.at(v + 2)),
                       _mm_loadu_ps(s.at(v + 3)), x.v, y.v, z.v);
            return;
        default: return; // planar and general streams: load_xyz
        }
    }

    KEYBLEND_SKIN_INLINE static void load4(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
        __m128 r0 = _mm_loadu_ps(s.at(v)), r1 = _mm_loadu_ps(s.at(v + 1));
        __m128 r2 = _mm_loadu_ps(s.at(v + 2)), r3 = _mm_loadu_ps(s.at(v + 3));
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        x.v = r0;
        y.v = r1;
        z.v = r2;
        w.v = r3;
    }

    /// (No non-temporal stores here: 16-byte ones were measured slower than ordinary stores.)
    KEYBLEND_SKIN_INLINE static void put(const out_stream&, float* p, __m128 r) { _mm_storeu_ps(p, r); }

    KEYBLEND_SKIN_INLINE static void store3(const out_stream& s, std::size_t v, V x, V y, V z) {
        switch (s.kind) {
        case layout::packed: {
            const __m128 xy01 = _mm_unpacklo_ps(x.v, y.v); // x0 y0 x1 y1
            const __m128 xy23 = _mm_unpackhi_ps(x.v, y.v); // x2 y2 x3 y3
            const __m128 zx01 = _mm_shuffle_ps(z.v, x.v, _MM_SHUFFLE(1, 1, 0, 0)); // z0 z0 x1 x1
            const __m128 yz11 = _mm_shuffle_ps(y.v, z.v, _MM_SHUFFLE(1, 1, 1, 1)); // y1 y1 z1 z1
            const __m128 zx23 = _mm_shuffle_ps(z.v, xy23, _MM_SHUFFLE(2, 2, 2, 2)); // z2 z2 x3 x3
            const __m128 yz33 = _mm_shuffle_ps(xy23, z.v, _MM_SHUFFLE(3, 3, 3, 3)); // y3 y3 z3 z3
            float* p = s.at(v);
            put(s, p, _mm_shuffle_ps(xy01, zx01, _MM_SHUFFLE(3, 0, 1, 0)));     // x0 y0 z0 x1
            put(s, p + 4, _mm_shuffle_ps(yz11, xy23, _MM_SHUFFLE(1, 0, 2, 0))); // y1 z1 x2 y2
            put(s, p + 8, _mm_shuffle_ps(zx23, yz33, _MM_SHUFFLE(2, 0, 2, 0))); // z2 x3 y3 z3
            return;
        }
        case layout::interleaved: {
            // Exactly 12 bytes per vertex: what follows xyz in the caller's buffer is not ours.
            const __m128 xy01 = _mm_unpacklo_ps(x.v, y.v), xy23 = _mm_unpackhi_ps(x.v, y.v);
            const __m128 zz01 = _mm_unpacklo_ps(z.v, z.v), zz23 = _mm_unpackhi_ps(z.v, z.v);
            const __m128 r[4] = {_mm_movelh_ps(xy01, zz01), _mm_movehl_ps(zz01, xy01),
                                 _mm_movelh_ps(xy23, zz23), _mm_movehl_ps(zz23, xy23)};
            for (int i = 0; i < 4; ++i) {
                float* p = s.at(v + std::size_t(i));
                _mm_storel_pi(reinterpret_cast<__m64*>(p), r[i]);
                _mm_store_ss(p + 2, _mm_movehl_ps(r[i], r[i]));
            }
            return;
        }
        default: return; // planar and general streams: store_xyz
        }
    }

    KEYBLEND_SKIN_INLINE static void store4(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
        __m128 r0 = x.v, r1 = y.v, r2 = z.v, r3 = w.v;
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_storeu_ps(s.at(v), r0);
        _mm_storeu_ps(s.at(v + 1), r1);
        _mm_storeu_ps(s.at(v + 2), r2);
        _mm_storeu_ps(s.at(v + 3), r3);
    }
};
#endif

// ---------------------------------------------------------------------------------------------
// f8: AVX2 + FMA.
// ---------------------------------------------------------------------------------------------
#if defined(KEYBLEND_LANES_AVX2)

/// Four blended matrices s[i] (columns p|q: two columns of one vertex) -> per column, x/y/z of
/// the four vertices: u[0] = px|qx, u[1] = py|qy, u[2] = pz|qz (low lane column p, high lane q).
KEYBLEND_SKIN_INLINE void transpose_half(const __m256 (&s)[4], __m256 (&u)[3]) {
    const __m256 t0 = _mm256_unpacklo_ps(s[0], s[1]), t1 = _mm256_unpackhi_ps(s[0], s[1]);
    const __m256 t2 = _mm256_unpacklo_ps(s[2], s[3]), t3 = _mm256_unpackhi_ps(s[2], s[3]);
    u[0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    u[1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    u[2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
}

/// Rows of 4 floats, vertices i (low lane) and i + 4 (high lane) in r[i] -> x, y, z of the eight.
KEYBLEND_SKIN_INLINE void transpose3(const __m256 (&r)[4], __m256& x, __m256& y, __m256& z) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpacklo_ps(r[2], r[3]);
    const __m256 t2 = _mm256_unpackhi_ps(r[0], r[1]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    x = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0));
    y = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2));
    z = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0));
}

template <>
struct lane_ops<lanes::f8> {
    using V = lanes::f8;

    template <class Index>
    static std::size_t guard(const lbs_args& a, bool fast) { return simd_guard<Index>(a, fast); }

    /// Vertex v's blended matrix as columns 0|1 (ra) and 2|3 (rb), for the dynamic path.
    template <class Index>
    KEYBLEND_SKIN_INLINE static void blend_dynamic(const lbs_args& a, std::size_t v, __m256& ra, __m256& rb) {
        std::size_t joint[8];
        float weight[8];
        const std::size_t n = read_influences<Index>(a, v, joint, weight);
        ra = _mm256_setzero_ps();
        rb = _mm256_setzero_ps();
        for (std::size_t i = 0; i < n; ++i) {
            const float* p = a.palette + 16 * joint[i];
            const __m256 w = _mm256_set1_ps(weight[i]);
            ra = _mm256_fmadd_ps(w, _mm256_loadu_ps(p), ra);
            rb = _mm256_fmadd_ps(w, _mm256_loadu_ps(p + 8), rb);
        }
    }

    /// The same on the fast path: off holds the vertex's K palette offsets, wp its weights.
    /// Implied: 1 when the last weight is implied, 0 when not, -1 to ask the job.
    template <int K, int Implied>
    KEYBLEND_SKIN_INLINE static void blend_fast(const lbs_args& a, const std::uint32_t* off,
                                                const unsigned char* wp, __m256& ra, __m256& rb) {
        // One 128-bit load (two for K > 4), broadcast within lanes by shuffles: FP loads are the
        // scarce resource of the blend, shuffles are not.
        const __m256 lo = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(wp));
        __m256 hi = lo;
        if constexpr (K > 4) hi = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(wp + 16));
        __m256 w[K];
        unroll<K>([&](auto i) KEYBLEND_SKIN_LAMBDA {
            const __m256 src = i < 4 ? lo : hi;
            w[i] = _mm256_shuffle_ps(src, src, (i % 4) * 0x55);
        });
        if (Implied < 0 ? a.implied : Implied == 1) {
            __m256 sum = _mm256_setzero_ps();
            unroll<K - 1>([&](auto i) KEYBLEND_SKIN_LAMBDA { sum = _mm256_add_ps(sum, w[i]); });
            w[K - 1] = _mm256_sub_ps(_mm256_set1_ps(1.0f), sum);
        }
        // Two base pointers, so that each load folds base + index * 4 into its address instead of
        // the compiler computing the matrix's address once with an extra instruction.
        const float* lo_half = a.palette;
        const float* hi_half = a.palette + 8;
        ra = _mm256_mul_ps(w[0], _mm256_loadu_ps(lo_half + off[0]));
        rb = _mm256_mul_ps(w[0], _mm256_loadu_ps(hi_half + off[0]));
        unroll<K - 1>([&](auto i) KEYBLEND_SKIN_LAMBDA {
            ra = _mm256_fmadd_ps(w[i + 1], _mm256_loadu_ps(lo_half + off[i + 1]), ra);
            rb = _mm256_fmadd_ps(w[i + 1], _mm256_loadu_ps(hi_half + off[i + 1]), rb);
        });
    }

    /// Blends vertices v .. v + 7, four at a time (so the live registers fit AVX2's sixteen), each
    /// four partly transposed: ua / ub hold columns 0|1 / 2|3 of vertices 4h .. 4h + 3.
    template <int K, class Index, group_mode Mode>
    KEYBLEND_SKIN_INLINE static void blend_group(const lbs_args& a, std::size_t v, __m256 (&ua)[2][3],
                                                 __m256 (&ub)[2][3]) {
        // In the packed modes the strides are constants: the eight vertices' addresses fold into
        // the loads, leaving integer registers for the palette offsets.
        constexpr int implied = implied_of(Mode);
        constexpr std::size_t js = K * sizeof(Index), ws = (K > 0 ? K - (implied == 1) : 0) * sizeof(float);
        constexpr bool general = runtime_strides(Mode);
        const unsigned char* jp = a.joints + v * (general ? a.joint_stride : js);
        const unsigned char* wp = a.weights + v * (general ? a.weight_stride : ws);
        unroll<2>([&](auto h) KEYBLEND_SKIN_LAMBDA {
            __m256 sa[4], sb[4];
            unroll<4>([&](auto i) KEYBLEND_SKIN_LAMBDA {
                if constexpr (K == 0) {
                    blend_dynamic<Index>(a, v + std::size_t(4 * h + i), sa[i], sb[i]);
                } else if constexpr (general) {
                    std::uint32_t off[K];
                    fast_joints<K, Index, Mode == group_mode::general>(a, jp, off);
                    blend_fast<K, implied>(a, off, wp, sa[i], sb[i]);
                    jp += a.joint_stride;
                    wp += a.weight_stride;
                } else {
                    constexpr std::size_t n = 4 * h + i;
                    std::uint32_t off[K];
                    fast_joints<K, Index, false>(a, jp + n * js, off);
                    blend_fast<K, implied>(a, off, wp + n * ws, sa[i], sb[i]);
                }
            });
            transpose_half(sa, ua[h]);
            transpose_half(sb, ub[h]);
        });
    }

    /// False (and nothing blended) when a packed-mode group holds an index outside the palette.
    template <int K, class Index, group_mode Mode>
    KEYBLEND_SKIN_INLINE static bool blend(const lbs_args& a, std::size_t v, V (&m)[12]) {
        if constexpr (Mode != group_mode::general)
            if (!group_in_range<8, K, Index, packed(Mode)>(a, v)) return false;
        __m256 ua[2][3], ub[2][3];
        blend_group<K, Index, Mode>(a, v, ua, ub);
        for (int r = 0; r < 3; ++r) {
            m[r].v = _mm256_permute2f128_ps(ua[0][r], ua[1][r], 0x20);     // column 0
            m[3 + r].v = _mm256_permute2f128_ps(ua[0][r], ua[1][r], 0x31); // column 1
            m[6 + r].v = _mm256_permute2f128_ps(ub[0][r], ub[1][r], 0x20); // column 2
            m[9 + r].v = _mm256_permute2f128_ps(ub[0][r], ub[1][r], 0x31); // translation
        }
        return true;
    }

    /// 16 bytes of each of eight vertices: vertex i in the low lane of r[i], i + 4 in the high lane.
    KEYBLEND_SKIN_INLINE static void load_rows(const in_stream& s, std::size_t v, __m256 (&r)[4]) {
        const unsigned char* lo = s.data + v * s.stride;
        const unsigned char* hi = lo + 4 * s.stride;
        unroll<4>([&](auto i) KEYBLEND_SKIN_LAMBDA {
            r[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(reinterpret_cast<const float*>(lo))),
                                        _mm_loadu_ps(reinterpret_cast<const float*>(hi)), 1);
            lo += s.stride;
            hi += s.stride;
        });
    }

    KEYBLEND_SKIN_INLINE static void load3(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
        switch (s.kind) {
        case layout::packed: {
            const float* p = s.at(v);
            const __m256 l0 = _mm256_loadu_ps(p), l1 = _mm256_loadu_ps(p + 8);
            const __m256 l2 = _mm256_loadu_ps(p + 16);
            // Lanes: m03 = vertices 0,1 | 4,5 (x0 y0 z0 x1 | x4 y4 z4 x5), m14 = (y1 z1 x2 y2 |
            // y5 z5 x6 y6), m25 = (z2 x3 y3 z3 | z6 x7 y7 z7); then the SSE shuffles per lane.
            const __m256 m03 = _mm256_blend_ps(l0, l1, 0xF0);
            const __m256 m14 = _mm256_permute2f128_ps(l0, l2, 0x21);
            const __m256 m25 = _mm256_blend_ps(l1, l2, 0xF0);
            const __m256 xy = _mm256_shuffle_ps(m14, m25, _MM_SHUFFLE(2, 1, 3, 2));
            const __m256 yz = _mm256_shuffle_ps(m03, m14, _MM_SHUFFLE(1, 0, 2, 1));
            x.v = _mm256_shuffle_ps(m03, xy, _MM_SHUFFLE(2, 0, 3, 0));
            y.v = _mm256_shuffle_ps(yz, xy, _MM_SHUFFLE(3, 1, 2, 0));
            z.v = _mm256_shuffle_ps(yz, m25, _MM_SHUFFLE(3, 0, 3, 1));
            return;
        }
        case layout::interleaved: {
            __m256 r[4];
            load_rows(s, v, r);
            transpose3(r, x.v, y.v, z.v);
            return;
        }
        default: return; // planar and general streams: load_xyz
        }
    }

    /// Rows of 4 floats (vertex i low lane, i + 4 high lane) <-> x, y, z, w of eight vertices.
    KEYBLEND_SKIN_INLINE static void transpose4(__m256& a, __m256& b, __m256& c, __m256& d) {
        const __m256 t0 = _mm256_unpacklo_ps(a, b), t1 = _mm256_unpacklo_ps(c, d);
        const __m256 t2 = _mm256_unpackhi_ps(a, b), t3 = _mm256_unpackhi_ps(c, d);
        a = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0));
        b = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2));
        c = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0));
        d = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2));
    }

    KEYBLEND_SKIN_INLINE static void load4(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
        __m256 r[4];
        load_rows(s, v, r);
        transpose4(r[0], r[1], r[2], r[3]);
        x.v = r[0];
        y.v = r[1];
        z.v = r[2];
        w.v = r[3];
    }

    /// Non-temporal stores only 32 bytes at a time, 32-byte aligned (run_lbs arranges it): split
    /// into 16-byte ones they were measured at half the speed of ordinary stores.
    KEYBLEND_SKIN_INLINE static void put(const out_stream& s, float* p, __m256 r) {
        if (s.streaming)
            _mm256_stream_ps(p, r);
        else
            _mm256_storeu_ps(p, r);
    }

    KEYBLEND_SKIN_INLINE static void store3(const out_stream& s, std::size_t v, V x, V y, V z) {
        switch (s.kind) {
        case layout::packed: {
            // The inverse of load3's packed case.
            const __m256 rxy = _mm256_shuffle_ps(x.v, y.v, _MM_SHUFFLE(2, 0, 2, 0));
            const __m256 ryz = _mm256_shuffle_ps(y.v, z.v, _MM_SHUFFLE(3, 1, 3, 1));
            const __m256 rzx = _mm256_shuffle_ps(z.v, x.v, _MM_SHUFFLE(3, 1, 2, 0));
            const __m256 r03 = _mm256_shuffle_ps(rxy, rzx, _MM_SHUFFLE(2, 0, 2, 0));
            const __m256 r14 = _mm256_shuffle_ps(ryz, rxy, _MM_SHUFFLE(3, 1, 2, 0));
            const __m256 r25 = _mm256_shuffle_ps(rzx, ryz, _MM_SHUFFLE(3, 1, 3, 1));
            float* p = s.at(v);
            put(s, p, _mm256_permute2f128_ps(r03, r14, 0x20));
            put(s, p + 8, _mm256_blend_ps(r25, r03, 0xF0));
            put(s, p + 16, _mm256_permute2f128_ps(r14, r25, 0x31));
            return;
        }
        case layout::interleaved: {
            // Exactly 12 bytes per vertex: what follows xyz in the caller's buffer is not ours.
            const __m256 xy01 = _mm256_unpacklo_ps(x.v, y.v), xy23 = _mm256_unpackhi_ps(x.v, y.v);
            const __m256 zz01 = _mm256_unpacklo_ps(z.v, z.v), zz23 = _mm256_unpackhi_ps(z.v, z.v);
            const __m256 r[4] = {_mm256_shuffle_ps(xy01, zz01, _MM_SHUFFLE(1, 0, 1, 0)),
                                 _mm256_shuffle_ps(xy01, zz01, _MM_SHUFFLE(3, 2, 3, 2)),
                                 _mm256_shuffle_ps(xy23, zz23, _MM_SHUFFLE(1, 0, 1, 0)),
                                 _mm256_shuffle_ps(xy23, zz23, _MM_SHUFFLE(3, 2, 3, 2))};
            unsigned char* p = s.data + v * s.stride;
            unsigned char* q = p + 4 * s.stride;
            unroll<4>([&](auto i) KEYBLEND_SKIN_LAMBDA {
                const __m128 lo = _mm256_castps256_ps128(r[i]), hi = _mm256_extractf128_ps(r[i], 1);
                _mm_storel_pi(reinterpret_cast<__m64*>(p), lo);
                _mm_store_ss(reinterpret_cast<float*>(p) + 2, _mm_movehl_ps(lo, lo));
                _mm_storel_pi(reinterpret_cast<__m64*>(q), hi);
                _mm_store_ss(reinterpret_cast<float*>(q) + 2, _mm_movehl_ps(hi, hi));
                p += s.stride;
                q += s.stride;
            });
            return;
        }
        default: return; // planar and general streams: store_xyz
        }
    }

    KEYBLEND_SKIN_INLINE static void store4(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
        __m256 r0 = x.v, r1 = y.v, r2 = z.v, r3 = w.v;
        transpose4(r0, r1, r2, r3);
        const __m256 r[4] = {r0, r1, r2, r3};
        unsigned char* p = s.data + v * s.stride;
        unsigned char* q = p + 4 * s.stride;
        unroll<4>([&](auto i) KEYBLEND_SKIN_LAMBDA {
            _mm_storeu_ps(reinterpret_cast<float*>(p), _mm256_castps256_ps128(r[i]));
            _mm_storeu_ps(reinterpret_cast<float*>(q), _mm256_extractf128_ps(r[i], 1));
            p += s.stride;
            q += s.stride;
        });
    }
};
#endif

// ---------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------

// Moving attributes between the caller's layout and lanes: each lane type moves packed and
// interleaved streams its own way; planar and element-by-element streams are the same in all.
template <class V>
KEYBLEND_SKIN_INLINE void load_xyz(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
    if (s.kind == layout::packed || s.kind == layout::interleaved) return lane_ops<V>::load3(s, v, x, y, z);
    V* c[3] = {&x, &y, &z};
    s.kind == layout::planar ? load_planar(s, v, c) : load_general(s, v, c);
}
template <class V>
KEYBLEND_SKIN_INLINE void load_xyzw(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
    if (s.kind == layout::packed || s.kind == layout::interleaved) return lane_ops<V>::load4(s, v, x, y, z, w);
    V* c[4] = {&x, &y, &z, &w};
    s.kind == layout::planar ? load_planar(s, v, c) : load_general(s, v, c);
}
template <class V>
KEYBLEND_SKIN_INLINE void store_xyz(const out_stream& s, std::size_t v, V x, V y, V z) {
    if (s.kind == layout::packed || s.kind == layout::interleaved) return lane_ops<V>::store3(s, v, x, y, z);
    const V c[3] = {x, y, z};
    s.kind == layout::planar ? store_planar(s, v, c) : store_general(s, v, c);
}
template <class V>
KEYBLEND_SKIN_INLINE void store_xyzw(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
    if (s.kind == layout::packed || s.kind == layout::interleaved) return lane_ops<V>::store4(s, v, x, y, z, w);
    const V c[4] = {x, y, z, w};
    s.kind == layout::planar ? store_planar(s, v, c) : store_general(s, v, c);
}

template <class V, int K, class Index, group_mode Mode>
void lbs_kernel(const lbs_args& args, std::size_t begin, std::size_t end);

/// A packed-mode group that holds an index outside the palette (invalid data, which validate()
/// reports): skinned with clamping, out of line so that the packed kernel's loop stays lean.
template <class V, int K, class Index>
KEYBLEND_SKIN_COLD void lbs_group_clamped(const lbs_args& a, std::size_t v) {
    lbs_kernel<V, K, Index, group_mode::general>(a, v, v + V::width);
}

/// Skins [begin, end), V::width vertices per step. Preconditions: (end - begin) % V::width == 0,
/// no group reaches the vertices lane_ops<V>::guard excludes; for K > 0, fast_path(a), no counts,
/// and Mode allowed by mode_for<K>(a). Each mode is its own function: with several group variants
/// in one loop body compilers run out of integer registers.
template <class V, int K, class Index, group_mode Mode>
void lbs_kernel(const lbs_args& args, std::size_t begin, std::size_t end) {
    using ops = lane_ops<V>;
    // A local copy: the compiler then knows the output stores cannot change it, and keeps the
    // pointers and strides in registers instead of reloading them for every vertex.
    const lbs_args a = args;
    using lanes::fmadd;
    for (std::size_t v = begin; v < end; v += V::width) {
        // m[3c + r]: column c, row r of each lane's blended matrix (c = 3: translation).
        V m[12];
        if (!ops::template blend<K, Index, Mode>(a, v, m)) {
            if constexpr (Mode != group_mode::general) lbs_group_clamped<V, K, Index>(a, v);
            continue;
        }
        V x, y, z, w;
        load_xyz(a.pos, v, x, y, z);
        store_xyz(a.out_pos, v, fmadd(m[0], x, fmadd(m[3], y, fmadd(m[6], z, m[9]))),
                    fmadd(m[1], x, fmadd(m[4], y, fmadd(m[7], z, m[10]))),
                    fmadd(m[2], x, fmadd(m[5], y, fmadd(m[8], z, m[11]))));
        if (a.nrm.data) {
            load_xyz(a.nrm, v, x, y, z);
            if (a.inverse_transpose) {
                // A^-T n = (n.x (c1 x c2) + n.y (c2 x c0) + n.z (c0 x c1)) / det(A).
                const V k0x = m[4] * m[8] - m[5] * m[7], k0y = m[5] * m[6] - m[3] * m[8],
                        k0z = m[3] * m[7] - m[4] * m[6];
                const V k1x = m[7] * m[2] - m[8] * m[1], k1y = m[8] * m[0] - m[6] * m[2],
                        k1z = m[6] * m[1] - m[7] * m[0];
                const V k2x = m[1] * m[5] - m[2] * m[4], k2y = m[2] * m[3] - m[0] * m[5],
                        k2z = m[0] * m[4] - m[1] * m[3];
                const V det = fmadd(m[0], k0x, fmadd(m[1], k0y, m[2] * k0z));
                const V one = V::set1(1.0f);
                const V inv = select(det == V::set1(0.0f), one, one / det);
                store_xyz(a.out_nrm, v, fmadd(k0x, x, fmadd(k1x, y, k2x * z)) * inv,
                            fmadd(k0y, x, fmadd(k1y, y, k2y * z)) * inv,
                            fmadd(k0z, x, fmadd(k1z, y, k2z * z)) * inv);
            } else {
                store_xyz(a.out_nrm, v, fmadd(m[0], x, fmadd(m[3], y, m[6] * z)),
                            fmadd(m[1], x, fmadd(m[4], y, m[7] * z)),
                            fmadd(m[2], x, fmadd(m[5], y, m[8] * z)));
            }
        }
        if (a.tan.data) {
            load_xyzw(a.tan, v, x, y, z, w);
            store_xyzw(a.out_tan, v, fmadd(m[0], x, fmadd(m[3], y, m[6] * z)),
                        fmadd(m[1], x, fmadd(m[4], y, m[7] * z)),
                        fmadd(m[2], x, fmadd(m[5], y, m[8] * z)), w);
        }
    }
}

/// The fast path's kernel for this job's layout (chosen once per run).
template <class V, int K, class Index>
void lbs_modes(const lbs_args& a, std::size_t begin, std::size_t end) {
    switch (mode_for<K, Index>(a)) {
    case group_mode::general: lbs_kernel<V, K, Index, group_mode::general>(a, begin, end); break;
    case group_mode::strided: lbs_kernel<V, K, Index, group_mode::strided>(a, begin, end); break;
    case group_mode::strided_implied:
        lbs_kernel<V, K, Index, group_mode::strided_implied>(a, begin, end);
        break;
    case group_mode::packed: lbs_kernel<V, K, Index, group_mode::packed>(a, begin, end); break;
    case group_mode::packed_implied:
        lbs_kernel<V, K, Index, group_mode::packed_implied>(a, begin, end);
        break;
    }
}

template <class V, class Index>
void lbs_slots(const lbs_args& a, std::size_t k, std::size_t begin, std::size_t end) {
    switch (k) {
    case 1: lbs_modes<V, 1, Index>(a, begin, end); break;
    case 2: lbs_modes<V, 2, Index>(a, begin, end); break;
    case 3: lbs_modes<V, 3, Index>(a, begin, end); break;
    case 4: lbs_modes<V, 4, Index>(a, begin, end); break;
    case 5: lbs_modes<V, 5, Index>(a, begin, end); break;
    case 6: lbs_modes<V, 6, Index>(a, begin, end); break;
    case 7: lbs_modes<V, 7, Index>(a, begin, end); break;
    case 8: lbs_modes<V, 8, Index>(a, begin, end); break;
    default: lbs_kernel<V, 0, Index, group_mode::general>(a, begin, end); break;
    }
}

/// Per-vertex counts on the fast path: each block of 64 vertices blends as many slots as its
/// largest count (the slots past a vertex's count hold weight 0), and runs of blocks with the same
/// largest count share one kernel call. Meshes whose vertices come sorted or clustered by count
/// then blend few zero weights; where counts are scattered, a block costs what its busiest vertex
/// costs, as without counts. (Per group of 8, scattered counts made many short runs of the
/// slower strided kernels: 20% slower than ignoring the counts.)
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

/// Skins [begin, end) of a mesh of n vertices with lane type V: SIMD groups where they fit and
/// may read, the scalar kernel for the rest.
/// The first vertex from `begin` at which each packed output wanted streaming is 32-byte aligned
/// (a packed xyz stream comes back to the same alignment every 8 vertices), with streaming turned
/// off for outputs that are not aligned there too or not at all. Only AVX2 streams.
template <class V>
std::size_t streaming_start(lbs_args& a, std::size_t begin) {
    out_stream* outs[2] = {&a.out_pos, &a.out_nrm};
    if constexpr (V::width != 8) {
        for (out_stream* o : outs) o->streaming = false;
        return begin;
    }
    std::size_t start = begin;
    bool found = false;
    for (out_stream* o : outs) {
        if (!o->streaming) continue;
        std::size_t s = 0;
        while (s < 8 && reinterpret_cast<std::uintptr_t>(o->data + (begin + s) * o->stride) % 32 != 0) ++s;
        if (s == 8 || (found && begin + s != start)) {
            o->streaming = false;
            continue;
        }
        start = begin + s;
        found = true;
    }
    return start;
}

template <class V, class Index>
void run_lbs(const lbs_args& args, std::size_t begin, std::size_t end, std::size_t n) {
    lbs_args a = args;
    std::size_t simd_end = begin;
    if constexpr (V::width > 1) {
        // With streaming outputs, a few vertices go the scalar way first so that the groups'
        // non-temporal stores are 32-byte aligned.
        const std::size_t start = streaming_start<V>(a, begin);
        if (start > begin) {
            const std::size_t head = start < end ? start : end;
            lbs_kernel<lanes::f1, 0, Index, group_mode::general>(a, begin, head);
            begin = head;
        }
        simd_end = begin;
        const bool fast = fast_path<Index>(a);
        const std::size_t guard = lane_ops<V>::template guard<Index>(a, fast);
        const std::size_t limit = guard >= n ? 0 : n - guard;
        const std::size_t stop = end < limit ? end : limit;
        if (stop > begin) {
            simd_end = begin + (stop - begin) / V::width * V::width;
            if (a.counts && fast && !a.implied)
                lbs_counted<V, Index>(a, begin, simd_end);
            else
                lbs_slots<V, Index>(a, fast && !a.counts ? a.k : 0, begin, simd_end);
        }
    }
    lbs_kernel<lanes::f1, 0, Index, group_mode::general>(a, simd_end, end);
}

} // namespace skin
} // namespace impl
} // namespace keyblend
