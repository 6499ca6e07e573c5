"""dnnpool.onnx.translate: how each ONNX rule fills the descriptor, hand-computed values for the
cases no peer gets right (SEMANTICS.md section 4), and the errors.  translate() itself needs no
onnx package; the run_node cases do."""
import numpy as np
import pytest

import dnnpool as dp
from dnnpool.onnx import OnnxNodeError, OnnxNodeTypeError, translate

X5 = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
X6 = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)


def pooled(op_type, attrs, x, opset=22, **kw):
    desc = translate(op_type, attrs, x.shape, x.dtype, opset, **kw)
    return dp.Pooling(desc).execute(x)


# ------------------------------------------------------------------ descriptor fields

def fields(op_type, attrs, shape=(1, 2, 7, 7), dtype="float", opset=22, **kw):
    return translate(op_type, attrs, shape, dtype, opset, **kw).to_dict()


def test_layout_and_pads_split():
    d = fields("MaxPool", {"kernel_shape": [3, 2], "pads": [1, 0, 2, 1], "strides": [2, 1]})
    assert d["data_format"] == "NCX" and d["src_shape"] == [1, 2, 7, 7]
    assert (d["pads_begin"], d["pads_end"]) == ([1, 0], [2, 1])
    assert (d["kernel"], d["strides"], d["dilations"]) == ([3, 2], [2, 1], [1, 1])
    assert d["rounding_type"] == "floor" and d["drop_end_pad_windows"] is False


def test_averagepool_1_never_counts_padding():
    d = fields("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, opset=6)
    assert d["exclude_pad"] is True


@pytest.mark.parametrize("opset", [7, 10, 11, 19, 22])
def test_count_include_pad_selects_the_padded_extent_divisor(opset):
    counted = fields("AveragePool", {"kernel_shape": [3, 3], "count_include_pad": 1}, opset=opset)
    assert counted["exclude_pad"] is False and counted["include_pad_divisor"] == "padded_extent"
    default = fields("AveragePool", {"kernel_shape": [3, 3]}, opset=opset)
    assert default["exclude_pad"] is True


@pytest.mark.parametrize("op_type", ["AveragePool", "MaxPool"])
def test_ceil_mode_is_ceil_rounding_with_the_drop_rule(op_type):
    d = fields(op_type, {"kernel_shape": [3, 3], "ceil_mode": 1}, opset=10)
    assert d["rounding_type"] == "ceil" and d["drop_end_pad_windows"] is True


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_same_ignores_ceil_mode(auto_pad):
    d = fields("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": auto_pad,
                           "ceil_mode": 1})
    assert d["auto_pad"] == auto_pad.lower() and d["rounding_type"] == "floor"
    assert d["drop_end_pad_windows"] is False


def test_valid_keeps_ceil_and_the_drop_rule():
    d = fields("AveragePool", {"kernel_shape": [2, 2], "auto_pad": "VALID", "ceil_mode": 1})
    assert (d["auto_pad"], d["rounding_type"], d["drop_end_pad_windows"]) == ("valid", "ceil", True)
    assert d["pads_begin"] == d["pads_end"] == [0, 0]


def test_storage_order_is_the_index_order():
    assert fields("MaxPool", {"kernel_shape": [2, 2], "storage_order": 1})["index_order"] == "column_major"
    assert fields("MaxPool", {"kernel_shape": [2, 2]})["index_order"] == "row_major"


def test_dilations_from_averagepool_19():
    assert fields("AveragePool", {"kernel_shape": [2, 2], "dilations": [2, 3]}, opset=19)["dilations"] == [2, 3]


@pytest.mark.parametrize("op_type,kind", [("GlobalAveragePool", "AvgPool"), ("GlobalMaxPool", "MaxPool")])
def test_global_kernel_is_the_spatial_extent(op_type, kind):
    d = fields(op_type, {}, shape=(2, 3, 4, 5, 6))
    assert (d["kind"], d["kernel"], d["pads_begin"], d["strides"]) == (kind, [4, 5, 6], [0, 0, 0], [1, 1, 1])


def test_qlinear_average_pool_fields():
    quant = {"x_scale": np.float32(0.5), "x_zero_point": np.uint8(3), "y_scale": np.array([0.25], np.float32)}
    d = fields("QLinearAveragePool", {"kernel_shape": [2, 2], "channels_last": 1, "count_include_pad": 1},
               shape=(1, 7, 7, 3), dtype="uint8", opset=1, domain="com.microsoft", quant_inputs=quant)
    assert (d["data_format"], d["dtype"], d["exclude_pad"], d["include_pad_divisor"]) == \
        ("NXC", "u8", False, "kernel")
    assert (d["src_scale"], d["src_zero_point"], d["dst_scale"], d["dst_zero_point"]) == (0.5, 3, 0.25, 0)


