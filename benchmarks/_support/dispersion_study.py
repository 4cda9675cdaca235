"""The dispersion inside the likelihood (issue 32, item 2) on Laplace score matrices, by quadrature.

Shared by ``benchmarks/lira_dispersion_likelihood.py`` and
``tests/statistical/test_dispersion_likelihood.py`` (``docs/validation/lira.md``, "The dispersion
inside
the likelihood (item 2), measured"). A score matrix is drawn as
:func:`mia.coverage.score_matrix_audit` draws it with ``mechanism="laplace"`` (the same
generator calls in the same order, so a generator in the same state gives the same matrix):
each target IN for exactly half of the models (:func:`mia.simulate_score_matrix`, whose normal
scores are then replaced), OUT scores Laplace(0, 1), IN scores Laplace(mu, 1), an optional
per-model shift N(0, shift^2) added to all of a model's scores, counted by
:func:`mia.counts_from_score_matrix` (online test). The mechanism is exactly mu-DP: at delta = 0
its eps is mu.

Every row's posterior of eps is the band model's (each target's error point uniform on
R_s(eps) minus R(s eps), eps ~ HalfNormal(10), s ~ Uniform(0, 1), folded coordinates) at
delta = 0, computed by :func:`tests.reference.overdispersed.overdispersed_posterior_bruteforce`
(deterministic quadrature, no MCMC noise); only the likelihood of a target's counts differs:

* ``binomial``: FP and FN binomial (the default of ``to_evidence()``);
* ``fn_design``: FN beta-binomial at the design's FN dispersion,
  ``tau_fn = (d_FN - 1) / (n_pos - 1)`` with ``d_FN`` the group's within-target FN design
  effect (``res.dependence.fn_within``, a weighted mean over targets: the per-target values
  are not exposed), FP binomial (its counts are under-dispersed, so the binomial is wider than
  the truth);
* ``fn_free``: FN beta-binomial with one tau_fn shared by the targets, Beta(1, 20) prior,
  integrated by the midpoint rule; FP binomial;
* ``both_free``: both sides beta-binomial with one shared tau, Beta(1, 20) (the single-tau
  model of the existing reference).
"""

from __future__ import annotations

import numpy as np

from tests.reference.overdispersed import overdispersed_posterior_bruteforce

ROWS = ("binomial", "fn_design", "fn_free", "both_free")
TAU_PRIOR = ("beta", 1.0, 20.0)


def draw_counts(rng, mu, shift, *, n_models=64, n_targets=64, alpha=0.1):
    """One Laplace score matrix counted as in ``score_matrix_audit``: (counts, dependence)."""
    from mia import counts_from_score_matrix, simulate_score_matrix

    scores, keep = simulate_score_matrix(n_models, n_targets, mu, seed=rng)
    scores = rng.laplace(0.0, 1.0, keep.shape) + mu * keep
    if shift > 0:
        scores = scores + rng.normal(0.0, shift, (n_models, 1))
    res = counts_from_score_matrix(scores, keep, alpha, "online")
    return res.counts, res.dependence


def row_posterior(row, counts, dependence, *, m=300, eps_max=40.0, n_eps=600, n_tau=12):
    """The posterior of eps of one row (see the module) on one matrix's counts."""
    c = counts
    fp, n0, fn, n1 = (np.asarray(v, dtype=int) for v in (c.fp, c.n_neg, c.fn, c.n_pos))
    kw = {"m": m, "eps_max": eps_max, "n_eps": n_eps, "n_tau": n_tau}
    if row == "binomial":
        return overdispersed_posterior_bruteforce(
            fp, n0, fn, n1, "beta_binomial", ("fixed", 0.0), tau_fp=0.0, **kw
        )
    if row == "fn_design":
        d_fn = max(float(dependence.fn_within), 1.0)
        tau_fn = (d_fn - 1.0) / np.maximum(n1 - 1, 1)
        return overdispersed_posterior_bruteforce(
            fp, n0, fn, n1, "beta_binomial", ("fixed", tau_fn), tau_fp=0.0, **kw
        )
    if row == "fn_free":
        return overdispersed_posterior_bruteforce(
            fp, n0, fn, n1, "beta_binomial", TAU_PRIOR, tau_fp=0.0, **kw
        )
    if row == "both_free":
        return overdispersed_posterior_bruteforce(
            fp, n0, fn, n1, "beta_binomial", TAU_PRIOR, tau_fp="shared", **kw
        )
    raise ValueError(f"row must be one of {ROWS}; found {row!r}")


def audit_rows(rng, mu, shift, rows, **kw):
    """One matrix, every row: {row: (q5, q95)} plus the FN design effect used."""
    counts, dep = draw_counts(rng, mu, shift)
    out = {"fn_within": float(dep.fn_within), "fp_within": float(dep.fp_within)}
    for row in rows:
        post = row_posterior(row, counts, dep, **kw)
        q5, q95 = (float(v) for v in post.eps_quantile([0.05, 0.95]))
        out[row] = (q5, q95)
        if row in ("fn_free", "both_free"):
            out[row + "_tau"] = post.mean("tau")
    return out
