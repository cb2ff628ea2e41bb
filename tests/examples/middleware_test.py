#!/usr/bin/env python3
"""End-to-end check of examples/middleware, to its contract: the five routes; /private 401 with
WWW-Authenticate: Bearer unless the bearer token is right; X-Request-Id, nosniff and
Server-Timing on every answer, a 404, a 400 and a 431 included, each with one Common Log Format
line on standard output; a CORS preflight from https://app.example answered 204 with
Access-Control-Allow-Origin, another origin given no CORS fields; /metrics in the Prometheus
text format; the same stack in front of a deferred route (/later), an SSE route (/events) and
an upload route (/upload), each answer compared byte for byte (Date and the timing masked):
status line first, each field once, the body framed exactly; exit 0 on SIGTERM.
Usage: middleware_test.py BINARY"""
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from annotated_loop_test import expect, free_port, read_until  # noqa: E402

CLF = re.compile(rb'^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] "[^"]*" (\d{3}) (\d+)$')


def complete(data):
    if b"\r\n\r\n" not in data:
        return False
    head, body = data.split(b"\r\n\r\n", 1)
    m = re.search(rb"\r\ncontent-length: *(\d+)", head, re.I)
    return len(body) >= (int(m.group(1)) if m else 0)


def exchange(port, raw):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(raw)
        data = read_until(s, complete)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    status = int(lines[0].split(" ")[1]) if lines and lines[0].startswith("HTTP/1.1 ") else 0
    return status, fields, body


def get(path, extra=""):
    return f"GET {path} HTTP/1.1\r\nHost: t\r\n{extra}\r\n".encode()


class log_reader:
    """The example's standard output, a line at a time, without blocking past a deadline."""

    def __init__(self, stream):
        self.stream = stream
        self.sel = selectors.DefaultSelector()
        self.sel.register(stream, selectors.EVENT_READ)
        self.pending = b""

    def line(self, limit=5.0):
        end = time.monotonic() + limit
        while b"\n" not in self.pending and time.monotonic() < end:
            if self.sel.select(max(0.0, end - time.monotonic())):
                chunk = os.read(self.stream.fileno(), 65536)
                if not chunk:
                    break
                self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line


def wait_listening(port, server):
    for _ in range(200):
        expect(server.poll() is None, "the example is running")
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return
        except OSError:
            time.sleep(0.02)
    raise AssertionError("the example listens")


def check_observed(status, fields, log, what):
    expect(fields.get("x-request-id"), f"{what}: X-Request-Id")
    expect(fields.get("x-content-type-options") == "nosniff", f"{what}: nosniff")
    expect(fields.get("server-timing", "").startswith("app;dur="), f"{what}: Server-Timing")
    line = log.line()
    m = CLF.match(line)
    expect(m is not None, f"{what}: one Common Log Format line, got {line!r}")
    expect(int(m.group(1)) == status, f"{what}: the log line has status {status}: {line!r}")


def check_routes(port, log):
    status, fields, body = exchange(port, get("/hello"))
    expect(status == 200 and body == b"Hello, World!", f"/hello: {status} {body!r}")
    expect(fields.get("content-type", "").startswith("text/plain"), "/hello is text/plain")
    check_observed(status, fields, log, "/hello")
    status, fields, body = exchange(port, get("/json"))
    expect(body == b'{"message":"Hello, World!"}', f"/json: {body!r}")
    check_observed(status, fields, log, "/json")
    status, fields, body = exchange(port, get('/users/a%22b%5Cc'))
    expect(body == b'{"id":"a\\"b\\\\c"}', f"/users/:id escapes the id: {body!r}")
    check_observed(status, fields, log, "/users/:id")
    raw = b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-test\r\nContent-Length: 5\r\n\r\nhello"
    status, fields, body = exchange(port, raw)
    expect(body == b"hello" and fields.get("content-type") == "application/x-test", f"/echo: {fields} {body!r}")
    check_observed(status, fields, log, "/echo")


def check_private(port, log):
    status, fields, _ = exchange(port, get("/private"))
    expect(status == 401 and fields.get("www-authenticate") == "Bearer", f"/private without a token: {status} {fields}")
    check_observed(status, fields, log, "/private 401")
    status, fields, _ = exchange(port, get("/private", "Authorization: Bearer wrong\r\n"))
    expect(status == 401, f"/private with a wrong token: {status}")
    check_observed(status, fields, log, "/private wrong token")
    status, fields, body = exchange(port, get("/private", "Authorization: Bearer secret\r\n"))
    expect(status == 200 and body == b"private", f"/private with the token: {status} {body!r}")
    check_observed(status, fields, log, "/private 200")


def check_server_answers(port, log):
    status, fields, _ = exchange(port, get("/nowhere"))
    expect(status == 404, f"/nowhere: {status}")
    check_observed(status, fields, log, "404")
    status, fields, _ = exchange(port, b"GET / HTTP/1.1\r\nHost: t\r\nBad Field: x\r\n\r\n")
    expect(status == 400, f"a malformed field: {status}")
    check_observed(status, fields, log, "400")
    status, fields, _ = exchange(port, get("/hello", "X-Big: " + "a" * 20000 + "\r\n"))
    expect(status == 431, f"a field too large: {status}")
    check_observed(status, fields, log, "431")


