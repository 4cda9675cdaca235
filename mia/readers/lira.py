"""The LiRA reference code (``tensorflow/privacy`` ``research/mi_lira_2021``) and its PyTorch port.

Reference layout (``train.py`` ``main``): ``<logdir>/experiment-<expid>_<num_experiments>/`` (or
``experiment-<seed>``, or with ``--tunename`` a folder named by the hyper-parameters), each
holding ``hparams.json`` (``MemModule.params``: ``arch``, ``lr``, ``batch``, ``weight_decay``,
``augment``, ``seed``, ``epochs``, ``expid``, ``num_experiments``, ``pkeep``, ``save_steps``,
``only_subset``), ``keep.npy`` (bool, one entry per example) and ``ckpt/<epoch:010d>.npz``
(every ``save_steps`` epochs, and the stopping epoch under ``--patience``); ``inference.py``
writes ``logits/<epoch:010d>.npy`` and ``score.py`` ``load_one`` ``scores/<epoch:010d>.npy``.

PyTorch port (``orientino/lira-pytorch``): ``train.py`` ``run`` writes
``<savedir>/<shadow_id>/keep.npy`` and ``model.pt`` (``torch.save`` of the state dict; no record
of the hyper-parameters), ``inference.py`` ``logits.npy`` and ``score.py`` ``load_one``
``scores.npy`` (examples x queries) in the same folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from ..array_files import load_npy
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
    torch_weights_layout,
)

#: hparams.json fields that differ between the models of one experiment by design: the model's
#: id and seed, its share of the design, and how often it was checkpointed
LIRA_RUN_IDS = ("expid", "seed", "num_experiments", "save_steps")


def _epoch_files(folder: Path, sub: str = "scores") -> dict[int, Path]:
    out = {}
    sdir = folder / sub
    if not sdir.is_dir():
        return out
    for f in sdir.glob("*.npz" if sub == "ckpt" else "*.npy"):
        try:
            out[int(f.stem)] = f
        except ValueError:
            continue
    return out


def _is_reference_model(d: Path, name: str) -> bool:
    """Tell a reference model folder: ``experiment*`` (as ``plot.py`` looks), or ``--tunename``."""
    if (d / "scores.npy").is_file():
        return False  # the PyTorch port's layout
    if name.startswith("experiment"):
        return any((d / f).exists() for f in ("keep.npy", "scores", "hparams.json", "ckpt"))
    return (d / "hparams.json").is_file() and (d / "keep.npy").is_file()


def _is_port_model(d: Path) -> bool:
    return (d / "keep.npy").is_file() and any(
        (d / f).is_file() for f in ("scores.npy", "logits.npy", "model.pt")
    )


def find_model_folders(root: Path, port: bool = False) -> list[Path]:
    """Find the model folders under ``root`` at any depth (not looking inside one)."""
    found = []
    for dirpath, dirnames, _ in os.walk(root):
        here = []
        for d in dirnames:
            p = Path(dirpath) / d
            if (
                (_is_port_model(p) and not _is_reference_model(p, d))
                if port
                else (_is_reference_model(p, d))
            ):
                here.append(d)
        found += [Path(dirpath) / d for d in here]
        dirnames[:] = [d for d in dirnames if d not in here]
    return found


def _one_parent(root: Path, found: list[Path], what: str) -> tuple[list[Path], list[str]]:
    parents = sorted({f.parent for f in found})
    if len(parents) > 1:
        raise ValueError(
            f"{str(root)!r} holds {what} in {len(parents)} folders "
            f"({names(str(p) for p in parents)}): runs of different experiments must not be "
            "mixed; give one of them"
        )
    notes = []
    if parents[0] != root:
        notes.append(f"the model folders were found in {str(parents[0])!r}")
    return found, notes


def _sort_key(p: Path):
    """Folders in numeric order where their names end in numbers, else by name."""
    nums = [int(n) for n in re.findall(r"\d+", p.name)]
    return (0, nums, p.name) if nums else (1, [], p.name)


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


def _load_keep(kp: Path) -> np.ndarray:
    if not kp.is_file():
        raise FileNotFoundError(f"{str(kp)!r} does not exist (each model folder needs it)")
    return load_npy(kp)


def _n_rows(path: Path) -> int:
    """Return the number of rows of a .npy file, read from its header where possible."""
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError):
        arr = load_npy(path)  # raises, naming the file
    return int(arr.shape[0]) if arr.ndim else 0


def _load_scores(path: Path) -> np.ndarray:
    s = np.asarray(load_npy(path), dtype=np.float64)
    if s.ndim == 1:
        s = s[:, None]
    if s.ndim != 2:
        raise ValueError(
            f"{str(path)!r}: scores must have shape (targets, augmentations); found {s.shape}"
        )
    check_finite(s, path, "scores")
    return s


def _stack(folders, paths, notes):
    """Load every model's scores and keep; the keep masks cut to the scored examples."""
    scores, keep = [], []
    for f, path in zip(folders, paths, strict=True):
        s = _load_scores(path)
        kp = f / "keep.npy"
        k = _load_keep(kp)
        _check_keep_mask(k, kp, s.shape[0])
        if k.size < s.shape[0]:
            raise ValueError(
                f"{str(kp)!r} has {k.size} entries but {str(path)!r} scores {s.shape[0]} targets"
            )
        if k.size > s.shape[0] and not any(n.startswith("keep.npy") for n in notes):
            notes.append(
                f"keep.npy has {k.size} entries and the scores {s.shape[0]}: the first "
                f"{s.shape[0]} entries were used (as the reference plot.py does)"
            )
        if scores and s.shape != scores[0].shape:
            raise ValueError(
                f"{str(path)!r} has shape {s.shape} but {str(paths[0])!r} has "
                f"{scores[0].shape}: every model must score the same targets with the same "
                "augmentations: rerun inference.py (its shift and reflect) and score.py on the "
                "models that differ, with the same settings"
            )
        scores.append(s)
        keep.append(k[: s.shape[0]].astype(bool))
    return np.stack(scores), np.stack(keep)


