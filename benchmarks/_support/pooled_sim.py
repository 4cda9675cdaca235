"""Score matrices of mechanisms with exactly known eps, and the exact error rates of a fitted test.

Shared by ``benchmarks/pooled_validity.py`` and ``tests/statistical/test_pooled_bound.py``
(``docs/validation/pooled_bound.md``). A configuration is a dict with

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
    """The "member" set of :func:`mia.lira.decide` per target, as two closed intervals.

    Returns ``(a1, b1, a2, b2)`` (arrays; the set is ``[a1, b1] U [a2, b2]``, an empty interval
    has ``a = b``; infinite ends are +-``_BIG``). Mirrors ``decide``'s geometry: equal variances
    reject on the side of ``mu1``; ``sd1 < sd0`` decides "member" inside an interval around
    ``c``, ``sd1 > sd0`` outside it (checked against ``decide`` by the callers).
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
    """Each target's exact FP and FN rate of the test fitted as ``fit`` (``fit_reference``'s
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
    """One audit of ``cfg``: the pooled bounds, the truth, the exact mean rates, the old bound.

    Returns a dict:

    * ``truth``; ``point`` (eps of the means of the per-model rates, no interval);
      ``fpr_true``, ``fnr_true`` (mean over the fitted targets of their exact rates: a mixture of
      the targets' points, in R(truth));
    * ``mismatch``: test decisions where the exact region and ``mia.lira.decide`` disagree,
      plus 1 where :func:`mia.model_rates.model_rates` of the exact regions' decisions (with the
      record's ``coin_seed``) differs from the record's rates; must be 0;
    * per interval (``"betting"``, ``"t"``) ``eps``, ``fpr_upper``, ``fnr_upper``; for
      ``"betting"`` also ``rej_fp`` / ``rej_fn``: whether the test of the lower constraint
      ``FP + e^eps FN >= 1 - delta`` (``FN + e^eps FP``) rejected the first grid point at or
      above the truth, an event of probability at most its error (2.5% at confidence 0.95)
      whatever the models' drift (:func:`constraint_rejects`);
    * ``old``: the bound of the plain per-model rates (a model's FP rate over all its OUT
      targets, FN over all its IN targets, :func:`plain_model_rates`) with the betting upper
      bounds of their two means (a box), the method before the coins; ``old_point``: eps of
      those rates' means; ``old_point_true_w``: eps of their expected point given the
      reference half (each target's FP weighted by its chance to be OUT in a test model, FN by
      its chance to be IN; equal weights in the independent design): what the old bound aimed
      at, above the truth where the weights differ enough (the balanced design's gap).

    With ``cfg["attack"] == "blind"`` the test models' decisions are replaced by the
    data-blind attack of the balanced design: "member" for a target in every test model iff its
    IN count in the reference half is below half the reference models (then it is IN in more
    than half of the test models). Its exact rates are ``FPR_t = d_t``, ``FNR_t = 1 - d_t``
    (the point on FPR + FNR = 1: eps 0 whatever the mechanism; ``truth`` is 0).

    The bound over the most exposed targets (the claim's second pooled candidate, chosen on the
    reference half: :func:`_selected`) adds ``sel_<interval>`` and ``sel_old`` (as above; only
    with 2 or more used test models), ``sel_n_test``, ``sel_n_targets``, ``sel_recorded``
    (whether ``ScoreMatrixCounts`` would record it), ``sel_mismatch`` (must be 0), the exact
    mean rates over the selected targets ``sel_fpr_true`` / ``sel_fnr_true``, ``sel_point``
    (eps of the per-model rates' means), ``old_sel_point_true`` (eps of the plain rates' exact
    expected point, :func:`expected_model_rates`) and ``sel_exposure_min``.
    """
    import mia
    from bayes_dp.core.region import _eps_lower
    from mia.model_rates import model_rates
    from mia.selection import fit_reference

    x, keep, mu_t = simulate(cfg, rng)
    alpha = float(cfg["alpha"])
    split_seed = int(rng.integers(2**63 - 1))
    r = mia.pooled_model_rates(x, keep, alpha=alpha, seed=split_seed)
    ref = np.asarray(r["reference_models"])
    test = np.setdiff1d(np.arange(x.shape[0]), ref)
    fit = fit_reference(x[ref], keep[ref], "online", False, "auto")
    ok = fit[4]
    fpr_t, fnr_t, region = true_rates(cfg, mu_t, fit, alpha)
    # the exact region decides the test models' scores as decide did
    dt = in_region(x[test], region)[:, ok]
    kt = keep[test][:, ok]
    mismatch = int(np.sum(dt != r["decisions"])) + int(not np.array_equal(kt, r["keep"]))
    fpr, fnr, _ = model_rates(dt, kt, seed=r["coin_seed"])
    mismatch += int(not (np.array_equal(fpr, r["fpr"]) and np.array_equal(fnr, r["fnr"])))
    truth = truth_eps(cfg, delta, mu_t)
    f_ok, g_ok = fpr_t[ok], fnr_t[ok]
    attack = cfg.get("attack")
    if attack == "blind":
        d = keep[ref][:, ok].sum(axis=0) < ref.size / 2
        dt = np.broadcast_to(d, kt.shape).copy()
        fpr, fnr, _ = model_rates(dt, kt, seed=r["coin_seed"])
        f_ok, g_ok, truth = d.astype(float), 1.0 - d, 0.0
    elif attack is not None:
        raise ValueError(f"unknown attack {attack!r}")
    # chance of a target to be IN in a test model given the reference half
    p_in = kt.mean(axis=0) if cfg["design"] == "balanced" else np.full(kt.shape[1], 0.5)
    f_w = np.sum((1 - p_in) * f_ok) / np.sum(1 - p_in)
    g_w = np.sum(p_in * g_ok) / np.sum(p_in)
    out = {
        "truth": truth,
        "point": float(_eps_lower(np.mean(fpr), np.mean(fnr), delta)),
        "fpr_true": float(f_ok.mean()),
        "fnr_true": float(g_ok.mean()),
        "mismatch": mismatch,
        "n_test": len(fpr),
        "n_targets": r["n_targets"],
        "old_point_true_w": float(_eps_lower(f_w, g_w, delta)),
    }
    horizon = kt.shape[0]  # every test model: the bets' horizon, fixed in advance
    out.update(_bounds(fpr, fnr, truth, delta, confidence, intervals, horizon))
    f_o, g_o = plain_model_rates(dt, kt)
    out["old"] = {"eps": old_bound(f_o, g_o, delta, confidence)}
    out["old_point"] = float(_eps_lower(f_o.mean(), g_o.mean(), delta))
    sel = _selected(r, x, keep, ref, ok, dt, kt, p_in, f_ok, g_ok, delta, attack is None)
    rates = sel.pop("rates")
    old_rates = sel.pop("old_rates")
    out.update(sel)
    if out["sel_n_test"] >= 2:
        for k, v in _bounds(*rates, truth, delta, confidence, intervals, horizon).items():
            out["sel_" + k] = v
    if old_rates[0].size >= 2:
        out["sel_old"] = {"eps": old_bound(*old_rates, delta, confidence)}
    return out


def _bounds(fpr, fnr, truth, delta, confidence, intervals, horizon):
    """``{interval: {eps, fpr_upper, fnr_upper[, rej_fp, rej_fn]}}`` of per-model rates."""
    from bayes_dp.core.pooled_bound import pooled_rates_epsilon_bound

    out = {}
    for iv in intervals:
        b = pooled_rates_epsilon_bound(fpr, fnr, delta, confidence, iv, horizon=horizon)
        out[iv] = {"eps": b["eps"], "fpr_upper": b["fpr_upper"], "fnr_upper": b["fnr_upper"]}
        if iv == "betting":
            err = (1.0 - confidence) / 2.0
            f, g = np.asarray(fpr, dtype=float), np.asarray(fnr, dtype=float)
            out[iv]["rej_fp"] = constraint_rejects(f, g, truth, delta, err, horizon)
            out[iv]["rej_fn"] = constraint_rejects(g, f, truth, delta, err, horizon)
    return out


def constraint_rejects(u, w, truth, delta, error, horizon=None):
    """Whether :func:`bayes_dp.core.pooled_bound.constraint_epsilon_bound`'s test of
    ``E[u_i + e^eps w_i | past] >= 1 - delta`` rejects the first grid point ``eps0 >= truth``.

    Under (truth, delta)-DP every model's conditional expected pair lies in R(truth, delta), a
    subset of R(eps0, delta), so the null of ``eps0`` is true and it is rejected with
    probability at most ``error`` (Ville): the guarantee the bound rests on, checked at the one
    point where it is sharpest. A bound above the truth implies a rejection here (the bound is a
    grid point up to which every point was rejected). Beyond the grid's end: False.
    """
    from bayes_dp.core.pooled_bound import GRID_MAX, GRID_STEP, _bets, _log_capital

    eps0 = np.ceil(truth / GRID_STEP - 1e-9) * GRID_STEP
    if eps0 >= GRID_MAX:
        return False
    e = np.exp(eps0)
    z = (u + e * w) / (1.0 + e)
    m = (1.0 - delta) / (1.0 + e)
    return bool(_log_capital(m, z, _bets(z, error, horizon)) >= np.log(1.0 / error))


def plain_model_rates(dt, kt, columns=None):
    """Per-model FP and FN rates without coins: a model's FP rate over all its OUT targets, FN
    over all its IN targets; models without an OUT or an IN target left out. Given the
    reference half a target's FP then weighs by its chance to be OUT in a test model and its FN
    by its chance to be IN (unequal in the balanced design: the expected pair may leave R).
    """
    if columns is not None:
        dt, kt = dt[:, columns], kt[:, columns]
    n_out = (~kt).sum(axis=1)
    n_in = kt.sum(axis=1)
    use = (n_out > 0) & (n_in > 0)
    return (dt & ~kt).sum(axis=1)[use] / n_out[use], (~dt & kt).sum(axis=1)[use] / n_in[use]


def old_bound(fpr, fnr, delta, confidence=0.95):
    """The box bound of the method before the coins: the betting upper bounds of the two mean
    rates (each at error ``(1 - confidence) / 2``), and the eps whose lower constraints pass
    through their point. Valid only when every model's expected pair is one common point of R.
    """
    from bayes_dp.core.pooled_bound import mean_upper_bound
    from bayes_dp.core.region import _eps_lower

    err = (1.0 - confidence) / 2.0
    return float(
        _eps_lower(mean_upper_bound(fpr, err, "betting"), mean_upper_bound(fnr, err), delta)
    )


def expected_model_rates(f, g, p_in):
    """Exact expected plain per-model FP and FN rate over a few targets (enumeration).

    For the rates without coins (:func:`plain_model_rates`). A test model is IN on target ``t``
    with probability ``p_in[t]``, independently across targets (both designs: in the balanced
    one, given the reference half, each target's test-half IN set is a uniform subset of a fixed
    size, drawn independently per target); its FP rate is the mean of ``f`` over its OUT
    targets, its FN rate the mean of ``g`` over its IN targets, and models without an OUT or an
    IN target are left out. Returns ``(E fpr, E fnr)`` given that the model is used. Its FP and
    FN weights differ when the ``p_in`` do, so the point is not always a mixture of the targets'
    points: the balanced design's gap that :func:`mia.model_rates.model_rates`' coins close.
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


def _selected(r, x, keep, ref, ok, dt, kt, p_in, f_ok, g_ok, delta, compare=True):
    """The bound over the most exposed targets: selection and rates as the library records them.

    The selection is :func:`mia.selection.select_exposed` of the reference half's
    :func:`mia.selection.reference_exposure` (recomputed here and compared with the record of
    ``pooled_model_rates``); the per-model rates are :func:`mia.model_rates.model_rates` over the
    selected columns with the record's ``coin_seed``, compared (``compare``: the decisions are
    the library's) with those of the record's decisions. Returns the ``sel_*`` keys of
    :func:`audit`, ``rates`` (the per-model FP and FN rates) and ``old_rates`` (the plain ones).
    """
    from bayes_dp.core.region import _eps_lower
    from mia.model_rates import model_rates
    from mia.selection import POOLED_SELECTED, reference_exposure, select_exposed

    expo = reference_exposure(x[ref], keep[ref], "online", "auto")[ok]
    mismatch = int(not np.array_equal(expo, np.asarray(r["exposure"])))
    sel = select_exposed(expo, POOLED_SELECTED)
    fpr, fnr, used = model_rates(dt, kt, sel, seed=r["coin_seed"])
    if compare:
        f_x, g_x, used_x = model_rates(r["decisions"], r["keep"], sel, seed=r["coin_seed"])
        mismatch += int(
            not (
                np.array_equal(used, used_x)
                and np.array_equal(fpr, f_x)
                and np.array_equal(fnr, g_x)
            )
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
        "old_sel_point_true": float(_eps_lower(fe, ge, delta)) if np.isfinite(fe) else 0.0,
        "sel_point": float(_eps_lower(fpr.mean(), fnr.mean(), delta)) if used.sum() else 0.0,
        "sel_exposure_min": float(expo[sel].min()) if sel.size else float("nan"),
        "rates": (fpr, fnr),
        "old_rates": plain_model_rates(dt, kt, sel),
    }
