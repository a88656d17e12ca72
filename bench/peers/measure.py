"""What the side-by-side measures around a server: its process tree's RSS, when it is idle, percentiles, its port,
and how it is stopped (harness.py uses them)."""
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import psutil


# ----------------------------------------------------------------------------- measuring
class RssSampler(threading.Thread):
    """Samples the RSS of a process tree (sum) until stopped."""

    def __init__(self, root_pid):
        super().__init__(daemon=True)
        self.root = psutil.Process(root_pid)
        self.peak = 0
        self.stop_ev = threading.Event()
        self.pids = {root_pid}

    def tree(self):
        try:
            procs = [self.root] + self.root.children(recursive=True)
        except psutil.Error:
            return []
        return procs

    def run(self):
        while not self.stop_ev.is_set():
            total = 0
            for p in self.tree():
                try:
                    total += p.memory_info().rss
                    self.pids.add(p.pid)
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self.stop_ev.wait(0.2)

    def hwm(self):
        """Kernel peak RSS (VmHWM) summed over the tree's live processes, in bytes."""
        s = 0
        for p in self.tree():
            try:
                for line in Path(f"/proc/{p.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        s += int(line.split()[1]) * 1024
            except OSError:
                pass
        return s

    def cpu_idle_wait(self, max_s=180, threshold=10.0):
        """Wait until the tree uses < threshold % CPU over a second; return seconds waited."""
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < max_s:
            procs = self.tree()
            for p in procs:
                try:
                    p.cpu_percent(None)
                except psutil.Error:
                    pass
            time.sleep(1.0)
            tot = 0.0
            for p in procs:
                try:
                    tot += p.cpu_percent(None)
                except psutil.Error:
                    pass
            if tot < threshold:
                break
        return time.perf_counter() - t0


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * p / 100
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def wait_port(port, proc, timeout):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening")
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return time.perf_counter() - t0
        time.sleep(0.2)
    raise RuntimeError(f"port {port} not open after {timeout}s")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc):
    """Stop the server we started: SIGTERM to its process group (we made it leader), then KILL."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(5)
