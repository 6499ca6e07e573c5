"""Every pinned name of API.md section 1 behaves as documented."""

import copy
import json
import os
import pickle

import ml_dtypes
import numpy as np
import pytest

import dnnpool as dp
import reference

ATTRS = dict(kind="AvgPool", src_shape=(2, 9, 7, 5), dtype="f32", kernel=[3, 3], strides=[2, 2],
             pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=False, rounding_type="floor",
             auto_pad="none", data_format="NXC", dilations=[1, 1])
ALL_FIELDS = {"kind", "src_shape", "dtype", "kernel", "strides", "pads_begin", "pads_end",
              "exclude_pad", "rounding_type", "auto_pad", "data_format", "dilations",
              "include_pad_divisor", "drop_end_pad_windows", "index_order", "src_scale",
              "src_zero_point", "dst_scale", "dst_zero_point"}


def _src(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).integers(-20, 20, shape).astype(dtype)


# ---------------------------------------------------------------- PoolingDesc

def test_descriptor_exposes_resolved_attributes_and_shape():
    pd = dp.PoolingDesc(**ATTRS)
    assert tuple(pd.dst_shape) == (2, 5, 4, 5)      # NXC: floor((9+2-3)/2)+1, floor((7+2-3)/2)+1
    assert tuple(pd.pads_begin) == (1, 1) and tuple(pd.pads_end) == (1, 1)
    assert pd.ndims == 2 and pd.quantized is False
    # NCX reads the same shape as C=9, spatial 7x5
    assert tuple(dp.PoolingDesc(**dict(ATTRS, data_format="NCX")).dst_shape) == (2, 9, 4, 3)


def test_defaults_are_the_pinned_ones():
    pd = dp.PoolingDesc("MaxPool", src_shape=(1, 5, 5, 3), kernel=[2, 2])
    d = pd.to_dict()
    assert d["dtype"] == "f32" and d["data_format"] == "NXC"
    assert tuple(d["strides"]) == (1, 1) and tuple(d["dilations"]) == (1, 1)
    assert tuple(d["pads_begin"]) == (0, 0) and tuple(d["pads_end"]) == (0, 0)
    assert d["rounding_type"] == "floor" and d["auto_pad"] == "none"
    assert d["exclude_pad"] is None and d["index_order"] == "row_major"
    assert d["drop_end_pad_windows"] is False
    avg = dp.PoolingDesc("AvgPool", src_shape=(1, 5, 5, 3), kernel=[2, 2]).to_dict()
    assert avg["exclude_pad"] is False and avg["include_pad_divisor"] == "kernel"


def test_to_dict_lists_every_attribute_and_round_trips():
    for attrs in (ATTRS,
                  dict(kind="MaxPool", src_shape=(1, 3, 8), dtype="bf16", kernel=[3],
                       auto_pad="SAME_LOWER", rounding_type="ceil", index_order="column_major",
                       drop_end_pad_windows=True, data_format="NCX"),
                  dict(kind="AvgPool", src_shape=(1, 4, 4, 4, 2), dtype="u8", kernel=[2, 2, 2],
                       src_scale=0.5, src_zero_point=3, dst_scale=0.25, dst_zero_point=7,
                       include_pad_divisor="padded_extent", exclude_pad=False)):
        pd = dp.PoolingDesc(**attrs)
        d = pd.to_dict()
        assert set(d) == ALL_FIELDS
        again = dp.PoolingDesc(**d)
        assert again == pd and hash(again) == hash(pd) and again.to_dict() == d
        assert json.loads(json.dumps(d)) is not None         # plain data


def test_descriptor_is_immutable():
    pd = dp.PoolingDesc(**ATTRS)
    for name, value in (("kernel", [1, 1]), ("strides", (1, 1)), ("dst_shape", (1,)),
                        ("new_attribute", 1)):
        with pytest.raises((AttributeError, TypeError)):
            setattr(pd, name, value)
    d = pd.to_dict()                    # a copy: changing it leaves pd alone
    d["kind"] = "MaxPool"
    if isinstance(d["kernel"], list):
        d["kernel"].append(9)
    assert pd.to_dict()["kind"] == "AvgPool" and tuple(pd.kernel) == (3, 3)


