// keyblend — definitions for package.hpp. Included at the bottom of package.hpp; do not include
// directly.
//
// SPDX-License-Identifier: MIT
//
// Sections (offsets from the section's first byte; every array 16-byte aligned, in the order
// listed, after the section's header):
//
// skeleton, 64-byte header: u32 joint count J, u32 morph weight total W, then u32 offsets of
//   parents (i32 x J: an earlier joint in depth-first pre-order, or -1), bind-pose local matrices
//   (16 f32 x J, glm's column order), morph weight offsets (u32 x J + 1, from 0 to W), bind morph
//   weights (f32 x W), name offsets (u32 x J + 1 into the name bytes), name bytes; then the name
//   bytes' size.
// mesh, 128-byte header: u32 vertex count n, index count, influences k (0 to 8), joint index size
//   (0 without a skin, else 1 or 2 bytes), bone count, joint (0xffffffff: none), attribute flags
//   (1 normals, 2 tangents, 4 texcoords), material count, triangle material count (0 or one per
//   triangle), morph target count; then u32 offsets of positions (3 f32 x n), normals (3 f32 x n),
//   tangents (4 f32 x n), texcoords (2 f32 x n), indices (u32), skin joints (k x n, 1 or 2 bytes
//   each), skin weights (f32 x k x n), bone joints (u32 x bones), bone offsets (16 f32 x bones),
//   materials (48 bytes each: diffuse 4 f32, specular 3 f32, emissive 3 f32, power f32, 0),
//   triangle materials (u32), morph targets (16 bytes each: u32 flags as the attributes', then the
//   u32 offsets of its positions, normals and tangents, 3 f32 x n each), strings; then the
//   strings' size. Absent arrays have offset and size 0.
//   strings: u32 count, u32 offsets x count + 1 into the bytes that follow: the mesh's name, each
//   bone's name, each material's name and texture file, each morph target's name.
#pragma once

#include "read_file.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <numeric>
#include <string>


