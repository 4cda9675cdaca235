"""Fingerprint of the draws of every public entry point, to check a refactor changes none.

Each case runs one public entry point (``estimate_epsilon`` in each of its set-ups, MHAAR with
its options, ``plan_audit``, ``plan_gdp_audit``, ``estimate_gdp``, ``estimate_one_run``, the
simulators) with a fixed seed and a fixed length, and hashes what it returns as raw float64
bytes: every variable's draws, the acceptance statistics, the pointwise log-likelihood, a
plan's intervals and simulated counts. A moved line that changes one bit of one draw changes
the hash of that component. The stored fingerprint (``fingerprint.json`` beside this file)
records the versions of Python, numpy, scipy and numba it was made with, since compiled code
may round differently under others.

Run ``python -m tests.project.fingerprint`` to compare with the stored fingerprint (exit
status 1 and the differing components when they differ), ``--write`` to store a new one (only
when a change of the draws is meant: say why in the commit), ``--out FILE`` to also write the
current one elsewhere. ``tests/project/test_fingerprint.py`` runs the comparison.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import bayes_dp as bdp
from bayes_dp import simulate

STORED = Path(__file__).with_name("fingerprint.json")

#: the paper's strong-attack counts (Yildirim et al., Sec. 4.1)
STRONG_FP = [40, 50, 60, 100, 100, 110, 120, 200, 200, 200]
STRONG_FN = [250, 200, 150, 100, 120, 100, 100, 80, 70, 60]
#: length of the fixed-length runs: short, since only the bits matter
SHORT = {"chains": 2, "draws": 200, "tune": 200}


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _posterior(post) -> dict:
    """Hash of each variable's draws, of the acceptance rates and of the log-likelihood."""
    out = {f"draws[{v}]": _digest(post.draws(v)) for v in post.var_names}
    acc = post.acceptance
    out["acceptance"] = _digest([acc[k] for k in sorted(acc)])
    ll = post.log_likelihood
    if ll is not None:
        out.update({f"log_lik[{k}]": _digest(v) for k, v in sorted(ll.items())})
    out["eps_mean"] = repr(float(post.mean("eps")))
    return out


def _plan(plan) -> dict:
    out = {
        "lo": _digest(plan.lo),
        "hi": _digest(plan.hi),
        "p_above": _digest(plan.p_above),
        "ceiling": _digest(plan.ceiling),
        "truths": _digest(plan.truths),
    }
    if plan.mu_lo is not None:
        out["mu"] = _digest(plan.mu_lo, plan.mu_hi)
    rows = []
    for per_design in plan.counts:
        for audit in per_design:
            for c in audit if isinstance(audit, tuple | list) else (audit,):
                if isinstance(c, bdp.AttackCounts):
                    rows += [c.fp, c.fn, c.n_neg, c.n_pos]
                else:  # GdpEvidence
                    rows += list(c.merged())
    out["counts"] = _digest(np.concatenate([np.ravel(r) for r in rows]))
    return out


def _gdp_counts() -> str:
    c, alpha, beta = simulate.simulate_gdp_counts(
        1.0, 0.5, [300] * 4, [300] * 4, likelihood="beta_binomial", tau=0.05, seed=3
    )
    return _digest(c.fp, c.fn, alpha, beta)


def _eps(counts, **kw):
    kw = {**SHORT, **kw}
    return _posterior(bdp.estimate_epsilon(counts, delta=1e-5, seed=kw.pop("seed", 1), **kw))


