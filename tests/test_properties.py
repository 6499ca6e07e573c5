"""Randomised comparison of dnnpool with the reference oracle over every kind, dtype,
layout, rank, rounding, auto_pad, dilation, padding and policy, on small tensors.

Tolerances (the reference is exact and rounds once):
  MaxPool, any dtype ........ exact values and exact indices
  f64 AvgPool ............... 1e-12 relative (+1e-12 * max|src| absolute: summation order)
  f32 AvgPool ............... 1e-5 relative (+1e-5 * max|src| absolute: f32 summation order)
  f16/bf16 AvgPool .......... 1 unit in the last place of the destination type: the values
                              drawn make every f32 sum exact, so dnnpool's only extra error
                              is the f32 division before its single final rounding
  quantized s8/u8 AvgPool ... exact, except off by at most 1 where the exact value lies
                              within f32 rounding error of a .5 tie: dnnpool requantizes in
                              f32 (as ONNX Runtime does), which may land on either side.
Configurations the spec refuses (kernel larger than the padded input, an average whose
divisor would be 0) must raise ValueError in dnnpool and in the reference.
"""

import copy
import os

import numpy as np
import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

import dnnpool as dp
import reference

# examples per property; raise it (e.g. 5000) for a thorough local hunt
EXAMPLES = int(os.environ.get("DNNPOOL_HYPOTHESIS_EXAMPLES", "200"))

FLOATS = ("f32", "f64", "f16", "bf16")
INTEGERS = ("s8", "u8")
SPATIAL_MAX = {1: 9, 2: 6, 3: 4}
MEDIUM_SPATIAL_MAX = {1: 80, 2: 24, 3: 9}


# ---------------------------------------------------------------- configurations

def _per_axis(draw, rank, low, high, label):
    """A list of one value per spatial axis, or None (the default)."""
    if draw(st.booleans(), f"{label} default"):
        return None
    return draw(st.lists(st.integers(low, high), min_size=rank, max_size=rank), label)


def _spelling(draw, value):
    """Enum spellings are case-insensitive: use any case."""
    return draw(st.sampled_from([value, value.upper(), value.capitalize()]))


@st.composite
def window_attrs(draw, rank, largest=3, largest_pad=4, largest_dilation=3):
    """kernel, strides, dilations, pads, auto_pad, rounding and the drop policy."""
    return {
        "kernel": draw(st.lists(st.integers(1, largest), min_size=rank, max_size=rank), "kernel"),
        "strides": _per_axis(draw, rank, 1, largest, "strides"),
        "dilations": _per_axis(draw, rank, 1, largest_dilation, "dilations"),
        "pads_begin": _per_axis(draw, rank, 0, largest_pad, "pads_begin"),
        "pads_end": _per_axis(draw, rank, 0, largest_pad, "pads_end"),
        "auto_pad": _spelling(draw, draw(st.sampled_from(
            ["none", "none", "same_upper", "same_lower", "valid"]))),
        "rounding_type": draw(st.sampled_from(["floor", "ceil"]), "rounding_type"),
        "drop_end_pad_windows": draw(st.booleans(), "drop_end_pad_windows"),
    }


