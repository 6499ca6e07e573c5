"""``dnnpool bench``: argparse wiring for the benchmark (the lead adds it to dnnpool/cli.py)."""
import argparse
import sys

from . import peers, shapes


def _csv(choices=None, convert=str):
    def parse(text):
        values = [convert(item.strip()) for item in text.split(",") if item.strip()]
        bad = [v for v in values if choices is not None and v not in choices]
        if bad or not values:
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected a comma-separated list of {', '.join(map(str, choices))}")
        return values
    return parse


def _thread_counts(text):
    counts = _csv(convert=int)(text)
    if any(n < 1 for n in counts):
        raise argparse.ArgumentTypeError(f"{text!r}: thread counts must be at least 1")
    return counts


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive whole number")
    return value


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "bench", help="time dnnpool against oneDNN, ONNX Runtime, PyTorch, OpenVINO",
        description="Time dnnpool side by side with every installed peer on the embedded "
                    "pooling shape set; see docs/benchmark.md.")
    parser.add_argument("--case", action="append", metavar="SUBSTRING",
                        help="only cases whose name contains SUBSTRING (repeatable)")
    parser.add_argument("--targets", action="store_true",
                        help="only the cases of the performance issue's target table")
    parser.add_argument("--random", type=_positive, metavar="N",
                        help="time N random problems (1-D to 3-D, 1-512 channels, every window "
                             "attribute) instead of the shape set: the shapes no table lists")
    parser.add_argument("--seed", type=int, default=0,
                        help="the random problems' seed (default 0): the same seed, the same problems")
    parser.add_argument("--layout", type=_csv(shapes.LAYOUTS), help="NCX, NXC or both")
    parser.add_argument("--dtype", type=_csv(("f32", "bf16", "f16", "u8")),
                        help="comma-separated dtypes (default: every dtype of each case)")
    parser.add_argument("--threads", type=_thread_counts,
                        help="comma-separated thread counts (default: 1 and all CPUs)")
    parser.add_argument("--repeat", type=int,
                        help="exact timing samples per engine (default: up to 15, fewer "
                             "where the engines are slow, to keep a variant near 3 s)")
    parser.add_argument("--quick", action="store_true",
                        help="5 short samples, f32/u8 only unless --dtype is given")
    parser.add_argument("--peers", type=_csv(peers.PEER_NAMES),
                        help="compare only with these peers (default: every installed one)")
    parser.add_argument("--gap", type=float, metavar="SECONDS",
                        help="idle time after each sample (default 0)")
    parser.add_argument("--isolate", choices=("auto", "always", "never"),
                        help="run every engine in a worker process of its own: auto (the "
                             "default) for variants of more than one thread")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true",
                        help="print the full result as JSON on stdout instead of the table")
    output.add_argument("--markdown", action="store_true",
                        help="print the table as Markdown (for docs/benchmark.md)")
    parser.add_argument("--from-json", metavar="FILE",
                        help="do not measure: render a result saved with --json "
                             "(as a table, or Markdown with --markdown)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=main)
    return parser


def _list_cases(case_set):
    for case in case_set:
        marker = "*" if case.target else " "
        shape = "x".join(map(str, case.src))
        print(f"{marker} {case.name:<22} {case.kind:<7} {shape:<16} {case.attributes:<30} "
              f"{','.join(case.dtypes):<15} {case.description}")
    print("* = in the performance issue's target table")


def main(args):
    if args.list:
        _list_cases(shapes.random_cases(args.random, args.seed) if args.random else shapes.CASES)
        return 0
    from .report import format_markdown, format_table, to_json
    try:
        result = _load(args.from_json) if args.from_json else _measure(args)
    except (ValueError, RuntimeError, OSError) as error:
        print(f"dnnpool bench: {error}", file=sys.stderr)
        return 2
    render = to_json if args.json else format_markdown if args.markdown else format_table
    print(render(result))
    return 0


def _measure(args):
    from .runner import run_benchmark
    return run_benchmark(cases=args.case, layouts=args.layout, dtypes=args.dtype,
                         threads=args.threads, repeat=args.repeat, quick=args.quick,
                         peers_only=args.peers, targets_only=args.targets,
                         progress=not args.no_progress, gap_seconds=args.gap,
                         isolate=args.isolate, random=args.random, seed=args.seed)


def _load(path):
    import json
    from .runner import SCHEMA
    with open(path) as file:
        result = json.load(file)
    if result.get("schema") != SCHEMA:
        raise ValueError(f"--from-json {path}: schema {result.get('schema')!r}, "
                         f"expected {SCHEMA!r}")
    return result


def _standalone(argv=None):
    """`python -m dnnpool.bench.cli` works before the lead wires the subcommand."""
    parser = argparse.ArgumentParser(prog="dnnpool")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(_standalone())
