"""Read the files that LiRA, Privacy Meter and privacy-estimates write.

* :func:`read_lira_runs`: the LiRA reference code (Carlini et al. 2022,
  ``tensorflow/privacy`` ``research/mi_lira_2021``): one folder per model, ``experiment-*``
  (``train.py``), holding ``keep.npy`` (bool, one entry per example: trained on it) and
  ``scores/<epoch>.npy`` (``score.py``: examples x augmentations, the logit-scaled
  confidence log(p / (1 - p)) of the true label; the epoch zero-padded to 10 digits).
* :func:`read_privacy_meter`: Privacy Meter 2.0 (``privacytrustlab/ml_privacy_meter``):
  ``models/memberships.npy`` (models x samples, bool) and ``signals/<algorithm>_signals.npy``
  (audited samples x models, float32, the probability of the true label), turned into
  LiRA's logit scale; the audited subset is found from the files or given as ``indices``.
* :func:`read_attack_results`: privacy-estimates (``microsoft/responsible-ai-toolbox-privacy``)
  attack-results JSON files, ``{"FN": .., "FP": .., "TN": .., "TP": ..}``
  (``AttackResults.to_json``), one per challenge base, into :class:`bayes_dp.AttackCounts`.
* :func:`read_results`: any of the three, the format detected by :func:`detect_format`; the
  ``bayes-dp`` command line reads result folders through it.

The first two return a :class:`ScoreRun` (scores, keep, the score direction and where it came
from); ``run.counts(alpha)`` hands them to :func:`mia.counts_from_score_matrix`. The layouts were
read from the projects' own code; ``docs/validation/lira.md`` ("Reading result folders") lists them
with
the file and function that writes each.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bayes_dp.core.observations import AttackCounts

__all__ = [
    "AttackResultsRun",
    "ScoreRun",
    "detect_format",
    "is_attack_results",
    "read_attack_results",
    "read_lira_runs",
    "read_privacy_meter",
    "read_results",
]

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
        What the reader did that a user should know (e.g. keep masks truncated, folders
        skipped, which samples were audited).
    samples : numpy.ndarray of int or None
        The dataset index of each target (column of ``keep``), None when the files do not say.
    """

    scores: np.ndarray
    keep: np.ndarray
    direction: str
    direction_source: str
    source: str
    models: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    samples: np.ndarray | None = None

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


def _score_run(scores, keep, direction: str, *, fmt, where, source, models, notes=(), samples=None):
    """Check that every target has IN and OUT models, set the direction, build the ScoreRun.

    Both formats read here score with higher = member (logit-scaled confidences).
    """
    _check_in_out(keep, where)
    d, how = _direction(scores, keep, direction, "higher", fmt)
    return ScoreRun(scores, keep, d, how, source, list(models), list(notes), samples)


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
    sdir = folder / "scores"
    if not sdir.is_dir():
        return out
    for f in sdir.glob("*.npy"):
        try:
            out[int(f.stem)] = f
        except ValueError:
            continue
    return out


def _names(items, limit: int = 5) -> str:
    items = [str(i) for i in items]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _experiment_folders(root: Path) -> tuple[list[Path], list[str]]:
    """Find the ``experiment*`` folders under ``root`` at any depth, as ``plot.py`` walks.

    They must lie in one parent folder; a note says so when that parent is below ``root``.
    """
    found = []
    for dirpath, dirnames, _ in os.walk(root):
        here = [d for d in dirnames if d.startswith("experiment")]
        found += [Path(dirpath) / d for d in here]
        dirnames[:] = [d for d in dirnames if not d.startswith("experiment")]  # not inside one
    if not found:
        raise ValueError(
            f"{str(root)!r} has no 'experiment-*' folder at any depth (the LiRA reference "
            "layout: one folder per model with keep.npy and scores/<epoch>.npy)"
        )
    parents = sorted({f.parent for f in found})
    if len(parents) > 1:
        raise ValueError(
            f"{str(root)!r} holds 'experiment-*' folders in {len(parents)} folders "
            f"({_names(str(p) for p in parents)}): runs of different experiments must not be "
            "mixed; give one of them"
        )
    notes = []
    if parents[0] != root:
        notes.append(f"the experiment-* folders were found in {str(parents[0])!r}")
    return sorted(found), notes


