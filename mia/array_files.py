"""Arrays read from files, a damaged or wrong file a ValueError that names it.

``.npy`` arrays (:func:`load_npy`), ``.npz`` archives (:func:`open_npz`) and files of integers
(:func:`read_integer_file`: a ``.npy`` array or text), for the readers of :mod:`mia.readers` and
for the declared targets of a score matrix (:func:`mia.score_checks.check_focus`). A leaf: it
imports no other module of ``mia``.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np


def load_npy(path: Path) -> np.ndarray:
    """``numpy.load`` of a ``.npy`` file; a file that cannot be read is a ValueError naming it."""
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise ValueError(
            f"{str(path)!r} could not be read as a .npy array ({e}); the file is damaged or not "
            "a numpy array: write it again with numpy.save"
        ) from None


def open_npz(path: Path):
    """``numpy.load`` of a ``.npz`` archive; a damaged one is a ValueError naming the file.

    The archive is read into memory first, so that no file handle is left open when numpy
    fails on a damaged one.
    """
    try:
        return np.load(io.BytesIO(path.read_bytes()), allow_pickle=False)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise ValueError(
            f"{str(path)!r} is not a readable .npz archive ({type(e).__name__}: {e}): the file "
            "is damaged (a run stopped while writing it, or a partial copy); copy or write it "
            "again"
        ) from None


def read_integer_file(path, name: str) -> np.ndarray:
    """Return the array in file ``path``: a ``.npy`` array, or text of integers."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"`{name}`: no such file or folder: {str(path)!r}")
    if path.suffix.lower() == ".npy":
        return load_npy(path)
    text = path.read_text(encoding="utf-8-sig").replace(",", " ").split()
    try:
        return np.array([int(t) for t in text], dtype=np.int64)
    except ValueError:
        raise ValueError(
            f"`{name}`: {str(path)!r} must hold integers separated by commas, spaces or new lines"
        ) from None
