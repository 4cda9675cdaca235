"""The ArviZ adapter works with whichever ArviZ line is installed (0.x or 1.x)."""

import numpy as np
import pytest

from bayes_dp.results import arviz_adapter


def test_version_detected():
    major = int(arviz_adapter.ARVIZ_VERSION.split(".")[0])
    assert arviz_adapter.ARVIZ_1 == (major >= 1)


def test_diagnostics_on_iid_draws():
    x = np.random.default_rng(1).normal(size=(4, 2000))
    assert arviz_adapter.rhat(x) == pytest.approx(1.0, abs=0.01)
    assert 6000 < arviz_adapter.ess(x, "bulk") < 10_000
    assert 5000 < arviz_adapter.ess(x, "tail") < 10_000
    # mcse of the mean of iid draws is sd / sqrt(n)
    assert arviz_adapter.mcse(x) == pytest.approx(1 / np.sqrt(8000), rel=0.15)


def test_round_trip_with_attrs(tmp_path):
    x = np.arange(12.0).reshape(2, 6)
    data = arviz_adapter.from_dict({"eps": x}, {"accept": x > 3}, {"note": "hello"})
    arviz_adapter.to_netcdf(data, tmp_path / "d.nc")
    back = arviz_adapter.from_netcdf(tmp_path / "d.nc")
    assert arviz_adapter.attrs(back)["note"] == "hello"
    np.testing.assert_array_equal(arviz_adapter.group(back, "posterior")["eps"].values, x)
