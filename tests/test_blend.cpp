#include <keyblend/blend.hpp>

#include "helpers.hpp"
#include "job_helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::sample_clip;
using kbtest::local_to_model;
using kbtest::sample_local_matrices;
using kbtest::reset_to_bind;
using kbtest::bit_equal;
using kbtest::max_abs_diff;

namespace {


skeleton biped() { return kbtest::biped(21, true); }

clip rotating_clip(const skeleton& s, const std::vector<std::size_t>& joints, std::uint32_t seed) {
    kbtest::rng rng(seed);
    clip c;
    for (std::size_t j : joints) {
        channel ch;
        ch.joint = j;
        for (int k = 0; k <= 4; ++k) ch.rotation.push_back(float(k * 100), rng.rotation());
        if (j % 2) ch.translation.push_back(0.0f, rng.vec3(-1, 1));
        c.channels.push_back(ch);
    }
    c.duration = last_key_time(c);
    REQUIRE(validate_clip(c, s));
    return c;
}

} // namespace

TEST_CASE("matrix additive: weight 0 leaves the bind pose bit-exact") {
    const skeleton s = biped();
    clip c = rotating_clip(s, {1, 2, 6}, 1);
    // Even a poisoned key cannot leak through a zero weight.
    c.channels[0].rotation.value(0) = make_quat(NAN, 0, 0, 0);
    std::vector<glm::mat4> local;
    reset_to_bind(s, local);
    REQUIRE(blend_matrix_additive(c, s, 150.0f, 0.0f, local));
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(local[j], s.bind_local()[j]));
}

TEST_CASE("matrix additive: one set at weight 1 reproduces that set's pose") {
    const skeleton s = biped();
    const clip c = rotating_clip(s, {1, 2, 3, 4}, 2);
    for (float t : {0.0f, 37.5f, 100.0f, 333.25f, 400.0f, 999.0f}) {
        std::vector<glm::mat4> local, expect;
        reset_to_bind(s, local);
        REQUIRE(blend_matrix_additive(c, s, t, 1.0f, local));
        REQUIRE(sample_local_matrices(c, s, t, expect));
        for (std::size_t j = 0; j < s.size(); ++j) CHECK(max_abs_diff(local[j], expect[j]) < 1e-6f);
        // Joints the set does not animate stay bit-exact.
        for (std::size_t j : {0u, 5u, 6u, 7u, 8u, 9u}) CHECK(bit_equal(local[j], s.bind_local()[j]));
    }
}

TEST_CASE("matrix additive: exactly the classic arithmetic, weights used as given") {
    const skeleton s = biped();
    const clip a = rotating_clip(s, {1, 2, 6}, 3);
    const clip b = rotating_clip(s, {2, 6, 7}, 4);
    for (float wa : {0.25f, 1.0f, -0.5f, 2.0f})
        for (float wb : {0.75f, 0.5f}) {
            std::vector<glm::mat4> local;
            reset_to_bind(s, local);
            REQUIRE(blend_matrix_additive(a, s, 120.0f, wa, local));
            REQUIRE(blend_matrix_additive(b, s, 120.0f, wb, local));
            // The classic Blend(), transcribed: Transformation = matOriginal; for each set, for each
            // animation, matDiff = matAnimation - matOriginal; matDiff *= Blend; Transformation += matDiff.
            std::vector<glm::mat4> classic = s.bind_local();
            for (const auto& [c, w] : {std::pair<const clip*, float>{&a, wa}, {&b, wb}})
                for (const channel& ch : c->channels) {
                    glm::mat4 diff = sample_channel_matrix(ch, 120.0f, s.bind_transforms()[ch.joint],
                                                           s.bind_local()[ch.joint]) -
                                     s.bind_local()[ch.joint];
                    diff *= w;
                    classic[ch.joint] += diff;
                }
            for (std::size_t j = 0; j < s.size(); ++j) CHECK(max_abs_diff(local[j], classic[j]) < 1e-6f);
        }
}

