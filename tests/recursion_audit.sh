#!/usr/bin/env bash
# No recursion in keyblend's code: every translation unit of the compiled loaders (src/) and of the
# examples (the tool, the demos: they instantiate the core, the loaders and the assimp adapter) is
# compiled to LLVM IR without optimisation, and its call graph's strongly connected components are
# listed (opt's print-callgraph-sccs): a function that calls itself, or a cycle of functions, is
# recursion, whatever a warning such as -Winfinite-recursion sees. The standard library's (its
# sorts recurse to a depth logarithmic in the size) and the allowed cycles below are left out;
# anything else fails, with the functions named.
#
#   tests/recursion_audit.sh [BUILD_DIR]     (needs clang++-14 and opt-14: Debian's clang-14, llvm-14;
#                                             RECURSION_AUDIT_JOBS units at a time, 2 by default)
#
# Allowed: the skinning kernels' fallback for a group with clamped joints runs the general kernel
# on that one group (lbs_kernel -> lbs_group_clamped -> lbs_kernel in general mode, which clamps
# and never falls back): one level at run time, on no input's depth. nlohmann::json's serializer,
# which recurses on the depth of the document it writes: the tool's JSON output has a fixed depth
# (joints are a flat array). (Its parser is another matter: it is not allowed here.)
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-build-audit}/recursion_audit"
mkdir -p "$work"
clang=clang++-14
opt=opt-14
cxxfilt=llvm-cxxfilt-14
for tool in "$clang" "$opt" "$cxxfilt"; do
  command -v "$tool" > /dev/null || { echo "recursion_audit: $tool not found (Debian: clang-14 llvm-14)" >&2; exit 1; }
done
allowed='keyblend::impl::([a-z0-9_]+::)?skin::([a-z0-9_]+::)?(lbs_kernel|lbs_group_clamped)<|^nlohmann::[a-z0-9_]*::detail::serializer<.*>::dump\('
flags=(-std=c++17 -O0 -w -Iinclude -Iexamples -DKEYBLEND_IO_LIBRARY -DKEYBLEND_TOOL_ASSIMP -DKEYBLEND_TOOL_GLTF)
units=(src/*/*.cpp examples/*.cpp examples/tool/*.cpp)
# audit <unit>: prints what it found; fails when the unit has recursion.
audit() {
  local unit="$1" ir cycles own unit_flags=()
  ir="$work/$(echo "$unit" | tr '/' '_').ll"
  case "$unit" in src/kernels/*) unit_flags=(-DKEYBLEND_KERNELS_LIBRARY) ;; esac # (as keyblend::kernels builds it)
  "$clang" "${flags[@]}" "${unit_flags[@]}" -S -emit-llvm "$unit" -o "$ir"
  # Each SCC on one line: "SCC #n : f, g, " with "(Has self-loop)" when a function calls itself.
  cycles=$("$opt" -enable-new-pm=0 -print-callgraph-sccs -disable-output "$ir" 2>&1 |
           grep -E 'Has self-loop|, .+, ' | grep -v 'external node' | "$cxxfilt" || true)
  own=$(printf '%s\n' "$cycles" | sed -E 's/^SCC #[0-9]+ : //; s/,? *\(Has self-loop\)\.?$//' |
        grep -vE '^(std::|void std::|[a-z ]*std::|$)' | grep -vE "$allowed" || true)
  # (A line whose first function is the standard library's is the standard library's cycle.)
  rm -f "$ir"
  if [ -n "$own" ]; then
    echo "recursion_audit: $unit has recursion:" >&2
    printf '  %s\n' "$own" >&2
    return 1
  fi
  echo "recursion_audit: $unit: no recursion"
}
# Two units at a time (each compile uses one core); a failed unit fails the audit after the rest.
failed=0
pids=()
for unit in "${units[@]}"; do
  case "$unit" in examples/d3d9_*) continue ;; esac # Windows only (its frame walk is a loop)
  if [ "${#pids[@]}" -ge "${RECURSION_AUDIT_JOBS:-2}" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
  audit "$unit" & pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit "$failed"
