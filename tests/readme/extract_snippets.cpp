// Extracts the C++ snippets of the user's guide (README.md and every docs/*.md) into translation
// units, so that the tests compile (and where they can, run) every snippet exactly as the pages show
// it.
//
//     extract_snippets <out-host.cpp> <out-d3d9.cpp> <page.md>...
//
// A snippet is a fenced block opened by a line "```cpp" and closed by "```". Each one must be
// preceded (directly, or with blank lines between) by an HTML comment that the rendered page does
// not show, saying how to build it:
//
//     <!-- snippet [run | compile] [host | d3d9] [scope] [assimp | gltf]
//     context lines: declarations the snippet uses, with values when it runs
//     -->
//
// - run: the snippet's function is called by the generated main() (the default); compile: it is
//   only compiled (it needs something a test cannot provide, e.g. a Direct3D device).
// - host: compiled into <out-host.cpp> (the default); d3d9: into <out-d3d9.cpp>, which the
//   mingw-w64 cross build compiles.
// - scope: the snippet is namespace-scope code (types, functions) rather than statements.
// - assimp: the snippet needs keyblend::assimp: compiled (and run) only where the build defines
//   KEYBLEND_SNIPPETS_ASSIMP (it does when it has the adapter; CI always has it).
// - gltf: the snippet needs keyblend::gltf (a compiled library: even a compile-only snippet must
//   link, since an unoptimised build emits its function): compiled (and run) only where the build
//   links keyblend::gltf and defines KEYBLEND_SNIPPETS_GLTF.
// A snippet without such a comment is an error: the pages and their tests cannot drift apart. A
// page without snippets is fine; no snippet in any page is an error (a wrong list of pages).
// `#include` lines are hoisted to the top of the unit; `#line` directives map every snippet line
// back to its page, so a compiler error names the page's own line. Snippets of all pages share one
// unit, each in its own function (or namespace, for scope snippets) named after its page and rank.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct snippet {
    std::string page;     // the page's path, as given on the command line
    std::string name;     // the generated function's (or namespace's) name
    int rank = 0;         // 1 for the page's first snippet
    int first_line = 0;   // page line of the first code line
    int context_line = 0; // page line of the first context line
    bool run = true;
    bool d3d9 = false;
    bool scope = false;
    std::string needs;   // the macro the build defines when it has the library the snippet needs, or ""
    std::vector<std::string> context;
    std::vector<std::string> code;
};

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

std::string quoted(const std::string& path) {
    std::string out = "\"";
    for (char c : path) {
        if (c == '\\' || c == '"') out += '\\';
        out += c;
    }
    return out + "\"";
}

/// The page's file name without folder and extension, as an identifier: "docs/getting-started.md"
/// -> "getting_started".
std::string page_identifier(const std::string& page) {
    const auto slash = page.find_last_of("/\\");
    std::string stem = page.substr(slash == std::string::npos ? 0 : slash + 1);
    if (const auto dot = stem.rfind('.'); dot != std::string::npos) stem.erase(dot);
    for (char& c : stem)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return stem;
}

/// The page's name as the generated program prints it: "README.md", "docs/skinning.md".
std::string page_label(const std::string& page) {
    const auto slash = page.find_last_of("/\\");
    const std::string file = page.substr(slash == std::string::npos ? 0 : slash + 1);
    if (slash == std::string::npos || slash == 0) return file;
    const auto parent = page.find_last_of("/\\", slash - 1);
    const std::string folder = page.substr(parent == std::string::npos ? 0 : parent + 1,
                                           slash - (parent == std::string::npos ? 0 : parent + 1));
    return folder == "docs" ? "docs/" + file : file;
}

bool write_unit(const std::string& path, const std::vector<snippet>& all, bool d3d9) {
    std::ostringstream includes, bodies, calls;
    std::vector<std::string> seen;
    int count = 0;
    for (const snippet& s : all) {
        if (s.d3d9 != d3d9) continue;
        ++count;
        const std::string open_guard = s.needs.empty() ? "" : "#if defined(" + s.needs + ")\n";
        const std::string close_guard = s.needs.empty() ? "" : "#endif\n";
        includes << open_guard;
        auto hoist = [&](const std::vector<std::string>& from, int first_line) {
            for (std::size_t l = 0; l < from.size(); ++l) {
                const std::string& line = from[l];
                if (!starts_with(trim(line), "#include")) continue;
                if (std::find(seen.begin(), seen.end(), trim(line)) != seen.end()) continue;
                seen.push_back(trim(line));
                includes << "#line " << first_line + int(l) << ' ' << quoted(s.page) << '\n' << line << '\n';
            }
        };
        hoist(s.context, s.context_line);
        hoist(s.code, s.first_line);
        includes << close_guard;
        bodies << open_guard;
        if (s.scope)
            bodies << "namespace " << s.name << " {\n";
        else
            bodies << "[[maybe_unused]] static void " << s.name << "() {\n";
        if (!s.context.empty()) {
            bodies << "#line " << s.context_line << ' ' << quoted(s.page) << '\n';
            for (const std::string& line : s.context)
                bodies << (starts_with(trim(line), "#include") ? "" : line) << '\n';
        }
        bodies << "#line " << s.first_line << ' ' << quoted(s.page) << '\n';
        for (const std::string& line : s.code)
            bodies << (starts_with(trim(line), "#include") ? "" : line) << '\n';
        bodies << (s.scope ? "} // namespace " + s.name : "}") << "\n";
        bodies << close_guard;
        bodies << "\n";
        if (s.run && !s.scope) {
            calls << open_guard;
            calls << "    std::printf(\"" << page_label(s.page) << " snippet " << s.rank << " (line "
                  << s.first_line << ")\\n\");\n    " << s.name << "();\n";
            calls << close_guard;
        }
    }
    std::ofstream out(path);
    out << "// Generated by tests/readme/extract_snippets.cpp from the user's guide: " << count
        << " snippet(s). Do not edit.\n";
    out << includes.str() << "#line 1 \"snippets (generated)\"\n#include <cstdio>\n\n";
    out << bodies.str();
    if (!d3d9) out << "int main() {\n" << calls.str() << "    return 0;\n}\n";
    return bool(out);
}

