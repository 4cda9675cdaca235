"""Count files: CSV or JSON rows of ``fp, n_neg, fn, n_pos`` into Evidence.

Optional columns ``group`` and ``likelihood``; errors name the file, row and column.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
from pathlib import Path

import numpy as np

REQUIRED = ("fp", "n_neg", "fn", "n_pos")


OPTIONAL = ("group", "likelihood")


VALID = REQUIRED + OPTIONAL


DEFAULT_GROUP = "counts"


class InputError(ValueError):
    """A malformed counts file; the message names the file, row and column."""


def _parse_count(text, row: int, col: str, where: str) -> int:
    """One count cell as a non-negative int, or InputError naming the row and column."""
    if isinstance(text, bool):
        raise InputError(f"{where}row {row}, column {col!r}: expected a count, found {text!r}")
    if isinstance(text, (int, np.integer)):
        val = int(text)
    else:
        s = str(text).strip() if text is not None else ""
        if s == "":
            raise InputError(f"{where}row {row}, column {col!r}: empty cell, expected a count")
        try:
            val = int(s)
        except ValueError:
            try:
                f = float(s)
            except ValueError:
                raise InputError(
                    f"{where}row {row}, column {col!r}: expected an integer count, found {s!r}"
                ) from None
            if not np.isfinite(f) or f != round(f):
                raise InputError(
                    f"{where}row {row}, column {col!r}: expected an integer count, found {s!r}"
                ) from None
            val = int(f)
    if val < 0:
        raise InputError(f"{where}row {row}, column {col!r}: counts must be >= 0, found {val}")
    return val


def _suggest(name: str) -> str:
    """`` (did you mean 'n_neg'?)`` for the closest valid column name, or ``""``."""
    close = difflib.get_close_matches(name.lower(), VALID, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _canonical_columns(
    where: str, names: list, what: str = "header cell", require: bool = True
) -> list[str]:
    """Map the raw column names to the valid ones (case-insensitive), or raise InputError.

    Checks, in order: names that are not strings or empty, a header that looks semicolon- or
    tab-separated, duplicates (after ignoring case and surrounding spaces), unknown names
    (with the closest valid name suggested) and, with ``require``, missing required columns.
    ``where`` starts every message (the file, and the row for JSON row objects).
    """
    out: list[str] = []
    seen: dict[str, tuple[int, str]] = {}
    for j, raw in enumerate(names, start=1):
        if not isinstance(raw, str):
            raise InputError(f"{where}: {what} {j}: column names must be text; found {raw!r}")
        name = raw.strip()
        if name == "":
            raise InputError(
                f"{where}: {what} {j} is empty (a trailing or doubled comma?); "
                f"valid columns: {', '.join(VALID)}"
            )
        for sep, word in ((";", "semicolon"), ("\t", "tab")):
            if sep in name:
                raise InputError(
                    f"{where}: column {raw!r} holds a {word}: the file looks {word}-separated; "
                    f"bayes-dp reads comma-separated CSV (header like {','.join(REQUIRED)})"
                )
        key = name.lower()
        if key in seen:
            k0, raw0 = seen[key]
            raise InputError(
                f"{where}: duplicate column {key!r} ({what}s {k0} {raw0!r} and {j} {raw!r}; "
                "column names are case-insensitive)"
            )
        seen[key] = (j, raw)
        out.append(key)
    unknown = [(raw, key) for raw, key in zip(names, out, strict=True) if key not in VALID]
    if unknown:
        listed = ", ".join(f"{raw!r}{_suggest(key)}" for raw, key in unknown)
        raise InputError(
            f"{where}: unknown column{'s' if len(unknown) > 1 else ''} {listed}; valid columns: "
            f"{', '.join(VALID)}"
        )
    missing = [c for c in REQUIRED if c not in out]
    if require and missing:
        found = ", ".join(map(repr, names)) or "none"
        raise InputError(f"{where}: missing column {missing[0]!r} (columns found: {found})")
    return out


def _no_duplicate_keys(pairs: list) -> dict:
    """``object_pairs_hook`` for :func:`json.loads` that refuses repeated keys."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise InputError(f"duplicate key {k!r} in a JSON object")
        out[k] = v
    return out


def _rows_from_file(path: Path, fmt: str) -> list[dict]:
    if fmt == "auto":
        suffix = path.suffix.lower()
        if suffix in (".csv", ".json"):
            fmt = suffix[1:]
        else:
            raise InputError(
                f"{path}: unknown file type {suffix or '(no extension)'!r}; use a .csv or "
                ".json file, or --format csv|json"
            )
    text = path.read_text(encoding="utf-8-sig")
    if not text.strip():
        raise InputError(f"{path}: the file is empty; expected columns {', '.join(REQUIRED)}")
    if fmt == "csv":
        reader = csv.reader(io.StringIO(text))
        header_raw = next(reader, None)
        while header_raw is not None and all(c.strip() == "" for c in header_raw):
            header_raw = next(reader, None)  # blank lines before the header
        if header_raw is None:
            raise InputError(f"{path}: no header line")
        header = _canonical_columns(str(path), header_raw)
        rows = []
        for record in reader:
            if all(c.strip() == "" for c in record):
                continue  # blank line
            if len(record) > len(header):
                raise InputError(
                    f"{path}: row {len(rows) + 1} (line {reader.line_num}): more cells "
                    f"({len(record)}) than header columns ({len(header)})"
                )
            rows.append({h: (record[j] if j < len(record) else None) for j, h in enumerate(header)})
    else:
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}: not valid JSON ({e})") from None
        except InputError as e:
            raise InputError(f"{path}: {e}") from None
        if isinstance(data, dict):
            header = _canonical_columns(str(path), list(data), what="column")
            cols = dict(zip(header, data.values(), strict=True))
            for raw, v in data.items():
                if not isinstance(v, list):
                    raise InputError(
                        f"{path}: column {raw!r} must be a list of values; found {type(v).__name__}"
                    )
            lengths = {raw: len(v) for raw, v in data.items()}
            if len(set(lengths.values())) > 1:
                raise InputError(f"{path}: columns have different lengths: {lengths}")
            n = next(iter(lengths.values()), 0)
            rows = [{k: v[i] for k, v in cols.items()} for i in range(n)]
        elif isinstance(data, list):
            rows = []
            for i, r in enumerate(data, start=1):
                if not isinstance(r, dict):
                    raise InputError(
                        f"{path}: row {i}: expected an object with keys "
                        f"{', '.join(REQUIRED)}; found {type(r).__name__}"
                    )
                keys = _canonical_columns(f"{path}: row {i}", list(r), "key", require=False)
                missing = [c for c in REQUIRED if c not in keys]
                if missing:
                    raise InputError(f"{path}: row {i}: missing column {missing[0]!r}")
                rows.append(dict(zip(keys, r.values(), strict=True)))
        else:
            raise InputError(
                f"{path}: expected a list of row objects or an object of columns; found "
                f"{type(data).__name__}"
            )
    if not rows:
        raise InputError(f"{path}: no data rows")
    return rows


