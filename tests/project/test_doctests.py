"""Run the docstring examples of every bayes_dp and mia module (also: pytest --doctest-modules).

Each module's examples are counted: a module without any is skipped with the reason "no
docstring examples" (so ``pytest -ra`` lists it) instead of passing with nothing run, and at
least one example must run (those marked +SKIP are found, not run).  Modules of mia that need
an optional extra (torch and opacus, flwr, ray, dask) are skipped, with the reason, when the
extra is not installed.
"""

import doctest
import importlib
import importlib.util
import pkgutil
import re

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

MODULES = sorted(m.name for m in pkgutil.walk_packages(bayes_dp.__path__, prefix="bayes_dp."))
MIA_MODULES = sorted(m.name for m in pkgutil.walk_packages(mia.__path__, prefix="mia."))


def _n_examples(mod) -> int:
    """Number of docstring examples doctest finds in the module (its own objects only)."""
    return sum(len(t.examples) for t in doctest.DocTestFinder().find(mod))


def _run(name):
    mod = importlib.import_module(name)
    found = _n_examples(mod)
    if found == 0:
        pytest.skip(f"{name}: no docstring examples")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
    # examples marked +SKIP are found but not attempted; at least one must run
    assert 1 <= result.attempted <= found, (name, result.attempted, found)
    print(f"{name}: {result.attempted} of {found} examples run")
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


def test_a_module_without_examples_is_skipped_not_passed(tmp_path, monkeypatch):
    # bayes_dp.__main__ has no docstring examples: the test reports it instead of passing
    with pytest.raises(pytest.skip.Exception, match="no docstring examples"):
        _run("bayes_dp.__main__")


def test_modules_of_the_public_api_have_examples():
    # every module defining a function or class of bayes_dp.__all__ carries examples (the
    # exception classes excepted); the count over the library is printed
    import inspect

    objs = [getattr(bayes_dp, n) for n in bayes_dp.__all__]
    public = sorted(
        {
            o.__module__
            for o in objs
            if (inspect.isfunction(o) or inspect.isclass(o))
            and o.__module__.startswith("bayes_dp")
            and not (inspect.isclass(o) and issubclass(o, (Exception, Warning)))
        }
    )
    counts = {n: _n_examples(importlib.import_module(n)) for n in MODULES}
    print(f"{sum(counts.values())} examples in {sum(map(bool, counts.values()))} of {len(counts)}")
    missing = [n for n in public if not counts.get(n)]
    assert public and not missing, f"public modules without examples: {missing}"


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


def test_the_api_pages_cover_every_module(tmp_path, monkeypatch):
    """The site's module pages (written at each build) document every module of the packages.

    The API reference is built by Sphinx autodoc from the docstrings (``docs/reference/``):
    the public names on ``api/*.md``, every module on pages that ``docs/sphinx_ext.py`` writes
    by walking the packages. CI builds the site with warnings as errors.
    """
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    monkeypatch.syspath_prepend(str(root / "docs"))
    sys.modules.pop("sphinx_ext", None)
    import sphinx_ext

    monkeypatch.setattr(sphinx_ext, "MODULES", tmp_path)
    pages = sphinx_ext.write_module_pages()
    text = "\n".join((tmp_path / f"{p}.md").read_text(encoding="utf-8") for p in pages)
    documented = set(re.findall(r"^\.\. automodule:: (\S+)$", text, flags=re.M))
    documented |= sphinx_ext.PUBLIC  # on reference/api/*.md
    every = set(MODULES) | set(MIA_MODULES)
    every = {m for m in every if not any(p.startswith("_") for p in m.split(".")[1:])}
    missing = sorted(every - documented - sphinx_ext.SKIP)
    assert not missing, f"modules no API page documents: {missing}"
    for public in ("bayes_dp", "mia"):
        page = (root / "docs" / "reference" / "api" / f"{public}.md").read_text(encoding="utf-8")
        assert f".. automodule:: {public}\n   :members:\n   :imported-members:" in page
