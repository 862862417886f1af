// keyblend — compressed clips: a clip made several times smaller with a guaranteed error, and
// sampled straight from its compressed bytes.
//
// SPDX-License-Identifier: MIT
//
// The error. What a compressed clip promises is measured where it shows: in model space. Around
// every joint, at the *shell distance* d, sit three virtual vertices, one along each of the
// joint's model-space axes (the joint's model matrix applied to (d, 0, 0), (0, d, 0), (0, 0, d)).
// The error of a pose is the largest distance between a virtual vertex where the compressed clip
// puts it and where the source clip (sampling_job, full precision) puts it. compress_job keeps it
// at or below the *precision* at every sample, every midpoint between two samples, every
// 1 / check_rate seconds (60 Hz by default) and at the clip's end, and stores the largest error
// it measured in the clip (compressed_clip::stats). Both lengths are in the skeleton's model
// units; a joint may have its own. A skinned vertex within d of its joints moves by about the
// error of those joints (more for vertices farther away): pick d as the distance of the skin
// from the bones, precision as what may not show. The defaults, for a skeleton whose bind pose is
// H units tall (the largest extent of its joints' bounding box), are H / 18000 and H / 60: 0.01 cm
// and 3 cm on a 1.8 m character (compression_settings::for_height sets them from another height,
// such as the skinned mesh's, which is what `keyblend pack` uses). Morph weights have their own
// bound, in weight units. Additive clips (compression_settings::additive_base) are measured on
// top of their base pose.
//
// How. The clip is sampled uniformly (at its key rate when its keys lie on a grid of at most
// max_sample_rate, else at resample_rate, refined where interpolating the samples would miss the
// source by more than half the precision: cubic splines, keys off the grid), with the time axis
// cut into spans at every discontinuity (a cut - two keys at one time - and every step key off
// the grid), so that a jump stays a jump. Step tracks whose keys are on the grid hold their
// samples. Per track: equal to the bind pose throughout (within a negligible fraction of the
// precision): not stored; constant: stored once; varying: quantized. Varying values are reduced
// to their range over the clip, then to their range over each segment of 16 or 32 samples
// (whichever makes the smaller clip), and stored in a width of 0 to 24 bits chosen per track and
// segment by measuring the model-space error (each joint's shell taking its children with it).
// Rotations store three components: per track and segment the one that stays farthest from zero
// is dropped and rebuilt from the others, so no rotation loses precision near w = 0.
//
// Sampling. compressed_sampling_job reads the bits at the two samples around the time
// (whole poses, SIMD: AVX-512 / AVX2 gathers of the packed fields, scalar otherwise), dequantizes
// them, rebuilds rotations, and interpolates (rotations by nlerp), all joints at once; a
// compressed_sampling_context per playing instance keeps the last two samples decoded, so that
// forward playback decodes one new sample each time it crosses one (none in between). Cost does
// not depend on the clip's length or on the direction of playback.
//
// Where the bytes live. A compressed_clip either owns its bytes or views bytes the caller keeps
// (a package, package.hpp, or a mapped file); either way they are validated first and then used
// in place. A compressed clip carries its clip's name, duration, ticks per second and wrap mode,
// its user channels, events and root motion (uncompressed: extras() gives them back as a plain
// clip for the player, events and root-motion functions).
#pragma once

#include "clip.hpp"
#include "error.hpp"
#include "pose.hpp"
#include "skeleton.hpp"
#include "span.hpp"

#include "impl/compress_format.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace keyblend {

namespace impl {
struct compressed_access;
struct compressed_sampler;
} // namespace impl

