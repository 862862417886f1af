// Tests of the D3DX parts of keyblend/d3d9.hpp (compiled because <d3dx9.h> comes first): quaternion
// conventions against D3DX under wine, and D3DXFRAME hierarchies.
#define NOMINMAX
#include <d3dx9.h>

#include <keyblend/d3d9.hpp>

#include "../helpers.hpp"
#include "../job_helpers.hpp"
#include "device.hpp"

#include <keyblend/clip.hpp>
#include <keyblend/io/xfile.hpp>
#include <keyblend/pose.hpp>
#include <keyblend/skin.hpp>

#include <cstring>
#include <limits>
#include <memory>

#ifndef KEYBLEND_D3D9_D3DX_MATH
#error "the D3DX math part of keyblend/d3d9.hpp was not compiled"
#endif
#ifndef KEYBLEND_D3D9_D3DX_ANIM
#error "the D3DX frame part of keyblend/d3d9.hpp was not compiled"
#endif
#ifndef KEYBLEND_D3D9_D3DX_MESH
#error "the D3DX skin part of keyblend/d3d9.hpp was not compiled"
#endif

namespace d3d9 = keyblend::d3d9;
using keyblend::errc;

namespace {

/// Same rotation: q or -q, component-wise.
float rotation_difference(const glm::quat& a, const glm::quat& b) {
    return (std::min)(kbtest::max_abs_diff(a, b), kbtest::max_abs_diff(a, -b));
}

float max_abs_diff(const glm::mat4& a, const glm::mat4& b) { return kbtest::max_abs_diff(a, b); }

/// A frame as D3DX programs derive them: the combined (model) matrix next to the local one.
struct frame_ex : D3DXFRAME {
    D3DXMATRIX combined;
};

/// The classic D3DX UpdateHierarchy: combined = local * parent's combined (row vectors).
void update_hierarchy(D3DXFRAME* frame, const D3DXMATRIX& parent) {
    for (; frame; frame = frame->pFrameSibling) {
        auto* f = static_cast<frame_ex*>(frame);
        D3DXMatrixMultiply(&f->combined, &f->TransformationMatrix, &parent);
        update_hierarchy(f->pFrameFirstChild, f->combined);
    }
}

/// A random D3DXFRAME tree: `n` frames named f0..f(n-1) in creation order, each the child of a
/// random earlier frame (or a further root), with random TRS local matrices.
struct frame_tree {
    std::vector<std::unique_ptr<frame_ex>> frames;
    std::vector<std::string> names;

    frame_tree(std::size_t n, std::uint32_t seed) : names(n) {
        kbtest::rng r(seed);
        for (std::size_t i = 0; i < n; ++i) {
            frames.push_back(std::make_unique<frame_ex>());
            frame_ex& f = *frames.back();
            f.Name = nullptr;
            f.pMeshContainer = nullptr;
            f.pFrameSibling = nullptr;
            f.pFrameFirstChild = nullptr;
            names[i] = "f" + std::to_string(i);
            f.Name = &names[i][0];
            f.TransformationMatrix = d3d9::to_d3d(keyblend::to_matrix(kbtest::random_transform(r)));
            D3DXMatrixIdentity(&f.combined);
            if (i == 0) continue;
            // Append to the children of a random earlier frame, or to the roots.
            D3DXFRAME** link = r.integer(0, 7) == 0 ? &frames[0]->pFrameSibling
                                                    : &frames[std::size_t(r.integer(0, int(i) - 1))]->pFrameFirstChild;
            while (*link) link = &(*link)->pFrameSibling;
            *link = &f;
        }
    }
    D3DXFRAME* root() const { return frames[0].get(); }
};

/// Pre-order of a frame tree, children before siblings: what import_frames promises.
void preorder(D3DXFRAME* f, std::vector<D3DXFRAME*>& out, D3DXFRAME* parent, std::vector<D3DXFRAME*>& parents) {
    for (; f; f = f->pFrameSibling) {
        out.push_back(f);
        parents.push_back(parent);
        preorder(f->pFrameFirstChild, out, f, parents);
    }
}

} // namespace

