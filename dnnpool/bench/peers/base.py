"""What every benchmark engine provides: a prepared, repeatable call on one variant."""
import dataclasses
import time
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
    sample(count, warm_up_seconds): seconds for `count` back-to-back runs, the engine's state
    applied first, after untimed runs for warm_up_seconds (at least one when > 0); an engine
    in a worker process of its own times the same loop there (isolation.py).
    settle(): after a sample, waits until the engine's threads stop spinning (isolated engines;
    in-process ones return at once).
    """
    run: Callable[[], object]
    result: Callable[[], object]
    activate: Callable[[], None] = _nothing
    implementation: Optional[str] = None
    close: Callable[[], None] = _nothing

    def sample(self, count, warm_up_seconds=0.0):
        self.activate()
        run = self.run
        if warm_up_seconds > 0:  # untimed calls, at least one
            until = time.perf_counter() + warm_up_seconds
            run()
            while time.perf_counter() < until:
                run()
        start = time.perf_counter()
        for _ in range(count):
            run()
        return time.perf_counter() - start

    def settle(self):
        pass
