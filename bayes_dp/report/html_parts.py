"""The parts of the HTML report pages that every page uses: styles, head, figures, tables.

Shared by the count report (:mod:`bayes_dp.report`) and the Gaussian-DP page
(:mod:`bayes_dp.report.gdp_page`); it imports neither, so that the report can hand a Gaussian-DP
posterior to its page without an import cycle.
"""

from __future__ import annotations

import base64
import datetime
import html
import io

import numpy as np

from bayes_dp.results.diagnostics import (  # noqa: F401
    ACCEPT_RANGE,
    ESS_PER_CHAIN_MIN,
    RHAT_MAX,
    findings,
    glossary,
)
from bayes_dp.results.posterior import Posterior

#: Width of the page's column in CSS pixels (``max-width`` of the body), and CSS pixels per
#: inch of a figure: figures are drawn at most this wide and shown at their natural size.
COLUMN_PX = 1100


PX_PER_INCH = 90


_CSS_TEMPLATE = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; max-width: {COLUMN_PX}px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.warn { background: #fff4e5; border-left: 4px solid #e69500; padding: .5em 1em; margin: .4em 0; }
.ok { background: #eef8ee; border-left: 4px solid #3a3; padding: .5em 1em; }
figure { margin: 1em 0 2em; } figcaption { font-size: .9em; color: #444; max-width: 900px; }
img { max-width: 100%; height: auto; }
pre { background: #f6f6f6; padding: .8em; font-size: .85em; white-space: pre-wrap;
      overflow-wrap: anywhere; }
"""


_CSS = _CSS_TEMPLATE.replace("{COLUMN_PX}", str(COLUMN_PX))


def _fig_to_data_uri(fig, dpi: int) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def page_head(title: str, settings: dict, estimator: str) -> list[str]:
    """Open the page: doctype, styles, the heading and a line on the version and estimator."""
    version = html.escape(str(settings.get("versions", {}).get("bayes-dp", "")))
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Generated {datetime.datetime.now().isoformat(timespec='seconds')} by bayes-dp "
        f"{version}. Estimator: {html.escape(estimator)}</p>",
    ]


def figures_html(figures, dpi: int, start: int = 1) -> list[str]:
    """Embed (figure, caption) pairs as ``<figure>`` elements numbered from ``start``."""
    out = []
    for i, (fig, cap) in enumerate(figures, start=start):
        w = round(fig.get_figwidth() * PX_PER_INCH)
        h = round(fig.get_figheight() * PX_PER_INCH)
        uri = _fig_to_data_uri(fig, dpi)
        out.append(
            f'<figure><img src="{uri}" width="{w}" height="{h}" '
            f'alt="Figure {i}: {html.escape(cap)}">'
            f"<figcaption>Figure {i}. {html.escape(cap)}</figcaption></figure>"
        )
    return out


def claim_html(claim, unreliable: bool = False) -> str:
    """Return the claim as a page opens with it: two sentences in one box, its parts folded.

    ``claim`` is a :class:`bayes_dp.AuditClaim`; the box takes one colour for one verdict
    (``warn`` when the claim or the sampling is not reliable, ``unreliable``; ``ok`` otherwise),
    and its named parts (:attr:`~bayes_dp.AuditClaim.details`) sit in a ``<details>`` element
    below it, one line each.
    """
    cls = "warn" if unreliable or not claim.reliable else "ok"
    items = "".join(
        f"<li><b>{html.escape(name)}</b>: {html.escape(text)}</li>" for name, text in claim.details
    )
    return (
        f'<div class="{cls}" id="claim-box"><p id="claim"><b>What the audit shows</b> (two '
        f"sentences to cite): {html.escape(claim.headline)}</p>"
        '<details id="claim-details"><summary>Why: the claim\'s parts (what sets the bound, the '
        "levels, the assumptions, the studies behind it)</summary>"
        f"<ul>{items}</ul></details></div>"
    )


def folded(summary: str, body: str, rows: int, fold_above: int = 20) -> str:
    """Return ``body`` as is with at most ``fold_above`` rows, else folded under ``summary``."""
    if rows <= fold_above:
        return body
    return f"<details><summary>{html.escape(summary)}</summary>{body}</details>"


def _fmt(x, digits: int = 3) -> str:
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if not np.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    return f"{x:.{digits}g}" if abs(x) < 1e4 else f"{x:.0f}"


def _table(header: list[str], rows: list[list], left: int = 1, cls: str = "") -> str:
    out = [f'<table class="{cls}"><thead><tr>']
    out += [
        f'<th class="{"l" if i < left else ""}">{html.escape(h)}</th>' for i, h in enumerate(header)
    ]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>")
        for i, v in enumerate(r):
            txt = v if isinstance(v, str) else _fmt(v)
            out.append(f'<td class="{"l" if i < left else ""}">{html.escape(txt)}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def plain_warnings(posterior: Posterior) -> list[str]:
    """Problems with a run, each as one sentence saying what to do.

    The messages of :func:`bayes_dp.results.diagnostics.findings`, which owns the checks and their
    thresholds: whether the run stopped before it converged (its time budget ran out), r_hat
    (> 1.01), bulk and tail ESS (< 100 per chain), the acceptance rate of each move (outside
    [0.1, 0.6]) and a fixed attack strength s (over-confident unless the attack is known to be
    near-optimal).

    Parameters
    ----------
    posterior : Posterior

    Returns
    -------
    list of str
        Empty when nothing was found.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> stuck = np.stack([rng.normal(0, 1, 200), rng.normal(3, 1, 200)])  # chains disagree
    >>> post = Posterior({"eps": stuck}, {"accept_joint": np.full((2, 200), 0.3)}, {})
    >>> plain_warnings(post)[0].startswith("r_hat")
    True
    """
    return [f.message for f in findings(posterior)]