/// Appends the snippets of one page to `all`; false (after printing why) on a malformed page.
bool read_page(const std::string& page, std::vector<snippet>& all) {
    std::ifstream in(page);
    if (!in) {
        std::fprintf(stderr, "%s: cannot read\n", page.c_str());
        return false;
    }
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);

    const std::string id = page_identifier(page);
    int rank = 0;
    bool have_comment = false;
    snippet pending;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string t = trim(lines[i]);
        const int number = int(i) + 1;
        if (starts_with(t, "<!-- snippet")) {
            pending = snippet{};
            std::istringstream words(t.substr(std::string("<!-- snippet").size()));
            bool closed = false;
            for (std::string w; words >> w;) {
                if (w == "-->") closed = true;
                else if (w == "run") pending.run = true;
                else if (w == "compile") pending.run = false;
                else if (w == "host") pending.d3d9 = false;
                else if (w == "d3d9") pending.d3d9 = true;
                else if (w == "scope") pending.scope = true;
                else if (w == "assimp") pending.needs = "KEYBLEND_SNIPPETS_ASSIMP";
                else if (w == "gltf") pending.needs = "KEYBLEND_SNIPPETS_GLTF";
                else {
                    std::fprintf(stderr, "%s:%d: unknown snippet option '%s'\n", page.c_str(), number, w.c_str());
                    return false;
                }
            }
            pending.context_line = number + 1;
            while (!closed) {
                if (++i >= lines.size()) {
                    std::fprintf(stderr, "%s:%d: unterminated snippet comment\n", page.c_str(), number);
                    return false;
                }
                if (trim(lines[i]) == "-->") closed = true;
                else pending.context.push_back(lines[i]);
            }
            have_comment = true;
            continue;
        }
        if (t == "```cpp") {
            if (!have_comment) {
                std::fprintf(stderr,
                             "%s:%d: a C++ snippet without a <!-- snippet ... --> comment before it "
                             "(see tests/readme/extract_snippets.cpp)\n",
                             page.c_str(), number);
                return false;
            }
            pending.first_line = number + 1;
            for (++i; i < lines.size() && trim(lines[i]) != "```"; ++i) pending.code.push_back(lines[i]);
            if (i >= lines.size()) {
                std::fprintf(stderr, "%s:%d: unterminated C++ snippet\n", page.c_str(), number);
                return false;
            }
            pending.page = page;
            pending.rank = ++rank;
            pending.name = "snippet_" + id + "_" + std::to_string(rank);
            all.push_back(pending);
            have_comment = false;
            continue;
        }
        if (!t.empty()) have_comment = false; // the comment must directly precede its block
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s out-host.cpp out-d3d9.cpp page.md...\n", argv[0]);
        return 2;
    }
    std::vector<snippet> all;
    std::vector<std::string> identifiers;
    for (int a = 3; a < argc; ++a) {
        const std::string id = page_identifier(argv[a]);
        if (std::find(identifiers.begin(), identifiers.end(), id) != identifiers.end()) {
            std::fprintf(stderr, "%s: a second page named '%s' (snippet names would clash)\n", argv[a], id.c_str());
            return 1;
        }
        identifiers.push_back(id);
        if (!read_page(argv[a], all)) return 1;
    }
    if (all.empty()) {
        std::fprintf(stderr, "no C++ snippets found in %d page(s)\n", argc - 3);
        return 1;
    }
    if (!write_unit(argv[1], all, false) || !write_unit(argv[2], all, true)) {
        std::fprintf(stderr, "cannot write the generated units\n");
        return 1;
    }
    std::printf("extract_snippets: %zu snippet(s) from %d page(s)\n", all.size(), argc - 3);
    return 0;
}
