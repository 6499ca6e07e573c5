"""Smoke test of `dnnpool bench`: one tiny case with whatever peers are installed.

Only structure and correctness cross-checks are asserted, never timings.
"""
import json
import math
import os

import numpy as np
import pytest

import dnnpool as dp
from dnnpool.bench import format_table, run_benchmark, to_json
from dnnpool.bench import peers, runner, shapes
from childproc import run_python

TINY = dict(cases="tiny-maxpool", layouts=["NCX"], dtypes=["f32"], threads=[1], repeat=2,
            quick=True, progress=False)


@pytest.fixture(scope="module")
def result():
    return run_benchmark(**TINY)


def test_result_structure(result):
    assert result["schema"] == "dnnpool-bench/1"
    assert result["copy_gbps"] > 0
    assert result["copy_gbps_by_threads"] == {"1": result["copy_gbps"]}
    assert result["settings"]["repeat"] == 2
    assert set(result["engines"]) == {"dnnpool", *peers.PEER_NAMES}
    assert result["engines"]["dnnpool"]["available"]
    (record,) = result["results"]
    assert (record["case"], record["layout"], record["dtype"], record["threads"]) == (
        "tiny-maxpool", "NCX", "f32", 1)
    assert record["src_shape"] == [1, 1, 4, 4] and record["dst_shape"] == [1, 1, 2, 2]
    assert record["bytes"] == (16 + 4) * 4
    assert record["median_us"]["dnnpool"] > 0
    assert record["repetitions"] == 2
    for others in (record["other_load_cpus"], result["machine"]["other_load_cpus"]):
        assert others is None or others >= 0


def test_every_installed_peer_is_timed_or_says_why(result):
    (record,) = result["results"]
    for name, info in result["engines"].items():
        if not info["available"]:
            assert "not installed" in info["reason"]
            assert name not in record["median_us"]
            continue
        assert (name in record["median_us"]) != (name in record["not_available"]), name
    timed_peers = [name for name in record["median_us"] if name != "dnnpool"]
    if timed_peers:
        assert record["best_peer"] == min(timed_peers, key=record["median_us"].get)
        best = record["median_us"][record["best_peer"]]
        assert record["ratio_to_best_peer"] == pytest.approx(record["median_us"]["dnnpool"] / best)
    else:
        assert record["best_peer"] is None and record["ratio_to_best_peer"] is None


def test_peers_agree_with_dnnpool_on_the_tiny_case(result):
    # Max pooling is exact: every peer must return dnnpool's values.
    assert result["results"][0]["mismatches"] == {}


def test_a_variant_whose_output_is_smaller_than_its_input_has_no_floor(result):
    (record,) = result["results"]                # tiny-maxpool: k2 s2
    assert record["floor_us"] is None and record["floor_ratio"] is None


def test_the_floor_is_timed_with_the_engines_and_is_no_peer():
    # inception's k3 s1 p1: the output is as large as the input
    (record,) = run_benchmark(**dict(TINY, cases=["inception-avgpool-excl"]))["results"]
    assert not any(name.startswith("floor") for name in record["median_us"])
    assert record["best_peer"] is None or not record["best_peer"].startswith("floor")
    assert record["floor_us"] > 0
    if record["best_peer"]:
        best = record["median_us"][record["best_peer"]]
        assert record["floor_ratio"] == pytest.approx(record["floor_us"] / best)
    else:
        assert record["floor_ratio"] is None


def test_a_multi_threaded_floor_keeps_the_faster_thread_count():
    variant = shapes.Variant(shapes.CASES[0], "NCX", "f32", 2)
    samples = {"dnnpool": [3.0, 3.0], "floor/1": [1.0, 1.2], "floor/2": [0.5, 0.7]}
    record = runner._summarize(variant, samples, {}, {}, {}, 10.0)
    assert record["floor_us"] == pytest.approx(0.6e6) and record["floor_ratio"] is None
    assert set(record["median_us"]) == {"dnnpool"}
    samples["onednn"] = [2.0, 2.0]
    record = runner._summarize(variant, dict(samples, **{"floor/2": [1.5, 1.7]}), {}, {}, {}, 10.0)
    assert record["floor_us"] == pytest.approx(1.1e6)
    assert record["best_peer"] == "onednn" and record["floor_ratio"] == pytest.approx(1.1 / 2.0)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("case,indices", [("resnet50-maxpool", False), ("k3-maxpool-indices", True),
                                          ("k7-maxpool", False)])
