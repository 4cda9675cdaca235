"""The exact sampler's per-base binomial likelihood against independent quadrature.

``samplers.model.binomial.log_lik`` (tail tables, band pieces, Gauss-Legendre in numba) is compared
with ``tests.reference.log_marginal_likelihood`` (numpy/scipy only, no shared code) on a
grid that spans what users bring: N from 20 to 1e6, counts 0 and N, perfect, strong, weak and
diagonal attacks, eps from 0.02 to 30, s from 0 to 1 (the boundary limit included) and delta
0, 1e-5, 0.1.  The worst error over the grid is printed and bounded.
"""

import itertools

import mpmath as mp
import numpy as np
import pytest

from samplers.model.binomial import binomial_bases, log_lik
from samplers.model.region import log_area, log_area_rate

from tests.reference import log_marginal_likelihood

# (fp, n_neg, fn, n_pos)
COUNTS = [
    (0, 20, 0, 20),  # perfect attack, tiny N
    (20, 20, 0, 20),  # an error count at N
    (3, 20, 9, 25),  # small N, weak-ish
    (200, 1000, 200, 1000),  # one base at 20% error rates
    (40, 1000, 250, 1000),  # the paper's strong attack, first base
    (480, 1000, 505, 1000),  # near the diagonal
    (0, 1000, 1, 1000),  # near-perfect
    (12_000, 1_000_000, 30_000, 1_000_000),  # huge N
]
EPS = [0.02, 0.5, 2.0, 8.0, 30.0]
S = [0.0, 0.5, 0.95, 0.999, 1.0]
DELTA = [0.0, 1e-5, 0.1]


@pytest.fixture(scope="module")
def errors():
    rows = []
    tabs = {c: binomial_bases([c[0]], [c[1]], [c[2]], [c[3]]) for c in COUNTS}
    for c, e, s, d in itertools.product(COUNTS, EPS, S, DELTA):
        ref = float(log_marginal_likelihood(*c, e, s, d))
        got = float(log_lik(tabs[c], 0, e, s, d))
        rows.append((c, e, s, d, ref, got))
    return rows


def test_grid_matches_quadrature(errors):
    """Tight where the likelihood matters; finite or -inf (never above the truth) far out.

    Beyond log L ~ -100 the reference itself loses digits (it drops incomplete-beta panels
    below its own cut-offs; at (0, 1000, 1, 1000), eps = 2, s = 0.99 a 40,000^2 brute-force
    grid gave -257.2816 where the sampler gives -257.2825 and the reference -257.394), so
    there only a loose agreement is asked.  Below log L ~ -690 (a band so far from the data
    that both Beta densities are below 1e-300 there) the sampler may return -inf: such a
    point has posterior weight below e^-600 relative to any point near the data.
    """
    worst_hi = worst_mid = 0.0
    where = None
    n_inf = 0
    for c, e, s, d, ref, got in errors:
        assert np.isfinite(ref), (c, e, s, d)
        if not np.isfinite(got):
            assert got == -np.inf and ref < -690.0, (c, e, s, d, ref, got)
            n_inf += 1
            continue
        err = abs(got - ref)
        if ref > -100.0:
            if err > worst_hi:
                worst_hi, where = err, (c, e, s, d, ref, got)
        else:
            worst_mid = max(worst_mid, err / abs(ref))
    print(f"\nworst |log L error| where log L > -100: {worst_hi:.2e} at {where}")
    print(f"worst relative error further out: {worst_mid:.2e}; -inf at {n_inf} far points")
    assert worst_hi < 1e-6
    assert worst_mid < 1e-2


def test_boundary_limit_is_continuous():
    """s = 1 (the line integral) is the limit of s -> 1 from below."""
    for c in [(200, 1000, 200, 1000), (0, 50, 0, 50), (40, 1000, 250, 1000)]:
        B = binomial_bases([c[0]], [c[1]], [c[2]], [c[3]])
        for e, d in [(1.4, 1e-5), (5.0, 0.0), (0.3, 0.1)]:
            h = 1e-6
            at1 = log_lik(B, 0, e, 1.0, d)
            # linear extrapolation from two points just below s = 1
            lin = 2.0 * log_lik(B, 0, e, 1.0 - h, d) - log_lik(B, 0, e, 1.0 - 2.0 * h, d)
            assert at1 == pytest.approx(lin, abs=1e-6), (c, e, d)


def _mp_log_area(e, s, d):
    """log |R_s(eps, delta)| in 50-digit arithmetic (the paper's closed form)."""
    mp.mp.dps = 50
    e, s, d = mp.mpf(e), mp.mpf(s), mp.mpf(d)

    def half(t, dd):
        return (1 - dd) ** 2 / (1 + mp.e**t)

    return float(mp.log(2 * (half(s * e, s * d) - half(e, d))))


def test_area_matches_closed_form():
    for e, s, d in itertools.product([1e-3, 0.3, 2.0, 40.0], [0.0, 0.3, 0.99, 1 - 1e-9], DELTA):
        ref = _mp_log_area(e, s, d)
        assert log_area(e, s, d) == pytest.approx(ref, rel=1e-9, abs=1e-12), (e, s, d)
        rate = ref - float(mp.log(1 - mp.mpf(s)))
        assert log_area_rate(e, s, d) == pytest.approx(rate, rel=1e-9, abs=1e-9), (e, s, d)
