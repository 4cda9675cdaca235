"""Tests of Posterior.report: content of the HTML file and rendering in a headless browser."""

import base64
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

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
        "hdi_5%",
        "q95%",
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
    assert "s = 0.9" in text and len(re.findall(r"<img ", text)) >= 3


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


@pytest.mark.skipif(
    _chromium() is None,
    reason="no chromium / chrome on PATH (apt-get install chromium) for the headless render test",
)
def test_report_renders_in_headless_browser(short_report):
    _, path, _ = short_report
    shot = path.with_name("shot.png")
    profile = tempfile.mkdtemp()
    cmd = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--window-size=1200,3000",
        f"--screenshot={shot}",
        Path(path).resolve().as_uri(),
    ]
    try:
        subprocess.run(cmd, capture_output=True, timeout=60, check=False)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert shot.is_file()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    # the page is not blank: many distinct colours in the screenshot
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)
    assert img.shape[0] >= 1000 and img.std() > 0.05
