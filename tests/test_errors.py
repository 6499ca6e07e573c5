"""Bad input gets the right exception class and a message that names the attribute and
the offending value (API.md: ValueError for bad values, shapes and combinations,
TypeError for wrong types and unsupported dtypes)."""

import numpy as np
import pytest

import dnnpool as dp

BASE = dict(kind="AvgPool", src_shape=(1, 2, 6, 6), dtype="f32", kernel=[2, 2], data_format="NCX")
MAX_BASE = dict(BASE, kind="MaxPool")
QUANT = dict(src_scale=0.5, src_zero_point=3, dst_scale=0.25, dst_zero_point=1)


def assert_raises_naming(exc_type, call, *fragments):
    """call() raises exc_type; each fragment (a string, or a tuple of acceptable
    spellings) appears in the message."""
    with pytest.raises(exc_type) as info:
        call()
    message = str(info.value)
    for fragment in fragments:
        options = fragment if isinstance(fragment, tuple) else (fragment,)
        assert any(o in message for o in options), (
            f"message {message!r} does not mention {' or '.join(map(repr, options))}")


# ---------------------------------------------------------------- descriptor attributes

DESCRIPTOR_ERRORS = [
    # (id, base, overrides, exception, fragments the message must contain)
    ("unknown kind", BASE, dict(kind="SumPool"), ValueError, ["kind", "SumPool"]),
    ("kind not a string", BASE, dict(kind=3), TypeError, ["kind", "3"]),
    ("unknown dtype name", BASE, dict(dtype="q16"), TypeError, ["dtype", "q16"]),
    ("unsupported numpy dtype", BASE, dict(dtype=np.int32), TypeError, ["dtype", "int32"]),
    ("complex dtype", MAX_BASE, dict(dtype=np.complex64), TypeError, ["dtype", "complex64"]),
    ("s8 AvgPool without quantization", BASE, dict(dtype="s8"), (TypeError, ValueError),
     ["s8", ("scale", "quantiz")]),
    ("u8 AvgPool with only src_scale", BASE, dict(dtype="u8", src_scale=0.5), ValueError,
     ["dst_scale"]),
    ("quantization on f32 AvgPool", BASE, dict(QUANT), (TypeError, ValueError),
     ["f32", ("scale", "quantiz")]),
    ("quantization on MaxPool", MAX_BASE, dict(QUANT, dtype="u8"), ValueError,
     [("src_scale", "quantiz"), "MaxPool"]),
    ("zero src_scale", BASE, dict(QUANT, dtype="u8", src_scale=0.0), ValueError, ["src_scale", "0"]),
    ("scale ratio beyond float32", BASE, dict(QUANT, dtype="u8", src_scale=1e30, dst_scale=1e-30), ValueError,
     ["src_scale", "1e+30", "dst_scale", "overflows"]),
    ("negative dst_scale", BASE, dict(QUANT, dtype="u8", dst_scale=-0.5), ValueError,
     ["dst_scale", "-0.5"]),
    ("NaN src_scale", BASE, dict(QUANT, dtype="s8", src_scale=float("nan")), ValueError,
     ["src_scale", "nan"]),
    ("u8 zero point above 255", BASE, dict(QUANT, dtype="u8", src_zero_point=300), ValueError,
     ["src_zero_point", "300"]),
    ("s8 zero point below -128", BASE, dict(QUANT, dtype="s8", dst_zero_point=-129), ValueError,
     ["dst_zero_point", "-129"]),
    ("float zero point", BASE, dict(QUANT, dtype="s8", src_zero_point=1.5), TypeError,
     ["src_zero_point", "1.5"]),
    ("kernel 0", BASE, dict(kernel=[2, 0]), ValueError, ["kernel", "0"]),
    ("negative kernel", BASE, dict(kernel=[-3, 2]), ValueError, ["kernel", "-3"]),
    ("kernel too long", BASE, dict(kernel=[2, 2, 2]), ValueError, ["kernel", ("[2, 2, 2]", "(2, 2, 2)")]),
    ("kernel too short", BASE, dict(kernel=[2]), ValueError, ["kernel", ("[2]", "(2,)")]),
    ("kernel missing", BASE, dict(kernel=None), (TypeError, ValueError), ["kernel"]),
    ("kernel float entry", BASE, dict(kernel=[2.5, 2]), TypeError, ["kernel", "2.5"]),
    ("kernel bool entry", BASE, dict(kernel=[True, 2]), TypeError, ["kernel", "True"]),
    ("kernel string entry", BASE, dict(kernel=["2", 2]), TypeError, ["kernel", "'2'"]),
    ("kernel a string", BASE, dict(kernel="22"), TypeError, ["kernel", "22"]),
    ("kernel larger than padded input", BASE, dict(kernel=[7, 2]), ValueError, ["kernel", "7"]),
    ("valid kernel larger than input", BASE, dict(kernel=[2, 7], pads_end=[3, 3], auto_pad="valid"),
     ValueError, ["kernel", "7"]),
    ("dilated kernel larger than input", MAX_BASE, dict(kernel=[3, 2], dilations=[3, 1]), ValueError,
     [("kernel", "dilations"), "3"]),
    ("stride 0", BASE, dict(strides=[0, 1]), ValueError, ["strides", "0"]),
    ("negative stride", BASE, dict(strides=[1, -2]), ValueError, ["strides", "-2"]),
    ("strides too long", BASE, dict(strides=[1, 1, 1]), ValueError, ["strides", ("[1, 1, 1]", "(1, 1, 1)")]),
    ("float stride", BASE, dict(strides=[1.0, 1]), TypeError, ["strides", "1.0"]),
    ("dilation 0", MAX_BASE, dict(dilations=[0, 1]), ValueError, ["dilations", "0"]),
    ("negative dilation", BASE, dict(dilations=[1, -1]), ValueError, ["dilations", "-1"]),
    ("negative pads_begin", BASE, dict(pads_begin=[-1, 0]), ValueError, ["pads_begin", "-1"]),
    ("negative pads_end", MAX_BASE, dict(pads_end=[0, -2]), ValueError, ["pads_end", "-2"]),
    ("pads_end too short", BASE, dict(pads_end=[1]), ValueError, ["pads_end", ("[1]", "(1,)")]),
    ("bool pads_begin entry", BASE, dict(pads_begin=[False, 0]), TypeError, ["pads_begin", "False"]),
    ("unknown rounding_type", BASE, dict(rounding_type="cell"), ValueError, ["rounding_type", "cell"]),
    ("unknown auto_pad", BASE, dict(auto_pad="same"), ValueError, ["auto_pad", "same"]),
    ("unknown data_format", BASE, dict(data_format="NHWC"), ValueError, ["data_format", "NHWC"]),
    ("unknown include_pad_divisor", BASE, dict(include_pad_divisor="window"), ValueError,
     ["include_pad_divisor", "window"]),
    ("unknown index_order", MAX_BASE, dict(index_order="diagonal"), ValueError,
     ["index_order", "diagonal"]),
    ("index_order on AvgPool", BASE, dict(index_order="column_major"), ValueError,
     ["index_order", "AvgPool"]),
    ("include_pad_divisor on MaxPool", MAX_BASE, dict(include_pad_divisor="padded_extent"), ValueError,
     ["include_pad_divisor", "MaxPool"]),
    ("exclude_pad True on MaxPool", MAX_BASE, dict(exclude_pad=True), ValueError,
     ["exclude_pad", "MaxPool"]),
    ("exclude_pad False on MaxPool", MAX_BASE, dict(exclude_pad=False), ValueError,
     ["exclude_pad", "MaxPool"]),
    ("exclude_pad a string", BASE, dict(exclude_pad="yes"), TypeError, ["exclude_pad", "yes"]),
    ("drop_end_pad_windows a string", BASE, dict(drop_end_pad_windows="no"), TypeError,
     ["drop_end_pad_windows", "no"]),
    ("src_shape rank 2", BASE, dict(src_shape=(1, 2), kernel=[1]), ValueError,
     ["src_shape", "(1, 2)"]),
    ("src_shape rank 6", BASE, dict(src_shape=(1, 2, 3, 3, 3, 3), kernel=[1, 1, 1, 1]), ValueError,
     ["src_shape", "6"]),
    ("negative src_shape entry", BASE, dict(src_shape=(1, 2, -4, 6)), ValueError, ["src_shape", "-4"]),
    ("zero-length spatial axis", BASE, dict(src_shape=(1, 2, 0, 6), kernel=[1, 1]), ValueError,
     [("src_shape", "kernel"), "0"]),
    ("float src_shape entry", BASE, dict(src_shape=(1, 2, 6.0, 6)), TypeError, ["src_shape", "6.0"]),
    ("src_shape a string", BASE, dict(src_shape="1x2x6x6"), TypeError, ["src_shape", "1x2x6x6"]),
    # the spec's own refusal: an exclude_pad average whose window holds no input element
    ("exclude_pad window wholly in pads_end", BASE,
     dict(src_shape=(1, 1, 2), kernel=[1], pads_end=[2], exclude_pad=True), ValueError,
     ["exclude_pad", "axis"]),
    ("exclude_pad ceil window in the end pad", BASE,
     dict(src_shape=(1, 1, 3), kernel=[2], strides=[2], pads_begin=[1], pads_end=[1],
          rounding_type="ceil", exclude_pad=True), ValueError, ["exclude_pad", "axis"]),
    ("exclude_pad dilated window missing the input", BASE,
     dict(src_shape=(1, 1, 1), kernel=[2], dilations=[2], pads_begin=[1], pads_end=[1],
          exclude_pad=True), ValueError, ["exclude_pad", "axis"]),
]


