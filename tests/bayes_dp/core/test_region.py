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


def _brute_force_classical(a, b, delta, reflect=True):
    """Smallest eps >= 0 with (a, b) inside R(eps, delta), by bisection on the definition.

    ``reflect=False`` keeps only the two lower inequalities. ``inf`` when no eps up to 700
    (e^700 ~ 1e304) admits the pair. The upper inequalities ``y + e x <= e + delta`` are written
    as ``e (1 - x) >= y - delta``, so that ``e + delta`` does not absorb ``y`` at large eps.
    """

    def inside(eps):
        e = np.exp(eps)
        ok = (a + e * b >= 1 - delta) & (b + e * a >= 1 - delta)
        if reflect:
            ok &= (e * (1 - a) >= b - delta) & (e * (1 - b) >= a - delta)
        return bool(ok)

    if inside(0.0):
        return 0.0
    if not inside(700.0):
        return np.inf
    lo, hi = 0.0, 700.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if inside(mid) else (mid, hi)
    return hi


RATE_GRID = [0.0, 1e-3, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0]


@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.05])
@pytest.mark.parametrize("reflect", [True, False])
def test_classical_epsilon_is_the_smallest_eps_of_the_region_on_a_grid(delta, reflect):
    # eps_hat = inf{eps >= 0 : (FPR, FNR) in R(eps, delta)}: zero denominators included
    a, b = np.meshgrid(RATE_GRID, RATE_GRID, indexing="ij")
    got = bdp.classical_epsilon(a.ravel(), b.ravel(), delta, reflect=reflect)
    pairs = zip(a.ravel(), b.ravel(), strict=True)
    want = np.array([_brute_force_classical(x, y, delta, reflect) for x, y in pairs])
    assert np.array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-9, atol=1e-9)
    assert np.isinf(got).any() and (got[fin] > 0).any() and (got == 0).any()


@pytest.mark.parametrize(
    ("fpr", "fnr", "delta", "reflect", "want"),
    [
        (0.0, 0.75, 0.01, True, np.inf),  # FPR >= 0.99 is needed for any finite eps
        (0.75, 0.0, 0.01, True, np.inf),
        (0.0, 0.0, 0.01, True, np.inf),  # a perfect attack
        (0.0, 0.999, 0.01, True, 0.0),  # numerator 1 - delta - FNR < 0: vacuous, not inf
        (1.0 - 0.01, 0.0, 0.01, True, 0.0),  # numerator exactly 0 over denominator 0: vacuous
        (1.0, 1.0, 0.0, True, np.inf),  # flipped, a perfect attack
        (1.0, 1.0, 0.0, False, 0.0),  # not flipped: no evidence
        (1.0, 0.0, 0.0, True, 0.0),
    ],
)
def test_classical_epsilon_zero_denominators(fpr, fnr, delta, reflect, want):
    assert bdp.classical_epsilon(fpr, fnr, delta, reflect=reflect) == want


def test_classical_epsilon_reflect_false_is_the_one_sided_formula():
    fpr = np.array([0.02, 0.3, 0.9, 0.6])
    fnr = np.array([0.02, 0.1, 0.9, 0.7])
    d = 0.01
    want = np.maximum(np.maximum(np.log((1 - d - fpr) / fnr), np.log((1 - d - fnr) / fpr)), 0)
    np.testing.assert_allclose(bdp.classical_epsilon(fpr, fnr, d, reflect=False), want)
    below = fpr + fnr <= 1  # below the diagonal the flipped test adds nothing
    np.testing.assert_allclose(bdp.classical_epsilon(fpr, fnr, d)[below], want[below])
    with pytest.raises(TypeError, match="reflect"):
        bdp.classical_epsilon(0.1, 0.1, d, reflect="no")


@pytest.mark.parametrize("n", [1, 7, 50, 1000])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.999])
def test_clopper_pearson_interval_matches_scipy_binomtest(n, confidence):
    from scipy import stats

    ks = sorted({0, 1, n // 3, n // 2, n - 1, n})
    lo, hi = bdp.clopper_pearson_interval(ks, n, confidence)
    for i, k in enumerate(ks):
        ref = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
        # scipy finds the ends by root finding (about 1e-10 relative); these are Beta quantiles
        assert lo[i] == pytest.approx(ref.low, rel=1e-8, abs=1e-14)
        assert hi[i] == pytest.approx(ref.high, rel=1e-8, abs=1e-14)
    assert lo[0] == 0.0 and hi[-1] == 1.0  # k = 0 and k = n
    one = bdp.clopper_pearson_interval(ks[-2], n, confidence)
    assert isinstance(one[0], float) and one == (lo[-2], hi[-2])


def test_clopper_pearson_interval_broadcasts_and_checks_input():
    lo, hi = bdp.clopper_pearson_interval(3, [10, 20, 30])
    assert lo.shape == hi.shape == (3,) and np.all(np.diff(hi) < 0)
    with pytest.raises(ValueError, match="`k` must be <= `n`"):
        bdp.clopper_pearson_interval([3, 12], 10)
    with pytest.raises(ValueError, match="`n`"):
        bdp.clopper_pearson_interval(0, 0)
    with pytest.raises(ValueError, match="`k`"):
        bdp.clopper_pearson_interval(-1, 10)
    with pytest.raises(ValueError, match="`k`"):
        bdp.clopper_pearson_interval(1.5, 10)
    with pytest.raises(ValueError, match="confidence"):
        bdp.clopper_pearson_interval(1, 10, 1.0)
    with pytest.raises(ValueError, match="broadcast"):
        bdp.clopper_pearson_interval([1, 2], [3, 4, 5])


def test_largest_classical_epsilon_is_the_most_distinguishable_base():
    """The largest per-base classical eps (brute force over the bases), inf with a perfect base."""
    c = bdp.AttackCounts(fp=[4, 5, 30], n_neg=100, fn=[25, 20, 40], n_pos=100)
    rates = zip(c.fpr, c.fnr, strict=True)
    each = [float(bdp.classical_epsilon(a, b, 1e-5)) for a, b in rates]
    assert bdp.largest_classical_epsilon(c, 1e-5) == max(each)
    perfect = bdp.AttackCounts(fp=[0, 5], n_neg=100, fn=[0, 20], n_pos=100)
    assert bdp.largest_classical_epsilon(perfect, 1e-5) == np.inf


def test_largest_classical_epsilon_rejects_bad_input():
    c = bdp.AttackCounts(fp=[4], n_neg=100, fn=[25], n_pos=100)
    with pytest.raises(TypeError, match="counts.*list"):
        bdp.largest_classical_epsilon([0.04, 0.25], 1e-5)
    with pytest.raises(ValueError, match="delta.*1.5"):
        bdp.largest_classical_epsilon(c, 1.5)
