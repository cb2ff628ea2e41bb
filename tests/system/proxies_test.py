#!/usr/bin/env python3
"""system_app behind a real proxy (nginx or HAProxy, started here from the config beside this
file on free ports, as the current user, with a temporary directory for pid, logs and temp
files) in front of two instances. For each of the proxy's front ports (keep-alive to the
upstreams, and a connection per request: nginx's default HTTP/1.0, HAProxy's
http-server-close), checks: GETs answered by both instances; POST with a Content-Length body
and a chunked body echoed, and how the chunked one reached skiff (chunked, or buffered into a
Content-Length); a pipelining client's 20 mixed requests answered in order; whether
upstream connections are kept or closed, seen in the instances' descriptors. Then one instance
is killed (SIGKILL) under load from 8 keep-alive clients: at most the requests it held (one per
client) may fail, and every request sent once the proxy has noticed is answered by the other.
Usage: proxies_test.py BINARY {nginx|haproxy}"""
import http.client
import os
import socket
import threading
import time

from support import HELLO, check, free_port, main, proxy_process, read_responses, skiff_app, tempdir, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
BODY = bytes((i * 13 + 5) % 256 for i in range(100_000))

# Per proxy: config template and its front ports by role: whether the upstream connection
# outlives the request, and how a chunked upload reaches skiff (nginx buffers it and sends a
# Content-Length unless request buffering is off; HAProxy passes it on). The roles that close
# come first, so that the instances' descriptors can be counted against the baseline before any
# pool exists.
LENGTH, CHUNKED = b"length 100000", b"chunked"
PROXIES = {
    "nginx": ("nginx.conf.in",
              {"HTTP10_PORT": (False, LENGTH), "KEEPALIVE_PORT": (True, LENGTH), "STREAM_PORT": (True, CHUNKED)}),
    "haproxy": ("haproxy.cfg.in", {"CLOSE_PORT": (False, CHUNKED), "KEEPALIVE_PORT": (True, CHUNKED)}),
}


class proxy(proxy_process):
    """kind in front of the two instances on app_ports, with a free port for each of its roles."""

    def __init__(self, kind, app_ports, tmp):
        template, self.roles = PROXIES[kind]
        super().__init__(kind, os.path.join(HERE, template), {role: free_port() for role in self.roles},
                         {"APP1_PORT": app_ports[0], "APP2_PORT": app_ports[1]}, tmp)


def pipelined(port):
    """20 requests in one write (GET /user/i, and POST /echo with a body every third), read in order."""
    batch, want = b"", []
    for i in range(20):
        if i % 3 == 2:
            body = b"body-%d-" % i + BODY[:i * 100]
            batch += b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/x-%d\r\nContent-Length: %d\r\n\r\n" % (
                i, len(body)) + body
            want.append((200, body))
        else:
            batch += b"GET /user/%d HTTP/1.1\r\nHost: t\r\n\r\n" % i
            want.append((200, b"%d" % i))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(batch)
        got = read_responses(s, 20)
    return [(status, body) for status, _, body in got] == want


def traffic(port, label, upload_framing):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        names = set()
        for _ in range(20):
            conn.request("GET", "/name")
            r = conn.getresponse()
            names.add((r.status, r.read()))
        check(names == {(200, b"a"), (200, b"b")}, "%s: 20 GETs answered 200 by both instances (%s)" % (label, names))
        conn.request("GET", "/")
        r = conn.getresponse()
        check((r.status, r.read()) == (200, HELLO), "%s: GET / is Hello, World!" % label)
        conn.request("POST", "/echo", body=BODY, headers={"Content-Type": "application/x-test"})
        r = conn.getresponse()
        check((r.status, r.getheader("Content-Type"), r.read()) == (200, "application/x-test", BODY),
              "%s: POST with Content-Length (100 KB) echoed with its type" % label)
        conn.request("POST", "/echo", body=iter([BODY[:10], BODY[10:60_000], BODY[60_000:]]), encode_chunked=True)
        r = conn.getresponse()
        check((r.status, r.read()) == (200, BODY), "%s: chunked POST (100 KB, three chunks) echoed" % label)
        conn.request("POST", "/framing", body=iter([BODY[:10], BODY[10:]]), encode_chunked=True)
        r = conn.getresponse()
        got = r.read()
        check(got == upload_framing,
              "%s: a chunked upload reaches skiff framed as %r (%r)" % (label, upload_framing, got))
        return conn   # still open: the caller looks at upstream connections while it is
    except BaseException:
        conn.close()
        raise


def kill_under_load(port, victim, label, clients=8, seconds=4.0):
    """clients threads of keep-alive GET /name until seconds pass; victim is killed after 1 s.
    Returns (results [(time sent, status or None, body)], kill time)."""
    results, lock, start = [], threading.Lock(), time.monotonic()
    killed = [None]

    def client():
        conn = None
        while time.monotonic() - start < seconds:
            sent = time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/name")
                r = conn.getresponse()
                outcome = (sent, r.status, r.read())
            except (OSError, http.client.HTTPException) as e:
                outcome = (sent, None, repr(e).encode())
                conn.close()
                conn = None
            with lock:
                results.append(outcome)
        if conn:
            conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    victim.kill()
    killed[0] = time.monotonic()
    for t in threads:
        t.join(timeout=seconds + 10)
    return results, killed[0]


def scenario(kind):
    def run(binary):
        with skiff_app(binary, NAME="a") as a, skiff_app(binary, NAME="b") as b, tempdir(kind) as tmp:
            front = proxy(kind, (a.port, b.port), tmp)
            try:
                base = (a.fds(), b.fds())
                for role, (keeps, framing) in front.roles.items():
                    label = "%s %s" % (kind, role.lower().replace("_port", ""))
                    conn = traffic(front.ports[role], label, framing)
                    try:
                        if keeps:
                            check(wait_for(lambda: a.fds() > base[0] and b.fds() > base[1], 3),
                                  "%s: upstream connections are kept open between requests" % label)
                        else:
                            check(wait_for(lambda: (a.fds(), b.fds()) == base, 3),
                                  "%s: each upstream connection is closed after its request" % label)
                    finally:
                        conn.close()
                    check(all(pipelined(front.ports[role]) for _ in range(3)),
                          "%s: 3 pipelining clients each get 20 mixed answers in order" % label)
                port = front.ports["KEEPALIVE_PORT"]
                results, killed = kill_under_load(port, a, kind)
                failed = [r for r in results if r[1] != 200]
                late = [r for r in results if r[0] > killed + 1.0]
                print("  %d requests under load, %d failed, %d sent over 1 s after the kill" % (
                    len(results), len(failed), len(late)), flush=True)
                check(len(results) > 100 and len(failed) <= 8,
                      "%s: instance a killed under load, at most the 8 requests it could hold failed (%d: %s)"
                      % (kind, len(failed), [r[2][:60] for r in failed[:3]]))
                check(late and all(r[1:] == (200, b"b") for r in late),
                      "%s: every request sent a second after the kill is answered 200 by b" % kind)
                check(b.alive(), "%s: instance b is still running" % kind)
            except AssertionError:
                print("%s's logs:\n%s" % (kind, front.logs()), flush=True)
                raise
            finally:
                front.stop()
    return run


if __name__ == "__main__":
    main({k: scenario(k) for k in PROXIES}, budget=110)
