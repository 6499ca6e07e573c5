"""Property-based cross-checks of the ONNX front end against ONNX Runtime: random
configurations of every pooling op and opset of spec/onnx_ops.json, and of the com.microsoft
QLinearAveragePool kernel.

Peer defects (SEMANTICS.md section 4) are kept out of the generated configurations, each
where it is avoided, with the defect named; the cases themselves are pinned by hand-computed
values in test_onnx_translate.py.
"""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

ort = pytest.importorskip("onnxruntime", reason="ONNX Runtime is the peer these tests compare with")
onnx = pytest.importorskip("onnx", reason="the ONNX front end's optional dependency")
from onnx import TensorProto, helper  # noqa: E402
from onnxruntime.capi.onnxruntime_pybind11_state import InvalidGraph as OrtInvalidGraph  # noqa: E402
from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtNotImplemented  # noqa: E402

import dnnpool as dp  # noqa: E402
import reference  # noqa: E402  (tests/reference.py: the exact pooling oracle)
from dnnpool.onnx import OnnxNodeError, run_node, translate  # noqa: E402
from dnnpool.onnx.runner import node_attributes  # noqa: E402
from dnnpool.onnx._specdata import onnx_ops  # noqa: E402

OPS = onnx_ops()["ops"]
NUMPY = {name: np.dtype(ml_dtypes.bfloat16) if info["numpy"] == "bfloat16" else np.dtype(info["numpy"])
         for name, info in onnx_ops()["dtypes"].items()}
# Relative tolerance of a floating average: summation order differs between the engines; a
# result rounded to a narrow type may then land one unit in the last place apart.
AVG_RTOL = {"float": 1e-5, "double": 1e-5, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
ORT_OPTIONS = ort.SessionOptions()
ORT_OPTIONS.log_severity_level = 3


def versions(op_type):
    return [v["since_version"] for v in OPS[op_type]["versions"]]


def version_entry(op_type, since):
    return next(v for v in OPS[op_type]["versions"] if v["since_version"] == since)


def node_and_model(op_type, attrs, x_dtype, opset, n_outputs=1, domain="", extra_inputs=()):
    """A one-node model with input X (and scalar extra inputs), for ORT; the NodeProto for us."""
    inputs = [helper.make_tensor_value_info("X", helper.np_dtype_to_tensor_dtype(x_dtype), None)]
    for name, value in extra_inputs:
        inputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape))
    outputs = [helper.make_tensor_value_info("Y", helper.np_dtype_to_tensor_dtype(x_dtype), None),
               helper.make_tensor_value_info("Indices", TensorProto.INT64, None)][:n_outputs]
    node = helper.make_node(op_type, [i.name for i in inputs], [o.name for o in outputs],
                            domain=domain, name="pool", **attrs)
    imports = [helper.make_opsetid("", opset if not domain else 13)]
    if domain:
        imports.append(helper.make_opsetid(domain, opset))
    graph = helper.make_graph([node], "one_pool", inputs, outputs)
    return node, helper.make_model(graph, opset_imports=imports, ir_version=10)


def run_ort(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), ORT_OPTIONS,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


# ------------------------------------------------------------------ configurations

