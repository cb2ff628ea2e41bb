#!/usr/bin/env python3
"""skiff's benchmark harness: one command installs and builds everything, checks that every
server answers the contract byte for byte, measures skiff beside the floor and the peers, and
writes a JSON file (every round, machine facts), a Markdown table and SVG charts.

    tools/bench/bench.py              # the full run (5 rounds)
    tools/bench/bench.py --quick      # one round of the plaintext cells, under 2 minutes
    tools/bench/bench.py --compare-wrk  # skiff_loadgen against wrk on the same servers
    tools/bench/bench.py --policies single,sharded,shared --servers skiff,nginx \
        --workers-sweep 1,2,4,8 --matrix policies   # the threading policies, worker counts

See tools/bench/README.md for the method and what the numbers do not cover."""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from harness import charts, machine, measure, report, servers, stats, wrk_compare  # noqa: E402
from harness.measure import step  # noqa: E402
from harness.scenarios import cell_from_key, default_cells  # noqa: E402

HEADLINE = ["plaintext/c64/closed", "pipelined/c64/closed", "short-lived/c64/closed", "json/c64/closed",
            "param/c64/closed", "echo/c64/closed", "404/c64/closed"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="1 round of the plaintext cells, short durations")
    p.add_argument("--rounds", type=int, help="rounds (default 5; quick 1)")
    p.add_argument("--duration", type=float, help="measured seconds per cell (default 2; quick 1)")
    p.add_argument("--warmup", type=float, help="warm-up seconds per cell (default 0.5; quick 0.3)")
    p.add_argument("--matrix", choices=["default", "full", "policies"], default="default",
                   help="full: every scenario at every connection count and at the fixed rate; policies: "
                        "keep-alive and pipelined at 64 and 256 connections and the uneven-cost scenario")
    p.add_argument("--servers", help="comma-separated subset (default: all)")
    p.add_argument("--cells", help="only these cells, by key (e.g. uneven/c64/open10000), in the matrix or not")
    p.add_argument("--max-conns", type=int, default=512, help="largest connection count (64, 256, 512)")
    p.add_argument("--rate", type=float, default=10000, help="fixed offered rate, keep-alive and uneven (req/s)")
    p.add_argument("--close-rate", type=float, default=4000, help="fixed offered rate, short-lived (req/s)")
    p.add_argument("--server-cpu", default="0", help="CPU list for the server (taskset -c)")
    p.add_argument("--load-cpu", default="1", help="CPU list for the load generator")
    p.add_argument("--workers", type=int, default=1, help="server worker threads/processes")
    p.add_argument("--load-procs", type=int, default=0,
                   help="load generators run at once, each with its share of the connections (default: 1; "
                        "in a sweep, one per server worker while spare cores last)")
    p.add_argument("--policies", help="skiff once per threading policy: single,sharded,shared (skiff-POLICY)")
    p.add_argument("--workers-sweep", metavar="LIST",
                   help="measure at each worker count, e.g. 1,2,4,8; places server and load generators itself")
    p.add_argument("--cpus", help="with --workers-sweep: the CPUs to place them on (default: one per physical "
                                  "core this process may use)")
    p.add_argument("--name", default="policies",
                   help="with --policies or --workers-sweep: the name of the run's files (default policies: "
                        "policies.json, policies.md, policies-*.svg)")
    p.add_argument("--actix", help="actix-web binary serving the contract (or SKIFF_BENCH_ACTIX)")
    p.add_argument("--axum", help="axum binary serving the contract (or SKIFF_BENCH_AXUM)")
    p.add_argument("--no-install", action="store_true", help="skip tools/bench/install.sh")
    p.add_argument("--build", default=os.path.join(ROOT, "build", "bench"), help="build folder")
    p.add_argument("--out", help="results folder (default BUILD/results/STAMP)")
    p.add_argument("--compare-wrk", action="store_true", help="measure skiff_loadgen against wrk instead")
    p.add_argument("--report", metavar="DIR",
                   help="only redraw the table and charts from DIR/results.json (or DIR/NAME.json, --name)")
    p.add_argument("--publish", action="store_true",
                   help="also copy the table, the charts and the JSON (less its histograms) to tools/bench/results/")
    a = p.parse_args(argv)
    a.rounds = a.rounds or (1 if a.quick else 5)
    a.duration = a.duration or (1.0 if a.quick else 2.0)
    a.warmup = a.warmup if a.warmup is not None else (0.3 if a.quick else 0.5)
    a.build = os.path.abspath(a.build)   # the peers' launchers run in folders of their own
    a.loadgen = os.path.join(a.build, "tools", "bench", "skiff_loadgen")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    a.out_dir = a.out or os.path.join(a.build, "results", stamp)
    a.command = " ".join(["tools/bench/bench.py"] + argv)
    a.policies = a.policies.split(",") if a.policies else []
    unknown = set(a.policies) - set(servers.POLICIES)
    if unknown:
        p.error("--policies: unknown %s (want %s)" % (",".join(sorted(unknown)), ",".join(servers.POLICIES)))
    a.sweep = [int(w) for w in a.workers_sweep.split(",")] if a.workers_sweep else []
    # A sweep, or several policies, is reported by worker count, in files of its own name.
    a.layout = "sweep" if a.sweep or a.policies else "servers"
    a.run_name = a.name if a.layout == "sweep" else "results"
    return a


