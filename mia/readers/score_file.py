"""Score files of your own attack: a score matrix in an ``.npz`` or a long ``.csv`` file.

:func:`read_score_file` reads what :func:`mia.counts_from_score_matrix` and
:func:`mia.guessing_game` take (``scores`` and ``keep``); the ``bayes-dp estimate`` command reads
score files through it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = ["read_score_file"]


def read_score_file(path: str | os.PathLike):
    r"""Read a score matrix from an ``.npz`` file or a long ``.csv`` file.

    Parameters
    ----------
    path : str or path-like
        ``.npz``: arrays ``scores`` (n_models, n_targets[, n_augs]) and ``keep`` (n_models,
        n_targets). ``.csv``: a header line and one row per (model, target) with the columns
        ``model, target, score, member`` (``member`` is 1/0 or true/false; model and target
        are labels, sorted numerically when all are integers, else as text); every pair must
        appear exactly once.

    Returns
    -------
    scores : numpy.ndarray of float, shape (n_models, n_targets[, n_augs])
    keep : numpy.ndarray of bool, shape (n_models, n_targets)

    Raises
    ------
    ValueError
        Naming the file and, for CSV, the row (1 = first data row) and column of the first
        problem found.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "s.csv").write_text("model,target,score,member\n0,0,1.5,1\n1,0,0.2,0\n")
    >>> scores, keep = read_score_file(d / "s.csv")
    >>> scores.tolist(), keep.tolist()
    ([[1.5], [0.2]], [[True], [False]])
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as z:
            names = list(z.files)
            for need in ("scores", "keep"):
                if need not in names:
                    raise ValueError(
                        f"{path}: no array {need!r} (arrays found: {', '.join(names) or 'none'}); "
                        "expected 'scores' and 'keep'"
                    )
            return z["scores"], z["keep"]
    if suffix != ".csv":
        raise ValueError(f"{path}: unknown score file type {suffix or '(no extension)'!r}")
    import pandas as pd

    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: the file is empty") from None
    df.columns = [str(c).strip() for c in df.columns]
    for col in ("model", "target", "score", "member"):
        if col not in df.columns:
            raise ValueError(
                f"{path}: missing column {col!r} (columns found: {', '.join(df.columns)})"
            )
    if len(df) == 0:
        raise ValueError(f"{path}: no data rows")
    cells = {c: df[c].str.strip() for c in ("model", "target", "score", "member")}
    score = pd.to_numeric(cells["score"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(score)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{path}: row {i + 1}, column 'score': expected a finite number, found "
            f"{cells['score'].iloc[i]!r}"
        )
    mem_text = cells["member"].str.lower()
    truth = {"1": True, "0": False, "true": True, "false": False, "1.0": True, "0.0": False}
    member = mem_text.map(truth)
    if member.isna().any():
        i = int(np.flatnonzero(member.isna().to_numpy())[0])
        raise ValueError(
            f"{path}: row {i + 1}, column 'member': expected 1/0 or true/false, found "
            f"{cells['member'].iloc[i]!r}"
        )
    index = {}
    for col in ("model", "target"):
        labels = cells[col]
        if (labels == "").any():
            i = int(np.flatnonzero((labels == "").to_numpy())[0])
            raise ValueError(f"{path}: row {i + 1}, column {col!r}: empty cell")
        as_int = pd.to_numeric(labels, errors="coerce")
        key = as_int if (as_int.notna().all() and (as_int % 1 == 0).all()) else labels
        codes, _ = pd.factorize(key, sort=True)
        index[col] = codes
    n_m, n_t = index["model"].max() + 1, index["target"].max() + 1
    flat = index["model"] * n_t + index["target"]
    seen = np.zeros(n_m * n_t, dtype=np.int64)
    np.add.at(seen, flat, 1)
    if (seen > 1).any():
        cell = int(np.flatnonzero(seen > 1)[0])
        rows = np.flatnonzero(flat == cell)
        raise ValueError(
            f"{path}: rows {rows[0] + 1} and {rows[1] + 1} give the same (model, target) = "
            f"({cells['model'].iloc[rows[0]]}, {cells['target'].iloc[rows[0]]})"
        )
    if (seen == 0).any():
        cell = int(np.flatnonzero(seen == 0)[0])
        m_lab = cells["model"].iloc[int(np.flatnonzero(index["model"] == cell // n_t)[0])]
        t_lab = cells["target"].iloc[int(np.flatnonzero(index["target"] == cell % n_t)[0])]
        raise ValueError(
            f"{path}: no row for (model, target) = ({m_lab}, {t_lab}); every model must score "
            f"every target ({n_m} models x {n_t} targets = {n_m * n_t} rows, found {len(df)})"
        )
    scores = np.empty(n_m * n_t)
    keep = np.empty(n_m * n_t, dtype=bool)
    scores[flat] = score
    keep[flat] = member.to_numpy(dtype=bool)
    return scores.reshape(n_m, n_t), keep.reshape(n_m, n_t)
