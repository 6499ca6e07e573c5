# cython: language_level=3
"""Pooling many tensors at C level, in parallel, through dnnpool's C-API.

Everything inside the `nogil` blocks is plain C: descriptors are filled and
validated, plans built and executed from the threads of our own `prange`.
"""
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uintptr_t
from libc.stdlib cimport calloc, free

from dnnpool.capi cimport (
    DP_ABI_VERSION, DP_ERRMSG_SIZE, DP_MAX_SPATIAL, DP_OK, DP_AVG, DP_MAX, DP_NCX, DP_NXC,
    DP_FLOOR, DP_CEIL, DP_PAD_NONE, DP_PAD_SAME_UPPER, DP_PAD_SAME_LOWER, DP_PAD_VALID,
    DP_F32, DP_F64, DP_F16, DP_BF16, DP_S8, DP_U8,
    dp_desc, dp_plan, dp_api_ptr, import_dnnpool, dp_check,
    dp_desc_defaults, dp_desc_init, dp_plan_create, dp_plan_destroy, dp_plan_desc,
    dp_execute, dp_dtype_size, dp_isa, dp_desc_of, dp_plan_of, dp_desc_to_python,
)

import numpy as np

# Fetch dnnpool's function table once, with the GIL, before any call below.
import_dnnpool()

_KINDS = {"AvgPool": DP_AVG, "MaxPool": DP_MAX}
_FORMATS = {"NCX": DP_NCX, "NXC": DP_NXC}
_ROUNDINGS = {"floor": DP_FLOOR, "ceil": DP_CEIL}
_AUTO_PADS = {"none": DP_PAD_NONE, "same_upper": DP_PAD_SAME_UPPER,
              "same_lower": DP_PAD_SAME_LOWER, "valid": DP_PAD_VALID}
_DTYPES = {"float32": DP_F32, "float64": DP_F64, "float16": DP_F16, "bfloat16": DP_BF16,
           "int8": DP_S8, "uint8": DP_U8}


def _code(table, name, value):
    try:
        return table[value]
    except KeyError:
        raise ValueError(f"{name}: {value!r} is not one of {sorted(table)}") from None


cdef int _fill(dp_desc *d, str kind, tuple src_shape, dtype, dict attrs) except -1:
    """Python arguments -> dp_desc input fields (dp_desc_init validates them)."""
    cdef int nd = len(src_shape) - 2
    cdef int i
    if not 1 <= nd <= DP_MAX_SPATIAL:
        raise ValueError(f"src_shape: {src_shape} must have 3 to 5 dimensions")
    dp_desc_defaults(d, _code(_KINDS, "kind", kind), nd)
    # An int dtype is a raw dp_dtype code (lets the tests reach DP_ETYPE).
    d.dtype = dtype if isinstance(dtype, int) else _code(_DTYPES, "dtype", np.dtype(dtype).name)
    fmt = attrs.get("data_format", "NXC")
    d.format = _code(_FORMATS, "data_format", fmt)
    d.batch = src_shape[0]
    d.channels = src_shape[1] if fmt == "NCX" else src_shape[-1]
    spatial = src_shape[2:] if fmt == "NCX" else src_shape[1:-1]
    ones, zeros = (1,) * nd, (0,) * nd
    for i in range(nd):
        d.src_spatial[i] = spatial[i]
        d.kernel[i] = attrs["kernel"][i]
        d.strides[i] = (attrs.get("strides") or ones)[i]
        d.dilations[i] = (attrs.get("dilations") or ones)[i]
        d.pads_begin[i] = (attrs.get("pads_begin") or zeros)[i]
        d.pads_end[i] = (attrs.get("pads_end") or zeros)[i]
    d.exclude_pad = bool(attrs.get("exclude_pad", False))
    d.rounding = _code(_ROUNDINGS, "rounding_type", attrs.get("rounding_type", "floor"))
    d.auto_pad = _code(_AUTO_PADS, "auto_pad", attrs.get("auto_pad", "none").lower())
    return 0


