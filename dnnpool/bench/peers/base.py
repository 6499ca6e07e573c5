"""What every benchmark engine provides: a prepared, repeatable call on one variant."""
import dataclasses
from typing import Callable, Optional


class NotSupported(Exception):
    """The engine cannot run this variant (layout, dtype, attribute); the reason is shown as n/a."""


def _nothing():
    return None


@dataclasses.dataclass
class Prepared:
    """One engine set up for one variant on one input.

    run: executes once; the only thing timed.
    result: returns the last output as a numpy array in the variant's layout and dtype (not timed).
    activate: applies per-engine global state (thread count) before a timing sample (not timed).
    implementation: what the engine chose, when it says (e.g. oneDNN's "jit:avx2").
    """
    run: Callable[[], object]
    result: Callable[[], object]
    activate: Callable[[], None] = _nothing
    implementation: Optional[str] = None
    close: Callable[[], None] = _nothing
