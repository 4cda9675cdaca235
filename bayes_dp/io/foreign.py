"""The one entry into ``mia`` for inputs that ``mia``'s own readers read.

Score matrices (``mia.read_score_file``) and result folders of the LiRA reference code, Privacy
Meter and privacy-estimates (``mia.read_results``) become :class:`~bayes_dp.Evidence` here:
score matrices through ``mia.counts_from_score_matrix`` (one binomial group,
docs/validation/lira.md).
``mia`` builds on ``bayes_dp``, so it is imported lazily, inside :func:`evidence_from_mia`
only (``tests/project/test_conventions.py`` allows that one function).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def evidence_from_mia(
    paths,
    kind: str,
    *,
    alpha: float = 0.1,
    score_method: str = "online",
    epoch: int | None = None,
    signals: str | None = None,
    indices=None,
    direction: str = "auto",
    log: Callable[[str], None] | None = None,
    delta: float | None = None,
    extras: dict | None = None,
    focus=None,
) -> list:
    """Read a score matrix or result folder with ``mia`` and return its evidence.

    Parameters
    ----------
    paths : str, path-like, or a list of them
        The input (several only for privacy-estimates files).
    kind : {"score_matrix", "result_folder", "attack_results"}
        As :func:`bayes_dp.io.detect_input` says.
    alpha, score_method
        The membership test of score matrices and score folders: type-I error, and
        "online", "offline", "online-fixed" or "offline-fixed" (``-fixed``: one variance
        pooled over targets).
    epoch, signals, indices, direction
        As in :func:`mia.read_results`.
    log : callable, optional
        Receives one line per thing read and per note of the reader (default: none).
    delta : float, optional
        With ``extras``: the delta of the frequentist companion bounds of a score matrix.
    extras : dict, optional
        Receives ``"companion"``: :func:`mia.bounds.companion_bounds` of the counted scores at
        ``delta`` (score matrices and score folders only).
    focus : array_like or str or path-like, optional
        Score matrices and score folders: the targets declared before the audit
        (``mia.ScoreMatrixCounts.to_evidence(focus=...)``).

    Returns
    -------
    list of Evidence
        One group: "attack" for privacy-estimates counts, "lira" for counted scores.
    """
    import mia
    from bayes_dp.core.evidence import Evidence

    say = log if log is not None else (lambda msg: None)
    if kind == "score_matrix":
        scores, keep = mia.read_score_file(paths)
        side = "auto"
    elif kind in ("result_folder", "attack_results"):
        run = mia.read_results(
            paths, epoch=epoch, signals=signals, indices=indices, direction=direction
        )
        for note in run.notes:
            say(note)
        if isinstance(run, mia.AttackResultsRun):
            shown = ", ".join(str(f) for f in run.files)
            say(f"privacy-estimates attack results: {len(run.counts)} challenge bases from {shown}")
            if focus is not None:
                raise ValueError(
                    "`focus` (--focus-targets) applies to score matrices and score folders; "
                    f"found privacy-estimates attack results ({shown})"
                )
            return [Evidence(run.counts, name="attack")]
        say(f"read {run.describe()}")
        scores, keep = run.scores, run.keep
        side = "greater" if run.direction == "higher" else "less"
    else:
        raise ValueError(
            f"`kind` must be 'score_matrix', 'result_folder' or 'attack_results'; found {kind!r}"
        )
    method, _, fixed = score_method.partition("-")
    res = mia.counts_from_score_matrix(
        scores,
        keep,
        alpha,
        method,
        fixed_variance=bool(fixed),
        skip=True,
        side=side if method == "offline" else "auto",
    )
    say(
        f"scores of {keep.shape[1]} targets under {keep.shape[0]} models: "
        f"{score_method} test at alpha={res.alpha:g}, {len(res.counts)} targets counted, "
        f"{res.n_skipped} skipped (too few IN/OUT models or no spread)"
    )
    if res.dependence is not None:
        say(f"dependence of the pooled counts: {res.dependence!r}")
    if extras is not None and delta is not None:
        from mia.bounds import companion_bounds

        extras["companion"] = companion_bounds(res, delta=delta, scores=scores, keep=keep)
    evidence = res.to_evidence(name="lira", focus=focus)
    if focus is not None:
        declared = evidence.dependence["focus_targets"]
        counted = np.isin(declared, res.targets).sum()
        say(f"targets declared in advance: {len(declared)}, of which {counted} counted")
    return [evidence]
