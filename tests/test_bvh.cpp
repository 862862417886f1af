// keyblend/bvh.hpp: the BVH reader against files generated here (every order and subset of
// channels, against rotations evaluated from the format's definition in bvh_reference.hpp), every
// class of bad input in both modes, hierarchies a million joints deep, and the CMU file 01_01.bvh
// of ../shared/data/formats against its own numbers.
#include <keyblend/bvh.hpp>
#include <keyblend/keyblend.hpp>

#include "bvh_reference.hpp"
#include "helpers.hpp"
#include "job_helpers.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <memory>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

using namespace keyblend;
using kbtest::contains;
using kbtest::local_to_model;
using kbtest::sample_local_matrices;
namespace kio = keyblend::io;

namespace {

// --- a BVH writer for the tests ------------------------------------------------------------------

struct gen_joint {
    std::string name;
    int parent = -1; // index into gen_file::joints; parents come first
    std::string offset = "0 0 0";
    std::vector<std::string> channels; // as written after CHANNELS n
    bool end_site = false;
    bool write_channels = true;
};

/// A BVH file as text: the joints in pre-order (braces from the parents), then the rows.
struct gen_file {
    std::vector<gen_joint> joints;
    std::vector<std::vector<std::string>> rows;
    std::string frames;                  // empty: the number of rows
    std::string frame_time = "0.0333333";
    std::string eol = "\n";
    std::string indent = "\t";
    std::string separator = " ";          // between a row's values

    std::string text() const {
        std::string out = "HIERARCHY" + eol;
        std::vector<int> open; // iterative: the writer must handle any depth too
        const auto pad = [&] {
            std::string p;
            // (bounded indentation: deep test files would be quadratic in size otherwise)
            for (std::size_t i = 0; i < std::min<std::size_t>(open.size(), 8); ++i) p += indent;
            return p;
        };
        for (std::size_t j = 0; j < joints.size(); ++j) {
            const gen_joint& g = joints[j];
            while (!open.empty() && open.back() != g.parent) {
                open.pop_back();
                out += pad() + "}" + eol;
            }
            if (g.end_site)
                out += pad() + "End Site" + eol;
            else
                out += pad() + (g.parent < 0 ? "ROOT " : "JOINT ") + g.name + eol;
            out += pad() + "{" + eol;
            open.push_back(int(j));
            out += pad() + "OFFSET " + g.offset + eol;
            if (!g.end_site && g.write_channels) {
                out += pad() + "CHANNELS " + std::to_string(g.channels.size());
                for (const std::string& c : g.channels) out += " " + c;
                out += eol;
            }
        }
        while (!open.empty()) {
            open.pop_back();
            out += pad() + "}" + eol;
        }
        out += "MOTION" + eol;
        out += "Frames: " + (frames.empty() ? std::to_string(rows.size()) : frames) + eol;
        out += "Frame Time: " + frame_time + eol;
        for (const auto& r : rows) {
            for (std::size_t i = 0; i < r.size(); ++i) out += (i ? separator : "") + r[i];
            out += eol;
        }
        return out;
    }

    std::size_t value_count() const {
        std::size_t n = 0;
        for (const gen_joint& g : joints) n += g.end_site ? 0 : g.channels.size();
        return n;
    }
};

std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return buf;
}

/// Rows of random values: rotations in [-180, 180] degrees, positions in [-50, 50].
void random_rows(gen_file& f, std::size_t count, kbtest::rng& r) {
    std::vector<std::string> kinds;
    for (const gen_joint& g : f.joints)
        if (!g.end_site)
            for (const std::string& c : g.channels) kinds.push_back(c);
    f.rows.assign(count, {});
    for (auto& row : f.rows)
        for (const std::string& k : kinds)
            row.push_back(number_text(k.find("rotation") != std::string::npos ? r.uniform(-180, 180)
                                                                              : r.uniform(-50, 50)));
}

/// Hips (6 channels) > Chest (3) > Head (3) > End Site; Hips > Leg (3) > End Site.
gen_file small_file() {
    gen_file f;
    f.joints = {
        {"Hips", -1, "0 0 0", {"Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"}},
        {"Chest", 0, "0 5.25 0", {"Zrotation", "Xrotation", "Yrotation"}},
        {"Head", 1, "0 4.5 0.125", {"Zrotation", "Xrotation", "Yrotation"}},
        {"", 2, "0 2 0", {}, true},
        {"Leg", 0, "1.5 -2 0", {"Zrotation", "Xrotation", "Yrotation"}},
        {"", 4, "0 -6 0", {}, true},
    };
    kbtest::rng r(7);
    random_rows(f, 5, r);
    return f;
}

kio::load_options strict() {
    kio::load_options o;
    o.mode = kio::parse_mode::strict;
    return o;
}

result<kio::bvh> load(const std::string& text, const kio::load_options& o = {}) {
    return kio::load_bvh_memory(text.data(), text.size(), o, "test.bvh");
}

/// The warning whose message contains `part`, or null.
const kio::load_warning* warning_with(const kio::bvh& b, const std::string& part) {
    for (const kio::load_warning& w : b.warnings)
        if (contains(w.message, part)) return &w;
    return nullptr;
}

/// Every message names its place (the few that concern the whole file excepted).
void check_located(const std::string& message) {
    CAPTURE(message);
    CHECK(message.rfind("test.bvh: ", 0) == 0);
    const bool whole_file = contains(message, "holds no word") || contains(message, "max_warnings");
    if (!whole_file) CHECK(contains(message, ": line "));
    if (!whole_file) CHECK(contains(message, ", column "));
    CHECK(message.size() < 2000);
}

/// What the reader promises of any result.
void check_promises(const kio::bvh& b, const kio::load_options& o = {}) {
    const skeleton& s = b.skeleton;
    REQUIRE(b.joints.size() == s.size());
    REQUIRE(static_cast<bool>(validate_clip(b.clip, s)));
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(s.parent(j) < joint_index(j));
    for (const kio::bvh_column& c : b.columns) CHECK(c.joint < s.size());
    for (const channel& ch : b.clip.channels) {
        if (!ch.rotation.empty()) CHECK(ch.rotation.size() == b.frame_count);
        if (!ch.translation.empty()) CHECK(ch.translation.size() == b.frame_count);
    }
    CHECK(b.clip.duration == last_key_time(b.clip));
    CHECK(b.clip.ticks_per_second > 0.0f);
    CHECK(b.warnings.size() <= o.max_warnings);
    for (const kio::load_warning& w : b.warnings) check_located(w.message);
}

