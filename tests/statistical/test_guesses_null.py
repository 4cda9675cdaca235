"""At eps = 0 the posterior of one-run audits does not accuse: its 5% quantile stays below 0.1.

Each simulated audit guesses k fair coins (k = 1,000 to 50,000), bits or pairs of models, and
an eps = 0 mechanism makes every guess right with probability 1/2: v ~ Binomial(k, 1/2). The
posterior (default prior: eps ~ HalfNormal(10), s ~ Beta(1, 1); exact sampler, 4 x 1,000 draws)
should put its 5% quantile of eps below 0.1 in at least 95% of audits.

Sizing: 120 audits (20 per k, half of them pairs). The test fails when more than T audits
have a 5% quantile at or above 0.1, T the smallest count with P[Bin(120, 0.05) > T] <= 0.01:
a sampler that meets the target exactly (5% of audits above) fails with probability <= 0.01,
and one whose posterior lies above 0.1 in 20% of audits (a collapse away from eps = 0, the
defect it guards) fails with probability >= 0.99 (both computed with scipy below). Within
reach: an audit whose guesses are 4 standard deviations above chance has its 5% quantile above
0.1, so the criterion is one the sampler can fail. Runtime ~2 minutes on 2 cores.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp

KS = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000)
N_AUDITS = 120
TARGET = 0.05  # at most this share of audits above the threshold
THRESHOLD = 0.1
DEFECT = 0.20


def _allowed(n: int) -> int:
    """The largest number of audits above the threshold that passes (false failure <= 1%)."""
    return int(stats.binom.ppf(0.99, n, TARGET))


def _q05(k: int, v: int, pairs: bool, seed: int) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = bdp.estimate_epsilon(
            bdp.OneRunCounts(m=2 * k, r=k, v=v, pairs=pairs),
            delta=1e-5,
            draws=1000,
            seed=seed,
            check=False,
            log_likelihood=False,
            progress=False,
        )
    return float(post.quantile(0.05, "eps"))


def run_null(seed: int) -> list:
    """The audits (k, pairs, 5% quantile) whose 5% quantile is at or above the threshold."""
    rng = np.random.default_rng(seed)
    bad = []
    for i in range(N_AUDITS):
        k = KS[i % len(KS)]
        pairs = bool((i // len(KS)) % 2)
        q = _q05(k, int(rng.binomial(k, 0.5)), pairs, seed=1000 * seed + i)
        if q >= THRESHOLD:
            bad.append((k, pairs, round(q, 4)))
    return bad


@pytest.mark.slow
@pytest.mark.statistical
def test_posterior_of_audits_at_eps_zero_stays_below_a_tenth():
    t = _allowed(N_AUDITS)
    false_fail = stats.binom.sf(t, N_AUDITS, TARGET)
    power = stats.binom.sf(t, N_AUDITS, DEFECT)
    print(f"fail above {t} of {N_AUDITS}: false failure {false_fail:.4f}, power {power:.4f}")
    assert false_fail <= 0.01 and power >= 0.8
    # within reach: guesses 4 sd above chance (k = 1,000) put the 5% quantile above 0.1
    assert _q05(1000, 500 + 4 * 16, False, seed=1) > THRESHOLD
    bad = run_null(seed=0)
    print(f"{len(bad)} of {N_AUDITS} audits with a 5% quantile >= {THRESHOLD}: {bad}")
    assert len(bad) <= t