def _check_keep_mask(k: np.ndarray, kp: Path, n_scored: int) -> None:
    """Refuse a keep.npy that is not a 1-d 0/1 mask, naming member indices as such."""
    if k.ndim != 1 or k.dtype.kind not in "bui":
        raise ValueError(f"{str(kp)!r}: keep must be a 1-d bool array; found {k.dtype} {k.shape}")
    if k.dtype.kind != "b":
        bad = (k != 0) & (k != 1)
        if bad.any():
            raise ValueError(
                f"{str(kp)!r} holds integers other than 0/1 ({k.dtype}, e.g. {k[bad][0].item()} "
                f"at entry {int(np.flatnonzero(bad)[0])}): it looks like the indices of the "
                f"members, where a mask is expected (the reference train.py saves a bool mask, "
                f"one entry per example); save numpy.isin(numpy.arange({n_scored}), indices) "
                "instead"
            )


def read_lira_runs(directory, epoch: int | None = None, *, direction: str = "auto") -> ScoreRun:
    """Read the score folders of the LiRA reference code (``experiment-*``).

    Parameters
    ----------
    directory : str or path-like
        The folder holding the model folders, or any folder above it: the ``experiment*``
        folders are looked for at any depth, as the reference ``plot.py`` does, and must all
        lie in one folder (e.g. ``exp/cifar10``). Each holds ``keep.npy`` (``train.py``) and
        ``scores/<epoch>.npy`` (``score.py``), the epoch as the file's name (zero-padded).
        A model folder without scores yet (still training, or ``score.py`` not run on it) is
        skipped with a note, as ``plot.py`` skips it.
    epoch : int, optional
        The epoch to read from every model. Default: the last epoch scored; when some models
        lack it, a ``ValueError`` names them and the latest epoch every model has.
    direction : {"auto", "higher", "lower"}
        Whether higher scores mean member. ``"auto"`` (default) takes the sign of the mean over
        targets of (mean IN score - mean OUT score) and says so in ``direction_source``
        (LiRA's logit scores have higher = member).

    Returns
    -------
    ScoreRun
        ``scores`` (models, targets, augmentations) and ``keep`` (models, targets), models in
        the sorted order of their folder names; ``notes`` lists the folders skipped.

    Raises
    ------
    FileNotFoundError
        When ``directory`` or a scored model's ``keep.npy`` does not exist.
    ValueError
        Naming the file and the problem: no ``experiment-*`` folder, folders in several places,
        an epoch missing, shapes that disagree, non-finite scores, a keep file holding member
        indices instead of a mask, a target with no IN or no OUT model.

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
    if epoch is not None and (not isinstance(epoch, (int, np.integer)) or isinstance(epoch, bool)):
        raise TypeError(f"`epoch` must be an int or None; found {epoch!r}")
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"`directory` is not a folder: {str(root)!r}")
    all_folders, notes = _experiment_folders(root)
    epochs = {f: _epoch_files(f) for f in all_folders}
    training = [f for f in all_folders if not epochs[f]]
    folders = [f for f in all_folders if epochs[f]]
    if not folders:
        raise ValueError(
            f"none of the {len(all_folders)} experiment folders under {str(root)!r} holds "
            "scores/<epoch>.npy yet (run the reference code's inference.py and score.py)"
        )
    if training:
        notes.append(
            f"skipped {len(training)} model folder(s) without scores yet (still training, or "
            f"score.py not run), as the reference plot.py does: {_names(f.name for f in training)}"
        )
    if epoch is None:
        last = max(max(e) for e in epochs.values() if e)
        behind = [f for f in folders if last not in epochs[f]]
        if behind:
            common = set.intersection(*(set(epochs[f]) for f in folders))
            have = _names(f"{f.name} (last {max(epochs[f])})" for f in behind)
            fix = (
                f"give epoch={max(common)} (command line: --epoch {max(common)}), the latest "
                "epoch every model has"
                if common
                else "no epoch is scored in every model; score the same epoch in each"
            )
            raise ValueError(
                f"{len(behind)} of {len(folders)} models under {str(root)!r} have no scores "
                f"for the last epoch, {last}: {have}. Mixing epochs mixes score distributions; "
                f"{fix}, or wait until they have finished"
            )
        epoch = last
    scores, keep = [], []
    for f in folders:
        path = epochs[f].get(int(epoch))
        if path is None:
            raise ValueError(
                f"{str(f / 'scores')!r}: no scores for epoch {epoch} (epochs found: "
                f"{', '.join(str(e) for e in sorted(epochs[f]))})"
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
        _check_keep_mask(k, kp, s.shape[0])
        if k.size < s.shape[0]:
            raise ValueError(
                f"{str(kp)!r} has {k.size} entries but {str(path)!r} scores {s.shape[0]} targets"
            )
        if k.size > s.shape[0] and not any(n.startswith("keep.npy") for n in notes):
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
        source=f"LiRA runs in {str(folders[0].parent)!r}, epoch {epoch}",
        models=[f.name for f in folders],
        notes=notes,
        samples=np.arange(keep[0].size),
    )


def _logit(p: np.ndarray) -> np.ndarray:
    """LiRA's scaling log(p / (1 - p)), p clipped to [smallest normal double, 1 - 2**-53]."""
    tiny = np.finfo(np.float64).tiny
    q = np.clip(p, tiny, np.nextafter(1.0, 0.0))
    return np.log(q) - np.log1p(-q)