def _cases() -> dict:
    """Name -> a function returning {component: hash}."""
    strong = bdp.AttackCounts(fp=STRONG_FP, n_neg=1000, fn=STRONG_FN, n_pos=1000)
    two = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
    other = bdp.AttackCounts(fp=[60, 100], n_neg=1000, fn=[150, 100], n_pos=1000)
    corr = bdp.AttackCounts(fp=[30, 80, 120], n_neg=500, fn=[200, 90, 60], n_pos=500)
    c30, _, _ = simulate.simulate_counts(3.0, 0.7, 1e-5, [400] * 30, [400] * 30, seed=5)
    bvn = bdp.Evidence(corr, likelihood="bivariate_normal", name="bvn")
    bb = bdp.Evidence(corr, likelihood="beta_binomial", name="bb")
    own = [
        bdp.Evidence(two, name="canary", strength="own"),
        bdp.Evidence(other, name="lira", strength="own"),
        bdp.Evidence(strong, name="shared"),
    ]
    rng = np.random.default_rng(11)
    in_s, out_s = rng.normal(1.0, 1.0, 600), rng.normal(0.0, 1.0, 600)
    in_b, out_b = rng.normal(0.7, 1.0, 400), rng.normal(0.0, 1.0, 400)
    one_run = bdp.OneRunCounts(m=1000, r=[100, 300], v=[80, 210])
    mh = {"chains": 2, "draws": 150, "tune": 150}
    return {
        # estimate_epsilon, exact sampler
        "exact/binomial": lambda: _eps(strong),
        "exact/auto_length": lambda: _posterior(
            bdp.estimate_epsilon(strong, delta=1e-5, chains=4, max_time=1800, seed=0)
        ),
        "exact/own_strengths": lambda: _eps(own),
        "exact/fixed_s": lambda: _eps(strong, prior=bdp.Prior(s=0.6)),
        "exact/s_one": lambda: _eps(two, prior=bdp.Prior(s=1.0)),
        "exact/lognormal_prior": lambda: _eps(
            strong, prior=bdp.Prior(eps=bdp.LogNormal(1.0, 0.5), s=bdp.Beta(2.0, 1.0))
        ),
        "exact/bivariate_normal": lambda: _eps(bvn),
        "exact/bivariate_normal_fixed": lambda: _eps(
            bdp.Evidence(corr, likelihood="bivariate_normal", fix={"tau": 0.1, "rho": 0.0})
        ),
        "exact/beta_binomial": lambda: _eps(bb),
        "exact/30_bases": lambda: _eps(c30),
        "exact/zero_errors": lambda: _eps(bdp.AttackCounts(fp=0, n_neg=200, fn=[0, 3], n_pos=200)),
        "exact/target_accept": lambda: _eps(two, sampler=bdp.Exact(target_accept=0.4)),
        "exact/no_log_lik": lambda: _eps(two, log_likelihood=False, cores=1),
        # estimate_epsilon, MHAAR
        "mhaar/default": lambda: _eps(strong, sampler=bdp.MHAAR(), **mh),
        "mhaar/options": lambda: _eps(
            strong,
            sampler=bdp.MHAAR(
                n_aux=8, aux_proposal="likelihood", aux_band_weight=0.2, thin=1, target_accept=0.4
            ),
            **mh,
        ),
        "mhaar/uniform": lambda: _eps(
            two, sampler=bdp.MHAAR(n_aux=50, aux_proposal="uniform", aux_uniform_weight=0.1), **mh
        ),
        "mhaar/fixed_s": lambda: _eps(two, sampler=bdp.MHAAR(), prior=bdp.Prior(s=0.6), **mh),
        "mhaar/own_strengths": lambda: _eps(own, sampler=bdp.MHAAR(), **mh),
        "mhaar/bivariate_normal": lambda: _eps(bvn, sampler=bdp.MHAAR(), **mh),
        "mhaar/bivariate_integrated": lambda: _eps(
            bvn, sampler=bdp.MHAAR(integrate_latents=True), **mh
        ),
        "mhaar/beta_binomial": lambda: _eps(bb, sampler=bdp.MHAAR(), **mh),
        # Gaussian DP and one-run audits
        "gdp/scores": lambda: _posterior(
            bdp.estimate_gdp(in_s, out_s, delta=1e-5, draws=500, seed=2)
        ),
        "gdp/groups": lambda: _posterior(
            bdp.estimate_gdp(
                [
                    bdp.gdp_evidence(in_s, out_s, name="a", strength="own"),
                    bdp.gdp_evidence(in_b, out_b, bins=8, name="b"),
                    one_run,
                    two,
                ],
                delta=1e-5,
                s=bdp.Beta(2.0, 1.0),
                counts_delta=1e-6,
                draws=500,
                seed=3,
            )
        ),
        "gdp/lognormal": lambda: _posterior(
            bdp.estimate_gdp(
                in_b, out_b, delta=1e-6, mu_prior=bdp.LogNormal(0.0, 1.0), s=0.8, draws=500, seed=4
            )
        ),
        "one_run/free_s": lambda: _posterior(
            bdp.estimate_one_run(one_run, delta=1e-6, draws=500, seed=5)
        ),
        "one_run/fixed_s": lambda: _posterior(
            bdp.estimate_one_run(one_run, prior=bdp.Prior(s=1.0), draws=500, seed=6)
        ),
        # planning
        "plan/binomial": lambda: _plan(
            bdp.plan_audit(
                {"eps": 4.0, "s": 0.7},
                [{"bases": 2, "n": 500}, {"bases": 5, "n": 200, "level": 0.8}],
                delta=1e-5,
                claim=2.0,
                reps=6,
                seed=7,
                cores=1,
            )
        ),
        "plan/bivariate_gdp_truth": lambda: _plan(
            bdp.plan_audit(
                {"mu": 1.5, "s": 0.8, "tau": 0.05, "rho": 0.0},
                {"bases": 3, "n": 300},
                delta=1e-5,
                likelihood="bivariate_normal",
                reps=4,
                seed=8,
                cores=1,
            )
        ),
        "plan/gdp": lambda: _plan(
            bdp.plan_gdp_audit(
                {"mu": 1.0, "s": 0.9}, {"bases": 2, "n": 300}, delta=1e-5, claim=2.0, reps=3, seed=9
            )
        ),
        # simulators
        "simulate": lambda: {
            "strength_region": _digest(
                *simulate.sample_strength_region(3.0, 0.6, 1e-5, 50, seed=1)
            ),
            "gdp_region": _digest(*simulate.sample_gdp_region(1.2, 0.5, 50, seed=2)),
            "counts": _digest(c30.fp, c30.fn),
            "gdp_counts": _gdp_counts(),
        },
    }


