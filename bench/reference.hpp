// The plain references the benchmarks compare keyblend with: what a programmer writes first with
// the standard library and GLM.
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <vector>

namespace kbbench {

template <class V>
struct ref_key {
    float time;
    V value;
};

/// The value of `keys` (sorted, not empty) at `t`: std::upper_bound, then `mix(a, b, alpha)`
/// between the keys around t; the first / last key outside them.
template <class V, class Mix>
V reference_sample(const std::vector<ref_key<V>>& keys, float t, Mix mix) {
    const auto it = std::upper_bound(keys.begin(), keys.end(), t,
                                     [](float time, const ref_key<V>& k) { return time < k.time; });
    if (it == keys.begin()) return keys.front().value;
    if (it == keys.end()) return keys.back().value;
    const ref_key<V>& a = it[-1];
    const ref_key<V>& b = *it;
    return mix(a.value, b.value, (t - a.time) / (b.time - a.time));
}

} // namespace kbbench