cdef tuple _shape(const dp_desc *d, const int64_t *spatial_dims):
    """A tensor's logical shape (data_format order) from the descriptor."""
    spatial = tuple(spatial_dims[i] for i in range(d.ndims))
    if d.format == DP_NCX:
        return (d.batch, d.channels) + spatial
    return (d.batch,) + spatial + (d.channels,)


cdef inline void *_data(arr):
    return <void *><uintptr_t>arr.__array_interface__["data"][0]


def try_describe(kind, src_shape, dtype="float32", **attrs):
    """(status, message) of dp_desc_init: the C error path, without raising."""
    cdef dp_desc d
    cdef char msg[DP_ERRMSG_SIZE]
    msg[0] = 0
    _fill(&d, kind, tuple(src_shape), dtype, attrs)
    with nogil:
        status = dp_desc_init(&d, msg, DP_ERRMSG_SIZE)
    return status, msg.decode("utf-8", "replace")


def describe(kind, src_shape, dtype="float32", **attrs):
    """Describe at C level, then hand the struct back as a dnnpool.PoolingDesc."""
    cdef dp_desc d
    cdef char msg[DP_ERRMSG_SIZE]
    _fill(&d, kind, tuple(src_shape), dtype, attrs)
    dp_check(dp_desc_init(&d, msg, DP_ERRMSG_SIZE), msg)
    return dp_desc_to_python(&d)


def pool_batch(srcs, kind, with_indices=False, **attrs):
    """Pool same-shape tensors with ONE shared plan, executed from a prange.

    Returns the list of outputs (and of int64 indices if with_indices)."""
    cdef dp_desc d
    cdef dp_plan *plan = NULL
    cdef char msg[DP_ERRMSG_SIZE]
    srcs = [np.ascontiguousarray(s) for s in srcs]
    _fill(&d, kind, srcs[0].shape, srcs[0].dtype, attrs)
    dp_check(dp_desc_init(&d, msg, DP_ERRMSG_SIZE), msg)
    dp_check(dp_plan_create(&d, &plan, msg, DP_ERRMSG_SIZE), msg)
    try:
        return _run_plan(plan, srcs, with_indices)
    finally:
        dp_plan_destroy(plan)


def pool_with(obj, srcs, with_indices=False):
    """Pool with a descriptor or primitive made in Python.

    obj is a dnnpool.Pooling (its own plan is executed) or a dnnpool.PoolingDesc
    (a private plan is built from its C struct).  srcs may be strided views."""
    cdef dp_plan *own = NULL
    cdef const dp_plan *plan
    cdef char msg[DP_ERRMSG_SIZE]
    if hasattr(obj, "execute"):
        plan = dp_plan_of(obj)      # borrowed: obj stays referenced until we return
    else:
        dp_check(dp_plan_create(dp_desc_of(obj), &own, msg, DP_ERRMSG_SIZE), msg)
        plan = own
    try:
        return _run_plan(plan, list(srcs), with_indices)
    finally:
        if own != NULL:
            dp_plan_destroy(own)


