"""Every kernel path the planner can choose, on tensors large enough to reach it.

The property tests use small tensors; the fast paths (register-blocked NXC, the
separable passes with stride phases, the large-window algorithms, the global
reductions, long channel rows) only start beyond some size.  Each case here is
checked against the vectorised reference (reference.padded_formulation) and,
for the instruction sets this CPU has, with every ISA variant (DNNPOOL_ISA caps
the dispatch in a subprocess).
"""
import math
import os
import re
import sys

import ml_dtypes
import numpy as np
import pytest

import dnnpool as dp
import reference
from dnnpool.dtypes import numpy_dtype
from childproc import run_python

# (label, kind, NCX shape, attrs) -- shapes are given channels-first and used in both layouts.
CASES = [
    ("resnet-like k3 s2 p1", "MaxPool", (1, 8, 29, 31), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ("inception-like avg k3 s1 exclude", "AvgPool", (1, 12, 17, 19),
     dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=True)),
    ("vgg-like k2 s2", "MaxPool", (2, 6, 24, 22), dict(kernel=[2, 2], strides=[2, 2])),
    # NXC stride-1 rows: the full windows of a row as one flat row (each input
    # position's rows pooled once, then a window's columns), blocks aligned to
    # src with overlapping head and tail vectors; border columns point by point
    ("k3 s1 avg exclude, flat rows", "AvgPool", (2, 37, 13, 15),
     dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=True)),
    ("k2 s1 max, flat rows", "MaxPool", (1, 40, 9, 11), dict(kernel=[2, 2])),
    ("3d k3 s1 avg, flat rows of nine pooled rows", "AvgPool", (1, 20, 5, 6, 7),
     dict(kernel=[3, 3, 3], pads_begin=[1, 1, 1], pads_end=[1, 0, 1])),
    ("k3 s1 avg, 3 channels (a block reads back its own pooled rows)", "AvgPool", (2, 3, 9, 40),
     dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=True)),
    ("k5x4 s1 max dilated along W (window size at run time)", "MaxPool", (1, 10, 11, 30),
     dict(kernel=[5, 4], dilations=[1, 2], pads_begin=[2, 3], pads_end=[2, 3])),
    ("1d k3 s1 avg, flat rows of one input row", "AvgPool", (2, 20, 50), dict(kernel=[3], pads_begin=[1], pads_end=[1])),
    ("1d k3 s1 max, flat rows of one input row", "MaxPool", (2, 20, 50), dict(kernel=[3], pads_begin=[1], pads_end=[1])),
    ("k2x3 s1 avg ceil, windows starting in the padding", "AvgPool", (1, 9, 10, 12),
     dict(kernel=[2, 3], pads_begin=[0, 2], pads_end=[1, 2], rounding_type="ceil")),
    ("stride 3 k3", "AvgPool", (1, 5, 23, 25), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[1, 0], pads_end=[2, 1])),
    ("stride 4 k4 1d", "AvgPool", (2, 9, 203), dict(kernel=[4], strides=[4])),
    # NCX short rows under strided windows: the taps straight from src (runs
    # of rows together), not every row widened first
    ("k1x5 s2 avg, short rows decimated along H", "AvgPool", (1, 4, 15, 27),
     dict(kernel=[1, 5], strides=[2, 2], pads_begin=[0, 2], pads_end=[0, 2])),
    # NCX k2/k3 s2, k3 s3, k4 s4 rows of 64 or more finish in registers
    # (stride phases by shuffles), the last block of a row overlapping the one before
    ("k3 s2 avg exclude ceil, wide rows with a tail", "AvgPool", (1, 3, 13, 133),
     dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=True, rounding_type="ceil")),
    ("k2 s2 max, wide rows", "MaxPool", (1, 2, 10, 70), dict(kernel=[2, 2], strides=[2, 2])),
    ("k3 s3 avg, wide padded rows", "AvgPool", (1, 2, 8, 100), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[0, 2], pads_end=[1, 2])),
    # windows with gaps between them (k < s), finished in registers from
    # the padded rows like k = s
    ("k2 s3 max, windows with gaps", "MaxPool", (2, 3, 9, 100), dict(kernel=[2, 2], strides=[3, 3])),
    ("k3 s4 avg exclude ceil, windows with gaps, padded", "AvgPool", (1, 3, 12, 92),
     dict(kernel=[3, 3], strides=[4, 4], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=True, rounding_type="ceil")),
    ("1d k2 s4 max, windows with gaps, padded", "MaxPool", (2, 5, 301), dict(kernel=[2], strides=[4], pads_begin=[1], pads_end=[1])),
    # NCX src rows 4 KB apart (1020 values): a window's taps in passes that
    # continue the partial results; each pass over a row of whole vectors
    # ends with a last vector overlapping the one before (maxima) or with
    # single values (sums: the overlap would count twice)
    ("k9 s2 avg, rows 4 KB apart: taps in passes, rows with a tail", "AvgPool", (1, 2, 21, 1020),
     dict(kernel=[9, 9], strides=[2, 2], pads_begin=[4, 4], pads_end=[4, 4])),
    ("k9 s2 max, rows 4 KB apart: taps in passes, rows with a tail", "MaxPool", (1, 2, 21, 1020),
     dict(kernel=[9, 9], strides=[2, 2], pads_begin=[4, 4], pads_end=[4, 4])),
    ("3d k3 s2 p1 max, wide rows", "MaxPool", (1, 2, 5, 6, 70),
     dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ("k2 s2 1d max straight from src rows", "MaxPool", (2, 5, 75), dict(kernel=[2], strides=[2])),
    # ... and unpadded along W, whole windows straight from src rows: the
    # window's (d, h) rows combined per load, then its taps
    ("k3 s2 avg exclude ceil, unpadded W, rows clipped at the H border", "AvgPool", (1, 3, 12, 81),
     dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 0], pads_end=[1, 0], exclude_pad=True, rounding_type="ceil")),
    ("k2x4 s3x4 avg, rows dilated along H, padding counted", "AvgPool", (1, 2, 17, 64),
     dict(kernel=[2, 4], strides=[3, 4], dilations=[2, 1], pads_begin=[1, 0], pads_end=[1, 0])),
    ("3d k2 s2 max, depth rows straight from src", "MaxPool", (1, 3, 6, 7, 66),
     dict(kernel=[2, 2, 2], strides=[2, 2, 2])),
    ("k3 s3 max, unpadded rows", "MaxPool", (2, 2, 9, 75), dict(kernel=[3, 3], strides=[3, 3])),
    ("k3 s2 1d avg unpadded (windows past the stride)", "AvgPool", (2, 3, 81), dict(kernel=[3], strides=[2])),
    # ceil windows wholly in the end padding hold no input element: maxima
    # give the lowest value there (NXC under half a vector of channels:
    # not decimated rows, whose padding holds identities)
    ("k3 s2 max ceil, last windows wholly in the end padding", "MaxPool", (2, 3, 5, 7),
     dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[3, 3], rounding_type="ceil")),
    ("k2 s2 max ceil, last windows wholly in the end padding", "MaxPool", (1, 8, 6, 9),
     dict(kernel=[2, 2], strides=[2, 2], pads_end=[2, 2], rounding_type="ceil")),
    ("large window k15 avg exclude", "AvgPool", (1, 3, 40, 45),
     dict(kernel=[15, 15], pads_begin=[7, 7], pads_end=[7, 7], exclude_pad=True)),
    ("large window k15 max", "MaxPool", (1, 3, 40, 45), dict(kernel=[15, 15], pads_begin=[7, 7], pads_end=[7, 7])),
    ("large window k11 avg padded extent ceil", "AvgPool", (1, 2, 37, 33),
     dict(kernel=[11, 9], strides=[1, 1], pads_begin=[5, 4], pads_end=[5, 4], rounding_type="ceil",
          include_pad_divisor="padded_extent", drop_end_pad_windows=True)),
    # NCX rows of 256 or more positions: window blocks stream down each plane
    # (a block's suffix rows and the next block's running prefix), rows outside
    # the input as identities; every chunk starting at a plane's first row
    ("large window k15 avg exclude, wide rows streamed", "AvgPool", (1, 3, 40, 250),
     dict(kernel=[15, 15], pads_begin=[7, 7], pads_end=[7, 7], exclude_pad=True)),
    ("large window k9x13 max, wide rows streamed", "MaxPool", (2, 2, 33, 260),
     dict(kernel=[9, 13], pads_begin=[4, 6], pads_end=[4, 6])),
    ("large window k11x5 avg padded extent ceil, wide rows streamed", "AvgPool", (1, 2, 30, 300),
     dict(kernel=[11, 5], pads_begin=[5, 2], pads_end=[6, 2], rounding_type="ceil",
          include_pad_divisor="padded_extent", drop_end_pad_windows=True)),
    ("k9 avg exclude, rows too wide for chunks of rows (a block of rows in L2)", "AvgPool", (1, 2, 23, 3000),
     dict(kernel=[9, 5], pads_begin=[4, 2], pads_end=[4, 2], exclude_pad=True)),
    # Mid-size stride-1 windows: the W taps fused with the finish (NCX rows
    # with an overlapping last vector, per-column divisors; NXC channels that
    # fill whole vectors, one divisor per column; 5 channels: W taps, then
    # the finish), and H taps of up to four output rows sharing their rows'
    # loads (rows next to the padding tap by tap); k9 H over NXC rows slides.
    ("k7 s1 avg, shared rows and fused W taps", "AvgPool", (1, 16, 30, 70),
     dict(kernel=[7, 7], pads_begin=[3, 3], pads_end=[3, 3])),
    ("k7x5 s1 max, shared rows and fused W taps", "MaxPool", (1, 16, 25, 66),
     dict(kernel=[7, 5], pads_begin=[3, 2], pads_end=[3, 1])),
    ("k9x7 avg exclude, per-column divisors in the fused W taps", "AvgPool", (1, 16, 22, 75),
     dict(kernel=[9, 7], pads_begin=[4, 3], pads_end=[4, 3], exclude_pad=True)),
    ("k3x6 avg ceil, rows shared in threes", "AvgPool", (2, 8, 20, 80),
     dict(kernel=[3, 6], pads_begin=[1, 2], pads_end=[1, 3], rounding_type="ceil", exclude_pad=True)),
    ("k2x5 max, rows shared in pairs", "MaxPool", (1, 8, 17, 90), dict(kernel=[2, 5], pads_begin=[0, 2], pads_end=[1, 2])),
    # NXC W pass: blocks of four output columns share their columns (from
    # column 0); 24 channels leave one vector after pairs, the last 3 of 31
    # columns go tap by tap, exclude-pad divisors differ inside a block
    ("k5x7 s1 avg exclude, W columns shared in fours, 24 channels", "AvgPool", (1, 24, 13, 31),
     dict(kernel=[5, 7], pads_begin=[2, 3], pads_end=[2, 3], exclude_pad=True)),
    ("k7x5 s1 max, W columns shared in fours, 24 channels", "MaxPool", (2, 24, 16, 30),
     dict(kernel=[7, 5], pads_begin=[3, 2], pads_end=[3, 1])),
    ("k7 s1 max, 5 channels", "MaxPool", (1, 5, 19, 70), dict(kernel=[7, 7], pads_begin=[3, 3], pads_end=[3, 3])),
    ("k33x5 max over short rows (H by doubling)", "MaxPool", (1, 3, 50, 60),
     dict(kernel=[33, 5], pads_begin=[16, 2], pads_end=[16, 2])),
    ("long 1d window k31", "AvgPool", (1, 4, 700), dict(kernel=[31], pads_begin=[15], pads_end=[15])),
    ("long 1d window k40 max", "MaxPool", (1, 4, 700), dict(kernel=[40], pads_begin=[3], pads_end=[20])),
    ("wide rows k9 avg exclude (NXC: window blocks streamed over rows of 64 lanes)", "AvgPool", (1, 64, 30, 100),
     dict(kernel=[9, 9], pads_begin=[4, 4], pads_end=[4, 4], exclude_pad=True)),
    ("wide rows k4x9 avg exclude (NXC column strips, several chunks)", "AvgPool", (1, 64, 30, 100),
     dict(kernel=[4, 9], pads_begin=[2, 4], pads_end=[1, 4], exclude_pad=True)),
    ("3d k3x7x7 max (NXC column strips with depth taps)", "MaxPool", (1, 64, 5, 12, 40),
     dict(kernel=[3, 7, 7], pads_begin=[1, 3, 3], pads_end=[1, 3, 3])),
    # src rows a multiple of 4 KB apart share L1 sets: windows of more rows than
    # ways take their taps in passes (NCX rows 4 KB, NXC rows 8 KB in f32)
    ("rows 4 KB apart k9 s2x1 avg exclude (taps in passes)", "AvgPool", (1, 2, 21, 1024),
     dict(kernel=[9, 9], strides=[2, 1], pads_begin=[4, 4], pads_end=[3, 4], exclude_pad=True)),
    ("rows 4 KB apart k11x3 s2x1 max (taps in passes)", "MaxPool", (1, 2, 23, 1024),
     dict(kernel=[11, 3], strides=[2, 1], pads_begin=[5, 1], pads_end=[5, 1])),
    ("3d planes 4 KB apart k3x5x5 avg (NXC depth taps in passes)", "AvgPool", (1, 4, 5, 7, 256),
     dict(kernel=[3, 5, 5], pads_begin=[1, 2, 2], pads_end=[1, 2, 2])),
    ("global 7x7 avg", "AvgPool", (3, 20, 7, 7), dict(kernel=[7, 7])),
    ("global 5x6 max", "MaxPool", (2, 9, 5, 6), dict(kernel=[5, 6])),
    # NCX planes of 33: a vector pair (AVX2) or two vectors and one value
    # (AVX-512), the lanes folded in registers, then the rest
    ("global 3x11 avg", "AvgPool", (2, 7, 3, 11), dict(kernel=[3, 11])),
    ("global 1x17 max", "MaxPool", (3, 5, 1, 17), dict(kernel=[1, 17])),
    ("3d k3 s2 p1 max", "MaxPool", (1, 5, 9, 12, 11), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ("3d k2 avg dilated", "AvgPool", (1, 4, 8, 9, 10), dict(kernel=[2, 2, 2], dilations=[2, 1, 2])),
    ("dilated max d3", "MaxPool", (1, 6, 21, 20), dict(kernel=[3, 3], dilations=[3, 2], pads_begin=[2, 2], pads_end=[2, 2])),
    ("wide channels (long rows)", "AvgPool", (1, 600, 6, 7), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ("wide channels max", "MaxPool", (1, 1030, 5, 5), dict(kernel=[2, 2])),
    ("wide channels global avg (NXC taps streamed in groups)", "AvgPool", (2, 1030, 7, 7), dict(kernel=[7, 7])),
    ("wide channels disjoint 3d k3 s3 max, padded (NXC taps streamed)", "MaxPool", (1, 1030, 6, 7, 6),
     dict(kernel=[3, 3, 3], strides=[3, 3, 3], pads_begin=[0, 1, 0], pads_end=[0, 1, 0])),
    # NCX MaxPool with indices over small strided windows: straight from src,
    # blocks of output columns whose loads stay inside the row (the last one
    # overlapping), border columns one by one; the window's (d, h) rows in order
    ("k3 s3 max, rows with padding at both ends", "MaxPool", (1, 3, 7, 100),
     dict(kernel=[3, 3], strides=[3, 3], pads_begin=[0, 1], pads_end=[1, 1])),
    ("1d k4 s4 max", "MaxPool", (2, 3, 203), dict(kernel=[4], strides=[4])),
    ("k3 s2 max ceil, rows dilated along H, windows ending in the padding", "MaxPool", (1, 2, 11, 90),
     dict(kernel=[3, 3], strides=[2, 2], dilations=[2, 1], pads_begin=[1, 1], pads_end=[2, 1],
          rounding_type="ceil")),
    # NXC MaxPool with indices over windows of several columns: each input
    # column's rows pooled once per output row, then the window's columns by
    # value and key (window blocks when undilated); channels not a whole
    # number of vectors (an overlapping last vector), strided and clipped windows
    ("k9 s1 max, pooled columns, 20 channels", "MaxPool", (1, 20, 21, 30),
     dict(kernel=[9, 9], pads_begin=[4, 4], pads_end=[4, 4])),
    ("k5x6 s1x2 max ceil, pooled columns with a stride", "MaxPool", (2, 12, 15, 29),
     dict(kernel=[5, 6], strides=[1, 2], pads_begin=[2, 3], pads_end=[2, 3], rounding_type="ceil")),
    ("k4 max on rows shorter than the padded window (clipped at both ends)", "MaxPool", (1, 9, 8, 3),
     dict(kernel=[4, 4], pads_begin=[3, 3], pads_end=[3, 3])),
    ("k5 s1 max, column-major indices (keys out of scan order: taps in order)", "MaxPool", (1, 16, 9, 11),
     dict(kernel=[5, 5], pads_begin=[2, 2], pads_end=[2, 2], index_order="column_major")),
    # windows whose 16 * stride + kernel equals a small window's code (k18 s1
    # reads as k2 s2): the register paths must not take them
    ("1d k18 s1 max (code of k2 s2)", "MaxPool", (1, 2, 90), dict(kernel=[18])),
    ("1d k19 s2 max (code of k3 s3)", "MaxPool", (1, 2, 91), dict(kernel=[19], strides=[2])),
    ("k20 s3 max (code of k4 s4)", "MaxPool", (1, 2, 23, 95), dict(kernel=[3, 20], strides=[1, 3])),
    ("1d k19 s1 avg (code of k3 s2)", "AvgPool", (1, 2, 90), dict(kernel=[19])),
]
LAYOUTS = ("NCX", "NXC")
DTYPES = ("f32", "f64", "f16", "bf16")
NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def make_input(kind, shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 50.0
    if kind == "MaxPool":
        # ties, infinities and a NaN exercise the first-maximum and NaN rules
        x = np.round(x / 8.0)
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 3)] = np.inf
        flat[rng.integers(0, flat.size, 3)] = -np.inf
        flat[rng.integers(0, flat.size, 1)] = np.nan
    return x.astype(NUMPY[dtype])


def kernel_variant(prim):
    """prim's kernel name less the row segments' suffix (+segmentsN: channel-kernel
    rows split along W for the threads, test_short_nxc_rows_split_into_segments)
    and the byte lanes' (+bytes: 8-bit maxima, test_8bit_maxima_pool_in_byte_lanes)."""
    return re.sub(r"(\+bytes)?(\+segments\d+)?$", "", prim.kernel_name)


def bits(a):
    """An array's bytes, for comparisons that tell +0 from -0 and one NaN from another."""
    return np.ascontiguousarray(a).view(np.uint8)


def tolerance(dtype, x):
    """Absolute tolerance for averages: relative precision of the type times the data scale."""
    eps = {"f32": 2e-6, "f64": 1e-13, "f16": 1e-3, "bf16": 8e-3}[dtype]
    return eps * float(np.nanmax(np.abs(x.astype(np.float64))))


def assert_matches_reference(got, want, kind, dtype, x):
    """Maxima exactly (want rounded to x's dtype); averages within tolerance(dtype, x),
    plus 8e-3 of the largest value for 16-bit types."""
    if kind == "MaxPool":
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(x.dtype).astype(np.float64))
    else:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=tolerance(dtype, x)
                                   + (np.abs(want).max() * 8e-3 if dtype in ("f16", "bf16") else 0))


def assert_quantized_matches_reference(got, x, full):
    """Quantized averages: the reference's values, off by one at most, and only where
    the unrounded average sits within 1e-4 of a tie (f32 requantisation may land a
    near-tie on the other side)."""
    diff = got.astype(np.int32) - reference.pool(x, full).astype(np.int32)
    exact = reference.unrounded_average(x, full)
    near_tie = np.abs(exact - np.floor(exact) - 0.5) < 1e-4 * np.maximum(1.0, np.abs(exact))
    assert np.abs(diff).max(initial=0) <= 1
    assert not np.any((diff != 0) & ~near_tie), exact[(diff != 0) & ~near_tie]


def check_case(kind, shape, attrs, layout, dtype, seed=0):
    x = make_input(kind, shape, dtype, seed)
    if layout == "NXC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format=layout, **attrs)
    prim = dp.Pooling(pd)
    want, want_idx = reference.padded_formulation(x, dict(attrs, kind=kind, data_format=layout))
    got = prim.execute(x)
    assert_matches_reference(got, want, kind, dtype, x)
    if kind == "MaxPool":
        # the indexed path: the reference's indices, and the index-free path's values
        # (compared as f64: numpy's NaN matching ignores bfloat16)
        got_with_idx, idx = prim.execute(x, with_indices=True)
        np.testing.assert_array_equal(idx, want_idx)
        np.testing.assert_array_equal(got_with_idx.astype(np.float64), got.astype(np.float64))
    return prim.kernel_name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("label,kind,shape,attrs", CASES, ids=[c[0] for c in CASES])
def test_kernel_path_matches_reference(label, kind, shape, attrs, layout, dtype):
    check_case(kind, shape, attrs, layout, dtype)


def test_cases_reach_several_kernel_variants():
    names = {check_case(kind, shape, attrs, layout, "f32").split(":")[1].split("+")[0]
             for _, kind, shape, attrs in CASES for layout in LAYOUTS}
    assert len(names) >= 3, names


@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
def test_strided_nxc_rows_match_dense_rows(kind):
    """NXC separable rows whose positions are not adjacent in memory go row by row
    instead of column strips (k4 high) or are widened one by one before window
    blocks stream over them (k9); their W pass and finish run fused either way:
    the reference's values (maxima: bit for bit the dense path's; sums may
    round a few ulps apart)."""
    x = make_input(kind, (1, 64, 30, 200), "f32", 5)
    view = np.moveaxis(x, 1, -1)[:, :, ::2, :]            # W stride 2*C: not dense rows
    for kh, path in ((4, "separable_lanes"), (9, "separable_lanes+hslide")):
        attrs = dict(kernel=[kh, 9], pads_begin=[kh // 2, 4], pads_end=[kh // 2, 4])
        prim = dp.Pooling(dp.PoolingDesc(kind, view.shape, "f32", data_format="NXC", **attrs))
        assert prim.kernel_name.split(":")[1] == path
        check_strided_against_dense(kind, prim, view, attrs)


def check_strided_against_dense(kind, prim, view, attrs):
    got = prim.execute(view)
    want, _ = reference.padded_formulation(np.ascontiguousarray(view), dict(attrs, kind=kind, data_format="NXC"))
    if kind == "MaxPool":   # exact (the input holds infinities: no tolerance would mean anything)
        np.testing.assert_array_equal(got, prim.execute(np.ascontiguousarray(view)))
    assert_matches_reference(got, want, kind, "f32", view)


@pytest.mark.parametrize("dtype", ("f32", "bf16"))
@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
def test_strided_ncx_rows_streamed_match_dense_rows(kind, dtype):
    """NCX rows whose positions are not adjacent in memory are widened before
    the window blocks stream over them: bit for bit the dense rows' results."""
    x = make_input(kind, (1, 2, 31, 540), dtype, 4)
    view = x[..., ::2]                                    # W stride 2: not dense rows
    attrs = dict(kernel=[13, 7], pads_begin=[6, 3], pads_end=[6, 3])
    prim = dp.Pooling(dp.PoolingDesc(kind, view.shape, dtype, data_format="NCX", **attrs))
    assert prim.kernel_name.split(":")[1] in ("separable+hslide", "separable+wslide+hslide",
                                              "separable+wdouble+hslide"), prim.kernel_name
    got = prim.execute(view)
    np.testing.assert_array_equal(got.astype(np.float64), prim.execute(np.ascontiguousarray(view)).astype(np.float64))
    want, _ = reference.padded_formulation(np.ascontiguousarray(view), dict(attrs, kind=kind, data_format="NCX"))
    assert_matches_reference(got, want, kind, dtype, view)


# NCX small strided windows whose vector blocks cover every output column:
# contiguous rows go straight from src, rows with a W stride through the
# stacked passes; the two must agree bit for bit.
DIRECT_ROWS = [
    ((1, 4, 24, 64), dict(kernel=[2, 2], strides=[2, 2])),
    ((1, 3, 13, 82), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 0], pads_end=[1, 0])),
    ((1, 2, 11, 96), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[1, 0], pads_end=[0, 0])),
    ((2, 2, 16, 128), dict(kernel=[4, 4], strides=[4, 4])),
    ((1, 2, 13, 70), dict(kernel=[3, 3], strides=[2, 1])),
    ((1, 2, 13, 70), dict(kernel=[2, 2], strides=[3, 1], pads_begin=[1, 0], pads_end=[1, 0])),
    ((1, 2, 5, 8, 70), dict(kernel=[2, 2, 2], strides=[2, 2, 2], pads_begin=[1, 0, 0], pads_end=[0, 1, 0])),
    # decimation (k1 s2-s4), and rows whose last windows lie past the last
    # block a row holds (k1 s2 over 57, k3 s2 over 35: one by one)
    ((1, 3, 12, 64), dict(kernel=[1, 1], strides=[2, 2])),
    ((1, 2, 9, 57), dict(kernel=[1, 1], strides=[2, 2])),
    ((1, 3, 11, 35), dict(kernel=[3, 3], strides=[2, 2])),
    ((1, 2, 7, 41), dict(kernel=[2, 3], strides=[1, 2])),
    ((1, 2, 13, 99), dict(kernel=[3, 1], strides=[2, 3], pads_begin=[1, 0], pads_end=[1, 0])),
    ((1, 2, 5, 8, 70), dict(kernel=[2, 1, 1], strides=[2, 2, 4])),
    ((2, 3, 203), dict(kernel=[1], strides=[4])),
    # overlapping W windows over more than three (d, h) rows: the stacked
    # passes either way (kDirectMaxRows); three rows go straight from src
    ((1, 2, 5, 8, 70), dict(kernel=[3, 3, 3], strides=[1, 1, 1], pads_begin=[1, 1, 0], pads_end=[1, 0, 0])),
    ((1, 2, 6, 9, 71), dict(kernel=[2, 2, 3], strides=[2, 1, 2])),
    ((1, 2, 13, 70), dict(kernel=[4, 2], strides=[2, 1])),
    ((1, 2, 5, 9, 70), dict(kernel=[1, 3, 3], strides=[1, 2, 1])),
    # windows with gaps between them (k2 s3, k2 and k3 s4): the blocks load
    # every position and keep the window's phases; the last block's loads
    # end inside the row, the windows past it one by one
    ((2, 3, 200), dict(kernel=[2], strides=[3])),
    ((1, 2, 9, 130), dict(kernel=[2, 2], strides=[3, 3])),
    ((1, 2, 7, 131), dict(kernel=[3, 2], strides=[2, 4], pads_begin=[1, 0], pads_end=[1, 0])),
    ((1, 2, 6, 150), dict(kernel=[2, 3], strides=[1, 4])),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("shape,attrs", DIRECT_ROWS, ids=[str(c[0]) for c in DIRECT_ROWS])