TEST_CASE("d3d9: D3DX quaternions convert exactly and mean the same rotation as in GLM") {
    kbtest::rng r(3);
    float matrix = 0.0f, multiply = 0.0f, axis_angle = 0.0f, from_matrix = 0.0f, slerp = 0.0f;
    for (int i = 0; i < 1000; ++i) {
        const glm::quat a = r.rotation(), b = r.rotation();
        const D3DXQUATERNION xa = d3d9::to_d3d(a), xb = d3d9::to_d3d(b);
        REQUIRE((xa.x == a.x && xa.y == a.y && xa.z == a.z && xa.w == a.w));
        REQUIRE(kbtest::bit_equal(d3d9::to_glm(xa), a));

        // D3DXMatrixRotationQuaternion(q) is mat4_cast of the same quaternion (no conjugation).
        D3DXMATRIX m;
        D3DXMatrixRotationQuaternion(&m, &xa);
        matrix = (std::max)(matrix, max_abs_diff(d3d9::to_glm(m), glm::mat4_cast(a)));

        // D3DXQuaternionMultiply(a, b): a first, then b, i.e. b * a.
        D3DXQUATERNION x;
        D3DXQuaternionMultiply(&x, &xa, &xb);
        multiply = (std::max)(multiply, kbtest::max_abs_diff(d3d9::to_glm(x), b * a));

        const glm::vec3 axis = glm::normalize(r.vec3(-1, 1) + glm::vec3(0.01f, 0.0f, 0.0f));
        const float angle = r.uniform(-3.1f, 3.1f);
        const D3DXVECTOR3 xaxis(d3d9::to_d3d(axis));
        D3DXQuaternionRotationAxis(&x, &xaxis, angle);
        axis_angle = (std::max)(axis_angle, kbtest::max_abs_diff(d3d9::to_glm(x), glm::angleAxis(angle, axis)));

        const D3DXMATRIX rotation(d3d9::to_d3d(glm::mat4_cast(a)));
        D3DXQuaternionRotationMatrix(&x, &rotation);
        from_matrix = (std::max)(from_matrix, rotation_difference(d3d9::to_glm(x), a));

        const float t = r.uniform(0.0f, 1.0f);
        D3DXQuaternionSlerp(&x, &xa, &xb, t);
        slerp = (std::max)(slerp, rotation_difference(d3d9::to_glm(x), keyblend::slerp(a, b, t)));

        const glm::vec4 v(r.vec3(-2, 2), r.uniform(-2, 2));
        REQUIRE(kbtest::bit_equal(d3d9::to_glm(d3d9::to_d3d(v)), v));
    }
    MESSAGE("largest difference over 1000 cases: RotationQuaternion vs mat4_cast " << matrix
            << ", QuaternionMultiply(a, b) vs b * a " << multiply << ", QuaternionRotationAxis vs angleAxis "
            << axis_angle << ", QuaternionRotationMatrix vs the quaternion " << from_matrix
            << ", QuaternionSlerp vs keyblend::slerp " << slerp);
    CHECK(matrix <= 1e-6f);
    CHECK(multiply <= 1e-6f);
    CHECK(axis_angle <= 1e-6f);
    CHECK(from_matrix <= 1e-6f);
    CHECK(slerp <= 1e-6f);
}

TEST_CASE("d3d9: import_frames and write_frame_matrices against D3DX's own hierarchy update") {
    frame_tree tree(60, 11);
    const auto h = d3d9::import_frames(tree.root());
    REQUIRE(h);
    std::vector<D3DXFRAME*> order, parents;
    preorder(tree.root(), order, nullptr, parents);
    REQUIRE(h->skeleton.size() == 60);
    REQUIRE(h->frames == order);
    for (std::size_t j = 0; j < order.size(); ++j) {
        CHECK(h->skeleton.name(j) == order[j]->Name);
        CHECK(kbtest::bit_equal(h->skeleton.bind_local()[j], d3d9::to_glm(order[j]->TransformationMatrix)));
        const keyblend::joint_index p = h->skeleton.parent(j);
        CHECK((p == keyblend::no_parent ? nullptr : order[std::size_t(p)]) == parents[j]);
    }

    // keyblend's local_to_model written into the frames equals D3DX's recursive update.
    std::vector<glm::mat4> model;
    kbtest::local_to_model(h->skeleton, h->skeleton.bind_local(), model);
    D3DXMATRIX identity;
    D3DXMatrixIdentity(&identity);
    update_hierarchy(tree.root(), identity);
    std::vector<glm::mat4> d3dx(order.size());
    for (std::size_t j = 0; j < order.size(); ++j) d3dx[j] = d3d9::to_glm(static_cast<frame_ex*>(order[j])->combined);
    REQUIRE(d3d9::write_frame_matrices(model, h->frames, &frame_ex::combined));
    float worst = 0.0f;
    for (std::size_t j = 0; j < order.size(); ++j) {
        const glm::mat4 written = d3d9::to_glm(static_cast<frame_ex*>(order[j])->combined);
        REQUIRE(kbtest::bit_equal(written, model[j]));
        float scale = 1.0f;
        for (int c = 0; c < 4; ++c) scale = (std::max)(scale, glm::length(d3dx[j][c]));
        worst = (std::max)(worst, max_abs_diff(written, d3dx[j]) / scale);
    }
    MESSAGE("60 frames: keyblend local_to_model vs D3DX UpdateHierarchy, "
                                << "largest difference relative to the matrix size " << worst);
    CHECK(worst <= 1e-6f);

    // The default member: local matrices into TransformationMatrix.
    std::vector<glm::mat4> local(order.size(), glm::mat4(2.0f));
    REQUIRE(d3d9::write_frame_matrices(local, h->frames));
    CHECK(kbtest::bit_equal(d3d9::to_glm(order[17]->TransformationMatrix), glm::mat4(2.0f)));
}

