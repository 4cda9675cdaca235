"""Training algorithms audited by the MIA: a small protocol and fast built-in models.

A *training algorithm* maps a dataset and a random generator to parameters, and gives the loss of
any point under those parameters. Anything with these two methods can be audited::

    class TrainingAlgorithm(Protocol):
        def fit(self, X, y, seed: np.random.Generator) -> Any: ...
        def loss(self, params, X, y) -> np.ndarray: ...   # one loss per row of X

Optionally, ``fit_losses(X, y, X_eval, y_eval, seeds) -> ndarray (len(seeds), len(X_eval))``
trains one model per generator in ``seeds`` and returns the eval losses directly; the audit
runner uses it when present (the built-ins train many models at once with it).

PyTorch models (and DP-SGD through Opacus) are ready-made in :class:`mia.pytorch.TorchAlgorithm`
(extra ``torch``). A hand-written adapter needs no more than this::

    import torch

    class TorchMLP:
        def __init__(self, epochs=20):
            self.epochs = epochs

        def fit(self, X, y, seed):
            torch.manual_seed(int(seed.integers(2**63)))   # derive everything from `seed`
            net = torch.nn.Sequential(torch.nn.Linear(X.shape[1], 128), torch.nn.ReLU(),
                                      torch.nn.Linear(128, 10))
            opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
            Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
            for _ in range(self.epochs):
                for idx in torch.as_tensor(seed.permutation(len(X))).split(100):
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(net(Xt[idx]), yt[idx]).backward()
                    opt.step()
            return net

        def loss(self, net, X, y):
            with torch.no_grad():
                out = torch.nn.functional.cross_entropy(
                    net(torch.as_tensor(X)), torch.as_tensor(y), reduction="none")
            return out.numpy()

    result = mia.run_audit(TorchMLP(), bases, n_models=100, directory="audit_torch")

Keep the returned parameters small or return a handle: the runner calls ``loss`` right after
``fit`` and drops the parameters, so memory stays flat in the number of models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from bayes_dp._validation import check_positive_int, check_real

from ._accounting import ACCOUNTANTS, poisson_gaussian_epsilon

__all__ = ["DPSGD", "MLP", "SoftmaxRegression", "TrainingAlgorithm", "cross_entropy"]


@runtime_checkable
class TrainingAlgorithm(Protocol):
    """What the audit runner needs from a training algorithm (see the module docstring)."""

    def fit(self, X: np.ndarray, y: np.ndarray, seed: np.random.Generator) -> Any:
        """Train on ``(X, y)`` using only ``seed`` for randomness; return the parameters."""
        ...

    def loss(self, params: Any, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Return the loss of each row of ``(X, y)`` under ``params``."""
        ...


def cross_entropy(logits, labels) -> np.ndarray:
    """Per-example cross-entropy ``logsumexp(z) - z_y`` in float64, shape ``logits.shape[:-1]``.

    Examples
    --------
    >>> round(float(cross_entropy(np.zeros((1, 2)), np.array([0]))[0]), 6)
    0.693147
    """
    z = np.asarray(logits, dtype=np.float64)
    y = np.asarray(labels)
    mx = z.max(axis=-1, keepdims=True)
    lse = (mx + np.log(np.exp(z - mx).sum(axis=-1, keepdims=True)))[..., 0]
    zy = np.take_along_axis(z, np.broadcast_to(y, z.shape[:-1])[..., None], axis=-1)[..., 0]
    return np.maximum(lse - zy, 0.0)


@dataclass(frozen=True)
class DPSGD:
    """DP-SGD settings: Poisson subsampling, per-example clipping, Gaussian noise.

    Each step includes every example independently with probability ``batch_size / n``, clips
    each example's gradient to L2 norm ``clip_norm``, sums, adds ``N(0, (noise_multiplier *
    clip_norm)^2)`` to every coordinate and divides by the expected batch size. Per-example norms
    use the exact factorisation ``||a (x) g||^2 = ||a||^2 ||g||^2`` of each dense layer, so no
    per-example gradient is materialised. Noise is float32 from numpy's generator: fine for
    auditing, not a hardened implementation against floating-point attacks.

    Parameters
    ----------
    noise_multiplier : float
        Standard deviation of the noise relative to ``clip_norm`` (> 0).
    clip_norm : float
        Per-example gradient L2 bound (> 0).
    """

    noise_multiplier: float = 1.0
    clip_norm: float = 1.0

    def __post_init__(self) -> None:
        check_real("noise_multiplier", self.noise_multiplier, low=0.0, low_open=True)
        check_real("clip_norm", self.clip_norm, low=0.0, low_open=True)


