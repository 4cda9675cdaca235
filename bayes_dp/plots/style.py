"""What the figures share: axis limits of long-tailed variables, labels, legends, the counts.

The eps axis of every figure ends at the same quantile (:data:`TAIL_QUANTILE` times
:data:`TAIL_MARGIN`) and says how many draws lie beyond it; legends go where
:data:`LEGEND_PLACES` allows; :func:`posterior_counts` finds the attack counts a posterior
recorded.
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.observations import AttackCounts
from bayes_dp.results.posterior import Posterior

#: The eps axis ends at this quantile times ``TAIL_MARGIN`` (eps has a long upper tail when s is
#: unknown; the share of draws beyond the axis is given in its label, or in the trace plot's
#: title).
TAIL_QUANTILE = 0.975
TAIL_MARGIN = 1.25


def _view(var: str, x: np.ndarray) -> tuple[float, float]:
    """Axis range for the draws ``x`` of ``var``: eps cut in its upper tail, s within [0, 1]."""
    if var == "eps":
        lo = float(np.min(x))
        hi = min(float(np.max(x)), TAIL_MARGIN * float(np.quantile(x, TAIL_QUANTILE)))
    else:
        lo, hi = float(np.min(x)), float(np.max(x))
    if hi <= lo:
        hi = lo + max(abs(lo) * 1e-6, 1e-9)
    return lo, hi


def _cut_label(var: str, x: np.ndarray, hi: float) -> str:
    note = _cut_note(x, hi)
    return _label(var) + (f"  (axis cut{note})" if note else "")


def _cut_note(x: np.ndarray, hi: float) -> str:
    frac = float(np.mean(x > hi))
    return f"; {100 * frac:.1f}% of draws lie beyond {hi:.3g}" if frac > 0 else ""


def _axes(ax, figsize=(6.4, 4.2)):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


#: Where a legend may go: inside the axes where matplotlib finds room, outside to the right of
#: the axes, outside below them, or nowhere.
LEGEND_PLACES = ("best", "right", "below", None)


def _place_legend(ax, where, *, ncol_below: int = 2, fontsize="small"):
    """Draw the legend of ``ax`` at ``where`` (one of :data:`LEGEND_PLACES`).

    "right" and "below" put it outside the axes, so that it hides no data; a figure made with
    ``layout="constrained"`` makes room for it.
    """
    if where not in LEGEND_PLACES:
        raise ValueError(f"`legend` must be one of {list(LEGEND_PLACES)}; found {where!r}")
    if where is None:
        return None
    if where == "right":
        return ax.legend(
            fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0
        )
    if where == "below":
        return ax.legend(
            fontsize=fontsize,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.16),
            ncol=ncol_below,
            borderaxespad=0,
        )
    return ax.legend(fontsize=fontsize)


def _check_post(posterior) -> Posterior:
    if not isinstance(posterior, Posterior):
        raise TypeError(
            f"`posterior` must be a bayes_dp.Posterior; found {type(posterior).__name__}"
        )
    return posterior


def _label(var: str) -> str:
    if var == "eps":
        return "ε (privacy parameter)"
    if var == "s":
        return "s (attack strength)"
    if var.startswith("s_"):
        return f"s of group {var[2:]!r} (attack strength)"
    return var


def posterior_counts(posterior: Posterior) -> list[tuple[str, AttackCounts]]:
    """Return the evidence groups in ``posterior.settings`` as ``(name, AttackCounts)`` pairs.

    Groups of attack counts only: groups of one-run audits (``kind`` ``"one_run"``) have no
    error rates to show.

    Examples
    --------
    >>> import numpy as np
    >>> settings = {"groups": [{"name": "g", "counts": {"fp": [1], "n_neg": [10],
    ...                                                 "fn": [2], "n_pos": [10]}}]}
    >>> post = Posterior({"eps": np.ones((1, 5))}, {}, settings)
    >>> posterior_counts(post)
    [('g', AttackCounts(fp=[1], n_neg=[10], fn=[2], n_pos=[10]))]
    """
    _check_post(posterior)
    out = []
    for g in posterior.settings.get("groups", []):
        if g.get("kind") == "one_run":
            continue
        out.append((str(g["name"]), AttackCounts(**g["counts"])))
    return out


def _all_counts(posterior: Posterior) -> AttackCounts | None:
    groups = posterior_counts(posterior)
    if not groups:
        return None
    return AttackCounts.concat([c for _, c in groups])


def _support(var: str) -> tuple[float, float]:
    """Known support of ``var``: eps >= 0; s, s_<group>, tau_<group> in [0, 1]; |rho_<group>| <= 1.

    rho's admissible interval (-rho_max(tau), rho_max(tau)) depends on tau, but rho_max <= 1, so
    [-1, 1] holds every draw.
    """
    if var == "eps":
        return 0.0, np.inf
    if var == "s" or var.startswith(("s_", "tau_")):
        return 0.0, 1.0
    if var.startswith("rho_"):
        return -1.0, 1.0
    return -np.inf, np.inf
