#!/usr/bin/env python3
"""End-to-end check of examples/deferred, as a user would check it: start it on a free port
(under the policy given, default single), then GET / says Hello, World!; /slow/MS and
/pool/MS say "slept MS" as text/plain and not before MS ms; 200 concurrent /slow/50 are all
answered, together in well under the 10 s that blocking the loop would take; GET / is
answered while slow requests wait; pipelined requests behind a slow one come back in order;
a wait above a minute is 400, and pool tasks whose clients left give their threads back;
SIGTERM while pool tasks sleep for a minute answers them 503 and exits 0 without waiting.
Usage: deferred_test.py BINARY [POLICY]"""
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from annotated_loop_test import expect, free_port, read_until  # noqa: E402


def get(port, path, limit=5.0):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        return read_until(s, lambda d: b"\r\n\r\n" in d and len(d.split(b"\r\n\r\n", 1)[1]) >= body_length(d), limit)


def body_length(data):
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 1 << 30


def body(data):
    return data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""


def main():
    port = free_port()
    policy = sys.argv[2] if len(sys.argv) > 2 else "single"
    env = dict(os.environ, PORT=str(port), POLICY=policy)
    server = subprocess.Popen([sys.argv[1]], env=env, stdout=subprocess.PIPE)
    passed = 0
    try:
        expect(b"serving" in server.stdout.readline(), "the example says where it serves")
        got = get(port, "/")
        expect(got.startswith(b"HTTP/1.1 200 OK\r\n") and body(got) == b"Hello, World!", f"GET /: {got!r}")
        passed += 1
        for path in ("/slow/120", "/pool/120"):
            start = time.monotonic()
            got = get(port, path)
            took = time.monotonic() - start
            expect(got.startswith(b"HTTP/1.1 200 OK\r\n") and body(got) == b"slept 120", f"{path}: {got!r}")
            expect(b"Content-Type: text/plain\r\n" in got, f"{path} is text/plain: {got!r}")
            expect(took >= 0.1, f"{path} answered after its wait, not before ({took:.3f} s)")
            passed += 1

        answers = []
        def slow():
            answers.append(body(get(port, "/slow/50", limit=10.0)))
        threads = [threading.Thread(target=slow) for _ in range(200)]
        start = time.monotonic()
        for t in threads:
            t.start()
        hello = get(port, "/")  # while they wait: the loop is not blocked
        for t in threads:
            t.join()
        took = time.monotonic() - start
        expect(body(hello) == b"Hello, World!", f"GET / while 200 wait: {hello!r}")
        expect(answers.count(b"slept 50") == 200, f"all 200 answered: {len(answers)}, {set(answers)}")
        expect(took < 5.0, f"200 concurrent /slow/50 together took {took:.2f} s, not one after another")
        print(f"deferred: 200 concurrent /slow/50 in {took:.3f} s")
        passed += 2

        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"GET /slow/100 HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n"
                      b"GET /pool/10 HTTP/1.1\r\nHost: t\r\n\r\n")
            got = read_until(s, lambda d: d.endswith(b"slept 10"))
            order = [got.find(b"slept 100"), got.find(b"Hello, World!"), got.find(b"slept 10", got.find(b"Hello"))]
            expect(-1 not in order and order == sorted(order), f"pipelined answers in request order: {got!r}")
            passed += 1
        expect(server.poll() is None, "the server is still running")

        # A wait above a minute is refused; and a pool task whose client went gives its thread
        # back: four clients that ask for 50 s and leave do not hold the 4-thread pool.
        for path in ("/slow/60001", "/pool/4294967295"):
            got = get(port, path)
            expect(got.startswith(b"HTTP/1.1 400 "), f"{path} is refused: {got!r}")
        leaving = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
        for s in leaving:
            s.sendall(b"GET /pool/50000 HTTP/1.1\r\nHost: t\r\n\r\n")
        time.sleep(0.3)
        for s in leaving:
            s.close()
        start = time.monotonic()
        got = get(port, "/pool/0", limit=5.0)
        expect(body(got) == b"slept 0" and time.monotonic() - start < 3.0,
               f"/pool/0 after four clients left their 50 s tasks: {got!r}")
        passed += 2

        # SIGTERM while the pool's tasks sleep for a minute: each waiting client gets its 503,
        # and the process exits with 0 without waiting out the sleeps (the pool joins its
        # threads, so a task that kept sleeping would hold the exit).
        waiting = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
        for s in waiting:
            s.sendall(b"GET /pool/60000 HTTP/1.1\r\nHost: t\r\n\r\n")
        time.sleep(0.3)
        server.terminate()
        code = server.wait(timeout=30)
        for s in waiting:
            got = read_until(s, lambda d: b"\r\n\r\n" in d)
            expect(got.startswith(b"HTTP/1.1 503 "), f"a sleeping /pool request at stop: {got!r}")
            s.close()
        expect(code == 0, f"exit code {code} after SIGTERM with sleeping pool tasks")
        passed += 1
        print(f"deferred ({policy}): {passed} passed, 0 failed")
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=15)


if __name__ == "__main__":
    main()
