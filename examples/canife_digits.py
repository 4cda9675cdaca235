"""CANIFE on DP-FedSGD softmax regression (digits): per-round and composed empirical epsilon.

Run: ``python examples/canife_digits.py`` (about 10 s). Needs scikit-learn and
dp-accounting.
"""

from __future__ import annotations

import argparse
import logging

from mia.canary import canife_audit


def main() -> None:
    """Print per-round estimates and the composed estimate for a few noise multipliers."""
    logging.getLogger("absl").setLevel(logging.ERROR)  # dp-accounting's RDP order notices
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    print(
        "200 clients, q = 0.05, 100 rounds, attack every 25 rounds, n = 100 fake rounds, "
        f"delta_round = 0.01, delta = 1e-5, seed={a.seed}"
    )
    print(
        "noise  eps_r(theory)  per-round eps_r [CP low]          acc_r       composed "
        "[low]   theory  health"
    )
    for z in (0.3, 0.5, 1.0, 2.0):
        r = canife_audit(noise_multiplier=z, seed=a.seed)
        per = " ".join(f"{e.epsilon:.2f}[{e.lower:.2f}]" for e in r.per_round)
        acc = " ".join(f"{e.accuracy:.2f}" for e in r.per_round)
        print(
            f"{z:5.2f}  {r.epsilon_round_theory:13.2f}  {per}  {acc}  {r.epsilon:6.2f} "
            f"[{r.epsilon_lower:.2f}]  {r.epsilon_theory:7.2f}  {min(r.health):.3f}"
        )


if __name__ == "__main__":
    main()
