"""Builds pool_consumer._batch against the installed dnnpool.

dnnpool.get_include() gives the C headers; Cython finds dnnpool/capi.pxd on
sys.path (it is shipped inside the installed package).  Nothing is linked
against dnnpool: its kernels are reached at run time through a capsule.
"""
import sys

import dnnpool
from Cython.Build import cythonize
from setuptools import Extension, setup

# OpenMP for prange; without it (e.g. Apple clang) the loops simply run serially.
if sys.platform == "win32":
    openmp = {"extra_compile_args": ["/openmp"]}
elif sys.platform == "darwin":
    openmp = {}
else:
    openmp = {"extra_compile_args": ["-fopenmp"], "extra_link_args": ["-fopenmp"]}

extensions = [
    # Cython: cimports dnnpool.capi, pools inside nogil prange loops.
    Extension("pool_consumer._batch", ["pool_consumer/_batch.pyx"],
              include_dirs=[dnnpool.get_include()], **openmp),
    # Plain C: the same table through dnnpool_api.h alone.
    Extension("pool_consumer._cpool", ["pool_consumer/_cpool.c"],
              include_dirs=[dnnpool.get_include()]),
]

setup(ext_modules=cythonize(extensions, language_level=3))
