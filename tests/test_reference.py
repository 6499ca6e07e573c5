"""The oracle checks itself: it must reproduce every conformance case exactly, agree
with the ONNX documentation's closed-form shape formulas, and agree with a second,
differently built formulation (explicitly padded arrays cut into strided windows).
No dnnpool import here: a bug in the oracle must show up on its own."""

import math
import os
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference

# examples per property; raise it (e.g. 5000) for a thorough local hunt
EXAMPLES = int(os.environ.get("DNNPOOL_HYPOTHESIS_EXAMPLES", "200"))


# ---------------------------------------------------------------- conformance cases

def test_reference_reproduces_conformance_case(conformance_case):
    case = conformance_case
    if case.raises:
        with pytest.raises(ValueError):
            reference.pool(case.src, case.attrs)
        return
    if case.resolved_pads:
        axes = reference.resolve_geometry(
            case.src_shape[2:] if case.attrs["data_format"] == "NCX" else case.src_shape[1:-1],
            case.attrs)
        assert (tuple(a.pb for a in axes), tuple(a.pe for a in axes)) == case.resolved_pads
    assert reference.dst_shape(case.src_shape, case.attrs) == case.dst.shape
    if case.indices is None:
        dst = reference.pool(case.src, case.attrs)
    else:
        dst, indices = reference.pool(case.src, case.attrs, with_indices=True)
        np.testing.assert_array_equal(indices, case.indices)
        assert indices.dtype == np.int64
    assert dst.dtype == case.src.dtype
    reference.assert_within_ulp(dst, case.dst, case.dtype, 0, case.name)


# ---------------------------------------------------------------- rounding and numerics

@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_round_to_f32_and_f16_match_numpy_correct_rounding(x):
    # numpy converts a double to float32/float16 with one correct rounding
    with np.errstate(over="ignore"):
        assert reference.round_to_dtype(x, "f32") == float(np.float32(x))
        assert reference.round_to_dtype(x, "f16") == float(np.float16(x))


@given(st.integers(-(2**20), 2**20), st.integers(-140, 120))
def test_round_to_bf16_is_nearest_even(mantissa, exponent):
    x = Fraction(mantissa) * Fraction(2) ** exponent
    got = reference.round_to_dtype(x, "bf16")
    assert float(ml_dtypes.bfloat16(got)) == got                 # representable
    below = float(np.nextafter(ml_dtypes.bfloat16(got), ml_dtypes.bfloat16(-np.inf)))
    above = float(np.nextafter(ml_dtypes.bfloat16(got), ml_dtypes.bfloat16(np.inf)))
    if math.isinf(got):      # beyond the largest bf16 by at least half a unit
        assert abs(x) >= Fraction(reference.FLOAT_FORMATS["bf16"][2]) + Fraction(2) ** (127 - 8)
        return
    distance = abs(Fraction(got) - x)
    for neighbour in (below, above):
        assert math.isinf(neighbour) or distance <= abs(Fraction(neighbour) - x)


@pytest.mark.parametrize("name, x, expected", [
    ("f16", Fraction(1) + Fraction(1, 2**11), 1.0),                     # tie -> even
    ("f16", Fraction(1) + Fraction(3, 2**11), 1.001953125),             # tie -> even (up)
    ("f16", Fraction(65520), math.inf),                                 # max + half ulp
    ("f16", Fraction(65519), 65504.0),
    ("f16", Fraction(1, 2**25), 0.0),                                   # half the least subnormal
    ("bf16", Fraction(1) + Fraction(1, 2**8), 1.0),
    ("bf16", Fraction(1) + Fraction(3, 2**8), 1.015625),
    ("f32", Fraction(1, 3), float(np.float32(1 / 3))),
    ("f64", Fraction(1, 3), 1 / 3),
])
def test_round_to_dtype_worked_values(name, x, expected):
    assert reference.round_to_dtype(x, name) == expected


