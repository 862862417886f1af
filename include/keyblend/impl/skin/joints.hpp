// keyblend — the skinning kernels' reading of joint indices and weights: a vertex's joints as
// palette offsets, a group's joints checked at once, the slots a group uses. Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_JOINTS_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_JOINTS_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_JOINTS_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_JOINTS_HPP
#endif

#include "lanes.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

// ---------------------------------------------------------------------------------------------
// The fast path (K = k slots, 1 to 8, no per-vertex counts, each vertex's joints and weights
// contiguous). A vertex's joint indices arrive in one or two 64-bit loads and become palette
// offsets in integer registers (clamped unless the group was checked whole); its weights arrive in
// one 128-bit load (two for K > 4) and are broadcast by shuffles.
// ---------------------------------------------------------------------------------------------

/// The N (1 to 8) bytes at p as the low bytes of a 64-bit word (little-endian), loaded exactly:
/// with loads of 1, 2, 4 or 8 bytes combined in registers (a memcpy into a zeroed word on the
/// stack would make the word's 8-byte load wait for the narrower stores: ~20 cycles).
template <std::size_t N>
KEYBLEND_FORCE_INLINE std::uint64_t load_bytes(const unsigned char* p) {
    static_assert(N >= 1 && N <= 8, "1 to 8 bytes");
    if constexpr (N == 8) {
        std::uint64_t x;
        std::memcpy(&x, p, 8);
        return x;
    } else if constexpr (N >= 4) {
        std::uint32_t x;
        std::memcpy(&x, p, 4);
        if constexpr (N == 4) return x;
        else return std::uint64_t(x) | (load_bytes<N - 4>(p + 4) << 32);
    } else if constexpr (N >= 2) {
        std::uint16_t x;
        std::memcpy(&x, p, 2);
        if constexpr (N == 2) return x;
        else return std::uint64_t(x) | (load_bytes<N - 2>(p + 2) << 16);
    } else {
        return *p;
    }
}

/// The words of the K indices of type Index at p, exactly (nothing past them is read), or Whole:
/// whole words, the bytes past the indices included (the caller knows they are there).
template <int K, class Index, bool Whole = false>
KEYBLEND_FORCE_INLINE void load_joint_words(const unsigned char* p, std::uint64_t (&q)[(std::size_t(K) * sizeof(Index) + 7) / 8]) {
    constexpr std::size_t bytes = std::size_t(K) * sizeof(Index), words = (bytes + 7) / 8;
    unroll<int(words)>([&](auto w) KEYBLEND_LAMBDA_INLINE {
        constexpr std::size_t at = 8 * std::size_t(w), n = Whole || bytes - at >= 8 ? 8 : bytes - at;
        q[w] = load_bytes<n>(p + at);
    });
}

/// The K joints at p (one vertex's) as offsets into the palette in floats (16 per matrix: a
/// float index folds into the loads' addressing, a byte offset costs an add). Unchecked: the
/// caller has checked the group (group_joints_ok).
template <int K, class Index, bool Whole = false>
KEYBLEND_FORCE_INLINE void fast_joints(const unsigned char* p, std::uint32_t* offset) {
    constexpr int per_word = 8 / int(sizeof(Index));
    // Exactly the vertex's K indices: nothing past the last vertex's joints is read, so the SIMD
    // groups may run to the end of the mesh. Whole: the words end within the group's joints
    // (packed), so whole words may be read (one load, not two or three and their shifts): the
    // bytes past the vertex's indices are the next vertices', and the masks below drop them.
    std::uint64_t q[std::size_t((K + per_word - 1) / per_word)];
    load_joint_words<K, Index, Whole>(p, q);
    constexpr unsigned bits = 8 * sizeof(Index);
    constexpr std::uint64_t mask = ((std::uint64_t(1) << bits) - 1) << 4;
    unroll<K>([&](auto i) KEYBLEND_LAMBDA_INLINE {
        // 16 * joint i = the word rotated right by its bit position - 4, masked: a rotate that
        // compilers make one non-destructive instruction (BMI2 rorx), where a shift, a mask and
        // a shift by 4 cost a copy of the word and three instructions.
        constexpr unsigned r = (bits * unsigned(i % per_word) + 60) % 64;
        const std::uint64_t word = q[i / per_word];
        offset[i] = static_cast<std::uint32_t>(((word >> r) | (word << ((64 - r) % 64))) & mask);
    });
}

