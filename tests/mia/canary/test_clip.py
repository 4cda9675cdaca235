"""The one L2 clipping of client updates (mia.canary._clip), shared by DP-FedAvg and CANIFE."""

import numpy as np
import pytest

from mia.canary import _clip, canife, fedavg


def test_both_audits_use_the_one_clip():
    assert canife.clip_l2 is _clip.clip_l2 and fedavg.clip_l2 is _clip.clip_l2
    assert not hasattr(canife, "_clip") and not hasattr(fedavg, "_clip")


@pytest.mark.parametrize("c", [0.1, 1.0, 7.5])
def test_clip_l2_is_the_projection_onto_the_ball(c):
    rng = np.random.default_rng(0)
    for scale in (1e-3, 0.5, 1.0, 3.0, 1e3):
        u = rng.normal(size=50) * scale
        out = _clip.clip_l2(u, c)
        norm = np.sqrt(np.sum(u * u))
        # the nearest point of the ball {||v|| <= c}: u itself inside, c u / ||u|| outside
        want = u if norm <= c else c * u / norm
        np.testing.assert_allclose(out, want, rtol=1e-14)
        assert np.sqrt(np.sum(out * out)) <= c * (1 + 1e-12)


def test_clip_l2_edges():
    z = np.zeros(4)
    assert np.array_equal(_clip.clip_l2(z, 1.0), z)  # no division by a zero norm
    u = np.array([3.0, 4.0])
    assert _clip.clip_l2(u, 5.0) is u  # at the bound: unchanged, not copied
    np.testing.assert_allclose(_clip.clip_l2(u, 1.0), [0.6, 0.8])
    np.testing.assert_allclose(_clip.clip_l2(np.ones((2, 2)), 1.0), np.full((2, 2), 0.5))
