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


# -- chunks, progress and automatic length -------------------------------------------------
COUNTS = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
TINY = dict(delta=1e-5, chains=2, draws=200, tune=100, seed=7, check=False)


def test_chunk_size_and_progress_do_not_change_the_draws(monkeypatch):
    import io

    import samplers.driver
    from bayes_dp._progress import TqdmProgress

    ref = bdp.estimate_epsilon(COUNTS, progress=False, **TINY)
    buf = io.StringIO()
    bar = TqdmProgress(file=buf, mininterval=0)
    with_bar = bdp.estimate_epsilon(COUNTS, progress=bar, **TINY)
    bar.close()
    calls = []
    monkeypatch.setattr(samplers.driver, "CHUNK_SECONDS", 1e-4)  # a chunk per few iterations
    tiny_chunks = bdp.estimate_epsilon(
        COUNTS, progress=lambda done, total: calls.append((done, total)), **TINY
    )
    for post in (with_bar, tiny_chunks):
        for v in ("eps", "s"):
            np.testing.assert_array_equal(post.draws(v), ref.draws(v))
    total = 2 * (100 + 200)  # iterations of both chains, warm-up included
    assert len(calls) > 20 and calls[-1] == (total, total)
    assert all(b[0] >= a[0] for a, b in zip(calls, calls[1:], strict=False))
    text = buf.getvalue()
    assert "draws/s" in text and "100%" in text and "600/600" in text


def test_progress_must_be_bool_or_callable():
    with pytest.raises(TypeError, match="`progress`"):
        bdp.estimate_epsilon(COUNTS, progress="yes", **TINY)


def test_automatic_length_extends_and_equals_a_fixed_run(monkeypatch):
    import bayes_dp.estimate as est

    monkeypatch.setattr(est, "AUTO_FIRST_DRAWS", 100)  # force at least one extension
    notes = []

    class Recorder:
        def __call__(self, done, total):
            pass

        def note(self, text):
            notes.append(text)

    kw = dict(delta=1e-5, prior=bdp.Prior(s=0.6), chains=2, tune=100, seed=3)
    auto = bdp.estimate_epsilon(COUNTS, progress=Recorder(), **kw)
    assert auto.converged is True and auto.settings["stop_reason"] == "converged"
    assert auto.n_draws > 100 and auto.settings["draws_requested"] is None
    assert any("extending" in n for n in notes) and "converged" in notes[-1]
    d = auto.diagnostics()["eps"]
    assert d["r_hat"] <= 1.01 and d["ess_bulk"] >= 400
    fixed = bdp.estimate_epsilon(COUNTS, draws=auto.n_draws, progress=False, **kw)
    np.testing.assert_array_equal(fixed.draws("eps"), auto.draws("eps"))
    assert fixed.converged is None and fixed.settings["stop_reason"] == "draws"


def test_not_converged_is_recorded_and_warned(monkeypatch):
    import bayes_dp.estimate as est

    monkeypatch.setattr(est, "AUTO_FIRST_DRAWS", 100)
    monkeypatch.setattr(est, "AUTO_MAX_DRAWS", 300)
    monkeypatch.setattr(est, "AUTO_ESS_MIN", 10**9)  # cannot be met
    kw = dict(delta=1e-5, prior=bdp.Prior(s=0.6), chains=2, tune=100, seed=3, progress=False)
    with pytest.warns(bdp.ConvergenceWarning) as rec:
        post = bdp.estimate_epsilon(COUNTS, **kw)
    assert any(str(w.message).startswith("not converged: the largest run") for w in rec)
    assert post.converged is False and post.settings["stop_reason"] == "max_draws"
    assert post.n_draws == 300


def test_time_budget_stops_a_long_run():
    import time

    # the budget counts the set-up too (compilation, starting points): measure it first
    first = bdp.estimate_epsilon(COUNTS, progress=False, **{**TINY, "draws": 10, "tune": 10})
    budget = round(first.settings["seconds"] + 3.0, 1)
    t0 = time.perf_counter()
    with pytest.warns(bdp.ConvergenceWarning) as rec:
        post = bdp.estimate_epsilon(
            COUNTS, delta=1e-5, chains=2, tune=100, draws=10**7, max_time=budget, seed=0
        )
    assert time.perf_counter() - t0 < budget + 5
    assert any(f"time budget (max_time = {budget} s) ran out" in str(w.message) for w in rec)
    assert post.converged is False and post.settings["stop_reason"] == "max_time"
    assert 0 < post.n_draws < 10**7 and post.settings["max_time"] == budget
    with pytest.raises(bdp.TimeBudgetError, match="no draws"):
        bdp.estimate_epsilon(COUNTS, delta=1e-5, chains=2, tune=10**6, max_time=0.5, seed=0)
