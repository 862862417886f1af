// keyblend — what the linear-blend skinning kernels share whatever the lane type: the flattened
// job (lbs_args), stream layouts, and reading influences one at a time. Internal: namespace
// keyblend::impl::skin.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_STREAMS_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_STREAMS_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_STREAMS_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_STREAMS_HPP
#endif

#include "../simd/isa.hpp"
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <glm/mat4x4.hpp>

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

static_assert(sizeof(glm::mat4) == 16 * sizeof(float), "glm::mat4 must be 16 packed floats");

/// How a float stream is laid out, which decides how the kernels move it in and out of lanes.
enum class layout : unsigned char {
    packed,      ///< components then elements contiguous: stride == components * 4 (vec3 arrays)
    interleaved, ///< components contiguous, elements further apart (AoS vertex buffers)
    planar,      ///< stride == 4: each component an array of its own (SoA)
    general,     ///< anything else: element by element
    words,       ///< outputs only: one 10:10:10:2 word per element (impl/skin/packed.hpp)
};

KEYBLEND_FORCE_INLINE layout classify(std::size_t stride, std::size_t component_stride, std::size_t components) {
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
    /// Non-temporal stores wanted (packed layout). The AVX2 and AVX-512 kernels honour it when the
    /// SIMD groups can start aligned to a register (see run_lbs); the other lane types ignore it.
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
    /// Every stream given is packed (std::vector<glm::vec3> / glm::vec4 arrays; outputs may be
    /// words) and normals go by the palette: the kernels' inline transform. Other layouts take an
    /// out-of-line one.
    bool simple = false;
    /// The job's `simple`, kept when a stack copy of a few vertices (lbs_bounce) makes `simple`
    /// true: one-slot packed jobs whose streams are simple scale the transformed vertices by the
    /// weight (group_mode::packed_scaled), and every vertex of a job takes the same arithmetic.
    bool scaled = false;
    /// Stored weights, 2 to 4 slots, and some of the mesh's vertices (a sample) with weight 0 in
    /// the last: the 8-wide packed kernels then blend each group's used slots only (slots_used).
    bool skip_zero_slots = false;
    /// AVX-512, 2 to 4 slots, packed streams without tangents: quads of one vertex per 128-bit
    /// lane (aos_group), as one slot always does, instead of eight lanes of floats (prefer_quads).
    bool quads = false;
};

/// How the SIMD groups of a kernel read their influences.
enum class group_mode {
    general,        ///< K = 0: each vertex's influences read one at a time, every joint clamped
    strided,        ///< K slots, runtime strides (and runtime implied weight); each group's
                    ///< joints checked against the palette first (group_joints_ok), no clamps
    packed,         ///< the loader's layout (K joints, K weights per vertex, vertex after vertex),
                    ///< checked like strided: constant strides, no clamps
    packed_implied, ///< the same with K - 1 weights per vertex (last_weight::implied)
    packed_scaled,  ///< packed, one stored weight, packed streams, 8 wide: the palette matrix
                    ///< unweighted, the transformed vertices scaled by the weight instead
};

// ---------------------------------------------------------------------------------------------
// Reading influences one at a time (scalar path, dynamic counts, validation, DQS)
// ---------------------------------------------------------------------------------------------

/// The number of slots vertex v uses: its count (clamped to k) or k.
KEYBLEND_FORCE_INLINE std::size_t slots_of(const lbs_args& a, std::size_t v) {
    if (!a.counts) return a.k;
    const std::size_t c = a.counts[v * a.count_stride];
    return c < a.k ? c : a.k;
}

template <class Index>
KEYBLEND_FORCE_INLINE std::size_t raw_joint(const lbs_args& a, std::size_t v, std::size_t i) {
    Index j;
    std::memcpy(&j, a.joints + v * a.joint_stride + i * a.joint_cs, sizeof j);
    return j;
}

template <class Index>
KEYBLEND_FORCE_INLINE std::size_t clamped_joint(const lbs_args& a, std::size_t v, std::size_t i) {
    const std::size_t j = raw_joint<Index>(a, v, i);
    return j < a.last_bone ? j : a.last_bone;
}

KEYBLEND_FORCE_INLINE float stored_weight(const lbs_args& a, std::size_t v, std::size_t i) {
    float w;
    std::memcpy(&w, a.weights + v * a.weight_stride + i * a.weight_cs, sizeof w);
    return w;
}

