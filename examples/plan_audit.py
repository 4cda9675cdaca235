"""Plan an audit before training any model: how many shadow models, how many canaries?

Two plans with :func:`bayes_dp.plan_audit` (``docs/validation/planning.md``):

1. **Shadow models for the paper's strong-attack setting** (Yildirim et al., Sec. 4.1): ten
   challenge bases, the attack as strong as the paper's table suggests (its posterior: eps
   about 3, s about 0.7), delta = 1e-5. How wide will the 90% interval be, and how likely is the
   audit to refute a claimed eps = 2.5, with 100 to 3,000 shadow models per hypothesis and base?
2. **A canary audit**: one base whose challenges are canaries (inserted vs held out), a
   near-optimal test (s = 0.9) of a mechanism at eps = 4; 100 to 10,000 canaries per
   hypothesis, claim eps = 3.5. The ceiling column says how much a perfect test could show.

Run: ``python examples/plan_audit.py`` (about a minute on 2 cores; ``--reps`` sets the
simulated audits per design, default 50); prints both tables and writes
``examples/figures/plan_shadow.png`` and ``examples/figures/plan_canary.png`` (``--out DIR``
elsewhere).
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import bayes_dp as bdp  # noqa: E402

DELTA = 1e-5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=50, help="simulated audits per design")
    ap.add_argument("--out", default=str(Path(__file__).parent / "figures"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plans = {
        "shadow": bdp.plan_audit(
            {"eps": 3.0, "s": 0.7},
            [{"bases": 10, "n": n} for n in (100, 300, 1000, 3000)],
            delta=DELTA,
            claim=2.5,
            reps=args.reps,
            seed=0,
        ),
        "canary": bdp.plan_audit(
            {"eps": 4.0, "s": 0.9},
            [{"bases": 1, "n": n} for n in (100, 300, 1000, 3000, 10_000)],
            delta=DELTA,
            claim=3.5,
            reps=args.reps,
            seed=1,
        ),
    }
    for name, plan in plans.items():
        print(f"\n== {name}\n{plan}\n({plan.seconds:.1f} s)")
        ax = plan.plot(x="n")
        ax.set_xlabel("shadow models per hypothesis and base" if name == "shadow" else "canaries")
        ax.figure.savefig(out / f"plan_{name}.png", dpi=110)
        plt.close(ax.figure)


if __name__ == "__main__":
    main()
