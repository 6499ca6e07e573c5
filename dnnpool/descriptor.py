"""PoolingDesc: the one pooling descriptor both front ends fill.

This module turns Python values into the C descriptor: it checks types and
spellings (from the attribute table in spec/onednn_graph.json) and leaves the
semantic validation, auto_pad resolution and shape inference to the C
``dp_desc_init``, so Python and Cython users get identical rules and messages.
"""
import numbers
import operator

import numpy as np

from ._core import CDesc
from ._spec import load_spec
from .dtypes import canonical_dtype, numpy_dtype

_TABLE = load_spec("onednn_graph.json")
_ATTRS = _TABLE["attributes"]
_KINDS = _TABLE["kinds"]
_KIND_BY_LOWER = {name.lower(): name for name in _KINDS}

# Order of to_dict() and of the value key used for equality and hashing.
FIELDS = (
    "kind", "src_shape", "dtype", "kernel", "strides", "pads_begin", "pads_end", "exclude_pad",
    "rounding_type", "auto_pad", "data_format", "dilations", "include_pad_divisor",
    "drop_end_pad_windows", "index_order", "src_scale", "src_zero_point", "dst_scale", "dst_zero_point",
)
_ENUM_FIELDS = ("rounding_type", "auto_pad", "data_format", "include_pad_divisor", "index_order")
_QUANT_FIELDS = ("src_scale", "src_zero_point", "dst_scale", "dst_zero_point")