@st.composite
def configs(draw, kind, dtypes, medium=False, long_rows=False):
    """A whole test configuration: PoolingDesc attributes, src values and views, dst.
    medium: tensors and windows too large for the loop oracle (for padded_formulation).
    long_rows (with medium): batch-1 channels-last rows of 800-3000 columns over 24-160
    channels, 1-D or 1-3 rows of 2-D, which the channel kernel splits along W for
    the threads (plan_row_segments)."""
    if long_rows:
        rank = draw(st.integers(1, 2), "rank")
        data_format, batch = "NXC", 1
        channels = draw(st.sampled_from([24, 64, 100, 160]), "C")
        spatial = [draw(st.integers(1, 3), "H")] * (rank - 1) + [draw(st.integers(800, 3000), "W")]
    else:
        rank = draw(st.integers(1, 3), "rank")
        data_format = draw(st.sampled_from(["NXC", "NCX"]), "data_format")
        batch = draw(st.integers(1, 2), "N")
        channels = draw(st.sampled_from([1, 3, 16, 33] if medium else [1, 2, 3, 8, 17]), "C")
        largest = (MEDIUM_SPATIAL_MAX if medium else SPATIAL_MAX)[rank]
        spatial = draw(st.lists(st.integers(1, largest), min_size=rank, max_size=rank))
    src_shape = ((batch, *spatial, channels) if data_format == "NXC"
                 else (batch, channels, *spatial))
    dtype = draw(st.sampled_from(dtypes), "dtype")
    window = window_attrs(rank, largest=5, largest_pad=6) if medium else window_attrs(rank)
    attrs = {"kind": kind, "src_shape": src_shape, "dtype": dtype, "data_format": data_format,
             **draw(window)}
    if kind == "AvgPool":
        attrs["exclude_pad"] = draw(st.booleans(), "exclude_pad")
        attrs["include_pad_divisor"] = draw(st.sampled_from(["kernel", "padded_extent"]))
        if dtype in INTEGERS:
            low, high = reference.INTEGER_RANGES[dtype]
            attrs["src_scale"] = draw(st.sampled_from([0.003, 0.02, 0.1, 0.5, 1.0, 1.7]))
            attrs["dst_scale"] = draw(st.sampled_from([0.003, 0.02, 0.1, 0.37, 1.0, 2.5]))
            attrs["src_zero_point"] = draw(st.integers(low, high), "src_zero_point")
            attrs["dst_zero_point"] = draw(st.integers(low, high), "dst_zero_point")
    else:
        attrs["index_order"] = draw(st.sampled_from(["row_major", "column_major"]))
    return {
        "attrs": attrs,
        "seed": draw(st.integers(0, 2**32 - 1), "seed"),
        "values": draw(st.sampled_from(["ties", "spread", "special"]), "values"),
        "src_view": draw(st.sampled_from(["contiguous", "strided", "permuted", "reversed"])),
        "dst": draw(st.sampled_from([None, "contiguous", "strided"]), "dst"),
        "with_indices": kind == "MaxPool" and draw(st.booleans(), "with_indices"),
    }


# ---------------------------------------------------------------- data

def _values(rng, dtype, shape, mode):
    """Random src values; the float grids keep every f32 window sum exact."""
    if dtype in INTEGERS:
        low, high = reference.INTEGER_RANGES[dtype]
        if mode == "ties":
            low, high = max(low, -2), min(high, 3)
        return rng.integers(low, high + 1, shape).astype(reference.NUMPY_DTYPES[dtype])
    if mode == "ties":
        x = rng.integers(-3, 4, shape).astype(np.float64)
    elif dtype == "f16":
        x = rng.integers(-4096, 4097, shape) * 2.0**-6
    elif dtype == "bf16":
        x = rng.integers(-255, 256, shape) * 2.0 ** rng.integers(-4, 5, shape)
    else:
        x = rng.uniform(-100, 100, shape)
    if mode == "special":
        specials = rng.choice([np.nan, np.inf, -np.inf, -0.0], size=shape)
        x = np.where(rng.random(shape) < 0.15, specials, x)
    return x.astype(reference.NUMPY_DTYPES[dtype])


def _as_view(array, how, rng):
    """The same logical array, stored with other strides."""
    if how == "strided":
        axis = int(rng.integers(array.ndim))
        shape = list(array.shape)
        shape[axis] *= 2
        big = np.zeros(shape, array.dtype)
        index = [slice(None)] * array.ndim
        index[axis] = slice(None, None, 2)
        big[tuple(index)] = array
        return big[tuple(index)]
    if how == "permuted":
        order = rng.permutation(array.ndim)
        stored = np.ascontiguousarray(array.transpose(order))
        return stored.transpose(np.argsort(order))
    if how == "reversed":
        flip = tuple(slice(None, None, -1) for _ in range(array.ndim))
        return np.ascontiguousarray(array[flip])[flip]
    return array


# ---------------------------------------------------------------- comparison

