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

The built-in :class:`SoftmaxRegression` and :class:`MLP` also serve simulators that run their own
training loop (the federated canary audits of :mod:`mia.canary`): their parameters can be one
flat float64 vector (``init_params``, ``flatten``, ``unflatten``, ``n_params``) on which
``loss``, ``loss_and_gradient``, ``gradient`` (mean or per example), ``logits``, ``predict`` and
``accuracy`` work directly::

    model = MLP(hidden=64, activation="tanh", n_features=64)
    theta = model.init_params(seed=0)              # flat, length model.n_params()
    theta -= 0.5 * model.gradient(theta, X, y)     # one full-batch gradient step

It is long because it holds the one numpy model family (softmax regression and MLP on a flat
parameter vector) with its plain and DP-SGD training, which LiRA and the canary simulators share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from bayes_dp.core.validation import as_generator, check_delta, check_positive_int, check_real

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


ACTIVATIONS = ("relu", "tanh")


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=-1, keepdims=True)
    return p


class _Network:
    """Softmax output network with an optional hidden layer, trained many-at-once.

    For training, parameters are stacked along a leading model axis; every model draws its
    minibatch order, its initialisation (when random), its DP noise and its output perturbation
    from its own generator, so a model's result does not depend on which other models share its
    batch. The forward and backward passes work on one model's arrays as well (no model axis),
    which is what the flat-vector methods use.
    """

    hidden: int | None = None
    activation: str = "relu"

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
        n_features: int | None = None,
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
        self.n_features = (
            None if n_features is None else check_positive_int("n_features", n_features)
        )

    # -- description --------------------------------------------------------------------------
    def config(self) -> dict:
        """Return the settings as a JSON-friendly dict (the audit runner checks resumes with it)."""
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
        # only when not the default, so that the settings of audits stored before stay the same
        if self.activation != "relu":
            cfg["activation"] = self.activation
        if self.n_features is not None:
            cfg["n_features"] = self.n_features
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
        """Return the number of optimiser steps when training on ``n`` examples."""
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
        delta = check_delta(delta, positive=True)
        n = check_positive_int("n", n)
        if accountant not in ACCOUNTANTS:
            raise ValueError(f"`accountant` must be 'rdp' or 'pld'; found {accountant!r}")
        q = min(1.0, self.batch_size / n)
        history = [(self.dp.noise_multiplier, q, self.steps(n))]
        return poisson_gaussian_epsilon(history, delta, accountant=accountant)

    # -- architecture -------------------------------------------------------------------------
    def _shapes(self, d: int) -> list[tuple[int, int]]:
        k = self.n_classes
        if self.hidden is None:
            return [(d, k)]
        return [(d, self.hidden), (self.hidden, k)]

    def _features(self, n_features: int | None) -> int:
        if n_features is None:
            if self.n_features is None:
                raise ValueError(
                    "`n_features` is needed: pass it, or set it in the constructor "
                    f"({type(self).__name__}(n_features=...))"
                )
            return self.n_features
        n_features = check_positive_int("n_features", n_features)
        if self.n_features is not None and n_features != self.n_features:
            raise ValueError(
                f"`n_features` must be {self.n_features} (set in the constructor); "
                f"found {n_features}"
            )
        return n_features

    def _draw_init(self, rng: np.random.Generator, d: int) -> list[np.ndarray]:
        """One model's ``[W1, b1, (W2, b2)]``: Glorot-uniform weights from ``rng``, zero biases."""
        out = []
        for fi, fo in self._shapes(d):
            out += [_glorot(rng, fi, fo), np.zeros(fo)]
        return out

    def _init(self, d: int, rngs: list[np.random.Generator]) -> list[np.ndarray]:
        """Stacked [W1, b1, (W2, b2)] with a leading model axis, float32."""
        b = len(rngs)
        if self.init == "fixed":
            one = self._draw_init(np.random.default_rng(self.init_seed), d)
            params = [np.broadcast_to(p, (b,) + p.shape) for p in one]
        else:
            draws = [self._draw_init(r, d) for r in rngs]
            params = [np.stack(layer) for layer in zip(*draws, strict=True)]
        return [np.array(p, dtype=np.float32) for p in params]

    def _activate(self, a):
        return np.maximum(a, 0.0) if self.activation == "relu" else np.tanh(a)

    def _activation_grad(self, h):
        """Return the derivative of the activation, written in terms of its output ``h``."""
        return (h > 0) if self.activation == "relu" else 1.0 - h * h

    def _forward(self, params, X):
        """Logits (..., m, k) and hidden activations (or None).

        ``params`` are one model's arrays with ``X`` of shape (m, d), or stacked along a leading
        model axis with ``X`` of shape (B, m, d).
        """
        if self.hidden is None:
            w, b = params
            return X @ w + b[..., None, :], None
        w1, b1, w2, b2 = params
        h = self._activate(X @ w1 + b1[..., None, :])
        return h @ w2 + b2[..., None, :], h

    def _deltas(self, params, X, h, g):
        """(input, output gradient) of each dense layer, first layer first.

        The gradient of ``sum_i <g_i, logits_i>`` with respect to layer ``l`` is
        ``sum_i input_i (x) delta_i`` for its weights and ``sum_i delta_i`` for its bias.
        """
        if self.hidden is None:
            return [(X, g)]
        w2 = params[2]
        dh = (g @ np.swapaxes(w2, -1, -2)) * self._activation_grad(h)
        return [(X, dh), (h, g)]

    def _backward(self, params, X, h, g):
        """Gradients of sum_i <g_i, logits_i> w.r.t. the parameters (g: (..., m, k))."""
        out = []
        for a, d in self._deltas(params, X, h, g):
            out += [np.swapaxes(a, -1, -2) @ d, d.sum(axis=-2)]
        return out

    # -- training -----------------------------------------------------------------------------
    def _grads(self, params, Xb, Yb, weights):
        logits, h = self._forward(params, Xb)
        g = _softmax(logits) - Yb  # d loss_i / d logits_i
        if self.dp is None:
            g *= weights[..., None]
            return self._backward(params, Xb, h, g)
        # per-example gradient norms without materialising per-example gradients:
        # ||a_i (x) g_i||^2 = ||a_i||^2 ||g_i||^2 for each linear layer, plus bias terms.
        norm2 = 0.0
        for a, d in reversed(self._deltas(params, Xb, h, g)):
            norm2 = norm2 + ((a * a).sum(axis=-1) + 1.0) * (d * d).sum(axis=-1)
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

    # -- parameters as one flat vector --------------------------------------------------------
    def param_shapes(self, n_features: int | None = None) -> list[tuple[int, ...]]:
        """Shapes of the parameter arrays ``[W1, b1, (W2, b2)]``; ``W`` is (inputs, outputs).

        Parameters
        ----------
        n_features : int, optional
            Input dimension (default: the one given to the constructor).

        Returns
        -------
        list of tuple of int
        """
        out: list[tuple[int, ...]] = []
        for fi, fo in self._shapes(self._features(n_features)):
            out += [(fi, fo), (fo,)]
        return out

    def n_params(self, n_features: int | None = None) -> int:
        """Length of the flat parameter vector.

        Parameters
        ----------
        n_features : int, optional
            Input dimension (default: the one given to the constructor).

        Returns
        -------
        int

        Examples
        --------
        >>> MLP(hidden=64, n_features=64).n_params()
        4810
        """
        return sum(math.prod(s) for s in self.param_shapes(n_features))

    def init_params(self, seed=None, n_features: int | None = None) -> np.ndarray:
        """Draw initial parameters as one flat float64 vector.

        Weights are Glorot-uniform and biases zero, the initialisation ``fit`` uses; each weight
        matrix is drawn from ``seed`` in layer order.

        Parameters
        ----------
        seed : int or numpy.random.Generator, optional
            Random seed.
        n_features : int, optional
            Input dimension (default: the one given to the constructor).

        Returns
        -------
        numpy.ndarray of float64, shape (n_params,)
        """
        rng = as_generator(seed)
        return self.flatten(self._draw_init(rng, self._features(n_features)))

    def flatten(self, params) -> np.ndarray:
        """Concatenate parameter arrays into one float64 vector ``[W1.ravel(), b1, ...]``.

        Parameters
        ----------
        params : sequence of array_like
            ``[W1, b1, (W2, b2)]`` as returned by ``fit`` or ``unflatten``; arrays with leading
            axes (several models or examples) give a flat vector per leading index.

        Returns
        -------
        numpy.ndarray of float64, shape (..., n_params)
        """
        arrays = [np.asarray(p, dtype=np.float64) for p in params]
        lead = arrays[1].shape[:-1]  # the first bias has one axis of its own
        return np.concatenate([a.reshape(lead + (-1,)) for a in arrays], axis=-1)

    def unflatten(self, theta, n_features: int | None = None) -> list[np.ndarray]:
        """Split a flat parameter vector into the arrays ``[W1, b1, (W2, b2)]`` (views).

        Parameters
        ----------
        theta : array_like, shape (..., n_params)
            One flat vector, or several along leading axes.
        n_features : int, optional
            Input dimension (default: the one given to the constructor).

        Returns
        -------
        list of numpy.ndarray

        Examples
        --------
        >>> m = SoftmaxRegression(n_classes=3, n_features=2)
        >>> [a.shape for a in m.unflatten(np.arange(9.0))]
        [(2, 3), (3,)]
        """
        theta = np.asarray(theta)
        shapes = self.param_shapes(n_features)
        size = sum(math.prod(s) for s in shapes)
        if theta.ndim < 1 or theta.shape[-1] != size:
            raise ValueError(
                f"`theta` must have {size} parameters on its last axis; found shape {theta.shape}"
            )
        out, i = [], 0
        for shape in shapes:
            k = math.prod(shape)
            out.append(theta[..., i : i + k].reshape(theta.shape[:-1] + shape))
            i += k
        return out

    def _layers(self, params, n_features: int) -> list[np.ndarray]:
        """One model's arrays from a flat vector or from ``[W1, b1, ...]``, checked."""
        if isinstance(params, np.ndarray) and params.ndim == 1:
            theta = params if params.dtype.kind == "f" else params.astype(np.float64)
            return self.unflatten(theta, n_features)
        layers = [np.asarray(p) for p in params]
        want = self.param_shapes(n_features)
        if [a.shape for a in layers] != want:
            raise ValueError(
                f"`params` must be a flat vector or arrays of shapes {want}; "
                f"found {[a.shape for a in layers]}"
            )
        return layers

    def _prepare(self, params, X, y=None, name: str = "X"):
        """Layers, X in the parameters' dtype, and checked labels."""
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"`{name}` must be 2-D (n, features); found shape {X.shape}")
        if self.n_features is not None and X.shape[1] != self.n_features:
            raise ValueError(
                f"`{name}` must have n_features={self.n_features} columns; found {X.shape[1]}"
            )
        layers = self._layers(params, X.shape[1])
        dtype = np.result_type(*layers)
        X, y = self._check_data(X, y, name=name, dtype=dtype)
        return [a.astype(dtype, copy=False) for a in layers], X, y

    # -- evaluation ---------------------------------------------------------------------------
    def logits(self, params, X) -> np.ndarray:
        """Logits of each row of ``X`` under one model's parameters.

        Parameters
        ----------
        params : numpy.ndarray or sequence of array_like
            A flat vector (see ``flatten``) or the arrays ``[W1, b1, ...]`` from ``fit``. The
            arithmetic is done in their dtype (float32 from ``fit``, float64 from
            ``init_params``).
        X : array_like, shape (n, n_features)

        Returns
        -------
        numpy.ndarray, shape (n, n_classes)
        """
        layers, X, _ = self._prepare(params, X)
        return self._forward(layers, X)[0]

    def predict(self, params, X) -> np.ndarray:
        """Most likely class of each row of ``X`` (parameters as in ``logits``)."""
        return np.argmax(self.logits(params, X), axis=-1)

    def accuracy(self, params, X, y) -> float:
        """Fraction of the rows of ``(X, y)`` classified correctly (parameters as in ``logits``)."""
        layers, X, y = self._prepare(params, X, y)
        return float(np.mean(np.argmax(self._forward(layers, X)[0], axis=-1) == y))

    def loss(self, params, X, y) -> np.ndarray:
        """Cross-entropy of each row of ``(X, y)`` under one model's parameters.

        Parameters are a flat vector or the arrays from ``fit``, as in ``logits``.
        """
        layers, X, y = self._prepare(params, X, y)
        return cross_entropy(self._forward(layers, X)[0], y)

    def loss_and_gradient(self, params, X, y) -> tuple[float, np.ndarray]:
        """Mean cross-entropy over the rows of ``(X, y)`` and its gradient as a flat vector.

        Parameters
        ----------
        params : numpy.ndarray or sequence of array_like
            A flat vector or the arrays from ``fit`` (see ``logits``).
        X : array_like, shape (n, n_features)
            At least one row.
        y : array_like of int, shape (n,)

        Returns
        -------
        loss : float
        gradient : numpy.ndarray of float64, shape (n_params,)
        """
        loss, grad = self._loss_grad(params, X, y, per_example=False)
        return float(loss.mean()), grad

    def gradient(self, params, X, y, *, per_example: bool = False) -> np.ndarray:
        """Gradient of the cross-entropy as a flat vector: the mean over rows, or one per row.

        Parameters
        ----------
        params : numpy.ndarray or sequence of array_like
            A flat vector or the arrays from ``fit`` (see ``logits``).
        X : array_like, shape (n, n_features)
            At least one row.
        y : array_like of int, shape (n,)
        per_example : bool, default False
            Return each row's gradient instead of the mean.

        Returns
        -------
        numpy.ndarray of float64, shape (n_params,) or (n, n_params)

        Examples
        --------
        >>> m = SoftmaxRegression(n_classes=2, n_features=3)
        >>> X, y = np.ones((4, 3)), np.array([0, 1, 1, 0])
        >>> g = m.gradient(m.init_params(seed=0), X, y, per_example=True)
        >>> g.shape, bool(np.allclose(g.mean(axis=0), m.gradient(m.init_params(seed=0), X, y)))
        ((4, 8), True)
        """
        return self._loss_grad(params, X, y, per_example=per_example)[1]

    def _loss_grad(self, params, X, y, *, per_example: bool):
        layers, X, y = self._prepare(params, X, y)
        n = X.shape[0]
        if n == 0:
            raise ValueError("`X` must have at least one row for a gradient; found 0")
        logits, h = self._forward(layers, X)
        loss = cross_entropy(logits, y)
        g = _softmax(logits)
        g[np.arange(n), y] -= 1.0  # d loss_i / d logits_i
        if per_example:
            per = []
            for a, d in self._deltas(layers, X, h, g):
                per += [a[:, :, None] * d[:, None, :], d]
            return loss, self.flatten(per)
        g /= n
        return loss, self.flatten(self._backward(layers, X, h, g))

    def _check_data(self, X, y=None, name: str = "X", dtype=np.float32):
        X = np.asarray(X, dtype=dtype)
        if X.ndim != 2:
            raise ValueError(f"`{name}` must be 2-D (n, features); found shape {X.shape}")
        if self.n_features is not None and X.shape[1] != self.n_features:
            raise ValueError(
                f"`{name}` must have n_features={self.n_features} columns; found {X.shape[1]}"
            )
        if not np.isfinite(X).all():
            raise ValueError(f"`{name}` must be finite")
        if y is None:
            return X, None
        y = np.asarray(y)
        if y.shape != (X.shape[0],) or y.dtype.kind not in "iu":
            raise ValueError(
                f"labels for `{name}` must be {X.shape[0]} integers; found shape {y.shape}, "
                f"dtype {y.dtype}"
            )
        if y.size and (y.min() < 0 or y.max() >= self.n_classes):
            raise ValueError(
                f"labels for `{name}` must lie in [0, {self.n_classes}); found {y.min()}..{y.max()}"
            )
        return X, y.astype(np.int64)


