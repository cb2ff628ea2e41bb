#!/usr/bin/env python3
"""Issue 13's benchmark targets, measured from outside against the two examples.

  slow  examples/deferred: N concurrent `GET /slow/50` (answered after 50 ms from a timer
        thread, never by sleeping on the loop), the wall time until every one is answered,
        and the latency of `GET /` on another connection meanwhile, against the same probe
        with nothing else running (its p99 both ways).
  held  examples/deferred under POLICY=shared: the keep-alive throughput of `GET /` (wrk, 32
        connections) alone, and while H other connections each wait on a `GET /slow/600000`
        (the hub watches each one's socket), alternating, ROUNDS of each; the median of each
        and their ratio. Every event asks the hub whether it is one of the held sockets, so
        this shows what that question costs as they grow.
  sse   examples/sse: S subscribers of `/events` (one producer publishes `data: N` every
        100 ms to all), each checked to receive every event of the window with no gap, while
        `GET /` is probed as above; and the server's RSS before and after they join.

Prints one line of figures per scenario. Latencies are from this script's clock (Python
asyncio on the other core), so they carry the client's own overhead too: compare them with
each other, not with the load generator's. The server runs on CPU 0 and the clients on CPU 1
(--server-cpu, --load-cpu); the probe runs there at real-time priority when allowed (root),
so that what delays it is the server, not the Python clients it shares its core with.

    tools/bench/answer_later.py --build build/release       # both, default sizes (slow: 10 bursts)
    tools/bench/answer_later.py --only sse --subscribers 1000 --seconds 5
    tools/bench/answer_later.py --only held --held 5000 --rounds 5 --seconds 3
"""
import argparse
import asyncio
import multiprocessing
import os
import resource
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from harness.procs import free_port, wait_listening  # noqa: E402

GET = b"GET / HTTP/1.1\r\nHost: b\r\n\r\n"


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head, await reader.readexactly(length)


def probe_loop(port, stop, out):
    """GET / on one keep-alive connection, one at a time, until stop is set; in a process of
    its own, ahead of the clients that load the server on its core where the system allows, so
    that they do not delay the probe's own clock."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except (PermissionError, AttributeError):
        pass
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    samples = []
    while not stop.is_set():
        t = time.perf_counter()
        s.sendall(GET)
        data = b""
        while not data.endswith(b"Hello, World!"):
            data += s.recv(4096)
        samples.append((time.perf_counter() - t) * 1e6)
        time.sleep(0.002)
    s.close()
    out.put(samples)


class probe:
    def __init__(self, port):
        self.stop, self.out = multiprocessing.Event(), multiprocessing.Queue()
        self.proc = multiprocessing.Process(target=probe_loop, args=(port, self.stop, self.out))
        self.proc.start()

    def samples(self):
        self.stop.set()
        got = self.out.get()
        self.proc.join()
        return got


def p99(samples):
    return statistics.quantiles(samples, n=100)[98] if len(samples) >= 100 else max(samples)


async def probe_alone(port, seconds):
    p = probe(port)
    await asyncio.sleep(seconds)
    return p.samples()


async def burst(port, count):
    """count concurrent GET /slow/50, each on its own connection: the wall time until every
    one is answered, whether all were answered right, and the probe's samples meanwhile."""
    prober = probe(port)

    async def one():
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /slow/50 HTTP/1.1\r\nHost: b\r\n\r\n")
        _, body = await read_response(reader)
        writer.close()
        return body == b"slept 50"

    t = time.perf_counter()
    ok = await asyncio.gather(*[one() for _ in range(count)])
    wall = time.perf_counter() - t
    return wall, all(ok), prober.samples()


async def slow(port, count, rounds):
    """One burst lasts about a quarter of a second, in which the probe gets some 60 answers: the
    p99 of so few is their maximum. So the bursts are repeated and the probe's samples pooled,
    and the probe alone runs as long as the bursts together, for as many samples."""
    walls, all_ok, during = [], True, []
    for _ in range(rounds):
        wall, ok, samples = await burst(port, count)
        walls.append(wall)
        all_ok = all_ok and ok
        during += samples
        await asyncio.sleep(0.1)
    alone = await probe_alone(port, max(1.0, sum(walls)))
    print("slow: %d concurrent GET /slow/50, %d rounds: answered %s; wall median %.0f ms (%.0f-%.0f); GET / p99 "
          "%.0f us alone, %.0f us during (%.2fx; %d and %d probes)" % (
              count, rounds, "all" if all_ok else "NOT all", statistics.median(walls) * 1000, min(walls) * 1000,
              max(walls) * 1000, p99(alone), p99(during), p99(during) / p99(alone), len(alone), len(during)))


