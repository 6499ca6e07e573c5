"""Running a child Python that imports the same dnnpool as the test process.

A child started in the repository would import the source tree's dnnpool (no
compiled core in a fresh clone); one started elsewhere without help might find
none. So children run in a scratch directory, with the directory holding the
dnnpool under test first on PYTHONPATH.
"""
import os
import subprocess
import sys
import tempfile

import dnnpool


def child_env(*paths, **extra):
    """os.environ with `paths`, then the dnnpool under test, first on PYTHONPATH; plus `extra` variables."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(dnnpool.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (*map(str, paths), root, env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def run_python(args, timeout=600, **env_extra):
    """`python ARGS` in a scratch directory; returns the CompletedProcess (text output)."""
    with tempfile.TemporaryDirectory() as scratch:
        return subprocess.run([sys.executable, *args], cwd=scratch, env=child_env(**env_extra),
                              capture_output=True, text=True, timeout=timeout)
