"""Validity of the pooled bound (``mia.pooled_split_bound``) on mechanisms with exactly known eps.

Per configuration (mechanism, per-model shift, design, models, targets, alpha) and per interval
(``betting``, ``t``), over ``--audits`` score matrices (``benchmarks/_support/pooled_sim.py``):

* ``above``: audits whose bound lies above the mechanism's true eps at delta (a false
  accusation), with the exact (Clopper-Pearson) 95% CI of the rate;
* ``med b/truth``: median bound over truth; ``point``: median eps of the per-model rates'
  means themselves (no interval);
* ``rej FP/FN`` (betting): audits where the test of one lower constraint of R
  (``bayes_dp.core.pooled_bound.constraint_epsilon_bound``) rejects the first grid point at or
  above the truth, an event of probability at most 2.5% each at confidence 0.95 whatever the
  drift of the models' expected rates (``benchmarks._support.pooled_sim.constraint_rejects``); a
  bound above the truth implies one. (Upper bounds of the mean rates are no longer checked
  against the exact mean rates: the per-model rates' expectations drift from model to model,
  so those bounds have no fixed target.)
* ``old``: the method before the coins (plain per-model rates over all OUT / IN targets, betting
  upper bounds of the two means, eps through their point: ``pooled_sim.old_bound``): above the
  truth and median bound/truth, on the same audits.

The bound over the most exposed targets (the claim's second pooled candidate: the same
per-model rates over the ``mia.selection.POOLED_SELECTED`` targets with the largest
``mia.selection.reference_exposure`` on the reference half) is reported on the lines
``sel-betting`` / ``sel-t`` of each row (``selected`` in the JSON): the same columns, ``all``
(the median bound/truth of the bound over all targets), ``larger`` (audits where it is larger
than the bound over all targets), ``max`` (median bound/truth of the larger of the two) and
``oldpt>tr`` (the balanced design's gap of the old rates: audits whose exact expected point of
the plain per-model rates over the selected targets, ``pooled_sim.expected_model_rates``, has
an eps above the truth; ``all``: the same for the design-weighted point over all targets).

The rows marked ``blind`` replace the test's decisions by a data-blind attack of the balanced
design (eps = 0 mechanism): "member" for a target iff its IN count in the reference half is below
half the reference models (``pooled_sim.audit``, ``attack="blind"``). Its truth is 0; the old
rates accuse it, the coins must not.

Every audit's generator is spawned from ``--seed`` (row ``i``, audit ``j``: ``SeedSequence(seed,
spawn_key=(i, j))``), so a row reproduces alone (``--rows``). Every audit also checks that the
exact decision regions decide the test models' scores as ``mia.lira.decide`` did and give the
library's per-model rates with its coins (``mismatch`` must be 0).

Run: ``python benchmarks/pooled_validity.py --audits 200 --seed 0 --save grid200.json``
(``docs/validation/pooled_bound.md``, "The balanced design"). ``--list`` prints the grid.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.pooled_sim import FEW_MU, audit  # noqa: E402

INTERVALS = ("betting", "t")
#: Relative excess of an exact expected point over the truth counted as above it (rounding: at
#: randomized response's corner every target's point is the truth's to ~1e-13).
_TIE = 1e-9


def _cfg(mech, param, shift, design, models, targets, alpha, exposed=None, attack=None):
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
    if attack is not None:
        c["attack"] = attack
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
    # the data-blind attack of the balanced design on an eps = 0 mechanism ("member" iff the
    # reference half has fewer than half its models IN): the old rates' gap made an accusation
    for models in (1024, 256):
        rows.append(_cfg("gauss", 0.0, 0.0, "balanced", models, 1000, 0.1, attack="blind"))
    return rows


def label(c):
    ex = f" {c['exposed']}ex" if c.get("exposed") is not None else ""
    ex += f" {c['attack']}" if c.get("attack") else ""
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
    old_pt = np.array([r["old_point_true_w"] for r in res])
    row = {
        "row": i,
        "config": cfg,
        "audits": n_audits,
        "truth_median": float(np.median(truth)),
        "point_median": float(np.median([r["point"] for r in res])),
        "old_point_median": float(np.median([r["old_point"] for r in res])),
        "mismatch": int(sum(r["mismatch"] for r in res)),
        "n_test_median": float(np.median([r["n_test"] for r in res])),
        "fpr_true_median": float(np.median([r["fpr_true"] for r in res])),
        "fnr_true_median": float(np.median([r["fnr_true"] for r in res])),
        "old_point_true_w_above": int(np.sum(old_pt > truth + _TIE * np.maximum(truth, 1))),
        "old_point_true_w_max_ratio": float(np.max(_ratio(old_pt, truth))),
        "old_point_true_w_max_excess": float(np.max(old_pt - truth)),
    }
    for iv in INTERVALS:
        row[iv] = _summary([r[iv] for r in res], truth)
    row["old"] = _summary([r["old"] for r in res], truth)
    row["selected"] = _selected_row(res, truth)
    return row


def _summary(bounds, truth):
    """Counts and medians of one bound's ``{eps[, rej_fp, rej_fn]}`` over a row's audits."""
    n = len(bounds)
    eps = np.array([b["eps"] for b in bounds])
    above = int(np.sum(eps > truth))
    ci = stats.binomtest(above, n).proportion_ci(0.95, method="exact")
    out = {
        "above": above,
        "rate": above / n,
        "ci": [float(ci.low), float(ci.high)],
        "median_bound": float(np.median(eps)),
        "median_ratio": float(np.median(_ratio(eps, truth))),
        "max_ratio": float(np.max(_ratio(eps, truth))),
        "max_excess": float(np.max(eps - truth)),
        "infinite": int(np.sum(~np.isfinite(eps))),
    }
    if "rej_fp" in bounds[0]:
        out["rej_fp"] = int(sum(b["rej_fp"] for b in bounds))
        out["rej_fn"] = int(sum(b["rej_fn"] for b in bounds))
    return out


def _selected_row(res, truth):
    """The bound over the most exposed targets in a row's audits."""
    pt = np.array([r["old_sel_point_true"] for r in res])
    avail = np.array([("sel_betting" in r) for r in res])
    out = {
        "mismatch": int(sum(r["sel_mismatch"] for r in res)),
        "available": int(avail.sum()),
        "recorded": int(sum(r["sel_recorded"] for r in res)),
        "n_test_median": float(np.median([r["sel_n_test"] for r in res])),
        "point_median": float(np.median([r["sel_point"] for r in res])),
        "old_point_true_above": int(np.sum(pt > truth + _TIE * np.maximum(truth, 1))),
        "old_point_true_max_ratio": float(np.max(_ratio(pt, truth))),
        "old_point_true_max_excess": float(np.max(pt - truth)),
    }
    none = {"eps": 0.0, "rej_fp": False, "rej_fn": False}
    for iv in (*INTERVALS, "old"):
        key = "sel_" + iv
        out[iv] = _summary([r.get(key, none) for r in res], truth)
        if iv == "old":
            continue
        eps = np.array([r.get(key, none)["eps"] for r in res])
        full = np.array([r[iv]["eps"] for r in res])
        out[iv] |= {
            "all_median_ratio": float(np.median(_ratio(full, truth))),
            "larger": int(np.sum(eps > full)),
            "max_median_ratio": float(np.median(_ratio(np.maximum(eps, full), truth))),
        }
    return out


