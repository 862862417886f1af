// morph_job: the glTF morph sum against a double-precision reference, the SIMD path against the
// scalar one, layouts, ranges, in-place morphing, and every invalid configuration.
#include "helpers.hpp"

#include <keyblend/morph.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace keyblend;

namespace {

/// A mesh of n vertices with `t` targets (positions, normals, tangents), random values.
struct morph_case {
    std::vector<glm::vec3> positions, normals;
    std::vector<glm::vec4> tangents;
    std::vector<std::vector<glm::vec3>> dp, dn, dt;
    std::vector<float> weights;
    std::vector<morph_target_streams> streams;

    morph_case(std::size_t n, std::size_t t, std::uint32_t seed) {
        kbtest::rng r(seed);
        for (std::size_t v = 0; v < n; ++v) {
            positions.push_back(r.vec3(-2, 2));
            normals.push_back(glm::normalize(r.vec3(-1, 1) + glm::vec3(0.01f)));
            tangents.push_back(glm::vec4(r.vec3(-1, 1), v % 2 ? 1.0f : -1.0f));
        }
        dp.resize(t), dn.resize(t), dt.resize(t);
        for (std::size_t k = 0; k < t; ++k) {
            for (std::size_t v = 0; v < n; ++v) {
                dp[k].push_back(r.vec3(-0.5f, 0.5f));
                dn[k].push_back(r.vec3(-0.2f, 0.2f));
                dt[k].push_back(r.vec3(-0.2f, 0.2f));
            }
            weights.push_back(r.uniform(-0.5f, 1.5f));
        }
        for (std::size_t k = 0; k < t; ++k) streams.push_back({make_span(dp[k]), make_span(dn[k]), make_span(dt[k])});
    }
    morph_job job(std::vector<glm::vec3>& op, std::vector<glm::vec3>& on, std::vector<glm::vec4>& ot) const {
        op.assign(positions.size(), glm::vec3(-77.0f));
        on.assign(positions.size(), glm::vec3(-77.0f));
        ot.assign(positions.size(), glm::vec4(-77.0f));
        morph_job j;
        j.targets = streams;
        j.weights = weights;
        j.in_positions = make_span(positions);
        j.out_positions = make_span(op);
        j.in_normals = make_span(normals);
        j.out_normals = make_span(on);
        j.in_tangents = make_span(tangents);
        j.out_tangents = make_span(ot);
        return j;
    }
    /// in + sum w d, in double, and the magnitude summed (for the tolerance).
    glm::dvec3 expected(const std::vector<std::vector<glm::vec3>>& d, const glm::vec3& in, std::size_t v,
                        double& magnitude) const {
        glm::dvec3 e(in);
        magnitude = glm::length(glm::dvec3(in));
        for (std::size_t k = 0; k < d.size(); ++k) {
            e += double(weights[k]) * glm::dvec3(d[k][v]);
            magnitude += std::fabs(weights[k]) * glm::length(glm::dvec3(d[k][v]));
        }
        return e;
    }
};

/// Stated tolerance between the SIMD and scalar paths, and against the double reference: 1e-6 of
/// the magnitudes summed (a few float ulps of each term).
bool within(const glm::dvec3& a, const glm::dvec3& b, double magnitude) {
    const glm::dvec3 d = glm::abs(a - b);
    return std::max(d.x, std::max(d.y, d.z)) <= 1e-6 * std::max(1.0, magnitude);
}

} // namespace

