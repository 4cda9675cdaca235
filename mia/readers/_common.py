"""What the readers share: :class:`ScoreRun`, checks of arrays, and the comparison of runs.

Every reader compares what its tool records about each run (hyper-parameters, epochs, the
signal or attack, the game's parameters) and refuses a mix, naming the groups found and the
``select`` option that reads one of them (:func:`check_one_run`). ``select`` takes the same form
for every tool: ``{"key": value}`` in Python, ``KEY=VALUE`` (repeatable) as ``--select`` on the
command line.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..guessing import guessing_game
from ..scores import counts_from_score_matrix

DIRECTIONS = ("auto", "higher", "lower")
#: the design hints of :attr:`ScoreRun.design`
DESIGNS = ("balanced", "independent", None)


@dataclass(frozen=True, eq=False)
class ScoreRun:
    """Scores of every (model, target) and who trained on what, as read from a result folder.

    Attributes
    ----------
    scores : numpy.ndarray of float, shape (n_models, n_targets) or (n_models, n_targets, n_augs)
        The attack's raw scores (LiRA's logit-scaled confidences for every reader here).
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
        What the reader did that a user should know (models skipped, epochs read, targets
        dropped, which samples were audited, ...).
    samples : numpy.ndarray of int or None
        The dataset index of each target (column of ``keep``), None when the files do not say.
    design : {"balanced", "independent"} or None
        How the tool assigned the memberships, where its own code says so and the files confirm
        it: ``"balanced"`` when every target is IN for exactly half of the models (the LiRA
        reference ``train.py`` ``get_data`` with ``--expid`` and ``--num_experiments``, every
        model of the design read, ``pkeep`` 0.5; the PyTorch port's ``train.py`` ``run``, which
        always ranks that way; Privacy Meter's complementary pairs, ``models/utils.py``
        ``split_dataset_for_training`` and ``util.py`` ``split_dataset_for_training_poisson``),
        ``"independent"`` when each membership is its own fair coin (the reference
        ``get_data`` with ``--seed`` alone and ``pkeep`` 0.5), None when unknown or mixed.
        Checked against ``keep``: a balanced design whose columns are not exactly half IN is
        reported as None.
    recorded : dict
        What the tool recorded about the runs read and that they share (e.g. LiRA's
        ``hparams.json`` fields, Privacy Meter's ``models_metadata.json``), for the record.
    dropped : numpy.ndarray of int
        Targets (columns of the files, before dropping) left out because they have no IN or no
        OUT model (``skip_one_sided=True``); empty otherwise.
    """

    scores: np.ndarray
    keep: np.ndarray
    direction: str
    direction_source: str
    source: str
    models: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    samples: np.ndarray | None = None
    design: str | None = None
    recorded: dict = field(default_factory=dict)
    dropped: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def counts(self, alpha: float, method: str = "online", **kwargs):
        """Cross-fed counts of these scores: :func:`mia.counts_from_score_matrix`.

        With ``method="offline"`` the membership side is this run's ``direction`` unless
        ``side`` is given. Other keyword arguments go to ``counts_from_score_matrix``.
        """
        if method == "offline" and "side" not in kwargs:
            kwargs["side"] = "greater" if self.direction == "higher" else "less"
        return counts_from_score_matrix(self.scores, self.keep, alpha, method, **kwargs)

    def game(self, **kwargs):
        """Play the guessing game on these scores (:func:`mia.guessing_game`, the default evidence).

        ``design`` defaults to this run's ``design`` hint (``None``, "auto", where the tool's
        files do not say); other keyword arguments go to ``guessing_game``.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> keep = rng.random((16, 200)) < 0.5
        >>> run = ScoreRun(rng.normal(size=keep.shape) + 2.0 * keep, keep, "higher", "given", "x")
        >>> run.game(candidates=50).design
        'bits'
        """
        kwargs.setdefault("design", self.design)
        return guessing_game(self.scores, self.keep, **kwargs)

    def in_out_scores(self, model: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Scores of one model's members and non-members, oriented so that higher = member.

        A global-threshold attack (LOSS; the reference ``plot.py`` ``generate_global``) needs
        no reference model: one model's scores of its members and of its non-members form one
        ROC, for :func:`bayes_dp.gdp_evidence`. Augmentations are averaged.

        Parameters
        ----------
        model : int
            The row (target model) whose scores are taken; default 0 (Privacy Meter's first
            target model).

        Returns
        -------
        in_scores, out_scores : numpy.ndarray of float

        Examples
        --------
        >>> keep = np.array([[True, False, True], [False, True, False]])
        >>> run = ScoreRun(np.where(keep, 2.0, 0.0), keep, "higher", "given", "example")
        >>> run.in_out_scores(0)
        (array([2., 2.]), array([0.]))
        """
        n = self.keep.shape[0]
        if isinstance(model, bool) or not isinstance(model, (int, np.integer)):
            raise TypeError(f"`model` must be an int; found {model!r}")
        if not 0 <= model < n:
            raise ValueError(f"`model` must be in [0, {n}); found {model}")
        x = self.scores[model]
        x = x.mean(axis=1) if x.ndim == 2 else x
        if self.direction == "lower":
            x = -x
        k = self.keep[model]
        return x[k].astype(np.float64), x[~k].astype(np.float64)

    def describe(self) -> str:
        """One line: what was read, its shape and the score direction."""
        m, t = self.keep.shape
        aug = f" x {self.scores.shape[2]} augmentations" if self.scores.ndim == 3 else ""
        word = "higher" if self.direction == "higher" else "lower"
        design = f"; design {self.design}" if self.design else ""
        return (
            f"{self.source}: {m} models x {t} targets{aug}; {word} = member{design} "
            f"({self.direction_source})"
        )


