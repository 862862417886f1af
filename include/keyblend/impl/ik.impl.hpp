// keyblend — definitions for ik.hpp. Included at the bottom of ik.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "gameplay_math.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace keyblend {
namespace impl {

/// The rotations (in the space of the model matrices) a two-bone solve found: `mid` about the
/// middle joint, then `start` about the start joint.
struct two_bone_solution {
    glm::quat start = glm::identity<glm::quat>();
    glm::quat mid = glm::identity<glm::quat>();
    bool reached = false;
    bool moved = false; // false: degenerate, leave the pose as it is
};

inline two_bone_solution solve_two_bone(const glm::mat4& start_model, const glm::mat4& mid_model,
                                        const glm::mat4& end_model, const glm::vec3& target,
                                        const glm::vec3& pole, const glm::vec3& mid_axis, float soften) {
    two_bone_solution out;
    const glm::vec3 a(start_model[3]), b(mid_model[3]), c(end_model[3]);
    const glm::vec3 u1 = b - a, u2 = c - b;
    const float l1 = glm::length(u1), l2 = glm::length(u2), chain = l1 + l2;
    if (!(l1 > 1e-6f * chain) || !(l2 > 1e-6f * chain)) return out;
    const float shortest = std::fabs(l1 - l2), eps = 1e-6f * chain;

    // The distance the end should be at, and the direction from the start joint.
    const glm::vec3 to_target = target - a;
    const float dt = glm::length(to_target);
    float d = dt;
    const float soft = soften * chain;
    if (soften < 1.0f && dt > soft) {
        const float span = chain - soft;
        d = soft + span * (1.0f - std::exp(-(dt - soft) / span));
    }
    d = std::min(std::max(d, shortest), chain);
    glm::vec3 dir;
    if (dt > eps) {
        dir = to_target * (1.0f / dt);
    } else {
        const glm::vec3 ce = c - a;
        const float lce = glm::length(ce);
        dir = lce > eps ? ce / lce : u1 / l1;
    }

    // The hinge, in the model matrices' space.
    glm::vec3 h(0.0f);
    if (glm::dot(mid_axis, mid_axis) > 1e-12f) {
        // (A rotation about `mid_axis` in the joint's frame is one about this axis in model space:
        // reversed where the frame is mirrored.)
        const glm::mat3 frame(mid_model);
        h = frame * mid_axis;
        if (glm::determinant(frame) < 0.0f) h = -h;
    } else {
        h = glm::cross(u1, u2);
        const float bones2 = l1 * l1 * l2 * l2;
        if (!(glm::dot(h, h) > 1e-12f * bones2)) {
            // Straight: bend toward the pole, or about any axis perpendicular to the first bone.
            const glm::vec3 n1 = u1 / l1;
            h = glm::cross(pole - glm::dot(pole, n1) * n1, n1);
            const float h2 = glm::dot(h, h);
            if (!(h2 > 1e-12f * glm::dot(pole, pole)) || !(h2 > 0.0f))
                h = glm::cross(n1, std::fabs(n1.x) < 0.6f ? glm::vec3(1, 0, 0) : glm::vec3(0, 1, 0));
        }
    }
    const float h2 = glm::dot(h, h);
    if (!(h2 > 0.0f)) return out; // a zero-scale middle joint
    h *= 1.0f / std::sqrt(h2);

    // Turn the second bone about the hinge by phi so that |u1 + R(phi) u2| = d: with u2 split
    // along the hinge and across it, |u1 + R u2|^2 = K + 2 (A cos(phi) + B sin(phi)).
    const glm::vec3 u2_along = glm::dot(h, u2) * h, u2_across = u2 - u2_along, u2_turned = glm::cross(h, u2);
    const float k0 = l1 * l1 + l2 * l2 + 2.0f * glm::dot(u1, u2_along);
    const float ca = glm::dot(u1, u2_across), cb = glm::dot(u1, u2_turned);
    const float r = std::sqrt(ca * ca + cb * cb);
    float cos_phi = 1.0f, sin_phi = 0.0f;
    bool in_range = false;
    if (r > 1e-6f * l1 * l2) {
        // With cos(phi0), sin(phi0) = (A, B) / r the most extended angle, phi = phi0 + acos(k):
        // bending (a positive rotation) goes from there. Its cosine and sine by the sum formulas,
        // without trigonometry. (At full extension or fully folded, exactly.)
        const float inv_r = 1.0f / r, half_inv_r = 0.5f * inv_r;
        const float k = d >= chain ? 1.0f : d <= shortest ? -1.0f : std::min(std::max((d * d - k0) * half_inv_r, -1.0f), 1.0f);
        // The target's distance is one the hinge makes when its cosine is in [-1, 1], up to a
        // slack that moves the end by at most 2e-6 of the chain: a slack on the cosine moves it by
        // r / dt times as much, without bound as the chain folds.
        const float k_target = (dt * dt - k0) * half_inv_r;
        const float k_slack = 2e-6f * chain * dt * inv_r;
        in_range = k_target >= -1.0f - k_slack && k_target <= 1.0f + k_slack;
        const float c0 = ca * inv_r, s0 = cb * inv_r, sk = std::sqrt(std::max((1.0f - k) * (1.0f + k), 0.0f));
        cos_phi = c0 * k - s0 * sk;
        sin_phi = s0 * k + c0 * sk;
    }
    out.mid = turn_about(h, cos_phi, sin_phi);

    // Turn the chain from the start joint: the end onto the target line, then about that line so
    // that the middle joint is on the pole's side.
    const glm::vec3 end = u1 + qrotate(out.mid, u2);
    const glm::quat onto = rotation_between(end, dir);
    glm::quat turn = glm::identity<glm::quat>();
    const glm::vec3 pole_across = pole - glm::dot(pole, dir) * dir;
    const float pole2 = glm::dot(pole, pole);
    if (pole2 > 0.0f && glm::dot(pole_across, pole_across) > 1e-12f * pole2) {
        const glm::vec3 mid_now = qrotate(onto, u1);
        glm::vec3 across = mid_now - glm::dot(mid_now, dir) * dir;
        if (!(glm::dot(across, across) > 1e-12f * l1 * l1)) {
            // Straight: the side the hinge would bend the middle joint to.
            across = glm::cross(dir, qrotate(onto, h));
            across -= glm::dot(across, dir) * dir;
        }
        if (glm::dot(across, across) > 1e-12f)
            turn = turn_about(dir, glm::dot(across, pole_across), glm::dot(glm::cross(across, pole_across), dir));
    }
    out.start = qrenormalize(qmul(turn, onto));
    const float reach = soften < 1.0f ? soft : chain;
    out.reached = dt <= reach * (1.0f + 1e-6f) && dt >= shortest * (1.0f - 1e-6f) && in_range;
    out.moved = true;
    return out;
}

/// The rotation (in the space of the model matrix) that aims a joint.
struct aim_solution {
    glm::quat rotation = glm::identity<glm::quat>();
    bool reached = false;
};

inline aim_solution solve_aim(const glm::mat4& joint_model, const glm::vec3& target, const glm::vec3& forward,
                              const glm::vec3& up, const glm::vec3& pole, const glm::vec3& offset) {
    aim_solution out;
    const glm::mat3 frame(joint_model);
    const glm::vec3 o(joint_model[3]);
    glm::vec3 f = frame * forward;
    const float f2 = glm::dot(f, f);
    if (!(f2 > 0.0f)) return out; // a zero-scale joint
    f /= std::sqrt(f2);
    const glm::vec3 off = frame * offset;
    const glm::vec3 v = target - o;
    const float d2 = glm::dot(v, v), off2 = glm::dot(off, off);
    // The ray from `off` along f meets the sphere of radius |v| about the joint at g: turning g
    // onto v makes the ray go through the target.
    const float along = glm::dot(f, off);
    const float across2 = std::max(off2 - along * along, 0.0f);
    if (!(d2 > 0.0f) || d2 <= 1e-12f * off2 || across2 > d2) return out;
    const float v_len = std::sqrt(d2);
    const glm::vec3 g = off + f * (std::sqrt(d2 - across2) - along);
    const glm::quat onto = rotation_between(g, v);
    glm::quat turn = glm::identity<glm::quat>();
    const glm::vec3 dir = v / v_len;
    const glm::vec3 up_now = qrotate(onto, frame * up);
    const glm::vec3 up_across = up_now - glm::dot(up_now, dir) * dir;
    const glm::vec3 pole_across = pole - glm::dot(pole, dir) * dir;
    const float up2 = glm::dot(up_now, up_now), pole2 = glm::dot(pole, pole);
    if (up2 > 0.0f && pole2 > 0.0f && glm::dot(up_across, up_across) > 1e-12f * up2 &&
        glm::dot(pole_across, pole_across) > 1e-12f * pole2)
        turn = turn_about(dir, glm::dot(up_across, pole_across), glm::dot(glm::cross(up_across, pole_across), dir));
    out.rotation = qrenormalize(qmul(turn, onto));
    out.reached = true;
    return out;
}

/// Applies a correction found in the space of the model matrices to joint j's local rotation, at
/// `weight` (in (0, 1]).
inline void correct_rotation(local_pose& pose, std::size_t j, const glm::quat& correction,
                             const glm::mat4& joint_model, float weight) {
    glm::quat c = in_frame(correction, glm::mat3(joint_model));
    if (weight < 1.0f) c = keyblend::nlerp(glm::identity<glm::quat>(), c, weight);
    using S = local_pose;
    float* x = pose.data(S::rotation_x) + j;
    float* y = pose.data(S::rotation_y) + j;
    float* z = pose.data(S::rotation_z) + j;
    float* w = pose.data(S::rotation_w) + j;
    const glm::quat r = qrenormalize(qmul(make_quat(*w, *x, *y, *z), c));
    *x = r.x;
    *y = r.y;
    *z = r.z;
    *w = r.w;
}

/// Where a check failed: the job, and for the batch jobs the chain or character (the error's
/// index). Messages are built only on failure.
struct ik_where {
    const char* job = "";
    const char* item = nullptr; // "chain" or "character", or null
    std::size_t index = error::no_index;

