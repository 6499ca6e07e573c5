"""ONNX pooling node -> dnnpool.PoolingDesc.

Which attributes, defaults, dtypes and rules each op version has is data (spec/onnx_ops.json);
this module only knows what each attribute *means* for the descriptor.  It works on plain
attribute dicts and needs neither the onnx package nor a NodeProto.
"""
from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Sequence

import numpy as np

from .. import PoolingDesc
from ._specdata import onnx_ops

__all__ = ["translate", "resolve", "check_attributes", "select_version", "find_op",
           "onnx_dtype_name", "OnnxNodeError", "OnnxNodeTypeError", "NodeRef"]

# How many values an INTS attribute needs, per spatial axis (spec "length" field).
_LENGTH_FACTORS = {"rank": 1, "2*rank": 2}


class OnnxNodeError(ValueError):
    """A pooling node the ONNX front end cannot accept (bad value, shape or combination)."""


class OnnxNodeTypeError(TypeError):
    """A pooling node with a wrong attribute type or a dtype its opset does not allow."""


class NodeRef:
    """Names a node in error messages: node name (when known), op, domain, model opset, op version."""

    def __init__(self, op_type, domain="", opset=None, name=None, since_version=None):
        self.op_type, self.domain, self.opset = op_type, domain, opset
        self.name, self.since_version = name, since_version

    def __str__(self):
        op = f"{self.domain}::{self.op_type}" if self.domain else self.op_type
        version = f"-{self.since_version}" if self.since_version is not None else ""
        node = f"node {self.name!r} " if self.name else ""
        opset = f" (opset {self.opset})" if self.opset is not None else ""
        return f"ONNX {node}{op}{version}{opset}"

    def value_error(self, message):
        return OnnxNodeError(f"{self}: {message}")

    def type_error(self, message):
        return OnnxNodeTypeError(f"{self}: {message}")


def _canonical_domain(domain):
    return "" if domain in ("", "ai.onnx", None) else domain


def find_op(op_type, domain=""):
    """The spec entry of a pooling op, or None when dnnpool does not handle it."""
    entry = onnx_ops()["ops"].get(op_type)
    if entry is None or entry["domain"] != _canonical_domain(domain):
        return None
    return entry


def select_version(op_type, opset, domain="", ref=None):
    """(op entry, version entry): the version with the largest since_version <= opset."""
    ref = ref or NodeRef(op_type, domain, opset)
    op = find_op(op_type, domain)
    if op is None:
        known = ", ".join(f"{e['domain'] + '::' if e['domain'] else ''}{n}"
                          for n, e in onnx_ops()["ops"].items())
        raise ref.value_error(f"op is not a pooling op dnnpool translates (known: {known})")
    if isinstance(opset, bool) or not isinstance(opset, numbers.Integral):
        raise ref.type_error(f"opset {opset!r} must be an integer")
    candidates = [v for v in op["versions"] if v["since_version"] <= opset]
    if not candidates:
        first = op["versions"][0]["since_version"]
        raise ref.value_error(f"opset {opset} predates the op (first version {first})")
    return op, max(candidates, key=lambda v: v["since_version"])


def _versions_where(op_type, op, predicate):
    """Where predicate holds, for hints: 'from Op-N on', 'in Op-N, Op-M' or '' (nowhere)."""
    flags = [bool(predicate(v)) for v in op["versions"]]
    names = [f"{op_type}-{v['since_version']}" for v in op["versions"]]
    if not any(flags):
        return ""
    first = flags.index(True)
    if all(flags[first:]):
        return f"from {names[first]} on"
    return "in " + ", ".join(n for n, f in zip(names, flags) if f)


# ---------------------------------------------------------------- dtypes

@functools.lru_cache(maxsize=None)
def _dtype_aliases():
    """Every accepted spelling of a dtype -> its ONNX name (spec 'dtypes' keys)."""
    aliases = {}
    for onnx_name, info in onnx_ops()["dtypes"].items():
        for alias in (onnx_name, info["dnnpool"], info["numpy"], info["elem_type"]):
            aliases[alias] = onnx_name
    return aliases