def test_small_strided_windows_from_src_rows_match_the_stacked_passes(shape, attrs, kind, dtype):
    attrs = dict(attrs, exclude_pad=True) if kind == "AvgPool" else attrs
    x = make_input(kind, shape[:-1] + (2 * shape[-1],), dtype, 6)
    view = x[..., ::2]                                    # W stride 2: the stacked passes
    prim = dp.Pooling(dp.PoolingDesc(kind, view.shape, dtype, data_format="NCX", **attrs))
    got = prim.execute(np.ascontiguousarray(view)).astype(np.float64)
    np.testing.assert_array_equal(got, prim.execute(view).astype(np.float64))
    want, _ = reference.padded_formulation(np.ascontiguousarray(view), dict(attrs, kind=kind, data_format="NCX"))
    assert_matches_reference(got, want, kind, dtype, view)


# NCX stride-2 windows of 2 or 3 taps that stay inside their rows: blocks
# of outputs read each window row once and split it into even and odd
# positions; a tap moved by one output takes a lane from the block before
# (padding for the first) or after.  Output rows filling whole blocks, a last
# block overlapping the one before, pads_begin of 0, 1 and 2, windows of 1,
# 2 and 3 rows, H stride 3; and, not this path, a 3-D window (4, 6 or 9
# rows) and rows the last window does not reach (ceil rounding).  The blocks
# differ per ISA (4, 8 or 16 lanes), so the ISA-capped runs take other
# splits.
PAIR_ROWS = [
    ((2, 3, 14, 64), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 3, 9, 56), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 2, 10, 70), dict(kernel=[3, 3], strides=[2, 2])),
    ((2, 2, 6, 66), dict(kernel=[3, 3], strides=[2, 2])),
    ((1, 2, 9, 66), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[2, 2], pads_end=[0, 0])),
    ((1, 4, 8, 64), dict(kernel=[2, 2], strides=[2, 2])),
    ((1, 2, 7, 50), dict(kernel=[2, 2], strides=[2, 2], pads_begin=[1, 1], pads_end=[0, 0])),
    ((1, 2, 5, 6, 56), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ((1, 2, 4, 60), dict(kernel=[1, 3], strides=[1, 2], pads_begin=[0, 1], pads_end=[0, 1])),
    ((1, 2, 11, 64), dict(kernel=[2, 3], strides=[3, 2], pads_begin=[1, 1], pads_end=[0, 1])),
    ((1, 2, 9, 64), dict(kernel=[3, 3], strides=[2, 2], rounding_type="ceil")),
]


PAIR_KINDS = [(kind, excl, dtype) for dtype in DTYPES + ("u8", "s8")
              for kind, excl in (("AvgPool", True), ("AvgPool", False), ("MaxPool", None))
              if kind == "MaxPool" or dtype not in ("u8", "s8")]   # (quantized averages: paths of their own)


@pytest.mark.parametrize("kind,exclude_pad,dtype", PAIR_KINDS)
@pytest.mark.parametrize("shape,attrs", PAIR_ROWS, ids=[str(c[0]) + str(c[1]["kernel"]) for c in PAIR_ROWS])
def test_stride_2_pairs_from_src_rows_match_the_stacked_passes(shape, attrs, kind, exclude_pad, dtype):
    """Contiguous rows (split into even and odd positions) give the bits of
    rows with a W stride (the stacked passes) and of rows spaced wider than
    they are long, the reference's values, and the same bits at 1, 2 and 3
    threads."""
    attrs = dict(attrs, exclude_pad=exclude_pad) if kind == "AvgPool" else attrs
    wide = shape[:-1] + (2 * shape[-1],)
    x = _integers(wide, dtype, 13) if dtype in ("u8", "s8") else make_input(kind, wide, dtype, 13)
    view = x[..., ::2]
    dense = np.ascontiguousarray(view)
    pd = dp.PoolingDesc(kind, view.shape, dtype, data_format="NCX", **attrs)
    got = dp.Pooling(pd).execute(dense).astype(np.float64)
    np.testing.assert_array_equal(got, dp.Pooling(pd).execute(view).astype(np.float64))
    padded_rows = np.zeros(dense.shape[:-1] + (dense.shape[-1] + 5,), dense.dtype)   # rows 5 values apart
    padded_rows[..., :dense.shape[-1]] = dense
    np.testing.assert_array_equal(got, dp.Pooling(pd).execute(padded_rows[..., :dense.shape[-1]]).astype(np.float64))
    for threads in (2, 3):
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=threads).execute(dense).astype(np.float64))
    want, _ = reference.padded_formulation(dense, dict(attrs, kind=kind, data_format="NCX"))
    assert_matches_reference(got, want, kind, dtype, dense)


# NCX "same" stride-1 windows (the plane keeps its size) over rows of at most
# 64 positions: a chunk of rows pools as one flat run of positions, its W
# taps masked at the rows' ends, a divisor per position.  Rows of 28, rows
# under a vector (vectors span rows), rows of exactly 64, asymmetric
# SAME_UPPER pads, windows wider than the plane, a 1-D row, a plane under
# one vector (no whole vector at all).
FLAT_PLANES = [
    ((1, 6, 28, 28), dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
    ((2, 5, 7, 7), dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 3, 17, 64), dict(kernel=[5, 3], pads_begin=[2, 1], pads_end=[2, 1])),
    ((1, 4, 12, 9), dict(kernel=[4, 2], pads_begin=[1, 0], pads_end=[2, 1])),
    ((1, 3, 9, 13), dict(kernel=[7, 7], pads_begin=[3, 3], pads_end=[3, 3])),
    ((1, 3, 5, 4), dict(kernel=[7, 7], pads_begin=[3, 3], pads_end=[3, 3])),
    ((2, 5, 30), dict(kernel=[3], pads_begin=[1], pads_end=[1])),
    ((1, 4, 3, 3), dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind,exclude_pad", [("AvgPool", True), ("AvgPool", False), ("MaxPool", None)])
@pytest.mark.parametrize("shape,attrs", FLAT_PLANES, ids=[str(c[0]) for c in FLAT_PLANES])
def test_same_windows_over_short_rows_pool_flat_planes(shape, attrs, kind, exclude_pad, dtype):
    """Flat planes give the maxima of the widened rows (a W stride of 2 takes
    those) bit for bit and their averages within rounding (the widened rows'
    W pass may double: its sums add in another order), the same bits at
    every thread count, and the reference's values."""
    attrs = dict(attrs, exclude_pad=exclude_pad) if kind == "AvgPool" else attrs
    x = make_input(kind, shape[:-1] + (2 * shape[-1],), dtype, 9)
    view = x[..., ::2]
    dense = np.ascontiguousarray(view)
    pd = dp.PoolingDesc(kind, dense.shape, dtype, data_format="NCX", **attrs)
    prim = dp.Pooling(pd)
    assert prim.kernel_name.endswith(":separable+plane"), prim.kernel_name
    got = prim.execute(dense).astype(np.float64)
    widened = prim.execute(view).astype(np.float64)
    if kind == "MaxPool":
        np.testing.assert_array_equal(got, widened)
    else:
        np.testing.assert_allclose(got, widened, rtol=0, atol=tolerance(dtype, view))
    for threads in (2, 3):
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=threads).execute(dense).astype(np.float64))
    want, _ = reference.padded_formulation(dense, dict(attrs, kind=kind, data_format="NCX"))
    assert_matches_reference(got, want, kind, dtype, view)



# NXC "same" stride-1 windows over rows of few (w, c) values (separable_lanes
# flat planes): a chunk of rows pools as one flat run of values, the W taps C
# values apart and masked at the rows' ends, a divisor per value.  The NCX
# planes above whose rows hold up to 64 (w, c) values (the planes every ISA
# takes: a baseline f64 vector holds 2), plus channels under a vector
# (points share vectors), rows of exactly 64 values, a 1-D row of 60, a
# plane under one vector.
NXC_FLAT_PLANES = [case for case in FLAT_PLANES if case[0][1] * case[0][-1] <= 64] + [
    ((2, 8, 7, 7), dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 8, 17, 8), dict(kernel=[5, 5], pads_begin=[2, 2], pads_end=[2, 2])),
    ((2, 2, 30), dict(kernel=[3], pads_begin=[1], pads_end=[1])),
    ((1, 2, 2, 3), dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
]


@pytest.mark.parametrize("dtype", DTYPES + ("u8",))
@pytest.mark.parametrize("kind,exclude_pad", [("AvgPool", True), ("AvgPool", False), ("MaxPool", None)])
@pytest.mark.parametrize("shape,attrs", NXC_FLAT_PLANES, ids=[str(c[0]) for c in NXC_FLAT_PLANES])
def test_nxc_same_windows_over_short_rows_pool_flat_planes(shape, attrs, kind, exclude_pad, dtype):
    """The reference's values (u8 averages quantized), the same bits at 2
    and 3 threads, and the results of the same channels as a view every
    other channel of twice as many (no flat rows: the strip passes),
    maxima bit for bit."""
    attrs = dict(attrs, exclude_pad=exclude_pad) if kind == "AvgPool" else attrs
    if dtype == "u8" and kind == "AvgPool":
        attrs = dict(attrs, src_scale=0.5, src_zero_point=7, dst_scale=0.25, dst_zero_point=3)
    n, c, *sp = shape
    wide_shape = (n, *sp, 2 * c)
    wide = _integers(wide_shape, dtype, 12) if dtype == "u8" else \
        np.ascontiguousarray(np.moveaxis(make_input(kind, (n, 2 * c, *sp), dtype, 12), 1, -1))
    view = wide[..., ::2]
    x = np.ascontiguousarray(view)
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs)
    prim = dp.Pooling(pd)
    assert prim.kernel_name.endswith(":separable_lanes+plane"), prim.kernel_name
    got = prim.execute(x)
    assert_matches_its_reference(got, x, kind, dtype, dict(attrs, kind=kind, data_format="NXC"))
    for threads in (2, 3):
        np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=threads).execute(x)))
    strided = prim.execute(view)
    if kind == "MaxPool" or dtype == "u8":
        np.testing.assert_array_equal(bits(got), bits(strided))
    else:
        np.testing.assert_allclose(got.astype(np.float64), strided.astype(np.float64), rtol=0,
                                   atol=tolerance(dtype, x))


@pytest.mark.parametrize("kind,dtype", [("MaxPool", "f32"), ("AvgPool", "bf16"), ("MaxPool", "u8")])
def test_nxc_same_windows_over_long_rows_of_many_channels_stay_on_the_channel_kernel(kind, dtype):
    """Rows of 56 points of 64 channels: past the flat planes' row limit on every ISA,
    so the channel kernel, whose vectors fill with channels, pools them."""
    pd = dp.PoolingDesc(kind, (1, 8, 56, 64), dtype, data_format="NXC", kernel=[3, 3], pads_begin=[1, 1],
                        pads_end=[1, 1])
    assert kernel_variant(dp.Pooling(pd)).endswith(":channel_block"), dp.Pooling(pd).kernel_name

# NXC windows that share no W columns over a src of 16 MB or more (the
# channel-block kernel's kPrefetchMinBytes) prefetch the next output point's
# window: 1-D k3 s3 with clipped border windows and a channel tail, 2-D k2 s2.
# (layout, NCX shape, attrs, kernel variant): NXC points prefetch the next
# point's window (disjoint windows) or the columns a later point adds (k3 s2
# over channels that one slid block does not cover: 100); k3 s2 maxima over
# channels one slid block covers (16 with AVX2 and AVX-512, 64 with AVX-512)
# slide and prefetch the columns a later point adds; NCX rows (straight from src, or
# stacked) the rows 16 KB on.
K3_S2_P1 = dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
PREFETCHED = [
    ("NXC", (4, 257, 4100), dict(kernel=[3], strides=[3], pads_begin=[1], pads_end=[1]), "channel_block"),
    ("NXC", (2, 130, 130, 130), dict(kernel=[2, 2], strides=[2, 2]), "channel_block"),
    ("NXC", (3, 100, 130, 130), K3_S2_P1, "channel_block"),
    ("NXC", (3, 16, 401, 399), K3_S2_P1, "channel_block"),
    ("NXC", (2, 64, 201, 200), K3_S2_P1, "channel_block"),
    ("NCX", (2, 130, 130, 130), dict(kernel=[2, 2], strides=[2, 2]), "separable"),
    ("NCX", (3, 100, 130, 130), K3_S2_P1, "separable"),
]


@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("layout,shape,attrs,variant", PREFETCHED, ids=[f"{c[0]}-{c[1]}" for c in PREFETCHED])
def test_points_over_a_large_src_match_each_batch_item_alone(layout, shape, attrs, variant, kind, monkeypatch):
    """The whole batch (past the prefetching floor) gives the bits of each
    batch item pooled alone (a src below it), and the reference's values.
    NXC k3 s2 maxima over 100 channels: an item alone slides over columns,
    the batch goes point by point; over 16 or 64 both slide where one slid
    block covers them, the batch prefetching.  The floor is pinned at its
    least, 16 MB (for windows over one row and NXC windows that share
    columns, by default a quarter of a larger last-level cache)."""
    monkeypatch.setenv("DNNPOOL_PREFETCH_FLOOR", str(16 << 20))
    attrs = dict(attrs, exclude_pad=True) if kind == "AvgPool" else attrs
    x = make_input(kind, shape, "f32", 8)
    if layout == "NXC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    # (the slid and the point-by-point maxima may break a +0/-0 tie apart)
    check_batch_against_items_alone(x, kind, "f32", layout, attrs, variant, 16 << 20, zero_signs=False)


def check_batch_against_items_alone(x, kind, dtype, layout, attrs, variant, floor, zero_signs=True):
    """x (`floor` bytes or more, a batch item under it) pooled whole by the
    kernel variant named `variant`: the same bits at 1 and 2 threads, the
    same bits as each batch item pooled alone (values when zero_signs is
    false), and the reference's values on the last."""
    assert x.nbytes >= floor and x[:1].nbytes < floor
    same = bits if zero_signs else np.asarray
    got = {}
    for threads in (1, 2):
        prim = dp.Pooling(dp.PoolingDesc(kind, x.shape, dtype, data_format=layout, **attrs), num_threads=threads)
        assert kernel_variant(prim).endswith(":" + variant), prim.kernel_name
        got[threads] = prim.execute(x)
    np.testing.assert_array_equal(bits(got[1]), bits(got[2]))
    alone = dp.Pooling(dp.PoolingDesc(kind, x[:1].shape, dtype, data_format=layout, **attrs))
    for n in range(x.shape[0]):
        np.testing.assert_array_equal(same(got[1][n:n + 1]), same(alone.execute(x[n:n + 1])),
                                      err_msg=f"batch item {n}")
    want, _ = reference.padded_formulation(x[-1:], dict(attrs, kind=kind, data_format=layout))
    assert_matches_reference(got[1][-1:], want, kind, dtype, x[-1:])


# NXC windows that share no W columns over whole blocks of channels (one to
# four blocks of 64 32-bit lanes on AVX-512, of 32 on AVX2, where two is the
# most) and a src of 8 MB or more (kOrderedMinBytes) keep a point's channels
# in registers and read its window in address order (ordered_row): f32 rows
# of one to four blocks, border windows through the padding, ceil rounding,
# dilation, 2-D and 3-D windows, bf16 and f16 rows, f64 rows of four blocks.
# (NCX shape, attrs, dtype)
ORDERED = [
    ((3, 256, 7800), dict(kernel=[4], strides=[4], pads_begin=[1], pads_end=[2]), "f32"),
    ((3, 64, 150, 150), dict(kernel=[2, 2], strides=[2, 2]), "f32"),
    ((3, 192, 91, 90), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[1, 1], pads_end=[1, 1],
                            rounding_type="ceil"), "f32"),
    ((2, 128, 6, 50, 50), dict(kernel=[2, 2, 2], strides=[2, 2, 2]), "f32"),
    ((3, 256, 7800), dict(kernel=[2], strides=[4], dilations=[3], pads_begin=[2], pads_end=[0]), "f32"),
    ((5, 256, 8200), dict(kernel=[4], strides=[4]), "bf16"),
    ((8, 128, 8200), dict(kernel=[2], strides=[2], pads_begin=[1], pads_end=[1]), "f16"),
    ((2, 128, 7800), dict(kernel=[3], strides=[3]), "f64"),
]


@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("shape,attrs,dtype", ORDERED, ids=[f"{c[2]}-{c[0]}" for c in ORDERED])
def test_nxc_points_over_a_large_src_read_in_address_order(shape, attrs, dtype, kind):
    """The whole batch (read in address order) gives the bits of each batch
    item pooled alone (register blocks from a src under 8 MB: the same taps
    in the same order), at 1 and 2 threads, and the reference's values;
    maxima with a NaN and infinities of both signs (the probed rows again
    with tests)."""
    attrs = dict(attrs, exclude_pad=True) if kind == "AvgPool" else attrs
    x = np.ascontiguousarray(np.moveaxis(make_input(kind, shape, dtype, 12), 1, -1))
    check_batch_against_items_alone(x, kind, dtype, "NXC", attrs, "channel_block", 8 << 20)


# Rows read in address order whose dst reaches the uncached floor (4 MB on
# Intel cores, kUncachedMinBytes; DNNPOOL_UNCACHED_FLOOR sets it)
# and whose points are contiguous write their whole dst lines past the
# caches, through a stage placed as dst is past a line (UncachedRow); the
# row's first and last partial lines, shared with its neighbours, are
# ordinary stores.  dst offsets: on a line, 4, 16 (numpy's) and 60 bytes past
# one; f32 2 bytes past (not on an item: ordinary stores); bf16 2 bytes past
# (on an item); a dst whose points are not contiguous (ordinary stores).
UNCACHED_DST = [("f32", 0), ("f32", 4), ("f32", 16), ("f32", 60), ("f32", 2), ("bf16", 2), ("f32", "strided")]


@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("dtype,offset", UNCACHED_DST, ids=[f"{c[0]}-{c[1]}" for c in UNCACHED_DST])
def test_nxc_rows_written_past_the_caches_whatever_the_placement(dtype, offset, kind, monkeypatch):
    """A caller's dst at every placement gets the bits of each batch item
    pooled alone (ordinary stores: a dst under the 4 MB floor), at 1 and 2 threads, and
    not a byte around it is written.  The floor is set to what an Intel core
    gets, so the streamed rows run on every CPU."""
    monkeypatch.setenv("DNNPOOL_UNCACHED_FLOOR", str(4 << 20))
    attrs = dict(kernel=[4], strides=[4], pads_begin=[1], pads_end=[2])
    attrs = dict(attrs, exclude_pad=True) if kind == "AvgPool" else attrs
    batch = 3 if dtype == "f32" else 5   # a dst of 4 MB or more, each item's under it
    x = np.ascontiguousarray(np.moveaxis(make_input(kind, (batch, 256, 8200), dtype, 14), 1, -1))
    assert x.nbytes >= 8 << 20
    alone = dp.Pooling(dp.PoolingDesc(kind, x[:1].shape, dtype, data_format="NXC", **attrs))
    want = np.concatenate([alone.execute(x[n:n + 1]) for n in range(x.shape[0])])
    assert want.nbytes >= 4 << 20
    for threads in (1, 2):
        prim = dp.Pooling(dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs), num_threads=threads)
        if offset == "strided":   # points 2 C apart
            wide = np.full(want.shape[:-1] + (2 * want.shape[-1],), 7, want.dtype)
            dst = wide[..., :want.shape[-1]]
            prim.execute(x, dst=dst)
            np.testing.assert_array_equal(bits(wide[..., want.shape[-1]:]), bits(np.full_like(dst, 7)))
        else:
            raw = np.full(want.nbytes + 256, 0xA5, np.uint8)
            start = (-raw.ctypes.data) % 64 + 64 + offset
            dst = raw[start:start + want.nbytes].view(want.dtype).reshape(want.shape)
            prim.execute(x, dst=dst)
            assert (raw[:start] == 0xA5).all() and (raw[start + want.nbytes:] == 0xA5).all()
        np.testing.assert_array_equal(bits(dst), bits(want), err_msg=f"{threads} threads")
    ref, _ = reference.padded_formulation(x[-1:], dict(attrs, kind=kind, data_format="NXC"))
    assert_matches_reference(dst[-1:], ref, kind, dtype, x[-1:])


# Averages over a power-of-two divisor multiply by its inverse (ExactInverse),
# which must give the division's bits: the same real quotient, rounded once,
# subnormal quotients included.  NXC k4 s4 rows over 256 channels sum their
# taps in order from 0, as the model below does; borders of 3 and 2 taps
# (exclude_pad) divide, the whole windows (4) and include-pad borders (4)
# multiply.
@pytest.mark.parametrize("exclude_pad", [False, True])
@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16", "f64"])
def test_power_of_two_divisors_give_the_divisions_bits(dtype, exclude_pad):
    rng = np.random.default_rng(15)
    acc = np.float64 if dtype == "f64" else np.float32
    tiny = float(ml_dtypes.finfo(NUMPY[dtype]).tiny)
    x = rng.standard_normal((2, 26, 256)) * 100.0
    x[0, :, :128] *= tiny / 50   # quotients near and under the normal range
    x = x.astype(NUMPY[dtype])
    attrs = dict(kernel=[4], strides=[4], pads_begin=[1], pads_end=[1], exclude_pad=exclude_pad)
    got = dp.Pooling(dp.PoolingDesc("AvgPool", x.shape, dtype, data_format="NXC", **attrs)).execute(x)
    # the model: taps summed in order from 0 in the accumulator's type, then one division
    xp = np.pad(x.astype(acc), ((0, 0), (1, 1), (0, 0)))
    valid = np.pad(np.ones(26), 1)
    want = np.empty(got.shape, acc)
    for ow in range(got.shape[1]):
        total = np.zeros((2, 256), acc)
        for k in range(4):
            if valid[4 * ow + k]:
                total = total + xp[:, 4 * ow + k]
        div = valid[4 * ow:4 * ow + 4].sum() if exclude_pad else 4
        want[:, ow] = total / acc(div)
    np.testing.assert_array_equal(bits(got), bits(want.astype(NUMPY[dtype])))
    assert (np.abs(got[0, :, :128].astype(acc)) < tiny).any()   # subnormal quotients were made


# NCX stride-2 rows of k2/k3 windows paired straight from src (pair_rows)
# over a src past the in-order floor (32 MB on AMD cores, none on Intel ones;
# DNNPOOL_PAIR_ORDERED_FLOOR sets it) combine each window's rows in address
# order first, a row at a time (rows_in_order): rows of 112, 150 (a last
# vector overlapping), 225 and 400 values, pads before of 0-2, ceil rounding,
# D taps as the window's rows, bf16 and f16.  (NCX shape, attrs, dtype)
PAIRED_IN_ORDER = [
    ((8, 64, 113, 150), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]), "f32"),
    ((6, 128, 112, 112), dict(kernel=[2, 2], strides=[2, 2]), "f32"),
    ((6, 32, 224, 225), dict(kernel=[3, 3], strides=[2, 2], rounding_type="ceil"), "f32"),
    ((4, 64, 90, 400), dict(kernel=[1, 3], strides=[1, 2], pads_begin=[0, 2], pads_end=[0, 2]), "f32"),
    ((3, 16, 10, 100, 200), dict(kernel=[3, 1, 3], strides=[1, 1, 2], pads_begin=[1, 0, 1], pads_end=[1, 0, 1]),
     "f32"),
    ((16, 64, 113, 150), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]), "bf16"),
    ((16, 64, 112, 150), dict(kernel=[2, 2], strides=[2, 2]), "f16"),
]


@pytest.mark.parametrize("in_order", [True, False], ids=["in-order", "per-load"])
@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("shape,attrs,dtype", PAIRED_IN_ORDER, ids=[f"{c[2]}-{c[0]}" for c in PAIRED_IN_ORDER])
def test_ncx_rows_paired_over_a_large_src_combine_rows_in_order(shape, attrs, dtype, kind, in_order, monkeypatch):
    """The whole batch, its rows in order from 32 MB or paired per load (the
    floor out of reach), gives the bits of each batch item pooled alone (rows
    paired straight from a src under 32 MB), at 1 and 2 threads, and the
    reference's values (maxima with NaNs and infinities)."""
    monkeypatch.setenv("DNNPOOL_PAIR_ORDERED_FLOOR", str(32 << 20 if in_order else 1 << 62))
    attrs = dict(attrs, exclude_pad=True) if kind == "AvgPool" else attrs
    check_batch_against_items_alone(make_input(kind, shape, dtype, 13), kind, dtype, "NCX", attrs, "separable",
                                    32 << 20)


# The prefetching paths on small tensors: DNNPOOL_PREFETCH_FLOOR=0 puts every
# src past the floor (read when a plan is made); values that are not a byte
# count leave the default.  Prefetches and the paths they choose move no bits.
SMALL_PREFETCHED = [
    ("NXC", (2, 40, 61), dict(kernel=[3], strides=[3], pads_begin=[1], pads_end=[1])),
    ("NXC", (2, 24, 14, 14), dict(kernel=[2, 2], strides=[2, 2])),
    ("NXC", (2, 100, 13, 13), K3_S2_P1),
    ("NXC", (2, 16, 15, 14), K3_S2_P1),
    ("NCX", (2, 8, 30, 30), dict(kernel=[2, 2], strides=[2, 2])),
    ("NCX", (2, 5, 21, 21), K3_S2_P1),
    # stacked 3-D passes: rows prefetched one output plane on (planes of
    # 1.8 KB), and past kPlaneAheadBytes (planes of 360 KB, 720 KB on) 16 KB on
    ("NCX", (2, 5, 9, 21, 21), dict(kernel=[3] * 3, strides=[2] * 3, pads_begin=[1] * 3, pads_end=[1] * 3)),
    ("NCX", (1, 2, 5, 300, 300), dict(kernel=[3] * 3, strides=[2] * 3, pads_begin=[1] * 3, pads_end=[1] * 3)),
]


@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("layout,shape,attrs", SMALL_PREFETCHED, ids=[f"{c[0]}-{c[1]}" for c in SMALL_PREFETCHED])
def test_the_prefetching_floor_moves_no_bits(layout, shape, attrs, kind, monkeypatch):
    attrs = dict(attrs, exclude_pad=True) if kind == "AvgPool" else attrs
    x = make_input(kind, shape, "f32", 9)
    if layout == "NXC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    desc = dp.PoolingDesc(kind, x.shape, "f32", data_format=layout, **attrs)
    got = {}
    for floor in ("0", str(1 << 62), "not a size", "-1", ""):
        monkeypatch.setenv("DNNPOOL_PREFETCH_FLOOR", floor)
        for threads in (1, 2):
            got[floor, threads] = dp.Pooling(desc, num_threads=threads).execute(x)
    first = got["0", 1]
    for key, y in got.items():
        np.testing.assert_array_equal(y, first, err_msg=f"floor {key[0]!r}, {key[1]} threads")
    want, _ = reference.padded_formulation(x, dict(attrs, kind=kind, data_format=layout))
    assert_matches_reference(first, want, kind, "f32", x)