def check_direction(direction) -> str:
    """Return ``direction`` checked against :data:`DIRECTIONS`."""
    if direction not in DIRECTIONS:
        raise ValueError(f"`direction` must be one of {DIRECTIONS}; found {direction!r}")
    return direction


def check_finite(arr: np.ndarray, path, what: str) -> None:
    """Refuse NaN or infinite values, naming the file, the first index and the count."""
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{str(path)!r}: {what} must be finite; found {float(arr[idx])!r} at index {idx} "
            f"({int(bad.sum())} non-finite value(s) in all)"
        )


def names(items, limit: int = 5) -> str:
    """Join the first ``limit`` items, then "and N more"."""
    items = [str(i) for i in items]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def read_json(path: Path):
    """Parse a JSON file; a file that is not JSON is a ValueError naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{str(path)!r} is not a JSON file ({e})") from None


def direction_of(scores: np.ndarray, keep: np.ndarray, direction: str, known: str, fmt: str):
    """Return (direction, how it was set): given, or the sign of mean IN - mean OUT."""
    if direction != "auto":
        return direction, "given"
    x = scores.mean(axis=2) if scores.ndim == 3 else scores
    n_in = keep.sum(axis=0)
    m_in = np.where(keep, x, 0.0).sum(axis=0) / np.maximum(n_in, 1)
    m_out = np.where(keep, 0.0, x).sum(axis=0) / np.maximum(keep.shape[0] - n_in, 1)
    both = (n_in > 0) & (n_in < keep.shape[0])
    diff = float(np.mean((m_in - m_out)[both])) if both.any() else 0.0
    found = "higher" if diff > 0 else "lower"
    how = f"detected: mean IN - OUT score {diff:+.3g} over targets"
    if found != known:
        how += f"; {fmt} scores usually have {known} = member"
    return found, how


SKIP_HOW = "skip_one_sided=True in Python, --skip-one-sided on the command line"


def one_sided(keep: np.ndarray, where: str, skip: bool, why: str = ""):
    """Targets with no IN or no OUT model: refuse them, or (``skip``) return them to drop.

    Returns (columns kept, columns dropped, note or None).
    """
    n_in = keep.sum(axis=0)
    never_in = np.flatnonzero(n_in == 0)
    never_out = np.flatnonzero(n_in == keep.shape[0])
    bad = np.union1d(never_in, never_out)
    kept = np.setdiff1d(np.arange(keep.shape[1]), bad)
    if not bad.size:
        return kept, bad, None
    parts = []
    for side, cols in (("IN", never_in), ("OUT", never_out)):
        if cols.size:
            parts.append(f"{cols.size} target(s) have no {side} model ({names(cols)})")
    found = "; ".join(parts)
    if not skip:
        raise ValueError(
            f"{where}: {found} among the {keep.shape[0]} models{why}; every target needs both. "
            f"Drop those targets ({SKIP_HOW}) or train more models"
        )
    if not kept.size:
        raise ValueError(f"{where}: {found}: no target has both IN and OUT models")
    note = f"dropped {bad.size} of {keep.shape[1]} targets without both sides: {found}{why}"
    return kept, bad, note


# -- comparing what the tools record about each run -------------------------------------------
def parse_select(select) -> dict:
    """Return ``select`` as {key: wanted value (str)}: a dict, or strings ``"KEY=VALUE"``."""
    if select is None:
        return {}
    if isinstance(select, str):
        select = [select]
    if isinstance(select, dict):
        items = list(select.items())
    else:
        items = []
        for item in select:
            if not isinstance(item, str) or "=" not in item:
                raise ValueError(
                    f"`select` items must be 'KEY=VALUE' strings (or give a dict); found {item!r}"
                )
            k, _, v = item.partition("=")
            items.append((k.strip(), v.strip()))
    out = {}
    for k, v in items:
        if not isinstance(k, str) or not k:
            raise ValueError(f"`select` keys must be non-empty strings; found {k!r}")
        out[k] = v
    return out


def show(value) -> str:
    """Write a recorded value as ``--select`` takes it (JSON for numbers, None as null)."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def matches(recorded, wanted) -> bool:
    """Whether a recorded value equals a wanted one (given as text or as a value)."""
    if not isinstance(wanted, str):
        return recorded == wanted
    if isinstance(recorded, str):
        return recorded == wanted
    if wanted in ("None", "none", "null") and recorded is None:
        return True
    try:
        value = json.loads(wanted)
    except json.JSONDecodeError:
        return False
    if isinstance(value, bool) != isinstance(recorded, bool):
        return False
    return value == recorded


