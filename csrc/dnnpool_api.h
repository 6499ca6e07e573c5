/*
 * dnnpool public C-API table: how another compiled extension reaches dnnpool's
 * kernels without linking against dnnpool's private shared object.
 *
 * The extension module dnnpool._core exports a PyCapsule, attribute `_C_API`,
 * named DP_CAPI_NAME, that points at one constant `dp_api` table of function
 * pointers (the pattern of numpy's _ARRAY_API and numpy.random's bit-generator
 * capsule).  A consumer includes this header, calls dp_import_api() once with
 * the GIL held (at module init), then calls the dp_api_* wrappers below from
 * any thread, with or without the GIL.
 *
 * Compatibility: a consumer built against this header works with any dnnpool
 * whose table has the same abi_version and is at least as large as the table
 * the consumer was compiled with.  New functions are only ever appended to the
 * table (abi_version unchanged); changing dp_desc or an existing signature
 * bumps DP_ABI_VERSION (in dnnpool.h), and dp_import_api() then refuses with
 * ImportError instead of letting the consumer crash.
 *
 * Each C translation unit has its own table pointer (it is `static`), so every
 * file that calls the wrappers must call dp_import_api() first; a Cython
 * module does that with `import_dnnpool()` from dnnpool/capi.pxd.
 */
#ifndef DNNPOOL_API_H
#define DNNPOOL_API_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>   /* first, as Python requires; no-op when already included */
#include <string.h>

#include "dnnpool.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_CAPI_MODULE "dnnpool._core"
#define DP_CAPI_NAME "dnnpool._core._C_API"

typedef struct dp_api {
    /* ---- header: never moves ---- */
    uint32_t abi_version;      /* DP_ABI_VERSION of the dnnpool build */
    uint32_t table_size;       /* sizeof(dp_api) of the dnnpool build */
    uint32_t desc_size;        /* sizeof(dp_desc) of the dnnpool build */
    uint32_t reserved;

    /* ---- dnnpool.h, callable without the GIL ---- */
    void (*desc_defaults)(dp_desc *d, int32_t kind, int32_t ndims);
    int (*desc_init)(dp_desc *d, char *errmsg, size_t errmsg_size);
    int64_t (*desc_src_size)(const dp_desc *d);
    int64_t (*desc_dst_size)(const dp_desc *d);
    size_t (*dtype_size)(int32_t dtype);
    int (*plan_create)(const dp_desc *d, dp_plan **out, char *errmsg, size_t errmsg_size);
    void (*plan_destroy)(dp_plan *p);
    const dp_desc *(*plan_desc)(const dp_plan *p);
    const char *(*plan_kernel_name)(const dp_plan *p);
    int (*execute)(const dp_plan *p, const void *src, const int64_t *src_strides,
                   void *dst, const int64_t *dst_strides,
                   int64_t *indices, const int64_t *idx_strides, int nthreads);
    const char *(*isa)(void);
    int (*get_max_threads)(void);
    void (*set_num_threads)(int n);

    /* ---- hand-over with Python objects: the GIL must be held ----
     * desc_of:  PoolingDesc, Pooling (its descriptor) or _core.CDesc -> borrowed
     *           pointer to its initialised dp_desc, valid while obj lives.
     * plan_of:  Pooling -> borrowed pointer to its plan, valid while obj lives.
     * desc_to_python: dp_desc (initialised or not) -> new PoolingDesc reference.
     * All return NULL with a Python exception set on failure. */
    const dp_desc *(*desc_of)(PyObject *obj);
    const dp_plan *(*plan_of)(PyObject *obj);
    PyObject *(*desc_to_python)(const dp_desc *d);
} dp_api;

/* This translation unit's view of the table; NULL until dp_import_api(). */
static const dp_api *dp_api_ptr = NULL;

/* Fetches and checks the table.  GIL required.  Returns 0, or -1 with
 * ImportError (or the import's own error) set. */
static inline int dp_import_api(void)
{
    const dp_api *api;
    if (dp_api_ptr != NULL)
        return 0;
    api = (const dp_api *)PyCapsule_Import(DP_CAPI_NAME, 0);
    if (api == NULL)
        return -1;
    if (api->abi_version != DP_ABI_VERSION) {
        PyErr_Format(PyExc_ImportError,
                     "dnnpool C-API ABI version mismatch: this extension was built "
                     "against ABI %d but the installed dnnpool provides ABI %u; "
                     "rebuild it against the installed dnnpool",
                     (int)DP_ABI_VERSION, (unsigned)api->abi_version);
        return -1;
    }
    if (api->table_size < sizeof(dp_api) || api->desc_size != sizeof(dp_desc)) {
        PyErr_Format(PyExc_ImportError,
                     "dnnpool C-API too old or inconsistent: table %u bytes "
                     "(need >= %u), dp_desc %u bytes (need %u); rebuild this "
                     "extension against the installed dnnpool",
                     (unsigned)api->table_size, (unsigned)sizeof(dp_api),
                     (unsigned)api->desc_size, (unsigned)sizeof(dp_desc));
        return -1;
    }
    dp_api_ptr = api;
    return 0;
}

