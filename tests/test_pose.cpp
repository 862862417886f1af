#include <keyblend/pose.hpp>
#include <keyblend/skin.hpp>

#include "helpers.hpp"
#include "job_helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::local_to_model;
using kbtest::local_to_model_subtree;
using kbtest::reset_to_bind;
using kbtest::bit_equal;
using kbtest::max_abs_diff;
using kbtest::padding_is_identity;
using kbtest::random_pose;
using kbtest::random_skeleton;
using kbtest::random_transform;
using kbtest::relative_error;

namespace {

// The plain reference: GLM's product, parent first.
std::vector<glm::mat4> reference_model(const skeleton& s, const local_pose& p, const glm::mat4& root) {
    std::vector<glm::mat4> m(s.size());
    for (std::size_t j = 0; j < s.size(); ++j) {
        const joint_index q = s.parent(j);
        m[j] = (q < 0 ? root : m[std::size_t(q)]) * to_matrix(p.get(j));
    }
    return m;
}

/// A job over `s` below `root` from `from`, its input the pose `p`, or `local` when p is null.
local_to_model_job job_over(const skeleton& s, const local_pose* p, span<const glm::mat4> local, const glm::mat4& root,
                            std::size_t from) {
    local_to_model_job job;
    job.skeleton = &s;
    if (p)
        job.input = p;
    else
        job.input_matrices = local;
    job.root = &root;
    job.from = from;
    return job;
}

} // namespace

TEST_CASE("local_pose: identity on construction, get/set, padding kept at the identity") {
    CHECK(local_pose{}.empty());
    for (std::size_t n : {1u, 7u, 8u, 9u, 67u}) {
        local_pose p(n);
        CHECK(p.size() == n);
        CHECK(p.padded_size() % pose_lane_block == 0);
        CHECK(p.padded_size() >= n);
        CHECK(p.padded_size() < n + pose_lane_block);
        for (unsigned s = 0; s < local_pose::stream_count; ++s)
            CHECK(reinterpret_cast<std::uintptr_t>(p.data(local_pose::stream(s))) % 64 == 0);
        CHECK(bit_equal(p.get(n - 1), transform{}));
        CHECK(padding_is_identity(p));
        kbtest::rng rng(1);
        std::vector<transform> t(n);
        for (std::size_t j = 0; j < n; ++j) p.set(j, t[j] = random_transform(rng));
        for (std::size_t j = 0; j < n; ++j) CHECK(bit_equal(p.get(j), t[j]));
        CHECK(padding_is_identity(p));
    }
}

TEST_CASE("local_pose: resize keeps joints, new ones and the padding are the identity") {
    local_pose p = random_pose(5, 2);
    const transform j3 = p.get(3);
    p.resize(3); // shrink: joints 3, 4 become padding
    CHECK(padding_is_identity(p));
    p.resize(20); // grow past the allocation
    CHECK(bit_equal(p.get(2), random_pose(5, 2).get(2)));
    CHECK(bit_equal(p.get(3), transform{}));
    CHECK(bit_equal(p.get(19), transform{}));
    CHECK(padding_is_identity(p));
    CHECK_FALSE(bit_equal(j3, transform{}));
}

TEST_CASE("local_pose: copies are deep, moves are cheap") {
    const local_pose a = random_pose(11, 3);
    local_pose b = a;
    b.set(0, transform{});
    CHECK_FALSE(bit_equal(a.get(0), b.get(0)));
    CHECK(bit_equal(a.get(10), b.get(10)));
    local_pose c(40);
    c = a; // into a larger allocation
    CHECK(c.size() == 11);
    CHECK(bit_equal(c.get(5), a.get(5)));
    CHECK(padding_is_identity(c));
    const float* stream = c.data(local_pose::translation_x);
    local_pose d = std::move(c);
    CHECK(d.data(local_pose::translation_x) == stream);
    c = local_pose(2); // a moved-from pose can be assigned again
    CHECK(c.size() == 2);
}

TEST_CASE("out-of-range joints are a precondition failure (asserted in tests)") {
    local_pose p(3);
    CHECK_THROWS_AS(p.get(3), assertion_failure);
    CHECK_THROWS_AS(p.set(3, transform{}), assertion_failure);
}

