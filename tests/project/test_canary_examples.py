"""The canary examples run end to end (as subprocesses) and write their figures."""

import re
from pathlib import Path

#: the page that quotes the example's intervals
PAGE = Path(__file__).resolve().parents[2] / "docs" / "howto" / "canaries.md"


def test_canary_combined_writes_figure(run_script, tmp_path):
    out = tmp_path / "combined.png"
    # 1000 draws per chain are a short run: a ConvergenceWarning on stderr is not a failure here
    text = run_script("examples/canary_combined.py", "--png", str(out), "--draws", "1000").stdout
    assert "posterior 90% interval for epsilon" in text
    assert "from the canary group alone" in text and "from the lira group alone" in text
    assert 10_000 < out.stat().st_size < 400_000


def test_canary_combined_intervals_are_the_docs(run_script, tmp_path):
    # the canaries how-to quotes the three 90% intervals this example prints by default
    # (about 13 s: in the default run, so that a change of the draws shows here)
    text = run_script("examples/canary_combined.py").stdout
    found = re.findall(r"\[\d+\.\d{3}, \d+\.\d{3}\]", text)
    assert len(found) == 3, text
    page = " ".join(PAGE.read_text(encoding="utf-8").split())
    for interval in found:
        assert interval in page, (
            f"docs/howto/canaries.md does not quote {interval} (the example printed:\n{text})"
        )
