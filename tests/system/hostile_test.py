#!/usr/bin/env python3
"""Hostile clients against system_app; after each, the server must still serve and its
descriptors (/proc/PID/fd) must come back to the baseline.
  slowloris        500 connections trickling a header line each second while a normal client
                   keeps being served (each request within a generous 2 s); all 500 get 408 at
                   header_timeout (set to 3 s here).
  connection_flood 200 held connections with max_connections = 50: the excess get 503 and are
                   closed, the 50 are served; once those 50 are idle, 20 newcomers are served
                   and 20 of the idle ones closed; then 1,000 connect-and-close in a burst.
  fd_exhaustion    RLIMIT_NOFILE = 64 and 150 connections: the server stays up without spinning
                   (under 0.5 s of CPU a second), serves those it accepted, and serves again
                   once they close; twice.
  resets           SO_LINGER 0 resets mid-head, mid-body, mid-chunk, mid-response and behind a
                   pipeline it never reads, 60 of each.
  never_reads      4 clients pipelining 200,000 requests for 256 KiB each and never reading:
                   server RSS grows by less than 64 MiB and the server stops reading them; a
                   client that never reads one 16 MiB answer is dropped at write_timeout (3 s).
  stalled_pipeline_deadline, slow_pipeline_reader
                   a pipeline parked behind output the client has not taken is governed by
                   write_timeout: dropped at it when the client never reads, and answered whole
                   when it reads steadily past header_timeout (a bug until the session armed the
                   write deadline for that wait).
  memory_budget    300 connections each sending a 1 MiB body to POST /echo at once, twice: every
                   echo comes back whole, no connection is reset, server RSS grows by less
                   than max_buffered (64 MiB, or MAX_BUFFERED from the environment) plus a fixed
                   48 MiB (the answers being written:
                   the writer's batch and output parked for clients still reading), and the
                   second round leaves RSS where the first did.
  soak             keep-alive GETs with wrk in 2 s rounds until 1,000,000 requests or 10 rounds:
                   no error, and RSS after every round within 5% of the first (warm-up) round.
Usage: hostile_test.py BINARY SCENARIO"""
import os
import re
import resource
import socket
import threading
import time

from support import (HELLO, check, fetch, get_ok, main, read_responses, readable, reset, run,
                     skiff_app, wait_for)

GET = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"


def raise_own_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))


def connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def back_to_baseline(app, base, label, timeout=5):
    check(wait_for(lambda: app.fds() == base, timeout),
          "%s: server descriptors back to the baseline %d (now %d)" % (label, base, app.fds()))


def serves(app, label):
    check(app.alive() and wait_for(lambda: get_ok(app.port, timeout=2), 5), "%s: the server serves again" % label)


def release(app, base, label, socks):
    """Closes socks; the server must let go of them all and serve again."""
    for s in socks:
        s.close()
    back_to_baseline(app, base, label)
    serves(app, label)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class normal_client(threading.Thread):
    """GET / in a loop, alternately on a new connection and on one kept alive, until stopped;
    records (seconds taken, whether it was 200 Hello, World!)."""

    def __init__(self, port):
        super().__init__()
        self.port, self.results, self.done = port, [], threading.Event()

    def run(self):
        kept = None
        while not self.done.is_set():
            started = time.monotonic()
            try:
                if len(self.results) % 2:
                    ok = fetch(self.port, timeout=5)[0::2] == (200, HELLO)
                else:
                    kept = kept or connect(self.port)
                    kept.sendall(GET)
                    got = read_responses(kept, 1, timeout=5)
                    ok = [(s, b) for s, _, b in got] == [(200, HELLO)]
            except OSError:
                ok = False
            self.results.append((time.monotonic() - started, ok))
            time.sleep(0.01)
        if kept:
            kept.close()


def slowloris(binary):
    raise_own_nofile(4096)
    with skiff_app(binary, HEADER_TIMEOUT_MS=3000) as app:
        base = app.fds()
        slow = []
        for i in range(500):
            s = connect(app.port)
            s.sendall(b"GET /slow/%d HTTP/1.1\r\nHost: t\r\n" % i)
            slow.append(s)
        check(wait_for(lambda: app.fds() >= base + 500, 5), "slowloris: the server holds 500 slow connections")
        normal = normal_client(app.port)
        normal.start()
        try:
            answered = {}
            end = time.monotonic() + 6
            while time.monotonic() < end and len(answered) < len(slow):
                for s in slow:
                    if s not in answered:
                        try:
                            s.send(b"X-Slow: 1\r\n")
                        except OSError:
                            pass
                for s in readable([s for s in slow if s not in answered], 1.0):
                    try:
                        answered[s] = s.recv(4096)
                    except OSError as e:
                        answered[s] = repr(e).encode()
        finally:
            normal.done.set()
            normal.join(10)
        results = normal.results
        worst = max(t for t, _ in results)
        print("  normal client: %d requests, the slowest %.3f s" % (len(results), worst), flush=True)
        check(len(results) > 50 and all(ok for _, ok in results) and worst < 2.0,
              "slowloris: every normal request was answered 200, each within 2 s")
        got408 = sum(1 for v in answered.values() if v.startswith(b"HTTP/1.1 408"))
        check(got408 == 500, "slowloris: all 500 slow connections got 408 at header_timeout (%d did)" % got408)
        release(app, base, "slowloris", slow)