def test_descriptors_compare_and_hash_by_value():
    a, b = dp.PoolingDesc(**ATTRS), dp.PoolingDesc(**ATTRS)
    assert a == b and hash(a) == hash(b) and a is not b
    assert len({a, b}) == 1
    for change in (dict(kernel=[2, 3]), dict(exclude_pad=True), dict(dtype="f16"),
                   dict(data_format="NCX"), dict(rounding_type="ceil"),
                   dict(include_pad_divisor="padded_extent")):
        other = dp.PoolingDesc(**dict(ATTRS, **change))
        assert other != a, change
    assert a != "AvgPool" and a != ATTRS


def test_descriptor_survives_copy_and_pickle():
    pd = dp.PoolingDesc(**ATTRS)
    assert copy.deepcopy(pd) == pd and pickle.loads(pickle.dumps(pd)) == pd


def test_explicit_defaults_equal_omitted_ones():
    explicit = dp.PoolingDesc("MaxPool", src_shape=(1, 6, 3), kernel=[2], strides=[1],
                              pads_begin=[0], pads_end=[0], dilations=[1])
    assert explicit == dp.PoolingDesc("MaxPool", src_shape=(1, 6, 3), kernel=[2])


@pytest.mark.parametrize("spelling, numpy_dtype", [
    ("f32", np.float32), ("f64", np.float64), ("f16", np.float16),
    ("bf16", ml_dtypes.bfloat16), ("s8", np.int8), ("u8", np.uint8)])
def test_numpy_dtypes_are_accepted(spelling, numpy_dtype):
    attrs = dict(kind="MaxPool", src_shape=(1, 5, 2), kernel=[2], data_format="NCX")
    by_name = dp.PoolingDesc(dtype=spelling, **attrs)
    assert dp.PoolingDesc(dtype=numpy_dtype, **attrs) == by_name
    assert dp.PoolingDesc(dtype=np.dtype(numpy_dtype), **attrs) == by_name
    src = _src((1, 5, 2), numpy_dtype)
    assert dp.Pooling(by_name).execute(src).dtype == np.dtype(numpy_dtype)


@pytest.mark.parametrize("auto_pad, pads", [
    ("same_upper", ((1, 0), (2, 1))), ("SAME_UPPER", ((1, 0), (2, 1))),
    ("same_lower", ((2, 1), (1, 0))), ("Same_Lower", ((2, 1), (1, 0))),
    ("valid", ((0, 0), (0, 0))), ("VALID", ((0, 0), (0, 0)))])
def test_auto_pad_replaces_explicit_pads_any_case(auto_pad, pads):
    # H=9, k=4, s=1: total 3; W=5, k=2, s=2: 5 % 2 = 1, total 1
    attrs = dict(kind="MaxPool", src_shape=(1, 9, 5, 1), kernel=[4, 2], strides=[1, 2],
                 pads_begin=[5, 5], pads_end=[5, 5], auto_pad=auto_pad)
    pd = dp.PoolingDesc(**attrs)
    assert (tuple(pd.pads_begin), tuple(pd.pads_end)) == pads
    assert tuple(pd.dst_shape) == reference.dst_shape(attrs["src_shape"], attrs)
    assert pd == dp.PoolingDesc(**dict(attrs, auto_pad=auto_pad.lower()))


def test_quantized_property():
    pd = dp.PoolingDesc("AvgPool", src_shape=(1, 4, 2), dtype="s8", kernel=[2], data_format="NCX",
                        src_scale=0.5, src_zero_point=0, dst_scale=0.5, dst_zero_point=0)
    assert pd.quantized is True


# ---------------------------------------------------------------- Pooling

def test_execute_allocates_dst_of_the_described_shape_and_dtype():
    pd = dp.PoolingDesc(**ATTRS)
    src = _src(ATTRS["src_shape"])
    dst = dp.Pooling(pd).execute(src)
    assert isinstance(dst, np.ndarray) and dst.dtype == np.float32
    assert dst.shape == tuple(pd.dst_shape)
    np.testing.assert_allclose(dst, reference.pool(src, ATTRS), rtol=1e-6)