    error fail(errc code, const std::string& what) const {
        std::string m = std::string(job) + ": ";
        if (item) m += std::string(item) + " " + std::to_string(index) + ": ";
        return make_error(code, m + what, index);
    }
    status vector(const glm::vec3& v, const char* what) const {
        if (!is_finite(v)) return fail(errc::non_finite, std::string(what) + " is not finite");
        return {};
    }
    /// A weight or soften: finite, in [0, 1].
    status unit(float v, const char* what) const {
        if (!is_finite(v)) return fail(errc::non_finite, std::string(what) + " is NaN or infinite");
        if (v < 0.0f || v > 1.0f)
            return fail(errc::invalid_argument, std::string(what) + " " + float_to_string(v) + " is outside [0, 1]");
        return {};
    }
};

/// Which of validate()'s checks a call makes, each level all of the one before:
/// - batch_run: a batch job's run(): what keeps it inside memory (pointers, sizes, indices) and
///   the frame's values (targets, pole vectors, weights); the kernels leave a chain with other
///   non-finite values unchanged;
/// - single_run: a single job's run(): also its other values and the model matrices and local
///   rotations it reads;
/// - all: validate(): also what a set-up decides once (joints that are a chain, a forward axis
///   that is not zero, the end joint's rotation, chains that do not share a joint).
enum class ik_checks : unsigned char { batch_run, single_run, all };

/// Or-ed over floats: bit 31 is set when one of them is NaN or infinite (an exponent of all ones,
/// plus one exponent step, carries into the sign bit; any other exponent does not). Branch-free,
/// so that the compiler vectorises it, and decided from the bits, which fast-math keeps.
KEYBLEND_FORCE_INLINE std::uint32_t nonfinite_bits(const float* p, std::size_t n, std::uint32_t acc = 0) {
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t b;
        std::memcpy(&b, p + i, sizeof b);
        acc |= (b & 0x7f800000u) + 0x00800000u;
    }
    return acc;
}
/// The same over the 16 elements of each of `count` matrices, four at a time where the compiler
/// has vector types (GCC, Clang: SSE2, NEON or wider), else one at a time.
KEYBLEND_FORCE_INLINE std::uint32_t nonfinite_bits(const glm::mat4* const* m, std::size_t count, std::uint32_t acc) {
#if defined(__GNUC__) || defined(__clang__)
    typedef std::uint32_t u32x4 __attribute__((vector_size(16)));
    u32x4 bits = {0, 0, 0, 0};
    for (std::size_t k = 0; k < count; ++k)
        for (int c = 0; c < 4; ++c) {
            u32x4 v;
            std::memcpy(&v, &(*m[k])[c][0], sizeof v);
            bits |= (v & 0x7f800000u) + 0x00800000u;
        }
    return acc | bits[0] | bits[1] | bits[2] | bits[3];
#else
    for (std::size_t k = 0; k < count; ++k) acc = nonfinite_bits(&(*m[k])[0][0], 16, acc);
    return acc;
#endif
}
KEYBLEND_FORCE_INLINE std::uint32_t nonfinite_bits(const glm::vec3& v, std::uint32_t acc = 0) {
    const float f[3] = {v.x, v.y, v.z};
    return nonfinite_bits(f, 3, acc);
}
/// The same over an array of vectors: one flat run of floats where glm::vec3 is three packed floats
/// (x, y, z, as GLM stores them), so that the loop vectorises.
inline std::uint32_t nonfinite_bits(span<const glm::vec3> v, std::uint32_t acc = 0) {
    if (v.empty()) return acc;
    if constexpr (sizeof(glm::vec3) == 3 * sizeof(float)) {
        return nonfinite_bits(&v[0].x, 3 * v.size(), acc);
    } else {
        for (const glm::vec3& x : v) acc = nonfinite_bits(x, acc);
        return acc;
    }
}
KEYBLEND_FORCE_INLINE bool no_nonfinite(std::uint32_t acc) { return !(acc & 0x80000000u); }

