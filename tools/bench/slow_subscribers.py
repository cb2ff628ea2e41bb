#!/usr/bin/env python3
"""Issue 28, defect 5: slow subscribers must not stall everyone.

The server (tools/bench/slow_subscribers_app.cpp, built here with g++ -O2 unless --app names a
binary) pushes a 4 KiB server-sent event every 20 ms to each subscriber of /events. This
script opens S subscribers that connect, send the request with a small SO_RCVBUF and never
read; one subscriber that reads everything; and a probe that asks `GET /` on a fresh
connection every --probe-ms. For --seconds it samples the server's RSS; then the subscribers
go and, --settle seconds later, the RSS after the streams ended is read.

Target (issue 28): RSS within max_buffered + 64 MiB (128 MiB with the defaults), the probe's
p99 under 10 ms, no probe or reading subscriber reset or timed out, under single and shared.

Prints, per policy and mode: RSS peak (VmHWM) and after, probe count, p50/p99/max (ms),
probe failures (reset / timeout / other), the reading subscriber's bytes and how it ended,
and the three slowest probes with when they ran (seconds after the subscribers joined).
The server runs on CPU 0 (--server-cpu) and the clients on CPU 1 (--load-cpu).

    tools/bench/slow_subscribers.py                               # single and shared, both modes
    tools/bench/slow_subscribers.py --policy shared --mode throttle --seconds 20
    tools/bench/slow_subscribers.py --include /tmp/old/include     # a build of other sources
"""
import argparse
import multiprocessing
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from harness.procs import free_port, wait_listening  # noqa: E402

EVENTS = b"GET /events HTTP/1.1\r\nHost: b\r\n\r\n"
GET = b"GET / HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n"


def status_kib(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def build(include, out, source="slow_subscribers_app.cpp"):
    src = os.path.join(HERE, source)
    cmd = ["g++", "-std=c++17", "-O2", "-DNDEBUG", "-I", include, src, "-o", out, "-pthread"]
    subprocess.run(cmd, check=True)
    return out


def open_silent(port, count, rcvbuf, request):
    """count clients that send `request` with a small SO_RCVBUF and never read."""
    socks = []
    for _ in range(count):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.connect(("127.0.0.1", port))
        s.sendall(request)
        socks.append(s)
    return socks


def summary(policy, mode, hwm, peak, after, lat, fails):
    """The line's start both scripts print: RSS (KiB in), then the probe's latencies (sorted
    here) and failures."""
    lat.sort()
    p = (lambda q_: lat[min(len(lat) - 1, int(q_ * len(lat)))]) if lat else (lambda q_: float("nan"))
    return ("%-7s %-8s rss peak %5.0f MiB (sampled %5.0f)  after %5.0f MiB  GET / n=%d p50 %.2f p99 %.2f max %.1f ms"
            "  failed reset=%d timeout=%d other=%d" % (
                policy, mode, max(hwm, peak) / 1024, peak / 1024, after / 1024, len(lat), p(0.5), p(0.99),
                lat[-1] if lat else float("nan"), fails["reset"], fails["timeout"], fails["other"]))


def add_common_args(ap, app_name):
    ap.add_argument("--app", help="a built %s (else built from --include)" % app_name)
    ap.add_argument("--include", default=os.path.join(ROOT, "include"))
    ap.add_argument("--policy", action="append", choices=["single", "sharded", "shared"])
    ap.add_argument("--mode", action="append", choices=["ignore", "throttle"])
    ap.add_argument("--rcvbuf", type=int, default=4096)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--settle", type=float, default=3)
    ap.add_argument("--probe-ms", type=float, default=50)
    ap.add_argument("--workers", type=int, default=2, help="for sharded and shared")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1)


