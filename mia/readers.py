"""Read the files that LiRA, Privacy Meter and privacy-estimates write (issue 23).

* :func:`read_lira_runs`: the LiRA reference code (Carlini et al. 2022,
  ``tensorflow/privacy`` ``research/mi_lira_2021``): one folder per model, ``experiment-*``,
  holding ``keep.npy`` (bool, one entry per example: trained on it) and
  ``scores/<epoch>.npy`` (examples x augmentations, the logit-scaled confidence
  log(p / (1 - p)) of the true label).
* :func:`read_privacy_meter`: Privacy Meter (``privacytrustlab/ml_privacy_meter``):
  ``models/memberships.npy`` (models x samples, bool) and ``signals/<algorithm>_signals.npy``
  (samples x models, the probability of the true label), turned into LiRA's logit scale.
* :func:`read_attack_results`: privacy-estimates (``microsoft/privacy-estimates``)
  attack-results JSON files, ``{"FN": .., "FP": .., "TN": .., "TP": ..}``, one per challenge
  base, into :class:`bayes_dp.AttackCounts`.

The first two return a :class:`ScoreRun` (scores, keep, the score direction and where it came
from); ``run.counts(alpha)`` hands them to :func:`mia.counts_from_score_matrix`. The layouts were
read from the projects' own code; ``docs/lira.md`` ("Reading result folders") lists them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bayes_dp.core.observations import AttackCounts

__all__ = ["ScoreRun", "read_attack_results", "read_lira_runs", "read_privacy_meter"]

_DIRECTIONS = ("auto", "higher", "lower")


@dataclass(frozen=True, eq=False)
class ScoreRun:
    """Scores of every (model, target) and who trained on what, as read from a result folder.

    Attributes
    ----------
    scores : numpy.ndarray of float, shape (n_models, n_targets) or (n_models, n_targets, n_augs)
        The attack's scores (LiRA's logit-scaled confidences for both readers).
    keep : numpy.ndarray of bool, shape (n_models, n_targets)
        True where the model trained on the target (IN).
    direction : {"higher", "lower"}
        Whether higher or lower scores indicate membership.
    direction_source : str
        How ``direction`` was set: ``"given"``, or ``"detected: ..."`` with the evidence.
    source : str
        The layout and folder read.
    models : list of str
        The file or folder behind each row, in order.
    notes : list of str
        What the reader did that a user should know (e.g. keep masks truncated).
    """

    scores: np.ndarray
    keep: np.ndarray
    direction: str
    direction_source: str
    source: str
    models: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def counts(self, alpha: float, method: str = "online", **kwargs):
        """Cross-fed counts of these scores: :func:`mia.counts_from_score_matrix`.

        With ``method="offline"`` the membership side is this run's ``direction`` unless
        ``side`` is given. Other keyword arguments go to ``counts_from_score_matrix``.
        """
        from .scores import counts_from_score_matrix

        if method == "offline" and "side" not in kwargs:
            kwargs["side"] = "greater" if self.direction == "higher" else "less"
        return counts_from_score_matrix(self.scores, self.keep, alpha, method, **kwargs)

    def describe(self) -> str:
        """One line: what was read, its shape and the score direction."""
        m, t = self.keep.shape
        aug = f" x {self.scores.shape[2]} augmentations" if self.scores.ndim == 3 else ""
        return (
            f"{self.source}: {m} models x {t} targets{aug}; higher = member"
            if self.direction == "higher"
            else f"{self.source}: {m} models x {t} targets{aug}; lower = member"
        ) + f" ({self.direction_source})"


def _check_direction(direction) -> str:
    if direction not in _DIRECTIONS:
        raise ValueError(f"`direction` must be one of {_DIRECTIONS}; found {direction!r}")
    return direction


def _load_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"{str(path)!r} could not be read as a .npy array ({e})") from None


def _finite(arr: np.ndarray, path: Path, what: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{str(path)!r}: {what} must be finite; found {float(arr[idx])!r} at index {idx} "
            f"({int(bad.sum())} non-finite value(s) in all)"
        )


def _check_in_out(keep: np.ndarray, where: str) -> None:
    n_in = keep.sum(axis=0)
    for cond, side in ((n_in == 0, "IN"), (n_in == keep.shape[0], "OUT")):
        t = np.flatnonzero(cond)
        if t.size:
            shown = ", ".join(str(int(v)) for v in t[:5])
            more = f" and {t.size - 5} more" if t.size > 5 else ""
            raise ValueError(
                f"{where}: target(s) {shown}{more} have no {side} model among the "
                f"{keep.shape[0]} models; every target needs both (train more models, or drop "
                "those targets)"
            )


def _score_run(scores, keep, direction: str, *, fmt, where, source, models, notes=()):
    """Check that every target has IN and OUT models, set the direction, build the ScoreRun.

    Both formats read here score with higher = member (logit-scaled confidences).
    """
    _check_in_out(keep, where)
    d, how = _direction(scores, keep, direction, "higher", fmt)
    return ScoreRun(scores, keep, d, how, source, list(models), list(notes))


def _direction(scores: np.ndarray, keep: np.ndarray, direction: str, known: str, src: str):
    """Return (direction, how it was set): given, or the sign of mean IN - mean OUT."""
    if direction != "auto":
        return direction, "given"
    x = scores.mean(axis=2) if scores.ndim == 3 else scores
    n_in = keep.sum(axis=0)
    m_in = np.where(keep, x, 0.0).sum(axis=0) / n_in
    m_out = np.where(keep, 0.0, x).sum(axis=0) / (keep.shape[0] - n_in)
    diff = float(np.mean(m_in - m_out))
    found = "higher" if diff > 0 else "lower"
    how = f"detected: mean IN - OUT score {diff:+.3g} over targets"
    if found != known:
        how += f"; {src} scores usually have {known} = member"
    return found, how


def _epoch_files(folder: Path) -> dict[int, Path]:
    out = {}
    for f in (folder / "scores").glob("*.npy"):
        try:
            out[int(f.stem)] = f
        except ValueError:
            continue
    return out


def read_lira_runs(directory, epoch: int | None = None, *, direction: str = "auto") -> ScoreRun:
    """Read the score folders of the LiRA reference code (``experiment-*``).

    Parameters
    ----------
    directory : str or path-like
        The folder holding one sub-folder per model whose name starts with ``experiment``
        (e.g. ``exp/cifar10``); each has ``keep.npy`` and ``scores/<epoch>.npy`` (``score.py``
        of the reference code writes them), with the epoch as the file's name (integer).
    epoch : int, optional
        The epoch to read; default the last one (the largest number every model has).
    direction : {"auto", "higher", "lower"}
        Whether higher scores mean member. ``"auto"`` (default) takes the sign of the mean over
        targets of (mean IN score - mean OUT score) and says so in ``direction_source``
        (LiRA's logit scores have higher = member).

    Returns
    -------
    ScoreRun
        ``scores`` (models, targets, augmentations) and ``keep`` (models, targets), models in
        the sorted order of their folder names.

    Raises
    ------
    FileNotFoundError
        When ``directory`` or a model's ``keep.npy`` does not exist.
    ValueError
        Naming the file and the problem: no ``experiment-*`` folder, an epoch missing, shapes
        that disagree, non-finite scores, a target with no IN or no OUT model.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> rng = np.random.default_rng(0)
    >>> for m in range(4):
    ...     keep = (np.arange(6) + m) % 2 == 0  # every target IN for 2 of the 4 models
    ...     (root / f"experiment-{m}" / "scores").mkdir(parents=True)
    ...     np.save(root / f"experiment-{m}" / "keep.npy", keep)
    ...     scores = rng.normal(0, 1, (6, 2)) + 3.0 * keep[:, None]
    ...     np.save(root / f"experiment-{m}" / "scores" / "0000000100.npy", scores)
    >>> run = read_lira_runs(root)
    >>> run.scores.shape, run.keep.shape, run.direction
    ((4, 6, 2), (4, 6), 'higher')
    """
    _check_direction(direction)
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"`directory` is not a folder: {str(root)!r}")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("experiment"))
    if not folders:
        raise ValueError(
            f"{str(root)!r} has no 'experiment-*' folder (the LiRA reference layout: one folder "
            "per model with keep.npy and scores/<epoch>.npy)"
        )
    epochs = {f: _epoch_files(f) for f in folders}
    if epoch is None:
        empty = [f for f in folders if not epochs[f]]
        if empty:
            raise ValueError(
                f"{str(empty[0] / 'scores')!r} holds no <epoch>.npy score file (run the "
                "reference code's score.py first)"
            )
        common = set.intersection(*(set(e) for e in epochs.values()))
        if not common:
            raise ValueError(
                f"no epoch has scores for every model under {str(root)!r}; give `epoch`"
            )
        epoch = max(common)
    elif not isinstance(epoch, (int, np.integer)) or isinstance(epoch, bool):
        raise TypeError(f"`epoch` must be an int or None; found {epoch!r}")
    scores, keep, notes = [], [], []
    for f in folders:
        path = epochs[f].get(int(epoch))
        if path is None:
            have = ", ".join(str(e) for e in sorted(epochs[f])) or "none"
            raise ValueError(
                f"{str(f / 'scores')!r}: no scores for epoch {epoch} (epochs found: {have})"
            )
        kp = f / "keep.npy"
        if not kp.is_file():
            raise FileNotFoundError(f"{str(kp)!r} does not exist (each model folder needs it)")
        s = np.asarray(_load_npy(path), dtype=np.float64)
        if s.ndim == 1:
            s = s[:, None]
        if s.ndim != 2:
            raise ValueError(
                f"{str(path)!r}: scores must have shape (targets, augmentations); found {s.shape}"
            )
        _finite(s, path, "scores")
        k = _load_npy(kp)
        if k.ndim != 1 or k.dtype.kind not in "bui":
            raise ValueError(
                f"{str(kp)!r}: keep must be a 1-d bool array; found {k.dtype} {k.shape}"
            )
        if k.size < s.shape[0]:
            raise ValueError(
                f"{str(kp)!r} has {k.size} entries but {str(path)!r} scores {s.shape[0]} targets"
            )
        if k.size > s.shape[0] and not notes:
            notes.append(
                f"keep.npy has {k.size} entries and the scores {s.shape[0]}: the first "
                f"{s.shape[0]} entries were used (as the reference code does)"
            )
        if scores and s.shape != scores[0].shape:
            raise ValueError(
                f"{str(path)!r} has shape {s.shape} but {str(folders[0])!r}'s scores have "
                f"{scores[0].shape}; every model must score the same targets"
            )
        scores.append(s)
        keep.append(k[: s.shape[0]].astype(bool))
    return _score_run(
        np.stack(scores),
        np.stack(keep),
        direction,
        fmt="LiRA",
        where=f"keep.npy under {str(root)!r}",
        source=f"LiRA runs in {str(root)!r}, epoch {epoch}",
        models=[f.name for f in folders],
        notes=notes,
    )


def _logit(p: np.ndarray) -> np.ndarray:
    """LiRA's scaling log(p / (1 - p)), p clipped to [smallest normal double, 1 - 2**-53]."""
    tiny = np.finfo(np.float64).tiny
    q = np.clip(p, tiny, np.nextafter(1.0, 0.0))
    return np.log(q) - np.log1p(-q)


def read_privacy_meter(
    directory, *, signals: str | None = None, direction: str = "auto"
) -> ScoreRun:
    """Read a Privacy Meter run: ``models/memberships.npy`` and ``signals/*_signals.npy``.

    Parameters
    ----------
    directory : str or path-like
        Privacy Meter's log folder, holding ``models/memberships.npy`` (models x samples, which
        samples each model trained on) and ``signals/<algorithm>_signals.npy`` (samples x
        models, the probability each model gives the true label; ``*_signals_pop.npy``
        population files are not targets and are ignored).
    signals : str, optional
        The signal file's name in ``signals/`` when there are several.
    direction : {"auto", "higher", "lower"}
        As in :func:`read_lira_runs` (probabilities of the true label: higher = member).

    Returns
    -------
    ScoreRun
        ``scores`` = log(p / (1 - p)) (LiRA's logit scaling, p moved just inside (0, 1)),
        shape (models, samples), and ``keep`` (models, samples).

    Raises
    ------
    FileNotFoundError
        When a file is missing.
    ValueError
        Naming the file and the problem: several signal files and none chosen, shapes that
        disagree, probabilities outside [0, 1] or NaN, a sample with no IN or no OUT model.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "models").mkdir(); (root / "signals").mkdir()
    >>> member = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=bool)
    >>> np.save(root / "models" / "memberships.npy", member)
    >>> np.save(root / "signals" / "lira_signals.npy", np.where(member.T, 0.9, 0.5))
    >>> run = read_privacy_meter(root)
    >>> run.scores.round(3)[:, 0].tolist()  # log(0.9 / 0.1), log(0.5 / 0.5), ...
    [2.197, 0.0, 2.197, 0.0]
    """
    _check_direction(direction)
    root = Path(directory)
    mp = root / "models" / "memberships.npy"
    if not mp.is_file():
        raise FileNotFoundError(f"{str(mp)!r} does not exist (Privacy Meter's membership matrix)")
    sdir = root / "signals"
    if signals is None:
        found = sorted(p for p in sdir.glob("*_signals.npy")) if sdir.is_dir() else []
        if not found:
            raise FileNotFoundError(f"no signals/*_signals.npy file under {str(root)!r}")
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            raise ValueError(f"{str(sdir)!r} holds several signal files ({names}); give `signals`")
        sp = found[0]
    else:
        sp = sdir / signals
        if not sp.is_file():
            raise FileNotFoundError(f"{str(sp)!r} does not exist")
    member = _load_npy(mp)
    if member.ndim != 2:
        raise ValueError(f"{str(mp)!r}: must be 2-d (models, samples); found shape {member.shape}")
    if member.dtype.kind not in "bui" and not np.isin(member, (0, 1)).all():
        raise ValueError(f"{str(mp)!r}: must hold only True/False or 0/1")
    p = np.asarray(_load_npy(sp), dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"{str(sp)!r}: must be 2-d (samples, models); found shape {p.shape}")
    if p.shape != member.T.shape:
        raise ValueError(
            f"{str(sp)!r} has shape {p.shape} (samples, models) but {str(mp)!r} has "
            f"{member.shape} (models, samples); they must match (when Privacy Meter audited a "
            "subset of the samples, pass its memberships restricted to that subset)"
        )
    _finite(p, sp, "signals")
    if (p < 0).any() or (p > 1).any():
        i = tuple(int(v) for v in np.argwhere((p < 0) | (p > 1))[0])
        raise ValueError(
            f"{str(sp)!r}: signals must be probabilities of the true label in [0, 1]; found "
            f"{float(p[i])!r} at index {i}"
        )
    return _score_run(
        _logit(p.T),
        member.astype(bool),
        direction,
        fmt="Privacy Meter",
        where=str(mp),
        source=f"Privacy Meter run in {str(root)!r} ({sp.name}, logit-scaled)",
        models=[f"model {i}" for i in range(member.shape[0])],
    )


_FIELDS = ("FN", "FP", "TN", "TP")


def read_attack_results(paths) -> AttackCounts:
    """Read privacy-estimates attack-results JSON files into counts, one base per file.

    Parameters
    ----------
    paths : str, path-like, or a sequence of them
        A folder (every ``*.json`` in it, in sorted order) or the files. Each holds one JSON
        object with the integer fields ``FN``, ``FP``, ``TN``, ``TP`` (privacy-estimates'
        ``AttackResults``).

    Returns
    -------
    bayes_dp.AttackCounts
        Per file: ``fp = FP`` of ``n_neg = FP + TN`` non-members, ``fn = FN`` of
        ``n_pos = FN + TP`` members.

    Raises
    ------
    FileNotFoundError, ValueError
        Naming the file: missing, not JSON, a field missing or not a non-negative integer, no
        member or no non-member.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "base_0.json").write_text(json.dumps({"FN": 25, "FP": 4, "TN": 96, "TP": 75}))
    >>> counts = read_attack_results(root)
    >>> counts.fp.tolist(), counts.n_neg.tolist(), counts.fn.tolist(), counts.n_pos.tolist()
    ([4], [100], [25], [100])
    """
    if isinstance(paths, (str, Path)):
        root = Path(paths)
        if root.is_dir():
            files = sorted(root.glob("*.json"))
            if not files:
                raise ValueError(f"{str(root)!r} holds no *.json attack-results file")
        else:
            files = [root]
    else:
        files = [Path(p) for p in paths]
        if not files:
            raise ValueError("`paths` is empty")
    rows = []
    for f in files:
        if not f.is_file():
            raise FileNotFoundError(f"{str(f)!r} does not exist")
        try:
            obj = json.loads(f.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{str(f)!r} is not a JSON file ({e})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{str(f)!r}: expected an object with FN, FP, TN, TP")
        vals = {}
        for k in _FIELDS:
            v = obj.get(k)
            if v is None:
                raise ValueError(f"{str(f)!r}: field {k!r} is missing (need FN, FP, TN, TP)")
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{str(f)!r}: {k} must be a non-negative integer; found {v!r}")
            vals[k] = v
        if vals["FP"] + vals["TN"] == 0 or vals["FN"] + vals["TP"] == 0:
            raise ValueError(
                f"{str(f)!r}: a challenge base needs members and non-members; found FP + TN = "
                f"{vals['FP'] + vals['TN']}, FN + TP = {vals['FN'] + vals['TP']}"
            )
        rows.append(vals)
    return AttackCounts(
        fp=[r["FP"] for r in rows],
        n_neg=[r["FP"] + r["TN"] for r in rows],
        fn=[r["FN"] for r in rows],
        n_pos=[r["FN"] + r["TP"] for r in rows],
    )
