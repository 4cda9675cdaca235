"""The benchmarks take their simulators from ``benchmarks/_support``, not from the tests.

A study that a benchmark runs at full size and a test runs reduced lives in
``benchmarks/_support/`` (issue 53, step 6); of ``tests/``, a benchmark imports only the
independent quadrature reference (``tests.reference``), which is the tests' truth.
``benchmarks/mutation_check.py`` is the one exception: it runs the test suite under the
mutations that ``tests/conftest.py`` installs (``tests/_support/mutations.py``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: benchmark file -> the modules of ``tests`` (other than the reference) it may import
EXCEPTIONS = {"mutation_check.py": {"tests._support.mutations"}}


def _tests_imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every import of a module of ``tests``, nested ones included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "tests"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "tests":
                out += [(node.lineno, f"tests.{a.name}") for a in node.names]
            elif node.module.startswith("tests."):
                out.append((node.lineno, node.module))
    return out


def _foreign(path: Path) -> list[str]:
    allowed = EXCEPTIONS.get(path.name, set())
    return [
        f"{path.relative_to(ROOT)}:{line}: {mod}"
        for line, mod in _tests_imports(path)
        if mod != "tests.reference"
        and not mod.startswith("tests.reference.")
        and mod not in allowed
    ]


def test_benchmarks_import_of_the_tests_only_the_reference():
    bad = [b for p in sorted((ROOT / "benchmarks").rglob("*.py")) for b in _foreign(p)]
    assert not bad, f"move the helper to benchmarks/_support/: {bad}"


def test_the_support_modules_are_there():
    names = {p.stem for p in (ROOT / "benchmarks" / "_support").glob("*.py")}
    assert {"lira_sim", "lira_real", "stress_cases", "pooled_sim"} <= names
    assert not {"lira_sim", "lira_real", "stress_cases", "pooled_sim"} & {
        p.stem for p in (ROOT / "tests" / "_support").glob("*.py")
    }


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from tests._support import lira_sim\n", ["x.py:1: tests._support"]),
        ("def f():\n    import tests._support.power\n", ["x.py:2: tests._support.power"]),
        ("from tests import _support\n", ["x.py:1: tests._support"]),
        ("from tests.reference import mixture\nfrom tests import reference\n", []),
    ],
)
def test_the_check_can_fail(tmp_path, monkeypatch, source, found):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    f = tmp_path / "x.py"
    f.write_text(source)
    assert _foreign(f) == found
