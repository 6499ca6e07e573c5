"""Build of dnnpool's compiled core: one extension, dnnpool._core, from the
Cython binding and the C++ kernels of csrc/.

The kernels are compiled for several instruction sets inside one object
(csrc/kernels_isa.cpp) and chosen at run time, so the default build targets
plain x86-64 and never uses -march=native.
"""
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import find_packages, setup
from setuptools.extension import Extension

CSRC = ["csrc/desc.cpp", "csrc/plan.cpp", "csrc/kernels_isa.cpp"]

compile_args = ["-std=c++17", "-O3", "-fopenmp", "-fno-math-errno", "-Wall", "-Wno-unused-function"]
link_args = ["-fopenmp"]
if os.environ.get("DNNPOOL_DEBUG"):
    compile_args += ["-O0", "-g", "-fsanitize=address,undefined"]
    link_args += ["-fsanitize=address,undefined"]

extensions = [
    Extension(
        "dnnpool._core",
        sources=["dnnpool/_core.pyx", *CSRC],
        include_dirs=["csrc", np.get_include()],
        depends=["csrc/dnnpool.h", "csrc/dnnpool_api.h", "csrc/plan.hpp", "csrc/kernels.hpp",
                 "csrc/kernels_block.hpp", "csrc/kernels_sep.hpp", "csrc/kernels_global.hpp",
                 "dnnpool/_core.pxd", "dnnpool/capi.pxd", "dnnpool/_capi_table.pxi"],
        language="c++",
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
]

setup(
    packages=find_packages(include=["dnnpool", "dnnpool.*"])
    + ["dnnpool.spec", "dnnpool.spec.conformance", "dnnpool.include"],
    # spec/ (our machine-readable specification) and csrc/'s public headers
    # are installed inside the package, so an installed dnnpool reads them.
    package_dir={"dnnpool.spec": "spec", "dnnpool.spec.conformance": "spec/conformance", "dnnpool.include": "csrc"},
    package_data={
        "dnnpool": ["*.pxd", "*.pxi", "*.pyx"],
        "dnnpool.spec": ["*.json", "*.md"],
        "dnnpool.spec.conformance": ["*.json", "*.md"],
        "dnnpool.include": ["*.h"],
    },
    exclude_package_data={"dnnpool": ["*.cpp"], "dnnpool.include": ["*.cpp", "*.hpp"]},
    ext_modules=cythonize(extensions, language_level=3, compiler_directives={"embedsignature": True}),
    zip_safe=False,
)