def _group_label(rec: dict, keys) -> str:
    return ", ".join(f"{k}={show(rec.get(k))}" for k in keys)


def check_one_run(records: list, labels: list, what: str, where: str, select: dict, ignore=()):
    """Refuse a mix of runs, or keep those that ``select`` names.

    Parameters
    ----------
    records : list of dict or None
        What the tool recorded about each item (None: nothing recorded).
    labels : list of str
        The item names (folders, models, files), for the messages.
    what : str
        Where the records come from (e.g. ``"hparams.json"``).
    where : str
        The folder read.
    select : dict
        :func:`parse_select`'s output.
    ignore : iterable of str
        Keys that differ between the runs of one experiment by design (ids, seeds, measured
        accuracies) and are not compared.

    Returns
    -------
    kept : list of int
        The items to read.
    common : dict
        The recorded values the kept items share.
    notes : list of str
    """
    ignore = set(ignore)
    notes = []
    idx = list(range(len(records)))
    if select:
        known = set().union(*(r.keys() for r in records if r))
        unknown = [k for k in select if k not in known]
        if unknown:
            raise ValueError(
                f"`select` names {unknown[0]!r}, which {what} under {where!r} does not record "
                f"(it records: {', '.join(sorted(known)) or 'nothing'})"
            )
        idx = [
            i
            for i in idx
            if records[i] and all(matches(records[i].get(k), v) for k, v in select.items())
        ]
        chosen = ", ".join(f"{k}={v}" for k, v in select.items())
        if not idx:
            found = sorted({_group_label(r, select) for r in records if r})
            raise ValueError(
                f"no run under {where!r} has {chosen} in {what}; found: {'; '.join(found)}"
            )
        notes.append(f"selected {len(idx)} of {len(records)} runs with {chosen} ({what})")
    recs = [records[i] for i in idx]
    if any(r is None for r in recs):
        missing = [labels[i] for i in idx if records[i] is None]
        if len(missing) < len(recs):
            raise ValueError(
                f"{len(missing)} of {len(recs)} runs under {where!r} have no {what} "
                f"({names(missing)}) and the others do: they may come from another experiment; "
                "move them out or write their records"
            )
        notes.append(
            f"no {what}: what the runs were trained with could not be compared (they are "
            "taken to be one experiment)"
        )
        return idx, {}, notes
    keys = sorted(set().union(*(r.keys() for r in recs)) - ignore)
    differ = [k for k in keys if len({json.dumps(r.get(k), sort_keys=True) for r in recs}) > 1]
    if differ:
        groups: dict[str, list[str]] = {}
        for i, r in zip(idx, recs, strict=True):
            groups.setdefault(_group_label(r, differ), []).append(labels[i])
        first = recs[0]
        example = ", ".join(f"{k}={show(first.get(k))}" for k in differ)
        py = "{" + ", ".join(f"{k!r}: {first.get(k)!r}" for k in differ) + "}"
        cli = " ".join(f"--select {k}={show(first.get(k))}" for k in differ)
        shown = "; ".join(
            f"{len(v)} with {label} ({names(v, 3)})" for label, v in sorted(groups.items())
        )
        raise ValueError(
            f"the runs under {where!r} were not all made the same way ({what} differs in "
            f"{', '.join(differ)}): {shown}. Pooling them mixes score distributions; read one "
            f"group, e.g. {example}: select={py} in Python, {cli} on the command line"
        )
    common = {k: recs[0].get(k) for k in keys}
    return idx, common, notes


def torch_weights_layout(path: Path) -> dict | None:
    """Return the tensor layout of a ``torch.save`` file, read without torch.

    ``torch.save`` (``torch/serialization.py`` ``_save``) writes a zip archive holding
    ``<name>/data.pkl`` (the pickled structure) and one ``<name>/data/<key>`` entry per tensor
    storage; two models of one architecture have the same storages. Returns None when the file
    is not such an archive.
    """
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError):
        return None
    storages = [i for i in infos if "/data/" in i.filename and not i.filename.endswith("/")]
    pkl = [i for i in infos if i.filename.endswith("/data.pkl")]
    if not pkl:
        return None
    return {
        "weights_tensors": len(storages),
        "weights_bytes": int(sum(i.file_size for i in storages)),
    }
