"""The likelihood table of the exact sampler's table moves (samplers/exact/surrogate.py).

The move is exact whatever the table's error (checked against quadrature in
tests/statistical/test_exact_sampler_vs_quadrature.py and tests/statistical/test_stress_grid.py);
these tests check the table itself: the interpolation rule, its accuracy against the exact
likelihood it tabulates, and its box.
"""

import math

import numpy as np
import pytest

from samplers.exact import surrogate
from samplers.exact.driver import build_model
from samplers.model import binomial

STRONG_FP = [40, 50, 60, 100, 100]
STRONG_FN = [250, 200, 150, 100, 120]


def _model(s_fixed):
    n = len(STRONG_FP)
    model, corr, names, _ = build_model(
        np.array(STRONG_FP),
        np.full(n, 1000),
        np.array(STRONG_FN),
        np.full(n, 1000),
        np.zeros(n, dtype=np.int64),
        g_lik=np.zeros(1, dtype=np.int64),
        g_sidx=np.zeros(1, dtype=np.int64),
        g_tau=np.zeros(1),
        g_rho=np.zeros(1),
        g_tau_free=np.zeros(1, dtype=bool),
        g_rho_free=np.zeros(1, dtype=bool),
        s_fixed=np.array([np.nan if s_fixed is None else s_fixed]),
        delta=1e-5,
        eps_prior=(0, 10.0, 0.0),
        s_prior=(1.0, 1.0),
        tau_prior=(1.0, 1.0),
    )
    assert corr is None
    return model, names


def _exact(model, eps, s):
    return sum(
        model.b_mult[b] * binomial.log_lik(model.B, b, eps, s, model.delta)
        for b in range(model.b_grp.size)
    )


def test_interpolation_is_exact_for_cubics_and_bilinear_at_cliffs():
    G = surrogate.GRID
    rng = np.random.default_rng(0)
    c = rng.normal(size=(4, 4))

    def f(u, v):
        return sum(c[i, j] * u**i * v**j for i in range(4) for j in range(4))

    uu, vv = np.meshgrid(np.arange(G), np.arange(G), indexing="ij")
    T = f(uu / G, vv / G)
    for u, v in rng.uniform(0, G - 1, size=(50, 2)):
        got = surrogate._interp_2d(T, u, v, -np.inf)
        assert got == pytest.approx(f(u / G, v / G), abs=1e-9)
    # a cliff (a node at -inf) makes the cells around it bilinear, never above their corners
    T2 = T.copy()
    T2[10, 10] = -np.inf
    got = surrogate._interp_2d(T2, 11.5, 11.5, -1e300)
    corners = [T2[11, 11], T2[12, 11], T2[11, 12], T2[12, 12]]
    assert min(corners) <= got <= max(corners)
    assert surrogate._interp_2d(T2, 10.5, 10.5, -1e300) == -np.inf


def _table(model, lo, hi, ulo, uhi, V, vmax):
    return surrogate.Table(model.s_z, lo, hi, ulo, uhi, V, vmax)


def _logit(p):
    return math.log(p / (1.0 - p))


def _log_expit(v):
    return -math.log1p(math.exp(-v))


@pytest.mark.parametrize("s_fixed", [None, 0.95])
def test_table_matches_the_exact_likelihood_in_its_box(s_fixed):
    model, names = _model(s_fixed)
    # a free strength's table spans u = log(s eps) and v = logit s; a fixed one's log eps
    if s_fixed is None:
        lo, hi = np.array([0.0, _logit(0.4)]), np.array([0.0, _logit(0.95)])
        ulo, uhi = np.array([math.log(1.8)]), np.array([math.log(3.2)])
    else:
        lo, hi = np.array([math.log(2.0)]), np.array([math.log(3.2)])
        ulo, uhi = np.zeros(1), np.zeros(1)
    G = surrogate.GRID
    V = np.zeros((1, G, G))
    vmax = np.zeros(1)
    stop = np.zeros(1, dtype=np.int64)
    assert surrogate.build(model, _table(model, lo, hi, ulo, uhi, V, vmax), stop) == surrogate.BUILT
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(40):
        if s_fixed is None:
            u, v = rng.uniform(ulo[0], uhi[0]), rng.uniform(lo[1], hi[1])
            z = np.array([u - _log_expit(v), v])
            s = 1.0 / (1.0 + math.exp(-v))
        else:
            z = rng.uniform(lo, hi)
            s = s_fixed
        ref = _exact(model, math.exp(z[0]), s)
        got = surrogate.log_density(z, _table(model, lo, hi, ulo, uhi, V, vmax))
        if ref > vmax[0] - 20.0:  # where the posterior lives
            worst = max(worst, abs(got - ref))
    # the move's acceptance rate is ~exp(-2 x error); 0.05 keeps it above ~90%
    print("worst table error", worst)
    assert worst < 0.05, worst
    # outside the box the table says nothing
    out = np.array([math.log(40.0), hi[-1] + 0.1])[: len(names)]
    assert surrogate.log_density(out, _table(model, lo, hi, ulo, uhi, V, vmax)) == -np.inf


