# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Python binding of dnnpool's C core: descriptors, plans and execution.

Per call, `Pooling.execute` only checks the arrays against the plan (shape,
dtype, writeability) through numpy's C API and releases the GIL for the
kernel; everything else happened when the plan was built.
"""
from libc.stdint cimport int64_t
cimport numpy as cnp

import numbers

import numpy as np

INDEX_DTYPE = np.dtype(np.int64)   # MaxPool indices

cnp.import_array()

ABI_VERSION = DP_ABI_VERSION


cdef int raise_status(int rc, const char *msg) except -1:
    text = msg.decode("utf-8", "replace")
    if rc == DP_ETYPE:
        raise TypeError(text)
    if rc == DP_ENOMEM:
        raise MemoryError(text or "out of memory")
    raise ValueError(text)


cdef class CDesc:
    """A C ``dp_desc`` validated by ``dp_desc_init``."""

    @staticmethod
    def build(dict v, dict codes):
        """Fills a dp_desc from PoolingDesc's normalised values and validates it."""
        cdef CDesc self = CDesc.__new__(CDesc)
        cdef char msg[DP_ERRMSG_SIZE]
        cdef tuple shape = v["src_shape"]
        cdef int rank = len(shape) - 2, i
        dp_desc_defaults(&self.d, codes["kind"], rank)
        self.d.dtype = codes["dtype"]
        self.d.format = codes["data_format"]
        self.d.rounding = codes["rounding_type"]
        self.d.auto_pad = codes["auto_pad"]
        self.d.pad_divisor = codes["include_pad_divisor"]
        self.d.index_order = codes["index_order"]
        self.d.batch = shape[0]
        if self.d.format == DP_NCX:
            self.d.channels = shape[1]
            spatial = shape[2:]
        else:
            self.d.channels = shape[rank + 1]
            spatial = shape[1:rank + 1]
        for i in range(rank):
            self.d.src_spatial[i] = spatial[i]
            self.d.kernel[i] = v["kernel"][i]
            self.d.strides[i] = v["strides"][i]
            self.d.dilations[i] = v["dilations"][i]
            self.d.pads_begin[i] = v["pads_begin"][i]
            self.d.pads_end[i] = v["pads_end"][i]
        self.d.exclude_pad = bool(v["exclude_pad"])
        self.d.drop_end_pad_windows = v["drop_end_pad_windows"]
        if v["src_scale"] is not None:
            self.d.quantized = 1
            self.d.src_scale = v["src_scale"]
            self.d.dst_scale = v["dst_scale"]
            self.d.src_zero_point = v["src_zero_point"]
            self.d.dst_zero_point = v["dst_zero_point"]
        cdef int rc = dp_desc_init(&self.d, msg, DP_ERRMSG_SIZE)
        if rc != DP_OK:
            raise_status(rc, msg)
        return self

    def resolved_pads(self):
        """(pads_begin, pads_end) after auto_pad resolution."""
        cdef int i
        return (tuple(self.d.resolved_pads_begin[i] for i in range(self.d.ndims)),
                tuple(self.d.resolved_pads_end[i] for i in range(self.d.ndims)))

    def dst_shape(self):
        cdef int i
        spatial = tuple(self.d.dst_spatial[i] for i in range(self.d.ndims))
        if self.d.format == DP_NCX:
            return (self.d.batch, self.d.channels) + spatial
        return (self.d.batch,) + spatial + (self.d.channels,)


cdef inline bint strides_in_items(cnp.ndarray a, Py_ssize_t itemsize):
    cdef int i
    for i in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_STRIDES(a)[i] % itemsize != 0:
            return False
    return True


cdef inline void item_strides(cnp.ndarray a, Py_ssize_t itemsize, int64_t *out):
    cdef int i
    for i in range(cnp.PyArray_NDIM(a)):
        out[i] = cnp.PyArray_STRIDES(a)[i] // itemsize


cdef void byte_extent(cnp.ndarray a, Py_ssize_t itemsize, char **lo, char **hi):
    """[lo, hi) of the bytes an array can touch."""
    cdef char *base = <char *>cnp.PyArray_DATA(a)
    cdef Py_ssize_t low = 0, high = itemsize, step
    cdef int i
    for i in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_DIMS(a)[i] == 0:
            lo[0] = hi[0] = base
            return
        step = cnp.PyArray_STRIDES(a)[i] * (cnp.PyArray_DIMS(a)[i] - 1)
        if step < 0:
            low += step
        else:
            high += step
    lo[0] = base + low
    hi[0] = base + high


