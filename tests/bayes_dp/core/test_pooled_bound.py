"""Upper bounds of a mean of values in [0, 1] and the pooled eps bound (bayes_dp.core.pooled_bound).

References: simulation against the known mean of Bernoulli, binomial-average and Beta values;
Student's t formula and the region's lower constraints written out by hand; the betting
capital of Waudby-Smith and Ramdas (2024) written out from the paper's definition.
"""

import math

import numpy as np
import pytest
from scipy import stats

from bayes_dp.core.pooled_bound import (
    BET_CAP,
    GRID_STEP,
    constraint_epsilon_bound,
    mean_upper_bound,
    pooled_rates_epsilon_bound,
)

# (name, sampler of n values, true mean)
DISTS = [
    ("bernoulli 0.05", lambda rng, n: (rng.random(n) < 0.05).astype(float), 0.05),
    ("binomial(30, 0.1) / 30", lambda rng, n: rng.binomial(30, 0.1, n) / 30, 0.1),
    ("beta(0.5, 5)", lambda rng, n: rng.beta(0.5, 5.0, n), 0.5 / 5.5),
]


@pytest.mark.parametrize("n", [20, 200])
@pytest.mark.parametrize("name,draw,mean", DISTS, ids=[d[0] for d in DISTS])
def test_betting_coverage(n, name, draw, mean):
    # The bound at error 0.05 lies below the mean in at most 5% of samples for any n. Over
    # 2,000 samples the share that covers has MC sd sqrt(0.05 * 0.95 / 2000) = 0.0049 at the
    # nominal rate; the check is 1 - 0.05 - 3 sd = 0.935 (a false failure < 0.2%).
    rng = np.random.default_rng(11)
    reps, err = 2000, 0.05
    cover = sum(mean_upper_bound(draw(rng, n), err) >= mean for _ in range(reps))
    assert cover / reps >= 1 - err - 3 * np.sqrt(err * (1 - err) / reps)


def test_t_fails_on_rare_errors():
    # The t bound is asymptotic: Bernoulli(0.01) values, n = 20, all zero with probability
    # 0.99^20 = 0.82, and then the bound is 0: it covers in about 18% of samples (2,000 samples:
    # MC sd 0.009), far below 95%; the betting bound covers.
    rng = np.random.default_rng(12)
    xs = [(rng.random(20) < 0.01).astype(float) for _ in range(2000)]
    t_cover = np.mean([mean_upper_bound(x, 0.05, "t") >= 0.01 for x in xs])
    b_cover = np.mean([mean_upper_bound(x, 0.05) >= 0.01 for x in xs])
    assert 0.13 < t_cover < 0.23
    assert b_cover >= 0.95


def test_betting_wider_than_t_at_32():
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.binomial(50, 0.2, 32) / 50
        assert mean_upper_bound(x, 0.025) >= mean_upper_bound(x, 0.025, "t") > x.mean()


def test_t_by_hand():
    x = np.array([0.1, 0.3, 0.2, 0.05, 0.4])
    hand = x.mean() + stats.t.ppf(0.95, 4) * x.std(ddof=1) / np.sqrt(5)
    assert mean_upper_bound(x, 0.05, "t") == pytest.approx(hand, rel=1e-12)


def test_betting_is_first_m_where_capital_reaches_one_over_error():
    # The capital written out from the definition (predictable plug-in bets with the
    # regularized running mean and variance, capped at c / (1 - m)).
    rng = np.random.default_rng(4)
    x = rng.beta(2.0, 8.0, 50)
    a = 0.05
    b = mean_upper_bound(x, a)
    assert _log_capital_by_hand(x, b, a) >= np.log(1 / a)
    assert _log_capital_by_hand(x, b - 1e-9, a) < np.log(1 / a)
    assert x.mean() < b < 1


def test_monotone_in_error():
    rng = np.random.default_rng(5)
    x = rng.beta(1.0, 4.0, 64)
    for iv in ("betting", "t"):
        b = [mean_upper_bound(x, e, iv) for e in (0.001, 0.01, 0.05, 0.2, 0.5)]
        assert all(u >= v for u, v in zip(b, b[1:], strict=False)), (iv, b)