/// Vertex v's influences: clamped joints and weights (the implied one computed as 1 minus the sum
/// of the others, summed in slot order). Returns how many.
template <class Index>
KEYBLEND_FORCE_INLINE std::size_t read_influences(const lbs_args& a, std::size_t v, std::size_t (&joint)[8],
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
KEYBLEND_FORCE_INLINE std::size_t tail_guard(std::size_t read, std::size_t used, std::size_t stride) {
    if (read <= used) return 0;
    return stride == 0 ? static_cast<std::size_t>(-1) / 2 : (read - used + stride - 1) / stride;
}

/// Stands in for the weights of a job that has none (one influence, implied weight): the kernels
/// then read weights unconditionally, without a test per vertex.
alignas(32) inline constexpr float no_weights[8] = {};

/// Bytes the fast path reads from one vertex's weights with V::width lanes: the 8-wide kernels
/// broadcast up to 3 weights one by one (exactly what is stored), the others read 16 bytes (32
/// for more than 4 slots) and broadcast them by shuffles.
constexpr std::size_t weight_read(std::size_t width, std::size_t k, std::size_t stored) {
    if (width == 8 && k <= 3) return stored * sizeof(float);
    return k <= 4 ? 16 : 32;
}

/// True when the job's influences can take the fast path (with per-vertex counts: lbs_counted).
template <class Index>
KEYBLEND_FORCE_INLINE bool fast_path(const lbs_args& a) {
    return a.k >= 1 && a.k <= 8 && a.joint_cs == sizeof(Index) && a.weight_cs == sizeof(float);
}


/// What a mode says about the weights: 1 the last implied, 0 stored, -1 ask the job, 2 stored but
/// left out of the blend (packed_scaled).
constexpr int implied_of(group_mode m) {
    return m == group_mode::packed_implied  ? 1
           : m == group_mode::packed        ? 0
           : m == group_mode::packed_scaled ? 2
                                            : -1;
}
constexpr bool packed(group_mode m) {
    return m == group_mode::packed || m == group_mode::packed_implied || m == group_mode::packed_scaled;
}

/// True when the joints are one array of at most 8 slots per vertex, so a group's indices are one
/// region group_in_range can check (with the slots between vertices, which must then be within
/// the palette too: compact_influences writes joint 0 there).
template <class Index>
KEYBLEND_FORCE_INLINE bool joints_checkable(const lbs_args& a) {
    return a.joint_cs == sizeof(Index) && a.joint_stride % sizeof(Index) == 0 &&
           a.joint_stride <= 8 * sizeof(Index) && a.joint_stride >= a.k * sizeof(Index);
}

/// The group mode for blending K slots per vertex that a job's layout allows (fast_path(a)).
template <int K, class Index>
KEYBLEND_FORCE_INLINE group_mode mode_for(const lbs_args& a) {
    const std::size_t stored = a.implied ? K - 1 : K;
    if (a.joint_stride == K * sizeof(Index) && a.weight_stride == stored * sizeof(float))
        return a.implied ? group_mode::packed_implied : group_mode::packed;
    return group_mode::strided;
}

/// The over-read guard of the SIMD lane types: joints and weights on the fast path, and 16-byte
/// loads of interleaved xyz streams.
/// (The joints are read exactly, vertex by vertex; group_in_range reads each vertex's whole stride
/// of slots.)
template <class Index>
KEYBLEND_FORCE_INLINE std::size_t simd_guard(const lbs_args& a, bool fast, std::size_t width) {
    std::size_t g = 0;
    std::size_t x = 0;
    if (fast) {
        if (joints_checkable<Index>(a)) g = tail_guard(a.joint_stride, a.k * sizeof(Index), a.joint_stride);
        const std::size_t stored = a.implied ? a.k - 1 : a.k;
        if (stored) {
            x = tail_guard(weight_read(width, a.k, stored), stored * sizeof(float), a.weight_stride);
            g = x > g ? x : g;
        }
    }
    if (a.pos.kind == layout::interleaved) {
        x = tail_guard(16, 12, a.pos.stride);
        g = x > g ? x : g;
    }
    if (a.nrm.data && a.nrm.kind == layout::interleaved) {
        x = tail_guard(16, 12, a.nrm.stride);
        g = x > g ? x : g;
    }
    return g;
}

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_STREAMS_HPP