def test_the_floor_reads_the_input_and_writes_the_output_once(case, indices, threads):
    from dnnpool.bench import floor
    (case,) = [c for c in shapes.CASES if c.name == case]
    variant = shapes.Variant(case, "NCX", "bf16", threads)
    read, written = floor.byte_counts(variant)
    assert read == 2 * np.prod(variant.src_shape)
    assert written == (2 + 8 * indices) * np.prod(variant.dst_shape)
    prepared = floor.prepare_all(variant)
    if written < read:                           # resnet50's k3 s2: no floor
        assert prepared == {} and not floor.has_floor(variant)
        return
    assert sorted(prepared) == sorted({"floor/1", f"floor/{threads}"})
    try:
        for entry in prepared.values():
            assert not entry.result().any()
            entry.run()
            out = entry.result()
            assert out.nbytes == written
            assert out.all()           # every part written, not just the calling thread's
    finally:
        for entry in prepared.values():
            entry.close()


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_a_job_s_parts_run_once_each_the_first_on_the_calling_thread(parts):
    import threading
    from dnnpool.bench.parallel import parts_runner
    ran = []
    works = [lambda p=p: ran.append((p, threading.get_ident())) for p in range(parts)]
    run, close = parts_runner(works)
    try:
        for _ in range(2):
            ran.clear()
            run()
            assert sorted(p for p, _ in ran) == list(range(parts))
            assert dict(ran)[0] == threading.get_ident()
            assert all(ident != threading.get_ident() for p, ident in ran if p > 0)
    finally:
        close()


@pytest.mark.parametrize("threads", [1, 2])
def test_the_copy_probe_reports_a_positive_bandwidth(threads):
    gbps = runner.copy_bandwidth(megabytes=4, repeat=2, threads=threads)
    assert math.isfinite(gbps) and gbps > 0.1


def test_a_case_with_indices_asks_every_peer_for_them():
    # Each peer returns indices too (oneDNN cannot: its pooling keeps a
    # workspace); the maxima of those that ran agree with dnnpool's.
    result = run_benchmark(**dict(TINY, cases=["k3-maxpool-indices"], layouts=["NCX", "NXC"]))
    records = result["results"]
    assert [record["layout"] for record in records] == ["NCX", "NXC"]
    for record in records:
        assert record["mismatches"] == {}
        assert record["bytes"] == 128 * 64 * 64 * (4 + 4 + 8)   # values in, values and int64 indices out
        assert record["median_us"]["dnnpool"] > 0
        if result["engines"]["onednn"]["available"]:
            assert "workspace" in record["not_available"]["onednn"]
        if result["engines"]["pytorch"]["available"]:
            assert "pytorch" in record["median_us"]
    if result["engines"]["onnxruntime"]["available"]:
        assert "onnxruntime" in records[0]["median_us"]


def test_isolated_engines_give_the_same_record():
    """Every engine in a worker process of its own (the default for more than one thread):
    the same engines timed or n/a, the same cross-checks, and a peer that cannot run a
    variant says why from its process."""
    isolated = run_benchmark(**dict(TINY, cases=["tiny-maxpool", "qlinear"], dtypes=["f32", "u8"],
                                    threads=[2]))
    assert isolated["settings"]["isolate"] == "auto"
    # %copy of a 2-thread variant is against a copy by two threads
    assert set(isolated["copy_gbps_by_threads"]) == {"1", "2"}
    records = {record["case"]: record for record in isolated["results"]}
    tiny, quantized = records["tiny-maxpool"], records["qlinear-avgpool-u8"]
    for record in (tiny, quantized):
        assert record["isolated"] and record["threads"] == 2
        assert record["median_us"]["dnnpool"] > 0 and record["mismatches"] == {}
        assert record["copy_gbps"] == isolated["copy_gbps_by_threads"]["2"]
        assert record["fraction_of_copy"]["dnnpool"] == pytest.approx(
            record["gbps"]["dnnpool"] / record["copy_gbps"])
        assert record["other_load_cpus"] is None or record["other_load_cpus"] >= 0
    if isolated["engines"]["openvino"]["available"]:
        assert "FakeQuantize" in quantized["not_available"]["openvino"]
    in_process = run_benchmark(**dict(TINY, threads=[2], isolate="never"))
    (record,) = in_process["results"]
    assert not record["isolated"]
    assert set(record["median_us"]) == set(tiny["median_us"])
    assert set(record["not_available"]) == set(tiny["not_available"])


