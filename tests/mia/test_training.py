"""Built-in training algorithms: gradients vs plain-numpy references, DP-SGD accounting."""

import numpy as np
import pytest
from scipy import stats

import mia
from mia.canary import gaussian_mechanism_epsilon


def _toy(n=60, d=5, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = X[:, :k].argmax(axis=1).astype(np.int64)
    return X, y


def _ref_mlp_example_grads(params, x, y, k):
    """Per-example gradient of the cross-entropy of a 1-hidden-layer MLP, float64, by hand."""
    w1, b1, w2, b2 = (p.astype(np.float64) for p in params)
    a = x @ w1 + b1
    h = np.maximum(a, 0)
    z = h @ w2 + b2
    p = np.exp(z - z.max())
    p /= p.sum()
    g = p - np.eye(k)[y]
    dh = (w2 @ g) * (a > 0)
    return [np.outer(x, dh), dh, np.outer(h, g), g]


@pytest.mark.parametrize("dp", [None, mia.DPSGD(noise_multiplier=1.0, clip_norm=0.5)])
def test_mlp_gradients_match_reference(dp):
    X, y = _toy()
    k = 3
    algo = mia.MLP(hidden=7, n_classes=k, init="random", dp=dp)
    params = algo._init(X.shape[1], [np.random.default_rng(1)])
    m = 12
    Xb, yb = X[None, :m], y[:m]
    weights = np.full((1, m), 1.0 / m if dp is None else 1.0, dtype=np.float32)
    weights[0, -2:] = 0.0  # padding rows (DP) / dropped rows must not count
    got = algo._grads(params, Xb, np.eye(k, dtype=np.float32)[yb][None], weights)
    want = [np.zeros(p.shape[1:]) for p in params]
    for i in range(m):
        gi = _ref_mlp_example_grads([p[0] for p in params], X[i].astype(np.float64), y[i], k)
        if dp is None:
            scale = weights[0, i]
        else:  # explicit per-example clipping
            norm = np.sqrt(sum((g**2).sum() for g in gi))
            scale = weights[0, i] * min(1.0, dp.clip_norm / norm)
        for w, g in zip(want, gi, strict=True):
            w += scale * g
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g[0], w, rtol=2e-4, atol=1e-6)


def test_softmax_dp_gradients_match_reference():
    X, y = _toy()
    algo = mia.SoftmaxRegression(n_classes=3, dp=mia.DPSGD(1.0, 0.3), init="random")
    params = algo._init(X.shape[1], [np.random.default_rng(2)])
    w, b = (p[0].astype(np.float64) for p in params)
    gw, gb = np.zeros_like(w), np.zeros_like(b)
    for i in range(20):
        z = X[i] @ w + b
        p = np.exp(z - z.max())
        p /= p.sum()
        g = p - np.eye(3)[y[i]]
        gi = [np.outer(X[i], g), g]
        c = min(1.0, 0.3 / np.sqrt(sum((t**2).sum() for t in gi)))
        gw += c * gi[0]
        gb += c * gi[1]
    got = algo._grads(
        params,
        X[None, :20],
        np.eye(3, dtype=np.float32)[y[:20]][None],
        np.ones((1, 20), np.float32),
    )
    np.testing.assert_allclose(got[0][0], gw, rtol=2e-4, atol=1e-6)
    np.testing.assert_allclose(got[1][0], gb, rtol=2e-4, atol=1e-6)


@pytest.mark.parametrize(
    "algo",
    [
        mia.SoftmaxRegression(epochs=3, batch_size=10, n_classes=3),
        mia.MLP(hidden=6, epochs=3, batch_size=10, n_classes=3, init="random", output_noise=0.1),
        mia.MLP(hidden=6, epochs=2, batch_size=10, n_classes=3, dp=mia.DPSGD(1.0, 1.0)),
    ],
)
def test_models_are_independent_of_batching(algo):
    X, y = _toy()

    def rngs():
        return [np.random.default_rng(np.random.SeedSequence(5, spawn_key=(j,))) for j in range(3)]

    together = algo.fit_losses(X, y, X[:4], y[:4], rngs())
    alone = np.vstack([algo.fit_losses(X, y, X[:4], y[:4], [r]) for r in rngs()])
    np.testing.assert_allclose(together, alone, rtol=1e-5)
    single = algo.loss(algo.fit(X, y, rngs()[1]), X[:4], y[:4])
    np.testing.assert_allclose(single, together[1], rtol=1e-5)
    assert isinstance(algo, mia.TrainingAlgorithm)
    assert not np.allclose(together[0], together[1])


