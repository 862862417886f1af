// keyblend — the byte layout of a compressed clip, its validation, and the per-segment decoding
// tables that the compressor and the sampler share. Internal: namespace keyblend::impl::cc.
// Included by compress.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
//
// A compressed clip is one little-endian blob, used in place (read from a file or a package, or
// owned by a compressed_clip). Every offset is relative to the blob's first byte; sections are
// 4-byte aligned and in this order, each starting at or after the end of the one before:
//
//   header              clip_header (below), 176 bytes
//   joint kinds         u16 per joint: bits 0-1 translation kind, 2-3 rotation kind, 4-5 scale
//                       kind (0 default = the bind pose, not stored; 1 constant; 2 varying); bits
//                       6, 7, 8 set where that component holds its sample until the next one (step)
//   weight kinds        u8 per morph weight of the skeleton: bits 0-1 kind, bit 2 step
//   constants           f32: per joint in order, its constant components (translation x y z,
//                       rotation x y z w, scale x y z), then the constant morph weights
//   clip ranges         per varying track, in the order translations, rotations, scales, weights:
//                       translation / scale 3 x (min f32, extent f32); rotation 4 x (min u16,
//                       extent u16) over [-1, 1] (value = -1 + 2 m / 65535, extent 2 e / 65535);
//                       weight (min f32, extent f32)
//   spans               per span {f32 start, f32 end, u32 first sample, u32 sample count}: the
//                       clip's time axis [0, end] in pieces, each sampled uniformly, both ends
//                       included; a span starts with the sample after the last one of the span
//                       before it (a discontinuity: that last sample is the value just before it)
//                       or with that very sample (no discontinuity: the two share it)
//   segment offsets     u32 per segment + 1: where each segment's records start in the data
//   segment metadata    per segment: u8 per varying track (bits 0-4 the track's width w, 0..24;
//                       bits 5-6 a rotation's dropped component), then u8 per component its
//                       segment minimum, then u8 per component its segment extent, both in 1/255
//                       of the clip range (rounded outward)
//   data                per segment, its samples' records one after the other, bit-packed least
//                       significant bit first; a record holds every varying component in
//                       component order (below), each in its own width; 16 bytes of zero padding
//                       after the last segment (the sampler reads 4 bytes from any bit's byte)
//   name                the clip's name (bytes)
//   extras              user channels, events and root motion, uncompressed (extras_* below)
//
// Component order (the "compact" order of a record, of segment minima and extents): every
// varying translation's x, then every one's y, then z; every varying rotation's first kept
// component, second, third; scales' x, y, z; then the varying morph weights. A rotation keeps
// three of its four components (x, y, z, w in that order, skipping the dropped one, whose sign is
// positive and whose value is sqrt(1 - the others' squares)).
//
// Widths. A component's width comes from its track's width w and the extents: with L the binary
// exponent of a component's absolute extent (that of its clip extent plus floor(log2) of the
// extent byte: integers only, so that every build derives the same widths), a component of a
// track whose largest L is Lmax has width max(0, w - (Lmax - L)), and width 0 when its extent
// byte or clip extent is 0. Its value is lo + q * scale with q the width-bit code,
// lo = clip_min + clip_extent * (min_byte * (1/255)), scale = clip_extent * (extent_byte * (1/255))
// * (1 / (2^width - 1)) (0 for width 0), each factor the float written here.
#pragma once

#include "../error.hpp"
#include "../math.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// The CRC-32C paths the compiler's target allows (crc32c below): SSE4.2's crc32 instruction, and
// carry-less multiplication on 512-bit registers (AVX-512 with VPCLMULQDQ).
#if defined(__SSE4_2__) && !defined(KEYBLEND_NO_INTRINSICS) && (defined(__x86_64__) || defined(_M_X64))
#define KEYBLEND_CRC_SSE42 1
#include <nmmintrin.h>
#else
#define KEYBLEND_CRC_SSE42 0
#endif
#if KEYBLEND_CRC_SSE42 && defined(__AVX512F__) && defined(__VPCLMULQDQ__) && !defined(KEYBLEND_NO_AVX512)
#define KEYBLEND_CRC_FOLD512 1
#include <immintrin.h>
#else
#define KEYBLEND_CRC_FOLD512 0
#endif

