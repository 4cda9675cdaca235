"""The exact sampler's runner (samplers.exact.runner.run_exact): run, extend, restart, result."""

import dataclasses

import numpy as np
import pytest

import samplers
from samplers.exact import ExactConfig, ExactData, build_model, driver, run_exact, runner
from samplers.model.codes import LIK_BINOMIAL, LIK_BIVARIATE_NORMAL

COUNTS = dict(fp=[40, 50], n_neg=[1000, 1000], fn=[250, 200], n_pos=[1000, 1000])
#: what a check for a missed mode reports: a point at eps = 1.5
MODE = {"log_post": 0.0, "log_post_draws": -20.0, "eps": 1.5, "z": [float(np.log(1.5)), 0.0]}
CONFIG = ExactConfig(chains=2, tune=60, target_accept=0.3, start_eps=2.0, draws=60, cores=1)


def _data(fp, n_neg, fn, n_pos, lik=LIK_BINOMIAL, grp=None, tau_free=False, rho_free=False):
    n = len(fp)
    grp = np.zeros(n, dtype=np.int64) if grp is None else np.asarray(grp)
    J = int(grp.max()) + 1
    model, corr, names, _ = build_model(
        fp, n_neg, fn, n_pos, grp,
        g_lik=np.full(J, lik, dtype=np.int64), g_sidx=np.zeros(J, dtype=np.int64),
        g_tau=np.full(J, 0.05), g_rho=np.zeros(J), g_tau_free=np.full(J, tau_free),
        g_rho_free=np.full(J, rho_free), s_fixed=np.full(1, np.nan), delta=1e-5,
        eps_prior=(0, 10.0, 0.0), s_prior=(1.0, 1.0), tau_prior=(1.0, 1.0),
    )  # fmt: skip
    return ExactData(model, corr, names)


class Notes:
    """A progress object that records what run_exact tells it."""

    def __init__(self):
        self.done, self.totals, self.notes = 0, [], []

    def __call__(self, n):
        self.done += n

    def set_total(self, total):
        self.totals.append(total)

    def note(self, text):
        self.notes.append(text)


def test_the_public_names_are_the_runners():
    assert set(runner.__all__) <= set(samplers.exact.__all__)
    for name in ("run_exact", "ExactConfig", "ExactData", "ExactResult", "ExactDraws"):
        assert name in samplers.__all__
        assert getattr(samplers, name) is getattr(runner, name)


def test_a_run_of_fixed_length_returns_its_draws_and_is_reproducible():
    data = _data(**COUNTS)
    progress = Notes()
    res = run_exact(data, CONFIG, seed=3, progress=progress)
    assert res.n_draws == 60 and res.z.shape == (2, 60, 2)
    assert res.converged is None and res.stop_reason == "draws"
    assert res.restart is None and res.minor_mode is None
    np.testing.assert_array_equal(res.draws.eps, np.exp(res.z[:, :, 0]))
    np.testing.assert_array_equal(res.draws.s[:, :, 0], 1.0 / (1.0 + np.exp(-res.z[:, :, 1])))
    assert res.accept.shape == (2, 60, 3) and res.scales.shape == (2, 2)
    assert len(res.moves) == 2 and set(res.moves) <= {*runner.MOVES.values(), "none"}
    assert (
        res.n_inner
        == driver.chain_settings(
            data.corr, data.names, tune=60, target_accept=0.3, store_ll=False
        ).n_inner
    )
    assert progress.done == progress.totals[-1] == 2 * (60 + 60)
    again = run_exact(data, CONFIG, seed=np.random.default_rng(3))
    np.testing.assert_array_equal(again.z, res.z)  # a seed or its generator: the same draws


def test_no_table_from_table_max_bases_on(monkeypatch):
    data = _data(**COUNTS)
    monkeypatch.setattr(driver, "TABLE_MAX_BASES", 2)  # the two bases reach it
    res = run_exact(data, CONFIG, seed=0)
    assert res.n_inner == 0 and "table_walk" not in res.moves
    assert "table_proposal" not in res.moves


def test_the_automatic_length_extends_until_the_judge_is_satisfied():
    data = _data(**COUNTS)
    seen = []

    def judge(z):
        seen.append(z.shape[1])
        return len(seen) >= 2, 100.0

    progress = Notes()
    config = ExactConfig(
        chains=2, tune=60, target_accept=0.3, start_eps=2.0, first_draws=100, max_draws=1000,
        ess_min=100.0,
    )  # fmt: skip
    res = run_exact(data, config, seed=1, judge=judge, progress=progress)
    # smallest ESS 100 of 100 wanted: grow by 1.5 (the least), to 200 draws
    assert seen == [100, 200] and res.n_draws == 200
    assert res.converged is True and res.stop_reason == "converged"
    assert progress.notes[0].startswith("not converged at 100 draws/chain")
    assert progress.notes[-1] == "converged at 200 draws/chain"
    capped = run_exact(data, config, seed=1, judge=lambda z: (False, 1.0))
    assert capped.n_draws == 1000 and capped.stop_reason == "max_draws"
    assert capped.converged is False
    with pytest.raises(ValueError, match="judge"):
        run_exact(data, config, seed=1)
    with pytest.raises(ValueError, match="ess_min"):
        run_exact(data, dataclasses.replace(config, ess_min=None), seed=1, judge=judge)


def test_a_missed_mode_restarts_the_chains_near_it():
    data = _data(**COUNTS)
    calls = []

    def find_mode(z):
        calls.append(z.copy())
        return MODE if len(calls) == 1 else None

    progress = Notes()
    res = run_exact(data, CONFIG, seed=2, find_mode=find_mode, progress=progress)
    assert len(calls) == 2 and res.minor_mode is None and res.stop_reason == "draws"
    np.testing.assert_array_equal(res.z, calls[1])  # the second chains are the result
    r = res.restart
    assert r.first_draws == 60 and r.first_stop_reason == "draws" and not r.no_draws
    q = np.quantile(np.exp(calls[0][:, :, 0]), [0.05, 0.5, 0.95])
    assert r.first_eps_quantiles == tuple(q)
    assert list(r.to_dict()) == [
        "log_post", "log_post_draws", "eps", "z",
        "first_draws", "first_eps_quantiles", "first_stop_reason",
    ]  # fmt: skip
    assert "sampling again from there" in progress.notes[0]
    # a mode missed again: not converged, "minor_mode"
    always = run_exact(data, CONFIG, seed=2, find_mode=lambda z: MODE)
    assert always.converged is False and always.stop_reason == "minor_mode"
    assert always.restart is not None


def test_draws_map_back_as_with_every_base():
    # rho's bound is read from the distinct over-dispersed rows: the same as from every base
    fp, n_neg, fn, n_pos = [3, 3, 7, 10], [50, 50, 80, 60], [20, 20, 30, 25], [50, 50, 70, 60]
    grp = [0, 0, 1, 1]
    data = _data(fp, n_neg, fn, n_pos, LIK_BIVARIATE_NORMAL, grp, tau_free=True, rho_free=True)
    assert data.corr.c_grp.size == 3  # the first two bases are one row
    rng = np.random.default_rng(0)
    z = rng.normal(size=(2, 5, len(data.names)))
    got = runner._params(data, z)
    want = driver.draws_from_z(
        z, data.names, 1, np.full(2, 0.05), np.ones(2, bool), np.asarray(grp),
        np.asarray(n_neg), np.asarray(n_pos), data.model.mix_prior[4],
    )  # fmt: skip
    for k, v in want.items():
        np.testing.assert_array_equal(getattr(got, k), v)
    assert np.isfinite(got.rho).all()
