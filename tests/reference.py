"""A slow, obviously-correct pooling oracle, written straight from the formulas of
/work/shared/SEMANTICS.md (oneDNN Graph AvgPool/MaxPool plus the ONNX policies).

It shares no code with dnnpool.  Every output element is computed by an explicit loop
over its window's taps; averages are formed exactly (``fractions.Fraction``) and
rounded once, to nearest even, to the destination type.  Where the spec has no answer
(an average whose divisor would be 0) it raises ``ValueError``.

Public entry points:
    pool(src, attrs, with_indices=False)   dst, or (dst, int64 indices) for MaxPool
    unrounded_average(src, attrs)           AvgPool values before the final rounding
    padded_formulation(src, attrs)          a second, vectorised construction (f64)
    resolve_geometry(spatial_shape, attrs)  per-axis pads and output lengths
    dst_shape(src_shape, attrs)             output shape in data_format order
    round_to_dtype(x, name), lowest(name), ulp(x, name), dtype_name(dtype)

``attrs`` is a dict of dnnpool.PoolingDesc keyword arguments ("kind" included,
"src_shape"/"dtype" optional: they are taken from src); missing keys take the
pinned defaults.
"""

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import ml_dtypes
import numpy as np

NUMPY_DTYPES = {
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "s8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8),
}
INTEGER_DTYPES = ("s8", "u8")

# Binary floating formats: (significand bits incl. the implicit one,
# exponent of the smallest subnormal, largest finite value).
FLOAT_FORMATS = {
    "f64": (53, -1074, 1.7976931348623157e308),
    "f32": (24, -149, 3.4028234663852886e38),
    "f16": (11, -24, 65504.0),
    "bf16": (8, -133, 3.3895313892515355e38),
}
INTEGER_RANGES = {"s8": (-128, 127), "u8": (0, 255)}

DEFAULTS = {
    "strides": None, "pads_begin": None, "pads_end": None, "dilations": None,
    "exclude_pad": None, "rounding_type": "floor", "auto_pad": "none",
    "data_format": "NXC", "include_pad_divisor": "kernel",
    "drop_end_pad_windows": False, "index_order": "row_major",
    "src_scale": None, "src_zero_point": None, "dst_scale": None, "dst_zero_point": None,
}
QUANT_KEYS = ("src_scale", "src_zero_point", "dst_scale", "dst_zero_point")


def dtype_name(dtype):
    """'f32' etc. for a name or anything numpy accepts as a dtype."""
    if isinstance(dtype, str) and dtype in NUMPY_DTYPES:
        return dtype
    dt = np.dtype(dtype)
    for name, known in NUMPY_DTYPES.items():
        if dt == known:
            return name
    raise TypeError(f"reference: unsupported dtype {dtype!r}")


# ---------------------------------------------------------------- numerics

def lowest(name):
    """The dtype's lowest finite value (result of a max over no input element)."""
    if name in INTEGER_RANGES:
        return INTEGER_RANGES[name][0]
    return -FLOAT_FORMATS[name][2]


def round_to_dtype(x, name):
    """Round the exact number x (Fraction, int or float) once, to nearest even, to
    the float format `name`; returns a Python float holding the rounded value."""
    if isinstance(x, float) and not math.isfinite(x):
        return x
    x = Fraction(x)
    if x == 0:
        return 0.0
    precision, min_exponent, largest = FLOAT_FORMATS[name]
    magnitude = abs(x)
    # the exponent e with 2**e <= |x| < 2**(e+1): estimated from bit lengths, then made exact
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    while Fraction(2) ** exponent > magnitude:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= magnitude:
        exponent += 1
    quantum = Fraction(2) ** max(exponent - precision + 1, min_exponent)
    rounded = round(x / quantum) * quantum             # Fraction.__round__ ties to even
    if abs(rounded) > Fraction(largest):
        return math.inf if rounded > 0 else -math.inf
    return float(rounded)


