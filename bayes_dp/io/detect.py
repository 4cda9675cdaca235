"""Which kind of input a path is: the one function that decides a file's format.

:func:`detect_input` sends every input of ``bayes-dp estimate`` to its reader: bayes_dp's own
(counts, Gaussian-DP scores, one-run files) or mia's (score matrices, result folders,
privacy-estimates attack results; read through :func:`bayes_dp.io.evidence_from_mia`). Which tool
wrote a result folder is decided by :func:`mia.readers.detect_format`, which knows the tools'
folder layouts and nothing of bayes_dp's files. The one signature both need, that of a
privacy-estimates attack result (:func:`is_attack_results`, fields
:data:`ATTACK_RESULTS_FIELDS`), is here and only here: imports flow mia -> bayes_dp, so mia's
reader (``mia.readers.privacy_estimates``) takes it from this module, and bayes_dp needs no
import of mia to route a ``.json`` file.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

#: The kinds :func:`detect_input` tells apart, with their layouts.
LAYOUTS = {
    "result_folder": "a folder written by the LiRA reference code (experiment-*/), Privacy Meter "
    "(models/memberships.npy, signals/) or privacy-estimates (*.json attack results)",
    "attack_results": "privacy-estimates attack results: a .json object with FN, FP, TN, TP",
    "gdp_scores": "in/out score file: .npz with arrays in_scores and out_scores, or .csv with "
    "columns score and member (1/0 or true/false; no model/target columns)",
    "one_run": "one-run file: .csv with columns m, r, v (one audit a row)",
    "score_matrix": "score matrix: .npz with arrays scores and keep, or a long .csv with columns "
    "model, target, score, member",
    "counts": "counts file: .csv or .json rows of fp, n_neg, fn, n_pos (optional group, "
    "likelihood)",
}

#: The fields of a privacy-estimates ``AttackResults`` JSON object (the one place they are named;
#: ``mia.readers.privacy_estimates`` reads them from here).
ATTACK_RESULTS_FIELDS = ("FN", "FP", "TN", "TP")


def is_attack_results(obj) -> bool:
    """Tell whether a parsed JSON value is a privacy-estimates ``AttackResults`` object.

    That is a dict with any of the fields ``FN``, ``FP``, ``TN``, ``TP``
    (``AttackResults.to_json`` writes all four; a missing one is then an error, not a skip).
    """
    return isinstance(obj, dict) and any(k in obj for k in ATTACK_RESULTS_FIELDS)


def is_attack_results_file(path) -> bool:
    """Tell whether ``path`` is a ``.json`` file holding a privacy-estimates attack result.

    That is one JSON object that :func:`is_attack_results` recognises (as
    ``AttackResults.to_json`` writes it), read by :func:`mia.read_results` rather than as a
    counts file. A file that cannot be read or parsed is not one (the counts reader reports it).
    """
    path = Path(path)
    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    try:
        obj = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return is_attack_results(obj)


def _header(path: Path) -> set[str]:
    """Return the lower-cased column names of a CSV file's first line."""
    with path.open(encoding="utf-8-sig") as fh:
        return {c.strip().lower() for c in fh.readline().split(",")}


def detect_input(path, fmt: str = "auto") -> str:
    r"""Return which kind of input ``path`` is: one of the keys of :data:`LAYOUTS`.

    Parameters
    ----------
    path : str or path-like
        The input of ``bayes-dp estimate``.
    fmt : {"auto", "csv", "json"}
        ``--format``: "json" declares a counts file; "csv" a CSV file (counts, or whatever its
        header says) whatever its extension.

    Returns
    -------
    str
        In the order checked: "result_folder" (a folder), "attack_results" (a ``.json`` object
        with ``FN``, ``FP``, ``TN``, ``TP``), "gdp_scores" (``.npz`` with ``in_scores`` and
        ``out_scores``, or ``.csv`` with ``score`` and ``member`` but no ``model``/``target``),
        "one_run" (``.csv`` with ``m``, ``r``, ``v``), "score_matrix" (any other ``.npz``, or
        ``.csv`` with ``score`` and ``member``), else "counts" (the counts reader reports a
        file that is not one).

    Raises
    ------
    FileNotFoundError
        "no such file or folder: <path>".
    ValueError
        For a ``.npz`` file that is not a readable archive, naming it.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.csv").write_text("model,target,score,member\n0,0,1.5,1\n")
    >>> _ = (d / "b.csv").write_text("score,member\n1.5,1\n")
    >>> detect_input(d / "a.csv"), detect_input(d / "b.csv"), detect_input(d)
    ('score_matrix', 'gdp_scores', 'result_folder')
    """
    if fmt not in ("auto", "csv", "json"):
        raise ValueError(f"`fmt` must be 'auto', 'csv' or 'json'; found {fmt!r}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file or folder: {path}")
    if path.is_dir():
        return "result_folder"
    if fmt == "json" or not path.is_file():
        return "counts"
    suffix = path.suffix.lower()
    if suffix == ".json" and fmt == "auto":
        return "attack_results" if is_attack_results_file(path) else "counts"
    if suffix == ".npz":
        try:
            with path.open("rb") as fh, np.load(fh, allow_pickle=False) as z:
                names = set(z.files)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
            raise ValueError(
                f"{path} is not a readable .npz archive ({type(e).__name__}: {e}): the file is "
                "damaged (a run stopped while writing it, or a partial copy); write it again "
                "with numpy.savez"
            ) from None
        return "gdp_scores" if {"in_scores", "out_scores"} <= names else "score_matrix"
    if suffix != ".csv" and fmt != "csv":
        return "counts"
    head = _header(path)
    if {"score", "member"} <= head:
        return "score_matrix" if head & {"model", "target"} else "gdp_scores"
    if {"m", "r", "v"} <= head:
        return "one_run"
    return "counts"