def test_lowest_and_ulp():
    assert reference.lowest("f32") == float(np.finfo(np.float32).min)
    assert reference.lowest("f16") == -65504.0
    assert reference.lowest("bf16") == float(ml_dtypes.finfo(ml_dtypes.bfloat16).min)
    assert (reference.lowest("s8"), reference.lowest("u8")) == (-128, 0)
    assert reference.ulp(1.0, "f16") == 2.0**-10
    assert reference.ulp(1.0, "bf16") == 2.0**-7
    assert reference.ulp(0.0, "f32") == 2.0**-149


def test_max_propagates_the_first_nan_and_keeps_first_ties():
    src = np.array([[[3.0, 1.0, 3.0, np.nan, 2.0, np.nan, 0.0]]], dtype=np.float32)
    attrs = {"kind": "MaxPool", "kernel": [3], "data_format": "NCX"}
    dst, idx = reference.pool(src, attrs, with_indices=True)
    np.testing.assert_array_equal(dst[0, 0], [3.0, np.nan, np.nan, np.nan, np.nan])
    np.testing.assert_array_equal(idx[0, 0], [0, 3, 3, 3, 5])


def test_average_propagates_nan_and_infinities():
    src = np.array([[[1.0, np.nan, 2.0, np.inf, -np.inf, 5.0]]], dtype=np.float32)
    attrs = {"kind": "AvgPool", "kernel": [2], "strides": [1], "data_format": "NCX"}
    dst = reference.pool(src, attrs)
    np.testing.assert_array_equal(dst[0, 0], [np.nan, np.nan, np.inf, np.nan, -np.inf])


# ---------------------------------------------------------------- shape formulas

shape_configs = st.fixed_dictionaries({
    "n": st.integers(1, 40), "k": st.integers(1, 6), "s": st.integers(1, 6),
    "d": st.integers(1, 3), "pb": st.integers(0, 6), "pe": st.integers(0, 6)})


