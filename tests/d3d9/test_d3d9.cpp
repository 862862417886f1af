// Tests of keyblend/d3d9.hpp on a real Direct3D 9 device: cross-compiled with mingw-w64 and run under
// wine (HAL device, software vertex processing, llvmpipe under Xvfb). The header comes first and
// alone (it must compile without D3DX); test_d3d9x.cpp covers the D3DX parts.
#include <keyblend/d3d9.hpp>

#include "../helpers.hpp"
#include "../job_helpers.hpp"
#include "device.hpp"

#include <keyblend/clip.hpp>
#include <keyblend/io/xfile.hpp>
#include <keyblend/pose.hpp>
#include <keyblend/skin.hpp>

#include <glm/gtc/matrix_transform.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace d3d9 = keyblend::d3d9;
using keyblend::errc;

namespace {

glm::mat4 random_matrix(kbtest::rng& r) {
    glm::mat4 m(1.0f);
    for (int c = 0; c < 4; ++c)
        for (int row = 0; row < 4; ++row) m[c][row] = r.uniform(-2.0f, 2.0f);
    return m;
}

/// Largest |a - b| relative to max(1, |b|): the error measure for matrices of any magnitude.
float relative_error(const glm::mat4& a, const glm::mat4& b) {
    float e = 0.0f;
    for (int c = 0; c < 4; ++c)
        for (int row = 0; row < 4; ++row)
            e = (std::max)(e, std::fabs(a[c][row] - b[c][row]) / (std::max)(1.0f, std::fabs(b[c][row])));
    return e;
}

constexpr float sentinel = -777.0f;

void fill_constants(IDirect3DDevice9* dev, float value) {
    std::vector<float> v(4 * 256, value);
    REQUIRE(SUCCEEDED(dev->SetVertexShaderConstantF(0, v.data(), 256)));
}

std::vector<float> read_constants(IDirect3DDevice9* dev) {
    std::vector<float> v(4 * 256);
    REQUIRE(SUCCEEDED(dev->GetVertexShaderConstantF(0, v.data(), 256)));
    return v;
}

bool all_equal(const std::vector<float>& v, float value) {
    for (float x : v)
        if (!(x == value)) return false;
    return true;
}

} // namespace

TEST_CASE("d3d9: matrices and vectors convert exactly and agree with D3DX math") {
    kbtest::rng r(91);
    float multiply = 0.0f, translate = 0.0f, rotate = 0.0f, scale = 0.0f, coord = 0.0f, normal = 0.0f,
          inverse = 0.0f;
    for (int i = 0; i < 1000; ++i) {
        const glm::mat4 a = random_matrix(r), b = random_matrix(r);
        // Exact, both ways, and the same memory.
        const D3DMATRIX da = d3d9::to_d3d(a);
        REQUIRE(std::memcmp(&da, &a, sizeof da) == 0);
        REQUIRE(kbtest::bit_equal(d3d9::to_glm(da), a));
        const glm::vec3 v = r.vec3(-3, 3);
        const D3DVECTOR dv = d3d9::to_d3d(v);
        REQUIRE((dv.x == v.x && dv.y == v.y && dv.z == v.z));
        REQUIRE(kbtest::bit_equal(d3d9::to_glm(dv), v));

        // D3DXMatrixMultiply(A, B): A first, then B: B * A in GLM.
        D3DXMATRIX product;
        const D3DXMATRIX xa(d3d9::to_d3d(a)), xb(d3d9::to_d3d(b));
        D3DXMatrixMultiply(&product, &xa, &xb);
        multiply = (std::max)(multiply, relative_error(d3d9::to_glm(product), b * a));

        // Building blocks: translation, rotation about an axis, scaling.
        D3DXMATRIX m;
        D3DXMatrixTranslation(&m, v.x, v.y, v.z);
        translate = (std::max)(translate, relative_error(d3d9::to_glm(m), glm::translate(glm::mat4(1.0f), v)));
        const glm::vec3 axis = glm::normalize(r.vec3(-1, 1) + glm::vec3(0.0f, 0.0f, 0.01f));
        const float angle = r.uniform(-3.1f, 3.1f);
        const D3DXVECTOR3 xaxis(d3d9::to_d3d(axis));
        D3DXMatrixRotationAxis(&m, &xaxis, angle);
        rotate = (std::max)(rotate, relative_error(d3d9::to_glm(m), glm::rotate(glm::mat4(1.0f), angle, axis)));
        const glm::vec3 s = r.vec3(0.5f, 1.5f);
        D3DXMatrixScaling(&m, s.x, s.y, s.z);
        scale = (std::max)(scale, relative_error(d3d9::to_glm(m), glm::scale(glm::mat4(1.0f), s)));

        // Transforming points and directions by an affine TRS matrix, and inverting it.
        const glm::mat4 trs = keyblend::to_matrix(kbtest::random_transform(r));
        const D3DXMATRIX xt(d3d9::to_d3d(trs));
        const D3DXVECTOR3 xv(d3d9::to_d3d(v));
        D3DXVECTOR3 out;
        D3DXVec3TransformCoord(&out, &xv, &xt);
        coord = (std::max)(coord, kbtest::max_abs_diff(d3d9::to_glm(out), glm::vec3(trs * glm::vec4(v, 1.0f))) /
                                      (std::max)(1.0f, glm::length(v)));
        D3DXVec3TransformNormal(&out, &xv, &xt);
        normal = (std::max)(normal, kbtest::max_abs_diff(d3d9::to_glm(out), glm::mat3(trs) * v) /
                                        (std::max)(1.0f, glm::length(v)));
        REQUIRE(D3DXMatrixInverse(&m, nullptr, &xt) != nullptr);
        inverse = (std::max)(inverse, relative_error(d3d9::to_glm(m), glm::inverse(trs)));
    }
    MESSAGE("largest relative difference over 1000 cases: D3DXMatrixMultiply(A, B) vs B * A "
            << multiply << ", Translation " << translate << ", RotationAxis vs glm::rotate " << rotate
            << ", Scaling " << scale << ", Vec3TransformCoord " << coord << ", Vec3TransformNormal "
            << normal << ", MatrixInverse vs glm::inverse " << inverse);
    CHECK(multiply <= 1e-6f);
    CHECK(translate == 0.0f);
    CHECK(rotate <= 1e-6f);
    CHECK(scale == 0.0f);
    CHECK(coord <= 1e-6f);
    CHECK(normal <= 1e-6f);
    CHECK(inverse <= 1e-6f);
}

