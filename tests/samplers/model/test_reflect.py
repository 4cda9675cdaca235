"""The band's lower-left half only (``Evidence(reflect=False)``): likelihood and wiring.

With ``reflect=False`` a base's error point is uniform on the lower-left half {a + b <= 1} of
R_s(eps, delta) instead of the whole band. The sampler's per-base routine and its block
quadrature are compared with the independent quadrature of ``tests/reference`` (which drops
the reflected corner on its own panels, numpy/scipy only), then the model's wiring: validation,
records, the sampler it needs, and the end-to-end effect on counts that point the wrong way.
"""

import itertools

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.inference.model import Model
from samplers.model import binomial_block as bb
from samplers.model.binomial import binomial_bases, log_lik

from tests.reference import log_marginal_likelihood

# (fp, n_neg, fn, n_pos): strong, near the diagonal on either side, wrong way on both sides
# (a cross-fed target that shows nothing, docs/validation/lira.md), perfect, and the paper's first
# base
COUNTS = [
    (3, 32, 2, 32),
    (14, 32, 17, 32),
    (17, 32, 18, 32),
    (89, 128, 128, 128),
    (0, 64, 0, 64),
    (40, 1000, 250, 1000),
]
EPS = [0.05, 0.7, 2.0, 8.0]
S = [0.0, 0.5, 0.95, 1.0]
DELTA = [0.0, 1e-5]
#: the per-base routine's error against tests.reference where log L > -100 (the same bound
#: as tests/samplers/model/test_binomial_likelihood.py, whose grid includes the reflected corner)
TOL = 1e-6


@pytest.mark.parametrize("c", COUNTS)
def test_lower_half_matches_quadrature(c):
    B = binomial_bases([c[0]], [c[1]], [c[2]], [c[3]], reflect=[False])
    worst = 0.0
    for e, s, d in itertools.product(EPS, S, DELTA):
        ref = float(log_marginal_likelihood(*c, e, s, d, reflect=False))
        got = float(log_lik(B, 0, e, s, d))
        if ref > -100.0:
            worst = max(worst, abs(got - ref))
        elif ref > -690.0:  # far out: close (the reference loses digits there)
            assert got == pytest.approx(ref, rel=1e-2), (e, s, d, ref, got)
        else:  # both Beta densities below 1e-300 on the band: any value that far down
            assert got < -600.0, (e, s, d, ref, got)
    assert worst < TOL, worst


def test_halves_add_up_to_the_band():
    """L_band = (L_lower + L_upper) / 2, where L_upper is the lower half of the reflected base.

    The band is symmetric through (1/2, 1/2), so each half has half its area: this checks the
    normalisation (the log 2) and that nothing of the lower half is lost or counted twice.
    """
    for (x, n0, y, n1), e, s in itertools.product(COUNTS, (0.7, 2.0), (0.0, 0.5, 1.0)):
        both = binomial_bases([x], [n0], [y], [n1])
        low = binomial_bases([x], [n0], [y], [n1], reflect=[False])
        up = binomial_bases([n0 - x], [n0], [n1 - y], [n1], reflect=[False])
        lb = log_lik(both, 0, e, s, 1e-5)
        ll = np.logaddexp(log_lik(low, 0, e, s, 1e-5), log_lik(up, 0, e, s, 1e-5))
        assert lb == pytest.approx(ll - np.log(2.0), abs=1e-9), (x, n0, y, n1, e, s)


def test_wrong_way_counts_lose_their_evidence():
    """FP 89 / 128 and FN 128 / 128 favour a large eps only when read reflected."""
    c = (89, 128, 128, 128)
    both = binomial_bases(*([v] for v in c))
    low = binomial_bases(*([v] for v in c), reflect=[False])
    gain_both = log_lik(both, 0, 3.0, 0.5, 1e-5) - log_lik(both, 0, 0.05, 0.5, 1e-5)
    gain_low = log_lik(low, 0, 3.0, 0.5, 1e-5) - log_lik(low, 0, 0.05, 0.5, 1e-5)
    assert gain_both > 50.0  # the reflected point (39/128, 0/128) is a strong attack
    assert gain_low < 0.0  # as made, the counts are noise around the diagonal


