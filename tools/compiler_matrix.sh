#!/usr/bin/env bash
# The supported compilers, each in C++17 and C++20, warning-free: g++ 11 and 12, clang++ 14
# and 16 (Debian 12 packages). Each compiles, against single_include/ only and with
# -Wall -Wextra -Wpedantic -Werror, what a user compiles: the examples, the header alone
# (twice: its guard), two translation units linked together, and the -fno-exceptions program.
# g++ builds C++17 at -O2 (its optimiser warns too: -Wmaybe-uninitialized, -Wstringop-*);
# clang++ checks C++17 with -fsyntax-only (clang's warnings come from its front end); both link
# and run the last two at -O2. C++20 is checked with -fsyntax-only, since what a standard
# changes is the front end's, and by the newest compiler of each family (g++ 12, clang++ 16),
# whose front ends are the strictest. The clang++ compilers also check the other examples,
# which the clang preset leaves out to save their optimised builds.
# Not the doctest suites: those run in the presets, and this stays within minutes on 2 cores.
# Usage: tools/compiler_matrix.sh [compiler ...]   (default: all four; tools/test.sh installs them)
set -euo pipefail
cd "$(dirname "$0")/.."

compilers=("$@")
((${#compilers[@]})) || compilers=(g++-11 g++-12 clang++-14 clang++-16)
out=build/compiler-matrix
rm -rf "$out"
mkdir -p "$out"
printf '#include <skiff/skiff.hpp>\n#include <skiff/skiff.hpp>\nint main() { return 0; }\n' >"$out/header_twice.cpp"

# One job: compiler, standard, name, then the compiler arguments. Prints one line; fails loudly.
build_one() {
    local cxx=$1 std=$2 name=$3
    shift 3
    local exe="$out/$cxx-c++$std-$name" log="$out/$cxx-c++$std-$name.log"
    local mode=(-O2 -o "$exe" -pthread) runs=no
    [[ $name == two_translation_units || $name == no_exceptions ]] && runs=yes
    [[ $std == 17 && $name != *-syntax && ($cxx == g++* || $runs == yes) ]] || mode=(-fsyntax-only)
    if ! "$cxx" -std="c++$std" -Wall -Wextra -Wpedantic -Werror -Isingle_include "$@" "${mode[@]}" >"$log" 2>&1; then
        echo "FAIL $cxx c++$std $name"; cat "$log"; return 1
    fi
    if [[ $std == 17 && $runs == yes ]] && ! "$exe" >>"$log" 2>&1; then
        echo "FAIL (run) $cxx c++$std $name"; cat "$log"; return 1
    fi
    echo "ok   $cxx c++$std $name"
}
export -f build_one
export out

jobs_list() {
    local cxx std ex
    for cxx in "${compilers[@]}"; do
        command -v "$cxx" >/dev/null || { echo "compiler_matrix: $cxx not found (Debian: apt-get install ${cxx/clang++/clang})" >&2; exit 1; }
        for std in 17 20; do
            # C++20 changes the front end: the newest of each family checks it (see the top).
            [[ $std == 20 && ($cxx == g++-11 || $cxx == clang++-14) ]] && continue
            for ex in hello routes sharded annotated_loop; do echo "$cxx $std $ex examples/$ex.cpp"; done
            if [[ $cxx == clang++* && $std == 17 ]]; then
                for ex in deferred sse upload middleware static_site sqlite_store; do echo "$cxx $std $ex-syntax examples/$ex.cpp"; done
            fi
            echo "$cxx $std header_twice $out/header_twice.cpp"
            echo "$cxx $std two_translation_units tests/compile/two_translation_units/first.cpp tests/compile/two_translation_units/second.cpp"
            echo "$cxx $std no_exceptions -fno-exceptions tests/compile/no_exceptions.cpp"
        done
    done
}
list=$(jobs_list)
start=$SECONDS
# shellcheck disable=SC2016
xargs -P "$(nproc)" -L 1 bash -c 'build_one "$@"' _ <<<"$list"
echo "== compiler matrix: $(wc -l <<<"$list") builds passed in $((SECONDS - start)) s (${compilers[*]}; C++17 and C++20)"