# One thread pools NCX planes through the one-lane separable passes with
# prefetches from a quarter of the L3 kept between 8 and 16 MB of src
# (prefetch_floor_bytes), by default; two threads from 16 MB.  A batch just
# past the one-thread floor then prefetches at 1 thread (and at 2 when the
# floors meet), not as one batch item alone: 3-D and 2-D windows, f32 and
# bf16 (batch items of 4.6-4.8 MB).
ALONE_PREFETCHED = [
    ((1, 24, 16, 56, 56), dict(kernel=[3] * 3, strides=[2] * 3, pads_begin=[1] * 3, pads_end=[1] * 3), "f32"),
    ((1, 48, 16, 56, 56), dict(kernel=[3] * 3, strides=[2] * 3, pads_begin=[1] * 3, pads_end=[1] * 3), "bf16"),
    ((1, 128, 112, 81), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]), "f32"),
]


def one_thread_prefetch_floor():
    """The C side's one-thread floor for NCX planes (prefetch_floor_bytes)."""
    try:
        l3 = max(os.sysconf("SC_LEVEL3_CACHE_SIZE"), 0)
    except (ValueError, OSError):
        l3 = 0
    return min(max(l3 // 4, 8 << 20), 16 << 20)


@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("item,attrs,dtype", ALONE_PREFETCHED, ids=[f"{c[2]}-{c[0]}" for c in ALONE_PREFETCHED])
def test_one_thread_prefetching_ncx_planes_moves_no_bits(item, attrs, dtype, kind, monkeypatch):
    monkeypatch.delenv("DNNPOOL_PREFETCH_FLOOR", raising=False)
    attrs = dict(attrs, exclude_pad=True) if kind == "AvgPool" else attrs
    floor = one_thread_prefetch_floor()
    item_bytes = math.prod(item) * numpy_dtype(dtype).itemsize
    shape = (-(-floor // item_bytes), *item[1:])   # the fewest items that reach the floor
    check_batch_against_items_alone(make_input(kind, shape, dtype, 14), kind, dtype, "NCX", attrs, "separable",
                                    floor)


# NXC k3 s2 maxima and quantized averages over channel rows of at most 1 KB
# slide over their columns below the prefetching floor: whole blocks (64
# channels of 32-bit lanes on AVX-512, 32 on AVX2; 16-bit quantized sums twice
# as many), then one half block, then a channel tail point by point; border
# columns point by point.  Odd and even widths (a clipped last window or
# not), ceil rounding, a 3-D window, stride 1 in H.
SLID_STRIDE_2 = [
    ((1, 101, 9, 12), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((2, 51, 7, 11), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 32, 8, 13), dict(kernel=[3, 3], strides=[2, 2], rounding_type="ceil")),
    ((1, 40, 5, 9, 11), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ((1, 200, 6, 10), dict(kernel=[3, 3], strides=[1, 2], pads_begin=[1, 0], pads_end=[1, 1])),
]
# k5 s2 maxima slide too (in blocks of kSlideVecs, half blocks and single
# vectors, never one block of all the channels), f32 and f64 probed for NaN
# like the 16-bit floats: 2-D windows of 3 and 2 rows (square k5 windows go
# separable), 1-D rows, ceil rounding.
SLID_K5_S2 = [
    ((1, 101, 4, 15), dict(kernel=[3, 5], strides=[1, 2], pads_begin=[1, 2], pads_end=[1, 2])),
    ((2, 48, 23), dict(kernel=[5], strides=[2], pads_begin=[2], pads_end=[2])),
    ((1, 40, 5, 16), dict(kernel=[2, 5], strides=[1, 2], rounding_type="ceil")),
]
# k4 s2 maxima slide as k5 s2 do: square 4x4 windows (their rows fixed at
# compile time), 1-D rows, windows of 2 rows, ceil rounding.
SLID_K4_S2 = [
    ((1, 101, 9, 14), dict(kernel=[4, 4], strides=[2, 2], pads_begin=[1, 0], pads_end=[1, 0])),
    ((2, 48, 23), dict(kernel=[4], strides=[2], pads_begin=[1], pads_end=[2])),
    ((1, 40, 5, 16), dict(kernel=[2, 4], strides=[1, 2], rounding_type="ceil")),
]
SLID_MAXIMA = SLID_STRIDE_2 + SLID_K5_S2 + SLID_K4_S2


@pytest.mark.parametrize("dtype", ("f32", "bf16", "f16", "f64"))
@pytest.mark.parametrize("special", ["none", "nan first point", "nan last point", "nan in the tail",
                                     "infinities of both signs", "nan and infinities"])
def test_nxc_maxima_point_by_point_probed_for_nan(special, dtype):
    """NXC maxima whose points all go one by one (k2 s2, k3 s3: windows that
    share no columns) run without NaN tests and redo a row when its probe
    shows a NaN (or, falsely, infinities of both signs): the reference's
    values either way, including the NaN's lane and point only."""
    rng = np.random.default_rng(13)
    x = np.round(rng.standard_normal((1, 8, 12, 133)) * 4.0)   # NHWC: a 4-vector block, more, a tail
    n_, h, w, c = {"nan first point": (0, 2, 0, 3), "nan last point": (0, 7, 11, 70),
                   "nan in the tail": (0, 5, 6, 131)}.get(special, (0, 0, 0, 0))
    if special.startswith("nan"):
        x[n_, h, w, c] = np.nan
    if "infinities" in special:
        x[0, 3, 4, 10], x[0, 3, 8, 10], x[0, 2, 1, 40] = np.inf, -np.inf, -np.inf
    if special == "nan and infinities":
        x[0, 3, 5, 90] = np.nan
    x = x.astype(NUMPY[dtype])
    for attrs in (dict(kernel=[2, 2], strides=[2, 2]), dict(kernel=[3, 3], strides=[3, 3], pads_end=[1, 1])):
        pd = dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NXC", **attrs)
        prim = dp.Pooling(pd)
        assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
        got = prim.execute(x).astype(np.float64)
        want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
        np.testing.assert_array_equal(got, want.astype(NUMPY[dtype]).astype(np.float64))
        assert np.isnan(got).sum() == (special.startswith("nan") and 1) + (special == "nan and infinities")
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=2).execute(x).astype(np.float64))


def _integers(shape, dtype, seed):
    lo, hi = (0, 256) if dtype == "u8" else (-128, 128)
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(np.uint8 if dtype == "u8" else np.int8)


@pytest.mark.parametrize("dtype", DTYPES + ("u8", "s8"))
@pytest.mark.parametrize("shape,attrs", SLID_MAXIMA, ids=[str(c[0]) for c in SLID_MAXIMA])
def test_nxc_stride_2_maxima_slide_over_columns(shape, attrs, dtype):
    """Slid k3 s2, k4 s2 and k5 s2 maxima give the reference's values, the same bits
    at 1, 2 and 3 threads, and the values of the index path (point by point)."""
    x = _integers(shape, dtype, 11) if dtype in ("u8", "s8") else make_input("MaxPool", shape, dtype, 11)
    x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    pd = dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NXC", **attrs)
    prim = dp.Pooling(pd)
    assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
    got = prim.execute(x).astype(np.float64)
    for threads in (2, 3):
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=threads).execute(x).astype(np.float64))
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
    np.testing.assert_array_equal(got, want.astype(x.dtype).astype(np.float64))
    np.testing.assert_array_equal(got, prim.execute(x, with_indices=True)[0].astype(np.float64))


# Slid maxima of 16-bit floats (and k5 s2 ones of every float type)
# compare without NaN tests and slide a pass again with them when a probe
# of its src values shows a NaN (f32 and f64 k3 s2 keep the tests):
# (position along the flattened spatial axes, channel) in SLID_MAXIMA's
# shapes; channels are
# taken modulo C, so over 101 channels they fall in the whole block, the
# half block and the last single vector.
SLID_SPECIALS = {
    "none": [],
    "first position, block": [(0, 5)],
    "interior, half block": [(13, 70)],
    "interior, last vector": [(20, 100)],
    "last position": [(-1, -1)],
    "two passes": [(9, 1), (26, 90)],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("special", list(SLID_SPECIALS) + ["infinities of both signs"])
@pytest.mark.parametrize("shape,attrs", SLID_MAXIMA, ids=[str(c[0]) for c in SLID_MAXIMA])
def test_nxc_slid_maxima_probed_for_nan(shape, attrs, special, dtype):
    """A NaN anywhere comes out in exactly the reference's windows, whether
    its pass was probed or tested; infinities of both signs (a probe that sums
    to NaN without one) still give the reference's maxima; no NaN appears
    where there was none, at 1 and 2 threads."""
    x = np.round(np.random.default_rng(14).standard_normal(shape) * 8).astype(NUMPY[dtype])
    x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    rows = x.reshape(shape[0], -1, x.shape[-1])   # (n, positions, channels), a view
    for pos, ch in SLID_SPECIALS.get(special, []):
        rows[-1, pos % rows.shape[1], ch % rows.shape[2]] = np.nan
    if special == "infinities of both signs":
        rows[0, 3, 1], rows[0, 4, 1], rows[-1, 11, -2] = np.inf, -np.inf, -np.inf
    pd = dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NXC", **attrs)
    prim = dp.Pooling(pd)
    assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
    got = prim.execute(x).astype(np.float64)
    np.testing.assert_array_equal(got, want.astype(NUMPY[dtype]).astype(np.float64))
    assert np.isnan(got).any() == (special in SLID_SPECIALS and special != "none")
    np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=2).execute(x).astype(np.float64))


def check_nxc_maxima_with_nans(x, dtype, attrs, nans):
    """The NXC maxima of x (channel_block): the reference's values, NaNs in
    exactly its windows (at least `nans` of them), the same bits at 2 and 3
    threads, the index path's values."""
    pd = dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NXC", **attrs)
    prim = dp.Pooling(pd)
    assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
    got = prim.execute(x)
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
    np.testing.assert_array_equal(got, want.astype(NUMPY[dtype]))
    assert np.isnan(got).sum() == np.isnan(want).sum() >= nans
    for threads in (2, 3):
        np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=threads).execute(x)))
    np.testing.assert_array_equal(got, prim.execute(x, with_indices=True)[0])


# NXC rows of exactly 3 or 5 vectors of f32 or f64 maxima (48, 80 and 24,
# 40 channels on AVX-512) slide as one block of all their channels instead
# of a block of 4 and a half block (other ISAs split them, to the same
# bits), rows of 6 vectors (96 and 48) as the two, except k3 s2 over 1-D
# windows, which the points take: k3 s2 (even and odd widths, ceil rounding,
# 3-D, 1-D), and k3 s1 and k2 s1 over rows that are not dense (a view of
# every other column: dense stride-1 rows go flat instead; the k3 s1 window
# leaves W unpadded, where "same" windows over dense rows of 480 values
# would plan flat planes), 1-D windows (their one row fixed) among them.
WHOLE_SLID_CHANNELS = {"f32": (48, 80, 96), "f64": (24, 40, 48)}
WHOLE_SLID_WINDOWS = [
    ((1, 9, 12), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((2, 8, 13), dict(kernel=[3, 3], strides=[2, 2], rounding_type="ceil")),
    ((1, 5, 7, 9), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ((1, 7, 20), dict(kernel=[3, 3], strides=[1, 1], pads_begin=[1, 0], pads_end=[1, 0])),
    ((1, 6, 18), dict(kernel=[2, 2], strides=[1, 1])),
    ((2, 29), dict(kernel=[3], strides=[2], pads_begin=[1], pads_end=[1])),
    ((1, 40), dict(kernel=[3], strides=[1])),
    ((1, 36), dict(kernel=[2], strides=[1])),
]


@pytest.mark.parametrize("dtype", ("f32", "f64"))
@pytest.mark.parametrize("which", (0, 1, 2))
@pytest.mark.parametrize("spatial,attrs", WHOLE_SLID_WINDOWS, ids=[str(c[0]) for c in WHOLE_SLID_WINDOWS])
def test_nxc_rows_slid_as_one_block(spatial, attrs, which, dtype):
    """Every channel of the one block: the reference's maxima exactly, NaNs
    (first and last vector) in exactly its windows, infinities of both signs;
    the index path's values and the same bits at 2 and 3 threads."""
    channels = WHOLE_SLID_CHANNELS[dtype][which]
    n, *sp = spatial
    x = np.round(np.random.default_rng(15).standard_normal((n, *sp, channels)) * 8).astype(NUMPY[dtype])
    if attrs["strides"][-1] == 1:
        x[..., 1::2, :] = np.nan   # never read: a NaN there would show
        x = x[..., ::2, :]
    rows = x.reshape(n, -1, channels)   # (n, positions, channels), a view
    assert np.shares_memory(rows, x)
    rows[0, 5, 3] = rows[-1, -4, channels - 1] = np.nan
    rows[0, 9, channels // 2], rows[0, 10, channels // 2] = np.inf, -np.inf
    check_nxc_maxima_with_nans(x, dtype, attrs, nans=2)


# NXC k3 s2 maxima of f32 and f64 that would slide in several passes take
# the points instead on AVX-512 (NaN tests as they go, no probe): rows of
# more than two slid blocks (128 f32 and 64 f64 channels) and, over 1-D
# windows, of more than one; elsewhere they slide, to the same bits.  The
# points' register blocks start after channel_lead's head vector when src
# sits 16 bytes past a cache line (numpy's large arrays), at the line
# otherwise: both placements, NaNs in the head, a block and the tail.
TESTED_POINTS_CHANNELS = {"f32": (96, 100, 128, 200, 256), "f64": (48, 64, 100)}
TESTED_POINTS_WINDOWS = [
    ((2, 37), dict(kernel=[3], strides=[2], pads_begin=[1], pads_end=[1])),
    ((1, 9, 12), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 8, 13), dict(kernel=[3, 3], strides=[2, 2], rounding_type="ceil")),
    ((1, 5, 7, 9), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
]
TESTED_POINTS = [(d, ch, w) for d, chs in TESTED_POINTS_CHANNELS.items() for ch in chs
                 for w in range(len(TESTED_POINTS_WINDOWS))]


@pytest.mark.parametrize("offset_bytes", (0, 16))
@pytest.mark.parametrize("dtype,channels,window", TESTED_POINTS,
                         ids=[f"{d}-{ch}-{TESTED_POINTS_WINDOWS[w][0]}" for d, ch, w in TESTED_POINTS])
def test_nxc_k3_s2_maxima_over_many_channels(dtype, channels, window, offset_bytes):
    """The reference's maxima exactly; NaNs in exactly the reference's
    windows (head vector, a middle block, the last channel); infinities of
    both signs; the same bits at 2 and 3 threads and the index path's
    values.  src is a view starting offset_bytes past a 64-byte boundary."""
    spatial, attrs = TESTED_POINTS_WINDOWS[window]
    n, *sp = spatial
    shape = (n, *sp, channels)
    size = math.prod(shape)
    itemsize = np.dtype(NUMPY[dtype]).itemsize
    buf = np.empty(size * itemsize + 128, np.uint8)
    start = -buf.ctypes.data % 64 + offset_bytes
    x = buf[start:start + size * itemsize].view(NUMPY[dtype]).reshape(shape)
    x[...] = np.round(np.random.default_rng(17).standard_normal(shape) * 8)
    assert x.ctypes.data % 64 == offset_bytes
    rows = x.reshape(n, -1, channels)   # (n, positions, channels), a view
    rows[0, 4, 2] = rows[0, 7, channels // 2] = rows[-1, -3, channels - 1] = np.nan
    rows[0, 9, 40], rows[0, 10, 40] = np.inf, -np.inf
    check_nxc_maxima_with_nans(x, dtype, attrs, nans=3)


def check_nxc_over_sentinel(prim, x, kind, dtype, attrs):
    """prim's outputs of the NXC x written over a sentinel dst (every output written
    once): the reference's values, the same bits at 2 and 3 threads.  Returns them and
    the reference's indices."""
    got = np.full(prim.desc.dst_shape, 77, x.dtype)
    prim.execute(x, dst=got)
    want, want_idx = reference.padded_formulation(x, dict(attrs, kind=kind, data_format="NXC"))
    assert_matches_reference(got, want, kind, dtype, x)
    for threads in (2, 3):
        np.testing.assert_array_equal(bits(got), bits(dp.Pooling(prim.desc, num_threads=threads).execute(x)))
    return got, want_idx


# NXC rows slid in two passes or more (100 channels: more than one slid
# block on every ISA and type) take their full windows in strips of at
# least 8 outputs, every pass over a strip before the next strip starts:
# rows of 38-151 outputs end on a partial strip.  1-D and 2-D k3 s2 maxima,
# k3 s1 and k2 s1 over rows that are not dense (every other column: dense
# stride-1 rows go flat), exclude-pad averages among them.
SLID_STRIPS = [
    ("MaxPool", (2, 301), dict(kernel=[3], strides=[2], pads_begin=[1], pads_end=[1])),
    ("MaxPool", (1, 7, 83), dict(kernel=[3, 3], strides=[2, 2], rounding_type="ceil")),
    ("MaxPool", (1, 5, 90), dict(kernel=[3, 3], pads_begin=[1, 0], pads_end=[1, 0])),
    ("AvgPool", (1, 5, 90), dict(kernel=[3, 3], pads_begin=[1, 0], pads_end=[1, 0], exclude_pad=True)),
    ("AvgPool", (2, 4, 80), dict(kernel=[2, 2])),
]


# (8-bit averages are quantized: their slid rows are tested above)
SLID_STRIPS_BY_DTYPE = [(*c, t) for c in SLID_STRIPS for t in DTYPES + ("u8",) if c[0] == "MaxPool" or t in DTYPES]


@pytest.mark.parametrize("kind,spatial,attrs,dtype", SLID_STRIPS_BY_DTYPE,
                         ids=[f"{c[0]} {c[1]} k{c[2]['kernel']}-{c[3]}" for c in SLID_STRIPS_BY_DTYPE])
def test_nxc_rows_slid_in_strips(kind, spatial, attrs, dtype):
    """Every output of every strip written once (dst starts as a sentinel),
    the reference's values (NaN and infinities among the maxima' inputs),
    the same bits at 2 and 3 threads."""
    n, *sp = spatial
    shape = (n, 100, *sp)
    x = _integers(shape, dtype, 16) if dtype == "u8" else make_input(kind, shape, dtype, 16)
    x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    if attrs.get("strides", [1])[-1] == 1:   # every other column of a wider array, the others never read
        wide = np.full((*x.shape[:-2], 2 * x.shape[-2], x.shape[-1]), 99, x.dtype)
        wide[..., ::2, :] = x
        x = wide[..., ::2, :]
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs)
    prim = dp.Pooling(pd)
    assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
    check_nxc_over_sentinel(prim, x, kind, dtype, attrs)


@pytest.mark.parametrize("dtype", ("u8", "s8"))
@pytest.mark.parametrize("exclude_pad", [True, False])
@pytest.mark.parametrize("shape,attrs", SLID_STRIDE_2, ids=[str(c[0]) for c in SLID_STRIDE_2])
def test_nxc_k3_s2_quantized_averages_slide_over_columns(shape, attrs, exclude_pad, dtype):
    """Slid k3 s2 quantized averages: the same bits at 1, 2 and 3 threads and
    the reference's values (a near tie may round the other way)."""
    x = np.ascontiguousarray(np.moveaxis(_integers(shape, dtype, 12), 1, -1))
    q = dict(src_scale=0.05, src_zero_point=10 if dtype == "u8" else -3, dst_scale=0.04,
             dst_zero_point=128 if dtype == "u8" else 2)
    attrs = dict(attrs, exclude_pad=exclude_pad)
    pd = dp.PoolingDesc("AvgPool", x.shape, dtype, data_format="NXC", **attrs, **q)
    got = dp.Pooling(pd).execute(x)
    for threads in (2, 3):
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=threads).execute(x))
    pick = [c for c in (0, 31, 32, 63, 64, 100, 127, 128, 191, 192, 199) if c < x.shape[-1]]
    small = x[..., pick]   # the exact oracle is slow: channels of each block
    full = dict(attrs, kind="AvgPool", data_format="NXC", **q)
    assert_quantized_matches_reference(got[..., pick], small, full)


# NXC rows of fewer channels than a register block (under 64 f32 on AVX-512;
# other ISAs and types split them differently): whole windows pool in one
# loop of vectors (points_row, a group of points at a time), slid k3 s2 maxima go down to single vectors,
# and a channel count that is no whole number of vectors ends on a vector
# that overlaps the one before (tail_point does the same for the tail of
# wider rows).  Under a vector (3, 8, 12), a point's vector reads on into
# the next positions, and only as far as src goes (the last points of the
# last row go one by one); up to half a vector, strided windows of 7 taps or
# more go to the separable passes instead (_few_lanes_separable).
FEW_CHANNELS = (3, 8, 12, 16, 20, 33, 48, 63, 72, 100)
FEW_CHANNEL_WINDOWS = [
    ((2, 9, 14), dict(kernel=[2, 2], strides=[2, 2])),
    ((1, 10, 13), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 11, 14), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[0, 2], pads_end=[1, 2], rounding_type="ceil")),
    ((1, 4, 6, 9), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    # rows of 20 points: several groups of points pooled together, then the rest
    ((1, 5, 41), dict(kernel=[2, 4], strides=[1, 2], pads_begin=[0, 1], pads_end=[0, 1])),
    # one row of 4 columns: the window fixed at compile time (with_window_constants)
    ((2, 45), dict(kernel=[4], strides=[2], pads_begin=[1], pads_end=[2])),
    # one row of 5 columns: the row fixed, the taps counted at run time
    ((2, 43), dict(kernel=[5], strides=[2], pads_begin=[2], pads_end=[1])),
]


def _vec_bytes(prim):
    """The vector width of the ISA variant a primitive runs on (its kernel name's prefix)."""
    return {"avx512-bf16": 64, "avx512": 64, "avx512-emulated": 64, "avx2": 32,
            "baseline": 16}[prim.kernel_name.split(":")[0]]


def _decimated(prim, kind, dtype, channels, attrs):
    """Whether NXC rows of these channels take decimated_row (see DECIMATED)."""
    vec_bytes = _vec_bytes(prim)
    lanes = vec_bytes // (8 if dtype == "f64" else 4)
    k, s = attrs["kernel"][-1], (attrs.get("strides") or [1])[-1]
    pb, d = (attrs.get("pads_begin") or [0])[-1], (attrs.get("dilations") or [1])[-1]
    return kind == "MaxPool" and 2 * channels <= lanes and s == 2 and k in (2, 3) and d == 1 and pb < k


def _few_lanes_separable(prim, kind, dtype, channels, attrs):
    """Whether NXC rows of these channels go to the separable passes: half a
    vector of channels or fewer, a strided W window of 7 taps or more, more
    than one (d, h) row and output column, not a decimated row; or float
    values over a vector and a tail of a quarter vector or less, a 3-D
    window of 27 taps or more strided along H and W."""
    lanes = _vec_bytes(prim) // (8 if dtype == "f64" else 4)
    k, s = attrs["kernel"], (attrs.get("strides") or [1] * len(attrs["kernel"]))
    taps = int(np.prod(k))
    short_tail = (dtype not in ("u8", "s8") and len(k) == 3 and k[0] > 1 and s[-2] > 1 and s[-1] > 1
                  and taps >= 27 and lanes < channels <= lanes + lanes // 4)
    return short_tail or (s[-1] > 1 and 2 * channels <= lanes and taps >= 7 and taps > k[-1]
                          and not _decimated(prim, kind, dtype, channels, attrs))


def _same_pooling_elsewhere(prim, x, kind, dtype, attrs, q):
    """The NXC rows x (of few channels) pooled by the path whose bits prim's
    should give: the NCX planes for decimated rows (a +0 and -0 tie keeps the
    first row's, then the first column's), else the same channels inside
    128 (the register blocks, point by point)."""
    channels = x.shape[-1]
    if _decimated(prim, kind, dtype, channels, attrs):
        planes = np.ascontiguousarray(np.moveaxis(x, -1, 1))
        pd = dp.PoolingDesc(kind, planes.shape, dtype, data_format="NCX", **attrs, **q)
        return np.moveaxis(dp.Pooling(pd).execute(planes), 1, -1)
    return _inside_128_channels(x, kind, dtype, attrs, q)[1]


def _inside_128_channels(x, kind, dtype, attrs, q={}):
    """The NXC rows x pooled as the first channels of 128 (zeros after
    them): (that primitive, x's channels of its result)."""
    channels = x.shape[-1]
    wide = np.zeros((*x.shape[:-1], 128), x.dtype)
    wide[..., :channels] = x
    prim = dp.Pooling(dp.PoolingDesc(kind, wide.shape, dtype, data_format="NXC", **attrs, **q))
    return prim, prim.execute(wide)[..., :channels]


@pytest.mark.parametrize("channels", FEW_CHANNELS)
@pytest.mark.parametrize("spatial,attrs", FEW_CHANNEL_WINDOWS, ids=[str(c[0]) for c in FEW_CHANNEL_WINDOWS])
@pytest.mark.parametrize("kind,dtype", [("MaxPool", "f32"), ("MaxPool", "bf16"), ("MaxPool", "f64"), ("MaxPool", "u8"),
                                        ("AvgPool", "f32"), ("AvgPool", "f16"), ("AvgPool", "s8")])
def test_nxc_rows_of_few_channels_match_wide_rows(spatial, attrs, channels, kind, dtype):
    """Few channels per point: the bits of the same channels pooled as part of
    128 (whole register blocks, point by point), at 1 and 3 threads, and the
    reference's values; maxima with a NaN and infinities in the last vector."""
    n, *sp = spatial
    if dtype in ("u8", "s8"):
        x = _integers((n, *sp, channels), dtype, 21)
    else:
        x = np.moveaxis(make_input(kind, (n, channels, *sp), dtype, 21), 1, -1)
        if kind == "MaxPool":
            x[0, ..., 0, channels - 1] = np.nan   # a lane only the overlapping last vector has
            x[-1, ..., 1, channels - 2] = np.inf
            x[-1, ..., 2, channels - 2] = -np.inf
    x = np.ascontiguousarray(x)
    q = dict(src_scale=0.05, src_zero_point=7, dst_scale=0.04, dst_zero_point=3) if dtype in ("u8", "s8") \
        and kind == "AvgPool" else {}
    if kind == "AvgPool":
        attrs = dict(attrs, exclude_pad=channels % 2 == 0)
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs, **q)
    prim = dp.Pooling(pd)
    got = prim.execute(x)
    if _few_lanes_separable(prim, kind, dtype, channels, attrs):
        # the separable passes (LANE_PHASES): not the channel kernel's bits
        assert prim.kernel_name.endswith(":separable_lanes"), prim.kernel_name
    else:
        assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
        np.testing.assert_array_equal(bits(got), bits(_same_pooling_elsewhere(prim, x, kind, dtype, attrs, q)))
    np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=3).execute(x)))
    full = dict(attrs, kind=kind, data_format="NXC", **q)
    if q:
        assert_quantized_matches_reference(got, x, full)
        return
    want, _ = reference.padded_formulation(x, full)
    assert_matches_reference(got, want, kind, dtype, x)
    if kind == "MaxPool":
        assert np.isnan(got[0, ..., channels - 1]).any() if dtype != "u8" else True


