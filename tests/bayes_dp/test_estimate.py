import numpy as np
import pytest

import bayes_dp as bdp

COUNTS = bdp.AttackCounts(fp=[40, 50], n_neg=[1000, 1000], fn=[250, 200], n_pos=[1000, 1000])
SMALL = dict(chains=2, draws=300, tune=200, check=False)


def test_same_seed_same_draws_and_threads_do_not_matter():
    a = bdp.estimate_epsilon(COUNTS, delta=1e-5, seed=3, cores=1, **SMALL)
    b = bdp.estimate_epsilon(COUNTS, delta=1e-5, seed=3, cores=2, **SMALL)
    c = bdp.estimate_epsilon(COUNTS, delta=1e-5, seed=4, **SMALL)
    np.testing.assert_array_equal(a.draws("eps"), b.draws("eps"))
    np.testing.assert_array_equal(a.draws("s"), b.draws("s"))
    assert not np.array_equal(a.draws("eps"), c.draws("eps"))
    g = bdp.estimate_epsilon(COUNTS, delta=1e-5, seed=np.random.default_rng(3), **SMALL)
    assert g.settings["seed"] == "Generator"
    assert a.settings["seed"] == 3
    r = bdp.estimate_epsilon(COUNTS, delta=1e-5, seed=None, **SMALL)
    assert isinstance(r.settings["seed"], int)  # fresh entropy is recorded


def test_shapes_and_fixed_s():
    post = bdp.estimate_epsilon(COUNTS, delta=1e-5, prior=bdp.Prior(s=0.6), seed=0, **SMALL)
    assert post.var_names == ["eps"]
    assert post.draws("eps").shape == (2, 300)
    with pytest.raises(ValueError, match="fixed at 0.6"):
        post.draws("s")
    # the joint walk and, after the warm-up, the surrogate transition (no ridge with s fixed)
    assert set(post.acceptance) == {"accept_joint", "accept_table"}


@pytest.mark.parametrize(
    "counts",
    [
        bdp.AttackCounts(0, 1000, 0, 1000),  # perfect attack
        bdp.AttackCounts([0, 3], 1000, [0, 1], 1000),
        bdp.AttackCounts(1000, 1000, 0, 1000),  # fp = n_neg
        bdp.AttackCounts([4_000_000, 10], [10_000_000, 50], [3_000_000, 20], [10_000_000, 50]),
        bdp.AttackCounts(10, 10_000_000, 5_000_000, 10_000_000),
    ],
)
def test_edge_counts_give_finite_posterior(counts):
    post = bdp.estimate_epsilon(counts, delta=1e-5, seed=1, **SMALL)
    for v in post.var_names:
        x = post.draws(v)
        assert np.all(np.isfinite(x))
    assert np.all(post.draws("eps") > 0)
    s = post.draws("s")
    assert np.all((s > 0) & (s < 1))


def test_perfect_attack_pushes_eps_up_against_uninformative_attack():
    perfect = bdp.estimate_epsilon(
        bdp.AttackCounts(0, 1000, 0, 1000),
        delta=1e-5,
        seed=2,
        prior=bdp.Prior(s=0.0),
        chains=2,
        draws=2000,
        tune=500,
        check=False,
    )
    coin = bdp.estimate_epsilon(
        bdp.AttackCounts(500, 1000, 500, 1000),
        delta=1e-5,
        seed=2,
        prior=bdp.Prior(s=0.0),
        chains=2,
        draws=2000,
        tune=500,
        check=False,
    )
    # a perfect attack needs (alpha, beta) near (0, 0): eps must be >= about log(1000)
    assert perfect.quantile(0.05) > 5.0
    assert coin.quantile(0.5) < perfect.quantile(0.05)


def test_groups_with_own_strength():
    g1 = bdp.Evidence(COUNTS, name="canary", strength="own")
    g2 = bdp.Evidence(bdp.AttackCounts([100, 120], 1000, [100, 100], 1000), name="lira")
    post = bdp.estimate_epsilon([g1, g2], delta=1e-5, seed=0, **SMALL)
    assert post.var_names == ["eps", "s_canary", "s"]
    with pytest.raises(ValueError, match="unique"):
        bdp.estimate_epsilon([g1, g1], delta=1e-5, **SMALL)


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        (dict(delta=1.0), ValueError, ["delta", "1.0"]),
        (dict(delta=-1e-3), ValueError, ["delta"]),
        (dict(delta=float("nan")), ValueError, ["delta", "nan"]),
        (dict(delta="0.1"), TypeError, ["delta"]),
        (dict(delta=1e-5, chains=0), ValueError, ["chains", "0"]),
        (dict(delta=1e-5, draws=0), ValueError, ["draws", "0"]),
        (dict(delta=1e-5, draws=2.5), TypeError, ["draws"]),
        (dict(delta=1e-5, sampler="mhaar"), TypeError, ["sampler", "mhaar"]),
        (dict(delta=1e-5, prior="flat"), TypeError, ["prior"]),
        (dict(delta=1e-5, seed=-1), ValueError, ["seed"]),
        (dict(delta=1e-5, seed="a"), TypeError, ["seed"]),
    ],
)
def test_bad_arguments(kwargs, exc, words):
    with pytest.raises(exc) as info:
        bdp.estimate_epsilon(COUNTS, **kwargs)
    for w in words:
        assert w in str(info.value)


