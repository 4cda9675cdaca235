"""The posterior of eps from canary audits (``mia.canary``) against the exact posterior.

The canary family's path end to end: canary scores of a Gaussian mechanism (observed canaries
N(mu, 1), the null law N(0, 1) given analytically), ``mia.canary.counts_from_scores`` at a
threshold of false-positive rate 0.1, ``to_evidence`` (a binomial group with its own strength,
``s_canary``), beside a designed-bases group that shares eps (the joint audit of
``docs/validation/canary.md``), ``bdp.estimate_epsilon`` at 4 x 10,000 draws; the reference is the
quadrature of ``tests/reference/`` (``posterior_grid_groups``: each group its own strength,
eps shared), which shares no code with the sampler.

Criteria (``tests/_support/mc_error.py``): the reference mass below each sampled quantile
(5, 25, 50, 75, 95%) of eps and of each strength within 4 Monte Carlo standard errors plus the
reference's error. Reach, asserted first from the reference at this run's effective sample
sizes (``tests/_support/power.py``): a posterior 15% too narrow and one whose eps is 0.2
higher each fail with probability >= 0.8 (both 1.000 here: 5-12 points off where the
tolerance is about 1 point); a false failure has probability <= 1e-3 (a union bound over the
quantiles). About 30 s once the kernels are compiled.
"""

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
from mia.canary import counts_from_scores

from tests._support.mc_error import check_quantiles
from tests.reference import posterior_grid_groups

QS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
DELTA = 1e-5
#: a designed base beside the canaries (the paper's strong attack, first base)
BASE = ([40], [1000], [250], [1000])


@pytest.mark.slow
@pytest.mark.statistical
def test_canary_and_designed_bases_posterior_matches_the_reference():
    rng = np.random.default_rng(2033)
    # 400 canaries of a Gaussian mechanism with sensitivity 1.5 (sigma 1)
    res = counts_from_scores(rng.normal(1.5, 1.0, 400), stats.norm(), 0.1, n_null=400, seed=rng)
    canary = res.to_evidence()
    assert canary.name == "canary" and canary.likelihood == "binomial"
    base = bdp.Evidence(bdp.AttackCounts(*BASE), name="base", strength="own")
    post = bdp.estimate_epsilon(
        [canary, base], delta=DELTA, chains=4, draws=10_000, seed=7, check=False, progress=False
    )
    c = res.counts
    ref = posterior_grid_groups(
        [
            ((c.fp, c.n_neg, c.fn, c.n_pos), ("beta", 1.0, 1.0)),
            (tuple(np.asarray(v) for v in BASE), ("beta", 1.0, 1.0)),
        ],
        DELTA,
        ("halfnormal", 10.0),
    )
    check_quantiles(
        post.draws("eps"), ref.eps_cdf, QS, label="canary/eps", reach=("narrow15", "shift02")
    )
    for g, name in enumerate(("canary", "base")):
        check_quantiles(
            post.draws(f"s_{name}"),
            lambda x, g=g: ref.s_cdf(g, x),
            QS,
            label=f"canary/s_{name}",
            reach=("narrow15",),
        )
