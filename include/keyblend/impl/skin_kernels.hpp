// keyblend — the linear-blend skinning kernels for one instruction set. Internal.
//
// SPDX-License-Identifier: MIT
//
// NO include guard: skin.impl.hpp includes this file once per instruction set it compiles kernels
// for (once in a static build; three times with KEYBLEND_RUNTIME_DISPATCH), each time inside a
// namespace of its own and, for dispatch, a function target attribute region. It expects:
//   KEYBLEND_SKIN_REGION  the namespace name (see skin_isa.hpp)
//   KEYBLEND_SKIN_R_SSE2, KEYBLEND_SKIN_R_AVX2, KEYBLEND_SKIN_R_AVX512, KEYBLEND_SKIN_R_FMA
//                         0 or 1: which lane types (and fused multiply-adds) to compile
// and defines in keyblend::impl::skin::KEYBLEND_SKIN_REGION the lane types f1 (always), f4, f8,
// `widest`, `isa`, and the entry points run_job / first_group.
//
// How a group of V::width vertices is skinned (8 lanes for AVX2 and AVX-512, 4 for SSE2):
// 1. Per vertex, its k palette matrices are blended in registers: a 4x4 matrix is two 256-bit
//    halves (columns 0|1 and 2|3), so each influence costs two loads and two FMAs, with no gather
//    (vgatherdps is slow: ~11 cycles on Zen 3). The joint indices of a vertex arrive in one or two
//    integer loads of exactly its indices (nothing past the mesh's last vertex is read) and become
//    palette offsets by a rotate and a mask. Up to 3 weights are each one broadcast load; more are
//    one 128-bit load broadcast within lanes by shuffles (past 3 slots the loads, two matrix
//    halves per slot, are the scarcer resource). One stored weight with packed streams is not
//    blended at all: the group's transformed vertices are scaled by it (group_mode::packed_scaled),
//    or, when the group's weights are all 1, used as they are. With 2 to 4 stored weights in the
//    loader's layout, a mesh that mostly uses fewer slots has each group blend only up to the
//    last slot one of its vertices uses (slots_used, lbs_args::skip_zero_slots).
// 2. The eight blended matrices are transposed into twelve lane vectors (structure of arrays,
//    one vertex per lane; the projective row is dropped).
// 3. Positions, normals, tangents are moved from the caller's layout into lanes (packed xyz
//    arrays: three 256-bit loads and shuffles; interleaved buffers: one 128-bit load per vertex
//    and a transpose; planar arrays: plain loads; anything else: element by element), transformed
//    eight at a time with FMAs, and moved back the same way. Packed streams with normals by the
//    palette (lbs_args::simple) are inlined in the kernel; other layouts and the inverse-transpose
//    go through one out-of-line function per lane type (a few percent slower, and every kernel
//    compiles much faster).
// The scalar lane type runs the same kernel one vertex at a time: it is the reference.
// AVX-512 with packed streams (no tangents) skips steps 2 and 3 for one slot, and for 2 to 4 where
// the CPU runs 512-bit operations at full width (lbs_args::quads): each group is two quads of one
// vertex per 128-bit lane (aos_group), each vertex's matrix blended whole in one 512-bit register,
// a quad's matrices transposed by 128-bit blocks and its coordinates broadcast within lanes, with
// the same FMAs in the same order (the same bits).
// A quad (AVX-512) or group (8 lanes) that blends one slot, whose vertices share its joint
// (one_joint: a rigid part's vertices), broadcasts that palette matrix instead of loading and
// transposing one per vertex: the same values in the same lanes, the same bits.
//
// What bounds it (Zen 4, measured per instruction class in isolation: 2 FMAs, 3 in-lane shuffles,
// 2 cross-lane permutes and 2 256-bit loads per cycle, FMAs and cross-lane permutes sharing a
// pipe): per 8 vertices with 4 influences, positions + normals, 85 FMA-class operations (64 blend,
// 21 transform), 82 in-lane shuffles (32 weight broadcasts, 28 transposes, 22 xyz), 18
// cross-lane permutes and 6 blends, 78 vector loads: 188 floating-point operations for 4 pipes,
// at least 47 cycles, 42.5 of them on the two FMA pipes; the loop takes ~70 (9.5 cycles a vertex
// in the library, 8.7 in a stripped-down copy): the floating-point pipes, not loads or memory.
//
// What is compiled: per influence count K (1 to 8), three kernels (packed, packed_implied,
// strided; packed_scaled too for K = 1), plus the dynamic kernel (K = 0: per-vertex counts with an
// implied weight, influences with component strides) and the scalar one. A fixed_skinning run
// compiles the kernels of its K only.
//
// A NEON lane type would add a lane_ops specialisation (vld1q_f32, vfmaq_f32, vzipq_f32 for the
// transposes) and a group_in_range (vqsubq_u16); the kernel, the modes and the layouts' dispatch
// are shared.

