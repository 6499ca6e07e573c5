"""dnnpool itself, the engine under test."""
import numpy as np

from .. import shapes
from .base import Prepared

NAME = "dnnpool"


def version():
    import dnnpool
    return getattr(dnnpool, "__version__", "unknown")


def descriptor_attributes(variant):
    """PoolingDesc keyword arguments for a variant (oneDNN Graph conventions)."""
    case = variant.case
    attrs = dict(kernel=list(case.kernel), strides=list(case.strides),
                 pads_begin=list(case.pads_begin), pads_end=list(case.pads_end),
                 data_format=variant.layout)
    if case.dilations:
        attrs["dilations"] = list(case.dilations)
    if case.kind == "AvgPool":
        attrs["exclude_pad"] = case.exclude_pad
    if case.quantized:
        attrs.update(shapes.QUANT_PARAMS)
    return attrs


def prepare(variant, src):
    import dnnpool as dp
    desc = dp.PoolingDesc(variant.case.kind, variant.src_shape, dtype=variant.dtype,
                          **descriptor_attributes(variant))
    primitive = dp.Pooling(desc, num_threads=variant.threads)
    dst = np.empty(variant.dst_shape, src.dtype)
    if variant.case.indices:
        indices = np.empty(variant.dst_shape, np.int64)
        return Prepared(run=lambda: primitive.execute(src, dst=dst, indices=indices), result=lambda: dst)
    return Prepared(run=lambda: primitive.execute(src, dst=dst), result=lambda: dst)
