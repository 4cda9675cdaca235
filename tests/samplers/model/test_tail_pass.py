"""Bases whose band lies in their tails: the wide pass alone, checked against the reference.

Read as made (``reflect=False``), a base whose counts lie above the diagonal (a test worse than
chance, by noise) keeps a band mass below ``TAIL_PASS_BELOW`` at most (eps, s): the block
quadrature finds it so, and the kernel then runs the per-base wide pass directly
(``log_band_mass_tail``) instead of the fast pass a second time followed by the wide one. The
exposure mixture does the same for its unexposed component. Checked here: the values agree
with the per-base routine (fast then wide, the route the same bases took before) to rounding
and with the independent quadrature of ``tests/reference`` to ``TOL`` where log L > -100; and
the bases take that path (the kernels' pure-Python versions, ``py_func``, run with counting
stand-ins for the routines they call: a numba kernel has no call counter to read).
"""

import itertools
import math

import numpy as np
import pytest
from scipy import special

from samplers.exact import chain as exact
from samplers.exact import driver
from samplers.exact import posterior as post
from samplers.model import binomial as bn
from samplers.model import binomial_block as bb
from samplers.model.cdf_table import log_tail_scipy
from samplers.model.codes import LIK_EXPOSURE_MIXTURE
from samplers.model.region import make_band

from tests.reference import log_marginal_likelihood

DELTA = 1e-5
#: as tests/samplers/model/test_reflect.py: the per-base routine against tests.reference where
#: log L > -100
TOL = 1e-6
#: counts (fp, fn) of 32 negatives and 32 positives above the diagonal (fp / 32 + fn / 32 > 1),
#: the rare rows of the padding matrices of docs/validation/lira.md ("The exposure mixture at
#: scale: where the time goes")
ABOVE = [(26, 32), (16, 32), (20, 31), (14, 28), (8, 31), (21, 32), (17, 29)]
#: (eps, s) of the exposed band, and kappa * eps of the unexposed region (s = 0)
POINTS = [(7.0, 0.2), (3.0, 0.5), (7.0, 0.5), (1e-9, 0.0), (7e-3, 0.0)]


def _rows(seed=0, n=60):
    """ABOVE plus typical rows (targets that show nothing: FP ~ 0.1, FN ~ 0.9, and exposed)."""
    rng = np.random.default_rng(seed)
    fp = np.concatenate([[x for x, _ in ABOVE], rng.binomial(32, 0.1, n), [2, 3, 0]])
    fn = np.concatenate([[y for _, y in ABOVE], rng.binomial(32, 0.9, n), [2, 1, 4]])
    rows = np.unique(np.stack([fp, fn], 1), axis=0)
    return rows[:, 0], rows[:, 1]


def _tail_members(B, Q, eps, s):
    """Indices of the block members whose block mass lies below TAIL_PASS_BELOW."""
    out = []
    thr = math.log(bn.TAIL_PASS_BELOW)
    for b in range(Q.k.size):
        lm = np.full(Q.size[b], np.nan)
        bb._block_log_mass(Q, b, make_band(eps, s, DELTA), lm)
        out += [int(Q.idx[Q.start[b] + j]) for j in np.flatnonzero(lm < thr)]
    return sorted(out)


class _Count:
    """A stand-in for a kernel routine that counts its calls by base."""

    def __init__(self, f):
        self.f, self.bases = f, []

    def __call__(self, T, i, *a):
        self.bases.append(int(i))
        return self.f(T, i, *a)


