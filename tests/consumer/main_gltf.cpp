// A program outside keyblend's tree that loads a glTF file through keyblend::gltf. Linking it needs
// simdjson (and Draco when keyblend::gltf was built with it), which the package must bring along.
#include <keyblend/gltf.hpp>

#include <cstdio>
#include <cstring>

int main() {
    const char text[] = R"({"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "scene": 0,
                            "nodes": [{"name": "root", "children": [1]}, {"name": "child", "translation": [0, 1, 0]}]})";
    const auto file = keyblend::gltf::load_memory(text, std::strlen(text));
    if (!file) {
        std::printf("consumer_gltf: %s\n", file.error().message.c_str());
        return 1;
    }
    std::printf("consumer_gltf: %zu nodes (Draco: %s)\n", file->skeleton.size(), keyblend::gltf::has_draco() ? "yes" : "no");
    return file->skeleton.size() == 2 ? 0 : 1;
}
