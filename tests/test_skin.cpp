// skin.hpp: palette building, linear-blend skinning on every lane type against two references
// (a double-precision vertex-major loop and the classic bone-major UpdateSkinnedMesh), every
// layout, validation, threads, influence preparation, dual-quaternion skinning.
//
// This file is compiled into keyblend_tests (the kernels of the build's instruction set,
// -march=native by default, and each narrower lane type called directly), and, as heavy checks
// (tests/CMakeLists.txt), once per instruction set (keyblend_tests_skin_scalar, _sse2, _avx2,
// _avx512), into the compiled-kernels build and into the test configurations.
#include <keyblend/kernels.hpp>
#include <keyblend/skin.hpp>
#include <keyblend/skin_threads.hpp>

#include "helpers.hpp"
#include "job_helpers.hpp"

#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace keyblend;

namespace {

/// A palette matrix against glm's `model * offset` (the palette multiplies with SSE in the same
/// order): equal within float rounding.
bool palette_matches(const glm::mat4& got, const glm::mat4& model, const glm::mat4& offset) {
    return kbtest::product_matches(got, model * offset);
}

// ---------------------------------------------------------------------------------------------
// Meshes
// ---------------------------------------------------------------------------------------------

/// A skinned mesh as the .X loader gives it: k slots per vertex, unused slots weight 0 and bone 0.
struct skin_mesh {
    std::size_t k = 0;
    std::vector<glm::vec3> positions, normals;
    std::vector<glm::vec4> tangents;
    std::vector<std::uint16_t> bone_indices; // vertex_count x k
    std::vector<float> weights;              // vertex_count x k
    std::vector<glm::mat4> palette;
    std::size_t size() const { return positions.size(); }
};

/// A bone matrix like a rig's: rotations within ~40 degrees of one another, so blended matrices
/// stay well conditioned (the inverse-transpose tests divide by their determinants).
glm::mat4 rig_matrix(kbtest::rng& rng, bool non_uniform) {
    const glm::vec3 axis = glm::normalize(rng.vec3(-1.0f, 1.0f) + glm::vec3(0.0f, 0.0f, 1e-3f));
    const glm::quat q = glm::angleAxis(rng.uniform(-0.7f, 0.7f), axis);
    const glm::vec3 s = non_uniform ? rng.vec3(0.6f, 1.6f) : glm::vec3(rng.uniform(0.8f, 1.25f));
    return to_matrix(transform{rng.vec3(-3.0f, 3.0f), q, s});
}

/// n vertices, k slots. `sparse`: each vertex uses a random number of its slots (1..k), the others
/// are zero, scattered among the used ones (what compact_influences tidies up); `clustered`: the
/// counts come in runs of 70 vertices (1, 2, ... k, 1, ...), as in a mesh sorted by count.
skin_mesh random_mesh(std::size_t n, std::size_t k, std::size_t bones, std::uint32_t seed,
                      bool non_uniform = false, bool sparse = false, bool clustered = false) {
    kbtest::rng rng(seed);
    skin_mesh m;
    m.k = k;
    for (std::size_t b = 0; b < bones; ++b) m.palette.push_back(rig_matrix(rng, non_uniform));
    for (std::size_t v = 0; v < n; ++v) {
        m.positions.push_back(rng.vec3(-5.0f, 5.0f));
        m.normals.push_back(glm::normalize(rng.vec3(-1.0f, 1.0f) + glm::vec3(1e-3f)));
        m.tangents.push_back(glm::vec4(glm::normalize(rng.vec3(-1.0f, 1.0f) + glm::vec3(1e-3f)),
                                       rng.integer(0, 1) ? 1.0f : -1.0f));
        std::vector<float> w(k, 0.0f);
        std::vector<bool> used(k, true);
        if (sparse) {
            const int count = clustered ? int(1 + (v / 70) % k) : rng.integer(1, int(k));
            std::fill(used.begin(), used.end(), false);
            for (int c = 0; c < count;) {
                const int s = rng.integer(0, int(k) - 1);
                if (!used[std::size_t(s)]) used[std::size_t(s)] = true, ++c;
            }
        }
        float sum = 0.0f;
        for (std::size_t i = 0; i < k; ++i)
            if (used[i]) sum += (w[i] = rng.uniform(0.05f, 1.0f));
        for (std::size_t i = 0; i < k; ++i) {
            m.weights.push_back(w[i] / sum);
            m.bone_indices.push_back(used[i] ? std::uint16_t(rng.integer(0, int(bones) - 1)) : 0);
        }
    }
    return m;
}

/// m's k slots, positions and normals as a job's inputs (either kind of skinning job).
void mesh_streams(skinning_streams<std::uint16_t>& job, const skin_mesh& m) {
    job.influences = m.k;
    job.joints = make_span(m.bone_indices, m.k);
    job.weights = make_span(m.weights, m.k);
    job.in_positions = make_span(m.positions);
    job.in_normals = make_span(m.normals);
}

/// A job over m's k slots, positions, normals and palette; the caller gives the outputs.
skinning_job<> mesh_job(const skin_mesh& m) {
    skinning_job<> job;
    mesh_streams(job, m);
    job.palette = {m.palette.data(), m.palette.size()};
    return job;
}

// ---------------------------------------------------------------------------------------------
// Buffers in the caller's layouts, sized exactly to what the span may touch (so that AddressSanitizer
// reports any read or write past a stream) and pre-filled with garbage (so that unwritten outputs
// and writes into gaps show).
// ---------------------------------------------------------------------------------------------

enum class place {
    packed,    ///< xyz xyz ... (std::vector<glm::vec3>)
    padded,    ///< xyz__ xyz__ ... (a field of an interleaved vertex buffer)
    planar,    ///< xxx... yyy... zzz...
    scattered, ///< components 2 floats apart, vertices 2 * components + 1 floats apart
};
constexpr place all_places[] = {place::packed, place::padded, place::planar, place::scattered};

const char* name_of(place p) {
    switch (p) {
    case place::packed: return "packed";
    case place::padded: return "padded";
    case place::planar: return "planar";
    case place::scattered: return "scattered";
    }
    return "?";
}

float garbage() {
    const std::uint32_t bits = 0x7fc0deadu; // a NaN no computation produces
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

template <class T>
struct buffer {
    std::vector<T> storage;
    std::size_t n = 0, components = 0, stride = 0, cs = 0; // strides in elements of T
    std::vector<long> owner; // per storage slot: v * 8 + c, or -1 for a gap

    strided_span<T> span() {
        return {n ? storage.data() : nullptr, n, stride * sizeof(T), cs * sizeof(T)};
    }
    strided_span<const T> cspan() const {
        return {n ? storage.data() : nullptr, n, stride * sizeof(T), cs * sizeof(T)};
    }
    T& at(std::size_t v, std::size_t c) { return storage[v * stride + c * cs]; }
    const T& at(std::size_t v, std::size_t c) const { return storage[v * stride + c * cs]; }
};

template <class T>
buffer<T> make_buffer(place p, std::size_t n, std::size_t components, T fill) {
    buffer<T> b;
    b.n = n;
    b.components = components;
    switch (p) {
    case place::packed: b.stride = components, b.cs = 1; break;
    case place::padded: b.stride = components + 2, b.cs = 1; break;
    case place::planar: b.stride = 1, b.cs = std::max<std::size_t>(n, 1); break;
    case place::scattered: b.stride = 2 * components + 1, b.cs = 2; break;
    }
    const std::size_t extent = n ? (n - 1) * b.stride + (components - 1) * b.cs + 1 : 0;
    b.storage.assign(extent, fill);
    b.owner.assign(extent, -1);
    for (std::size_t v = 0; v < n; ++v)
        for (std::size_t c = 0; c < components; ++c) b.owner[v * b.stride + c * b.cs] = long(v * 8 + c);
    return b;
}

void refill(buffer<float>& b) { std::fill(b.storage.begin(), b.storage.end(), garbage()); }

// ---------------------------------------------------------------------------------------------
// References
// ---------------------------------------------------------------------------------------------

struct reference {
    std::vector<glm::dvec3> positions, normals;
    std::vector<glm::dvec4> tangents;
};

/// Each vertex's weights as the job sees them (the implied one computed like the kernels).
std::vector<float> effective_weights(const skin_mesh& m, const std::vector<std::uint8_t>* counts,
                                     bool implied) {
    std::vector<float> out(m.weights.size(), 0.0f);
    for (std::size_t v = 0; v < m.size(); ++v) {
        const std::size_t c = counts ? (*counts)[v] : m.k;
        float sum = 0.0f;
        for (std::size_t i = 0; i < c; ++i) {
            const float w = (implied && i + 1 == c) ? 1.0f - sum : m.weights[v * m.k + i];
            out[v * m.k + i] = w;
            sum += w;
        }
    }
    return out;
}

/// The plain vertex-major loop, in double precision: the blended matrix, then each attribute.
reference vertex_major(const skin_mesh& m, const std::vector<float>& weights, normal_transform nt) {
    reference r;
    for (std::size_t v = 0; v < m.size(); ++v) {
        glm::dmat4 b(0.0);
        for (std::size_t i = 0; i < m.k; ++i)
            b += double(weights[v * m.k + i]) * glm::dmat4(m.palette[m.bone_indices[v * m.k + i]]);
        const glm::dmat3 a(b);
        r.positions.push_back(glm::dvec3(b * glm::dvec4(glm::dvec3(m.positions[v]), 1.0)));
        const glm::dvec3 n(m.normals[v]);
        r.normals.push_back(nt == normal_transform::palette ? a * n : glm::transpose(glm::inverse(a)) * n);
        r.tangents.push_back(glm::dvec4(a * glm::dvec3(m.tangents[v]), double(m.tangents[v].w)));
    }
    return r;
}

/// The classic method (UpdateSkinnedMesh, docs/classic.md): bone by bone, every vertex the bone
/// influences gets the bone's weighted transform added. Float, as D3DX computes it.
reference bone_major(const skin_mesh& m, const std::vector<float>& weights) {
    struct influence {
        std::size_t vertex;
        float weight;
    };
    std::vector<std::vector<influence>> bones(m.palette.size());
    for (std::size_t v = 0; v < m.size(); ++v)
        for (std::size_t i = 0; i < m.k; ++i)
            if (weights[v * m.k + i] != 0.0f)
                bones[m.bone_indices[v * m.k + i]].push_back({v, weights[v * m.k + i]});
    std::vector<glm::vec3> p(m.size(), glm::vec3(0.0f)), n(m.size(), glm::vec3(0.0f));
    for (std::size_t b = 0; b < bones.size(); ++b)
        for (const influence& in : bones[b]) {
            p[in.vertex] += in.weight * glm::vec3(m.palette[b] * glm::vec4(m.positions[in.vertex], 1.0f));
            n[in.vertex] += in.weight * (glm::mat3(m.palette[b]) * m.normals[in.vertex]);
        }
    reference r;
    for (std::size_t v = 0; v < m.size(); ++v) {
        r.positions.push_back(glm::dvec3(p[v]));
        r.normals.push_back(glm::dvec3(n[v]));
    }
    return r;
}

/// |a - b| relative to the size of the reference value (at least 1).
template <class D>
double relative_error(const D& got, const D& want) {
    double diff = 0.0, size = 1.0;
    for (int c = 0; c < D::length(); ++c) {
        diff = std::max(diff, std::fabs(double(got[c]) - double(want[c])));
        size = std::max(size, std::fabs(double(want[c])));
    }
    return diff / size;
}

constexpr double tolerance = 1e-5;

// ---------------------------------------------------------------------------------------------
// A job over a mesh in chosen layouts
// ---------------------------------------------------------------------------------------------

struct options {
    std::size_t n = 100;
    std::size_t k = 4;
    std::size_t bones = 20;
    bool normals = true;
    bool tangents = true;
    bool implied = false;
    bool counts = false; // per-vertex counts (sparse mesh, compacted)
    bool clustered = false; // the counts in runs (see random_mesh)
    bool non_uniform = false;
    normal_transform nt = normal_transform::palette;
    place in = place::packed;
    place out = place::packed;
    place influences = place::packed;
    vertex_range range;
    std::uint32_t seed = 1;
};

template <class Index>
struct fixture {
    options o;
    skin_mesh mesh;
    buffer<float> in_pos, in_nrm, in_tan, out_pos, out_nrm, out_tan, weights;
    buffer<Index> joints;
    std::vector<std::uint8_t> counts;
    skinning_job<Index> job;

    explicit fixture(const options& opt) : o(opt) {
        const std::size_t bones = sizeof(Index) == 1 ? std::min<std::size_t>(o.bones, 256) : o.bones;
        mesh = random_mesh(o.n, o.k, bones, o.seed, o.non_uniform, o.counts, o.clustered);
        if (o.counts) {
            counts.assign(o.n, 0);
            // Compact in the loader's own arrays, through spans (the counts come out of it).
            std::vector<Index> j(mesh.bone_indices.begin(), mesh.bone_indices.end());
            REQUIRE(compact_influences(o.k, make_span(j, o.k), make_span(mesh.weights, o.k),
                                       strided_span<std::uint8_t>{counts.data(), o.n, 1, 1}));
            for (std::size_t i = 0; i < j.size(); ++i) mesh.bone_indices[i] = j[i];
        }
        in_pos = make_buffer(o.in, o.n, 3, 0.0f);
        in_nrm = make_buffer(o.in, o.n, 3, 0.0f);
        in_tan = make_buffer(o.in, o.n, 4, 0.0f);
        for (std::size_t v = 0; v < o.n; ++v)
            for (std::size_t c = 0; c < 4; ++c) {
                if (c < 3) in_pos.at(v, c) = mesh.positions[v][int(c)];
                if (c < 3) in_nrm.at(v, c) = mesh.normals[v][int(c)];
                in_tan.at(v, c) = mesh.tangents[v][int(c)];
            }
        out_pos = make_buffer(o.out, o.n, 3, garbage());
        out_nrm = make_buffer(o.out, o.n, 3, garbage());
        out_tan = make_buffer(o.out, o.n, 4, garbage());
        joints = make_buffer(o.influences, o.n, o.k, Index(0));
        const std::size_t stored = o.implied ? o.k - 1 : o.k;
        weights = make_buffer(o.influences, stored ? o.n : 0, std::max<std::size_t>(stored, 1), garbage());
        for (std::size_t v = 0; v < o.n; ++v)
            for (std::size_t i = 0; i < o.k; ++i) {
                joints.at(v, i) = Index(mesh.bone_indices[v * o.k + i]);
                if (i < stored) weights.at(v, i) = mesh.weights[v * o.k + i];
            }

        job.influences = o.k;
        job.joints = joints.cspan();
        if (stored) job.weights = weights.cspan();
        job.last = o.implied ? last_weight::implied : last_weight::stored;
        if (o.counts) job.influence_counts = {counts.data(), o.n, 1, 1};
        job.in_positions = in_pos.cspan();
        job.out_positions = out_pos.span();
        if (o.normals) {
            job.in_normals = in_nrm.cspan();
            job.out_normals = out_nrm.span();
        }
        if (o.tangents) {
            job.in_tangents = in_tan.cspan();
            job.out_tangents = out_tan.span();
        }
        job.palette = {mesh.palette.data(), mesh.palette.size()};
        job.normals = o.nt;
        job.range = o.range;
    }

    std::vector<float> weights_used() const {
        return effective_weights(mesh, o.counts ? &counts : nullptr, o.implied);
    }
    void reset_outputs() {
        refill(out_pos);
        refill(out_nrm);
        refill(out_tan);
    }
    std::size_t range_end() const { return o.range.end == vertex_range::all ? o.n : o.range.end; }
    bool in_range(std::size_t v) const { return v >= o.range.begin && v < range_end(); }
};

/// Every slot of an output buffer: skinned values within 1e-5 of `want(v)` for vertices in the
/// range, the garbage it was filled with everywhere else (vertices outside the range, gaps).
template <class Index, class Want>
void check_output(const fixture<Index>& f, const buffer<float>& b, bool skinned, Want want,
                  const std::string& label) {
    const float g = garbage();
    std::size_t bad = 0;
    double worst = 0.0;
    for (std::size_t s = 0; s < b.storage.size(); ++s) {
        const long owner = b.owner[s];
        const std::size_t v = owner < 0 ? 0 : std::size_t(owner) / 8;
        if (owner < 0 || !skinned || !f.in_range(v)) {
            if (!kbtest::bit_equal(b.storage[s], g)) ++bad;
            continue;
        }
        const auto w = want(v);
        const std::size_t c = std::size_t(owner) % 8;
        const double size = std::max(1.0, double(std::fabs(w[int(c)])));
        const double err = std::fabs(double(b.storage[s]) - double(w[int(c)])) / size;
        if (!(err <= tolerance)) ++bad;
        worst = std::max(worst, err);
    }
    INFO(label << ": worst relative error " << worst);
    CHECK(bad == 0);
}

template <class Index>
void check_against(const fixture<Index>& f, const reference& r, const std::string& label) {
    check_output(f, f.out_pos, true, [&](std::size_t v) { return r.positions[v]; }, label + " positions");
    check_output(f, f.out_nrm, f.o.normals, [&](std::size_t v) { return r.normals[v]; }, label + " normals");
    check_output(f, f.out_tan, f.o.tangents, [&](std::size_t v) { return r.tangents[v]; }, label + " tangents");
}

/// The outputs as floats in vertex order, for comparing two runs.
template <class Index>
std::vector<float> outputs_of(const fixture<Index>& f) {
    std::vector<float> out;
    for (const buffer<float>* b : {&f.out_pos, &f.out_nrm, &f.out_tan}) out.insert(out.end(), b->storage.begin(), b->storage.end());
    return out;
}

std::string describe(const options& o, const char* index) {
    return std::string(index) + " n=" + std::to_string(o.n) + " k=" + std::to_string(o.k) +
           (o.implied ? " implied" : "") + (o.counts ? (o.clustered ? " clustered-counts" : " counts") : "") +
           (o.nt == normal_transform::inverse_transpose ? " inverse-transpose" : "") + " in=" +
           name_of(o.in) + " out=" + name_of(o.out) + " influences=" + name_of(o.influences) +
           " range=[" + std::to_string(o.range.begin) + "," +
           (o.range.end == vertex_range::all ? std::string("all") : std::to_string(o.range.end)) + ")";
}

/// Runs a job on the scalar reference kernels or the build's own: compiled into this file, through
/// run_linear_with; compiled once (keyblend::kernels), by choosing them for the job's run().
template <class Index>
status run_with_isa(simd_isa isa, const skinning_job<Index>& job) {
#if defined(KEYBLEND_KERNELS_LIBRARY)
    const simd_isa chosen = kernel_isa();
    if (status st = force_kernel_isa(isa); !st) return st;
    const status st = job.run();
    (void)force_kernel_isa(chosen);
    return st;
#else
    return impl::skin::run_linear_with(isa, job);
#endif
}

template <class Index>
std::vector<float> run_path(simd_isa isa, fixture<Index>& f, const reference& r, const std::string& label) {
    f.reset_outputs();
    REQUIRE(run_with_isa(isa, f.job));
    check_against(f, r, label + " [" + to_string(isa) + "]");
    return outputs_of(f);
}

/// The kernels a test compares with the scalar reference: the ones run() uses in this build (with
/// the compiled kernels, the chosen ones: ctest runs the whole suite once per instruction set).
std::vector<simd_isa> tested_isas() {
    if (kernel_isa() == simd_isa::scalar) return {};
    return {kernel_isa()};
}

/// Runs the job on every lane type this build has and through run(); checks each against the
/// double-precision reference and each SIMD path against the scalar one.
template <class Index>
void check_all_paths(const options& o, const char* index) {
    fixture<Index> f(o);
    const std::string label = describe(o, index);
    const status valid = f.job.validate();
    INFO(label << ": " << (valid ? std::string("valid") : valid.error().message));
    REQUIRE(valid);
    const reference r = vertex_major(f.mesh, f.weights_used(), o.nt);
    const std::vector<float> scalar = run_path(simd_isa::scalar, f, r, label);
    std::vector<std::vector<float>> simd;
    for (simd_isa isa : tested_isas()) simd.push_back(run_path(isa, f, r, label));
    f.reset_outputs();
    REQUIRE(f.job.run());
    check_against(f, r, label + " [run]");
    simd.push_back(outputs_of(f));
    // SIMD against scalar, directly (garbage NaNs compare equal by bits).
    for (const std::vector<float>& s : simd) {
        std::size_t bad = 0;
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (kbtest::bit_equal(s[i], scalar[i])) continue;
            if (!(std::fabs(s[i] - scalar[i]) <= tolerance * std::max(1.0f, std::fabs(scalar[i])))) ++bad;
        }
        INFO(label);
        CHECK(bad == 0);
    }
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Spans and the palette
// ---------------------------------------------------------------------------------------------

TEST_CASE("make_span: vec3/vec4 arrays, k values per vertex, struct members") {
    std::vector<glm::vec3> p(5);
    const auto s = make_span(std::as_const(p));
    CHECK(s.data == &p[0].x);
    CHECK(s.size == 5);
    CHECK(s.stride == sizeof(glm::vec3));
    CHECK(s.component_stride == sizeof(float));
    CHECK(&s(3, 2) == &p[3].z);
    std::vector<glm::vec4> t(2);
    CHECK(&make_span(t)(1, 3) == &t[1].w);
    std::vector<std::uint16_t> j(12);
    const auto js = make_span(std::as_const(j), 4);
    CHECK(js.size == 3);
    CHECK(&js(2, 1) == &j[9]);
    CHECK(make_span(std::vector<glm::vec3>{}).empty());
    struct bone {
        std::string name;
        int joint;
        glm::mat4 offset;
    };
    std::vector<bone> bones(3);
    const auto ms = member_span(bones, &bone::joint);
    CHECK(&ms(2) == &bones[2].joint);
    CHECK(&member_span(bones, &bone::offset)(1) == &bones[1].offset);
}

namespace {
status run_palette(span<const glm::mat4> model, span<const skin_bone> bones, span<glm::mat4> out) {
    palette_job job;
    job.model = model;
    job.bones = bones;
    job.output = out;
    const status v = job.validate(), r = job.run();
    CHECK(bool(v) == bool(r));
    if (!v && !r) CHECK(v.error().message == r.error().message);
    return r;
}
} // namespace

TEST_CASE("palette_job: model[bones[b].joint] * bones[b].offset, from a loader's bone array") {
    kbtest::rng rng(3);
    std::vector<glm::mat4> model;
    for (int i = 0; i < 6; ++i) model.push_back(rig_matrix(rng, true));
    std::vector<skin_bone> bones;
    for (std::size_t b = 0; b < 4; ++b) bones.push_back({"b" + std::to_string(b), 5 - b, rig_matrix(rng, false)});
    std::vector<glm::mat4> palette(4);
    REQUIRE(run_palette(model, bones, palette));
    for (std::size_t b = 0; b < 4; ++b) CHECK(palette_matches(palette[b], model[bones[b].joint], bones[b].offset));

    // The classic SkinWeights example's offset matrix (Bip01_R_UpperArm), 16 floats in file order:
    // with the joint at its bind pose (model = inverse(offset)) the bone moves nothing.
    const float classic_offset[16] = {-0.941743f,  -0.646748f, 0.574719f,  0.0f,
                                      -0.283133f,  -0.461979f, -0.983825f, 0.0f,
                                      0.923060f,   -1.114919f, 0.257891f,  0.0f,
                                      -65.499557f, 30.497688f, 12.852692f, 1.0f};
    glm::mat4 offset;
    std::memcpy(&offset[0][0], classic_offset, sizeof classic_offset);
    const std::vector<glm::mat4> bind{glm::inverse(offset)};
    const std::vector<skin_bone> one{{"arm", 0, offset}};
    REQUIRE(run_palette(bind, one, palette));
    CHECK(kbtest::max_abs_diff(palette[0], glm::mat4(1.0f)) < 1e-4f);
}

TEST_CASE("palette_job: into caller memory (a plain array), every invalid configuration an error with nothing written") {
    kbtest::rng rng(5);
    std::vector<glm::mat4> model;
    for (int i = 0; i < 5; ++i) model.push_back(rig_matrix(rng, true));
    std::vector<skin_bone> bones;
    for (std::size_t b : {4u, 0u, 2u}) bones.push_back({"", b, rig_matrix(rng, false)});
    glm::mat4 gpu_buffer[4]; // e.g. a mapped constant buffer, one spare
    const glm::mat4 untouched(7.0f);
    for (glm::mat4& m : gpu_buffer) m = untouched;
    REQUIRE(run_palette(model, bones, gpu_buffer));
    for (std::size_t b = 0; b < 3; ++b) CHECK(palette_matches(gpu_buffer[b], model[bones[b].joint], bones[b].offset));
    CHECK(kbtest::bit_equal(gpu_buffer[3], untouched));

    for (glm::mat4& m : gpu_buffer) m = untouched;
    status st = run_palette(model, bones, span<glm::mat4>(gpu_buffer, 2));
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::size_mismatch);
    st = run_palette(model, bones, span<glm::mat4>(nullptr, 3));
    CHECK(st.error().code == errc::invalid_argument);
    st = run_palette(span<const glm::mat4>(nullptr, 5), bones, gpu_buffer);
    CHECK(st.error().code == errc::invalid_argument);
    st = run_palette(model, span<const skin_bone>(nullptr, 2), gpu_buffer);
    CHECK(st.error().code == errc::invalid_argument);
    bones[1].joint = 5;
    bones[1].name = "forearm";
    st = run_palette(model, bones, gpu_buffer);
    CHECK(st.error().code == errc::out_of_range);
    CHECK(st.error().index == 1);
    CHECK(st.error().message.find("bone 1 'forearm'") != std::string::npos);
    // Several bones outside the pose: the first is named; a too small output comes before them.
    bones[2].joint = std::size_t(-1);
    st = run_palette(model, bones, gpu_buffer);
    CHECK(st.error().index == 1);
    bones[0].joint = 99;
    st = run_palette(model, bones, gpu_buffer);
    CHECK(st.error().index == 0);
    CHECK(st.error().message.find("joint 99 is outside the pose (5 joints)") != std::string::npos);
    CHECK(run_palette(model, bones, span<glm::mat4>(gpu_buffer, 2)).error().code == errc::size_mismatch);
    for (const glm::mat4& m : gpu_buffer) CHECK(kbtest::bit_equal(m, untouched));
    // No bones: nothing to do, whatever the output.
    CHECK(run_palette(model, {}, {}));
}

TEST_CASE("palette_job: a joint outside the pose is found at every position") {
    // The check keeps several running maxima and a tail: a bad joint in each of them, for every
    // count up to two rounds and a tail, with the largest good joint everywhere else.
    const std::size_t joints = 6;
    const std::vector<glm::mat4> model(joints, glm::mat4(2.0f));
    std::vector<glm::mat4> out(11);
    for (std::size_t n = 1; n <= out.size(); ++n) {
        std::vector<skin_bone> bones(n);
        for (skin_bone& b : bones) b.joint = joints - 1;
        CHECK(run_palette(model, bones, out));
        for (std::size_t bad = 0; bad < n; ++bad) {
            CAPTURE(n);
            CAPTURE(bad);
            bones[bad].joint = joints;
            const status st = run_palette(model, bones, out);
            REQUIRE(!st);
            CHECK(st.error().code == errc::out_of_range);
            CHECK(st.error().index == bad);
            bones[bad].joint = joints - 1;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Linear-blend skinning: every path, every layout
// ---------------------------------------------------------------------------------------------

TEST_CASE("the build's kernels") {
#if defined(KEYBLEND_EXPECT_ISA) && !defined(KEYBLEND_KERNELS_LIBRARY)
    CHECK(std::string(to_string(kernel_isa())) == KEYBLEND_EXPECT_ISA);
#endif
    // The compiled kernels run with KEYBLEND_ISA set must run those kernels (ctest sets it only
    // where the CPU has them), or the suite would test the wrong ones.
#if defined(KEYBLEND_KERNELS_LIBRARY)
    if (const char* forced = std::getenv("KEYBLEND_ISA")) CHECK(std::string(to_string(kernel_isa())) == forced);
#endif
    CHECK(kernel_isa_supported(kernel_isa()));
    MESSAGE("skinning runs the " << std::string(to_string(kernel_isa())) << " kernels in this build");
    // KEYBLEND_SKIN_QUADS=0 or 1 decides how the AVX-512 kernels take 2 to 4 slots (ctest runs the
    // AVX-512 suite once each way); without it, the CPU does.
    const std::string quads = std::getenv("KEYBLEND_SKIN_QUADS") ? std::getenv("KEYBLEND_SKIN_QUADS") : "";
    if (quads == "0" || quads == "1") CHECK(impl::tuning::prefer_quads() == (quads == "1"));
    if (kernel_isa() == simd_isa::avx512)
        MESSAGE("2 to 4 slots as " << std::string(impl::tuning::prefer_quads() ? "quads" : "eight lanes"));
}

TEST_CASE("quads where 512-bit operations run whole: on Intel's CPUs and AMD's from Zen 5, not Zen 4") {
    using impl::cpu::family;
    using impl::cpu::full_width_512;
    // CPUID leaf 0's vendor string (ebx, edx, ecx) and leaf 1's eax of real CPUs.
    const unsigned intel[3] = {0x756e6547u, 0x49656e69u, 0x6c65746eu}; // "Genu" "ineI" "ntel"
    const unsigned amd[3] = {0x68747541u, 0x69746e65u, 0x444d4163u};   // "Auth" "enti" "cAMD"
    const unsigned hygon[3] = {0x6f677948u, 0x6e65476eu, 0x656e6975u}; // "Hygo" "nGen" "uine"
    const unsigned sapphire_rapids = 0x000806F8u, zen2 = 0x00830F10u, zen4 = 0x00A10F11u, zen5 = 0x00B40F40u;
    CHECK(family(sapphire_rapids) == 6u);
    CHECK(family(zen2) == 0x17u);
    CHECK(family(zen4) == 0x19u);
    CHECK(family(zen5) == 0x1Au);
    CHECK(full_width_512(intel[0], intel[1], intel[2], sapphire_rapids));
    CHECK_FALSE(full_width_512(amd[0], amd[1], amd[2], zen4));
    CHECK(full_width_512(amd[0], amd[1], amd[2], zen5));
    CHECK_FALSE(full_width_512(amd[0], amd[1], amd[2], zen2));
    CHECK_FALSE(full_width_512(hygon[0], hygon[1], hygon[2], 0x00900F01u));
    // Vendor strings are compared whole: Intel's words with AMD's family are not AMD.
    CHECK_FALSE(full_width_512(amd[0], intel[1], amd[2], zen5));
}

#if (defined(__aarch64__) || defined(_M_ARM64)) && !defined(KEYBLEND_NO_INTRINSICS)
// An AArch64 build runs every job on NEON, four lanes wide: sampling, blending and local-to-model
// on lanes::native, the wide loops of sampling, blending and morphing on lanes::widest, the
// palette's products on lanes::f4, skinning on its 4-lane NEON kernels. The compiled kernels have
// NEON and the scalar reference, and choose NEON unless told otherwise.
TEST_CASE("the build's kernels on AArch64: NEON in every job") {
#if defined(KEYBLEND_KERNELS_LIBRARY)
    CHECK(kernel_isa_supported(simd_isa::neon));
    CHECK(kernel_isa_supported(simd_isa::scalar));
    CHECK_FALSE(kernel_isa_supported(simd_isa::sse2));
    if (!std::getenv("KEYBLEND_ISA")) CHECK(kernel_isa() == simd_isa::neon);
#else
    CHECK(kernel_isa() == simd_isa::neon);
    CHECK(impl::compiled_isa == simd_isa::neon);
    CHECK(impl::lanes::native::width == 4);
    CHECK(impl::lanes::widest::width == 4);
    CHECK(impl::skin::isa == simd_isa::neon);
    CHECK(impl::skin::widest::width == 4);
    CHECK(std::string(KEYBLEND_SIMD_STR(KEYBLEND_ISA)) == "neon_a64");
#endif
}
#endif

#if defined(KEYBLEND_KERNELS_LIBRARY)
namespace {
// ctest runs the suite on the compiled kernels once per instruction set (KEYBLEND_ISA): on a CPU
// without the one asked for, the run is reported as skipped instead of testing other kernels.
const bool skip_unsupported = [] {
    const char* forced = std::getenv("KEYBLEND_ISA");
    if (!forced) return false;
    for (simd_isa isa : {simd_isa::scalar, simd_isa::sse2, simd_isa::avx2, simd_isa::avx512,
                         simd_isa::neon})
        if (std::string(forced) == to_string(isa)) {
            if (kernel_isa_supported(isa)) return false;
            std::printf("KEYBLEND-SKIP: this CPU does not run the %s kernels\n", forced);
            std::exit(0);
        }
    std::printf("KEYBLEND_ISA=%s names no kernels\n", forced);
    std::exit(1);
}();
} // namespace
#endif

TEST_CASE("compiled kernels: the widest the CPU runs by default, others on request") {
#if defined(KEYBLEND_KERNELS_LIBRARY) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__))
    const simd_isa chosen = kernel_isa();
    CHECK(kernel_isa_supported(simd_isa::scalar));
    // The kernels of the flags this file and the library are compiled with (x86-64's SSE2, AArch64's
    // NEON, or with -march=native the machine's widest): every CPU the program runs on has them.
    const simd_isa baseline = impl::compiled_isa;
    CHECK(kernel_isa_supported(baseline));
    if (!std::getenv("KEYBLEND_ISA")) {
        simd_isa widest = baseline;
        for (simd_isa isa : {simd_isa::avx2, simd_isa::avx512})
            if (kernel_isa_supported(isa)) widest = isa;
        CHECK(chosen == widest);
    }
    // Forcing each kernel set the CPU runs: run() then uses it; the results stay within the
    // tolerance of the scalar reference (check_all_paths does the rest per forced run).
    options o;
    o.n = 77;
    fixture<std::uint16_t> f(o);
    const reference r = vertex_major(f.mesh, f.weights_used(), o.nt);
    for (simd_isa isa : {simd_isa::scalar, simd_isa::sse2, simd_isa::avx2, simd_isa::avx512, simd_isa::neon}) {
        if (!kernel_isa_supported(isa)) {
            CHECK(force_kernel_isa(isa).error().code == errc::unsupported);
            continue;
        }
        REQUIRE(force_kernel_isa(isa));
        CHECK(kernel_isa() == isa);
        f.reset_outputs();
        REQUIRE(f.job.run());
        check_against(f, r, std::string("forced ") + to_string(isa));
    }
    REQUIRE(force_kernel_isa(chosen));
#else
    // A static build has its kernels only.
    CHECK(force_kernel_isa(kernel_isa()));
    for (simd_isa isa : {simd_isa::scalar, simd_isa::sse2, simd_isa::avx2, simd_isa::avx512, simd_isa::neon})
        if (isa != kernel_isa()) {
            const status st = force_kernel_isa(isa);
            REQUIRE_FALSE(st);
            CHECK(st.error().code == errc::unsupported);
            CHECK(st.error().message.find("keyblend::kernels") != std::string::npos);
        }
#endif
}

namespace {
/// Overwrites a fixture's inputs with values every build computes alike: small multiples of powers
/// of two, and weights 1/2, 1/4, ... (the last slot the rest), so that no input depends on how a
/// build's compiler contracts the test's own float arithmetic into FMAs (the random meshes do).
void make_exact(fixture<std::uint16_t>& f) {
    for (std::size_t b = 0; b < f.mesh.palette.size(); ++b)
        for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 4; ++r)
                f.mesh.palette[b][c][r] = r == 3 ? (c == 3 ? 1.0f : 0.0f) : float(int((b * 7 + std::size_t(c) * 3 + std::size_t(r) * 5) % 17) - 8) / 8.0f;
    const auto value = [](std::size_t v, std::size_t c, std::size_t salt) {
        return float(int((v * 5 + c * 11 + salt) % 23) - 11) / 4.0f;
    };
    for (std::size_t v = 0; v < f.o.n; ++v) {
        for (std::size_t c = 0; c < 4; ++c) {
            if (c < 3) f.in_pos.at(v, c) = value(v, c, 0);
            if (c < 3) f.in_nrm.at(v, c) = value(v, c, 7);
            f.in_tan.at(v, c) = value(v, c, 13);
        }
        const std::size_t used = f.o.counts ? f.counts[v] : f.o.k;
        const std::size_t stored = f.o.implied ? f.o.k - 1 : f.o.k;
        for (std::size_t i = 0; i < stored; ++i)
            f.weights.at(v, i) = i >= used ? 0.0f : i + 1 == used ? std::ldexp(1.0f, -int(i)) : std::ldexp(1.0f, -int(i) - 1);
    }
}

/// The outputs of a fixed set of jobs through run(), over the layouts and modes the kernels have.
std::vector<float> canonical_outputs() {
    std::vector<float> out;
    const auto add = [&out](const options& o) {
        fixture<std::uint16_t> f(o);
        make_exact(f);
        REQUIRE(f.job.validate());
        REQUIRE(f.job.run());
        const std::vector<float> x = outputs_of(f);
        out.insert(out.end(), x.begin(), x.end());
    };
    for (std::size_t k = 1; k <= max_influences; ++k)
        for (bool implied : {false, true}) {
            options o;
            o.n = 203;
            o.k = k;
            o.implied = implied;
            o.seed = std::uint32_t(k * 2 + implied);
            add(o);
        }
    for (place p : all_places) {
        options o;
        o.n = 150;
        o.in = o.out = o.influences = p;
        o.nt = normal_transform::inverse_transpose;
        o.non_uniform = true;
        add(o);
    }
    options counted;
    counted.n = 300;
    counted.counts = counted.clustered = true;
    add(counted);
    counted.implied = true;
    add(counted);
    return out;
}
} // namespace

TEST_CASE("skinning outputs equal the other builds' (bit for bit where the same kernels run)") {
    // ctest's skin_outputs_<isa> runs of the static builds write their outputs; the compiled-kernels
    // build's runs compare (tests/CMakeLists.txt). Without those variables this only computes.
    const std::vector<float> mine = canonical_outputs();
    if (const char* path = std::getenv("KEYBLEND_SKIN_OUTPUTS_WRITE")) {
        std::FILE* file = std::fopen(path, "wb");
        REQUIRE(file);
        CHECK(std::fwrite(mine.data(), sizeof(float), mine.size(), file) == mine.size());
        std::fclose(file);
    }
    if (const char* path = std::getenv("KEYBLEND_SKIN_OUTPUTS_COMPARE")) {
        std::vector<float> theirs(mine.size() + 1);
        std::FILE* file = std::fopen(path, "rb");
        REQUIRE(file);
        const std::size_t read = std::fread(theirs.data(), sizeof(float), theirs.size(), file);
        std::fclose(file);
        REQUIRE(read == mine.size());
        const bool exact = std::getenv("KEYBLEND_SKIN_OUTPUTS_EXACT") != nullptr;
        std::size_t differ = 0, bad = 0;
        for (std::size_t i = 0; i < mine.size(); ++i) {
            if (kbtest::bit_equal(mine[i], theirs[i])) continue;
            ++differ;
            if (!(std::fabs(mine[i] - theirs[i]) <= tolerance * std::max(1.0f, std::fabs(theirs[i])))) ++bad;
        }
        INFO(path << ": " << differ << " of " << mine.size() << " floats differ in their bits");
        CHECK(bad == 0);
        if (exact) CHECK(differ == 0);
    }
}

// ---------------------------------------------------------------------------------------------
// fixed_skinning: the configuration stated at compile time
// ---------------------------------------------------------------------------------------------

TEST_CASE("fixed_skinning: the same bits as run() for the jobs it fits, an error for the others") {
    using stored4 = fixed_skinning<4, skinned_streams::positions_normals_tangents>;
    for (place p : all_places) {
        options o;
        o.n = 131;
        o.in = o.out = o.influences = p;
        fixture<std::uint16_t> f(o);
        REQUIRE(f.job.run());
        const std::vector<float> general = outputs_of(f);
        f.reset_outputs();
        REQUIRE(f.job.run<stored4>());
        const std::vector<float> fixed = outputs_of(f);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < fixed.size(); ++i) differ += !kbtest::bit_equal(fixed[i], general[i]);
        CHECK(differ == 0);
    }
    SUBCASE("every configuration of one mesh") {
        for (std::size_t k : {1u, 3u, 8u}) {
            options o;
            o.n = 90;
            o.k = k;
            o.tangents = false;
            o.implied = k > 1;
            fixture<std::uint16_t> f(o);
            const reference r = vertex_major(f.mesh, f.weights_used(), o.nt);
            status st;
            f.reset_outputs();
            if (k == 1) st = f.job.run<fixed_skinning<1, skinned_streams::positions_normals>>();
            if (k == 3) st = f.job.run<fixed_skinning<3, skinned_streams::positions_normals, last_weight::implied>>();
            if (k == 8) st = f.job.run<fixed_skinning<8, skinned_streams::positions_normals, last_weight::implied>>();
            REQUIRE(st);
            check_against(f, r, "fixed k=" + std::to_string(k));
        }
    }
    SUBCASE("a job that does not fit is rejected, and nothing written") {
        options o;
        o.n = 40;
        fixture<std::uint16_t> f(o);
        const auto rejected = [&f](const status& st, const char* text) {
            REQUIRE_FALSE(st);
            CHECK(st.error().code == errc::invalid_argument);
            CHECK(st.error().message.find(text) != std::string::npos);
            for (float x : f.out_pos.storage) CHECK(kbtest::bit_equal(x, garbage()));
        };
        f.reset_outputs();
        rejected(f.job.run<fixed_skinning<3, skinned_streams::positions_normals_tangents>>(), "the job has 4 influences");
        rejected(f.job.run<fixed_skinning<4, skinned_streams::positions_normals>>(), "the job has tangents");
        rejected(f.job.run<fixed_skinning<4, skinned_streams::positions_tangents>>(), "the job has normals");
        rejected(f.job.run<fixed_skinning<4, skinned_streams::positions_normals_tangents, last_weight::implied>>(),
                 "last weight is stored");
    }
    SUBCASE("per-vertex counts: stored weights blend all slots (the same result), implied rejected") {
        options o;
        o.n = 200;
        o.counts = o.clustered = true;
        fixture<std::uint16_t> f(o);
        const reference r = vertex_major(f.mesh, f.weights_used(), o.nt);
        f.reset_outputs();
        REQUIRE(f.job.run<stored4>());
        check_against(f, r, "fixed with counts");
        f.job.last = last_weight::implied;
        const status st = f.job.run<fixed_skinning<4, skinned_streams::positions_normals_tangents, last_weight::implied>>();
        REQUIRE_FALSE(st);
        CHECK(st.error().message.find("influence_counts") != std::string::npos);
    }
    SUBCASE("skin_parallel with a fixed configuration gives run()'s bits") {
        options o;
        o.n = 1000;
        fixture<std::uint16_t> f(o);
        REQUIRE(f.job.run());
        const std::vector<float> one = outputs_of(f);
        f.reset_outputs();
        REQUIRE(skin_parallel<stored4>(f.job, 3, [](std::size_t count, const auto& task) {
            for (std::size_t i = count; i-- > 0;) task(i);
        }));
        const std::vector<float> par = outputs_of(f);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < par.size(); ++i) differ += !kbtest::bit_equal(par[i], one[i]);
        CHECK(differ == 0);
    }
}

TEST_CASE("the two references agree: vertex-major (double) and the classic bone-major method") {
    for (std::size_t k : {1u, 2u, 4u, 8u}) {
        const skin_mesh m = random_mesh(300, k, 30, std::uint32_t(k), false, true);
        const std::vector<float> w = effective_weights(m, nullptr, false);
        const reference a = vertex_major(m, w, normal_transform::palette), b = bone_major(m, w);
        double worst = 0.0;
        for (std::size_t v = 0; v < m.size(); ++v) {
            worst = std::max(worst, relative_error(b.positions[v], a.positions[v]));
            worst = std::max(worst, relative_error(b.normals[v], a.normals[v]));
        }
        INFO("k=" << k);
        CHECK(worst < tolerance);
    }
}

TEST_CASE_TEMPLATE("every path equals the references, in every layout", Index, std::uint8_t, std::uint16_t) {
    const char* index = sizeof(Index) == 1 ? "uint8" : "uint16";
    kbtest::rng rng(sizeof(Index));
    int cases = 0;
    for (std::size_t k = 1; k <= max_influences; ++k)
        for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 17u, 203u, 600u}) {
            for (int variant = 0; variant < 6; ++variant) {
                options o;
                o.n = n;
                o.k = k;
                o.bones = 300; // uint8 clamps to 256
                o.seed = std::uint32_t(1000 * k + 10 * n + std::size_t(variant));
                o.in = all_places[variant % 4];
                o.out = all_places[(variant + std::size_t(k)) % 4];
                o.influences = all_places[std::size_t(rng.integer(0, 3))];
                if (o.influences == place::planar) o.influences = place::packed;
                o.implied = variant % 2 == 1;
                o.counts = variant % 3 == 2;
                o.clustered = o.counts && n >= 203;
                o.non_uniform = variant >= 3;
                o.nt = variant >= 3 ? normal_transform::inverse_transpose : normal_transform::palette;
                o.tangents = variant != 4;
                o.normals = variant != 5;
                if (n > 8 && variant % 2 == 0) o.range = vertex_range{n / 3, n - n / 4};
                check_all_paths<Index>(o, index);
                ++cases;
            }
        }
    MESSAGE(cases << " meshes x every lane type");
}

