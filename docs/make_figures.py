"""Draw the figures the documentation shows (committed under ``docs/_static/figures/``).

Run from anywhere: ``python docs/make_figures.py`` (a minute or two; the first run in a fresh
environment also compiles the sampler's kernels). It writes

* ``posterior.png``: ``bdp.plots.plot_eps_posterior`` of the quickstart's ten bases;
* ``region.png``: ``bdp.plots.plot_region`` of the same posterior;
* ``report.png``: the top of the HTML report of the same run, as a headless Chromium draws it
  (skipped, with a message, when neither ``chromium`` nor ``chromium-browser`` is on the path).

The posterior is the quickstart's (same counts, prior and seed) at a fixed length of 4 chains x
2,000 draws, so the figures do not wait for the automatic-length run.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "_static" / "figures"

import bayes_dp as bdp  # noqa: E402
from bayes_dp import plots  # noqa: E402

# the quickstart's counts (Yildirim et al., Sec. 4.1, strong attacks)
FP = [40, 50, 60, 100, 100, 110, 120, 200, 200, 200]
FN = [250, 200, 150, 100, 120, 100, 100, 80, 70, 60]


def posterior() -> bdp.Posterior:
    counts = bdp.AttackCounts(fp=FP, n_neg=1000, fn=FN, n_pos=1000)
    return bdp.estimate_epsilon(counts, delta=1e-5, draws=2000, seed=0, progress=False)


def save(fig, name: str) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    fig.savefig(path, dpi=80, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {path.relative_to(ROOT)}")
    return path


def screenshot(post: bdp.Posterior) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("no chromium on the path: report.png not drawn", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        html = post.report(Path(tmp) / "report.html")
        png = Path(tmp) / "report.png"
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--window-size=1000,1100",
                f"--screenshot={png}",
                html.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(png, OUT / "report.png")
        print(f"wrote {(OUT / 'report.png').relative_to(ROOT)}")


def main() -> int:
    post = posterior()
    ax = plots.plot_eps_posterior(post)
    save(ax.figure, "posterior.png")
    ax = plots.plot_region(post)
    save(ax.figure, "region.png")
    screenshot(post)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
