# cython: language_level=3
"""dnnpool's public Cython API: describe and run pooling at C level, nogil.

    from dnnpool.capi cimport *          # or cimport dnnpool.capi as dp
    import_dnnpool()                     # once, at module level (GIL held)

Build with include_dirs=[dnnpool.get_include()]; no library to link: every
call below goes through the versioned function table that dnnpool._core
exports as the capsule `dnnpool._core._C_API` (see csrc/dnnpool_api.h).
The types are declared from the shipped C header rather than cimported from
dnnpool._core, so a consumer depends only on the header and the table (whose
ABI version import_dnnpool() checks), never on _core's private object layout.
"""
from libc.stdint cimport int32_t, int64_t, uint32_t

cdef extern from "dnnpool_api.h" nogil:
    enum:
        DP_ABI_VERSION
        DP_MAX_SPATIAL
        DP_ERRMSG_SIZE

    ctypedef enum dp_kind:
        DP_AVG
        DP_MAX

    ctypedef enum dp_dtype:
        DP_F32
        DP_F64
        DP_F16
        DP_BF16
        DP_S8
        DP_U8

    ctypedef enum dp_format:
        DP_NCX
        DP_NXC

    ctypedef enum dp_rounding:
        DP_FLOOR
        DP_CEIL

    ctypedef enum dp_auto_pad:
        DP_PAD_NONE
        DP_PAD_SAME_UPPER
        DP_PAD_SAME_LOWER
        DP_PAD_VALID

    ctypedef enum dp_pad_divisor:
        DP_DIV_KERNEL
        DP_DIV_PADDED_EXTENT

    ctypedef enum dp_index_order:
        DP_ROW_MAJOR
        DP_COL_MAJOR

    ctypedef enum dp_status:
        DP_OK
        DP_EVALUE
        DP_ETYPE
        DP_ENOMEM

    ctypedef struct dp_desc:
        # inputs
        int32_t kind
        int32_t dtype
        int32_t format
        int32_t ndims
        int64_t batch
        int64_t channels
        int64_t src_spatial[DP_MAX_SPATIAL]
        int64_t kernel[DP_MAX_SPATIAL]
        int64_t strides[DP_MAX_SPATIAL]
        int64_t dilations[DP_MAX_SPATIAL]
        int64_t pads_begin[DP_MAX_SPATIAL]
        int64_t pads_end[DP_MAX_SPATIAL]
        int32_t exclude_pad
        int32_t rounding
        int32_t auto_pad
        int32_t pad_divisor
        int32_t drop_end_pad_windows
        int32_t index_order
        int32_t quantized
        float src_scale
        float dst_scale
        int32_t src_zero_point
        int32_t dst_zero_point
        # outputs of dp_desc_init
        int64_t dst_spatial[DP_MAX_SPATIAL]
        int64_t resolved_pads_begin[DP_MAX_SPATIAL]
        int64_t resolved_pads_end[DP_MAX_SPATIAL]

    ctypedef struct dp_plan:
        pass

    const char *DP_CAPI_NAME

    # The raw table (csrc/dnnpool_api.h); prefer the wrappers below.
    ctypedef struct dp_api:
        uint32_t abi_version
        uint32_t table_size
        uint32_t desc_size
        uint32_t reserved
        void (*desc_defaults)(dp_desc *d, int32_t kind, int32_t ndims) noexcept nogil
        int (*desc_init)(dp_desc *d, char *errmsg, size_t errmsg_size) noexcept nogil
        int64_t (*desc_src_size)(const dp_desc *d) noexcept nogil
        int64_t (*desc_dst_size)(const dp_desc *d) noexcept nogil
        size_t (*dtype_size)(int32_t dtype) noexcept nogil
        int (*plan_create)(const dp_desc *d, dp_plan **out,
                           char *errmsg, size_t errmsg_size) noexcept nogil
        void (*plan_destroy)(dp_plan *p) noexcept nogil
        const dp_desc *(*plan_desc)(const dp_plan *p) noexcept nogil
        const char *(*plan_kernel_name)(const dp_plan *p) noexcept nogil
        int (*execute)(const dp_plan *p, const void *src, const int64_t *src_strides,
                       void *dst, const int64_t *dst_strides,
                       int64_t *indices, const int64_t *idx_strides, int nthreads) noexcept nogil
        const char *(*isa)() noexcept nogil
        int (*get_max_threads)() noexcept nogil
        void (*set_num_threads)(int n) noexcept nogil
        const dp_desc *(*desc_of)(object obj) except NULL
        const dp_plan *(*plan_of)(object obj) except NULL
        object (*desc_to_python)(const dp_desc *d)

    const dp_api *dp_api_ptr

    # ---- the C-level functions (dnnpool.h semantics), callable without the GIL ----
    void dp_desc_defaults "dp_api_desc_defaults"(dp_desc *d, int32_t kind, int32_t ndims)
    int dp_desc_init "dp_api_desc_init"(dp_desc *d, char *errmsg, size_t errmsg_size)
    int64_t dp_desc_src_size "dp_api_desc_src_size"(const dp_desc *d)
    int64_t dp_desc_dst_size "dp_api_desc_dst_size"(const dp_desc *d)
    size_t dp_dtype_size "dp_api_dtype_size"(int32_t dtype)
    int dp_plan_create "dp_api_plan_create"(const dp_desc *d, dp_plan **out,
                                            char *errmsg, size_t errmsg_size)
    void dp_plan_destroy "dp_api_plan_destroy"(dp_plan *p)
    const dp_desc *dp_plan_desc "dp_api_plan_desc"(const dp_plan *p)
    const char *dp_plan_kernel_name "dp_api_plan_kernel_name"(const dp_plan *p)
    int dp_execute "dp_api_execute"(const dp_plan *p, const void *src, const int64_t *src_strides,
                                    void *dst, const int64_t *dst_strides,
                                    int64_t *indices, const int64_t *idx_strides, int nthreads)
    const char *dp_isa "dp_api_isa"()
    int dp_get_max_threads "dp_api_get_max_threads"()
    void dp_set_num_threads "dp_api_set_num_threads"(int n)


cdef extern from "dnnpool_api.h":
    # ---- GIL required ----
    # Fetch the capsule once, check ABI version and sizes; ImportError if incompatible.
    int import_dnnpool "dp_import_api"() except -1
    # PoolingDesc / Pooling / CDesc -> its dp_desc (borrowed: keep obj alive).
    const dp_desc *dp_desc_of "dp_api_desc_of"(object obj) except NULL
    # Pooling -> its plan (borrowed: keep the Pooling alive while you execute it).
    const dp_plan *dp_plan_of "dp_api_plan_of"(object obj) except NULL
    # dp_desc -> a new dnnpool.PoolingDesc (validated by the Python constructor).
    object dp_desc_to_python "dp_api_desc_to_python"(const dp_desc *d)

cdef inline int dp_check(int status, const char *errmsg) except -1:
    """Raise the Python exception the Python API would raise for a status."""
    if status == DP_OK:
        return 0
    message = errmsg.decode("utf-8", "replace") if errmsg != NULL else ""
    if status == DP_ETYPE:
        raise TypeError(message)
    if status == DP_ENOMEM:
        raise MemoryError(message)
    raise ValueError(message or f"dnnpool call failed with status {status}")
