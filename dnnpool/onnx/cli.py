"""`dnnpool translate MODEL.onnx` and `dnnpool run MODEL.onnx` (wired into dnnpool/cli.py)."""
from __future__ import annotations

import os

import numpy as np


def _model_command(subparsers, name, func, summary, description):
    p = subparsers.add_parser(name, help=summary, description=description)
    p.add_argument("model", help="path of an .onnx model")
    p.set_defaults(func=func)
    return p


def add_translate_parser(subparsers):
    p = _model_command(
        subparsers, "translate", _cmd_translate,
        "oneDNN Graph translation report of an ONNX model's pooling nodes",
        "For every pooling node of an ONNX model: the oneDNN Graph op and attributes it "
        "becomes and which of its rules need dnnpool extensions.")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    return p


def add_run_parser(subparsers):
    p = _model_command(
        subparsers, "run", _cmd_run, "run an ONNX model with its pooling on dnnpool",
        "Run an ONNX model: pooling nodes on dnnpool, other nodes on onnx's reference "
        "evaluator.  Inputs not given come from a seeded random generator.")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input from a .npy file (repeatable)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="value of a symbolic dimension of the random inputs (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--save", metavar="DIR", help="write each output to DIR/<name>.npy")
    return p


def _cmd_translate(args):
    from .report import format_report, model_report, report_json

    report = model_report(args.model)
    print(report_json(report) if args.json else format_report(report))
    return 1 if any(n.get("error") for n in report["nodes"]) else 0


def _pairs(items, what, convert=str):
    pairs = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            pairs[name] = convert(value)
        except ValueError:
            raise SystemExit(f"dnnpool run: {what} {item!r} must look like NAME=VALUE "
                             f"(VALUE a {convert.__name__})") from None
    return pairs


def random_input(value_info, rng, dims):
    """A random tensor for a graph input; symbolic dims from dims (default 1)."""
    import onnx

    tt = value_info.type.tensor_type
    shape = tuple(d.dim_value if d.HasField("dim_value") else dims.get(d.dim_param, 1)
                  for d in tt.shape.dim)
    dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -128), min(info.max, 255), shape, endpoint=True).astype(dtype)
    raise SystemExit(f"dnnpool run: no random data for input {value_info.name!r} of type "
                     f"{dtype}: give it with --input")


def _summary(value):
    value = np.asarray(value)
    if value.size == 0 or value.dtype.kind not in "fiub" and value.dtype.name != "bfloat16":
        return ""
    v = value.astype(np.float64)
    return f"min {v.min():.6g}  max {v.max():.6g}  mean {v.mean():.6g}"


def _cmd_run(args):
    from .evaluator import ModelRunner

    runner = ModelRunner(args.model)
    files = _pairs(args.input, "--input")
    unknown = sorted(set(files) - set(runner.input_names))
    if unknown:
        raise SystemExit(f"dnnpool run: unknown inputs {unknown} (model inputs: {runner.input_names})")
    rng = np.random.default_rng(args.seed)
    dims = _pairs(args.dim, "--dim", int)
    graph_inputs = {vi.name: vi for vi in runner.model.graph.input}
    feeds = {name: np.load(files[name]) if name in files else
             random_input(graph_inputs[name], rng, dims) for name in runner.input_names}
    outputs = runner.run(feeds)
    for name, value in feeds.items():
        origin = files.get(name, f"random, seed {args.seed}")
        print(f"input  {name}: shape {list(value.shape)} {value.dtype} ({origin})")
    for name, value in zip(runner.output_names, outputs):
        value = np.asarray(value)
        print(f"output {name}: shape {list(value.shape)} {value.dtype}  {_summary(value)}")
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            np.save(os.path.join(args.save, f"{name}.npy"), value)
    pools = runner.pooling_nodes
    kinds = ", ".join(sorted({f"{p.op_type}-{p.version['since_version']}" for p in pools}))
    print(f"pooling on dnnpool: {len(pools)} nodes ({kinds or 'none'}), "
          f"{sum(p.calls for p in pools)} calls, "
          f"{sum(len(p.primitives) for p in pools)} primitives built")
    return 0
