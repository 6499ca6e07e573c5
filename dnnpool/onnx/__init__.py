"""ONNX front end: ONNX pooling nodes and models on dnnpool's descriptor and kernels.

translate() works on plain attribute dicts; run_node(), run_model(), the backend and the
graph report need the optional onnx package (pip install "dnnpool[onnx]").
"""
from .translate import OnnxNodeError, OnnxNodeTypeError, translate

__all__ = ["translate", "run_node", "run_model", "ModelRunner", "model_report",
           "OnnxNodeError", "OnnxNodeTypeError"]

# Imported on first use so that translate() needs no onnx package.
_LAZY = {"run_node": ".runner", "run_model": ".evaluator", "ModelRunner": ".evaluator",
         "model_report": ".report"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
