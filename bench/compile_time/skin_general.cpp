// Compile-time probe: one skinning job (uint16_t joints, 4 influences, positions + normals) run
// through the general run(), which must handle any configuration it is handed at run time.
// skin_configured.cpp compiles this file with the configuration stated (KEYBLEND_PROBE_RUN).
#include <keyblend/skin.hpp>

#include <cstdint>
#include <vector>

keyblend::status probe(const std::vector<glm::vec3>& positions, const std::vector<glm::vec3>& normals,
                       const std::vector<std::uint16_t>& joints, const std::vector<float>& weights,
                       const std::vector<glm::mat4>& palette, std::vector<glm::vec3>& out_positions,
                       std::vector<glm::vec3>& out_normals) {
    keyblend::skinning_job<std::uint16_t> job;
    job.influences = 4;
    job.joints = keyblend::make_span(joints, 4);
    job.weights = keyblend::make_span(weights, 4);
    job.in_positions = keyblend::make_span(positions);
    job.out_positions = keyblend::make_span(out_positions);
    job.in_normals = keyblend::make_span(normals);
    job.out_normals = keyblend::make_span(out_normals);
    job.palette = palette;
#if defined(KEYBLEND_PROBE_RUN)
    return job.KEYBLEND_PROBE_RUN();
#else
    return job.run();
#endif
}
