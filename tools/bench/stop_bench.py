#!/usr/bin/env python3
"""Issue 28's stop target, measured from outside: stop() with default options while S SSE
streams are open and W deferred answers will never complete.

For each run: tools/bench/stop_app (server on --server-cpu) gets S `GET /events` (each read
up to its first event) and W `GET /never` (each handler has run: checked on /count), then
SIGTERM, which calls stop(). Then every client reads to EOF, on --load-cpu. Per run:

  run_ms    from the signal to run() returning (the server's own clock: stop_app prints it)
  exit_ms   from sending SIGTERM to the process having exited (this script's clock)
  last_ms   from sending SIGTERM to the last client's EOF
  clean     stream clients whose body ended with the last chunk and nothing after it
  refused   waiting clients that got exactly one answer, 503 with Connection: close

Prints one line per run and, per policy, the median and range of each. Passing (the
issue's target): run_ms <= 1000, clean == S and refused == W in every run.

    tools/bench/stop_bench.py                      # builds stop_app with -O2, 5 runs a policy
    tools/bench/stop_bench.py --app build/stop_app --runs 3 --policies single,shared
"""
import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from harness.procs import free_port, wait_listening  # noqa: E402


def build_app(out):
    cxx = os.environ.get("CXX", "c++")
    cmd = [cxx, "-std=c++17", "-O2", "-DNDEBUG", "-I", os.path.join(ROOT, "include"),
           os.path.join(HERE, "stop_app.cpp"), "-o", out, "-pthread"]
    subprocess.run(cmd, check=True)
    return out


def dechunk_clean(data):
    """True when data is a whole chunked body: chunks, the last chunk, nothing after."""
    at = 0
    while True:
        eol = data.find(b"\r\n", at)
        if eol < 0:
            return False
        try:
            size = int(data[at:eol].split(b";")[0], 16)
        except ValueError:
            return False
        at = eol + 2
        if size == 0:
            return data[at:] == b"\r\n"
        if data[at + size:at + size + 2] != b"\r\n":
            return False
        at += size + 2


async def open_stream(port):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"GET /events HTTP/1.1\r\nHost: b\r\n\r\n")
    head = await r.readuntil(b"\r\n\r\n")
    size = int((await r.readuntil(b"\r\n")).split(b";")[0], 16)
    first = await r.readexactly(size + 2)  # the chunk carrying "data: hello\n\n", and its CRLF
    return r, w, head, first


async def open_waiter(port):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"GET /never HTTP/1.1\r\nHost: b\r\n\r\n")
    await w.drain()
    return r, w


async def count(port):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"GET /count HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n")
    data = await r.read()
    w.close()
    streams, waiting = data.split(b"\r\n\r\n", 1)[1].split()
    return int(streams), int(waiting)


async def read_to_eof(r, t0, timeout):
    data = b""
    try:
        while True:
            piece = await asyncio.wait_for(r.read(65536), timeout)
            if not piece:
                break
            data += piece
    except (asyncio.TimeoutError, ConnectionError):
        return data, None
    return data, (time.monotonic() - t0) * 1000


def refused_ok(data):
    if not data.startswith(b"HTTP/1.1 503 "):
        return False
    head, _, body = data.partition(b"\r\n\r\n")
    fields = {l.split(b":", 1)[0].strip().lower(): l.split(b":", 1)[1].strip()
              for l in head.split(b"\r\n")[1:] if b":" in l}
    length = int(fields.get(b"content-length", b"-1"))
    return fields.get(b"connection", b"").lower() == b"close" and len(body) == length


async def one_run(app, policy, streams, waiters, server_cpu):
    port = free_port()
    env = dict(os.environ, PORT=str(port), POLICY=policy, WORKERS="1")
    out = tempfile.TemporaryFile()
    proc = subprocess.Popen(["taskset", "-c", str(server_cpu), app], env=env, stdout=out,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        if not wait_listening(port, proc):
            raise RuntimeError("stop_app did not start")
        opened = []
        for i in range(0, streams, 50):
            opened += await asyncio.gather(*[open_stream(port) for _ in range(min(50, streams - i))])
        waiting = await asyncio.gather(*[open_waiter(port) for _ in range(waiters)])
        for _ in range(500):
            if await count(port) == (streams, waiters):
                break
            await asyncio.sleep(0.01)
        else:
            raise RuntimeError("the server never held every request")

        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        s_reads = [read_to_eof(r, t0, 15) for r, _, _, _ in opened]
        w_reads = [read_to_eof(r, t0, 15) for r, _ in waiting]
        results = await asyncio.gather(*(s_reads + w_reads))
        while proc.poll() is None and time.monotonic() - t0 < 20:
            await asyncio.sleep(0.001)
        exit_ms = (time.monotonic() - t0) * 1000
        s_res, w_res = results[:streams], results[streams:]
        clean = sum(1 for data, t in s_res if t is not None and dechunk_clean(data))
        refused = sum(1 for data, t in w_res if t is not None and refused_ok(data))
        ends = [t for _, t in results if t is not None]
        for _, w, _, _ in opened:
            w.close()
        for _, w in waiting:
            w.close()
        out.seek(0)
        run_ms = None
        for line in out.read().decode(errors="replace").splitlines():
            if line.startswith("stopped run_ms="):
                run_ms = float(line.split("=")[1])
        return {"run_ms": run_ms, "exit_ms": exit_ms, "last_ms": max(ends) if ends else None,
                "clean": clean, "refused": refused}
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    return "%.0f [%.0f-%.0f]" % (statistics.median(values), min(values), max(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--app", help="a built stop_app (default: build one with -O2 into a temporary directory)")
    ap.add_argument("--policies", default="single,sharded,shared")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--streams", type=int, default=100)
    ap.add_argument("--waiters", type=int, default=100)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="stop_bench_")
    app = args.app or build_app(os.path.join(tmp, "stop_app"))
    try:
        os.sched_setaffinity(0, {args.load_cpu})
    except OSError:
        pass
    passed = True
    for policy in args.policies.split(","):
        runs = []
        for i in range(args.runs):
            r = asyncio.run(one_run(app, policy, args.streams, args.waiters, args.server_cpu))
            runs.append(r)
            print("%-7s run %d: run_ms=%s exit_ms=%.0f last_ms=%s clean=%d/%d refused=%d/%d" % (
                policy, i + 1, "%.1f" % r["run_ms"] if r["run_ms"] is not None else "n/a", r["exit_ms"],
                "%.0f" % r["last_ms"] if r["last_ms"] is not None else "n/a",
                r["clean"], args.streams, r["refused"], args.waiters), flush=True)
            ok = (r["run_ms"] is not None and r["run_ms"] <= 1000 and r["clean"] == args.streams
                  and r["refused"] == args.waiters)
            passed = passed and ok
        print("%-7s median [range] over %d runs: run_ms %s, exit_ms %s, last_ms %s, clean %s, refused %s" % (
            policy, len(runs), summary([r["run_ms"] for r in runs]), summary([r["exit_ms"] for r in runs]),
            summary([r["last_ms"] for r in runs]), summary([r["clean"] for r in runs]),
            summary([r["refused"] for r in runs])), flush=True)
    print("target (run_ms <= 1000, every stream clean, every waiter 503 + close): %s" % ("met" if passed else "NOT met"))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