def test_version_is_the_largest_since_version_not_above_the_opset():
    # opset 9 means AveragePool-7: no ceil_mode yet
    with pytest.raises(OnnxNodeError, match=r"AveragePool-7 \(opset 9\).*'ceil_mode'.*from AveragePool-10 on"):
        translate("AveragePool", {"kernel_shape": [2], "ceil_mode": 1}, (1, 1, 4), "float", 9)
    assert translate("AveragePool", {"kernel_shape": [2], "ceil_mode": 1}, (1, 1, 4), "float", 18)


def test_dtype_spellings_and_domain_alias_give_one_descriptor():
    import ml_dtypes
    shape, attrs = (1, 1, 4), {"kernel_shape": [2]}
    same = {translate("MaxPool", attrs, shape, dt) for dt in ("float", "f32", np.float32, np.dtype("float32"), 1)}
    assert len(same) == 1
    assert translate("MaxPool", attrs, shape, "float", domain="ai.onnx") in same
    assert translate("MaxPool", attrs, shape, ml_dtypes.bfloat16).dtype == "bf16"


# ------------------------------------------------------------------ hand-computed values

def test_averagepool_1_against_7_with_padding():
    attrs = {"kernel_shape": [3], "pads": [1, 1]}
    x = X5[..., :3]                                       # [1, 2, 3]
    np.testing.assert_array_equal(pooled("AveragePool", attrs, x, opset=1), [[[1.5, 2, 2.5]]])
    counted = pooled("AveragePool", dict(attrs, count_include_pad=1), x, opset=7)
    np.testing.assert_allclose(counted, [[[1, 2, 5 / 3]]], rtol=1e-7)


def test_ceil_mode_windows_do_not_shift():
    # onnx's reference evaluator gives [1.5, 4] here (SEMANTICS 4)
    attrs = {"kernel_shape": [3], "strides": [4], "ceil_mode": 1}
    np.testing.assert_array_equal(pooled("AveragePool", attrs, X5, opset=10), [[[2, 5]]])


def test_ceil_mode_drops_a_window_starting_in_the_end_padding():
    attrs = {"kernel_shape": [2], "strides": [3], "pads": [0, 1], "ceil_mode": 1}
    np.testing.assert_array_equal(pooled("MaxPool", attrs, X5, opset=10), [[[2, 5]]])


def test_padded_extent_divisor_against_the_full_kernel_of_qlinear():
    # last window: input 6, the end pad, then one tap beyond the padded extent
    attrs = {"kernel_shape": [3], "strides": [2], "pads": [1, 1], "ceil_mode": 1, "count_include_pad": 1}
    np.testing.assert_array_equal(pooled("AveragePool", attrs, X6, opset=19), [[[1, 3, 5, 3]]])
    np.testing.assert_array_equal(pooled("AveragePool", dict(attrs, count_include_pad=0), X6, 19),
                                  [[[1.5, 3, 5, 6]]])
    quant = {"x_scale": 1.0, "y_scale": 1.0}
    got = pooled("QLinearAveragePool", attrs, X6.astype(np.uint8), 1, domain="com.microsoft", quant_inputs=quant)
    np.testing.assert_array_equal(got, [[[1, 3, 5, 2]]])


@pytest.mark.parametrize("op_type,counted,want", [
    ("MaxPool", 0, [2, 3, 4, 5, 4]),
    ("AveragePool", 0, [2, 2, 3, 4, 4]),
    ("AveragePool", 1, [1, 2, 3, 4, 2]),
])
def test_same_with_dilations_uses_the_dilated_kernel(op_type, counted, want):
    # ONNX Runtime uses the undilated kernel here (SEMANTICS 4): dilated extent 3, pads 1 and 1
    attrs = {"kernel_shape": [2], "dilations": [2], "auto_pad": "SAME_UPPER"}
    if op_type == "AveragePool":
        attrs["count_include_pad"] = counted
    np.testing.assert_array_equal(pooled(op_type, attrs, X5, opset=19), [[want]])


@pytest.mark.parametrize("auto_pad,want", [("SAME_UPPER", [2, 3, 4, 5, 5]), ("SAME_LOWER", [1, 2, 3, 4, 5])])
def test_same_puts_the_odd_pad_where_it_says(auto_pad, want):
    np.testing.assert_array_equal(pooled("MaxPool", {"kernel_shape": [2], "auto_pad": auto_pad}, X5), [[want]])


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("ceil_mode", [0, 1])
def test_same_with_kernel_smaller_than_stride(op_type, ceil_mode):
    # ONNX Runtime fails with negative padding (SEMANTICS 4); ceil(n / s) outputs, no padding
    attrs = {"kernel_shape": [1], "strides": [2], "auto_pad": "SAME_UPPER", "ceil_mode": ceil_mode}
    np.testing.assert_array_equal(pooled(op_type, attrs, X5), [[[1, 3, 5]]])
    attrs["strides"] = [4]
    np.testing.assert_array_equal(pooled(op_type, attrs, X6), [[[1, 5]]])


