// libFuzzer target for keyblend convert's texture decoder (examples/tool/image.hpp): DDS, BMP and
// TGA. Whatever the bytes, decode_image must decode them or give a reason, read nothing past them,
// and keep its promises: sides within max_image_side, width * height * 4 bytes of pixels (and at
// most 512 bytes of pixels per byte of input, past a small header: a BMP's run-length data; 256
// for every other format), `opaque` true exactly when
// every alpha is 255. A broken promise traps. Each input is tried as a TGA and without the name
// that says so.
//
// Built by .ci/run with clang (-DKEYBLEND_BUILD_FUZZ=ON), seeded with tests/data, run for a
// bounded time under AddressSanitizer and UndefinedBehaviorSanitizer.
#include "../../examples/tool/image.hpp"

#include "fuzz.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using kbfuzz::require;
    for (const bool maybe_tga : {false, true}) {
        tool::rgba_image image;
        std::string why;
        if (!tool::decode_image(data, size, maybe_tga, image, why)) {
            require(!why.empty() && why.size() < 2000 && image.pixels.empty());
            continue;
        }
        require(image.width >= 1 && image.width <= tool::max_image_side);
        require(image.height >= 1 && image.height <= tool::max_image_side);
        require(image.pixels.size() == std::size_t(image.width) * image.height * 4);
        const bool bmp_rle = image.kind.compare(0, 8, "BMP (RLE") == 0;
        require(image.pixels.size() <= (bmp_rle ? 512 : 256) * size + 1024);
        require(!image.kind.empty());
        bool opaque = true;
        for (std::size_t i = 3; i < image.pixels.size(); i += 4) opaque = opaque && image.pixels[i] == 255;
        require(opaque == image.opaque);
    }
    return 0;
}
