"""Score-matrix audits of a Gaussian mechanism with known eps (benchmarks/score_matrix_coverage.py).

The slow test runs the coverage study for one mechanism. What holds, and is asserted: no 90%
interval lies entirely above the true eps (the audit does not overstate the privacy loss), and
the intervals cover the eps visible to a level-alpha test (the tightest (eps, delta) region
through the exact test's error point) in most audits. The coverage of the true eps itself is
low at delta = 1e-5 (about 5%, see docs/lira.md): the Gaussian mechanism's eps there is set by
the far tails of its trade-off curve, which a test at alpha = 0.1 never probes.
"""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "score_matrix_coverage.py"


def _load():
    spec = importlib.util.spec_from_file_location("score_matrix_coverage", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_one_audit_runs():
    r = _load().one_audit(0, 1.0, n_targets=4, draws=200, tune=100)
    assert 0 < r["lo"] < r["hi"]
    assert r["truth"] == pytest.approx(4.377, abs=1e-3) and r["visible"] < r["truth"]
    assert 0 < r["fpr"] < 0.3 and 0.3 < r["fnr"] < 0.9


@pytest.mark.slow
def test_coverage_study_gaussian_mechanism():
    out = _load().coverage_study(mus=(1.0,), audits=40, seed=3)[1.0]
    assert out["below"] == 0.0, out  # never an interval entirely above the true eps
    assert out["coverage_visible"] >= 0.8, out
    assert abs(out["fpr"] - 0.1) < 0.02 and abs(out["fnr"] - 0.61) < 0.03, out
