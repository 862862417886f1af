// keyblend — the Direct3D 9 adapter: matrices and vectors between D3D and GLM, the skinning palette
// as vertex-shader constants, CPU skinning straight into a locked vertex buffer, and (with D3DX)
// quaternions and D3DXFRAME hierarchies.
//
// SPDX-License-Identifier: MIT
//
// Optional: only a program that includes this header compiles it. It needs <d3d9.h> (Windows SDK or
// mingw-w64) and keyblend's core; link d3d9 (and d3dx9 for the D3DX parts). Nothing in keyblend
// includes it.
//
// The D3DX parts are compiled when the D3DX headers were included *before* this one (detected by
// their include guards, Microsoft's and mingw-w64's):
// - <d3dx9math.h> (or <d3dx9.h>): D3DXQUATERNION and D3DXVECTOR4 conversions;
// - <d3dx9anim.h> (or <d3dx9.h>): import_frames / write_frame_matrices for D3DXFRAME trees;
// - <d3dx9mesh.h> (or <d3dx9.h>): import_skin for an ID3DXSkinInfo.
// Each part defines a macro when it is compiled (KEYBLEND_D3D9_D3DX_MATH, KEYBLEND_D3D9_D3DX_ANIM,
// KEYBLEND_D3D9_D3DX_MESH).
//
// The Windows SDK's <windows.h> defines `min` and `max` as macros unless NOMINMAX is defined (mingw-
// w64's does not in C++), and those macros break GLM and the standard library. This header defines
// NOMINMAX when it includes <d3d9.h> itself; a program that includes <windows.h> or <d3d9.h> first
// must define NOMINMAX before it (the header stops with an #error naming the problem otherwise).
//
// Conventions (math.hpp, docs/conventions.md). D3D uses row vectors (`v * M`) and stores matrices row
// by row; GLM uses column vectors (`M * v`) and stores them column by column. The two transposes
// cancel: the 16 floats of a D3DMATRIX in memory order, read as a glm::mat4, are the same
// transform. So the matrix conversions here copy memory and never transpose, and
// `D3DXMatrixMultiply(A, B)` (A first, then B) is `B * A` in GLM.
//
// Errors. Every function that can fail returns a keyblend::status or result and never throws. Bad
// arguments are reported before any device call (nothing is written to the device then); a device
// call that fails is errc::device_error, with the call and its HRESULT in the message.
#pragma once

#if defined(min) || defined(max)
#error "keyblend/d3d9.hpp: min/max are macros here (from <windows.h>): define NOMINMAX before including <windows.h> or <d3d9.h>"
#endif

#include "error.hpp"
#include "math.hpp"
#include "skeleton.hpp"
#include "skin.hpp"

