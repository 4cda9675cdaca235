"""The audit's claim in words (bayes_dp.results.claim.audit_claim), against posteriors of known
shape."""

import json

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
from bayes_dp.results.claim import PRIOR_SHIFT_MAX

HALFNORMAL_10 = {"eps_prior": ["HalfNormal", 10.0], "delta": 1e-5}


def _post(eps, settings=HALFNORMAL_10, **extra):
    draws = {"eps": np.asarray(eps, dtype=float).reshape(4, -1), **extra}
    return bdp.Posterior(draws, {}, dict(settings))


def test_upper_end_set_by_the_data():
    # a likelihood that pins eps near 3 (sd 0.2): the HalfNormal(10) prior is flat there, so
    # halving or doubling its scale moves the 95% quantile by a fraction of a percent
    rng = np.random.default_rng(0)
    post = _post(rng.normal(3.0, 0.2, 40_000))
    c = bdp.audit_claim(post)
    assert c.upper_source == "data" and c.upper_shift < 0.02 and c.reliable
    assert c.lower == pytest.approx(3.0 - 1.645 * 0.2, abs=0.01)
    assert c.upper == pytest.approx(3.0 + 1.645 * 0.2, abs=0.01)
    assert c.sentence.startswith(f"With 95% posterior probability, eps >= {c.lower:.3g}")
    assert "at delta = 1e-05" in c.sentence and "is set by the data" in c.sentence


def test_upper_end_set_by_the_prior():
    # a flat likelihood above eps = 2 (the ridge of s * eps = const taken to its limit): the
    # posterior is the prior cut at 2, so its 95% quantile scales with the prior's scale.
    # Truth: the q-quantile of HalfNormal(f * 10) given eps > 2.
    rng = np.random.default_rng(1)
    x = stats.halfnorm(scale=10).rvs(size=200_000, random_state=rng)
    x = x[x > 2][:40_000]
    c = bdp.audit_claim(_post(x))
    assert c.upper_source == "prior" and c.upper_shift > PRIOR_SHIFT_MAX
    for f in (0.5, 2.0):
        hn = stats.halfnorm(scale=10 * f)
        truth = hn.ppf(hn.cdf(2) + 0.95 * hn.sf(2))
        # reweighting to the doubled scale rests on few draws in the far tail: 10%
        assert c.upper_moved_to[f] == pytest.approx(truth, rel=0.1 if f > 1 else 0.03)
    assert "is set by the prior of eps, not by the data" in c.sentence
    assert "cite the lower bound" in c.sentence


def test_a_lower_end_the_prior_sets_is_not_claimed():
    # the posterior is the HalfNormal(10) prior itself (a likelihood flat in eps): reweighted to
    # the scale f * 10, its 5% quantile becomes f times the quantile (exactly 0.5 and 2 at the
    # two factors), a relative move of 1 >> PRIOR_SHIFT_MAX; with no frequentist bound beside
    # it (no binomial or score-matrix group), the claim must fall to eps >= 0
    rng = np.random.default_rng(5)
    x = stats.halfnorm(scale=10).rvs(size=40_000, random_state=rng)
    c = bdp.audit_claim(_post(x))
    q05 = np.quantile(x, 0.05)
    assert c.lower_shift == pytest.approx(1.0, abs=0.15)
    assert c.lower == 0.0 and c.posterior_lower == pytest.approx(q05, rel=1e-6)
    assert c.sentence.startswith("With 95% probability, eps >= 0 at delta = 1e-05: the data")
    model = "What the model says (not the finding): the posterior's 5% quantile of eps is "
    assert f"{model}{q05:.3g}" in c.sentence
    assert "posterior probability, eps >=" not in c.sentence  # no bound in a form it does not sign
    assert f"The posterior's lower end, {q05:.3g}, is set by the prior of eps" in c.sentence
    assert "it is not a finding" in c.sentence
    # the line above the sentence: the interval's lower end is the claim's 0, the model's own
    # lower end a figure that is not a finding
    assert not c.cites_model_lower and c.model_lower == c.posterior_lower
    assert c.interval_words().startswith("eps >= 0 (what the audit shows at 95%, the claim below)")
    assert c.interval_words().endswith(f"its own 5% quantile, {q05:.3g}, is not a finding")
    assert c.to_dict()["interval"] == [0.0, None]  # an upper end the prior sets is not printed
    # a lower end the data set (sd 0.2 about 3) keeps the posterior's quantile as the claim
    pinned = bdp.audit_claim(_post(rng.normal(3.0, 0.2, 40_000)))
    assert pinned.lower_shift < PRIOR_SHIFT_MAX and pinned.lower > 2.5
    assert pinned.posterior_lower is None and "not a finding" not in pinned.sentence
    assert pinned.cites_model_lower and pinned.model_lower == pinned.lower
    assert "not a finding" not in pinned.interval_words()


