#!/usr/bin/env bash
# The test command (README "Two commands"): on a fresh Debian 12 machine it installs what is
# missing, then builds and runs every test configuration:
#   debug (g++), asan-ubsan (g++), single-header (g++), clang (clang++, fuzz replay + smoke),
#   tsan (clang++), kqueue-shim (g++), system (real proxies and clients: tests/system/), then
#   the compiler matrix (tools/compiler_matrix.sh: g++ 11 and 12, clang++ 14 and 16, C++17
#   and C++20, warning-free).
# Usage: tools/test.sh [preset ...]   (default: all of the above; "matrix" names the matrix step;
#   "quick" is a preset of about a minute)   Env: FUZZ_SECONDS (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ clang libclang-rt-14-dev llvm-14 doctest-dev libsqlite3-dev python3 curl git pkg-config
          g++-11 g++-12 clang-14 clang-16
          nginx-light haproxy apache2-utils wrk chromium)  # the last five: the system preset
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

presets=("$@")
((${#presets[@]})) || presets=(debug asan-ubsan single-header clang tsan kqueue-shim system matrix)
jobs=$(nproc)
for preset in "${presets[@]}"; do
  echo "== $preset"
  if [[ $preset == matrix ]]; then
    tools/compiler_matrix.sh
    continue
  fi
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset"
done

# A bounded fuzz run on top of the replayed seeds (the clang preset builds the fuzzers).
if [[ " ${presets[*]} " == *" clang "* && -x build/clang/tests/fuzz/run_fuzz_smoke.sh ]]; then
  build/clang/tests/fuzz/run_fuzz_smoke.sh "${FUZZ_SECONDS:-60}"
fi
echo "== all tests passed"
