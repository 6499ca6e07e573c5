"""dnnpool reproduces every worked case of spec/conformance/*.json, in both layouts."""

import builtins

import numpy as np
import pytest

import dnnpool as dp
import reference


def _descriptor(case):
    return dp.PoolingDesc(src_shape=case.src_shape, dtype=case.dtype, **case.attrs)


def test_dnnpool_reproduces_conformance_case(conformance_case):
    case = conformance_case
    if case.raises:
        with pytest.raises(getattr(builtins, case.raises)):
            dp.Pooling(_descriptor(case)).execute(case.src)
        return
    pd = _descriptor(case)
    assert tuple(pd.dst_shape) == case.dst.shape
    if case.resolved_pads:
        assert (tuple(pd.pads_begin), tuple(pd.pads_end)) == case.resolved_pads
    prim = dp.Pooling(pd)
    if case.indices is None:
        dst = prim.execute(case.src)
    else:
        dst, indices = prim.execute(case.src, with_indices=True)
        assert indices.dtype == np.int64
        np.testing.assert_array_equal(indices, case.indices, err_msg=case.name)
    assert dst.dtype == case.src.dtype and dst.shape == case.dst.shape
    reference.assert_within_ulp(dst, case.dst, case.dtype, case.tolerance_ulp, case.name)