def _on_the_channel_kernel(x, kind, dtype, attrs, exclude_pad):
    """x (made contiguous) pooled NXC by the channel kernel, averages with
    exclude_pad: (x, the attributes, the descriptor, the primitive, the result)."""
    x = np.ascontiguousarray(x)
    if kind == "AvgPool":
        attrs = dict(attrs, exclude_pad=exclude_pad)
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs)
    prim = dp.Pooling(pd)
    assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
    return x, attrs, pd, prim, prim.execute(x)


# NXC rows of at most 32 points over a vector of channels to under a block
# (16-63 f32 on AVX-512) pool point by point across output rows whose H
# windows are alike, four rows at a time (two past two vectors of channels):
# W borders on both sides of rows of 2-3 points, runs of alike rows cut by
# the H border rows and by the threads' chunks, a 3-D window, dilated rows.
ROW_GROUP_WINDOWS = [
    ((2, 11, 7), dict(kernel=[3, 3], strides=[1, 3], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 3, 13, 5), dict(kernel=[3, 3, 3], strides=[3, 1, 3], pads_begin=[0, 1, 1], pads_end=[0, 1, 1])),
    ((1, 30, 5), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[0, 1], pads_end=[0, 1])),
    # (W stride 3: k4 s2 rows slide, keeping either zero of a tie where the points keep the first)
    ((2, 9, 40), dict(kernel=[2, 4], strides=[1, 3], pads_begin=[0, 1], pads_end=[0, 1], dilations=[2, 1])),
]


@pytest.mark.parametrize("channels", (16, 20, 33, 48, 63))
@pytest.mark.parametrize("spatial,attrs", ROW_GROUP_WINDOWS, ids=[str(c[0]) for c in ROW_GROUP_WINDOWS])
@pytest.mark.parametrize("kind,dtype", [("MaxPool", "f32"), ("MaxPool", "bf16"), ("MaxPool", "f64"), ("MaxPool", "u8"),
                                        ("AvgPool", "f32"), ("AvgPool", "f16"), ("AvgPool", "f64")])
def test_nxc_short_rows_pool_across_rows(spatial, attrs, channels, kind, dtype):
    """The bits of the same channels pooled as part of 128 (point by point
    within a row), at 1, 2 and 3 threads and into a dst view of every other
    column; the reference's values, maxima with a NaN and infinities."""
    n, *sp = spatial
    if dtype == "u8":
        x = _integers((n, *sp, channels), dtype, 23)
    else:
        x = np.moveaxis(make_input(kind, (n, channels, *sp), dtype, 23), 1, -1)
        if kind == "MaxPool":
            x[0, ..., 1, channels - 1] = np.nan   # a lane only the overlapping last vector has
            x[-1, ..., 3, 0] = np.inf
            x[-1, ..., 4, 1] = -np.inf
    x, attrs, pd, prim, got = _on_the_channel_kernel(x, kind, dtype, attrs, exclude_pad=channels % 2 == 0)
    np.testing.assert_array_equal(bits(got), bits(_inside_128_channels(x, kind, dtype, attrs)[1]))
    for threads in (2, 3):
        np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=threads).execute(x)))
    out = pd.dst_shape
    dst_base = np.zeros((*out[:-2], 2 * out[-2], out[-1]), x.dtype)
    dst = dst_base[..., ::2, :]
    assert prim.execute(x, dst=dst) is dst
    np.testing.assert_array_equal(bits(dst), bits(got))
    assert not np.any(bits(dst_base[..., 1::2, :]))   # nothing written between the view's columns
    want, _ = reference.padded_formulation(x, dict(attrs, kind=kind, data_format="NXC"))
    assert_matches_reference(got, want, kind, dtype, x)
    if kind == "MaxPool" and dtype != "u8":
        assert np.isnan(got[0, ..., channels - 1]).any()


# NXC rows of a register block of channels or more (64 f32 on AVX-512, 32 on
# AVX2): the points whose windows are whole pool in one loop per row
# (blocks_row), the window's rows and columns fixed at compile time for 2x2
# and 3x3 (one row's for any width), the channel tail with tail_point's
# vectors; border points one by one.  Float maxima run without NaN tests
# and redo a row whose probe shows a NaN.  Disjoint and overlapping windows
# (float averages do not slide), a 3-D window, dilation, ceil rounding, 1-D
# rows.
BLOCK_CHANNELS = (64, 67, 96, 131, 200)
BLOCK_ROW_WINDOWS = [
    ((2, 6, 9), dict(kernel=[2, 2], strides=[2, 2])),
    ((1, 7, 11), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 8, 11), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[0, 2], pads_end=[1, 2], rounding_type="ceil")),
    ((1, 3, 6, 7), dict(kernel=[2, 2, 2], strides=[2, 2, 2])),
    ((1, 9, 12), dict(kernel=[2, 3], strides=[2, 3], dilations=[2, 2], pads_begin=[1, 0], pads_end=[1, 3])),
    ((3, 23), dict(kernel=[4], strides=[4], pads_begin=[1], pads_end=[2])),
    # one row of 7 columns: the row fixed at compile time, the taps at run time
    ((2, 37), dict(kernel=[7], strides=[2], pads_begin=[3], pads_end=[2])),
]


@pytest.mark.parametrize("channels", BLOCK_CHANNELS)
@pytest.mark.parametrize("spatial,attrs", BLOCK_ROW_WINDOWS, ids=[str(c[0]) for c in BLOCK_ROW_WINDOWS])
@pytest.mark.parametrize("kind,dtype", [("MaxPool", "f32"), ("MaxPool", "bf16"), ("MaxPool", "f16"),
                                        ("MaxPool", "f64"), ("MaxPool", "u8"), ("MaxPool", "s8"),
                                        ("AvgPool", "f32"), ("AvgPool", "bf16"), ("AvgPool", "f64")])
def test_nxc_rows_of_block_channels(spatial, attrs, channels, kind, dtype):
    """The reference's values (maxima exactly, with a NaN and infinities of
    both signs in whole windows and in the channel tail; averages within the
    type's rounding), the index path's values (maxima: every point one by
    one, other code), and the same bits at 2 and 3 threads."""
    n, *sp = spatial
    shape = (n, *sp, channels)
    if dtype in ("u8", "s8"):
        x = _integers(shape, dtype, 41)
    else:
        x = np.moveaxis(make_input(kind, (n, channels, *sp), dtype, 41), 1, -1).copy()
        if kind == "MaxPool":
            x[..., :] = np.where(np.isnan(x), 0, x)   # the NaNs placed below only
            row = x[(0,) + (1,) * (len(sp) - 1)]   # (d, h) row 1: positions 0 and 4, inside every window set
            row[0, 5] = row[4, 9] = np.nan
            x[-1].reshape(-1, channels)[-2, channels - 1] = np.nan      # the tail, near the end
            x[0].reshape(-1, channels)[3, 7] = np.inf
            x[0].reshape(-1, channels)[4, 7] = -np.inf
    x, attrs, pd, prim, got = _on_the_channel_kernel(x, kind, dtype, attrs, exclude_pad=channels % 2 == 1)
    for threads in (2, 3):
        np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=threads).execute(x)))
    want, _ = reference.padded_formulation(x, dict(attrs, kind=kind, data_format="NXC"))
    assert_matches_reference(got, want, kind, dtype, x)
    if kind == "MaxPool":
        np.testing.assert_array_equal(got.astype(np.float64),   # values: slid k3 s2 rows may keep the other zero
                                      prim.execute(x, with_indices=True)[0].astype(np.float64))
        if dtype not in ("u8", "s8"):
            assert np.isnan(got).sum() == np.isnan(want).sum() >= 1   # (the tail NaN is outside some windows)


# 8-bit maxima without indices over rows of a byte vector of channels or
# more (64 on AVX-512, 32 on AVX2, 16 on SSE2) pool in byte lanes, four
# times the channels of a vector of int32 lanes (kernel name +bytes):
# points in registers (under a block of four vectors, a block and its
# tail), slid k3 s2, k4 s2 (square) and k5 s2 rows and whole slid rows of 3
# or 5 vectors, flat stride-1 rows (2-D, and one-row windows read straight
# from src), 3-D and dilated windows, ceil rounding.
BYTE_LANE_CHANNELS = (64, 100, 192, 256, 300, 320, 576)
BYTE_LANE_WINDOWS = [
    ((2, 6, 9), dict(kernel=[2, 2], strides=[2, 2])),
    ((1, 7, 11), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 7, 11), dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
    ((2, 40), dict(kernel=[4])),
    ((1, 9, 9), dict(kernel=[4, 4], strides=[2, 2], pads_begin=[1, 0], pads_end=[1, 0])),
    ((1, 3, 6, 7), dict(kernel=[2, 2, 2], strides=[2, 2, 2])),
    ((2, 37), dict(kernel=[5], strides=[2], pads_begin=[2], pads_end=[2])),
    ((1, 9, 12), dict(kernel=[2, 3], strides=[2, 3], dilations=[2, 2], pads_begin=[1, 0], pads_end=[1, 3])),
    ((1, 8, 11), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[0, 2], pads_end=[1, 2], rounding_type="ceil")),
]


def _byte_lane_case(x, dtype, attrs, layout="NXC"):
    """x pooled (maxima): the primitive and its result, checked against the
    reference, the index path (int32 lanes, point by point) and 2 and 3 threads."""
    pd = dp.PoolingDesc("MaxPool", x.shape, dtype, data_format=layout, **attrs)
    prim = dp.Pooling(pd)
    got = prim.execute(x)
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format=layout))
    np.testing.assert_array_equal(got, want.astype(x.dtype))
    np.testing.assert_array_equal(got, prim.execute(x, with_indices=True)[0])
    for threads in (2, 3):
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=threads).execute(x))
    return prim, got


@pytest.mark.parametrize("channels", BYTE_LANE_CHANNELS)
@pytest.mark.parametrize("spatial,attrs", BYTE_LANE_WINDOWS, ids=[str(c[0]) for c in BYTE_LANE_WINDOWS])
@pytest.mark.parametrize("dtype", ("u8", "s8"))
def test_8bit_maxima_pool_in_byte_lanes(spatial, attrs, channels, dtype):
    """The reference's values over the whole range of the type (u8 past 127 and
    s8 below 0 tell a signed compare from an unsigned one), the index path's
    and 2 and 3 threads'; written into a strided dst view, nothing between."""
    n, *sp = spatial
    x = _integers((n, *sp, channels), dtype, 43)
    x.reshape(-1, channels)[1, ::7] = 255 if dtype == "u8" else -128   # the extremes next to each other
    x.reshape(-1, channels)[2, ::7] = 0 if dtype == "u8" else 127
    prim, got = _byte_lane_case(x, dtype, attrs)
    assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
    assert ("+bytes" in prim.kernel_name) == (channels >= _vec_bytes(prim)), prim.kernel_name
    out = got.shape
    dst_base = np.zeros((*out[:-2], 2 * out[-2], out[-1]), x.dtype)
    dst = dst_base[..., ::2, :]
    assert prim.execute(x, dst=dst) is dst
    np.testing.assert_array_equal(dst, got)
    assert not np.any(dst_base[..., 1::2, :])


@pytest.mark.parametrize("dtype", ("u8", "s8"))
def test_8bit_maxima_in_byte_lanes_stream_order_and_blocks(dtype):
    """Byte lanes on the channel kernel's other row paths: large disjoint
    windows over long channel rows streamed in groups of taps; disjoint
    windows over 8 MB or more read in address order (ordered_row); overlapping
    windows past the prefetching floor; NCX pooled as channels-last blocks.
    Each against the reference (the large ones against numpy windows)."""
    # streamed taps: 25 disjoint taps over 2112 channels (rows past 2 KB)
    _byte_lane_case(_integers((1, 10, 10, 2112), dtype, 44), dtype, dict(kernel=[5, 5], strides=[5, 5]))
    lowest = 0 if dtype == "u8" else -128
    # ordered rows (k2 s2 over 8.4 MB) and prefetched overlapping windows (k3 s2 p1 over 17 MB)
    for shape, k, s, p in (((1, 128, 128, 512), 2, 2, 0), ((1, 183, 183, 512), 3, 2, 1)):
        x = _integers(shape, dtype, 45)
        prim = dp.Pooling(dp.PoolingDesc("MaxPool", shape, dtype, data_format="NXC", kernel=[k, k], strides=[s, s],
                                         pads_begin=[p, p], pads_end=[p, p]))
        assert "+bytes" in prim.kernel_name, prim.kernel_name
        padded = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)), constant_values=lowest)
        windows = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(1, 2))[:, ::s, ::s]
        np.testing.assert_array_equal(prim.execute(x), windows.max(axis=(-2, -1)))
    # NCX by channel blocks of 64 channels (two images: enough blocks for the threads)
    x = _integers((2, 512, 14, 14), dtype, 46)
    prim, _ = _byte_lane_case(x, dtype, dict(kernel=[3, 3], strides=[2, 2]), layout="NCX")
    if _vec_bytes(prim) == 64:
        assert prim.kernel_name.endswith("channel_blocks/channel_block+bytes"), prim.kernel_name


# NXC float maxima over rows of fewer channels than a block (points_row):
# a row's whole windows run first without NaN tests, summing into a probe
# only the taps that read what no earlier point's probed taps did (the
# first stride / dilation of each window when a point's step is whole
# taps, all of them otherwise, the last point's other taps apart), and
# again with the tests when the probe shows a NaN.  A NaN at every column
# of a row in turn: the reference's values, and elsewhere the same bits as
# the probed pass (+0 and -0 ties).  Rows under a vector and of 1-3
# vectors; windows whose steps are 2, 3 and 1 taps, gaps between windows,
# 2-D and 3-D windows.
FEW_CHANNEL_WINDOWS = [
    ((2, 23), dict(kernel=[5], strides=[2], pads_begin=[2], pads_end=[2])),
    ((1, 22), dict(kernel=[4], strides=[3], pads_begin=[1], pads_end=[1], rounding_type="ceil")),
    ((1, 4, 21), dict(kernel=[2, 3], strides=[2, 2], dilations=[1, 3], pads_begin=[0, 2], pads_end=[1, 2])),
    ((1, 4, 27), dict(kernel=[2, 2], strides=[2, 5])),
    ((1, 3, 4, 19), dict(kernel=[2, 1, 3], strides=[2, 1, 4], dilations=[1, 1, 2], pads_begin=[0, 0, 1],
                         pads_end=[1, 0, 1])),
]


@pytest.mark.parametrize("channels", (3, 12, 24, 40))
@pytest.mark.parametrize("spatial,attrs", FEW_CHANNEL_WINDOWS, ids=[str(c[0]) for c in FEW_CHANNEL_WINDOWS])
@pytest.mark.parametrize("dtype", ("f32", "f64", "f16", "bf16"))
def test_nxc_few_channel_maxima_probed_for_nan(spatial, attrs, channels, dtype):
    """The reference's values with one NaN at each column of a row in turn
    (and with none), the probed pass's bits everywhere the NaN does not
    reach."""
    n, *sp = spatial
    x = np.moveaxis(make_input("MaxPool", (n, channels, *sp), dtype, 43), 1, -1).copy()
    x[np.isnan(x) | np.isinf(x)] = 0   # the NaNs placed below only
    x, attrs, pd, prim, plain = _on_the_channel_kernel(x, "MaxPool", dtype, attrs, exclude_pad=False)
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
    assert_matches_reference(plain, want, "MaxPool", dtype, x)
    assert not np.isnan(plain.astype(np.float64)).any()
    rows = [(n - 1,) + tuple(v - 1 for v in sp[:-1])]   # the last row, and a middle one
    if len(sp) > 1:
        rows.append((0,) + tuple(v // 2 for v in sp[:-1]))
    reached = 0
    for row in rows:
        for w in range(sp[-1]):
            y = x.copy()
            y[row + (w, (5 * w) % channels)] = np.nan
            got = prim.execute(y)
            want, _ = reference.padded_formulation(y, dict(attrs, kind="MaxPool", data_format="NXC"))
            assert_matches_reference(got, want, "MaxPool", dtype, y)
            spread = np.isnan(want)
            reached += spread.any()
            np.testing.assert_array_equal(bits(got[~spread]), bits(plain[~spread]))
    assert reached >= len(rows) * sp[-1] // 3   # (windows with gaps between them skip columns)


# NXC maxima with two or more points to a vector of channels (2 * C <= the
# vector's lanes) and stride-2 windows of 2 or 3 dense columns pool each
# output row's window rows into one flat row, then take a vector of outputs
# from two vectors of it by one permute: rows first, then columns, as the
# NCX planes do, whose bits they give (a window's +0 and -0 tie: the NXC
# register blocks keep the first in row-major order, the planes the first
# row's, then the first column's).  Padding before (pb 0 and 1), ceil
# rounding's right padding, rows under one vector of values, output rows
# under one vector, one and several window rows, H dilation; the vector
# splits (4, 8 or 16 lanes) differ per ISA, so the capped runs take others.
DECIMATED = [
    ((2, 7, 9), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 8, 31), dict(kernel=[2, 2], strides=[2, 2])),
    ((1, 9, 12), dict(kernel=[2, 3], strides=[1, 2], pads_begin=[0, 1], pads_end=[1, 1])),
    ((1, 6, 10), dict(kernel=[3, 3], strides=[2, 2], rounding_type="ceil")),
    ((1, 5, 3), dict(kernel=[3, 2], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 0])),
    ((1, 11, 40), dict(kernel=[2, 3], strides=[2, 2], dilations=[3, 1], pads_begin=[0, 1], pads_end=[0, 1])),
    ((1, 3, 5, 21), dict(kernel=[2, 1, 3], strides=[1, 2, 2], pads_begin=[0, 0, 1], pads_end=[0, 0, 1])),
]


@pytest.mark.parametrize("dtype", DTYPES + ("u8", "s8"))
@pytest.mark.parametrize("channels", (2, 3, 5, 7, 8))
@pytest.mark.parametrize("spatial,attrs", DECIMATED, ids=[str(c[0]) for c in DECIMATED])
def test_nxc_maxima_of_few_channels_decimated_rows(spatial, attrs, channels, dtype):
    """The reference's values, the NCX planes' bits when the rows decimate
    (signed zeros among them; else the register blocks') and the same at 3
    threads; a NaN and infinities of both signs."""
    n, *sp = spatial
    if dtype in ("u8", "s8"):
        x = _integers((n, *sp, channels), dtype, 31)
    else:
        x = np.ascontiguousarray(np.moveaxis(make_input("MaxPool", (n, channels, *sp), dtype, 31), 1, -1))
        zeros = np.abs(x) == 0
        x[zeros] = np.where(np.arange(zeros.sum()) % 2, 0.0, -0.0).astype(x.dtype)   # +0 and -0 alike
        x[0, ..., 1, channels - 1] = np.nan
        x[-1, ..., -1, 0] = np.inf
        x[-1, ..., 0, channels // 2] = -np.inf
    pd = dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NXC", **attrs)
    prim = dp.Pooling(pd)
    assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
    got = prim.execute(x)
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(x.dtype).astype(np.float64))
    np.testing.assert_array_equal(bits(got), bits(_same_pooling_elsewhere(prim, x, "MaxPool", dtype, attrs, {})))
    np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=3).execute(x)))


_GUARD_PAGE_CHILD = """
import ctypes, mmap, sys, numpy as np, ml_dtypes, dnnpool as dp
libc = ctypes.CDLL(None, use_errno=True)
page = mmap.PAGESIZE
windows = [((7, 9), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
           ((7, 9), dict(kernel=[2, 2], strides=[2, 2])), ((7, 9), dict(kernel=[3, 3], strides=[2, 2])),
           ((7, 9), dict(kernel=[3, 3], strides=[1, 3], pads_begin=[1, 0], pads_end=[1, 2])),
           ((5, 8, 7), dict(kernel=[3, 3, 3], strides=[2, 3, 2], pads_begin=[0, 1, 1], pads_end=[0, 1, 1]))]
# NCX planes narrower than a vector whose border rows have taps of their own
# (the separable plane path): a vector a tap reads on into the next rows
planes = [((14, 14), dict(kernel=[5, 1], pads_begin=[2, 0], pads_end=[2, 0])),
          ((9, 7), dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
          ((6, 5), dict(kernel=[5, 3], pads_begin=[2, 1], pads_end=[2, 1]))]
# NCX rows decimated (k1 s2-s4) or windowed (k3 s2 over 35) straight from
# src: vector blocks of S vectors stop where their loads would leave the
# row, the columns after them go one by one
decimations = [((9, 57), dict(kernel=[1, 1], strides=[2, 2])), ((9, 64), dict(kernel=[1, 1], strides=[2, 2])),
               ((9, 35), dict(kernel=[3, 3], strides=[2, 2])),
               ((7, 99), dict(kernel=[3, 1], strides=[2, 3], pads_begin=[1, 0], pads_end=[1, 0])),
               ((3, 5, 70), dict(kernel=[1, 1, 1], strides=[2, 2, 4]))]
cases = [("NXC", channels, kind, window) for channels in (1, 3, 8, 12) for kind in ("MaxPool", "AvgPool")
         for window in windows]
cases += [("NCX", channels, kind, window) for channels in (1, 3) for kind in ("MaxPool", "AvgPool")
          for window in planes + decimations]
for dtype, np_dtype in (("f32", np.float32), ("bf16", ml_dtypes.bfloat16), ("u8", np.uint8), ("f64", np.float64)):
    for layout, channels, kind, (spatial, attrs) in cases:
        if kind == "AvgPool" and dtype == "u8":
            continue   # quantized averages: their own parameters, the same point code
        shape = (1, *spatial, channels) if layout == "NXC" else (1, channels, *spatial)
        nbytes = int(np.prod(shape)) * np.dtype(np_dtype).itemsize
        pages = -(-nbytes // page) + 1
        buf = mmap.mmap(-1, pages * page)
        base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        # the page after the array's last byte may not be read
        assert libc.mprotect(ctypes.c_void_p(base + (pages - 1) * page), page, 0) == 0   # PROT_NONE
        raw = np.frombuffer(buf, np.uint8, count=nbytes, offset=(pages - 1) * page - nbytes)
        x = raw.view(np_dtype).reshape(shape)
        x[...] = (np.arange(x.size).reshape(shape) % 97).astype(np_dtype)
        pd = dp.PoolingDesc(kind, shape, dtype, data_format=layout, **attrs)
        got = dp.Pooling(pd).execute(x)
        want = dp.Pooling(pd).execute(np.ascontiguousarray(np.pad(x, [(0, 1)] + [(0, 0)] * (x.ndim - 1))[:1]))
        assert np.array_equal(got.astype(np.float64), want.astype(np.float64)), (dtype, layout, kind, channels, attrs)
        del x, raw
print("ok")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="mprotect through ctypes: Linux")
def test_points_under_a_vector_of_channels_never_read_past_src():
    """Points of fewer channels than a vector (maxima and averages, windows
    whole or cut by the padding) read whole vectors, past their own channels
    (NCX narrow planes past their rows, decimated rows in blocks of vectors):
    with a page no process may read right after src's last byte, the pooling
    still runs (in a child: a fault would kill it) and matches, bit for bit,
    src copied into a larger buffer (where the last points read vectors)."""
    run = run_python(["-c", _GUARD_PAGE_CHILD], timeout=120)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stdout.strip() == "ok"


# NCX planes narrower than a vector under "same" stride-1 windows (the
# separable plane path): runs of rows with the same taps pool together; a
# border row, with taps of its own, is a run under a vector, pooled a vector
# a tap reading on into the next rows while that stays inside src (the last
# plane's lane by lane: the guard-page test above covers both).
NARROW_PLANES = [((4, 3, 14, 14), dict(kernel=[5, 1], pads_begin=[2, 0], pads_end=[2, 0])),
                 ((2, 2, 9, 7), dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
                 ((1, 3, 6, 5), dict(kernel=[5, 3], pads_begin=[2, 1], pads_end=[2, 1]))]


NCX_PATH_KINDS = [("MaxPool", "f32"), ("MaxPool", "bf16"), ("MaxPool", "f64"), ("MaxPool", "u8"),
                  ("AvgPool", "f32"), ("AvgPool", "f16"), ("AvgPool", "f64")]


def _check_ncx_path(x, attrs, kind, dtype, kernel):
    """NCX x pooled by the kernel named `kernel`: the reference's values
    (maxima exactly, with NaNs and infinities; averages within the type's
    rounding) and the same bits at 3 threads.  Returns the result."""
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NCX", **attrs)
    prim = dp.Pooling(pd)
    assert prim.kernel_name.endswith(kernel), prim.kernel_name
    got = prim.execute(x)
    want, _ = reference.padded_formulation(np.ascontiguousarray(x), dict(attrs, kind=kind, data_format="NCX"))
    assert_matches_reference(got, want, kind, dtype, x)
    np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=3).execute(x)))
    return got


def _ncx_case(shape, attrs, kind, dtype, seed, exclude_pad):
    """An NCX input for _check_ncx_path (integers for u8) and the attributes,
    averages' exclude_pad set."""
    x = _integers(shape, dtype, seed) if dtype == "u8" else make_input(kind, shape, dtype, seed)
    return x, dict(attrs, exclude_pad=exclude_pad) if kind == "AvgPool" else attrs


def _pooled_as_a_strided_view(x, attrs, kind, dtype):
    """x pooled as every other column of rows twice as long: src rows that are
    not dense, which the separable passes take row by row."""
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    prim = dp.Pooling(dp.PoolingDesc(kind, x.shape, dtype, data_format="NCX", **attrs))
    return prim.execute(wide[..., ::2])