TEST_CASE("matrix additive: bad weights and sizes are reported and change nothing") {
    const skeleton s = biped();
    const clip c = rotating_clip(s, {1}, 5);
    std::vector<glm::mat4> local;
    reset_to_bind(s, local);
    for (float w : {NAN, INFINITY, -INFINITY}) {
        const status st = blend_matrix_additive(c, s, 0.0f, w, local);
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::non_finite);
    }
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(bit_equal(local[j], s.bind_local()[j]));
    std::vector<glm::mat4> small(3, glm::mat4(1));
    const status st = blend_matrix_additive(c, s, 0.0f, 1.0f, small);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::size_mismatch);
    CHECK(small == std::vector<glm::mat4>(3, glm::mat4(1)));
}

TEST_CASE("matrix additive: a channel out of range is reported, the others applied") {
    const skeleton s = biped();
    clip c = rotating_clip(s, {1}, 6);
    channel bad;
    bad.joint = 10;
    bad.translation.push_back(0.0f, glm::vec3(1));
    c.channels.insert(c.channels.begin(), bad);
    std::vector<glm::mat4> local;
    reset_to_bind(s, local);
    const status st = blend_matrix_additive(c, s, 50.0f, 1.0f, local);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::out_of_range);
    CHECK(st.error().index == 0);
    CHECK_FALSE(bit_equal(local[1], s.bind_local()[1]));
}

TEST_CASE("the classic scenario: Walk on the legs and Shoot on the arms, both at weight 1") {
    const skeleton s = biped();
    const clip walk = rotating_clip(s, {1, 2, 3, 4}, 7);
    const clip shoot = rotating_clip(s, {6, 7, 8, 9}, 8);
    for (float t : {0.0f, 50.0f, 250.5f, 400.0f}) {
        std::vector<glm::mat4> local, model, walk_local, shoot_local;
        reset_to_bind(s, local);
        REQUIRE(blend_matrix_additive(walk, s, t, 1.0f, local));
        REQUIRE(blend_matrix_additive(shoot, s, t, 1.0f, local));
        local_to_model(s, local, model);
        REQUIRE(sample_local_matrices(walk, s, t, walk_local));
        REQUIRE(sample_local_matrices(shoot, s, t, shoot_local));
        for (std::size_t j : {1u, 2u, 3u, 4u}) CHECK(max_abs_diff(local[j], walk_local[j]) < 1e-6f);
        for (std::size_t j : {6u, 7u, 8u, 9u}) CHECK(max_abs_diff(local[j], shoot_local[j]) < 1e-6f);
        for (std::size_t j : {0u, 5u}) CHECK(bit_equal(local[j], s.bind_local()[j]));
        // And in model space each limb is where its own set puts it.
        std::vector<glm::mat4> walk_model, shoot_model;
        local_to_model(s, walk_local, walk_model);
        local_to_model(s, shoot_local, shoot_model);
        for (std::size_t j : {1u, 2u, 3u, 4u}) CHECK(max_abs_diff(model[j], walk_model[j]) < 1e-5f);
        for (std::size_t j : {6u, 7u, 8u, 9u}) CHECK(max_abs_diff(model[j], shoot_model[j]) < 1e-5f);
    }
}

// ---------------------------------------------------------------------------------------------
// TRS-space blending
// ---------------------------------------------------------------------------------------------

