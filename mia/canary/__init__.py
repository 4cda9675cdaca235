"""Random-canary and crafted-canary privacy audits (one-shot estimation, DP-FedAvg, CANIFE).

Public API
----------
epsilon_two_gaussians, delta_two_gaussians
    Exact (epsilon, delta) between two one-dimensional Gaussians.
gaussian_mechanism_epsilon, gaussian_mechanism_delta, gaussian_mechanism_sigma
    Analytic Gaussian mechanism (Balle and Wang 2018): eps(sigma, delta), delta(sigma, eps) and
    the calibration sigma(eps, delta); the package's one implementation.
CosineNull, epsilon_cosine_null_vs_gaussian
    Exact null law of a random-canary cosine.
one_shot_gaussian_mechanism, simulate_canary_cosines, epsilon_from_cosines, epsilon_from_two_samples
    One-shot audit of the Gaussian mechanism (Andrew et al., Alg. 1).
counts_from_scores, to_evidence, empirical_epsilon
    Scores to ``bayes_dp.AttackCounts`` / ``Evidence``; max-over-threshold epsilon.
run_dp_fedavg_with_canaries
    DP-FedAvg on digits with canary clients, final-model and all-iterates estimates.
canife_audit, craft_canary, canife_scores, compose_canife
    CANIFE crafted canaries (Maddock et al.) on softmax regression (``mia.SoftmaxRegression``).

The Flower adapter lives in ``mia.canary.flower`` (optional extra ``flower``).
"""

from ._gaussians import (
    delta_two_gaussians,
    epsilon_two_gaussians,
    gaussian_mechanism_delta,
    gaussian_mechanism_epsilon,
    gaussian_mechanism_sigma,
)
from ._null import CosineNull, epsilon_cosine_null_vs_gaussian
from .canife import (
    CanaryDesign,
    CanifeResult,
    canife_audit,
    canife_scores,
    compose_canife,
    craft_canary,
)
from .counts import (
    CountsResult,
    EmpiricalEpsilon,
    counts_from_scores,
    empirical_epsilon,
    to_evidence,
)
from .fedavg import FedAvgCanaryResult, run_dp_fedavg_with_canaries
from .oneshot import (
    CosineEstimate,
    OneShotResult,
    epsilon_from_cosines,
    epsilon_from_two_samples,
    one_shot_gaussian_mechanism,
    simulate_canary_cosines,
)

__all__ = [
    "CanaryDesign",
    "CanifeResult",
    "CosineEstimate",
    "CosineNull",
    "CountsResult",
    "EmpiricalEpsilon",
    "FedAvgCanaryResult",
    "OneShotResult",
    "canife_audit",
    "canife_scores",
    "compose_canife",
    "counts_from_scores",
    "craft_canary",
    "delta_two_gaussians",
    "empirical_epsilon",
    "epsilon_cosine_null_vs_gaussian",
    "epsilon_from_cosines",
    "epsilon_from_two_samples",
    "epsilon_two_gaussians",
    "gaussian_mechanism_delta",
    "gaussian_mechanism_epsilon",
    "gaussian_mechanism_sigma",
    "one_shot_gaussian_mechanism",
    "run_dp_fedavg_with_canaries",
    "simulate_canary_cosines",
    "to_evidence",
]
