"""Simulated LiRA runs, as real ones look (shared by tests and benchmarks/lira_mixing.py).

Also the exact sampler's model of one group of such counts (:func:`one_group_model`), and the
padding case of issue 32 (:func:`padded_counts`, :func:`padded_run`; benchmarks/lira_padding.py).

Gaussian scores (N(0, 1) OUT, shifted by the target's effect size IN), every target IN for a
random half of the models (LiRA's balanced design), effect sizes mostly tiny (Exp(0.15) for
~90% of the targets, 0 otherwise) plus a few large ones (Exp(2) for ~10%), as in real LiRA runs
where most targets are barely exposed.
"""

import numpy as np


def lira_counts(n_models, n_targets, seed, halves="balanced"):
    """``mia.counts_from_score_matrix`` (alpha = 0.05) of a simulated run (see the module).

    ``halves="independent"``: each model trains on an independent random half instead (Privacy
    Meter's design), so the IN/OUT counts of the targets differ.
    """
    import mia

    rng = np.random.default_rng(seed)
    if halves == "independent":
        keep = rng.random((n_models, n_targets)) < 0.5
    else:
        keep = np.zeros((n_models, n_targets), dtype=bool)
        for t in range(n_targets):
            keep[rng.permutation(n_models)[: n_models // 2], t] = True
    weak = rng.exponential(0.15, n_targets) * (rng.random(n_targets) < 0.9)
    strong = rng.exponential(2.0, n_targets) * (rng.random(n_targets) < 0.1)
    scores = rng.normal(size=keep.shape) + keep * (weak + strong)[None, :]
    return mia.counts_from_score_matrix(scores, keep, 0.05)


def one_group_model(c, lik, tau=0.05, rho=0.0, free=False):
    """``samplers.exact.driver.build_model`` of one group of counts ``c`` with its own strength.

    ``lik``: a ``samplers.model.codes`` likelihood code; tau and rho their starting (``free``) or
    fixed values; delta 1e-5 and the default priors (HalfNormal(10), Beta(1, 1), Beta(1, 1)).
    """
    from samplers.exact import driver

    n = len(c.fp)
    return driver.build_model(
        c.fp,
        c.n_neg,
        c.fn,
        c.n_pos,
        np.zeros(n, dtype=np.int64),
        g_lik=[lik],
        g_sidx=[0],
        g_tau=[tau],
        g_rho=[rho],
        g_tau_free=[free],
        g_rho_free=[free],
        s_fixed=[np.nan],
        delta=1e-5,
        eps_prior=(0, 10.0, 0.0),
        s_prior=(1.0, 1.0),
        tau_prior=(1.0, 1.0),
    )


def padded_counts(n_exposed: int, n_pad: int, seed: int, n_models: int = 64, shift=(2.0, 4.0)):
    """Counts (``mia.ScoreMatrixCounts``) of ``n_exposed`` exposed targets then ``n_pad`` others.

    The exposed targets' scores are drawn first from ``seed``, so every ``n_pad`` shares them.
    """
    import mia

    return mia.counts_from_score_matrix(
        *padded_matrix(n_exposed, n_pad, seed, n_models, shift), 0.1
    )


def padded_matrix(n_exposed: int, n_pad: int, seed: int, n_models: int = 64, shift=(2.0, 4.0)):
    """The score matrix and memberships ``(scores, keep)`` behind :func:`padded_counts`."""
    import mia

    rng = np.random.default_rng(seed)
    mu = rng.uniform(*shift, n_exposed)
    s1, k1 = mia.simulate_score_matrix(n_models, n_exposed, mu, seed=rng)
    if n_pad:
        s2, k2 = mia.simulate_score_matrix(
            n_models, n_pad, 0.0, seed=np.random.default_rng(seed + 1)
        )
        s1, k1 = np.concatenate([s1, s2], 1), np.concatenate([k1, k2], 1)
    return s1, k1


def padded_run(n_exposed, n_pad, seed, likelihood, max_time=None, reflect=True):
    """One default run; returns a dict of the figures the table prints.

    ``reflect=False``: the decisions as made (``bayes_dp.Evidence(reflect=False)``).
    """
    import time
    import warnings

    import bayes_dp as bdp

    res = padded_counts(n_exposed, n_pad, seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = bdp.estimate_epsilon(
            res.to_evidence(likelihood=likelihood, reflect=reflect),
            delta=1e-5,
            seed=seed,
            progress=False,
            max_time=max_time,
        )
    e = post.draws("eps").ravel()
    diag = post.diagnostics()
    return {
        "pad": n_pad,
        "q": np.quantile(e, [0.05, 0.5, 0.95]),
        "converged": bool(post.settings.get("converged")),
        "stop": post.settings.get("stop_reason"),
        "r_hat": max(d["r_hat"] for d in diag.values()),
        "ess": min(min(d["ess_bulk"], d["ess_tail"]) for d in diag.values()),
        "p_small": float(np.mean(e < 0.01)),
        "seconds": time.perf_counter() - t0,
        "post": post,
    }