TEST_CASE("d3d9: bad frame trees are reported") {
    CHECK(d3d9::import_frames(nullptr).error().code == errc::invalid_argument);

    SUBCASE("a loop") {
        frame_tree tree(5, 2);
        tree.frames[4]->pFrameFirstChild = tree.root();
        const auto h = d3d9::import_frames(tree.root());
        REQUIRE_FALSE(h);
        CHECK(h.error().code == errc::cycle);
        CHECK(h.error().message.find("'f0'") != std::string::npos);
    }
    SUBCASE("a frame with two parents") {
        frame_tree tree(6, 4);
        tree.frames[5]->pFrameFirstChild = tree.frames[1].get();
        CHECK(d3d9::import_frames(tree.root()).error().code == errc::cycle);
    }
    SUBCASE("names: duplicates, renaming, unnamed frames") {
        frame_tree tree(4, 5);
        tree.frames[2]->Name = tree.frames[1]->Name;
        auto h = d3d9::import_frames(tree.root());
        REQUIRE_FALSE(h);
        CHECK(h.error().code == errc::duplicate);
        keyblend::skeleton_options rename;
        rename.duplicates = keyblend::duplicate_names::rename;
        h = d3d9::import_frames(tree.root(), rename);
        REQUIRE(h);
        CHECK(h->skeleton.find("f1#2").value() < 4);
        tree.frames[2]->Name = nullptr;
        h = d3d9::import_frames(tree.root());
        REQUIRE(h);
        CHECK(h->skeleton.find("").value() < 4);
    }
    SUBCASE("a NaN matrix") {
        frame_tree tree(3, 6);
        tree.frames[1]->TransformationMatrix._42 = std::numeric_limits<float>::quiet_NaN();
        CHECK(d3d9::import_frames(tree.root()).error().code == errc::non_finite);
    }
    SUBCASE("writing back") {
        frame_tree tree(3, 7);
        const auto h = d3d9::import_frames(tree.root()).value();
        std::vector<glm::mat4> two(2, glm::mat4(1.0f)), three(3, glm::mat4(3.0f));
        CHECK(d3d9::write_frame_matrices(two, h.frames).error().code == errc::size_mismatch);
        std::vector<D3DXFRAME*> holes = h.frames;
        holes[1] = nullptr;
        const auto st = d3d9::write_frame_matrices(three, holes);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::invalid_argument);
        CHECK(st.error().index == 1);
        CHECK_FALSE(kbtest::bit_equal(d3d9::to_glm(h.frames[0]->TransformationMatrix), glm::mat4(3.0f)));
    }
}

// ---------------------------------------------------------------------------------------------
// ID3DXSkinInfo
// ---------------------------------------------------------------------------------------------

namespace {

/// A skin made with D3DX: bones named after joints of `s`, influences as given.
struct skin_builder {
    kbtest::com<ID3DXSkinInfo> skin;
    skin_builder(DWORD vertices, DWORD bones) {
        REQUIRE(SUCCEEDED(D3DXCreateSkinInfoFVF(vertices, D3DFVF_XYZ, bones, skin.out())));
    }
    void bone(DWORD b, const char* name, std::vector<DWORD> vertices, std::vector<float> weights,
              const glm::mat4& offset = glm::mat4(1.0f)) {
        REQUIRE(SUCCEEDED(skin->SetBoneName(b, name)));
        REQUIRE(SUCCEEDED(skin->SetBoneInfluence(b, DWORD(vertices.size()), vertices.data(), weights.data())));
        const D3DXMATRIX m(d3d9::to_d3d(offset));
        REQUIRE(SUCCEEDED(skin->SetBoneOffsetMatrix(b, &m)));
    }
};

} // namespace

