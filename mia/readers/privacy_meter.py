"""Privacy Meter 2.0 (``privacytrustlab/ml_privacy_meter``): its ``log_dir``.

The ``log_dir`` of ``run_mia.py``, ``run_audit_dp.py`` or ``run_range_mia.py`` (RaMIA):

* ``models/utils.py`` ``prepare_models`` writes ``models/memberships.npy`` (models x samples,
  bool), ``model_<i>.pkl`` and ``models_metadata.json`` (per model: ``model_name``, ``dataset``,
  ``optimizer``, ``learning_rate``, ``weight_decay``, ``batch_size``, ``epochs``, and under
  ``run_audit_dp.py`` ``epsilon``, ``delta``; besides measured accuracies and losses).
* ``models/utils.py`` ``load_models`` reuses a ``log_dir``: it loads the first models it needs
  and keeps ``memberships.npy`` with every row.
* ``get_signals.py`` ``get_model_signals`` writes ``signals/<algorithm>_signals.npy`` (the
  probability of the true label, float32, audited samples x models), ``*_signals_pop.npy``
  (population samples, not targets) and, for RaMIA, ``<algorithm>_ramia_signals.npy`` with
  ``sample_size`` rows per audited sample.
* ``audit.py`` ``get_audit_results`` writes ``<report_dir>/exp/attack_result_<t>.npz`` with the
  target model's ``memberships`` of the audited rows; ``report_dir`` is ``report`` for
  ``run_mia.py`` and ``run_audit_dp.py``, ``report_ramia`` for ``run_range_mia.py`` (there the
  memberships are repeated ``sample_size`` times).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..array_files import load_npy, open_npz, read_integer_file
from ._common import (
    ScoreRun,
    check_direction,
    check_finite,
    check_one_run,
    direction_of,
    names,
    one_sided,
    parse_select,
    read_json,
)

#: models_metadata.json fields not compared between models: where the weights are, how many
#: samples each trained on (n // 2 or n - n // 2, or a coin's count), and what was measured
PM_NOT_COMPARED = (
    "model_path",
    "num_train",
    "train_acc",
    "test_acc",
    "train_loss",
    "test_loss",
)
#: report folders: run_mia.py and run_audit_dp.py, run_range_mia.py
REPORT_DIRS = ("report", "report_ramia")


def logit(p: np.ndarray) -> np.ndarray:
    """LiRA's scaling log(p / (1 - p)), p clipped to [smallest normal double, 1 - 2**-53]."""
    tiny = np.finfo(np.float64).tiny
    q = np.clip(p, tiny, np.nextafter(1.0, 0.0))
    return np.log(q) - np.log1p(-q)


def _read_indices(indices, n_samples: int) -> np.ndarray:
    """Return the sample indices given as an array or a file, checked."""
    if isinstance(indices, (str, os.PathLike)):
        arr = read_integer_file(indices, "indices")
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


def _report_memberships(root: Path, ramia: bool) -> dict[int, tuple[Path, np.ndarray]]:
    """Return {model: (file, memberships over the audited rows)} from the report.

    ``audit.get_audit_results`` saves them for every target model in
    ``<report_dir>/exp/attack_result_<model>.npz``. A damaged archive is a ValueError naming it.
    """
    out = {}
    report = root / REPORT_DIRS[1 if ramia else 0] / "exp"
    for f in sorted(report.glob("attack_result_*.npz")):
        try:
            m = int(f.stem.rsplit("_", 1)[1])
        except ValueError:
            continue  # attack_result_average, attack_result_average_dp
        with open_npz(f) as z:
            if "memberships" in z.files:
                out[m] = (f, np.asarray(z["memberships"]).astype(bool).ravel())
    return out


