// Shared test helpers: comparisons, deterministic random values, access to the test data.
#pragma once

#include <keyblend/math.hpp>
#include <keyblend/pose.hpp>
#include <keyblend/skeleton.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kbtest {

/// The text holds the part (messages and listings are checked by the words a user reads).
inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Same bits (no tolerance, -0 differs from +0, NaN equals the same NaN).
template <class T>
bool bit_equal(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}
/// The same for x, y and z only: under GLM_FORCE_DEFAULT_ALIGNED_GENTYPES a vec3 has a fourth,
/// padding lane that its three-component constructor leaves unset.
inline bool bit_equal(const glm::vec3& a, const glm::vec3& b) {
    return bit_equal(a.x, b.x) && bit_equal(a.y, b.y) && bit_equal(a.z, b.z);
}

inline float max_abs_diff(const glm::vec3& a, const glm::vec3& b) {
    const glm::vec3 d = glm::abs(a - b);
    return std::max(d.x, std::max(d.y, d.z));
}
inline float max_abs_diff(const glm::vec4& a, const glm::vec4& b) {
    const glm::vec4 d = glm::abs(a - b);
    return std::max(std::max(d.x, d.y), std::max(d.z, d.w));
}
inline float max_abs_diff(const glm::mat4& a, const glm::mat4& b) {
    float m = 0.0f;
    for (int c = 0; c < 4; ++c) m = std::max(m, max_abs_diff(a[c], b[c]));
    return m;
}
/// |a - b| relative to b's largest entry (at least 1).
inline float relative_error(const glm::mat4& a, const glm::mat4& b) {
    float scale = 1.0f;
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) scale = std::max(scale, std::fabs(b[c][r]));
    return max_abs_diff(a, b) / scale;
}
/// A matrix product against the same product computed elsewhere (glm's, or the library's in another
/// inlining context): equal within float rounding. The compiler may contract either side's
/// multiplies and adds into FMAs its own way (GCC's -ffp-contract=fast).
inline bool product_matches(const glm::mat4& got, const glm::mat4& want) {
    return relative_error(got, want) <= 2e-6f;
}
/// Component distance between two quaternions, as given (q and -q differ).
inline float max_abs_diff(const glm::quat& a, const glm::quat& b) {
    return std::max(std::max(std::fabs(a.w - b.w), std::fabs(a.x - b.x)),
                    std::max(std::fabs(a.y - b.y), std::fabs(a.z - b.z)));
}
/// Angle in radians of the rotation taking a to b (q and -q are the same rotation), in double:
/// 4 atan2(|p - q|, |p + q|) of the normalised pair, well conditioned for nearly equal rotations
/// (2 acos(|p . q|) loses everything below ~3e-4 rad to the rounding of p . q near 1).
inline double rotation_angle(const glm::quat& a, const glm::quat& b) {
    glm::dvec4 p(a.w, a.x, a.y, a.z), q(b.w, b.x, b.y, b.z);
    p /= glm::length(p);
    q /= glm::length(q);
    if (glm::dot(p, q) < 0.0) q = -q;
    return 4.0 * std::atan2(glm::length(p - q), glm::length(p + q));
}

/// Deterministic random numbers (each test seeds its own).
class rng {
public:
    explicit rng(std::uint32_t seed) : engine_(seed) {}
    float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(engine_); }
    int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(engine_); }
    glm::vec3 vec3(float lo, float hi) { return glm::vec3(uniform(lo, hi), uniform(lo, hi), uniform(lo, hi)); }
    /// A uniformly distributed unit quaternion (Shoemake).
    glm::quat rotation() {
        const float u1 = uniform(0.0f, 1.0f), u2 = uniform(0.0f, 6.2831853f), u3 = uniform(0.0f, 6.2831853f);
        const float a = std::sqrt(1.0f - u1), b = std::sqrt(u1);
        return keyblend::make_quat(a * std::sin(u2), a * std::cos(u2), b * std::sin(u3), b * std::cos(u3));
    }
    std::mt19937& engine() { return engine_; }

private:
    std::mt19937 engine_;
};

inline keyblend::transform random_transform(rng& r) {
    return keyblend::transform{r.vec3(-2, 2), r.rotation(), r.vec3(0.5f, 1.5f)};
}

/// A random tree of n joints in pre-order (each parent a random earlier joint, or a root), named
/// j0, j1, ..., with random bind poses.
inline keyblend::skeleton random_skeleton(std::size_t n, std::uint32_t seed) {
    rng r(seed);
    std::vector<keyblend::joint_desc> in(n);
    for (std::size_t i = 0; i < n; ++i) {
        in[i].name = "j" + std::to_string(i);
        in[i].parent = (i == 0 || r.integer(0, 9) == 0) ? -1 : r.integer(0, int(i) - 1);
        in[i].bind_local = keyblend::to_matrix(random_transform(r));
    }
    return keyblend::skeleton::from_parents(in).value();
}

inline keyblend::local_pose random_pose(std::size_t n, std::uint32_t seed) {
    rng r(seed);
    keyblend::local_pose p(n);
    for (std::size_t j = 0; j < n; ++j) p.set(j, random_transform(r));
    return p;
}

