"""Challenge bases ``(D, z)`` and the bundled digits population (scikit-learn, no download)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from bayes_dp.core.validation import as_generator, check_positive_int

__all__ = ["ChallengeBase", "draw_challenge_bases", "load_digits"]


@dataclass(frozen=True, eq=False)
class ChallengeBase:
    """A dataset ``D`` and a challenge point ``z``; H0 trains on ``D``, H1 on ``D + {z}``.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, d)
        Features of ``D``.
    y : numpy.ndarray of int, shape (n,)
        Labels of ``D``.
    z_x : numpy.ndarray, shape (d,)
        Features of ``z``.
    z_y : int
        Label of ``z`` (possibly flipped, for a hard challenge).
    """

    X: np.ndarray
    y: np.ndarray
    z_x: np.ndarray
    z_y: int

    def __post_init__(self) -> None:
        X = np.asarray(self.X, dtype=np.float32)
        y = np.asarray(self.y)
        z_x = np.asarray(self.z_x, dtype=np.float32)
        if X.ndim != 2 or y.shape != (X.shape[0],) or y.dtype.kind not in "iu":
            raise ValueError(
                f"`X` must be (n, d) and `y` n integer labels; found shapes {X.shape}, {y.shape}"
            )
        if z_x.shape != (X.shape[1],):
            raise ValueError(f"`z_x` must have shape ({X.shape[1]},); found {z_x.shape}")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y.astype(np.int64))
        object.__setattr__(self, "z_x", z_x)
        object.__setattr__(self, "z_y", int(self.z_y))

    def dataset(self, hypothesis: int) -> tuple[np.ndarray, np.ndarray]:
        """Training set under H0 (``D``) or H1 (``D + {z}``, z appended last)."""
        if hypothesis == 0:
            return self.X, self.y
        if hypothesis == 1:
            return np.vstack([self.X, self.z_x[None]]), np.append(self.y, self.z_y)
        raise ValueError(f"`hypothesis` must be 0 or 1; found {hypothesis!r}")

    def fingerprint(self) -> str:
        """SHA-256 of the data (used to check that a resumed audit attacks the same bases)."""
        h = hashlib.sha256()
        for a in (self.X, self.y, self.z_x, np.int64(self.z_y)):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()


def load_digits(*, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """Return the 1,797 8x8 digit images bundled with scikit-learn, scaled to [0, 1].

    The one loader of the digits data: the LiRA examples use it as it is (float32, what the
    built-in training algorithms train in), the federated canary simulators of
    :mod:`mia.canary` with ``dtype=np.float64`` (their arithmetic is float64). The pixel values
    ``k / 16`` are exact in both.

    Parameters
    ----------
    dtype : floating numpy dtype, default numpy.float32
        Type of ``X``.

    Returns
    -------
    X : numpy.ndarray of ``dtype``, shape (1797, 64)
    y : numpy.ndarray of int64, shape (1797,)

    Examples
    --------
    >>> X, y = load_digits(dtype=np.float64)  # doctest: +SKIP
    >>> X.dtype, X.shape, float(X.max())  # doctest: +SKIP
    (dtype('float64'), (1797, 64), 1.0)
    """
    try:
        dt = np.dtype(dtype)
    except TypeError as err:
        raise TypeError(f"`dtype` must be a floating numpy dtype; found {dtype!r}") from err
    if dt.kind != "f":
        raise TypeError(f"`dtype` must be a floating numpy dtype; found {dt}")
    try:
        from sklearn.datasets import load_digits as _load
    except ImportError as err:  # pragma: no cover - optional dependency
        raise ImportError(
            "the digits data needs scikit-learn: pip install 'bayes-dp[digits]'"
        ) from err
    data = _load()
    return (data.data / 16.0).astype(dt), data.target.astype(np.int64)


def digits_split(rng: np.random.Generator, test_fraction: float = 0.2, dtype=np.float64):
    """Digits (``load_digits(dtype=dtype)``) shuffled by ``rng`` and split into train and test."""
    x, y = load_digits(dtype=dtype)
    perm = rng.permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    test, train = perm[:n_test], perm[n_test:]
    return x[train], y[train], x[test], y[test]


def draw_challenge_bases(
    X, y, n_bases: int, *, size: int = 999, z: str = "random", n_classes: int = 10, seed=None
) -> list[ChallengeBase]:
    """Draw challenge bases from a population.

    Each base takes ``size + 1`` distinct rows without replacement: ``size`` form ``D`` and one
    is ``z``. With ``z="mislabelled"`` the label of ``z`` is replaced by a different class drawn
    uniformly, a hard-to-hide point whose membership changes the model strongly.

    Parameters
    ----------
    X, y : array_like
        Population features (n, d) and integer labels (n,).
    n_bases : int
        Number of bases.
    size : int
        ``|D|`` (999 as in the paper, so that ``D + {z}`` has 1000 points).
    z : {"random", "mislabelled"}
    n_classes : int
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    list of ChallengeBase

    Examples
    --------
    >>> X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 3
    >>> bases = draw_challenge_bases(X, y, 2, size=5, z="mislabelled", n_classes=3, seed=0)
    >>> len(bases), bases[0].X.shape
    (2, (5, 2))
    """
    rng = as_generator(seed)
    X = np.asarray(X)
    y = np.asarray(y)
    n_bases = check_positive_int("n_bases", n_bases)
    size = check_positive_int("size", size)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"`X` must be (n, d) and `y` (n,); found {X.shape} and {y.shape}")
    if size + 1 > X.shape[0]:
        raise ValueError(f"`size` + 1 must be <= population size {X.shape[0]}; found size={size}")
    if z not in ("random", "mislabelled"):
        raise ValueError(f"`z` must be 'random' or 'mislabelled'; found {z!r}")
    bases = []
    for _ in range(n_bases):
        idx = rng.choice(X.shape[0], size + 1, replace=False)
        zi = idx[-1]
        zy = int(y[zi])
        if z == "mislabelled":
            zy = int((zy + rng.integers(1, n_classes)) % n_classes)
        bases.append(ChallengeBase(X[idx[:-1]], y[idx[:-1]], X[zi], zy))
    return bases
