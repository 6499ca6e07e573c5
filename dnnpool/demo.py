"""`dnnpool demo`: the built-in sample of spec/demo.json through every op kind."""
import numpy as np

from ._core import Pooling
from ._spec import load_spec
from .descriptor import PoolingDesc
from .dtypes import numpy_dtype


def run_demo():
    """Runs every demo case; returns one dict per case with inputs, outputs and the check."""
    spec = load_spec("demo.json")
    shape = tuple(spec["sample"]["shape"])
    sample = np.arange(1, 26, dtype=np.float64).reshape(shape)
    results = []
    for case in spec["cases"]:
        dtype = case.get("dtype", "f32")
        src = sample.astype(numpy_dtype(dtype))
        desc = PoolingDesc(case["kind"], src_shape=shape, dtype=dtype, **case["attrs"])
        prim = Pooling(desc)
        with_indices = case.get("with_indices", False)
        out = prim.execute(src, with_indices=True) if with_indices else (prim.execute(src), None)
        dst, idx = out
        plane = dst[0, ..., 0].astype(np.float64)
        ok = bool(np.allclose(plane, np.array(case["expected"]), rtol=1e-6, atol=1e-6))
        if with_indices:
            ok = ok and bool(np.array_equal(idx[0, ..., 0], np.array(case["expected_indices"])))
        results.append({
            "title": case["title"], "desc": desc.to_dict(), "kernel": prim.kernel_name,
            "dst": plane.tolist(), "indices": None if idx is None else idx[0, ..., 0].tolist(),
            "expected": case["expected"], "why": case["why"], "matches_expected": ok,
        })
    return results


def format_demo(results):
    lines = ["dnnpool demo: the sample 5x5 image 1..25 (NXC, N=1, C=1)", ""]
    for r in results:
        mark = "ok" if r["matches_expected"] else "MISMATCH"
        lines.append(f"== {r['title']}  [{r['desc']['dtype']}, kernel {r['kernel']}]  {mark}")
        for row in r["dst"]:
            lines.append("   " + " ".join(f"{v:7.3f}" for v in row))
        if r["indices"] is not None:
            lines.append("   indices: " + str(r["indices"]))
        lines.append(f"   why: {r['why']}")
    n_ok = sum(r["matches_expected"] for r in results)
    lines += ["", f"{n_ok}/{len(results)} cases match the hand-worked expectations"]
    return "\n".join(lines)
