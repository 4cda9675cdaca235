"""Driver memory and wall time of ``mia.run_audit`` on each backend, with a no-op model.

The model does no work (``fit`` returns None, ``loss`` zeros), so what is measured is the
runner's own cost of shipping tasks: 20 digits bases of 999 rows (about 265 kB each), 5 models
per hypothesis in chunks of 1, i.e. 200 tasks. Each backend runs in its own subprocess, which
prints its peak resident memory (``ru_maxrss``; for Ray and Dask this is the driver only, not
the workers or the object store).

    python benchmarks/engine_memory.py                          # sequential, joblib, ray, dask
    python benchmarks/engine_memory.py --backends sequential dask
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

BACKENDS = ("sequential", "joblib", "ray", "dask")


class NoOp:
    """A training algorithm that trains nothing."""

    def fit(self, X, y, seed):
        return None

    def loss(self, params, X, y):
        import numpy as np

        return np.zeros(len(X))


def _child(backend: str, n_bases: int, n_models: int, jobs: int) -> None:
    import warnings

    warnings.simplefilter("ignore")
    import mia

    X, y = mia.load_digits()
    bases = mia.draw_challenge_bases(X, y, n_bases, size=999, seed=0)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    client = None
    if backend == "dask":
        from distributed import Client

        client = Client(
            n_workers=jobs, threads_per_worker=1, dashboard_address=None, processes=True
        )
    if backend == "ray":
        import ray

        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        mia.run_audit(
            NoOp(),
            bases,
            n_models,
            d,
            chunk_size=1,
            backend=client if client is not None else backend,
            n_jobs=jobs,
            progress=False,
        )
        wall = time.perf_counter() - t0
    if client is not None:
        client.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {"backend": backend, "peak_mb": peak / 1024, "before_mb": rss0 / 1024, "wall_s": wall}
        )
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    p.add_argument("--bases", type=int, default=20)
    p.add_argument("--models", type=int, default=5, help="models per hypothesis (chunks of 1)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(args.child, args.bases, args.models, args.jobs)
        return
    n_tasks = args.bases * 2 * args.models
    print(f"{args.bases} bases x 999 rows, {n_tasks} tasks of one no-op model, {args.jobs} workers")
    print(f"{'backend':<12}{'driver peak RSS':>18}{'(after loading data)':>22}{'wall':>9}")
    # the repository first, so that workers import the same `mia` as this checkout
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, *sys.path]))
    for b in args.backends:
        cmd = [
            sys.executable,
            __file__,
            "--child",
            b,
            "--bases",
            str(args.bases),
            "--models",
            str(args.models),
            "--jobs",
            str(args.jobs),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{b:<12} failed: {last}")
            continue
        r = json.loads(lines[-1])
        print(f"{b:<12}{r['peak_mb']:>15.0f} MB{r['before_mb']:>19.0f} MB{r['wall_s']:>8.1f}s")


if __name__ == "__main__":
    main()
