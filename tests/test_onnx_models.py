"""Nodes and whole models: run_node, run_model, the backend and the graph translation report.
Pooling must run on dnnpool (counted), everything else on onnx's reference evaluator; results
are checked against ONNX Runtime."""
import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the ONNX front end's optional dependency")
ort = pytest.importorskip("onnxruntime", reason="ONNX Runtime is the peer these tests compare with")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import dnnpool.onnx.backend as backend  # noqa: E402
import dnnpool.onnx.runner as runner_module  # noqa: E402
from dnnpool.onnx import ModelRunner, OnnxNodeError, model_report, run_model, run_node  # noqa: E402
from dnnpool.onnx.report import format_report, report_json  # noqa: E402

RNG = np.random.default_rng(7)


def make_model(nodes, inputs, outputs, initializers=(), opset=13, extra_opsets=(), functions=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=imports, ir_version=9, functions=list(functions))
    return model


def tensor(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def conv_pool_model(batch="N"):
    """Conv -> AveragePool (ceil, padding counted) -> Relu -> MaxPool with column-major Indices."""
    weight = numpy_helper.from_array(RNG.standard_normal((4, 3, 3, 3)).astype(np.float32), "W")
    nodes = [
        helper.make_node("Conv", ["X", "W"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("AveragePool", ["c"], ["a"], name="avg", kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["Y", "I"], name="max", kernel_shape=[2, 2], strides=[2, 2],
                         storage_order=1),
    ]
    return make_model(nodes, [tensor("X", TensorProto.FLOAT, [batch, 3, 10, 10])],
                      [tensor("Y", TensorProto.FLOAT, [batch, 4, 3, 3]), tensor("I", TensorProto.INT64, [batch, 4, 3, 3])],
                      [weight])


def ort_run(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.fixture
def pool_calls(monkeypatch):
    """Counts the pooling nodes run on dnnpool and the primitives built."""
    counts = {"runs": [], "built": 0}
    run, pooling = runner_module.PoolingNode.run, runner_module.Pooling

    def counting_run(self, inputs):
        counts["runs"].append(self.op_type)
        return run(self, inputs)

    def counting_pooling(desc):
        counts["built"] += 1
        return pooling(desc)

    monkeypatch.setattr(runner_module.PoolingNode, "run", counting_run)
    monkeypatch.setattr(runner_module, "Pooling", counting_pooling)
    return counts


def test_model_matches_onnxruntime_with_pooling_on_dnnpool(pool_calls, tmp_path):
    model = conv_pool_model()
    x = RNG.standard_normal((2, 3, 10, 10)).astype(np.float32)
    expected = ort_run(model, {"X": x})
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    for got in (run_model(model, [x]), run_model(str(path), {"X": x})):
        assert [g.shape for g in got] == [e.shape for e in expected] == [(2, 4, 3, 3)] * 2
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(got[1], expected[1])
    assert pool_calls["runs"] == ["AveragePool", "MaxPool"] * 2


def test_primitives_are_built_once_per_node_and_shape(pool_calls):
    runner = ModelRunner(conv_pool_model())
    x2, x1 = (RNG.standard_normal((n, 3, 10, 10)).astype(np.float32) for n in (2, 1))
    runner.run([x2])
    runner.run([x2])
    assert pool_calls["built"] == 2
    runner.run([x1])                                  # a new batch size: new primitives
    assert pool_calls["built"] == 4
    assert {p.op_type: (p.calls, len(p.primitives)) for p in runner.pooling_nodes} == \
        {"AveragePool": (3, 2), "MaxPool": (3, 2)}


def test_run_node_caches_and_accepts_lists_and_dicts(pool_calls):
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2], strides=[2])
    x = np.array([[[3, 1, 4, 1, 5, 9]]], np.float32)
    y, i = run_node(node, [x], opset=12)
    np.testing.assert_array_equal(y, [[[3, 4, 9]]])
    np.testing.assert_array_equal(i, [[[0, 2, 5]]])
    assert i.dtype == np.int64
    y2, _ = run_node(node, {"x": x}, opset=12)
    np.testing.assert_array_equal(y2, y)
    assert pool_calls["built"] == 1


def test_run_node_sends_other_ops_to_the_reference_evaluator():
    node = helper.make_node("Relu", ["x"], ["y"])
    (y,) = run_node(node, [np.array([-1.0, 2.0], np.float32)], opset=14)
    np.testing.assert_array_equal(y, [0, 2])


def test_averagepool_1_model_runs(pool_calls):
    # ONNX Runtime has no AveragePool-1 kernel: padding never counted
    nodes = [helper.make_node("AveragePool", ["X"], ["Y"], kernel_shape=[3], pads=[1, 1])]
    model = make_model(nodes, [tensor("X", TensorProto.FLOAT, [1, 1, 3])], [tensor("Y", TensorProto.FLOAT, None)],
                       opset=6)
    (y,) = run_model(model, [np.array([[[1, 2, 3]]], np.float32)])
    np.testing.assert_array_equal(y, [[[1.5, 2, 2.5]]])
    assert pool_calls["runs"] == ["AveragePool"]


def test_qlinear_average_pool_model_with_constant_scales_matches_onnxruntime(pool_calls):
    inits = [numpy_helper.from_array(np.array(v, dt), n) for n, v, dt in
             [("xs", 0.05, np.float32), ("xz", 128, np.uint8), ("ys", 0.03, np.float32), ("yz", 120, np.uint8)]]
    nodes = [helper.make_node("QLinearAveragePool", ["X", "xs", "xz", "ys", "yz"], ["Y"], domain="com.microsoft",
                              kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], channels_last=1)]
    model = make_model(nodes, [tensor("X", TensorProto.UINT8, [1, 9, 9, 8])], [tensor("Y", TensorProto.UINT8, None)],
                       inits, extra_opsets=[("com.microsoft", 1)])
    x = RNG.integers(0, 256, (1, 9, 9, 8)).astype(np.uint8)
    (got,) = run_model(model, [x])
    (expected,) = ort_run(model, {"X": x})
    assert got.shape == expected.shape == (1, 5, 5, 8)
    assert np.abs(got.astype(int) - expected.astype(int)).max() <= 1   # see test_onnx_onnxruntime
    assert pool_calls["runs"] == ["QLinearAveragePool"]


def test_pooling_inside_functions_and_subgraphs_runs_on_dnnpool(pool_calls):
    pool = helper.make_node("MaxPool", ["a"], ["b"], kernel_shape=[2])
    function = helper.make_function("local", "Pool2", ["a"], ["b"], [pool], [helper.make_opsetid("", 13)])
    branch = helper.make_graph([helper.make_node("GlobalAveragePool", ["X"], ["g"])], "then", [],
                               [tensor("g", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Pool2", ["X"], ["P"], domain="local"),
             helper.make_node("Constant", [], ["cond"], value=numpy_helper.from_array(np.array(True))),
             helper.make_node("If", ["cond"], ["G"], then_branch=branch, else_branch=branch)]
    model = make_model(nodes, [tensor("X", TensorProto.FLOAT, [1, 1, 4])],
                       [tensor("P", TensorProto.FLOAT, None), tensor("G", TensorProto.FLOAT, None)],
                       extra_opsets=[("local", 1)], functions=[function])
    p, g = run_model(model, [np.array([[[1, 5, 2, 4]]], np.float32)])
    np.testing.assert_array_equal(p, [[[5, 5, 4]]])
    np.testing.assert_array_equal(g, [[[3]]])
    assert sorted(pool_calls["runs"]) == ["GlobalAveragePool", "MaxPool"]
    # the report finds them too: the subgraphs see the outer shapes, the function does not
    report = model_report(model)
    where = {n["graph"]: (n["op_type"], n["dst_shape"]) for n in report["nodes"]}
    assert where == {"main/If.then_branch": ("GlobalAveragePool", [1, 1, 1]),
                     "main/If.else_branch": ("GlobalAveragePool", [1, 1, 1]),
                     "function local::Pool2": ("MaxPool", None)}


def test_pooling_with_attributes_from_the_calling_function(pool_calls):
    pool = helper.make_node("AveragePool", ["a"], ["b"])
    pool.attribute.append(onnx.AttributeProto(name="kernel_shape", type=onnx.AttributeProto.INTS, ref_attr_name="k"))
    function = helper.make_function("local", "Avg", ["a"], ["b"], [pool], [helper.make_opsetid("", 13)],
                                    attributes=["k"])
    nodes = [helper.make_node("Avg", ["X"], ["Y"], domain="local", k=[3]),
             helper.make_node("Avg", ["X"], ["Z"], domain="local", k=[2])]
    model = make_model(nodes, [tensor("X", TensorProto.FLOAT, [1, 1, 4])],
                       [tensor("Y", TensorProto.FLOAT, None), tensor("Z", TensorProto.FLOAT, None)],
                       extra_opsets=[("local", 1)], functions=[function])
    runner = ModelRunner(model)
    for _ in range(2):
        y, z = runner.run([np.array([[[1, 2, 3, 6]]], np.float32)])
        np.testing.assert_array_equal(y, np.array([[[2, 11 / 3]]], np.float32))
        np.testing.assert_array_equal(z, [[[1.5, 2.5, 4.5]]])
    assert pool_calls["runs"] == ["AveragePool"] * 4
    assert pool_calls["built"] == 2                    # one primitive per kernel_shape


def test_model_errors_are_the_front_ends_own():
    nodes = [helper.make_node("MaxPool", ["X"], ["Y"], name="bad_pool", kernel_shape=[2])]
    model = make_model(nodes, [tensor("X", TensorProto.INT32, [1, 1, 4])], [tensor("Y", TensorProto.INT32, None)])
    with pytest.raises(TypeError, match=r"^ONNX node 'bad_pool' MaxPool-12 \(opset 13\): input dtype"):
        run_model(model, [np.zeros((1, 1, 4), np.int32)])
    nodes = [helper.make_node("AveragePool", ["X"], ["Y"], name="p", kernel_shape=[2], dilations=[2])]
    model = make_model(nodes, [tensor("X", TensorProto.FLOAT, [1, 1, 4])], [tensor("Y", TensorProto.FLOAT, None)])
    with pytest.raises(OnnxNodeError, match=r"node 'p' AveragePool-11 \(opset 13\): attribute 'dilations'"):
        ModelRunner(model)
    with pytest.raises(ValueError, match=r"model inputs \['X'\] are missing"):
        run_model(conv_pool_model(), {"x": np.zeros((1, 3, 10, 10), np.float32)})


def test_backend_interface(pool_calls):
    model = conv_pool_model()
    x = RNG.standard_normal((1, 3, 10, 10)).astype(np.float32)
    rep = backend.prepare(model, "CPU")
    first, second = rep.run([x]), rep.run([x])
    np.testing.assert_array_equal(first["Y"], second.Y)
    np.testing.assert_array_equal(backend.run_model(model, [x])[1], first[1])
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2], count_include_pad=1, pads=[1, 1])
    (y,) = backend.run_node(node, [np.array([[[2, 4]]], np.float32)], opset_version=11)
    np.testing.assert_array_equal(y, [[[1, 3, 2]]])
    q = helper.make_node("QLinearAveragePool", ["x", "xs", "xz", "ys"], ["y"], domain="com.microsoft",
                         kernel_shape=[2])
    (y,) = backend.run_node(q, [np.array([[[4, 8, 9]]], np.uint8), np.float32(0.5), np.uint8(2), np.float32(2)])
    np.testing.assert_array_equal(y, [[[1, 2]]])     # (4+8-4)/2 * 0.25 = 1; (8+9-4)/2 * 0.25 = 1.625
    with pytest.raises(ValueError, match="CPU only"):
        backend.prepare(model, "CUDA")
    assert pool_calls["built"] == 2 + 2 + 1 + 1   # prepare once, run_model prepares anew, run_node x2


# ------------------------------------------------------------------ translation report

def report_node(report, name):
    return next(n for n in report["nodes"] if n["node"] == name)


def rules(entry):
    return [e["rule"] for e in entry["extensions"]]


def test_report_of_a_mixed_model():
    report = model_report(conv_pool_model(batch=2))
    assert (report["pooling_nodes"], report["onednn_graph_exact"], report["needs_dnnpool_extensions"]) == (2, 0, 2)
    avg, mx = report_node(report, "avg"), report_node(report, "max")
    assert avg["version"] == 11 and avg["input"] == {"name": "c", "shape": [2, 4, 10, 10], "dtype": "float"}
    assert avg["onednn_graph"] == {"op": "AvgPool", "attributes": {
        "strides": [2, 2], "kernel": [3, 3], "pads_begin": [1, 1], "pads_end": [1, 1], "rounding_type": "ceil",
        "auto_pad": "None", "data_format": "NCX", "exclude_pad": False}}
    assert avg["dst_shape"] == [2, 4, 6, 6]
    # last window: padded [9, 12) against the padded extent [-1, 11): overhang, divisor 2 taps
    assert rules(avg) == ["ceil_include_pad", "padded_extent_divisor"]
    assert mx["onednn_graph"]["op"] == "MaxPool" and rules(mx) == ["indices", "storage_order"]
    assert json.loads(report_json(report)) == report
    text = format_report(report)
    assert "avg: AveragePool-11 c[2, 4, 10, 10] float" in text and "extension storage_order" in text


@pytest.mark.parametrize("op_type,attrs,opset,shape,elem_type,want", [
    ("MaxPool", {"kernel_shape": [2, 2]}, 13, [1, 3, 8, 8], TensorProto.FLOAT, []),
    ("MaxPool", {"kernel_shape": [2], "strides": [3], "pads": [0, 1], "ceil_mode": 1}, 13, [1, 1, 5],
     TensorProto.FLOAT, ["ceil_drop_rule"]),
    ("MaxPool", {"kernel_shape": [2], "ceil_mode": 1}, 13, [1, 1, 5], TensorProto.FLOAT, []),
    ("AveragePool", {"kernel_shape": [2, 2], "dilations": [2, 1]}, 19, [1, 3, 8, 8], TensorProto.FLOAT,
     ["avgpool_dilations"]),
    ("AveragePool", {"kernel_shape": [2]}, 13, [1, 1, 4], TensorProto.DOUBLE, ["dtype"]),
    ("MaxPool", {"kernel_shape": [2]}, 13, [1, 1, 4], TensorProto.UINT8, ["dtype"]),
    ("GlobalAveragePool", {}, 13, [1, 3, 5, 5], TensorProto.FLOAT16, []),
])
def test_report_rules(op_type, attrs, opset, shape, elem_type, want):
    nodes = [helper.make_node(op_type, ["X"], ["Y"], name="p", **attrs)]
    model = make_model(nodes, [tensor("X", elem_type, shape)], [tensor("Y", elem_type, None)], opset=opset)
    entry = report_node(model_report(model), "p")
    assert rules(entry) == want
    assert "error" not in entry and entry["descriptor"]["src_shape"] == shape


def test_report_of_quantized_unknown_shape_and_invalid_nodes():
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "s")]
    nodes = [helper.make_node("QLinearAveragePool", ["X", "s", "", "s"], ["Q"], name="q", domain="com.microsoft",
                              kernel_shape=[2, 2]),
             helper.make_node("MaxPool", ["Z"], ["M"], name="unknown", kernel_shape=[2]),
             helper.make_node("MaxPool", ["X"], ["B"], name="bad", kernel_shape=[2])]
    model = make_model(nodes, [tensor("X", TensorProto.UINT8, [1, 2, 4, 4]), tensor("Z", TensorProto.FLOAT, None)],
                       [tensor(o, TensorProto.UINT8, None) for o in "QB"] + [tensor("M", TensorProto.FLOAT, None)],
                       inits, extra_opsets=[("com.microsoft", 1)])
    report = model_report(model)
    q = report_node(report, "q")
    assert rules(q) == ["quantization"]
    assert (q["descriptor"]["src_scale"], q["descriptor"]["dst_zero_point"]) == (np.float32(0.1), 0)
    unknown = report_node(report, "unknown")
    assert unknown["onednn_graph"] == {"op": "MaxPool", "attributes": None} and unknown["extensions"] is None
    assert unknown["notes"] == ["input spatial shape or dtype unknown: the attributes depend on it"]
    bad = report_node(report, "bad")
    assert "kernel_shape" in bad["error"] and bad["extensions"] is None