namespace keyblend {
namespace impl {
namespace pk {

inline constexpr std::uint32_t magic = 0x4b50424bu; // "KBPK"
inline constexpr std::uint32_t version = 1;
inline constexpr std::size_t header_size = 64, entry_size = 32, skeleton_header = 64, mesh_header = 128;
enum section_type : std::uint32_t { section_skeleton = 1, section_clip = 2, section_mesh = 3 };
enum attribute_flags : std::uint32_t { has_normals = 1, has_tangents = 2, has_texcoords = 4 };
inline constexpr std::uint32_t no_joint32 = 0xffffffffu;
/// Bounds a hostile package cannot make a reader exceed (a few times what any character has).
inline constexpr std::uint64_t max_sections = 1u << 20;
inline constexpr std::uint64_t max_vertices = 1u << 28;

using cc::read;
using cc::write;

/// The checker's error: the place and what is wrong.
inline error fail(errc code, const std::string& where, std::uint64_t at, const std::string& what) {
    return make_error(code, "package: " + where + " (byte " + std::to_string(at) + "): " + what, cc::byte_index(at));
}

/// An array of a section: offset and size (relative to the section), checked in order.
struct array_check {
    const char* what;
    std::uint32_t offset;
    std::uint64_t size;
};

/// Checks `arrays` against a section of `size` bytes starting at `base` (absolute), after its
/// header: 16-byte aligned, in order, inside. An absent array (size 0) must have offset 0.
inline status check_arrays(const std::string& where, std::size_t base, std::uint64_t size, std::size_t header,
                           const array_check* arrays, std::size_t count) {
    std::uint64_t end = header;
    for (std::size_t i = 0; i < count; ++i) {
        const array_check& a = arrays[i];
        if (a.size == 0) {
            if (a.offset != 0) return fail(errc::parse_error, where, base, std::string(a.what) + ": an offset without data");
            continue;
        }
        if (a.offset % 16 != 0)
            return fail(errc::parse_error, where, base + a.offset, std::string(a.what) + " is not 16-byte aligned");
        if (a.offset < end)
            return fail(errc::parse_error, where, base + a.offset,
                        std::string(a.what) + " overlaps what comes before it (which ends at " + std::to_string(base + end) + ")");
        if (a.size > size || a.offset > size - a.size)
            return fail(errc::parse_error, where, base + a.offset,
                        std::string(a.what) + " (" + std::to_string(a.size) + " bytes) runs past the section's end");
        end = a.offset + a.size;
    }
    return {};
}

/// A string table (see the top of this file): `count` strings; false when malformed.
inline bool check_strings(const unsigned char* p, std::uint64_t size, std::uint64_t count) {
    if (size < 8 || read<std::uint32_t>(p) != count || (count + 2) * 4 > size) return false;
    const std::uint64_t bytes = size - (count + 2) * 4;
    std::uint32_t previous = 0;
    for (std::uint64_t i = 0; i <= count; ++i) {
        const std::uint32_t o = read<std::uint32_t>(p + 4 + 4 * i);
        if (o < previous || o > bytes || (i == 0 && o != 0)) return false;
        previous = o;
    }
    return true;
}
inline std::string_view string_at(const unsigned char* table, std::size_t i) {
    const std::uint32_t count = read<std::uint32_t>(table);
    if (i >= count) return {};
    const unsigned char* bytes = table + 4 + 4 * (std::size_t(count) + 1);
    const std::uint32_t from = read<std::uint32_t>(table + 4 + 4 * i), to = read<std::uint32_t>(table + 8 + 4 * i);
    return std::string_view(reinterpret_cast<const char*>(bytes + from), to - from);
}

/// The skeleton section's fields.
struct skeleton_fields {
    std::uint32_t joints, weights, off_parents, off_bind, off_morph, off_weights, off_name_offsets, off_names, names_size;
};
inline skeleton_fields read_skeleton(const unsigned char* s) {
    skeleton_fields f{};
    std::uint32_t v[9];
    for (int i = 0; i < 9; ++i) v[i] = read<std::uint32_t>(s + 4 * i);
    f = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
    return f;
}

/// The mesh section's fields (see the top of this file).
struct mesh_fields {
    std::uint32_t n, indices, k, index_size, bones, joint, flags, materials, triangle_materials, targets;
    std::uint32_t off_positions, off_normals, off_tangents, off_texcoords, off_indices, off_skin_joints, off_skin_weights,
        off_bone_joints, off_bone_offsets, off_materials, off_triangle_materials, off_targets, off_strings, strings_size;
};
inline mesh_fields read_mesh(const unsigned char* m) {
    std::uint32_t v[24];
    for (int i = 0; i < 24; ++i) v[i] = read<std::uint32_t>(m + 4 * i);
    return {v[0],  v[1],  v[2],  v[3],  v[4],  v[5],  v[6],  v[7],  v[8],  v[9],  v[10], v[11],
            v[12], v[13], v[14], v[15], v[16], v[17], v[18], v[19], v[20], v[21], v[22], v[23]};
}

/// skeleton_fingerprint (impl/compress.impl.hpp) of the package's skeleton, without building it.
inline std::uint32_t fingerprint(const unsigned char* s, const skeleton_fields& f) {
    cc::hasher h;
    h.value(static_cast<std::uint64_t>(f.joints));
    const unsigned char* names = s + f.off_names;
    for (std::uint32_t j = 0; j < f.joints; ++j) {
        h.value(read<std::int32_t>(s + f.off_parents + 4ull * j));
        const std::uint32_t from = read<std::uint32_t>(s + f.off_name_offsets + 4ull * j);
        const std::uint32_t to = read<std::uint32_t>(s + f.off_name_offsets + 4ull * (j + 1));
        h.value(static_cast<std::uint64_t>(to - from));
        h.bytes(names + from, to - from);
        h.bytes(s + f.off_bind + 64ull * j, 64);
        const std::uint32_t m0 = read<std::uint32_t>(s + f.off_morph + 4ull * j), m1 = read<std::uint32_t>(s + f.off_morph + 4ull * (j + 1));
        h.value(static_cast<std::uint64_t>(m1 - m0));
    }
    for (std::uint32_t w = 0; w < f.weights; ++w) h.value(read<float>(s + f.off_weights + 4ull * w));
    return h.h;
}

inline status check_skeleton(const unsigned char* s, std::size_t base, std::uint64_t size, skeleton_fields& f) {
    const std::string where = "skeleton";
    if (size < skeleton_header) return fail(errc::parse_error, where, base, "shorter than its header");
    f = read_skeleton(s);
    for (std::size_t at = 36; at < skeleton_header; at += 4)
        if (read<std::uint32_t>(s + at) != 0) return fail(errc::parse_error, where, base + at, "a reserved field is not 0");
    if (f.joints > cc::max_joints) return fail(errc::parse_error, where, base, std::to_string(f.joints) + " joints");
    if (f.weights > cc::max_morph_weights) return fail(errc::parse_error, where, base + 4, std::to_string(f.weights) + " morph weights");
    const array_check arrays[] = {{"parents", f.off_parents, 4ull * f.joints},
                                  {"bind poses", f.off_bind, 64ull * f.joints},
                                  {"morph weight offsets", f.off_morph, 4ull * (std::uint64_t(f.joints) + 1)},
                                  {"morph weights", f.off_weights, 4ull * f.weights},
                                  {"name offsets", f.off_name_offsets, 4ull * (std::uint64_t(f.joints) + 1)},
                                  {"names", f.off_names, f.names_size}};
    if (status st = check_arrays(where, base, size, skeleton_header, arrays, 6); !st) return st;
    // Parents: depth-first pre-order (keyblend's joint order), without recursion on the depth:
    // each joint's parent is on the path from the root to the joint before it, found by walking up
    // from that joint. The joints walked over end their sub-trees there and are never walked again
    // (a later joint's ancestors are on the path), so the whole check is O(J).
    std::int32_t previous = -1;
    for (std::uint32_t j = 0; j < f.joints; ++j) {
        const std::int32_t p = read<std::int32_t>(s + f.off_parents + 4ull * j);
        if (p < -1 || p >= static_cast<std::int32_t>(j))
            return fail(errc::parse_error, where, base + f.off_parents + 4ull * j,
                        "joint " + std::to_string(j) + ": parent " + std::to_string(p) + " is not an earlier joint");
        std::int32_t on = previous;
        while (on != p && on >= 0) on = read<std::int32_t>(s + f.off_parents + 4ull * std::uint32_t(on));
        if (on != p)
            return fail(errc::parse_error, where, base + f.off_parents + 4ull * j,
                        "joint " + std::to_string(j) + ": not in depth-first order (its parent " + std::to_string(p) +
                            " is not on the path to the joint before it)");
        previous = static_cast<std::int32_t>(j);
    }
    for (std::uint64_t i = 0; i < 16ull * f.joints; ++i)
        if (!is_finite(read<float>(s + f.off_bind + 4 * i)))
            return fail(errc::parse_error, where, base + f.off_bind + 4 * i, "a bind-pose matrix is not finite");
    std::uint32_t m = 0;
    for (std::uint32_t j = 0; j <= f.joints; ++j) {
        const std::uint32_t o = read<std::uint32_t>(s + f.off_morph + 4ull * j);
        if (o < m || o > f.weights || (j == 0 && o != 0) || (j == f.joints && o != f.weights))
            return fail(errc::parse_error, where, base + f.off_morph + 4ull * j, "morph weight offsets out of order");
        m = o;
    }
    for (std::uint32_t w = 0; w < f.weights; ++w)
        if (!is_finite(read<float>(s + f.off_weights + 4ull * w)))
            return fail(errc::parse_error, where, base + f.off_weights + 4ull * w, "a morph weight is not finite");
    std::uint32_t n = 0;
    for (std::uint32_t j = 0; j <= f.joints; ++j) {
        const std::uint32_t o = read<std::uint32_t>(s + f.off_name_offsets + 4ull * j);
        if (o < n || o > f.names_size || (j == 0 && o != 0))
            return fail(errc::parse_error, where, base + f.off_name_offsets + 4ull * j, "name offsets out of order");
        n = o;
    }
    return {};
}

/// The largest of `count` little-endian T at p (16-byte aligned: validated). Blocks of 64 bytes
/// copied out first, so that the compiler vectorizes the maximum whatever T is.
template <class T>
std::uint32_t largest_index(const unsigned char* p, std::uint64_t count) {
    constexpr std::size_t per_block = 64 / sizeof(T);
    T block[per_block];
    T largest[per_block] = {};
    std::uint64_t i = 0;
    for (; i + per_block <= count; i += per_block) {
        std::memcpy(block, p + i * sizeof(T), sizeof block);
        for (std::size_t k = 0; k < per_block; ++k) largest[k] = block[k] > largest[k] ? block[k] : largest[k];
    }
    T out = 0;
    for (std::size_t k = 0; k < per_block; ++k) out = largest[k] > out ? largest[k] : out;
    for (; i < count; ++i) {
        T v;
        std::memcpy(&v, p + i * sizeof(T), sizeof v);
        out = v > out ? v : out;
    }
    return out;
}

/// The first of `count` little-endian T at p that is at least `limit`, or `count` when none is:
/// the largest first (vectorized), the first bad one looked for only when there is one.
template <class T>
std::uint64_t first_at_least(const unsigned char* p, std::uint64_t count, std::uint64_t limit) {
    if (count == 0 || largest_index<T>(p, count) < limit) return count;
    std::uint64_t i = 0;
    while (read<T>(p + i * sizeof(T)) < limit) ++i;
    return i;
}

inline status check_mesh(const unsigned char* m, std::size_t base, std::uint64_t size, std::size_t index,
                         std::uint32_t joints) {
    const std::string where = "mesh " + std::to_string(index);
    if (size < mesh_header) return fail(errc::parse_error, where, base, "shorter than its header");
    const mesh_fields f = read_mesh(m);
    for (std::size_t at = 96; at < mesh_header; at += 4)
        if (read<std::uint32_t>(m + at) != 0) return fail(errc::parse_error, where, base + at, "a reserved field is not 0");
    const std::uint64_t n = f.n;
    if (n > max_vertices) return fail(errc::parse_error, where, base, std::to_string(n) + " vertices");
    if (f.indices % 3 != 0) return fail(errc::parse_error, where, base + 4, "an index count that is not a multiple of 3");
    if (f.k > io::max_influences_per_vertex || (f.k == 0) != (f.bones == 0) ||
        (f.bones == 0 ? f.index_size != 0 : (f.index_size != 1 && f.index_size != 2)) ||
        (f.index_size == 1 && f.bones > 256) || f.bones > 65536)
        return fail(errc::parse_error, where, base + 8,
                    "skin: " + std::to_string(f.k) + " influences, " + std::to_string(f.bones) + " bones, " +
                        std::to_string(f.index_size) + "-byte joint indices");
    if (f.joint != no_joint32 && f.joint >= joints)
        return fail(errc::parse_error, where, base + 20, "joint " + std::to_string(f.joint) + " out of range");
    if (f.flags > 7) return fail(errc::parse_error, where, base + 24, "unknown attribute flags");
    if (f.triangle_materials != 0 && (f.triangle_materials != f.indices / 3))
        return fail(errc::parse_error, where, base + 32, "triangle materials not one per triangle");
    const std::uint64_t strings = 1ull + f.bones + 2ull * f.materials + f.targets;
    const array_check arrays[] = {
        {"positions", f.off_positions, 12 * n},
        {"normals", f.off_normals, (f.flags & has_normals) ? 12 * n : 0},
        {"tangents", f.off_tangents, (f.flags & has_tangents) ? 16 * n : 0},
        {"texcoords", f.off_texcoords, (f.flags & has_texcoords) ? 8 * n : 0},
        {"indices", f.off_indices, 4ull * f.indices},
        {"skin joints", f.off_skin_joints, n * f.k * f.index_size},
        {"skin weights", f.off_skin_weights, 4 * n * f.k},
        {"bone joints", f.off_bone_joints, 4ull * f.bones},
        {"bone offsets", f.off_bone_offsets, 64ull * f.bones},
        {"materials", f.off_materials, 48ull * f.materials},
        {"triangle materials", f.off_triangle_materials, 4ull * f.triangle_materials},
        {"morph targets", f.off_targets, 16ull * f.targets},
        {"strings", f.off_strings, f.strings_size},
    };
    if (status st = check_arrays(where, base, size, mesh_header, arrays, sizeof arrays / sizeof arrays[0]); !st) return st;
    if (f.strings_size == 0 || !check_strings(m + f.off_strings, f.strings_size, strings))
        return fail(errc::parse_error, where, base + f.off_strings, "malformed strings");
    if (const std::uint64_t i = first_at_least<std::uint32_t>(m + f.off_indices, f.indices, n); i < f.indices)
        return fail(errc::parse_error, where, base + f.off_indices + 4ull * i, "triangle corner " + std::to_string(i) + " out of range");
    const std::uint64_t slots = n * f.k;
    const std::uint64_t bad_slot = f.index_size == 1 ? first_at_least<std::uint8_t>(m + f.off_skin_joints, slots, f.bones)
                                                     : first_at_least<std::uint16_t>(m + f.off_skin_joints, slots, f.bones);
    if (bad_slot < slots) {
        const std::uint32_t b = f.index_size == 1 ? m[f.off_skin_joints + bad_slot] : read<std::uint16_t>(m + f.off_skin_joints + 2 * bad_slot);
        return fail(errc::parse_error, where, base + f.off_skin_joints + bad_slot * f.index_size,
                    "vertex " + std::to_string(bad_slot / f.k) + ": bone " + std::to_string(b) + " out of range");
    }
    if (const std::uint64_t b = first_at_least<std::uint32_t>(m + f.off_bone_joints, f.bones, joints); b < f.bones)
        return fail(errc::parse_error, where, base + f.off_bone_joints + 4ull * b, "bone " + std::to_string(b) + ": joint out of range");
    if (const std::uint64_t t = first_at_least<std::uint32_t>(m + f.off_triangle_materials, f.triangle_materials, f.materials);
        t < f.triangle_materials)
        return fail(errc::parse_error, where, base + f.off_triangle_materials + 4ull * t, "a material index out of range");
    for (std::uint32_t t = 0; t < f.targets; ++t) {
        const unsigned char* r = m + f.off_targets + 16ull * t;
        const std::uint32_t flags = read<std::uint32_t>(r);
        if (flags > 7) return fail(errc::parse_error, where, base + f.off_targets + 16ull * t, "morph target flags");
        for (unsigned a = 0; a < 3; ++a) {
            const std::uint32_t o = read<std::uint32_t>(r + 4 + 4 * a);
            const std::uint64_t bytes = (flags >> a) & 1u ? 12 * n : 0;
            if (bytes == 0 && o == 0) continue;
            if (bytes == 0 || o % 16 != 0 || o < f.off_targets + 16ull * f.targets || bytes > size || o > size - bytes)
                return fail(errc::parse_error, where, base + o, "morph target " + std::to_string(t) + ": an array outside the mesh");
        }
    }
    return {};
}

} // namespace pk

struct package_access {
    static result<package> view(const unsigned char* p, std::size_t n) {
        using pk::fail;
        using pk::read;
        if (!cc::host_is_little_endian())
            return make_error(errc::unsupported, "package: keyblend reads packages on little-endian hosts only");
        if (!p) return make_error(errc::invalid_argument, "package: no bytes (null pointer)");
        if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
            return make_error(errc::invalid_argument, "package: the bytes are not 16-byte aligned (read them with package_file, "
                                                      "or into 16-byte aligned memory)");
        const std::string head = "header";
        if (n < pk::header_size) return fail(errc::parse_error, head, n, "truncated: " + std::to_string(n) + " bytes");
        if (read<std::uint32_t>(p) != pk::magic) return fail(errc::parse_error, head, 0, "not a keyblend package (magic)");
        const std::uint32_t v = read<std::uint32_t>(p + 4);
        if (v != pk::version)
            return fail(v > pk::version ? errc::unsupported : errc::parse_error, head, 4,
                        "version " + std::to_string(v) + " (this keyblend reads version " + std::to_string(pk::version) + ")");
        const std::uint64_t size = read<std::uint64_t>(p + 8);
        if (size != n)
            return fail(errc::parse_error, head, 8, "the header says " + std::to_string(size) + " bytes, there are " +
                                                        std::to_string(n) + (size > n ? " (truncated)" : ""));
        if (n % 16 != 0) return fail(errc::parse_error, head, 8, "size not a multiple of 16");
        const std::uint32_t sum = read<std::uint32_t>(p + 16);
        if (crc32c(p + 20, n - 20) != sum) return fail(errc::io_error, head, 16, "checksum mismatch: the bytes are damaged");
        if (read<std::uint32_t>(p + 20) != 0) return fail(errc::parse_error, head, 20, "unknown flags");
        const std::uint64_t sections = read<std::uint32_t>(p + 24);
        const std::uint32_t table = read<std::uint32_t>(p + 28);
        if (table != pk::header_size || sections == 0 || sections > pk::max_sections ||
            sections * pk::entry_size > n - pk::header_size)
            return fail(errc::parse_error, head, 24, std::to_string(sections) + " sections at " + std::to_string(table));
        package out;
        out.data_ = p;
        out.size_ = n;
        const std::uint32_t clips = read<std::uint32_t>(p + 32), meshes = read<std::uint32_t>(p + 36);
        for (std::size_t at = 40; at < pk::header_size; at += 4)
            if (read<std::uint32_t>(p + at) != 0) return fail(errc::parse_error, head, at, "a reserved field is not 0");
        if (std::uint64_t(clips) + meshes + 1 != sections)
            return fail(errc::parse_error, head, 32, "clip and mesh counts do not match the sections");
        std::uint64_t end = pk::header_size + sections * pk::entry_size;
        pk::skeleton_fields skel{};
        std::uint32_t hash = 0;
        for (std::uint64_t i = 0; i < sections; ++i) {
            const unsigned char* e = p + pk::header_size + i * pk::entry_size;
            const std::size_t at = static_cast<std::size_t>(pk::header_size + i * pk::entry_size);
            const std::uint32_t type = read<std::uint32_t>(e);
            const std::uint64_t offset = read<std::uint64_t>(e + 8), bytes = read<std::uint64_t>(e + 16);
            const std::uint32_t expected = i == 0 ? pk::section_skeleton : i <= clips ? pk::section_clip : pk::section_mesh;
            const std::string where = "section " + std::to_string(i);
            if (type != expected || read<std::uint32_t>(e + 4) != 0 || read<std::uint64_t>(e + 24) != 0)
                return fail(errc::parse_error, where, at, "type " + std::to_string(type) + " where " + std::to_string(expected) + " belongs");
            if (offset % 16 != 0) return fail(errc::parse_error, where, at + 8, "offset " + std::to_string(offset) + " is not 16-byte aligned");
            if (offset < end)
                return fail(errc::parse_error, where, at + 8, "offset " + std::to_string(offset) + " overlaps what comes before it (which ends at " +
                                                                   std::to_string(end) + ")");
            if (bytes > n || offset > n - bytes)
                return fail(errc::parse_error, where, at + 16, std::to_string(bytes) + " bytes at " + std::to_string(offset) +
                                                                   " run past the end (" + std::to_string(n) + ")");
            end = offset + bytes;
            const unsigned char* s = p + offset;
            const std::size_t base = static_cast<std::size_t>(offset);
            if (type == pk::section_skeleton) {
                if (status st = pk::check_skeleton(s, base, bytes, skel); !st) return st.error();
                out.skeleton_ = s;
                out.joints_ = skel.joints;
                out.weights_ = skel.weights;
                hash = pk::fingerprint(s, skel);
            } else if (type == pk::section_clip) {
                if (bytes % 16 != 0) return fail(errc::parse_error, where, at + 16, "a clip's size is not a multiple of 16");
                const result<compressed_clip> c = compressed_clip::view(s, static_cast<std::size_t>(bytes));
                if (!c) return fail(c.error().code == errc::unsupported ? errc::unsupported : errc::parse_error, where, base,
                                    "clip " + std::to_string(i - 1) + ": " + c.error().message);
                const cc::clip_header& h = compressed_access::layout(*c).h;
                if (h.joint_count != skel.joints || h.morph_weight_total != skel.weights || h.skeleton_hash != hash)
                    return fail(errc::parse_error, where, base, "clip " + std::to_string(i - 1) + " '" + std::string(c->name()) +
                                                                    "' was compressed for another skeleton");
            } else {
                if (status st = pk::check_mesh(s, base, bytes, static_cast<std::size_t>(i - 1 - clips), skel.joints); !st)
                    return st.error();
            }
        }
        out.clips_ = clips;
        out.meshes_ = meshes;
        out.first_clip_ = 1;
        return out;
    }

