// keyblend — definitions for blend.hpp. Included at the bottom of blend.hpp; do not include directly.
//
// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <string>

namespace keyblend {

inline status blend_matrix_additive(const clip& c, const skeleton& s, float time, float weight,
                                    std::vector<glm::mat4>& local) {
    if (!std::isfinite(weight))
        return impl::make_error(errc::non_finite,
                                "clip '" + c.name + "': blend weight is NaN or infinite");
    if (local.size() != s.size())
        return impl::make_error(errc::size_mismatch,
                                "clip '" + c.name + "': local pose has " + std::to_string(local.size()) +
                                    " matrices for " + std::to_string(s.size()) + " joints");
    status out;
    for (std::size_t i = 0; i < c.channels.size(); ++i) {
        const channel& ch = c.channels[i];
        if (ch.joint >= s.size()) {
            if (out)
                out = impl::make_error(errc::out_of_range,
                                       "clip '" + c.name + "' channel " + std::to_string(i) + " (joint " +
                                           std::to_string(ch.joint) + "): joint is out of range (" +
                                           std::to_string(s.size()) + " joints); channel skipped",
                                       i);
            continue;
        }
        if (weight == 0.0f) continue;
        const glm::mat4& bind = s.bind_local()[ch.joint];
        const glm::mat4 m = sample_channel_matrix(ch, time, s.bind_transforms()[ch.joint], bind);
        // The seed: matDiff = matAnimation - matOriginal; matDiff *= Blend; Transformation += matDiff.
        glm::mat4& target = local[ch.joint];
        for (int col = 0; col < 4; ++col)
            for (int row = 0; row < 4; ++row)
                target[col][row] += (m[col][row] - bind[col][row]) * weight;
    }
    return out;
}

} // namespace keyblend
