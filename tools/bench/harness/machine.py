"""Facts about the machine and the software measured, recorded with every run."""
import os
import platform
import re
import subprocess
import time


def first_line(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
        return p.stdout.decode(errors="replace").strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "absent"


def dpkg_version(pkg):
    return first_line(["dpkg-query", "-W", "-f=${Version}", pkg])


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            return m.group(1).strip() if m else platform.processor()
    except OSError:
        return platform.processor()


def hyper_version(build_dir):
    """The hyper and tokio versions cargo resolved, from the build copy's Cargo.lock."""
    lock = os.path.join(build_dir, "peers", "src", "hyper", "Cargo.lock")
    try:
        text = open(lock).read()
    except OSError:
        return "unknown"
    found = dict(re.findall(r'name = "(hyper|tokio)"\nversion = "([^"]+)"', text))
    return "hyper %s, tokio %s" % (found.get("hyper", "?"), found.get("tokio", "?"))


def facts(build_dir, server_cpu, load_cpu):
    load1, load5, load15 = os.getloadavg()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": platform.node(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "loadavg_start": "%.2f %.2f %.2f" % (load1, load5, load15),
        "server_cpu": server_cpu,
        "load_cpu": load_cpu,
        "compilers": {"g++": first_line(["g++", "--version"]), "clang++": first_line(["clang++", "--version"])},
        "versions": {
            "skiff": skiff_version(build_dir),
            "nginx": first_line(["nginx", "-v"]),
            "h2o": first_line(["h2o", "-v"]),
            "hyper": hyper_version(build_dir),
            "rustc": first_line(["rustc", "--version"]),
            "go": first_line(["go", "version"]),
            "fasthttp": dpkg_version("golang-github-valyala-fasthttp-dev"),
            "httprouter": dpkg_version("golang-github-julienschmidt-httprouter-dev"),
            "cpp-httplib": dpkg_version("libcpp-httplib-dev"),
            "boost": dpkg_version("libboost-dev"),
            "wrk": first_line(["wrk", "-v"]),
        },
    }


def skiff_version(build_dir):
    """The commit checked out, and whether include/ differs from it or is newer than the
    contract_app binary measured (built earlier, by a run with --no-install)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(build_dir)))
    commit = first_line(["git", "-C", root, "rev-parse", "--short", "HEAD"])
    dirty = first_line(["git", "-C", root, "status", "--porcelain", "--untracked-files=no", "include"])
    notes = ["include/ modified"] if dirty not in ("absent", "") else []
    try:
        built = os.path.getmtime(os.path.join(build_dir, "tools", "bench", "contract_app"))
        newest = max(os.path.getmtime(os.path.join(d, f)) for d, _, files in os.walk(os.path.join(root, "include"))
                     for f in files)
        if newest > built:
            notes.append("contract_app built before the latest change to include/")
    except (OSError, ValueError):
        pass
    return commit + (" (%s)" % "; ".join(notes) if notes else "")


def core_cpus():
    """The CPUs this process may use, one per physical core (the lowest-numbered hardware
    thread of each), in order: two jobs pinned to sibling threads would share one core."""
    out, seen = [], set()
    for cpu in sorted(os.sched_getaffinity(0)):
        topo = "/sys/devices/system/cpu/cpu%d/topology/" % cpu
        try:
            with open(topo + "physical_package_id") as f, open(topo + "core_id") as g:
                core = (f.read().strip(), g.read().strip())
        except OSError:
            core = cpu
        if core not in seen:
            seen.add(core)
            out.append(cpu)
    return out


def placement(workers, cpus, load_procs=0):
    """Where a step of a worker sweep runs: (server CPU list, [CPU list of each load generator],
    a sentence saying so). With a core to spare, the server gets the first `workers` cores and
    the load generators one core each of the rest, as many generators as the server has
    workers (or load_procs); with fewer cores, the server and one generator (or load_procs)
    share them all."""
    cpus = list(cpus)
    if len(cpus) > workers:
        server, rest = cpus[:workers], cpus[workers:]
        n = load_procs or min(workers, len(rest))
        load = [str(rest[i % len(rest)]) for i in range(n)]
        note = "server on CPU %s, %d load generator(s) on CPU %s" % (
            ",".join(map(str, server)), n, ",".join(sorted(set(load), key=int)))
        return ",".join(map(str, server)), load, note
    shared = ",".join(map(str, cpus))
    n = load_procs or 1
    note = ("server and %d load generator(s) share CPU %s: %d core(s) are too few for %d worker(s) and a "
            "generator apart" % (n, shared, len(cpus), workers))
    return shared, [shared] * n, note
