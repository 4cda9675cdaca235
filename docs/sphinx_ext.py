"""Pages the documentation build writes before Sphinx reads the sources.

* ``reference/modules/<package>.md``: one page per sub-package of ``bayes_dp``, ``mia`` and
  ``samplers``, with ``automodule`` of each of its modules (found by walking the packages, so a
  new module is documented without an edit here);
* ``reference/_generated/*.md``: the tables of the ``--json`` fields, the netCDF groups and
  attributes and the exit statuses, from ``bayes_dp.cli.schema`` and
  ``bayes_dp.cli.EXIT_STATUSES`` (included by ``reference/output.md``).

Both folders are written anew at every build and are not tracked (``.gitignore``).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent
MODULES = DOCS / "reference" / "modules"
GENERATED = DOCS / "reference" / "_generated"

#: top-level packages documented module by module, and a line saying what each holds
PACKAGES = {
    "bayes_dp": "the estimators, posteriors, claims, reports and the command line",
    "mia": "attacks, score matrices and the readers of other tools' results",
    "samplers": "the numba kernels of the two samplers and their runners (run_exact, run_mhaar)",
}
#: packages whose public names ``reference/api/*.md`` documents (not again on the module pages)
PUBLIC = {"bayes_dp", "bayes_dp.plots", "bayes_dp.report", "bayes_dp.io", "mia", "mia.canary"}
#: modules left out: entry points without API of their own
SKIP = {"bayes_dp.__main__", "bayes_dp.cli.__main__"} | PUBLIC


def _write(path: Path, text: str) -> None:
    """Write ``text`` unless the file holds it already (so Sphinx does not reread it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _groups() -> dict[str, list[str]]:
    """``{page: [module, ...]}``: each sub-package (and each package's own files) on one page."""
    pages: dict[str, list[str]] = {}
    for top in PACKAGES:
        pkg = importlib.import_module(top)
        names = [top, *(m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=top + "."))]
        for name in sorted(names):
            if name in SKIP or any(part.startswith("_") for part in name.split(".")[1:]):
                continue
            parts = name.split(".")
            is_pkg = hasattr(importlib.import_module(name), "__path__")
            page = ".".join(parts[:2]) if (len(parts) > 2 or is_pkg) else top
            pages.setdefault(page, []).append(name)
    return pages


def write_module_pages() -> list[str]:
    """Write one page per sub-package; return the page names."""
    pages = _groups()
    for page, modules in pages.items():
        lines = [f"# `{page}`", ""]
        if page in PACKAGES:
            lines += [f"Modules of `{page}` outside its sub-packages: {PACKAGES[page]}.", ""]
        for mod in modules:
            lines += [
                f"## `{mod}`",
                "",
                "```{eval-rst}",
                f".. automodule:: {mod}",
                "   :members:",
                "   :undoc-members:",
                "   :ignore-module-all:",
                "```",
                "",
            ]
        _write(MODULES / f"{page}.md", "\n".join(lines))
    order = sorted(pages)
    index = [
        "# All modules",
        "",
        "Every module of `bayes_dp`, `mia` and `samplers`, generated from the docstrings at each",
        "build. The public API is on the pages before this one; the modules below are for readers",
        "of the code (what a docstring cites by its module path resolves here).",
        "",
        "```{toctree}",
        ":maxdepth: 1",
        "",
        *order,
        "```",
        "",
    ]
    _write(MODULES / "index.md", "\n".join(index))
    for stale in MODULES.glob("*.md"):
        if stale.stem not in pages and stale.stem != "index":
            stale.unlink()
    return order


def _table(head: tuple[str, str], rows) -> str:
    out = [f"| {head[0]} | {head[1]} |", "| --- | --- |"]
    for key, text in rows:
        cell = " ".join(str(text).split()).replace("|", "\\|")
        out.append(f"| {key} | {cell} |")
    return "\n".join(out) + "\n"


def write_schema_tables() -> None:
    """Write the tables of ``reference/output.md`` from ``bayes_dp.cli.schema``."""
    from bayes_dp.cli import EXIT_STATUSES, schema

    _write(
        GENERATED / "json_fields.md",
        _table(("key", "content"), ((f"`{k}`", v) for k, v in schema.JSON_FIELDS.items())),
    )
    _write(
        GENERATED / "json_gdp_fields.md",
        _table(("key", "content"), ((f"`{k}`", v) for k, v in schema.JSON_GDP_FIELDS.items())),
    )
    _write(
        GENERATED / "json_failure_fields.md",
        _table(("key", "content"), ((f"`{k}`", v) for k, v in schema.JSON_FAILURE_FIELDS.items())),
    )
    _write(
        GENERATED / "claim_fields.md",
        _table(("key", "content"), ((f"`{k}`", v) for k, v in schema.CLAIM_FIELDS.items())),
    )
    _write(
        GENERATED / "netcdf_fields.md",
        _table(
            ("group or attribute", "content"), ((f"`{k}`", v) for k, v in schema.NETCDF.items())
        ),
    )
    _write(
        GENERATED / "exit_statuses.md",
        _table(("status", "meaning"), ((str(k), v) for k, v in EXIT_STATUSES.items())),
    )


