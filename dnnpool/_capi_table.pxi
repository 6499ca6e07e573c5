# Included at the end of dnnpool/_core.pyx: the public C-API table and its capsule.
#
# Other extensions reach the kernels through `_C_API`, a PyCapsule named
# DP_CAPI_NAME pointing at one dp_api table (csrc/dnnpool_api.h), so they never
# link against this module's shared object.  The table lives as long as the
# process: CPython never unloads an extension module.
from cpython.pycapsule cimport PyCapsule_New
from dnnpool.capi cimport dp_api, DP_CAPI_NAME


cdef const dp_desc *_capi_desc_of(object obj) except NULL:
    """PoolingDesc (via its _cdesc), CDesc or Pooling -> its initialised dp_desc."""
    if isinstance(obj, Pooling):
        return dp_plan_desc(_capi_plan_of(obj))
    cdesc = getattr(obj, "_cdesc", obj)
    if not isinstance(cdesc, CDesc):
        raise TypeError(f"dp_desc_of: expected a dnnpool.PoolingDesc or dnnpool.Pooling, "
                        f"got {type(obj).__name__}")
    return &(<CDesc>cdesc).d


cdef const dp_plan *_capi_plan_of(object obj) except NULL:
    """Pooling -> its plan."""
    if not isinstance(obj, Pooling):
        raise TypeError(f"dp_plan_of: expected a dnnpool.Pooling, got {type(obj).__name__}")
    if (<Pooling>obj).plan == NULL:
        raise ValueError("dp_plan_of: this Pooling has no plan")
    return (<Pooling>obj).plan


cdef object _capi_desc_to_python(const dp_desc *d):
    """dp_desc -> PoolingDesc, through the Python constructor (which validates it)."""
    from dnnpool._from_c import pooling_desc_from_struct
    return pooling_desc_from_struct(d[0])


cdef dp_api _capi_table
_capi_table.abi_version = DP_ABI_VERSION
_capi_table.table_size = sizeof(dp_api)
_capi_table.desc_size = sizeof(dp_desc)
_capi_table.reserved = 0
_capi_table.desc_defaults = dp_desc_defaults
_capi_table.desc_init = dp_desc_init
_capi_table.desc_src_size = dp_desc_src_size
_capi_table.desc_dst_size = dp_desc_dst_size
_capi_table.dtype_size = dp_dtype_size
_capi_table.plan_create = dp_plan_create
_capi_table.plan_destroy = dp_plan_destroy
_capi_table.plan_desc = dp_plan_desc
_capi_table.plan_kernel_name = dp_plan_kernel_name
_capi_table.execute = dp_execute
_capi_table.isa = dp_isa
_capi_table.get_max_threads = dp_get_max_threads
_capi_table.set_num_threads = dp_set_num_threads
_capi_table.desc_of = _capi_desc_of
_capi_table.plan_of = _capi_plan_of
_capi_table.desc_to_python = _capi_desc_to_python

_C_API = PyCapsule_New(<void *>&_capi_table, DP_CAPI_NAME, NULL)
