"""Count evidence and per-group strengths in the grid posterior of :func:`bayes_dp.estimate_gdp`.

A mu-GDP mechanism is (eps(mu, delta_c), delta_c)-DP for every delta_c, so a group of attack
counts audited at delta_c sees ``eps_c = gdp_epsilon(mu, delta_c)``: its likelihood on the
(mu, s) grid is the count model's exact likelihood (the one the exact sampler and the planner
use, :func:`samplers.exact.grid.log_lik_points` on :func:`bayes_dp.inference.runners.kernel_model`)
at
``(eps_c(mu), s)``. Groups with ``strength="own"`` get their own strength, integrated out over
the s cells (equal prior mass) and drawn afterwards given each draw's mu. ``docs/validation/gdp.md``
section 6 derives it and says what it assumes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from bayes_dp.core.evidence import Evidence
from bayes_dp.core.gaussians import gaussian_epsilon_array
from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.validation import check_real

#: Name of the group an ``AttackCounts`` given without an ``Evidence`` wrapper gets.
DEFAULT_COUNTS_NAME = "counts"
#: Stand-in for a log likelihood of -inf, so that interpolation does not make NaN.
_LOG_ZERO = -1e10


@dataclass
class CountGroup:
    """A binomial count group with the delta at which it was audited, and its kernel model."""

    ev: Evidence
    delta: float
    model: object
    curve: np.ndarray | None = None  # log likelihood at s = 1 on the coarse grid (from 1)

    def log_lik(self, mu, s) -> np.ndarray:
        """Return the summed log likelihood of the bases at eps = gdp_epsilon(mu, delta), s."""
        from samplers.exact.grid import log_lik_points

        mu = np.asarray(mu, np.float64)
        eps = gaussian_epsilon_array(mu.ravel(), self.delta).reshape(mu.shape)
        eps, s = np.broadcast_arrays(eps, np.asarray(s, np.float64))
        flat_e, flat_s = eps.ravel().copy(), s.ravel().copy()
        out = np.empty(eps.size)
        stop = np.zeros(1, dtype=np.int64)
        # the kernel releases the GIL: chunks of points run in threads
        chunks = np.array_split(np.arange(eps.size), max(1, min(os.cpu_count() or 1, 8)))

        def run(idx):
            part = np.empty(idx.size)
            log_lik_points(self.model, None, flat_e[idx], flat_s[idx], part, stop)
            out[idx] = part

        with ThreadPoolExecutor(len(chunks)) as pool:
            list(pool.map(run, chunks))
        return out.reshape(eps.shape)

    def table(self, coarse, mu_mid, s_mid) -> np.ndarray:
        """Log likelihood on (mu cells, s cells), computed at fewer mu and interpolated.

        ``coarse`` is the coarse mu grid (its first point, mu = 0, left out). The likelihood
        is computed at every s cell and at ``coarse[1:]`` plus a fine grid where the group's
        likelihood at s = 1 (``self.curve``) is high, not at the fine grids of the other
        groups: it is linear in log between these points. (Interpolating in s as well, from 25
        of 100 cells, moved the 95% quantile of mu by 8% in a checked case: not done.)
        """
        from bayes_dp.inference.grid_posterior import refine_grid

        sub = refine_grid(coarse[1:], [self.curve])
        ll = self.log_lik(sub[:, None], s_mid[None, :])
        ll = np.where(np.isfinite(ll), ll, _LOG_ZERO)
        return np.stack([np.interp(mu_mid, sub, ll[:, j]) for j in range(s_mid.size)], axis=1)

    def record(self) -> dict:
        """JSON-serialisable description (for ``Posterior.settings``)."""
        c = self.ev.counts
        return {
            "name": self.ev.name,
            "kind": "counts",
            "likelihood": self.ev.likelihood,
            "strength": self.ev.strength,
            "delta": self.delta,
            "fp": c.fp.tolist(),
            "n_neg": c.n_neg.tolist(),
            "fn": c.fn.tolist(),
            "n_pos": c.n_pos.tolist(),
        }


def is_counts(item) -> bool:
    """Whether ``item`` is count evidence (``AttackCounts`` or ``Evidence``)."""
    return isinstance(item, (AttackCounts, Evidence))


def count_groups(items, counts_delta, delta: float) -> list[CountGroup]:
    """Check the count groups and their deltas; build each group's kernel model.

    ``counts_delta`` is None (every group at ``delta``), a float, or a mapping from group
    name to delta.
    """
    from bayes_dp.core.priors import Prior
    from bayes_dp.inference.model import Model
    from bayes_dp.inference.runners import kernel_model

    evs = [
        Evidence(c, name=DEFAULT_COUNTS_NAME) if isinstance(c, AttackCounts) else c for c in items
    ]
    for ev in evs:
        if ev.likelihood != "binomial":
            raise ValueError(
                f"count group {ev.name!r}: only likelihood='binomial' combines with GDP "
                f"evidence on the grid; found {ev.likelihood!r} (correlated counts need "
                "estimate_epsilon)"
            )
    if isinstance(counts_delta, Mapping):
        unknown = sorted(set(counts_delta) - {ev.name for ev in evs})
        if unknown:
            raise ValueError(
                f"`counts_delta` names no count group: {unknown}; groups: {[ev.name for ev in evs]}"
            )
        missing = [ev.name for ev in evs if ev.name not in counts_delta]
        if missing:
            raise ValueError(f"`counts_delta` has no delta for count group(s) {missing}")
        deltas = [counts_delta[ev.name] for ev in evs]
    elif counts_delta is None:
        deltas = [delta] * len(evs)
    else:
        deltas = [counts_delta] * len(evs)
    out = []
    for ev, d in zip(evs, deltas, strict=True):
        d = check_real(
            f"counts_delta[{ev.name!r}]", d, low=0.0, high=1.0, low_open=True, high_open=True
        )
        # s free in the kernel model, so that the likelihood can be read at any s
        out.append(CountGroup(ev, d, kernel_model(Model.build(ev, delta=d, prior=Prior()))[0]))
    return out


def own_log_lik(table: np.ndarray) -> np.ndarray:
    """Marginal log likelihood over a group's own s (cells of equal prior mass): per mu cell."""
    return special.logsumexp(table, axis=1) - np.log(table.shape[1])


def draw_own_s(table, i_mu, s_prior, s_edges, rng) -> np.ndarray:
    """Draw a group's own s given each draw's mu cell ``i_mu``.

    The s cell is drawn with probability proportional to the group's likelihood in that row
    of ``table`` (cells carry equal prior mass), then s from the prior inside the cell.
    """
    rows = table[i_mu]
    w = np.exp(rows - rows.max(axis=1, keepdims=True))
    cum = np.cumsum(w, axis=1)
    u = rng.random(i_mu.size) * cum[:, -1]
    i_s = np.minimum((cum < u[:, None]).sum(axis=1), table.shape[1] - 1)
    v = s_edges[i_s] + rng.random(i_mu.size) * (s_edges[i_s + 1] - s_edges[i_s])
    return stats.beta.ppf(v, s_prior.a, s_prior.b)
