// A program outside keyblend's tree that loads a .X file through keyblend::io. Linking it needs
// zlib (the loader inflates compressed files), which the package must bring along.
#include <keyblend/io/xfile.hpp>

#include <cstdio>
#include <cstring>

int main() {
    const char text[] = "xof 0303txt 0032\n"
                        "Frame Root { Frame Child { } }\n"
                        "AnimationSet Wave { Animation { { Child } AnimationKey { 2; 1; 0;3;1.0,2.0,3.0;;; } } }\n";
    const auto file = keyblend::io::load_xfile_memory(text, std::strlen(text));
    if (!file) {
        std::printf("consumer_io: %s\n", file.error().message.c_str());
        return 1;
    }
    std::printf("consumer_io: %zu frames, %zu animation set(s)\n", file->skeleton.size(),
                file->animation_sets.size());
    return file->skeleton.size() == 2 && file->animation_sets.size() == 1 ? 0 : 1;
}
