"""`dnnpool translate` and `dnnpool run`: through the installed command line (python -m
dnnpool) and through the add_*_parser functions dnnpool.onnx.cli provides."""
import argparse
import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the ONNX front end's optional dependency")
from onnx import TensorProto, helper  # noqa: E402

from dnnpool.onnx import run_model  # noqa: E402
from dnnpool.onnx.cli import add_run_parser, add_translate_parser  # noqa: E402
from childproc import run_python  # noqa: E402



@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    nodes = [helper.make_node("AveragePool", ["X"], ["a"], name="avg", kernel_shape=[2, 2], strides=[2, 2],
                              ceil_mode=1),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["Y"], name="max", kernel_shape=[2, 2])]
    graph = helper.make_graph(nodes, "cli", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, 7, 7])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3, 3, 3])])
    path = tmp_path_factory.mktemp("cli") / "pool.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return str(path)


def dnnpool_cli(*args):
    done = run_python(["-m", "dnnpool", *args], timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def via_parsers(*args):
    parser = argparse.ArgumentParser(prog="dnnpool")
    sub = parser.add_subparsers()
    add_translate_parser(sub)
    add_run_parser(sub)
    parsed = parser.parse_args(args)
    return parsed.func(parsed)


def test_translate_json_round_trip(model_path):
    report = json.loads(dnnpool_cli("translate", "--json", model_path))
    assert report["pooling_nodes"] == 2
    avg = report["nodes"][0]
    assert (avg["node"], avg["onednn_graph"]["op"], avg["onednn_graph"]["attributes"]["rounding_type"]) == \
        ("avg", "AvgPool", "ceil")
    # a symbolic batch leaves the attributes known
    assert avg["input"]["shape"] == [None, 3, 7, 7] and avg["dst_shape"] == [None, 3, 4, 4]
    assert avg["onednn_graph"]["attributes"]["kernel"] == [2, 2]
    assert [e["rule"] for e in avg["extensions"]] == []


def test_translate_text(model_path, capsys):
    assert via_parsers("translate", model_path) == 0
    out = capsys.readouterr().out
    assert "pooling nodes: 2" in out and "avg: AveragePool-11 X[None, 3, 7, 7] float" in out


def test_run_prints_outputs_and_saves_them(model_path, tmp_path):
    x = np.random.default_rng(3).standard_normal((2, 3, 7, 7)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = dnnpool_cli("run", model_path, "--input", f"X={tmp_path / 'x.npy'}", "--save", str(tmp_path / "out"))
    assert "output Y: shape [2, 3, 3, 3] float32" in out
    assert "pooling on dnnpool: 2 nodes (AveragePool-11, MaxPool-12), 2 calls, 2 primitives built" in out
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "Y.npy"), run_model(model_path, [x])[0])


def test_run_with_random_inputs_is_seeded(model_path, capsys):
    assert via_parsers("run", model_path, "--dim", "N=4", "--seed", "5") == 0
    first = capsys.readouterr().out
    assert "input  X: shape [4, 3, 7, 7] float32 (random, seed 5)" in first
    assert "output Y: shape [4, 3, 3, 3] float32  min " in first
    via_parsers("run", model_path, "--dim", "N=4", "--seed", "5")
    assert capsys.readouterr().out == first


def test_run_rejects_bad_arguments(model_path):
    with pytest.raises(SystemExit, match=r"unknown inputs \['Z'\]"):
        via_parsers("run", model_path, "--input", "Z=z.npy")
    with pytest.raises(SystemExit, match=r"--dim 'N=two' must look like NAME=VALUE \(VALUE a int\)"):
        via_parsers("run", model_path, "--dim", "N=two")