/// The channel of the clip that animates joint j, or null.
const channel* channel_of(const kio::bvh& b, std::size_t j) {
    for (const channel& ch : b.clip.channels)
        if (ch.joint == j) return &ch;
    return nullptr;
}

double max_diff(const glm::dmat3& a, const glm::dmat3& b) {
    double m = 0.0;
    for (int c = 0; c < 3; ++c)
        for (int r = 0; r < 3; ++r) m = std::max(m, std::fabs(a[c][r] - b[c][r]));
    return m;
}

/// A float as std::from_chars reads the text: what a position key must be, exactly.
float float_of(const std::string& text) {
    float v = 0.0f;
    std::from_chars(text.data(), text.data() + text.size(), v);
    return v;
}

/// Compares every key of a loaded file with the reference reading of its text: rotations within
/// the documented 1e-6 per matrix element, translations exactly the text's float. Returns the
/// largest rotation difference. `texts` are the rows as written (for exact position floats).
double compare_with_reference(const kio::bvh& b, const kbtest::bvh_file& ref,
                              const std::vector<std::vector<std::string>>* texts = nullptr) {
    double worst = 0.0;
    std::size_t file_joint = 0;
    for (std::size_t j = 0; j < b.skeleton.size(); ++j) {
        if (b.joints[j].end_site) continue;
        const auto& rj = ref.joints[file_joint++];
        REQUIRE(b.skeleton.name(j) == rj.name);
        bool rotates = false, moves = false;
        for (const std::string& c : rj.channels) (contains(c, "rotation") ? rotates : moves) = true;
        const channel* ch = channel_of(b, j);
        if (!rotates && !moves) {
            CHECK(ch == nullptr);
            continue;
        }
        REQUIRE(ch != nullptr);
        CHECK(ch->rotation.size() == (rotates ? ref.frames.size() : 0));
        CHECK(ch->translation.size() == (moves ? ref.frames.size() : 0));
        const std::size_t jr = file_joint - 1;
        for (std::size_t f = 0; f < ref.frames.size(); ++f) {
            if (rotates) {
                CHECK(ch->rotation.time(f) == float(f));
                const glm::dmat3 got = glm::mat3_cast(glm::dquat(ch->rotation.value(f)));
                worst = std::max(worst, max_diff(got, ref.rotation_matrix(jr, f)));
            }
            if (moves) {
                CHECK(ch->translation.time(f) == float(f));
                glm::vec3 expect = glm::vec3(ref.joints[jr].offset);
                for (std::size_t c = 0; c < rj.channels.size(); ++c) {
                    const std::string& name = rj.channels[c];
                    if (contains(name, "position")) {
                        const std::size_t axis = std::size_t(name[0] - 'X');
                        expect[glm::length_t(axis)] =
                            texts ? float_of((*texts)[f][rj.first_value + c])
                                  : float(ref.frames[f][rj.first_value + c]);
                    }
                }
                CHECK(kbtest::bit_equal(ch->translation.value(f), expect));
            }
        }
    }
    return worst;
}

} // namespace

// ================================================================================================
// What a valid file gives
// ================================================================================================

TEST_CASE("bvh: the hierarchy, End Sites as joints, bind pose, columns and clip timing") {
    const gen_file f = small_file();
    const result<kio::bvh> r = load(f.text(), strict());
    REQUIRE_MESSAGE(r, r.error().message);
    const kio::bvh& b = *r;
    check_promises(b);
    CHECK(b.warnings.empty());
    const skeleton& s = b.skeleton;
    CHECK(s.names() == std::vector<std::string>{"Hips", "Chest", "Head", "EndSite_Head", "Leg", "EndSite_Leg"});
    CHECK(s.parents() == std::vector<joint_index>{-1, 0, 1, 2, 0, 4});
    // File order is parent-first: the skeleton keeps it.
    for (std::size_t j = 0; j < s.size(); ++j) CHECK(s.joint_of_source()[j] == j);
    CHECK(b.joints[3].end_site);
    CHECK_FALSE(b.joints[2].end_site);
    CHECK(b.joints[2].offset == glm::vec3(0.0f, 4.5f, 0.125f));
    CHECK(b.joints[2].line == 10);
    // Bind pose: translate(OFFSET), no rotation.
    CHECK(s.bind_local()[2] == glm::translate(glm::mat4(1.0f), glm::vec3(0.0f, 4.5f, 0.125f)));
    CHECK(s.bind_model()[3][3] == glm::vec4(0.0f, 11.75f, 0.125f, 1.0f));
    // Columns: the rows' layout, joint by joint.
    REQUIRE(b.columns.size() == 15);
    CHECK(b.columns[0].joint == 0);
    CHECK(b.columns[0].channel == kio::bvh_channel::x_position);
    CHECK(b.columns[3].channel == kio::bvh_channel::z_rotation);
    CHECK(b.columns[6].joint == 1);
    CHECK(b.columns[14].joint == 4);
    CHECK(b.columns[14].channel == kio::bvh_channel::y_rotation);
    CHECK(std::string(kio::to_string(b.columns[14].channel)) == "Yrotation");
    // Clip: frames as ticks, the rate from Frame Time, duration the last frame.
    const clip& c = b.clip;
    CHECK(c.name == "Motion");
    CHECK(b.frame_count == 5);
    CHECK(b.declared_frame_count == 5);
    CHECK(b.frame_time == 0.0333333);
    CHECK(c.ticks_per_second == float(1.0 / 0.0333333));
    CHECK_FALSE(c.ticks_per_second_is_default);
    CHECK(c.duration == 4.0f);
    CHECK(c.channels.size() == 4); // End Sites have none
    std::istringstream in(f.text());
    const kbtest::bvh_file ref(in);
    CHECK(compare_with_reference(b, ref, &f.rows) <= 1e-6);
}

