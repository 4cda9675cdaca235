"""The claim of a posterior on a guessing game (bayes_dp.results.claim_game)."""

import json

import numpy as np
import pytest
from scipy import special, stats

import bayes_dp as bdp
import mia
from bayes_dp.results.claim_game import GAME_SHARE, game_bound, game_groups


def _cp_logit(v, k, level):
    """Logit of the one-sided Clopper-Pearson lower bound of v of k at ``level`` (scipy)."""
    return float(special.logit(stats.beta.ppf(level, v, k - v + 1))) if v else 0.0


def _record(**kw):
    rec = {
        "kind": "guessing_game",
        "design": "bits",
        "c": 1,
        "m": 5000,
        "k_grid": [50, 500, 5000],
        "v_grid": [48, 420, 3100],
        "k_predicted": 500,
        "v": 420,
        "pooled_rates": None,
    }
    rec.update(kw)
    return rec


def _settings(*recs, delta=0.0):
    return {"delta": delta, "groups": [{"name": f"g{i}", "source": r} for i, r in enumerate(recs)]}


def test_game_bound_is_the_larger_of_grid_and_predicted_at_half_the_error_each():
    # delta = 0: Steinke et al.'s bound is the logit of the one-sided Clopper-Pearson bound
    b = game_bound(_settings(_record()), 0.95)
    half = 0.05 / 2
    grid = max(
        _cp_logit(v, k, half / 3) for k, v in zip([50, 500, 5000], [48, 420, 3100], strict=True)
    )
    pred = _cp_logit(420, 500, half)
    assert b["lower"] == pytest.approx(max(grid, pred), rel=1e-6)
    assert b["game"]["k_choice"] == ("predicted" if pred > grid else "grid")
    assert b["pooled"] is None and b["game_share"] == 1.0


def test_pairs_halve_the_bound_on_the_pair_coin():
    b = game_bound(_settings(_record(design="pairs", c=2)), 0.95)
    bits = game_bound(_settings(_record()), 0.95)
    assert b["lower"] == pytest.approx(bits["lower"] / 2, rel=1e-6)


def test_several_games_share_the_error():
    one = game_bound(_settings(_record()), 0.95)
    two = game_bound(_settings(_record(), _record(v_grid=[20, 260, 2600], v=260)), 0.95)
    # the second game is weak: the first sets the bound, at half of the error
    assert two["game"]["group"] == "g0"
    assert two["lower"] < one["lower"]
    half = 0.05 / 2 / 2
    grid = max(
        _cp_logit(v, k, half / 3) for k, v in zip([50, 500, 5000], [48, 420, 3100], strict=True)
    )
    assert two["lower"] == pytest.approx(max(grid, _cp_logit(420, 500, half)), rel=1e-6)


def test_no_game_no_bound():
    assert game_bound({"delta": 1e-5, "groups": [{"name": "a", "counts": {}}]}, 0.95) is None
    assert game_bound({"groups": [{"name": "a", "source": _record()}]}, 0.95) is None
    assert game_groups({"groups": [{"source": {"kind": "other"}}, "x"]}) == []


@pytest.fixture(scope="module")
def laplace_game():
    rng = np.random.default_rng(7)
    keep = rng.random((40, 600)) < 0.5
    scores = rng.laplace(0.0, 1.0, keep.shape) + 2.0 * keep
    return mia.guessing_game(scores, keep, candidates=300, seed=0)


def test_the_game_and_the_pooled_rates_each_get_their_share(laplace_game):
    rec = laplace_game.record(delta=1e-5)
    assert rec["pooled_rates"] is not None and len(rec["pooled_rates"]["fpr"]) >= 15
    b = game_bound(_settings(rec, delta=1e-5), 0.95)
    assert laplace_game.design == "bits"
    assert b["game_share"] == GAME_SHARE["bits"] and b["pooled"] is not None
    # the game's part: its own combined bound at the game's share of the error
    own = laplace_game.bounds(delta=1e-5, confidence=1 - 0.05 * GAME_SHARE["bits"])
    assert b["game"]["eps"] == pytest.approx(own["combined"]["eps"]["eps"], rel=1e-9)
    assert b["lower"] == max(b["game"]["eps"], b["pooled"]["eps"])
    # bits: the pooled part is the most exposed targets' alone, at the rest of the error
    assert [c["targets"] for c in b["pooled"]["candidates"]] == ["selected"]
    assert b["pooled"]["share"] == pytest.approx(1 - GAME_SHARE["bits"])


def test_audit_claim_on_a_game_states_its_bound_first(laplace_game):
    ev = laplace_game.to_evidence(name="lira", delta=1e-5)
    post = bdp.estimate_epsilon(ev, delta=1e-5, draws=2000, seed=0, check=False)
    claim = bdp.audit_claim(post)
    b = game_bound(post.settings, 0.95)
    assert claim.lower == claim.frequentist_lower == pytest.approx(b["lower"])
    assert claim.lower_from_counts
    assert claim.sentence.startswith(f"With 95% confidence, eps >= {claim.lower:.3g}")
    assert "guessing game" in claim.sentence and f"{b['game']['v']} of {b['game']['k']}" in (
        claim.sentence
    )
    assert "What the model says (not the finding)" in claim.sentence
    # the record survives the file and the JSON
    assert json.loads(json.dumps(post.settings["groups"][0]["source"]))["k"] == ev.counts.r[0]
    # the truth (eps = 2, Laplace) is above the claim
    assert claim.lower < 2.0


def test_a_game_of_pairs_shares_half_with_both_pooled_bounds():
    rng = np.random.default_rng(8)
    keep = np.argsort(rng.random((40, 600)), axis=0) < 20  # balanced halves
    scores = rng.laplace(0.0, 1.0, keep.shape) + 2.0 * keep
    game = mia.guessing_game(scores, keep, candidates=300, seed=0)
    assert game.design == "pairs"
    b = game_bound(_settings(game.record(delta=1e-5), delta=1e-5), 0.95)
    assert b["game_share"] == GAME_SHARE["pairs"]
    assert sorted(c["targets"] for c in b["pooled"]["candidates"]) == ["all", "selected"]
    own = game.bounds(delta=1e-5, confidence=1 - 0.05 * GAME_SHARE["pairs"])
    assert b["game"]["eps"] == pytest.approx(own["combined"]["eps"]["eps"], rel=1e-9)
