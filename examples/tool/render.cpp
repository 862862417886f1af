// keyblend render: samples and blends the sets the command line names, skins the meshes on the
// CPU and draws them headless (examples/raster.hpp) from one camera framed on the whole animation,
// into a PNG contact sheet (libpng) or a looping GIF (giflib).
//
// SPDX-License-Identifier: MIT
#include "keyblend_tool.hpp"

#include "../posed_mesh.hpp"
#include "../raster.hpp"

#include <fcntl.h>
#include <gif_lib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace tool {
namespace {

using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

const glm::vec3 skin_color(0.85f, 0.7f, 0.55f), rigid_color(0.6f, 0.7f, 0.85f);
const glm::vec3 bone_color(1.0f, 0.82f, 0.25f), joint_color(1.0f, 0.4f, 0.2f);

/// The joints the skeleton drawing shows: the skins' bones when a mesh is skinned (helpers such as
/// a biped's footsteps are not drawn), else the joints the clips animate and the leaves hanging
/// from them (a BVH file's end sites), else every joint. For each, the joint its line starts
/// from: its nearest shown ancestor (or none).
struct skeleton_drawing {
    std::vector<std::size_t> joints;
    std::vector<std::size_t> from; // parallel to joints; joints.size() when it starts nowhere
};

skeleton_drawing bones_to_draw(const model& m, const std::vector<const keyblend::clip*>& clips) {
    const keyblend::skeleton& s = *m.skeleton;
    std::vector<bool> shown(s.size(), false);
    m.for_each_mesh([&](const auto& mesh) {
        for (const auto& b : mesh.skin.bones)
            if (b.joint < s.size()) shown[b.joint] = true;
    });
    const auto none = [&] { return std::find(shown.begin(), shown.end(), true) == shown.end(); };
    if (none()) {
        for (const keyblend::clip* c : clips)
            for (const keyblend::channel& ch : c->channels)
                if (ch.joint < s.size()) shown[ch.joint] = true;
        for (std::size_t j = 0; j < s.size(); ++j) // leaves under a shown joint (BVH end sites)
            if (s.subtree_end(j) == j + 1 && s.parent(j) >= 0 && shown[std::size_t(s.parent(j))]) shown[j] = true;
    }
    if (none()) shown.assign(s.size(), true);
    // Each joint's nearest shown ancestor, parents first: one pass, whatever the depth.
    std::vector<std::size_t> nearest(s.size(), s.size());
    skeleton_drawing d;
    for (std::size_t j = 0; j < s.size(); ++j) {
        if (s.parent(j) >= 0) {
            const std::size_t p = std::size_t(s.parent(j));
            nearest[j] = shown[p] ? p : nearest[p];
        }
        if (!shown[j]) continue;
        d.joints.push_back(j);
        d.from.push_back(nearest[j]);
    }
    return d;
}

/// Writes frames as a looping GIF with one palette for all of them (no flicker between frames),
/// `delay` hundredths of a second each.
bool write_gif(const std::string& path, const std::vector<raster::image>& frames, int delay, std::string& error) {
    const int w = frames.at(0).width(), h = frames.at(0).height();
    const std::size_t pixels = std::size_t(w) * std::size_t(h);
    if (pixels * frames.size() > std::size_t(64) << 20) {
        error = "too many pixels for one GIF (frames x width x height > 64 M): fewer --frames or a smaller --size";
        return false;
    }
    std::vector<GifByteType> r(pixels * frames.size()), g(r.size()), b(r.size()), indices(r.size());
    for (std::size_t f = 0; f < frames.size(); ++f)
        for (std::size_t i = 0; i < pixels; ++i) {
            r[f * pixels + i] = frames[f].rgb()[3 * i];
            g[f * pixels + i] = frames[f].rgb()[3 * i + 1];
            b[f * pixels + i] = frames[f].rgb()[3 * i + 2];
        }
    GifColorType palette[256] = {};
    int colors = 256;
    if (GifQuantizeBuffer(unsigned(w), unsigned(h) * unsigned(frames.size()), &colors, r.data(), g.data(), b.data(),
                          indices.data(), palette) == GIF_ERROR) {
        error = "giflib could not reduce the frames to 256 colours";
        return false;
    }
    // (Opened here rather than by EGifOpenFileName, which creates files readable by their owner
    // only; giflib closes the descriptor.)
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        error = std::strerror(errno);
        return false;
    }
    int code = 0;
    GifFileType* gif = EGifOpenFileHandle(fd, &code);
    if (!gif) {
        close(fd);
        error = GifErrorString(code);
        return false;
    }
    ColorMapObject* map = GifMakeMapObject(256, palette);
    EGifSetGifVersion(gif, true);
    bool ok = map && EGifPutScreenDesc(gif, w, h, 8, 0, map) == GIF_OK;
    // Loop forever (the NETSCAPE2.0 application extension every viewer understands).
    static const GifByteType loop[3] = {1, 0, 0};
    ok = ok && EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
         EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") == GIF_OK && EGifPutExtensionBlock(gif, 3, loop) == GIF_OK &&
         EGifPutExtensionTrailer(gif) == GIF_OK;
    for (std::size_t f = 0; ok && f < frames.size(); ++f) {
        GraphicsControlBlock gcb{};
        gcb.DisposalMode = DISPOSE_DO_NOT;
        gcb.DelayTime = delay;
        gcb.TransparentColor = NO_TRANSPARENT_COLOR;
        GifByteType extension[4];
        EGifGCBToExtension(&gcb, extension);
        ok = EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, extension) == GIF_OK &&
             EGifPutImageDesc(gif, 0, 0, w, h, false, nullptr) == GIF_OK;
        for (int y = 0; ok && y < h; ++y)
            ok = EGifPutLine(gif, indices.data() + f * pixels + std::size_t(y) * std::size_t(w), w) == GIF_OK;
    }
    if (!ok) error = GifErrorString(gif->Error);
    GifFreeMapObject(map);
    if (EGifCloseFile(gif, &code) != GIF_OK && ok) {
        error = GifErrorString(code);
        ok = false;
    }
    return ok;
}

