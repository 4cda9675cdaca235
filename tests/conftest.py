import os
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
#: the folder whose ``sitecustomize`` installs the active mutation in worker processes
MUTATION_SITE = ROOT / "tests" / "_support" / "mutation_site"
#: the environment variable of the stage floor (``.ci/run`` sets it before each stage)
MIN_TESTS = "BAYES_DP_MIN_TESTS"


def pytest_configure(config):
    """Install the mutation named by ``BAYES_DP_MUTATION`` (``tests/_support/mutations.py``),
    here and, through ``PYTHONPATH``, in every process the run starts."""
    from tests._support import mutations

    name = os.environ.get(mutations.ENV, "").strip()
    if not name:
        return
    paths = [str(MUTATION_SITE), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    mutations.install_from_env()
    config.stash[_MUTATION] = name


_MUTATION = pytest.StashKey[str]()
#: tests that ran in this process (passed or failed in their call phase; not skipped)
_RAN = {"n": 0}


def pytest_report_header(config):
    name = config.stash.get(_MUTATION, None)
    if name:
        from tests._support.mutations import REGISTRY

        return f"MUTATION {name}: {REGISTRY[name].what} (the posteriors are broken on purpose)"
    return None


def pytest_runtest_logreport(report):
    # under xdist the controller receives every worker's reports through this hook too
    if report.when == "call" and not report.skipped:
        _RAN["n"] += 1


def pytest_sessionfinish(session, exitstatus):
    """Fail a run that ran fewer tests than ``BAYES_DP_MIN_TESTS`` (CI's stage floors): a stage
    that lost its tests (a marker dropped, a module that no longer collects, everything
    skipped) is not green."""
    floor = os.environ.get(MIN_TESTS, "").strip()
    if not floor or hasattr(session.config, "workerinput"):  # xdist workers: the controller counts
        return
    ran = _RAN["n"]
    msg = f"{ran} tests ran (the stage's floor, {MIN_TESTS}, is {int(floor)})"
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if ran < int(floor):
        if tr is not None:
            tr.write_line(f"FAILED: only {msg}", red=True, bold=True)
        if session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    elif tr is not None:
        tr.write_line(msg)


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


#: per-test time limits (s) without a ``@pytest.mark.timeout`` of the test's own: a statistical
#: test (the longest, the GDP calibration, took 478 s on 2 idle cores and 1,669 s at load 5-6)
#: and another slow one (the long studies of ``-m slow``: up to about 45 min); the default of
#: ``pyproject.toml`` (900 s) is for the rest
STATISTICAL_TIMEOUT = 3600
SLOW_TIMEOUT = 10800


def pytest_collection_modifyitems(config, items):
    """A ``statistical`` test is also ``slow`` (the main suite, ``-m "not slow"``, leaves it to
    CI's statistical stage, ``-m statistical``). Time limits: ``STATISTICAL_TIMEOUT`` and
    ``SLOW_TIMEOUT`` for the tests without a ``timeout`` marker of their own."""
    bad = [
        it.nodeid
        for it in items
        if it.get_closest_marker("statistical") and not it.get_closest_marker("slow")
    ]
    if bad:
        raise pytest.UsageError(f"tests marked statistical but not slow: {bad}")
    for it in items:
        if it.get_closest_marker("timeout"):
            continue
        if it.get_closest_marker("statistical"):
            it.add_marker(pytest.mark.timeout(STATISTICAL_TIMEOUT))
        elif it.get_closest_marker("slow"):
            it.add_marker(pytest.mark.timeout(SLOW_TIMEOUT))