def test_block_quadrature_keeps_the_halves_apart():
    """A block never mixes the two regions, and each member matches the per-base routine."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 33, 40)
    y = rng.integers(0, 33, 40)
    rows = np.unique(np.stack([x, y], 1), axis=0)
    x, y = rows[:, 0], rows[:, 1]
    reflect = np.arange(x.size) % 2 == 0
    B = binomial_bases(x, np.full(x.size, 32), y, np.full(x.size, 32), reflect=reflect)
    Q = bb.make_blocks(B, np.zeros(x.size, dtype=np.int64), always=True)
    assert Q.k.size == 2  # one block per region
    for b in range(Q.k.size):
        members = Q.idx[Q.start[b] : Q.start[b] + Q.size[b]]
        assert np.all(B.refl[members] == Q.refl[b])
    for e, s in itertools.product((0.3, 2.0, 6.0), (0.2, 0.9)):
        got = np.full(x.size, np.nan)
        k0 = np.zeros(x.size, dtype=np.int64)
        bb.fill_log_lik(B, Q, k0, e, np.array([s]), 1e-5, -1, got, False)
        ref = np.array([log_lik(B, i, e, s, 1e-5) for i in range(x.size)])
        fin = np.isfinite(ref) & (ref > -100.0)
        assert np.max(np.abs(got[fin] - ref[fin])) < 1e-4  # the block's tolerance against it


def test_evidence_validates_reflect():
    c = bdp.AttackCounts(3, 32, 2, 32)
    assert bdp.Evidence(c).reflect is True
    assert bdp.Evidence(c, reflect=np.bool_(False)).reflect is False
    with pytest.raises(TypeError, match="reflect"):
        bdp.Evidence(c, reflect="no")
    with pytest.raises(ValueError, match="bivariate_normal"):
        bdp.Evidence(c, likelihood="bivariate_normal", reflect=False)
    m = Model.build([bdp.Evidence(c, reflect=False, name="lira")], delta=1e-5)
    with pytest.raises(ValueError, match="reflect=False"):
        m.check_method("mhaar")
    m.check_method("exact")
    again = Model.from_settings(m.settings())
    assert again == m and again.groups[0].reflect is False
    lines, _ = m.to_python()
    assert "reflect=False" in "\n".join(lines)
    # a model of the paper's region records nothing new (files of earlier versions read alike)
    assert "reflect" not in Model.build([bdp.Evidence(c)], delta=1e-5).settings()["groups"][0]


def test_posterior_of_wrong_way_counts():
    """Counts of targets that show nothing, some wrong on both sides: read as made, they do
    not put eps above 0; read reflected, they do (the accusation of docs/validation/lira.md)."""
    rng = np.random.default_rng(0)
    n = 64
    fp = rng.binomial(n, 0.5, 40)
    fn = n - fp + rng.integers(-3, 4, 40)  # on the diagonal, give or take
    fn = np.clip(fn, 0, n)
    fp[:4], fn[:4] = 40, 64  # four targets wrong on both sides
    c = bdp.AttackCounts(fp, n, fn, n)
    kw = dict(delta=1e-5, chains=2, draws=400, tune=300, cores=1, check=False)
    both = bdp.estimate_epsilon(bdp.Evidence(c), seed=1, **kw)
    low = bdp.estimate_epsilon(bdp.Evidence(c, reflect=False), seed=1, **kw)
    q_both = float(np.quantile(both.draws("eps"), 0.05))
    q_low = float(np.quantile(low.draws("eps"), 0.05))
    assert q_both > 0.3, q_both
    assert q_low < 0.05, q_low
