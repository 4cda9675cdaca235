"""Per-model error rates of a test fitted on half the models (mia.pooled_model_rates) and the
pooled bound; and the exact-rate machinery of its validity study
(benchmarks/_support/pooled_sim.py).

References: the test fitted and applied target by target with the public
:func:`mia.learn_and_decide` (sample mean and unbiased variance of the reference half); the
decision regions against ``mia.lira.decide``; the Laplace + normal CDF against quadrature.
"""

import warnings

import numpy as np
import pytest
from scipy import integrate, stats

import mia
from bayes_dp.core.exceptions import DependenceWarning
from bayes_dp.core.pooled_bound import mean_upper_bound, pooled_rates_epsilon_bound
from mia.lira import decide
from mia.model_rates import _fit_and_decide
from mia.selection import fit_reference, reference_exposure, select_exposed

from benchmarks._support.pooled_sim import audit, decision_region, in_region, laplace_normal_cdf
from tests._support.balanced_rates import balanced_rates_by_hand


def _tiny():
    rng = np.random.default_rng(21)
    keep = rng.random((10, 6)) < 0.5
    keep[:, 0] = [True] * 5 + [False] * 5  # every target has IN and OUT models in both halves
    scores = rng.normal(size=keep.shape) + 1.5 * keep
    return scores, keep


def test_rates_by_hand():
    scores, keep = _tiny()
    r = mia.pooled_model_rates(scores, keep, alpha=0.2, seed=3)
    ref, test = np.array(r["reference_models"]), np.array(r["test_models"])
    all_test = np.setdiff1d(np.arange(10), ref)
    assert len(ref) == 5 and set(test) <= set(all_test)
    fitted = []
    dec = np.zeros((5, 6), bool)
    for t in range(scores.shape[1]):
        ins = scores[ref, t][keep[ref, t]]
        outs = scores[ref, t][~keep[ref, t]]
        if len(ins) < 2 or len(outs) < 2:
            continue
        fitted.append(t)
        for i, j in enumerate(all_test):
            dec[i, t] = bool(mia.learn_and_decide(scores[j, t], outs, ins, 0.2))
    assert r["n_targets"] == len(fitted) and r["columns"].tolist() == fitted
    np.testing.assert_array_equal(r["decisions"], dec[:, fitted])
    coins = np.random.default_rng(r["coin_seed"]).random((len(fitted), 5)).T
    fpr, fnr, used = balanced_rates_by_hand(dec[:, fitted], keep[all_test][:, fitted], coins)
    assert all_test[used].tolist() == r["test_models"]
    np.testing.assert_allclose(r["fpr"], fpr, rtol=1e-15)
    np.testing.assert_allclose(r["fnr"], fnr, rtol=1e-15)


def test_seed_and_split_bound():
    scores, keep = mia.simulate_score_matrix(40, 50, mu=1.0, seed=2)
    lists = ("fpr", "fnr", "test_models", "reference_models", "n_targets")
    arrays = ("columns", "decisions", "keep")

    def same(x, y):
        return all(x[k] == y[k] for k in lists) and all(np.array_equal(x[k], y[k]) for k in arrays)

    a = mia.pooled_model_rates(scores, keep, alpha=0.1, seed=5)
    assert same(a, mia.pooled_model_rates(scores, keep, alpha=0.1, seed=5))
    b = mia.pooled_model_rates(scores, keep, alpha=0.1, seed=np.random.default_rng(5))
    assert same(a, b)
    # the rates are model_rates of the returned decisions over the fitted columns
    fpr, fnr, _ = mia.model_rates.model_rates(a["decisions"], a["keep"], seed=a["coin_seed"])
    assert fpr.tolist() == a["fpr"] and fnr.tolist() == a["fnr"]
    assert (
        a["test_models"] != mia.pooled_model_rates(scores, keep, alpha=0.1, seed=6)["test_models"]
    )
    s = mia.pooled_split_bound(scores, keep, alpha=0.1, delta=1e-5, interval="t", seed=5)
    ref = pooled_rates_epsilon_bound(a["fpr"], a["fnr"], 1e-5, 0.95, "t")
    assert s["eps"] == ref["eps"] and s["n_targets"] == a["n_targets"] == 50