def _int(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: value {value!r} is invalid: expected an integer, got {type(value).__name__}")
    return operator.index(value)


def _int_list(name, value, rank):
    """A tuple of `rank` ints; a single int stands for every axis."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return (operator.index(value),) * rank
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError(f"{name}: value {value!r} is invalid: expected a list of {rank} integers")
    items = tuple(_int(f"{name}", v) for v in value)
    if len(items) != rank:
        raise ValueError(f"{name}: value {list(items)} is invalid: it needs one entry per spatial axis "
                         f"({rank} for this src_shape), got {len(items)}")
    return items


def _bool(name, value):
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{name}: value {value!r} is invalid: expected True or False")


def _enum(name, value):
    spec = _ATTRS[name]
    if not isinstance(value, str):
        raise TypeError(f"{name}: value {value!r} is invalid: expected a string, one of {sorted(spec['values'])}")
    key = value.lower() if spec.get("case_insensitive") else value
    table = {k.lower(): k for k in spec["values"]} if spec.get("case_insensitive") else {k: k for k in spec["values"]}
    if key not in table:
        raise ValueError(f"{name}: value {value!r} is invalid: expected one of {list(spec['values'])}")
    return table[key]


def _kind(value):
    if not isinstance(value, str):
        raise TypeError(f"kind: value {value!r} is invalid: expected a string, one of {list(_KINDS)}")
    if value.lower() not in _KIND_BY_LOWER:
        raise ValueError(f"kind: value {value!r} is invalid: expected one of {list(_KINDS)}")
    return _KIND_BY_LOWER[value.lower()]


def _src_shape(value):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError(f"src_shape: value {value!r} is invalid: expected a tuple of integers")
    shape = tuple(_int("src_shape", v) for v in value)
    if not 3 <= len(shape) <= 5:
        raise ValueError(f"src_shape: value {shape} is invalid: pooling takes N, C and 1 to 3 spatial "
                         f"dimensions (rank 3 to 5), got rank {len(shape)}")
    return shape


def _only_for_kind(name, value, kind):
    """Attributes of the other kind must keep their default (e.g. exclude_pad on MaxPool)."""
    if kind not in _ATTRS[name]["kinds"] and value != _ATTRS[name].get("default"):
        raise ValueError(f"{name}: value {value!r} is invalid for {kind}: it is an attribute of "
                         f"{' and '.join(_ATTRS[name]['kinds'])} only")


class PoolingDesc:
    """An immutable, hashable, validated description of one AvgPool/MaxPool.

    Attribute names and spellings are oneDNN Graph's (see README); the extra
    policy fields let other front ends (ONNX) express their rules.
    """

    __slots__ = ("_values", "_cdesc", "_hash")

    def __init__(self, kind, src_shape, dtype="f32", kernel=None, strides=None, pads_begin=None,
                 pads_end=None, exclude_pad=None, rounding_type="floor", auto_pad="none",
                 data_format="NXC", dilations=None, include_pad_divisor="kernel",
                 drop_end_pad_windows=False, index_order="row_major", src_scale=None,
                 src_zero_point=None, dst_scale=None, dst_zero_point=None):
        kind = _kind(kind)
        src_shape = _src_shape(src_shape)
        rank = len(src_shape) - 2
        dtype = canonical_dtype(dtype)
        if kernel is None:
            raise TypeError("kernel: a value is required (one window size per spatial axis)")
        v = {"kind": kind, "src_shape": src_shape, "dtype": dtype, "kernel": _int_list("kernel", kernel, rank)}
        int_lists = {"strides": strides, "pads_begin": pads_begin, "pads_end": pads_end, "dilations": dilations}
        for name, value in int_lists.items():
            v[name] = _int_list(name, _ATTRS[name]["default"] if value is None else value, rank)
        if exclude_pad is not None:
            exclude_pad = _bool("exclude_pad", exclude_pad)
            if kind == "MaxPool":
                raise ValueError(f"exclude_pad: value {exclude_pad!r} is invalid for MaxPool: "
                                 "exclude_pad is an AvgPool attribute (leave it None)")
        elif kind == "AvgPool":
            exclude_pad = _ATTRS["exclude_pad"]["default"]
        v["exclude_pad"] = exclude_pad
        enums = {"rounding_type": rounding_type, "auto_pad": auto_pad, "data_format": data_format,
                 "include_pad_divisor": include_pad_divisor, "index_order": index_order}
        for name, value in enums.items():
            v[name] = _enum(name, value)
        v["drop_end_pad_windows"] = _bool("drop_end_pad_windows", drop_end_pad_windows)
        _only_for_kind("include_pad_divisor", v["include_pad_divisor"], kind)
        _only_for_kind("index_order", v["index_order"], kind)
        quant = {"src_scale": src_scale, "src_zero_point": src_zero_point,
                 "dst_scale": dst_scale, "dst_zero_point": dst_zero_point}
        v.update(_quantization(quant, kind))
        self._set_resolved(v)

    def _set_resolved(self, v):
        codes = {name: _ATTRS[name]["values"][v[name]] for name in _ENUM_FIELDS}
        codes["kind"] = _KINDS[v["kind"]]["code"]
        codes["dtype"] = _TABLE["dtypes"][v["dtype"]]["code"]
        cdesc = CDesc.build(v, codes)
        # Stored attributes are the resolved ones: pads after auto_pad.
        v["pads_begin"], v["pads_end"] = cdesc.resolved_pads()
        object.__setattr__(self, "_values", v)
        object.__setattr__(self, "_cdesc", cdesc)
        object.__setattr__(self, "_hash", hash(tuple(v[f] for f in FIELDS)))

    # -- immutability and value semantics
    def __setattr__(self, name, value):
        raise AttributeError(f"PoolingDesc is immutable: cannot set {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"PoolingDesc is immutable: cannot delete {name!r}")

    def __eq__(self, other):
        if not isinstance(other, PoolingDesc):
            return NotImplemented
        return all(self._values[f] == other._values[f] for f in FIELDS)

    def __hash__(self):
        return self._hash

    def __reduce__(self):
        return (_from_dict, (self.to_dict(),))

    def __repr__(self):
        args = ", ".join(f"{f}={self._values[f]!r}" for f in FIELDS[1:]
                         if self._values[f] is not None)
        return f"PoolingDesc({self._values['kind']!r}, {args})"

    def to_dict(self):
        """Every attribute, resolved; ``PoolingDesc(**d)`` rebuilds an equal descriptor."""
        d = {f: self._values[f] for f in FIELDS}
        for f in ("src_shape", "kernel", "strides", "pads_begin", "pads_end", "dilations"):
            d[f] = list(d[f])
        return d

    # -- attributes
    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "_values")[name]
        except KeyError:
            raise AttributeError(f"PoolingDesc has no attribute {name!r}") from None

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(FIELDS))

    @property
    def ndims(self):
        """Spatial rank (1, 2 or 3)."""
        return len(self._values["src_shape"]) - 2

    @property
    def dst_shape(self):
        """Output shape in data_format order."""
        return self._cdesc.dst_shape()

    @property
    def np_dtype(self):
        """The numpy dtype of src and dst."""
        return numpy_dtype(self._values["dtype"])

    @property
    def quantized(self):
        return self._values["src_scale"] is not None

    @property
    def channels(self):
        shape = self._values["src_shape"]
        return shape[1] if self._values["data_format"] == "NCX" else shape[-1]


def _from_dict(d):
    return PoolingDesc(**d)


def _quantization(q, kind):
    """All four quantization parameters, or none (zero points default to 0 when scales are given)."""
    given = {k: val for k, val in q.items() if val is not None}
    if not given:
        return {k: None for k in _QUANT_FIELDS}
    for k in ("src_scale", "dst_scale"):
        if k not in given:
            raise ValueError(f"{k}: a value is required for quantized AvgPool "
                             f"(got {sorted(given)}; the scales are required, zero points default to 0)")
    out = {}
    for k in ("src_scale", "dst_scale"):
        val = given[k]
        if isinstance(val, (bool, np.bool_)) or not isinstance(val, numbers.Real):
            raise TypeError(f"{k}: value {val!r} is invalid: expected a real number")
        out[k] = float(np.float32(val))
    for k in ("src_zero_point", "dst_zero_point"):
        out[k] = _int(k, given.get(k, 0))
    if kind != "AvgPool":
        raise ValueError(f"src_scale: quantization parameters are invalid for {kind}: only AvgPool is quantized")
    return out
