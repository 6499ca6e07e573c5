"""Engines in worker processes of their own (multi-threaded variants by default).

Engines that share one process share it with each other's thread pools: ONNX Runtime's,
OpenVINO's, PyTorch's and the system OpenMP runtime's workers each stay awake for a while
after a parallel region.  On a 2-core machine a parallel region whose second thread finds
its core taken waits for a scheduler time slice, so in-process 2-thread timings swing by
10-50x (docs/benchmark.md, "Two threads").  Here each engine lives in a process of its
own, kept for the whole run; the parent still interleaves the samples, and each sample is timed
inside the engine's process, so pipes and pickling are never timed.  What is left is the
previous engine's workers spinning down after its sample (ONNX Runtime's for about 50 ms):
the parent waits until that worker uses no CPU time (settle, at most SETTLE_LIMIT_SECONDS),
and each sample then begins with WARM_UP_SECONDS of untimed calls, which wake the
engine's own workers.  (A plain sleep between samples, --gap, lets every engine's workers
park, and each sample then measures the wake-up.)
"""
import os
import subprocess
import sys
import time
from multiprocessing.connection import Connection

from . import peers

WARM_UP_SECONDS = 0.01
SETTLE_LIMIT_SECONDS = 0.25


class EngineProcess:
    """One engine's worker: a fresh interpreter (``python -m dnnpool.bench.worker``, so the
    caller's main module is never re-imported) talking over a pipe pair of its own (the
    engines may print on stdout); prepare() gives a handle with the Prepared interface."""

    def __init__(self, name):
        self.name = name
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        # `-m` puts the working directory first on sys.path: there, the directory holding
        # this very dnnpool (not a source checkout's unbuilt one, say).
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "dnnpool.bench.worker", name, str(to_child_r),
                 str(from_child_w)], pass_fds=(to_child_r, from_child_w), cwd=package_root,
                stdin=subprocess.DEVNULL, stdout=2)  # an engine's prints never reach --json output
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._send = Connection(to_child_w, readable=False)
        self._receive = Connection(from_child_r, writable=False)

    def call(self, operation, argument=None):
        try:
            self._send.send((operation, argument))
            status, value = self._receive.recv()
        except (EOFError, OSError) as error:
            raise RuntimeError(f"the {self.name} worker process died "
                               f"(exit code {self._process.poll()}): {error!r}") from None
        if status == "unsupported":
            raise peers.NotSupported(value)
        if status == "error":
            raise RuntimeError(value)
        return value

    def prepare(self, variant):
        return RemoteEngine(self, self.call("prepare", variant))

    def cpu_seconds(self):
        """User + system time of the worker so far (Linux; 0 elsewhere)."""
        try:
            with open(f"/proc/{self._process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def wait_until_idle(self, poll_seconds=0.01, limit_seconds=SETTLE_LIMIT_SECONDS):
        """Returns once the worker used no CPU time over two polls in a row (its threads have
        stopped spinning), or after limit_seconds.  The kernel counts CPU time in clock ticks
        (10 ms), so a thread spinning on a core shows up within a poll or two."""
        deadline = time.perf_counter() + limit_seconds
        used, quiet = self.cpu_seconds(), 0
        while quiet < 2 and time.perf_counter() < deadline:
            time.sleep(poll_seconds)
            now = self.cpu_seconds()
            quiet = quiet + 1 if now == used else 0
            used = now

    def stop(self):
        if self._process.poll() is None:
            try:
                self.call("exit")
            except RuntimeError:
                pass
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._send.close()
        self._receive.close()


class RemoteEngine:
    """A variant prepared in a worker process: sample, result and close go through its pipe."""

    def __init__(self, process, implementation):
        self._process = process
        self.implementation = implementation

    def sample(self, count, warm_up_seconds=0.0):
        return self._process.call("sample", (int(count), float(warm_up_seconds)))

    def settle(self):
        self._process.wait_until_idle()

    def result(self):
        return self._process.call("result")

    def close(self):
        self._process.call("close")


class Workers:
    """The run's worker processes, started on first use, one per engine."""

    def __init__(self):
        self._processes = {}

    def prepare(self, name, variant):
        if name not in self._processes:
            self._processes[name] = EngineProcess(name)
        return self._processes[name].prepare(variant)

    def stop(self):
        for process in self._processes.values():
            process.stop()
        self._processes.clear()

    def cpu_seconds(self):
        """CPU time the worker processes used so far."""
        return sum(process.cpu_seconds() for process in self._processes.values())