def test_training_learns_and_fixed_init_is_shared():
    X, y = _toy(n=200)
    algo = mia.SoftmaxRegression(epochs=30, batch_size=20, n_classes=3, learning_rate=0.05)
    loss = algo.fit_losses(X, y, X, y, [np.random.default_rng(0)])
    assert loss.mean() < 0.8 * np.log(3)
    a, b = (
        mia.MLP(hidden=4, n_classes=3, init=i)._init(5, [np.random.default_rng(s) for s in (1, 2)])
        for i in ("fixed", "random")
    )
    np.testing.assert_array_equal(a[0][0], a[0][1])
    assert not np.array_equal(b[0][0], b[0][1])


def test_output_noise_perturbs_parameters():
    X, y = _toy()
    base = mia.SoftmaxRegression(epochs=2, batch_size=10, n_classes=3)
    noisy = mia.SoftmaxRegression(epochs=2, batch_size=10, n_classes=3, output_noise=0.5)
    p0 = base.fit(X, y, np.random.default_rng(3))
    p1 = noisy.fit(X, y, np.random.default_rng(3))
    diff = (p1[0] - p0[0]).ravel()
    assert abs(diff.std() - 0.5) < 0.1  # the noise, exactly as drawn after identical training


def test_dp_epsilon_matches_analytic_gaussian_when_full_batch():
    pytest.importorskip("dp_accounting")
    n, epochs, sigma = 100, 4, 2.0
    algo = mia.MLP(batch_size=n, epochs=epochs, dp=mia.DPSGD(noise_multiplier=sigma))
    # q = 1: four Gaussian mechanisms compose to one with noise sigma / sqrt(4), whose eps is
    # exact (Balle and Wang 2018; tested against mpmath and dp_accounting in
    # tests/mia/canary/test_gaussians.py)
    want = gaussian_mechanism_epsilon(sigma / np.sqrt(epochs), 1e-5)
    assert algo.epsilon(1e-5, n, accountant="pld") == pytest.approx(want, rel=1e-2)
    rdp = algo.epsilon(1e-5, n, accountant="rdp")
    assert want <= rdp < 1.5 * want  # RDP conversion is an upper bound


def test_dp_epsilon_decreases_with_noise():
    pytest.importorskip("dp_accounting")
    eps = [
        mia.SoftmaxRegression(epochs=5, dp=mia.DPSGD(noise_multiplier=s)).epsilon(1e-5, 1000)
        for s in (0.8, 1.5, 3.0)
    ]
    assert eps[0] > eps[1] > eps[2] > 0


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"init": "zeros"}, ValueError, "`init`"),
        ({"output_noise": -1.0}, ValueError, "`output_noise`"),
        ({"epochs": 0}, ValueError, "`epochs`"),
        ({"learning_rate": 0.0}, ValueError, "`learning_rate`"),
        ({"dp": 1.0}, TypeError, "`dp`"),
    ],
)
def test_constructor_errors(kwargs, err, match):
    with pytest.raises(err, match=match):
        mia.SoftmaxRegression(**kwargs)


def test_data_errors_and_non_dp_epsilon():
    algo = mia.SoftmaxRegression(n_classes=3)
    X, y = _toy()
    with pytest.raises(ValueError, match="labels"):
        algo.fit(X, y + 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="2-D"):
        algo.fit(X[0], y, np.random.default_rng(0))
    with pytest.raises(ValueError, match="dp=None"):
        algo.epsilon(1e-5, 100)
    with pytest.raises(ValueError, match="noise_multiplier"):
        mia.DPSGD(noise_multiplier=0.0)


