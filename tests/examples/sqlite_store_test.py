#!/usr/bin/env python3
"""End-to-end check of examples/sqlite_store, as a user would check it: start it on a free port
and a fresh database file (under the policy given, default single), then POST /items stores a
JSON body and answers 201 with the item and its id; GET /items/ID gives it back, 404 for an
unknown or non-numeric id; GET /items?limit=N lists at most N (default 20, cap 100; 400 on a
bad limit, and a limit past any integer is capped); an empty, oversized, malformed, not UTF-8
or more than 64 deep body is 400, and the list still answers after the deepest allowed; DELETE is 204 then 404; 50
concurrent creates get 50 distinct ids; the file is in WAL mode and keeps its items across a
restart. Usage: sqlite_store_test.py BINARY [POLICY]"""
import http.client
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from annotated_loop_test import expect, free_port  # noqa: E402


def call(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request(method, path, body=body, headers={"Content-Type": "application/json"} if body is not None else {})
        r = c.getresponse()
        return r.status, r.getheader("Content-Type"), r.getheader("Location"), r.read()
    finally:
        c.close()


def start(binary, port, db, policy):
    server = subprocess.Popen([binary], env=dict(os.environ, PORT=str(port), DB=db, POLICY=policy),
                              stdout=subprocess.PIPE)
    expect(b"serving" in server.stdout.readline(), "the example says where it serves")
    return server


def stop(server):
    server.terminate()
    expect(server.wait(timeout=15) == 0, "a clean stop on SIGTERM")


def check_items(port):
    status, ctype, location, body = call(port, "POST", "/items", b'{"name": "first", "n": [1, 2]}')
    expect(status == 201 and ctype == "application/json", f"POST: {status} {ctype} {body!r}")
    item = json.loads(body)
    expect(item["data"] == {"name": "first", "n": [1, 2]} and item["id"] > 0, f"POST answers the item: {item}")
    expect(location == f"/items/{item['id']}", f"Location names the item: {location}")
    status, _, _, body = call(port, "GET", location)
    expect(status == 200 and json.loads(body) == item, f"GET {location}: {status} {body!r}")
    for path in ("/items/999999", "/items/abc", "/items/-1", "/items/0"):
        status, ctype, _, body = call(port, "GET", path)
        expect(status == 404 and ctype == "application/json", f"GET {path}: {status} {body!r}")
    return item


def check_list(port):
    for i in range(24):
        expect(call(port, "POST", "/items", json.dumps({"i": i}).encode())[0] == 201, "POST for the list")
    status, _, _, body = call(port, "GET", "/items")
    items = json.loads(body)
    expect(status == 200 and len(items) == 20, f"the default limit is 20: {len(items)}")
    expect([x["id"] for x in items] == sorted(x["id"] for x in items), "listed by ascending id")
    status, _, _, body = call(port, "GET", "/items?limit=3")
    expect(status == 200 and len(json.loads(body)) == 3, f"limit=3: {body!r}")
    status, _, _, body = call(port, "GET", "/items?limit=100000")
    expect(status == 200 and len(json.loads(body)) == 25, f"a big limit is capped, all 25 fit: {status}")
    status, _, _, body = call(port, "GET", "/items?limit=99999999999999999999")  # past any integer type
    expect(status == 200 and len(json.loads(body)) == 25, f"a limit of 20 digits is capped too: {status}")
    for bad in ("abc", "0", "-5", "", "1e3", "00000000000000000000", "+5"):
        status, _, _, body = call(port, "GET", f"/items?limit={bad}")
        expect(status == 400, f"limit={bad!r} is 400: {status} {body!r}")


def check_bad_bodies(port):
    for what, body in (("empty", b""), ("oversized", b'"' + b"x" * (64 * 1024) + b'"'),
                       ("malformed", b'{"name": '), ("not JSON", b"hello"),
                       ("NUL-cut", b'{"a":1}\x00junk'), ("not UTF-8", b'"\xff\xfe"'),
                       ("overlong UTF-8", b'"\xc0\xaf"'), ("surrogate", b'"\xed\xa0\x80"'),
                       ("65 deep", b"[" * 65 + b"]" * 65), ("2000 deep", b"[" * 2000 + b"]" * 2000)):
        status, _, _, got = call(port, "POST", "/items", body)
        expect(status == 400, f"a {what} body is 400: {status} {got!r}")
    status, _, _, _ = call(port, "POST", "/items", b'"' + b"x" * (64 * 1024 - 2) + b'"')
    expect(status == 201, f"a body of exactly 64 KiB is stored: {status}")
    for what, body in (("64 deep", b"[" * 64 + b"]" * 64), ("brackets in a string", b'"' + b"[" * 100 + b'"'),
                       ("UTF-8", '{"name":"skiff \u00e9\u20ac\U0001f600"}'.encode())):
        status, _, _, got = call(port, "POST", "/items", body)
        expect(status == 201, f"a {what} body is stored: {status} {got!r}")
    status, _, _, got = call(port, "GET", "/items?limit=100")
    expect(status == 200, f"the list still answers after those: {status} {got[:200]!r}")


def check_delete(port, item):
    path = f"/items/{item['id']}"
    status, _, _, body = call(port, "DELETE", path)
    expect(status == 204 and body == b"", f"DELETE: {status} {body!r}")
    expect(call(port, "GET", path)[0] == 404, "gone after DELETE")
    expect(call(port, "DELETE", path)[0] == 404, "a second DELETE is 404")
    expect(call(port, "DELETE", "/items/xyz")[0] == 404, "DELETE of a non-numeric id is 404")


def check_concurrent_creates(port):
    ids = []
    def create(i):
        status, _, _, body = call(port, "POST", "/items", json.dumps({"c": i}).encode())
        if status == 201:
            ids.append(json.loads(body)["id"])
    threads = [threading.Thread(target=create, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expect(len(set(ids)) == 50, f"50 concurrent creates, 50 distinct ids: {len(ids)}, {len(set(ids))}")
    return ids


def main():
    policy = sys.argv[2] if len(sys.argv) > 2 else "single"
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "store.db")
        port = free_port()
        server = start(sys.argv[1], port, db, policy)
        try:
            item = check_items(port)
            check_list(port)
            check_bad_bodies(port)
            check_delete(port, item)
            ids = check_concurrent_creates(port)
            expect(server.poll() is None, "the server is still running")
        finally:
            stop(server)
        with sqlite3.connect(db) as c:
            expect(c.execute("PRAGMA journal_mode").fetchone()[0] == "wal", "the file is in WAL mode")
        port = free_port()
        server = start(sys.argv[1], port, db, policy)
        try:
            status, _, _, body = call(port, "GET", f"/items/{ids[0]}")
            expect(status == 200 and json.loads(body)["id"] == ids[0], f"kept across a restart: {status}")
        finally:
            stop(server)
    print(f"sqlite_store ({policy}): 6 groups passed, 0 failed")


if __name__ == "__main__":
    main()
