#include <keyblend/skeleton.hpp>

#include "helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <string>
#include <vector>

using namespace keyblend;
using kbtest::bit_equal;
using kbtest::max_abs_diff;

namespace {

glm::mat4 trs(glm::vec3 t, glm::quat r, glm::vec3 s) { return to_matrix(transform{t, r, s}); }

// A small biped-like tree given in pre-order:
//   0 root
//   1   hips
//   2     leg_l
//   3       foot_l
//   4     leg_r
//   5       foot_r
//   6   spine
//   7     arm_l
//   8     arm_r
std::vector<joint_desc> preorder_joints() {
    kbtest::rng rng(3);
    const char* names[] = {"root", "hips", "leg_l", "foot_l", "leg_r", "foot_r", "spine", "arm_l", "arm_r"};
    const joint_index parents[] = {-1, 0, 1, 2, 1, 4, 0, 6, 6};
    std::vector<joint_desc> out;
    for (int i = 0; i < 9; ++i)
        out.push_back({names[i], parents[i], trs(rng.vec3(-1, 1), rng.rotation(), rng.vec3(0.5f, 2.0f))});
    return out;
}

} // namespace

TEST_CASE("a skeleton given in pre-order keeps its order, with an identity mapping") {
    const auto joints = preorder_joints();
    const result<skeleton> r = skeleton::from_parents(joints);
    REQUIRE(r);
    const skeleton& sk = *r;
    REQUIRE(sk.size() == 9);
    for (std::size_t j = 0; j < sk.size(); ++j) {
        CHECK(sk.name(j) == joints[j].name);
        CHECK(sk.parent(j) == joints[j].parent);
        CHECK(bit_equal(sk.bind_local()[j], joints[j].bind_local));
        CHECK(sk.joint_of_source()[j] == j);
        CHECK(sk.source_of_joint()[j] == j);
    }
    CHECK(sk.subtree_end(0) == 9);
    CHECK(sk.subtree_end(1) == 6);
    CHECK(sk.subtree_end(2) == 4);
    CHECK(sk.subtree_end(3) == 4);
    CHECK(sk.subtree_end(6) == 9);
    CHECK(sk.subtree_end(8) == 9);
    CHECK(sk.is_in_subtree(5, 1));
    CHECK_FALSE(sk.is_in_subtree(7, 1));
}

TEST_CASE("joints in any order are reordered parent-first, and the mapping is kept") {
    const auto pre = preorder_joints();
    kbtest::rng rng(4);
    for (int trial = 0; trial < 50; ++trial) {
        // Shuffle the input, rewriting parents to the shuffled indices.
        std::vector<std::size_t> perm(pre.size());
        for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng.engine());
        std::vector<std::size_t> where(pre.size());
        for (std::size_t i = 0; i < perm.size(); ++i) where[perm[i]] = i;
        std::vector<joint_desc> shuffled(pre.size());
        for (std::size_t i = 0; i < perm.size(); ++i) {
            shuffled[i] = pre[perm[i]];
            if (shuffled[i].parent >= 0)
                shuffled[i].parent = static_cast<joint_index>(where[static_cast<std::size_t>(shuffled[i].parent)]);
        }
        const result<skeleton> r = skeleton::from_parents(shuffled);
        REQUIRE(r);
        const skeleton& sk = *r;
        REQUIRE(sk.size() == pre.size());
        for (std::size_t j = 0; j < sk.size(); ++j) {
            // Parent first.
            CHECK(sk.parent(j) < static_cast<joint_index>(j));
            // The mapping is consistent both ways and with the input.
            const std::size_t s = sk.source_of_joint()[j];
            CHECK(sk.joint_of_source()[s] == j);
            CHECK(sk.name(j) == shuffled[s].name);
            CHECK(bit_equal(sk.bind_local()[j], shuffled[s].bind_local));
            const joint_index p = shuffled[s].parent;
            CHECK(sk.parent(j) == (p < 0 ? no_parent : static_cast<joint_index>(sk.joint_of_source()[static_cast<std::size_t>(p)])));
            // Sub-trees are contiguous: every joint in [j, end) descends from j.
            for (std::size_t k = j + 1; k < sk.subtree_end(j); ++k) {
                joint_index a = sk.parent(k);
                while (a > static_cast<joint_index>(j)) a = sk.parent(static_cast<std::size_t>(a));
                CHECK(a == static_cast<joint_index>(j));
            }
        }
        // Bind model matrices are the same transforms whatever the input order.
        for (std::size_t i = 0; i < pre.size(); ++i) {
            const std::size_t j = sk.joint_of_source()[where[i]];
            CHECK(sk.name(j) == pre[i].name);
        }
    }
}