namespace keyblend {
namespace impl {
namespace cc {

inline constexpr std::uint32_t clip_magic = 0x4343424bu; // "KBCC"
inline constexpr std::uint32_t clip_version = 1;
inline constexpr unsigned max_width = 24;
inline constexpr std::size_t data_padding = 16;
/// Bounds on what a compressed clip may declare (a hostile blob cannot make a sampler allocate or
/// loop more than this).
inline constexpr std::uint32_t max_joints = 65536;
inline constexpr std::uint32_t max_morph_weights = 1u << 20;
inline constexpr std::uint32_t max_samples = 1u << 26;

enum kind : unsigned { kind_default = 0, kind_constant = 1, kind_varying = 2 };
enum group : unsigned { group_translation = 0, group_rotation = 1, group_scale = 2, group_weight = 3 };

enum header_flags : std::uint32_t {
    flag_additive = 1u,
    flag_ticks_default = 2u,
    flag_bound_met = 4u,
};

/// The fixed header. Every member is 4 bytes, so the struct has no padding and is read and written
/// with memcpy.
struct clip_header {
    std::uint32_t magic, version, flags, size;
    std::uint32_t joint_count, morph_weight_total, skeleton_hash, wrap;
    float duration, ticks_per_second;
    std::uint32_t span_count, sample_count, segment_length, segment_count;
    std::uint32_t varying[4];  // translation, rotation, scale, weight tracks
    std::uint32_t constant[4]; // the same, constant
    std::uint32_t off_joint_kinds, off_weight_kinds, off_constants, off_ranges, off_spans, off_segments,
        off_meta, off_data, data_size, off_name, name_size, off_extras, extras_size;
    float precision, shell, weight_precision, max_error, max_error_time, max_weight_error;
    std::uint32_t max_error_joint, source_key_bytes;
    std::uint32_t reserved;
};
static_assert(sizeof(clip_header) == 176, "the header is 44 four-byte fields");

/// Little-endian reads and writes of the blob's scalars (the blob's byte order is the host's on
/// the little-endian machines keyblend supports; validate() refuses big-endian hosts).
template <class T>
inline T read(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class T>
inline void write(unsigned char* p, T v) {
    std::memcpy(p, &v, sizeof v);
}

inline bool host_is_little_endian() {
    const std::uint32_t one = 1;
    unsigned char b;
    std::memcpy(&b, &one, 1);
    return b == 1;
}

/// floor(log2(v)) of a positive integer (-1 for 0).
inline int ilog2(std::uint32_t v) {
#if defined(__GNUC__) || defined(__clang__)
    return v ? 31 - __builtin_clz(v) : -1;
#else
    int l = -1;
    while (v) {
        v >>= 1;
        ++l;
    }
    return l;
#endif
}
/// The biased binary exponent of a float's bits (0 for zero and subnormals).
inline int float_exponent(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return static_cast<int>((bits >> 23) & 0xffu);
}

/// Rotation clip ranges: fixed point over [-1, 1].
inline float rotation_range_min(std::uint16_t m) { return -1.0f + 2.0f * (static_cast<float>(m) / 65535.0f); }
inline float rotation_range_extent(std::uint16_t e) { return 2.0f * (static_cast<float>(e) / 65535.0f); }

/// The parsed, validated layout of a blob: its header and where things are.
struct clip_layout {
    clip_header h{};
    std::uint32_t tracks = 0;       // varying tracks, all groups
    std::uint32_t components = 0;   // varying components (compact order)
    std::uint32_t meta_stride = 0;  // bytes of metadata per segment
    std::uint32_t track_base[4] = {0, 0, 0, 0};     // first track of each group
    std::uint32_t component_base[4] = {0, 0, 0, 0}; // first component of each group
    std::uint32_t range_base[4] = {0, 0, 0, 0};     // byte offset of each group's clip ranges
};

/// The components a group's track has in the record.
inline unsigned group_components(unsigned g) { return g == group_weight ? 1u : 3u; }

/// Fills the derived members of `l` from l.h's counts.
inline void derive_layout(clip_layout& l) {
    const std::uint32_t* v = l.h.varying;
    l.tracks = v[0] + v[1] + v[2] + v[3];
    l.components = 3 * (v[0] + v[1] + v[2]) + v[3];
    l.meta_stride = l.tracks + 2 * l.components;
    std::uint32_t t = 0, c = 0, r = 0;
    const std::uint32_t range_bytes[4] = {24, 16, 24, 8};
    for (unsigned g = 0; g < 4; ++g) {
        l.track_base[g] = t;
        l.component_base[g] = c;
        l.range_base[g] = r;
        t += v[g];
        c += group_components(g) * v[g];
        r += range_bytes[g] * v[g];
    }
}

/// The clip range of component `k` (0..3 for rotations: x, y, z, w; 0..2 for vectors; 0 for a
/// weight) of varying track `i` of group `g`, and L's clip part (see the top of this file).
struct clip_range {
    float min = 0.0f, extent = 0.0f;
    int exponent = 0; // meaningful where extent > 0
};
/// With Values false, a rotation range's min and extent are not computed (extent is 1 where the
/// range is not empty): what widths alone need.
template <bool Values = true>
inline clip_range read_clip_range(const clip_layout& l, const unsigned char* blob, unsigned g, std::uint32_t i,
                                  unsigned k) {
    const unsigned char* p = blob + l.h.off_ranges + l.range_base[g];
    clip_range r;
    if (g == group_rotation) {
        p += std::size_t(i) * 16 + k * 4;
        const std::uint16_t m = read<std::uint16_t>(p), e = read<std::uint16_t>(p + 2);
        if constexpr (Values) {
            r.min = rotation_range_min(m);
            r.extent = rotation_range_extent(e);
        } else {
            r.extent = e ? 1.0f : 0.0f;
        }
        r.exponent = e ? ilog2(e) : 0;
    } else {
        p += std::size_t(i) * (g == group_weight ? 8 : 24) + k * 8;
        r.min = read<float>(p);
        r.extent = read<float>(p + 4);
        r.exponent = float_exponent(r.extent);
    }
    return r;
}

/// 1 / (2^w - 1) for the widths w a code can have (0 for w = 0): a component's scale is its
/// extent times this, so that every path computes it with one multiplication.
inline const float* width_reciprocals() {
    static const struct table {
        float v[32];
        table() : v{} {
            for (unsigned w = 1; w < 32; ++w) v[w] = 1.0f / static_cast<float>((1u << w) - 1u);
        }
    } t;
    return t.v;
}
/// 1/255: the segment ranges' unit.
inline constexpr float byte_unit = 1.0f / 255.0f;

/// One component's decoding in one segment.
struct component_code {
    unsigned width = 0;
    float bias = 0.0f;  // the segment's low end
    float scale = 0.0f; // extent / (2^width - 1), 0 for width 0
};

/// The components of a rotation track that are kept when `drop` is dropped: kept k is component
/// kept_component(drop, k) (x = 0, y = 1, z = 2, w = 3).
inline unsigned kept_component(unsigned drop, unsigned k) { return k < drop ? k : k + 1; }

/// Calls f(component, code) for every component of the segment whose metadata is `meta`, in
/// component order, and drop(rotation track, dropped component) for every rotation: the one
/// definition of widths and dequantisation that validation, the compressor and every sampler path
/// use. Returns the record's width in bits.
/// With Values false, only the widths are computed (bias and scale are 0): what validation needs.
template <bool Values = true, class F, class Drop>
std::uint64_t for_each_code(const clip_layout& l, const unsigned char* blob, const unsigned char* meta, F&& f,
                            Drop&& drop_of) {
    const unsigned char* mins = meta + l.tracks;
    const unsigned char* exts = mins + l.components;
    (void)mins;
    std::uint64_t bits = 0;
    for (unsigned g = 0; g < 4; ++g) {
        const std::uint32_t n = l.h.varying[g];
        const unsigned dims = group_components(g);
        for (std::uint32_t i = 0; i < n; ++i) {
            const unsigned char code = meta[l.track_base[g] + i];
            const int w = code & 31;
            const unsigned drop = (code >> 5) & 3u;
            if (g == group_rotation) drop_of(i, drop);
            clip_range r[3];
            int level[3] = {0, 0, 0};
            bool live[3] = {false, false, false};
            int top = -1000;
            for (unsigned k = 0; k < dims; ++k) {
                const std::uint32_t c = l.component_base[g] + k * n + i;
                r[k] = read_clip_range<Values>(l, blob, g, i, g == group_rotation ? kept_component(drop, k) : k);
                live[k] = exts[c] != 0 && r[k].extent > 0.0f;
                if (live[k]) {
                    level[k] = r[k].exponent + ilog2(exts[c]);
                    top = std::max(top, level[k]);
                }
            }
            for (unsigned k = 0; k < dims; ++k) {
                const std::uint32_t c = l.component_base[g] + k * n + i;
                component_code out;
                out.width = live[k] ? static_cast<unsigned>(std::max(0, w - (top - level[k]))) : 0u;
                if constexpr (Values) {
                    // (Two statements: a compiler that contracts within one expression only, as
                    // clang does, must not fuse these into an FMA the lanes do not use.)
                    const float offset = r[k].extent * (static_cast<float>(mins[c]) * byte_unit);
                    out.bias = r[k].min + offset;
                    const float ext = r[k].extent * (static_cast<float>(exts[c]) * byte_unit);
                    out.scale = ext * width_reciprocals()[out.width];
                }
                bits += out.width;
                f(c, out);
            }
        }
    }
    return bits;
}

/// The value of a code q under `code` (the scalar reference of the sampler's dequantisation).
inline float dequantize(const component_code& code, std::uint32_t q) {
    return code.bias + static_cast<float>(q) * code.scale;
}

/// The 4-byte little-endian word at byte `byte` of `data`, then `width` bits from bit `shift`.
inline std::uint32_t read_bits(const unsigned char* data, std::uint64_t bit, unsigned width) {
    const std::uint32_t word = read<std::uint32_t>(data + (bit >> 3));
    return (word >> (bit & 7u)) & ((1u << width) - 1u);
}

/// The fourth component of a unit quaternion from the other three: sqrt(1 - a² - b² - c²),
/// 0 where rounding makes that negative.
inline float complete_quaternion(float a, float b, float c) {
    return std::sqrt(std::max(0.0f, 1.0f - (a * a + b * b + c * c)));
}

/// Slice-by-8 tables of the reflected Castagnoli polynomial 0x82F63B78.
struct crc_tables {
    std::uint32_t t[8][256];
    constexpr crc_tables() : t{} {
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
            t[0][i] = c;
        }
        for (std::uint32_t i = 0; i < 256; ++i)
            for (int k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xffu];
    }
};
inline const crc_tables& crc_table() {
    static constexpr crc_tables tables;
    return tables;
}

/// CRC-32C is linear: the register after a block that started from state s is shift(s) xor the
/// register after the same block started from 0, where shift appends the block's length of zero
/// bytes. So three blocks can run as three independent streams (the crc32 instruction's latency
/// is three times its throughput) and be joined: shift(shift(c0) ^ c1) ^ c2. shift for
/// `stream_block` bytes, as four byte tables of the 32x32 GF(2) operator (built by squaring the
/// one-bit operator).
inline constexpr std::size_t stream_block = 4096;
struct crc_shift_tables {
    std::uint32_t t[4][256];
    static std::uint32_t apply(const std::uint32_t* m, std::uint32_t v) {
        std::uint32_t r = 0;
        for (int i = 0; v; ++i, v >>= 1)
            if (v & 1u) r ^= m[i];
        return r;
    }
    static void square(std::uint32_t* m) {
        std::uint32_t out[32];
        for (int i = 0; i < 32; ++i) out[i] = apply(m, m[i]);
        std::memcpy(m, out, sizeof out);
    }
    crc_shift_tables() : t{} {
        std::uint32_t m[32]; // one zero bit: v >> 1, xor the polynomial where the low bit was set
        m[0] = 0x82F63B78u;
        for (int i = 1; i < 32; ++i) m[i] = 1u << (i - 1);
        for (std::size_t bits = 1; bits < 8 * stream_block; bits *= 2) square(m);
        for (int k = 0; k < 4; ++k)
            for (std::uint32_t b = 0; b < 256; ++b) t[k][b] = apply(m, b << (8 * k));
    }
    std::uint32_t shift(std::uint32_t c) const {
        return t[0][c & 0xffu] ^ t[1][(c >> 8) & 0xffu] ^ t[2][(c >> 16) & 0xffu] ^ t[3][c >> 24];
    }
};
inline const crc_shift_tables& crc_shift() {
    static const crc_shift_tables tables;
    return tables;
}

/// The CRC register (before the final complement) after the bytes [p, p + size), from register
/// `c`: the tables, on any host. The reference the instruction-set paths are tested against.
inline std::uint32_t crc32c_tables(const unsigned char* p, std::size_t size, std::uint32_t c) noexcept {
    const auto& t = crc_table().t;
    for (; size >= 8; p += 8, size -= 8) {
        const std::uint32_t lo = c ^ (std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24);
        c = t[7][lo & 0xffu] ^ t[6][(lo >> 8) & 0xffu] ^ t[5][(lo >> 16) & 0xffu] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
            t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    }
    for (; size; ++p, --size) c = (c >> 8) ^ t[0][(c ^ *p) & 0xffu];
    return c;
}

#if KEYBLEND_CRC_SSE42
inline std::uint64_t crc_word(const unsigned char* q) {
    std::uint64_t w;
    std::memcpy(&w, q, sizeof w);
    return w;
}

/// As crc32c_tables, with SSE4.2's crc32 instruction: blocks of 3 * stream_block bytes as three
/// streams, the rest as one.
inline std::uint32_t crc32c_streams(const unsigned char* p, std::size_t size, std::uint32_t c) noexcept {
    constexpr std::size_t block = stream_block;
    if (size >= 3 * block) {
        const crc_shift_tables& shift = crc_shift();
        for (; size >= 3 * block; p += 3 * block, size -= 3 * block) {
            std::uint64_t c0 = c, c1 = 0, c2 = 0;
            for (std::size_t i = 0; i < block; i += 8) {
                c0 = _mm_crc32_u64(c0, crc_word(p + i));
                c1 = _mm_crc32_u64(c1, crc_word(p + block + i));
                c2 = _mm_crc32_u64(c2, crc_word(p + 2 * block + i));
            }
            c = shift.shift(shift.shift(static_cast<std::uint32_t>(c0)) ^ static_cast<std::uint32_t>(c1)) ^
                static_cast<std::uint32_t>(c2);
        }
    }
    std::uint64_t c64 = c;
    for (; size >= 8; p += 8, size -= 8) c64 = _mm_crc32_u64(c64, crc_word(p));
    c = static_cast<std::uint32_t>(c64);
    for (; size; ++p, --size) c = _mm_crc32_u8(c, *p);
    return c;
}
#endif

#if KEYBLEND_CRC_FOLD512
/// x^e modulo the CRC-32C polynomial, reflected (bit j holds the coefficient of x^(31 - j)).
constexpr std::uint64_t crc_power(unsigned e) {
    std::uint32_t r = 0x80000000u;
    for (unsigned i = 0; i < e; ++i) r = (r >> 1) ^ ((r & 1u) ? 0x82F63B78u : 0u);
    return r;
}

/// As crc32c_tables, by folding (carry-less multiplication, the method of Intel's "Fast CRC
/// computation using PCLMULQDQ"). A 128-bit lane X of the message (its low 64 bits H the earlier,
/// higher-degree half, L the later) stands for X * x^d at the place d bits further on, modulo the
/// polynomial: H * (x^(d+64) mod P) + L * (x^d mod P), each product under 96 bits. In the
/// reflected order a 64 x 32-bit carry-less product lands 33 bits lower than that sum wants, so
/// the constants are x^(d+31) and x^(d-33). Four 512-bit accumulators take 256 bytes a step, so
/// that the four folds' multiplies overlap one another's latency; they are folded into one, its four
/// lanes into one, and the crc32 instruction reduces the last 16 bytes from register 0 (the
/// starting register went into the first four bytes). The bytes after the last 64 go by the
/// instruction.
inline std::uint32_t crc32c_fold512(const unsigned char* p, std::size_t size, std::uint32_t c) noexcept {
    if (size < 256) return crc32c_streams(p, size, c);
    const auto constants = [](std::uint64_t for_low, std::uint64_t for_high) {
        return _mm512_set_epi64(static_cast<long long>(for_high), static_cast<long long>(for_low),
                                static_cast<long long>(for_high), static_cast<long long>(for_low),
                                static_cast<long long>(for_high), static_cast<long long>(for_low),
                                static_cast<long long>(for_high), static_cast<long long>(for_low));
    };
    const auto fold = [](__m512i a, __m512i k, __m512i next) {
        return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00), _mm512_clmulepi64_epi128(a, k, 0x11),
                                         next, 0x96);
    };
    constexpr std::uint64_t k2048_low = crc_power(2048 + 31), k2048_high = crc_power(2048 - 33);
    constexpr std::uint64_t k512_low = crc_power(512 + 31), k512_high = crc_power(512 - 33);
    constexpr std::uint64_t k384_low = crc_power(384 + 31), k384_high = crc_power(384 - 33);
    constexpr std::uint64_t k256_low = crc_power(256 + 31), k256_high = crc_power(256 - 33);
    constexpr std::uint64_t k128_low = crc_power(128 + 31), k128_high = crc_power(128 - 33);
    __m512i a0 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_maskz_set1_epi32(0x1, static_cast<int>(c)));
    __m512i a1 = _mm512_loadu_si512(p + 64), a2 = _mm512_loadu_si512(p + 128), a3 = _mm512_loadu_si512(p + 192);
    p += 256;
    size -= 256;
    const __m512i k2048 = constants(k2048_low, k2048_high);
    for (; size >= 256; p += 256, size -= 256) {
        a0 = fold(a0, k2048, _mm512_loadu_si512(p));
        a1 = fold(a1, k2048, _mm512_loadu_si512(p + 64));
        a2 = fold(a2, k2048, _mm512_loadu_si512(p + 128));
        a3 = fold(a3, k2048, _mm512_loadu_si512(p + 192));
    }
    const __m512i k512 = constants(k512_low, k512_high);
    a3 = fold(fold(fold(a0, k512, a1), k512, a2), k512, a3);
    for (; size >= 64; p += 64, size -= 64) a3 = fold(a3, k512, _mm512_loadu_si512(p));
    // Lanes 0, 1 and 2 to lane 3's place: 384, 256 and 128 bits on.
    const __m512i lanes = _mm512_set_epi64(0, 0, static_cast<long long>(k128_high), static_cast<long long>(k128_low),
                                           static_cast<long long>(k256_high), static_cast<long long>(k256_low),
                                           static_cast<long long>(k384_high), static_cast<long long>(k384_low));
    // (Lane 3's constants are 0: its products are 0, and the lane itself comes in unmoved.)
    __m512i sum = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a3, lanes, 0x00), _mm512_clmulepi64_epi128(a3, lanes, 0x11),
                                            _mm512_maskz_mov_epi64(0xC0, a3), 0x96);
    // (Shuffle and extract in their all-lanes maskz forms: GCC 12's plain forms start from an
    // undefined register, which -Wmaybe-uninitialized reports once inlined.)
    sum = _mm512_xor_si512(sum, _mm512_maskz_shuffle_i64x2(0xFF, sum, sum, 0x4E)); // lanes 2, 3 onto 0, 1
    sum = _mm512_xor_si512(sum, _mm512_maskz_shuffle_i64x2(0xFF, sum, sum, 0xB1)); // lane 1 onto 0
    const __m128i last = _mm512_maskz_extracti32x4_epi32(0xF, sum, 0);
    std::uint64_t c64 = _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(last)));
    c64 = _mm_crc32_u64(c64, static_cast<std::uint64_t>(_mm_extract_epi64(last, 1)));
    return crc32c_streams(p, size, static_cast<std::uint32_t>(c64));
}
#endif