def test_challenge_bases_from_digits():
    pytest.importorskip("sklearn")
    X, y = mia.load_digits()
    assert X.shape == (1797, 64) and X.max() <= 1.0 and X.dtype == np.float32
    X64, y64 = mia.load_digits(dtype=np.float64)
    assert X64.dtype == np.float64 and np.array_equal(X64, X) and np.array_equal(y64, y)
    assert np.array_equal(X64 * 16, np.round(X64 * 16))  # pixel values k / 16, exact
    with pytest.raises(TypeError, match="`dtype`"):
        mia.load_digits(dtype=np.int64)
    bases = mia.draw_challenge_bases(X, y, 3, size=100, z="mislabelled", seed=1)
    for b in bases:
        Xd, yd = b.dataset(1)
        assert Xd.shape == (101, 64) and yd[-1] == b.z_y
        idx = np.flatnonzero((X == b.z_x).all(axis=1))
        assert (y[idx] != b.z_y).all()  # the label was flipped
        assert not (b.X == b.z_x).all(axis=1).any()  # z not in D
    again = mia.draw_challenge_bases(X, y, 3, size=100, z="mislabelled", seed=1)
    assert [b.fingerprint() for b in bases] == [b.fingerprint() for b in again]
    with pytest.raises(ValueError, match="`z`"):
        mia.draw_challenge_bases(X, y, 1, z="hard")
    with pytest.raises(ValueError, match="`size`"):
        mia.draw_challenge_bases(X, y, 1, size=5000)


# -- parameters as one flat vector (the interface the canary simulators use) -------------------
FLAT_MODELS = [
    mia.SoftmaxRegression(n_classes=3),
    mia.MLP(hidden=4, n_classes=3),
    mia.MLP(hidden=4, n_classes=3, activation="tanh"),
]


def _mean_ce(model, theta, X, y):
    """Mean cross-entropy by hand in float64 from the flat layout [W1.ravel(), b1, ...]."""
    d, k = X.shape[1], 3
    if model.hidden is None:
        w, b = theta[: d * k].reshape(d, k), theta[d * k :]
        z = X @ w + b
    else:
        m = model.hidden
        w1 = theta[: d * m].reshape(d, m)
        b1 = theta[d * m : d * m + m]
        w2 = theta[d * m + m : d * m + m + m * k].reshape(m, k)
        b2 = theta[d * m + m + m * k :]
        a = X @ w1 + b1
        h = np.maximum(a, 0) if model.activation == "relu" else np.tanh(a)
        z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    return float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(y)), y]))


@pytest.mark.parametrize("model", FLAT_MODELS, ids=["softmax", "mlp-relu", "mlp-tanh"])
def test_flat_gradient_vs_finite_differences(model):
    X, y = _toy(n=8)
    X = X.astype(np.float64)
    theta = model.init_params(seed=4, n_features=5)
    theta[-3:] += 0.3  # non-zero output bias
    loss, grad = model.loss_and_gradient(theta, X, y)
    assert loss == pytest.approx(_mean_ce(model, theta, X, y), rel=1e-12)
    h = 1e-6
    num = [
        (_mean_ce(model, theta + h * e, X, y) - _mean_ce(model, theta - h * e, X, y)) / (2 * h)
        for e in np.eye(theta.size)
    ]
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-8)
    per = model.gradient(theta, X, y, per_example=True)
    assert per.shape == (8, theta.size)
    np.testing.assert_allclose(per.mean(axis=0), grad, rtol=1e-12, atol=1e-15)
    for i in (0, 5):  # each row is the gradient of that example alone
        np.testing.assert_allclose(per[i], model.gradient(theta, X[i : i + 1], y[i : i + 1]))


def test_per_example_gradients_match_reference():
    X, y = _toy()
    algo = mia.MLP(hidden=7, n_classes=3, init="random")
    params = algo.fit(X, y, np.random.default_rng(1))
    per = algo.gradient(params, X[:4], y[:4], per_example=True)
    for i in range(4):
        ref = _ref_mlp_example_grads(params, X[i].astype(np.float64), y[i], 3)
        np.testing.assert_allclose(per[i], algo.flatten(ref), rtol=2e-4, atol=1e-6)


