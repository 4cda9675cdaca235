"""Membership-inference attacks and canary audits that produce attack counts.

The LiRA pipeline of Yildirim et al. (Sec. 3): train models on ``D`` and ``D + {z}``
(:mod:`mia.training`, :func:`run_audit`), test the loss of ``z`` with the Gaussian
likelihood-ratio test (:func:`learn_and_decide`) and count errors with the cross-fed
measurement (:func:`cross_fed_counts`). Score matrices of your own LiRA-style attack (every model
trained on a random half of the targets) become counts with :func:`counts_from_score_matrix`
(:mod:`mia.scores`); score files (:func:`read_score_file`) and the result folders of LiRA's
reference code, Privacy Meter and privacy-estimates are read by :mod:`mia.readers`. Canary
audits for federated learning (one-shot random canaries, CANIFE) live in :mod:`mia.canary`;
coverage studies of simulated audits (cross-fed counts, score matrices) in :mod:`mia.coverage`.
PyTorch models and DP-SGD through Opacus: :mod:`mia.pytorch` (extra ``torch``; ``import mia``
imports neither torch nor ray, dask or flwr).
"""

from . import canary
from .audit import AuditResult, run_audit
from .bounds import companion_bounds, pooled_split_bound, split_selection_bound
from .data import ChallengeBase, draw_challenge_bases, load_digits
from .dependence import DependenceDiagnostic, effective_counts, estimate_dependence
from .guessing import GuessingGame, guessing_game
from .lira import fit_normal, learn_and_decide, lira_logit, logit_confidence
from .measure import cross_fed_counts, cross_fed_decisions, independent_counts
from .model_rates import pooled_model_rates
from .readers import (
    AttackResultsRun,
    ChallengeScores,
    ScoreRun,
    detect_format,
    read_attack_results,
    read_attack_results_run,
    read_challenge_scores,
    read_lira_pytorch,
    read_lira_runs,
    read_privacy_meter,
    read_results,
    read_score_file,
)
from .scores import ScoreMatrixCounts, counts_from_score_matrix, simulate_score_matrix
from .training import DPSGD, MLP, SoftmaxRegression, TrainingAlgorithm, cross_entropy

__all__ = [
    "AttackResultsRun",
    "ChallengeScores",
    "DPSGD",
    "MLP",
    "AuditResult",
    "ChallengeBase",
    "DependenceDiagnostic",
    "GuessingGame",
    "ScoreMatrixCounts",
    "ScoreRun",
    "SoftmaxRegression",
    "TrainingAlgorithm",
    "canary",
    "companion_bounds",
    "pooled_model_rates",
    "pooled_split_bound",
    "split_selection_bound",
    "counts_from_score_matrix",
    "cross_entropy",
    "cross_fed_counts",
    "cross_fed_decisions",
    "detect_format",
    "draw_challenge_bases",
    "effective_counts",
    "estimate_dependence",
    "fit_normal",
    "guessing_game",
    "independent_counts",
    "learn_and_decide",
    "lira_logit",
    "load_digits",
    "logit_confidence",
    "read_attack_results",
    "read_attack_results_run",
    "read_challenge_scores",
    "read_lira_pytorch",
    "read_lira_runs",
    "read_privacy_meter",
    "read_results",
    "read_score_file",
    "run_audit",
    "simulate_score_matrix",
]
