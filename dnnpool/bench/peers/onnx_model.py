"""One-node ONNX models for a benchmark variant (used by the ONNX Runtime peer)."""
import numpy as np

from .. import shapes
from .base import NotSupported

OPSET = 22
_ELEMENT_TYPES = {"f32": "FLOAT", "bf16": "BFLOAT16", "f16": "FLOAT16", "u8": "UINT8"}


def is_global(case):
    """Kernel covers the whole input with no padding: ONNX models say GlobalAveragePool."""
    return case.kind == "AvgPool" and case.kernel == case.src[2:] and not any(case.pads_begin)


def _window_attributes(case):
    attrs = dict(kernel_shape=list(case.kernel), strides=list(case.strides),
                 pads=list(case.pads_begin) + list(case.pads_end))
    if case.dilations:
        attrs["dilations"] = list(case.dilations)
    return attrs


def _node(variant, helper, numpy_helper):
    """(node, initializers, extra opset imports) for the variant, or NotSupported."""
    case, channels_last = variant.case, variant.layout == "NXC"
    if case.quantized:
        scales = shapes.QUANT_PARAMS
        initializers = [
            numpy_helper.from_array(np.array(value, dtype=dtype), name)
            for name, value, dtype in (
                ("x_scale", scales["src_scale"], "float32"),
                ("x_zero_point", scales["src_zero_point"], "uint8"),
                ("y_scale", scales["dst_scale"], "float32"),
                ("y_zero_point", scales["dst_zero_point"], "uint8"))]
        node = helper.make_node(
            "QLinearAveragePool", ["x", "x_scale", "x_zero_point", "y_scale", "y_zero_point"],
            ["y"], domain="com.microsoft", channels_last=int(channels_last),
            count_include_pad=int(not case.exclude_pad), **_window_attributes(case))
        return node, initializers
    if channels_last:
        if case.kind == "MaxPool" and variant.dtype == "u8":
            return helper.make_node("NhwcMaxPool", ["x"], ["y"], domain="com.microsoft",
                                    **_window_attributes(case)), []
        raise NotSupported("ONNX pooling is channels-first only")
    if is_global(case):
        return helper.make_node("GlobalAveragePool", ["x"], ["y"]), []
    attrs = _window_attributes(case)
    if case.kind == "AvgPool":
        attrs["count_include_pad"] = int(not case.exclude_pad)
    outputs = ["y", "indices"] if case.indices else ["y"]
    return helper.make_node("AveragePool" if case.kind == "AvgPool" else "MaxPool",
                            ["x"], outputs, **attrs), []


def build_model(variant):
    """A serialized single-node ModelProto computing the variant (x -> y, and indices for
    cases that return them)."""
    import onnx
    from onnx import helper, numpy_helper
    node, initializers = _node(variant, helper, numpy_helper)
    element_type = getattr(onnx.TensorProto, _ELEMENT_TYPES[variant.dtype])
    graph = helper.make_graph(
        [node], "pool",
        [helper.make_tensor_value_info("x", element_type, list(variant.src_shape))],
        [helper.make_tensor_value_info("y", element_type, list(variant.dst_shape))]
        + ([helper.make_tensor_value_info("indices", onnx.TensorProto.INT64, list(variant.dst_shape))]
           if variant.case.indices else []),
        initializer=initializers)
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    return model.SerializeToString()