/// How compress_job trades size for accuracy. Lengths are in the skeleton's model units, times in
/// seconds.
struct compression_settings {
    /// The largest error allowed (see the top of this file), > 0; 0 (the default) for the
    /// skeleton's height / 18000.
    float precision = 0.0f;
    /// The distance of the virtual vertices from their joint, > 0; 0 for the skeleton's
    /// height / 60.
    float shell_distance = 0.0f;
    /// Empty, or one value per joint: that joint's precision (0 for `precision`).
    std::vector<float> joint_precision{};
    /// Empty, or one value per joint: that joint's shell distance (0 for `shell_distance`).
    std::vector<float> joint_shell{};
    /// The largest error allowed on a morph weight, > 0.
    float weight_precision = 1e-3f;
    /// The error is checked every 1 / check_rate seconds too (and at every sample, midpoint and
    /// the end). In [1, 1000].
    float check_rate = 60.0f;
    /// A clip whose keys lie on a uniform grid of at most this many samples a second is sampled on
    /// that grid (every key a sample); other clips at resample_rate, refined up to this rate where
    /// needed. In [resample_rate, 1000].
    float max_sample_rate = 240.0f;
    /// In [1, max_sample_rate].
    float resample_rate = 60.0f;
    /// The most memory the compression may use for its reference poses, its plans and its error
    /// checks (bytes, > 0), estimated from the clip's timeline before any of it is sampled: a
    /// longer clip is refused (errc::unsupported), and refinement stops short of it. The default
    /// (4 GiB; 1 GiB on a 32-bit build) takes about 70 minutes (18) of a 60-joint clip sampled and
    /// checked at 60 Hz.
    std::size_t memory_limit = sizeof(std::size_t) >= 8 ? std::size_t(4) << 30 : std::size_t(1) << 30;
    /// For an additive clip (one whose poses are differences, see make_additive): the pose they
    /// are applied to (at weight 1, as additive_layer does) when the error is measured. One
    /// transform per joint. nullptr: the clip is not additive.
    const local_pose* additive_base = nullptr;

    /// Settings for a model `height` units tall (> 0): precision height / 18000 and shell
    /// distance height / 60, i.e. 0.01 cm and 3 cm on a 1.8 m character.
    static compression_settings for_height(float height) {
        compression_settings s;
        s.precision = height / 18000.0f;
        s.shell_distance = height / 60.0f;
        return s;
    }
};

/// What a compressed clip says about itself: the bound it was compressed to and the error
/// measured then (compressed_clip::stats; compression_report::stats).
struct compressed_stats {
    /// The bound: precision and shell distance (the defaults resolved), weight precision.
    float precision = 0.0f;
    float shell_distance = 0.0f;
    float weight_precision = 0.0f;
    /// The largest error measured (model units), the joint and the time (ticks) where it occurs.
    float max_error = 0.0f;
    std::size_t max_error_joint = error::no_index;
    float max_error_time = 0.0f;
    /// The largest morph weight error measured.
    float max_weight_error = 0.0f;
    /// True when every error is within its bound (the joint's precision, the weight precision).
    bool bound_met = false;
    /// The source clip's key data (times and values), bytes.
    std::size_t source_key_bytes = 0;
    /// Samples and segments.
    std::size_t samples = 0;
    std::size_t segments = 0;
};

/// What a compression did, and what it measured.
struct compression_report {
    /// The bound and the errors, as the compressed clip stores them.
    compressed_stats stats{};
    /// The compressed clip's size.
    std::size_t bytes = 0;
    /// Spans (pieces of the time axis between discontinuities) and samples per segment.
    std::size_t spans = 0;
    std::size_t segment_length = 0;
    /// The first span's sample rate (samples per second).
    float sample_rate = 0.0f;
    /// Components (translation, rotation, scale, morph weight tracks) not stored, stored once, and
    /// quantized.
    std::size_t default_tracks = 0;
    std::size_t constant_tracks = 0;
    std::size_t varying_tracks = 0;
    /// What was lossy beyond quantization, one line each: matrix keys with shear (a TRS pose
    /// cannot hold it; sampling_job drops it too), a rate capped by max_sample_rate, a bound missed.
    std::vector<std::string> notes{};
};

/// A compressed clip: the bytes (see impl/compress_format.hpp for their layout) and what they
/// say. Made by compress_job, or from bytes (view or copy, validated first). Copying an owning
/// clip copies its bytes; copying a view copies the view.
class compressed_clip {
public:
    /// No clip (empty(); sampling it is an error).
    compressed_clip() = default;
    compressed_clip(const compressed_clip& other) { *this = other; }
    compressed_clip& operator=(const compressed_clip& other);
    compressed_clip(compressed_clip&& other) noexcept { *this = std::move(other); }
    compressed_clip& operator=(compressed_clip&& other) noexcept;

