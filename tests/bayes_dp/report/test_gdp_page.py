"""The HTML report page of Gaussian-DP posteriors (bayes_dp/report/gdp_page.py)."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import bayes_dp as bdp

# the headless-browser helpers of the count report's tests (skipped without chromium)
from tests.bayes_dp.report.test_report import _browser, needs_browser


@pytest.fixture(scope="module")
def gdp_report(tmp_path_factory):
    rng = np.random.default_rng(4)
    x_in, x_out = rng.normal(1.2, 1, 300), rng.normal(0, 1, 300)
    ev = bdp.gdp_evidence(x_in, x_out, name="canary")
    runs = bdp.OneRunCounts(m=1000, r=300, v=220)
    counts = bdp.Evidence(bdp.AttackCounts(40, 1000, 250, 1000), name="lira")
    post = bdp.estimate_gdp([ev, runs, counts], delta=1e-5, s=0.5, seed=0, draws=500)
    tab = bdp.compare_estimators(x_in, x_out, delta=1e-5, seed=1, one_run_k=[15, 60])
    path = post.report(tmp_path_factory.mktemp("gdp") / "report.html", comparison=tab)
    return post, tab, path.read_text(encoding="utf-8")


def test_page_shows_claim_mu_eps_fit_check_and_the_side_by_side_table(gdp_report):
    post, tab, text = gdp_report
    assert text.startswith("<!DOCTYPE html>") and "http://" not in text and "https://" not in text
    claim = bdp.audit_claim(post, 0.95)
    # the claim's two sentences in its box, its parts folded under them
    assert html.unescape(re.search(r'id="claim">(.*?)</p>', text).group(1)).endswith(claim.headline)
    details = html.unescape(text[text.index('id="claim-details"') :].split("</details>")[0])
    assert all(part in details for _, part in claim.details)
    lo, hi = post.interval(0.9, "mu")
    assert f"90% credible interval for mu: [{lo:.3g}, {hi:.3g}]" in text
    p = post.settings["fit_check"]["canary"]
    assert re.search(rf"<td class=\"l\">canary</td><td class=\"\">{p:.3g}</td>", text)
    for row in tab.index:
        assert f">{row}<" in text
    # eps at the run's delta in the table of deltas equals the draws' median
    med = np.median(post.epsilon_at(1e-5))
    assert re.search(rf"1e-05 \(the run&#x27;s\)</td><td class=\"\">{med:.3g}<", text)
    assert text.count("data:image/png;base64,") == 3  # the claim's, the posteriors, the profile
    # the three kinds of evidence are listed
    for what in (
        "300 in- and 300 out-scores",
        "one-run audit(s): m [1000]",
        "audited at δ = 1e-05",
    ):
        assert what in text


def test_page_without_comparison_says_how_to_get_it_and_bad_comparison_is_refused(
    gdp_report, tmp_path
):
    post, _, _ = gdp_report
    text = post.report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "No side-by-side table" in text
    with pytest.raises(TypeError, match="`comparison` must be the DataFrame"):
        post.report(tmp_path / "x.html", comparison={"lower": 1})
    assert not (tmp_path / "x.html").exists()


def test_a_failed_fit_check_is_a_warning_on_the_page(tmp_path):
    rng = np.random.default_rng(5)
    x_in = np.r_[rng.normal(0, 1, 900), rng.normal(4, 1, 100)]  # a mixture: not binormal
    with pytest.warns(bdp.GdpFitWarning):
        post = bdp.estimate_gdp(x_in, rng.normal(0, 1, 1000), delta=1e-5, seed=0, draws=300)
    text = post.report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "does not fit its scores" in text and "fails: the Gaussian shape does not fit" in text


@needs_browser
def test_gdp_page_renders_in_headless_browser(gdp_report, tmp_path):
    import matplotlib.image as mpimg

    post, tab, _ = gdp_report
    path = post.report(tmp_path / "report.html", comparison=tab)
    shot = tmp_path / "shot.png"
    _browser("--window-size=1200,3000", f"--screenshot={shot}", path.resolve().as_uri())
    img = mpimg.imread(shot)
    assert img.shape[0] >= 1000 and img.std() > 0.05  # not a blank page
