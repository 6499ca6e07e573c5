"""dtype names: oneDNN spellings (f32, bf16, ...) and the numpy dtypes behind them."""
import functools

import numpy as np

from ._spec import load_spec

_DTYPES = load_spec("onednn_graph.json")["dtypes"]
_BY_ALIAS = {alias: name for name, entry in _DTYPES.items() for alias in [name, *entry["aliases"]]}


@functools.lru_cache(maxsize=None)
def numpy_dtype(name):
    """numpy dtype of a canonical dnnpool dtype name (bf16 is ml_dtypes.bfloat16)."""
    numpy_name = _DTYPES[name]["numpy"]
    if numpy_name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(numpy_name)


def canonical_dtype(value):
    """'f32', 'bf16', ... from a oneDNN spelling, a numpy dtype or a scalar type."""
    if isinstance(value, str) and value.lower() in _BY_ALIAS:
        return _BY_ALIAS[value.lower()]
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError(f"dtype: value {value!r} is invalid: expected one of {list(_DTYPES)} "
                        "or a numpy dtype") from None
    name = _BY_ALIAS.get(dt.name)
    if name is None:
        raise TypeError(f"dtype: value {value!r} ({dt.name}) is not supported: "
                        f"dnnpool pools {', '.join(_DTYPES)}")
    return name
