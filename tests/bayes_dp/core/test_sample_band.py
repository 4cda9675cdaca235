"""bayes_dp.core.simulate.sample_band: exact uniform draws from R_s(eps, delta).

Checked against things computed otherwise: the pieces' areas against the closed form of
``strength_region_area`` (the paper's, below eq. 3), membership with ``in_strength_region``,
and the law of the draws against rejection sampling (``sample_strength_region`` from the unit
square where its area allows, a rejection sampler from a box around the diagonal, written here,
for the thin strip R(t, delta) with t << delta). The two-sample KS tests use p >= 1e-3, each a
false failure with probability 1e-3 when the laws agree.
"""

import numpy as np
import pytest
from scipy import stats

from bayes_dp.core.region import in_region, in_strength_region, strength_region_area
from bayes_dp.core.simulate import _band_pieces, sample_band, sample_strength_region

CASES = [
    (1.0, 0.5, 1e-5),
    (5.0, 0.2, 1e-3),
    (0.3, 0.9, 1e-2),
    (2.0, 0.0, 0.0),
    (30.0, 0.99, 1e-5),  # area 7e-14
    (45.0, 0.5, 0.0),  # area 6e-11
    (1e-12, 0.0, 1e-5),  # the unexposed strip, width ~ delta
    (0.0, 0.0, 1e-5),
]


@pytest.mark.parametrize(("eps", "s", "delta"), CASES)
def test_pieces_add_up_to_the_area(eps, s, delta):
    weights = _band_pieces(eps, s, delta)[-1]
    assert np.all(weights >= 0)
    np.testing.assert_allclose(4 * weights.sum(), strength_region_area(eps, s, delta), rtol=1e-9)


@pytest.mark.parametrize(("eps", "s", "delta"), CASES)
def test_draws_lie_in_the_region(eps, s, delta):
    a, b = sample_band(eps, s, delta, 4000, reflect=False, seed=3)
    assert a.shape == b.shape == (4000,)
    assert np.all(a + b <= 1.0)
    assert np.all(in_strength_region(a, b, eps, s, delta))
    # swapped half the time: the share with alpha < beta is Binomial(4000, 1/2) / 4000, sd 0.008
    assert abs(np.mean(a < b) - 0.5) < 0.04


def test_reflect_puts_half_above_the_diagonal():
    a, b = sample_band(1.0, 0.5, 1e-5, 4000, seed=4)
    assert np.all(in_strength_region(a, b, 1.0, 0.5, 1e-5))
    assert abs(np.mean(a + b > 1) - 0.5) < 0.04  # 5 sd of Binomial(4000, 1/2) / 4000


@pytest.mark.parametrize(("eps", "s", "delta"), [(1.0, 0.5, 1e-5), (3.0, 0.3, 1e-3)])
def test_law_matches_rejection_from_the_square(eps, s, delta):
    a, b = sample_band(eps, s, delta, 20_000, seed=5)
    a2, b2 = sample_strength_region(eps, s, delta, 20_000, seed=6)
    for f in (np.minimum, np.maximum, lambda x, y: x + y):
        assert stats.ks_2samp(f(a, b), f(a2, b2)).pvalue >= 1e-3


def _strip_by_rejection(t, delta, size, rng):
    """Uniform on R(t, delta) within {a + b <= 1}, by rejection from the box w = 1 - a - b in
    [0, delta + (e^t - 1) / 2], v = a - b in [-1, 1] (a linear map, constant Jacobian)."""
    top = delta + np.expm1(t) / 2
    out = []
    while sum(len(x) for x in out) < size:
        w = rng.uniform(0, top, 100_000)
        v = rng.uniform(-1, 1, 100_000)
        a, b = (1 - w + v) / 2, (1 - w - v) / 2
        ok = (a >= 0) & (b >= 0) & in_region(np.clip(a, 0, 1), np.clip(b, 0, 1), t, delta)
        out.append(np.column_stack([a[ok], b[ok]]))
    ab = np.concatenate(out)[:size]
    return ab[:, 0], ab[:, 1]


