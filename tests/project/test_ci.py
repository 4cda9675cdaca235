"""The CI script (.ci/run) runs what the README and docs/validation/index.md say it runs."""

import os
import re
import subprocess
import sys
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
    assert any('-e ".[test,docs]"' in ln and ln.startswith("python -m pip install") for ln in lines)
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    assert "nitpicky = True" in conf and "myst_heading_anchors" in conf


def _ci_lines(name="run"):
    return [ln.strip() for ln in (ROOT / ".ci" / name).read_text(encoding="utf-8").splitlines()]


def test_every_ci_test_stage_has_a_floor_and_the_floor_fails_a_short_run(tmp_path):
    # each pytest stage of .ci/run is preceded by its floor (tests/conftest.py fails the run
    # when fewer tests ran); the floor of the last stage is not left set for the next one
    lines = _ci_lines()
    floor = None
    for ln in lines:
        if ln.startswith("export BAYES_DP_MIN_TESTS="):
            floor = int(ln.split("=", 1)[1])
        elif ln.startswith("unset BAYES_DP_MIN_TESTS"):
            floor = None
        elif ln.startswith("python -m pytest"):
            assert floor and floor > 0, f"no floor before {ln!r}"
    # the mechanism: 2 tests that pass, under a floor of 3, fail the run; under 2 they pass
    test = tmp_path / "test_two.py"
    test.write_text("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    for floor, code in ((3, 1), (2, 0)):
        env = dict(os.environ, BAYES_DP_MIN_TESTS=str(floor), PYTHONPATH=str(ROOT))
        env.pop("BAYES_DP_MUTATION", None)
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
             str(ROOT), "-c", str(ROOT / "pyproject.toml"), "--confcutdir", str(ROOT / "tests"),
             "-p", "tests.conftest", str(test)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert proc.returncode == code, proc.stdout[-2000:]
        assert f"2 tests ran (the stage's floor, BAYES_DP_MIN_TESTS, is {floor})" in proc.stdout


def test_extras_stage_fails_when_an_extra_does_not_install(tmp_path):
    # a `python` whose pip installs fail and whose pytest passes: the stage fails unless
    # EXTRAS_MAY_FAIL names every extra (and says so)
    shim = tmp_path / "python"
    shim.write_text(
        "#!/usr/bin/env bash\n"
        'if [ "$1 $2" = "-m pip" ]; then echo "no wheel" >&2; exit 1; fi\n'
        'if [ "$1 $2" = "-m pytest" ]; then exit 0; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    shim.chmod(0o755)
    for allowed, code in (("", 1), ("ray", 1), ("torch dask flower ray hf", 0)):
        env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
        env["EXTRAS_MAY_FAIL"] = allowed
        proc = subprocess.run(
            ["bash", str(ROOT / ".ci" / "extras.sh")],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == code, (allowed, proc.stdout[-2000:])
        assert f"extras allowed not to install (EXTRAS_MAY_FAIL): {allowed or 'none'}" in (
            proc.stdout
        )