def test_execute_into_dst_returns_dst_itself():
    pd = dp.PoolingDesc(**ATTRS)
    src = _src(ATTRS["src_shape"])
    out = np.full(tuple(pd.dst_shape), np.nan, np.float32)
    assert dp.Pooling(pd).execute(src, dst=out) is out
    np.testing.assert_allclose(out, reference.pool(src, ATTRS), rtol=1e-6)


def test_execute_into_a_strided_dst_view():
    pd = dp.PoolingDesc(**ATTRS)
    src = _src(ATTRS["src_shape"])
    big = np.zeros((2, 10, 4, 5), np.float32)
    view = big[:, ::2]
    assert dp.Pooling(pd).execute(src, dst=view) is view
    np.testing.assert_allclose(big[:, ::2], reference.pool(src, ATTRS), rtol=1e-6)
    assert not big[:, 1::2].any(), "elements between the view's rows were written"


def test_dst_aliasing_src_is_computed_from_the_original_src():
    attrs = dict(kind="AvgPool", src_shape=(1, 1, 6), kernel=[3], pads_begin=[1], pads_end=[1],
                 exclude_pad=True, data_format="NCX")
    buffer = np.array([[[1, 2, 3, 4, 5, 6]]], np.float32)
    want = reference.pool(buffer.copy(), attrs)
    assert dp.Pooling(dp.PoolingDesc(**attrs)).execute(buffer, dst=buffer) is buffer
    np.testing.assert_array_equal(buffer, want)         # [1.5, 2, 3, 4, 5, 5.5]


def test_with_indices_returns_int64_indices():
    attrs = dict(kind="MaxPool", src_shape=(2, 3, 6, 5), kernel=[2, 2], strides=[2, 2],
                 data_format="NCX")
    src = _src(attrs["src_shape"])
    prim = dp.Pooling(dp.PoolingDesc(**attrs))
    result = prim.execute(src, with_indices=True)
    assert isinstance(result, tuple) and len(result) == 2
    dst, idx = result
    assert idx.dtype == np.int64 and idx.shape == dst.shape
    want, want_idx = reference.pool(src, attrs, with_indices=True)
    np.testing.assert_array_equal(dst, want)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(src.ravel()[idx], dst)      # indices point at the maxima
    out = np.empty_like(dst)
    dst2, idx2 = prim.execute(src, dst=out, with_indices=True)
    assert dst2 is out
    np.testing.assert_array_equal(idx2, want_idx)


# NXC, 40 channels: the channel-block kernel's whole vectors and its lane tail.
INDEX_ATTRS = dict(kind="MaxPool", src_shape=(2, 9, 8, 40), kernel=[3, 3], strides=[1, 2],
                   pads_begin=[1, 1], pads_end=[1, 1])


def test_indices_into_a_buffer_of_the_callers_is_filled_and_returned():
    src = _src(INDEX_ATTRS["src_shape"])
    prim = dp.Pooling(dp.PoolingDesc(**INDEX_ATTRS))
    want, want_idx = reference.pool(src, INDEX_ATTRS, with_indices=True)
    idx = np.full(want.shape, -7, np.int64)
    for _ in range(2):   # the same buffers, reused
        dst, got = prim.execute(src, indices=idx)   # implies with_indices
        assert got is idx
        np.testing.assert_array_equal(dst, want)
        np.testing.assert_array_equal(idx, want_idx)
    out = np.empty_like(want)
    assert prim.execute(src, dst=out, indices=idx, with_indices=True) == (out, idx)


@pytest.mark.parametrize("layout", ["channels first", "every other channel"])
def test_indices_into_a_strided_view(layout):
    # Index rows that are not contiguous per output point: the kernel writes
    # them lane by lane, in place, and touches nothing else.
    src = _src(INDEX_ATTRS["src_shape"])
    prim = dp.Pooling(dp.PoolingDesc(**INDEX_ATTRS))
    want, want_idx = reference.pool(src, INDEX_ATTRS, with_indices=True)
    n, h, w, c = want.shape
    if layout == "channels first":
        big = np.full((n, c, h, w), -7, np.int64)
        view = big.transpose(0, 2, 3, 1)
        untouched = np.zeros(0, np.int64)
    else:
        big = np.full((n, h, w, 2 * c), -7, np.int64)
        view = big[..., ::2]
        untouched = big[..., 1::2]
    _, got = prim.execute(src, indices=view)
    assert got is view
    np.testing.assert_array_equal(view, want_idx)
    assert (untouched == -7).all(), "elements between the view's channels were written"