def test_edge_cases():
    zeros, ones = np.zeros(40), np.ones(40)
    b0 = mean_upper_bound(zeros, 0.025)
    # all zeros: the bet grows the capital by at most 1 + c m / (1 - m) a value, so the bound
    # is at least the m where 40 log(1 + c m / (1 - m)) = log(40)
    m_min = np.expm1(np.log(40) / 40) / (BET_CAP + np.expm1(np.log(40) / 40))
    assert m_min - 1e-9 <= b0 < 0.5
    assert mean_upper_bound(zeros, 0.025, "t") == 0.0
    assert mean_upper_bound(ones, 0.025) == 1.0
    assert mean_upper_bound(ones, 0.025, "t") == 1.0
    for iv in ("betting", "t"):
        b = mean_upper_bound([0.2, 0.4], 0.05, iv)
        assert 0.3 <= b <= 1.0


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"x": [0.1, 1.5]}, ValueError, "`x`.*1.5"),
        ({"x": [0.1, np.nan]}, ValueError, "`x`"),
        ({"x": [0.3]}, ValueError, "`x`.*at least 2"),
        ({"x": [[0.1, 0.2]]}, ValueError, "`x`"),
        ({"x": ["a", "b"]}, TypeError, "`x`"),
        ({"error": 0.0}, ValueError, "error"),
        ({"error": 1.0}, ValueError, "error"),
        ({"interval": "z"}, ValueError, "`interval`.*'z'"),
    ],
)
def test_bad_input(kwargs, exc, match):
    args = {"x": [0.1, 0.2, 0.3], "error": 0.05, "interval": "betting"} | kwargs
    with pytest.raises(exc, match=match):
        mean_upper_bound(**args)


def test_pooled_eps_by_hand():
    rng = np.random.default_rng(6)
    fpr = rng.binomial(400, 0.05, 60) / 400
    fnr = rng.binomial(400, 0.8, 60) / 400
    delta = 1e-5
    err = 0.05 / 2
    fu = fpr.mean() + stats.t.ppf(1 - err, 59) * fpr.std(ddof=1) / np.sqrt(60)
    gu = fnr.mean() + stats.t.ppf(1 - err, 59) * fnr.std(ddof=1) / np.sqrt(60)
    b = pooled_rates_epsilon_bound(fpr, fnr, delta, 0.95, "t")
    assert b["fpr_upper"] == pytest.approx(fu, rel=1e-12)
    assert b["fnr_upper"] == pytest.approx(gu, rel=1e-12)
    assert b["eps"] == pytest.approx(np.log((1 - delta - gu) / fu), rel=1e-12)
    assert b["error"] == pytest.approx(err) and b["n_models"] == 60 and b["interval"] == "t"
    assert b["fpr_mean"] == pytest.approx(fpr.mean())
    # betting: the rates' bounds at the share's error, for reading; the eps bound tests R's
    # lower constraints directly
    bb = pooled_rates_epsilon_bound(fpr, fnr, delta, 0.9, "betting", share=0.5)
    assert bb["error"] == pytest.approx(0.025)
    assert bb["fpr_upper"] == mean_upper_bound(fpr, bb["error"])
    assert bb["fnr_upper"] == mean_upper_bound(fnr, bb["error"])
    assert bb["eps"] == max(
        constraint_epsilon_bound(fpr, fnr, delta, 0.025),
        constraint_epsilon_bound(fnr, fpr, delta, 0.025),
    )
    assert bb["eps"] > 0.0


def _log_capital_by_hand(z, m, a, horizon=None):
    """Waudby-Smith and Ramdas's capital against "mean >= m", written out value by value.

    Predictable plug-in bets with the regularized running mean and variance, capped at
    c / (1 - m); ``horizon`` the bets' n (default: the number of values).
    """
    n = len(z) if horizon is None else horizon
    out, s, ss, mean = 0.0, 0.0, 0.0, 0.5
    var = 0.25
    for i, v in enumerate(z, start=1):
        lam = min(math.sqrt(2 * math.log(1 / a) / (n * var)), BET_CAP / (1 - m))
        out += math.log(1 + lam * (m - v))
        s += v
        mean = (0.5 + s) / (i + 1)
        ss += (v - mean) ** 2
        var = (0.25 + ss) / (i + 1)
    return out


def test_constraint_bound_by_hand():
    # the bound is the last grid point before the first candidate eps the capital does not
    # reject (capital >= 1 / error), each capital recomputed here value by value
    rng = np.random.default_rng(11)
    f = rng.binomial(300, 0.08, 80) / 300
    g = rng.binomial(300, 0.6, 80) / 300
    delta, a = 1e-5, 0.0125
    b = constraint_epsilon_bound(g, f, delta, a)  # FN + e^eps FP >= 1 - delta
    assert 0.5 < b < np.log((1 - 0.6) / 0.08)

    def rejects(eps0):
        z = (g + np.exp(eps0) * f) / (1 + np.exp(eps0))
        return _log_capital_by_hand(z, (1 - delta) / (1 + np.exp(eps0)), a) >= math.log(1 / a)

    for eps0 in (0.0, b / 3, b / 2, b - GRID_STEP, b):
        assert rejects(round(eps0 / GRID_STEP) * GRID_STEP), eps0
    assert not rejects(b + GRID_STEP)
    # nothing rejected at eps0 = 0: 0
    assert constraint_epsilon_bound(1 - f, f, delta, a) == 0.0


