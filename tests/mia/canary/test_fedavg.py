"""DP-FedAvg with canary clients on digits."""

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("sklearn", reason="the simulator trains on scikit-learn's digits")

from mia.canary import CosineNull, gaussian_mechanism_epsilon  # noqa: E402
from mia.canary.fedavg import (  # noqa: E402
    _canary_schedule,
    _client_schedule,
    run_dp_fedavg_with_canaries,
)


@pytest.fixture(scope="module")
def run():
    return run_dp_fedavg_with_canaries(
        noise_multiplier=0.6, rounds=100, n_canaries=500, n_unseen=500, seed=0
    )


def test_final_far_below_all_iterates_below_bound(run):
    assert run.epsilon_final < run.epsilon_all_iterates / 2
    assert run.epsilon_final_mean_only < run.epsilon_all_iterates / 2
    assert run.epsilon_all_iterates < run.epsilon_theory
    # one insertion, no amplification: the bound is the analytic Gaussian mechanism, exactly
    # (no dp-accounting needed)
    assert run.epsilon_theory == gaussian_mechanism_epsilon(0.6, 1e-5)
    assert run.accuracy > 0.8 and run.d == 4810
    # 100 rounds x 10 of 100 clients, shuffled: every client takes part 10 times, which is one
    # Gaussian mechanism with noise 0.6 / sqrt(10); dp-accounting's PLD agrees to 1e-3
    assert run.epsilon_theory_clients == pytest.approx(
        gaussian_mechanism_epsilon(0.6 / np.sqrt(10), 1e-5), rel=1e-12
    )
    dpa = pytest.importorskip("dp_accounting")
    pld = dpa.pld.PLDAccountant().compose(dpa.GaussianDpEvent(0.6), 10).get_epsilon(1e-5)
    assert run.epsilon_theory_clients <= pld <= run.epsilon_theory_clients * (1 + 1e-3)


def test_unseen_final_cosines_follow_exact_null(run):
    assert stats.kstest(run.final_unseen, CosineNull(run.d).cdf).pvalue > 1e-3
    # observed canaries are shifted up; unseen all-iterates maxima are below observed ones
    assert run.final_observed.mean() > 0 and run.max_observed.mean() > run.max_unseen.mean()
    assert np.all(run.participations == 1)


def test_counts_for_both_threat_models(run):
    c = run.counts_final(0.05, seed=1).counts
    assert c.n_neg[0] == 500 and abs(c.fp[0] - 25) < 4 * np.sqrt(25)
    a = run.counts_all_iterates(0.05, seed=1).counts
    assert a.n_neg[0] == 250 and a.n_pos[0] == 500


def test_schedules():
    rng = np.random.default_rng(0)
    s = _canary_schedule(rng, 7, 40, 4, 0.1, "shuffle")
    assert s.shape == (40, 7) and np.all(s.sum(axis=0) == 4)
    for p in range(4):  # once in each period
        assert np.all(s[10 * p : 10 * (p + 1)].sum(axis=0) == 1)
    sched = _client_schedule(rng, 20, 5, 8, "shuffle")
    assert np.array_equal(np.sort(np.concatenate(sched[:4])), np.arange(20))
    b = _canary_schedule(rng, 1000, 50, None, 0.1, "bernoulli")
    assert b.mean() == pytest.approx(0.1, abs=0.01)


def test_bernoulli_repeats_and_accountant():
    pytest.importorskip("dp_accounting", reason="the bound comes from dp-accounting")
    r = run_dp_fedavg_with_canaries(
        noise_multiplier=1.0,
        rounds=8,
        n_canaries=10,
        n_unseen=10,
        canary_repeats=4,
        sampling="bernoulli",
        seed=3,
    )
    assert r.epsilon_theory == pytest.approx(gaussian_mechanism_epsilon(0.5, 1e-5), rel=1e-3)
    p = run_dp_fedavg_with_canaries(
        noise_multiplier=1.0,
        rounds=8,
        n_canaries=10,
        n_unseen=10,
        canary_repeats=None,
        sampling="bernoulli",
        seed=3,
    )
    assert "Poisson" in p.accounting and 0 < p.epsilon_theory < 4 * r.epsilon_theory


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"noise_multiplier": 0.0}, "noise_multiplier"),
        ({"rounds": 0}, "rounds"),
        ({"sampling": "poisson"}, "sampling"),
        ({"n_canaries": 1}, "n_canaries"),
        ({"clients_per_round": 500}, "clients_per_round"),
        ({"delta": 1.0}, "delta"),
        ({"canary_repeats": 0}, "canary_repeats"),
    ],
)
def test_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        run_dp_fedavg_with_canaries(**kwargs)


@pytest.mark.slow
def test_example_writes_figure(run_script, tmp_path):
    out = tmp_path / "fig.png"
    run_script("examples/canary_fedavg.py", "--out", str(out), "--rounds", "40")
    assert out.stat().st_size > 10_000
