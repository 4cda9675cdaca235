"""Checks of a score matrix and of the options of the tests run on it.

:func:`check_score_matrix` and :func:`check_keep` check the arrays, :func:`check_options` the
options of :func:`mia.counts_from_score_matrix` (the tests in :data:`METHODS`, the sides in
:data:`SIDES`), :func:`check_focus` the targets declared before the audit. Shared by
:mod:`mia.scores`, :mod:`mia.guessing`, :mod:`mia.model_rates` and :mod:`mia.selection`; a leaf
of ``mia`` but for :mod:`mia.array_files`, which reads a file of declared targets.
"""

from __future__ import annotations

import os

import numpy as np

from bayes_dp.core.validation import check_positive_int

from .array_files import read_integer_file

__all__ = [
    "METHODS",
    "SIDES",
    "check_focus",
    "check_keep",
    "check_options",
    "check_score_matrix",
]

#: The tests :func:`mia.counts_from_score_matrix` offers.
METHODS = ("online", "offline")
#: The membership sides of the offline test: of the mean IN-minus-OUT difference ("auto"),
#: higher scores for members ("greater") or lower ("less").
SIDES = ("auto", "greater", "less")


def check_focus(focus, n_columns: int) -> np.ndarray:
    """Return the declared targets ``focus`` as sorted unique columns of the score matrix.

    ``focus``: columns, a boolean mask over the columns, or a file of either
    (:func:`mia.array_files.read_integer_file`).
    """
    if isinstance(focus, bytes):
        raise TypeError(
            f"`focus` must be target columns, a boolean mask or a file; found {focus!r}"
        )
    if isinstance(focus, (str, os.PathLike)):
        focus = read_integer_file(focus, "focus")
    arr = np.asarray(focus)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"`focus` must be a non-empty 1-D array of target columns or a boolean mask; found "
            f"shape {arr.shape}"
        )
    if arr.dtype.kind == "b":
        if arr.size != n_columns:
            raise ValueError(
                f"`focus` as a boolean mask must have one entry per target ({n_columns}); found "
                f"{arr.size}"
            )
        if not arr.any():
            raise ValueError("`focus` must declare at least one target; found an all-False mask")
        return np.flatnonzero(arr)
    if arr.dtype.kind not in "iu":
        raise TypeError(
            f"`focus` must hold integer target columns or booleans; found dtype {arr.dtype}"
        )
    bad = (arr < 0) | (arr >= n_columns)
    if bad.any():
        raise ValueError(
            f"`focus` must hold target columns in [0, {n_columns}); found {arr[bad][0].item()}"
        )
    return np.unique(arr).astype(np.int64)


def check_score_matrix(scores) -> np.ndarray:
    """Return ``scores`` as a finite float array of 2 or 3 dimensions, none of them empty."""
    if isinstance(scores, (str, bytes)):
        raise TypeError(f"`scores` must be an array of real scores; found {scores!r}")
    try:
        arr = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"`scores` must be an array of real scores; found {type(scores).__name__}"
        ) from None
    if arr.ndim not in (2, 3):
        raise ValueError(
            "`scores` must be 2-D (n_models, n_targets) or 3-D (n_models, n_targets, n_augs); "
            f"found shape {arr.shape}"
        )
    if 0 in arr.shape:
        raise ValueError(f"`scores` is empty; found shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"model {idx[0]}, target {idx[1]}"
        if len(idx) > 2:
            where += f", augmentation {idx[2]}"
        more = int(bad.sum()) - 1
        raise ValueError(
            f"`scores` must be finite; found {float(arr[idx])!r} at ({where})"
            + (f" and {more} more non-finite value(s)" if more else "")
        )
    return arr


def check_keep(keep, shape) -> np.ndarray:
    """Return the memberships ``keep`` (booleans or 0/1) of shape ``shape`` as booleans."""
    if isinstance(keep, (str, bytes)):
        raise TypeError(f"`keep` must be a boolean (or 0/1) array; found {keep!r}")
    arr = np.asarray(keep)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`keep` must be a boolean (or 0/1) array; found dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(
            f"`keep` must have shape (n_models, n_targets) = {shape}, matching `scores`; found "
            f"{arr.shape}"
        )
    if arr.dtype.kind != "b":
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            raise ValueError(
                f"`keep` must hold only True/False or 0/1; found {arr[i, j].item()!r} at "
                f"(model {i}, target {j})"
            )
        arr = arr == 1
    return arr


def check_options(method, fixed_variance, skip, side, min_models) -> tuple[int, int]:
    """Check the options of :func:`mia.counts_from_score_matrix`.

    Returns the IN and OUT models a target needs: ``min_models``, or by default the least the
    method works with.
    """
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}; found {method!r}")
    if not isinstance(fixed_variance, (bool, np.bool_)):
        raise TypeError(f"`fixed_variance` must be True or False; found {fixed_variance!r}")
    if not isinstance(skip, (bool, np.bool_)):
        raise TypeError(f"`skip` must be True or False; found {skip!r}")
    if side not in SIDES:
        raise ValueError(f"`side` must be one of {SIDES}; found {side!r}")
    if side != "auto" and method != "offline":
        raise ValueError(f"`side` applies to method='offline' only; found side={side!r}")
    need = 2 if fixed_variance else 3
    need_in = need if method == "online" else 1
    if min_models is None:
        return need_in, need
    min_models = check_positive_int("min_models", min_models)
    if min_models < need:
        raise ValueError(
            f"`min_models` must be >= {need} for method={method!r} with "
            f"fixed_variance={bool(fixed_variance)}; found {min_models}"
        )
    return min_models, min_models
