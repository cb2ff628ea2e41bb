"""SVG charts written by hand (no plotting package): server CPU per request as bars with
min-max whiskers, and latency percentile curves on log-log axes (HdrHistogram style)."""
import math
from xml.sax.saxutils import escape

PALETTE = {"skiff": "#d62728", "floor": "#7f7f7f", "nginx": "#2ca02c", "h2o": "#17becf",
           "hyper": "#ff7f0e", "fasthttp": "#1f77b4", "nethttp": "#9467bd", "httplib": "#8c564b",
           "beast": "#e377c2", "actix": "#bcbd22", "axum": "#393b79",
           # the threading policies (uneven-POLICY is the same policy on uneven_app)
           "skiff-single": "#d62728", "skiff-sharded": "#1f3b8c", "skiff-shared": "#e6861b"}
FONT = 'font-family="sans-serif" font-size="12"'


def color(name):
    """A server's colour; a label such as "uneven-shared ×2" takes its server's."""
    name = name.split(" ")[0]
    if name.startswith("uneven-"):
        name = "skiff-" + name[len("uneven-"):]
    return PALETTE.get(name, "#444444")


def text(x, y, s, anchor="start", extra=""):
    return '<text x="%.1f" y="%.1f" text-anchor="%s" %s %s>%s</text>' % (x, y, anchor, FONT, extra, escape(s))


def svg(width, height, body):
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">\n'
            '<rect width="100%%" height="100%%" fill="white"/>\n%s\n</svg>\n' % (width, height, width, height,
                                                                                 "\n".join(body)))


def nice_step(span, ticks=5):
    raw = span / ticks
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def two_places(v):
    return "%.2f" % v


def bar_panel(top, title, rows, width, left=90, right=150, fmt=two_places):
    """One panel of horizontal bars; rows are (label, median, min, max); fmt writes a value.
    Returns (svg parts, height used)."""
    body = [text(10, top + 16, title, extra='font-weight="bold"')]
    top += 28
    scale_max = max(hi for _, _, _, hi in rows) * 1.05
    plot_w = width - left - right
    step = nice_step(scale_max)
    x = lambda v: left + plot_w * v / scale_max
    row_h = 20
    for i, (label, med, lo, hi) in enumerate(rows):
        y = top + i * row_h
        body.append(text(left - 6, y + 14, label, "end"))
        body.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/>' % (
            left, y + 3, x(med) - left, row_h - 6, color(label)))
        body.append('<path d="M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f" stroke="black" fill="none"/>' % (
            x(lo), y + 10, x(hi), x(lo), y + 6, y + 14, x(hi), y + 6, y + 14))
        body.append(text(x(hi) + 6, y + 14, "%s (%s–%s)" % (fmt(med), fmt(lo), fmt(hi))))
    axis_y = top + len(rows) * row_h + 4
    body.append('<path d="M%d %.1fH%.1f" stroke="black"/>' % (left, axis_y, left + plot_w))
    v = 0.0
    while v <= scale_max:
        body.append('<path d="M%.1f %.1fv4" stroke="black"/>' % (x(v), axis_y))
        body.append(text(x(v), axis_y + 16, "%g" % v, "middle"))
        v += step
    return body, axis_y + 24 - (top - 28)


def cpu_chart(panels, width=720):
    """panels: [(title, rows)]; rows sorted ascending by median."""
    return bar_chart(panels, "server CPU µs per request (utime+stime / responses); bar = median, "
                             "whisker = min–max over rounds", width=width)


def bar_chart(panels, caption, width=720, left=90, right=150, fmt=two_places):
    """panels: [(title, rows)], each a panel of bars (bar_panel); the caption goes below."""
    body, y = [], 0
    for title, rows in panels:
        if not rows:
            continue
        parts, used = bar_panel(y, title, rows, width, left=left, right=right, fmt=fmt)
        body += parts
        y += used + 14
    body.append(text(10, y + 4, caption, extra='fill="#555"'))
    return svg(width, y + 16, body)


X_TICKS = [(0, "0%"), (1, "90%"), (2, "99%"), (3, "99.9%"), (4, "99.99%"), (5, "99.999%")]


def latency_chart(title, series, width=760, height=440):
    """series: [(name, [(x, latency_us)])] with percentile q = 1 - 10^-x; log-scaled latency."""
    # The legend's width follows the longest name (about 7 px a character).
    left, right, top, bottom = 70, max(120, 44 + 7 * max((len(n) for n, _ in series), default=0)), 36, 50
    pts = [v for _, curve in series for _, v in curve if v]
    if not pts:
        return svg(width, 60, [text(10, 30, title + ": no data")])
    lo = 10 ** math.floor(math.log10(min(pts)))
    hi = 10 ** math.ceil(math.log10(max(pts)))
    plot_w, plot_h = width - left - right, height - top - bottom
    px = lambda xv: left + plot_w * xv / 5
    py = lambda v: top + plot_h * (1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))
    body = [text(10, 20, title, extra='font-weight="bold"'),
            '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (left, top, plot_w, plot_h)]
    for xv, label in X_TICKS:
        body.append('<path d="M%.1f %dV%d" stroke="#ddd"/>' % (px(xv), top, top + plot_h))
        body.append(text(px(xv), top + plot_h + 16, label, "middle"))
    decade = lo
    while decade <= hi:
        body.append('<path d="M%d %.1fH%d" stroke="#ddd"/>' % (left, py(decade), left + plot_w))
        body.append(text(left - 6, py(decade) + 4, fmt_us(decade), "end"))
        decade *= 10
    body.append(text(left + plot_w / 2, height - 12, "percentile", "middle"))
    for i, (name, curve) in enumerate(series):
        path = " ".join("%.1f,%.1f" % (px(xv), py(v)) for xv, v in curve if v)
        w = 3 if name.startswith(("skiff", "uneven-")) else 1.6
        body.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="%s"/>' % (path, color(name), w))
        ly = top + 14 + i * 18
        body.append('<path d="M%d %dh20" stroke="%s" stroke-width="%s"/>' % (left + plot_w + 10, ly - 4, color(name), w))
        body.append(text(left + plot_w + 34, ly, name))
    return svg(width, height, body)


def fmt_us(v):
    if v >= 1e6:
        return "%g s" % (v / 1e6)
    if v >= 1e3:
        return "%g ms" % (v / 1e3)
    return "%g µs" % v
