// A program outside keyblend's tree that loads a model through keyblend::assimp. Linking it needs
// assimp and zlib, which the package must bring along.
#include <keyblend/assimp.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    // A Wavefront OBJ triangle, written beside the program.
    const std::string path = std::string(argc > 0 ? argv[0] : "consumer_assimp") + ".obj";
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return 1;
    std::fputs("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", f);
    std::fclose(f);
    const auto scene = keyblend::assimp::load_scene(path);
    if (!scene) {
        std::printf("consumer_assimp: %s\n", scene.error().message.c_str());
        return 1;
    }
    std::printf("consumer_assimp: %zu joints, %zu meshes\n", scene->skeleton.size(), scene->meshes.size());
    return scene->meshes.size() == 1 && scene->meshes[0].indices.size() == 3 ? 0 : 1;
}