TEST_CASE("reset to the bind pose: TRS and local matrices (the classic Reset)") {
    const skeleton s = random_skeleton(13, 4);
    local_pose p = random_pose(2, 5);
    reset_to_bind(s, p);
    REQUIRE(p.size() == 13);
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(p.get(j), s.bind_transforms()[j]));
    const local_pose q(s);
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(q.get(j), s.bind_transforms()[j]));
    std::vector<glm::mat4> m(13, glm::mat4(NAN));
    REQUIRE(reset_to_bind(s, span<glm::mat4>(m)));
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(m[j], s.bind_local()[j]));
}

TEST_CASE("local pose <-> local matrices") {
    const local_pose p = random_pose(9, 6);
    std::vector<glm::mat4> m(9);
    REQUIRE(to_local_matrices(p, m));
    for (std::size_t j = 0; j < 9; ++j) CHECK(bit_equal(m[j], to_matrix(p.get(j))));
    local_pose back;
    to_local_pose(m, back);
    REQUIRE(back.size() == 9);
    for (std::size_t j = 0; j < 9; ++j) CHECK(max_abs_diff(to_matrix(back.get(j)), m[j]) < 1e-5f);
}

TEST_CASE("local_to_model equals GLM's parent * T*R*S, on every lane path") {
    kbtest::rng rng(7);
    for (std::size_t n : {1u, 2u, 7u, 8u, 9u, 16u, 67u, 200u}) {
        const skeleton s = random_skeleton(n, std::uint32_t(n));
        const local_pose p = random_pose(n, std::uint32_t(n) + 1);
        glm::mat4 root = to_matrix(random_transform(rng));
        if (n == 9) root[0][3] = 0.25f; // a projective root works too
        const std::vector<glm::mat4> ref = reference_model(s, p, root);
        std::vector<glm::mat4> fast, scalar(n);
        local_to_model(s, p, fast, root);
        impl::local_to_model_range<impl::lanes::f1>(s, p, 0, n, nullptr, root, scalar.data());
        REQUIRE(fast.size() == n);
        float worst = 0, worst_scalar = 0, worst_paths = 0;
        for (std::size_t j = 0; j < n; ++j) {
            worst = std::max(worst, relative_error(fast[j], ref[j]));
            worst_scalar = std::max(worst_scalar, relative_error(scalar[j], ref[j]));
            worst_paths = std::max(worst_paths, relative_error(fast[j], scalar[j]));
        }
        CHECK(worst < 2e-5f);
        CHECK(worst_scalar < 2e-5f);
        CHECK(worst_paths < 2e-5f);
#if KEYBLEND_SIMD_F4
        std::vector<glm::mat4> four(n);
        impl::local_to_model_range<impl::lanes::f4>(s, p, 0, n, nullptr, root, four.data());
        for (std::size_t j = 0; j < n; ++j) CHECK(relative_error(four[j], scalar[j]) < 2e-5f);
#endif
    }
}

