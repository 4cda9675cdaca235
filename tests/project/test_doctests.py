"""Run the docstring examples of every bayes_dp and mia module (also: pytest --doctest-modules).

Modules of mia that need an optional extra (torch and opacus, flwr, ray, dask) are skipped,
with the reason, when the extra is not installed.
"""

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import bayes_dp
import mia

#: mia modules whose examples need an optional extra: module -> the packages it needs
EXTRAS = {
    "mia.pytorch": ("torch", "opacus"),
    "mia.canary.flower": ("flwr",),
}
#: optional engines any mia example may use; a module whose examples mention one is skipped
#: when it is missing
ENGINES = {"ray": "ray", "dask": "distributed"}

MODULES = sorted(m.name for m in pkgutil.iter_modules(bayes_dp.__path__, prefix="bayes_dp."))
MIA_MODULES = sorted(m.name for m in pkgutil.walk_packages(mia.__path__, prefix="mia."))


def _run(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
    return result


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write here
    _run(name)


def _missing(packages) -> list[str]:
    return [p for p in packages if importlib.util.find_spec(p) is None]


@pytest.mark.parametrize("name", MIA_MODULES)
def test_mia_doctests(name, tmp_path, monkeypatch):
    missing = _missing(EXTRAS.get(name, ()))
    if missing:
        reason = f"{name}: optional extra not installed ({', '.join(missing)})"
        print(reason)
        pytest.skip(reason)
    mod = importlib.import_module(name)
    examples = "\n".join(ex.source for t in doctest.DocTestFinder().find(mod) for ex in t.examples)
    engines = [pkg for word, pkg in ENGINES.items() if f'backend="{word}"' in examples]
    missing = _missing(engines)
    if missing:
        reason = f"{name}: its examples need {', '.join(missing)}, not installed"
        print(reason)
        pytest.skip(reason)
    monkeypatch.chdir(tmp_path)
    _run(name)


def test_a_missing_extra_skips_with_its_name(monkeypatch, tmp_path, capsys):
    # only the fake package, so the expected reason holds whether or not torch is installed
    monkeypatch.setitem(EXTRAS, "mia.pytorch", ("no_such_package_xyz",))
    with pytest.raises(pytest.skip.Exception, match="no_such_package_xyz"):
        test_mia_doctests("mia.pytorch", tmp_path, monkeypatch)
    assert "optional extra not installed (no_such_package_xyz)" in capsys.readouterr().out


def test_main_mia_functions_have_examples():
    import inspect

    import mia.canary

    missing = [
        f"{pkg.__name__}.{n}"
        for pkg in (mia, mia.canary)
        for n in pkg.__all__
        if inspect.isfunction(getattr(pkg, n))
        and ">>>" not in (inspect.getdoc(getattr(pkg, n)) or "")
        and n not in NO_EXAMPLE
    ]
    assert not missing, f"public mia functions without an Examples section: {missing}"


#: functions left without an example: loaders and accountants are owned elsewhere
NO_EXAMPLE = {"load_digits", "compose_canife"}


def test_api_reference_is_up_to_date():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, str(root / "docs" / "build_api.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
