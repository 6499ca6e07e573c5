"""dnnpool's Cython API, end to end: the example consumer under
examples/cython_consumer is copied out of the repository, built with pip against
whichever dnnpool is importable (installed or in-place build), imported, and its
C-level results compared with independent references and the Python API."""
import ctypes
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dnnpool as dp
from childproc import child_env

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "cython_consumer"
DOC = REPO / "docs" / "cython-api.md"
CAPSULE_NAME = b"dnnpool._core._C_API"


def _c_compiler():
    """Path of the C compiler setuptools would use, or None."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(shlex.split(cc)[0])


def _require_build_tools():
    if _c_compiler() is None:
        pytest.skip("no C compiler: the Cython consumers cannot be built")
    pytest.importorskip("Cython", reason="building a Cython consumer needs Cython")


def _build_products(directory, names):
    """Leftovers of an in-place build of the example (C generated from a .pyx included)."""
    made = shutil.ignore_patterns("build", "*.so", "*.pyd", "*.egg-info", "__pycache__")(
        directory, names)
    return made | {n for n in names if n.endswith(".c") and n[:-2] + ".pyx" in names}


@pytest.fixture(scope="module")
def consumer_site(tmp_path_factory):
    """pip-installs a copy of the example consumer into a private target dir."""
    _require_build_tools()
    work = tmp_path_factory.mktemp("consumer")
    source, site = work / "src", work / "site"
    shutil.copytree(EXAMPLE, source, ignore=_build_products)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
         "--no-index", "--target", str(site), str(source)],
        capture_output=True, text=True, env=child_env())
    assert build.returncode == 0, f"building the consumer failed:\n{build.stdout}\n{build.stderr}"
    return site


@pytest.fixture(scope="module")
def consumer(consumer_site):
    sys.path.insert(0, str(consumer_site))
    try:
        import pool_consumer
        yield pool_consumer
    finally:
        sys.path.remove(str(consumer_site))


def _run(site, *args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env=child_env(site), cwd=site)


# ---- values -------------------------------------------------------------------------

def _blocks(x):
    """NCHW -> (N, C, H/2, W/2, 4) non-overlapping 2x2 windows: an independent oracle."""
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
        n, c, h // 2, w // 2, 4)


@pytest.mark.parametrize("kind, reduce", [("AvgPool", np.mean), ("MaxPool", np.max)])
def test_shared_plan_matches_numpy(consumer, kind, reduce):
    rng = np.random.default_rng(1)
    srcs = [rng.standard_normal((2, 3, 6, 8)).astype(np.float64) for _ in range(7)]
    outs = consumer.pool_batch(srcs, kind, kernel=(2, 2), strides=(2, 2), data_format="NCX")
    assert len(outs) == len(srcs)
    for src, out in zip(srcs, outs):   # f64 sums of 4 N(0, 1) values: a few ulp of |x| ~ 1
        np.testing.assert_allclose(out, reduce(_blocks(src), axis=-1), rtol=1e-14, atol=1e-14)


def test_indices_match_numpy(consumer):
    src = np.arange(2 * 2 * 4 * 4, dtype=np.float32).reshape(2, 2, 4, 4)[:, :, ::-1, :].copy()
    (out, idx), = consumer.pool_batch([src], "MaxPool", True, kernel=(2, 2), strides=(2, 2),
                                      data_format="NCX")
    flat = np.arange(src.size).reshape(src.shape)
    want_idx = np.take_along_axis(_blocks(flat), _blocks(src).argmax(-1)[..., None], -1)[..., 0]
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(out, src.reshape(-1)[idx])


def test_example_self_check(consumer):
    """The example's own check(): every C path bit-identical to dnnpool's Python API."""
    assert consumer.check() >= 32


def test_python_module_entry_point(consumer_site):
    run = _run(consumer_site, "-m", "pool_consumer")
    assert run.returncode == 0, run.stderr
    assert "checks passed" in run.stdout


def test_plan_per_tensor_different_shapes(consumer):
    rng = np.random.default_rng(2)
    attrs = dict(kernel=(3, 3), strides=(1, 2), pads_begin=(1, 1), pads_end=(1, 1),
                 exclude_pad=True, data_format="NXC")
    srcs = [rng.standard_normal(s).astype(np.float32) for s in [(1, 5, 5, 2), (2, 9, 4, 3),
                                                                  (1, 1, 7, 1)]]
    outs = consumer.pool_each(srcs, "AvgPool", **attrs)
    for src, out in zip(srcs, outs):
        np.testing.assert_array_equal(out, dp.avg_pool(src, **attrs))
    assert [o.shape for o in outs] == [(1, 5, 3, 2), (2, 9, 2, 3), (1, 1, 4, 1)]


def test_python_pooling_used_at_c_level(consumer):
    rng = np.random.default_rng(3)
    views = [rng.standard_normal((4, 6, 3, 2)).astype(np.float32).transpose(1, 0, 2, 3)[::2]
             for _ in range(3)]   # NXC (3, 4, 3, 2) views with permuted, stepped strides
    prim = dp.Pooling(dp.PoolingDesc("AvgPool", views[0].shape, kernel=(2, 2),
                                     data_format="NXC", exclude_pad=False))
    for view, out in zip(views, consumer.pool_with(prim, views)):
        windows = np.lib.stride_tricks.sliding_window_view(view, (2, 2), axis=(1, 2))
        # absolute as well: a mean near zero cancels, and any summation order is valid
        np.testing.assert_allclose(out, windows.mean(axis=(-2, -1)), rtol=1e-6, atol=1e-6 * np.abs(view).max())
        np.testing.assert_array_equal(out, prim.execute(np.ascontiguousarray(view)))


def test_descriptor_round_trip(consumer):
    pd = dp.PoolingDesc("MaxPool", (1, 7, 7, 4), dtype="f16", kernel=(3, 3), strides=(2, 2),
                        auto_pad="same_lower", rounding_type="ceil", index_order="column_major")
    back = consumer.round_trip(pd)
    assert back == pd and back.dst_shape == pd.dst_shape == (1, 4, 4, 4)
    made = consumer.describe("AvgPool", (2, 3, 10), kernel=(4,), strides=(3,),
                             pads_begin=(2,), pads_end=(1,), data_format="NCX")
    assert made == dp.PoolingDesc("AvgPool", (2, 3, 10), kernel=(4,), strides=(3,),
                                  pads_begin=(2,), pads_end=(1,), data_format="NCX")
    assert made.dst_shape == (2, 3, 4)
    prim = dp.Pooling(pd)
    assert consumer.round_trip(prim) == pd              # a Pooling hands over its plan's desc
    quantized = dp.PoolingDesc("AvgPool", (1, 5, 5, 2), dtype="s8", kernel=(2, 2),
                               src_scale=0.1, src_zero_point=-3, dst_scale=0.25, dst_zero_point=7)
    assert consumer.round_trip(quantized) == quantized
    assert consumer.describe_1d(1, 2, 3, 9, 2, 2) == dp.PoolingDesc(    # plain C, 1 == DP_MAX
        "MaxPool", (2, 3, 9), kernel=(2,), strides=(2,), data_format="NCX")


def test_struct_fields_outside_the_enums_are_refused():
    from dnnpool._from_c import pooling_desc_from_struct
    fields = dict(kind=0, dtype=0, format=1, ndims=1, batch=1, channels=1,
                  src_spatial=[4, 0, 0], kernel=[2, 0, 0], strides=[1, 0, 0],
                  dilations=[1, 0, 0], pads_begin=[0, 0, 0], pads_end=[0, 0, 0],
                  exclude_pad=0, rounding=0, auto_pad=0, pad_divisor=0,
                  drop_end_pad_windows=0, index_order=0, quantized=0)
    assert pooling_desc_from_struct(fields).dst_shape == (1, 3, 1)
    with pytest.raises(ValueError, match=r"dp_desc.kind: 7 is not one of 0 \(AvgPool\)"):
        pooling_desc_from_struct(dict(fields, kind=7))
    with pytest.raises(ValueError, match="dp_desc.ndims: 4"):
        pooling_desc_from_struct(dict(fields, ndims=4))


def test_documented_minimal_consumer_builds_and_agrees(tmp_path):
    """The docs' smallest consumer and setup.py, verbatim, build and match avg_pool."""
    _require_build_tools()
    blocks = re.findall(r"```(\w+)\n(.*?)```", DOC.read_text(), re.S)
    pyx, = [code for lang, code in blocks if lang == "cython" and "def avg3x3" in code]
    setup, = [code for lang, code in blocks if lang == "python" and "setup(" in code]
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "_pool.pyx").write_text(pyx)
    (tmp_path / "setup.py").write_text(setup)
    build = _run(tmp_path, "setup.py", "build_ext", "--inplace")
    assert build.returncode == 0, build.stdout + build.stderr
    run = _run(tmp_path, "-c", textwrap.dedent("""
        import numpy as np, dnnpool
        from mypkg._pool import avg3x3
        x = np.random.default_rng(0).standard_normal((2, 3, 7, 6)).astype(np.float32)
        y = np.empty((2, 3, 5, 4), np.float32)
        avg3x3(x, y)
        assert np.array_equal(y, dnnpool.avg_pool(x, kernel=(3, 3), data_format="NCX"))
        try:
            avg3x3(np.zeros((1, 1, 2, 2), np.float32), y)
        except ValueError as exc:
            print("ValueError:", exc)
        """))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ValueError: kernel"), run.stdout


