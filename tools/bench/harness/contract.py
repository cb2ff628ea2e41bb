"""The contract check: before measuring, every server must give the same status, Content-Type
and body on every route of the contract it serves. The expected values are the contract's
(design.md); skiff is checked like everyone else."""
import http.client

ECHO_BODY = bytes((i * 7 + 13) % 256 for i in range(1024))   # 1 KiB, every byte value

# (route, label, method, path, headers, body, status, content type, body)
CASES = [
    ("plaintext", "GET /", "GET", "/", {}, None, 200, "text/plain", b"Hello, World!"),
    ("json", "GET /json", "GET", "/json", {}, None, 200, "application/json", b'{"message":"Hello, World!"}'),
    ("param", "GET /user/12345", "GET", "/user/12345", {}, None, 200, "text/plain", b"12345"),
    ("echo", "POST /echo typed", "POST", "/echo", {"Content-Type": "application/x-bench"}, ECHO_BODY,
     200, "application/x-bench", ECHO_BODY),
    ("echo", "POST /echo untyped", "POST", "/echo", {}, b"ping-456", 200, "application/octet-stream", b"ping-456"),
    ("notfound", "GET /no/such/page", "GET", "/no/such/page", {}, None, 404, "text/plain", b"Not Found\n"),
    # Not the contract's: uneven_app's slow route answers as GET / does (n = 1: this one spins).
    ("uneven", "GET /uneven/1/1000", "GET", "/uneven/1/1000", {}, None, 200, "text/plain", b"Hello, World!"),
]


def fetch(port, method, path, headers, body):
    """(status, content type, body) of one request on a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.getheader("Content-Type", ""), r.read()
    finally:
        conn.close()


def check(spec, port):
    """A list of (label, what was wrong) for the routes spec serves; empty when all match."""
    problems = []
    for route, label, method, path, headers, body, status, ctype, want in CASES:
        if route not in spec.routes:
            continue
        try:
            got = fetch(port, method, path, headers, body)
        except (OSError, http.client.HTTPException) as e:
            problems.append((label, "no answer: %s" % e))
            continue
        if got != (status, ctype, want):
            problems.append((label, "got %s %r %r, want %s %r %r" % (
                got[0], got[1], got[2][:40], status, ctype, want[:40])))
    return problems