def _text_cell(value, row: int, col: str, where: str, has_column: bool, default: str) -> str:
    """Return a ``group`` or ``likelihood`` cell as stripped text; empty cells are errors."""
    if not has_column:
        return default
    text = "" if value is None else str(value).strip()
    if text == "":
        raise InputError(
            f"{where}row {row}, column {col!r}: empty cell; the file has a {col!r} column, so "
            "every row needs a value"
        )
    return text


def read_counts(path, *, fmt: str = "auto") -> list:
    """Read a counts file into a list of :class:`~bayes_dp.Evidence` (one per group).

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` file with a header line, or a ``.json`` file holding a list of row objects
        or an object of columns.
    fmt : {"auto", "csv", "json"}
        File format; "auto" goes by the extension.

    Returns
    -------
    list of Evidence
        In order of first appearance of each group; the first shares the strength ``s``, the
        others have ``strength="own"``.

    Raises
    ------
    InputError
        (a ValueError) naming the row and column of the first problem found: a count that is
        not a non-negative integer or exceeds its total, an unknown, duplicate or misspelt
        column (the closest valid name is suggested), an empty ``group`` or ``likelihood``
        cell, an invalid group name, or a semicolon-separated file.
    OSError
        If the file cannot be read.

    Notes
    -----
    Column names are case-insensitive (``FP`` is ``fp``). Without a ``group`` column all rows
    form one group named "counts"; without a ``likelihood`` column every group is "binomial".
    Group names follow :func:`bayes_dp.core.evidence.check_group_name`: a letter (any script) or an
    underscore first, then letters, digits, underscores, hyphens or single spaces, at most 64
    characters; they are compared after Unicode NFC normalisation.
    """
    return _read_counts(path, fmt=fmt)[0]


def _read_counts(path, *, fmt: str = "auto") -> tuple[list, list[list[int]]]:
    """:func:`read_counts`, and the data rows (from 1) of each group's bases in the file."""
    from bayes_dp.core.evidence import Evidence, check_group_name
    from bayes_dp.core.observations import AttackCounts

    if fmt not in ("auto", "csv", "json"):
        raise ValueError(f"`fmt` must be 'auto', 'csv' or 'json'; found {fmt!r}")
    path = Path(path)
    where = f"{path}: "
    rows = _rows_from_file(path, fmt)
    has = {c: any(c in r for r in rows) for c in OPTIONAL}
    groups: dict[str, dict] = {}
    for i, r in enumerate(rows, start=1):
        vals = {c: _parse_count(r.get(c), i, c, where) for c in REQUIRED}
        for count, total in (("fp", "n_neg"), ("fn", "n_pos")):
            if vals[total] < 1:
                raise InputError(
                    f"{where}row {i}, column {total!r}: must be >= 1, found {vals[total]}"
                )
            if vals[count] > vals[total]:
                raise InputError(
                    f"{where}row {i}, column {count!r}: {count}={vals[count]} exceeds "
                    f"{total}={vals[total]}"
                )
        g = _text_cell(r.get("group"), i, "group", where, has["group"], DEFAULT_GROUP)
        try:
            g = check_group_name(g)
        except ValueError as e:
            raise InputError(f"{where}row {i}, column 'group': {e}") from None
        lik = _text_cell(r.get("likelihood"), i, "likelihood", where, has["likelihood"], "binomial")
        entry = groups.setdefault(g, {"rows": [], "likelihood": lik, "first": i})
        if entry["likelihood"] != lik:
            raise InputError(
                f"{where}row {i}, column 'likelihood': group {g!r} has likelihood "
                f"{entry['likelihood']!r} (row {entry['first']}) but {lik!r} here"
            )
        entry["rows"].append(vals)
        entry.setdefault("lines", []).append(i)
    out = []
    for j, (name, entry) in enumerate(groups.items()):
        cols = {c: [v[c] for v in entry["rows"]] for c in REQUIRED}
        try:
            ev = Evidence(
                AttackCounts(**cols),
                likelihood=entry["likelihood"],
                name=name,
                strength="shared" if j == 0 else "own",
            )
        except ValueError as e:
            col = "likelihood" if "likelihood" in str(e) else "group"
            raise InputError(f"{where}row {entry['first']}, column {col!r}: {e}") from None
        out.append(ev)
    return out, [entry["lines"] for entry in groups.values()]
