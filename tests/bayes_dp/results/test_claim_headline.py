"""The claim in two sentences (AuditClaim.headline) for every kind of evidence (issue 55)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayes_dp as bdp
import mia
from bayes_dp.results.claim import HEADLINE_MAX
from bayes_dp.results.claim_parts import NAMES

from benchmarks._support.lira_sim import padded_matrix


def _designed_bases():
    counts = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
    return bdp.estimate_epsilon(counts, delta=1e-5, draws=1000, seed=1, check=False)


def _score_matrix_game():  # the command line's default evidence of a score matrix
    rng = np.random.default_rng(7)
    keep = rng.random((40, 300)) < 0.5
    scores = rng.laplace(0.0, 1.0, keep.shape) + 2.0 * keep
    game = mia.guessing_game(scores, keep, candidates=150, seed=0)
    ev = game.to_evidence(name="lira", delta=1e-5)
    return bdp.estimate_epsilon(ev, delta=1e-5, draws=1000, seed=0, check=False)


def _canaries():  # per-target counts, 15 exposed targets declared in advance among 60
    scores, keep = padded_matrix(15, 45, seed=1, n_models=32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mia.counts_from_score_matrix(scores, keep, 0.1)
    ev = res.to_evidence(focus=np.arange(15))
    return bdp.estimate_epsilon(ev, delta=1e-5, draws=1000, seed=0, check=False)


def _gaussian_dp():
    rng = np.random.default_rng(4)
    ev = bdp.gdp_evidence(rng.normal(1.2, 1, 300), rng.normal(0, 1, 300), name="canary")
    return bdp.estimate_gdp(ev, delta=1e-5, s=1.0, seed=0, draws=500)


def _one_run():
    runs = bdp.OneRunCounts(m=1000, r=300, v=220)
    return bdp.estimate_one_run(runs, delta=1e-5, draws=1000, seed=0)


KINDS = {
    "designed bases": _designed_bases,
    "score matrix (guessing game)": _score_matrix_game,
    "canaries": _canaries,
    "Gaussian DP": _gaussian_dp,
    "one-run": _one_run,
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_claim_is_two_short_sentences_and_named_parts(kind):
    post = KINDS[kind]()
    claim = bdp.audit_claim(post)
    h = claim.headline
    # two sentences a reader can paste: the bound (its confidence, delta, what set it), then
    # the posterior and its upper end
    assert len(h) <= HEADLINE_MAX, (kind, len(h), h)
    assert h.endswith(".") and h.count(". ") == 1, h
    first, second = h.split(". ")
    assert f"eps >= {claim.lower:.3g} at delta = 1e-05" in first
    assert "95% confidence" in first or "95% posterior probability" in first
    assert claim.set_by and claim.set_by in first
    assert "interval is [" in second and "upper end" in second
    assert h.startswith("NOT RELIABLE (") == (not claim.reliable)
    # the explanation: named parts, the bound among them; the sentence is their texts joined
    names = [n for n, _ in claim.details]
    assert "bound" in names and set(names) <= set(NAMES)
    assert claim.sentence == " ".join(t for _, t in claim.details)
    d = claim.to_dict()
    assert d["headline"] == h and d["details"] == [list(p) for p in claim.details]


def test_a_claim_that_is_not_reliable_says_so_first_in_a_few_words():
    # too few draws for the checks: the headline opens with the verdict, the reason in a phrase
    counts = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
    post = bdp.estimate_epsilon(counts, delta=1e-5, draws=30, tune=30, seed=1, check=False)
    claim = bdp.audit_claim(post)
    assert not claim.reliable
    assert claim.headline.startswith("NOT RELIABLE (the chains did not converge): With 95%")
    assert len(claim.headline) <= HEADLINE_MAX
    assert [n for n, _ in claim.details][0] == "convergence"
