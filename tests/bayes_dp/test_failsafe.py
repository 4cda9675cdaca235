"""Fail-safe runs: files written whole or not at all, run until converged or say so,
sampling in chunks (progress, Ctrl-C) without changing the draws."""

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.results import arviz_adapter
from bayes_dp.results.posterior import Posterior


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

    monkeypatch.setattr(arviz_adapter, "to_netcdf", half_then_interrupt)
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
    import threading

    import samplers.exact.driver
    from bayes_dp.inference.progress import TqdmProgress

    ref = bdp.estimate_epsilon(COUNTS, progress=False, **TINY)
    buf = io.StringIO()
    bar = TqdmProgress(file=buf, mininterval=0)
    with_bar = bdp.estimate_epsilon(COUNTS, progress=bar, **TINY)
    bar.close()
    calls = []
    monkeypatch.setattr(samplers.exact.driver, "CHUNK_SECONDS", 1e-4)  # a chunk per few iterations
    threads = set()

    def record(done, total):
        calls.append((done, total))
        threads.add(threading.current_thread())

    tiny_chunks = bdp.estimate_epsilon(COUNTS, progress=record, **TINY)
    for post in (with_bar, tiny_chunks):
        for v in ("eps", "s"):
            np.testing.assert_array_equal(post.draws(v), ref.draws(v))
    total = 2 * (100 + 200)  # iterations of both chains, warm-up included
    # reported from the calling thread only (about every 0.1 s), never from the workers
    assert threads == {threading.main_thread()}
    assert len(calls) >= 2 and calls[-1] == (total, total)
    assert all(b[0] >= a[0] for a, b in zip(calls, calls[1:], strict=False))
    text = buf.getvalue()
    assert "draws/s" in text and "100%" in text and "600/600" in text


def test_bar_shows_on_a_terminal_that_reports_no_size():
    import os

    from bayes_dp.inference.progress import TqdmProgress

    master, slave = os.openpty()  # a new pty has 0 x 0 cells, as under `script`
    out = b""
    try:
        with os.fdopen(slave, "w") as fh:
            bar = TqdmProgress(file=fh, mininterval=0)
            bar(500, 1000)
            bar(1000, 1000)
            bar.close()
            fh.flush()
        # the slave is closed: read everything written (one read may return only a part);
        # Linux raises EIO at the end instead of returning b""
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
    assert b"draws/s" in out and b"1.00k/1.00k" in out


def test_progress_must_be_bool_or_callable():
    with pytest.raises(TypeError, match="`progress`"):
        bdp.estimate_epsilon(COUNTS, progress="yes", **TINY)


def test_automatic_length_extends_and_equals_a_fixed_run(monkeypatch):
    import bayes_dp.inference.estimate as est

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
    assert d["r_hat"] <= 1.01 and min(d["ess_bulk"], d["ess_tail"]) >= est.AUTO_ESS_MIN
    fixed = bdp.estimate_epsilon(COUNTS, draws=auto.n_draws, progress=False, **kw)
    np.testing.assert_array_equal(fixed.draws("eps"), auto.draws("eps"))
    assert fixed.converged is None and fixed.settings["stop_reason"] == "draws"


def test_not_converged_is_recorded_and_warned(monkeypatch):
    import bayes_dp.inference.estimate as est

    monkeypatch.setattr(est, "AUTO_FIRST_DRAWS", 100)
    monkeypatch.setattr(est, "AUTO_MAX_DRAWS", 300)
    monkeypatch.setattr(est, "AUTO_ESS_MIN", 10**9)  # cannot be met
    kw = dict(delta=1e-5, prior=bdp.Prior(s=0.6), chains=2, tune=100, seed=3, progress=False)
    with pytest.warns(bdp.ConvergenceWarning) as rec:
        post = bdp.estimate_epsilon(COUNTS, **kw)
    start = "Not converged: the run stopped after 300 draws per chain because it reached the"
    assert any(str(w.message).startswith(start) for w in rec)
    assert post.converged is False and post.settings["stop_reason"] == "max_draws"
    assert post.n_draws == 300


