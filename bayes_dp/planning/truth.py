"""The planner's hypotheses (``truth``): points, lists and distributions of eps or mu, s, tau, rho.

Parsed once into a sampler of :class:`Hypothesis` rows (eps at the design's delta; mu where the
hypothesis is Gaussian DP) that :func:`bayes_dp.plan_audit` draws from per simulated audit.
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from bayes_dp.core.validation import check_real

#: Keys of a point hypothesis (``truth``): eps (at delta) or mu (GDP), s, and the likelihood's
#: tau / rho; and of a design.
TRUTH_KEYS = ("eps", "mu", "s", "tau", "rho")


#: Columns of :attr:`AuditPlan.truths` (mu is nan where the hypothesis gave eps).
Hypothesis = namedtuple("Hypothesis", ["eps", "s", "mu", "tau", "rho"])


def _truth_point(t, where: str, delta: float, likelihood) -> Hypothesis:
    """Check one hypothesis; ``where`` names it in messages (``truth``, ``truth[2]``)."""
    from bayes_dp.gdp.core import gdp_epsilon

    if not isinstance(t, Mapping):
        raise TypeError(f"`{where}` must be a dict with keys 'eps' (or 'mu') and 's'; found {t!r}")
    unknown = sorted(set(t) - set(TRUTH_KEYS))
    if unknown or "s" not in t or ("eps" in t) == ("mu" in t):
        raise ValueError(
            f"`{where}` needs the key 's' and one of 'eps' (at delta) or 'mu' (GDP), and "
            f"'tau' / 'rho' as the likelihood has them; found {dict(t)}"
        )
    other = [k for k in ("tau", "rho") if k in t and not likelihood.has(k)]
    if other:
        raise ValueError(
            f"`{where}`: {other[0]!r} is not a parameter of the {likelihood.name!r} likelihood "
            f"(give likelihood='bivariate_normal' for tau and rho, 'beta_binomial' for tau); "
            f"found {dict(t)}"
        )
    missing = [k for k in likelihood.param_names if k not in t]
    if missing:
        raise ValueError(
            f"`{where}` needs {missing[0]!r} with likelihood={likelihood.name!r} (the plan "
            f"assumes it known); found {dict(t)}"
        )
    s = check_real(f"{where}['s']", t["s"], low=0.0, high=1.0, high_open=True)
    tau = check_real(f"{where}['tau']", t.get("tau", 0.0), low=-1.0, high=1.0, high_open=True)
    rho = check_real(f"{where}['rho']", t.get("rho", 0.0), low=-1.0, high=1.0, low_open=True)
    if "rho" in t and abs(rho) >= 1.0:
        raise ValueError(f"`{where}['rho']` must be in (-1, 1); found {t['rho']!r}")
    if "mu" not in t:
        eps = check_real(f"{where}['eps']", t["eps"], low=0.0, low_open=True)
        return Hypothesis(eps, s, math.nan, tau, rho)
    mu = check_real(f"{where}['mu']", t["mu"], low=0.0, low_open=True)
    if delta == 0.0:
        raise ValueError(f"`{where}` gives mu (GDP), which needs delta > 0; found delta=0.0")
    return Hypothesis(gdp_epsilon(mu, delta), s, mu, tau, rho)


def _describe(h: Hypothesis, delta: float) -> str:
    if math.isnan(h.mu):
        text = f"eps={h.eps:g}, s={h.s:g}"
    else:
        text = f"mu={h.mu:g} (eps={h.eps:.3g} at delta={delta:g}), s={h.s:g}"
    return text + "".join(f", {k}={getattr(h, k):g}" for k in ("tau", "rho") if getattr(h, k))


def _is_distribution(v) -> bool:
    return hasattr(v, "rvs") and callable(v.rvs)


def _describe_value(v) -> str:
    """Name a value of a hypothesis: a number, or a scipy distribution and its parameters."""
    if not _is_distribution(v):
        return f"{v:g}" if isinstance(v, (int, float, np.number)) else repr(v)
    if hasattr(v, "xk") and hasattr(v, "pk"):  # rv_discrete(values=...): weighted points
        pts = ", ".join(f"{x:g}@{p:.3g}" for x, p in zip(v.xk, v.pk, strict=True))
        return f"~ points({pts})"
    dist = getattr(v, "dist", v)
    name = getattr(dist, "name", type(dist).__name__)
    if name in ("uniform", "truncnorm") and hasattr(v, "support"):
        lo, hi = v.support()
        if name == "uniform":
            return f"~ uniform({lo:g}, {hi:g})"
        mean, sd = v.kwds.get("loc", 0.0), v.kwds.get("scale", 1.0)
        return f"~ normal({mean:g}, {sd:g}) cut to [{lo:g}, {hi:g}]"
    args = [f"{a:g}" if isinstance(a, (int, float)) else repr(a) for a in getattr(v, "args", ())]
    args += [f"{k}={x:g}" for k, x in getattr(v, "kwds", {}).items()]
    return f"~ {name}({', '.join(args)})"


def _dict_sampler(t, where: str, delta: float, likelihood) -> tuple[Callable, str]:
    """Sampler and description of one dict hypothesis, whose values may be distributions."""
    if isinstance(t, Mapping) and any(_is_distribution(v) for v in t.values()):

        def draw(rng):
            vals = {
                k: float(np.ravel(v.rvs(random_state=rng))[0]) if _is_distribution(v) else v
                for k, v in t.items()
            }
            return _truth_point(vals, where, delta, likelihood)

        draw(np.random.default_rng(0))  # check the keys and the fixed values now
        text = ", ".join(
            f"{k} {_describe_value(v)}" if _is_distribution(v) else f"{k}={_describe_value(v)}"
            for k, v in t.items()
        )
        return draw, text
    point = _truth_point(t, where, delta, likelihood)
    return (lambda rng: point), _describe(point, delta)


def _truth_sampler(truth, delta: float, likelihood) -> tuple[Callable, str]:
    """Return a function drawing one :data:`Hypothesis` per simulated audit, and a description."""
    if isinstance(truth, Mapping):
        return _dict_sampler(truth, "truth", delta, likelihood)
    if callable(truth):

        def draw(rng):
            return _truth_point(truth(rng), "truth(rng)", delta, likelihood)

        return draw, f"drawn by {getattr(truth, '__name__', repr(truth))}(rng)"
    if isinstance(truth, Sequence) and not isinstance(truth, (str, bytes)) and truth:
        draws = [_dict_sampler(t, f"truth[{i}]", delta, likelihood)[0] for i, t in enumerate(truth)]
        return (
            lambda rng: draws[int(rng.integers(len(draws)))](rng),
            f"uniform over {len(draws)} hypotheses",
        )
    raise TypeError(
        "`truth` must be a dict {'eps': ..., 's': ...} (or 'mu' for 'eps'), a non-empty list of "
        f"such dicts, or a callable rng -> dict; found {truth!r}"
    )
