// keyblend's foot-planting example: a loaded character walks up a ramp and a flight of stairs with
// its feet planted on the ground by two-bone IK, its soles laid on the ground by aim IK, the contact
// phases and footsteps driven by a float channel and events of the clip, and its travel by root
// motion, all played through keyblend::player. Drawn with the demo's software rasterizer: the top
// row is the animation alone (feet sliding, sinking into the ramp and stairs), the bottom row the
// same frames with foot planting (the red marks are where the footstep events locked each foot).
//
// Usage: foot_planting [FILE.x] [--out FILE.png] [--size PIXELS] [--frames N]
//
// Drawn from the side and a little above (looking along -x), each frame following the character.
//
// FILE defaults to the DirectX SDK's tiny.x in the test data folder (KEYBLEND_DEFAULT_MODEL, set by
// the build). The model needs a 3D Studio Biped
// skeleton (Bip01_L_Thigh, Bip01_L_Calf, Bip01_L_Foot, Bip01_L_Toe0 and the same on the right),
// y up, and a walk as its first animation set. It prints what it measured: the walk's speed, how
// far the planted feet slide with and without IK, and how close the IK gets to its targets.
#include <keyblend/io/xfile.hpp>
#include <keyblend/keyblend.hpp>

#include "raster.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// ---------------------------------------------------------------------------------------------
// The ground: flat, a ramp, stairs, flat again, along the walking direction (world -z), y up.
// ---------------------------------------------------------------------------------------------

struct terrain {
    float base = 0.0f;    // the height of the flat ground at the start
    float forward = -1.0f; // the walking direction along z: -1 or +1

    float height(float z) const {
        const float d = forward * z; // distance walked
        if (d < 120.0f) return base;
        if (d < 360.0f) return base + 0.25f * (d - 120.0f);            // a ramp, 14 degrees
        if (d < 420.0f) return base + 60.0f;
        if (d < 600.0f) return base + 60.0f + 20.0f * std::floor((d - 420.0f) / 60.0f + 1.0f); // 3 steps
        return base + 120.0f;
    }
    glm::vec3 normal(float z) const {
        const float e = 0.5f, dh = height(z + e) - height(z - e);
        // (At a step's edge the slope is a wall: stairs count as flat.)
        if (std::fabs(dh) > 2.0f * e) return glm::vec3(0, 1, 0);
        return glm::normalize(glm::vec3(0.0f, 2.0f * e, -dh));
    }
};

// A mesh of the terrain for the rasterizer: the top surface and the side facing the camera.
void terrain_mesh(const terrain& g, float z0, float z1, float width, std::vector<glm::vec3>& p,
                  std::vector<glm::vec3>& n, std::vector<std::uint32_t>& idx) {
    const float bottom = g.base - 200.0f;
    const auto quad = [&](glm::vec3 a, glm::vec3 b, glm::vec3 c, glm::vec3 d, glm::vec3 normal) {
        const std::uint32_t first = std::uint32_t(p.size());
        for (const glm::vec3& v : {a, b, c, d}) {
            p.push_back(v);
            n.push_back(normal);
        }
        idx.insert(idx.end(), {first, first + 1, first + 2, first, first + 2, first + 3});
    };
    for (float z = z0; z < z1; z += 2.0f) {
        const float h0 = g.height(z), h1 = g.height(z + 2.0f);
        const glm::vec3 top = glm::normalize(glm::vec3(0.0f, 2.0f, h0 - h1));
        quad({-width, h0, z}, {width, h0, z}, {width, h1, z + 2.0f}, {-width, h1, z + 2.0f}, top);
        quad({width, bottom, z}, {width, bottom, z + 2.0f}, {width, h1, z + 2.0f}, {width, h0, z}, glm::vec3(1, 0, 0));
    }
}

// A small flat box (a footprint mark) at p.
void mark_mesh(glm::vec3 p, std::vector<glm::vec3>& pos, std::vector<glm::vec3>& nrm, std::vector<std::uint32_t>& idx) {
    const std::uint32_t first = std::uint32_t(pos.size());
    const float r = 9.0f;
    for (glm::vec3 d : {glm::vec3(-r, 0.6f, -r), glm::vec3(r, 0.6f, -r), glm::vec3(r, 0.6f, r), glm::vec3(-r, 0.6f, r)}) {
        pos.push_back(p + d);
        nrm.push_back(glm::vec3(0, 1, 0));
    }
    idx.insert(idx.end(), {first, first + 1, first + 2, first, first + 2, first + 3});
}