def _read_integer_file(path, name: str) -> np.ndarray:
    """Return the array in file ``path``: a ``.npy`` array, or text of integers.

    Text holds integers separated by commas, spaces or new lines. ``name`` is the argument the
    errors name.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"`{name}`: {str(path)!r} does not exist")
    if path.suffix.lower() == ".npy":
        return _load_npy(path)
    text = path.read_text(encoding="utf-8-sig").replace(",", " ").split()
    try:
        return np.array([int(t) for t in text], dtype=np.int64)
    except ValueError:
        raise ValueError(
            f"`{name}`: {str(path)!r} must hold integers separated by commas, spaces or new lines"
        ) from None


def _read_indices(indices, n_samples: int) -> np.ndarray:
    """Return the sample indices given as an array or a file, checked.

    A file is a ``.npy`` array or text (integers separated by commas, spaces or new lines);
    the indices must be 1-d integers, distinct, in [0, n_samples).
    """
    if isinstance(indices, (str, os.PathLike)):
        arr = _read_integer_file(indices, "indices")
        where = f"`indices` ({str(indices)!r})"
    else:
        arr = np.asarray(indices)
        where = "`indices`"
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{where} must be a non-empty 1-d array; found shape {arr.shape}")
    if arr.dtype.kind == "b":
        raise ValueError(
            f"{where} holds True/False: give the indices of the audited samples "
            "(numpy.flatnonzero(mask)), not a mask"
        )
    if arr.dtype.kind not in "ui":
        raise ValueError(f"{where} must hold integers; found dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= n_samples)
    if bad.any():
        raise ValueError(
            f"{where}: index {arr[bad][0].item()} is outside [0, {n_samples}) (memberships.npy "
            f"has {n_samples} samples)"
        )
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{where} repeats a sample index")
    return arr.astype(np.int64)


def _report_memberships(root: Path) -> dict[int, tuple[Path, np.ndarray]]:
    """Return {model: (file, memberships over the audited rows)} from the report.

    Privacy Meter's ``audit.get_audit_results`` saves them for every target model in
    ``report/exp/attack_result_<model>.npz``.
    """
    out = {}
    for f in sorted((root / "report" / "exp").glob("attack_result_*.npz")):
        try:
            m = int(f.stem.rsplit("_", 1)[1])
        except ValueError:
            continue  # attack_result_average
        try:
            with np.load(f, allow_pickle=False) as z:
                if "memberships" in z.files:
                    out[m] = (f, np.asarray(z["memberships"]).astype(bool).ravel())
        except (OSError, ValueError):
            continue
    return out


def _audited_samples(root, sp, member, n_rows, indices, ramia):
    """Return (keep, samples, points per sample, note) of the samples the signal rows belong to.

    Privacy Meter's ``run_mia.py`` audits all samples, or (``audit.data_size``) a random subset
    whose indices it does not save; ``run_audit_dp.py`` the first ``canary_size`` samples;
    ``run_range_mia.py`` (RAMIA) writes ``sample_size`` rows per audited sample.
    """
    n_models, n_samples = member.shape
    if indices is not None:
        idx = _read_indices(indices, n_samples)
        k, rem = divmod(n_rows, idx.size)
        if rem or (k != 1 and not ramia):
            raise ValueError(
                f"{str(sp)!r} has {n_rows} rows but `indices` names {idx.size} samples"
                + (" (a RAMIA file needs a whole number of rows per sample)" if ramia else "")
            )
        return member[:, idx], idx, k, f"the {idx.size} samples named by `indices`"
    how = (
        "give the audited samples' indices: indices=... in Python, --indices FILE on the command "
        "line (a .npy array or a text file of integers)"
    )
    report = _report_memberships(root)
    if ramia:
        saved = {m: v for m, v in report.items() if m < n_models}
        if n_rows % n_samples == 0 and saved:
            k = n_rows // n_samples
            if all(np.array_equal(row, np.repeat(member[m], k)) for m, (_, row) in saved.items()):
                return (
                    member,
                    np.arange(n_samples),
                    k,
                    f"all {n_samples} samples, {k} range points each (confirmed by the "
                    f"memberships in {saved[min(saved)][0].name})",
                )
        raise ValueError(
            f"{str(sp)!r} holds RAMIA range signals ({n_rows} rows: sample_size rows per "
            f"audited sample, as run_range_mia.py writes them) and the report does not show "
            f"which of the {n_samples} samples were audited; {how}"
        )
    if n_rows == n_samples:
        return member, np.arange(n_samples), 1, None
    if n_rows > n_samples:
        raise ValueError(
            f"{str(sp)!r} has {n_rows} rows (samples) but memberships.npy only {n_samples} samples"
        )
    rows = {m: v for m, v in report.items() if m < n_models and v[1].size == n_rows}
    if len(rows) == n_models:
        keep = np.stack([rows[m][1] for m in range(n_models)])
        return (
            keep,
            None,
            1,
            f"{n_rows} of {n_samples} samples, their memberships read from "
            f"report/exp/attack_result_<model>.npz of every model (Privacy Meter does not save "
            "their dataset indices)",
        )
    first = rows and all(np.array_equal(row, member[m, :n_rows]) for m, (_, row) in rows.items())
    if first:
        f0 = rows[min(rows)][0]
        return (
            member[:, :n_rows],
            np.arange(n_rows),
            1,
            f"the first {n_rows} of {n_samples} samples, as run_audit_dp.py audits its canaries "
            f"(confirmed by the memberships in {f0.name})",
        )
    seen = (
        f"; {rows[min(rows)][0].name} shows they are not the first {n_rows}"
        if rows
        else "; no report/exp/attack_result_<model>.npz tells which"
    )
    raise ValueError(
        f"{str(sp)!r} has signals of {n_rows} samples but memberships.npy has {n_samples}: "
        f"Privacy Meter audited a subset (audit.data_size in run_mia.py draws it at random and "
        f"does not save the indices){seen}; {how}"
    )


def read_privacy_meter(
    directory, *, signals: str | None = None, indices=None, direction: str = "auto"
) -> ScoreRun:
    """Read a Privacy Meter run: ``models/memberships.npy`` and ``signals/*_signals.npy``.

    Parameters
    ----------
    directory : str or path-like
        Privacy Meter's log folder, holding ``models/memberships.npy`` (models x samples, which
        samples each model trained on) and ``signals/<algorithm>_signals.npy`` (audited
        samples x models, the probability each model gives the true label;
        ``*_signals_pop.npy`` population files are not targets and are ignored).
    signals : str, optional
        The signal file's name in ``signals/`` when there are several (e.g.
        ``"rmia_signals.npy"`` beside ``"loss_signals.npy"``, or a RAMIA file
        ``"rmia_ramia_signals.npy"``, whose ``sample_size`` rows per sample are read as that
        sample's augmentations).
    indices : array_like of int, or str or path-like, optional
        The dataset indices of the audited samples, in the order of the signal rows (or a
        ``.npy`` / text file holding them). Needed when Privacy Meter audited a subset
        (``audit.data_size``) and its files do not say which; without it the subset is taken
        from the files where they determine it: every sample, the first ``n`` samples
        (``run_audit_dp.py``) when the report's saved memberships confirm it, or the report's
        memberships of every model.
    direction : {"auto", "higher", "lower"}
        As in :func:`read_lira_runs` (probabilities of the true label: higher = member).

    Returns
    -------
    ScoreRun
        ``scores`` = log(p / (1 - p)) (LiRA's logit scaling, p moved just inside (0, 1)),
        shape (models, samples) or (models, samples, range points), ``keep`` (models,
        samples), ``samples`` (the dataset indices of the targets, None when unknown) and a
        note saying which samples were taken.

    Raises
    ------
    FileNotFoundError
        When a file is missing.
    ValueError
        Naming the file and the problem: several signal files and none chosen, a subset that
        the files do not determine and no ``indices``, shapes that disagree, probabilities
        outside [0, 1] or NaN, a sample with no IN or no OUT model.

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
            raise ValueError(
                f"{str(sdir)!r} holds several signal files ({', '.join(p.name for p in found)});"
                f" choose one: signals={found[0].name!r} in Python, --signals {found[0].name} on "
                "the command line"
            )
        sp = found[0]
    else:
        sp = sdir / str(signals)
        if not sp.is_file():
            have = ", ".join(p.name for p in sorted(sdir.glob("*_signals.npy"))) or "none"
            raise FileNotFoundError(f"{str(sp)!r} does not exist (signal files: {have})")
    ramia = sp.name.endswith("_ramia_signals.npy")
    member = _load_npy(mp)
    if member.ndim != 2:
        raise ValueError(f"{str(mp)!r}: must be 2-d (models, samples); found shape {member.shape}")
    if member.dtype.kind not in "buif" or not np.isin(member, (0, 1)).all():
        raise ValueError(f"{str(mp)!r}: must hold only True/False or 0/1")
    member = member.astype(bool)
    p = np.asarray(_load_npy(sp), dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"{str(sp)!r}: must be 2-d (samples, models); found shape {p.shape}")
    if p.shape[1] != member.shape[0]:
        raise ValueError(
            f"{str(sp)!r} has {p.shape[1]} columns (models) but {str(mp)!r} has "
            f"{member.shape[0]} rows (models); they must match"
        )
    _finite(p, sp, "signals")
    if (p < 0).any() or (p > 1).any():
        i = tuple(int(v) for v in np.argwhere((p < 0) | (p > 1))[0])
        raise ValueError(
            f"{str(sp)!r}: signals must be probabilities of the true label in [0, 1]; found "
            f"{float(p[i])!r} at index {i}"
        )
    keep, samples, k, which = _audited_samples(root, sp, member, p.shape[0], indices, ramia)
    scores = _logit(p.T)
    if ramia:
        n = keep.shape[1]
        scores = scores.reshape(p.shape[1], n, k)  # row i * k + j: point j of sample i
    notes = [f"audited samples: {which}"] if which else []
    if ramia:
        notes.append(
            f"RAMIA file: the {k} range points of each sample are read as its augmentations "
            "(their logit scores are averaged)"
        )
    return _score_run(
        scores,
        keep,
        direction,
        fmt="Privacy Meter",
        where=f"{str(mp)} ({'the audited samples' if which else 'all samples'})",
        source=f"Privacy Meter run in {str(root)!r} ({sp.name}, logit-scaled)",
        models=[f"model {i}" for i in range(member.shape[0])],
        notes=notes,
        samples=samples,
    )


_FIELDS = ("FN", "FP", "TN", "TP")


def is_attack_results(obj) -> bool:
    """Tell whether a parsed JSON value is a privacy-estimates ``AttackResults`` object.

    That is a dict with any of the fields ``FN``, ``FP``, ``TN``, ``TP``
    (``AttackResults.to_json`` writes all four; a missing one is then an error, not a skip).
    """
    return isinstance(obj, dict) and any(k in obj for k in _FIELDS)


def _attack_results(paths) -> tuple[AttackCounts, list[Path], list[str]]:
    """:func:`read_attack_results`, with the files read and notes on the files skipped."""
    notes: list[str] = []
    if isinstance(paths, (str, os.PathLike)):
        root = Path(paths)
        if root.is_dir():
            files = sorted(root.glob("*.json"))
            if not files:
                raise ValueError(f"{str(root)!r} holds no *.json attack-results file")
        else:
            files = [root]
        from_folder = root.is_dir()
    else:
        files = [Path(p) for p in paths]
        if not files:
            raise ValueError("`paths` is empty")
        from_folder = False
    rows, used, skipped = [], [], []
    for f in files:
        if not f.is_file():
            raise FileNotFoundError(f"{str(f)!r} does not exist")
        try:
            obj = json.loads(f.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:  # perhaps a truncated result
            raise ValueError(f"{str(f)!r} is not a JSON file ({e})") from None
        if not is_attack_results(obj):
            if from_folder:
                skipped.append(f.name)
                continue
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
        used.append(f)
    if skipped:
        notes.append(
            f"skipped {len(skipped)} JSON file(s) without FN, FP, TN, TP fields (not attack "
            f"results, e.g. privacy-estimates' dp_parameters.json): {_names(skipped)}"
        )
    if not rows:
        raise ValueError(
            f"{str(files[0].parent)!r} holds no attack-results JSON file (objects with FN, FP, "
            f"TN, TP); {notes[0]}"
        )
    counts = AttackCounts(
        fp=[r["FP"] for r in rows],
        n_neg=[r["FP"] + r["TN"] for r in rows],
        fn=[r["FN"] for r in rows],
        n_pos=[r["FN"] + r["TP"] for r in rows],
    )
    return counts, used, notes


def read_attack_results(paths) -> AttackCounts:
    """Read privacy-estimates attack-results JSON files into counts, one base per file.

    Parameters
    ----------
    paths : str, path-like, or a sequence of them
        A folder (every ``*.json`` in it, in sorted order; JSON files without the fields
        ``FN``, ``FP``, ``TN``, ``TP``, such as privacy-estimates' ``dp_parameters.json``, are
        skipped: :func:`read_results` lists them), one file, or several files. Each holds one
        JSON object with the integer fields ``FN``, ``FP``, ``TN``, ``TP``, as
        privacy-estimates' ``AttackResults.to_json`` writes it.

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
    return _attack_results(paths)[0]


@dataclass(frozen=True, eq=False)
class AttackResultsRun:
    """privacy-estimates attack results as read by :func:`read_results`.

    Attributes
    ----------
    counts : bayes_dp.AttackCounts
        One challenge base per file.
    files : list of pathlib.Path
        The files read, in order.
    source : str
        What was read.
    notes : list of str
        The files skipped.
    """

    counts: AttackCounts
    files: list
    source: str
    notes: list = field(default_factory=list)


#: The layouts :func:`read_results` recognises.
FORMATS = ("lira", "privacy_meter", "attack_results")


def detect_format(paths) -> str:
    """Which tool wrote ``paths``: ``"lira"``, ``"privacy_meter"`` or ``"attack_results"``.

    A folder with ``models/memberships.npy`` is Privacy Meter's; one with ``experiment*``
    folders at any depth LiRA's; a folder of ``*.json`` files, one ``.json`` file or a list of
    them privacy-estimates'. Raises ``ValueError`` naming the path otherwise.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "r.json").write_text(json.dumps({"FN": 25, "FP": 4, "TN": 96, "TP": 75}))
    >>> detect_format(root), detect_format(root / "r.json")
    ('attack_results', 'attack_results')
    >>> (root / "exp" / "cifar10" / "experiment-0_2").mkdir(parents=True)
    >>> detect_format(root / "exp")
    'lira'
    """
    if not isinstance(paths, (str, os.PathLike)):
        return "attack_results"
    path = Path(paths)
    if path.is_dir():
        if (path / "models" / "memberships.npy").is_file():
            return "privacy_meter"
        for _, dirnames, _ in os.walk(path):
            if any(d.startswith("experiment") for d in dirnames):
                return "lira"
        if any(path.glob("*.json")):
            return "attack_results"
        raise ValueError(
            f"{str(path)!r} is a folder but none that this command reads: expected LiRA's "
            "experiment-*/ folders, Privacy Meter's models/memberships.npy with signals/, or "
            "privacy-estimates attack-results *.json files"
        )
    if path.suffix.lower() == ".json":
        return "attack_results"
    raise ValueError(f"{str(path)!r} is neither a result folder nor a privacy-estimates .json file")


