"""The guessing game with abstention on a score matrix: valid tests of the membership bits.

Steinke, Nasr and Jagielski ("Privacy auditing with one (1) training run", 2023) bound eps from
guesses of independent fair coins: if the mechanism is (eps, delta)-DP with respect to each
coin, the right guesses among r are dominated by Binomial(r, e^eps / (1 + e^eps)) (plus a term
in ``2 m delta`` for the m coins that could have been guessed). A score matrix (M models x T
targets, each model trained on its own subset) is such an audit when every guess uses the
models' outputs and only membership bits that are never guessed:

* The models are split at random (``seed``) into a **reference half** and a **test half**
  (:func:`mia.model_rates.pooled_model_rates`'s split). Each target's IN and OUT normals are fitted
  on the reference half only (:func:`mia.selection.fit_reference`); the **candidates**, the
  targets whose bits are guessed, are the ones most exposed on the reference half
  (:func:`mia.selection.reference_exposure`, :func:`mia.selection.select_exposed`; a number fixed
  in advance, :data:`CANDIDATES`) or the declared canaries.
* **Design "bits"** (memberships independent fair coins): every (test model, candidate) bit is
  a coin, guessed "IN" where the log-likelihood ratio (LLR) of its score under the reference
  fit is positive; c = 1.
* **Design "pairs"** (any design whose memberships of a target are exchangeable over the
  models, e.g. balanced halves: each target IN for exactly half of the models): per candidate,
  a uniform random matching of its IN and OUT test models, drawn given the mask; each pair is
  presented in the order of the models' indices and the coin is "the first is IN". Given the
  mask up to the pairs' orientations, each orientation is a fair coin independent of the rest,
  so the theorem applies to pairs. Swapping a pair changes two training sets: each pair's coin
  is (2 eps, 2 delta)-DP (sqrt(2) mu under mu-GDP): c = 2. The guess is the sign of the
  difference of the two models' LLRs. Privacy Meter's complementary model pairs (model 2i + 1
  trained on the complement of model 2i) are not exchangeable model by model; there the
  complementary pairs are kept together in the split and are the matching (each such pair's
  orientation is a fair coin by design).
* **Confidence** is the absolute LLR (or LLR difference); the game guesses the ``k`` most
  confident coins and abstains on the rest. ``k`` is either one of a grid fixed in advance
  (fractions :data:`K_FRACTIONS` of the coins), with Bonferroni over the grid for the bound,
  or the single ``k`` predicted best from reference information alone (the fitted normals'
  ``expit(|LLR|)`` of the top-k guesses; or the accuracy of the same share of the most
  confident reference coins), no test bit used, for a posterior (a posterior on a ``k``
  chosen by looking at the right guesses would be biased).

``design="auto"`` chooses "pairs" unless the memberships look like independent fair coins
(:func:`infer_design`). The bounds are those of :mod:`bayes_dp.core.one_run_bound` (Steinke et
al.'s pure and delta forms, and the f-DP form for mu-GDP of Mahloujifar, Melis and Chaudhuri),
with the pairs factor. ``docs/validation/guessing_game.md`` gives the measured figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from .lira import check_alpha
from .model_rates import pooled_record, pooled_summary
from .score_checks import METHODS, check_keep, check_score_matrix
from .selection import fit_reference, reference_exposure, select_exposed

__all__ = [
    "CANDIDATES",
    "DESIGNS",
    "K_FRACTIONS",
    "GuessingGame",
    "companion_rows",
    "guessing_game",
    "infer_design",
]

#: Candidates guessed when none are declared: the targets most exposed on the reference half.
#: Fixed in advance; small enough that the delta term 2 m delta of the (eps, delta) bound stays
#: small (m = test models x candidates bits, or about half of that many pairs).
CANDIDATES = 1000
#: The grid of k (guesses made), as fractions of the coins, fixed in advance.
K_FRACTIONS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
#: Designs: "bits", "pairs", "auto"; and the readers' hints, "independent" (bits) and
#: "balanced" (pairs).
DESIGNS = ("auto", "bits", "pairs", "independent", "balanced")
#: Two-sided tail probability of the checks that memberships look like independent fair coins
#: (:func:`infer_design`).
DESIGN_TAIL = 1e-4


def _complement_pairs(keep: np.ndarray) -> np.ndarray | None:
    """Return the complementary model pairs (rows ``a``, ``b`` with ``keep[b] == ~keep[a]``).

    Shape (M / 2, 2), or None unless every model has exactly one complement.
    """
    n = keep.shape[0]
    if n % 2:
        return None
    index: dict[bytes, list[int]] = {}
    for i, row in enumerate(np.packbits(keep, axis=1)):
        index.setdefault(row.tobytes(), []).append(i)
    pairs, used = [], np.zeros(n, dtype=bool)
    for i, row in enumerate(np.packbits(~keep, axis=1)):
        if used[i]:
            continue
        mates = [j for j in index.get(row.tobytes(), []) if not used[j] and j != i]
        if not mates:
            return None
        used[i] = used[mates[0]] = True
        pairs.append((i, mates[0]))
    return np.asarray(pairs, dtype=np.int64)


def infer_design(keep) -> tuple[str, str]:
    """Return the game's design for a membership mask, and the reason, in words.

    "pairs" when the models come in complementary pairs, when every target is IN for the same
    number of models (up to one: balanced halves), or when the memberships do not look like
    independent fair coins: the share IN further than a two-sided binomial tail of
    :data:`DESIGN_TAIL` from 1/2, or the per-target or per-model IN counts under- or
    over-dispersed against Binomial(n, 1/2) (chi-square tails of :data:`DESIGN_TAIL`).
    "bits" otherwise.

    Failure mode: a design that ties bits together without moving these margins (e.g. the
    bits of two targets copied from each other) reads as "bits", and the bits game is then not
    valid; pass the design when the tool that trained the models states it. "pairs" is valid
    for every design exchangeable over the models, at the cost of the factor 2 on eps.

    Parameters
    ----------
    keep : array_like of bool, shape (n_models, n_targets)

    Returns
    -------
    tuple of str
        ``(design, reason)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> infer_design(rng.random((64, 500)) < 0.5)[0]
    'bits'
    >>> balanced = np.argsort(rng.random((64, 500)), axis=0) < 32
    >>> infer_design(balanced)[0]
    'pairs'
    """
    from scipy import stats

    k = np.asarray(keep, dtype=bool)
    n_models, n_targets = k.shape
    if _complement_pairs(k) is not None:
        return "pairs", "the models come in complementary pairs"
    per_target = k.sum(axis=0)
    if per_target.max() - per_target.min() <= 1 and n_targets > 1:
        return "pairs", f"every target is IN for {per_target.min()}-{per_target.max()} models"
    total = int(k.sum())
    share_p = 2 * min(
        stats.binom.cdf(total, k.size, 0.5), stats.binom.sf(total - 1, k.size, 0.5), 0.5
    )
    if share_p < DESIGN_TAIL:
        return "pairs", f"the share IN, {total / k.size:.3f}, is not 1/2"
    for what, counts, n in (("target", per_target, n_models), ("model", k.sum(axis=1), n_targets)):
        if counts.size < 2:
            continue
        x2 = float(np.sum((counts - n / 2.0) ** 2) / (n / 4.0))
        p = 2 * min(stats.chi2.cdf(x2, counts.size), stats.chi2.sf(x2, counts.size))
        if p < DESIGN_TAIL:
            return "pairs", (
                f"the per-{what} IN counts are not dispersed like Binomial({n}, 1/2) "
                f"(chi-square p = {p:.2g})"
            )
    return "bits", "the memberships look like independent fair coins"


def _llr(x, m0, sd0, m1, sd1):
    """Log-likelihood ratio of IN against OUT for scores ``x`` under the fitted normals."""
    z1 = (x - m1) / sd1
    z0 = (x - m0) / sd0
    return 0.5 * (z0 * z0 - z1 * z1) + np.log(sd0) - np.log(sd1)


@dataclass(frozen=True, eq=False)
class GuessingGame:
    """The guesses of one guessing game on a score matrix (:func:`guessing_game`).

    Attributes
    ----------
    design : str
        ``"bits"`` (every (test model, candidate) bit a coin) or ``"pairs"`` (matched IN-OUT
        pairs of test models per candidate, each pair's orientation a coin).
    design_reason : str
        Why (the design passed, or :func:`infer_design`'s reason).
    m : int
        Coins in the game (bits, or pairs).
    right : numpy.ndarray of bool
        Whether each coin's guess is right, most confident first (length m).
    predicted : tuple of float
        The right guesses predicted at each k of ``k_grid`` without any test bit
        (``predict``: see :func:`guessing_game`).
    k_grid : tuple of int
        The grid of k, fixed in advance (``K_FRACTIONS`` of m).
    k_predicted : int
        The k of the grid whose predicted bound is largest (reference fit only).
    candidates : numpy.ndarray of int
        The candidate targets' columns.
    declared : bool
        Whether the candidates were declared (canaries) rather than selected.
    reference_models, test_models : numpy.ndarray of int
        The split's rows.
    method : str
        The reference fit (``"online"`` or ``"offline"``).
    seed : int or None
        The seed of the split and the matchings, when given as an int.
    pooled : dict or None
        The per-model error rates of a test fitted on a reference half at level ``alpha``
        (:func:`mia.model_rates.pooled_record` of :func:`mia.model_rates.pooled_summary`, the
        same split for the same integer seed; over the declared canaries when there are some),
        for the claim's second candidate, the bound pooled over targets; None where there are none.
    """

    design: str
    design_reason: str
    m: int
    right: np.ndarray
    predicted: tuple
    k_grid: tuple
    k_predicted: int
    candidates: np.ndarray
    declared: bool
    reference_models: np.ndarray
    test_models: np.ndarray
    method: str
    seed: int | None
    pooled: dict | None = None

    @property
    def c(self) -> int:
        """The design's factor on eps: 1 for bits, 2 for pairs."""
        return 2 if self.design == "pairs" else 1

    def right_guesses(self, k: int) -> int:
        """Right guesses among the ``k`` most confident (``0 <= k <= m``)."""
        k = _check_k(k, self.m)
        return int(self.right[:k].sum())

    def counts(self, k: int | None = None):
        """Return the game as one-run evidence: ``bayes_dp.OneRunCounts``, one row (m, k, v).

        ``k`` defaults to ``k_predicted`` (chosen from the reference fit alone, so that a
        posterior on it is not biased by the choice). Pairs are marked ``pairs=True`` (their
        coin is (2 eps, 2 delta)-DP).

        Parameters
        ----------
        k : int, optional
            Guesses made, ``1 <= k <= m``.

        Returns
        -------
        bayes_dp.OneRunCounts

        Raises
        ------
        TypeError
            For pairs, when this version of ``bayes_dp.OneRunCounts`` has no ``pairs`` field
            (counts without it would be read as bits: eps twice too large).
        """
        from bayes_dp import OneRunCounts

        k = self.k_predicted if k is None else _check_k(k, self.m)
        v = self.right_guesses(k)
        if self.design != "pairs":
            return OneRunCounts(self.m, k, v)
        try:
            return OneRunCounts(self.m, k, v, pairs=True)
        except TypeError:
            raise TypeError(
                "this bayes_dp.OneRunCounts has no `pairs` field: the pairs game's counts "
                "cannot be marked as pairs (read as bits, their eps would be twice too large)"
            ) from None

    def bounds(self, delta: float = 0.0, confidence: float = 0.95) -> dict:
        """Frequentist lower bounds of eps (and mu) from the game, at ``confidence``.

        Two ways of choosing k, each valid on its own: ``"grid"``, the largest bound over the
        grid at level ``(1 - confidence) / len(k_grid)`` (Bonferroni), and ``"predicted"``, the
        bound at ``k_predicted`` at level ``1 - confidence``; and ``"combined"``, the larger of
        the two computed with half of the error each (for each of ``eps``, ``eps_pure`` and
        ``mu``: the part that sets it, with its own ``k``, ``v`` and ``level``). Each with
        Steinke et al.'s bound in its pure form (``eps_pure``, delta = 0) and its delta form
        (``eps``, with the ``2 m delta`` term; the pure one where ``delta`` is 0), and the f-DP
        bound of mu
        (``mu``, the coins hypothesised mu-GDP) with its eps at ``delta`` if the mechanism is
        Gaussian (``gdp_eps``, for ``delta`` > 0). Pairs: the coin's bound converted back.

        Parameters
        ----------
        delta : float
            In [0, 1).
        confidence : float
            In (0, 1).

        Returns
        -------
        dict
            ``{"grid": {...}, "predicted": {...}, "combined": {...}, "delta": delta,
            "confidence": confidence}``; the first two hold ``eps``, ``eps_pure``, ``mu``,
            ``gdp_eps`` and, for each, the ``k`` and ``v`` that set it, and ``level``;
            ``"combined"`` maps ``eps``, ``eps_pure`` and ``mu`` to such a part.
        """
        from bayes_dp.core.one_run_bound import guessing_game_bounds
        from bayes_dp.core.validation import check_delta, check_real

        delta = check_delta(delta)
        confidence = check_real(
            "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
        )
        return guessing_game_bounds(
            self.m,
            self.k_grid,
            [self.right_guesses(int(k)) for k in self.k_grid],
            self.k_predicted,
            self.right_guesses(self.k_predicted),
            delta,
            confidence,
            pairs=self.design == "pairs",
        )

    def record(self, delta: float = 0.0, confidence: float = 0.95) -> dict:
        """JSON-ready description of the game and its bounds (for a posterior's settings).

        Parameters
        ----------
        delta, confidence : float
            Of the bounds (:meth:`bounds`).

        Returns
        -------
        dict
            ``kind`` ("guessing_game"), ``design``, ``design_reason``, ``c``, ``m``,
            ``k_grid``, ``v_grid`` (right guesses at each k of the grid), ``k_predicted``,
            ``predicted_v`` (the reference fit's predicted right guesses at each k),
            ``k`` and ``v`` (at ``k_predicted``: the counts a posterior uses), ``candidates``,
            ``declared``, ``reference_models``, ``test_models``, ``method``, ``seed``,
            ``bounds`` and ``pooled_rates`` (:attr:`pooled`).
        """
        k = self.k_predicted
        return {
            "kind": "guessing_game",
            "design": self.design,
            "design_reason": self.design_reason,
            "c": self.c,
            "m": self.m,
            "k_grid": [int(x) for x in self.k_grid],
            "v_grid": [self.right_guesses(int(x)) for x in self.k_grid],
            "k_predicted": int(k),
            "predicted_v": [float(p) for p in self.predicted],
            "k": int(k),
            "v": self.right_guesses(k),
            "candidates": self.candidates.tolist(),
            "declared": self.declared,
            "reference_models": self.reference_models.tolist(),
            "test_models": self.test_models.tolist(),
            "method": self.method,
            "seed": self.seed,
            "bounds": self.bounds(delta, confidence),
            "pooled_rates": self.pooled,
        }

    def to_evidence(
        self,
        name: str = "game",
        *,
        delta: float,
        confidence: float = 0.95,
        strength: str = "shared",
    ):
        """Return the game as an evidence group for :func:`bayes_dp.estimate_epsilon`.

        ``bayes_dp.Evidence(self.counts(), likelihood="guesses", source=self.record(...))``:
        the right guesses at ``k_predicted`` for the posterior, and the record (with the
        per-model rates) from which :func:`bayes_dp.audit_claim` states the frequentist bound.

        Parameters
        ----------
        name : str
            The group's name.
        delta : float
            The audit's delta, in [0, 1) (of the recorded bounds).
        confidence : float
            Of the recorded bounds (the claim recomputes them at its own level).
        strength : {"shared", "own"}
            As in :class:`bayes_dp.Evidence`.

        Returns
        -------
        bayes_dp.Evidence

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> keep = rng.random((32, 300)) < 0.5
        >>> scores = rng.laplace(0.0, 1.0, keep.shape) + 2.0 * keep
        >>> ev = guessing_game(scores, keep, candidates=100).to_evidence(delta=1e-5)
        >>> ev.likelihood, ev.source["design"], ev.source["k"] == int(ev.counts.r[0])
        ('guesses', 'bits', True)
        """
        from bayes_dp import Evidence

        return Evidence(
            self.counts(),
            name=name,
            strength=strength,
            source=self.record(delta, confidence),
        )


def companion_rows(record: dict) -> dict:
    """Return the bounds of a game's record as rows of frequentist bounds (the CLI's table).

    Parameters
    ----------
    record : dict
        :meth:`GuessingGame.record`.

    Returns
    -------
    dict
        ``{"confidence", "delta", "bounds": [{"name", "eps", "applicable", "assumes"}, ...]}``,
        the shape of :func:`mia.bounds.companion_bounds`: the grid's bound, the predicted k's,
        the combined one (what the claim's game part is), and the f-DP bound's eps if the
        mechanism is Gaussian.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> keep = rng.random((32, 300)) < 0.5
    >>> scores = rng.laplace(0.0, 1.0, keep.shape) + 2.0 * keep
    >>> rec = guessing_game(scores, keep, candidates=100).record(delta=1e-5)
    >>> [r["name"] for r in companion_rows(rec)["bounds"]][:2]
    ['guessing game, grid of k', 'guessing game, predicted k']
    """
    b = record["bounds"]
    coins = f"{record['m']} {'pairs' if record['design'] == 'pairs' else 'bits'}"
    rows = []
    for name, part, how in (
        ("guessing game, grid of k", b["grid"], "Bonferroni over the grid of k"),
        ("guessing game, predicted k", b["predicted"], "k predicted from the reference half"),
    ):
        rows.append(
            {
                "name": name,
                "eps": part["eps"],
                "applicable": True,
                "assumes": (
                    f"{coins}, {part['eps_v']} of {part['eps_k']} right; {how}; the test "
                    "models' memberships fair coins given the reference half's"
                ),
            }
        )
    comb = b["combined"]["eps"]
    rows.append(
        {
            "name": "guessing game, combined",
            "eps": comb["eps"],
            "applicable": True,
            "assumes": f"the larger of the two above, each at half of the error ({comb['choice']})",
        }
    )
    mu = b["combined"]["mu"]
    rows.append(
        {
            "name": "guessing game, f-DP (eps if the mechanism is Gaussian)",
            "eps": mu["gdp_eps"],
            "applicable": mu["gdp_eps"] is not None,
            "assumes": (
                f"each coin mu-GDP (mu >= {mu['mu']:.3g}); eps at delta only if the mechanism "
                "is Gaussian"
            ),
        }
    )
    return {"confidence": b["confidence"], "delta": b["delta"], "bounds": rows}


def _check_k(k, m: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"`k` must be an integer; found {k!r}")
    if not 0 <= int(k) <= m:
        raise ValueError(f"`k` must be in [0, {m}] (the coins); found {k}")
    return int(k)


def _predicted_k(predicted: np.ndarray, grid: np.ndarray, m: int, pairs: bool) -> int:
    """Return the k of the grid whose bound on the predicted right guesses is largest.

    ``predicted``: the predicted right guesses at each k of the grid, rounded here; the bound
    is Steinke et al.'s pure form at level 0.05 (a ranking only).
    """
    from bayes_dp.core.one_run_bound import one_run_bounds

    v = np.minimum(np.rint(predicted).astype(np.int64), grid)
    b = one_run_bounds(np.full(grid.size, m), grid, v, 0.0, 0.95, pairs=pairs)
    return int(grid[int(np.argmax(b))])


def _predict(how, conf, grid, ref_conf, ref_right) -> np.ndarray:
    """Right guesses predicted at each k of ``grid`` from reference information only.

    ``"model"``: the sum over the k most confident test coins of ``expit(|LLR|)``, the coin's
    posterior under the fitted normals. ``"reference"``: k times the accuracy of the same
    share of the most confident *reference* coins (the reference models' own bits, guessed
    with the same fit: in-sample, so somewhat optimistic, but it sees how the scores' tails
    really behave, where normals fitted to, say, Laplace scores are over-confident).
    """
    if how == "model":
        p = np.sort(special.expit(np.abs(conf)))[::-1]
        return np.cumsum(p)[grid - 1]
    order = np.argsort(-np.abs(ref_conf), kind="stable")
    hits = np.cumsum(ref_right[order])
    n_ref = np.clip(np.rint(grid / conf.size * ref_conf.size).astype(np.int64), 1, hits.size)
    return grid * hits[n_ref - 1] / n_ref


def _design(design: str | None, keep: np.ndarray) -> tuple[str, str]:
    if design is not None and design not in DESIGNS:
        raise ValueError(f"`design` must be one of {DESIGNS} or None; found {design!r}")
    if design is None or design == "auto":
        return infer_design(keep)
    named = {"independent": "bits", "balanced": "pairs"}.get(design, design)
    return named, f"given: design={design!r}"


def guessing_game(
    scores,
    keep,
    *,
    design: str | None = "auto",
    method: str = "online",
    candidates: int = CANDIDATES,
    canaries=None,
    k_fractions=K_FRACTIONS,
    predict: str = "model",
    alpha: float = 0.1,
    fixed_variance: bool = False,
    seed=0,
) -> GuessingGame:
    """Play the guessing game with abstention on a score matrix (see the module's docstring).

    Parameters
    ----------
    scores : array_like of float, shape (n_models, n_targets) or (..., n_augs)
        Each model's score of each target (higher means "member"; augmentations averaged).
    keep : array_like of bool, shape (n_models, n_targets)
        Memberships.
    design : {"auto", "bits", "pairs", "independent", "balanced"} or None
        The inclusion design: "bits" (or "independent": every membership an independent fair
        coin), "pairs" (or "balanced": memberships of a target exchangeable over the models),
        or "auto" (:func:`infer_design`; also None, so that a reader's ``ScoreRun.design``
        hint can be passed as it is).
    method : {"online", "offline"}
        The reference fit (:func:`mia.counts_from_score_matrix`'s test).
    candidates : int
        How many targets to guess when ``canaries`` is None: the most exposed on the reference
        half (default :data:`CANDIDATES`, or all fittable targets if fewer).
    canaries : array_like of int or bool, optional
        Declared canaries (columns, or a mask over the targets): the candidates, instead of a
        selection (those the reference half cannot fit are left out).
    k_fractions : sequence of float
        The grid of k as fractions of the coins, in (0, 1], fixed in advance.
    predict : {"model", "reference"}
        How the right guesses at each k are predicted for ``k_predicted`` (no test bit used):
        from the fitted normals' posterior ``expit(|LLR|)`` of the test coins (default), or
        from the reference coins guessed with the same fit (in-sample: optimistic at small k,
        since the candidates were selected on those coins; it chose too small a k at 256
        models, docs/validation/guessing_game.md).
    fixed_variance : bool
        Fit one variance pooled over the targets (``mia.counts_from_score_matrix``'s
        ``fixed_variance``; LiRA's "-fixed" tests) instead of each target's own.
    alpha : float
        Level of the per-model test whose rates the claim also pools (:attr:`GuessingGame.pooled`;
        ``mia.counts_from_score_matrix``'s ``alpha``), in (0, 1).
    seed : int or numpy.random.Generator
        The split of the models and the matchings (default 0).

    Returns
    -------
    GuessingGame

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> keep = rng.random((32, 300)) < 0.5
    >>> scores = rng.laplace(0.0, 1.0, keep.shape) + 2.0 * keep
    >>> game = guessing_game(scores, keep, candidates=100)
    >>> game.design, game.m
    ('bits', 1600)
    >>> b = game.bounds(delta=1e-5)
    >>> bool(0.5 < b["grid"]["eps"] < 2.0)
    True
    """
    from bayes_dp.core.validation import as_generator, check_positive_int

    arr = check_score_matrix(scores)
    k = check_keep(keep, arr.shape[:2])
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}; found {method!r}")
    candidates = check_positive_int("candidates", candidates)
    fr = np.asarray(k_fractions, dtype=np.float64).reshape(-1)
    if fr.size == 0 or not np.all((fr > 0) & (fr <= 1)):
        raise ValueError(f"`k_fractions` must be in (0, 1]; found {list(k_fractions)!r}")
    if np.ndim(check_alpha("alpha", alpha)) != 0:
        raise ValueError(f"`alpha` must be a single value; found {alpha!r}")
    if predict not in ("reference", "model"):
        raise ValueError(f"`predict` must be 'reference' or 'model'; found {predict!r}")
    x = arr.mean(axis=2) if arr.ndim == 3 else arr
    n_models, n_targets = x.shape
    if n_models < 4:
        raise ValueError(f"`scores` must have at least 4 models to split; found {n_models}")
    design, reason = _design(design, k)
    seed_record = int(seed) if isinstance(seed, (int, np.integer)) else None
    rng = as_generator(seed)
    # the pooled rates' split: the game's own for an integer seed (a generator moves on)
    seed_rng = seed_record if seed_record is not None else rng

    # the split: complementary pairs stay together (each is a coin of the pairs game)
    comp = _complement_pairs(k) if design == "pairs" else None
    if comp is not None:
        perm = rng.permutation(comp.shape[0])
        n_test = comp.shape[0] // 2
        test, ref = np.sort(comp[perm[:n_test]].ravel()), np.sort(comp[perm[n_test:]].ravel())
    else:
        perm = rng.permutation(n_models)
        n_test = n_models // 2
        test, ref = np.sort(perm[:n_test]), np.sort(perm[n_test:])

    # candidates: declared canaries, or the most exposed on the reference half
    m0, sd0, m1, sd1, ok = fit_reference(x[ref], k[ref], method, bool(fixed_variance), "auto")
    declared = canaries is not None
    if declared:
        cols = _canary_columns(canaries, n_targets)
        cols = cols[ok[cols]]
    else:
        exposure = reference_exposure(x[ref], k[ref], method, "auto")
        exposure = np.where(ok, exposure, -np.inf)
        cols = np.sort(select_exposed(exposure, candidates))
    if cols.size == 0:
        raise ValueError(
            f"`scores`: the reference half of the models ({ref.size} of {n_models}) fits no "
            "candidate target (too few IN or OUT models, or no spread): the game needs at least "
            "2 IN and 2 OUT reference models for a target; with so few models the per-target "
            "counts of mia.counts_from_score_matrix (bayes-dp estimate --evidence targets) test "
            "each model against all the others"
        )
    llr = _llr(x[np.ix_(test, cols)], m0[cols], sd0[cols], m1[cols], sd1[cols])
    bits = k[np.ix_(test, cols)]
    if design == "bits":
        conf = llr.ravel()
        truth = bits.ravel()
    else:
        conf, truth = _pairs(llr, bits, test, comp, rng)
    if conf.size == 0:
        raise ValueError("`keep`: no candidate has both an IN and an OUT test model to pair")
    order = np.argsort(-np.abs(conf), kind="stable")
    right = ((conf > 0) == truth)[order]
    m = int(conf.size)
    grid = np.unique(np.clip(np.ceil(fr * m).astype(np.int64), 1, m))
    ref_conf = ref_truth = None
    if predict == "reference":  # the reference models' own coins, guessed with the same fit
        ref_llr = _llr(x[np.ix_(ref, cols)], m0[cols], sd0[cols], m1[cols], sd1[cols])
        ref_bits = k[np.ix_(ref, cols)]
        if design == "bits":
            ref_conf, ref_truth = ref_llr.ravel(), ref_bits.ravel()
        else:
            ref_comp = comp if comp is None else comp[np.isin(comp[:, 0], ref)]
            ref_conf, ref_truth = _pairs(ref_llr, ref_bits, ref, ref_comp, rng)
        if ref_conf.size == 0:
            predict = "model"
    ref_right = None if ref_conf is None else (ref_conf > 0) == ref_truth
    predicted = _predict(predict, conf, grid, ref_conf, ref_right)
    k_pred = _predicted_k(predicted, grid, m, design == "pairs")
    for a in (right, cols, ref, test):
        a.setflags(write=False)
    pooled = pooled_record(
        pooled_summary(
            x,
            k,
            alpha=alpha,
            method=method,
            fixed_variance=bool(fixed_variance),
            seed=seed_rng,
            seed_record=seed_record,
        ),
        cols if declared else None,
    )
    return GuessingGame(
        design=design,
        design_reason=reason,
        m=m,
        right=right,
        predicted=tuple(float(p) for p in predicted),
        k_grid=tuple(int(g) for g in grid),
        k_predicted=k_pred,
        candidates=cols,
        declared=declared,
        reference_models=ref,
        test_models=test,
        method=method,
        seed=seed_record,
        pooled=pooled,
    )


def _canary_columns(canaries, n_targets: int) -> np.ndarray:
    """Columns of the declared canaries (indices or a boolean mask)."""
    c = np.asarray(canaries)
    if c.dtype.kind == "b":
        if c.shape != (n_targets,):
            raise ValueError(
                f"`canaries` as a mask must have shape ({n_targets},); found {c.shape}"
            )
        return np.flatnonzero(c)
    if c.dtype.kind not in "iu" or c.ndim != 1:
        raise TypeError(f"`canaries` must be column indices or a boolean mask; found {c.dtype}")
    if c.size and (c.min() < 0 or c.max() >= n_targets):
        raise ValueError(f"`canaries` must be columns in [0, {n_targets}); found {c.tolist()[:5]}")
    return np.unique(c)


def _pairs(llr, bits, test, comp, rng):
    """Return the pairs game's confidences (LLR differences, first minus second) and coins.

    Per candidate (column of ``llr``), a uniform random matching of its IN and OUT test models
    (``comp``: the complementary pairs instead), each pair in the order of the models' rows;
    the coin is "the first is IN".
    """
    diffs, coins = [], []
    if comp is not None:
        pos = {int(r): i for i, r in enumerate(test)}
        inside = [(pos[int(p)], pos[int(q)]) for p, q in comp if int(p) in pos]
        a, b = (np.asarray(z, dtype=np.int64) for z in zip(*inside, strict=True))
        first, second = np.minimum(a, b), np.maximum(a, b)
        diffs.append((llr[first] - llr[second]).ravel())
        coins.append(bits[first].ravel())
        return np.concatenate(diffs), np.concatenate(coins)
    for j in range(llr.shape[1]):
        ins = rng.permutation(np.flatnonzero(bits[:, j]))
        outs = rng.permutation(np.flatnonzero(~bits[:, j]))
        n = min(ins.size, outs.size)
        if n == 0:
            continue
        a, b = ins[:n], outs[:n]
        first, second = np.minimum(a, b), np.maximum(a, b)
        diffs.append(llr[first, j] - llr[second, j])
        coins.append(first == a)
    if not diffs:
        return np.empty(0), np.empty(0, dtype=bool)
    return np.concatenate(diffs), np.concatenate(coins)
