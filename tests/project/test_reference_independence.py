"""The quadrature reference (``tests/reference/``) imports numpy, scipy and the standard library.

A reference that called the sampler's code (``samplers``, ``bayes_dp``'s kernels) or the
simulators of ``benchmarks/_support`` would share their errors and could not find them: its modules
may import only numpy, scipy, the standard library and one another.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.project.test_conventions import _imports

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
#: what a module of the reference may import (top-level names; ``tests`` only as
#: ``tests.reference``, checked in ``_foreign_imports``)
ALLOWED = {"numpy", "scipy", "__future__", "tests"} | set(sys.stdlib_module_names)


def _foreign_imports(path: Path) -> list[str]:
    """``file:line: module`` of every import of ``path`` outside ``ALLOWED`` and the reference."""
    bad = [f"{path.name}:{line}: {mod}" for line, mod in _imports(path) if mod not in ALLOWED]
    text = path.read_text().splitlines()
    for line, mod in _imports(path):
        if mod == "tests" and "tests.reference" not in text[line - 1]:
            bad.append(f"{path.name}:{line}: {text[line - 1].strip()}")
    return bad


def _modules() -> list[Path]:
    return [p for p in sorted(REFERENCE.glob("*.py")) if not p.name.startswith("test_")]


def test_the_reference_has_its_modules():
    names = {p.stem for p in _modules()}
    assert {"geometry", "quadrature", "binomial", "correlated", "grid", "posterior"} <= names


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_reference_imports_only_numpy_scipy_and_the_standard_library(path):
    bad = _foreign_imports(path)
    assert not bad, f"the quadrature reference may import only numpy, scipy and itself: {bad}"


def test_the_check_finds_an_import_of_the_sampler(tmp_path):
    f = tmp_path / "x.py"
    f.write_text(
        "import numpy as np\n"
        "from tests.reference.grid import _cdf_at\n"
        "from tests._support import power\n"
        "from benchmarks._support import stress_cases\n"
        "\ndef f():\n    from samplers import binomial\n"
    )
    assert _foreign_imports(f) == [
        "x.py:4: benchmarks",
        "x.py:7: samplers",
        "x.py:3: from tests._support import power",
    ]
