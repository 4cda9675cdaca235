"""The exposure mixture at scale: where the time goes (docs/validation/lira.md, issue 32 items 1
and 3).

The padding matrices of ``benchmarks._support.lira_sim.padded_counts`` (15 exposed targets, mu ~
U(2, 4), plus ``--pad`` targets that show nothing; 64 models, online test at alpha 0.1), read as
made (``to_evidence(likelihood="exposure_mixture", reflect=False)``), delta 1e-5, default prior.

``--cost`` prints, per size: the distinct count rows the sampler evaluates (it groups identical
(fp, n_neg, fn, n_pos) rows, ``samplers.exact.driver._distinct_rows``), and the time of one
log posterior (``samplers.exact.driver._log_post``, the kernel every move calls) of the mixture
and of the binomial read as made, at three fixed points (``--run`` also times it at its draws).

``--passes`` instruments the per-base routine: at a few points of the band (exposed: eps 7, s
0.2 / 0.5, eps 3, s 0.5; unexposed: s = 0 at kappa eps 7e-10 and 7e-3), which distinct rows go
to the wide pass (fast-window mass below ``TAIL_PASS_BELOW``), what the fast pass found for them
against the wide one, and each pass's time, integrand evaluations and table misses.

``--rows`` times one log posterior of models of subsets of the distinct rows (all; multiplicity
>= 3 and <= 2; below and above the diagonal) at one point.

``--run`` runs ``bayes_dp.estimate_epsilon`` with a fixed length (``--chains`` x ``--draws``
after ``--tune``, ``cores=1``, ``check=False``; a short run compiles first) and prints the wall
time, the time per iteration (per chain), per-parameter r_hat, bulk / tail ESS and bulk ESS per
chain, the acceptance rates of the moves, the move each chain used after the warm-up
(``surrogate_moves``), the posterior correlation of the parameters in the sampler's coordinates
(log eps, logit s, logit pi, logit u with kappa = 1e-15^u), the cost of one log posterior at
its draws, and the fitted t's pilot replayed on its draws (:func:`pilot`). ``--fix kappa=1e-12``
(or ``pi=...``) holds a mixture parameter fixed (``Evidence(fix=...)``); ``--seed`` sets the
matrix's and the sampler's seed.

    python benchmarks/mixture_scale.py --cost --pad 300 1000 10000
    python benchmarks/mixture_scale.py --rows --pad 1000 10000
    python benchmarks/mixture_scale.py --passes --pad 10000
    python benchmarks/mixture_scale.py --run --pad 1000 10000 --draws 10000 --tune 1000
    python benchmarks/mixture_scale.py --run --pad 1000 10000 --tune 1000   # also 500, 2000
    python benchmarks/mixture_scale.py --run --pad 10000 --tune 1000 --fix kappa=1e-12
    python benchmarks/mixture_scale.py --run --pad 10000 --tune 1000 --seed 2

Run it on one core (``NUMBA_NUM_THREADS=1``; ``cores=1`` runs the chains one after the other).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.lira_sim import padded_counts  # noqa: E402

DELTA = 1e-5
LOG_KAPPA_MIN = float(np.log(1e-15))


def evidence(
    n_pad: int, seed: int, likelihood: str = "exposure_mixture", fix=None, reflect: bool = False
):
    """The ``Evidence`` of ``padded_counts(15, n_pad, seed)`` read as made (or reflected)."""
    kw = {"fix": fix} if fix else {}
    return padded_counts(15, n_pad, seed).to_evidence(likelihood=likelihood, reflect=reflect, **kw)


def kernel(ev):
    """The exact sampler's model of ``ev`` (what ``estimate_epsilon`` builds)."""
    from bayes_dp.inference.model import Model
    from bayes_dp.inference.runners import kernel_model

    return kernel_model(Model.build(ev, delta=DELTA))


def time_log_post(km, zs, repeat: int) -> np.ndarray:
    """Seconds of one log posterior at each z of ``zs`` (median of ``repeat`` calls)."""
    from samplers.exact.driver import _log_post

    model, corr, _, _ = km
    _log_post(model, corr, zs[0])  # compile
    out = []
    for z in zs:
        t = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            _log_post(model, corr, z)
            t.append(time.perf_counter() - t0)
        out.append(np.median(t))
    return np.asarray(out)


