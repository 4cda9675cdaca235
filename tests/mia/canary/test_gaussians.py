"""Exact epsilon between two Gaussians vs closed forms and mpmath quadrature."""

import math

import numpy as np
import pytest
from scipy import stats

from mia.canary import (
    delta_two_gaussians,
    epsilon_two_gaussians,
    gaussian_mechanism_delta,
    gaussian_mechanism_epsilon,
    gaussian_mechanism_sigma,
)

mpmath = pytest.importorskip("mpmath", reason="mpmath gives the high-precision reference")
mp = mpmath.mp


def _bw_delta_mp(eps, sigma):
    """Balle and Wang (2018) closed form for sensitivity 1, in mpmath."""
    eps, s = mp.mpf(eps), mp.mpf(sigma)
    return mp.ncdf(1 / (2 * s) - eps * s) - mp.exp(eps) * mp.ncdf(-1 / (2 * s) - eps * s)


def _hockey_stick_mp(eps, m1, s1, m2, s2):
    """H_{e^eps}(P1 || P2) = integral of max(0, p1 - e^eps p2) by mpmath quadrature."""
    m1, s1, m2, s2, eps = (mp.mpf(x) for x in (m1, s1, m2, s2, eps))

    def logp(x, m, s):
        return -((x - m) ** 2) / (2 * s**2) - mp.log(s) - mp.log(2 * mp.pi) / 2

    def f(x):
        return mp.exp(logp(x, m1, s1)) - mp.exp(eps + logp(x, m2, s2))

    # kinks of max(0, f): roots of log p1 - log p2 - eps, a polynomial of degree <= 2
    a = 1 / (2 * s2**2) - 1 / (2 * s1**2)
    b = m1 / s1**2 - m2 / s2**2
    c = m2**2 / (2 * s2**2) - m1**2 / (2 * s1**2) + mp.log(s2 / s1) - eps
    if a != 0:
        disc = b * b - 4 * a * c  # plain formula: 30 digits absorb the cancellation
        roots = [(-b - mp.sqrt(disc)) / (2 * a), (-b + mp.sqrt(disc)) / (2 * a)] if disc > 0 else []
    else:
        roots = [-c / b]
    edges = [-mp.inf] + sorted(roots) + [mp.inf]
    extra = [m + s * j for m, s in ((m1, s1), (m2, s2)) for j in (-8, -4, -2, 0, 2, 4, 8)]
    total = mp.mpf(0)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        mid = (
            (lo + hi) / 2
            if mp.isfinite(lo) and mp.isfinite(hi)
            else ((hi - 1) if mp.isfinite(hi) else (lo + 1) if mp.isfinite(lo) else m1)
        )
        if f(mid) <= 0:
            continue
        nodes = [lo] + sorted(x for x in extra if lo < x < hi) + [hi]
        total += mp.quad(f, nodes)
    return total


def _epsilon_mp(m1, s1, m2, s2, delta, guess):
    """Root of max(H(P1||P2), H(P2||P1)) = delta by the secant method in mpmath."""

    def h(e):
        v = max(_hockey_stick_mp(e, m1, s1, m2, s2), _hockey_stick_mp(e, m2, s2, m1, s1))
        return mp.log(v) - mp.log(delta)

    return float(mp.findroot(h, (0.98 * guess, 1.02 * guess), solver="secant", tol=1e-20))


