"""mia.guessing: the guessing game on a score matrix (design, split, candidates, k, bounds)."""

import re

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.core.one_run_bound import one_run_bounds, one_run_gdp_bounds
from mia.guessing import guessing_game, infer_design
from mia.selection import fit_reference


def _matrix(seed, n_models=32, n_targets=200, shift=3.0, design="bits"):
    rng = np.random.default_rng(seed)
    if design == "bits":
        keep = rng.random((n_models, n_targets)) < 0.5
    else:
        keep = np.argsort(rng.random((n_models, n_targets)), axis=0) < n_models // 2
    return rng.laplace(0.0, 1.0, keep.shape) + shift * keep, keep


def test_design_rule():
    rng = np.random.default_rng(0)
    assert infer_design(rng.random((64, 400)) < 0.5)[0] == "bits"
    assert infer_design(np.argsort(rng.random((16, 400)), axis=0) < 8)[0] == "pairs"
    half = rng.random((8, 400)) < 0.5
    comp = np.empty((16, 400), dtype=bool)
    comp[0::2], comp[1::2] = half, ~half
    assert infer_design(comp) == ("pairs", "the models come in complementary pairs")
    assert infer_design(rng.random((64, 400)) < 0.3)[0] == "pairs"  # not fair coins
    # bits tied across targets (every model IN for all or none): over-dispersed per model
    assert infer_design(np.repeat(rng.random((64, 1)) < 0.5, 400, axis=1))[0] == "pairs"


