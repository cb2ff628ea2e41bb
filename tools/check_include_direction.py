#!/usr/bin/env python3
"""Includes run only downward: a part of include/skiff/ includes only parts of a lower layer.

  python3 tools/check_include_direction.py [--root DIR]   (DIR holds skiff/; default include/)

What it checks: every `#include "skiff/<part>/..."` in a header of part P names a part whose
layer (LAYERS below) is lower than P's, or P itself. A header at the top (skiff/skiff.hpp and
the other files directly under skiff/) may include anything, except that the top has two
kinds (TOP below): leaves below every part, which a part may include and which include no
skiff header themselves (fwd.hpp, config.hpp, version.hpp), and umbrellas above every part,
which no part includes (skiff.hpp, testing.hpp). Exit 1 lists each upward arrow as
`path:line: <part> includes <part> (layer a <= b)`.
What it does not: forward declarations (a name, not an include), the standard library, or the
order of includes within a file.
A part listed in ONLY may include only the parts named there, whatever their layer.
Known upward arrows are listed in KNOWN with the issue that removes them; an arrow listed there
that no longer exists fails too, so the list only shrinks.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Lower numbers are nearer the system. Parts of one layer do not include each other.
LAYERS = {
    "detail": 0,       # pure helpers: character tables, buffers, descriptors
    "platform": 1,     # the operating system: sockets, listeners, threads
    "poller": 1,       # epoll and kqueue behind one interface
    "http": 1,         # messages: parser, request, response
    "router": 2,       # the trie and route table
    "server": 3,       # the engine, the policies and basic_server (issue 29 splits these)
    "files": 4,        # features beside the engine
    "async": 4,
    "middleware": 4,
    "websocket": 5,    # RFC 6455 (issue 32): above async/, whose hub carries its sends; see ONLY below
    "testing": 6,      # the test client drives a whole server
}

# Parts held to a narrower set than their layer allows: part -> the parts it may include.
# websocket/ is protocol code (handshake checks, frames, messages) with no socket and no
# engine type, reviewed and tested alone, plus upgrade.hpp, the taker that hooks it onto the
# door (server/handover.hpp) and sends through the loop's hub (async/): the one file of the
# part that names the engine.
ONLY = {
    "websocket": {"detail", "http", "poller", "server", "async"},
}

# (file under the root, included part): why it is tolerated, and what removes it.
KNOWN = {
    ("skiff/server/runners.hpp", "async"): "the hub of deferred answers; issue 29 puts it behind the door",
    ("skiff/server/server.hpp", "files"): "basic_server::serve_dir; issue 29 splits app/ from the engine",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"skiff/([a-z_]+)/')
TOP_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]skiff/([a-z_]+\.hpp)[">]')
ANY_SKIFF_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]skiff/')

# The files directly under skiff/: a leaf is below every part (a part may include it; it
# includes no skiff header), an umbrella above every part (no part includes it). fwd.hpp is a
# leaf so that a file that only declares handlers parses nothing else.
TOP = {
    "fwd.hpp": "leaf",
    "config.hpp": "leaf",
    "version.hpp": "leaf",
    "skiff.hpp": "umbrella",
    "testing.hpp": "umbrella",
}


def arrows(root):
    for path in sorted((root / "skiff").rglob("*.hpp")):
        rel = path.relative_to(root).as_posix()
        parts = rel.split("/")
        if len(parts) < 3:
            continue  # the umbrella and top-level headers may include any part
        part = parts[1]
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) != part:
                yield rel, number, part, m.group(1)


def top_problems(root):
    """A top-level file TOP does not know, a leaf that includes a skiff header, and a part
    that includes an umbrella (or a top-level file TOP does not know)."""
    for path in sorted((root / "skiff").glob("*.hpp")):
        if path.name not in TOP:
            yield f"skiff/{path.name}: top-level header with no kind in TOP"
        elif TOP[path.name] == "leaf":
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if ANY_SKIFF_INCLUDE.match(line):
                    yield f"skiff/{path.name}:{number}: a leaf includes a skiff header"
    for path in sorted((root / "skiff").rglob("*.hpp")):
        rel = path.relative_to(root).as_posix()
        if len(rel.split("/")) < 3:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = TOP_INCLUDE.match(line)
            if m and TOP.get(m.group(1)) != "leaf":
                yield f"{rel}:{number}: a part includes the umbrella skiff/{m.group(1)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=pathlib.Path, default=ROOT / "include")
    args = ap.parse_args()
    problems, seen = [], set()
    for rel, number, part, target in arrows(args.root):
        if part not in LAYERS or target not in LAYERS:
            problems.append(f"{rel}:{number}: part '{part if part not in LAYERS else target}' has no layer in LAYERS")
            continue
        if part in ONLY and target not in ONLY[part]:
            problems.append(f"{rel}:{number}: {part} includes {target} (it may include only "
                            f"{', '.join(sorted(ONLY[part]))}: ONLY)")
            continue
        if LAYERS[target] < LAYERS[part]:
            continue
        if (rel, target) in KNOWN:
            seen.add((rel, target))
            continue
        problems.append(f"{rel}:{number}: {part} includes {target} (layer {LAYERS[part]} <= {LAYERS[target]})")
    problems += top_problems(args.root)
    for rel, target in sorted(set(KNOWN) - seen):
        problems.append(f"{rel}: no longer includes {target}: remove it from KNOWN")
    for p in problems:
        print(p)
    print(f"include direction: {len(problems)} problem(s), {len(seen)} known upward arrow(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