TEST_CASE("d3d9: set_palette writes 3 rows per bone, read back with GetVertexShaderConstantF") {
    kbtest::device dev;
    kbtest::rng r(7);
    std::vector<glm::mat4> palette(40);
    for (glm::mat4& m : palette) m = random_matrix(r); // the bottom row too: it must not be uploaded

    SUBCASE("the layout, bit for bit, and nothing outside it") {
        fill_constants(dev.get(), sentinel);
        const UINT first = 9;
        REQUIRE(d3d9::set_palette(dev.get(), first, palette));
        const std::vector<float> c = read_constants(dev.get());
        for (UINT reg = 0; reg < 256; ++reg) {
            const float* v = &c[4 * reg];
            if (reg < first || reg >= first + 3 * palette.size()) {
                CHECK((v[0] == sentinel && v[1] == sentinel && v[2] == sentinel && v[3] == sentinel));
                continue;
            }
            const glm::mat4& m = palette[(reg - first) / 3];
            const int row = int(reg - first) % 3;
            for (int col = 0; col < 4; ++col) CHECK(kbtest::bit_equal(v[col], m[col][row]));
        }
        // palette_to_registers is the same layout.
        std::vector<float> regs(12 * palette.size());
        d3d9::palette_to_registers(palette.data(), palette.size(), regs.data());
        CHECK(std::memcmp(regs.data(), &c[4 * first], regs.size() * sizeof(float)) == 0);
    }
    SUBCASE("the budget: every register up to the limit") {
        CHECK(d3d9::registers_per_bone == 3);
        CHECK(d3d9::palette_capacity(9) == 82);
        CHECK(d3d9::palette_capacity(0) == 85);
        CHECK(d3d9::palette_capacity(256) == 0);
        CHECK(d3d9::palette_capacity(300) == 0);
        const auto count = d3d9::vertex_shader_constant_count(dev.get());
        REQUIRE(count);
        MESSAGE("MaxVertexShaderConst = " << *count);
        CHECK(*count >= d3d9::vs_2_0_constant_registers);
        std::vector<glm::mat4> full(d3d9::palette_capacity(10, *count));
        for (glm::mat4& m : full) m = random_matrix(r);
        REQUIRE(d3d9::set_palette(dev.get(), 10, full, *count));
        std::vector<float> last(4);
        const UINT last_register = 10 + 3 * UINT(full.size()) - 1;
        REQUIRE(SUCCEEDED(dev->GetVertexShaderConstantF(last_register, last.data(), 1)));
        for (int col = 0; col < 4; ++col) CHECK(last[col] == full.back()[col][2]);
    }
    SUBCASE("a device that refuses the upload") {
        std::vector<glm::mat4> big(200);
        for (glm::mat4& m : big) m = random_matrix(r);
        // A budget larger than the device's: the arguments pass, SetVertexShaderConstantF fails
        // (the first call: 128 matrices, 384 registers, past the device's 256).
        const auto st = d3d9::set_palette(dev.get(), 0, big, 8192);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::device_error);
        CHECK(st.error().message.find("D3DERR_INVALIDCALL") != std::string::npos);
        CHECK(st.error().message.find("SetVertexShaderConstantF(c0, 384 registers)") != std::string::npos);
        MESSAGE(st.error().message);
    }
}