namespace {

struct dtransform {
    glm::dvec3 t{0.0};
    glm::dquat r{1, 0, 0, 0};
    glm::dvec3 s{1.0};
};

dtransform to_double(const transform& x) {
    return {glm::dvec3(x.translation), glm::dquat(x.rotation.w, x.rotation.x, x.rotation.y, x.rotation.z),
            glm::dvec3(x.scale)};
}

// The documented blend, written plainly in double precision, one joint at a time.
struct reference_layer {
    const local_pose* pose;
    double weight;
    const std::vector<float>* mask;
    const local_pose* reference = nullptr;
};

dtransform reference_blend(std::size_t j, const std::vector<reference_layer>& layers,
                           const std::vector<reference_layer>& additive, const local_pose& rest,
                           double threshold) {
    dtransform acc{glm::dvec3(0.0), glm::dquat(0, 0, 0, 0), glm::dvec3(0.0)};
    double total = 0;
    const auto add = [&](const transform& p, double w) {
        const dtransform d = to_double(p);
        acc.t += d.t * w;
        acc.s += d.s * w;
        const double dot = glm::dot(acc.r, d.r);
        acc.r = acc.r + d.r * (dot < 0 ? -w : w);
        total += w;
    };
    for (const reference_layer& l : layers) add(l.pose->get(j), l.weight * (l.mask ? (*l.mask)[j] : 1.0));
    dtransform out = to_double(rest.get(j));
    if (total > 0) {
        if (total < threshold) add(rest.get(j), threshold - total);
        out = {acc.t / total, glm::normalize(acc.r), acc.s / total};
    }
    for (const reference_layer& l : additive) {
        const double w = l.weight * (l.mask ? (*l.mask)[j] : 1.0);
        if (w == 0) continue;
        dtransform d = to_double(l.pose->get(j));
        if (l.reference) {
            const dtransform r = to_double(l.reference->get(j));
            d.t -= r.t;
            d.r = glm::conjugate(r.r) * d.r;
            for (int k = 0; k < 3; ++k) d.s[k] = r.s[k] == 0 ? 1.0 : d.s[k] / r.s[k];
        }
        if (d.r.w < 0) d.r = -d.r;
        const double a = std::fabs(w);
        const glm::dquat partial = glm::normalize(glm::dquat(1, 0, 0, 0) + (d.r - glm::dquat(1, 0, 0, 0)) * a);
        const glm::dvec3 partial_scale = glm::dvec3(1.0) + (d.s - glm::dvec3(1.0)) * a;
        out.t += d.t * w;
        out.r = out.r * (w < 0 ? glm::conjugate(partial) : partial);
        for (int k = 0; k < 3; ++k)
            out.s[k] = w >= 0 ? out.s[k] * partial_scale[k]
                              : partial_scale[k] == 0 ? out.s[k] : out.s[k] / partial_scale[k];
    }
    return out;
}

double distance(const transform& a, const dtransform& b) {
    const dtransform d = to_double(a);
    const double q = std::min(glm::length(d.r - b.r), glm::length(d.r + b.r));
    return std::max({glm::length(d.t - b.t), q, glm::length(d.s - b.s)});
}

local_pose filled_with_garbage(std::size_t n) {
    local_pose p(n);
    for (unsigned s = 0; s < local_pose::stream_count; ++s)
        for (std::size_t j = 0; j < n; ++j) p.data(local_pose::stream(s))[j] = -12345.0f;
    return p;
}

blend_job make_job(const local_pose& rest, const blend_layer* layers, std::size_t count, local_pose& out) {
    blend_job job;
    job.rest_pose = &rest;
    job.layers = span<const blend_layer>(layers, count);
    job.output = &out;
    return job;
}

template <class V>
status run_with(const blend_job& job) {
    return impl::run_blend<V>(job);
}

} // namespace

TEST_CASE_TEMPLATE("TRS blend: no layers, or all weights 0, is the rest pose bit for bit", V,
                   impl::lanes::f1, impl::lanes::native) {
    const std::size_t n = 19;
    const local_pose rest = kbtest::random_pose(n, 1), a = kbtest::random_pose(n, 2);
    const std::vector<float> zeros(n, 0.0f);
    local_pose out = filled_with_garbage(n);
    blend_job job;
    job.rest_pose = &rest;
    job.output = &out;
    SUBCASE("no layers") {}
    SUBCASE("zero weights, zero masks") {
        static blend_layer layers[2];
        layers[0] = {&a, 0.0f};
        layers[1] = {&a, 1.0f, zeros};
        job.layers = span<const blend_layer>(layers, 2);
    }
    SUBCASE("threshold 0") { job.threshold = 0.0f; }
    REQUIRE(run_with<V>(job));
    REQUIRE(out.size() == n);
    for (std::size_t j = 0; j < n; ++j) CHECK(kbtest::bit_equal_transform(out.get(j), rest.get(j)));
    CHECK(kbtest::padding_is_identity(out));
}

