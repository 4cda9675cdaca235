"""The exact sampler on one-run audits (likelihood "guesses") against quadrature.

``tests/reference/guesses.py`` integrates the accuracy out with scipy (its closed form held to
``scipy.integrate.quad`` of ``scipy.stats.binom`` in ``tests/reference/test_guesses_reference
.py``) and the posterior over (eps, s) by composite Gauss-Legendre quadrature; with a group of
challenge bases beside the audits it takes their likelihood from the counts' reference
(``tests.reference.binomial``), over (eps, s) for a shared strength and over (eps, s_counts,
s_guesses) for own strengths (the integral factorises given eps). It shares no code with the
sampler.

Criteria (``tests/_support/mc_error.py``): the reference mass below each sampled quantile (5, 25,
50, 75 and 95%) within 4 standard errors of its ESS, plus the reference's own error (5e-4), and
the KS distance below 1.95 / sqrt(ESS_bulk). A posterior 10% too narrow misses the 5% quantile
by 1.94 points, whose tolerance at 4 x 20,000 draws is 0.4-1.3 points: it fails. Runtime on 2
loaded cores: about 3 minutes (the references' quadrature, under a minute each with challenge
bases, and 4 x 20,000 draws a case, the automatic length for 50,000 guesses); seeds 0, 1 and 2
pass.
"""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp

from tests._support.mc_error import check_quantiles
from tests.reference import guesses as ref

QS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
BASES = ([40], [1000], [250], [1000])

# (name, rows (r, v, c), eps prior, s prior, bases beside them, shared strength)
CASES = [
    ("bits-and-pairs", [(300, 240, 1.0), (100, 70, 2.0)], ("halfnormal", 4.0), ("beta", 1, 1)),
    ("fifty-thousand", [(50_000, 45_500, 1.0)], ("halfnormal", 4.0), ("beta", 1, 1)),
    ("beta-s-pairs", [(400, 300, 2.0), (400, 320, 2.0)], ("lognormal", 0.0, 1.0), ("beta", 2, 2)),
    ("fixed-s", [(500, 400, 2.0)], ("halfnormal", 10.0), ("fixed", 0.5)),
    ("null", [(20_000, 10_040, 1.0)], ("halfnormal", 10.0), ("beta", 1, 1)),
    ("with-bases-shared", [(200, 150, 1.0)], ("halfnormal", 4.0), ("beta", 1, 1), True),
    ("with-bases-own", [(200, 150, 1.0)], ("halfnormal", 4.0), ("beta", 1, 1), False),
]
DELTA = 1e-5

_REF = {}


def _reference(case):
    name, rows, eps_prior, s_prior, *rest = case
    if name not in _REF:
        kw = {}
        if rest:
            kw = {"counts": BASES, "delta": DELTA, "shared": rest[0], "n_eps": 61, "n_s": 31}
        _REF[name] = ref.posterior(rows, eps_prior, s_prior, **kw)
        assert _REF[name].info["cut"] < 1e-8, "the window cuts off posterior mass"
    return _REF[name]


def _prior(eps_prior, s_prior):
    if eps_prior[0] == "halfnormal":
        eps = bdp.HalfNormal(eps_prior[1])
    else:
        eps = bdp.LogNormal(*eps_prior[1:])
    s = bdp.Beta(*s_prior[1:]) if s_prior[0] == "beta" else s_prior[1]
    return bdp.Prior(eps=eps, s=s)


def _evidence(case):
    name, rows, eps_prior, s_prior, *rest = case
    runs = bdp.OneRunCounts(
        m=[max(r, 1) for r, _, _ in rows],
        r=[r for r, _, _ in rows],
        v=[v for _, v, _ in rows],
        pairs=[c == 2.0 for _, _, c in rows],
    )
    if not rest:
        return runs
    return [
        bdp.Evidence(bdp.AttackCounts(*BASES), name="counts"),
        bdp.Evidence(runs, name="guesses", strength="shared" if rest[0] else "own"),
    ]


#: cases run at the automatic length (until bulk and tail ESS >= 4,000): the likelihood table's
#: moves resolve the sharp edge of 50,000 guesses poorly (acceptance ~0.1), and 4 x 20,000
#: draws leave the 5% quantile's ESS below 1,000 at some seeds (150,000-200,000 draws per
#: chain, ~20 s)
AUTOMATIC = ("fifty-thousand",)


def _compare(case, draws, seed):
    grid = _reference(case)
    auto = case[0] in AUTOMATIC
    post = bdp.estimate_epsilon(
        _evidence(case),
        delta=DELTA,
        prior=_prior(case[2], case[3]),
        chains=4,
        draws=None if auto else draws,
        seed=seed,
        check=False,
        log_likelihood=False,
        progress=False,
    )
    if auto:
        assert post.converged, post.settings.get("stop_reason")
    own = len(case) > 4 and not case[4]
    pairs = [("eps", grid.eps_cdf)]
    for var in post.var_names[1:]:
        # the reference's names: s_counts and s_guesses for own strengths, s when shared
        name = {"s": "s_counts" if own else "s", "s_guesses": "s_guesses"}[var]
        pairs.append((var, lambda x, n=name: grid.s_cdf(n, x)))
    for var, cdf in pairs:
        chains = post.draws(var)
        ks = stats.kstest(chains.ravel(), cdf).statistic
        ks_max = 1.95 / np.sqrt(az.ess(chains, method="bulk"))
        errs = check_quantiles(chains, cdf, QS, label=f"{case[0]}/{var}")
        print(
            f"{case[0]}/{var}: KS {ks:.4f} (max {ks_max:.4f}); quantile (error, tol) pp",
            {q: (round(e * 100, 2), round(t * 100, 2)) for q, (e, t) in errs.items()},
        )
        assert ks < ks_max, f"{case[0]}/{var}: KS {ks:.4f} >= {ks_max:.4f}"


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sampler_on_one_run_audits_matches_quadrature(case):
    _compare(case, 20_000, seed=0)
