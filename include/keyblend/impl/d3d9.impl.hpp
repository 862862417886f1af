// keyblend — definitions for d3d9.hpp. Included at the bottom of d3d9.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace keyblend {
namespace d3d9 {
namespace impl {

using keyblend::impl::make_error;

/// "0x0000ABCD".
inline std::string hex32(std::uint32_t v) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%08lX", static_cast<unsigned long>(v));
    return text;
}

/// "0x8876086C (D3DERR_INVALIDCALL)", or just the number for a code not listed.
inline std::string hresult_text(HRESULT hr) {
    struct named {
        HRESULT code;
        const char* name;
    };
    static const named names[] = {
        {D3DERR_INVALIDCALL, "D3DERR_INVALIDCALL"},
        {D3DERR_NOTAVAILABLE, "D3DERR_NOTAVAILABLE"},
        {D3DERR_OUTOFVIDEOMEMORY, "D3DERR_OUTOFVIDEOMEMORY"},
        {D3DERR_DEVICELOST, "D3DERR_DEVICELOST"},
        {D3DERR_DEVICENOTRESET, "D3DERR_DEVICENOTRESET"},
        {D3DERR_DRIVERINTERNALERROR, "D3DERR_DRIVERINTERNALERROR"},
        {D3DERR_WASSTILLDRAWING, "D3DERR_WASSTILLDRAWING"},
        {E_OUTOFMEMORY, "E_OUTOFMEMORY"},
        {E_NOTIMPL, "E_NOTIMPL"},
        {E_INVALIDARG, "E_INVALIDARG"},
        {E_POINTER, "E_POINTER"},
        {E_FAIL, "E_FAIL"},
    };
    const std::string text = hex32(static_cast<std::uint32_t>(hr));
    for (const named& n : names)
        if (n.code == hr) return text + " (" + n.name + ")";
    return text;
}

/// errc::device_error for a failed call: "<call> failed: HRESULT 0x... (NAME)".
inline error call_failed(const std::string& call, HRESULT hr) {
    return make_error(errc::device_error, call + " failed: HRESULT " + hresult_text(hr));
}

inline HRESULT buffer_size(IDirect3DVertexBuffer9* buffer, UINT& size) {
    D3DVERTEXBUFFER_DESC desc{};
    const HRESULT hr = buffer->GetDesc(&desc);
    size = desc.Size;
    return hr;
}
inline HRESULT buffer_size(IDirect3DIndexBuffer9* buffer, UINT& size) {
    D3DINDEXBUFFER_DESC desc{};
    const HRESULT hr = buffer->GetDesc(&desc);
    size = desc.Size;
    return hr;
}
inline const char* buffer_kind(IDirect3DVertexBuffer9*) { return "vertex buffer"; }
inline const char* buffer_kind(IDirect3DIndexBuffer9*) { return "index buffer"; }

/// Bytes of a D3DDECLTYPE, or 0 for an unknown type (D3DDECLTYPE_UNUSED is 0 bytes too, and known).
inline std::size_t declaration_type_size(BYTE type, bool& known) {
    // FLOAT1..4, D3DCOLOR, UBYTE4, SHORT2, SHORT4, UBYTE4N, SHORT2N, SHORT4N, USHORT2N, USHORT4N,
    // UDEC3, DEC3N, FLOAT16_2, FLOAT16_4, UNUSED (d3d9types.h order).
    static const unsigned char sizes[] = {4, 8, 12, 16, 4, 4, 4, 8, 4, 4, 8, 4, 8, 4, 4, 4, 8, 0};
    known = type < sizeof sizes;
    return known ? sizes[type] : 0;
}

template <class Float, class Byte>
result<vertex_spans<Float>> make_vertex_spans(Byte* data, std::size_t bytes, const vertex_layout& layout,
                                              std::size_t n) {
    constexpr std::size_t xyz = 3 * sizeof(float);
    if (!layout.has_position() && !layout.has_normal())
        return make_error(errc::invalid_argument, "make_vertex_spans: the layout has neither position nor normal");
    if (layout.stride == 0)
        return make_error(errc::invalid_argument, "make_vertex_spans: the layout's stride is 0");
    for (const std::size_t offset : {layout.position, layout.normal}) {
        if (offset == vertex_layout::none) continue;
        if (offset > layout.stride || layout.stride - offset < xyz)
            return make_error(errc::invalid_argument,
                              "make_vertex_spans: an attribute at byte offset " + std::to_string(offset) +
                                  " does not fit in the stride of " + std::to_string(layout.stride) +
                                  " bytes");
        if (offset % alignof(float) != 0)
            return make_error(errc::invalid_argument, "make_vertex_spans: byte offset " +
                                                          std::to_string(offset) + " is not 4-byte aligned");
    }
    if (layout.stride % alignof(float) != 0)
        return make_error(errc::invalid_argument, "make_vertex_spans: the stride of " +
                                                      std::to_string(layout.stride) +
                                                      " bytes is not a multiple of 4");
    if (n > 0 && data == nullptr)
        return make_error(errc::invalid_argument, "make_vertex_spans: null data for " + std::to_string(n) +
                                                      " vertices");
    if (reinterpret_cast<std::uintptr_t>(data) % alignof(float) != 0)
        return make_error(errc::invalid_argument, "make_vertex_spans: the data is not 4-byte aligned");
    if (n > 0) {
        std::size_t end = 0; // bytes the last vertex needs
        if (layout.has_position()) end = layout.position + xyz;
        if (layout.has_normal()) end = (std::max)(end, layout.normal + xyz);
        if (end > bytes || n - 1 > (bytes - end) / layout.stride)
            return make_error(errc::out_of_range,
                              "make_vertex_spans: " + std::to_string(n) + " vertices of " +
                                  std::to_string(layout.stride) + " bytes do not fit in " +
                                  std::to_string(bytes) + " bytes");
    }
    vertex_spans<Float> out;
    const auto span_at = [&](std::size_t offset) {
        return strided_span<Float>{data ? reinterpret_cast<Float*>(data + offset) : nullptr, n,
                                   layout.stride, sizeof(float)};
    };
    if (layout.has_position()) out.positions = span_at(layout.position);
    if (layout.has_normal()) out.normals = span_at(layout.normal);
    return out;
}

} // namespace impl

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