    static const unsigned char* section(const package& p, std::size_t i) {
        return p.data_ + pk::read<std::uint64_t>(p.data_ + pk::header_size + i * pk::entry_size + 8);
    }
    static std::size_t section_size(const package& p, std::size_t i) {
        return static_cast<std::size_t>(pk::read<std::uint64_t>(p.data_ + pk::header_size + i * pk::entry_size + 16));
    }
};

} // namespace impl

inline std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc) noexcept {
    return impl::cc::crc32c(data, size, crc);
}

inline result<package> package::view(const void* data, std::size_t size) {
    return impl::package_access::view(static_cast<const unsigned char*>(data), size);
}

inline span<const joint_index> package::parents() const noexcept {
    if (!skeleton_) return {};
    const impl::pk::skeleton_fields f = impl::pk::read_skeleton(skeleton_);
    return {reinterpret_cast<const joint_index*>(skeleton_ + f.off_parents), joints_};
}

inline span<const glm::mat4> package::bind_local() const noexcept {
    static_assert(sizeof(glm::mat4) == 64, "a glm::mat4 is 16 floats");
    if (!skeleton_) return {};
    const impl::pk::skeleton_fields f = impl::pk::read_skeleton(skeleton_);
    return {reinterpret_cast<const glm::mat4*>(skeleton_ + f.off_bind), joints_};
}

