"""The audit runner: train models on many challenge bases, stream losses to disk, resume.

For challenge base ``b``, hypothesis ``h`` (0: trained on ``D``, 1: on ``D + {z}``) and model
index ``j``, the model's randomness comes from
``numpy.random.default_rng(SeedSequence(seed, spawn_key=(b, h, j)))`` with ``seed`` the audit's
integer root seed (given, or drawn once from a given Generator), so every model is
reproducible on its own, whatever the worker or the order of execution (bit for bit with the
same ``chunk_size``; built-in models trained in differently sized batches agree to float32
rounding). Models are
trained in chunks (tasks); each finished chunk's losses of ``z`` go to one ``.npy`` file (written
atomically), and a rerun of the same call skips the chunks already on disk. Trained parameters
are dropped as soon as the loss of ``z`` is computed, so memory does not grow with the number of
models.

It is long because it holds the resumable audit driver (manifest, checkpoints, the sequential, Ray
and Dask engines) in one place.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bayes_dp import AttackCounts, Evidence
from bayes_dp.core.validation import check_positive_int

from .data import ChallengeBase
from .lira import as_alphas, lira_logit
from .measure import cross_fed_counts

__all__ = ["AuditResult", "run_audit"]

_MANIFEST = "manifest.json"
_FORMAT = 1
STATISTICS = ("loss", "logit")


def _root_seed(seed) -> int:
    """Return the audit's integer root seed: ``seed`` itself, or one draw from a Generator."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**63))
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"`seed` must be a non-negative int or a numpy.random.Generator; found {seed!r}"
        )
    return check_positive_int("seed", seed, minimum=0)


def _model_rngs(seed: int, base: int, hyp: int, start: int, stop: int):
    return [
        np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(base, hyp, j)))
        for j in range(start, stop)
    ]


def _train_chunk(algorithm, X, y, z_x, z_y, seed, base, hyp, start, stop) -> np.ndarray:
    """Train models ``start..stop-1`` of (base, hyp) and return the loss of z under each."""
    rngs = _model_rngs(seed, base, hyp, start, stop)
    zx = np.asarray(z_x)[None]
    zy = np.array([z_y])
    if hasattr(algorithm, "fit_losses"):
        out = np.asarray(algorithm.fit_losses(X, y, zx, zy, rngs), dtype=np.float64)
        return out.reshape(len(rngs))
    losses = np.empty(len(rngs))
    for i, rng in enumerate(rngs):
        params = algorithm.fit(X, y, rng)
        losses[i] = float(np.asarray(algorithm.loss(params, zx, zy), dtype=np.float64).ravel()[0])
        del params
    return losses


def _algorithm_id(algorithm) -> str:
    if hasattr(algorithm, "config"):
        return json.dumps(algorithm.config(), sort_keys=True, default=str)
    # Without config() only the class is checked; its settings are the user's responsibility.
    cls = type(algorithm)
    return f"{cls.__module__}.{cls.__qualname__}"


def _chunk_path(directory: Path, base: int, hyp: int, chunk: int) -> Path:
    return directory / f"losses_b{base:04d}_h{hyp}_c{chunk:05d}.npy"


def _save_atomic(path: Path, arr: np.ndarray) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp_", suffix=".npy")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, arr, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


class _Progress:
    def __init__(self, total: int, done: int, report) -> None:
        self.total, self.done, self.start_done = total, done, done
        self.report = report
        self.t0 = self.last = time.perf_counter()

    def update(self, n: int) -> None:
        self.done += n
        if callable(self.report):
            self.report(self.done, self.total)
            return
        if not self.report:
            return
        now = time.perf_counter()
        if now - self.last < 2.0 and self.done < self.total:
            return
        self.last = now
        rate = (self.done - self.start_done) / max(now - self.t0, 1e-9)
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        print(
            f"audit: {self.done}/{self.total} models ({100 * self.done / self.total:.0f}%), "
            f"{rate:.1f} models/s, eta {eta:.0f} s",
            file=sys.stderr,
            flush=True,
        )


