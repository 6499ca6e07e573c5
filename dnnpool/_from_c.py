"""The reverse hand-over: a C `dp_desc` (as the dict Cython makes of the struct)
back to a Python `PoolingDesc`.

`dp_desc_to_python()` in dnnpool/capi.pxd calls `pooling_desc_from_struct`, so a
descriptor filled at C level can be inspected, printed, hashed or turned into a
`dnnpool.Pooling` in Python.  Only the attributes that matter for the struct's
kind are passed, and the Python constructor validates them all again.
"""

# Enum values of csrc/dnnpool.h, in order, as the Python API spells them.
_KINDS = ("AvgPool", "MaxPool")
_DTYPES = ("f32", "f64", "f16", "bf16", "s8", "u8")
_FORMATS = ("NCX", "NXC")
_ROUNDINGS = ("floor", "ceil")
_AUTO_PADS = ("none", "same_upper", "same_lower", "valid")
_PAD_DIVISORS = ("kernel", "padded_extent")
_INDEX_ORDERS = ("row_major", "column_major")


def _name(fields, field, names):
    value = fields[field]
    if not 0 <= value < len(names):
        choices = ", ".join(f"{i} ({n})" for i, n in enumerate(names))
        raise ValueError(f"dp_desc.{field}: {value} is not one of {choices}")
    return names[value]


def pooling_desc_attrs(fields):
    """Keyword arguments of `PoolingDesc` equivalent to a dp_desc's input fields."""
    ndims = fields["ndims"]
    if not 1 <= ndims <= len(fields["kernel"]):
        raise ValueError(f"dp_desc.ndims: {ndims} must be in 1..{len(fields['kernel'])}")

    def axes(field):
        return tuple(int(v) for v in fields[field][:ndims])

    kind = _name(fields, "kind", _KINDS)
    data_format = _name(fields, "format", _FORMATS)
    auto_pad = _name(fields, "auto_pad", _AUTO_PADS)
    spatial = axes("src_spatial")
    batch, channels = int(fields["batch"]), int(fields["channels"])
    src_shape = ((batch, channels) + spatial if data_format == "NCX"
                 else (batch,) + spatial + (channels,))
    attrs = dict(
        kind=kind, src_shape=src_shape, dtype=_name(fields, "dtype", _DTYPES),
        kernel=axes("kernel"), strides=axes("strides"), dilations=axes("dilations"),
        rounding_type=_name(fields, "rounding", _ROUNDINGS), auto_pad=auto_pad,
        data_format=data_format, drop_end_pad_windows=bool(fields["drop_end_pad_windows"]),
    )
    if auto_pad == "none":   # otherwise the C side ignores the explicit pads too
        attrs.update(pads_begin=axes("pads_begin"), pads_end=axes("pads_end"))
    if kind == "AvgPool":
        attrs.update(exclude_pad=bool(fields["exclude_pad"]),
                     include_pad_divisor=_name(fields, "pad_divisor", _PAD_DIVISORS))
    else:
        attrs.update(index_order=_name(fields, "index_order", _INDEX_ORDERS))
    if fields["quantized"]:
        attrs.update(src_scale=float(fields["src_scale"]), dst_scale=float(fields["dst_scale"]),
                     src_zero_point=int(fields["src_zero_point"]),
                     dst_zero_point=int(fields["dst_zero_point"]))
    return attrs


def pooling_desc_from_struct(fields):
    """A `dnnpool.PoolingDesc` equal to the dp_desc whose fields are given."""
    from dnnpool import PoolingDesc
    return PoolingDesc(**pooling_desc_attrs(fields))