def check_cors(port, log):
    preflight = ("OPTIONS /json HTTP/1.1\r\nHost: t\r\nOrigin: {}\r\n"
                 "Access-Control-Request-Method: GET\r\n\r\n")
    status, fields, _ = exchange(port, preflight.format("https://app.example").encode())
    expect(status == 204 and fields.get("access-control-allow-origin") == "https://app.example",
           f"preflight from the allowed origin: {status} {fields}")
    check_observed(status, fields, log, "preflight")
    status, fields, _ = exchange(port, get("/json", "Origin: https://app.example\r\n"))
    expect(fields.get("access-control-allow-origin") == "https://app.example", "a CORS GET gets its origin back")
    check_observed(status, fields, log, "CORS GET")
    status, fields, _ = exchange(port, preflight.format("https://evil.example").encode())
    expect(not any(k.startswith("access-control-") for k in fields), f"another origin gets no CORS fields: {fields}")
    check_observed(status, fields, log, "other origin")


def exchange_to_close(port, raw):
    """Every byte the example sends until it closes (the request says Connection: close)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(raw)
        return read_until(s, lambda data: False)


def masked(data):
    data = re.sub(rb"\r\nDate: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\r\n", b"\r\nDate: <date>\r\n", data)
    return re.sub(rb"\r\nServer-Timing: app;dur=\d+\.\d{3}\r\n", b"\r\nServer-Timing: app;dur=<ms>\r\n", data)


# What request_id() (an incoming id kept), security_headers() and cors() (a listed origin: Vary)
# write before next(), in this order, on every answer of the chain.
STACK_FIELDS = (b"X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n"
                b"Vary: Origin\r\n")


def check_answered_later(port, log):
    got = exchange_to_close(port, get("/later", "X-Request-Id: later-1\r\nConnection: close\r\n"))
    want = (b"HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 14\r\n"
            b"Connection: close\r\nX-Request-Id: later-1\r\n" + STACK_FIELDS + b"\r\nanswered later")
    expect(masked(got) == want, f"/later, byte for byte: {got!r}")
    line = log.line()
    expect(CLF.match(line) and CLF.match(line).group(1) == b"200", f"/later: one log line, got {line!r}")

    got = exchange_to_close(port, get("/events", "X-Request-Id: events-1\r\nConnection: close\r\n"))
    events = b"".join(b"14\r\nid: %d\ndata: tick %d\n\n\r\n" % (i, i) for i in (1, 2, 3))
    want = (b"HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            b"Connection: close\r\nX-Request-Id: events-1\r\n" + STACK_FIELDS + b"Cache-Control: no-cache\r\n\r\n"
            + events + b"0\r\n\r\n")
    expect(masked(got) == want, f"/events, byte for byte: {got!r}")
    line = log.line()
    expect(CLF.match(line) and CLF.match(line).group(1) == b"200", f"/events: one log line, got {line!r}")

    body = b"u" * 100000  # more than one read: the answer comes after the body
    raw = (b"PUT /upload HTTP/1.1\r\nHost: t\r\nX-Request-Id: upload-1\r\nConnection: close\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body)) + body
    got = exchange_to_close(port, raw)
    text = b"received 100000 bytes\n"
    want = (b"HTTP/1.1 201 Created\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
            b"Connection: close\r\nX-Request-Id: upload-1\r\n" % len(text) + STACK_FIELDS
            + b"Server-Timing: app;dur=<ms>\r\n\r\n" + text)
    expect(masked(got) == want, f"/upload, byte for byte: {got!r}")
    check_observed(201, {"x-request-id": "upload-1", "x-content-type-options": "nosniff",
                         "server-timing": "app;dur="}, log, "/upload")


def check_metrics(port, log):
    status, fields, body = exchange(port, get("/metrics"))
    expect(status == 200, f"/metrics: {status}")
    for name in (b'skiff_requests_total{code="200"}', b"skiff_connections_open", b"skiff_rejections_total{reason=",
                 b"skiff_bytes_received_total", b"skiff_bytes_sent_total", b"skiff_request_duration_seconds_bucket"):
        expect(name in body, f"/metrics has {name!r}")
    expect(re.search(rb'skiff_requests_total\{code="404"\} [1-9]', body), "the 404 was counted")
    expect(re.search(rb'skiff_rejections_total\{reason="header_too_large"\} [1-9]', body), "the 431 was counted")
    check_observed(status, fields, log, "/metrics")


def main():
    port = free_port()
    server = subprocess.Popen([sys.argv[1]], env=dict(os.environ, PORT=str(port)), stdout=subprocess.PIPE)
    try:
        wait_listening(port, server)
        log = log_reader(server.stdout)
        log.line(0.5)  # the probe connection above may have left a line (a 400 or a timeout) or none
        check_routes(port, log)
        check_private(port, log)
        check_server_answers(port, log)
        check_cors(port, log)
        check_answered_later(port, log)
        check_metrics(port, log)
        server.send_signal(signal.SIGTERM)
        expect(server.wait(timeout=10) == 0, "SIGTERM stops it with exit status 0")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    print("middleware example: all checks passed")


if __name__ == "__main__":
    main()