def ulp(x, name):
    """Spacing of the float format `name` at the (finite) value x."""
    precision, min_exponent, _ = FLOAT_FORMATS[name]
    x = abs(float(x))
    exponent = math.frexp(x)[1] - 1 if x else min_exponent
    return 2.0 ** max(exponent - precision + 1, min_exponent)


def round_half_even_saturate(x, name):
    """Quantized output: nearest integer, ties to even, clamped to the dtype's range."""
    low, high = INTEGER_RANGES[name]
    return min(max(round(x), low), high)


# ---------------------------------------------------------------- geometry

@dataclass(frozen=True)
class Axis:
    """One spatial axis: input length n, kernel k, stride s, dilation d, resolved pads."""
    n: int
    k: int
    s: int
    d: int
    pb: int
    pe: int
    out: int

    def taps(self, o):
        """Input coordinates of output position o's window, in scan order."""
        return [o * self.s - self.pb + j * self.d for j in range(self.k)]


def _per_axis(attrs, key, rank, default):
    value = attrs.get(key)
    values = [default] * rank if value is None else [int(v) for v in value]
    if len(values) != rank:
        raise ValueError(f"reference: {key}={value!r} has {len(values)} entries, "
                         f"src has {rank} spatial dims")
    return values


def _choice(attrs, key, allowed):
    value = str(attrs.get(key, DEFAULTS[key]))
    canonical = {a.lower(): a for a in allowed}.get(value.lower())
    if canonical is None:
        raise ValueError(f"reference: {key}={value!r} is not one of {allowed}")
    return canonical


def resolve_geometry(spatial_shape, attrs):
    """Per-axis Axis records: auto_pad resolution, then the output length with
    floor/ceil and the optional ONNX drop of a last window starting in the end pad."""
    rank = len(spatial_shape)
    kernel = _per_axis(attrs, "kernel", rank, None)
    strides = _per_axis(attrs, "strides", rank, 1)
    dilations = _per_axis(attrs, "dilations", rank, 1)
    pads_begin = _per_axis(attrs, "pads_begin", rank, 0)
    pads_end = _per_axis(attrs, "pads_end", rank, 0)
    auto_pad = _choice(attrs, "auto_pad", ("none", "same_upper", "same_lower", "valid"))
    rounding = _choice(attrs, "rounding_type", ("floor", "ceil"))
    drop = bool(attrs.get("drop_end_pad_windows", False))
    for key, values, minimum in (("kernel", kernel, 1), ("strides", strides, 1),
                                 ("dilations", dilations, 1), ("pads_begin", pads_begin, 0),
                                 ("pads_end", pads_end, 0)):
        if min(values) < minimum:
            raise ValueError(f"reference: {key}={values} must be >= {minimum}")

    axes = []
    for i, n in enumerate(spatial_shape):
        k, s, d = kernel[i], strides[i], dilations[i]
        ek = (k - 1) * d + 1
        if auto_pad == "none":
            pb, pe = pads_begin[i], pads_end[i]
        elif auto_pad == "valid":
            pb, pe = 0, 0
        else:
            total = max(0, ek - (s if n % s == 0 else n % s))
            half, rest = total // 2, total - total // 2
            pb, pe = (half, rest) if auto_pad == "same_upper" else (rest, half)
        span = n + pb + pe - ek
        if span < 0:
            raise ValueError(f"reference: axis {i}: effective kernel {ek} is larger than "
                             f"the padded input {n + pb + pe}")
        out = span // s + 1 if rounding == "floor" else -(-span // s) + 1
        if rounding == "ceil" and drop and (out - 1) * s >= n + pb:
            out -= 1      # ONNX: the last ceil window may not start in the end padding
        axes.append(Axis(n, k, s, d, pb, pe, out))
    return axes


def dst_shape(src_shape, attrs):
    """Output shape in data_format order."""
    channels_last = _choice(attrs, "data_format", ("NXC", "NCX")) == "NXC"
    spatial = src_shape[1:-1] if channels_last else src_shape[2:]
    outs = tuple(a.out for a in resolve_geometry(tuple(spatial), attrs))
    if channels_last:
        return (src_shape[0],) + outs + (src_shape[-1],)
    return (src_shape[0], src_shape[1]) + outs


