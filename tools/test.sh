#!/usr/bin/env bash
# The test command (the README's first screen, command 2). On a fresh Debian 12 machine it installs what the
# chosen tier uses and nothing more, then builds and runs it.
#
#   tools/test.sh          the full run, what CI runs: every preset below, then the compiler matrix
#   tools/test.sh quick    the everyday tier: the doctest suites under ASan + UBSan (g++, the
#                          asan-ubsan preset's build) and the code-shape, include-direction and
#                          amalgamation checks; the full run's asan-ubsan step adds the examples
#                          run from outside, the compile checks and the fuzz replay
#   tools/test.sh NAME...  the named presets (CMakePresets.json) and/or "matrix"
#
# The full run's presets: asan-ubsan (all of it), debug (g++: consumer projects, documentation
# snippets, benchmark tools, symbol checks), single-header (g++ -O2 against single_include/),
# clang (clang++: suites, fuzz replay and a bounded libFuzzer run), tsan (clang++), kqueue-shim
# (g++ over the Linux kqueue shim), system (real nginx, HAProxy, curl, ab, wrk and Chromium),
# then the compiler matrix (tools/compiler_matrix.sh: g++ 11 and 12, clang++ 14 and 16, C++17
# and C++20, warning-free). ccache is used where installed (not installed by this script).
# Env: FUZZ_SECONDS (default 30), the libFuzzer run of the clang preset.
set -euo pipefail
cd "$(dirname "$0")/.."

# What each step needs beyond the base (Debian 12 package names).
base=(cmake ninja-build g++ doctest-dev python3 libsqlite3-dev)
declare -A needs=(
  [asan-ubsan]="python3-websockets"
  [debug]="git pkg-config"
  [single-header]="python3-websockets"
  [release]=""
  [clang]="clang libclang-rt-14-dev"
  [tsan]="clang libclang-rt-14-dev llvm-14"
  [kqueue-shim]=""
  [system]="nginx-light haproxy apache2-utils wrk curl chromium nodejs node-ws golang-go golang-github-gorilla-websocket-dev"
  [matrix]="g++-11 g++-12 clang-14 clang-16"
)

steps=("$@")
((${#steps[@]})) || steps=(asan-ubsan debug single-header clang tsan kqueue-shim system matrix)
tier=full
[[ ${steps[*]} == quick ]] && { tier=quick; steps=(asan-ubsan); }

packages=("${base[@]}")
for step in "${steps[@]}"; do
  [[ -v "needs[$step]" ]] || { echo "tools/test.sh: unknown step '$step' (a preset, matrix or quick)" >&2; exit 2; }
  read -r -a extra <<<"${needs[$step]}"
  packages+=("${extra[@]}")
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  as_root=(); [[ $(id -u) -eq 0 ]] || as_root=(sudo)
  "${as_root[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc)
start=$SECONDS
for step in "${steps[@]}"; do
  echo "== $step ($((SECONDS - start)) s so far)"
  if [[ $step == matrix ]]; then
    tools/compiler_matrix.sh
    continue
  fi
  cmake --preset "$step" >/dev/null
  if [[ $tier == quick ]]; then
    cmake --build --preset "$step" -j "$jobs" --target unit_tests integration_tests
    ctest --preset "$step" -L quick
    continue
  fi
  cmake --build --preset "$step" -j "$jobs"
  ctest --preset "$step"
  # A bounded fuzz run on top of the replayed seeds (the clang preset builds the fuzzers).
  if [[ $step == clang ]]; then
    build/clang/tests/fuzz/run_fuzz_smoke.sh "${FUZZ_SECONDS:-30}"
  fi
done
echo "== all tests passed ($tier): ${steps[*]} in $((SECONDS - start)) s"
