"""Deliberately broken posteriors, for the mutation check (``benchmarks/mutation_check.py``).

A mutation rewrites what an estimator returns, from outside the package: it monkeypatches the
few places where draws become a posterior (``Posterior.__init__``, which every estimator's
posterior goes through: ``estimate_epsilon``, ``estimate_gdp``, ``estimate_one_run``), the
planner's grid posterior (``bayes_dp.planning.grid._GridPosterior``) and the model's prior
(``Model.build``, ``estimate_one_run``). A statistical check that still passes under a
mutation cannot see that defect.

Activated for a whole pytest run by the environment variable :data:`ENV` (read by
``tests/conftest.py``)::

    BAYES_DP_MUTATION=narrow15 python -m pytest -m statistical tests/statistical/test_sbc.py

Worker processes (joblib's, in the SBC and coverage studies) get it too: the conftest puts
``tests/_support/mutation_site`` (a ``sitecustomize`` that calls :func:`install_from_env`) on
``PYTHONPATH`` while a mutation is active, so every Python process started from the run
installs the same mutation.

The registry is open: ``@register(name, what, families)`` on a function ``apply(patch)`` that
makes its changes through ``patch.setattr`` (undone by ``patch.undo()``) adds a mutation; the
script and the conftest take any registered name.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: the environment variable that names the active mutation
ENV = "BAYES_DP_MUTATION"
#: the claim families of docs/validation/mutation_check.md
FAMILIES = ("designed bases", "score matrices", "Gaussian DP", "one-run", "planner", "canaries")
#: how far narrow15 shrinks the draws towards their median, and how far shift02 moves eps
NARROW = 0.85
SHIFT = 0.2


@dataclass(frozen=True)
class Mutation:
    """One named defect: what it breaks, in which families, and how (``apply(patch)``)."""

    name: str
    what: str
    families: tuple[str, ...]
    apply: Callable[[Patch], None]


REGISTRY: dict[str, Mutation] = {}


def register(name: str, what: str, families=FAMILIES):
    """Decorator: register ``apply(patch)`` as the mutation ``name``."""

    def deco(apply):
        if name in REGISTRY:
            raise ValueError(f"mutation {name!r} is registered already")
        REGISTRY[name] = Mutation(name, what, tuple(families), apply)
        return apply

    return deco


class Patch:
    """Attribute replacements that can be undone (a monkeypatch that outlives a test)."""

    def __init__(self):
        self._undo: list[tuple[object, str, object]] = []

    def setattr(self, obj, name: str, value) -> None:
        self._undo.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    def rebind(self, old, new) -> None:
        """Replace the function ``old`` by ``new`` in every loaded module that binds it
        (``from x import f`` made copies of the name that patching ``x.f`` alone misses)."""
        for mod in list(sys.modules.values()):
            d = getattr(mod, "__dict__", None)
            if not d:
                continue
            for key, val in list(d.items()):
                if val is old:
                    self.setattr(mod, key, new)

    def undo(self) -> None:
        while self._undo:
            obj, name, value = self._undo.pop()
            setattr(obj, name, value)


_state = threading.local()


def _loading() -> bool:
    return getattr(_state, "loading", 0) > 0


def _rewrite_posteriors(patch: Patch, rewrite) -> None:
    """Make every Posterior built by an estimator hold ``rewrite(post, draws)`` as its draws.

    A posterior read back from a file (``load_posterior``) is left as written: its draws were
    rewritten when it was made.
    """
    from bayes_dp.results import posterior as mod

    init = mod.Posterior.__init__

    def patched(self, draws, *args, **kw):
        init(self, draws, *args, **kw)
        if not _loading():
            self._draws = {
                k: np.asarray(v, dtype=np.float64)
                for k, v in rewrite(self, dict(self._draws)).items()
            }

    load = mod.load_posterior

    def load_as_written(*args, **kw):
        _state.loading = getattr(_state, "loading", 0) + 1
        try:
            return load(*args, **kw)
        finally:
            _state.loading -= 1

    patch.setattr(mod.Posterior, "__init__", patched)
    patch.rebind(load, load_as_written)


def _narrow(x: np.ndarray, factor: float = NARROW) -> np.ndarray:
    med = np.median(x)
    return med + factor * (x - med)


def _gdp_mu_of_eps(eps: np.ndarray, delta: float) -> np.ndarray:
    """The mu of a mu-GDP mechanism whose eps at ``delta`` is ``eps`` (bisection, elementwise;
    eps(mu, delta) increases with mu)."""
    from bayes_dp.gdp.core import gdp_epsilon

    eps = np.asarray(eps, dtype=np.float64)
    lo, hi = np.zeros_like(eps), np.ones_like(eps)
    while np.any(short := np.asarray(gdp_epsilon(hi, delta)) < eps):
        hi = np.where(short, 2.0 * hi, hi)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = np.asarray(gdp_epsilon(mid, delta)) < eps
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return 0.5 * (lo + hi)


@register(
    "narrow15",
    "every posterior's draws shrunk 15% towards their median (the planner's grid posterior too)",
)
def _narrow15(patch: Patch) -> None:
    from bayes_dp.planning import grid

    _rewrite_posteriors(patch, lambda post, d: {k: _narrow(v) for k, v in d.items()})
    G = grid._GridPosterior
    quantile, s_quantile, prob_above = G.quantile, G.s_quantile, G.prob_above

    def q_narrow(self, q):
        m = quantile(self, 0.5)
        return m + NARROW * (quantile(self, q) - m)

    def s_narrow(self, q):
        m = s_quantile(self, 0.5)
        return m + NARROW * (s_quantile(self, q) - m)

    def p_narrow(self, eps):
        m = float(quantile(self, 0.5))
        x = m + (eps - m) / NARROW  # P(m + 0.85 (X - m) > eps) = P(X > x)
        return 1.0 if x <= 0 else prob_above(self, x)

    patch.setattr(G, "quantile", q_narrow)
    patch.setattr(G, "s_quantile", s_narrow)
    patch.setattr(G, "prob_above", p_narrow)


@register(
    "shift02",
    "eps draws shifted up by 0.2 (a GDP posterior's mu moved with them; the planner's too)",
)
def _shift02(patch: Patch) -> None:
    from bayes_dp.planning import grid

    def rewrite(post, d):
        if "eps" in d:
            d["eps"] = d["eps"] + SHIFT
            if "mu" in d and post.MODEL == "gdp":
                d["mu"] = _gdp_mu_of_eps(d["eps"], float(post.settings["delta"]))
        return d

    _rewrite_posteriors(patch, rewrite)
    G = grid._GridPosterior
    quantile, prob_above = G.quantile, G.prob_above
    patch.setattr(G, "quantile", lambda self, q: quantile(self, q) + SHIFT)
    patch.setattr(
        G, "prob_above", lambda self, eps: 1.0 if eps <= SHIFT else prob_above(self, eps - SHIFT)
    )


@register(
    "s_fixed_1",
    "the band model's strength fixed at s = 1 (error points on R's boundary) where it is free: "
    "binomial and guesses evidence of estimate_epsilon (score matrices, designed bases, "
    "canaries), the "
    "planner's grid posterior, estimate_one_run",
    ("designed bases", "score matrices", "one-run", "planner", "canaries"),
)
def _s_fixed_1(patch: Patch) -> None:
    from bayes_dp.inference.model import Model
    from bayes_dp.one_run import core as one_run
    from bayes_dp.planning import grid

    build = Model.build.__func__

    def build_s1(cls, counts, *, delta, prior=None):
        from bayes_dp.core.priors import Prior
        from bayes_dp.inference.model import as_groups

        prior = Prior() if prior is None else prior
        # the band models: binomial counts, and the guessing game's guesses (the default
        # evidence of a score matrix since issue 49)
        binomial = all(g.likelihood in ("binomial", "guesses") for g in as_groups(counts))
        if binomial and isinstance(prior, Prior) and not prior.s_fixed:
            prior = dataclasses.replace(prior, s=1.0)
        return build(cls, counts, delta=delta, prior=prior)

    patch.setattr(Model, "build", classmethod(build_s1))

    gp = grid.grid_posterior

    def grid_s1(counts, delta, prior, *args, likelihood="binomial", **kw):
        if likelihood == "binomial" and not prior.s_fixed:
            prior = dataclasses.replace(prior, s=1.0)
        return gp(counts, delta, prior, *args, likelihood=likelihood, **kw)

    patch.rebind(gp, grid_s1)

    est = one_run.estimate_one_run

    def one_run_s1(counts, *args, prior=None, **kw):
        from bayes_dp.core.priors import Prior

        prior = Prior() if prior is None else prior
        if isinstance(prior, Prior) and not prior.s_fixed:
            prior = dataclasses.replace(prior, s=1.0)
        return est(counts, *args, prior=prior, **kw)

    patch.rebind(est, one_run_s1)


def install(name: str) -> Patch:
    """Apply the registered mutation ``name``; returns the Patch whose ``undo()`` reverts it."""
    if name not in REGISTRY:
        raise ValueError(f"unknown mutation {name!r}; registered: {sorted(REGISTRY)}")
    import bayes_dp  # noqa: F401  (every module whose names are rebound is loaded first)
    import bayes_dp.planning.core  # noqa: F401
    import mia  # noqa: F401

    patch = Patch()
    REGISTRY[name].apply(patch)
    return patch


_installed: dict[str, Patch] = {}


def install_from_env() -> str | None:
    """Install the mutation named by :data:`ENV` once per process; return its name (or None)."""
    name = os.environ.get(ENV, "").strip()
    if not name or name in _installed:
        return name or None
    _installed[name] = install(name)
    return name
