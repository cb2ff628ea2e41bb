"""The measuring loop: rounds, each with the servers in an order rotated by one; each server
started once per round, pinned, checked, and driven through every cell it serves by
skiff_loadgen on the load CPU (or by several at once, one per load CPU, each with its share of
the connections). With a worker sweep, every round runs every step (a worker count and where it
runs), the order of the steps rotated too. One record per (round, workers, server, cell), kept
whole."""
import copy
import dataclasses
import json
import os
import sys
import time

from . import procs
from .contract import check
from .scenarios import loadgen_args
from .servers import serves
from .stats import merge_runs


@dataclasses.dataclass(frozen=True)
class step:
    """One worker count of a run and where it runs."""
    workers: int
    server_cpu: str
    load_cpus: tuple     # the CPU list of each load generator, one entry per generator
    note: str = ""


def runs_at(spec, workers):
    """A server with one thread whatever WORKERS says (skiff's POLICY=single, the floor) is
    measured at one worker only."""
    return workers == 1 or not spec.one_worker


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def rotated(items, round_no):
    k = (round_no - 1) % len(items) if items else 0
    return items[k:] + items[:k]


def share(c, i, n):
    """Generator i's part of cell c when n generators drive it together."""
    conns = c.conns // n + (1 if i < c.conns % n else 0)
    return dataclasses.replace(c, conns=conns, rate=c.rate / n)


def run_cell(cfg, spec, server, c, round_no):
    load_cpus = cfg.load_cpus[:c.conns]   # every generator needs a connection
    n = len(load_cpus)
    jobs = [([cfg.loadgen] + loadgen_args(share(c, i, n), server.port, cfg.duration, cfg.warmup, server.proc.pid),
             cpu) for i, cpu in enumerate(load_cpus)]
    limit = cfg.duration + cfg.warmup + 30
    rec = {"round": round_no, "server": spec.name, "workers": cfg.workers, "cell": c.key,
           "scenario": c.scenario.key, "conns": c.conns, "rate": c.rate, "loop": "open" if c.rate else "closed",
           "server_cpus": cfg.server_cpu, "load_cpus": list(load_cpus)}
    try:
        results = procs.run_pinned_together(jobs, limit)
    except Exception as e:   # a hung generator must not stop the run
        results = [(-1, "", str(e))]
    failed = [err for rc, out, err in results if rc != 0 or not out.strip()]
    if failed:
        rec.update(status="loadgen failed", detail=failed[0].strip()[-300:])
        return rec
    rec.update(merge_runs([json.loads(out) for _, out, _ in results]))
    rec["status"] = "ok"
    rec["server_alive_after"] = server.alive()
    if not server.alive():
        rec["status"] = "server died"
    return rec


def load_percent(rec):
    """How busy the load generators were: CPU seconds per second, per generator."""
    return 100 * rec["loadgen_cpu_s"] / max(rec["seconds"], 1e-9) / rec.get("loadgen_procs", 1)


def describe(rec):
    if rec.get("status") != "ok":
        return "%-14s %-28s %s %s" % (rec["server"], rec["cell"], rec.get("status"), rec.get("detail", ""))
    lat = rec["latency_us"]
    return "%-14s %-28s %10.0f req/s %7.2f us/req  p50 %8.1f  p99.99 %9.1f us  err %d  load %3.0f%%" % (
        rec["server"], rec["cell"], rec["rps"], rec["server_cpu_us_per_req"], lat["p50"], lat["p99.99"],
        rec["errors"]["total"], load_percent(rec))


def measure_server(cfg, spec, cells, round_no, records):
    log_path = os.path.join(cfg.out_dir, "logs", "r%d-w%d-%s.log" % (round_no, cfg.workers, spec.name))
    server = procs.running_server(spec, cfg.server_cpu, cfg.workers, log_path)
    if not server.start():
        log("   %s: could not start (see %s)" % (spec.name, log_path))
        records.append({"round": round_no, "server": spec.name, "workers": cfg.workers, "status": "failed to start"})
        return
    try:
        # Once per start: a restarted server must still answer GET / right.
        problems = check(spec, server.port)
        if problems:
            log("   %s: REFUSED: %s" % (spec.name, problems))
            records.append({"round": round_no, "server": spec.name, "workers": cfg.workers, "status": "refused",
                            "detail": problems})
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


def at_step(cfg, s):
    """cfg as one step of the run sees it."""
    at = copy.copy(cfg)
    at.workers, at.server_cpu, at.load_cpus = s.workers, s.server_cpu, s.load_cpus
    return at


def run_rounds(cfg, specs, cells, steps):
    """Every round over every step and every server that runs at it; returns the list of
    records. A server that does not run at a step's worker count gets one record saying so."""
    records = []
    os.makedirs(os.path.join(cfg.out_dir, "logs"), exist_ok=True)
    for round_no in range(1, cfg.rounds + 1):
        started = time.monotonic()
        for s in rotated(steps, round_no):
            order = rotated([spec for spec in specs if runs_at(spec, s.workers)], round_no)
            log("== round %d/%d, %d worker(s), %s: %s" % (round_no, cfg.rounds, s.workers, s.note,
                                                          " ".join(spec.name for spec in order)))
            for spec in order:
                measure_server(at_step(cfg, s), spec, cells, round_no, records)
            records += [{"round": round_no, "server": spec.name, "workers": s.workers, "status": "one worker only"}
                        for spec in specs if not runs_at(spec, s.workers)]
        log("   round took %.0f s" % (time.monotonic() - started))
    return records


def contract_gate(cfg, specs, s):
    """Checks every server, run as step s says, before anything is measured. Returns the list
    of problems as (server, route label, what was wrong); the run must stop if it is not empty."""
    problems = []
    for spec in specs:
        server = procs.running_server(spec, s.server_cpu, s.workers,
                                      os.path.join(cfg.out_dir, "logs", "check-%s.log" % spec.name))
        if not server.start():
            problems.append((spec.name, "start", "could not start"))
            continue
        try:
            problems += [(spec.name, label, what) for label, what in check(spec, server.port)]
        finally:
            server.stop()
    return problems
