"""Score matrices of mechanisms with exactly known eps, and the exact error rates of a fitted test.

Shared by ``benchmarks/pooled_validity.py`` and ``tests/statistical/test_pooled_bound.py``
(``docs/pooled_bound.md``). A configuration is a dict with

* ``mech``: ``"laplace"`` (IN score ``Laplace(0, 1) + eps0``, OUT ``Laplace(0, 1)``; ``param``
  is ``eps0``), ``"gauss"`` (``N(mu, 1)`` against ``N(0, 1)``; ``param`` is ``mu``; ``mu = 0``
  is eps = 0), ``"rr"`` (randomized response: the score is a bit, 1 with probability
  ``e^eps / (1 + e^eps)`` IN and ``1 / (1 + e^eps)`` OUT, plus ``N(0, jitter^2)`` so that the
  reference fits have spread; ``param`` is ``eps``) or ``"hetero"`` (Gaussian, every target its
  own ``mu_t``, log-normal with median ``param`` and log-sd ``HETERO_LOG_SD``; the truth is the
  largest target's eps) or ``"few"`` (Gaussian, ``exposed`` targets at random positions with
  ``mu_t ~ U(FEW_MU)``, every other target ``mu_t = 0``; ``param`` is not used; the truth is the
  largest target's eps);
* ``exposed`` (optional): for ``"few"`` the number of exposed targets (default
  ``FEW_EXPOSED``); for ``"laplace"`` and ``"gauss"``, only that many targets (at random
  positions) get ``param``, the others 0 (the truth stays ``param``'s);
* ``shift``: sd of a per-model shift added to all of that model's scores;
* ``design``: ``"balanced"`` (every target IN for exactly half of the models,
  :func:`mia.simulate_score_matrix`) or ``"independent"`` (every model-target pair IN with
  probability 1/2);
* ``models``, ``targets``, ``alpha``.

Every score's distribution is known in closed form (a per-model shift makes it a convolution:
Laplace + normal has the closed-form CDF of :func:`laplace_normal_cdf`; the others stay normal
or a mixture of two normals), so each target's false-positive and false-negative rate of the
test fitted on the reference half is computed exactly (:func:`true_rates`), no Monte Carlo.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri
from scipy.stats import ncx2

#: Log-sd of the heterogeneous exposures ``mu_t`` (log-normal around the configuration's median).
HETERO_LOG_SD = 1.0
#: Range of the exposed targets' ``mu_t`` in ``"few"`` (uniform).
FEW_MU = (2.0, 4.0)
#: Exposed targets of ``"few"`` when the configuration does not say.
FEW_EXPOSED = 10
#: sd of the noise added to randomized response's bits (the fits need spread).
RR_JITTER = 0.05
#: Far enough to stand for an infinite region end in every CDF here.
_BIG = 1e6


def truth_eps(cfg, delta, mu_t=None):
    """The mechanism's exact eps at ``delta`` (a per-model shift is post-processing per model,
    and the other targets' scores can reveal it, so the shift-free mechanism's eps is the truth).
    """
    from mia.canary import gaussian_mechanism_epsilon

    mech, p = cfg["mech"], float(cfg["param"])
    if mech == "laplace":
        return p + 2.0 * np.log1p(-delta)
    if mech == "gauss":
        return 0.0 if p == 0 else float(gaussian_mechanism_epsilon(1.0, delta, sensitivity=p))
    if mech in ("hetero", "few"):
        return float(gaussian_mechanism_epsilon(1.0, delta, sensitivity=float(np.max(mu_t))))
    if mech == "rr":
        # delta(eps') = P(1 | IN) - e^eps' P(1 | OUT) for eps' < eps
        pin, pout = np.exp(p) / (1.0 + np.exp(p)), 1.0 / (1.0 + np.exp(p))
        return float(np.log((pin - delta) / pout))
    raise ValueError(f"unknown mechanism {mech!r}")


def simulate(cfg, rng):
    """One score matrix of ``cfg``: ``(scores, keep, mu_t)`` (``mu_t`` the targets' IN shift)."""
    import mia

    n, t = int(cfg["models"]), int(cfg["targets"])
    if cfg["design"] == "balanced":
        _, keep = mia.simulate_score_matrix(n, t, 0.0, seed=rng)
    elif cfg["design"] == "independent":
        keep = rng.random((n, t)) < 0.5
    else:
        raise ValueError(f"unknown design {cfg['design']!r}")
    mech, p = cfg["mech"], float(cfg["param"])
    if mech == "hetero":
        mu_t = np.exp(np.log(p) + HETERO_LOG_SD * rng.standard_normal(t))
    elif mech == "few":
        mu_t = np.zeros(t)
        where = rng.choice(t, int(cfg.get("exposed", FEW_EXPOSED)), replace=False)
        mu_t[where] = rng.uniform(*FEW_MU, where.size)
    else:
        mu_t = np.full(t, p)
        if cfg.get("exposed") is not None:
            if mech not in ("laplace", "gauss"):
                raise ValueError(f"`exposed` applies to laplace, gauss and few; found {mech!r}")
            mu_t[np.setdiff1d(np.arange(t), rng.choice(t, int(cfg["exposed"]), replace=False))] = 0
    if mech == "laplace":
        x = rng.laplace(0.0, 1.0, (n, t)) + keep * mu_t
    elif mech in ("gauss", "hetero", "few"):
        x = rng.standard_normal((n, t)) + keep * mu_t
    elif mech == "rr":
        pin = np.exp(p) / (1.0 + np.exp(p))
        prob = np.where(keep, pin, 1.0 - pin)
        x = (rng.random((n, t)) < prob) + RR_JITTER * rng.standard_normal((n, t))
    else:
        raise ValueError(f"unknown mechanism {mech!r}")
    x = x + float(cfg["shift"]) * rng.standard_normal((n, 1))
    return x, keep, mu_t


def laplace_normal_cdf(x, s):
    """CDF of ``Laplace(0, 1) + N(0, s^2)`` at ``x`` (``s > 0``).

    ``F(x) = Phi(x/s) - e^(s^2/2 - x) Phi(x/s - s) / 2 + e^(s^2/2 + x) Phi(-x/s - s) / 2``
    (integrate the Laplace CDF against the normal density), the exponentials taken in logs.
    """
    x = np.clip(np.asarray(x, dtype=np.float64), -_BIG, _BIG)
    h = 0.5 * s * s
    return (
        ndtr(x / s)
        - 0.5 * np.exp(h - x + log_ndtr(x / s - s))
        + 0.5 * np.exp(h + x + log_ndtr(-x / s - s))
    )


def _cdfs(cfg, mu_t):
    """``(cdf_out, cdf_in)``: functions of an array of scores (one per target) -> probabilities."""
    mech, s = cfg["mech"], float(cfg["shift"])
    if mech == "laplace":
        if s == 0:

            def base(x):
                x = np.asarray(x, dtype=np.float64)
                return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0)), 1 - 0.5 * np.exp(-np.abs(x)))
        else:

            def base(x):
                return laplace_normal_cdf(x, s)

        return base, (lambda x: base(np.asarray(x) - mu_t))
    if mech in ("gauss", "hetero", "few"):
        sd = np.sqrt(1.0 + s * s)
        return (lambda x: ndtr(np.asarray(x) / sd)), (lambda x: ndtr((np.asarray(x) - mu_t) / sd))
    if mech == "rr":
        sd = np.sqrt(RR_JITTER**2 + s * s)
        pin = np.exp(cfg["param"]) / (1.0 + np.exp(cfg["param"]))

        def mix(p1):
            return lambda x: (
                p1 * ndtr((np.asarray(x) - 1.0) / sd) + (1 - p1) * ndtr(np.asarray(x) / sd)
            )

        return mix(1.0 - pin), mix(pin)
    raise ValueError(f"unknown mechanism {mech!r}")