/// CRC-32C (see keyblend::crc32c in package.hpp): the widest path the compiler's target allows.
inline std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc) noexcept {
    const unsigned char* p = static_cast<const unsigned char*>(data);
#if KEYBLEND_CRC_FOLD512
    return ~crc32c_fold512(p, size, ~crc);
#elif KEYBLEND_CRC_SSE42
    return ~crc32c_streams(p, size, ~crc);
#else
    return ~crc32c_tables(p, size, ~crc);
#endif
}

/// A running CRC-32C of what is given (the skeletons' fingerprints).
struct hasher {
    std::uint32_t h = 0;
    void bytes(const void* p, std::size_t n) { h = crc32c(p, n, h); }
    template <class T>
    void value(const T& v) {
        bytes(&v, sizeof v);
    }
};

/// The span record `s`.
struct span_record {
    float start = 0.0f, end = 0.0f;
    std::uint32_t first = 0, count = 0;
};
inline span_record read_span(const clip_layout& l, const unsigned char* blob, std::uint32_t s) {
    const unsigned char* p = blob + l.h.off_spans + std::size_t(s) * 16;
    return {read<float>(p), read<float>(p + 4), read<std::uint32_t>(p + 8), read<std::uint32_t>(p + 12)};
}

inline std::uint16_t joint_kinds(const clip_layout& l, const unsigned char* blob, std::size_t j) {
    return read<std::uint16_t>(blob + l.h.off_joint_kinds + 2 * j);
}

