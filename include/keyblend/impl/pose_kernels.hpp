// keyblend — the local-to-model kernels (local_to_model_job, pose.hpp): TRS lanes to affine
// matrices, and the hierarchy walked in windows of two independent runs (impl::model_schedule),
// or in steps of up to four joints with 512-bit products. Internal; included by pose.impl.hpp,
// or by the compiled kernels (keyblend/kernels.hpp).
//
// SPDX-License-Identifier: MIT
// One pass of kernels per instruction set (impl/simd/target.hpp): included again in each.
#if defined(KEYBLEND_PASS_GUARD_POSE_KERNELS_HPP) == defined(KEYBLEND_PASS_TOGGLE)
#if defined(KEYBLEND_PASS_GUARD_POSE_KERNELS_HPP)
#undef KEYBLEND_PASS_GUARD_POSE_KERNELS_HPP
#else
#define KEYBLEND_PASS_GUARD_POSE_KERNELS_HPP
#endif

#include "palette_kernels.hpp"
#include "simd/lanes.hpp"

#include <algorithm>
#include <cstring>

namespace keyblend {

namespace impl {
KEYBLEND_ISA_NS {

static_assert(sizeof(glm::mat4) == 16 * sizeof(float), "glm::mat4 must be 16 packed floats");

/// The affine local matrices (T * R * S) of the lanes [block, block + V::width), as 12 streams
/// of B floats: column 0 xyz, column 1 xyz, column 2 xyz, translation xyz. The formula is
/// glm::mat3_cast's, so the f1 path equals to_matrix up to FMA contraction. Its doublings are
/// additions (t + t is 2 * t, exactly): they go to the adders, and the multipliers, which bound
/// this pass, have half as much to do.
template <class V>
KEYBLEND_FORCE_INLINE void trs_to_affine_lanes(const local_pose& p, std::size_t i, std::size_t count, V (&m)[12]) {
    using S = local_pose;
    const auto in = [&](S::stream s) KEYBLEND_LAMBDA_INLINE { return V::load_first(p.data(s) + i, count); };
    const V x = in(S::rotation_x), y = in(S::rotation_y), z = in(S::rotation_z), w = in(S::rotation_w);
    const V sx = in(S::scale_x), sy = in(S::scale_y), sz = in(S::scale_z);
    const V one = V::set1(1.0f);
    const V xx = x * x, yy = y * y, zz = z * z;
    const V xy = x * y, xz = x * z, yz = y * z;
    const V wx = w * x, wy = w * y, wz = w * z;
    const auto twice = [](V t) KEYBLEND_LAMBDA_INLINE { return t + t; };
    m[0] = sx * (one - twice(yy + zz));
    m[1] = sx * twice(xy + wz);
    m[2] = sx * twice(xz - wy);
    m[3] = sy * twice(xy - wz);
    m[4] = sy * (one - twice(xx + zz));
    m[5] = sy * twice(yz + wx);
    m[6] = sz * twice(xz + wy);
    m[7] = sz * twice(yz - wx);
    m[8] = sz * (one - twice(xx + yy));
    m[9] = in(S::translation_x);
    m[10] = in(S::translation_y);
    m[11] = in(S::translation_z);
}

/// trs_to_affine_lanes of joints [block + lane, + count) into `out`'s streams from lane `lane`
/// (zeros in the lanes from `count` up).
template <class V, std::size_t B = pose_lane_block>
inline void trs_to_affine(const local_pose& p, std::size_t block, std::size_t lane, float (*out)[B],
                          std::size_t count = V::width) {
    V m[12];
    trs_to_affine_lanes<V>(p, block + lane, count, m);
    for (int e = 0; e < 12; ++e) m[e].store(out[e] + lane);
}

/// out = parent * L, where L is the affine matrix in lane `k` of `l` (bottom row 0 0 0 1, so the
/// product is exact for any parent, projective included). `out` may not alias `parent`.
inline void mul_affine_scalar(const float* parent, const float (*l)[pose_lane_block], std::size_t k,
                              float* out) {
    for (int c = 0; c < 4; ++c) {
        const float a = l[3 * c][k], b = l[3 * c + 1][k], d = l[3 * c + 2][k];
        for (int r = 0; r < 4; ++r) {
            float v = parent[r] * a + parent[4 + r] * b + parent[8 + r] * d;
            if (c == 3) v += parent[12 + r];
            out[4 * c + r] = v;
        }
    }
}

#if KEYBLEND_SIMD_F4
/// A 4x4 matrix as four column registers (SSE2 or NEON).
struct columns4 {
    lanes::f4 c[4];
};

inline columns4 load_columns(const float* m) {
    using lanes::f4;
    return {{f4::load(m), f4::load(m + 4), f4::load(m + 8), f4::load(m + 12)}};
}

/// parent * L (see mul_affine_scalar; the same operations in the same order), stored to `out` and
/// returned in registers, so that a child computed next need not wait for the store to reach
/// memory and be read back. Per column: a multiply and two multiply-adds by elements of L
/// broadcast from memory (fused where the target has FMA), and the parent's translation added
/// to the last.
template <std::size_t B>
inline columns4 mul_affine_columns(const columns4& parent, const float (*l)[B], std::size_t k, float* out) {
    using lanes::f4;
    columns4 m;
    for (int c = 0; c < 4; ++c) {
        f4 v = parent.c[0] * f4::set1(l[3 * c][k]);
        v = fmadd(parent.c[1], f4::set1(l[3 * c + 1][k]), v);
        v = fmadd(parent.c[2], f4::set1(l[3 * c + 2][k]), v);
        if (c == 3) v = v + parent.c[3];
        v.store(out + 4 * c);
        m.c[c] = v;
    }
    return m;
}

/// One step of a run of local_to_model_range: joint j (not the range's first) from its parent's
/// model matrix: `previous` (the joint before, still in registers) when that is its parent, else
/// the matrix in memory, or `root`. `affine` holds the local matrices of blocks of B joints from
/// joint `base` on (a multiple of B).
template <std::size_t B>
inline columns4 model_step(const joint_index* parents, std::size_t j, const columns4& previous,
                           const float (*affine)[12][B], std::size_t base, const glm::mat4& root, glm::mat4* model) {
    const joint_index p = parents[j];
    columns4 parent = previous;
    if (p < 0) parent = load_columns(&root[0][0]);
    else if (static_cast<std::size_t>(p) + 1 != j) parent = load_columns(&model[static_cast<std::size_t>(p)][0][0]);
    return mul_affine_columns(parent, affine[(j - base) / B], j % B, &model[j][0][0]);
}

/// The lanes and the block width (B joints) of local_to_model's local matrices: 16 joints at a
/// time where AVX-512 is compiled and the product runs on 8 lanes (half the instructions of two
/// blocks of 8: this pass is a fifth of local_to_model, bound by its multiplies), else V's.
template <class V>
struct affine_lanes {
    static constexpr std::size_t block = pose_lane_block;
    /// The local matrices of joints [b, b + block) into `out`.
    static void compute(const local_pose& local, std::size_t b, float (*out)[block]) {
        for (std::size_t lane = 0; lane < block; lane += V::width) trs_to_affine<V>(local, b, lane, out);
    }
};
#if KEYBLEND_SIMD_AVX512
/// The joints of the stream block of 16 at `b` there are floats for: the streams are padded to
/// a multiple of 8 joints, so the last block may have 8.
inline std::size_t affine_block_joints(const local_pose& local, std::size_t b) {
    return std::min<std::size_t>(16, local.padded_size() - b);
}

template <>
struct affine_lanes<lanes::f8> {
    static constexpr std::size_t block = 16;
    static void compute(const local_pose& local, std::size_t b, float (*out)[block]) {
        trs_to_affine<lanes::f16, block>(local, b, 0, out, affine_block_joints(local, b));
    }
};
#endif

#if KEYBLEND_SIMD_AVX512
/// local_to_model's AVX-512 way through window [base, window_end) of the whole skeleton, by the
/// window's steps (impl::model_schedule::steps): a joint's product in one 512-bit register, by
/// rows (row r in lane r), is each parent element r,i broadcast within lane r times row i of its
/// local matrix (in every lane), summed in mul_affine_scalar's order, plus the parent's
/// translation in element 3 of each lane: the same bits as the 128-bit product. One permute
/// turns a product into columns for the store, and a parent read from memory into rows.
inline void model_window_steps(const skeleton& s, const local_pose& local, std::size_t base,
                               std::size_t window_end, const std::uint32_t* steps, std::size_t count,
                               const glm::mat4& root, glm::mat4* model) {
    // (512-bit shuffles in their all-lanes maskz forms, as in impl/skin/quads_avx512.hpp: GCC 12's plain
    // forms start from _mm512_undefined_ps, which -Wmaybe-uninitialized reports once inlined.)
    using M = model_schedule;
    // Rows x, y and z of each joint's local matrix, as model_schedule::rows_offset says.
    alignas(64) M::window_rows rows;
    for (std::size_t block = base; block < window_end; block += 16) {
        lanes::f16 m[12];
        trs_to_affine_lanes(local, block, affine_block_joints(local, block), m);
        for (int i = 0; i < 3; ++i) {
            const __m512 a = m[i].v, b = m[3 + i].v, c = m[6 + i].v, d = m[9 + i].v;
            const __m512 ab_lo = _mm512_maskz_unpacklo_ps(0xFFFF, a, b), ab_hi = _mm512_maskz_unpackhi_ps(0xFFFF, a, b);
            const __m512 cd_lo = _mm512_maskz_unpacklo_ps(0xFFFF, c, d), cd_hi = _mm512_maskz_unpackhi_ps(0xFFFF, c, d);
            float(*out)[4] = rows[(block - base) / 16][i];
            _mm512_store_ps(out[0], _mm512_maskz_shuffle_ps(0xFFFF, ab_lo, cd_lo, _MM_SHUFFLE(1, 0, 1, 0)));
            _mm512_store_ps(out[4], _mm512_maskz_shuffle_ps(0xFFFF, ab_lo, cd_lo, _MM_SHUFFLE(3, 2, 3, 2)));
            _mm512_store_ps(out[8], _mm512_maskz_shuffle_ps(0xFFFF, ab_hi, cd_hi, _MM_SHUFFLE(1, 0, 1, 0)));
            _mm512_store_ps(out[12], _mm512_maskz_shuffle_ps(0xFFFF, ab_hi, cd_hi, _MM_SHUFFLE(3, 2, 3, 2)));
        }
    }
    const joint_index* parents = s.parents().data();
    // A 4x4 matrix's transpose: rows <-> columns.
    const __m512i transpose = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    __m512 held[M::slots] = {}, before[M::slots]; // this step's products, the step before's
    const char* rows_at = reinterpret_cast<const char*>(rows);
    const auto product = [&](std::uint32_t entry, __m512& out) KEYBLEND_LAMBDA_INLINE {
        if (entry == M::no_joint) return;
        const std::size_t j = M::entry_joint(entry, base);
        __m512 parent;
        if (entry & M::parent_in_slot) {
            switch (entry >> M::slot_shift & 3u) {
            case 0: parent = before[0]; break;
            case 1: parent = before[1]; break;
            case 2: parent = before[2]; break;
            default: parent = before[3]; break;
            }
        } else {
            const joint_index p = parents[j];
            parent = _mm512_maskz_permutexvar_ps(0xFFFF, 
                transpose, _mm512_loadu_ps(p < 0 ? &root[0][0] : &model[static_cast<std::size_t>(p)][0][0]));
        }
        const float* r = reinterpret_cast<const float*>(rows_at + (entry & M::rows_bits));
        const __m512 x = _mm512_maskz_broadcast_f32x4(0xFFFF, _mm_load_ps(r));
        const __m512 y = _mm512_maskz_broadcast_f32x4(0xFFFF, _mm_load_ps(r + M::row_stride));
        const __m512 z = _mm512_maskz_broadcast_f32x4(0xFFFF, _mm_load_ps(r + 2 * M::row_stride));
        __m512 v = _mm512_mul_ps(_mm512_maskz_permute_ps(0xFFFF, parent, 0x00), x);
        v = _mm512_fmadd_ps(_mm512_maskz_permute_ps(0xFFFF, parent, 0x55), y, v);
        v = _mm512_fmadd_ps(_mm512_maskz_permute_ps(0xFFFF, parent, 0xAA), z, v);
        v = _mm512_mask_add_ps(v, 0x8888, v, parent);
        _mm512_storeu_ps(&model[j][0][0], _mm512_maskz_permutexvar_ps(0xFFFF, transpose, v));
        out = v;
    };
    static_assert(M::slots == 4, "four slots a step");
    for (std::size_t t = 0; t < count; ++t, steps += 4) {
        for (std::size_t r = 0; r < M::slots; ++r) before[r] = held[r];
        product(steps[0], held[0]);
        product(steps[1], held[1]);
        product(steps[2], held[2]);
        product(steps[3], held[3]);
    }
}
#endif

/// local_to_model_range's SIMD path (same arguments). One joint after the other, each waits for
/// its parent's product (a multiply and 2 FMAs of latency) and the multiply pipes idle half the
/// time. So the joints go by windows of model_window_joints: the window's local matrices first (a
/// product that read a store made just before would wait for it), then its joints in two runs
/// that do not depend on each other (impl::model_schedule: for a character, the sub-trees under
/// the pelvis or the spine), a joint of each in turn, whose chains overlap. Each joint's product
/// is the same whichever run computes it: a sub-tree computed alone gives the same bits.
template <class V>
void local_to_model_runs(const skeleton& s, const local_pose& local, std::size_t begin, std::size_t end,
                         const glm::mat4* first_parent, const glm::mat4& root, glm::mat4* model) {
    const joint_index* parents = s.parents().data();
    using A = affine_lanes<V>;
    constexpr std::size_t B = A::block;
    static_assert(model_window_joints % B == 0, "a window is whole blocks");
    alignas(64) float buffer[model_window_joints / B][12][B];
    const bool whole = begin == 0 && end == s.size();
    for (std::size_t window = begin; window < end;) {
        const std::size_t base = window / B * B;
        const std::size_t window_end = std::min(end, base + model_window_joints);
#if KEYBLEND_SIMD_AVX512
        if constexpr (B == 16) {
            if (whole && !first_parent) { // (the steps read a root's parent from `root`)
                const auto [steps, count] = model_schedule::full_range_steps(s, window / model_window_joints);
                if (count) {
                    model_window_steps(s, local, base, window_end, steps, count, root, model);
                    window = window_end;
                    continue;
                }
            }
        }
#endif
        for (std::size_t block = base; block < window_end; block += B) A::compute(local, block, buffer[(block - base) / B]);
        std::size_t j = window;
        columns4 a;
        if (window == begin) {
            // The range's first joint: its parent is *first_parent when given.
            const joint_index p = parents[j];
            const glm::mat4& parent = first_parent ? *first_parent
                                      : p < 0      ? root
                                                   : model[static_cast<std::size_t>(p)];
            a = mul_affine_columns(load_columns(&parent[0][0]), buffer[(j - base) / B], j % B, &model[j][0][0]);
            ++j;
        } else {
            a = load_columns(&model[window - 1][0][0]);
        }
        const model_split split =
            whole ? model_schedule::full_range(s, window / model_window_joints) : model_schedule::split(s, window, window_end);
        for (; j < split.first; ++j) a = model_step(parents, j, a, buffer, base, root, model);
        // Run b's first joint's parent is before `first`: the joint before it only when run a is
        // empty, and then that is the joint `a` holds.
        columns4 b = a;
        std::size_t k = std::max(split.middle, j);
        const std::size_t pairs = std::min(split.middle - std::min(j, split.middle), window_end - k);
        for (std::size_t i = 0; i < pairs; ++i, ++j, ++k) {
            a = model_step(parents, j, a, buffer, base, root, model);
            b = model_step(parents, k, b, buffer, base, root, model);
        }
        for (; j < split.middle; ++j) a = model_step(parents, j, a, buffer, base, root, model);
        for (; k < window_end; ++k) b = model_step(parents, k, b, buffer, base, root, model);
        window = window_end;
    }
}

#endif

/// Model matrices of joints [begin, end). The parent of `begin` is `*first_parent` when given;
/// otherwise (and for every other joint) model[parent], or `root` for a root.
template <class V>
void local_to_model_range(const skeleton& s, const local_pose& local, std::size_t begin,
                          std::size_t end, const glm::mat4* first_parent, const glm::mat4& root,
                          glm::mat4* model) {
#if KEYBLEND_SIMD_F4
    if (V::width > 1) {
        local_to_model_runs<V>(s, local, begin, end, first_parent, root, model);
        return;
    }
#endif
    // One lane (f1), or no SIMD lanes compiled: one block at a time, in order.
    const joint_index* parents = s.parents().data();
    alignas(64) float affine[12][pose_lane_block];
    for (std::size_t block = begin / pose_lane_block * pose_lane_block; block < end;
         block += pose_lane_block) {
        for (std::size_t lane = 0; lane < pose_lane_block; lane += V::width)
            trs_to_affine<V>(local, block, lane, affine);
        const std::size_t first = std::max(block, begin);
        const std::size_t last = std::min(block + pose_lane_block, end);
        for (std::size_t j = first; j < last; ++j) {
            const joint_index p = parents[j];
            const glm::mat4& parent = (j == begin && first_parent) ? *first_parent
                                      : p < 0 ? root
                                              : model[static_cast<std::size_t>(p)];
            mul_affine_scalar(&parent[0][0], affine, j - block, &model[j][0][0]);
        }
    }
}

/// local_to_model_job::run, its checks made.
inline status run_job(const local_to_model_job& job) {
    if (status st = check_job(job); !st) return st;
    const skeleton& s = *job.skeleton;
    const std::size_t begin = job.from == local_to_model_job::all_joints ? 0 : job.from;
    const std::size_t end = job.from == local_to_model_job::all_joints ? s.size() : s.subtree_end(job.from);
    if (begin < end) {
        // A sub-tree's first parent is read in place: it is outside the sub-tree that the run writes.
        const glm::mat4* first_parent = nullptr;
        static const glm::mat4 identity(1.0f);
        const glm::mat4& root = job.root ? *job.root : identity;
        if (job.from != local_to_model_job::all_joints && s.parent(job.from) >= 0)
            first_parent = &job.output[static_cast<std::size_t>(s.parent(job.from))];
        if (job.input)
            local_to_model_range<lanes::native>(s, *job.input, begin, end, first_parent, root, job.output.data());
        else
            local_to_model_matrices(s, job.input_matrices.data(), begin, end, first_parent, root,
                                    job.output.data());
    }
    if (!job.bones.empty()) palette_products(job.output.data(), job.bones.data(), job.bones.size(), job.palette.data());
    return {};
}

} // namespace KEYBLEND_ISA
} // namespace impl

} // namespace keyblend

#endif // KEYBLEND_PASS_GUARD_POSE_KERNELS_HPP