def _run_task(algorithm, data, seed, task):
    """Train the chunk ``task = (base, hyp, chunk, start, stop)`` on its base's ``data``.

    ``data`` is ``(X, y, z_x, z_y)`` of that one base; returns ``(task, losses)``.
    """
    b, h, _c, start, stop = task
    X, y, z_x, z_y = data
    if h == 1:
        X, y = np.vstack([X, z_x[None]]), np.append(y, z_y)
    return task, _train_chunk(algorithm, X, y, z_x, z_y, seed, b, h, start, stop)


def _import_ray():
    try:
        import ray
    except ImportError as err:
        raise ImportError(
            "backend='ray' needs ray, which is not installed: pip install 'bayes-dp[ray]'"
        ) from err
    return ray


def _import_distributed(what: str):
    try:
        import distributed
    except ImportError as err:
        raise ImportError(
            f"{what} needs dask.distributed, which is not installed: pip install 'bayes-dp[dask]'"
        ) from err
    return distributed


def _is_dask_client(backend) -> bool:
    return hasattr(backend, "submit") and hasattr(backend, "scatter")


def _resolve_backend(backend):
    """Check the backend and its extra before anything is written; return the engine."""
    if isinstance(backend, str):
        if backend in ("sequential", "joblib"):
            return backend
        if backend == "ray":
            _import_ray()
            return "ray"
        if backend == "dask":
            distributed = _import_distributed("backend='dask'")
            try:
                return distributed.default_client()
            except ValueError:
                raise ValueError(
                    "backend='dask' uses the current dask.distributed Client and none is "
                    "running; create one first (client = Client(...), or "
                    "Client('tcp://scheduler:8786') for an existing cluster) and pass "
                    "backend=client"
                ) from None
    elif _is_dask_client(backend):
        _import_distributed("a Dask backend")
        return backend
    raise ValueError(
        "`backend` must be 'joblib', 'sequential', 'ray', 'dask' or a dask.distributed.Client; "
        f"found {backend!r}"
    )


def _run_sequential(algorithm, data, seed, tasks):
    for t in tasks:
        yield _run_task(algorithm, data[t[0]], seed, t)


def _run_joblib(algorithm, data, seed, tasks, n_jobs):
    from joblib import Parallel, delayed

    if n_jobs == 1:
        yield from _run_sequential(algorithm, data, seed, tasks)
        return
    # each task carries its own base only (about 265 kB for 999 digits rows)
    par = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    yield from par(delayed(_run_task)(algorithm, data[t[0]], seed, t) for t in tasks)


def _run_ray(algorithm, data, seed, tasks, n_jobs):
    ray = _import_ray()
    if not ray.is_initialized():
        ray.init(num_cpus=None if n_jobs in (None, -1) else n_jobs, include_dashboard=False)
    # the model and each base go into the object store once; tasks get references
    algo_ref = ray.put(algorithm)
    refs: dict[int, object] = {}
    remote = ray.remote(_run_task)
    pending = []
    for t in tasks:
        if t[0] not in refs:
            refs[t[0]] = ray.put(data[t[0]])
        pending.append(remote.remote(algo_ref, refs[t[0]], seed, t))
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])


def _run_dask(algorithm, data, seed, tasks, client):
    distributed = _import_distributed("a Dask backend")
    # the model and each base are scattered to the cluster once; tasks get futures
    [algo_fut] = client.scatter([algorithm], hash=False)
    futs: dict[int, object] = {}
    needed = sorted({t[0] for t in tasks})
    for b, f in zip(needed, client.scatter([data[b] for b in needed], hash=False), strict=True):
        futs[b] = f
    pending = [client.submit(_run_task, algo_fut, futs[t[0]], seed, t, pure=False) for t in tasks]
    for fut in distributed.as_completed(pending):
        yield fut.result()
        fut.release()