#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <d3d9.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace keyblend {
namespace d3d9 {

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

/// The same transform as a glm::mat4: the 16 floats copied in memory order, no transpose (see the
/// conventions above). Works for a D3DXMATRIX too (it derives from D3DMATRIX). Exact.
inline glm::mat4 to_glm(const D3DMATRIX& m) noexcept;
/// The inverse of to_glm: the 16 floats copied in memory order. Exact. (D3DXMATRIX has a
/// constructor from D3DMATRIX: `D3DXMATRIX m = to_d3d(g);`.)
inline D3DMATRIX to_d3d(const glm::mat4& m) noexcept;
/// x, y, z, by name. Exact. Works for D3DXVECTOR3 (it derives from D3DVECTOR).
inline glm::vec3 to_glm(const D3DVECTOR& v) noexcept;
inline D3DVECTOR to_d3d(const glm::vec3& v) noexcept;

// ---------------------------------------------------------------------------------------------
// The skinning palette as vertex-shader constants
// ---------------------------------------------------------------------------------------------

/// Float4 constant registers per palette matrix.
inline constexpr UINT registers_per_bone = 3;

/// The float4 constant registers every vs_2_0 device has (D3DCAPS9::MaxVertexShaderConst is at
/// least this; wine reports exactly this for software vertex processing). The default budget.
inline constexpr UINT vs_2_0_constant_registers = 256;

/// How many palette matrices fit in the registers [first_register, register_limit): 0 when
/// first_register >= register_limit.
constexpr std::size_t palette_capacity(UINT first_register,
                                       UINT register_limit = vs_2_0_constant_registers) noexcept {
    return first_register >= register_limit ? 0 : (register_limit - first_register) / registers_per_bone;
}

/// The device's vertex-shader float constant count (D3DCAPS9::MaxVertexShaderConst), to pass as a
/// register_limit. errc::invalid_argument for a null device, errc::device_error when GetDeviceCaps
/// fails.
inline result<UINT> vertex_shader_constant_count(IDirect3DDevice9* device);

/// Writes `count` palette matrices as shader constants: 3 float4 registers per matrix, 12 floats,
/// into `registers` (room for 12 * count floats). Matrix b goes to registers 3b, 3b + 1, 3b + 2,
/// which hold the matrix's rows 0, 1, 2 (GLM terms: register 3b + r = (m[0][r], m[1][r], m[2][r],
/// m[3][r])). The bottom row (projective part) is not written: palette matrices are affine.
///
/// That is the layout the skinning shaders of the DirectX SDK use: `m4x3 r0.xyz, v0, c[a0.x + base]`
/// or three `dp4 r0.x, v0, c[a0.x + base]` (row . (x, y, z, 1)) give the transformed position;
/// `m3x3` on the same registers transforms a normal. It is also an HLSL `float4x3 bones[N]`
/// with the default column_major packing, used as `mul(float4(p, 1), bones[i])`. (Uploading a
/// glm::mat4's or D3DXMATRIX's raw memory would put a *column* in each register instead, the
/// layout `mul(bones[i], p)` with a float4x4 reads.) Exact: floats are copied.
inline void palette_to_registers(const glm::mat4* palette, std::size_t count, float* registers) noexcept;

/// Checks what set_palette checks, without a device: `palette` non-null when count > 0, the
/// registers [first_register, first_register + 3 * count) within register_limit, and every
/// uploaded element (the top three rows) finite.
///
/// Errors (the message names the bone; error::index is the bone):
/// - errc::invalid_argument: a null palette with count > 0;
/// - errc::out_of_range: too many matrices for the budget; error::index is the first bone that
///   does not fit (palette_capacity(first_register, register_limit));
/// - errc::non_finite: a NaN or infinite element in the top three rows of a matrix (the first such
///   bone).
inline status validate_palette(UINT first_register, const glm::mat4* palette, std::size_t count,
                               UINT register_limit = vs_2_0_constant_registers);

/// Uploads the palette for vertex-shader palette skinning: palette_to_registers, then
/// SetVertexShaderConstantF from `first_register` (in calls of at most 128 matrices, through a
/// 6 KB stack buffer: a successful upload allocates nothing). count == 0 does nothing and succeeds.
///
/// `register_limit` is the number of constant registers the shader may use (the default is the
/// vs_2_0 minimum; pass vertex_shader_constant_count(device) to use all the device has).
/// Errors: errc::invalid_argument for a null device, then those of validate_palette (all checked
/// before anything is uploaded: on such an error the device's constants are unchanged), and
/// errc::device_error when SetVertexShaderConstantF fails (matrices before the failing call have
/// been uploaded).
inline status set_palette(IDirect3DDevice9* device, UINT first_register, const glm::mat4* palette,
                          std::size_t count, UINT register_limit = vs_2_0_constant_registers);
inline status set_palette(IDirect3DDevice9* device, UINT first_register,
                          const std::vector<glm::mat4>& palette,
                          UINT register_limit = vs_2_0_constant_registers);

// ---------------------------------------------------------------------------------------------
// Vertex layouts and skinning into vertex buffers
// ---------------------------------------------------------------------------------------------

/// Where a vertex's position and normal are, in one stream of a vertex buffer (either may be
/// missing, not both).
struct vertex_layout {
    static constexpr std::size_t none = static_cast<std::size_t>(-1);

    /// Bytes from one vertex to the next (what SetStreamSource is given).
    std::size_t stride = 0;
    /// Byte offset of the position's x, y, z (floats); `none` when the stream has no position.
    std::size_t position = none;
    /// Byte offset of the normal's x, y, z (floats), or `none`.
    std::size_t normal = none;

