"""The real run's helper (``benchmarks/_support/lira_real.py``, ``benchmarks/lira_real_claim.py``):
its design and its stored score matrix, which a rerun resumes instead of training again."""

import numpy as np
import pytest

from benchmarks._support.lira_real import accountant_eps, algorithm, design, train_scores


def test_design_flips_the_canaries_and_draws_independent_halves():
    X, y, canary, keep = design(8, 300, 0.03, seed=5)
    X0, y0, _, _ = design(8, 300, 0.0, seed=5)
    assert X.shape == (300, 64) and keep.shape == (8, 300)
    assert canary.sum() == 9  # round(0.03 * 300)
    assert (y[canary] != y0[canary]).all() and (y[~canary] == y0[~canary]).all()
    again = design(8, 300, 0.03, seed=5)
    assert np.array_equal(again[2], canary) and np.array_equal(again[3], keep)
    with pytest.raises(ValueError, match="name"):
        algorithm("sgd", 1, 0.01, 1.0)


def test_stored_scores_resume_and_match_a_fresh_run(tmp_path):
    X, y, canary, keep = design(4, 120, 0.05, seed=2)
    algo = algorithm("mlp", 2, 0.01, 0.0)
    meta = {"y": y, "canary": canary}
    path = tmp_path / "s.npz"
    full, info = train_scores(algo, X, y, keep, 7, path=path, meta=meta)
    assert info["trained"] == 4 and np.isfinite(full).all()
    # an interrupted run: the last two models not stored yet
    with np.load(path) as f:
        stored = {k: f[k].copy() for k in f.files}
    stored["done"][2:] = False
    stored["scores"][2:] = np.nan
    np.savez(path, **stored)
    resumed, info = train_scores(algo, X, y, keep, 7, path=path, meta=meta)
    assert info["trained"] == 2
    assert np.array_equal(resumed, full)  # model m draws from its own generator
    _, info = train_scores(algo, X, y, keep, 7, path=path, meta=meta)
    assert info["trained"] == 0
    # other settings (here the labels) do not resume from the file
    _, info = train_scores(algo, X, y, keep, 7, path=path, meta={"y": (y + 1) % 10})
    assert info["trained"] == 4


def test_accountant_eps_is_the_models_extremes():
    pytest.importorskip("dp_accounting")
    algo = algorithm("dpsgd", 2, 0.05, 2.0)
    keep = np.zeros((3, 500), dtype=bool)
    for m, k in enumerate((200, 250, 300)):
        keep[m, :k] = True
    lo, hi = accountant_eps(algo, keep, 1e-5)
    assert lo == algo.epsilon(1e-5, 301, accountant="pld")
    assert hi == algo.epsilon(1e-5, 201, accountant="pld")
    assert lo < hi
