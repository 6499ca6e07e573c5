"""A progress bar on stderr: tqdm when installed, else a one-line counter."""
import sys


class _Counter:
    def __init__(self, total):
        self.total, self.done = total, 0

    def set_description_str(self, text):
        sys.stderr.write(f"\r[{self.done}/{self.total}] {text:<60.60}")
        sys.stderr.flush()

    def update(self, n=1):
        self.done += n

    def close(self):
        sys.stderr.write(f"\r[{self.done}/{self.total}] done{' ' * 60}\n")
        sys.stderr.flush()


class _Silent:
    def set_description_str(self, text):
        pass

    def update(self, n=1):
        pass

    def close(self):
        pass


def progress_bar(total, enabled=True):
    if not enabled:
        return _Silent()
    try:
        from tqdm import tqdm
    except ImportError:
        return _Counter(total)
    return tqdm(total=total, file=sys.stderr, unit="case", dynamic_ncols=True, leave=False)
