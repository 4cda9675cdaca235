"""The modules of bayes_dp import each other without a cycle, and its sub-packages in layers.

The graph is read with ``ast`` from the source, counting every import of a bayes_dp module:
at the top of a file and inside functions (lazy imports) alike, but not those under
``if TYPE_CHECKING:`` (never run). Modules are named by their dotted path below ``bayes_dp``
(``core.priors``; a package by its own name, ``report``). One edge is allowed against the
layers and to close a cycle: ``Posterior.report()`` imports the report, which draws plots of a
Posterior (documented at that import).
"""

import ast
import graphlib
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "bayes_dp"
#: (importer, imported) edges allowed to close a cycle: the one documented lazy import.
ALLOWED = {("results.posterior", "report")}
#: The layers of bayes_dp, lowest first: a module imports only from its own layer or below.
LAYERS = [
    {"core"},
    {"results"},
    {"inference"},
    {"one_run"},
    {"gdp"},
    {"planning", "evaluation"},
    {"plots"},
    {"report"},
    {"io"},  # reading input files: builds the method families' evidence, read by the cli
    {"cli", "__init__"},  # the command line uses the public names of the lazy package facade
    {"__main__"},
]


def _name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("").parts
    if len(rel) > 1 and rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join(rel)


def _modules(root: Path) -> dict[str, Path]:
    return {_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _resolve(dotted: str, modules) -> str | None:
    """The longest prefix of ``dotted`` (below bayes_dp) that is a module, else None."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in modules:
            return cand
    return None


def _imports(path: Path, here: str, modules) -> list[tuple[str, int, bool]]:
    """Return (module imported, line, inside a function) for each import of a package module."""
    out = []
    is_pkg = path.name == "__init__.py"
    package = here if is_pkg else here.rpartition(".")[0]

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            targets = []
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".") if package and package != "__init__" else []
                    if child.level > 1:
                        base = base[: len(base) - (child.level - 1)]
                    mod = ".".join([*base, *([child.module] if child.module else [])])
                elif (child.module or "").split(".")[0] == "bayes_dp":
                    mod = child.module.partition(".")[2]
                else:
                    mod = None  # another package
                if mod is not None:
                    for a in child.names:  # from X import name: a submodule X.name, or a name of X
                        sub = f"{mod}.{a.name}" if mod else a.name
                        target = sub if sub in modules else _resolve(mod, modules) or "__init__"
                        targets.append(target)
            elif isinstance(child, ast.Import):
                for a in child.names:
                    parts = a.name.split(".")
                    if parts[0] == "bayes_dp":
                        rest = ".".join(parts[1:])
                        targets.append(_resolve(rest, modules) if rest else "__init__")
            out.extend((t, child.lineno, inner) for t in targets)
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


def _graph() -> tuple[dict[str, set[str]], list[tuple[str, str, int, bool]]]:
    modules = _modules(PKG)
    graph, edges = {m: set() for m in modules}, []
    for name, p in modules.items():
        for target, line, lazy in _imports(p, name, modules):
            assert target in modules, f"{name}:{line} imports unknown bayes_dp.{target}"
            if target != name:
                graph[name].add(target)
                edges.append((name, target, line, lazy))
    return graph, edges


def _layer(module: str) -> int:
    top = module.split(".")[0]
    for i, layer in enumerate(LAYERS):
        if top in layer:
            return i
    raise AssertionError(f"bayes_dp.{module} is in no layer of LAYERS")


def test_reader_sees_top_level_lazy_and_package_imports():
    """The reader finds the imports it must: top-level, inside functions, via the package."""
    graph, edges = _graph()
    assert "results.posterior" in graph["inference.estimate"]  # top level
    assert ("results.posterior", "report") in {(a, b) for a, b, _, lazy in edges if lazy}
    assert "core.thresholds" in graph["results.diagnostics"]


def test_no_import_cycle_in_bayes_dp():
    graph, _ = _graph()
    for a, b in ALLOWED:
        graph.get(a, set()).discard(b)
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as e:
        pytest.fail(f"import cycle in bayes_dp: {' -> '.join(e.args[1])}")
    assert set(order) == set(graph)


def test_every_module_is_in_a_layer_and_imports_only_downward():
    """No module reaches up: each imports its own layer or lower ones (one documented edge)."""
    _, edges = _graph()
    bad = [
        f"bayes_dp.{a}:{line} imports bayes_dp.{b}"
        for a, b, line, _ in edges
        if (a, b) not in ALLOWED and _layer(b) > _layer(a)
    ]
    assert not bad, bad


def test_the_allowed_edge_is_the_documented_lazy_import():
    _, edges = _graph()
    found = [(line, lazy) for a, b, line, lazy in edges if (a, b) in ALLOWED]
    assert found and all(lazy for _, lazy in found), found
    lines = (PKG / "results" / "posterior.py").read_text(encoding="utf-8").splitlines()
    line = found[0][0]
    assert "one lazy import" in " ".join(lines[line - 4 : line - 1])


def test_cycle_and_upward_import_would_be_found(tmp_path, monkeypatch):
    """The checks fail on a cycle, and on an import from a higher layer."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "__init__.py").write_text("")
    (tmp_path / "core" / "a.py").write_text("from bayes_dp.core.b import x\n")
    (tmp_path / "core" / "b.py").write_text("def f():\n    from . import a\n")
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "__init__.py").write_text("")
    (tmp_path / "core" / "c.py").write_text("from bayes_dp import report\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", tmp_path)
    graph, _ = _graph()
    assert graph["core.a"] == {"core.b"} and graph["core.b"] == {"core.a"}
    with pytest.raises(pytest.fail.Exception, match="import cycle"):
        test_no_import_cycle_in_bayes_dp()
    with pytest.raises(AssertionError, match="core.c:1 imports bayes_dp.report"):
        test_every_module_is_in_a_layer_and_imports_only_downward()


def test_diagnostics_do_not_import_posterior():
    graph, _ = _graph()
    assert "results.posterior" not in graph["results.diagnostics"]
    assert graph["core.thresholds"] == set()  # a leaf


def test_modules_call_no_private_function_of_another_module():
    """``module._name`` of another bayes_dp module is not called (the report used one of plots)."""
    modules = _modules(PKG)
    leaves = {m.rpartition(".")[2] for m in modules}
    bad = []
    for name, p in modules.items():
        own = name.rpartition(".")[2]
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in leaves - {own}
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                bad.append(f"{name}:{node.lineno} {node.value.id}.{node.attr}")
    assert not bad, bad
