"""Pointwise log likelihood computed after sampling: equal to what the kernel
recorded per draw, thinned and stored per distinct base with bounded memory, usable by az.loo /
az.compare, and never the cause of a lost run."""

import warnings

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.core.exceptions import OutputSkippedWarning
from bayes_dp.inference import pointwise
from bayes_dp.results import arviz_adapter
from samplers.model.binomial import binomial_bases, log_lik


def _groups():
    # repeated binomial bases (stored once each) and an over-dispersed group (one row per base)
    bin_counts = bdp.AttackCounts([40, 50, 40, 40], 1000, [250, 200, 250, 250], 1000)
    corr = bdp.AttackCounts([10, 12, 9], 100, [30, 25, 35], 100)
    return [
        bdp.Evidence(bin_counts, name="canary"),
        bdp.Evidence(corr, likelihood="bivariate_normal", name="lira", strength="own"),
    ]


def test_equals_the_values_the_kernel_recorded(monkeypatch):
    """Same seed, same draws: the values computed afterwards equal the kernel's per-draw record
    (the old ``store_ll=True`` path), and each base's column is its own likelihood."""
    from samplers.exact import driver, runner

    captured = {}

    class Recording(driver.ExactRun):
        def __init__(self, *args, **kwargs):
            kwargs["store_ll"] = True
            super().__init__(*args, **kwargs)

        def result(self):
            res = super().result()
            captured.update(res)
            return res

    monkeypatch.setattr(runner, "ExactRun", Recording)  # the class run_exact runs
    post = bdp.estimate_epsilon(
        _groups(), delta=1e-5, chains=2, draws=150, tune=300, seed=3, check=False
    )
    assert post.settings["log_likelihood_thin"] == 1  # 150 draws: all kept
    compact = post._loglik["counts"]
    n_b = captured["ll_b"].shape[2]
    assert n_b == 2  # the four binomial bases hold two distinct count pairs
    np.testing.assert_allclose(compact[:, :, :n_b], captured["ll_b"], rtol=1e-12)
    np.testing.assert_allclose(compact[:, :, n_b:], captured["ll_c"], rtol=1e-12)
    full = post.log_likelihood["counts"]
    assert full.shape == (2, 150, 7)
    np.testing.assert_array_equal(full[:, :, 0], full[:, :, 2])
    np.testing.assert_array_equal(full[:, :, 0], full[:, :, 3])
    # base 1 (fp 50, fn 200) at one draw, by the single-base likelihood
    B = binomial_bases(np.array([50]), np.array([1000]), np.array([200]), np.array([1000]))
    eps, s = post.draws("eps")[1, 77], post.draws("s")[1, 77]
    assert full[1, 77, 1] == pytest.approx(log_lik(B, 0, eps, s, 1e-5), rel=1e-9)


def test_thin_step_bounds_the_stored_values():
    assert pointwise.thin_step(150, 4, 10) == 1
    assert pointwise.thin_step(100_000, 4, 10) == 100  # 1,000 per chain
    for n_draws, chains, n_bases in [(100_000, 4, 10_000), (20_000, 4, 50_000), (5000, 8, 7000)]:
        step = pointwise.thin_step(n_draws, chains, n_bases)
        kept = len(range(0, n_draws, step))
        assert kept >= min(n_draws, pointwise.LOGLIK_MIN_DRAWS)
        assert chains * kept * n_bases <= max(
            pointwise.LOGLIK_MAX_VALUES, chains * pointwise.LOGLIK_MIN_DRAWS * n_bases
        )
    # 64 x 10,000 LiRA targets, 103,311 draws per chain: 30.8 GiB recorded in the kernel before;
    # now at most 2**24 values (128 MiB) expanded
    step = pointwise.thin_step(103_311, 4, 10_000)
    assert 4 * len(range(0, 103_311, step)) * 10_000 * 8 <= 2**27


