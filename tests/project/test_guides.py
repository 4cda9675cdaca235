"""The code blocks of the guides run, and what they print is what the page shows.

The pages of ``docs/tutorials/``, ``docs/howto/`` and ``docs/concepts/`` are read in order, each
in a temporary folder of its own and one namespace shared by its blocks (a page is a sequence a
reader follows):

* ```` ```pycon ```` blocks are doctests: each ``>>>`` line runs and its printed output is
  compared with the lines below it (``...`` stands for any text; runs of whitespace are one);
* ```` ```python ```` blocks run as written (what they print is not compared: a page that shows
  output uses ``pycon`` or ``console``);
* ```` ```console ```` blocks are commands: each ``$ `` line runs (``bayes-dp`` and ``python``
  with this checkout's packages; a path under ``examples/`` or ``benchmarks/`` is the
  checkout's) in the page's folder, must exit with status 0, and its stdout is compared with the
  lines below it as a doctest's output is.

A block may be preceded by marker lines, HTML comments the site does not show:

* ``<!-- docs-test: skip REASON -->``: never run (a block that installs, needs a cluster or a
  module of the reader's own); every ```` ```bash ```` block must carry one, so that each command
  a page shows either runs here or says why not;
* ``<!-- docs-test: requires MODULE[,MODULE] REASON -->`` and ``<!-- docs-test: slow REASON -->``:
  the block runs on its own (a fresh namespace), in a test of its own that is skipped without the
  module or run only with ``-m slow``; such a block defines everything it uses;
* ``<!-- docs-test: warns CLASS REASON -->``: the block must emit a warning of ``bayes_dp.CLASS``;
  without it, any warning fails the block, as in the rest of the suite.

README.md's blocks are run by ``test_readme_blocks.py`` and its quickstart output checked by
``test_readme.py``.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDES = ["tutorials", "howto", "concepts"]
PAGES = sorted(p for d in GUIDES for p in (ROOT / "docs" / d).glob("*.md"))
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!--\s*docs-test:\s*(skip|requires|slow|warns)\b\s*(.*?)\s*-->")
RUNNABLE = {"pycon", "python", "console"}
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: the longest a guide's console command may run (seconds)
COMMAND_TIMEOUT = 900


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    code: str
    markers: tuple[tuple[str, str], ...]

    @property
    def kinds(self) -> set[str]:
        return {k for k, _ in self.markers}

    @property
    def alone(self) -> bool:
        """Whether the block runs on its own, in a test of its own."""
        return bool(self.kinds & {"requires", "slow"})

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks_of(text: str, page: str) -> list[Block]:
    out = []
    for m in FENCE.finditer(text):
        markers = []
        for before in reversed(text[: m.start()].rstrip("\n").split("\n")):
            mk = MARKER.fullmatch(before.strip())
            if not mk:
                break
            markers.insert(0, (mk.group(1), mk.group(2)))
        line = text.count("\n", 0, m.start()) + 1
        out.append(Block(page, line, m.group(1), m.group(2), tuple(markers)))
    return out


def _page_name(p: Path) -> str:
    return str(p.relative_to(ROOT / "docs"))


BLOCKS = {_page_name(p): blocks_of(p.read_text(encoding="utf-8"), _page_name(p)) for p in PAGES}


# -- running one block -------------------------------------------------------------------------
def _run_pycon(block: Block, globs: dict) -> None:
    test = doctest.DocTestParser().get_doctest(block.code, globs, block.id, block.page, block.line)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    out: list[str] = []
    runner.run(test, out=out.append, clear_globs=False)
    globs.update(test.globs)  # the doctest ran on a copy: later blocks see its names
    if runner.failures:
        pytest.fail(f"{block.id}: doctest failed\n" + "".join(out), pytrace=False)


def _command(cmd: str) -> list[str]:
    argv = shlex.split(cmd)
    if argv[0] == "bayes-dp":
        argv = [sys.executable, "-m", "bayes_dp", *argv[1:]]
    elif argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    else:
        raise ValueError(f"a console block runs bayes-dp or python only; found {argv[0]!r}")
    return [
        str(ROOT / a) if a.startswith(("examples/", "benchmarks/")) and (ROOT / a).exists() else a
        for a in argv
    ]


def console_steps(code: str) -> list[tuple[str, str]]:
    """``(command, expected stdout)`` of each ``$`` line of a console block."""
    steps: list[tuple[str, list[str]]] = []
    cont = False
    for line in code.splitlines():
        if cont:
            joined = steps[-1][0].rstrip() + " " + line.strip().rstrip("\\").strip()
            steps[-1] = (joined, steps[-1][1])
            cont = line.rstrip().endswith("\\")
        elif line.startswith("$ "):
            steps.append((line[2:].strip().rstrip("\\"), []))
            cont = line.rstrip().endswith("\\")
        elif steps:
            steps[-1][1].append(line)
        else:
            raise ValueError(f"a console block starts with a '$ ' line; found {line!r}")
    return [(c, "\n".join(out).strip("\n") + "\n" if any(out) else "") for c, out in steps]


def _run_console(block: Block) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    checker = doctest.OutputChecker()
    for cmd, want in console_steps(block.code):
        proc = subprocess.run(
            _command(cmd),
            capture_output=True,
            text=True,
            env=env,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        if proc.returncode != 0:
            pytest.fail(
                f"{block.id}: `{cmd}` exited with status {proc.returncode}\n{proc.stderr}",
                pytrace=False,
            )
        if want and not checker.check_output(want, proc.stdout, OPTIONS):
            diff = checker.output_difference(doctest.Example(cmd, want), proc.stdout, OPTIONS)
            pytest.fail(f"{block.id}: `{cmd}` printed other output\n{diff}", pytrace=False)


def run_block(block: Block, globs: dict) -> None:
    expected = [arg.split()[0] for kind, arg in block.markers if kind == "warns"]
    import bayes_dp

    warns = pytest.warns(getattr(bayes_dp, expected[0])) if expected else contextlib.nullcontext()
    with warns:
        if block.lang == "pycon":
            _run_pycon(block, globs)
        elif block.lang == "python":
            exec(compile(block.code, block.id, "exec"), globs)
        elif block.lang == "console":
            _run_console(block)


@pytest.fixture
def page_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # files a page writes land here, not in the checkout
    monkeypatch.setenv("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield tmp_path
    plt.close("all")


@pytest.mark.parametrize("page", sorted(BLOCKS))
def test_guide_runs(page, page_folder, capsys):
    blocks = [b for b in BLOCKS[page] if b.lang in RUNNABLE and not b.alone]
    blocks = [b for b in blocks if "skip" not in b.kinds]
    if not blocks:
        pytest.skip(f"{page}: no block runs in the page's sequence")
    globs = {"__name__": "__guide__"}
    t0 = time.perf_counter()
    for b in blocks:
        run_block(b, globs)
    with capsys.disabled():
        print(f" [{len(blocks)} blocks, {time.perf_counter() - t0:.1f} s]", end="")


ALONE = [b for bs in BLOCKS.values() for b in bs if b.alone and "skip" not in b.kinds]


def _alone_param(b: Block):
    marks = [pytest.mark.slow] if "slow" in b.kinds else []
    return pytest.param(b, id=b.id, marks=marks)


@pytest.mark.parametrize("block", [_alone_param(b) for b in ALONE] or [pytest.param(None)])
def test_guide_block_on_its_own(block, page_folder):
    if block is None:
        pytest.skip("no guide block runs on its own")
    for kind, arg in block.markers:
        if kind == "requires":
            for mod in arg.split()[0].split(","):
                if importlib.util.find_spec(mod) is None:
                    pytest.skip(f"{block.id}: needs the optional module {mod!r}, not installed")
    run_block(block, {"__name__": "__guide__"})


def test_every_shown_command_runs_or_says_why_not():
    """A block that cannot run (bash) carries a skip marker with its reason."""
    bad = [
        b.id
        for bs in BLOCKS.values()
        for b in bs
        if b.lang in ("bash", "sh", "shell") and not any(k == "skip" and a for k, a in b.markers)
    ]
    assert not bad, f"bash blocks without a '<!-- docs-test: skip REASON -->' marker: {bad}"


def test_the_guides_have_blocks_and_stay_short():
    assert len(PAGES) >= 10 and sum(len(v) for v in BLOCKS.values()) >= 20
    long = [p.name for p in PAGES if len(p.read_text(encoding="utf-8").splitlines()) > 300]
    assert not long, f"guides over 300 lines: {long}"


def test_the_block_reader():
    text = (
        "a\n<!-- docs-test: skip installs -->\n```bash\npip install x\n```\n"
        "```pycon\n>>> 1 + 1\n2\n```\n"
        "<!-- docs-test: requires torch trains -->\n<!-- docs-test: slow minutes -->\n"
        "```python\nimport torch\n```\n"
    )
    bs = blocks_of(text, "p.md")
    assert [(b.lang, b.markers) for b in bs] == [
        ("bash", (("skip", "installs"),)),
        ("pycon", ()),
        ("python", (("requires", "torch trains"), ("slow", "minutes"))),
    ]
    assert [b.line for b in bs] == [3, 6, 12] and bs[2].alone and not bs[1].alone
    steps = console_steps(
        "$ bayes-dp estimate a \\\n   --delta 1e-5\nline 1\nline 2\n$ python x.py\n"
    )
    assert steps == [("bayes-dp estimate a --delta 1e-5", "line 1\nline 2\n"), ("python x.py", "")]


def test_a_wrong_output_fails(page_folder):
    block = Block("t.md", 1, "pycon", ">>> print(1 + 1)\n3\n", ())
    with pytest.raises(pytest.fail.Exception, match="doctest failed"):
        run_block(block, {})
    run_block(Block("t.md", 1, "pycon", ">>> print('a  b')\na b\n", ()), {})
    console = Block("t.md", 1, "console", "$ python -c 'print(42)'\n41\n", ())
    with pytest.raises(pytest.fail.Exception, match="printed other output"):
        run_block(console, {})
    run_block(Block("t.md", 1, "console", "$ python -c 'print(42)'\n42\n", ()), {})
