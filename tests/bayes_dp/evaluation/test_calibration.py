"""bayes_dp.evaluation.calibration: the SBC and coverage runners, against known-calibrated and
known-broken
posteriors (conjugate normal model), exact binomial intervals from scipy, and input errors."""

import functools

import numpy as np
import pytest
from scipy import stats

from bayes_dp.evaluation.calibration import CoverageResult, SBCResult, coverage_study, run_sbc


def _normal_replicate(rng, *, shrink=1.0, n_draws=99):
    """mu ~ N(0, 1), 4 observations N(mu, 1); draws from the exact posterior, or a too-narrow one
    (``shrink < 1``)."""
    mu = rng.normal()
    x = rng.normal(mu, 1.0, 4)
    draws = rng.normal(x.sum() / 5, shrink / np.sqrt(5), n_draws)
    return {"mu": mu, "unused": 1.0}, {"mu": draws}


def _interval_replicate(rng, *, z=1.6448536269514722):
    """A 90% z-interval for a normal mean (known variance): covers with probability 0.9."""
    x = rng.normal(1.0, 1.0, 25)
    half = z / 5
    return {"mean": (x.mean() - half, x.mean() + half, 1.0), "xbar": float(x.mean())}


def test_sbc_of_an_exact_posterior_is_calibrated():
    r = run_sbc(_normal_replicate, 400, seed=0)
    assert isinstance(r, SBCResult) and r.names == ["mu"] and r.n_reps == 400
    assert np.all(r.n_ranked["mu"] == 99) and np.all((r.ranks["mu"] >= 0) & (r.ranks["mu"] <= 99))
    assert r.uniformity("mu") > 1e-3 and r.uniformity("mu", method="ks") > 1e-3
    lo, hi = r.coverage.ci("mu")
    assert lo < 0.9 < hi


def test_sbc_detects_an_over_confident_posterior():
    r = run_sbc(functools.partial(_normal_replicate, shrink=0.4), 400, seed=0)
    assert r.uniformity("mu") < 1e-8 and r.uniformity("mu", method="ks") < 1e-8
    assert r.coverage.ci("mu")[1] < 0.6  # a 0.4-times too narrow interval covers about 49%
    # too narrow: the truth falls outside on both sides about equally often
    assert r.coverage.below("mu") > 0.15 and r.coverage.above("mu") > 0.15


def test_sbc_ranks_thinning_and_intervals_by_hand():
    rng = np.random.default_rng(5)
    draws = rng.normal(size=(2, 50))

    def rep(g):
        return {"a": 0.1}, {"a": draws}

    r = run_sbc(rep, 3, seed=1, thin=7, level=0.5)
    x = draws.ravel()
    assert np.all(r.ranks["a"] == np.sum(x[::7] < 0.1)) and np.all(r.n_ranked["a"] == 15)
    np.testing.assert_allclose(r.coverage.lower["a"], np.quantile(x, 0.25))
    np.testing.assert_allclose(r.coverage.upper["a"], np.quantile(x, 0.75))
    np.testing.assert_allclose(r.normalised_ranks("a"), (r.ranks["a"] + 0.5) / 16)


def test_chi2_uses_the_exact_discrete_expectation():
    # ranks 0..12 equally often: exactly uniform, although 13 values do not split into 5 equal bins
    ranks = np.tile(np.arange(13), 20)
    empty = CoverageResult({}, {}, {})
    r = SBCResult({"a": ranks}, {"a": np.full(ranks.size, 12)}, empty, 0.9)
    assert r.uniformity("a", bins=5) == pytest.approx(1.0)
    # and a clear excess of low ranks is found
    low = SBCResult({"a": np.minimum(ranks, 6)}, {"a": np.full(ranks.size, 12)}, empty, 0.9)
    assert low.uniformity("a", bins=5) < 1e-6


def test_coverage_study_rate_and_exact_interval():
    r = coverage_study(_interval_replicate, 500, seed=2)
    assert r.labels == ["mean"] and r.n_reps == 500 and list(r.stats) == ["xbar"]
    k = int(r.hits("mean").sum())
    assert r.rate("mean") == k / 500
    want = stats.binomtest(k, 500).proportion_ci(0.99, method="exact")
    assert r.ci("mean", 0.99) == pytest.approx((want.low, want.high))
    lo, hi = r.ci("mean")
    assert lo < 0.9 < hi
    assert r.below("mean") + r.above("mean") == pytest.approx(1 - r.rate("mean"))
    assert r.width("mean") == pytest.approx(2 * 1.6448536269514722 / 5)
    assert r.stats["xbar"].mean() == pytest.approx(1.0, abs=0.03)
    s = r.summary()["mean"]
    assert s["coverage"] == r.rate("mean") and s["ci"] == (lo, hi)
    # a 50% interval used as if it were 90% is caught
    bad = coverage_study(functools.partial(_interval_replicate, z=0.6745), 500, seed=2)
    assert bad.ci("mean")[1] < 0.6


def _draw(rng):
    return {"u": (0.0, 1.0, rng.random())}


