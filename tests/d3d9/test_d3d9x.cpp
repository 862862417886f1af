// Tests of the D3DX parts of keyblend/d3d9.hpp (compiled because <d3dx9.h> comes first): quaternion
// conventions against D3DX under wine, and D3DXFRAME hierarchies.
#define NOMINMAX
#include <d3dx9.h>

#include <keyblend/d3d9.hpp>

#include "../helpers.hpp"

#include <keyblend/pose.hpp>

#include <cstring>
#include <limits>
#include <memory>

#ifndef KEYBLEND_D3D9_D3DX_MATH
#error "the D3DX math part of keyblend/d3d9.hpp was not compiled"
#endif
#ifndef KEYBLEND_D3D9_D3DX_ANIM
#error "the D3DX frame part of keyblend/d3d9.hpp was not compiled"
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
    keyblend::local_to_model(h->skeleton, h->skeleton.bind_local(), model);
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
        CHECK(h->skeleton.index_of("f1#2") < 4);
        tree.frames[2]->Name = nullptr;
        h = d3d9::import_frames(tree.root());
        REQUIRE(h);
        CHECK(h->skeleton.index_of("") < 4);
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
