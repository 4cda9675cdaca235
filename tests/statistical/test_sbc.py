"""Simulation-based calibration of the joint sampler (eps, s, tau, rho): slow.

The study is ``benchmarks/sbc_correlated.py``: ``bayes_dp.evaluation.calibration.run_sbc`` over
``sbc_replicate`` with the prior and design below.
"""

import functools

import pytest

import bayes_dp as bdp
from bayes_dp.evaluation.calibration import run_sbc, sbc_replicate

PRIOR = bdp.Prior(eps=bdp.HalfNormal(3.0), s=bdp.Beta(2.0, 2.0), tau=bdp.Beta(1.0, 20.0))
STUDY = {"prior": PRIOR, "delta": 1e-5, "n_neg": [1000] * 5, "n_pos": [1000] * 5}


@pytest.mark.slow
def test_sbc_coverage_of_90_percent_intervals():
    out = run_sbc(
        functools.partial(sbc_replicate, **STUDY), 200, seed=2026, n_jobs=2, level=0.9, thin=10
    )
    assert out.names == ["eps", "s", "tau_x", "rho_x"]
    for var in out.names:
        cov = out.coverage.rate(var)
        assert 0.85 <= cov <= 0.95, f"{var}: coverage {cov:.3f}"


def test_one_replicate_runs():
    truth, post = sbc_replicate(7, **STUDY, draws=200, tune=100)
    assert set(truth) == {"eps", "s", "tau_x", "rho_x"} <= set(post.var_names)
    assert truth["eps"] > 0 and 0 < truth["s"] < 1 and 0 < truth["tau_x"] < 1
    rmax = 1 / 1000 + (1 - 1 / 1000) * truth["tau_x"]  # admissible rho at N = 1000
    assert abs(truth["rho_x"]) < rmax
    assert post.n_chains == 2 and post.n_draws == 200


def test_replicate_variables_follow_the_likelihood_and_prior():
    truth, post = sbc_replicate(
        1,
        prior=bdp.Prior(s=0.5),
        n_neg=50,
        n_pos=50,
        likelihood="binomial",
        draws=100,
        tune=100,
    )
    assert set(truth) == {"eps"}  # s fixed by the prior, no over-dispersion
    truth, _ = sbc_replicate(1, n_neg=50, n_pos=50, likelihood="beta_binomial", draws=100)
    assert set(truth) == {"eps", "s", "tau_x"}
    with pytest.raises(ValueError, match="`likelihood`"):
        sbc_replicate(1, likelihood="poisson")
    with pytest.raises(TypeError, match="`prior`"):
        sbc_replicate(1, prior={"eps": 1.0})