TEST_CASE("children keep their input order, and so do several roots") {
    // Input: two roots (2 then 3); the children of root 3 are inputs 0 then 1.
    std::vector<joint_desc> in = {
        {"rootB_child", 3, glm::mat4(1)}, // 0
        {"b1", 3, glm::mat4(1)},          // 1
        {"rootA", -1, glm::mat4(1)},      // 2
        {"rootB", -1, glm::mat4(1)},      // 3
        {"a1", 2, glm::mat4(1)},          // 4
    };
    const result<skeleton> r = skeleton::from_parents(in);
    REQUIRE(r);
    const std::vector<std::string> expect = {"rootA", "a1", "rootB", "rootB_child", "b1"};
    REQUIRE(r->size() == expect.size());
    for (std::size_t j = 0; j < expect.size(); ++j) CHECK(r->name(j) == expect[j]);
    CHECK(r->parent(0) == no_parent);
    CHECK(r->parent(2) == no_parent);
    CHECK(r->parent(3) == 2);
    CHECK(r->parent(4) == 2);
}

TEST_CASE("bind pose: local matrices as given, TRS, model matrices and their inverses") {
    const auto joints = preorder_joints();
    const skeleton sk = skeleton::from_parents(joints).value();
    for (std::size_t j = 0; j < sk.size(); ++j) {
        const transform& t = sk.bind_transforms()[j];
        CHECK(max_abs_diff(to_matrix(t), sk.bind_local()[j]) < 1e-5f);
        const glm::mat4 expect = sk.parent(j) < 0 ? sk.bind_local()[j]
                                                  : sk.bind_model()[static_cast<std::size_t>(sk.parent(j))] * sk.bind_local()[j];
        CHECK(kbtest::matches_product(sk.bind_model()[j], expect));
        CHECK(max_abs_diff(sk.bind_model()[j] * sk.inverse_bind_model()[j], glm::mat4(1.0f)) < 1e-4f);
    }
}

TEST_CASE("a singular bind model matrix has the identity as its inverse (never NaN)") {
    std::vector<joint_desc> in = {{"flat", -1, glm::scale(glm::mat4(1.0f), glm::vec3(1, 0, 1))},
                                  {"child", 0, glm::mat4(1)}};
    const skeleton sk = skeleton::from_parents(in).value();
    CHECK(sk.inverse_bind_model()[0] == glm::mat4(1.0f));
    CHECK(sk.inverse_bind_model()[1] == glm::mat4(1.0f));
    CHECK(is_finite(sk.bind_transforms()[0].rotation));
}

TEST_CASE("lookup by name is exact and reports a missing name") {
    const skeleton sk = skeleton::from_parents(preorder_joints()).value();
    for (std::size_t j = 0; j < sk.size(); ++j) {
        REQUIRE(sk.find(sk.name(j)));
        CHECK(*sk.find(sk.name(j)) == j);
    }
    const result<std::size_t> missing = sk.find("Spine");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == errc::not_found);
    CHECK(missing.error().message.find("'Spine'") != std::string::npos);
    CHECK_FALSE(sk.find(""));
    CHECK_FALSE(sk.find("zzz"));
}

TEST_CASE("an empty joint list is an empty skeleton") {
    const result<skeleton> r = skeleton::from_parents({});
    REQUIRE(r);
    CHECK(r->empty());
    CHECK(r->size() == 0);
    CHECK_FALSE(r->find("x"));
    CHECK(skeleton{}.empty());
    const result<skeleton> f = skeleton::from_frame_tree({}, 7);
    REQUIRE(f);
    CHECK(f->empty());
}

