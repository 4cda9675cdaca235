"""The documents name things that exist and numbers that the code uses.

* every file path (``samplers/exact/chain.py``, ``benchmarks/bench_sampler.py``, ...) and every
  dotted name in backticks (``bayes_dp.Posterior.converged``, ``samplers.exact.chain.Model``) in
  README.md and the Markdown pages under docs/ exists;
* docs/validation/model.md's description of the default sampler states the constants of
  ``samplers/exact/chain.py`` and ``bayes_dp/inference/estimate.py`` (warm-up length, first step
  size, gain of
  the scale recursion, acceptance target), and names only the methods there are.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    ROOT / "README.md",
    *sorted(
        p
        for p in (ROOT / "docs").rglob("*.md")
        if not {"_build", "_generated", "modules"} & set(p.relative_to(ROOT / "docs").parts)
    ),
]
PATH_RE = re.compile(
    r"(?<![\w/.])((?:samplers|bayes_dp|mia|benchmarks|examples|tests|docs|\.ci)/"
    r"[\w/.-]*\w\.(?:py|sh|md|png))"
)
NAME_RE = re.compile(r"`((?:bayes_dp|samplers|mia|bdp)\.[A-Za-z_][\w.]*)(?:\(\))?`")
#: short forms used in the text -> their module
ALIASES = {"bdp": "bayes_dp"}


def _refs(regex):
    for doc in DOCS:
        for m in regex.finditer(doc.read_text(encoding="utf-8")):
            yield str(doc.relative_to(ROOT)), m.group(1)


def _resolve(dotted: str):
    head, *rest = dotted.split(".")
    parts = ALIASES.get(head, head).split(".") + rest
    # the longest importable module prefix, then attributes
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_paths_in_the_docs_exist():
    refs = sorted(set(_refs(PATH_RE)))
    assert len(refs) > 20  # the pattern finds them
    missing = [f"{doc}: {p}" for doc, p in refs if not (ROOT / p).exists()]
    assert not missing, f"files named in the docs that do not exist: {missing}"


def test_dotted_names_in_the_docs_exist():
    refs = sorted(set(_refs(NAME_RE)))
    assert len(refs) > 20
    missing = []
    for doc, name in refs:
        try:
            _resolve(name)
        except (ImportError, AttributeError) as e:
            missing.append(f"{doc}: {name} ({type(e).__name__}: {e})")
    assert not missing, f"names in the docs that do not exist: {missing}"


def test_the_name_check_can_fail():
    with pytest.raises(AttributeError):
        _resolve("samplers.exact.chain.diagonal_walk")
    assert PATH_RE.findall("see samplers/diagonal.py.") == ["samplers/diagonal.py"]


def _model_md() -> str:
    return " ".join((ROOT / "docs" / "validation" / "model.md").read_text(encoding="utf-8").split())


def test_model_md_states_the_default_samplers_constants():
    from samplers.exact import chain as exact

    text = _model_md()
    from bayes_dp.core import thresholds
    from bayes_dp.inference.settings import MHAAR, Exact

    target = Exact().target_accept
    for phrase in (
        f"sd {exact.INITIAL_STEP:g} in every coordinate",
        f"(gain (t + 1)^-{exact.RM_POWER:g})",
        f"towards `target_accept` ({100 * target:g}%)",
        f"(`tune`, {Exact.default_tune:,} iterations by default)",
        f"(`tune`, {MHAAR.default_tune:,} iterations by default)",
        f"r_hat <= {thresholds.RHAT_MAX} and bulk and tail ESS >= {thresholds.AUTO_ESS_MIN:,}",
        f"within `max_time` ({thresholds.AUTO_MAX_TIME:g} s)",
    ):
        assert phrase in text, phrase


def test_model_md_names_only_the_samplers_there_are():
    from bayes_dp.inference.settings import SAMPLER_CLASSES

    named = set(re.findall(r"`sampler=bdp\.(\w+)\(", _model_md()))
    assert named == {cls.__name__ for cls in SAMPLER_CLASSES.values()}


def test_model_md_states_the_block_quadratures_constants():
    from samplers.exact import driver
    from samplers.model import binomial, binomial_block

    text = _model_md()
    for phrase in (
        f"({binomial_block.NODES}-point Gauss-Legendre",
        f"panels, {binomial_block.PANEL_SD:g} local scales wide",
        f"bases' {binomial.WINDOW_TAIL:g} windows",
        f"below {binomial.TAIL_PASS_BELOW:g} (the band in its tails)",
        f"at most {driver.START_BASES} representative bases",
    ):
        assert phrase in text, phrase


def test_layout_page_names_every_bayes_dp_module():
    """docs/reference/layout.md names every module of bayes_dp's sub-packages, and each folder."""
    layout = (ROOT / "docs" / "reference" / "layout.md").read_text(encoding="utf-8")
    pkgs = sorted(p.parent for p in (ROOT / "bayes_dp").glob("*/__init__.py"))
    missing = [f"{d.name}/" for d in pkgs if f"`{d.name}/`" not in layout]
    for d in pkgs:
        mods = {p.name for p in d.glob("*.py")} - {"__init__.py", "__main__.py"}
        missing += [f"{d.name}/{m}" for m in sorted(mods) if f"`{m}`" not in layout]
    assert not missing, f"docs/reference/layout.md does not name {missing}"
