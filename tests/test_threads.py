"""Threading never changes a result: outputs are bit-identical for any thread count,
whether set per primitive or globally, and one primitive may run from several
Python threads at once."""

import json
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import dnnpool as dp
import reference

# Large enough that every kernel splits its work across threads.
CASES = {
    "avg_f32_nxc_2d": dict(kind="AvgPool", src_shape=(4, 40, 40, 48), dtype="f32", kernel=[3, 3],
                           strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=False),
    "avg_bf16_ncx_2d_ceil": dict(kind="AvgPool", src_shape=(3, 24, 37, 41), dtype="bf16",
                                 kernel=[3, 2], strides=[2, 3], rounding_type="ceil",
                                 exclude_pad=True, data_format="NCX"),
    "avg_f64_nxc_1d_padded_extent": dict(kind="AvgPool", src_shape=(8, 3000, 16), dtype="f64",
                                         kernel=[5], strides=[3], pads_begin=[2], pads_end=[4],
                                         include_pad_divisor="padded_extent",
                                         rounding_type="ceil", drop_end_pad_windows=True),
    "avg_f16_nxc_3d_dilated": dict(kind="AvgPool", src_shape=(2, 12, 14, 16, 24), dtype="f16",
                                   kernel=[2, 3, 2], dilations=[2, 1, 2], auto_pad="same_upper"),
    "avg_u8_quantized_nxc": dict(kind="AvgPool", src_shape=(4, 33, 35, 32), dtype="u8",
                                 kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
                                 exclude_pad=True, src_scale=0.37, src_zero_point=128,
                                 dst_scale=0.21, dst_zero_point=120),
    # window blocks streaming down NCX planes: 2 threads split a plane inside a block
    "avg_f32_ncx_2d_k15_streamed": dict(kind="AvgPool", src_shape=(1, 3, 37, 250), dtype="f32",
                                        kernel=[15, 15], pads_begin=[7, 7], pads_end=[7, 7],
                                        exclude_pad=True, data_format="NCX"),
    "avg_f16_nxc_2d_k9_streamed": dict(kind="AvgPool", src_shape=(1, 37, 120, 16), dtype="f16",
                                       kernel=[9, 9], pads_begin=[4, 4], pads_end=[4, 4],
                                       exclude_pad=True),
    # stride-1 rows sharing their loads four output rows at a time: splits
    # fall inside a group of rows
    "avg_f32_ncx_2d_k7_shared_rows": dict(kind="AvgPool", src_shape=(1, 3, 41, 90), dtype="f32",
                                          kernel=[7, 7], pads_begin=[3, 3], pads_end=[3, 3],
                                          data_format="NCX"),
    "avg_bf16_nxc_2d_k5_shared_rows": dict(kind="AvgPool", src_shape=(1, 29, 60, 32), dtype="bf16",
                                           kernel=[5, 5], pads_begin=[2, 2], pads_end=[2, 2],
                                           exclude_pad=True),
    "max_f32_ncx_2d": dict(kind="MaxPool", src_shape=(4, 32, 45, 45), dtype="f32", kernel=[3, 3],
                           strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], data_format="NCX"),
    "max_f16_nxc_3d_colmajor": dict(kind="MaxPool", src_shape=(2, 10, 12, 14, 40), dtype="f16",
                                    kernel=[2, 2, 3], strides=[2, 1, 2], rounding_type="ceil",
                                    index_order="column_major"),
    # pooled columns, four output rows pooling together: splits fall inside a group
    "max_bf16_nxc_2d_k7_pooled_columns": dict(kind="MaxPool", src_shape=(2, 23, 30, 20), dtype="bf16",
                                              kernel=[7, 7], pads_begin=[3, 3], pads_end=[3, 3]),
    "max_s8_nxc_2d_dilated": dict(kind="MaxPool", src_shape=(4, 36, 36, 64), dtype="s8",
                                  kernel=[3, 3], dilations=[2, 2], auto_pad="same_lower"),
}
NUMPY_DTYPES = reference.NUMPY_DTYPES


def _src(attrs, seed=0):
    rng = np.random.default_rng(seed)
    shape, dtype = attrs["src_shape"], attrs["dtype"]
    if dtype in ("s8", "u8"):
        info = np.iinfo(NUMPY_DTYPES[dtype])
        return rng.integers(info.min, info.max + 1, shape).astype(NUMPY_DTYPES[dtype])
    # few distinct values: plenty of ties for MaxPool, rounding work for AvgPool
    return (rng.integers(-50, 50, shape) * rng.uniform(0.5, 2.0, shape)).astype(NUMPY_DTYPES[dtype])


