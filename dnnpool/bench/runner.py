"""Time dnnpool and the installed peers side by side on the shape set.

Per variant every engine gets the same input, is checked once against dnnpool's output, then
timed round-robin (multi-threaded variants with every engine in a worker process of its own,
see isolation.py): repetition r runs the engines in an order rotated by r, so drift (turbo,
other load, cache state) spreads evenly. Each sample runs an engine enough times back to back
to last about ``sample_seconds``, after WARM_UP_SECONDS of untimed calls: the engine before it
evicted the caches, and without them a 1-thread sample of one call would time a cold start
where the isolated, warmed 2-thread samples time the steady state. The reported time is the
median sample per call. Unless the caller fixes ``repeat``, a variant whose slowest engine
would make the repetitions outlast ``budget_seconds`` gets fewer of them (never below
MIN_REPEAT). The floor (floor.py: numpy reading the input and writing the output once) takes
its turn in the round robin like an engine, but is no peer.
"""
import functools
import math
import os
import platform
import statistics
import time

import numpy as np

from . import checks, floor, peers, shapes
from .isolation import WARM_UP_SECONDS, Workers
from .load import OtherLoad
from .parallel import parts_runner
from .progress import progress_bar

SCHEMA = "dnnpool-bench/1"
DEFAULTS = {"repeat": 15, "sample_seconds": 2e-3, "budget_seconds": 3.0, "gap_seconds": 0.0,
            "copy_megabytes": 256, "isolate": "auto"}
QUICK = dict(DEFAULTS, repeat=5, sample_seconds=5e-4, budget_seconds=1.0, copy_megabytes=64)
# When engines run in worker processes of their own: "auto" for variants of more than one thread.
ISOLATE = ("auto", "always", "never")
MIN_REPEAT = 3
_MAX_CALLS_PER_SAMPLE = 10000