/// True when the K joints of each of the W vertices from v are within the palette, whatever the
/// joint stride: per vertex, the indices fast_joints reads (as 64-bit words), compared lane by lane with
/// last_bone + 1 in SIMD-within-a-register arithmetic (Hacker's Delight's unsigned x >= y per
/// lane: no carries cross lanes), only the lanes holding the vertex's K slots counted.
template <std::size_t W, int K, class Index>
KEYBLEND_FORCE_INLINE bool joints_ok_any_stride(const lbs_args& a, std::size_t v) {
    constexpr int per_word = 8 / int(sizeof(Index));
    constexpr int words = (K + per_word - 1) / per_word;
    constexpr unsigned bits = 8 * sizeof(Index);
    constexpr std::uint64_t lane_max = (std::uint64_t(1) << bits) - 1;
    if (a.last_bone >= lane_max) return true; // every value of the index type is in the palette
    constexpr std::uint64_t ones = ~std::uint64_t(0) / lane_max; // 1 in each lane
    constexpr std::uint64_t high = ones << (bits - 1);
    const std::uint64_t y = ones * (std::uint64_t(a.last_bone) + 1);
    std::uint64_t over = 0;
    const unsigned char* p = a.joints + v * a.joint_stride;
    for (std::size_t i = 0; i < W; ++i, p += a.joint_stride) {
        std::uint64_t q[std::size_t(words)];
        load_joint_words<K, Index>(p, q);
        unroll<words>([&](auto w) KEYBLEND_LAMBDA_INLINE {
            constexpr int used = K - w * per_word < per_word ? K - w * per_word : per_word;
            constexpr std::uint64_t lanes = used == per_word ? ~std::uint64_t(0)
                                                             : (std::uint64_t(1) << (bits * unsigned(used))) - 1;
            const std::uint64_t x = q[w];
            const std::uint64_t d = (x | high) - (y & ~high);
            over |= ((x & ~y) | (~(x ^ y) & d)) & high & lanes;
        });
    }
    return over == 0;
}

#if KEYBLEND_SIMD_F4
// 16 bytes of joint indices in a register, for group_in_range: loads (16 bytes, or 8 and zeros),
// the last bone in every index of a type, each index's excess over it (saturated: 0 where the
// index is within), and whether any excess is left.
#if KEYBLEND_SIMD_SSE2
using index_bytes = __m128i;
KEYBLEND_FORCE_INLINE index_bytes load_indices16(const unsigned char* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
KEYBLEND_FORCE_INLINE index_bytes load_indices8(const unsigned char* p) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
}
KEYBLEND_FORCE_INLINE index_bytes no_indices() { return _mm_setzero_si128(); }
template <class Index>
KEYBLEND_FORCE_INLINE index_bytes every_index(std::size_t value) {
    return sizeof(Index) == 2 ? _mm_set1_epi16(static_cast<short>(value)) : _mm_set1_epi8(static_cast<char>(value));
}
template <class Index>
KEYBLEND_FORCE_INLINE index_bytes excess(index_bytes x, index_bytes last) {
    return sizeof(Index) == 2 ? _mm_subs_epu16(x, last) : _mm_subs_epu8(x, last);
}
KEYBLEND_FORCE_INLINE index_bytes either(index_bytes a, index_bytes b) { return _mm_or_si128(a, b); }
KEYBLEND_FORCE_INLINE bool all_zero(index_bytes x) {
    return _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128())) == 0xFFFF;
}
#else
using index_bytes = uint8x16_t;
KEYBLEND_FORCE_INLINE index_bytes load_indices16(const unsigned char* p) { return vld1q_u8(p); }
KEYBLEND_FORCE_INLINE index_bytes load_indices8(const unsigned char* p) { return vcombine_u8(vld1_u8(p), vdup_n_u8(0)); }
KEYBLEND_FORCE_INLINE index_bytes no_indices() { return vdupq_n_u8(0); }
template <class Index>
KEYBLEND_FORCE_INLINE index_bytes every_index(std::size_t value) {
    return sizeof(Index) == 2 ? vreinterpretq_u8_u16(vdupq_n_u16(static_cast<std::uint16_t>(value)))
                              : vdupq_n_u8(static_cast<std::uint8_t>(value));
}
template <class Index>
KEYBLEND_FORCE_INLINE index_bytes excess(index_bytes x, index_bytes last) {
    return sizeof(Index) == 2 ? vreinterpretq_u8_u16(vqsubq_u16(vreinterpretq_u16_u8(x), vreinterpretq_u16_u8(last)))
                              : vqsubq_u8(x, last);
}
KEYBLEND_FORCE_INLINE index_bytes either(index_bytes a, index_bytes b) { return vorrq_u8(a, b); }
KEYBLEND_FORCE_INLINE bool all_zero(index_bytes x) { return vmaxvq_u8(x) == 0; }
#endif

