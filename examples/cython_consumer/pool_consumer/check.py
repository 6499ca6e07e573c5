"""Self-check: the C-level paths of pool_consumer agree exactly with dnnpool's
Python API (same kernels underneath, so results must be bit-identical)."""
import numpy as np

import dnnpool as dp
from pool_consumer import _batch, _cpool

AVG_2D = dict(kernel=(3, 3), strides=(2, 2), pads_begin=(1, 1), pads_end=(1, 1),
              exclude_pad=False, data_format="NXC")
AVG_CEIL_1D = dict(kernel=(3,), strides=(2,), pads_begin=(1,), pads_end=(0,),
                   exclude_pad=True, rounding_type="ceil", data_format="NCX")
MAX_2D = dict(kernel=(2, 3), strides=(2, 1), dilations=(1, 2), auto_pad="same_upper",
              data_format="NCX")


def _same(got, want, what):
    if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(
            got, want, equal_nan=True):
        raise AssertionError(f"{what}: C-level result differs from dnnpool's Python API\n"
                             f"got {got.dtype}{got.shape}\n{got}\nwant {want.dtype}{want.shape}\n{want}")


def _tensors(rng, shapes, dtype):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def check_shared_plan(rng):
    srcs = _tensors(rng, [(2, 9, 7, 3)] * 6, np.float32)
    for i, got in enumerate(_batch.pool_batch(srcs, "AvgPool", **AVG_2D)):
        _same(got, dp.avg_pool(srcs[i], **AVG_2D), f"pool_batch AvgPool #{i}")
    srcs = _tensors(rng, [(1, 4, 8, 9)] * 5, np.float16)
    prim = dp.Pooling(dp.PoolingDesc("MaxPool", srcs[0].shape, dtype=np.float16, **MAX_2D))
    for i, (got, got_idx) in enumerate(_batch.pool_batch(srcs, "MaxPool", True, **MAX_2D)):
        want, want_idx = prim.execute(srcs[i], with_indices=True)
        _same(got, want, f"pool_batch MaxPool #{i}")
        _same(got_idx, want_idx, f"pool_batch MaxPool indices #{i}")
        _same(got, dp.max_pool(srcs[i], **MAX_2D), f"pool_batch vs max_pool #{i}")
    return 11


def check_plan_per_tensor(rng):
    srcs = _tensors(rng, [(1, 2, 5), (3, 1, 11), (2, 4, 2), (1, 3, 16)], np.float64)
    for i, got in enumerate(_batch.pool_each(srcs, "AvgPool", **AVG_CEIL_1D)):
        _same(got, dp.avg_pool(srcs[i], **AVG_CEIL_1D), f"pool_each AvgPool #{i}")
    return len(srcs)


def check_python_objects(rng):
    """Python-made Pooling / PoolingDesc executed at C level, on strided views."""
    base = _tensors(rng, [(3, 6, 10, 12)] * 4, np.float32)
    views = [b[:, ::2, 1:, ::-1] for b in base]           # non-contiguous, negative stride
    pd = dp.PoolingDesc("MaxPool", views[0].shape, kernel=(3, 2), strides=(1, 2),
                        pads_begin=(1, 0), pads_end=(1, 1), data_format="NCX")
    prim = dp.Pooling(pd)
    for source in (prim, pd):
        for i, (got, got_idx) in enumerate(_batch.pool_with(source, views, with_indices=True)):
            want, want_idx = prim.execute(np.ascontiguousarray(views[i]), with_indices=True)
            _same(got, want, f"pool_with {type(source).__name__} #{i}")
            _same(got_idx, want_idx, f"pool_with {type(source).__name__} indices #{i}")
    return 2 * len(views)


def check_hand_over():
    """Python -> C -> Python descriptors compare equal; C-made ones match Python-made."""
    descs = [dp.PoolingDesc("AvgPool", (2, 8, 8, 3), kernel=(2, 2), **{
                 k: v for k, v in AVG_2D.items() if k != "kernel"}),
             dp.PoolingDesc("MaxPool", (1, 4, 8, 9), **MAX_2D),
             dp.PoolingDesc("AvgPool", (1, 2, 5), dtype="f64", **AVG_CEIL_1D)]
    for pd in descs:
        if _batch.round_trip(pd) != pd:
            raise AssertionError(f"round trip changed {pd}: got {_batch.round_trip(pd)}")
    made_in_c = _batch.describe("MaxPool", (1, 4, 8, 9), **MAX_2D)
    if made_in_c != descs[1] or made_in_c.dst_shape != descs[1].dst_shape:
        raise AssertionError(f"describe() gave {made_in_c}, want {descs[1]}")
    return len(descs) + 1


def check_plain_c(rng):
    """The plain-C extension: a Python-made Pooling executed from C, a C-made descriptor."""
    src = rng.standard_normal((2, 3, 17)).astype(np.float32)
    pd = dp.PoolingDesc("AvgPool", src.shape, kernel=(4,), strides=(3,), data_format="NCX")
    prim = dp.Pooling(pd)
    dst = np.empty(pd.dst_shape, np.float32)
    _cpool.execute(prim, src, dst)
    _same(dst, prim.execute(src), "plain C execute")
    made_in_c = _cpool.describe_1d(0, 2, 3, 17, 4, 3)            # 0 == DP_AVG
    if made_in_c != pd:
        raise AssertionError(f"describe_1d gave {made_in_c}, want {pd}")
    return 2


def check_errors():
    """dp_desc_init reports a bad descriptor as (code, message), never by crashing."""
    status, message = _batch.try_describe("AvgPool", (1, 8, 8, 1), kernel=(0, 3))
    if status != 1 or "kernel" not in message:      # 1 == DP_EVALUE
        raise AssertionError(f"kernel=(0, 3): got status {status}, message {message!r}")
    status, message = _batch.try_describe("MaxPool", (1, 8, 8, 1), dtype=42, kernel=(2, 2))
    if status != 2 or "42" not in message:          # 2 == DP_ETYPE
        raise AssertionError(f"dtype code 42: got status {status}, message {message!r}")
    try:
        _batch.describe("AvgPool", (1, 8, 8, 1), kernel=(0, 3))
    except ValueError as exc:
        if "kernel" not in str(exc):
            raise AssertionError(f"ValueError does not name the attribute: {exc}") from None
    else:
        raise AssertionError("describe(kernel=(0, 3)) did not raise ValueError")
    return 3


def check(seed=0):
    """Run every check; returns the number of comparisons, raises AssertionError."""
    rng = np.random.default_rng(seed)
    compiled, loaded, _ = _batch.abi_info()
    if compiled != loaded:
        raise AssertionError(f"ABI {compiled} compiled, {loaded} loaded")
    return (check_shared_plan(rng) + check_plan_per_tensor(rng) + check_python_objects(rng)
            + check_hand_over() + check_plain_c(rng) + check_errors())


def main():
    compiled, _, isa = _batch.abi_info()
    count = check()
    print(f"pool_consumer: {count} checks passed (dnnpool C-API ABI {compiled}, ISA {isa})")
