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
