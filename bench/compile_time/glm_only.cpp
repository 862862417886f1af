// Compile-time probe: GLM and its quaternions only (what any GLM user already pays).
#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

glm::vec3 probe(const glm::quat& q, const glm::vec3& v) { return q * v; }
