"""The Markdown report: a headline table of server CPU per request, then one table per cell
with every figure. Cells read "median (min–max)" over the rounds."""
from .measure import load_percent, runs_at
from .servers import serves
from .stats import ok_records, spread


def f_num(v):
    return "{:,.0f}".format(v)


def f_cpu(v):
    return "%.2f" % v if v < 100 else "%.0f" % v


def f_lat(v):
    if v is None:
        return "–"
    if v < 1000:
        return "%.0f µs" % v
    return "%.2f ms" % (v / 1000) if v < 1e6 else "%.2f s" % (v / 1e6)


def with_range(s, fmt):
    if s is None:
        return "–"
    med, lo, hi = s
    return fmt(med) if lo == hi else "%s (%s–%s)" % (fmt(med), fmt(lo), fmt(hi))


def cpu_spread(records, cell, server):
    return spread([r["server_cpu_us_per_req"] for r in ok_records(records, cell.key, server)])


def why_missing(records, spec, cell):
    ok, why = serves(spec, cell.scenario)
    if not ok:
        return why.split(":")[0]
    statuses = {r.get("status") for r in records if r.get("server") == spec.name
                and r.get("cell") in (cell.key, None)} - {"ok"}
    return ", ".join(sorted(s for s in statuses if s)) or "not measured"


def headline(records, specs, cells):
    """Server CPU µs per request for each server (rows) in each cell (columns)."""
    head = "| server | " + " | ".join(c.key for c in cells) + " |"
    lines = [head, "|---|" + "---:|" * len(cells)]
    for spec in specs:
        row = []
        for c in cells:
            s = cpu_spread(records, c, spec.name)
            row.append(with_range(s, f_cpu) if s else "n/a")
        lines.append("| %s | %s |" % (spec.name, " | ".join(row)))
    return lines


def figures(recs, c):
    """One server's rounds in cell c as the columns of a table: req/s, CPU µs/req, p50, p99,
    p99.9, p99.99, errors, load CPU (text), and the CPU spread for ratios."""
    cpu = spread([r["server_cpu_us_per_req"] for r in recs])
    lat = {p: spread([r["latency_us"][p] for r in recs]) for p in ("p50", "p99", "p99.9", "p99.99")}
    errors = [r["errors"]["total"] for r in recs]
    rps = spread([r["rps"] for r in recs])
    rps_text = with_range(rps, f_num)
    if c.rate and rps[0] < 0.98 * c.rate:   # the median round could not keep up
        rps_text += " ⚠ below offered"
    load = spread([load_percent(r) for r in recs])
    cols = {"rps": rps_text, "cpu": with_range(cpu, f_cpu),
            "errors": "0" if not any(errors) else "/".join(map(str, errors)), "load": "%.0f%%" % load[0]}
    cols.update((p, with_range(lat[p], f_lat)) for p in lat)
    return cols, cpu


def cell_table(records, specs, c, reference="skiff"):
    ref = cpu_spread(records, c, reference)
    lines = ["#### %s" % c.title, "",
             "| server | n | req/s | CPU µs/req | ÷ %s | p50 | p99 | p99.9 | p99.99 | errors | load CPU |" % reference,
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for spec in specs:
        recs = ok_records(records, c.key, spec.name)
        if not recs:
            lines.append("| %s | 0 | %s | | | | | | | | |" % (spec.name, why_missing(records, spec, c)))
            continue
        f, cpu = figures(recs, c)
        ratio = "%.2f" % (cpu[0] / ref[0]) if ref and ref[0] else "–"
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            spec.name, len(recs), f["rps"], f["cpu"], ratio, f["p50"], f["p99"], f["p99.9"], f["p99.99"],
            f["errors"], f["load"]))
    return lines + [""]


def versions_line(meta):
    v = meta["versions"]
    return "Versions: skiff %s; %s; %s; %s; fasthttp %s; httprouter %s; %s; cpp-httplib %s; Boost %s; %s." % (
        v["skiff"], v["nginx"], v["h2o"], v["hyper"], v["fasthttp"], v["httprouter"], v["go"],
        v["cpp-httplib"], v["boost"], meta["compilers"]["g++"])


def run_line(meta):
    return "Run of %s on %s: %s, %d cores, Linux %s; load average at start %s%s." % (
        meta["date"], meta["host"], meta["cpu_model"], meta["cores"], meta["kernel"], meta["loadavg_start"],
        ", at the end %s" % meta["loadavg_end"] if meta.get("loadavg_end") else "")


