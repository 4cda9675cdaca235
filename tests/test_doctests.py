"""Run the docstring examples of every bayes_dp module (also: pytest --doctest-modules bayes_dp)."""

import doctest
import importlib
import pkgutil

import pytest

import bayes_dp

MODULES = sorted(m.name for m in pkgutil.iter_modules(bayes_dp.__path__, prefix="bayes_dp."))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write here
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


def test_api_reference_is_up_to_date():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, str(root / "docs" / "build_api.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