TEST_CASE("planar influences and a mesh the size of tiny.x's body") {
    options o;
    o.n = 4432;
    o.k = 2;
    o.bones = 35;
    o.influences = place::planar; // joint 0 of every vertex, then joint 1 of every vertex
    check_all_paths<std::uint16_t>(o, "uint16");
    o.influences = place::packed;
    o.out = place::padded;
    o.implied = true;
    check_all_paths<std::uint16_t>(o, "uint16");
}

TEST_CASE("the .X loader's layout goes in as it is: bone_indices and weights, k per vertex") {
    // What io/xfile.hpp produces per skinned mesh, used without any conversion.
    const skin_mesh m = random_mesh(500, 3, 12, 77, false, true);
    std::vector<skin_bone> bones;
    kbtest::rng rng(8);
    std::vector<glm::mat4> model;
    for (std::size_t b = 0; b < 12; ++b) {
        model.push_back(rig_matrix(rng, false));
        bones.push_back({"bone" + std::to_string(b), 11 - b, rig_matrix(rng, false)});
    }
    std::vector<glm::mat4> palette(bones.size());
    REQUIRE(run_palette(model, bones, palette));
    std::vector<glm::vec3> out_p(m.size()), out_n(m.size());
    skinning_job<> job = mesh_job(m);
    job.out_positions = make_span(out_p);
    job.out_normals = make_span(out_n);
    job.palette = {palette.data(), palette.size()};
    REQUIRE(job.validate());
    REQUIRE(job.run());
    skin_mesh with_palette = m;
    with_palette.palette = palette;
    const reference r = bone_major(with_palette, m.weights);
    double worst = 0.0;
    for (std::size_t v = 0; v < m.size(); ++v) {
        worst = std::max(worst, relative_error(glm::dvec3(out_p[v]), r.positions[v]));
        worst = std::max(worst, relative_error(glm::dvec3(out_n[v]), r.normals[v]));
    }
    CHECK(worst < tolerance);
}

