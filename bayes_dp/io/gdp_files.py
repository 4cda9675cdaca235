"""Gaussian-DP inputs: score lists, in/out score files and one-run files."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np


def read_scores(path) -> np.ndarray:
    """Read one score a line from ``path`` (a header line and ``#`` comments are skipped)."""
    path = Path(path)
    values = []
    with path.open(encoding="utf-8-sig") as fh:
        for i, line in enumerate(fh, start=1):
            text = line.split("#", 1)[0].strip().rstrip(",")
            if not text:
                continue
            try:
                values.append(float(text))
            except ValueError:
                if values or i > 1:
                    raise ValueError(
                        f"{str(path)!r} line {i}: expected one number, found {text!r}"
                    ) from None
    if not values:
        raise ValueError(f"{str(path)!r} holds no scores")
    return np.asarray(values)


def _csv_rows(path: Path, columns: tuple[str, ...]) -> list[dict]:
    import csv

    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        reader.fieldnames = [c.strip().lower() for c in reader.fieldnames or []]
        rows = list(reader)
    if not rows:
        raise ValueError(f"{str(path)!r} has no data rows")
    for i, row in enumerate(rows, start=1):
        for c in columns:
            if not (row.get(c) or "").strip():
                raise ValueError(f"{str(path)!r} row {i}: column {c!r} is empty")
    return rows


def read_in_out_scores(path) -> tuple[np.ndarray, np.ndarray]:
    """Read an in/out score file (``LAYOUTS["gdp_scores"]``); return (in_scores, out_scores)."""
    path = Path(path)
    if path.suffix.lower() == ".npz":
        try:
            z = np.load(io.BytesIO(path.read_bytes()), allow_pickle=False)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
            raise ValueError(
                f"{str(path)!r} is not a readable .npz archive ({type(e).__name__}: {e}): the "
                "file is damaged; write it again with numpy.savez"
            ) from None
        with z:
            missing = {"in_scores", "out_scores"} - set(z.files)
            if missing:
                raise ValueError(
                    f"{str(path)!r} lacks the array(s) {sorted(missing)}; it holds {z.files}"
                )
            return np.asarray(z["in_scores"], float).ravel(), np.asarray(z["out_scores"], float)
    x_in, x_out = [], []
    for i, row in enumerate(_csv_rows(path, ("score", "member")), start=1):
        try:
            score = float(row["score"])
        except ValueError:
            raise ValueError(
                f"{str(path)!r} row {i}: column 'score' must be a number; found {row['score']!r}"
            ) from None
        member = row["member"].strip().lower()
        if member in ("1", "true"):
            x_in.append(score)
        elif member in ("0", "false"):
            x_out.append(score)
        else:
            raise ValueError(
                f"{str(path)!r} row {i}: column 'member' must be 1/0 or true/false; found "
                f"{row['member']!r}"
            )
    return np.asarray(x_in), np.asarray(x_out)


def read_one_run(path):
    """Read a one-run file (``LAYOUTS["one_run"]``) into :class:`~bayes_dp.OneRunCounts`."""
    from bayes_dp.one_run.core import OneRunCounts

    path = Path(path)
    cols = {c: [] for c in ("m", "r", "v")}
    for i, row in enumerate(_csv_rows(path, tuple(cols)), start=1):
        for c, values in cols.items():
            try:
                values.append(int(row[c]))
            except ValueError:
                raise ValueError(
                    f"{str(path)!r} row {i}: column {c!r} must be an integer; found {row[c]!r}"
                ) from None
    try:
        return OneRunCounts(**cols)
    except ValueError as e:
        raise ValueError(f"{str(path)!r}: {e}") from None
