#!/usr/bin/env python3
"""Real WebSocket clients in other languages against examples/websocket (built here as
system_websocket), each a program of ours in this directory that checks the example's contract
itself and prints "ok: ..." lines:
  node  websocket_client.js, Node.js with the `ws` library (Debian: nodejs, node-ws)
  go    websocket_client.go, gorilla/websocket (Debian: golang-go,
        golang-github-gorilla-websocket-dev), built here against the Debian package, no modules
The example runs under POLICY (single or sharded). tools/test.sh installs what they need; a
missing one fails the test.
Usage: websocket_clients_test.py BINARY {node|go}"""
import os
import subprocess

from support import check, free_port, main, run, tempdir

HERE = os.path.dirname(os.path.abspath(__file__))


class websocket_example:
    """examples/websocket on a free port, under the POLICY the test was given."""

    def __init__(self, binary):
        self.port = free_port()
        env = dict(os.environ, PORT=str(self.port), POLICY=os.environ.get("POLICY", "single"))
        self.proc = subprocess.Popen([binary], env=env, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.signalled = False

    def terminate(self):
        """One SIGTERM, as a supervisor sends it; the exit then only waits for the process."""
        self.signalled = True
        self.proc.terminate()

    def __enter__(self):
        line = self.proc.stdout.readline().decode()
        check("serving" in line, "examples/websocket serves on %d (%r)" % (self.port, line.strip()))
        return self

    def __exit__(self, *exc):
        if not self.signalled:
            self.terminate()
        try:
            code = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("FAILED: examples/websocket did not stop on SIGTERM within 15 s")
        finally:
            self.proc.stdout.close()
        if exc[0] is None:
            check(code == 0, "examples/websocket stops on SIGTERM with exit code 0 (%r)" % code)


def report(name, rc, out, err):
    for line in out.splitlines():
        print("  " + line)
    check(rc == 0 and out.rstrip().endswith("passed"),
          "%s: every check of the contract passed (exit %d%s)" % (name, rc, ", " + err.strip()[-400:] if err.strip() else ""))


def node_scenario(binary):
    env_path = os.pathsep.join(p for p in (os.environ.get("NODE_PATH"), "/usr/share/nodejs") if p)
    with websocket_example(binary) as app:
        os.environ["NODE_PATH"] = env_path  # where Debian puts node-ws, whatever node runs it
        rc, out, err = run(["node", os.path.join(HERE, "websocket_client.js"), str(app.port)], 90)
        report("node ws", rc, out, err)


def go_scenario(binary):
    with tempdir("go") as tmp:
        client = os.path.join(tmp, "websocket_client")
        env = dict(os.environ, GO111MODULE="off", GOPATH="/usr/share/gocode", GOFLAGS="")
        env.setdefault("GOCACHE", os.path.join(tmp, "cache"))
        build = subprocess.run(["go", "build", "-o", client, os.path.join(HERE, "websocket_client.go")],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=240)
        check(build.returncode == 0, "the gorilla/websocket client builds (%s)" % build.stdout.decode()[-400:])
        with websocket_example(binary) as app:
            rc, out, err = run([client, str(app.port)], 90)
            report("go gorilla/websocket", rc, out, err)


if __name__ == "__main__":
    main({"node": node_scenario, "go": go_scenario}, budget=300)