def _ratio(eps, truth):
    """bound / truth (a bound above a truth of 0: inf; 0 over 0: 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(truth > 0, eps / truth, np.where(eps > 0, np.inf, 0.0))


def _med(v, row):
    """Median bound/truth of one bound's summary; the median bound where the truth is 0."""
    return v["median_bound"] if row["truth_median"] == 0 else v["median_ratio"]


def _fmt(v, row):
    """``above/n [CI] med`` of one bound's summary."""
    return (
        f"{v['above']:3d}/{row['audits']:<4d} [{v['ci'][0]:.3f},{v['ci'][1]:.3f}] "
        f"{_med(v, row):6.3f}"
    )


def print_header():
    print(
        f"{'#':>3} {'configuration':44s} {'truth':>6} {'point':>6} | "
        f"{'interval':8s} {'above':>8} {'95% CI':>13} {'b/tr':>6} {'rej FP/FN':>9} | "
        f"{'old above, b/tr':>16}",
        flush=True,
    )


def print_row(row):
    c = row["config"]
    n = row["audits"]
    for k, iv in enumerate(INTERVALS):
        s = row[iv]
        head = (
            f"{row['row']:3d} {label(c):44s} {row['truth_median']:6.3f} {row['point_median']:6.3f}"
            if k == 0
            else " " * 62
        )
        rej = f"{s['rej_fp']:4d}/{s['rej_fn']:<4d}" if "rej_fp" in s else " " * 9
        old = (
            f" | {row['old']['above']:3d}/{n} {_med(row['old'], row):.3f}"
            f" (old point {row['old_point_median']:.3f})"
            if k == 0
            else ""
        )
        print(f"{head} | {iv:8s} {_fmt(s, row)} {rej}{old}", flush=True)