def z_of(eps, s, pi=None, kappa=None):
    """The sampler's coordinates of (eps, s, pi, kappa); None where the coordinate is absent."""
    z = [np.log(eps), np.log(s / (1 - s))]
    if pi is not None:
        z.append(np.log(pi / (1 - pi)))
    if kappa is not None:
        u = np.log(kappa) / LOG_KAPPA_MIN
        z.append(np.log(u / (1 - u)))
    return np.asarray(z, dtype=np.float64)


def cost(pads, seed, repeat, points):
    """Print the distinct rows and the cost of one log posterior per size."""
    print(
        "| added | targets | distinct rows | point | mixture ms | binomial ms | ratio "
        "| binomial, paper's region ms |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n_pad in pads:
        km_m = kernel(evidence(n_pad, seed))
        km_b = kernel(evidence(n_pad, seed, "binomial"))
        km_r = kernel(evidence(n_pad, seed, "binomial", reflect=True))
        n_rows = km_m[0].b_grp.size
        n_t = int(km_m[0].b_mult.sum())
        for label, (eps, s, pi, kappa) in points:
            zm = z_of(eps, s, pi, kappa)[None, :]
            zb = z_of(eps, s)[None, :]
            tm = time_log_post(km_m, zm, repeat)[0]
            tb = time_log_post(km_b, zb, repeat)[0]
            tr = time_log_post(km_r, zb, repeat)[0]
            print(
                f"| {n_pad:,} | {n_t:,} | {n_rows} | {label} | {1e3 * tm:.2f} | "
                f"{1e3 * tb:.2f} | {tm / tb:.1f} | {1e3 * tr:.2f} |",
                flush=True,
            )


def rows(n_pad, seed, repeat, point=(7.0, 0.2, 0.005, 1e-10)):
    """Time one log posterior of models of subsets of the distinct rows at ``point``.

    Subsets: all rows; those of multiplicity >= 3 and <= 2 (the rare rows, which the larger
    matrices add); those below and above the diagonal (fp / n_neg + fn / n_pos <= 1 or > 1:
    a test worse than chance, reached only by noise when the decisions are read as made).
    Each subset is one model with every row once (the time does not depend on multiplicity).
    """
    from samplers.exact.driver import build_model
    from samplers.model.codes import LIK_BINOMIAL, LIK_EXPOSURE_MIXTURE

    km_m = kernel(evidence(n_pad, seed))
    B, mult = km_m[0].B, km_m[0].b_mult
    above = B.x / B.n0 + B.y / B.n1 > 1.0
    subsets = {
        "all": np.ones(mult.size, bool),
        "multiplicity >= 3": mult >= 3,
        "multiplicity <= 2": mult <= 2,
        "below the diagonal": ~above,
        "above the diagonal": above,
    }
    print(f"\n## distinct rows of +{n_pad:,} by subset, (eps, s, pi, kappa) = {point}")
    print("| rows | count | targets | mixture ms | binomial ms |")
    print("| --- | --- | --- | --- | --- |")
    for label, sel in subsets.items():
        t = {}
        for lik, code, z in (
            ("mixture", LIK_EXPOSURE_MIXTURE, z_of(*point)),
            ("binomial", LIK_BINOMIAL, z_of(*point[:2])),
        ):
            km = build_model(
                *(np.asarray(v)[sel].astype(np.int64) for v in (B.x, B.n0, B.y, B.n1)),
                np.zeros(int(sel.sum()), dtype=np.int64),
                g_lik=[code],
                g_sidx=[0],
                g_tau=[0.0],
                g_rho=[0.0],
                g_tau_free=[False],
                g_rho_free=[False],
                s_fixed=[np.nan],
                delta=DELTA,
                eps_prior=(0, 10.0, 0.0),
                s_prior=(1.0, 1.0),
                tau_prior=(1.0, 1.0),
                mix_prior=(1.0, 1.0, 1.0, 1.0, LOG_KAPPA_MIN),
                g_reflect=[False],
            )
            t[lik] = time_log_post(km, [z], repeat)[0]
        print(
            f"| {label} | {int(sel.sum())} | {int(mult[sel].sum()):,} | "
            f"{1e3 * t['mixture']:.2f} | {1e3 * t['binomial']:.2f} |",
            flush=True,
        )


#: Points of ``--passes``: (label, eps, s) of the band integrated; s = 0 with eps = kappa eps is
#: the unexposed component of the mixture.
PASS_POINTS = (
    ("exposed, eps 7, s 0.2", 7.0, 0.2),
    ("exposed, eps 3, s 0.5", 3.0, 0.5),
    ("exposed, eps 7, s 0.5", 7.0, 0.5),
    ("unexposed, kappa eps 7e-10", 7e-10, 0.0),
    ("unexposed, kappa eps 7e-3", 7e-3, 0.0),
)


def _counted_pass(B, i, wide, bd):
    """Integrand evaluations and table misses of one pass (its pure-Python version, ``py_func``,
    run with counting stand-ins for the compiled routines it calls)."""
    import math

    from samplers.model import binomial as bn

    count = {"evals": 0, "tails": 0, "misses": 0}
    names = ("_integrate_piece", "_log_integrand", "_cdf_diff", "_log_tail")
    orig = {k: getattr(bn, k) for k in names}

    def integrand(*a):
        count["evals"] += 1
        return orig["_log_integrand"].py_func(*a)

    def tail(tab, tok, d, v, upper):
        count["tails"] += 1
        if 0.0 < v < 1.0:
            w = (math.log(v) - math.log1p(-v)) * (-1.0 if d.refl else 1.0)
            val = bn.log_tail_table(tab, tok, d.off, d.m, d.wlo, d.whi, w, upper != d.refl)
            if val == val:
                return val
        count["misses"] += 1
        return bn.log_tail_scipy(d.a, d.b, v, upper)

    bn._integrate_piece = orig["_integrate_piece"].py_func
    bn._log_integrand, bn._cdf_diff, bn._log_tail = integrand, orig["_cdf_diff"].py_func, tail
    try:
        bn._log_band_mass_window.py_func(B, i, wide, bd, False)
    finally:
        for k, f in orig.items():
            setattr(bn, k, f)
    return count


def passes(n_pad, seed, repeat, top=8):
    """Which distinct rows take the wide pass at PASS_POINTS, and what each pass costs.

    For every distinct row of the +``n_pad`` matrix read as made: its band mass over the fast
    windows (the per-base fast pass, ``_log_band_mass_window``), and, for the rows below
    ``TAIL_PASS_BELOW`` (those the kernel sends to the wide pass), the wide pass's mass, the
    time of each pass (median of ``repeat`` calls) and their integrand evaluations and table
    misses (SciPy calls). Prints a summary per point and the ``top`` costliest rows.
    """
    import math

    from samplers.model import binomial as bn
    from samplers.model.region import make_band

    km = kernel(evidence(n_pad, seed, "binomial"))
    B, mult = km[0].B, km[0].b_mult
    above = B.x / B.n0 + B.y / B.n1 > 1.0
    thr = math.log(bn.TAIL_PASS_BELOW)

    def timed(i, wide, bd):
        bn._log_band_mass_window(B, i, wide, bd, False)
        t = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            bn._log_band_mass_window(B, i, wide, bd, False)
            t.append(time.perf_counter() - t0)
        return float(np.median(t))

    print(f"\n## passes of the +{n_pad:,} matrix ({B.x.size} distinct rows, read as made)")
    print(
        "| point | rows to the wide pass | above the diagonal | fast pass ms (those rows) "
        "| wide pass ms | fast evals | wide evals | wide misses | max log(M_wide / M_fast) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    detail = []
    for label, eps, s in PASS_POINTS:
        bd = make_band(eps, s, DELTA)
        rows_w = [
            i for i in range(B.x.size) if bn._log_band_mass_window(B, i, False, bd, False) < thr
        ]
        tf = tw = 0.0
        ef = ew = mw = 0
        gain = 0.0
        for i in rows_w:
            lf = bn._log_band_mass_window(B, i, False, bd, False)
            lw = bn._log_band_mass_window(B, i, True, bd, False)
            a, b = timed(i, False, bd), timed(i, True, bd)
            cf, cw = _counted_pass(B, i, False, bd), _counted_pass(B, i, True, bd)
            tf, tw = tf + a, tw + b
            ef, ew, mw = ef + cf["evals"], ew + cw["evals"], mw + cw["misses"]
            gain = max(gain, lw - lf)
            detail.append((b, label, i, lf, lw, a, cf, cw))
        print(
            f"| {label} | {len(rows_w)} | {int(above[rows_w].sum())} | {1e3 * tf:.2f} | "
            f"{1e3 * tw:.2f} | {ef} | {ew} | {mw} | {gain:.2g} |",
            flush=True,
        )
    print(f"\ncostliest wide passes (top {top}):")
    print(
        "| point | row (fp/n_neg, fn/n_pos) | targets | log M fast | log M wide | fast us "
        "| wide us | evals fast / wide | misses wide |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for b, label, i, lf, lw, a, cf, cw in sorted(detail, key=lambda r: -r[0])[:top]:
        print(
            f"| {label} | {int(B.x[i])}/{int(B.n0[i])}, {int(B.y[i])}/{int(B.n1[i])} | "
            f"{int(mult[i])} | {lf:.3f} | {lw:.3f} | {1e6 * a:.0f} | {1e6 * b:.0f} | "
            f"{cf['evals']} / {cw['evals']} | {cw['misses']} |"
        )


def run(n_pad, seed, chains, draws, tune, fix, repeat):
    """One fixed-length run; print its figures."""
    import arviz as az

    import bayes_dp as bdp

    ev = evidence(n_pad, seed, fix=fix)

    def sample(n_draws, n_tune):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bdp.estimate_epsilon(
                ev,
                delta=DELTA,
                seed=seed,
                chains=chains,
                draws=n_draws,
                tune=n_tune,
                cores=1,
                check=False,
                progress=False,
                log_likelihood=False,
            )

    sample(20, 20)  # compiles the kernels this run calls: the timing below is sampling only
    t0 = time.perf_counter()
    post = sample(draws, tune)
    wall = time.perf_counter() - t0
    st = post.settings
    iters = chains * (draws + tune)
    print(
        f"\n## {15 + n_pad:,} targets (+{n_pad:,}), fix={fix}, {chains} x {draws} after {tune}, "
        f"seed {seed}"
    )
    print(
        f"wall {wall:.1f} s (sampler {st.get('seconds', float('nan')):.1f} s), "
        f"{1e3 * wall / iters:.2f} ms per iteration per chain (set-up included)"
    )
    print(f"moves after warm-up (surrogate_moves): {st.get('surrogate_moves')}")
    names = post.var_names
    zcols = {}
    for v in names:
        x = np.asarray(post.draws(v))
        if v == "eps":
            zcols[v] = np.log(x)
        elif v.startswith("kappa"):
            u = np.log(x) / LOG_KAPPA_MIN
            zcols["logit u" + v[5:]] = np.log(u / (1 - u))
        else:
            zcols["logit " + v] = np.log(x / (1 - x))
    print("| parameter | mean | 5% | 95% | r_hat | ESS bulk | ESS tail | bulk per chain |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for v in names:
        x = np.asarray(post.draws(v))
        q = np.quantile(x, [0.05, 0.95])
        r = float(az.rhat(x))
        eb, et = float(az.ess(x, method="bulk")), float(az.ess(x, method="tail"))
        per = "/".join(f"{float(az.ess(c[None, :], method='bulk')):.0f}" for c in x)
        print(
            f"| {v} | {x.mean():.4g} | {q[0]:.4g} | {q[1]:.4g} | {r:.3f} | {eb:.0f} | {et:.0f} "
            f"| {per} |"
        )
    stats = post.to_arviz().sample_stats
    for k in stats.data_vars:
        a = np.asarray(stats[k].values, dtype=float)
        per = [f"{np.nanmean(c):.3f}" if np.isfinite(c).any() else "-" for c in a]
        print(f"{k}: per chain {per}")
    print(f"tuned scales (log, per chain): {np.round(np.asarray(st['tuned_scales']), 2).tolist()}")
    keys = list(zcols)
    m = np.stack([zcols[k].ravel() for k in keys])
    cm = np.corrcoef(m)
    print("posterior correlation (z-scale): | | " + " | ".join(keys) + " |")
    for i, k in enumerate(keys):
        print(f"| {k} | " + " | ".join(f"{cm[i, j]:+.2f}" for j in range(len(keys))) + " |")
    # cost of one log posterior at 8 of the run's draws
    km = kernel(ev)
    zfull = []
    flat = {k: zcols[k].ravel() for k in keys}
    pick = np.linspace(0, flat[keys[0]].size - 1, 8).astype(int)
    for i in pick:
        zfull.append(np.array([flat[k][i] for k in keys]))
    t = time_log_post(km, zfull, repeat)
    print(
        f"one log posterior at 8 draws: median {1e3 * np.median(t):.2f} ms, "
        f"max {1e3 * t.max():.2f} ms ({km[0].b_grp.size} distinct rows)",
        flush=True,
    )
    zc = np.stack([zcols[k] for k in keys], axis=-1)  # (chains, draws, d)
    pilot(km, zc, seed)


def pilot(km, zc, seed, n_pilot=64, n_rep=20):
    """The fitted t's pilot, repeated on this run's draws.

    ``samplers.exact.moves.choose_fitted`` fits a multivariate t (``fitted_proposal``: DF 5,
    scale 1.3 x the window's covariance) to the second half of the warm-up and switches the
    chain to the independence move when the importance weights pi / q of PILOT = 64 draws
    have a relative ESS of at least INDEP_MIN_ESS (0.5) in a model without over-dispersed
    groups, FIT_MIN_ESS (0.15) with them. Here the t is fitted to (a) each chain's first 250
    draws (as long as the default warm-up's second half is 500) and (b) all draws of the run;
    ``n_rep`` pilots of 64 draws each give the share that would pass either threshold.
    """
    from scipy import stats

    from samplers.exact import fitted_proposal as fq
    from samplers.exact.driver import _log_post
    from samplers.exact.moves import FIT_MIN_ESS, INDEP_MIN_ESS

    model, corr = km[0], km[1]
    rng = np.random.default_rng(seed)
    d = zc.shape[-1]

    for label, win in (
        ("first 250 draws of a chain", [zc[c, :250] for c in range(zc.shape[0])]),
        ("all draws", [zc.reshape(-1, d)]),
    ):
        res = []
        for x in win:
            cov = np.cov(x.T) * fq.SCALE**2
            q = stats.multivariate_t(loc=x.mean(0), shape=cov, df=fq.DF, seed=rng)
            for _ in range(n_rep):
                y = q.rvs(n_pilot).reshape(n_pilot, d)
                lw = np.array([_log_post(model, corr, v) for v in y]) - q.logpdf(y)
                lw = np.where(np.isfinite(lw), lw, -np.inf)
                w = np.exp(lw - lw.max())
                res.append(w.sum() ** 2 / (n_pilot * (w * w).sum()))
        res = np.asarray(res)
        print(
            f"fitted t pilot ({label}): relative ESS median {np.median(res):.3f} "
            f"[{res.min():.3f}, {res.max():.3f}] over {res.size} pilots; passes "
            f"{INDEP_MIN_ESS} in {np.mean(res >= INDEP_MIN_ESS):.0%}, "
            f"{FIT_MIN_ESS} in {np.mean(res >= FIT_MIN_ESS):.0%}",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pad", type=int, nargs="+", default=[300, 1000, 10000])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cost", action="store_true")
    ap.add_argument("--run", action="store_true")
    ap.add_argument("--rows", action="store_true", help="cost per distinct row")
    ap.add_argument("--passes", action="store_true", help="which rows take the wide pass")
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--fix", nargs="*", default=[], help="e.g. kappa=1e-10 pi=0.05")
    args = ap.parse_args()
    fix = {k: float(v) for k, v in (f.split("=") for f in args.fix)} or None
    if args.cost:
        points = [
            ("eps 7, s 0.5, pi 0.05, kappa 1e-7", (7.0, 0.5, 0.05, 1e-7)),
            ("eps 7, s 0.5, pi 0.05, kappa 1e-2", (7.0, 0.5, 0.05, 1e-2)),
            ("eps 7, s 0.5, pi 0.5, kappa 0.5", (7.0, 0.5, 0.5, 0.5)),
        ]
        cost(args.pad, args.seed, args.repeat, points)
    if args.rows:
        for n_pad in args.pad:
            rows(n_pad, args.seed, args.repeat)
    if args.passes:
        for n_pad in args.pad:
            passes(n_pad, args.seed, args.repeat)
    if args.run:
        for n_pad in args.pad:
            run(n_pad, args.seed, args.chains, args.draws, args.tune, fix, args.repeat)


if __name__ == "__main__":
    main()