def connection_flood(binary):
    raise_own_nofile(4096)
    with skiff_app(binary, MAX_CONNECTIONS=50) as app:
        base = app.fds()
        socks = [connect(app.port) for _ in range(200)]
        # Until 150 are answered or 4 s pass (well before a silent one meets header_timeout, 10 s).
        answered, end = set(), time.monotonic() + 4
        while len(answered) < 150 and time.monotonic() < end:
            answered.update(readable([s for s in socks if s not in answered], 0.2))
        time.sleep(0.2)   # one more beyond the 150 would show now
        answered.update(readable([s for s in socks if s not in answered], 0))
        refused = sum(1 for s in answered if s.recv(4096).startswith(b"HTTP/1.1 503"))
        held = [s for s in socks if s not in answered]
        check(refused == 150 and len(held) == 50,
              "connection_flood: of 200 connections 150 got 503 and 50 were held (%d, %d)" % (refused, len(held)))
        for s in held:
            s.sendall(GET)
        answers = [read_responses(s, 1, timeout=5) for s in held]
        check(all([(st, b) for st, _, b in a] == [(200, HELLO)] for a in answers),
              "connection_flood: the 50 held connections are served")
        # Now the 50 are idle keep-alive connections: 20 newcomers are served in their place,
        # and 20 of the idle ones are closed to make room.
        newcomers = [connect(app.port) for _ in range(20)]
        for s in newcomers:
            s.sendall(GET)
        answers = [read_responses(s, 1, timeout=5) for s in newcomers]
        check(all([(st, b) for st, _, b in a] == [(200, HELLO)] for a in answers),
              "connection_flood: with every place held by an idle connection, 20 newcomers are served")
        closed = [s for s in readable(held, 1) if s.recv(4096) == b""]
        check(len(closed) == 20, "connection_flood: 20 idle connections gave way (%d)" % len(closed))
        release(app, base, "connection_flood", socks + newcomers)
        release(app, base, "connection_flood, 1,000 connect-and-close", [connect(app.port) for _ in range(1000)])


def fd_exhaustion(binary):
    raise_own_nofile(4096)
    with skiff_app(binary, nofile=64) as app:
        base = app.fds()
        for round in (1, 2):
            socks = [connect(app.port) for _ in range(150)]
            time.sleep(0.5)   # the server runs out of descriptors accepting them
            before = cpu_seconds(app.pid)
            time.sleep(1.0)
            spent = cpu_seconds(app.pid) - before
            check(app.alive() and spent < 0.5,
                  "fd_exhaustion round %d: up, and not spinning, with 150 connections and 64 descriptors "
                  "(%.2f s CPU in 1 s)" % (round, spent))
            for s in socks:   # those accepted before the limit are served; the rest wait their turn
                s.sendall(GET)
            answered, end = set(), time.monotonic() + 3
            while time.monotonic() < end:   # until 0.5 s bring no more answers
                more = readable([s for s in socks if s not in answered], 0.5)
                if not more and answered:
                    break
                answered.update(more)
            served = sum(1 for s in answered if s.recv(4096).startswith(b"HTTP/1.1 200 OK"))
            check(10 <= served < 150, "fd_exhaustion round %d: the connections it could accept are served "
                  "(%d of 150), the others wait" % (round, served))
            release(app, base, "fd_exhaustion round %d" % round, socks)


def resets(binary):
    with skiff_app(binary) as app:
        base = app.fds()
        big = b"GET /big/4096 HTTP/1.1\r\nHost: t\r\n\r\n"
        cases = {
            "mid-head": (b"GET / HTTP/1.1\r\nHost: t\r\nX-Half: ", 0),
            "mid-body": (b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 100_000, 0),
            "mid-chunk": (b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                          b"10000\r\n" + b"y" * 30_000, 0),
            "mid-response": (big, 1024),
            "behind an unread pipeline": (b"GET /big/64 HTTP/1.1\r\nHost: t\r\n\r\n" * 50, 0),
        }
        for label, (data, read_first) in cases.items():
            for _ in range(60):
                s = connect(app.port)
                s.sendall(data)
                if read_first:
                    s.recv(read_first)
                reset(s)
            check(app.alive() and get_ok(app.port), "resets: 60 resets %s, the server still serves" % label)
        back_to_baseline(app, base, "resets")


