"""skiff_loadgen against wrk: the same server process, the same connections and duration,
the two generators alternating on the load CPU, several times. Closed-loop req/s must agree
within 10%; with pipelining, wrk's percentiles are shown beside ours (wrk 4.1 records one
latency per batch, and its percentile table comes out broken)."""
import json
import os
import re
import resource

from . import procs
from .measure import log

UNIT_US = {"us": 1.0, "ms": 1e3, "s": 1e6}


def wrk_rps_and_p99(out):
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)", out, re.M)
    return (float(rps.group(1)) if rps else None,
            float(p99.group(1)) * UNIT_US[p99.group(2)] if p99 else None)


def timed(cmd, a):
    """Runs cmd on the load CPU; returns (stdout, CPU seconds it used)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _, out, _ = procs.run_pinned(cmd, a.load_cpu, a.duration + 30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_wrk(a, port, conns, depth):
    cmd = ["wrk", "-t1", "-c%d" % conns, "-d%ds" % max(1, round(a.duration)), "--latency"]
    if depth > 1:
        cmd += ["-s", os.path.join(os.path.dirname(os.path.dirname(__file__)), "wrk", "pipeline.lua")]
    cmd.append("http://127.0.0.1:%d/" % port)
    if depth > 1:
        cmd += ["--", str(depth)]
    out, cpu = timed(cmd, a)
    rps, p99 = wrk_rps_and_p99(out)
    return rps, p99, cpu / (rps * max(1, round(a.duration))) * 1e6 if rps else None


def run_ours(a, port, conns, depth):
    cmd = [a.loadgen, "-c", str(conns), "-d", str(max(1, round(a.duration))), "--depth", str(depth), "--json",
           "--expect-length", "13", "http://127.0.0.1:%d/" % port]
    out, cpu = timed(cmd, a)
    r = json.loads(out)
    return r["rps"], r["latency_us"]["p99"], cpu / max(r["responses"], 1) * 1e6


def compare_one(a, spec, depth, rows):
    server = procs.running_server(spec, a.server_cpu, a.workers,
                                  os.path.join(a.out_dir, "logs", "wrk-%s.log" % spec.name))
    if not server.start():
        log("%s: could not start" % spec.name)
        return
    try:
        run_wrk(a, server.port, 64, depth)   # warm-up, discarded
        for i in range(a.rounds):
            # Alternate which goes first, so drift over time favours neither.
            pair = [("wrk", run_wrk), ("skiff_loadgen", run_ours)]
            results = {name: fn(a, server.port, 64, depth) for name, fn in (pair if i % 2 == 0 else pair[::-1])}
            (w_rps, w_p99, w_cpu), (o_rps, o_p99, o_cpu) = results["wrk"], results["skiff_loadgen"]
            rows.append((spec.name, depth, i + 1, w_rps, o_rps, w_p99, o_p99, w_cpu, o_cpu))
            log("%-8s depth %2d try %d: wrk %9.0f req/s p99 %s | skiff_loadgen %9.0f req/s p99 %.0f us | ratio %.3f"
                % (spec.name, depth, i + 1, w_rps or 0, "%.0f us" % w_p99 if w_p99 else "n/a", o_rps, o_p99,
                   o_rps / w_rps if w_rps else 0))
    finally:
        server.stop()


def run(a, specs):
    rows = []
    for spec in specs:
        for depth in (1, 16):
            if depth > 1 and not spec.pipelining:
                continue
            compare_one(a, spec, depth, rows)
    # A generator near 100% of its core, not the server, set that try's req/s.
    lines = ["| server | depth | try | wrk req/s | skiff_loadgen req/s | ratio | wrk p99 | skiff_loadgen p99 "
             "| wrk CPU µs/req | skiff_loadgen CPU µs/req | wrk core | skiff_loadgen core |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, depth, i, w, o, wp, op, wc, oc in rows:
        lines.append("| %s | %d | %d | %s | %.0f | %s | %s | %.0f µs | %s | %.2f | %s | %.0f%% |" % (
            name, depth, i, "%.0f" % w if w else "–", o, "%.3f" % (o / w) if w else "–",
            "%.0f µs" % wp if wp else "broken", op, "%.2f" % wc if wc else "–", oc,
            "%.0f%%" % (wc * w / 1e4) if wc and w else "–", oc * o / 1e4))
    md = "\n".join(lines) + "\n"
    with open(os.path.join(a.out_dir, "wrk-compare.md"), "w") as f:
        f.write(md)
    print(md)
    return 0