def onnx_dtype_name(dtype):
    """ONNX name ('float', 'uint8', ...) of a dtype given as ONNX name, dnnpool name, numpy dtype
    or ONNX TensorProto elem_type; None when dnnpool has no such dtype."""
    aliases = _dtype_aliases()
    if isinstance(dtype, numbers.Integral) and not isinstance(dtype, bool):
        return aliases.get(int(dtype))
    if isinstance(dtype, str) and dtype in aliases:
        return aliases[dtype]
    try:
        return aliases.get(np.dtype(dtype).name)
    except TypeError:
        return None


# ---------------------------------------------------------------- attributes

def _as_int(value):
    if isinstance(value, numbers.Integral):
        return int(value)
    raise TypeError


def _convert(kind, value):
    """Python value of an attribute of ONNX type kind; TypeError when it has another type."""
    if kind == "INT":
        return _as_int(value)
    if kind == "INTS":
        if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
            raise TypeError
        return [_as_int(v) for v in value]
    if kind == "STRING":
        if isinstance(value, bytes):
            return value.decode("utf-8")
        if isinstance(value, str):
            return value
        raise TypeError
    raise AssertionError(f"spec names an attribute type the translator lacks: {kind}")


def _check_attribute(ref, name, value, info, rank):
    if "values" in info and value not in info["values"]:
        raise ref.value_error(f"attribute {name!r} = {value!r}: allowed values are {info['values']}")
    if info["type"] != "INTS":
        return
    bad = [v for v in value if v < info["min"]]
    if bad:
        raise ref.value_error(f"attribute {name!r} = {value}: every value must be >= {info['min']}")
    if rank is None:
        return
    want = _LENGTH_FACTORS[info["length"]] * rank
    if len(value) != want:
        raise ref.value_error(
            f"attribute {name!r} = {value}: needs {info['length']} = {want} values for "
            f"{rank} spatial axes" + (" ([x1_begin, x2_begin, ..., x1_end, x2_end, ...])"
                                      if info["length"] == "2*rank" else ""))


def resolve_attributes(op_type, op, version, attrs, rank, ref):
    """Checked attribute values of one node, defaults filled in (INTS defaults per axis).
    rank None checks what does not depend on the input (names, types, values) and leaves
    the per-axis defaults out."""
    declared = version["attributes"]
    resolved = {}
    for name, raw in attrs.items():
        info = declared.get(name)
        if info is None:
            elsewhere = _versions_where(op_type, op, lambda v, n=name: n in v["attributes"])
            if elsewhere:
                raise ref.value_error(
                    f"attribute {name!r} is not part of {op_type}-{version['since_version']}; "
                    f"it exists {elsewhere} (rule: attributes allowed by the opset)")
            raise ref.value_error(f"attribute {name!r} is unknown: {op_type} has no such attribute "
                                  f"in any opset (allowed here: {sorted(declared)})")
        try:
            value = _convert(info["type"], raw)
        except TypeError:
            raise ref.type_error(f"attribute {name!r} = {raw!r}: must be of ONNX type "
                                 f"{info['type']}") from None
        _check_attribute(ref, name, value, info, rank)
        resolved[name] = value
    for name, info in declared.items():
        if name in resolved:
            continue
        if info.get("required"):
            raise ref.value_error(f"attribute {name!r} is required by "
                                  f"{op_type}-{version['since_version']} and missing")
        if "default_each" in info:
            if rank is not None:
                resolved[name] = [info["default_each"]] * (_LENGTH_FACTORS[info["length"]] * rank)
        else:
            resolved[name] = info["default"]
    return resolved


def check_attributes(op_type, attrs, opset=22, domain="", node_name=None):
    """The version entry of a node, after checking what of its attributes can be checked
    without an input: names, types, values.  Raises like translate()."""
    ref = NodeRef(op_type, _canonical_domain(domain), opset, node_name)
    op, version = select_version(op_type, opset, domain, ref)
    ref.since_version = version["since_version"]
    resolve_attributes(op_type, op, version, dict(attrs), None, ref)
    return version, ref