def push_never_reading(port, batch, clients, seconds, on_tick):
    """clients connections (a 4 KiB receive buffer) pushing batch for seconds, never reading;
    on_tick() after each pass. Returns [(socket, bytes the server's side took)]."""
    readers = []
    for _ in range(clients):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.setblocking(False)
        readers.append([s, 0])
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for r in readers:
            try:
                r[1] += r[0].send(batch[r[1]:r[1] + 262144]) if r[1] < len(batch) else 0
            except BlockingIOError:
                pass
            except OSError:
                r[1] = -1   # reset: dropped
        on_tick()
        time.sleep(0.02)
    return readers


def never_reads(binary):
    with skiff_app(binary, WRITE_TIMEOUT_MS=3000) as app:
        base, rss0 = app.fds(), app.rss_kib()
        peak = [rss0]
        batch = b"GET /big/256 HTTP/1.1\r\nHost: t\r\n\r\n" * 200_000   # 6.8 MB of requests, 50 GiB of answers
        readers = push_never_reading(app.port, batch, 4, 3.0, lambda: peak.append(app.rss_kib()))
        taken = [r[1] for r in readers]
        print("  server RSS %d KiB before, %d KiB at the peak; bytes of requests taken %s of %d" % (
            rss0, max(peak), taken, len(batch)), flush=True)
        check(max(peak) - rss0 < 64 * 1024,
              "never_reads: 4 clients asking for 50 GiB each, server RSS grew by less than 64 MiB (%d KiB)"
              % (max(peak) - rss0))
        check(all(0 <= t < len(batch) for t in taken),
              "never_reads: the server stopped reading them (backpressure reached the senders)")
        check(get_ok(app.port), "never_reads: a normal client is served meanwhile")
        for r in readers:
            r[0].close()
        back_to_baseline(app, base, "never_reads")
        # One large answer and nothing behind it: the write deadline is what cuts it.
        started = time.monotonic()
        one = push_never_reading(app.port, b"GET /big/16384 HTTP/1.1\r\nHost: t\r\n\r\n", 1, 0.3, lambda: None)
        check(wait_for(lambda: app.fds() == base, 8),
              "never_reads: a client that never reads a 16 MiB answer is dropped by write_timeout (3 s): "
              "after %.1f s" % (time.monotonic() - started))
        one[0][0].close()
        serves(app, "never_reads")


def stalled_pipeline_deadline(binary):
    """Expected: a client that pipelines and never reads is dropped at write_timeout."""
    with skiff_app(binary, WRITE_TIMEOUT_MS=2000, HEADER_TIMEOUT_MS=20000) as app:
        base = app.fds()
        batch = b"GET /big/256 HTTP/1.1\r\nHost: t\r\n\r\n" * 20
        readers = push_never_reading(app.port, batch, 1, 0.3, lambda: None)
        try:
            dropped = wait_for(lambda: app.fds() == base, 6)
            print("  dropped within 6 s: %s (write_timeout 2 s, header_timeout 20 s)" % dropped, flush=True)
            check(dropped, "stalled_pipeline_deadline: a client pipelining 20 requests for 256 KiB and never "
                  "reading is dropped at write_timeout (2 s), not header_timeout (20 s)")
        finally:
            readers[0][0].close()


def slow_pipeline_reader(binary):
    """Expected: a client that pipelines and reads steadily gets every answer whole."""
    with skiff_app(binary, HEADER_TIMEOUT_MS=1000) as app:
        count, size = 20, 256 * 1024
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            s.connect(("127.0.0.1", app.port))
            s.sendall(b"GET /big/256 HTTP/1.1\r\nHost: t\r\n\r\n" * count)   # every head arrives now
            s.settimeout(5)
            got, started = b"", time.monotonic()
            while len(got) < count * (size + 200):
                try:
                    chunk = s.recv(16384)
                except OSError:
                    break
                if not chunk:
                    break
                got += chunk
                time.sleep(0.01)   # at most 1.6 MB/s: reading all takes over 3 s, progress all along
        whole = got.count(b"HTTP/1.1 200 OK")
        print("  %d bytes, %d answers begun, in %.1f s; header_timeout 1 s" % (
            len(got), whole, time.monotonic() - started), flush=True)
        check(whole == count and len(got) >= count * size,
              "slow_pipeline_reader: 20 pipelined GETs of 256 KiB, read steadily over about 3 s, "
              "all answered whole (got %d bytes, %d answers begun)" % (len(got), whole))


