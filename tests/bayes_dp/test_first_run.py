"""The first run's compile notice and ``bayes-dp precompile`` (``bayes_dp.precompile``).

Each check runs fresh processes with ``NUMBA_CACHE_DIR`` set to an empty temporary folder, so
numba's cache starts cold there and the package's own ``__pycache__`` is not touched.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import bayes_dp as bdp
from bayes_dp.inference import first_run

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, cache: Path, *args: str, extra_path: Path | None = None):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    paths = [str(ROOT)] + ([str(extra_path)] if extra_path else [])
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    cmd = [sys.executable, *(["-c", code] if code else []), *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_notice_on_a_cold_cache_only(tmp_path):
    """A kernel with ``cache=True``: the first process compiles it and prints the notice with
    its seconds; a second process finds numba's cache index and prints nothing."""
    (tmp_path / "tiny_kernel.py").write_text(
        textwrap.dedent(
            """
            from numba import njit

            @njit(cache=True)
            def twice(x):
                return 2.0 * x
            """
        )
    )
    code = textwrap.dedent(
        """
        from bayes_dp.inference import first_run
        import tiny_kernel

        first_run.MAIN_KERNELS["tiny"] = ("tiny_kernel", "twice")
        took = first_run.compile_first("tiny", lambda: tiny_kernel.twice(1.0))
        again = first_run.compile_first("tiny", lambda: tiny_kernel.twice(1.0))
        print(took is not None, again is None, first_run.kernel_cached("tiny"))
        """
    )
    cache = tmp_path / "cache"
    first = _run(code, cache, extra_path=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["True", "True", "True"]
    lines = [ln for ln in first.stderr.splitlines() if first_run.NOTICE in ln]
    assert len(lines) == 1 and lines[0].endswith(" s"), first.stderr
    assert any(cache.rglob("*.nbi"))  # numba's index, under NUMBA_CACHE_DIR
    second = _run(code, cache, extra_path=tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["False", "True", "True"]
    assert first_run.NOTICE not in second.stderr


def test_every_main_kernel_is_a_cached_numba_function():
    """The families' main kernels exist and are numba functions cached on disk (the notice
    reads their cache index), and the look-up answers True or False for each."""
    import importlib

    for family, (module, name) in first_run.MAIN_KERNELS.items():
        fn = getattr(importlib.import_module(module), name)
        assert type(fn._cache).__name__ == "FunctionCache", (module, name)  # cache=True
        assert first_run.kernel_cached(family) in (True, False), family


def test_precompile_checks_its_argument():
    with pytest.raises(TypeError, match="verbose.*'yes'"):
        bdp.precompile(verbose="yes")


@pytest.mark.slow
def test_precompile_fills_the_cache(tmp_path):
    """``bayes-dp precompile`` on an empty cache prints each step; a later first posterior in
    a fresh process prints no notice; with another empty cache the same posterior does."""
    cache = tmp_path / "cache"
    pre = _run("", cache, "-m", "bayes_dp", "precompile")
    assert pre.returncode == 0, pre.stderr
    steps = [ln for ln in pre.stdout.splitlines() if ln.strip()]
    assert len(steps) == 5 and "exact sampler" in steps[0] and "planner grid" in steps[3]
    assert "in all" in steps[-1]
    post = (
        "import bayes_dp as bdp\n"
        "c = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)\n"
        "bdp.estimate_epsilon(c, delta=1e-5, chains=2, draws=200, seed=0, check=False)\n"
    )
    warm = _run(post, cache)
    assert warm.returncode == 0, warm.stderr
    assert first_run.NOTICE not in warm.stderr
    cold = _run(post, tmp_path / "empty")
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count(first_run.NOTICE) == 1


@pytest.mark.slow
def test_planner_notice_with_its_real_kernel(tmp_path):
    """The planner's grid kernel: a notice in the first process on an empty cache, none in a
    second process on the same cache, the same plan in both."""
    code = (
        "import bayes_dp as bdp\n"
        "p = bdp.plan_audit({'eps': 2.0, 's': 0.5}, {'bases': 2, 'n': 100}, delta=1e-5, reps=2,"
        " seed=1)\n"
        "print(p.to_pandas().to_csv())\n"
    )
    cache = tmp_path / "cache"
    first = _run(code, cache)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count(first_run.NOTICE) == 1, first.stderr
    second = _run(code, cache)
    assert second.returncode == 0, second.stderr
    assert first_run.NOTICE not in second.stderr
    assert first.stdout == second.stdout
