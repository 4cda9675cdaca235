import numpy as np
import pytest

import bayes_dp as bdp


def naive_in_region(x, y, eps, delta):
    """The four inequalities of R(eps, delta) exactly as written in the paper (Theorem 1)."""
    e = np.exp(eps)
    return (
        (x + e * y >= 1 - delta)
        & (y + e * x >= 1 - delta)
        & (y + e * x <= e + delta)
        & (x + e * y <= e + delta)
    )


@pytest.mark.parametrize("eps, delta", [(0.3, 0.0), (1.0, 1e-5), (2.5, 0.05), (6.0, 0.2)])
def test_membership_matches_definition(eps, delta):
    rng = np.random.default_rng(0)
    x, y = rng.random((2, 200_000))
    np.testing.assert_array_equal(
        bdp.in_region(x, y, eps, delta), naive_in_region(x, y, eps, delta)
    )
    s = 0.6
    expect = naive_in_region(x, y, eps, delta) & ~naive_in_region(x, y, s * eps, s * delta)
    np.testing.assert_array_equal(bdp.in_strength_region(x, y, eps, s, delta), expect)


@pytest.mark.parametrize(
    "eps, s, delta", [(1.0, 0.0, 0.0), (2.0, 0.5, 1e-5), (4.0, 0.9, 0.1), (0.2, 0.3, 0.01)]
)
def test_area_closed_form_vs_monte_carlo(eps, s, delta):
    rng = np.random.default_rng(1)
    n = 2_000_000
    x, y = rng.random((2, n))
    inside = naive_in_region(x, y, eps, delta) & ~naive_in_region(x, y, s * eps, s * delta)
    p = inside.mean()
    sd = np.sqrt(p * (1 - p) / n)
    assert abs(bdp.strength_region_area(eps, s, delta) - p) < 5 * sd + 1e-12
    if s == 0.0:
        assert abs(bdp.region_area(eps, delta) - p) < 5 * sd + 1e-12


def test_classical_epsilon():
    fpr = np.array([0.1, 0.04, 0.0, 0.5, 0.0])
    fnr = np.array([0.1, 0.25, 0.2, 0.5, 1.0])
    e = bdp.classical_epsilon(fpr, fnr, 0.0)
    np.testing.assert_allclose(e[:2], [np.log(9), max(np.log(0.96 / 0.25), np.log(0.75 / 0.04))])
    assert e[2] == np.inf
    assert e[3] == 0.0  # clipped at 0
    assert e[4] == 0.0  # 1 - delta - fnr = 0: no evidence, not inf
    np.testing.assert_allclose(bdp.classical_epsilon(0.1, 0.2, 0.05), np.log(0.75 / 0.1))


def test_region_bad_input():
    with pytest.raises(ValueError, match="delta"):
        bdp.region_area(1.0, 1.0)
    with pytest.raises(ValueError, match="eps"):
        bdp.in_region(0.1, 0.1, -1.0, 0.0)
    with pytest.raises(ValueError, match="s"):
        bdp.strength_region_area(1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="fpr"):
        bdp.classical_epsilon(1.5, 0.1, 0.0)


def test_classical_epsilon_reflects_rates_above_the_diagonal():
    # an attack worse than guessing: its flipped decisions have errors (1 - FPR, 1 - FNR)
    fpr = np.array([0.585, 0.9, 0.3])
    fnr = np.array([0.741, 0.8, 0.2])
    e = bdp.classical_epsilon(fpr, fnr, 1e-5)
    np.testing.assert_allclose(e, bdp.classical_epsilon(1 - fpr, 1 - fnr, 1e-5))
    assert e[0] == pytest.approx(np.log((1 - 1e-5 - 0.415) / 0.259), rel=1e-9)
