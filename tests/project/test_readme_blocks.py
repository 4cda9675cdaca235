"""Every ```python block of README.md runs as written.

Each block runs on its own (a fresh namespace, in a temporary folder: whatever it writes lands
there), so every block must define the data it uses. A block may be preceded by marker lines,
HTML comments that GitHub does not show (several combine):

* ``<!-- readme-test: requires MODULE[,MODULE...] -->``: skipped, naming the missing module,
  when one cannot be imported (the optional extras: torch, opacus, ray, distributed);
* ``<!-- readme-test: slow REASON -->``: run only with ``-m slow`` (a block that takes minutes);
* ``<!-- readme-test: skip REASON -->``: never run, the reason printed (a block that needs a
  cluster or a module of the reader's own);
* ``<!-- readme-test: warns CLASS REASON -->``: the block must emit a warning of
  ``bayes_dp.CLASS`` (a block that shows what a warning looks like); without it, any warning
  fails the block, as in the rest of the test suite.

Without a marker a block must run in seconds: it is part of the default test run.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MARKER = re.compile(r"<!--\s*readme-test:\s*(requires|slow|skip|warns)\b\s*(.*?)\s*-->")
FENCE = re.compile(r"^```python\n(.*?)^```\n", re.S | re.M)


def readme_blocks(text: str) -> list[tuple[int, str, tuple[tuple[str, str], ...]]]:
    """``(line, code, markers)`` of each ```python block; a marker is ``(kind, argument)``."""
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        markers = []
        for before in reversed(text[: m.start()].rstrip("\n").split("\n")):
            mk = MARKER.fullmatch(before.strip())
            if not mk:
                break
            markers.insert(0, (mk.group(1), mk.group(2)))
        out.append((line, m.group(1), tuple(markers)))
    return out


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def _param(line, code, markers):
    marks = [pytest.mark.slow] if any(k == "slow" for k, _ in markers) else []
    return pytest.param(code, markers, id=f"line{line}", marks=marks)


@pytest.mark.parametrize("code, markers", [_param(*b) for b in BLOCKS])
def test_readme_block_runs(code, markers, tmp_path, monkeypatch, capsys):
    for kind, arg in markers:
        if kind == "skip":
            pytest.skip(f"marked skip in README.md: {arg}")
        if kind == "requires":
            for mod in (m.strip() for m in arg.split(",")):
                if importlib.util.find_spec(mod) is None:
                    pytest.skip(f"needs the optional module {mod!r}, not installed")
    monkeypatch.chdir(tmp_path)  # files the block writes go here, not into the checkout
    monkeypatch.setenv("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    expected = [arg.split()[0] for kind, arg in markers if kind == "warns"]
    import bayes_dp

    warns = pytest.warns(getattr(bayes_dp, expected[0])) if expected else contextlib.nullcontext()
    t0 = time.perf_counter()
    try:
        with warns:
            exec(compile(code, "README.md block", "exec"), {"__name__": "__readme__"})
    finally:
        plt.close("all")
    with capsys.disabled():
        print(f" [{time.perf_counter() - t0:.1f} s]", end="")


def test_markers_are_recognised_and_every_block_found():
    text = (
        "a\n<!-- readme-test: skip needs a cluster -->\n```python\nx = 1\n```\n"
        "```python\ny = 2\n```\n<!-- readme-test: requires torch, ray -->\n```python\nz\n```\n"
    )
    found = readme_blocks(text)
    assert [(c, m) for _, c, m in found] == [
        ("x = 1\n", (("skip", "needs a cluster"),)),
        ("y = 2\n", ()),
        ("z\n", (("requires", "torch, ray"),)),
    ]
    assert [line for line, _, _ in found] == [3, 6, 10]
    # README.md has blocks, and every marker in it sits right above a block
    assert len(BLOCKS) >= 2  # the short tour: counts -> claim -> report, and a LiRA folder
    on_own_line = re.compile(r"^\s*" + MARKER.pattern + r"\s*$", re.M)
    n_markers = len(on_own_line.findall(README.read_text(encoding="utf-8")))
    assert n_markers == sum(len(m) for _, _, m in BLOCKS)


def test_a_block_with_an_undefined_name_fails(tmp_path, monkeypatch, capsys):
    # the API tour once used `decisions` without defining it: such a block fails here
    with pytest.raises(NameError, match="decisions"):
        test_readme_block_runs("import bayes_dp\ndecisions\n", (), tmp_path, monkeypatch, capsys)
    with pytest.raises(pytest.skip.Exception, match="cluster"):
        marker = (("skip", "needs a cluster"),)
        test_readme_block_runs("x", marker, tmp_path, monkeypatch, capsys)
    with pytest.raises(pytest.skip.Exception, match="no_such_module_xyz"):
        marker = (("requires", "no_such_module_xyz"),)
        test_readme_block_runs("x", marker, tmp_path, monkeypatch, capsys)


def test_a_warns_marker_needs_the_warning(tmp_path, monkeypatch, capsys):
    """A block marked ``warns CLASS`` passes when it emits that warning and fails when not."""
    marker = (("warns", "ConvergenceWarning shows the warning"),)
    code = (
        "import warnings, bayes_dp\n"
        "w = bayes_dp.ConvergenceWarning('slow', var='eps', r_hat=1.1, ess_bulk=9, ess_tail=9)\n"
        "warnings.warn(w)\n"
    )
    test_readme_block_runs(code, marker, tmp_path, monkeypatch, capsys)
    with pytest.raises(pytest.fail.Exception, match="ConvergenceWarning"):
        test_readme_block_runs("x = 1\n", marker, tmp_path, monkeypatch, capsys)