@pytest.mark.parametrize("kind,dtype", NCX_PATH_KINDS)
@pytest.mark.parametrize("shape,attrs", NARROW_PLANES, ids=[str(c[0]) for c in NARROW_PLANES])
def test_ncx_narrow_planes_pool_their_border_rows(shape, attrs, kind, dtype):
    """_check_ncx_path, averages with the divisor with and without the padding."""
    x, attrs = _ncx_case(shape, attrs, kind, dtype, 5, exclude_pad=shape[-1] % 2 == 1)
    _check_ncx_path(x, attrs, kind, dtype, ":separable+plane")


# NCX rows under four vectors whose H windows are strided (no rows shared
# between neighbouring windows): the D/H taps of a run of full windows are
# reduced together, the vectors of several rows at once (a row's last vector
# overlapping the one before); border windows and rows under a vector row by
# row.  Views narrower than their rows keep planes 4 KB apart, so the taps go
# in passes that continue the partial results (sums over rows that end
# mid-vector take those row by row).
SHORT_STRIDED_ROWS = [
    ((1, 3, 6, 12, 28), dict(kernel=[3, 3, 3], strides=[1, 2, 3], pads_begin=[1, 1, 0], pads_end=[1, 1, 0])),
    ((2, 3, 11, 16), dict(kernel=[3, 2], strides=[2, 1], pads_begin=[1, 0], pads_end=[1, 0])),
    ((1, 2, 9, 10), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 2, 15, 40), dict(kernel=[3, 3], strides=[2, 3], dilations=[2, 1], pads_begin=[1, 1], pads_end=[1, 1],
                          rounding_type="ceil")),
    ((1, 2, 11, 32, 32), dict(kernel=[9, 3, 3], strides=[1, 2, 3], pads_begin=[4, 0, 0], pads_end=[4, 0, 0])),
    ((1, 2, 11, 32, 30), dict(kernel=[9, 3, 3], strides=[1, 2, 3], pads_begin=[4, 0, 0], pads_end=[4, 0, 0])),
]


@pytest.mark.parametrize("kind,dtype", NCX_PATH_KINDS)
@pytest.mark.parametrize("shape,attrs", SHORT_STRIDED_ROWS, ids=[str(c[0]) for c in SHORT_STRIDED_ROWS])
def test_ncx_short_rows_of_strided_windows_pool_runs_of_rows(shape, attrs, kind, dtype):
    """_check_ncx_path, rows of 30 as views of rows of 32."""
    wide = shape[:-1] + (32,) if shape[-1] == 30 else shape
    x, attrs = _ncx_case(wide, attrs, kind, dtype, 6, exclude_pad=shape[-2] % 2 == 1)
    _check_ncx_path(x[..., :shape[-1]], attrs, kind, dtype, ":separable")


# NCX k3 s2 windows along H over up to three planes, rows of 1-4 vectors: a
# run of full windows keeps each plane's last row in registers as the next
# window's first (the last vector of a row overlapping the one before).
# Planes: 3 inside, 2 at the D borders, 1 in 2-D; runs cut by the threads'
# chunks and by the H borders; rows of 64 (four f32 vectors, eight f64 ones:
# those stay row by row) and rows under a vector (row by row too).
CARRIED_ROWS = [
    ((1, 3, 9, 21, 56), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ((1, 2, 7, 37, 64), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ((1, 2, 5, 37, 49), dict(kernel=[2, 3, 3], strides=[1, 2, 2], pads_begin=[0, 1, 1], pads_end=[0, 1, 1])),
    ((2, 2, 6, 17, 20), dict(kernel=[3, 3, 3], strides=[3, 2, 1], pads_begin=[1, 0, 1], pads_end=[1, 0, 1],
                             rounding_type="ceil")),
    ((1, 3, 23, 40), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 2, 4, 19, 17), dict(kernel=[1, 3, 3], strides=[1, 2, 1], pads_begin=[0, 1, 1], pads_end=[0, 1, 1])),
    ((1, 2, 5, 15, 12), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
]


@pytest.mark.parametrize("kind,dtype", NCX_PATH_KINDS)
@pytest.mark.parametrize("shape,attrs", CARRIED_ROWS, ids=[str(c[0]) for c in CARRIED_ROWS])
def test_ncx_k3_s2_runs_carry_their_last_row(shape, attrs, kind, dtype):
    """_check_ncx_path, and the same bits as the rows of a W-strided view (the
    taps from rows widened first, one output row at a time)."""
    x, attrs = _ncx_case(shape, attrs, kind, dtype, 8, exclude_pad=shape[-2] % 2 == 1)
    got = _check_ncx_path(x, attrs, kind, dtype, ":separable")
    np.testing.assert_array_equal(bits(_pooled_as_a_strided_view(x, attrs, kind, dtype)), bits(got))


# NCX stride-1 windows along H with depth taps over dense rows under four
# vectors and no W padding: a run of full windows' stacked rows abut in src
# and in the stack, so their D/H taps reduce as one flat run (rows under a
# vector vectorise too).  Rows of 7 (the k2x3x5 maxima that went a value at a
# time), of 20 (mid-vector ends), of 32 with 9 planes 4 KB apart (the taps in
# passes continuing the partial sums); H borders cut the runs.  The same bits
# as the rows of a W-strided view (not dense: row by row).
FLAT_RUN_ROWS = [
    ((1, 2, 6, 9, 7), dict(kernel=[2, 3, 5], strides=[1, 1, 1])),
    ((1, 3, 5, 12, 20), dict(kernel=[3, 3, 3], strides=[1, 1, 1], pads_begin=[1, 1, 0], pads_end=[1, 1, 0])),
    ((2, 2, 4, 10, 9), dict(kernel=[3, 2, 1], strides=[2, 1, 1], rounding_type="ceil")),
    ((1, 2, 11, 32, 32), dict(kernel=[9, 3, 3], strides=[1, 1, 1], pads_begin=[4, 1, 0], pads_end=[4, 1, 0])),
]


@pytest.mark.parametrize("kind,dtype", NCX_PATH_KINDS)
@pytest.mark.parametrize("shape,attrs", FLAT_RUN_ROWS, ids=[str(c[0]) for c in FLAT_RUN_ROWS])
def test_ncx_runs_of_abutting_rows_pool_as_one_flat_run(shape, attrs, kind, dtype):
    """_check_ncx_path, and the bits of the rows of a W-strided view."""
    x, attrs = _ncx_case(shape, attrs, kind, dtype, 9, exclude_pad=shape[-2] % 2 == 0)
    got = _check_ncx_path(x, attrs, kind, dtype, "")
    assert ":separable" in dp.Pooling(dp.PoolingDesc(kind, x.shape, dtype, data_format="NCX", **attrs)).kernel_name
    np.testing.assert_array_equal(bits(_pooled_as_a_strided_view(x, attrs, kind, dtype)), bits(got))


# Runs of rows pooling maxima together keep NaN where it falls: values that
# are neither NaN nor infinite, a NaN at a run's middle row or in the last src
# row, and infinities (both signs, or one).
RUN_SPECIALS = {
    "none": [], "nan mid-run": [((0, 1, 4, 7, 9), np.nan)], "nan last row": [((0, 2, 8, 13, 27), np.nan)],
    "infinities of both signs": [((0, 0, 3, 6, 5), np.inf), ((0, 0, 5, 8, 20), -np.inf)],
    "one infinity": [((0, 1, 2, 2, 2), -np.inf)],
    "nan and infinities": [((0, 2, 1, 9, 3), np.inf), ((0, 2, 1, 9, 4), -np.inf), ((0, 0, 6, 5, 14), np.nan)],
}


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f64"])
@pytest.mark.parametrize("special", list(RUN_SPECIALS))
def test_ncx_short_row_runs_of_maxima_probed_for_nan(special, dtype):
    """_check_ncx_path (the reference's maxima, NaNs and infinities where they
    fall, the same bits at 3 threads) over 3-D k3 s2 p1 windows on rows of 28."""
    x = (np.random.default_rng(14).standard_normal((1, 3, 9, 14, 28)) * 40).round().astype(NUMPY[dtype])
    for at, value in RUN_SPECIALS[special]:
        x[at] = value
    got = _check_ncx_path(x, dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1]),
                          "MaxPool", dtype, ":separable")
    assert np.isnan(got.astype(np.float64)).any() == ("nan" in special)


# NXC rows of fewer channels than a vector under strided windows too large
# for the channel kernels' points (separable_lanes): the W pass splits each
# row into stride phases (a 64-byte copy per position), then pools every tap
# as one unit-stride stream.  Dilated, ceil-rounded, 2-D and 3-D; the values
# pass and, with indices, the rows pass.
LANE_PHASES = [
    (3, (2, 20, 57), dict(kernel=[5, 5], strides=[2, 2], pads_begin=[1, 2], pads_end=[1, 2])),
    (5, (1, 19, 40), dict(kernel=[5, 5], strides=[3, 2], dilations=[1, 2], pads_begin=[1, 1], pads_end=[1, 2],
                          rounding_type="ceil")),
    (7, (1, 6, 8, 25), dict(kernel=[3, 3, 5], strides=[2, 2, 2], pads_begin=[1, 1, 2], pads_end=[1, 1, 2])),
    (15, (1, 12, 33), dict(kernel=[7, 7], strides=[4, 4], pads_begin=[3, 3], pads_end=[3, 3])),
]


@pytest.mark.parametrize("kind,dtype", [("MaxPool", "f32"), ("MaxPool", "bf16"), ("MaxPool", "f64"), ("MaxPool", "u8"),
                                        ("AvgPool", "f32"), ("AvgPool", "f16"), ("AvgPool", "f64"), ("AvgPool", "u8")])
@pytest.mark.parametrize("channels,spatial,attrs", LANE_PHASES, ids=[str(c[:2]) for c in LANE_PHASES])
def test_nxc_strided_rows_of_few_channels_split_into_phases(channels, spatial, attrs, kind, dtype):
    """The bits of the same channels pooled as part of 128 (a fused pass per
    output), at 1 and 3 threads, and the reference's values; maxima also with
    indices."""
    n, *sp = spatial
    quantized = dtype == "u8"
    x = _integers((n, *sp, channels), dtype, 23) if quantized else \
        np.ascontiguousarray(np.moveaxis(make_input(kind, (n, channels, *sp), dtype, 23), 1, -1))
    q = dict(src_scale=0.05, src_zero_point=7, dst_scale=0.04, dst_zero_point=3) if quantized and kind == "AvgPool" else {}
    if kind == "AvgPool":
        attrs = dict(attrs, exclude_pad=channels % 2 == 1)
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs, **q)
    prim = dp.Pooling(pd)
    assert prim.kernel_name.endswith(":separable_lanes"), prim.kernel_name
    got = prim.execute(x)
    np.testing.assert_array_equal(bits(got), bits(_inside_128_channels(x, kind, dtype, attrs, q)[1]))
    np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=3).execute(x)))
    full = dict(attrs, kind=kind, data_format="NXC", **q)
    assert_matches_its_reference(got, x, kind, dtype, full)
    if kind == "MaxPool":
        values, idx = prim.execute(x, with_indices=True)
        _, want_idx = reference.padded_formulation(x, full)
        np.testing.assert_array_equal(values.astype(np.float64), got.astype(np.float64))   # +0, -0 ties: either
        np.testing.assert_array_equal(idx, want_idx)


def assert_matches_its_reference(got, x, kind, dtype, full):
    """got against the reference its type takes: quantized averages (full
    has their scales) within a step but for ties, other 8-bit results
    exactly, floats as assert_matches_reference."""
    if kind == "AvgPool" and "src_scale" in full:
        assert_quantized_matches_reference(got, x, full)
    elif x.dtype in (np.uint8, np.int8):
        np.testing.assert_array_equal(got, reference.pool(x, full))
    else:
        want, _ = reference.padded_formulation(x, full)
        assert_matches_reference(got, want, kind, dtype, x)



# NXC stride-1 rows of a few outputs over a vector of channels or fewer
# (separable_lanes): the passes pool whole rows of (w, c) values where the
# channel kernel would pay a row's setup for a few points (or, with fewer
# values than a vector on the row, go point by point).  2-D and 3-D,
# padded, ceil-rounded, exclude_pad; rows of 2 to 8 outputs.
SHORT_ROWS = [
    (3, (1, 8, 28, 7), dict(kernel=[3, 3, 3], strides=[1, 1, 1])),
    (2, (2, 30, 5), dict(kernel=[3, 3], strides=[1, 1], pads_begin=[1, 0], pads_end=[1, 0])),
    (4, (1, 5, 9, 7), dict(kernel=[2, 2, 3], strides=[3, 2, 1], pads_begin=[0, 1, 1], pads_end=[1, 0, 0],
                           rounding_type="ceil")),
    (6, (3, 17, 4), dict(kernel=[5, 2], strides=[2, 1], pads_begin=[2, 0], pads_end=[2, 0])),
]
_VEC_BYTES = {"baseline": 16, "avx2": 32}   # every other ISA: 64


@pytest.mark.parametrize("kind,dtype", [("MaxPool", "f32"), ("MaxPool", "bf16"), ("MaxPool", "f64"), ("MaxPool", "u8"),
                                        ("AvgPool", "f32"), ("AvgPool", "f16"), ("AvgPool", "f64")])
@pytest.mark.parametrize("channels,spatial,attrs", SHORT_ROWS, ids=[str(c[:2]) for c in SHORT_ROWS])
def test_nxc_short_rows_of_few_channels_pool_as_rows(channels, spatial, attrs, kind, dtype):
    """The reference's values, the same bits at 1 and 3 threads; maxima the
    bits of the same channels pooled as part of 128 (the channel kernel),
    and with indices the reference's; rows of 9 outputs stay on the channel
    kernel."""
    n, *sp = spatial
    x = _integers((n, *sp, channels), dtype, 31) if dtype == "u8" else \
        np.ascontiguousarray(np.moveaxis(make_input(kind, (n, channels, *sp), dtype, 31), 1, -1))
    if kind == "AvgPool":
        attrs = dict(attrs, exclude_pad=channels % 2 == 1)
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs)
    prim = dp.Pooling(pd)
    lanes = _VEC_BYTES.get(prim.kernel_name.split(":")[0], 64) // (8 if dtype == "f64" else 4)
    if channels > lanes:   # (a baseline build's f64 vector holds 2)
        pytest.skip(f"{channels} channels are more than a vector of {lanes} here")
    assert prim.kernel_name.endswith(":separable_lanes"), prim.kernel_name
    got = prim.execute(x)
    full = dict(attrs, kind=kind, data_format="NXC")
    assert_matches_its_reference(got, x, kind, dtype, full)
    np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=3).execute(x)))
    if kind == "MaxPool":
        elsewhere, inside = _inside_128_channels(x, kind, dtype, attrs)
        assert kernel_variant(elsewhere).endswith(":channel_block"), elsewhere.kernel_name
        np.testing.assert_array_equal(bits(got), bits(inside))
        values, idx = prim.execute(x, with_indices=True)
        _, want_idx = reference.padded_formulation(x, full)
        np.testing.assert_array_equal(values.astype(np.float64), got.astype(np.float64))   # +0, -0 ties: either
        np.testing.assert_array_equal(idx, want_idx)
    longer = dp.Pooling(dp.PoolingDesc(kind, (*x.shape[:-2], x.shape[-2] + 8, channels), dtype, data_format="NXC",
                                       **attrs))   # rows of 9 outputs and more
    assert longer.desc.dst_shape[-2] > 8 and kernel_variant(longer).endswith(":channel_block"), longer.kernel_name

# NXC 3-D windows strided along H and W over a vector of channels and a
# tail of at most a quarter vector (separable_lanes): the channel kernel
# would pay a whole vector at every tap for the tail's few lanes.  Padded,
# ceil-rounded, exclude_pad; k3 s3 over rows of 3 outputs (2 of them at the
# borders), k3 s2 p1, and a mixed window.
TAIL_3D = [
    ((1, 16, 28, 7), dict(kernel=[3, 3, 3], strides=[3, 3, 3], pads_begin=[0, 0, 1], pads_end=[0, 0, 1])),
    ((1, 8, 12, 12), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ((2, 7, 9, 10), dict(kernel=[3, 3, 3], strides=[2, 2, 3], pads_begin=[1, 0, 1], pads_end=[0, 1, 1],
                         rounding_type="ceil")),
]


@pytest.mark.parametrize("kind,dtype", [("MaxPool", "f32"), ("MaxPool", "bf16"), ("MaxPool", "f64"),
                                        ("AvgPool", "f32"), ("AvgPool", "f16"), ("AvgPool", "f64")])
@pytest.mark.parametrize("spatial,attrs", TAIL_3D, ids=[str(c[0]) for c in TAIL_3D])
def test_nxc_3d_strided_windows_over_a_short_channel_tail_pool_as_rows(spatial, attrs, kind, dtype):
    """A vector of channels and one lane, and a vector and a quarter: the
    reference's values and the same bits at 3 threads; maxima the bits of
    the same channels pooled as part of 128.  A tail of
    half a vector, two vectors and a lane, and 8-bit maxima stay on the
    channel kernel."""
    n, *sp = spatial
    probe = dp.Pooling(dp.PoolingDesc(kind, (n, *sp, 1), dtype, data_format="NXC", **attrs))
    lanes = _VEC_BYTES.get(probe.kernel_name.split(":")[0], 64) // (8 if dtype == "f64" else 4)
    if kind == "AvgPool":
        attrs = dict(attrs, exclude_pad=spatial[0] == 2)
    full = dict(attrs, kind=kind, data_format="NXC")
    tails = sorted({c for c in (lanes + 1, lanes + lanes // 4) if lanes < c <= lanes + lanes // 4})   # none: 2 lanes
    for channels in tails:
        x = np.ascontiguousarray(np.moveaxis(make_input(kind, (n, channels, *sp), dtype, 37), 1, -1))
        pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs)
        prim = dp.Pooling(pd)
        assert prim.kernel_name.endswith(":separable_lanes"), (channels, prim.kernel_name)
        got = prim.execute(x)
        assert_matches_its_reference(got, x, kind, dtype, full)
        np.testing.assert_array_equal(bits(got), bits(dp.Pooling(pd, num_threads=3).execute(x)))
        if kind == "MaxPool":
            np.testing.assert_array_equal(bits(got), bits(_inside_128_channels(x, kind, dtype, attrs)[1]))
    for channels, stays in ((lanes + lanes // 2, dtype), (2 * lanes + 1, dtype)) + (
            ((lanes + 1, "u8"),) if kind == "MaxPool" else ()):
        other = dp.Pooling(dp.PoolingDesc(kind, (n, *sp, channels), stays, data_format="NXC", **attrs))
        assert kernel_variant(other).endswith(":channel_block"), (channels, stays, other.kernel_name)


def placed(x, offset_bytes):
    """A C-contiguous copy of x starting offset_bytes past a 64-byte boundary."""
    raw = np.empty(x.nbytes + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset_bytes
    out = raw[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


@pytest.mark.parametrize("dtype", ("f32", "bf16", "f64"))
@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
def test_flat_rows_whatever_the_alignment(kind, dtype):
    """NXC stride-1 rows start their blocks where src loads are aligned, with an
    overlapping head vector: every src and dst alignment gives the same bits,
    and the reference's values."""
    x = np.ascontiguousarray(np.moveaxis(make_input(kind, (1, 24, 7, 21), dtype, 11), 1, -1))
    attrs = dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=True) if kind == "AvgPool" \
        else dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])
    prim = dp.Pooling(dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs))
    base = prim.execute(placed(x, 0)).astype(np.float64)
    itemsize = x.dtype.itemsize
    for src_off in range(0, 64, itemsize):
        dst = placed(np.zeros(base.shape, x.dtype), (src_off * 3) % 64)
        prim.execute(placed(x, src_off), dst=dst)
        np.testing.assert_array_equal(dst.astype(np.float64), base, err_msg=f"src offset {src_off}")
    want, _ = reference.padded_formulation(x, dict(attrs, kind=kind, data_format="NXC"))
    assert_matches_reference(base, want, kind, dtype, x)


@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
def test_strided_nxc_stride_one_rows_match_dense_rows(kind):
    """NXC k3 s1 rows that are not dense in memory slide over their columns
    instead of the flat rows: both pool rows first, then columns, so they
    agree bit for bit (64 channels: whole slid blocks for every ISA; a
    channel tail would go point by point, in row-major order)."""
    x = np.ascontiguousarray(np.moveaxis(make_input(kind, (1, 64, 12, 30), "f32", 9), 1, -1))
    view = x[:, :, ::2, :]                                # W stride 2*C: not dense rows
    attrs = dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=True) if kind == "AvgPool" \
        else dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])
    prim = dp.Pooling(dp.PoolingDesc(kind, view.shape, "f32", data_format="NXC", **attrs))
    np.testing.assert_array_equal(prim.execute(view), prim.execute(np.ascontiguousarray(view)))


@pytest.mark.parametrize("dtype", ("f32", "bf16", "f16", "f64"))
@pytest.mark.parametrize("nan_at", [None, (20, 22, 5), (0, 10, 63), (33, 0, 0), (17, 44, 31)],
                         ids=["no NaN", "interior", "first row", "first column", "last column"])
def test_nxc_stride_one_maxima_probed_for_nan(nan_at, dtype):
    """NXC k7 s1 maxima over chunks of 16 stacked rows: the shared blocks of a
    chunk (and the W pass of their rows) compare without NaN tests when a
    probe of their src rows finds none, and are redone with them when it
    does; rows of border blocks keep the tests.  No infinities here, so only
    a real NaN can trip the probe: one NaN in an interior chunk, a border
    chunk or a border column comes out exactly where the reference puts it."""
    x = np.round(np.random.default_rng(5).standard_normal((1, 40, 45, 64)) * 8).astype(NUMPY[dtype])
    if nan_at is not None:
        x[(0,) + nan_at] = np.nan
    attrs = dict(kernel=[7, 7], pads_begin=[3, 3], pads_end=[3, 3])
    prim = dp.Pooling(dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NXC", **attrs))
    assert "separable_lanes" in prim.kernel_name
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
    got = prim.execute(x).astype(np.float64)
    np.testing.assert_array_equal(got, want.astype(NUMPY[dtype]).astype(np.float64))
    assert np.isnan(got).any() == (nan_at is not None)


# NXC stride-1 maxima over dense rows (channel_block's flat rows): (shape,
# kernel, pads).  One-row windows (1-D, and a 1 x k window) of 16- and
# 32-bit values, and every window of 16-bit values, compare without NaN tests
# when a probe of their src columns finds none; the columns of the first
# window but its last are probed apart from the rest.  k4 has its window
# counted at run time, k3 at compile time.
FLAT_ROWS = [
    ((1, 300, 48), (4,), (0,)),
    ((2, 90, 40), (3,), (1,)),
    ((1, 70, 5), (5,), (2,)),
    ((1, 9, 40, 24), (1, 4), (0, 1)),
    ((1, 14, 14, 48), (3, 3), (1, 1)),
]
FLAT_SPECIALS = {
    "none": [],
    "first column": [(0, 0)],          # (position along the flat row, channel): a head column
    "second column": [(1, 7)],
    "interior": [(33, 2)],
    "last column": [(-1, -1)],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("special", list(FLAT_SPECIALS) + ["infinities of both signs"])
@pytest.mark.parametrize("shape,kernel,pads", FLAT_ROWS, ids=[f"{len(c[0]) - 2}d k{c[1][-1]} C{c[0][-1]}" for c in FLAT_ROWS])
def test_nxc_flat_row_maxima_probed_for_nan(shape, kernel, pads, special, dtype):
    """A NaN anywhere along a flat row comes out in exactly the reference's
    windows, whether the row was probed or tested; infinities of both signs
    (a probe that sums to NaN without one) still give the reference's
    maxima; and no NaN appears where there was none."""
    x = np.round(np.random.default_rng(9).standard_normal(shape) * 8).astype(NUMPY[dtype])
    rows = x.reshape(shape[0], -1, shape[-1])   # (n, positions, channels), a view
    for pos, ch in FLAT_SPECIALS.get(special, []):
        rows[-1, pos if pos >= 0 else rows.shape[1] + pos, ch % shape[-1]] = np.nan
    if special == "infinities of both signs":
        rows[0, 3, 1], rows[0, 4, 1], rows[-1, 20, 0] = np.inf, -np.inf, -np.inf
    attrs = dict(kernel=list(kernel), pads_begin=list(pads), pads_end=list(pads))
    prim = dp.Pooling(dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NXC", **attrs))
    assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
    got = prim.execute(x).astype(np.float64)
    np.testing.assert_array_equal(got, want.astype(NUMPY[dtype]).astype(np.float64))
    assert np.isnan(got).any() == (special in FLAT_SPECIALS and special != "none")


# NCX stride-1 maxima whose W pass doubles (one lane, 64-byte vectors:
# windows of 4 to 2 VL - 1 columns).  (shape, kernel, pads_begin, pads_end,
# rounding): rows of exactly one vector, with a tail, shorter than the slack;
# windows of one row and square ones (k15: the H pass streams van Herk blocks).
DOUBLED_ROWS = [
    ((1, 2, 9, 16), (3, 4), (1, 0), (1, 1), "floor"),
    ((1, 3, 11, 37), (1, 5), (0, 2), (0, 1), "floor"),
    ((2, 1, 6, 53), (2, 7), (0, 2), (1, 3), "ceil"),
    ((1, 2, 20, 40), (8, 8), (4, 4), (3, 2), "floor"),
    ((1, 1, 7, 70), (1, 9), (0, 0), (0, 0), "floor"),
    ((1, 2, 33, 61), (15, 15), (7, 7), (7, 5), "floor"),
    ((1, 1, 40, 256), (15, 15), (7, 7), (7, 7), "floor"),
    ((1, 1, 5, 100), (2, 16), (0, 8), (1, 7), "floor"),
    ((1, 2, 12, 90), (3, 17), (1, 8), (1, 8), "ceil"),
    ((1, 1, 4, 64), (1, 31), (0, 15), (0, 14), "floor"),
]


def _doubles(prim, kind, kw, dtype):
    """Whether the plan doubles this W pass (plan.hpp: doubling_fits)."""
    vec_bytes = _vec_bytes(prim)
    lanes = 64 // (8 if dtype == "f64" else 4)
    return vec_bytes == 64 and kw >= 4 and (kw < 2 * lanes if kind == "MaxPool" else kw <= lanes)


@pytest.mark.parametrize("dtype", DTYPES + ("u8", "s8"))
@pytest.mark.parametrize("shape,kernel,pb,pe,rounding", DOUBLED_ROWS, ids=[f"k{c[1][0]}x{c[1][1]} W{c[0][3]}" for c in DOUBLED_ROWS])
def test_ncx_stride_one_maxima_doubled_along_rows(shape, kernel, pb, pe, rounding, dtype):
    """The doubled W pass gives the reference's maxima (ties, both
    infinities and NaNs: make_input), the index path's values, and the same
    bits at 1, 2 and 3 threads; a NaN in the last window of a row, or only in
    its first one, is not lost."""
    x = _integers(shape, dtype, 12) if dtype in ("u8", "s8") else make_input("MaxPool", shape, dtype, 12)
    if dtype not in ("u8", "s8"):
        x[0, 0, 0, -1] = np.nan
        x[0, -1, -1, 0] = np.nan
    attrs = dict(kernel=list(kernel), pads_begin=list(pb), pads_end=list(pe), rounding_type=rounding)
    pd = dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NCX", **attrs)
    prim = dp.Pooling(pd)
    # the doubled pass where it fits, and only there (the factored one is "+wslide")
    assert (":separable+wdouble" in prim.kernel_name) == _doubles(prim, "MaxPool", kernel[1], dtype), prim.kernel_name
    got = prim.execute(x).astype(np.float64)
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NCX"))
    np.testing.assert_array_equal(got, want.astype(x.dtype).astype(np.float64))
    np.testing.assert_array_equal(got, prim.execute(x, with_indices=True)[0].astype(np.float64))
    for threads in (2, 3):
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=threads).execute(x).astype(np.float64))


@pytest.mark.parametrize("exclude_pad", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,kernel,pb,pe,rounding", DOUBLED_ROWS, ids=[f"k{c[1][0]}x{c[1][1]} W{c[0][3]}" for c in DOUBLED_ROWS])
def test_ncx_stride_one_averages_doubled_along_rows(shape, kernel, pb, pe, rounding, dtype, exclude_pad):
    """The doubled W pass's sums (the window's binary digits) give the
    reference's averages with either divisor, and the same bits at 1, 2 and
    3 threads."""
    x = make_input("AvgPool", shape, dtype, 13)
    attrs = dict(kernel=list(kernel), pads_begin=list(pb), pads_end=list(pe), rounding_type=rounding,
                 exclude_pad=exclude_pad)
    pd = dp.PoolingDesc("AvgPool", x.shape, dtype, data_format="NCX", **attrs)
    prim = dp.Pooling(pd)
    # the doubled pass where it fits, and only there (the factored one is "+wslide")
    assert (":separable+wdouble" in prim.kernel_name) == _doubles(prim, "AvgPool", kernel[1], dtype), prim.kernel_name
    got = prim.execute(x).astype(np.float64)
    want, _ = reference.padded_formulation(x, dict(attrs, kind="AvgPool", data_format="NCX"))
    assert_matches_reference(got, want, "AvgPool", dtype, x)
    for threads in (2, 3):
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=threads).execute(x).astype(np.float64))


