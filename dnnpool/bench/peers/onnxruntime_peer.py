"""ONNX Runtime (CPU execution provider), through IOBinding on preallocated arrays."""
import numpy as np

from .base import NotSupported, Prepared
from .onnx_model import build_model

NAME = "onnxruntime"


def version():
    import onnxruntime
    return onnxruntime.__version__


def _ort_value(ort, array):
    """Share the numpy buffer; bfloat16 goes through its uint16 bits with the ONNX type named."""
    if array.dtype.name == "bfloat16":
        import onnx
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            array.view(np.uint16), onnx.TensorProto.BFLOAT16)
    return ort.OrtValue.ortvalue_from_numpy(array)


def prepare(variant, src):
    import onnxruntime as ort
    model = build_model(variant)
    options = ort.SessionOptions()
    options.intra_op_num_threads = variant.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as error:  # ORT reports a missing kernel as a generic failure
        raise NotSupported(f"no CPU kernel: {str(error).splitlines()[0][:120]}") from None
    binding = session.io_binding()
    binding.bind_ortvalue_input("x", _ort_value(ort, src))
    # The bound values share these arrays' memory: the closure keeps them alive.
    outputs = {"y": np.empty(variant.dst_shape, src.dtype)}
    if variant.case.indices:
        outputs["indices"] = np.empty(variant.dst_shape, np.int64)
    for name, array in outputs.items():
        binding.bind_ortvalue_output(name, _ort_value(ort, array))
    return Prepared(run=lambda: session.run_with_iobinding(binding), result=lambda: outputs["y"])
