#!/usr/bin/env bash
# Compile time of keyblend as a user's translation unit pays it: compiles each small program of
# bench/compile_time/ alone (g++ -O2 -march=native by default, as an engine's release build) and
# prints its wall seconds, CPU seconds (user + system: what the compile costs when other work
# shares the machine) and peak memory (GNU time's "Maximum resident set size"), next to the
# compile-time targets below (wall seconds on a quiet machine). Nothing is linked or run.
#
#   bash bench/compile_time.sh [--include DIR] [--cxx COMPILER] [--flags "FLAGS"] [--repeat N]
#                              [--compiled-kernels] [PROGRAM...]
#
# --include  the keyblend headers to measure (default: this checkout's include/; point it at
#            another checkout's include/ to measure a "before")
# --cxx      the compiler (default: g++, or $CXX)
# --flags    the flags (default: -std=c++17 -O2 -march=native)
# --repeat   compile each program N times and report the fastest (default 1)
# --compiled-kernels
#            compile as a file of a program that links keyblend::kernels does
#            (-DKEYBLEND_KERNELS_LIBRARY: the kernels are declared, not compiled); the target is
#            then skin_general within 1.5x of include_all, printed when both are measured
#
# The targets are checked against wall seconds; on a loaded machine read the CPU column.
# PROGRAM    names of bench/compile_time/*.cpp without .cpp (default: all of them)
#
# A program that does not compile against the headers given (e.g. one using an API the "before"
# checkout lacks) is reported as such. Figures depend on the machine's load: compare programs of
# one run, and note `uptime`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
include="$here/../include"
cxx="${CXX:-g++}"
flags="-std=c++17 -O2 -march=native"
repeat=1
compiled=0
programs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --include) include="$2"; shift 2 ;;
    --cxx) cxx="$2"; shift 2 ;;
    --flags) flags="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --compiled-kernels) compiled=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) programs+=("$1"); shift ;;
  esac
done
if [ ${#programs[@]} -eq 0 ]; then
  for f in "$here"/compile_time/*.cpp; do programs+=("$(basename "$f" .cpp)"); done
fi
if [ ! -x /usr/bin/time ]; then
  echo "compile_time.sh needs GNU time (/usr/bin/time; Debian package 'time')" >&2
  exit 1
fi

if [ "$compiled" = 1 ]; then flags="$flags -DKEYBLEND_KERNELS_LIBRARY"; fi

# The targets, by program: wall seconds and peak MB, "-" when none (docs/performance.md).
target_of() {
  case "$1" in
    skin_configured) echo "3 300" ;;
    pipeline_configured|pipeline_io_library) echo "8 -" ;;
    *) echo "- -" ;;
  esac
}

declare -A walls cpus
work="$(mktemp -d /tmp/keyblend-compile-time.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo "compiler: $($cxx --version | head -n 1)"
echo "flags:    $flags"
echo "headers:  $(cd "$include" && pwd)"
echo "load:     $(uptime)"
printf '\n%-22s %9s %8s %10s   %s\n' "program" "wall [s]" "cpu [s]" "peak [MB]" "target"
for p in "${programs[@]}"; do
  src="$here/compile_time/$p.cpp"
  if [ ! -f "$src" ]; then
    echo "no such program: $src" >&2
    exit 1
  fi
  best_wall=""
  best_cpu=""
  best_mb=""
  failed=0
  for ((i = 0; i < repeat; i++)); do
    # shellcheck disable=SC2086 # flags are a list
    if ! /usr/bin/time -f '%e %M %U %S' -o "$work/time" \
        "$cxx" $flags -I"$include" -c "$src" -o "$work/$p.o" 2>"$work/err"; then
      failed=1
      break
    fi
    read -r wall kb user sys <"$work/time"
    mb=$((kb / 1024))
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    if [ -z "$best_wall" ] || awk -v a="$wall" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
      best_wall="$wall"
      best_mb="$mb"
    fi
    if [ -z "$best_cpu" ] || awk -v a="$cpu" -v b="$best_cpu" 'BEGIN { exit !(a < b) }'; then
      best_cpu="$cpu"
    fi
  done
  read -r t_wall t_mb <<<"$(target_of "$p")"
  target=""
  if [ "$t_wall" != "-" ]; then target="<= $t_wall s"; fi
  if [ "$t_mb" != "-" ]; then target="$target, <= $t_mb MB"; fi
  if [ "$failed" = 1 ]; then
    printf '%-22s %9s %8s %10s   %s\n' "$p" "-" "-" "-" "does not compile with these headers ($(grep -m1 -o 'error: .*' "$work/err" | cut -c1-60))"
    continue
  fi
  verdict=""
  if [ "$t_wall" != "-" ]; then
    if awk -v a="$best_wall" -v b="$t_wall" 'BEGIN { exit !(a <= b) }' &&
       { [ "$t_mb" = "-" ] || [ "$best_mb" -le "$t_mb" ]; }; then
      verdict=" (met)"
    else
      verdict=" (NOT met)"
    fi
  fi
  printf '%-22s %9s %8s %10s   %s%s\n' "$p" "$best_wall" "$best_cpu" "$best_mb" "$target" "$verdict"
  walls["$p"]="$best_wall"
  cpus["$p"]="$best_cpu"
done

# With the compiled kernels, a file with one skinning call against a file that only includes.
if [ "$compiled" = 1 ] && [ -n "${walls[skin_general]:-}" ] && [ -n "${walls[include_all]:-}" ]; then
  awk -v sw="${walls[skin_general]}" -v iw="${walls[include_all]}" \
      -v sc="${cpus[skin_general]}" -v ic="${cpus[include_all]}" 'BEGIN {
    r = sw / iw; rc = sc / ic
    printf "\nskin_general / include_all: %.2fx wall, %.2fx cpu (target <= 1.5x)%s\n", r, rc, (r <= 1.5 ? " (met)" : " (NOT met)")
  }'
fi