async def subscriber(port, seconds, got):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /events HTTP/1.1\r\nHost: b\r\n\r\n")
    await reader.readuntil(b"\r\n\r\n")
    numbers, end = [], time.monotonic() + seconds
    buf = b""
    while time.monotonic() < end:
        try:
            chunk = await asyncio.wait_for(reader.read(4096), timeout=max(0.01, end - time.monotonic()))
        except asyncio.TimeoutError:
            break
        if not chunk:
            break
        buf += chunk
        for line in buf.split(b"\n")[:-1]:
            if b"data: " in line:
                numbers.append(int(line.split(b"data: ")[1]))
        buf = buf.split(b"\n")[-1]
    writer.close()
    got.append(numbers)


async def sse(port, pid, count, seconds):
    alone = await probe_alone(port, 1.0)
    before = rss_kib(pid)
    got = []
    prober = probe(port)
    subs = [asyncio.create_task(subscriber(port, seconds, got)) for _ in range(count)]
    await asyncio.sleep(seconds / 2)
    joined = rss_kib(pid)
    await asyncio.gather(*subs)
    during = prober.samples()
    gapless = sum(1 for n in got if len(n) >= 2 and n == list(range(n[0], n[0] + len(n))))
    events = statistics.median(len(n) for n in got)
    print("sse: %d subscribers over %.0f s: %d received every event with no gap (median %d events each, %.1f/s);"
          " GET / p99 %.0f us alone, %.0f us during; RSS %d KiB before, %d KiB with them" % (
              count, seconds, gapless, events, events / seconds, p99(alone), p99(during), before, joined))


def wrk_rate(port, seconds):
    out = subprocess.run(["wrk", "-t1", "-c32", "-d%ds" % max(1, round(seconds)), "http://127.0.0.1:%d/" % port],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    raise RuntimeError("wrk printed no rate:\n" + out)


def held(binary, cpu, count, seconds, rounds):
    """A fresh server for each measurement, alone and with `count` waiting in turn: closing
    thousands of waiting connections between measurements would leave its own wake behind."""
    alone, during = [], []
    for _ in range(rounds):
        for samples, waiting_count in ((alone, 0), (during, count)):
            port = free_port()
            proc = start(binary, port, cpu, {"POLICY": "shared"})
            try:
                waiting = []
                for _ in range(waiting_count):
                    s = socket.create_connection(("127.0.0.1", port))
                    s.sendall(b"GET /slow/600000 HTTP/1.1\r\nHost: b\r\n\r\n")
                    waiting.append(s)
                time.sleep(1.0)  # every one read and held
                samples.append(wrk_rate(port, seconds))
            finally:
                proc.kill()
                proc.wait()
                for s in waiting:
                    s.close()
    a, d = statistics.median(alone), statistics.median(during)
    print("held: GET / %.0f req/s alone (%.0f-%.0f), %.0f req/s while %d requests wait (%.0f-%.0f): %.2fx" % (
        a, min(alone), max(alone), d, count, min(during), max(during), d / a))


def start(binary, port, cpu, env=None):
    def more_fds():
        resource.setrlimit(resource.RLIMIT_NOFILE, (16384, 16384))
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    proc = subprocess.Popen([binary], env=dict(os.environ, PORT=str(port), **(env or {})), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=more_fds)
    if not wait_listening(port, proc, timeout=10.0):
        raise RuntimeError("%s did not start" % binary)
    return proc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"), help="a build with the examples")
    ap.add_argument("--only", choices=["slow", "held", "sse"])
    ap.add_argument("--concurrent", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=10, help="slow: bursts whose probe samples are pooled; held: measurements each way")
    ap.add_argument("--held", type=int, default=5000, help="held: requests waiting meanwhile")
    ap.add_argument("--subscribers", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--server-cpu", type=int, default=0, help="-1: not pinned")
    ap.add_argument("--load-cpu", type=int, default=1, help="-1: not pinned")
    a = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (16384, 16384))
    if a.load_cpu >= 0:
        os.sched_setaffinity(0, {a.load_cpu})  # the probe's process inherits it
    for name in ("slow", "held", "sse"):
        if a.only and a.only != name:
            continue
        binary = os.path.join(a.build, "examples", "sse" if name == "sse" else "deferred")
        server_cpu = a.server_cpu if a.server_cpu >= 0 else None
        if name == "held":
            held(binary, server_cpu, a.held, a.seconds, a.rounds)
            continue
        port = free_port()
        proc = start(binary, port, server_cpu)
        try:
            if name == "slow":
                asyncio.run(slow(port, a.concurrent, a.rounds))
            else:
                asyncio.run(sse(port, proc.pid, a.subscribers, a.seconds))
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
