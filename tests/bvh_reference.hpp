// A reading of BVH files written for the tests, independent of keyblend's reader: whitespace-
// separated words (one-word names, well-formed files only), and the pose of a joint at a frame
// evaluated from the format's definition — the rotation channels as elementary rotation matrices
// multiplied in the order the CHANNELS line lists them (the first outermost), in double; a
// position channel replacing the OFFSET's component on its axis.
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <cstddef>
#include <fstream>
#include <istream>
#include <sstream>
#include <string>
#include <vector>

namespace kbtest {

struct bvh_file {
    struct joint {
        std::string name;
        int parent = -1;
        glm::dvec3 offset{0.0};
        std::vector<std::string> channels;
        std::size_t first_value = 0; // index of its first channel in a frame's values
    };
    std::vector<joint> joints; // ROOT and JOINT only: End Sites are not joints here
    std::vector<std::vector<double>> frames;
    double frame_time = 0.0;

    explicit bvh_file(const std::string& path) {
        std::ifstream in(path);
        read(in);
    }
    explicit bvh_file(std::istream& in) { read(in); }

    /// The rotation by `degrees` about the X, Y or Z axis, right-handed, as a matrix (GLM:
    /// m[column][row]): Rx = [1 0 0; 0 c -s; 0 s c], Ry = [c 0 s; 0 1 0; -s 0 c],
    /// Rz = [c -s 0; s c 0; 0 0 1] (rows).
    static glm::dmat3 axis_matrix(char axis, double degrees) {
        // (Whole turns taken out first, exactly: fmod is exact, and cos of a huge argument is not.)
        const double a = std::fmod(degrees, 360.0) * 3.14159265358979323846 / 180.0;
        const double c = std::cos(a), s = std::sin(a);
        glm::dmat3 m(1.0);
        const int i = axis == 'X' ? 1 : axis == 'Y' ? 2 : 0; // the two other axes, i and k
        const int k = axis == 'X' ? 2 : axis == 'Y' ? 0 : 1;
        m[i][i] = c;
        m[k][k] = c;
        m[k][i] = -s; // row i, column k
        m[i][k] = s;  // row k, column i
        return m;
    }

    /// Joint j's local rotation at frame f: its rotation channels' matrices, in the order listed.
    glm::dmat3 rotation_matrix(std::size_t j, std::size_t f) const {
        glm::dmat3 r(1.0);
        for (std::size_t c = 0; c < joints[j].channels.size(); ++c) {
            const std::string& ch = joints[j].channels[c];
            if (ch.size() == 9 && ch.compare(1, 8, "rotation") == 0)
                r = r * axis_matrix(ch[0], frames[f][joints[j].first_value + c]);
        }
        return r;
    }
    glm::dquat rotation(std::size_t j, std::size_t f) const { return glm::quat_cast(rotation_matrix(j, f)); }

    /// Joint j's local translation at frame f: its position channels, else its offset.
    glm::dvec3 translation(std::size_t j, std::size_t f) const {
        glm::dvec3 t = joints[j].offset;
        for (std::size_t c = 0; c < joints[j].channels.size(); ++c) {
            const std::string& ch = joints[j].channels[c];
            const double v = frames[f][joints[j].first_value + c];
            if (ch == "Xposition") t.x = v;
            if (ch == "Yposition") t.y = v;
            if (ch == "Zposition") t.z = v;
        }
        return t;
    }

private:
    void read(std::istream& in) {
        std::string word;
        std::vector<int> open; // the joint each '{' opened (-2 for End Site)
        std::size_t values = 0;
        int pending = -1;
        while (in >> word && word != "MOTION") {
            if (word == "ROOT" || word == "JOINT") {
                joint j;
                in >> j.name;
                j.parent = -1;
                for (auto it = open.rbegin(); it != open.rend(); ++it)
                    if (*it >= 0) {
                        j.parent = *it;
                        break;
                    }
                joints.push_back(j);
                pending = int(joints.size()) - 1;
            } else if (word == "End") {
                in >> word; // Site
                pending = -2;
            } else if (word == "{") {
                open.push_back(pending);
            } else if (word == "}") {
                open.pop_back();
            } else if (word == "OFFSET") {
                glm::dvec3 o;
                in >> o.x >> o.y >> o.z;
                if (!open.empty() && open.back() >= 0) joints[std::size_t(open.back())].offset = o;
            } else if (word == "CHANNELS") {
                std::size_t n;
                in >> n;
                joint& j = joints.back();
                j.first_value = values;
                for (std::size_t i = 0; i < n; ++i) {
                    in >> word;
                    j.channels.push_back(word);
                }
                values += n;
            }
        }
        std::size_t count = 0;
        in >> word >> count >> word >> word >> frame_time; // Frames: N Frame Time: t
        frames.assign(count, std::vector<double>(values));
        for (auto& f : frames)
            for (double& v : f) in >> v;
    }
};

} // namespace kbtest
