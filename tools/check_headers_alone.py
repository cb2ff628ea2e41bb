#!/usr/bin/env python3
"""Every header compiles on its own, twice in one file (its include guard works), warning-free.

What it checks: that each header includes what it uses, so a user may include any part alone.
What it does not: code generation (-fsyntax-only: what a header alone can get wrong is in the
front end; the suites and examples compile the code for real), or headers together.

Usage: check_headers_alone.py --cxx g++ [-I DIR ...] [--flag=-DX ...] [--jobs N] HEADER ...
A HEADER is written as it is included (skiff/http/url.hpp). Exits 1 naming each that fails.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys

WARNINGS = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]


def check(cxx, std, includes, flags, header):
    source = f"#include <{header}>\n#include <{header}>\n"
    cmd = [cxx, f"-std={std}", "-fsyntax-only", *WARNINGS, *flags, *(f"-I{d}" for d in includes), "-x", "c++", "-"]
    run = subprocess.run(cmd, input=source, capture_output=True, text=True)
    return header, run.returncode, run.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--std", default="c++17")
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("--flag", dest="flags", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("headers", nargs="+")
    args = ap.parse_args()
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = [pool.submit(check, args.cxx, args.std, args.includes, args.flags, h) for h in args.headers]
        for job in jobs:
            header, rc, err = job.result()
            if rc != 0:
                failed += 1
                print(f"FAIL {header}\n{err}")
    print(f"{len(args.headers) - failed} of {len(args.headers)} headers compile alone ({args.cxx}, {args.std})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