# ---------------------------------------------------------------- one window

def _window_max(values):
    """(value, position in `values`) of the first maximum; a NaN wins at once
    (first NaN).  None for an empty window."""
    best = None
    for i, v in enumerate(values):
        if math.isnan(v):
            return v, i
        if best is None or v > values[best]:
            best = i
    return None if best is None else (values[best], best)


def _divisor(axes, window, policy, where):
    """Number of taps the average divides by, for a window given as per-axis tap lists."""
    if policy == "kernel":
        return math.prod(a.k for a in axes)
    if policy == "exclude_pad":
        counts = [sum(0 <= t < a.n for t in taps) for a, taps in zip(axes, window)]
    else:   # padded_extent: taps inside [-pb, n + pe), the ceil overhang not counted
        counts = [sum(-a.pb <= t < a.n + a.pe for t in taps) for a, taps in zip(axes, window)]
    for axis, count in enumerate(counts):
        if count == 0:
            raise ValueError(f"reference: {policy} average at output position {where} has "
                             f"no tap to divide by on axis {axis}")
    return math.prod(counts)


def _average(values, divisor):
    """Exact mean as a Fraction; IEEE float arithmetic once a NaN or inf is involved."""
    if not all(math.isfinite(v) for v in values):
        return sum(values) / divisor        # NaN propagates, inf - inf is NaN
    return sum((Fraction(v) for v in values), Fraction(0)) / divisor


def _quantized_average(values, divisor, scales):
    """Exact x_scale*(mean of (x - x_zp), padding counted as real zero)/y_scale + y_zp."""
    x_scale, x_zp, y_scale, y_zp = scales
    total = sum(Fraction(v - x_zp) for v in values)
    return x_scale * total / divisor / y_scale + y_zp


# ---------------------------------------------------------------- whole tensor

def _flat_index(n, c, position, channels, spatial, channels_last, column_major):
    """Flat int64 index of src element (n, c, position) in data_format order, with a
    row- or column-major spatial part."""
    if column_major:
        linear, stride = 0, 1
        for p, size in zip(position, spatial):
            linear += p * stride
            stride *= size
    else:
        linear = 0
        for p, size in zip(position, spatial):
            linear = linear * size + p
    size = math.prod(spatial)
    if channels_last:
        return (n * size + linear) * channels + c
    return (n * channels + c) * size + linear


def _settings(src, attrs):
    kind = attrs["kind"]
    if kind not in ("AvgPool", "MaxPool"):
        raise ValueError(f"reference: kind={kind!r}")
    name = dtype_name(src.dtype)
    if "dtype" in attrs and dtype_name(attrs["dtype"]) != name:
        raise TypeError(f"reference: src dtype {name} differs from attrs dtype {attrs['dtype']}")
    quant = [attrs.get(key) for key in QUANT_KEYS]
    quantized = kind == "AvgPool" and name in INTEGER_DTYPES
    if quantized and None in quant:
        raise ValueError("reference: quantized AvgPool needs all four scales/zero points")
    exclude = attrs.get("exclude_pad")
    if kind == "AvgPool":
        policy = "exclude_pad" if exclude else _choice(
            attrs, "include_pad_divisor", ("kernel", "padded_extent"))
    else:
        policy = None
    scales = None
    if quantized:   # the scales are single-precision attributes
        scales = (Fraction(float(np.float32(quant[0]))), int(quant[1]),
                  Fraction(float(np.float32(quant[2]))), int(quant[3]))
    return kind, name, policy, scales


