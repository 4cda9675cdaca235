import os
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def run_script(tmp_path):
    """Run a script of the repository (``examples/x.py``, ``benchmarks/y.py``) end to end.

    Smoke tests of examples and benchmarks run them as a user would, in a subprocess with this
    checkout on ``PYTHONPATH`` and ``tmp_path`` as the working directory; tests never import a
    script by path. Returns the completed process (stdout and stderr as text); fails the test,
    showing stderr, when the script exits with an error.
    """

    def run(script: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        env = dict(os.environ, MPLBACKEND="Agg")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        proc = subprocess.run(
            [sys.executable, str(ROOT / script), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert proc.returncode == 0, f"{script} failed:\n{proc.stderr[-4000:]}"
        return proc

    return run


def pytest_collection_modifyitems(config, items):
    """A ``statistical`` test is also ``slow`` (the main suite, ``-m "not slow"``, leaves it to
    CI's statistical stage, ``-m statistical``)."""
    bad = [
        it.nodeid
        for it in items
        if it.get_closest_marker("statistical") and not it.get_closest_marker("slow")
    ]
    if bad:
        raise pytest.UsageError(f"tests marked statistical but not slow: {bad}")
