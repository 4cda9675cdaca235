"""Which tool wrote a path, and :func:`read_results`, which reads any of them.

:func:`detect_format` is the only function that tells the tools' outputs apart (the folder
layouts of LiRA, its PyTorch port, Privacy Meter and privacy-estimates). Which kind of input a
path of ``bayes-dp estimate`` is (counts, Gaussian-DP scores, a one-run file, a score matrix, a
result folder) is decided before, by :func:`bayes_dp.io.detect_input`, which sends result
folders here; the signature of a privacy-estimates attack result, which both need, is defined
there (:func:`bayes_dp.io.is_attack_results`) and read by :mod:`mia.readers.privacy_estimates`,
since imports flow mia -> bayes_dp and bayes_dp imports mia only to read (in
``bayes_dp.io.foreign.evidence_from_mia``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .lira import looks_like_lira, read_lira_pytorch, read_lira_runs
from .privacy_estimates import (
    challenge_parts,
    read_attack_results_run,
    read_challenge_scores,
)
from .privacy_meter import read_privacy_meter

#: The layouts :func:`read_results` recognises.
FORMATS = ("lira", "lira_pytorch", "privacy_meter", "attack_results", "challenge_scores")

FORMAT_NAMES = {
    "lira": "LiRA runs",
    "lira_pytorch": "LiRA PyTorch port runs",
    "privacy_meter": "a Privacy Meter run",
    "attack_results": "privacy-estimates attack results",
    "challenge_scores": "privacy-estimates scores and challenge bits",
}

#: which options each format takes
TAKES = {
    "lira": {"epoch", "select", "skip_one_sided", "direction"},
    "lira_pytorch": {"select", "skip_one_sided", "direction"},
    "privacy_meter": {"signals", "indices", "select", "skip_one_sided", "direction"},
    "attack_results": {"select", "same_challenges"},
    "challenge_scores": {"direction"},
}
#: the command-line spelling of each option
OPTION_FLAGS = {
    "epoch": "--epoch",
    "signals": "--signals",
    "indices": "--indices",
    "select": "--select",
    "skip_one_sided": "--skip-one-sided",
    "same_challenges": "--same-challenges",
    "direction": "--direction",
}


def detect_format(paths) -> str:
    """Which tool wrote ``paths``: one of :data:`FORMATS`.

    A folder with ``models/memberships.npy`` is Privacy Meter's; one with ``scores`` and
    ``challenge_bits`` (dataset folders or JSON Lines) privacy-estimates' pipeline output; one
    with ``experiment*`` (or ``--tunename``) model folders at any depth the LiRA reference
    code's; one with ``<id>/keep.npy`` and ``scores.npy`` the LiRA PyTorch port's; a folder of
    ``*.json`` files (in it or one level down), one ``.json`` file or a list of them
    privacy-estimates' attack results. Raises ``FileNotFoundError`` for a path that does not
    exist and ``ValueError`` naming the path otherwise.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "r.json").write_text(json.dumps({"FN": 25, "FP": 4, "TN": 96, "TP": 75}))
    >>> detect_format(root), detect_format(root / "r.json")
    ('attack_results', 'attack_results')
    >>> (root / "exp" / "cifar10" / "experiment-0_2").mkdir(parents=True)
    >>> _ = (root / "exp" / "cifar10" / "experiment-0_2" / "hparams.json").write_text("{}")
    >>> detect_format(root / "exp")
    'lira'
    """
    if not isinstance(paths, (str, os.PathLike)):
        for p in paths:
            if not Path(p).exists():
                raise FileNotFoundError(f"no such file or folder: {str(p)!r}")
        return "attack_results"
    path = Path(paths)
    if not path.exists():
        raise FileNotFoundError(f"no such file or folder: {str(path)!r}")
    if path.is_dir():
        if (path / "models" / "memberships.npy").is_file():
            return "privacy_meter"
        if challenge_parts(path) is not None:
            return "challenge_scores"
        lira = looks_like_lira(path)
        if lira:
            return lira
        if any(path.glob("*.json")) or any(path.glob("*/*.json")):
            return "attack_results"
        raise ValueError(
            f"{str(path)!r} is a folder but none that this command reads: expected LiRA's "
            "experiment-*/ folders (or the PyTorch port's <id>/keep.npy with scores.npy), "
            "Privacy Meter's models/memberships.npy with signals/, privacy-estimates attack-"
            "results *.json files, or its scores and challenge_bits"
        )
    if path.suffix.lower() == ".json":
        return "attack_results"
    raise ValueError(f"{str(path)!r} is neither a result folder nor a privacy-estimates .json file")


def read_results(
    paths,
    *,
    epoch: int | str | None = None,
    signals: str | None = None,
    indices=None,
    select=None,
    skip_one_sided: bool = False,
    same_challenges: str | None = None,
    direction: str = "auto",
):
    """Read what LiRA, Privacy Meter or privacy-estimates wrote, detecting which.

    Parameters
    ----------
    paths : str, path-like, or a sequence of them
        A result folder of any of the tools, one privacy-estimates ``.json`` file, or several
        (:func:`detect_format`).
    epoch : int, "last" or None
        LiRA reference code only: as in :func:`mia.read_lira_runs`.
    signals, indices : optional
        Privacy Meter only: as in :func:`mia.read_privacy_meter`.
    select : dict or list of str, optional
        Read only the runs whose records have these values (LiRA ``hparams.json``; the PyTorch
        port's ``model.pt`` layout; Privacy Meter's ``models_metadata.json``;
        privacy-estimates' ``dp_parameters.json``).
    skip_one_sided : bool
        LiRA and Privacy Meter: drop targets without IN or without OUT models, with a count.
    same_challenges : {None, "roc", "independent"}
        privacy-estimates attack results: as in :func:`mia.read_attack_results_run`.
    direction : {"auto", "higher", "lower"}
        Score runs and challenge scores: whether higher scores mean member.

    Returns
    -------
    ScoreRun, AttackResultsRun or ChallengeScores
        Scores and memberships (LiRA, Privacy Meter), counts or ROCs (privacy-estimates attack
        results), or one score and bit per challenge (privacy-estimates' pipeline).

    Raises
    ------
    FileNotFoundError
        "no such file or folder: <path>".
    ValueError
        For an option given to a format that does not take it, or as the format's reader.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "attack_results_0.json").write_text(
    ...     json.dumps({"FN": 25, "FP": 4, "TN": 96, "TP": 75})
    ... )
    >>> _ = (root / "dp_parameters.json").write_text(json.dumps({"noise_multiplier": 1.1}))
    >>> run = read_results(root)
    >>> run.counts.fp.tolist(), [f.name for f in run.files]
    ([4], ['attack_results_0.json'])
    >>> run.notes[0][:32]
    'skipped 1 JSON file(s) without F'
    """
    fmt = detect_format(paths)
    given = {
        "epoch": epoch is not None,
        "signals": signals is not None,
        "indices": indices is not None,
        "select": bool(select),
        "skip_one_sided": bool(skip_one_sided),
        "same_challenges": same_challenges is not None,
        "direction": direction != "auto",
    }
    extra = [k for k, v in given.items() if v and k not in TAKES[fmt]]
    if extra:
        k = extra[0]
        where = [FORMAT_NAMES[f] for f in FORMATS if k in TAKES[f]]
        raise ValueError(
            f"`{k}` does not apply to {FORMAT_NAMES[fmt]} ({paths!s}); it ({OPTION_FLAGS[k]} on "
            f"the command line) applies to {', '.join(where)}"
        )
    if fmt == "lira":
        return read_lira_runs(
            paths, epoch, select=select, skip_one_sided=skip_one_sided, direction=direction
        )
    if fmt == "lira_pytorch":
        return read_lira_pytorch(
            paths, select=select, skip_one_sided=skip_one_sided, direction=direction
        )
    if fmt == "privacy_meter":
        return read_privacy_meter(
            paths,
            signals=signals,
            indices=indices,
            select=select,
            skip_one_sided=skip_one_sided,
            direction=direction,
        )
    if fmt == "challenge_scores":
        return read_challenge_scores(paths, direction=direction)
    return read_attack_results_run(paths, select=select, same_challenges=same_challenges)