inline glm::mat4 to_glm(const D3DMATRIX& m) noexcept {
    static_assert(sizeof(D3DMATRIX) == 16 * sizeof(float), "D3DMATRIX is 16 floats");
    static_assert(sizeof(glm::mat4) == 16 * sizeof(float), "glm::mat4 is 16 floats");
    glm::mat4 g(1.0f);
    std::memcpy(&g[0][0], &m.m[0][0], sizeof g);
    return g;
}

inline D3DMATRIX to_d3d(const glm::mat4& g) noexcept {
    D3DMATRIX m;
    std::memcpy(&m.m[0][0], &g[0][0], sizeof m);
    return m;
}

inline glm::vec3 to_glm(const D3DVECTOR& v) noexcept { return glm::vec3(v.x, v.y, v.z); }

inline D3DVECTOR to_d3d(const glm::vec3& v) noexcept {
    D3DVECTOR d;
    d.x = v.x;
    d.y = v.y;
    d.z = v.z;
    return d;
}

// ---------------------------------------------------------------------------------------------
// Palette
// ---------------------------------------------------------------------------------------------

inline result<UINT> vertex_shader_constant_count(IDirect3DDevice9* device) {
    if (!device)
        return impl::make_error(errc::invalid_argument, "vertex_shader_constant_count: null device");
    D3DCAPS9 caps{};
    if (const HRESULT hr = device->GetDeviceCaps(&caps); FAILED(hr)) return impl::call_failed("GetDeviceCaps", hr);
    return static_cast<UINT>(caps.MaxVertexShaderConst);
}