TEST_CASE("an interleaved vertex buffer skinned in place equals the same skinned out of place") {
    struct vertex {
        float position[3];
        float normal[3];
        float tangent[4];
        std::uint16_t joints[4];
        float weights[4];
    };
    const skin_mesh m = random_mesh(77, 4, 16, 5);
    std::vector<vertex> buffer(m.size());
    for (std::size_t v = 0; v < m.size(); ++v) {
        for (int c = 0; c < 3; ++c) buffer[v].position[c] = m.positions[v][c];
        for (int c = 0; c < 3; ++c) buffer[v].normal[c] = m.normals[v][c];
        for (int c = 0; c < 4; ++c) buffer[v].tangent[c] = m.tangents[v][c];
        for (std::size_t i = 0; i < 4; ++i) {
            buffer[v].joints[i] = m.bone_indices[v * 4 + i];
            buffer[v].weights[i] = m.weights[v * 4 + i];
        }
    }
    const std::size_t n = buffer.size(), s = sizeof(vertex);
    const auto field = [&](float* p, std::size_t size) { return strided_span<float>{p, size, s, 4}; };
    skinning_job<> job;
    job.influences = 4;
    job.joints = {buffer[0].joints, n, s, 2};
    job.weights = {buffer[0].weights, n, s, 4};
    job.in_positions = field(buffer[0].position, n);
    job.in_normals = field(buffer[0].normal, n);
    job.in_tangents = field(buffer[0].tangent, n);
    job.palette = {m.palette.data(), m.palette.size()};
    job.normals = normal_transform::inverse_transpose;

    std::vector<glm::vec3> p(n), nn(n);
    std::vector<glm::vec4> t(n);
    skinning_job<> out_of_place = job;
    out_of_place.out_positions = make_span(p);
    out_of_place.out_normals = make_span(nn);
    out_of_place.out_tangents = make_span(t);
    REQUIRE(out_of_place.validate());
    REQUIRE(out_of_place.run());

    job.out_positions = field(buffer[0].position, n);
    job.out_normals = field(buffer[0].normal, n);
    job.out_tangents = field(buffer[0].tangent, n);
    REQUIRE(job.validate());
    REQUIRE(job.run());
    for (std::size_t v = 0; v < n; ++v) {
        CHECK(kbtest::max_abs_diff(glm::make_vec3(buffer[v].position), p[v]) == 0.0f);
        CHECK(kbtest::max_abs_diff(glm::make_vec3(buffer[v].normal), nn[v]) == 0.0f);
        CHECK(kbtest::max_abs_diff(glm::make_vec4(buffer[v].tangent), t[v]) == 0.0f);
    }
}

