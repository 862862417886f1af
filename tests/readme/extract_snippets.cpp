// Extracts the C++ snippets of README.md into translation units, so that the tests compile (and
// where they can, run) every snippet exactly as the README shows it.
//
//     extract_snippets README.md <out-host.cpp> <out-d3d9.cpp>
//
// A snippet is a fenced block opened by a line "```cpp" and closed by "```". Each one must be
// preceded (directly, or with blank lines between) by an HTML comment that the rendered README does
// not show, saying how to build it:
//
//     <!-- snippet [run | compile] [host | d3d9] [scope]
//     context lines: declarations the snippet uses, with values when it runs
//     -->
//
// - run: the snippet's function is called by the generated main() (the default); compile: it is
//   only compiled (it needs something a test cannot provide, e.g. a Direct3D device).
// - host: compiled into <out-host.cpp> (the default); d3d9: into <out-d3d9.cpp>, which the
//   mingw-w64 cross build compiles.
// - scope: the snippet is namespace-scope code (types, functions) rather than statements.
// - assimp: the snippet needs keyblend::assimp: compiled (and run) only where the build defines
//   KEYBLEND_README_ASSIMP (it does when it has the adapter; CI always has it).
// A snippet without such a comment is an error: the README and its tests cannot drift apart.
// `#include` lines are hoisted to the top of the unit; `#line` directives map every snippet line
// back to README.md, so a compiler error names the README's own line.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct snippet {
    int first_line = 0;   // README line of the first code line
    int context_line = 0; // README line of the first context line
    bool run = true;
    bool d3d9 = false;
    bool scope = false;
    bool assimp = false; // needs keyblend::assimp: compiled where KEYBLEND_README_ASSIMP is defined
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

bool write_unit(const std::string& path, const std::string& readme, const std::vector<snippet>& all,
                bool d3d9) {
    std::ostringstream includes, bodies, calls;
    std::vector<std::string> seen;
    int count = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const snippet& s = all[i];
        if (s.d3d9 != d3d9) continue;
        ++count;
        const std::string name = "readme_snippet_" + std::to_string(i + 1);
        if (s.assimp) includes << "#if defined(KEYBLEND_README_ASSIMP)\n";
        auto hoist = [&](const std::vector<std::string>& from, int first_line) {
            for (std::size_t l = 0; l < from.size(); ++l) {
                const std::string& line = from[l];
                if (!starts_with(trim(line), "#include")) continue;
                if (std::find(seen.begin(), seen.end(), trim(line)) != seen.end()) continue;
                seen.push_back(trim(line));
                includes << "#line " << first_line + int(l) << ' ' << quoted(readme) << '\n'
                         << line << '\n';
            }
        };
        hoist(s.context, s.context_line);
        hoist(s.code, s.first_line);
        if (s.assimp) includes << "#endif\n";
        if (s.assimp) bodies << "#if defined(KEYBLEND_README_ASSIMP)\n";
        if (s.scope)
            bodies << "namespace " << name << " {\n";
        else
            bodies << "[[maybe_unused]] static void " << name << "() {\n";
        if (!s.context.empty()) {
            bodies << "#line " << s.context_line << ' ' << quoted(readme) << '\n';
            for (const std::string& line : s.context)
                bodies << (starts_with(trim(line), "#include") ? "" : line) << '\n';
        }
        bodies << "#line " << s.first_line << ' ' << quoted(readme) << '\n';
        for (const std::string& line : s.code)
            bodies << (starts_with(trim(line), "#include") ? "" : line) << '\n';
        bodies << (s.scope ? "} // namespace " + name : "}") << "\n";
        if (s.assimp) bodies << "#endif\n";
        bodies << "\n";
        if (s.run && !s.scope) {
            if (s.assimp) calls << "#if defined(KEYBLEND_README_ASSIMP)\n";
            calls << "    std::printf(\"README snippet " << i + 1 << " (line " << s.first_line
                  << ")\\n\");\n    " << name << "();\n";
            if (s.assimp) calls << "#endif\n";
        }
    }
    std::ofstream out(path);
    out << "// Generated from " << readme << " by tests/readme/extract_snippets.cpp: " << count
        << " snippet(s). Do not edit.\n";
    out << includes.str() << "#line 1 \"readme_snippets (generated)\"\n#include <cstdio>\n\n";
    out << bodies.str();
    if (!d3d9) out << "int main() {\n" << calls.str() << "    return 0;\n}\n";
    return bool(out);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s README.md out-host.cpp out-d3d9.cpp\n", argv[0]);
        return 2;
    }
    const std::string readme = argv[1];
    std::ifstream in(readme);
    if (!in) {
        std::fprintf(stderr, "%s: cannot read\n", readme.c_str());
        return 1;
    }
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);

    std::vector<snippet> all;
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
                else if (w == "assimp") pending.assimp = true;
                else {
                    std::fprintf(stderr, "%s:%d: unknown snippet option '%s'\n", readme.c_str(), number,
                                 w.c_str());
                    return 1;
                }
            }
            pending.context_line = number + 1;
            while (!closed) {
                if (++i >= lines.size()) {
                    std::fprintf(stderr, "%s:%d: unterminated snippet comment\n", readme.c_str(), number);
                    return 1;
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
                             readme.c_str(), number);
                return 1;
            }
            pending.first_line = number + 1;
            for (++i; i < lines.size() && trim(lines[i]) != "```"; ++i) pending.code.push_back(lines[i]);
            if (i >= lines.size()) {
                std::fprintf(stderr, "%s:%d: unterminated C++ snippet\n", readme.c_str(), number);
                return 1;
            }
            all.push_back(pending);
            have_comment = false;
            continue;
        }
        if (!t.empty()) have_comment = false; // the comment must directly precede its block
    }
    if (all.empty()) {
        std::fprintf(stderr, "%s: no C++ snippets found\n", readme.c_str());
        return 1;
    }
    if (!write_unit(argv[2], readme, all, false) || !write_unit(argv[3], readme, all, true)) {
        std::fprintf(stderr, "cannot write the generated units\n");
        return 1;
    }
    std::printf("extract_snippets: %zu snippet(s) from %s\n", all.size(), readme.c_str());
    return 0;
}
