#!/usr/bin/env python3
"""Server memory under a large streamed upload: starts examples/upload with DIR in a fresh
temporary directory, PUTs SIZE bytes of zeros to /files/big from a streaming client (a python
socket writing 1 MiB at a time, Content-Length framed, or chunked with --chunked), samples the
server's VmRSS from /proc/PID/status every 20 ms, and prints the RSS before, the peak during,
and the growth. Exits 1 when the growth passes --limit-mib (default 32) or the upload fails.

Usage: tools/bench/upload_rss.py BINARY [--size-mib 1024] [--chunked] [--limit-mib 32]"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def upload(port, size, chunked):
    block = bytes(1 << 20)
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"PUT /files/big HTTP/1.1\r\nHost: t\r\n{framing}\r\n\r\n".encode())
        left = size
        while left > 0:
            piece = block[:min(left, len(block))]
            s.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n" if chunked else piece)
            left -= len(piece)
        if chunked:
            s.sendall(b"0\r\n\r\n")
        answer = b""
        s.settimeout(30)
        while b"\r\n\r\n" not in answer or not answer.endswith(str(size).encode()):
            got = s.recv(4096)
            if not got:
                break
            answer += got
        return answer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--chunked", action="store_true")
    ap.add_argument("--limit-mib", type=int, default=32)
    args = ap.parse_args()
    size = args.size_mib << 20
    port = free_port()
    root = tempfile.mkdtemp(prefix="skiff_upload_rss_")
    server = subprocess.Popen([args.binary], env=dict(os.environ, PORT=str(port), DIR=root), stdout=subprocess.PIPE)
    try:
        server.stdout.readline()  # "serving ..."
        before = rss_kib(server.pid)
        peak = [before]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], rss_kib(server.pid))
                time.sleep(0.02)

        sampler = threading.Thread(target=sample)
        sampler.start()
        start = time.monotonic()
        answer = upload(port, size, args.chunked)
        took = time.monotonic() - start
        done.set()
        sampler.join()
        stored = os.path.getsize(os.path.join(root, "big")) if os.path.exists(os.path.join(root, "big")) else -1
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)
    ok_answer = answer.startswith(b"HTTP/1.1 201") and stored == size
    growth = peak[0] - before
    status_line = answer.split(b"\r\n", 1)[0].decode(errors="replace")
    print(f"upload of {args.size_mib} MiB ({'chunked' if args.chunked else 'Content-Length'}) in {took:.1f} s: "
          f"RSS before {before} KiB, peak {peak[0]} KiB, growth {growth} KiB (limit {args.limit_mib} MiB); "
          f"stored {stored} bytes, answer {status_line!r}")
    if not ok_answer or growth > args.limit_mib * 1024:
        sys.exit(1)


if __name__ == "__main__":
    main()