    /// Validates `size` bytes at `data` as a compressed clip and returns a clip that views them:
    /// they must stay where they are, unchanged, while it (or a sampling context bound to it) is
    /// used. `data` must be 4-byte aligned. O(size), no allocation. Errors (the message names the
    /// field and its byte offset): errc::parse_error for a blob that is not a compressed clip of
    /// this version or is truncated or inconsistent; errc::unsupported for a big-endian host or a
    /// newer version; errc::non_finite for a NaN or infinite value; errc::out_of_range for a
    /// count beyond the limits.
    static result<compressed_clip> view(const void* data, std::size_t size);
    /// The same, copying the bytes into the clip (any alignment).
    static result<compressed_clip> copy(const void* data, std::size_t size);

    bool empty() const noexcept { return data_ == nullptr; }
    /// The bytes: what a file or package stores. (A multiple of 16 long.)
    const unsigned char* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    /// True when this clip owns its bytes (made by compress_job or copy()).
    bool owns_bytes() const noexcept { return !owned_.empty(); }

    std::string_view name() const;
    /// Ticks, as clip::duration.
    float duration() const noexcept { return layout_.h.duration; }
    float ticks_per_second() const noexcept { return layout_.h.ticks_per_second; }
    bool ticks_per_second_is_default() const noexcept { return (layout_.h.flags & impl::cc::flag_ticks_default) != 0; }
    wrap_mode wrap() const noexcept { return static_cast<wrap_mode>(layout_.h.wrap); }
    /// True for an additive clip (compressed with compression_settings::additive_base).
    bool additive() const noexcept { return (layout_.h.flags & impl::cc::flag_additive) != 0; }
    /// The joints and morph weights of the skeleton it was compressed for.
    std::size_t joint_count() const noexcept { return layout_.h.joint_count; }
    std::size_t morph_weight_count() const noexcept { return layout_.h.morph_weight_total; }
    /// True when the clip stores joint j's translation, rotation or scale (constant or varying):
    /// what a plain clip's channel for j is to blending in matrix space. False for j out of range.
    bool animates(std::size_t joint) const;
    /// The bound and the error measured when it was compressed.
    compressed_stats stats() const;
    /// A plain clip with this clip's name, duration, ticks per second, wrap mode, user channels,
    /// events and root motion, and no joint channels: what clip_time, passed_events,
    /// motion_between and sample_user_channels take. Allocates (call it once per clip, not per
    /// frame).
    clip extras() const;

private:
    friend struct impl::compressed_access;
    friend struct impl::compressed_sampler;

    impl::cc::clip_layout layout_{};
    struct alignas(16) block {
        unsigned char bytes[16];
    };
    std::vector<block> owned_;
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

/// `wrap_time(ticks, c.duration(), c.wrap())` (see clip_time for plain clips).
inline float clip_time(const compressed_clip& c, double ticks);

/// Compresses a clip. A job like the per-frame stages (validate() names the bad input, run()
/// fills the caller's output), though it runs offline and allocates: the same shape lets a
/// pipeline check every clip's settings before the slow part starts, and reuse an output.
///
/// run() samples the clip with sampling_job and compresses it as the top of this file says; the
/// compressed clip samples (compressed_sampling_job below) within the bound of every sample time,
/// midpoint and check time, which the report (and the clip's stats) gives as measured. A bound that cannot be
/// met (a discontinuity or a curve that max_sample_rate cannot follow) is reported (bound_met
/// false, and a note), not an error. Time: linear in the clip's length, a few tens of
/// milliseconds for a few seconds of a 60-joint skeleton.
///
/// The guarantee assumes IEEE arithmetic: compile the file that runs compress_job (a tool, a
/// build step) without -ffast-math, whose reassociation can miss the bound on far-from-origin
/// translations and cuts. Sampling (compressed_sampling_job) has no such requirement.
struct compress_job {
    /// The clip and the skeleton it animates (validate_clip must accept them).
    const clip* input = nullptr;
    const keyblend::skeleton* skeleton = nullptr;
    compression_settings settings{};
    /// Where the compressed clip goes (replaced).
    compressed_clip* output = nullptr;
    /// Optional: what the compression did and measured.
    compression_report* report = nullptr;