def _glorot(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    lim = math.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-lim, lim, size=(fan_in, fan_out))


class _Network:
    """Softmax output network with an optional ReLU hidden layer, trained many-at-once.

    Parameters are stacked along a leading model axis; every model draws its minibatch order,
    its initialisation (when random), its DP noise and its output perturbation from its own
    generator, so a model's result does not depend on which other models share its batch.
    """

    hidden: int | None = None

    def __init__(
        self,
        *,
        epochs: int = 20,
        learning_rate: float = 0.01,
        momentum: float = 0.9,
        batch_size: int = 100,
        init: str = "fixed",
        init_seed: int = 0,
        output_noise: float = 0.0,
        dp: DPSGD | None = None,
        n_classes: int = 10,
    ) -> None:
        self.epochs = check_positive_int("epochs", epochs)
        self.learning_rate = check_real("learning_rate", learning_rate, low=0.0, low_open=True)
        self.momentum = check_real("momentum", momentum, low=0.0, high=1.0, high_open=True)
        self.batch_size = check_positive_int("batch_size", batch_size)
        if init not in ("fixed", "random"):
            raise ValueError(f"`init` must be 'fixed' or 'random'; found {init!r}")
        self.init = init
        self.init_seed = check_positive_int("init_seed", init_seed, minimum=0)
        self.output_noise = check_real("output_noise", output_noise, low=0.0)
        if dp is not None and not isinstance(dp, DPSGD):
            raise TypeError(f"`dp` must be a DPSGD or None; found {type(dp).__name__}")
        self.dp = dp
        self.n_classes = check_positive_int("n_classes", n_classes, minimum=2)

    # -- description --------------------------------------------------------------------------
    def config(self) -> dict:
        """Settings as a JSON-friendly dict (stored by the audit runner to check resumes)."""
        cfg = {
            "class": type(self).__name__,
            "hidden": self.hidden,
            "epochs": self.epochs,
            "learning_rate": self.learning_rate,
            "momentum": self.momentum,
            "batch_size": self.batch_size,
            "init": self.init,
            "init_seed": self.init_seed,
            "output_noise": self.output_noise,
            "n_classes": self.n_classes,
        }
        if self.dp is not None:
            cfg["dp"] = {
                "noise_multiplier": self.dp.noise_multiplier,
                "clip_norm": self.dp.clip_norm,
            }
        return cfg

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items() if k not in ("class",))
        return f"{type(self).__name__}({args})"

    def steps(self, n: int) -> int:
        """Number of optimiser steps when training on ``n`` examples."""
        return self.epochs * math.ceil(n / self.batch_size)

    def epsilon(self, delta: float, n: int, *, accountant: str = "rdp") -> float:
        """Theoretical epsilon of the DP-SGD variant at ``delta`` (needs ``dp-accounting``).

        Composes ``steps(n)`` Poisson-subsampled Gaussian mechanisms (rate ``batch_size / n``,
        add/remove neighbours) with ``dp_accounting``'s RDP accountant (orders
        ``mia._accounting.RDP_ORDERS``) or its PLD accountant, through the package's one
        accountant wrapper ``mia._accounting.poisson_gaussian_epsilon``.

        Parameters
        ----------
        delta : float
            Target delta in (0, 1).
        n : int
            Training-set size (use ``len(D) + 1``, the larger neighbour).
        accountant : {"rdp", "pld"}

        Returns
        -------
        float
        """
        if self.dp is None:
            raise ValueError("`epsilon` needs a DP-SGD algorithm; this one has dp=None")
        delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        n = check_positive_int("n", n)
        if accountant not in ACCOUNTANTS:
            raise ValueError(f"`accountant` must be 'rdp' or 'pld'; found {accountant!r}")
        q = min(1.0, self.batch_size / n)
        history = [(self.dp.noise_multiplier, q, self.steps(n))]
        return poisson_gaussian_epsilon(history, delta, accountant=accountant)

    # -- training -----------------------------------------------------------------------------
    def _shapes(self, d: int) -> list[tuple[int, int]]:
        k = self.n_classes
        if self.hidden is None:
            return [(d, k)]
        return [(d, self.hidden), (self.hidden, k)]

    def _init(self, d: int, rngs: list[np.random.Generator]) -> list[np.ndarray]:
        """Stacked [W1, b1, (W2, b2)] with a leading model axis, float32."""
        shapes = self._shapes(d)
        b = len(rngs)
        params = []
        if self.init == "fixed":
            rng = np.random.default_rng(self.init_seed)
            for fi, fo in shapes:
                params += [np.broadcast_to(_glorot(rng, fi, fo), (b, fi, fo)), np.zeros((b, fo))]
        else:
            draws = [[_glorot(r, fi, fo) for fi, fo in shapes] for r in rngs]
            for li, (_, fo) in enumerate(shapes):
                params += [np.stack([dr[li] for dr in draws]), np.zeros((b, fo))]
        return [np.array(p, dtype=np.float32) for p in params]

    def _forward(self, params, Xb):
        """Logits (B, m, k) and hidden activations (or None)."""
        if self.hidden is None:
            w, b = params
            return Xb @ w + b[:, None, :], None
        w1, b1, w2, b2 = params
        h = np.maximum(Xb @ w1 + b1[:, None, :], 0.0)
        return h @ w2 + b2[:, None, :], h

    def _backward(self, params, Xb, h, g):
        """Gradients of sum_i <g_i, logits_i> w.r.t. the parameters (g: (B, m, k))."""
        xt = Xb.transpose(0, 2, 1)
        if self.hidden is None:
            return [xt @ g, g.sum(axis=1)]
        w1, b1, w2, b2 = params
        dh = (g @ w2.transpose(0, 2, 1)) * (h > 0)
        return [xt @ dh, dh.sum(axis=1), h.transpose(0, 2, 1) @ g, g.sum(axis=1)]

    def _grads(self, params, Xb, Yb, weights):
        logits, h = self._forward(params, Xb)
        z = logits - logits.max(axis=-1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=-1, keepdims=True)
        g = p - Yb  # d loss_i / d logits_i
        if self.dp is None:
            g *= weights[..., None]
            return self._backward(params, Xb, h, g)
        # per-example gradient norms without materialising per-example gradients:
        # ||a_i (x) g_i||^2 = ||a_i||^2 ||g_i||^2 for each linear layer, plus bias terms.
        gg = (g * g).sum(axis=-1)
        if self.hidden is None:
            norm2 = ((Xb * Xb).sum(axis=-1) + 1.0) * gg
        else:
            w2 = params[2]
            dh = (g @ w2.transpose(0, 2, 1)) * (h > 0)
            norm2 = ((h * h).sum(axis=-1) + 1.0) * gg + ((Xb * Xb).sum(axis=-1) + 1.0) * (
                dh * dh
            ).sum(axis=-1)
        clip = np.minimum(1.0, self.dp.clip_norm / np.sqrt(np.maximum(norm2, 1e-30)))
        g *= (clip * weights)[..., None]
        return self._backward(params, Xb, h, g)

    def _train(self, X, y, rngs):
        X = np.asarray(X, dtype=np.float32)
        n, d = X.shape
        b = len(rngs)
        onehot = np.eye(self.n_classes, dtype=np.float32)[y]
        params = self._init(d, rngs)
        vel = [np.zeros_like(p) for p in params]
        lr, mom, bs = np.float32(self.learning_rate), np.float32(self.momentum), self.batch_size
        steps_per_epoch = math.ceil(n / bs)
        for _ in range(self.epochs):
            if self.dp is None:
                perms = np.stack([r.permutation(n) for r in rngs])
            for s in range(steps_per_epoch):
                if self.dp is None:
                    idx = perms[:, s * bs : (s + 1) * bs]
                    weights = np.full(idx.shape, 1.0 / idx.shape[1], dtype=np.float32)
                else:
                    q = min(1.0, bs / n)
                    picks = [np.flatnonzero(r.random(n) < q) for r in rngs]
                    m = max(1, max(p.size for p in picks))
                    idx = np.zeros((b, m), dtype=np.int64)
                    weights = np.zeros((b, m), dtype=np.float32)
                    for i, p in enumerate(picks):
                        idx[i, : p.size] = p
                        weights[i, : p.size] = 1.0
                grads = self._grads(params, X[idx], onehot[idx], weights)
                if self.dp is not None:
                    std = self.dp.noise_multiplier * self.dp.clip_norm
                    scale = np.float32(1.0 / (q * n))
                    for gi, gr in enumerate(grads):
                        noise = np.stack(
                            [r.standard_normal(gr.shape[1:], dtype=np.float32) for r in rngs]
                        )
                        noise *= np.float32(std)
                        grads[gi] = (gr + noise) * scale
                for p, v, gr in zip(params, vel, grads, strict=True):
                    v *= mom
                    v -= lr * gr
                    p += v
        if self.output_noise > 0:
            for p in params:
                p += np.stack(
                    [self.output_noise * r.standard_normal(p.shape[1:]) for r in rngs]
                ).astype(np.float32)
        return params

    def fit_losses(self, X, y, X_eval, y_eval, seeds) -> np.ndarray:
        """Train one model per generator in ``seeds`` and return eval losses.

        Parameters
        ----------
        X : array_like, shape (n, d)
        y : array_like of int, shape (n,)
        X_eval : array_like, shape (m, d)
        y_eval : array_like of int, shape (m,)
        seeds : sequence of numpy.random.Generator
            One generator per model.

        Returns
        -------
        numpy.ndarray of float64, shape (len(seeds), m)
            Cross-entropy of each eval point under each model.
        """
        rngs = list(seeds)
        X, y = self._check_data(X, y)
        Xe, ye = self._check_data(X_eval, y_eval, name="X_eval")
        params = self._train(X, y, rngs)
        logits, _ = self._forward(params, np.broadcast_to(Xe, (len(rngs),) + Xe.shape))
        return cross_entropy(logits, ye)

    def fit(self, X, y, seed: np.random.Generator) -> list[np.ndarray]:
        """Train one model; returns its parameter arrays ``[W1, b1, ...]`` (float32)."""
        X, y = self._check_data(X, y)
        return [p[0] for p in self._train(X, y, [seed])]

    def loss(self, params, X, y) -> np.ndarray:
        """Cross-entropy of each row of ``(X, y)`` under one model's parameters."""
        X, y = self._check_data(X, y)
        logits, _ = self._forward([p[None] for p in params], X[None])
        return cross_entropy(logits[0], y)

    def _check_data(self, X, y, name: str = "X"):
        X = np.asarray(X, dtype=np.float32)
        y = np.asarray(y)
        if X.ndim != 2:
            raise ValueError(f"`{name}` must be 2-D (n, features); found shape {X.shape}")
        if y.shape != (X.shape[0],) or y.dtype.kind not in "iu":
            raise ValueError(
                f"labels for `{name}` must be {X.shape[0]} integers; found shape {y.shape}, "
                f"dtype {y.dtype}"
            )
        if y.size and (y.min() < 0 or y.max() >= self.n_classes):
            raise ValueError(
                f"labels for `{name}` must lie in [0, {self.n_classes}); found {y.min()}..{y.max()}"
            )
        if not np.isfinite(X).all():
            raise ValueError(f"`{name}` must be finite")
        return X, y.astype(np.int64)