namespace {

// Skeletons shaped like the ones local_to_model's SIMD path splits (impl::model_schedule): long
// chains, a root with two long chains, a character (spine, limbs, fingers), several trees. Each
// is given as parents in pre-order.
std::vector<joint_index> chain_parents(std::size_t n) {
    std::vector<joint_index> p(n);
    for (std::size_t j = 0; j < n; ++j) p[j] = joint_index(j) - 1;
    return p;
}

std::vector<joint_index> two_chains(std::size_t each) {
    std::vector<joint_index> p{-1};
    for (std::size_t c = 0; c < 2; ++c)
        for (std::size_t i = 0; i < each; ++i) p.push_back(i == 0 ? 0 : joint_index(p.size()) - 1);
    return p;
}

std::vector<joint_index> character() {
    std::vector<joint_index> p{-1};
    const auto chain = [&p](joint_index from, std::size_t n) {
        joint_index at = from;
        for (std::size_t i = 0; i < n; ++i) {
            p.push_back(at);
            at = joint_index(p.size()) - 1;
        }
        return at;
    };
    const joint_index spine = chain(0, 6);
    chain(spine, 3); // neck, head, jaw
    for (int side = 0; side < 2; ++side) {
        const joint_index hand = chain(spine, 4);
        for (int finger = 0; finger < 5; ++finger) chain(hand, 3);
    }
    for (int side = 0; side < 2; ++side) chain(0, 5); // legs
    return p;
}

std::vector<joint_index> forest(std::size_t trees, std::size_t each) {
    std::vector<joint_index> p;
    for (std::size_t t = 0; t < trees; ++t) {
        const joint_index root = joint_index(p.size());
        p.push_back(-1);
        for (std::size_t i = 1; i < each; ++i) p.push_back(i % 7 == 1 ? root : joint_index(p.size()) - 1);
    }
    return p;
}

/// A lone root before the shape (a .X file's scene root frame, then the armature).
std::vector<joint_index> after_lone_root(const std::vector<joint_index>& shape) {
    std::vector<joint_index> p{-1};
    for (joint_index x : shape) p.push_back(x < 0 ? -1 : x + 1);
    return p;
}

skeleton from_parent_list(const std::vector<joint_index>& parents) {
    std::vector<joint_desc> in(parents.size());
    for (std::size_t j = 0; j < parents.size(); ++j) {
        in[j].name = "j" + std::to_string(j);
        in[j].parent = parents[j];
    }
    return skeleton::from_parents(in).value();
}

// Rigid local transforms: chains hundreds of joints long keep their magnitude.
local_pose rigid_pose(std::size_t n, std::uint32_t seed) {
    kbtest::rng r(seed);
    local_pose p(n);
    for (std::size_t j = 0; j < n; ++j) p.set(j, transform{r.vec3(-1, 1), r.rotation(), glm::vec3(1)});
    return p;
}

/// The same bits (with -ffast-math, within 1e-6 relative: see kbtest::same_computation): two
/// computations of a model matrix by the same products.
bool same_product(const glm::mat4& a, const glm::mat4& b) {
#if defined(__FAST_MATH__)
    return relative_error(a, b) < 1e-6f;
#else
    return bit_equal(a, b);
#endif
}

/// The shapes the local-to-model schedules are tested on.
std::vector<std::vector<joint_index>> model_shapes() {
    std::vector<std::vector<joint_index>> shapes{chain_parents(1), chain_parents(300), two_chains(150),
                                                 two_chains(50),   two_chains(3),      character(),
                                                 forest(5, 40),    forest(40, 7),      after_lone_root(two_chains(20)),
                                                 after_lone_root(character())};
    for (std::size_t n : {9u, 67u, 200u, 400u}) shapes.push_back(random_skeleton(n, std::uint32_t(n) + 3).parents());
    return shapes;
}

} // namespace

