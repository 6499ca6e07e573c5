"""dnnpool as an ONNX backend (onnx.backend.base.Backend), so that ONNX's backend test runner
or anyone's backend test suite can drive it:

    import dnnpool.onnx.backend as backend
    rep = backend.prepare(model)          # once
    outputs = rep.run([x])                # many times

Pooling nodes run on dnnpool, every other node on onnx's reference evaluator.
"""
from __future__ import annotations

import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from .evaluator import ModelRunner, load_model
from .runner import run_node as _run_node

__all__ = ["DnnpoolBackend", "DnnpoolBackendRep", "prepare", "run_model", "run_node",
           "supports_device"]


class DnnpoolBackendRep(BackendRep):
    def __init__(self, runner):
        self.runner = runner

    def run(self, inputs, **kwargs):
        outputs = self.runner.run(inputs)
        return namedtupledict("Outputs", self.runner.output_names)(*outputs)


class DnnpoolBackend(Backend):
    @classmethod
    def supports_device(cls, device):
        return Device(device).type == DeviceType.CPU

    @classmethod
    def _check_device(cls, device):
        if not cls.supports_device(device):
            raise ValueError(f"device {device!r}: dnnpool runs on CPU only")

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        cls._check_device(device)
        model = load_model(model)
        super().prepare(model, device, **kwargs)    # onnx.checker
        return DnnpoolBackendRep(ModelRunner(model))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        cls._check_device(device)
        if node.domain in ("", "ai.onnx"):      # onnx.checker knows the ai.onnx ops only
            super().run_node(node, inputs, device, outputs_info, **kwargs)
        # opset_version is the ai.onnx opset; other domains' ops are at their newest version
        opset = kwargs.get("opset_version") or onnx.defs.onnx_opset_version()
        return tuple(_run_node(node, inputs, opset))


prepare = DnnpoolBackend.prepare
run_model = DnnpoolBackend.run_model
run_node = DnnpoolBackend.run_node
supports_device = DnnpoolBackend.supports_device
