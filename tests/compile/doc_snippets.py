#!/usr/bin/env python3
"""Extracts every ```cpp block of the given Markdown files into C++ files under OUT_DIR, so the
build compiles the documentation's code against the headers (tests/compile/CMakeLists.txt).

A block is a whole translation unit unless the line just above its fence says otherwise:
  <!-- snippet: function -->   statements: wrapped in a function, after #include <skiff/skiff.hpp>
                               (and an empty main, since every snippet is linked)
  <!-- snippet: handler -->    statements with `req` and `res` in scope (a handler's body)
  <!-- snippet: doctest -->    a doctest test file: given doctest's main, and linked with doctest
                               (left out where doctest is not installed)
  <!-- snippet: skip -->       not compiled (say why beside it; keep these rare)
A whole block is a file of its own; a document's function and handler blocks share one file
(<doc>_statements.cpp), each in a function of its own, since statements cannot reach each
other across functions and every file more parses the whole header again (24 blocks, about
seven seconds each, were most of the debug build). Each block starts with #line, so a
compiler error names the Markdown file and line.

    doc_snippets.py OUT_DIR FILE.md...    prints one line per file written; stale files removed
"""
import os
import re
import sys

FENCE = re.compile(r"^```cpp\s*$")
MARKER = re.compile(r"^<!--\s*snippet:\s*(function|handler|doctest|skip)\b.*-->\s*$")
PARAMETERS = {"function": "", "handler": "skiff::request& req, skiff::response& res"}


def snippets(path):
    """Yields (mode, first line number, code) for each ```cpp block of one file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            above = MARKER.match(lines[i - 1]) if i > 0 else None
            start, i = i + 1, i + 1
            while i < len(lines) and not lines[i].startswith("```"):
                i += 1
            if i == len(lines):
                sys.exit(f"{path}:{start}: a ```cpp block that never closes")
            yield (above.group(1) if above else "unit"), start + 1, "\n".join(lines[start:i])
        i += 1


# Documentation names results it does not use (`int code = app.run();`): that is not a fault
# here. Pragmas rather than flags, since clang lets a later -Wall undo an earlier -Wno-.
QUIET = "".join(f'#pragma GCC diagnostic ignored "-W{w}"\n'
                for w in ("unused-variable", "unused-but-set-variable", "unused-parameter", "unused-function"))


DOCTEST_MAIN = "#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n"


def render(path, mode, line, code):
    """A whole block: a unit as written, a doctest block with doctest's main."""
    main = DOCTEST_MAIN if mode == "doctest" else ""
    return f'{QUIET}{main}#line {line} "{path}"\n{code}\n'


def render_statements(path, blocks):
    """One file for a document's function and handler blocks: each block a function."""
    parts = [f"{QUIET}#include <skiff/skiff.hpp>\n"]
    for n, mode, line, code in blocks:
        parts.append(f'[[maybe_unused]] static void doc_snippet_{n}({PARAMETERS[mode]}) {{\n#line {line} "{path}"\n'
                     f"{code}\n}}\n")
    parts.append("int main() { return 0; }\n")
    return "".join(parts)


def write(name, text, written):
    if not os.path.exists(name) or open(name).read() != text:  # unchanged: no rebuild
        open(name, "w").write(text)
    written.add(name)
    print(name)


def main():
    out_dir, files = sys.argv[1], sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    written = set()
    for path in files:
        stem = os.path.join(out_dir, os.path.basename(path).replace(".", "_"))
        statements = []
        for n, (mode, line, code) in enumerate(snippets(path)):
            if mode in PARAMETERS:
                statements.append((n, mode, line, code))
            elif mode != "skip":
                write(f"{stem}_{n}.cpp", render(os.path.abspath(path), mode, line, code), written)
        if statements:
            write(f"{stem}_statements.cpp", render_statements(os.path.abspath(path), statements), written)
    for old in os.listdir(out_dir):
        if os.path.join(out_dir, old) not in written:
            os.remove(os.path.join(out_dir, old))
    if not written:
        sys.exit("no ```cpp blocks found")


if __name__ == "__main__":
    main()