def test_empty_box_builds_nothing():
    model, names = _model(None)
    G = surrogate.GRID
    V = np.zeros((1, G, G))
    lo = np.array([1.0, 0.0])
    u = np.array([0.5])
    stop = np.zeros(1, dtype=np.int64)
    assert not surrogate.build(
        model, _table(model, lo, lo.copy(), u, u + 1.0, V, np.zeros(1)), stop
    )
    assert not surrogate.build(
        model, _table(model, lo, lo + 1.0, u, u.copy(), V, np.zeros(1)), stop
    )


def test_a_stop_request_interrupts_the_table_and_a_rebuild_gives_the_same():
    from samplers.exact import chain as exact

    model, names = _model(None)
    G = surrogate.GRID
    lo, hi = np.array([0.8, -1.0]), np.array([1.6, 3.0])
    ulo, uhi = np.array([0.5]), np.array([1.2])
    V = np.zeros((1, G, G))
    vmax = np.zeros(1)
    stopped = surrogate.build(
        model, _table(model, lo, hi, ulo, uhi, V, vmax), np.ones(1, dtype=np.int64)
    )
    assert stopped == surrogate.STOPPED
    # the chain-level build: stopped -> not built (sg_on 0), then built in full
    st = exact.new_state(model, None, np.array([1.0, 0.5]))
    rng = np.random.default_rng(0)
    for _ in range(50):  # a window of warm-up points around the mode
        st.win_n[0] += 1.0
        z = np.array([1.0, 0.5]) + 0.1 * rng.standard_normal(2)
        st.win_sum[:] += z
        st.win_sq[:] += z * z
        st.win_min[:] = np.minimum(st.win_min, z)
        st.win_max[:] = np.maximum(st.win_max, z)
        u = z[0] + _log_expit(z[1])
        st.win_usum[:] += u
        st.win_usq[:] += u * u
        st.win_umin[:] = np.minimum(st.win_umin, u)
        st.win_umax[:] = np.maximum(st.win_umax, u)
    assert not exact.build_table(st, model, np.ones(1, dtype=np.int64))
    assert st.sg_on[0] == 0
    assert exact.build_table(st, model, np.zeros(1, dtype=np.int64))
    assert st.sg_on[0] == exact.TABLE_WALK
    first = st.tb.V.copy()
    assert exact.build_table(st, model, np.zeros(1, dtype=np.int64))
    np.testing.assert_array_equal(st.tb.V, first)


def test_far_tail_nodes_hold_upper_bounds_and_the_rest_is_exact():
    # a box reaching far into the tails (eps from 0.02 to 400, s from 0.01 to 0.9999): the
    # nodes whose bases lie in their tails keep the cheap upper bound only when it is more
    # than REFINE_GAP below the table's largest value; every other node is the exact value
    model, names = _model(None)
    G = 8  # build() takes the grid size from V
    lo, hi = np.array([0.0, _logit(0.01)]), np.array([0.0, _logit(0.9999)])
    ulo, uhi = np.array([math.log(0.02)]), np.array([math.log(6.0)])
    V = np.zeros((1, G, G))
    vmax = np.zeros(1)
    assert (
        surrogate.build(
            model, _table(model, lo, hi, ulo, uhi, V, vmax), np.zeros(1, dtype=np.int64)
        )
        == 1
    )
    n_bound = 0
    for i in range(G):
        for j in range(G):
            v = lo[1] + j * (hi[1] - lo[1]) / (G - 1)
            u = ulo[0] + i * (uhi[0] - ulo[0]) / (G - 1)
            s = 1.0 / (1.0 + math.exp(-v))
            ref = _exact(model, math.exp(u - _log_expit(v)), s)
            if abs(V[0, i, j] - ref) <= 1e-4:
                continue
            n_bound += 1
            assert V[0, i, j] > ref  # an upper bound ...
            assert V[0, i, j] < vmax[0] - surrogate.REFINE_GAP  # ... far below the maximum
    assert vmax[0] == pytest.approx(V.max())
    assert n_bound > 0  # the box does reach the tails