def _run_dnnpool(config, src, rng, threads=0):
    pd = dp.PoolingDesc(**config["attrs"])
    prim = dp.Pooling(pd, num_threads=threads)
    dst = None
    if config["dst"] is not None:   # a caller-provided output, possibly strided
        filler = np.full(tuple(pd.dst_shape), 7, reference.NUMPY_DTYPES[config["attrs"]["dtype"]])
        dst = _as_view(filler, config["dst"], rng)
    if config["with_indices"]:
        got, indices = prim.execute(src, dst=dst, with_indices=True)
    else:
        got, indices = prim.execute(src, dst=dst), None
    if dst is not None:
        assert got is dst, "execute(src, dst=out) must return out itself"
    return got, indices


def _assert_average_close(got, want, config, src):
    dtype = config["attrs"]["dtype"]
    if dtype in ("f16", "bf16"):
        reference.assert_within_ulp(got, want, dtype, 1, "AvgPool")
        return
    finite = np.abs(src.astype(np.float64)[np.isfinite(src.astype(np.float64))])
    scale = finite.max() if finite.size else 1.0
    tol = 1e-12 if dtype == "f64" else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=tol, atol=tol * scale)


def _assert_quantized_close(got, want, src, attrs):
    exact = reference.unrounded_average(src, attrs)
    distance_to_tie = np.abs(np.abs(exact - np.floor(exact)) - 0.5)
    near_tie = distance_to_tie <= 1e-5 * (1 + np.abs(exact) + abs(attrs["dst_zero_point"]))
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert (diff[~near_tie] == 0).all(), (
        f"quantized result differs away from a tie at {np.argwhere((diff > 0) & ~near_tie)[0]}")
    assert (diff <= 1).all(), f"quantized result off by {diff.max()}"


def check_against_reference(config):
    attrs = config["attrs"]
    note(f"attrs={attrs}")
    rng = np.random.default_rng(config["seed"])
    logical = _values(rng, attrs["dtype"], attrs["src_shape"], config["values"])
    src = _as_view(logical, config["src_view"], rng)
    before = src.copy()
    note(f"src={logical.tolist()}")
    try:
        expected = reference.pool(logical, attrs, with_indices=config["with_indices"])
    except ValueError as refusal:
        note(f"reference refuses: {refusal}")
        event("refused by the spec")
        with pytest.raises(ValueError):
            _run_dnnpool(config, src, rng)
        return
    event("compared")
    want, want_indices = expected if config["with_indices"] else (expected, None)
    got, indices = _run_dnnpool(config, src, rng)
    assert before.tobytes() == src.tobytes(), "execute modified src"
    assert got.dtype == want.dtype and got.shape == want.shape
    if attrs["kind"] == "MaxPool":
        # as f64: NaN positions must match too (numpy's NaN check misses bfloat16)
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
        if config["with_indices"]:
            assert indices.dtype == np.int64
            np.testing.assert_array_equal(indices, want_indices)
    elif attrs["dtype"] in INTEGERS:
        _assert_quantized_close(got, want, logical, attrs)
    else:
        _assert_average_close(got, want, config, logical)


def check_against_vectorised_reference(config, threads=(0,)):
    """As check_against_reference, against reference.padded_formulation (unrounded f64),
    for tensors large enough to reach the kernels' interior fast paths; run at each
    of `threads` (0: the default count), which must give the same bits."""
    attrs = config["attrs"]
    note(f"attrs={attrs}")
    rng = np.random.default_rng(config["seed"])
    logical = _values(rng, attrs["dtype"], attrs["src_shape"], config["values"])
    src = _as_view(logical, config["src_view"], rng)
    try:
        want, want_indices = reference.padded_formulation(logical, attrs)
    except ValueError:
        with pytest.raises(ValueError):
            _run_dnnpool(config, src, rng)
        return
    dst_rng = copy.deepcopy(rng)   # every count writes the same dst layout
    got, indices = _run_dnnpool(config, src, rng, threads[0])
    for count in threads[1:]:
        other, other_indices = _run_dnnpool(config, src, copy.deepcopy(dst_rng), count)
        assert np.ascontiguousarray(other).tobytes() == np.ascontiguousarray(got).tobytes(), f"{count} threads"
        assert other_indices is None or np.array_equal(other_indices, indices), f"{count} threads"
    assert got.shape == want.shape
    if attrs["kind"] == "MaxPool":
        np.testing.assert_array_equal(got.astype(np.float64), want)
        if config["with_indices"]:
            np.testing.assert_array_equal(indices, want_indices)
    else:       # 1 ulp of the unrounded mean: the rounding's half ulp plus f32 division error
        _assert_average_close(got, want, config, logical)