def test_worker_reports_an_engine_error_and_exits_on_request():
    from dnnpool.bench.isolation import EngineProcess
    worker = EngineProcess("dnnpool")
    try:
        (variant,) = shapes.select_variants(["tiny-maxpool"], ["NCX"], ["f32"], (1,))
        engine = worker.prepare(variant)
        assert engine.sample(3, 0.001) > 0
        assert engine.result().shape == (1, 1, 2, 2)
        engine.close()
        with pytest.raises(RuntimeError, match="AttributeError"):   # sample before prepare
            worker.call("sample", (1, 0.0))
    finally:
        worker.stop()
    assert worker._process.returncode == 0


def test_settling_waits_for_a_worker_to_stop_using_cpu_time(monkeypatch):
    """settle() returns after two polls without new CPU time, and gives up at its limit."""
    from dnnpool.bench import isolation
    monkeypatch.setattr(isolation.time, "sleep", lambda seconds: None)
    worker = isolation.EngineProcess.__new__(isolation.EngineProcess)
    readings = iter([0.0, 0.01, 0.02, 0.02, 0.03, 0.03, 0.03, 0.5])
    polls = []
    worker.cpu_seconds = lambda: polls.append(1) or next(readings)
    worker.wait_until_idle()
    assert len(polls) == 7          # the first reading, then spinning, quiet, spinning, quiet, quiet
    ticks = iter(range(10 ** 6))
    worker.cpu_seconds = lambda: next(ticks) * 0.01   # a worker that never stops
    clock = iter(i * 0.1 for i in range(10 ** 6))
    monkeypatch.setattr(isolation.time, "perf_counter", lambda: next(clock))
    worker.wait_until_idle(limit_seconds=1.0)
    assert next(ticks) < 20         # gave up after about ten polls


def test_every_timed_sample_follows_untimed_calls(monkeypatch):
    """In process as in the workers: a 1-thread sample of one call must not time a cold cache."""
    from dnnpool.bench import isolation
    from dnnpool.bench.peers import base
    seen = []
    original = base.Prepared.sample

    def recording(self, count, warm_up_seconds=0.0):
        seen.append(warm_up_seconds)
        return original(self, count, warm_up_seconds)

    monkeypatch.setattr(base.Prepared, "sample", recording)
    record = run_benchmark(**dict(TINY, peers_only=[], isolate="never"))["results"][0]
    assert record["isolated"] is False
    timed = [w for w in seen if w > 0]
    assert timed == [isolation.WARM_UP_SECONDS] * TINY["repeat"]   # (k2 s2: no floor to time)


def test_a_variant_no_engine_can_run_has_no_timings():
    assert runner._time_all({}, dict(runner.QUICK)) == {}


def test_run_benchmark_rejects_an_unknown_isolation():
    with pytest.raises(ValueError, match="isolate='sometimes'"):
        run_benchmark(**dict(TINY, isolate="sometimes"))