inline std::string_view package::joint_name(std::size_t j) const {
    if (!skeleton_ || j >= joints_) return {};
    const impl::pk::skeleton_fields f = impl::pk::read_skeleton(skeleton_);
    const std::uint32_t from = impl::pk::read<std::uint32_t>(skeleton_ + f.off_name_offsets + 4 * j);
    const std::uint32_t to = impl::pk::read<std::uint32_t>(skeleton_ + f.off_name_offsets + 4 * (j + 1));
    return std::string_view(reinterpret_cast<const char*>(skeleton_ + f.off_names + from), to - from);
}

inline result<skeleton> package::make_skeleton() const {
    if (joints_ == 0) return skeleton{};
    // view() checked what from_parents would: parents in depth-first pre-order (so the joints keep
    // their order), finite bind matrices and morph weights. What is left is the builder's.
    const impl::pk::skeleton_fields f = impl::pk::read_skeleton(skeleton_);
    impl::skeleton_builder b(joints_, "joint");
    b.parents.resize(joints_);
    b.bind.resize(joints_);
    b.source_of_joint.resize(joints_);
    std::memcpy(b.parents.data(), skeleton_ + f.off_parents, 4 * joints_);
    static_assert(sizeof(glm::mat4) == 64 && sizeof(joint_index) == 4, "the section's layout in memory");
    std::memcpy(static_cast<void*>(b.bind.data()), skeleton_ + f.off_bind, 64 * joints_);
    std::iota(b.source_of_joint.begin(), b.source_of_joint.end(), std::size_t(0));
    const std::uint32_t first_weight = impl::pk::read<std::uint32_t>(skeleton_ + f.off_morph);
    const bool any_morph = impl::pk::read<std::uint32_t>(skeleton_ + f.off_morph + 4 * joints_) != first_weight;
    if (any_morph) b.morph.resize(joints_);
    for (std::size_t j = 0; j < joints_; ++j) {
        b.names.emplace_back(joint_name(j));
        if (!any_morph) continue;
        const std::uint32_t m0 = impl::pk::read<std::uint32_t>(skeleton_ + f.off_morph + 4 * j);
        const std::uint32_t m1 = impl::pk::read<std::uint32_t>(skeleton_ + f.off_morph + 4 * (j + 1));
        for (std::uint32_t w = m0; w < m1; ++w) b.morph[j].push_back(impl::pk::read<float>(skeleton_ + f.off_weights + 4ull * w));
    }
    return b.finish({});
}