TEST_CASE("d3d9: import_skin gathers an ID3DXSkinInfo's influences per vertex") {
    const keyblend::skeleton s = kbtest::random_skeleton(6, 21); // joints j0..j5
    const glm::mat4 offset = keyblend::to_matrix(keyblend::transform{glm::vec3(1, 2, 3)});

    SUBCASE("the layout: decreasing weight, ties in bone order, zero weights take no slot") {
        skin_builder b(4, 3);
        b.bone(0, "j4", {0, 1, 2}, {0.25f, 1.0f, 0.5f}, offset);
        b.bone(1, "j1", {0, 2, 3}, {0.75f, 0.25f, 0.0f});
        b.bone(2, "j2", {2}, {0.25f});
        const auto imported = d3d9::import_skin(b.skin.get(), 4, s);
        REQUIRE(imported);
        REQUIRE(imported->bones.size() == 3);
        CHECK(imported->bones[0].joint == s.find("j4").value());
        CHECK(imported->bones[1].joint == s.find("j1").value());
        CHECK(imported->bones[2].joint == s.find("j2").value());
        CHECK(imported->bones[0].name == "j4");
        CHECK(kbtest::bit_equal(imported->bones[0].offset, offset));
        CHECK(kbtest::bit_equal(imported->bones[1].offset, glm::mat4(1.0f)));
        REQUIRE(imported->influences_per_vertex == 3);
        CHECK(imported->bone_indices == std::vector<std::uint16_t>{1, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0});
        CHECK(imported->weights ==
              std::vector<float>{0.75f, 0.25f, 0.0f, 1.0f, 0.0f, 0.0f, 0.5f, 0.25f, 0.25f, 0.0f, 0.0f, 0.0f});
    }
    SUBCASE("errors") {
        CHECK(d3d9::import_skin(nullptr, 4, s).error().code == errc::invalid_argument);
        {
            skin_builder b(4, 2);
            b.bone(0, "j0", {0}, {1.0f});
            b.bone(1, "nobody", {1}, {1.0f});
            const auto r = d3d9::import_skin(b.skin.get(), 4, s);
            REQUIRE_FALSE(r);
            CHECK(r.error().code == errc::not_found);
            CHECK(r.error().index == 1);
            CHECK(r.error().message.find("'nobody'") != std::string::npos);
        }
        {
            skin_builder b(4, 1);
            b.bone(0, "j0", {0, 3}, {1.0f, 1.0f});
            const auto r = d3d9::import_skin(b.skin.get(), 3, s); // the mesh has 3 vertices
            REQUIRE_FALSE(r);
            CHECK(r.error().code == errc::out_of_range);
        }
        {
            skin_builder b(4, 1);
            b.bone(0, "j0", {2}, {std::numeric_limits<float>::quiet_NaN()});
            CHECK(d3d9::import_skin(b.skin.get(), 4, s).error().code == errc::non_finite);
        }
        {
            skin_builder b(2, 9);
            for (DWORD i = 0; i < 9; ++i) b.bone(i, "j3", {1}, {1.0f / 9.0f});
            const auto r = d3d9::import_skin(b.skin.get(), 2, s);
            REQUIRE_FALSE(r);
            CHECK(r.error().code == errc::unsupported);
            CHECK(r.error().index == 1);
        }
    }
}

