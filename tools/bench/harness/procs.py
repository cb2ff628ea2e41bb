"""Starting, watching and stopping servers: pinned to a CPU, on a free port, with the CPU time of
the whole process tree readable from /proc (nginx's workers are children of its master)."""
import os
import signal
import socket
import subprocess
import time


def free_port():
    """A port nothing listens on now (the kernel's pick for port 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, timeout=10.0):
    """True once 127.0.0.1:port accepts a connection; False if proc dies or time runs out."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class running_server:
    """One server process: started by start(), stopped (TERM, then KILL of the tree) by stop()."""

    def __init__(self, spec, cpu, workers, log_path):
        self.spec, self.cpu, self.workers, self.log_path = spec, cpu, workers, log_path
        self.proc, self.port = None, None

    def start(self, tries=3):
        for _ in range(tries):
            self.port = free_port()
            env = dict(os.environ, PORT=str(self.port), WORKERS=str(self.workers), **self.spec.env)
            cmd = ["taskset", "-c", str(self.cpu)] + self.spec.command if self.cpu is not None else self.spec.command
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
            log.close()
            if wait_listening(self.port, self.proc):
                return True
            self.stop()   # another job may have taken the port between our pick and its bind
        return False

    def stop(self):
        if self.proc is None:
            return
        pids = tree_pids(self.proc.pid)
        try:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=5)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.proc = None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


def tree_pids(pid):
    """pid and all its descendants, from /proc/PID/task/TID/children."""
    out = [pid]
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                for child in f.read().split():
                    out += tree_pids(int(child))
        except OSError:
            pass
    return out


def pinned(cmd, cpu):
    return (["taskset", "-c", str(cpu)] + cmd) if cpu is not None else cmd


def run_pinned(cmd, cpu, timeout):
    """Runs cmd on cpu (None: anywhere); returns (returncode, stdout, stderr)."""
    p = subprocess.run(pinned(cmd, cpu), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def run_pinned_together(jobs, timeout):
    """Starts every (cmd, cpu) of jobs at once and waits for all; returns [(returncode, stdout,
    stderr)] in the same order. One still running at the timeout is killed (returncode < 0)."""
    started = [subprocess.Popen(pinned(cmd, cpu), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for cmd, cpu in jobs]
    end = time.monotonic() + timeout
    results = []
    for p in started:
        try:
            out, err = p.communicate(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        results.append((p.returncode, out.decode(errors="replace"), err.decode(errors="replace")))
    return results
