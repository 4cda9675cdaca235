"""The modules of bayes_dp and of mia import each other without a cycle, bayes_dp's in layers.

The graph is read with ``ast`` from the source, counting every import of a module of the same
package: at the top of a file and inside functions (lazy imports) alike, but not those under
``if TYPE_CHECKING:`` (never run). Modules are named by their dotted path below the package
(``core.priors``; a package by its own name, ``report``). In bayes_dp one edge is allowed against
the layers and to close a cycle: ``Posterior.report()`` imports the report, which draws plots of a
Posterior (documented at that import). mia has no such edge, and no module of mia imports another
one's ``_private`` name (a name two modules share is public, in a leaf module).
"""

import ast
import graphlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "bayes_dp"
MIA = ROOT / "mia"
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


def _imports(path: Path, here: str, modules, pkg: str = "bayes_dp") -> list[tuple]:
    """Return (module imported, line, inside a function, name) for each import of a module of
    ``pkg``; ``name`` is the name taken from it (``from X import name``), else None.
    """
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
                elif (child.module or "").split(".")[0] == pkg:
                    mod = child.module.partition(".")[2]
                else:
                    mod = None  # another package
                if mod is not None:
                    for a in child.names:  # from X import name: a submodule X.name, or a name of X
                        sub = f"{mod}.{a.name}" if mod else a.name
                        if sub in modules:
                            targets.append((sub, None))
                        else:
                            targets.append((_resolve(mod, modules) or "__init__", a.name))
            elif isinstance(child, ast.Import):
                for a in child.names:
                    parts = a.name.split(".")
                    if parts[0] == pkg:
                        rest = ".".join(parts[1:])
                        targets.append((_resolve(rest, modules) if rest else "__init__", None))
            out.extend((t, child.lineno, inner, name) for t, name in targets)
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


def _graph(
    root: Path | None = None, pkg: str = "bayes_dp"
) -> tuple[dict[str, set[str]], list[tuple[str, str, int, bool]]]:
    """The import graph of the package at ``root`` (default bayes_dp), and its edges."""
    graph, edges = {}, []
    for name, target, line, lazy, _ in _edges(PKG if root is None else root, pkg):
        graph.setdefault(name, set())
        if target is not None:
            graph[name].add(target)
            edges.append((name, target, line, lazy))
    return graph, edges


def _edges(root: Path, pkg: str) -> list[tuple]:
    """(importer, imported, line, lazy, name) for every import between two modules of ``pkg``,
    and (module, None, 0, False, None) for every module (so that a leaf is in the graph).
    """
    modules = _modules(root)
    out = []
    for name, p in modules.items():
        out.append((name, None, 0, False, None))
        for target, line, lazy, taken in _imports(p, name, modules, pkg):
            assert target in modules, f"{name}:{line} imports unknown {pkg}.{target}"
            if target != name:
                out.append((name, target, line, lazy, taken))
    return out


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


def _check_acyclic(graph: dict[str, set[str]], pkg: str) -> None:
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as e:
        pytest.fail(f"import cycle in {pkg}: {' -> '.join(reversed(e.args[1]))}")
    assert set(order) == set(graph)


def test_no_import_cycle_in_bayes_dp():
    graph, _ = _graph()
    for a, b in ALLOWED:
        graph.get(a, set()).discard(b)
    _check_acyclic(graph, "bayes_dp")


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


def _private_uses(root: Path, pkg: str) -> list[str]:
    """``module._name`` of another module of ``pkg`` used (attribute access)."""
    modules = _modules(root)
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
                bad.append(f"{pkg}.{name}:{node.lineno} uses {node.value.id}.{node.attr}")
    return bad


def test_modules_call_no_private_function_of_another_module():
    """``module._name`` of another bayes_dp module is not called (the report used one of plots)."""
    bad = _private_uses(PKG, "bayes_dp")
    assert not bad, bad


