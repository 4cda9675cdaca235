"""Rules of the code base checked on the source: imports flow one way, seeds, thresholds.

* ``samplers`` imports only numpy, numba (and llvmlite, numba's code generator), the standard
  library and itself; the one run-time use of SciPy, the address of its compiled incomplete beta
  functions, is looked up in ``samplers/numerics/special.py`` and nowhere else;
* ``bayes_dp`` never imports ``mia`` (imports go mia -> bayes_dp -> samplers), with one known
  exception: ``bayes_dp.io`` reads score matrices and result folders through ``mia``'s readers
  (a lazy import in ``bayes_dp/io/foreign.py::evidence_from_mia``, listed below so that no other
  can creep in);
* every public function with a ``seed`` argument turns it into a Generator the one way
  (``as_generator``), so it takes an int or a ``numpy.random.Generator``;
* the convergence thresholds are compared against in ``bayes_dp/results/diagnostics.py`` only.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: numba's own code generator (a dependency of numba), used to register SciPy's symbols
NUMBA_FAMILY = {"numpy", "numba", "llvmlite"}


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module) of every absolute import in a file, nested ones included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def _py_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", _py_files("samplers"), ids=lambda p: p.name)
def test_samplers_import_only_numpy_numba_and_the_standard_library(path):
    allowed = NUMBA_FAMILY | set(sys.stdlib_module_names) | {"__future__", "samplers"}
    bad = [f"{path.name}:{line}: {mod}" for line, mod in _imports(path) if mod not in allowed]
    assert not bad, f"samplers may import only numpy, numba and the standard library: {bad}"


def test_the_import_check_can_fail(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("import numpy as np\n\ndef f():\n    from scipy.special import betaln\n")
    assert (4, "scipy") in _imports(f)


def test_only_special_looks_up_compiled_code_by_name():
    # SciPy's betainc reaches the kernels as a function address (numba's
    # get_cython_function_address), an import in all but name: keep it in one module
    names = {"get_cython_function_address", "import_module", "__import__"}
    where = set()
    for path in _py_files("samplers"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                fn = node.func
                name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
                if name in names:
                    where.add(path.name)
    assert where == {"special.py"}


#: (file, function) allowed to import against the flow: the one entry through which bayes_dp.io
#: reads what mia's own readers read (score matrices, counted by mia.counts_from_score_matrix;
#: result folders, read by mia.read_results); the other modules of bayes_dp do not depend on mia
AGAINST_THE_FLOW = {("bayes_dp/io/foreign.py", "evidence_from_mia")}


def _imports_by_function(path: Path) -> list[tuple[int, str, str]]:
    """(line, top-level module, enclosing function or "") of every absolute import."""
    out = []

    def visit(node, func):
        for child in ast.iter_child_nodes(node):
            name = (
                child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            )
            if isinstance(child, ast.Import):
                out.extend((child.lineno, a.name.split(".")[0], func) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                out.append((child.lineno, child.module.split(".")[0], func))
            visit(child, name)

    visit(ast.parse(path.read_text()), "")
    return out


@pytest.mark.parametrize("package", ["bayes_dp", "samplers"])
def test_no_import_against_the_flow(package):
    forbidden = {"bayes_dp": {"mia"}, "samplers": {"mia", "bayes_dp"}}[package]
    bad = [
        f"{p.relative_to(ROOT)}:{line}: {mod}"
        for p in _py_files(package)
        for line, mod, func in _imports_by_function(p)
        if mod in forbidden and (str(p.relative_to(ROOT)), func) not in AGAINST_THE_FLOW
    ]
    assert not bad, f"{package} must not import {sorted(forbidden)}: {bad}"


#: functions whose ``seed`` is a Generator by contract (the TrainingAlgorithm protocol: the
#: audit gives each model its own generator)
GENERATOR_ONLY = {
    ("mia/training.py", "fit"),
    ("mia/pytorch.py", "fit"),
    ("mia/pytorch.py", "train"),
}
#: functions that turn ``seed`` into a generator (or an audit's root seed)
CONVERTERS = {"as_generator", "_root_seed", "_generator"}


def _seed_functions():
    for package in ("bayes_dp", "mia"):
        for path in _py_files(package):
            rel = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                    continue
                args = [a.arg for a in node.args.args + node.args.kwonlyargs]
                if node.name in CONVERTERS or (rel, node.name) in GENERATOR_ONLY:
                    continue
                if "seed" in args:
                    yield rel, node


def _handles_seed(fn: ast.FunctionDef) -> bool:
    """Whether ``seed`` goes through a converter or is passed on as ``seed=seed``."""
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", None))
        uses = [a for a in node.args if isinstance(a, ast.Name) and a.id == "seed"]
        if name in CONVERTERS and uses:
            return True
        if any(
            k.arg == "seed" and isinstance(k.value, ast.Name) and k.value.id == "seed"
            for k in node.keywords
        ):
            return True
    return False


def test_public_seeds_take_an_int_or_a_generator():
    found = list(_seed_functions())
    assert len(found) >= 15  # the scan sees the functions (run_audit, estimate_epsilon, ...)
    bad = [f"{rel}:{fn.lineno} {fn.name}" for rel, fn in found if not _handles_seed(fn)]
    assert not bad, f"`seed` not turned into a Generator with as_generator: {bad}"


def test_the_seed_check_can_fail():
    fn = ast.parse("def f(x, seed=0):\n    return np.random.default_rng(seed)\n").body[0]
    assert not _handles_seed(fn)


def test_thresholds_are_compared_in_diagnostics_only():
    names = {"RHAT_MAX", "ESS_PER_CHAIN_MIN", "ACCEPT_RANGE"}
    where = set()
    for path in _py_files("bayes_dp"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                if used & names:
                    where.add(path.name)
    assert where == {"diagnostics.py"}
