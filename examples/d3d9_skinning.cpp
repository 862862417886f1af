// A Direct3D 9 program that loads a rigged .X model with keyblend, plays one of its animation sets
// and skins it on the CPU straight into a dynamic vertex buffer every frame (keyblend/d3d9.hpp),
// drawn with fixed-function lighting.
//
//     d3d9_skinning.exe [model.x] [--set NAME] [--frames N]
//
// Windows only (or cross-compiled with mingw-w64 and run under wine, as keyblend's tests do: see
// docs/d3d9.md). Not built by the native build. --frames N renders N frames
// and exits (0 when every frame was drawn); without it the window runs until closed.
//
// SPDX-License-Identifier: MIT
#include <keyblend/d3d9.hpp>

#include <keyblend/io/xfile.hpp>
#include <keyblend/player.hpp>
#include <keyblend/skin.hpp>

#include <glm/gtc/matrix_transform.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

bool running = true;

LRESULT CALLBACK window_proc(HWND window, UINT message, WPARAM w, LPARAM l) {
    if (message == WM_DESTROY) {
        running = false;
        PostQuitMessage(0);
        return 0;
    }
    return DefWindowProcA(window, message, w, l);
}

int fail(const std::string& what) {
    std::fprintf(stderr, "d3d9_skinning: %s\n", what.c_str());
    return 1;
}

/// Releases a COM object at the end of a scope.
template <class T>
struct com {
    T* p = nullptr;
    com() = default;
    com(const com&) = delete;
    com& operator=(const com&) = delete;
    ~com() {
        if (p) p->Release();
    }
    T* operator->() const { return p; }
};

} // namespace