def _stop_reason(folder: Path, e: int, hp: dict | None) -> str | None:
    """Why ``e`` is the model's last epoch: "finished", "stopped early", or None (unknown).

    ``train.py`` saves a checkpoint every ``save_steps`` epochs and, under ``--patience``, once
    more at the epoch where it stops; so a last checkpoint off that cadence is an early stop,
    and one within ``save_steps`` of ``epochs`` is the end of the planned run.
    """
    ckpts = _epoch_files(folder, "ckpt")
    if not ckpts or e != max(ckpts) or not hp:
        return None
    total, step = hp.get("epochs"), hp.get("save_steps")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (total, step)) or step < 1:
        return None
    if e == total or (e % step == 0 and e + step > total):
        return "finished"
    if e % step:
        return "stopped early"
    return None


def _choose_epochs(folders, epochs, hparams, epoch, root):
    """Return (the epoch of each model, notes)."""
    notes = []
    if isinstance(epoch, str):
        lasts = [max(epochs[f]) for f in folders]
        if len(set(lasts)) > 1:
            notes.append(
                "each model's own last epoch (epoch='last'): "
                + names([f"{f.name} {e}" for f, e in zip(folders, lasts, strict=True)], 8)
            )
        return lasts, notes
    if epoch is not None:
        for f in folders:
            if int(epoch) not in epochs[f]:
                raise ValueError(
                    f"{str(f / 'scores')!r}: no scores for epoch {epoch} (epochs found: "
                    f"{', '.join(str(e) for e in sorted(epochs[f]))})"
                )
        return [int(epoch)] * len(folders), notes
    lasts = [max(epochs[f]) for f in folders]
    if len(set(lasts)) == 1:
        return lasts, notes
    reasons = [_stop_reason(f, e, h) for f, e, h in zip(folders, lasts, hparams, strict=True)]
    if all(reasons):
        early = [
            f"{f.name} {e}"
            for f, e, r in zip(folders, lasts, reasons, strict=True)
            if r == "stopped early"
        ]
        notes.append(
            f"each model's own last epoch: {len(early)} of {len(folders)} models stopped early "
            f"(train.py --patience saves the stopping epoch: {names(early, 8)}), the others "
            f"finished at {max(lasts)}"
        )
        return lasts, notes
    last = max(lasts)
    behind = [f for f, e, r in zip(folders, lasts, reasons, strict=True) if e < last and r is None]
    common = set.intersection(*(set(epochs[f]) for f in folders))
    have = names(f"{f.name} (last {max(epochs[f])})" for f in behind)
    fix = (
        f"epoch={max(common)} (--epoch {max(common)}) reads the latest epoch every model has"
        if common
        else "no epoch is scored in every model"
    )
    early = sum(r == "stopped early" for r in reasons)
    also = f" ({early} other model(s) stopped early, train.py --patience)" if early else ""
    raise ValueError(
        f"{len(behind)} of {len(folders)} models under {str(root)!r} have no scores for the "
        f"last epoch, {last}, and their checkpoints do not show that they finished or stopped "
        f"early: {have}{also}. Mixing epochs mixes score distributions: {fix}; epoch='last' "
        "(--epoch last) reads each model's own last epoch; or wait until they have finished"
    )


