// keyblend — math: GLM includes, the TRS transform, matrix <-> TRS, short-path slerp/nlerp.
//
// SPDX-License-Identifier: MIT
//
// Conventions, written down once (every keyblend header follows them):
//
// - GLM's: column-major storage, column vectors. `m[c][r]` is column c, row r; the translation is
//   `m[3]`; a point is transformed as `M * v`.
// - A joint's model matrix is `parent_model * local`; a skinning matrix is `model * inverse_bind`.
// - A `transform` means `T * R * S`: scale first, then rotate, then translate.
// - Direct3D/D3DX and .X files use row vectors, but their 16 floats in memory order are the *same*
//   transform as a glm::mat4 holding those 16 floats (load with glm::make_mat4, no transpose).
//   `D3DXMatrixMultiply(A, B)` is `B * A` here.
// - Quaternions are glm::quat. keyblend never depends on GLM's member order (it may be x,y,z,w or,
//   with GLM_FORCE_QUAT_DATA_WXYZ, w,x,y,z): it reads and writes members by name. Build one from
//   its components with `make_quat(w, x, y, z)`.
// - GLM's own quaternion interpolators are not used: glm::mix takes the long way round,
//   glm::slerp's near-parallel fallback is not normalised, glm::lerp does neither. Use
//   keyblend::slerp / keyblend::nlerp.
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <cmath>

namespace keyblend {

/// A joint's local transform as translation, rotation and scale: the matrix `T * R * S`.
/// Default-constructed, it is the identity.
struct transform {
    glm::vec3 translation{0.0f};
    glm::quat rotation = glm::identity<glm::quat>();
    glm::vec3 scale{1.0f};

    static transform identity() { return transform{}; }
};

/// The quaternion w + xi + yj + zk, whatever GLM's member order.
inline glm::quat make_quat(float w, float x, float y, float z);

/// `T * R * S` as a matrix. The rotation is used as given (a non-unit quaternion scales the axes
/// by its squared length; keep rotations unit).
inline glm::mat4 to_matrix(const transform& t);

/// Splits an affine matrix into translation, rotation and scale, so that
/// `to_matrix(to_transform(m)) == m` (to float rounding) for every matrix without shear, including
/// mirrored and zero-scaled ones. Never returns NaN for finite input. The bottom row is ignored
/// (treated as 0, 0, 0, 1).
///
/// - translation: `m[3]`, exactly.
/// - scale: the lengths of the three basis columns. When the determinant is negative (a
///   mirroring), scale.x is negated and the x column flipped, so the rotation stays proper.
/// - rotation: the Gram–Schmidt orthonormalisation of the columns in x, y, z order, as a unit
///   quaternion with w >= 0. A column shorter than 1e-8 (a zero scale) or parallel to the earlier
///   ones carries no direction: the rotation is completed from the other columns (cross products),
///   and is the identity when no column has a direction.
/// - shear: cannot be expressed as TRS and is dropped. The x axis keeps its direction, y loses its
///   component along x, z is chosen perpendicular to both; each axis keeps its column's length.
inline transform to_transform(const glm::mat4& m);

/// The unit quaternion of a rotation matrix (orthonormal, determinant +1), with w >= 0.
/// Robust for every rotation angle including 180 degrees (Shepperd's method). For a matrix that is
/// not a rotation, the result is the normalised quaternion of its nearest diagonal-dominant branch;
/// use to_transform for general matrices.
inline glm::quat quat_from_rotation(const glm::mat3& r);

/// `q / |q|`; the identity when |q| is zero or not finite (never NaN).
inline glm::quat normalize_or_identity(const glm::quat& q);

/// Four-component dot product of two quaternions.
inline float quat_dot(const glm::quat& a, const glm::quat& b);

/// Normalised linear interpolation along the short path.
///
/// - t == 0 returns `a` and t == 1 returns `b`, bit for bit (as given: when the short path flips
///   `b`, the result at t == 1 is still `b`, which is the same rotation as `-b`).
/// - Otherwise the result is unit length: `normalize(a + (b' - a) * t)` where `b'` is `b` or `-b`,
///   whichever is closer to `a` (dot >= 0), so the rotation never takes the long way round.
/// - Inputs should be unit; t is not clamped (t outside [0, 1] extrapolates).
/// - Angular velocity is not constant (fastest mid-way); use slerp where that matters.
inline glm::quat nlerp(const glm::quat& a, const glm::quat& b, float t);

/// Spherical linear interpolation along the short path, at constant angular velocity.
///
/// - t == 0 returns `a` and t == 1 returns `b`, bit for bit (see nlerp).
/// - Otherwise, for unit inputs (within key_traits<glm::quat>::unit_tolerance), the result is unit
///   to float precision. The angle is computed as 2·asin(|a − b'| / 2), which keeps full precision
///   for nearly equal quaternions (acos of the dot product does not); below an angle of 1e-6 rad
///   slerp and nlerp agree to float precision and nlerp is used. Nearly opposite quaternions
///   (q and ≈ −q, the same rotation) are handled by the short-path flip.
/// - t is clamped to [0, 1] (slerp does not extrapolate).
/// - No libm calls: the trigonometry is by polynomials accurate to float rounding on the ranges
///   used, and the result is renormalised by Newton steps, not a square root.
inline glm::quat slerp(const glm::quat& a, const glm::quat& b, float t);

/// `a + (b - a) * t` per component; t == 0 returns `a` exactly.
template <class V>
V lerp(const V& a, const V& b, float t);

/// True when no component is NaN or infinite. Decided from the bits of the IEEE-754 encoding (an
/// exponent of all ones is NaN or infinity), never by floating-point comparison, so the check
/// survives `-ffast-math` / `-ffinite-math-only`, under which the compiler may assume that NaN
/// and infinity never occur and fold `std::isfinite` and `x != x` to constants. Every finiteness
/// check in keyblend goes through these.
inline bool is_finite(float v);
inline bool is_finite(double v);
inline bool is_finite(long double v) = delete; // times and values are float or double
inline bool is_finite(const glm::vec3& v);
inline bool is_finite(const glm::vec4& v);
inline bool is_finite(const glm::quat& q);
inline bool is_finite(const glm::mat4& m);

/// True when v is a NaN, decided from the bits (see is_finite).
inline bool is_nan(float v);
inline bool is_nan(double v);

} // namespace keyblend

#include "impl/math.impl.hpp"