def decision_region(m0, sd0, m1, sd1, alpha):
    """The "member" set of :func:`mia.lira._decide` per target, as two closed intervals.

    Returns ``(a1, b1, a2, b2)`` (arrays; the set is ``[a1, b1] U [a2, b2]``, an empty interval
    has ``a = b``; infinite ends are +-``_BIG``). Mirrors ``_decide``'s geometry: equal variances
    reject on the side of ``mu1``; ``sd1 < sd0`` decides "member" inside an interval around
    ``c``, ``sd1 > sd0`` outside it (checked against ``_decide`` by the callers).
    """
    from mia.lira import _C_ASYMPTOTIC

    m0, sd0, m1, sd1 = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (m0, sd0, m1, sd1))
    )
    t = m0.shape[0]
    a1 = np.zeros(t)
    b1 = np.zeros(t)
    a2 = np.zeros(t)
    b2 = np.zeros(t)
    d = sd1 * sd1 - sd0 * sd0
    eq = d == 0
    up = eq & (m1 > m0)
    down = eq & (m1 < m0)
    a1[up] = m0[up] + sd0[up] * ndtri(1.0 - alpha)
    b1[up] = _BIG
    a1[down] = -_BIG
    b1[down] = m0[down] + sd0[down] * ndtri(alpha)
    neq = ~eq
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(neq, (m0 - m1) * sd0 / d, 0.0)
    big = np.abs(c) >= _C_ASYMPTOTIC
    narrow = neq & (d < 0)
    wide = neq & (d > 0)
    r = np.zeros(t)
    for mask, q, sign in ((narrow, alpha, 1.0), (wide, 1.0 - alpha, -1.0)):
        m = mask & ~big
        if m.any():
            r[m] = np.sqrt(ncx2.ppf(q, 1, c[m] ** 2))
        m = mask & big
        r[m] = np.abs(c[m]) + sign * ndtri(alpha)
    lo = m0 + sd0 * (c - r)
    hi = m0 + sd0 * (c + r)
    a1[narrow], b1[narrow] = lo[narrow], hi[narrow]
    a1[wide], b1[wide] = -_BIG, lo[wide]
    a2[wide], b2[wide] = hi[wide], _BIG
    return a1, b1, a2, b2