def install(a):
    env = dict(os.environ, BENCH_BUILD=a.build)
    # Its progress goes to stderr, so stdout carries the Markdown table alone.
    if subprocess.run([os.path.join(HERE, "install.sh")], env=env, stdout=sys.stderr).returncode != 0:
        sys.exit("install step failed (see the log named above)")
    if a.policies and a.matrix == "policies":
        # uneven_app is not in install.sh's list; a build without its target leaves it absent.
        built = subprocess.run(["cmake", "--build", a.build, "--target", "uneven_app"], stdout=sys.stderr,
                               stderr=sys.stderr).returncode == 0
        if not built:
            measure.log("uneven_app not built: tools/bench/CMakeLists.txt must include uneven_app.cmake")


def pick_servers(a, cells):
    """The servers to measure, and why the others named cannot run here. With --policies,
    "skiff" stands for skiff-POLICY (and uneven-POLICY when the cells have the uneven scenario)."""
    specs = servers.known_servers(a.build, a.actix, a.axum)
    if a.policies:
        uneven = any(c.scenario.key == "uneven" for c in cells)
        per_policy = [s for s in servers.policy_servers(a.build, a.policies)
                      if uneven or not s.name.startswith("uneven-")]
        specs = per_policy + [s for s in specs if s.name != "skiff"]
    if a.servers:
        wanted = set(a.servers.split(","))
        if a.policies and "skiff" in wanted:
            wanted |= {s.name for s in specs if s.name.startswith(("skiff-", "uneven-"))}
        specs = [s for s in specs if s.name in wanted]
    absent = {s.name: servers.absent_reason(s) for s in specs if servers.absent_reason(s)}
    for name, why in absent.items():
        measure.log("%s: not run: %s" % (name, why))
    return [s for s in specs if s.name not in absent], absent


def max_conns(a):
    """512 connections need descriptors on both sides; drop the count the limit cannot hold."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    limit = a.max_conns if hard == resource.RLIM_INFINITY or hard >= 4096 else 256
    if limit < a.max_conns:
        measure.log("descriptor limit %d: connection counts capped at %d" % (hard, limit))
    return limit


def steps(a):
    """The worker counts of the run and where each runs: the sweep's placement, or the CPUs
    given by --server-cpu and --load-cpu at --workers."""
    if not a.sweep:
        load = [a.load_cpu] * (a.load_procs or 1)
        return [step(a.workers, a.server_cpu, tuple(load), "server on CPU %s, %d load generator(s) on CPU %s" % (
            a.server_cpu, len(load), a.load_cpu))]
    cpus = [int(c) for c in a.cpus.split(",")] if a.cpus else machine.core_cpus()
    return [step(w, *machine.placement(w, cpus, a.load_procs)) for w in a.sweep]


def write_outputs(a, meta, records, specs, cells):
    if meta.get("layout", "sweep" if meta.get("policies") else "servers") == "sweep":
        return write_sweep_outputs(a, meta, records, specs, cells)
    headline = [c for key in HEADLINE for c in cells if c.key == key] + [c for c in cells if c.rate]
    with open(os.path.join(a.out_dir, "results.json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=None, separators=(",", ":"))
    md = report.markdown(meta, records, specs, cells, headline)
    with open(os.path.join(a.out_dir, "results.md"), "w") as f:
        f.write(md)
    write_charts(a, records, specs, cells)
    return md


def write_charts(a, records, specs, cells):
    panels = []
    for c in [c for c in cells if c.conns == 64 and c.scenario.key in ("plaintext", "pipelined", "short-lived")]:
        rows = [(s.name,) + stats.spread([r["server_cpu_us_per_req"] for r in stats.ok_records(records, c.key, s.name)])
                for s in specs if stats.ok_records(records, c.key, s.name)]
        panels.append((c.title, sorted(rows, key=lambda r: r[1])))
    with open(os.path.join(a.out_dir, "cpu-per-request.svg"), "w") as f:
        f.write(charts.cpu_chart(panels))
    for c in [c for c in cells if c.conns == 64 and c.scenario.key in ("plaintext", "short-lived")]:
        series = [(s.name, stats.percentile_curve(stats.ok_records(records, c.key, s.name))) for s in specs]
        name = "latency-%s-%s.svg" % (c.scenario.key, "fixed-rate" if c.rate else "closed-loop")
        title = "Latency percentiles, %s (all rounds merged)" % c.title
        with open(os.path.join(a.out_dir, name), "w") as f:
            f.write(charts.latency_chart(title, [(n, cv) for n, cv in series if cv]))


def write_sweep_outputs(a, meta, records, specs, cells):
    """NAME.json, NAME.md and the NAME-*.svg charts of a sweep (NAME: --name, policies)."""
    with open(os.path.join(a.out_dir, a.run_name + ".json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=None, separators=(",", ":"))
    md = report.sweep_markdown(meta, records, specs, cells)
    with open(os.path.join(a.out_dir, a.run_name + ".md"), "w") as f:
        f.write(md)
    sweep = meta["workers_sweep"]
    closed = [c for c in cells if not c.rate]
    for name, what, fmt, right, caption in (
            ("rps", "rps", report.f_num, 200, "requests per second"),
            ("cpu-per-request", "server_cpu_us_per_req", charts.two_places, 150,
             "server CPU µs per request (utime+stime / responses)")):
        panels = [(c.title, [("%s ×%d" % (n, w),) + stats.spread([r[what] for r in recs])
                             for n, w, recs in report.sweep_rows(records, specs, c, sweep) if recs])
                  for c in closed]
        with open(os.path.join(a.out_dir, "%s-%s.svg" % (a.run_name, name)), "w") as f:
            f.write(charts.bar_chart(panels, caption + "; bar = median, whisker = min–max over rounds",
                                     left=150, right=right, fmt=fmt))
    for c in [c for c in cells if c.rate or c.scenario.key == "uneven"]:
        for w in sweep:
            series = [(n, stats.percentile_curve(recs)) for n, _, recs in report.sweep_rows(records, specs, c, [w])]
            title = "%d worker(s): %s (latency, all rounds merged)" % (w, c.title)
            name = "%s-latency-%s-%s-w%d.svg" % (a.run_name, c.scenario.key, "fixed-rate" if c.rate else "closed-loop",
                                                w)
            with open(os.path.join(a.out_dir, name), "w") as f:
                f.write(charts.latency_chart(title, [(n, cv) for n, cv in series if cv], width=980))
    return md


def publish(a, meta, records):
    """The README's copy: the histograms stay in build/ (megabytes); the charts carry them."""
    dest = os.path.join(HERE, "results")
    os.makedirs(dest, exist_ok=True)
    for name in os.listdir(a.out_dir):
        if name.endswith((".svg", ".md")):
            shutil.copy(os.path.join(a.out_dir, name), os.path.join(dest, name))
    slim = [{k: v for k, v in r.items() if k != "histogram_us"} for r in records]
    with open(os.path.join(dest, a.run_name + ".json"), "w") as f:
        json.dump({"meta": meta, "records": slim}, f, indent=None, separators=(",", ":"))
    measure.log("published to %s" % dest)


