#!/usr/bin/env python3
"""Issue 32: WebSocket clients that never read must not stall everyone.

slow_subscribers.py (issue 28) for WebSocket. The server (tools/bench/ws_slow_clients_app.cpp,
built here with g++ -O2 unless --app names a binary) broadcasts a 4 KiB text message every
20 ms to every client of /chat, with peer::send from a producer thread. This script opens C
clients that connect with a small SO_RCVBUF, send the upgrade (a hand-written handshake; they
send nothing after it, so nothing needs masking) and never read, not even the 101; one client
that upgrades and reads every frame; and a probe that asks `GET /` on a fresh connection every
--probe-ms (slow_subscribers.probe). For --seconds it samples the server's RSS; then the
clients go and, --settle seconds later, the RSS after they went is read.

Target (issue 32, as issue 28 set it for push streams): RSS within max_buffered + 64 MiB (128
MiB with the defaults), no probe or reading client reset or timed out, and the reading client
still receiving at the broadcast's pace.

Prints, per policy and mode: RSS peak (VmHWM) and after, the probe's count, p50/p99/max (ms)
and failures (reset / timeout / other), the reading client's messages (and the longest gap
between two, which shows a stall) and how it ended, what the app's sends said (queued,
backpressure, dropped; skipped under throttle) and the most members it had, the machine's
kernel TCP memory at its peak (/proc/net/sockstat), and the server's descriptors each second.
The server runs on CPU 0 (--server-cpu), the clients on CPU 1 (--load-cpu).

A cell stops early, and says so, when the machine's TCP memory passes tcp_mem's pressure mark
(its middle value): a WebSocket's socket keeps the kernel's own send buffer sizing (no
options::push_socket_buffer), so what the clients do not read also piles up in the kernel,
and past that mark every TCP connection of the machine is squeezed, not only this test's.
--no-tcp-guard goes on regardless; --rss-guard-mib stops a server that grows past it.

    tools/bench/ws_slow_clients.py                                   # single and shared, both modes
    tools/bench/ws_slow_clients.py --policy sharded --mode ignore --seconds 20
"""
import argparse
import multiprocessing
import os
import signal
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness.procs import free_port, wait_listening  # noqa: E402
from slow_subscribers import add_common_args, open_silent, probe, run_all, status_kib, summary  # noqa: E402