TEST_CASE("normals: the palette tilts them under non-uniform scale, the inverse-transpose does not") {
    // One bone squashing y by 4: a surface along the 45-degree diagonal keeps its normal only
    // when normals are transformed by the inverse-transpose.
    const std::vector<glm::mat4> palette{glm::scale(glm::mat4(1.0f), glm::vec3(1.0f, 0.25f, 1.0f))};
    const glm::vec3 tangent = glm::normalize(glm::vec3(1.0f, 1.0f, 0.0f));
    const std::vector<glm::vec3> pos{glm::vec3(0.0f)}, nrm{glm::normalize(glm::vec3(1.0f, -1.0f, 0.0f))};
    std::vector<glm::vec3> op(1), on(1);
    const std::vector<std::uint8_t> joints{0};
    skinning_job<std::uint8_t> job;
    job.influences = 1;
    job.last = last_weight::implied;
    job.joints = make_span(joints, 1);
    job.in_positions = make_span(pos);
    job.in_normals = make_span(nrm);
    job.out_positions = make_span(op);
    job.out_normals = make_span(on);
    job.palette = {palette.data(), 1};
    const glm::vec3 skinned_tangent = glm::mat3(palette[0]) * tangent;
    REQUIRE(job.run());
    CHECK(std::fabs(glm::dot(glm::normalize(on[0]), glm::normalize(skinned_tangent))) > 0.5f);
    job.normals = normal_transform::inverse_transpose;
    REQUIRE(job.run());
    CHECK(std::fabs(glm::dot(glm::normalize(on[0]), glm::normalize(skinned_tangent))) < 1e-6f);
    CHECK(kbtest::max_abs_diff(on[0], glm::transpose(glm::inverse(glm::mat3(palette[0]))) * nrm[0]) < 1e-6f);
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

namespace {
options small_job_options() {
    options o;
    o.n = 16;
    o.k = 4;
    o.bones = 6;
    o.seed = 9;
    return o;
}

/// Checks that validate() and (for structural errors) run() both reject the job with `code`,
/// a message containing `text`, and that run() wrote nothing.
template <class Index>
void expect_rejected(fixture<Index>& f, errc code, const std::string& text, bool run_rejects = true) {
    const status st = f.job.validate();
    REQUIRE_FALSE(st);
    CHECK(st.error().code == code);
    INFO("message: " << st.error().message);
    CHECK(st.error().message.find(text) != std::string::npos);
    f.reset_outputs();
    const std::vector<float> before = outputs_of(f);
    const status r = f.job.run();
    if (run_rejects) {
        REQUIRE_FALSE(r);
        CHECK(r.error().code == code);
        const std::vector<float> after = outputs_of(f);
        CHECK(std::memcmp(before.data(), after.data(), before.size() * sizeof(float)) == 0);
    } else {
        CHECK(r); // data errors: run() does not look, and stays in bounds
    }
}
} // namespace

TEST_CASE("validate: a valid job passes: each broken part is named") {
    fixture<std::uint16_t> f(small_job_options());
    REQUIRE(f.job.validate());

    SUBCASE("zero influences, too many") {
        f.job.influences = 0;
        expect_rejected(f, errc::invalid_argument, "influences is 0");
        f.job.influences = 9;
        expect_rejected(f, errc::invalid_argument, "more than max_influences");
    }
    SUBCASE("joint index outside the palette: named, and run() clamps instead of reading past it") {
        f.joints.at(5, 2) = std::uint16_t(f.mesh.palette.size());
        expect_rejected(f, errc::out_of_range, "vertex 5, influence 2: joint index 6", false);
        CHECK(f.job.validate().error().index == 5);
        f.joints.at(9, 0) = 65535;
        CHECK(f.job.run());
        for (float x : f.out_pos.storage) CHECK(std::isfinite(x));
    }
    SUBCASE("NaN and infinite weights") {
        f.weights.at(3, 1) = std::numeric_limits<float>::quiet_NaN();
        expect_rejected(f, errc::non_finite, "vertex 3, influence 1: weight is nan", false);
        f.weights.at(3, 1) = std::numeric_limits<float>::infinity();
        expect_rejected(f, errc::non_finite, "vertex 3, influence 1: weight is inf", false);
    }
    SUBCASE("weights not summing to one: reported, and fixed only when asked") {
        for (std::size_t i = 0; i < 4; ++i) f.weights.at(7, i) *= 0.9f;
        expect_rejected(f, errc::not_normalized, "vertex 7: weights sum to 0.", false);
        CHECK(f.job.validate().error().index == 7);
        REQUIRE(normalize_weights(4, f.weights.span()));
        CHECK(f.job.validate());
    }
    SUBCASE("implied last weight below zero") {
        options o = small_job_options();
        o.implied = true;
        fixture<std::uint16_t> g(o);
        REQUIRE(g.job.validate());
        g.weights.at(2, 0) += 1.0f;
        expect_rejected(g, errc::not_normalized, "vertex 2: stored weights sum to", false);
    }
    SUBCASE("a vertex with zero influences, a count above k") {
        options o = small_job_options();
        o.counts = true;
        fixture<std::uint16_t> g(o);
        REQUIRE(g.job.validate());
        g.counts[4] = 0;
        expect_rejected(g, errc::invalid_argument, "vertex 4: zero influences", false);
        g.counts[4] = 5;
        expect_rejected(g, errc::invalid_argument, "vertex 4: influence count 5", false);
        g.counts[4] = 3;
        g.weights.at(4, 3) = 0.5f;
        expect_rejected(g, errc::invalid_argument, "vertex 4, influence 3: weight 0.5 in a slot past", false);
    }
    SUBCASE("mismatched span sizes") {
        f.job.out_positions.size = 15;
        expect_rejected(f, errc::size_mismatch, "out_positions has 15 elements");
        f.job.out_positions.size = 16;
        f.job.weights.size = 17;
        expect_rejected(f, errc::size_mismatch, "weights has 17 elements");
        f.job.weights.size = 16;
        f.job.out_normals = {};
        expect_rejected(f, errc::size_mismatch, "normals given on one side only");
    }
    SUBCASE("weights for one implied influence, missing joints or weights") {
        f.job.influences = 1;
        f.job.last = last_weight::implied;
        f.job.joints.component_stride = 2;
        expect_rejected(f, errc::size_mismatch, "weights given for one influence");
        f.job.weights = {};
        CHECK(f.job.run());
        f.job.joints = {};
        expect_rejected(f, errc::invalid_argument, "joints: required");
    }
    SUBCASE("strides too small, misaligned data") {
        f.job.in_positions.stride = 8;
        expect_rejected(f, errc::invalid_argument, "in_positions: stride 8 is too small");
        f.job.in_positions.stride = 12;
        f.job.out_tangents.component_stride = 0;
        expect_rejected(f, errc::invalid_argument, "out_tangents: component stride 0 is too small");
        f.job.out_tangents.component_stride = 4;
        f.job.joints.stride = 6; // four uint16 per vertex need 8
        expect_rejected(f, errc::invalid_argument, "joints: stride 6 is too small");
        f.job.joints.stride = 8;
        f.job.in_normals.component_stride = 6;
        expect_rejected(f, errc::invalid_argument, "misaligned");
        f.job.in_normals.component_stride = 4;
        f.job.in_normals.data = reinterpret_cast<const float*>(reinterpret_cast<const char*>(f.job.in_normals.data) + 1);
        expect_rejected(f, errc::invalid_argument, "in_normals: data, stride or component stride");
    }
    SUBCASE("null data") {
        f.job.out_normals.data = nullptr;
        expect_rejected(f, errc::invalid_argument, "out_normals: null data");
    }
    SUBCASE("outputs overlapping other streams; in place is the same stream only") {
        f.job.out_normals = f.out_pos.span();
        expect_rejected(f, errc::invalid_argument, "out_positions overlaps out_normals");
        f.job.out_normals = f.out_nrm.span();
        f.job.out_positions = f.in_pos.span();
        f.job.out_positions.data += 3; // one vertex further on: overlapping, not the same stream
        expect_rejected(f, errc::invalid_argument, "out_positions overlaps in_positions without being the same stream");
        f.job.out_positions = f.in_nrm.span();
        expect_rejected(f, errc::invalid_argument, "out_positions overlaps in_normals");
        f.job.out_positions = f.in_pos.span(); // in place: fine
        CHECK(f.job.validate());
    }
    SUBCASE("range outside the mesh") {
        f.job.range = vertex_range{0, 17};
        expect_rejected(f, errc::invalid_argument, "range [0, 17)");
        f.job.range = vertex_range{9, 8};
        expect_rejected(f, errc::invalid_argument, "range [9, 8)");
    }
    SUBCASE("empty or non-finite palette") {
        f.job.palette = {f.mesh.palette.data(), 0};
        expect_rejected(f, errc::invalid_argument, "palette is empty");
        f.job.palette = f.mesh.palette;
        f.mesh.palette[3][1][2] = std::numeric_limits<float>::infinity();
        expect_rejected(f, errc::non_finite, "palette matrix 3", false);
    }
}

TEST_CASE("one stored weight: groups of weight 1 and groups of other weights skin alike on every path") {
    // One slot with packed streams scales the transformed vertices by the stored weight, and skips
    // the multiplies in a group whose weights are all 1: both kinds of group, next to each other,
    // against the reference (weights that do not sum to one are run()'s to scale by, not fix).
    options o = small_job_options();
    o.n = 83;
    o.k = 1;
    fixture<std::uint16_t> f(o);
    for (std::size_t v : {9u, 30u, 31u, 47u, 70u}) {
        const float w = v % 2 ? 0.5f : 2.0f;
        f.weights.at(v, 0) = w;
        f.mesh.weights[v] = w;
    }
    const reference r = vertex_major(f.mesh, f.weights_used(), o.nt);
    run_path(simd_isa::scalar, f, r, "one slot, mixed weights");
    for (simd_isa isa : tested_isas()) run_path(isa, f, r, "one slot, mixed weights");
}

namespace {
/// Two paths that make the same FMAs in the same order: the same bits (under -ffast-math, which
/// may contract and reassociate each inlined copy its own way, within a few ulps).
bool same_bits(const glm::vec3& a, const glm::vec3& b) {
#if defined(__FAST_MATH__)
    return kbtest::max_abs_diff(a, b) <= 4e-7f * std::max(1.0f, glm::length(a));
#else
    return kbtest::bit_equal(a, b);
#endif
}
} // namespace

TEST_CASE("packed outputs and padded outputs get the same bits, one slot or several") {
    // Packed streams take the kernels' inline transforms (with AVX-512 and one slot, quads of one
    // vertex per 128-bit lane), padded outputs the out-of-line one (eight lanes of floats): the
    // same FMAs in the same order, so the same bits. (One slot's weights are 1 here: packed, a
    // weight other than 1 scales the transformed vertex, padded the matrix.) A job whose length
    // is not a multiple of the groups; sparse slots.
    for (std::size_t k : {1u, 2u, 3u, 4u}) {
        skin_mesh m = random_mesh(203, k, 20, 5 + std::uint32_t(k), false, k > 1);
        const std::size_t n = m.size();
        skinning_job<> job = mesh_job(m);
        std::vector<glm::vec3> packed_p(n), packed_n(n);
        job.out_positions = make_span(packed_p);
        job.out_normals = make_span(packed_n);
        REQUIRE(job.run());
        std::vector<float> padded_p(4 * n, garbage()), padded_n(4 * n, garbage());
        job.out_positions = {padded_p.data(), n, 16, 4};
        job.out_normals = {padded_n.data(), n, 16, 4};
        REQUIRE(job.run());
        std::size_t differ = 0;
        for (std::size_t v = 0; v < n; ++v) {
            const glm::vec3 p(padded_p[4 * v], padded_p[4 * v + 1], padded_p[4 * v + 2]);
            const glm::vec3 q(padded_n[4 * v], padded_n[4 * v + 1], padded_n[4 * v + 2]);
            differ += !same_bits(packed_p[v], p) + !same_bits(packed_n[v], q);
        }
        INFO(k << " slots, " << std::string(to_string(kernel_isa())));
        CHECK(differ == 0);
    }
}

#if defined(KEYBLEND_KERNELS_LIBRARY) && (defined(__x86_64__) || defined(__i386__))
TEST_CASE("one slot: AVX-512's quads and AVX2's eight lanes get the same bits") {
    // The same arithmetic (the palette matrix, the transformed vertex scaled by a weight other
    // than 1) laid out two ways; groups of weight 1 and groups of other weights.
    if (!kernel_isa_supported(simd_isa::avx2) || !kernel_isa_supported(simd_isa::avx512)) {
        MESSAGE("skipped: this CPU does not run both AVX2 and AVX-512 kernels");
        return;
    }
    skin_mesh m = random_mesh(203, 1, 20, 77);
    for (std::size_t v = 0; v < m.size(); ++v) m.weights[v] = v % 24 < 8 ? 1.0f : 0.25f + 0.01f * float(v % 7);
    std::vector<glm::vec3> out[2][2];
    const simd_isa chosen = kernel_isa();
    for (int i = 0; i < 2; ++i) {
        REQUIRE(force_kernel_isa(i ? simd_isa::avx512 : simd_isa::avx2));
        out[i][0].assign(m.size(), glm::vec3(garbage()));
        out[i][1].assign(m.size(), glm::vec3(garbage()));
        skinning_job<> job = mesh_job(m);
        job.out_positions = make_span(out[i][0]);
        job.out_normals = make_span(out[i][1]);
        REQUIRE(job.run());
    }
    REQUIRE(force_kernel_isa(chosen));
    std::size_t differ = 0;
    for (int s = 0; s < 2; ++s)
        for (std::size_t v = 0; v < m.size(); ++v) differ += !same_bits(out[0][s][v], out[1][s][v]);
    CHECK(differ == 0);
}
#endif

namespace {
/// Each vertex bound to the joint of its run in its first slot: runs of 1 to 16 vertices, so that
/// groups of 8 and quads of one joint start at every offset. With `broken`, every fourth vertex
/// (v % 4 == 3) is bound to the next joint instead, so no quad or group has one joint. With more
/// slots (the loader's layout, stored weights), the vertices of every fifth group use two (slot 1
/// another joint), the others one (slots past it weight 0 and joint 0). Stored weights: groups of
/// weight 1 and groups of other weights.
template <class Index>
void bind_in_runs(fixture<Index>& f, bool broken) {
    constexpr std::size_t lengths[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 3, 1, 11, 6, 4, 8};
    const std::size_t bones = f.mesh.palette.size(), k = f.o.k;
    std::size_t run = 0, left = lengths[0];
    for (std::size_t v = 0; v < f.o.n; ++v, --left) {
        if (left == 0) left = lengths[++run % (sizeof lengths / sizeof lengths[0])];
        std::size_t joint = (run * 7) % bones;
        if (broken && v % 4 == 3) joint = (joint + 1) % bones;
        const float w = v / 8 % 3 == 1 ? 0.5f + 0.125f * float(v % 5) : 1.0f;
        const bool two = k > 1 && v / 8 % 5 == 2;
        for (std::size_t i = 0; i < k; ++i) {
            const std::size_t j = i == 0 ? joint : i == 1 && two ? (joint + 3) % bones : 0;
            const float wi = i == 0 ? (two ? 0.75f : w) : i == 1 && two ? 0.25f : 0.0f;
            f.mesh.bone_indices[v * k + i] = std::uint16_t(j);
            f.joints.at(v, i) = Index(j);
            if (!f.o.implied) {
                f.mesh.weights[v * k + i] = wi;
                f.weights.at(v, i) = wi;
            }
        }
    }
}

template <class Index>
void check_one_joint_runs(const char* index, std::size_t k) {
    for (bool implied : {false, true})
        for (bool tangents : {false, true})
            for (place out : {place::packed, place::padded}) {
                if (implied && k > 1) continue; // slots are left out with stored weights only
                options o = small_job_options();
                o.n = 203;
                o.k = k;
                o.bones = 9;
                o.implied = implied;
                o.tangents = tangents;
                o.out = out;
                fixture<Index> runs(o), broken(o);
                bind_in_runs(runs, false);
                bind_in_runs(broken, true);
                const std::string label = std::string(index) + " k=" + std::to_string(k) +
                                          (implied ? " implied" : " stored") + (tangents ? " +tangents" : "") +
                                          " out=" + name_of(out);
                const reference r = vertex_major(runs.mesh, runs.weights_used(), o.nt);
                const reference rb = vertex_major(broken.mesh, broken.weights_used(), o.nt);
                run_path(simd_isa::scalar, runs, r, "one joint in runs, " + label);
                for (simd_isa isa : tested_isas()) {
                    run_path(isa, runs, r, "one joint in runs, " + label);
                    run_path(isa, broken, rb, "one joint in runs, broken, " + label);
                    std::size_t differ = 0;
                    for (std::size_t v = 0; v < o.n; ++v) {
                        if (v % 4 == 3) continue;
                        const auto at = [v](const buffer<float>& b) { return glm::vec3(b.at(v, 0), b.at(v, 1), b.at(v, 2)); };
                        differ += !same_bits(at(runs.out_pos), at(broken.out_pos)) +
                                  !same_bits(at(runs.out_nrm), at(broken.out_nrm)) +
                                  (tangents && !same_bits(at(runs.out_tan), at(broken.out_tan)));
                    }
                    INFO(label << " [" << std::string(to_string(isa)) << "]");
                    CHECK(differ == 0);
                }
            }
}
} // namespace

TEST_CASE("one slot used: vertices in runs bound to one joint get the bits they get in mixed groups") {
    // A rigid part's one-influence vertices come in runs bound to one joint. A group of 8 (AVX2,
    // or the loader's 4-slot layout where a group blends only its first slot) or a quad (AVX-512,
    // one slot) whose vertices share a joint broadcasts its palette matrix instead of loading and
    // transposing one per vertex: the same values in the same lanes, so each vertex gets the bits
    // it gets when its neighbours are bound to other joints (every fourth vertex rebound). Runs at
    // every offset, both index types, stored weights (of 1 and others) and the implied one,
    // packed and padded outputs, with and without tangents; against the reference.
    for (std::size_t k : {1u, 4u}) {
        check_one_joint_runs<std::uint16_t>("uint16", k);
        check_one_joint_runs<std::uint8_t>("uint8", k);
    }
}

TEST_CASE("the loader's layout: slots of weight 0 in a whole group are left out of its blend") {
    // Four slots, the used ones first, the others weight 0 (and joint 0): each group of 8
    // vertices blends up to the last slot that any of them uses (8-lane kernels, when a sample of
    // the mesh's vertices has a last slot of weight 0). Groups of every such count next
    // to each other, vertices within a group using fewer; against the reference on every path.
    // A NaN weight is not 0: its slot is blended (the vertex comes out NaN, as blending all four
    // gives).
    options o = small_job_options();
    o.n = 203;
    o.k = 4;
    o.bones = 12;
    fixture<std::uint16_t> f(o);
    for (std::size_t v = 0; v < o.n; ++v) {
        const std::size_t group_count = 1 + (v / 8 * 3) % 4;           // 1, 4, 3, 2, 1, ...
        const std::size_t count = v % 8 == 5 ? group_count : 1 + v % group_count;
        float sum = 0.0f;
        for (std::size_t i = 0; i < 4; ++i) sum += i < count ? f.mesh.weights[4 * v + i] : 0.0f;
        for (std::size_t i = 0; i < 4; ++i) {
            const float w = i < count ? f.mesh.weights[4 * v + i] / sum : 0.0f;
            f.weights.at(v, i) = w;
            f.mesh.weights[4 * v + i] = w;
            if (i >= count) f.joints.at(v, i) = 0, f.mesh.bone_indices[4 * v + i] = 0;
        }
    }
    const reference r = vertex_major(f.mesh, f.weights_used(), o.nt);
    run_path(simd_isa::scalar, f, r, "four slots, trailing zeros");
    for (simd_isa isa : tested_isas()) run_path(isa, f, r, "four slots, trailing zeros");
    // Whether groups look for slots to skip is decided for the whole mesh: skin_parallel's chunks
    // give run()'s bits.
    f.reset_outputs();
    REQUIRE(f.job.run());
    const std::vector<float> single = outputs_of(f);
    for (std::size_t tasks : {2u, 3u, 7u}) {
        f.reset_outputs();
        REQUIRE(skin_parallel(f.job, tasks));
        CHECK(std::memcmp(outputs_of(f).data(), single.data(), single.size() * sizeof(float)) == 0);
    }
    // Vertex 3 (its group's vertices use one slot): its last slot's weight NaN.
    f.weights.at(3, 3) = std::numeric_limits<float>::quiet_NaN();
    for (simd_isa isa : tested_isas()) {
        f.reset_outputs();
        REQUIRE(run_with_isa(isa, f.job));
        INFO(to_string(isa));
        // (By the bits: -ffast-math folds std::isnan to false.)
        std::uint32_t nan_bits = 0, finite_bits = 0;
        std::memcpy(&nan_bits, &f.out_pos.at(3, 0), 4);
        std::memcpy(&finite_bits, &f.out_pos.at(4, 0), 4);
        CHECK((nan_bits & 0x7f800000u) == 0x7f800000u);
        CHECK((nan_bits & 0x007fffffu) != 0u);
        CHECK((finite_bits & 0x7f800000u) != 0x7f800000u);
    }
}

namespace {
/// Equal values: the same bits, or zeros of either sign (a slot of weight 0 left out of a blend
/// changes at most the sign of a zero). Under -ffast-math, which may sum an implied weight's
/// others in another order in each kernel, within the tolerance SIMD paths keep to the scalar one.
bool same_value(float a, float b) {
#if defined(__FAST_MATH__)
    return std::fabs(a - b) <= tolerance * std::max(1.0f, std::fabs(a));
#else
    return kbtest::bit_equal(a, b) || a == b;
#endif
}

/// Runs f's job (run(), and run_linear_with the build's widest kernels) with the AVX-512 kernels'
/// 2 to 4 slots as quads and as eight lanes, checks both against the reference and returns how
/// many outputs differ between the two.
template <class Index>
std::size_t quads_against_lanes(fixture<Index>& f, const reference& r, const std::string& label) {
    const int chosen = impl::tuning::quads_choice.load();
    std::vector<float> out[2][2];
    for (int quads = 0; quads < 2; ++quads) {
        impl::tuning::quads_choice.store(quads);
        out[quads][0] = run_path(kernel_isa(), f, r, label + (quads ? " quads" : " lanes"));
        f.reset_outputs();
        REQUIRE(f.job.run());
        check_against(f, r, label + (quads ? " quads [run]" : " lanes [run]"));
        out[quads][1] = outputs_of(f);
    }
    impl::tuning::quads_choice.store(chosen);
    std::size_t differ = 0;
    for (int path = 0; path < 2; ++path)
        for (std::size_t i = 0; i < out[0][path].size(); ++i) differ += !same_value(out[0][path][i], out[1][path][i]);
    return differ;
}

/// The loader's layout for quads_against_lanes: vertices using 1 to k slots (the others weight 0,
/// joint 0), in patterns that differ within quads and within groups of 8, and runs of vertices
/// bound to one joint (a quad of one joint broadcasts its matrix); one slot's weights other than 1
/// too, as a mesh scaled by its weights.
template <class Index>
void loader_layout_quads(const options& o, const std::string& label) {
    const std::size_t k = o.k;
    fixture<Index> f(o);
    bind_in_runs(f, false);
    for (std::size_t v = 0; v < o.n; ++v) {
        std::size_t count = v / 4 % 3 == 0 ? 1 : 1 + (v * 5 + v / 8) % k;
        // Quads of one slot but for one vertex, at each place in turn, that uses more.
        if (v / 4 % 6 == 3 && v % 4 == v / 24 % 4) count = 2 + v % (k - 1);
        float sum = 0.0f;
        for (std::size_t i = 0; i < k; ++i) {
            if (i > 0 && i < count) {
                const std::size_t j = (v + 3 * i) % o.bones;
                f.joints.at(v, i) = Index(j);
                f.mesh.bone_indices[v * k + i] = std::uint16_t(j);
            }
            const float w = i < count ? 1.0f + float((v + i) % 3) : 0.0f;
            f.weights.at(v, i) = f.mesh.weights[v * k + i] = w;
            sum += w;
        }
        if (count == 1) sum = 1.0f / (0.5f + 0.125f * float(v % 5));
        for (std::size_t i = 0; i < count; ++i) f.weights.at(v, i) = f.mesh.weights[v * k + i] = f.weights.at(v, i) / sum;
    }
    const reference r = vertex_major(f.mesh, f.weights_used(), o.nt);
    INFO(label);
    CHECK(quads_against_lanes(f, r, label) == 0);
}
} // namespace

TEST_CASE("2 to 4 slots: AVX-512's quads and its eight lanes get the same values") {
    // On CPUs whose 512-bit operations run at full width (Zen 5) the AVX-512 kernels skin 2 to 4
    // slots as quads of one vertex per 128-bit lane, elsewhere as eight lanes of floats
    // (impl::tuning::prefer_quads): the same FMAs in the same order. The loader's layout with
    // slots of weight 0 leaves out unused last slots (a quad's when its vertices use only the
    // first, a group's of 8 from the last used one), which changes at most the sign of a zero. Both index types, stored and implied weights, every slot count,
    // lengths and ranges that are not whole groups, packed streams without tangents (what the
    // quads take) and with (what they leave to the eight lanes), against the reference too.
    if (kernel_isa() != simd_isa::avx512) {
        MESSAGE("skipped: this build does not run AVX-512 kernels (" << std::string(to_string(kernel_isa())) << ")");
        return;
    }
    for (std::size_t k : {2u, 3u, 4u})
        for (bool implied : {false, true})
            for (bool tangents : {false, true})
                for (std::size_t n : {203u, 64u, 13u}) {
                    options o = small_job_options();
                    o.n = n;
                    o.k = k;
                    o.bones = 11;
                    o.implied = implied;
                    o.tangents = tangents;
                    o.seed = std::uint32_t(100 + k * 7 + n);
                    if (n == 64) o.range = vertex_range{3, 61};
                    const std::string label = "k=" + std::to_string(k) + (implied ? " implied" : " stored") +
                                              (tangents ? " +tangents" : "") + " n=" + std::to_string(n);
                    {
                        fixture<std::uint16_t> f(o);
                        const reference r = vertex_major(f.mesh, f.weights_used(), o.nt);
                        INFO(label << " uint16");
                        CHECK(quads_against_lanes(f, r, label + " uint16") == 0);
                    }
                    {
                        fixture<std::uint8_t> f(o);
                        const reference r = vertex_major(f.mesh, f.weights_used(), o.nt);
                        INFO(label << " uint8");
                        CHECK(quads_against_lanes(f, r, label + " uint8") == 0);
                    }
                    if (implied) continue;
                    loader_layout_quads<std::uint16_t>(o, label + " the loader's layout, uint16");
                    loader_layout_quads<std::uint8_t>(o, label + " the loader's layout, uint8");
                }
}

TEST_CASE("joint indices outside the palette: every path clamps them to the last matrix") {
    // Packed joints (the groups checked whole fall back to clamping), padded joints (clamped
    // index by index), both index types. One slot too: its AVX-512 kernel loads two groups a
    // step and leaves the pairs for the one-group loop at the first bad index.
    for (place infl : {place::packed, place::padded})
        for (std::size_t k : {1u, 2u, 4u, 7u}) {
            options o = small_job_options();
            o.n = 41;
            o.k = k;
            o.influences = infl;
            fixture<std::uint16_t> f(o);
            f.joints.at(3, 0) = 9;
            f.joints.at(20, k - 1) = 65535;
            f.joints.at(33, k > 1 ? 1 : 0) = std::uint16_t(f.mesh.palette.size());
            skin_mesh clamped = f.mesh;
            for (std::size_t v = 0; v < o.n; ++v)
                for (std::size_t i = 0; i < k; ++i)
                    clamped.bone_indices[v * k + i] =
                        std::min<std::uint16_t>(f.joints.at(v, i), std::uint16_t(f.mesh.palette.size() - 1));
            const reference r = vertex_major(clamped, f.weights_used(), o.nt);
            const std::string label = describe(o, "uint16") + " with indices out of range";
            run_path(simd_isa::scalar, f, r, label);
            for (simd_isa isa : tested_isas()) run_path(isa, f, r, label);
        }
}

TEST_CASE("streaming stores: every output alignment, same results as cached stores") {
    const skin_mesh m = random_mesh(301, 4, 20, 17);
    std::vector<glm::vec3> cached_p(m.size()), cached_n(m.size());
    skinning_job<> job = mesh_job(m);
    job.out_positions = make_span(cached_p);
    job.out_normals = make_span(cached_n);
    job.stores = store_policy::cached;
    REQUIRE(job.run());
    // Output arrays starting 0..15 floats into a buffer: every alignment modulo 64 bytes (AVX-512
    // streams whole 64-byte lines, AVX2 32 bytes), with positions and normals aligned alike or not.
    for (std::size_t shift_p = 0; shift_p < 16; ++shift_p)
        for (std::size_t shift_n : {shift_p, (shift_p + 3) % 16}) {
            std::vector<float> bp(3 * m.size() + 32, garbage()), bn(3 * m.size() + 32, garbage());
            job.out_positions = {bp.data() + shift_p, m.size(), 12, 4};
            job.out_normals = {bn.data() + shift_n, m.size(), 12, 4};
            job.stores = store_policy::streaming;
            job.range = vertex_range{shift_p * 3, vertex_range::all}; // also from odd starts
            REQUIRE(job.run());
            std::size_t bad = 0;
            for (std::size_t i = 0; i < bp.size(); ++i) {
                const std::size_t v = (i - shift_p) / 3;
                const bool written = i >= shift_p + 9 * shift_p && i < shift_p + 3 * m.size();
                if (!written) bad += !kbtest::bit_equal(bp[i], garbage());
                else bad += !(std::fabs(bp[i] - cached_p[v][int((i - shift_p) % 3)]) <= 1e-5f * std::max(1.0f, std::fabs(bp[i])));
            }
            for (std::size_t i = 0; i < bn.size(); ++i) {
                const std::size_t v = (i - shift_n) / 3;
                const bool written = i >= shift_n + 9 * shift_p && i < shift_n + 3 * m.size();
                if (!written) bad += !kbtest::bit_equal(bn[i], garbage());
                else bad += !(std::fabs(bn[i] - cached_n[v][int((i - shift_n) % 3)]) <= 1e-5f * std::max(1.0f, std::fabs(bn[i])));
            }
            INFO("positions " << shift_p << " floats in, normals " << shift_n);
            CHECK(bad == 0);
        }
}

// ---------------------------------------------------------------------------------------------
// Packed normals and tangents (10:10:10:2 signed normalized)
// ---------------------------------------------------------------------------------------------

namespace {

/// A 10-bit two's-complement field of a packed word, as an integer.
int field10(std::uint32_t word, int index) {
    const int q = int(word >> (10 * index) & 0x3FFu);
    return q >= 512 ? q - 1024 : q;
}

/// The largest distance, in steps of 1/511, between a packed word's x, y, z and the float
/// vector's direction times 511 (in double); a zero vector wants 0, 0, 0.
double packed_error(std::uint32_t word, const float* v) {
    const double len = std::sqrt(double(v[0]) * v[0] + double(v[1]) * v[1] + double(v[2]) * v[2]);
    double worst = 0.0;
    for (int c = 0; c < 3; ++c)
        worst = std::max(worst, std::fabs(field10(word, c) - (len > 0.0 ? v[c] / len * 511.0 : 0.0)));
    return worst;
}

constexpr std::uint32_t unwritten_word = 0xDEADBEEFu;

} // namespace

TEST_CASE("packed normals and tangents: within half a step of the float result, on every path and range") {
    // Longer than several slices, with ranges that start and end off the SIMD groups.
    const skin_mesh m = random_mesh(1000, 4, 20, 31, true);
    for (const vertex_range range : {vertex_range{}, vertex_range{7, 993}, vertex_range{300, 301}, vertex_range{5, 40}})
        for (simd_isa isa : [] {
                 std::vector<simd_isa> v{simd_isa::scalar};
                 for (simd_isa s : tested_isas()) v.push_back(s);
                 return v;
             }()) {
            INFO("range [" << range.begin << ", " << range.end << "), " << to_string(isa));
            std::vector<glm::vec3> pf(m.size()), nf(m.size());
            std::vector<glm::vec4> tf(m.size());
            skinning_job<> job = mesh_job(m);
            job.in_tangents = make_span(m.tangents);
            job.out_positions = make_span(pf);
            job.out_normals = make_span(nf);
            job.out_tangents = make_span(tf);
            job.range = range;
            REQUIRE(run_with_isa(isa, job));

            // The words as fields of an interleaved vertex (position, normal, tangent: 20 bytes).
            struct vertex {
                float p[3];
                std::uint32_t n, t;
            };
            std::vector<vertex> out(m.size(), vertex{{garbage(), garbage(), garbage()}, unwritten_word, unwritten_word});
            job.out_positions = {&out[0].p[0], m.size(), sizeof(vertex), sizeof(float)};
            job.out_normals = {};
            job.out_tangents = {};
            job.out_normals_packed = {&out[0].n, m.size(), sizeof(vertex), sizeof(std::uint32_t)};
            job.out_tangents_packed = {&out[0].t, m.size(), sizeof(vertex), sizeof(std::uint32_t)};
            REQUIRE(run_with_isa(isa, job));
            const std::size_t end = range.end == vertex_range::all ? m.size() : range.end;
            double worst = 0.0;
            std::size_t bad = 0;
            for (std::size_t v = 0; v < m.size(); ++v) {
                if (v < range.begin || v >= end) {
                    bad += out[v].n != unwritten_word || out[v].t != unwritten_word;
                    continue;
                }
                for (int c = 0; c < 3; ++c)
                    bad += !(std::fabs(out[v].p[c] - pf[v][c]) <= 1e-5f * std::max(1.0f, std::fabs(pf[v][c])));
                worst = std::max({worst, packed_error(out[v].n, &nf[v].x), packed_error(out[v].t, &tf[v].x)});
                bad += (out[v].n >> 30) != 0u;
                bad += (out[v].t >> 30) != (tf[v].w < 0.0f ? 3u : 1u);
            }
            CHECK(bad == 0);
            CHECK(worst <= 0.5 + 1e-3);
        }
}

TEST_CASE("packed normals: zero, non-finite and vanishing vectors give 0, any length keeps its direction") {
    struct expected {
        glm::vec3 normal;
        int x, y, z;
    };
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const std::vector<expected> cases{
        {{0, 0, 0}, 0, 0, 0},           {{nan, 0, 0}, 0, 0, 0},        {{inf, 0, 0}, 0, 0, 0},
        {{1e-39f, 0, 0}, 0, 0, 0},      {{1, 0, 0}, 511, 0, 0},        {{0, -1, 0}, 0, -511, 0},
        {{0, 0, -2.5f}, 0, 0, -511},    {{3, 4, 0}, 307, 409, 0},      {{1e-30f, 0, 0}, 511, 0, 0},
        {{1e30f, -1e30f, 0}, 361, -361, 0}, {{-1e-20f, 1e-20f, 1e-20f}, -295, 295, 295},
    };
    std::vector<glm::vec3> in_p(cases.size(), glm::vec3(1.0f)), in_n, out_p(cases.size());
    for (const expected& e : cases) in_n.push_back(e.normal);
    std::vector<std::uint16_t> joints(cases.size(), 0);
    std::vector<float> weights(cases.size(), 1.0f);
    const std::vector<glm::mat4> palette{glm::mat4(1.0f)};
    skinning_job<> job;
    job.influences = 1;
    job.joints = make_span(joints, 1);
    job.weights = make_span(weights, 1);
    job.in_positions = make_span(in_p);
    job.out_positions = make_span(out_p);
    job.in_normals = make_span(in_n);
    job.palette = {palette.data(), palette.size()};
    std::vector<simd_isa> isas{simd_isa::scalar};
    for (simd_isa s : tested_isas()) isas.push_back(s);
    for (simd_isa isa : isas) {
        std::vector<std::uint32_t> words(cases.size(), unwritten_word);
        job.out_normals_packed = make_span(words, 1);
        REQUIRE(run_with_isa(isa, job));
        for (std::size_t i = 0; i < cases.size(); ++i) {
            INFO(to_string(isa) << ", normal " << i);
            CHECK(field10(words[i], 0) == cases[i].x);
            CHECK(field10(words[i], 1) == cases[i].y);
            CHECK(field10(words[i], 2) == cases[i].z);
            CHECK((words[i] >> 30) == 0u);
        }
    }
}

TEST_CASE("packed outputs: each bad combination an error with nothing written") {
    const skin_mesh m = random_mesh(40, 2, 5, 7);
    std::vector<glm::vec3> p(m.size(), glm::vec3(garbage())), n(m.size());
    std::vector<std::uint32_t> words(m.size() + 1, unwritten_word);
    const auto job_with = [&] {
        skinning_job<> job = mesh_job(m);
        job.out_positions = make_span(p);
        job.out_normals_packed = make_span(words, 1);
        job.out_normals_packed.size = m.size();
        return job;
    };
    const auto fails = [&](const skinning_job<>& job, errc code, const char* words_in_message) {
        const status st = job.run();
        REQUIRE_FALSE(st);
        INFO(st.error().message);
        CHECK(st.error().code == code);
        CHECK(st.error().message.find(words_in_message) != std::string::npos);
        CHECK(std::all_of(words.begin(), words.end(), [](std::uint32_t w) { return w == unwritten_word; }));
        CHECK(kbtest::bit_equal(p[0].x, garbage()));
    };
    {
        skinning_job<> job = job_with();
        job.out_normals = make_span(n);
        fails(job, errc::invalid_argument, "out_normals and out_normals_packed both given");
    }
    {
        skinning_job<> job = job_with();
        job.in_normals = {};
        fails(job, errc::size_mismatch, "out_normals_packed go together");
    }
    {
        skinning_job<> job = job_with();
        job.out_normals_packed.size = m.size() + 1;
        fails(job, errc::size_mismatch, "out_normals_packed has 41 elements");
    }
    {
        skinning_job<> job = job_with();
        job.out_normals_packed.data = reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(words.data()) + 2);
        fails(job, errc::invalid_argument, "out_normals_packed: data, stride or component stride");
    }
    {
        // The words over the input normals' own floats: not in-place skinning, an overlap.
        std::vector<glm::vec3> normals = m.normals;
        skinning_job<> job = job_with();
        job.in_normals = make_span(normals);
        job.out_normals_packed = {reinterpret_cast<std::uint32_t*>(&normals[0].x), m.size(), 12, 4};
        const status st = job.run();
        REQUIRE_FALSE(st);
        CHECK(st.error().message == "out_normals_packed overlaps in_normals without being the same stream "
                                    "(in-place skinning needs the same data and strides)");
        CHECK(normals == m.normals);
    }
    {
        skinning_job<> job = job_with();
        job.out_normals_packed = {reinterpret_cast<std::uint32_t*>(&p[0].x), m.size(), 12, 4};
        fails(job, errc::invalid_argument, "out_positions overlaps out_normals_packed");
    }
    {
        skinning_job<> job = job_with();
        job.in_tangents = make_span(m.tangents);
        job.out_tangents_packed = make_span(words, 1);
        job.out_tangents_packed.size = m.size();
        fails(job, errc::invalid_argument, "overlaps");
    }
    CHECK(job_with().validate());
}

