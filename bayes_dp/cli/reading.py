"""The reading options of ``bayes-dp estimate`` for score files and result folders.

They go to :func:`bayes_dp.io.evidence_from_mia` (and through it to ``mia``'s readers):
``--alpha`` and ``--score-method`` (how scores become counts, or ``global``: one model's scores
as a whole ROC, ``--target-model``), ``--epoch``, ``--signals``, ``--indices``, ``--select``,
``--skip-one-sided``, ``--same-challenges``, ``--direction`` and ``--focus-targets``.
``docs/reference/readers.md`` lists which tool and variant each one is for.
"""

from __future__ import annotations

import argparse

from bayes_dp.cli.options import _number
from bayes_dp.io import evidence_from_mia
from bayes_dp.io.counts import InputError
from bayes_dp.io.foreign import EVIDENCE_KINDS, SCORE_METHODS


def _epoch(text: str):
    """``--epoch``: an integer >= 0, or ``last``."""
    if text == "last":
        return "last"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer epoch or 'last'; found {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 or 'last'; found {text!r}")
    return value


def _key_value(text: str) -> str:
    """``--select``: ``KEY=VALUE``."""
    key, sep, _ = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE (e.g. arch=wrn28-2); found {text!r}")
    return text


def add_reading_options(e: argparse.ArgumentParser) -> None:
    """Add the options for score files and result folders to the ``estimate`` parser."""
    g = e.add_argument_group(
        "score files and result folders",
        "How scores become evidence, and which part of a result folder is read "
        "(docs/reference/readers.md lists each tool's variants and the option for each).",
    )
    g.add_argument(
        "--evidence",
        choices=EVIDENCE_KINDS,
        default="game",
        help="score files and LiRA/Privacy Meter folders: what the scores become (default "
        "game: the guessing game with abstention, a test fitted on a reference half of the "
        "models guessing the other half's memberships, one group of guesses whose claim is its "
        "one-run bound; targets: one challenge base per target from cross-fed decisions, the "
        "binomial band model)",
    )
    g.add_argument(
        "--alpha",
        type=_number(float, 0.0, 1.0, low_open=True, high_open=True),
        default=0.1,
        help="score files only: type-I error of the per-target membership test (default 0.1): "
        "of the counts (--evidence targets) and of the per-model rates the claim pools",
    )
    g.add_argument(
        "--score-method",
        choices=SCORE_METHODS,
        default="online",
        help="score files only: LiRA online or offline test; '-fixed': one variance pooled over "
        "targets (default online); 'global': one threshold for every target, which needs no "
        "reference model: the scores of one model (--target-model) of its members and "
        "non-members read as a whole ROC (a Gaussian-DP posterior)",
    )
    g.add_argument(
        "--target-model",
        type=_number(int, 0),
        default=0,
        metavar="N",
        help="--score-method global: the model (row) whose scores form the ROC (default 0, "
        "Privacy Meter's first target model)",
    )
    g.add_argument(
        "--epoch",
        type=_epoch,
        default=None,
        metavar="N|last",
        help="LiRA folders only: the epoch of scores/<epoch>.npy to read from every model, or "
        "'last' for each model's own last epoch (default: the last; when the models' last "
        "epochs differ, each model's own last if its checkpoints show that it finished or "
        "stopped early, else an error naming the models)",
    )
    g.add_argument(
        "--signals",
        default=None,
        metavar="NAME",
        help="Privacy Meter folders only: the signal file in signals/ to read when there are "
        "several (e.g. rmia_signals.npy)",
    )
    g.add_argument(
        "--indices",
        default=None,
        metavar="FILE",
        help="Privacy Meter folders only: the dataset indices of the audited samples, in the "
        "order of the signal rows (.npy array, or text: integers separated by commas, spaces "
        "or new lines), for an audit of a subset (audit.data_size) whose files do not say "
        "which samples",
    )
    g.add_argument(
        "--select",
        action="append",
        type=_key_value,
        default=None,
        metavar="KEY=VALUE",
        help="result folders: read only the runs whose records have this value (repeatable): "
        "LiRA's hparams.json (e.g. arch=wrn28-2), the PyTorch port's model.pt layout "
        "(weights_bytes=N), Privacy Meter's models_metadata.json (model_name=...), "
        "privacy-estimates' dp_parameters.json (noise_multiplier=...); runs recorded "
        "differently are refused unless one group is selected",
    )
    g.add_argument(
        "--skip-one-sided",
        action="store_true",
        help="LiRA and Privacy Meter folders: drop the targets that no model trained on, or "
        "that every model did (e.g. LiRA --only_subset), and say how many; without it they "
        "are an error",
    )
    g.add_argument(
        "--same-challenges",
        choices=("roc", "independent"),
        default=None,
        help="privacy-estimates attack results: files with the same challenge totals are one "
        "game at several thresholds ('roc': read as one whole ROC, a Gaussian-DP posterior) "
        "or independent games of equal size ('independent': one base per file); without it "
        "they are an error",
    )
    g.add_argument(
        "--focus-targets",
        default=None,
        metavar="FILE",
        help="score files and LiRA/Privacy Meter folders: the targets declared before the audit "
        "(canaries), as columns of the score matrix (.npy array of columns or a boolean mask, "
        "or text: integers separated by commas, spaces or new lines): the guessing game's "
        "candidates; with --evidence targets the claim's per-target bound gives them 90%% of "
        "its error (weighted Bonferroni), so targets that show nothing cost them little",
    )
    g.add_argument(
        "--direction",
        choices=("auto", "higher", "lower"),
        default="auto",
        help="LiRA and Privacy Meter folders, privacy-estimates scores: whether higher or lower "
        "scores mean member (default auto: detected from the IN and OUT means, and printed)",
    )


#: the options that only result folders take, with their defaults
FOLDER_OPTIONS = {
    "--epoch": ("epoch", None),
    "--signals": ("signals", None),
    "--indices": ("indices", None),
    "--select": ("select", None),
    "--skip-one-sided": ("skip_one_sided", False),
    "--same-challenges": ("same_challenges", None),
}


def check_folder_options(args, what: str) -> None:
    """Refuse the result-folder options given with an input that is not a result folder."""
    given = [o for o, (a, d) in FOLDER_OPTIONS.items() if getattr(args, a, d) not in (d, [])]
    if given:
        raise InputError(
            f"{given[0]} applies to result folders only (LiRA: --epoch, --select, "
            "--skip-one-sided; Privacy Meter: --signals, --indices, --select, --skip-one-sided; "
            f"privacy-estimates: --select, --same-challenges); {args.counts} is {what}"
        )
    if getattr(args, "evidence", "game") != "game" and what == "a counts file":
        raise InputError(
            f"--evidence {args.evidence} applies to score files and LiRA/Privacy Meter folders; "
            f"{args.counts} is {what}"
        )
    if getattr(args, "score_method", "online") == "global" and what != "a score file":
        raise InputError(
            f"--score-method global applies to score files and result folders; {args.counts} "
            f"is {what}"
        )


def mia_groups(args, kind: str, log, extras: dict | None = None) -> list:
    """Evidence of a score matrix or result folder, read by mia's readers (bayes_dp.io).

    ``extras["companion"]`` receives the frequentist bounds of a score matrix, ``extras
    ["in_out"]`` the in- and out-scores of a whole-ROC input read from scores. The list holds
    :class:`~bayes_dp.Evidence` (counts) or :class:`~bayes_dp.GdpEvidence` (whole ROCs).
    """
    paths = [args.counts, *args.more_counts] if args.more_counts else args.counts
    return evidence_from_mia(
        paths,
        kind,
        alpha=args.alpha,
        score_method=args.score_method,
        epoch=args.epoch,
        signals=args.signals,
        indices=args.indices,
        select=args.select,
        skip_one_sided=args.skip_one_sided,
        same_challenges=args.same_challenges,
        target_model=args.target_model,
        bins=getattr(args, "bins", None),
        direction=args.direction,
        log=log,
        delta=args.delta,
        extras=extras,
        focus=args.focus_targets,
        evidence=args.evidence,
    )
