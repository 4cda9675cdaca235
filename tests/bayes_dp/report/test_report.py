"""Tests of Posterior.report: content of the HTML file and rendering in a headless browser."""

import base64
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.report import plain_warnings

STRONG = bdp.AttackCounts(
    fp=[40, 50, 60, 100, 100, 110, 120, 200, 200, 200],
    n_neg=1000,
    fn=[250, 200, 150, 100, 120, 100, 100, 80, 70, 60],
    n_pos=1000,
)


@pytest.fixture(scope="module")
def short_report(tmp_path_factory):
    """A deliberately short run (two groups), so that warnings must appear."""
    groups = [
        bdp.Evidence(STRONG[:5], name="lira"),
        bdp.Evidence(STRONG[5:], name="canary", strength="own"),
    ]
    post = bdp.estimate_epsilon(
        groups, delta=1e-5, chains=2, draws=60, tune=30, seed=5, check=False
    )
    path = post.report(tmp_path_factory.mktemp("rep") / "report.html")
    return post, path, path.read_text(encoding="utf-8")


def test_report_is_self_contained_with_figures(short_report):
    post, path, text = short_report
    assert path.suffix == ".html" and text.startswith("<!DOCTYPE html>")
    imgs = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(imgs) >= 3
    for b in imgs:
        assert base64.b64decode(b)[:8] == b"\x89PNG\r\n\x1a\n"
    # no external resources
    assert "http://" not in text.split("<pre>")[0] and 'src="http' not in text


def test_report_inputs_table_and_reproduction(short_report):
    post, _, text = short_report
    for needle in [
        "Inputs",
        "Group lira",
        "Group canary",
        "1e-05",
        "HalfNormal(scale=10.0)",
        "Beta(a=1.0, b=1.0)",
        "Posterior summary",
        "r_hat",
        "ess_bulk",
        "ess_tail",
        "mcse_mean",
        "hdi_90%_lo",
        "q95%",
        'id="claim"',
        "With 95% confidence, eps &gt;= ",  # the classical bound first (claim_counts)
        "What the model says (not the finding): the posterior&#x27;s 5% quantile of eps is ",
        'id="glossary"',
        "effective sample size",
        "accept_joint",
        "How to reproduce",
        "seed=5",
        "numba",
    ]:
        assert needle in text, needle
    # the summary table has a row per variable
    for v in post.var_names:
        assert f'<td class="l">{v}</td>' in text


def test_report_warns_in_plain_words_for_short_run(short_report):
    post, _, text = short_report
    warns = plain_warnings(post)
    assert warns
    assert any(w.startswith("r_hat") and "run longer" in w for w in warns)
    assert 'class="warn"' in text
    assert "run longer" in text


def test_fixed_s_is_warned(tmp_path):
    post = bdp.estimate_epsilon(
        STRONG,
        delta=1e-5,
        prior=bdp.Prior(s=0.9),
        chains=2,
        draws=200,
        tune=100,
        seed=0,
        check=False,
    )
    assert any("fixed at 0.9" in w for w in plain_warnings(post))
    text = post.report(tmp_path / "r.html").read_text()
    assert "fixed at 0.9, not inferred" in text and len(re.findall(r"<img ", text)) >= 3


def test_report_type_error(tmp_path):
    from bayes_dp.report import write_report

    with pytest.raises(TypeError, match="`posterior`"):
        write_report({"eps": 1}, tmp_path / "x.html")


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _browser(*args, timeout=90):
    """Run headless Chromium with a fresh profile; returns the CompletedProcess."""
    profile = tempfile.mkdtemp()
    cmd = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


needs_browser = pytest.mark.skipif(
    _chromium() is None,
    reason="no chromium / chrome on PATH (apt-get install chromium) for the headless render test",
)


@needs_browser
def test_report_renders_in_headless_browser(short_report):
    _, path, _ = short_report
    shot = path.with_name("shot.png")
    _browser("--window-size=1200,3000", f"--screenshot={shot}", Path(path).resolve().as_uri())
    assert shot.is_file()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    # the page is not blank: many distinct colours in the screenshot
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)
    assert img.shape[0] >= 1000 and img.std() > 0.05