inline void palette_to_registers(const glm::mat4* palette, std::size_t count, float* registers) noexcept {
    for (std::size_t b = 0; b < count; ++b) {
        const glm::mat4& m = palette[b];
        float* r = registers + b * 4 * registers_per_bone;
        for (int row = 0; row < 3; ++row)
            for (int col = 0; col < 4; ++col) r[4 * row + col] = m[col][row];
    }
}

inline status validate_palette(UINT first_register, const glm::mat4* palette, std::size_t count,
                               UINT register_limit) {
    if (count > 0 && palette == nullptr)
        return impl::make_error(errc::invalid_argument,
                                "palette: null matrices for " + std::to_string(count) + " bones");
    const std::size_t capacity = palette_capacity(first_register, register_limit);
    if (count > capacity)
        return impl::make_error(
            errc::out_of_range,
            "palette: " + std::to_string(count) + " matrices from register c" +
                std::to_string(first_register) + " need " + std::to_string(count) + " x " +
                std::to_string(registers_per_bone) + " registers, but only " +
                std::to_string(capacity) + " matrices fit below the limit of " +
                std::to_string(register_limit) + " registers: bone " + std::to_string(capacity) +
                " is the first that does not fit",
            capacity);
    for (std::size_t b = 0; b < count; ++b)
        for (int row = 0; row < 3; ++row)
            for (int col = 0; col < 4; ++col)
                if (!is_finite(palette[b][col][row]))
                    return impl::make_error(errc::non_finite,
                                            "palette: bone " + std::to_string(b) + ": element [" +
                                                std::to_string(col) + "][" + std::to_string(row) +
                                                "] is " +
                                                keyblend::impl::float_to_string(palette[b][col][row]),
                                            b);
    return {};
}

inline status set_palette(IDirect3DDevice9* device, UINT first_register, const glm::mat4* palette,
                          std::size_t count, UINT register_limit) {
    if (!device) return impl::make_error(errc::invalid_argument, "set_palette: null device");
    if (status ok = validate_palette(first_register, palette, count, register_limit); !ok) return ok;
    constexpr std::size_t chunk = 128;
    float registers[chunk * 4 * registers_per_bone];
    for (std::size_t b = 0; b < count; b += chunk) {
        const std::size_t n = (std::min)(chunk, count - b);
        palette_to_registers(palette + b, n, registers);
        const UINT start = first_register + static_cast<UINT>(b) * registers_per_bone;
        const UINT vectors = static_cast<UINT>(n) * registers_per_bone;
        if (const HRESULT hr = device->SetVertexShaderConstantF(start, registers, vectors); FAILED(hr))
            return impl::call_failed("SetVertexShaderConstantF(c" + std::to_string(start) + ", " +
                                         std::to_string(vectors) + " registers)",
                                     hr);
    }
    return {};
}

inline status set_palette(IDirect3DDevice9* device, UINT first_register,
                          const std::vector<glm::mat4>& palette, UINT register_limit) {
    return set_palette(device, first_register, palette.data(), palette.size(), register_limit);
}

// ---------------------------------------------------------------------------------------------
// Vertex layouts
// ---------------------------------------------------------------------------------------------