def _lira_design(records, kept_keep) -> tuple[str | None, str | None]:
    """Return the design of train.py get_data, from hparams.json, checked on the keep masks."""
    if not records or any(not r for r in records):
        return None, None
    pk = {r.get("pkeep") for r in records}
    if pk != {0.5}:
        return None, None
    expids = [r.get("expid") for r in records]
    nums = {r.get("num_experiments") for r in records}
    if all(e is None for e in expids) and nums == {None}:
        return "independent", "seed mode: each model keeps each example on its own fair coin"
    if all(isinstance(e, int) for e in expids) and len(nums) == 1:
        (num,) = nums
        n_in = kept_keep.sum(axis=0)
        if sorted(expids) == list(range(num or 0)) and np.all(2 * n_in == kept_keep.shape[0]):
            return "balanced", f"all {num} models of --num_experiments, every target IN for half"
        return None, (
            f"{len(expids)} of the --num_experiments {num} models: the balanced design is "
            "incomplete"
        )
    return None, "models of two designs (--expid and --seed runs)"


def _one_sided_why(common: dict, hparams: list) -> str:
    """Why targets may lack a side, from what hparams.json records."""
    k = common.get("only_subset")
    if isinstance(k, int) and not isinstance(k, bool):
        return (
            f" (hparams.json: only_subset={k}: train.py trains on the first {k} examples only, "
            f"so examples from {k} on are never IN)"
        )
    if hparams and all(h and h.get("expid") is None for h in hparams):
        return " (seed mode: each model keeps each example on its own coin)"
    return ""


