"""Validity of the pooled bound (``mia.pooled_split_bound``) on mechanisms with exactly known eps.

Per configuration (mechanism, per-model shift, design, models, targets, alpha) and per interval
(``betting``, ``t``), over ``--audits`` score matrices (``tests/_support/pooled_sim.py``):

* ``above``: audits whose bound lies above the mechanism's true eps at delta (a false
  accusation), with the exact (Clopper-Pearson) 95% CI of the rate;
* ``med b/truth``: median bound over truth; ``med point``: median eps of the per-model mean
  rates themselves (no interval);
* ``FP miss`` / ``FN miss``: audits where the exact mean rate over the fitted targets (each
  target's FPR_t / FNR_t of the test the reference half fitted, in closed form: no Monte Carlo)
  lies above the rate's upper bound (each rate's bound has error 2.5% at confidence 0.95; the
  bound fails when either does); ``miss_w``: the same against the design-weighted mean rate
  (each target weighted by its chance to be OUT / IN in a test model given the reference half;
  it differs from the plain mean only in the balanced design).

The bound over the most exposed targets (the claim's second pooled candidate: the same
per-model rates over the ``mia.bounds.POOLED_SELECTED`` targets with the largest
``mia.bounds.reference_exposure`` on the reference half) is reported on the lines
``sel-betting`` / ``sel-t`` of each row (``selected`` in the JSON): the same columns, the rate
misses against the exact expected per-model rate over the selected targets
(``tests._support.pooled_sim.expected_model_rates``; ``miss_w`` against the design-weighted mean),
``all`` (the median bound/truth of the bound over all targets), ``larger`` (audits where it is
larger than the bound over all targets), ``max`` (median bound/truth of the larger of the two)
and ``pt>tr`` (audits whose exact expected point over the selected targets has an eps above the
truth; ``all``: the same for the all-targets design-weighted point). In the balanced design the
per-model FP rate weights each target by its chance to be OUT in a test model and the FN rate by
its chance to be IN, so the expected point is not a mixture of the targets' points and can lie
outside R(eps); ``pt>tr`` measures how often and by how much.

Every audit's generator is spawned from ``--seed`` (row ``i``, audit ``j``: ``SeedSequence(seed,
spawn_key=(i, j))``), so a row reproduces alone (``--rows``). Every audit also checks that the
exact decision regions decide the test models' scores as ``mia.lira._decide`` did (``mismatch``
must be 0).

Run: ``python benchmarks/pooled_validity.py --audits 200 --rows 0-78 --save out.json`` and
``--audits 1000 --seed 1 --rows 46,62,78-86`` (``docs/pooled_bound.md``; about 22 and 5 min on
one core); the bound over the most exposed targets: ``--audits 200 --seed 0 --rows 0-101`` and
``--audits 1000 --seed 1 --rows 0,12,55,62,74,87-99``. ``--list`` prints the grid.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package

from tests._support.pooled_sim import audit  # noqa: E402

INTERVALS = ("betting", "t")
#: Relative excess of an exact expected point over the truth counted as above it (rounding: at
#: randomized response's corner every target's point is the truth's to ~1e-13).
_TIE = 1e-9


def _cfg(mech, param, shift, design, models, targets, alpha, exposed=None):
    c = {
        "mech": mech,
        "param": param,
        "shift": shift,
        "design": design,
        "models": models,
        "targets": targets,
        "alpha": alpha,
    }
    if exposed is not None:
        c["exposed"] = exposed
    return c


def grid():
    """The configurations: every axis, the sharp cases at every model count."""
    rows = []
    # the sharpest case: Laplace eps0 = 1 at alpha 0.01 (every target's error point on the
    # straight boundary of R), 256 models, every shift and design, 64 and 1,000 targets
    for targets in (64, 1000):
        for design in ("balanced", "independent"):
            for shift in (0.0, 0.25, 1.0):
                rows.append(_cfg("laplace", 1.0, shift, design, 256, targets, 0.01))
    # the same at fewer models
    for models in (16, 64):
        for design in ("balanced", "independent"):
            rows.append(_cfg("laplace", 1.0, 0.25, design, models, 64, 0.01))
    rows.append(_cfg("laplace", 1.0, 1.0, "balanced", 16, 64, 0.01))
    # other levels
    for alpha in (0.1, 0.001):
        for models in (16, 64, 256):
            rows.append(_cfg("laplace", 1.0, 0.25, "balanced", models, 64, alpha))
    # Laplace eps0 = 3 (alpha 0.01 and 0.001 on the straight boundary too)
    for alpha in (0.1, 0.01, 0.001):
        for models in (16, 64, 256):
            rows.append(_cfg("laplace", 3.0, 0.25, "balanced", models, 64, alpha))
    rows.append(_cfg("laplace", 3.0, 0.0, "independent", 256, 1000, 0.01))
    # eps = 0: every target's point on FPR + FNR = 1
    for alpha in (0.1, 0.01, 0.001):
        for models in (16, 64, 256):
            rows.append(_cfg("gauss", 0.0, 0.0, "balanced", models, 64, alpha))
    rows.append(_cfg("gauss", 0.0, 1.0, "independent", 64, 64, 0.01))
    rows.append(_cfg("gauss", 0.0, 0.25, "independent", 256, 1000, 0.001))
    # Gaussian mechanisms
    for mu in (1.0, 3.0):
        for alpha in (0.1, 0.01, 0.001):
            rows.append(_cfg("gauss", mu, 0.25, "balanced", 64, 64, alpha))
        rows.append(_cfg("gauss", mu, 0.0, "independent", 16, 64, 0.01))
    rows.append(_cfg("gauss", 1.0, 0.0, "independent", 256, 1000, 0.01))
    # randomized response (the test's point is R's corner when it decides on the bit)
    for eps in (1.0, 2.0):
        for alpha in (0.1, 0.01):
            for models in (16, 64, 256):
                rows.append(_cfg("rr", eps, 0.0, "balanced", models, 64, alpha))
        rows.append(_cfg("rr", eps, 0.25, "independent", 256, 1000, 0.1))
    # heterogeneous exposure (truth: the largest target's eps)
    for models in (16, 64, 256):
        rows.append(_cfg("hetero", 0.5, 0.25, "balanced", models, 64, 0.1))
    rows.append(_cfg("hetero", 0.5, 1.0, "independent", 256, 1000, 0.01))
    # where the betting bound is not vacuous and the point sits on the truth: Laplace eps0 = 1
    # at alpha 0.1 (threshold above eps0: on the straight boundary too), eps = 0, randomized
    # response's corner, Laplace eps0 = 3 at alpha 0.01; 256 x 1,000 and 1,024 models
    for shift in (0.0, 1.0):
        rows.append(_cfg("laplace", 1.0, shift, "independent", 256, 1000, 0.1))
    for design in ("independent", "balanced"):
        rows.append(_cfg("laplace", 1.0, 0.0, design, 1024, 64, 0.1))
    rows.append(_cfg("laplace", 1.0, 1.0, "independent", 1024, 64, 0.1))
    rows.append(_cfg("gauss", 0.0, 0.0, "independent", 1024, 64, 0.1))
    rows.append(_cfg("rr", 1.0, 0.0, "independent", 1024, 64, 0.1))
    rows.append(_cfg("laplace", 3.0, 0.0, "independent", 1024, 64, 0.01))
    # where the t interval comes closest to accusing (rare false positives: every test model's
    # FP count 0 gives an FP bound of 0), for runs of 1,000 audits
    rows.append(_cfg("gauss", 1.0, 0.0, "independent", 64, 64, 0.001))
    rows.append(_cfg("gauss", 1.0, 1.0, "balanced", 64, 64, 0.001))
    rows.append(_cfg("gauss", 1.0, 0.25, "balanced", 128, 64, 0.001))
    rows.append(_cfg("gauss", 3.0, 0.25, "balanced", 128, 64, 0.001))
    rows.append(_cfg("laplace", 3.0, 1.0, "balanced", 256, 64, 0.001))
    rows.append(_cfg("rr", 3.0, 0.0, "balanced", 64, 64, 0.1))
    rows.append(_cfg("rr", 3.0, 0.0, "balanced", 256, 64, 0.1))
    rows.append(_cfg("gauss", 3.0, 0.0, "balanced", 16, 64, 0.001))
    # a few exposed targets among many that show nothing (where selecting on the reference half
    # matters): 10 Gaussian targets with mu ~ U(2, 4) among 1,000 (truth: the largest one's eps),
    # and Laplace eps0 = 1 or 3 on 10 (or 4: fewer than the 8 selected) of 1,000 targets
    rows.append(_cfg("few", 0.0, 0.25, "balanced", 256, 1000, 0.1, 10))
    rows.append(_cfg("few", 0.0, 0.0, "independent", 64, 1000, 0.1, 10))
    rows.append(_cfg("few", 0.0, 1.0, "independent", 1024, 1000, 0.01, 10))
    rows.append(_cfg("few", 0.0, 0.25, "balanced", 16, 1000, 0.1, 10))
    rows.append(_cfg("laplace", 3.0, 0.0, "independent", 1024, 1000, 0.01, 10))
    rows.append(_cfg("laplace", 1.0, 0.0, "independent", 1024, 1000, 0.1, 10))
    rows.append(_cfg("laplace", 1.0, 0.25, "balanced", 256, 1000, 0.1, 10))
    rows.append(_cfg("laplace", 3.0, 1.0, "balanced", 256, 1000, 0.01, 10))
    rows.append(_cfg("laplace", 3.0, 0.0, "independent", 1024, 1000, 0.01, 4))
    rows.append(_cfg("laplace", 3.0, 0.0, "balanced", 64, 64, 0.1, 8))
    rows.append(_cfg("gauss", 1.0, 0.25, "balanced", 256, 1000, 0.1, 10))
    # the balanced design, where the per-model rates weight the targets unequally, with many
    # test models (the bound closest to its expected point)
    rows.append(_cfg("rr", 1.0, 0.0, "balanced", 1024, 64, 0.1))
    rows.append(_cfg("laplace", 1.0, 0.25, "balanced", 1024, 1000, 0.1, 10))
    rows.append(_cfg("rr", 1.0, 0.0, "balanced", 1024, 64, 0.01))
    rows.append(_cfg("gauss", 0.0, 0.0, "balanced", 1024, 64, 0.1))
    return rows


def label(c):
    ex = f" {c['exposed']}ex" if c.get("exposed") is not None else ""
    return (
        f"{c['mech']:7s} {c['param']:4g} sh{c['shift']:<4g} {c['design'][:3]} "
        f"{c['models']:3d}x{c['targets']:<4d} a{c['alpha']:g}{ex}"
    )


def run_row(i, cfg, n_audits, seed, delta, confidence):
    res = []
    for j in range(n_audits):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i, j)))
        res.append(audit(cfg, rng, delta, confidence, INTERVALS))
    truth = np.array([r["truth"] for r in res])
    row = {
        "row": i,
        "config": cfg,
        "audits": n_audits,
        "truth_median": float(np.median(truth)),
        "point_median": float(np.median([r["point"] for r in res])),
        "mismatch": int(sum(r["mismatch"] for r in res)),
        "n_test_median": float(np.median([r["n_test"] for r in res])),
        "fpr_true_median": float(np.median([r["fpr_true"] for r in res])),
        "fnr_true_median": float(np.median([r["fnr_true"] for r in res])),
        "point_true_w_above": int(
            np.sum(np.array([r["point_true_w"] for r in res]) > truth + _TIE * np.maximum(truth, 1))
        ),
        "point_true_w_max_ratio": float(
            np.max(_ratio(np.array([r["point_true_w"] for r in res]), truth))
        ),
    }
    for iv in INTERVALS:
        eps = np.array([r[iv]["eps"] for r in res])
        fu = np.array([r[iv]["fpr_upper"] for r in res])
        gu = np.array([r[iv]["fnr_upper"] for r in res])
        above = int(np.sum(eps > truth))
        ci = stats.binomtest(above, n_audits).proportion_ci(0.95, method="exact")
        f_true = np.array([r["fpr_true"] for r in res])
        g_true = np.array([r["fnr_true"] for r in res])
        f_w = np.array([r["fpr_true_w"] for r in res])
        g_w = np.array([r["fnr_true_w"] for r in res])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(truth > 0, eps / truth, np.where(eps > 0, np.inf, 0.0))
        row[iv] = {
            "above": above,
            "rate": above / n_audits,
            "ci": [float(ci.low), float(ci.high)],
            "median_bound": float(np.median(eps)),
            "median_ratio": float(np.median(ratio)),
            "fpr_miss": int(np.sum(f_true > fu)),
            "fnr_miss": int(np.sum(g_true > gu)),
            "either_miss": int(np.sum((f_true > fu) | (g_true > gu))),
            "fpr_miss_w": int(np.sum(f_w > fu)),
            "fnr_miss_w": int(np.sum(g_w > gu)),
            "infinite": int(np.sum(~np.isfinite(eps))),
        }
    row["selected"] = _selected_row(res, truth)
    return row


def _selected_row(res, truth):
    """The bound over the most exposed targets in a row's audits (``SELECTED`` in the module)."""
    n = len(res)
    f_w = np.array([r["sel_fpr_true_w"] for r in res])
    g_w = np.array([r["sel_fnr_true_w"] for r in res])
    f_e = np.array([r["sel_fpr_true_e"] for r in res])
    g_e = np.array([r["sel_fnr_true_e"] for r in res])
    pt = np.array([r["sel_point_true"] for r in res])
    avail = np.array([("sel_betting" in r) for r in res])
    out = {
        "mismatch": int(sum(r["sel_mismatch"] for r in res)),
        "available": int(avail.sum()),
        "recorded": int(sum(r["sel_recorded"] for r in res)),
        "n_test_median": float(np.median([r["sel_n_test"] for r in res])),
        "point_median": float(np.median([r["sel_point"] for r in res])),
        "point_true_median": float(np.median(pt)),
        "point_true_above": int(np.sum(pt > truth + _TIE * np.maximum(truth, 1))),
        "point_true_max_ratio": float(np.max(_ratio(pt, truth))),
        "point_true_max_excess": float(np.max(pt - truth)),
    }
    for iv in INTERVALS:
        key = "sel_" + iv
        eps = np.array([r[key]["eps"] if key in r else 0.0 for r in res])
        fu = np.array([r[key]["fpr_upper"] if key in r else 1.0 for r in res])
        gu = np.array([r[key]["fnr_upper"] if key in r else 1.0 for r in res])
        full = np.array([r[iv]["eps"] for r in res])
        above = int(np.sum(eps > truth))
        ci = stats.binomtest(above, n).proportion_ci(0.95, method="exact")
        out[iv] = {
            "above": above,
            "rate": above / n,
            "ci": [float(ci.low), float(ci.high)],
            "median_bound": float(np.median(eps)),
            "median_ratio": float(np.median(_ratio(eps, truth))),
            "max_ratio": float(np.max(_ratio(eps, truth))),
            "fpr_miss_w": int(np.sum(f_w > fu)),
            "fnr_miss_w": int(np.sum(g_w > gu)),
            "fpr_miss_e": int(np.sum(f_e > fu)),
            "fnr_miss_e": int(np.sum(g_e > gu)),
            "either_miss_e": int(np.sum((f_e > fu) | (g_e > gu))),
            "infinite": int(np.sum(~np.isfinite(eps))),
            "all_median_ratio": float(np.median(_ratio(full, truth))),
            "larger": int(np.sum(eps > full)),
            "max_median_ratio": float(np.median(_ratio(np.maximum(eps, full), truth))),
        }
    return out