@pytest.mark.parametrize("sigma", [0.2, 0.541, 1.0, 1.54, 4.22, 20.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_equal_variances_is_balle_wang(sigma, delta):
    eps = gaussian_mechanism_epsilon(sigma, delta)
    with mp.workdps(40):
        assert float(_bw_delta_mp(eps, sigma)) == pytest.approx(delta, rel=1e-8)
    # and through the general two-Gaussian routine, scaled and shifted
    assert epsilon_two_gaussians(3.0, 2 * sigma, 5.0, 2 * sigma, delta) == pytest.approx(
        eps, rel=1e-10
    )


@pytest.mark.parametrize("sigma", [0.2, 1.0, 4.22, 20.0])
@pytest.mark.parametrize("eps", [0.0, 0.5, 3.0, 30.0])
def test_gaussian_mechanism_delta_is_balle_wang(sigma, eps):
    with mp.workdps(40):
        want = float(_bw_delta_mp(eps, sigma))
    got = gaussian_mechanism_delta(sigma, eps)
    if want < 1e-300:  # below the float range
        assert got < 1e-290
    else:
        assert got == pytest.approx(want, rel=1e-10)
    # sensitivity scales sigma
    assert gaussian_mechanism_delta(3 * sigma, eps, sensitivity=3.0) == pytest.approx(
        got, rel=1e-12
    )


@pytest.mark.parametrize(("sigma", "delta"), [(0.5, 1e-5), (1.54, 1e-6), (4.22, 1e-10)])
def test_gaussian_mechanism_delta_vs_dp_accounting_and_round_trip(sigma, delta):
    plm = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    eps = gaussian_mechanism_epsilon(sigma, delta)
    assert gaussian_mechanism_delta(sigma, eps) == pytest.approx(delta, rel=1e-9)
    loss = plm.GaussianPrivacyLoss(sigma, sensitivity=1.0)
    for e in (0.0, 0.5 * eps, eps, 2.0 * eps):
        ref = loss.get_delta_for_epsilon(e)
        assert gaussian_mechanism_delta(sigma, e) == pytest.approx(ref, rel=1e-6, abs=1e-300)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_mechanism_delta(0.0, 1.0)
    with pytest.raises(ValueError, match="eps"):
        gaussian_mechanism_delta(1.0, -1.0)


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ((0.5, 1.0), 2.2541),
        ((2.0, 1.0), 10.9972),
        ((0.0, 1.05), 0.9402),
        ((2.0, 1.3), 21.1641),
        ((0.5, 2.0), 37.3024),
        ((2.0, 0.7), 34.0860),
    ],
)
def test_notes_vectors(q, expected):
    assert epsilon_two_gaussians(0.0, 1.0, *q, 1e-6) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    ("pair", "delta"),
    [
        ((0.0, 1.0, 0.0, 1.05), 1e-6),
        ((0.0, 1.0, 2.0, 1.3), 1e-6),
        ((0.0, 1.0, 0.5, 2.0), 1e-6),
        ((0.0, 1.0, 1.0, 0.8), 1e-10),
        ((1.0, 0.3, -2.0, 0.5), 1e-10),
    ],
)
def test_unequal_variances_vs_mpmath_quadrature(pair, delta):
    eps = epsilon_two_gaussians(*pair, delta)
    with mp.workdps(30):
        ref = _epsilon_mp(*pair, delta, guess=eps)
    assert eps == pytest.approx(ref, rel=1e-4)


def test_large_epsilon_and_tiny_delta_stay_finite():
    eps = epsilon_two_gaussians(0.0, 1.0, 0.5, 2.0, 1e-10)
    assert 37.3 < eps < 100
    assert delta_two_gaussians(0.0, 1.0, 0.5, 2.0, eps) == pytest.approx(1e-10, rel=1e-8)
    assert epsilon_two_gaussians(0.0, 1.0, 6.0, 1.0, 1e-10) > 30


def test_symmetry_and_invariance():
    a = epsilon_two_gaussians(0.0, 1.0, 2.0, 1.3, 1e-6)
    assert epsilon_two_gaussians(2.0, 1.3, 0.0, 1.0, 1e-6) == pytest.approx(a, rel=1e-12)
    assert epsilon_two_gaussians(0.0, 1.0, -2.0, 1.3, 1e-6) == pytest.approx(a, rel=1e-12)
    assert epsilon_two_gaussians(1e-3, 1e-3, 3e-3, 1.3e-3, 1e-6) == pytest.approx(a, rel=1e-9)


