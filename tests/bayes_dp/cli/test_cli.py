"""Tests of the bayes-dp command line (through main() and once as a subprocess)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import bayes_dp as bdp
from bayes_dp.cli import InputError, main, read_counts

FP = [40, 50, 60, 100, 100, 110, 120, 200, 200, 200]
FN = [250, 200, 150, 100, 120, 100, 100, 80, 70, 60]
FAST = ["--draws", "200", "--tune", "100", "--chains", "2", "--progress-every", "0"]


def write_csv(path, rows, header="fp,n_neg,fn,n_pos"):
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


@pytest.fixture
def strong_csv(tmp_path):
    return write_csv(
        tmp_path / "strong.csv", [(a, 1000, b, 1000) for a, b in zip(FP, FN, strict=True)]
    )


def test_acceptance_estimate_writes_posterior_and_report(strong_csv, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["estimate", str(strong_csv), "--delta", "1e-5", "--out", str(out), *FAST])
    captured = capsys.readouterr()
    assert rc == 0
    assert "eps" in captured.out and "r_hat" in captured.out
    assert "sampling done in" in captured.err and "bayes-dp:" not in captured.out
    # one screen: the table, the claim in two sentences (the classical bound first), the files
    assert "With 95% confidence, eps >= " in captured.out
    assert captured.out.count("\n") <= 40 and "glossary:" not in captured.out
    assert f"written: {out / 'posterior.nc'}, {out / 'report.html'}" in captured.out
    assert "hdi_90%_lo" in captured.out and "hdi_5%" not in captured.out
    # the claim's parts and what the columns mean, behind flags
    more = ["--explain", "--glossary", "--no-report", "-q"]
    again = ["estimate", str(strong_csv), "--delta", "1e-5", "--out", str(tmp_path / "again")]
    assert main([*again, *FAST, *more]) == 0
    explained = capsys.readouterr().out
    assert "model: What the model says (not the finding): the posterior's 5% quantile" in explained
    assert "bound: With 95% confidence, eps >= " in explained
    assert "eps >= " in explained and "is not a finding" in explained
    assert "glossary:" in explained and "\nr_hat: " in explained
    # the log names the default group and shows no tau for a binomial model
    assert "no 'group' column), named 'counts'" in captured.err
    assert "tau=" not in captured.err
    post = bdp.load_posterior(out / "posterior.nc")
    assert post.n_draws == 200 and post.settings["seed"] == 0
    html = (out / "report.html").read_text()
    assert html.count("<img ") >= 3


def test_acceptance_bad_fn_names_row_and_column(tmp_path, capsys):
    bad = write_csv(tmp_path / "bad.csv", [(40, 1000, 250, 1000), (50, 1000, 1200, 1000)])
    rc = main(["estimate", str(bad), "--delta", "1e-5", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc != 0
    assert err.count("\n") == 1 and err.startswith("bayes-dp: error:")
    assert "row 2" in err and "'fn'" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "name, content, needles",
    [
        ("missing.csv", "fp,n_neg,fn\n40,1000,250\n", ["missing column 'n_pos'"]),
        (
            "typo.csv",
            "fp,n_nge,fn,n_pos\n40,1000,250,1000\n",
            ["unknown column 'n_nge'", "did you mean 'n_neg'?"],
        ),
        (
            "extra.csv",
            "fp,n_neg,fn,n_pos,notes,grup\n40,1000,250,1000,x,a\n",
            ["unknown columns 'notes'", "'grup' (did you mean 'group'?)", "valid columns"],
        ),
        (
            "dup.csv",
            "fp,n_neg,fn,n_pos,FP\n40,1000,250,1000,3\n",
            ["duplicate column 'fp'", "'FP'", "case-insensitive"],
        ),
        ("dup2.csv", "fp,fp,n_neg,fn,n_pos\n1,1,10,2,10\n", ["duplicate column 'fp'"]),
        (
            "semi.csv",
            "fp;n_neg;fn;n_pos\n40;1000;250;1000\n",
            ["'fp;n_neg;fn;n_pos'", "semicolon-separated", "comma-separated"],
        ),
        ("trailing.csv", "fp,n_neg,fn,n_pos,\n1,10,2,10,\n", ["header cell 5 is empty"]),
        (
            "emptygroup.csv",
            "fp,n_neg,fn,n_pos,group\n1,10,2,10,a\n1,10,2,10,\n",
            ["row 2", "'group'", "empty cell"],
        ),
        (
            "emptylik.csv",
            "fp,n_neg,fn,n_pos,likelihood\n1,10,2,10,\n",
            ["row 1", "'likelihood'", "empty cell"],
        ),
        (
            "slash.csv",
            "fp,n_neg,fn,n_pos,group\n1,10,2,10,a/b\n",
            ["row 1", "'group'", "'/'", "'a/b'"],
        ),
        (
            "rowkeys.json",
            '[{"fp": 1, "n_neg": 10, "fn": 2, "n_pos": 10, "Fp": 3}]',
            ["row 1", "duplicate column 'fp'"],
        ),
        (
            "rowtypo.json",
            '[{"fp": 1, "n_neg": 10, "fn": 2, "n_pos": 10, "gruop": "a"}]',
            ["row 1", "unknown column 'gruop'", "did you mean 'group'?"],
        ),
        ("dupkey.json", '{"fp": [1], "fp": [2], "n_neg": [10]}', ["duplicate key 'fp'"]),
        (
            "nullgroup.json",
            '{"fp": [1, 2], "n_neg": [10, 10], "fn": [1, 1], "n_pos": [10, 10], '
            '"group": ["a", null]}',
            ["row 2", "'group'", "empty cell"],
        ),
        ("text.csv", "fp,n_neg,fn,n_pos\n40,1000,abc,1000\n", ["row 1", "'fn'", "'abc'"]),
        ("frac.csv", "fp,n_neg,fn,n_pos\n40,1000,2.5,1000\n", ["row 1", "'fn'", "2.5"]),
        ("neg.csv", "fp,n_neg,fn,n_pos\n-1,1000,2,1000\n", ["row 1", "'fp'", ">= 0"]),
        ("zero.csv", "fp,n_neg,fn,n_pos\n0,0,2,1000\n", ["row 1", "'n_neg'"]),
        ("fpbig.csv", "fp,n_neg,fn,n_pos\n1,10,2,10\n11,10,2,10\n", ["row 2", "'fp'", "exceeds"]),
        ("blank.csv", "fp,n_neg,fn,n_pos\n1,,2,10\n", ["row 1", "'n_neg'", "empty"]),
        ("empty.csv", "", ["empty"]),
        ("header.csv", "fp,n_neg,fn,n_pos\n", ["no data rows"]),
        ("counts.txt", "fp,n_neg,fn,n_pos\n1,2,1,2\n", ["unknown file type", ".txt"]),
        ("bad.json", "{not json", ["not valid JSON"]),
        ("scalar.json", "3", ["list of row objects"]),
        ("rows.json", '[{"fp": 1, "n_neg": 10, "fn": 2}]', ["missing column 'n_pos'"]),
        ("cols.json", '{"fp": [1, 2], "n_neg": [10], "fn": [1], "n_pos": [10]}', ["lengths"]),
        (
            "lik.csv",
            "fp,n_neg,fn,n_pos,likelihood\n1,10,2,10,poisson\n",
            ["row 1", "'likelihood'", "poisson"],
        ),
        (
            "mixed.csv",
            "fp,n_neg,fn,n_pos,group,likelihood\n1,10,2,10,a,binomial\n1,10,2,10,a,"
            "bivariate_normal\n",
            ["row 2", "'likelihood'"],
        ),
        ("group.csv", "fp,n_neg,fn,n_pos,group\n1,10,2,10,9 bad\n", ["row 1", "'group'"]),
    ],
)
def test_malformed_files_exit_cleanly(tmp_path, capsys, name, content, needles):
    path = tmp_path / name
    path.write_text(content)
    rc = main(["estimate", str(path), "--delta", "1e-5", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("bayes-dp: error:") and err.count("\n") == 1, err
    for n in needles:
        assert n in err, (n, err)


def test_missing_file_and_bad_delta(strong_csv, tmp_path, capsys):
    assert main(["estimate", str(tmp_path / "nope.csv"), "--delta", "0.1", "--out", "x"]) == 1
    assert "nope.csv" in capsys.readouterr().err
    rc = main(["estimate", str(strong_csv), "--delta", "1.5", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "argument --delta: must be in [0, 1), found '1.5'" in err


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--delta", "2", "in [0, 1)"),
        ("--delta", "-1", "in [0, 1)"),
        ("--delta", "1", "in [0, 1)"),
        ("--delta", "nan", "finite"),
        ("--delta", "x", "expected a number"),
        ("--chains", "0", ">= 1"),
        ("--draws", "0", ">= 1"),
        ("--tune", "-1", ">= 0"),
        ("--seed", "-3", ">= 0"),
        ("--max-time", "0", "> 0"),
        ("--s", "1.5", "in [0, 1]"),
        ("--s", "-0.1", "in [0, 1]"),
        ("--prior-eps-scale", "0", "> 0"),
        ("--alpha", "1", "in (0, 1)"),
        ("--cores", "0", ">= 1"),
        ("--progress-every", "-1", ">= 0"),
        ("--chains", "2.5", "expected an integer"),
    ],
)
def test_option_out_of_range_is_a_usage_error_before_anything_runs(
    strong_csv, tmp_path, capsys, option, value, words
):
    out = tmp_path / "o"
    args = ["estimate", str(strong_csv), "--out", str(out)]
    args += [] if option == "--delta" else ["--delta", "1e-5"]
    rc = main([*args, option, value])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"argument {option}: must be" in err or f"argument {option}: expected" in err
    assert words in err and f"'{value}'" in err
    assert "sampling" not in err and "read " not in err  # nothing ran
    assert not out.exists()


def test_s_fixed_at_one_is_accepted_at_parse_time():
    from bayes_dp.cli import _parser

    args = _parser().parse_args(["estimate", "c.csv", "--delta", "0", "--out", "o", "--s", "1"])
    assert args.s_fixed == 1.0 and args.delta == 0.0


def test_usage_error_status_2(capsys):
    assert main(["estimate"]) == 2
    assert main([]) == 2
    assert main(["--help"]) == 0
    capsys.readouterr()


def test_unknown_likelihood_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text(
        "fp,n_neg,fn,n_pos,group,likelihood\n40,1000,250,1000,a,binomial\n"
        "50,1000,200,1000,b,poisson\n"
    )
    rc = main(["estimate", str(path), "--delta", "1e-5", "--out", str(tmp_path / "o"), *FAST])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("bayes-dp: error:") and "poisson" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_correlated_group_from_csv(tmp_path, capsys):
    path = tmp_path / "biv.csv"
    path.write_text(
        "fp,n_neg,fn,n_pos,group,likelihood\n40,1000,250,1000,a,binomial\n"
        "10,100,30,100,b,bivariate_normal\n12,100,25,100,b,bivariate_normal\n"
    )
    rc = main(["estimate", str(path), "--delta", "1e-5", "--out", str(tmp_path / "o"), *FAST])
    out = capsys.readouterr().out
    assert "tau_b" in out and "rho_b" in out
    assert rc == _status_of(tmp_path / "o" / "posterior.nc")


def _status_of(path) -> int:
    """The exit status a saved run must have had: 3 when it fails the convergence checks."""
    from bayes_dp.results.diagnostics import passes_convergence_checks

    return 0 if passes_convergence_checks(bdp.load_posterior(path)) else 3


def test_groups_and_json_inputs(tmp_path):
    rows = [
        {"fp": a, "n_neg": 1000, "fn": b, "n_pos": 1000, "group": "g1" if i < 5 else "g2"}
        for i, (a, b) in enumerate(zip(FP, FN, strict=True))
    ]
    p = tmp_path / "rows.json"
    p.write_text(json.dumps(rows))
    groups = read_counts(p)
    assert [g.name for g in groups] == ["g1", "g2"]
    assert [g.strength for g in groups] == ["shared", "own"]
    assert groups[1].counts.fp.tolist() == FP[5:]
    cols = tmp_path / "cols.json"
    cols.write_text(json.dumps({"fp": FP, "n_neg": [1000] * 10, "fn": FN, "n_pos": [1000] * 10}))
    (g,) = read_counts(cols)
    assert g.name == "counts" and g.counts.fn.tolist() == FN
    with pytest.raises(InputError):
        read_counts(cols, fmt="csv")


def test_fixed_s_and_report_subcommand(strong_csv, tmp_path, capsys):
    out = tmp_path / "o"
    rc = main(
        ["estimate", str(strong_csv), "--delta", "1e-5", "--out", str(out), "--s", "0.5", *FAST]
    )
    assert rc == 0
    post = bdp.load_posterior(out / "posterior.nc")
    assert post.var_names == ["eps"] and post.settings["fixed"] == {"s": 0.5}
    assert "fixed at 0.5" in capsys.readouterr().err
    rc = main(["report", str(out / "posterior.nc"), "--out", str(tmp_path / "again.html")])
    captured = capsys.readouterr()
    assert rc == 0 and (tmp_path / "again.html").read_text().count("<img ") >= 3
    assert captured.out == "" and "wrote" in captured.err  # log lines go to stderr
    rc = main(["report", str(out / "posterior.nc"), "--out", str(tmp_path / "b.html"), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0 and result["fixed"] == {"s": 0.5} and "s" not in result["variables"]
    assert result["files"]["report"] == str(tmp_path / "b.html")


def test_subprocess_entry_point(strong_csv, tmp_path):
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    out = tmp_path / "sub"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bayes_dp.cli",
            "estimate",
            str(strong_csv),
            "--delta",
            "1e-5",
            "--out",
            str(out),
            "--no-report",
            *FAST,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "eps" in proc.stdout and (out / "posterior.nc").is_file()
    bad = write_csv(tmp_path / "bad.csv", [(40, 1000, 1001, 1000)])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bayes_dp.cli",
            "estimate",
            str(bad),
            "--delta",
            "1e-5",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("bayes-dp: error:") and "'fn'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_headers_are_case_insensitive(tmp_path):
    path = tmp_path / "upper.csv"
    path.write_text(
        " FP ,N_Neg,fn,N_POS,Group,LIKELIHOOD\n1,10,2,10,a,binomial\n3,10,4,10,a,binomial\n"
    )
    (g,) = read_counts(path)
    assert g.name == "a" and g.counts.fp.tolist() == [1, 3] and g.counts.n_pos.tolist() == [10, 10]
    cols = tmp_path / "upper.json"
    cols.write_text(json.dumps({"FP": [1], "N_NEG": [10], "Fn": [2], "n_pos": [10]}))
    assert read_counts(cols)[0].counts.fn.tolist() == [2]


def test_unicode_group_names_from_csv(tmp_path):
    import unicodedata

    path = tmp_path / "uni.csv"
    nfd = unicodedata.normalize("NFD", "café")
    path.write_text(
        f"fp,n_neg,fn,n_pos,group\n1,10,2,10,café\n1,10,2,10,{nfd}\n3,10,4,10,Ωmega run-2\n",
        encoding="utf-8",
    )
    groups = read_counts(path)
    assert [g.name for g in groups] == ["café", "Ωmega run-2"]  # NFD and NFC: one group
    assert len(groups[0].counts) == 2


def test_unicode_group_names_survive_the_cli(tmp_path, capsys):
    path = tmp_path / "uni.csv"
    path.write_text(
        "fp,n_neg,fn,n_pos,group\n40,1000,250,1000,café\n60,1000,150,1000,Ωmega run-2\n",
        encoding="utf-8",
    )
    out = tmp_path / "o"
    rc = main(["estimate", str(path), "--delta", "1e-5", "--out", str(out), "--json", *FAST])
    result = json.loads(capsys.readouterr().out)
    assert "s_Ωmega run-2" in result["variables"]
    assert rc == result["exit_status"] == _status_of(out / "posterior.nc")
    post = bdp.load_posterior(out / "posterior.nc")
    assert "s_Ωmega run-2" in post.var_names
    assert [g["name"] for g in post.settings["groups"]] == ["café", "Ωmega run-2"]


@pytest.mark.parametrize("target", ["/proc/x", "/proc/x/y"])
def test_unwritable_out_fails_before_reading_or_sampling(strong_csv, capsys, target, monkeypatch):
    import bayes_dp.inference.estimate

    def boom(*args, **kwargs):
        raise AssertionError("sampling must not start")

    monkeypatch.setattr(bdp, "estimate_epsilon", boom)
    monkeypatch.setattr(bayes_dp.inference.estimate, "estimate_epsilon", boom)
    rc = main(["estimate", str(strong_csv), "--delta", "1e-5", "--out", target, *FAST])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("bayes-dp: error: --out " + target), err
    assert "/proc" in err and "writable" in err and err.count("\n") == 1


def test_out_that_is_a_file_fails_at_once(strong_csv, tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("x")
    assert main(["estimate", str(strong_csv), "--delta", "1e-5", "--out", str(f)]) == 1
    assert "is not a folder" in capsys.readouterr().err
    sub = f / "sub"
    assert main(["estimate", str(strong_csv), "--delta", "1e-5", "--out", str(sub)]) == 1
    assert f"{f} exists and is not a folder" in capsys.readouterr().err


def test_no_report_removes_stale_report(strong_csv, tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    stale = out / "report.html"
    stale.write_text("<html>an earlier run</html>")
    rc = main(
        ["estimate", str(strong_csv), "--delta", "1e-5", "--out", str(out), "--no-report", *FAST]
    )
    err = capsys.readouterr().err
    assert rc == 0 and not stale.exists() and (out / "posterior.nc").is_file()
    assert "removed" in err and "report.html" in err


def test_report_of_a_plain_file_names_it(tmp_path, capsys):
    plain = write_csv(tmp_path / "plain.csv", [(1, 10, 2, 10)])
    rc = main(["report", str(plain)])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1
    assert "plain.csv" in err and "not a netCDF file" in err and "posterior" in err
    assert "signature" not in err
    assert main(["report", str(tmp_path)]) == 1
    assert "is a folder" in capsys.readouterr().err


def test_json_output_is_one_object_on_stdout(strong_csv, tmp_path, capsys):
    out = tmp_path / "o"
    rc = main(
        [
            "estimate",
            str(strong_csv),
            "--delta",
            "1e-5",
            "--out",
            str(out),
            "--json",
            "--seed",
            "3",
            *FAST,
            # 40 draws per chain: ESS is below the warning's 100 per chain whatever the mixing
            "--draws",
            "40",
        ]
    )
    captured = capsys.readouterr()
    assert rc == 3  # a fixed --draws run that fails the convergence checks
    result = json.loads(captured.out)  # the whole of stdout is one JSON object
    assert result["exit_status"] == 3 and "not converged" in result["exit_status_meaning"]
    assert result["converged"] is False and result["claim"]["reliable"] is False
    assert result["claim"]["sentence"].startswith("NOT RELIABLE")
    assert "tau" not in result["prior"]  # a binomial model has no tau
    post = bdp.load_posterior(out / "posterior.nc")
    lo, hi = post.interval(0.9, "eps")
    assert result["eps"]["credible_interval"] == pytest.approx([lo, hi])
    assert result["eps"]["median"] == pytest.approx(post.quantile(0.5, "eps"))
    assert result["variables"]["eps"]["quantiles"]["0.95"] == pytest.approx(hi)
    diag = post.diagnostics()
    for v in ("eps", "s"):
        assert result["diagnostics"][v]["r_hat"] == pytest.approx(diag[v]["r_hat"])
        assert result["diagnostics"][v]["ess_bulk"] == pytest.approx(diag[v]["ess_bulk"])
    assert isinstance(result["warnings"], list) and result["warnings"]  # 40 draws: low ESS
    assert result["seed"] == 3 and result["versions"]["bayes-dp"] == bdp.__version__
    # every statistic the object shows has its meaning, as in the text summary
    gloss = result["glossary"]
    for key in ("mean", "sd", "q", "hdi", "r_hat", "ess_bulk", "ess_tail", "converged"):
        assert gloss[key] == bdp.diagnostics.GLOSSARY[key]
    assert set(result["acceptance"]) <= set(gloss)
    assert result["files"] == {
        "posterior": str(out / "posterior.nc"),
        "report": str(out / "report.html"),
    }
    assert "sampling done" in captured.err and "warning:" in captured.err
    # one meaning of the sampling time: the log line shows sampling_seconds
    logged = re.search(r"sampling done in ([\d.]+) s", captured.err).group(1)
    assert logged == f"{result['sampling_seconds']:.1f}"
    assert "compilation included" not in captured.err


def test_help_explains_the_columns_with_an_example(capsys):
    assert main(["estimate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "fp     false positives" in text and "n_neg  challenges under H0" in text
    assert "example:" in text and "bayes-dp estimate counts.csv --delta 1e-5" in text
    assert "--format {auto,csv,json}\n                        format of COUNTS" in text
    assert "[0, 1] instead of inferring it" in " ".join(text.split())
    assert main(["report", "--help"]) == 0
    text = capsys.readouterr().out
    assert "a posterior netCDF file" in text and "example: bayes-dp report" in text
    assert main(["--help"]) == 0
    assert "write the HTML report of a saved posterior" in capsys.readouterr().out


def test_json_failure_and_usage_error(tmp_path, capsys):
    bad = write_csv(tmp_path / "bad.csv", [(40, 1000, 1001, 1000)])
    rc = main(["estimate", str(bad), "--delta", "1e-5", "--out", str(tmp_path / "o"), "--json"])
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert rc == 1 and result["exit_status"] == 1 and "'fn'" in result["error"]
    assert captured.err.startswith("bayes-dp: error:")
    assert main(["estimate", str(bad), "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["exit_status"] == 2 and "--delta" in result["error"]


def test_quiet_silences_log_lines(strong_csv, tmp_path, capsys):
    out = tmp_path / "o"
    args = ["estimate", str(strong_csv), "--delta", "1e-5", "--out", str(out), "--quiet"]
    # 40 draws per chain: low-ESS warnings (the lines --quiet keeps) whatever the mixing
    rc = main([*args, "--no-report", *FAST[:-2], "--progress-every", "0.01", "--draws", "40"])
    captured = capsys.readouterr()
    assert rc == 3 and "eps" in captured.out and "\nNOT CONVERGED: the 40 draws" in captured.out
    lines = captured.err.splitlines()
    # the first warning, then how many more --explain prints
    assert lines[0].startswith("bayes-dp: warning:"), lines
    assert all(
        line.startswith("bayes-dp: warning:") or " more warning" in line for line in lines
    ), lines


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"bayes-dp {bdp.__version__}"