TEST_CASE("morph_job: out = in + sum of weighted displacements, SIMD against scalar, tangent w copied") {
    for (std::size_t n : {1u, 7u, 16u, 37u, 100u}) {
        CAPTURE(n);
        const morph_case m(n, 3, 11u + static_cast<std::uint32_t>(n));
        std::vector<glm::vec3> op, on, sp, sn;
        std::vector<glm::vec4> ot, st;
        const morph_job fast = m.job(op, on, ot);
        REQUIRE(fast.validate());
        REQUIRE(fast.run());
        const morph_job slow = m.job(sp, sn, st);
        REQUIRE(impl::run_morph<impl::lanes::f1>(slow));
        for (std::size_t v = 0; v < n; ++v) {
            double mp = 0, mn = 0, mt = 0;
            const glm::dvec3 ep = m.expected(m.dp, m.positions[v], v, mp);
            const glm::dvec3 en = m.expected(m.dn, m.normals[v], v, mn);
            const glm::dvec3 et = m.expected(m.dt, glm::vec3(m.tangents[v]), v, mt);
            CHECK(within(glm::dvec3(op[v]), ep, mp));
            CHECK(within(glm::dvec3(on[v]), en, mn));
            CHECK(within(glm::dvec3(glm::vec3(ot[v])), et, mt));
            CHECK(ot[v].w == m.tangents[v].w);
            CHECK(within(glm::dvec3(op[v]), glm::dvec3(sp[v]), mp));
            CHECK(within(glm::dvec3(on[v]), glm::dvec3(sn[v]), mn));
            CHECK(within(glm::dvec3(glm::vec3(ot[v])), glm::dvec3(glm::vec3(st[v])), mt));
            CHECK(st[v].w == m.tangents[v].w);
        }
    }
}

TEST_CASE("morph_job: weights of exactly 0 are skipped: all zero gives the input bit for bit") {
    morph_case m(21, 4, 5);
    m.weights.assign(4, 0.0f);
    // A zero-weight target is not read: even NaN displacements change nothing and pass validate.
    m.dp[2][3] = glm::vec3(std::numeric_limits<float>::quiet_NaN());
    std::vector<glm::vec3> op, on;
    std::vector<glm::vec4> ot;
    const morph_job j = m.job(op, on, ot);
    CHECK(j.validate());
    REQUIRE(j.run());
    for (std::size_t v = 0; v < m.positions.size(); ++v) {
        CHECK(kbtest::bit_equal(op[v], m.positions[v]));
        CHECK(kbtest::bit_equal(on[v], m.normals[v]));
        CHECK(kbtest::bit_equal(ot[v], m.tangents[v]));
    }
    // One target on: the others (0) do not contribute.
    m.weights[1] = 0.25f;
    const morph_job one = m.job(op, on, ot);
    REQUIRE(one.run());
    for (std::size_t v = 0; v < m.positions.size(); ++v)
        CHECK(kbtest::max_abs_diff(op[v], m.positions[v] + 0.25f * m.dp[1][v]) <= 1e-6f);
}

TEST_CASE("morph_job: interleaved vertices (one at a time) equal packed streams (SIMD), in place too") {
    struct vertex {
        glm::vec3 position;
        float pad0;
        glm::vec3 normal;
        float pad1;
    };
    const morph_case m(45, 2, 9);
    std::vector<glm::vec3> op, on;
    std::vector<glm::vec4> ot;
    morph_job packed = m.job(op, on, ot);
    packed.in_tangents = {};
    packed.out_tangents = {};
    REQUIRE(packed.run());
    std::vector<vertex> buffer(m.positions.size());
    for (std::size_t v = 0; v < buffer.size(); ++v) buffer[v] = {m.positions[v], 0.0f, m.normals[v], 0.0f};
    morph_job inter;
    inter.targets = m.streams;
    inter.weights = m.weights;
    strided_span<float> p{&buffer[0].position.x, buffer.size(), sizeof(vertex), sizeof(float)};
    strided_span<float> nrm{&buffer[0].normal.x, buffer.size(), sizeof(vertex), sizeof(float)};
    inter.in_positions = p;
    inter.out_positions = p; // in place
    inter.in_normals = nrm;
    inter.out_normals = nrm;
    REQUIRE(inter.validate());
    REQUIRE(inter.run());
    for (std::size_t v = 0; v < buffer.size(); ++v) {
        CHECK(kbtest::max_abs_diff(buffer[v].position, op[v]) <= 2e-6f);
        CHECK(kbtest::max_abs_diff(buffer[v].normal, on[v]) <= 2e-6f);
    }
}

