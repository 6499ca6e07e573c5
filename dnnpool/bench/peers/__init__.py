"""The engines a benchmark run compares: dnnpool first, then every peer that is installed.

Each engine module has NAME, version() (raises ImportError/OSError when the engine is missing)
and prepare(variant, src) -> base.Prepared (raises base.NotSupported for what it cannot run).
"""
import importlib

from .base import NotSupported, Prepared

SUBJECT = "dnnpool"
_MODULES = {"dnnpool": "dnnpool_self", "onednn": "onednn_peer", "onnxruntime": "onnxruntime_peer",
            "pytorch": "pytorch_peer", "openvino": "openvino_peer"}
PEER_NAMES = tuple(name for name in _MODULES if name != SUBJECT)

__all__ = ["NotSupported", "Prepared", "SUBJECT", "PEER_NAMES", "engine_module", "discover"]


def engine_module(name):
    if name not in _MODULES:
        raise ValueError(f"peer {name!r}: unknown; known peers are {', '.join(PEER_NAMES)}")
    return importlib.import_module(f"{__name__}.{_MODULES[name]}")


def discover(names=None):
    """{engine name: {"available", "version" or "reason"}} for dnnpool and the chosen peers."""
    engines = {}
    for name in (SUBJECT, *(PEER_NAMES if names is None else names)):
        if name in engines:
            continue
        try:
            engines[name] = {"available": True, "version": engine_module(name).version()}
        except (ImportError, OSError) as error:
            engines[name] = {"available": False, "reason": f"not installed ({error})"}
    return engines
