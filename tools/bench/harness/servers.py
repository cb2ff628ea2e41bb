"""The servers the harness measures: skiff's contract app, the floor, the peers built by
install.sh, and actix-web / axum when the user points at binaries of them; with --policies,
skiff once per threading policy (the same binary, POLICY in its environment)."""
import os
from dataclasses import dataclass, field

# The routes of the contract (design.md, "The contract app"), as scenario keys.
ALL_ROUTES = ("plaintext", "json", "param", "echo", "notfound")
POLICIES = ("single", "sharded", "shared")


@dataclass
class server_spec:
    name: str
    what: str
    command: list
    routes: tuple = ALL_ROUTES       # the floor serves GET / only, by design
    pipelining: bool = True
    env: dict = field(default_factory=dict)
    why_partial: str = ""
    measured_in: tuple = ()          # scenario keys it is measured in; empty: all it serves
    one_worker: bool = False         # one thread whatever WORKERS says (POLICY=single, the floor)


def known_servers(build_dir, actix=None, axum=None):
    """Every server, in the order the tables list them. A spec whose binary is missing is
    kept; the harness reports it as absent rather than dropping it silently."""
    peers = os.path.join(build_dir, "peers", "bin")
    # The nginx and h2o launchers keep their run folders and h2o's static files there.
    peers_env = {"PEERS_BUILD": os.path.join(build_dir, "peers")}
    specs = [
        server_spec("skiff", "skiff contract_app (POLICY=single)",
                    [os.path.join(build_dir, "tools", "bench", "contract_app")], env={"POLICY": "single"},
                    one_worker=True),
        server_spec("floor", "bare epoll loop, canned response",
                    [os.path.join(peers, "floor")], routes=("plaintext",),
                    why_partial="the floor answers every request with Hello, World!; it has no router",
                    one_worker=True),
        server_spec("nginx", "nginx 1.22, return directives", [os.path.join(peers, "nginx")], env=peers_env),
        server_spec("h2o", "h2o 2.2, static files + mruby", [os.path.join(peers, "h2o")], env=peers_env),
        server_spec("hyper", "hyper 0.14 + tokio current-thread", [os.path.join(peers, "hyper")]),
        server_spec("fasthttp", "Go fasthttp", [os.path.join(peers, "fasthttp")]),
        server_spec("nethttp", "Go net/http + httprouter", [os.path.join(peers, "nethttp")]),
        server_spec("httplib", "cpp-httplib 0.11, thread pool", [os.path.join(peers, "httplib")],
                    pipelining=False,
                    why_partial="cpp-httplib answers only the first request of a pipelined batch"),
        server_spec("beast", "Boost.Beast 1.74 async", [os.path.join(peers, "beast")]),
    ]
    actix = actix or os.environ.get("SKIFF_BENCH_ACTIX")
    axum = axum or os.environ.get("SKIFF_BENCH_AXUM")
    specs.append(server_spec("actix", "actix-web (user's binary)", [actix] if actix else []))
    specs.append(server_spec("axum", "axum (user's binary)", [axum] if axum else []))
    return specs


def policy_servers(build_dir, policies):
    """skiff once per policy: skiff-POLICY is contract_app, measured in every scenario but the
    uneven one; uneven-POLICY is uneven_app (the contract plus GET /uneven/:n/:us), measured
    in the uneven scenario only. Both are checked against the whole contract."""
    bench = os.path.join(build_dir, "tools", "bench")
    specs = []
    for p in policies:
        specs.append(server_spec("skiff-" + p, "skiff contract_app (POLICY=%s)" % p,
                                 [os.path.join(bench, "contract_app")], env={"POLICY": p},
                                 one_worker=p == "single"))
    for p in policies:
        specs.append(server_spec("uneven-" + p, "skiff uneven_app (POLICY=%s)" % p,
                                 [os.path.join(bench, "uneven_app")], env={"POLICY": p},
                                 routes=ALL_ROUTES + ("uneven",), measured_in=("uneven",),
                                 one_worker=p == "single"))
    return specs


def absent_reason(spec):
    """Why a server cannot run here, or '' when it can."""
    if not spec.command:
        env = "SKIFF_BENCH_" + spec.name.upper()
        return "not in Debian: pass --%s PATH or set %s to a binary serving the contract" % (spec.name, env)
    exe = spec.command[0]
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        if exe.endswith("uneven_app"):
            return "no binary %s (build the target uneven_app: tools/bench/uneven_app.cmake)" % exe
        return "no binary %s (run tools/bench/install.sh)" % exe
    return ""


def serves(spec, scenario):
    """Whether spec can be measured in scenario, and why not."""
    if spec.measured_in and scenario.key not in spec.measured_in:
        return False, "not measured here: %s is run in %s only" % (spec.name, ", ".join(spec.measured_in))
    if scenario.route not in spec.routes:
        return False, "route not served: " + spec.why_partial
    if scenario.depth > 1 and not spec.pipelining:
        return False, "no pipelining: " + spec.why_partial
    return True, ""
