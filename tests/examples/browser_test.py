#!/usr/bin/env python3
"""examples/static_site in a real browser: headless Chromium (Debian's chromium, which
tools/test.sh installs for the system preset) loads the page; the page's own script writes
what it sees into the DOM (the body's computed background, the image's decoded size, the
video's readyState), read back with --dump-dom. The server's access log (ACCESS_LOG) shows
that the browser's Range requests for the video were answered 206. A screenshot is saved as
static_site.png in the working directory (or the directory given as the second argument).
Exit 77 (skipped, with the reason) only where no Chromium is installed.
Usage: browser_test.py STATIC_SITE_BINARY [SCREENSHOT_DIR]"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from annotated_loop_test import expect, free_port  # noqa: E402

SKIPPED = 77


def find_chromium():
    for name in ("/usr/bin/chromium", "chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(binary, profile, *args):
    argv = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--mute-audio",
            "--autoplay-policy=no-user-gesture-required", f"--user-data-dir={profile}", *args]
    return subprocess.run(argv, capture_output=True, timeout=90, text=True)


def main():
    browser = find_chromium()
    if browser is None:
        print("SKIPPED: no Chromium installed (Debian: apt-get install chromium; tools/test.sh does)")
        return SKIPPED
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.getcwd()
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "access.log")
        env = dict(os.environ, PORT=str(port), ACCESS_LOG=log)
        server = subprocess.Popen([sys.argv[1]], env=env, stdout=subprocess.PIPE)
        try:
            expect(b"serving" in server.stdout.readline(), "the example says where it serves")
            dom = chromium(browser, os.path.join(tmp, "p1"), "--virtual-time-budget=10000", "--dump-dom", url)
            report = re.search(r"background=([^;]*);image=(\d+)x(\d+);video=(\d);", dom.stdout)
            expect(report is not None, f"the page's script ran: {dom.stdout[-400:]!r} {dom.stderr[-400:]!r}")
            background, width, height, ready = report.groups()
            expect(background == "rgb(30, 58, 95)", f"the stylesheet applied: background {background}")
            expect((width, height) == ("64", "48"), f"the image decoded: {width}x{height}")
            expect(int(ready) >= 1, f"the video's metadata loaded: readyState {ready}")
            shot = os.path.join(out_dir, "static_site.png")
            chromium(browser, os.path.join(tmp, "p2"), "--virtual-time-budget=5000", "--window-size=800,600",
                     f"--screenshot={shot}", url)
            with open(shot, "rb") as f:
                expect(f.read(8) == b"\x89PNG\r\n\x1a\n", "a screenshot was saved")
            with open(log) as f:
                lines = f.read().splitlines()
            video = [line for line in lines if line.startswith("GET /clip.webm ")]
            expect(video and all(line.endswith(" 206") for line in video),
                   f"the video's requests were Range requests answered 206: {video}")
            expect("GET /style.css 200" in lines and "GET /tiles.png 200" in lines, f"access log: {lines}")
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"browser: stylesheet, image, video ({len(video)} Range requests, 206) checked; screenshot {shot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