TEST_CASE("d3d9: bad inputs are reported and change nothing") {
    kbtest::device dev;
    kbtest::rng r(8);
    std::vector<glm::mat4> palette(83);
    for (glm::mat4& m : palette) m = random_matrix(r);
    fill_constants(dev.get(), sentinel);

    SUBCASE("palettes") {
        auto st = d3d9::set_palette(nullptr, 0, palette);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::invalid_argument);
        CHECK(st.error().message.find("null device") != std::string::npos);

        st = d3d9::set_palette(dev.get(), 9, palette); // 83 bones from c9: 82 fit
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::out_of_range);
        CHECK(st.error().index == 82);
        MESSAGE(st.error().message);
        st = d3d9::set_palette(dev.get(), 256, palette.data(), 1);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::out_of_range);
        CHECK(st.error().index == 0);

        std::vector<glm::mat4> nan = {palette.begin(), palette.begin() + 10};
        nan[5][3][1] = std::numeric_limits<float>::quiet_NaN(); // translation y: uploaded
        st = d3d9::set_palette(dev.get(), 0, nan);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::non_finite);
        CHECK(st.error().index == 5);
        CHECK(st.error().message.find("bone 5") != std::string::npos);
        nan[5][3][1] = 0.0f;
        nan[7][0][2] = std::numeric_limits<float>::infinity();
        st = d3d9::validate_palette(0, nan.data(), nan.size());
        REQUIRE_FALSE(st);
        CHECK(st.error().index == 7);
        nan[7][0][2] = 0.0f;
        nan[2][1][3] = std::numeric_limits<float>::quiet_NaN(); // bottom row: never uploaded
        CHECK(d3d9::validate_palette(0, nan.data(), nan.size()));

        st = d3d9::set_palette(dev.get(), 0, nullptr, 2);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::invalid_argument);
        CHECK(d3d9::set_palette(dev.get(), 0, nullptr, 0)); // nothing to do

        CHECK(all_equal(read_constants(dev.get()), sentinel)); // nothing reached the device
        CHECK_FALSE(d3d9::vertex_shader_constant_count(nullptr));
    }
    SUBCASE("layouts and spans") {
        auto l = d3d9::layout_from_fvf(D3DFVF_XYZRHW | D3DFVF_DIFFUSE);
        REQUIRE_FALSE(l);
        CHECK(l.error().code == errc::unsupported);
        CHECK(d3d9::layout_from_fvf(D3DFVF_NORMAL).error().code == errc::unsupported);
        CHECK(d3d9::layout_from_fvf(D3DFVF_XYZ | D3DFVF_RESERVED0).error().code == errc::invalid_argument);
        CHECK(d3d9::layout_from_fvf(D3DFVF_XYZ | 0x0900).error().code == errc::invalid_argument); // 9 sets
        CHECK(d3d9::layout_from_fvf(0x4000 | D3DFVF_XYZB2).error().code == errc::invalid_argument);

        CHECK(d3d9::layout_from_declaration(static_cast<const D3DVERTEXELEMENT9*>(nullptr)).error().code ==
              errc::invalid_argument);
        const D3DVERTEXELEMENT9 packed[] = {
            {0, 0, D3DDECLTYPE_SHORT4, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_POSITION, 0}, D3DDECL_END()};
        l = d3d9::layout_from_declaration(packed);
        REQUIRE_FALSE(l);
        CHECK(l.error().code == errc::unsupported);
        CHECK(l.error().index == 0);
        const D3DVERTEXELEMENT9 twice[] = {
            {0, 0, D3DDECLTYPE_FLOAT3, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_POSITION, 0},
            {0, 12, D3DDECLTYPE_FLOAT3, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_POSITION, 0}, D3DDECL_END()};
        CHECK(d3d9::layout_from_declaration(twice).error().index == 1);
        const D3DVERTEXELEMENT9 unknown[] = {{0, 0, 40, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_POSITION, 0},
                                             D3DDECL_END()};
        CHECK(d3d9::layout_from_declaration(unknown).error().code == errc::invalid_argument);
        std::vector<D3DVERTEXELEMENT9> endless(MAXD3DDECLLENGTH + 1,
                                               {0, 0, D3DDECLTYPE_FLOAT1, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_TEXCOORD, 0});
        CHECK(d3d9::layout_from_declaration(endless.data()).error().code == errc::invalid_argument);
        const D3DVERTEXELEMENT9 other_stream[] = {
            {1, 0, D3DDECLTYPE_FLOAT3, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_POSITION, 0}, D3DDECL_END()};
        CHECK(d3d9::layout_from_declaration(other_stream, 0).error().code == errc::unsupported);
        CHECK(d3d9::layout_from_declaration(other_stream, 1));

        const d3d9::vertex_layout xyz_normal = d3d9::layout_from_fvf(D3DFVF_XYZ | D3DFVF_NORMAL).value();
        alignas(16) float memory[6 * 4] = {};
        auto s = d3d9::make_vertex_spans(memory, sizeof memory, xyz_normal, 5);
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::out_of_range);
        CHECK(d3d9::make_vertex_spans(memory, sizeof memory, xyz_normal, 4));
        CHECK(d3d9::make_vertex_spans(static_cast<void*>(nullptr), 0, xyz_normal, 1).error().code ==
              errc::invalid_argument);
        CHECK(d3d9::make_vertex_spans(static_cast<void*>(nullptr), 0, xyz_normal, 0));
        d3d9::vertex_layout bad = xyz_normal;
        bad.stride = 22;
        CHECK(d3d9::make_vertex_spans(memory, sizeof memory, bad, 1).error().code == errc::invalid_argument);
        bad.stride = 20; // the normal at 12 does not fit
        CHECK(d3d9::make_vertex_spans(memory, sizeof memory, bad, 1).error().code == errc::invalid_argument);
        CHECK(d3d9::make_vertex_spans(reinterpret_cast<unsigned char*>(memory) + 2, 40, xyz_normal, 1)
                  .error()
                  .code == errc::invalid_argument);
        CHECK(d3d9::make_vertex_spans(memory, sizeof memory, d3d9::vertex_layout{24}, 1).error().code ==
              errc::invalid_argument);
    }
    SUBCASE("locks") {
        CHECK(d3d9::locked_vertex_buffer::lock(nullptr).error().code == errc::invalid_argument);
        kbtest::com<IDirect3DVertexBuffer9> vb;
        REQUIRE(SUCCEEDED(dev->CreateVertexBuffer(240, 0, D3DFVF_XYZ | D3DFVF_NORMAL, D3DPOOL_SYSTEMMEM, vb.out(),
                                                  nullptr)));
        auto l = d3d9::locked_vertex_buffer::lock(vb.get(), 240);
        REQUIRE_FALSE(l);
        CHECK(l.error().code == errc::out_of_range);
        CHECK(d3d9::locked_vertex_buffer::lock(vb.get(), 200, 48).error().code == errc::out_of_range);
        l = d3d9::locked_vertex_buffer::lock(vb.get(), 200, 40);
        REQUIRE(l);
        CHECK(l->size() == 40);
        CHECK(l->unlock());
        CHECK_FALSE(l->locked());
        CHECK(l->unlock()); // an empty lock unlocks trivially
        // Moving hands the lock over; the moved-to object unlocks it once.
        l = d3d9::locked_vertex_buffer::lock(vb.get());
        REQUIRE(l);
        CHECK(l->size() == 240);
        d3d9::locked_vertex_buffer moved = std::move(*l);
        CHECK_FALSE(l->locked());
        CHECK(moved.locked());
        CHECK(moved.buffer() == vb.get());
        CHECK(moved.unlock());
        REQUIRE(d3d9::locked_vertex_buffer::lock(vb.get(), 0, 24));
    }
}