TEST_CASE("bvh: the format's example — Zrotation then Xrotation is Rz * Rx, right-handed, degrees") {
    // CHANNELS 2 Zrotation Xrotation with z = 90, x = 90: the point (0, 1, 0) turns about X
    // first, to (0, 0, 1), which the turn about Z leaves in place. (The other order would give
    // (-1, 0, 0).) Position channels replace the OFFSET on their axis only.
    gen_file f;
    f.joints = {{"a", -1, "1 2 3", {"Zrotation", "Xrotation", "Yposition"}}};
    f.rows = {{"90", "90", "-7.5"}, {"0", "-90", "0.1"}};
    const result<kio::bvh> r = load(f.text(), strict());
    REQUIRE_MESSAGE(r, r.error().message);
    const channel& ch = r->clip.channels.at(0);
    const glm::vec3 p = ch.rotation.value(0) * glm::vec3(0.0f, 1.0f, 0.0f);
    CHECK(kbtest::max_abs_diff(p, glm::vec3(0.0f, 0.0f, 1.0f)) <= 1e-6f);
    const glm::vec3 q = ch.rotation.value(1) * glm::vec3(0.0f, 1.0f, 0.0f);
    CHECK(kbtest::max_abs_diff(q, glm::vec3(0.0f, 0.0f, -1.0f)) <= 1e-6f);
    CHECK(kbtest::bit_equal(ch.translation.value(0), glm::vec3(1.0f, -7.5f, 3.0f)));
    CHECK(kbtest::bit_equal(ch.translation.value(1), glm::vec3(1.0f, 0.1f, 3.0f)));
    // The local matrix an animated joint samples to: translate(T) * R.
    const glm::mat4 local = sample_channel_matrix(ch, 0.0f, r->skeleton.bind_transforms()[0], r->skeleton.bind_local()[0]);
    const glm::vec4 moved = local * glm::vec4(0.0f, 1.0f, 0.0f, 1.0f);
    CHECK(kbtest::max_abs_diff(moved, glm::vec4(1.0f, -7.5f, 4.0f, 1.0f)) <= 1e-6f);
}

TEST_CASE("bvh: every order and subset of the six channels, against the format's definition") {
    // One joint per order of all six channels (720), then one per non-empty subset in a random
    // order (63), each under the one before, with random values: every key against the matrices
    // of bvh_reference.hpp (rotations within 1e-6 per element, positions exactly the text's float).
    std::vector<std::string> six = {"Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"};
    gen_file f;
    std::vector<std::string> order = six;
    std::sort(order.begin(), order.end());
    do {
        f.joints.push_back({"p" + std::to_string(f.joints.size()), int(f.joints.size()) - 1, "0.5 -1 2", order});
    } while (std::next_permutation(order.begin(), order.end()));
    kbtest::rng r(11);
    for (unsigned mask = 1; mask < 64; ++mask) {
        std::vector<std::string> subset;
        for (unsigned i = 0; i < 6; ++i)
            if (mask & (1u << i)) subset.push_back(six[i]);
        std::shuffle(subset.begin(), subset.end(), r.engine());
        f.joints.push_back({"s" + std::to_string(mask), int(f.joints.size()) - 1, "1 2 3", subset});
    }
    random_rows(f, 6, r);
    // Angles beyond a turn reduce exactly, large and negative ones too.
    f.rows[5][3] = "720.5";
    f.rows[5][4] = "-1000000.25";
    f.rows[5][5] = "1e300";
    const result<kio::bvh> b = load(f.text(), strict());
    REQUIRE_MESSAGE(b, b.error().message);
    check_promises(*b);
    CHECK(b->skeleton.size() == 720 + 63);
    std::istringstream in(f.text());
    const kbtest::bvh_file ref(in);
    REQUIRE(ref.joints.size() == 783);
    CHECK(compare_with_reference(*b, ref, &f.rows) <= 1e-6);
}

TEST_CASE("bvh: consecutive rotation keys are in one hemisphere, the first with w >= 0") {
    gen_file f;
    f.joints = {{"a", -1, "0 0 0", {"Yrotation"}}};
    for (int deg = -720; deg <= 720; deg += 35) f.rows.push_back({std::to_string(deg)});
    const result<kio::bvh> r = load(f.text(), strict());
    REQUIRE(r);
    const rotation_track<float>& t = r->clip.channels.at(0).rotation;
    CHECK(t.value(0).w >= 0.0f);
    for (std::size_t k = 1; k < t.size(); ++k) CHECK(quat_dot(t.value(k - 1), t.value(k)) >= 0.0f);
}

TEST_CASE("bvh: CRLF, lone CR and tab-separated files read as the LF file does") {
    gen_file f = small_file();
    const result<kio::bvh> lf = load(f.text(), strict());
    REQUIRE(lf);
    const auto same = [&](const kio::bvh& b) {
        CHECK(b.skeleton.names() == lf->skeleton.names());
        CHECK(b.skeleton.bind_local() == lf->skeleton.bind_local());
        REQUIRE(b.clip.channels.size() == lf->clip.channels.size());
        for (std::size_t i = 0; i < b.clip.channels.size(); ++i) {
            CHECK(b.clip.channels[i].rotation.values() == lf->clip.channels[i].rotation.values());
            CHECK(b.clip.channels[i].translation.values() == lf->clip.channels[i].translation.values());
        }
        CHECK(b.joints[2].line == lf->joints[2].line);
    };
    for (const char* eol : {"\r\n", "\r"}) {
        f.eol = eol;
        const result<kio::bvh> r = load(f.text(), strict());
        REQUIRE_MESSAGE(r, r.error().message);
        same(*r);
    }
    f = small_file();
    f.indent = "\t\t";
    f.separator = "\t";
    const result<kio::bvh> tabs = load(f.text(), strict());
    REQUIRE_MESSAGE(tabs, tabs.error().message);
    same(*tabs);
    // A UTF-8 byte order mark, trailing spaces and blank lines change nothing either.
    std::string text = "\xEF\xBB\xBF" + small_file().text();
    text.insert(text.find("MOTION"), "   \n\n");
    const result<kio::bvh> bom = load(text, strict());
    REQUIRE_MESSAGE(bom, bom.error().message);
    CHECK(bom->skeleton.names() == lf->skeleton.names());
    // Line numbers count CRLF and lone CR line ends once each: a bad value on line 34.
    f = small_file();
    f.rows[1][2] = "oops";
    for (const char* eol : {"\n", "\r\n", "\r"}) {
        f.eol = eol;
        const result<kio::bvh> bad = load(f.text(), strict());
        REQUIRE_FALSE(bad);
        CHECK(contains(bad.error().message, "test.bvh: line 34, column "));
    }
}

