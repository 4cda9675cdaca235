"""A real LiRA score matrix from trained models: digits with canaries (issue 32, "A real run").

Shared by ``benchmarks/lira_real_claim.py`` (the full run, figures in ``docs/validation/lira.md``,
"A real
run: digits with canaries") and ``tests/statistical/test_lira_real_claim.py`` (a reduced run).

The design: scikit-learn's digits (or its first ``n_targets`` rows), a fixed number of labels
(``round(canary_rate * n)``, drawn at random) flipped to another class as canaries, and every
model trained on an independent random half (each target in each model's training set
independently with probability 1/2: LiRA's and Privacy Meter's design, under which the one-run
bound applies). The score of a target under a model is LiRA's logit confidence
(:func:`mia.lira_logit` of its cross-entropy loss under the model's (possibly flipped) label).
Models are ``mia.MLP`` (128 ReLU units, SGD with momentum; with ``mia.DPSGD`` for DP-SGD).
"""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path

import numpy as np

ALGORITHMS = ("mlp", "dpsgd")
#: What the analysis runs on: all targets, the canaries alone, the others alone.
SUBSETS = ("all", "canaries", "others", "declared")


def design(n_models: int, n_targets: int | None, canary_rate: float, seed: int):
    """Return ``(X, y, canary, keep)``: digits with flipped labels and the training halves.

    ``y`` holds the labels the models see (canaries flipped to a uniformly drawn other class);
    ``keep[m, t]`` is True when model ``m`` trains on target ``t``. All from ``seed``.
    """
    import mia

    X, y = mia.load_digits()
    if n_targets is not None:
        X, y = X[:n_targets], y[:n_targets]
    n = y.size
    rng = np.random.default_rng(seed)
    canary = np.zeros(n, dtype=bool)
    canary[rng.choice(n, int(round(canary_rate * n)), replace=False)] = True
    y = np.where(canary, (y + rng.integers(1, 10, n)) % 10, y)
    keep = rng.random((n_models, n)) < 0.5
    return X, y, canary, keep


def algorithm(name: str, epochs: int, learning_rate: float, noise_multiplier: float):
    """Return the ``mia.MLP`` of ``name`` ("mlp" or "dpsgd"; random initialisation)."""
    import mia

    if name not in ALGORITHMS:
        raise ValueError(f"`name` must be one of {ALGORITHMS}; found {name!r}")
    dp = mia.DPSGD(noise_multiplier=noise_multiplier, clip_norm=1.0) if name == "dpsgd" else None
    return mia.MLP(init="random", epochs=epochs, learning_rate=learning_rate, dp=dp)


def accountant_eps(algo, keep: np.ndarray, delta: float, accountant: str = "pld"):
    """Return the smallest and largest accountant eps over the models (``algo.epsilon``).

    Model ``m`` trains on ``keep[m].sum()`` examples; its eps is that of DP-SGD on a data set
    of that size plus one (the larger neighbour, as ``algo.epsilon`` asks), so the smallest eps
    is the one of the largest training set.
    """
    logging.getLogger("absl").setLevel(logging.ERROR)
    sizes = np.unique(keep.sum(axis=1))
    eps = [algo.epsilon(delta, int(k) + 1, accountant=accountant) for k in (sizes[-1], sizes[0])]
    return float(eps[0]), float(eps[1])


def train_scores(algo, X, y, keep, seed: int, path: str | Path | None = None, meta=None):
    """Train one model per row of ``keep`` and return the score matrix (models x targets).

    Model ``m`` draws from ``np.random.default_rng([seed, m])`` whatever else is trained. With
    ``path``, the matrix is stored there (``.npz``: ``scores``, ``keep``, ``done`` and the arrays
    of ``meta``) every 8 models and at the end, and a stored file with the same ``keep`` and
    ``meta`` resumes: only the models not done are trained.
    """
    import mia

    n_models, n = keep.shape
    scores = np.full((n_models, n), np.nan)
    done = np.zeros(n_models, dtype=bool)
    meta = {} if meta is None else {k: np.asarray(v) for k, v in meta.items()}
    path = None if path is None else Path(path)
    if path is not None and path.is_file():
        with np.load(path) as f:
            same = np.array_equal(f["keep"], keep) and all(
                k in f and np.array_equal(f[k], v) for k, v in meta.items()
            )
            if same:
                scores, done = f["scores"].copy(), f["done"].copy()

    def save():
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npz")
            np.savez(tmp, scores=scores, keep=keep, done=done, **meta)
            tmp.replace(path)

    t0 = time.perf_counter()
    todo = np.flatnonzero(~done)
    for i, m in enumerate(todo):
        rng = np.random.default_rng([seed, int(m)])
        loss = algo.fit_losses(X[keep[m]], y[keep[m]], X, y, [rng])[0]
        scores[m] = mia.lira_logit(loss)
        done[m] = True
        if (i + 1) % 8 == 0:
            save()
    save()
    return scores, {"trained": int(todo.size), "seconds": time.perf_counter() - t0}