/// The bits of joint j's local rotation.
KEYBLEND_FORCE_INLINE std::uint32_t rotation_nonfinite_bits(const local_pose& p, std::size_t j, std::uint32_t acc) {
    using S = local_pose;
    const float q[4] = {p.data(S::rotation_x)[j], p.data(S::rotation_y)[j], p.data(S::rotation_z)[j],
                        p.data(S::rotation_w)[j]};
    return nonfinite_bits(q, 4, acc);
}

KEYBLEND_FORCE_INLINE bool in_unit(float v) { return v >= 0.0f && v <= 1.0f; } // (false for NaN)

/// A posed skeleton's pointers and sizes, which every run() checks: as a predicate, and reported.
KEYBLEND_FORCE_INLINE bool buffers_ok(const ik_buffers& b) {
    return b.skeleton && b.model.data() && b.pose && b.model.size() >= b.skeleton->size() &&
           b.pose->size() == b.skeleton->size();
}
inline status check_buffers(const ik_buffers& b, const ik_where& w) {
    if (!b.skeleton) return w.fail(errc::invalid_argument, "skeleton is null");
    if (!b.model.data()) return w.fail(errc::invalid_argument, "model is null");
    if (!b.pose) return w.fail(errc::invalid_argument, "pose is null");
    const std::size_t n = b.skeleton->size();
    if (b.model.size() < n)
        return w.fail(errc::size_mismatch,
                      std::to_string(b.model.size()) + " model matrices for " + std::to_string(n) + " joints");
    if (b.pose->size() != n)
        return w.fail(errc::size_mismatch,
                      "the pose has " + std::to_string(b.pose->size()) + " joints, the skeleton " + std::to_string(n));
    return {};
}

