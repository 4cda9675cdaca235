"""The starting grid's reduced model (samplers.exact.driver.start_model), many bases."""

import numpy as np
import pytest

from samplers.exact import driver


def _model(n_bases, groups):
    rng = np.random.default_rng(0)
    fp = rng.integers(0, 101, n_bases)
    fn = rng.integers(0, 101, n_bases)
    grp = np.arange(n_bases) % groups
    model, corr, names, _ = driver.build_model(
        fp,
        np.full(n_bases, 100),
        fn,
        np.full(n_bases, 100),
        grp,
        g_lik=np.zeros(groups, dtype=np.int64),
        g_sidx=np.arange(groups),
        g_tau=np.zeros(groups),
        g_rho=np.zeros(groups),
        g_tau_free=np.zeros(groups, dtype=bool),
        g_rho_free=np.zeros(groups, dtype=bool),
        s_fixed=np.full(groups, np.nan),
        delta=1e-5,
        eps_prior=(0, 10.0, 0.0),
        s_prior=(1.0, 1.0),
        tau_prior=(1.0, 1.0),
    )
    return model, corr, names


def test_few_bases_are_kept_as_they_are():
    model, _, _ = _model(30, 1)
    assert driver.start_model(model) is model


def test_many_bases_keep_each_groups_weight_and_its_extremes():
    model, corr, names = _model(600, 2)
    sub = driver.start_model(model)
    assert sub.b_grp.size <= driver.START_BASES
    score = model.B.x / model.B.n0 + model.B.y / model.B.n1
    sub_score = sub.B.x / sub.B.n0 + sub.B.y / sub.B.n1
    for g in (0, 1):
        full, part = model.b_grp == g, sub.b_grp == g
        # every group weighs what it weighs in the data, and keeps its extreme bases
        np.testing.assert_allclose(sub.b_mult[part].sum(), model.b_mult[full].sum())
        assert sub_score[part].min() == score[full].min()
        assert sub_score[part].max() == score[full].max()
    # the reduced model evaluates (its blocks are rebuilt for its bases)
    z = np.array([np.log(2.0), 0.0, 0.0])
    assert np.isfinite(driver._log_post(sub, corr, z))
    assert names == ["eps", ("s", 0), ("s", 1)]


def test_reduced_model_has_the_numba_type_of_the_full_one():
    # a model with blocks keeps a Blocks (possibly without blocks) in its reduced model, one
    # without keeps None: a different type would compile every kernel a second time
    from numba import typeof

    model, _, _ = _model(600, 2)  # 300 bases of N = 100 per strength: the blocks pay
    assert model.Q is not None and model.Q.k.size == 2
    sub = driver.start_model(model)
    assert sub.Q is not None
    assert typeof(sub) == typeof(model)
    # 600 bases of distinct sizes: no two share (strength, N0, N1), so no block and None
    rng = np.random.default_rng(1)
    n = rng.permutation(np.arange(100, 1300))[:600]
    fp, fn = (rng.integers(0, 50, 600) for _ in range(2))
    m2, *_ = driver.build_model(
        fp, n, fn, n, np.zeros(600, dtype=np.int64),
        g_lik=np.zeros(1, dtype=np.int64), g_sidx=np.zeros(1, dtype=np.int64),
        g_tau=np.zeros(1), g_rho=np.zeros(1), g_tau_free=np.zeros(1, dtype=bool),
        g_rho_free=np.zeros(1, dtype=bool), s_fixed=np.full(1, np.nan), delta=1e-5,
        eps_prior=(0, 10.0, 0.0), s_prior=(1.0, 1.0), tau_prior=(1.0, 1.0),
    )  # fmt: skip
    assert m2.Q is None
    sub2 = driver.start_model(m2)
    assert sub2.Q is None and typeof(sub2) == typeof(m2)


def test_starts_near_is_the_point_plus_normal_noise():
    # where the log posterior is finite everywhere, the starts are z + N(0, scale^2): their mean
    # and standard deviation over many starts match, against the normal's own sampling error
    model, corr, names = _model(30, 1)
    z = np.array([np.log(3.0), 0.4])
    assert len(names) == z.size
    pts = np.array(driver.starts_near(model, corr, z, np.random.default_rng(1), 4000, 0.2))
    assert pts.shape == (4000, 2)
    assert np.all(np.abs(pts.mean(axis=0) - z) < 4 * 0.2 / np.sqrt(4000))
    assert np.all(np.abs(pts.std(axis=0, ddof=1) / 0.2 - 1) < 4 / np.sqrt(2 * 3999))
    assert all(np.isfinite(driver._log_post(model, corr, p)) for p in pts[:50])
    # the same generator state gives the same starts
    again = driver.starts_near(model, corr, z, np.random.default_rng(1), 4000, 0.2)
    assert np.array_equal(np.array(again), pts)
    for kw, word in (
        ({"z": np.array([np.nan, 0.0])}, "`z`"),
        ({"z": np.zeros((1, 2))}, "`z`"),
        ({"chains": 0}, "`chains`"),
        ({"chains": 1.5}, "`chains`"),
        ({"scale": 0.0}, "`scale`"),
    ):
        args = {"z": z, "chains": 2, "scale": 0.3, **kw}
        with pytest.raises(ValueError, match=word):
            driver.starts_near(model, corr, args["z"], np.random.default_rng(0), args["chains"],
                               args["scale"])  # fmt: skip
