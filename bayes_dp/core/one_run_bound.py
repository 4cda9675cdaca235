"""The one-run audit's frequentist bounds: eps-DP (Steinke et al.) and mu-GDP (f-DP).

The one place that computes them. :func:`one_run_bounds` is the (eps, delta)-DP bound of
Steinke, Nasr and Jagielski (2023, Theorem 3.3); :func:`one_run_gdp_bounds` the mu-GDP bound of
the f-DP analysis of Mahloujifar, Melis and Chaudhuri ("Auditing f-differential privacy in one
run", arXiv 2410.22235); :func:`one_run_accuracy_gdp` the accuracy of the most confident
guesses under mu-GDP, which the Gaussian-DP likelihood of one-run audits uses. Callers:
:func:`bayes_dp.one_run_epsilon_bound` (validated input), the claim of a one-run
posterior (:mod:`bayes_dp.results.claim_counts`, below ``one_run`` in the package's layers),
:mod:`bayes_dp.gdp.core` and the guessing game (:mod:`mia.guessing`, whose bounds over its grid
of k and at its predicted k are :func:`guessing_game_bounds`, also read by the claim of a
posterior on a game, :mod:`bayes_dp.results.claim_game`).

Pairs. Where the coins are "which of two matched models holds the target" (a balanced design,
``mia.guessing``), swapping a pair changes two training sets: an (eps, delta)-DP mechanism makes
each pair's coin (2 eps, 2 delta)-DP, a mu-GDP one sqrt(2) mu-GDP (composition of two mu-GDP
steps, Dong, Roth and Su, Cor. 3.3). With ``pairs=True`` the bounds are computed for the coin
and converted back: eps from the bound on 2 eps at 2 delta, mu from the bound on sqrt(2) mu.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

__all__ = [
    "guessing_game_bounds",
    "one_run_accuracy_gdp",
    "one_run_bounds",
    "one_run_gdp_bounds",
]


def _p_value(eps, m, r, v, delta):
    """P-value of "the mechanism is (eps, delta)-DP" given v of r right (Steinke et al., Thm 3.3).

    ``P[Bin(r, q) >= v] + 2 m delta max_{1 <= i <= v} P[v - i <= Bin(r, q) < v] / i`` with
    ``q = e^eps / (1 + e^eps)``, vectorised over ``eps``.
    """
    q = special.expit(np.asarray(eps, dtype=np.float64))[:, None]
    tail = stats.binom.sf(v - 1, r, q[:, 0])
    if delta == 0.0 or v == 0:
        return np.minimum(tail, 1.0)
    below = stats.binom.cdf(np.arange(v - 1, -2, -1), r, q)  # P[B <= v-1-i], i = 0..v
    window = below[:, :1] - below[:, 1:]  # P[v - i <= B < v], i = 1..v
    alpha = np.max(window / np.arange(1, v + 1), axis=1)
    return np.minimum(tail + 2.0 * m * delta * alpha, 1.0)


def one_run_bounds(m, r, v, delta: float, confidence: float, pairs=False) -> np.ndarray:
    """Return, per audit, the largest eps whose (eps, delta)-DP hypothesis it rejects.

    At level ``1 - confidence``, by bisection (60 halvings) after a doubling bracket; 0 where
    the audit rejects nothing. Inputs as validated by
    :func:`bayes_dp.one_run_epsilon_bound` (integer arrays of equal length).
    With ``pairs`` the coins are matched pairs: the bound on 2 eps at 2 delta, halved.

    Parameters
    ----------
    m, r, v : array_like of int
        Canaries, guesses made and right guesses of each audit.
    delta : float
        In [0, 1).
    confidence : float
        In (0, 1).
    pairs : bool or array_like of bool
        The coins are matched pairs (see the module's docstring), for all audits or per audit.

    Returns
    -------
    ndarray
        One bound per audit.

    Examples
    --------
    >>> one_run_bounds(1000, 100, 95, 0.0, 0.95).round(3).tolist()
    [2.172]
    """
    level = 1.0 - confidence
    m, r, v = (np.atleast_1d(np.asarray(a)) for a in (m, r, v))
    pairs = np.broadcast_to(np.asarray(pairs, dtype=bool), m.shape)
    out = np.zeros(m.size)
    for i, (mi, ri, vi, pi) in enumerate(zip(m, r, v, pairs, strict=True)):
        mi, ri, vi = int(mi), int(ri), int(vi)
        d = min(2.0 * delta, 1.0) if pi else delta

        def rejects(e, m=mi, r=ri, v=vi, d=d):
            return _p_value(np.atleast_1d(e), m, r, v, d)[0] < level

        if ri == 0 or not rejects(0.0):
            continue
        lo, hi = 0.0, 1.0
        while rejects(hi):
            lo, hi = hi, 2.0 * hi
            if hi > 1e6:  # pragma: no cover (only with all guesses right and r huge)
                break
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if rejects(mid) else (lo, mid)
        out[i] = 0.5 * lo if pi else lo
    return out


# -- mu-GDP: the f-DP one-run analysis (Mahloujifar, Melis and Chaudhuri) ----------------------
def _gdp_rejects(mu: float, m: int, r: int, v: int, level: float) -> bool:
    """Whether v right of r guesses on m coins rejects "each coin is mu-GDP" at ``level``.

    The recursion of Mahloujifar, Melis and Chaudhuri (arXiv 2410.22235, their algorithm for
    a trade-off curve f with a cap on the guesses), written for the Gaussian curve: if the
    event "at least v right" had probability ``level``, the mass of right and wrong guesses it
    forces (``right``, ``wrong``, as fractions of m) grows step by step, each step using that a
    set of outputs of probability x for one value of a coin has probability at least
    ``Phi(Phi^-1(x) - mu)`` for the other; the hypothesis is rejected when the forced mass
    exceeds the r / m guesses actually made.
    """
    right = level * v / m
    wrong = level * (r - v) / m
    for i in range(v - 1, -1, -1):
        step = max(wrong, float(special.ndtr(special.ndtri(right) - mu)))
        if step == wrong:
            break  # nothing changes any more
        right = min(right + i / (r - i) * (step - wrong), 1.0)
        wrong = step
    return right + wrong > r / m


def one_run_gdp_bounds(m, r, v, confidence: float, pairs=False) -> np.ndarray:
    """Return, per audit, the largest mu whose mu-GDP hypothesis it rejects (f-DP one-run).

    Each of the m coins (a canary's inclusion, a fair coin) is hypothesised mu-GDP: its
    trade-off curve is the Gaussian ``G_mu(x) = Phi(Phi^-1(1 - x) - mu)``. The audit guessed r
    of them (abstaining on the rest) and v guesses were right; the analysis of Mahloujifar,
    Melis and Chaudhuri ("Auditing f-differential privacy in one run", arXiv 2410.22235) gives
    the test of that hypothesis at level ``1 - confidence`` (:func:`_gdp_rejects`). The bound
    is the largest rejected mu (the rejected set is an interval from 0: a larger mu allows
    more), found by bisection (50 halvings) after a doubling bracket; 0 where nothing is
    rejected. ``bayes_dp.gdp_epsilon(mu, delta)`` turns it into eps at delta *if the mechanism
    is Gaussian* (its trade-off curve G_mu).

    Parameters
    ----------
    m, r, v : array_like of int
        Coins, guesses made and right guesses of each audit (``0 <= v <= r <= m``, m >= 1).
    confidence : float
        In (0, 1).
    pairs : bool or array_like of bool
        The coins are matched pairs, each sqrt(2) mu-GDP: the bound on sqrt(2) mu, divided
        by sqrt(2) (for all audits or per audit).

    Returns
    -------
    ndarray
        One bound of mu per audit.

    Examples
    --------
    >>> one_run_gdp_bounds(1000, 100, 95, 0.95).round(3).tolist()
    [0.787]
    """
    level = 1.0 - confidence
    m, r, v = (np.atleast_1d(np.asarray(a)) for a in (m, r, v))
    scale = np.where(np.broadcast_to(np.asarray(pairs, dtype=bool), m.shape), math.sqrt(2.0), 1.0)
    out = np.zeros(m.size)
    for j, (mj, rj, vj) in enumerate(zip(m, r, v, strict=True)):
        mj, rj, vj = int(mj), int(rj), int(vj)
        if vj == 0 or not _gdp_rejects(0.0, mj, rj, vj, level):
            continue
        lo, hi = 0.0, 1.0
        while _gdp_rejects(hi, mj, rj, vj, level):
            lo, hi = hi, 2.0 * hi
            if hi > 1e3:  # pragma: no cover (Phi^-1 saturates long before)
                break
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if _gdp_rejects(mid, mj, rj, vj, level) else (lo, mid)
        out[j] = lo
    return out / scale


def gdp_accuracy_logs(mu, rate) -> tuple[np.ndarray, np.ndarray]:
    """Return ``log A`` and ``log(1 - A)`` for :func:`one_run_accuracy_gdp`, broadcast.

    Kept in logs so that ``1 - A`` keeps its precision where A is near 1.
    """
    mu, rate = np.broadcast_arrays(np.asarray(mu, np.float64), np.asarray(rate, np.float64))
    half = 0.5 * mu
    log_rate = np.log(np.clip(rate, 1e-300, 1.0))
    lo = np.zeros(mu.shape)
    hi = half + np.sqrt(-2.0 * log_rate) + 1.0
    for _ in range(64):  # bisection: log P(|x - mu/2| > t) = log rate, decreasing in t
        t = 0.5 * (lo + hi)
        g = np.logaddexp(special.log_ndtr(half - t), special.log_ndtr(-half - t))
        above = g > log_rate
        lo = np.where(above, t, lo)
        hi = np.where(above, hi, t)
    t = np.where(rate >= 1.0, 0.0, 0.5 * (lo + hi))
    la, lb = special.log_ndtr(half - t), special.log_ndtr(-half - t)
    norm = np.logaddexp(la, lb)
    return la - norm, lb - norm


def one_run_accuracy_gdp(mu, rate):
    """Best accuracy of guesses made at rate ``rate`` on fair coins through a mu-GDP mechanism.

    The Gaussian pair N(0, 1) / N(mu, 1) is the least private mu-GDP pair: every mu-GDP pair is
    a post-processing of it (Blackwell's theorem, as Dong, Roth and Su 2022 use it in their
    section 2), so no rule does better on any
    mu-GDP mechanism than the best rule on it. On it the guess "in" where x > mu / 2, "out"
    where x < mu / 2, made only where ``|x - mu/2| > t``, maximises the right guesses at a given
    guess rate (the posterior of the coin is monotone in ``|x - mu / 2|``; Neyman-Pearson on
    both sides). Its rate is ``Phi(mu/2 - t) + Phi(-mu/2 - t)`` and its accuracy

    ``A(mu, rate) = Phi(mu/2 - t) / (Phi(mu/2 - t) + Phi(-mu/2 - t))``,

    with t solving the rate equation (bisection). At rate 1 (t = 0) it is ``Phi(mu / 2)``, the
    accuracy of guessing every coin; the r most confident guesses of m reach about
    ``A(mu, r / m)``, far above it when r << m.

    Parameters
    ----------
    mu : float or array_like
        GDP parameter(s), >= 0.
    rate : float or array_like
        Share of the coins guessed, in (0, 1].

    Returns
    -------
    float or ndarray
        A, broadcast over ``mu`` and ``rate``.

    Examples
    --------
    >>> round(float(one_run_accuracy_gdp(1.0, 1.0)), 4)  # Phi(1/2)
    0.6915
    >>> round(float(one_run_accuracy_gdp(1.0, 0.05)), 4)
    0.9267
    """
    log_a, _ = gdp_accuracy_logs(mu, rate)
    out = np.exp(log_a)
    return float(out) if out.ndim == 0 else out


def _best_of(m: int, ks, vs, delta: float, level: float, pairs: bool) -> dict:
    """Largest bound over the audits (m, ks, vs) at ``level`` each: pure, delta and f-DP forms."""
    from bayes_dp.core.gaussians import gaussian_epsilon_array

    ks = np.asarray(ks, dtype=np.int64)
    vs = np.asarray(vs, dtype=np.int64)
    ms = np.full(ks.size, int(m))
    out: dict = {"level": level}
    for name, fn in (
        ("eps_pure", lambda: one_run_bounds(ms, ks, vs, 0.0, 1.0 - level, pairs=pairs)),
        ("eps", lambda: one_run_bounds(ms, ks, vs, delta, 1.0 - level, pairs=pairs)),
        ("mu", lambda: one_run_gdp_bounds(ms, ks, vs, 1.0 - level, pairs=pairs)),
    ):
        b = fn()
        i = int(np.argmax(b))
        out[name] = float(b[i])
        out[f"{name}_k"] = int(ks[i])
        out[f"{name}_v"] = int(vs[i])
    out["gdp_eps"] = (
        float(gaussian_epsilon_array(np.asarray([out["mu"]]), delta)[0]) if delta > 0 else None
    )
    return out


def guessing_game_bounds(
    m: int,
    k_grid,
    v_grid,
    k_predicted: int,
    v_predicted: int,
    delta: float,
    confidence: float,
    pairs: bool = False,
) -> dict:
    """Bounds of a guessing game over its grid of k and at its predicted k (:mod:`mia.guessing`).

    ``"grid"``: the largest bound over the grid, each at level ``(1 - confidence) / len(grid)``
    (Bonferroni); ``"predicted"``: the bound at the k predicted from the reference fit alone,
    at level ``1 - confidence``; ``"combined"``: the larger of the two with half of the error
    each (a union bound), per form. Each in Steinke et al.'s pure form (``eps_pure``), its
    delta form (``eps``, with the ``2 m delta`` term) and the f-DP bound of mu (``mu``; and
    ``gdp_eps``, its eps at ``delta`` if the mechanism is Gaussian, for ``delta > 0``).

    Parameters
    ----------
    m : int
        The coins (bits or pairs) that could have been guessed.
    k_grid, v_grid : sequence of int
        The grid of guesses made, fixed in advance, and the right guesses at each.
    k_predicted, v_predicted : int
        The predicted k and its right guesses.
    delta : float
        In [0, 1).
    confidence : float
        In (0, 1).
    pairs : bool
        Coins of matched pairs of models ((2 eps, 2 delta)-DP): bounds converted back.

    Returns
    -------
    dict
        ``{"grid": {...}, "predicted": {...}, "combined": {"eps": {...}, "eps_pure": {...},
        "mu": {...}}, "delta": delta, "confidence": confidence}``; each part holds ``eps``,
        ``eps_pure``, ``mu``, ``gdp_eps``, the ``k`` and ``v`` that set each
        (``eps_k``, ``eps_v``, ...) and its ``level``; ``"combined"`` maps each form to the
        part that sets it, computed at half of the error, with ``choice`` ("grid" or
        "predicted").

    Examples
    --------
    >>> b = guessing_game_bounds(1000, [100, 1000], [90, 700], 100, 90, 0.0, 0.95)
    >>> round(b["predicted"]["eps"], 3) >= round(b["combined"]["eps"]["eps"], 3) > 0
    True
    """
    k_grid = np.asarray(k_grid, dtype=np.int64).reshape(-1)
    v_grid = np.asarray(v_grid, dtype=np.int64).reshape(-1)
    if k_grid.size == 0 or k_grid.shape != v_grid.shape:
        raise ValueError(
            f"`k_grid` and `v_grid` must be non-empty and of one length; found {k_grid.size} "
            f"and {v_grid.size}"
        )
    error = 1.0 - confidence
    pairs = bool(pairs)
    out: dict = {"delta": delta, "confidence": confidence}
    out["grid"] = _best_of(m, k_grid, v_grid, delta, error / k_grid.size, pairs)
    out["predicted"] = _best_of(m, [k_predicted], [v_predicted], delta, error, pairs)
    half = [
        {**_best_of(m, k_grid, v_grid, delta, error / 2 / k_grid.size, pairs), "choice": "grid"},
        {
            **_best_of(m, [k_predicted], [v_predicted], delta, error / 2, pairs),
            "choice": "predicted",
        },
    ]
    out["combined"] = {
        key: max(half, key=lambda b, key=key: b[key] or 0.0) for key in ("eps", "eps_pure", "mu")
    }
    return out
