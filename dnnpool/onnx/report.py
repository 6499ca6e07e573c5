"""Graph translation report: what every pooling node of a model becomes in oneDNN Graph terms,
and which of its rules need dnnpool's extensions beyond oneDNN Graph."""
from __future__ import annotations

import json
import math

import numpy as np
import onnx

from .evaluator import load_model
from .runner import node_attributes, num_outputs
from .translate import (OnnxNodeError, OnnxNodeTypeError, find_op, onnx_dtype_name, resolve,
                        select_version, translate)

__all__ = ["model_report", "node_report", "report_json", "format_report"]

# oneDNN Graph's AvgPool/MaxPool data types (its op specs list f32, bf16, f16 for src and dst).
ONEDNN_GRAPH_DTYPES = ("f32", "bf16", "f16")


def _onednn_attributes(d):
    """oneDNN Graph op attributes of a resolved descriptor (explicit pads, auto_pad none)."""
    attrs = {"strides": list(d["strides"]), "kernel": list(d["kernel"]),
             "pads_begin": list(d["pads_begin"]), "pads_end": list(d["pads_end"]),
             "rounding_type": d["rounding_type"], "auto_pad": "None",
             "data_format": d["data_format"]}
    if d["kind"] == "AvgPool":
        attrs["exclude_pad"] = bool(d["exclude_pad"])
    else:
        attrs["dilations"] = list(d["dilations"])
    return attrs


def _axes(d, dst_shape):
    """Per spatial axis: n, k, s, effective kernel, pads, output length."""
    ncx = d["data_format"] == "NCX"
    src = d["src_shape"][2:] if ncx else d["src_shape"][1:-1]
    dst = dst_shape[2:] if ncx else dst_shape[1:-1]
    for i, n in enumerate(src):
        k, s, dil = d["kernel"][i], d["strides"][i], d["dilations"][i]
        yield dict(axis=i, n=n, s=s, ek=(k - 1) * dil + 1, pb=d["pads_begin"][i],
                   pe=d["pads_end"][i], out=dst[i])


def _extensions(d, dst_shape, with_indices):
    """[(rule, detail)] for every rule of the descriptor oneDNN Graph cannot express."""
    found = []
    avg = d["kind"] == "AvgPool"
    quantized = d.get("src_scale") is not None
    if quantized:
        found.append(("quantization", "fused u8/s8 average pooling (f32 inside, round half to "
                      "even, saturate); oneDNN Graph needs Dequantize -> AvgPool -> Quantize"))
    elif d["dtype"] not in ONEDNN_GRAPH_DTYPES:
        found.append(("dtype", f"{d['dtype']}: oneDNN Graph pooling supports "
                      f"{', '.join(ONEDNN_GRAPH_DTYPES)} only"))
    if avg and any(v != 1 for v in d["dilations"]):
        found.append(("avgpool_dilations", f"dilations {list(d['dilations'])}: oneDNN Graph "
                      "AvgPool has no dilations attribute"))
    axes = list(_axes(d, dst_shape))
    if d["rounding_type"] == "ceil" and d["drop_end_pad_windows"]:
        dropped = [a["axis"] for a in axes
                   if math.ceil((a["n"] + a["pb"] + a["pe"] - a["ek"]) / a["s"]) + 1 > a["out"]]
        if dropped:
            found.append(("ceil_drop_rule", f"ceil mode drops the last window on spatial axes "
                          f"{dropped} (it would start in the end padding)"))
    if avg and not d["exclude_pad"] and d["rounding_type"] == "ceil":
        found.append(("ceil_include_pad", "oneDNN Graph refuses rounding_type=ceil with "
                      "exclude_pad=false"))
        overhang = [a["axis"] for a in axes
                    if (a["out"] - 1) * a["s"] + a["ek"] > a["n"] + a["pb"] + a["pe"]]
        if overhang and d["include_pad_divisor"] == "padded_extent":
            found.append(("padded_extent_divisor", f"windows overhang the end padding on axes "
                          f"{overhang}: the divisor counts taps inside the padded extent, not "
                          "the whole kernel"))
    if with_indices:
        found.append(("indices", "MaxPool Indices output (int64, flat NCHW index); oneDNN Graph "
                      "MaxPool has no indices output"))
        if d["index_order"] == "column_major":
            found.append(("storage_order", "storage_order=1: column-major spatial part of "
                          "the indices"))
    return [{"rule": rule, "detail": detail} for rule, detail in found]