TEST_CASE("d3d9: vertex layouts agree with D3DX's sizes and declarators") {
    kbtest::device dev;
    const DWORD formats[] = {
        D3DFVF_XYZ,
        D3DFVF_XYZ | D3DFVF_NORMAL,
        D3DFVF_XYZ | D3DFVF_NORMAL | D3DFVF_TEX1,
        D3DFVF_XYZB4 | D3DFVF_LASTBETA_UBYTE4 | D3DFVF_NORMAL | D3DFVF_TEX1,
        D3DFVF_XYZB2 | D3DFVF_NORMAL | D3DFVF_DIFFUSE | D3DFVF_TEX2 | D3DFVF_TEXCOORDSIZE3(1),
        D3DFVF_XYZB5 | D3DFVF_LASTBETA_UBYTE4 | D3DFVF_NORMAL | D3DFVF_SPECULAR | D3DFVF_TEX3 |
            D3DFVF_TEXCOORDSIZE1(0) | D3DFVF_TEXCOORDSIZE4(2),
        D3DFVF_XYZB1 | D3DFVF_DIFFUSE | D3DFVF_TEX8,
        D3DFVF_XYZ | D3DFVF_PSIZE | D3DFVF_NORMAL | D3DFVF_DIFFUSE,
        D3DFVF_XYZW | D3DFVF_NORMAL,
    };
    for (const DWORD fvf : formats) {
        CAPTURE(fvf);
        const auto layout = d3d9::layout_from_fvf(fvf);
        REQUIRE(layout);
        CHECK(layout->stride == D3DXGetFVFVertexSize(fvf));
        CHECK(layout->position == 0);
        CHECK(layout->has_normal() == ((fvf & D3DFVF_NORMAL) != 0));

        D3DVERTEXELEMENT9 declaration[MAX_FVF_DECL_SIZE];
        if (FAILED(D3DXDeclaratorFromFVF(fvf, declaration))) {
            MESSAGE("D3DXDeclaratorFromFVF refuses FVF " << fvf << " (compared by size only)");
            continue;
        }
        const auto from_declaration = d3d9::layout_from_declaration(declaration);
        REQUIRE(from_declaration);
        CHECK(from_declaration->stride == layout->stride);
        CHECK(from_declaration->stride == D3DXGetDeclVertexSize(declaration, 0));
        CHECK(from_declaration->position == layout->position);
        CHECK(from_declaration->normal == layout->normal);

        kbtest::com<IDirect3DVertexDeclaration9> object;
        REQUIRE(SUCCEEDED(dev->CreateVertexDeclaration(declaration, object.out())));
        const auto from_object = d3d9::layout_from_declaration(object.get());
        REQUIRE(from_object);
        CHECK(from_object->stride == layout->stride);
        CHECK(from_object->normal == layout->normal);
    }
    // Two streams: positions in one, normals in the other.
    const D3DVERTEXELEMENT9 split[] = {
        {0, 0, D3DDECLTYPE_FLOAT3, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_POSITION, 0},
        {1, 0, D3DDECLTYPE_FLOAT2, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_TEXCOORD, 0},
        {1, 8, D3DDECLTYPE_FLOAT4, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_NORMAL, 0},
        {1, 24, D3DDECLTYPE_D3DCOLOR, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_COLOR, 0},
        D3DDECL_END()};
    const auto s0 = d3d9::layout_from_declaration(split, 0), s1 = d3d9::layout_from_declaration(split, 1);
    REQUIRE((s0 && s1));
    CHECK((s0->stride == 12 && s0->position == 0 && !s0->has_normal()));
    CHECK((s1->stride == 28 && !s1->has_position() && s1->normal == 8));
    CHECK(s1->stride == D3DXGetDeclVertexSize(split, 1));
}