TEST_CASE_TEMPLATE("TRS blend: one layer at weight 1 is that layer's pose", V, impl::lanes::f1,
                   impl::lanes::native) {
    const std::size_t n = 9;
    const local_pose rest = kbtest::random_pose(n, 3), a = kbtest::random_pose(n, 4);
    local_pose out;
    const blend_layer layer{&a, 1.0f};
    blend_job job = make_job(rest, &layer, 1, out);
    REQUIRE(run_with<V>(job));
    for (std::size_t j = 0; j < n; ++j) {
        CHECK(bit_equal(out.get(j).translation, a.get(j).translation));
        CHECK(bit_equal(out.get(j).scale, a.get(j).scale));
        CHECK(max_abs_diff(out.get(j).rotation, a.get(j).rotation) < 1e-6f);
    }
}

TEST_CASE_TEMPLATE("TRS blend: weighted layers, masks, threshold and additive layers match the "
                   "double-precision reference", V, impl::lanes::f1, impl::lanes::native) {
    const std::size_t n = 67;
    const local_pose rest = kbtest::random_pose(n, 10);
    const local_pose a = kbtest::random_pose(n, 11), b = kbtest::random_pose(n, 12),
                     c = kbtest::random_pose(n, 13), add = kbtest::random_pose(n, 14),
                     add_ref = kbtest::random_pose(n, 15);
    kbtest::rng rng(16);
    std::vector<float> upper(n), fade(n);
    for (std::size_t j = 0; j < n; ++j) {
        upper[j] = j > n / 2 ? 1.0f : 0.0f;
        fade[j] = rng.uniform(0.0f, 1.0f);
        if (j % 7 == 0) fade[j] = 0.0f;
    }
    for (float threshold : {0.0f, 0.1f, 0.8f}) {
        for (const auto& weights : {std::vector<float>{1.0f, 1.0f, 1.0f}, {0.2f, 0.5f, 0.3f},
                                    {0.05f, 0.0f, 0.02f}, {3.0f, 0.0f, 1.0f}}) {
            const blend_layer layers[] = {{&a, weights[0]}, {&b, weights[1], upper}, {&c, weights[2], fade}};
            const additive_layer adds[] = {{&add, &add_ref, 0.7f, fade}, {&add, nullptr, -0.2f}};
            local_pose out;
            blend_job job = make_job(rest, layers, 3, out);
            job.additive_layers = span<const additive_layer>(adds, 2);
            job.threshold = threshold;
            REQUIRE(run_with<V>(job));
            const std::vector<reference_layer> ref_layers = {
                {&a, weights[0], nullptr}, {&b, weights[1], &upper}, {&c, weights[2], &fade}};
            const std::vector<reference_layer> ref_adds = {{&add, 0.7, &fade, &add_ref}, {&add, -0.2, nullptr}};
            double worst = 0;
            for (std::size_t j = 0; j < n; ++j)
                worst = std::max(worst, distance(out.get(j), reference_blend(j, ref_layers, ref_adds, rest, threshold)));
            CHECK(worst < 2e-5);
            CHECK(kbtest::padding_is_identity(out));
        }
    }
}