# ------------------------------------------------------------------ errors

ERRORS = [
    # (op_type, attrs, shape, dtype, opset, exception, pattern)
    ("AveragePool", {"kernel_shape": [2], "dilations": [1]}, (1, 1, 4), "float", 18, OnnxNodeError,
     r"AveragePool-11 \(opset 18\): attribute 'dilations' is not part of AveragePool-11; "
     r"it exists from AveragePool-19 on \(rule: attributes allowed by the opset\)"),
    ("MaxPool", {"kernel_shape": [2], "storage_order": 1}, (1, 1, 4), "float", 7, OnnxNodeError,
     r"MaxPool-1 \(opset 7\): attribute 'storage_order'.*from MaxPool-8 on"),
    ("AveragePool", {"kernel_shape": [2], "count_include_pad": 1}, (1, 1, 4), "float", 6, OnnxNodeError,
     r"AveragePool-1 \(opset 6\): attribute 'count_include_pad'.*from AveragePool-7 on"),
    ("MaxPool", {"kernel_shape": [2], "alpha": 1}, (1, 1, 4), "float", 22, OnnxNodeError,
     r"attribute 'alpha' is unknown: MaxPool has no such attribute in any opset"),
    ("MaxPool", {"kernel_shape": [2], "auto_pad": "SAME_UPPER", "pads": [0, 1]}, (1, 1, 4), "float", 22,
     OnnxNodeError, r"'auto_pad' = 'SAME_UPPER' together with non-zero 'pads' = \[0, 1\]"),
    ("MaxPool", {"kernel_shape": [2, 2], "pads": [1, 1]}, (1, 1, 4, 4), "float", 22, OnnxNodeError,
     r"attribute 'pads' = \[1, 1\]: needs 2\*rank = 4 values for 2 spatial axes"),
    ("MaxPool", {"kernel_shape": [2]}, (1, 1, 4, 4), "float", 22, OnnxNodeError,
     r"attribute 'kernel_shape' = \[2\]: needs rank = 2 values"),
    ("AveragePool", {"strides": [1]}, (1, 1, 4), "float", 22, OnnxNodeError,
     r"attribute 'kernel_shape' is required by AveragePool-22 and missing"),
    ("MaxPool", {"kernel_shape": [2]}, (1, 1, 4), "uint8", 11, OnnxNodeTypeError,
     r"MaxPool-11 \(opset 11\): input dtype 'uint8' is not allowed by MaxPool-11 \(allowed: "
     r"float16, float, double\); uint8 is allowed from MaxPool-12 on"),
    ("AveragePool", {"kernel_shape": [2]}, (1, 1, 4), "bfloat16", 19, OnnxNodeTypeError,
     r"'bfloat16' is not allowed by AveragePool-19.*from AveragePool-22 on"),
    ("AveragePool", {"kernel_shape": [2]}, (1, 1, 4), np.int8, 22, OnnxNodeTypeError,
     r"not allowed by AveragePool-22 \(allowed: bfloat16, float16, float, double\)$"),
    ("MaxPool", {"kernel_shape": [2]}, (1, 1, 4), np.int32, 22, OnnxNodeTypeError, r"int32.*not allowed"),
    ("MaxPool", {"kernel_shape": 2}, (1, 1, 4), "float", 22, OnnxNodeTypeError,
     r"attribute 'kernel_shape' = 2: must be of ONNX type INTS"),
    ("MaxPool", {"kernel_shape": [2], "auto_pad": 1}, (1, 1, 4), "float", 22, OnnxNodeTypeError,
     r"'auto_pad' = 1: must be of ONNX type STRING"),
    ("MaxPool", {"kernel_shape": [2], "auto_pad": "SAME"}, (1, 1, 4), "float", 22, OnnxNodeError,
     r"'auto_pad' = 'SAME': allowed values are \['NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'\]"),
    ("MaxPool", {"kernel_shape": [2], "ceil_mode": 2}, (1, 1, 4), "float", 22, OnnxNodeError,
     r"'ceil_mode' = 2: allowed values are \[0, 1\]"),
    ("MaxPool", {"kernel_shape": [0]}, (1, 1, 4), "float", 22, OnnxNodeError,
     r"'kernel_shape' = \[0\]: every value must be >= 1"),
    ("MaxPool", {"kernel_shape": [2], "pads": [-1, 0]}, (1, 1, 4), "float", 22, OnnxNodeError,
     r"'pads' = \[-1, 0\]: every value must be >= 0"),
    ("MaxPool", {"kernel_shape": [2]}, (1, 4), "float", 22, OnnxNodeError,
     r"input rank 0: needs N, C and at least one spatial axis"),
    ("MaxPool", {"kernel_shape": [2]}, (1, 1, 4), "float", 0, OnnxNodeError,
     r"opset 0 predates the op \(first version 1\)"),
    ("LpPool", {"kernel_shape": [2]}, (1, 1, 4), "float", 22, OnnxNodeError,
     r"LpPool.*op is not a pooling op dnnpool translates"),
    ("QLinearAveragePool", {"kernel_shape": [2]}, (1, 1, 4), "uint8", 1, OnnxNodeError,
     r"op is not a pooling op dnnpool translates"),      # wrong domain: "" instead of com.microsoft
    # the core's own rule, reported with the node's context
    ("MaxPool", {"kernel_shape": [5]}, (1, 1, 4), "float", 22, OnnxNodeError,
     r"^ONNX MaxPool-22 \(opset 22\): kernel: value 5 .*padded input"),
]