/// True when every joint slot of the W vertices from v (their whole region, joints_checkable) is
/// within the palette: the group may then skip per-index clamping. The one check costs a few
/// vector instructions per group; a compare and a conditional move per index cost more than the
/// blend's FMAs. The bytes checked are the bytes the blend reads: outputs never alias the joints.
/// Packed: the region is W * K slots, known at compile time.
template <std::size_t W, int K, class Index, bool Packed>
KEYBLEND_FORCE_INLINE bool group_in_range(const lbs_args& a, std::size_t v) {
    const unsigned char* p = a.joints + v * a.joint_stride;
    const std::size_t bytes = Packed ? W * K * sizeof(Index) : W * a.joint_stride;
    const std::size_t last_value = sizeof(Index) == 2 ? (a.last_bone < 65535 ? a.last_bone : 65535)
                                                      : (a.last_bone < 255 ? a.last_bone : 255);
#if KEYBLEND_SIMD_AVX512
    if constexpr (Packed && W * K * sizeof(Index) >= 64) {
        // 64 bytes per compare into a mask register; the region's remainder (16 or 32 bytes) is
        // checked by a compare of the 64 bytes that end with it.
        constexpr std::size_t n = W * K * sizeof(Index);
        const __m512i last = sizeof(Index) == 2 ? _mm512_set1_epi16(static_cast<short>(last_value))
                                                : _mm512_set1_epi8(static_cast<char>(last_value));
        const auto over = [&last, p](std::size_t at) KEYBLEND_LAMBDA_INLINE {
            const __m512i x = _mm512_loadu_si512(static_cast<const void*>(p + at));
            return sizeof(Index) == 2 ? std::uint64_t(_mm512_cmpgt_epu16_mask(x, last))
                                      : std::uint64_t(_mm512_cmpgt_epu8_mask(x, last));
        };
        std::uint64_t any = 0;
        unroll<int(n / 64)>([&](auto c) KEYBLEND_LAMBDA_INLINE { any |= over(64 * c); });
        if constexpr (n % 64 != 0) any |= over(n - 64);
        return any == 0;
    }
#endif
    const index_bytes last = every_index<Index>(last_value);
    index_bytes any = no_indices();
    std::size_t i = 0;
    if constexpr (Packed) {
        unroll<int(W * K * sizeof(Index) / 16)>([&](auto c) KEYBLEND_LAMBDA_INLINE {
            any = either(any, excess<Index>(load_indices16(p + 16 * c), last));
        });
        i = W * K * sizeof(Index) / 16 * 16;
    } else {
        for (; i + 16 <= bytes; i += 16) any = either(any, excess<Index>(load_indices16(p + i), last));
    }
    if (i + 8 <= bytes) {
        any = either(any, excess<Index>(load_indices8(p + i), last));
        i += 8;
    }
    bool ok = all_zero(any);
    for (; i < bytes; i += sizeof(Index)) { // a few bytes left over (uint8, odd strides)
        Index j;
        std::memcpy(&j, p + i, sizeof j);
        ok = ok && j <= a.last_bone;
    }
    return ok;
}
#endif

/// True when the joints of the W vertices from v may be used unclamped: packed, the whole region
/// in one vector check; strided, the same over the vertices' whole strides when they are at most
/// 8 slots (joints_checkable), else vertex by vertex.
template <std::size_t W, int K, class Index, group_mode Mode>
KEYBLEND_FORCE_INLINE bool group_joints_ok(const lbs_args& a, std::size_t v) {
#if KEYBLEND_SIMD_F4
    if constexpr (packed(Mode)) {
        return group_in_range<W, K, Index, true>(a, v);
    } else {
        if (joints_checkable<Index>(a)) return group_in_range<W, K, Index, false>(a, v);
        return joints_ok_any_stride<W, K, Index>(a, v);
    }
#else
    return joints_ok_any_stride<W, K, Index>(a, v);
#endif
}