// ---------------------------------------------------------------------------------------------
// Extras: the clip's user channels, events and root motion, uncompressed.
//
//   u32 float channel count, u32 vector channel count, u32 event count, u32 motion flags (bit 0
//   a translation track, bit 1 a rotation track)
//   each float channel: string name, track (1 value a key)
//   each vector channel: string name, track (3 values a key)
//   each event: f32 time, string name
//   motion translation track (3 values a key), motion rotation track (4 values a key: x y z w)
// where a string is u32 length + bytes padded to 4, and a track is u32 mode (interpolation),
// u32 key count, f32 times[count], f32 values[count x dims], and for cubic_spline in-tangents and
// out-tangents [count x dims] each.
// ---------------------------------------------------------------------------------------------

/// A bounds-checked reader over the extras (every read past the end fails and stays failed).
class extras_reader {
public:
    extras_reader(const unsigned char* p, std::size_t n) : p_(p), n_(n) {}
    bool ok() const { return ok_; }
    std::size_t position() const { return at_; }
    bool at_end() const { return at_ == n_; }
    std::uint32_t u32() {
        if (!take(4)) return 0;
        return read<std::uint32_t>(p_ + at_ - 4);
    }
    /// The next `count` floats (nullptr on failure).
    const unsigned char* floats(std::uint64_t count) {
        if (count > (n_ - at_) / 4 || !take(static_cast<std::size_t>(count * 4))) {
            ok_ = false;
            return nullptr;
        }
        return p_ + at_ - count * 4;
    }
    /// A string: its bytes (nullptr on failure) and length.
    const char* string(std::size_t& length) {
        length = u32();
        const std::size_t padded = (length + 3) & ~std::size_t(3);
        if (!ok_ || length > n_ - at_ || padded > n_ - at_) {
            ok_ = false;
            return nullptr;
        }
        const char* s = reinterpret_cast<const char*>(p_ + at_);
        at_ += padded;
        return s;
    }
    void fail() { ok_ = false; }

private:
    bool take(std::size_t k) {
        if (!ok_ || k > n_ - at_) {
            ok_ = false;
            return false;
        }
        at_ += k;
        return true;
    }
    const unsigned char* p_;
    std::size_t n_;
    std::size_t at_ = 0;
    bool ok_ = true;
};

