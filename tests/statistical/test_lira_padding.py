"""Score matrices with the exposure mixture (an option): padding and false accusations (issue 32).

Padding: 15 exposed targets (mu ~ U(2, 4), 64 models, online test at alpha 0.1) and the same
targets with 300 / 1,000 added that show nothing (mu = 0): the 5% quantile of eps stays within
10% of the exposed-only value (the issue's criterion; the Monte Carlo error of a 5% quantile from
>= 400 effective draws is about 2-3% of it, ``docs/validation/lira.md``, "The exposure mixture"),
every run
converges at defaults, no minor-mode flag, and P(eps < 0.01) among the draws is 0.

False accusations: audits of the Gaussian and the Laplace mechanism (exactly known eps) with and
without a per-model shift; the 90% interval lies entirely above the truth in at most 5% of them.
With n audits and k above, the test fails when the exact one-sided 95% lower confidence bound of
the rate is above 5% (k > 0 is allowed while the data cannot tell the rate from 5%). Not met
yet (the Laplace mechanism): marked xfail(strict=True), so it fails once it is met. The
mixture is not the score-matrix default (``docs/validation/lira.md``, "The exposure mixture"), so
these
runs (up to 600 s each) are in ``-m slow`` only, not in CI's statistical stage, except the
reduced padding check of the decisions read as made (about 5 min).
"""

import warnings

import numpy as np
import pytest
from scipy import stats

from mia.coverage import score_matrix_audit

from benchmarks._support.lira_sim import padded_run as run

pytestmark = pytest.mark.slow


def _padding(pads, reflect=True):
    """Reach, asserted for each padded run (``tests/_support/power.py``, from the two runs'
    own quantile ESS and densities): the ratio of the two 5% quantiles has relative Monte Carlo
    error ``se``; the +-10% band fails falsely (true ratio 1) with probability <= 1% and catches
    padding that pulls the lower end down by 20% (the named defect) with probability >= 0.8."""
    from tests._support.power import quantile_rel_se, ratio_check_reach

    base = run(15, 0, 1, "exposure_mixture", reflect=reflect)
    assert base["converged"], base["stop"]
    se_base = quantile_rel_se(base["post"].draws("eps"), 0.05)
    for n_pad in pads:
        r = run(15, n_pad, 1, "exposure_mixture", reflect=reflect)
        se = np.hypot(se_base, quantile_rel_se(r["post"].draws("eps"), 0.05))
        reach = ratio_check_reach(se)
        print(f"padding {n_pad}: 5% quantiles {base['q'][0]:.3f} -> {r['q'][0]:.3f}; ratio's "
              f"relative MC error {se:.3f}, {reach}")  # fmt: skip
        assert reach["false_failure"] <= 0.01 and reach["power"] >= 0.8, (se, reach)
        assert r["converged"] and r["stop"] == "converged", (n_pad, r["stop"])
        assert r["post"].settings.get("minor_mode") is None
        assert r["p_small"] == 0.0
        ratio = r["q"][0] / base["q"][0]
        assert 0.9 <= ratio <= 1.1, (n_pad, r["q"], base["q"])


def test_padding_moves_the_lower_end_by_at_most_ten_percent():
    _padding([300, 1000])


def test_padding_reduced():
    _padding([300])


@pytest.mark.statistical
def test_padding_read_as_made_reduced():
    # the decisions as made (Evidence(reflect=False)), the candidate score-matrix model
    # (docs/validation/lira.md, "Decisions as made in the model" and "The exposure mixture at
    # scale"):
    # 15 exposed + 300, seed 1, at defaults: measured 3.096 alone, 3.162 with 300 (+2.1%),
    # converged in 160 and 150 s (and 3.148 with 1,000, 3.163 with 10,000)
    _padding([300], reflect=False)


CONFIGS = [(m, sd) for m in ("gaussian", "laplace") for sd in (0.0, 0.25)]
#: The exposure mixture treats the cross-fed counts as binomial; they are over-dispersed (FN about
#: twice the binomial variance), and the Laplace mechanism's test sits on the boundary of its
#: region, so 5 of 5 audits put the interval above eps = 1 (docs/validation/lira.md, "The exposure
#: mixture"). Issue 32 item 2 (the dispersion in the likelihood) is what fixes it.
NOT_MET = pytest.mark.xfail(
    strict=True, reason="cross-fed over-dispersion not modelled yet (issue 32 item 2)"
)


def _false_accusations(configs, n_per_config, n_targets):
    k = n = 0
    rng = np.random.default_rng(2032)
    for mech, shift in configs:
        for r in rng.spawn(n_per_config):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = score_matrix_audit(
                    r,
                    mu=1.0,
                    n_targets=n_targets,
                    likelihood="exposure_mixture",
                    mechanism=mech,
                    model_shift=shift,
                )
            k += int(a["above_truth"])
            n += 1
    # one-sided 95% lower bound of the rate (Clopper-Pearson)
    lower = 0.0 if k == 0 else stats.beta.ppf(0.05, k, n - k + 1)
    assert lower <= 0.05, (k, n)
    return k, n


@NOT_MET
def test_no_false_accusations_64_targets():
    _false_accusations(CONFIGS, 25, 64)


@NOT_MET
def test_no_false_accusations_reduced():
    _false_accusations([("laplace", 0.0)], 4, 64)