def in_region(x, region):
    """Whether each score of ``x`` (shape ``(m, t)``) lies in the targets' ``region``."""
    a1, b1, a2, b2 = region
    return ((x >= a1) & (x <= b1) & (a1 < b1)) | ((x >= a2) & (x <= b2) & (a2 < b2))


def true_rates(cfg, mu_t, fit, alpha):
    """Each target's exact FP and FN rate of the test fitted as ``fit`` (``_fit_reference``'s
    ``(m0, sd0, m1, sd1, ok)``): ``(fpr_t, fnr_t, region)`` over all targets (``ok`` selects).
    """
    m0, sd0, m1, sd1, _ = fit
    region = decision_region(m0, sd0, m1, sd1, alpha)
    a1, b1, a2, b2 = region
    f_out, f_in = _cdfs(cfg, mu_t)

    def prob(f):
        p1 = np.where(a1 < b1, f(b1) - f(a1), 0.0)
        p2 = np.where(a2 < b2, f(b2) - f(a2), 0.0)
        return np.clip(p1 + p2, 0.0, 1.0)

    return prob(f_out), 1.0 - prob(f_in), region


def audit(cfg, rng, delta, confidence=0.95, intervals=("betting", "t")):
    """One audit of ``cfg``: the pooled bound per interval, the truth and the exact mean rates.

    Returns a dict: ``truth``, ``point`` (eps of the per-model mean rates), ``fpr_true``,
    ``fnr_true`` (mean over the fitted targets of their exact rates), ``fpr_true_w``,
    ``fnr_true_w`` (the same weighted by each target's chance to be OUT / IN in a test model
    given the reference half: the expected per-model rate; equal weights in the independent
    design; ``point_true_w`` is the eps of that weighted point: above the truth where the FP
    and FN weights differ enough, since the point is then no mixture of the targets' points),
    ``mismatch`` (test decisions where the exact region and ``_decide`` disagree;
    must be 0), and per interval ``eps``, ``fpr_upper``, ``fnr_upper``.

    The bound over the most exposed targets (the claim's second pooled candidate, chosen on the
    reference half: :func:`_selected`) adds ``sel_<interval>`` (``eps``, ``fpr_upper``,
    ``fnr_upper``; only with 2 or more test models that have an OUT and an IN selected target),
    ``sel_n_test``, ``sel_n_targets``, ``sel_recorded`` (whether ``ScoreMatrixCounts`` would
    record it), ``sel_mismatch`` (must be 0), the exact mean rates over the selected targets
    ``sel_fpr_true`` / ``sel_fnr_true`` (plain), ``sel_fpr_true_w`` / ``sel_fnr_true_w``
    (weighted as above) and ``sel_fpr_true_e`` / ``sel_fnr_true_e`` (the exact expected
    per-model rates, :func:`expected_model_rates`), ``sel_point_true`` (eps of the latter),
    ``sel_point`` (eps of the per-model mean rates) and ``sel_exposure_min``.
    """
    import mia
    from bayes_dp.core.pooled_bound import pooled_rates_epsilon_bound
    from bayes_dp.core.region import _eps_lower
    from mia.bounds import _fit_reference

    x, keep, mu_t = simulate(cfg, rng)
    alpha = float(cfg["alpha"])
    split_seed = int(rng.integers(2**63 - 1))
    r = mia.pooled_model_rates(x, keep, alpha=alpha, seed=split_seed)
    ref = np.asarray(r["reference_models"])
    test = np.setdiff1d(np.arange(x.shape[0]), ref)
    fit = _fit_reference(x[ref], keep[ref], "online", False, "auto")
    ok = fit[4]
    fpr_t, fnr_t, region = true_rates(cfg, mu_t, fit, alpha)
    # the exact region decides the test models' scores as _decide did
    dec = in_region(x[test], region) & ok
    kt = keep[test][:, ok]
    dt = dec[:, ok]
    n_out = (~kt).sum(axis=1)
    n_in = kt.sum(axis=1)
    use = (n_out > 0) & (n_in > 0)
    fpr_m = (dt & ~kt).sum(axis=1)[use] / n_out[use]
    fnr_m = (~dt & kt).sum(axis=1)[use] / n_in[use]
    mismatch = int(np.abs(fpr_m - np.asarray(r["fpr"])).max() > 0) + int(
        np.abs(fnr_m - np.asarray(r["fnr"])).max() > 0
    )
    # chance of a target to be IN in a test model given the reference half
    p_in = keep[test].mean(axis=0)[ok] if cfg["design"] == "balanced" else np.full(ok.sum(), 0.5)
    out = {
        "truth": truth_eps(cfg, delta, mu_t),
        "point": float(_eps_lower(np.mean(r["fpr"]), np.mean(r["fnr"]), delta)),
        "fpr_true": float(fpr_t[ok].mean()),
        "fnr_true": float(fnr_t[ok].mean()),
        "fpr_true_w": float(np.sum((1 - p_in) * fpr_t[ok]) / np.sum(1 - p_in)),
        "fnr_true_w": float(np.sum(p_in * fnr_t[ok]) / np.sum(p_in)),
        "point_true_w": 0.0,
        "mismatch": mismatch,
        "n_test": len(r["fpr"]),
        "n_targets": r["n_targets"],
    }
    for iv in intervals:
        b = pooled_rates_epsilon_bound(r["fpr"], r["fnr"], delta, confidence, iv)
        out[iv] = {"eps": b["eps"], "fpr_upper": b["fpr_upper"], "fnr_upper": b["fnr_upper"]}
    out["point_true_w"] = float(_eps_lower(out["fpr_true_w"], out["fnr_true_w"], delta))
    sel = _selected(r, x, keep, ref, ok, dt, kt, p_in, fpr_t[ok], fnr_t[ok], delta)
    rates = sel.pop("rates")
    out.update(sel)
    for iv in intervals if out["sel_n_test"] >= 2 else ():
        b = pooled_rates_epsilon_bound(*rates, delta, confidence, iv)
        out["sel_" + iv] = {
            "eps": b["eps"],
            "fpr_upper": b["fpr_upper"],
            "fnr_upper": b["fnr_upper"],
        }
    return out