TEST_CASE("local_to_model's steps: each joint once, after its parent, from the register that holds it") {
    using M = impl::model_schedule;
    bool some_used = false;
    for (const auto& parents : model_shapes()) {
        const skeleton s = from_parent_list(parents);
        CAPTURE(s.size());
        for (std::size_t w = 0; w < s.size(); w += impl::model_window_joints) {
            const std::size_t end = std::min(s.size(), w + impl::model_window_joints), n = end - w;
            CAPTURE(w);
            std::vector<std::uint32_t> steps;
            const std::size_t count = M::steps(s, w, end, steps);
            REQUIRE(steps.size() == M::slots * count);
            // Each joint's step and slot; its depth in the window (for the bound below).
            std::vector<std::ptrdiff_t> step_of(n, -1), slot_of(n, -1);
            std::vector<std::size_t> depth(n, 1);
            std::size_t deepest = 0;
            for (std::size_t j = w; j < end; ++j) {
                const joint_index p = s.parent(j);
                if (p >= 0 && std::size_t(p) >= w) depth[j - w] = depth[std::size_t(p) - w] + 1;
                deepest = std::max(deepest, depth[j - w]);
            }
            for (std::size_t t = 0; t < count; ++t)
                for (std::size_t r = 0; r < M::slots; ++r) {
                    const std::uint32_t e = steps[M::slots * t + r];
                    if (e == M::no_joint) continue;
                    const std::size_t j = M::entry_joint(e, w);
                    REQUIRE(j >= w);
                    REQUIRE(j < end);
                    CHECK((e & M::rows_bits) == M::rows_offset(j - w));
                    // Nothing outside the fields.
                    CHECK((e & ~(M::rows_bits | std::uint32_t(impl::model_window_joints - 1) << M::joint_shift |
                                 M::parent_in_slot | 3u << M::slot_shift)) == 0u);
                    CHECK(step_of[j - w] == -1); // once
                    step_of[j - w] = std::ptrdiff_t(t);
                    slot_of[j - w] = std::ptrdiff_t(r);
                }
            for (std::size_t j = w; j < end; ++j) CHECK(step_of[j - w] >= 0); // every joint
            for (std::size_t t = 0; t < count; ++t)
                for (std::size_t r = 0; r < M::slots; ++r) {
                    const std::uint32_t e = steps[M::slots * t + r];
                    if (e == M::no_joint) continue;
                    const std::size_t j = M::entry_joint(e, w);
                    const joint_index p = s.parent(j);
                    CAPTURE(j);
                    if (p < 0 || std::size_t(p) < w) {
                        CHECK(!(e & M::parent_in_slot)); // outside the window: from memory
                        continue;
                    }
                    const std::size_t q = std::size_t(p) - w;
                    if (e & M::parent_in_slot) {
                        // The step before, by the slot named.
                        CHECK(step_of[q] == std::ptrdiff_t(t) - 1);
                        CHECK(slot_of[q] == std::ptrdiff_t(e >> M::slot_shift & 3u));
                    } else {
                        CHECK(step_of[q] <= std::ptrdiff_t(t) - 2); // stored two steps before or more
                    }
                }
            // List scheduling by the longest chain: no fewer steps than the depth or the joints /
            // slots need, and no more than both together.
            CHECK(count >= deepest);
            CHECK(count >= (n + M::slots - 1) / M::slots);
            CHECK(count <= deepest + (n + M::slots - 1) / M::slots);
            // What the skeleton keeps: these steps, or none where the two runs are faster.
            const auto kept = M::full_range_steps(s, w / impl::model_window_joints);
            if (kept.second) {
                some_used = true;
                CHECK(kept.second == count);
                CHECK(std::equal(steps.begin(), steps.end(), kept.first));
            }
            if (parents == chain_parents(300)) CHECK(kept.second == 0); // a chain: one joint a step
            if (parents == forest(40, 7)) CHECK(kept.second > 0); // every window of short trees
        }
        if (parents == character() || parents == after_lone_root(character()))
            CHECK(M::full_range_steps(s, 0).second > 0);
    }
    CHECK(some_used);
}

