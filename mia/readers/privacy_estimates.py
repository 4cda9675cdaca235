"""privacy-estimates (``microsoft/responsible-ai-toolbox-privacy``): attack results and scores.

* ``privacy_estimates/utils.py`` ``AttackResults.to_json`` writes one JSON object
  ``{"FN": .., "FP": .., "TN": .., "TP": ..}`` per file; ``privacy_curve_estimation.py``
  ``_compute_epsilon_max`` evaluates one game at every ROC threshold
  (``AttackResults.from_scores_threshold_and_labels``), so files saved there hold the same
  challenges at several thresholds. ``DPParameters`` (``noise_multiplier``,
  ``subsampling_probability``, ``num_steps``) may lie beside them as ``dp_parameters.json``.
* The pipeline's games (``experiments/games/black_box_membership_inference.py``) save the
  attack's ``scores`` (a ``score`` column: ``attacks/lira/lira.py``, ``attacks/rmia/rmia.py``)
  and the ``challenge_bits`` (a ``challenge_bit`` column, ``components/create_in_out_data_for_
  mi_challenge/mi_challenge.py``: one fair coin per challenge point, ``rng.integers(0, 2)``;
  ``challenge_bits`` in ``components/create_challenge_bits``) with Hugging Face
  ``datasets.Dataset.save_to_disk``; ``components/convert_dataset/convert.py``
  ``convert_hfd_to_jsonl`` turns such a dataset into JSON Lines (``Dataset.to_json``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bayes_dp.core.observations import AttackCounts
from bayes_dp.io.detect import ATTACK_RESULTS_FIELDS, is_attack_results

from ._common import check_direction, check_one_run, names, parse_select, read_json

SAME_CHALLENGES = ("roc", "independent")


@dataclass(frozen=True, eq=False)
class AttackResultsRun:
    """privacy-estimates attack results as read by :func:`mia.read_results`.

    Attributes
    ----------
    counts : bayes_dp.AttackCounts or None
        One challenge base per file (None when read as ROCs: ``same_challenges="roc"``).
    files : list of pathlib.Path
        The files read, in order.
    source : str
        What was read.
    notes : list of str
        The files skipped, the games found, what was selected.
    roc : list of bayes_dp.GdpEvidence or None
        With ``same_challenges="roc"``: one whole-ROC input per challenge set, its bins between
        the thresholds of the files (for :func:`bayes_dp.estimate_gdp`).
    """

    counts: AttackCounts | None
    files: list
    source: str
    notes: list = field(default_factory=list)
    roc: list | None = None


def _json_files(root: Path) -> list[Path]:
    """``*.json`` in ``root`` and one level down (``experiment-<i>/``, ``game_<i>/``)."""
    return sorted(root.glob("*.json")) + sorted(root.glob("*/*.json"))


def _dp_parameters(f: Path, root: Path | None):
    for d in (f.parent, root):
        if d is not None and (d / "dp_parameters.json").is_file():
            rec = read_json(d / "dp_parameters.json")
            return rec if isinstance(rec, dict) else None
    return None


def _values(f: Path, obj) -> dict:
    vals = {}
    for k in ATTACK_RESULTS_FIELDS:
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
    return vals


def _nested(rows: list[dict]) -> bool:
    """Whether the rows can be one list of scores cut at several thresholds (ROC points)."""
    order = sorted(rows, key=lambda r: (r["FP"] + r["TP"], r["FP"], r["TP"]))
    fp = np.array([r["FP"] for r in order])
    tp = np.array([r["TP"] for r in order])
    return bool(np.all(np.diff(fp) >= 0) and np.all(np.diff(tp) >= 0))


def _roc_evidence(rows: list[dict], name: str):
    """One challenge set's ROC points as binned in/out counts (bayes_dp.GdpEvidence).

    With thresholds t_1 > ... > t_J (more "member" calls at each), the top bin holds the
    challenges called members at t_1, the next those called at t_2 but not t_1, ..., the lowest
    those never called; empty bins are merged into their neighbours.
    """
    from bayes_dp.gdp.core import GdpEvidence

    order = sorted(rows, key=lambda r: (r["FP"] + r["TP"], r["FP"], r["TP"]))
    tp = np.array([0] + [r["TP"] for r in order])
    fp = np.array([0] + [r["FP"] for r in order])
    n_pos = order[0]["TP"] + order[0]["FN"]
    n_neg = order[0]["FP"] + order[0]["TN"]
    b = np.concatenate([[n_pos - tp[-1]], np.diff(tp)[::-1]])  # lowest bin first
    a = np.concatenate([[n_neg - fp[-1]], np.diff(fp)[::-1]])
    keep = (a + b) > 0
    b, a = b[keep], a[keep]
    if b.size < 2:
        raise ValueError(
            f"the files of challenge set {name!r} put every challenge on one side of their "
            "thresholds: no ROC point to read"
        )
    return GdpEvidence(in_counts=b, out_counts=a, name=name)


def read_attack_results_run(paths, *, select=None, same_challenges=None) -> AttackResultsRun:
    """Read privacy-estimates attack-results files: :func:`mia.read_results` for this format.

    Parameters
    ----------
    paths : str, path-like, or a sequence of them
        A folder (every ``*.json`` in it and one level down, as in ``experiment-<i>/`` or
        ``game_<i>/``; JSON files without ``FN``, ``FP``, ``TN``, ``TP`` such as
        ``dp_parameters.json`` are skipped with a note), one file, or several files.
    select : dict or list of str, optional
        Read only the files whose ``dp_parameters.json`` (in their folder, or the folder given)
        has these values; files under different DP parameters are refused unless one group is
        selected.
    same_challenges : {None, "roc", "independent"}
        What files with the same challenge totals (FP + TN and FN + TP equal) are: by default
        (None) they are refused, since ``_compute_epsilon_max`` saves one game at many
        thresholds this way and reading them as independent bases counts its challenges many
        times. ``"roc"``: each set of files with the same totals is one game's ROC, read as one
        whole-ROC input (``roc``; the counts must be nested, as thresholds of one list of scores
        make them). ``"independent"``: they are independent games that happen to have the same
        size; one base per file.

    Returns
    -------
    AttackResultsRun

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for i, (fp, tp) in enumerate([(5, 40), (20, 70), (50, 90)]):  # one game, 3 thresholds
    ...     obj = {"FN": 100 - tp, "FP": fp, "TN": 100 - fp, "TP": tp}
    ...     _ = (root / f"attack_results_{i}.json").write_text(json.dumps(obj))
    >>> run = read_attack_results_run(root, same_challenges="roc")
    >>> ev = run.roc[0]
    >>> ev.in_counts.tolist(), ev.out_counts.tolist()
    ([10, 20, 30, 40], [50, 30, 15, 5])
    """
    if same_challenges not in (None, *SAME_CHALLENGES):
        raise ValueError(
            f"`same_challenges` must be None, 'roc' or 'independent'; found {same_challenges!r}"
        )
    chosen = parse_select(select)
    notes: list[str] = []
    root = None
    if isinstance(paths, (str, os.PathLike)):
        p = Path(paths)
        if not p.exists():
            raise FileNotFoundError(f"no such file or folder: {str(p)!r}")
        if p.is_dir():
            root = p
            files = _json_files(p)
            if not files:
                raise ValueError(
                    f"{str(p)!r} holds no *.json attack-results file (in it or one folder down)"
                )
        else:
            files = [p]
    else:
        files = [Path(p) for p in paths]
        if not files:
            raise ValueError("`paths` is empty")
    rows, used, skipped = [], [], []
    for f in files:
        if not f.is_file():
            raise FileNotFoundError(f"no such file or folder: {str(f)!r}")
        obj = read_json(f)
        if not is_attack_results(obj):
            if root is not None:
                skipped.append(str(f.relative_to(root)))
                continue
            raise ValueError(f"{str(f)!r}: expected an object with FN, FP, TN, TP")
        rows.append(_values(f, obj))
        used.append(f)
    if skipped:
        notes.append(
            f"skipped {len(skipped)} JSON file(s) without FN, FP, TN, TP fields (not attack "
            f"results, e.g. privacy-estimates' dp_parameters.json): {names(skipped)}"
        )
    if not rows:
        raise ValueError(
            f"{str(files[0].parent)!r} holds no attack-results JSON file (objects with FN, FP, "
            f"TN, TP); {notes[0]}"
        )
    where = str(root) if root is not None else str(used[0].parent)
    label = [str(f.relative_to(root)) if root is not None else f.name for f in used]
    records = [_dp_parameters(f, root) for f in used]
    if chosen or any(r is not None for r in records):
        idx, _, more = check_one_run(records, label, "dp_parameters.json", where, chosen)
        notes += more
        rows, used, label = [rows[i] for i in idx], [used[i] for i in idx], [label[i] for i in idx]
    if len({f.parent for f in used}) > 1:
        notes.append(
            f"read attack results from {len({f.parent for f in used})} folders: "
            f"{names(sorted({str(f.parent) for f in used}))}"
        )
    games: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        games.setdefault((r["FP"] + r["TN"], r["FN"] + r["TP"]), []).append(i)
    shared = {k: v for k, v in games.items() if len(v) > 1}
    if shared and same_challenges is None:
        (neg, pos), members = max(shared.items(), key=lambda kv: len(kv[1]))
        nested = _nested([rows[i] for i in members])
        what = (
            "their counts are nested, as the thresholds of one list of scores make them (as "
            "privacy-estimates' _compute_epsilon_max evaluates one game)"
            if nested
            else "their counts are not nested, so they are not thresholds of one list of scores "
            "(several attacks on one challenge set, or games of equal size)"
        )
        roc = (
            "read each set as one game's ROC: same_challenges='roc' in Python, "
            "--same-challenges roc on the command line (a Gaussian-DP posterior); "
            if nested
            else ""
        )
        raise ValueError(
            f"{len(members)} files under {where!r} hold challenge sets of the same size "
            f"({neg} non-members and {pos} members each: {names(label[i] for i in members)}); "
            f"{what}. Reading them as independent challenge bases would count the same "
            f"challenges {len(members)} times. Give one file (the threshold fixed before seeing "
            f"the results), e.g. {str(used[members[0]])!r}; {roc}or, if they are independent "
            "games of equal size, same_challenges='independent' (--same-challenges independent)"
        )
    if same_challenges == "roc":
        evidence = []
        for n, ((neg, pos), members) in enumerate(sorted(games.items())):
            sub = [rows[i] for i in members]
            if not _nested(sub):
                raise ValueError(
                    f"the {len(members)} files with {neg} non-members and {pos} members "
                    f"({names(label[i] for i in members)}) are not nested: not the thresholds of "
                    "one list of scores, so not one ROC"
                )
            evidence.append(_roc_evidence(sub, "game" if len(games) == 1 else f"game_{n + 1}"))
            notes.append(
                f"challenge set {n + 1} ({neg} non-members, {pos} members): {len(members)} "
                f"threshold(s) read as one ROC ({names(label[i] for i in members)}); the bins lie "
                "between the thresholds, and thresholds chosen from the memberships (as "
                "sklearn's roc_curve chooses them) make the bins depend on them: read the "
                "game's scores/ and challenge_bits/ instead where you have them"
            )
        return AttackResultsRun(
            None, used, f"privacy-estimates ROC points in {where}", notes, evidence
        )
    if shared:
        notes.append(
            f"{sum(len(v) for v in shared.values())} files share challenge-set sizes and were "
            "read as independent games (same_challenges='independent')"
        )
    counts = AttackCounts(
        fp=[r["FP"] for r in rows],
        n_neg=[r["FP"] + r["TN"] for r in rows],
        fn=[r["FN"] for r in rows],
        n_pos=[r["FN"] + r["TP"] for r in rows],
    )
    src = where if root is not None else (str(used[0]) if len(used) == 1 else f"{len(used)} files")
    return AttackResultsRun(counts, used, f"privacy-estimates attack results in {src}", notes)


def read_attack_results(paths, *, select=None, same_challenges=None) -> AttackCounts:
    """Read privacy-estimates attack-results JSON files into counts, one base per file.

    Parameters
    ----------
    paths : str, path-like, or a sequence of them
        A folder (every ``*.json`` in it and one level down, in sorted order; JSON files
        without the fields ``FN``, ``FP``, ``TN``, ``TP``, such as privacy-estimates'
        ``dp_parameters.json``, are skipped: :func:`mia.read_results` lists them), one file, or
        several files. Each holds one JSON object with the integer fields ``FN``, ``FP``,
        ``TN``, ``TP``, as privacy-estimates' ``AttackResults.to_json`` writes it.
    select, same_challenges
        As in :func:`read_attack_results_run`; ``same_challenges="roc"`` is not counts (use
        :func:`mia.read_results`).

    Returns
    -------
    bayes_dp.AttackCounts
        Per file: ``fp = FP`` of ``n_neg = FP + TN`` non-members, ``fn = FN`` of
        ``n_pos = FN + TP`` members.

    Raises
    ------
    FileNotFoundError, ValueError
        Naming the file: missing, not JSON, a field missing or not a non-negative integer, no
        member or no non-member, several files of one challenge set (``same_challenges``).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "base_0.json").write_text(json.dumps({"FN": 25, "FP": 4, "TN": 96, "TP": 75}))
    >>> counts = read_attack_results(root)
    >>> counts.fp.tolist(), counts.n_neg.tolist(), counts.fn.tolist(), counts.n_pos.tolist()
    ([4], [100], [25], [100])
    """
    if same_challenges == "roc":
        raise ValueError("same_challenges='roc' gives ROCs, not counts: use mia.read_results")
    return read_attack_results_run(paths, select=select, same_challenges=same_challenges).counts


# -- the pipeline's scores and challenge bits ---------------------------------------------------
@dataclass(frozen=True, eq=False)
class ChallengeScores:
    """One score and one challenge bit per challenge point (privacy-estimates' pipeline).

    Attributes
    ----------
    scores : numpy.ndarray of float, shape (n,)
        The attack's score of each challenge point, as written.
    members : numpy.ndarray of bool, shape (n,)
        The challenge bit: True where the point was in the training data.
    direction : {"higher", "lower"}
        Whether higher scores mean member (the files do not say which attack wrote them:
        privacy-estimates' LiRA scores have lower = member, its RMIA scores higher).
    direction_source : str
        ``"given"`` or ``"detected: ..."``.
    source : str
        What was read.
    notes : list of str
    design : str
        ``"independent"``: the pipeline draws each challenge bit by its own fair coin.
    """

    scores: np.ndarray
    members: np.ndarray
    direction: str
    direction_source: str
    source: str
    notes: list = field(default_factory=list)
    design: str = "independent"

    def in_out_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the members' and non-members' scores, oriented so that higher = member."""
        x = self.scores if self.direction == "higher" else -self.scores
        return x[self.members], x[~self.members]

    def to_gdp_evidence(self, bins=None, name: str = "challenges"):
        """Whole-ROC evidence: :func:`bayes_dp.gdp_evidence` of the in- and out-scores."""
        from bayes_dp.gdp.core import gdp_evidence

        return gdp_evidence(*self.in_out_scores(), bins=bins, name=name)

    def describe(self) -> str:
        """One line: what was read and the score direction."""
        n1 = int(self.members.sum())
        return (
            f"{self.source}: {self.scores.size} challenge points ({n1} members); "
            f"{self.direction} = member ({self.direction_source})"
        )


_PARTS = {"scores": ("score",), "challenge_bits": ("challenge_bit", "challenge_bits")}


def _hf_dataset(path: Path) -> bool:
    return path.is_dir() and (
        (path / "dataset_info.json").is_file()
        or (path / "state.json").is_file()
        or any(path.glob("*.arrow"))
    )


def challenge_parts(root: Path) -> dict[str, Path] | None:
    """Find the ``scores`` and ``challenge_bits`` of a pipeline output folder, or None."""
    found = {}
    for part in _PARTS:
        for cand in (root / part, root / f"{part}.jsonl", root / f"{part}.json"):
            if (cand.is_dir() and _hf_dataset(cand)) or cand.is_file():
                found[part] = cand
                break
    return found if len(found) == 2 else None


def _column(path: Path, part: str) -> np.ndarray:
    cols = _PARTS[part]
    if path.is_dir():
        try:
            import datasets
        except ImportError:
            raise ValueError(
                f"{str(path)!r} is a Hugging Face dataset (saved with save_to_disk); reading it "
                "needs the datasets package: pip install 'bayes-dp[hf]'; or convert it to JSON "
                f"Lines beside it (datasets.load_from_disk(path).to_json('{part}.jsonl'), as "
                "privacy-estimates' convert_hfd_to_jsonl does), which needs no extra"
            ) from None
        try:
            ds = datasets.load_from_disk(str(path))
        except Exception as e:  # a damaged or partial dataset folder
            raise ValueError(
                f"{str(path)!r} could not be read as a Hugging Face dataset ({type(e).__name__}: "
                f"{e}); copy it again"
            ) from None
        have = list(ds.column_names)
        col = next((c for c in cols if c in have), None)
        if col is None:
            raise ValueError(
                f"{str(path)!r} has no column {cols[0]!r} (columns: {', '.join(have)})"
            )
        values = ds[col]
    else:
        values = []
        with path.open(encoding="utf-8-sig") as fh:
            for i, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(
                        f"{str(path)!r} line {i}: not JSON Lines ({e}); expected one object a "
                        f"line with {cols[0]!r}, as Dataset.to_json writes"
                    ) from None
                col = next((c for c in cols if isinstance(obj, dict) and c in obj), None)
                if col is None:
                    raise ValueError(f"{str(path)!r} line {i}: no field {cols[0]!r}")
                values.append(obj[col])
        if not values:
            raise ValueError(f"{str(path)!r} holds no rows")
    bad = [i for i, v in enumerate(values) if not isinstance(v, (int, float)) or v is True]
    if bad:
        raise ValueError(
            f"{str(path)!r} row {bad[0] + 1}: {cols[0]} must be a number; found {values[bad[0]]!r}"
        )
    arr = np.asarray(values, dtype=np.float64)
    if part == "scores":
        nonfinite = np.flatnonzero(~np.isfinite(arr))
        if nonfinite.size:
            raise ValueError(
                f"{str(path)!r} row {nonfinite[0] + 1}: scores must be finite; found "
                f"{arr[nonfinite[0]]!r} ({nonfinite.size} in all; privacy-estimates marks "
                "invalid rows with -inf)"
            )
    elif not np.isin(arr, (0, 1)).all():
        i = int(np.flatnonzero(~np.isin(arr, (0, 1)))[0])
        raise ValueError(f"{str(path)!r} row {i + 1}: a challenge bit must be 0 or 1")
    return arr


def read_challenge_scores(directory, *, direction: str = "auto") -> ChallengeScores:
    r"""Read the ``scores`` and ``challenge_bits`` a privacy-estimates game writes.

    Parameters
    ----------
    directory : str or path-like
        A folder holding ``scores`` and ``challenge_bits``, each a Hugging Face dataset folder
        (``save_to_disk``; read with the ``datasets`` package, extra ``[hf]``) or its JSON Lines
        conversion ``scores.jsonl`` / ``challenge_bits.jsonl`` (``.json`` too; read without
        it): one ``{"score": x}`` and one ``{"challenge_bit": 0 or 1}`` a line, row i of one
        belonging to row i of the other.
    direction : {"auto", "higher", "lower"}
        Whether higher scores mean member; ``"auto"`` takes the sign of mean member score minus
        mean non-member score and says so (the files do not record which attack wrote them).

    Returns
    -------
    ChallengeScores

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> rng = np.random.default_rng(0)
    >>> bits = rng.integers(0, 2, 40)
    >>> scores = rng.normal(0, 1, 40) + 2.0 * bits
    >>> _ = (root / "scores.jsonl").write_text("".join(json.dumps({"score": s}) + "\n"
    ...                                                  for s in scores))
    >>> _ = (root / "challenge_bits.jsonl").write_text("".join(
    ...     json.dumps({"challenge_bit": int(b)}) + "\n" for b in bits))
    >>> run = read_challenge_scores(root)
    >>> run.scores.size, int(run.members.sum()), run.direction
    (40, 23, 'higher')
    """
    check_direction(direction)
    root = Path(directory)
    if not root.exists():
        raise FileNotFoundError(f"no such file or folder: {str(root)!r}")
    parts = challenge_parts(root) if root.is_dir() else None
    if parts is None:
        raise ValueError(
            f"{str(root)!r} does not hold privacy-estimates' scores and challenge_bits (dataset "
            "folders, or scores.jsonl and challenge_bits.jsonl)"
        )
    x = _column(parts["scores"], "scores")
    bits = _column(parts["challenge_bits"], "challenge_bits").astype(bool)
    if x.size != bits.size:
        raise ValueError(
            f"{str(parts['scores'])!r} has {x.size} rows but {str(parts['challenge_bits'])!r} "
            f"{bits.size}: row i of one must belong to row i of the other"
        )
    if bits.all() or not bits.any():
        raise ValueError(
            f"{str(parts['challenge_bits'])!r}: every challenge bit is {int(bits[0])}; the "
            "game needs members and non-members"
        )
    if direction != "auto":
        how = "given"
    else:
        diff = float(x[bits].mean() - x[~bits].mean())
        direction = "higher" if diff > 0 else "lower"
        how = (
            f"detected: mean member - non-member score {diff:+.3g} (privacy-estimates' LiRA "
            "scores have lower = member, its RMIA scores higher; the files do not say which "
            "attack wrote them)"
        )
    kinds = {p: ("dataset" if v.is_dir() else "JSON Lines") for p, v in parts.items()}
    return ChallengeScores(
        x,
        bits,
        direction,
        how,
        f"privacy-estimates scores and challenge bits in {str(root)!r} ({kinds['scores']})",
        [],
    )