def test_bad_counts_type():
    with pytest.raises(TypeError, match="counts"):
        bdp.estimate_epsilon({"fp": 1}, delta=1e-5)
    with pytest.raises(ValueError, match="empty"):
        bdp.estimate_epsilon([], delta=1e-5)


@pytest.mark.parametrize(
    "build, exc, words",
    [
        (lambda: bdp.Prior(s=1.5), ValueError, ["s", "1.5"]),
        (lambda: bdp.Prior(s=-0.1), ValueError, ["s"]),
        (lambda: bdp.Prior(s=bdp.HalfNormal(1.0)), TypeError, ["s"]),
        (lambda: bdp.Prior(eps=bdp.Beta(1, 1)), TypeError, ["eps"]),
        (lambda: bdp.HalfNormal(0.0), ValueError, ["scale", "0.0"]),
        (lambda: bdp.HalfNormal(-2), ValueError, ["scale"]),
        (lambda: bdp.Beta(0.0, 1.0), ValueError, ["a"]),
        (lambda: bdp.Beta(1.0, -1.0), ValueError, ["b"]),
        (lambda: bdp.LogNormal(0.0, 0.0), ValueError, ["sigma"]),
        (lambda: bdp.Evidence(COUNTS, likelihood="poisson"), ValueError, ["likelihood"]),
        (lambda: bdp.Evidence(COUNTS, name="a/b"), ValueError, ["name", "a/b"]),
        (lambda: bdp.Evidence(COUNTS, strength="mine"), ValueError, ["strength"]),
        (lambda: bdp.Evidence(COUNTS, fix={"tau": 0.0}), ValueError, ["tau"]),
    ],
)
def test_bad_priors_and_evidence(build, exc, words):
    with pytest.raises(exc) as info:
        build()
    for w in words:
        assert w in str(info.value)


def test_short_run_warns():
    with pytest.warns(bdp.ConvergenceWarning, match="run longer"):
        bdp.estimate_epsilon(COUNTS, delta=1e-5, seed=0, chains=2, draws=30, tune=10)


def test_mhaar_chains_climb_to_a_perfect_base():
    """One base with no errors (classical eps infinite) and one weak base (classical eps 0.85):
    MHAAR chains start at 1 to 2 times 0.85, far below the posterior (median ~11), and reach
    the exact sampler's posterior within a warm-up of 200 iterations, with no floor on the start."""
    from bayes_dp.inference.model import Model
    from bayes_dp.inference.runners import mhaar_start_eps

    counts = bdp.AttackCounts([0, 300], 1000, [0, 300], 1000)
    start = mhaar_start_eps(Model.build(counts, delta=1e-5))
    assert start == pytest.approx(float(bdp.classical_epsilon(0.3, 0.3, 1e-5)))
    assert start < 1.0
    exact = bdp.estimate_epsilon(counts, delta=1e-5, seed=1, chains=2, draws=2000, check=False)
    mh = bdp.estimate_epsilon(
        counts, delta=1e-5, sampler=bdp.MHAAR(), seed=0, chains=2, tune=200, draws=1000, check=False
    )
    e = mh.draws("eps")
    assert np.all(np.median(e[:, :100], axis=1) > 5.0)  # every chain has climbed
    ref = np.quantile(exact.draws("eps"), [0.25, 0.5, 0.75])
    got = np.quantile(e, [0.25, 0.5, 0.75])
    np.testing.assert_allclose(got, ref, rtol=0.1)


def test_mhaar_config_defaults_are_estimate_epsilons():
    """The kernel's public samplers.mhaar.SamplerConfig has the defaults of bdp.MHAAR, field by
    field (every field of bdp.MHAAR is one of the kernel's), and its draws and tune."""
    import dataclasses

    from samplers.mhaar import SamplerConfig

    cfg = SamplerConfig()
    assert cfg.tune == bdp.MHAAR.default_tune
    assert cfg.draws == bdp.MHAAR.default_draws
    for f in dataclasses.fields(bdp.MHAAR):
        assert getattr(cfg, f.name) == f.default, f.name