_SCANNED_WANT = {}   # reference maxima per (shape, NaN position, k), the same in every dtype


@pytest.mark.parametrize("dtype", ("f32", "bf16", "f16", "f64"))
@pytest.mark.parametrize("shape, nan_at", [
    ((1, 3, 40, 70), None), ((1, 3, 40, 70), (1, 20, 22)), ((1, 3, 40, 70), (2, 0, 10)),
    ((1, 3, 40, 70), (0, 39, 69)), ((1, 3, 40, 70), (2, 1, 0)),
    # rows of 300: column strips, chunks of 44 (k7) or 48 (k5) rows; a NaN
    # in the second chunk, in the last strip
    ((1, 1, 60, 300), None), ((1, 1, 60, 300), (0, 50, 290)), ((1, 1, 60, 300), (0, 44, 3)),
], ids=["no NaN", "interior", "first row", "last row, last column", "first column",
        "long rows, no NaN", "long rows, second chunk", "long rows, a chunk boundary"])
def test_ncx_stride_one_maxima_scanned_for_nan(shape, nan_at, dtype):
    """NCX k5/k7 s1 maxima over stacked shared blocks (rows of 64 or more):
    src rows are checked for NaN as the blocks reach them, and the blocks,
    border rows and W pass of rows whose src rows are clean compare without
    NaN tests.  No infinities, so only a real NaN makes rows unclean: one NaN
    anywhere comes out exactly where the reference puts it."""
    x = np.round(np.random.default_rng(6).standard_normal(shape) * 8)   # exact in every dtype
    if nan_at is not None:
        x[(0,) + nan_at] = np.nan
    for k in (5, 7):
        attrs = dict(kernel=[k, k], pads_begin=[k // 2] * 2, pads_end=[k // 2] * 2)
        prim = dp.Pooling(dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NCX", **attrs))
        assert prim.kernel_name.split(":")[1] in ("separable", "separable+wslide", "separable+wdouble"), prim.kernel_name
        key = (shape, nan_at, k)
        if key not in _SCANNED_WANT:   # the same maxima in every dtype: computed once
            _SCANNED_WANT[key] = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NCX"))[0]
        got = prim.execute(x.astype(NUMPY[dtype])).astype(np.float64)
        np.testing.assert_array_equal(got, _SCANNED_WANT[key])
        assert np.isnan(got).any() == (nan_at is not None)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind,layout,shape,k", [
    ("MaxPool", "NXC", (1, 24, 13, 20), 7),    # channel rows of 96 bytes: every column placed differently
    ("AvgPool", "NXC", (1, 64, 12, 9), 5),
    ("MaxPool", "NCX", (1, 2, 11, 150), 5),    # rows of 150: a last vector overlapping the one before
    ("AvgPool", "NCX", (2, 1, 9, 203), 4),
])
def test_shared_rows_whatever_the_src_placement(kind, layout, shape, k, dtype):
    """The shared H pass starts long rows' blocks where src loads are aligned,
    behind a head vector they overlap, and ends them with a vector overlapping
    the one before: the same windows at every placement of src, the same bits."""
    x = make_input(kind, shape, dtype, seed=11)
    if layout == "NXC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    attrs = dict(kernel=[k, k], pads_begin=[k // 2] * 2, pads_end=[(k - 1) // 2] * 2,
                 **(dict(exclude_pad=True) if kind == "AvgPool" else {}))
    prim = dp.Pooling(dp.PoolingDesc(kind, x.shape, dtype, data_format=layout, **attrs), num_threads=1)
    want, _ = reference.padded_formulation(x, dict(attrs, kind=kind, data_format=layout))
    first = prim.execute(placed(x, 0)).astype(np.float64)
    assert_matches_reference(first, want, kind, dtype, x)
    other = make_input(kind, shape, dtype, seed=12).reshape(x.shape)
    for offset in range(x.itemsize, 64, x.itemsize):
        prim.execute(placed(other, 0))   # scratch left holding another input's rows
        got = prim.execute(placed(x, offset)).astype(np.float64)
        np.testing.assert_array_equal(got, first, err_msg=f"src {offset} bytes past a 64-byte boundary")


# NXC windows of many taps over channel rows of 2 KB or more stream their
# taps in passes over partial results.  When every tap's row sits the same
# number of values past a vector boundary, the passes load from that
# boundary and drop the lanes before src: bytes of whatever shares src's
# first cache line, here all-ones bytes (NaN in every float type), which must
# not reach any output.  Global windows (rows of 1024 and 1040 channels) and
# disjoint 3-D k3 s3 windows with padding; 1030 channels put the taps at
# different placements (no shift).
STREAMED = [
    ("AvgPool", (2, 7, 7, 1024), dict(kernel=[7, 7])),
    ("MaxPool", (1, 5, 6, 1040), dict(kernel=[5, 6])),
    ("AvgPool", (1, 6, 7, 6, 1040), dict(kernel=[3, 3, 3], strides=[3, 3, 3], pads_begin=[1, 0, 0], pads_end=[0, 0, 0])),
    ("MaxPool", (1, 6, 7, 6, 1040), dict(kernel=[3, 3, 3], strides=[3, 3, 3], pads_begin=[1, 0, 0], pads_end=[0, 0, 0])),
    ("MaxPool", (1, 5, 5, 1030), dict(kernel=[5, 5])),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind,shape,attrs", STREAMED, ids=[f"{c[0]}{c[1]}k{c[2]['kernel']}" for c in STREAMED])
def test_streamed_taps_whatever_the_src_placement(kind, shape, attrs, dtype):
    """Streamed taps give the reference's values and the same bits at every
    placement of src, NaN bytes just before it notwithstanding."""
    x = make_input(kind, shape, dtype, seed=21)
    attrs = dict(attrs, exclude_pad=True) if kind == "AvgPool" else attrs
    prim = dp.Pooling(dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs), num_threads=1)
    want, _ = reference.padded_formulation(x, dict(attrs, kind=kind, data_format="NXC"))
    first = None
    for offset in range(0, 64, x.itemsize):
        raw = np.full(x.nbytes + 192, 0xFF, np.uint8)
        start = -raw.ctypes.data % 64 + 64 + offset
        src_at = raw[start:start + x.nbytes].view(x.dtype).reshape(x.shape)   # after 64 NaN bytes
        src_at[...] = x
        got = prim.execute(src_at).astype(np.float64)
        if first is None:
            first = got
            assert_matches_reference(got, want, kind, dtype, x)
        np.testing.assert_array_equal(got, first, err_msg=f"src {offset} bytes past a 64-byte boundary")


# NXC register blocks start at the first cache line of every src position
# when all sit the same number of bytes past one (numpy's large arrays: 16):
# a head vector from channel 0, blocks from that line on, a tail ending at C;
# dst placed the same way or not.  With 64-byte vectors only (f32 and f64 on
# AVX-512); other dtypes keep blocks from channel 0.  k2 s2 over
# 128 channels: whole windows in one loop per row; k3 s3 p1 over 80: border
# points one by one too, and a one-vector tail.  Stride-1 flat rows start
# their blocks where src loads are aligned and move their pooled rows'
# scratch to match: k3 s1 p1 over 40 channels (rows of three pooled rows;
# rows of 14 points, past the flat planes' 32 vectors), k2 s1 over 24.
LEAD_CASES = [
    ("MaxPool", (2, 128, 8, 10), dict(kernel=[2, 2], strides=[2, 2])),
    ("AvgPool", (1, 80, 10, 11), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[1, 1], pads_end=[1, 1],
                                       exclude_pad=True)),
    ("MaxPool", (1, 80, 10, 11), dict(kernel=[3, 3], strides=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
    ("AvgPool", (1, 40, 9, 14), dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=True)),
    ("MaxPool", (2, 24, 7, 9), dict(kernel=[2, 2])),
    # whole points (a head vector or an out-of-line tail with the blocks, in
    # one loop of taps): 1-D k7 s2 over 96 channels, k3 s2 over 160, 2-D k3
    # s2 over 112 (a three-vector tail)
    ("AvgPool", (2, 96, 29), dict(kernel=[7], strides=[2], pads_begin=[3], pads_end=[3])),
    ("MaxPool", (1, 160, 23), dict(kernel=[3], strides=[2], pads_begin=[1], pads_end=[1])),
    ("AvgPool", (1, 112, 7, 9), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
]


@pytest.mark.parametrize("dtype", ["f32", "f64", "bf16"])
@pytest.mark.parametrize("kind,shape,attrs", LEAD_CASES, ids=[f"{c[0]}{c[1]}k{c[2]['kernel']}" for c in LEAD_CASES])
def test_register_blocks_whatever_the_src_and_dst_placement(kind, shape, attrs, dtype):
    """Every channel of every output is written, with the reference's value
    and the same bits, at every placement of src past a cache line and two of
    dst (the same as src's, and 16 bytes on); maxima with a NaN (tested in
    every block) and without (blocks probed instead)."""
    x = np.ascontiguousarray(np.moveaxis(make_input(kind, shape, dtype, seed=31), 1, -1))
    inputs = [x, np.where(np.isnan(x), 0, x).astype(x.dtype)] if kind == "MaxPool" else [x]
    desc = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs)
    prims = {t: dp.Pooling(desc, num_threads=t) for t in (1, 2)}
    assert prims[1].kernel_name.endswith("channel_block"), prims[1].kernel_name
    for src in inputs:
        want, _ = reference.padded_formulation(src, dict(attrs, kind=kind, data_format="NXC"))
        first = prims[1].execute(placed(src, 0)).astype(np.float64)
        assert_matches_reference(first, want, kind, dtype, src)
        unwritten = np.full(first.shape, np.nan, NUMPY[dtype])
        for s_off in range(0, 64, src.itemsize):
            for d_off in (s_off, (s_off + 16) % 64):
                for threads, prim in prims.items():
                    dst = placed(unwritten, d_off)
                    prim.execute(placed(src, s_off), dst=dst)
                    np.testing.assert_array_equal(
                        dst.astype(np.float64), first,
                        err_msg=f"src {s_off}, dst {d_off} bytes past a 64-byte boundary, {threads} threads")


# The channels after a point's whole blocks, when maxima need three or four
# vectors, go as one more block ending at C in the blocks' regime (probed
# for NaN, not tested), and so does the head vector before an aligned
# lead: a NaN in the head, in a block, where the tail overlaps the block
# before it, or in the tail's last vector still wins its windows.  1-D k5 s2
# p2 over 96-200 channels: whole windows in one loop per row (96-160 as
# whole points, one loop of taps for all the channels, at most placements),
# border windows point by point.
@pytest.mark.parametrize("channels", [96, 128, 160, 200])
@pytest.mark.parametrize("nan_channel", [None, 3, 40, 70, -1])
def test_channel_tails_probed_for_nan_whatever_the_src_placement(channels, nan_channel):
    nan_channel = channels - 1 if nan_channel == -1 else nan_channel
    rng = np.random.default_rng(channels)
    x = np.round(rng.standard_normal((1, 37, channels)) * 4.0).astype(np.float32)   # N, W, C
    if nan_channel is not None:
        x[0, 17, nan_channel] = np.nan      # a whole window's column
        x[0, 1, channels - 1 - nan_channel] = np.nan   # a border window's
    attrs = dict(kernel=[5], strides=[2], pads_begin=[2], pads_end=[2])
    prim = dp.Pooling(dp.PoolingDesc("MaxPool", x.shape, "f32", data_format="NXC", **attrs), num_threads=1)
    assert prim.kernel_name.endswith("channel_block"), prim.kernel_name
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
    for s_off in range(0, 64, 4):
        got = prim.execute(placed(x, s_off)).astype(np.float64)
        np.testing.assert_array_equal(got, want, err_msg=f"src {s_off} bytes past a 64-byte boundary")
    assert np.isnan(want).sum() == (0 if nan_channel is None else 4)   # two windows a column


def test_bf16_average_nan_and_infinities():
    """bf16 averages round without a NaN test (their NaNs come out of arithmetic,
    quiet, with a zero low half): NaN, an infinity, and both infinities in
    windows of every kernel path give NaN, the infinity, and NaN."""
    for layout, shape in (("NXC", (1, 9, 12, 40)), ("NCX", (1, 40, 9, 12)), ("NCX", (1, 3, 13, 140))):
        x = np.ones(shape, ml_dtypes.bfloat16)          # NCX; channel 0 gets the specials
        x[0, 0, 2, 3] = np.nan
        x[0, 0, 6, 10] = np.inf
        x[0, 0, 7, 5] = np.inf
        x[0, 0, 7, 6] = -np.inf
        x.view(np.uint16)[0, 0, 4, 4] = 0x7f81           # a signalling NaN: the average is a quiet NaN
        if layout == "NXC":
            x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
        for attrs in (dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=True),
                      dict(kernel=[3, 3], strides=[2, 2])):
            got = dp.avg_pool(x, data_format=layout, **attrs)
            want, _ = reference.padded_formulation(x, dict(attrs, kind="AvgPool", data_format=layout))
            g = got.astype(np.float64)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
            np.testing.assert_array_equal(np.isinf(g) & (g > 0), np.isinf(want) & (want > 0))
            np.testing.assert_array_equal(np.isinf(g) & (g < 0), np.isinf(want) & (want < 0))
            nan_bits = got.view(np.uint16)[np.isnan(g)]
            assert np.all((nan_bits & 0x7fc0) == 0x7fc0), [hex(b) for b in nan_bits]   # quiet NaNs



# Windows whose divisors are all powers of two (borders too), so that an
# average of bf16 values with a few significant bits is exact in f32 and
# its rounding to bf16 is the only one: (spatial shape, attributes).
BF16_ROUNDING_WINDOWS = {
    "1d-k2-s2": ((64,), dict(kernel=[2], strides=[2])),
    "1d-k4-s4": ((64,), dict(kernel=[4], strides=[4])),
    "k2x2-s2": ((8, 12), dict(kernel=[2, 2], strides=[2, 2])),
    "k2x2-s1": ((8, 12), dict(kernel=[2, 2])),
    "k2x2-s2-p1-exclude": ((7, 11), dict(kernel=[2, 2], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
                                         exclude_pad=True)),
    "3d-k2-s2": ((4, 4, 6), dict(kernel=[2, 2, 2], strides=[2, 2, 2])),
    "global-4x4": ((4, 4), dict(kernel=[4, 4])),
}


def _bf16_rounding_values(data, shape, channel_axis, rng):
    """bf16 values whose averages over BF16_ROUNDING_WINDOWS are exact in f32:
    integers up to 255 (quotients that need a bit or two more than bf16 has,
    halfway cases among them), or subnormals (multiples of 2^-133) but in
    every fourth channel, whose values are normal (NXC vectors mix both)."""
    if data == "ties":
        return rng.integers(-255, 256, shape).astype(ml_dtypes.bfloat16)
    bits = rng.integers(1, 0x80, shape).astype(np.uint16) | (rng.integers(0, 2, shape) * 0x8000).astype(np.uint16)
    x = bits.view(ml_dtypes.bfloat16)
    normal = np.moveaxis(x, channel_axis, 0)[::4]   # a view
    normal[...] = rng.integers(-8, 9, normal.shape) * 2.0 ** -120
    return x


@pytest.mark.parametrize("data", ["ties", "subnormal"])
@pytest.mark.parametrize("layout,channels", [("NXC", 3), ("NXC", 16), ("NXC", 48), ("NXC", 64), ("NXC", 100),
                                             ("NCX", 3), ("NCX", 16)])
@pytest.mark.parametrize("window", sorted(BF16_ROUNDING_WINDOWS))
def test_bf16_averages_round_to_nearest_even(window, layout, channels, data):
    """bf16 averages are rounded once, to nearest with ties to even, on every
    kernel path: where the CPU converts with VCVTNEPS2BF16 (the avx512-bf16
    variant) and where integer code rounds.  The conversion reads subnormal
    lanes as zeros, so vectors holding one round the integer way; both data
    kinds here make the exact average's rounding the only answer, and the
    subnormal one mixes subnormal and normal results within a vector."""
    spatial, attrs = BF16_ROUNDING_WINDOWS[window]
    shape = (2, *spatial, channels) if layout == "NXC" else (2, channels, *spatial)
    x = _bf16_rounding_values(data, shape, -1 if layout == "NXC" else 1,
                              np.random.default_rng(channels * 7 + len(window)))
    exact, _ = reference.padded_formulation(x, dict(attrs, kind="AvgPool", data_format=layout))
    want = exact.astype(ml_dtypes.bfloat16).view(np.uint16)
    if data == "subnormal":
        magnitude = np.abs(exact)
        assert ((magnitude > 0) & (magnitude < 2.0 ** -126)).mean() > 0.3   # subnormal results
        assert (magnitude >= 2.0 ** -126).any()
    else:
        assert (exact.astype(ml_dtypes.bfloat16).astype(np.float64) != exact).any()   # rounding happens
    for threads in (1, 2):
        got = dp.avg_pool(x, data_format=layout, num_threads=threads, **attrs)
        np.testing.assert_array_equal(got.view(np.uint16), want, err_msg=f"{threads} threads")


# bf16 NXC windows whose channel blocks split by parity: register blocks
# (k3 x 2 s2) and, for maxima, columns slid (k3 s2 p1).
SPLIT_WINDOWS = {
    "blocks": dict(kernel=[3, 2], strides=[2, 2], pads_begin=[1, 0], pads_end=[1, 0]),
    "slid": dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]),
}


