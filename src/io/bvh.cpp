// keyblend — the BVH reader's definitions (keyblend/bvh.hpp), compiled into keyblend::io.
//
// SPDX-License-Identifier: MIT
//
// One pass over the text, line by line. The hierarchy is a sequence of statements (ROOT, JOINT,
// End Site, '{', '}', OFFSET, CHANNELS) read with an explicit stack of open joints, so nesting
// costs memory in proportion to the joints it declares and no stack. The frame rows are read
// value by value straight into the clip's tracks; nothing is allocated from a count the file
// states before the data it counts has been read.
#include <keyblend/bvh.hpp>
#include <keyblend/io/impl/source.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace keyblend {
namespace io {
inline namespace KEYBLEND_IO_GLM_LAYOUT {

const char* to_string(bvh_channel c) {
    switch (c) {
    case bvh_channel::x_position: return "Xposition";
    case bvh_channel::y_position: return "Yposition";
    case bvh_channel::z_position: return "Zposition";
    case bvh_channel::x_rotation: return "Xrotation";
    case bvh_channel::y_rotation: return "Yrotation";
    case bvh_channel::z_rotation: return "Zrotation";
    case bvh_channel::ignored: return "ignored";
    }
    return "unknown";
}

namespace {

using impl::quoted_excerpt;
using impl::tally;
using keyblend::impl::make_error;

constexpr bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

bool is_position(bvh_channel c) noexcept { return c <= bvh_channel::z_position; }
bool is_rotation(bvh_channel c) noexcept {
    return c >= bvh_channel::x_rotation && c <= bvh_channel::z_rotation;
}
/// 0, 1 or 2 for the X, Y or Z channel of either kind.
std::size_t axis_of(bvh_channel c) noexcept {
    return static_cast<std::size_t>(c) % 3;
}

/// The channel a CHANNELS name denotes, or ignored for a name that is none of the six.
bvh_channel channel_named(std::string_view name) {
    static constexpr std::string_view names[] = {"Xposition", "Yposition", "Zposition",
                                                  "Xrotation", "Yrotation", "Zrotation"};
    for (std::size_t i = 0; i < 6; ++i)
        if (name == names[i]) return static_cast<bvh_channel>(i);
    return bvh_channel::ignored;
}

/// The words a statement's name, numbers or channel list stop at.
bool is_keyword(std::string_view w) {
    return w == "{" || w == "}" || w == "ROOT" || w == "JOINT" || w == "End" || w == "OFFSET" ||
           w == "CHANNELS" || w == "MOTION" || w == "HIERARCHY";
}

/// How a number of the file reads.
enum class number_status : unsigned char {
    ok,
    not_a_number, ///< not a decimal number at all
    non_finite,   ///< NaN, an infinity (also MSVC's 1.#IND, 1.#QNAN, 1.#INF), or out of range
};

/// A decimal number as std::from_chars reads it (a leading '+' allowed), whole word or nothing.
template <class T>
number_status parse_number(std::string_view w, T& out) {
    const char* first = w.data();
    const char* last = w.data() + w.size();
    if (first != last && *first == '+') ++first;
    const std::from_chars_result r = std::from_chars(first, last, out);
    if (r.ec == std::errc::result_out_of_range) return number_status::non_finite;
    if (r.ec != std::errc() || first == last) return number_status::not_a_number;
    if (r.ptr != last) {
        // MSVC's printf writes NaN and infinity as 1.#IND, 1.#QNAN, 1.#INF (with digits after).
        const std::string_view rest(r.ptr, static_cast<std::size_t>(last - r.ptr));
        if (rest.size() > 1 && rest[0] == '#') return number_status::non_finite;
        return number_status::not_a_number;
    }
    if constexpr (std::is_floating_point<T>::value)
        if (!is_finite(out)) return number_status::non_finite; // (from the bits: -ffast-math too)
    return number_status::ok;
}

/// A double quaternion for composing Euler angles exactly before the one rounding to float.
struct dquat {
    double w = 1.0, x = 0.0, y = 0.0, z = 0.0;
};

dquat operator*(const dquat& a, const dquat& b) {
    return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}

/// The rotation by `degrees` about the X, Y or Z axis (counterclockwise looking down the axis).
dquat axis_rotation(std::size_t axis, double degrees) {
    constexpr double half_radians_per_degree = 3.14159265358979323846 / 360.0;
    const double h = std::fmod(degrees, 360.0) * half_radians_per_degree;
    dquat q{std::cos(h), 0.0, 0.0, 0.0};
    const double s = std::sin(h);
    (axis == 0 ? q.x : axis == 1 ? q.y : q.z) = s;
    return q;
}

/// A word of a line: its text and 1-based column.
struct word {
    std::string_view text;
    std::size_t column = 0;
};

/// One joint as the hierarchy declares it.
struct joint_record {
    std::string name;
    joint_index parent = no_parent;
    glm::vec3 offset{0.0f};
    bool end_site = false;
    bool has_offset = false;
    bool has_channels = false;
    unsigned char channel_mask = 0; // bit c: the joint has channel c
    std::size_t line = 0, column = 0;
};

/// An animated joint: its clip channel and its columns (rotation and position ones only).
struct animated_joint {
    std::size_t joint = 0;
    std::size_t channel = 0; // index into clip.channels
    std::vector<std::size_t> columns;
    bool rotates = false, moves = false;
    dquat last; // the previous key's rotation, for the hemisphere of the next
};

class reader {
public:
    reader(const char* data, std::size_t size, const load_options& options, std::string_view source)
        : begin_(data), p_(data), end_(data + size), options_(options), lenient_(options.mode == parse_mode::lenient),
          source_(source) {}

    result<bvh> run() {
        // A UTF-8 byte order mark is not part of the first line.
        if (end_ - p_ >= 3 && std::string_view(p_, 3) == "\xEF\xBB\xBF") p_ += 3;
        if (!hierarchy() || !build_skeleton() || !motion() || !finish()) return failure_;
        out_.warnings = std::move(warnings_);
        return std::move(out_);
    }

private:
    // --- lines and words ------------------------------------------------------------------------

    /// The next line ("\n", "\r\n" or a lone "\r" ends one); false at the end of the input.
    bool next_line() {
        if (p_ == end_) return false;
        const char* e = p_;
        while (e != end_ && *e != '\n' && *e != '\r') ++e;
        line_ = std::string_view(p_, static_cast<std::size_t>(e - p_));
        at_ = 0;
        if (e != end_) e += (*e == '\r' && e + 1 != end_ && e[1] == '\n') ? 2 : 1;
        p_ = e;
        ++line_number_;
        return true;
    }

    /// The next word of the current line, without taking it (empty text at the end of the line).
    /// Braces are words of their own, also when written against a name.
    word peek() {
        while (at_ < line_.size() && is_space(line_[at_])) ++at_;
        if (at_ == line_.size()) return {std::string_view(), line_.size() + 1};
        std::size_t e = at_ + 1;
        if (line_[at_] != '{' && line_[at_] != '}')
            while (e < line_.size() && !is_space(line_[e]) && line_[e] != '{' && line_[e] != '}') ++e;
        return {line_.substr(at_, e - at_), at_ + 1};
    }
    word take() {
        const word w = peek();
        at_ += w.text.size();
        return w;
    }
    bool end_of_line() { return peek().text.empty(); }
    void skip_line() { at_ = line_.size(); }

    /// The next line that holds a word, its cursor at the first; false at the end of the input.
    bool next_words() {
        while (next_line()) {
            at_ = 0;
            if (!end_of_line()) return true;
        }
        return false;
    }

    std::size_t column_of(const char* p) const {
        return static_cast<std::size_t>(p - line_.data()) + 1;
    }

    // --- messages -------------------------------------------------------------------------------

    std::string located(std::size_t line, std::size_t column, std::string_view what) const {
        std::string m(source_);
        m += ": line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
        m += what;
        return m;
    }

    /// Ends the load in either mode (a limit, too many warnings, not a BVH file); returns false.
    bool halt(error e) {
        failure_ = std::move(e);
        return false;
    }

    bool warn(load_warning w) {
        if (warnings_.size() >= options_.max_warnings)
            return halt(make_error(errc::parse_error,
                                   std::string(source_) + ": more than " +
                                       std::to_string(options_.max_warnings) +
                                       " problems (load_options::max_warnings); giving up (this "
                                       "is not a damaged BVH file)"));
        warnings_.push_back(std::move(w));
        return true;
    }

    /// A problem of the file at (line, column). Strict: fails with it. Lenient: a warning with
    /// `action` whose message ends with `consequence`; false only when that is one too many.
    bool problem(errc code, std::size_t line, std::size_t column, std::string_view what,
                 warning_action action, std::string_view consequence) {
        load_warning w;
        w.code = code;
        w.message = located(line, column, what);
        if (!lenient_) return halt(std::move(w));
        w.message += "; ";
        w.message += consequence;
        w.action = action;
        return warn(std::move(w));
    }
    bool problem(errc code, const word& at, std::string_view what, warning_action action,
                 std::string_view consequence) {
        return problem(code, line_number_, at.column, what, action, consequence);
    }

    /// A note (either mode): the result differs from the file in a way the message describes.
    bool note(errc code, std::size_t line, std::size_t column, std::string_view what) {
        load_warning w;
        w.code = code;
        w.message = located(line, column, what);
        w.action = warning_action::note;
        return warn(std::move(w));
    }

    /// One problem of a kind that repeats in the frame rows. Strict: fails. Lenient: counted.
    bool flag(tally& t, errc code, std::size_t column, const std::string& what) {
        if (!lenient_) return halt(make_error(code, located(line_number_, column, what)));
        t.add([&] {
            load_warning w;
            w.code = code;
            w.message = located(line_number_, column, what);
            return w;
        });
        return true;
    }

    bool settle(tally& t, warning_action action, std::string_view consequence) {
        return t.count == 0 || warn(t.take(action, consequence));
    }

    /// "joint 'name' (line L)" or "End Site (line L)" for joint j of the file (by file index).
    std::string joint_label(std::size_t j) const {
        // (Once the skeleton is built, the names are its own, renamed ones included.)
        return joint_label(j, built_ ? out_.skeleton.name(out_.skeleton.joint_of_source()[j]) : joints_[j].name);
    }
    std::string joint_label(std::size_t j, const std::string& name) const {
        const joint_record& r = joints_[j];
        return (r.end_site ? std::string("End Site") : "joint " + quoted_excerpt(name)) +
               " (line " + std::to_string(r.line) + ")";
    }

    // --- the hierarchy --------------------------------------------------------------------------

    bool hierarchy() {
        const bool any = next_words();
        const word first = any ? take() : word{};
        if (first.text != "HIERARCHY")
            return halt(make_error(
                errc::parse_error,
                !any ? std::string(source_) + ": not a BVH file: it holds no word (expected HIERARCHY)"
                     : located(line_number_, first.column,
                               "not a BVH file: expected HIERARCHY, found " + quoted_excerpt(first.text))));
        for (;;) {
            while (end_of_line())
                if (!next_words()) {
                    if (!close_all("the end of the file") || !some_joint(line_number_ + 1, 1)) return false;
                    end_of_file_ = true;
                    return problem(errc::parse_error, line_number_ + 1, 1,
                                   "the file ends before MOTION", warning_action::dropped,
                                   "the clip has no frames");
                }
            if (peek().text == "MOTION") {
                const word motion = take();
                if (!close_all("MOTION", motion.column) || !some_joint(line_number_, motion.column))
                    return false;
                if (!end_of_line()) {
                    const word extra = peek();
                    skip_line();
                    return problem(errc::parse_error, extra, "words after MOTION",
                                   warning_action::dropped, "ignored");
                }
                return true;
            }
            if (!statement()) return false;
        }
    }

    /// An empty hierarchy is a problem (a file that animates nothing); false when the load fails.
    bool some_joint(std::size_t line, std::size_t column) {
        return !joints_.empty() || problem(errc::parse_error, line, column,
                                           "the hierarchy declares no joint (no ROOT)",
                                           warning_action::note, "the skeleton is empty");
    }

    /// Reads the statement at the cursor; false when the load fails.
    bool statement() {
        const word w = take();
        if (pending_brace_ && w.text != "{") {
            if (!problem(errc::parse_error, w,
                         "expected '{' after " + joint_label(joints_.size() - 1) + ", found " +
                             quoted_excerpt(w.text),
                         warning_action::repaired, "the joint is opened here"))
                return false;
            open_.push_back(joints_.size() - 1);
            pending_brace_ = false;
        }
        if (w.text == "{") {
            if (pending_brace_) {
                open_.push_back(joints_.size() - 1);
                pending_brace_ = false;
                return true;
            }
            return problem(errc::parse_error, w, "'{' opens no joint", warning_action::dropped,
                           "ignored");
        }
        if (w.text == "}") {
            if (open_.empty())
                return problem(errc::parse_error, w, "'}' closes no joint", warning_action::dropped,
                               "ignored");
            return close_joint();
        }
        if (w.text == "ROOT" || w.text == "JOINT") return joint(w);
        if (w.text == "End") return end_site(w);
        if (w.text == "OFFSET" || w.text == "CHANNELS") {
            if (open_.empty()) {
                skip_line();
                return problem(errc::parse_error, w, std::string(w.text) + " outside any joint",
                               warning_action::dropped, "ignored to the end of the line");
            }
            return w.text == "OFFSET" ? offset(w) : channels(w);
        }
        skip_line();
        return problem(errc::parse_error, w,
                       "unexpected " + quoted_excerpt(w.text) + " in the hierarchy",
                       warning_action::dropped, "ignored to the end of the line");
    }

    /// A new joint under the innermost open joint, awaiting its '{'; false past
    /// load_options::max_joints.
    bool add_joint(const word& at, std::string name, bool end_site) {
        if (joints_.size() >= options_.max_joints ||
            joints_.size() >= static_cast<std::size_t>(std::numeric_limits<joint_index>::max() - 1))
            return halt(make_error(errc::unsupported,
                                   located(line_number_, at.column,
                                           "the file has more joints than load_options::max_joints (" +
                                               std::to_string(options_.max_joints) + ") allows")));
        joint_record& r = joints_.emplace_back();
        r.name = std::move(name);
        r.parent = open_.empty() ? no_parent : static_cast<joint_index>(open_.back());
        r.end_site = end_site;
        r.line = line_number_;
        r.column = at.column;
        pending_brace_ = true;
        return true;
    }

    /// ROOT or JOINT, then the name: the rest of the line up to a brace.
    bool joint(const word& at) {
        const char* first = nullptr;
        const char* last = nullptr;
        for (word w = peek(); !w.text.empty() && w.text != "{" && w.text != "}"; w = peek()) {
            take();
            if (!first) first = w.text.data();
            last = w.text.data() + w.text.size();
        }
        std::string name = first ? std::string(first, static_cast<std::size_t>(last - first)) : std::string();
        const bool root = at.text == "ROOT";
        if (root != open_.empty() &&
            !problem(errc::parse_error, at,
                     root ? "ROOT inside " + joint_label(open_.back()) : std::string("JOINT outside any joint"),
                     warning_action::repaired, root ? "read as a JOINT of it" : "read as a ROOT"))
            return false;
        if (!open_.empty() && joints_[open_.back()].end_site &&
            !problem(errc::parse_error, at, "a joint inside " + joint_label(open_.back()),
                     warning_action::repaired, "kept as a child of the End Site"))
            return false;
        if (name.empty()) {
            name = "unnamed_joint_" + std::to_string(joints_.size());
            if (!problem(errc::parse_error, at, std::string(at.text) + " without a name",
                         warning_action::repaired, "named " + quoted_excerpt(name)))
                return false;
        }
        return add_joint(at, std::move(name), false);
    }

    /// End Site: a leaf named after its parent, as assimp names it. The names made up this way
    /// copy at most as many bytes, all together, as the file has: past that (only a file of many
    /// End Sites under long names gets there), an End Site is named after its index instead.
    bool end_site(const word& at) {
        if (peek().text == "Site") {
            take();
        } else if (!problem(errc::parse_error, at,
                            "expected 'Site' after 'End', found " +
                                (end_of_line() ? std::string("the end of the line") : quoted_excerpt(peek().text)),
                            warning_action::repaired, "read as End Site")) {
            return false;
        }
        if (open_.empty())
            return problem(errc::parse_error, at, "End Site outside any joint", warning_action::repaired,
                           "read as a joint without a parent") &&
                   add_joint(at, "EndSite", true);
        const std::string& parent = joints_[open_.back()].name;
        const std::size_t budget = static_cast<std::size_t>(end_ - begin_);
        if (parent.size() <= budget - std::min(budget, made_up_bytes_)) {
            made_up_bytes_ += parent.size();
            return add_joint(at, "EndSite_" + parent, true);
        }
        return add_joint(at, "EndSite_" + std::to_string(joints_.size()), true);
    }

    /// OFFSET x y z, for the innermost open joint.
    bool offset(const word& at) {
        joint_record& j = joints_[open_.back()];
        if (j.has_offset) {
            skip_line();
            return problem(errc::parse_error, at, "a second OFFSET in " + joint_label(open_.back()),
                           warning_action::dropped, "the first is kept");
        }
        j.has_offset = true;
        float v[3] = {0.0f, 0.0f, 0.0f};
        std::size_t k = 0;
        for (; k < 3 && !end_of_line() && !is_keyword(peek().text); ++k) {
            const word w = take();
            const number_status s = parse_number(w.text, v[k]);
            if (s == number_status::ok) continue;
            v[k] = 0.0f;
            if (!problem(s == number_status::non_finite ? errc::non_finite : errc::parse_error, w,
                         "OFFSET value " + quoted_excerpt(w.text) +
                             (s == number_status::non_finite ? " is not a finite float" : " is not a number"),
                         warning_action::repaired, "0 is used"))
                return false;
        }
        joints_[open_.back()].offset = glm::vec3(v[0], v[1], v[2]);
        if (k < 3)
            return problem(errc::parse_error, peek(), "OFFSET has " + std::to_string(k) + " of its 3 numbers",
                           warning_action::repaired, "0 is used for the others");
        if (!end_of_line() && !is_keyword(peek().text)) {
            const word extra = peek();
            skip_line();
            return problem(errc::parse_error, extra, "more than 3 numbers after OFFSET",
                           warning_action::dropped, "ignored to the end of the line");
        }
        return true;
    }

    /// CHANNELS n name..., for the innermost open joint: the names are the words after the count
    /// up to a keyword or the end of the line.
    bool channels(const word& at) {
        const std::size_t self = open_.back();
        if (joints_[self].end_site &&
            !problem(errc::parse_error, at, "CHANNELS in " + joint_label(self),
                     warning_action::repaired, "kept: the End Site is animated like a joint"))
            return false;
        if (joints_[self].has_channels &&
            !problem(errc::duplicate, at, "a second CHANNELS line in " + joint_label(self),
                     warning_action::repaired, "its channels are added to the joint's"))
            return false;
        joints_[self].has_channels = true;
        std::size_t declared = 0;
        const word count = peek();
        const bool counted = !count.text.empty() && !is_keyword(count.text) &&
                             parse_number(count.text, declared) == number_status::ok;
        // A word in the count's place that is no channel name is a bad count, not a channel.
        if (counted || (!count.text.empty() && !is_keyword(count.text) &&
                        channel_named(count.text) == bvh_channel::ignored))
            take();
        std::size_t names = 0;
        for (; !end_of_line() && !is_keyword(peek().text); ++names) {
            const word w = take();
            bvh_channel c = channel_named(w.text);
            if (c == bvh_channel::ignored) {
                if (!problem(errc::not_found, w,
                             "unknown channel " + quoted_excerpt(w.text) +
                                 " (Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation)",
                             warning_action::dropped, "its values are ignored"))
                    return false;
            } else if (joints_[self].channel_mask & (1u << static_cast<unsigned>(c))) {
                if (!problem(errc::duplicate, w,
                             std::string(to_string(c)) + " a second time in " + joint_label(self),
                             warning_action::dropped, "its values are ignored"))
                    return false;
                c = bvh_channel::ignored;
            } else {
                joints_[self].channel_mask = static_cast<unsigned char>(joints_[self].channel_mask | 1u << static_cast<unsigned>(c));
            }
            columns_.push_back({self, c});
        }
        if (!counted)
            return problem(errc::parse_error, count, "expected the number of channels after CHANNELS",
                           warning_action::repaired,
                           "the " + std::to_string(names) + " channel names on the line are read");
        if (names != declared)
            return problem(errc::parse_error, at,
                           "CHANNELS says " + std::to_string(declared) + ", and " +
                               std::to_string(names) + " channel names follow on its line",
                           warning_action::repaired, "the " + std::to_string(names) + " names are read");
        return true;
    }

    /// Checks and closes the innermost open joint.
    bool close_joint() {
        const std::size_t j = open_.back();
        open_.pop_back();
        const joint_record& r = joints_[j];
        if (!r.has_offset &&
            !problem(errc::parse_error, r.line, r.column, joint_label(j) + " has no OFFSET",
                     warning_action::repaired, "its offset is 0"))
            return false;
        if (!r.end_site && !r.has_channels &&
            !problem(errc::parse_error, r.line, r.column, joint_label(j) + " has no CHANNELS line",
                     warning_action::repaired, "it has no channels"))
            return false;
        return true;
    }

    /// Closes every joint still open (and one awaiting its '{') at `where`.
    bool close_all(const std::string& where, std::size_t column = 1) {
        if (pending_brace_) {
            pending_brace_ = false;
            open_.push_back(joints_.size() - 1);
        }
        if (open_.empty()) return true;
        if (!problem(errc::parse_error, line_number_ + (where == "MOTION" ? 0 : 1), column,
                     std::to_string(open_.size()) + " joints are still open at " + where +
                         " (the innermost is " + joint_label(open_.back()) + ")",
                     warning_action::repaired, "they are closed there"))
            return false;
        while (!open_.empty())
            if (!close_joint()) return false;
        return true;
    }

    // --- the motion -----------------------------------------------------------------------------

    bool motion() {
        if (end_of_file_) {
            default_rate();
            return true;
        }
        bool have_line = next_words();
        // Frames: N
        if (have_line && peek().text == "Frames:") {
            take();
            const word n = take();
            declared_ok_ = parse_number(n.text, out_.declared_frame_count) == number_status::ok;
            if (!declared_ok_) {
                out_.declared_frame_count = 0;
                if (!problem(errc::parse_error, n, "expected the number of frames after 'Frames:', found " +
                                                       (n.text.empty() ? std::string("nothing") : quoted_excerpt(n.text)),
                             warning_action::repaired, "the frame rows are counted"))
                    return false;
            } else if (!end_of_line()) {
                const word extra = peek();
                if (!problem(errc::parse_error, extra, "words after the number of frames",
                             warning_action::dropped, "ignored"))
                    return false;
            }
            have_line = next_words();
        } else if (!problem(errc::parse_error, line_number_ + (have_line ? 0 : 1),
                            have_line ? peek().column : 1, "expected 'Frames:' after MOTION",
                            warning_action::repaired, "the frame rows are counted")) {
            return false;
        }
        // Frame Time: T
        if (have_line && peek().text == "Frame") {
            const std::size_t mark = at_;
            take();
            if (peek().text == "Time:") {
                take();
                if (!frame_time()) return false;
                have_line = next_line_with_text();
            } else {
                at_ = mark;
                if (frame_time_missing(true)) return false;
            }
        } else if (frame_time_missing(have_line)) {
            return false;
        }
        prepare_clip();
        for (; have_line; have_line = next_line_with_text())
            if (!row()) return false;
        return frame_count_check();
    }

    /// A missing Frame Time line: true when the load fails.
    bool frame_time_missing(bool have_line) {
        return !problem(errc::parse_error, line_number_ + (have_line ? 0 : 1),
                        have_line ? peek().column : 1, "expected 'Frame Time:'",
                        warning_action::repaired, default_rate());
    }

    std::string default_rate() {
        out_.frame_time = 1.0 / bvh_default_frames_per_second;
        out_.clip.ticks_per_second_is_default = true;
        return "the clip has " + keyblend::impl::float_to_string(bvh_default_frames_per_second, 6) +
               " frames per second";
    }

    bool frame_time() {
        const word value = take();
        double t = 0.0;
        const number_status s = value.text.empty() ? number_status::not_a_number : parse_number(value.text, t);
        if (s == number_status::ok && t >= bvh_min_frame_time && t <= bvh_max_frame_time) {
            out_.frame_time = t;
            if (end_of_line()) return true;
            return problem(errc::parse_error, peek(), "words after the frame time",
                           warning_action::dropped, "ignored");
        }
        const std::string text = value.text.empty() ? std::string("nothing") : quoted_excerpt(value.text);
        if (s == number_status::not_a_number)
            return problem(errc::parse_error, value, "expected the frame time (seconds), found " + text,
                           warning_action::repaired, default_rate());
        if (s == number_status::non_finite)
            return problem(errc::non_finite, value, "the frame time " + text + " is not finite",
                           warning_action::repaired, default_rate());
        return problem(errc::invalid_argument, value,
                       "the frame time " + text + " is outside [" +
                           keyblend::impl::float_to_string(bvh_min_frame_time, 3) + ", " +
                           keyblend::impl::float_to_string(bvh_max_frame_time, 3) + "] seconds",
                       warning_action::repaired, default_rate());
    }

    /// The next line that is not blank, as the current line (rows are read in place).
    bool next_line_with_text() {
        while (next_line())
            for (char c : line_)
                if (!is_space(c)) return true;
        return false;
    }

    /// The clip's channels, one per joint with a rotation or position column.
    void prepare_clip() {
        std::vector<std::size_t> animated_of(joints_.size(), std::size_t(-1));
        for (std::size_t k = 0; k < columns_.size(); ++k) {
            const bvh_column& c = columns_[k];
            if (c.channel == bvh_channel::ignored) continue;
            std::size_t& a = animated_of[c.joint];
            if (a == std::size_t(-1)) {
                a = animated_.size();
                animated_.emplace_back();
                animated_.back().joint = c.joint;
            }
            animated_joint& aj = animated_[a];
            aj.columns.push_back(k);
            (is_rotation(c.channel) ? aj.rotates : aj.moves) = true;
        }
        // Reserve what the rest of the input can hold at the least (two bytes a value), never
        // more than Frames: claims: tracks grow past that only when the file holds more rows.
        const std::size_t bytes_left = static_cast<std::size_t>(end_ - p_) + line_.size();
        const std::size_t rows_possible = columns_.empty() ? 0 : bytes_left / (2 * columns_.size()) + 1;
        const std::size_t reserve = std::min(out_.declared_frame_count, rows_possible);
        out_.clip.channels.resize(animated_.size());
        for (std::size_t a = 0; a < animated_.size(); ++a) {
            channel& ch = out_.clip.channels[a];
            animated_[a].channel = a;
            ch.joint = animated_[a].joint; // a file index until finish()
            if (animated_[a].rotates) ch.rotation.reserve(reserve);
            if (animated_[a].moves) ch.translation.reserve(reserve);
        }
        // The values "before the first frame", for repairs: no rotation, the offset.
        row_.assign(columns_.size(), 0.0);
        for (std::size_t k = 0; k < columns_.size(); ++k)
            if (is_position(columns_[k].channel))
                row_[k] = double(joints_[columns_[k].joint].offset[static_cast<glm::length_t>(axis_of(columns_[k].channel))]);
    }

    /// One frame row: a value per column, then the keys.
    bool row() {
        const std::size_t frame = out_.frame_count;
        const char* q = line_.data();
        const char* const e = line_.data() + line_.size();
        while (q != e && is_space(*q)) ++q;
        if (columns_.empty())
            return flag(long_rows_, errc::parse_error, column_of(q),
                        "a frame row holds values, and the hierarchy has no channels");
        if (frame + 1 > options_.max_keys / columns_.size())
            return halt(make_error(errc::unsupported,
                                   located(line_number_, column_of(q),
                                           "the file has more frame values than load_options::max_keys (" +
                                               std::to_string(options_.max_keys) + ") allows")));
        if (declared_ok_ && !lenient_ && frame == out_.declared_frame_count)
            return halt(make_error(errc::parse_error,
                                   located(line_number_, column_of(q),
                                           "a frame row past the " + std::to_string(frame) +
                                               " frames 'Frames:' declares")));
        std::size_t k = 0;
        for (;; ++k) {
            while (q != e && is_space(*q)) ++q;
            if (q == e) break;
            const char* w = q;
            while (q != e && !is_space(*q)) ++q;
            if (k >= columns_.size()) {
                if (!flag(long_rows_, errc::parse_error, column_of(w),
                          "frame " + std::to_string(frame) + " has more than the hierarchy's " +
                              std::to_string(columns_.size()) + " values"))
                    return false;
                break;
            }
            const bvh_channel c = columns_[k].channel;
            if (c == bvh_channel::ignored) continue;
            const std::string_view text(w, static_cast<std::size_t>(q - w));
            number_status s;
            double v = 0.0;
            if (is_position(c)) {
                float f = 0.0f;
                s = parse_number(text, f);
                v = double(f);
            } else {
                s = parse_number(text, v);
            }
            if (s == number_status::ok) {
                row_[k] = v;
                continue;
            }
            // (Lenient: row_[k] keeps the frame before's value.)
            const bool nf = s == number_status::non_finite;
            if (!flag(nf ? non_finite_values_ : bad_values_, nf ? errc::non_finite : errc::parse_error,
                      column_of(w),
                      "frame " + std::to_string(frame) + ", " + to_string(c) + " of " +
                          joint_label(columns_[k].joint) + ": " + quoted_excerpt(text) +
                          (nf ? (is_position(c) ? " is not a finite float" : " is not finite")
                              : " is not a number")))
                return false;
        }
        if (k < columns_.size() &&
            !flag(short_rows_, errc::parse_error, line_.size() + 1,
                  "frame " + std::to_string(frame) + " has " + std::to_string(k) + " of the hierarchy's " +
                      std::to_string(columns_.size()) + " values"))
            return false;
        add_keys(static_cast<float>(frame));
        ++out_.frame_count;
        return true;
    }

    void add_keys(float time) {
        for (animated_joint& a : animated_) {
            channel& ch = out_.clip.channels[a.channel];
            dquat q;
            glm::vec3 t = joints_[a.joint].offset;
            for (std::size_t k : a.columns) {
                const bvh_channel c = columns_[k].channel;
                if (is_rotation(c))
                    q = q * axis_rotation(axis_of(c), row_[k]);
                else
                    t[static_cast<glm::length_t>(axis_of(c))] = static_cast<float>(row_[k]);
            }
            if (a.rotates) {
                // The same hemisphere as the key before (the first: w >= 0).
                const dquat& p = a.last;
                if (p.w * q.w + p.x * q.x + p.y * q.y + p.z * q.z < 0.0) q = {-q.w, -q.x, -q.y, -q.z};
                a.last = q;
                ch.rotation.push_back(time, make_quat(static_cast<float>(q.w), static_cast<float>(q.x),
                                                      static_cast<float>(q.y), static_cast<float>(q.z)));
            }
            if (a.moves) ch.translation.push_back(time, t);
        }
    }

    bool frame_count_check() {
        if (!settle(bad_values_, warning_action::repaired, "replaced by the frame before's value") ||
            !settle(non_finite_values_, warning_action::repaired, "replaced by the frame before's value") ||
            !settle(short_rows_, warning_action::repaired, "the missing values are the frame before's") ||
            !settle(long_rows_, warning_action::dropped, "the extra values are ignored"))
            return false;
        const std::size_t rows = out_.frame_count;
        if (!declared_ok_ || rows == out_.declared_frame_count || columns_.empty()) return true;
        return problem(errc::parse_error, line_number_ + 1, 1,
                       "the file holds " + std::to_string(rows) + " frame rows, and 'Frames:' says " +
                           std::to_string(out_.declared_frame_count),
                       warning_action::repaired,
                       "the clip has the " + std::to_string(rows) + " frames there are");
    }

    // --- the result -----------------------------------------------------------------------------

    /// The skeleton, when the hierarchy is complete. Two joints with one name: the later is
    /// renamed (skeleton.hpp's rule); a joint of the file with another's name is the file's
    /// problem, an End Site's made-up name that a joint has is not (a note in either mode).
    bool build_skeleton() {
        std::vector<joint_desc> descs(joints_.size());
        for (std::size_t j = 0; j < joints_.size(); ++j) {
            descs[j].name = std::move(joints_[j].name);
            descs[j].parent = joints_[j].parent;
            descs[j].bind_local[3] = glm::vec4(joints_[j].offset, 1.0f);
        }
        skeleton_options rename;
        rename.duplicates = duplicate_names::rename;
        result<skeleton> built = skeleton::from_parents(descs, rename);
        if (!built)
            return halt(make_error(built.error().code, std::string(source_) + ": " + built.error().message));
        out_.skeleton = std::move(*built);
        built_ = true;
        const skeleton& s = out_.skeleton;
        const std::vector<std::size_t>& joint_of = s.joint_of_source();
        for (std::size_t j = 0; j < joints_.size(); ++j) {
            if (s.name(joint_of[j]) == descs[j].name) continue;
            // The first joint with the name kept it.
            const result<std::size_t> found = s.find(descs[j].name);
            const std::size_t kept = found ? *found : s.size();
            if (kept == s.size()) continue; // (not reached: renaming keeps the first's name)
            const std::size_t first = s.source_of_joint()[kept];
            load_warning w;
            w.code = errc::duplicate;
            w.message = located(joints_[j].line, joints_[j].column,
                                joint_label(j, descs[j].name) + " has the name of " + joint_label(first));
            if (joints_[j].end_site || joints_[first].end_site) {
                w.action = warning_action::note;
            } else {
                if (!lenient_) return halt(std::move(w));
                w.action = warning_action::repaired;
            }
            w.message += "; renamed " + quoted_excerpt(s.name(joint_of[j]));
            if (!warn(std::move(w))) return false;
        }
        return true;
    }

    bool finish() {
        const std::vector<std::size_t>& joint_of = out_.skeleton.joint_of_source();
        out_.joints.resize(joints_.size());
        for (std::size_t j = 0; j < joints_.size(); ++j) {
            bvh_joint& b = out_.joints[joint_of[j]];
            b.end_site = joints_[j].end_site;
            b.offset = joints_[j].offset;
            b.line = joints_[j].line;
        }
        out_.columns = std::move(columns_);
        for (bvh_column& c : out_.columns) c.joint = joint_of[c.joint];
        clip& c = out_.clip;
        c.name = "Motion";
        for (channel& ch : c.channels) ch.joint = joint_of[ch.joint];
        c.ticks_per_second = static_cast<float>(1.0 / out_.frame_time);
        c.duration = out_.frame_count > 1 && !c.channels.empty() ? static_cast<float>(out_.frame_count - 1) : 0.0f;
        if (out_.frame_count > (std::size_t{1} << 24) + 1 && !c.channels.empty())
            return note(errc::unsupported, line_number_, 1,
                        "the file has " + std::to_string(out_.frame_count) +
                            " frames: frame numbers past 2^24 are not all exact as float ticks");
        return true;
    }

    const char* const begin_;
    const char* p_;
    const char* const end_;
    const load_options& options_;
    const bool lenient_;
    const std::string_view source_;

    std::string_view line_;
    std::size_t line_number_ = 0;
    std::size_t at_ = 0; // the word cursor in line_
    bool end_of_file_ = false;

    std::vector<joint_record> joints_; // (names moved into the skeleton once it is built)
    bool built_ = false;
    std::size_t made_up_bytes_ = 0;    // bytes of parents' names copied into End Site names
    std::vector<std::size_t> open_; // the open joints, innermost last
    bool pending_brace_ = false;    // the last joint declared awaits its '{'
    std::vector<bvh_column> columns_;

    std::vector<animated_joint> animated_;
    std::vector<double> row_; // the current frame's values (the previous frame's until replaced)
    bool declared_ok_ = false; // the Frames: line was read
    tally bad_values_, non_finite_values_, short_rows_, long_rows_;

    bvh out_;
    std::vector<load_warning> warnings_;
    error failure_;
};

} // namespace

result<bvh> load_bvh_memory(const void* data, std::size_t size, const load_options& options,
                            std::string_view source_name) {
    return reader(static_cast<const char*>(data), size, options, source_name).run();
}

result<bvh> load_bvh(const std::string& path, const load_options& options) {
    std::unique_ptr<unsigned char[]> bytes;
    std::size_t size = 0;
    if (status read = impl::read_whole_file(path, bytes, size); !read) return read.error();
    return load_bvh_memory(bytes.get(), size, options, path);
}

} // namespace KEYBLEND_IO_GLM_LAYOUT
} // namespace io
} // namespace keyblend
