# cython: language_level=3
# Declarations of dnnpool's C interface (csrc/dnnpool.h) and of the extension
# types that carry it, so other Cython modules can cimport them.
from libc.stdint cimport int32_t, int64_t

# The constants and structs are declared once, in the public dnnpool/capi.pxd.
from dnnpool.capi cimport (
    DP_ABI_VERSION, DP_MAX_SPATIAL, DP_ERRMSG_SIZE, DP_AVG, DP_MAX,
    DP_F32, DP_F64, DP_F16, DP_BF16, DP_S8, DP_U8, DP_NCX, DP_NXC, DP_FLOOR, DP_CEIL,
    DP_PAD_NONE, DP_PAD_SAME_UPPER, DP_PAD_SAME_LOWER, DP_PAD_VALID,
    DP_DIV_KERNEL, DP_DIV_PADDED_EXTENT, DP_ROW_MAJOR, DP_COL_MAJOR,
    DP_OK, DP_EVALUE, DP_ETYPE, DP_ENOMEM, dp_desc, dp_plan,
)

cdef extern from "dnnpool.h" nogil:
    void dp_desc_defaults(dp_desc *d, int32_t kind, int32_t ndims)
    int dp_desc_init(dp_desc *d, char *errmsg, size_t errmsg_size)
    int64_t dp_desc_src_size(const dp_desc *d)
    int64_t dp_desc_dst_size(const dp_desc *d)
    size_t dp_dtype_size(int32_t dtype)
    int dp_plan_create(const dp_desc *d, dp_plan **out, char *errmsg, size_t errmsg_size)
    void dp_plan_destroy(dp_plan *p)
    const dp_desc *dp_plan_desc(const dp_plan *p)
    const char *dp_plan_kernel_name(const dp_plan *p)
    int dp_execute(const dp_plan *p, const void *src, const int64_t *src_strides,
                   void *dst, const int64_t *dst_strides,
                   int64_t *indices, const int64_t *idx_strides, int nthreads)
    const char *dp_isa()
    int dp_get_max_threads()
    void dp_set_num_threads(int n)


cdef class CDesc:
    """A validated C descriptor (``dp_desc``); a PoolingDesc holds one as ``_cdesc``."""
    cdef dp_desc d


cdef class Pooling:
    """A planned pooling primitive; ``plan`` may be executed from C, nogil."""
    cdef dp_plan *plan
    cdef readonly object desc
    cdef readonly int num_threads
    cdef object _np_dtype
    cdef Py_ssize_t _itemsize
    cdef int _typenum
    cdef tuple _src_shape
    cdef tuple _dst_shape
    cdef int _nd
    cdef int64_t _src_dims[5]
    cdef int64_t _dst_dims[5]
    cdef bint _is_max
    cdef int _check(self, str name, object arr, int64_t *dims, tuple shape, object dtype) except -1
    cdef object _empty(self, int64_t *dims, int typenum)
    cdef object _writeable_target(self, str name, object arr, object src, Py_ssize_t itemsize, int typenum)
