import numpy as np
import pytest

import bayes_dp as bdp


def test_broadcast_and_rates():
    c = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=np.array([250, 200]), n_pos=[1000, 500])
    assert len(c) == 2 and c.n_bases == 2
    np.testing.assert_array_equal(c.n_neg, [1000, 1000])
    np.testing.assert_allclose(c.fnr, [0.25, 0.4])
    assert c.fp.dtype == np.int64
    with pytest.raises(ValueError):
        c.fp[0] = 3  # read-only


def test_scalar_and_integral_floats():
    c = bdp.AttackCounts(fp=3.0, n_neg=10, fn=0, n_pos=10)
    assert c.to_dict() == {"fp": [3], "n_neg": [10], "fn": [0], "n_pos": [10]}


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        (dict(fp=[1, 2], n_neg=[10, 10, 10], fn=1, n_pos=10), ValueError, ["n_neg", "length"]),
        (dict(fp=[11], n_neg=[10], fn=1, n_pos=10), ValueError, ["fp", "11", "n_neg"]),
        (dict(fp=1, n_neg=10, fn=12, n_pos=10), ValueError, ["fn", "12"]),
        (dict(fp=-1, n_neg=10, fn=1, n_pos=10), ValueError, ["fp", "-1"]),
        (dict(fp=1, n_neg=0, fn=0, n_pos=10), ValueError, ["n_neg", "0"]),
        (dict(fp=1.5, n_neg=10, fn=1, n_pos=10), ValueError, ["fp", "1.5"]),
        (dict(fp=np.nan, n_neg=10, fn=1, n_pos=10), ValueError, ["fp", "nan"]),
        (dict(fp=1, n_neg=np.inf, fn=1, n_pos=10), ValueError, ["n_neg", "inf"]),
        (dict(fp="3", n_neg=10, fn=1, n_pos=10), TypeError, ["fp", "'3'"]),
        (dict(fp=[True], n_neg=10, fn=1, n_pos=10), TypeError, ["fp", "bool"]),
        (dict(fp=[], n_neg=10, fn=1, n_pos=10), ValueError, ["fp", "empty"]),
        (dict(fp=[[1]], n_neg=10, fn=1, n_pos=10), ValueError, ["fp", "shape"]),
        (dict(fp=[1, "a"], n_neg=10, fn=1, n_pos=10), TypeError, ["fp"]),
    ],
)
def test_bad_input_names_argument_and_value(kwargs, exc, words):
    with pytest.raises(exc) as info:
        bdp.AttackCounts(**kwargs)
    for w in words:
        assert w in str(info.value)


def test_from_decisions_matches_manual_count():
    rng = np.random.default_rng(3)
    labels = rng.random(500) < 0.5
    decisions = rng.random(500) < 0.3
    bases = rng.integers(0, 4, 500)
    c = bdp.AttackCounts.from_decisions(decisions, labels, bases)
    for b in range(4):
        m = bases == b
        assert c.fp[b] == np.sum(decisions[m] & ~labels[m])
        assert c.fn[b] == np.sum(~decisions[m] & labels[m])
        assert c.n_neg[b] == np.sum(~labels[m])
        assert c.n_pos[b] == np.sum(labels[m])


def test_from_decisions_errors():
    with pytest.raises(ValueError, match="same length"):
        bdp.AttackCounts.from_decisions([1, 0], [1])
    with pytest.raises(ValueError, match="no H1"):
        bdp.AttackCounts.from_decisions([1, 0], [0, 0])
    with pytest.raises(TypeError, match="decisions"):
        bdp.AttackCounts.from_decisions([0.5, 1], [0, 1])


def test_concat_and_indexing():
    a = bdp.AttackCounts([1, 2], 10, [3, 4], 10)
    b = bdp.AttackCounts(5, 20, 6, 20)
    c = bdp.AttackCounts.concat([a, b])
    assert c.fp.tolist() == [1, 2, 5] and c.n_pos.tolist() == [10, 10, 20]
    assert c[1:] == bdp.AttackCounts([2, 5], [10, 20], [4, 6], [10, 20])
    with pytest.raises(TypeError, match=r"counts\[1\]"):
        bdp.AttackCounts.concat([a, "x"])
    with pytest.raises(ValueError, match="empty"):
        bdp.AttackCounts.concat([])


def test_length_one_list_does_not_broadcast():
    with pytest.raises(ValueError) as info:
        bdp.AttackCounts(fp=[1, 2], n_neg=[1000], fn=[3, 4], n_pos=1000)
    msg = str(info.value)
    assert "`n_neg`" in msg and "length 1" in msg and "length 2" in msg
    assert "only scalars broadcast" in msg and "'n_pos': 'scalar'" in msg
    with pytest.raises(ValueError, match="`fn` has length 1"):
        bdp.AttackCounts(fp=[1, 2], n_neg=10, fn=np.array([3]), n_pos=10)


def test_scalars_and_zero_d_arrays_still_broadcast():
    c = bdp.AttackCounts(fp=[1, 2], n_neg=np.array(1000), fn=[3, 4], n_pos=np.int64(500))
    assert c.n_neg.tolist() == [1000, 1000] and c.n_pos.tolist() == [500, 500]
    one = bdp.AttackCounts(fp=[1], n_neg=[10], fn=[2], n_pos=10)  # all of length 1: fine
    assert len(one) == 1