def test_errors():
    scores, keep = mia.simulate_score_matrix(7, 20, mu=1.0, seed=0)
    with pytest.raises(ValueError, match="at least 8 models.*7"):
        mia.pooled_model_rates(scores, keep, alpha=0.1)
    keep = np.zeros((10, 4), bool)
    keep[:5] = True
    with pytest.raises(ValueError, match="cannot fit"):
        mia.pooled_model_rates(np.ones((10, 4)), keep, alpha=0.1)
    scores, keep = mia.simulate_score_matrix(10, 4, mu=1.0, seed=0)
    with pytest.raises(ValueError, match="`alpha`"):
        mia.pooled_model_rates(scores, keep, alpha=1.5)


def test_fit_reference_is_the_fit_of_fit_and_decide():
    scores, keep = mia.simulate_score_matrix(20, 30, mu=1.0, seed=4)
    m0, sd0, m1, sd1, ok = fit_reference(scores[:10], keep[:10], "online", False, "auto")
    dec, ok2 = _fit_and_decide(scores[:10], keep[:10], scores[10:], 0.1, "online", False, "auto")
    assert (ok == ok2).all()
    t = np.flatnonzero(ok)[0]
    col, k = scores[:10, t], keep[:10, t]
    assert m0[t] == pytest.approx(col[~k].mean()) and sd0[t] == pytest.approx(col[~k].std(ddof=1))
    assert m1[t] == pytest.approx(col[k].mean()) and sd1[t] == pytest.approx(col[k].std(ddof=1))
    np.testing.assert_array_equal(dec, decide(scores[10:], m0, sd0, m1, sd1, 0.1) & ok)


def test_decision_region_matches_decide():
    # narrow (sd1 < sd0), wide (sd1 > sd0), equal variances either side, mu0 == mu1, and
    # |c| beyond the asymptotic switch
    rng = np.random.default_rng(8)
    n = 400
    m0 = rng.normal(size=n)
    sd0 = rng.uniform(0.3, 2.0, n)
    m1 = m0 + rng.normal(0, 2, n)
    sd1 = sd0 * rng.uniform(0.5, 1.5, n)
    sd1[:40] = sd0[:40]
    m1[40:50] = m0[40:50]
    sd1[50:60] = sd0[50:60] * 1.001  # |c| large
    for alpha in (0.1, 0.001):
        region = decision_region(m0, sd0, m1, sd1, alpha)
        x = rng.normal(m0, 4 * sd0, (2000, n))
        np.testing.assert_array_equal(in_region(x, region), decide(x, m0, sd0, m1, sd1, alpha))


@pytest.mark.parametrize("s", [0.25, 1.0])
def test_laplace_normal_cdf(s):
    for x in (-4.0, -0.5, 0.0, 0.7, 5.0):
        q = integrate.quad(
            lambda v, x=x: 0.5 * np.exp(-abs(v)) * stats.norm.cdf((x - v) / s), -50, 50
        )
        assert laplace_normal_cdf(x, s) == pytest.approx(q[0], abs=1e-10)


