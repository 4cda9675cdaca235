"""Score matrices whose decisions depend on the other targets' memberships, with exact eps.

The pooled bound (``docs/validation/pooled_bound.md``) assumes that a target's decision does not
depend on
the other targets' memberships in its model: its guarantee is that every test model's expected
(FP, FN) pair, given the models before it, is a mixture of the targets' points, and the weights
of a target's FP and FN (a kept OUT entry over the kept OUT count, a kept IN entry over the
kept IN count) are equal only if the decision is independent of those counts. Trained models
break that assumption: a model's scores depend on its whole training set. These mechanisms
break it on purpose.

A model's output is the score vector ``x = A b + z`` over the ``T`` targets, ``b`` the
membership vector of its training set, ``z`` independent ``Laplace(0, 1)`` noise (Laplace, not
Gaussian: the online test at alpha = 0.1 on a Laplace shift of 1 has its error point on the
boundary of R(1), so a bias shows at once; a Gaussian's eps at delta = 1e-5 is far above what
a level-0.1 test sees). Record ``t`` moves the output by ``A e_t``: the model is a Laplace
mechanism of L1 sensitivity ``max_t ||A e_t||_1``, its eps at delta = 0 (an upper bound of its
eps at delta > 0: :func:`total_eps`). The couplings (``cfg["coupling"]``, strength ``cfg["g"]``,
own shift ``cfg["mu"]``):

* ``"size"``: every member shifts every score of its model by ``g / sqrt(T)`` (``A = mu I +
  g / sqrt(T) 1 1'``): a model's scores follow its training-set size, the per-model effect of
  trained models tied to the memberships, which moves the kept counts the weights divide by
  (``g < 0`` is the direction that pushes both pooled rates down);
* ``"pairs"``: targets ``2 i`` and ``2 i + 1`` shift each other's score by ``g`` (twins: a near
  duplicate's membership shows in a target's score);
* ``"block"``: blocks of ``BLOCK`` consecutive targets, each member shifting the other scores of
  its block by ``g`` (a class of similar examples);
* ``"canaries"``: only the first ``BLOCK`` targets are exposed (own shift ``mu``, the others'
  0), and they form one block as above (canaries made alike: the targets the bound over the
  most exposed pools over, whose kept counts are a handful, so the weights move most);
* ``"noisy_size"``: the model also releases its training-set size with ``Laplace(1 /
  cfg["eps_s"])`` noise, and every score is shifted by ``g`` times that noisy size (centred,
  over the sd of the design's sizes): the size's own cost is ``eps_s`` per record whatever
  ``g`` (post-processing), so the total eps is ``mu + eps_s`` however strongly the decisions
  follow the size (``A_tt`` is ``mu + g / (sqrt(T) / 2)``: a record moves its own score
  through the size as well).

The sharp reference is not the total eps but the **channel's**: a target's decision reads its
own score only, ``x_t = A_tt b_t + (the others' part) + z_t``, so for every membership of the
other targets its (FP, FN) pair is that of a test of a Laplace shift of ``A_tt``, inside
R(:func:`channel_eps`, delta) (exact, as in ``pooled_sim``). Under the assumption every test
model's expected pair is a mixture of such points, inside R(``channel_eps``); without it the
weights may differ and the pair may leave it. So the constraint tests are checked at
``channel_eps``: a rejection rate above the nominal one there is the assumption's failure,
measured; the total eps lies higher still (by the cross effects' L1 norm), the margin a false
accusation would have to cross.

:func:`audit` counts the matrix as ``bayes-dp`` does (``mia.counts_from_score_matrix``, its
``to_evidence()``) and computes the claim's frequentist bound from the settings a run would
record (``bayes_dp.results.claim_scores.score_matrix_bound``: the per-target bound on effective
counts and the two pooled bounds), with, for each pooled candidate, whether the test of either
lower constraint of R rejects the grid point at ``channel_eps`` at the nominal error 0.025 each
(``pooled_sim.constraint_rejects``: the guarantee itself, sharper than a bound above the truth).
"""

from __future__ import annotations

import math