def read_lira_runs(
    directory,
    epoch: int | str | None = None,
    *,
    select=None,
    skip_one_sided: bool = False,
    direction: str = "auto",
) -> ScoreRun:
    """Read the score folders of the LiRA reference code.

    Parameters
    ----------
    directory : str or path-like
        The folder holding the model folders, or any folder above it: they are looked for at
        any depth, as the reference ``plot.py`` does, and must all lie in one folder (e.g.
        ``exp/cifar10``). A model folder is an ``experiment*`` folder or a ``--tunename``
        folder (``hparams.json`` and ``keep.npy``); each holds ``keep.npy`` (``train.py``) and
        ``scores/<epoch>.npy`` (``score.py``). One without scores yet (still training, or
        ``score.py`` not run on it) is skipped with a note, as ``plot.py`` skips it.
    epoch : int, "last" or None
        The epoch to read. An int: that epoch from every model. ``"last"``: each model's own
        last epoch, whatever they are (stated in a note). None (default): the last epoch; when
        the models' last epochs differ, each model's own last one if its checkpoints show that
        it finished or stopped early (``train.py --patience`` saves the stopping epoch off the
        ``save_steps`` cadence), else a ``ValueError`` names the models behind and the options.
    select : dict or list of str, optional
        Read only the models whose ``hparams.json`` has these values: ``{"arch": "wrn28-2"}``
        or ``["arch=wrn28-2"]`` (``--select arch=wrn28-2``). Models trained with different
        hyper-parameters (any field but ``expid``, ``seed``, ``num_experiments`` and
        ``save_steps``) or on datasets of different sizes (``keep.npy`` lengths) are refused
        unless one group is selected; the error names the groups.
    skip_one_sided : bool
        Drop the targets that no model trained on, or that every model did (``--only_subset``,
        few models in seed mode), with a note that counts them; default False: a ``ValueError``
        names them and this option.
    direction : {"auto", "higher", "lower"}
        Whether higher scores mean member. ``"auto"`` (default) takes the sign of the mean over
        targets of (mean IN score - mean OUT score) and says so in ``direction_source``
        (LiRA's logit scores have higher = member).

    Returns
    -------
    ScoreRun
        ``scores`` (models, targets, augmentations) and ``keep`` (models, targets), models in
        numeric order of their folder names; ``design`` from ``hparams.json`` (``ScoreRun``);
        ``recorded`` the hyper-parameters the models share; ``notes`` what was skipped, selected
        or dropped and which epochs were read.

    Raises
    ------
    FileNotFoundError
        When ``directory`` or a scored model's ``keep.npy`` does not exist.
    ValueError
        Naming the file and the problem: no model folder, folders in several places, a mix of
        hyper-parameters or epochs, shapes that disagree, non-finite scores, a keep file holding
        member indices instead of a mask, a target with no IN or no OUT model.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> rng = np.random.default_rng(0)
    >>> for m in range(4):
    ...     d = root / f"experiment-{m}_4"
    ...     (d / "scores").mkdir(parents=True)
    ...     keep = (np.arange(6) + m) % 2 == 0  # every target IN for 2 of the 4 models
    ...     np.save(d / "keep.npy", keep)
    ...     _ = (d / "hparams.json").write_text(json.dumps({"arch": "wrn28-2", "expid": m}))
    ...     scores = rng.normal(0, 1, (6, 2)) + 3.0 * keep[:, None]
    ...     np.save(d / "scores" / "0000000100.npy", scores)
    >>> run = read_lira_runs(root)
    >>> run.scores.shape, run.keep.shape, run.direction, run.recorded
    ((4, 6, 2), (4, 6), 'higher', {'arch': 'wrn28-2', 'dataset_size': 6})
    """
    check_direction(direction)
    if epoch is not None and epoch != "last":
        if not isinstance(epoch, (int, np.integer)) or isinstance(epoch, bool):
            raise TypeError(f"`epoch` must be an int, 'last' or None; found {epoch!r}")
    chosen = parse_select(select)
    root = Path(directory)
    if not root.is_dir():
        if not root.exists():
            raise FileNotFoundError(f"no such file or folder: {str(root)!r}")
        raise FileNotFoundError(f"`directory` is not a folder: {str(root)!r}")
    found = find_model_folders(root)
    if not found:
        raise ValueError(
            f"{str(root)!r} has no 'experiment-*' folder at any depth (the LiRA reference "
            "layout: one folder per model with keep.npy and scores/<epoch>.npy)"
        )
    all_folders, notes = _one_parent(root, sorted(found, key=_sort_key), "model folders")
    epochs = {f: _epoch_files(f) for f in all_folders}
    training = [f for f in all_folders if not epochs[f]]
    folders = [f for f in all_folders if epochs[f]]
    if not folders:
        raise ValueError(
            f"none of the {len(all_folders)} model folders under {str(root)!r} holds "
            "scores/<epoch>.npy yet (run the reference code's inference.py and score.py)"
        )
    if training:
        notes.append(
            f"skipped {len(training)} model folder(s) without scores yet (still training, or "
            f"score.py not run), as the reference plot.py does: {names(f.name for f in training)}"
        )
    hparams, records = [], []
    for f in folders:
        hp = read_json(f / "hparams.json") if (f / "hparams.json").is_file() else None
        if hp is not None and not isinstance(hp, dict):
            raise ValueError(f"{str(f / 'hparams.json')!r}: expected a JSON object")
        hparams.append(hp)
        kp = f / "keep.npy"
        keep = _load_keep(kp)
        n_scored = _n_rows(epochs[f][max(epochs[f])])
        _check_keep_mask(keep, kp, n_scored)
        rec = dict(hp or {})
        rec["dataset_size"] = int(keep.shape[0])
        records.append(rec)
    if all(h is None for h in hparams):
        notes.append(
            "no hparams.json in the model folders: what the models were trained with could not "
            "be compared (they are taken to be one experiment)"
        )
    idx, common, more = check_one_run(
        records,
        [f.name for f in folders],
        "hparams.json" if any(hparams) else "keep.npy length",
        str(folders[0].parent),
        chosen,
        ignore=LIRA_RUN_IDS,
    )
    notes += more
    folders = [folders[i] for i in idx]
    hparams = [hparams[i] for i in idx]
    use, more = _choose_epochs(folders, epochs, hparams, epoch, root)
    notes += more
    paths = [epochs[f][e] for f, e in zip(folders, use, strict=True)]
    scores, keep = _stack(folders, paths, notes)
    why = _one_sided_why(common, hparams)
    kept, dropped, note = one_sided(keep, f"keep.npy under {str(root)!r}", skip_one_sided, why)
    if note:
        notes.append(note)
        scores, keep = scores[:, kept], keep[:, kept]
    design, how = _lira_design(hparams, keep)
    if how and design is None and any(hparams):
        notes.append(f"design unknown: {how}")
    d, how_dir = direction_of(scores, keep, direction, "higher", "LiRA")
    ep = f"epoch {use[0]}" if len(set(use)) == 1 else f"epochs {min(use)}-{max(use)} (own last)"
    return ScoreRun(
        scores,
        keep,
        d,
        how_dir,
        f"LiRA runs in {str(folders[0].parent)!r}, {ep}",
        [f.name for f in folders],
        notes,
        kept.astype(np.int64),
        design,
        common,
        dropped.astype(np.int64),
    )


