#!/usr/bin/env python3
"""What including skiff costs a user's build: wall time and peak compiler memory to compile
examples/hello.cpp from the single header, beside

  baseline  a file that includes only the standard and system headers skiff itself includes
            (taken from single_include/skiff/skiff.hpp, so it follows the header), with an
            empty main: the floor any header-only server built on them pays;
  fwd only  a file that includes only single_include/skiff/fwd.hpp and declares a handler and
            a route-registering function, as a project's header of handler declarations does
            (the issue-29 target: at most 1.3x the baseline);
  hello, server compiled elsewhere
            examples/hello.cpp with SKIFF_EXTERN_SERVER(skiff::single) after the include
            (separate compilation, docs/api.md): what main.cpp of a project that compiles its
            server once costs (the one file that compiles it pays more than hello: every
            member of the server);
  beast     Boost.Beast's contract server (tools/bench/peers/beast/main.cpp), when Boost is
            installed (Debian: libboost-dev).

Each is compiled ROUNDS times in rotated order with the same flags (g++ -std=c++17 -O2, no
linking); the figures are medians with min-max, and the ratios are of medians from this one
run, since absolute times do not carry between machines.

    tools/bench/compile_time.py                 # 5 rounds, g++
    tools/bench/compile_time.py --rounds 9 --cxx clang++
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BASELINE = "baseline (skiff's std and system headers)"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SINGLE = os.path.join(ROOT, "single_include", "skiff", "skiff.hpp")


def baseline_source():
    """Every <...> include of the single header, each once, in the order it appears. The
    header guards its platform includes with #if; the baseline keeps those on this platform,
    which is what the user's compiler parses."""
    seen, lines = set(), []
    for line in open(SINGLE):
        m = re.match(r"\s*#\s*include\s*(<[^>]+>)", line)
        if m and m.group(1) not in seen and "sys/event.h" not in m.group(1):
            seen.add(m.group(1))
            lines.append(f"#include {m.group(1)}")
    return "\n".join(lines) + "\nint main() { return 0; }\n"


FWD_ONLY_SOURCE = """\
#include <skiff/fwd.hpp>

void hello(skiff::request& req, skiff::response& res);
void add_routes(skiff::server& app);

int main() { return 0; }
"""


def hello_extern_source():
    """examples/hello.cpp, told that its server is compiled in another file."""
    include = "#include <skiff/skiff.hpp>\n"
    text = open(os.path.join(ROOT, "examples", "hello.cpp")).read()
    if include not in text:
        raise RuntimeError("examples/hello.cpp no longer includes <skiff/skiff.hpp> as expected")
    return text.replace(include, include + "SKIFF_EXTERN_SERVER(skiff::single);\n", 1)


def compile_once(cxx, source, include_dirs):
    """Wall seconds and peak resident MiB of one compile to an object file."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [cxx, "-std=c++17", "-O2", "-c", source, "-o", os.path.join(tmp, "out.o")]
        cmd += [f"-I{d}" for d in include_dirs]
        start = time.monotonic()
        pid = subprocess.Popen(cmd).pid
        _, status, usage = os.wait4(pid, 0)
        wall = time.monotonic() - start
        if status != 0:
            raise RuntimeError("compile failed: " + " ".join(cmd))
        return wall, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cxx", default="g++")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "baseline.cpp")
        with open(base, "w") as f:
            f.write(baseline_source())
        single_dir = os.path.join(ROOT, "single_include")
        cells = {
            "skiff hello (single header)": (os.path.join(ROOT, "examples", "hello.cpp"), [single_dir]),
            BASELINE: (base, []),
        }
        if os.path.exists(os.path.join(single_dir, "skiff", "fwd.hpp")):
            fwd_only = os.path.join(tmp, "fwd_only.cpp")
            with open(fwd_only, "w") as f:
                f.write(FWD_ONLY_SOURCE)
            cells["handler declarations (skiff/fwd.hpp only)"] = (fwd_only, [single_dir])
        hello_extern = os.path.join(tmp, "hello_extern.cpp")
        with open(hello_extern, "w") as f:
            f.write(hello_extern_source())
        cells["hello, server compiled elsewhere (SKIFF_EXTERN_SERVER)"] = (hello_extern, [single_dir])
        beast = os.path.join(HERE, "peers", "beast", "main.cpp")
        if os.path.exists("/usr/include/boost/beast.hpp"):
            cells["Boost.Beast contract server"] = (beast, [])
        else:
            print("Boost.Beast: not measured (install libboost-dev)")
        results = {name: [] for name in cells}
        names = list(cells)
        for r in range(args.rounds):
            for name in names[r % len(names):] + names[: r % len(names)]:
                results[name].append(compile_once(args.cxx, *cells[name]))
    hello = "skiff hello (single header)"
    med = {n: (statistics.median(w for w, _ in v), statistics.median(m for _, m in v)) for n, v in results.items()}
    print(f"{args.cxx} -std=c++17 -O2 -c, {args.rounds} rounds, median (min-max)\n")
    print("| file | wall s | peak MiB | this / baseline (time) | skiff hello / this (time) |")
    print("|---|---:|---:|---:|---:|")
    for n, v in results.items():
        walls = [w for w, _ in v]
        print(f"| {n} | {med[n][0]:.2f} ({min(walls):.2f}-{max(walls):.2f}) | {med[n][1]:.0f} | "
              f"{med[n][0] / med[BASELINE][0]:.2f}x | {med[hello][0] / med[n][0]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
