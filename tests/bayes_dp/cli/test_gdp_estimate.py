"""``bayes-dp estimate`` with in/out score files and one-run summaries (bayes_dp/cli/gdp.py)."""

from __future__ import annotations

import json

import numpy as np

from bayes_dp import load_posterior
from bayes_dp.cli import main


def _score_files(tmp_path, mu=1.5, n=400):
    rng = np.random.default_rng(0)
    npz = tmp_path / "canary.npz"
    np.savez(npz, in_scores=rng.normal(mu, 1, n), out_scores=rng.normal(0, 1, n))
    x = np.r_[rng.normal(mu, 1, n), rng.normal(0, 1, n)]
    member = ["1"] * n + ["false"] * n
    csv = tmp_path / "lira.csv"
    csv.write_text("score,member\n" + "".join(f"{a},{b}\n" for a, b in zip(x, member, strict=True)))
    return str(npz), str(csv)


def test_estimate_reads_score_files_and_one_run_audits_into_one_posterior(tmp_path, capsys):
    npz, csv = _score_files(tmp_path)
    out = tmp_path / "res"
    argv = ["estimate", npz, "--delta", "1e-5", "--out", str(out), "--draws", "500"]
    # the 400 most confident of 1,000 guesses of mu = 1.5: accuracy A(1.5, 0.4) = 0.92
    code = main([*argv, "--gdp-scores", csv, "--one-run", "1000,400,367", "--json", "-q"])
    res = json.loads(capsys.readouterr().out)
    assert code == 0 and res["exit_status"] == 0 and res["model"] == "gdp"
    lo, hi = res["variables"]["mu"]["interval"]
    assert lo < 1.5 < hi
    assert set(res["fit_check"]) == {"canary", "lira"}
    assert [g["name"] for g in res["groups"]] == ["canary", "lira", None]
    post = load_posterior(res["files"]["posterior"])
    assert (
        post.settings["model"] == "gdp"
        and post.quantile(0.5, "mu") == res["variables"]["mu"]["median"]
    )
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="fit-check"' in page and "posterior of the Gaussian-DP parameter mu" in page
    assert res["claim"]["sentence"].startswith(
        "With 95% posterior probability and 95% confidence, eps >="
    )
    assert res["gaussian_shape"] == "fits" and res["shape_free_lower"] == res["claim"]["lower"]


def test_one_run_file_and_counts_file_route_to_the_joint_posterior(tmp_path, capsys):
    runs = tmp_path / "runs.csv"
    runs.write_text("m,r,v\n1000,400,300\n1000,200,160\n")
    argv = ["estimate", str(runs), "--delta", "1e-5", "--out", str(tmp_path / "a"), "-q"]
    assert main([*argv, "--draws", "300", "--no-report"]) == 0
    text = capsys.readouterr().out
    assert "90% credible interval for eps at delta=1e-05" in text
    assert not (tmp_path / "a" / "report.html").exists()
    counts = tmp_path / "counts.csv"
    counts.write_text("fp,n_neg,fn,n_pos\n40,1000,250,1000\n")
    argv = ["estimate", str(counts), "--delta", "1e-5", "--out", str(tmp_path / "b"), "-q"]
    more = ["--one-run", "1000,400,300", "--counts-delta", "1e-3", "--draws", "300", "--no-report"]
    assert main([*argv, *more, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    post = load_posterior(res["files"]["posterior"])
    kinds = [(g["kind"], g.get("delta")) for g in post.settings["groups"]]
    assert kinds == [("counts", 1e-3), ("one_run", None)]


def test_bad_score_and_one_run_files_are_input_errors(tmp_path, capsys):
    base = ["--delta", "1e-5", "--out", str(tmp_path / "r"), "-q"]
    bad = tmp_path / "s.csv"
    bad.write_text("score,member\n1.0,1\n0.5,maybe\n")
    assert main(["estimate", str(bad), *base]) == 1
    assert (
        "row 2: column 'member' must be 1/0 or true/false; found 'maybe'" in capsys.readouterr().err
    )
    runs = tmp_path / "runs.csv"
    runs.write_text("m,r,v\n100,50,60\n")
    assert main(["estimate", str(runs), *base]) == 1
    assert "`v` must be <= `r`; found v=60 > r=50 at row 0" in capsys.readouterr().err
    matrix = tmp_path / "matrix.npz"
    np.savez(matrix, scores=np.zeros((4, 2)), keep=np.zeros((4, 2), bool))
    assert main(["estimate", str(matrix), *base, "--one-run", "100,50,40"]) == 1
    assert "is a score matrix or a result folder" in capsys.readouterr().err
    npz = tmp_path / "x.npz"
    np.savez(npz, in_scores=np.zeros(3))
    runs.write_text("m,r,v\n100,50,40\n")
    assert main(["estimate", str(runs), *base, "--gdp-scores", str(npz)]) == 1
    assert "lacks the array(s) ['out_scores']" in capsys.readouterr().err


def test_compare_puts_the_side_by_side_table_in_json_and_report(tmp_path, capsys):
    npz, _ = _score_files(tmp_path, mu=1.0, n=200)
    out = tmp_path / "res"
    argv = ["estimate", npz, "--delta", "1e-5", "--out", str(out), "--draws", "300", "--json"]
    assert main([*argv, "--compare", "-q"]) == 0
    res = json.loads(capsys.readouterr().out)
    rows = res["comparison"]
    assert (
        "one-run bound (Steinke et al.)" in rows
        and rows["GDP bound, Pareto frontier"]["median"] is None
    )
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Clopper-Pearson, best threshold" in page and "one-run posterior" in page
