"""PyTorch models, and DP-SGD through Opacus, as training algorithms for :func:`mia.run_audit`.

:class:`TorchAlgorithm` turns a factory of ``torch.nn.Module`` (features in, class logits out)
and training settings into the ``fit(X, y, seed)`` / ``loss(params, X, y)`` protocol of
:mod:`mia.training`. With ``dp=DPSGD(...)`` it trains with Opacus's ``PrivacyEngine``
(Poisson sampling, per-example clipping, Gaussian noise) and ``epsilon(delta, n)`` gives the eps
of Opacus's accountant, to report next to the posterior. Extra ``torch``
(``pip install 'bayes-dp[torch]'``: torch and opacus). torch and opacus are imported only when
an algorithm is built, so importing this module works without them.

Every model's randomness (initialisation, minibatch order, Poisson sampling, DP noise) comes from
the audit's ``numpy.random.Generator``, and the global torch generator is left as it was; the
same model is reproduced bit for bit with the same number of ``threads``.

Examples
--------
A small network for the 64 digits features (pickled to the workers of parallel backends, so the
factory must be importable there: a function in a module, ``functools.partial`` or a class)::

    import torch
    from mia.pytorch import TorchAlgorithm

    def net():
        return torch.nn.Sequential(
            torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
        )

    algo = TorchAlgorithm(net, epochs=50, learning_rate=0.01, momentum=0.9)
    res = mia.run_audit(algo, bases, n_models=100, directory="audit_torch")

    dp = TorchAlgorithm(net, epochs=50, dp=mia.DPSGD(noise_multiplier=1.0, clip_norm=1.0))
    dp.epsilon(1e-5, n=1000)  # Opacus RDP accountant
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np

from bayes_dp.core.validation import check_delta, check_positive_int, check_real

from .training import DPSGD, cross_entropy

__all__ = ["TorchAlgorithm"]

_ACCOUNTANTS = ("rdp", "prv", "gdp")


def _import_torch():
    try:
        import torch
    except ImportError as err:
        raise ImportError(
            "TorchAlgorithm needs torch, which is not installed: pip install 'bayes-dp[torch]'"
        ) from err
    return torch


def _import_opacus():
    try:
        import opacus
    except ImportError as err:
        raise ImportError(
            "DP-SGD with TorchAlgorithm needs opacus, which is not installed: "
            "pip install 'bayes-dp[torch]' (or pip install opacus)"
        ) from err
    return opacus


@contextmanager
def _torch_threads(torch, n: int):
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


class TorchAlgorithm:
    """A ``torch.nn.Module`` factory and SGD settings as a training algorithm.

    Parameters
    ----------
    module_fn : callable
        ``module_fn() -> torch.nn.Module`` mapping a float32 batch ``(m, d)`` to logits
        ``(m, n_classes)`` (start with ``torch.nn.Unflatten`` for image-shaped input). Called
        once per model under a seed drawn from the model's generator. Must be picklable for
        parallel backends.
    epochs : int
        Passes over the data (with ``dp``: ``ceil(n / batch_size)`` Poisson-sampled steps each).
    batch_size : int
        Minibatch size (with ``dp``: the expected batch size, sampling rate
        ``1 / ceil(n / batch_size)``).
    learning_rate, momentum, weight_decay : float
        ``torch.optim.SGD`` settings.
    dp : DPSGD, optional
        Train with DP-SGD through Opacus (noise multiplier and clip norm).
    threads : int
        Torch intra-op threads while training (1: one model per core; the previous setting is
        restored afterwards).

    Notes
    -----
    ``loss`` is the per-example cross-entropy of the logits, computed in float64 with
    :func:`mia.cross_entropy` as for the built-in models. ``fit`` returns the trained module
    (with ``dp``, Opacus's wrapper removed).
    """

    def __init__(
        self,
        module_fn: Callable[[], Any],
        *,
        epochs: int = 20,
        batch_size: int = 100,
        learning_rate: float = 0.01,
        momentum: float = 0.9,
        weight_decay: float = 0.0,
        dp: DPSGD | None = None,
        threads: int = 1,
    ) -> None:
        if not callable(module_fn):
            raise TypeError(
                f"`module_fn` must be callable (returning a torch.nn.Module); "
                f"found {type(module_fn).__name__}"
            )
        _import_torch()
        if dp is not None:
            if not isinstance(dp, DPSGD):
                raise TypeError(f"`dp` must be a mia.DPSGD or None; found {type(dp).__name__}")
            _import_opacus()
        self.module_fn = module_fn
        self.epochs = check_positive_int("epochs", epochs)
        self.batch_size = check_positive_int("batch_size", batch_size)
        self.learning_rate = check_real("learning_rate", learning_rate, low=0.0, low_open=True)
        self.momentum = check_real("momentum", momentum, low=0.0, high=1.0, high_open=True)
        self.weight_decay = check_real("weight_decay", weight_decay, low=0.0)
        self.dp = dp
        self.threads = check_positive_int("threads", threads)

    # -- description --------------------------------------------------------------------------
    def config(self) -> dict:
        """Return the settings as a JSON-friendly dict (the audit runner checks resumes with it).

        Holds the architecture (``repr`` of a module built with the global torch generator
        untouched) and the factory's name, so a resume with another network is refused.
        """
        torch = _import_torch()
        with torch.random.fork_rng(devices=[]):
            arch = repr(self.module_fn())
        fn = self.module_fn
        name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
        cfg = {
            "class": type(self).__name__,
            "module_fn": f"{getattr(fn, '__module__', '?')}.{name}",
            "module": arch,
            "epochs": self.epochs,
            "batch_size": self.batch_size,
            "learning_rate": self.learning_rate,
            "momentum": self.momentum,
            "weight_decay": self.weight_decay,
            "threads": self.threads,
        }
        if self.dp is not None:
            cfg["dp"] = {
                "noise_multiplier": self.dp.noise_multiplier,
                "clip_norm": self.dp.clip_norm,
            }
        return cfg

    def __repr__(self) -> str:
        fn = getattr(self.module_fn, "__qualname__", type(self.module_fn).__qualname__)
        return (
            f"TorchAlgorithm({fn}, epochs={self.epochs}, batch_size={self.batch_size}, "
            f"learning_rate={self.learning_rate}, momentum={self.momentum}, "
            f"weight_decay={self.weight_decay}, dp={self.dp!r}, threads={self.threads})"
        )

    # -- privacy accounting -------------------------------------------------------------------
    def steps(self, n: int) -> int:
        """Optimiser steps when training on ``n`` examples: ``epochs * ceil(n / batch_size)``."""
        return self.epochs * math.ceil(check_positive_int("n", n) / self.batch_size)

    def sample_rate(self, n: int) -> float:
        """Poisson sampling rate of DP-SGD on ``n`` examples, as Opacus sets it."""
        return 1.0 / math.ceil(check_positive_int("n", n) / self.batch_size)

    def epsilon(self, delta: float, n: int, *, accountant: str = "rdp") -> float:
        """Eps of Opacus's accountant for training on ``n`` examples at ``delta``.

        The same value as ``PrivacyEngine.get_epsilon(delta)`` after a ``fit`` on ``n`` rows
        (``steps(n)`` steps at rate ``sample_rate(n)``). This is deliberately Opacus's own
        accountant, not ``mia._accounting`` (dp-accounting, used by the numpy ``DPSGD``
        models), so that it equals the training run's report; the RDP values of the two agree
        within about 1% for the same settings.

        Parameters
        ----------
        delta : float
            Target delta in (0, 1).
        n : int
            Training-set size (use ``len(D) + 1``, the larger neighbour).
        accountant : {"rdp", "prv", "gdp"}
            Opacus's accountants.

        Returns
        -------
        float
        """
        if self.dp is None:
            raise ValueError("`epsilon` needs a DP-SGD algorithm; this one has dp=None")
        delta = check_delta(delta, positive=True)
        if accountant not in _ACCOUNTANTS:
            raise ValueError(f"`accountant` must be one of {_ACCOUNTANTS}; found {accountant!r}")
        _import_opacus()
        from opacus.accountants import create_accountant

        acc = create_accountant(accountant)
        acc.history = [(self.dp.noise_multiplier, self.sample_rate(n), self.steps(n))]
        return float(acc.get_epsilon(delta))

    # -- training -----------------------------------------------------------------------------
    def fit(self, X, y, seed: np.random.Generator):
        """Train one model on ``(X, y)`` with randomness from ``seed``; return the module."""
        return self.train(X, y, seed)[0]

    def train(self, X, y, seed: np.random.Generator):
        """Like ``fit``, and also return Opacus's ``PrivacyEngine`` (``None`` without ``dp``).

        Returns
        -------
        module : torch.nn.Module
        engine : opacus.PrivacyEngine or None
            Its ``get_epsilon(delta)`` is the accountant's eps of this run.
        """
        torch = _import_torch()
        if not isinstance(seed, np.random.Generator):
            raise TypeError(f"`seed` must be a numpy.random.Generator; found {type(seed).__name__}")
        X = np.asarray(X, dtype=np.float32)
        y = np.asarray(y, dtype=np.int64)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise ValueError(f"`X` must be (n, d) and `y` (n,); found {X.shape} and {y.shape}")
        s_init, s_sample, s_noise = (int(v) for v in seed.integers(0, 2**62, size=3))
        with _torch_threads(torch, self.threads), torch.random.fork_rng(devices=[]):
            torch.manual_seed(s_init)
            module = self.module_fn()
            if not isinstance(module, torch.nn.Module):
                raise TypeError(
                    f"`module_fn` must return a torch.nn.Module; found {type(module).__name__}"
                )
            Xt, yt = torch.tensor(X), torch.tensor(y)  # copies: inputs may be read-only
            opt = torch.optim.SGD(
                module.parameters(),
                lr=self.learning_rate,
                momentum=self.momentum,
                weight_decay=self.weight_decay,
            )
            if self.dp is None:
                return self._train_sgd(torch, module, opt, Xt, yt, seed), None
            return self._train_dp(torch, module, opt, Xt, yt, s_sample, s_noise)

    def _train_sgd(self, torch, module, opt, Xt, yt, rng):
        n, bs = len(Xt), self.batch_size
        module.train()
        for _ in range(self.epochs):
            perm = torch.from_numpy(rng.permutation(n))
            for s in range(0, n, bs):
                idx = perm[s : s + bs]
                opt.zero_grad(set_to_none=True)
                torch.nn.functional.cross_entropy(module(Xt[idx]), yt[idx]).backward()
                opt.step()
        return module.eval()

    def _train_dp(self, torch, module, opt, Xt, yt, s_sample, s_noise):
        from opacus import PrivacyEngine

        loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(Xt, yt),
            batch_size=self.batch_size,
            generator=torch.Generator().manual_seed(s_sample),  # Poisson sampling
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Secure RNG turned off")
            engine = PrivacyEngine(accountant="rdp")
        dp_module, dp_opt, dp_loader = engine.make_private(
            module=module,
            optimizer=opt,
            data_loader=loader,
            noise_multiplier=self.dp.noise_multiplier,
            max_grad_norm=self.dp.clip_norm,
            poisson_sampling=True,
            noise_generator=torch.Generator().manual_seed(s_noise),
        )
        dp_module.train()
        with warnings.catch_warnings():
            # Opacus's per-example gradient hooks fire on module outputs when the input needs
            # no gradient; torch warns about that every time, harmlessly
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            for _ in range(self.epochs):
                for xb, yb in dp_loader:
                    dp_opt.zero_grad(set_to_none=True)
                    # an empty Poisson batch is a step of noise alone (Opacus handles it)
                    torch.nn.functional.cross_entropy(dp_module(xb), yb).backward()
                    dp_opt.step()
        return dp_module.to_standard_module().eval(), engine

    def loss(self, params, X, y) -> np.ndarray:
        """Per-example cross-entropy (float64) of ``(X, y)`` under the trained module."""
        torch = _import_torch()
        X = np.asarray(X, dtype=np.float32)
        with _torch_threads(torch, self.threads), torch.no_grad():
            logits = params.eval()(torch.tensor(X)).numpy()
        return cross_entropy(logits, np.asarray(y))