# ---- errors -------------------------------------------------------------------------

def test_bad_descriptor_gives_code_and_message(consumer):
    status, message = consumer.try_describe("AvgPool", (1, 8, 8, 1), kernel=(2, -3))
    assert status == 1                                   # DP_EVALUE
    assert "kernel" in message and "-3" in message
    status, message = consumer.try_describe("MaxPool", (1, 8, 8, 1), dtype=42, kernel=(2, 2))
    assert status == 2 and "42" in message               # DP_ETYPE
    assert consumer.try_describe("MaxPool", (1, 8, 8, 1), kernel=(2, 2)) == (0, "")


def test_errors_become_python_exceptions(consumer):
    with pytest.raises(ValueError, match="kernel"):
        consumer.describe("AvgPool", (1, 8, 8, 1), kernel=(0, 3))
    with pytest.raises(ValueError, match="kernel"):
        consumer.pool_batch([np.zeros((1, 4, 4, 1), np.float32)], "MaxPool", kernel=(9, 9))
    with pytest.raises(ValueError, match="AvgPool|indices"):
        consumer.pool_batch([np.zeros((1, 4, 4, 1), np.float32)], "AvgPool", True, kernel=(2, 2))
    with pytest.raises(TypeError, match="dnnpool.Pooling"):
        consumer.pool_with(object(), [])


