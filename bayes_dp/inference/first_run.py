"""Whether a run will compile numba's kernels, and one line on stderr when it does.

The kernels in ``samplers/`` are compiled by numba on their first call and cached on disk
(``cache=True``: in ``__pycache__`` next to their modules, or under ``NUMBA_CACHE_DIR``), so
only the first run on a machine (or after the code changed) pays the compilation, tens of
seconds. "First run" is read from numba's cache itself: before a family of kernels is first
used in a process, :func:`compile_first` looks up the cache index of the family's main kernel
(the function called from Python that runs the chains or the grid). When the index has no
entry for the kernel's current source (missing, or stale after an upgrade), the run will
compile: one line on stderr says so, the caller's warm-up compiles the kernels on tiny inputs
(so that no progress bar interleaves), and the line ends with the seconds it took. A warm
cache prints nothing. What it cannot see: a cache that holds the main kernel for one
likelihood but not another (binomial runs before a first bivariate-normal one) compiles the
rest without a notice; :func:`bayes_dp.precompile` covers every likelihood.

A leaf of the package: it imports nothing of ``bayes_dp``.
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
import warnings
from collections.abc import Callable

#: Kernel family -> (module, function): the main kernel whose cache index tells whether the
#: family was compiled before.
MAIN_KERNELS = {
    "exact": ("samplers.exact.chain", "advance"),
    "mhaar": ("samplers.mhaar.chain", "run_chain"),
    "plan": ("samplers.exact.grid", "log_lik_points"),
}
#: The line printed on a first run, before the compilation's time.
NOTICE = "bayes-dp: compiling kernels (first run; cached afterwards) ..."
#: Set by ``bayes-dp --quiet``: no notice on stderr.
QUIET = False

_lock = threading.RLock()
_seen: set[str] = set()  # families already looked up (or compiled) in this process


def kernel_cached(family: str) -> bool | None:
    """Return whether numba's cache holds the main kernel of ``family`` for its current source.

    None when it cannot tell (a numba without these internals, caching off): then no notice.
    """
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