    bool has_position() const noexcept { return position != none; }
    bool has_normal() const noexcept { return normal != none; }
};

/// The layout of a flexible vertex format: the stride is D3DXGetFVFVertexSize's (the test checks
/// it against D3DX under wine), the position is at 0, the normal after the position (and blend
/// weights) when D3DFVF_NORMAL is set. Positions are D3DFVF_XYZ, D3DFVF_XYZB1..5 (blend weights
/// follow x, y, z and are stepped over) or D3DFVF_XYZW (x, y, z are skinned, w is not touched).
///
/// Errors: errc::unsupported for D3DFVF_XYZRHW (already transformed: nothing to skin) and a format
/// without a position; errc::invalid_argument for reserved bits or more than 8 texture sets.
inline result<vertex_layout> layout_from_fvf(DWORD fvf);

/// The layout of `stream` in a vertex declaration (ended by D3DDECL_END, at most MAXD3DDECLLENGTH
/// elements before it). The position is the POSITION element of usage index 0, the normal the
/// NORMAL element of usage index 0, each D3DDECLTYPE_FLOAT3 or FLOAT4 (x, y, z used) with
/// D3DDECLMETHOD_DEFAULT; other elements are stepped over. A stream may hold either or both: with
/// positions in stream 0 and normals in stream 1, ask for each stream and make spans of each. The
/// stride is the end of the stream's last element (D3DXGetDeclVertexSize's; set `stride` yourself
/// for a padded stream).
///
/// Errors: errc::invalid_argument for a null declaration, no D3DDECL_END within MAXD3DDECLLENGTH
/// elements, an unknown element type, a position or normal given twice; errc::unsupported for a
/// position or normal of another type or method, and a stream with neither.
inline result<vertex_layout> layout_from_declaration(const D3DVERTEXELEMENT9* elements, DWORD stream = 0);
/// The same for a declaration object (GetDeclaration). errc::device_error when that fails.
inline result<vertex_layout> layout_from_declaration(IDirect3DVertexDeclaration9* declaration,
                                                     DWORD stream = 0);

/// Positions and normals of `vertex_count` vertices in vertex-buffer memory, as the strided spans
/// a skinning_job reads (`in_positions`, `in_normals`) or writes (`out_positions`, `out_normals`).
/// A span is empty when the layout has no such attribute.
template <class Float>
struct vertex_spans {
    strided_span<Float> positions;
    strided_span<Float> normals;
};

/// The spans of `vertex_count` vertices laid out as `layout` in `bytes` bytes at `data` (a locked
/// buffer, or a system-memory copy of one). Nothing is read or written.
///
/// Errors: errc::invalid_argument for null data with vertex_count > 0, a layout with neither a
/// position nor a normal, a zero stride, a position or normal that does not fit in the stride, or data, stride or offsets
/// not 4-byte aligned; errc::out_of_range when the vertices do not fit in `bytes`.
inline result<vertex_spans<float>> make_vertex_spans(void* data, std::size_t bytes,
                                                     const vertex_layout& layout,
                                                     std::size_t vertex_count);
inline result<vertex_spans<const float>> make_vertex_spans(const void* data, std::size_t bytes,
                                                           const vertex_layout& layout,
                                                           std::size_t vertex_count);

/// A locked range of a vertex or index buffer, unlocked when this object is destroyed (or by
/// unlock(), which reports the HRESULT the destructor has to ignore). Move-only. Holds no
/// reference: the buffer must outlive the lock. An empty lock (default-constructed, moved from or
/// unlocked) has data() == nullptr and size() == 0.
///
///     auto lock = keyblend::d3d9::locked_vertex_buffer::lock(vb, 0, 0, D3DLOCK_DISCARD);
///     if (!lock) return lock.error();
///     auto out = keyblend::d3d9::make_vertex_spans(lock->data(), lock->size(), layout, n);
///     job.out_positions = out->positions;  job.out_normals = out->normals;
///     job.run();                           // skins straight into the buffer
///     lock->unlock();                      // or let it go out of scope
template <class Buffer>
class locked_buffer {
public:
    locked_buffer() noexcept = default;
    locked_buffer(locked_buffer&& other) noexcept { swap(other); }
    locked_buffer& operator=(locked_buffer&& other) noexcept {
        if (this != &other) {
            release();
            swap(other);
        }
        return *this;
    }
    locked_buffer(const locked_buffer&) = delete;
    locked_buffer& operator=(const locked_buffer&) = delete;
    ~locked_buffer() { release(); }

