"""OpenVINO CPU plugin: a one-op model compiled for latency with the variant's thread count."""
import functools

import numpy as np

from .base import NotSupported, Prepared
from .onnx_model import is_global

NAME = "openvino"


def version():
    import openvino
    return openvino.__version__.split("-")[0]


@functools.lru_cache(maxsize=None)
def _core():
    import openvino
    return openvino.Core()


def _pool_node(case, parameter):
    """The model's outputs: the pooled values (and the indices of maxima for cases with indices)."""
    import openvino.opset1 as opset1
    import openvino.opset14 as opset14
    if is_global(case):
        return [opset1.reduce_mean(parameter, list(range(2, 2 + case.ndims)), keep_dims=True)]
    window = dict(strides=list(case.strides), pads_begin=list(case.pads_begin),
                  pads_end=list(case.pads_end), kernel_shape=list(case.kernel))
    if case.kind == "AvgPool":
        if case.dilations:
            raise NotSupported("OpenVINO AvgPool has no dilation")
        return [opset14.avg_pool(parameter, exclude_pad=case.exclude_pad, **window)]
    pool = opset14.max_pool(parameter, dilations=list(case.dilation), **window)
    return [pool.output(0), pool.output(1)] if case.indices else [pool.output(0)]


def _tensor(openvino, array):
    """An OpenVINO tensor over the numpy buffer (bf16 through its uint16 bits)."""
    if array.dtype.name == "bfloat16":
        return openvino.Tensor(array.view(np.uint16), array.shape, openvino.Type.bf16)
    return openvino.Tensor(array, shared_memory=True)


def prepare(variant, src):
    import openvino
    case = variant.case
    if variant.layout != "NCX":
        raise NotSupported("OpenVINO pooling ops are channels-first only")
    if case.quantized:
        raise NotSupported("no quantized average pooling op (OpenVINO uses FakeQuantize graphs)")
    element_type = {"f32": openvino.Type.f32, "bf16": openvino.Type.bf16,
                    "f16": openvino.Type.f16, "u8": openvino.Type.u8}[variant.dtype]
    import openvino.opset1 as opset1
    parameter = opset1.parameter(list(variant.src_shape), element_type, name="x")
    model = openvino.Model(_pool_node(case, parameter), [parameter], "pool")
    config = {"INFERENCE_NUM_THREADS": variant.threads, "PERFORMANCE_HINT": "LATENCY",
              "NUM_STREAMS": 1}
    try:
        compiled = _core().compile_model(model, "CPU", config)
    except RuntimeError as error:
        raise NotSupported(str(error).splitlines()[0][:120]) from None
    request = compiled.create_infer_request()
    request.set_input_tensor(_tensor(openvino, src))
    # The tensors share these arrays' memory without owning it: the closure keeps them alive.
    outputs = [np.empty(variant.dst_shape, src.dtype)]
    if case.indices:   # opset14 MaxPool's second output: int64 indices
        outputs.append(np.empty(variant.dst_shape, np.int64))
    for port, array in enumerate(outputs):
        request.set_output_tensor(port, _tensor(openvino, array))
    return Prepared(run=request.infer, result=lambda: outputs[0])