def print_selected(row):
    s = row["selected"]
    n = row["audits"]
    for iv in INTERVALS:
        v = s[iv]
        rej = f"{v['rej_fp']:4d}/{v['rej_fn']:<4d}" if "rej_fp" in v else " " * 9
        extra = (
            f" | old {s['old']['above']}/{n} {_med(s['old'], row):.3f}; oldpt>tr "
            f"{s['old_point_true_above']} (max {s['old_point_true_max_ratio']:.4f}; all "
            f"{row['old_point_true_w_above']}, max {row['old_point_true_w_max_ratio']:.4f})"
            if iv == INTERVALS[0]
            else ""
        )
        print(
            f"{'':3s} {'  most exposed ' + str(s['available']) + ' avail, n_test ':>44s}"
            f"{s['n_test_median']:<6g} {s['point_median']:6.3f} | sel-{iv:4s} {_fmt(v, row)} {rej}"
            f" all {v['all_median_ratio']:.3f} larger {v['larger']} max "
            f"{v['max_median_ratio']:.3f}{extra}",
            flush=True,
        )


def _mech(c):
    """The mechanism's name in the docs' tables."""
    m, p = c["mech"], c["param"]
    on = f" on {c['exposed']}" if c.get("exposed") is not None else ""
    if c.get("attack"):
        return f"eps=0, {c['attack']} attack"
    if m == "laplace":
        return f"Laplace eps0={p:g}{on}"
    if m == "gauss":
        return "eps=0 (mu=0)" if p == 0 else f"Gaussian mu={p:g}{on}"
    if m == "rr":
        return f"RR eps={p:g}"
    if m == "hetero":
        return f"hetero mu~LN({p:g},1)"
    return f"Gaussian mu~U({FEW_MU[0]:g},{FEW_MU[1]:g}) on {c.get('exposed', 10)}"


def _cell(v, row, ratio=True):
    """``above/n (CI)`` and the median bound/truth (largest) of one summary, as table cells
    (where the truth is 0: the median and largest bound)."""
    ci = f"{v['above']}/{row['audits']} ({v['ci'][0]:.3f}-{v['ci'][1]:.3f})"
    top = v["max_excess"] if row["truth_median"] == 0 else v["max_ratio"]
    return ci, f"{_med(v, row):.2f}" + (f" ({top:.3f})" if ratio else "")


def _ratio_cell(above, ratio, excess, truth):
    """An old expected point's count above the truth, with its largest ratio (or excess)."""
    return f"{above} (eps {excess:+.4f})" if truth == 0 else f"{above} ({ratio:.4f})"


