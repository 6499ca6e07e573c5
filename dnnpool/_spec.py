"""Access to dnnpool's machine-readable specification (the JSON files of spec/).

Installed, the files live in the ``dnnpool.spec`` package; in a source tree
they are read from ``../spec`` beside the package.
"""
import functools
import json
from importlib import resources
from pathlib import Path

_SOURCE_TREE_SPEC = Path(__file__).resolve().parent.parent / "spec"


def spec_path(name):
    """Path (a ``Traversable``) of ``spec/<name>``, installed or in the source tree."""
    try:
        candidate = resources.files("dnnpool.spec").joinpath(name)
        if candidate.is_file():
            return candidate
    except ModuleNotFoundError:
        pass
    return _SOURCE_TREE_SPEC / name


@functools.lru_cache(maxsize=None)
def load_spec(name):
    """Parsed JSON of ``spec/<name>`` (cached: treat it as read-only)."""
    with spec_path(name).open("r", encoding="utf-8") as f:
        return json.load(f)