def test_block_members_in_their_tails_take_the_wide_pass_alone(monkeypatch):
    x, y = _rows()
    B = bn.binomial_bases(x, np.full(x.size, 32), y, np.full(x.size, 32), reflect=[False] * x.size)
    Q = bb.make_blocks(B, np.zeros(x.size, dtype=np.int64), always=True)
    k0 = np.zeros(x.size, dtype=np.int64)
    above = [int(np.flatnonzero((x == a) & (y == b))[0]) for a, b in ABOVE]
    for eps, s in POINTS:
        tails = _tail_members(B, Q, eps, s)
        # read as made, the row farthest above the diagonal lies in its tails at every (eps, s)
        # here (at s = 0 the region is a strip along the diagonal: the strong rows too)
        assert above[0] in tails and len(tails) >= 4, (eps, s, tails)
        wide = _Count(bn.log_band_mass_tail)
        both = _Count(bn.log_band_mass)
        monkeypatch.setattr(bb, "log_band_mass_tail", wide)
        monkeypatch.setattr(bb, "log_band_mass", both)
        got = np.full(x.size, np.nan)
        status = bb.fill_log_lik.py_func(B, Q, k0, eps, np.array([s]), DELTA, -1, got, False)
        monkeypatch.undo()
        assert status == 1
        assert sorted(wide.bases) == tails and both.bases == []
        # the same values as the compiled kernel, and as the per-base routine (fast pass, then
        # the wide one: the route these bases took before)
        comp = np.full(x.size, np.nan)
        bb.fill_log_lik(B, Q, k0, eps, np.array([s]), DELTA, -1, comp, False)
        np.testing.assert_allclose(got, comp, rtol=0, atol=1e-12)
        per_base = np.array([bn.log_lik(B, i, eps, s, DELTA) for i in tails])
        np.testing.assert_allclose(got[tails], per_base, rtol=0, atol=1e-12)


@pytest.mark.parametrize("eps, s", POINTS)
def test_rows_above_the_diagonal_match_the_reference(eps, s):
    x, y = _rows()
    B = bn.binomial_bases(x, np.full(x.size, 32), y, np.full(x.size, 32), reflect=[False] * x.size)
    Q = bb.make_blocks(B, np.zeros(x.size, dtype=np.int64), always=True)
    got = np.full(x.size, np.nan)
    k0 = np.zeros(x.size, dtype=np.int64)
    bb.fill_log_lik(B, Q, k0, eps, np.array([s]), DELTA, -1, got, False)
    worst = 0.0
    for a, b in ABOVE:
        i = int(np.flatnonzero((x == a) & (y == b))[0])
        ref = float(log_marginal_likelihood(a, 32, b, 32, eps, s, DELTA, reflect=False))
        if ref > -100.0:
            worst = max(worst, abs(got[i] - ref))
        else:  # far out: close (the reference loses digits there), as in test_reflect.py
            assert got[i] == pytest.approx(ref, rel=1e-2), (a, b, ref, got[i])
    assert worst < TOL, worst


def _mixture_model(x, y):
    return driver.build_model(
        x,
        np.full(x.size, 32),
        y,
        np.full(x.size, 32),
        np.zeros(x.size, dtype=np.int64),
        g_lik=[LIK_EXPOSURE_MIXTURE],
        g_sidx=[0],
        g_tau=[0.0],
        g_rho=[0.0],
        g_tau_free=[False],
        g_rho_free=[False],
        s_fixed=[np.nan],
        delta=DELTA,
        eps_prior=(0, 10.0, 0.0),
        s_prior=(1.0, 1.0),
        tau_prior=(1.0, 1.0),
        g_reflect=[False],
    )


