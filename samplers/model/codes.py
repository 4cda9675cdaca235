"""Integer codes the numba kernels switch on, defined once.

The kernels take plain integers for the likelihood of a group, the auxiliary proposal of a base
and the kind of each prior; this module is the one place where those integers are given. The
names (``"binomial"``, ``"normal"``, ``HalfNormal``) and what they mean live in ``bayes_dp``
(:mod:`bayes_dp.core.likelihoods`, :mod:`bayes_dp.core.priors`), which refers to these codes. Plain
Python
integers, no imports: numba reads them as compile-time constants.
"""

__all__ = [
    "EPS_HALFNORMAL",
    "EPS_LOGNORMAL",
    "LIK_BETA_BINOMIAL",
    "LIK_BINOMIAL",
    "LIK_BIVARIATE_NORMAL",
    "LIK_EXPOSURE_MIXTURE",
    "LIK_GUESSES",
    "PROP_BETA_MIX",
    "PROP_NORMAL_MIX",
    "PROP_PAIR_NORMAL",
    "PROP_UNIFORM",
    "S_BETA",
    "S_FIXED",
]

# -- likelihood g(X, Y | alpha, beta) of an evidence group (``g_lik``, ``c_lik``)
#: Independent decisions: X ~ Bin(N0, alpha), Y ~ Bin(N1, beta) (paper eq. 1).
LIK_BINOMIAL = 0
#: Bivariate normal of the paper's eq. 7 with over-dispersion tau and FP-FN correlation rho.
LIK_BIVARIATE_NORMAL = 1
#: X, Y independent beta-binomials with intra-class correlation tau.
LIK_BETA_BINOMIAL = 2
#: Binomial decisions; each base's error point from the exposure mixture
#: pi * Unif(R_s(eps, delta)) + (1 - pi) * Unif(R(kappa * eps, delta))
#: (``docs/validation/lira.md``).
LIK_EXPOSURE_MIXTURE = 3
#: Right guesses of one-run audits: v ~ Bin(r, p), p uniform on [expit(c s eps), expit(c eps)]
#: (:mod:`samplers.model.guesses`; a group of one-run rows, not of challenge bases).
LIK_GUESSES = 4

# -- auxiliary proposal q(alpha, beta) of a base (MHAAR's ``qkind``; see ``aux_proposals``)
PROP_UNIFORM = 0
PROP_BETA_MIX = 1
PROP_NORMAL_MIX = 2
PROP_PAIR_NORMAL = 3

# -- priors (``eps_kind``; the kind of a strength variable)
#: eps ~ HalfNormal(p1).
EPS_HALFNORMAL = 0
#: log eps ~ Normal(p1, p2^2).
EPS_LOGNORMAL = 1
#: s ~ Beta(a, b), sampled.
S_BETA = 0
#: s fixed at a value.
S_FIXED = 1