@pytest.mark.parametrize("kind,window", [("AvgPool", "blocks"), ("MaxPool", "blocks"), ("MaxPool", "slid")])
@pytest.mark.parametrize("nans", [True, False], ids=["nans", "no-nan"])
@pytest.mark.parametrize("channels", [64, 128, 101])
def test_bf16_channel_blocks_split_by_parity(kind, window, nans, channels):
    """Full NXC channel blocks of bf16 load and store their vectors in pairs split
    into even and odd channels: every channel keeps its own value, and the bits
    are those of the same pooling in f32 rounded to bf16 (the same sums in the
    same order, one rounding), NaNs made quiet with their payloads, infinities
    kept, maxima of -0 -0, at 1 and 2 threads.  Without NaNs maxima stand as
    their probed pass stored them, without its NaN tests (the split pairs'
    probe, an ordered compare, tells infinities of both signs from a NaN)."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 9, 14, channels)).astype(ml_dtypes.bfloat16)   # NXC
    u = x.view(np.uint16)
    if nans:
        u[0, 1, 2, 0] = 0x7f81                 # a signalling NaN, an even channel
        u[0, 4, 5, 17] = 0x7fc0                # a quiet NaN, an odd channel
        u[1, 3, 3, 32] = 0xff81                # a negative signalling NaN, the block's third vector
        u[1, 5, 6, 63] = 0xffc1                # a negative quiet NaN, the block's last (odd) channel
    u[0, 7, 9, 49] = 0xff80                    # -inf, the fourth vector
    u[1, 6, 8, channels - 1] = 0x7f80          # +inf, the last channel
    x[1, :, :, 2] = -0.0                       # -0 throughout one channel
    attrs = dict(SPLIT_WINDOWS[window])
    if kind == "AvgPool":
        attrs["exclude_pad"] = True
    _assert_bf16_bits_of_f32_pooling(x, kind, attrs, nans)


@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
@pytest.mark.parametrize("nans", [True, False], ids=["nans", "no-nan"])
@pytest.mark.parametrize("channels", [1024, 1100])
@pytest.mark.parametrize("window", ["global", "disjoint"])
def test_bf16_streamed_windows_split_by_parity(kind, nans, channels, window):
    """Large disjoint NXC windows over long channel rows stream their taps a
    few at a time (taps_reduce, the partial results in channel order between
    passes); bf16 blocks of them go in pairs split by parity: the bits of the
    same pooling in f32 rounded to bf16, as above (blocks of 64 channels and a
    tail of 12 over 1100)."""
    spatial, attrs = {"global": ((10, 5), dict(kernel=[10, 5])),
                      "disjoint": ((6, 3, 3), dict(kernel=[3, 3, 3], strides=[3, 3, 3]))}[window]
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, *spatial, channels)).astype(ml_dtypes.bfloat16)   # NXC
    u = x.view(np.uint16).reshape(2, -1, channels)   # (n, positions, channels), a view
    if nans:
        u[0, 12, 0] = 0x7f81                   # a signalling NaN, an even channel
        u[0, 23, 17] = 0x7fc0                  # a quiet NaN, an odd channel
        u[1, 33, 96] = 0xff81                  # a negative signalling NaN, the second block
        u[0, 39, 49] = 0xff80                  # -inf
    u[1, 41, channels - 1] = 0x7f80            # +inf, the last channel
    u[1, :, 2] = 0x8000                        # -0 throughout one channel
    _assert_bf16_bits_of_f32_pooling(x, kind, attrs, nans)


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("channels", [64, 128])
@pytest.mark.parametrize("window", ["k3x2-s2", "k2-s2"])
def test_nxc_register_block_maxima_keep_the_first_of_equal_zeros(window, channels, dtype):
    """Register blocks of maxima start from each window's first tap (not from
    -inf): windows of +0, -0 and -1 keep the first of their zeros in tap order
    (rows, then columns), channel by channel, at 1 and 2 threads; a window
    whose first tap is -1 and the rest -0 gives -0."""
    attrs = {"k3x2-s2": dict(kernel=[3, 2], strides=[2, 2]), "k2-s2": dict(kernel=[2, 2], strides=[2, 2])}[window]
    rng = np.random.default_rng(21)
    x = rng.choice(np.array([0.0, -0.0, -1.0]), size=(2, 9, 14, channels), p=[0.3, 0.3, 0.4])
    x[1, :3, :2, 5] = -0.0
    x[1, 0, 0, 5] = -1.0
    x = x.astype(NUMPY[dtype])
    (kh, kw), (sh, sw) = attrs["kernel"], attrs["strides"]
    oh, ow = (x.shape[1] - kh) // sh + 1, (x.shape[2] - kw) // sw + 1
    want = np.empty((2, oh, ow, channels), x.dtype)
    for i in range(oh):
        for j in range(ow):
            taps = x[:, i * sh:i * sh + kh, j * sw:j * sw + kw].reshape(2, kh * kw, channels)
            acc = taps[:, 0].copy()
            for t in range(1, kh * kw):   # a later tap wins only when greater
                acc = np.where(taps[:, t] > acc, taps[:, t], acc)
            want[:, i, j] = acc
    assert np.signbit(want[want == 0]).any() and not np.signbit(want[want == 0]).all()
    assert np.signbit(want[1, 0, 0, 5]) and want[1, 0, 0, 5] == 0
    for threads in (1, 2):
        prim = dp.Pooling(dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NXC", **attrs), num_threads=threads)
        assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
        np.testing.assert_array_equal(bits(prim.execute(x)), bits(want), err_msg=f"{threads} threads")


# bf16 maxima over rows of a vector of channels or more pool in 16-bit
# integer lanes (kernels_bf16_maxima.hpp): under a block, half-width vectors
# (16 and 24 channels), whole ones (32), two of them overlapping (40, 48,
# 63); from a block on (blocks_row's rows), chunks of four whole vectors and
# a tail of one to four (64, 100, 120, 128, 200); stride-1 windows of one
# row as flat rows.  Shapes are (N, *spatial), channels last.
BF16_LANE_WINDOWS = {
    "1d-k2-s2": ((2, 40), dict(kernel=[2], strides=[2])),                          # points_row
    "1d-k3-s2": ((1, 41), dict(kernel=[3], strides=[2])),                          # points_row, odd taps
    "1d-k3-s1-p1": ((2, 70), dict(kernel=[3], pads_begin=[1], pads_end=[1])),     # flat rows, border points
    "1d-k2-s1-d3": ((1, 33), dict(kernel=[2], dilations=[3])),                     # flat rows, dilated
    "2d-k2-s2": ((1, 6, 70), dict(kernel=[2, 2], strides=[2, 2])),                 # points_row, VGG's window
    "2d-k3-s2": ((2, 9, 7), dict(kernel=[3, 3], strides=[2, 2])),                  # row groups
    "3d-k2-s312": ((1, 5, 8, 10), dict(kernel=[2, 2, 2], strides=[3, 1, 2])),      # row groups, depth taps
}


def _bf16_lane_values(data, shape, rng):
    """bf16 NXC values for test_bf16_maxima_in_16_bit_lanes: each kind sends
    the integer lanes' results through another rule (see the test)."""
    if data == "values":
        x = rng.standard_normal(shape)
    elif data == "negative":                # every window negative: the signed minimum's path
        x = -np.abs(rng.standard_normal(shape))
        x.reshape(-1)[::11] = -2.0 ** -130   # subnormals too
    elif data == "infinities":              # +-inf, no NaN: exact in the lanes
        x = rng.standard_normal(shape)
        x.reshape(-1)[rng.integers(0, x.size, x.size // 7)] = np.inf
        x.reshape(-1)[rng.integers(0, x.size, x.size // 7)] = -np.inf
    elif data == "negative-zeros":          # -0 with negatives, no +0: exact, -0 wins
        x = rng.choice(np.array([-0.0, -1.0, -3.5]), size=shape, p=[0.3, 0.4, 0.3])
    elif data == "signed-zeros":            # +0 and -0 in one window: the first one, the float path's rule
        x = rng.choice(np.array([0.0, -0.0, -1.0]), size=shape, p=[0.3, 0.3, 0.4])
    else:                                   # NaNs of both signs, signalling and quiet
        x = rng.standard_normal(shape)
    x = x.astype(ml_dtypes.bfloat16)
    if data == "nans":
        u = x.view(np.uint16).reshape(-1)
        for i, nan in zip(rng.integers(0, u.size, 8), (0x7f81, 0x7fc0, 0xff81, 0xffc1) * 2):
            u[i] = nan
    return x


@pytest.mark.parametrize("data", ["values", "negative", "infinities", "negative-zeros", "signed-zeros", "nans"])
@pytest.mark.parametrize("channels", [16, 24, 32, 40, 48, 63, 64, 100, 120, 128, 200])
@pytest.mark.parametrize("window", sorted(BF16_LANE_WINDOWS))
def test_bf16_maxima_in_16_bit_lanes(window, channels, data):
    """bf16 maxima in 16-bit lanes give the float path's bits: the f32
    pooling of the same values, rounded to bf16 (exact: a maximum is one of
    them), NaNs quiet with their payloads, at 1 and 2 threads.  Values,
    negatives only (the signed minimum), infinities and -0 among negatives
    stay in the lanes; +0 with -0 in a window, and NaNs, are the cases the
    lanes hand back to the float path (first of equal values, the last
    NaN)."""
    spatial, attrs = BF16_LANE_WINDOWS[window]
    x = _bf16_lane_values(data, (*spatial, channels), np.random.default_rng(channels))
    desc = dict(data_format="NXC", **attrs)
    wide = x.astype(np.float32)
    prim32 = dp.Pooling(dp.PoolingDesc("MaxPool", x.shape, "f32", **desc))
    in_f32 = prim32.execute(wide)
    want, nan = _bf16_bits_of_f32(in_f32)
    # bf16 k3 s2 rows of more than two slid blocks slide (kernels_block.hpp:
    # a column's rows first, then the columns), where f32 pools them point by
    # point on AVX-512: the same values, but another first of +0 and -0
    zero_signs = not (window == "2d-k3-s2" and channels > 128 and data == "signed-zeros")
    for threads in (1, 2):
        prim = dp.Pooling(dp.PoolingDesc("MaxPool", x.shape, "bf16", **desc), num_threads=threads)
        assert kernel_variant(prim).endswith(":channel_block"), prim.kernel_name
        got = prim.execute(x)
        if zero_signs:
            np.testing.assert_array_equal(got.view(np.uint16), want, err_msg=f"{threads} threads")
        else:
            np.testing.assert_array_equal(got.astype(np.float32), want.view(ml_dtypes.bfloat16).astype(np.float32))
    # the data reach the rules they are for
    zeros = want[~nan & ((want & 0x7fff) == 0)]
    if data in ("negative-zeros", "signed-zeros"):
        assert (zeros == 0x8000).any()
    if data == "signed-zeros":
        assert (zeros == 0).any()
    if data == "negative":
        assert (want >= 0x8000).all()
    assert nan.any() == (data == "nans")
    assert (want == 0x7f80).any() == (data == "infinities")
    with np.errstate(invalid="ignore"):   # (ml_dtypes' NaN casts)
        ref, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NXC"))
    np.testing.assert_array_equal(np.isnan(ref), nan)
    np.testing.assert_array_equal(in_f32[~nan], ref[~nan])


def _bf16_bits_of_f32(in_f32):
    """f32 results rounded to bf16 as the kernels round them, as bits: NaNs
    quiet with their payload and sign kept (ml_dtypes makes every NaN its
    default one); and where in_f32 is NaN."""
    nan = np.isnan(in_f32)
    with np.errstate(invalid="ignore"):
        rounded = in_f32.astype(ml_dtypes.bfloat16).view(np.uint16)
    return np.where(nan, ((in_f32.view(np.uint32) >> 16) | 0x0040).astype(np.uint16), rounded), nan


def _assert_bf16_bits_of_f32_pooling(x, kind, attrs, nans):
    """bf16 NXC x pooled by the channel-block kernel gives the bits of its
    pooling in f32 rounded to bf16, NaNs quiet with their payloads, at 1 and 2
    threads, and the reference's values."""
    prim = dp.Pooling(dp.PoolingDesc(kind, x.shape, "bf16", data_format="NXC", **attrs))
    assert prim.kernel_name.split(":")[1] == "channel_block", prim.kernel_name
    wide = x.astype(np.float32)
    in_f32 = dp.Pooling(dp.PoolingDesc(kind, x.shape, "f32", data_format="NXC", **attrs)).execute(wide)
    want_bits, nan = _bf16_bits_of_f32(in_f32)
    for threads in (1, 2):
        got = dp.Pooling(dp.PoolingDesc(kind, x.shape, "bf16", data_format="NXC", **attrs),
                         num_threads=threads).execute(x)
        np.testing.assert_array_equal(got.view(np.uint16), want_bits, err_msg=f"{threads} threads")
    assert np.isposinf(in_f32).any()
    if nans:
        assert nan.sum() >= 3 and (kind == "MaxPool" or np.isneginf(in_f32).any())
    else:
        assert not nan.any()
    if kind == "MaxPool":
        assert np.all(got.view(np.uint16)[1, ..., 2] == 0x8000)   # -0 stays -0
    want, _ = reference.padded_formulation(x, dict(attrs, kind=kind, data_format="NXC"))
    g = got.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_allclose(g[finite], want[finite], rtol=2 ** -8, atol=0)


def test_long_line_running_precision():
    """A long line of large, similar values: a sliding sum that drifted would show here."""
    x = (1e4 + np.random.default_rng(3).standard_normal((1, 2, 20000))).astype(np.float32)
    attrs = dict(kernel=[63], pads_begin=[31], pads_end=[31], exclude_pad=True)
    got = dp.avg_pool(x, data_format="NCX", **attrs)
    want, _ = reference.padded_formulation(x, dict(attrs, kind="AvgPool", data_format="NCX"))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)


# Stride-1 rows longer than the stacked rows' budget (256 KB per thread): the
# planner once let such a chunk be shorter than one block of shared windows,
# and the row loop then never got past a block's start (a hang).
LONG_ROWS = [
    ("NCX", "MaxPool", (1, 1, 6, 17000), 5, {}),
    ("NCX", "AvgPool", (1, 1, 6, 17000), 3, dict(exclude_pad=True)),
    ("NCX", "MaxPool", (1, 1, 5, 17000), 2, {}),
    ("NXC", "MaxPool", (1, 256, 9, 60), 7, {}),
    ("NXC", "AvgPool", (1, 256, 10, 64), 5, dict(exclude_pad=True)),
]
_LONG_ROWS_CHILD = """
import json, sys, numpy as np, dnnpool as dp
for path in sys.argv[1:]:
    case = json.load(open(path + ".json"))
    pd = dp.PoolingDesc(case.pop("kind"), src_shape=tuple(case.pop("shape")), **case)
    np.save(path + ".out.npy", dp.Pooling(pd, num_threads=1).execute(np.load(path + ".npy")))
"""


def test_rows_longer_than_the_stacking_budget(tmp_path):
    """Run in a child with a time limit, so a hang fails the test instead of the suite."""
    import json
    cases = []
    for i, (layout, kind, shape, k, more) in enumerate(LONG_ROWS):
        nd = len(shape) - 2
        attrs = dict(kernel=[k] * nd, pads_begin=[k // 2] * nd, pads_end=[(k - 1) // 2] * nd, **more)
        x = make_input(kind, shape, "f32", seed=i)
        if layout == "NXC":
            x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
        path = str(tmp_path / f"case{i}")
        np.save(path + ".npy", x)
        with open(path + ".json", "w") as f:
            json.dump(dict(attrs, kind=kind, shape=x.shape, data_format=layout), f)
        cases.append((path, x, kind, dict(attrs, kind=kind, data_format=layout)))
    run = run_python(["-c", _LONG_ROWS_CHILD, *[c[0] for c in cases]], timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    for path, x, kind, attrs in cases:
        got = np.load(path + ".out.npy")
        want, _ = reference.padded_formulation(x, attrs)
        assert_matches_reference(got, want, kind, "f32", x)


@pytest.mark.parametrize("dtype", ("u8", "s8"))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_quantized_paths_match_reference(dtype, layout):
    rng = np.random.default_rng(7)
    lo, hi = (0, 256) if dtype == "u8" else (-128, 128)
    # 168 channels: NXC runs 16-bit blocks (64 or 128 channels, windows of up
    # to 128 taps; k3 s1 interiors slide over columns in blocks of 32 or 64),
    # 32-bit blocks (32 or 64 channels) and a tail
    x = rng.integers(lo, hi, (1, 168, 19, 21)).astype(np.uint8 if dtype == "u8" else np.int8)
    if layout == "NXC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    for attrs in (dict(kernel=[3, 3], pads_begin=[1, 1], pads_end=[1, 1]),
                  dict(kernel=[13, 11], pads_begin=[6, 5], pads_end=[6, 5], exclude_pad=True),
                  dict(kernel=[2, 2], strides=[2, 2])):
        q = dict(src_scale=0.05, src_zero_point=10 if dtype == "u8" else -3, dst_scale=0.04,
                 dst_zero_point=128 if dtype == "u8" else 2)
        full = dict(attrs, kind="AvgPool", data_format=layout, **q)
        got = dp.avg_pool(x, data_format=layout, **attrs, **q)
        pick = [0, 1, 63, 64, 127, 128, 159, 160, 167]   # the exact oracle is slow: a few channels of each block
        small = x[:, pick] if layout == "NCX" else x[..., pick]
        assert_quantized_matches_reference(got[:, pick] if layout == "NCX" else got[..., pick], small, full)


@pytest.mark.parametrize("dtype", ("u8", "s8"))
@pytest.mark.parametrize("exclude_pad", [True, False])
@pytest.mark.parametrize("shape,attrs", FLAT_PLANES[:4], ids=[str(c[0]) for c in FLAT_PLANES[:4]])
def test_quantized_averages_over_flat_planes(shape, attrs, exclude_pad, dtype):
    """QLinearAveragePool's NCX planes as flat planes: a count and a divisor
    per position, requantised in vector lanes; the widened rows' bits (a W
    stride of 2) at every thread count, and the reference's values (a near
    tie may round the other way)."""
    rng = np.random.default_rng(11)
    lo, hi = (0, 256) if dtype == "u8" else (-128, 128)
    x = rng.integers(lo, hi, shape[:-1] + (2 * shape[-1],)).astype(np.uint8 if dtype == "u8" else np.int8)
    view = x[..., ::2]
    dense = np.ascontiguousarray(view)
    q = dict(src_scale=0.05, src_zero_point=10 if dtype == "u8" else -3, dst_scale=0.04,
             dst_zero_point=128 if dtype == "u8" else 2)
    attrs = dict(attrs, exclude_pad=exclude_pad)
    pd = dp.PoolingDesc("AvgPool", dense.shape, dtype, data_format="NCX", **attrs, **q)
    prim = dp.Pooling(pd)
    assert prim.kernel_name.endswith(":separable+plane"), prim.kernel_name
    got = prim.execute(dense)
    np.testing.assert_array_equal(got, prim.execute(view))
    for threads in (2, 3):
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=threads).execute(dense))
    full = dict(attrs, kind="AvgPool", data_format="NCX", **q)
    assert_quantized_matches_reference(got[:, :2], dense[:, :2], full)   # (the exact oracle is slow)


@pytest.mark.parametrize("dtype", ("u8", "s8"))
def test_quantized_sums_at_the_16_bit_limit(dtype):
    """128 taps of the extreme value (the most the 16-bit sums take) and 130 (32-bit sums)."""
    extreme = 255 if dtype == "u8" else -128
    x = np.full((1, 17, 11, 200), extreme, np.uint8 if dtype == "u8" else np.int8)
    x[..., 5] = 0
    q = dict(src_scale=0.5, src_zero_point=0, dst_scale=1.0, dst_zero_point=0)
    for kernel in ([16, 8], [13, 10]):
        got = dp.avg_pool(x, data_format="NXC", kernel=kernel, **q)
        want = reference.pool(x[..., [0, 5, 199]], dict(kind="AvgPool", kernel=kernel, data_format="NXC", **q))
        np.testing.assert_array_equal(got[..., [0, 5, 199]], want)
        assert got[0, 0, 0, 0] == np.clip(round(extreme * 0.5), -128, 255)


@pytest.mark.skipif(sys.platform != "linux", reason="ISA capping is tested on Linux x86-64")
@pytest.mark.parametrize("isa", ["baseline", "avx2", "avx512-emulated", "avx512"])
def test_every_isa_variant_passes(isa):
    """The same kernel-path and property tests with the dispatch capped at a lower
    ISA, and with the AVX-512 kernels' 16-lane code run on AVX2 instructions
    (so that code is tested on CPUs without AVX-512 too).  Capped at avx512 on
    a CPU with AVX512_BF16, only bf16's kernels change (they round with
    integer code): their tests alone run."""
    if isa != "baseline" and dp.isa() == "baseline":
        pytest.skip(f"this CPU has no AVX2: the {isa} variant cannot run here")
    if isa == "avx512" and dp.isa() != "avx512-bf16":
        pytest.skip("avx512 is this CPU's own variant (or beyond it): the native runs test it")
    here = os.path.dirname(os.path.abspath(__file__))
    select = "not test_every_isa_variant_passes and not channel_blocks_forced"
    args = ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--rootdir", here,
            # not itself, recursively, nor the forced channel-block runs (the native ISA's)
            "-k", select + " and bf16" if isa == "avx512" else select,
            os.path.join(here, "test_kernel_paths.py"), os.path.join(here, "test_properties.py"),
            os.path.join(here, "test_conformance.py"), os.path.join(here, "test_threads.py")]
    run = run_python(args, timeout=900, DNNPOOL_ISA=isa, DNNPOOL_HYPOTHESIS_EXAMPLES="60")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
    check = run_python(["-c", "import dnnpool; print(dnnpool.isa())"], DNNPOOL_ISA=isa)
    assert check.stdout.strip() == isa


def test_kernels_compare_halves_in_hardware():
    """No kernel compares _Float16 values through libgcc (__eqhf2 and kin:
    GCC narrows a comparison of two widened halves back to one, a call per
    value on CPUs without AVX512-FP16, which made f16 channel tails 14x
    slower); only conversions may be library calls (the baseline build has
    no F16C)."""
    with open(dp._core.__file__, "rb") as lib:
        image = lib.read()
    calls = {name.decode() for name in
             re.findall(rb"__(?:eq|ne|lt|le|gt|ge|unord|cmp)hf2", image)}
    assert not calls, calls


def _available_bytes():
    with open("/proc/meminfo") as info:
        fields = dict(line.split(":", 1) for line in info)
    return int(fields["MemAvailable"].split()[0]) * 1024


@pytest.mark.skipif(not os.path.exists("/proc/meminfo") or _available_bytes() < 8 << 30,
                    reason="needs about 3 GB of free memory for a 2.2 GB input")
def test_indices_of_windows_spanning_more_than_2_31_index_values():
    # The channel block keeps a lane's winning tap as an offset from the
    # window's first tap in lanes as wide as the values (32 bits for u8);
    # a window whose index values span 2^31 or more goes lane by lane.  One
    # window covers all 512 rows of a 2.2 GB u8 tensor (511 * 8256 * 512 >
    # 2^31); each (w, c) column holds one nonzero value at a known row.
    H, W, C = 512, 8256, 512
    assert (H - 1) * W * C > 2 ** 31
    rng = np.random.default_rng(7)
    src = np.zeros((1, H, W, C), np.uint8)
    rows = rng.integers(0, H, (W, C))
    values = rng.integers(1, 256, (W, C)).astype(np.uint8)
    w, c = np.meshgrid(np.arange(W), np.arange(C), indexing="ij")
    src[0, rows, w, c] = values
    # with indices: the channel block (512 channels, a window of 512 taps)
    prim = dp.Pooling(dp.PoolingDesc("MaxPool", src.shape, dtype="u8", kernel=[H, 1]))
    dst, idx = prim.execute(src, with_indices=True)
    np.testing.assert_array_equal(dst[0, 0], values)
    np.testing.assert_array_equal(idx[0, 0], rows * (W * C) + w * C + c)


@pytest.mark.parametrize("dtype", ["u8", "s8"])
@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 2, 1), (3, 1, 1), (2, 1, 0), (3, 3, 1), (4, 4, 0)])
@pytest.mark.parametrize("shape", [(1, 3, 9, 70), (1, 2, 4, 5, 67)])
def test_8bit_maxpool_indices_over_small_strided_ncx_windows(dtype, k, s, p, shape):
    # The NCX register path with indices widens 8-bit values into 32-bit
    # lanes; the table above runs float types only.  Multiples of 16: ties.
    info = np.iinfo(reference.NUMPY_DTYPES[dtype])
    x = np.random.default_rng(k * 10 + s).integers(info.min, info.max + 1, shape)
    x = (x // 16 * 16).astype(reference.NUMPY_DTYPES[dtype])
    nd = len(shape) - 2
    attrs = dict(kernel=[k] * nd, strides=[s] * nd, pads_begin=[p] * nd, pads_end=[p] * nd)
    got, idx = dp.Pooling(dp.PoolingDesc("MaxPool", x.shape, dtype, data_format="NCX", **attrs)).execute(
        x, with_indices=True)
    want, want_idx = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NCX"))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(idx, want_idx)


# NCX planes of short rows (up to 20 positions) from 4 channels on, of rows up
# to 42 from 32 channels on (16- and 32-bit values), of rows up to 56 under
# stride-1 windows with depth taps from 16 channels on, and of rows up to 36
# under strided windows with depth taps over whole vectors of channels (16-
# and 32-bit values), go to the channel kernels a block of channels at a
# time, moved channels-last and back in tiles (16-bit values in pairs of
# positions, 8-bit ones widened, then single tiles) with scalar tails.
# Partial blocks of channels, planes that are not a whole number of tiles (49
# positions: a pair tile, a tile and one left), 1-D to 3-D, dilated and
# ceil-rounded windows.
CHANNEL_BLOCK_CASES = [
    ((2, 40, 7, 7), dict(kernel=[3, 3])),
    ((1, 20, 5, 9, 14), dict(kernel=[3, 3, 3], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ((3, 33, 19), dict(kernel=[4], strides=[2], pads_begin=[1], pads_end=[2], rounding_type="ceil")),
    ((2, 5, 13, 11), dict(kernel=[2, 3], strides=[2, 1])),
    ((1, 70, 11, 17), dict(kernel=[3, 2], dilations=[2, 3], pads_begin=[2, 1], pads_end=[2, 2])),
    ((1, 18, 4, 6, 33), dict(kernel=[2, 3, 3], pads_begin=[0, 1, 1], pads_end=[1, 1, 1])),   # depth taps, rows of 33
]
CHANNEL_BLOCK_KINDS = [("MaxPool", "f32"), ("MaxPool", "f64"), ("MaxPool", "f16"), ("MaxPool", "bf16"),
                       ("MaxPool", "u8"), ("MaxPool", "s8"), ("AvgPool", "f32"), ("AvgPool", "f64"),
                       ("AvgPool", "f16"), ("AvgPool", "bf16"), ("AvgPool", "u8"), ("AvgPool", "s8")]


@pytest.mark.parametrize("kind,dtype", CHANNEL_BLOCK_KINDS)
@pytest.mark.parametrize("shape,attrs", CHANNEL_BLOCK_CASES, ids=[str(c[0]) for c in CHANNEL_BLOCK_CASES])
def test_ncx_short_rows_pool_as_channel_blocks(shape, attrs, kind, dtype):
    """The reference's values (maxima exactly, NaN and infinities included;
    quantized averages but for ties), the same bits at 1 and 3 threads, from
    a src view whose channels and columns are not dense and into a dst view
    that skips every other channel (both moved by the scalar paths)."""
    quantized = dtype in ("u8", "s8")
    x = _integers(shape, dtype, 41) if quantized else make_input(kind, shape, dtype, 41)
    q = dict(src_scale=0.05, src_zero_point=7, dst_scale=0.04, dst_zero_point=3) \
        if quantized and kind == "AvgPool" else {}
    attrs = dict(attrs, exclude_pad=shape[1] % 2 == 0) if kind == "AvgPool" else attrs
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NCX", **attrs, **q)
    prims = {t: dp.Pooling(pd, num_threads=t) for t in (1, 3)}
    assert ":channel_blocks/" in prims[1].kernel_name, prims[1].kernel_name
    got = prims[1].execute(x)
    np.testing.assert_array_equal(bits(prims[3].execute(x)), bits(got))
    wide = np.zeros((shape[0], 2 * shape[1], *shape[2:-1], 2 * shape[-1]), x.dtype)
    view = wide[:, ::2, ..., ::2]
    view[...] = x
    dst_wide = np.zeros((got.shape[0], 2 * got.shape[1], *got.shape[2:]), x.dtype)
    prims[1].execute(view, dst=dst_wide[:, 1::2])
    np.testing.assert_array_equal(bits(dst_wide[:, 1::2]), bits(got))
    assert not dst_wide[:, ::2].any()
    assert_matches_its_reference(got, x, kind, dtype, dict(attrs, kind=kind, data_format="NCX", **q))


@pytest.mark.parametrize("dtype", ["f32", "f64", "bf16", "u8"])
@pytest.mark.parametrize("channels", [4, 5, 8, 12, 15, 20, 24, 29, 36, 45])
def test_channel_blocks_move_every_channel_count(channels, dtype):
    """Channel blocks move to channels-last and back in tiles of a vector's
    lanes, then of a half and a quarter as many (down to 4), then value by
    value; these channel counts end in every mix of them, and 7 x 13 = 91
    positions leave a tail past the tiles.  Maxima are exact: the
    reference's values, and each channel's bits as pooled alone (one plane:
    no blocks, no moves)."""
    shape = (2, channels, 7, 13)
    x = _integers(shape, dtype, 43) if dtype == "u8" else make_input("MaxPool", shape, dtype, 43)
    attrs = dict(kernel=[3, 2], strides=[2, 1], pads_begin=[1, 0], pads_end=[1, 1])
    prim = dp.Pooling(dp.PoolingDesc("MaxPool", shape, dtype, data_format="NCX", **attrs))
    assert ":channel_blocks/" in prim.kernel_name, prim.kernel_name
    got = prim.execute(x)
    want, _ = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NCX"))
    assert_matches_reference(got, want, "MaxPool", dtype, x)
    alone = dp.Pooling(dp.PoolingDesc("MaxPool", (2, 1, 7, 13), dtype, data_format="NCX", **attrs))
    assert ":channel_blocks/" not in alone.kernel_name
    for c in range(channels):
        np.testing.assert_array_equal(bits(got[:, c:c + 1]), bits(alone.execute(np.ascontiguousarray(x[:, c:c + 1]))))


# Global pooling of NCX planes of a vector or more folds the planes a vector
# at a time (each plane's lanes in the order of a plane folded alone): 74
# planes are whole groups and a remainder, 3 threads start groups at rows
# that are no multiple of the lanes.  (plane shape)
GLOBAL_PLANES = [(7, 7), (4, 4), (3, 11), (2, 20), (1, 5)]
GLOBAL_KINDS = [("MaxPool", "f32"), ("MaxPool", "f64"), ("MaxPool", "bf16"), ("MaxPool", "u8"), ("MaxPool", "s8"),
                ("AvgPool", "f32"), ("AvgPool", "f64"), ("AvgPool", "f16"), ("AvgPool", "bf16"), ("AvgPool", "u8"),
                ("AvgPool", "s8")]


@pytest.mark.parametrize("kind,dtype", GLOBAL_KINDS)
@pytest.mark.parametrize("plane", GLOBAL_PLANES, ids=str)
def test_global_planes_fold_in_groups_as_alone(plane, kind, dtype):
    """The same bits at 1 and 3 threads, as each channel pooled alone (a
    plane folded by itself), and from a src view with channels not dense
    into a dst view that skips every other channel; the reference's values."""
    shape = (2, 37, *plane)
    quantized = dtype in ("u8", "s8")
    x = _integers(shape, dtype, 43) if quantized else make_input(kind, shape, dtype, 43)
    attrs = dict(kernel=list(plane))
    if quantized and kind == "AvgPool":
        attrs.update(src_scale=0.05, src_zero_point=7, dst_scale=0.04, dst_zero_point=3)
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NCX", **attrs)
    prims = {t: dp.Pooling(pd, num_threads=t) for t in (1, 3)}
    assert prims[1].kernel_name.endswith(":global_plane"), prims[1].kernel_name
    got = prims[1].execute(x)
    np.testing.assert_array_equal(bits(prims[3].execute(x)), bits(got))
    alone = dp.Pooling(dp.PoolingDesc(kind, (2, 1, *plane), dtype, data_format="NCX", **attrs))
    for ch in range(shape[1]):
        np.testing.assert_array_equal(bits(alone.execute(np.ascontiguousarray(x[:, ch:ch + 1]))),
                                      bits(got[:, ch:ch + 1]), err_msg=f"channel {ch}")
    wide = np.zeros((shape[0], 2 * shape[1], *plane), x.dtype)
    wide[:, 1::2] = x
    dst_wide = np.zeros((shape[0], 2 * shape[1], 1, 1), x.dtype)
    prims[1].execute(wide[:, 1::2], dst=dst_wide[:, ::2])
    np.testing.assert_array_equal(bits(dst_wide[:, ::2]), bits(got))
    assert not dst_wide[:, 1::2].any()
    assert_matches_its_reference(got, x, kind, dtype, dict(attrs, kind=kind, data_format="NCX"))


@pytest.mark.parametrize("shape,kernel,strides,pads,dtype,expect_blocks", [
    ((1, 512, 7, 7), [3, 3], [1, 1], [0, 0], "f32", True),            # late-stage planes: rows of 7
    ((1, 4, 14, 14), [2, 2], [2, 2], [0, 0], "f32", True),            # the fewest channels taken
    ((1, 3, 14, 14), [2, 2], [2, 2], [0, 0], "f32", False),           # fewer: one plane at a time
    ((1, 16, 14, 14), [3, 3], [1, 1], [1, 1], "f32", False),          # "same" windows over few channels keep the plane path
    ((1, 64, 56, 56), [3, 3], [2, 2], [1, 1], "f32", False),          # k3 s2 over rows of 56: the one-lane passes
    ((1, 64, 56, 56), [3, 3], [1, 1], [0, 0], "f32", True),           # 2-D, rows up to 64: windows of 3x the taps
    ((1, 16, 40, 60), [1, 7], [1, 2], [0, 3], "bf16", True),          # ... the strides skip, from 16 channels on
    ((1, 16, 40, 65), [7, 1], [2, 1], [3, 0], "f32", False),          # ... not longer
    ((1, 15, 40, 60), [3, 3], [1, 1], [0, 0], "f32", False),          # ... nor fewer channels
    ((1, 64, 40, 60), [3, 3], [2, 1], [0, 0], "f32", True),           # ... (9 taps, strides of 2: 4.5x)
    ((1, 64, 40, 60), [3, 2], [1, 2], [1, 0], "f16", True),           # ... (exactly 3x)
    ((1, 64, 40, 60), [5, 1], [2, 1], [0, 0], "f32", False),          # ... not 2.5x
    ((1, 64, 40, 60), [2, 2], [2, 2], [0, 0], "f32", False),          # ... nor k2 s2
    ((1, 64, 40, 60), [3, 3], [1, 1], [0, 0], "u8", False),           # ... nor 8-bit values
    ((1, 64, 40, 60), [3, 3], [1, 1], [1, 1], "f32", False),          # ... nor where the "same" plane path runs
    ((1, 32, 4, 40, 60), [3, 3, 3], [1, 1, 2], [0, 0, 0], "f32", False),  # ... nor 3-D
    ((1, 64, 28, 28), [3, 3], [2, 2], [1, 1], "bf16", True),          # rows up to 42 from 32 channels ...
    ((1, 32, 21, 42), [4, 4], [1, 1], [0, 0], "f32", True),           # ... strided windows or not
    ((1, 16, 42, 42), [3, 3], [2, 2], [1, 1], "f32", False),          # ... not with fewer channels
    ((1, 64, 28, 28), [3, 3], [2, 2], [1, 1], "u8", False),           # ... nor 8-bit values
    ((1, 64, 28, 28), [3, 3], [1, 1], [1, 1], "f32", False),          # ... nor where the "same" plane path runs
    ((1, 32, 4, 14, 40), [3, 3, 3], [1, 1, 1], [1, 0, 1], "f32", True),    # stride-1 depth taps, rows up to 56
    ((1, 8, 4, 14, 40), [3, 3, 3], [1, 1, 1], [1, 0, 1], "f32", False),    # ... from 16 channels on
    ((1, 32, 4, 14, 48), [3, 3, 3], [2, 2, 2], [1, 0, 1], "f32", False),   # strided: rows up to 42 only
    ((1, 16, 16, 28, 28), [3, 3, 3], [1, 2, 3], [1, 1, 0], "f32", True),  # strided depth taps, rows up to 36 ...
    ((1, 16, 16, 36, 36), [3, 3, 3], [2, 2, 2], [1, 1, 1], "f16", True),  # ...
    ((1, 16, 16, 37, 37), [3, 3, 3], [2, 2, 2], [1, 1, 1], "f32", False),  # ... not longer
    ((1, 18, 16, 36, 36), [3, 3, 3], [1, 2, 2], [1, 1, 0], "f32", False),  # ... whole vectors of channels only
    ((1, 16, 5, 46, 25), [3, 2, 3], [3, 3, 3], [0, 0, 1], "f32", False),   # ... windows of twice the taps strides skip
    ((1, 16, 16, 28, 28), [3, 3, 3], [1, 2, 3], [1, 1, 0], "u8", False),   # ... 16- and 32-bit values
    # strided rows the one-lane passes cannot finish in registers, from 16
    # channels on: fewer outputs than a vector ...
    ((2, 24, 28, 28), [2, 2], [2, 3], [0, 0], "f32", True),
    ((1, 16, 40, 65), [1, 7], [1, 2], [0, 3], "f32", True),                # ... or a window past the small ones
    ((1, 24, 112, 112), [2, 5], [2, 3], [0, 0], "f32", True),              # (rows of fewer outputs than a
    ((1, 16, 28, 28), [3, 3], [2, 4], [1, 1], "bf16", True),               # vector depend on the ISA: the
    ((1, 16, 8, 28, 28), [3, 3, 4], [2, 2, 3], [0, 0, 0], "f32", True),    # windows here are past the small
    ((1, 18, 16, 28, 28), [3, 3, 3], [1, 2, 4], [1, 1, 0], "f32", True),   # ones; a last block of 2 channels)
    ((1, 15, 28, 28), [3, 3], [2, 2], [1, 1], "f32", False),               # ... not with fewer channels
    ((1, 64, 112, 112), [3, 3], [2, 2], [1, 1], "f32", False),             # ... nor rows of 16 outputs or more (k3 s2)
    ((2, 24, 28, 28), [2, 2], [2, 3], [0, 0], "u8", False),                # ... nor 8-bit values
    ((1, 16, 5, 46, 25), [3, 2, 3], [3, 3, 3], [0, 0, 1], "f32", False),   # ... nor 3-D windows of fewer taps than strides skip
    # windows with gaps (k < s) finish in registers, but the blocks keep
    # their rows up to 64, and padded ones up to 256
    ((1, 24, 56, 64), [2, 2], [2, 3], [0, 0], "f32", True),
    ((1, 24, 112, 112), [2, 2], [2, 3], [0, 1], "f32", True),
    ((1, 24, 112, 112), [2, 2], [2, 3], [0, 0], "f32", False),
    ((2, 32, 1000), [2], [4], [1], "f32", False),
    ((2, 32, 1000), [3], [4], [0], "bf16", False),
])
def test_ncx_channel_blocks_are_chosen_for_short_rows(shape, kernel, strides, pads, dtype, expect_blocks, monkeypatch):
    """The rules as fitted on an AMD core, whose planes of any size may move
    (Intel cores' limit is tested below)."""
    monkeypatch.setenv("DNNPOOL_BLOCK_PLANE_LIMIT", str(1 << 62))
    attrs = dict(kernel=kernel, strides=strides, pads_begin=pads, pads_end=pads)
    prim = dp.Pooling(dp.PoolingDesc("MaxPool", shape, dtype, data_format="NCX", **attrs))
    assert (":channel_blocks/" in prim.kernel_name) == expect_blocks, prim.kernel_name
    # never with indices: those keep the planar path's index order
    x = make_input("MaxPool", shape, dtype, 3) if dtype in NUMPY else _integers(shape, dtype, 3)
    got, idx = prim.execute(x, with_indices=True)
    want, want_idx = reference.padded_formulation(x, dict(attrs, kind="MaxPool", data_format="NCX"))
    np.testing.assert_array_equal(idx, want_idx)
    # as values: a window's tied +0 and -0 may come back as either
    np.testing.assert_array_equal(got.astype(np.float32), prim.execute(x).astype(np.float32))
    assert_matches_reference(got, want, "MaxPool", dtype, x)


# Intel cores keep 2-D planes of a page or more planar over rows longer than
# 20, unless windows stride along W only (block_plane_limit_bytes;
# DNNPOOL_BLOCK_PLANE_LIMIT sets it): (shape, kernel, strides, dtype, blocks
# under a 4096-byte limit).
PLANE_LIMIT_CASES = [
    ((1, 32, 57, 57), [2, 2], [1, 1], "f32", False),          # 13 KB planes: the one-lane passes
    ((1, 32, 32, 32), [3, 3], [1, 1], "f32", False),          # exactly a page
    ((1, 32, 32, 32), [3, 3], [1, 1], "bf16", True),          # half a page
    ((1, 32, 31, 33), [3, 3], [1, 1], "f32", True),           # just under a page
    ((1, 32, 40, 40), [3, 3], [2, 2], "f32", False),          # strided along both axes
    ((1, 96, 35, 35), [1, 3], [1, 3], "f32", True),           # strided along W only: any plane
    ((1, 64, 112, 20), [2, 2], [3, 3], "f32", True),          # rows of 20: any plane
    ((1, 32, 4, 14, 40), [3, 3, 3], [1, 1, 1], "f32", True),  # 3-D volumes: any size
]


@pytest.mark.parametrize("kind", ["MaxPool", "AvgPool"])
@pytest.mark.parametrize("shape,kernel,strides,dtype,blocks", PLANE_LIMIT_CASES, ids=[str(c[0]) + c[3] for c in PLANE_LIMIT_CASES])
def test_ncx_planes_past_the_block_plane_limit_stay_planar(shape, kernel, strides, dtype, blocks, kind, monkeypatch):
    """With the limit a page, as on Intel cores, and without one, as on
    others: the reference's values either way (maxima the same bits); the
    default follows this CPU's vendor."""
    attrs = dict(kernel=kernel, strides=strides)
    pd = dp.PoolingDesc(kind, shape, dtype, data_format="NCX", **attrs)
    x = make_input(kind, shape, dtype, 5)
    monkeypatch.delenv("DNNPOOL_BLOCK_PLANE_LIMIT", raising=False)
    default = dp.Pooling(pd)
    monkeypatch.setenv("DNNPOOL_BLOCK_PLANE_LIMIT", "4096")
    limited = dp.Pooling(pd)
    monkeypatch.setenv("DNNPOOL_BLOCK_PLANE_LIMIT", str(1 << 62))
    unlimited = dp.Pooling(pd)
    assert (":channel_blocks/" in limited.kernel_name) == blocks, limited.kernel_name
    assert ":channel_blocks/" in unlimited.kernel_name, unlimited.kernel_name
    if os.path.exists("/proc/cpuinfo"):   # elsewhere the vendor is not read here
        with open("/proc/cpuinfo") as cpuinfo:
            intel = "GenuineIntel" in cpuinfo.read()
        assert default.kernel_name == (limited if intel else unlimited).kernel_name
    got = limited.execute(x)
    other = unlimited.execute(x)
    if kind == "MaxPool":
        np.testing.assert_array_equal(bits(got), bits(other))
    for result in (got, other):   # (averages summed in another order: each within the tolerance)
        assert_matches_its_reference(result, x, kind, dtype, dict(attrs, kind=kind, data_format="NCX"))


@pytest.mark.parametrize("mode", ["0", "1"])
def test_property_and_conformance_suites_with_channel_blocks_forced(mode):
    """DNNPOOL_CHANNEL_BLOCKS=1 sends every NCX problem of 2 channels or more
    (no indices) through the channel blocks, =0 none: the random
    configurations and the conformance cases pass either way, so each path
    stays tested beyond the shapes the rule gives it."""
    names = run_python(["-c", "import dnnpool as dp; print(*(dp.Pooling(dp.PoolingDesc("
                        "'AvgPool', s, 'f32', data_format='NCX', kernel=[2, 2])).kernel_name "
                        "for s in ((1, 8, 64, 64), (1, 8, 7, 7))))"], DNNPOOL_CHANNEL_BLOCKS=mode)
    assert [":channel_blocks/" in name for name in names.stdout.split()] == [mode == "1"] * 2, names
    here = os.path.dirname(os.path.abspath(__file__))
    args = ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--rootdir", here,
            os.path.join(here, "test_properties.py"), os.path.join(here, "test_conformance.py")]
    run = run_python(args, timeout=900, DNNPOOL_CHANNEL_BLOCKS=mode, DNNPOOL_HYPOTHESIS_EXAMPLES="150")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout


# Kernel 1, stride 1, no padding on every axis: each output is its input
# whatever the kind, so calls without indices copy (memcpy along runs dense in
# both tensors, element by element along the rest); the last shape is over
# 512 KB in f32, enough to split among threads.
IDENTITY_SHAPES = [(2, 5, 7, 9), (1, 3, 16, 56, 7), (4, 6, 33), (1, 96, 40, 56)]
IDENTITY_KINDS = [(kind, dtype) for kind in ("AvgPool", "MaxPool") for dtype in DTYPES] + [("MaxPool", "u8"),
                                                                                            ("MaxPool", "s8")]


def _identity_input(kind, shape, dtype, layout):
    x = _integers(shape, dtype, 3) if dtype in ("u8", "s8") else make_input(kind, shape, dtype, 3)
    if dtype not in ("u8", "s8"):
        x.reshape(-1)[:2] = (-0.0, np.nan)   # signs and NaNs come through as they are
    return np.ascontiguousarray(np.moveaxis(x, 1, -1)) if layout == "NXC" else x


@pytest.mark.parametrize("kind,dtype", IDENTITY_KINDS, ids=[f"{k}-{d}" for k, d in IDENTITY_KINDS])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", IDENTITY_SHAPES, ids=[str(s) for s in IDENTITY_SHAPES])
def test_identity_windows_copy_src_bit_for_bit(shape, layout, kind, dtype):
    x = _identity_input(kind, shape, dtype, layout)
    nd = len(shape) - 2
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format=layout, kernel=[1] * nd)
    prim = dp.Pooling(pd)
    assert prim.kernel_name.endswith(":copy"), prim.kernel_name
    assert np.array_equal(bits(prim.execute(x)), bits(x))
    assert np.array_equal(bits(dp.Pooling(pd, num_threads=2).execute(x)), bits(x))
    # views: every other position along the innermost axis, reversed along
    # the outermost spatial one, into a dst that is a view too
    wide = np.repeat(x, 2, axis=-1)
    view = wide[..., ::2][:, :, ::-1] if layout == "NCX" else wide[..., ::2][:, ::-1]
    dst_base = np.zeros(wide.shape, x.dtype)
    dst = dst_base[..., 1::2]
    assert prim.execute(view, dst=dst) is dst
    assert np.array_equal(bits(dst), bits(view))
    assert not np.any(bits(dst_base[..., ::2]))       # nothing written between the view's elements
    if kind == "MaxPool":   # indices are positions: computed by the kernels, each its own element
        got, idx = prim.execute(x, with_indices=True)
        assert np.array_equal(bits(got), bits(x))
        _, want_idx = reference.padded_formulation(x, dict(kernel=[1] * nd, kind=kind, data_format=layout))
        np.testing.assert_array_equal(idx, want_idx)


# Kernel 1 at larger strides, every window inside src (end padding or ceil
# rounding that no window reaches included): src subsampled, copied.
STRIDED_SINGLE_TAPS = [
    ((2, 5, 9, 10), dict(strides=[2, 3])),
    ((1, 3, 16, 56, 7), dict(strides=[2, 3, 1])),
    ((4, 6, 33), dict(strides=[4], pads_end=[2])),                          # ends 32, before the padding
    ((1, 40, 57, 57), dict(strides=[2, 2], rounding_type="ceil")),         # 29 windows, the last at 56
    ((1, 96, 64, 64), dict(strides=[1, 2], dilations=[3, 3])),             # over 512 KB: threads split it
]


@pytest.mark.parametrize("kind,dtype", IDENTITY_KINDS, ids=[f"{k}-{d}" for k, d in IDENTITY_KINDS])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape,attrs", STRIDED_SINGLE_TAPS, ids=[str(s[0]) for s in STRIDED_SINGLE_TAPS])
def test_strided_single_tap_windows_copy_a_subsampled_src(shape, attrs, layout, kind, dtype):
    x = _identity_input(kind, shape, dtype, layout)
    nd = len(shape) - 2
    full = dict(kernel=[1] * nd, **attrs)
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format=layout, **full)
    prim = dp.Pooling(pd)
    assert prim.kernel_name.endswith(":copy"), prim.kernel_name
    steps = (slice(None),) + tuple(slice(None, None, s) for s in attrs["strides"])
    want = x[steps + (slice(None),)] if layout == "NXC" else x[(slice(None),) + steps]
    assert want.shape == pd.dst_shape
    assert np.array_equal(bits(prim.execute(x)), bits(want))
    assert np.array_equal(bits(dp.Pooling(pd, num_threads=2).execute(x)), bits(want))
    # a src view reversed along its outermost spatial axis, into a dst view
    view = x[:, :, ::-1] if layout == "NCX" else x[:, ::-1]
    dst_base = np.zeros((*pd.dst_shape[:-1], 2 * pd.dst_shape[-1]), x.dtype)
    dst = dst_base[..., 1::2]
    assert prim.execute(view, dst=dst) is dst
    want_view = view[steps + (slice(None),)] if layout == "NXC" else view[(slice(None),) + steps]
    assert np.array_equal(bits(dst), bits(want_view))
    assert not np.any(bits(dst_base[..., ::2]))
    if kind == "MaxPool":
        _, idx = prim.execute(x, with_indices=True)
        _, want_idx = reference.padded_formulation(x, dict(full, kind=kind, data_format=layout))
        np.testing.assert_array_equal(idx, want_idx)
    if dtype == "f32":
        want_ref, _ = reference.padded_formulation(x, dict(full, kind=kind, data_format=layout))
        assert_matches_reference(prim.execute(x), want_ref, kind, dtype, x)