    /// Errors: errc::invalid_argument for a null input, skeleton or output, a precision, shell
    /// distance, weight precision or rate outside its range (the message names the setting, and
    /// the joint for a per-joint value: error::index); errc::size_mismatch for per-joint arrays
    /// or an additive base whose size is not the skeleton's; and validate_clip's errors;
    /// errc::unsupported for a clip whose timeline needs more samples than a compressed clip holds
    /// (2^26) or more memory than settings.memory_limit.
    status validate() const;
    /// validate(), then the compression. On an error the output is not touched.
    status run() const;
};

/// The per-instance state of sampling one compressed clip (as sampling_context is for plain
/// clips): the two samples last decoded, and the decoding tables of the segments last used (up
/// to 16, within 64 KB). One per playing instance; many can sample one clip. Binds itself to a
/// (clip bytes, skeleton) pair on the first compressed_sampling_job::run with them, and rebinds
/// when given other bytes, another skeleton object, or one whose joint or morph weight count
/// changed. Binding allocates (a few KB per 64 joints, and the tables); sampling a bound context
/// does not. After changing a bound skeleton's parents, names or bind pose in place, call reset():
/// until then the results are unspecified (but memory-safe).
class compressed_sampling_context {
public:
    compressed_sampling_context() = default;
    compressed_sampling_context(const compressed_sampling_context& other) { *this = other; }
    compressed_sampling_context& operator=(const compressed_sampling_context& other);
    compressed_sampling_context(compressed_sampling_context&&) noexcept = default;
    compressed_sampling_context& operator=(compressed_sampling_context&&) noexcept = default;

    /// Forgets the binding; the next compressed_sampling_job::run rebinds.
    void reset() noexcept { data_ = nullptr; skeleton_ = nullptr; }

private:
    friend struct impl::compressed_sampler;

