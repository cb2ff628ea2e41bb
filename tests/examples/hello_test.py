#!/usr/bin/env python3
"""End-to-end check of examples/hello: it serves GET /, and SIGTERM or SIGINT (Ctrl-C) stops it
gracefully: a request already begun is still answered (with Connection: close), an idle
keep-alive connection is closed, and the exit code is 0. Usage: hello_test.py BINARY"""
import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_all(sock, limit=5.0):
    sock.settimeout(limit)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def stops_gracefully(binary, signum):
    port = free_port()
    server = subprocess.Popen([binary], env=dict(os.environ, PORT=str(port)), stdout=subprocess.PIPE)
    try:
        expect(b"serving" in server.stdout.readline(), "hello says where it serves")
        idle = socket.create_connection(("127.0.0.1", port))
        idle.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        idle.settimeout(5.0)
        expect(idle.recv(65536).endswith(b"Hello, World!"), "GET / answers Hello, World!")
        busy = socket.create_connection(("127.0.0.1", port))
        busy.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n")  # a request begun, not finished
        time.sleep(0.2)
        server.send_signal(signum)
        time.sleep(0.2)
        busy.sendall(b"\r\n")
        got = read_all(busy)
        expect(got.startswith(b"HTTP/1.1 200 OK\r\n") and b"Connection: close\r\n" in got,
               f"the request in progress is answered with Connection: close: {got!r}")
        expect(read_all(idle) == b"", "the idle keep-alive connection is closed")
        code = server.wait(timeout=10)
        expect(code == 0, f"exit code 0 after {signal.Signals(signum).name}, got {code}")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def main():
    for signum in (signal.SIGTERM, signal.SIGINT):
        stops_gracefully(sys.argv[1], signum)
    print("hello: serves, and drains on SIGTERM and SIGINT with exit code 0")


if __name__ == "__main__":
    main()
