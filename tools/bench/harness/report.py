"""The Markdown report: a headline table of server CPU per request, then one table per cell
with every figure. Cells read "median (min–max)" over the rounds."""
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
        cpu = spread([r["server_cpu_us_per_req"] for r in recs])
        ratio = "%.2f" % (cpu[0] / ref[0]) if ref and ref[0] else "–"
        lat = {p: spread([r["latency_us"][p] for r in recs]) for p in ("p50", "p99", "p99.9", "p99.99")}
        errors = [r["errors"]["total"] for r in recs]
        rps = spread([r["rps"] for r in recs])
        rps_text = with_range(rps, f_num)
        if c.rate and rps[0] < 0.98 * c.rate:   # the median round could not keep up
            rps_text += " ⚠ below offered"
        load = spread([100 * r["loadgen_cpu_s"] / r["seconds"] for r in recs])
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %.0f%% |" % (
            spec.name, len(recs), rps_text, with_range(cpu, f_cpu), ratio,
            with_range(lat["p50"], f_lat), with_range(lat["p99"], f_lat), with_range(lat["p99.9"], f_lat),
            with_range(lat["p99.99"], f_lat),
            "0" if not any(errors) else "/".join(map(str, errors)), load[0]))
    return lines + [""]


def markdown(meta, records, specs, cells, headline_cells):
    v = meta["versions"]
    lines = [
        "Run of %s on %s: %s, %d cores, Linux %s; load average at start %s." % (
            meta["date"], meta["host"], meta["cpu_model"], meta["cores"], meta["kernel"], meta["loadavg_start"]),
        "Command: `%s`" % meta["command"],
        "Server on CPU %s with %s worker(s), load generator on CPU %s; %d round(s), order rotated each round; "
        "%.1f s measured per cell after %.1f s of warm-up." % (
            meta["server_cpu"], meta["workers"], meta["load_cpu"], meta["rounds"], meta["duration"], meta["warmup"]),
        "Versions: skiff %s; %s; %s; %s; fasthttp %s; httprouter %s; %s; cpp-httplib %s; Boost %s; %s." % (
            v["skiff"], v["nginx"], v["h2o"], v["hyper"], v["fasthttp"], v["httprouter"], v["go"],
            v["cpp-httplib"], v["boost"], meta["compilers"]["g++"]),
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