def expected_model_rates(f, g, p_in):
    """Exact expected per-model FP and FN rate over a few targets (enumeration of memberships).

    A test model is IN on target ``t`` with probability ``p_in[t]``, independently across
    targets (both designs: in the balanced one, given the reference half, each target's test-half
    IN set is a uniform subset of a fixed size, drawn independently per target); its FP rate is
    the mean of ``f`` over its OUT targets, its FN rate the mean of ``g`` over its IN targets,
    and models without an OUT or an IN target are left out (as ``mia.bounds.model_rates`` does).
    Returns ``(E fpr, E fnr)`` given that the model is used: the means the betting bounds of the
    per-model rates bound. Its FP and FN weights differ when the ``p_in`` do, so the point is
    not always a mixture of the targets' points.
    """
    f, g, p = (np.asarray(v, dtype=np.float64) for v in (f, g, p_in))
    n = f.size
    pats = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)
    prob = np.prod(np.where(pats, p, 1.0 - p), axis=1)
    n_in = pats.sum(axis=1)
    use = (n_in > 0) & (n_in < n) & (prob > 0)
    if not use.any():
        return float("nan"), float("nan")
    w = prob[use] / prob[use].sum()
    fp = (~pats[use] * f).sum(axis=1) / (n - n_in[use])
    fn = (pats[use] * g).sum(axis=1) / n_in[use]
    return float(w @ fp), float(w @ fn)