TEST_CASE("d3d9: skinning straight into a locked vertex buffer") {
    kbtest::device dev;
    kbtest::rng r(5);
    const std::size_t n = 300, k = 2;
    std::vector<glm::vec3> positions(n), normals(n), ref_positions(n), ref_normals(n);
    std::vector<std::uint16_t> joints(n * k);
    std::vector<float> weights(n * k);
    for (std::size_t v = 0; v < n; ++v) {
        positions[v] = r.vec3(-1, 1);
        normals[v] = glm::normalize(r.vec3(-1, 1) + glm::vec3(0.0f, 0.0f, 0.01f));
        const float w = r.uniform(0.0f, 1.0f);
        weights[v * k] = w;
        weights[v * k + 1] = 1.0f - w;
        joints[v * k] = std::uint16_t(r.integer(0, 5));
        joints[v * k + 1] = std::uint16_t(r.integer(0, 5));
    }
    std::vector<glm::mat4> palette(6);
    for (glm::mat4& m : palette) m = keyblend::to_matrix(kbtest::random_transform(r));

    keyblend::skinning_job<std::uint16_t> job;
    job.influences = k;
    job.joints = keyblend::make_span(joints, k);
    job.weights = keyblend::make_span(weights, k);
    job.in_positions = keyblend::make_span(positions);
    job.in_normals = keyblend::make_span(normals);
    job.palette = {palette.data(), palette.size()};
    job.out_positions = keyblend::make_span(ref_positions);
    job.out_normals = keyblend::make_span(ref_normals);
    REQUIRE(job.validate());
    REQUIRE(job.run());

    // An interleaved buffer with texture coordinates the skinning must not touch.
    const DWORD fvf = D3DFVF_XYZ | D3DFVF_NORMAL | D3DFVF_TEX1;
    const d3d9::vertex_layout layout = d3d9::layout_from_fvf(fvf).value();
    REQUIRE(layout.stride == 32);
    kbtest::com<IDirect3DVertexBuffer9> vb;
    REQUIRE(SUCCEEDED(dev->CreateVertexBuffer(UINT(n * layout.stride), 0, fvf, D3DPOOL_SYSTEMMEM, vb.out(), nullptr)));
    {
        auto lock = d3d9::locked_vertex_buffer::lock(vb.get());
        REQUIRE(lock);
        auto* bytes = static_cast<unsigned char*>(lock->data());
        for (std::size_t v = 0; v < n; ++v) {
            const float fill[8] = {-9, -9, -9, -9, -9, -9, float(v), -float(v)};
            std::memcpy(bytes + v * layout.stride, fill, sizeof fill);
        }
    }
    {
        auto lock = d3d9::locked_vertex_buffer::lock(vb.get());
        REQUIRE(lock);
        const auto out = d3d9::make_vertex_spans(lock->data(), lock->size(), layout, n);
        REQUIRE(out);
        job.out_positions = out->positions;
        job.out_normals = out->normals;
        REQUIRE(job.run());
        REQUIRE(lock->unlock());
    }
    {
        auto lock = d3d9::locked_vertex_buffer::lock(vb.get(), 0, 0, D3DLOCK_READONLY);
        REQUIRE(lock);
        const void* data = lock->data();
        const auto in = d3d9::make_vertex_spans(data, lock->size(), layout, n);
        REQUIRE(in);
        float worst = 0.0f;
        bool texcoords_kept = true;
        for (std::size_t v = 0; v < n; ++v) {
            const glm::vec3 p(in->positions(v, 0), in->positions(v, 1), in->positions(v, 2));
            const glm::vec3 nm(in->normals(v, 0), in->normals(v, 1), in->normals(v, 2));
            worst = (std::max)(worst, (std::max)(kbtest::max_abs_diff(p, ref_positions[v]),
                                                 kbtest::max_abs_diff(nm, ref_normals[v])));
            const float* uv = reinterpret_cast<const float*>(static_cast<const unsigned char*>(data) +
                                                             v * layout.stride + 24);
            texcoords_kept = texcoords_kept && uv[0] == float(v) && uv[1] == -float(v);
        }
        MESSAGE("interleaved vertex buffer vs packed arrays: largest difference " << worst);
        CHECK(worst <= 1e-5f); // two kernels (interleaved and packed streams), same arithmetic
        CHECK(texcoords_kept);
    }
    // An index buffer through the same lock type.
    kbtest::com<IDirect3DIndexBuffer9> ib;
    REQUIRE(SUCCEEDED(dev->CreateIndexBuffer(64, 0, D3DFMT_INDEX16, D3DPOOL_SYSTEMMEM, ib.out(), nullptr)));
    {
        auto lock = d3d9::locked_index_buffer::lock(ib.get(), 32);
        REQUIRE(lock);
        CHECK(lock->size() == 32);
        for (std::uint16_t i = 0; i < 16; ++i) static_cast<std::uint16_t*>(lock->data())[i] = std::uint16_t(100 + i);
    }
    auto lock = d3d9::locked_index_buffer::lock(ib.get(), 0, 0, D3DLOCK_READONLY);
    REQUIRE(lock);
    CHECK(static_cast<const std::uint16_t*>(lock->data())[16] == 100);
    CHECK(static_cast<const std::uint16_t*>(lock->data())[31] == 115);
}

// ---------------------------------------------------------------------------------------------
// The image test: a real skinned character drawn by GPU palette skinning and by keyblend's CPU
// skinning into a vertex buffer.
// ---------------------------------------------------------------------------------------------