def test_time_budget_stops_a_long_run():
    import time

    # the budget counts the set-up too (compilation, starting points, the warm-up and the
    # likelihood table built after it, which the deadline also interrupts): measure it first
    first = bdp.estimate_epsilon(COUNTS, progress=False, **{**TINY, "draws": 10, "tune": 100})
    # twice that plus 5 s: on a loaded machine set-up + 3 s once gave no draws; some must
    # fit in the budget
    budget = round(2.0 * first.settings["seconds"] + 5.0, 1)
    t0 = time.perf_counter()
    with pytest.warns(bdp.ConvergenceWarning) as rec:
        post = bdp.estimate_epsilon(
            COUNTS, delta=1e-5, chains=2, tune=100, draws=10**7, max_time=budget, seed=0
        )
    assert time.perf_counter() - t0 < budget + 5
    assert any(f"its time budget of {budget:g} s ran out" in str(w.message) for w in rec)
    assert post.converged is False and post.settings["stop_reason"] == "max_time"
    assert 0 < post.n_draws < 10**7 and post.settings["max_time"] == budget
    with pytest.raises(bdp.TimeBudgetError, match="no draws"):
        bdp.estimate_epsilon(COUNTS, delta=1e-5, chains=2, tune=10**6, max_time=0.5, seed=0)


# -- the command line ----------------------------------------------------------------------
FP = [40, 50, 60, 100, 100, 110, 120, 200, 200, 200]
FN = [250, 200, 150, 100, 120, 100, 100, 80, 70, 60]
ENTRY = "import sys; from bayes_dp.__main__ import console; sys.exit(console())"  # the script


@pytest.fixture
def counts_csv(tmp_path):
    path = tmp_path / "counts.csv"
    rows = "".join(f"{a},1000,{b},1000\n" for a, b in zip(FP, FN, strict=True))
    path.write_text("fp,n_neg,fn,n_pos\n" + rows)
    return path