inline compressed_clip package::clip(std::size_t i) const {
    if (i >= clips_) return {};
    // (Validated when the package was opened: no check again, no allocation.)
    return impl::compressed_access::view_validated(impl::package_access::section(*this, first_clip_ + i),
                                                   impl::package_access::section_size(*this, first_clip_ + i));
}

inline std::size_t package::find_clip(std::string_view name) const {
    for (std::size_t i = 0; i < clips_; ++i) {
        const unsigned char* s = impl::package_access::section(*this, first_clip_ + i);
        const std::uint32_t off = impl::pk::read<std::uint32_t>(s + offsetof(impl::cc::clip_header, off_name));
        const std::uint32_t n = impl::pk::read<std::uint32_t>(s + offsetof(impl::cc::clip_header, name_size));
        if (std::string_view(reinterpret_cast<const char*>(s + off), n) == name) return i;
    }
    return clips_;
}

inline package_mesh package::mesh(std::size_t i) const {
    package_mesh out;
    if (i >= meshes_) return out;
    const unsigned char* m = impl::package_access::section(*this, first_clip_ + clips_ + i);
    const impl::pk::mesh_fields f = impl::pk::read_mesh(m);
    out.section_ = m;
    out.strings_ = m + f.off_strings;
    out.materials_ = m + f.off_materials;
    out.targets_ = m + f.off_targets;
    out.name = impl::pk::string_at(out.strings_, 0);
    out.joint = f.joint == impl::pk::no_joint32 ? io::no_joint : f.joint;
    out.vertex_count = f.n;
    const auto floats = [&](std::uint32_t offset, std::size_t dims, bool given) {
        strided_span<const float> s;
        if (!given || f.n == 0) return s;
        s.data = reinterpret_cast<const float*>(m + offset);
        s.size = f.n;
        s.stride = dims * sizeof(float);
        s.component_stride = sizeof(float);
        return s;
    };
    out.positions = floats(f.off_positions, 3, true);
    out.normals = floats(f.off_normals, 3, (f.flags & impl::pk::has_normals) != 0);
    out.tangents = floats(f.off_tangents, 4, (f.flags & impl::pk::has_tangents) != 0);
    out.texcoords = floats(f.off_texcoords, 2, (f.flags & impl::pk::has_texcoords) != 0);
    out.indices = {reinterpret_cast<const std::uint32_t*>(m + f.off_indices), f.indices};
    out.influences = f.k;
    if (f.k) {
        if (f.index_size == 1) out.joints8 = {m + f.off_skin_joints, f.n, f.k, 1};
        else out.joints16 = {reinterpret_cast<const std::uint16_t*>(m + f.off_skin_joints), f.n, 2 * std::size_t(f.k), 2};
        out.weights = {reinterpret_cast<const float*>(m + f.off_skin_weights), f.n, 4 * std::size_t(f.k), 4};
    }
    out.bone_count = f.bones;
    out.bone_joints = {reinterpret_cast<const std::uint32_t*>(m + f.off_bone_joints), f.bones};
    out.bone_offsets = {reinterpret_cast<const glm::mat4*>(m + f.off_bone_offsets), f.bones};
    out.material_count = f.materials;
    out.triangle_materials = {reinterpret_cast<const std::uint32_t*>(m + f.off_triangle_materials), f.triangle_materials};
    out.morph_target_count = f.targets;
    return out;
}

