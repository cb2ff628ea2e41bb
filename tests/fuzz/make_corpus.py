#!/usr/bin/env python3
"""Writes the parser fuzzer's seed corpus from the parser test tables.

Every table row of tests/unit/parser_*.cpp and tests/unit/chunked.cpp,
    {"name", "input"sv, status, "checks", tight},
becomes one file in tests/fuzz/corpus/parser/: a first byte that picks the limits as
parser_fuzzer.cpp reads it (1: the tight test limits, 0: the defaults), then the input.
Run it after changing a table, and commit the result:  python3 tests/fuzz/make_corpus.py
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLES = sorted((ROOT / "tests/unit").glob("parser_*.cpp")) + [ROOT / "tests/unit/chunked.cpp"]
OUT = ROOT / "tests/fuzz/corpus/parser"

SIMPLE = {"n": 10, "r": 13, "t": 9, "v": 11, "f": 12, "a": 7, "b": 8, "\\": 92, '"': 34, "'": 39, "?": 63}


def literal(text, i):
    """Decodes the C string literal starting at text[i] == '"'; returns (bytes, index after it)."""
    out = bytearray()
    i += 1
    while text[i] != '"':
        c = text[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = text[i + 1]
        if e == "x":
            m = re.match(r"[0-9a-fA-F]+", text[i + 2:])
            out.append(int(m.group(0), 16) & 0xFF)
            i += 2 + len(m.group(0))
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", text[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
        else:
            out.append(SIMPLE[e])
            i += 2
    return bytes(out), i + 1


def row_input(line):
    """The input of one table row: the second literal, with adjacent literals joined."""
    _, i = literal(line, line.index('"'))
    i = line.index('"', i)
    data = b""
    while i < len(line) and line[i] == '"':
        part, i = literal(line, i)
        data += part
        while line[i] == " ":
            i += 1
    return data


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    count = 0
    for table in TABLES:
        rows = [l for l in table.read_text(encoding="utf-8").splitlines() if re.match(r'\s*\{"', l)]
        for n, line in enumerate(rows):
            limits = b"\x01" if line.rstrip().endswith("tight},") else b"\x00"
            (OUT / f"{table.stem}-{n:03d}").write_bytes(limits + row_input(line))
            count += 1
    print(f"wrote {count} seeds to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