def versions() -> dict:
    import numba
    import scipy

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "machine": platform.machine(),
    }


def _import_all() -> None:
    """Import every module of bayes_dp and samplers first: a run then uses one version of the code.

    (The package imports most modules on first use; a file edited while a long run is on
    would otherwise be read half-way through it.)
    """
    import importlib
    import pkgutil

    import samplers

    for pkg in (bdp, samplers):
        for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if not m.name.endswith("__main__"):
                importlib.import_module(m.name)


def fingerprint(only=None) -> dict:
    """Run every case (or those whose name starts with one of ``only``); name -> components."""
    _import_all()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short runs warn about their ESS; only bits matter
        for name, case in _cases().items():
            if only and not any(name.startswith(p) for p in only):
                continue
            t0 = time.perf_counter()
            out[name] = case()
            print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out


def differences(stored: dict, current: dict) -> list[str]:
    """Lines naming each case component whose hash differs (or is missing on one side)."""
    lines = []
    for name in sorted(set(stored) | set(current)):
        a, b = stored.get(name), current.get(name)
        if a is None or b is None:
            lines.append(f"{name}: only in the {'current' if a is None else 'stored'} fingerprint")
            continue
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                lines.append(f"{name} {key}: stored {a.get(key)}, now {b.get(key)}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true", help="store the current fingerprint")
    p.add_argument("--out", help="also write the current fingerprint to this file")
    p.add_argument("--only", nargs="*", help="cases whose name starts with one of these")
    args = p.parse_args(argv)
    current = {"versions": versions(), "cases": fingerprint(args.only)}
    text = json.dumps(current, indent=1, sort_keys=True) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    if args.write:
        STORED.write_text(text)
        print(f"wrote {STORED} ({len(current['cases'])} cases)")
        return 0
    stored = json.loads(STORED.read_text())
    if stored["versions"] != current["versions"]:
        print(f"note: stored with {stored['versions']}, running {current['versions']}")
    cases = stored["cases"]
    if args.only:
        cases = {k: v for k, v in cases.items() if any(k.startswith(p) for p in args.only)}
    diff = differences(cases, current["cases"])
    for line in diff:
        print(line)
    print(f"{len(current['cases'])} cases: " + ("differ" if diff else "same draws, bit for bit"))
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