def test_identical_laws_and_large_delta_give_zero():
    assert epsilon_two_gaussians(1.0, 2.0, 1.0, 2.0, 1e-6) == 0.0
    assert epsilon_two_gaussians(0.0, 1.0, 0.01, 1.0, 0.5) == 0.0


def test_delta_at_zero_is_total_variation():
    tv = 2 * stats.norm.cdf(0.5) - 1
    assert delta_two_gaussians(0.0, 1.0, 1.0, 1.0, 0.0) == pytest.approx(tv, rel=1e-12)


def test_delta_is_monotone_in_eps():
    eps = np.linspace(0, 30, 61)
    d = [delta_two_gaussians(0.0, 1.0, 1.0, 1.7, e) for e in eps]
    assert np.all(np.diff(d) <= 1e-300)


def test_calibration_round_trip():
    for eps in (0.5, 1.0, 3.0, 10.0):
        s = gaussian_mechanism_sigma(eps, 1e-6)
        assert gaussian_mechanism_epsilon(s, 1e-6) == pytest.approx(eps, rel=1e-9)
    assert gaussian_mechanism_sigma(1.0, 1e-6) == pytest.approx(4.22, abs=0.005)
    s = gaussian_mechanism_sigma(1e-4, 1e-10)  # very large noise stays inside the bracket
    assert s > 3e4 and gaussian_mechanism_epsilon(s, 1e-10) == pytest.approx(1e-4, rel=1e-6)
    assert math.isclose(
        gaussian_mechanism_sigma(1.0, 1e-6, sensitivity=2.0),
        2 * gaussian_mechanism_sigma(1.0, 1e-6),
    )


@pytest.mark.parametrize(
    ("kwargs", "exc", "word"),
    [
        ({"sd1": 0.0}, ValueError, "sd1"),
        ({"sd2": -1.0}, ValueError, "sd2"),
        ({"mu1": float("nan")}, ValueError, "mu1"),
        ({"delta": 0.0}, ValueError, "delta"),
        ({"delta": 1.0}, ValueError, "delta"),
        ({"mu2": "1"}, TypeError, "mu2"),
    ],
)
def test_bad_input(kwargs, exc, word):
    args = {"mu1": 0.0, "sd1": 1.0, "mu2": 1.0, "sd2": 1.0, "delta": 1e-6} | kwargs
    with pytest.raises(exc, match=word):
        epsilon_two_gaussians(**args)


def test_huge_epsilon_matches_dp_accounting_pld():
    """sigma = 7e-4, delta = 1e-5: dp_accounting's PLD accountant gives 1,026,500 (an upper
    bound, pessimistic by at most one discretisation interval); this used to be inf."""
    dpa = pytest.importorskip("dp_accounting")
    eps = gaussian_mechanism_epsilon(7e-4, 1e-5)
    acc = dpa.pld.PLDAccountant(value_discretization_interval=100.0)
    acc.compose(dpa.GaussianDpEvent(7e-4))
    pld_eps = acc.get_epsilon(1e-5)
    assert pld_eps == pytest.approx(1_026_500, abs=1.0)
    assert pld_eps - 100.0 <= eps <= pld_eps
    assert eps == pytest.approx(1_026_499.8658893913, rel=1e-12)


@pytest.mark.parametrize("sigma", [1e-2, 1e-3, 7e-4, 1e-4, 1e-5])
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_huge_epsilon_is_the_root_of_dp_accountings_delta(sigma, delta):
    """dp_accounting's analytic delta(eps) of the Gaussian mechanism crosses delta at our eps."""
    plm = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    loss = plm.GaussianPrivacyLoss(sigma, sensitivity=1.0)
    eps = gaussian_mechanism_epsilon(sigma, delta)
    assert math.isfinite(eps) and eps > 1e3
    assert loss.get_delta_for_epsilon(eps) == pytest.approx(delta, rel=1e-6)
    assert (
        loss.get_delta_for_epsilon(eps * (1 - 1e-8))
        > delta
        > loss.get_delta_for_epsilon(eps * (1 + 1e-8))
    )