@given(shape_configs)
def test_same_auto_pad_matches_onnx_doc_formula(c):
    ek = (c["k"] - 1) * c["d"] + 1
    for mode in ("same_upper", "same_lower"):
        (axis,) = reference.resolve_geometry((c["n"],), {
            "kernel": [c["k"]], "strides": [c["s"]], "dilations": [c["d"]], "auto_pad": mode})
        assert axis.out == math.ceil(c["n"] / c["s"])
        total = max(0, (axis.out - 1) * c["s"] + ek - c["n"])     # ONNX pad_shape formula
        small, large = sorted((axis.pb, axis.pe))
        assert (axis.pb + axis.pe, small) == (total, total // 2)
        assert (axis.pb <= axis.pe) if mode == "same_upper" else (axis.pb >= axis.pe)


@given(shape_configs, st.sampled_from(["floor", "ceil"]))
def test_explicit_output_length_matches_onnx_doc_formula(c, rounding):
    ek = (c["k"] - 1) * c["d"] + 1
    attrs = {"kernel": [c["k"]], "strides": [c["s"]], "dilations": [c["d"]],
             "pads_begin": [c["pb"]], "pads_end": [c["pe"]], "rounding_type": rounding}
    span = c["n"] + c["pb"] + c["pe"] - ek
    if span < 0:
        with pytest.raises(ValueError):
            reference.resolve_geometry((c["n"],), attrs)
        return
    (axis,) = reference.resolve_geometry((c["n"],), attrs)
    rounder = math.floor if rounding == "floor" else math.ceil
    assert axis.out == rounder(Fraction(span, c["s"]) + 1)
    (dropped,) = reference.resolve_geometry((c["n"],), dict(attrs, drop_end_pad_windows=True))
    # the ONNX (and ONNX Runtime) rule: with ceil, one last window starting at or past
    # n + pb is dropped; a single decrement, as ONNX Runtime does
    if rounding == "ceil":
        starts_in_end_pad = (axis.out - 1) * c["s"] >= c["n"] + c["pb"]
        assert dropped.out == axis.out - starts_in_end_pad
    else:
        assert dropped.out == axis.out


# ---------------------------------------------------------------- a second formulation

@settings(max_examples=EXAMPLES)
@given(st.data())
def test_reference_agrees_with_padded_array_formulation(data):
    rank = data.draw(st.integers(1, 3), "rank")
    spatial = tuple(data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank), "spatial"))
    per_axis = lambda lo, hi: st.lists(st.integers(lo, hi), min_size=rank, max_size=rank)
    channels_last = data.draw(st.booleans(), "channels_last")
    attrs = {
        "kind": data.draw(st.sampled_from(["AvgPool", "MaxPool"]), "kind"),
        "data_format": "NXC" if channels_last else "NCX",
        "kernel": data.draw(per_axis(1, 3), "kernel"),
        "strides": data.draw(per_axis(1, 3), "strides"),
        "dilations": data.draw(per_axis(1, 2), "dilations"),
        "pads_begin": data.draw(per_axis(0, 3), "pads_begin"),
        "pads_end": data.draw(per_axis(0, 3), "pads_end"),
        "auto_pad": data.draw(st.sampled_from(["none", "same_upper", "same_lower", "valid"])),
        "rounding_type": data.draw(st.sampled_from(["floor", "ceil"]), "rounding"),
        "drop_end_pad_windows": data.draw(st.booleans(), "drop"),
    }
    if attrs["kind"] == "AvgPool":
        attrs["exclude_pad"] = data.draw(st.booleans(), "exclude_pad")
        attrs["include_pad_divisor"] = data.draw(st.sampled_from(["kernel", "padded_extent"]))
    else:
        attrs["index_order"] = data.draw(st.sampled_from(["row_major", "column_major"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    shape = (2, *spatial, 3) if channels_last else (2, 3, *spatial)
    src = rng.integers(-4, 5, shape).astype(np.float64)          # small ints: many ties
    if data.draw(st.booleans(), "with special values"):
        specials = rng.choice([np.nan, np.inf, -np.inf], size=shape)
        src = np.where(rng.random(shape) < 0.15, specials, src)
    try:
        want, want_index = reference.padded_formulation(src, attrs)
    except ValueError:      # kernel larger than the padded input, or a divisor of 0
        with pytest.raises(ValueError):
            reference.pool(src, attrs)
        return
    if attrs["kind"] == "MaxPool":
        got, index = reference.pool(src, attrs, with_indices=True)
        np.testing.assert_array_equal(index, want_index)
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(reference.pool(src, attrs), want, rtol=1e-14, atol=1e-14)


# ---------------------------------------------------------------- quantized formula

@settings(max_examples=EXAMPLES // 2)
@given(st.sampled_from(["s8", "u8"]), st.integers(0, 2**32 - 1),
       st.sampled_from([0.05, 0.25, 0.5, 1.0, 3.0]), st.sampled_from([0.05, 0.25, 1.0, 2.0]),
       st.integers(-20, 20), st.integers(-20, 20), st.booleans())
def test_quantized_average_matches_dequantize_average_quantize(name, seed, x_scale, y_scale,
                                                               x_zp, y_zp, exclude_pad):
    if name == "u8":
        x_zp, y_zp = abs(x_zp), abs(y_zp)
    low, high = reference.INTEGER_RANGES[name]
    src = np.random.default_rng(seed).integers(low, high + 1, (1, 2, 5)).astype(
        reference.NUMPY_DTYPES[name])
    attrs = {"kind": "AvgPool", "kernel": [3], "pads_begin": [1], "pads_end": [1],
             "exclude_pad": exclude_pad, "data_format": "NCX", "src_scale": x_scale,
             "src_zero_point": x_zp, "dst_scale": y_scale, "dst_zero_point": y_zp}
    got = reference.pool(src, attrs)
    # the documented pipeline: dequantize, average the real values (padding = 0.0),
    # quantize with the output parameters; done here in f64 with numpy
    real = (src.astype(np.float64) - x_zp) * float(np.float32(x_scale))
    padded = np.pad(real, [(0, 0), (0, 0), (1, 1)])
    counts = np.pad(np.ones(5), 1)
    for o in range(5):
        divisor = counts[o:o + 3].sum() if exclude_pad else 3
        v = padded[..., o:o + 3].sum(-1) / divisor / float(np.float32(y_scale)) + y_zp
        want = np.clip(np.round(v), low, high)          # numpy rounds half to even
        near_tie = np.abs(np.abs(v - np.floor(v)) - 0.5) < 1e-9
        np.testing.assert_array_equal(got[..., o][~near_tie], want[~near_tie])