inline result<vertex_layout> layout_from_fvf(DWORD fvf) {
    const std::string fvf_text = "FVF " + impl::hex32(fvf);
    // D3DFVF_RESERVED2 covers 0x4000, which D3DFVF_XYZW uses: the position switch checks that bit.
    if (fvf & (D3DFVF_RESERVED0 | (D3DFVF_RESERVED2 & ~DWORD(D3DFVF_POSITION_MASK))))
        return impl::make_error(errc::invalid_argument, "layout_from_fvf: " + fvf_text + " sets reserved bits");
    vertex_layout layout;
    std::size_t size = 0;
    const DWORD position = fvf & D3DFVF_POSITION_MASK;
    switch (position) {
    case 0:
        return impl::make_error(errc::unsupported, "layout_from_fvf: " + fvf_text + " has no position");
    case D3DFVF_XYZRHW:
        return impl::make_error(errc::unsupported, "layout_from_fvf: " + fvf_text +
                                                       " is D3DFVF_XYZRHW (already transformed)");
    case D3DFVF_XYZ: size = 12; break;
    case D3DFVF_XYZW: size = 16; break;
    case D3DFVF_XYZB1:
    case D3DFVF_XYZB2:
    case D3DFVF_XYZB3:
    case D3DFVF_XYZB4:
    case D3DFVF_XYZB5: size = 12 + 4 * ((position - D3DFVF_XYZRHW) / 2); break; // the blend betas
    default:
        return impl::make_error(errc::invalid_argument,
                                "layout_from_fvf: " + fvf_text + " has no valid position format");
    }
    layout.position = 0;
    if (fvf & D3DFVF_NORMAL) {
        layout.normal = size;
        size += 12;
    }
    if (fvf & D3DFVF_PSIZE) size += 4;
    if (fvf & D3DFVF_DIFFUSE) size += 4;
    if (fvf & D3DFVF_SPECULAR) size += 4;
    const DWORD sets = (fvf & D3DFVF_TEXCOUNT_MASK) >> D3DFVF_TEXCOUNT_SHIFT;
    if (sets > 8)
        return impl::make_error(errc::invalid_argument, "layout_from_fvf: " + fvf_text + " has " +
                                                            std::to_string(sets) + " texture sets (at most 8)");
    for (DWORD i = 0; i < sets; ++i) {
        // D3DFVF_TEXTUREFORMAT2 = 0, 3 = 1, 4 = 2, 1 = 3 (two bits per set from bit 16).
        static const std::size_t floats[] = {2, 3, 4, 1};
        size += 4 * floats[(fvf >> (16 + 2 * i)) & 3];
    }
    layout.stride = size;
    return layout;
}

inline result<vertex_layout> layout_from_declaration(const D3DVERTEXELEMENT9* elements, DWORD stream) {
    if (!elements)
        return impl::make_error(errc::invalid_argument, "layout_from_declaration: null declaration");
    vertex_layout layout;
    std::size_t end = 0;
    for (std::size_t i = 0;; ++i) {
        if (i > MAXD3DDECLLENGTH)
            return impl::make_error(errc::invalid_argument,
                                    "layout_from_declaration: no D3DDECL_END within " +
                                        std::to_string(MAXD3DDECLLENGTH) + " elements");
        const D3DVERTEXELEMENT9& e = elements[i];
        if (e.Stream == 0xFF) break; // D3DDECL_END
        const std::string where = "layout_from_declaration: element " + std::to_string(i);
        bool known = false;
        const std::size_t size = impl::declaration_type_size(e.Type, known);
        if (!known)
            return impl::make_error(errc::invalid_argument,
                                    where + ": unknown type " + std::to_string(e.Type), i);
        if (e.Stream != stream) continue;
        end = (std::max)(end, std::size_t(e.Offset) + size);
        const bool position = e.Usage == D3DDECLUSAGE_POSITION, normal = e.Usage == D3DDECLUSAGE_NORMAL;
        if ((!position && !normal) || e.UsageIndex != 0) continue;
        const char* name = position ? "POSITION" : "NORMAL";
        std::size_t& offset = position ? layout.position : layout.normal;
        if (offset != vertex_layout::none)
            return impl::make_error(errc::invalid_argument, where + ": a second " + name + "0", i);
        if ((e.Type != D3DDECLTYPE_FLOAT3 && e.Type != D3DDECLTYPE_FLOAT4) ||
            e.Method != D3DDECLMETHOD_DEFAULT)
            return impl::make_error(errc::unsupported,
                                    where + ": " + name + "0 of type " + std::to_string(e.Type) +
                                        " and method " + std::to_string(e.Method) +
                                        " (FLOAT3 or FLOAT4 with the default method are skinned)",
                                    i);
        offset = e.Offset;
    }
    if (!layout.has_position() && !layout.has_normal())
        return impl::make_error(errc::unsupported, "layout_from_declaration: stream " + std::to_string(stream) +
                                                       " has neither POSITION0 nor NORMAL0");
    layout.stride = end;
    return layout;
}