def _pool_exact(src, attrs):
    """Exact per-element results: (NCX dst shape, channels_last, dtype name, kind,
    values, indices), values and indices being dicts keyed by (n, c, *output position);
    a value is a Fraction, a float (NaN/inf involved), an int (integer max) or None
    (max over no input element)."""
    src = np.asarray(src)
    kind, name, policy, scales = _settings(src, attrs)
    channels_last = _choice(attrs, "data_format", ("NXC", "NCX")) == "NXC"
    if not 3 <= src.ndim <= 5:
        raise ValueError(f"reference: src rank {src.ndim} is not 3..5")
    ncx = np.moveaxis(src, -1, 1) if channels_last else src
    batch, channels, *spatial = ncx.shape
    axes = resolve_geometry(tuple(spatial), attrs)
    column_major = _choice(attrs, "index_order", ("row_major", "column_major")) == "column_major"
    out_spatial = tuple(a.out for a in axes)

    values, indices = {}, {}
    for opos in itertools.product(*(range(a.out) for a in axes)):
        window = [a.taps(o) for a, o in zip(axes, opos)]
        inside = [p for p in itertools.product(*window)
                  if all(0 <= t < a.n for t, a in zip(p, axes))]
        divisor = _divisor(axes, window, policy, opos) if kind == "AvgPool" else None
        for n, c in itertools.product(range(batch), range(channels)):
            taps = [ncx[(n, c) + p].item() for p in inside]
            taps = [float(t) if name not in INTEGER_DTYPES else int(t) for t in taps]
            key = (n, c) + opos
            if kind == "MaxPool":
                found = _window_max(taps)
                values[key] = None if found is None else found[0]
                indices[key] = -1 if found is None else _flat_index(
                    n, c, inside[found[1]], channels, spatial, channels_last, column_major)
            elif scales is not None:
                values[key] = _quantized_average(taps, divisor, scales)
            else:
                values[key] = _average(taps, divisor)
    return (batch, channels) + out_spatial, channels_last, name, kind, values, indices


def _to_layout(array, channels_last):
    return np.ascontiguousarray(np.moveaxis(array, 1, -1)) if channels_last else array


def pool(src, attrs, with_indices=False):
    """dst (numpy array of src's dtype, data_format order); with_indices (MaxPool
    only): (dst, int64 indices)."""
    shape, channels_last, name, kind, values, indices = _pool_exact(src, attrs)
    if with_indices and kind != "MaxPool":
        raise ValueError("reference: indices exist only for MaxPool")
    dst = np.empty(shape, NUMPY_DTYPES[name])
    for key, value in values.items():
        if value is None:
            dst[key] = lowest(name)
        elif name in INTEGER_DTYPES:
            dst[key] = value if kind == "MaxPool" else round_half_even_saturate(value, name)
        else:
            # the assignment is exact: round_to_dtype returns a representable value
            dst[key] = round_to_dtype(value, name)
    dst = _to_layout(dst, channels_last)
    if not with_indices:
        return dst
    idx = np.empty(shape, np.int64)
    for key, value in indices.items():
        idx[key] = value
    return dst, _to_layout(idx, channels_last)


def unrounded_average(src, attrs):
    """AvgPool results before the final rounding (quantized: before round/saturate),
    as float64 in data_format order."""
    shape, channels_last, _, kind, values, _ = _pool_exact(src, attrs)
    if kind != "AvgPool":
        raise ValueError("reference: unrounded_average is for AvgPool")
    out = np.empty(shape, np.float64)
    for key, value in values.items():
        out[key] = float(value)
    return _to_layout(out, channels_last)


# ---------------------------------------------------------------- a second formulation