def test_results_do_not_depend_on_n_jobs_and_follow_the_seed():
    a = coverage_study(_interval_replicate, 6, seed=3, n_jobs=1)
    b = coverage_study(_interval_replicate, 6, seed=3, n_jobs=2)
    d = coverage_study(_interval_replicate, 6, seed=4)
    np.testing.assert_array_equal(a.lower["mean"], b.lower["mean"])
    assert not np.array_equal(a.lower["mean"], d.lower["mean"])
    assert np.unique(a.lower["mean"]).size == 6  # replicates get distinct streams
    # the documented streams: default_rng of the words of SeedSequence(seed).generate_state(n)
    words = np.random.SeedSequence(11).generate_state(5)
    want = [np.random.default_rng(int(w)).random() for w in words]
    np.testing.assert_array_equal(coverage_study(_draw, 5, seed=11).target["u"], want)
    # a Generator gives new replicates each time it is passed
    g = np.random.default_rng(0)
    first, second = (coverage_study(_draw, 5, seed=g).target["u"] for _ in range(2))
    assert not np.array_equal(first, second)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"n_reps": 0}, ValueError, "`n_reps`"),
        ({"n_jobs": 0}, ValueError, "`n_jobs`"),
        ({"n_jobs": 1.5}, ValueError, "`n_jobs`"),
        ({"replicate": 3}, TypeError, "`replicate`"),
        ({"seed": "x"}, TypeError, "`seed`"),
    ],
)
def test_runner_input_errors(kwargs, err, match):
    args = {"replicate": _interval_replicate, "n_reps": 2, **kwargs}
    with pytest.raises(err, match=match):
        coverage_study(args.pop("replicate"), args.pop("n_reps"), **args)
    args = {"replicate": _normal_replicate, "n_reps": 2, **kwargs}
    with pytest.raises(err, match=match):
        run_sbc(args.pop("replicate"), args.pop("n_reps"), **args)


def test_bad_replicate_outputs_and_queries():
    with pytest.raises(TypeError, match="mapping"):
        coverage_study(lambda rng: [1, 2, 3], 2)
    with pytest.raises(TypeError, match="lower, upper, target"):
        coverage_study(lambda rng: {"a": (1, 2)}, 2)
    with pytest.raises(ValueError, match="lower 2.0 > upper 1.0"):
        coverage_study(lambda rng: {"a": (2, 1, 0)}, 2)
    with pytest.raises(ValueError, match="no \\(lower, upper, target\\)"):
        coverage_study(lambda rng: {"a": 1.0}, 2)
    with pytest.raises(ValueError, match="same labels"):
        coverage_study(lambda rng: {("a" if rng.random() < 0.5 else "b"): (0, 1, 0)}, 20, seed=0)
    with pytest.raises(TypeError, match="\\(truth, draws\\)"):
        run_sbc(lambda rng: 1.0, 2)
    with pytest.raises(TypeError, match="Posterior"):
        run_sbc(lambda rng: ({"a": 0.0}, [1.0, 2.0]), 2)
    with pytest.raises(ValueError, match="no variable"):
        run_sbc(lambda rng: ({"a": 0.0}, {"b": [1.0]}), 2)
    with pytest.raises(ValueError, match="finite"):
        run_sbc(lambda rng: ({"a": 0.0}, {"a": [np.nan]}), 2)
    with pytest.raises(ValueError, match="`level`"):
        run_sbc(_normal_replicate, 2, level=1.0)
    r = run_sbc(_normal_replicate, 3, seed=0)
    with pytest.raises(ValueError, match="`name`"):
        r.uniformity("sigma")
    with pytest.raises(ValueError, match="`method`"):
        r.uniformity("mu", method="ad")
    with pytest.raises(ValueError, match="`label`"):
        r.coverage.rate("sigma")
    with pytest.raises(ValueError, match="`confidence`"):
        r.coverage.ci("mu", confidence=1.5)


def test_sbc_keeps_the_stats_a_replicate_reports():
    def rep(rng):
        truth, draws = _normal_replicate(rng)
        return truth, draws, {"ess": 99.0, "n": 4}

    r = run_sbc(rep, 5, seed=2)
    plain = run_sbc(_normal_replicate, 5, seed=2)
    np.testing.assert_array_equal(r.ranks["mu"], plain.ranks["mu"])  # the draws are unchanged
    assert set(r.stats) == {"ess", "n"} and np.all(r.stats["ess"] == 99.0)
    assert r.stats["n"].shape == (5,) and plain.stats == {}
    with pytest.raises(TypeError, match="stats"):
        run_sbc(lambda rng: ({"a": 0.0}, {"a": [1.0]}, {"ess": "many"}), 2)
    with pytest.raises(TypeError, match="stats"):
        run_sbc(lambda rng: ({"a": 0.0}, {"a": [1.0]}, [1.0]), 2)
    with pytest.raises(TypeError, match="a tuple of 4"):
        run_sbc(lambda rng: ({"a": 0.0}, {"a": [1.0]}, {}, {}), 2)
    with pytest.raises(ValueError, match="same variables and stats"):
        run_sbc(
            lambda rng: ({"a": 0.0}, {"a": [1.0]}, {("x" if rng.random() < 0.5 else "y"): 1}),
            20,
            seed=0,
        )