TEST_CASE("packed outputs: skin_parallel, fixed_skinning and dual quaternions give the single job's words") {
    const skin_mesh m = random_mesh(700, 4, 12, 5);
    std::vector<glm::vec3> p(m.size());
    std::vector<std::uint32_t> a(m.size()), b(m.size(), unwritten_word), c(m.size(), unwritten_word);
    skinning_job<> job = mesh_job(m);
    job.out_positions = make_span(p);
    job.out_normals_packed = make_span(a, 1);
    REQUIRE(job.run());
    job.out_normals_packed = make_span(b, 1);
    REQUIRE(skin_parallel(job, 3));
    CHECK(a == b);
    job.out_normals_packed = make_span(c, 1);
    REQUIRE(job.run<fixed_skinning<4>>());
    CHECK(a == c);

    std::vector<dq_bone> dq;
    build_dual_quaternion_palette(m.palette, dq);
    dual_quaternion_skinning_job<> d;
    mesh_streams(d, m);
    d.out_positions = make_span(p);
    d.in_tangents = make_span(m.tangents);
    d.palette = {dq.data(), dq.size()};
    std::vector<glm::vec3> nf(m.size());
    std::vector<glm::vec4> tf(m.size());
    d.out_normals = make_span(nf);
    d.out_tangents = make_span(tf);
    REQUIRE(d.run());
    d.out_normals = {};
    d.out_tangents = {};
    std::vector<std::uint32_t> dn(m.size(), unwritten_word), dt(m.size(), unwritten_word);
    d.out_normals_packed = make_span(dn, 1);
    d.out_tangents_packed = make_span(dt, 1);
    d.range = vertex_range{3, 690};
    REQUIRE(d.run());
    double worst = 0.0;
    std::size_t bad = 0;
    for (std::size_t v = 0; v < m.size(); ++v) {
        if (v < 3 || v >= 690) {
            bad += dn[v] != unwritten_word || dt[v] != unwritten_word;
            continue;
        }
        worst = std::max({worst, packed_error(dn[v], &nf[v].x), packed_error(dt[v], &tf[v].x)});
        bad += (dt[v] >> 30) != (tf[v].w < 0.0f ? 3u : 1u);
    }
    CHECK(bad == 0);
    CHECK(worst <= 0.5 + 1e-3);
}

