"""dnnpool against the real oneDNN pooling primitive, on hundreds of seeded random configurations.

oneDNN (the PyPI wheel onednn-cpu-gomp 2023.2.0, i.e. oneDNN 3.2) is driven through the ctypes
binding of dnnpool.bench.peers.onednn. Mapping of the oneDNN Graph semantics onto the primitive:
- avg with padding counted: avg_include_padding, whose divisor is the whole kernel (dnnpool's
  include_pad_divisor="kernel", the default);
- dilations: the primitive counts from 0, dnnpool (like oneDNN Graph) from 1;
- ceil rounding: the primitive takes explicit dst dims but insists on the floor formula, so the
  ceil size is obtained by growing pads_end (the primitive's divisors stay those of the ceil
  semantics: the whole kernel with padding counted, input taps only without).
- bf16: oneDNN 3.2 implements bf16 pooling only on CPUs with AVX-512 (or AVX2-VNNI-2); elsewhere
  the oracle pools the same bf16 values in f32 and rounds once to bf16, which is the semantics
  (accumulate in f32, round once to nearest even) that oneDNN's bf16 kernels implement.
oneDNN's primitive refuses average pooling without padding when a pad reaches the effective
kernel or the dilation exceeds the input (its 0/0 guard); the generator stays inside that domain
and test_exclude_pad_refusals checks both libraries refuse a window that sees only padding.
"""
import math

import ml_dtypes
import numpy as np
import pytest

import dnnpool as dp

try:
    from dnnpool.bench.peers import onednn
    onednn.load_library()
except ImportError as error:  # OneDNNUnavailable is an ImportError
    pytest.skip(f"real oneDNN not available: {error}", allow_module_level=True)

ALGORITHMS = ("max", "avg_include_padding", "avg_exclude_padding")
DTYPES = {"f32": np.dtype(np.float32), "bf16": np.dtype(ml_dtypes.bfloat16)}
CONFIG_COUNT = 480
SEED = 20240611


