"""PyTorch CPU (install the CPU wheel: never `pip install torch` from the index, it pulls CUDA).

Channels-last inputs are the NXC arrays viewed with torch's channels_last strides (no copy).
"""
import warnings

import numpy as np

from .. import shapes
from .base import NotSupported, Prepared
from .onnx_model import is_global

NAME = "pytorch"


def version():
    import torch
    return torch.__version__


def _to_torch(torch, array, layout):
    """The array as a logical (N, C, spatial...) tensor sharing its memory."""
    if array.dtype.name == "bfloat16":
        tensor = torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    else:
        tensor = torch.from_numpy(array)
    if layout == "NXC":
        tensor = tensor.permute(0, tensor.ndim - 1, *range(1, tensor.ndim - 1))
    return tensor


def _to_numpy(torch, tensor, layout, dtype):
    if layout == "NXC":
        tensor = tensor.permute(0, *range(2, tensor.ndim), 1)
    tensor = tensor.contiguous()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(dtype)
    return tensor.numpy()


def _pool_function(torch, case):
    """A one-argument callable doing the case's pooling as a PyTorch user would write it."""
    functional, ndims = torch.nn.functional, case.ndims
    if is_global(case):
        adaptive = getattr(functional, f"adaptive_avg_pool{ndims}d")
        return lambda x: adaptive(x, 1)
    pads = case.pads_begin
    if any(2 * p > k for p, k in zip(pads, case.kernel)):
        raise NotSupported("PyTorch requires pad <= kernel/2")
    if case.kind == "MaxPool":
        pool = getattr(functional, f"max_pool{ndims}d")
        if case.indices:   # (values, indices); the values are compared
            return lambda x: pool(x, case.kernel, case.strides, pads, case.dilation, return_indices=True)[0]
        return lambda x: pool(x, case.kernel, case.strides, pads, case.dilation)
    if case.dilations:
        raise NotSupported("PyTorch average pooling has no dilation")
    pool = getattr(functional, f"avg_pool{ndims}d")
    return lambda x: pool(x, case.kernel, case.strides, pads,
                          count_include_pad=not case.exclude_pad)


def _quantized(torch, tensor):
    """A quint8 tensor over the raw u8 values (torch keeps the input's scale on output)."""
    params = shapes.QUANT_PARAMS
    if (params["src_scale"], params["src_zero_point"]) != (
            params["dst_scale"], params["dst_zero_point"]):
        raise NotSupported("PyTorch quantized pooling keeps the input's scale")
    with warnings.catch_warnings():  # quantized tensors are deprecated, still the way to do it
        warnings.simplefilter("ignore")
        return torch._make_per_tensor_quantized_tensor(tensor, params["src_scale"],
                                                       params["src_zero_point"])


def prepare(variant, src):
    import torch
    pool = _pool_function(torch, variant.case)
    x = _to_torch(torch, src, variant.layout)
    if variant.case.quantized:
        x = _quantized(torch, x)
    try:
        last = [pool(x)]
    except RuntimeError as error:
        raise NotSupported(str(error).splitlines()[0][:120]) from None

    def run():
        last[0] = pool(x)

    def result():
        out = last[0].int_repr() if variant.case.quantized else last[0]
        return _to_numpy(torch, out, variant.layout, src.dtype)

    threads, threads_before = variant.threads, torch.get_num_threads()
    return Prepared(run=run, result=result, activate=lambda: torch.set_num_threads(threads),
                    close=lambda: torch.set_num_threads(threads_before))