def test_indices_sharing_memory_with_src_are_computed_from_the_original_src():
    attrs = dict(INDEX_ATTRS, dtype="f64")
    src = _src(attrs["src_shape"], np.float64)
    want, want_idx = reference.pool(src.copy(), attrs, with_indices=True)
    prim = dp.Pooling(dp.PoolingDesc(**attrs))
    idx = src.view(np.int64)[:, :, ::2]     # the output's shape, inside src's bytes
    dst, got = prim.execute(src, indices=idx)
    assert got is idx
    np.testing.assert_array_equal(dst, want)
    np.testing.assert_array_equal(idx, want_idx)


def test_primitive_is_reusable():
    prim = dp.Pooling(dp.PoolingDesc(**ATTRS))
    for seed in range(3):
        src = _src(ATTRS["src_shape"], seed=seed)
        np.testing.assert_allclose(prim.execute(src), reference.pool(src, ATTRS), rtol=1e-6)


# ---------------------------------------------------------------- one-shot functions

def test_avg_pool_one_shot_matches_the_primitive():
    attrs = {k: v for k, v in ATTRS.items() if k not in ("kind", "src_shape", "dtype")}
    for dtype in (np.float32, np.float64, np.float16, ml_dtypes.bfloat16):
        src = _src(ATTRS["src_shape"], dtype)
        prim = dp.Pooling(dp.PoolingDesc("AvgPool", src_shape=src.shape, dtype=dtype, **attrs))
        got = dp.avg_pool(src, **attrs)
        assert got.dtype == np.dtype(dtype)
        assert got.tobytes() == prim.execute(src).tobytes()


def test_max_pool_one_shot_matches_the_primitive():
    attrs = dict(kernel=[3], strides=[2], rounding_type="ceil", data_format="NCX")
    src = _src((2, 3, 10), np.int8)
    got = dp.max_pool(src, **attrs)
    prim = dp.Pooling(dp.PoolingDesc("MaxPool", src_shape=src.shape, dtype="s8", **attrs))
    np.testing.assert_array_equal(got, prim.execute(src))
    np.testing.assert_array_equal(got, reference.pool(src, dict(attrs, kind="MaxPool")))


def test_one_shot_avg_pool_quantized():
    attrs = dict(kernel=[2], strides=[2], data_format="NCX", src_scale=0.5, src_zero_point=10,
                 dst_scale=0.25, dst_zero_point=5)
    src = np.array([[[10, 20, 30, 40]]], np.uint8)
    np.testing.assert_array_equal(dp.avg_pool(src, **attrs), [[[15, 55]]])


# ---------------------------------------------------------------- module-level helpers

def test_get_include_is_an_existing_directory_with_headers():
    include = dp.get_include()
    assert os.path.isdir(include)
    assert any(name.endswith((".h", ".pxd")) for name in os.listdir(include))


def test_thread_count_round_trips():
    saved = dp.get_num_threads()
    try:
        dp.set_num_threads(1)
        assert dp.get_num_threads() == 1
        dp.set_num_threads(2)
        assert dp.get_num_threads() == 2
        dp.set_num_threads(0)          # back to OpenMP's default
        assert dp.get_num_threads() >= 1
    finally:
        dp.set_num_threads(saved)


def test_isa_names_the_dispatch_target():
    assert dp.isa() in ("avx512-bf16", "avx512", "avx2", "baseline")
    if os.environ.get("DNNPOOL_ISA") or not os.path.exists("/proc/cpuinfo"):
        return
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    # the AVX-512 kernels need F, BW, VL and DQ; bf16's conversions, AVX512_BF16 too
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx2", "fma", "f16c", "bmi2"} <= set(flags):
        assert dp.isa() == ("avx512-bf16" if "avx512_bf16" in flags else "avx512")