def test_json_round_trip_and_table(result):
    assert json.loads(to_json(result)) == result
    table = format_table(result)
    assert "tiny-maxpool" in table and "dnnpool" in table and "copy bandwidth" in table
    assert "  ratio  floor  GB/s  %copy  " in table
    # the floor's cell follows the ratio's; a result saved before the floor existed shows "-"
    from dnnpool.bench import report
    (record,) = result["results"]
    engines = report._engine_columns(result)
    cells = report._row(record, engines)
    ratio_at = 4 + len(engines) + 1
    expected = "-" if record["floor_ratio"] is None else f"{record['floor_ratio']:.2f}"
    assert cells[ratio_at + 1] == expected
    saved_before = {key: value for key, value in record.items() if "floor" not in key}
    assert report._row(saved_before, engines)[ratio_at + 1] == "-"
    assert "tiny-maxpool" in format_table(dict(result, results=[saved_before]))


def test_the_header_gives_each_thread_count_s_copy_bandwidth(result):
    from dnnpool.bench.report import format_markdown
    two = dict(result, copy_gbps=30.14, copy_gbps_by_threads={"1": 30.14, "2": 27.26})
    assert "30.1 GB/s (1 thread), 27.3 GB/s (2 threads)" in format_table(two)
    assert "30.1 GB/s (1 thread), 27.3 GB/s (2 threads)" in format_markdown(two)
    saved_before = {key: value for key, value in result.items() if key != "copy_gbps_by_threads"}
    assert f"{result['copy_gbps']:.1f} GB/s" in format_table(saved_before)


def test_cli_json_output(capsys):
    from dnnpool.cli import main
    status = main(["bench", "--case", "tiny-maxpool", "--layout", "NXC", "--dtype", "f32",
                   "--threads", "1", "--repeat", "1", "--quick", "--no-progress", "--json"])
    assert status == 0
    parsed = json.loads(capsys.readouterr().out)
    assert [(r["case"], r["layout"]) for r in parsed["results"]] == [("tiny-maxpool", "NXC")]