    /// Locks `size` bytes from byte `offset` (size 0: to the end of the buffer) with the D3DLOCK_
    /// flags given (D3DLOCK_DISCARD for a dynamic buffer rewritten every frame, D3DLOCK_READONLY,
    /// ...). Errors: errc::invalid_argument for a null buffer; errc::out_of_range for a range past
    /// the end of the buffer (or an empty one); errc::device_error when GetDesc or Lock fails.
    static result<locked_buffer> lock(Buffer* buffer, UINT offset = 0, UINT size = 0, DWORD flags = 0);

    /// Unlocks now. Succeeds on an empty lock; errc::device_error when Unlock fails (the lock is
    /// empty afterwards either way).
    status unlock();

    bool locked() const noexcept { return data_ != nullptr; }
    /// The first locked byte, or nullptr.
    void* data() const noexcept { return data_; }
    /// Locked bytes.
    std::size_t size() const noexcept { return size_; }
    Buffer* buffer() const noexcept { return buffer_; }

private:
    /// Unlock without a message (the destructor's): its HRESULT is lost.
    void release() noexcept {
        if (data_) buffer_->Unlock();
        buffer_ = nullptr;
        data_ = nullptr;
        size_ = 0;
    }
    void swap(locked_buffer& other) noexcept {
        std::swap(buffer_, other.buffer_);
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
    }

    Buffer* buffer_ = nullptr;
    void* data_ = nullptr;
    std::size_t size_ = 0;
};

using locked_vertex_buffer = locked_buffer<IDirect3DVertexBuffer9>;
using locked_index_buffer = locked_buffer<IDirect3DIndexBuffer9>;

} // namespace d3d9
} // namespace keyblend

// ---------------------------------------------------------------------------------------------
// With <d3dx9math.h>: quaternions and 4-vectors
// ---------------------------------------------------------------------------------------------
#if defined(__D3DX9MATH_H__)
#define KEYBLEND_D3D9_D3DX_MATH
namespace keyblend {
namespace d3d9 {

/// A D3DXQUATERNION (stored x, y, z, w) as the glm::quat with the same w, x, y, z (set by name,
/// so GLM_FORCE_QUAT_DATA_WXYZ does not matter). Exact. This is the same rotation in both
/// libraries' terms: `to_glm(D3DXMatrixRotationQuaternion(q)) == glm::mat4_cast(to_glm(q))`, and
/// `D3DXQuaternionMultiply(a, b)` (a first, then b) is `to_glm(b) * to_glm(a)` (the test checks
/// both, and D3DXQuaternionRotationAxis against glm::angleAxis, under wine). No conjugation: the
/// one .X rotation keys need happens in the .X loader (docs/conventions.md), not here.
inline glm::quat to_glm(const D3DXQUATERNION& q) noexcept;
inline D3DXQUATERNION to_d3d(const glm::quat& q) noexcept;
/// x, y, z, w by name. Exact.
inline glm::vec4 to_glm(const D3DXVECTOR4& v) noexcept;
inline D3DXVECTOR4 to_d3d(const glm::vec4& v) noexcept;

} // namespace d3d9
} // namespace keyblend
#endif

