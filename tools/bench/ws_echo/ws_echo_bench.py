#!/usr/bin/env python3
"""Server CPU time per echoed WebSocket message: skiff against Boost.Beast and gorilla/websocket.

    python3 tools/bench/ws_echo/ws_echo_bench.py [--rounds 5] [--connections 100]
            [--size 32] [--seconds 5] [--warmup 1] [--rebuild]

Builds what is missing into build/bench/ws_echo/ (build.sh beside this file), then for each
round (the server order rotated every round) and each server: starts the server pinned to
CPU 0 (taskset -c 0), waits for its "serving" line, runs the load generator pinned to CPU 1
(load: N connections, each a closed loop of one message and its echo), and reads the
server's utime+stime (/proc/PID/stat, all its threads) when the load generator prints "warm"
(the end of the warm-up) and again when it prints its JSON (the end of the measured window).
CPU per message = that CPU time / the echoes counted in the window. The server is then
stopped (SIGTERM, then SIGKILL).

Prints a Markdown table; writes the raw results (JSON) and the table (Markdown) to
build/bench/ws_echo/results/. Stdlib only. Linux only (taskset, /proc).
"""
import argparse
import datetime
import json
import os
import platform
import select
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
OUT = os.path.join(ROOT, "build", "bench", "ws_echo")
RESULTS = os.path.join(OUT, "results")
CLK_TCK = os.sysconf("SC_CLK_TCK")

