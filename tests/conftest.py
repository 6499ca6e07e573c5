"""Shared test configuration: the hypothesis profile and the conformance cases of
spec/conformance/*.json, offered to any test that asks for `conformance_case`
(once per case and data_format)."""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, settings

import reference

CONFORMANCE_DIR = Path(__file__).resolve().parent.parent / "spec" / "conformance"

settings.register_profile(
    "dnnpool", deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("dnnpool")


@dataclass(frozen=True)
class ConformanceCase:
    """One spec/conformance case in one data_format, as numpy arrays."""
    name: str
    attrs: dict            # PoolingDesc keyword arguments, data_format set
    dtype: str
    src: np.ndarray
    dst: np.ndarray = None
    indices: np.ndarray = None
    raises: str = None
    tolerance_ulp: int = 0
    resolved_pads: tuple = None   # (pads_begin, pads_end) or None

    @property
    def src_shape(self):
        return self.src.shape


def _ncx_index_to_nxc(index, src_shape_ncx):
    """Rewrite an NCX flat index (n*C + c)*S + s as the NXC one (n*S + s)*C + c."""
    if index < 0:
        return index
    channels, spatial = src_shape_ncx[1], int(np.prod(src_shape_ncx[2:]))
    nc, s = divmod(index, spatial)
    n, c = divmod(nc, channels)
    return (n * spatial + s) * channels + c


def _variant(raw, data_format):
    dtype = reference.NUMPY_DTYPES[raw["dtype"]]
    src = np.array(raw["src"], dtype=np.float64).astype(dtype)
    assert src.shape == tuple(raw["src_shape"]), raw["name"]
    dst = indices = None
    if "dst" in raw:
        dst = np.array(raw["dst"], dtype=np.float64).astype(dtype)
        assert dst.shape == tuple(raw["dst_shape"]), raw["name"]
    if "indices" in raw:
        indices = np.array(raw["indices"], dtype=np.int64)
        assert indices.shape == dst.shape, raw["name"]
    if data_format == "NXC":
        src = np.ascontiguousarray(np.moveaxis(src, 1, -1))
        if dst is not None:
            dst = np.ascontiguousarray(np.moveaxis(dst, 1, -1))
        if indices is not None:
            rewrite = np.vectorize(lambda i: _ncx_index_to_nxc(int(i), raw["src_shape"]),
                                   otypes=[np.int64])
            indices = np.ascontiguousarray(np.moveaxis(rewrite(indices), 1, -1))
    pads = None
    if "resolved_pads_begin" in raw:
        pads = (tuple(raw["resolved_pads_begin"]), tuple(raw["resolved_pads_end"]))
    floating_average = raw["attrs"]["kind"] == "AvgPool" and raw["dtype"] not in ("s8", "u8")
    return ConformanceCase(
        name=f"{raw['name']}[{data_format}]",
        attrs=dict(raw["attrs"], data_format=data_format),
        dtype=raw["dtype"], src=src, dst=dst, indices=indices, raises=raw.get("raises"),
        tolerance_ulp=raw.get("tolerance_ulp", 1 if floating_average else 0),
        resolved_pads=pads)


def load_conformance_cases():
    cases = []
    for path in sorted(CONFORMANCE_DIR.glob("*.json")):
        for raw in json.loads(path.read_text())["cases"]:
            assert raw["attrs"]["data_format"] == "NCX", raw["name"]
            cases.extend(_variant(raw, fmt) for fmt in ("NCX", "NXC"))
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "conformance case names must be unique"
    return cases


def pytest_generate_tests(metafunc):
    if "conformance_case" in metafunc.fixturenames:
        cases = load_conformance_cases()
        metafunc.parametrize("conformance_case", cases, ids=[c.name for c in cases])
