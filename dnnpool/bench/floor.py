"""The floor: the least work any kernel must do for a variant, timed in turn with the engines.

Pooling reads its input once and writes its output (and indices) once at the very least. The
floor does just that with numpy, nothing else: it copies the input into the output's first bytes
and fills the rest (both at memcpy's and memset's speed). Its buffers are as large as the
variant's, so it runs from whichever cache the engines' data stays in between calls, unlike the
256 MB copy probe, which measures DRAM. Divided by the best peer's time, it is the lowest ratio
any kernel could show on that machine.

Only variants whose output (with indices) is at least as large as their input have a floor (the
stride-1 windows, where the large-window targets are): numpy has no way to read an input faster
than its reductions compute, and those run slower than the kernels, so a floor for a variant that
mostly reads (stride 2, global pooling) would not be one.

A variant of N > 1 threads times the floor by N threads too (each one contiguous Nth of every
buffer; Python threads, so small buffers pay a thread hand-off) and keeps the faster of the two.
"""
import math

import numpy as np

from .parallel import parts_runner
from .peers.base import Prepared

PREFIX = "floor/"   # the floor's entries in the round robin: floor/1, floor/N


def is_floor(name):
    return name.startswith(PREFIX)


def byte_counts(variant):
    """(bytes read, bytes written): the input; the output and any int64 indices."""
    read = math.prod(variant.src_shape) * variant.itemsize
    return read, variant.bytes_moved - read


def _part_work(src, dst):
    """One part's work: copy src into dst's first bytes, then fill the rest of dst."""
    copy, fill = (dst[:src.size], src), dst[src.size:]

    def work():
        np.copyto(*copy)   # numpy releases the GIL while it copies
        if fill.size:
            fill.fill(1)
    return work


def _prepare(variant, threads):
    read, written = byte_counts(variant)
    src = np.ones(read, np.uint8)   # written, so its pages are faulted in
    dst = np.zeros(written, np.uint8)
    # Part p copies its input part into its output part and fills the rest of that: every
    # input byte is read once and every output byte written once, by one thread.
    split = np.array_split
    run, close = parts_runner([_part_work(s, d) for s, d in zip(split(src, threads), split(dst, threads))])
    return Prepared(run=run, result=lambda: dst, close=close)


def has_floor(variant):
    read, written = byte_counts(variant)
    return written >= read


def prepare_all(variant):
    """{name: Prepared}: the floor by one thread and, for N > 1 threads, by N; none for a
    variant whose output is smaller than its input (has_floor)."""
    if not has_floor(variant):
        return {}
    counts = sorted({1, variant.threads})
    return {f"{PREFIX}{n}": _prepare(variant, n) for n in counts}
