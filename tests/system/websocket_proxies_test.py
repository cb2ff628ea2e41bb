#!/usr/bin/env python3
"""examples/websocket (built here as system_websocket) behind a real proxy that passes WebSocket
on: nginx or HAProxy, started here from nginx_websocket.conf.in or haproxy_websocket.cfg.in on a
free port, as the current user, with its pid, logs and temp files in a temporary directory. The
example runs under the POLICY the test was given. Through the proxy:
  GET / answers 200;
  a hand-written upgrade, on a connection that has just served GET /, gets the 101 with the
  right Sec-WebSocket-Accept (RFC 6455 §4.2.2), and a close frame sent on it comes back with
  its code before the connection ends;
  /echo (the Python websockets library as client) sends back text as text and binary as
  binary, messages sent back to back one by one, messages the client fragments whole, 1 MiB
  and 16 MiB messages whole; a ping gets its pong; a close the client starts ends with its
  code echoed (§5.5.1);
  /chat sends a text message from any of three clients to all three, and ignores binary;
  SIGTERM closes a connected client with 1001 (going away), and the example exits with 0.
Exit 77 (skipped) where the websockets library is not installed (Debian: python3-websockets).
Usage: websocket_proxies_test.py BINARY {nginx|haproxy}"""
import os
import sys

try:
    import websockets