def test_bits_game_guesses_the_test_halfs_bits_with_the_reference_fit():
    scores, keep = _matrix(1)
    game = guessing_game(scores, keep, design="bits", candidates=50, seed=3)
    ref, test = game.reference_models, game.test_models
    assert np.intersect1d(ref, test).size == 0 and ref.size + test.size == 32
    assert game.c == 1 and game.m == test.size * 50
    # by hand: the reference fit, the LLR of each test score, the top-k by |LLR|
    m0, sd0, m1, sd1, ok = fit_reference(scores[ref], keep[ref], "online", False, "auto")
    cols = game.candidates
    x = scores[np.ix_(test, cols)]
    llr = (
        -0.5 * ((x - m1[cols]) / sd1[cols]) ** 2
        - np.log(sd1[cols])
        + 0.5 * ((x - m0[cols]) / sd0[cols]) ** 2
        + np.log(sd0[cols])
    ).ravel()
    right = (llr > 0) == keep[np.ix_(test, cols)].ravel()
    order = np.argsort(-np.abs(llr), kind="stable")
    for k in (1, 10, game.m // 3, game.m):
        assert game.right_guesses(k) == right[order[:k]].sum()
    # the candidates are the most exposed on the reference half: changing a test bit moves none
    flipped = keep.copy()
    flipped[test[0], cols[0]] ^= True
    again = guessing_game(scores, flipped, design="bits", candidates=50, seed=3)
    np.testing.assert_array_equal(again.candidates, cols)


def test_pairs_game_matches_in_and_out_test_models_per_candidate():
    scores, keep = _matrix(2, n_models=16, design="balanced")
    game = guessing_game(scores, keep, candidates=40, seed=0)
    assert game.design == "pairs" and game.c == 2
    bits = keep[np.ix_(game.test_models, game.candidates)]
    assert game.m == int(np.minimum(bits.sum(axis=0), (~bits).sum(axis=0)).sum())
    # a strong shift (Laplace, 3 units; fitted on 4 + 4 reference models): most pairs read right
    assert game.right_guesses(game.m) > 0.75 * game.m


def test_a_readers_design_hint_passes_as_it_is():
    scores, keep = _matrix(9, n_models=16)
    assert guessing_game(scores, keep, design=None, candidates=20).design == "bits"
    assert guessing_game(scores, keep, design="balanced", candidates=20).design == "pairs"
    assert guessing_game(scores, keep, design="independent", candidates=20).design == "bits"


def test_declared_canaries_are_the_candidates():
    scores, keep = _matrix(3)
    game = guessing_game(scores, keep, canaries=[5, 1, 7], seed=0)
    assert game.candidates.tolist() == [1, 5, 7] and game.declared
    mask = np.zeros(200, dtype=bool)
    mask[[1, 5, 7]] = True
    assert guessing_game(scores, keep, canaries=mask, seed=0).candidates.tolist() == [1, 5, 7]


def test_predicted_k_uses_no_test_bit():
    scores, keep = _matrix(4)
    game = guessing_game(scores, keep, candidates=100, seed=5)
    other = keep.copy()
    test = game.test_models
    other[test] = ~other[test]  # every test bit flipped: the guesses' outcomes all change
    flipped = guessing_game(scores, other, candidates=100, seed=5)
    assert flipped.k_predicted == game.k_predicted
    assert flipped.right_guesses(game.m) == game.m - game.right_guesses(game.m)


def test_bounds_are_the_one_run_bounds_of_the_counts():
    scores, keep = _matrix(5, n_models=16, design="balanced", shift=2.0)
    game = guessing_game(scores, keep, candidates=100, seed=1)
    b = game.bounds(delta=1e-5, confidence=0.95)
    grid = np.asarray(game.k_grid)
    v = np.asarray([game.right_guesses(int(k)) for k in grid])
    m = np.full(grid.size, game.m)
    level = 0.05 / grid.size
    assert b["grid"]["eps"] == pytest.approx(
        (0.5 * one_run_bounds(m, grid, v, 2e-5, 1 - level)).max()
    )
    assert b["grid"]["mu"] == pytest.approx(
        (one_run_gdp_bounds(m, grid, v, 1 - level) / np.sqrt(2)).max()
    )
    assert b["predicted"]["eps_k"] == game.k_predicted
    assert b["grid"]["eps"] <= b["grid"]["eps_pure"]


def test_counts_and_record():
    scores, keep = _matrix(6)
    game = guessing_game(scores, keep, design="bits", candidates=60, seed=2)
    c = game.counts()
    assert isinstance(c, bdp.OneRunCounts)
    assert (c.m[0], c.r[0], c.v[0]) == (game.m, game.k_predicted, game.right_guesses(c.r[0]))
    assert game.counts(k=7).r.tolist() == [7]
    rec = game.record(delta=1e-5)
    import json

    json.dumps(rec)
    assert rec["design"] == "bits" and rec["c"] == 1 and rec["k"] == game.k_predicted
    assert rec["v_grid"] == [game.right_guesses(k) for k in game.k_grid]


def test_pairs_counts_need_the_pairs_field():
    scores, keep = _matrix(7, n_models=16, design="balanced")
    game = guessing_game(scores, keep, candidates=30, seed=0)
    if "pairs" in bdp.OneRunCounts.__dataclass_fields__:
        assert bool(np.all(game.counts().pairs))
    else:
        with pytest.raises(TypeError, match="no `pairs` field"):
            game.counts()


@pytest.mark.parametrize(
    ("kw", "err", "words"),
    [
        ({"design": "halves"}, ValueError, "`design` must be one of"),
        ({"method": "both"}, ValueError, "`method` must be one of"),
        ({"candidates": 0}, ValueError, "candidates"),
        ({"k_fractions": [0.0, 0.5]}, ValueError, "`k_fractions` must be in (0, 1]"),
        ({"canaries": [500]}, ValueError, "`canaries` must be columns in [0, 200)"),
        ({"canaries": ["a"]}, TypeError, "`canaries` must be column indices"),
    ],
)
def test_bad_input(kw, err, words):
    scores, keep = _matrix(8)
    with pytest.raises(err, match=re.escape(words)):
        guessing_game(scores, keep, **kw)
    game = guessing_game(scores, keep, candidates=10)
    with pytest.raises(ValueError, match="`k` must be in"):
        game.right_guesses(game.m + 1)