// ---------------------------------------------------------------------------------------------
// The leg rig: the joints the IK moves, found by name.
// ---------------------------------------------------------------------------------------------

struct leg {
    const char* side;
    std::size_t thigh = 0, calf = 0, foot = 0, toe = 0;
    glm::vec3 toe_axis{1, 0, 0}; // the foot's axis toward the toe, in its frame
    glm::vec3 sole_up{0, 1, 0};  // the foot's axis that points up when it stands flat
    std::size_t contact = 0;     // its contact channel in the player
    // Foot locking: where the footstep event put the foot, while it is planted.
    bool locked = false;
    glm::vec3 lock{0.0f};
    std::vector<glm::vec3> marks;
};

bool find_leg(const keyblend::skeleton& s, const char* side, leg& out) {
    const std::string p = std::string("Bip01_") + side + "_";
    const auto thigh = s.find(p + "Thigh"), calf = s.find(p + "Calf"), foot = s.find(p + "Foot"), toe = s.find(p + "Toe0");
    if (!thigh || !calf || !foot || !toe) {
        std::fprintf(stderr, "the model has no %sThigh / Calf / Foot / Toe0 joints (a Biped skeleton is needed)\n", p.c_str());
        return false;
    }
    out.side = side;
    out.thigh = *thigh;
    out.calf = *calf;
    out.foot = *foot;
    out.toe = *toe;
    // The foot's own axes, from the bind pose: toward the toe, and the one closest to model up.
    out.toe_axis = glm::normalize(glm::vec3(s.bind_local()[out.toe][3]));
    const glm::mat3 frame(s.bind_model()[out.foot]);
    float best = 0.0f;
    for (int k = 0; k < 3; ++k) {
        const float d = glm::dot(glm::normalize(frame[k]), glm::vec3(0, 1, 0));
        if (std::fabs(d) > std::fabs(best)) {
            best = d;
            out.sole_up = glm::vec3(0.0f);
            out.sole_up[k] = d > 0.0f ? 1.0f : -1.0f;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Authoring, done once: contact curves and footstep events from the walk, and its travel.
// ---------------------------------------------------------------------------------------------

// The clip's foot heights decide when each foot is planted (within 3 units of its lowest point):
// a float channel "<side>_contact" (1 planted, 0 in the air, eased over 5% of the cycle) and an
// event "<side>_down" where each contact starts. The walk is authored in place: the speed at which
// a planted foot slides back is the walking speed, and the clip's root motion (clip::motion)
// carries the character forward at that speed. Returns the speed (units per tick) and the height
// of the sole's lowest point (the flat ground, in model space).
float author_walk(keyblend::clip& walk, const keyblend::skeleton& s, leg* legs, float& ground) {
    constexpr int samples = 240;
    const float length = walk.duration;
    keyblend::sampling_context ctx;
    keyblend::local_pose pose;
    std::vector<glm::mat4> model(s.size());
    std::vector<glm::vec3> foot[2];
    for (int i = 0; i <= samples; ++i) {
        keyblend::sampling_job sample;
        sample.clip = &walk;
        sample.skeleton = &s;
        sample.time = length * float(i) / samples;
        sample.context = &ctx;
        sample.output = &pose;
        static_cast<void>(sample.run());
        keyblend::local_to_model_job hierarchy;
        hierarchy.skeleton = &s;
        hierarchy.input = &pose;
        hierarchy.output = model;
        static_cast<void>(hierarchy.run());
        for (int l = 0; l < 2; ++l) foot[l].push_back(glm::vec3(model[legs[l].foot][3]));
    }
    ground = 1e30f;
    for (int l = 0; l < 2; ++l)
        for (const glm::vec3& p : foot[l]) ground = std::min(ground, p.y);
    double slide = 0.0, slide_ticks = 0.0;
    for (int l = 0; l < 2; ++l) {
        float low = 1e30f;
        for (const glm::vec3& p : foot[l]) low = std::min(low, p.y);
        std::vector<bool> planted(samples + 1);
        for (int i = 0; i <= samples; ++i) planted[std::size_t(i)] = foot[l][std::size_t(i)].y < low + 3.0f;
        keyblend::float_channel contact;
        contact.name = std::string(legs[l].side) + "_contact";
        const int ease = samples / 20;
        for (int i = 0; i <= samples; ++i) {
            // Distance in samples to the nearest change of state, for easing.
            int nearest = ease;
            for (int k = 1; k < ease; ++k) {
                const int a = (i + k) % samples, b = (i - k + samples) % samples;
                if (planted[std::size_t(a)] != planted[std::size_t(i)] || planted[std::size_t(b)] != planted[std::size_t(i)]) {
                    nearest = k;
                    break;
                }
            }
            const float e = 0.5f + 0.5f * float(nearest) / float(ease);
            contact.keys.push_back(length * float(i) / samples, planted[std::size_t(i)] ? e : 1.0f - e);
            const bool was = planted[std::size_t((i + samples - 1) % samples)];
            if (planted[std::size_t(i)] && !was && i < samples)
                walk.events.push_back({length * float(i) / samples, std::string(legs[l].side) + "_down"});
            if (planted[std::size_t(i)] && i > 0 && planted[std::size_t(i - 1)]) {
                // The planted foot slides back along the walking direction (-z in model space).
                slide += double(foot[l][std::size_t(i)].z - foot[l][std::size_t(i - 1)].z);
                slide_ticks += double(length) / samples;
            }
        }
        walk.float_channels.push_back(std::move(contact));
    }
    std::sort(walk.events.begin(), walk.events.end(),
              [](const keyblend::clip_event& a, const keyblend::clip_event& b) { return a.time < b.time; });
    const float speed = slide_ticks > 0.0 ? float(slide / slide_ticks) : 0.0f;
    walk.motion.translation.push_back(0.0f, glm::vec3(0.0f));
    walk.motion.translation.push_back(length, glm::vec3(0.0f, 0.0f, -speed * length));
    return speed;
}

// ---------------------------------------------------------------------------------------------
// A frame: the player's pose, then the ground under the feet, then IK.
// ---------------------------------------------------------------------------------------------

struct rig {
    const keyblend::skeleton* s = nullptr;
    leg legs[2];
    float ground = 0.0f; // the flat ground's height in model space
    terrain world_ground;
    float body_lift = 0.0f;
    double worst_reach = 0.0; // the largest distance from an IK target to the foot (reached ones)
};

// Plants the feet of `pose` (posed under `placement`) on the ground; `model` is updated.
void plant_feet(rig& r, const keyblend::player& p, const glm::mat4& placement, keyblend::local_pose& pose,
                std::vector<glm::mat4>& model) {
    const keyblend::skeleton& s = *r.s;
    // The body goes up or down with the ground under the lower foot, smoothly.
    model.resize(s.size());
    keyblend::local_to_model_job hierarchy;
    hierarchy.skeleton = &s;
    hierarchy.input = &pose;
    hierarchy.root = &placement;
    hierarchy.output = model;
    static_cast<void>(hierarchy.run());
    float lift = 1e30f;
    for (const leg& l : r.legs) {
        const glm::vec3 at = l.locked ? l.lock : glm::vec3(model[l.foot][3]);
        lift = std::min(lift, r.world_ground.height(at.z) - r.world_ground.base);
    }
    r.body_lift += 0.25f * (lift - r.body_lift);
    const glm::mat4 lifted = glm::translate(glm::mat4(1.0f), glm::vec3(0.0f, r.body_lift, 0.0f)) * placement;
    hierarchy.root = &lifted;
    static_cast<void>(hierarchy.run());
    const glm::vec3 forward = glm::normalize(glm::vec3(placement * glm::vec4(0, 0, -1, 0)));
    const keyblend::ik_buffers posed{&s, model, &pose};
    for (leg& l : r.legs) {
        const float contact = p.float_channel_values()[l.contact];
        // The animated foot, kept at its height above the flat ground but over the real ground;
        // while planted, held where its footstep put it.
        const glm::vec3 animated(model[l.foot][3]);
        const float clearance = animated.y - (r.body_lift + r.ground + placement[3].y);
        glm::vec3 target = animated;
        if (l.locked) target = glm::mix(animated, l.lock, contact);
        target.y = r.world_ground.height(target.z) + r.ground + placement[3].y + clearance;

        keyblend::two_bone_ik_job ik;
        static_cast<keyblend::ik_buffers&>(ik) = posed;
        ik.start_joint = l.thigh;
        ik.mid_joint = l.calf;
        ik.end_joint = l.foot;
        ik.target = target;
        ik.pole_vector = forward; // knees forward
        ik.soften = 0.97f;
        bool reached = false;
        ik.reached = &reached;
        if (auto st = ik.run(); !st) std::fprintf(stderr, "%s\n", st.error().message.c_str());
        hierarchy.from = l.thigh; // the leg again, below the corrected thigh
        static_cast<void>(hierarchy.run());
        if (reached) r.worst_reach = std::max(r.worst_reach, double(glm::length(glm::vec3(model[l.foot][3]) - target)));

        // The sole flat on the ground while planted: the toe axis along the ground, up along its
        // normal.
        const glm::vec3 n = r.world_ground.normal(target.z);
        const glm::vec3 foot_at(model[l.foot][3]);
        glm::vec3 toe = glm::vec3(model[l.toe][3]) - foot_at;
        toe -= glm::dot(toe, n) * n;
        keyblend::aim_ik_job sole;
        static_cast<keyblend::ik_buffers&>(sole) = posed;
        sole.joint = l.foot;
        sole.target = foot_at + toe;
        sole.forward = l.toe_axis;
        sole.up = l.sole_up;
        sole.pole_vector = n;
        sole.weight = std::clamp(contact, 0.0f, 1.0f);
        if (auto st = sole.run(); !st) std::fprintf(stderr, "%s\n", st.error().message.c_str());
        hierarchy.from = l.foot;
        static_cast<void>(hierarchy.run());
    }
}

struct options {
#ifdef KEYBLEND_DEFAULT_MODEL
    std::string file = KEYBLEND_DEFAULT_MODEL;
#else
    std::string file;
#endif
    std::string out;
    int size = 256;
    int frames = 6;
};

bool parse(int argc, char** argv, options& o) {
    const std::string here = argv[0];
    const std::size_t slash = here.find_last_of('/');
    o.out = (slash == std::string::npos ? std::string() : here.substr(0, slash + 1)) + "foot_planting.png";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--out" && has_value) o.out = argv[++i];
        else if (a == "--size" && has_value) o.size = std::atoi(argv[++i]);
        else if (a == "--frames" && has_value) o.frames = std::atoi(argv[++i]);
        else if (!a.empty() && a[0] != '-') o.file = a;
        else return false;
    }
    return !o.file.empty() && o.size >= 32 && o.size <= 2048 && o.frames >= 1 && o.frames <= 16;
}

} // namespace

int main(int argc, char** argv) {
    options opt;
    if (!parse(argc, argv, opt)) {
        std::fprintf(stderr, "usage: %s [FILE.x] [--out FILE.png] [--size PIXELS (32-2048)] [--frames N (1-16)]\n", argv[0]);
        return 2;
    }
    auto loaded = keyblend::io::load_xfile(opt.file);
    if (!loaded) {
        std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
        return 1;
    }
    keyblend::io::xfile model_file = std::move(*loaded);
    const keyblend::skeleton& s = model_file.skeleton;
    if (model_file.animation_sets.empty() || model_file.animation_sets[0].clip.duration <= 0.0f) {
        std::fprintf(stderr, "%s has no animation to walk with\n", opt.file.c_str());
        return 1;
    }
    rig r;
    r.s = &s;
    if (!find_leg(s, "L", r.legs[0]) || !find_leg(s, "R", r.legs[1])) return 1;

    // 1. Authoring: contacts, footsteps and travel, then a player for the walk.
    std::vector<keyblend::clip> sets = {model_file.animation_sets[0].clip};
    keyblend::clip& walk = sets[0];
    walk.name = "walk";
    const float speed = author_walk(walk, s, r.legs, r.ground);
    if (auto st = keyblend::validate_clip(walk, s); !st) {
        std::fprintf(stderr, "%s\n", st.error().message.c_str());
        return 1;
    }
    auto created = keyblend::player::create(s, sets);
    if (!created) {
        std::fprintf(stderr, "%s\n", created.error().message.c_str());
        return 1;
    }
    keyblend::player player = std::move(*created);
    for (leg& l : r.legs) {
        const auto& names = player.float_channel_names();
        l.contact = std::size_t(std::find(names.begin(), names.end(), std::string(l.side) + "_contact") - names.begin());
    }
    std::printf("%s: %zu joints; walk of %.0f ticks, %zu footsteps per cycle, %.1f units per cycle\n", opt.file.c_str(),
                s.size(), double(walk.duration), walk.events.size(), double(speed * walk.duration));

    // 2. Play: 60 updates per second for two cycles; the character starts on the flat ground.
    const double tick_step = double(walk.ticks_per_second) / 60.0;
    const double total = 2.0 * double(walk.duration);
    r.world_ground.base = 0.0f;
    r.world_ground.forward = speed > 0.0f ? -1.0f : 1.0f;
    keyblend::rigid_transform placement;
    placement.translation = glm::vec3(0.0f, -r.ground, 0.0f); // the soles on the ground at y = 0
    if (!player.set_animation("walk", 0.0)) return 1;

    // Buffers: posed meshes per frame, for the two rows (animation only, planted).
    const auto& mesh = model_file.meshes;
    struct posed {
        std::vector<std::vector<glm::vec3>> positions, normals;
        glm::vec3 center{0.0f};
        std::vector<glm::vec3> marks;
    };
    std::vector<posed> rows[2];
    keyblend::local_pose pose;
    std::vector<glm::mat4> joint_model(s.size()), palette;
    keyblend::local_to_model_job hierarchy;
    hierarchy.skeleton = &s;
    hierarchy.input = &pose;
    hierarchy.output = joint_model;
    std::vector<int> snapshots;
    const int updates = int(total / tick_step);
    for (int f = 0; f < opt.frames; ++f) snapshots.push_back(int(double(updates) * (f + 0.5) / opt.frames));
    double slide_raw = 0.0, slide_planted = 0.0;
    glm::vec3 last_raw[2], last_planted[2];
    for (int u = 0; u <= updates; ++u) {
        const double t = u * tick_step;
        if (auto st = player.update_animation(t); !st) {
            std::fprintf(stderr, "%s\n", st.error().message.c_str());
            return 1;
        }
        placement = keyblend::compose(placement, player.root_motion());
        const glm::mat4 place = keyblend::to_matrix(placement);
        // Footsteps: lock the foot where it comes down (on the ground under it).
        pose = player.pose();
        hierarchy.root = &place;
        static_cast<void>(hierarchy.run());
        for (const keyblend::played_event& e : player.events())
            for (leg& l : r.legs)
                if (e.name == std::string(l.side) + "_down") {
                    l.lock = glm::vec3(joint_model[l.foot][3]);
                    l.locked = true;
                    l.marks.push_back(glm::vec3(l.lock.x, r.world_ground.height(l.lock.z), l.lock.z));
                }
        for (leg& l : r.legs)
            if (player.float_channel_values()[l.contact] <= 0.0f) l.locked = false;
        // Row 0: the animation alone. Row 1: planted.
        for (int row = 0; row < 2; ++row) {
            pose = player.pose();
            if (row == 1) plant_feet(r, player, place, pose, joint_model);
            else static_cast<void>(hierarchy.run());
            // How far the planted feet slide.
            for (int l = 0; l < 2; ++l) {
                const glm::vec3 at(joint_model[r.legs[l].foot][3]);
                glm::vec3& last = row == 0 ? last_raw[l] : last_planted[l];
                if (u > 0 && player.float_channel_values()[r.legs[l].contact] >= 1.0f) {
                    const double d = glm::length(glm::vec2(at.x - last.x, at.z - last.z));
                    (row == 0 ? slide_raw : slide_planted) = std::max(row == 0 ? slide_raw : slide_planted, d);
                }
                last = at;
            }
            if (std::find(snapshots.begin(), snapshots.end(), u) == snapshots.end()) continue;
            posed out;
            out.center = glm::vec3(place[3].x, r.world_ground.height(place[3].z) + 230.0f, place[3].z);
            for (const auto& m : mesh) {
                std::vector<glm::vec3> positions = m.positions, normals = m.normals;
                if (m.is_skinned()) {
                    palette.resize(m.skin.bones.size());
                    keyblend::palette_job pj;
                    pj.model = joint_model;
                    pj.bones = m.skin.bones;
                    pj.output = palette;
                    static_cast<void>(pj.run());
                    keyblend::skinning_job<std::uint16_t> job;
                    job.influences = m.skin.influences_per_vertex;
                    job.joints = keyblend::make_span(m.skin.bone_indices, m.skin.influences_per_vertex);
                    job.weights = keyblend::make_span(m.skin.weights, m.skin.influences_per_vertex);
                    job.in_positions = keyblend::make_span(m.positions);
                    job.out_positions = keyblend::make_span(positions);
                    if (!m.normals.empty()) {
                        job.in_normals = keyblend::make_span(m.normals);
                        job.out_normals = keyblend::make_span(normals);
                    }
                    job.palette = palette;
                    job.weight_tolerance = 1e-2f;
                    if (auto st = job.run(); !st) {
                        std::fprintf(stderr, "%s\n", st.error().message.c_str());
                        return 1;
                    }
                }
                out.positions.push_back(std::move(positions));
                out.normals.push_back(std::move(normals));
            }
            if (row == 1)
                for (const leg& l : r.legs) out.marks.insert(out.marks.end(), l.marks.begin(), l.marks.end());
            rows[row].push_back(std::move(out));
        }
    }
    std::printf("planted feet slide up to %.2f units per update with the animation alone, %.4f with foot planting\n",
                slide_raw, slide_planted);
    const glm::mat4* bind = s.bind_model().data();
    const double leg_length = double(glm::length(glm::vec3(bind[r.legs[0].calf][3] - bind[r.legs[0].thigh][3])) +
                                     glm::length(glm::vec3(bind[r.legs[0].foot][3] - bind[r.legs[0].calf][3])));
    std::printf("IK: reached targets within %.2e units (%.1e of the leg's length); the character climbed %.0f units\n",
                r.worst_reach, r.worst_reach / leg_length, double(r.body_lift));
    if (r.worst_reach > 1e-5 * leg_length) {
        std::fprintf(stderr, "the IK missed a reachable target by more than 1e-5 of the leg's length\n");
        return 1;
    }

    // 3. Draw: each frame from the side (looking along -x), following the character.
    std::vector<glm::vec3> ground_p, ground_n;
    std::vector<std::uint32_t> ground_i;
    terrain_mesh(r.world_ground, -1000.0f, 1000.0f, 120.0f, ground_p, ground_n, ground_i);
    const int columns = opt.frames;
    raster::image sheet(opt.size * columns, opt.size * 2);
    for (int row = 0; row < 2; ++row)
        for (int f = 0; f < opt.frames && f < int(rows[row].size()); ++f) {
            const posed& shot = rows[row][std::size_t(f)];
            raster::camera cam;
            cam.view = glm::lookAt(shot.center + glm::vec3(1500, 450, 0), shot.center, glm::vec3(0, 1, 0));
            cam.lo = glm::vec3(-280.0f, -280.0f, -1900.0f);
            cam.hi = glm::vec3(280.0f, 280.0f, -1200.0f);
            raster::image picture(opt.size, opt.size, row == 0 ? glm::vec3(0.16f, 0.13f, 0.13f) : glm::vec3(0.12f, 0.14f, 0.17f));
            raster::draw_mesh(picture, cam, ground_p, ground_n, ground_i, glm::vec3(0.55f, 0.62f, 0.5f));
            std::vector<glm::vec3> mp, mn;
            std::vector<std::uint32_t> mi;
            for (const glm::vec3& m : shot.marks) mark_mesh(m, mp, mn, mi);
            raster::draw_mesh(picture, cam, mp, mn, mi, glm::vec3(0.9f, 0.2f, 0.15f));
            for (std::size_t i = 0; i < mesh.size(); ++i)
                raster::draw_mesh(picture, cam, shot.positions[i], shot.normals[i], mesh[i].indices, glm::vec3(0.85f, 0.7f, 0.55f));
            sheet.paste(picture, f * opt.size, row * opt.size);
        }
    if (std::string error; !sheet.write_png(opt.out, error)) {
        std::fprintf(stderr, "cannot write %s: %s\n", opt.out.c_str(), error.c_str());
        return 1;
    }
    std::printf("wrote %s: top, the animation alone; bottom, with foot planting\n", opt.out.c_str());
    return 0;
}
