"""Heterogeneous exposure (reduced version of docs/validation/lira.md, "Heterogeneous exposure at
scale";
the full runs: ``benchmarks/lira_claim_heterogeneous.py``).

Targets whose Gaussian shifts mu_t are log-normal, so that their exposure spreads over orders
of magnitude; target t alone is a Gaussian mechanism of sensitivity mu_t, and the strongest
target's own eps(delta) is the most any statement about these targets may claim. The default
evidence (binomial on raw counts), shorter chains than the default, the claim at 95%. What must
hold: neither the claim nor the posterior's 5% quantile lies above the strongest target's eps,
and the upper end, which the uniform-in-band model pulls down to a narrow interval, is never
called the data's: the sentence says whose it is.

Reach, asserted first: the claim's ceiling (the most its per-target part can state with this
many decisions a target, ``score_matrix_audit``'s ``claim_ceiling``, or its pooled part's
ceiling, whichever is larger: 0.86 at 64 models and 2.38 at 256 with 1,000 targets) lies above
the strongest target's eps, so the claim can pass it. The exposures are chosen for that
(median 0.004, log-sd 1.0 at 64 models; 0.012 and 1.0 at 256): the strongest of 1,000 targets
has mu <= 0.17 (eps 0.6) and <= 0.51 (2.0) for a largest normal draw up to 3.75 (seeds 0-5:
2.8-3.75). The earlier cases (median 0.1, log-sd 1.5; 0.03, 1.0) put the strongest target's
eps at 91 and 2.65, above those ceilings, where the check could not fail. One run a case: the
check is exact (no rate), its defect a claim above the strongest target, which only a claim
that states more than any target shows can be.
"""

import warnings

import numpy as np
import pytest

import bayes_dp as bdp
import mia
from bayes_dp.core.region import clopper_pearson_target_bounds
from mia.canary import gaussian_mechanism_epsilon

DELTA = 1e-5


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize(
    "models, median, sigma",
    [(64, 0.004, 1.0), (256, 0.012, 1.0)],
    ids=["64 models", "256 models"],
)
def test_claim_and_upper_end_under_heterogeneous_exposure(models, median, sigma):
    rng = np.random.default_rng(0)
    mu = np.exp(rng.normal(np.log(median), sigma, 1000))
    scores, keep = mia.simulate_score_matrix(models, 1000, mu, seed=rng)
    res = mia.counts_from_score_matrix(scores, keep, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains; the dependence diagnostic
        post = bdp.estimate_epsilon(
            res.to_evidence(), delta=DELTA, chains=2, draws=1000, tune=500, seed=1, progress=False
        )
    claim = bdp.audit_claim(post, 0.95)
    strongest = float(gaussian_mechanism_epsilon(1.0, DELTA, sensitivity=float(mu.max())))
    c = res.counts
    ceiling = max(
        float(
            clopper_pearson_target_bounds(
                0, int(c.n_neg.max()), 0, int(c.n_pos.max()), DELTA, 0.95, n_rates=2 * len(c)
            )[0]
        ),
        float(claim.frequentist.get("pooled_ceiling") or 0.0),
    )
    assert ceiling > strongest, (ceiling, strongest)  # reach: the claim can pass the truth
    assert claim.lower == claim.frequentist_lower <= strongest
    assert claim.posterior_lower <= strongest
    # the interval is narrow (the band model fitted to 1,000 targets that mostly show little)
    # and far below the strongest target's eps: its upper end is not called the data's
    assert claim.upper < strongest
    assert claim.upper_source in ("attack_level", "model"), claim.upper_source
    assert "set by the data" not in claim.sentence
    said = {
        "attack_level": "lies beyond what the attack could show at its level",
        "model": "is the model's, not a finding",
    }[claim.upper_source]
    assert f"The upper end, the model's 95% quantile of eps, {claim.upper:.3g}, {said}" in (
        claim.sentence
    )
    assert claim.interval == (claim.lower, None)  # the line prints no upper end
    print(
        f"{models} models: strongest target's eps {strongest:.3g} (ceiling {ceiling:.3g}), claim "
        f"{claim.lower:.3g}, "
        f"posterior [{claim.posterior_lower:.3g}, {claim.upper:.3g}], {claim.upper_source}"
    )
