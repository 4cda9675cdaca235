"""The dependence diagnostic on a real score matrix: MLPs on random halves of digits.

``--models`` one-hidden-layer MLPs (scikit-learn, 64 ReLU units, adam, ``--iters`` epochs),
each trained on a random half (independent per model and target) of scikit-learn's 1,797 digits
with 3% of the labels flipped as canaries; the score of a target under a model is LiRA's
logit confidence in the (possibly flipped) label. Prints ``res.dependence`` of the online test
at alpha = 0.1 and the companion bounds at delta = 1e-5.

    python benchmarks/dependence_digits.py --models 64
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

import mia


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=64)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    x, y = mia.load_digits(dtype=np.float64)
    n = y.size
    canary = rng.random(n) < 0.03
    y = np.where(canary, (y + rng.integers(1, 10, n)) % 10, y)
    keep = rng.random((a.models, n)) < 0.5
    scores = np.empty((a.models, n))
    t0 = time.perf_counter()
    for m in range(a.models):
        clf = MLPClassifier(hidden_layer_sizes=(64,), max_iter=a.iters, random_state=m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(x[keep[m]], y[keep[m]])
        logp = np.log(np.clip(clf.predict_proba(x), 1e-300, None))
        lab = np.searchsorted(clf.classes_, y)
        ok = (lab < clf.classes_.size) & (clf.classes_[np.minimum(lab, clf.classes_.size - 1)] == y)
        scores[m] = np.where(ok, mia.lira_logit(-logp[np.arange(n), np.minimum(lab, 9)]), -50.0)
    print(f"trained {a.models} models in {time.perf_counter() - t0:.0f} s; {canary.sum()} canaries")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    print(f"{len(res.counts)} targets counted, {res.n_skipped} skipped")
    print(res.dependence)
    for b in mia.companion_bounds(res, delta=1e-5, scores=scores, keep=keep)["bounds"]:
        print(f"{b['name']}: {b['eps']} ({b['assumes']})")


if __name__ == "__main__":
    main()