namespace {

// Registers: c0-c3 the view-projection rows, c4 constants, c8... the palette (3 per bone).
constexpr UINT palette_register = 8;

/// vs_2_0 palette skinning of position and normal with k influences (k <= 4), colour = the
/// normalised normal * 0.5 + 0.5.
std::string skinning_shader(std::size_t k) {
    std::ostringstream s;
    s << "vs_2_0\n"
         "def c4, 3.0, 0.5, 1.0, 0.0\n"
         "dcl_position v0\n"
         "dcl_normal v1\n"
         "dcl_blendweight v2\n"
         "dcl_blendindices v3\n"
         "mul r0, v3, c4.x\n";
    const char* lane = "xyzw";
    for (std::size_t i = 0; i < k; ++i) {
        s << "mova a0.x, r0." << lane[i] << "\n";
        for (int row = 0; row < 3; ++row) {
            s << "dp4 r1." << lane[row] << ", v0, c[a0.x + " << palette_register + row << "]\n";
            s << "dp3 r2." << lane[row] << ", v1, c[a0.x + " << palette_register + row << "]\n";
        }
        if (i == 0)
            s << "mul r3.xyz, r1, v2.x\nmul r4.xyz, r2, v2.x\n";
        else
            s << "mad r3.xyz, r1, v2." << lane[i] << ", r3\nmad r4.xyz, r2, v2." << lane[i] << ", r4\n";
    }
    s << "mov r3.w, c4.z\n"
         "dp4 oPos.x, r3, c0\n"
         "dp4 oPos.y, r3, c1\n"
         "dp4 oPos.z, r3, c2\n"
         "dp4 oPos.w, r3, c3\n"
         "nrm r5.xyz, r4\n"
         "mad oD0.xyz, r5, c4.y, c4.y\n"
         "mov oD0.w, c4.z\n";
    return s.str();
}

/// The same without skinning: for vertices keyblend skinned already.
const char* pass_through_shader = "vs_2_0\n"
                                  "def c4, 3.0, 0.5, 1.0, 0.0\n"
                                  "dcl_position v0\n"
                                  "dcl_normal v1\n"
                                  "dp4 oPos.x, v0, c0\n"
                                  "dp4 oPos.y, v0, c1\n"
                                  "dp4 oPos.z, v0, c2\n"
                                  "dp4 oPos.w, v0, c3\n"
                                  "nrm r5.xyz, v1\n"
                                  "mad oD0.xyz, r5, c4.y, c4.y\n"
                                  "mov oD0.w, c4.z\n";

/// An orthographic view-projection that frames the points, looking along the axis on which they
/// are thinnest, depth into [0.1, 0.9] (D3D's clip z is 0..w).
glm::mat4 frame_points(const std::vector<glm::vec3>& p) {
    glm::vec3 lo(std::numeric_limits<float>::max()), hi(-std::numeric_limits<float>::max());
    for (const glm::vec3& v : p) {
        lo = glm::min(lo, v);
        hi = glm::max(hi, v);
    }
    const glm::vec3 extent = hi - lo, center = 0.5f * (lo + hi);
    int depth = 0;
    for (int a = 1; a < 3; ++a)
        if (extent[a] < extent[depth]) depth = a;
    const int right = (depth + 1) % 3, up = (depth + 2) % 3;
    const float half = 0.55f * (std::max)(extent[right], extent[up]);
    glm::mat4 m(0.0f);
    m[right][0] = 1.0f / half;
    m[up][1] = 1.0f / half;
    m[depth][2] = 0.8f / (std::max)(extent[depth], 1e-6f);
    m[3] = glm::vec4(-center[right] / half, -center[up] / half, 0.5f - 0.8f * center[depth] / (std::max)(extent[depth], 1e-6f), 1.0f);
    return m;
}

void set_view_projection(IDirect3DDevice9* dev, const glm::mat4& vp) {
    float rows[16];
    for (int row = 0; row < 4; ++row)
        for (int col = 0; col < 4; ++col) rows[4 * row + col] = vp[col][row];
    REQUIRE(SUCCEEDED(dev->SetVertexShaderConstantF(0, rows, 4)));
}

struct gpu_vertex {
    float position[3];
    float normal[3];
    float weights[4];
    std::uint8_t indices[4];
};
static_assert(sizeof(gpu_vertex) == 44, "packed as the declaration says");

} // namespace

