"""The `dnnpool` command: a demo on a built-in sample, system info, and the
subcommands other modules contribute (bench, translate, run)."""
import argparse
import importlib
import json
import sys

# (module, function) pairs that add subcommands; each is optional, so a
# missing extra (e.g. onnx) only disables its own commands.
_PLUGINS = [
    ("dnnpool.bench.cli", "add_parser"),
    ("dnnpool.onnx.cli", "add_translate_parser"),
    ("dnnpool.onnx.cli", "add_run_parser"),
]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="dnnpool", description="oneDNN Graph AvgPool/MaxPool on fast CPU kernels, with an ONNX front end.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="pool a built-in sample through every op kind and show the results")
    demo.add_argument("--json", action="store_true", help="print the results as JSON")
    demo.set_defaults(func=_cmd_demo)
    info = sub.add_parser("info", help="version, instruction set, threads, ABI version, include dir")
    info.set_defaults(func=_cmd_info)
    for module, function in _PLUGINS:
        try:
            getattr(importlib.import_module(module), function)(sub)
        except ImportError as exc:  # an optional extra is missing: say so when the command is asked for
            name = function.replace("add_", "").replace("_parser", "") if function != "add_parser" else "bench"
            missing = sub.add_parser(name, help=f"(unavailable: {exc})")
            missing.set_defaults(func=lambda args, exc=exc: _unavailable(exc))
    return parser


def _unavailable(exc):
    print(f"dnnpool: this command needs an optional dependency: {exc}. "
          'Install it with: pip install "dnnpool[onnx]"', file=sys.stderr)
    return 2


def _cmd_info(args):
    import dnnpool
    info = {"version": dnnpool.__version__, "isa": dnnpool.isa(), "threads": dnnpool.get_num_threads(),
            "abi_version": dnnpool.ABI_VERSION, "include": dnnpool.get_include()}
    for key, value in info.items():
        print(f"{key:12s} {value}")
    return 0


def _cmd_demo(args):
    from .demo import run_demo
    results = run_demo()
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        from .demo import format_demo
        print(format_demo(results))
    return 0 if all(r["matches_expected"] for r in results) else 1


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())