_FOLD_PROBE = (
    "<script>window.addEventListener('load', function () {"
    "var c = document.getElementById('claim').getBoundingClientRect();"
    "var f = document.querySelector('figure img').getBoundingClientRect();"
    "var p = document.createElement('pre'); p.id = 'fold';"
    "p.textContent = [c.bottom, f.bottom, window.innerHeight, window.innerWidth].join(' ');"
    "document.body.appendChild(p);});</script>"
)


@needs_browser
def test_claim_and_its_figure_lie_above_the_fold(short_report, tmp_path):
    """In a 1280 x 800 window the reader sees the claim and the whole of Figure 1 unscrolled."""
    _, _, text = short_report
    page = tmp_path / "fold.html"
    page.write_text(text.replace("</body>", _FOLD_PROBE + "</body>"), encoding="utf-8")
    res = _browser(
        "--window-size=1280,800", "--virtual-time-budget=5000", "--dump-dom", page.as_uri()
    )
    found = re.search(r'<pre id="fold">([^<]*)</pre>', res.stdout)
    assert found, res.stderr[-2000:]
    claim_bottom, figure_bottom, height, width = map(float, found.group(1).split())
    assert width == 1280 and 600 < height <= 800  # the viewport the window leaves
    assert claim_bottom < figure_bottom <= height


def test_one_verdict_the_claim_and_the_warnings_agree(short_report, one_group):
    """The claim's box has one colour, and no section says the opposite of its verdict."""
    for post, _, text in (short_report, one_group):
        claim = bdp.audit_claim(post)
        box = re.search(r'<div class="(\w+)" id="claim-box">', text).group(1)
        warnings = text.split("<h2>Warnings</h2>")[1].split("<h2>")[0]
        if claim.reliable:
            assert box == "ok" and "Result not reliable" not in text
            assert "NOT RELIABLE" not in claim.headline
        else:
            assert box == "warn" and "No problems found" not in warnings
            assert "NOT RELIABLE (" in claim.headline  # first, or before the model's figures


# -- the report as a reader sees it --------------------------------------------------------
@pytest.fixture(scope="module")
def one_group(tmp_path_factory):
    """A run on plain counts: one group with the default name."""
    post = bdp.estimate_epsilon(
        STRONG, delta=1e-5, chains=2, draws=200, tune=100, seed=0, check=False, progress=False
    )
    path = post.report(tmp_path_factory.mktemp("one") / "report.html")
    return post, path, path.read_text(encoding="utf-8")


def test_default_group_name_is_no_heading_and_bases_count_from_1(one_group):
    post, _, text = one_group
    assert post.settings["groups"][0]["name"] == "counts"
    assert "Group counts" not in text and "<h3>Challenge bases</h3>" in text
    inputs = text.split("<h2>Inputs</h2>")[1].split("<h2>")[0]
    assert ">counts<" not in inputs
    numbers = re.findall(r'<tr><td class="l">(\d+)</td><td class="">\d+</td>', inputs)
    assert numbers == [str(i) for i in range(1, 11)]
    with pytest.raises(ValueError, match=r"at row 2 \(index 1\)"):
        bdp.AttackCounts(fp=[1, 20], n_neg=10, fn=[1, 1], n_pos=10)  # the same numbering