def _output_length(n, k, s, pb, pe, d, rounding):
    span = n + pb + pe - ((k - 1) * d + 1)
    return (math.ceil(span / s) if rounding == "ceil" else span // s) + 1


def _empty_window(n, k, s, pb, d, out):
    """Some output window of this axis has no tap inside the input."""
    return any(all(not 0 <= o * s - pb + j * d < n for j in range(k)) for o in range(out))


def _axis(rng, large, algorithm):
    if large:  # long windows, stride 1: where running-sum / van Herk kernels take over
        k, s, d = int(rng.integers(7, 32)), 1, 1
    else:
        k, s = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        d = int(rng.choice([1, 1, 1, 2, 3]))
    ek = (k - 1) * d + 1
    pb, pe = int(rng.integers(0, ek)), int(rng.integers(0, ek))
    n_min = max(1, ek - pb - pe)
    n = int(rng.integers(n_min, n_min + (90 if large else 4 * s + 6)))
    return k, s, d, pb, pe, n


def _random_config(rng, index):
    large = index % 8 == 0
    ndims = int(rng.choice([1, 2])) if large else int(rng.choice([1, 2, 2, 3]))
    algorithm = ALGORITHMS[index % 3]
    while True:
        axes = [_axis(rng, large, algorithm) for _ in range(ndims)]
        kernel, strides, dilations, pads_begin, pads_end, spatial = map(list, zip(*axes))
        config = dict(
            algorithm=algorithm, layout=("NCX", "NXC")[(index // 3) % 2],
            dtype=("f32", "bf16")[(index // 6) % 2],
            rounding="ceil" if rng.random() < 0.3 else "floor",
            batch=int(rng.integers(1, 3)), channels=int(rng.choice([1, 3, 8, 13, 16, 33])),
            spatial=spatial, kernel=kernel, strides=strides, dilations=dilations,
            pads_begin=pads_begin, pads_end=pads_end,
            integers=bool(rng.random() < 0.5), seed=int(rng.integers(2**31)))
        if _onednn_accepts(config):
            return config


def _onednn_pads_end(c):
    """pads_end for the primitive, which checks the floor formula: ceil grows it to fit."""
    if c["rounding"] == "floor":
        return list(c["pads_end"])
    return [(o - 1) * s + (k - 1) * d + 1 - n - pb for o, s, k, d, n, pb in
            zip(_out_spatial(c), c["strides"], c["kernel"], c["dilations"], c["spatial"],
                c["pads_begin"])]


def _onednn_accepts(c):
    """The primitive's domain: exclude-pad needs pads < effective kernel and dilation <= n."""
    if c["algorithm"] != "avg_exclude_padding":
        return True
    return all(pb < (k - 1) * d + 1 and pe < (k - 1) * d + 1 and d - 1 < n
               for pb, pe, k, d, n in zip(c["pads_begin"], _onednn_pads_end(c), c["kernel"],
                                          c["dilations"], c["spatial"]))


def _configs():
    rng = np.random.default_rng(SEED)
    return [_random_config(rng, i) for i in range(CONFIG_COUNT)]


def _config_id(c):
    return (f"{c['algorithm']}-{c['layout']}-{c['dtype']}-{c['rounding']}-n{c['spatial']}"
            f"-k{c['kernel']}-s{c['strides']}-d{c['dilations']}-p{c['pads_begin']}"
            f"{c['pads_end']}-C{c['channels']}")


def _out_spatial(c):
    return [_output_length(n, k, s, pb, pe, d, c["rounding"]) for n, k, s, pb, pe, d in
            zip(c["spatial"], c["kernel"], c["strides"], c["pads_begin"], c["pads_end"],
                c["dilations"])]


def _source(c):
    """Integers (exact sums: tight comparison) or normals, in the config's layout."""
    rng = np.random.default_rng(c["seed"])
    logical = (c["batch"], c["channels"], *c["spatial"])
    if c["integers"]:
        data = rng.integers(-8, 9, size=logical).astype(np.float32)
    else:
        data = rng.standard_normal(logical, dtype=np.float32)
    if c["layout"] == "NXC":
        data = np.moveaxis(data, 1, -1)
    return np.ascontiguousarray(data.astype(DTYPES[c["dtype"]]))


def _dnnpool(c, src):
    kind = "MaxPool" if c["algorithm"] == "max" else "AvgPool"
    extra = {} if kind == "MaxPool" else {"exclude_pad": c["algorithm"] == "avg_exclude_padding"}
    return dp.Pooling(dp.PoolingDesc(
        kind, src.shape, dtype=c["dtype"], kernel=c["kernel"], strides=c["strides"],
        pads_begin=c["pads_begin"], pads_end=c["pads_end"], rounding_type=c["rounding"],
        data_format=c["layout"], dilations=c["dilations"], **extra)).execute(src)


def _native_bf16():
    """Does this oneDNN build implement bf16 pooling on this CPU?"""
    src = np.zeros((1, 1, 2), DTYPES["bf16"])
    try:
        onednn.pool(src, "max", [1], [1], [0], [0], [2])
    except onednn.OneDNNError as error:
        assert error.status == "unimplemented", error
        return False
    return True


NATIVE_BF16 = _native_bf16()


def _onednn(c, src):
    native = c["dtype"] == "f32" or NATIVE_BF16
    dst = onednn.pool(src if native else src.astype(np.float32), c["algorithm"], c["kernel"],
                      c["strides"], c["pads_begin"], _onednn_pads_end(c), _out_spatial(c),
                      dilations=c["dilations"], data_format=c["layout"])
    if native:
        return dst
    # f32's lowest (a max window without input) would round to -inf; bf16's lowest is meant.
    empty = dst == np.finfo(np.float32).min
    return np.where(empty, ml_dtypes.finfo(src.dtype).min, dst).astype(src.dtype)


def _has_empty_window(c):
    return any(_empty_window(n, k, s, pb, d, o) for n, k, s, pb, d, o in
               zip(c["spatial"], c["kernel"], c["strides"], c["pads_begin"], c["dilations"],
                   _out_spatial(c)))


def _tolerance(c):
    """Maxima are exact. Averages: exact integer sums leave one rounding of the quotient
    (oneDNN may multiply by the reciprocal): 2 ulp in f32, 1 ulp in bf16 (plus double rounding
    through f32). Normal inputs add summation-order error."""
    if c["algorithm"] == "max":
        return 0.0, 0.0
    if c["dtype"] == "bf16":
        return 2.0**-8 * 1.01, 1e-6
    ulp = 2.0**-23
    return (2 * ulp, 0.0) if c["integers"] else (16 * ulp, 1e-6)


CONFIGS = _configs()


def test_configurations_cover_the_space():
    """The generator really produces what the oracle is meant to cover."""
    seen = {(c["algorithm"], c["layout"], c["dtype"], len(c["spatial"])) for c in CONFIGS}
    assert len(seen) == 3 * 2 * 2 * 3
    assert sum(c["rounding"] == "ceil" for c in CONFIGS) > CONFIG_COUNT // 5
    assert sum(max(c["dilations"]) > 1 for c in CONFIGS) > CONFIG_COUNT // 10
    assert sum(max(c["kernel"]) >= 7 for c in CONFIGS) >= CONFIG_COUNT // 8
    assert sum(any(c["pads_begin"]) or any(c["pads_end"]) for c in CONFIGS) > CONFIG_COUNT // 2


@pytest.mark.parametrize("config", CONFIGS, ids=_config_id)
def test_matches_onednn(config):
    src = _source(config)
    if config["algorithm"] == "avg_exclude_padding" and _has_empty_window(config):
        with pytest.raises(ValueError):
            _dnnpool(config, src)
        return
    expected = _onednn(config, src)
    got = _dnnpool(config, src)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    rtol, atol = _tolerance(config)
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                               rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_max_over_padding_only_is_lowest_finite(dtype):
    """Both give the dtype's lowest finite value for a window that sees only padding."""
    src = np.arange(1, 6, dtype=np.float32).astype(DTYPES[dtype]).reshape(1, 1, 5)
    config = dict(algorithm="max", layout="NCX", dtype=dtype, rounding="floor",
                  spatial=[5], kernel=[2], strides=[1], dilations=[1], pads_begin=[3],
                  pads_end=[0])
    expected = _onednn(config, src)
    got = _dnnpool(config, src)
    lowest = float(ml_dtypes.finfo(DTYPES[dtype]).min)
    np.testing.assert_array_equal(expected.astype(np.float64).ravel()[:2], [lowest, lowest])
    np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))


def test_ceil_include_pad_divides_by_whole_kernel():
    """oneDNN Graph refuses ceil with exclude_pad=false; its primitive computes it with the
    whole kernel as divisor, as dnnpool does: n=5, k=2, s=2 -> [1.5, 3.5, 5/2]."""
    src = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
    config = dict(algorithm="avg_include_padding", layout="NCX", dtype="f32", rounding="ceil",
                  spatial=[5], kernel=[2], strides=[2], dilations=[1], pads_begin=[0],
                  pads_end=[0])
    np.testing.assert_array_equal(_onednn(config, src).ravel(), [1.5, 3.5, 2.5])
    np.testing.assert_array_equal(_dnnpool(config, src).ravel(), [1.5, 3.5, 2.5])


def test_exclude_pad_refusals():
    """A window entirely in the padding (pads_begin >= kernel): dnnpool refuses it
    (SEMANTICS.md section 1) and so does oneDNN's primitive (its 0/0 guard)."""
    src = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
    config = dict(algorithm="avg_exclude_padding", layout="NCX", dtype="f32", rounding="floor",
                  spatial=[5], kernel=[2], strides=[1], dilations=[1], pads_begin=[2],
                  pads_end=[0])
    assert _has_empty_window(config) and not _onednn_accepts(config)
    with pytest.raises(onednn.OneDNNError, match="invalid_arguments"):
        _onednn(config, src)
    with pytest.raises(ValueError, match="(?i)pad"):
        _dnnpool(config, src)
