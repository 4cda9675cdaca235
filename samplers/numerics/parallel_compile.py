"""Compile numba kernels into the on-disk cache in worker processes, side by side.

numba compiles one function at a time in a process (a global lock), but its on-disk cache is
shared between processes: a kernel compiled and saved by one process is loaded by another in a
fraction of a second. :func:`compile_all` takes the kernels a run will call with their argument
types and compiles the first one in this process while worker processes (``python -m
samplers.numerics.parallel_compile``, one per spare core) start; the others then go to whichever
process is free, this one included, and this process finally loads what the workers saved. A
kernel whose callees another process has saved links them from the cache, so independent
kernels cost one compile each; kernels that share uncompiled callees compile those twice
(hence the first kernel, the one every other calls, is compiled alone).

The compiled code does not depend on the process that compiled it: the cache holds the same
LLVM bitcode that callers link, so the draws are the same as with one process. When no worker
can be started (or one fails), this process compiles what is left. Numpy, numba and the
standard library only.
"""

from __future__ import annotations

import base64
import importlib
import os
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["compile_all", "in_cache", "signature"]


def signature(args) -> tuple:
    """Return the numba types of ``args`` (the signature a call with them compiles)."""
    from numba import typeof

    return tuple(typeof(a) for a in args)


def in_cache(kernel, sig) -> bool | None:
    """Return whether ``kernel`` has ``sig`` compiled in this process or in numba's disk cache.

    None when it cannot tell (caching off, or numba internals that changed).
    """
    if sig in kernel.overloads:
        return True
    try:
        cache = kernel._cache
        key = cache._index_key(sig, kernel.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # numba internals: any failure means "cannot tell"
        return None


def _name(kernel) -> tuple[str, str]:
    return kernel.py_func.__module__, kernel.py_func.__name__


def _start_worker(jobs: list) -> subprocess.Popen | None:
    """Start one worker holding ``jobs`` [(module, name, sig)]; None when it cannot start."""
    root = str(Path(__file__).resolve().parents[2])  # the folder holding ``samplers``
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in sys.path if p])
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "samplers.numerics.parallel_compile"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        payload = base64.b64encode(pickle.dumps(jobs)).decode("ascii")
        proc.stdin.write(payload + "\n")
        proc.stdin.flush()
    except Exception:
        return None
    return proc


def compile_all(kernels, *, workers: int | None = None) -> dict:
    """Compile ``kernels`` [(dispatcher, signature)] (those not cached), using spare cores.

    The first kernel is compiled here at once; worker processes (``workers``, default: the
    cores less one, at most one per remaining kernel) take the others from a shared queue in
    order, as does this process when it is free; then this process loads the workers' results
    from the cache (or compiles what a worker could not). Returns a dict: ``seconds`` per
    kernel name as measured by whichever process compiled it, ``where`` ("main" or
    "worker"), and ``workers`` (how many ran).
    """
    cached = [in_cache(k, s) for k, s in kernels]
    todo = [ks for ks, c in zip(kernels, cached, strict=True) if not c]
    out = {"seconds": {}, "where": {}, "workers": 0}
    if not todo:
        return out
    n_workers = (os.cpu_count() or 1) - 1 if workers is None else int(workers)
    n_workers = max(0, min(n_workers, len(todo) - 1))
    if any(c is None for c in cached):  # no disk cache to share: workers would be in vain
        n_workers = 0
    procs = []
    if n_workers:
        spec = [(*_name(k), s) for k, s in todo]
        procs = [p for p in (_start_worker(spec) for _ in range(n_workers)) if p is not None]
    out["workers"] = len(procs)
    queue = list(range(1, len(todo)))
    lock = threading.Lock()
    first_done = threading.Event()

    def record(i, secs, where):
        name = ".".join(_name(todo[i][0]))
        out["seconds"][name] = secs
        out["where"][name] = where

    def feed(proc):
        """Send queued kernels to ``proc`` one at a time, after the first kernel is done."""
        first_done.wait()
        try:
            while True:
                with lock:
                    if not queue:
                        break
                    i = queue.pop(0)
                proc.stdin.write(f"{i}\n")
                proc.stdin.flush()
                reply = proc.stdout.readline().split()
                if len(reply) == 3 and reply[0] == "ok" and int(reply[1]) == i:
                    record(i, float(reply[2]), "worker")
                else:  # the worker failed: this process compiles it at the end
                    break
        except Exception:
            pass
        finally:
            try:
                proc.stdin.close()
            except Exception:
                pass

    threads = [threading.Thread(target=feed, args=(p,), daemon=True) for p in procs]
    for t in threads:
        t.start()
    try:
        t0 = time.perf_counter()
        todo[0][0].compile(todo[0][1])
        record(0, time.perf_counter() - t0, "main")
        first_done.set()
        while True:
            with lock:
                if not queue:
                    break
                i = queue.pop(0)
            t0 = time.perf_counter()
            todo[i][0].compile(todo[i][1])
            record(i, time.perf_counter() - t0, "main")
        for t in threads:
            t.join()
        # load what the workers saved (compile what they did not)
        for k, s in todo:
            k.compile(s)
    finally:
        first_done.set()
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            for pipe in (p.stdin, p.stdout):  # closed here, not left to the garbage collector
                try:
                    pipe.close()
                except Exception:
                    pass
    return out


def _worker() -> None:
    """Worker: read the job list, then job numbers; compile each, answer ``ok i seconds``."""
    jobs = pickle.loads(base64.b64decode(sys.stdin.readline()))
    for line in sys.stdin:
        i = int(line)
        module, name, sig = jobs[i]
        t0 = time.perf_counter()
        getattr(importlib.import_module(module), name).compile(sig)
        print(f"ok {i} {time.perf_counter() - t0:.3f}", flush=True)


if __name__ == "__main__":
    try:
        _worker()
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group; the parent reports it
        pass
