"""The ArviZ adapter works with whichever ArviZ line is installed (0.x or 1.x)."""

import numpy as np
import pytest

from bayes_dp import _arviz


def test_version_detected():
    major = int(_arviz.ARVIZ_VERSION.split(".")[0])
    assert _arviz.ARVIZ_1 == (major >= 1)


def test_diagnostics_on_iid_draws():
    x = np.random.default_rng(1).normal(size=(4, 2000))
    assert _arviz.rhat(x) == pytest.approx(1.0, abs=0.01)
    assert 6000 < _arviz.ess(x, "bulk") < 10_000
    assert 5000 < _arviz.ess(x, "tail") < 10_000
    # mcse of the mean of iid draws is sd / sqrt(n)
    assert _arviz.mcse(x) == pytest.approx(1 / np.sqrt(8000), rel=0.15)


def test_round_trip_with_attrs(tmp_path):
    x = np.arange(12.0).reshape(2, 6)
    data = _arviz.from_dict({"eps": x}, {"accept": x > 3}, {"note": "hello"})
    _arviz.to_netcdf(data, tmp_path / "d.nc")
    back = _arviz.from_netcdf(tmp_path / "d.nc")
    assert _arviz.attrs(back)["note"] == "hello"
    np.testing.assert_array_equal(_arviz.group(back, "posterior")["eps"].values, x)
