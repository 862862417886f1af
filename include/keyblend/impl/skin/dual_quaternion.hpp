// keyblend — dual-quaternion skinning (dual_quaternion_skinning_job, skin.hpp), one vertex at a
// time. Internal.
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_SKIN_DUAL_QUATERNION_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_SKIN_DUAL_QUATERNION_HPP)
#undef KEYBLEND_PASS_GUARD_SKIN_DUAL_QUATERNION_HPP
#else
#define KEYBLEND_PASS_GUARD_SKIN_DUAL_QUATERNION_HPP
#endif

#include "checks.hpp"
#include "packed.hpp"

namespace keyblend {
namespace impl {
KEYBLEND_ISA_NS {
namespace skin {

/// `q v q*` for a unit quaternion q.
inline glm::vec3 rotate(const glm::quat& q, const glm::vec3& v) {
    const glm::vec3 r(q.x, q.y, q.z);
    return v + 2.0f * glm::cross(r, glm::cross(r, v) + q.w * v);
}

/// cofactor(A) n / det(A), or cofactor(A) n when det(A) == 0 (see normal_transform).
inline glm::vec3 inverse_transpose_times(const glm::mat3& a, const glm::vec3& n) {
    const glm::vec3 k0 = glm::cross(a[1], a[2]), k1 = glm::cross(a[2], a[0]), k2 = glm::cross(a[0], a[1]);
    const float det = glm::dot(a[0], k0);
    const glm::vec3 r = n.x * k0 + n.y * k1 + n.z * k2;
    return det == 0.0f ? r : r * (1.0f / det);
}

template <class Index>
void run_dqs(const lbs_args& a, const dq_bone* palette, std::size_t begin, std::size_t end) {
    for (std::size_t v = begin; v < end; ++v) {
        std::size_t joint[8];
        float weight[8];
        const std::size_t c = read_influences<Index>(a, v, joint, weight);
        glm::mat3 s(0.0f);
        glm::vec4 real(0.0f), dual(0.0f);
        const glm::quat& pivot = palette[joint[0]].rigid.real;
        for (std::size_t i = 0; i < c; ++i) {
            const dq_bone& b = palette[joint[i]];
            // Antipodality: q and -q are the same rotation; blend each in the pivot's hemisphere.
            const float w = quat_dot(b.rigid.real, pivot) < 0.0f ? -weight[i] : weight[i];
            real += w * glm::vec4(b.rigid.real.x, b.rigid.real.y, b.rigid.real.z, b.rigid.real.w);
            dual += w * glm::vec4(b.rigid.dual.x, b.rigid.dual.y, b.rigid.dual.z, b.rigid.dual.w);
            s += weight[i] * b.scale;
        }
        const float len = std::sqrt(glm::dot(real, real));
        glm::quat r = glm::identity<glm::quat>();
        glm::vec3 t(0.0f);
        if (is_finite(len) && len > 0.0f) {
            real /= len;
            dual /= len;
            r = make_quat(real.w, real.x, real.y, real.z);
            // Translation of the normalised blend (Kavan et al. 2008, eq. for c0 + eps c_eps).
            const glm::vec3 r3(real), d3(dual);
            t = 2.0f * (real.w * d3 - dual.w * r3 + glm::cross(r3, d3));
        }
        const glm::vec3 p(*a.pos.at(v, 0), *a.pos.at(v, 1), *a.pos.at(v, 2));
        const glm::vec3 op = rotate(r, s * p) + t;
        glm::vec3 on(0.0f);
        bool normals = a.nrm.data != nullptr;
        if (normals) {
            const glm::vec3 n(*a.nrm.at(v, 0), *a.nrm.at(v, 1), *a.nrm.at(v, 2));
            on = rotate(r, a.inverse_transpose ? inverse_transpose_times(s, n) : s * n);
        }
        glm::vec4 ot(0.0f);
        if (a.tan.data) {
            const glm::vec3 tv(*a.tan.at(v, 0), *a.tan.at(v, 1), *a.tan.at(v, 2));
            ot = glm::vec4(rotate(r, s * tv), *a.tan.at(v, 3));
        }
        // Every input of the vertex is read before anything is written (in-place streams).
        for (int i = 0; i < 3; ++i) *a.out_pos.at(v, std::size_t(i)) = op[i];
        if (normals && a.out_nrm.kind == layout::words)
            store_packed<false>(a.out_nrm, v, f1{on.x}, f1{on.y}, f1{on.z});
        else if (normals)
            for (int i = 0; i < 3; ++i) *a.out_nrm.at(v, std::size_t(i)) = on[i];
        if (a.tan.data && a.out_tan.kind == layout::words)
            store_packed<true>(a.out_tan, v, f1{ot.x}, f1{ot.y}, f1{ot.z}, f1{ot.w});
        else if (a.tan.data)
            for (int i = 0; i < 4; ++i) *a.out_tan.at(v, std::size_t(i)) = ot[i];
    }
}

} // namespace skin
} // namespace KEYBLEND_ISA
} // namespace impl
} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_SKIN_DUAL_QUATERNION_HPP
