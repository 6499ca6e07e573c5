"""dnnpool: oneDNN Graph AvgPool/MaxPool, exactly, on fast compiled CPU kernels.

    >>> import numpy as np, dnnpool as dp
    >>> pd = dp.PoolingDesc("MaxPool", src_shape=(1, 4, 4, 1), kernel=[2, 2], strides=[2, 2])
    >>> dp.Pooling(pd).execute(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1))[..., 0]
    array([[[ 5.,  7.],
            [13., 15.]]], dtype=float32)
"""
import os

from ._core import ABI_VERSION, Pooling, get_num_threads, isa, set_num_threads
from .descriptor import PoolingDesc
from .oneshot import avg_pool, max_pool

__all__ = [
    "PoolingDesc", "Pooling", "avg_pool", "max_pool", "get_include", "set_num_threads",
    "get_num_threads", "isa", "ABI_VERSION", "__version__",
]
__version__ = "0.1.0"


def get_include():
    """Directory of dnnpool's C headers (dnnpool.h, dnnpool_api.h) for extensions that build against it.

    The .pxd files are found by Cython through the installed package itself
    (``cimport dnnpool.capi``).
    """
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.join(here, "include")
    if os.path.isdir(installed):
        return installed
    return os.path.join(os.path.dirname(here), "csrc")   # a source tree (in-place build)