def _bound_rows(res, delta: float, prob: float, share: float = 1.0):
    """Every counted target's own Clopper-Pearson bound on effective counts (the claim's: the
    decisions read as made, ``reflect=False``, at the claim's share of the error)."""
    from bayes_dp.core.region import clopper_pearson_target_bounds

    c, dep = res.counts, res.dependence
    f_fp = max(float(dep.fp_design_effect or 1.0), 1.0)
    f_fn = max(float(dep.fn_design_effect or 1.0), 1.0)
    return clopper_pearson_target_bounds(
        c.fp,
        c.n_neg,
        c.fn,
        c.n_pos,
        delta,
        prob,
        n_rates=2 * len(c.fp),
        fp_design_effect=f_fp,
        fn_design_effect=f_fn,
        reflect=False,
        share=share,
    )


def run_fields(post, claim, seconds: float) -> dict:
    """The fields every audit's record shares: the posterior's 5/50/95% quantiles of eps, how
    the run ended, its time and length, and the claim's ends and their sources."""
    st = post.settings
    return {
        "eps_q": [float(v) for v in post.quantile([0.05, 0.5, 0.95], "eps")],
        "converged": post.converged,
        "stop_reason": st.get("stop_reason"),
        "minor_mode": st.get("minor_mode") is not None,
        "mode_restart": st.get("mode_restart"),
        "seconds": seconds,
        "draws": post.n_draws,
        "lower": float(claim.lower),
        "upper": float(claim.upper),
        "frequentist_lower": claim.frequentist_lower,
        "posterior_lower": claim.posterior_lower,
        "upper_source": claim.upper_source,
    }


def analyse(
    scores,
    keep,
    canary,
    *,
    subset: str = "all",
    alpha: float = 0.1,
    delta: float = 1e-5,
    seed: int = 0,
    draws: int | None = None,
    tune: int | None = None,
    chains: int = 4,
    max_time: float | None = None,
    cores: int | None = None,
    likelihood: str | None = None,
    reflect: bool = True,
) -> dict:
    """The default audit of one subset of the targets, as ``bayes-dp estimate`` runs it.

    The columns of ``subset`` form a score matrix of their own (``"all"``, ``"canaries"`` or
    ``"others"``; ``"declared"``: all targets, the canaries declared in advance,
    ``to_evidence(focus=...)``); ``mia.counts_from_score_matrix`` (online test at ``alpha``,
    ``skip=True``), its ``to_evidence()`` at defaults and ``bdp.estimate_epsilon`` with the CLI's
    arguments (``check=False``; ``draws``, ``tune``, ``max_time`` None: the defaults), then
    ``bdp.audit_claim`` at 95%. ``likelihood`` (None: ``to_evidence()``'s default) is passed to
    ``to_evidence``, to compare another model on the same matrix; ``reflect=False`` reads the
    decisions as made (``to_evidence(reflect=False)``). Returns a dict of figures (see the
    benchmark's printout); target ids are columns of the full matrix.
    """
    import bayes_dp as bdp
    import mia

    if subset not in SUBSETS:
        raise ValueError(f"`subset` must be one of {SUBSETS}; found {subset!r}")
    cols = {
        "all": np.arange(canary.size),
        "declared": np.arange(canary.size),
        "canaries": np.flatnonzero(canary),
        "others": np.flatnonzero(~canary),
    }[subset]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DependenceWarning: recorded in `dependence` below
        res = mia.counts_from_score_matrix(scores[:, cols], keep[:, cols], alpha, skip=True)
    kw = {} if likelihood is None else {"likelihood": likelihood}
    if not reflect:
        kw["reflect"] = False
    if subset == "declared":
        kw["focus"] = np.flatnonzero(canary[cols])
    ev = res.to_evidence(name="lira", **kw)
    t0 = time.perf_counter()
    post = bdp.estimate_epsilon(
        [ev],
        delta=delta,
        chains=chains,
        draws=draws,
        tune=tune,
        seed=seed,
        max_time=max_time,
        cores=cores,
        check=False,
    )
    seconds = time.perf_counter() - t0
    claim = bdp.audit_claim(post)
    fb = claim.frequentist or {}
    kept = cols[res.targets]  # full-matrix column of each counted row
    if subset == "declared":  # the claim's own bounds: the canaries at their laxer level
        n_positive = int(fb["n_positive"])
        n_positive_canaries = int(fb["focus"]["n_positive"])
    else:
        share = fb.get("per_target_share", 1.0)
        positive = kept[_bound_rows(res, delta, claim.prob, share) > 0]
        n_positive, n_positive_canaries = int(positive.size), int(canary[positive].sum())
    top = [
        {
            "target": int(cols[t["target"]]) if t["target"] is not None else None,
            "lower": float(t["lower"]),
            "canary": bool(canary[cols[t["target"]]]) if t["target"] is not None else None,
        }
        for t in fb.get("top_targets", [])
    ]
    return {
        "subset": subset,
        "likelihood": ev.likelihood,
        "n_targets": int(cols.size),
        "n_counted": len(res.counts),
        "n_canaries": int(canary[kept].sum()),
        **run_fields(post, claim, seconds),
        "ceiling": fb.get("ceiling"),
        "n_positive": n_positive,
        "n_positive_canaries": n_positive_canaries,
        "bound_target": int(cols[fb["target"]]) if fb.get("target") is not None else None,
        "top_targets": top,
        "design_effects": (res.dependence.fp_design_effect, res.dependence.fn_design_effect),
        "info_ratio": res.dependence.info_ratio,
        "fp": int(res.counts.fp.sum()),
        "n_neg": int(res.counts.n_neg.sum()),
        "fn": int(res.counts.fn.sum()),
        "n_pos": int(res.counts.n_pos.sum()),
        "sentence": claim.sentence,
    }
