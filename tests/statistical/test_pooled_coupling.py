"""The pooled bound when a target's decision follows the other targets' memberships (reduced
version of ``benchmarks/pooled_coupling.py``; ``docs/validation/pooled_bound.md``, "Decisions that
follow
the other targets").

Mechanisms with exactly known eps whose scores follow the other targets' memberships
(``benchmarks/_support/pooled_coupling.py``). What the docs state and these tests check:

* the claim (the per-target bound or a pooled one, the larger) never lies above the mechanism's
  eps, in the coupled cases of the study where the pooled point comes closest to it;
* the pooled bound's guarantee relies on its assumption: where the scores follow the model's
  training-set size, the test of R's lower constraints rejects the eps of the targets' own
  score channels far more often than its nominal 5% (the expected per-model pair leaves
  R(channel eps)), while the prototype with fixed denominators keeps it. When either stops
  holding, the docs' account is out of date.

Sizing (scipy; ``docs/validation/test_power.md``): the claim above the mechanism's eps is
allowed once per test: the study found it in 0 of 15,800 audits (exact 99% upper limit 2.9e-4
a audit), at which 2 or more of 40 (60) has probability 6.6e-5 (1.5e-4); a claim above it in
10% of audits (the named defect) fails with probability 0.92 (0.986). Zero allowed would have
failed at that limit with probability 0.012 (40 audits).
"""

import math

import numpy as np
import pytest

from benchmarks._support.pooled_coupling import audit, total_eps

#: 1,024 models x 64 targets: scores that follow the training-set size (benchmark row 17:
#: rejections at the channel's eps 155 of 200 over all targets) and 8 canaries that shift each
#: other's scores (row 47: 185 of 200 over the most exposed targets).
SIZE = {"coupling": "size", "g": -2.0, "mu": 1.0, "models": 1024, "targets": 64, "alpha": 0.1}
CANARIES = {**SIZE, "coupling": "canaries", "g": -0.5}


def _noisy(targets, eps_s, g):
    # the adversary's case: the size released at eps_s a record, the own channel at eps 1
    return {
        "coupling": "noisy_size",
        "g": g,
        "eps_s": eps_s,
        "mu": 1.0 - g / (math.sqrt(targets) / 2),
        "models": 1024,
        "targets": targets,
        "alpha": 0.1,
    }


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("cfg, pool", [(SIZE, "all"), (CANARIES, "selected")])
def test_decisions_that_follow_other_targets_break_the_assumption_not_the_claim(cfg, pool):
    res = [audit(cfg, rng) for rng in np.random.default_rng(3141).spawn(40)]
    total = total_eps(cfg)
    assert sum(r["lower"] > total for r in res) <= 1, [r["lower"] for r in res]
    # the ratio form's test rejects the channel's eps far beyond its nominal 5% (measured 0.78
    # and 0.93 of the audits, exact 99% lower limits 0.70 and 0.87): 40 audits give fewer than
    # 15 with probability 5.6e-6 at 0.70
    ratio = sum(r[f"{pool}_rej"] for r in res)
    assert ratio >= 15, ratio
    # fixed denominators keep the guarantee (0 of 15,800 in the benchmark): at most 9 of 40, a
    # false failure 0.0051 at the nominal 10% (two pools, two tests at 0.025 each); a rate of
    # 30% (the named defect; the ratio form's is 0.78) fails with probability 0.80
    fixed = sum(r["fixed_all_rej"] or r.get("fixed_selected_rej", False) for r in res)
    assert fixed <= 9, fixed


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("targets, eps_s, g", [(16, 0.5, -0.5), (8, 1.0, -1.0)])
def test_the_adversary_that_reads_the_size_does_not_reach_the_mechanism_eps(targets, eps_s, g):
    # the benchmark's rows with the largest median excess of the mean rates' eps over the
    # channel's (0.29 and 0.25 of the way to the mechanism's eps; rows 65 and 60): the claim
    # stays below the mechanism's eps in every audit
    cfg = _noisy(targets, eps_s, g)
    res = [audit(cfg, rng) for rng in np.random.default_rng(2718 + targets).spawn(60)]
    total = total_eps(cfg)
    # reach: the coupling is strong enough to matter, the bound passes the channel's eps in
    # some audits
    assert max(r["lower"] for r in res) > 1.0, [r["lower"] for r in res]
    assert sum(r["lower"] > total for r in res) <= 1, [r["lower"] for r in res]
