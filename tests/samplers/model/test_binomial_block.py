"""The shared-quadrature likelihood of many bases (samplers.model.binomial_block).

Checked against the independent quadrature of ``tests/reference/`` (SciPy's incomplete
beta functions on its own panels) and against the per-base routine of samplers.model.binomial,
over a grid of sizes, counts (extremes included) and parameters.
"""

import numpy as np
import pytest

from samplers.model import binomial_block as bb
from samplers.model.binomial import TAIL_PASS_BELOW, binomial_bases, log_lik
from samplers.model.region import log_area_rate

from tests.reference import log_marginal_likelihood

#: the per-base routine's own error (measured against tests.reference: up to ~2e-5 in log L)
PER_BASE_TOL = 1e-4
#: the block's error against tests.reference (measured worst 2.6e-6 over eps 0.01-12,
#: s 0.01-0.99999, delta 0-0.1, N 3-1000)
REF_TOL = 2e-5


def _K0(n):
    """Strength variable 0 for each of n bases."""
    return np.zeros(n, dtype=np.int64)


def _forced_block(x, n0, y, n1):
    """Bases of equal sizes, all in one block whatever the cost rule says."""
    B = binomial_bases(x, np.full(x.size, n0), y, np.full(y.size, n1))
    Q = bb.make_blocks(B, np.zeros(x.size, dtype=np.int64), always=True)
    assert Q.k.size == 1 and Q.rest.size == 0
    return B, Q


def _counts(n0, n1, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, n0 + 1, k)
    y = rng.integers(0, n1 + 1, k)
    x[:4] = [0, n0, 0, n0]
    y[:4] = [0, n1, n1, 0]
    rows = np.unique(np.stack([x, y], 1), axis=0)
    return rows[:, 0], rows[:, 1]


@pytest.mark.parametrize("n0, n1", [(100, 100), (20, 20), (50, 300), (3, 7)])
def test_block_matches_per_base_routine(n0, n1):
    x, y = _counts(n0, n1, 60, seed=n0 + n1)
    B, Q = _forced_block(x, n0, y, n1)
    worst = 0.0
    for eps in (0.05, 0.5, 2.0, 6.0):
        for s in (0.1, 0.5, 0.9, 0.99, 0.9999, 1.0):
            for delta in (0.0, 1e-5, 0.1):
                got = np.full(x.size, np.nan)
                ok = bb.fill_log_lik(B, Q, _K0(x.size), eps, np.array([s]), delta, -1, got, False)
                ref = np.array([log_lik(B, i, eps, s, delta) for i in range(x.size)])
                if not ok:
                    assert not np.isfinite(ref).all()
                    continue
                assert np.array_equal(np.isfinite(got), np.isfinite(ref))
                fin = np.isfinite(ref)
                worst = max(worst, float(np.max(np.abs(got[fin] - ref[fin]))))
    print(f"N = ({n0}, {n1}): worst |block - per-base| = {worst:.1e}")
    assert worst < PER_BASE_TOL


