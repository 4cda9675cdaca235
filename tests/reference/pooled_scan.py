"""A label-free threshold scan: the plain reference the shape-free bound must reach (issue 54).

Test helper, independent of the package (numpy and scipy only). Thresholds at the ``1 - q``
quantiles of the pooled scores (numpy's default interpolation), q geometric from ``top_from``
down to ``top_to`` (20 of them by default: from the median into the top 0.25%); at each, exact
two-sided Clopper-Pearson intervals (``scipy.stats.beta``) of the false-positive rate (out-scores
above) and the false-negative rate (in-scores at or below), each at level ``1 - a`` with
``a = (1 - confidence) / (2 T)`` (Bonferroni over the two rates and the T thresholds); eps from
the (eps, delta) inequalities TPR <= e^eps FPR + delta and TNR <= e^eps FNR + delta at the upper
rate bounds (and, for scores that rank members low, the same after swapping the sides, at the
lower rate bounds). The largest over thresholds, at least 0.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def _log_ratio(num: float, den: float) -> float:
    if num <= 0:
        return 0.0
    return math.inf if den <= 0 else math.log(num / den)


def scan_lower(
    in_scores,
    out_scores,
    delta: float,
    confidence: float = 0.95,
    n_thresholds: int = 20,
    top_from: float = 0.5,
    top_to: float = 0.0025,
) -> float:
    """Lower bound of eps from the best of ``n_thresholds`` pooled-quantile thresholds."""
    x_in = np.asarray(in_scores, dtype=np.float64)
    x_out = np.asarray(out_scores, dtype=np.float64)
    n_in, n_out = x_in.size, x_out.size
    cuts = np.quantile(
        np.concatenate([x_in, x_out]), 1.0 - np.geomspace(top_from, top_to, n_thresholds)
    )
    a = (1.0 - confidence) / (2 * n_thresholds)
    best = 0.0
    for c in cuts:
        fp, fn = int(np.sum(x_out > c)), int(np.sum(x_in <= c))
        fpr_lo = stats.beta.ppf(a / 2, fp, n_out - fp + 1) if fp > 0 else 0.0
        fpr_hi = stats.beta.ppf(1 - a / 2, fp + 1, n_out - fp) if fp < n_out else 1.0
        fnr_lo = stats.beta.ppf(a / 2, fn, n_in - fn + 1) if fn > 0 else 0.0
        fnr_hi = stats.beta.ppf(1 - a / 2, fn + 1, n_in - fn) if fn < n_in else 1.0
        best = max(
            best,
            _log_ratio(1 - fnr_hi - delta, fpr_hi),  # TPR <= e^eps FPR + delta
            _log_ratio(1 - fpr_hi - delta, fnr_hi),  # TNR <= e^eps FNR + delta
            _log_ratio(fnr_lo - delta, 1 - fpr_lo),  # the same, sides swapped
            _log_ratio(fpr_lo - delta, 1 - fnr_lo),
        )
    return best