TEST_CASE("TRS blend: the SIMD path equals the scalar path") {
    const std::size_t n = 45;
    const local_pose rest = kbtest::random_pose(n, 20), a = kbtest::random_pose(n, 21),
                     b = kbtest::random_pose(n, 22), d = kbtest::random_pose(n, 23);
    std::vector<float> mask(n);
    for (std::size_t j = 0; j < n; ++j) mask[j] = float(j % 5) * 0.25f;
    const blend_layer layers[] = {{&a, 0.3f, mask}, {&b, 0.6f}};
    const additive_layer adds[] = {{&d, &rest, 0.5f, mask}};
    local_pose scalar, simd;
    blend_job job = make_job(rest, layers, 2, scalar);
    job.additive_layers = span<const additive_layer>(adds, 1);
    REQUIRE(run_with<impl::lanes::f1>(job));
    job.output = &simd;
    REQUIRE(job.run());
    for (std::size_t j = 0; j < n; ++j) CHECK(kbtest::max_abs_diff(scalar.get(j), simd.get(j)) < 1e-6f);
}

TEST_CASE("TRS blend: below the threshold a joint fades into the rest pose, without a snap") {
    const std::size_t n = 8;
    const local_pose rest = kbtest::random_pose(n, 30), a = kbtest::random_pose(n, 31);
    local_pose out;
    blend_layer layer{&a, 0.0f};
    blend_job job = make_job(rest, &layer, 1, out);
    job.threshold = 0.5f;
    float previous_distance = 0.0f;
    for (float w : {1.0f, 0.5f, 0.25f, 0.1f, 1e-3f, 1e-6f}) {
        layer.weight = w;
        REQUIRE(job.run());
        // At weight w < threshold the rest pose has weight threshold - w: the translation is the
        // weighted mean, and tends continuously to the rest pose's.
        const glm::vec3 expect = w >= 0.5f ? a.get(0).translation
                                           : (a.get(0).translation * w + rest.get(0).translation * (0.5f - w)) / 0.5f;
        CHECK(max_abs_diff(out.get(0).translation, expect) < 1e-5f);
        const float to_rest = max_abs_diff(out.get(0).translation, rest.get(0).translation);
        if (w < 1.0f) CHECK(to_rest <= previous_distance + 1e-6f);
        previous_distance = to_rest;
    }
    CHECK(previous_distance < 1e-4f);
}

TEST_CASE("TRS blend: a per-joint mask confines a layer to its joints (an upper-body layer)") {
    const skeleton s = biped(); // arms are joints 5..9
    const local_pose rest(s), walk = kbtest::random_pose(s.size(), 40), aim = kbtest::random_pose(s.size(), 41);
    std::vector<float> upper(s.size(), 0.0f);
    for (std::size_t j = 5; j < s.size(); ++j) upper[j] = 1.0f;
    std::vector<float> lower(s.size(), 1.0f);
    for (std::size_t j = 5; j < s.size(); ++j) lower[j] = 0.0f;
    const blend_layer layers[] = {{&walk, 1.0f, lower}, {&aim, 1.0f, upper}};
    local_pose out;
    blend_job job = make_job(rest, layers, 2, out);
    REQUIRE(job.run());
    for (std::size_t j = 0; j < s.size(); ++j) {
        const local_pose& own = j >= 5 ? aim : walk;
        CHECK(bit_equal(out.get(j).translation, own.get(j).translation));
        CHECK(max_abs_diff(out.get(j).rotation, own.get(j).rotation) < 1e-6f);
    }
}

