"""The ``bayes-dp gdp`` subcommand (bayes_dp/cli/gdp.py)."""

from __future__ import annotations

import json

import numpy as np

from bayes_dp import load_posterior
from bayes_dp.cli import main


def _files(tmp_path, mu=1.5, n=600):
    rng = np.random.default_rng(0)
    a, b = tmp_path / "in.txt", tmp_path / "out.csv"
    np.savetxt(a, rng.normal(mu, 1, n), header="score", comments="")
    np.savetxt(b, rng.normal(0, 1, n))
    return str(a), str(b)


def test_gdp_command_prints_json_and_writes_the_posterior(tmp_path, capsys):
    a, b = _files(tmp_path)
    argv = ["gdp", a, b, "--delta", "1e-5", "--draws", "500", "--json", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "res")]) == 0
    res = json.loads(capsys.readouterr().out)
    mu = res["quantiles"]["mu"]
    assert mu["5%"] < 1.5 < mu["95%"]
    assert res["exit_status"] == 0 and res["warnings"] == [] and 0.01 <= res["fit_check"]["gdp"]
    post = load_posterior(res["files"]["posterior"])
    assert post.quantile(0.5, "mu") == mu["50%"]


def test_gdp_command_takes_one_run_audits_and_reports_bad_input(tmp_path, capsys):
    a, b = _files(tmp_path)
    base = ["gdp", a, b, "--delta", "1e-5", "--draws", "300", "--quiet"]
    # the 400 most confident of 1,000 guesses of mu = 1.5: accuracy A(1.5, 0.4) = 0.92
    assert main([*base, "--one-run", "1000,400,367"]) == 0
    assert "90% credible interval for eps" in capsys.readouterr().out
    assert main([*base, "--one-run", "3,4"]) == 1
    assert "--one-run must be M,R,V" in capsys.readouterr().err
    assert main([*base, "--s", "2"]) == 1
    assert "`s` must be <= 1.0; found 2.0" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("1.0\n2.0\nthree\n")
    assert main(["gdp", str(bad), b, "--delta", "1e-5", "--quiet"]) == 1
    assert "line 3: expected one number, found 'three'" in capsys.readouterr().err