TEST_CASE("local_to_model's two runs: each window splits where no joint of one run needs the other") {
    for (const auto& parents : model_shapes()) {
        const skeleton s = from_parent_list(parents);
        CAPTURE(s.size());
        // The whole skeleton (the split kept in the skeleton) and sub-ranges (computed per call).
        std::vector<std::pair<std::size_t, std::size_t>> ranges;
        for (std::size_t w = 0; w < s.size(); w += impl::model_window_joints)
            ranges.emplace_back(w, std::min(s.size(), w + impl::model_window_joints));
        for (std::size_t j = 0; j < s.size(); j += 1 + s.size() / 7) ranges.emplace_back(j, s.subtree_end(j));
        for (const auto& range : ranges) {
            // (Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.)
            const std::size_t begin = range.first, end = range.second;
            const impl::model_split m = impl::model_schedule::split(s, begin, end);
            CAPTURE(begin);
            CAPTURE(end);
            REQUIRE(begin <= m.first);
            REQUIRE(m.first <= m.middle);
            REQUIRE(m.middle <= end);
            for (std::size_t j = m.middle; j < end; ++j) {
                const joint_index p = s.parent(j);
                CHECK((p < 0 || std::size_t(p) >= m.middle || std::size_t(p) < m.first));
            }
            if (begin % impl::model_window_joints == 0 && end == std::min(s.size(), begin + impl::model_window_joints)) {
                const impl::model_split kept = impl::model_schedule::full_range(s, begin / impl::model_window_joints);
                CHECK(kept.first == m.first);
                CHECK(kept.middle == m.middle);
            }
        }
        // Where the two runs are: under the root, each chain its own (one window); the second
        // window of two longer chains starts inside the first chain and ends inside the second.
        if (parents == two_chains(50)) {
            CHECK(impl::model_schedule::full_range(s, 0).first == 1);
            CHECK(impl::model_schedule::full_range(s, 0).middle == 51);
        }
        // A lone root first: the runs are still the two chains (not the root and the rest).
        if (parents == after_lone_root(two_chains(20))) {
            CHECK(impl::model_schedule::full_range(s, 0).first == 2);
            CHECK(impl::model_schedule::full_range(s, 0).middle == 22);
        }
        if (parents == two_chains(150)) {
            CHECK(impl::model_schedule::full_range(s, 0).first == 128); // one chain: no split
            CHECK(impl::model_schedule::full_range(s, 1).first == 128);
            CHECK(impl::model_schedule::full_range(s, 1).middle == 151);
        }

        const local_pose pose = rigid_pose(s.size(), std::uint32_t(s.size()));
        const glm::mat4 root = glm::translate(glm::mat4(1), glm::vec3(0.5f, -1, 2));
        std::vector<glm::mat4> fast, scalar(s.size());
        local_to_model(s, pose, fast, root);
        impl::local_to_model_range<impl::lanes::f1>(s, pose, 0, s.size(), nullptr, root, scalar.data());
        const std::vector<glm::mat4> ref = reference_model(s, pose, root);
        float worst = 0, worst_ref = 0;
        for (std::size_t j = 0; j < s.size(); ++j) {
            worst = std::max(worst, relative_error(fast[j], scalar[j]));
            worst_ref = std::max(worst_ref, relative_error(fast[j], ref[j]));
        }
        CHECK(worst < 2e-5f);
        CHECK(worst_ref < 2e-5f);
        // The whole skeleton by the two runs (a first parent given keeps them, even where the
        // skeleton has AVX-512 steps): the same bits as local_to_model's.
        std::vector<glm::mat4> runs(s.size());
        impl::local_to_model_range<impl::lanes::native>(s, pose, 0, s.size(), &root, root, runs.data());
        for (std::size_t j = 0; j < s.size(); ++j) CHECK(same_product(runs[j], fast[j]));
        // Every sub-tree again, alone: the same bits as the whole (each joint's product is the
        // same whichever run computes it).
        for (std::size_t joint = 0; joint < s.size(); joint += 1 + s.size() / 5) {
            std::vector<glm::mat4> model = fast;
            for (std::size_t j = joint; j < s.subtree_end(joint); ++j) model[j] = glm::mat4(0.0f);
            local_to_model_job job = job_over(s, &pose, {}, root, joint);
            job.output = model;
            REQUIRE(job.run());
            for (std::size_t j = 0; j < s.size(); ++j) CHECK(same_product(model[j], fast[j]));
        }
    }
}

TEST_CASE("local_to_model_job from local matrices: the classic UpdateHierarchy") {
    const skeleton s = random_skeleton(30, 8);
    const local_pose p = random_pose(30, 9);
    std::vector<glm::mat4> local(30), model;
    REQUIRE(to_local_matrices(p, local));
    const glm::mat4 root = glm::translate(glm::mat4(1), glm::vec3(1, 2, 3));
    local_to_model(s, local, model, root);
    REQUIRE(model.size() == 30);
    // The classic frame update: combined = TransformationMatrix * parent (D3DX order), which is
    // parent * local in GLM's; children recurse, siblings share the parent.
    for (std::size_t j = 0; j < s.size(); ++j) {
        const joint_index q = s.parent(j);
        CHECK(kbtest::matches_product(model[j], (q < 0 ? root : model[std::size_t(q)]) * local[j]));
    }
    std::vector<glm::mat4> from_trs;
    local_to_model(s, p, from_trs, root);
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(relative_error(model[j], from_trs[j]) < 2e-5f);
}

TEST_CASE("local_to_model_job without a root: the same bits as below the identity") {
    const skeleton s = random_skeleton(45, 12);
    const local_pose p = random_pose(45, 13);
    std::vector<glm::mat4> local(45);
    REQUIRE(to_local_matrices(p, local));
    const glm::mat4 identity(1.0f);
    for (const bool matrices : {false, true}) {
        std::vector<glm::mat4> none(45), below_identity(45);
        local_to_model_job job = job_over(s, matrices ? nullptr : &p, local, identity, local_to_model_job::all_joints);
        job.output = below_identity;
        REQUIRE(job.run());
        job.root = nullptr;
        job.output = none;
        REQUIRE(job.validate());
        REQUIRE(job.run());
        for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(none[j], below_identity[j]));
    }
}

