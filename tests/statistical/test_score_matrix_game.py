"""The default evidence of a score matrix, the guessing game: its claim and its posterior.

Reduced versions of docs/validation/guessing_game.md, "The claim on a score matrix" (the full
runs: ``benchmarks/guessing_game.py``). Laplace score matrices (OUT scores Laplace(0, 1), IN
scores Laplace(eps, 1): each target exactly eps-DP), both inclusion designs (independent fair
coins: the game of bits; balanced halves: the game of pairs).
"""

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
import mia
from bayes_dp.core.one_run_bound import one_run_bounds
from bayes_dp.results.claim_game import game_bound

DELTA = 1e-5
#: a claim valid at 95% lies above the truth in at most 5% of audits; more than this many of
#: 200 has probability 0.0121 (scipy below), of 100 (at most 10) 0.0115
ALLOWED = {200: 17, 100: 10}


def _matrix(rng, design, eps, n_models=32, n_targets=300):
    if design == "independent":
        keep = rng.random((n_models, n_targets)) < 0.5
    else:
        keep = np.argsort(rng.random((n_models, n_targets)), axis=0) < n_models // 2
    return rng.laplace(0.0, 1.0, keep.shape) + eps * keep, keep


def _claim(rec):
    return game_bound({"delta": DELTA, "groups": [{"name": "g", "source": rec}]}, 0.95)


def test_the_allowances_are_sized():
    for n, k in ALLOWED.items():
        assert stats.binom.sf(k, n, 0.05) < 0.0125


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("design", ["independent", "balanced"])
def test_claim_at_eps_0_and_a_k_chosen_by_looking(design):
    """At eps = 0 a claim above 0 is a false accusation: at most 17 of 200 (a valid 95% claim
    exceeds that with probability 0.011). Reach, measured on the same audits: the named defect,
    the game's bound at the best k of its grid each at the full level (k chosen by looking at
    the test bits), must be caught (more than 17 of 200; measured 43 / 25 of 200 for bits /
    pairs, which at those rates exceed 17 with probability > 0.99 / 0.94). 200 audits per
    design, about 1 min each on one core."""
    rng = np.random.default_rng([11, design == "balanced"])
    valid = defect = 0
    for i in range(200):
        scores, keep = _matrix(rng, design, 0.0)
        rec = mia.guessing_game(scores, keep, candidates=100, seed=i).record(DELTA)
        assert rec["design"] == {"independent": "bits", "balanced": "pairs"}[design]
        valid += _claim(rec)["lower"] > 0
        ks, vs = np.asarray(rec["k_grid"]), np.asarray(rec["v_grid"])
        m = np.full(ks.size, rec["m"])
        defect += one_run_bounds(m, ks, vs, DELTA, 0.95, pairs=rec["design"] == "pairs").max() > 0
    assert defect > ALLOWED[200], (design, defect)
    assert valid <= ALLOWED[200], (design, valid)


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("design", ["independent", "balanced"])
def test_claim_never_above_a_known_eps(design):
    """Laplace eps = 1 (each target exactly 1-DP): at most 10 of 100 claims above 1 (a valid
    95% claim exceeds that with probability 0.011). Reach: the claim's ceiling (every guess of
    the grid right) lies above the truth, asserted; and the named defect, the game's bound of a
    pairs design not halved (bits read for pairs), is caught on the same audits of balanced
    halves (more than 10 of 100). 100 audits per design."""
    rng = np.random.default_rng([12, design == "balanced"])
    above = defect = 0
    for i in range(100):
        scores, keep = _matrix(rng, design, 1.0)
        game = mia.guessing_game(scores, keep, candidates=100, seed=i)
        rec = game.record(DELTA)
        if i == 0:
            ceiling = _claim({**rec, "v_grid": rec["k_grid"], "v": rec["k_predicted"]})
            assert ceiling["lower"] > 1.0, ceiling
        b = _claim(rec)
        above += b["lower"] > 1.0
        if rec["design"] == "pairs":
            defect += _claim({**rec, "design": "bits"})["game"]["eps"] > 1.0
    assert above <= ALLOWED[100], (design, above)
    if design == "balanced":
        assert defect > ALLOWED[100], defect


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("design", ["independent", "balanced"])
def test_default_posterior_does_not_collapse_or_accuse_at_eps_0(design):
    """The default path (``to_evidence``, ``estimate_epsilon`` at its automatic length) on eps = 0
    matrices: the posterior's 5% quantile below 0.1 in at least 19 of 20 audits (the counts-level
    check with its power: tests/statistical/test_guesses_null.py), every run converged, and the
    claim 0 in at least 18 of 20. A posterior whose 5% quantile sat near the claim's level of a
    strong game (1 and above at eps = 0) fails at once. About 1-2 min per design."""
    rng = np.random.default_rng([13, design == "balanced"])
    q5, claims = [], []
    for i in range(20):
        scores, keep = _matrix(rng, design, 0.0, n_models=64, n_targets=2000)
        ev = mia.guessing_game(scores, keep, seed=i).to_evidence(name="lira", delta=DELTA)
        post = bdp.estimate_epsilon(ev, delta=DELTA, seed=i)
        assert post.converged, post.settings.get("stop_reason")
        q5.append(post.quantile(0.05, "eps"))
        claims.append(bdp.audit_claim(post).lower)
    assert np.sum(np.asarray(q5) < 0.1) >= 19, q5
    assert np.sum(np.asarray(claims) == 0.0) >= 18, claims


@pytest.mark.slow
@pytest.mark.statistical
def test_padding_moves_the_default_posterior_little():
    """1,000 targets at eps = 2 (64 independent models) and the same matrix with 1,000 and
    10,000 more targets that show nothing: the posterior's 5% quantile moves by less than 10%,
    and the claim stays above half of the unpadded one. The defect within reach: a game whose
    candidates were all the targets (no selection on the reference half) guesses mostly
    noise when 10,000 are padded, and its 5% quantile falls by far more (asserted on the same
    matrix). About 1 min."""
    rng = np.random.default_rng(14)
    scores, keep = _matrix(rng, "independent", 2.0, n_models=64, n_targets=1000)
    pad_s, pad_k = _matrix(rng, "independent", 0.0, n_models=64, n_targets=10_000)

    def run(n_pad, **kw):
        s, k = np.c_[scores, pad_s[:, :n_pad]], np.c_[keep, pad_k[:, :n_pad]]
        ev = mia.guessing_game(s, k, seed=0, **kw).to_evidence(name="lira", delta=DELTA)
        post = bdp.estimate_epsilon(ev, delta=DELTA, seed=0)
        assert post.converged
        return post.quantile(0.05, "eps"), bdp.audit_claim(post).lower

    q0, c0 = run(0)
    assert q0 > 1.0  # the unpadded matrix shows eps well above 0
    for n_pad in (1000, 10_000):
        q, c = run(n_pad)
        assert abs(q / q0 - 1.0) < 0.1, (n_pad, q, q0)
        assert c > 0.5 * c0, (n_pad, c, c0)
    q_all, _ = run(10_000, candidates=11_000)
    assert q_all < 0.8 * q0, (q_all, q0)
