// Samples a small clip and prints it: the four matrix keys of the classic "timed keyframe"
// example (0, 400, 800, 1200 ms), looped the way the classic code loops (`elapsed % (last + 1)`),
// next to a translation/rotation track sampled in seconds.
//
// Copy this into a project: it needs only keyblend's headers and GLM.
#include <keyblend/keyblend.hpp>

#include <glm/gtc/type_ptr.hpp>

#include <cstdint>
#include <cstdio>

namespace {

void print_matrix(const char* label, const glm::mat4& m) {
    // One row per line, the way the classic text prints matrices (D3DX memory order).
    std::printf("%s\n", label);
    for (int row = 0; row < 4; ++row)
        std::printf("  % 10.6f % 10.6f % 10.6f % 10.6f\n", double(m[row][0]), double(m[row][1]),
                    double(m[row][2]), double(m[row][3]));
}

} // namespace

int main() {
    // Keys in D3D memory order load straight into glm::mat4: the same transform, no transpose.
    const float keys[4][16] = {
        {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
        {0.000796f, 1, 0, 0, -1, 0.000796f, 0, 0, 0, 0, 1, 0, 50, 0, 0, 1},
        {-0.999999f, 0.001593f, 0, 0, -0.001593f, -0.999999f, 0, 0, 0, 0, 1, 0, 25, 25, 0, 1},
        {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
    };
    const std::uint32_t times[4] = {0, 400, 800, 1200};

    keyblend::matrix_track<std::uint32_t> element_wise; // what D3DX and the classic code do
    keyblend::matrix_track<std::uint32_t> rigid(keyblend::interpolation::decomposed);
    for (int i = 0; i < 4; ++i) {
        element_wise.push_back(times[i], glm::make_mat4(keys[i]));
        rigid.push_back(times[i], glm::make_mat4(keys[i]));
    }
    if (const keyblend::status s = keyblend::validate_track(element_wise); !s) {
        std::fprintf(stderr, "bad track: %s\n", s.error().message.c_str());
        return 1;
    }

    std::printf("Matrix keys at 0, 400, 800, 1200 ms, looping with period length + 1:\n\n");
    keyblend::track_cursor cursor;
    for (std::uint32_t elapsed : {0u, 200u, 400u, 600u, 1000u, 1200u, 1401u}) {
        const std::uint32_t t =
            keyblend::wrap_time(elapsed, element_wise.last_time(), keyblend::wrap_mode::loop_inclusive);
        const glm::mat4 m = keyblend::sample_track(element_wise, t, cursor);
        const glm::mat4 r = keyblend::sample_track(rigid, t);
        char label[160];
        std::snprintf(label, sizeof label,
                      "elapsed %4u ms -> clip time %4u ms: x-axis length %.4f element-wise, "
                      "%.4f decomposed",
                      elapsed, t, double(glm::length(glm::vec3(m[0]))),
                      double(glm::length(glm::vec3(r[0]))));
        print_matrix(label, m);
    }

    // The same idea with separate tracks, in seconds.
    keyblend::track<glm::vec3> position{{0.0f, glm::vec3(0, 0, 0)}, {1.0f, glm::vec3(0, 2, 0)}};
    keyblend::track<glm::quat> rotation{
        {0.0f, glm::identity<glm::quat>()},
        {1.0f, glm::angleAxis(glm::radians(90.0f), glm::vec3(0, 0, 1))}};
    std::printf("\nTranslation + rotation tracks (seconds, looping):\n");
    for (float seconds : {0.0f, 0.25f, 0.5f, 1.0f, 1.75f}) {
        const float t = keyblend::wrap_time(seconds, 1.0f, keyblend::wrap_mode::loop);
        keyblend::transform pose;
        pose.translation = keyblend::sample_track(position, t);
        pose.rotation = keyblend::sample_track(rotation, t);
        const glm::vec3 tip = glm::vec3(keyblend::to_matrix(pose) * glm::vec4(1, 0, 0, 1));
        std::printf("  %.2f s -> t = %.2f: translation (%.2f, %.2f, %.2f), angle %5.1f deg, "
                    "tip of a unit bone (%.3f, %.3f, %.3f)\n",
                    double(seconds), double(t), double(pose.translation.x),
                    double(pose.translation.y), double(pose.translation.z),
                    double(glm::degrees(glm::angle(pose.rotation))), double(tip.x), double(tip.y),
                    double(tip.z));
    }
    return 0;
}
