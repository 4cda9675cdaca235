"""Compiling in worker processes (samplers.numerics.parallel_compile) and the kernels a run lists.

The worker checks run fresh processes with ``NUMBA_CACHE_DIR`` set to an empty temporary folder,
so numba's cache starts cold there and the package's own ``__pycache__`` is not touched.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]

KERNELS = """
from numba import njit

@njit(cache=True)
def leaf(x):
    return 2.0 * x

@njit(cache=True)
def one(x):
    return leaf(x) + 1.0

@njit(cache=True)
def two(x, n):
    s = 0.0
    for i in range(n):
        s += leaf(x) * i
    return s

@njit(cache=True)
def three(a):
    return a.sum() + leaf(a[0])
"""

CODE = """
import json, numpy as np
from samplers.numerics import parallel_compile as pc
import tiny_kernels as tk

jobs = [(tk.leaf, (1.0,)), (tk.one, (1.0,)), (tk.two, (1.0, 3)), (tk.three, (np.ones(3),))]
sigs = [(k, pc.signature(a)) for k, a in jobs]
before = [pc.in_cache(k, s) for k, s in sigs]
res = pc.compile_all(sigs, workers=WORKERS)
after = [s in k.overloads for k, s in sigs]
print(json.dumps({"before": before, "after": after, "workers": res["workers"],
                  "where": res["where"], "values": [tk.one(1.0), tk.two(1.0, 3),
                  tk.three(np.ones(3))]}))
"""


def _run(tmp_path, cache, workers):
    (tmp_path / "tiny_kernels.py").write_text(textwrap.dedent(KERNELS))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(tmp_path), env.get("PYTHONPATH", "")])
    code = textwrap.dedent(CODE).replace("WORKERS", str(workers))
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


WORKER = """
import json, numpy as np
from samplers.numerics import parallel_compile as pc
import tiny_kernels as tk

jobs = [(tk.two, (1.0, 3)), (tk.three, (np.ones(3),))]
proc = pc._start_worker([(*pc._name(k), pc.signature(a)) for k, a in jobs])
replies = []
for i in (1, 0):
    proc.stdin.write(f"{i}\\n")
    proc.stdin.flush()
    replies.append(proc.stdout.readline().split()[:2])
proc.stdin.close()
print(json.dumps({"replies": replies, "exit": proc.wait(),
                  "here": [pc.signature(a) in k.overloads for k, a in jobs]}))