namespace {

/// The smallest ID3DXAllocateHierarchy: frames and mesh containers on the heap, the mesh and skin
/// kept with a reference.
struct allocate_hierarchy : ID3DXAllocateHierarchy {
    static char* copy(const char* name) {
        if (!name) return nullptr;
        char* out = new char[std::strlen(name) + 1];
        std::strcpy(out, name);
        return out;
    }
    STDMETHOD(CreateFrame)(const char* name, D3DXFRAME** out) override {
        auto* f = new frame_ex{};
        f->Name = copy(name);
        D3DXMatrixIdentity(&f->TransformationMatrix);
        D3DXMatrixIdentity(&f->combined);
        f->pMeshContainer = nullptr;
        f->pFrameSibling = f->pFrameFirstChild = nullptr;
        *out = f;
        return S_OK;
    }
    STDMETHOD(CreateMeshContainer)(const char* name, const D3DXMESHDATA* data, const D3DXMATERIAL*,
                                   const D3DXEFFECTINSTANCE*, DWORD, const DWORD*, ID3DXSkinInfo* skin,
                                   D3DXMESHCONTAINER** out) override {
        auto* c = new D3DXMESHCONTAINER{};
        c->Name = copy(name);
        c->MeshData = *data;
        if (data->pMesh) data->pMesh->AddRef();
        c->pSkinInfo = skin;
        if (skin) skin->AddRef();
        *out = c;
        return S_OK;
    }
    STDMETHOD(DestroyFrame)(D3DXFRAME* f) override {
        delete[] f->Name;
        delete static_cast<frame_ex*>(f);
        return S_OK;
    }
    STDMETHOD(DestroyMeshContainer)(D3DXMESHCONTAINER* c) override {
        delete[] c->Name;
        if (c->MeshData.pMesh) c->MeshData.pMesh->Release();
        if (c->pSkinInfo) c->pSkinInfo->Release();
        delete c;
        return S_OK;
    }
};

D3DXMESHCONTAINER* find_skinned(D3DXFRAME* f) {
    for (; f; f = f->pFrameSibling) {
        for (D3DXMESHCONTAINER* c = f->pMeshContainer; c; c = c->pNextMeshContainer)
            if (c->pSkinInfo && c->MeshData.pMesh) return c;
        if (D3DXMESHCONTAINER* c = find_skinned(f->pFrameFirstChild)) return c;
    }
    return nullptr;
}

} // namespace