TEST_CASE("bvh: names are the rest of the line, braces may touch them, CHANNELS 0 is valid") {
    const std::string text =
        "HIERARCHY\nROOT My Hips{\n OFFSET 0 0 0\n CHANNELS 1 Yrotation\n JOINT  left arm  \n {OFFSET 1 0 0\n"
        "  CHANNELS 0\n  End Site{OFFSET 1 0 0}\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.5\n45\n";
    const result<kio::bvh> r = load(text, strict());
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(r->skeleton.names() == std::vector<std::string>{"My Hips", "left arm", "EndSite_left arm"});
    CHECK(r->clip.channels.size() == 1);
    CHECK(r->clip.ticks_per_second == 2.0f);
    CHECK(r->clip.duration == 0.0f);
}

// ================================================================================================
// Bad input: each class in strict mode (a located error) and lenient mode (a documented repair)
// ================================================================================================

TEST_CASE("bvh bad input: not a BVH file, missing files") {
    for (const std::string& text : {std::string(), std::string("\n  \n"), std::string("hierarchy\nROOT a"),
                                   std::string("\x89PNG\r\n")}) {
        for (const kio::load_options& o : {kio::load_options{}, strict()}) {
            const result<kio::bvh> r = load(text, o);
            REQUIRE_FALSE(r);
            CHECK(r.error().code == errc::parse_error);
            CHECK(contains(r.error().message, "not a BVH file"));
            check_located(r.error().message);
        }
    }
    const result<kio::bvh> missing = kio::load_bvh("/nonexistent/walk.bvh");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == errc::io_error);
    CHECK(contains(missing.error().message, "/nonexistent/walk.bvh: cannot open: "));
    const result<kio::bvh> folder = kio::load_bvh(".");
    REQUIRE_FALSE(folder);
    CHECK(folder.error().code == errc::io_error);
    CHECK(folder.error().message.rfind(".: cannot ", 0) == 0);
}

TEST_CASE("bvh bad input: every truncation of a file") {
    const gen_file f = small_file();
    const std::string full = f.text();
    const std::size_t last_value = full.rfind(' ') + 1; // where the last row's last value starts
    std::size_t loaded = 0;
    for (std::size_t n = 0; n < full.size(); ++n) {
        const std::string cut = full.substr(0, n);
        CAPTURE(n);
        const result<kio::bvh> s = load(cut, strict());
        if (s) {
            // Only a cut inside the last number leaves a complete file (with a shorter number).
            CHECK(n > last_value);
            check_promises(*s);
        } else {
            check_located(s.error().message);
        }
        const result<kio::bvh> l = load(cut);
        if (!l) {
            CHECK(n < std::string("HIERARCHY").size()); // only a cut header is not a BVH file
            continue;
        }
        ++loaded;
        check_promises(*l);
        CHECK(l->frame_count <= 5);
        if (n > last_value) CHECK(l->frame_count == 5);
    }
    CHECK(loaded == full.size() - std::string("HIERARCHY").size());
    // Cut in the middle of the hierarchy: the open joints are closed, the clip has no frames.
    const result<kio::bvh> mid = load(full.substr(0, full.find("JOINT Leg")));
    REQUIRE(mid);
    CHECK(mid->skeleton.size() == 4);
    CHECK(mid->frame_count == 0);
    CHECK(warning_with(*mid, "joints are still open at the end of the file"));
    CHECK(warning_with(*mid, "the file ends before MOTION; the clip has no frames"));
    CHECK(mid->clip.ticks_per_second_is_default);
}

TEST_CASE("bvh bad input: a Frames count that disagrees with the rows") {
    gen_file f = small_file();
    SUBCASE("fewer rows than Frames says") {
        f.frames = "7";
        const result<kio::bvh> s = load(f.text(), strict());
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::parse_error);
        CHECK(contains(s.error().message, "line 38, column 1: the file holds 5 frame rows, and 'Frames:' says 7"));
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        CHECK(l->frame_count == 5);
        CHECK(l->declared_frame_count == 7);
        const kio::load_warning* w = warning_with(*l, "the clip has the 5 frames there are");
        REQUIRE(w);
        CHECK(w->action == kio::warning_action::repaired);
    }
    SUBCASE("more rows than Frames says") {
        f.frames = "3";
        const result<kio::bvh> s = load(f.text(), strict());
        REQUIRE_FALSE(s);
        CHECK(contains(s.error().message, "line 36, column 1: a frame row past the 3 frames 'Frames:' declares"));
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        CHECK(l->frame_count == 5);
        CHECK(l->clip.duration == 4.0f);
        CHECK(warning_with(*l, "the file holds 5 frame rows, and 'Frames:' says 3"));
    }
    SUBCASE("4294967295 and other absurd counts allocate nothing from them") {
        for (const char* n : {"4294967295", "18446744073709551615", "99999999999999999999999", "-1", "many"}) {
            CAPTURE(n);
            f.frames = n;
            CHECK_FALSE(load(f.text(), strict()));
            const result<kio::bvh> l = load(f.text());
            REQUIRE(l);
            check_promises(*l);
            CHECK(l->frame_count == 5);
            CHECK(l->clip.channels.at(0).rotation.values().capacity() <= 1000); // bounded by the file
        }
    }
}

TEST_CASE("bvh bad input: Frame Time 0, NaN, 1e39, negative, infinite, not a number, missing") {
    struct expect {
        const char* text;
        errc code;
    };
    for (const expect e : {expect{"0", errc::invalid_argument}, {"nan", errc::non_finite},
                           {"1e39", errc::invalid_argument}, {"-0.0333", errc::invalid_argument},
                           {"inf", errc::non_finite}, {"1e400", errc::non_finite}, {"1e-12", errc::invalid_argument},
                           {"fast", errc::parse_error}, {"", errc::parse_error}}) {
        CAPTURE(e.text);
        gen_file f = small_file();
        f.frame_time = e.text;
        const result<kio::bvh> s = load(f.text(), strict());
        REQUIRE_FALSE(s);
        CHECK(s.error().code == e.code);
        CHECK(contains(s.error().message, "test.bvh: line 32, column "));
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        check_promises(*l);
        CHECK(l->clip.ticks_per_second == 30.0f);
        CHECK(l->clip.ticks_per_second_is_default);
        const kio::load_warning* w = warning_with(*l, "the clip has 30 frames per second");
        REQUIRE(w);
        CHECK(w->action == kio::warning_action::repaired);
        CHECK(l->frame_count == 5);
    }
    // The lines missing altogether.
    std::string text = small_file().text();
    text.erase(text.find("Frames:"), text.find("\n", text.find("Frame Time:")) - text.find("Frames:") + 1);
    CHECK_FALSE(load(text, strict()));
    const result<kio::bvh> l = load(text);
    REQUIRE(l);
    CHECK(l->frame_count == 5);
    CHECK(warning_with(*l, "expected 'Frames:' after MOTION"));
    CHECK(warning_with(*l, "expected 'Frame Time:'"));
}

