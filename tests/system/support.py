"""What the system tests share: starting system_app and the proxies (nginx, HAProxy) on free
ports, reading a process's descriptors and RSS from /proc, raw HTTP over sockets, and the
check/report format. Python 3 standard library only."""
import http.client
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "bench"))
from harness.procs import free_port, wait_listening  # noqa: E402  (re-exported to the tests)

HELLO = b"Hello, World!"
passed = []


def check(condition, what):
    """Prints what was checked; raises with the same words (and the detail) when it fails."""
    if not condition:
        raise AssertionError("FAILED: " + what)
    passed.append(what)
    print("ok:", what, flush=True)


KNOWN_BUG_EXIT = 77   # ctest's SKIP_RETURN_CODE for these tests: "known bug, reproduced"


class known_bug(Exception):
    """Raised by expect_known_bug when the bug still shows: the test is reported skipped."""


def expect_known_bug(condition, what, bug):
    """An expected failure: condition is what should hold once bug is fixed. While it does not,
    the scenario stops here and ctest reports it skipped with the bug; once it holds, the test
    fails, so that the mark is removed and the check becomes an ordinary one."""
    if condition:
        raise AssertionError("FAILED (unexpected pass, remove the known-bug mark): %s" % what)
    raise known_bug("KNOWN BUG, reproduced (expected failure): %s\n  %s" % (what, bug))


def wait_for(predicate, timeout, step=0.05):
    """True as soon as predicate() is; False when timeout seconds pass first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


class skiff_app:
    """system_app on a port the kernel picks (it prints "serving PORT"); env sets its options."""

    def __init__(self, binary, nofile=None, **env):
        self.binary, self.nofile = binary, nofile
        self.env = dict(os.environ, PORT="0", **{k: str(v) for k, v in env.items()})
        self.proc, self.port = None, None

    def __enter__(self):
        limit = self.nofile
        def preexec():
            if limit:
                resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
        self.proc = subprocess.Popen([self.binary], env=self.env, stdout=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, preexec_fn=preexec, start_new_session=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 10)
        line = self.proc.stdout.readline().decode() if ready else ""
        if not line.startswith("serving "):
            self.stop()
            raise AssertionError("FAILED: system_app did not start (printed %r)" % line)
        self.port = int(line.split()[1])
        return self

    def __exit__(self, *exc):
        self.stop()

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=5)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def fds(self):
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def rss_kib(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


# How each proxy runs in the foreground as the current user from TMP/proxy.conf ({dir}: TMP).
# nginx takes TMP as its prefix (-p), where its pid, logs and temp files go.
PROXY_COMMANDS = {
    "nginx": ["nginx", "-p", "{dir}", "-c", "{dir}/proxy.conf", "-e", "{dir}/error.log", "-g", "daemon off;"],
    "haproxy": ["haproxy", "-f", "{dir}/proxy.conf", "-db"],
}


class proxy_process:
    """nginx or HAProxy from a config template in tmp. Each @NAME@ in the template is replaced by
    ports[NAME] or values[NAME] (and @DIR@ by tmp, @USER@ by what nginx needs when run as
    root); starting waits until every one of ports listens. It runs in its own session, so that
    stop() ends its workers with it."""

    def __init__(self, kind, template, ports, values, tmp):
        self.kind, self.ports, self.tmp = kind, ports, tmp
        values = dict(values, **ports, DIR=tmp,
                      USER="user root;" if os.geteuid() == 0 else "")  # nginx workers: ours
        with open(template) as f:
            text = f.read()
        for k, v in values.items():
            text = text.replace("@%s@" % k, str(v))
        with open(os.path.join(tmp, "proxy.conf"), "w") as f:
            f.write(text)
        self.log = open(os.path.join(tmp, "stderr.log"), "wb")
        self.proc = subprocess.Popen([a.format(dir=tmp) for a in PROXY_COMMANDS[kind]], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        if not all(wait_listening(p, self.proc) for p in ports.values()):
            self.stop()
            raise AssertionError("FAILED: %s did not start: %s" % (kind, self.logs()))

    def logs(self):
        """The tail of what the proxy wrote to stderr and its error log."""
        out = []
        for name in ("stderr.log", "error.log"):
            path = os.path.join(self.tmp, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out.append(f.read()[-2000:])
        return "\n".join(out)

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)   # nginx's worker, should it outlive the master
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=5)
        self.log.close()


def fetch(port, method="GET", path="/", body=None, headers=None, timeout=5):
    """(status, headers dict with lower-case names, body) of one request on a new connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def get_ok(port, path="/", timeout=5):
    """True when GET path answers 200 within timeout (no exception escapes)."""
    try:
        return fetch(port, path=path, timeout=timeout)[0] == 200
    except (OSError, http.client.HTTPException):
        return False