except ImportError:
    # A pyenv or venv python3 first on PATH may lack the Debian package: try the system one once.
    if os.path.exists("/usr/bin/python3") and not os.environ.get("SKIFF_WS_REEXEC"):
        os.environ["SKIFF_WS_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("skipped: the Python websockets library is not installed (Debian: python3-websockets)")
    sys.exit(77)

import asyncio
import base64
import contextlib
import hashlib
import socket
import struct

from support import check, fetch, free_port, main, proxy_process, read_responses, tempdir
from websocket_clients_test import websocket_example

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = {"nginx": "nginx_websocket.conf.in", "haproxy": "haproxy_websocket.cfg.in"}
BIG = 16 * 1024 * 1024   # the largest message /echo accepts
WAIT = 30                # seconds for any one message, 16 MiB through a proxy on a busy machine included
ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"   # RFC 6455 §1.3: the key's suffix in the accept hash


def raw_upgrade(port, label):
    """GET / and then an upgrade to /echo on one keep-alive connection, written by hand, so that
    the 101 itself can be read; then a close frame with code 4000 (masked, as a client's must
    be, §5.3), whose echo must come back before the proxy ends the connection."""
    key = base64.b64encode(os.urandom(16)).decode()
    accept = base64.b64encode(hashlib.sha1((key + ACCEPT_GUID).encode()).digest())
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        statuses = [r[0] for r in read_responses(s, 1)]
        check(statuses == [200], "%s: GET / on a keep-alive connection answers 200 (%r)" % (label, statuses))
        s.sendall(("GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % key).encode())
        got = read_responses(s, 1)
        status, headers = (got[0][0], got[0][1]) if got else (None, {})
        check(status == 101 and headers.get("upgrade", "").lower() == "websocket"
              and headers.get("sec-websocket-accept", "").encode() == accept,
              "%s: the upgrade that follows on the same connection gets 101 with Upgrade: websocket and "
              "the right Sec-WebSocket-Accept (%r %r)" % (label, status, headers))
        mask = os.urandom(4)
        payload = struct.pack("!H", 4000)
        s.sendall(bytes([0x88, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        answer = b""
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
        except socket.timeout:
            answer += b" (no end of connection within 10 s)"
        check(answer == b"\x88\x02" + payload,
              "%s: a close frame with 4000 comes back as one unmasked close frame with 4000, then the "
              "connection ends (%r)" % (label, answer[:40]))


@contextlib.asynccontextmanager
async def opened(port, path, label):
    """A websockets client on ws://127.0.0.1:PORT/PATH through the proxy, closed on the way out;
    a failed upgrade fails the test with what the library saw."""
    url = "ws://127.0.0.1:%d%s" % (port, path)
    try:
        # max_size: the library's own limit on what it receives (1 MiB by default).
        ws = await websockets.connect(url, max_size=BIG + 1, open_timeout=10)
    except (OSError, asyncio.TimeoutError, websockets.exceptions.InvalidHandshake) as e:
        raise AssertionError("FAILED: %s: the upgrade to %s through the proxy: %r" % (label, url, e))
    try:
        yield ws
    finally:
        await ws.close()


async def recv(ws, what):
    """The next message on ws; a timeout or a closed connection fails the check what."""
    try:
        return await asyncio.wait_for(ws.recv(), WAIT)
    except asyncio.TimeoutError:
        raise AssertionError("FAILED: %s (nothing within %d s)" % (what, WAIT))
    except websockets.exceptions.ConnectionClosed as e:
        raise AssertionError("FAILED: %s (the connection closed: %r)" % (what, e))


async def pinged(ws):
    """True when a ping on ws gets its pong (the one that carries the same payload) in time."""
    try:
        await asyncio.wait_for(await ws.ping(os.urandom(8)), WAIT)
        return True
    except (asyncio.TimeoutError, websockets.exceptions.ConnectionClosed):
        return False


async def echo(port, label):
    async with opened(port, "/echo", label) as ws:
        for message, what in (("héllo, wörld", "text comes back as text"),
                              (b"\x00\x01\x02\xff", "binary comes back as binary")):
            await ws.send(message)
            what = "%s: %s" % (label, what)
            check(await recv(ws, what) == message, what)
        batch = ["one", b"two", "three"]
        for message in batch:
            await ws.send(message)
        what = "%s: three messages sent back to back come back as three, in order, each with its type" % label
        check([await recv(ws, what) for _ in batch] == batch, what)
        for fragments, whole in ((["frag", "men", "ted ✓"], "fragmented ✓"),
                                 ([b"\x01" * 70000, b"\x02" * 3], b"\x01" * 70000 + b"\x02" * 3)):
            await ws.send(fragments)   # an iterable: one message in as many frames
            what = "%s: a %s message the client sends in %d frames comes back whole" % (
                label, type(whole).__name__, len(fragments))
            check(await recv(ws, what) == whole, what)
        for size in (1024 * 1024, BIG):
            data = os.urandom(size)
            await ws.send(data)
            what = "%s: a %d-byte message comes back whole" % (label, size)
            check(await recv(ws, what) == data, what)
        check(await pinged(ws), "%s: a ping gets its pong" % label)
        await ws.close(code=4000, reason="done here")
        check(ws.close_code == 4000, "%s: a clean close: the server echoes the code 4000 (%r)" % (label, ws.close_code))


async def chat(port, label):
    async with opened(port, "/chat", label) as a, opened(port, "/chat", label) as b, \
            opened(port, "/chat", label) as c:
        clients = {"a": a, "b": b, "c": c}
        # A pong comes after the server's on_open ran: once each has one, all three are in the room.
        check(all([await pinged(ws) for ws in clients.values()]), "%s: three clients on /chat" % label)
        await a.send("hello from a")
        what = "%s: a text message from a reaches a, b and c" % label
        check([await recv(ws, what) for ws in clients.values()] == ["hello from a"] * 3, what)
        await c.send(b"binary is ignored")
        await c.send("and from c")
        what = "%s: c's text reaches all three, its binary none" % label
        check([await recv(ws, what) for ws in clients.values()] == ["and from c"] * 3, what)
        await b.close()
        check(b.close_code == 1000, "%s: a close with no code given is 1000 (%r)" % (label, b.close_code))
        await a.send("after b left")
        what = "%s: once b has left, a's text still reaches a and c" % label
        check([await recv(ws, what) for ws in (a, c)] == ["after b left"] * 2, what)


async def going_away(port, app, label):
    """SIGTERM to the example while a client is connected: the close with 1001 crosses the proxy."""
    async with opened(port, "/echo", label) as ws:
        await ws.send("still here")
        what = "%s: a client on /echo is answered before the stop" % label
        check(await recv(ws, what) == "still here", what)
        app.terminate()
        try:
            await asyncio.wait_for(ws.wait_closed(), WAIT)
        except asyncio.TimeoutError:
            pass
        check(ws.close_code == 1001, "%s: SIGTERM closes a connected client with 1001 (%r)" % (label, ws.close_code))


def scenario(kind):
    def run(binary):
        label = "%s, %s" % (kind, os.environ.get("POLICY", "single"))
        print("%s: the websockets library %s" % (label, websockets.__version__), flush=True)
        with websocket_example(binary) as app, tempdir(kind) as tmp:
            front = proxy_process(kind, os.path.join(HERE, TEMPLATES[kind]), {"PROXY_PORT": free_port()},
                                  {"APP_PORT": app.port}, tmp)
            port = front.ports["PROXY_PORT"]
            try:
                status, _, body = fetch(port)
                check(status == 200 and body.startswith(b"WebSocket at"), "%s: GET / answers 200 (%r %r)" % (
                    label, status, body[:60]))
                raw_upgrade(port, label)
                asyncio.run(echo(port, label))
                asyncio.run(chat(port, label))
                asyncio.run(going_away(port, app, label))
            except AssertionError:
                print("%s's logs:\n%s" % (kind, front.logs()), flush=True)
                raise
            finally:
                front.stop()
    return run


if __name__ == "__main__":
    main({kind: scenario(kind) for kind in TEMPLATES}, budget=150)