def _selected(r, x, keep, ref, ok, dt, kt, p_in, f_ok, g_ok, delta):
    """The bound over the most exposed targets: selection and rates as the library records them.

    The selection is :func:`mia.bounds.select_exposed` of the reference half's
    :func:`mia.bounds.reference_exposure` (recomputed here and compared with the record of
    ``pooled_model_rates``); the per-model rates are :func:`mia.bounds.model_rates` over the
    selected columns (compared with those of the exact regions' decisions). Returns the
    ``sel_*`` keys of :func:`audit` and ``rates`` (the per-model FP and FN rates).
    """
    from bayes_dp.core.region import _eps_lower
    from mia.bounds import POOLED_SELECTED, model_rates, reference_exposure, select_exposed

    expo = reference_exposure(x[ref], keep[ref], "online", "auto")[ok]
    mismatch = int(not np.array_equal(expo, np.asarray(r["exposure"])))
    sel = select_exposed(expo, POOLED_SELECTED)
    fpr, fnr, used = model_rates(r["decisions"], r["keep"], sel)
    f_x, g_x, used_x = model_rates(dt, kt, sel)
    mismatch += int(
        not (np.array_equal(used, used_x) and np.array_equal(fpr, f_x) and np.array_equal(fnr, g_x))
    )
    f_s, g_s, p_s = f_ok[sel], g_ok[sel], p_in[sel]
    fe, ge = expected_model_rates(f_s, g_s, p_s)
    return {
        "sel_mismatch": mismatch,
        "sel_n_test": int(used.sum()),
        "sel_n_targets": int(sel.size),
        "sel_recorded": bool(ok.sum() > POOLED_SELECTED and sel.size and used.sum() >= 2),
        "sel_fpr_true": float(f_s.mean()),
        "sel_fnr_true": float(g_s.mean()),
        "sel_fpr_true_w": float(np.sum((1 - p_s) * f_s) / np.sum(1 - p_s)),
        "sel_fnr_true_w": float(np.sum(p_s * g_s) / np.sum(p_s)),
        "sel_fpr_true_e": fe,
        "sel_fnr_true_e": ge,
        # eps of the exact expected point: where the bound is aimed (above the truth: the
        # per-model weighting alone would make it accuse as the test models grow)
        "sel_point_true": float(_eps_lower(fe, ge, delta)) if np.isfinite(fe) else 0.0,
        "sel_point": float(_eps_lower(fpr.mean(), fnr.mean(), delta)) if used.sum() else 0.0,
        "sel_exposure_min": float(expo[sel].min()) if sel.size else float("nan"),
        "rates": (fpr, fnr),
    }


def selected_rates_by_hand(scores, keep, rates, k=8):
    """The rates over the ``k`` targets most exposed on the reference half, worked out here.

    ``rates``: :func:`mia.pooled_model_rates` of ``scores``, ``keep``. Exposure: the absolute
    Welch t of scipy's ``ttest_ind`` of each fitted target's IN against OUT reference scores;
    per test model with an OUT and an IN chosen target, its FP and FN rate over them. Returns
    ``(top, fpr, fnr)`` (``top``: indices into ``rates["columns"]``).
    """
    from scipy import stats

    ref = rates["reference_models"]
    xr, kr = scores[ref][:, rates["columns"]], keep[ref][:, rates["columns"]]
    t = [
        abs(stats.ttest_ind(xr[kr[:, j], j], xr[~kr[:, j], j], equal_var=False).statistic)
        for j in range(xr.shape[1])
    ]
    top = np.argsort(-np.asarray(t), kind="stable")[:k]
    dt, kt = rates["decisions"][:, top], rates["keep"][:, top]
    use = (~kt).any(axis=1) & kt.any(axis=1)
    fpr = (dt & ~kt).sum(axis=1)[use] / (~kt).sum(axis=1)[use]
    fnr = (~dt & kt).sum(axis=1)[use] / kt.sum(axis=1)[use]
    return top, fpr, fnr
