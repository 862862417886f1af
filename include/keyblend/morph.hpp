// keyblend — morph targets (blend shapes): a mesh's vertices moved by weighted displacements, per
// frame, before skinning.
//
// SPDX-License-Identifier: MIT
//
// A morph target holds one displacement per vertex for some of the mesh's attributes (glTF: its
// POSITION, NORMAL and TANGENT deltas; io::morph_target). With one weight per target (a pose's
// morph weights: local_pose::morph_weights, sampled from a clip's channel::morph_weights), the
// morphed attribute is glTF's
//
//     out[v] = in[v] + sum over targets t of weights[t] * target_t[v]
//
// for positions, normals and the xyz of tangents (the tangent's w, the bitangent sign, is copied).
// The sum is all glTF specifies: morphed normals and tangents are not renormalised here (a
// displacement can change their length; the skinning that follows does not renormalise either, and
// a renderer normalises them as it does for every skinned normal). Skin the morphed vertices
// afterwards (skinning_job, skin.hpp), since glTF applies morph targets before skinning.
#pragma once

#include "error.hpp"
#include "impl/simd/isa.hpp"
#include "skin.hpp"
#include "span.hpp"

#include <cstddef>

namespace keyblend {

/// One morph target's displacements, xyz per vertex each (io::morph_target's positions, normals,
/// tangents through make_span). An empty span: the target does not displace that attribute.
struct morph_target_streams {
    strided_span<const float> positions{};
    strided_span<const float> normals{};
    strided_span<const float> tangents{};
};

/// Adds weighted morph-target displacements to a mesh's positions, and optionally its normals and
/// tangents, over caller-owned strided streams (the vertex layouts of skin.hpp). Holds no state,
/// allocates nothing.
///
/// Counts are the spans' sizes: n = in_positions.size vertices, targets.size() targets and as many
/// weights. Per attribute a (positions; normals when in_normals is given; tangents when in_tangents
/// is given), for every vertex v of `range` and component c < 3:
///
///     out_a(v, c) = in_a(v, c) + sum over t with weights[t] != 0 and targets[t].a given of
///                   weights[t] * targets[t].a(v, c)
///
/// accumulated in target order, each step one multiply-add (fused where the lanes fuse them), and
/// for tangents out(v, 3) = in(v, 3). A target whose weight is exactly 0 is skipped: with every
/// weight 0 the outputs are the inputs, bit for bit. Not renormalised (see the top of this file).
///
/// Streams whose xyz are three consecutive floats (std::vector<glm::vec3>, or packed xyz in any
/// buffer: stride 12, component stride 4) for the input, the output and every target of an
/// attribute run on the widest SIMD lanes (impl::lanes::widest); any other layout runs one vertex
/// at a time. Both compute the same sums; they differ only where the compiler fuses the scalar
/// path's multiply-adds differently (within 1e-6 of the magnitudes summed; the tests check it).
///
/// Aliasing: an output may be the very same stream as its input (morphing in place); outputs may
/// interleave with other streams byte-disjointly; any other overlap is rejected.
struct morph_job {
    span<const morph_target_streams> targets{};
    /// One weight per target.
    span<const float> weights{};
    /// Required, xyz per vertex: the mesh's positions and where the morphed ones go.
    strided_span<const float> in_positions{};
    strided_span<float> out_positions{};
    /// Optional, both or neither: xyz per vertex.
    strided_span<const float> in_normals{};
    strided_span<float> out_normals{};
    /// Optional, both or neither: xyzw per vertex (w copied).
    strided_span<const float> in_tangents{};
    strided_span<float> out_tangents{};
    /// The vertices run() writes; the rest of the outputs is not touched.
    vertex_range range{};

    /// Everything run() checks, and per element: every weight finite (error::index = the target),
    /// every displacement the job reads (of a target whose weight is not 0, for a vertex of the
    /// range) finite (error::index = the vertex; the message names the target and attribute).
    ///
    /// Errors (the message names the stream, target or vertex):
    /// - errc::invalid_argument: in_positions or out_positions missing, normals or tangents given on
    ///   one side only, null data, misaligned data or strides, strides that make elements or
    ///   components overlap, a range with begin > end or end > n, an output overlapping another
    ///   stream (other than its own input as the very same stream);
    /// - errc::size_mismatch: weights.size() != targets.size(), a stream (or a given target stream)
    ///   whose size is not n;
    /// - errc::non_finite: a NaN or infinite weight or displacement.
    status validate() const;

    /// Morphs the vertices of `range`. Returns validate()'s O(targets) errors (streams, sizes,
    /// aliasing, range) without writing anything; otherwise morphs and succeeds. A job that passed
    /// validate() with unchanged inputs never fails. Never allocates.
    KEYBLEND_JOB_ABI status run() const;
};

} // namespace keyblend

#include "impl/morph.impl.hpp"
