"""The CI script (.ci/run) runs what the README and docs/validation/index.md say it runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _readme_test_command():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^(python -m pytest [^\n#]*?)\s*# the tests$", text, flags=re.M)
    assert m, "README: no line 'python -m pytest ...  # the tests'"
    return m.group(1).strip()


def test_ci_runs_the_readme_test_command_then_the_statistical_stage_then_the_extras():
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    main = lines.index(_readme_test_command())
    stat = next(i for i, ln in enumerate(lines) if ln.startswith("python -m pytest -m statistical"))
    extras = lines.index("bash .ci/extras.sh")
    assert main < stat < extras


def test_validation_doc_names_the_stage_command():
    text = (ROOT / "docs" / "validation" / "index.md").read_text(encoding="utf-8")
    assert "python -m pytest -m statistical" in text and _readme_test_command() in text


def test_ci_builds_the_docs_after_ruff_with_warnings_as_errors():
    """.ci/run builds the site with the README's command: warnings are errors, nitpicky on."""
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    build = "python -m sphinx -W --keep-going -b html docs docs/_build/html"
    assert build in readme
    ruff = lines.index("ruff format --check .")
    docs = next(i for i, ln in enumerate(lines) if ln.startswith(build))
    tests = lines.index(_readme_test_command())
    assert ruff < docs < tests
    assert any('pip install -q -e ".[test,docs]"' in ln for ln in lines)
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    assert "nitpicky = True" in conf and "myst_heading_anchors" in conf
