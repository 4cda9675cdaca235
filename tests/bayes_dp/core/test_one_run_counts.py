"""One-run audits' counts (bayes_dp.core.observations.OneRunCounts): pairs, validation, records."""

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.core.observations import OneRunCounts
from bayes_dp.one_run import core as one_run


def test_the_class_is_one_object_under_its_public_names():
    assert bdp.OneRunCounts is OneRunCounts is one_run.OneRunCounts


def test_pairs_default_to_bits_and_broadcast():
    c = OneRunCounts(m=1000, r=[100, 200], v=[80, 150])
    assert c.pairs.tolist() == [False, False] and c.factor.tolist() == [1.0, 1.0]
    c = OneRunCounts(m=1000, r=[100, 200], v=[80, 150], pairs=True)
    assert c.pairs.tolist() == [True, True] and c.factor.tolist() == [2.0, 2.0]
    c = OneRunCounts(m=1000, r=[100, 200], v=[80, 150], pairs=[1, 0])
    assert c.pairs.tolist() == [True, False]
    assert not c.pairs.flags.writeable
    assert c.to_dict() == {
        "m": [1000, 1000],
        "r": [100, 200],
        "v": [80, 150],
        "pairs": [True, False],
    }
    assert c[1].to_dict() == {"m": [1000], "r": [200], "v": [150], "pairs": [False]}
    assert repr(c) == "OneRunCounts(m=[1000, 1000], r=[100, 200], v=[80, 150], pairs=[True, False])"
    assert repr(c[1]) == "OneRunCounts(m=[1000], r=[200], v=[150])"


@pytest.mark.parametrize(
    ("pairs", "err", "match"),
    [
        ("yes", TypeError, "`pairs` must be True or False .* found 'yes'"),
        ([0.5, 1.0], TypeError, "`pairs` must be True or False"),
        ([2, 0], TypeError, "`pairs` must be True or False"),
        ([[True, False]], ValueError, "`pairs` must be a bool or 1-D; found shape"),
        ([True, False, True], ValueError, "same length"),
    ],
)
def test_pairs_are_validated(pairs, err, match):
    with pytest.raises(err, match=match):
        OneRunCounts(m=10, r=[4, 5], v=[1, 2], pairs=pairs)


def test_the_grid_posterior_records_the_pairs_and_their_slack(tmp_path):
    c = OneRunCounts(m=500, r=[100, 50], v=[90, 45], pairs=[False, True])
    post = bdp.estimate_one_run(c, delta=1e-6, prior=bdp.Prior(s=1.0), draws=200, seed=0)
    g = post.settings["groups"][0]
    assert g["pairs"] == [False, True]
    # 2 m delta for bits, 2 m (2 delta) for pairs (their coins are (2 eps, 2 delta)-DP)
    np.testing.assert_allclose(post.settings["delta_slack"], [1e-3, 2e-3], rtol=1e-12)
    back = bdp.load_posterior(post.to_netcdf(tmp_path / "one_run.nc"))
    assert back.settings["groups"] == post.settings["groups"]


def test_an_audit_of_pairs_is_an_audit_of_bits_at_twice_eps():
    bits = OneRunCounts(m=300, r=120, v=100)
    pairs = OneRunCounts(m=300, r=120, v=100, pairs=True)
    for eps, s in [(0.4, 0.2), (1.3, 0.9), (2.0, 0.0)]:
        assert one_run.one_run_log_likelihood(eps, s, pairs) == pytest.approx(
            float(one_run.one_run_log_likelihood(2 * eps, s, bits)), rel=1e-13
        )