def _log_delta_mp(eps, m1, s1, m2, s2):
    """log max(H(P1||P2), H(P2||P1)) from Gaussian probabilities of the privacy-loss event."""

    def one(eps, m1, s1, m2, s2):
        a = 1 / (2 * s2**2) - 1 / (2 * s1**2)
        b = m1 / s1**2 - m2 / s2**2
        c = m2**2 / (2 * s2**2) - m1**2 / (2 * s1**2) + mp.log(s2 / s1) - eps

        def prob(m, s):
            if a == 0:
                t = -c / b
                return mp.ncdf((m - t) / s) if b > 0 else mp.ncdf((t - m) / s)
            disc = b * b - 4 * a * c
            if disc <= 0:
                return mp.mpf(1) if a > 0 else mp.mpf(0)
            r1, r2 = sorted([(-b - mp.sqrt(disc)) / (2 * a), (-b + mp.sqrt(disc)) / (2 * a)])
            lo, hi = mp.ncdf((r1 - m) / s), mp.ncdf((m - r2) / s)
            return lo + hi if a > 0 else 1 - lo - hi

        d = prob(m1, s1) - mp.exp(eps) * prob(m2, s2)
        return mp.log(d) if d > 0 else mp.mpf("-inf")

    args = [mp.mpf(x) for x in (eps, m1, s1, m2, s2)]
    return max(one(*args), one(args[0], *args[3:], *args[1:3]))


@pytest.mark.parametrize(
    ("pair", "rel"),
    [
        ((0.0, 1e-6, 1.0, 1e-6), 1e-13),  # Gaussian mechanism, eps ~ 5e11
        ((0.0, 1e-10, 1.0, 1e-10), 1e-13),  # eps ~ 5e19
        ((0.0, 1e-20, 1.0, 1e-20), 1e-13),  # eps ~ 5e39
        ((0.0, 1.0, 1e3, 1.3), 1e-13),  # unequal sds, eps ~ 5e5
        ((0.0, 1.0, 1e6, 1.01), 1e-13),  # eps ~ 5e11
        ((0.0, 1.0, 1e8, 1.3), 1e-12),  # eps ~ 5e15
    ],
)
def test_huge_epsilon_vs_mpmath(pair, rel):
    """The true root lies within ``rel`` of the returned eps (mpmath, 80 digits)."""
    delta = 1e-5
    eps = epsilon_two_gaussians(*pair, delta)
    with mp.workdps(80):
        target = mp.log(mp.mpf(delta))
        below = _log_delta_mp(mp.mpf(eps) * (1 - rel), *pair) - target
        above = _log_delta_mp(mp.mpf(eps) * (1 + rel), *pair) - target
    assert below > 0 > above, (eps, below, above)


def test_epsilon_beyond_the_largest_float_is_inf():
    assert gaussian_mechanism_epsilon(1.3e-154, 1e-5) == pytest.approx(1 / (2 * 1.3e-154**2))
    assert gaussian_mechanism_epsilon(1e-160, 1e-5) == math.inf  # eps ~ 5e319
    assert delta_two_gaussians(0.0, 1.0, 1e-7, 1.0, 1e300) == 0.0


def test_huge_epsilon_calibration_round_trip():
    for eps in (1e6, 1e9):
        s = gaussian_mechanism_sigma(eps, 1e-5)
        assert gaussian_mechanism_epsilon(s, 1e-5) == pytest.approx(eps, rel=1e-9)


def test_ordinary_epsilon_values_unchanged():
    """Values of the previous implementation (bracket capped at 1e6), to 1e-13."""
    assert gaussian_mechanism_epsilon(4.22, 1e-6) == pytest.approx(1.0011951320408443, rel=1e-13)
    assert gaussian_mechanism_epsilon(0.541, 1e-10) == pytest.approx(13.03466930034047, rel=1e-13)
    assert gaussian_mechanism_epsilon(0.01, 1e-5) == pytest.approx(5425.509846147428, rel=1e-13)