TEST_CASE("bvh bad input: values that are not numbers, NaN, infinite or too large") {
    gen_file f = small_file();
    const std::vector<std::string> before_hips = f.rows[1];
    SUBCASE("not a number: the frame before's value") {
        f.rows[2][1] = "abc";     // Hips Yposition
        f.rows[2][4] = "1,5";     // Hips Xrotation
        f.rows[0][7] = "--3";     // Chest Xrotation, first frame: no rotation
        const result<kio::bvh> s = load(f.text(), strict());
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::parse_error);
        CHECK(contains(s.error().message, "line 33, column "));
        CHECK(contains(s.error().message, "frame 0, Xrotation of joint 'Chest' (line 6): '--3' is not a number"));
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        check_promises(*l);
        const kio::load_warning* w = warning_with(*l, "is not a number; replaced by the frame before's value (3 such problems");
        REQUIRE(w);
        CHECK(w->action == kio::warning_action::repaired);
        const channel& hips = l->clip.channels[0];
        CHECK(hips.translation.value(2).y == hips.translation.value(1).y);
        // The repaired Xrotation of frame 2 is frame 1's; the other angles are frame 2's own.
        f.rows[2][4] = f.rows[1][4];
        f.rows[2][1] = f.rows[1][1];
        f.rows[0][7] = "0";
        const result<kio::bvh> fixed = load(f.text(), strict());
        REQUIRE(fixed);
        for (std::size_t c = 0; c < 4; ++c) {
            CHECK(l->clip.channels[c].rotation.values() == fixed->clip.channels[c].rotation.values());
            CHECK(l->clip.channels[c].translation.values() == fixed->clip.channels[c].translation.values());
        }
    }
    SUBCASE("NaN and infinities, as C and as MSVC write them") {
        for (const char* bad : {"nan", "-nan", "inf", "-infinity", "1.#IND", "-1.#QNAN", "1.#INF00"}) {
            CAPTURE(bad);
            f = small_file();
            f.rows[3][5] = bad; // Hips Yrotation
            const result<kio::bvh> s = load(f.text(), strict());
            REQUIRE_FALSE(s);
            CHECK(s.error().code == errc::non_finite);
            const result<kio::bvh> l = load(f.text());
            REQUIRE(l);
            check_promises(*l);
            CHECK(warning_with(*l, "is not finite; replaced by the frame before's value"));
        }
    }
    SUBCASE("a position too large for a float; an angle that large is a rotation") {
        f.rows[1][0] = "1e39";
        const result<kio::bvh> s = load(f.text(), strict());
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::non_finite);
        CHECK(contains(s.error().message, "'1e39' is not a finite float"));
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        CHECK(l->clip.channels[0].translation.value(1).x == l->clip.channels[0].translation.value(0).x);
        f = small_file();
        f.rows[1][3] = "1e39";
        CHECK(load(f.text(), strict()));
    }
    SUBCASE("short and long rows") {
        f.rows[1].resize(10);
        f.rows[3].push_back("1");
        f.rows[3].push_back("2");
        const result<kio::bvh> s = load(f.text(), strict());
        REQUIRE_FALSE(s);
        CHECK(contains(s.error().message, "frame 1 has 10 of the hierarchy's 15 values"));
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        check_promises(*l);
        CHECK(l->frame_count == 5);
        CHECK(warning_with(*l, "the missing values are the frame before's"));
        const kio::load_warning* extra = warning_with(*l, "frame 3 has more than the hierarchy's 15 values");
        REQUIRE(extra);
        CHECK(extra->action == kio::warning_action::dropped);
        // Frame 1's Leg keeps frame 0's angles.
        CHECK(l->clip.channels[3].rotation.value(1) == l->clip.channels[3].rotation.value(0));
    }
}

