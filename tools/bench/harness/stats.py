"""Aggregation over rounds: medians with min-max, and percentile curves from histograms merged
across rounds (the load generator's buckets are exact to 1%, so merging keeps that bound)."""
import math
import statistics


def ok_records(records, cell_key, server):
    return [r for r in records if r.get("cell") == cell_key and r.get("server") == server
            and r.get("status") == "ok" and r.get("responses")]


def spread(values):
    """(median, min, max) of the values that exist, or None."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return statistics.median(vals), min(vals), max(vals)


def merged_histogram(recs):
    counts = {}
    for r in recs:
        for value, n in r.get("histogram_us", []):
            counts[value] = counts.get(value, 0) + n
    return sorted(counts.items())


def quantile(hist, q):
    total = sum(n for _, n in hist)
    if not total:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for value, n in hist:
        seen += n
        if seen >= rank:
            return value
    return hist[-1][0]


# x positions of the curve: q = 1 - 10^-x for x from 0 to 5 (0% to 99.999%), 20 per decade.
CURVE_X = [i / 20 for i in range(0, 101)]


def percentile_curve(recs):
    """[(x, latency_us)] with q = 1 - 10^-x, up to where the samples can resolve it."""
    hist = merged_histogram(recs)
    total = sum(n for _, n in hist)
    out = []
    for x in CURVE_X:
        q = 1 - 10 ** (-x)
        if total * (1 - q) < 1 and x > 0:   # beyond the last sample: the curve would be the max
            break
        out.append((x, quantile(hist, q)))
    return out


def merge_runs(runs):
    """One result from several load generators run at once against one server, each on its
    own share of the connections (or of the offered rate): counts add up, latency percentiles
    come from the merged histograms, and the server's CPU per request is its CPU rate (every
    generator measured the whole server over almost the same window: their mean) over the
    summed response rate."""
    if len(runs) == 1:
        return dict(runs[0], loadgen_procs=1)
    responses = sum(r["responses"] for r in runs)
    seconds = statistics.mean(r["seconds"] for r in runs)
    rps = sum(r["rps"] for r in runs)
    cpu_rate = statistics.mean(r["server_cpu_s"] / r["seconds"] for r in runs if r["seconds"] > 0)
    hist = merged_histogram(runs)
    latency = {"min": min(r["latency_us"]["min"] for r in runs),
               "mean": sum(r["latency_us"]["mean"] * r["responses"] for r in runs) / max(responses, 1),
               "max": max(r["latency_us"]["max"] for r in runs)}
    for name, q in (("p50", .5), ("p75", .75), ("p90", .9), ("p99", .99), ("p99.9", .999), ("p99.99", .9999),
                    ("p99.999", .99999)):
        latency[name] = quantile(hist, q)
    return dict(runs[0], connections=sum(r["connections"] for r in runs), rate=sum(r["rate"] for r in runs),
                seconds=seconds, responses=responses, rps=rps,
                connects=sum(r["connects"] for r in runs),
                errors={k: sum(r["errors"][k] for r in runs) for k in runs[0]["errors"]},
                latency_us=latency, histogram_us=[[v, n] for v, n in hist],
                server_cpu_s=cpu_rate * seconds, server_cpu_us_per_req=cpu_rate / rps * 1e6 if rps else 0,
                loadgen_cpu_s=sum(r["loadgen_cpu_s"] for r in runs),
                scheduled=sum(r["scheduled"] for r in runs), max_backlog=max(r["max_backlog"] for r in runs),
                loadgen_procs=len(runs))
