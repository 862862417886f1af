// The body each file of the mix compiles with its own flags: a small skinning job through run().
#pragma once

#include "record.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace {
mix_result skin_one() {
    const std::size_t n = 64;
    std::vector<glm::vec3> pos(n), out(n);
    std::vector<std::uint16_t> joints(2 * n);
    std::vector<float> weights(2 * n, 0.5f);
    for (std::size_t v = 0; v < n; ++v) {
        pos[v] = glm::vec3(float(v), 1.0f, 2.0f);
        joints[2 * v] = 0;
        joints[2 * v + 1] = 1;
    }
    glm::mat4 palette[2] = {glm::mat4(1.0f), glm::mat4(1.0f)};
    palette[1][3] = glm::vec4(2.0f, 0.0f, 0.0f, 1.0f); // translation x + 2: the blend adds 1
    keyblend::skinning_job<std::uint16_t> job;
    job.influences = 2;
    job.joints = keyblend::make_span(joints, 2);
    job.weights = keyblend::make_span(weights, 2);
    job.in_positions = keyblend::make_span(pos);
    job.out_positions = keyblend::make_span(out);
    job.palette = {palette, 2};
    bool ok = static_cast<bool>(job.run());
    for (std::size_t v = 0; v < n; ++v) ok = ok && out[v] == glm::vec3(float(v) + 1.0f, 1.0f, 2.0f);
    mix_result r;
    r.reported = keyblend::kernel_isa();
    r.ok = ok;
    return r;
}
} // namespace