# ---- linking and ABI ----------------------------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("nm") is None,
                    reason="symbol check needs Linux and binutils' nm")
def test_consumer_does_not_link_dnnpool(consumer_site):
    libraries = sorted((consumer_site / "pool_consumer").glob("_*.so"))
    assert [so.name.split(".")[0] for so in libraries] == ["_batch", "_cpool"]
    for so in libraries:
        undefined = subprocess.run(["nm", "-D", "--undefined-only", str(so)],
                                   capture_output=True, text=True, check=True).stdout
        assert "PyCapsule_Import" in undefined
        assert not [name for name in undefined.split() if name.startswith("dp_")], so.name


def _real_header():
    """(abi_version, table_size, desc_size) of the loaded dnnpool's table."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return tuple((ctypes.c_uint32 * 3).from_address(get(dp._core._C_API, CAPSULE_NAME)))


def test_capsule_header():
    abi, table_size, desc_size = _real_header()
    assert abi == dp.ABI_VERSION and desc_size > 0
    assert table_size == 16 + 16 * ctypes.sizeof(ctypes.c_void_p)   # header + 16 functions


@pytest.mark.parametrize("field, delta, message", [
    (0, +1, "ABI version mismatch"), (1, -8, "too old"), (2, +8, "too old")])
def test_incompatible_table_refused(consumer_site, field, delta, message):
    """Both consumer modules (Cython and plain C), meeting a table of another ABI
    (or a smaller one), refuse to import instead of calling through it."""
    header = list(_real_header())
    header[field] += delta
    run = _run(consumer_site, "-c", textwrap.dedent(f"""
        import ctypes, dnnpool._core
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        table = (ctypes.c_uint32 * 64)(*{header})          # no usable function pointers
        capsule_name = ctypes.create_string_buffer({CAPSULE_NAME!r})   # must outlive the capsule
        dnnpool._core._C_API = new(ctypes.addressof(table), ctypes.addressof(capsule_name), None)
        import importlib.machinery, importlib.util, pathlib
        for name in ("_batch", "_cpool"):     # loaded alone: the package would stop at _batch
            path, = [p for p in pathlib.Path("pool_consumer").iterdir() if p.name.startswith(name + ".")
                     and p.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))]
            spec = importlib.util.spec_from_file_location("pool_consumer." + name, path)
            try:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            except ImportError as exc:
                print("ImportError:", exc)
        """))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 2, run.stdout
    assert all(line.startswith("ImportError:") and message in line for line in lines), run.stdout