/// Joint j of a chain (its `role`): in range, and at single_run and above its model matrix and,
/// where `rotation`, local rotation finite. `b` passed check_buffers.
inline status check_joint(const ik_buffers& b, std::size_t j, const char* role, bool rotation, ik_checks level,
                          const ik_where& w) {
    const auto name = [&] { return std::string(role) + " " + std::to_string(j); };
    const skeleton& s = *b.skeleton;
    if (j >= s.size())
        return w.fail(errc::out_of_range, name() + " is out of range (" + std::to_string(s.size()) + " joints)");
    if (level == ik_checks::batch_run) return {};
    if (!is_finite(b.model[j]))
        return w.fail(errc::non_finite, name() + " '" + s.name(j) + "': model matrix is not finite");
    if (rotation && !no_nonfinite(rotation_nonfinite_bits(*b.pose, j, 0)))
        return w.fail(errc::non_finite, name() + " '" + s.name(j) + "': local rotation is not finite");
    return {};
}

/// The frame's values of one chain (every level): a target and pole vector finite, a weight in
/// [0, 1].
inline status check_frame_values(const glm::vec3& target, const glm::vec3& pole, float weight, const ik_where& w) {
    if (status st = w.unit(weight, "weight"); !st) return st;
    if (status st = w.vector(target, "target"); !st) return st;
    return w.vector(pole, "pole vector");
}