def test_exact_rates_against_fresh_models():
    # The exact mean rates of one audit's fitted test against 4,000 fresh test models per side
    # (each a per-model shift plus its own noise): the Monte Carlo mean rate over 64 targets has
    # sd <= sqrt(0.25 / 4000) = 0.008; checked within 4 sd.
    from benchmarks._support.pooled_sim import _cdfs, simulate, true_rates

    cfg = {
        "mech": "laplace",
        "param": 1.0,
        "shift": 1.0,
        "design": "independent",
        "models": 32,
        "targets": 64,
        "alpha": 0.1,
    }
    rng = np.random.default_rng(9)
    x, keep, mu_t = simulate(cfg, rng)
    fit = fit_reference(x, keep, "online", False, "auto")
    fpr_t, fnr_t, region = true_rates(cfg, mu_t, fit, 0.1)
    ok = fit[4]
    m = 4000
    shift = rng.normal(size=(m, 1))
    out = rng.laplace(size=(m, 64)) + shift
    inn = rng.laplace(size=(m, 64)) + mu_t + shift
    assert abs(in_region(out, region)[:, ok].mean() - fpr_t[ok].mean()) < 4 * 0.008
    assert abs(1 - in_region(inn, region)[:, ok].mean() - fnr_t[ok].mean()) < 4 * 0.008
    assert _cdfs(cfg, mu_t)[0](0.0) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "mech,param", [("laplace", 1.0), ("gauss", 0.0), ("rr", 1.0), ("hetero", 0.5), ("few", 0.0)]
)
def test_audit_runs_and_regions_agree(mech, param):
    cfg = {
        "mech": mech,
        "param": param,
        "shift": 0.25,
        "design": "balanced",
        "models": 16,
        "targets": 64,
        "alpha": 0.1,
    }
    a = audit(cfg, np.random.default_rng(1), 1e-5)
    assert a["mismatch"] == 0
    assert 0 <= a["fpr_true"] <= 1 and 0 <= a["fnr_true"] <= 1
    # 8 test models, the last never used (its memberships are known from the others')
    assert (a["truth"] == 0) == (mech == "gauss") and a["n_test"] == 7
    # the bound over the most exposed targets: the library's selection and rates recomputed
    assert a["sel_mismatch"] == 0 and a["sel_n_targets"] == 8
    assert 0 <= a["sel_fpr_true"] <= 1 and 0 <= a["sel_fnr_true"] <= 1


def test_few_exposed_simulation():
    from mia.canary import gaussian_mechanism_epsilon

    from benchmarks._support.pooled_sim import FEW_MU, simulate, truth_eps

    cfg = {"mech": "few", "param": 0.0, "shift": 0.0, "design": "independent", "models": 8}
    cfg |= {"targets": 200, "alpha": 0.1, "exposed": 7}
    _, _, mu_t = simulate(cfg, np.random.default_rng(2))
    exposed = mu_t[mu_t > 0]
    assert exposed.size == 7 and np.all((exposed >= FEW_MU[0]) & (exposed <= FEW_MU[1]))
    assert truth_eps(cfg, 1e-5, mu_t) == gaussian_mechanism_epsilon(
        1.0, 1e-5, sensitivity=exposed.max()
    )
    lap = cfg | {"mech": "laplace", "param": 2.0}
    _, _, mu_t = simulate(lap, np.random.default_rng(2))
    assert np.sort(np.unique(mu_t)).tolist() == [0.0, 2.0] and (mu_t > 0).sum() == 7
    with pytest.raises(ValueError, match="exposed"):
        simulate(cfg | {"mech": "rr", "param": 1.0}, np.random.default_rng(2))


def test_expected_model_rates_against_simulation():
    # The exact expected per-model rates (enumeration of the memberships) against 200,000
    # simulated models: a per-model rate lies in [0, 1], so its sd is <= 0.5 and the mean's
    # <= 0.5 / sqrt(used models) ~ 0.0012; checked within 4 sd.
    from benchmarks._support.pooled_sim import expected_model_rates

    f = np.array([0.6, 0.2, 0.05, 0.3, 0.1])
    g = np.array([0.5, 0.1, 0.2, 0.2, 0.9])
    p = np.array([0.2, 0.5, 0.8, 0.5, 0.35])
    k = np.random.default_rng(3).random((200_000, 5)) < p
    n_out, n_in = (~k).sum(axis=1), k.sum(axis=1)
    use = (n_out > 0) & (n_in > 0)
    fe, ge = expected_model_rates(f, g, p)
    tol = 4 * 0.5 / np.sqrt(use.sum())
    assert abs(fe - ((~k * f).sum(axis=1)[use] / n_out[use]).mean()) < tol
    assert abs(ge - ((k * g).sum(axis=1)[use] / n_in[use]).mean()) < tol
    # unequal chances to be IN weight FP and FN differently: not the plain means (0.317 and
    # 0.295 against 0.25 and 0.38)
    assert fe - f.mean() > 10 * tol and g.mean() - ge > 10 * tol
    # equal chances: the plain means (every target equally likely in a model's OUT / IN set)
    fe, ge = expected_model_rates(f, g, np.full(5, 0.5))
    assert fe == pytest.approx(f.mean()) and ge == pytest.approx(g.mean())