TEST_CASE("local_to_model_job `from`: a sub-tree alone, below its parent's model matrix or the root") {
    const skeleton s = random_skeleton(67, 10);
    const local_pose p = random_pose(67, 11);
    std::vector<glm::mat4> local(67);
    REQUIRE(to_local_matrices(p, local));
    const glm::mat4 root = glm::scale(glm::mat4(1), glm::vec3(2));
    std::vector<glm::mat4> full, full_local;
    local_to_model(s, p, full, root);
    local_to_model(s, local, full_local, root);
    for (std::size_t joint : {0u, 1u, 5u, 13u, 40u, 66u}) {
        CAPTURE(joint);
        const glm::mat4 sentinel(12345.0f);
        for (bool matrices : {false, true}) {
            std::vector<glm::mat4> model = matrices ? full_local : full;
            for (std::size_t j = joint; j < s.subtree_end(joint); ++j) model[j] = sentinel;
            local_to_model_job job = job_over(s, matrices ? nullptr : &p, local, root, joint);
            job.output = model;
            REQUIRE(job.validate());
            REQUIRE(job.run());
            for (std::size_t j = 0; j < s.size(); ++j)
                CHECK(bit_equal(model[j], matrices ? full_local[j] : full[j]));
        }
        // Everything outside the sub-tree is left alone: the parent's matrix is what is in the
        // output (here a made-up one), and the sub-tree follows it.
        std::vector<glm::mat4> only(s.size(), sentinel);
        const glm::mat4 parent = glm::translate(glm::mat4(1), glm::vec3(0, 3, 0));
        const joint_index up = s.parent(joint);
        if (up >= 0) only[std::size_t(up)] = parent;
        local_to_model_job job;
        job.skeleton = &s;
        job.input = &p;
        job.root = &parent; // (used when `joint` is a root)
        job.from = joint;
        job.output = only;
        REQUIRE(job.run());
        for (std::size_t j = 0; j < s.size(); ++j) {
            if (!s.is_in_subtree(j, joint)) {
                if (joint_index(j) != up) CHECK(bit_equal(only[j], sentinel));
                continue;
            }
            const joint_index q = s.parent(j);
            const glm::mat4 above = j == joint ? parent : only[std::size_t(q)];
            CHECK(relative_error(only[j], above * to_matrix(p.get(j))) < 2e-5f);
        }
    }
}

TEST_CASE("local_to_model_job with bones: the palette too, with palette_job's bits") {
    const skeleton s = random_skeleton(67, 21);
    const local_pose p = random_pose(67, 22);
    std::vector<glm::mat4> local(67);
    REQUIRE(to_local_matrices(p, local));
    kbtest::rng rng(23);
    std::vector<skin_bone> bones;
    for (std::size_t b = 0; b < 30; ++b) {
        const local_pose offset_pose = random_pose(1, std::uint32_t(100 + b));
        bones.push_back({"bone " + std::to_string(b), std::size_t(rng.integer(0, 66)),
                         glm::inverse(to_matrix(offset_pose.get(0)))});
    }
    const glm::mat4 root = glm::translate(glm::mat4(1), glm::vec3(1, -2, 0.5f));
    const glm::mat4 sentinel(12345.0f);
    for (bool matrices : {false, true})
        for (std::size_t from : {local_to_model_job::all_joints, std::size_t(13)}) {
            CAPTURE(matrices);
            CAPTURE(from);
            local_to_model_job job = job_over(s, matrices ? nullptr : &p, local, root, from);
            // Without bones, then palette_job: what the job with bones must give, bit for bit.
            std::vector<glm::mat4> model(67), want(32, sentinel);
            if (from != local_to_model_job::all_joints) { // the rest of the pose is current
                local_to_model_job whole = job;
                whole.from = local_to_model_job::all_joints;
                whole.output = model;
                REQUIRE(whole.run());
            }
            std::vector<glm::mat4> with_bones = model;
            job.output = model;
            REQUIRE(job.run());
            palette_job separate;
            separate.model = model;
            separate.bones = bones;
            separate.output = want;
            REQUIRE(separate.run());

            std::vector<glm::mat4> palette(32, sentinel);
            job.output = with_bones;
            job.bones = bones;
            job.palette = palette;
            REQUIRE(job.validate());
            REQUIRE(job.run());
            for (std::size_t j = 0; j < 67; ++j) CHECK(bit_equal(with_bones[j], model[j]));
            for (std::size_t b = 0; b < 32; ++b) CHECK(bit_equal(palette[b], want[b])); // 30, 31 untouched
            CHECK(kbtest::product_matches(palette[7], model[bones[7].joint] * bones[7].offset));
        }
}

