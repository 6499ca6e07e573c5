"""A small ctypes binding over oneDNN's C API: the pooling forward-inference primitive.

It drives the library shipped by the PyPI wheels ``onednn-cpu-gomp`` (+ ``onednn-devel-cpu-gomp``
for the headers) 2023.2.0, i.e. oneDNN 3.2. Used twice: as a benchmark peer and as the test
suite's oracle (tests/test_onednn_oracle.py). Only what pooling needs is bound.

Conventions follow dnnpool's, not the primitive API's: shapes are given in data_format order
(``NCX`` or ``NXC``) and dilations use 1 for a dense kernel (the primitive API wants 0). The
destination shape is always explicit in oneDNN, so callers may pass a ceil-rounded size.
"""
import contextlib
import ctypes
import ctypes.util
import functools
import importlib.metadata
import os

import numpy as np

__all__ = ["OneDNNUnavailable", "OneDNNError", "load_library", "library_version", "OneDNNPooling",
           "pool"]

# Enumerations of the oneDNN 3.x ABI (dnnl_types.h / dnnl_common_types.h); version-checked on load.
_SUCCESS = 0
_STATUS_NAMES = {1: "out_of_memory", 2: "invalid_arguments", 3: "unimplemented",
                 4: "last_impl_reached", 5: "runtime_error", 6: "not_required"}
_ENGINE_CPU = 1
_STREAM_DEFAULT_FLAGS = 1
_FORWARD_INFERENCE = 96
_QUERY_IMPL_INFO_STR = 8
ALGORITHMS = {"max": 0x1FF, "avg_include_padding": 0x2FF, "avg_exclude_padding": 0x3FF}
_ARG_SRC, _ARG_DST = 1, 17
_RUNTIME_SEQ, _RUNTIME_OMP = 1, 2
# Plain layouts by total rank: channels first (abc, abcd, abcde) and channels last (acb, acdb, acdeb).
_FORMAT_TAGS = {("NCX", 3): 4, ("NCX", 4): 5, ("NCX", 5): 6,
                ("NXC", 3): 15, ("NXC", 4): 22, ("NXC", 5): 33}
_MAX_NDIMS = 12


def _data_types():
    import ml_dtypes
    return {np.dtype(np.float16): 1, np.dtype(ml_dtypes.bfloat16): 2, np.dtype(np.float32): 3,
            np.dtype(np.int8): 5, np.dtype(np.uint8): 6}


class OneDNNUnavailable(ImportError):
    """libdnnl (oneDNN 3.x) could not be found or loaded."""


class OneDNNError(RuntimeError):
    """A oneDNN call failed; ``status`` is the library's status name."""

    def __init__(self, call, status):
        self.status = _STATUS_NAMES.get(status, str(status))
        super().__init__(f"oneDNN {call} failed: {self.status}")


_Dims = ctypes.c_int64 * _MAX_NDIMS


class _ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", ctypes.c_void_p)]


def _candidate_paths():
    """Where libdnnl may be: $DNNPOOL_ONEDNN_LIBRARY, the onednn-cpu-* wheels, then the system."""
    explicit = os.environ.get("DNNPOOL_ONEDNN_LIBRARY")
    if explicit:
        yield explicit
    for dist_name in ("onednn-cpu-gomp", "onednn-cpu-iomp", "onednn-cpu-tbb"):
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in dist.files or ():
            if file.name == "libdnnl.so.3":
                yield str(dist.locate_file(file))
    system = ctypes.util.find_library("dnnl")
    if system:
        yield system


def _declare(lib):
    vp, i32, i64p = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)
    pvp = ctypes.POINTER(ctypes.c_void_p)
    signatures = {
        "dnnl_engine_create": (pvp, i32, ctypes.c_size_t),
        "dnnl_engine_destroy": (vp,),
        "dnnl_stream_create": (pvp, vp, ctypes.c_uint),
        "dnnl_stream_wait": (vp,),
        "dnnl_stream_destroy": (vp,),
        "dnnl_memory_desc_create_with_tag": (pvp, i32, i64p, i32, i32),
        "dnnl_memory_desc_destroy": (vp,),
        "dnnl_memory_create": (pvp, vp, vp, vp),
        "dnnl_memory_set_data_handle": (vp, vp),
        "dnnl_memory_destroy": (vp,),
        "dnnl_pooling_forward_primitive_desc_create":
            (pvp, vp, i32, i32, vp, vp, i64p, i64p, i64p, i64p, i64p, vp),
        "dnnl_primitive_desc_query": (vp, i32, i32, vp),
        "dnnl_primitive_desc_destroy": (vp,),
        "dnnl_primitive_create": (pvp, vp),
        "dnnl_primitive_execute": (vp, vp, i32, ctypes.POINTER(_ExecArg)),
        "dnnl_primitive_destroy": (vp,),
    }
    for name, argtypes in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = ctypes.c_int


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                ("hash", ctypes.c_char_p), ("cpu_runtime", ctypes.c_uint),
                ("gpu_runtime", ctypes.c_uint)]


