"""The ONNX op tables (spec/onnx_ops.json)."""
from .._spec import load_spec


def onnx_ops():
    """Parsed spec/onnx_ops.json (cached by load_spec: read-only)."""
    return load_spec("onnx_ops.json")