inline std::string_view package_mesh::bone_name(std::size_t b) const {
    return b < bone_count ? impl::pk::string_at(strings_, 1 + b) : std::string_view();
}

inline package_material package_mesh::material(std::size_t i) const {
    package_material out;
    if (i >= material_count) return out;
    const unsigned char* r = materials_ + 48 * i;
    float v[11];
    for (int k = 0; k < 11; ++k) v[k] = impl::pk::read<float>(r + 4 * k);
    out.diffuse = glm::vec4(v[0], v[1], v[2], v[3]);
    out.specular = glm::vec3(v[4], v[5], v[6]);
    out.emissive = glm::vec3(v[7], v[8], v[9]);
    out.power = v[10];
    out.name = impl::pk::string_at(strings_, 1 + bone_count + 2 * i);
    out.texture_file = impl::pk::string_at(strings_, 2 + bone_count + 2 * i);
    return out;
}

inline package_morph_target package_mesh::morph_target(std::size_t i) const {
    package_morph_target out;
    if (i >= morph_target_count) return out;
    const unsigned char* r = targets_ + 16 * i;
    const std::uint32_t flags = impl::pk::read<std::uint32_t>(r);
    strided_span<const float>* arrays[3] = {&out.positions, &out.normals, &out.tangents};
    for (unsigned a = 0; a < 3; ++a) {
        if (!((flags >> a) & 1u) || vertex_count == 0) continue;
        *arrays[a] = {reinterpret_cast<const float*>(section_ + impl::pk::read<std::uint32_t>(r + 4 + 4 * a)), vertex_count,
                      3 * sizeof(float), sizeof(float)};
    }
    out.name = impl::pk::string_at(strings_, 1 + bone_count + 2 * material_count + i);
    return out;
}

inline std::vector<skin_bone> package_mesh::skin_bones() const {
    std::vector<skin_bone> out;
    out.reserve(bone_count);
    for (std::size_t b = 0; b < bone_count; ++b) out.push_back({std::string(bone_name(b)), bone_joints[b], bone_offsets[b]});
    return out;
}

inline io::mesh package_mesh::to_mesh() const {
    io::mesh out;
    out.name = std::string(name);
    out.joint = joint;
    const auto vectors = [&](const strided_span<const float>& s, std::vector<glm::vec3>& v) {
        v.resize(s.size);
        for (std::size_t i = 0; i < s.size; ++i) v[i] = glm::vec3(s(i, 0), s(i, 1), s(i, 2));
    };
    vectors(positions, out.positions);
    vectors(normals, out.normals);
    out.tangents.resize(tangents.size);
    for (std::size_t i = 0; i < tangents.size; ++i) out.tangents[i] = glm::vec4(tangents(i, 0), tangents(i, 1), tangents(i, 2), tangents(i, 3));
    out.texcoords.resize(texcoords.size);
    for (std::size_t i = 0; i < texcoords.size; ++i) out.texcoords[i] = glm::vec2(texcoords(i, 0), texcoords(i, 1));
    out.indices.assign(indices.begin(), indices.end());
    for (std::size_t i = 0; i < material_count; ++i) {
        const package_material m = material(i);
        out.materials.push_back({std::string(m.name), m.diffuse, m.power, m.specular, m.emissive, std::string(m.texture_file), nullptr});
    }
    out.triangle_materials.assign(triangle_materials.begin(), triangle_materials.end());
    out.skin.bones = skin_bones();
    out.skin.influences_per_vertex = influences;
    for (std::size_t v = 0; v < vertex_count && influences; ++v)
        for (std::size_t k = 0; k < influences; ++k) {
            out.skin.bone_indices.push_back(joints8.data ? joints8(v, k) : joints16(v, k));
            out.skin.weights.push_back(weights(v, k));
        }
    for (std::size_t t = 0; t < morph_target_count; ++t) {
        const package_morph_target m = morph_target(t);
        io::morph_target target;
        target.name = std::string(m.name);
        vectors(m.positions, target.positions);
        vectors(m.normals, target.normals);
        vectors(m.tangents, target.tangents);
        out.morph_targets.push_back(std::move(target));
    }
    return out;
}

inline unsigned char* package_file::allocate(std::size_t n) {
    bytes_.reset(new (std::nothrow) block[n / sizeof(block) + 1]);
    return bytes_ ? bytes_[0].bytes : nullptr;
}

inline result<package_file> package_file::copy(const void* data, std::size_t size) {
    package_file f;
    unsigned char* bytes = f.allocate(size);
    if (!bytes) return impl::make_error(errc::io_error, "cannot allocate " + std::to_string(size) + " bytes for a package");
    if (size) std::memcpy(bytes, data, size);
    result<package> v = package::view(bytes, size);
    if (!v) return v.error();
    f.view_ = *v;
    return f;
}

inline result<package_file> package_file::read(const std::string& path) {
    package_file f;
    std::size_t size = 0;
    if (status st = impl::read_whole_file(path, [&f](std::size_t n) { return f.allocate(n); }, size); !st)
        return st.error();
    result<package> v = package::view(f.bytes_[0].bytes, size);
    if (!v) return impl::make_error(v.error().code, path + ": " + v.error().message, v.error().index);
    f.view_ = *v;
    return f;
}