# ---------------------------------------------------------------- the properties

@settings(max_examples=EXAMPLES)
@given(configs("MaxPool", FLOATS + INTEGERS))
def test_maxpool_matches_reference(config):
    check_against_reference(config)


@settings(max_examples=EXAMPLES)
@given(configs("AvgPool", FLOATS))
def test_float_avgpool_matches_reference(config):
    check_against_reference(config)


@settings(max_examples=EXAMPLES)
@given(configs("AvgPool", INTEGERS))
def test_quantized_avgpool_matches_reference(config):
    check_against_reference(config)


@settings(max_examples=EXAMPLES // 2)
@given(st.sampled_from(["AvgPool", "MaxPool"]).flatmap(
    lambda kind: configs(kind, FLOATS + (INTEGERS if kind == "MaxPool" else ()), medium=True)))
def test_medium_tensors_match_vectorised_reference(config):
    check_against_vectorised_reference(config)


@settings(max_examples=EXAMPLES // 4)
@given(st.sampled_from(["AvgPool", "MaxPool"]).flatmap(
    lambda kind: configs(kind, FLOATS + (INTEGERS if kind == "MaxPool" else ()), medium=True, long_rows=True)))
def test_long_channels_last_rows_match_vectorised_reference_at_any_thread_count(config):
    try:
        name = dp.Pooling(dp.PoolingDesc(**config["attrs"])).kernel_name
        event("rows split into segments" if "+segments" in name else "whole rows")
    except ValueError:
        event("refused by the spec")   # (checked below)
    check_against_vectorised_reference(config, threads=(1, 2, 3))


@settings(max_examples=EXAMPLES)
@given(st.sampled_from(["AvgPool", "MaxPool"]), st.data())
def test_shape_and_resolved_pads_match_reference(kind, data):
    """Geometry only, on larger lengths and kernels than the value tests can afford."""
    rank = data.draw(st.integers(1, 3), "rank")
    spatial = data.draw(st.lists(st.integers(1, 40), min_size=rank, max_size=rank), "spatial")
    attrs = {"kind": kind, "src_shape": (2, 3, *spatial), "data_format": "NCX",
             **data.draw(window_attrs(rank, largest=9, largest_pad=9, largest_dilation=4))}
    try:
        axes = reference.resolve_geometry(tuple(spatial), attrs)
    except ValueError:
        with pytest.raises(ValueError):
            dp.PoolingDesc(**attrs)
        return
    pd = dp.PoolingDesc(**attrs)
    assert tuple(pd.dst_shape) == reference.dst_shape(attrs["src_shape"], attrs)
    assert tuple(pd.pads_begin) == tuple(a.pb for a in axes)
    assert tuple(pd.pads_end) == tuple(a.pe for a in axes)


def test_nan_and_ties_worked_example_in_both_layouts():
    """First NaN wins and its index is reported; ties keep the first maximum."""
    row = [3.0, 1.0, 3.0, np.nan, 2.0, np.nan, 0.0]
    src = np.array([[row, row[::-1]]], dtype=np.float32)          # N=1, C=2, W=7
    for data_format, x in (("NCX", src), ("NXC", np.ascontiguousarray(src.transpose(0, 2, 1)))):
        dst, idx = dp.max_pool(x, kernel=[3], data_format=data_format, with_indices=True)
        if data_format == "NXC":
            dst, idx = dst.transpose(0, 2, 1), idx.transpose(0, 2, 1)
            to_ncx = lambda i: np.where(i < 0, i, (i % 2) * 7 + i // 2)
            idx = to_ncx(idx)
        np.testing.assert_array_equal(dst[0, 0], [3.0, np.nan, np.nan, np.nan, np.nan])
        np.testing.assert_array_equal(idx[0, 0], [0, 3, 3, 3, 5])
        # reversed row: [0, nan, 2, nan, 3, 1, 3] -> first NaNs at 1, 1, 3, 3; then 3 @4
        np.testing.assert_array_equal(idx[0, 1], [7 + 1, 7 + 1, 7 + 3, 7 + 3, 7 + 4])