def run_audit(
    algorithm,
    bases: Sequence[ChallengeBase],
    n_models: int,
    directory: str | os.PathLike,
    *,
    seed: int | np.random.Generator = 0,
    chunk_size: int = 20,
    backend="joblib",
    n_jobs: int = -1,
    max_models: int | None = None,
    progress: bool | Callable[[int, int], None] = True,
) -> AuditResult:
    """Train ``n_models`` models per hypothesis on every base and record the loss of ``z``.

    Parameters
    ----------
    algorithm : TrainingAlgorithm
        Anything with ``fit(X, y, seed)`` and ``loss(params, X, y)`` (see :mod:`mia.training`);
        ``fit_losses`` is used when present. Must be picklable for parallel backends. A
        ``config()`` method returning a JSON-friendly dict lets a resume check the settings;
        without one only the class name is checked.
    bases : sequence of ChallengeBase
        The challenge bases ``(D, z)``.
    n_models : int
        ``N``, models per hypothesis per base (>= 3 for the cross-fed measurement).
    directory : path
        Where losses are stored (created if needed). Rerunning with the same arguments resumes;
        different arguments on a non-empty directory raise ``ValueError``.
    seed : int or numpy.random.Generator
        Root seed; model ``(b, h, j)`` uses ``SeedSequence(seed, spawn_key=(b, h, j))``. A
        Generator is used once, to draw the root seed (``int(seed.integers(2**63))``), so the
        same generator state gives the same audit. The root seed is recorded in the
        directory's ``manifest.json`` (:attr:`AuditResult.seed`): to resume an audit started
        from a Generator, pass that int (or a generator in the same state).
    chunk_size : int
        Models per task (trained together, saved in one file).
    backend : {"joblib", "sequential", "ray", "dask"} or dask.distributed.Client
        Where tasks run. ``"joblib"`` (default) uses local processes; ``"ray"`` uses the Ray
        runtime of this process (``ray.init(address=...)`` first to use a cluster), starting a
        local one if none is running; a Dask ``Client`` submits to its cluster (``"dask"``: the
        current default client). The model and each base's data are sent to Ray's object store
        (``ray.put``) or scattered to Dask's workers once, and each task receives references,
        so the driver's memory does not grow with the number of tasks. Results come back to
        this process, which writes them. A backend whose extra is missing raises
        ``ImportError`` before anything is written.
    n_jobs : int
        Parallel workers for joblib (``-1``: all cores) and for a Ray runtime started here.
    max_models : int, optional
        Train at most this many new models in this call, then return (a partial result that a
        later call completes).
    progress : bool or callable
        Print progress to stderr (``True``), stay quiet (``False``), or call
        ``progress(done_models, total_models)`` after every chunk.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> import tempfile
    >>> from mia import SoftmaxRegression, draw_challenge_bases, load_digits
    >>> X, y = load_digits()
    >>> bases = draw_challenge_bases(X, y, 2, size=200, seed=0)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     res = run_audit(SoftmaxRegression(epochs=2), bases, 5, d, backend="sequential",
    ...                     progress=False)
    ...     counts = res.counts(0.1)
    >>> counts.n_neg.tolist()
    [5, 5]

    A Generator gives the root seed (one draw), recorded for a resume:

    >>> import numpy as np
    >>> with tempfile.TemporaryDirectory() as d:
    ...     res = run_audit(SoftmaxRegression(epochs=2), bases[:1], 3, d,
    ...                     seed=np.random.default_rng(7), backend="sequential", progress=False)
    ...     res.seed == int(np.random.default_rng(7).integers(2**63))
    True
    """
    bases = list(bases)
    if not bases:
        raise ValueError("`bases` is empty; give at least one ChallengeBase")
    for i, b in enumerate(bases):
        if not isinstance(b, ChallengeBase):
            raise TypeError(f"`bases[{i}]` must be a ChallengeBase; found {type(b).__name__}")
    if not (
        hasattr(algorithm, "fit_losses")
        or (hasattr(algorithm, "fit") and hasattr(algorithm, "loss"))
    ):
        raise TypeError(
            "`algorithm` must have fit(X, y, seed) and loss(params, X, y) (or fit_losses); "
            f"found {type(algorithm).__name__}"
        )
    n_models = check_positive_int("n_models", n_models)
    from_generator = isinstance(seed, np.random.Generator)
    seed = _root_seed(seed)
    chunk_size = check_positive_int("chunk_size", chunk_size)
    if max_models is not None:
        max_models = check_positive_int("max_models", max_models, minimum=0)
    # the backend and its extra are checked before anything is written
    engine = _resolve_backend(backend)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    manifest = {
        "format": _FORMAT,
        "algorithm": _algorithm_id(algorithm),
        "n_bases": len(bases),
        "n_models": n_models,
        "seed": seed,
        "chunk_size": chunk_size,
        "bases": [b.fingerprint() for b in bases],
    }
    mpath = directory / _MANIFEST
    if mpath.exists():
        old = json.loads(mpath.read_text())
        diff = [k for k in manifest if old.get(k) != manifest[k]]
        if diff:
            hint = ""
            if "seed" in diff and from_generator:
                hint = (
                    f" (the root seed drawn from the Generator is {seed}, the audit's is "
                    f"{old.get('seed')}: pass seed={old.get('seed')} to resume it)"
                )
            raise ValueError(
                f"`directory` {str(directory)!r} holds an audit with different settings "
                f"({', '.join(diff)}){hint}; use a new directory to start another audit"
            )
    else:
        tmp = mpath.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(manifest, indent=1))
        os.replace(tmp, mpath)

    n_chunks = math.ceil(n_models / chunk_size)
    pending = []
    done_models = 0
    for b in range(len(bases)):
        for h in (0, 1):
            for c in range(n_chunks):
                start, stop = c * chunk_size, min(n_models, (c + 1) * chunk_size)
                if _chunk_path(directory, b, h, c).exists():
                    done_models += stop - start
                else:
                    pending.append((b, h, c, start, stop))
    if max_models is not None:
        keep, budget = [], max_models
        for t in pending:
            if t[4] - t[3] > budget:
                break
            keep.append(t)
            budget -= t[4] - t[3]
        pending = keep

    total = len(bases) * 2 * n_models
    bar = _Progress(total, done_models, progress)
    data = [(b.X, b.y, b.z_x, b.z_y) for b in bases]
    if pending:
        if engine == "sequential":
            results = _run_sequential(algorithm, data, seed, pending)
        elif engine == "joblib":
            results = _run_joblib(algorithm, data, seed, pending, n_jobs)
        elif engine == "ray":
            results = _run_ray(algorithm, data, seed, pending, n_jobs)
        else:
            results = _run_dask(algorithm, data, seed, pending, engine)
        for (b, h, c, start, stop), losses in results:
            losses = np.asarray(losses, dtype=np.float64)
            if losses.shape != (stop - start,):
                raise ValueError(
                    f"the algorithm returned {losses.shape} losses for {stop - start} models"
                )
            _save_atomic(_chunk_path(directory, b, h, c), losses)
            bar.update(stop - start)
    return AuditResult.load(directory)


