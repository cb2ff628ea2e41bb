#!/usr/bin/env python3
"""urus-bench S4 on examples/sqlite_store: 80% GET /items/:id, 15% GET /items?limit=20,
5% POST /items, driven by wrk with s4.lua. The server runs on CPU 0 and wrk on CPU 1
(taskset), on a fresh database seeded with SEEDED items. Prints, per round, the rate wrk
sustained, its p50/p99/p99.9, and the server's RSS at the end and its peak (VmHWM).
Usage: bench_s4.py BINARY [--policy single] [--connections 16] [--seconds 10] [--rounds 3]"""
import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDED = 1000


def memory_kib(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            fields[name] = value.split()[0] if value.split() else ""
    return int(fields["VmRSS"]), int(fields["VmHWM"])


def wait_ready(port):
    for _ in range(100):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/items?limit=1")
            c.getresponse().read()
            return c
        except OSError:
            time.sleep(0.05)
    sys.exit("bench_s4: the server did not start")


def seed(conn):
    for i in range(SEEDED):
        conn.request("POST", "/items", body=json.dumps({"seed": i, "name": f"item {i}"}),
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        if r.status != 201:
            sys.exit(f"bench_s4: seeding answered {r.status}")


def one_round(args, port):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PORT=str(port), DB=os.path.join(tmp, "s4.db"), POLICY=args.policy)
        server = subprocess.Popen(["taskset", "-c", "0", args.binary], env=env, stdout=subprocess.DEVNULL)
        try:
            seed(wait_ready(port))
            out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", f"-c{args.connections}",
                                  f"-d{args.seconds}s", "-s", os.path.join(HERE, "s4.lua"),
                                  f"http://127.0.0.1:{port}"],
                                 env=dict(os.environ, SEEDED=str(SEEDED)), capture_output=True, text=True,
                                 check=True).stdout
            result = json.loads(out.split("S4 ", 1)[1].splitlines()[0])
            result["rss_kib"], result["peak_rss_kib"] = memory_kib(server.pid)
            return result
        finally:
            server.terminate()
            server.wait(timeout=15)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--policy", default="single")
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--seconds", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--port", type=int, default=18431)
    args = p.parse_args()
    rounds = [one_round(args, args.port) for _ in range(args.rounds)]
    for r in rounds:
        rate = r["requests"] / r["seconds"]
        print(f"S4 {args.policy} c={args.connections}: {rate:,.0f} req/s, p50 {r['p50_us'] / 1000:.2f} ms, "
              f"p99 {r['p99_us'] / 1000:.2f} ms, p99.9 {r['p999_us'] / 1000:.2f} ms, "
              f"errors {r['errors']}, non-2xx {r['non2xx']}, RSS {r['rss_kib'] / 1024:.1f} MiB "
              f"(peak {r['peak_rss_kib'] / 1024:.1f} MiB)")
    print(json.dumps(rounds))


if __name__ == "__main__":
    main()
