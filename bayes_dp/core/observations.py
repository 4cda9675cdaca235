"""Observed evidence: attack error counts per challenge base, and one-run audits' guesses.

:class:`AttackCounts`: a *challenge base* ``(D_i, z_i)`` is attacked ``n_neg[i]`` times with
outputs of the training algorithm on ``D_i`` (hypothesis H0, z absent) and ``n_pos[i]`` times
with outputs on ``D_i + {z_i}`` (H1, z present). ``fp[i]`` counts the H0 challenges the attack
called "member" (false positives, type I errors) and ``fn[i]`` the H1 challenges it called
"non-member" (false negatives, type II errors). In the paper (Yildirim et al., Sec. 2.1) these
are ``X_i, N_{i,0}, Y_i, N_{i,1}``.

:class:`OneRunCounts`: the guesses of one-run audits (Steinke, Nasr and Jagielski 2023), ``r``
guesses of which ``v`` were right, per audit (a guessing game on ``m`` coins).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from bayes_dp.core.validation import check_int_array

__all__ = ["AttackCounts", "OneRunCounts"]


@dataclass(frozen=True, eq=False)
class AttackCounts:
    """False-positive and false-negative counts of an attack on several challenge bases.

    Parameters
    ----------
    fp : int or array_like of int
        False positives: H0 challenges (z not in the training set) decided "member".
    n_neg : int or array_like of int
        Number of H0 challenges per challenge base (>= 1).
    fn : int or array_like of int
        False negatives: H1 challenges (z in the training set) decided "non-member".
    n_pos : int or array_like of int
        Number of H1 challenges per challenge base (>= 1).

    Notes
    -----
    Scalars (Python numbers or 0-d arrays) are broadcast against the arrays given, so
    ``n_neg=1000`` with ten ``fp`` values means 1000 challenges on each base. Only scalars
    broadcast: a list or array of length 1 next to longer ones is an error (it is more often a
    mistake than a shorthand). All fields are stored as read-only int64 arrays.

    Examples
    --------
    >>> c = AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
    >>> len(c), c.fpr.tolist(), c.fnr.tolist()
    (2, [0.04, 0.05], [0.25, 0.2])
    """

    fp: np.ndarray
    n_neg: np.ndarray
    fn: np.ndarray
    n_pos: np.ndarray

    def __post_init__(self) -> None:
        raw = {"fp": self.fp, "n_neg": self.n_neg, "fn": self.fn, "n_pos": self.n_pos}
        scalar = {k: np.ndim(v) == 0 and not isinstance(v, (str, bytes)) for k, v in raw.items()}
        fp = check_int_array("fp", self.fp, min_value=0)
        n_neg = check_int_array("n_neg", self.n_neg, min_value=1)
        fn = check_int_array("fn", self.fn, min_value=0)
        n_pos = check_int_array("n_pos", self.n_pos, min_value=1)
        arrays = {"fp": fp, "n_neg": n_neg, "fn": fn, "n_pos": n_pos}
        sizes = {k: v.size for k, v in arrays.items()}
        if min(sizes.values()) == 0:
            empty = [k for k, s in sizes.items() if s == 0]
            raise ValueError(f"at least one challenge base is needed; `{empty[0]}` is empty")
        n = max(sizes.values())
        lengths = {k: "scalar" if scalar[k] else sizes[k] for k in arrays}
        for k, v in arrays.items():
            if v.size != n and not scalar[k]:
                hint = " (only scalars broadcast; give a number, not a list of one)"
                raise ValueError(
                    f"`{k}` has length {v.size} but other counts have length {n}"
                    f"{hint if v.size == 1 else ''}; lengths found: {lengths}"
                )
            arrays[k] = np.broadcast_to(v, (n,)).copy()
        for count, total in (("fp", "n_neg"), ("fn", "n_pos")):
            over = arrays[count] > arrays[total]
            if over.any():
                i = int(np.flatnonzero(over)[0])
                raise ValueError(
                    f"`{count}` must be <= `{total}`; found {count}={arrays[count][i]} > "
                    f"{total}={arrays[total][i]} at row {i + 1} (index {i})"
                )
        for k, v in arrays.items():
            v.flags.writeable = False
            object.__setattr__(self, k, v)

    # -- derived quantities -------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.fp.size)

    def __repr__(self) -> str:
        if len(self) <= 6:
            body = ", ".join(
                f"{k}={getattr(self, k).tolist()}" for k in ("fp", "n_neg", "fn", "n_pos")
            )
        else:
            body = f"{len(self)} challenge bases"
        return f"AttackCounts({body})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AttackCounts):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, k), getattr(other, k))
            for k in ("fp", "n_neg", "fn", "n_pos")
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def n_bases(self) -> int:
        """Number of challenge bases (rows)."""
        return len(self)

    @property
    def fpr(self) -> np.ndarray:
        """Observed false-positive rate ``fp / n_neg`` of each challenge base."""
        return self.fp / self.n_neg

    @property
    def fnr(self) -> np.ndarray:
        """Observed false-negative rate ``fn / n_pos`` of each challenge base."""
        return self.fn / self.n_pos

    def __getitem__(self, index) -> AttackCounts:
        """Select rows (an int, slice, boolean mask or index array)."""
        idx = np.atleast_1d(np.arange(len(self))[index])
        return AttackCounts(self.fp[idx], self.n_neg[idx], self.fn[idx], self.n_pos[idx])

    def to_dict(self) -> dict[str, list[int]]:
        """Return the four columns as lists of Python ints (JSON-friendly)."""
        return {k: getattr(self, k).tolist() for k in ("fp", "n_neg", "fn", "n_pos")}

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def from_decisions(cls, decisions, labels, bases=None) -> AttackCounts:
        """Count errors from the attack's decisions and the true membership labels.

        Parameters
        ----------
        decisions : array_like of bool
            ``True`` where the attack decided "member" (H1).
        labels : array_like of bool
            ``True`` where the challenge really came from ``D + {z}`` (H1).
        bases : array_like of int, optional
            Challenge-base index of each decision; one row is produced per distinct value,
            in sorted order. Without it, all decisions belong to one challenge base.

        Returns
        -------
        AttackCounts

        Raises
        ------
        ValueError
            If the arrays differ in length, are empty, or a base has no H0 or no H1 challenge.

        Examples
        --------
        >>> AttackCounts.from_decisions([1, 0, 1, 1], [0, 0, 1, 1])
        AttackCounts(fp=[1], n_neg=[2], fn=[0], n_pos=[2])
        """
        d = _as_bool("decisions", decisions)
        y = _as_bool("labels", labels)
        if d.size != y.size:
            raise ValueError(
                f"`decisions` and `labels` must have the same length; found {d.size} and {y.size}"
            )
        if d.size == 0:
            raise ValueError("`decisions` is empty; at least one decision is needed")
        if bases is None:
            b = np.zeros(d.size, dtype=np.int64)
        else:
            b = check_int_array("bases", bases)
            if b.size != d.size:
                raise ValueError(
                    f"`bases` must have the same length as `decisions`; found {b.size} and {d.size}"
                )
        keys, inv = np.unique(b, return_inverse=True)
        m = keys.size
        n_neg = np.bincount(inv, weights=~y, minlength=m).astype(np.int64)
        n_pos = np.bincount(inv, weights=y, minlength=m).astype(np.int64)
        fp = np.bincount(inv, weights=d & ~y, minlength=m).astype(np.int64)
        fn = np.bincount(inv, weights=~d & y, minlength=m).astype(np.int64)
        for name, arr in (("H0 (label False)", n_neg), ("H1 (label True)", n_pos)):
            if (arr == 0).any():
                i = int(np.flatnonzero(arr == 0)[0])
                raise ValueError(f"challenge base {keys[i]} has no {name} challenge in `labels`")
        return cls(fp=fp, n_neg=n_neg, fn=fn, n_pos=n_pos)

    @classmethod
    def concat(cls, counts: Iterable[AttackCounts]) -> AttackCounts:
        """Stack the rows of several ``AttackCounts`` into one.

        Examples
        --------
        >>> a = AttackCounts(1, 10, 2, 10)
        >>> len(AttackCounts.concat([a, a, a]))
        3
        """
        items = list(counts)
        if not items:
            raise ValueError("`counts` is empty; give at least one AttackCounts")
        for i, c in enumerate(items):
            if not isinstance(c, AttackCounts):
                raise TypeError(f"`counts[{i}]` must be an AttackCounts; found {type(c).__name__}")
        return cls(
            *(
                np.concatenate([getattr(c, k) for c in items])
                for k in ("fp", "n_neg", "fn", "n_pos")
            )
        )


def _as_bool(name: str, value) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value))
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D; found shape {arr.shape}")
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind in "iuf" and np.isin(arr, (0, 1)).all():
        return arr.astype(bool)
    raise TypeError(f"`{name}` must hold booleans or 0/1; found values like {arr[:3].tolist()!r}")


@dataclass(frozen=True, eq=False)
class OneRunCounts:
    """Results of one-run audits (guessing games), one row per audit.

    In a one-run audit (Steinke, Nasr and Jagielski 2023) each of ``m`` coins is a fair coin
    independent of everything else: a canary included in the training set or not (a
    membership bit), or, for ``pairs=True``, which of two models trained on a given example
    (a matched IN-OUT pair of models). The auditor looks at the output, guesses ``r`` of the
    coins (abstaining on the other ``m - r``) and gets ``v`` right. A coin of a bit is
    (eps, delta)-DP; swapping a pair changes two training sets, so a pair's coin is
    (2 eps, 2 delta)-DP: the accuracy of an eps-DP mechanism's guesses is at most
    ``e^(c eps) / (1 + e^(c eps))`` with ``c = 2`` for pairs and 1 for bits.

    Parameters
    ----------
    m : int or array_like of int
        Coins of the game, each a fair coin (>= 1).
    r : int or array_like of int
        Guesses made (the auditor may abstain on the other ``m - r``), ``0 <= r <= m``.
    v : int or array_like of int
        Correct guesses, ``0 <= v <= r``.
    pairs : bool or array_like of bool, default False
        Per audit (or one value for all), whether its coins are matched pairs of models
        (each coin (2 eps, 2 delta)-DP) rather than membership bits.

    Notes
    -----
    Scalars broadcast against arrays, as in :class:`~bayes_dp.AttackCounts`. All fields are
    stored as read-only arrays (``m``, ``r``, ``v`` int64, ``pairs`` bool).

    Examples
    --------
    >>> c = OneRunCounts(m=1000, r=[100, 200], v=[80, 150])
    >>> len(c), c.m.tolist(), c.pairs.tolist()
    (2, [1000, 1000], [False, False])
    >>> OneRunCounts(m=500, r=100, v=90, pairs=True).factor.tolist()
    [2.0]
    """

    m: np.ndarray
    r: np.ndarray
    v: np.ndarray
    pairs: np.ndarray = False  # type: ignore[assignment]

    def __post_init__(self) -> None:
        raw = {
            "m": check_int_array("m", self.m, min_value=1),
            "r": check_int_array("r", self.r, min_value=0),
            "v": check_int_array("v", self.v, min_value=0),
            "pairs": _as_pairs(self.pairs),
        }
        sizes = {k: a.size for k, a in raw.items() if np.ndim(getattr(self, k)) > 0}
        if len(set(sizes.values())) > 1:
            raise ValueError(f"`m`, `r`, `v` and `pairs` must have the same length; found {sizes}")
        n = max(sizes.values(), default=1)
        m, r, v, pairs = (np.broadcast_to(a, (n,)).copy() for a in raw.values())
        for big, small, bn, sn in ((m, r, "m", "r"), (r, v, "r", "v")):
            over = small > big
            if over.any():
                i = int(np.flatnonzero(over)[0])
                raise ValueError(
                    f"`{sn}` must be <= `{bn}`; found {sn}={small[i]} > {bn}={big[i]} at row {i}"
                )
        for name, a in (("m", m), ("r", r), ("v", v), ("pairs", pairs)):
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    def __len__(self) -> int:
        return int(self.m.size)

    def __repr__(self) -> str:
        if len(self) <= 6:
            body = ", ".join(f"{k}={getattr(self, k).tolist()}" for k in ("m", "r", "v"))
            if self.pairs.any():
                body += f", pairs={self.pairs.tolist()}"
        else:
            body = f"{len(self)} audits"
        return f"OneRunCounts({body})"

    def __getitem__(self, index) -> OneRunCounts:
        """Select rows (an int, slice, boolean mask or index array)."""
        idx = np.atleast_1d(np.arange(len(self))[index])
        return OneRunCounts(self.m[idx], self.r[idx], self.v[idx], self.pairs[idx])

    @property
    def factor(self) -> np.ndarray:
        """Per audit, c: 2.0 for pairs of models ((2 eps, 2 delta)-DP coins), 1.0 for bits."""
        return np.where(self.pairs, 2.0, 1.0)

    def to_dict(self) -> dict[str, list]:
        """Return the columns ``m``, ``r``, ``v`` (ints) and ``pairs`` (bools) as lists."""
        return {
            "m": self.m.tolist(),
            "r": self.r.tolist(),
            "v": self.v.tolist(),
            "pairs": [bool(x) for x in self.pairs],
        }


def _as_pairs(value) -> np.ndarray:
    """Return ``pairs`` as a 1-D bool array, or raise naming it (booleans only, or 0/1 ints)."""
    arr = np.asarray(value)
    if arr.ndim > 1:
        raise ValueError(f"`pairs` must be a bool or 1-D; found shape {arr.shape}")
    arr = np.atleast_1d(arr)
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind in "iu" and np.isin(arr, (0, 1)).all():
        return arr.astype(bool)
    raise TypeError(
        f"`pairs` must be True or False (one per audit, or one for all); found {value!r}"
    )
