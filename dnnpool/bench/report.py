"""Render a benchmark result: a fixed-width table for people, JSON for machines."""
import json
import math

from . import peers
from .load import SUSPECT_CPUS

def _short(engine):
    """Column names kept narrow."""
    return {"onnxruntime": "onnxrt"}.get(engine, engine)


def to_json(result, indent=2):
    return json.dumps(result, indent=indent, sort_keys=False)


def _engine_columns(result):
    return [name for name, info in result["engines"].items() if info["available"]]


def _time_cell(record, name):
    if name in record["median_us"]:
        return f"{record['median_us'][name]:.1f}"
    return "n/a"


def _copy_bandwidths(result):
    """'30.1 GB/s', or '30.1 GB/s (1 thread), 27.3 GB/s (2 threads)' (results saved before the
    per-thread probes have the single-threaded one only)."""
    by_threads = result.get("copy_gbps_by_threads") or {"1": result["copy_gbps"]}
    if len(by_threads) == 1:
        return f"{next(iter(by_threads.values())):.1f} GB/s"
    return ", ".join(f"{gbps:.1f} GB/s ({n} thread{'s' if n != '1' else ''})"
                     for n, gbps in sorted(by_threads.items(), key=lambda item: int(item[0])))


def _header(result):
    machine = result["machine"]
    engines = ", ".join(
        f"{name} {info['version']}" for name, info in result["engines"].items()
        if info["available"])
    missing = [f"{name} ({info['reason']})" for name, info in result["engines"].items()
               if not info["available"]]
    lines = [f"dnnpool bench: {machine['cpu']}, {machine['cpus']} CPUs"
             + (f", dnnpool ISA {machine['dnnpool_isa']}" if "dnnpool_isa" in machine else ""),
             f"copy bandwidth (numpy, {result['settings']['copy_megabytes']} MB, read+write): "
             + _copy_bandwidths(result),
             f"engines: {engines}"]
    if missing:
        lines.append("not compared: " + "; ".join(missing))
    others = machine.get("other_load_cpus")
    if others is not None and others > SUSPECT_CPUS:
        lines.append(f"WARNING: other processes kept {others:.1f} CPUs busy on average during "
                     "the run; rows whose 'others' column exceeds "
                     f"{SUSPECT_CPUS} are unreliable (multi-threaded ones most)")
    lines.append("median microseconds per call; ratio = dnnpool / best peer (below 1: dnnpool "
                 "faster); GB/s and %copy are dnnpool's (bytes read once + written once)")
    lines.append("floor = the ratio of a kernel that only read its input and wrote its output "
                 "(numpy, timed in turn with the engines): the lowest any kernel could show")
    return lines


def _notes(records):
    """Mismatches and n/a reasons, each distinct one listed once."""
    notes = []
    for record in records:
        for name, problem in record["mismatches"].items():
            notes.append(f"MISMATCH {record['case']} {record['layout']} {record['dtype']} "
                         f"t{record['threads']} {name}: {problem}")
    reasons = {}
    for record in records:
        for name, reason in record["not_available"].items():
            reasons.setdefault((name, reason), []).append(
                f"{record['case']} {record['layout']} {record['dtype']}")
    for (name, reason), where in reasons.items():
        sample = ", ".join(sorted(set(where))[:3]) + (" ..." if len(set(where)) > 3 else "")
        notes.append(f"n/a {name}: {reason} [{sample}]")
    return notes


def _summary(records):
    ratios = [r["ratio_to_best_peer"] for r in records if r["ratio_to_best_peer"]]
    if not ratios:
        return []
    geomean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    wins = sum(x <= 1.0 for x in ratios)
    return [f"dnnpool at or below the best peer in {wins}/{len(ratios)} variants; "
            f"geometric mean ratio {geomean:.2f}"]


def _row(record, engines):
    subject, ratio = peers.SUBJECT, record["ratio_to_best_peer"]
    measured = subject in record["gbps"]
    return ([record["case"], record["layout"], record["dtype"], str(record["threads"])]
            + [_time_cell(record, name) for name in engines]
            + [_short(record["best_peer"] or "-"),
               f"{ratio:.2f}" if ratio else "-",
               _floor_cell(record.get("floor_ratio")),
               f"{record['gbps'][subject]:.1f}" if measured else "-",
               f"{100 * record['fraction_of_copy'][subject]:.0f}%" if measured else "-",
               _others_cell(record.get("other_load_cpus")),
               "MISMATCH" if record["mismatches"] else "ok"])


def _floor_cell(floor_ratio):
    # None: no peer, an output smaller than the input (floor.has_floor), or an older result
    return "-" if floor_ratio is None else f"{floor_ratio:.2f}"


def _others_cell(cpus):
    if cpus is None:
        return "-"
    return f"{cpus:.1f}" + ("!" if cpus > SUSPECT_CPUS else "")


def format_table(result):
    engines = _engine_columns(result)
    headings = (["case", "layout", "dtype", "thr"] + [_short(e) for e in engines]
                + ["best peer", "ratio", "floor", "GB/s", "%copy", "others", "check"])
    rows = [_row(record, engines) for record in result["results"]]
    widths = [max(len(row[i]) for row in rows + [headings]) for i in range(len(headings))]
    text_columns = {0, 1, 2, headings.index("best peer"), headings.index("check")}

    def line(cells):
        return "  ".join(cell.ljust(w) if i in text_columns else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(cells, widths))).rstrip()

    body = [line(headings), line(["-" * w for w in widths])] + [line(row) for row in rows]
    return "\n".join(_header(result) + [""] + body + [""] + _summary(result["results"])
                     + _notes(result["results"]))


def format_markdown(result):
    """A Markdown table of the same numbers (for docs/benchmark.md), with a one-line header."""
    engines = _engine_columns(result)
    machine = result["machine"]
    lines = [f"{machine['cpu']}, {machine['cpus']} CPUs, copy bandwidth "
             f"{_copy_bandwidths(result)}; median microseconds per call; "
             "ratio = dnnpool / best peer; floor = the ratio of reading the input and writing the output.", "",
             "| case | layout | dtype | thr | " + " | ".join(map(_short, engines))
             + " | best peer | ratio | floor | GB/s | %copy | others | check |",
             "|---" * (len(engines) + 11) + "|"]
    lines += ["| " + " | ".join(_row(record, engines)) + " |" for record in result["results"]]
    return "\n".join(lines + [""] + _summary(result["results"]))