/// Every check of one two-bone chain at `level`, reporting the first that fails. `b` passed
/// check_buffers.
inline status check_two_bone(const ik_buffers& b, const two_bone_ik_chain& c, const glm::vec3& target,
                             const glm::vec3& pole, float weight, ik_checks level, const ik_where& w) {
    if (status st = check_frame_values(target, pole, weight, w); !st) return st;
    if (level != ik_checks::batch_run) {
        if (status st = w.unit(c.soften, "soften"); !st) return st;
        if (status st = w.vector(c.mid_axis, "mid axis"); !st) return st;
    }
    if (status st = check_joint(b, c.start_joint, "start joint", true, level, w); !st) return st;
    if (status st = check_joint(b, c.mid_joint, "mid joint", true, level, w); !st) return st;
    if (status st = check_joint(b, c.end_joint, "end joint", level == ik_checks::all, level, w); !st) return st;
    if (level != ik_checks::all) return {};
    const skeleton& s = *b.skeleton;
    const auto chained = [&](std::size_t child, std::size_t ancestor) {
        return child != ancestor && s.is_in_subtree(child, ancestor);
    };
    if (!chained(c.mid_joint, c.start_joint) || !chained(c.end_joint, c.mid_joint))
        return w.fail(errc::invalid_argument,
                      "joints " + std::to_string(c.start_joint) + " '" + s.name(c.start_joint) + "', " +
                          std::to_string(c.mid_joint) + " '" + s.name(c.mid_joint) + "', " +
                          std::to_string(c.end_joint) + " '" + s.name(c.end_joint) +
                          "' are not a chain (each must be an ancestor of the next)");
    return {};
}

/// Every check of one aim chain at `level`, reporting the first that fails. `b` passed
/// check_buffers.
inline status check_aim(const ik_buffers& b, const aim_ik_chain& c, const glm::vec3& target, const glm::vec3& pole,
                        float weight, ik_checks level, const ik_where& w) {
    if (status st = check_frame_values(target, pole, weight, w); !st) return st;
    if (level != ik_checks::batch_run) {
        if (status st = w.vector(c.forward, "forward axis"); !st) return st;
        if (status st = w.vector(c.up, "up axis"); !st) return st;
        if (status st = w.vector(c.offset, "offset"); !st) return st;
    }
    if (status st = check_joint(b, c.joint, "joint", true, level, w); !st) return st;
    if (level == ik_checks::all && !(glm::dot(c.forward, c.forward) > 0.0f))
        return w.fail(errc::invalid_argument, "forward axis is zero");
    return {};
}

/// The single jobs as chains of one character.
inline two_bone_ik_chain chain_of(const two_bone_ik_job& j) {
    return {0, j.start_joint, j.mid_joint, j.end_joint, j.mid_axis, j.soften};
}
inline aim_ik_chain chain_of(const aim_ik_job& j) { return {0, j.joint, j.forward, j.up, j.offset}; }

/// A single job's checks at `level`, reported.
inline status check_single(const two_bone_ik_job& j, ik_checks level) {
    const ik_where w{"two_bone_ik_job"};
    if (status st = check_buffers(j, w); !st) return st;
    return check_two_bone(j, chain_of(j), j.target, j.pole_vector, j.weight, level, w);
}
inline status check_single(const aim_ik_job& j, ik_checks level) {
    const ik_where w{"aim_ik_job"};
    if (status st = check_buffers(j, w); !st) return st;
    return check_aim(j, chain_of(j), j.target, j.pole_vector, j.weight, level, w);
}

