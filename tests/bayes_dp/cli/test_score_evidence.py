"""What a score matrix becomes on the command line: the guessing game, or targets' counts."""

import json

import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp.cli import main

# short runs: exit status 3 (not converged) is expected and not what these tests check
FAST = ["--draws", "300", "--tune", "200", "--chains", "2", "--no-report", "--quiet"]
RAN = (0, 3)


@pytest.fixture(scope="module")
def score_file(tmp_path_factory):
    rng = np.random.default_rng(5)
    keep = rng.random((24, 300)) < 0.5
    scores = rng.laplace(0.0, 1.0, keep.shape) + 2.0 * keep
    path = tmp_path_factory.mktemp("scores") / "scores.npz"
    np.savez(path, scores=scores, keep=keep)
    return path


def test_a_score_matrix_is_a_guessing_game_by_default(score_file, tmp_path, capsys):
    rc = main(
        ["estimate", str(score_file), "--delta", "1e-5", "--out", str(tmp_path), "--json", *FAST]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc in RAN
    (group,) = out["groups"]
    assert group["likelihood"] == "guesses" and group["source"]["kind"] == "guessing_game"
    src = group["source"]
    assert group["r"] == [src["k"]] and group["v"] == [src["v"]] and src["design"] == "bits"
    game = out["claim"]["frequentist"]["game"]
    assert out["claim"]["lower"] == out["claim"]["frequentist_lower"]
    assert game["design"] == "bits" and game["k"] in src["k_grid"]
    names = [b["name"] for b in out["companion"]["bounds"]]
    assert names[:3] == [
        "guessing game, grid of k",
        "guessing game, predicted k",
        "guessing game, combined",
    ]
    post = bdp.load_posterior(tmp_path / "posterior.nc")
    assert post.settings["groups"][0]["source"]["v_grid"] == src["v_grid"]


def test_evidence_targets_gives_one_base_per_target(score_file, tmp_path, capsys):
    rc = main(
        [
            "estimate",
            str(score_file),
            "--delta",
            "1e-5",
            "--out",
            str(tmp_path),
            "--json",
            "--evidence",
            "targets",
            *FAST,
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc in RAN
    (group,) = out["groups"]
    assert group["likelihood"] == "binomial" and "source" not in group
    post = bdp.load_posterior(tmp_path / "posterior.nc")
    assert len(post.settings["groups"][0]["counts"]["fp"]) == 300
    assert "game" not in (out["claim"].get("frequentist") or {})


def test_declared_canaries_are_the_games_candidates(score_file, tmp_path, capsys):
    canaries = tmp_path / "canaries.txt"
    canaries.write_text("3, 5, 8, 13, 21, 34")
    rc = main(
        [
            "estimate",
            str(score_file),
            "--delta",
            "1e-5",
            "--out",
            str(tmp_path / "o"),
            "--json",
            "--focus-targets",
            str(canaries),
            *FAST,
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc in RAN
    src = out["groups"][0]["source"]
    assert src["declared"] and src["candidates"] == [3, 5, 8, 13, 21, 34]


def test_evidence_targets_refused_for_a_counts_file(tmp_path, capsys):
    csv = tmp_path / "c.csv"
    csv.write_text("fp,n_neg,fn,n_pos\n40,1000,250,1000\n")
    rc = main(
        [
            "estimate",
            str(csv),
            "--delta",
            "1e-5",
            "--out",
            str(tmp_path / "o"),
            "--evidence",
            "targets",
            *FAST,
        ]
    )
    err = capsys.readouterr().err
    assert rc != 0 and "--evidence targets applies to score files" in err
