"""Read the files that LiRA, Privacy Meter and privacy-estimates write.

* :func:`read_lira_runs`: the LiRA reference code (Carlini et al. 2022, ``tensorflow/privacy``
  ``research/mi_lira_2021``): model folders with ``hparams.json``, ``keep.npy`` and
  ``scores/<epoch>.npy``; :func:`read_lira_pytorch`: its PyTorch port (``<id>/keep.npy``,
  ``scores.npy``).
* :func:`read_privacy_meter`: Privacy Meter 2.0 (``privacytrustlab/ml_privacy_meter``):
  ``models/memberships.npy`` and ``signals/<algorithm>_signals.npy`` (plain or RaMIA), turned
  into LiRA's logit scale.
* :func:`read_attack_results` / :func:`read_attack_results_run`: privacy-estimates
  (``microsoft/responsible-ai-toolbox-privacy``) ``AttackResults`` JSON files;
  :func:`read_challenge_scores`: its pipeline's ``scores`` and ``challenge_bits``.
* :func:`read_score_file`: a score matrix of your own attack (``.npz`` or long ``.csv``).
* :func:`read_results`: any of them, the format detected by :func:`detect_format`; the
  ``bayes-dp`` command line reads result folders through it.

Every reader compares what its tool records about each run and refuses a mix, naming the groups
and the ``select`` option that reads one; it reads every ordinary variant of the tool's output or
refuses it naming the option that reads it. ``docs/reference/readers.md`` lists them.
"""

from ._common import ScoreRun
from .detect import FORMATS, detect_format, read_results
from .lira import read_lira_pytorch, read_lira_runs
from .privacy_estimates import (
    AttackResultsRun,
    ChallengeScores,
    is_attack_results,
    read_attack_results,
    read_attack_results_run,
    read_challenge_scores,
)
from .privacy_meter import read_privacy_meter
from .score_file import read_score_file

__all__ = [
    "FORMATS",
    "AttackResultsRun",
    "ChallengeScores",
    "ScoreRun",
    "detect_format",
    "is_attack_results",
    "read_attack_results",
    "read_attack_results_run",
    "read_challenge_scores",
    "read_lira_pytorch",
    "read_lira_runs",
    "read_privacy_meter",
    "read_results",
    "read_score_file",
]