TEST_CASE("bvh bad input: channels — unknown names, duplicates, 7 channels, counts, none") {
    gen_file f = small_file();
    SUBCASE("an unknown channel is kept in the layout and its values ignored") {
        f.joints[1].channels = {"Zrotation", "Xscale", "Xrotation", "Yrotation"};
        kbtest::rng r(3);
        random_rows(f, 5, r);
        for (auto& row : f.rows) row[7] = "whatever";
        const result<kio::bvh> s = load(f.text(), strict());
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::not_found);
        CHECK(contains(s.error().message, "line 9, column 24: unknown channel 'Xscale'"));
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        check_promises(*l);
        CHECK(l->columns.size() == 16);
        CHECK(l->columns[7].channel == kio::bvh_channel::ignored);
        CHECK(l->columns[7].joint == 1);
        CHECK(warning_with(*l, "unknown channel 'Xscale'")->action == kio::warning_action::dropped);
        CHECK(l->warnings.size() == 1); // its "whatever" values are not checked
        // The others are read as if it were not there.
        gen_file without = f;
        without.joints[1].channels = {"Zrotation", "Xrotation", "Yrotation"};
        for (auto& row : without.rows) row.erase(row.begin() + 7);
        std::istringstream in(without.text());
        CHECK(compare_with_reference(*l, kbtest::bvh_file(in), &without.rows) <= 1e-6);
    }
    SUBCASE("a channel twice in one joint: the second is ignored") {
        f.joints[2].channels = {"Zrotation", "Xrotation", "Zrotation", "Yrotation"};
        kbtest::rng r(5);
        random_rows(f, 5, r);
        const result<kio::bvh> s = load(f.text(), strict());
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::duplicate);
        CHECK(contains(s.error().message, "Zrotation a second time in joint 'Head' (line 10)"));
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        CHECK(l->columns[11].channel == kio::bvh_channel::ignored);
        gen_file without = f;
        without.joints[2].channels = {"Zrotation", "Xrotation", "Yrotation"};
        for (auto& row : without.rows) row.erase(row.begin() + 11);
        std::istringstream in(without.text());
        CHECK(compare_with_reference(*l, kbtest::bvh_file(in), &without.rows) <= 1e-6);
    }
    SUBCASE("7 channels: a seventh name, or a count of 7 over 6 names") {
        f.joints[0].channels.push_back("Xrotation");
        kbtest::rng r(9);
        random_rows(f, 5, r);
        CHECK(load(f.text(), strict()).error().code == errc::duplicate);
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        CHECK(l->columns.size() == 16);
        std::string text = small_file().text();
        text.replace(text.find("CHANNELS 6"), 10, "CHANNELS 7");
        const result<kio::bvh> s = load(text, strict());
        REQUIRE_FALSE(s);
        CHECK(contains(s.error().message, "line 5, column 2: CHANNELS says 7, and 6 channel names follow on its line"));
        const result<kio::bvh> counted = load(text);
        REQUIRE(counted);
        CHECK(counted->columns.size() == 15);
        CHECK(counted->frame_count == 5);
        CHECK(warning_with(*counted, "the 6 names are read")->action == kio::warning_action::repaired);
    }
    SUBCASE("a joint without a CHANNELS line has no channels") {
        f.joints[2].write_channels = false;
        f.joints[2].channels.clear();
        kbtest::rng r(13);
        random_rows(f, 5, r);
        const result<kio::bvh> s = load(f.text(), strict());
        REQUIRE_FALSE(s);
        CHECK(contains(s.error().message, "line 10, column 3: joint 'Head' (line 10) has no CHANNELS line"));
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        CHECK(l->columns.size() == 12);
        CHECK(channel_of(*l, 2) == nullptr);
        CHECK(warning_with(*l, "has no CHANNELS line; it has no channels"));
    }
    SUBCASE("a CHANNELS count that is not a number") {
        std::string text = small_file().text();
        text.replace(text.find("CHANNELS 6"), 10, "CHANNELS six");
        CHECK(load(text, strict()).error().message.find("expected the number of channels after CHANNELS") !=
              std::string::npos);
        const result<kio::bvh> l = load(text);
        REQUIRE(l);
        CHECK(l->columns.size() == 15);
        CHECK(l->columns[0].channel == kio::bvh_channel::x_position); // "six" was the count
    }
}

TEST_CASE("bvh bad input: the hierarchy's structure") {
    const std::string good = small_file().text();
    // Strict mode fails with the message up to its consequence; lenient mode warns with it all.
    const auto both = [](const std::string& text, const std::string& message) {
        CAPTURE(text);
        const result<kio::bvh> s = load(text, strict());
        REQUIRE_FALSE(s);
        CHECK(contains(s.error().message, message.substr(0, message.find("; "))));
        check_located(s.error().message);
        const result<kio::bvh> l = load(text);
        REQUIRE_MESSAGE(l, l.error().message);
        check_promises(*l);
        CHECK(warning_with(*l, message));
        return *l;
    };
    SUBCASE("an empty hierarchy") {
        const kio::bvh b = both("HIERARCHY\nMOTION\nFrames: 0\nFrame Time: 0.1\n",
                                "line 2, column 1: the hierarchy declares no joint (no ROOT); the skeleton is empty");
        CHECK(b.skeleton.empty());
        CHECK(b.warnings.at(0).action == kio::warning_action::note);
        const kio::bvh rows = both("HIERARCHY\nMOTION\nFrames: 2\nFrame Time: 0.1\n1 2\n3\n", "no ROOT");
        CHECK(rows.frame_count == 0);
        CHECK(warning_with(rows, "a frame row holds values, and the hierarchy has no channels"));
    }
    SUBCASE("a missing or stray brace, a missing name, OFFSET or Site") {
        std::string t = good;
        t.replace(t.find("{", t.find("JOINT Chest")), 1, " ");
        both(t, "expected '{' after joint 'Chest' (line 6), found 'OFFSET'; the joint is opened here");
        t = good;
        t.insert(t.find("MOTION"), "}\n");
        both(t, "'}' closes no joint");
        t = good;
        t.replace(t.find("JOINT Chest"), 11, "JOINT");
        const kio::bvh unnamed = both(t, "JOINT without a name; named 'unnamed_joint_1'");
        CHECK(unnamed.skeleton.name(1) == "unnamed_joint_1");
        t = good;
        t.erase(t.find("OFFSET 0 5.25 0"), 15);
        const kio::bvh no_offset = both(t, "joint 'Chest' (line 6) has no OFFSET; its offset is 0");
        CHECK(no_offset.joints[1].offset == glm::vec3(0.0f));
        t = good;
        t.replace(t.find("End Site"), 8, "End Zone");
        both(t, "expected 'Site' after 'End', found 'Zone'");
        t = good;
        t.replace(t.find("End Site"), 8, "End");
        both(t, "expected 'Site' after 'End', found the end of the line");
    }
    SUBCASE("OFFSET: too few numbers, not numbers, NaN, too many") {
        std::string t = good;
        t.replace(t.find("0 4.5 0.125"), 11, "0 4.5");
        const kio::bvh few = both(t, "OFFSET has 2 of its 3 numbers; 0 is used for the others");
        CHECK(few.joints[2].offset == glm::vec3(0.0f, 4.5f, 0.0f));
        t = good;
        t.replace(t.find("0 4.5 0.125"), 11, "0 nan x");
        const kio::bvh nan = both(t, "OFFSET value 'nan' is not a finite float; 0 is used");
        CHECK(nan.joints[2].offset == glm::vec3(0.0f));
        CHECK(warning_with(nan, "OFFSET value 'x' is not a number"));
        t = good;
        t.replace(t.find("0 4.5 0.125"), 11, "0 4.5 0.125 9 9");
        const kio::bvh many = both(t, "more than 3 numbers after OFFSET");
        CHECK(many.joints[2].offset == glm::vec3(0.0f, 4.5f, 0.125f));
    }
    SUBCASE("statements in the wrong place") {
        std::string t = good;
        t.insert(t.find("ROOT"), "OFFSET 1 2 3\n");
        both(t, "line 2, column 1: OFFSET outside any joint; ignored to the end of the line");
        t = good;
        t.replace(t.find("JOINT Leg"), 5, "ROOT ");
        both(t, "ROOT inside joint 'Hips' (line 2); read as a JOINT of it");
        t = good;
        t.insert(t.find("MOTION"), "JOINT Tail\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\n");
        const kio::bvh two_roots = both(t, "JOINT outside any joint; read as a ROOT");
        CHECK(two_roots.skeleton.parent(6) == no_parent);
        t = good;
        t.insert(t.find("OFFSET 0 2 0"), "JOINT Hat\n{ OFFSET 0 0 0\nCHANNELS 1 Zrotation\n}\n");
        both(t, "a joint inside End Site (line 14); kept as a child of the End Site");
        t = good;
        t.insert(t.find("OFFSET 0 2 0"), "CHANNELS 1 Zrotation\n");
        both(t, "CHANNELS in End Site (line 14); kept: the End Site is animated like a joint");
        t = good;
        t.insert(t.find("JOINT Chest"), "SCALE 1 1 1\n");
        both(t, "unexpected 'SCALE' in the hierarchy; ignored to the end of the line");
    }
    SUBCASE("joints still open at MOTION") {
        std::string t = good;
        t.erase(t.find("}\nMOTION"), 2);
        both(t, "1 joints are still open at MOTION (the innermost is joint 'Hips' (line 2)); they are closed there");
    }
    SUBCASE("two joints with one name; an End Site's made-up name a joint has") {
        std::string t = good;
        t.replace(t.find("JOINT Leg"), 9, "JOINT Chest");
        const result<kio::bvh> s = load(t, strict());
        REQUIRE_FALSE(s);
        CHECK(s.error().code == errc::duplicate);
        CHECK(contains(s.error().message, "line 20, column 2: joint 'Chest' (line 20) has the name of joint 'Chest' (line 6)"));
        const result<kio::bvh> l = load(t);
        REQUIRE(l);
        CHECK(l->skeleton.name(4) == "Chest#2");
        CHECK(warning_with(*l, "renamed 'Chest#2'")->action == kio::warning_action::repaired);
        t = good;
        t.replace(t.find("JOINT Leg"), 9, "JOINT EndSite_Head");
        const result<kio::bvh> made_up = load(t, strict());
        REQUIRE_MESSAGE(made_up, made_up.error().message);
        CHECK(made_up->skeleton.name(4) == "EndSite_Head#2");
        CHECK(warning_with(*made_up, "renamed 'EndSite_Head#2'")->action == kio::warning_action::note);
    }
}

