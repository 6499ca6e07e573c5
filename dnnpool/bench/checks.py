"""Compare a peer's output with dnnpool's (reported per case, never fatal for the benchmark)."""
import numpy as np

# (absolute, relative) tolerance per dtype for averages; maxima must match exactly.
# bf16/f16: one rounding of an f32 average differs by at most an ulp between summation orders.
# u8: peers may round the quantized average differently at exact ties.
_AVG_TOLERANCE = {"f32": (1e-5, 1e-5), "bf16": (1.6e-2, 1e-2), "f16": (2e-3, 2e-3),
                  "u8": (1.0, 0.0)}


def compare(expected, got, dtype, kind):
    """None when they agree, else a short description of the disagreement."""
    if got.shape != expected.shape:
        return f"shape {got.shape} != {expected.shape}"
    expected64, got64 = expected.astype(np.float64), got.astype(np.float64)
    atol, rtol = (0.0, 0.0) if kind == "MaxPool" else _AVG_TOLERANCE[dtype]
    close = np.isclose(got64, expected64, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    bad = np.count_nonzero(~close)
    worst = np.nanmax(np.abs(got64 - expected64))
    first = np.unravel_index(np.argmin(close), close.shape)
    return (f"{bad}/{close.size} elements differ, max |diff| {worst:.3g}, first at {first}: "
            f"{got64[first]!r} vs dnnpool {expected64[first]!r}")