@pytest.mark.parametrize("op_type,attrs,shape,dtype,opset,exc,pattern", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_error_names_op_opset_attribute_and_rule(op_type, attrs, shape, dtype, opset, exc, pattern):
    with pytest.raises(exc, match=pattern):
        translate(op_type, attrs, shape, dtype, opset)


def test_errors_are_value_and_type_errors_naming_the_node():
    with pytest.raises(ValueError, match=r"^ONNX node 'pool7' MaxPool-12 \(opset 13\): "):
        translate("MaxPool", {"kernel_shape": [2], "foo": 1}, (1, 1, 4), "float", 13, node_name="pool7")
    with pytest.raises(TypeError, match=r"^ONNX node 'pool7' "):
        translate("MaxPool", {"kernel_shape": [2]}, (1, 1, 4), "int64", 13, node_name="pool7")


QUANT_ERRORS = [
    ({"y_scale": 0.5}, OnnxNodeError, r"input 'x_scale' is required and missing"),
    ({"x_scale": np.ones(2, np.float32), "y_scale": 0.5}, OnnxNodeError,
     r"input 'x_scale' has shape \(2,\): must be a scalar"),
    ({"x_scale": 0.5, "y_scale": np.ones((1, 1), np.float32)}, OnnxNodeError, r"input 'y_scale' has shape \(1, 1\)"),
    ({"x_scale": np.float64(0.5), "y_scale": 0.5}, OnnxNodeTypeError,
     r"input 'x_scale' has type float64: must be tensor\(float\)"),
    ({"x_scale": 0.5, "y_scale": 0.5, "x_zero_point": np.int8(1)}, OnnxNodeTypeError,
     r"input 'x_zero_point' has type int8: must be tensor\(uint8\)"),
    ({"x_scale": 0.5, "y_scale": 0.5, "y_zero_point": 300}, OnnxNodeError,
     r"input 'y_zero_point' = 300: out of range of uint8 \[0, 255\]"),
    ({"x_scale": 0.5, "y_scale": 0.0}, OnnxNodeError, r"input 'y_scale' = 0.0: a scale must be finite and > 0"),
    ({"x_scale": float("nan"), "y_scale": 1.0}, OnnxNodeError, r"input 'x_scale' = nan"),
    ({"x_scale": 0.5, "y_scale": 0.5, "w_scale": 1.0}, OnnxNodeError, r"unknown quantization inputs \['w_scale'\]"),
]


@pytest.mark.parametrize("quant,exc,pattern", QUANT_ERRORS)
def test_quantization_parameter_errors(quant, exc, pattern):
    with pytest.raises(exc, match=r"com.microsoft::QLinearAveragePool-1 \(opset 1\): " + pattern):
        translate("QLinearAveragePool", {"kernel_shape": [2]}, (1, 1, 4), "uint8", 1, "com.microsoft",
                  quant_inputs=quant)


def test_quantization_inputs_on_a_float_op_are_refused():
    with pytest.raises(OnnxNodeError, match="not quantized"):
        translate("AveragePool", {"kernel_shape": [2]}, (1, 1, 4), "float", quant_inputs={"x_scale": 1.0})


def test_node_level_errors_name_the_node():
    onnx = pytest.importorskip("onnx", reason="run_node takes an onnx.NodeProto")
    from dnnpool.onnx import run_node
    node = onnx.helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[2])
    with pytest.raises(OnnxNodeError, match=r"node 'mp' MaxPool-1 \(opset 7\): node has 2 outputs; "
                                            r"MaxPool-1 has outputs \['Y'\]"):
        run_node(node, [X5], opset=7)
    q = onnx.helper.make_node("QLinearAveragePool", ["x", "s"], ["y"], name="q", domain="com.microsoft",
                              kernel_shape=[2])
    with pytest.raises(OnnxNodeError, match=r"node 'q' .*input 'y_scale' is required and missing"):
        run_node(q, [X5.astype(np.uint8), np.float32(1)], opset=1)