inline result<vertex_layout> layout_from_declaration(IDirect3DVertexDeclaration9* declaration, DWORD stream) {
    if (!declaration)
        return impl::make_error(errc::invalid_argument, "layout_from_declaration: null declaration");
    D3DVERTEXELEMENT9 elements[MAXD3DDECLLENGTH + 1];
    UINT count = 0;
    if (const HRESULT hr = declaration->GetDeclaration(nullptr, &count); FAILED(hr))
        return impl::call_failed("IDirect3DVertexDeclaration9::GetDeclaration", hr);
    if (count == 0 || count > MAXD3DDECLLENGTH + 1)
        return impl::make_error(errc::invalid_argument, "layout_from_declaration: the declaration has " +
                                                            std::to_string(count) + " elements");
    if (const HRESULT hr = declaration->GetDeclaration(elements, &count); FAILED(hr))
        return impl::call_failed("IDirect3DVertexDeclaration9::GetDeclaration", hr);
    return layout_from_declaration(elements, stream);
}

inline result<vertex_spans<float>> make_vertex_spans(void* data, std::size_t bytes, const vertex_layout& layout,
                                                     std::size_t vertex_count) {
    return impl::make_vertex_spans<float>(static_cast<unsigned char*>(data), bytes, layout, vertex_count);
}

inline result<vertex_spans<const float>> make_vertex_spans(const void* data, std::size_t bytes,
                                                           const vertex_layout& layout,
                                                           std::size_t vertex_count) {
    return impl::make_vertex_spans<const float>(static_cast<const unsigned char*>(data), bytes, layout,
                                                vertex_count);
}

// ---------------------------------------------------------------------------------------------
// Locked buffers
// ---------------------------------------------------------------------------------------------

template <class Buffer>
result<locked_buffer<Buffer>> locked_buffer<Buffer>::lock(Buffer* buffer, UINT offset, UINT size,
                                                          DWORD flags) {
    const std::string kind = impl::buffer_kind(buffer);
    if (!buffer) return impl::make_error(errc::invalid_argument, "lock: null " + kind);
    UINT total = 0;
    if (const HRESULT hr = impl::buffer_size(buffer, total); FAILED(hr))
        return impl::call_failed("GetDesc of a " + kind, hr);
    if (offset >= total || (size != 0 && size > total - offset))
        return impl::make_error(errc::out_of_range,
                                "lock: " + std::to_string(size == 0 ? total - (std::min)(offset, total) : size) +
                                    " bytes from byte " + std::to_string(offset) + " of a " +
                                    std::to_string(total) + "-byte " + kind);
    if (size == 0) size = total - offset;
    void* data = nullptr;
    if (const HRESULT hr = buffer->Lock(offset, size, &data, flags); FAILED(hr) || data == nullptr)
        return impl::call_failed("Lock of a " + kind + " (" + std::to_string(size) + " bytes from byte " +
                                     std::to_string(offset) + ")",
                                 FAILED(hr) ? hr : E_POINTER);
    locked_buffer locked;
    locked.buffer_ = buffer;
    locked.data_ = data;
    locked.size_ = size;
    return locked;
}

template <class Buffer>
status locked_buffer<Buffer>::unlock() {
    if (!data_) return {};
    Buffer* buffer = buffer_;
    buffer_ = nullptr;
    data_ = nullptr;
    size_ = 0;
    if (const HRESULT hr = buffer->Unlock(); FAILED(hr))
        return impl::call_failed(std::string("Unlock of a ") + impl::buffer_kind(buffer), hr);
    return {};
}

} // namespace d3d9
} // namespace keyblend

#ifdef KEYBLEND_D3D9_D3DX_MATH
namespace keyblend {
namespace d3d9 {

inline glm::quat to_glm(const D3DXQUATERNION& q) noexcept { return make_quat(q.w, q.x, q.y, q.z); }
inline D3DXQUATERNION to_d3d(const glm::quat& q) noexcept { return D3DXQUATERNION(q.x, q.y, q.z, q.w); }
inline glm::vec4 to_glm(const D3DXVECTOR4& v) noexcept { return glm::vec4(v.x, v.y, v.z, v.w); }
inline D3DXVECTOR4 to_d3d(const glm::vec4& v) noexcept { return D3DXVECTOR4(v.x, v.y, v.z, v.w); }

} // namespace d3d9
} // namespace keyblend
#endif

