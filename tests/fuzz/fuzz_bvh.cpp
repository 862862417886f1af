// libFuzzer target for the BVH reader. Whatever the bytes, load_bvh_memory must return a value or
// an error with a message, in both modes, without a sanitizer report, within libFuzzer's time and
// memory limits; and a value must keep every promise bvh.hpp makes (a parent-first skeleton with
// finite bind poses, columns naming joints, a clip valid against the skeleton with one key per
// frame in every track, key times the frame numbers, a positive rate, bounded warnings). A broken
// promise traps.
//
// Built by .ci/run with clang (-DKEYBLEND_BUILD_FUZZ=ON), seeded with tests/data/bvh and the
// shared formats folder (01_01.bvh cut at -max_len, and files of other formats), run for a
// bounded time under AddressSanitizer and UndefinedBehaviorSanitizer.
#include <keyblend/bvh.hpp>

#include "fuzz.hpp"

#include <cstddef>
#include <cstdint>

namespace {

using kbfuzz::require;

void check(const keyblend::io::bvh& b, const keyblend::io::load_options& options) {
    const keyblend::skeleton& s = b.skeleton;
    require(s.size() <= options.max_joints);
    require(b.joints.size() == s.size());
    for (std::size_t j = 0; j < s.size(); ++j) {
        require(s.parent(j) < static_cast<keyblend::joint_index>(j));
        require(keyblend::is_finite(s.bind_local()[j]));
        require(keyblend::is_finite(b.joints[j].offset));
    }
    for (const keyblend::io::bvh_column& c : b.columns) require(c.joint < s.size());
    require(b.frame_count * b.columns.size() <= options.max_keys);
    const keyblend::clip& c = b.clip;
    require(static_cast<bool>(keyblend::validate_clip(c, s)));
    require(c.ticks_per_second > 0.0f && keyblend::is_finite(c.ticks_per_second));
    require(c.duration == keyblend::last_key_time(c));
    for (const keyblend::channel& ch : c.channels) {
        require(ch.rotation.empty() || ch.rotation.size() == b.frame_count);
        require(ch.translation.empty() || ch.translation.size() == b.frame_count);
        for (std::size_t f = 0; f < ch.rotation.size(); ++f) require(ch.rotation.time(f) == static_cast<float>(f));
        require(ch.scale.empty() && ch.matrix.empty());
    }
    require(b.warnings.size() <= options.max_warnings);
    for (const keyblend::io::load_warning& w : b.warnings)
        require(!w.message.empty() && w.message.size() < 2000); // names as bounded excerpts
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The default limits, but for joints and keys that keep each run quick.
    keyblend::io::load_options options;
    options.max_joints = 4096;
    options.max_keys = std::size_t{1} << 20;
    kbfuzz::each_mode(
        options, [&](const keyblend::io::load_options& o) { return keyblend::io::load_bvh_memory(data, size, o, "fuzz"); },
        check);
    return 0;
}