def read_responses(sock, count, timeout=10.0):
    """Reads count responses (Content-Length or chunked) off sock: [(status, headers, body)].
    Fewer come back if the peer closes or time runs out first."""
    sock.settimeout(timeout)
    reader = sock.makefile("rb")
    out = []
    try:
        for _ in range(count):
            line = reader.readline()
            if not line:
                break
            status = int(line.split()[1])
            headers = {}
            while True:
                h = reader.readline()
                if h in (b"\r\n", b""):
                    break
                k, _, v = h.decode("latin-1").partition(":")
                headers[k.strip().lower()] = v.strip()
            if "content-length" in headers:
                body = reader.read(int(headers["content-length"]))
            elif headers.get("transfer-encoding", "").lower() == "chunked":
                body = b""
                while True:
                    size = int(reader.readline().split(b";")[0], 16)
                    if size == 0:
                        while reader.readline() not in (b"\r\n", b""):
                            pass
                        break
                    body += reader.read(size)
                    reader.readline()
            else:
                body = b""
            out.append((status, headers, body))
    except (OSError, ValueError, IndexError):
        pass
    finally:
        reader.close()
    return out


def readable(socks, timeout):
    """Those of socks with something to read (or closed) within timeout seconds. poll, not
    select: a test that holds hundreds of sockets may pass descriptor 1024."""
    poller, by_fd = select.poll(), {}
    for s in socks:
        poller.register(s, select.POLLIN)
        by_fd[s.fileno()] = s
    return [by_fd[fd] for fd, _ in poller.poll(timeout * 1000)]


def reset(sock):
    """Closes sock with a reset (SO_LINGER 0) instead of a FIN."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()


def run(cmd, timeout):
    """Runs cmd; (returncode, stdout, stderr) as text. A run past timeout fails the test."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise AssertionError("FAILED: %s ran past %s s" % (cmd[0], timeout))
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def tempdir(prefix):
    return tempfile.TemporaryDirectory(prefix="skiff-system-%s-" % prefix)


def main(scenarios, budget):
    """argv: BINARY SCENARIO. Runs scenarios[SCENARIO](binary) within budget seconds (an alarm
    turns a hang into a failure, so finally blocks still stop what was started)."""
    binary, name = sys.argv[1], sys.argv[2]
    def on_alarm(*_):
        raise AssertionError("FAILED: %s ran past its %d s budget" % (name, budget))
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(budget)
    started = time.monotonic()
    print("%s: system_app under POLICY=%s WORKERS=%s" % (
        name, os.environ.get("POLICY", "single"), os.environ.get("WORKERS", "1")), flush=True)
    try:
        scenarios[name](binary)
    except AssertionError as e:
        print(e, flush=True)
        print("%s: %d passed, 1 failed" % (name, len(passed)))
        sys.exit(1)
    except known_bug as e:
        print(e, flush=True)
        print("%s: %d passed, 0 failed, 1 skipped" % (name, len(passed)))
        sys.exit(KNOWN_BUG_EXIT)
    finally:
        signal.alarm(0)
    print("%s: %d passed, 0 failed (%.1f s)" % (name, len(passed), time.monotonic() - started))