# ---------------------------------------------------------------- quantization parameters

def _scalar(ref, inp, value, dtype_name):
    """Python number of a scalar quantization input; checks shape, dtype and range."""
    name = inp["name"]
    arr = np.asarray(value)
    if not (arr.ndim == 0 or arr.shape == (1,)):
        raise ref.value_error(f"input {name!r} has shape {arr.shape}: must be a scalar "
                              "(a 0-d or 1-element 1-D tensor, per-tensor quantization)")
    want = "float" if inp["type"] == "float" else dtype_name
    want_np = np.dtype(onnx_ops()["dtypes"][want]["numpy"])
    is_python_number = isinstance(value, numbers.Number) and not isinstance(value, np.generic)
    if is_python_number:
        ok = isinstance(value, numbers.Real) if want == "float" else isinstance(value, numbers.Integral)
    else:
        ok = arr.dtype == want_np
    if not ok or isinstance(value, bool):
        raise ref.type_error(f"input {name!r} has type {arr.dtype}: must be tensor({want})")
    number = arr.reshape(()).item()
    if want == "float":
        if not (math.isfinite(number) and number > 0):
            raise ref.value_error(f"input {name!r} = {number!r}: a scale must be finite and > 0")
        return float(np.float32(number))
    info = np.iinfo(want_np)
    if not info.min <= number <= info.max:
        raise ref.value_error(f"input {name!r} = {number}: out of range of {want} "
                              f"[{info.min}, {info.max}]")
    return int(number)


def _quantization_kwargs(ref, version, quant_inputs, dtype_name):
    quant_inputs = dict(quant_inputs or {})
    kwargs = {}
    for inp in version["inputs"][1:]:
        value = quant_inputs.pop(inp["name"], None)
        if value is None:
            if not inp.get("optional"):
                raise ref.value_error(f"input {inp['name']!r} is required and missing "
                                      "(rule: quantization parameters are scalar inputs)")
            value = inp["default"]
        kwargs[inp["descriptor"]] = _scalar(ref, inp, value, dtype_name)
    if quant_inputs:
        raise ref.value_error(f"unknown quantization inputs {sorted(quant_inputs)} "
                              f"(known: {[i['name'] for i in version['inputs'][1:]]})")
    return kwargs


# ---------------------------------------------------------------- descriptor

def _data_format(version, attrs):
    flag = version["rules"].get("data_format_attribute")
    return "NXC" if flag and attrs[flag] else "NCX"


def _spatial(src_shape, data_format):
    return tuple(src_shape[2:]) if data_format == "NCX" else tuple(src_shape[1:-1])


