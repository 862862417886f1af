// libFuzzer target for packages (keyblend/package.hpp) and the compressed clips inside them.
// Whatever the bytes, package::view must return a package or an error with a message, without a
// sanitizer report, within libFuzzer's time and memory limits; and a package it returns must keep
// every promise package.hpp makes: every view inside the bytes (ASan checks each read), the
// skeleton buildable or refused with an error, every clip sampling for that skeleton at any time
// into finite, in-range values (a clip's every value comes from its ranges), every mesh's indices
// in range. A broken promise traps.
//
// The checksum stops nearly every mutated input at the first check, so each input is tried twice:
// as it is, and with its checksum recomputed, so that the fuzzer reaches every check after it.
// Built by .ci/run with clang (-DKEYBLEND_BUILD_FUZZ=ON), seeded with packages `keyblend pack`
// writes from the shared .X files, run for a bounded time under ASan and UBSan.
#include <keyblend/package.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

namespace {

void require(bool promise) {
    if (!promise) __builtin_trap();
}

void use(const keyblend::package& p) {
    const keyblend::result<keyblend::skeleton> s = p.make_skeleton();
    if (s) require(s->size() == p.joint_count());
    else require(!s.error().message.empty());
    for (std::size_t j = 0; j < p.joint_count(); ++j) {
        require(p.parents()[j] < static_cast<keyblend::joint_index>(j));
        (void)p.joint_name(j);
    }
    for (std::size_t i = 0; i < p.clip_count(); ++i) {
        const keyblend::compressed_clip c = p.clip(i);
        require(!c.empty() && c.joint_count() == p.joint_count());
        (void)c.extras();
        if (!s) continue;
        keyblend::compressed_sampling_context forward_context, random_context;
        keyblend::local_pose pose;
        keyblend::compressed_sampling_job forward{&c, &*s, 0.0f, &forward_context, &pose};
        keyblend::compressed_sampling_job random = forward;
        random.context = &random_context;
        require(static_cast<bool>(forward.validate()));
        const float d = c.duration();
        for (float t : {-1.0f, 0.0f, 0.37f * d, 0.5f * d, d, 2.0f * d, 1e30f, -1e30f}) {
            forward.time = random.time = t;
            require(static_cast<bool>(random.run()));
            require(static_cast<bool>(forward.run()));
        }
        for (std::size_t j = 0; j < pose.size(); ++j) {
            const keyblend::transform x = pose.get(j);
            require(keyblend::is_finite(x.translation) && keyblend::is_finite(x.rotation) && keyblend::is_finite(x.scale));
        }
    }
    for (std::size_t i = 0; i < p.mesh_count(); ++i) {
        const keyblend::package_mesh m = p.mesh(i);
        for (std::uint32_t v : m.indices) require(v < m.vertex_count);
        for (std::uint32_t b : m.bone_joints) require(b < p.joint_count());
        for (std::size_t v = 0; v < m.vertex_count && m.influences; ++v)
            for (std::size_t k = 0; k < m.influences; ++k)
                require((m.joints8.data ? m.joints8(v, k) : m.joints16(v, k)) < m.bone_count);
        (void)m.to_mesh();
    }
}

void open(const void* bytes, std::size_t size) {
    const keyblend::result<keyblend::package> p = keyblend::package::view(bytes, size);
    if (p) use(*p);
    else require(!p.error().message.empty() && p.error().message.size() < 2000);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // 16-byte aligned and exactly `size` bytes long, so that AddressSanitizer reports any read
    // past them.
    struct aligned_delete {
        void operator()(unsigned char* p) const { ::operator delete(p, std::align_val_t(16)); }
    };
    const std::unique_ptr<unsigned char, aligned_delete> bytes(
        static_cast<unsigned char*>(::operator new(size ? size : 1, std::align_val_t(16))));
    if (size) std::memcpy(bytes.get(), data, size);
    open(bytes.get(), size);
    if (size >= 20) { // the same with its checksum made right
        const std::uint32_t sum = keyblend::crc32c(bytes.get() + 20, size - 20);
        std::memcpy(bytes.get() + 16, &sum, 4);
        open(bytes.get(), size);
    }
    return 0;
}
