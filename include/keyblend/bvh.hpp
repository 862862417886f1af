// keyblend — the BVH reader: Biovision Hierarchy motion capture (the CMU database's format, and
// what most mocap tools export) into keyblend's own types: a skeleton and one clip.
//
// SPDX-License-Identifier: MIT
//
// Building it. The reader is compiled into keyblend::io (src/io/bvh.cpp), the library of the .X
// loader: link `keyblend::io` with CMake. This header only declares; it needs no library of its
// own. (Without CMake: compile src/io/bvh.cpp into the program.)
//
// The format. A BVH file is text in two sections:
//
//     HIERARCHY
//     ROOT Hips                          a joint: ROOT or JOINT, then its name (the rest of the line)
//     {
//         OFFSET 0.0 0.0 0.0             where the joint sits in its parent's space
//         CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
//         JOINT Chest { OFFSET 0 5.2 0  CHANNELS 3 Zrotation Xrotation Yrotation  ... }
//         End Site { OFFSET 0 3.1 0 }     a leaf: where the last bone ends
//     }
//     MOTION
//     Frames: 2
//     Frame Time: 0.0333333              seconds per frame
//     0 35.5 0 10 0 0  5 0 0 ...         one line per frame: a value per channel, in the order
//     0 35.6 0 11 0 0  5 1 0 ...         the CHANNELS lines list them, joint after joint
//
// What comes out (`bvh`):
// - skeleton: one joint per ROOT, JOINT and End Site, in file order (which is parent-first: the
//   skeleton keeps it, joint_of_source() is the identity). An End Site is a joint named
//   `EndSite_<parent name>` (as assimp names it) without channels, flagged bvh_joint::end_site:
//   its offset is where the parent's bone ends, which drawing a skeleton needs; skip flagged joints
//   to get only the animated ones. Bind local matrix = translate(OFFSET): BVH has no rest
//   rotation, so the bind pose is every joint at its offset with no rotation.
// - clip: one clip named "Motion". Key times are frame numbers (frame f at tick f, exactly: every
//   frame number up to 2^24 is a float), ticks_per_second = 1 / Frame Time, duration = the last
//   frame's number (frames - 1). Every joint with a rotation channel gets a rotation track and
//   every joint with a position channel a translation track, with one key per frame; joints with
//   neither have no channel (they keep the bind pose).
// - Rotations: the joint's rotation channels compose in the order the CHANNELS line lists them,
//   the first listed outermost. For `CHANNELS 3 Zrotation Xrotation Yrotation` with values z, x, y
//   degrees, the local rotation is Rz(z) * Rx(x) * Ry(y) (column vectors: a point is rotated about
//   Y first, then X, then Z), where Rx(a) rotates by a degrees about +X, counterclockwise seen
//   from +X looking at the origin (right-handed), and so on. Any subset and permutation of the
//   three axes composes by this rule. The product is computed in double (angles reduced modulo
//   360 exactly first) and rounded to a float quaternion: each key's rotation matrix is within
//   1e-6 of the exact Euler composition in every element. Consecutive keys are put in the same
//   hemisphere (q and -q are one rotation; the first key has w >= 0), so that interpolation
//   between frames takes the short way, as slerp would anyway.
// - Translations: a position channel is the joint's local translation on its axis and replaces
//   the OFFSET's component on that axis (as assimp reads it); an axis without a position channel
//   keeps the OFFSET's. (For a root whose OFFSET is 0, as in the CMU files, this is also
//   "OFFSET plus the channel", the other reading some tools use.) Each key is the file's decimal
//   rounded to the nearest float, exactly as std::from_chars reads it.
// - Local matrix of an animated joint at a frame: translate(T) * R; sampling between frames
//   interpolates translations linearly and rotations by short-path slerp (track.hpp), which is
//   not the same as interpolating the Euler angles.
//
// Bad input, one policy with the other loaders (io/model.hpp). Every message starts with the
// source name and `line L, column C` (1-based; a column counts bytes, a tab is one; lines end at
// "\n", "\r\n" or a lone "\r"), and quotes names and values from the file as bounded, escaped
// excerpts. parse_mode::strict fails on the first problem; parse_mode::lenient (the default) does
// what is listed under load_bvh and records a load_warning naming the place. Problems of one kind
// in the frame rows (bad values, short or long rows) make one warning that names the first and
// counts the rest. Nothing a file holds can make the reader crash, read out of bounds, recurse
// (joints nest through an explicit stack, to any depth load_options::max_joints allows), or
// allocate out of proportion to the file: no count the file states (Frames:, CHANNELS) is used
// to allocate anything before the data it counts is read.
#pragma once