TEST_CASE("TRS blend: additive layers") {
    const std::size_t n = 21;
    const local_pose rest = kbtest::random_pose(n, 50), base = kbtest::random_pose(n, 51),
                     pose = kbtest::random_pose(n, 52), ref = kbtest::random_pose(n, 53);
    const blend_layer layer{&base, 1.0f};
    local_pose out, plain;
    blend_job job = make_job(rest, &layer, 1, plain);
    REQUIRE(job.run());
    job.output = &out;
    SUBCASE("weight 0 changes nothing, bit for bit") {
        const additive_layer add{&pose, &ref, 0.0f};
        job.additive_layers = span<const additive_layer>(&add, 1);
        REQUIRE(job.run());
        for (std::size_t j = 0; j < n; ++j) CHECK(kbtest::bit_equal_transform(out.get(j), plain.get(j)));
    }
    SUBCASE("on top of its own reference at weight 1 it gives the pose back") {
        const blend_layer on_ref{&ref, 1.0f};
        const additive_layer add{&pose, &ref, 1.0f};
        job.layers = span<const blend_layer>(&on_ref, 1);
        job.additive_layers = span<const additive_layer>(&add, 1);
        REQUIRE(job.run());
        for (std::size_t j = 0; j < n; ++j) CHECK(kbtest::max_abs_diff(out.get(j), pose.get(j)) < 1e-5f);
    }
    SUBCASE("a reference, or a difference made beforehand with make_additive: the same") {
        local_pose delta;
        REQUIRE(make_additive(pose, ref, delta));
        const additive_layer with_ref{&pose, &ref, 0.6f}, with_delta{&delta, nullptr, 0.6f};
        local_pose other;
        job.additive_layers = span<const additive_layer>(&with_ref, 1);
        REQUIRE(job.run());
        job.additive_layers = span<const additive_layer>(&with_delta, 1);
        job.output = &other;
        REQUIRE(job.run());
        for (std::size_t j = 0; j < n; ++j) CHECK(kbtest::same_computation(out.get(j), other.get(j)));
        CHECK(kbtest::padding_is_identity(delta));
    }
    SUBCASE("weight 1 then -1 cancels; a zero reference scale means no scale change") {
        local_pose zero_scale = ref;
        for (std::size_t j = 0; j < n; ++j) {
            transform t = zero_scale.get(j);
            t.scale.y = 0.0f;
            zero_scale.set(j, t);
        }
        local_pose delta;
        REQUIRE(make_additive(pose, zero_scale, delta));
        for (std::size_t j = 0; j < n; ++j) CHECK(delta.get(j).scale.y == 1.0f);
        const additive_layer adds[] = {{&pose, &ref, 1.0f}, {&pose, &ref, -1.0f}};
        job.additive_layers = span<const additive_layer>(adds, 2);
        REQUIRE(job.run());
        for (std::size_t j = 0; j < n; ++j) CHECK(kbtest::max_abs_diff(out.get(j), plain.get(j)) < 1e-5f);
    }
}

TEST_CASE("TRS blend keeps bones rigid where the classic matrix blend does not") {
    // One bone, bind pose identity; two sets turn it 90 degrees, about z and about x.
    const skeleton s = skeleton::from_parents({{"bone", -1, glm::mat4(1.0f)}}).value();
    clip turn_z, turn_x;
    for (auto [c, axis] : {std::pair<clip*, glm::vec3>{&turn_z, {0, 0, 1}}, {&turn_x, {1, 0, 0}}}) {
        channel ch;
        ch.rotation.push_back(0.0f, glm::angleAxis(glm::radians(90.0f), axis));
        c->channels.push_back(ch);
    }
    // The classic way: bind + 0.5 (Rz - bind) + 0.5 (Rx - bind).
    std::vector<glm::mat4> local;
    reset_to_bind(s, local);
    REQUIRE(blend_matrix_additive(turn_z, s, 0.0f, 0.5f, local));
    REQUIRE(blend_matrix_additive(turn_x, s, 0.0f, 0.5f, local));
    // TRS: two layers at 0.5 each.
    sampling_context cz, cx;
    local_pose pz, px, out;
    REQUIRE(sample_clip(turn_z, s, 0.0f, cz, pz));
    REQUIRE(sample_clip(turn_x, s, 0.0f, cx, px));
    const local_pose rest(s);
    const blend_layer layers[] = {{&pz, 0.5f}, {&px, 0.5f}};
    blend_job job = make_job(rest, layers, 2, out);
    REQUIRE(job.run());
    const glm::mat4 trs_matrix = to_matrix(out.get(0));
    const auto worst_basis = [](const glm::mat4& m, float& length_error, float& orthogonality_error) {
        length_error = orthogonality_error = 0.0f;
        for (int i = 0; i < 3; ++i) {
            length_error = std::max(length_error, std::fabs(glm::length(glm::vec3(m[i])) - 1.0f));
            for (int k = i + 1; k < 3; ++k)
                orthogonality_error = std::max(orthogonality_error, std::fabs(glm::dot(glm::vec3(m[i]), glm::vec3(m[k]))));
        }
    };
    float matrix_length, matrix_ortho, trs_length, trs_ortho;
    worst_basis(local[0], matrix_length, matrix_ortho);
    worst_basis(trs_matrix, trs_length, trs_ortho);
    MESSAGE("two 90-degree turns blended 50/50: matrix-space basis vectors are off unit length by up to "
            << matrix_length << " and off orthogonal by up to " << matrix_ortho
            << "; TRS-space by " << trs_length << " and " << trs_ortho);
    CHECK(matrix_length > 0.2f); // the basis shrinks (x axis: 0.5 * (0,1,0) + 0.5 * (1,0,0))
    CHECK(matrix_ortho > 0.2f);  // and shears
    CHECK(trs_length < 1e-5f);
    CHECK(trs_ortho < 1e-5f);
    // And the TRS result is the rotation half-way between the two (nlerp of the layers).
    CHECK(kbtest::rotation_angle(out.get(0).rotation, nlerp(pz.get(0).rotation, px.get(0).rotation, 0.5f)) < 1e-5);
}

