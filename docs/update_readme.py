"""Regenerate, or check, the quickstart's output shown in README.md.

The README shows what ``python examples/quickstart.py`` prints on stdout, between the lines
``<!-- quickstart-output:start -->`` and ``<!-- quickstart-output:end -->`` (inside a code
fence). This script runs the quickstart (minutes: it samples until converged) and rewrites that
block and the time the README quotes for it ("N s in the run that made the output below"), or
with ``--check`` says whether the block is what the quickstart prints (exit status 1 and a diff
when not). ``tests/project/test_readme.py`` runs the same check.

The output depends on the seed and the package versions only, not on the machine's speed: the
sampler's draws are fixed by the seed, and an automatic-length run extends in rounds whose end
is decided by r_hat and ESS alone. The exception is a run whose time budget runs out before it
converges (a very slow or loaded machine): its length then depends on the speed, the quickstart
says ``converged: False (stop reason: max_time)``, and neither mode writes or compares such
output.

Run from anywhere: ``python docs/update_readme.py [--check]``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
QUICKSTART = ROOT / "examples" / "quickstart.py"
START = "<!-- quickstart-output:start -->"
END = "<!-- quickstart-output:end -->"
#: What the quickstart prints when its time budget ran out before it converged.
OUT_OF_TIME = "stop reason: max_time"


@dataclass(frozen=True)
class QuickstartRun:
    """One run of the quickstart: its stdout, stderr and wall-clock seconds."""

    stdout: str
    stderr: str
    seconds: float

    @property
    def out_of_time(self) -> bool:
        """Whether the run stopped on its time budget (its output then depends on the speed)."""
        return OUT_OF_TIME in self.stdout


def run_quickstart(timeout: float = 3600.0) -> QuickstartRun:
    """Run ``examples/quickstart.py`` with this checkout's packages first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("MPLBACKEND", "Agg")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(QUICKSTART)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(
            f"examples/quickstart.py failed (exit status {proc.returncode}):\n{proc.stderr}"
        )
    return QuickstartRun(proc.stdout, proc.stderr, seconds)


def _span(text: str) -> tuple[int, int]:
    """Start and end offsets of the block's content (inside the code fence)."""
    if text.count(START) != 1 or text.count(END) != 1:
        raise ValueError(
            f"README.md must hold the markers {START!r} and {END!r} once each; found "
            f"{text.count(START)} and {text.count(END)}"
        )
    a = text.index(START) + len(START)
    b = text.index(END)
    inner = text[a:b]
    head = "\n```\n"
    if not inner.startswith(head) or not inner.endswith("```\n"):
        raise ValueError(
            "between the quickstart-output markers README.md must hold one code fence (```), "
            "starting on the line after the start marker and ending on the line before the end "
            "marker"
        )
    return a + len(head), b - len("```\n")


def readme_block(text: str) -> str:
    """The quickstart output shown in the README ``text``."""
    a, b = _span(text)
    return text[a:b]


def replace_block(text: str, output: str) -> str:
    """``text`` with the quickstart block replaced by ``output``."""
    a, b = _span(text)
    if not output.endswith("\n"):
        output += "\n"
    return text[:a] + output + text[b:]


#: The README's sentence that quotes how long the quickstart took; rewritten with the block.
SECONDS = re.compile(r"(\d+) s in the run that made the output below")


def replace_seconds(text: str, seconds: float) -> str:
    """``text`` with the quoted time of the quickstart replaced by ``seconds`` (rounded)."""
    if len(SECONDS.findall(text)) != 1:
        raise ValueError(
            "README.md must quote the quickstart's time once, as 'N s in the run that made the "
            f"output below'; found {len(SECONDS.findall(text))}"
        )
    return SECONDS.sub(f"{round(seconds)} s in the run that made the output below", text)


def diff(shown: str, printed: str) -> str:
    """A unified diff from the README's block to what the quickstart printed."""
    return "".join(
        difflib.unified_diff(
            shown.splitlines(keepends=True),
            printed.splitlines(keepends=True),
            "README.md (quickstart-output block)",
            "python examples/quickstart.py",
        )
    )


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or with ``--check`` compare) the README's quickstart block; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="compare only; exit status 1 when the block differs"
    )
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    readme_block(text)  # markers present, before the long run
    run = run_quickstart()
    print(f"quickstart ran in {run.seconds:.0f} s", file=sys.stderr)
    if run.out_of_time:
        print(
            "the quickstart ran out of its time budget before it converged, so what it printed "
            "depends on this machine's speed; nothing compared or written:\n" + run.stdout,
            file=sys.stderr,
        )
        return 2
    if args.check:
        d = diff(readme_block(text), run.stdout)
        if d:
            print(d, file=sys.stderr)
            return 1
        print("README.md's quickstart block is up to date", file=sys.stderr)
        return 0
    new = replace_seconds(replace_block(text, run.stdout), run.seconds)
    if new != text:
        README.write_text(new, encoding="utf-8")
        print("README.md: quickstart block and its time rewritten", file=sys.stderr)
    else:
        print("README.md's quickstart block is up to date", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