# RFC 6455 §1.3's sample key: every client may send the same one.
UPGRADE = (b"GET /chat HTTP/1.1\r\nHost: b\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def tcp_pages():
    """The kernel's TCP memory, every socket of the machine (/proc/net/sockstat), in pages."""
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith("TCP:"):
                words = line.split()
                return int(words[words.index("mem") + 1])
    return 0


def tcp_pressure_pages():
    """tcp_mem's middle value: past it Linux is under TCP memory pressure, every socket of the machine."""
    with open("/proc/sys/net/ipv4/tcp_mem") as f:
        return int(f.read().split()[1])


def frames(buf):
    """Whole server frames at the front of buf (unmasked, RFC 6455 §5.2): (opcodes, bytes used)."""
    ops, at = [], 0
    while len(buf) - at >= 2:
        op, n = buf[at] & 0x0F, buf[at + 1] & 0x7F
        head = 2
        if n == 126:
            if len(buf) - at < 4:
                break
            n, head = struct.unpack_from("!H", buf, at + 2)[0], 4
        elif n == 127:
            if len(buf) - at < 10:
                break
            n, head = struct.unpack_from("!Q", buf, at + 2)[0], 10
        if len(buf) - at < head + n:
            break
        ops.append(op)
        at += head + n
    return ops, at


def reader(port, cpu, stop, out):
    """One client that reads all it is sent: messages, the longest gap between two, the seconds
    from its first message to the end, how it ended."""
    os.sched_setaffinity(0, {cpu})
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(UPGRADE)
    s.settimeout(0.2)
    buf, head_done, messages, gap, first, last, end = b"", False, 0, 0.0, None, None, "open"
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
        buf += b
        if not head_done:
            i = buf.find(b"\r\n\r\n")
            if i < 0:
                continue
            if not buf.startswith(b"HTTP/1.1 101 "):
                end = "refused"
                break
            head_done, buf = True, buf[i + 4:]
        ops, used = frames(buf)
        buf = buf[used:]
        if 8 in ops:
            end = "close frame"
            break
        got = sum(1 for op in ops if op == 1)
        if got:
            now = time.monotonic()
            if last is not None:
                gap = max(gap, now - last)
            first = first if first is not None else now
            last, messages = now, messages + got
    s.close()
    out.put((messages, gap, time.monotonic() - first if first is not None else 0.0, end))


def run_one(app, policy, mode, args):
    port = free_port()
    env = dict(os.environ, PORT=str(port), POLICY=policy, MODE=mode, WORKERS=str(args.workers),
               PERIOD_MS="%g" % args.period_ms)
    srv = subprocess.Popen(["taskset", "-c", str(args.server_cpu), app], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, start_new_session=True, text=True)
    guard = ""
    try:
        if not wait_listening(port, srv):
            raise SystemExit("server did not start")
        os.sched_setaffinity(0, {args.load_cpu})
        q = multiprocessing.Queue()
        stop = multiprocessing.Event()
        rd = multiprocessing.Process(target=reader, args=(port, args.load_cpu, stop, q))
        rd.start()
        slow = open_silent(port, args.clients, args.rcvbuf, UPGRADE)
        pq = multiprocessing.Queue()
        pr = multiprocessing.Process(target=probe, args=(port, args.load_cpu, args.probe_ms / 1e3, stop, pq))
        pr.start()
        begin = time.monotonic()
        end = begin + args.seconds
        peak, tcp_peak, conns, next_count = 0, 0, [], begin
        tcp_limit = tcp_pressure_pages() if args.tcp_guard else None
        while time.monotonic() < end and srv.poll() is None:
            peak = max(peak, status_kib(srv.pid, "VmRSS"))
            tcp_peak = max(tcp_peak, tcp_pages())
            if peak > args.rss_guard_mib * 1024:  # a shared machine: stop before it runs out
                guard = " STOPPED at the %d MiB RSS guard after %.1f s" % (args.rss_guard_mib, time.monotonic() - begin)
                break
            if tcp_limit is not None and tcp_peak > tcp_limit:  # others' connections would suffer
                guard = " STOPPED at TCP memory pressure (%d MiB) after %.1f s" % (
                    tcp_limit * 4 // 1024, time.monotonic() - begin)
                break
            if time.monotonic() >= next_count:  # the server's open descriptors, once a second
                conns.append(len(os.listdir("/proc/%d/fd" % srv.pid)))
                next_count += 1
            time.sleep(0.1)
        stop.set()
        lat, fails, worst = pq.get(timeout=30)
        messages, gap, seconds, how = q.get(timeout=30)
        pr.join()
        rd.join()
        hwm = status_kib(srv.pid, "VmHWM")
        for s in slow:
            s.close()
        time.sleep(args.settle)
        after = status_kib(srv.pid, "VmRSS")
    finally:
        srv.send_signal(signal.SIGTERM)
        try:
            sends = srv.communicate(timeout=10)[0].strip()
        except subprocess.TimeoutExpired:
            srv.kill()
            sends = "(the app did not stop within 10 s)"
    print("%s  reader %d messages (%d due in its %.1f s), longest gap %.0f ms, %s  worst %s%s" % (
        summary(policy, mode, hwm, peak, after, lat, fails), messages, seconds * 1000 / args.period_ms, seconds,
        gap * 1e3, how, ", ".join("%.1f ms at %.1f s" % w for w in worst), guard), flush=True)
    print("        kernel TCP memory (whole machine) peak %.0f MiB  app: %s" % (tcp_peak * 4 / 1024, sends), flush=True)
    print("        server descriptors each second: %s" % " ".join(str(n) for n in conns), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, "ws_slow_clients_app")
    ap.add_argument("--clients", type=int, default=2000)
    ap.add_argument("--period-ms", type=float, default=20, help="the broadcast period (the app's PERIOD_MS)")
    ap.add_argument("--rss-guard-mib", type=int, default=4096, help="stop a cell whose server passes this")
    ap.add_argument("--no-tcp-guard", dest="tcp_guard", action="store_false",
                    help="go on past tcp_mem's pressure mark (the machine's other TCP connections suffer)")
    run_all(ap.parse_args(), "ws_slow_clients_app", run_one)


if __name__ == "__main__":
    main()
