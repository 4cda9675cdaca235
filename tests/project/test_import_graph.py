"""The modules of bayes_dp import each other without a cycle.

The graph is read with ``ast`` from the source, counting every import of a bayes_dp module:
at the top of a file and inside functions (lazy imports) alike, but not those under
``if TYPE_CHECKING:`` (never run). One edge is allowed: ``Posterior.report()`` imports the
report, which draws plots of a Posterior (documented at that import).
"""

import ast
import graphlib
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "bayes_dp"
#: (importer, imported) edges allowed to close a cycle: the one documented lazy import.
ALLOWED = {("posterior", "report")}


def _imports(path: Path, modules: set[str]) -> list[tuple[str, int, bool]]:
    """Return (module imported, line, inside a function) for each import of a package module."""
    out = []

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            targets = []
            if isinstance(child, ast.ImportFrom):
                assert child.level <= 1, f"{path.name}:{child.lineno}: import beyond bayes_dp"
                if child.level == 1:
                    mod = child.module or ""
                elif (child.module or "").split(".")[0] == "bayes_dp":
                    mod = child.module.partition(".")[2]
                else:
                    mod = None  # another package
                if mod:
                    targets.append(mod.split(".")[0])
                elif mod == "":  # from . import X: a submodule, or a name of the package
                    targets += [a.name if a.name in modules else "__init__" for a in child.names]
            elif isinstance(child, ast.Import):
                for a in child.names:
                    parts = a.name.split(".")
                    if parts[0] == "bayes_dp":
                        targets.append(parts[1] if len(parts) > 1 else "__init__")
            out.extend((t, child.lineno, inner) for t in targets)
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


def _graph() -> tuple[dict[str, set[str]], list[tuple[str, str, int, bool]]]:
    modules = {p.stem for p in PKG.glob("*.py")}
    graph, edges = {m: set() for m in modules}, []
    for p in sorted(PKG.glob("*.py")):
        for target, line, lazy in _imports(p, modules):
            assert target in modules, f"{p.name}:{line} imports unknown bayes_dp.{target}"
            if target != p.stem:
                graph[p.stem].add(target)
                edges.append((p.stem, target, line, lazy))
    return graph, edges


def test_reader_sees_top_level_lazy_and_package_imports():
    """The reader finds the imports it must: top-level, inside functions, via the package."""
    graph, edges = _graph()
    assert "posterior" in graph["estimate"]  # top level
    assert ("posterior", "report") in {(a, b) for a, b, _, lazy in edges if lazy}  # lazy
    assert "thresholds" in graph["diagnostics"]


def test_no_import_cycle_in_bayes_dp():
    graph, _ = _graph()
    for a, b in ALLOWED:
        graph.get(a, set()).discard(b)
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as e:
        pytest.fail(f"import cycle in bayes_dp: {' -> '.join(e.args[1])}")
    assert set(order) == set(graph)


def test_the_allowed_edge_is_the_documented_lazy_import():
    _, edges = _graph()
    found = [(line, lazy) for a, b, line, lazy in edges if (a, b) in ALLOWED]
    assert found and all(lazy for _, lazy in found), found
    lines = (PKG / "posterior.py").read_text(encoding="utf-8").splitlines()
    line = found[0][0]
    assert "one lazy import" in " ".join(lines[line - 4 : line - 1])


def test_cycle_would_be_found(tmp_path, monkeypatch):
    """The check fails on a cycle: two modules importing each other, one of them lazily."""
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from . import a\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", tmp_path)
    graph, _ = _graph()
    assert graph == {"a": {"b"}, "b": {"a"}}
    with pytest.raises(pytest.fail.Exception, match="import cycle"):
        test_no_import_cycle_in_bayes_dp()


def test_diagnostics_do_not_import_posterior():
    graph, _ = _graph()
    assert "posterior" not in graph["diagnostics"]
    assert graph["thresholds"] == set()  # a leaf


def test_modules_call_no_private_function_of_another_module():
    """``module._name`` of another bayes_dp module is not called (the report used one of plots)."""
    modules = {p.stem for p in PKG.glob("*.py")}
    bad = []
    for p in sorted(PKG.glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules - {p.stem}
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                bad.append(f"{p.name}:{node.lineno} {node.value.id}.{node.attr}")
    assert not bad, bad
