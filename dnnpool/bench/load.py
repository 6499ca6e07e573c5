"""CPU time other processes used while the benchmark ran (Linux /proc; None elsewhere).

On a small machine another process's work distorts timings, multi-threaded ones most: a
parallel region whose second thread shares a core with someone else waits for a whole
scheduler time slice. Measured as the machine's busy time (steal included: other VMs) minus
this process's own CPU time, over the wall time in between.
"""
import os
import time

# More than this many CPUs' worth of other work makes a measurement suspect.
SUSPECT_CPUS = 0.3


def _sample(workers):
    with open("/proc/stat") as stat:
        user, nice, system, idle, iowait, irq, softirq, steal = (
            int(x) for x in stat.readline().split()[1:9])
    with open("/proc/self/stat") as own:
        fields = own.read().rsplit(")", 1)[1].split()
    own_ticks = int(fields[11]) + int(fields[12])  # utime + stime of all our threads
    if workers is not None:  # the benchmark's own worker processes are not others
        own_ticks += round(workers.cpu_seconds() * os.sysconf("SC_CLK_TCK"))
    machine_busy = user + nice + system + irq + softirq + steal
    return machine_busy - own_ticks, time.monotonic()


class OtherLoad:
    """Start a window now; ``cpus()`` is the average number of CPUs others kept busy since
    (workers: the benchmark's worker processes, see isolation.Workers, count as its own)."""

    def __init__(self, workers=None):
        self._workers = workers
        try:
            self._start = _sample(workers)
        except (OSError, ValueError, IndexError):
            self._start = None

    def cpus(self):
        if self._start is None:
            return None
        others, now = _sample(self._workers)
        elapsed = now - self._start[1]
        if elapsed <= 0:
            return 0.0
        ticks = others - self._start[0]
        return round(max(0.0, ticks / os.sysconf("SC_CLK_TCK") / elapsed), 2)