#: Inside a sub-package its modules have layers too, lowest first; the package's own name
#: (its ``__init__``) is the top, so that no module of it reaches up to its facade.
INNER = {
    "plots": [
        {"plots.style"},
        {"plots.kde"},
        {"plots.posterior_plots", "plots.region_plots", "plots.diagnostic_plots"},
        {"plots"},
    ],
}


def _inner_bad(edges) -> list[str]:
    bad = []
    for a, b, line, _ in edges:
        pkg = a.split(".")[0]
        if pkg in INNER and b.split(".")[0] == pkg:
            rank = {m: i for i, layer in enumerate(INNER[pkg]) for m in layer}
            if a not in rank or b not in rank:
                bad.append(f"bayes_dp.{a if a not in rank else b} is in no layer of INNER[{pkg!r}]")
            elif rank[b] > rank[a]:
                bad.append(f"bayes_dp.{a}:{line} imports bayes_dp.{b}")
    return bad


def test_modules_of_a_sub_package_import_downward_inside_it():
    """plots: style < kde < the figures < the package (which only gathers the public names)."""
    _, edges = _graph()
    assert not _inner_bad(edges), _inner_bad(edges)


def test_no_module_imports_its_own_package():
    """A module of core/, inference/, ... never imports its package's ``__init__``.

    (A package's ``__main__``, the script ``python -m bayes_dp.cli`` runs, calls its package.)
    """
    _, edges = _graph()
    bad = [
        f"bayes_dp.{a}:{line} imports bayes_dp.{b}"
        for a, b, line, _ in edges
        if "." in a and b == a.split(".")[0] and not a.endswith(".__main__")
    ]
    assert not bad, bad


def test_inner_layers_would_catch_an_upward_import():
    edges = [("plots.style", "plots.kde", 3, False), ("plots.kde", "plots.style", 4, False)]
    assert _inner_bad(edges) == ["bayes_dp.plots.style:3 imports bayes_dp.plots.kde"]
    assert _inner_bad([("plots.new", "plots.style", 1, False)]) == [
        "bayes_dp.plots.new is in no layer of INNER['plots']"
    ]


def _private_imports(root: Path, pkg: str) -> list[str]:
    """``from <module of pkg> import _name`` in another module, and ``module._name`` used."""
    bad = [
        f"{pkg}.{a}:{line} imports {taken} from {pkg}.{b}"
        for a, b, line, _, taken in _edges(root, pkg)
        if b is not None and taken and taken.startswith("_") and not taken.startswith("__")
    ]
    return bad + _private_uses(root, pkg)


def test_no_import_cycle_in_mia():
    """mia's modules, lazy imports included, form no cycle (no edge is allowed to close one)."""
    graph, _ = _graph(MIA, "mia")
    _check_acyclic(graph, "mia")


def test_no_private_name_crosses_mia_modules():
    """A name another module of mia needs is public (in a leaf module, or the two are one)."""
    bad = _private_imports(MIA, "mia")
    assert not bad, bad


def test_reader_sees_mia_imports():
    graph, edges = _graph(MIA, "mia")
    assert "readers._common" in graph["readers.lira"]  # relative, top level
    assert "canary" in graph["coverage"] and "mia" not in graph  # lazy, into a sub-package
    assert graph["_accounting"] == set()  # a leaf


def test_mia_checks_would_fail(tmp_path):
    """A lazy import closing a cycle, and a private name taken from another module, are found."""
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text("from .b import f\n\n_SIDES = (1,)\n")
    (tmp_path / "b.py").write_text("def f():\n    from mia.a import _SIDES\n")
    (tmp_path / "c.py").write_text("from . import b\n\nb._g()\n")
    graph, _ = _graph(tmp_path, "mia")
    assert graph["a"] == {"b"} and graph["b"] == {"a"}
    with pytest.raises(pytest.fail.Exception, match="import cycle in mia"):
        _check_acyclic(graph, "mia")
    assert _private_imports(tmp_path, "mia") == [
        "mia.b:2 imports _SIDES from mia.a",
        "mia.c:3 uses b._g",
    ]
