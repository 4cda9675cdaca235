"""The over-dispersed likelihoods end to end against a brute-force reference
(``tests/reference/overdispersed.py``): the beta-binomial at fixed and at free tau, and the
bivariate normal of eq. 7 with tau and rho both free, on small cases at delta = 0.

Criteria: eps and s quantiles (5, 25, 50, 75, 95%) within 4 Monte Carlo standard errors of the
run plus the reference's own error (``tests/_support/mc_error.py``), and the posterior means of
tau and rho within 4 Monte Carlo standard errors (ArviZ's mcse) plus the reference's error.  The
reference's error, measured by refining it: at tau -> 0 the beta-binomial grid agrees with the
binomial quadrature reference to 0.03 points (m = 500); for the free-tau beta-binomial case,
m 500 -> 700, 24 -> 48 tau nodes moved the eps CDF at its quantiles by at most 0.03 points and
tau's mean by 2e-5.  ``REF_ERR`` (0.3 points) and 1% of the posterior sd for the means leave
margin; the bivariate normal's refinement was not measured. Reach, asserted first for eps and
s (``check_quantiles(reach=...)``): a posterior 15% too narrow, and one whose eps is 0.2 higher,
fail with probability >= 0.8 at the run's effective sample sizes (computed from the reference).
"""

import arviz as az
import numpy as np
import pytest

import bayes_dp as bdp

from tests._support.mc_error import check_quantiles
from tests.reference.overdispersed import overdispersed_posterior_bruteforce

QS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
REF_ERR = 3e-3
PRIOR = bdp.Prior(eps=bdp.HalfNormal(10.0), s=bdp.Beta(1.0, 1.0), tau=bdp.Beta(1.0, 20.0))

#: small cases: (counts fp, n_neg, fn, n_pos), likelihood, tau (fixed value or None: free)
CASES = {
    "beta-binomial-fixed-tau": (([3, 1, 5], [20] * 3, [6, 9, 4], [20] * 3), "beta_binomial", 0.05),
    "beta-binomial-free-tau": (([3, 1, 5], [20] * 3, [6, 9, 4], [20] * 3), "beta_binomial", None),
    "bvn-free-tau-rho": (
        ([8, 22, 11], [100] * 3, [56, 31, 40], [100] * 3),
        "bivariate_normal",
        None,
    ),
}


def _compare(name, draws):
    (fp, n0, fn, n1), lik, tau = CASES[name]
    ref = overdispersed_posterior_bruteforce(
        fp, n0, fn, n1, lik, ("fixed", tau) if tau is not None else ("beta", 1.0, 20.0)
    )
    ev = bdp.Evidence(
        bdp.AttackCounts(fp, n0, fn, n1),
        likelihood=lik,
        name="x",
        fix={"tau": tau} if tau is not None else None,
    )
    post = bdp.estimate_epsilon(
        ev, delta=0.0, prior=PRIOR, chains=4, draws=draws, seed=1, check=False
    )
    # reach first (check_quantiles): 15% too narrow, and eps 0.2 higher, fail with power >= 0.8
    check_quantiles(
        post.draws("eps"),
        ref.eps_cdf,
        QS,
        label=f"{name} eps",
        ref_err=REF_ERR,
        reach=("narrow15", "shift02"),
    )
    check_quantiles(
        post.draws("s"), ref.s_cdf, QS, label=f"{name} s", ref_err=REF_ERR, reach=("narrow15",)
    )
    for var in ("tau", "rho"):
        if f"{var}_x" not in post.var_names:
            continue
        x = post.draws(f"{var}_x")
        err = abs(float(x.mean()) - ref.mean(var))
        tol = 4 * float(np.ravel(az.mcse(x, method="mean"))[0]) + 0.01 * float(x.std())
        print(f"{name} {var}: mean {x.mean():.5f}, reference {ref.mean(var):.5f}, tol {tol:.5f}")
        assert err <= tol, (name, var, float(x.mean()), ref.mean(var), tol)
    return post


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("name", list(CASES))
def test_overdispersed_posterior_matches_the_brute_force_reference(name):
    post = _compare(name, 5_000)  # 4 x 5,000 draws: quantile ESS 5,000-10,000
    if CASES[name][2] is None:
        assert "tau_x" in post.var_names