@pytest.mark.parametrize("t", [1e-12, 1e-5, 0.01])
def test_thin_strip_matches_rejection_from_a_box(t):
    delta = 1e-5
    a, b = sample_band(t, 0.0, delta, 20_000, reflect=False, seed=7)
    a2, b2 = _strip_by_rejection(t, delta, 20_000, np.random.default_rng(8))
    assert stats.ks_2samp(np.minimum(a, b), np.minimum(a2, b2)).pvalue >= 1e-3
    assert stats.ks_2samp(1 - a - b, 1 - a2 - b2).pvalue >= 1e-3


def test_size_zero_and_seeds():
    a, b = sample_band(1.0, 0.5, 1e-5, 0, seed=0)
    assert a.size == b.size == 0
    x = sample_band(1.0, 0.5, 1e-5, 10, seed=np.random.default_rng(1))
    y = sample_band(1.0, 0.5, 1e-5, 10, seed=np.random.default_rng(1))
    np.testing.assert_array_equal(x, y)


def test_bad_input():
    with pytest.raises(ValueError, match="`s`"):
        sample_band(1.0, 1.0, 1e-5, 10)
    with pytest.raises(ValueError, match="`eps`"):
        sample_band(-1.0, 0.5, 1e-5, 10)
    with pytest.raises(ValueError, match="`size`"):
        sample_band(1.0, 0.5, 1e-5, -1)
    with pytest.raises(ValueError, match="diagonal"):
        sample_band(0.0, 0.0, 0.0, 10)
    with pytest.raises(TypeError, match="`reflect`"):
        sample_band(1.0, 0.5, 1e-5, 10, reflect="no")


def _local_eps(a, b, delta):
    """The smallest eps' with (a, b) in R(eps', delta), straight from the four inequalities."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.stack(
            [(1 - delta - b) / a, (1 - delta - a) / b, (a - delta) / (1 - b), (b - delta) / (1 - a)]
        )
    return np.log(np.maximum(np.nanmax(ratios, axis=0), 1.0))


@pytest.mark.parametrize(
    ("eps", "s", "xs"),
    [
        # truths of missed SBC replicates (benchmarks/sbc_score_matrix.py, T = 1,000)
        (25.94, 0.065, [4.1, 6.0, 9.0, 11.0]),  # P(local eps > 11) = 5e-5: 100 expected
        (4.05, 0.034, [0.5, 2.1, 3.7, 3.95]),
        (0.19, 0.016, [0.02, 0.1, 0.17, 0.185]),
    ],
)
def test_law_of_the_local_eps_near_the_outer_curve(eps, s, xs):
    """The draws' tail towards the outer curve, where the evidence on eps lies.

    For s eps <= x <= eps, R(x, delta) contains R(s eps, s delta), so a uniform point of
    R_s(eps, delta) lies outside R(x, delta) with probability (|R(eps, delta)| - |R(x, delta)|)
    / |R_s(eps, delta)| = (1 - delta)^2 (expit(-x) - expit(-eps)) / ((1 - s delta)^2
    expit(-s eps) - (1 - delta)^2 expit(-eps)) (the paper's area formula). Those tails hold
    down to 5e-5 of the band, beyond the reach of the rejection tests above. The count beyond x
    is Binomial(n, p): the check allows 4.5 sd (a false failure with probability 7e-6 each).
    """
    from scipy.special import expit

    delta, n = 1e-5, 2_000_000
    a, b = sample_band(eps, s, delta, n, seed=11)
    local = _local_eps(a, b, delta)
    area = (1 - s * delta) ** 2 * expit(-s * eps) - (1 - delta) ** 2 * expit(-eps)
    for x in xs:
        p = (1 - delta) ** 2 * (expit(-x) - expit(-eps)) / area
        assert n * p >= 100
        count = np.sum(local > x)
        assert abs(count - n * p) <= 4.5 * np.sqrt(n * p * (1 - p)), (x, count, n * p)