def run_all(args, app_name, run_one):
    """Every policy and mode asked for (default: single and shared, both modes), with the
    descriptor limit raised for the thousands of clients."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    app = args.app or build(args.include, "/tmp/%s_%d" % (app_name, os.getpid()), app_name + ".cpp")
    for policy in args.policy or ["single", "shared"]:
        for mode in args.mode or ["ignore", "throttle"]:
            run_one(app, policy, mode, args)


def probe(port, cpu, period, stop, out):
    """GET / on a fresh connection every `period` s: its latency in ms, or why it failed."""
    os.sched_setaffinity(0, {cpu})
    lat, fails = [], {"reset": 0, "timeout": 0, "other": 0}
    start = time.perf_counter()
    worst = []  # (ms, seconds since the probe began)
    while not stop.is_set():
        t = time.perf_counter()
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.settimeout(10)
            s.sendall(GET)
            data = b""
            while not data.endswith(b"Hello, World!"):
                b = s.recv(4096)
                if not b:
                    raise ConnectionResetError("EOF before the answer")
                data += b
            s.close()
            lat.append((time.perf_counter() - t) * 1e3)
            worst = sorted(worst + [(lat[-1], t - start)], reverse=True)[:3]
        except (ConnectionResetError, BrokenPipeError):
            fails["reset"] += 1
        except socket.timeout:
            fails["timeout"] += 1
        except OSError:
            fails["other"] += 1
        left = period - (time.perf_counter() - t)
        if left > 0:
            time.sleep(left)
    out.put((lat, fails, worst))


def reader(port, cpu, stop, out):
    """One subscriber that reads all it is sent: bytes received, and how it ended."""
    os.sched_setaffinity(0, {cpu})
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(EVENTS)
    s.settimeout(0.2)
    got, end = 0, "open"
    while not stop.is_set():
        try:
            b = s.recv(1 << 16)
        except socket.timeout:
            continue
        except OSError:
            end = "reset"
            break
        if not b:
            end = "closed"
            break
        got += len(b)
    s.close()
    out.put((got, end))


def run_one(app, policy, mode, args):
    port = free_port()
    env = dict(os.environ, PORT=str(port), POLICY=policy, MODE=mode, WORKERS=str(args.workers))
    srv = subprocess.Popen(["taskset", "-c", str(args.server_cpu), app], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        if not wait_listening(port, srv):
            raise SystemExit("server did not start")
        os.sched_setaffinity(0, {args.load_cpu})
        q = multiprocessing.Queue()
        stop = multiprocessing.Event()
        rd = multiprocessing.Process(target=reader, args=(port, args.load_cpu, stop, q))
        rd.start()
        subs = open_silent(port, args.subscribers, args.rcvbuf, EVENTS)
        pq = multiprocessing.Queue()
        pr = multiprocessing.Process(target=probe, args=(port, args.load_cpu, args.probe_ms / 1e3, stop, pq))
        pr.start()
        begin = time.monotonic()
        end = begin + args.seconds
        peak, conns, next_count = 0, [], begin
        while time.monotonic() < end and srv.poll() is None:
            peak = max(peak, status_kib(srv.pid, "VmRSS"))
            if time.monotonic() >= next_count:  # the server's open descriptors, once a second
                conns.append(len(os.listdir("/proc/%d/fd" % srv.pid)))
                next_count += 1
            time.sleep(0.1)
        stop.set()
        lat, fails, worst = pq.get(timeout=30)
        got, how = q.get(timeout=30)
        pr.join()
        rd.join()
        hwm = status_kib(srv.pid, "VmHWM")
        for s in subs:
            s.close()
        time.sleep(args.settle)
        after = status_kib(srv.pid, "VmRSS")
    finally:
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(timeout=10)
        except subprocess.TimeoutExpired:
            srv.kill()
    print("%s  reader %.1f MiB, %s  worst %s" % (
        summary(policy, mode, hwm, peak, after, lat, fails), got / 2**20, how,
        ", ".join("%.1f ms at %.1f s" % w for w in worst)), flush=True)
    print("        server descriptors each second: %s" % " ".join(str(n) for n in conns), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, "slow_subscribers_app")
    ap.add_argument("--subscribers", type=int, default=2000)
    run_all(ap.parse_args(), "slow_subscribers_app", run_one)


if __name__ == "__main__":
    main()
