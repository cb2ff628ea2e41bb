#!/usr/bin/env python3
"""examples/websocket to its contract, with a real client: the Python `websockets` library
(Debian: python3-websockets), where websocket_test.py checks the same contract with frames
written by hand. GET / answers 200; /echo sends back text as text and binary as binary, a
message the client fragments, 1 MiB and 16 MiB messages whole; a ping gets its pong; /chat
sends every text message to every client on it; a close the client starts ends with its code
echoed (§5.5.1). Exit 77 (skipped) where the library is not installed.
Usage: websocket_clients_test.py BINARY [single|sharded]"""
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
import http.client
import socket
import subprocess

BIG = 16 * 1024 * 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def connect(port, path):
    # max_size: the library's own limit on what it receives (1 MiB by default).
    return websockets.connect("ws://127.0.0.1:%d%s" % (port, path), max_size=BIG + 1, open_timeout=10)


async def check_echo(port):
    async with connect(port, "/echo") as ws:
        await ws.send("héllo, wörld")
        expect(await ws.recv() == "héllo, wörld", "a text message comes back as text")
        await ws.send(b"\x00\x01\x02\xff")
        expect(await ws.recv() == b"\x00\x01\x02\xff", "a binary message comes back as binary")
        await ws.send(["frag", "men", "ted ✓"])  # an iterable: one message in three frames
        expect(await ws.recv() == "fragmented ✓", "a message the client fragments comes back whole")
        await ws.send([b"\x01" * 70000, b"\x02" * 3])
        expect(await ws.recv() == b"\x01" * 70000 + b"\x02" * 3, "a fragmented binary message comes back whole")
        for size in (1024 * 1024, BIG):
            data = os.urandom(size)
            await ws.send(data)
            got = await asyncio.wait_for(ws.recv(), 30)
            expect(got == data, "a %d-byte message comes back whole" % size)
        pong = await ws.ping(b"are you there")
        await asyncio.wait_for(pong, 10)  # resolved by the pong that carries the same payload
        await ws.close(code=4000, reason="done here")
        expect(ws.close_code == 4000, "a clean close: the server echoes the code (%r)" % ws.close_code)


async def check_chat(port):
    async with connect(port, "/chat") as a, connect(port, "/chat") as b:
        for ws in (a, b):  # the pong comes after the server's on_open ran: both are in the room
            await asyncio.wait_for(await ws.ping(), 10)
        await a.send("hello from a")
        expect(await asyncio.wait_for(a.recv(), 10) == "hello from a", "the sender hears its own message")
        expect(await asyncio.wait_for(b.recv(), 10) == "hello from a", "every client in the room hears it")
        await b.send(b"binary is ignored")
        await b.send("and from b")
        expect(await asyncio.wait_for(a.recv(), 10) == "and from b", "a hears b's text, not its binary")
        expect(await asyncio.wait_for(b.recv(), 10) == "and from b", "b hears its own text, not its binary")
        await a.close()
        expect(a.close_code == 1000, "a close with no code given is 1000 (%r)" % a.close_code)


def main():
    binary = sys.argv[1]
    policy = sys.argv[2] if len(sys.argv) > 2 else "single"
    port = free_port()
    server = subprocess.Popen([binary], env=dict(os.environ, PORT=str(port), POLICY=policy), stdout=subprocess.PIPE)
    try:
        expect(b"serving" in server.stdout.readline(), "it says where it serves")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/")
        expect(conn.getresponse().status == 200, "GET / answers 200")
        conn.close()
        asyncio.run(check_echo(port))
        asyncio.run(check_chat(port))
        server.terminate()
        code = server.wait(timeout=15)
        expect(code == 0, "SIGTERM stops it with exit code 0, got %r" % code)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    print("websocket with the websockets library %s (%s): passed" % (websockets.__version__, policy))


if __name__ == "__main__":
    main()
