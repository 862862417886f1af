// keyblend — definitions for ik.hpp. Included at the bottom of ik.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include "gameplay_math.hpp"

#include <algorithm>
#include <cmath>
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

/// The checks both jobs share: pointers, sizes, weight, and a joint's index, matrix and rotation.
struct ik_checks {
    ik_checks(const char* name, const ik_buffers& b)
        : job(name), s(b.skeleton), model(b.model.data()), model_size(b.model.size()), pose(b.pose) {}

    const char* job;
    const skeleton* s;
    const glm::mat4* model;
    std::size_t model_size;
    const local_pose* pose;

    error fail(errc code, const std::string& what) const { return make_error(code, std::string(job) + ": " + what); }

    // The checks as predicates, for the common case (every run() validates): no status is built.
    KEYBLEND_FORCE_INLINE bool common_ok(float weight) const {
        return s && model && pose && model_size >= s->size() && pose->size() == s->size() && is_finite(weight) &&
               weight >= 0.0f && weight <= 1.0f;
    }
    KEYBLEND_FORCE_INLINE bool joint_ok(std::size_t j) const {
        using S = local_pose;
        return j < s->size() && all_finite(model[j]) &&
               is_finite(glm::vec4(pose->data(S::rotation_x)[j], pose->data(S::rotation_y)[j],
                                   pose->data(S::rotation_z)[j], pose->data(S::rotation_w)[j]));
    }

    // The same checks, reporting the first that fails.
    status common(float weight) const {
        if (!s) return fail(errc::invalid_argument, "skeleton is null");
        if (!model) return fail(errc::invalid_argument, "model is null");
        if (!pose) return fail(errc::invalid_argument, "pose is null");
        if (model_size < s->size())
            return fail(errc::size_mismatch, std::to_string(model_size) + " model matrices for " +
                                                 std::to_string(s->size()) + " joints");
        if (pose->size() != s->size())
            return fail(errc::size_mismatch, "the pose has " + std::to_string(pose->size()) + " joints, the skeleton " +
                                                 std::to_string(s->size()));
        if (!is_finite(weight)) return fail(errc::non_finite, "weight is NaN or infinite");
        if (weight < 0.0f || weight > 1.0f)
            return fail(errc::invalid_argument, "weight " + float_to_string(weight) + " is outside [0, 1]");
        return {};
    }
    status joint(std::size_t j, const char* role) const {
        // (Messages are built only on failure: run() validates every call.)
        const auto name = [&] { return std::string(role) + " " + std::to_string(j); };
        if (j >= s->size())
            return fail(errc::out_of_range, name() + " is out of range (" + std::to_string(s->size()) + " joints)");
        if (!all_finite(model[j])) return fail(errc::non_finite, name() + " '" + s->name(j) + "': model matrix is not finite");
        using S = local_pose;
        const glm::vec4 q(pose->data(S::rotation_x)[j], pose->data(S::rotation_y)[j], pose->data(S::rotation_z)[j],
                          pose->data(S::rotation_w)[j]);
        if (!is_finite(q)) return fail(errc::non_finite, name() + " '" + s->name(j) + "': local rotation is not finite");
        return {};
    }
    status vector(const glm::vec3& v, const char* what) const {
        if (!is_finite(v)) return fail(errc::non_finite, std::string(what) + " is not finite");
        return {};
    }
};

} // namespace impl

inline status two_bone_ik_job::validate() const {
    const impl::ik_checks check{"two_bone_ik_job", *this};
    const auto chained = [&](std::size_t child, std::size_t ancestor) {
        return child != ancestor && skeleton->is_in_subtree(child, ancestor);
    };
    if (check.common_ok(weight) && is_finite(soften) && soften >= 0.0f && soften <= 1.0f && check.joint_ok(start_joint) &&
        check.joint_ok(mid_joint) && check.joint_ok(end_joint) && chained(mid_joint, start_joint) &&
        chained(end_joint, mid_joint) && is_finite(target) && is_finite(pole_vector) && is_finite(mid_axis))
        return {};
    if (status st = check.common(weight); !st) return st;
    if (!is_finite(soften)) return check.fail(errc::non_finite, "soften is NaN or infinite");
    if (soften < 0.0f || soften > 1.0f)
        return check.fail(errc::invalid_argument, "soften " + impl::float_to_string(soften) + " is outside [0, 1]");
    for (auto [j, role] : {std::pair<std::size_t, const char*>{start_joint, "start joint"},
                           {mid_joint, "mid joint"},
                           {end_joint, "end joint"}})
        if (status st = check.joint(j, role); !st) return st;
    if (!chained(mid_joint, start_joint) || !chained(end_joint, mid_joint))
        return check.fail(errc::invalid_argument,
                          "joints " + std::to_string(start_joint) + " '" + skeleton->name(start_joint) + "', " +
                              std::to_string(mid_joint) + " '" + skeleton->name(mid_joint) + "', " +
                              std::to_string(end_joint) + " '" + skeleton->name(end_joint) +
                              "' are not a chain (each must be an ancestor of the next)");
    if (status st = check.vector(target, "target"); !st) return st;
    if (status st = check.vector(pole_vector, "pole vector"); !st) return st;
    return check.vector(mid_axis, "mid axis");
}

inline status two_bone_ik_job::run() const {
    if (status st = validate(); !st) return st;
    const impl::two_bone_solution s =
        impl::solve_two_bone(model[start_joint], model[mid_joint], model[end_joint], target, pole_vector, mid_axis, soften);
    if (reached) *reached = s.reached;
    if (weight == 0.0f || !s.moved) return {};
    impl::correct_rotation(*pose, start_joint, s.start, model[start_joint], weight);
    impl::correct_rotation(*pose, mid_joint, s.mid, model[mid_joint], weight);
    return {};
}

inline status aim_ik_job::validate() const {
    const impl::ik_checks check{"aim_ik_job", *this};
    if (check.common_ok(weight) && check.joint_ok(joint) && is_finite(target) && is_finite(forward) &&
        glm::dot(forward, forward) > 0.0f && is_finite(up) && is_finite(pole_vector) && is_finite(offset))
        return {};
    if (status st = check.common(weight); !st) return st;
    if (status st = check.joint(joint, "joint"); !st) return st;
    if (status st = check.vector(target, "target"); !st) return st;
    if (status st = check.vector(forward, "forward axis"); !st) return st;
    if (!(glm::dot(forward, forward) > 0.0f)) return check.fail(errc::invalid_argument, "forward axis is zero");
    if (status st = check.vector(up, "up axis"); !st) return st;
    if (status st = check.vector(pole_vector, "pole vector"); !st) return st;
    return check.vector(offset, "offset");
}

inline status aim_ik_job::run() const {
    if (status st = validate(); !st) return st;
    const impl::aim_solution s = impl::solve_aim(model[joint], target, forward, up, pole_vector, offset);
    if (reached) *reached = s.reached;
    if (weight == 0.0f || !s.reached) return {};
    impl::correct_rotation(*pose, joint, s.rotation, model[joint], weight);
    return {};
}

} // namespace keyblend
