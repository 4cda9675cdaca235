"""The canary examples run and write their figures."""

import importlib.util
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# 1000 draws per chain are a short run: a ConvergenceWarning is not a failure here
@pytest.mark.filterwarnings("ignore::bayes_dp.ConvergenceWarning")
def test_canary_combined_writes_figure(tmp_path, capsys):
    out = tmp_path / "combined.png"
    _load("canary_combined").main(["--png", str(out), "--draws", "1000"])
    text = capsys.readouterr().out
    assert "posterior 90% interval for epsilon" in text
    assert "from the canary group alone" in text and "from the lira group alone" in text
    assert 10_000 < out.stat().st_size < 400_000
    assert plt.get_fignums() == []  # the example closes its figure