def test_constraint_bound_holds_when_the_means_drift():
    # The models' expected pairs alternate between two points of one straight piece of R's
    # boundary at eps = 1, (0.05, 1 - 0.05 e) and (0.2, 1 - 0.2 e) (never one common mean; the
    # constraint FN + e FP >= 1 holds with equality for each). A valid 95% bound is above 1 in
    # at most 5% of 300 audits: Binomial(300, 0.05) has sd 3.8, allowed 15 + 3 sd = 26. The
    # check is not empty: the bound comes close to the truth (median above 0.8).
    rng = np.random.default_rng(12)
    fp = np.where(np.arange(400) % 2 == 0, 0.05, 0.2)
    above, bounds = 0, []
    for _ in range(300):
        f = rng.binomial(200, fp) / 200
        g = rng.binomial(200, 1 - np.e * fp) / 200
        e = pooled_rates_epsilon_bound(f, g, 0.0, 0.95)["eps"]
        above += e > 1.0
        bounds.append(e)
    assert above <= 15 + 3 * np.sqrt(300 * 0.05 * 0.95), above
    assert np.median(bounds) > 0.8, np.median(bounds)


def test_pooled_eps_zero_when_bounds_say_nothing():
    # FPR + FNR near 1 (no attack): the upper bounds' sum exceeds 1 - delta, eps bound 0
    rng = np.random.default_rng(7)
    fpr = rng.binomial(100, 0.3, 30) / 100
    assert pooled_rates_epsilon_bound(fpr, 1 - fpr, 1e-5)["eps"] == 0.0


def test_horizon_is_the_bets_n():
    # the bets' n is the horizon fixed in advance: with more planned than given, every bet is
    # sqrt(n / horizon) times smaller, the capital at a mean grows less, the bound is higher
    rng = np.random.default_rng(13)
    x = rng.binomial(50, 0.1, 40) / 50
    assert mean_upper_bound(x, 0.025, horizon=40) == mean_upper_bound(x, 0.025)
    b60 = mean_upper_bound(x, 0.025, horizon=60)
    assert b60 > mean_upper_bound(x, 0.025)
    assert _log_capital_by_hand(x, b60, 0.025, horizon=60) >= np.log(1 / 0.025)
    assert _log_capital_by_hand(x, b60 - 1e-9, 0.025, horizon=60) < np.log(1 / 0.025)
    g = rng.binomial(50, 0.6, 40) / 50
    assert constraint_epsilon_bound(g, x, 1e-5, 0.025, horizon=60) <= constraint_epsilon_bound(
        g, x, 1e-5, 0.025
    )
    for bad in (39, 40.0, True):
        with pytest.raises(ValueError, match="horizon"):
            pooled_rates_epsilon_bound(x, g, 1e-5, horizon=bad)


def test_constraint_bound_bad_input():
    with pytest.raises(ValueError, match="one value per model.*3 and 2"):
        constraint_epsilon_bound([0.1, 0.2, 0.3], [0.5, 0.6], 1e-5, 0.025)
    with pytest.raises(ValueError, match="`w`"):
        constraint_epsilon_bound([0.1, 0.2], [0.5, np.nan], 1e-5, 0.025)
    with pytest.raises(ValueError, match="error"):
        constraint_epsilon_bound([0.1, 0.2], [0.5, 0.6], 1e-5, 0.0)
    with pytest.raises(ValueError, match="delta"):
        constraint_epsilon_bound([0.1, 0.2], [0.5, 0.6], 1.5, 0.025)


def test_pooled_eps_bad_input():
    with pytest.raises(ValueError, match="one value per model.*3 and 2"):
        pooled_rates_epsilon_bound([0.1, 0.2, 0.3], [0.5, 0.6], 1e-5)
    with pytest.raises(ValueError, match="`fnr`"):
        pooled_rates_epsilon_bound([0.1, 0.2], [0.5, 1.2], 1e-5)
    with pytest.raises(ValueError, match="confidence"):
        pooled_rates_epsilon_bound([0.1, 0.2], [0.5, 0.6], 1e-5, confidence=1.0)
    with pytest.raises(ValueError, match="delta"):
        pooled_rates_epsilon_bound([0.1, 0.2], [0.5, 0.6], 1.0)
    with pytest.raises(ValueError, match="share"):
        pooled_rates_epsilon_bound([0.1, 0.2], [0.5, 0.6], 1e-5, share=0.0)
