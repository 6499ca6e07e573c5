/*
 * The same C-API from plain C (no Cython): include dnnpool_api.h, call
 * dp_import_api() in the module's init, then the dp_api_* wrappers.
 * Nothing here links against dnnpool.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dnnpool_api.h"

/* Raises the exception the Python API uses for a dnnpool status. */
static PyObject *raise_status(int status, const char *msg)
{
    PyObject *type = status == DP_ETYPE ? PyExc_TypeError
                   : status == DP_ENOMEM ? PyExc_MemoryError : PyExc_ValueError;
    PyErr_SetString(type, msg);
    return NULL;
}

/* execute(pooling, src, dst): runs a Python-made dnnpool.Pooling over two
 * C-contiguous buffers, without the GIL.  Returns None. */
static PyObject *execute(PyObject *self, PyObject *args)
{
    PyObject *pooling;
    Py_buffer src, dst;
    const dp_plan *plan;
    const dp_desc *d;
    int status;
    (void)self;
    if (!PyArg_ParseTuple(args, "Oy*w*", &pooling, &src, &dst))
        return NULL;
    plan = dp_api_plan_of(pooling);          /* borrowed: `pooling` outlives the call */
    if (plan == NULL)
        goto fail;
    d = dp_api_plan_desc(plan);
    if ((size_t)src.len != (size_t)dp_api_desc_src_size(d) * dp_api_dtype_size(d->dtype) ||
        (size_t)dst.len != (size_t)dp_api_desc_dst_size(d) * dp_api_dtype_size(d->dtype)) {
        PyErr_Format(PyExc_ValueError, "execute: src/dst hold %zd/%zd bytes, the plan needs %lld/%lld",
                     src.len, dst.len,
                     (long long)(dp_api_desc_src_size(d) * (int64_t)dp_api_dtype_size(d->dtype)),
                     (long long)(dp_api_desc_dst_size(d) * (int64_t)dp_api_dtype_size(d->dtype)));
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    status = dp_api_execute(plan, src.buf, NULL, dst.buf, NULL, NULL, NULL, 0);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    if (status != DP_OK)
        return raise_status(status, "execute: dp_execute failed");
    Py_RETURN_NONE;
fail:
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    return NULL;
}

/* describe_1d(kind, batch, channels, width, kernel, stride): an NCX f32
 * descriptor made in C, handed back as a dnnpool.PoolingDesc. */
static PyObject *describe_1d(PyObject *self, PyObject *args)
{
    int kind;
    long long batch, channels, width, kernel, stride;
    dp_desc d;
    char msg[DP_ERRMSG_SIZE];
    int status;
    (void)self;
    if (!PyArg_ParseTuple(args, "iLLLLL", &kind, &batch, &channels, &width, &kernel, &stride))
        return NULL;
    dp_api_desc_defaults(&d, kind, 1);
    d.format = DP_NCX;
    d.batch = batch;
    d.channels = channels;
    d.src_spatial[0] = width;
    d.kernel[0] = kernel;
    d.strides[0] = stride;
    status = dp_api_desc_init(&d, msg, sizeof msg);
    if (status != DP_OK)
        return raise_status(status, msg);
    return dp_api_desc_to_python(&d);
}

static PyMethodDef methods[] = {
    {"execute", execute, METH_VARARGS, "execute(pooling, src, dst): run a dnnpool.Pooling from C"},
    {"describe_1d", describe_1d, METH_VARARGS,
     "describe_1d(kind, batch, channels, width, kernel, stride) -> dnnpool.PoolingDesc"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cpool", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cpool(void)
{
    if (dp_import_api() < 0)      /* ImportError if dnnpool's ABI differs */
        return NULL;
    return PyModule_Create(&module);
}