class SoftmaxRegression(_Network):
    """Multinomial logistic regression trained by minibatch SGD with momentum.

    As a training algorithm (``fit``, ``loss``, ``fit_losses``) it trains many models at once
    in float32. Its parameters are also usable as one flat vector, for simulators with their
    own training loop (see the module docstring): ``[W.ravel(), b]`` with ``W`` of shape
    (n_features, n_classes).

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
    n_features : int, optional
        Input dimension. Optional for training (taken from the data, which must match when
        given); needed by ``init_params``, ``n_params`` and ``unflatten`` unless passed there.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 4)); y = (X[:, 0] > 0).astype(int)
    >>> algo = SoftmaxRegression(epochs=5, batch_size=10, n_classes=2)
    >>> rngs = [np.random.default_rng(i) for i in range(3)]
    >>> algo.fit_losses(X, y, X[:2], y[:2], rngs).shape
    (3, 2)
    >>> theta = algo.init_params(seed=0, n_features=4)
    >>> for _ in range(50):
    ...     theta -= 0.5 * algo.gradient(theta, X, y)
    >>> algo.accuracy(theta, X, y) > 0.9
    True
    """

    hidden = None


class MLP(_Network):
    """One-hidden-layer network with softmax output (paper Sec. 4.2: 128 ReLU units).

    Parameters are those of :class:`SoftmaxRegression` plus ``hidden`` (128 units) and
    ``activation`` (``"relu"``, default, or ``"tanh"``). The flat parameter vector is
    ``[W1.ravel(), b1, W2.ravel(), b2]``.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 4)); y = (X[:, 0] > 0).astype(int)
    >>> algo = MLP(hidden=8, epochs=2, batch_size=10, n_classes=2, init="random")
    >>> params = algo.fit(X, y, np.random.default_rng(1))
    >>> [p.shape for p in params], algo.loss(params, X[:3], y[:3]).shape
    ([(4, 8), (8,), (8, 2), (2,)], (3,))
    >>> algo.flatten(params).shape == (algo.n_params(n_features=4),)
    True
    """

    def __init__(self, *, hidden: int = 128, activation: str = "relu", **kwargs) -> None:
        super().__init__(**kwargs)
        self.hidden = check_positive_int("hidden", hidden)
        if activation not in ACTIVATIONS:
            raise ValueError(f"`activation` must be one of {ACTIVATIONS}; found {activation!r}")
        self.activation = activation