TEST_CASE("TRS blend: validation names the layer and leaves the output untouched") {
    const std::size_t n = 10;
    const local_pose rest = kbtest::random_pose(n, 60), a = kbtest::random_pose(n, 61), small(3);
    std::vector<float> mask(n, 1.0f), short_mask(4, 1.0f);
    // The same joints with two morph weights on joint 2 (the rest pose has none).
    std::vector<joint_desc> joints(n);
    for (std::size_t j = 0; j < n; ++j) joints[j].name = "j" + std::to_string(j);
    joints[2].morph_weights = {0.25f, 0.5f};
    const skeleton morphing = skeleton::from_parents(joints).value();
    local_pose with_morphs = a;
    with_morphs.set_morph_layout(morphing);
    REQUIRE(with_morphs.morph_weights().size() == 2);
    blend_layer layers[2] = {{&a, 1.0f}, {&a, 0.5f, mask}};
    additive_layer adds[1] = {{&a, &rest, 0.5f}};
    local_pose out = filled_with_garbage(n);
    const local_pose garbage = out;
    blend_job job = make_job(rest, layers, 2, out);
    job.additive_layers = span<const additive_layer>(adds, 1);
    REQUIRE(job.validate());
    errc expect = errc::invalid_argument;
    std::size_t index = error::no_index;
    std::string mentions;
    SUBCASE("null rest pose") { job.rest_pose = nullptr; mentions = "rest_pose"; }
    SUBCASE("null output") { job.output = nullptr; mentions = "output"; }
    SUBCASE("null layer array with a count") { job.layers = span<const blend_layer>(nullptr, 2); mentions = "null"; }
    SUBCASE("null layer pose") { layers[1].pose = nullptr; index = 1; mentions = "blend layer 1"; }
    SUBCASE("negative weight") { layers[0].weight = -0.5f; index = 0; mentions = "negative"; }
    SUBCASE("NaN weight") { layers[1].weight = NAN; expect = errc::non_finite; index = 1; }
    SUBCASE("infinite additive weight") { adds[0].weight = INFINITY; expect = errc::non_finite; index = 2; mentions = "additive layer 0"; }
    SUBCASE("NaN threshold") { job.threshold = NAN; expect = errc::non_finite; }
    SUBCASE("negative threshold") { job.threshold = -1.0f; }
    SUBCASE("layer of another size") { layers[0].pose = &small; expect = errc::size_mismatch; index = 0; }
    SUBCASE("reference of another size") { adds[0].reference = &small; expect = errc::size_mismatch; index = 2; mentions = "reference"; }
    SUBCASE("mask of another size") { layers[1].joint_weights = short_mask; expect = errc::size_mismatch; index = 1; }
    SUBCASE("NaN joint weight") { mask[7] = NAN; expect = errc::non_finite; index = 1; mentions = "joint 7"; }
    SUBCASE("negative joint weight") { mask[3] = -1.0f; index = 1; mentions = "joint 3"; }
    SUBCASE("layer with other morph weights") {
        layers[1].pose = &with_morphs;
        expect = errc::size_mismatch;
        index = 1;
        mentions = "pose has 2 morph weights, the rest pose 0";
    }
    SUBCASE("reference with other morph weights") {
        adds[0].reference = &with_morphs;
        expect = errc::size_mismatch;
        index = 2;
        mentions = "additive layer 0: reference has 2 morph weights";
    }
    SUBCASE("several bad layers: the first is named, with its first fault") {
        adds[0].weight = NAN;
        layers[1].pose = &small;
        mask[5] = -2.0f;
        expect = errc::size_mismatch;
        index = 1;
        mentions = "blend layer 1: pose has 3 joints, the rest pose 10";
    }
    SUBCASE("several bad joint weights: the first is named") {
        mask[8] = NAN;
        mask[6] = -1.0f;
        index = 1;
        mentions = "joint 6 weight -1";
    }
    const status v = job.validate();
    REQUIRE_FALSE(v);
    CHECK(v.error().code == expect);
    CHECK(v.error().index == index);
    CHECK(v.error().message.find(mentions) != std::string::npos);
    const status r = job.run();
    REQUIRE_FALSE(r);
    CHECK(r.error().message == v.error().message);
    for (std::size_t j = 0; j < n; ++j) CHECK(kbtest::bit_equal_transform(out.get(j), garbage.get(j)));
}