int main(int argc, char** argv) {
    std::string path = "tiny.x", set_name;
    long frames = -1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--set" && i + 1 < argc) set_name = argv[++i];
        else if (a == "--frames" && i + 1 < argc) frames = std::strtol(argv[++i], nullptr, 10);
        else path = a;
    }

    // The model: skeleton, the first skinned mesh, the animation sets as clips.
    auto file = keyblend::io::load_xfile(path);
    if (!file) return fail(file.error().message);
    const keyblend::io::xfile_mesh* mesh = nullptr;
    for (const auto& m : file->meshes)
        if (m.is_skinned() && !mesh) mesh = &m;
    if (!mesh) return fail(path + " has no skinned mesh");
    if (mesh->normals.size() != mesh->positions.size()) return fail(path + ": the skinned mesh has no normals");
    std::vector<keyblend::clip> clips;
    for (const auto& set : file->animation_sets) clips.push_back(set.clip);
    auto player = keyblend::player::create(file->skeleton, clips);
    if (!player) return fail(player.error().message);
    if (!clips.empty()) {
        if (auto st = player->set_animation(set_name.empty() ? nullptr : set_name.c_str()); !st)
            return fail(st.error().message);
    }

    // The skinning job: bind-pose vertices in, the vertex buffer out (set per frame, once locked).
    const std::size_t n = mesh->positions.size(), k = mesh->skin.influences_per_vertex;
    const auto& bones = mesh->skin.bones;
    std::vector<glm::mat4> palette(bones.size());
    keyblend::skinning_job<std::uint16_t> job;
    job.influences = k;
    job.joints = keyblend::make_span(mesh->skin.bone_indices, k);
    job.weights = keyblend::make_span(mesh->skin.weights, k);
    job.in_positions = keyblend::make_span(mesh->positions);
    job.in_normals = keyblend::make_span(mesh->normals);

    // A window and a device (hardware vertex processing when there is any, else software).
    WNDCLASSA wc{};
    wc.lpfnWndProc = window_proc;
    wc.hInstance = GetModuleHandleA(nullptr);
    wc.hCursor = LoadCursor(nullptr, IDC_ARROW);
    wc.lpszClassName = "keyblend_d3d9_skinning";
    RegisterClassA(&wc);
    HWND window = CreateWindowA(wc.lpszClassName, "keyblend: D3D9 CPU skinning", WS_OVERLAPPEDWINDOW | WS_VISIBLE,
                                CW_USEDEFAULT, CW_USEDEFAULT, 640, 480, nullptr, nullptr, wc.hInstance, nullptr);
    if (!window) return fail("CreateWindow failed");
    com<IDirect3D9> d3d;
    d3d.p = Direct3DCreate9(D3D_SDK_VERSION);
    if (!d3d.p) return fail("Direct3DCreate9 failed");
    D3DPRESENT_PARAMETERS pp{};
    pp.Windowed = TRUE;
    pp.SwapEffect = D3DSWAPEFFECT_DISCARD;
    pp.BackBufferFormat = D3DFMT_UNKNOWN;
    pp.EnableAutoDepthStencil = TRUE;
    pp.AutoDepthStencilFormat = D3DFMT_D24S8;
    pp.hDeviceWindow = window;
    com<IDirect3DDevice9> device;
    if (FAILED(d3d->CreateDevice(D3DADAPTER_DEFAULT, D3DDEVTYPE_HAL, window, D3DCREATE_HARDWARE_VERTEXPROCESSING, &pp,
                                 &device.p)) &&
        FAILED(d3d->CreateDevice(D3DADAPTER_DEFAULT, D3DDEVTYPE_HAL, window, D3DCREATE_SOFTWARE_VERTEXPROCESSING, &pp,
                                 &device.p)))
        return fail("CreateDevice failed");

    // Buffers: a dynamic vertex buffer that keyblend skins into, a static index buffer.
    const DWORD fvf = D3DFVF_XYZ | D3DFVF_NORMAL;
    const keyblend::d3d9::vertex_layout layout = keyblend::d3d9::layout_from_fvf(fvf).value();
    com<IDirect3DVertexBuffer9> vertices;
    com<IDirect3DIndexBuffer9> indices;
    if (FAILED(device->CreateVertexBuffer(UINT(n * layout.stride), D3DUSAGE_DYNAMIC | D3DUSAGE_WRITEONLY, fvf,
                                          D3DPOOL_DEFAULT, &vertices.p, nullptr)) ||
        FAILED(device->CreateIndexBuffer(UINT(mesh->indices.size() * 4), D3DUSAGE_WRITEONLY, D3DFMT_INDEX32,
                                         D3DPOOL_MANAGED, &indices.p, nullptr)))
        return fail("creating the buffers failed");
    {
        auto lock = keyblend::d3d9::locked_index_buffer::lock(indices.p);
        if (!lock) return fail(lock.error().message);
        std::memcpy(lock->data(), mesh->indices.data(), mesh->indices.size() * 4);
    }

    // Fixed-function state: one directional light, normals renormalised (skinned normals are not).
    device->SetRenderState(D3DRS_CULLMODE, D3DCULL_NONE);
    device->SetRenderState(D3DRS_NORMALIZENORMALS, TRUE);
    device->SetRenderState(D3DRS_LIGHTING, TRUE);
    D3DLIGHT9 light{};
    light.Type = D3DLIGHT_DIRECTIONAL;
    light.Diffuse = {1.0f, 1.0f, 1.0f, 1.0f};
    light.Ambient = {0.25f, 0.25f, 0.25f, 1.0f};
    light.Direction = keyblend::d3d9::to_d3d(glm::normalize(glm::vec3(-0.4f, -0.6f, -1.0f)));
    device->SetLight(0, &light);
    device->LightEnable(0, TRUE);
    D3DMATERIAL9 material{};
    material.Diffuse = {0.8f, 0.7f, 0.6f, 1.0f};
    material.Ambient = material.Diffuse;
    device->SetMaterial(&material);

    // The camera frames the bind-pose mesh. GLM builds the matrices (column vectors, clip depth
    // 0..1 as D3D wants); to_d3d hands them over without a transpose.
    glm::vec3 lo(std::numeric_limits<float>::max()), hi(-std::numeric_limits<float>::max());
    for (const glm::vec3& p : mesh->positions) {
        lo = glm::min(lo, p);
        hi = glm::max(hi, p);
    }
    const glm::vec3 center = 0.5f * (lo + hi);
    const float radius = 0.5f * glm::length(hi - lo);
    const glm::mat4 view = glm::lookAtRH(center + glm::vec3(0.0f, 0.0f, 2.5f * radius), center, glm::vec3(0, 1, 0));
    const glm::mat4 projection = glm::perspectiveRH_ZO(glm::radians(45.0f), 640.0f / 480.0f, 0.1f * radius,
                                                       10.0f * radius);
    const D3DMATRIX world_d3d = keyblend::d3d9::to_d3d(glm::mat4(1.0f)), view_d3d = keyblend::d3d9::to_d3d(view),
                    projection_d3d = keyblend::d3d9::to_d3d(projection);
    device->SetTransform(D3DTS_WORLD, &world_d3d);
    device->SetTransform(D3DTS_VIEW, &view_d3d);
    device->SetTransform(D3DTS_PROJECTION, &projection_d3d);

    const auto start = std::chrono::steady_clock::now();
    long drawn = 0;
    while (running && (frames < 0 || drawn < frames)) {
        MSG msg;
        while (PeekMessageA(&msg, nullptr, 0, 0, PM_REMOVE)) {
            TranslateMessage(&msg);
            DispatchMessageA(&msg);
        }
        if (!running) break;

        // Animate: the player samples the set at this time (ticks) and walks the hierarchy.
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double ticks = clips.empty() ? 0.0 : seconds * clips[player->current()].ticks_per_second;
        if (auto st = player->update_animation(ticks); !st) return fail(st.error().message);
        keyblend::palette_job matrices;
        matrices.model = player->model();
        matrices.bones = bones;
        matrices.output = palette;
        if (auto st = matrices.run(); !st) return fail(st.error().message);
        job.palette = palette;

        // Skin straight into the vertex buffer.
        {
            auto lock = keyblend::d3d9::locked_vertex_buffer::lock(vertices.p, 0, 0, D3DLOCK_DISCARD);
            if (!lock) return fail(lock.error().message);
            auto out = keyblend::d3d9::make_vertex_spans(lock->data(), lock->size(), layout, n);
            if (!out) return fail(out.error().message);
            job.out_positions = out->positions;
            job.out_normals = out->normals;
            if (drawn == 0) {
                if (auto st = job.validate(); !st) return fail(st.error().message); // once: O(vertices)
            }
            if (auto st = job.run(); !st) return fail(st.error().message);
            if (auto st = lock->unlock(); !st) return fail(st.error().message);
        }

        device->Clear(0, nullptr, D3DCLEAR_TARGET | D3DCLEAR_ZBUFFER, D3DCOLOR_XRGB(40, 44, 52), 1.0f, 0);
        if (FAILED(device->BeginScene())) return fail("BeginScene failed");
        device->SetFVF(fvf);
        device->SetStreamSource(0, vertices.p, 0, UINT(layout.stride));
        device->SetIndices(indices.p);
        const HRESULT hr = device->DrawIndexedPrimitive(D3DPT_TRIANGLELIST, 0, 0, UINT(n), 0,
                                                        UINT(mesh->indices.size() / 3));
        device->EndScene();
        if (FAILED(hr)) return fail("DrawIndexedPrimitive failed");
        device->Present(nullptr, nullptr, nullptr, nullptr);
        ++drawn;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("d3d9_skinning: %s: %zu vertices, %zu bones, set '%s': %ld frames in %.2f s\n", path.c_str(), n,
                bones.size(), clips.empty() ? "" : clips[player->current()].name.c_str(), drawn, seconds);
    DestroyWindow(window);
    return 0;
}
