#!/usr/bin/env python3
"""End-to-end check of examples/upload, as a user would check it: start it on a free port with
DIR set to a fresh directory, then PUT 3 MiB to /files/big.bin (201, the byte count as text,
the same bytes on disk); PUT a chunked body; POST a multipart form with a field and two files
(the JSON list, the files on disk); PUT names with "..", an encoded "/", an encoded NUL, CR LF
or 256 bytes, a form file named "../x" or 300 bytes long, a form naming a file twice and one
with 17 files, all refused 400 with nothing written (outside DIR, or at all). Then what
copying the example must not break: two uploads to one name at once (the file is one whole
body, the one that finished last, never a mix); a client that abandons an upload to a name
that holds a stored file (the stored file stays); a body over MAX_BYTES, declared or chunked
(413, nothing stored); and no temporary file left in DIR.
Usage: upload_test.py BINARY"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from annotated_loop_test import expect, free_port, read_until  # noqa: E402


def response_complete(data):
    if b"\r\n\r\n" not in data:
        return False
    head, body = data.split(b"\r\n\r\n", 1)
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":", 1)[1])
    return False


def exchange(port, head, body_pieces=()):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(head)
        for piece in body_pieces:
            s.sendall(piece)
        data = read_until(s, response_complete, 10.0)
    status = int(data[9:12]) if len(data) >= 12 else 0
    head, _, body = data.partition(b"\r\n\r\n")
    return status, head, body


def put(port, path, body, chunk=256 * 1024):
    head = f"PUT {path} HTTP/1.1\r\nHost: t\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    return exchange(port, head, (body[i:i + chunk] for i in range(0, len(body), chunk)))


def put_chunked(port, path, body, chunk=10_000):
    head = f"PUT {path} HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    pieces = [b"%x\r\n" % len(body[i:i + chunk]) + body[i:i + chunk] + b"\r\n" for i in range(0, len(body), chunk)]
    return exchange(port, head, pieces + [b"0\r\n\r\n"])


def multipart(parts, boundary="skiffBoundary42"):
    out = b""
    for name, filename, data in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
        out += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n".encode()
        if filename is not None:
            out += b"Content-Type: application/octet-stream\r\n"
        out += b"\r\n" + data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode(), boundary


def post_form(port, parts):
    body, boundary = multipart(parts)
    head = (f"POST /form HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    return exchange(port, head, (body[i:i + 65536] for i in range(0, len(body), 65536)))


def status_of(data):
    return int(data[9:12]) if len(data) >= 12 else 0


def same_name_at_once(port, target):
    """A starts, B uploads all of its body to the same name, then A finishes."""
    first, second = os.urandom(600_000), os.urandom(500_000)
    head = "PUT /files/same.bin HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port)) as a:
        a.sendall(head.format(len(first)).encode() + first[:300_000])
        time.sleep(0.2)  # so the server has opened A's file before B starts (in the old code too)
        status, _, body = put(port, "/files/same.bin", second)
        expect(status == 201, f"the second upload to same.bin: {status} {body!r}")
        a.sendall(first[300_000:])
        data = read_until(a, response_complete, 10.0)
    expect(status_of(data) == 201, f"the first upload to same.bin: {data[:40]!r}")
    with open(os.path.join(target, "same.bin"), "rb") as f:
        stored = f.read()
    expect(stored == first, f"same.bin is the upload that finished last, whole ({len(stored)} bytes, "
                            f"first: {stored == first}, second: {stored == second})")


def abandoned_keeps_stored(port, target):
    kept = os.urandom(100_000)
    status, _, _ = put(port, "/files/kept.bin", kept)
    expect(status == 201, f"PUT kept.bin: {status}")
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"PUT /files/kept.bin HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 50_000)
        time.sleep(0.2)  # the server has begun this upload before its client goes
    for _ in range(100):  # the server notices the close on its next turn
        if not [n for n in os.listdir(target) if n.startswith(".")]:
            break
        time.sleep(0.05)
    with open(os.path.join(target, "kept.bin"), "rb") as f:
        expect(f.read() == kept, "an abandoned upload left the file stored before it as it was")


def over_the_limit(port, target, limit):
    status, _, _ = exchange(port, f"PUT /files/over.bin HTTP/1.1\r\nHost: t\r\nContent-Length: {limit + 1}\r\n\r\n"
                                  .encode())
    expect(status == 413, f"a declared body over MAX_BYTES: {status}, not 413")
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"PUT /files/over.bin HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b"%x\r\n" % 65536 + b"y" * 65536 + b"\r\n"
        try:
            for _ in range(limit // 65536 + 8):
                s.sendall(piece)
        except OSError:
            pass  # answered and closed before all of it was sent
        data = read_until(s, response_complete, 10.0)
    expect(status_of(data) == 413, f"a chunked body over MAX_BYTES: {data[:40]!r}, not 413")
    expect(not os.path.exists(os.path.join(target, "over.bin")), "nothing is stored for a body over the limit")


def main():
    port = free_port()
    root = tempfile.mkdtemp(prefix="skiff_upload_")
    target = os.path.join(root, "files")  # created by the example
    limit = 4 * 1024 * 1024
    env = dict(os.environ, PORT=str(port), DIR=target, MAX_BYTES=str(limit))
    server = subprocess.Popen([sys.argv[1]], env=env, stdout=subprocess.PIPE)
    passed = 0
    try:
        expect(b"serving" in server.stdout.readline(), "the example says where it serves")
        big = os.urandom(3 * 1024 * 1024)
        status, _, body = put(port, "/files/big.bin", big)
        expect(status == 201 and body == str(len(big)).encode(), f"PUT 3 MiB: {status} {body!r}")
        with open(os.path.join(target, "big.bin"), "rb") as f:
            expect(f.read() == big, "the stored file is the bytes sent")
        passed += 1

        small = os.urandom(123_457)
        status, _, body = put_chunked(port, "/files/chunked.bin", small)
        expect(status == 201 and body == str(len(small)).encode(), f"PUT chunked: {status} {body!r}")
        with open(os.path.join(target, "chunked.bin"), "rb") as f:
            expect(f.read() == small, "the chunked file is the bytes sent")
        passed += 1

        a, b = b"hello\n", os.urandom(200_000)
        status, head, body = post_form(port, [("field", None, b"value"), ("one", "a.txt", a), ("two", "b.bin", b)])
        expect(status == 200 and b"application/json" in head, f"POST /form: {status} {head!r}")
        listed = json.loads(body)
        expect(listed == [{"name": "field", "filename": "", "size": 5},
                          {"name": "one", "filename": "a.txt", "size": len(a)},
                          {"name": "two", "filename": "b.bin", "size": len(b)}], f"the form's parts: {listed}")
        for name, data in (("a.txt", a), ("b.bin", b)):
            with open(os.path.join(target, name), "rb") as f:
                expect(f.read() == data, f"{name} is the part's content")
        passed += 1

        for path in ("/files/..", "/files/%2e%2e", "/files/a%2Fb", "/files/a%00b", "/files/..x", "/files/.upload-x",
                     "/files/%0d%0aX", "/files/" + "n" * 256):
            status, _, _ = put(port, path, b"nope")
            expect(status == 400, f"PUT {path}: {status}, not 400")
        status, _, _ = post_form(port, [("f", "../escaped.txt", b"nope")])
        expect(status == 400, f"a form file named ../escaped.txt: {status}, not 400")
        expect(not os.path.exists(os.path.join(root, "escaped.txt")), "nothing was written outside DIR")
        status, _, _ = post_form(port, [("f", "first.txt", b"1"), ("g", "x" * 300, b"2")])
        expect(status == 400, f"a form with a 300-byte filename: {status}, not 400")
        status, _, _ = post_form(port, [("f", "twice.txt", b"1"), ("g", "twice.txt", b"2")])
        expect(status == 400, f"a form naming one file twice: {status}, not 400")
        status, _, _ = post_form(port, [(f"f{i}", f"many{i}.txt", b"x") for i in range(17)])
        expect(status == 400, f"a form with 17 files: {status}, not 400")
        expect(sorted(os.listdir(target)) == ["a.txt", "b.bin", "big.bin", "chunked.bin"],
               f"only the accepted files are in DIR: {sorted(os.listdir(target))}")
        passed += 1

        same_name_at_once(port, target)
        passed += 1
        abandoned_keeps_stored(port, target)
        passed += 1
        over_the_limit(port, target, limit)
        passed += 1
        expect(sorted(os.listdir(target)) == ["a.txt", "b.bin", "big.bin", "chunked.bin", "kept.bin", "same.bin"],
               f"the stored files, and no temporary one: {sorted(os.listdir(target))}")
        passed += 1
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)
    print(f"upload example: {passed} checks passed")


if __name__ == "__main__":
    main()
