#!/usr/bin/env python3
"""End-to-end check of examples/annotated_loop: start it on a free port, then check what a
user of it would: GET / and a 404 with Date and Content-Length, keep-alive, pipelined
requests answered in order in one read, a request split across writes, a malformed request
answered 400 and the connection closed. Usage: annotated_loop_test.py BINARY"""
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_until(sock, predicate, limit=5.0):
    sock.settimeout(limit)
    data = b""
    end = time.monotonic() + limit
    while not predicate(data) and time.monotonic() < end:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def main():
    port = free_port()
    server = subprocess.Popen([sys.argv[1]], env=dict(os.environ, PORT=str(port)), stdout=subprocess.PIPE)
    try:
        expect(b"serving" in server.stdout.readline(), "the example says where it serves")
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            got = read_until(s, lambda d: d.endswith(b"Hello, World!"))
            expect(got.startswith(b"HTTP/1.1 200 OK\r\n"), f"GET / is 200: {got!r}")
            expect(b"\r\nDate: " in got and b"\r\nContent-Length: 13\r\n" in got, f"Date and length: {got!r}")
            s.sendall(b"GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n")  # the same connection: keep-alive
            got = read_until(s, lambda d: d.endswith(b"Not Found\n"))
            expect(got.startswith(b"HTTP/1.1 404 Not Found\r\n"), f"an unknown path is 404: {got!r}")
            s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n" * 3)  # pipelined
            got = read_until(s, lambda d: d.count(b"Hello, World!") == 3)
            expect(got.count(b"HTTP/1.1 200 OK") == 3, f"three pipelined answers: {got!r}")
            s.sendall(b"GET / HT")  # a request in two pieces
            time.sleep(0.05)
            s.sendall(b"TP/1.1\r\nHost: t\r\n\r\n")
            got = read_until(s, lambda d: d.endswith(b"Hello, World!"))
            expect(got.startswith(b"HTTP/1.1 200 OK"), f"a split request is answered: {got!r}")
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n")
            got = read_until(s, lambda d: False, limit=3.0)
            expect(got.startswith(b"HTTP/1.1 400 Bad Request\r\n"), f"malformed is 400: {got!r}")
            expect(b"Connection: close" in got, "and says it closes")
        expect(server.poll() is None, "the server is still running")
        print("annotated_loop: 7 passed, 0 failed")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
