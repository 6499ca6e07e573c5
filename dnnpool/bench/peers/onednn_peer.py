"""oneDNN's own pooling primitive (the library dnnpool's semantics come from), via ctypes."""
import numpy as np

from .. import shapes
from .base import NotSupported, Prepared

NAME = "onednn"


def version():
    from . import onednn
    return onednn.library_version()


def prepare(variant, src):
    from . import onednn
    case = variant.case
    if case.indices:
        raise NotSupported("oneDNN pooling returns a workspace, not indices")
    if case.quantized:
        params = shapes.QUANT_PARAMS
        # With equal scales and zero points, excluding padding, the quantized average is the
        # rounded average of the raw u8 values: exactly oneDNN's u8 avg_exclude_padding.
        if not case.exclude_pad or params["src_scale"] != params["dst_scale"] or (
                params["src_zero_point"] != params["dst_zero_point"]):
            raise NotSupported("oneDNN u8 pooling has no scales/zero points")
    algorithm = "max" if case.kind == "MaxPool" else case.avg_algorithm
    try:
        primitive = onednn.OneDNNPooling(
            algorithm, variant.src_shape, variant.dst_shape, src.dtype, case.kernel,
            case.strides, case.pads_begin, case.pads_end, case.dilation, variant.layout,
            num_threads=variant.threads)
    except onednn.OneDNNError as error:
        if error.status == "unimplemented":
            raise NotSupported(f"oneDNN {onednn.library_version()} has no {variant.dtype} "
                               f"{variant.layout} pooling on this CPU") from None
        raise NotSupported(str(error)) from None
    dst = np.empty(variant.dst_shape, src.dtype)
    primitive.bind(src, dst)
    library = onednn.load_library()
    threads_before = library.get_num_threads()

    def close():
        primitive.close()
        library.set_num_threads(threads_before)  # activate() changed the process-wide default

    return Prepared(run=primitive.run, result=lambda: dst, activate=primitive.activate,
                    implementation=primitive.implementation, close=close)