TEST_SUITE("data") {
TEST_CASE("d3d9: a D3DXLoadMeshHierarchyFromX model moves to keyblend: frames, skin, vertices agree with keyblend's loader") {
    const auto path = kbtest::data_file("directx-sdk-legacy-samples/tiny.x");
    if (!path) return;
    const auto file = keyblend::io::load_xfile(*path);
    REQUIRE(file);
    const keyblend::io::xfile_mesh* mesh = nullptr;
    for (const auto& m : file->meshes)
        if (m.is_skinned() && !mesh) mesh = &m;
    REQUIRE(mesh != nullptr);

    kbtest::device dev(64);
    allocate_hierarchy allocator;
    D3DXFRAME* root = nullptr;
    REQUIRE(SUCCEEDED(D3DXLoadMeshHierarchyFromXA(path->c_str(), D3DXMESH_SYSTEMMEM, dev.get(), &allocator, nullptr,
                                                  &root, nullptr)));
    struct destroy {
        D3DXFRAME* root;
        allocate_hierarchy* allocator;
        ~destroy() { D3DXFrameDestroy(root, allocator); }
    } destroy_at_end{root, &allocator};

    // Frames: the same skeleton as keyblend's loader reads.
    const auto h = d3d9::import_frames(root);
    REQUIRE(h);
    const keyblend::skeleton& s = h->skeleton;
    REQUIRE(s.size() == file->skeleton.size());
    float bind = 0.0f;
    for (std::size_t j = 0; j < s.size(); ++j) {
        // keyblend's loader names unnamed frames; D3DX leaves them unnamed.
        if (s.name(j).empty())
            CHECK(file->skeleton.name(j).rfind("unnamed_frame_", 0) == 0);
        else
            CHECK(s.name(j) == file->skeleton.name(j));
        CHECK(s.parent(j) == file->skeleton.parent(j));
        bind = (std::max)(bind, kbtest::max_abs_diff(s.bind_local()[j], file->skeleton.bind_local()[j]));
    }

    // The skin: the same bones, offsets and per-vertex influences as the loader's mesh_skin.
    D3DXMESHCONTAINER* container = find_skinned(root);
    REQUIRE(container != nullptr);
    ID3DXMesh* d3dx_mesh = container->MeshData.pMesh;
    const std::size_t n = d3dx_mesh->GetNumVertices();
    REQUIRE(n == mesh->positions.size());
    const auto skin = d3d9::import_skin(container->pSkinInfo, n, s);
    REQUIRE(skin);
    REQUIRE(skin->bones.size() == mesh->skin.bones.size());
    float offsets = 0.0f;
    for (std::size_t b = 0; b < skin->bones.size(); ++b) {
        CHECK(skin->bones[b].joint == mesh->skin.bones[b].joint);
        offsets = (std::max)(offsets, kbtest::max_abs_diff(skin->bones[b].offset, mesh->skin.bones[b].offset));
    }
    CHECK(skin->influences_per_vertex == mesh->skin.influences_per_vertex);
    CHECK(skin->bone_indices == mesh->skin.bone_indices);
    float weights = 0.0f;
    REQUIRE(skin->weights.size() == mesh->skin.weights.size());
    for (std::size_t i = 0; i < skin->weights.size(); ++i)
        weights = (std::max)(weights, std::fabs(skin->weights[i] - mesh->skin.weights[i]));

    // The D3DX mesh's own vertex buffer, read through its declaration: the loader's positions.
    D3DVERTEXELEMENT9 declaration[MAX_FVF_DECL_SIZE];
    REQUIRE(SUCCEEDED(d3dx_mesh->GetDeclaration(declaration)));
    const auto layout = d3d9::layout_from_declaration(declaration);
    REQUIRE(layout);
    CHECK(layout->stride == d3dx_mesh->GetNumBytesPerVertex());
    kbtest::com<IDirect3DVertexBuffer9> vb;
    REQUIRE(SUCCEEDED(d3dx_mesh->GetVertexBuffer(vb.out())));
    auto lock = d3d9::locked_vertex_buffer::lock(vb.get(), 0, 0, D3DLOCK_READONLY);
    REQUIRE(lock);
    const void* bytes = lock->data();
    const auto in = d3d9::make_vertex_spans(bytes, lock->size(), *layout, n);
    REQUIRE(in);
    float positions = 0.0f;
    for (std::size_t v = 0; v < n; ++v)
        positions = (std::max)(positions, kbtest::max_abs_diff(glm::vec3(in->positions(v, 0), in->positions(v, 1),
                                                                         in->positions(v, 2)),
                                                               mesh->positions[v]));

    // Skinning from the D3DX data (its vertex buffer, import_skin, import_frames' skeleton) equals
    // skinning from keyblend's loader.
    const keyblend::clip& clip = file->animation_sets[0].clip;
    std::vector<glm::mat4> local, model, palette(skin->bones.size()), palette_io(mesh->skin.bones.size());
    REQUIRE(kbtest::sample_local_matrices(clip, s, 0.5f * clip.duration, local));
    kbtest::local_to_model(s, local, model);
    keyblend::palette_job matrices;
    matrices.model = model;
    matrices.bones = skin->bones;
    matrices.output = palette;
    REQUIRE(matrices.run());
    matrices.bones = mesh->skin.bones;
    matrices.output = palette_io;
    REQUIRE(matrices.run());
    const std::size_t k = skin->influences_per_vertex;
    std::vector<glm::vec3> from_d3dx(n), from_io(n);
    keyblend::skinning_job<std::uint16_t> job;
    job.influences = k;
    job.joints = keyblend::make_span(skin->bone_indices, k);
    job.weights = keyblend::make_span(skin->weights, k);
    job.in_positions = in->positions;
    job.out_positions = keyblend::make_span(from_d3dx);
    job.palette = {palette.data(), palette.size()};
    REQUIRE(job.validate());
    REQUIRE(job.run());
    job.joints = keyblend::make_span(mesh->skin.bone_indices, k);
    job.weights = keyblend::make_span(mesh->skin.weights, k);
    job.in_positions = keyblend::make_span(mesh->positions);
    job.out_positions = keyblend::make_span(from_io);
    job.palette = palette_io;
    REQUIRE(job.run());
    float skinned = 0.0f, size = 1.0f;
    for (std::size_t v = 0; v < n; ++v) {
        skinned = (std::max)(skinned, kbtest::max_abs_diff(from_d3dx[v], from_io[v]));
        size = (std::max)(size, glm::length(from_io[v]));
    }
    MESSAGE("tiny.x through D3DXLoadMeshHierarchyFromX vs keyblend's loader: " << s.size() << " frames, bind "
            << "matrices differ by " << bind << "; " << skin->bones.size() << " bones, offsets differ by "
            << offsets << ", weights by " << weights << "; " << n << " vertices differ by " << positions
            << "; skinned positions differ by " << skinned << " (model size " << size << ")");
    CHECK(bind <= 1e-6f);
    CHECK(offsets <= 1e-6f);
    CHECK(weights <= 1e-6f);
    CHECK(positions <= 1e-6f * size);
    CHECK(skinned <= 1e-5f * size);
}
}