def test_cli_renders_a_saved_result(result, tmp_path, capsys):
    from dnnpool.cli import main
    saved = tmp_path / "bench.json"
    saved.write_text(to_json(result))
    assert main(["bench", "--from-json", str(saved), "--markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith("| tiny-maxpool |"))
    assert row.split(" | ")[1:4] == ["NCX", "f32", "1"]
    saved.write_text(json.dumps({"schema": "something-else"}))
    assert main(["bench", "--from-json", str(saved)]) == 2
    assert "schema" in capsys.readouterr().err


def test_cli_list_names_every_case(capsys):
    from dnnpool.cli import main
    assert main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(case.name in out for case in shapes.CASES)


def test_cli_rejects_bad_filters(capsys):
    from dnnpool.cli import main
    with pytest.raises(SystemExit):
        main(["bench", "--layout", "NHWC"])
    assert "NHWC" in capsys.readouterr().err
    assert main(["bench", "--case", "no-such-case", "--no-progress"]) == 2
    assert "no-such-case" in capsys.readouterr().err


def test_shape_set_holds_the_issue_targets():
    by_name = {case.name: case for case in shapes.CASES}
    resnet = by_name["resnet50-maxpool"]
    assert (resnet.src, resnet.kernel, resnet.strides, resnet.pads) == (
        (1, 64, 112, 112), (3, 3), (2, 2), (1, 1))
    assert resnet.dst_spatial == (56, 56)
    assert by_name["global-avgpool-n32"].dst_spatial == (1, 1)
    assert by_name["avgpool1d-k4s4"].dst_spatial == (1024,)
    assert by_name["k15-maxpool"].dst_spatial == (256, 256)
    assert by_name["qlinear-avgpool-u8"].quantized
    assert sum(case.target for case in shapes.CASES) == 10
    variant = shapes.Variant(resnet, "NXC", "bf16", 2)
    assert variant.src_shape == (1, 112, 112, 64) and variant.dst_shape == (1, 56, 56, 64)
    assert variant.bytes_moved == (64 * 112 * 112 + 64 * 56 * 56) * 2


def test_random_cases_are_seeded_valid_and_bounded():
    cases = shapes.random_cases(60, seed=5)
    assert cases == shapes.random_cases(60, seed=5)
    assert cases != shapes.random_cases(60, seed=6)
    assert [c.name for c in cases[:2]] == ["random-5-0", "random-5-1"]
    assert {len(c.src) - 2 for c in cases} == {1, 2, 3}
    assert {c.kind for c in cases} == {"MaxPool", "AvgPool"}
    assert len({c.src[1] for c in cases}) > 5
    for case in cases:
        assert math.prod(case.src) * 4 <= shapes.RANDOM_MAX_BYTES
        assert min(case.dst_spatial) >= 1
        assert case.attributes in case.description
        # every problem is one the descriptor accepts, with the output size the case computes
        attrs = dict(kernel=list(case.kernel), strides=list(case.strides),
                     pads_begin=list(case.pads_begin), pads_end=list(case.pads_end),
                     dilations=list(case.dilation))
        if case.kind == "AvgPool":
            attrs["exclude_pad"] = case.exclude_pad
        desc = dp.PoolingDesc(case.kind, case.src, "f32", data_format="NCX", **attrs)
        assert tuple(desc.dst_shape[2:]) == case.dst_spatial


def test_cli_times_random_problems(capsys):
    from dnnpool.cli import main
    status = main(["bench", "--random", "2", "--seed", "3", "--layout", "NCX", "--dtype", "f32",
                   "--threads", "1", "--repeat", "1", "--quick", "--no-progress", "--json"])
    assert status == 0
    parsed = json.loads(capsys.readouterr().out)
    expect = shapes.random_cases(2, 3)
    assert [r["case"] for r in parsed["results"]] == [c.name for c in expect]
    assert [r["description"] for r in parsed["results"]] == [c.description for c in expect]
    assert main(["bench", "--random", "3", "--seed", "3", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(c.name in listed and c.description in listed for c in shapes.random_cases(3, 3))
    with pytest.raises(SystemExit):
        main(["bench", "--random", "0"])
    assert "positive" in capsys.readouterr().err


_ONEDNN_THREADS_PROBE = """
import os, sys
import numpy as np
from dnnpool.bench.peers import onednn
threads = int(sys.argv[1])
before = len(os.listdir("/proc/self/task"))
pool = onednn.OneDNNPooling("max", (1, 64, 16, 16), (1, 64, 8, 8), np.float32, (2, 2), (2, 2),
                            (0, 0), (0, 0), num_threads=threads)
setting = onednn.load_library().get_num_threads()
src = np.arange(64 * 256, dtype=np.float32).reshape(1, 64, 16, 16)
dst = np.empty((1, 64, 8, 8), np.float32)
pool.bind(src, dst)
for _ in range(3):
    pool.activate()
    pool.run()
expected = src.reshape(1, 64, 8, 2, 8, 2).max(axis=(3, 5))
print(len(os.listdir("/proc/self/task")) - before, setting, bool((dst == expected).all()))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="counts the process's threads in /proc, on a machine of 2+ CPUs")
@pytest.mark.parametrize("threads", [1, 2])
def test_a_onednn_peer_runs_with_the_thread_count_it_was_created_for(threads):
    """oneDNN's ncsp pooling fixes its thread count when the primitive is created: a 1-thread
    primitive created under the default OpenMP setting would run on every CPU (it did, and the
    bench's 1-thread oneDNN NCX rows were 2-thread timings). A fresh process counts the threads
    OpenMP starts; the setting in force outside creation is left as it was."""
    try:
        peers.engine_module("onednn").version()
    except ImportError as error:
        pytest.skip(f"real oneDNN not available: {error}")
    child = run_python(["-c", _ONEDNN_THREADS_PROBE, str(threads)], OPENBLAS_NUM_THREADS="1",
                       OMP_NUM_THREADS=str(os.cpu_count()), OMP_THREAD_LIMIT=str(os.cpu_count()))
    assert child.returncode == 0, child.stderr
    out = child.stdout.split()
    started, setting, correct = int(out[0]), int(out[1]), out[2] == "True"
    assert correct
    assert setting == os.cpu_count()   # creation left the process's setting alone
    if threads == 1:
        assert started == 0
    else:
        assert started >= 1   # the probe sees a multi-threaded primitive's threads