TEST_CASE("an empty mesh is a valid job that does nothing") {
    skinning_job<> job;
    job.influences = 2;
    const std::vector<glm::mat4> palette(1, glm::mat4(1.0f));
    job.palette = {palette.data(), 1};
    CHECK(job.validate());
    CHECK(job.run());
}

// ---------------------------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------------------------

TEST_CASE("skin_parallel: std::threads and a caller's executor give exactly the single-job result") {
    options o;
    o.n = 1000;
    o.k = 3;
    o.in = place::padded;
    o.out = place::packed;
    fixture<std::uint16_t> f(o);
    REQUIRE(f.job.run());
    const std::vector<float> single = outputs_of(f);
    for (std::size_t threads : {1u, 2u, 3u, 8u}) {
        f.reset_outputs();
        REQUIRE(skin_parallel(f.job, threads));
        CHECK(std::memcmp(outputs_of(f).data(), single.data(), single.size() * sizeof(float)) == 0);
    }
    // An executor that runs the tasks itself, last first.
    f.reset_outputs();
    std::atomic<int> calls{0};
    REQUIRE(skin_parallel(f.job, 5, [&](std::size_t count, const auto& task) {
        for (std::size_t i = count; i-- > 0;) task(i), ++calls;
    }));
    CHECK(calls.load() == 5);
    CHECK(std::memcmp(outputs_of(f).data(), single.data(), single.size() * sizeof(float)) == 0);
    // A range: only it is written.
    f.reset_outputs();
    f.job.range = vertex_range{100, 900};
    f.o.range = f.job.range;
    REQUIRE(skin_parallel(f.job, 4));
    check_against(f, vertex_major(f.mesh, f.weights_used(), o.nt), "parallel range");
    // A broken job is rejected before any task runs.
    f.job.influences = 0;
    calls = 0;
    CHECK_FALSE(skin_parallel(f.job, 3, [&](std::size_t, const auto&) { ++calls; }));
    CHECK(calls.load() == 0);
}