def test_not_reliable_and_fixed_strength_are_said_first():
    rng = np.random.default_rng(2)
    stuck = np.concatenate([rng.normal(3, 0.2, 20_000), rng.normal(5, 0.2, 20_000)])
    c = bdp.audit_claim(_post(stuck, {**HALFNORMAL_10, "fixed": {"s": 0.9}}))
    assert not c.reliable and c.sentence.startswith("NOT RELIABLE")
    assert "assuming the attack strength s = 0.9 (fixed, not inferred)" in c.sentence


def test_without_a_recorded_prior_the_upper_end_is_not_judged():
    rng = np.random.default_rng(3)
    c = bdp.audit_claim(_post(rng.normal(3.0, 0.2, 4000), settings={}))
    assert c.upper_source == "unknown" and c.upper_shift is None and c.upper_moved_to == {}
    assert "was not checked" in c.sentence and "older version" in c.sentence
    json.dumps(c.to_dict(), allow_nan=False)  # JSON-ready


def test_prob_sets_the_quantiles():
    rng = np.random.default_rng(4)
    post = _post(rng.normal(3.0, 0.2, 40_000))
    c = bdp.audit_claim(post, prob=0.9)
    assert (c.lower, c.upper) == pytest.approx(post.interval(0.8))
    assert "With 90% posterior probability" in c.sentence
    assert "model's 90% quantile of eps" in c.sentence


@pytest.mark.parametrize(
    "args, err, words",
    [
        ((None,), TypeError, "`posterior` must be a bayes_dp.Posterior; found NoneType"),
        (("post", 0.5), ValueError, "`prob` must be > 0.5; found 0.5"),
        (("post", 95), ValueError, "`prob` must be < 1.0; found 95"),
    ],
)
def test_bad_input(args, err, words):
    post = _post(np.random.default_rng(5).normal(3.0, 0.2, 400))
    args = tuple(post if a == "post" else a for a in args)
    with pytest.raises(err, match=words.replace("(", r"\(").replace(")", r"\)")):
        bdp.audit_claim(*args)


def test_a_gaussian_dp_lower_end_the_prior_sets_is_not_claimed():
    # a Gaussian-DP posterior of count groups only (no score group, so no shape-free bound)
    # whose draws of mu are its HalfNormal(5) prior: the 5% quantile of eps = eps(mu) moves
    # with the prior's scale, so the claim falls to eps >= 0 and keeps the quantile in
    # gaussian_lower
    from bayes_dp.results.posterior import GdpPosterior

    rng = np.random.default_rng(6)
    mu = stats.halfnorm(scale=5).rvs(size=40_000, random_state=rng).reshape(4, -1)
    eps = bdp.gdp_epsilon(mu, 1e-5)
    settings = {
        "model": "gdp",
        "delta": 1e-5,
        "mu_prior": ["HalfNormal", 5.0],
        "groups": [{"name": "counts", "kind": "counts", "likelihood": "binomial"}],
    }
    c = bdp.audit_claim(GdpPosterior({"mu": mu, "eps": eps}, {}, settings))
    q05 = np.quantile(eps, 0.05)
    assert c.lower_shift > PRIOR_SHIFT_MAX and c.lower == 0.0
    assert c.gaussian_lower == pytest.approx(q05, rel=1e-6) and c.posterior_lower is None
    assert c.sentence.startswith("With 95% probability, eps >= 0 at delta = 1e-05")
    assert "This assumes the mechanism is Gaussian" in c.sentence  # the GDP note is kept


def test_a_minor_mode_drops_a_claim_that_rests_on_the_posterior_alone():
    # draws pinned near 3 (a lower end the data set), but the run found a mode of higher log
    # posterior density at eps = 1e-6 that no chain visited: the posterior's lower end lies
    # below every draw, so a claim with no classical bound beside it is eps >= 0
    rng = np.random.default_rng(7)
    found = {"eps": 1e-6, "log_post": -10.0, "log_post_draws": -20.0}
    settings = {
        **HALFNORMAL_10,
        "converged": False,
        "stop_reason": "minor_mode",
        "minor_mode": found,
    }
    c = bdp.audit_claim(_post(rng.normal(3.0, 0.2, 40_000), settings))
    assert c.lower_shift < PRIOR_SHIFT_MAX  # not the prior's: the minor mode alone decides
    assert c.lower == 0.0 and c.posterior_lower > 2.5 and not c.reliable
    assert "eps >= 0 at delta = 1e-05: the chains missed a mode" in c.sentence
    assert "at eps = 1e-06 (a minor-mode warning)" in c.sentence
    # the same draws without the flag keep their lower end
    assert bdp.audit_claim(_post(rng.normal(3.0, 0.2, 40_000))).lower > 2.5