def test_prior_in_words_only_the_parts_used(one_group):
    from bayes_dp.report import _prior_rows

    _, _, text = one_group
    inputs = text.split("<h2>Inputs</h2>")[1].split("<h2>")[0]
    assert "half-normal with scale 10" in inputs and "uniform on [0, 1]" in inputs
    assert "Prior(" not in inputs and "tau" not in inputs  # no over-dispersed group: no tau
    counts = {"fp": [1], "n_neg": [10], "fn": [2], "n_pos": [10]}
    st = {
        "prior": repr(bdp.Prior(eps=bdp.LogNormal(1.0, 0.5), s=0.6)),
        "fixed": {"s": 0.6},
        "groups": [
            {"name": "a", "likelihood": "binomial", "strength": "shared", "counts": counts},
            {"name": "b", "likelihood": "bivariate_normal", "strength": "shared", "counts": counts,
             "fix": {"rho": 0.0}},
        ],
    }  # fmt: skip
    rows = dict(_prior_rows(st))
    assert rows["ε (privacy parameter)"].startswith("log-normal, log ε ~ Normal(1, 0.5²)")
    assert rows["s (attack strength of a, b)"].startswith("fixed at 0.6, not inferred")
    assert rows["tau_b (correlation of two decisions under one hypothesis)"].startswith("uniform")
    assert "fixed at 0" in [v for k, v in rows.items() if k.startswith("rho_b")][0]
    assert not any(k.startswith(("tau_a", "rho_a")) for k in rows)


def test_reproduce_command_repeats_the_run_and_numbers_file_rows(tmp_path, capsys):
    """Interleaved groups in the file: the report numbers bases by file row, and its
    ``bayes-dp`` command on its ``counts.csv`` gives the same draws."""
    import html as html_mod
    import shlex

    from bayes_dp.cli import main

    src = tmp_path / "audit.csv"
    src.write_text(
        "fp,n_neg,fn,n_pos,group\n40,1000,250,1000,lira\n100,1000,100,1000,canary\n"
        "50,1000,200,1000,lira\n110,1000,100,1000,canary\n"
    )
    fast = ["--chains", "2", "--draws", "200", "--tune", "100", "--progress-every", "0"]
    rc = main(["estimate", str(src), "--delta", "1e-5", "--out", str(tmp_path / "a"), *fast])
    # 200 draws may fail the convergence checks (exit status 3); the repeat must agree
    from bayes_dp.results.diagnostics import passes_convergence_checks

    status = (
        0 if passes_convergence_checks(bdp.load_posterior(tmp_path / "a" / "posterior.nc")) else 3
    )
    assert rc == status
    capsys.readouterr()
    text = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    lira = text.split("<h3>Group lira</h3>")[1].split("</table>")[0]
    canary = text.split("<h3>Group canary</h3>")[1].split("</table>")[0]
    assert re.findall(r'<td class="l">(\d+)</td>', lira) == ["1", "3"]
    assert re.findall(r'<td class="l">(\d+)</td>', canary) == ["2", "4"]
    assert "numbered by the data rows of" in text
    reproduce = text.split("<h2>How to reproduce</h2>")[1]
    csv_text, command = (
        html_mod.unescape(b) for b in re.findall(r"<pre>(.*?)</pre>", reproduce, re.S)[:2]
    )
    assert csv_text == src.read_text()  # the same file, rows in the same order
    assert command.startswith("bayes-dp estimate counts.csv --delta 1e-05")
    (tmp_path / "counts.csv").write_text(csv_text)
    args = shlex.split(command)[1:]
    args[args.index("--out") + 1] = str(tmp_path / "b")
    args[args.index("counts.csv")] = str(tmp_path / "counts.csv")
    assert main([*args, "--no-report", "--progress-every", "0"]) == status
    a = bdp.load_posterior(tmp_path / "a" / "posterior.nc")
    b = bdp.load_posterior(tmp_path / "b" / "posterior.nc")
    assert a.var_names == b.var_names == ["eps", "s", "s_canary"]
    for v in a.var_names:
        np.testing.assert_array_equal(a.draws(v), b.draws(v))


def test_reproduce_says_when_the_command_cannot(one_group):
    from bayes_dp.report import _cli_reproduction

    st = dict(one_group[0].settings)
    assert isinstance(_cli_reproduction(st), tuple)
    st["prior"] = repr(bdp.Prior(eps=bdp.LogNormal(0.0, 1.0)))
    st["seed"] = "Generator"
    why = _cli_reproduction(st)
    assert "log-normal prior" in why and "Generator" in why