def default_sigint():
    """Give the child the default SIGINT disposition (run in the child before exec).

    A child inherits an ignored SIGINT, and Python then installs no KeyboardInterrupt handler.
    In a full local run (optional extras installed) both SIGINT tests failed with a child that
    ran on after SIGINT (one to its normal end), while they pass on their own: something
    earlier in the session leaves SIGINT ignored (not identified). The tests are about the
    program's handling of Ctrl-C, so the child starts with the default disposition.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def subprocess_env():
    import os
    from pathlib import Path

    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    return env


def test_not_converged_exit_status_3_and_report(counts_csv, tmp_path, capsys, monkeypatch):
    import json

    import bayes_dp.inference.estimate as est
    from bayes_dp.cli import EXIT_STATUSES, main

    monkeypatch.setattr(est, "AUTO_FIRST_DRAWS", 100)
    monkeypatch.setattr(est, "AUTO_MAX_DRAWS", 300)
    monkeypatch.setattr(est, "AUTO_ESS_MIN", 10**9)  # cannot be met: stops unconverged
    out = tmp_path / "o"
    args = ["estimate", str(counts_csv), "--delta", "1e-5", "--out", str(out), "--chains", "2"]
    rc = main([*args, "--tune", "100", "--json", "--max-time", "120"])
    captured = capsys.readouterr()
    assert rc == 3 and EXIT_STATUSES[3].startswith("not converged")
    result = json.loads(captured.out)
    assert result["exit_status"] == 3 and result["exit_status_meaning"].startswith("not conv")
    assert result["converged"] is False and result["stop_reason"] == "max_draws"
    assert result["max_time"] == 120.0 and result["draws"] == 300
    assert result["warnings"][0].startswith("Not converged") and "not reliable" in captured.err
    assert (out / "posterior.nc").is_file()
    html = (out / "report.html").read_text()
    headline = html.split("<h2>")[0]
    assert "not reliable" in headline and "<b>[" not in headline
    # a converged (or fixed-length) run keeps status 0 and its headline in bold
    rc = main([*args, "--tune", "100", "--draws", "200", "--progress-every", "0"])
    assert rc == 0
    headline = (out / "report.html").read_text().split("<h2>")[0]
    assert "<b>" in headline


def test_help_lists_exit_statuses(capsys):
    from bayes_dp.cli import EXIT_STATUSES, main
    from bayes_dp.core.thresholds import AUTO_ESS_MIN, RHAT_MAX

    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for needle in ("0 success", "1 bad input", "2 usage error", "3 not converged", "130 inter"):
        assert needle in text, needle
    # the criteria quoted are the sampler's
    assert f"r_hat <= {RHAT_MAX} and bulk and tail ESS >= {AUTO_ESS_MIN}" in EXIT_STATUSES[3]


def test_ctrl_c_mid_sampling_exits_130_at_once(counts_csv, tmp_path):
    import re
    import signal
    import subprocess
    import sys
    import threading
    import time

    out = tmp_path / "out"
    cmd = [sys.executable, "-c", ENTRY, "estimate", str(counts_csv), "--delta", "1e-5"]
    cmd += ["--out", str(out), "--chains", "2", "--draws", "1000000", "--progress-every", "0.1"]
    with subprocess.Popen(
        cmd,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_sigint,
    ) as proc:
        err = bytearray()

        def read():
            while chunk := proc.stderr.read1(4096):
                err.extend(chunk)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            # wait until the bar shows draws done (sampling under way), then press Ctrl-C
            moving = re.compile(rb"sampling: +\d+%\|[^|]*\| *(?!0\.00/)[0-9.]+[kMG]?/")
            deadline = time.monotonic() + 240
            while not moving.search(bytes(err)) and proc.poll() is None:
                assert time.monotonic() < deadline, bytes(err).decode()
                time.sleep(0.05)
            assert proc.poll() is None, bytes(err).decode()
            time.sleep(0.5)
            t0 = time.monotonic()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)  # a hang fails here (and is killed below), never blocks CI
            elapsed = time.monotonic() - t0
            reader.join(timeout=10)
            stdout = proc.stdout.read()
        finally:
            if proc.poll() is None:
                proc.kill()
    text = bytes(err).decode()
    assert proc.returncode == 130, text
    assert elapsed < 1.0, f"took {elapsed:.2f} s to stop"
    assert "Traceback" not in text and text.rstrip().endswith("bayes-dp: interrupted")
    assert stdout == b""
    assert not out.exists() or list(out.iterdir()) == []  # nothing (half-)written


def test_ctrl_c_during_import_exits_130_without_traceback(tmp_path):
    import subprocess
    import sys

    # deterministic: the first numpy import raises KeyboardInterrupt, as Ctrl-C would there
    hook = (
        "import sys\n"
        "class Stop:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numpy':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Stop())\n"
    )
    for extra in ([], ["--json"]):
        proc = subprocess.run(
            [sys.executable, "-c", hook + ENTRY, "report", "x.nc", *extra],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=tmp_path,
        )
        assert proc.returncode == 130 and proc.stderr == "bayes-dp: interrupted\n", proc.stderr
        if extra:
            import json

            assert json.loads(proc.stdout)["exit_status"] == 130
        else:
            assert proc.stdout == ""


def test_ctrl_c_while_modules_load_exits_130(tmp_path):
    """A real SIGINT once the heavy imports have begun (seen in ``-X importtime`` output)."""
    import signal
    import subprocess
    import sys
    import time

    with subprocess.Popen(
        [sys.executable, "-X", "importtime", "-c", ENTRY, "report", "x.nc"],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        preexec_fn=default_sigint,
    ) as proc:
        err = b""
        while b"numpy" not in err:  # numpy loads only inside the entry point's try
            line = proc.stderr.readline()
            assert line, err.decode()
            err += line
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        try:
            out, rest = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:  # a hang fails the test instead of blocking the run
                proc.kill()
    text = (err + rest).decode()
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    assert text.rstrip().endswith("bayes-dp: interrupted") and out == b""
    assert time.monotonic() - t0 < 10