namespace keyblend {
namespace impl {
namespace skin {
namespace KEYBLEND_SKIN_REGION {

// ---------------------------------------------------------------------------------------------
// Lane types: V::width floats, one vertex per lane. Only what the kernels use.
// ---------------------------------------------------------------------------------------------

struct f1 {
    static constexpr std::size_t width = 1;
    float v;
    static f1 load(const float* p) { return {*p}; }
    static f1 set1(float x) { return {x}; }
    void store(float* p) const { *p = v; }
};
inline f1 operator+(f1 a, f1 b) { return {a.v + b.v}; }
inline f1 operator-(f1 a, f1 b) { return {a.v - b.v}; }
inline f1 operator*(f1 a, f1 b) { return {a.v * b.v}; }
inline f1 operator/(f1 a, f1 b) { return {a.v / b.v}; }
inline f1 fmadd(f1 a, f1 b, f1 c) { return {a.v * b.v + c.v}; }
inline bool operator==(f1 a, f1 b) { return a.v == b.v; }
inline f1 select(bool m, f1 a, f1 b) { return m ? a : b; }

#if KEYBLEND_SKIN_R_SSE2
struct f4 {
    static constexpr std::size_t width = 4;
    __m128 v;
    static f4 load(const float* p) { return {_mm_loadu_ps(p)}; }
    static f4 set1(float x) { return {_mm_set1_ps(x)}; }
    void store(float* p) const { _mm_storeu_ps(p, v); }
};
inline f4 operator+(f4 a, f4 b) { return {_mm_add_ps(a.v, b.v)}; }
inline f4 operator-(f4 a, f4 b) { return {_mm_sub_ps(a.v, b.v)}; }
inline f4 operator*(f4 a, f4 b) { return {_mm_mul_ps(a.v, b.v)}; }
inline f4 operator/(f4 a, f4 b) { return {_mm_div_ps(a.v, b.v)}; }
inline f4 fmadd(f4 a, f4 b, f4 c) {
#if KEYBLEND_SKIN_R_FMA
    return {_mm_fmadd_ps(a.v, b.v, c.v)};
#else
    return {_mm_add_ps(_mm_mul_ps(a.v, b.v), c.v)};
#endif
}
inline __m128 operator==(f4 a, f4 b) { return _mm_cmpeq_ps(a.v, b.v); }
inline f4 select(__m128 m, f4 a, f4 b) { return {_mm_or_ps(_mm_and_ps(m, a.v), _mm_andnot_ps(m, b.v))}; }
#endif

#if KEYBLEND_SKIN_R_AVX2
struct f8 {
    static constexpr std::size_t width = 8;
    __m256 v;
    static f8 load(const float* p) { return {_mm256_loadu_ps(p)}; }
    static f8 set1(float x) { return {_mm256_set1_ps(x)}; }
    void store(float* p) const { _mm256_storeu_ps(p, v); }
};
inline f8 operator+(f8 a, f8 b) { return {_mm256_add_ps(a.v, b.v)}; }
inline f8 operator-(f8 a, f8 b) { return {_mm256_sub_ps(a.v, b.v)}; }
inline f8 operator*(f8 a, f8 b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline f8 operator/(f8 a, f8 b) { return {_mm256_div_ps(a.v, b.v)}; }
inline f8 fmadd(f8 a, f8 b, f8 c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline __m256 operator==(f8 a, f8 b) { return _mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ); }
inline f8 select(__m256 m, f8 a, f8 b) { return {_mm256_blendv_ps(b.v, a.v, m)}; }
inline bool all_true(__m256 m) { return _mm256_movemask_ps(m) == 0xFF; }
#endif


#if KEYBLEND_SKIN_R_AVX512
/// One 4x4 matrix per register: only for blending a vertex's matrices (blend_matrix) on the
/// AVX-512 quad path (aos_group).
struct f16 {
    static constexpr std::size_t width = 16;
    __m512 v;
    static f16 load(const float* p) { return {_mm512_loadu_ps(p)}; }
    static f16 set1(float x) { return {_mm512_set1_ps(x)}; }
};
inline f16 operator+(f16 a, f16 b) { return {_mm512_add_ps(a.v, b.v)}; }
inline f16 operator-(f16 a, f16 b) { return {_mm512_sub_ps(a.v, b.v)}; }
inline f16 operator*(f16 a, f16 b) { return {_mm512_mul_ps(a.v, b.v)}; }
inline f16 fmadd(f16 a, f16 b, f16 c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
#endif

#if KEYBLEND_SKIN_R_AVX512
// 8 lanes here too: the AVX-512 kernels are the 8-wide ones compiled for AVX-512 (EVEX encodings,
// 32 registers, masks, the 64-byte joint checks). Measured on Zen 4 against 16 lanes (one 512-bit
// register per vertex matrix), 8 are 4-43% faster in every configuration of bench_skin: 512-bit
// shuffles occupy two of the core's 256-bit shuffle pipes, and 16 lanes need one more transpose
// stage and cross-lane permutes for packed xyz, where 8 use in-lane shuffles.
using widest = f8;
inline constexpr simd_isa isa = simd_isa::avx512;
#elif KEYBLEND_SKIN_R_AVX2
using widest = f8;
inline constexpr simd_isa isa = simd_isa::avx2;
#elif KEYBLEND_SKIN_R_SSE2
using widest = f4;
inline constexpr simd_isa isa = simd_isa::sse2;
#else
using widest = f1;
inline constexpr simd_isa isa = simd_isa::scalar;
#endif

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

/// C lane vectors, returned by value (so that no caller's lanes have their address taken: they
/// would then live in memory on every path, not only the rare one).
template <class V, std::size_t C>
struct lane_array {
    V c[C];
};

/// Planar streams (each component an array): one plain load or store per component, in any
/// lane type.
template <class V, std::size_t C>
KEYBLEND_SKIN_INLINE lane_array<V, C> load_planar(const in_stream& s, std::size_t v) {
    lane_array<V, C> r;
    for (std::size_t i = 0; i < C; ++i) r.c[i] = V::load(s.at(v, i));
    return r;
}
template <class V, class... Lanes>
KEYBLEND_SKIN_INLINE void store_planar(const out_stream& s, std::size_t v, Lanes... c) {
    std::size_t i = 0;
    (c.store(s.at(v, i++)), ...);
}

/// Element-by-element moves for layouts without a fast path (out of line: rare, and kept out of
/// the kernel's loop body).
template <class V, std::size_t C>
KEYBLEND_SKIN_COLD lane_array<V, C> load_general(const in_stream& s, std::size_t v) {
    alignas(64) float t[C][V::width];
    for (std::size_t i = 0; i < V::width; ++i)
        for (std::size_t k = 0; k < C; ++k) t[k][i] = *s.at(v + i, k);
    lane_array<V, C> r;
    for (std::size_t k = 0; k < C; ++k) r.c[k] = V::load(t[k]);
    return r;
}
/// (The lanes by value: in registers, where the caller has them.)
template <class V, class... Lanes>
KEYBLEND_SKIN_COLD void store_general(const out_stream& s, std::size_t v, V first, Lanes... rest) {
    constexpr std::size_t C = 1 + sizeof...(Lanes);
    const V c[C] = {first, rest...};
    alignas(64) float t[C][V::width];
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
struct lane_ops<f1> {
    using V = f1;

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

/// The N (1 to 8) bytes at p as the low bytes of a 64-bit word (little-endian), loaded exactly:
/// with loads of 1, 2, 4 or 8 bytes combined in registers (a memcpy into a zeroed word on the
/// stack would make the word's 8-byte load wait for the narrower stores: ~20 cycles).
template <std::size_t N>
KEYBLEND_SKIN_INLINE std::uint64_t load_bytes(const unsigned char* p) {
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
KEYBLEND_SKIN_INLINE void load_joint_words(const unsigned char* p, std::uint64_t (&q)[(std::size_t(K) * sizeof(Index) + 7) / 8]) {
    constexpr std::size_t bytes = std::size_t(K) * sizeof(Index), words = (bytes + 7) / 8;
    unroll<int(words)>([&](auto w) KEYBLEND_SKIN_LAMBDA {
        constexpr std::size_t at = 8 * std::size_t(w), n = Whole || bytes - at >= 8 ? 8 : bytes - at;
        q[w] = load_bytes<n>(p + at);
    });
}

/// The K joints at p (one vertex's) as offsets into the palette in floats (16 per matrix: a
/// float index folds into the loads' addressing, a byte offset costs an add). Unchecked: the
/// caller has checked the group (group_joints_ok).
template <int K, class Index, bool Whole = false>
KEYBLEND_SKIN_INLINE void fast_joints(const unsigned char* p, std::uint32_t* offset) {
    constexpr int per_word = 8 / int(sizeof(Index));
    // Exactly the vertex's K indices: nothing past the last vertex's joints is read, so the SIMD
    // groups may run to the end of the mesh. Whole: the words end within the group's joints
    // (packed), so whole words may be read (one load, not two or three and their shifts): the
    // bytes past the vertex's indices are the next vertices', and the masks below drop them.
    std::uint64_t q[std::size_t((K + per_word - 1) / per_word)];
    load_joint_words<K, Index, Whole>(p, q);
    constexpr unsigned bits = 8 * sizeof(Index);
    constexpr std::uint64_t mask = ((std::uint64_t(1) << bits) - 1) << 4;
    unroll<K>([&](auto i) KEYBLEND_SKIN_LAMBDA {
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
KEYBLEND_SKIN_INLINE bool joints_ok_any_stride(const lbs_args& a, std::size_t v) {
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
        unroll<words>([&](auto w) KEYBLEND_SKIN_LAMBDA {
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

#if KEYBLEND_SKIN_R_SSE2
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
#if KEYBLEND_SKIN_R_AVX512
    if constexpr (Packed && W * K * sizeof(Index) >= 64) {
        // 64 bytes per compare into a mask register; the region's remainder (16 or 32 bytes) is
        // checked by a compare of the 64 bytes that end with it.
        constexpr std::size_t n = W * K * sizeof(Index);
        const __m512i last = sizeof(Index) == 2 ? _mm512_set1_epi16(static_cast<short>(last_value))
                                                : _mm512_set1_epi8(static_cast<char>(last_value));
        const auto over = [&last, p](std::size_t at) KEYBLEND_SKIN_LAMBDA {
            const __m512i x = _mm512_loadu_si512(static_cast<const void*>(p + at));
            return sizeof(Index) == 2 ? std::uint64_t(_mm512_cmpgt_epu16_mask(x, last))
                                      : std::uint64_t(_mm512_cmpgt_epu8_mask(x, last));
        };
        std::uint64_t any = 0;
        unroll<int(n / 64)>([&](auto c) KEYBLEND_SKIN_LAMBDA { any |= over(64 * c); });
        if constexpr (n % 64 != 0) any |= over(n - 64);
        return any == 0;
    }
#endif
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

/// True when the joints of the W vertices from v may be used unclamped: packed, the whole region
/// in one vector check; strided, the same over the vertices' whole strides when they are at most
/// 8 slots (joints_checkable), else vertex by vertex.
template <std::size_t W, int K, class Index, group_mode Mode>
KEYBLEND_SKIN_INLINE bool group_joints_ok(const lbs_args& a, std::size_t v) {
#if KEYBLEND_SKIN_R_SSE2
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

#if KEYBLEND_SKIN_R_AVX2
/// How many of the K slots the 8 vertices from v blend, packed with stored weights: 1 + the last
/// slot whose weight is not 0 in any of them (at least 1). The loader's layout gives every vertex
/// k slots, the unused ones last with weight 0, so that a mesh whose vertices mostly use fewer has
/// groups whose last slots are all 0: blending them adds 0 * M (a NaN weight is not 0 and counts).
template <int K>
KEYBLEND_SKIN_INLINE int slots_used(const lbs_args& a, std::size_t v) {
    static_assert(K >= 2 && K <= 8, "2 to 8 slots");
    const float* w = reinterpret_cast<const float*>(a.weights) + v * K;
    // Bit 8r + i: float 8r + i of the group's 8K weights is not 0; slot s's are the bits s + jK.
    std::uint64_t non_zero = 0;
    unroll<K>([&](auto r) KEYBLEND_SKIN_LAMBDA {
        const __m256 x = _mm256_cmp_ps(_mm256_loadu_ps(w + 8 * r), _mm256_setzero_ps(), _CMP_NEQ_UQ);
        non_zero |= std::uint64_t(unsigned(_mm256_movemask_ps(x))) << (8 * r);
    });
    int used = 1;
    unroll<K - 1>([&](auto i) KEYBLEND_SKIN_LAMBDA {
        constexpr int s = i + 1;
        std::uint64_t slot = 0;
        for (int j = 0; j < 8; ++j) slot |= std::uint64_t(1) << (s + j * K);
        if (non_zero & slot) used = s + 1;
    });
    return used;
}
#endif

/// The palette matrix at an offset in floats.
KEYBLEND_SKIN_INLINE const float* matrix_at(const lbs_args& a, std::uint32_t offset) {
    return a.palette + offset;
}

/// True when the N vertices from v (packed, K slots each) all have the joint of vertex v in their
/// first slot, whose palette offset (in floats) goes to `offset`: for one slot, or the first of K
/// when a group blends only that one (slots_used). A rigid part's one-influence vertices come in
/// runs bound to the same joint: 56% of Testwuson's groups of 8 one-influence vertices, 73% of its
/// quads; in the loader's 4-slot layout, 87 of its 400 groups blend one slot of one joint. Their
/// matrices are then one palette matrix broadcast, not N loaded and transposed: the same values in
/// the same lanes, so the same bits. Exactly the indices compared are read: for one slot as 64-bit
/// words, each compared with the first index repeated in every position.
template <int N, int K, class Index>
KEYBLEND_SKIN_INLINE bool one_joint(const lbs_args& a, std::size_t v, std::uint32_t& offset) {
    const unsigned char* p = a.joints + v * K * sizeof(Index);
    if constexpr (K > 1) {
        Index first;
        std::memcpy(&first, p, sizeof first);
        offset = static_cast<std::uint32_t>(first) * 16u;
        bool same = true;
        unroll<N - 1>([&](auto i) KEYBLEND_SKIN_LAMBDA {
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
        unroll<int(sizeof q / sizeof q[0])>([&](auto w) KEYBLEND_SKIN_LAMBDA { same = same && q[w] == first; });
        return same;
    }
}

// ---------------------------------------------------------------------------------------------
// f4: SSE2 (FMA when the compiler targets it).
// ---------------------------------------------------------------------------------------------
#if KEYBLEND_SKIN_R_SSE2

// In-lane shuffles under one name for __m128 (SSE2) and __m256 (AVX2, AVX-512), so that the
// transposes below, which work within 128-bit lanes, are written once for both.
KEYBLEND_SKIN_INLINE __m128 unpacklo(__m128 a, __m128 b) { return _mm_unpacklo_ps(a, b); }
KEYBLEND_SKIN_INLINE __m128 unpackhi(__m128 a, __m128 b) { return _mm_unpackhi_ps(a, b); }
template <int Imm>
KEYBLEND_SKIN_INLINE __m128 shuffle(__m128 a, __m128 b) { return _mm_shuffle_ps(a, b, Imm); }
#if KEYBLEND_SKIN_R_AVX2
KEYBLEND_SKIN_INLINE __m256 unpacklo(__m256 a, __m256 b) { return _mm256_unpacklo_ps(a, b); }
KEYBLEND_SKIN_INLINE __m256 unpackhi(__m256 a, __m256 b) { return _mm256_unpackhi_ps(a, b); }
template <int Imm>
KEYBLEND_SKIN_INLINE __m256 shuffle(__m256 a, __m256 b) { return _mm256_shuffle_ps(a, b, Imm); }
#endif

/// In each 128-bit lane: rows of 4 floats r[0..3] -> x, y, z of the four rows (the w row dropped).
template <class R>
KEYBLEND_SKIN_INLINE void transpose3(const R (&r)[4], R& x, R& y, R& z) {
    const R t0 = unpacklo(r[0], r[1]), t1 = unpacklo(r[2], r[3]);
    const R t2 = unpackhi(r[0], r[1]), t3 = unpackhi(r[2], r[3]);
    x = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(t0, t1);
    y = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(t0, t1);
    z = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(t2, t3);
}

/// In each 128-bit lane: rows r[0..3] <-> x, y, z, w of the four rows (its own inverse).
template <class R>
KEYBLEND_SKIN_INLINE void transpose4(R (&r)[4]) {
    const R t0 = unpacklo(r[0], r[1]), t1 = unpacklo(r[2], r[3]);
    const R t2 = unpackhi(r[0], r[1]), t3 = unpackhi(r[2], r[3]);
    r[0] = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(t0, t1);
    r[1] = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(t0, t1);
    r[2] = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(t2, t3);
    r[3] = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(t2, t3);
}

/// In each 128-bit lane: x, y, z of four rows -> the rows, each x y z z (stores write 12 bytes).
template <class R>
KEYBLEND_SKIN_INLINE void rows_of(R x, R y, R z, R (&r)[4]) {
    const R xy01 = unpacklo(x, y), xy23 = unpackhi(x, y);
    const R zz01 = unpacklo(z, z), zz23 = unpackhi(z, z);
    r[0] = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(xy01, zz01);
    r[1] = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(xy01, zz01);
    r[2] = shuffle<_MM_SHUFFLE(1, 0, 1, 0)>(xy23, zz23);
    r[3] = shuffle<_MM_SHUFFLE(3, 2, 3, 2)>(xy23, zz23);
}

/// Calls f(i, off, wp) for each of the N vertices of a group from v, with i an
/// std::integral_constant (0 .. N-1), off vertex v + i's K palette offsets (clamped in the general
/// mode) and wp its weights; for K = 0 (the dynamic path) off and wp are null. The walk over the
/// joints and weights that every lane type blending whole matrices per vertex shares.
template <int N, int K, class Index, group_mode Mode, class F>
KEYBLEND_SKIN_INLINE void for_each_vertex(const lbs_args& a, std::size_t v, F&& f) {
    // In the packed modes the strides are constants: the vertices' addresses fold into the loads,
    // leaving integer registers for the palette offsets.
    constexpr int implied = implied_of(Mode);
    constexpr std::size_t js = K * sizeof(Index), ws = (K > 0 ? K - (implied == 1) : 0) * sizeof(float);
    constexpr bool general = !packed(Mode);
    const unsigned char* jp = a.joints + v * (general ? a.joint_stride : js);
    const unsigned char* wp = a.weights + v * (general ? a.weight_stride : ws);
    unroll<N>([&](auto i) KEYBLEND_SKIN_LAMBDA {
        if constexpr (K == 0) {
            f(i, nullptr, nullptr);
        } else if constexpr (general) {
            std::uint32_t off[std::size_t(K)];
            fast_joints<K, Index>(jp, off);
            f(i, off, wp);
            jp += a.joint_stride;
            wp += a.weight_stride;
        } else {
            std::uint32_t off[std::size_t(K)];
            // (Only where the last word's exact read takes more than one load, its bytes not a
            // power of 2: 3, 5, 6 or 7; and the whole words end within the group's joints.)
            constexpr std::size_t tail = js % 8, read = (js + 7) / 8 * 8;
            constexpr bool whole = (tail & (tail - 1)) != 0 && decltype(i)::value * js + read <= N * js;
            fast_joints<K, Index, whole>(jp + i * js, off);
            f(i, off, wp + i * ws);
        }
    });
}

/// 16 bytes at p in every 128-bit lane of a V (a plain load for f4).
template <class V>
V broadcast_lanes(const unsigned char* p);
template <>
KEYBLEND_SKIN_INLINE f4 broadcast_lanes<f4>(const unsigned char* p) {
    return {_mm_loadu_ps(reinterpret_cast<const float*>(p))};
}
#if KEYBLEND_SKIN_R_AVX2
template <>
KEYBLEND_SKIN_INLINE f8 broadcast_lanes<f8>(const unsigned char* p) {
    return {_mm256_broadcast_ps(reinterpret_cast<const __m128*>(p))};
}
#endif

/// One vertex's matrix blended in registers, for the lane types that hold a whole 4x4 matrix in
/// 16 / V::width registers: c[q] = floats q * V::width .. of the blend (column-major). The dynamic
/// path (K = 0) reads vertex v's influences one at a time; the fast path takes its K palette
/// offsets and its weights at wp. Implied: 1 when the last weight is implied, 0 when not, -1 to
/// ask the job.
template <class V, int K, class Index, int Implied>
KEYBLEND_SKIN_INLINE void blend_matrix(const lbs_args& a, std::size_t v, const std::uint32_t* off,
                                       const unsigned char* wp, V (&c)[16 / V::width]) {
    constexpr int parts = int(16 / V::width);
    if constexpr (K == 0) {
        std::size_t joint[8];
        float weight[8];
        const std::size_t n = read_influences<Index>(a, v, joint, weight);
        unroll<parts>([&](auto q) KEYBLEND_SKIN_LAMBDA { c[q] = V::set1(0.0f); });
        for (std::size_t i = 0; i < n; ++i) {
            const float* p = a.palette + 16 * joint[i];
            const V w = V::set1(weight[i]);
            unroll<parts>([&](auto q) KEYBLEND_SKIN_LAMBDA { c[q] = fmadd(w, V::load(p + q * V::width), c[q]); });
        }
    } else {
        (void)v;
        const bool implied = Implied >= 0 ? Implied == 1 : a.implied;
        if constexpr (K == 1 && Implied >= 1) {
            // One influence: the palette matrix itself. Implied, its weight is 1 - 0 (1 * x is x,
            // bit for bit); stored and Implied 2 (group_mode::packed_scaled), the kernel scales
            // the transformed vertices instead: 6 multiplies per 8-vertex group, not 16.
            (void)wp;
            unroll<parts>([&](auto q) KEYBLEND_SKIN_LAMBDA { c[q] = V::load(a.palette + q * V::width + off[0]); });
            return;
        }
        // The weights. 8-wide, up to 3 slots: each a broadcast load of exactly the stored weights,
        // which costs a load but no shuffle (loads are the scarcer resource past 3 slots: two
        // matrix halves per slot). Otherwise one 128-bit load (two for K > 4) in every lane, each
        // weight broadcast by an in-lane shuffle. (weight_read says how many bytes, for
        // simd_guard.)
        V w[std::size_t(K)];
        if constexpr ((V::width == 8 && K <= 3) || V::width == 16) {
            unroll<K>([&](auto i) KEYBLEND_SKIN_LAMBDA {
                float x = 0.0f;
                if constexpr (i + 1 == K && Implied == 1) return; // computed below, not stored
                if (i + 1 < K || !implied) std::memcpy(&x, wp + 4 * i, sizeof x);
                w[i] = V::set1(x);
            });
        } else {
            const V lo = broadcast_lanes<V>(wp);
            V hi = lo;
            if constexpr (K > 4) hi = broadcast_lanes<V>(wp + 16);
            unroll<K>([&](auto i) KEYBLEND_SKIN_LAMBDA {
                const V src = i < 4 ? lo : hi;
                w[i] = V{shuffle<(i % 4) * 0x55>(src.v, src.v)};
            });
        }
        if (implied) {
            // 1 - sum of the others, summed in slot order (as read_influences does, from 0: the
            // same bits, since 0 + w differs from w only in the sign of a zero w, and then so
            // does the sum, whose difference from 1 is 1 either way).
            if constexpr (K == 1) {
                w[0] = V::set1(1.0f);
            } else {
                V sum = w[0];
                unroll<K - 2>([&](auto i) KEYBLEND_SKIN_LAMBDA { sum = sum + w[i + 1]; });
                w[K - 1] = V::set1(1.0f) - sum;
            }
        }
        // One base pointer per part, so that each load folds base + offset * 4 into its address.
        unroll<parts>([&](auto q) KEYBLEND_SKIN_LAMBDA {
            const float* base = a.palette + q * V::width;
            c[q] = w[0] * V::load(base + off[0]);
            unroll<K - 1>([&](auto i) KEYBLEND_SKIN_LAMBDA { c[q] = fmadd(w[i + 1], V::load(base + off[i + 1]), c[q]); });
        });
    }
}

template <>
struct lane_ops<f4> {
    using V = f4;

    template <class Index>
    static std::size_t guard(const lbs_args& a, bool fast) { return simd_guard<Index>(a, fast, V::width); }

    /// False (and nothing blended) when a packed-mode group holds an index outside the palette.
    template <int K, class Index, group_mode Mode>
    KEYBLEND_SKIN_INLINE static bool blend(const lbs_args& a, std::size_t v, V (&m)[12]) {
        if constexpr (K > 0)
            if (!group_joints_ok<4, K, Index, Mode>(a, v)) return false;
        V c[4][4]; // c[i][q]: column q of vertex v + i
        for_each_vertex<4, K, Index, Mode>(
            a, v, [&](auto i, const std::uint32_t* off, const unsigned char* wp) KEYBLEND_SKIN_LAMBDA {
                blend_matrix<V, K, Index, implied_of(Mode)>(a, v + std::size_t(i), off, wp, c[i]);
            });
        unroll<4>([&](auto q) KEYBLEND_SKIN_LAMBDA {
            const __m128 r[4] = {c[0][q].v, c[1][q].v, c[2][q].v, c[3][q].v};
            transpose3(r, m[3 * q].v, m[3 * q + 1].v, m[3 * q + 2].v);
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
        case layout::interleaved: {
            const __m128 r[4] = {_mm_loadu_ps(s.at(v)), _mm_loadu_ps(s.at(v + 1)), _mm_loadu_ps(s.at(v + 2)),
                                 _mm_loadu_ps(s.at(v + 3))};
            transpose3(r, x.v, y.v, z.v);
            return;
        }
        default: return; // planar and general streams: load_xyz
        }
    }

    KEYBLEND_SKIN_INLINE static void load4(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
        __m128 r[4] = {_mm_loadu_ps(s.at(v)), _mm_loadu_ps(s.at(v + 1)), _mm_loadu_ps(s.at(v + 2)),
                       _mm_loadu_ps(s.at(v + 3))};
        transpose4(r);
        x.v = r[0];
        y.v = r[1];
        z.v = r[2];
        w.v = r[3];
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
            __m128 r[4];
            rows_of(x.v, y.v, z.v, r);
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
        __m128 r[4] = {x.v, y.v, z.v, w.v};
        transpose4(r);
        for (int i = 0; i < 4; ++i) _mm_storeu_ps(s.at(v + std::size_t(i)), r[i]);
    }
};
#endif

// ---------------------------------------------------------------------------------------------
// f8: AVX2 + FMA.
// ---------------------------------------------------------------------------------------------
#if KEYBLEND_SKIN_R_AVX2

/// The first stored weight of each of the 8 vertices from v (packed, K stored weights each).
template <int K>
KEYBLEND_SKIN_INLINE f8 first_weights(const lbs_args& a, std::size_t v) {
    const float* w = reinterpret_cast<const float*>(a.weights) + v * K;
    if constexpr (K == 1) {
        return f8::load(w);
    } else {
        // (Eight scalar loads: only groups of one joint take them.)
        return {_mm256_setr_ps(w[0], w[K], w[2 * K], w[3 * K], w[4 * K], w[5 * K], w[6 * K], w[7 * K])};
    }
}

template <>
struct lane_ops<f8> {
    using V = f8;

    template <class Index>
    static std::size_t guard(const lbs_args& a, bool fast) { return simd_guard<Index>(a, fast, V::width); }

    /// Blends vertices v .. v + 7, four at a time (so the live registers fit AVX2's sixteen), each
    /// four partly transposed (transpose3 within lanes): ua / ub hold columns 0|1 / 2|3 of
    /// vertices 4h .. 4h + 3, ua[h][r] = row r of column 0 (low lane) and column 1 (high lane).
    template <int K, class Index, group_mode Mode, int B = K>
    KEYBLEND_SKIN_INLINE static void blend_group(const lbs_args& a, std::size_t v, __m256 (&ua)[2][3],
                                                 __m256 (&ub)[2][3]) {
        __m256 sa[4], sb[4];
        for_each_vertex<8, K, Index, Mode>(
            a, v, [&](auto n, const std::uint32_t* off, const unsigned char* wp) KEYBLEND_SKIN_LAMBDA {
                constexpr int i = decltype(n)::value % 4, h = decltype(n)::value / 4;
                V c[2];
                blend_matrix<V, B, Index, implied_of(Mode)>(a, v + std::size_t(n), off, wp, c);
                sa[i] = c[0].v;
                sb[i] = c[1].v;
                if constexpr (i == 3) {
                    transpose3(sa, ua[h][0], ua[h][1], ua[h][2]);
                    transpose3(sb, ub[h][0], ub[h][1], ub[h][2]);
                }
            });
    }

    /// False (and nothing blended) when a packed-mode group holds an index outside the palette.
    /// B: the first B of the K slots are blended (slots_used).
    template <int K, class Index, group_mode Mode, int B = K>
    KEYBLEND_SKIN_INLINE static bool blend(const lbs_args& a, std::size_t v, V (&m)[12]) {
        if constexpr (K > 0)
            if (!group_joints_ok<8, K, Index, Mode>(a, v)) return false;
        if constexpr (B == 1 && packed(Mode)) {
            std::uint32_t offset;
            if (one_joint<8, K, Index>(a, v, offset)) {
                // Each element of the matrix broadcast (a load, no shuffle); with a stored weight
                // blended (group_mode::packed), times the group's 8 first weights: w * M, as the
                // blend. (B == 1 < K only with stored weights: slots_used.)
                const float* p = matrix_at(a, offset);
                V w = V::set1(1.0f);
                if constexpr (implied_of(Mode) == 0) w = first_weights<K>(a, v);
                unroll<12>([&](auto e) KEYBLEND_SKIN_LAMBDA {
                    m[e] = V{_mm256_broadcast_ss(p + 4 * (e / 3) + e % 3)};
                    if constexpr (implied_of(Mode) == 0) m[e] = w * m[e];
                });
                return true;
            }
        }
        __m256 ua[2][3], ub[2][3];
        blend_group<K, Index, Mode, B>(a, v, ua, ub);
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

    KEYBLEND_SKIN_INLINE static void load4(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
        __m256 r[4];
        load_rows(s, v, r);
        transpose4(r);
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
            __m256 r[4];
            rows_of(x.v, y.v, z.v, r);
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
        __m256 r[4] = {x.v, y.v, z.v, w.v};
        transpose4(r);
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
template <class V, std::size_t C>
KEYBLEND_SKIN_INLINE lane_array<V, C> load_attribute(const in_stream& s, std::size_t v) {
    lane_array<V, C> r;
    switch (s.kind) {
    case layout::packed:
    case layout::interleaved:
        if constexpr (C == 3)
            lane_ops<V>::load3(s, v, r.c[0], r.c[1], r.c[2]);
        else
            lane_ops<V>::load4(s, v, r.c[0], r.c[1], r.c[2], r.c[3]);
        return r;
    case layout::planar: return load_planar<V, C>(s, v);
    default: return load_general<V, C>(s, v);
    }
}
template <class V>
KEYBLEND_SKIN_INLINE void store_xyz(const out_stream& s, std::size_t v, V x, V y, V z) {
    switch (s.kind) {
    case layout::packed:
    case layout::interleaved: return lane_ops<V>::store3(s, v, x, y, z);
    case layout::planar: return store_planar<V>(s, v, x, y, z);
    default: return store_general(s, v, x, y, z);
    }
}
template <class V>
KEYBLEND_SKIN_INLINE void store_xyzw(const out_stream& s, std::size_t v, V x, V y, V z, V w) {
    switch (s.kind) {
    case layout::packed:
    case layout::interleaved: return lane_ops<V>::store4(s, v, x, y, z, w);
    case layout::planar: return store_planar<V>(s, v, x, y, z, w);
    default: return store_general(s, v, x, y, z, w);
    }
}
template <class V>
KEYBLEND_SKIN_INLINE void load_xyz(const in_stream& s, std::size_t v, V& x, V& y, V& z) {
    const lane_array<V, 3> r = load_attribute<V, 3>(s, v);
    x = r.c[0];
    y = r.c[1];
    z = r.c[2];
}
template <class V>
KEYBLEND_SKIN_INLINE void load_xyzw(const in_stream& s, std::size_t v, V& x, V& y, V& z, V& w) {
    const lane_array<V, 4> r = load_attribute<V, 4>(s, v);
    x = r.c[0];
    y = r.c[1];
    z = r.c[2];
    w = r.c[3];
}

/// Transforms the V::width vertices from v by their blended matrices m[3c + r] (column c, row r
/// of each lane's matrix; c = 3: translation) and stores them: any layout, any streams.
template <class V>
KEYBLEND_SKIN_INLINE void transform_any(const lbs_args& a, std::size_t v, const V (&m)[12]) {
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
                      fmadd(k0y, x, fmadd(k1y, y, k2y * z)) * inv, fmadd(k0z, x, fmadd(k1z, y, k2z * z)) * inv);
        } else {
            store_xyz(a.out_nrm, v, fmadd(m[0], x, fmadd(m[3], y, m[6] * z)), fmadd(m[1], x, fmadd(m[4], y, m[7] * z)),
                      fmadd(m[2], x, fmadd(m[5], y, m[8] * z)));
        }
    }
    if (a.tan.data) {
        load_xyzw(a.tan, v, x, y, z, w);
        store_xyzw(a.out_tan, v, fmadd(m[0], x, fmadd(m[3], y, m[6] * z)), fmadd(m[1], x, fmadd(m[4], y, m[7] * z)),
                   fmadd(m[2], x, fmadd(m[5], y, m[8] * z)), w);
    }
}

/// transform_any out of line: one copy per lane type, whatever the kernel. The blended matrices
/// go through memory, as a copy made here: passed m itself, GCC 12 stored m to the stack in every
/// group, simple or not, before the branch (12 stores a group; 2-3.5% of the time of 2-4 slots).
template <class V>
KEYBLEND_SKIN_NOINLINE void transform_other_copy(const lbs_args& a, std::size_t v, const V (&m)[12]) {
    transform_any(a, v, m);
}
template <class V>
KEYBLEND_SKIN_INLINE void transform_other(const lbs_args& a, std::size_t v, const V (&m)[12]) {
    V copy[12];
    unroll<12>([&](auto i) KEYBLEND_SKIN_LAMBDA { copy[i] = m[i]; });
    transform_other_copy(a, v, copy);
}

/// Streams as a compile-time mask (fixed_skinning): 1 positions, 2 normals, 4 tangents; -1 when
/// only the job knows.
constexpr bool has_normals(int streams) { return streams < 0 || (streams & 2) != 0; }
constexpr bool has_tangents(int streams) { return streams < 0 || (streams & 4) != 0; }

/// transform_any for lbs_args::simple jobs (every stream packed, normals by the palette): the
/// streams' layout made a constant, so that only the packed code is compiled into the kernel.
/// Multiplies by s when Scaled (group_mode::packed_scaled), else returns x.
template <bool Scaled, class V>
KEYBLEND_SKIN_INLINE V scaled(V x, V s) {
    if constexpr (Scaled)
        return x * s;
    else
        return x;
}

template <class V, int Streams, bool Scaled = false>
KEYBLEND_SKIN_INLINE void transform_simple(const lbs_args& a, std::size_t v, const V (&m)[12], V scale = V{}) {
    V x, y, z, w;
    // Packed: the layout and the strides are constants (addresses in one lea, no multiply).
    const auto in = [](in_stream s, std::size_t components) KEYBLEND_SKIN_LAMBDA {
        s.kind = layout::packed;
        s.stride = components * sizeof(float);
        s.cs = sizeof(float);
        return s;
    };
    const auto out = [](out_stream s, std::size_t components) KEYBLEND_SKIN_LAMBDA {
        s.kind = layout::packed;
        s.stride = components * sizeof(float);
        s.cs = sizeof(float);
        return s;
    };
    (void)scale;
    lane_ops<V>::load3(in(a.pos, 3), v, x, y, z);
    lane_ops<V>::store3(out(a.out_pos, 3), v, scaled<Scaled>(fmadd(m[0], x, fmadd(m[3], y, fmadd(m[6], z, m[9]))), scale),
                        scaled<Scaled>(fmadd(m[1], x, fmadd(m[4], y, fmadd(m[7], z, m[10]))), scale),
                        scaled<Scaled>(fmadd(m[2], x, fmadd(m[5], y, fmadd(m[8], z, m[11]))), scale));
    if (has_normals(Streams) && (Streams >= 0 || a.nrm.data)) {
        lane_ops<V>::load3(in(a.nrm, 3), v, x, y, z);
        lane_ops<V>::store3(out(a.out_nrm, 3), v, scaled<Scaled>(fmadd(m[0], x, fmadd(m[3], y, m[6] * z)), scale),
                            scaled<Scaled>(fmadd(m[1], x, fmadd(m[4], y, m[7] * z)), scale),
                            scaled<Scaled>(fmadd(m[2], x, fmadd(m[5], y, m[8] * z)), scale));
    }
    if (has_tangents(Streams) && (Streams >= 0 || a.tan.data)) {
        lane_ops<V>::load4(in(a.tan, 4), v, x, y, z, w);
        lane_ops<V>::store4(out(a.out_tan, 4), v, scaled<Scaled>(fmadd(m[0], x, fmadd(m[3], y, m[6] * z)), scale),
                            scaled<Scaled>(fmadd(m[1], x, fmadd(m[4], y, m[7] * z)), scale),
                            scaled<Scaled>(fmadd(m[2], x, fmadd(m[5], y, m[8] * z)), scale), w);
    }
}

template <class V, int Streams>
KEYBLEND_SKIN_INLINE void transform_group(const lbs_args& a, std::size_t v, const V (&m)[12]) {
    if constexpr (V::width == 1) {
        transform_any(a, v, m);
    } else {
        if (a.simple)
            transform_simple<V, Streams>(a, v, m);
        else
            transform_other(a, v, m);
    }
}

/// Transforms and stores the group from v with its blended matrices m, in the kernel's mode.
template <class V, group_mode Mode, int Streams>
KEYBLEND_SKIN_INLINE void transform_any_mode(const lbs_args& a, std::size_t v, const V (&m)[12]) {
    if constexpr (Mode == group_mode::packed_scaled) {
        // w (M v) for (w M) v (the same within rounding): the group's weights in one load. A
        // group whose weights are all 1 (a normalised mesh's one-influence vertices) skips the
        // multiplies, which would change no bit.
        const V w = V::load(reinterpret_cast<const float*>(a.weights) + v);
        if (all_true(w == V::set1(1.0f)))
            transform_simple<V, Streams>(a, v, m);
        else
            transform_simple<V, Streams, true>(a, v, m, w);
    } else {
        transform_group<V, Streams>(a, v, m);
    }
}

#if KEYBLEND_SKIN_R_AVX512
/// The 8 vertices from v of a job whose streams are simple (lbs_args::simple) without tangents,
/// as two quads of one vertex per 128-bit lane (array of structures): the AVX-512 kernels' way for
/// one slot, and for 2 to 4 with lbs_args::quads. Each vertex's matrix is blended in one 512-bit
/// register (blend_matrix<f16>: for one slot, the palette matrix; K slots, one 512-bit FMA each);
/// a quad's four matrices are transposed by 128-bit blocks into its columns c0..c3 (vertex i's
/// column in lane i); its coordinates are broadcast within lanes, and the columns take them by
/// FMA. No transpose into lanes of floats and no packed-xyz shuffles: 18 512-bit shuffles a quad.
/// One slot, measured on Zen 4 with 1624 vertices (positions and normals): 4-9% less time than
/// the 8-lane kernel. 2 to 4 slots: on Zen 4 no faster or 4% slower (512-bit FMAs run one a cycle
/// there, and the blend is most of the work); on Zen 5, which runs two a cycle, 17-25% faster in
/// every case of bench_skin and the side-by-side harness (2 and 4 influences, 4432 to 100k
/// vertices; 8 influences 17% faster too, left to the eight lanes: quads for 5 to 8 slots made
/// the general run() take 23% longer to compile). The FMAs are those of blend_matrix and
/// transform_simple in the same order, so every vertex's bits are the 8-lane kernel's (tests
/// compare them).
// 512-bit shuffles in their all-lanes maskz forms, the same instructions: GCC 12's plain forms
// start from _mm512_undefined_ps, which -Wmaybe-uninitialized reports once inlined.
template <int Imm>
KEYBLEND_SKIN_INLINE __m512 in_lanes(__m512 x) { return _mm512_maskz_permute_ps(0xFFFF, x, Imm); }
template <int Imm>
KEYBLEND_SKIN_INLINE __m512 blocks(__m512 x, __m512 y) { return _mm512_maskz_shuffle_f32x4(0xFFFF, x, y, Imm); }
KEYBLEND_SKIN_INLINE __m512 permute(__m512i index, __m512 x) { return _mm512_maskz_permutexvar_ps(0xFFFF, index, x); }
/// The 4 floats at p in every 128-bit block.
KEYBLEND_SKIN_INLINE __m512 every_block(const float* p) { return _mm512_maskz_broadcast_f32x4(0xFFFF, _mm_loadu_ps(p)); }

/// True when the 4 vertices from u (packed, K stored weights each) use only their first slot:
/// the others are all weight 0 (a NaN is not 0), read in one masked load of the quad's 4K weights.
template <int K>
KEYBLEND_SKIN_INLINE bool quad_one_slot(const lbs_args& a, std::size_t u) {
    static_assert(K >= 2 && K <= 4, "2 to 4 slots");
    const float* w = reinterpret_cast<const float*>(a.weights) + u * K;
    constexpr __mmask16 quad = __mmask16((1u << (4 * K)) - 1);
    constexpr __mmask16 firsts = __mmask16(1u | (1u << K) | (1u << (2 * K)) | (1u << (3 * K)));
    return _mm512_mask_cmp_ps_mask(__mmask16(quad & ~firsts), _mm512_maskz_loadu_ps(quad, w), _mm512_setzero_ps(),
                                   _CMP_NEQ_UQ) == 0;
}

/// A quad's four 512-bit matrices transposed by 128-bit blocks into its columns: c[j] = column j
/// of the four vertices, vertex i's in lane i.
KEYBLEND_SKIN_INLINE void quad_transpose(const __m512 (&m)[4], __m512 (&c)[4]) {
    const __m512 t0 = blocks<0x44>(m[0], m[1]); // a0 a1 b0 b1
    const __m512 t1 = blocks<0xEE>(m[0], m[1]); // a2 a3 b2 b3
    const __m512 t2 = blocks<0x44>(m[2], m[3]);
    const __m512 t3 = blocks<0xEE>(m[2], m[3]);
    c[0] = blocks<0x88>(t0, t2); // a0 b0 c0 d0
    c[1] = blocks<0xDD>(t0, t2);
    c[2] = blocks<0x88>(t1, t3);
    c[3] = blocks<0xDD>(t1, t3);
}

/// The columns of the quad from u blending the first B of its K slots: cj = column j of the four
/// vertices, vertex i's in lane i.
template <int K, int B, class Index, group_mode Mode>
KEYBLEND_SKIN_INLINE void quad_columns(const lbs_args& a, std::size_t u, __m512 (&c)[4]) {
    if constexpr (B == 1) {
        std::uint32_t offset;
        if (one_joint<4, K, Index>(a, u, offset)) {
            // One joint for the quad: each column broadcast to the four lanes, no transpose (18
            // shuffles a quad -> 10). Unweighted (one slot, implied or scaled afterwards: the palette
            // matrix, as blend_matrix gives it), or times each vertex's first weight (stored: w * M,
            // as blend_matrix's w[0] * M).
            const float* p = matrix_at(a, offset);
            unroll<4>([&](auto j) KEYBLEND_SKIN_LAMBDA { c[j] = every_block(p + 4 * j); });
            if constexpr (implied_of(Mode) == 0) {
                // The quad's 4K weights in one load, each vertex's first spread over its lane.
                static_assert(K <= 4, "a quad's weights in one register");
                const float* w = reinterpret_cast<const float*>(a.weights) + u * K;
                const __m512i first_of = _mm512_setr_epi32(0, 0, 0, 0, K, K, K, K, 2 * K, 2 * K, 2 * K, 2 * K, 3 * K,
                                                           3 * K, 3 * K, 3 * K);
                const __m512 first = permute(first_of, _mm512_maskz_loadu_ps(__mmask16((1u << (4 * K)) - 1), w));
                unroll<4>([&](auto j) KEYBLEND_SKIN_LAMBDA { c[j] = _mm512_mul_ps(first, c[j]); });
            }
            return;
        }
    }
    __m512 m[4];
    for_each_vertex<4, K, Index, Mode>(a, u, [&](auto i, const std::uint32_t* off, const unsigned char* wp) KEYBLEND_SKIN_LAMBDA {
        f16 b[1];
        blend_matrix<f16, B, Index, implied_of(Mode)>(a, u + std::size_t(i), off, wp, b);
        m[i] = b[0].v;
    });
    quad_transpose(m, c);
}

template <int K, class Index, group_mode Mode, int Streams>
KEYBLEND_SKIN_INLINE void aos_group(const lbs_args& a, std::size_t v) {
    // group_mode::packed_scaled: w (M v), each vertex's weight in its lane; skipped when the
    // group's weights are all 1 (as transform_any_mode).
    bool scale = false;
    __m512 weights = _mm512_setzero_ps();
    if constexpr (Mode == group_mode::packed_scaled) {
        weights = _mm512_maskz_loadu_ps(0x00FF, reinterpret_cast<const float*>(a.weights) + v);
        scale = _mm512_mask_cmp_ps_mask(0x00FF, weights, _mm512_set1_ps(1.0f), _CMP_EQ_OQ) != 0x00FF;
    }
    // c[h][j]: column j of quad h's four vertices, vertex i's in lane i.
    __m512 c[2][4];
    unroll<2>([&](auto h) KEYBLEND_SKIN_LAMBDA {
        const std::size_t u = v + 4 * std::size_t(h);
        if constexpr (Mode == group_mode::packed && K >= 2 && K <= 4) {
            // The loader's layout, when the mesh has unused slots (skip_zero_slots): a quad whose
            // vertices use one slot (a rigid part's; half of Testwuson's vertices) blends that
            // slot only, and broadcasts its matrix when the four share its joint. (Blending up to
            // each quad's last used slot, 2 to K, as the 8-lane groups do (slots_used), took 18%
            // less time on Testwuson's mesh but 57% more compile time for a fixed_skinning<4>
            // file, 3.9 -> 6.1 s: each count is another inlined blend of the quad.)
            if (a.skip_zero_slots && quad_one_slot<K>(a, u)) {
                quad_columns<K, 1, Index, Mode>(a, u, c[h]);
                return;
            }
        }
        quad_columns<K, K, Index, Mode>(a, u, c[h]);
    });
    // A stream's 24 floats of the group in two 512-bit loads (floats 0-15 and 8-23), and back in
    // two 512-bit stores (the second writes floats 8-15 again, with the same values): exactly the
    // group's 96 bytes are read and written, with no masks. (With masked 512-bit accesses of each
    // quad's 48 bytes, on Zen 5, bench_skin's quads at 2 to 4 slots were 15% slower than its
    // eight lanes while the side-by-side harness's were 12% faster; exact, both are 17-25%
    // faster. Presumably a load that overlaps the masked-off bytes of an earlier store, or
    // aliases them modulo 4 KB, waits for it.) Each quad's 12 floats one vertex per lane (x y z z).
    const __m512i in_lo = _mm512_setr_epi32(0, 1, 2, 2, 3, 4, 5, 5, 6, 7, 8, 8, 9, 10, 11, 11);
    const __m512i in_hi = _mm512_setr_epi32(4, 5, 6, 6, 7, 8, 9, 9, 10, 11, 12, 12, 13, 14, 15, 15);
    const __m512i out_lo = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 20);
    const __m512i out_hi = _mm512_setr_epi32(10, 12, 13, 14, 16, 17, 18, 20, 21, 22, 24, 25, 26, 28, 29, 30);
    const auto load = [&](const in_stream& s, __m512 (&q)[2]) KEYBLEND_SKIN_LAMBDA {
        const float* p = reinterpret_cast<const float*>(s.data) + 3 * v;
        q[0] = permute(in_lo, _mm512_loadu_ps(p));
        q[1] = permute(in_hi, _mm512_loadu_ps(p + 8));
    };
    const auto store = [&](const out_stream& s, __m512 (&r)[2]) KEYBLEND_SKIN_LAMBDA {
        if (scale) {
            const __m512i lane_of = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
            r[0] = _mm512_mul_ps(r[0], permute(lane_of, weights));
            r[1] = _mm512_mul_ps(r[1], permute(_mm512_add_epi32(lane_of, _mm512_set1_epi32(4)), weights));
        }
        float* p = reinterpret_cast<float*>(s.data) + 3 * v;
        _mm512_storeu_ps(p, _mm512_permutex2var_ps(r[0], out_lo, r[1]));
        _mm512_storeu_ps(p + 8, _mm512_permutex2var_ps(r[0], out_hi, r[1]));
    };
    __m512 q[2], r[2];
    load(a.pos, q);
    unroll<2>([&](auto h) KEYBLEND_SKIN_LAMBDA {
        const __m512 pz = _mm512_fmadd_ps(c[h][2], in_lanes<0xAA>(q[h]), c[h][3]);
        r[h] = _mm512_fmadd_ps(c[h][0], in_lanes<0x00>(q[h]), _mm512_fmadd_ps(c[h][1], in_lanes<0x55>(q[h]), pz));
    });
    store(a.out_pos, r);
    if (has_normals(Streams) && (Streams >= 0 || a.nrm.data)) {
        load(a.nrm, q);
        unroll<2>([&](auto h) KEYBLEND_SKIN_LAMBDA {
            const __m512 nz = _mm512_mul_ps(c[h][2], in_lanes<0xAA>(q[h]));
            r[h] = _mm512_fmadd_ps(c[h][0], in_lanes<0x00>(q[h]), _mm512_fmadd_ps(c[h][1], in_lanes<0x55>(q[h]), nz));
        });
        store(a.out_nrm, r);
    }
}
#endif

template <class V, int K, class Index, group_mode Mode, int Streams>
void lbs_kernel(const lbs_args& args, std::size_t begin, std::size_t end);

/// A group whose joints are not all within the palette (invalid data, which validate() reports):
/// skinned by the scalar kernel, which clamps, out of line so that the kernels' loops stay lean.
template <class V, class Index>
KEYBLEND_SKIN_COLD void lbs_group_clamped(const lbs_args& a, std::size_t v) {
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
#if KEYBLEND_SKIN_R_AVX512
    if constexpr (V::width == 8 && K <= 4 && packed(Mode) && !(Streams >= 0 && has_tangents(Streams))) {
        if (a.simple && !a.tan.data && !a.out_pos.streaming && !a.out_nrm.streaming && (K == 1 || a.quads)) {
            for (; v < end; v += V::width) {
                if (group_joints_ok<8, K, Index, Mode>(a, v))
                    aos_group<K, Index, Mode, Streams>(a, v);
                else
                    lbs_group_clamped<V, Index>(a, v);
            }
            return;
        }
    }
    if constexpr (K == 1 && V::width == 8) {
        // One influence (no blend: the matrices are loaded and transposed), two groups a step,
        // both loaded before either is transformed: a group's chain from its joint loads to its
        // stores is long next to its work, and the core then has the other group's to overlap
        // (5% faster on Zen 4; with 2 or more influences no faster or slower: the blends fill
        // the core, and two groups' registers no longer fit in 32).
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
#if KEYBLEND_SKIN_R_AVX2
    if constexpr (V::width == 8 && K >= 2 && K <= 4 && Mode == group_mode::packed) {
        if (a.skip_zero_slots) {
            // Each group blends the slots its vertices use (slots_used): 0 * M added to a sum
            // changes nothing but, at most, the sign of a zero.
            for (; v < end; v += V::width) {
                const int used = slots_used<K>(a, v);
                V m[12];
                bool ok = false;
                unroll<K>([&](auto i) KEYBLEND_SKIN_LAMBDA {
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

/// The bit set of the s in [0, W) at which `stream` is aligned to 4 * W bytes at vertex begin + s
/// (packed streams only; others never count as aligned): with a = (address at begin) / 4 modulo
/// W and the stride in floats c (3 or 4), the s with a + c * s = 0 (modulo W). W is a power of 2.
template <std::size_t W, class Stream>
KEYBLEND_SKIN_INLINE std::uint32_t aligned_at(const Stream& stream, std::size_t begin) {
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
/// aligned). A store that straddles costs more than a load: with inputs and outputs 16 bytes apart
/// modulo 32, aligning the outputs was measured 8% faster than aligning the inputs (Zen 4, AVX-512,
/// 1624 vertices, positions + normals). Every vertex takes the same arithmetic wherever the groups
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
KEYBLEND_SKIN_NOINLINE void lbs_bounce(const lbs_args& a, std::size_t v, std::size_t count) {
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
    for (std::size_t i = 0; i < count; ++i) {
        for (std::size_t c = 0; c < 3; ++c) *a.out_pos.at(v + i, c) = pout[3 * i + c];
        if (normals)
            for (std::size_t c = 0; c < 3; ++c) *a.out_nrm.at(v + i, c) = nout[3 * i + c];
        if (tangents)
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
KEYBLEND_SKIN_INLINE bool in_place(const lbs_args& a) {
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

/// Runs a checked job's range with lane type V (see run_lbs for K, Implied, Streams). A palette
/// of at most palette_copy_limit matrices not aligned to V's register (32 bytes for AVX2, 64 for
/// AVX-512; a std::vector<glm::mat4> is only 16-byte aligned) is copied to an aligned stack buffer
/// first, when the range has at least 4 vertices per matrix: misaligned, one in two of AVX2's
/// 32-byte palette loads straddles a cache line (~10% slower), and every AVX-512 64-byte one.
/// Copying 128 matrices costs about as much as skinning 50 vertices. Non-temporal stores are
/// fenced before returning (visible to other threads).
template <class V, class Index, int K = 0, int Implied = -1, int Streams = -1>
void run_job(const lbs_args& args, std::size_t begin, std::size_t end, std::size_t n, std::size_t palette_size) {
    constexpr std::size_t alignment = V::width * sizeof(float);
    alignas(64) float copy[palette_copy_limit * 16];
#if defined(KEYBLEND_SKIN_TEST_HOOK)
    // Tests only (tests/skin_isa_mix.cmake): reports which kernel set and lane width ran.
    KEYBLEND_SKIN_TEST_HOOK(isa, V::width);
#endif
    // (Worth it from a few vertices per matrix: a split mesh's small jobs skip it, and the copy
    // of the arguments.)
    if (reinterpret_cast<std::uintptr_t>(args.palette) % alignment != 0 && palette_size <= palette_copy_limit &&
        end - begin >= 4 * palette_size) {
        std::memcpy(copy, args.palette, palette_size * 16 * sizeof(float));
        lbs_args a = args;
        a.palette = copy;
        run_lbs<V, Index, K, Implied, Streams>(a, begin, end, n);
    } else {
        run_lbs<V, Index, K, Implied, Streams>(args, begin, end, n);
    }
#if KEYBLEND_SKIN_R_SSE2
    if (args.out_pos.streaming || args.out_nrm.streaming) _mm_sfence();
#endif
}

/// Where run_job<V> starts its first SIMD group in [begin, ...): skin_parallel splits there.
template <class V>
std::size_t first_group(lbs_args a, std::size_t begin) {
    return group_start<V>(a, begin);
}

} // namespace KEYBLEND_SKIN_REGION
} // namespace skin
} // namespace impl
} // namespace keyblend
