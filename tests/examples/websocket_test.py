#!/usr/bin/env python3
"""End-to-end check of examples/websocket to its contract, with a WebSocket client written here
(stdlib only, masked frames as RFC 6455 requires of a client): GET / answers 200; /echo sends
every complete message back whole with its type, up to 16 MiB, fragmented or not; /chat sends
every text message to every client connected to /chat; SIGTERM closes each WebSocket with
1001 and the exit code is 0. Usage: websocket_test.py BINARY [single|sharded|shared]"""
import base64
import hashlib
import os
import signal
import socket
import struct
import subprocess
import sys

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


class Client:
    def __init__(self, port, path):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.settimeout(10.0)
        key = base64.b64encode(os.urandom(16))
        self.sock.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\n"
                          b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + key + b"\r\n\r\n")
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        expect(head.startswith(b"HTTP/1.1 101 "), f"{path} upgrades: {head!r}")
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        expect(b"Sec-WebSocket-Accept: " + accept in head, "the accept key is right")

    def fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise EOFError("the server closed the connection")
        self.buf += chunk

    def send_frame(self, op, payload, fin=True):
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([(0x80 if fin else 0) | op])
        if n < 126:
            head += bytes([0x80 | n])
        elif n <= 0xFFFF:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if n < 4096 else mask_fast(payload, mask)
        self.sock.sendall(head + mask + body)

    def recv_frame(self):
        while True:
            if len(self.buf) >= 2:
                n = self.buf[1] & 0x7F
                at = 2
                if n == 126 and len(self.buf) >= 4:
                    n, at = struct.unpack("!H", self.buf[2:4])[0], 4
                elif n == 127 and len(self.buf) >= 10:
                    n, at = struct.unpack("!Q", self.buf[2:10])[0], 10
                if (self.buf[1] & 0x7F) < 126 or at > 2:
                    if len(self.buf) >= at + n:
                        op, payload = self.buf[0] & 0x0F, self.buf[at:at + n]
                        self.buf = self.buf[at + n:]
                        return op, payload
            self.fill()


def mask_fast(payload, mask):
    key = int.from_bytes(mask * ((len(payload) + 3) // 4), "big") >> (8 * (-len(payload) % 4))
    return (int.from_bytes(payload, "big") ^ key).to_bytes(len(payload), "big")


def check_echo(port):
    c = Client(port, "/echo")
    c.send_frame(1, "héllo".encode())
    expect(c.recv_frame() == (1, "héllo".encode()), "a text message comes back as text")
    c.send_frame(2, b"\x00\x01\x02")
    expect(c.recv_frame() == (2, b"\x00\x01\x02"), "a binary message comes back as binary")
    c.send_frame(1, b"frag", fin=False)
    c.send_frame(0, b"mented")
    expect(c.recv_frame() == (1, b"fragmented"), "a fragmented message comes back whole")
    big = os.urandom(16 * 1024 * 1024)
    c.send_frame(2, big)
    expect(c.recv_frame() == (2, big), "a 16 MiB message comes back whole")
    c.send_frame(8, struct.pack("!H", 1000))
    op, payload = c.recv_frame()
    expect(op == 8 and payload[:2] == struct.pack("!H", 1000), "the close is echoed")


def check_chat(port):
    a, b = Client(port, "/chat"), Client(port, "/chat")
    for c in (a, b):  # a pong comes after the client's on_open ran: it is in the room
        c.send_frame(9, b"in?")
        expect(c.recv_frame() == (10, b"in?"), "a ping is answered with a pong")
    a.send_frame(1, b"ping?")
    got_a = a.recv_frame()
    expect(got_a == (1, b"ping?"), f"the sender hears its own message: {got_a!r}")
    b.sock.settimeout(2.0)
    try:
        got_b = b.recv_frame()
    except socket.timeout:
        got_b = None
    expect(got_b == (1, b"ping?"), f"every client in the room hears it: {got_b!r}")
    b.send_frame(2, b"binary is ignored")
    b.send_frame(1, b"from b")
    expect(a.recv_frame() == (1, b"from b"), "a hears b's text, not its binary")
    expect(b.recv_frame() == (1, b"from b"), "b hears its own text, not its binary")
    return a, b


def main():
    binary = sys.argv[1]
    policy = sys.argv[2] if len(sys.argv) > 2 else "single"
    port = free_port()
    server = subprocess.Popen([binary], env=dict(os.environ, PORT=str(port), POLICY=policy), stdout=subprocess.PIPE)
    try:
        expect(b"serving" in server.stdout.readline(), "it says where it serves")
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            s.settimeout(5.0)
            expect(s.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n"), "GET / answers 200")
        check_echo(port)
        a, b = check_chat(port)
        server.send_signal(signal.SIGTERM)
        for c in (a, b):
            op, payload = c.recv_frame()
            expect(op == 8 and payload[:2] == struct.pack("!H", 1001), f"stop closes with 1001: {payload!r}")
            c.send_frame(8, struct.pack("!H", 1001))
        code = server.wait(timeout=15)
        expect(code == 0, f"exit code 0, got {code}")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    print(f"websocket ({policy}): passed")


if __name__ == "__main__":
    main()