#ifdef KEYBLEND_D3D9_D3DX_ANIM
namespace keyblend {
namespace d3d9 {

inline result<frame_hierarchy> import_frames(D3DXFRAME* root, const skeleton_options& options) {
    if (!root) return impl::make_error(errc::invalid_argument, "import_frames: null root frame");
    // Depth first, children before siblings: the order from_frame_tree keeps (skeleton.hpp), so
    // walk index == joint index. Each frame is entered once; a second link to it is a loop or a
    // shared child, which would make the walk endless.
    std::vector<D3DXFRAME*> walk;
    std::unordered_map<const D3DXFRAME*, joint_index> index_of;
    std::vector<D3DXFRAME*> pending{root};
    while (!pending.empty()) {
        D3DXFRAME* f = pending.back();
        pending.pop_back();
        const auto [it, inserted] = index_of.emplace(f, static_cast<joint_index>(walk.size()));
        if (!inserted)
            return impl::make_error(errc::cycle,
                                    "import_frames: frame " + std::to_string(it->second) + " '" +
                                        (f->Name ? f->Name : "") +
                                        "' is linked twice (a loop, or a frame with two parents)",
                                    static_cast<std::size_t>(it->second));
        walk.push_back(f);
        if (f->pFrameSibling) pending.push_back(f->pFrameSibling);
        if (f->pFrameFirstChild) pending.push_back(f->pFrameFirstChild);
    }
    std::vector<frame_desc> desc(walk.size());
    for (std::size_t i = 0; i < walk.size(); ++i) {
        const D3DXFRAME* f = walk[i];
        desc[i].name = f->Name ? f->Name : "";
        desc[i].bind_local = to_glm(f->TransformationMatrix);
        desc[i].first_child = f->pFrameFirstChild ? index_of.at(f->pFrameFirstChild) : -1;
        desc[i].next_sibling = f->pFrameSibling ? index_of.at(f->pFrameSibling) : -1;
    }
    auto built = skeleton::from_frame_tree(desc, 0, options);
    if (!built) return built.error();
    frame_hierarchy out;
    out.skeleton = std::move(*built);
    out.frames.resize(walk.size());
    for (std::size_t j = 0; j < walk.size(); ++j) out.frames[j] = walk[out.skeleton.source_of_joint()[j]];
    return out;
}

template <class Frame>
status write_frame_matrices(const std::vector<glm::mat4>& matrices, const std::vector<D3DXFRAME*>& frames,
                            D3DXMATRIX Frame::*member) {
    static_assert(std::is_base_of_v<D3DXFRAME, Frame>, "Frame must derive from D3DXFRAME");
    if (member == nullptr)
        return impl::make_error(errc::invalid_argument, "write_frame_matrices: null member");
    if (matrices.size() != frames.size())
        return impl::make_error(errc::size_mismatch, "write_frame_matrices: " + std::to_string(matrices.size()) +
                                                         " matrices for " + std::to_string(frames.size()) +
                                                         " frames");
    for (std::size_t j = 0; j < frames.size(); ++j)
        if (!frames[j])
            return impl::make_error(errc::invalid_argument,
                                    "write_frame_matrices: joint " + std::to_string(j) + " has a null frame", j);
    for (std::size_t j = 0; j < frames.size(); ++j)
        static_cast<Frame*>(frames[j])->*member = D3DXMATRIX(to_d3d(matrices[j]));
    return {};
}

} // namespace d3d9
} // namespace keyblend
#endif