@st.composite
def pool_configs(draw, op_type, since):
    """(attrs, x, n_outputs) of a random valid node of op_type-since."""
    v = version_entry(op_type, since)
    allowed = v["attributes"]
    rank = draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(v["type_constraints"]["T"]))
    batch, channels = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    attrs = {}
    if v["rules"].get("global"):
        spatial = draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    else:
        kernel = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
        attrs["kernel_shape"] = kernel

        def optional(name, strategy):
            """Drawn value, set as attribute or (sometimes) left out to mean its default."""
            if name not in allowed:
                return None
            value = draw(strategy)
            if draw(st.booleans()) or value != default(allowed[name], rank):
                attrs[name] = value
            return value

        auto_pad = optional("auto_pad", st.sampled_from(
            ["NOTSET"] * 4 + ["SAME_UPPER", "SAME_LOWER", "VALID"])) or "NOTSET"
        same = auto_pad.startswith("SAME")
        # ONNX Runtime defect (SEMANTICS 4): SAME with dilations uses the undilated kernel.
        dilations = optional("dilations", st.lists(
            st.integers(1, 1 if same else 3), min_size=rank, max_size=rank)) or [1] * rank
        strides = optional("strides", st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
        if same and strides:
            # ONNX Runtime defect (SEMANTICS 4): MaxPool SAME with k < s fails with negative
            # padding.  AveragePool shares ORT's padding code and fails the same way.
            attrs["strides"] = [min(s, k) for s, k in zip(strides, kernel)]
        # ONNX Runtime requires pads < kernel.
        pads = (optional("pads", st.tuples(*[st.integers(0, k - 1) for k in kernel * 2]).map(list))
                if auto_pad == "NOTSET" else None) or [0] * (2 * rank)
        for name in ("ceil_mode", "count_include_pad", "storage_order"):
            optional(name, st.integers(0, 1))
        spatial = []
        for i, k in enumerate(kernel):
            extent = (k - 1) * dilations[i] + 1
            smallest = 1 if same else max(1, extent - pads[i] - pads[rank + i])
            spatial.append(draw(st.integers(smallest, smallest + 6)))
    n_outputs = 2 if len(v["outputs"]) == 2 and draw(st.booleans()) else 1
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    shape = (batch, channels, *spatial)
    if NUMPY[dtype].kind in "iu":
        info = np.iinfo(NUMPY[dtype])
        x = rng.integers(info.min, info.max, shape, endpoint=True).astype(NUMPY[dtype])
    else:
        x = rng.standard_normal(shape).astype(np.float32).astype(NUMPY[dtype])
    return attrs, x, n_outputs


def default(info, rank):
    if "default_each" in info:
        return [info["default_each"]] * (rank * (2 if info["length"] == "2*rank" else 1))
    return info.get("default")


def ort_reference(op_type, since, attrs, x, n_outputs):
    """ONNX Runtime's outputs; computed in float32 on the widened input when ORT has no kernel
    for the dtype (dnnpool accumulates in f32 and rounds once, so the results compare)."""
    # ONNX Runtime has no AveragePool-1 kernel; AveragePool-7 with count_include_pad=0 is the
    # same operator (padding never counted).
    opset = 7 if (op_type, since) == ("AveragePool", 1) else since
    try:
        _, model = node_and_model(op_type, attrs, x.dtype, opset, n_outputs)
        return run_ort(model, {"X": x})
    except (OrtNotImplemented, OrtInvalidGraph):
        # No kernel for the dtype; at opset 1 ORT's own f16 -> f32 cast insertion builds an
        # invalid Cast-1 (InvalidGraph) instead.
        assert x.dtype.kind not in "iu", "integer inputs have ORT kernels at the opsets that allow them"
        _, model = node_and_model(op_type, attrs, np.dtype(np.float32), max(opset, 7), n_outputs)
        outs = run_ort(model, {"X": x.astype(np.float32)})
        return [outs[0].astype(x.dtype)] + outs[1:]


def check_against_ort(op_type, since, config):
    attrs, x, n_outputs = config
    note(f"{op_type}-{since} attrs={attrs} x={x.shape} {x.dtype} outputs={n_outputs}")
    node, _ = node_and_model(op_type, attrs, x.dtype, since, n_outputs)
    expected = ort_reference(op_type, since, attrs, x, n_outputs)
    try:
        got = run_node(node, [x], opset=since)
    except OnnxNodeError as e:
        # dnnpool refuses an average over a window without any element to average
        # (SEMANTICS section 1); ONNX Runtime outputs 0 or NaN there: nothing to compare.
        assert "covers no input element" in str(e), e
        return
    assert len(got) == len(expected)
    assert got[0].shape == expected[0].shape and got[0].dtype == expected[0].dtype
    if OPS[op_type]["kind"] == "AvgPool":
        np.testing.assert_allclose(got[0].astype(np.float64), expected[0].astype(np.float64),
                                   rtol=AVG_RTOL[node_dtype(x)], atol=1e-6)
        return
    empty = empty_windows(op_type, since, attrs, x)
    # A dilated window wholly in the padding: dnnpool gives the lowest finite value and index
    # -1 (SEMANTICS: the oneDNN Graph rule); ONNX Runtime gives -inf in f16 and an index of -2.
    lowest = (np.iinfo(x.dtype) if x.dtype.kind in "iu" else ml_dtypes.finfo(x.dtype)).min
    assert np.all(got[0][empty] == lowest)
    np.testing.assert_array_equal(got[0][~empty], expected[0][~empty])
    if n_outputs == 2:
        assert got[1].dtype == np.int64
        assert np.all(got[1][empty] == -1)
        np.testing.assert_array_equal(got[1][~empty], expected[1][~empty])


def empty_windows(op_type, since, attrs, x):
    """Where a MaxPool window covers no input element (dnnpool's index -1)."""
    desc = translate(op_type, attrs, x.shape, x.dtype, since)
    return dp.Pooling(desc).execute(x, with_indices=True)[1] == -1


def node_dtype(x):
    return next(name for name, dt in NUMPY.items() if dt == x.dtype)


CASES = [(op, since) for op in ("AveragePool", "MaxPool", "GlobalAveragePool", "GlobalMaxPool")
         for since in versions(op)]


@pytest.mark.parametrize("op_type,since", CASES, ids=[f"{op}-{v}" for op, v in CASES])
@given(data=st.data())
def test_pooling_matches_onnxruntime(op_type, since, data):
    check_against_ort(op_type, since, data.draw(pool_configs(op_type, since)))


# ------------------------------------------------------------------ QLinearAveragePool

@st.composite
def qlinear_configs(draw):
    attrs, x, _ = draw(pool_configs("QLinearAveragePool", 1))
    dtype = x.dtype
    info = np.iinfo(dtype)
    zero_points = [np.array(draw(st.integers(int(info.min), int(info.max))), dtype) for _ in "xy"]
    x_scale = draw(st.floats(2.0 ** -8, 4.0, width=32))
    # ONNX Runtime refuses x_scale / y_scale >= 256 when the window is the whole input (its
    # fixed-point global-average path: "parameter out of computation range").
    y_scale = draw(st.floats(max(2.0 ** -8, x_scale / 128), 4.0, width=32))
    scales = [np.array(x_scale, np.float32), np.array(y_scale, np.float32)]
    extra = [("x_scale", scales[0]), ("x_zero_point", zero_points[0]),
             ("y_scale", scales[1]), ("y_zero_point", zero_points[1])]
    return attrs, x, extra


@given(config=qlinear_configs(), channels_last=st.integers(0, 1))
def test_qlinear_average_pool_matches_onnxruntime(config, channels_last):
    attrs, x, extra = config
    attrs = dict(attrs, channels_last=channels_last)
    if channels_last:
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    note(f"attrs={attrs} x={x.shape} {x.dtype} extra={extra}")
    node, model = node_and_model("QLinearAveragePool", attrs, x.dtype, 1, domain="com.microsoft",
                                 extra_inputs=extra)
    feeds = dict(extra, X=x)
    (expected,) = run_ort(model, feeds)
    try:
        (got,) = run_node(node, feeds, opset=1)
    except OnnxNodeError as e:
        assert "covers no input element" in str(e), e     # as for the float ops above
        return
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert_equal_but_near_ties(got, expected, node, x, feeds)


def assert_equal_but_near_ties(got, expected, node, x, feeds):
    """got == expected, except by one step where the exact value is within f32 rounding of a
    .5 tie.  Both engines compute round_half_even(avg(x_scale*(x - x_zp)) / y_scale + y_zp)
    in f32, but in different orders (ONNX Runtime dequantizes each element, sums the floats
    and divides by the count); next to a tie those f32 roundings can pick different sides."""
    diff = np.abs(got.astype(np.int32) - expected.astype(np.int32))
    assert diff.max(initial=0) <= 1, (got, expected)
    if not diff.any():
        return
    desc = translate("QLinearAveragePool", node_attributes(node), x.shape, x.dtype, 1,
                     "com.microsoft", quant_inputs={k: v for k, v in feeds.items() if k != "X"})
    exact = reference.unrounded_average(x, desc.to_dict())[diff == 1]
    ratio = desc.src_scale / desc.dst_scale
    taps = int(np.prod(desc.kernel))
    # f32 error bound: a few roundings per tap, on terms of magnitude up to ratio * 255.
    tolerance = (taps + 3) * 2.0 ** -23 * (np.abs(exact) + ratio * 255)
    distance = np.abs(exact - np.floor(exact) - 0.5)
    assert np.all(distance <= tolerance), (exact, distance, tolerance)