def _resolve_by_object(app, env, node, contnode):
    """Resolve a Python reference by the object it names, wherever that object is documented.

    A docstring may name an object by any path it can be imported from (``bayes_dp.one_run.
    one_run_epsilon_bound``, re-exported from ``bayes_dp.one_run.core``): import it, and link to
    the documented name under which the same object lives. A path that imports nothing, or an
    object documented nowhere, stays unresolved (and fails the build: ``nitpicky``).
    """
    if node.get("refdomain") != "py":
        return None
    target = "".join(node.get("reftarget", "").split())  # a name broken across lines
    if not target.startswith(tuple(PACKAGES)):
        return None
    obj = _import(target)
    if obj is _MISSING:
        return None
    domain = env.get_domain("py")
    short = target.rsplit(".", 1)[-1]
    for name, entry in domain.objects.items():
        if name.rsplit(".", 1)[-1] != short or getattr(entry, "aliased", False):
            continue
        if _import(name) is obj:
            return domain.resolve_xref(
                env, node["refdoc"], app.builder, entry.objtype, name, node, contnode
            ) or domain.resolve_xref(env, node["refdoc"], app.builder, "obj", name, node, contnode)
    return None


_MISSING = object()


def _import(dotted: str):
    """The object at ``dotted`` (module, then attributes), or ``_MISSING``."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return _MISSING
        return obj
    return _MISSING


#: |x| (an absolute value or a set's area, ``|R_s|``) outside inline literals; reST would read
#: it as a substitution, which the project's docstrings never mean
_BARS = re.compile(r"(?<![\\|\w])\|(?=[^\s|])([^|`\n]*?[^\s|\\])\|(?![\w|])")


def _plain_text_docstring(app, what, name, obj, options, lines) -> None:
    """Keep the docstrings' plain-text notation as written (|R_s|, ``scale``^2).

    Lines of literal blocks and doctest examples are left alone; elsewhere, outside inline
    literals, ``|x|`` is escaped so that reST shows the bars instead of looking up a
    substitution, and an inline literal followed by ``^`` or a letter is ended explicitly.
    """
    if what == "module":  # sections of a module docstring would be headings of the page
        for i in range(len(lines) - 1):
            title, rule = lines[i].strip(), lines[i + 1].strip()
            if title and len(rule) >= 3 and set(rule) == {"-"} and len(rule) == len(title):
                lines[i], lines[i + 1] = f".. rubric:: {title}", ""
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if stripped.startswith((">>>", "...")):
            continue
        parts = line.split("``")
        for j in range(0, len(parts), 2):  # even parts lie outside inline literals
            parts[j] = _BARS.sub(r"\\|\1\\|", parts[j])
        for j in range(2, len(parts), 2):
            parts[j] = re.sub(r"^(?=[\^\w])", r"\\ ", parts[j])
        lines[i] = "``".join(parts)
        if line.rstrip().endswith("::"):
            literal_indent = indent


def cli_parser():
    """The parser of ``bayes-dp`` (``bayes_dp.cli``), its texts made safe to read as reST.

    ``reference/cli.md`` documents this parser: the command's own, with each description and
    epilog laid out by hand (indented columns, examples) shown as a literal block, and the
    ``*`` of glob patterns in help texts escaped. No option is added, removed or renamed.
    """
    import argparse
    import textwrap

    from bayes_dp.cli import _parser

    def literal(text):
        if text and "\n" in text.strip():
            return "::\n\n" + textwrap.indent(text.strip("\n"), "    ")
        return text

    def visit(parser):
        parser.description = literal(parser.description)
        parser.epilog = literal(parser.epilog)
        for action in parser._actions:
            if action.help and action.help is not argparse.SUPPRESS:
                action.help = action.help.replace("*", "\\*")
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    visit(sub)
        return parser

    return visit(_parser())


def _on_builder_inited(app) -> None:
    write_module_pages()
    write_schema_tables()


def setup(app):
    """Register the page writers with Sphinx."""
    app.connect("builder-inited", _on_builder_inited)
    app.connect("missing-reference", _resolve_by_object)
    app.connect("autodoc-process-docstring", _plain_text_docstring, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
