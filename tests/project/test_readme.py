"""README.md shows what ``python examples/quickstart.py`` prints (``docs/update_readme.py``).

The quickstart samples until converged, minutes on a small machine, so it runs once here (a
module-scoped fixture, marker ``quickstart``) and not at all under ``NUMBA_DISABLE_JIT=1``,
where it would take hours. Its output depends on the seed and the package versions, not on the
machine's speed, unless its time budget runs out first; then this test fails and says so
rather than compare numbers that depend on the speed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_update_readme():
    spec = importlib.util.spec_from_file_location(
        "update_readme", ROOT / "docs" / "update_readme.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


ur = _load_update_readme()


@pytest.fixture(scope="module")
def quickstart_run():
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        pytest.skip("NUMBA_DISABLE_JIT is set: the quickstart would run for hours")
    return ur.run_quickstart(timeout=3600)


def _versions() -> str:
    import importlib.metadata

    out = []
    for pkg in ("numpy", "scipy", "numba", "arviz", "pandas"):
        try:
            out.append(f"{pkg} {importlib.metadata.version(pkg)}")
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            out.append(f"{pkg} ?")
    return ", ".join(out)


@pytest.mark.quickstart
def test_readme_shows_what_the_quickstart_prints(quickstart_run):
    if quickstart_run.out_of_time:
        pytest.fail(
            "examples/quickstart.py ran out of its time budget before it converged "
            f"({quickstart_run.seconds:.0f} s on this machine), so what it printed depends on "
            "the machine's speed and cannot be compared with the README's block (from a "
            "converged run). Run the tests on a less loaded machine.\n" + quickstart_run.stdout
        )
    shown = ur.readme_block(ur.README.read_text(encoding="utf-8"))
    d = ur.diff(shown, quickstart_run.stdout)
    assert not d, (
        "README.md's quickstart block is not what examples/quickstart.py prints; if the change "
        "is intended (a sampler change, or new versions of the packages: here "
        f"{_versions()}), run `python docs/update_readme.py`.\n{d}"
    )


def test_a_changed_number_in_the_block_is_found():
    text = ur.README.read_text(encoding="utf-8")
    shown = ur.readme_block(text)
    assert "converged: True" in shown and "(what the audit shows at 95%" in shown
    line = next(ln for ln in shown.splitlines() if ln.startswith("eps "))
    number = line.split()[1]
    edited = shown.replace(line, line.replace(number, number + "1", 1))
    assert edited != shown and ur.diff(edited, shown).count("\n-eps ") == 1
    assert not ur.diff(shown, shown)
    # rewriting the block changes nothing outside it
    new = ur.replace_block(text, edited)
    assert ur.readme_block(new) == edited
    assert new.replace(edited, shown) == text


def test_the_block_needs_its_markers():
    with pytest.raises(ValueError, match="markers"):
        ur.readme_block("no markers here\n")
    with pytest.raises(ValueError, match="code fence"):
        ur.readme_block(f"{ur.START}\nplain text\n{ur.END}\n")


def test_update_script_checks_rewrites_and_refuses_out_of_time_output(tmp_path, monkeypatch):
    text = ur.README.read_text(encoding="utf-8")
    shown = ur.readme_block(text)
    copy = tmp_path / "README.md"
    copy.write_text(text, encoding="utf-8")
    monkeypatch.setattr(ur, "README", copy)
    printed = shown

    def fake(stdout):
        monkeypatch.setattr(ur, "run_quickstart", lambda: ur.QuickstartRun(stdout, "", 1.0))

    fake(printed)
    assert ur.main(["--check"]) == 0
    other = shown.replace("(what the audit shows at 95%", "(what the audit shows at 96%")
    fake(other)
    assert ur.main(["--check"]) == 1 and copy.read_text(encoding="utf-8") == text
    late = other.replace("converged: True", "converged: False (stop reason: max_time)")
    fake(late)
    assert ur.main([]) == 2 and copy.read_text(encoding="utf-8") == text  # nothing written
    fake(other)
    assert ur.main([]) == 0 and ur.readme_block(copy.read_text(encoding="utf-8")) == other


def test_update_readme_rewrites_the_quoted_time():
    """The time the README quotes for the quickstart is rewritten with the block, and found once."""
    text = "x\nESS >= 4,000: 17 s in the run that made the output below, on y\n"
    assert "42 s in the run" in ur.replace_seconds(text, 41.6)
    assert len(ur.SECONDS.findall(ur.README.read_text(encoding="utf-8"))) == 1
    with pytest.raises(ValueError, match="once"):
        ur.replace_seconds("no time here", 3.0)
