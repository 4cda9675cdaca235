"""Simulation-based calibration of the binomial band model at a score matrix's shape (reduced).

The full study is ``benchmarks/sbc_score_matrix.py`` (``docs/validation/lira.md``, "Calibration of
the
score-matrix models (SBC)"): the default prior ``bdp.Prior()`` (eps ~ HalfNormal(10),
s ~ Beta(1, 1)), delta = 1e-5, T = 100 targets of n = 32 decisions per hypothesis (64 models,
each target IN for half), error points uniform on R_s(eps, delta) (``sample_band``), binomial
counts, the exact sampler (the default for binomial evidence), 2 chains x 1,000 draws after 500,
ranks among every 10th draw (200; the fits' ESS was 1,000-2,000 in the full study, so the ranked
draws are close to independent).

This reduced version runs ``N_REPS`` = 50 replicates on one core (256 s on the loaded shared
machine, 2026-11-27: coverage 44/50 for eps, 46/50 for s, rank p 0.93 and 0.22). Criteria and
their Monte Carlo error, ``tests/_support/mc_error.py``:

* coverage of the 90% equal-tailed intervals of eps and s: when calibrated the number of the 50
  that cover is Binomial(50, 0.9); accept 37-50, each tail of that range a false failure with
  probability <= 5e-4;
* mean z^2 of the PIT z = Phi^-1((rank + 0.5) / (L + 1)): chi^2_50 / 50 when calibrated; accept
  0.47-1.79 (tails 5e-4 each);
* rank uniformity: Pearson's chi-square on 5 bins of the normalised ranks (10 expected per bin),
  p >= 1e-3 per variable.

With the two variables the test fails falsely with probability about 2 x (1e-3 + 1e-3 + 1e-3)
= 6e-3 at most. Power, stated honestly: 50 replicates catch a broken model or sampler
(intervals that cover 75% of the time pass the count with probability 0.64, 65% with 0.06;
intervals 0.7 times the right width pass the z^2 check with probability 0.28), not a 10% error
in width; the full study's 300 replicates are the finer check. The named defect, asserted
first (``mc_error.coverage_power``): intervals that cover 70% for 90% fail one of the two
criteria with probability >= 0.939. A posterior 15% too narrow passes with probability 0.92
(the z^2 check) and is not within this study's reach: the score-matrix posterior's checks
against its quadrature reference (``test_lira_scale_mixing.py``, ``test_lira_model.py``) catch
it.
"""

import functools

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
from bayes_dp.evaluation.calibration import run_sbc, sbc_replicate

from tests._support.mc_error import coverage_power, coverage_report

N_REPS = 50
STUDY = {
    "prior": bdp.Prior(),
    "delta": 1e-5,
    "n_neg": [32] * 100,
    "n_pos": [32] * 100,
    "likelihood": "binomial",
    "chains": 2,
    "draws": 1000,
    "tune": 500,
    "log_likelihood": False,
}


@pytest.mark.slow
@pytest.mark.statistical
def test_sbc_binomial_score_matrix_shape():
    # reach first: intervals that cover 70% for 90% (a normal posterior 37% too narrow, the
    # named defect) fail the coverage and z^2 criteria with probability >= 0.939 (scipy)
    assert coverage_power(N_REPS, 0.70) >= 0.8
    out = run_sbc(functools.partial(sbc_replicate, **STUDY), N_REPS, seed=3232, level=0.9, thin=10)
    assert out.names == ["eps", "s"] and out.n_reps == N_REPS
    for var in out.names:
        p = out.uniformity(var, bins=5)
        print(f"{var}: coverage {out.coverage.rate(var):.3f}, rank uniformity p = {p:.3f}")
        assert p >= 1e-3, f"{var}: ranks not uniform (chi-square p = {p:.2g})"
        z = stats.norm.ppf(out.normalised_ranks(var))
        coverage_report(np.asarray(out.coverage.hits(var), dtype=bool), z)
