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
Each output starts with #line, so a compiler error names the Markdown file and line.

    doc_snippets.py OUT_DIR FILE.md...    prints one line per file written; stale files removed
"""
import os
import re
import sys

FENCE = re.compile(r"^```cpp\s*$")
MARKER = re.compile(r"^<!--\s*snippet:\s*(function|handler|doctest|skip)\b.*-->\s*$")
WRAPPERS = {
    "function": ("[[maybe_unused]] static void doc_snippet() {", "}"),
    "handler": ("[[maybe_unused]] static void doc_snippet(skiff::request& req, skiff::response& res) {", "}"),
}


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
    if mode == "unit":
        return f'{QUIET}#line {line} "{path}"\n{code}\n'
    if mode == "doctest":
        return f'{QUIET}{DOCTEST_MAIN}#line {line} "{path}"\n{code}\n'
    head, tail = WRAPPERS[mode]
    return f'{QUIET}#include <skiff/skiff.hpp>\n{head}\n#line {line} "{path}"\n{code}\n{tail}\nint main() {{ return 0; }}\n'


def main():
    out_dir, files = sys.argv[1], sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    written = set()
    for path in files:
        for n, (mode, line, code) in enumerate(snippets(path)):
            if mode == "skip":
                continue
            name = os.path.join(out_dir, f"{os.path.basename(path).replace('.', '_')}_{n}.cpp")
            text = render(os.path.abspath(path), mode, line, code)
            if not os.path.exists(name) or open(name).read() != text:  # unchanged: no rebuild
                open(name, "w").write(text)
            written.add(name)
            print(name)
    for old in os.listdir(out_dir):
        if os.path.join(out_dir, old) not in written:
            os.remove(os.path.join(out_dir, old))
    if not written:
        sys.exit("no ```cpp blocks found")


if __name__ == "__main__":
    main()
