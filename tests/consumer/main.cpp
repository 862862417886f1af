// A program outside keyblend's tree: includes the umbrella header, samples a track, checks it.
#include <keyblend/keyblend.hpp>

#include <cstdio>

int main() {
    keyblend::track<glm::vec3, float> t{{0.0f, glm::vec3(0.0f)}, {2.0f, glm::vec3(4.0f, 0.0f, 0.0f)}};
    if (!keyblend::validate_track(t)) return 2;
    const glm::vec3 v = keyblend::sample_track(t, 0.5f);
    std::printf("consumer: x at 0.5 s = %g\n", double(v.x));
    return v.x == 1.0f ? 0 : 1;
}