class _Library:
    """The loaded libdnnl, one CPU engine and one stream, shared by every primitive."""

    def __init__(self, path):
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.lib.dnnl_version.restype = ctypes.POINTER(_Version)
        info = self.lib.dnnl_version().contents
        self.version = f"{info.major}.{info.minor}.{info.patch}"
        # Sequential and OpenMP CPU runtimes return from execute when the work is done; the
        # others (TBB, threadpool) need a stream wait, a second foreign call per execution.
        self.blocking_execute = info.cpu_runtime in (_RUNTIME_SEQ, _RUNTIME_OMP)
        if info.major != 3:
            raise OneDNNUnavailable(f"{path} is oneDNN {self.version}; this binding needs 3.x")
        _declare(self.lib)
        self.engine, self.stream = ctypes.c_void_p(), ctypes.c_void_p()
        self.check("dnnl_engine_create", ctypes.byref(self.engine), _ENGINE_CPU, 0)
        self.check("dnnl_stream_create", ctypes.byref(self.stream), self.engine,
                   _STREAM_DEFAULT_FLAGS)
        self._omp_get_max_threads, self._omp_set_num_threads = self._find_openmp()

    def _find_openmp(self):
        # The gomp wheel threads with the system libgomp; its ICV is what oneDNN reads per call.
        try:
            libgomp = ctypes.CDLL("libgomp.so.1")
            return libgomp.omp_get_max_threads, libgomp.omp_set_num_threads
        except (OSError, AttributeError):
            return None, None

    def get_num_threads(self):
        return self._omp_get_max_threads() if self._omp_get_max_threads else 0

    def set_num_threads(self, n):
        """OpenMP's thread count for this thread's next parallel regions (0: leave it)."""
        if self._omp_set_num_threads is not None and n > 0:
            self._omp_set_num_threads(int(n))

    @contextlib.contextmanager
    def threads(self, n):
        """OpenMP's thread count set to n (0: left alone) for the block, then restored.

        Some implementations (the ncsp jit pooling among them) fix their thread count when the
        primitive is created, from the OpenMP setting of that moment: creating a 1-thread
        primitive under the default setting gives one that runs on every CPU."""
        before = self.get_num_threads()
        self.set_num_threads(n)
        try:
            yield
        finally:
            self.set_num_threads(before)

    def check(self, name, *args):
        status = getattr(self.lib, name)(*args)
        if status != _SUCCESS:
            raise OneDNNError(name, status)


@functools.lru_cache(maxsize=None)
def load_library():
    """Load libdnnl once; raises OneDNNUnavailable with the paths tried when it is not there."""
    tried = []
    for path in _candidate_paths():
        try:
            return _Library(path)
        except OSError as error:
            tried.append(f"{path}: {error}")
    detail = "; ".join(tried) or "no onednn-cpu-gomp wheel and no system libdnnl"
    raise OneDNNUnavailable("oneDNN 3.x not found (pip install onednn-cpu-gomp==2023.2.0): "
                            + detail)


def library_version():
    return load_library().version


def _dims(values):
    dims = _Dims()
    for i, value in enumerate(values):
        dims[i] = int(value)
    return dims


def _to_ncx(shape, data_format):
    return tuple(shape) if data_format == "NCX" else (shape[0], shape[-1], *shape[1:-1])