# NXC runs of every size class the copy moves in line (bytes per point:
# under 4, 4-7, 8-15, 16 and past it by whole and overlapping 16-byte moves,
# exactly 256, then memcpy past it), and NCX rows taken element by element.
SUBSAMPLED_RUNS = [("u8", 1), ("u8", 3), ("s8", 5), ("f16", 3), ("bf16", 6), ("f32", 4), ("f16", 9), ("f32", 5),
                   ("f64", 3), ("f32", 17), ("u8", 63), ("f64", 32), ("f32", 65), ("bf16", 129)]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype,channels", SUBSAMPLED_RUNS, ids=[f"{d}-{c}" for d, c in SUBSAMPLED_RUNS])
def test_kernel_1_subsamples_runs_of_every_size(dtype, channels, layout):
    shape = (2, channels, 11, 13)
    x = _integers(shape, dtype, 5) if dtype in ("u8", "s8") else make_input("MaxPool", shape, dtype, 5)
    if layout == "NXC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    pd = dp.PoolingDesc("MaxPool", x.shape, dtype, data_format=layout, kernel=[1, 1], strides=[2, 3])
    prim = dp.Pooling(pd)
    assert prim.kernel_name.endswith(":copy"), prim.kernel_name
    want = x[:, ::2, ::3] if layout == "NXC" else x[:, :, ::2, ::3]
    dst = np.full(pd.dst_shape, 7, x.dtype)
    assert prim.execute(x, dst=dst) is dst
    assert np.array_equal(bits(dst), bits(want))


@pytest.mark.parametrize("shape,dtype,layout", [((1, 838, 838, 3), "u8", "NXC"), ((1, 57, 57, 160), "f32", "NXC"),
                                                ((3, 50, 130, 90), "f32", "NCX")], ids=str)
def test_kernel_1_subsamples_split_among_threads_mid_row(shape, dtype, layout):
    """Over 512 KB of dst the copy's rows (points, or NCX rows) go to
    threads in chunks that end inside an output row: each resumes the walk
    where the one before stopped."""
    x = _integers(shape, dtype, 6) if dtype == "u8" else make_input("MaxPool", shape, dtype, 6)
    pd = dp.PoolingDesc("MaxPool", shape, dtype, data_format=layout, kernel=[1, 1], strides=[2, 2])
    want = x[:, ::2, ::2] if layout == "NXC" else x[:, :, ::2, ::2]
    assert want.nbytes >= 512 << 10
    for threads in (1, 2):
        prim = dp.Pooling(pd, num_threads=threads)
        assert prim.kernel_name.endswith(":copy"), prim.kernel_name
        assert np.array_equal(bits(prim.execute(x)), bits(want))


@pytest.mark.parametrize("attrs", [dict(strides=[2, 1], pads_end=[2, 0]), dict(pads_end=[0, 1]),
                                   dict(pads_begin=[1, 0]), dict(strides=[1, 2], rounding_type="ceil"),
                                   dict(strides=[3, 3], pads_begin=[0, 1], pads_end=[0, 1])], ids=str)
@pytest.mark.parametrize("kind", ["AvgPool", "MaxPool"])
def test_kernel_1_windows_that_reach_the_padding_pool(kind, attrs):
    """Kernel 1 with a window in the padding is no copy: the kernels pool it
    (padded outputs: maxima the lowest value, averages 0 or the exclude-pad
    NaN)."""
    x = make_input(kind, (1, 4, 9, 10), "f32", 2)
    full = dict(kernel=[1, 1], **attrs)
    prim = dp.Pooling(dp.PoolingDesc(kind, x.shape, "f32", data_format="NCX", **full))
    assert not prim.kernel_name.endswith(":copy"), prim.kernel_name
    want, _ = reference.padded_formulation(x, dict(full, kind=kind, data_format="NCX"))
    assert_matches_reference(prim.execute(x), want, kind, "f32", x)


def test_quantized_kernel_1_averages_requantize():
    x = _integers((1, 4, 9, 10), "u8", 1)
    pd = dp.PoolingDesc("AvgPool", x.shape, "u8", kernel=[1, 1], data_format="NCX", src_scale=0.5, src_zero_point=3,
                        dst_scale=0.25, dst_zero_point=7)
    prim = dp.Pooling(pd)
    assert not prim.kernel_name.endswith(":copy"), prim.kernel_name
    want = np.clip(np.round((x.astype(np.float64) - 3) * 0.5 / 0.25) + 7, 0, 255)
    np.testing.assert_array_equal(prim.execute(x), want)


# NXC channel-kernel rows too few for the threads (batch 1, short outputs
# along D and H) split along W into segments of output points, each a task
# (plan_row_segments): rows under 4 into 4 tasks or more, segments of 16
# points or more and of 2^16 tap-visits times the rows or more.  The
# segments depend on the problem alone: every thread count computes the
# same segments to the same bits.  (NCX shapes; the last column: the segments.)
ROW_SEGMENTS = [
    ("MaxPool", (1, 128, 2000), dict(kernel=[3], strides=[3], pads_begin=[1], pads_end=[1]), 3),
    ("AvgPool", (1, 64, 1204), dict(kernel=[4], strides=[2], pads_begin=[3], pads_end=[3], exclude_pad=True,
                                    rounding_type="ceil"), 2),
    ("AvgPool", (1, 80, 2100), dict(kernel=[5], pads_begin=[2], pads_end=[2]), 4),   # stride 1: flat rows
    ("MaxPool", (1, 80, 2100), dict(kernel=[5], pads_begin=[2], pads_end=[2]), 4),
    ("AvgPool", (1, 64, 3, 700), dict(kernel=[2, 3], strides=[1, 2], pads_begin=[0, 1], pads_end=[0, 1]), 2),
    ("MaxPool", (1, 256, 3, 900), dict(kernel=[1, 3], strides=[1, 3]), 2),
    ("MaxPool", (1, 64, 1600), dict(kernel=[3], strides=[2], dilations=[3], pads_begin=[3], pads_end=[3]), 2),
    ("AvgPool", (1, 48, 2, 2, 900), dict(kernel=[2, 2, 3], strides=[1, 1, 3]), 2),
    ("MaxPool", (2, 128, 1, 1500), dict(kernel=[1, 4], strides=[1, 4]), 2),
    # whole rows: a segment would start in the begin padding (60 columns,
    # segments of 50 points) ...
    ("MaxPool", (1, 512, 40), dict(kernel=[3], dilations=[30], pads_begin=[60], pads_end=[60]), 1),
    # ... or too little work for threads to pay, in one row or in two
    ("AvgPool", (1, 64, 400), dict(kernel=[3], pads_begin=[1], pads_end=[1]), 1),
    ("MaxPool", (2, 64, 1, 1500), dict(kernel=[1, 4], strides=[1, 4]), 1),
]


def _segmented_primitive(pd, segments):
    prim = dp.Pooling(pd)
    name = prim.kernel_name.replace("+bytes", "")   # (8-bit maxima: byte lanes)
    assert name.endswith(f":channel_block+segments{segments}" if segments > 1 else ":channel_block"), name
    return prim


# (8-bit averages are quantized: test_short_nxc_rows_of_quantized_averages_split_into_segments)
ROW_SEGMENTS_BY_DTYPE = [(*c, t) for c in ROW_SEGMENTS for t in DTYPES + ("u8", "s8") if c[0] == "MaxPool" or t in DTYPES]


@pytest.mark.parametrize("kind,shape,attrs,segments,dtype", ROW_SEGMENTS_BY_DTYPE,
                         ids=[f"{c[0]} {c[1]} k{c[2]['kernel']}-{c[4]}" for c in ROW_SEGMENTS_BY_DTYPE])
def test_short_nxc_rows_split_into_segments(kind, shape, attrs, segments, dtype):
    """Every output of every segment written once (dst starts as a sentinel),
    the reference's values, the same bits at 1, 2 and 3 threads, and for
    maxima the values of the index path (whole rows, point by point)."""
    x = _integers(shape, dtype, 21) if dtype in ("u8", "s8") else make_input(kind, shape, dtype, 21)
    x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs)
    prim = _segmented_primitive(pd, segments)
    got, want_idx = check_nxc_over_sentinel(prim, x, kind, dtype, attrs)
    if kind == "MaxPool":
        values, idx = prim.execute(x, with_indices=True)
        np.testing.assert_array_equal(bits(values), bits(got))
        np.testing.assert_array_equal(idx, want_idx)


@pytest.mark.parametrize("dtype", ("u8", "s8"))
@pytest.mark.parametrize("kind,shape,attrs,segments", [c for c in ROW_SEGMENTS if c[0] == "AvgPool"],
                         ids=[f"{c[1]} k{c[2]['kernel']}" for c in ROW_SEGMENTS if c[0] == "AvgPool"])
def test_short_nxc_rows_of_quantized_averages_split_into_segments(kind, shape, attrs, segments, dtype):
    x = np.ascontiguousarray(np.moveaxis(_integers(shape, dtype, 22), 1, -1))
    q = dict(src_scale=0.05, src_zero_point=10 if dtype == "u8" else -3, dst_scale=0.04,
             dst_zero_point=128 if dtype == "u8" else 2)
    pd = dp.PoolingDesc(kind, x.shape, dtype, data_format="NXC", **attrs, **q)
    got = np.full(pd.dst_shape, 77, x.dtype)
    _segmented_primitive(pd, segments).execute(x, dst=got)
    for threads in (2, 3):
        np.testing.assert_array_equal(got, dp.Pooling(pd, num_threads=threads).execute(x))
    pick = [c for c in (0, 15, 16, 31, 47) if c < x.shape[-1]]   # the exact oracle is slow: a few channels
    assert_quantized_matches_reference(got[..., pick], x[..., pick], dict(attrs, kind=kind, data_format="NXC", **q))