def _run(prim, src, kind):
    if kind == "MaxPool":
        dst, idx = prim.execute(src, with_indices=True)
        return dst.tobytes() + idx.tobytes()
    return prim.execute(src).tobytes()


@pytest.fixture
def restore_threads():
    saved = dp.get_num_threads()
    yield
    dp.set_num_threads(saved)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_are_bit_identical_for_any_thread_count(name, restore_threads):
    attrs = CASES[name]
    pd = dp.PoolingDesc(**attrs)
    src = _src(attrs)
    serial = _run(dp.Pooling(pd, num_threads=1), src, attrs["kind"])
    for n in (2, 3, 0):
        assert _run(dp.Pooling(pd, num_threads=n), src, attrs["kind"]) == serial, f"num_threads={n}"
    for n in (1, 2, 3):
        dp.set_num_threads(n)
        assert dp.get_num_threads() == n
        assert _run(dp.Pooling(pd), src, attrs["kind"]) == serial, f"set_num_threads({n})"


@pytest.mark.parametrize("name", ["avg_f32_nxc_2d", "max_f32_ncx_2d", "avg_u8_quantized_nxc"])
def test_one_primitive_runs_from_many_python_threads(name):
    attrs = CASES[name]
    prim = dp.Pooling(dp.PoolingDesc(**attrs), num_threads=2)
    sources = [_src(attrs, seed) for seed in range(6)]
    serial = [_run(prim, src, attrs["kind"]) for src in sources]
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(lambda s: _run(prim, s, attrs["kind"]), sources))
    assert concurrent == serial


@pytest.mark.parametrize("name", sorted(n for n in CASES if "quantized" not in n))
def test_threaded_result_matches_vectorised_reference(name):
    """The threaded kernels on large tensors agree with the reference's second formulation."""
    attrs = CASES[name]
    src = _src(attrs)
    prim = dp.Pooling(dp.PoolingDesc(**attrs), num_threads=0)
    want, want_index = reference.padded_formulation(src, attrs)
    if attrs["kind"] == "MaxPool":
        dst, idx = prim.execute(src, with_indices=True)
        np.testing.assert_array_equal(dst.astype(np.float64), want)
        np.testing.assert_array_equal(idx, want_index)
        return
    dst = prim.execute(src)
    if attrs["dtype"] in ("f16", "bf16"):
        # numpy/ml_dtypes round the f64 mean to the destination type; 1 ulp covers dnnpool's
        # f32 division before its own rounding
        rounded = want.astype(NUMPY_DTYPES[attrs["dtype"]])
        reference.assert_within_ulp(dst, rounded, attrs["dtype"], 1, name)
    else:
        tol = 1e-12 if attrs["dtype"] == "f64" else 1e-5
        np.testing.assert_allclose(dst.astype(np.float64), want, rtol=tol,
                                   atol=tol * np.abs(src.astype(np.float64)).max())


def test_thread_pool_survives_many_calls_of_changing_size_and_thread_count():
    """Back-to-back calls reuse the pool's helpers job after job (each job's chunks claimed
    once, however many helpers it asks for, more helpers than cores included)."""
    names = ["avg_f32_nxc_2d", "max_f32_ncx_2d", "avg_f32_ncx_2d_k7_shared_rows"]
    runs = []
    for name in names:
        attrs = CASES[name]
        pd = dp.PoolingDesc(**attrs)
        src = _src(attrs)
        serial = _run(dp.Pooling(pd, num_threads=1), src, attrs["kind"])
        runs.append((pd, src, attrs["kind"], serial))
    primitives = {(i, n): dp.Pooling(run[0], num_threads=n)
                  for i, run in enumerate(runs) for n in (2, 3, 8)}
    for call in range(120):
        i, n = call % len(runs), (2, 3, 8)[call % 3]
        _, src, kind, serial = runs[i]
        assert _run(primitives[i, n], src, kind) == serial, f"call {call}: {names[i]}, {n} threads"


def test_threaded_calls_from_several_python_threads_at_once_keep_their_results():
    """One call at a time uses the pool; the others run on their own threads."""
    attrs = CASES["avg_f32_ncx_2d_k7_shared_rows"]
    pd = dp.PoolingDesc(**attrs)
    sources = [_src(attrs, seed) for seed in range(8)]
    serial = [_run(dp.Pooling(pd, num_threads=1), src, "AvgPool") for src in sources]
    prims = [dp.Pooling(pd, num_threads=n) for n in (2, 3)]

    def work(k):
        return [_run(prims[(k + r) % 2], sources[(k + r) % 8], "AvgPool") for r in range(12)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(work, range(4)))
    for k, got in enumerate(results):
        assert got == [serial[(k + r) % 8] for r in range(12)], f"python thread {k}"