def resolve(op_type, attrs, rank, dtype, opset=22, domain="", *, node_name=None, quant_inputs=None):
    """Everything of the descriptor that does not depend on the input's extent:
    (kind, dnnpool dtype, keyword arguments of PoolingDesc minus src_shape, dtype).

    Global ops leave 'kernel' out (it is the spatial extent).  Raises OnnxNodeError /
    OnnxNodeTypeError naming node, op, opset, attribute and rule."""
    ref = NodeRef(op_type, _canonical_domain(domain), opset, node_name)
    op, version = select_version(op_type, opset, domain, ref)
    ref.since_version = version["since_version"]
    tag = f"{op_type}-{version['since_version']}"

    dtype_name = onnx_dtype_name(dtype)
    allowed = version["type_constraints"]["T"]
    if dtype_name not in allowed:
        later = _versions_where(op_type, op, lambda v: dtype_name in v["type_constraints"]["T"])
        hint = f"; {dtype_name} is allowed {later}" if later else ""
        raise ref.type_error(f"input dtype {dtype!r} is not allowed by {tag} "
                             f"(allowed: {', '.join(allowed)}){hint}")
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 1:
        raise ref.value_error(f"input rank {rank!r}: needs N, C and at least one spatial axis")

    a = resolve_attributes(op_type, op, version, dict(attrs or {}), rank, ref)
    rules = version["rules"]
    kw = {"data_format": _data_format(version, a)}
    if not rules.get("global"):
        kw.update(kernel=a["kernel_shape"], strides=a["strides"])
        if "dilations" in a:
            kw["dilations"] = a["dilations"]
        auto_pad = a["auto_pad"]
        if auto_pad != "NOTSET" and any(a["pads"]):
            raise ref.value_error(f"attribute 'auto_pad' = {auto_pad!r} together with non-zero "
                                  f"'pads' = {a['pads']}: pads must be absent or zero when "
                                  "auto_pad is not NOTSET")
        kw.update(pads_begin=a["pads"][:rank], pads_end=a["pads"][rank:],
                  auto_pad=onnx_ops()["auto_pad"][auto_pad])
        # SAME_* yields ceil(n / s) outputs whatever ceil_mode says (SEMANTICS section 3):
        # floor rounding over the SAME pads gives exactly that.
        ceil = a.get("ceil_mode", 0) == 1 and not auto_pad.startswith("SAME")
        kw["rounding_type"] = "ceil" if ceil else "floor"
        kw["drop_end_pad_windows"] = ceil and rules.get("ceil_drop_rule", False)
        if "storage_order" in a:
            kw["index_order"] = "column_major" if a["storage_order"] else "row_major"
    if op["kind"] == "AvgPool":
        counted = rules["padding_counted"] == "count_include_pad" and a["count_include_pad"] == 1
        kw["exclude_pad"] = not counted
        if counted:
            kw["include_pad_divisor"] = rules["include_pad_divisor"]
    if rules.get("quantized"):
        kw.update(_quantization_kwargs(ref, version, quant_inputs, dtype_name))
    elif quant_inputs:
        raise ref.value_error(f"quantization inputs {sorted(quant_inputs)} given to an op that "
                              "is not quantized")
    return op["kind"], onnx_ops()["dtypes"][dtype_name]["dnnpool"], kw, ref


def translate(op_type, attrs, src_shape, dtype, opset=22, domain="", *, node_name=None,
              quant_inputs=None):
    """PoolingDesc for an ONNX pooling node.

    op_type, domain: "AveragePool", "MaxPool", "GlobalAveragePool", "GlobalMaxPool" ("" domain)
        or "QLinearAveragePool" ("com.microsoft").
    attrs: the node's attributes as a plain dict (ints, lists of ints, str or bytes).
    src_shape: input shape, (N, C, D1, ...) or (N, D1, ..., C) for QLinearAveragePool with
        channels_last=1.
    dtype: ONNX name ("float"), dnnpool name ("f32"), numpy dtype or TensorProto elem_type.
    opset: the model's opset of the node's domain; the op version used is the largest
        since_version <= opset.
    quant_inputs: QLinearAveragePool's scalar inputs by name (x_scale, x_zero_point, y_scale,
        y_zero_point); zero points may be omitted (0).
    """
    rank = len(src_shape) - 2 if isinstance(src_shape, Sequence) else None
    if rank is None or not all(isinstance(d, numbers.Integral) and d >= 0 for d in src_shape):
        raise NodeRef(op_type, _canonical_domain(domain), opset, node_name).value_error(
            f"input shape {src_shape!r} must be a sequence of non-negative integers")
    kind, dp_dtype, kw, ref = resolve(op_type, attrs, rank, dtype, opset, domain,
                                      node_name=node_name, quant_inputs=quant_inputs)
    src_shape = tuple(int(d) for d in src_shape)
    kw.setdefault("kernel", list(_spatial(src_shape, kw["data_format"])))
    try:
        return PoolingDesc(kind, src_shape, dtype=dp_dtype, **kw)
    except TypeError as e:
        raise ref.type_error(str(e)) from e
    except ValueError as e:
        raise ref.value_error(str(e)) from e