TEST_CASE("bvh bad input: hierarchies 25,000 and 1,000,000 joints deep, without recursion" *
          doctest::test_suite("deep")) {
    // Every 1000th joint and the deepest one animated (a clip channel per joint would cost more
    // memory than the hierarchy itself).
    const auto animated = [](std::size_t i, std::size_t n) { return i % 1000 == 0 || i + 1 == n; };
    const auto deep = [&](std::size_t n) {
        std::string t = "HIERARCHY\n";
        t.reserve(n * 48 + 64);
        for (std::size_t i = 0; i < n; ++i)
            t += (i ? "JOINT j" : "ROOT j") + std::to_string(i) + "\n{\nOFFSET 0 1 0\n" +
                 (animated(i, n) ? "CHANNELS 1 Zrotation\n" : "CHANNELS 0\n");
        t.append(n, '}');
        t += "\nMOTION\nFrames: 2\nFrame Time: 0.01\n";
        for (int f = 0; f < 2; ++f) {
            for (std::size_t i = 0; i < n; ++i)
                if (animated(i, n)) t += i ? " 90" : "90";
            t += "\n";
        }
        return t;
    };
    const auto start = std::chrono::steady_clock::now();
    {
        const result<kio::bvh> r = load(deep(25000), strict());
        REQUIRE_MESSAGE(r, r.error().message);
        CHECK(r->skeleton.size() == 25000);
        CHECK(r->skeleton.parent(24999) == 24998);
        CHECK(r->clip.channels.size() == 26);
    }
    const std::string million = deep(1000000);
    // The default limit refuses it, naming the limit and the place.
    const result<kio::bvh> refused = load(million);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == errc::unsupported);
    CHECK(contains(refused.error().message,
                   "line 262146, column 1: the file has more joints than load_options::max_joints (65536) allows"));
    kio::load_options raised;
    raised.max_joints = 1000000;
    const result<kio::bvh> r = load(million, raised);
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(r->skeleton.size() == 1000000);
    CHECK(r->skeleton.parent(999999) == 999998);
    CHECK(r->skeleton.subtree_end(0) == 1000000);
    CHECK(r->frame_count == 2);
    CHECK(r->warnings.empty());
    REQUIRE(r->clip.channels.size() == 1001);
    CHECK(r->clip.channels.back().joint == 999999);
    // The deepest joint's model matrix: a million offsets and a thousand quarter turns about Z.
    std::vector<glm::mat4> model;
    REQUIRE(sample_local_matrices(r->clip, r->skeleton, 0.0f, model));
    local_to_model(r->skeleton, std::vector<glm::mat4>(model), model);
    CHECK(is_finite(model.back()));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("25,000 and 1,000,000 joints deep: " << seconds << " s");
}

