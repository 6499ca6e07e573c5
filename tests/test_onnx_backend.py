"""ONNX's own backend tests, run through dnnpool.onnx.backend: the 43 official pooling node
tests (AveragePool, MaxPool, GlobalAveragePool, GlobalMaxPool) and the 16 pooling models
converted from PyTorch that ship inside the onnx wheel (AveragePool-1 among them, which ONNX
Runtime cannot run)."""
import re

import pytest

onnx = pytest.importorskip("onnx", reason="the ONNX front end's optional dependency")
import onnx.backend.test  # noqa: E402

import dnnpool.onnx.backend as dnnpool_backend  # noqa: E402

NODE_TESTS = re.compile(r"^test_(averagepool|maxpool|globalaveragepool|globalmaxpool)(_\w+)?_cpu$")
PYTORCH_TESTS = re.compile(r"^test_(AvgPool\dd|MaxPool\dd|operator_maxpool)\w*_cpu$")
EXPECTED = {"OnnxBackendNodeModelTest": 43, "OnnxBackendPyTorchConvertedModelTest": 15,
            "OnnxBackendPyTorchOperatorModelTest": 1}

_backend_test = onnx.backend.test.BackendTest(dnnpool_backend, __name__)
SELECTED = {}
# Keep only the pooling tests: BackendTest would otherwise add every ONNX test as skipped.
for _class_name, _case in _backend_test.test_cases.items():
    _names = [n for n in dir(_case) if NODE_TESTS.match(n) or PYTORCH_TESTS.match(n)]
    if not _names:
        continue
    for _name in [n for n in dir(_case) if n.startswith("test_") and n not in _names]:
        delattr(_case, _name)
    SELECTED[_class_name] = sorted(_names)
    globals()[_class_name] = _case


def test_every_official_pooling_test_is_selected():
    assert {k: len(v) for k, v in SELECTED.items()} == EXPECTED
    pytorch = SELECTED["OnnxBackendPyTorchConvertedModelTest"]
    assert "test_AvgPool1d_cpu" in pytorch and "test_MaxPool2d_stride_padding_dilation_cpu" in pytorch


def test_backend_reports_cpu_only():
    assert dnnpool_backend.supports_device("CPU")
    assert not dnnpool_backend.supports_device("CUDA")