def _ratio(eps, truth):
    """bound / truth (a bound above a truth of 0: inf; 0 over 0: 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(truth > 0, eps / truth, np.where(eps > 0, np.inf, 0.0))


def print_header():
    print(
        f"{'#':>3} {'configuration':40s} {'truth':>6} {'point':>6} | "
        f"{'interval':8s} {'above':>7} {'95% CI':>13} {'med b/tr':>8} "
        f"{'FPmiss':>6} {'FNmiss':>6} {'either':>6} {'miss_w':>7}",
        flush=True,
    )


def print_row(row):
    c = row["config"]
    for k, iv in enumerate(INTERVALS):
        s = row[iv]
        head = (
            f"{row['row']:3d} {label(c):40s} {row['truth_median']:6.3f} {row['point_median']:6.3f}"
            if k == 0
            else " " * 58
        )
        print(
            f"{head} | {iv:8s} {s['above']:3d}/{row['audits']:<3d} "
            f"[{s['ci'][0]:.3f},{s['ci'][1]:.3f}] {s['median_ratio']:8.3f} "
            f"{s['fpr_miss']:6d} {s['fnr_miss']:6d} {s['either_miss']:6d} "
            f"{s['fpr_miss_w']:3d}/{s['fnr_miss_w']:<3d}",
            flush=True,
        )


def print_selected(row):
    s = row["selected"]
    for iv in INTERVALS:
        v = s[iv]
        print(
            f"{'':3s} {'  most exposed ' + str(s['available']) + ' avail, n_test ':>40s}"
            f"{s['n_test_median']:<6g} {s['point_median']:6.3f} | sel-{iv:4s} "
            f"{v['above']:3d}/{row['audits']:<3d} [{v['ci'][0]:.3f},{v['ci'][1]:.3f}] "
            f"{v['median_ratio']:8.3f} {v['fpr_miss_e']:6d} {v['fnr_miss_e']:6d} "
            f"{v['either_miss_e']:6d} {v['fpr_miss_w']:3d}/{v['fnr_miss_w']:<3d} "
            f"all {v['all_median_ratio']:.3f} larger {v['larger']} max {v['max_median_ratio']:.3f}"
            + (
                f" pt>tr {s['point_true_above']} (max {s['point_true_max_ratio']:.4f}; all "
                f"{row['point_true_w_above']}, max {row['point_true_w_max_ratio']:.4f})"
                if iv == INTERVALS[0]
                else ""
            ),
            flush=True,
        )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--audits", type=int, default=200)
    p.add_argument("--seed", type=int, default=0, help="root of every audit's seed")
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--rows", default="", help="row numbers and ranges, e.g. 0-78,84 (default: all)")
    p.add_argument("--list", action="store_true", help="print the grid and stop")
    p.add_argument("--save", default="", help="write the rows to this JSON file")
    a = p.parse_args(argv)
    rows = grid()
    if a.list:
        for i, c in enumerate(rows):
            print(f"{i:3d} {label(c)}")
        return 0
    pick = []
    for tok in (s.strip() for s in a.rows.split(",") if s.strip()):
        lo, _, hi = tok.partition("-")
        pick += list(range(int(lo), int(hi or lo) + 1))
    pick = pick or list(range(len(rows)))
    print(
        f"pooled bound validity: {a.audits} audits per row, seed {a.seed}, delta {a.delta}, "
        f"confidence {a.confidence}; above = bound > true eps; FP/FN miss = exact mean rate > "
        "its upper bound (expected <= 2.5% each); miss_w = against the design-weighted rates",
        flush=True,
    )
    print_header()
    out = []
    t0 = time.time()
    for i in pick:
        row = run_row(i, rows[i], a.audits, a.seed, a.delta, a.confidence)
        print_row(row)
        print_selected(row)
        out.append(row)
        if row["mismatch"] or row["selected"]["mismatch"]:
            print(f"    !! {row['selected']['mismatch']} selected-rate mismatches", flush=True)
        if row["mismatch"]:
            print(f"    !! {row['mismatch']} decision mismatches with mia.lira._decide", flush=True)
    print(f"{time.time() - t0:.0f} s")
    for iv in INTERVALS:
        worst = max(out, key=lambda r: (r[iv]["rate"], r[iv]["either_miss"]))
        print(
            f"worst for {iv}: row {worst['row']} ({label(worst['config'])}): "
            f"{worst[iv]['above']}/{worst['audits']} above, "
            f"CI [{worst[iv]['ci'][0]:.3f}, {worst[iv]['ci'][1]:.3f}]; "
            f"rate misses FP {worst[iv]['fpr_miss']}, FN {worst[iv]['fnr_miss']}"
        )
    worst = max(
        out, key=lambda r: (r["selected"]["betting"]["rate"], r["selected"]["betting"]["max_ratio"])
    )
    w = worst["selected"]["betting"]
    print(
        f"worst for the most exposed targets (betting): row {worst['row']} "
        f"({label(worst['config'])}): {w['above']}/{worst['audits']} above, "
        f"CI [{w['ci'][0]:.3f}, {w['ci'][1]:.3f}], largest bound/truth {w['max_ratio']:.3f}; "
        f"rate misses (exact expected) FP {w['fpr_miss_e']}, FN {w['fnr_miss_e']}"
    )
    tot = sum(r["audits"] for r in out)
    print(
        f"most exposed, betting: {sum(r['selected']['betting']['above'] for r in out)}/{tot} "
        f"above the truth; exact expected point above the truth in "
        f"{sum(r['selected']['point_true_above'] for r in out)}/{tot} (largest ratio "
        f"{max(r['selected']['point_true_max_ratio'] for r in out):.4f}); all targets' weighted "
        f"point above in {sum(r['point_true_w_above'] for r in out)}/{tot} (largest ratio "
        f"{max(r['point_true_w_max_ratio'] for r in out):.4f})"
    )
    if a.save:
        meta = {
            "command": "python benchmarks/pooled_validity.py " + " ".join(argv or sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": time.time() - t0,
        }
        Path(a.save).write_text(json.dumps({"meta": meta, "rows": out}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