SERVERS = {
    # name: (binary, extra environment)
    "skiff": ("skiff_ws", {"POLICY": "single", "ROOT": os.path.join(ROOT, "examples", "www")}),
    "beast": ("beast_echo", {}),
    "gorilla": ("gorilla_echo", {"GOMAXPROCS": "1"}),
}
ORDER = ["skiff", "beast", "gorilla"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pid):
    """(utime, stime) of the whole process (every thread, live or exited), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return int(rest[11]), int(rest[12])  # fields 14 and 15 of proc(5)


def machine_facts():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break

    def cmd(args):
        try:
            return subprocess.run(args, capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
        except Exception:
            return "?"

    boost = "?"
    try:
        with open("/usr/include/boost/version.hpp") as f:
            for line in f:
                if line.startswith("#define BOOST_LIB_VERSION"):
                    boost = line.split('"')[1]
    except OSError:
        pass
    gorilla = cmd(["dpkg-query", "-W", "-f=${Version}", "golang-github-gorilla-websocket-dev"])
    return {
        "cpu_model": model,
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "cxx": cmd([os.environ.get("CXX", "g++"), "--version"]),
        "go": cmd(["go", "version"]),
        "boost": boost,
        "gorilla_websocket_deb": gorilla,
    }


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def build(rebuild):
    env = dict(os.environ)
    if rebuild:
        env["REBUILD"] = "1"
    subprocess.run([os.path.join(HERE, "build.sh")], check=True, env=env)


def start_server(name, port):
    binary, extra = SERVERS[name]
    env = dict(os.environ)
    env.update(extra)
    env["PORT"] = str(port)
    proc = subprocess.Popen(["taskset", "-c", "0", os.path.join(OUT, binary)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    lines = []
    while time.monotonic() < deadline:
        r, _, _ = select.select([proc.stdout], [], [], 0.5)
        if r:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            if "serving" in line:
                # Drain what it prints later, so that a full pipe never blocks it.
                threading.Thread(target=lambda: [lines.append(l.rstrip()) for l in proc.stdout], daemon=True).start()
                return proc, lines
        if proc.poll() is not None:
            break
    proc.kill()
    proc.wait()
    raise RuntimeError(f"{name} did not start: {lines}")


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_one(name, args):
    port = free_port()
    srv, srv_lines = start_server(name, port)
    load = None
    try:
        comm = open(f"/proc/{srv.pid}/comm").read().strip()
        load = subprocess.Popen(["taskset", "-c", "1", os.path.join(OUT, "load"), "127.0.0.1", str(port), "/echo",
                                 str(args.connections), str(args.seconds), str(args.size), str(args.warmup)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        rec = {"server": name, "comm": comm, "port": port}
        warm = None
        result = None
        for line in load.stdout:
            line = line.strip()
            if line == "warm":
                warm = (cpu_ticks(srv.pid), cpu_ticks(load.pid), time.monotonic())
            elif line.startswith("{"):
                end = (cpu_ticks(srv.pid), cpu_ticks(load.pid), time.monotonic())
                result = json.loads(line)
        err = load.stderr.read()
        rc = load.wait()
        rec.update({"load_rc": rc, "load_stderr": err.strip()})
        if result is None or warm is None:
            rec["error"] = "load generator gave no result"
            return rec
        rec.update(result)
        rec["server_user_s"] = (end[0][0] - warm[0][0]) / CLK_TCK
        rec["server_sys_s"] = (end[0][1] - warm[0][1]) / CLK_TCK
        rec["server_cpu_s"] = rec["server_user_s"] + rec["server_sys_s"]
        rec["load_cpu_s"] = (sum(end[1]) - sum(warm[1])) / CLK_TCK
        rec["driver_window_s"] = end[2] - warm[2]
        m = result["messages"]
        rec["messages_per_s"] = m / result["seconds"] if result["seconds"] > 0 else 0.0
        rec["server_cpu_us_per_msg"] = rec["server_cpu_s"] * 1e6 / m if m else None
        rec["server_user_us_per_msg"] = rec["server_user_s"] * 1e6 / m if m else None
        rec["server_sys_us_per_msg"] = rec["server_sys_s"] * 1e6 / m if m else None
        rec["server_core_busy"] = rec["server_cpu_s"] / result["seconds"] if result["seconds"] > 0 else None
        rec["load_core_busy"] = rec["load_cpu_s"] / result["seconds"] if result["seconds"] > 0 else None
        return rec
    finally:
        if load is not None and load.poll() is None:
            load.kill()
            load.wait()
        stop_server(srv)
        rec_lines = [l for l in srv_lines if l]
        if len(rec_lines) > 1:
            print(f"  ({name} printed: {rec_lines[1:][:5]})", file=sys.stderr)


def med_range(xs, fmt):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def report(runs, facts, args, load_start, load_end):
    by = {n: [r for r in runs if r["server"] == n] for n in ORDER}
    med_cpu = {n: statistics.median([r["server_cpu_us_per_msg"] for r in by[n] if r.get("server_cpu_us_per_msg")] or [float("nan")])
               for n in ORDER}
    out = []
    out.append(f"{args.connections} connections, {args.size}-byte text messages, {args.warmup:g} s warm-up, "
               f"{args.seconds:g} s measured, {args.rounds} rounds (server order rotated each round); "
               f"server on CPU 0, load generator on CPU 1.")
    out.append("")
    out.append("| server | messages/s, median (min-max) | server CPU µs per message, median (min-max) "
               "| ÷ skiff | of which user / kernel µs, medians | server core busy, median "
               "| load core busy, median | errors |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for n in ORDER:
        rs = by[n]
        errors = sum(r.get("errors", 0) for r in rs) + sum(1 for r in rs if "error" in r)
        busy = [r["server_core_busy"] for r in rs if r.get("server_core_busy") is not None]
        lbusy = [r["load_core_busy"] for r in rs if r.get("load_core_busy") is not None]
        out.append(f"| {n} | {med_range([r.get('messages_per_s') for r in rs], '{:,.0f}')} "
                   f"| {med_range([r.get('server_cpu_us_per_msg') for r in rs], '{:.2f}')} "
                   f"| {med_cpu[n] / med_cpu['skiff']:.2f}x "
                   f"| {statistics.median([r['server_user_us_per_msg'] for r in rs if r.get('server_user_us_per_msg') is not None]):.2f}"
                   f" / {statistics.median([r['server_sys_us_per_msg'] for r in rs if r.get('server_sys_us_per_msg') is not None]):.2f} "
                   f"| {statistics.median(busy) * 100:.0f}% | {statistics.median(lbusy) * 100:.0f}% | {errors} |")
    best = min(med_cpu["beast"], med_cpu["gorilla"])
    ratio = med_cpu["skiff"] / best
    per_round = []
    for i in range(args.rounds):
        rr = {r["server"]: r.get("server_cpu_us_per_msg") for r in runs if r["round"] == i}
        if all(rr.get(n) for n in ORDER):
            per_round.append(rr["skiff"] / min(rr["beast"], rr["gorilla"]))
    out.append("")
    out.append(f"skiff ÷ min(beast, gorilla), server CPU per message (medians): **{ratio:.2f}** "
               f"({'meets' if ratio <= 0.5 else 'does not meet'} the target of at most 0.5); "
               f"per round: {', '.join(f'{x:.2f}' for x in per_round)}.")
    out.append("")
    out.append(f"Machine: {facts['cpu_model']}, {facts['cpus']} CPUs, Linux {facts['kernel']}; "
               f"load average (1/5/15 min) {load_start} at start, {load_end} at end. "
               f"{facts['cxx']}; Boost {facts['boost']}; {facts['go']}, gorilla/websocket {facts['gorilla_websocket_deb']} (Debian).")
    return "\n".join(out), ratio, per_round, med_cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "5")))
    ap.add_argument("--connections", type=int, default=100)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()

    build(args.rebuild)
    facts = machine_facts()
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = loadavg()
    runs = []
    for rnd in range(args.rounds):
        order = ORDER[rnd % len(ORDER):] + ORDER[:rnd % len(ORDER)]
        for name in order:
            rec = run_one(name, args)
            rec["round"] = rnd
            runs.append(rec)
            cpu = rec.get("server_cpu_us_per_msg")
            print(f"round {rnd + 1}/{args.rounds} {name:8s} {rec.get('messages_per_s', 0):>10,.0f} msg/s  "
                  f"{cpu if cpu is None else round(cpu, 3)} µs/msg  errors {rec.get('errors', rec.get('error'))}",
                  file=sys.stderr, flush=True)
    load_end = loadavg()
    table, ratio, per_round, med_cpu = report(runs, facts, args, load_start, load_end)
    print(table)

    os.makedirs(RESULTS, exist_ok=True)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    with open(os.path.join(RESULTS, f"ws_echo-{stamp}.json"), "w") as f:
        json.dump({"started": started.isoformat(), "args": vars(args), "machine": facts,
                   "loadavg_start": load_start, "loadavg_end": load_end, "clk_tck": CLK_TCK,
                   "median_server_cpu_us_per_msg": med_cpu, "ratio_skiff_to_best": ratio,
                   "ratio_per_round": per_round, "runs": runs}, f, indent=2)
    with open(os.path.join(RESULTS, f"ws_echo-{stamp}.md"), "w") as f:
        f.write(table + "\n")
    print(f"\nraw results: {os.path.relpath(os.path.join(RESULTS, f'ws_echo-{stamp}.json'), ROOT)}", file=sys.stderr)
    bad = [r for r in runs if r.get("errors") or "error" in r]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
