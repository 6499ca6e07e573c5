"""Build of dnnpool's compiled core: one extension, dnnpool._core, from the
Cython binding and the C++ kernels of csrc/.

The kernels are compiled once per instruction set (csrc/isa_*.cpp) and chosen
at run time, so the default build targets plain x86-64 and never uses
-march=native.  Those sources compile in parallel (pybind11's ParallelCompile;
DNNPOOL_BUILD_JOBS sets the number of jobs, default one per CPU).
"""
import os
import sys

import numpy as np
from Cython.Build import cythonize
from pybind11.setup_helpers import ParallelCompile
from setuptools import find_packages, setup
from setuptools.extension import Extension

CSRC = ["csrc/desc.cpp", "csrc/plan.cpp", "csrc/copy.cpp", "csrc/threads.cpp", "csrc/isa_baseline.cpp",
        "csrc/isa_avx2.cpp", "csrc/isa_avx512.cpp", "csrc/isa_avx512_bf16.cpp", "csrc/isa_avx512_emulated.cpp"]
# Every source is recompiled whenever setuptools rebuilds the extension (its
# `depends` list covers the headers), as a serial build would.
ParallelCompile("DNNPOOL_BUILD_JOBS", needs_recompile=lambda obj, src: True).install()

# -fno-tree-loop-distribute-patterns: GCC would turn the kernels' copy and
# fill loops into memmove/memset calls, one per short row (NCX rows of 7-56
# values); inline loops took 0.86-0.92 of those shapes' time.
# -Wno-psabi: the avx512-emulated unit passes 64-byte vectors between its own
# inline functions without AVX-512; GCC notes the ABI change with no source
# location, where the unit's `#pragma GCC diagnostic` does not reach.
compile_args = ["-std=c++17", "-O3", "-fopenmp", "-fno-math-errno", "-fno-tree-loop-distribute-patterns", "-Wall",
                "-Wno-unused-function", "-Wno-psabi"]
link_args = ["-fopenmp"]
if os.environ.get("DNNPOOL_DEBUG"):
    compile_args += ["-O0", "-g", "-fsanitize=address,undefined"]
    link_args += ["-fsanitize=address,undefined"]
else:
    # Python's own CFLAGS carry -g: debug info for every instantiated kernel
    # made the build half as long again and the extension 53 MB instead of 12.
    compile_args += ["-g0"]

extensions = [
    Extension(
        "dnnpool._core",
        sources=["dnnpool/_core.pyx", *CSRC],
        include_dirs=["csrc", np.get_include()],
        depends=["csrc/dnnpool.h", "csrc/dnnpool_api.h", "csrc/plan.hpp", "csrc/copy.hpp", "csrc/threads.hpp", "csrc/isa.hpp",
                 "csrc/isa_avx2_ops.hpp", "csrc/isa_avx512_ops.hpp", "csrc/kernels.hpp", "csrc/kernels_bf16_maxima.hpp",
                 "csrc/kernels_block.hpp", "csrc/kernels_columns.hpp", "csrc/kernels_phases.hpp", "csrc/kernels_doubling.hpp",
                 "csrc/kernels_sep.hpp", "csrc/kernels_global.hpp", "csrc/kernels_transpose.hpp",
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