/// The single jobs' run() checks (single_run) as one predicate: no status is built when they pass.
KEYBLEND_FORCE_INLINE bool single_run_ok(const two_bone_ik_job& j) {
    if (!buffers_ok(j)) return false;
    const std::size_t n = j.skeleton->size();
    if (!(j.start_joint < n && j.mid_joint < n && j.end_joint < n && in_unit(j.weight) && in_unit(j.soften)))
        return false;
    const glm::mat4* matrices[3] = {&j.model[j.start_joint], &j.model[j.mid_joint], &j.model[j.end_joint]};
    std::uint32_t bits = nonfinite_bits(j.target, nonfinite_bits(j.pole_vector, nonfinite_bits(j.mid_axis)));
    bits = rotation_nonfinite_bits(*j.pose, j.start_joint, rotation_nonfinite_bits(*j.pose, j.mid_joint, bits));
    return no_nonfinite(nonfinite_bits(matrices, 3, bits));
}
KEYBLEND_FORCE_INLINE bool single_run_ok(const aim_ik_job& j) {
    if (!buffers_ok(j) || !(j.joint < j.skeleton->size()) || !in_unit(j.weight)) return false;
    const glm::mat4* matrix = &j.model[j.joint];
    std::uint32_t bits = nonfinite_bits(j.target, nonfinite_bits(j.pole_vector, nonfinite_bits(j.forward)));
    bits = nonfinite_bits(j.up, nonfinite_bits(j.offset, rotation_nonfinite_bits(*j.pose, j.joint, bits)));
    return no_nonfinite(nonfinite_bits(&matrix, 1, bits));
}

/// A batch job's frame values of chain i: its target, its pole vector (zero when none are given)
/// and weight (1).
template <class Job>
struct batch_values {
    const Job& job;
    glm::vec3 target(std::size_t i) const { return job.targets[i]; }
    glm::vec3 pole(std::size_t i) const { return job.pole_vectors.empty() ? glm::vec3(0.0f) : job.pole_vectors[i]; }
    float weight(std::size_t i) const { return job.weights.empty() ? 1.0f : job.weights[i]; }
};

inline std::size_t last_joint(const two_bone_ik_chain& c) { return std::max({c.start_joint, c.mid_joint, c.end_joint}); }
inline std::size_t last_joint(const aim_ik_chain& c) { return c.joint; }

inline status check_chain(const ik_buffers& b, const two_bone_ik_chain& c, const glm::vec3& target, const glm::vec3& pole,
                          float weight, ik_checks level, const ik_where& w) {
    return check_two_bone(b, c, target, pole, weight, level, w);
}
inline status check_chain(const ik_buffers& b, const aim_ik_chain& c, const glm::vec3& target, const glm::vec3& pole,
                          float weight, ik_checks level, const ik_where& w) {
    return check_aim(b, c, target, pole, weight, level, w);
}

/// Whether two chains (of one pose) correct a joint in common.
inline bool share_a_joint(const two_bone_ik_chain& a, const two_bone_ik_chain& b) {
    return a.start_joint == b.start_joint || a.start_joint == b.mid_joint || a.mid_joint == b.start_joint ||
           a.mid_joint == b.mid_joint;
}
inline bool share_a_joint(const aim_ik_chain& a, const aim_ik_chain& b) { return a.joint == b.joint; }

inline const char* job_name(const two_bone_ik_batch_job&) { return "two_bone_ik_batch_job"; }
inline const char* job_name(const aim_ik_batch_job&) { return "aim_ik_batch_job"; }

/// A batch job's checks at `level` (batch_run or all), reporting the first that fails: the spans'
/// sizes, the characters, each chain, and (all) the pairs of chains.
template <class Job>
status check_batch(const Job& job, ik_checks level) {
    const char* name = job_name(job);
    const ik_where w{name};
    const std::size_t n = job.chains.size();
    const auto sized = [&](std::size_t size, bool optional, const char* what) -> status {
        if (size == n || (optional && size == 0)) return {};
        return w.fail(errc::size_mismatch, std::to_string(size) + " " + what + " for " + std::to_string(n) + " chains");
    };
    if (status st = sized(job.targets.size(), false, "targets"); !st) return st;
    if (status st = sized(job.pole_vectors.size(), true, "pole vectors"); !st) return st;
    if (status st = sized(job.weights.size(), true, "weights"); !st) return st;
    if (status st = sized(job.reached.size(), true, "reached flags"); !st) return st;
    if (n && !job.chains.data()) return w.fail(errc::invalid_argument, "chains is null");
    for (std::size_t c = 0; c < job.characters.size(); ++c)
        if (status st = check_buffers(job.characters[c], ik_where{name, "character", c}); !st) return st;
    const batch_values<Job> values{job};
    for (std::size_t i = 0; i < n; ++i) {
        const ik_where at{name, "chain", i};
        const auto& chain = job.chains[i];
        if (chain.character >= job.characters.size())
            return at.fail(errc::out_of_range, "character " + std::to_string(chain.character) + " is out of range (" +
                                                   std::to_string(job.characters.size()) + " characters)");
        if (status st = check_chain(job.characters[chain.character], chain, values.target(i), values.pole(i),
                                    values.weight(i), level, at);
            !st)
            return st;
    }
    if (level != ik_checks::all) return {};
    for (std::size_t i = 0; i < n; ++i) {
        const local_pose* pose = job.characters[job.chains[i].character].pose;
        for (std::size_t k = i + 1; k < n; ++k)
            if (job.characters[job.chains[k].character].pose == pose && share_a_joint(job.chains[i], job.chains[k]))
                return ik_where{name, "chain", k}.fail(errc::invalid_argument,
                                                       "corrects a joint that chain " + std::to_string(i) +
                                                           " corrects (of the same pose)");
    }
    return {};
}

