"""Fail-safe runs (issue 13): files written whole or not at all, run until converged or say so,
sampling in chunks (progress, Ctrl-C) without changing the draws."""

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp import _arviz
from bayes_dp.posterior import Posterior


def small_posterior(names=("eps", "s_canary", "s")):
    rng = np.random.default_rng(0)
    draws = {v: rng.uniform(0.1, 0.9, size=(2, 50)) for v in names}
    return Posterior(draws, {"accept_joint": np.full((2, 50), 0.3)}, {"fixed": {}, "delta": 1e-5})


# -- files ---------------------------------------------------------------------------------
def test_interrupted_netcdf_write_leaves_old_file_and_no_parts(tmp_path, monkeypatch):
    post = small_posterior()
    target = tmp_path / "posterior.nc"
    target.write_bytes(b"the earlier, complete file")

    def half_then_interrupt(data, path):
        with open(path, "wb") as fh:
            fh.write(b"\x89HDF\r\n\x1a\n half")
        raise KeyboardInterrupt

    monkeypatch.setattr(_arviz, "to_netcdf", half_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        post.to_netcdf(target)
    assert target.read_bytes() == b"the earlier, complete file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["posterior.nc"]
    monkeypatch.undo()
    post.to_netcdf(target)
    assert bdp.load_posterior(target).var_names == post.var_names
    assert sorted(p.name for p in tmp_path.iterdir()) == ["posterior.nc"]


def test_interrupted_report_write_leaves_nothing(tmp_path, monkeypatch):
    from pathlib import Path

    post = small_posterior(("eps",))
    calls = []
    real = Path.write_text

    def interrupt(self, *args, **kwargs):
        calls.append(self)
        real(self, "<!DOCTYPE html><html>half", encoding="utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", interrupt)
    with pytest.raises(KeyboardInterrupt):
        post.report(tmp_path / "report.html")
    monkeypatch.undo()
    assert calls and calls[0].name != "report.html"  # written under a temporary name
    assert list(tmp_path.iterdir()) == []


def test_variable_order_survives_netcdf(tmp_path):
    post = small_posterior(("eps", "s_canary", "s", "tau_lira"))
    back = bdp.load_posterior(post.to_netcdf(tmp_path / "p.nc"))
    assert back.var_names == ["eps", "s_canary", "s", "tau_lira"]
    assert list(back.summary().index) == back.var_names
