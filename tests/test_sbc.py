"""Simulation-based calibration of the joint sampler (eps, s, tau, rho): slow."""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "sbc_correlated.py"


def _load():
    spec = importlib.util.spec_from_file_location("sbc_correlated", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_sbc_coverage_of_90_percent_intervals():
    out = _load().run_sbc(reps=200, seed=2026)
    for var, d in out.items():
        assert 0.85 <= d["coverage"] <= 0.95, f"{var}: coverage {d['coverage']:.3f}"


def test_one_replicate_runs():
    res = _load().one_replicate(7, draws=200, tune=100)
    assert set(res) == {"eps", "s", "tau_x", "rho_x"}
    for covered, rank in res.values():
        assert isinstance(covered, bool) and 0.0 <= rank <= 1.0