def _audited_samples(root, sp, member, n_rows, indices, ramia):
    """Return (keep, samples, points per sample, note) of the samples the signal rows belong to.

    Privacy Meter's ``run_mia.py`` audits all samples, or (``audit.data_size``) a random subset
    whose indices it does not save; ``run_audit_dp.py`` the first ``canary_size`` samples;
    ``run_range_mia.py`` (RaMIA) writes ``sample_size`` rows per audited sample.
    """
    n_models, n_samples = member.shape
    if indices is not None:
        idx = _read_indices(indices, n_samples)
        k, rem = divmod(n_rows, idx.size)
        if rem or (k != 1 and not ramia):
            raise ValueError(
                f"{str(sp)!r} has {n_rows} rows but `indices` names {idx.size} samples"
                + (" (a RaMIA file needs a whole number of rows per sample)" if ramia else "")
            )
        return member[:, idx], idx, k, f"the {idx.size} samples named by `indices`"
    how = (
        "give the audited samples' indices: indices=... in Python, --indices FILE on the command "
        "line (a .npy array or a text file of integers)"
    )
    rdir = f"{REPORT_DIRS[1 if ramia else 0]}/exp"
    if not ramia and n_rows == n_samples:
        return member, np.arange(n_samples), 1, None
    if not ramia and n_rows > n_samples:
        raise ValueError(
            f"{str(sp)!r} has {n_rows} rows (samples) but memberships.npy only {n_samples} samples"
        )
    report = _report_memberships(root, ramia)
    if ramia:
        saved = {m: v for m, v in report.items() if m < n_models and v[1].size == n_rows}
        if saved and n_rows % n_samples == 0:
            k = n_rows // n_samples
            if all(np.array_equal(row, np.repeat(member[m], k)) for m, (_, row) in saved.items()):
                return (
                    member,
                    np.arange(n_samples),
                    k,
                    f"all {n_samples} samples, {k} range points each (confirmed by the "
                    f"memberships in {rdir}/{saved[min(saved)][0].name})",
                )
        if len(saved) == n_models:
            # the memberships of every model, repeated sample_size times: the largest block
            # length over which every model's membership is constant is sample_size
            rows = np.stack([saved[m][1] for m in range(n_models)])
            for k in sorted((d for d in range(1, n_rows + 1) if n_rows % d == 0), reverse=True):
                blocks = rows.reshape(n_models, n_rows // k, k)
                if np.all(blocks == blocks[:, :, :1]):
                    break
            return (
                blocks[:, :, 0],
                None,
                k,
                f"{n_rows // k} of {n_samples} samples, {k} range points each, their "
                f"memberships read from {rdir}/attack_result_<model>.npz of every model "
                "(Privacy Meter does not save their dataset indices)",
            )
        raise ValueError(
            f"{str(sp)!r} holds RaMIA range signals ({n_rows} rows: sample_size rows per "
            f"audited sample, as run_range_mia.py writes them) and {rdir} does not show which of "
            f"the {n_samples} samples were audited; {how}"
        )
    rows = {m: v for m, v in report.items() if m < n_models and v[1].size == n_rows}
    if len(rows) == n_models:
        keep = np.stack([rows[m][1] for m in range(n_models)])
        return (
            keep,
            None,
            1,
            f"{n_rows} of {n_samples} samples, their memberships read from "
            f"{rdir}/attack_result_<model>.npz of every model (Privacy Meter does not save "
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
        else f"; no {rdir}/attack_result_<model>.npz tells which"
    )
    raise ValueError(
        f"{str(sp)!r} has signals of {n_rows} samples but memberships.npy has {n_samples}: "
        f"Privacy Meter audited a subset (audit.data_size in run_mia.py draws it at random and "
        f"does not save the indices){seen}; {how}"
    )


def _signal_file(root: Path, signals) -> Path:
    sdir = root / "signals"
    if signals is None:
        found = sorted(p for p in sdir.glob("*_signals.npy")) if sdir.is_dir() else []
        if not found:
            raise FileNotFoundError(f"no signals/*_signals.npy file under {str(root)!r}")
        if len(found) > 1:
            raise ValueError(
                f"{str(sdir)!r} holds several signal files ({', '.join(p.name for p in found)}): "
                f"signals of different attacks or runs; choose one: signals={found[0].name!r} in "
                f"Python, --signals {found[0].name} on the command line"
            )
        return found[0]
    sp = sdir / str(signals)
    if not sp.is_file():
        have = ", ".join(p.name for p in sorted(sdir.glob("*_signals.npy"))) or "none"
        raise FileNotFoundError(f"{str(sp)!r} does not exist (signal files: {have})")
    return sp


def _metadata(root: Path, n: int) -> list:
    """Return the first ``n`` models' records in models_metadata.json (None when absent)."""
    mp = root / "models" / "models_metadata.json"
    if not mp.is_file():
        return [None] * n
    meta = read_json(mp)
    if not isinstance(meta, dict):
        raise ValueError(f"{str(mp)!r}: expected an object of model records")
    missing = [i for i in range(n) if str(i) not in meta]
    if missing:
        raise ValueError(
            f"{str(mp)!r} has no record of model(s) {names(missing)} whose signals are in "
            "signals/: the log_dir holds models of another run; rerun the audit in a fresh "
            "log_dir"
        )
    return [meta[str(i)] if isinstance(meta[str(i)], dict) else None for i in range(n)]


def _pairs_design(keep: np.ndarray) -> str | None:
    """Return "balanced" for complementary pairs of models (split_dataset_for_training)."""
    m = keep.shape[0]
    if m % 2 or m == 0:
        return None
    return "balanced" if np.all(keep[0::2] == ~keep[1::2]) else None


def read_privacy_meter(
    directory,
    *,
    signals: str | None = None,
    indices=None,
    select=None,
    skip_one_sided: bool = False,
    direction: str = "auto",
) -> ScoreRun:
    """Read a Privacy Meter run: ``models/memberships.npy`` and ``signals/*_signals.npy``.

    Parameters
    ----------
    directory : str or path-like
        Privacy Meter's ``log_dir``, holding ``models/memberships.npy`` (models x samples, which
        samples each model trained on) and ``signals/<algorithm>_signals.npy`` (audited
        samples x models, the probability each model gives the true label;
        ``*_signals_pop.npy`` population files are not targets and are ignored). A ``log_dir``
        reused with fewer models (``load_models`` loads the first ones; ``memberships.npy``
        keeps every row) is read with the rows of the models the signals have, with a note.
    signals : str, optional
        The signal file's name in ``signals/`` when there are several (e.g.
        ``"rmia_signals.npy"`` beside ``"loss_signals.npy"``, or a RaMIA file
        ``"rmia_ramia_signals.npy"``, whose ``sample_size`` rows per sample are read as that
        sample's augmentations).
    indices : array_like of int, or str or path-like, optional
        The dataset indices of the audited samples, in the order of the signal rows (or a
        ``.npy`` / text file holding them). Needed when Privacy Meter audited a subset
        (``audit.data_size``) and its files do not say which; without it the subset is taken
        from the files where they determine it: every sample, the first ``n`` samples
        (``run_audit_dp.py``) when the report's saved memberships confirm it, or the report's
        memberships of every model (``report/exp``, or ``report_ramia/exp`` for RaMIA).
    select : dict or list of str, optional
        Read only the models whose ``models_metadata.json`` records have these values
        (``--select model_name=wrn28-2``); models trained differently are refused unless one
        group is selected.
    skip_one_sided : bool
        Drop samples that no model (or every model) trained on, with a note; default False:
        a ``ValueError`` names them and this option.
    direction : {"auto", "higher", "lower"}
        As in :func:`mia.read_lira_runs` (probabilities of the true label: higher = member).

    Returns
    -------
    ScoreRun
        ``scores`` = log(p / (1 - p)) (LiRA's logit scaling, p moved just inside (0, 1)),
        shape (models, samples) or (models, samples, range points), ``keep`` (models,
        samples), ``samples`` (the dataset indices of the targets, None when unknown),
        ``design`` ``"balanced"`` for complementary pairs, and notes saying which samples and
        models were taken.

    Raises
    ------
    FileNotFoundError
        When a file is missing.
    ValueError
        Naming the file and the problem: several signal files and none chosen, a subset that
        the files do not determine and no ``indices``, shapes that disagree, a damaged report
        archive, probabilities outside [0, 1] or NaN, models trained differently, a sample with
        no IN or no OUT model.

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
    >>> run.design
    'balanced'
    """
    check_direction(direction)
    chosen = parse_select(select)
    root = Path(directory)
    if not root.exists():
        raise FileNotFoundError(f"no such file or folder: {str(root)!r}")
    mp = root / "models" / "memberships.npy"
    if not mp.is_file():
        raise FileNotFoundError(f"{str(mp)!r} does not exist (Privacy Meter's membership matrix)")
    sp = _signal_file(root, signals)
    ramia = sp.name.endswith("_ramia_signals.npy")
    member = load_npy(mp)
    if member.ndim != 2:
        raise ValueError(f"{str(mp)!r}: must be 2-d (models, samples); found shape {member.shape}")
    if member.dtype.kind not in "buif" or not np.isin(member, (0, 1)).all():
        raise ValueError(f"{str(mp)!r}: must hold only True/False or 0/1")
    member = member.astype(bool)
    p = np.asarray(load_npy(sp), dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"{str(sp)!r}: must be 2-d (samples, models); found shape {p.shape}")
    notes = []
    if p.shape[1] > member.shape[0]:
        raise ValueError(
            f"{str(sp)!r} has {p.shape[1]} columns (models) but {str(mp)!r} has "
            f"{member.shape[0]} rows (models); they must match"
        )
    if p.shape[1] < member.shape[0]:
        notes.append(
            f"log_dir reused with fewer models: the signals hold {p.shape[1]} models and "
            f"memberships.npy {member.shape[0]} rows; the first {p.shape[1]} rows were read, "
            "the models load_models took"
        )
        member = member[: p.shape[1]]
    check_finite(p, sp, "signals")
    if (p < 0).any() or (p > 1).any():
        i = tuple(int(v) for v in np.argwhere((p < 0) | (p > 1))[0])
        raise ValueError(
            f"{str(sp)!r}: signals must be probabilities of the true label in [0, 1]; found "
            f"{float(p[i])!r} at index {i}"
        )
    n_models = member.shape[0]
    keep, samples, k, which = _audited_samples(root, sp, member, p.shape[0], indices, ramia)
    records = _metadata(root, n_models)
    idx, common, more = check_one_run(
        records,
        [f"model {i}" for i in range(n_models)],
        "models_metadata.json",
        str(root),
        chosen,
        ignore=PM_NOT_COMPARED,
    )
    if which:
        notes.insert(0, f"audited samples: {which}")
    if ramia:
        notes.append(
            f"RaMIA file: the {k} range points of each sample are read as its augmentations "
            "(their logit scores are averaged)"
        )
    notes += more
    scores = logit(p.T)
    if ramia:
        scores = scores.reshape(n_models, keep.shape[1], k)  # row i * k + j: point j of sample i
    scores, keep = scores[idx], keep[idx]
    kept, dropped, note = one_sided(keep, f"{str(mp)}", skip_one_sided)
    if note:
        notes.append(note)
        scores, keep = scores[:, kept], keep[:, kept]
        samples = None if samples is None else samples[kept]
    d, how = direction_of(scores, keep, direction, "higher", "Privacy Meter")
    return ScoreRun(
        scores,
        keep,
        d,
        how,
        f"Privacy Meter run in {str(root)!r} ({sp.name}, logit-scaled)",
        [f"model {i}" for i in idx],
        notes,
        samples,
        _pairs_design(keep),
        common,
        dropped.astype(np.int64),
    )