@pytest.mark.parametrize(
    "x, y, n, eps, s, delta",
    [
        (14, 90, 100, 0.05, 0.1, 0.0),
        (75, 928, 1000, 0.05, 0.5, 0.0),
        (884, 35, 1000, 0.5, 0.99, 0.1),
        (20, 25, 100, 2.0, 0.999, 1e-5),  # thin band
        (0, 0, 50, 8.0, 0.5, 0.0),  # perfect attack
        (50, 50, 100, 6.0, 0.5, 0.0),  # band far in the tails: per-base wide pass
    ],
)
def test_block_matches_independent_quadrature(x, y, n, eps, s, delta):
    xs = np.r_[x, np.arange(0, n + 1, max(1, n // 30))]
    ys = np.r_[y, np.arange(0, n + 1, max(1, n // 30))[::-1]]
    B, Q = _forced_block(xs, n, ys, n)
    got = np.full(xs.size, np.nan)
    assert bb.fill_log_lik(B, Q, _K0(xs.size), eps, np.array([s]), delta, -1, got, False)
    ref = log_marginal_likelihood(x, n, y, n, eps, s, delta)
    assert got[0] == pytest.approx(ref, abs=REF_TOL)


def test_blocks_only_where_they_pay_and_k_only():
    # 40 bases of N = 100 in strength variable 0 pay; 3 bases of N = 100 in variable 1 do not
    x, y = _counts(100, 100, 43, seed=3)
    n = x.size
    B = binomial_bases(x, np.full(n, 100), y, np.full(n, 100))
    base_k = np.zeros(n, dtype=np.int64)
    base_k[-3:] = 1
    Q = bb.make_blocks(B, base_k)
    assert Q.k.tolist() == [0] and Q.size.tolist() == [n - 3]
    assert sorted(Q.rest.tolist()) == list(range(n - 3, n))
    # a block of 3 large bases does not pay
    B3 = binomial_bases(x[:3], np.full(3, 1000), y[:3], np.full(3, 1000))
    assert bb.make_blocks(B3, np.zeros(3, dtype=np.int64)) is None
    s = np.array([0.5, 0.9])
    ll = np.full(n, 123.0)
    assert bb.fill_log_lik(B, Q, base_k, 2.0, s, 1e-5, 1, ll, False)
    assert np.all(ll[: n - 3] == 123.0)  # only variable 1 was filled
    ref = [log_lik(B, i, 2.0, 0.9, 1e-5) for i in range(n - 3, n)]
    np.testing.assert_allclose(ll[n - 3 :], ref, rtol=0, atol=1e-12)
    assert bb.fill_log_lik(B, Q, base_k, 2.0, s, 1e-5, -1, ll, False)
    ref0 = [log_lik(B, i, 2.0, 0.5, 1e-5) for i in range(n - 3)]
    np.testing.assert_allclose(ll[: n - 3], ref0, rtol=0, atol=PER_BASE_TOL)


@pytest.mark.parametrize("blocked", [True, False])
def test_tail_bounds_bracket_the_likelihood_and_only_in_the_tails(blocked):
    # bound_tails (likelihood tables): where a base's band lies in its tails the value is an
    # upper bound no more than TAIL_DROPPED above the fast windows' mass; elsewhere exact
    from samplers.model.binomial import TAIL_DROPPED

    if blocked:
        x, y = _counts(100, 100, 40, seed=7)
        B, Q = _forced_block(x, 100, y, 100)
    else:
        x, y = _counts(1000, 1000, 6, seed=7)
        B = binomial_bases(x, np.full(x.size, 1000), y, np.full(x.size, 1000))
        Q = bb.make_blocks(B, np.zeros(x.size, dtype=np.int64))
        assert Q is None  # every base on its own
    n_bounded = 0
    for eps in (0.01, 0.3, 2.0, 8.0):
        for s in (0.1, 0.5, 0.99, 0.999999, 1.0):
            for delta in (0.0, 1e-5):
                exact = np.full(x.size, np.nan)
                got = np.full(x.size, np.nan)
                st_e = bb.fill_log_lik(
                    B, Q, _K0(x.size), eps, np.array([s]), delta, -1, exact, False
                )
                st_b = bb.fill_log_lik(B, Q, _K0(x.size), eps, np.array([s]), delta, -1, got, True)
                assert st_e in (0, 1) and st_b in (0, 1, 2)
                if st_b == 0:  # a likelihood zero is exact (s = 1 is never bounded)
                    assert st_e == 0 and s == 1.0
                    continue
                ref = np.array([log_lik(B, i, eps, s, delta) for i in range(x.size)])
                if st_e:
                    np.testing.assert_allclose(exact, ref, rtol=0, atol=PER_BASE_TOL)
                same = np.abs(got - ref) < PER_BASE_TOL
                if st_b == 1:
                    assert same.all()
                    continue
                assert s < 1.0
                # a bounded value: above the exact one, and the mass it bounds is below
                # TAIL_PASS_BELOW + TAIL_DROPPED
                la = np.log(1.0 - s) + log_area_rate(eps, s, delta)
                lm_bound = got - B.lconst + la
                diff = ~same
                assert diff.any()
                n_bounded += int(diff.sum())
                assert np.all(got[diff] >= ref[diff] - PER_BASE_TOL)
                assert np.all(lm_bound[diff] <= np.log(TAIL_PASS_BELOW + TAIL_DROPPED) + 1e-9)
    assert n_bounded > 0


# -- bases of nearby sizes in one block (independent halves of a LiRA run) ----------------------


def _mixed_bases(sizes0, sizes1, per_size, seed):
    """Distinct bases with sizes drawn from sizes0 x sizes1 and counts all over 0..N."""
    rng = np.random.default_rng(seed)
    n0 = np.repeat(rng.choice(sizes0, per_size * 8), 1)
    n1 = rng.choice(sizes1, n0.size)
    x = rng.integers(0, n0 + 1)
    y = rng.integers(0, n1 + 1)
    x[:4] = [0, n0[1], 0, n0[3]]  # extremes
    y[:4] = [0, n1[1], n1[2], 0]
    rows = np.unique(np.stack([x, n0, y, n1], 1), axis=0)
    return binomial_bases(rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])


@pytest.mark.parametrize(
    "sizes0, sizes1",
    [
        (np.arange(20, 45), np.arange(20, 45)),  # 64 models, independent halves
        (np.array([3, 5, 6, 9]), np.array([4, 7, 8])),  # small sizes, gaps in the range
        (np.arange(110, 150, 3), np.array([100, 101, 106])),  # 256 models, unequal roles
    ],
)
def test_block_of_mixed_sizes_matches_per_base_routine(sizes0, sizes1):
    B = _mixed_bases(sizes0, sizes1, 10, seed=int(sizes0[0] + sizes1[-1]))
    Q = bb.make_blocks(B, _K0(B.x.size), always=True)
    assert Q.k.size == 1 and Q.rest.size == 0  # one block spans every size
    assert (Q.n0lo[0], Q.n0[0]) == (B.n0.min(), B.n0.max())
    assert (Q.n1lo[0], Q.n1[0]) == (B.n1.min(), B.n1.max())
    worst = 0.0
    n_fin = 0
    for eps in (0.05, 0.5, 2.0, 6.0):
        for s in (0.1, 0.5, 0.9, 0.9999, 1.0):
            for delta in (0.0, 1e-5, 0.1):
                got = np.full(B.x.size, np.nan)
                ok = bb.fill_log_lik(B, Q, _K0(B.x.size), eps, np.array([s]), delta, -1, got, False)
                ref = np.array([log_lik(B, i, eps, s, delta) for i in range(B.x.size)])
                if not ok:
                    assert not np.isfinite(ref).all()
                    continue
                assert np.array_equal(np.isfinite(got), np.isfinite(ref))
                fin = np.isfinite(ref)
                n_fin += int(fin.sum())
                worst = max(worst, float(np.max(np.abs(got[fin] - ref[fin]))))
    print(f"{B.x.size} bases of mixed sizes: worst |block - per-base| = {worst:.1e}")
    assert n_fin > 1000
    assert worst < PER_BASE_TOL


def test_block_of_mixed_sizes_matches_independent_quadrature():
    # one base per size of a run of sizes, against tests.reference (SciPy's betainc)
    n0 = np.arange(28, 37)
    n1 = 64 - n0
    x = (0.15 * n0).astype(np.int64)
    y = (0.8 * n1).astype(np.int64)
    B = binomial_bases(x, n0, y, n1)
    Q = bb.make_blocks(B, _K0(x.size), always=True)
    assert Q.k.size == 1
    for eps, s, delta in [(2.0, 0.3, 1e-5), (0.5, 0.9, 0.0), (1.0, 0.999, 1e-5)]:
        got = np.full(x.size, np.nan)
        assert bb.fill_log_lik(B, Q, _K0(x.size), eps, np.array([s]), delta, -1, got, False)
        ref = [log_marginal_likelihood(x[i], n0[i], y[i], n1[i], eps, s, delta) for i in range(9)]
        np.testing.assert_allclose(got, ref, rtol=0, atol=REF_TOL)


def test_size_steps_match_scipy():
    # the recurrences in the size against scipy.stats.binom, relative accuracy in the tails too
    from scipy import stats

    for n, v in [(5, 0.3), (40, 0.02), (40, 0.97), (130, 0.5), (130, 1e-3)]:
        k = np.arange(n + 1)
        p = stats.binom.pmf(k, n, v)
        lo = stats.binom.cdf(k, n, v)
        up = stats.binom.sf(k - 1, n, v)
        P, LO, UP = (np.zeros((2, n + 2)) for _ in range(3))
        P[0, :-1], LO[0, :-1], UP[0, :-1] = p, lo, up
        bb._pmf_step(n, v, P, 0, 1)
        bb._cdf_step(n, v, P, LO, UP, 0, 1)
        p2, lo2, up2 = P[1], LO[1], UP[1]
        k2 = np.arange(n + 2)
        for got, ref in [
            (p2, stats.binom.pmf(k2, n + 1, v)),
            (lo2, stats.binom.cdf(k2, n + 1, v)),
            (up2, stats.binom.sf(k2 - 1, n + 1, v)),
        ]:
            keep = ref > 1e-250  # where the reference is a normal double
            assert keep.sum() > n // 3
            np.testing.assert_allclose(got[keep], ref[keep], rtol=1e-12)


def test_nearby_sizes_share_a_block_far_ones_do_not():
    # independent halves of 64 models: sizes 20-44 in one block; 1,000 at a distance stays apart
    rng = np.random.default_rng(5)
    n1 = rng.binomial(64, 0.5, 600)
    n0 = 64 - n1
    x = rng.binomial(n0, 0.1)
    y = rng.binomial(n1, 0.9)
    n0 = np.r_[n0, np.full(40, 1000)]
    n1 = np.r_[n1, np.full(40, 1000)]
    x = np.r_[x, rng.integers(0, 1001, 40)]
    y = np.r_[y, rng.integers(0, 1001, 40)]
    rows = np.unique(np.stack([x, n0, y, n1], 1), axis=0)
    B = binomial_bases(rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])
    Q = bb.make_blocks(B, _K0(B.x.size))
    small = B.n0 < 100
    assert Q.k.size == 1 and Q.n0[0] < 100  # the 40 bases of N = 1,000 do not pay as a block
    assert Q.size[0] == small.sum() and sorted(Q.rest.tolist()) == np.flatnonzero(~small).tolist()
    assert Q.n0lo[0] == B.n0[small].min() and Q.n1[0] == B.n1[small].max()
    # the cost rule: one block over the sizes is cheaper than a block per size
    r0 = int(Q.n0[0] - Q.n0lo[0] + 1)
    r1 = int(Q.n1[0] - Q.n1lo[0] + 1)
    merged, _ = bb.block_cost(int(small.sum()), Q.n0[0], Q.n1[0], r0, r1)
    per_size = sum(
        min(bb.block_cost(int(np.sum((B.n0 == a) & small)), a, 64 - a))
        for a in np.unique(B.n0[small])
    )
    assert merged < per_size