/// True when the set moves something: a plain clip's channels, or what a package's compressed
/// clip stores (its plain clip, model::clips, has no channels).
bool has_keys(const model& m, const keyblend::clip& c) {
    if (!c.channels.empty()) return true;
    const keyblend::compressed_clip* cc = compressed_of(m, c);
    if (!cc) return false;
    for (std::size_t j = 0; j < cc->joint_count(); ++j)
        if (cc->animates(j)) return true;
    return cc->morph_weight_count() != 0;
}

/// The file's format as the first line names it: the importer is named beside it.
std::string format_name(const model& m) {
    if (m.x) return "DirectX .X";
    if (m.b) return "BVH";
    if (m.package) return "keyblend package";
#ifdef KEYBLEND_TOOL_GLTF
    if (m.g) return "glTF 2.0";
#endif
    // Read by assimp: the file's extension says which of its formats.
    std::string ext = extension_of(m.path);
    if (ext.empty()) return "no extension";
    for (char& c : ext)
        if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
    return ext;
}

std::string seconds_label(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f s", s);
    return text;
}

/// One frame's pose: every joint's model matrix and every mesh posed.
struct frame_pose {
    std::vector<glm::mat4> local, model;
    std::vector<float> weights; // morph weights
    std::vector<examples::posed_mesh> meshes;
};

} // namespace