namespace impl {
namespace pk {

/// A growing blob with 16-byte aligned appends.
struct builder {
    std::vector<unsigned char> bytes;
    std::size_t align(std::size_t to = 16) {
        while (bytes.size() % to) bytes.push_back(0);
        return bytes.size();
    }
    std::size_t append(const void* p, std::size_t n) {
        const std::size_t at = align();
        const unsigned char* b = static_cast<const unsigned char*>(p);
        bytes.insert(bytes.end(), b, b + n);
        return at;
    }
    template <class T>
    std::size_t append_values(const std::vector<T>& v) {
        return v.empty() ? 0 : append(v.data(), v.size() * sizeof(T));
    }
    void put32(std::size_t at, std::uint64_t v) { write<std::uint32_t>(bytes.data() + at, static_cast<std::uint32_t>(v)); }
};

inline std::vector<unsigned char> strings(const std::vector<std::string_view>& list) {
    std::vector<unsigned char> out(4 * (list.size() + 2), 0);
    write<std::uint32_t>(out.data(), static_cast<std::uint32_t>(list.size()));
    std::uint32_t at = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        write<std::uint32_t>(out.data() + 4 + 4 * i, at);
        out.insert(out.end(), list[i].begin(), list[i].end());
        at += static_cast<std::uint32_t>(list[i].size());
    }
    write<std::uint32_t>(out.data() + 4 + 4 * list.size(), at);
    return out;
}

template <class V>
std::vector<float> flat(const std::vector<V>& v, unsigned dims) {
    std::vector<float> out;
    out.reserve(v.size() * dims);
    for (const V& x : v)
        for (unsigned d = 0; d < dims; ++d) out.push_back(x[static_cast<typename V::length_type>(d)]);
    return out;
}

inline result<std::vector<unsigned char>> mesh_section(const io::mesh& m, std::size_t index, std::size_t joints) {
    const std::string label = "write_package: mesh " + std::to_string(index) + " '" + m.name + "'";
    const std::size_t n = m.positions.size();
    const auto bad = [&](const std::string& what) { return make_error(errc::invalid_argument, label + ": " + what, index); };
    if (n > max_vertices) return make_error(errc::unsupported, label + ": too many vertices");
    if ((!m.normals.empty() && m.normals.size() != n) || (!m.tangents.empty() && m.tangents.size() != n) ||
        (!m.texcoords.empty() && m.texcoords.size() != n))
        return bad("an attribute without one value per vertex");
    if (m.indices.size() % 3 != 0) return bad("an index count that is not a multiple of 3");
    for (std::uint32_t i : m.indices)
        if (i >= n) return bad("triangle corner " + std::to_string(i) + " out of range");
    const io::mesh_skin& k = m.skin;
    const std::size_t bones = k.bones.size();
    if (bones > 65536 || k.influences_per_vertex > io::max_influences_per_vertex || (bones == 0) != (k.influences_per_vertex == 0) ||
        k.bone_indices.size() != n * k.influences_per_vertex || k.weights.size() != n * k.influences_per_vertex)
        return bad("a skin whose sizes do not match (bones, influences, vertices)");
    for (std::uint16_t b : k.bone_indices)
        if (b >= bones) return bad("a skin slot's bone " + std::to_string(b) + " out of range");
    for (const io::skin_bone& b : k.bones)
        if (b.joint >= joints) return bad("bone '" + b.name + "': joint " + std::to_string(b.joint) + " out of range");
    if (m.joint != io::no_joint && m.joint >= joints) return bad("joint out of range");
    if (!m.triangle_materials.empty() && m.triangle_materials.size() != m.indices.size() / 3)
        return bad("triangle materials not one per triangle");
    for (std::uint32_t t : m.triangle_materials)
        if (t >= m.materials.size()) return bad("a material index out of range");
    for (const io::morph_target& t : m.morph_targets)
        if ((!t.positions.empty() && t.positions.size() != n) || (!t.normals.empty() && t.normals.size() != n) ||
            (!t.tangents.empty() && t.tangents.size() != n))
            return bad("morph target '" + t.name + "' without one value per vertex");

    builder b;
    b.bytes.assign(mesh_header, 0);
    const std::size_t index_size = bones == 0 ? 0 : bones <= 256 ? 1 : 2;
    const std::uint32_t flags = (m.normals.empty() ? 0u : has_normals) | (m.tangents.empty() ? 0u : has_tangents) |
                                (m.texcoords.empty() ? 0u : has_texcoords);
    const std::uint64_t head[10] = {n, m.indices.size(), k.influences_per_vertex, index_size, bones,
                                    m.joint == io::no_joint ? no_joint32 : m.joint, flags, m.materials.size(),
                                    m.triangle_materials.size(), m.morph_targets.size()};
    for (int i = 0; i < 10; ++i) b.put32(4 * std::size_t(i), head[i]);
    std::size_t offsets[14] = {};
    offsets[0] = b.append_values(flat(m.positions, 3));
    offsets[1] = b.append_values(flat(m.normals, 3));
    offsets[2] = b.append_values(flat(m.tangents, 4));
    offsets[3] = b.append_values(flat(m.texcoords, 2));
    offsets[4] = b.append_values(m.indices);
    if (index_size == 1) {
        std::vector<std::uint8_t> narrow(k.bone_indices.begin(), k.bone_indices.end());
        offsets[5] = b.append_values(narrow);
    } else {
        offsets[5] = b.append_values(k.bone_indices);
    }
    offsets[6] = b.append_values(k.weights);
    std::vector<std::uint32_t> bone_joints;
    std::vector<float> bone_offsets;
    for (const io::skin_bone& bone : k.bones) {
        bone_joints.push_back(static_cast<std::uint32_t>(bone.joint));
        for (int col = 0; col < 4; ++col)
            for (int row = 0; row < 4; ++row) bone_offsets.push_back(bone.offset[col][row]);
    }
    offsets[7] = b.append_values(bone_joints);
    offsets[8] = b.append_values(bone_offsets);
    std::vector<float> materials;
    for (const io::material& mat : m.materials) {
        const float v[12] = {mat.diffuse.x,  mat.diffuse.y,  mat.diffuse.z,  mat.diffuse.w,  mat.specular.x, mat.specular.y,
                             mat.specular.z, mat.emissive.x, mat.emissive.y, mat.emissive.z, mat.power,      0.0f};
        materials.insert(materials.end(), v, v + 12);
    }
    offsets[9] = b.append_values(materials);
    offsets[10] = b.append_values(m.triangle_materials);
    std::vector<std::uint32_t> targets(4 * m.morph_targets.size(), 0);
    offsets[11] = b.append_values(targets);
    for (std::size_t t = 0; t < m.morph_targets.size(); ++t) {
        const io::morph_target& mt = m.morph_targets[t];
        const std::vector<glm::vec3>* arrays[3] = {&mt.positions, &mt.normals, &mt.tangents};
        std::uint32_t target_flags = 0;
        for (unsigned a = 0; a < 3; ++a) {
            if (arrays[a]->empty() || n == 0) continue;
            target_flags |= 1u << a;
            b.put32(offsets[11] + 16 * t + 4 + 4 * a, b.append_values(flat(*arrays[a], 3)));
        }
        b.put32(offsets[11] + 16 * t, target_flags);
    }
    std::vector<std::string_view> names = {m.name};
    for (const io::skin_bone& bone : k.bones) names.push_back(bone.name);
    for (const io::material& mat : m.materials) {
        names.push_back(mat.name);
        names.push_back(mat.texture_file);
    }
    for (const io::morph_target& t : m.morph_targets) names.push_back(t.name);
    const std::vector<unsigned char> table = strings(names);
    offsets[12] = b.append(table.data(), table.size());
    offsets[13] = table.size();
    for (int i = 0; i < 14; ++i) b.put32(40 + 4 * std::size_t(i), offsets[i]);
    b.align();
    return b.bytes;
}

inline std::vector<unsigned char> skeleton_section(const skeleton& s) {
    builder b;
    b.bytes.assign(skeleton_header, 0);
    b.put32(0, s.size());
    b.put32(4, s.morph_weight_total());
    std::vector<std::int32_t> parents(s.parents().begin(), s.parents().end());
    std::vector<float> bind;
    for (const glm::mat4& m : s.bind_local())
        for (int col = 0; col < 4; ++col)
            for (int row = 0; row < 4; ++row) bind.push_back(m[col][row]);
    std::vector<std::uint32_t> morph(s.size() + 1, 0);
    for (std::size_t j = 0; j < s.size(); ++j) morph[j + 1] = static_cast<std::uint32_t>(s.morph_weight_offset(j) + s.morph_weight_count(j));
    std::vector<std::uint32_t> name_offsets(s.size() + 1, 0);
    std::vector<unsigned char> names;
    for (std::size_t j = 0; j < s.size(); ++j) {
        names.insert(names.end(), s.name(j).begin(), s.name(j).end());
        name_offsets[j + 1] = static_cast<std::uint32_t>(names.size());
    }
    const std::size_t offsets[6] = {b.append_values(parents),      b.append_values(bind),         b.append_values(morph),
                                    b.append_values(s.bind_morph_weights()), b.append_values(name_offsets), b.append_values(names)};
    for (int i = 0; i < 6; ++i) b.put32(8 + 4 * std::size_t(i), offsets[i]);
    b.put32(32, names.size());
    b.align();
    return b.bytes;
}

} // namespace pk
} // namespace impl