@pytest.mark.parametrize("base, overrides, exc, fragments",
                         [case[1:] for case in DESCRIPTOR_ERRORS],
                         ids=[case[0] for case in DESCRIPTOR_ERRORS])
def test_bad_descriptor_is_refused_with_a_clear_message(base, overrides, exc, fragments):
    def build():
        dp.Pooling(dp.PoolingDesc(**dict(base, **overrides)))
    assert_raises_naming(exc, build, *fragments)


# ---------------------------------------------------------------- primitive and threads

def test_pooling_needs_a_descriptor():
    assert_raises_naming(TypeError, lambda: dp.Pooling(dict(BASE)), "PoolingDesc")


def test_negative_num_threads():
    pd = dp.PoolingDesc(**BASE)
    assert_raises_naming(ValueError, lambda: dp.Pooling(pd, num_threads=-1), "num_threads", "-1")


def test_num_threads_of_the_wrong_type():
    pd = dp.PoolingDesc(**BASE)
    assert_raises_naming(TypeError, lambda: dp.Pooling(pd, num_threads="2"), "num_threads")


def test_negative_set_num_threads():
    saved = dp.get_num_threads()
    try:       # 0 is allowed: it returns to OpenMP's default
        assert_raises_naming(ValueError, lambda: dp.set_num_threads(-3), "thread", "-3")
    finally:
        dp.set_num_threads(saved)


