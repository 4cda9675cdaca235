"""The digits example runs end to end in quick mode and shows the paper's orderings."""

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lira_digits.py"


def _load():
    spec = importlib.util.spec_from_file_location("lira_digits", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_pooled_epsilon_against_closed_form():
    import math

    from scipy import stats

    import bayes_dp as bdp

    mod = _load()
    assert not hasattr(mod, "classical_epsilon")  # no second meaning of the library's name
    counts = bdp.AttackCounts(fp=[10, 10], n_neg=100, fn=[20, 20], n_pos=100)
    point, lower = mod.pooled_epsilon(counts, 0.0)
    assert point == pytest.approx(max(math.log(0.9 / 0.2), math.log(0.8 / 0.1)))
    # two-sided Clopper-Pearson intervals at level 1 - 0.05 / 2 for both pooled rates
    hi_fp = stats.binomtest(20, 200).proportion_ci(1 - 0.025, method="exact").high
    hi_fn = stats.binomtest(40, 200).proportion_ci(1 - 0.025, method="exact").high
    want = max(math.log((1 - hi_fp) / hi_fn), math.log((1 - hi_fn) / hi_fp))
    assert lower == pytest.approx(want, rel=1e-7)
    assert 0 < lower < point


@pytest.mark.slow
# the quick audit (5 bases x 20 models) is weak evidence; a short-run warning is not a failure
def test_quick_example_runs(run_script):
    pytest.importorskip("sklearn")
    pytest.importorskip("dp_accounting")
    proc = run_script("examples/lira_digits.py", "--quick", "--jobs", "1")
    assert "A4 (sigma=0.01)" in proc.stdout and "DP-SGD" in proc.stdout
    # progress on stderr, one line per step, also when stderr is not a terminal
    assert "[1/7] A1" in proc.stderr and "[7/7] DP-SGD" in proc.stderr
    assert proc.stderr.count("sampled in") == 7
