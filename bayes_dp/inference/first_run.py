"""Whether a run will compile numba's kernels, compiling them side by side, and the notice.

The kernels in ``samplers/`` are compiled by numba on their first call and cached on disk
(``cache=True``: in ``__pycache__`` next to their modules, or under ``NUMBA_CACHE_DIR``), so
only the first run on a machine (or after the code changed) pays the compilation. "First run"
is read from numba's cache itself.

The exact sampler (:func:`compiling`): its run lists the kernels it will call, with the numba
types it will call them with (:func:`samplers.exact.driver.run_kernels`: only what its settings
need; a fallback a chain may need, such as the table walk, compiles on first use). Those the
cache lacks are compiled before the chains start, the first here and the others by worker
processes on the spare cores at the same time (:mod:`samplers.numerics.parallel_compile`;
``BAYES_DP_COMPILE_WORKERS`` caps them, 0: none). One line on stderr says so,
:data:`NOTICE`, ended by the seconds it took. A warm cache prints nothing.

MHAAR and the planner (:func:`compile_first`): before a family is first used in a process,
the cache index of its main kernel is looked up; when it has no entry for the kernel's
current source, the notice is printed and the caller's warm-up compiles the kernels on tiny
inputs (a cache that holds the main kernel for one likelihood but not another compiles the
rest without a notice). :func:`bayes_dp.precompile` compiles every kernel of every family.

A leaf of the package: it imports nothing of ``bayes_dp``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator

#: Kernel family -> (module, function): the main kernel whose cache index tells whether the
#: family was compiled before.
MAIN_KERNELS = {
    "exact": ("samplers.exact.chain", "advance_warm"),
    "mhaar": ("samplers.mhaar.chain", "run_chain"),
    "plan": ("samplers.exact.grid", "log_lik_points"),
}
#: The line printed on a first run, before the compilation's time. Its range: the quickstart's
#: compile on 2 cores (``benchmarks/bench_first_run.py``, README "Compiling ahead").
NOTICE = (
    "bayes-dp: compiling kernels (first run only, 30-40 s on 2 idle cores, ~2 min on busy "
    "ones; 'bayes-dp precompile' does it ahead) ..."
)
#: Set by ``bayes-dp --quiet``: no notice on stderr.
QUIET = False

_lock = threading.RLock()
_seen: set[str] = set()  # families already looked up (or compiled) in this process
_everything = False  # set by every_kernel(): runs compile their fallbacks too
#: What the last :meth:`Compiling.compile` of this process compiled: ``seconds`` and ``where``
#: per kernel, ``workers``, ``wall`` (seconds); empty when it found everything cached.
last_compile: dict = {}


def kernel_cached(family: str) -> bool | None:
    """Return whether numba's cache holds the main kernel of ``family`` for its current source.

    None when it cannot tell (a numba without these internals, caching off, a family without
    a main kernel): then no notice until a run finds kernels missing.
    """
    if family not in MAIN_KERNELS:
        return None
    module, name = MAIN_KERNELS[family]
    try:
        dispatcher = getattr(importlib.import_module(module), name)
        cache_file = dispatcher._cache._cache_file  # numba.core.caching.IndexDataCacheFile
        return bool(cache_file._load_index())  # {} when missing or stale
    except Exception:  # numba internals: any failure means "cannot tell"
        return None


def compile_first(family: str, warm_up: Callable[[], object]) -> float | None:
    """Before the first use of ``family`` in this process: compile it if the cache is cold.

    On a cold cache, print :data:`NOTICE` to stderr, call ``warm_up()`` (tiny runs that
    compile the kernels; their warnings are dropped) and end the line with the seconds it
    took, which are returned. Otherwise (warm cache, or not the first use) return None.
    """
    with _lock:
        if family in _seen:
            return None
        _seen.add(family)
        if kernel_cached(family) is not False:
            return None
        t0 = time.perf_counter()
        if not QUIET:
            print(NOTICE, end=" ", file=sys.stderr, flush=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # tiny runs: their convergence is not the point
                warm_up()
        finally:
            took = time.perf_counter() - t0
            if not QUIET:
                print(f"{took:.1f} s", file=sys.stderr, flush=True)
        return took


def mark_compiled(family: str) -> None:
    """Record that ``family`` was compiled in this process (no notice afterwards)."""
    with _lock:
        _seen.add(family)


@contextlib.contextmanager
def every_kernel() -> Iterator[None]:
    """Within the block, a run compiles every kernel it could call, fallbacks included.

    What :func:`bayes_dp.precompile` uses, so that no later run compiles anything.
    """
    global _everything
    with _lock:
        before, _everything = _everything, True
    try:
        yield
    finally:
        with _lock:
            _everything = before


def compile_workers() -> int | None:
    """Return the worker processes a cold run may start to compile (None: the spare cores).

    Read from the environment variable ``BAYES_DP_COMPILE_WORKERS`` (0: compile in the run's
    own process only); unset or not a whole number >= 0, None.
    """
    value = os.environ.get("BAYES_DP_COMPILE_WORKERS", "").strip()
    return int(value) if value.isdigit() else None


class Compiling:
    """The compile notice of one run: see :func:`compiling`."""

    def __init__(self, family: str):
        self.family = family
        self.everything = _everything
        self._t0: float | None = None
        with _lock:
            first = family not in _seen
            _seen.add(family)
        if first and kernel_cached(family) is False:
            self._begin()

    def _begin(self) -> None:
        if self._t0 is None:
            self._t0 = time.perf_counter()
            if not (QUIET or self.everything):  # every_kernel(): precompile reports its steps
                print(NOTICE, end=" ", file=sys.stderr, flush=True)

    def compile(self, kernels) -> None:
        """Compile ``kernels`` [(dispatcher, arguments)] that numba's cache lacks, side by side.

        The first in this process, the others in worker processes on the spare cores
        (:func:`samplers.numerics.parallel_compile.compile_all`); the notice is printed first
        if it was not yet.
        """
        from samplers.numerics import parallel_compile as pc

        sigs = [(k, pc.signature(args)) for k, args in kernels]
        if all(pc.in_cache(k, sg) for k, sg in sigs):
            return
        self._begin()
        t0 = time.perf_counter()
        res = pc.compile_all(sigs, workers=compile_workers())
        res["wall"] = time.perf_counter() - t0
        last_compile.clear()
        last_compile.update(res)

    def end(self) -> float | None:
        """End the notice with its seconds, returned (None when none was printed)."""
        if self._t0 is None:
            return None
        took = time.perf_counter() - self._t0
        if not (QUIET or self.everything):
            print(f"{took:.1f} s", file=sys.stderr, flush=True)
        self._t0 = None
        return took


@contextlib.contextmanager
def compiling(family: str) -> Iterator[Compiling]:
    """Set up a run of ``family`` whose kernels are compiled where it says (not by a warm-up).

    On entry, the first time in this process, a cold cache of the family's main kernel prints
    :data:`NOTICE`; :meth:`Compiling.compile` compiles the kernels the run will call, with the
    types it will call them with, using every core (and prints the notice if the cache lacked
    some of them and it was not printed yet); the block's end ends the line with the seconds.
    """
    c = Compiling(family)
    try:
        yield c
    finally:
        c.end()
