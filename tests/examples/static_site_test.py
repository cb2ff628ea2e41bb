#!/usr/bin/env python3
"""End-to-end check of examples/static_site, as a user would check it: started on a free port
with its default root (examples/www), GET / is the HTML page, the stylesheet is text/css, a
Range request on the video is answered 206 with the bytes asked for, a path out of root is
refused; then started with SOCKET set, the same checks over that Unix socket; then started
under socket activation (LISTEN_FDS, LISTEN_PID), the same on the inherited socket. Last,
with ROOT set to a tree with a directory "docs": its redirect to "/docs/" stays on the site
when asked as "//docs" or "//%64ocs" (a Location of "//docs/" would send a browser to the
host "docs").
Usage: static_site_test.py BINARY"""
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from annotated_loop_test import expect, free_port, read_until  # noqa: E402

WWW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "www")


def exchange(connect, request):
    """One request on a fresh connection (Connection: close): the head as a dict, the body."""
    with connect() as s:
        s.sendall(request.encode())
        data = read_until(s, lambda d: False, limit=5.0)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), fields, body


def get(connect, path, extra=""):
    return exchange(connect, f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n{extra}\r\n")


def check_site(connect):
    status, fields, body = get(connect, "/")
    expect(status == 200 and b"<link rel=\"stylesheet\" href=\"style.css\">" in body, f"GET /: {status} {body[:80]!r}")
    expect(fields["content-type"].startswith("text/html"), f"/ is HTML: {fields}")
    status, fields, body = get(connect, "/style.css")
    expect(status == 200 and fields["content-type"].startswith("text/css"), f"style.css is text/css: {fields}")
    with open(os.path.join(WWW, "style.css"), "rb") as f:
        expect(body == f.read(), "style.css arrives as on disk")
    with open(os.path.join(WWW, "clip.webm"), "rb") as f:
        video = f.read()
    status, fields, body = get(connect, "/clip.webm", "Range: bytes=100-199\r\n")
    expect(status == 206, f"a Range on the video is 206: {status} {fields}")
    expect(fields["content-range"] == f"bytes 100-199/{len(video)}", f"Content-Range: {fields}")
    expect(fields["content-type"] == "video/webm" and body == video[100:200], "the bytes asked for, as video/webm")
    status, _, _ = get(connect, "/%2e%2e/CMakeLists.txt")
    expect(status == 400, f"a path out of root is refused: {status}")


def check_redirects(connect):
    for path, location in (("/docs", "/docs/"), ("//docs", "/docs/"), ("//%64ocs?x=1", "/%64ocs/?x=1")):
        status, fields, _ = get(connect, path)
        expect(status == 301 and fields.get("location") == location,
               f"GET {path}: {status} Location {fields.get('location')!r}, not {location!r}")
    status, _, body = get(connect, "/docs/")
    expect(status == 200 and body == b"<h1>docs</h1>", f"GET /docs/: {status} {body!r}")


def run(binary, env, connect, ready, argv=None, check=check_site, **popen):
    server = subprocess.Popen(argv or [binary], env=dict(os.environ, **env), stdout=subprocess.PIPE, **popen)
    try:
        line = server.stdout.readline()
        expect(b"serving" in line and ready in line, f"the example says where it serves: {line!r}")
        check(connect)
    finally:
        server.terminate()
        expect(server.wait(timeout=10) == 0, "SIGTERM stops it cleanly")


def main():
    binary = sys.argv[1]
    port = free_port()
    run(binary, {"PORT": str(port)}, lambda: socket.create_connection(("127.0.0.1", port)), b"127.0.0.1")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "site.sock")

        def unix():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        run(binary, {"SOCKET": path}, unix, path.encode())
    # Socket activation as systemd does it: the listening socket is descriptor 3, LISTEN_FDS=1
    # and LISTEN_PID the server's own pid (set by the shell that execs it).
    with socket.create_server(("127.0.0.1", 0)) as inherited:
        port = inherited.getsockname()[1]
        argv = ["/bin/sh", "-c", 'LISTEN_PID=$$ exec "$0"', binary]
        run(binary, {"LISTEN_FDS": "1"}, lambda: socket.create_connection(("127.0.0.1", port)), b"systemd",
            argv=argv, pass_fds=(3,), preexec_fn=lambda: os.dup2(inherited.fileno(), 3))
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "docs"))
        with open(os.path.join(tmp, "docs", "index.html"), "w") as f:
            f.write("<h1>docs</h1>")
        port = free_port()
        run(binary, {"PORT": str(port), "ROOT": tmp}, lambda: socket.create_connection(("127.0.0.1", port)),
            b"127.0.0.1", check=check_redirects)
    print("static_site: 3 listeners x 4 checks, and redirects that stay on the site, passed")


if __name__ == "__main__":
    main()