def echo_upload(port, body, results, i, all_begun):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        # All but the last byte, then hold until every upload is in flight: without a budget the
        # server would buffer 300 bodies at once; with one, those past it wait in kernel buffers
        # (their sendall blocks until the server reads them).
        s.sendall(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:-1])
        all_begun.wait(30)
        s.sendall(body[-1:])
        got = b""
        while True:
            head_end = got.find(b"\r\n\r\n")
            if head_end >= 0:
                m = re.search(rb"content-length: *(\d+)", got[:head_end], re.I)
                if m and len(got) >= head_end + 4 + int(m.group(1)):
                    break
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            got += chunk
        s.close()
        results[i] = got.startswith(b"HTTP/1.1 200") and got.endswith(body)
    except OSError as e:
        results[i] = "error: %s" % e


def held_uploads(port, count, rss_of):
    """count x 1 MiB to POST /echo, all held in flight for 2 s before their last byte; returns
    (echoes that came back whole, the first errors, the peak RSS sampled meanwhile)."""
    peak, done = [rss_of()], threading.Event()
    def sample():
        while not done.is_set():
            peak.append(rss_of())
            time.sleep(0.02)
    sampler = threading.Thread(target=sample)
    sampler.start()
    results, all_begun = [None] * count, threading.Event()
    senders = [threading.Thread(target=echo_upload, args=(port, bytes([65 + i % 26]) * (1 << 20), results, i, all_begun))
               for i in range(count)]
    for t in senders:
        t.start()
    time.sleep(2)  # the held uploads: what the server buffers now is the budget's to bound
    all_begun.set()
    for t in senders:
        t.join(60)
    done.set()
    sampler.join()
    return sum(1 for r in results if r is True), [r for r in results if r is not True][:3], max(peak)


def memory_budget(binary):
    # MAX_BUFFERED in the environment (passed on to system_app) tests a smaller budget.
    budget_mib = int(os.environ.get("MAX_BUFFERED") or 64 << 20) >> 20
    raise_own_nofile(4096)
    with skiff_app(binary) as app:
        base, rss0 = app.fds(), app.rss_kib()
        after = []
        for round in (1, 2):
            started = time.monotonic()
            right, errors, peak = held_uploads(app.port, 300, app.rss_kib)
            time.sleep(0.5)
            after.append(app.rss_kib())
            print("  round %d: %d of 300 echoes whole in %.1f s; server RSS %d KiB before, +%d KiB at the peak, "
                  "+%d KiB after %s" % (round, right, time.monotonic() - started, rss0, peak - rss0,
                                         after[-1] - rss0, errors), flush=True)
            check(right == 300, "memory_budget: 300 x 1 MiB echoes at once, every one whole (%d)" % right)
            check(peak - rss0 < (budget_mib + 48) * 1024,
                  "memory_budget: RSS growth within max_buffered (%d MiB) plus 48 MiB (%d KiB)"
                  % (budget_mib, peak - rss0))
        check(after[1] <= after[0] * 1.05 + 1024,
              "memory_budget: freed memory is reused, not a growing heap: RSS after the second round "
              "%d KiB, after the first %d KiB" % (after[1], after[0]))
        back_to_baseline(app, base, "memory_budget")
        serves(app, "memory_budget")


def soak(binary):
    with skiff_app(binary) as app:
        url = "http://127.0.0.1:%d/" % app.port
        total, rss = 0, []
        for _ in range(10):
            rc, out, err = run(["wrk", "-t", "2", "-c", "16", "-d", "2s", "--timeout", "5s", url], 20)
            m = re.search(r"(\d+) requests in", out)
            check(rc == 0 and m and "Non-2xx" not in out and "Socket errors" not in out,
                  "soak: a 2 s wrk round with no error and no non-2xx (%s)" % (err.strip() or m.group(1)))
            total += int(m.group(1))
            rss.append(app.rss_kib())
            if total >= 1_000_000:
                break
        print("  %d keep-alive requests in %d rounds; RSS after each (KiB): %s" % (total, len(rss), rss), flush=True)
        check(max(rss[1:] or rss) <= rss[0] * 1.05,
              "soak: RSS after every round within 5%% of the warm-up round's %d KiB (max %d)" % (rss[0], max(rss)))
        check(get_ok(app.port), "soak: still serving")


if __name__ == "__main__":
    main({f.__name__: f for f in (slowloris, connection_flood, fd_exhaustion, resets, never_reads, memory_budget, soak,
                                  stalled_pipeline_deadline, slow_pipeline_reader)},
         budget=85)