TEST_CASE("local_to_model_job with bones: palette_job's errors, naming the bone, and nothing written") {
    const skeleton s = random_skeleton(6, 25);
    const local_pose p = random_pose(6, 26);
    const glm::mat4 sentinel(12345.0f);
    std::vector<glm::mat4> model(6, sentinel), palette(3, sentinel);
    std::vector<skin_bone> bones{{"hip", 0, glm::mat4(1)}, {"knee", 4, glm::mat4(2)}, {"toe", 5, glm::mat4(1)}};
    local_to_model_job job = job_over(s, &p, {}, glm::mat4(1.0f), local_to_model_job::all_joints);
    job.output = model;
    job.bones = bones;
    job.palette = palette;
    REQUIRE(job.validate());
    const auto rejected = [&](const local_to_model_job& bad, errc code, const std::string& words) {
        std::fill(model.begin(), model.end(), sentinel);
        std::fill(palette.begin(), palette.end(), sentinel);
        for (const status& st : {bad.validate(), bad.run()}) {
            REQUIRE_FALSE(st);
            CHECK(st.error().code == code);
            CHECK(st.error().message.find(words) != std::string::npos);
        }
        for (const glm::mat4& m : model) CHECK(bit_equal(m, sentinel));
        for (const glm::mat4& m : palette) CHECK(bit_equal(m, sentinel));
        return bad.validate().error();
    };
    local_to_model_job bad = job;
    bad.palette = span<glm::mat4>(palette.data(), 2);
    rejected(bad, errc::size_mismatch, "local_to_model_job: 3 bones but room for 2 palette matrices");
    bad.palette = span<glm::mat4>(nullptr, 3);
    rejected(bad, errc::invalid_argument, "null data");
    bones[1].joint = 6;
    bad = job;
    CHECK(rejected(bad, errc::out_of_range, "bone 1 'knee': joint 6 is outside the pose (6 joints)").index == 1);
    // The job's own errors come first.
    bad.output = span<glm::mat4>(model.data(), 5);
    rejected(bad, errc::size_mismatch, "room for 5 model matrices");
    // Bones without a palette: no room; a palette without bones: nothing to compute.
    bones[1].joint = 4;
    bad = job;
    bad.palette = {};
    rejected(bad, errc::size_mismatch, "3 bones but room for 0");
    bad = job;
    bad.bones = {};
    std::fill(palette.begin(), palette.end(), sentinel);
    REQUIRE(bad.run());
    for (const glm::mat4& m : palette) CHECK(bit_equal(m, sentinel));
}

