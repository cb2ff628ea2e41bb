"""What is measured: the scenarios (a route and a way to load it) and the cells of a run (a
scenario at a connection count, closed loop or at a fixed offered rate)."""
from dataclasses import dataclass


@dataclass(frozen=True)
class scenario:
    key: str
    title: str
    route: str             # contract route it needs (servers.ALL_ROUTES)
    path: str
    method: str = "GET"
    depth: int = 1
    close: bool = False
    body: int = 0
    status: int = 200
    length: int = 13       # body length every response must have


SCENARIOS = {s.key: s for s in [
    scenario("plaintext", "plaintext, keep-alive", "plaintext", "/"),
    scenario("pipelined", "plaintext, pipelined 16 deep", "plaintext", "/", depth=16),
    scenario("short-lived", "plaintext, new connection per request (Connection: close)", "plaintext", "/",
             close=True),
    scenario("json", "json, keep-alive", "json", "/json", length=27),
    scenario("param", "path parameter /user/12345, keep-alive", "param", "/user/12345", length=5),
    scenario("echo", "POST /echo with a 1 KiB body, keep-alive", "echo", "/echo", method="POST", body=1024,
             length=1024),
    scenario("404", "unknown path, 404, keep-alive", "notfound", "/no/such/page", status=404, length=10),
    # Uneven costs (uneven_app): one request in 1,000 spins 5 ms first, the rest are plaintext;
    # rarer than 1 in 100, so that p99 shows the requests queued behind a slow one.
    scenario("uneven", "uneven costs (1 request in 1,000 spins 5 ms), keep-alive", "uneven", "/uneven/1000/5000"),
]}


@dataclass(frozen=True)
class cell:
    scenario: scenario
    conns: int
    rate: float = 0        # > 0: open loop at this offered rate

    @property
    def key(self):
        loop = "open%d" % self.rate if self.rate else "closed"
        return "%s/c%d/%s" % (self.scenario.key, self.conns, loop)

    @property
    def title(self):
        loop = ("open loop at %s req/s" % format(int(self.rate), ",")) if self.rate else "closed loop"
        return "%s; %d connections; %s" % (self.scenario.title, self.conns, loop)


def default_cells(max_conns, rate, close_rate, matrix="default"):
    """The cells of a run. default: every scenario closed-loop at 64 connections, keep-alive
    and pipelined also at 256 (and 512 when allowed), and plaintext keep-alive and short-lived
    at the fixed offered rates. quick: the plaintext cells at 64 only. full: every scenario at
    every connection count, and every scenario at the fixed rate. policies (for comparing
    threading policies and worker counts): keep-alive and pipelined at 64 and 256 connections,
    keep-alive at the fixed rate, and the uneven scenario closed-loop and at the same fixed rate. The uneven scenario is in
    no other matrix: only uneven_app serves it."""
    counts = [c for c in (64, 256, 512) if c <= max_conns]
    S = SCENARIOS
    if matrix == "policies":
        return [cell(S["plaintext"], 64), cell(S["plaintext"], 256), cell(S["pipelined"], 64),
                cell(S["pipelined"], 256), cell(S["plaintext"], 64, rate),
                cell(S["uneven"], 64), cell(S["uneven"], 64, rate)]
    if matrix == "quick":
        return [cell(S["plaintext"], 64), cell(S["pipelined"], 64), cell(S["short-lived"], 64),
                cell(S["plaintext"], 64, rate)]
    if matrix == "full":
        everyday = [s for s in S.values() if s.key != "uneven"]
        closed = [cell(s, c) for s in everyday for c in counts]
        fixed = [cell(s, 64, close_rate if s.close else rate) for s in everyday if s.depth == 1]
        return closed + fixed
    cells = [cell(S["plaintext"], c) for c in counts]
    cells += [cell(S["pipelined"], c) for c in counts if c <= 256]
    cells += [cell(S[k], 64) for k in ("short-lived", "json", "param", "echo", "404")]
    cells += [cell(S["plaintext"], 64, rate), cell(S["short-lived"], 64, close_rate)]
    return cells


def cell_from_key(key):
    """The cell a key such as "plaintext/c64/open10000" names (the inverse of cell.key)."""
    name, conns, loop = key.split("/")
    rate = float(loop[len("open"):]) if loop.startswith("open") else 0
    return cell(SCENARIOS[name], int(conns[1:]), rate)


def loadgen_args(c, port, duration, warmup, server_pid):
    s = c.scenario
    args = ["-c", str(c.conns), "-d", str(duration), "--warmup", str(warmup), "--json",
            "--expect-status", str(s.status), "--expect-length", str(s.length),
            "--cpu-pid", str(server_pid)]
    if s.depth > 1:
        args += ["--depth", str(s.depth)]
    if s.close:
        args.append("--close")
    if s.method != "GET":
        args += ["--method", s.method]
    if s.body:
        args += ["--body", str(s.body), "--content-type", "application/octet-stream"]
    if c.rate:
        args += ["--rate", str(c.rate)]
    return args + ["http://127.0.0.1:%d%s" % (port, s.path)]