inline result<std::vector<unsigned char>> write_package(const package_contents& contents) {
    using namespace impl::pk;
    if (!contents.skeleton) return impl::make_error(errc::invalid_argument, "write_package: no skeleton");
    const skeleton& s = *contents.skeleton;
    std::vector<std::vector<unsigned char>> sections;
    sections.push_back(skeleton_section(s));
    if (contents.reports) contents.reports->assign(contents.clips.size(), compression_report{});
    for (std::size_t i = 0; i < contents.clips.size(); ++i) {
        if (!contents.clips[i])
            return impl::make_error(errc::invalid_argument, "write_package: clip " + std::to_string(i) + " is null", i);
        compressed_clip out;
        compress_job job;
        job.input = contents.clips[i];
        job.skeleton = &s;
        job.settings = contents.settings;
        job.output = &out;
        job.report = contents.reports ? &(*contents.reports)[i] : nullptr;
        if (status st = job.run(); !st)
            return impl::make_error(st.error().code, "write_package: clip " + std::to_string(i) + " '" + contents.clips[i]->name +
                                                         "': " + st.error().message,
                                    i);
        sections.emplace_back(out.data(), out.data() + out.size());
    }
    const std::uint32_t hash = impl::skeleton_fingerprint(s);
    for (std::size_t i = 0; i < contents.compressed_clips.size(); ++i) {
        const compressed_clip* c = contents.compressed_clips[i];
        if (!c || c->empty())
            return impl::make_error(errc::invalid_argument, "write_package: compressed clip " + std::to_string(i) + " is null or empty", i);
        if (impl::compressed_access::layout(*c).h.skeleton_hash != hash || c->joint_count() != s.size())
            return impl::make_error(errc::size_mismatch, "write_package: compressed clip " + std::to_string(i) + " '" +
                                                             std::string(c->name()) + "' was compressed for another skeleton",
                                    i);
        sections.emplace_back(c->data(), c->data() + c->size());
    }
    for (std::size_t i = 0; i < contents.meshes.size(); ++i) {
        if (!contents.meshes[i])
            return impl::make_error(errc::invalid_argument, "write_package: mesh " + std::to_string(i) + " is null", i);
        result<std::vector<unsigned char>> m = mesh_section(*contents.meshes[i], i, s.size());
        if (!m) return m.error();
        sections.push_back(std::move(*m));
    }
    builder b;
    b.bytes.assign(header_size + entry_size * sections.size(), 0);
    const std::size_t clips = contents.clips.size() + contents.compressed_clips.size();
    write<std::uint32_t>(b.bytes.data(), magic);
    write<std::uint32_t>(b.bytes.data() + 4, version);
    b.put32(24, sections.size());
    b.put32(28, header_size);
    b.put32(32, clips);
    b.put32(36, contents.meshes.size());
    for (std::size_t i = 0; i < sections.size(); ++i) {
        const std::size_t at = b.append(sections[i].data(), sections[i].size());
        unsigned char* e = b.bytes.data() + header_size + i * entry_size;
        write<std::uint32_t>(e, i == 0 ? section_skeleton : i <= clips ? section_clip : section_mesh);
        write<std::uint64_t>(e + 8, at);
        write<std::uint64_t>(e + 16, sections[i].size());
    }
    b.align();
    if (b.bytes.size() > (std::uint64_t(1) << 40))
        return impl::make_error(errc::unsupported, "write_package: more than 2^40 bytes");
    write<std::uint64_t>(b.bytes.data() + 8, b.bytes.size());
    write<std::uint32_t>(b.bytes.data() + 16, crc32c(b.bytes.data() + 20, b.bytes.size() - 20));
    return std::move(b.bytes);
}

} // namespace keyblend