int render(const options& given, const model& m, double load_ms) {
    options o = given;
    const keyblend::skeleton& s = *m.skeleton;

    // What plays: --set, --blend, or the first set with keys (nothing: the bind pose).
    std::vector<const keyblend::clip*> clips;
    if (o.set) clips.push_back(&find_clip(m, *o.set));
    for (const auto& [name, weight] : o.blend) clips.push_back(&find_clip(m, name));
    if (!o.set && o.blend.empty())
        for (const keyblend::clip* c : m.clips)
            if (has_keys(m, *c)) {
                o.blend.emplace_back(c->name, 1.0f); // bind + (set - bind): the set itself
                clips.push_back(c);
                break;
            }
    double first = 0.0, last = 0.0;
    for (std::size_t i = 0; i < clips.size(); ++i) {
        const double tps = double(clips[i]->ticks_per_second);
        const double a = double(keyblend::first_key_time(*clips[i])) / tps, b = double(clips[i]->duration) / tps;
        first = i == 0 ? a : std::min(first, a);
        last = i == 0 ? b : std::max(last, b);
    }
    const double t0 = o.from_seconds.value_or(first);
    const double t1 = std::max(o.to_seconds.value_or(std::max(last, t0)), t0);
    const bool gif = extension_of(o.out) == "gif";
    int n = o.frames.value_or(gif ? std::clamp(int(std::lround((t1 - t0) * 20.0)), 1, 200) : 8);
    if (t1 == t0 && !o.frames) n = 1;
    // A contact sheet shows both ends; an animation loops, so its last frame is not the first again.
    const auto time_of = [&](int f) {
        if (n == 1) return t0;
        return gif ? t0 + (t1 - t0) * f / n : t0 + (t1 - t0) * f / (n - 1);
    };

    std::size_t mesh_count = 0, vertices = 0;
    m.for_each_mesh([&](const auto& mesh) {
        ++mesh_count;
        vertices += mesh.positions.size();
    });
    const bool skeleton_only = mesh_count == 0;
    const bool draw_bones = o.bones || skeleton_only;
    const skeleton_drawing bones = bones_to_draw(m, clips);

    const bool progress = o.progress || isatty(fileno(stderr));
    auto last_progress = clock_type::now();
    const auto show_progress = [&](const char* what, int f) {
        if (!progress || (f + 1 < n && ms_since(last_progress) < 100.0)) return;
        last_progress = clock_type::now();
        std::fprintf(stderr, "\rkeyblend: %s frame %d/%d", what, f + 1, n);
        if (f + 1 == n) std::fputc('\n', stderr);
        std::fflush(stderr);
    };

    // Poses a frame: the local matrices as `pose` computes them, the hierarchy, the meshes.
    frame_pose pose;
    pose.meshes.resize(mesh_count);
    double pose_ms = 0.0, skin_ms = 0.0;
    const bool left_handed = is_left_handed(m);
    const auto pose_frame = [&](int f, bool timed) -> bool {
        auto start = clock_type::now();
        if (keyblend::status st = local_matrices(m, o, time_of(f), true, pose.local); !st) {
            std::fprintf(stderr, "keyblend: %s\n", st.error().message.c_str());
            return false;
        }
        model_matrices(s, pose.local, pose.model);
        morph_weights(m, o, time_of(f), true, pose.weights);
        if (const std::optional<std::string> bad = non_finite_joint(s, pose.local, pose.model)) {
            std::fprintf(stderr, "keyblend: %s: the pose is not finite: %s\n", o.file.c_str(), bad->c_str());
            return false;
        }
        if (timed) pose_ms += ms_since(start);
        start = clock_type::now();
        std::size_t i = 0;
        bool ok = true;
        m.for_each_mesh([&](const auto& mesh) {
            if (!ok) return;
            if (keyblend::status st = examples::pose_mesh(mesh, pose.model, pose.meshes[i++], nullptr,
                                                          mesh_morph_weights(m, mesh, pose.weights));
                !st) {
                std::fprintf(stderr, "keyblend: mesh '%s': %s\n", mesh.name.c_str(), st.error().message.c_str());
                ok = false;
            }
        });
        // A left-handed model (a .X file) is drawn mirrored into the camera's right-handed space,
        // as Direct3D shows it (and as `convert` writes it into glTF).
        if (left_handed) {
            for (examples::posed_mesh& pm : pose.meshes) {
                for (glm::vec3& p : pm.positions) p.z = -p.z;
                for (glm::vec3& v : pm.normals) v.z = -v.z;
            }
            for (glm::mat4& mm : pose.model) mm[3].z = -mm[3].z; // (only the joints' positions are drawn)
        }
        if (timed) skin_ms += ms_since(start);
        return ok;
    };

    // 1. Framing: the bounds of everything drawn over all frames, and a camera on their corners.
    auto start = clock_type::now();
    glm::vec3 lo(INFINITY), hi(-INFINITY);
    for (int f = 0; f < n; ++f) {
        if (!pose_frame(f, false)) return exit_file;
        for (const examples::posed_mesh& pm : pose.meshes)
            for (const glm::vec3& p : pm.positions)
                if (keyblend::is_finite(p)) {
                    lo = glm::min(lo, p);
                    hi = glm::max(hi, p);
                }
        if (skeleton_only) // (over a mesh, far joints such as cameras must not shrink the mesh)
            for (std::size_t j : bones.joints) {
                const glm::vec3 p(pose.model[j][3]);
                if (!keyblend::is_finite(p)) continue;
                lo = glm::min(lo, p);
                hi = glm::max(hi, p);
            }
        show_progress("framing", f);
    }
    std::vector<glm::vec3> corners;
    if (lo.x <= hi.x)
        for (int c = 0; c < 8; ++c)
            corners.emplace_back(c & 1 ? hi.x : lo.x, c & 2 ? hi.y : lo.y, c & 4 ? hi.z : lo.z);
    const raster::camera cam = raster::frame_points(corners, 25.0f, 12.0f);
    const double framing_ms = ms_since(start);

    // 2. Each frame posed again and drawn.
    const float aspect = float(o.width) / float(o.height);
    const float line_width = std::max(1.5f, float(std::min(o.width, o.height)) / (skeleton_only ? 90.0f : 140.0f));
    const int label_scale = std::min(o.width, o.height) >= 384 ? 2 : 1;
    std::vector<raster::image> pictures;
    double draw_ms = 0.0;
    for (int f = 0; f < n; ++f) {
        if (!pose_frame(f, true)) return exit_file;
        start = clock_type::now();
        raster::image picture(o.width, o.height);
        std::size_t i = 0;
        m.for_each_mesh([&](const auto& mesh) {
            const examples::posed_mesh& pm = pose.meshes[i++];
            raster::draw_mesh(picture, cam, pm.positions, pm.normals, mesh.indices,
                              mesh.is_skinned() ? skin_color : rigid_color);
        });
        if (draw_bones) {
            // Over the mesh: not depth tested. A skeleton alone: depth tested, nearer is brighter.
            std::vector<glm::vec3> ndc(s.size());
            for (std::size_t j : bones.joints) ndc[j] = cam.to_ndc(glm::vec3(pose.model[j][3]), aspect);
            const auto shade = [&](glm::vec3 c, float z) { return skeleton_only ? c * (1.0f - 0.5f * std::clamp(z, 0.0f, 1.0f)) : c; };
            for (std::size_t k = 0; k < bones.joints.size(); ++k) {
                const std::size_t j = bones.joints[k], from = bones.from[k];
                if (from < s.size())
                    picture.line(ndc[from], ndc[j], line_width, shade(bone_color, ndc[j].z), skeleton_only);
            }
            for (std::size_t j : bones.joints)
                picture.disc(ndc[j], line_width * 0.9f, shade(joint_color, ndc[j].z), skeleton_only);
        }
        picture.text(4 * label_scale, o.height - 12 * label_scale, seconds_label(time_of(f)), glm::vec3(1.0f), label_scale);
        pictures.push_back(std::move(picture));
        draw_ms += ms_since(start);
        show_progress("drawing", f);
    }

    // 3. Encoding.
    start = clock_type::now();
    std::string error, layout;
    bool written = false;
    if (gif) {
        const double frame_seconds = n > 1 ? (t1 - t0) / n : 0.0;
        const int delay = n > 1 ? std::max(2, int(std::lround(frame_seconds * 100.0))) : 0;
        written = write_gif(o.out, pictures, delay, error);
        layout = std::to_string(o.width) + "x" + std::to_string(o.height) + " GIF of " +
                 (n > 1 ? std::to_string(n) + " frames, " + std::to_string(delay * 10) + " ms each, looping"
                        : std::string("1 frame"));
    } else {
        const int columns = n < 4 ? n : std::max(4, int(std::ceil(std::sqrt(double(n)))));
        const int rows = (n + columns - 1) / columns;
        const int title = 14 * label_scale;
        if (std::size_t(columns) * std::size_t(o.width) > 32768 || std::size_t(rows) * std::size_t(o.height) > 32768) {
            std::fprintf(stderr, "keyblend: a %dx%d sheet of %dx%d frames is too large; fewer --frames or a smaller --size\n",
                         columns, rows, o.width, o.height);
            return exit_usage;
        }
        raster::image sheet(columns * o.width, rows * o.height + title, glm::vec3(0.07f, 0.07f, 0.09f));
        std::string caption = m.path.substr(m.path.find_last_of('/') == std::string::npos ? 0 : m.path.find_last_of('/') + 1);
        if (clips.empty()) caption += ", bind pose";
        else if (given.blend.empty()) caption += ", set '" + clips[0]->name + "'";
        for (std::size_t b = 0; b < given.blend.size(); ++b) {
            char weight[32];
            std::snprintf(weight, sizeof weight, " x %g", double(given.blend[b].second));
            caption += (b == 0 ? ", " : " + ") + ("'" + given.blend[b].first + "'") + weight;
        }
        sheet.text(3 * label_scale, 2 * label_scale, caption, glm::vec3(0.9f), label_scale);
        for (int f = 0; f < n; ++f) sheet.paste(pictures[std::size_t(f)], (f % columns) * o.width, title + (f / columns) * o.height);
        written = sheet.write_png(o.out, error);
        layout = std::to_string(sheet.width()) + "x" + std::to_string(sheet.height()) + " PNG contact sheet, " +
                 (n > 1 ? std::to_string(n) + " frames" : std::string("1 frame")) + " of " + std::to_string(o.width) +
                 "x" + std::to_string(o.height) + " in a " + std::to_string(columns) + " x " + std::to_string(rows) + " grid";
    }
    const double encode_ms = ms_since(start);
    if (!written) {
        std::fprintf(stderr, "keyblend: cannot write %s: %s\n", o.out.c_str(), error.c_str());
        return exit_file;
    }

    std::printf("keyblend render: %s (%s, read by %s): %zu joints, %zu meshes (%zu vertices)%s\n", m.path.c_str(),
                format_name(m).c_str(), m.importer_name, s.size(), mesh_count, vertices,
                skeleton_only ? ", no mesh: the skeleton is drawn" : draw_bones ? ", skeleton drawn over it" : "");
    for (const keyblend::clip* c : clips)
        std::printf("  set '%s': %g ticks at %g ticks/s%s\n", c->name.c_str(), double(c->duration),
                    double(c->ticks_per_second), c->ticks_per_second_is_default ? " (none in the file: the default)" : "");
    if (clips.empty()) std::printf("  no animation set: the bind pose\n");
    if (n > 1) std::printf("  %d frames from %.3f s to %.3f s\n", n, t0, t1);
    else std::printf("  1 frame at %.3f s\n", t0);
    std::printf("  time: load %.1f ms, framing (every frame posed once) %.1f ms; per frame: pose %.3f ms, "
                "skin %.3f ms, draw %.2f ms; encode %.1f ms\n",
                load_ms, framing_ms, pose_ms / n, skin_ms / n, draw_ms / n, encode_ms);
    std::printf("wrote %s: %s\n", o.out.c_str(), layout.c_str());
    return exit_ok;
}

} // namespace tool
