"""bayes_dp.io: one function decides each input's kind; mia's readers through one entry."""

import json

import numpy as np
import pytest

import mia
from bayes_dp.io import (
    LAYOUTS,
    detect_input,
    evidence_from_mia,
    read_counts,
    read_in_out_scores,
    read_one_run,
)


@pytest.fixture
def inputs(tmp_path):
    """One file of every kind, named by the kind."""
    f = {}
    f["counts"] = tmp_path / "counts.csv"
    f["counts"].write_text("fp,n_neg,fn,n_pos\n40,1000,250,1000\n")
    f["counts_json"] = tmp_path / "counts.json"
    f["counts_json"].write_text(json.dumps([{"fp": 4, "n_neg": 100, "fn": 25, "n_pos": 100}]))
    f["attack_results"] = tmp_path / "attack_results_0.json"
    f["attack_results"].write_text(json.dumps({"FN": 25, "FP": 4, "TN": 96, "TP": 75}))
    f["gdp_scores"] = tmp_path / "scores.csv"
    f["gdp_scores"].write_text("score,member\n1.5,1\n0.2,0\n")
    f["gdp_npz"] = tmp_path / "inout.npz"
    np.savez(f["gdp_npz"], in_scores=[1.0, 2.0], out_scores=[0.0, 0.5])
    f["one_run"] = tmp_path / "one_run.csv"
    f["one_run"].write_text("m,r,v\n100,50,45\n")
    f["score_matrix"] = tmp_path / "long.csv"
    f["score_matrix"].write_text("model,target,score,member\n0,0,1.5,1\n")
    f["matrix_npz"] = tmp_path / "matrix.npz"
    np.savez(f["matrix_npz"], scores=np.zeros((4, 2)), keep=np.ones((4, 2), bool))
    f["result_folder"] = tmp_path / "folder"
    f["result_folder"].mkdir()
    return f


def test_detect_input_names_every_kind(inputs):
    expected = {
        "counts": "counts",
        "counts_json": "counts",
        "attack_results": "attack_results",
        "gdp_scores": "gdp_scores",
        "gdp_npz": "gdp_scores",
        "one_run": "one_run",
        "score_matrix": "score_matrix",
        "matrix_npz": "score_matrix",
        "result_folder": "result_folder",
    }
    found = {k: detect_input(p) for k, p in inputs.items()}
    assert found == expected
    assert set(found.values()) == set(LAYOUTS)
    # --format json declares a counts file; a missing path is named as such
    assert detect_input(inputs["attack_results"], "json") == "counts"
    with pytest.raises(FileNotFoundError, match="no such file or folder: .*nope.csv"):
        detect_input(inputs["counts"].with_name("nope.csv"))
    bad = inputs["matrix_npz"].with_name("damaged.npz")
    bad.write_bytes(inputs["matrix_npz"].read_bytes()[:60])
    with pytest.raises(ValueError, match="damaged.npz is not a readable .npz archive"):
        detect_input(bad)
    with pytest.raises(ValueError, match="`fmt` must be"):
        detect_input(inputs["counts"], "xml")


def test_readers_of_each_kind(inputs):
    (g,) = read_counts(inputs["counts"])
    assert g.counts.fp.tolist() == [40]
    x_in, x_out = read_in_out_scores(inputs["gdp_scores"])
    assert x_in.tolist() == [1.5] and x_out.tolist() == [0.2]
    assert read_one_run(inputs["one_run"]).m.tolist() == [100]


def test_the_mia_entry_gives_what_the_python_readers_give(tmp_path, inputs):
    rng = np.random.default_rng(0)
    root = tmp_path / "exp"
    for m in range(8):
        keep = (np.arange(12) + m) % 2 == 0
        (root / f"experiment-{m}_8" / "scores").mkdir(parents=True)
        np.save(root / f"experiment-{m}_8" / "keep.npy", keep)
        s = rng.normal(0, 1, (12, 2)) + 2.0 * keep[:, None]
        np.save(root / f"experiment-{m}_8" / "scores" / f"{100:010d}.npy", s)
    lines = []
    (ev,) = evidence_from_mia(
        root, "result_folder", score_method="online-fixed", log=lines.append, evidence="targets"
    )
    ref = mia.read_lira_runs(root).counts(0.1, fixed_variance=True).counts
    assert ev.counts.fp.tolist() == ref.fp.tolist() and ev.counts.fn.tolist() == ref.fn.tolist()
    assert any("higher = member" in line for line in lines)
    # the default: the guessing game of the same scores, as mia plays it (split seed 0)
    (ev,) = evidence_from_mia(root, "result_folder", score_method="online-fixed", delta=1e-5)
    game = mia.read_lira_runs(root).game(fixed_variance=True, seed=0)
    assert ev.likelihood == "guesses" and ev.source == game.record(1e-5)
    assert (ev.counts.m.tolist(), ev.counts.r.tolist()) == ([game.m], [game.k_predicted])
    with pytest.raises(ValueError, match="`evidence` must be one of"):
        evidence_from_mia(root, "result_folder", evidence="cross-fed")
    (ev,) = evidence_from_mia(inputs["attack_results"], "attack_results")
    assert ev.name == "attack" and ev.counts.fp.tolist() == [4]
    scores, keep = mia.simulate_score_matrix(8, 5, mu=2.0, seed=0)
    np.savez(tmp_path / "m.npz", scores=scores, keep=keep)
    (ev,) = evidence_from_mia(
        tmp_path / "m.npz", "score_matrix", score_method="online-fixed", evidence="targets"
    )
    ref = mia.counts_from_score_matrix(scores, keep, 0.1, fixed_variance=True, skip=True).counts
    assert ev.name == "lira" and ev.counts.fn.tolist() == ref.fn.tolist()
    with pytest.raises(ValueError, match="`kind` must be"):
        evidence_from_mia(inputs["counts"], "counts")