TEST_CASE("skin_parallel: any task count gives the single-job bits, at every alignment of the mesh") {
    // Packed positions and normals 0..15 floats into their buffers: the SIMD groups start at an
    // aligned vertex, the ones before it take the scalar path, and the chunks must split on the
    // same grid for no vertex to change path with the task count.
    const skin_mesh m = random_mesh(1000, 4, 24, 31);
    const std::size_t n = m.size();
    for (std::size_t shift : {0u, 1u, 4u, 7u, 13u}) {
        std::vector<float> in_p(3 * n + 16), in_n(3 * n + 16);
        std::memcpy(in_p.data() + shift, m.positions.data(), 3 * n * sizeof(float));
        std::memcpy(in_n.data() + shift, m.normals.data(), 3 * n * sizeof(float));
        std::vector<float> out_p(3 * n + 16, garbage()), out_n(3 * n + 16, garbage());
        skinning_job<> job = mesh_job(m);
        job.in_positions = {in_p.data() + shift, n, 12, 4};
        job.in_normals = {in_n.data() + shift, n, 12, 4};
        job.out_positions = {out_p.data() + (shift + 5) % 16, n, 12, 4};
        job.out_normals = {out_n.data() + shift, n, 12, 4};
        for (const vertex_range range : {vertex_range{}, vertex_range{3, 997}}) {
            job.range = range;
            std::fill(out_p.begin(), out_p.end(), garbage());
            std::fill(out_n.begin(), out_n.end(), garbage());
            REQUIRE(job.run());
            const std::vector<float> single_p = out_p, single_n = out_n;
            for (std::size_t tasks : {2u, 3u, 5u, 8u}) {
                std::fill(out_p.begin(), out_p.end(), garbage());
                std::fill(out_n.begin(), out_n.end(), garbage());
                REQUIRE(skin_parallel(job, tasks, [](std::size_t count, const auto& task) {
                    for (std::size_t i = 0; i < count; ++i) task(i);
                }));
                INFO("shift " << shift << ", range [" << range.begin << ", " << range.end << "), " << tasks
                              << " tasks");
                CHECK(std::memcmp(out_p.data(), single_p.data(), out_p.size() * sizeof(float)) == 0);
                CHECK(std::memcmp(out_n.data(), single_n.data(), out_n.size() * sizeof(float)) == 0);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The palette fused into the skinning job
// ---------------------------------------------------------------------------------------------

namespace {
/// A pose's model matrices and a mesh's bones (each bone on a joint of the pose, in no particular
/// order, with its own offset).
struct fused_rig {
    std::vector<glm::mat4> model;
    std::vector<skin_bone> bones;
};
fused_rig random_rig(std::size_t joints, std::size_t bones, std::uint32_t seed, bool non_uniform) {
    kbtest::rng rng(seed);
    fused_rig r;
    for (std::size_t j = 0; j < joints; ++j) r.model.push_back(rig_matrix(rng, non_uniform));
    for (std::size_t b = 0; b < bones; ++b)
        r.bones.push_back({"bone " + std::to_string(b), std::size_t(rng.integer(0, int(joints) - 1)),
                           glm::inverse(rig_matrix(rng, false))});
    return r;
}

/// The outputs p, n, t after `run` (which must succeed), from garbage.
template <class Run>
std::vector<float> outputs_after(Run&& run, std::vector<glm::vec3>& p, std::vector<glm::vec3>& n,
                                 std::vector<glm::vec4>& t) {
    std::fill(p.begin(), p.end(), glm::vec3(garbage()));
    std::fill(n.begin(), n.end(), glm::vec3(garbage()));
    std::fill(t.begin(), t.end(), glm::vec4(garbage()));
    REQUIRE(run());
    std::vector<float> all;
    for (const glm::vec3& v : p) all.insert(all.end(), {v.x, v.y, v.z});
    for (const glm::vec3& v : n) all.insert(all.end(), {v.x, v.y, v.z});
    for (const glm::vec4& v : t) all.insert(all.end(), {v.x, v.y, v.z, v.w});
    return all;
}
} // namespace

TEST_CASE("the palette fused: model and bones in the job give palette_job then skinning_job's bits") {
    for (const std::size_t k : {1u, 2u, 4u, 8u})
        for (const bool inverse_transpose : {false, true})
            for (const bool implied : {false, true}) {
                INFO("k " << k << ", inverse-transpose " << inverse_transpose << ", implied " << implied);
                const fused_rig rig = random_rig(40, 24, std::uint32_t(10 * k + implied), inverse_transpose);
                skin_mesh m = random_mesh(700, k, rig.bones.size(), std::uint32_t(k), inverse_transpose);
                std::vector<float> weights = m.weights;
                if (implied) { // drop each vertex's last weight
                    weights.clear();
                    for (std::size_t v = 0; v < m.size(); ++v)
                        for (std::size_t i = 0; i + 1 < k; ++i) weights.push_back(m.weights[v * k + i]);
                }
                std::vector<glm::mat4> palette(rig.bones.size());
                palette_job pj;
                pj.model = rig.model;
                pj.bones = rig.bones;
                pj.output = palette;
                REQUIRE(pj.run());

                std::vector<glm::vec3> p(m.size()), n(m.size());
                std::vector<glm::vec4> t(m.size());
                skinning_job<> job = mesh_job(m);
                job.last = implied ? last_weight::implied : last_weight::stored;
                job.weights = implied ? (k > 1 ? make_span(weights, k - 1) : strided_span<const float>{})
                                      : make_span(weights, k);
                job.in_tangents = make_span(m.tangents);
                job.out_positions = make_span(p);
                job.out_normals = make_span(n);
                job.out_tangents = make_span(t);
                job.normals = inverse_transpose ? normal_transform::inverse_transpose : normal_transform::palette;
                job.palette = palette;
                const std::vector<float> separate = outputs_after([&] { return job.run(); }, p, n, t);
                const auto same = [&separate](const std::vector<float>& other) {
                    return other.size() == separate.size() &&
                           std::memcmp(other.data(), separate.data(), separate.size() * sizeof(float)) == 0;
                };

                skinning_job<> fused = job;
                fused.palette = {};
                fused.model = rig.model;
                fused.bones = rig.bones;
                CHECK(fused.validate());
                CHECK(same(outputs_after([&] { return fused.run(); }, p, n, t)));
                // skin_parallel (the palette computed once for the tasks): the same bits.
                for (std::size_t tasks : {1u, 3u})
                    CHECK(same(outputs_after([&] { return skin_parallel(fused, tasks); }, p, n, t)));
                if (k == 4 && !implied) {
                    using config = fixed_skinning<4, skinned_streams::positions_normals_tangents>;
                    CHECK(same(outputs_after([&] { return fused.run<config>(); }, p, n, t)));
                }
            }
}

TEST_CASE("the palette fused: 8-bit joints address max_fused_bones bones, every bad part an error with nothing written") {
    const fused_rig rig = random_rig(300, max_fused_bones, 77, false);
    skin_mesh m = random_mesh(200, 2, max_fused_bones, 78);
    std::vector<std::uint8_t> joints8;
    for (std::size_t v = 0; v < m.size(); ++v) { // the last bone used too
        m.bone_indices[2 * v] = std::uint16_t(v == 7 ? max_fused_bones - 1 : m.bone_indices[2 * v]);
        for (std::size_t i = 0; i < 2; ++i) joints8.push_back(std::uint8_t(m.bone_indices[2 * v + i]));
    }
    std::vector<glm::vec3> p(m.size()), n(m.size()), p2(m.size()), n2(m.size());
    skinning_job<std::uint8_t> job;
    job.influences = 2;
    job.joints = make_span(joints8, 2);
    job.weights = make_span(m.weights, 2);
    job.in_positions = make_span(m.positions);
    job.in_normals = make_span(m.normals);
    job.out_positions = make_span(p);
    job.out_normals = make_span(n);
    job.model = rig.model;
    job.bones = rig.bones;
    REQUIRE(job.validate());
    REQUIRE(job.run());
    std::vector<glm::mat4> palette(max_fused_bones);
    palette_job pj;
    pj.model = rig.model;
    pj.bones = rig.bones;
    pj.output = palette;
    REQUIRE(pj.run());
    skinning_job<std::uint8_t> separate = job;
    separate.model = {};
    separate.bones = {};
    separate.palette = palette;
    separate.out_positions = make_span(p2);
    separate.out_normals = make_span(n2);
    REQUIRE(separate.run());
    CHECK(std::memcmp(p.data(), p2.data(), p.size() * sizeof(glm::vec3)) == 0);
    CHECK(std::memcmp(n.data(), n2.data(), n.size() * sizeof(glm::vec3)) == 0);

    // Each error from validate() and run() alike, naming the part; no output written.
    const auto rejected = [&](const skinning_job<std::uint8_t>& bad, errc code, const std::string& words,
                              bool run_too = true) {
        std::fill(p.begin(), p.end(), glm::vec3(garbage()));
        const status v = bad.validate();
        REQUIRE_FALSE(v);
        CHECK(v.error().code == code);
        INFO(v.error().message);
        CHECK(v.error().message.find(words) != std::string::npos);
        const status r = bad.run();
        CHECK(bool(r) == !run_too);
        if (run_too) {
            CHECK(r.error().message == v.error().message);
            for (const glm::vec3& x : p) CHECK(kbtest::bit_equal(x.x, garbage()));
        }
        CHECK(bool(skin_parallel(bad, 2)) == !run_too);
        return v.error();
    };
    skinning_job<std::uint8_t> bad = job;
    bad.palette = palette;
    rejected(bad, errc::invalid_argument, "a palette and bones both given");
    std::vector<skin_bone> more = rig.bones;
    more.push_back(more[0]);
    bad = job;
    bad.bones = more;
    rejected(bad, errc::size_mismatch, "257 bones");
    bad = job;
    more = rig.bones;
    more[40].joint = 300;
    bad.bones = more;
    CHECK(rejected(bad, errc::out_of_range, "bone 40 'bone 40': joint 300 is outside the pose (300 joints)").index == 40);
    bad = job;
    bad.model = span<const glm::mat4>(nullptr, 300);
    rejected(bad, errc::invalid_argument, "null data");
    bad = job; // a pose but no bones: there is no palette
    bad.bones = {};
    rejected(bad, errc::invalid_argument, "the palette is empty");
    // What validate() alone finds: a model matrix that makes a palette matrix non-finite, and a
    // vertex's joint past the bones (run() clamps it to the last bone).
    std::vector<glm::mat4> model = rig.model;
    model[rig.bones[9].joint][3][1] = std::numeric_limits<float>::quiet_NaN();
    bad = job;
    bad.model = model;
    std::size_t first_bone = 0; // the first bone on that joint
    while (rig.bones[first_bone].joint != rig.bones[9].joint) ++first_bone;
    CHECK(rejected(bad, errc::non_finite, "palette matrix " + std::to_string(first_bone) + " is not finite", false)
              .index == first_bone);
    more = rig.bones;
    more.resize(100);
    bad = job;
    bad.bones = more;
    rejected(bad, errc::out_of_range, "is outside the palette (100 matrices)", false);
}

// ---------------------------------------------------------------------------------------------
// Preparing influences
// ---------------------------------------------------------------------------------------------

TEST_CASE("compact_influences: zero slots moved out, counts written, same skinning as all k slots") {
    skin_mesh m = random_mesh(257, 6, 40, 21, false, true);
    std::vector<std::uint16_t> joints = m.bone_indices;
    std::vector<float> weights = m.weights;
    std::vector<std::uint8_t> counts(m.size());
    std::size_t largest = 0;
    REQUIRE(compact_influences(m.k, make_span(joints, m.k), make_span(weights, m.k),
                               strided_span<std::uint8_t>{counts.data(), counts.size(), 1, 1}, &largest));
    CHECK(largest == 6);
    for (std::size_t v = 0; v < m.size(); ++v) {
        std::vector<std::pair<std::uint16_t, float>> before, after;
        for (std::size_t i = 0; i < m.k; ++i) {
            if (m.weights[v * m.k + i] != 0.0f) before.emplace_back(m.bone_indices[v * m.k + i], m.weights[v * m.k + i]);
            if (i < counts[v]) after.emplace_back(joints[v * m.k + i], weights[v * m.k + i]);
            else CHECK((joints[v * m.k + i] == 0 && weights[v * m.k + i] == 0.0f));
        }
        CHECK(before == after); // same influences, same order
    }
    // Skinning with the counts equals skinning all six slots.
    std::vector<glm::vec3> a(m.size()), b(m.size());
    skinning_job<> job;
    job.influences = m.k;
    job.joints = make_span(m.bone_indices, m.k);
    job.weights = make_span(m.weights, m.k);
    job.in_positions = make_span(m.positions);
    job.out_positions = make_span(a);
    job.palette = {m.palette.data(), m.palette.size()};
    REQUIRE(job.run());
    job.joints = make_span(joints, m.k);
    job.weights = make_span(weights, m.k);
    job.influence_counts = {counts.data(), counts.size(), 1, 1};
    job.out_positions = make_span(b);
    REQUIRE(job.validate());
    REQUIRE(job.run());
    for (std::size_t v = 0; v < m.size(); ++v) CHECK(relative_error(b[v], a[v]) < 1e-6);

    SUBCASE("a vertex with no weight keeps one empty slot and is reported") {
        for (std::size_t i = 0; i < m.k; ++i) weights[3 * m.k + i] = 0.0f;
        const status st = compact_influences(m.k, make_span(joints, m.k), make_span(weights, m.k),
                                             strided_span<std::uint8_t>{counts.data(), counts.size(), 1, 1});
        REQUIRE_FALSE(st);
        CHECK(st.error().code == errc::not_normalized);
        CHECK(st.error().index == 3);
        CHECK(counts[3] == 1);
        CHECK(counts[4] > 0);
    }
}

TEST_CASE("normalize_weights: sums made one, counts respected, unusable vertices reported") {
    std::vector<float> w{1, 1, 0, 0, /**/ 2, 6, 0, 0, /**/ 0, 0, 0, 0, /**/ 1, 1, 1, 1};
    const std::vector<std::uint8_t> counts{2, 2, 2, 3};
    const status st = normalize_weights(4, make_span(w, 4), {counts.data(), 4, 1, 1});
    REQUIRE_FALSE(st);
    CHECK(st.error().index == 2);
    CHECK(w == std::vector<float>{0.5f, 0.5f, 0, 0, 0.25f, 0.75f, 0, 0, 0, 0, 0, 0,
                                  1.0f / 3.0f, 1.0f / 3.0f, 1.0f / 3.0f, 1});
}

// ---------------------------------------------------------------------------------------------
// Dual-quaternion skinning
// ---------------------------------------------------------------------------------------------

namespace {
/// A closed cylinder along x from -2 to 2, radius 1: rings of vertices and capped ends, bound to
/// bone 0 at the -x end and bone 1 at the +x end with weights that cross smoothly over [-1, 1].
struct cylinder {
    std::vector<glm::vec3> positions, normals;
    std::vector<std::uint16_t> joints;
    std::vector<float> weights;
    std::vector<std::uint32_t> triangles;
};

cylinder make_cylinder(int rings, int segments) {
    cylinder c;
    const auto add = [&](glm::vec3 p, glm::vec3 n) {
        const float t = glm::clamp((p.x + 1.0f) * 0.5f, 0.0f, 1.0f);
        const float w1 = t * t * (3.0f - 2.0f * t);
        c.positions.push_back(p);
        c.normals.push_back(n);
        c.joints.insert(c.joints.end(), {0, 1});
        c.weights.insert(c.weights.end(), {1.0f - w1, w1});
        return std::uint32_t(c.positions.size() - 1);
    };
    for (int r = 0; r < rings; ++r)
        for (int s = 0; s < segments; ++s) {
            const float x = -2.0f + 4.0f * float(r) / float(rings - 1);
            const float a = 6.2831853f * float(s) / float(segments);
            add(glm::vec3(x, std::cos(a), std::sin(a)), glm::vec3(0.0f, std::cos(a), std::sin(a)));
        }
    const auto at = [&](int r, int s) { return std::uint32_t(r * segments + (s % segments)); };
    for (int r = 0; r + 1 < rings; ++r)
        for (int s = 0; s < segments; ++s)
            c.triangles.insert(c.triangles.end(), {at(r, s), at(r + 1, s + 1), at(r + 1, s),
                                                   at(r, s), at(r, s + 1), at(r + 1, s + 1)});
    const std::uint32_t left = add(glm::vec3(-2.0f, 0.0f, 0.0f), glm::vec3(-1.0f, 0.0f, 0.0f));
    const std::uint32_t right = add(glm::vec3(2.0f, 0.0f, 0.0f), glm::vec3(1.0f, 0.0f, 0.0f));
    for (int s = 0; s < segments; ++s) {
        c.triangles.insert(c.triangles.end(), {left, at(0, s + 1), at(0, s)});
        c.triangles.insert(c.triangles.end(), {right, at(rings - 1, s), at(rings - 1, s + 1)});
    }
    return c;
}

/// One mesh skinned twice from the same matrix palette: linear blending and dual quaternions.
struct both_skinned {
    std::vector<glm::vec3> lbs_positions, lbs_normals, dqs_positions, dqs_normals;
};

both_skinned skin_both(std::size_t k, const std::vector<std::uint16_t>& joints, const std::vector<float>& weights,
                       const std::vector<glm::vec3>& positions, const std::vector<glm::vec3>& normals,
                       const std::vector<glm::mat4>& palette, normal_transform nt) {
    const std::size_t n = positions.size();
    both_skinned out{std::vector<glm::vec3>(n), std::vector<glm::vec3>(n), std::vector<glm::vec3>(n),
                     std::vector<glm::vec3>(n)};
    std::vector<dq_bone> dq;
    build_dual_quaternion_palette(palette, dq);
    skinning_job<> lbs;
    lbs.influences = k;
    lbs.joints = make_span(joints, k);
    lbs.weights = make_span(weights, k);
    lbs.in_positions = make_span(positions);
    lbs.in_normals = make_span(normals);
    lbs.out_positions = make_span(out.lbs_positions);
    lbs.out_normals = make_span(out.lbs_normals);
    lbs.palette = {palette.data(), palette.size()};
    lbs.normals = nt;
    dual_quaternion_skinning_job<> dqs;
    static_cast<skinning_streams<std::uint16_t>&>(dqs) = lbs;
    dqs.out_positions = make_span(out.dqs_positions);
    dqs.out_normals = make_span(out.dqs_normals);
    dqs.palette = {dq.data(), dq.size()};
    dqs.normals = nt;
    REQUIRE(lbs.validate());
    REQUIRE(dqs.validate());
    REQUIRE(lbs.run());
    REQUIRE(dqs.run());
    return out;
}

/// Signed volume of a closed triangle mesh (divergence theorem).
double volume(const std::vector<glm::vec3>& p, const std::vector<std::uint32_t>& tris) {
    double v = 0.0;
    for (std::size_t i = 0; i < tris.size(); i += 3)
        v += glm::dot(glm::dvec3(p[tris[i]]), glm::cross(glm::dvec3(p[tris[i + 1]]), glm::dvec3(p[tris[i + 2]])));
    return v / 6.0;
}
} // namespace

TEST_CASE("dual quaternions: build from matrices, one influence equals the matrix") {
    kbtest::rng rng(31);
    std::vector<glm::mat4> palette;
    for (int i = 0; i < 8; ++i) palette.push_back(rig_matrix(rng, i % 2 == 1));
    palette.push_back(glm::scale(glm::mat4(1.0f), glm::vec3(-1.0f, 1.0f, 1.0f))); // a mirror
    std::vector<dq_bone> dq;
    build_dual_quaternion_palette(palette, dq);
    REQUIRE(dq.size() == palette.size());
    for (std::size_t b = 0; b < palette.size(); ++b) {
        const glm::mat3 r = glm::mat3_cast(dq[b].rigid.real);
        CHECK(std::fabs(glm::determinant(r) - 1.0f) < 1e-5f);
        // Recompose: translation from the dual part, t = 2 * dual * conj(real).
        const glm::quat t = dq[b].rigid.dual * glm::conjugate(dq[b].rigid.real);
        const glm::vec3 translation = 2.0f * glm::vec3(t.x, t.y, t.z);
        CHECK(kbtest::max_abs_diff(translation, glm::vec3(palette[b][3])) < 1e-5f);
        glm::mat4 m(r * dq[b].scale);
        m[3] = glm::vec4(translation, 1.0f);
        CHECK(kbtest::max_abs_diff(m, palette[b]) < 1e-5f);
    }
    // One influence per vertex: DQS and LBS agree.
    const skin_mesh mesh = random_mesh(100, 1, palette.size(), 4, true);
    const both_skinned s = skin_both(1, mesh.bone_indices, mesh.weights, mesh.positions, mesh.normals, palette,
                                     normal_transform::inverse_transpose);
    for (std::size_t v = 0; v < mesh.size(); ++v) {
        CHECK(relative_error(s.dqs_positions[v], s.lbs_positions[v]) < 1e-5);
        CHECK(relative_error(s.dqs_normals[v], s.lbs_normals[v]) < 1e-5);
    }
}

TEST_CASE("dual quaternions keep a cylinder's volume through a 180-degree twist: LBS collapses it") {
    const cylinder c = make_cylinder(81, 64);
    const double rest = volume(c.positions, c.triangles);
    // Bone 1 twists the +x end half a turn about the cylinder's axis.
    const std::vector<glm::mat4> palette{glm::mat4(1.0f),
                                         glm::rotate(glm::mat4(1.0f), 3.14159265f, glm::vec3(1, 0, 0))};
    const both_skinned s = skin_both(2, c.joints, c.weights, c.positions, c.normals, palette,
                                     normal_transform::palette);
    const std::vector<glm::vec3>&lbs_p = s.lbs_positions, &dqs_p = s.dqs_positions, &dqs_n = s.dqs_normals;
    const double lbs_volume = volume(lbs_p, c.triangles), dqs_volume = volume(dqs_p, c.triangles);
    const double lbs_loss = 1.0 - lbs_volume / rest, dqs_loss = 1.0 - dqs_volume / rest;
    MESSAGE("cylinder volume " << rest << ": LBS " << lbs_volume << " (" << 100.0 * lbs_loss
                               << "% lost), DQS " << dqs_volume << " (" << 100.0 * dqs_loss << "% lost)");
    CHECK(std::fabs(dqs_loss) < 0.005); // stated tolerance: 0.5%
    CHECK(lbs_loss > 0.2);              // the candy wrapper (25.7% analytically)
    // At the middle ring, DQS keeps the radius and LBS pinches it to the axis.
    const std::size_t mid = 40 * 64 + 16;
    CHECK(std::fabs(glm::length(glm::vec2(dqs_p[mid].y, dqs_p[mid].z)) - 1.0f) < 1e-4f);
    CHECK(glm::length(glm::vec2(lbs_p[mid].y, lbs_p[mid].z)) < 1e-4f);
    // DQS normals stay unit and radial.
    for (std::size_t v = 0; v < 81 * 64; ++v) {
        CHECK(std::fabs(glm::length(dqs_n[v]) - 1.0f) < 1e-4f);
        CHECK(std::fabs(dqs_n[v].x) < 1e-4f);
    }
}

TEST_CASE("dual quaternions: validation, threads, ranges") {
    const cylinder c = make_cylinder(9, 8);
    const std::vector<glm::mat4> palette{glm::mat4(1.0f), glm::rotate(glm::mat4(1.0f), 1.0f, glm::vec3(1, 0, 0))};
    std::vector<dq_bone> dq;
    build_dual_quaternion_palette(palette, dq);
    std::vector<glm::vec3> a(c.positions.size()), b(c.positions.size());
    dual_quaternion_skinning_job<> job;
    job.influences = 2;
    job.joints = make_span(c.joints, 2);
    job.weights = make_span(c.weights, 2);
    job.in_positions = make_span(c.positions);
    job.out_positions = make_span(a);
    job.palette = {dq.data(), dq.size()};
    REQUIRE(job.run());
    job.out_positions = make_span(b);
    REQUIRE(skin_parallel(job, 3));
    CHECK(a == b);
    job.palette = {dq.data(), 1};
    const status st = job.validate();
    REQUIRE_FALSE(st);
    CHECK(st.error().code == errc::out_of_range);
    CHECK(job.run()); // clamps
    dq[1].scale[0][0] = std::numeric_limits<float>::quiet_NaN();
    job.palette = {dq.data(), 2};
    CHECK(job.validate().error().code == errc::non_finite);
}