/// A batch job's run() checks (batch_run) as one pass of predicates: the characters, the chains'
/// indices, then the frame's values as flat arrays (vectorised). False: report with check_batch.
template <class Job>
bool batch_run_ok(const Job& job) {
    const std::size_t n = job.chains.size();
    const auto sized = [n](std::size_t size, bool optional) { return size == n || (optional && size == 0); };
    if (!sized(job.targets.size(), false) || !sized(job.pole_vectors.size(), true) ||
        !sized(job.weights.size(), true) || !sized(job.reached.size(), true) || (n && !job.chains.data()))
        return false;
    const std::size_t characters = job.characters.size();
    for (std::size_t c = 0; c < characters; ++c)
        if (!buffers_ok(job.characters[c])) return false;
    bool in_range = true;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& chain = job.chains[i];
        const std::size_t c = chain.character < characters ? chain.character : 0;
        in_range &= chain.character < characters && last_joint(chain) < job.characters[c].pose->size();
    }
    if (!in_range) return false;
    bool weights = true;
    for (const float x : job.weights) weights &= in_unit(x);
    return weights && no_nonfinite(nonfinite_bits(job.targets, nonfinite_bits(job.pole_vectors)));
}

/// A batch job's run() checks, reported (the kernels call it first).
template <class Job>
status check_batch_run(const Job& job) {
    if (batch_run_ok(job)) return {};
    return check_batch(job, ik_checks::batch_run);
}

} // namespace impl

inline status two_bone_ik_job::validate() const { return impl::check_single(*this, impl::ik_checks::all); }

inline status two_bone_ik_job::run() const {
    if (!impl::single_run_ok(*this))
        if (status st = impl::check_single(*this, impl::ik_checks::single_run); !st) return st;
    const impl::two_bone_solution s =
        impl::solve_two_bone(model[start_joint], model[mid_joint], model[end_joint], target, pole_vector, mid_axis, soften);
    if (reached) *reached = s.reached;
    if (weight == 0.0f || !s.moved) return {};
    impl::correct_rotation(*pose, start_joint, s.start, model[start_joint], weight);
    impl::correct_rotation(*pose, mid_joint, s.mid, model[mid_joint], weight);
    return {};
}

inline status aim_ik_job::validate() const { return impl::check_single(*this, impl::ik_checks::all); }

inline status aim_ik_job::run() const {
    if (!impl::single_run_ok(*this))
        if (status st = impl::check_single(*this, impl::ik_checks::single_run); !st) return st;
    const impl::aim_solution s = impl::solve_aim(model[joint], target, forward, up, pole_vector, offset);
    if (reached) *reached = s.reached;
    if (weight == 0.0f || !s.reached) return {};
    impl::correct_rotation(*pose, joint, s.rotation, model[joint], weight);
    return {};
}

inline status two_bone_ik_batch_job::validate() const { return impl::check_batch(*this, impl::ik_checks::all); }
inline status aim_ik_batch_job::validate() const { return impl::check_batch(*this, impl::ik_checks::all); }

} // namespace keyblend

#if KEYBLEND_KERNELS_HERE
#include "ik_kernels.hpp"
#endif
#if !defined(KEYBLEND_KERNELS_LIBRARY)
inline keyblend::status keyblend::two_bone_ik_batch_job::run() const { return impl::run_job(*this); }
inline keyblend::status keyblend::aim_ik_batch_job::run() const { return impl::run_job(*this); }
#endif