import numpy as np

#: Couplings of :func:`simulate`.
COUPLINGS = ("size", "pairs", "block", "canaries", "noisy_size")
#: Targets per block of the ``"block"`` coupling.
BLOCK = 8
#: Error of each constraint test in the guarantee check (a quarter of 1 - 0.9, as at 95%
#: confidence with both constraints: the nominal rate of a rejection of the truth).
CHECK_ERROR = 0.025


def _columns(cfg) -> tuple[float, float]:
    """``(own, cross)`` of the largest column of ``A``: its diagonal entry and off-diagonal L1."""
    mu, g, t = float(cfg["mu"]), float(cfg["g"]), int(cfg["targets"])
    c = cfg["coupling"]
    if c == "size":
        h = g / math.sqrt(t)
        return abs(mu + h), (t - 1) * abs(h)
    if c == "pairs":
        return abs(mu), abs(g)
    if c in ("block", "canaries"):
        return abs(mu), (min(BLOCK, t) - 1) * abs(g)
    if c == "noisy_size":  # a record moves its own score through the noisy size too
        return abs(mu + g / (math.sqrt(t) / 2)), float(cfg["eps_s"])
    raise ValueError(f"`coupling` must be one of {COUPLINGS}; found {c!r}")


def total_eps(cfg) -> float:
    """The mechanism's eps at delta = 0, ``max_t ||A e_t||_1`` (at any delta at most this)."""
    return float(sum(_columns(cfg)))


def channel_eps(cfg, delta: float) -> float:
    """The eps at ``delta`` of one target's own score: a Laplace shift of ``A_tt``."""
    return float(_columns(cfg)[0] + 2.0 * np.log1p(-delta))


def simulate(cfg, rng):
    """One score matrix of ``cfg``: ``(scores, keep)`` (models x targets)."""
    import mia

    n, t = int(cfg["models"]), int(cfg["targets"])
    mu, g = float(cfg["mu"]), float(cfg["g"])
    if cfg.get("design", "balanced") == "balanced":
        _, keep = mia.simulate_score_matrix(n, t, 0.0, seed=rng)
    else:
        keep = rng.random((n, t)) < 0.5
    b = keep.astype(np.float64)
    c = cfg["coupling"]
    if c == "size":
        cross = g / math.sqrt(t) * b.sum(axis=1, keepdims=True)
        cross = cross - cross.mean()  # a constant moves nothing: centred for readable scores
    elif c == "pairs":
        if t % 2:
            raise ValueError(f"`targets` must be even for 'pairs'; found {t}")
        cross = g * b[:, np.arange(t) ^ 1]
    elif c == "block":
        blk = np.arange(t) // BLOCK
        sums = np.zeros((n, blk.max() + 1))
        np.add.at(sums.T, blk, b.T)
        cross = g * (sums[:, blk] - b)
    elif c == "canaries":
        k = min(BLOCK, t)
        cross = np.zeros((n, t))
        cross[:, :k] = g * (b[:, :k].sum(axis=1, keepdims=True) - b[:, :k])
    elif c == "noisy_size":
        size = b.sum(axis=1, keepdims=True) + rng.laplace(0.0, 1.0 / float(cfg["eps_s"]), (n, 1))
        cross = g * (size - t / 2) / (math.sqrt(t) / 2)
    else:
        raise ValueError(f"`coupling` must be one of {COUPLINGS}; found {c!r}")
    own = np.full(t, mu)
    if c == "canaries":
        own[min(BLOCK, t) :] = 0.0
    x = rng.laplace(0.0, 1.0, (n, t)) + own * b + cross
    x = x + float(cfg.get("shift", 0.0)) * rng.standard_normal((n, 1))
    return x, keep