#if KEYBLEND_SIMD_AVX2
/// How many of the K slots the 8 vertices from v blend, packed with stored weights: 1 + the last
/// slot whose weight is not 0 in any of them (at least 1). The loader's layout gives every vertex
/// k slots, the unused ones last with weight 0, so that a mesh whose vertices mostly use fewer has
/// groups whose last slots are all 0: blending them adds 0 * M (a NaN weight is not 0 and counts).
template <int K>
KEYBLEND_FORCE_INLINE int slots_used(const lbs_args& a, std::size_t v) {
    static_assert(K >= 2 && K <= 8, "2 to 8 slots");
    const float* w = reinterpret_cast<const float*>(a.weights) + v * K;
    // Bit 8r + i: float 8r + i of the group's 8K weights is not 0; slot s's are the bits s + jK.
    std::uint64_t non_zero = 0;
    unroll<K>([&](auto r) KEYBLEND_LAMBDA_INLINE {
        const __m256 x = _mm256_cmp_ps(_mm256_loadu_ps(w + 8 * r), _mm256_setzero_ps(), _CMP_NEQ_UQ);
        non_zero |= std::uint64_t(unsigned(_mm256_movemask_ps(x))) << (8 * r);
    });
    int used = 1;
    unroll<K - 1>([&](auto i) KEYBLEND_LAMBDA_INLINE {
        constexpr int s = i + 1;
        std::uint64_t slot = 0;
        for (int j = 0; j < 8; ++j) slot |= std::uint64_t(1) << (s + j * K);
        if (non_zero & slot) used = s + 1;
    });
    return used;
}
#endif

/// The palette matrix at an offset in floats.
KEYBLEND_FORCE_INLINE const float* matrix_at(const lbs_args& a, std::uint32_t offset) {
    return a.palette + offset;
}

/// True when the N vertices from v (packed, K slots each) all have the joint of vertex v in their
/// first slot, whose palette offset (in floats) goes to `offset`: for one slot, or the first of K
/// when a group blends only that one (slots_used). A rigid part's one-influence vertices come in
/// runs bound to the same joint, so that many groups of one-influence vertices (or groups that blend
/// one slot) share one joint. Their
/// matrices are then one palette matrix broadcast, not N loaded and transposed: the same values in
/// the same lanes, so the same bits. Exactly the indices compared are read: for one slot as 64-bit
/// words, each compared with the first index repeated in every position.
template <int N, int K, class Index>
KEYBLEND_FORCE_INLINE bool one_joint(const lbs_args& a, std::size_t v, std::uint32_t& offset) {
    const unsigned char* p = a.joints + v * K * sizeof(Index);
    if constexpr (K > 1) {
        Index first;
        std::memcpy(&first, p, sizeof first);
        offset = static_cast<std::uint32_t>(first) * 16u;
        bool same = true;
        unroll<N - 1>([&](auto i) KEYBLEND_LAMBDA_INLINE {
            Index j;
            std::memcpy(&j, p + (i + 1) * K * sizeof(Index), sizeof j);
            same = same && j == first;
        });
        return same;
    } else {
        constexpr int per_word = 8 / int(sizeof(Index));
        static_assert(N % per_word == 0 || N < per_word, "whole words, or fewer indices than one");
        std::uint64_t q[std::size_t((N + per_word - 1) / per_word)];
        load_joint_words<N, Index>(p, q);
        constexpr unsigned bits = 8 * sizeof(Index);
        constexpr int in_first = N < per_word ? N : per_word;
        std::uint64_t ones = 0;
        for (int i = 0; i < in_first; ++i) ones |= std::uint64_t(1) << (bits * unsigned(i));
        const std::uint64_t joint = q[0] & ((std::uint64_t(1) << bits) - 1), first = joint * ones;
        offset = static_cast<std::uint32_t>(joint) * 16u;
        bool same = true;
        unroll<int(sizeof q / sizeof q[0])>([&](auto w) KEYBLEND_LAMBDA_INLINE { same = same && q[w] == first; });
        return same;
    }
}

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_JOINTS_HPP
