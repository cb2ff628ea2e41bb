#!/usr/bin/env python3
"""examples/websocket's chat page (examples/www/chat.html) in a real browser: headless Chromium
(Debian's chromium, which tools/test.sh installs for the system preset) opens
/www/chat.html?say=..., whose script sends that text through its form to /chat once connected.
A client written here (websocket_test.Client), in the room first, must hear it; then it says
two things, one of them markup, and the page's DOM must show both as text: list items in the
log, no element made from the markup. The DOM is read over --remote-debugging-pipe
(Runtime.evaluate, polled on the real clock) rather than with --dump-dom, because
--virtual-time-budget does not wait for a WebSocket: a 20 s budget dumped the page still
"connecting" after 1.5 s of real time. Exit 77 (skipped, with the reason) only where no
Chromium is installed.
Usage: chat_browser_test.py WEBSOCKET_BINARY [single|sharded|shared]"""
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import SKIPPED, find_chromium  # noqa: E402
from websocket_test import Client, expect, free_port  # noqa: E402

# What the page shows, read in the page: its state, the log's items, whether any element was
# made inside the log (a received "<b>" must stay text).
READ_PAGE = """JSON.stringify({
  state: document.getElementById('state').textContent,
  messages: Array.from(document.querySelectorAll('#messages > li'), li => li.textContent),
  elements: document.querySelectorAll('#messages li *').length
})"""


class DevTools:
    """Chromium driven over --remote-debugging-pipe: commands in on its fd 3, answers and
    events out on its fd 4, each a JSON text ended by a NUL."""

    def __init__(self, browser, profile, url):
        # Its stderr to a file: a pipe left unread would stop a Chromium that logs much.
        self.log = open(os.path.join(profile, "stderr.log"), "w+b")
        to_chrome, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome = os.pipe()

        def pipe_fds():  # in the child, before exec: the two ends where Chromium looks for them
            os.dup2(to_chrome, 3)
            os.dup2(from_chrome, 4)

        argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--mute-audio",
                f"--user-data-dir={profile}", "--remote-debugging-pipe", url]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.log,
                                     preexec_fn=pipe_fds, close_fds=False)
        os.close(to_chrome)
        os.close(from_chrome)
        self.buf = b""
        self.next_id = 0

    def call(self, method, session=None, timeout=15.0, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self.receive(deadline)
            if answer.get("id") == self.next_id:  # events and other answers pass by
                expect("error" not in answer, f"{method}: {answer}")
                return answer["result"]

    def receive(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            expect(left > 0 and select.select([self.from_chrome], [], [], left)[0], "Chromium answers in time")
            chunk = os.read(self.from_chrome, 1 << 16)
            if not chunk:
                self.log.seek(0)
                raise AssertionError(f"Chromium closed its pipe: {self.log.read()[-400:]!r}")
            self.buf += chunk
        text, _, self.buf = self.buf.partition(b"\0")
        return json.loads(text)

    def page_session(self):
        deadline = time.monotonic() + 15.0
        while time.monotonic() < deadline:
            pages = [t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page"]
            if pages:
                return self.call("Target.attachToTarget", targetId=pages[0]["targetId"], flatten=True)["sessionId"]
            time.sleep(0.1)
        raise AssertionError("Chromium opened no page")

    def wait_for(self, session, what, predicate, timeout=20.0):
        """Reads the page until predicate holds of what it shows; the last reading either way."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.call("Runtime.evaluate", session, expression=READ_PAGE, returnByValue=True)["result"]
            page = json.loads(result["value"]) if result.get("type") == "string" else None
            if page and predicate(page):
                return page
            expect(time.monotonic() < deadline, f"{what}: the page shows {page}")
            time.sleep(0.1)

    def close(self):
        try:
            self.call("Browser.close", timeout=5.0)
        except (AssertionError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_chrome)
        os.close(self.from_chrome)
        self.log.close()


def next_message(client):
    """The next data frame, or None on the socket's timeout. The server pings a quiet client
    (handlers::keepalive, at half the idle timeout), so while Chromium starts on a busy machine
    pings come first: answered, as a browser would, and passed by."""
    try:
        while True:
            op, payload = client.recv_frame()
            if op == 9:
                client.send_frame(10, payload)
            elif op != 10:
                return op, payload
    except socket.timeout:
        return None


def check_page(chrome, client, said):
    heard = next_message(client)
    expect(heard == (1, said.encode()), f"the page's message reaches the other client: {heard!r}")
    session = chrome.page_session()
    replies = ["from python: the room hears you", "<b>markup</b> stays <i>text</i>"]
    for reply in replies:
        client.send_frame(1, reply.encode())
    page = chrome.wait_for(session, "the client's messages in the page's log",
                           lambda p: p["messages"][-len(replies):] == replies)
    expect(page["state"] == "open", f"the page says it is connected: {page}")
    expect(said in page["messages"], f"the page hears its own message too: {page}")
    expect(page["elements"] == 0, f"received markup is shown as text, not made elements: {page}")


def main():
    browser = find_chromium()
    if browser is None:
        print("SKIPPED: no Chromium installed (Debian: apt-get install chromium; tools/test.sh does)")
        return SKIPPED
    policy = sys.argv[2] if len(sys.argv) > 2 else "single"
    port = free_port()
    said = "from the browser: héllo"
    url = f"http://127.0.0.1:{port}/www/chat.html?say={urllib.parse.quote(said)}"
    server = subprocess.Popen([sys.argv[1]], env=dict(os.environ, PORT=str(port), POLICY=policy),
                              stdout=subprocess.PIPE)
    try:
        expect(b"serving" in server.stdout.readline(), "the example says where it serves")
        client = Client(port, "/chat")
        client.sock.settimeout(30.0)  # Chromium's start, on a busy machine
        client.send_frame(9, b"in?")  # the pong comes after on_open ran: the client is in the room
        expect(client.recv_frame() == (10, b"in?"), "the client is in the room")
        with tempfile.TemporaryDirectory() as profile:
            chrome = DevTools(browser, profile, url)
            try:
                check_page(chrome, client, said)
            finally:
                chrome.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"chat page ({policy}): the browser's message reached a client, the client's showed in the page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