# ---------------------------------------------------------------- execute

@pytest.fixture
def avg():
    return dp.Pooling(dp.PoolingDesc(**BASE))


@pytest.fixture
def src():
    return np.ones((1, 2, 6, 6), np.float32)


def test_src_of_the_wrong_shape(avg):
    bad = np.ones((1, 2, 6, 5), np.float32)
    assert_raises_naming(ValueError, lambda: avg.execute(bad), "src", "(1, 2, 6, 5)")


def test_src_of_the_wrong_rank(avg):
    bad = np.ones((2, 6, 6), np.float32)
    assert_raises_naming(ValueError, lambda: avg.execute(bad), "src", "(2, 6, 6)")


def test_src_in_the_other_layout(avg):
    bad = np.ones((1, 6, 6, 2), np.float32)      # NXC data for an NCX descriptor
    assert_raises_naming(ValueError, lambda: avg.execute(bad), "src", "(1, 6, 6, 2)")


def test_src_of_the_wrong_dtype(avg):
    bad = np.ones((1, 2, 6, 6), np.float64)
    assert_raises_naming(TypeError, lambda: avg.execute(bad), "src", "float64")


def test_src_not_an_array(avg):
    assert_raises_naming(TypeError, lambda: avg.execute([[1.0]]), "src", "list")