class SoftmaxRegression(_Network):
    """Multinomial logistic regression trained by minibatch SGD with momentum.

    Parameters
    ----------
    epochs : int
        Passes over the data (default 20).
    learning_rate, momentum : float
        SGD step size (0.01) and momentum (0.9), Keras convention ``v = m v - lr g``.
    batch_size : int
        Minibatch size (100); for DP-SGD the expected Poisson batch size.
    init : {"fixed", "random"}
        ``"fixed"``: every model starts from the same Glorot-uniform draw (``init_seed``);
        ``"random"``: each model draws its own.
    init_seed : int
        Seed of the fixed initialisation.
    output_noise : float
        Standard deviation of Gaussian noise added to every parameter after training (0: none).
    dp : DPSGD, optional
        Train with DP-SGD instead of plain SGD.
    n_classes : int
        Number of classes (10).

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 4)); y = (X[:, 0] > 0).astype(int)
    >>> algo = SoftmaxRegression(epochs=5, batch_size=10, n_classes=2)
    >>> rngs = [np.random.default_rng(i) for i in range(3)]
    >>> algo.fit_losses(X, y, X[:2], y[:2], rngs).shape
    (3, 2)
    """

    hidden = None


class MLP(_Network):
    """One-hidden-layer ReLU network with softmax output (paper Sec. 4.2).

    Parameters are those of :class:`SoftmaxRegression` plus ``hidden`` (128 units).

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 4)); y = (X[:, 0] > 0).astype(int)
    >>> algo = MLP(hidden=8, epochs=2, batch_size=10, n_classes=2, init="random")
    >>> params = algo.fit(X, y, np.random.default_rng(1))
    >>> [p.shape for p in params], algo.loss(params, X[:3], y[:3]).shape
    ([(4, 8), (8,), (8, 2), (2,)], (3,))
    """

    def __init__(self, *, hidden: int = 128, **kwargs) -> None:
        super().__init__(**kwargs)
        self.hidden = check_positive_int("hidden", hidden)