@pytest.mark.parametrize(
    "eps, s, pi, kappa", [(7.0, 0.2, 0.005, 1e-10), (3.0, 0.5, 0.05, 1e-7), (7.0, 0.5, 0.5, 1e-3)]
)
def test_mixture_rows_above_the_diagonal(monkeypatch, eps, s, pi, kappa):
    """Both components of the rows above the diagonal against the reference (read as made),
    the unexposed one's wide pass run alone, where its upper bound could matter."""
    x, y = _rows(n=200)
    m, _, names, base_map = _mixture_model(x, y)
    assert m.Q is not None and m.Q.idx.size > 0
    u = math.log(kappa) / math.log(1e-15)
    z = np.array([math.log(eps), *(math.log(v / (1 - v)) for v in (s, pi, u))])
    llb = np.empty(m.b_grp.size)
    exact.log_posterior(z, m, None, llb, np.empty(0))
    row = {(int(m.B.x[r]), int(m.B.y[r])): r for r in range(m.B.x.size)}
    for a, b in ABOVE:
        l1 = log_marginal_likelihood(a, 32, b, 32, eps, s, DELTA, reflect=False)
        l0 = log_marginal_likelihood(a, 32, b, 32, kappa * eps, 0.0, DELTA, reflect=False)
        ref = float(np.logaddexp(math.log(pi) + l1, math.log1p(-pi) + l0))
        assert llb[row[a, b]] == pytest.approx(ref, abs=TOL), (a, b)
    # which bases the unexposed component sends to the wide pass, and that no fast pass runs
    # for them again
    wide = _Count(bn.log_band_mass_tail)
    monkeypatch.setattr(post, "log_band_mass_tail", wide)
    s_arr = np.array([s])
    ll2 = llb.copy()
    bb.fill_log_lik(m.B, m.Q, m.b_k, eps, s_arr, DELTA, -1, ll2, False)
    post._mixture_log_lik.py_func(z, m, eps, s_arr, ll2)
    monkeypatch.undo()
    np.testing.assert_allclose(ll2, llb, rtol=0, atol=1e-12)  # Python and numba: rounding
    rows_above = {row[a, b] for a, b in ABOVE}
    assert rows_above & set(wide.bases), wide.bases  # their exposed term cannot hide the bound


def test_pieces_below_the_kinks_are_left_out(monkeypatch):
    """At s = 0 and kappa eps ~ 0 both edges are the diagonal below the kinks (near 1/2):
    no piece there is integrated, and the value is the reference's."""
    x, y = np.array([26, 3]), np.array([32, 1])
    B = bn.binomial_bases(x, [32, 32], y, [32, 32], reflect=[False, False])
    integrate = bn._integrate_piece
    for i, e0 in itertools.product(range(2), (1e-9, 1e-3, 0.5)):
        bd = make_band(e0, 0.0, DELTA)
        seen = []

        def count(tab, tok, GX, GW, o, inn, bd_, rate, ua, ub, *rest, seen=seen):
            seen.append((ua, ub))
            return integrate(tab, tok, GX, GW, o, inn, bd_, rate, ua, ub, *rest)

        for wide in (False, True):
            seen.clear()
            monkeypatch.setattr(bn, "_integrate_piece", count)
            lm = bn._log_band_mass_window.py_func(B, i, wide, bd, False)
            monkeypatch.undo()
            assert seen and all(ub > min(bd.xs1, bd.xs2) for _, ub in seen)
            assert lm == bn._log_band_mass_window(B, i, wide, bd, False)
        ref = float(log_marginal_likelihood(x[i], 32, y[i], 32, e0, 0.0, DELTA, reflect=False))
        assert bn.log_lik(B, i, e0, 0.0, DELTA) == pytest.approx(ref, abs=TOL)


def test_upper_tail_from_betainc_matches_betaincc():
    """log_tail_scipy's upper tail (from betainc where that is exact) against SciPy's."""
    rng = np.random.default_rng(1)
    a = rng.integers(1, 400, 300).astype(float)
    b = rng.integers(1, 400, 300).astype(float)
    v = np.concatenate([rng.uniform(0, 1, 150), 1.0 - 10.0 ** rng.uniform(-12, -1, 150)])
    v[:20] = 0.5
    for upper in (False, True):
        got = np.array([log_tail_scipy(p, q, w, upper) for p, q, w in zip(a, b, v, strict=True)])
        f = special.betaincc if upper else special.betainc
        with np.errstate(divide="ignore"):
            want = np.log(f(a, b, v))
        fin = np.isfinite(want)
        assert np.array_equal(fin, np.isfinite(got))
        # SciPy's two functions agree to ~1e-13 relative (measured 5e-14): 1e-11 in log
        np.testing.assert_allclose(got[fin], want[fin], rtol=0, atol=1e-11)