def redraw(a):
    """Table and charts again from a finished run's JSON (after a change to the report)."""
    a.out_dir = a.report
    a.run_name = a.name if os.path.exists(os.path.join(a.report, a.name + ".json")) else "results"
    with open(os.path.join(a.report, a.run_name + ".json")) as f:
        data = json.load(f)
    meta, records = data["meta"], data["records"]
    known = servers.policy_servers(a.build, servers.POLICIES) + servers.known_servers(a.build)
    specs = [s for s in known if s.name in meta["servers"]]
    cells = [cell_from_key(k) for k in meta["cells"]]
    sys.stdout.write(write_outputs(a, meta, records, specs, cells))
    if a.publish:
        publish(a, meta, records)
    return 0


def main(argv):
    a = parse_args(argv)
    if a.report:
        return redraw(a)
    if not a.no_install:
        install(a)
    os.makedirs(os.path.join(a.out_dir, "logs"), exist_ok=True)
    matrix = "quick" if a.quick else a.matrix
    cells = default_cells(max_conns(a), a.rate, a.close_rate, matrix)
    if a.cells:  # any cell a key names, in the matrix or not (plaintext/c512/open20000, say)
        cells = [cell_from_key(k) for k in a.cells.split(",")]
    specs, absent = pick_servers(a, cells)
    if a.compare_wrk:
        return wrk_compare.run(a, specs)
    plan = steps(a)
    problems = measure.contract_gate(a, specs, plan[0])
    if problems:
        for name, label, what in problems:
            measure.log("CONTRACT: %s %s: %s" % (name, label, what))
        measure.log("refusing to measure: every server must answer the contract byte for byte")
        return 1
    measure.log("contract: %d servers answer every route they serve identically" % len(specs))
    meta = machine.facts(a.build, a.server_cpu, a.load_cpu)
    meta.update(command=a.command, rounds=a.rounds, duration=a.duration, warmup=a.warmup, workers=a.workers,
                absent=absent, cells=[c.key for c in cells], servers=[s.name for s in specs],
                workers_sweep=[s.workers for s in plan], placements={str(s.workers): s.note for s in plan},
                policies=a.policies, layout=a.layout)
    for s in plan:
        measure.log("%d worker(s): %s" % (s.workers, s.note))
    started = time.monotonic()
    records = measure.run_rounds(a, specs, cells, plan)
    meta["elapsed_s"] = round(time.monotonic() - started)
    meta["loadavg_end"] = "%.2f %.2f %.2f" % os.getloadavg()
    md = write_outputs(a, meta, records, specs, cells)
    sys.stdout.write(md)
    if a.publish:
        publish(a, meta, records)
    measure.log("results: %s (%s.json, %s.md, *.svg)" % (a.out_dir, a.run_name, a.run_name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
