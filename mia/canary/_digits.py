"""Small numpy models on scikit-learn's bundled digits data (optional extra ``digits``)."""

from __future__ import annotations

import numpy as np


def load_digits_split(rng: np.random.Generator, test_fraction: float = 0.2):
    """Digits scaled to [0, 1], shuffled and split into train and test sets."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the digits examples need scikit-learn (pip install 'bayes-dp[digits]')"
        ) from err
    x, y = load_digits(return_X_y=True)
    x = x.astype(np.float64) / 16.0
    perm = rng.permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    test, train = perm[:n_test], perm[n_test:]
    return x[train], y[train], x[test], y[test]


class MLP:
    """One-hidden-layer tanh network with softmax output, parameters as one flat vector."""

    def __init__(self, n_in: int = 64, n_hidden: int = 64, n_out: int = 10):
        self.shapes = [(n_in, n_hidden), (n_hidden,), (n_hidden, n_out), (n_out,)]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.d = sum(self.sizes)

    def init(self, rng: np.random.Generator) -> np.ndarray:
        """Glorot-style initial parameters."""
        w1 = rng.normal(0, 1 / np.sqrt(self.shapes[0][0]), self.shapes[0])
        w2 = rng.normal(0, 1 / np.sqrt(self.shapes[2][0]), self.shapes[2])
        return np.concatenate(
            [w1.ravel(), np.zeros(self.sizes[1]), w2.ravel(), np.zeros(self.sizes[3])]
        )

    def unpack(self, theta: np.ndarray):
        """Split the flat vector into (W1, b1, W2, b2) views."""
        out, i = [], 0
        for shape, size in zip(self.shapes, self.sizes, strict=True):
            out.append(theta[i : i + size].reshape(shape))
            i += size
        return out

    def loss_grad(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray):
        """Mean cross-entropy and its gradient."""
        w1, b1, w2, b2 = self.unpack(theta)
        h = np.tanh(x @ w1 + b1)
        z = h @ w2 + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        n = len(y)
        loss = -np.mean(np.log(p[np.arange(n), y] + 1e-300))
        dz = p
        dz[np.arange(n), y] -= 1.0
        dz /= n
        gw2 = h.T @ dz
        gb2 = dz.sum(axis=0)
        dh = (dz @ w2.T) * (1 - h * h)
        gw1 = x.T @ dh
        gb1 = dh.sum(axis=0)
        return loss, np.concatenate([gw1.ravel(), gb1, gw2.ravel(), gb2])

    def accuracy(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
        """Classification accuracy."""
        w1, b1, w2, b2 = self.unpack(theta)
        return float(np.mean(np.argmax(np.tanh(x @ w1 + b1) @ w2 + b2, axis=1) == y))