def padded_formulation(src, attrs):
    """The same pooling built another way, vectorised over N and C: pad the input
    explicitly (marking what is input and what is padded extent), cut each window with
    a strided slice, reduce in float64.  Returns (f64 values, int64 indices) in
    data_format order; ValueError where the spec has no answer.  Not quantized.  Used to cross-check
    the oracle and to check tensors too large for it."""
    src = np.asarray(src)
    name = dtype_name(src.dtype)
    channels_last = _choice(attrs, "data_format", ("NXC", "NCX")) == "NXC"
    column_major = _choice(attrs, "index_order", ("row_major", "column_major")) == "column_major"
    ncx = np.moveaxis(src, -1, 1) if channels_last else src
    batch, channels, *spatial = ncx.shape
    axes = resolve_geometry(tuple(spatial), attrs)

    # flat index of every src element, in the caller's layout and index order
    size = math.prod(spatial)
    linear = np.arange(size).reshape(spatial[::-1]).T if column_major else np.arange(size).reshape(spatial)
    n = np.arange(batch).reshape((-1, 1) + (1,) * len(spatial))
    c = np.arange(channels).reshape((1, -1) + (1,) * len(spatial))
    flat = (n * size + linear) * channels + c if channels_last else (n * channels + c) * size + linear

    widths = []
    for a in axes:
        reach = (a.out - 1) * a.s + (a.k - 1) * a.d + 1        # padded length the windows use
        widths.append((a.pb, max(a.pe, reach - a.n - a.pb)))
    spatial_pad = [(0, 0), (0, 0)] + widths
    values = np.pad(ncx.astype(np.float64), spatial_pad)
    in_input = np.pad(np.ones(ncx.shape, bool), spatial_pad)
    flat = np.pad(flat, spatial_pad, constant_values=-1)
    extent = np.zeros(values.shape[2:], bool)
    extent[tuple(slice(0, a.pb + a.n + a.pe) for a in axes)] = True

    out = np.zeros((batch, channels) + tuple(a.out for a in axes))
    index = np.full(out.shape, -1, np.int64)
    for opos in np.ndindex(*out.shape[2:]):
        taps = tuple(slice(o * a.s, o * a.s + (a.k - 1) * a.d + 1, a.d) for o, a in zip(opos, axes))
        window = (slice(None), slice(None)) + taps
        v = values[window].reshape((batch, channels, -1))
        inside = in_input[window].reshape(v.shape)
        here = (slice(None), slice(None)) + opos
        if attrs["kind"] == "MaxPool":
            nan = np.isnan(v) & inside
            with np.errstate(invalid="ignore"):
                best = np.where(inside, v, -np.inf).max(axis=-1, keepdims=True)
            # candidates: the NaNs if the window has one, else the input taps equal to the max
            hit = np.where(nan.any(-1, keepdims=True), nan, inside & (v == best))
            first = hit.argmax(axis=-1)[..., None]              # first candidate in scan order
            chosen = np.take_along_axis(v, first, -1)[..., 0]
            ids = np.take_along_axis(flat[window].reshape(v.shape), first, -1)[..., 0]
            out[here] = np.where(inside.any(-1), chosen, lowest(name))
            index[here] = np.where(inside.any(-1), ids, -1)
        else:
            if attrs.get("exclude_pad"):
                divisor = inside[0, 0].sum()
            elif attrs.get("include_pad_divisor") == "padded_extent":
                divisor = extent[taps].sum()
            else:
                divisor = math.prod(a.k for a in axes)
            if divisor == 0:
                raise ValueError(f"padded_formulation: no tap to divide by at {opos}")
            out[here] = v.sum(-1) / divisor
    if channels_last:
        out, index = np.moveaxis(out, 1, -1), np.moveaxis(index, 1, -1)
    return out, index


# ---------------------------------------------------------------- comparing results

def assert_within_ulp(got, want, name, max_ulp, context=""):
    """got and want hold the same NaNs and infinities, and elsewhere differ by at most
    max_ulp units in the last place of dtype `name` at want (integer dtypes: by max_ulp)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{context}: shape {got.shape} != {want.shape}"
    if name in INTEGER_DTYPES:
        allowed = np.full(want.shape, float(max_ulp))
    else:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{context}: NaNs")
        finite = np.isfinite(want)
        np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=f"{context}: infinities")
        allowed = np.array([max_ulp * ulp(w, name) if math.isfinite(w) else 0.0
                            for w in want.ravel()]).reshape(want.shape)
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(got - want) <= allowed) & np.isfinite(want)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(
            f"{context}: {int(bad.sum())} element(s) beyond {max_ulp} ulp of {name}; "
            f"first at {where}: got {got[where]!r}, want {want[where]!r}")