def test_model_rates_by_hand_and_errors():
    from mia.model_rates import model_rates

    rng = np.random.default_rng(12)
    k = rng.random((30, 9)) < rng.uniform(0.1, 0.9, 9)
    d = rng.random(k.shape) < 0.4
    fpr, fnr, used = model_rates(d, k, seed=4)
    coins = np.random.default_rng(4).random(k.shape[::-1]).T
    want = balanced_rates_by_hand(d, k, coins)
    np.testing.assert_allclose(fpr, want[0], rtol=1e-15)
    np.testing.assert_allclose(fnr, want[1], rtol=1e-15)
    assert (used == want[2]).all() and not used[-1]  # the last model's memberships are known
    # a subset of the columns: their coins are the ones drawn for all
    cols = [0, 2, 3, 7, 8]
    fpr, fnr, used = model_rates(d, k, cols, seed=4)
    want = balanced_rates_by_hand(d[:, cols], k[:, cols], coins[:, cols])
    np.testing.assert_allclose(fpr, want[0], rtol=1e-15)
    assert (used == want[2]).all()
    # decisions always right: no error among the kept entries
    k2 = rng.random((30, 200)) < 0.5
    f0, g0, _ = model_rates(k2, k2, seed=1)
    assert f0.max() == 0 and g0.max() == 0
    with pytest.raises(ValueError, match="same shape"):
        model_rates(d, k[:, :3])


def test_balanced_rates_weigh_targets_alike():
    # Decisions fixed per target, whatever the membership (an eps = 0 mechanism): every target's
    # error point is (d_t, 1 - d_t), on FPR + FNR = 1. Given the models before, model i's
    # expected FP + FN is then exactly 1 for the balanced rates (the same weights for both
    # sides; an empty side counts 1/2), so also averaged over arrangements. The plain rates
    # (FP over all OUT targets, FN over all IN) weigh a target's FP by its chance to be OUT and
    # its FN by its chance to be IN: with the IN counts below they move away from 1.
    # Each model's FP + FN lies in [0, 2] (sd <= 1): over 10,000 arrangements its mean's sd is
    # at most 1 / sqrt(draws where it is used) <= 0.023 (models used in >= 2,000 draws);
    # checked within 4.5 sd per model (12 models: a correct rule fails with probability < 1e-4).
    from mia.model_rates import model_rates

    rng = np.random.default_rng(2)
    n, counts = 12, np.array([2, 3, 6, 9, 10, 4, 8, 1])
    d = np.array([1, 1, 0, 0, 1, 0, 1, 0], bool)
    base = np.arange(n)[:, None] < counts  # each column's IN count, arranged at random below
    reps = 10_000
    s_new, n_new = np.zeros(n), np.zeros(n)
    s_old, n_old = np.zeros(n), np.zeros(n)
    for _ in range(reps):
        k = np.take_along_axis(base, rng.random(base.shape).argsort(axis=0), axis=0)
        dec = np.broadcast_to(d, k.shape)
        f, g, used = model_rates(dec, k, seed=rng)
        s_new[used] += f + g
        n_new[used] += 1
        both = (~k).any(1) & k.any(1)
        s_old[both] += ((dec & ~k).sum(1) / np.maximum((~k).sum(1), 1))[both]
        s_old[both] += ((~dec & k).sum(1) / np.maximum(k.sum(1), 1))[both]
        n_old[both] += 1
    ok = n_new >= 2000
    assert ok.sum() >= 8
    dev = np.abs(s_new[ok] / n_new[ok] - 1.0)
    assert (dev < 4.5 / np.sqrt(n_new[ok])).all(), dev
    # the plain rates: below 1 in every model (0.066-0.080 below, over 4 sd), for a rule that
    # knows the design's IN counts
    assert (1.0 - s_old / n_old).min() > 4.5 / np.sqrt(n_old.min())


