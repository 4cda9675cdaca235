"""The likelihood registry: one list of likelihoods that Evidence, the model and simulate read."""

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.core import evidence
from bayes_dp.core.likelihoods import LIKELIHOODS, get_likelihood, rho_max
from bayes_dp.core.simulate import simulate_counts

COUNTS = bdp.AttackCounts([10, 12], 100, [30, 25], 100)
#: the likelihoods of challenge bases' error counts (the "guesses" one reads one-run audits)
OF_COUNTS = [k for k, spec in LIKELIHOODS.items() if spec.counts == "AttackCounts"]


def test_registry_codes_are_the_kernels_codes():
    from samplers.model import codes

    assert (
        evidence.LIKELIHOODS
        == tuple(LIKELIHOODS)
        == ("binomial", "bivariate_normal", "beta_binomial", "exposure_mixture", "guesses")
    )
    # the kernels (samplers.model.densities, ...) switch on samplers.model.codes directly
    assert LIKELIHOODS["binomial"].code == codes.LIK_BINOMIAL
    assert LIKELIHOODS["bivariate_normal"].code == codes.LIK_BIVARIATE_NORMAL
    assert LIKELIHOODS["beta_binomial"].code == codes.LIK_BETA_BINOMIAL
    assert LIKELIHOODS["exposure_mixture"].code == codes.LIK_EXPOSURE_MIXTURE
    assert LIKELIHOODS["guesses"].code == codes.LIK_GUESSES
    assert len({spec.code for spec in LIKELIHOODS.values()}) == len(LIKELIHOODS)
    assert [spec.param_names for spec in LIKELIHOODS.values()] == [
        (),
        ("tau", "rho"),
        ("tau",),
        ("pi", "kappa"),
        (),
    ]
    assert [spec.counts for spec in LIKELIHOODS.values()] == ["AttackCounts"] * 4 + ["OneRunCounts"]
    with pytest.raises(TypeError):
        LIKELIHOODS["poisson"] = LIKELIHOODS["binomial"]  # read-only


@pytest.mark.parametrize(
    "build",
    [
        lambda: get_likelihood("poisson"),
        lambda: bdp.Evidence(COUNTS, likelihood="poisson"),
        lambda: simulate_counts(1.0, 0.5, 1e-5, 100, 100, likelihood="poisson", seed=0),
    ],
)
def test_unknown_likelihood_names_the_value_and_the_choices(build):
    with pytest.raises(ValueError) as info:
        build()
    msg = str(info.value)
    assert "`likelihood`" in msg and "'poisson'" in msg
    assert all(repr(name) in msg for name in LIKELIHOODS)


@pytest.mark.parametrize("name", OF_COUNTS)
def test_fix_takes_exactly_the_registry_parameters(name):
    spec = get_likelihood(name)
    good = {"tau": 0.01, "rho": 0.0, "pi": 0.5, "kappa": 0.1}
    ev = bdp.Evidence(COUNTS, likelihood=name, fix={p: good[p] for p in spec.param_names})
    assert set(ev.fix) == set(spec.param_names)
    for p in {"tau", "rho", "pi", "kappa", "sigma"} - set(spec.param_names):
        with pytest.raises(ValueError, match=f"'{p}' is not a parameter of the '{name}'"):
            bdp.Evidence(COUNTS, likelihood=name, fix={p: 0.0})


def test_fixed_tau_bounds():
    # bivariate normal: tau > -1 / (N_max - 1), open; beta-binomial: tau >= 0
    bdp.Evidence(COUNTS, likelihood="bivariate_normal", fix={"tau": -0.005})
    with pytest.raises(ValueError, match=r"must be > -0\.0101"):
        bdp.Evidence(COUNTS, likelihood="bivariate_normal", fix={"tau": -1 / 99})
    bdp.Evidence(COUNTS, likelihood="beta_binomial", fix={"tau": 0.0})
    with pytest.raises(ValueError, match="must be >= 0"):
        bdp.Evidence(COUNTS, likelihood="beta_binomial", fix={"tau": -0.001})


