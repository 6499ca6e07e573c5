"""``dnnpool bench``: dnnpool side by side with oneDNN, ONNX Runtime, PyTorch and OpenVINO.

    from dnnpool.bench import run_benchmark, format_table
    result = run_benchmark(cases="resnet50", quick=True)
    print(format_table(result))
"""
from .report import format_markdown, format_table, to_json
from .runner import run_benchmark
from .shapes import CASES

__all__ = ["run_benchmark", "format_table", "format_markdown", "to_json", "CASES"]