def audit(cfg, rng, delta: float = 1e-5, prob: float = 0.95) -> dict:
    """One audit of ``cfg``: the claim's frequentist bound and its parts against the truth.

    Returns a dict: ``truth`` (:func:`channel_eps`), ``total`` (:func:`total_eps`); ``lower``
    (the claim's frequentist bound), ``target_lower``, ``pooled`` (the larger pooled bound, None
    without one) and, per pooled candidate (``"all"``, ``"selected"``), ``<kind>_eps`` (its
    bound at its share of the error), ``<kind>_point`` (eps of the mean per-model rates, no
    interval) and ``<kind>_rej`` (whether either constraint test rejects the grid point at
    ``truth`` at :data:`CHECK_ERROR` each); ``fixed_<kind>_eps`` and ``fixed_<kind>_rej``: the
    same for the prototype with fixed denominators (:func:`fixed_rates`), on the same decisions
    and coins.
    """
    import warnings

    import mia
    from bayes_dp.core.region import _eps_lower
    from bayes_dp.results.claim_scores import score_matrix_bound
    from mia.selection import POOLED_SELECTED, select_exposed

    from .pooled_sim import constraint_rejects

    x, keep = simulate(cfg, rng)
    truth = channel_eps(cfg, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DependenceWarning: the record holds it
        res = mia.counts_from_score_matrix(
            x, keep, float(cfg["alpha"]), skip=True, seed=int(rng.integers(2**63 - 1))
        )
    ev = res.to_evidence(name="lira")
    group = {
        "name": ev.name,
        "likelihood": ev.likelihood,
        "counts": ev.counts.to_dict(),
        "dependence": dict(ev.dependence),
    }
    if not ev.reflect:
        group["reflect"] = False
    fb = score_matrix_bound({"delta": delta, "groups": [group]}, prob)
    pb = fb["pooled"]
    out = {
        "truth": truth,
        "total": total_eps(cfg),
        "lower": float(fb["lower"]),
        "target_lower": float(fb["target_lower"]),
        "pooled": None if pb is None else float(pb["eps"]),
    }
    for c in [] if pb is None else pb["candidates"]:
        out[f"{c['targets']}_eps"] = float(c["eps"])
    rec = ev.dependence.get("pooled_rates") or {}
    for kind, rates in (("all", rec), ("selected", rec.get("selected"))):
        if not rates or len(rates.get("fpr", ())) < 2:
            continue
        f, g = np.asarray(rates["fpr"], dtype=float), np.asarray(rates["fnr"], dtype=float)
        h = rates.get("n_test")
        out[f"{kind}_point"] = float(_eps_lower(f.mean(), g.mean(), delta))
        out[f"{kind}_rej"] = bool(
            constraint_rejects(f, g, truth, delta, CHECK_ERROR, h)
            or constraint_rejects(g, f, truth, delta, CHECK_ERROR, h)
        )
    # the same decisions and coins, rates with fixed denominators (the prototype below), at
    # the claim's share of the error for each of its two pooled candidates
    from bayes_dp.results.claim_scores import POOLED_SHARE

    p = res.pooled
    err = POOLED_SHARE / 2 * (1.0 - prob) / 2.0
    cols = {"all": None}
    if p["columns"].size > POOLED_SELECTED:
        cols["selected"] = select_exposed(p["exposure"], POOLED_SELECTED)
    for kind, c in cols.items():
        f, g, w, used = fixed_rates(p["decisions"], p["keep"], c, seed=p["coin_seed"])
        if used.sum() < 2:
            continue
        h = int(p["keep"].shape[0])
        out[f"fixed_{kind}_eps"] = fixed_epsilon_bound(f, g, w, delta, err, h)
        out[f"fixed_{kind}_rej"] = fixed_rejects(f, g, w, truth, delta, CHECK_ERROR, h)
    return out


# -- a prototype: per-model rates with fixed denominators (no assumption on the decisions) ---------
def fixed_rates(decisions, keep, columns=None, *, seed=0):
    """Per-model rates whose expectations need no assumption on how decisions depend on others.

    The coins, the kept entries and the models used are :func:`mia.model_rates.model_rates`'s
    (:func:`mia.model_rates.kept_entries`, the same draws from ``seed``). What differs is the
    denominator: not the kept counts (random, and correlated with decisions that follow the
    model's training set), but the number of targets
    eligible in the model (``p_t > 0``, known given the models before). Target ``t`` contributes
    ``f_t = a_t 1{t kept OUT} D_t + (1 - a_t p_t) / 2`` to the FP value and ``g_t = a_t 1{t kept
    IN} (1 - D_t) + (1 - a_t p_t) / 2`` to the FN value, ``a_t = 1 / (2 - p_t)`` (so both lie in
    [0, 1]). Given the models before, with the memberships independent across targets, ``E f_t =
    w_t F_t + (1 - w_t) / 2`` and ``E g_t = w_t G_t + (1 - w_t) / 2``, ``w_t = a_t p_t``, where
    ``(F_t, G_t)`` is target ``t``'s error point averaged over the other targets' memberships,
    the same law whether ``t`` is IN or OUT: inside R(eps, delta) by convexity, whatever the
    decision reads. Returns ``(f, g, w, used)``: per used model the means of ``f_t``, ``g_t`` and
    ``w_t`` over its eligible targets (``w``: the known weight of the targets' mixture).
    """
    from mia.model_rates import kept_entries

    dt, _, p, kept_in, kept_out, used = kept_entries(decisions, keep, columns, seed=seed)
    elig = p > 0
    a = 1.0 / (2.0 - p)
    w_t = a * p
    base = (1.0 - w_t) / 2.0
    n_elig = np.maximum(elig.sum(axis=1), 1)
    f = (np.where(elig, a * (kept_out & dt) + base, 0.0)).sum(axis=1) / n_elig
    g = (np.where(elig, a * (kept_in & ~dt) + base, 0.0)).sum(axis=1) / n_elig
    w = np.where(elig, w_t, 0.0).sum(axis=1) / n_elig
    return f[used], g[used], w[used], used


def _fixed_log_capital(u, v, w, eps0, delta, error, horizon):
    """Log capital of the test of ``E[u_i + e^eps0 v_i] >= w_i (1 - delta) + (1 - w_i)(1 +
    e^eps0) / 2`` per candidate ``eps0`` (rows), with the betting bound's bets and cap."""
    from bayes_dp.core.pooled_bound import BET_CAP, _bets

    e = np.exp(np.asarray(eps0, dtype=float))[:, None]
    z = (u + e * v) / (1.0 + e)
    m = w * (1.0 - delta) / (1.0 + e) + (1.0 - w) / 2.0
    bet = np.minimum(_bets(z, error, horizon), BET_CAP / (1.0 - m))
    return np.log1p(bet * (m - z)).sum(axis=-1)


def fixed_epsilon_bound(f, g, w, delta, error, horizon=None) -> float:
    """The pooled bound of :func:`fixed_rates`: the larger of the two constraints' bounds, each
    the largest grid point up to which every point is rejected at ``error``."""
    from bayes_dp.core.pooled_bound import GRID_CHUNK, GRID_MAX, GRID_STEP

    horizon = f.size if horizon is None else horizon
    target = np.log(1.0 / error)
    best = 0.0
    for u, v in ((f, g), (g, f)):
        for start in range(0, int(GRID_MAX / GRID_STEP), GRID_CHUNK):
            eps0 = (start + np.arange(GRID_CHUNK)) * GRID_STEP
            rej = _fixed_log_capital(u, v, w, eps0, delta, error, horizon) >= target
            if not rej.all():
                first = int(np.argmin(rej))
                best = max(best, float(eps0[first - 1]) if first > 0 else 0.0)
                break
    return best


def fixed_rejects(f, g, w, truth, delta, error, horizon=None) -> bool:
    """Whether either constraint test of :func:`fixed_epsilon_bound` rejects the first grid
    point at or above ``truth`` (each at ``error``)."""
    from bayes_dp.core.pooled_bound import GRID_STEP

    horizon = f.size if horizon is None else horizon
    eps0 = np.array([np.ceil(truth / GRID_STEP - 1e-9) * GRID_STEP])
    target = np.log(1.0 / error)
    return bool(
        _fixed_log_capital(f, g, w, eps0, delta, error, horizon)[0] >= target
        or _fixed_log_capital(g, f, w, eps0, delta, error, horizon)[0] >= target
    )