TEST_CASE("TRS blend: NaN in an input pose stays in its joint: the output may alias an input") {
    const std::size_t n = 12;
    const local_pose rest = kbtest::random_pose(n, 70);
    local_pose a = kbtest::random_pose(n, 71), b = kbtest::random_pose(n, 72);
    transform poisoned = a.get(4);
    poisoned.translation.x = NAN;
    a.set(4, poisoned);
    local_pose separate;
    const blend_layer layers[] = {{&a, 0.5f}, {&b, 0.5f}};
    blend_job job = make_job(rest, layers, 2, separate);
    REQUIRE(job.run());
    for (std::size_t j = 0; j < n; ++j) CHECK(is_finite(separate.get(j).translation) == (j != 4));
    job.output = &b; // in place
    REQUIRE(job.run());
    for (std::size_t j = 0; j < n; ++j)
        if (j != 4) CHECK(kbtest::bit_equal_transform(b.get(j), separate.get(j)));
}

TEST_CASE("TRS blend and make_additive do not allocate once the output is sized") {
    const std::size_t n = 67;
    const local_pose rest = kbtest::random_pose(n, 80), a = kbtest::random_pose(n, 81), b = kbtest::random_pose(n, 82);
    std::vector<float> mask(n, 0.5f);
    const blend_layer layers[] = {{&a, 0.5f, mask}, {&b, 0.5f}};
    const additive_layer adds[] = {{&b, &rest, 0.3f}};
    local_pose out(n), delta(n);
    blend_job job = make_job(rest, layers, 2, out);
    job.additive_layers = span<const additive_layer>(adds, 1);
    const std::size_t before = kbtest::allocation_count();
    for (int i = 0; i < 50; ++i) {
        REQUIRE(job.run());
        REQUIRE(make_additive(a, rest, delta));
    }
    CHECK(kbtest::allocation_count() == before);
    const local_pose small(3);
    const status st = make_additive(a, small, delta);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::size_mismatch);
}
