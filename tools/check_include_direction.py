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

It also checks that the engine knows *that* a connection is handed to a feature, never to
*what*: no header of the parts in KNOWS_NO_FEATURE names a feature's type or entry point
(FEATURE_NAMES), outside comments and string literals. The user's API on response
(defer(), stream(), file()) is where a program asks for a feature, so http/ may name them
only in the files and for the names listed in ENTRY_POINTS. Exit 1 lists each as
`path:line: names the feature '<name>'`.
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
    "engine": 3,       # loop, session, writer, connection, timers, acceptor, the door
    "policy": 4,       # the connection sets, their budgets, and the runners
    "async": 5,        # features, each behind the door (engine/handover.hpp)
    "files": 5,
    "observe": 5,
    "stream": 5,
    "upload": 6,       # streamed bodies; under shared a pause waits on the hub (async/)
    "middleware": 6,   # the chain, and built-ins; concurrency_limit holds across a deferred answer (async/)
    "websocket": 6,    # RFC 6455 (issue 32): above async/, whose hub carries its sends; see ONLY below
    "app": 7,          # basic_server: what a program names
    "testing": 8,      # the test client drives a whole server
}

# Parts held to a narrower set than their layer allows: part -> the parts it may include.
# websocket/ is protocol code (handshake checks, frames, messages) with no socket and no
# engine type, reviewed and tested alone, plus taker*.hpp and upgrade.hpp, which hook it onto
# the door (engine/handover.hpp) and send through the loop's hub (async/): the files of the
# part that name the engine; the taker also sizes its socket's send buffer, as a push
# stream's is (platform/socket.hpp).
ONLY = {
    "websocket": {"detail", "http", "poller", "engine", "async", "platform"},
}

# (file under the root, included part): why it is tolerated, and what removes it.
KNOWN = {
}

# The parts below the features, and the names that belong to a feature (its types and the
# functions that only it calls); the same features the nm test of hello lists
# (tests/compile/no_feature_symbols.cmake).
KNOWS_NO_FEATURE = {"detail", "platform", "poller", "http", "router", "engine", "policy"}
FEATURE_NAMES = {
    "deferred", "deferred_state", "answer_wait", "async_hub", "push_stream", "sse_stream",
    "upload_state", "upload_route", "multipart_reader", "file_send", "file_body", "serve_dir",
    "stream_send", "metrics_writer", "metric_counter", "access_log", "websocket", "ws_taker",
    "ws_state", "thread_pool",
}
# (file under the root) -> the feature names it may use, and why.
ENTRY_POINTS = {
    "skiff/http/response.hpp": ({"deferred", "deferred_state", "file_send", "stream_send"},
                                "defer(), file() and stream() are templates that name their taker, "
                                "instantiated only in a program that calls them"),
    "skiff/http/response_access.hpp": ({"deferred_state"},
                                       "defer() parks its state on the response until the door takes it"),
    # Not an entry point: the one engine file left that names a feature, by an opaque
    # declaration only (its definition is async/deferred_state.hpp's). What removes it: the
    # hub's two answer services (forget, watch_socket) and the anchor's push ledger move into
    # async/, once answer_wait.hpp calls the hub directly rather than through loop_hub's table.
    "skiff/engine/loop_hub.hpp": ({"deferred_state"},
                                  "the hub's answer services and the anchor's push ledger take a "
                                  "deferred answer by reference, opaque here"),
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


def code_only(text):
    """The text with comments and string and character literals blanked, lines kept."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank, text, flags=re.S)


def feature_names(root):
    word = re.compile(r"\b(" + "|".join(sorted(FEATURE_NAMES)) + r")\b")
    for path in sorted((root / "skiff").rglob("*.hpp")):
        rel = path.relative_to(root).as_posix()
        parts = rel.split("/")
        if len(parts) < 3 or parts[1] not in KNOWS_NO_FEATURE:
            continue
        allowed = ENTRY_POINTS.get(rel, (set(), ""))[0]
        for number, line in enumerate(code_only(path.read_text()).splitlines(), 1):
            for m in word.finditer(line):
                if m.group(1) not in allowed:
                    yield f"{rel}:{number}: names the feature '{m.group(1)}'"


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
    problems += feature_names(args.root)
    for rel, target in sorted(set(KNOWN) - seen):
        problems.append(f"{rel}: no longer includes {target}: remove it from KNOWN")
    for p in problems:
        print(p)
    print(f"include direction: {len(problems)} problem(s), {len(seen)} known upward arrow(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
