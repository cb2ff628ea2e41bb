#!/usr/bin/env python3
"""Instructions per request with middleware, counted exactly with callgrind.

Prints two tables for tools/bench/README.md: the ullun-api five scenarios (GET /hello,
GET /json, GET /users/:id, POST /echo, and GET /private behind request id + bearer auth +
a logger), and each built-in middleware alone on a hello route, beside the bare hello
("added", issue 31's measure) and beside the same request to the app started without its
built-ins (BUILTINS=off: "same request", what the built-in's own code costs).

Method as tools/bench/counts.py: middleware_app runs under `valgrind --tool=callgrind`
twice, serving N1 and then N2 requests over 8 keep-alive connections, one request per
write; (Ir(N2) - Ir(N1)) / (N2 - N1) is what one request costs in user space.

    tools/bench/middleware_counts.py                  # build build/bench-counts, print the tables
    tools/bench/middleware_counts.py --binary PATH    # an already built middleware_app
    tools/bench/middleware_counts.py --only hello,private
    tools/bench/middleware_counts.py --check          # the built-ins only; exit 1 above a target

Needs valgrind, cmake and a C++ compiler (tools/bench/install.sh installs them).
"""
import argparse
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import counts  # noqa: E402  (its callgrind runner and build)

HEAD = b"Host: localhost\r\nUser-Agent: nreq\r\nAccept: */*\r\n"


def get(path, extra=b""):
    return b"GET " + path + b" HTTP/1.1\r\n" + HEAD + extra + b"\r\n"


BODY = b'{"name":"skiff","n":1}'
ECHO = (b"POST /echo HTTP/1.1\r\n" + HEAD + b"Content-Type: application/json\r\nContent-Length: "
        + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)

# (name, what it measures, request)
SCENARIOS = [
    ("hello", "GET /hello, text", get(b"/hello")),
    ("json", "GET /json", get(b"/json")),
    ("param", "GET /users/:id", get(b"/users/42")),
    ("post", "POST /echo, 22 B JSON body", ECHO),
    ("private", "GET /private: request id + bearer auth + logger", get(b"/private", b"Authorization: Bearer secret\r\n")),
]
BUILTINS = [
    ("hello", "none (GET /hello)", get(b"/hello")),
    ("rid", "request_id() (generates the id)", get(b"/rid/hello")),
    ("cors", "cors() (allowed Origin)", get(b"/cors/hello", b"Origin: https://app.example\r\n")),
    ("sec", "security_headers() (defaults)", get(b"/sec/hello")),
    ("limit", "concurrency_limit(1024)", get(b"/limit/hello")),
    ("timer", "response_timer() (Server-Timing)", get(b"/timer/hello")),
]
# What each built-in may add to the bare GET /hello, instructions per request (issue 31).
TARGETS = {"sec": 60, "rid": 120, "cors": 150, "timer": 150, "limit": 40}
CONNECTIONS = counts.CONNECTIONS
N1, N2 = counts.N1, counts.N2


def complete_responses(data):
    """How many whole Content-Length-framed responses data holds."""
    count, off = 0, 0
    while True:
        end = data.find(b"\r\n\r\n", off)
        if end < 0:
            return count
        head = data[off:end].lower()
        at = head.find(b"\r\ncontent-length: ")
        length = int(head[at + 18:].split(b"\r\n", 1)[0]) if at >= 0 else 0
        if end + 4 + length > len(data):
            return count
        off = end + 4 + length
        count += 1


def send_requests(port, total, request, depth):
    """Sends `total` requests over CONNECTIONS connections, one per write (depth is 1),
    reading each answer, which must be a 200, before the next."""
    assert depth == 1
    conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(CONNECTIONS)]
    for c in conns:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sent = 0
    while sent < total:
        for c in conns:
            if sent == total:
                break
            c.sendall(request)
            data = b""
            while complete_responses(data) < 1:
                chunk = c.recv(65536)
                if not chunk:
                    raise RuntimeError("the server closed a connection")
                data += chunk
            if b" 200 OK\r\n" not in data[:20]:
                raise RuntimeError("not a 200: " + data[:200].decode(errors="replace"))
            sent += 1
    for c in conns:
        c.close()


def per_request(binary, request, builtins="on"):
    """builtins="off": the app registers its /<name>/hello routes without their built-in."""
    env = {"BUILTINS": builtins}
    a = counts.instructions(binary, N1, request, 1, send=send_requests, extra_env=env)
    b = counts.instructions(binary, N2, request, 1, send=send_requests, extra_env=env)
    return (b - a) / (N2 - N1)


def table(binary, rows, title, only, baseline=None, targets=None):
    """Prints the table; returns the rows whose addition is above its target (with targets).

    With a baseline, "added" is the row's request against the bare GET /hello (issue 31's
    measure, targets included): it counts what the built-in's request differs by too (a longer
    path; for cors, parsing the Origin field a browser sends whatever the server does). "same
    request" is the row's own request against the app without its built-in: the built-in's own
    cost, on the same bytes."""
    print(f"| {title} | instructions per request |" + (" added | same request |" if baseline else "")
          + (" target |" if targets else ""))
    print("|---|---:|" + ("---:|---:|" if baseline else "") + ("---:|" if targets else ""))
    base = None
    over = []
    for name, what, request in rows:
        if only and name not in only:
            continue
        figure = per_request(binary, request)
        if baseline and name == baseline:
            base = figure
        if baseline and base is not None and name != baseline:
            added = f" {figure - base:+,.0f} | {figure - per_request(binary, request, 'off'):+,.0f} |"
        else:
            added = " | |" if baseline else ""
        target = ""
        if targets:
            bound = targets.get(name)
            above = bound is not None and base is not None and figure - base > bound
            target = f" <= +{bound}{' (above)' if above else ''} |" if bound is not None else " |"
            if above:
                over.append(name)
        print(f"| {what} | {figure:,.0f} |{added}{target}")
        sys.stdout.flush()
    print()
    return over


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="a built middleware_app (default: build one in build/bench-counts)")
    ap.add_argument("--only", help="comma-separated scenario names (hello,json,param,post,private,rid,cors,sec,limit,timer)")
    ap.add_argument("--check", action="store_true",
                    help="the built-ins' table only, beside each target (TARGETS); exit 1 when one adds more")
    args = ap.parse_args()
    binary = args.binary or counts.build("middleware_app")
    only = set(args.only.split(",")) if args.only else None
    if args.check:
        if only:
            only.add("hello")  # the baseline every addition is measured from
        over = table(binary, BUILTINS, "built-in alone on hello", only, baseline="hello", targets=TARGETS)
        if over:
            print("above target: " + ", ".join(over))
        return 1 if over else 0
    table(binary, SCENARIOS, "scenario (68 B head, keep-alive)", only)
    table(binary, BUILTINS, "built-in alone on hello", only, baseline="hello")
    return 0


if __name__ == "__main__":
    sys.exit(main())