def available_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def copy_bandwidth(megabytes=256, repeat=5, threads=1):
    """GB/s of a large numpy copy, counting bytes read plus bytes written; with threads > 1,
    that many threads each copy one contiguous part, the calling thread among them
    (parallel.py)."""
    src = np.ones(megabytes * 2**20 // 4, np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # fault the pages in before timing
    parts = zip(np.array_split(dst, threads), np.array_split(src, threads))
    run, close = parts_runner([functools.partial(np.copyto, *part) for part in parts])
    try:
        best = min(_timed(run) for _ in range(repeat))
    finally:
        close()
    return 2 * src.nbytes / best / 1e9


def _timed(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def _machine():
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next(line.split(":", 1)[1].strip() for line in cpuinfo
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    info = {"cpu": model, "cpus": available_cpus(), "python": platform.python_version(),
            "numpy": np.__version__}
    try:
        import dnnpool
        info["dnnpool_isa"] = dnnpool.isa()
    except (ImportError, AttributeError):
        pass
    return info


def _isolated(variant, settings):
    return settings["isolate"] == "always" or (settings["isolate"] == "auto" and variant.threads > 1)


def _prepare_all(variant, src, engine_names, workers):
    """Each engine set up on the variant's input: in this process on src (which the caller
    keeps alive: engines may run on its buffer), or (workers) each in its own."""
    prepared, not_available = {}, {}
    for name in engine_names:
        try:
            prepared[name] = (workers.prepare(name, variant) if workers is not None
                              else peers.engine_module(name).prepare(variant, src))
        except peers.NotSupported as reason:
            not_available[name] = str(reason)
        except Exception as error:  # a peer failing must not stop the benchmark
            not_available[name] = f"error: {type(error).__name__}: {error}"[:200]
    return prepared, not_available


def _warm_up_and_check(variant, prepared, not_available):
    """Run each engine once and compare its output with dnnpool's; an engine that fails here
    moves to not_available instead of stopping the benchmark."""
    outputs = {}
    for name, engine in list(prepared.items()):
        try:
            engine.sample(1)
            outputs[name] = np.array(engine.result(), copy=True)
        except Exception as error:
            not_available[name] = f"error at run time: {type(error).__name__}: {error}"[:200]
            del prepared[name]
    reference = outputs.get(peers.SUBJECT)
    if reference is None:
        return {}
    mismatches = {}
    for name, output in outputs.items():
        problem = checks.compare(reference, output, variant.dtype, variant.case.kind)
        if problem and name != peers.SUBJECT:
            mismatches[name] = problem
    return mismatches


def _calls_per_sample(engine, sample_seconds):
    """(calls per sample, estimated seconds per sample) from the best of three calls."""
    one_call = max(min(engine.sample(1) for _ in range(3)), 1e-7)
    calls = max(1, min(_MAX_CALLS_PER_SAMPLE, math.ceil(sample_seconds / one_call)))
    return calls, calls * one_call


def _repetitions(sample_costs, settings):
    budget = settings["budget_seconds"]
    if budget is None:
        return settings["repeat"]
    affordable = int(budget / max(sum(sample_costs), 1e-9))
    return max(min(MIN_REPEAT, settings["repeat"]), min(settings["repeat"], affordable))


def _time_all(prepared, settings, warm_up_seconds=WARM_UP_SECONDS):
    """{engine: [seconds per call, one per repetition]}, engines interleaved round-robin;
    each sample after warm_up_seconds of untimed calls (isolation.py says why)."""
    names = list(prepared)
    if not names:  # no engine could run the variant
        return {}
    plan = {name: _calls_per_sample(prepared[name], settings["sample_seconds"])
            for name in names}
    repeat = _repetitions([cost for _, cost in plan.values()], settings)
    samples = {name: [] for name in names}
    for repetition in range(repeat):
        shift = repetition % len(names)
        for name in names[shift:] + names[:shift]:
            count = plan[name][0]
            samples[name].append(prepared[name].sample(count, warm_up_seconds) / count)
            prepared[name].settle()
            if settings["gap_seconds"]:
                time.sleep(settings["gap_seconds"])  # let spinning worker threads park
    return samples


def _summarize(variant, samples, not_available, mismatches, implementations, copy_gbps):
    floor_medians = [statistics.median(values) for name, values in samples.items()
                     if floor.is_floor(name)]
    samples = {name: values for name, values in samples.items() if not floor.is_floor(name)}
    medians = {name: statistics.median(values) for name, values in samples.items()}
    peer_times = {name: t for name, t in medians.items() if name != peers.SUBJECT}
    best_peer = min(peer_times, key=peer_times.get) if peer_times else None
    subject = medians.get(peers.SUBJECT)
    floor_seconds = min(floor_medians) if floor_medians else None   # the faster thread count
    gbps = {name: variant.bytes_moved / t / 1e9 for name, t in medians.items()}
    case = variant.case
    return {
        "case": case.name, "description": case.description, "target": case.target,
        "kind": case.kind, "layout": variant.layout, "dtype": variant.dtype,
        "threads": variant.threads, "src_shape": list(variant.src_shape),
        "dst_shape": list(variant.dst_shape), "kernel": list(case.kernel),
        "strides": list(case.strides), "pads": list(case.pads_begin),
        "dilations": list(case.dilation), "exclude_pad": case.exclude_pad,
        "quantized": case.quantized, "bytes": variant.bytes_moved,
        "repetitions": max(map(len, samples.values()), default=0),
        "median_us": {name: t * 1e6 for name, t in medians.items()},
        "min_us": {name: min(values) * 1e6 for name, values in samples.items()},
        "best_peer": best_peer,
        "ratio_to_best_peer": (subject / peer_times[best_peer]
                               if subject is not None and best_peer else None),
        "floor_us": floor_seconds * 1e6 if floor_seconds is not None else None,
        "floor_ratio": (floor_seconds / peer_times[best_peer]
                        if floor_seconds is not None and best_peer else None),
        "gbps": gbps,
        "copy_gbps": copy_gbps,
        "fraction_of_copy": {name: value / copy_gbps for name, value in gbps.items()},
        "not_available": not_available, "mismatches": mismatches,
        "implementation": implementations,
    }


def run_variant(variant, engine_names, settings, copy_gbps, workers=None):
    """Benchmark one variant on the given engines (workers: each in its worker process);
    returns its result record."""
    load = OtherLoad(workers)
    src = None if workers is not None else variant.make_source()
    prepared, not_available = _prepare_all(variant, src, engine_names, workers)
    try:
        mismatches = _warm_up_and_check(variant, prepared, not_available)
        if prepared:  # the floor, timed in turn with the engines that can run the variant
            prepared.update(floor.prepare_all(variant))
        samples = _time_all(prepared, settings)
    finally:
        for engine in prepared.values():
            engine.close()
    implementations = {name: engine.implementation for name, engine in prepared.items()
                       if engine.implementation}
    record = _summarize(variant, samples, not_available, mismatches, implementations, copy_gbps)
    record["other_load_cpus"] = load.cpus()
    record["isolated"] = workers is not None
    return record


def run_benchmark(cases=None, layouts=None, dtypes=None, threads=None, repeat=None, quick=False,
                  peers_only=None, targets_only=False, progress=True, gap_seconds=None,
                  isolate=None, random=None, seed=0):
    """Run the benchmark and return its JSON-ready result (see docs/benchmark.md).

    cases: name substrings (a string or a list; any may match); layouts: "NCX"/"NXC";
    dtypes: "f32" "bf16" "f16" "u8" (default: each case's, f32 only with quick);
    threads: thread counts (default 1 and every available CPU); peers_only: peer names to
    compare with (default every installed one); quick: fewer, shorter samples; repeat: exact
    number of samples per engine (default: up to 15 within a time budget per variant);
    isolate: "auto" (default: variants of more than one thread run each engine in a worker
    process of its own), "always" or "never"; random: time that many random problems
    (shapes.random_cases, from `seed`) instead of the embedded shape set.
    """
    settings = dict(QUICK if quick else DEFAULTS)
    if repeat is not None:
        settings["repeat"], settings["budget_seconds"] = int(repeat), None
    if gap_seconds is not None:
        settings["gap_seconds"] = float(gap_seconds)
    if isolate is not None:
        if isolate not in ISOLATE:
            raise ValueError(f"isolate={isolate!r}: must be one of {', '.join(ISOLATE)}")
        settings["isolate"] = isolate
    if settings["repeat"] < 1:
        raise ValueError(f"repeat={settings['repeat']}: must be at least 1")
    cases = [cases] if isinstance(cases, str) else cases
    if quick and not dtypes:
        dtypes = ["f32", "u8"]
    threads = sorted(set(threads or (1, available_cpus())))
    case_set = shapes.random_cases(int(random), seed) if random else shapes.CASES
    variants = shapes.select_variants(cases, layouts, dtypes, threads, targets_only, case_set)
    if not variants:
        raise ValueError(f"no benchmark case matches cases={cases} layouts={layouts} "
                         f"dtypes={dtypes}")
    engines = peers.discover(peers_only)
    if not engines[peers.SUBJECT]["available"]:
        raise RuntimeError(f"dnnpool cannot be imported: {engines[peers.SUBJECT]['reason']}")
    names = [name for name, info in engines.items() if info["available"]]
    machine = _machine()
    workers = Workers()
    load = OtherLoad(workers)
    # %copy compares each variant with a copy by as many threads: one core may not saturate
    # memory, and on some machines (this one) one core already does.
    copy_by_threads = {n: copy_bandwidth(settings["copy_megabytes"], threads=n)
                       for n in sorted({1, *threads})}
    results = []
    bar = progress_bar(len(variants), enabled=progress)
    try:
        for variant in variants:
            bar.set_description_str(variant.label)
            results.append(run_variant(variant, names, settings,
                                       copy_by_threads[variant.threads],
                                       workers if _isolated(variant, settings) else None))
            bar.update(1)
        machine["other_load_cpus"] = load.cpus()
    finally:
        workers.stop()
        bar.close()
    return {"schema": SCHEMA, "machine": machine, "copy_gbps": copy_by_threads[1],
            "copy_gbps_by_threads": {str(n): gbps for n, gbps in copy_by_threads.items()},
            "settings": settings, "engines": engines, "results": results}