TEST_CASE("local_to_model_job and to_local_matrices write into caller memory: a plain array") {
    const std::size_t n = 23;
    const skeleton s = random_skeleton(n, 13);
    const local_pose p = random_pose(n, 14);
    const glm::mat4 root = glm::translate(glm::mat4(1), glm::vec3(-1, 0.5f, 2));
    std::vector<glm::mat4> expect, expect_local(n), expect_from_local;
    local_to_model(s, p, expect, root);
    REQUIRE(to_local_matrices(p, expect_local));
    local_to_model(s, expect_local, expect_from_local, root);
    const glm::mat4 sentinel(12345.0f);

    glm::mat4 model[n + 2];
    for (glm::mat4& m : model) m = sentinel;
    local_to_model_job job;
    job.skeleton = &s;
    job.input = &p;
    job.root = &root;
    job.output = model;
    REQUIRE(job.run());
    for (std::size_t j = 0; j < n; ++j) CHECK(bit_equal(model[j], expect[j]));
    CHECK(bit_equal(model[n], sentinel)); // past the skeleton: untouched
    CHECK(bit_equal(model[n + 1], sentinel));

    glm::mat4 local[n];
    REQUIRE(to_local_matrices(p, local));
    for (std::size_t j = 0; j < n; ++j) CHECK(bit_equal(local[j], expect_local[j]));
    glm::mat4 from_local[n];
    local_to_model_job from_matrices;
    from_matrices.skeleton = &s;
    from_matrices.input_matrices = local;
    from_matrices.root = &root;
    from_matrices.output = from_local;
    REQUIRE(from_matrices.run());
    for (std::size_t j = 0; j < n; ++j) CHECK(bit_equal(from_local[j], expect_from_local[j]));
}

TEST_CASE("local_to_model_job: every invalid configuration is an error, and nothing is written") {
    const skeleton s = random_skeleton(6, 15);
    const local_pose p = random_pose(6, 16);
    const glm::mat4 sentinel(12345.0f);
    glm::mat4 model[6], local[6];
    for (glm::mat4& m : model) m = sentinel;
    for (glm::mat4& m : local) m = glm::mat4(1.0f);
    const auto untouched = [&] {
        for (const glm::mat4& m : model)
            if (!bit_equal(m, sentinel)) return false;
        return true;
    };
    const auto expect = [&](const local_to_model_job& job, errc code, const char* mentions) {
        for (const status& st : {job.validate(), job.run()}) {
            REQUIRE_FALSE(st);
            CHECK(st.error().code == code);
            CHECK(st.error().message.find(mentions) != std::string::npos);
            CHECK(untouched());
        }
    };
    const auto job_of = [&](const local_pose* in, span<const glm::mat4> matrices, span<glm::mat4> out) {
        local_to_model_job job;
        job.skeleton = &s;
        job.input = in;
        job.input_matrices = matrices;
        job.output = out;
        return job;
    };
    const local_pose five(5);
    expect(job_of(&p, {}, span<glm::mat4>(model, 5)), errc::size_mismatch, "room for 5");
    expect(job_of(&five, {}, model), errc::size_mismatch, "local pose has 5");
    expect(job_of(&p, {}, span<glm::mat4>(nullptr, 6)), errc::invalid_argument, "null");
    expect(job_of(nullptr, span<const glm::mat4>(local, 5), model), errc::size_mismatch, "local pose has 5");
    expect(job_of(nullptr, span<const glm::mat4>(nullptr, 6), model), errc::invalid_argument, "local matrices are null");
    expect(job_of(nullptr, {}, model), errc::invalid_argument, "neither input");
    expect(job_of(&p, local, model), errc::invalid_argument, "both input");
    local_to_model_job no_skeleton = job_of(&p, {}, model);
    no_skeleton.skeleton = nullptr;
    expect(no_skeleton, errc::invalid_argument, "no skeleton");
    local_to_model_job bad_from = job_of(&p, {}, model);
    bad_from.from = 6;
    expect(bad_from, errc::out_of_range, "from joint 6");
    // validate() also looks at the values: a NaN in the input, naming the joint.
    local_pose nan = p;
    transform t = nan.get(4);
    t.translation.y = NAN;
    nan.set(4, t);
    const status st = job_of(&nan, {}, model).validate();
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::non_finite);
    CHECK(st.error().index == 4);
    CHECK(untouched());
    local[2][1][1] = INFINITY;
    const status sm = job_of(nullptr, local, model).validate();
    REQUIRE_FALSE(sm);
    CHECK(sm.error().index == 2);
    // Other size errors of the conversions.
        CHECK_FALSE(to_local_matrices(p, span<glm::mat4>(model, 5)));
    CHECK_FALSE(reset_to_bind(s, span<glm::mat4>(model, 5)));
    CHECK(untouched());
    // An empty skeleton needs no memory.
    const skeleton empty = skeleton::from_parents({}).value();
    const local_pose none;
    local_to_model_job e;
    e.skeleton = &empty;
    e.input = &none;
    CHECK(e.run());
    CHECK(e.validate());
}
