#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora from the unit-test tables.

Every table row of tests/unit/parser_*.cpp and tests/unit/chunked.cpp,
    {"name", "input"sv, status, "checks", tight},
becomes one file in tests/fuzz/corpus/parser/: a first byte that picks the limits as
parser_fuzzer.cpp reads it (1: the tight test limits, 0: the defaults), then the input.
The chunked rows' bodies (what follows the head) seed corpus/chunked/ the same way, the
rows with default limits seed corpus/connection/ (the input alone: a whole connection), and the
request lines of tests/unit/router_serve.cpp seed corpus/router/ (a method byte as
router_fuzzer.cpp reads it, then the path). corpus/websocket/ gets client frame streams built
here (a limit byte as websocket_fuzzer.cpp reads it, then the frames), one per Autobahn group.
Run it after changing a table, and commit the result:  python3 tests/fuzz/make_corpus.py
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLES = sorted((ROOT / "tests/unit").glob("parser_*.cpp")) + [ROOT / "tests/unit/chunked.cpp"]
OUT = ROOT / "tests/fuzz/corpus/parser"
CHUNKED_OUT = ROOT / "tests/fuzz/corpus/chunked"
CONNECTION_OUT = ROOT / "tests/fuzz/corpus/connection"
ROUTER_OUT = ROOT / "tests/fuzz/corpus/router"
WEBSOCKET_OUT = ROOT / "tests/fuzz/corpus/websocket"
ROUTER_METHODS = [b"GET", b"POST", b"PUT", b"DELETE", b"PATCH", b"HEAD", b"OPTIONS"]  # router_fuzzer.cpp's order

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


def fresh(directory):
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.iterdir():
        old.unlink()


def parser_and_chunked_seeds():
    fresh(OUT)
    fresh(CHUNKED_OUT)
    fresh(CONNECTION_OUT)
    count = chunked = connection = 0
    for table in TABLES:
        rows = [l for l in table.read_text(encoding="utf-8").splitlines() if re.match(r'\s*\{"', l)]
        for n, line in enumerate(rows):
            limits = b"\x01" if line.rstrip().endswith("tight},") else b"\x00"
            data = row_input(line)
            (OUT / f"{table.stem}-{n:03d}").write_bytes(limits + data)
            count += 1
            if limits == b"\x00":  # the connection fuzzer runs the server's default limits
                (CONNECTION_OUT / f"{table.stem}-{n:03d}").write_bytes(data)
                connection += 1
            head_end = data.find(b"\r\n\r\n")
            if table.stem == "chunked" and head_end >= 0:
                (CHUNKED_OUT / f"chunked-{n:03d}").write_bytes(limits + data[head_end + 4:])
                chunked += 1
    print(f"wrote {count} seeds to {OUT.relative_to(ROOT)}, {chunked} to {CHUNKED_OUT.relative_to(ROOT)}, "
          f"{connection} to {CONNECTION_OUT.relative_to(ROOT)}")


def router_seeds():
    fresh(ROUTER_OUT)
    text = (ROOT / "tests/unit/router_serve.cpp").read_text(encoding="utf-8")
    count = 0
    for n, (method, path) in enumerate(re.findall(r'^\s*\{"[^"]*",\s*"([A-Z]+) (/[^" ]*)"', text, re.M)):
        m = method.encode()
        pick = ROUTER_METHODS.index(m) if m in ROUTER_METHODS else 0
        (ROUTER_OUT / f"router_serve-{n:03d}").write_bytes(bytes([pick]) + path.encode())
        count += 1
    # Paths for the fuzzer's own route set: precedence, backtracking, wildcards, escapes.
    extra = ["/users/new", "/users/7/posts/latest", "/users/7/posts/9", "/a/b/c", "/a/x/c", "/a/b/y", "/x/static",
             "/x/a/b", "/files/", "/files", "/files/a/b", "/files/upload", "/deep/a/b/c/d/e/f/g/h", "/users/%41",
             "/users/%zz", "/users/a%2Fb", "/files/%2e%2e/secret", "/files/../secret", "/users//", "//static"]
    for n, path in enumerate(extra):
        for pick in (0, 1, 3):  # GET, POST, DELETE
            (ROUTER_OUT / f"extra-{n:03d}-{pick}").write_bytes(bytes([pick]) + path.encode())
            count += 1
    print(f"wrote {count} seeds to {ROUTER_OUT.relative_to(ROOT)}")


def ws_frame(first, payload, key=b"\x37\xfa\x21\x3d", length=None):
    """A masked client frame (RFC 6455 §5.2); `length` forces a longer length form (16 or 64)."""
    n = len(payload)
    form = length or (7 if n < 126 else 16 if n <= 0xffff else 64)
    head = bytes([first])
    if form == 7:
        head += bytes([0x80 | n])
    else:
        head += bytes([0x80 | (126 if form == 16 else 127)]) + n.to_bytes(form // 8, "big")
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def websocket_seeds():
    fresh(WEBSOCKET_OUT)
    text, binary, cont, close, ping, pong = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA
    fin = 0x80
    kosme = "κόσμε".encode()
    seeds = {
        "1-text": ws_frame(fin | text, b"Hello") + ws_frame(fin | binary, bytes(range(200))),
        "1-long-forms": ws_frame(fin | text, b"abc", length=16) + ws_frame(fin | binary, b"x" * 300, length=64),
        "2-pings": ws_frame(fin | ping, b"ping") + ws_frame(fin | pong, b"") + ws_frame(fin | ping, b"p" * 125),
        "3-rsv": ws_frame(fin | 0x40 | text, b"compressed?"),
        "4-opcode": ws_frame(fin | text, b"ok") + ws_frame(fin | 0x3, b""),
        "5-fragments": ws_frame(text, b"frag") + ws_frame(fin | ping, b"mid") + ws_frame(cont, b"me")
                       + ws_frame(fin | cont, b"nt"),
        "5-bad-order": ws_frame(fin | cont, b"orphan") + ws_frame(text, b"a") + ws_frame(fin | text, b"b"),
        "6-utf8-split": ws_frame(text, kosme[:3]) + ws_frame(cont, kosme[3:4]) + ws_frame(fin | cont, kosme[4:]),
        "6-utf8-bad": ws_frame(fin | text, kosme + b"\xed\xa0\x80edited"),
        "7-close": ws_frame(fin | close, (1000).to_bytes(2, "big") + b"bye") + ws_frame(fin | text, b"late"),
        "7-close-bad": ws_frame(fin | close, (1005).to_bytes(2, "big")),
        "9-big": ws_frame(text, b"a" * 70000) + ws_frame(fin | cont, "€".encode() * 100),
    }
    for n, (name, stream) in enumerate(seeds.items()):
        pick = bytes([n * 8 + (7 if name == "9-big" else 5 + n % 3)])  # limit: 1000, 65536 or 1 MiB
        (WEBSOCKET_OUT / f"websocket-{name}").write_bytes(pick + stream)
    print(f"wrote {len(seeds)} seeds to {WEBSOCKET_OUT.relative_to(ROOT)}")


def main():
    parser_and_chunked_seeds()
    router_seeds()
    websocket_seeds()


if __name__ == "__main__":
    main()
