"""A real run (issue 32): the default audit and its claim on MLPs trained on digits with canaries.

``--models`` one-hidden-layer MLPs (``mia.MLP``: 128 ReLU units, SGD with momentum 0.9, batch
100, random initialisation), each on an independent random half of scikit-learn's 1,797 digits
(every target in every model's training set independently with probability 1/2), with 3% of
the labels (54) flipped to another class as canaries; the score of a target under a model is
LiRA's logit confidence in its (possibly flipped) label. ``--algorithm dpsgd`` trains with
``mia.DPSGD`` (clip 1, ``--noise-multiplier``) and prints the accountant eps at ``--delta``.

Then the default audit, as ``bayes-dp estimate`` runs a score file: by default (``--evidence
game``) the guessing game (``benchmarks/_support/lira_game.py``); with ``--evidence targets`` the
cross-fed counts of the default before issue 49, as follows. For (a) all targets, (b) the
canaries only, (c) the others only, each its own score matrix, and (d) all targets with the canaries
declared in advance (``--focus-targets``, ``to_evidence(focus=...)``): the online test at alpha =
0.1 (``mia.counts_from_score_matrix``, ``skip=True``), ``to_evidence()`` at defaults,
``bdp.estimate_epsilon`` at defaults (4 chains, run until r_hat <= 1.01 and ESS >= 4,000 or 600 s)
and ``bdp.audit_claim`` at 95%. Prints the posterior's 5/50/95% quantiles of eps, the stop reason,
the minor-mode flag, the restart at a missed mode (``mode_restart``), the claim's ``lower``,
``frequentist_lower``, ``posterior_lower``, ``upper_source``, the targets behind the lower end
(and whether they are canaries) and the sentence; ``docs/validation/lira.md``, "A real run: digits
with
canaries", has the figures.

    python benchmarks/lira_real_claim.py --models 64 --save lira_real
    python benchmarks/lira_real_claim.py --models 64 --algorithm dpsgd --save lira_real
    python benchmarks/lira_real_claim.py --models 64 --subsets declared --save lira_real
    python benchmarks/lira_real_claim.py --models 64 --subsets canaries all --likelihood \
        exposure_mixture --as-made --save lira_real

With ``--save DIR`` the score matrix is stored in ``DIR`` (``.npz``, every 8 models): a rerun
with the same settings trains only the models not yet stored, and then only analyses.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.lira_game import analyse_game  # noqa: E402
from benchmarks._support.lira_real import (  # noqa: E402
    ALGORITHMS,
    SUBSETS,
    accountant_eps,
    algorithm,
    analyse,
    design,
    train_scores,
)

DEFAULTS = {  # epochs, learning rate per algorithm
    "mlp": (100, 0.01),
    "dpsgd": (20, 0.05),
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=64)
    ap.add_argument("--algorithm", choices=ALGORITHMS, default="mlp")
    ap.add_argument("--epochs", type=int, default=None, help="default 100 (mlp), 20 (dpsgd)")
    ap.add_argument("--learning-rate", type=float, default=None, help="0.01 (mlp), 0.05 (dpsgd)")
    ap.add_argument("--noise-multiplier", type=float, default=2.5, help="dpsgd only")
    ap.add_argument("--canary-rate", type=float, default=0.03)
    ap.add_argument("--targets", type=int, default=None, help="first rows of digits only")
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--subsets", nargs="+", choices=SUBSETS, default=list(SUBSETS))
    ap.add_argument("--max-time", type=float, default=None, help="per estimate (default 600 s)")
    ap.add_argument("--cores", type=int, default=None)
    ap.add_argument(
        "--as-made", action="store_true", help="to_evidence(reflect=False): decisions as made"
    )
    ap.add_argument(
        "--likelihood", default=None, help="to_evidence(likelihood=...) (default: its default)"
    )
    ap.add_argument(
        "--evidence",
        choices=("game", "targets"),
        default="game",
        help="what the scores become, as bayes-dp estimate --evidence (default game)",
    )
    ap.add_argument("--save", metavar="DIR", help="store (and resume) the score matrix here")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    a = ap.parse_args(argv)
    epochs, lr = DEFAULTS[a.algorithm]
    epochs = epochs if a.epochs is None else a.epochs
    lr = lr if a.learning_rate is None else a.learning_rate
    algo = algorithm(a.algorithm, epochs, lr, a.noise_multiplier)
    X, y, canary, keep = design(a.models, a.targets, a.canary_rate, a.seed)
    path = None
    if a.save:
        nm = f"_nm{a.noise_multiplier:g}" if a.algorithm == "dpsgd" else ""
        tag = f"{a.algorithm}{nm}_e{epochs}_lr{lr:g}_m{a.models}_n{y.size}_c{a.canary_rate:g}"
        path = Path(a.save) / f"{tag}_seed{a.seed}.npz"
    meta = {"y": y, "canary": canary, "config": np.array(json.dumps(algo.config()))}
    scores, info = train_scores(algo, X, y, keep, a.seed, path=path, meta=meta)
    print(
        f"{a.models} models x {y.size} targets ({canary.sum()} canaries), independent halves; "
        f"{algo!r}; trained {info['trained']} models in {info['seconds']:.0f} s"
        + (f"; scores in {path}" if path else "")
    )
    out = {"args": vars(a), "algorithm": algo.config(), "subsets": []}
    if algo.dp is not None:
        lo, hi = accountant_eps(algo, keep, a.delta, "pld")
        print(
            f"accountant eps at delta = {a.delta:g} (dp_accounting PLD, Poisson-subsampled "
            f"Gaussian, {algo.steps(int(keep.sum(1).max()))} steps at the largest training set): "
            f"{lo:.3f} (largest training set) to {hi:.3f} (smallest)"
        )
        out["accountant_eps"] = [lo, hi]
    for sub in a.subsets:
        if a.evidence == "game":
            r = analyse_game(
                scores,
                keep,
                canary,
                subset=sub,
                alpha=a.alpha,
                delta=a.delta,
                seed=a.seed,
                max_time=a.max_time,
                cores=a.cores,
            )
            out["subsets"].append(r)
            q = r["eps_q"]
            print(
                f"\n== {sub}: guessing game on {r['n_targets']} targets ({r['design']}, "
                f"{r['m']} coins, {r['n_candidates']} candidates of which "
                f"{r['n_canary_candidates']} canaries) =="
            )
            print(
                f"{r['v']} of {r['k']} right at the predicted k; posterior eps 5/50/95%: "
                f"[{q[0]:.3g}, {q[1]:.3g}, {q[2]:.3g}]; converged {r['converged']} (stop: "
                f"{r['stop_reason']}), minor mode {r['minor_mode']}, restart "
                f"{r['mode_restart'] is not None}, {r['draws']} draws/chain in "
                f"{r['seconds']:.0f} s"
            )
            print(
                f"claim: lower {r['lower']:.3f} (game {r['game_bound']}, pooled "
                f"{r['pooled_bound']}; posterior {r['posterior_lower']:.3f}), upper "
                f"{r['upper']:.3f} from {r['upper_source']!r}"
            )
            print(textwrap.fill(r["sentence"], width=100))
            continue
        r = analyse(
            scores,
            keep,
            canary,
            subset=sub,
            alpha=a.alpha,
            delta=a.delta,
            seed=a.seed,
            max_time=a.max_time,
            cores=a.cores,
            likelihood=a.likelihood,
            reflect=not a.as_made,
        )
        out["subsets"].append(r)
        q = r["eps_q"]
        print(
            f"\n== {sub}: {r['n_counted']} of {r['n_targets']} targets counted "
            f"({r['likelihood']}) =="
        )
        print(
            f"FP {r['fp']}/{r['n_neg']}, FN {r['fn']}/{r['n_pos']}; design effects FP "
            f"{r['design_effects'][0]:.2f}, FN {r['design_effects'][1]:.2f}; information ratio "
            f"{r['info_ratio']:.2f}"
        )
        print(
            f"posterior eps 5/50/95%: [{q[0]:.3g}, {q[1]:.3g}, {q[2]:.3g}]; converged "
            f"{r['converged']} (stop: {r['stop_reason']}), minor mode {r['minor_mode']}, "
            f"{r['draws']} draws/chain in {r['seconds']:.0f} s"
        )
        rs = r["mode_restart"]
        if rs is not None:
            fq = rs["first_eps_quantiles"]
            print(
                f"sampled again from a missed mode at eps = {rs['eps']:.2g} "
                f"({rs['log_post'] - rs['log_post_draws']:.0f} log units above the best draw "
                f"of chains {rs['chains']}); the first run ({rs['first_draws']} draws/chain, "
                f"stop: {rs['first_stop_reason']}) had eps 5/50/95% [{fq[0]:.3g}, {fq[1]:.3g}, "
                f"{fq[2]:.3g}]"
            )
        fl = r["frequentist_lower"]
        print(
            f"claim: lower {r['lower']:.3f} (frequentist {fl:.3f}, posterior "
            f"{r['posterior_lower']:.3f}), upper {r['upper']:.3f} from {r['upper_source']!r} "
            f"(attack's ceiling {r['ceiling']})"
        )
        print(
            f"targets with a bound of their own above 0: {r['n_positive']} "
            f"({r['n_positive_canaries']} canaries); the largest: "
            + ", ".join(
                f"{t['target']} ({t['lower']:.3f}{', canary' if t['canary'] else ''})"
                for t in r["top_targets"]
            )
        )
        print(textwrap.fill(r["sentence"], width=100))
    if algo.dp is not None:
        for r in out["subsets"]:
            ok = r["lower"] <= out["accountant_eps"][0]
            print(
                f"{r['subset']}: claim's lower end {r['lower']:.3f} <= accountant eps "
                f"{out['accountant_eps'][0]:.3f}: {ok}"
            )
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