#ifdef KEYBLEND_D3D9_D3DX_MESH
namespace keyblend {
namespace d3d9 {

inline result<skin_influences> import_skin(ID3DXSkinInfo* skin, std::size_t vertex_count, const skeleton& s) {
    if (!skin) return impl::make_error(errc::invalid_argument, "import_skin: null skin");
    const DWORD bone_count = skin->GetNumBones();
    if (bone_count > 65536)
        return impl::make_error(errc::unsupported, "import_skin: " + std::to_string(bone_count) +
                                                       " bones (bone indices are 16-bit: at most 65536)");
    skin_influences out;
    out.bones.resize(bone_count);
    struct influence {
        std::uint32_t vertex;
        std::uint16_t bone;
        float weight;
    };
    std::vector<influence> all;
    std::vector<DWORD> vertices;
    std::vector<float> weights;
    for (DWORD b = 0; b < bone_count; ++b) {
        const char* name = skin->GetBoneName(b);
        const std::string where = "import_skin: bone " + std::to_string(b) + " '" + (name ? name : "") + "'";
        const result<std::size_t> joint = s.find(name ? name : "");
        if (!joint) return impl::make_error(errc::not_found, where + " names no joint of the skeleton", b);
        out.bones[b].name = name ? name : "";
        out.bones[b].joint = *joint;
        const D3DXMATRIX* offset = skin->GetBoneOffsetMatrix(b);
        if (!offset) return impl::make_error(errc::device_error, where + ": GetBoneOffsetMatrix returned null", b);
        out.bones[b].offset = to_glm(*offset);
        if (!is_finite(out.bones[b].offset))
            return impl::make_error(errc::non_finite, where + ": the offset matrix is not finite", b);
        const DWORD n = skin->GetNumBoneInfluences(b);
        vertices.resize(n);
        weights.resize(n);
        if (n > 0) {
            if (const HRESULT hr = skin->GetBoneInfluence(b, vertices.data(), weights.data()); FAILED(hr))
                return impl::call_failed(where + ": GetBoneInfluence", hr);
        }
        for (DWORD i = 0; i < n; ++i) {
            if (vertices[i] >= vertex_count)
                return impl::make_error(errc::out_of_range,
                                        where + ": influence " + std::to_string(i) + " on vertex " +
                                            std::to_string(vertices[i]) + " of " + std::to_string(vertex_count),
                                        b);
            if (!is_finite(weights[i]))
                return impl::make_error(errc::non_finite,
                                        where + ": the weight on vertex " + std::to_string(vertices[i]) + " is " +
                                            keyblend::impl::float_to_string(weights[i]),
                                        b);
            if (weights[i] != 0.0f)
                all.push_back({static_cast<std::uint32_t>(vertices[i]), static_cast<std::uint16_t>(b), weights[i]});
        }
    }
    // Per vertex, by decreasing weight; the sort is stable, so ties keep bone order.
    std::stable_sort(all.begin(), all.end(), [](const influence& a, const influence& b) {
        return a.vertex != b.vertex ? a.vertex < b.vertex : a.weight > b.weight;
    });
    std::size_t k = 0;
    for (std::size_t i = 0; i < all.size();) {
        std::size_t j = i;
        while (j < all.size() && all[j].vertex == all[i].vertex) ++j;
        if (j - i > max_influences)
            return impl::make_error(errc::unsupported,
                                    "import_skin: vertex " + std::to_string(all[i].vertex) + " has " +
                                        std::to_string(j - i) + " influences (at most " +
                                        std::to_string(max_influences) + ")",
                                    all[i].vertex);
        k = (std::max)(k, j - i);
        i = j;
    }
    out.influences_per_vertex = k;
    out.bone_indices.assign(vertex_count * k, 0);
    out.weights.assign(vertex_count * k, 0.0f);
    for (std::size_t i = 0, slot = 0; i < all.size(); ++i) {
        slot = (i > 0 && all[i - 1].vertex == all[i].vertex) ? slot + 1 : 0;
        out.bone_indices[all[i].vertex * k + slot] = all[i].bone;
        out.weights[all[i].vertex * k + slot] = all[i].weight;
    }
    return out;
}

} // namespace d3d9
} // namespace keyblend
#endif