"""


def test_a_worker_compiles_into_the_shared_cache(tmp_path):
    """A worker compiles the kernels it is sent (in the order sent) into the cache and exits
    when its input ends; a later process finds them there."""
    (tmp_path / "tiny_kernels.py").write_text(textwrap.dedent(KERNELS))
    cache = tmp_path / "cache"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(tmp_path), env.get("PYTHONPATH", "")])
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WORKER)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["replies"] == [["ok", "1"], ["ok", "0"]] and out["exit"] == 0
    assert out["here"] == [False, False]  # compiled by the worker, not in this process
    later = _run(tmp_path, cache, 0)
    # leaf (a callee of both) and the two kernels were saved by the worker; `one` was not
    assert later["before"] == [True, False, True, True]
    assert later["values"] == [3.0, 6.0, 5.0]


def test_compile_all_fills_the_cache(tmp_path):
    """On an empty cache with one worker every kernel is compiled (the first here, alone;
    the others by whichever process is free) and loaded here; a second process finds every
    kernel cached and compiles nothing."""
    cache = tmp_path / "cache"
    first = _run(tmp_path, cache, 1)
    assert first["before"] == [False] * 4
    assert first["after"] == [True] * 4
    assert first["workers"] == 1
    assert first["where"]["tiny_kernels.leaf"] == "main"
    assert len(first["where"]) == 4 and set(first["where"].values()) <= {"main", "worker"}
    assert first["values"] == [3.0, 6.0, 5.0]
    second = _run(tmp_path, cache, 1)
    assert second["before"] == [True] * 4
    assert second["workers"] == 0 and second["where"] == {}
    assert second["values"] == first["values"]


def test_without_workers_this_process_compiles_everything(tmp_path):
    res = _run(tmp_path, tmp_path / "cache", 0)
    assert res["workers"] == 0
    assert set(res["where"].values()) == {"main"} and len(res["where"]) == 4
    assert res["after"] == [True] * 4


def _tiny_model(n_bases=10):
    """The quickstart's counts (README): the table's proposal passes its pilot on them."""
    from samplers.exact import driver

    fp = np.array([40, 50, 60, 100, 100, 110, 120, 200, 200, 200][:n_bases])
    fn = np.array([250, 200, 150, 100, 120, 100, 100, 80, 70, 60][:n_bases])
    return driver.build_model(
        fp, np.full(n_bases, 1000), fn, np.full(n_bases, 1000), np.zeros(n_bases, dtype=np.int64),
        g_lik=np.zeros(1, dtype=np.int64), g_sidx=np.zeros(1, dtype=np.int64),
        g_tau=np.zeros(1), g_rho=np.zeros(1), g_tau_free=np.zeros(1, dtype=bool),
        g_rho_free=np.zeros(1, dtype=bool), s_fixed=np.full(1, np.nan), delta=1e-5,
        eps_prior=(0, 10.0, 0.0), s_prior=(1.0, 1.0), tau_prior=(1.0, 1.0),
    )  # fmt: skip


@pytest.mark.parametrize("indep", [True, False])
def test_run_kernels_have_the_types_the_run_calls_them_with(indep):
    """Every kernel ``run_kernels`` lists is one the run calls, with the listed types: after a
    short run each listed signature is among the kernel's compiled ones, and the kernels the
    run's chains did not need (the table walk with the table's proposal, and the reverse)
    are left out of the list."""
    from samplers.exact import chain, driver
    from samplers.numerics.parallel_compile import signature

    model, corr, names, _ = _tiny_model()
    rng = np.random.default_rng(0)
    init, *rngs = rng.spawn(3)
    starts = driver.starting_points(model, corr, names, init, 2, 3.0)
    run = driver.ExactRun(model, corr, names, rngs, starts, tune=1000, target_accept=0.3,
                          store_ll=False, cores=1)  # fmt: skip
    run.settings = run.settings._replace(indep=indep)
    run.run(20)
    jobs = driver.run_kernels(model, corr, names, run.settings, pointwise=False)
    listed = {k.py_func.__name__ for k, _ in jobs}
    modes = {int(c.state.sg_on[0]) for c in run.chains}
    assert modes == ({chain.TABLE_INDEP} if indep else {chain.TABLE_WALK})
    for k, args in jobs:
        assert signature(args) in k.overloads, k.py_func.__name__
    if indep:
        assert "choose_table_proposal" in listed and "advance_walk" not in listed
        assert "choose_fitted" not in listed  # the fallback: compiled on first use only
    else:
        assert "advance_walk" in listed and "choose_table_proposal" not in listed
    every = driver.run_kernels(model, corr, names, run.settings, pointwise=True, everything=True)
    names_all = {k.py_func.__name__ for k, _ in every}
    assert listed < names_all and "fill_pointwise" in names_all


def test_no_table_run_lists_no_table_kernel():
    """Thousands of bases (``n_inner`` 0) or over-dispersed groups: no table is built, so its
    build and the table's proposal are not compiled; the fitted t's pilot is."""
    from samplers.exact import driver

    model, corr, names, _ = _tiny_model()
    settings = driver.chain_settings(corr, names, tune=10, target_accept=0.3, store_ll=False)
    jobs = driver.run_kernels(model, corr, names, settings._replace(n_inner=0), pointwise=False)
    listed = [k.py_func.__name__ for k, _ in jobs]
    assert listed == ["log_posterior", "advance_warm", "choose_fitted", "advance_draws"]
