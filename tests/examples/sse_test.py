#!/usr/bin/env python3
"""End-to-end check of examples/sse: GET /events is text/event-stream and a subscriber
receives data: N events with N increasing by one; two subscribers see the same numbers;
GET / answers Hello, World! while streams are open; a subscriber that goes away does not stop
the others. Usage: sse_test.py BINARY [POLICY]"""
import os
import re
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from annotated_loop_test import expect, free_port, read_until  # noqa: E402


def subscribe(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
    return s


def numbers(data):
    return [int(n) for n in re.findall(rb"data: (\d+)\n\n", data)]


def main():
    port = free_port()
    policy = sys.argv[2] if len(sys.argv) > 2 else "single"
    server = subprocess.Popen([sys.argv[1]], env=dict(os.environ, PORT=str(port), POLICY=policy), stdout=subprocess.PIPE)
    try:
        expect(b"serving" in server.stdout.readline(), "the example says where it serves")
        a, b, gone = subscribe(port), subscribe(port), subscribe(port)
        gone.close()
        got_a = read_until(a, lambda d: len(numbers(d)) >= 5)
        head = got_a.split(b"\r\n\r\n", 1)[0]
        expect(head.startswith(b"HTTP/1.1 200 OK\r\n"), f"events: {head!r}")
        expect(b"Content-Type: text/event-stream\r\n" in head, f"event-stream: {head!r}")
        ns = numbers(got_a)
        expect(len(ns) >= 5 and ns[0] >= 1 and ns == list(range(ns[0], ns[0] + len(ns))), f"increasing by one: {ns}")
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            hello = read_until(s, lambda d: d.endswith(b"Hello, World!"))
            expect(hello.endswith(b"Hello, World!"), f"GET / beside the streams: {hello!r}")
        got_b = read_until(b, lambda d: len(numbers(d)) >= 5)
        nb = numbers(got_b)
        expect(len(nb) >= 5 and nb == list(range(nb[0], nb[0] + len(nb))), f"second subscriber: {nb}")
        expect(set(ns) & set(nb), f"both see the same numbers: {ns} {nb}")
        a.close()
        b.close()
        expect(server.poll() is None, "the server is still running")
        print(f"sse ({policy}): 4 passed, 0 failed")
    finally:
        server.terminate()
        server.wait(timeout=15)


if __name__ == "__main__":
    main()