def print_tables(path):
    """The markdown tables of ``docs/validation/pooled_bound.md`` from a ``--save`` file."""
    rows = json.loads(Path(path).read_text())["rows"]
    print(
        "| # | mechanism | shift | design | models x targets | alpha | truth | point | "
        "betting above (95% CI) | betting b/truth (max) | rej FP/FN | t above (95% CI) | "
        "t b/truth | old above (95% CI) | old b/truth (max) |"
    )
    print("|" + "---|" * 15)
    for r in rows:
        c = r["config"]
        head = (
            f"| {r['row']} | {_mech(c)} | {c['shift']:g} | {c['design'][:3]} | "
            f"{c['models']}x{c['targets']} | {c['alpha']:g} | {r['truth_median']:.3g} "
        )
        b, t, o = r["betting"], r["t"], r["old"]
        print(
            head + f"| {r['point_median']:.3f} | {' | '.join(_cell(b, r))} | "
            f"{b['rej_fp']}/{b['rej_fn']} | {' | '.join(_cell(t, r, False))} | "
            f"{' | '.join(_cell(o, r))} |"
        )
    print()
    print(
        "| # | mechanism | shift | design | models x targets | alpha | truth | test models | "
        "above (95% CI) | b/truth (max) | rej FP/FN | all-targets b/truth | larger than "
        "all-targets | larger of the two / truth | old above (95% CI) | old b/truth (max) | "
        "old expected point > truth: most exposed (max) / all (max) |"
    )
    print("|" + "---|" * 17)
    for r in rows:
        c, s = r["config"], r["selected"]
        b, o = s["betting"], s["old"]
        tr = r["truth_median"]
        print(
            f"| {r['row']} | {_mech(c)} | {c['shift']:g} | {c['design'][:3]} | "
            f"{c['models']}x{c['targets']} | {c['alpha']:g} | {tr:.3g} | "
            f"{s['n_test_median']:g} | {' | '.join(_cell(b, r))} | {b['rej_fp']}/{b['rej_fn']} | "
            f"{b['all_median_ratio']:.2f} | {b['larger']} | {b['max_median_ratio']:.2f} | "
            f"{' | '.join(_cell(o, r))} | "
            + _ratio_cell(
                s["old_point_true_above"],
                s["old_point_true_max_ratio"],
                s["old_point_true_max_excess"],
                tr,
            )
            + " / "
            + _ratio_cell(
                r["old_point_true_w_above"],
                r["old_point_true_w_max_ratio"],
                r["old_point_true_w_max_excess"],
                tr,
            )
            + " |"
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
    p.add_argument("--table", default="", help="print the docs' tables of a --save file and stop")
    a = p.parse_args(argv)
    if a.table:
        print_tables(a.table)
        return 0
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
        f"confidence {a.confidence}; above = bound > true eps; rej FP/FN = a constraint test "
        "rejects the truth (expected <= 2.5% each); old = plain rates, box betting; b/tr = "
        "median bound / truth (the median bound where the truth is 0)",
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
            print(f"    !! {row['mismatch']} decision mismatches with mia.lira.decide", flush=True)
    print(f"{time.time() - t0:.0f} s")
    for iv in (*INTERVALS, "old"):
        worst = max(out, key=lambda r: (r[iv]["rate"], r[iv]["max_ratio"]))
        w = worst[iv]
        print(
            f"worst for {iv}: row {worst['row']} ({label(worst['config'])}): "
            f"{w['above']}/{worst['audits']} above, CI [{w['ci'][0]:.3f}, {w['ci'][1]:.3f}], "
            f"largest bound/truth {w['max_ratio']:.3f}"
        )
    for iv in (*INTERVALS, "old"):
        worst = max(out, key=lambda r: (r["selected"][iv]["rate"], r["selected"][iv]["max_ratio"]))
        w = worst["selected"][iv]
        print(
            f"worst for the most exposed targets ({iv}): row {worst['row']} "
            f"({label(worst['config'])}): {w['above']}/{worst['audits']} above, "
            f"CI [{w['ci'][0]:.3f}, {w['ci'][1]:.3f}], largest bound/truth {w['max_ratio']:.3f}"
        )
    tot = sum(r["audits"] for r in out)
    for name, get in (("all targets", lambda r: r), ("most exposed", lambda r: r["selected"])):
        print(
            f"{name}: above the truth betting {sum(get(r)['betting']['above'] for r in out)}, "
            f"t {sum(get(r)['t']['above'] for r in out)}, old "
            f"{sum(get(r)['old']['above'] for r in out)} of {tot}; betting constraint "
            f"rejections at the truth FP {sum(get(r)['betting']['rej_fp'] for r in out)}, FN "
            f"{sum(get(r)['betting']['rej_fn'] for r in out)} (at most 2.5% each expected)"
        )
    print(
        f"old rates' expected point above the truth: most exposed "
        f"{sum(r['selected']['old_point_true_above'] for r in out)}/{tot} (largest ratio "
        f"{max(r['selected']['old_point_true_max_ratio'] for r in out):.4f}), all targets "
        f"{sum(r['old_point_true_w_above'] for r in out)}/{tot} (largest ratio "
        f"{max(r['old_point_true_w_max_ratio'] for r in out):.4f})"
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
