"""The measuring loop: rounds, each with the servers in an order rotated by one; each server
started once per round, pinned, checked, and driven through every cell it serves by
skiff_loadgen on the load CPU. One record per (round, server, cell), kept whole."""
import json
import os
import sys
import time

from . import procs
from .contract import check
from .scenarios import loadgen_args
from .servers import serves


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def rotated(items, round_no):
    k = (round_no - 1) % len(items) if items else 0
    return items[k:] + items[:k]


def run_cell(cfg, spec, server, c, round_no):
    args = loadgen_args(c, server.port, cfg.duration, cfg.warmup, server.proc.pid)
    limit = cfg.duration + cfg.warmup + 30
    rec = {"round": round_no, "server": spec.name, "cell": c.key, "scenario": c.scenario.key,
           "conns": c.conns, "rate": c.rate, "loop": "open" if c.rate else "closed"}
    try:
        rc, out, err = procs.run_pinned([cfg.loadgen] + args, cfg.load_cpu, limit)
    except Exception as e:   # a hung generator must not stop the run
        rc, out, err = -1, "", str(e)
    if rc != 0 or not out.strip():
        rec.update(status="loadgen failed", detail=err.strip()[-300:])
        return rec
    rec.update(json.loads(out))
    rec["status"] = "ok"
    rec["server_alive_after"] = server.alive()
    if not server.alive():
        rec["status"] = "server died"
    return rec


def describe(rec):
    if rec.get("status") != "ok":
        return "%-8s %-28s %s %s" % (rec["server"], rec["cell"], rec.get("status"), rec.get("detail", ""))
    lat = rec["latency_us"]
    return "%-8s %-28s %10.0f req/s %7.2f us/req  p50 %8.1f  p99.99 %9.1f us  err %d  load %3.0f%%" % (
        rec["server"], rec["cell"], rec["rps"], rec["server_cpu_us_per_req"], lat["p50"], lat["p99.99"],
        rec["errors"]["total"], 100 * rec["loadgen_cpu_s"] / max(rec["seconds"], 1e-9))


def measure_server(cfg, spec, cells, round_no, records):
    log_path = os.path.join(cfg.out_dir, "logs", "r%d-%s.log" % (round_no, spec.name))
    server = procs.running_server(spec, cfg.server_cpu, cfg.workers, log_path)
    if not server.start():
        log("   %s: could not start (see %s)" % (spec.name, log_path))
        records.append({"round": round_no, "server": spec.name, "status": "failed to start"})
        return
    try:
        # Once per start: a restarted server must still answer GET / right.
        problems = check(spec, server.port)
        if problems:
            log("   %s: REFUSED: %s" % (spec.name, problems))
            records.append({"round": round_no, "server": spec.name, "status": "refused", "detail": problems})
            return
        for c in cells:
            if not serves(spec, c.scenario)[0]:
                continue
            rec = run_cell(cfg, spec, server, c, round_no)
            records.append(rec)
            log("   " + describe(rec))
            if rec["status"] == "server died":
                return
    finally:
        server.stop()


def run_rounds(cfg, specs, cells):
    """Every round over every server; returns the list of records."""
    records = []
    os.makedirs(os.path.join(cfg.out_dir, "logs"), exist_ok=True)
    for round_no in range(1, cfg.rounds + 1):
        order = rotated(specs, round_no)
        log("== round %d/%d: %s" % (round_no, cfg.rounds, " ".join(s.name for s in order)))
        started = time.monotonic()
        for spec in order:
            measure_server(cfg, spec, cells, round_no, records)
        log("   round took %.0f s" % (time.monotonic() - started))
    return records


def contract_gate(cfg, specs):
    """Checks every server before anything is measured. Returns the list of problems as
    (server, route label, what was wrong); the run must stop if it is not empty."""
    problems = []
    for spec in specs:
        server = procs.running_server(spec, cfg.server_cpu, cfg.workers,
                                      os.path.join(cfg.out_dir, "logs", "check-%s.log" % spec.name))
        if not server.start():
            problems.append((spec.name, "start", "could not start"))
            continue
        try:
            problems += [(spec.name, label, what) for label, what in check(spec, server.port)]
        finally:
            server.stop()
    return problems