def test_flat_vector_round_trip_and_evaluation():
    X, y = _toy()
    algo = mia.MLP(hidden=6, epochs=3, batch_size=10, n_classes=3)
    params = algo.fit(X, y, np.random.default_rng(0))
    theta = algo.flatten(params)
    assert theta.dtype == np.float64 and theta.shape == (algo.n_params(n_features=5),)
    assert algo.n_params(n_features=5) == 5 * 6 + 6 + 6 * 3 + 3
    back = algo.unflatten(theta, n_features=5)
    assert [a.shape for a in back] == [p.shape for p in params] == algo.param_shapes(5)
    for a, p in zip(back, params, strict=True):
        np.testing.assert_array_equal(a, p)
    # the flat float64 vector and the float32 arrays give the same losses and predictions
    np.testing.assert_allclose(algo.loss(theta, X, y), algo.loss(params, X, y), rtol=1e-4)
    logits = algo.logits(theta, X)
    np.testing.assert_array_equal(algo.predict(theta, X), logits.argmax(axis=1))
    assert algo.accuracy(theta, X, y) == np.mean(logits.argmax(axis=1) == y) > 1 / 3
    # several vectors at once: one set of arrays per leading index
    stack = algo.unflatten(np.stack([theta, 2 * theta]), n_features=5)
    np.testing.assert_array_equal(stack[2][1], 2 * back[2])


def test_init_params_is_the_random_initialisation_of_fit():
    for algo in (mia.SoftmaxRegression(n_classes=3), mia.MLP(hidden=4, n_classes=3)):
        theta = algo.init_params(np.random.default_rng(3), n_features=5)
        algo.init = "random"  # fit's per-model initialisation, drawn from the same generator
        first = algo._init(5, [np.random.default_rng(3)])
        np.testing.assert_allclose(theta, algo.flatten([p[0] for p in first]), rtol=1e-6)
        w = algo.unflatten(theta, n_features=5)[0]
        lim = np.sqrt(6 / (5 + w.shape[1]))  # Glorot uniform
        assert np.abs(w).max() <= lim and np.all(algo.unflatten(theta, n_features=5)[1] == 0)
    big = mia.MLP(hidden=200, n_features=300).init_params(seed=0)
    w1 = big[: 300 * 200]
    # uniform on (-l, l): variance l^2 / 3 = 2 / (fan_in + fan_out); KS against it
    lim = np.sqrt(6 / 500)
    assert stats.kstest(w1, stats.uniform(-lim, 2 * lim).cdf).pvalue > 1e-3


def test_flat_interface_errors_and_config():
    algo = mia.SoftmaxRegression(n_classes=3)
    with pytest.raises(ValueError, match="`n_features` is needed"):
        algo.init_params(seed=0)
    with pytest.raises(ValueError, match="`theta`"):
        algo.unflatten(np.zeros(5), n_features=2)
    fixed = mia.SoftmaxRegression(n_classes=3, n_features=5)
    X, y = _toy()
    with pytest.raises(ValueError, match="n_features=5"):
        fixed.gradient(fixed.init_params(seed=0), X[:, :4], y)
    with pytest.raises(ValueError, match="`n_features` must be 5"):
        fixed.n_params(n_features=4)
    with pytest.raises(ValueError, match="at least one row"):
        fixed.gradient(fixed.init_params(seed=0), X[:0], y[:0])
    with pytest.raises(ValueError, match="`params`"):
        fixed.loss([np.zeros((4, 3)), np.zeros(3)], X, y)
    with pytest.raises(ValueError, match="`activation`"):
        mia.MLP(activation="sigmoid")
    with pytest.raises(ValueError, match="n_features=5"):
        fixed.fit(X[:, :4], y, np.random.default_rng(0))
    # settings stored by the audit runner: unchanged unless the new options are used
    assert "n_features" not in algo.config() and "activation" not in mia.MLP().config()
    cfg = mia.MLP(activation="tanh", n_features=64).config()
    assert cfg["activation"] == "tanh" and cfg["n_features"] == 64


def test_steps_count_batches_and_check_n():
    algo = mia.SoftmaxRegression(epochs=2, batch_size=10, n_classes=2)
    assert algo.steps(25) == 2 * 3 and algo.steps(30) == 2 * 3 and algo.steps(1) == 2
    with pytest.raises(ValueError, match="`n`.*0"):
        algo.steps(0)
    with pytest.raises(TypeError, match="`n`.*2.5"):
        algo.steps(2.5)