def read_lira_pytorch(
    directory, *, select=None, skip_one_sided: bool = False, direction: str = "auto"
) -> ScoreRun:
    """Read the folders of the LiRA PyTorch port (``<shadow_id>/keep.npy``, ``scores.npy``).

    Parameters
    ----------
    directory : str or path-like
        The ``--savedir`` folder (``exp/cifar10``), or a folder above it: one folder per model
        (``train.py`` ``run``: ``<shadow_id>/keep.npy``, bool over the whole training set, and
        ``model.pt``), each with ``scores.npy`` (``score.py`` ``load_one``: examples x queries)
        once scored; folders without ``scores.npy`` are skipped with a note.
    select : dict or list of str, optional
        The port records no hyper-parameters; models are compared by the tensor layout of their
        ``model.pt`` (``weights_tensors``, ``weights_bytes``: two architectures differ there)
        and the length of ``keep.npy`` (``dataset_size``). A mix is refused, naming the groups;
        ``select={"weights_bytes": 123456}`` (``--select weights_bytes=123456``) reads one.
    skip_one_sided, direction
        As in :func:`read_lira_runs`.

    Returns
    -------
    ScoreRun
        ``scores`` (models, targets, queries), ``keep``; ``design`` ``"balanced"`` when every
        target is IN for exactly half of the models (the port's ``train.py`` always ranks
        memberships so, over ``--n_shadows`` models).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> rng = np.random.default_rng(0)
    >>> for m in range(4):
    ...     (root / str(m)).mkdir()
    ...     keep = (np.arange(6) + m) % 2 == 0
    ...     np.save(root / str(m) / "keep.npy", keep)
    ...     np.save(root / str(m) / "scores.npy", rng.normal(0, 1, (6, 2)) + 3.0 * keep[:, None])
    >>> run = read_lira_pytorch(root)
    >>> run.scores.shape, run.design
    ((4, 6, 2), 'balanced')
    """
    check_direction(direction)
    chosen = parse_select(select)
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"no such file or folder: {str(root)!r}")
    found = find_model_folders(root, port=True)
    if not found:
        raise ValueError(
            f"{str(root)!r} has no model folder of the LiRA PyTorch port (<shadow_id>/keep.npy "
            "with scores.npy) at any depth"
        )
    all_folders, notes = _one_parent(root, sorted(found, key=_sort_key), "model folders")
    folders = [f for f in all_folders if (f / "scores.npy").is_file()]
    training = [f for f in all_folders if f not in folders]
    if not folders:
        raise ValueError(
            f"none of the {len(all_folders)} model folders under {str(root)!r} holds scores.npy "
            "yet (run the port's inference.py and score.py)"
        )
    if training:
        notes.append(
            f"skipped {len(training)} model folder(s) without scores.npy yet: "
            f"{names(f.name for f in training)}"
        )
    records = []
    for f in folders:
        rec = torch_weights_layout(f / "model.pt") if (f / "model.pt").is_file() else None
        rec = dict(rec or {})
        kp = f / "keep.npy"
        keep = _load_keep(kp)
        _check_keep_mask(keep, kp, _n_rows(f / "scores.npy"))
        rec["dataset_size"] = int(keep.shape[0])
        records.append(rec)
    if not any("weights_bytes" in r for r in records):
        notes.append(
            "no model.pt beside the scores: the models' architectures could not be compared "
            "(the port records no hyper-parameters)"
        )
    idx, common, more = check_one_run(
        records,
        [f.name for f in folders],
        "model.pt tensor layout and keep.npy length",
        str(folders[0].parent),
        chosen,
    )
    notes += more
    folders = [folders[i] for i in idx]
    scores, keep = _stack(folders, [f / "scores.npy" for f in folders], notes)
    kept, dropped, note = one_sided(keep, f"keep.npy under {str(root)!r}", skip_one_sided)
    if note:
        notes.append(note)
        scores, keep = scores[:, kept], keep[:, kept]
    design = "balanced" if np.all(2 * keep.sum(axis=0) == keep.shape[0]) else None
    d, how = direction_of(scores, keep, direction, "higher", "LiRA")
    return ScoreRun(
        scores,
        keep,
        d,
        how,
        f"LiRA PyTorch port runs in {str(folders[0].parent)!r}",
        [f.name for f in folders],
        notes,
        kept.astype(np.int64),
        design,
        common,
        dropped.astype(np.int64),
    )


def looks_like_lira(path: Path) -> str | None:
    """``"lira"`` or ``"lira_pytorch"`` when ``path`` holds such model folders, else None."""
    if find_model_folders(path):
        return "lira"
    if find_model_folders(path, port=True):
        return "lira_pytorch"
    return None
