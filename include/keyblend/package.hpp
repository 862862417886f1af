// keyblend — the runtime file: a skeleton, its compressed clips and its skinned meshes in one
// versioned blob that a game reads (or maps) in one go and uses where it lies.
//
// SPDX-License-Identifier: MIT
//
// A package is validated once, when it is opened (package::view): the header's magic, version,
// size and CRC-32C checksum, then every section's offset, size and alignment, every count
// against the bytes that hold it, every index against what it indexes (triangle corners against
// vertices, skin slots against bones, bones and mesh joints against joints, parents against the
// joints before them), every clip as compressed_clip::view checks it and against the package's
// skeleton. Validation is O(size) with small constants and allocates nothing (the checksum: see
// crc32c for its paths and docs/compression.md for its speed); after it, nothing
// read through the views can be out of bounds, however the bytes were made. Hierarchies of any
// depth are checked without recursion.
//
// The views. package::clip(i) is a compressed_clip viewing its bytes, package::mesh(i) a
// package_mesh whose attributes are spans into the blob in the layout skinning_job reads fastest
// (packed xyz positions and normals, k joint indices - 8 or 16 bits - and k weights per vertex),
// so nothing is copied or allocated to use them. The skeleton is the one thing to build
// (package::make_skeleton, a keyblend::skeleton: its derived bind-pose data and schedules), once.
//
// The bytes. Little-endian (packages are read on little-endian hosts only; view() refuses
// others), 16-byte aligned: the blob itself, every section and every array that holds vectors or
// matrices. Layout (offsets from the blob's first byte):
//   header        64 bytes: u32 magic "KBPK", u32 version (1), u64 size, u32 CRC-32C of bytes
//                 [20, size), u32 flags (0), u32 section count, u32 section table offset (64),
//                 u32 clip count, u32 mesh count, then zeros
//   section table 32 bytes a section: u32 type (1 skeleton, 2 clip, 3 mesh), u32 0, u64 offset,
//                 u64 size, u64 0; the skeleton first and once, then the clips, then the meshes,
//                 each after the one before it
//   skeleton      see impl/package.impl.hpp (joints in keyblend's parent-first order: parents,
//                 bind-pose matrices, morph weights, names)
//   clip          a compressed clip's bytes (impl/compress_format.hpp)
//   mesh          see impl/package.impl.hpp (attributes, triangles, skin, materials, morph
//                 targets, names)
// A version that changes the layout gets a new number; view() refuses versions it does not read.
#pragma once

#include "compress.hpp"
#include "error.hpp"
#include "io/model.hpp"
#include "skeleton.hpp"
#include "span.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace keyblend {

namespace impl {
struct package_access;
} // namespace impl

/// One material of a package mesh (io::material's members as views).
struct package_material {
    std::string_view name{};
    glm::vec4 diffuse{1.0f};
    float power = 0.0f;
    glm::vec3 specular{0.0f};
    glm::vec3 emissive{0.0f};
    std::string_view texture_file{};
};

/// One morph target of a package mesh: per-vertex displacements (each xyz per vertex, packed, or
/// empty).
struct package_morph_target {
    std::string_view name{};
    strided_span<const float> positions{};
    strided_span<const float> normals{};
    strided_span<const float> tangents{};
};

/// A mesh of a package: views into its bytes (see the top of this file), valid while they are.
struct package_mesh {
    std::string_view name{};
    /// The joint that places the mesh (io::mesh::joint), or io::no_joint.
    std::size_t joint = io::no_joint;
    std::size_t vertex_count = 0;
    /// xyz per vertex, packed (12 bytes a vertex): skinning_job's in_positions / in_normals as
    /// they are. Normals: empty, or one per vertex.
    strided_span<const float> positions{};
    strided_span<const float> normals{};
    /// xyzw per vertex (w the bitangent's sign), or empty.
    strided_span<const float> tangents{};
    /// uv per vertex, or empty.
    strided_span<const float> texcoords{};
    /// Triangles: three vertex indices each, every one < vertex_count.
    span<const std::uint32_t> indices{};
    /// The skin (io::mesh_skin): k influences per vertex (0: not skinned), each a palette index
    /// (< bone_count) in 8 bits when the mesh has at most 256 bones, else 16 (one of
    /// joints8 / joints16 is given), and a weight. Bone b follows joint bone_joints[b] with offset
    /// bone_offsets[b] (skin_bone's joint and offset: skin_bones() gives them to palette_job).
    std::size_t influences = 0;
    strided_span<const std::uint8_t> joints8{};
    strided_span<const std::uint16_t> joints16{};
    strided_span<const float> weights{};
    std::size_t bone_count = 0;
    span<const std::uint32_t> bone_joints{};
    span<const glm::mat4> bone_offsets{};
    /// Materials, and one material index per triangle (both empty when the source had none).
    std::size_t material_count = 0;
    span<const std::uint32_t> triangle_materials{};
    std::size_t morph_target_count = 0;

