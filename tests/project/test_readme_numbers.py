"""Numbers that README.md and the guides (docs/tutorials, howto, concepts) state and the code
defines.

The convergence thresholds (r_hat, ESS per chain, the ESS of a run without ``draws``), the time
budget and first round of such a run, the longest group name and the exit statuses of
``bayes-dp``: each number the user-facing text gives is read from it and compared with the
constant or behaviour of the code, so that a changed default fails here until the text follows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


#: the user-facing text: the README and the guides
USER_TEXT = [
    ROOT / "README.md",
    *sorted(
        p for d in ("tutorials", "howto", "concepts") for p in (ROOT / "docs" / d).glob("*.md")
    ),
]


def _readme() -> str:
    return " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in USER_TEXT)


def _numbers(pattern: str, text: str | None = None) -> list[float]:
    """Every number the first group of ``pattern`` matches in the README (commas dropped)."""
    found = re.findall(pattern, _readme() if text is None else text)
    return [float(x.replace(",", "")) for x in found]


def test_the_number_reader_finds_what_it_should():
    text = "r_hat <= 1.01 and ESS >= 4,000; r_hat 1.017 after; an ESS is below 100 per chain"
    assert _numbers(r"r_hat (?:<=|>) (\d+\.\d+)", text) == [1.01]
    assert _numbers(r"ESS >= (\d[\d,]*)", text) == [4000.0]
    assert _numbers(r"ESS (?:is )?below (\d+) per chain", text) == [100.0]


def test_readme_convergence_thresholds_are_the_codes():
    from bayes_dp.core.thresholds import AUTO_ESS_MIN, ESS_PER_CHAIN_MIN, RHAT_MAX

    rhat = _numbers(r"r_hat (?:<=|>) (\d+\.\d+)")
    assert len(rhat) >= 4 and set(rhat) == {RHAT_MAX}
    per_chain = _numbers(r"ESS (?:is )?below (\d+) per chain")
    assert len(per_chain) >= 1 and set(per_chain) == {ESS_PER_CHAIN_MIN}
    auto_ess = _numbers(r"ESS >= (\d[\d,]*)")
    assert len(auto_ess) >= 3 and set(auto_ess) == {AUTO_ESS_MIN}


def test_readme_time_budget_and_first_round_are_the_codes():
    from bayes_dp.core.thresholds import AUTO_FIRST_DRAWS, AUTO_MAX_TIME

    budget = _numbers(r"`max_time` seconds \(default (\d+)\)")
    budget += _numbers(r"`--max-time SEC`, default (\d+) s")
    assert len(budget) == 2 and set(budget) == {AUTO_MAX_TIME}
    first = _numbers(r"`estimate` samples (\d+) draws per chain and then extends")
    assert first == [AUTO_FIRST_DRAWS]


def test_readme_longest_group_name_is_the_codes():
    from bayes_dp.core.evidence import check_group_name

    (n,) = _numbers(r"at most (\d+) characters")
    n = int(n)
    assert check_group_name("a" * n) == "a" * n
    with pytest.raises(ValueError):
        check_group_name("a" * (n + 1))


def test_the_docs_exit_statuses_are_the_commands(tmp_path, monkeypatch):
    """The reference's table of exit statuses is written from ``EXIT_STATUSES`` at each build."""
    import sys

    from bayes_dp.cli import EXIT_STATUSES

    monkeypatch.syspath_prepend(str(ROOT / "docs"))
    sys.modules.pop("sphinx_ext", None)
    import sphinx_ext

    monkeypatch.setattr(sphinx_ext, "GENERATED", tmp_path)
    sphinx_ext.write_schema_tables()
    table = (tmp_path / "exit_statuses.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| ", table, flags=re.MULTILINE)
    assert sorted(int(r) for r in rows) == sorted(EXIT_STATUSES)
    page = (ROOT / "docs" / "reference" / "output.md").read_text(encoding="utf-8")
    assert "_generated/exit_statuses.md" in page