@dataclass(frozen=True, eq=False)
class AuditResult:
    """Losses of ``z`` under every trained model, and the attack counts they give.

    Attributes
    ----------
    losses : numpy.ndarray, shape (n_bases, 2, n_models)
        ``losses[b, h, j]``: loss of ``z_b`` under model ``j`` trained under hypothesis ``h``
        (0: on ``D``, 1: on ``D + {z}``); NaN where the model is not trained yet.
    directory : pathlib.Path
        Where the losses are stored.
    """

    losses: np.ndarray
    directory: Path

    @classmethod
    def load(cls, directory: str | os.PathLike) -> AuditResult:
        """Read an audit (complete or not) from ``directory``."""
        directory = Path(directory)
        mpath = directory / _MANIFEST
        if not mpath.exists():
            raise ValueError(f"`directory` {str(directory)!r} holds no audit ({_MANIFEST} missing)")
        m = json.loads(mpath.read_text())
        n_b, n, cs = m["n_bases"], m["n_models"], m["chunk_size"]
        losses = np.full((n_b, 2, n), np.nan)
        for b in range(n_b):
            for h in (0, 1):
                for c in range(math.ceil(n / cs)):
                    p = _chunk_path(directory, b, h, c)
                    if p.exists():
                        losses[b, h, c * cs : min(n, (c + 1) * cs)] = np.load(p, allow_pickle=False)
        losses.flags.writeable = False
        return cls(losses=losses, directory=directory)

    @property
    def seed(self) -> int:
        """The audit's integer root seed (recorded in ``manifest.json``; pass it to resume)."""
        return int(json.loads((self.directory / _MANIFEST).read_text())["seed"])

    @property
    def n_bases(self) -> int:
        """Number of challenge bases."""
        return self.losses.shape[0]

    @property
    def n_models(self) -> int:
        """Models per hypothesis per base."""
        return self.losses.shape[2]

    @property
    def complete(self) -> bool:
        """Whether every model has been trained."""
        return not np.isnan(self.losses).any()

    def statistic(self, kind: str = "loss") -> np.ndarray:
        """Per-model attack statistic: the raw loss, or the LiRA logit (:func:`mia.lira_logit`)."""
        if kind not in STATISTICS:
            raise ValueError(f"`statistic` must be one of {STATISTICS}; found {kind!r}")
        if not self.complete:
            missing = int(np.isnan(self.losses).sum())
            raise ValueError(
                f"the audit in {str(self.directory)!r} is incomplete ({missing} models missing); "
                "rerun run_audit with the same arguments to finish it"
            )
        return self.losses if kind == "loss" else lira_logit(self.losses)

    def error_curves(self, alphas, statistic: str = "loss") -> tuple[np.ndarray, np.ndarray]:
        """Cross-fed counts (Alg. 5) for a grid of target alphas (paper Fig. 4).

        Returns
        -------
        fp, fn : numpy.ndarray of int64, shape (n_bases, len(alphas))
        """
        a = as_alphas(alphas)
        s = self.statistic(statistic)
        fp = np.empty((self.n_bases, a.size), dtype=np.int64)
        fn = np.empty_like(fp)
        for b in range(self.n_bases):
            fp[b], fn[b] = cross_fed_counts(s[b, 0], s[b, 1], a)
        return fp, fn

    def counts(self, alpha: float, statistic: str = "loss") -> AttackCounts:
        """Cross-fed ``AttackCounts`` at target type-I error ``alpha``, one row per base."""
        a = as_alphas(alpha)
        if a.size != 1:
            raise ValueError(f"`alpha` must be a single value; found {a.size} values")
        fp, fn = self.error_curves(a, statistic)
        return AttackCounts(fp=fp[:, 0], n_neg=self.n_models, fn=fn[:, 0], n_pos=self.n_models)

    def to_evidence(
        self,
        alpha: float,
        *,
        name: str = "lira",
        likelihood: str = "bivariate_normal",
        statistic: str = "loss",
        **kwargs,
    ) -> Evidence:
        """Return the counts at ``alpha`` as a :class:`bayes_dp.Evidence` group.

        Cross-fed decisions share shadow models and are correlated, hence the
        ``"bivariate_normal"`` likelihood (paper eq. 7) by default. ``kwargs`` go to
        ``Evidence`` (``strength``, ``fix``).
        """
        return Evidence(self.counts(alpha, statistic), likelihood=likelihood, name=name, **kwargs)
