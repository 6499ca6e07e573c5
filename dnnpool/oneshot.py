"""One-shot conveniences: describe, plan and run in one call."""
import functools

from ._core import Pooling
from .descriptor import PoolingDesc


@functools.lru_cache(maxsize=64)
def _primitive(desc, num_threads):
    # Plans are cached by descriptor value, so repeated one-shot calls on the
    # same configuration do not re-plan.
    return Pooling(desc, num_threads=num_threads)


def _pool(kind, src, dst, with_indices, num_threads, attrs):
    if not hasattr(src, "shape") or not hasattr(src, "dtype"):
        raise TypeError(f"src: expected a numpy.ndarray, got {type(src).__name__}")
    desc = PoolingDesc(kind, src_shape=src.shape, dtype=src.dtype, **attrs)
    prim = _primitive(desc, num_threads)
    if with_indices:
        return prim.execute(src, dst=dst, with_indices=True)
    return prim.execute(src, dst=dst)


def avg_pool(src, *, dst=None, num_threads=0, **attrs):
    """AvgPool of src; attrs are PoolingDesc's (kernel, strides, pads_begin, ...)."""
    return _pool("AvgPool", src, dst, False, num_threads, attrs)


def max_pool(src, *, dst=None, with_indices=False, num_threads=0, **attrs):
    """MaxPool of src; with_indices=True also returns int64 flat indices of the maxima."""
    return _pool("MaxPool", src, dst, with_indices, num_threads, attrs)