def test_many_bases_memory_is_bounded_and_loo_works():
    """The large-base path, reduced: a LiRA score matrix of 64 models x 3,000 targets, counted
    and sampled with the binomial likelihood. The log likelihood is kept per distinct count pair,
    thinned, and az.loo / az.compare run on the expanded group."""
    import mia

    n = 3000
    rng = np.random.default_rng(0)
    mu = np.where(rng.random(n) < 0.05, 2.0, 0.1)  # a few exposed targets, most barely
    scores, keep = mia.simulate_score_matrix(64, n, mu, seed=0)
    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    assert len(res.counts) == n
    counts = res.counts
    fp, fn = counts.fp, counts.fn
    post = bdp.estimate_epsilon(
        res.to_evidence(likelihood="binomial"),
        delta=1e-5,
        chains=2,
        draws=1200,
        tune=300,
        seed=1,
        check=False,
    )
    compact = post._loglik["counts"]
    n_distinct = len({(a, b) for a, b in zip(fp, fn, strict=True)})
    step = post.settings["log_likelihood_thin"]
    assert step == 2  # 2**24 values would allow 2,796 draws per chain: capped at 1,000
    assert compact.shape == (2, 600, n_distinct)
    assert compact.nbytes < 2 * 600 * 1089 * 8  # at most 33 x 33 count pairs
    full = post.log_likelihood["counts"]
    assert full.shape == (2, 600, n)
    assert np.all(np.isfinite(full))
    data = post.to_arviz()
    loo = arviz_adapter.az.loo(data, pointwise=True)
    assert loo.n_data_points == n
    assert np.isfinite(loo.elpd_loo)
    # az.compare works on the groups of two runs (s free and s fixed at 0)
    post2 = bdp.estimate_epsilon(
        counts,
        delta=1e-5,
        prior=bdp.Prior(s=0.0),
        chains=2,
        draws=300,
        tune=200,
        seed=1,
        check=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # arviz's notes on the scale / weights
        cmp = arviz_adapter.az.compare({"s free": data, "s=0": post2.to_arviz()})
    assert set(cmp.index) == {"s free", "s=0"}


def test_loo_of_thinned_draws_matches_all_draws():
    """Thinning changes az.loo's elpd by Monte Carlo noise only (compared with all draws)."""
    counts = bdp.AttackCounts([40, 50, 35, 60], 1000, [250, 200, 260, 190], 1000)
    post = bdp.estimate_epsilon(
        counts, delta=1e-5, chains=2, draws=4000, tune=500, seed=5, check=False
    )
    assert post.settings["log_likelihood_thin"] == 4
    thinned = arviz_adapter.az.loo(post.to_arviz())
    # all draws, evaluated by the same kernel
    from samplers.exact import pointwise

    z = np.stack([np.log(post.draws("eps")), np.log(post.draws("s") / (1 - post.draws("s")))], 2)
    model, corr = _kernel_model(counts)
    ll_b, _, n_bad = pointwise.pointwise_log_lik(model, corr, z)
    assert n_bad == 0
    full = bdp.Posterior(
        {"eps": post.draws("eps"), "s": post.draws("s")},
        {},
        {},
        log_likelihood={"counts": ll_b},
        log_likelihood_index=np.arange(4),
    )
    everything = arviz_adapter.az.loo(full.to_arviz())
    assert thinned.elpd_loo == pytest.approx(everything.elpd_loo, abs=3 * everything.se + 0.1)
    assert abs(thinned.elpd_loo - everything.elpd_loo) < 0.2


def _kernel_model(counts):
    from samplers.exact.driver import build_model
    from samplers.model.codes import LIK_BINOMIAL

    n = len(counts)
    model, corr, _, _ = build_model(
        counts.fp,
        counts.n_neg,
        counts.fn,
        counts.n_pos,
        np.zeros(n, dtype=np.int64),
        g_lik=[LIK_BINOMIAL],
        g_sidx=[0],
        g_tau=[0.0],
        g_rho=[0.0],
        g_tau_free=[False],
        g_rho_free=[False],
        s_fixed=[np.nan],
        delta=1e-5,
        eps_prior=(0, 10.0, 0.0),
        s_prior=(1.0, 1.0),
        tau_prior=(1.0, 1.0),
    )
    return model, corr


def test_a_failed_log_likelihood_keeps_the_posterior(monkeypatch):
    """Injected failure (MemoryError) after sampling: the posterior is returned whole, without
    the log_likelihood group, and the warning names what was skipped and why."""
    from samplers.exact import pointwise

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 30.8 GiB")

    monkeypatch.setattr(pointwise, "pointwise_log_lik", no_memory)
    counts = bdp.AttackCounts([40, 50], 1000, [250, 200], 1000)
    with pytest.warns(OutputSkippedWarning, match="30.8 GiB") as rec:
        post = bdp.estimate_epsilon(
            counts, delta=1e-5, chains=2, draws=300, tune=300, seed=0, check=False
        )
    assert rec[0].message.output == "log_likelihood"
    assert post.log_likelihood is None
    assert post.draws("eps").shape == (2, 300)
    assert "MemoryError" in post.settings["log_likelihood_skipped"]
    assert not arviz_adapter.has_group(post.to_arviz(), "log_likelihood")


def test_a_failed_check_keeps_the_posterior(monkeypatch):
    from bayes_dp.results.posterior import Posterior

    def broken(self, *, stacklevel=2):
        raise RuntimeError("diagnostics exploded")

    monkeypatch.setattr(Posterior, "check", broken)
    counts = bdp.AttackCounts([40, 50], 1000, [250, 200], 1000)
    with pytest.warns(OutputSkippedWarning, match="diagnostics exploded"):
        post = bdp.estimate_epsilon(counts, delta=1e-5, chains=2, draws=200, tune=300, seed=0)
    assert post.draws("eps").shape == (2, 200)


def test_expansion_out_of_memory_writes_the_file_without_the_group(tmp_path, monkeypatch):
    counts = bdp.AttackCounts([40, 50], 1000, [250, 200], 1000)
    post = bdp.estimate_epsilon(
        counts, delta=1e-5, chains=2, draws=200, tune=300, seed=0, check=False
    )

    def no_memory(self):
        raise MemoryError("Unable to allocate")

    monkeypatch.setattr(type(post), "log_likelihood", property(no_memory))
    with pytest.warns(OutputSkippedWarning, match="log_likelihood group was left out"):
        path = post.to_netcdf(tmp_path / "posterior.nc")
    back = bdp.load_posterior(path)
    np.testing.assert_array_equal(back.draws("eps"), post.draws("eps"))


def test_index_is_checked():
    draws = {"eps": np.ones((1, 3))}
    ll = {"counts": np.zeros((1, 3, 2))}
    with pytest.raises(ValueError, match=r"log_likelihood_index.*\[0, 2\).*\[0, 5\]"):
        bdp.Posterior(draws, {}, {}, log_likelihood=ll, log_likelihood_index=[0, 5])
    with pytest.raises(TypeError, match="log_likelihood_index"):
        bdp.Posterior(draws, {}, {}, log_likelihood=ll, log_likelihood_index=[0.5])