cdef list _run_plan(const dp_plan *plan, list srcs, bint with_indices):
    """Execute one plan over many tensors in parallel: the shared-plan case."""
    cdef const dp_desc *d = dp_plan_desc(plan)
    cdef Py_ssize_t n = len(srcs), i, j
    cdef int rank = d.ndims + 2
    src_shape, shape = _shape(d, d.src_spatial), _shape(d, d.dst_spatial)
    itemsize = dp_dtype_size(d.dtype)
    dsts = [np.empty(shape, srcs[0].dtype) for _ in range(n)]
    idxs = [np.empty(shape, np.int64) for _ in range(n)] if with_indices else None
    # Per tensor: base pointers and element strides (data_format order).
    cdef void **src_p = <void **>calloc(n, sizeof(void *))
    cdef void **dst_p = <void **>calloc(n, sizeof(void *))
    cdef int64_t **idx_p = <int64_t **>calloc(n, sizeof(int64_t *))
    cdef int64_t *strides = <int64_t *>calloc(n * rank, sizeof(int64_t))
    cdef int *status = <int *>calloc(n, sizeof(int))
    try:
        if not (src_p and dst_p and idx_p and strides and status):
            raise MemoryError()
        for i in range(n):
            s = srcs[i]
            if s.shape != src_shape or _code(_DTYPES, "dtype", s.dtype.name) != d.dtype:
                raise ValueError(f"srcs[{i}]: shape {s.shape} / dtype {s.dtype} do not match "
                                 f"the plan's src shape {src_shape}")
            src_p[i] = _data(s)
            dst_p[i] = _data(dsts[i])
            idx_p[i] = <int64_t *>_data(idxs[i]) if with_indices else NULL
            for j in range(rank):
                strides[i * rank + j] = s.strides[j] // itemsize
        with nogil:
            # One OpenMP thread per tensor; dnnpool itself runs single-threaded
            # inside (nthreads=1) so the two levels do not oversubscribe.
            for i in prange(n, schedule="dynamic"):
                status[i] = dp_execute(plan, src_p[i], &strides[i * rank], dst_p[i], NULL,
                                       idx_p[i], NULL, 1)
        for i in range(n):
            dp_check(status[i], b"dp_execute failed (indices asked of AvgPool?)")
    finally:
        free(src_p); free(dst_p); free(idx_p); free(strides); free(status)
    return list(zip(dsts, idxs)) if with_indices else dsts


def pool_each(srcs, kind, **attrs):
    """Pool tensors of DIFFERENT shapes: each describes, plans and executes on its
    own inside the nogil prange (a plan per tensor)."""
    cdef Py_ssize_t n = len(srcs), i
    cdef dp_desc *descs = <dp_desc *>calloc(n, sizeof(dp_desc))
    cdef char *msgs = <char *>calloc(n, DP_ERRMSG_SIZE)
    cdef int *status = <int *>calloc(n, sizeof(int))
    cdef void **src_p = <void **>calloc(n, sizeof(void *))
    cdef void **dst_p = <void **>calloc(n, sizeof(void *))
    cdef dp_plan *plan
    srcs = [np.ascontiguousarray(s) for s in srcs]
    try:
        if not (descs and msgs and status and src_p and dst_p):
            raise MemoryError()
        for i in range(n):      # Python values -> C structs (with the GIL)
            _fill(&descs[i], kind, srcs[i].shape, srcs[i].dtype, attrs)
            src_p[i] = _data(srcs[i])
        with nogil:             # validate and infer every output shape
            for i in prange(n):
                status[i] = dp_desc_init(&descs[i], &msgs[i * DP_ERRMSG_SIZE], DP_ERRMSG_SIZE)
        for i in range(n):
            dp_check(status[i], &msgs[i * DP_ERRMSG_SIZE])
        dsts = [np.empty(_shape(&descs[i], descs[i].dst_spatial), srcs[i].dtype) for i in range(n)]
        for i in range(n):
            dst_p[i] = _data(dsts[i])
        with nogil:             # a private plan per tensor, built and used in-thread
            for i in prange(n, schedule="dynamic"):
                plan = NULL
                status[i] = dp_plan_create(&descs[i], &plan, &msgs[i * DP_ERRMSG_SIZE],
                                           DP_ERRMSG_SIZE)
                if status[i] == DP_OK:
                    status[i] = dp_execute(plan, src_p[i], NULL, dst_p[i], NULL, NULL, NULL, 1)
                    dp_plan_destroy(plan)
        for i in range(n):
            dp_check(status[i], &msgs[i * DP_ERRMSG_SIZE])
    finally:
        free(descs); free(msgs); free(status); free(src_p); free(dst_p)
    return dsts


def round_trip(pd):
    """PoolingDesc -> its C struct -> a new PoolingDesc (must compare equal)."""
    return dp_desc_to_python(dp_desc_of(pd))


def abi_info():
    """(ABI version compiled against, ABI version of the loaded dnnpool, ISA)."""
    return DP_ABI_VERSION, dp_api_ptr.abi_version, dp_isa().decode()
