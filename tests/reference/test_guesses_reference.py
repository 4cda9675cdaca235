"""Self-checks of the one-run reference (tests/reference/guesses.py).

Its closed form against its quadrature of ``scipy.stats.binom``; both as probabilities of v;
its posterior against a one-dimensional quadrature where the strength is fixed, and against
itself on a grid twice as fine.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from tests.reference import guesses as ref

BANDS = [(0.0, 0.5), (1e-9, 0.3), (0.5, 0.0), (1.0, 0.9), (2.0, 0.999999), (3.0, 1.0), (6.0, 0.2)]
COUNTS = [(0, 0), (1, 1), (7, 3), (120, 108), (2000, 1900), (50_000, 45_000)]


@pytest.mark.parametrize("c", [1.0, 2.0])
def test_closed_form_matches_quadrature_of_the_binomial(c):
    for (r, v), (eps, s) in itertools.product(COUNTS, BANDS):
        q = ref.log_lik_quad(r, v, c, eps, s)
        f = float(ref.log_lik(r, v, c, eps, s))
        if q < -600.0:  # the closed form may underflow there (no posterior mass)
            continue
        assert f == pytest.approx(q, rel=1e-6, abs=1e-6), (r, v, c, eps, s)


def test_both_are_probabilities_of_v():
    for r, (eps, s) in itertools.product((3, 25), BANDS):
        for f in (ref.log_lik_quad, lambda *a: float(ref.log_lik(*a))):
            total = sum(math.exp(f(r, v, 2.0, eps, s)) for v in range(r + 1))
            assert total == pytest.approx(1.0, abs=1e-9), (r, eps, s)


def test_posterior_at_a_fixed_strength_is_a_one_dimensional_integral():
    # s fixed at 0.5, one row: p(eps) (1 / w) int binom.pmf over the band, by quad in eps
    rows = [(150, 120, 2.0)]
    post = ref.posterior(rows, ("halfnormal", 3.0), ("fixed", 0.5))

    def dens(e):
        return math.exp(
            stats.halfnorm.logpdf(e, scale=3.0) + ref.log_lik_quad(150, 120, 2.0, e, 0.5)
        )

    z = integrate.quad(dens, 0.0, 15.0, points=[0.7, 1.0, 1.5], limit=200)[0]
    for x in (0.6, 0.8, 1.0, 1.4, 2.5):
        want = integrate.quad(dens, 0.0, x, points=[p for p in (0.7, 1.0, 1.5) if p < x])[0] / z
        assert float(post.eps_cdf(x)) == pytest.approx(want, abs=2e-6), x


@pytest.mark.slow
def test_posterior_is_converged_on_its_grid():
    rows = [(300, 240, 1.0), (100, 70, 2.0)]
    coarse = ref.posterior(rows, ("halfnormal", 4.0), eps_window=(0.01, 30.0))
    fine = ref.posterior(rows, ("halfnormal", 4.0), eps_window=(0.01, 30.0), n_eps=401, n_s=201)
    x = np.array([1.0, 1.3372, 2.245, 4.0, 6.2176])
    np.testing.assert_allclose(coarse.eps_cdf(x), fine.eps_cdf(x), atol=2e-5)
    s = np.array([0.05, 0.2, 0.233, 0.5])
    np.testing.assert_allclose(coarse.s_cdf("s", s), fine.s_cdf("s", s), atol=2e-5)
    assert coarse.info["cut"] < 1e-8


def test_a_pair_row_is_a_bit_row_at_twice_eps():
    for eps, s in ((0.4, 0.2), (1.3, 0.9)):
        assert float(ref.log_lik(80, 60, 2.0, eps, s)) == pytest.approx(
            float(ref.log_lik(80, 60, 1.0, 2 * eps, s)), rel=1e-12
        )
        # and the band is between the s-strong and the best guesser's accuracy
        lo, hi = special.expit(2 * s * eps), special.expit(2 * eps)
        want = integrate.quad(lambda p: stats.binom.pmf(60, 80, p), lo, hi)[0] / (hi - lo)
        assert ref.log_lik_quad(80, 60, 2.0, eps, s) == pytest.approx(math.log(want), rel=1e-9)