    bool is_skinned() const noexcept { return bone_count != 0; }
    std::string_view bone_name(std::size_t b) const;
    /// The bones as palette_job takes them (bone_count of them: name, joint, offset). Allocates
    /// (skin_bone holds its name as a std::string): once per mesh when the package is opened, not
    /// per frame.
    std::vector<skin_bone> skin_bones() const;
    package_material material(std::size_t i) const;
    package_morph_target morph_target(std::size_t i) const;
    /// The mesh as an io::mesh (copies everything; for tools).
    io::mesh to_mesh() const;

private:
    friend class package;
    const unsigned char* strings_ = nullptr;
    const unsigned char* materials_ = nullptr;
    const unsigned char* targets_ = nullptr;
    const unsigned char* section_ = nullptr;
};

/// A validated package: views of its bytes, which must stay where they are, unchanged, while it,
/// its clips or its meshes are used. Copying copies the views.
class package {
public:
    package() = default;

    /// Validates `size` bytes at `data` (16-byte aligned) as a package (see the top of this file)
    /// and returns views of them. Errors, each naming the place (section, field and byte offset):
    /// errc::invalid_argument for misaligned or null data; errc::parse_error for anything
    /// malformed (magic, size, truncation, a section outside the blob, misaligned or overlapping,
    /// a count its bytes cannot hold, an index out of range, a clip that compressed_clip::view
    /// refuses or that belongs to another skeleton); errc::unsupported for another version or a
    /// big-endian host; errc::io_error for a checksum mismatch.
    static result<package> view(const void* data, std::size_t size);

    const unsigned char* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

    std::size_t joint_count() const noexcept { return joints_; }
    std::size_t morph_weight_total() const noexcept { return weights_; }
    /// Parent of each joint (an earlier joint, or no_parent), bind-pose matrices, names.
    span<const joint_index> parents() const noexcept;
    span<const glm::mat4> bind_local() const noexcept;
    std::string_view joint_name(std::size_t j) const;
    /// The skeleton, built from the package's joints (allocates; once per package). It samples
    /// the package's clips.
    result<skeleton> make_skeleton() const;

    std::size_t clip_count() const noexcept { return clips_; }
    /// Clip i, viewing the package's bytes (O(1): checked when the package was opened; no
    /// allocation). Empty for i >= clip_count().
    compressed_clip clip(std::size_t i) const;
    /// The index of the clip named exactly `name`, or clip_count().
    std::size_t find_clip(std::string_view name) const;

    std::size_t mesh_count() const noexcept { return meshes_; }
    /// Mesh i (views). Precondition: i < mesh_count().
    package_mesh mesh(std::size_t i) const;

private:
    friend struct impl::package_access;
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t joints_ = 0, weights_ = 0, clips_ = 0, meshes_ = 0;
    const unsigned char* skeleton_ = nullptr; // the skeleton section
    std::size_t first_clip_ = 0;              // section index of the first clip
};

/// A package file read into memory this object owns (16-byte aligned), with its views.
class package_file {
public:
    /// Reads the file at `path` (one read) and validates it as package::view does. Errors:
    /// errc::io_error when it cannot be read, and view()'s.
    static result<package_file> read(const std::string& path);
    /// The same from bytes in memory (copied).
    static result<package_file> copy(const void* data, std::size_t size);

    package_file() = default;
    package_file(const package_file&) = delete;
    package_file& operator=(const package_file&) = delete;
    package_file(package_file&&) noexcept = default;
    package_file& operator=(package_file&&) noexcept = default;

    const package& contents() const noexcept { return view_; }
    const package* operator->() const noexcept { return &view_; }

private:
    struct alignas(16) block {
        unsigned char bytes[16];
    };
    /// Room for n bytes in bytes_ (nullptr when they cannot be allocated).
    unsigned char* allocate(std::size_t n);
    std::unique_ptr<block[]> bytes_;
    package view_;
};

/// What write_package puts in a package.
struct package_contents {
    /// Its skeleton (required).
    const keyblend::skeleton* skeleton = nullptr;
    /// Clips to compress with `settings` (each must pass validate_clip against the skeleton).
    std::vector<const keyblend::clip*> clips{};
    /// Clips compressed already (for this skeleton); stored after `clips`, as they are.
    std::vector<const compressed_clip*> compressed_clips{};
    /// Meshes (loaders' io::mesh, or anything derived from it): vertices finite, triangle corners
    /// < the vertex count, skin slots < the bone count, bone joints < the skeleton's joints.
    std::vector<const io::mesh*> meshes{};
    compression_settings settings{};
    /// Optional: one report per clip of `clips`.
    std::vector<compression_report>* reports = nullptr;
};

/// Builds a package: compresses the clips, lays everything out (see the top of this file) and
/// checksums it; the result is 16-byte aligned in memory only as std::vector's allocation is
/// (write it to a file, or copy it into a package_file). Errors: errc::invalid_argument for no
/// skeleton, a null clip or mesh, or a mesh whose indices are out of range (naming it);
/// compress_job's errors (naming the clip); errc::size_mismatch for a compressed clip of another
/// skeleton; errc::unsupported for more than 2^32 of anything or a package past 2^40 bytes.
inline result<std::vector<unsigned char>> write_package(const package_contents& contents);

/// CRC-32C (Castagnoli, reflected, the iSCSI / ext4 one) of `size` bytes, continuing `crc` (0 for
/// a start). Carry-less multiplication on 512-bit registers where the compiler targets AVX-512
/// with VPCLMULQDQ, else SSE4.2's crc32 instruction where it targets that, else slice-by-8 tables.
inline std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0) noexcept;

} // namespace keyblend

#include "impl/package.impl.hpp"