def _threaded_result_in_child(name):
    attrs = CASES[name]
    return _run(dp.Pooling(dp.PoolingDesc(**attrs), num_threads=2), _src(attrs), attrs["kind"])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX only")
def test_a_forked_child_runs_threaded_calls():
    """The child of a fork has none of the parent's helper threads: its calls never wait for
    them (the caller takes every chunk no helper claims), and it starts a pool of its own."""
    name = "max_f32_ncx_2d"
    attrs = CASES[name]
    parent = _run(dp.Pooling(dp.PoolingDesc(**attrs), num_threads=2), _src(attrs), attrs["kind"])
    with multiprocessing.get_context("fork").Pool(1) as children:
        child = children.apply_async(_threaded_result_in_child, (name,)).get(timeout=120)
    assert child == parent


def _in_fresh_interpreter(tmp_path, code, **env):
    """Runs code in a new interpreter (a pool of its own) that imports this very dnnpool (the
    installed one, or the built checkout's), from a directory where no unbuilt source tree
    shadows it."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(dp.__file__)))
    path = os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])
    out = subprocess.run([sys.executable, "-c", "import dnnpool as dp\n" + code],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": path, **env})
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_the_default_thread_count_follows_openmp_settings(tmp_path):
    """0 follows OpenMP's count: OMP_NUM_THREADS, and threadpoolctl's limits on libgomp."""
    printed = _in_fresh_interpreter(tmp_path, "print(dp.get_num_threads())",
                                                    OMP_NUM_THREADS="3")
    assert printed == ["3"]
    pytest.importorskip("threadpoolctl")
    code = ("from threadpoolctl import threadpool_limits\n"
            "with threadpool_limits(limits=1, user_api='openmp'):\n"
            "    print(dp.get_num_threads())\n"
            "print(dp.get_num_threads())\n")
    assert _in_fresh_interpreter(tmp_path, code, OMP_NUM_THREADS="2") == ["1", "2"]



# Prints the caller's affinity and each helper thread's (named dnnpool-helper) of the child's
# own pool, after a threaded call that found the helper asleep (helpers sleep 200 us after
# a job); `before` runs after the helper has been woken once.
_HELPER_AFFINITY = """
import json, os, time
import numpy as np

def helper_affinities():
    found = []
    for tid in os.listdir('/proc/self/task'):
        with open(f'/proc/self/task/{{tid}}/comm') as comm:
            if comm.read().strip() == 'dnnpool-helper':
                found.append(sorted(os.sched_getaffinity(int(tid))))
    return found

prim = dp.Pooling(dp.PoolingDesc('MaxPool', (1, 32, 128, 128), kernel=[3, 3], strides=[1, 1]),
                  num_threads=2)
src = np.random.default_rng(0).standard_normal((1, 32, 128, 128)).astype(np.float32)
prim.execute(src)
time.sleep(0.05)
prim.execute(src)
{before}
time.sleep(0.05)
prim.execute(src)
print(json.dumps([sorted(os.sched_getaffinity(0)), helper_affinities()]))
"""

linux_with_two_cpus = pytest.mark.skipif(
    not os.path.isdir("/proc/self/task") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux and two CPUs")


def _affinities_in_child(tmp_path, before=""):
    return json.loads(" ".join(_in_fresh_interpreter(
        tmp_path, _HELPER_AFFINITY.format(before=before))))


@linux_with_two_cpus
def test_a_woken_helper_may_run_anywhere_but_on_the_callers_core(tmp_path):
    """Woken, a sleeping helper would land on the caller's core (the scheduler's wake
    affinity) and wait for it or preempt it: the caller first moves it off its own core."""
    caller, helpers = _affinities_in_child(tmp_path)
    assert len(helpers) == 1
    assert set(helpers[0]) < set(caller) and len(helpers[0]) == len(caller) - 1


@linux_with_two_cpus
def test_helpers_follow_a_caller_confined_to_one_core(tmp_path):
    """A caller allowed only one core shares it with its helpers: they never stay on the
    cores an earlier call sent them to."""
    confine = ("os.sched_setaffinity(0, set(os.sched_getaffinity(0))"
               " - set(helper_affinities()[0]))")
    caller, helpers = _affinities_in_child(tmp_path, confine)
    assert len(caller) == 1 and helpers == [caller]
