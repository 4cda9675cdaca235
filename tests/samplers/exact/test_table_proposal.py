"""The independence proposal drawn from the tabulated posterior (samplers/exact/table_proposal.py).

The independence move is exact only if ``log_density`` is the density of what ``draw`` draws
(in the coordinates of z). The two are written separately (one walks cumulative sums, the other
looks up cells and adds the Jacobian of u -> logit s), so these tests compare them: the
probability of rectangles in z by 200,000 draws against a fine midpoint rule of
exp(log_density) over the same rectangles. They also check that q sits where the tabulated
posterior does, and that on the paper's strong-attack data the chains take the independence
move and accept most proposals (the stress grid checks that the draws are right).
"""

import math

import numpy as np
import pytest

from samplers.exact import chain as exact
from samplers.exact import posterior, surrogate, table_proposal

# the strong-attack subset (5 bases) the table's own tests use
from tests.samplers.exact.test_surrogate import _model as surrogate_model


def _model(s_fixed):
    return surrogate_model(s_fixed)[0]


def _proposal(s_fixed):
    model = _model(s_fixed)
    if s_fixed is None:
        lo, hi = np.array([0.0, -2.0]), np.array([0.0, 4.0])
        ulo, uhi = np.array([0.6]), np.array([1.1])
    else:
        lo, hi = np.array([0.7]), np.array([1.3])
        ulo, uhi = np.zeros(1), np.zeros(1)
    G = surrogate.GRID
    V, vmax = np.zeros((1, G, G)), np.zeros(1)
    tb = surrogate.Table(model.s_z, lo, hi, ulo, uhi, V, vmax)
    assert surrogate.build(model, tb, np.zeros(1, dtype=np.int64)) == 1
    F, U = table_proposal.Z_CELLS, table_proposal.U_CELLS
    q = table_proposal.Proposal(
        np.zeros(2), np.zeros(F), np.zeros(F), np.zeros((1, F, U)), np.zeros((1, F, U))
    )
    assert table_proposal.build(tb, model.pz, q)
    return model, tb, q


def _draws(model, tb, q, n, seed):
    d = 1 + (model.s_z[0] >= 0)
    rng = np.random.default_rng(seed)
    out = np.empty((n, d))
    z = np.empty(d)
    for i in range(n):
        table_proposal.draw(rng, tb, q, z)
        out[i] = z
    return out


def _mass(model, tb, q, box, m):
    """Midpoint rule of exp(log q) over box = (lo, hi) in z, m points per coordinate."""
    b_lo, b_hi = np.asarray(box[0]), np.asarray(box[1])
    d = b_lo.size
    axes = [b_lo[a] + (np.arange(m) + 0.5) * (b_hi[a] - b_lo[a]) / m for a in range(d)]
    cell = np.prod((b_hi - b_lo) / m)
    tot = 0.0
    for point in np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, d):
        lq = table_proposal.log_density(point, tb, q)
        if lq > -np.inf:
            tot += math.exp(lq)
    return tot * cell


@pytest.mark.parametrize("s_fixed", [None, 0.95])
def test_log_density_is_the_density_of_the_draws(s_fixed):
    model, tab, q = _proposal(s_fixed)
    n = 200_000
    Z = _draws(model, tab, q, n, seed=3)
    med = np.median(Z, axis=0)
    sd = Z.std(axis=0)
    if s_fixed is None:
        # rectangles in (log eps, logit s) that cut through many cells of q
        boxes = [
            (med - 3 * sd, med + 3 * sd),
            (med - sd, med + [0.5 * sd[0], 2 * sd[1]]),
            (med + [-0.5 * sd[0], 0.0], med + [2 * sd[0], 3 * sd[1]]),
        ]
        m = 400
    else:
        boxes = [(med - 4 * sd, med + 4 * sd), (med - sd, med + 0.3 * sd)]
        m = 20_000
    for b_lo, b_hi in boxes:
        inside = np.all((Z >= b_lo) & (Z <= b_hi), axis=1).mean()
        mass = _mass(model, tab, q, (b_lo, b_hi), m)
        se = math.sqrt(inside * (1 - inside) / n)
        print(f"box {b_lo} {b_hi}: draws {inside:.4f}, density {mass:.4f} (se {se:.4f})")
        assert abs(inside - mass) < 4 * se + 0.004, (inside, mass)


def test_the_proposal_follows_the_tabulated_posterior():
    model, tb, q = _proposal(None)
    Z = _draws(model, tb, q, 4000, seed=4)
    s = np.empty(1)
    lw = []
    for z in Z:
        lt = posterior.log_prior(z, model, s) + surrogate.log_density(z, tb)
        # the table walk's own log posterior is the same sum
        assert posterior.log_surrogate(z, tb, model.pz) == pytest.approx(lt, abs=1e-12)
        lw.append(lt - table_proposal.log_density(z, tb, q))
    lw = np.asarray(lw)
    # q is the tabulated posterior up to its cells: the log ratio is nearly constant
    print("sd of log(table / q)", lw.std())
    assert lw.std() < 0.1


@pytest.mark.parametrize("s_fixed", [None, 0.95])
def test_strong_data_take_the_independence_move(s_fixed):
    from samplers.exact.driver import ExactRun, starting_points

    model = _model(s_fixed)
    names = ["eps"] + ([("s", 0)] if s_fixed is None else [])
    rng = np.random.default_rng(0)
    starts = starting_points(model, None, names, rng, 2, 2.5)
    rngs = [np.random.default_rng(s) for s in (1, 2)]
    run = ExactRun(model, None, names, rngs, starts, tune=1000, target_accept=0.3, store_ll=False)
    run.run(400)
    for c in run.chains:
        assert c.state.sg_on[0] == exact.TABLE_INDEP
        acc = c.acc[:400, 2].mean()
        print("independence move acceptance", acc)
        assert acc > 0.6
