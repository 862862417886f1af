// Helpers for the Direct3D 9 tests (cross-compiled with mingw-w64, run under wine): a COM pointer,
// a HAL device with software vertex processing on a hidden window, shader assembly, read-back.
#pragma once

#include <keyblend/d3d9.hpp>

#include <d3dx9.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace kbtest {

/// Owns one COM reference.
template <class T>
class com {
public:
    com() = default;
    com(const com&) = delete;
    com& operator=(const com&) = delete;
    ~com() { reset(); }
    void reset() {
        if (p_) p_->Release();
        p_ = nullptr;
    }
    T** out() {
        reset();
        return &p_;
    }
    T* get() const { return p_; }
    T* operator->() const { return p_; }
    explicit operator bool() const { return p_ != nullptr; }

private:
    T* p_ = nullptr;
};

/// A HAL device with software vertex processing, on a window of its own (under Xvfb in the tests:
/// wine renders through Mesa's llvmpipe), the back buffer `size` x `size`.
struct device {
    HWND window = nullptr;
    com<IDirect3D9> d3d;
    com<IDirect3DDevice9> dev;

    explicit device(UINT size = 256) {
        WNDCLASSA wc{};
        wc.lpfnWndProc = DefWindowProcA;
        wc.hInstance = GetModuleHandleA(nullptr);
        wc.lpszClassName = "keyblend_d3d9_test";
        RegisterClassA(&wc); // fails harmlessly when already registered
        window = CreateWindowA(wc.lpszClassName, "keyblend d3d9 test", WS_OVERLAPPEDWINDOW, 0, 0, int(size),
                               int(size), nullptr, nullptr, wc.hInstance, nullptr);
        REQUIRE(window != nullptr);
        *d3d.out() = Direct3DCreate9(D3D_SDK_VERSION);
        REQUIRE(d3d);
        D3DPRESENT_PARAMETERS pp{};
        pp.Windowed = TRUE;
        pp.SwapEffect = D3DSWAPEFFECT_DISCARD;
        pp.BackBufferFormat = D3DFMT_X8R8G8B8;
        pp.BackBufferWidth = size;
        pp.BackBufferHeight = size;
        pp.hDeviceWindow = window;
        const HRESULT hr = d3d->CreateDevice(D3DADAPTER_DEFAULT, D3DDEVTYPE_HAL, window,
                                             D3DCREATE_SOFTWARE_VERTEXPROCESSING, &pp, dev.out());
        INFO("CreateDevice HRESULT " << std::hex << static_cast<unsigned long>(hr));
        REQUIRE(SUCCEEDED(hr));
    }
    ~device() {
        dev.reset();
        d3d.reset();
        if (window) DestroyWindow(window);
    }
    IDirect3DDevice9* operator->() const { return dev.get(); }
    IDirect3DDevice9* get() const { return dev.get(); }
};

/// Assembles vertex-shader assembly with D3DXAssembleShader (HLSL's D3DXCompileShader produces
/// broken shaders under wine 8; assembly works) and creates the shader.
inline void make_vertex_shader(IDirect3DDevice9* dev, const std::string& source, com<IDirect3DVertexShader9>& out) {
    com<ID3DXBuffer> code, errors;
    const HRESULT hr = D3DXAssembleShader(source.c_str(), UINT(source.size()), nullptr, nullptr, 0, code.out(),
                                          errors.out());
    INFO("D3DXAssembleShader: " << (errors ? static_cast<const char*>(errors->GetBufferPointer()) : "")
                                << "\n" << source);
    REQUIRE(SUCCEEDED(hr));
    REQUIRE(SUCCEEDED(dev->CreateVertexShader(static_cast<const DWORD*>(code->GetBufferPointer()), out.out())));
}

/// An X8R8G8B8 image read back from a render target: 0xXXRRGGBB per pixel, rows top down.
struct pixels {
    UINT width = 0, height = 0;
    std::vector<std::uint32_t> argb;

    /// Writes a binary PPM (for looking at a failure; nothing is written unless asked).
    bool write_ppm(const std::string& path) const {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        if (!f) return false;
        std::fprintf(f, "P6\n%u %u\n255\n", width, height);
        for (std::uint32_t p : argb) {
            const unsigned char rgb[3] = {static_cast<unsigned char>(p >> 16), static_cast<unsigned char>(p >> 8),
                                          static_cast<unsigned char>(p)};
            std::fwrite(rgb, 1, 3, f);
        }
        return std::fclose(f) == 0;
    }
};

/// GetRenderTargetData into a SYSTEMMEM surface, then LockRect (GetFrontBufferData returns black
/// under wine).
inline pixels read_back(IDirect3DDevice9* dev, IDirect3DSurface9* target) {
    D3DSURFACE_DESC desc{};
    REQUIRE(SUCCEEDED(target->GetDesc(&desc)));
    REQUIRE(desc.Format == D3DFMT_X8R8G8B8);
    com<IDirect3DSurface9> copy;
    REQUIRE(SUCCEEDED(dev->CreateOffscreenPlainSurface(desc.Width, desc.Height, desc.Format, D3DPOOL_SYSTEMMEM,
                                                       copy.out(), nullptr)));
    REQUIRE(SUCCEEDED(dev->GetRenderTargetData(target, copy.get())));
    D3DLOCKED_RECT rect{};
    REQUIRE(SUCCEEDED(copy->LockRect(&rect, nullptr, D3DLOCK_READONLY)));
    pixels out;
    out.width = desc.Width;
    out.height = desc.Height;
    out.argb.resize(std::size_t(desc.Width) * desc.Height);
    for (UINT y = 0; y < desc.Height; ++y) {
        const auto* row = reinterpret_cast<const std::uint32_t*>(static_cast<const unsigned char*>(rect.pBits) +
                                                                 std::size_t(y) * rect.Pitch);
        for (UINT x = 0; x < desc.Width; ++x) out.argb[std::size_t(y) * desc.Width + x] = row[x] & 0xFFFFFFu;
    }
    copy->UnlockRect();
    return out;
}

/// How two images differ: pixels with any channel different, and the largest channel difference.
struct image_difference {
    std::size_t differing = 0;
    int max_channel = 0;
};

inline image_difference compare(const pixels& a, const pixels& b) {
    image_difference d;
    REQUIRE(a.argb.size() == b.argb.size());
    for (std::size_t i = 0; i < a.argb.size(); ++i) {
        int worst = 0;
        for (int shift = 0; shift < 24; shift += 8) {
            const int ca = int((a.argb[i] >> shift) & 0xFF), cb = int((b.argb[i] >> shift) & 0xFF);
            worst = (std::max)(worst, ca > cb ? ca - cb : cb - ca);
        }
        if (worst > 0) ++d.differing;
        d.max_channel = (std::max)(d.max_channel, worst);
    }
    return d;
}

/// Pixels that are not the background (black).
inline std::size_t covered(const pixels& p) {
    std::size_t n = 0;
    for (std::uint32_t c : p.argb) n += c != 0;
    return n;
}

} // namespace kbtest