TEST_CASE("bvh bad input: extremely long lines") {
    SUBCASE("a frame row of 4 million values") {
        gen_file f = small_file();
        f.rows[2].resize(4000000, "1.5");
        const std::string text = f.text();
        const result<kio::bvh> s = load(text, strict());
        REQUIRE_FALSE(s);
        CHECK(contains(s.error().message, "line 35, column "));
        const result<kio::bvh> l = load(text);
        REQUIRE(l);
        CHECK(l->frame_count == 5);
        CHECK(warning_with(*l, "frame 2 has more than the hierarchy's 15 values; the extra values are ignored"));
    }
    SUBCASE("a joint name of 4 MB is kept; messages quote 64 characters of it") {
        gen_file f = small_file();
        f.joints[1].name = std::string(4 << 20, 'n');
        f.joints[2].channels.push_back("Wrotation");
        kbtest::rng r(1);
        random_rows(f, 5, r);
        const result<kio::bvh> l = load(f.text());
        REQUIRE(l);
        CHECK(l->skeleton.name(1).size() == std::size_t(4) << 20);
        for (const kio::load_warning& w : l->warnings) CHECK(w.message.size() < 400);
    }
    SUBCASE("End Sites under a long name: their names copy no more than the file's size") {
        // A 100 KB name and 50 End Sites under it (each ~12 bytes of the file): the first copies
        // the name, the others would make the names 50 times the file: they are named by index.
        std::string t = "HIERARCHY\nROOT " + std::string(100000, 'n') + "\n{ OFFSET 0 0 0 CHANNELS 0\n";
        for (int i = 0; i < 50; ++i) t += "End Site{}\n";
        t += "}\nMOTION\nFrames: 0\nFrame Time: 0.1\n";
        const result<kio::bvh> l = load(t);
        REQUIRE(l);
        REQUIRE(l->skeleton.size() == 51);
        CHECK(l->skeleton.name(1) == "EndSite_" + std::string(100000, 'n'));
        CHECK(l->skeleton.name(2) == "EndSite_2");
        CHECK(l->skeleton.name(50) == "EndSite_50");
        std::size_t bytes = 0;
        for (const std::string& n : l->skeleton.names()) bytes += n.size();
        CHECK(bytes < 2 * t.size());
    }
    SUBCASE("an OFFSET, a CHANNELS line and a stray line of a million words") {
        std::string many;
        for (int i = 0; i < 1000000; ++i) many += " 7";
        std::string t = small_file().text();
        t.replace(t.find("OFFSET 0 5.25 0"), 15, "OFFSET 0 5.25 0" + many);
        t.insert(t.find("JOINT Leg"), "BONE" + many + "\n");
        const result<kio::bvh> l = load(t);
        REQUIRE(l);
        CHECK(l->joints[1].offset == glm::vec3(0.0f, 5.25f, 0.0f));
        std::string names = "CHANNELS 1000000";
        for (int i = 0; i < 1000000; ++i) names += " Xrotation";
        std::string c = small_file().text();
        c.replace(c.find("CHANNELS 6"), c.find("\n", c.find("CHANNELS 6")) - c.find("CHANNELS 6"), names);
        const result<kio::bvh> too_many = load(c);
        REQUIRE_FALSE(too_many); // a million duplicate channels: more problems than max_warnings
        CHECK(contains(too_many.error().message, "more than 1000 problems (load_options::max_warnings)"));
    }
}

TEST_CASE("bvh: load_options limits end the load with an error naming the limit") {
    const std::string text = small_file().text();
    kio::load_options o;
    o.max_joints = 5;
    const result<kio::bvh> joints = load(text, o);
    REQUIRE_FALSE(joints);
    CHECK(joints.error().code == errc::unsupported);
    CHECK(contains(joints.error().message, "line 24, column 3: the file has more joints than load_options::max_joints (5) allows"));
    o = {};
    o.max_keys = 15 * 4;
    const result<kio::bvh> keys = load(text, o);
    REQUIRE_FALSE(keys);
    CHECK(keys.error().code == errc::unsupported);
    CHECK(contains(keys.error().message, "line 37, column 1: the file has more frame values than load_options::max_keys (60) allows"));
    o.max_keys = 15 * 5;
    CHECK(load(text, o));
    o = {};
    o.max_warnings = 1;
    std::string bad = text;
    bad.insert(bad.find("JOINT Chest"), "X\nY\n");
    const result<kio::bvh> warnings = load(bad, o);
    REQUIRE_FALSE(warnings);
    CHECK(warnings.error().code == errc::parse_error);
    CHECK(contains(warnings.error().message, "more than 1 problems (load_options::max_warnings)"));
}

TEST_CASE("bvh: random damage to a file never breaks a promise, in either mode") {
    const std::string base = small_file().text();
    kbtest::rng r(2024);
    const char alphabet[] = "{}\n\r\t -.0123456789eEnaifROTJINXYZrotaionpsFrmTe:#";
    for (int i = 0; i < 3000; ++i) {
        std::string t = base;
        for (int k = r.integer(1, 8); k-- > 0;) {
            const std::size_t at = std::size_t(r.integer(0, int(t.size()) - 1));
            switch (r.integer(0, 2)) {
            case 0: t[at] = alphabet[r.integer(0, int(sizeof alphabet) - 2)]; break;
            case 1: t.erase(at, std::size_t(r.integer(1, 12))); break;
            default: t.insert(at, t.substr(std::size_t(r.integer(0, int(t.size()) - 1)), std::size_t(r.integer(1, 40))));
            }
        }
        for (const kio::load_options& o : {kio::load_options{}, strict()}) {
            const result<kio::bvh> b = load(t, o);
            if (b)
                check_promises(*b, o);
            else
                check_located(b.error().message);
        }
    }
}

// ================================================================================================
// The CMU file of ../shared/data/formats
// ================================================================================================

TEST_CASE("01_01.bvh: skeleton, rate and every key of every frame against the file's own numbers") {
    const auto path = kbtest::formats_file("01_01.bvh");
    if (!path) return;
    const result<kio::bvh> r = kio::load_bvh(*path, strict());
    REQUIRE_MESSAGE(r, r.error().message);
    const kio::bvh& b = *r;
    check_promises(b);
    CHECK(b.warnings.empty());
    const kbtest::bvh_file ref(*path);
    REQUIRE(ref.joints.size() == 31);
    CHECK(b.skeleton.size() == 38); // 31 joints and 7 End Sites
    CHECK(std::count_if(b.joints.begin(), b.joints.end(), [](const kio::bvh_joint& j) { return j.end_site; }) == 7);
    CHECK(b.columns.size() == 96);
    CHECK(b.frame_count == 2752);
    CHECK(b.declared_frame_count == 2752);
    CHECK(b.frame_time == 0.0083333);
    CHECK(b.clip.ticks_per_second == float(1.0 / 0.0083333));
    CHECK(b.clip.duration == 2751.0f);
    CHECK(b.clip.channels.size() == 31);
    std::size_t file_joint = 0;
    for (std::size_t j = 0; j < b.skeleton.size(); ++j) {
        if (b.joints[j].end_site) continue;
        const auto& rj = ref.joints[file_joint++];
        CHECK(b.skeleton.name(j) == rj.name);
        CHECK(b.joints[j].offset == glm::vec3(rj.offset));
        CHECK(glm::vec3(b.skeleton.bind_local()[j][3]) == glm::vec3(rj.offset));
    }
    CHECK(b.skeleton.name(6) == "EndSite_LeftToeBase");
    CHECK(b.joints[6].offset == glm::vec3(0.0f, -0.0f, 1.18966f));
    const double worst = compare_with_reference(b, ref);
    MESSAGE("01_01.bvh: largest rotation matrix element difference " << worst);
    CHECK(worst <= 1e-6);
}