    const unsigned char* data_ = nullptr; // the bound clip's bytes
    const skeleton* skeleton_ = nullptr;
    impl::cc::clip_layout layout_{};
    std::size_t joints_ = 0, padded_ = 0, capacity_ = 0, weights_ = 0, weight_capacity_ = 0;
    // Two decoded samples in the pose's layout: 10 streams of capacity_ floats each, then the
    // morph weights (weight_capacity_); which global sample each holds (-1: none).
    impl::aligned_floats samples_[2];
    std::int64_t sample_of_[2] = {-1, -1};
    // Per padded joint: 1 where translation / rotation / scale interpolates, 0 where it steps
    // (holds the earlier sample) or does not vary (holds its value bit for bit); then per weight.
    impl::aligned_floats steps_;
    // Per group (translation, rotation, scale, weight): the joint (weight) of each varying track;
    // per block of 8 pose lanes (translation, rotation, scale): the lanes that vary, and the
    // index of the first of them among the group's varying tracks.
    std::vector<std::int32_t> track_joint_[4];
    std::vector<unsigned char> lane_mask_[3];
    std::vector<std::int32_t> lane_start_[3];
    // The clip ranges, per component in component order (translations, scales, weights), and per
    // rotation track for each of x, y, z, w: minimum, extent, and the extent's level (see
    // impl/compress_format.hpp).
    impl::aligned_floats range_min_, range_ext_, rotation_min_, rotation_ext_;
    std::vector<std::int32_t> range_level_, rotation_level_;
    // The decoding of the segments last used (2 to 16 of them, 64 KB at most): in component
    // order bit offsets in a record, masks, scales and biases; per rotation its dropped component
    // (also as a float); the record's bits. Replaced in turn.
    struct segment_table {
        std::int64_t segment = -1;
        std::uint32_t record_bits = 0;
        impl::aligned_floats scale, bias, drop_f;
        std::vector<std::int32_t> offset, mask, drop, top, track_width;
    };
    std::vector<segment_table> tables_;
    unsigned next_table_ = 0;
    // Scratch: two decoded samples in component order, then their rotations completed (x, y, z, w).
    impl::aligned_floats compact_, rotations_;
};

/// Samples every joint of a compressed clip at one time into a local pose (translation, rotation,
/// scale and morph weights) straight from its bits, through the caller's
/// compressed_sampling_context: sampling_job for compressed clips, with the same members. The job
/// contract (docs/jobs.md): inputs and caller-owned outputs, validate() names the first bad
/// element, run() checks what keeps it inside memory and writes nothing when that fails.
///
/// Per joint, per component, the result at `time` (ticks, used as given: wrap it first with
/// clip_time for looping; ends clamp, NaN samples the start):
/// - a component the compressed clip does not store: the bind pose's (skeleton::bind_transforms,
///   bind_morph_weights), exactly;
/// - a constant one: its stored value, exactly;
/// - a varying one: the interpolation of the two samples around `time` (translation, scale and
///   morph weights lerp, rotation nlerp; step tracks hold the earlier sample); at a sample's time,
///   that sample exactly.
/// Within the clip's bound (compressed_clip::stats) of sampling_job on the source clip. The SIMD
/// paths (AVX-512, AVX2, SSE2) equal the scalar one (KEYBLEND_NO_INTRINSICS) to within 2e-6 per
/// component of unit-size values (FMA contraction and the order of a sum).
///
/// `output` is resized to skeleton->size() joints and skeleton->morph_weight_total() morph
/// weights (no allocation once it has them). Binding the context allocates; sampling a bound
/// context does not. The cost does not depend on the clip's length or the direction of playback.
///
/// Errors (nothing is written):
/// - run: errc::invalid_argument for a null clip, skeleton, context or output, or an empty clip;
///   errc::size_mismatch when the skeleton is not the one the clip was compressed for (its joint
///   count, parents, names, bind pose or morph weights differ), checked when the context binds.
/// - validate: the same, the skeleton checked every time (O(joints)). The clip's bytes were
///   validated when it was made (compress_job, compressed_clip::view or copy), so a job that
///   passes validate() never makes run() fail.
struct compressed_sampling_job {
    const compressed_clip* clip = nullptr;
    const keyblend::skeleton* skeleton = nullptr;
    /// Ticks of the clip.
    float time = 0.0f;
    /// One per playing instance (a character playing a clip); bound on first use.
    compressed_sampling_context* context = nullptr;
    local_pose* output = nullptr;

    status validate() const;
    KEYBLEND_JOB_ABI status run() const;
};

/// The error of a compressed clip against its source, measured as compress_job measures it, at
/// every 1 / rate_hz seconds of [0, duration] and at the end. Used by tests, tools and benchmarks
/// to check a stored bound independently.
struct error_measurement {
    double max_error = 0.0;
    std::size_t joint = error::no_index;
    float time = 0.0f; ///< ticks
    double max_weight_error = 0.0;
    std::size_t checks = 0;
};
/// `shell_distance` > 0 for every joint (or per joint: `joint_shell`, one per joint, 0 for
/// shell_distance); an additive clip is measured on `additive_base`. Errors: the sampling jobs'
/// and validate_clip's; errc::invalid_argument for a non-positive shell or rate; errc::unsupported
/// when the rate and the clip's duration ask for more checks than a compressed clip holds samples
/// (2^26), so that the time it takes stays bounded.
inline result<error_measurement> measure_error(const clip& source, const compressed_clip& compressed,
                                               const skeleton& s, float shell_distance, float rate_hz = 60.0f,
                                               span<const float> joint_shell = {},
                                               const local_pose* additive_base = nullptr);

/// The largest distance between the virtual vertices (at `shell` along each axis of each joint's
/// model matrix) of two sets of model matrices; `joint` gets the joint where it occurs. With
/// `joint_shell` (one per joint, 0 for `shell`), each joint's own.
inline double virtual_vertex_error(const glm::mat4* a, const glm::mat4* b, std::size_t count, float shell,
                                   std::size_t* joint = nullptr, span<const float> joint_shell = {});

} // namespace keyblend

#include "impl/compress.impl.hpp"
#include "impl/compress_sample.impl.hpp"
