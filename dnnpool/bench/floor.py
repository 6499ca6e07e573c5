"""The copy floor: a numpy copy of each variant's input, timed in turn with the engines.

Pooling reads its input and writes its output at least once, so no kernel can beat a copy that
moves as many bytes from the same level of the memory hierarchy. The large 256 MB probe gives
DRAM's bandwidth; this copy is the variant's own size, so it runs from whichever cache the
engines' data stays in between calls. Scaled to the variant's bytes, it is the floor: the
fastest any kernel could run that variant here, and, divided by the best peer's time, the
lowest ratio any kernel could reach.
"""
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .peers.base import Prepared

NAME = "copy"


def source_bytes(variant):
    return math.prod(variant.src_shape) * variant.itemsize


def prepare(variant):
    """A Prepared copy of a buffer as large as the variant's input into another as large, by
    as many threads as the variant (each one contiguous part; the calling thread copies the
    first, as a kernel's master thread works too)."""
    src = np.ones(source_bytes(variant), np.uint8)   # written, so its pages are faulted in
    dst = np.zeros_like(src)
    parts = list(zip(np.array_split(dst, variant.threads), np.array_split(src, variant.threads)))
    if variant.threads == 1:
        return Prepared(run=lambda: np.copyto(dst, src), result=lambda: dst)
    pool = ThreadPoolExecutor(variant.threads - 1)

    def copy():
        pending = [pool.submit(np.copyto, *part) for part in parts[1:]]
        np.copyto(*parts[0])          # numpy releases the GIL while it copies
        for future in pending:
            future.result()

    return Prepared(run=copy, result=lambda: dst, close=pool.shutdown)


def floor_seconds(variant, copy_seconds):
    """The time to move the variant's bytes (bytes_moved) at the same-size copy's bandwidth."""
    return copy_seconds * variant.bytes_moved / (2 * source_bytes(variant))