def _tensor_info(name, value_infos):
    """(shape with None for unknown dims, elem_type or None) of a tensor name."""
    vi = value_infos.get(name)
    if vi is None or not vi.type.HasField("tensor_type"):
        return None, None
    tt = vi.type.tensor_type
    shape = ([d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
             if tt.HasField("shape") else None)
    return shape, (tt.elem_type or None)


def _dtype_name(elem_type):
    if not elem_type:
        return None
    return onnx_dtype_name(elem_type) or onnx.helper.tensor_dtype_to_string(elem_type)


def _quant_inputs(version, node, constants):
    """QLinearAveragePool's scalar inputs from the graph's constants; (inputs, note).  Inputs
    computed at run time are shown with scale 1 and zero point 0."""
    declared = version["inputs"][1:]
    names = dict(zip((i["name"] for i in declared), node.input[1:]))
    found = {n: constants[t] for n, t in names.items() if t in constants}
    if len(found) == len([t for t in names.values() if t]):
        return found, None
    for inp in declared:
        if inp["name"] not in found and not inp.get("optional"):
            found[inp["name"]] = np.float32(1.0)
    return found, "quantization parameters computed at run time: scale 1 shown"


def node_report(node, opset, shape, elem_type, constants=None):
    """Report entry of one pooling node; shape may hold None for unknown dims."""
    attrs = node_attributes(node)
    entry = {"node": node.name, "op_type": node.op_type, "domain": node.domain, "opset": opset,
             "input": {"name": node.input[0], "shape": shape, "dtype": _dtype_name(elem_type)},
             "attributes": {k: v.decode() if isinstance(v, bytes) else v
                            for k, v in attrs.items()},
             "onednn_graph": None, "descriptor": None, "dst_shape": None, "extensions": None,
             "notes": []}
    try:
        _, version = select_version(node.op_type, opset, node.domain)
        entry["version"] = version["since_version"]
        quant_inputs = None
        if version["rules"].get("quantized"):
            quant_inputs, note = _quant_inputs(version, node, constants or {})
            entry["notes"] += [note] if note else []
        rank = len(shape) - 2 if shape else max(1, len(attrs.get("kernel_shape", ())))
        kind, _, kw, _ = resolve(node.op_type, attrs, rank, elem_type or "float", opset,
                                 node.domain, node_name=node.name, quant_inputs=quant_inputs)
        entry["onednn_graph"] = {"op": kind, "attributes": None}
        # Batch and channels do not change the attributes: unknown ones stand in as 1.
        free = (0, 1) if kw["data_format"] == "NCX" else (0, rank + 1)
        if shape is None or elem_type is None or any(
                d is None for i, d in enumerate(shape) if i not in free):
            entry["notes"].append("input spatial shape or dtype unknown: the attributes "
                                  "depend on it")
            return entry
        desc = translate(node.op_type, attrs, [1 if d is None else d for d in shape], elem_type,
                         opset, node.domain, node_name=node.name, quant_inputs=quant_inputs)
    except (OnnxNodeError, OnnxNodeTypeError) as e:
        entry["error"] = str(e)
        return entry
    d = dict(desc.to_dict(), src_shape=list(shape))
    dst_shape = [None if shape[i] is None else n for i, n in enumerate(desc.dst_shape)]
    with_indices = num_outputs(node) == 2
    entry.update(onednn_graph={"op": d["kind"], "attributes": _onednn_attributes(d)},
                 descriptor=d, dst_shape=dst_shape,
                 extensions=_extensions(d, dst_shape, with_indices))
    return entry


def _constants(graph):
    """Initializers and Constant outputs of a graph (or function) by name."""
    found = {i.name: onnx.numpy_helper.to_array(i) for i in getattr(graph, "initializer", ())}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            attr = {a.name: a for a in node.attribute}
            if "value" in attr:
                found[node.output[0]] = onnx.numpy_helper.to_array(attr["value"].t)
    return found


def _value_infos(graph):
    """Typed names of a graph (or function): inputs, outputs, value_info, initializers."""
    infos = [vi for vi in list(getattr(graph, "input", ())) + list(getattr(graph, "output", ()))
             if isinstance(vi, onnx.ValueInfoProto)] + list(graph.value_info)
    found = {vi.name: vi for vi in infos}
    for init in getattr(graph, "initializer", ()):
        found.setdefault(init.name, onnx.helper.make_tensor_value_info(
            init.name, init.data_type, list(init.dims)))
    return found


def _opsets(opset_import):
    opsets = {d.domain: d.version for d in opset_import}
    if "ai.onnx" in opsets:
        opsets.setdefault("", opsets["ai.onnx"])
    return opsets


def _pooling_entries(graph, opsets, scope, where):
    """Report entries of the pooling nodes of a graph and of its subgraphs; scope holds the
    (value infos, constants) visible from enclosing graphs."""
    value_infos = {**scope[0], **_value_infos(graph)}
    constants = {**scope[1], **_constants(graph)}
    for node in graph.node:
        if find_op(node.op_type, node.domain) is not None:
            shape, elem_type = _tensor_info(node.input[0], value_infos)
            entry = node_report(node, opsets.get(node.domain, 0), shape, elem_type, constants)
            yield dict(entry, graph=where)
        for attr in node.attribute:
            for sub in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
                yield from _pooling_entries(sub, opsets, (value_infos, constants),
                                            f"{where}/{node.name or node.op_type}.{attr.name}")


def model_report(model_or_path):
    """Report of every pooling node of a model (main graph, subgraphs, local functions), as a
    dict ready for JSON."""
    model = load_model(model_or_path)
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:       # noqa: BLE001 - a model shape inference rejects still gets a report
        inferred = model
    opsets = _opsets(model.opset_import)
    nodes = list(_pooling_entries(inferred.graph, opsets, ({}, {}), "main"))
    for function in model.functions:
        nodes += _pooling_entries(function, _opsets(function.opset_import), ({}, {}),
                                  f"function {function.domain}::{function.name}")
    return {"model": model_or_path if isinstance(model_or_path, str) else model.graph.name,
            "opset_import": opsets, "pooling_nodes": len(nodes),
            "onednn_graph_exact": len([n for n in nodes if n["extensions"] == []]),
            "needs_dnnpool_extensions": len([n for n in nodes if n["extensions"]]),
            "nodes": nodes}


def report_json(report):
    return json.dumps(report, indent=2, default=str)


def format_report(report):
    """Human-readable text of model_report()."""
    lines = [f"model: {report['model']}  opsets: "
             + ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in report["opset_import"].items()),
             f"pooling nodes: {report['pooling_nodes']} ({report['onednn_graph_exact']} exact "
             f"in oneDNN Graph, {report['needs_dnnpool_extensions']} need dnnpool extensions)"]
    for n in report["nodes"]:
        version = f"-{n['version']}" if "version" in n else ""
        where = "" if n["graph"] == "main" else f" (in {n['graph']})"
        lines.append(f"\n{n['node'] or '<unnamed>'}{where}: {n['op_type']}{version} "
                     f"{n['input']['name']}{n['input']['shape']} {n['input']['dtype']}")
        if n.get("error"):
            lines.append(f"  error: {n['error']}")
            continue
        g = n["onednn_graph"]
        attrs = ", ".join(f"{k}={v}" for k, v in (g["attributes"] or {}).items())
        lines.append(f"  oneDNN Graph: {g['op']}({attrs}) -> dst {n['dst_shape']}")
        for ext in n["extensions"] or []:
            lines.append(f"  extension {ext['rule']}: {ext['detail']}")
        lines.extend(f"  note: {note}" for note in n["notes"])
    return "\n".join(lines)