TEST_CASE("morph_job: a range writes its vertices only") {
    const morph_case m(30, 2, 3);
    std::vector<glm::vec3> op, on;
    std::vector<glm::vec4> ot;
    morph_job j = m.job(op, on, ot);
    j.range = {5, 17};
    REQUIRE(j.run());
    for (std::size_t v = 0; v < 30; ++v) {
        const bool inside = v >= 5 && v < 17;
        CHECK((op[v] == glm::vec3(-77.0f)) == !inside);
        CHECK((ot[v] == glm::vec4(-77.0f)) == !inside);
    }
}

TEST_CASE("morph_job: every invalid configuration is named, and run() writes nothing") {
    const morph_case m(8, 2, 4);
    std::vector<glm::vec3> op, on;
    std::vector<glm::vec4> ot;
    const auto fails = [&](morph_job j, errc code, const char* part) {
        const status v = j.validate();
        REQUIRE_FALSE(v);
        CHECK(v.error().code == code);
        CHECK(v.error().message.find(part) != std::string::npos);
        const status r = j.run();
        if (code != errc::non_finite) {
            REQUIRE_FALSE(r);
            CHECK(r.error().message == v.error().message);
            for (const glm::vec3& p : op) CHECK(p == glm::vec3(-77.0f));
        }
        return v.error();
    };
    SUBCASE("no positions") {
        morph_job j = m.job(op, on, ot);
        j.in_positions = {};
        fails(j, errc::invalid_argument, "in_positions");
    }
    SUBCASE("normals on one side") {
        morph_job j = m.job(op, on, ot);
        j.out_normals = {};
        fails(j, errc::invalid_argument, "normals");
    }
    SUBCASE("weights and targets differ in number") {
        morph_job j = m.job(op, on, ot);
        j.weights = span<const float>(m.weights.data(), 1);
        fails(j, errc::size_mismatch, "1 weights for 2 targets");
    }
    SUBCASE("a target stream of the wrong size") {
        std::vector<morph_target_streams> streams = m.streams;
        streams[1].normals.size = 7;
        morph_job j = m.job(op, on, ot);
        j.targets = streams;
        fails(j, errc::size_mismatch, "targets[1].normals");
    }
    SUBCASE("an output overlapping a target") {
        std::vector<glm::vec3> shared = m.dp[0];
        std::vector<morph_target_streams> streams = m.streams;
        streams[0].positions = make_span(shared);
        morph_job j = m.job(op, on, ot);
        j.targets = streams;
        j.out_normals = make_span(shared);
        fails(j, errc::invalid_argument, "overlaps a stream of targets[0]");
    }
    SUBCASE("an output overlapping another input without being its own stream") {
        morph_job j = m.job(op, on, ot);
        std::vector<glm::vec3> copy = m.positions;
        j.in_positions = make_span(copy);
        j.out_normals = make_span(copy);
        fails(j, errc::invalid_argument, "out_normals overlaps in_positions");
    }
    SUBCASE("a range past the end") {
        morph_job j = m.job(op, on, ot);
        j.range = {2, 9};
        fails(j, errc::invalid_argument, "range");
    }
    SUBCASE("misaligned stride") {
        morph_job j = m.job(op, on, ot);
        j.in_positions.stride = 13;
        fails(j, errc::invalid_argument, "misaligned");
    }
    SUBCASE("a NaN weight: validate names the target") {
        std::vector<float> w = m.weights;
        w[1] = std::numeric_limits<float>::quiet_NaN();
        morph_job j = m.job(op, on, ot);
        j.weights = w;
        CHECK(fails(j, errc::non_finite, "weights[1]").index == 1);
    }
    SUBCASE("a NaN displacement: validate names the vertex") {
        std::vector<std::vector<glm::vec3>> dt = m.dt;
        dt[0][6].y = std::numeric_limits<float>::infinity();
        std::vector<morph_target_streams> streams = m.streams;
        streams[0].tangents = make_span(dt[0]);
        morph_job j = m.job(op, on, ot);
        j.targets = streams;
        CHECK(fails(j, errc::non_finite, "targets[0].tangents of vertex 6").index == 6);
    }
}