TEST_CASE("invalid parent arrays are rejected with the joint named") {
    SUBCASE("parent out of range") {
        const result<skeleton> r = skeleton::from_parents({{"a", -1, glm::mat4(1)}, {"b", 2, glm::mat4(1)}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::out_of_range);
        CHECK(r.error().index == 1);
        CHECK(r.error().message.find("joint 1 'b'") != std::string::npos);
        CHECK(r.error().message.find("parent 2") != std::string::npos);
    }
    SUBCASE("parent below -1") {
        const result<skeleton> r = skeleton::from_parents({{"a", -2, glm::mat4(1)}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::out_of_range);
        CHECK(r.error().index == 0);
    }
    SUBCASE("a joint that is its own parent") {
        const result<skeleton> r =
            skeleton::from_parents({{"a", -1, glm::mat4(1)}, {"self", 1, glm::mat4(1)}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::cycle);
        CHECK(r.error().index == 1);
        CHECK(r.error().message.find("'self' is its own parent") != std::string::npos);
    }
    SUBCASE("a loop of three, with a joint hanging below it") {
        const result<skeleton> r = skeleton::from_parents({{"root", -1, glm::mat4(1)},
                                                           {"below", 2, glm::mat4(1)},
                                                           {"x", 3, glm::mat4(1)},
                                                           {"y", 4, glm::mat4(1)},
                                                           {"z", 2, glm::mat4(1)}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::cycle);
        CHECK(r.error().message.find("parent chain loops") != std::string::npos);
        CHECK(r.error().message.find("'x' (2)") != std::string::npos);
        CHECK(r.error().message.find("'y' (3)") != std::string::npos);
        CHECK(r.error().message.find("'z' (4)") != std::string::npos);
        CHECK(r.error().message.find("'below'") == std::string::npos);
    }
    SUBCASE("no root at all") {
        const result<skeleton> r = skeleton::from_parents({{"a", 1, glm::mat4(1)}, {"b", 0, glm::mat4(1)}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::cycle);
    }
    SUBCASE("a non-finite bind matrix") {
        glm::mat4 m(1.0f);
        m[3][1] = NAN;
        const result<skeleton> r = skeleton::from_parents({{"a", -1, glm::mat4(1)}, {"bad", 0, m}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::non_finite);
        CHECK(r.error().index == 1);
        CHECK(r.error().message.find("'bad'") != std::string::npos);
    }
}

TEST_CASE("duplicate names: rejected by default, or renamed on request") {
    const std::vector<joint_desc> in = {{"hip", -1, glm::mat4(1)},
                                        {"leg", 0, glm::mat4(1)},
                                        {"leg", 0, glm::mat4(1)},
                                        {"leg#2", 0, glm::mat4(1)},
                                        {"leg", 0, glm::mat4(1)},
                                        {"", 0, glm::mat4(1)},
                                        {"", 0, glm::mat4(1)}};
    SUBCASE("reject") {
        const result<skeleton> r = skeleton::from_parents(in);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::duplicate);
        CHECK(r.error().index == 2);
        CHECK(r.error().message == "joint 2 'leg': same name as joint 1");
    }
    SUBCASE("rename") {
        skeleton_options o;
        o.duplicates = duplicate_names::rename;
        const result<skeleton> r = skeleton::from_parents(in, o);
        REQUIRE(r);
        const auto& j = r->joint_of_source();
        CHECK(r->name(j[1]) == "leg");
        CHECK(r->name(j[2]) == "leg#3"); // "leg#2" belongs to input 3
        CHECK(r->name(j[3]) == "leg#2");
        CHECK(r->name(j[4]) == "leg#4");
        CHECK(r->name(j[5]) == "");
        CHECK(r->name(j[6]) == "#2");
        // Every name is unique and findable.
        for (std::size_t k = 0; k < r->size(); ++k) CHECK(r->find(r->name(k)).value() == k);
    }
    SUBCASE("two unnamed joints are duplicates too") {
        const result<skeleton> r =
            skeleton::from_parents({{"", -1, glm::mat4(1)}, {"", 0, glm::mat4(1)}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::duplicate);
    }
}

TEST_CASE("a first-child / next-sibling frame tree (the D3DXFRAME shape)") {
    // Frames stored in an arbitrary order; root 4 with a sibling root 2.
    //   4 Root        children: 0 (Hips), 3 (Spine)
    //   0   Hips      children: 1 (Leg)
    //   1     Leg
    //   3   Spine
    //   2 Other root
    std::vector<frame_desc> f(5);
    f[4] = {"Root", glm::translate(glm::mat4(1), glm::vec3(0, 1, 0)), 0, 2};
    f[0] = {"Hips", glm::translate(glm::mat4(1), glm::vec3(0, 2, 0)), 1, 3};
    f[1] = {"Leg", glm::translate(glm::mat4(1), glm::vec3(0, 3, 0)), -1, -1};
    f[3] = {"Spine", glm::mat4(1), -1, -1};
    f[2] = {"Other", glm::mat4(1), -1, -1};
    const result<skeleton> r = skeleton::from_frame_tree(f, 4);
    REQUIRE(r);
    const std::vector<std::string> names = {"Root", "Hips", "Leg", "Spine", "Other"};
    const std::vector<joint_index> parents = {-1, 0, 1, 0, -1};
    REQUIRE(r->size() == 5);
    for (std::size_t j = 0; j < 5; ++j) {
        CHECK(r->name(j) == names[j]);
        CHECK(r->parent(j) == parents[j]);
    }
    CHECK(r->source_of_joint() == std::vector<std::size_t>{4, 0, 1, 3, 2});
    CHECK(r->joint_of_source() == std::vector<std::size_t>{1, 2, 4, 3, 0});
    CHECK(r->bind_model()[2][3] == glm::vec4(0, 6, 0, 1));
    CHECK(r->subtree_end(0) == 4);
}

TEST_CASE("invalid frame trees are rejected with the frame named") {
    SUBCASE("root out of range") {
        const result<skeleton> r = skeleton::from_frame_tree({frame_desc{"a", glm::mat4(1), -1, -1}}, 1);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::out_of_range);
    }
    SUBCASE("child link out of range") {
        const result<skeleton> r = skeleton::from_frame_tree({frame_desc{"a", glm::mat4(1), 5, -1}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::out_of_range);
        CHECK(r.error().message.find("frame 0 'a': first_child 5") != std::string::npos);
    }
    SUBCASE("sibling link below -1") {
        const result<skeleton> r = skeleton::from_frame_tree({frame_desc{"a", glm::mat4(1), -1, -4}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::out_of_range);
    }
    SUBCASE("a loop") {
        const result<skeleton> r = skeleton::from_frame_tree(
            {frame_desc{"a", glm::mat4(1), 1, -1}, frame_desc{"b", glm::mat4(1), 0, -1}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::cycle);
        CHECK(r.error().index == 0);
        CHECK(r.error().message.find("reached twice") != std::string::npos);
    }
    SUBCASE("a frame linked from two places") {
        const result<skeleton> r = skeleton::from_frame_tree({frame_desc{"a", glm::mat4(1), 1, -1},
                                                              frame_desc{"b", glm::mat4(1), 2, 2},
                                                              frame_desc{"c", glm::mat4(1), -1, -1}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::cycle);
        CHECK(r.error().index == 2);
    }
    SUBCASE("an unreachable frame") {
        const result<skeleton> r = skeleton::from_frame_tree(
            {frame_desc{"a", glm::mat4(1), -1, -1}, frame_desc{"lost", glm::mat4(1), -1, -1}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::not_found);
        CHECK(r.error().message.find("frame 1 'lost' is not reachable") != std::string::npos);
    }
    SUBCASE("duplicate names") {
        const result<skeleton> r = skeleton::from_frame_tree(
            {frame_desc{"a", glm::mat4(1), 1, -1}, frame_desc{"a", glm::mat4(1), -1, -1}});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::duplicate);
        CHECK(r.error().message == "frame 1 'a': same name as frame 0");
    }
}

TEST_CASE("a chain a million joints deep builds without recursion, in any input order" *
          doctest::test_suite("deep")) {
    constexpr std::size_t n = 1000000;
    // Parents after their children (the chain given deepest first): the walk must reorder it.
    std::vector<joint_desc> chain(n);
    for (std::size_t i = 0; i < n; ++i) {
        chain[i].name = "j" + std::to_string(i);
        chain[i].parent = i + 1 < n ? static_cast<joint_index>(i + 1) : no_parent;
        chain[i].bind_local[3].y = 1.0f;
    }
    const result<skeleton> r = skeleton::from_parents(chain);
    REQUIRE(r);
    CHECK(r->subtree_end(0) == n);
    CHECK(r->subtree_end(n - 1) == n);
    CHECK(r->name(0) == "j999999");
    CHECK(r->name(n - 1) == "j0");
    CHECK(r->joint_of_source()[0] == n - 1);
    CHECK(r->bind_model()[n - 1][3].y == float(n));
    // A parent loop through the whole chain is found without recursion too.
    chain[n - 1].parent = 0;
    const result<skeleton> loop = skeleton::from_parents(chain);
    REQUIRE_FALSE(loop);
    CHECK(loop.error().code == errc::cycle);
    std::vector<frame_desc> frames(n);
    for (std::size_t i = 0; i < n; ++i) {
        frames[i].name = chain[i].name;
        frames[i].first_child = i + 1 < n ? static_cast<joint_index>(i + 1) : -1;
    }
    const result<skeleton> f = skeleton::from_frame_tree(frames);
    REQUIRE(f);
    CHECK(f->parent(n - 1) == static_cast<joint_index>(n - 2));
    CHECK(f->subtree_end(0) == n);
    frames[n - 1].first_child = 0;
    CHECK(skeleton::from_frame_tree(frames).error().code == errc::cycle);
}