class OneDNNPooling:
    """One pooling forward-inference primitive, built once and executed many times.

    algorithm: "max" | "avg_include_padding" (divisor = whole kernel) | "avg_exclude_padding".
    src_shape / dst_shape in data_format order; dilations 1 = dense (None = dense).
    """

    def __init__(self, algorithm, src_shape, dst_shape, dtype, kernel, strides, pads_begin,
                 pads_end, dilations=None, data_format="NCX", num_threads=0):
        self._lib = load_library()
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm={algorithm!r}: expected one of {sorted(ALGORITHMS)}")
        if data_format not in ("NCX", "NXC"):
            raise ValueError(f"data_format={data_format!r}: expected 'NCX' or 'NXC'")
        self.dtype = np.dtype(dtype)
        data_type = _data_types().get(self.dtype)
        if data_type is None:
            raise TypeError(f"dtype={self.dtype}: oneDNN pooling binding supports "
                            "f32, bf16, f16, s8, u8")
        self.src_shape, self.dst_shape = tuple(src_shape), tuple(dst_shape)
        self.num_threads = num_threads
        rank = len(self.src_shape)
        tag = _FORMAT_TAGS.get((data_format, rank))
        if tag is None:
            raise ValueError(f"src_shape={self.src_shape}: oneDNN pooling needs 1-3 spatial dims")
        dilations = [1] * (rank - 2) if dilations is None else dilations
        for name, values in (("kernel", kernel), ("strides", strides), ("dilations", dilations),
                             ("pads_begin", pads_begin), ("pads_end", pads_end)):
            if len(values) != rank - 2:
                raise ValueError(f"{name}={list(values)}: needs {rank - 2} values, one per "
                                 f"spatial axis of src_shape={self.src_shape}")
        self._handles = []  # (destroy function name, handle), released in reverse order
        lib = self._lib
        src_md = self._create("dnnl_memory_desc_create_with_tag", "dnnl_memory_desc_destroy",
                              rank, _dims(_to_ncx(self.src_shape, data_format)), data_type, tag)
        dst_md = self._create("dnnl_memory_desc_create_with_tag", "dnnl_memory_desc_destroy",
                              rank, _dims(_to_ncx(self.dst_shape, data_format)), data_type, tag)
        with lib.threads(num_threads):  # the count the primitive runs with is fixed here
            primitive_desc = self._create(
                "dnnl_pooling_forward_primitive_desc_create", "dnnl_primitive_desc_destroy",
                lib.engine, _FORWARD_INFERENCE, ALGORITHMS[algorithm], src_md, dst_md,
                _dims(strides), _dims(kernel), _dims([d - 1 for d in dilations]),
                _dims(pads_begin), _dims(pads_end), None)
            info = ctypes.c_char_p()
            lib.check("dnnl_primitive_desc_query", primitive_desc, _QUERY_IMPL_INFO_STR, 0,
                      ctypes.byref(info))
            self.implementation = info.value.decode()
            self._primitive = self._create("dnnl_primitive_create", "dnnl_primitive_destroy",
                                           primitive_desc)
        self._src_mem = self._create("dnnl_memory_create", "dnnl_memory_destroy", src_md,
                                     lib.engine, None)
        self._dst_mem = self._create("dnnl_memory_create", "dnnl_memory_destroy", dst_md,
                                     lib.engine, None)
        self._args = (_ExecArg * 2)((_ARG_SRC, self._src_mem), (_ARG_DST, self._dst_mem))
        self._bound = (None, None)
        self._execute = lib.lib.dnnl_primitive_execute
        self._wait = None if lib.blocking_execute else lib.lib.dnnl_stream_wait

    def _create(self, create, destroy, *args):
        handle = ctypes.c_void_p()
        self._lib.check(create, ctypes.byref(handle), *args)
        self._handles.append((destroy, handle))
        return handle

    def bind(self, src, dst):
        """Point the primitive at these arrays (checked once here, not on every run)."""
        for name, array, shape in (("src", src, self.src_shape), ("dst", dst, self.dst_shape)):
            if array.shape != shape or array.dtype != self.dtype:
                raise ValueError(f"{name}: expected shape {shape} dtype {self.dtype}, "
                                 f"got {array.shape} {array.dtype}")
            if not array.flags.c_contiguous:
                raise ValueError(f"{name}: must be C-contiguous in data_format order")
        if not dst.flags.writeable:
            raise ValueError("dst: must be writeable")
        self._lib.check("dnnl_memory_set_data_handle", self._src_mem, src.ctypes.data)
        self._lib.check("dnnl_memory_set_data_handle", self._dst_mem, dst.ctypes.data)
        self._bound = (src, dst)  # keep them alive while bound

    def run(self):
        """Execute on the bound arrays; the cheapest call, for timing."""
        status = self._execute(self._primitive, self._lib.stream, 2, self._args)
        if status == _SUCCESS and self._wait is not None:
            status = self._wait(self._lib.stream)
        if status != _SUCCESS:
            raise OneDNNError("dnnl_primitive_execute", status)

    def activate(self):
        """Apply this primitive's thread count (oneDNN reads the OpenMP setting at execution)."""
        self._lib.set_num_threads(self.num_threads)

    def execute(self, src, dst=None):
        src = np.ascontiguousarray(src, dtype=self.dtype)
        if dst is None:
            dst = np.empty(self.dst_shape, self.dtype)
        self.bind(src, dst)
        self.activate()
        self.run()
        return dst

    def close(self):
        """Release the oneDNN objects; running afterwards fails in oneDNN, not in memory."""
        self._primitive, self._args = None, None
        handles, self._handles = self._handles, []
        for destroy, handle in reversed(handles):
            getattr(self._lib.lib, destroy)(handle)

    def __del__(self):
        if getattr(self, "_handles", None):
            self.close()


def pool(src, algorithm, kernel, strides, pads_begin, pads_end, dst_spatial, dilations=None,
         data_format="NCX", num_threads=0):
    """One-shot pooling of ``src`` (data_format order) to the given output spatial size."""
    src = np.asarray(src)
    if data_format == "NCX":
        dst_shape = (src.shape[0], src.shape[1], *dst_spatial)
    else:
        dst_shape = (src.shape[0], *dst_spatial, src.shape[-1])
    primitive = OneDNNPooling(algorithm, src.shape, dst_shape, src.dtype, kernel, strides,
                              pads_begin, pads_end, dilations, data_format, num_threads)
    try:
        return primitive.execute(src)
    finally:
        primitive.close()