#include "clip.hpp"
#include "error.hpp"
#include "io/model.hpp"
#include "skeleton.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace keyblend {
namespace io {
inline namespace KEYBLEND_IO_GLM_LAYOUT {

/// One channel of a CHANNELS line.
enum class bvh_channel : unsigned char {
    x_position, ///< Xposition
    y_position, ///< Yposition
    z_position, ///< Zposition
    x_rotation, ///< Xrotation (degrees)
    y_rotation, ///< Yrotation (degrees)
    z_rotation, ///< Zrotation (degrees)
    /// A channel lenient mode keeps in the row layout but does not apply: an unknown name, or a
    /// channel its joint lists a second time. Its values are skipped, whatever they hold.
    ignored,
};

/// "Xposition", ..., "Zrotation", or "ignored".
const char* to_string(bvh_channel c);

/// The frames per second a clip gets when its Frame Time is missing or invalid (lenient mode):
/// the most common rate of BVH exports.
inline constexpr double bvh_default_frames_per_second = 30.0;

/// A Frame Time is valid from this many seconds ...
inline constexpr double bvh_min_frame_time = 1e-9;
/// ... to this many (a nanosecond to 31 years a frame).
inline constexpr double bvh_max_frame_time = 1e9;

/// What the file says about one joint of bvh::skeleton.
struct bvh_joint {
    /// True for an End Site (no channels of its own in a valid file; see the top of this file).
    bool end_site = false;
    /// The OFFSET as read (lenient repairs applied); the bind local matrix is translate(offset).
    glm::vec3 offset{0.0f};
    /// The line of its ROOT, JOINT or End keyword.
    std::size_t line = 0;
};

/// One column of the frame rows: the joint whose CHANNELS line lists it, and which channel it is.
/// A joint's columns are the ones naming it, in the order its CHANNELS line lists them (in a
/// valid file they are next to each other).
struct bvh_column {
    std::size_t joint = 0;
    bvh_channel channel = bvh_channel::ignored;
};

/// Everything a BVH file holds.
struct bvh {
    /// The joints (see the top of this file). Names are as written, except: an unnamed joint is
    /// `unnamed_joint_<index>`; two joints with one name: the later are renamed `name#2`, ...
    /// (skeleton.hpp's duplicate_names::rename; lenient mode, with a warning); an End Site whose
    /// generated name a joint has already: renamed the same way, with a note in either mode. (The
    /// End Sites' names copy at most as many bytes of their parents' names, all together, as the
    /// file has; past that, which only a file of many End Sites under long names reaches, an End
    /// Site is named `EndSite_<joint index>`.)
    keyblend::skeleton skeleton{};
    /// Parallel to the skeleton's joints.
    std::vector<bvh_joint> joints{};
    /// Every channel of every joint, in the order a frame row holds their values.
    std::vector<bvh_column> columns{};
    /// The motion (see the top of this file). It passes validate_clip against `skeleton`.
    keyblend::clip clip{};
    /// Frames read: the keys each track of the clip has.
    std::size_t frame_count = 0;
    /// The `Frames:` line's number as written (0 when the line is missing or unreadable).
    std::size_t declared_frame_count = 0;
    /// Seconds per frame: the `Frame Time:` line's, or 1 / bvh_default_frames_per_second when it
    /// is missing or invalid (clip.ticks_per_second_is_default is then set).
    double frame_time = 1.0 / bvh_default_frames_per_second;
    /// Problems the load stepped over (lenient mode), and notes in either mode, in file order.
    std::vector<load_warning> warnings{};
};

/// Loads a BVH file from `path` (one read of the whole file). The reader uses these
/// io::load_options: mode; max_joints (ROOT, JOINT and End Site joints together); max_keys (frames
/// times channels: every value of every frame row counts); max_warnings.
///
/// What parse_mode::lenient (the default) does with a damaged file, each case with a warning:
/// - the hierarchy:
///   - repaired: a joint without a name is named unnamed_joint_<index>; a missing OFFSET, or
///     one with fewer than 3 numbers or a value that is not a finite float, uses 0 there; a
///     joint without a CHANNELS line has no channels; a CHANNELS count that disagrees with the
///     names after it (on its line) takes the names; a second CHANNELS line in one joint adds
///     its channels to the joint's; a '{' missing after ROOT, JOINT or End Site
///     is assumed; joints still open at MOTION or at the end of the file are closed; joint names
///     used twice are renamed (see bvh::skeleton); CHANNELS or child joints inside an End Site
///     are kept (it then animates, or has children, like a joint);
///   - dropped: an unknown channel name (Xscale, ...) and a second channel of one kind in one joint
///     become bvh_channel::ignored (their values are read and ignored); anything else the
///     hierarchy cannot interpret (a stray '}', an unknown word, extra numbers after OFFSET, a
///     statement outside any joint) is ignored to the end of its line;
/// - the motion:
///   - repaired: a missing or unreadable `Frames:` line, or one whose number disagrees with
///     the frame rows that follow (fewer or more), counts the rows: the clip has one frame per
///     row there is; a missing or invalid `Frame Time:` (not a number, NaN, infinite, or outside
///     [bvh_min_frame_time, bvh_max_frame_time]; 0 and negative times included) takes 1 /
///     bvh_default_frames_per_second; a value that is not a number, NaN, infinite, or (for a
///     position channel) too large for a float is replaced by the same channel's value in the
///     frame before (the first frame: 0 for a rotation, the OFFSET's component for a position),
///     and so are the values missing from a short row;
///   - dropped: values past the row's last channel; a whole MOTION section when the file ends
///     before it (the clip then has no frames).
/// - a hierarchy without any joint loads as an empty skeleton, with a note.
/// Lines that hold only white space are skipped everywhere. Notes in either mode: frame numbers
/// past 2^24 (not every one is exact as a float tick), and renamed End Sites. Names are checked
/// when the hierarchy ends (at MOTION), before the frames are read.
///
/// Errors (the message starts with the path and names the place):
/// - errc::io_error: the file cannot be opened or read;
/// - errc::parse_error: a file that does not start with HIERARCHY (after white space and a UTF-8
///   byte order mark): not a BVH file; more than max_warnings problems; and in strict mode every
///   problem above that is not one of the following (an empty hierarchy included);
/// - errc::unsupported: a load_options limit exceeded (max_joints, max_keys);
/// - strict mode also: errc::non_finite (NaN or infinity in an OFFSET or a frame value, a position
///   value too large for a float, a Frame Time NaN or infinite), errc::invalid_argument (a Frame
///   Time outside [bvh_min_frame_time, bvh_max_frame_time]), errc::duplicate (two joints with one
///   name, a channel listed twice in one joint, a second CHANNELS line in one joint),
///   errc::not_found (an unknown channel name).
result<bvh> load_bvh(const std::string& path, const load_options& options = {});

/// Loads a BVH file from memory. `source_name` starts every message (a file name, or the default).
/// The buffer is only read during the call. Errors as load_bvh, except io_error.
result<bvh> load_bvh_memory(const void* data, std::size_t size, const load_options& options = {},
                            std::string_view source_name = "<memory>");

} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace io
} // namespace keyblend
