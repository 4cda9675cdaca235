"""The "guesses" likelihood of one-run audits (samplers/model/guesses.py) and its place in the
exact sampler's target (samplers/exact/posterior.py, surrogate.py, pointwise.py).

The kernel is held to ``scipy.stats.binom`` integrated by ``scipy.integrate.quad``
(``tests/reference/guesses.py``) over thin bands, empty and full counts, huge r, far tails and
pairs; to the grid posterior's vectorised form (``bayes_dp.one_run.core``); and the sampler's
target to the sum of its rows.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from bayes_dp.one_run.core import OneRunCounts, one_run_log_likelihood
from samplers.exact import surrogate
from samplers.exact.chain import log_posterior
from samplers.exact.driver import build_model
from samplers.exact.pointwise import pointwise_guesses
from samplers.model import guesses
from samplers.model.codes import LIK_BINOMIAL, LIK_GUESSES

from tests.reference.guesses import log_lik_quad


def _row(r, v, c, eps, s):
    lc = math.lgamma(r + 1) - math.lgamma(v + 1) - math.lgamma(r - v + 1)
    return guesses.log_lik_row(float(r), float(v), float(c), lc, math.log(r + 1.0), eps, s)


#: (eps, s): a point at eps = 0 and at s = 1, bands thinner than 1e-9, wide bands, accuracies
#: near 1 (eps 12: 1 - p ~ 6e-6; with c = 2, 4e-11)
BANDS = [
    (0.0, 0.5),
    (1e-9, 0.3),
    (0.5, 0.0),
    (1.0, 0.9),
    (2.0, 1.0 - 1e-9),
    (2.0, 0.999999),
    (3.0, 1.0),
    (6.0, 0.2),
    (12.0, 0.95),
]
#: (r, v): no guess, all wrong, all right, half, 90%, one wrong of 50,000
COUNTS = [(0, 0), (1, 0), (1, 1), (7, 7), (120, 60), (120, 108), (2000, 0), (2000, 1900)]
COUNTS += [(50_000, 45_000), (50_000, 49_999), (50_000, 50_000)]


@pytest.mark.parametrize("c", [1.0, 2.0])
def test_kernel_matches_quadrature_of_the_binomial(c):
    worst = 0.0
    n_far = 0
    for (r, v), (eps, s) in itertools.product(COUNTS, BANDS):
        ref = log_lik_quad(r, v, c, eps, s)
        got = _row(r, v, c, eps, s)
        err = abs(got - ref) / max(1.0, abs(ref))
        worst = max(worst, err)
        n_far += ref < -700.0  # below a double's range before logs: the continued fraction
        assert err < 1e-9, (r, v, c, eps, s, got, ref)
    print(f"c = {c}: worst relative error {worst:.2e}; {n_far} cases below e^-700")
    assert n_far > 0  # the far tails were tried


def test_kernel_is_a_probability_of_v():
    # sum over v of P(v | r, eps, s) = 1 for every band (the binomial coefficient included)
    for r, (eps, s), c in itertools.product((0, 5, 40), BANDS, (1.0, 2.0)):
        total = sum(math.exp(_row(r, v, c, eps, s)) for v in range(r + 1))
        assert total == pytest.approx(1.0, abs=1e-12), (r, eps, s, c)


def test_kernel_agrees_with_the_grid_posteriors_likelihood():
    """The vectorised scipy form (estimate_one_run's) is the kernel minus log C(r, v)."""
    counts = OneRunCounts(
        m=[1000, 1000, 800, 50], r=[200, 60, 800, 50], v=[150, 59, 700, 25], pairs=[0, 1, 1, 0]
    )
    lchoose = sum(
        math.lgamma(r + 1) - math.lgamma(v + 1) - math.lgamma(r - v + 1)
        for r, v in zip(counts.r, counts.v, strict=True)
    )
    for eps, s in [(0.3, 0.1), (1.0, 0.5), (2.5, 0.9), (4.0, 0.0), (0.8, 0.99)]:
        kernel = sum(
            _row(int(r), int(v), c, eps, s)
            for r, v, c in zip(counts.r, counts.v, counts.factor, strict=True)
        )
        grid = float(one_run_log_likelihood(eps, s, counts))
        assert kernel == pytest.approx(grid + lchoose, rel=1e-9, abs=1e-9), (eps, s)


def test_continued_fraction_matches_scipy_where_a_double_holds_the_value():
    rng = np.random.default_rng(3)
    for _ in range(200):
        a, b = rng.uniform(1, 3000, size=2)
        # x below the mean, where I_x(a, b) is between 1e-250 and 0.3
        x = rng.uniform(0.0, 1.0) * a / (a + b)
        want = special.betainc(a, b, x)
        if not 1e-250 < want < 0.3:
            continue
        got = guesses.log_beta_tail(a, b, x, math.log(x), math.log1p(-x))
        assert got == pytest.approx(math.log(want), rel=1e-11, abs=1e-11), (a, b, x)


def test_rows_are_counted_once_with_their_multiplicity():
    r = [10, 10, 10, 20, 10]
    v = [8, 8, 8, 15, 8]
    c = [1.0, 1.0, 2.0, 1.0, 1.0]
    grp = [0, 0, 0, 0, 1]
    k = [0, 0, 0, 0, 1]
    rows, inv = guesses.guess_rows(r, v, c, grp, k)
    assert rows.r.size == 4  # (group 0: 10/8 bits x2, 10/8 pairs, 20/15), (group 1: 10/8)
    assert inv[0] == inv[1] and inv[0] != inv[2]
    assert rows.mult[inv[0]] == 2.0
    s = np.array([0.3, 0.7])
    eps = 1.4
    want = sum(_row(ri, vi, ci, eps, s[ki]) for ri, vi, ci, ki in zip(r, v, c, k, strict=True))
    assert guesses.guesses_log_lik(rows, eps, s, -1) == pytest.approx(want, rel=1e-13)
    only1 = _row(10, 8, 1.0, eps, 0.7)
    assert guesses.guesses_log_lik(rows, eps, s, 1) == pytest.approx(only1, rel=1e-13)
    ll = np.empty(rows.r.size)
    guesses.fill_guesses_log_lik(rows, eps, s, ll)
    assert ll[inv].sum() == pytest.approx(want, rel=1e-13)


def _model(with_base: bool, s_fixed=np.nan):
    """A model with two groups: group 0 one binomial base (or none), group 1 guesses rows."""
    fp, n_neg, fn, n_pos, grp = ([40], [1000], [250], [1000], [0]) if with_base else ([],) * 5
    rows, _ = guesses.guess_rows([200, 60], [150, 58], [1.0, 2.0], [1, 1], [1, 1])
    return build_model(
        np.array(fp, dtype=np.int64),
        np.array(n_neg, dtype=np.int64),
        np.array(fn, dtype=np.int64),
        np.array(n_pos, dtype=np.int64),
        np.array(grp, dtype=np.int64),
        g_lik=np.array([LIK_BINOMIAL, LIK_GUESSES]),
        g_sidx=np.array([0, 1]),
        g_tau=np.zeros(2),
        g_rho=np.zeros(2),
        g_tau_free=np.zeros(2, dtype=bool),
        g_rho_free=np.zeros(2, dtype=bool),
        s_fixed=np.array([s_fixed, s_fixed]),
        delta=1e-5,
        eps_prior=(0, 10.0, 0.0),
        s_prior=(1.0, 1.0),
        tau_prior=(1.0, 1.0),
        guesses=rows,
    )


def test_the_target_adds_the_guesses_rows_to_the_bases():
    model, corr, names, _ = _model(True)
    bare = model._replace(G=guesses.guess_rows([], [], [], [], [])[0])
    assert names == ["eps", ("s", 0), ("s", 1)]
    for z in ([0.5, -0.3, 1.2], [1.2, 2.0, 0.1], [-1.0, 0.0, -2.0]):
        z = np.array(z)
        ll_b, ll_c = np.empty(1), np.empty(0)
        full = log_posterior(z, model, corr, ll_b, ll_c)
        base = log_posterior(z, bare, corr, ll_b, ll_c)
        s1 = special.expit(z[2])
        rows = _row(200, 150, 1.0, math.exp(z[0]), s1) + _row(60, 58, 2.0, math.exp(z[0]), s1)
        assert full - base == pytest.approx(rows, rel=1e-12, abs=1e-12)
        # pointwise: the rows' own values at that draw
        pw = pointwise_guesses(model, z[None, None, :])[0, 0]
        assert pw.sum() == pytest.approx(rows, rel=1e-12)


def test_a_model_of_guesses_only_has_no_bases_and_its_target_is_their_sum():
    model, corr, names, base_map = _model(False)
    assert model.b_grp.size == 0 and corr is None and base_map.shape == (0, 2)

    def want(z):
        eps, s1 = math.exp(z[0]), special.expit(z[2])
        rows = _row(200, 150, 1.0, eps, s1) + _row(60, 58, 2.0, eps, s1)
        # prior of z: half-normal(10) of eps (with its Jacobian) and two uniform strengths
        prior = stats.halfnorm.logpdf(eps, scale=10.0) + z[0]
        return prior + sum(math.log(special.expit(x) * special.expit(-x)) for x in z[1:]) + rows

    z1, z2 = np.array([0.7, 0.4, -0.5]), np.array([1.5, -1.0, 2.0])
    lp1, lp2 = (log_posterior(z, model, corr, np.empty(0), np.empty(0)) for z in (z1, z2))
    # the sampler's log posterior is known up to a constant
    assert lp1 - lp2 == pytest.approx(want(z1) - want(z2), rel=1e-12)


def test_the_likelihood_table_holds_the_guesses_rows():
    model, _, names, _ = _model(False, s_fixed=np.nan)
    G = surrogate.GRID
    # strength 1 (the guesses' one) free: its table spans u = log(s eps) and v = logit s
    lo, hi = np.array([0.0, -2.0, -1.0]), np.array([0.0, 2.0, 3.0])
    ulo, uhi = np.array([-1.0, -1.0]), np.array([1.0, 1.5])
    V = np.zeros((2, G, G))
    tb = surrogate.Table(model.s_z, lo, hi, ulo, uhi, V, np.zeros(2))
    assert surrogate.build(model, tb, np.zeros(1, dtype=np.int64)) == surrogate.BUILT
    for i, j in ((0, 0), (5, 17), (31, 31), (20, 3)):
        v = lo[2] + j * (hi[2] - lo[2]) / (G - 1)
        u = ulo[1] + i * (uhi[1] - ulo[1]) / (G - 1)
        s = special.expit(v)
        eps = math.exp(u) / s
        want = _row(200, 150, 1.0, eps, s) + _row(60, 58, 2.0, eps, s)
        assert V[1, i, j] == pytest.approx(want, rel=1e-12)
    assert np.all(V[0, :, :] == 0.0)  # strength 0 has no rows: its table is 0 everywhere


def test_the_strength_move_samples_the_conditional_of_a_games_own_strength():
    """The game's own strength (read by its rows only) is updated alone, cheaply; its draws at
    a fixed eps follow p(s | eps) = Beta(1, 1) x the rows' likelihood (reference closed form)."""
    from scipy import integrate

    from samplers.exact import chain as exact
    from samplers.exact.moves import strength_move

    from tests.reference.guesses import log_lik

    model, corr, names, _ = _model(True)
    assert model.s_cheap.tolist() == [1] and names[-1] == ("s", 1)  # its coordinate last
    assert model.s_z.tolist() == [1, 2]
    z0 = np.array([math.log(1.2), 0.3, 0.0])
    st = exact.new_state(model, corr, z0)
    assert st.fq.dp[0] == 2  # the fitted t proposes eps and the bases' strength only
    st.lp[0] = log_posterior(st.z, model, corr, st.ll_b, st.ll_c)
    rng = np.random.default_rng(4)
    draws = np.empty(3000)
    for i in range(draws.size):
        strength_move(st, model, rng)
        draws[i] = special.expit(st.z[2])
    assert st.z[0] == z0[0] and st.z[1] == z0[1]  # nothing else moved
    fresh = log_posterior(st.z, model, corr, np.empty(1), np.empty(0))
    assert st.lp[0] == pytest.approx(fresh, rel=1e-12, abs=1e-9)

    def dens(s):
        return math.exp(float(log_lik(200, 150, 1.0, 1.2, s) + log_lik(60, 58, 2.0, 1.2, s)))

    edge = 0.95  # above it the band's floor passes the first row's accuracy
    z = integrate.quad(dens, 0.0, 1.0, points=[0.5, 0.9, edge], limit=200)[0]

    def cdf(x):
        return integrate.quad(dens, 0.0, min(x, 1.0), limit=200)[0] / z

    ks = stats.kstest(draws[::3], np.vectorize(cdf))
    print(f"KS {ks.statistic:.4f}, p {ks.pvalue:.3f}")
    assert ks.pvalue > 1e-3