def read_results(
    paths,
    *,
    epoch: int | None = None,
    signals: str | None = None,
    indices=None,
    direction: str = "auto",
):
    """Read what LiRA, Privacy Meter or privacy-estimates wrote, detecting which.

    Parameters
    ----------
    paths : str, path-like, or a sequence of them
        A result folder of any of the three tools, one privacy-estimates ``.json`` file, or
        several (:func:`detect_format`).
    epoch : int, optional
        LiRA only: as in :func:`read_lira_runs`.
    signals, indices : optional
        Privacy Meter only: as in :func:`read_privacy_meter`.
    direction : {"auto", "higher", "lower"}
        LiRA and Privacy Meter: as in :func:`read_lira_runs`.

    Returns
    -------
    ScoreRun or AttackResultsRun
        Scores and memberships (LiRA, Privacy Meter), or counts (privacy-estimates).

    Raises
    ------
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
    given = {"epoch": epoch, "signals": signals, "indices": indices}
    takes = {"lira": {"epoch"}, "privacy_meter": {"signals", "indices"}, "attack_results": set()}
    extra = [k for k, v in given.items() if v is not None and k not in takes[fmt]]
    if extra:
        raise ValueError(
            f"`{extra[0]}` does not apply to {_FORMAT_NAMES[fmt]} ({paths!s}); it applies to "
            + ("LiRA folders" if extra[0] == "epoch" else "Privacy Meter folders")
        )
    if fmt == "lira":
        return read_lira_runs(paths, epoch, direction=direction)
    if fmt == "privacy_meter":
        return read_privacy_meter(paths, signals=signals, indices=indices, direction=direction)
    counts, files, notes = _attack_results(paths)
    where = str(paths) if isinstance(paths, (str, os.PathLike)) else f"{len(files)} files"
    return AttackResultsRun(
        counts, files, f"privacy-estimates attack results in {where}", list(notes)
    )


_FORMAT_NAMES = {
    "lira": "LiRA runs",
    "privacy_meter": "a Privacy Meter run",
    "attack_results": "privacy-estimates attack results",
}