def test_report_subcommand_keeps_the_variable_order(tmp_path, capsys):
    import json

    from bayes_dp.cli import main
    from bayes_dp.results.posterior import Posterior, _run_order

    rng = np.random.default_rng(1)
    names = ["eps", "s", "s_b", "tau_b", "rho_b"]  # as estimate makes them; not alphabetical
    post = Posterior(
        {v: rng.uniform(0.1, 0.9, (2, 100)) for v in names},
        {"accept_joint": np.full((2, 100), 0.3)},
        {"delta": 1e-5, "fixed": {}},
    )
    nc = post.to_netcdf(tmp_path / "p.nc")
    assert main(["report", str(nc), "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["variables"]) == names
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    summary = text.split("<h2>Posterior summary</h2>")[1].split("</table>")[0]
    assert re.findall(r'<tr><td class="l">(\w+)</td>', summary) == names
    # files written before the order was recorded: rebuilt from the groups
    groups = [{"name": "a", "strength": "shared"}, {"name": "b", "strength": "own"}]
    assert _run_order(sorted(names), {}, {"groups": groups}) == names


def test_figures_fit_the_column_and_legends_hide_no_data(one_group):
    import matplotlib.pyplot as plt

    from bayes_dp.report import COLUMN_PX, PX_PER_INCH, _figures

    post, _, _ = one_group
    figs = _figures(post, 0.9, 0.95)
    try:
        widths = [fig.get_figwidth() * PX_PER_INCH for fig, _ in figs]
        assert widths[0] == pytest.approx(COLUMN_PX)  # the eps figure: the column's width
        assert max(widths) <= COLUMN_PX + 0.5
        eps_fig = figs[0][0]
        eps_fig.canvas.draw()
        ax = eps_fig.axes[0]
        legend = ax.get_legend().get_window_extent()
        assert not legend.overlaps(ax.get_window_extent())  # off the data
        for fig, _ in figs:
            for a in fig.axes:
                ticks = a.get_xticklabels() + a.get_yticklabels()
                smallest = min(t.get_fontsize() for t in ticks if t.get_text())
                assert smallest * PX_PER_INCH / 72 >= 10, (a.get_title(), smallest)
                if a.get_legend() is not None:
                    for t in a.get_legend().get_texts():
                        assert t.get_fontsize() * PX_PER_INCH / 72 >= 10, t.get_text()
                        assert "counts" not in t.get_text()  # the default group name
    finally:
        for fig, _ in figs:
            plt.close(fig)


@needs_browser
def test_figures_shown_full_size_in_browser(one_group, tmp_path):
    """At page width the browser shows every figure at its drawn size (so the 10-point tick
    labels are 12.5 pixels high) and the eps figure across the whole column."""
    import html as html_mod
    import json

    from bayes_dp.report import COLUMN_PX

    _, _, text = one_group
    probe = (
        "<script>document.body.setAttribute('data-measure', JSON.stringify({imgs: "
        "[...document.images].map(i => [i.getBoundingClientRect().width, "
        "+i.getAttribute('width')]), column: parseFloat(getComputedStyle(document.body).width)"
        "}));</script></body>"
    )
    page = tmp_path / "measure.html"
    page.write_text(text.replace("</body>", probe), encoding="utf-8")
    proc = _browser("--window-size=1280,2000", "--dump-dom", page.resolve().as_uri())
    found = re.search(r'data-measure="([^"]*)"', proc.stdout)
    assert found, proc.stderr[-2000:]
    measure = json.loads(html_mod.unescape(found.group(1)))
    assert measure["column"] == pytest.approx(COLUMN_PX)
    assert len(measure["imgs"]) >= 4
    for shown, drawn in measure["imgs"]:
        assert shown == pytest.approx(drawn, abs=0.5)  # not scaled down
    assert measure["imgs"][0][0] == pytest.approx(COLUMN_PX, abs=0.5)


def test_report_shows_prior_sensitivity(one_group):
    post, _, text = one_group
    assert "<b>Prior sensitivity</b>" in text
    sens = post.prior_sensitivity(0.9, factors=(0.5, 2.0))
    for f, r in sens.items():
        lo, hi = r["interval"]
        row = re.search(
            rf"<td class=\"l\">scale x{f:g}</td><td class=\"\">([^<]+)</td>"
            rf"<td class=\"\">([^<]+)</td><td class=\"\">([^<]*)</td>",
            text,
        )
        assert row is not None, f
        assert float(row.group(1)) == pytest.approx(lo, rel=2e-3)
        assert float(row.group(2)) == pytest.approx(hi, rel=2e-3)
        assert ("rough figure" in row.group(3)) == (not r["reliable"])


def test_headline_states_the_claims_bound_where_the_model_lower_end_is_not_it(tmp_path):
    """Designed bases whose classical bound (2.51) is below the posterior's 5% quantile
    (2.67): the headline states the bound the claim signs, and the model's interval after it,
    marked as not a finding; where the quantile is the claim, the interval heads the page."""
    rng = np.random.default_rng(7)
    counts = {"fp": [40, 50], "n_neg": [1000, 1000], "fn": [250, 200], "n_pos": [1000, 1000]}
    group = {"name": "g0", "likelihood": "binomial", "strength": "shared", "counts": counts}
    st = {"eps_prior": ["HalfNormal", 10.0], "delta": 1e-5, "groups": [{**group, "fix": {}}]}
    for centre, cites in ((3.0, False), (2.0, True)):
        draws = {
            "eps": rng.normal(centre, 0.2, 40000).reshape(4, -1),
            "s": rng.uniform(0, 1, 40000).reshape(4, -1),
        }
        post = bdp.Posterior(draws, {}, dict(st))
        claim = bdp.audit_claim(post)
        assert claim.cites_model_lower is cites
        text = post.report(tmp_path / f"r{centre}.html").read_text(encoding="utf-8")
        head = text[text.index('id="headline"') :].split("</p>")[0]
        lo, hi = post.interval(0.9, "eps")
        if cites:
            assert f"90% credible interval for ε: [{lo:.3g}, {hi:.3g}]" in head
            assert "not a finding" not in head
        else:
            assert head.startswith(f'id="headline"><b>Result:</b> ε ≥ {claim.lower:.3g}, at δ')
            assert f"upper 95% quantile of ε is {hi:.3g}" in head
            assert f"lower 5% quantile, {lo:.3g}, is not a finding" in head
            assert f"[{lo:.3g}," not in head  # no interval with the model's lower end


def _score_matrix_group():
    """A score-matrix group's settings: counts whose bound is above 0, a dependence record."""
    import mia

    counts = {"fp": [200, 150], "n_neg": [2000] * 2, "fn": [900, 1000], "n_pos": [2000] * 2}
    scores, keep = mia.simulate_score_matrix(16, 4, mu=2.0, seed=0)
    rec = mia.counts_from_score_matrix(scores, keep, alpha=0.1).to_evidence().dependence
    rec = {**rec, "fp_design_effect": 1.0, "fn_design_effect": 1.0, "info_ratio": 1.0}
    rec.pop("pooled_rates", None)  # these counts are not that matrix's
    return {"name": "lira", "likelihood": "binomial", "counts": counts, "dependence": rec}


def test_headline_of_a_score_matrix_whose_chains_missed_a_mode(tmp_path):
    """Score-matrix evidence whose chains sit in a minor mode: the headline states the claim's
    bound (it reads the counts only) and no interval of the draws, which are not the
    posterior's; a plain failed check keeps the draws' interval, for orientation, after it."""
    rng = np.random.default_rng(8)
    group = _score_matrix_group()
    st = {"eps_prior": ["HalfNormal", 10.0], "delta": 1e-5, "groups": [group], "converged": False}
    found = {"eps": 1e-6, "log_post": -10.0, "log_post_draws": -783.0}
    for reason in ("minor_mode", "max_time"):
        draws = {"eps": rng.normal(3.0, 0.2, 40000).reshape(4, -1)}
        extra = {"minor_mode": found} if reason == "minor_mode" else {}
        post = bdp.Posterior(draws, {}, {**st, "stop_reason": reason, **extra})
        claim = bdp.audit_claim(post)
        assert claim.lower_from_counts and claim.lower > 0 and not claim.reliable
        text = post.report(tmp_path / f"{reason}.html").read_text(encoding="utf-8")
        head = text[text.index('id="headline"') :].split("</p>")[0]
        assert head.startswith(f'id="headline"><b>Result:</b> ε ≥ {claim.lower:.3g}, at δ')
        assert "it reads the counts only, not the chains" in head
        assert "Result not reliable" not in head
        lo, hi = post.interval(0.9, "eps")
        if reason == "minor_mode":
            assert "The model's figures are not reported" in head and f"{hi:.3g}" not in head
        else:
            assert f"[{lo:.3g}, {hi:.3g}]; its lower end is not a finding" in head


def test_headline_of_a_score_matrix_sampled_again_from_a_missed_mode(tmp_path):
    """Score-matrix evidence whose chains were started again at the mode at eps ~ 0 the first
    chains missed (converged there): the headline states the claim's bound, and the model's
    upper quantile and median, which the claim calls the model's, as not findings."""
    rng = np.random.default_rng(9)
    group = _score_matrix_group()
    restart = {"eps": 1e-6, "log_post": -10.0, "log_post_draws": -783.0}
    restart["first_eps_quantiles"] = [0.84, 0.92, 0.99]
    st = {"eps_prior": ["HalfNormal", 10.0], "delta": 1e-5, "groups": [group]}
    st.update(converged=True, stop_reason="converged", mode_restart=restart)
    post = bdp.Posterior({"eps": rng.uniform(1e-8, 2e-6, 40000).reshape(4, -1)}, {}, st)
    claim = bdp.audit_claim(post)
    assert claim.reliable and claim.upper_source == "model" and claim.lower > claim.upper
    text = post.report(tmp_path / "r.html").read_text(encoding="utf-8")
    head = text[text.index('id="headline"') :].split("</p>")[0]
    lo, hi = post.interval(0.9, "eps")
    assert head.startswith(f'id="headline"><b>Result:</b> ε ≥ {claim.lower:.3g}, at δ')
    assert f"upper 95% quantile of ε, {hi:.3g}, and its median" in head
    assert "are not findings (the sentence above says why)" in head
    # the restart is one of the claim's parts, folded under its two sentences
    details = text[text.index('id="claim-details"') :].split("</details>")[0]
    assert "<b>restart</b>: The model&#x27;s figures come from chains started again" in details


def test_per_target_figures_read_the_decisions_as_made(tmp_path):
    """A target whose test did worse than random (FN 32/32, FP 3/32) shows nothing in the
    inputs table, as the claim reads it; the reflected reading would give it eps = inf."""
    group = _score_matrix_group()
    group["counts"] = {"fp": [3, 4], "n_neg": [32, 32], "fn": [32, 20], "n_pos": [32, 32]}
    st = {"eps_prior": ["HalfNormal", 10.0], "delta": 1e-5, "groups": [group]}
    st.update(converged=True, stop_reason="converged")
    rng = np.random.default_rng(3)
    post = bdp.Posterior({"eps": rng.uniform(0.1, 1.0, 8000).reshape(4, -1)}, {}, st)
    assert np.isinf(bdp.classical_epsilon(3 / 32, 1.0, 1e-5))  # the reflected reading
    text = post.report(tmp_path / "r.html").read_text(encoding="utf-8")
    inputs = text.split("<h2>Inputs</h2>")[1].split("<h2>")[0]
    assert "classical ε (decisions as made)" in inputs
    assert ">inf<" not in inputs
    row = re.search(r'<tr><td class="l">1</td>(.*?)</tr>', inputs).group(1)
    assert row.endswith('<td class="">0</td>')  # worse than random: eps 0, as the claim reads it
    assert "Classical comparison" not in text  # its reflected point estimate is not shown