// ---------------------------------------------------------------------------------------------
// With <d3dx9anim.h>: D3DXFRAME hierarchies
// ---------------------------------------------------------------------------------------------
#if defined(__D3DX9ANIM_H__) || defined(__WINE_D3DX9ANIM_H)
#define KEYBLEND_D3D9_D3DX_ANIM
namespace keyblend {
namespace d3d9 {

/// A D3DXFRAME tree as a skeleton, and which frame each joint came from.
struct frame_hierarchy {
    keyblend::skeleton skeleton;
    /// frames[j]: joint j's frame (the tree's, not a copy).
    std::vector<D3DXFRAME*> frames;
};

/// Builds a skeleton from the frame tree under `root` (root, its pFrameFirstChild /
/// pFrameSibling links, the siblings of `root` as further roots — as D3DXLoadMeshHierarchyFromX
/// links top-level frames): one joint per frame, named by Name ("" when null), with
/// TransformationMatrix as its bind local matrix (to_glm). The frames are enumerated depth first,
/// children before siblings, which is the skeleton's own order, so joint j is the j-th frame of
/// that walk. Use it to move D3DX code to keyblend: sample clips on this skeleton, then
/// write_frame_matrices the results back where the rest of the program reads them.
///
/// Errors: errc::invalid_argument for a null root; errc::cycle for a frame linked twice (a loop);
/// and skeleton::from_frame_tree's errors (errc::duplicate for two frames of the same name, unless
/// `options` renames; errc::non_finite for a NaN matrix), naming the frame by its index in the
/// walk. Reads the tree only.
inline result<frame_hierarchy> import_frames(D3DXFRAME* root, const skeleton_options& options = {});

/// Writes `matrices[j]` (one per joint, e.g. player::model() or local()) into joint j's frame:
/// `static_cast<Frame*>(frames[j])->*member = to_d3d(matrices[j])`. The default member is
/// D3DXFRAME::TransformationMatrix (local matrices); for model matrices pass your derived frame's
/// combined-matrix member, e.g. `&D3DXFRAME_EX::matCombined` (every frame must then be a
/// D3DXFRAME_EX, as your ID3DXAllocateHierarchy made them).
///
/// Errors (nothing written): errc::size_mismatch when the sizes differ; errc::invalid_argument for
/// a null frame (error::index is the joint).
template <class Frame = D3DXFRAME>
status write_frame_matrices(const std::vector<glm::mat4>& matrices,
                            const std::vector<D3DXFRAME*>& frames,
                            D3DXMATRIX Frame::*member = &D3DXFRAME::TransformationMatrix);

} // namespace d3d9
} // namespace keyblend
#endif

// ---------------------------------------------------------------------------------------------
// With <d3dx9mesh.h>: ID3DXSkinInfo
// ---------------------------------------------------------------------------------------------
#if defined(__D3DX9MESH_H__) || defined(__WINE_D3DX9MESH_H)
#define KEYBLEND_D3D9_D3DX_MESH
namespace keyblend {
namespace d3d9 {

/// A skin's bones and per-vertex influences in the layout a skinning_job reads, the same as the .X
/// loader's io::mesh_skin (k slots per vertex, sorted by decreasing weight, unused slots weight 0
/// and bone 0):
///
///     palette[b] = model[bones[b].joint] * bones[b].offset             (palette_job)
///     job.joints = make_span(bone_indices, k);  job.weights = make_span(weights, k);
struct skin_influences {
    /// Per bone: GetBoneName, the joint of the skeleton it names, and GetBoneOffsetMatrix (mesh
    /// space to the bone's bind space) as GLM.
    std::vector<skin_bone> bones;
    /// k: the most influences any vertex has (0 without bones).
    std::size_t influences_per_vertex = 0;
    /// vertex_count * k bone indices and weights.
    std::vector<std::uint16_t> bone_indices;
    std::vector<float> weights;
};

/// Reads an ID3DXSkinInfo (from D3DXLoadMeshHierarchyFromX's mesh containers, or your own) for
/// the skeleton `s` (import_frames of the same hierarchy, or the .X loader's): bone b follows the
/// joint named GetBoneName(b); its influences (GetBoneInfluence) are gathered per vertex. An
/// influence of weight 0 takes no slot; ties keep bone order. Weights are as given (not
/// renormalised: skinning_job::validate checks their sums). `vertex_count` is the mesh's
/// (ID3DXMesh::GetNumVertices). Reads the skin only; no D3DX skinning call is made (under wine
/// UpdateSkinnedMesh returns E_NOTIMPL, and keyblend skins faster anyway).
///
/// Errors (naming the bone, or the vertex; error::index is that bone or vertex):
/// - errc::invalid_argument: a null skin;
/// - errc::not_found: a bone whose name (null counts as "") is no joint of `s`;
/// - errc::out_of_range: an influence on a vertex >= vertex_count;
/// - errc::non_finite: a NaN or infinite weight or offset matrix;
/// - errc::unsupported: more than 65536 bones, or a vertex with more than max_influences (8)
///   non-zero weights;
/// - errc::device_error: GetBoneInfluence failing, or a null offset matrix.
inline result<skin_influences> import_skin(ID3DXSkinInfo* skin, std::size_t vertex_count, const skeleton& s);

} // namespace d3d9
} // namespace keyblend
#endif

#include "impl/d3d9.impl.hpp"