/* ---- wrappers: same arguments as the dnnpool.h functions, no GIL needed ----
 * Before a successful dp_import_api() they fail safely (DP_EVALUE with a
 * message, -1, NULL or "") instead of dereferencing a NULL table. */

#define DP_API_MISSING_MSG "dnnpool C-API not imported: call import_dnnpool() / dp_import_api() first"

static inline int dp_api__missing(char *errmsg, size_t errmsg_size)
{
    if (errmsg != NULL && errmsg_size > 0) {
        strncpy(errmsg, DP_API_MISSING_MSG, errmsg_size - 1);
        errmsg[errmsg_size - 1] = '\0';
    }
    return DP_EVALUE;
}

static inline void dp_api_desc_defaults(dp_desc *d, int32_t kind, int32_t ndims)
{
    if (dp_api_ptr != NULL)
        dp_api_ptr->desc_defaults(d, kind, ndims);
    else
        memset(d, 0, sizeof(*d));
}

static inline int dp_api_desc_init(dp_desc *d, char *errmsg, size_t errmsg_size)
{
    return dp_api_ptr ? dp_api_ptr->desc_init(d, errmsg, errmsg_size)
                  : dp_api__missing(errmsg, errmsg_size);
}

static inline int64_t dp_api_desc_src_size(const dp_desc *d)
{
    return dp_api_ptr ? dp_api_ptr->desc_src_size(d) : -1;
}

static inline int64_t dp_api_desc_dst_size(const dp_desc *d)
{
    return dp_api_ptr ? dp_api_ptr->desc_dst_size(d) : -1;
}

static inline size_t dp_api_dtype_size(int32_t dtype)
{
    return dp_api_ptr ? dp_api_ptr->dtype_size(dtype) : 0;
}

static inline int dp_api_plan_create(const dp_desc *d, dp_plan **out,
                                     char *errmsg, size_t errmsg_size)
{
    if (dp_api_ptr)
        return dp_api_ptr->plan_create(d, out, errmsg, errmsg_size);
    if (out != NULL)
        *out = NULL;
    return dp_api__missing(errmsg, errmsg_size);
}

static inline void dp_api_plan_destroy(dp_plan *p)
{
    if (dp_api_ptr)
        dp_api_ptr->plan_destroy(p);
}

static inline const dp_desc *dp_api_plan_desc(const dp_plan *p)
{
    return dp_api_ptr ? dp_api_ptr->plan_desc(p) : NULL;
}

static inline const char *dp_api_plan_kernel_name(const dp_plan *p)
{
    return dp_api_ptr ? dp_api_ptr->plan_kernel_name(p) : "";
}

static inline int dp_api_execute(const dp_plan *p, const void *src, const int64_t *src_strides,
                                 void *dst, const int64_t *dst_strides,
                                 int64_t *indices, const int64_t *idx_strides, int nthreads)
{
    return dp_api_ptr ? dp_api_ptr->execute(p, src, src_strides, dst, dst_strides,
                                    indices, idx_strides, nthreads)
                  : DP_EVALUE;
}

static inline const char *dp_api_isa(void)
{
    return dp_api_ptr ? dp_api_ptr->isa() : "";
}

static inline int dp_api_get_max_threads(void)
{
    return dp_api_ptr ? dp_api_ptr->get_max_threads() : 1;
}

static inline void dp_api_set_num_threads(int n)
{
    if (dp_api_ptr)
        dp_api_ptr->set_num_threads(n);
}

/* ---- GIL required ---- */

static inline const dp_desc *dp_api_desc_of(PyObject *obj)
{
    if (dp_api_ptr)
        return dp_api_ptr->desc_of(obj);
    PyErr_SetString(PyExc_RuntimeError, DP_API_MISSING_MSG);
    return NULL;
}

static inline const dp_plan *dp_api_plan_of(PyObject *obj)
{
    if (dp_api_ptr)
        return dp_api_ptr->plan_of(obj);
    PyErr_SetString(PyExc_RuntimeError, DP_API_MISSING_MSG);
    return NULL;
}

static inline PyObject *dp_api_desc_to_python(const dp_desc *d)
{
    if (dp_api_ptr)
        return dp_api_ptr->desc_to_python(d);
    PyErr_SetString(PyExc_RuntimeError, DP_API_MISSING_MSG);
    return NULL;
}

#ifdef __cplusplus
}
#endif
#endif /* DNNPOOL_API_H */