/// One serialized track, as read: mode, key count, and where its floats are.
struct extras_track {
    std::uint32_t mode = 0, count = 0;
    const unsigned char* times = nullptr;
    const unsigned char* values = nullptr;
    const unsigned char* in_tangents = nullptr;
    const unsigned char* out_tangents = nullptr;
};

inline bool read_extras_track(extras_reader& r, unsigned dims, extras_track& t) {
    t.mode = r.u32();
    t.count = r.u32();
    if (!r.ok() || t.mode > static_cast<std::uint32_t>(interpolation::cubic_spline)) return false;
    t.times = r.floats(t.count);
    t.values = r.floats(std::uint64_t(t.count) * dims);
    if (t.mode == static_cast<std::uint32_t>(interpolation::cubic_spline)) {
        t.in_tangents = r.floats(std::uint64_t(t.count) * dims);
        t.out_tangents = r.floats(std::uint64_t(t.count) * dims);
    }
    return r.ok();
}

/// Walks the extras, calling the visitor for each part; false when they are malformed (counts or
/// lengths past the end, an unknown mode, trailing bytes).
template <class Visitor>
bool walk_extras(const unsigned char* p, std::size_t n, Visitor&& visit) {
    extras_reader r(p, n);
    const std::uint32_t floats = r.u32(), vectors = r.u32(), events = r.u32(), motion = r.u32();
    if (!r.ok() || motion > 3u) return false;
    // Each part takes at least 8 bytes: counts beyond that are malformed (no loop runs long).
    if (std::uint64_t(floats) + vectors + events > n / 8) return false;
    for (std::uint32_t i = 0; i < floats + vectors; ++i) {
        std::size_t length;
        const char* name = r.string(length);
        extras_track t;
        if (!name || !read_extras_track(r, i < floats ? 1u : 3u, t)) return false;
        if (!visit.user_channel(i < floats, std::string_view(name, length), t)) return false;
    }
    for (std::uint32_t i = 0; i < events; ++i) {
        const std::uint32_t time_bits = r.u32();
        std::size_t length;
        const char* name = r.string(length);
        if (!name) return false;
        float time;
        std::memcpy(&time, &time_bits, sizeof time);
        if (!visit.event(time, std::string_view(name, length))) return false;
    }
    for (unsigned k = 0; k < 2; ++k) {
        if (!(motion & (1u << k))) continue;
        extras_track t;
        if (!read_extras_track(r, k == 0 ? 3u : 4u, t)) return false;
        if (!visit.motion(k, t)) return false;
    }
    return r.ok() && r.at_end();
}

} // namespace cc
} // namespace impl
} // namespace keyblend