def markdown(meta, records, specs, cells, headline_cells):
    lines = [
        run_line(meta),
        "Command: `%s`" % meta["command"],
        "Server on CPU %s with %s worker(s), load generator on CPU %s; %d round(s), order rotated each round; "
        "%.1f s measured per cell after %.1f s of warm-up." % (
            meta["server_cpu"], meta["workers"], meta["load_cpu"], meta["rounds"], meta["duration"], meta["warmup"]),
        versions_line(meta),
        "",
        "### Server CPU µs per request, median (min–max) over rounds",
        "",
    ]
    lines += headline(records, specs, headline_cells)
    lines += ["", "Cell keys: scenario/connections/loop (closed, or open at a fixed offered rate)."]
    absent = meta.get("absent", {})
    if absent:
        lines += [""] + ["Not run: %s (%s)." % (k, why) for k, why in absent.items()]
    lines += ["", "### Every cell", ""]
    for c in cells:
        lines += cell_table(records, specs, c)
    return "\n".join(lines) + "\n"


# A worker sweep (or a run of several policies): the rows are (server, workers).

def sweep_rows(records, specs, c, sweep):
    """(server, workers, its ok records) for every server that runs at each worker count and
    is measured in cell c, in the order of the sweep, then of the servers."""
    return [(spec.name, w, ok_records(by_workers(records, w), c.key, spec.name))
            for w in sweep for spec in specs if runs_at(spec, w) and serves(spec, c.scenario)[0]]


def by_workers(records, workers):
    return [r for r in records if r.get("workers", 1) == workers]


def sweep_headline(records, specs, cells, sweep, what, fmt):
    """One figure (a record key, or a function of a record) for each (server, workers) row in
    each cell: median (min–max) over rounds; blank where the server is not measured."""
    value = what if callable(what) else (lambda r: r[what])
    lines = ["| server | workers | " + " | ".join(c.key for c in cells) + " |",
             "|---|---:|" + "---:|" * len(cells)]
    for w in sweep:
        for spec in specs:
            if not runs_at(spec, w) or not any(serves(spec, c.scenario)[0] for c in cells):
                continue
            row = []
            for c in cells:
                recs = ok_records(by_workers(records, w), c.key, spec.name) if serves(spec, c.scenario)[0] else []
                row.append(with_range(spread([value(r) for r in recs]), fmt) if recs else "")
            lines.append("| %s | %d | %s |" % (spec.name, w, " | ".join(row)))
    return lines


def sweep_cell_table(records, specs, c, sweep):
    lines = ["#### %s" % c.title, "",
             "| server | workers | n | req/s | CPU µs/req | p50 | p99 | p99.9 | errors | load CPU |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, w, recs in sweep_rows(records, specs, c, sweep):
        if not recs:
            lines.append("| %s | %d | 0 | not measured | | | | | | |" % (name, w))
            continue
        f, _ = figures(recs, c)
        lines.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            name, w, len(recs), f["rps"], f["cpu"], f["p50"], f["p99"], f["p99.9"], f["errors"], f["load"]))
    return lines + [""]


def sweep_markdown(meta, records, specs, cells):
    sweep = meta["workers_sweep"]
    lines = [run_line(meta), "Command: `%s`" % meta["command"], ""]
    lines += ["- %d worker(s): %s." % (w, meta["placements"][str(w)]) for w in sweep]
    lines += ["",
              "%d round(s); in each, every worker count and every server once, both orders rotated each round; "
              "%.1f s measured per cell after %.1f s of warm-up." % (meta["rounds"], meta["duration"], meta["warmup"]),
              "skiff-POLICY is contract_app, uneven-POLICY uneven_app (the contract plus GET /uneven/:n/:us), "
              "both with POLICY and WORKERS in the environment; nginx has worker_processes = WORKERS. "
              "A server with one thread whatever WORKERS says (POLICY=single) is measured at one worker only.",
              "Versions: skiff %s; %s; %s." % (meta["versions"]["skiff"], meta["versions"]["nginx"],
                                              meta["compilers"]["g++"])]
    absent = meta.get("absent", {})
    if absent:
        lines += [""] + ["Not run: %s (%s)." % (k, why) for k, why in absent.items()]
    lines += ["", "Cell keys: scenario/connections/loop (closed, or open at a fixed offered rate). "
              "Every figure: median (min–max) over rounds.", ""]
    for title, what, fmt in (("Requests per second", "rps", f_num),
                             ("Server CPU µs per request", "server_cpu_us_per_req", f_cpu),
                             ("p99 latency", lambda r: r["latency_us"]["p99"], f_lat),
                             ("p99.9 latency", lambda r: r["latency_us"]["p99.9"], f_lat)):
        lines += ["### %s" % title, ""] + sweep_headline(records, specs, cells, sweep, what, fmt) + [""]
    lines += ["### Every cell", ""]
    for c in cells:
        lines += sweep_cell_table(records, specs, c, sweep)
    return "\n".join(lines) + "\n"