/// A ten-joint biped with random rigid bind poses:
///   pelvis > (thigh_l > shin_l), (thigh_r > shin_r), spine > (arm_l > hand_l), (arm_r > hand_r)
/// With `negative_zero`, element [1][2] of every bind matrix is -0 (as .X files write "-0.000000";
/// the matrix is then no longer exactly T*R*S), to catch arithmetic that loses a zero's sign.
inline keyblend::skeleton biped(std::uint32_t seed, bool negative_zero = false) {
    rng r(seed);
    const char* names[] = {"pelvis", "thigh_l", "shin_l", "thigh_r", "shin_r", "spine",
                           "arm_l",  "hand_l",  "arm_r",  "hand_r"};
    const keyblend::joint_index parents[] = {-1, 0, 1, 0, 3, 0, 5, 6, 5, 8};
    std::vector<keyblend::joint_desc> in;
    for (int i = 0; i < 10; ++i) {
        glm::mat4 m = keyblend::to_matrix(keyblend::transform{r.vec3(-1, 1), r.rotation(), glm::vec3(1)});
        if (negative_zero) m[1][2] = -0.0f;
        in.push_back({names[i], parents[i], m});
    }
    return keyblend::skeleton::from_parents(in).value();
}

/// The padding lanes of a pose hold the identity (kernels must keep them so).
inline bool padding_is_identity(const keyblend::local_pose& p) {
    using keyblend::local_pose;
    for (std::size_t j = p.size(); j < p.padded_size(); ++j)
        for (unsigned s = 0; s < local_pose::stream_count; ++s) {
            const float expect = (s == local_pose::rotation_w || s >= local_pose::scale_x) ? 1.0f : 0.0f;
            if (p.data(local_pose::stream(s))[j] != expect) return false;
        }
    return true;
}

/// Every component of two transforms, as given (q and -q differ).
inline float max_abs_diff(const keyblend::transform& a, const keyblend::transform& b) {
    return std::max(std::max(max_abs_diff(a.translation, b.translation),
                             max_abs_diff(a.rotation, b.rotation)),
                    max_abs_diff(a.scale, b.scale));
}
inline bool bit_equal_transform(const keyblend::transform& a, const keyblend::transform& b) {
    return bit_equal(a.translation, b.translation) && bit_equal(a.rotation, b.rotation) &&
           bit_equal(a.scale, b.scale);
}
/// A transform's x, y, z (not a 16-byte vec3's padding lane) and quaternion, bit for bit.
inline bool bit_equal(const keyblend::transform& a, const keyblend::transform& b) {
    return bit_equal_transform(a, b);
}

/// Two computations of the same value by different code paths: bit for bit under IEEE arithmetic;
/// under -ffast-math (which may contract and reassociate the same expression differently in each
/// place it is inlined) within 4e-7 per component, a few ulps of values of magnitude 1.
#if defined(__FAST_MATH__)
template <class T>
bool same_computation(const T& a, const T& b) {
    return max_abs_diff(a, b) <= 4e-7f;
}
#else
inline bool same_computation(const keyblend::transform& a, const keyblend::transform& b) {
    return bit_equal_transform(a, b);
}
template <class T>
bool same_computation(const T& a, const T& b) {
    return bit_equal(a, b);
}
#endif

/// A matrix product the library computed, against the same product computed here (GLM's
/// operator*): bit for bit under IEEE arithmetic; under -ffast-math, where each copy of the product
/// may be contracted differently, within 1e-5 of the expected matrix's magnitude.
inline bool matches_product(const glm::mat4& actual, const glm::mat4& expected) {
#if defined(__FAST_MATH__)
    return max_abs_diff(actual, expected) <= 1e-5f * (1.0f + max_abs_diff(expected, glm::mat4(0.0f)));
#else
    return bit_equal(actual, expected);
#endif
}

/// Heap allocations made by this thread so far (operator new, counted in alloc_counter.cpp): a
/// test takes the difference around a call to prove the call does not allocate.
std::size_t allocation_count();

/// Path of `relative` under `folder` (KEYBLEND_DATA_DIR or KEYBLEND_FORMATS_DIR), or nothing when
/// it is absent. Absent data makes the calling test print KEYBLEND-SKIP (ctest reports it as skipped),
/// unless the environment sets KEYBLEND_REQUIRE_DATA=1 (CI does), which makes it fail.
inline std::optional<std::string> shared_data_file(const std::string& folder,
                                                   const std::string& relative) {
    const std::string path = folder + "/" + relative;
    if (std::ifstream(path, std::ios::binary).good()) return path;
    const char* require = std::getenv("KEYBLEND_REQUIRE_DATA");
    if (require && std::string(require) == "1") {
        FAIL("required test data is missing: " << path
                                               << " (docs/building.md: the test data)");
        return std::nullopt;
    }
    std::cout << "KEYBLEND-SKIP: " << path << " not found (" << folder
              << " is absent); test skipped\n";
    return std::nullopt;
}

/// Path of a file under KEYBLEND_DATA_DIR, the .X files (see shared_data_file).
inline std::optional<std::string> data_file(const std::string& relative) {
    return shared_data_file(KEYBLEND_DATA_DIR, relative);
}

#ifdef KEYBLEND_FORMATS_DIR
/// Path of a file under KEYBLEND_FORMATS_DIR, the other formats (see shared_data_file).
inline std::optional<std::string> formats_file(const std::string& relative) {
    return shared_data_file(KEYBLEND_FORMATS_DIR, relative);
}
#endif

} // namespace kbtest