def test_blind_attack_on_the_balanced_design():
    # LiRA's balanced design (every target IN for exactly half of the models): given the
    # reference half, a target's IN count in the test half is n - its reference count. A rule
    # that reads the design alone ("member" where the reference half has few IN) has eps = 0,
    # yet the plain per-model rates (FP over each model's OUT targets, FN over its IN ones)
    # put both below 1/2 and their box bound above 0: a false accusation. The balanced rates
    # and the constraint test give 0.
    from bayes_dp.core.region import _eps_lower
    from mia.model_rates import model_rates

    rng = np.random.default_rng(5)
    m, t = 1024, 1000
    keep = (np.arange(m)[:, None] < m // 2) & np.ones(t, bool)
    keep = np.take_along_axis(keep, rng.random(keep.shape).argsort(axis=0), axis=0)
    ref, test = keep[: m // 2], keep[m // 2 :]
    dec = np.broadcast_to(ref.sum(axis=0) < m // 4, test.shape)
    plain_f = (dec & ~test).sum(1) / (~test).sum(1)
    plain_g = (~dec & test).sum(1) / test.sum(1)
    err = 0.05 / 2
    box = _eps_lower(mean_upper_bound(plain_f, err), mean_upper_bound(plain_g, err), 1e-5)
    assert box > 0.01
    f, g, used = model_rates(dec, test, seed=1)
    assert used.sum() > 400
    assert pooled_rates_epsilon_bound(f, g, 1e-5, 0.95)["eps"] == 0.0


def test_reference_exposure_is_welchs_t():
    rng = np.random.default_rng(4)
    keep = rng.random((20, 7)) < 0.5
    keep[:, 6] = [True] * 19 + [False]  # one OUT model: not fitted, -inf
    x = rng.normal(size=keep.shape) + 2.0 * keep * np.arange(7)
    want = [
        stats.ttest_ind(x[keep[:, j], j], x[~keep[:, j], j], equal_var=False).statistic
        for j in range(6)
    ]
    got = reference_exposure(x, keep)
    np.testing.assert_allclose(got[:6], np.abs(want), rtol=1e-12)
    assert got[6] == -np.inf
    # offline: signed on the test's side; "auto" follows the mean difference (here greater)
    np.testing.assert_allclose(reference_exposure(x, keep, "offline")[:6], want, rtol=1e-12)
    np.testing.assert_allclose(
        reference_exposure(x, keep, "offline", "less")[:6], -np.asarray(want), rtol=1e-12
    )
    np.testing.assert_allclose(
        reference_exposure(-x, keep, "offline")[:6], want, rtol=1e-12
    )  # IN lower: "auto" reads the side as "less"
    with pytest.raises(ValueError, match="same shape"):
        reference_exposure(x, keep[:, :3])
    with pytest.raises(ValueError, match="`method` must be one of .* found 'onlin'"):
        reference_exposure(x, keep, "onlin")
    with pytest.raises(ValueError, match="`side` must be one of .* found 'up'"):
        reference_exposure(x, keep, "offline", "up")


def test_select_exposed_order_ties_and_errors():
    assert select_exposed([1.0, 5.0, 5.0, -np.inf, 2.0], 3).tolist() == [1, 2, 4]
    assert select_exposed([-np.inf, 1.0], 5).tolist() == [1]
    assert select_exposed([-np.inf], 2).size == 0
    with pytest.raises(ValueError, match="`k`"):
        select_exposed([1.0], 0)
    with pytest.raises(ValueError, match="NaN"):
        select_exposed([np.nan, 1.0], 1)


def _counts(scores, keep):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DependenceWarning)
        return mia.counts_from_score_matrix(scores, keep, 0.1)


def test_selection_uses_the_reference_half_only():
    # 4 exposed targets among 40: changing every test model's scores changes the rates but
    # never which targets are selected (they are chosen on the reference half alone)
    mu = np.r_[np.full(4, 4.0), np.zeros(36)]
    scores, keep = mia.simulate_score_matrix(32, 40, mu, seed=5)
    res = _counts(scores, keep)
    sel = res.to_evidence().dependence["pooled_rates"]["selected"]
    assert set(range(4)) <= set(sel["columns"]) and sel["n_targets"] == 8
    test = np.array(res.pooled["test_models"])
    other = scores.copy()
    other[test] = np.random.default_rng(6).normal(size=(test.size, 40))
    res2 = _counts(other, keep)
    sel2 = res2.to_evidence().dependence["pooled_rates"]["selected"]
    assert sel2["columns"] == sel["columns"] and sel2["fnr"] != sel["fnr"]
    # declared targets: no selection (the declaration is the choice)
    assert "selected" not in res.to_evidence(focus=[0, 1, 2, 3]).dependence["pooled_rates"]
    # 8 targets or fewer: the selection would be all of them, so there is none
    few = _counts(scores[:, :8], keep[:, :8])
    assert "selected" not in few.to_evidence().dependence["pooled_rates"]


def test_kept_entries_are_model_rates_coins_and_keep_each_side_with_chance_p():
    # the coins behind model_rates: its rates are the kept masks' shares, and over many coin
    # seeds (design fixed) every entry is a kept IN (when IN) or a kept OUT (when OUT) with the
    # returned chance p, the same for both sides (docs/validation/pooled_bound.md, "The repair,
    # part 1")
    from mia.model_rates import kept_entries, model_rates

    rng = np.random.default_rng(4)
    keep = rng.random((12, 6)) < 0.5
    dec = rng.random((12, 6)) < 0.3
    fpr, fnr, used = model_rates(dec, keep, seed=9)
    dt, kt, p, kin, kout, used2 = kept_entries(dec, keep, seed=9)
    assert np.array_equal(used, used2) and np.array_equal(dt, dec) and np.array_equal(kt, keep)
    n_out, n_in = kout.sum(axis=1)[used], kin.sum(axis=1)[used]
    want_fp = np.where(n_out > 0, (dec & kout).sum(axis=1)[used] / np.maximum(n_out, 1), 0.5)
    want_fn = np.where(n_in > 0, (~dec & kin).sum(axis=1)[used] / np.maximum(n_in, 1), 0.5)
    np.testing.assert_array_equal(fpr, want_fp)
    np.testing.assert_array_equal(fnr, want_fn)
    reps = 4000
    freq = (
        sum(
            np.where(keep, kept_entries(dec, keep, seed=s)[3], kept_entries(dec, keep, seed=s)[4])
            for s in range(reps)
        )
        / reps
    )
    # the chance of the entry's own side is p / pi (IN) or p / (1 - pi) (OUT); times the chance
    # of that side given the models before, both are p: check the kept share against it
    n = keep.shape[0]
    r_in = np.cumsum(keep[::-1], axis=0)[::-1]
    pi = r_in / (n - np.arange(n))[:, None]
    side = np.where(keep, pi, 1.0 - pi)
    want = np.where(side > 0, p / np.where(side > 0, side, 1.0), 0.0)
    assert np.abs(freq - want).max() < 4.5 * np.sqrt(0.25 / reps)