TEST_SUITE("data") {
TEST_CASE("d3d9: GPU palette skinning and CPU skinning into a vertex buffer draw the same image") {
    const auto path = kbtest::data_file("directx-sdk-legacy-samples/tiny.x");
    if (!path) return;
    const auto started = std::chrono::steady_clock::now();
    const auto file = keyblend::io::load_xfile(*path);
    REQUIRE(file);
    const keyblend::io::xfile_mesh* found = nullptr;
    for (const auto& m : file->meshes)
        if (m.is_skinned()) found = &m;
    REQUIRE(found != nullptr);
    const keyblend::io::xfile_mesh& mesh = *found;
    const std::size_t n = mesh.positions.size(), k = mesh.skin.influences_per_vertex;
    REQUIRE(mesh.normals.size() == n);
    REQUIRE((k >= 1 && k <= 4));
    REQUIRE(mesh.skin.bones.size() <= d3d9::palette_capacity(palette_register));
    REQUIRE(!file->animation_sets.empty());

    // One frame of the animation: sample, hierarchy, palette.
    const keyblend::clip& clip = file->animation_sets[0].clip;
    const auto& bones = mesh.skin.bones;
    std::vector<glm::mat4> local, model, palette(bones.size()), bind_palette(bones.size());
    REQUIRE(kbtest::sample_local_matrices(clip, file->skeleton, 0.37f * clip.duration, local));
    kbtest::local_to_model(file->skeleton, local, model);
    keyblend::palette_job matrices;
    matrices.model = model;
    matrices.bones = bones;
    matrices.output = palette;
    REQUIRE(matrices.run());
    matrices.model = file->skeleton.bind_model();
    matrices.output = bind_palette;
    REQUIRE(matrices.run());

    kbtest::device dev;
    dev->SetRenderState(D3DRS_CULLMODE, D3DCULL_NONE);
    dev->SetRenderState(D3DRS_LIGHTING, FALSE);
    dev->SetRenderState(D3DRS_ZENABLE, D3DZB_TRUE);
    dev->SetTextureStageState(0, D3DTSS_COLOROP, D3DTOP_SELECTARG1);
    dev->SetTextureStageState(0, D3DTSS_COLORARG1, D3DTA_DIFFUSE);
    dev->SetTextureStageState(0, D3DTSS_ALPHAOP, D3DTOP_SELECTARG1);
    dev->SetTextureStageState(0, D3DTSS_ALPHAARG1, D3DTA_DIFFUSE);
    kbtest::com<IDirect3DSurface9> target, depth;
    REQUIRE(SUCCEEDED(dev->CreateRenderTarget(256, 256, D3DFMT_X8R8G8B8, D3DMULTISAMPLE_NONE, 0, FALSE, target.out(),
                                              nullptr)));
    REQUIRE(SUCCEEDED(dev->CreateDepthStencilSurface(256, 256, D3DFMT_D24S8, D3DMULTISAMPLE_NONE, 0, TRUE,
                                                     depth.out(), nullptr)));
    REQUIRE(SUCCEEDED(dev->SetRenderTarget(0, target.get())));
    REQUIRE(SUCCEEDED(dev->SetDepthStencilSurface(depth.get())));

    // Triangles: 16-bit indices, through a locked index buffer.
    REQUIRE(n <= 65536);
    const UINT triangles = UINT(mesh.indices.size() / 3);
    kbtest::com<IDirect3DIndexBuffer9> ib;
    REQUIRE(SUCCEEDED(dev->CreateIndexBuffer(UINT(mesh.indices.size() * 2), D3DUSAGE_WRITEONLY, D3DFMT_INDEX16,
                                             D3DPOOL_MANAGED, ib.out(), nullptr)));
    {
        auto lock = d3d9::locked_index_buffer::lock(ib.get());
        REQUIRE(lock);
        auto* out = static_cast<std::uint16_t*>(lock->data());
        for (std::size_t i = 0; i < mesh.indices.size(); ++i) out[i] = std::uint16_t(mesh.indices[i]);
    }

    // GPU path: bind-pose vertices with weights and indices; the shader skins with set_palette's
    // registers.
    const D3DVERTEXELEMENT9 elements[] = {
        {0, 0, D3DDECLTYPE_FLOAT3, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_POSITION, 0},
        {0, 12, D3DDECLTYPE_FLOAT3, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_NORMAL, 0},
        {0, 24, D3DDECLTYPE_FLOAT4, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_BLENDWEIGHT, 0},
        {0, 40, D3DDECLTYPE_UBYTE4, D3DDECLMETHOD_DEFAULT, D3DDECLUSAGE_BLENDINDICES, 0},
        D3DDECL_END()};
    kbtest::com<IDirect3DVertexDeclaration9> gpu_declaration;
    REQUIRE(SUCCEEDED(dev->CreateVertexDeclaration(elements, gpu_declaration.out())));
    kbtest::com<IDirect3DVertexBuffer9> gpu_vb;
    REQUIRE(SUCCEEDED(dev->CreateVertexBuffer(UINT(n * sizeof(gpu_vertex)), D3DUSAGE_WRITEONLY, 0, D3DPOOL_MANAGED,
                                              gpu_vb.out(), nullptr)));
    {
        auto lock = d3d9::locked_vertex_buffer::lock(gpu_vb.get());
        REQUIRE(lock);
        auto* out = static_cast<gpu_vertex*>(lock->data());
        for (std::size_t v = 0; v < n; ++v) {
            gpu_vertex g{};
            for (int c = 0; c < 3; ++c) {
                g.position[c] = mesh.positions[v][c];
                g.normal[c] = mesh.normals[v][c];
            }
            for (std::size_t i = 0; i < k; ++i) {
                g.weights[i] = mesh.skin.weights[v * k + i];
                g.indices[i] = std::uint8_t(mesh.skin.bone_indices[v * k + i]);
            }
            std::memcpy(&out[v], &g, sizeof g);
        }
    }
    kbtest::com<IDirect3DVertexShader9> skinning, pass_through;
    kbtest::make_vertex_shader(dev.get(), skinning_shader(k), skinning);
    kbtest::make_vertex_shader(dev.get(), pass_through_shader, pass_through);

    // CPU path: keyblend skins into a dynamic FVF buffer, locked with D3DLOCK_DISCARD.
    const DWORD cpu_fvf = D3DFVF_XYZ | D3DFVF_NORMAL;
    const d3d9::vertex_layout cpu_layout = d3d9::layout_from_fvf(cpu_fvf).value();
    kbtest::com<IDirect3DVertexBuffer9> cpu_vb;
    REQUIRE(SUCCEEDED(dev->CreateVertexBuffer(UINT(n * cpu_layout.stride), D3DUSAGE_DYNAMIC | D3DUSAGE_WRITEONLY,
                                              cpu_fvf, D3DPOOL_DEFAULT, cpu_vb.out(), nullptr)));
    keyblend::skinning_job<std::uint16_t> job;
    job.influences = k;
    job.joints = keyblend::make_span(mesh.skin.bone_indices, k);
    job.weights = keyblend::make_span(mesh.skin.weights, k);
    job.in_positions = keyblend::make_span(mesh.positions);
    job.in_normals = keyblend::make_span(mesh.normals);
    job.palette = {palette.data(), palette.size()};

    // Frame the animated pose (skinned on the CPU into plain arrays for the bounds).
    std::vector<glm::vec3> skinned(n), skinned_normals(n);
    job.out_positions = keyblend::make_span(skinned);
    job.out_normals = keyblend::make_span(skinned_normals);
    REQUIRE(job.validate());
    REQUIRE(job.run());
    set_view_projection(dev.get(), frame_points(skinned));

    const auto draw = [&](bool gpu) {
        REQUIRE(SUCCEEDED(dev->Clear(0, nullptr, D3DCLEAR_TARGET | D3DCLEAR_ZBUFFER, D3DCOLOR_XRGB(0, 0, 0), 1.0f, 0)));
        REQUIRE(SUCCEEDED(dev->BeginScene()));
        if (gpu) {
            REQUIRE(SUCCEEDED(dev->SetVertexDeclaration(gpu_declaration.get())));
            REQUIRE(SUCCEEDED(dev->SetVertexShader(skinning.get())));
            REQUIRE(SUCCEEDED(dev->SetStreamSource(0, gpu_vb.get(), 0, sizeof(gpu_vertex))));
        } else {
            REQUIRE(SUCCEEDED(dev->SetFVF(cpu_fvf)));
            REQUIRE(SUCCEEDED(dev->SetVertexShader(pass_through.get())));
            REQUIRE(SUCCEEDED(dev->SetStreamSource(0, cpu_vb.get(), 0, UINT(cpu_layout.stride))));
        }
        REQUIRE(SUCCEEDED(dev->SetIndices(ib.get())));
        REQUIRE(SUCCEEDED(dev->DrawIndexedPrimitive(D3DPT_TRIANGLELIST, 0, 0, UINT(n), 0, triangles)));
        REQUIRE(SUCCEEDED(dev->EndScene()));
        return kbtest::read_back(dev.get(), target.get());
    };

    // GPU: upload the palette, draw.
    REQUIRE(d3d9::set_palette(dev.get(), palette_register, palette));
    const kbtest::pixels gpu = draw(true);

    // CPU: skin straight into the locked vertex buffer, draw with the pass-through shader.
    {
        auto lock = d3d9::locked_vertex_buffer::lock(cpu_vb.get(), 0, 0, D3DLOCK_DISCARD);
        REQUIRE(lock);
        const auto out = d3d9::make_vertex_spans(lock->data(), lock->size(), cpu_layout, n);
        REQUIRE(out);
        job.out_positions = out->positions;
        job.out_normals = out->normals;
        REQUIRE(job.run());
        REQUIRE(lock->unlock());
    }
    const kbtest::pixels cpu = draw(false);

    // A control: the GPU path in the bind pose must differ, or the comparison proves nothing.
    REQUIRE(d3d9::set_palette(dev.get(), palette_register, bind_palette));
    const kbtest::pixels bind = draw(true);

    const kbtest::image_difference d = kbtest::compare(gpu, cpu), control = kbtest::compare(gpu, bind);
    const std::size_t total = gpu.argb.size(), drawn = kbtest::covered(gpu);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    MESSAGE("tiny.x, " << n << " vertices, " << triangles << " triangles, " << bones.size() << " bones, " << k
                       << " influences, at tick " << 0.37f * clip.duration << ": GPU palette skinning vs CPU "
                       << "skinning into the vertex buffer: " << d.differing << " of " << total
                       << " pixels differ, largest channel difference " << d.max_channel << " (mesh covers "
                       << drawn << " pixels); bind pose vs animated: " << control.differing
                       << " pixels differ; " << seconds << " s");
    if (const char* dir = std::getenv("KEYBLEND_D3D9_IMAGES")) {
        gpu.write_ppm(std::string(dir) + "/d3d9_gpu.ppm");
        cpu.write_ppm(std::string(dir) + "/d3d9_cpu.ppm");
        bind.write_ppm(std::string(dir) + "/d3d9_bind.ppm");
    }
    CHECK(drawn >= total / 20);              // the character is there (at least 5% of the image)
    CHECK(control.differing >= drawn / 10);  // and posing it changes the picture
    // The tolerance: rounding differences (the GPU transforms by each bone and blends the
    // results, keyblend blends the matrices first) may move an edge or a colour by one step in a
    // few pixels; a wrong register layout, bone order or weight breaks thousands.
    CHECK(d.differing <= total / 1000); // 65 of 65536
}
}
