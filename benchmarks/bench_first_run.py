"""A new user's first posterior: compile and sampling time, cold cache against warm (issue 36).

Each case runs in a fresh process whose ``NUMBA_CACHE_DIR`` is a new empty folder (cold: the
run compiles its kernels), then in a second fresh process on the same folder (warm: it loads
them). Cases: ``quickstart`` (the README's strong-attack counts, ``examples/quickstart.py``'s
call: automatic length, 4 chains, seed 0) and ``lira`` (a simulated LiRA score matrix, 64
models x 1,000 targets, cross-fed counts, binomial, 2 chains x 1,000 draws; the simulation of
``benchmarks/bench_lira_scale.py``).

Printed per run: the wall time of ``estimate_epsilon`` (``first posterior``), of which the
compile notice's seconds (``compile``), the CPU seconds of the process and of the compile
workers it started, the fingerprint of the draws (sha256 of every variable's draws and the
pointwise log likelihood: a cold and a warm run must agree), and the load average before the
run (``uptime``; on a shared machine the times grow with it). With ``--kernels``, per kernel:
its compile seconds on the cold run and where it compiled (this process or a worker), and its
run time summed over the chains on the warm run.

    python benchmarks/bench_first_run.py                              # both cases, once
    python benchmarks/bench_first_run.py --cases quickstart --repeat 3 --workers auto 0
    python benchmarks/bench_first_run.py --code /path/to/other/checkout   # same runs, that code

``--workers 0`` compiles everything in the main process (``BAYES_DP_COMPILE_WORKERS=0``);
``auto`` uses the spare cores. ``--code DIR`` adds runs of the package found in DIR (another
checkout, e.g. an earlier commit from ``git worktree add``), interleaved with this one, so that
a before/after ratio is measured under the same load. Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ("quickstart", "lira")
#: The kernels whose run time --kernels measures: (module, name) of each.
TIMED = (
    ("samplers.exact.chain", "log_posterior"),
    ("samplers.exact.chain", "advance_warm"),
    ("samplers.exact.chain", "build_table"),
    ("samplers.exact.chain", "choose_table_proposal"),
    ("samplers.exact.chain", "choose_fitted"),
    ("samplers.exact.chain", "advance_draws"),
    ("samplers.exact.chain", "advance_walk"),
    ("samplers.exact.pointwise", "fill_pointwise"),
)


def _fingerprint(post) -> str:
    import hashlib

    import numpy as np

    h = hashlib.sha256()
    for v in post.var_names:
        h.update(np.ascontiguousarray(post.draws(v)).tobytes())
    for _k, a in sorted((post.log_likelihood or {}).items()):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


class _Timed:
    """A kernel whose calls add their wall time to ``totals[name]`` (other attributes: its own)."""

    def __init__(self, kernel, name, totals, lock):
        self._k, self._n, self._totals, self._lock = kernel, name, totals, lock

    def __call__(self, *args):
        t0 = time.perf_counter()
        try:
            return self._k(*args)
        finally:
            with self._lock:
                self._totals[self._n] = self._totals.get(self._n, 0.0) + time.perf_counter() - t0

    def __getattr__(self, attr):
        return getattr(self._k, attr)


def _time_kernels(totals: dict) -> None:
    """Wrap the kernels of TIMED (where the Python code looks them up) to sum their run time."""
    import importlib
    import threading

    lock = threading.Lock()
    for module, name in TIMED:
        mod = importlib.import_module(module)
        kernel = getattr(mod, name, None)
        if kernel is not None:
            setattr(mod, name, _Timed(kernel, name, totals, lock))


def _child(case: str, kernels: bool) -> None:
    import warnings

    t_import = time.perf_counter()
    import numpy as np

    import bayes_dp as bdp

    t_import = time.perf_counter() - t_import
    run_times: dict = {}
    if kernels:
        import samplers.exact.chain  # noqa: F401  (the kernels to wrap)
        import samplers.exact.pointwise  # noqa: F401

        _time_kernels(run_times)
    if case == "quickstart":
        counts = bdp.AttackCounts(
            fp=[40, 50, 60, 100, 100, 110, 120, 200, 200, 200],
            n_neg=1000,
            fn=[250, 200, 150, 100, 120, 100, 100, 80, 70, 60],
            n_pos=1000,
        )
        prior = bdp.Prior(eps=bdp.HalfNormal(scale=10.0), s=bdp.Beta(1.0, 1.0))
        kw = dict(prior=prior, chains=4, max_time=1800)
        evidence = counts
    else:
        import mia

        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_lira_scale import simulate

        scores, keep, _ = simulate(64, 1000, "balanced", 0)
        res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
        evidence = res.to_evidence(name="lira")
        kw = dict(chains=2, draws=1000, max_time=1800)
        np.asarray(scores)  # the simulation is not timed
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = bdp.estimate_epsilon(evidence, delta=1e-5, seed=0, progress=False, **kw)
    wall = time.perf_counter() - t0
    compiled = {}
    try:  # the compile report of this version (absent in earlier ones)
        from bayes_dp.inference import first_run

        compiled = dict(getattr(first_run, "last_compile", {}))
    except ImportError:
        pass
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "import": t_import,
                "wall": wall,
                "cpu": own.ru_utime + own.ru_stime,
                "cpu_workers": kids.ru_utime + kids.ru_stime,
                "fingerprint": _fingerprint(post),
                "draws": post.n_draws,
                "moves": post.settings.get("surrogate_moves"),
                "compiled": compiled,
                "run_times": run_times,
            }
        )
    )


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def _run(case, code, cache, workers, kernels) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(code))
    if workers != "auto":
        env["BAYES_DP_COMPILE_WORKERS"] = workers
    cmd = [sys.executable, __file__, "--child", case] + (["--kernels"] if kernels else [])
    load = _load()
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=code)
    out = {"load": load, "process": time.perf_counter() - t0}
    if r.returncode != 0 or not r.stdout.strip():
        tail = (r.stderr or "").strip().splitlines()[-1:] or ["no output"]
        out["error"] = f"exit {r.returncode}: {tail[0]}"
        return out
    out.update(json.loads(r.stdout.strip().splitlines()[-1]))
    m = re.search(r"compiling kernels .*?\.\.\. ([\d.]+) s", r.stderr)
    out["notice"] = float(m.group(1)) if m else None
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--workers", nargs="+", default=["auto"], help="'auto' or a number, each")
    p.add_argument("--code", nargs="*", default=[], help="other checkouts to run as well")
    p.add_argument("--kernels", action="store_true", help="per-kernel compile and run times")
    p.add_argument("--skip-this", action="store_true", help="run only the --code checkouts")
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        _child(a.child, a.kernels)
        return
    codes = ([] if a.skip_this else [ROOT]) + [Path(c).resolve() for c in a.code]
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    print(
        f"{'case':>10} {'code':>12} {'workers':>7} {'run':>4} {'load avg (1/5/15 min)':>22} "
        f"{'first posterior s':>17} {'compile s':>9} {'CPU s':>6} {'workers CPU s':>13} "
        f"{'draws':>6}  fingerprint"
    )
    for _rep in range(a.repeat):
        for case in a.cases:
            for code in codes:
                for workers in a.workers if code == ROOT else ["auto"]:
                    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
                        runs = {}
                        for which in ("cold", "warm"):
                            runs[which] = o = _run(case, code, cache, workers, a.kernels)
                            name = code.name if code != ROOT else "this"
                            head = f"{case:>10} {name[:12]:>12} {workers:>7} {which:>4} "
                            if "error" in o:
                                print(head + f"{o['load']:>22} FAILED {o['error']}")
                                continue
                            notice = "-" if o["notice"] is None else f"{o['notice']:.1f}"
                            print(
                                head + f"{o['load']:>22} {o['wall']:17.1f} {notice:>9} "
                                f"{o['cpu']:6.1f} {o['cpu_workers']:13.1f} {o['draws']:>6}  "
                                f"{o['fingerprint']}",
                                flush=True,
                            )
                        if a.kernels and all("error" not in o for o in runs.values()):
                            _print_kernels(runs)
                        fps = {o.get("fingerprint") for o in runs.values()}
                        if len(fps) != 1:
                            print("    DRAWS DIFFER between the cold and the warm run")


def _print_kernels(runs: dict) -> None:
    comp = runs["cold"].get("compiled") or {}
    secs, where = comp.get("seconds", {}), comp.get("where", {})
    rt = runs["warm"].get("run_times", {})
    names = list(secs) + [
        f"samplers.exact.x.{n}" for n in rt if not any(k.endswith("." + n) for k in secs)
    ]
    print(f"    {'kernel':<48} {'compile s (cold)':>16} {'where':>7} {'run s (warm)':>13}")
    for k in names:
        short = k.split(".")[-1]
        c = f"{secs[k]:.1f}" if k in secs else "-"
        r = f"{rt[short]:.2f}" if short in rt else "-"
        print(f"    {k:<48} {c:>16} {where.get(k, '-'):>7} {r:>13}")


if __name__ == "__main__":
    main()
