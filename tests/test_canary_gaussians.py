"""Exact epsilon between two Gaussians vs closed forms and mpmath quadrature."""

import math

import numpy as np
import pytest
from scipy import stats

from mia.canary import (
    delta_two_gaussians,
    epsilon_two_gaussians,
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