@pytest.mark.parametrize("par", ["pi", "kappa"])
@pytest.mark.parametrize("value", [0.0, 1.0, -0.2, 1.5])
def test_fixed_mixture_parameters_lie_in_the_open_unit_interval(par, value):
    with pytest.raises(ValueError, match=f"fix\\['{par}'\\]"):
        bdp.Evidence(COUNTS, likelihood="exposure_mixture", fix={par: value})


def test_rho_max_is_the_positive_definite_bound():
    # covariance of eq. 7 per base: N a(1-a) c0, N b(1-b) c1, off-diagonal rho N sqrt(...)
    tau, n0, n1 = 0.02, np.array([100.0, 400.0]), np.array([100.0, 50.0])
    m = rho_max(tau, n0, n1)
    np.testing.assert_allclose(m, np.sqrt((1 + (n0 - 1) * tau) * (1 + (n1 - 1) * tau) / (n0 * n1)))
    # the correlation of the counts, rho sqrt(N0 N1 / (c0 c1)), reaches 1 exactly at rho_max
    c0, c1 = 1 + (n0 - 1) * tau, 1 + (n1 - 1) * tau
    np.testing.assert_allclose(m * np.sqrt(n0 * n1 / (c0 * c1)), 1.0)


@pytest.mark.parametrize("name", OF_COUNTS)
def test_registry_simulation_has_the_model_moments(name):
    """Counts simulated at fixed rates: mean N alpha and the variance (and FP-FN correlation)
    of each model, against the closed forms."""
    spec = get_likelihood(name)
    n, N0, N1, a, b = 40_000, 200.0, 300.0, 0.2, 0.35
    tau = 0.03 if spec.has("tau") else 0.0
    rho = 0.02 if spec.has("rho") else 0.0
    rng = np.random.default_rng(7)
    x, y = spec.simulate(
        rng, np.full(n, N0), np.full(n, N1), np.full(n, a), np.full(n, b), tau=tau, rho=rho
    )
    assert x.dtype == np.int64 and y.dtype == np.int64
    c0, c1 = 1 + (N0 - 1) * tau, 1 + (N1 - 1) * tau
    if name == "bivariate_normal":  # variances at the rates shrunk by half a count
        sa, sb = (N0 * a + 0.5) / (N0 + 1), (N1 * b + 0.5) / (N1 + 1)
    else:
        sa, sb = a, b
    vx, vy = N0 * sa * (1 - sa) * c0, N1 * sb * (1 - sb) * c1
    for got, mean, var in ((x, N0 * a, vx), (y, N1 * b, vy)):
        assert abs(got.mean() - mean) < 5 * np.sqrt(var / n)
        assert abs(got.var() / var - 1) < 0.05
    r = np.corrcoef(x, y)[0, 1]
    want = rho * np.sqrt(N0 * N1 / (c0 * c1))
    assert abs(r - want) < 5 / np.sqrt(n)


def test_the_guesses_likelihood_reads_one_run_audits_only():
    runs = bdp.OneRunCounts(m=100, r=[20, 30], v=[15, 21])
    assert bdp.Evidence(runs).likelihood == "guesses"
    assert bdp.Evidence(COUNTS).likelihood == "binomial"
    with pytest.raises(ValueError, match="'guesses' likelihood reads OneRunCounts, not Attack"):
        bdp.Evidence(COUNTS, likelihood="guesses")
    with pytest.raises(ValueError, match="for OneRunCounts use likelihood 'guesses'"):
        bdp.Evidence(runs, likelihood="binomial")
    with pytest.raises(ValueError, match="'tau' is not a parameter of the 'guesses'"):
        bdp.Evidence(runs, fix={"tau": 0.1})
    with pytest.raises(ValueError, match="has no \\(alpha, beta\\) to simulate"):
        get_likelihood("guesses").simulate(None, COUNTS.n_neg, COUNTS.n_pos, 0.1, 0.2)