cdef bint overlaps(cnp.ndarray a, Py_ssize_t a_itemsize, cnp.ndarray b, Py_ssize_t b_itemsize):
    cdef char *alo
    cdef char *ahi
    cdef char *blo
    cdef char *bhi
    byte_extent(a, a_itemsize, &alo, &ahi)
    byte_extent(b, b_itemsize, &blo, &bhi)
    return alo < bhi and blo < ahi


cdef class Pooling:
    """A pooling primitive: planned once from a PoolingDesc, executed many times.

    ``num_threads``: 0 follows dnnpool.set_num_threads / OpenMP
    (OMP_NUM_THREADS, threadpoolctl); n > 0 uses at most n threads.
    Execution is thread-safe: one primitive may run from several Python threads.
    """

    def __cinit__(self, desc, num_threads=0):
        cdef char msg[DP_ERRMSG_SIZE]
        cdef CDesc cdesc
        cdef int i
        self.plan = NULL
        cdesc = getattr(desc, "_cdesc", None)
        if cdesc is None:
            raise TypeError(f"desc: expected a dnnpool.PoolingDesc, got {type(desc).__name__}")
        num_threads = check_thread_count("num_threads", num_threads)
        rc = dp_plan_create(&cdesc.d, &self.plan, msg, DP_ERRMSG_SIZE)
        if rc != DP_OK:
            raise_status(rc, msg)
        self.desc = desc
        self.num_threads = num_threads
        self._np_dtype = desc.np_dtype
        self._itemsize = self._np_dtype.itemsize
        self._typenum = self._np_dtype.num
        self._src_shape = tuple(desc.src_shape)
        self._dst_shape = tuple(desc.dst_shape)
        self._nd = len(self._src_shape)
        for i in range(self._nd):
            self._src_dims[i] = self._src_shape[i]
            self._dst_dims[i] = self._dst_shape[i]
        self._is_max = cdesc.d.kind == DP_MAX

    def __dealloc__(self):
        dp_plan_destroy(self.plan)

    def __repr__(self):
        return f"Pooling({self.desc!r}, num_threads={self.num_threads})"

    @property
    def kernel_name(self):
        """The kernel chosen for dense tensors, as 'isa:variant'."""
        return dp_plan_kernel_name(self.plan).decode()

    cdef int _check(self, str name, object arr, int64_t *dims, tuple shape, object dtype) except -1:
        if not cnp.PyArray_Check(arr):
            raise TypeError(f"{name}: expected a numpy.ndarray, got {type(arr).__name__}")
        cdef cnp.ndarray a = <cnp.ndarray>arr
        cdef cnp.dtype dt
        cdef int i
        cdef bint same = cnp.PyArray_NDIM(a) == self._nd
        if same:
            for i in range(self._nd):
                if cnp.PyArray_DIMS(a)[i] != dims[i]:
                    same = False
                    break
        if not same:
            raise ValueError(f"{name}: shape {arr.shape} is invalid: the descriptor expects {shape}")
        dt = a.descr
        if dt is not dtype and not cnp.PyArray_EquivTypes(dt, <cnp.dtype>dtype):
            raise TypeError(f"{name}: dtype {arr.dtype} is invalid: the descriptor expects {dtype}")
        return 0

    cdef object _writeable_target(self, str name, object arr, object src, Py_ssize_t itemsize, int typenum):
        """The array the kernel writes for the caller's output `arr`: arr itself,
        or a fresh one (copied into arr afterwards) when arr cannot be addressed
        in whole items or overlaps the input."""
        cdef cnp.ndarray o = <cnp.ndarray>arr
        if not cnp.PyArray_ISWRITEABLE(o):
            raise ValueError(f"{name}: a read-only array is invalid: the output buffer must be writeable")
        if not strides_in_items(o, itemsize) or overlaps(<cnp.ndarray>src, self._itemsize, o, itemsize):
            return self._empty(self._dst_dims, typenum)
        return o

    cdef object _empty(self, int64_t *dims, int typenum):
        return cnp.PyArray_EMPTY(self._nd, <cnp.npy_intp *>dims, typenum, 0)

    def execute(self, src, dst=None, bint with_indices=False, indices=None):
        """Pools src; returns dst (allocated if not given), or (dst, indices) with_indices.

        src: any array of the described shape and dtype (views included; never modified).
        dst: optional writeable array of the output shape and dtype, returned filled.
        with_indices: MaxPool only; int64 flat positions of the maxima in src.
        indices: optional writeable int64 array of the output shape (MaxPool
            only; implies with_indices), returned filled: a buffer reused
            across calls saves allocating one per call.
        """
        cdef cnp.ndarray s, o, target, ix = None, ix_target = None
        cdef int64_t ss[5]
        cdef int64_t ds[5]
        cdef int64_t xs[5]
        cdef int64_t *xs_ptr = NULL
        cdef int64_t *ix_ptr = NULL
        cdef int rc
        self._check("src", src, self._src_dims, self._src_shape, self._np_dtype)
        s = <cnp.ndarray>src
        if not strides_in_items(s, self._itemsize):
            s = np.ascontiguousarray(s)
        if dst is None:
            o = self._empty(self._dst_dims, self._typenum)
            target = o
        else:
            self._check("dst", dst, self._dst_dims, self._dst_shape, self._np_dtype)
            o = <cnp.ndarray>dst
            # Outputs that alias the input, or cannot be addressed in whole
            # items, are computed aside and copied in.
            target = self._writeable_target("dst", o, s, self._itemsize, self._typenum)
        if indices is not None or with_indices:
            if not self._is_max:
                name = "indices" if indices is not None else "with_indices"
                value = "an array" if indices is not None else "True"
                raise ValueError(f"{name}: {value} is invalid for AvgPool: only MaxPool returns indices")
            if indices is None:
                ix = self._empty(self._dst_dims, cnp.NPY_INT64)
                ix_target = ix
            else:
                self._check("indices", indices, self._dst_dims, self._dst_shape, INDEX_DTYPE)
                ix = <cnp.ndarray>indices
                if overlaps(o, self._itemsize, ix, 8):
                    raise ValueError("indices: an array sharing memory with dst is invalid: "
                                     "the two outputs must not overlap")
                ix_target = self._writeable_target("indices", ix, s, 8, cnp.NPY_INT64)
            ix_ptr = <int64_t *>cnp.PyArray_DATA(ix_target)
            item_strides(ix_target, 8, xs)
            xs_ptr = xs
        item_strides(s, self._itemsize, ss)
        item_strides(target, self._itemsize, ds)
        cdef const void *sp = cnp.PyArray_DATA(s)
        cdef void *dp = cnp.PyArray_DATA(target)
        with nogil:
            rc = dp_execute(self.plan, sp, ss, dp, ds, ix_ptr, xs_ptr, self.num_threads)
        if rc != DP_OK:
            raise_status(rc, b"execution failed")
        if target is not o:
            np.copyto(o, target)
        if ix is None:
            return o
        if ix_target is not ix:
            np.copyto(ix, ix_target)
        return o, ix


def isa():
    """Instruction set the kernels use on this CPU: 'avx512-bf16' (AVX-512 whose
    bf16 kernels round with AVX512_BF16's conversions), 'avx512', 'avx2' or
    'baseline' ('avx512-emulated' when DNNPOOL_ISA asks for the AVX-512 kernels
    on AVX2)."""
    return dp_isa().decode()


def get_num_threads():
    """Threads a primitive with num_threads=0 uses for large problems."""
    return dp_get_max_threads()


def set_num_threads(n):
    """Sets dnnpool's default thread count; 0 returns to OpenMP's (OMP_NUM_THREADS, threadpoolctl)."""
    dp_set_num_threads(check_thread_count("n", n))


def check_thread_count(str name, value):
    """A thread count: an int, 0 (default) or positive, below 2**15."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: value {value!r} is invalid: expected an integer thread count")
    if not 0 <= value <= 32767:
        raise ValueError(f"{name}: value {value} is invalid: a thread count must be 0 (default) or in [1, 32767]")
    return int(value)


# Public C-API: the dp_api table and its capsule `_C_API` (see csrc/dnnpool_api.h).
include "_capi_table.pxi"
