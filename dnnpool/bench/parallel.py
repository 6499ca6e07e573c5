"""A job split into parts run by several threads at once: the calling thread takes the first
part, as a kernel's master thread does, and a pool the others (numpy releases the GIL while it
copies and fills, so the parts overlap)."""
from concurrent.futures import ThreadPoolExecutor


def parts_runner(works):
    """(run, close) for callables `works`: run() calls each once, works[0] on the calling
    thread and the rest on a pool of len(works) - 1 threads, and returns when all are done;
    close() ends the pool. One part runs on the calling thread alone."""
    if len(works) == 1:
        return works[0], lambda: None
    pool = ThreadPoolExecutor(len(works) - 1)

    def run():
        pending = [pool.submit(work) for work in works[1:]]
        works[0]()
        for future in pending:
            future.result()

    return run, pool.shutdown