def test_read_only_dst(avg, src):
    out = np.empty((1, 2, 5, 5), np.float32)
    out.flags.writeable = False
    assert_raises_naming(ValueError, lambda: avg.execute(src, dst=out), "dst",
                         ("read-only", "writeable", "writable"))


def test_dst_of_the_wrong_shape(avg, src):
    out = np.empty((1, 2, 6, 6), np.float32)
    assert_raises_naming(ValueError, lambda: avg.execute(src, dst=out), "dst", "(1, 2, 6, 6)")


def test_dst_of_the_wrong_dtype(avg, src):
    out = np.empty((1, 2, 5, 5), np.float16)
    assert_raises_naming(TypeError, lambda: avg.execute(src, dst=out), "dst", "float16")


def test_indices_of_an_average(avg, src):
    assert_raises_naming(ValueError, lambda: avg.execute(src, with_indices=True),
                         "with_indices", "AvgPool")


def test_an_indices_buffer_for_an_average(avg, src):
    idx = np.empty((1, 2, 5, 5), np.int64)
    assert_raises_naming(ValueError, lambda: avg.execute(src, indices=idx), "indices", "AvgPool")


@pytest.fixture
def maxpool():
    return dp.Pooling(dp.PoolingDesc(**MAX_BASE))


@pytest.mark.parametrize("bad, error, words", [
    (np.empty((1, 2, 5, 5), np.int32), TypeError, ["indices", "int32", "int64"]),
    (np.empty((1, 2, 5, 5), np.float64), TypeError, ["indices", "float64", "int64"]),
    (np.empty((1, 2, 6, 5), np.int64), ValueError, ["indices", "(1, 2, 6, 5)", "(1, 2, 5, 5)"]),
    ([[0]], TypeError, ["indices", "list"]),
])
def test_an_indices_buffer_of_the_wrong_kind(maxpool, src, bad, error, words):
    assert_raises_naming(error, lambda: maxpool.execute(src, indices=bad), *words)


def test_a_read_only_indices_buffer(maxpool, src):
    idx = np.zeros((1, 2, 5, 5), np.int64)
    idx.flags.writeable = False
    assert_raises_naming(ValueError, lambda: maxpool.execute(src, indices=idx), "indices",
                         ("read-only", "writeable", "writable"))
    assert not idx.any()


def test_an_indices_buffer_sharing_memory_with_dst(maxpool, src):
    both = np.zeros((1, 2, 5, 5), np.int64)
    dst = both.view(np.float32)[..., ::2]   # dst's shape and dtype, inside the same bytes
    assert_raises_naming(ValueError, lambda: maxpool.execute(src, dst=dst, indices=both), "indices", "dst",
                         "overlap")
    assert not both.any()


def test_indices_of_a_quantized_average():
    prim = dp.Pooling(dp.PoolingDesc(**dict(BASE, **QUANT, dtype="u8")))
    src = np.ones((1, 2, 6, 6), np.uint8)
    assert_raises_naming(ValueError, lambda: prim.execute(src, with_indices=True), "with_indices")


# ---------------------------------------------------------------- one-shot functions

def test_one_shot_rejects_an_unknown_attribute(src):
    assert_raises_naming(TypeError, lambda: dp.avg_pool(src, kernel=[2, 2], kernal=[2, 2]), "kernal")


def test_one_shot_rejects_a_non_array(src):
    assert_raises_naming(TypeError, lambda: dp.max_pool([[[1.0, 2.0]]], kernel=[1]), "src")


def test_one_shot_reports_attribute_errors(src):
    assert_raises_naming(ValueError, lambda: dp.max_pool(src, kernel=[2, 2], strides=[0, 1],
                                                         data_format="NCX"), "strides", "0")
